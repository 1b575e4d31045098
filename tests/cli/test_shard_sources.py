"""ShardDataset takes what webdataset takes (shard lists, brace patterns, directories of shards
without a Ferry index, indexed on the fly and cached), the tensor decoders with PyTorch's default
collate, a real training loop stopped by SIGTERM with workers alive and resumed, and `ferry shard
pack`'s --include/--exclude, dotfiles, --split and progress, `ferry shard ls DIR/`."""
import io
import json
import os
import pty
import random
import signal
import subprocess
import sys
import tarfile

import pytest
from conftest import python_env

N = 60


def write_wds_shards(out, per_shard=10, image=False):
    """Shards as webdataset's TarWriter or tar would write them: no Ferry index."""
    out.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(2)
    names = []
    for s in range(0, N, per_shard):
        path = out / f"train-{s // per_shard:06d}.tar"
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
            for i in range(s, s + per_shard):
                files = {"cls": str(i % 7).encode(), "json": json.dumps({"i": i}).encode(),
                         "txt": f"sample {i}".encode()}
                if image:
                    from PIL import Image
                    buf = io.BytesIO()
                    Image.new("RGB", (8, 6), (i, 2 * i % 256, 7)).save(buf, format="PNG")
                    files["png"] = buf.getvalue()
                else:
                    files["bin"] = rnd.randbytes(rnd.randint(10, 3000))
                for ext, data in files.items():
                    info = tarfile.TarInfo(f"s/{i:04d}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        names.append(path)
    return names


KEYS = """
import json, sys
from ferry.data import ShardDataset
from ferry import _native
cache = {cache!r}
out = {{}}
for name, source in {sources!r}.items():
    ds = ShardDataset(source, shuffle=False, index_cache_dir=cache)
    out[name] = [s["__key__"] for s in ds]
    out[name + "_len"] = len(ds)
print(json.dumps(out))
"""


def test_list_brace_directory_and_prefix_forms_read_the_same_samples(python, tmp_path):
    shards = write_wds_shards(tmp_path / "ds")
    cache = str(tmp_path / "cache")
    sources = {
        "list": [str(p) for p in shards],
        "brace": str(tmp_path / "ds" / "train-{000000..000005}.tar"),
        "brace_unpadded_parts": f"{tmp_path}/ds/train-00000{{0..2}}.tar::{tmp_path}/ds/train-00000{{3,4,5}}.tar",
        "dir": str(tmp_path / "ds") + "/",
        "dir_no_slash": str(tmp_path / "ds"),
    }
    got = json.loads(python(KEYS.format(cache=cache, sources=sources)).stdout)
    want = [f"s/{i:04d}" for i in range(N)]
    for name in sources:
        assert got[name] == want, name
        assert got[name + "_len"] == N
    # One scan per distinct shard list, cached (list, brace and dir name the same shards).
    cached = sorted(os.listdir(cache))
    assert len([c for c in cached if c.endswith(".index.json")]) == 1, cached
    index = json.loads(open(os.path.join(cache, [c for c in cached if c.endswith(".index.json")][0])).read())
    assert index["base"].rstrip("/").endswith("ds") and len(index["shards"]) == 6


CACHE = """
import json
from ferry import _native
inputs, cache = {inputs!r}, {cache!r}
print(json.dumps(_native.resolve(inputs, cache_dir=cache)))
"""


def test_index_cache_is_reused_until_a_shard_changes(python, tmp_path):
    shards = write_wds_shards(tmp_path / "ds")
    args = dict(inputs=[str(p) for p in shards], cache=str(tmp_path / "cache"))
    first = json.loads(python(CACHE.format(**args)).stdout)
    again = json.loads(python(CACHE.format(**args)).stdout)
    assert first["scanned"] and not first["cached"]
    assert again["cached"] and not again["scanned"] and again["index_url"] == first["index_url"]
    # Rewrite one shard with other samples: the cached index no longer describes it.
    with tarfile.open(shards[2], "w") as tar:
        info = tarfile.TarInfo("s/9999.cls")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"1"))
    os.utime(shards[2], (1, 1))
    third = json.loads(python(CACHE.format(**args)).stdout)
    assert third["scanned"]
    index = json.loads(open(third["index_url"]).read())
    assert index["samples"] == N - 10 + 1


