"""Tar-shard datasets for PyTorch, read by Ferry's C++ streaming reader.

    import torch
    from ferry.data import ShardDataset
    ds = ShardDataset("s3://bucket/ds/train", shuffle=True, seed=0)
    loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=4,
                                         persistent_workers=True)
    for epoch in range(start_epoch, epochs):
        ds.set_epoch(epoch)
        for batch in loader: ...

The dataset is what webdataset takes: Ferry's index or pack prefix, a directory or prefix of
shards, shard URLs as a list or a brace pattern ("s3://b/ds/train-{000000..000099}.tar");
shards without a Ferry index are indexed when the dataset is made and the index is cached
(ferry/_sources.py, src/shard/resolve.h).

Each sample is a dict {"__key__": str, "<ext>": bytes, ...} (WebDataset's layout); pass
`decode="torchrgb"` (ferry.data.decoder: images -> tensors, cls/txt/json -> Python values) so
the default collate stacks batches, `decode=ferry.data.decode` for PIL images, or your own
function.

Splitting: shards are divided among ranks (RANK/WORLD_SIZE from torch.distributed, else the
environment) and DataLoader workers, so each sample is read exactly once per epoch. `len(ds)`
is this rank's samples in the current epoch.

Resume: `state_dict(samples_seen=n, loader=loader)`, with n the samples this rank's training loop
consumed in the current epoch, records the position and everything it depends on (seed, epoch,
shuffle, rank, world size, the DataLoader's num_workers/batch_size/drop_last and the index's
CRC32C). `load_state_dict()` after a restart gives exactly the rest of the epoch: in the same order
when the configuration is unchanged; with another num_workers or batch size the same set of
samples, each once; a changed dataset, seed, shuffle, or a world size changed mid-epoch is refused
with a ValueError. The epoch lives in shared memory, so `set_epoch` reaches persistent workers.
See docs/semantics/shards.md.

Workers: `DataLoader(ds, batch_size=64, num_workers=4, collate_fn=ferry.data.collate)` (or
`ferry.data.shared(your_collate(samples))` in your own collate_fn, or `ds.batched(64)`) hands
each batch to the training process through shared memory that is reused, instead of PyTorch's
per-tensor segments and the pipe (ferry/_shm.py); the batch arrives as the same dict of
tensors and lists.

Data stalls: `for batch in ferry.data.timed(loader): ...` times how long the loop waited for each
batch; `ferry.track` logs it as `data/train/wait_fraction` etc. (ferry/_stall.py). Every meter of
one name feeds one stream, so a new meter or DataLoader per epoch loses no batch.
"""

import io
import json
import multiprocessing
import multiprocessing.context
import os

import torch.utils.data

from . import _native
from ._shm import collate, wrap as shared
from ._decode import Decoder, decoder
from ._position import advance, splits_of, worker_starts
from ._sources import expand_braces, shard_inputs
from ._stall import StallMeter, timed

__all__ = ["Decoder", "ShardDataset", "StallMeter", "collate", "decode", "decoder",
           "expand_braces", "shared", "timed", "worker_starts"]

_STATE_VERSION = 2
_CHUNK = 64  # samples taken from the C++ reader per call

# Slots of the array a ShardDataset shares with its DataLoader workers (forked or spawned,
# persistent or not): what the training process sets, and what the workers report back.
_EPOCH = 0        # set_epoch() / load_state_dict()
_GEN = 1          # bumped by each load_state_dict() that resumes mid-epoch
_RESUMING = 2     # 1 while that resume applies (set_epoch() to another epoch clears it)
_SEEN_EPOCH = 3   # the epoch the workers last started reading (-1: none since load_state_dict)
_SEEN_WORKERS = 4  # their num_workers (0: read in the training process; -1: never read)
_SEEN_RANK = 5
_SEEN_WORLD = 6
_SLOTS = 7


def _rank_world():
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:  # pragma: no cover
        pass
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def _agree(name, sources):
    """The value the known (not None) sources give for `name`; ValueError when they differ."""
    known = [(where, value) for where, value in sources if value is not None]
    for where, value in known[1:]:
        if value != known[0][1]:
            raise ValueError(f"{name}: {known[0][0]} says {known[0][1]!r}, {where} says {value!r}")
    return known[0][1] if known else None


