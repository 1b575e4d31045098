"""ferry.data's loader state (issue 12): state_dict() records what the position depends on,
load_state_dict() resumes exactly (same configuration: the same order; another num_workers or
batch size: the same set, each sample once) or refuses with one line; set_epoch() reaches
persistent workers (fork and spawn); len() is this rank's samples per epoch. Local datasets,
real DataLoader worker processes."""
import importlib.util
import json
import pathlib
import random

import pytest

SAMPLES = 122
ROOT = pathlib.Path(__file__).resolve().parents[2]


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return f"{crc ^ 0xFFFFFFFF:08x}"


@pytest.fixture(scope="module")
def datasets(ferry, tmp_path_factory):
    """The same 122 samples packed twice: 10 per shard (13 shards, the last holds 2) and 7 per
    shard (another index, hence another dataset identity)."""
    root = tmp_path_factory.mktemp("loader")
    (root / "src" / "d").mkdir(parents=True)
    for i in range(SAMPLES):
        (root / "src" / "d" / f"{i:04d}.bin").write_bytes(bytes([i]) * (50 + 13 * i))
        (root / "src" / "d" / f"{i:04d}.cls").write_text(str(i % 10))
    urls = {}
    for name, per_shard in (("train", 10), ("other", 7)):
        ferry.run("shard", "pack", root / "src", root / name / "train", "--samples-per-shard",
                  per_shard, check=True)
        urls[name] = str(root / name / "train")
    return urls


PRELUDE = """
import json, math, warnings, torch
from ferry.data import ShardDataset
URL, OTHER = {url!r}, {other!r}

def keys(batch):
    return [s["__key__"] for s in batch]

def loader(ds, workers, batch_size, persistent=False, context=None):
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, num_workers=workers,
                                       collate_fn=keys, persistent_workers=persistent,
                                       multiprocessing_context=context)

def take(dl, stop=None):
    out = []
    for batch in dl:
        out += batch
        if stop is not None and len(out) >= stop:
            break
    return out

def make(**kw):
    return ShardDataset(kw.pop("url", URL), **dict(dict(seed=3, shuffle_buffer=20), **kw))
"""


def run(python, datasets, body):
    p = python(PRELUDE.format(url=datasets["train"], other=datasets["other"]) + body)
    return json.loads(p.stdout.strip().splitlines()[-1])


EXACT = """
W, P, K = {workers}, {persistent}, {k}
ds = make()
ds.set_epoch(2)
full = take(loader(ds, W, 4))
ds.set_epoch(3)
full_next = take(loader(ds, W, 4))
ds = make()
ds.set_epoch(2)
dl = loader(ds, W, 4, persistent=P)
seen = take(dl, K)
state = ds.state_dict(samples_seen=len(seen), loader=dl)
# num_workers=0: the dataset counts what it handed out itself.
counted = ds.state_dict() if W == 0 else state
ds2 = make()
ds2.load_state_dict(json.loads(json.dumps(state)))
dl2 = loader(ds2, W, 4, persistent=P)
rest = take(dl2)
ds2.set_epoch(3)
after = take(dl2)
print(json.dumps(dict(full=full, full_next=full_next, seen=seen, rest=rest, next=after,
                      state=state, counted=counted)))
"""


@pytest.mark.parametrize("workers,persistent,k", [(0, False, 17), (2, False, 36), (2, True, 36),
                                                  (2, True, 116)])
def test_resume_with_the_same_loader_gives_the_uninterrupted_order(python, datasets, workers,
                                                                  persistent, k):
    got = run(python, datasets, EXACT.format(workers=workers, persistent=persistent, k=k))
    assert len(got["full"]) == SAMPLES and got["seen"] + got["rest"] == got["full"]
    assert got["next"] == got["full_next"] != got["full"]
    state = got["state"]
    index = (datasets["train"] + ".index.json")
    assert {k: state[k] for k in ("version", "epoch", "samples_seen", "seed", "shuffle",
                                  "shuffle_buffer", "rank", "world_size", "num_workers",
                                  "batch_size", "drop_last")} == {
        "version": 2, "epoch": 2, "samples_seen": len(got["seen"]), "seed": 3, "shuffle": True,
        "shuffle_buffer": 20, "rank": 0, "world_size": 1, "num_workers": workers,
        "batch_size": 4, "drop_last": False}
    assert state["index_crc32c"] == crc32c(open(index, "rb").read())
    assert sum(state["split_starts"]) == len(got["seen"])
    position = ("samples_seen", "split_starts", "next_split")
    assert [got["counted"][k] for k in position] == [state[k] for k in position]