ERRORS = """
from ferry.data import ShardDataset
for source in {sources!r}:
    try:
        ShardDataset(source, index_cache_dir={cache!r})
        print("accepted", source)
    except (ValueError, FileNotFoundError, TypeError) as e:
        print(type(e).__name__ + ":", e)
"""


def test_bad_sources_are_one_line_errors(python, tmp_path):
    write_wds_shards(tmp_path / "ds")
    (tmp_path / "two").mkdir()
    for n in ("a", "b"):
        (tmp_path / "two" / f"{n}.index.json").write_text('{"format": "ferry-shards", "version": 1, "shards": []}')
    (tmp_path / "empty").mkdir()
    sources = [[str(tmp_path / "ds" / "train-000000.tar"), str(tmp_path / "ds" / "notes.txt")],
               str(tmp_path / "two") + "/", str(tmp_path / "empty") + "/",
               str(tmp_path / "ds" / "train-{000000..000009}.tar"), 42]
    out = python(ERRORS.format(sources=sources, cache=str(tmp_path / "c"))).stdout.splitlines()
    assert out[0].startswith("ValueError:") and "notes.txt" in out[0] and "not a .tar shard" in out[0]
    assert out[1].startswith("ValueError:") and "a.index.json, b.index.json" in out[1]
    assert out[2].startswith("FileNotFoundError:") and "no Ferry index" in out[2]
    assert out[3].startswith("FileNotFoundError:") and "train-000006.tar" in out[3]  # past the last
    assert out[4].startswith("TypeError:")


DECODE = """
import json, torch
from ferry.data import ShardDataset
ds = ShardDataset({src!r}, shuffle=False, decode="torchrgb", index_cache_dir={cache!r})
dl = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=2)
batches = list(dl)
b = batches[0]
ds8 = ShardDataset({src!r}, shuffle=False, decode="torchrgb8", index_cache_dir={cache!r})
first8 = next(iter(ds8))
print(json.dumps({{"png": [list(b["png"].shape), str(b["png"].dtype), float(b["png"].max())],
                  "cls": [str(b["cls"].dtype), b["cls"].tolist()],
                  "txt": b["txt"][:2], "json_i": b["json"]["i"].tolist(),
                  "n": sum(len(x["__key__"]) for x in batches),
                  "png8": [list(first8["png"].shape), str(first8["png"].dtype),
                           first8["png"][:, 0, 0].tolist()]}}))
"""


def test_torchrgb_decoding_works_with_the_default_collate_and_workers(python, tmp_path):
    pytest.importorskip("PIL")
    write_wds_shards(tmp_path / "ds", image=True)
    got = json.loads(python(DECODE.format(src=str(tmp_path / "ds") + "/", cache=str(tmp_path / "c"))).stdout)
    assert got["png"][0] == [8, 3, 6, 8] and got["png"][1] == "torch.float32" and got["png"][2] <= 1.0
    assert got["cls"][0] == "torch.int64" and len(got["cls"][1]) == 8
    assert got["txt"][0].startswith("sample ")
    assert len(got["json_i"]) == 8
    assert got["n"] == N
    assert got["png8"] == [[3, 6, 8], "torch.uint8", [0, 0, 7]]


