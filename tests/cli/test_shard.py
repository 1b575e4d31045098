"""ferry shard + ferry.data end to end: shards made by ferry read by Python's tarfile and the
other way round, exactly-once splits over ranks and DataLoader workers, seeded order, exact
resume, corrupt shards, local directories and RGW."""
import json
import os
import random
import tarfile

import pytest

KEYS = [f"d/{i:04d}" for i in range(120)]


def make_tree(root):
    """120 samples: .jpg of varied size and .cls; every 10th also .json; one long, one unicode key."""
    rnd = random.Random(1)
    files = {}
    for i, key in enumerate(KEYS):
        files[f"{key}.jpg"] = rnd.randbytes(rnd.randint(100, 20000))
        files[f"{key}.cls"] = str(i % 10).encode()
        if i % 10 == 0:
            files[f"{key}.json"] = json.dumps({"i": i}).encode()
    files["x/" + "long" * 40 + ".bin"] = b"pax path"
    files["x/caf\u00e9.txt"] = "unicode key".encode()
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return files


def samples_of(files):
    out = {}
    for name, data in files.items():
        base = name.rsplit("/", 1)
        dot = base[-1].index(".")
        key = (base[0] + "/" if len(base) > 1 else "") + base[-1][:dot]
        out.setdefault(key, {})[base[-1][dot + 1:]] = data
    return out


def test_packed_shards_are_plain_tar_for_python(ferry, tmp_path):
    files = make_tree(tmp_path / "src")
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "train", "--samples-per-shard", "25",
                  "--json")
    assert p.returncode == 0, p.stderr.decode()
    summary = json.loads(p.stdout)
    assert summary["samples"] == 122 and summary["shards"] == 5 and summary["files"] == len(files)
    index = json.loads((tmp_path / "out" / "train.index.json").read_text())
    seen = {}
    for shard in index["shards"]:
        with tarfile.open(tmp_path / "out" / shard["name"]) as tar:
            members = tar.getmembers()
            starts = [m.offset for m in members
                      if m.name.rsplit(".", 1)[0] not in {x.name.rsplit(".", 1)[0] for x in members[:members.index(m)]}]
            assert starts == shard["offsets"]
            for m in members:
                seen[m.name] = tar.extractfile(m).read()
    assert seen == files
    # Deterministic: packing again gives byte-identical shards.
    first = (tmp_path / "out" / "train-000000.tar").read_bytes()
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "train", "--samples-per-shard", "25")
    assert p.returncode == 1 and b"exists" in p.stderr and b"--overwrite" in p.stderr
    assert ferry.run("shard", "pack", "--overwrite", tmp_path / "src", tmp_path / "out" / "train",
                     "--samples-per-shard", "25").returncode == 0
    assert (tmp_path / "out" / "train-000000.tar").read_bytes() == first