REMAP = """
CHAIN = {chain}
ds = make()
ds.set_epoch(2)
full = take(loader(ds, 2, 8))
ds.set_epoch(3)
fresh_next = take(loader(ds, CHAIN[-1][0], abs(CHAIN[-1][1])))  # batched(n): the same order
got, state, states = [], None, []
for workers, batch_size, stop in CHAIN:
    ds = make()
    if state is None:
        ds.set_epoch(2)
    else:
        ds.load_state_dict(json.loads(json.dumps(state)))
    if batch_size < 0:  # batched() in the workers
        dl = torch.utils.data.DataLoader(ds.batched(-batch_size, collate_fn=keys),
                                         batch_size=None, num_workers=workers)
    else:
        dl = loader(ds, workers, batch_size)
    got += take(dl, None if stop is None else len(got) + stop)
    state = ds.state_dict(samples_seen=len(got), loader=dl)
    states.append(state)
ds.set_epoch(3)
after = take(dl)
print(json.dumps(dict(full=full, got=got, states=states, next=after, fresh_next=fresh_next)))
"""


@pytest.mark.parametrize("chain", [
    [(2, 8, 24), (3, 8, None)],                # 2 -> 3 workers
    [(2, 8, 32), (2, 5, None)],                # batch size 8 -> 5
    [(2, 4, 36), (3, 5, 20), (0, 7, None)],    # two preemptions, each with another loader
    [(0, 4, 20), (2, 4, None)],                # from the training process to workers
    [(3, 4, 44), (2, 6, 18), (3, 4, None)],    # and back to the first configuration
    [(2, -8, 40), (3, -5, None)],              # batched() in the workers
], ids=["workers-2-3", "batch-8-5", "chain-2x4-3x5-0x7", "workers-0-2", "chain-back",
        "batched-8-5"])
def test_resume_with_another_loader_gives_the_remaining_samples_once(python, datasets, chain):
    got = run(python, datasets, REMAP.format(chain=chain))
    assert len(got["got"]) == len(set(got["got"])) == SAMPLES      # none repeated, none lost
    assert sorted(got["got"]) == sorted(got["full"])
    for (workers, batch_size, _), state in zip(chain, got["states"]):
        assert state["num_workers"] == workers and state["batch_size"] == abs(batch_size)
    # The next epoch is the new configuration's, as if it had run from the start.
    assert got["next"] == got["fresh_next"]


REFUSALS = """
errors = {{}}
def refused(name, f, kind=ValueError):
    try:
        f()
    except kind as e:
        errors[name] = str(e).strip().splitlines()[-1]
    else:
        errors[name] = None

def mid_epoch(**kw):
    ds = make(**kw)
    ds.set_epoch(2)
    dl = loader(ds, 2, 4)
    return ds.state_dict(samples_seen=len(take(dl, 8)), loader=dl)

state = mid_epoch()
refused("index", lambda: make(url=OTHER).load_state_dict(state))
refused("seed", lambda: make(seed=4).load_state_dict(state))
refused("shuffle", lambda: make(shuffle=False).load_state_dict(state))
refused("shuffle_buffer", lambda: make(shuffle_buffer=21).load_state_dict(state))
two = mid_epoch(rank=0, world_size=2)
refused("world_size", lambda: make(rank=0, world_size=1).load_state_dict(two))
refused("rank", lambda: make(rank=1, world_size=2).load_state_dict(two))
refused("legacy", lambda: make().load_state_dict(dict(epoch=2, seed=3, samples_seen=8)))
legacy = make()
legacy.load_state_dict(dict(epoch=4, seed=3, samples_seen=0))
# At an epoch boundary the world size may change.
ds = make(rank=0, world_size=2)
ds.set_epoch(5)
boundary = ds.state_dict()
for world in (1, 3):
    ok = make(rank=0, world_size=world)
    ok.load_state_dict(boundary)
    assert ok.epoch == 5
ds = make()
ds.set_epoch(2)
dl = loader(ds, 2, 4)
take(dl, 8)
refused("batch_boundary", lambda: ds.state_dict(samples_seen=6, loader=dl))
refused("no_samples_seen", lambda: ds.state_dict())
refused("too_many", lambda: ds.state_dict(samples_seen=200, loader=dl))
ds8 = make(batch_size=8)
refused("disagree", lambda: ds8.state_dict(samples_seen=8, loader=loader(ds8, 2, 4)))
refused("not_its_loader", lambda: make().state_dict(samples_seen=8, loader=dl))
refused("unknown_workers", lambda: make().state_dict(samples_seen=8))
refused("declared_workers", lambda: take(loader(make(num_workers=3), 2, 4)))
import os
os.environ.update(RANK="0", WORLD_SIZE="2")  # the workers read as rank 0 of 2 ...
ds = make()
dl = loader(ds, 2, 4)
take(dl, 8)
os.environ["RANK"] = "1"                     # ... but this process now says rank 1
refused("workers_rank", lambda: ds.state_dict(samples_seen=8, loader=dl))
os.environ.update(RANK="0", WORLD_SIZE="1")
ds = make()
dl = loader(ds, 2, 4, persistent=True)
take(dl, 8)
ds.load_state_dict(ds.state_dict(samples_seen=8, loader=dl))
refused("persistent_after_load", lambda: take(dl), RuntimeError)
print(json.dumps(dict(errors=errors, legacy_epoch=legacy.epoch)))
"""


