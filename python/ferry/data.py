"""Tar-shard datasets for PyTorch, read by Ferry's C++ streaming reader.

    from ferry.data import ShardDataset
    ds = ShardDataset("s3://bucket/ds/train", shuffle=True, seed=0, batch_size=32)
    loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=4)
    for epoch in range(start_epoch, epochs):
        ds.set_epoch(epoch)
        for batch in loader: ...

Each sample is a dict {"__key__": str, "<ext>": bytes, ...} (WebDataset's layout); pass
`decode=ferry.data.decode` (or your own function) to turn bytes into objects.

Splitting: shards are divided among ranks (RANK/WORLD_SIZE from torch.distributed, else the
environment) and DataLoader workers, so each sample is read exactly once per epoch.

Resume: `state_dict(samples_seen=n)` with the number of samples this rank's training loop has
consumed in the current epoch, and `load_state_dict()` after a restart, give exactly the rest of
the epoch. With num_workers > 0 the DataLoader must be in-order (the default) and `batch_size`
must be given to ShardDataset as well, so the samples can be mapped onto the workers.
See docs/semantics/shards.md.
"""

import io
import json
import os

import torch.utils.data

from . import _native

__all__ = ["ShardDataset", "decode", "worker_starts"]


def _rank_world():
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:  # pragma: no cover
        pass
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def worker_starts(sizes, batch_size, samples_seen, drop_last=False):
    """Where each worker's split stood when the training loop had consumed `samples_seen`.

    An in-order DataLoader takes batches from its workers round-robin, skipping workers that
    are done; worker w has sizes[w] samples, i.e. ceil(sizes[w] / batch_size) batches
    (floor with drop_last). Returns (starts, next_worker): samples delivered per worker's split,
    and the split whose batch would have come next (a resumed DataLoader starts its round-robin
    at worker 0, so worker i of the resumed loader takes split (next_worker + i) % workers).
    """
    workers = len(sizes)
    if samples_seen == 0:
        return [0] * workers, 0
    if batch_size is None or batch_size < 1:
        raise ValueError("resuming with num_workers > 0 needs ShardDataset(batch_size=...) "
                         "equal to the DataLoader's batch_size")
    batches = [(n // batch_size if drop_last else -(-n // batch_size)) for n in sizes]
    done = [0] * workers  # batches delivered per worker
    seen, w = 0, 0
    while seen < samples_seen and any(d < b for d, b in zip(done, batches)):
        if done[w] < batches[w]:
            seen += min(batch_size, sizes[w] - done[w] * batch_size)
            done[w] += 1
        w = (w + 1) % workers
    if seen != samples_seen:
        raise ValueError(f"samples_seen={samples_seen} is not at a batch boundary "
                         f"(batch_size={batch_size}, workers={workers})")
    return [min(d * batch_size, n) for d, n in zip(done, sizes)], w


class ShardDataset(torch.utils.data.IterableDataset):
    """An IterableDataset over a Ferry shard index (URL of `<name>.index.json` or its prefix).

    Args:
        url: index URL or the prefix given to `ferry shard pack` (local path, s3://, http(s)://).
        shuffle: shuffle shard order per epoch and samples through a buffer (default True).
        seed: base seed; the order is a function of (seed, epoch, rank, worker).
        shuffle_buffer: samples held for shuffling (memory: about this many samples).
        rank, world_size: override torch.distributed / RANK / WORLD_SIZE.
        prefetch_shards: shards fetched ahead by background threads (per worker).
        read_ahead: bytes buffered per shard being fetched.
        cache_dir, cache_size: keep verified shards on local disk (shared by workers), capped.
        skip_corrupt: skip the rest of a corrupt or truncated shard with a warning instead of
            raising.
        decode: function applied to each sample dict (e.g. ferry.data.decode).
        batch_size: the DataLoader's batch size; needed only to resume with num_workers > 0.
        drop_last: the DataLoader's drop_last (same purpose).
    """

    def __init__(self, url, shuffle=True, seed=0, shuffle_buffer=1000, rank=None,
                 world_size=None, prefetch_shards=2, read_ahead=64 << 20, cache_dir=None,
                 cache_size=0, skip_corrupt=False, decode=None, batch_size=None, drop_last=False):
        super().__init__()
        self.url = str(url)
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
        self.decode = decode
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.epoch = 0
        self._seen = 0          # samples yielded in this process this epoch (num_workers=0)
        self._resume = None     # (epoch, samples_seen) from load_state_dict

    def set_epoch(self, epoch):
        """Selects the epoch (its shard order and shuffle); call before iterating."""
        if epoch != self.epoch:
            self._seen = 0
        self.epoch = epoch

    def _split(self):
        rank, world = _rank_world()
        if self.rank is not None:
            rank = self.rank
        if self.world_size is not None:
            world = self.world_size
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        return rank, world, worker, workers

    def _start(self, rank, world, worker, workers):
        """(split this worker reads, samples of it already consumed)."""
        if self._resume is None or self._resume[0] != self.epoch:
            return worker, 0
        seen = self._resume[1]
        if workers == 1:
            return worker, seen
        sizes = _native.worker_sizes(self.url, self.seed, self.epoch, self.shuffle, rank, world,
                                     workers)
        starts, first = worker_starts(sizes, self.batch_size, seen, self.drop_last)
        split = (first + worker) % workers
        return split, starts[split]

    def __iter__(self):
        rank, world, worker, workers = self._split()
        worker, start = self._start(rank, world, worker, workers)
        reader = _native.ShardReader(
            self.url, seed=self.seed, epoch=self.epoch, shuffle=self.shuffle,
            shuffle_buffer=self.shuffle_buffer, rank=rank, world_size=world, worker=worker,
            num_workers=workers, start=start, prefetch_shards=self.prefetch_shards,
            read_ahead=self.read_ahead, cache_dir=self.cache_dir, cache_size=self.cache_size,
            skip_corrupt=self.skip_corrupt)
        self._seen = start
        decode = self.decode
        for sample in reader:
            self._seen += 1
            yield decode(sample) if decode is not None else sample
        if self._resume is not None and self._resume[0] == self.epoch:
            self._resume = None  # the resumed epoch is done

    def batched(self, batch_size, collate_fn=None, partial=True):
        """Groups samples into batches inside the DataLoader workers, so each worker sends one
        message per batch instead of one per sample (the DataLoader's per-item cost is the
        ceiling with worker processes). Use with DataLoader(batch_size=None). Resume works the
        same way: the batches are the round-robin unit (set batch_size here, not twice)."""
        self.batch_size = batch_size
        return _Batched(self, batch_size, collate_fn, partial)

    def num_samples(self):
        """Samples in the whole dataset (all ranks)."""
        return _native.index_summary(self.url)["samples"]

    def state_dict(self, samples_seen=None):
        """Where this rank is in the epoch. With num_workers > 0 pass the number of samples the
        training loop consumed this epoch (the dataset object in the main process cannot see
        the workers' progress)."""
        return {"epoch": self.epoch, "seed": self.seed,
                "samples_seen": self._seen if samples_seen is None else int(samples_seen)}

    def load_state_dict(self, state):
        if state.get("seed", self.seed) != self.seed:
            raise ValueError(f"state was saved with seed {state['seed']}, this dataset has "
                             f"seed {self.seed}")
        self.epoch = int(state["epoch"])
        self._resume = (self.epoch, int(state["samples_seen"]))
        self._seen = self._resume[1]


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
                yield self.collate_fn(batch) if self.collate_fn else batch
                batch = []
        if batch and self.partial:
            yield self.collate_fn(batch) if self.collate_fn else batch

    def set_epoch(self, epoch):
        self.dataset.set_epoch(epoch)

    def state_dict(self, samples_seen=None):
        return self.dataset.state_dict(samples_seen)

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