def test_too_few_shards_for_the_readers_is_said_with_the_remedy(ferry, tmp_path):
    make_tree(tmp_path / "src")  # 122 samples, ~1.2 MB: one shard at the default 1G target
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "t", "--json")
    assert p.returncode == 0, p.stderr.decode()
    line = ("1 shard(s) for 122 samples: readers take whole shards, so DataLoader workers beyond 1 "
            "(per rank) would idle; --samples-per-shard 15 makes 9")
    assert json.loads(p.stdout)["warnings"] == [line]
    assert p.stderr.decode().splitlines()[-1] == "ferry shard pack: warning: " + line
    # The remedy does what it says, and then there is nothing to say.
    p = ferry.run("shard", "pack", "--overwrite", tmp_path / "src", tmp_path / "out" / "t",
                  "--samples-per-shard", "15", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["shards"] == 9
    assert json.loads(p.stdout)["warnings"] == [] and b"warning" not in p.stderr
    # Per split, named.
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "split" / "", "--split",
                  "train=0.9,val=0.1", "--samples-per-shard", "20", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert [w.split(":")[0] for w in json.loads(p.stdout)["warnings"]] == ["train", "val"]


def test_shards_written_by_tarfile_are_indexed_and_read(ferry, python, tmp_path):
    files = make_tree(tmp_path / "src")
    names = sorted(files)
    out = tmp_path / "wds"
    out.mkdir()
    # Three shards split at sample boundaries (d/0040, d/0080), in GNU, pax and pax format.
    cuts = [0, names.index("d/0040.cls"), names.index("d/0080.cls"), len(names)]
    for n, fmt in enumerate([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.PAX_FORMAT]):
        chunk = names[cuts[n]:cuts[n + 1]]
        with tarfile.open(out / f"wds-{n:06d}.tar", "w", format=fmt) as tar:
            for name in chunk:
                info = tarfile.TarInfo(name)
                info.size = len(files[name])
                info.mtime = 1700000000
                tar.addfile(info, fileobj=open(tmp_path / "src" / name, "rb"))
    p = ferry.run("shard", "index", f"{out}/", "-o", out / "wds.index.json")
    assert p.returncode == 0, p.stderr.decode()
    assert ferry.run("shard", "verify", out / "wds").returncode == 0
    p = python(f"""
import json
from ferry.data import ShardDataset
got = {{}}
for s in ShardDataset({str(out / 'wds')!r}, shuffle=False):
    got[s["__key__"]] = {{k: v.hex() for k, v in s.items() if k != "__key__"}}
print(json.dumps(got))
""")
    got = json.loads(p.stdout)
    want = {k: {e: d.hex() for e, d in v.items()} for k, v in samples_of(files).items()}
    assert got == want


SPLIT = """
import json, torch
from ferry.data import ShardDataset
url = {url!r}
def keys(rank, epoch, seed=7, workers=2):
    ds = ShardDataset(url, seed=seed, rank=rank, world_size=2, shuffle_buffer=16)
    ds.set_epoch(epoch)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers)
    return [s["__key__"] for s in dl]
out = {{"r0": keys(0, 0), "r1": keys(0, 0) and keys(1, 0), "r0again": keys(0, 0),
        "r0epoch1": keys(0, 1), "r0seed8": keys(0, 0, seed=8)}}
print(json.dumps(out))
"""


@pytest.mark.parametrize("where", ["local", "s3"])
def test_every_sample_once_per_epoch_across_2_ranks_x_2_workers(ferry, python, prefix, tmp_path, where):
    files = make_tree(tmp_path / "src")
    dst = (prefix + "ds/train") if where == "s3" else str(tmp_path / "out" / "train")
    p = ferry.run("shard", "pack", tmp_path / "src", dst, "--target-size", "64K")
    assert p.returncode == 0, p.stderr.decode()
    got = json.loads(python(SPLIT.format(url=dst)).stdout)
    everything = got["r0"] + got["r1"]
    assert sorted(everything) == sorted(samples_of(files))  # exactly once: no loss, no duplicates
    assert got["r0"] == got["r0again"]                      # same seed, same epoch: same order
    assert got["r0"] != got["r0epoch1"] and got["r0"] != got["r0seed8"]


RESUME = """
import json, torch
from ferry.data import ShardDataset
url, workers, bs, k = {url!r}, {workers}, 4, {k}
def loader(ds):
    return torch.utils.data.DataLoader(ds, batch_size=bs if workers else None, num_workers=workers,
                                       collate_fn=(lambda b: [s["__key__"] for s in b]) if workers else None)
def flat(batches):
    return [x for b in batches for x in (b if workers else [b["__key__"]])]
ds = ShardDataset(url, seed=3, batch_size=bs, shuffle_buffer=20)
ds.set_epoch(2)
full = flat(loader(ds))
# Consume the first k samples, save, "crash", restore into a fresh dataset.
ds = ShardDataset(url, seed=3, batch_size=bs, shuffle_buffer=20)
ds.set_epoch(2)
seen = []
for b in loader(ds):
    seen += flat([b])
    if len(seen) >= k:
        break
state = ds.state_dict(samples_seen=len(seen))
ds2 = ShardDataset(url, seed=3, batch_size=bs, shuffle_buffer=20)
ds2.load_state_dict(json.loads(json.dumps(state)))
rest = flat(loader(ds2))
ds2.set_epoch(3)
next_epoch = flat(loader(ds2))
print(json.dumps({{"full": full, "seen": seen, "rest": rest, "next": next_epoch}}))
"""


@pytest.mark.parametrize("workers,k", [(0, 1), (0, 57), (2, 8), (2, 36)])
def test_resume_mid_epoch_gives_exactly_the_rest(ferry, python, tmp_path, workers, k):
    make_tree(tmp_path / "src")
    dst = str(tmp_path / "out" / "train")
    assert ferry.run("shard", "pack", tmp_path / "src", dst, "--samples-per-shard", "10").returncode == 0
    got = json.loads(python(RESUME.format(url=dst, workers=workers, k=k)).stdout)
    assert got["seen"] + got["rest"] == got["full"]
    assert len(got["seen"]) == k
    assert sorted(got["next"]) == sorted(got["full"]) and got["next"] != got["full"]


BATCHED = """
import json, torch
from ferry.data import ShardDataset
url = {url!r}
def run(ds, stop_after=None):
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    keys = []
    for b in dl:
        keys += [s["__key__"] for s in b]
        if stop_after and len(keys) >= stop_after:
            break
    return keys
ds = ShardDataset(url, seed=5)
full = run(ds.batched(8))
ds = ShardDataset(url, seed=5)
seen = run(ds.batched(8), stop_after=40)
state = ds.state_dict(samples_seen=len(seen))
ds2 = ShardDataset(url, seed=5)
ds2.load_state_dict(state)
rest = run(ds2.batched(8))
print(json.dumps({{"full": full, "seen": seen, "rest": rest}}))
"""


def test_batched_in_workers_covers_everything_and_resumes(ferry, python, tmp_path):
    files = make_tree(tmp_path / "src")
    dst = str(tmp_path / "out" / "train")
    assert ferry.run("shard", "pack", tmp_path / "src", dst, "--samples-per-shard", "10").returncode == 0
    got = json.loads(python(BATCHED.format(url=dst)).stdout)
    assert sorted(got["full"]) == sorted(samples_of(files))
    assert got["seen"] + got["rest"] == got["full"]


def test_corrupt_and_truncated_shards(ferry, python, tmp_path):
    make_tree(tmp_path / "src")
    dst = tmp_path / "out" / "train"
    assert ferry.run("shard", "pack", tmp_path / "src", dst, "--samples-per-shard", "20").returncode == 0
    index = json.loads((tmp_path / "out" / "train.index.json").read_text())

    def damage(shard, offset):
        path = tmp_path / "out" / shard
        data = bytearray(path.read_bytes())
        data[offset:offset + 16] = b"\xff" * 16
        path.write_bytes(bytes(data))

    damage("train-000002.tar", index["shards"][2]["offsets"][5])  # a tar header
    # Sample 5 of shard 3: .cls header + data + padding (1 KiB), .jpg header, then its data.
    damage("train-000003.tar", index["shards"][3]["offsets"][5] + 1536 + 100)
    p = ferry.run("shard", "verify", dst)
    out = p.stdout.decode()
    assert p.returncode == 1 and "train-000002.tar" in out
    assert f"train-000003.tar: sample 5 at offset {index['shards'][3]['offsets'][5]}: CRC32C" in out
    code = f"""
from ferry.data import ShardDataset
seen = []
try:
    for s in ShardDataset({str(dst)!r}, shuffle=False): seen.append(s["__key__"])
except OSError as e:
    print("ERROR", len(seen), e)
n = sum(1 for s in ShardDataset({str(dst)!r}, shuffle=False, skip_corrupt=True))
print("SKIPPED", n)
"""
    p = python(code)
    # The damaged header stops the read at its offset, naming the shard (the samples parsed from
    # the same 1 MiB block are not handed out: here all 40 of shards 0 and 1 were).
    assert f"ERROR 40 shard '{tmp_path}/out/train-000002.tar'" in p.stdout
    assert f"corrupt tar at offset {index['shards'][2]['offsets'][5]}" in p.stdout
    n = int(p.stdout.split("SKIPPED")[1])
    # Shard 2 loses samples 4..19 (sample 4 may continue past the damaged header); shard 3's
    # sample 5 fails its checksum before it is handed out, and shard 3 loses samples 5..19.
    assert n == 122 - 16 - 15 and "skipping" in p.stderr
    assert f"sample 'd/0065' at offset {index['shards'][3]['offsets'][5]}: CRC32C" in p.stderr
    # Truncated: the verify names it too.
    os.truncate(tmp_path / "out" / "train-000004.tar", 3000)
    p = ferry.run("shard", "verify", dst)
    assert p.returncode == 1 and b"train-000004.tar" in p.stdout and b"truncated" in p.stdout


def test_cli_on_s3_multipart_shards_ls_verify_cat(ferry, prefix, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    big = random.Random(2).randbytes(20 << 20)
    (src / "big.bin").write_bytes(big)
    (src / "big.cls").write_bytes(b"1")
    (src / "small.txt").write_bytes(b"hello")
    dst = prefix + "ds/train"
    p = ferry.run("shard", "pack", src, dst, "--target-size", "1M")
    assert p.returncode == 0, p.stderr.decode()
    ls = ferry.run("shard", "ls", "--json", dst, check=True)
    listing = json.loads(ls.stdout)
    assert listing["samples"] == 2 and len(listing["shards"]) == 2
    assert ferry.run("shard", "verify", dst).returncode == 0
    cat = ferry.run("shard", "cat", prefix + "ds/train-000000.tar", "big.bin", check=True)
    assert cat.stdout == big
    entries = ferry.run("shard", "ls", prefix + "ds/train-000001.tar", check=True).stdout.decode()
    assert "small.txt" in entries and "1 samples" in entries


def test_pack_errors_are_one_line_and_name_the_problem(ferry, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "README").write_text("no extension")
    (tmp_path / "src" / "a.jpg").write_text("x")
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "t")
    assert p.returncode != 0 and b"README" in p.stderr and b"no sample key" in p.stderr
    p = ferry.run("shard", "pack", tmp_path / "missing", tmp_path / "out" / "t")
    assert p.returncode == 1 and b"missing" in p.stderr
    assert not (tmp_path / "out" / "t.index.json").exists()
    p = ferry.run("shard", "ls", tmp_path / "out" / "nothing")
    assert p.returncode == 1 and b"nothing.index.json" in p.stderr