TRAIN = r"""
import json, os, signal, sys, time, torch
import ferry.data
from ferry.data import ShardDataset
state_path, out_path = sys.argv[1], sys.argv[2]
stop = False
def on_term(signum, frame):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
ds = ShardDataset({src!r}, seed=4, shuffle_buffer=8, index_cache_dir={cache!r}, decode="torchrgb")
seen, start_epoch = 0, 0
if os.path.exists(state_path):
    state = json.load(open(state_path))
    ds.load_state_dict(state)
    seen, start_epoch = state["samples_seen"], state["epoch"]
dl = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True,
                                 collate_fn=ferry.data.collate)
model = torch.nn.Linear(1, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(start_epoch, 2):
    ds.set_epoch(epoch)
    if epoch != start_epoch:
        seen = 0
    for batch in dl:
        x = batch["cls"].float().unsqueeze(1)
        loss = model(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
        seen += len(batch["__key__"])
        with open(out_path, "a") as f:
            f.write(json.dumps([epoch, batch["__key__"]]) + "\n")
        print("step", flush=True)
        time.sleep(0.05)
        if stop:
            json.dump(ds.state_dict(samples_seen=seen, loader=dl), open(state_path, "w"))
            sys.exit(0)
print("done", flush=True)
"""


def test_sigterm_with_workers_alive_then_resume_reads_each_sample_once(rgw, tmp_path):
    write_wds_shards(tmp_path / "ds")
    src = str(tmp_path / "ds" / "train-{000000..000005}.tar")
    script = tmp_path / "train.py"
    script.write_text(TRAIN.format(src=src, cache=str(tmp_path / "c")))
    state, out = tmp_path / "state.json", tmp_path / "seen.jsonl"
    env = python_env(rgw)
    p = subprocess.Popen([sys.executable, str(script), str(state), str(out)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(3):  # a few steps in, workers running ahead
        assert p.stdout.readline().strip() == "step"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert state.exists()
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert 0 < len(first) < N // 4
    p = subprocess.run([sys.executable, str(script), str(state), str(out)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("done")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    epoch0 = [k for e, keys in rows if e == 0 for k in keys]
    epoch1 = [k for e, keys in rows if e == 1 for k in keys]
    want = sorted(f"s/{i:04d}" for i in range(N))
    assert sorted(epoch0) == want  # each sample once across the preemption
    assert sorted(epoch1) == want


def make_files(root):
    files = {f"d/{i:03d}.{ext}": f"{i}{ext}".encode() * 10 for i in range(100) for ext in ("jpg", "cls")}
    files.update({f"d/{i:03d}.txt": b"note" for i in range(0, 100, 10)})
    files.update({".DS_Store": b"x", "d/.DS_Store": b"x", "d/._001.jpg": b"x", ".git/HEAD.x": b"x"})
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def test_pack_include_exclude_dotfiles(ferry, tmp_path):
    make_files(tmp_path / "src")
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "a", "--exclude", "*.txt")
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert "packed 200 files as 100 samples" in out
    assert "skipped 4 dotfile(s) (--dotfiles packs them)" in out
    assert "left out 10 file(s) by --include/--exclude" in out
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "b", "--include", "*.cls",
                  "--include", "d/00*", "--exclude", "*.txt", "--json")
    assert p.returncode == 0, p.stderr.decode()
    j = json.loads(p.stdout)
    assert j["files"] == 100 + 10 and j["samples"] == 100 and j["skipped_dotfiles"] == 4
    # --dotfiles takes them: '.DS_Store' has no sample key, which is an error naming it.
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "c", "--dotfiles")
    assert p.returncode == 1 and b"no sample key" in p.stderr
    # Everything filtered away: says so.
    p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "d", "--include", "*.png")
    assert p.returncode == 1 and b"excluded by --include/--exclude" in p.stderr