class ShardDataset(torch.utils.data.IterableDataset):
    """An IterableDataset over tar shards (local path, s3://, http(s)://).

    Args:
        url: what the samples are: a Ferry index URL (`.../train.index.json`) or the prefix
            given to `ferry shard pack`; a directory or prefix (`/nas/ds/`, `s3://b/ds/`)
            holding one Ferry index or just .tar shards; shard URLs, as a list, a brace pattern
            (`s3://b/ds/train-{000000..000099}.tar`) or patterns joined with `::`. Shards
            without a Ferry index are read whole once, here, to index them (`index_cache_dir`
            keeps that index for next time); exact resume, splits and `len()` then work as
            with a Ferry index.
        shuffle: shuffle shard order per epoch and samples through a buffer (default True).
        seed: base seed; the order is a function of (seed, epoch, rank, worker).
        shuffle_buffer: samples held for shuffling (memory: about this many samples).
        rank, world_size: override torch.distributed / RANK / WORLD_SIZE.
        prefetch_shards: shards fetched ahead by background threads (per worker).
        read_ahead: bytes buffered per shard being fetched.
        cache_dir, cache_size: keep verified shards on local disk (shared by workers), capped.
        skip_corrupt: skip the rest of a corrupt or truncated shard with a warning instead of
            raising.
        decode: function applied to each sample dict (e.g. ferry.data.decode), or an image
            mode for ferry.data.decoder ("torchrgb", "torchrgb8", "pil", ...).
        index_cache_dir: where indexes of shards without a Ferry index are cached (default
            $FERRY_SHARD_INDEX_CACHE, else ~/.cache/ferry/shard-index).
        batch_size, drop_last, num_workers: the DataLoader's settings, optional. The dataset
            learns num_workers from its workers once they read; declaring them lets `len()`
            (num_workers, with world_size > 1) and `state_dict()` (batch_size and drop_last,
            when not given `loader=`) work before that. Workers check num_workers.
    """

    def __init__(self, url, shuffle=True, seed=0, shuffle_buffer=1000, rank=None,
                 world_size=None, prefetch_shards=2, read_ahead=64 << 20, cache_dir=None,
                 cache_size=0, skip_corrupt=False, decode=None, batch_size=None, drop_last=False,
                 num_workers=None, index_cache_dir=None):
        super().__init__()
        self.source = url
        resolved = _native.resolve(shard_inputs(url),
                                   cache_dir="" if index_cache_dir is None else str(index_cache_dir))
        self.url = resolved["index_url"]  # a Ferry index: the reader, plan and resume use it
        self.shuffle = shuffle
        self.seed = seed
        self.shuffle_buffer = shuffle_buffer
        self.rank = rank
        self.world_size = world_size
        self.prefetch_shards = prefetch_shards
        self.read_ahead = read_ahead
        self.cache_dir = "" if cache_dir is None else str(cache_dir)
        self.cache_size = cache_size
        self.skip_corrupt = skip_corrupt
        self.decode = decoder(decode) if isinstance(decode, str) else decode
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.num_workers = num_workers
        # Lock-free on purpose: a lock made in a fork context cannot be passed to spawned
        # workers; each slot has one writer at a time (the training process between epochs,
        # the workers when they start reading).
        self._shared = multiprocessing.RawArray("q", _SLOTS)
        self._shared[_SEEN_EPOCH] = -1
        self._shared[_SEEN_WORKERS] = -1
        self._gen = 0           # this copy's resume generation (compare _shared[_GEN])
        self._resume = None     # from load_state_dict: epoch, starts, next, seen, rank, world
        self._seen = 0          # samples yielded in this process this epoch (num_workers=0)
        self._index_cache = {}  # (what, epoch, ...) -> index-derived values, this process

    def __getstate__(self):
        state = dict(self.__dict__, _index_cache={})
        if multiprocessing.context.get_spawning_popen() is None:
            # A copy or a pickle, not a DataLoader worker being started: nothing shared.
            state["_shared"] = list(self._shared)
        return state

    def __setstate__(self, state):
        if isinstance(state["_shared"], list):
            state["_shared"] = multiprocessing.RawArray("q", state["_shared"])
        self.__dict__.update(state)

    @property
    def epoch(self):
        return self._shared[_EPOCH]

    def set_epoch(self, epoch):
        """Selects the epoch (its shard order and shuffle); call before iterating. Workers,
        persistent ones too, read it when they start the epoch."""
        epoch = int(epoch)
        if epoch != self.epoch:
            self._seen = 0
        if self._resume is not None and self._resume["epoch"] != epoch:
            self._resume = None  # a resumed epoch is left for good
            self._shared[_RESUMING] = 0
        self._shared[_EPOCH] = epoch

    def _rank_world(self):
        rank, world = _rank_world()
        return (rank if self.rank is None else self.rank,
                world if self.world_size is None else self.world_size)

    def _index_value(self, key, compute):
        """An index-derived value, cached per key; each key names its epoch, so this process
        reads the index at most once per epoch for each kind of value."""
        if key not in self._index_cache:
            if len(self._index_cache) > 16:
                self._index_cache.clear()
            self._index_cache[key] = compute()
        return self._index_cache[key]

    def _split_sizes(self, epoch, splits, rank, world):
        """Samples in each of this rank's `splits` splits of `epoch`."""
        return self._index_value(
            ("sizes", epoch, splits, rank, world),
            lambda: _native.worker_sizes(self.url, self.seed, epoch, self.shuffle, rank, world,
                                         splits))

    def _identity(self, epoch):
        """The CRC32C of the index bytes, read at most once per epoch."""
        return self._index_value(("crc32c", epoch),
                                 lambda: _native.index_summary(self.url)["crc32c"])

    def __iter__(self):
        rank, world = self._rank_world()
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 0)
        if self.num_workers is not None and self.num_workers != workers:
            raise ValueError(f"ShardDataset(num_workers={self.num_workers}) is read with "
                             f"num_workers={workers}")
        shared = self._shared
        if self._gen != shared[_GEN]:
            raise RuntimeError("load_state_dict() was called after this DataLoader's persistent "
                               "workers started: call it before the DataLoader's first iteration "
                               "(or make a new DataLoader)")
        epoch = self.epoch
        shared[_SEEN_WORKERS], shared[_SEEN_RANK], shared[_SEEN_WORLD] = workers, rank, world
        shared[_SEEN_EPOCH] = epoch
        resume = self._resume
        if resume is None or resume["epoch"] != epoch or not shared[_RESUMING]:
            splits, reads, base = max(workers, 1), [(worker, 0)], 0
        else:
            if (rank, world) != (resume["rank"], resume["world_size"]):
                raise ValueError(f"the resumed state is rank {resume['rank']} of "
                                 f"{resume['world_size']}, this reader is rank {rank} of {world}")
            splits, base = len(resume["starts"]), resume["seen"]
            reads = [(s, resume["starts"][s])
                     for s in splits_of(worker, workers, splits, resume["next"])]
        self._seen = base
        decode = self.decode
        for split, start in reads:
            reader = _native.ShardReader(
                self.url, seed=self.seed, epoch=epoch, shuffle=self.shuffle,
                shuffle_buffer=self.shuffle_buffer, rank=rank, world_size=world, worker=split,
                num_workers=splits, start=start, prefetch_shards=self.prefetch_shards,
                read_ahead=self.read_ahead, cache_dir=self.cache_dir, cache_size=self.cache_size,
                skip_corrupt=self.skip_corrupt)
            while True:
                chunk = reader.next_batch(_CHUNK)  # one C++ call (GIL released) per chunk
                if not chunk:
                    break
                for sample in chunk:
                    self._seen += 1
                    yield decode(sample) if decode is not None else sample

    def __len__(self):
        """This rank's samples in the current epoch (the sum over its DataLoader workers'
        splits). With world_size > 1 that depends on num_workers (and, with shuffle, on the
        epoch): it is taken from the workers once they read, or ShardDataset(num_workers=...);
        before either, TypeError."""
        return sum(self._worker_sizes(need_workers=False))

    def _worker_sizes(self, need_workers):
        """Samples per DataLoader worker (one entry for num_workers=0) in the current epoch."""
        rank, world = self._rank_world()
        seen = self._shared[_SEEN_WORKERS]
        workers = _agree("num_workers", [("ShardDataset(num_workers=...)", self.num_workers),
                                         ("its workers", seen if seen >= 0 else None)])
        if workers is None:
            if need_workers or world > 1:
                raise TypeError(f"len(): the samples of rank {rank} of {world} per DataLoader "
                                "worker depend on num_workers; pass ShardDataset(num_workers=...) "
                                "or iterate once first")
            workers = 1  # one rank: all its splits together are the whole dataset
        return self._split_sizes(self.epoch, max(workers, 1), rank, world)

    def batched(self, batch_size, collate_fn=None, partial=True):
        """Groups samples into batches inside the DataLoader workers, so each worker sends one
        message per batch instead of one per sample (the DataLoader's per-item cost is the
        ceiling with worker processes). Use with DataLoader(batch_size=None). Resume works the
        same way: the batches are the round-robin unit (set batch_size here, not twice)."""
        if self.batch_size is not None and self.batch_size != batch_size:
            raise ValueError(f"batched({batch_size}) on ShardDataset(batch_size={self.batch_size})")
        self.batch_size, self.drop_last = batch_size, not partial
        return _Batched(self, batch_size, collate_fn, partial)

    def num_samples(self):
        """Samples in the whole dataset (all ranks)."""
        return _native.index_summary(self.url)["samples"]

    def _loader_config(self, loader):
        """(num_workers, batch_size, drop_last) of the DataLoader reading this dataset this
        epoch, from `loader`, the declared settings and what the workers reported; None where
        unknown. Sources that disagree are an error."""
        from_loader = (None, None, None)
        if loader is not None:
            inner = loader.dataset
            if inner is not self and getattr(inner, "dataset", None) is not self:
                raise ValueError("state_dict(loader=...): that DataLoader does not read this "
                                 "dataset")
            if not getattr(loader, "in_order", True):
                raise ValueError("resume needs an in-order DataLoader (in_order=True)")
            if loader.batch_size is not None:
                if inner is not self:
                    raise ValueError("batched() is read with DataLoader(batch_size=None)")
                from_loader = (loader.num_workers, loader.batch_size, loader.drop_last)
            elif inner is not self:  # batched(): the batches are the unit
                from_loader = (loader.num_workers, inner.batch_size, not inner.partial)
            else:  # one sample per item
                from_loader = (loader.num_workers, 1, False)
        shared = self._shared
        seen = shared[_SEEN_WORKERS] if shared[_SEEN_EPOCH] == self.epoch else None
        declared = (self.batch_size, self.drop_last if self.batch_size is not None else None)
        workers = _agree("num_workers", [("the DataLoader", from_loader[0]),
                                         ("ShardDataset(num_workers=...)", self.num_workers),
                                         ("the workers of this epoch", seen)])
        batch_size = _agree("batch_size", [("the DataLoader", from_loader[1]),
                                           ("ShardDataset(batch_size=...)", declared[0])])
        drop_last = _agree("drop_last", [("the DataLoader", from_loader[2]),
                                         ("ShardDataset(drop_last=...)", declared[1])])
        return workers, batch_size, drop_last

    def state_dict(self, samples_seen=None, loader=None):
        """Where this rank is in the epoch, and everything that position depends on.

        samples_seen: the samples this rank's training loop consumed in the current epoch
            (after a resume, counting from the state's samples_seen). Needed with
            num_workers > 0 (the workers run ahead of the loop); with num_workers=0 the dataset
            counts them itself.
        loader: the DataLoader, to take num_workers, batch_size and drop_last from it (else from
            the workers' report and ShardDataset(batch_size=..., drop_last=...)).
        Raises ValueError when the position cannot be told exactly (unknown batch size, not on a
        batch boundary, sources disagreeing)."""
        workers, batch_size, drop_last = self._loader_config(loader)
        rank, world = self._rank_world()
        shared = self._shared
        if shared[_SEEN_EPOCH] == self.epoch and \
                (shared[_SEEN_RANK], shared[_SEEN_WORLD]) != (rank, world):
            raise ValueError(f"the workers read as rank {shared[_SEEN_RANK]} of "
                             f"{shared[_SEEN_WORLD]}, this process is rank {rank} of {world}: "
                             "pass ShardDataset(rank=..., world_size=...)")
        epoch = self.epoch
        if samples_seen is None:
            if workers:
                raise ValueError(f"with num_workers={workers} pass state_dict(samples_seen=...): "
                                 "the samples the training loop consumed this epoch")
            samples_seen = self._seen
        samples_seen = int(samples_seen)
        resume = self._resume if self._resume is not None and shared[_RESUMING] else None
        if resume is not None:
            starts, next_split, base = resume["starts"], resume["next"], resume["seen"]
        else:
            starts, next_split, base = [], 0, 0
        if samples_seen < base:
            raise ValueError(f"samples_seen={samples_seen} is less than the {base} samples "
                             "consumed before this epoch was resumed (count from the state's "
                             "samples_seen)")
        if samples_seen > base:
            if workers is None:
                raise ValueError("this dataset has not been read in this epoch: pass "
                                 "state_dict(loader=...) so num_workers is known")
            if not starts:
                starts = [0] * max(workers, 1)
            sizes = self._split_sizes(epoch, len(starts), rank, world)
            try:
                starts, next_split = advance(sizes, starts, next_split, workers, batch_size,
                                              drop_last, samples_seen - base)
            except ValueError as e:
                if not base:
                    raise
                raise ValueError(f"{e} (counting from the resume at samples_seen={base})") from None
        return {"version": _STATE_VERSION, "epoch": epoch, "samples_seen": samples_seen,
                "seed": self.seed, "shuffle": bool(self.shuffle),
                "shuffle_buffer": self.shuffle_buffer, "index_crc32c": self._identity(epoch),
                "rank": rank, "world_size": world, "num_workers": workers,
                "batch_size": batch_size, "drop_last": drop_last,
                "split_starts": starts, "next_split": next_split}

    def load_state_dict(self, state):
        """Continues from `state` (see state_dict): the next pass over its epoch yields exactly
        the samples that were not consumed, and later epochs as usual. Call it before the
        DataLoader's first iteration. Refuses (ValueError) a state of another dataset (index
        CRC32C), seed or shuffle, a state saved mid-epoch under another world size, rank or
        shuffle_buffer, and a mid-epoch state from before ferry recorded the loader's
        configuration."""
        epoch, seen = int(state["epoch"]), int(state["samples_seen"])
        if state.get("seed", self.seed) != self.seed:
            raise ValueError(f"state was saved with seed {state['seed']}, this dataset has "
                             f"seed {self.seed}")
        version = state.get("version", 1)
        if version == 1 and seen:
            raise ValueError(f"state has no loader configuration (saved by an older ferry.data): "
                             f"resuming epoch {epoch} after {seen} samples could repeat and skip "
                             "samples; only a state at an epoch boundary (samples_seen 0) loads")
        if version not in (1, _STATE_VERSION):
            raise ValueError(f"state version {version!r} is not one this ferry.data reads "
                             f"({_STATE_VERSION})")
        resume = None
        if version == _STATE_VERSION:
            if state["shuffle"] != bool(self.shuffle):
                raise ValueError(f"state was saved with shuffle={state['shuffle']}, this dataset "
                                 f"has shuffle={bool(self.shuffle)}")
            crc = self._identity(epoch)
            if state["index_crc32c"] != crc:
                raise ValueError(f"state was saved for a dataset whose index has CRC32C "
                                 f"{state['index_crc32c']}, the index of {self.url} has {crc}: "
                                 "the shards changed")
            if seen:
                resume = self._resume_from(state, epoch, seen)
        self._shared[_EPOCH] = epoch
        self._shared[_SEEN_EPOCH] = -1
        self._seen = seen
        self._resume = resume
        if resume is not None:
            self._gen += 1
            self._shared[_GEN] = self._gen
        self._shared[_RESUMING] = int(resume is not None)

    def _resume_from(self, state, epoch, seen):
        """The checked mid-epoch position of a version-2 state."""
        rank, world = self._rank_world()
        where = f"state was saved in epoch {epoch} after {seen} samples"
        if state["world_size"] != world:
            raise ValueError(f"{where} with world_size {state['world_size']}, this run has "
                             f"world_size {world}: one rank's state cannot place the others' "
                             "samples; resume with the same world size or from an epoch boundary")
        if state["rank"] != rank:
            raise ValueError(f"{where} by rank {state['rank']}, this is rank {rank}: each rank "
                             "loads its own state")
        if state["shuffle_buffer"] != self.shuffle_buffer:
            raise ValueError(f"{where} with shuffle_buffer {state['shuffle_buffer']}, this "
                             f"dataset has shuffle_buffer {self.shuffle_buffer}")
        starts, next_split = [int(s) for s in state["split_starts"]], int(state["next_split"])
        sizes = self._split_sizes(epoch, len(starts), rank, world) if starts else []
        if not starts or not 0 <= next_split < len(starts) or \
                any(not 0 <= s <= n for s, n in zip(starts, sizes)):
            raise ValueError(f"{where}: split_starts {starts} / next_split {next_split} do not "
                             f"fit this rank's splits {sizes}")
        return {"epoch": epoch, "seen": seen, "starts": starts, "next": next_split,
                "rank": rank, "world_size": world}