def test_changed_dataset_seed_or_world_size_mid_epoch_is_refused_in_one_line(python, datasets):
    got = run(python, datasets, REFUSALS.format())
    e = got["errors"]
    other = crc32c(open(datasets["other"] + ".index.json", "rb").read())
    mine = crc32c(open(datasets["train"] + ".index.json", "rb").read())
    assert f"CRC32C {mine}" in e["index"] and f"has {other}" in e["index"]
    assert e["seed"] == "state was saved with seed 3, this dataset has seed 4"
    assert "shuffle=True" in e["shuffle"] and "shuffle=False" in e["shuffle"]
    assert "shuffle_buffer 20" in e["shuffle_buffer"] and "shuffle_buffer 21" in e["shuffle_buffer"]
    assert "world_size 2, this run has world_size 1" in e["world_size"]
    assert "by rank 0, this is rank 1" in e["rank"]
    assert "older ferry.data" in e["legacy"] and got["legacy_epoch"] == 4
    assert "not at a batch boundary" in e["batch_boundary"]
    assert "pass state_dict(samples_seen=...)" in e["no_samples_seen"]
    assert "more than this rank's epoch had left" in e["too_many"]
    assert "batch_size: the DataLoader says 4, ShardDataset(batch_size=...) says 8" == e["disagree"]
    assert "does not read this dataset" in e["not_its_loader"]
    assert "num_workers is known" in e["unknown_workers"]
    assert "ShardDataset(num_workers=3) is read with num_workers=2" in e["declared_workers"]
    assert "persistent workers started" in e["persistent_after_load"]
    assert "workers read as rank 0 of 2, this process is rank 1 of 2" in e["workers_rank"]
    for name, message in e.items():
        assert message is not None, f"{name} was not refused"
        assert "\n" not in message


SET_EPOCH = """
def orders(persistent, context):
    ds = make()
    dl = loader(ds, 2, 4, persistent=persistent, context=context)
    out = []
    for epoch in range(3):
        ds.set_epoch(epoch)
        out.append(take(dl))
    return out
if __name__ == "__main__":
    print(json.dumps(dict(plain=orders(False, "fork"), persistent=orders(True, {context!r}))))
"""


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_set_epoch_reaches_persistent_workers(python, datasets, context):
    got = run(python, datasets, SET_EPOCH.format(context=context))
    assert got["persistent"] == got["plain"]
    assert len({tuple(o) for o in got["persistent"]}) == 3
    assert all(sorted(o) == sorted(got["plain"][0]) for o in got["persistent"])


LEN = """
out = {{}}
out["world1"] = len(make())
for epoch in (0, 1):
    for rank in (0, 1):
        ds = make(rank=rank, world_size=2, num_workers=2)
        ds.set_epoch(epoch)
        out[f"len{{epoch}}{{rank}}"] = len(ds)
        out[f"read{{epoch}}{{rank}}"] = len(take(loader(ds, 2, 4)))
ds = make(rank=1, world_size=2)
try:
    len(ds)
except TypeError as e:
    out["undeclared"] = str(e)
take(loader(ds, 2, 4))
out["learned"] = len(ds)
with warnings.catch_warnings():
    # torch warns when a loader yields more than len() said.
    warnings.filterwarnings("error", message="Length of IterableDataset")
    for partial in (True, False):
        for workers in (0, 2):
            ds = make(num_workers=workers)
            dl = torch.utils.data.DataLoader(ds.batched(8, partial=partial), batch_size=None,
                                             num_workers=workers)
            out[f"batched{{workers}}{{partial}}"] = [len(dl), len(list(dl)),
                                                    sum(len(b) for b in dl)]
    dl = loader(make(), 0, 4)
    out["loader0"] = [len(dl), len(list(dl))]
try:
    len(make().batched(8))
except TypeError as e:
    out["batched_undeclared"] = str(e)
print(json.dumps(out))
"""