def test_pack_split_is_seeded_disjoint_and_complete(ferry, python, tmp_path):
    make_files(tmp_path / "src")
    def split(dst, seed):
        p = ferry.run("shard", "pack", tmp_path / "src", dst, "--split", "train=0.9,val=0.1",
                      "--seed", str(seed), "--exclude", "*.txt", "--json")
        assert p.returncode == 0, p.stderr.decode()
        return json.loads(p.stdout)
    j = split(tmp_path / "a" / "ds", 1)
    assert j["splits"]["train"]["samples"] == 90 and j["splits"]["val"]["samples"] == 10
    assert (tmp_path / "a" / "ds-train.index.json").exists() and (tmp_path / "a" / "ds-val.index.json").exists()
    split(str(tmp_path / "b") + "/", 1)
    assert (tmp_path / "b" / "train.index.json").exists() and (tmp_path / "b" / "val-000000.tar").exists()
    split(tmp_path / "c" / "ds", 2)
    got = json.loads(python(f"""
import json
from ferry.data import ShardDataset
k = lambda u: sorted(s["__key__"] for s in ShardDataset(u, shuffle=False))
print(json.dumps({{"a": [k({str(tmp_path / 'a' / 'ds-train')!r}), k({str(tmp_path / 'a' / 'ds-val')!r})],
                  "b": [k({str(tmp_path / 'b' / 'train')!r}), k({str(tmp_path / 'b' / 'val')!r})],
                  "c_val": k({str(tmp_path / 'c' / 'ds-val')!r})}}))
""").stdout)
    train, val = got["a"]
    assert not set(train) & set(val) and sorted(train + val) == [f"d/{i:03d}" for i in range(100)]
    assert got["b"] == got["a"]          # same seed: same split
    assert got["c_val"] != val           # another seed: another split
    for bad in ("train=0.9,val=0.2", "train=0.9", "train=x,val=0.1", "a b=0.5,c=0.5", "t=0.5,t=0.5"):
        p = ferry.run("shard", "pack", tmp_path / "src", tmp_path / "e" / "ds", "--split", bad)
        assert p.returncode == 2, bad
        err = p.stderr.decode().strip()
        assert len(err.splitlines()) == 1 and "--split" in err, err