class _Batched(torch.utils.data.IterableDataset):
    """ShardDataset.batched(): lists of samples (or collate_fn(list)) from each worker."""

    def __init__(self, dataset, batch_size, collate_fn, partial):
        super().__init__()
        self.dataset = dataset
        self.batch_size = batch_size
        self.collate_fn = collate_fn
        self.partial = partial

    def __iter__(self):
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield shared(self.collate_fn(batch) if self.collate_fn else batch)
                batch = []
        if batch and self.partial:
            yield shared(self.collate_fn(batch) if self.collate_fn else batch)

    def __len__(self):
        """Batches this rank's workers yield in the current epoch (each worker's last batch may
        be partial). Needs the DataLoader's num_workers: from the workers once they read, or
        ShardDataset(num_workers=...); before either, TypeError."""
        sizes = self.dataset._worker_sizes(need_workers=True)
        if self.partial:
            return sum(-(-n // self.batch_size) for n in sizes)
        return sum(n // self.batch_size for n in sizes)

    def set_epoch(self, epoch):
        self.dataset.set_epoch(epoch)

    def state_dict(self, samples_seen=None, loader=None):
        return self.dataset.state_dict(samples_seen, loader)

    def load_state_dict(self, state):
        self.dataset.load_state_dict(state)


def decode(sample):
    """Decodes common extensions: cls/idx/label -> int, txt/text -> str, json -> object,
    npy -> numpy array, jpg/jpeg/png/ppm/bmp/webp -> PIL image (needs Pillow). Other
    values stay bytes; keys starting with "__" are kept as they are."""
    out = {}
    for key, value in sample.items():
        if key.startswith("__"):
            out[key] = value
            continue
        ext = key.rsplit(".", 1)[-1].lower()
        if ext in ("cls", "idx", "label", "index"):
            out[key] = int(value.decode().strip())
        elif ext in ("txt", "text"):
            out[key] = value.decode()
        elif ext == "json":
            out[key] = json.loads(value)
        elif ext == "npy":
            import numpy as np
            out[key] = np.load(io.BytesIO(value), allow_pickle=False)
        elif ext in ("jpg", "jpeg", "png", "ppm", "bmp", "webp"):
            from PIL import Image
            image = Image.open(io.BytesIO(value))
            image.load()
            out[key] = image
        else:
            out[key] = value
    return out