def test_len_is_this_ranks_samples_per_epoch(python, datasets):
    got = run(python, datasets, LEN.format())
    assert got["world1"] == SAMPLES
    for epoch in "01":
        assert got[f"len{epoch}0"] + got[f"len{epoch}1"] == SAMPLES
        for rank in "01":
            assert got[f"len{epoch}{rank}"] == got[f"read{epoch}{rank}"]
    assert "num_workers" in got["undeclared"] and got["learned"] == got["read01"]
    for workers in "02":
        n, batches, samples = got[f"batched{workers}True"]
        assert n == batches and samples == SAMPLES
        n, batches, samples = got[f"batched{workers}False"]
        assert n == batches and samples == 8 * batches
    assert got["loader0"] == [31, 31]
    assert "num_workers" in got["batched_undeclared"]


def position_module():
    """ferry/_position.py is plain Python: loaded from the source tree, without ferry._native."""
    spec = importlib.util.spec_from_file_location("ferry_position",
                                                  ROOT / "python" / "ferry" / "_position.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_loader(streams, batch_size, drop_last):
    """What an in-order DataLoader yields from workers with these sample streams: each worker's
    batches, taken round-robin, skipping workers that are done."""
    batches = []
    for stream in streams:
        cut = [stream[i:i + batch_size] for i in range(0, len(stream), batch_size)]
        batches.append([b for b in cut if len(b) == batch_size or not drop_last])
    order, taken, w = [], [0] * len(streams), 0
    while any(t < len(b) for t, b in zip(taken, batches)):
        if taken[w] < len(batches[w]):
            order.append(batches[w][taken[w]])
            taken[w] += 1
        w = (w + 1) % len(streams)
    return order


def test_position_arithmetic_against_a_model_of_the_dataloader():
    """Random split sizes and chains of preemptions, each resumed with a random loader: every
    sample comes exactly once, the consumed samples are a prefix of each split, and a loader like
    the one that began the epoch continues in the uninterrupted order."""
    pos = position_module()
    rnd = random.Random(12)
    for trial in range(400):
        first = (rnd.randint(0, 4), rnd.randint(1, 6), rnd.random() < 0.2)
        sizes = [rnd.randint(0, 25) for _ in range(max(first[0], 1))]
        starts, next_split, got, config, unchanged = [0] * len(sizes), 0, [], first, True
        for step in range(5):
            last = step == 4 or rnd.random() < 0.3
            workers, batch_size, drop_last = config if not last else (config[0], config[1], False)
            streams = [[(s, i) for s in pos.splits_of(w, workers, len(sizes), next_split)
                        for i in range(starts[s], sizes[s])] for w in range(max(workers, 1))]
            order = model_loader(streams, batch_size, drop_last)
            unchanged = unchanged and (workers, batch_size, drop_last) == first
            if unchanged:  # every loader so far like the first: the uninterrupted order
                whole = model_loader([[(w, i) for i in range(n)] for w, n in enumerate(sizes)],
                                     batch_size, drop_last)
                done = sum(len(b) for b in whole if all(i < starts[s] for s, i in b))
                assert [x for b in order for x in b] == [x for b in whole for x in b][done:]
            k = len(order) if last else rnd.randint(0, len(order))
            consumed = [x for b in order[:k] for x in b]
            got += consumed
            starts, next_split = pos.advance(sizes, starts, next_split, workers, batch_size,
                                             drop_last, len(consumed))
            for s, n in enumerate(sizes):
                assert sorted(i for t, i in got if t == s) == list(range(starts[s])), trial
            if last:
                break
            if rnd.random() < 0.6:  # else the same loader again
                config = (rnd.randint(0, 4), rnd.randint(1, 6), rnd.random() < 0.2)
        assert len(got) == len(set(got)) == sum(sizes), trial