def test_pack_progress_on_a_terminal_and_ls_of_a_directory(ferry_bin, ferry, rgw, tmp_path):
    from conftest import base_env
    make_files(tmp_path / "src")
    master, slave = pty.openpty()
    p = subprocess.Popen([ferry_bin, "shard", "pack", str(tmp_path / "src"), str(tmp_path / "out" / "x"),
                          "--exclude", "*.txt"], env=base_env(rgw), stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    p.wait(timeout=60)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert p.returncode == 0
    assert b"\rpacking: " in err or b"\r\x1b[Kpacking: " in err, err
    assert b"100/100 samples (100%)" in err
    assert ferry.run("shard", "pack", tmp_path / "src", tmp_path / "out" / "y", "--include", "*.cls",
                     "-q").returncode == 0
    p = ferry.run("shard", "ls", str(tmp_path / "out") + "/")
    assert p.returncode == 0, p.stderr.decode()
    lines = p.stdout.decode().splitlines()
    assert "  x  (1 shard(s))" in lines[0] and "  y  (1 shard(s))" in lines[1] and lines[2] == "2 dataset(s)"
    p = ferry.run("shard", "ls", str(tmp_path / "out") + "/", "--json")
    assert [json.loads(x)["name"] for x in p.stdout.decode().splitlines()] == ["x", "y"]
    (tmp_path / "empty").mkdir()
    p = ferry.run("shard", "ls", str(tmp_path / "empty") + "/")
    assert p.returncode == 1 and b"no dataset index" in p.stderr


SHM = """
import json, os, torch, numpy as np
import ferry._shm, ferry.data
from ferry.data import ShardDataset
src, cache = {src!r}, {cache!r}
def digest(b):
    out = {{}}
    for k, v in sorted(b.items()):
        if isinstance(v, torch.Tensor):
            out[k] = [str(v.dtype), list(v.shape), v.double().sum().item()]
        elif isinstance(v, dict):
            out[k] = digest(v)
        else:
            out[k] = [type(x).__name__ + ":" + (x.hex() if isinstance(x, bytes) else str(x)) for x in v]
    return out
def run(workers, collate, batched=False):
    ds = ShardDataset(src, shuffle=False, decode="torchrgb", index_cache_dir=cache)
    if batched:
        dl = torch.utils.data.DataLoader(ds.batched(8, collate_fn=torch.utils.data.default_collate),
                                         batch_size=None, num_workers=workers)
    else:
        dl = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=workers, collate_fn=collate)
    batches = list(dl)
    return [digest(b) for b in batches] + [batches[0]["png"].is_shared()]
class Extra(torch.utils.data.IterableDataset):
    # What a collate may hold besides: numpy arrays, bytearrays, empty and 0-d tensors, floats.
    def __iter__(self):
        for i in range(10):
            yield {{"a": np.full((3, 2), i, dtype=np.float32), "ba": b"x" * 600 * i,
                   "e": torch.empty(0), "z": torch.tensor(float(i)), "f": i / 2, "b16": torch.ones(2, dtype=torch.bfloat16)}}
def extra_collate(samples):  # ferry.data.collate's hand-over of a batch holding bytearrays
    batch = torch.utils.data.default_collate(samples)
    batch["ba"] = [bytearray(x) for x in batch["ba"]]
    return ferry._shm.wrap(batch)
def extra(workers):
    dl = torch.utils.data.DataLoader(Extra(), batch_size=5, num_workers=workers, collate_fn=extra_collate)
    out = []
    for b in dl:
        out.append([b["a"].tolist(), [len(x) for x in b["ba"]], list(b["e"].shape), b["z"].tolist(),
                    b["f"].tolist(), str(b["b16"].dtype), type(b["ba"][1]).__name__])
    return out
print(json.dumps({{"torch_w2": run(2, None), "ferry_w2": run(2, ferry.data.collate),
                  "ferry_w0": run(0, ferry.data.collate), "batched_w2": run(2, None, batched=True),
                  "extra_w0": extra(0), "extra_w2": extra(2),
                  "left": [n for n in os.listdir("/dev/shm") if n.startswith(f"ferry-batch-")]}}))
"""


def test_shared_memory_batches_equal_pytorchs_and_leave_nothing_behind(python, tmp_path):
    pytest.importorskip("PIL")
    write_wds_shards(tmp_path / "ds", image=True)
    got = json.loads(python(SHM.format(src=str(tmp_path / "ds") + "/", cache=str(tmp_path / "c"))).stdout)
    # The same values as PyTorch's own hand-over; PyTorch's tensors live in shared memory
    # segments, ferry's are ordinary tensors (the slot is reused).
    assert got["ferry_w2"][:-1] == got["torch_w2"][:-1] == got["batched_w2"][:-1]
    assert len(got["ferry_w2"]) == 2 * 4 + 1  # 2 workers x 30 samples in batches of 8 (+ the flag)
    assert sorted(k for b in got["ferry_w0"][:-1] for k in b["__key__"]) == \
        sorted(k for b in got["ferry_w2"][:-1] for k in b["__key__"])
    assert got["torch_w2"][-1] is True and got["ferry_w2"][-1] is False
    # Each of the 2 workers yields the whole (unsplit) Extra dataset.
    assert sorted(map(json.dumps, got["extra_w2"])) == sorted(map(json.dumps, got["extra_w0"] * 2))
    assert got["extra_w2"][0][1] == [0, 600, 1200, 1800, 2400] and got["extra_w2"][0][6] == "bytearray"
    assert got["left"] == []


def test_s3_brace_pattern_and_prefix_of_webdataset_shards(python, s3, bucket, prefix, tmp_path):
    shards = write_wds_shards(tmp_path / "ds")
    key = prefix.split("/", 3)[3]
    for p in shards:
        s3.upload_file(str(p), bucket, key + "wds/" + p.name)
    cache = str(tmp_path / "cache")
    sources = {"brace": f"{prefix}wds/train-{{000000..000005}}.tar", "dir": f"{prefix}wds/",
               "list": [f"{prefix}wds/{p.name}" for p in shards]}
    got = json.loads(python(KEYS.format(cache=cache, sources=sources)).stdout)
    for name in sources:
        assert got[name] == [f"s/{i:04d}" for i in range(N)], name
    index = [c for c in os.listdir(cache) if c.endswith(".index.json")]
    assert len(index) == 1
    assert json.loads(open(os.path.join(cache, index[0])).read())["base"] == f"{prefix}wds/"
