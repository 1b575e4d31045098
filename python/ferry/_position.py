"""Where one rank stands in an epoch of a ShardDataset: arithmetic over split sizes (no I/O).

An in-order DataLoader takes batches from its workers round-robin, skipping workers that are
done, so the DataLoader's (num_workers, batch_size, drop_last) and the samples the training loop
consumed say exactly how many samples each worker delivered: a prefix of each split's order. A
position is therefore `starts` (samples consumed per split of the epoch) plus the split whose
batch comes next; a resumed DataLoader with any number of workers reads the rest of each split
(splits_of), and advance() moves the position on by what the loop consumed from it.
"""

__all__ = ["advance", "splits_of", "worker_starts"]


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
        raise ValueError("resuming with num_workers > 0 needs the DataLoader's batch size: "
                         "pass state_dict(loader=...) or ShardDataset(batch_size=...)")
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


def splits_of(worker, workers, splits, next_split):
    """The splits that DataLoader worker `worker` of `workers` reads, in order, in an epoch whose
    plan has `splits` splits: the splits in round-robin order from `next_split`, dealt out to the
    workers in turn. With as many workers as splits each worker reads one, the one that was next
    in line (the order of an uninterrupted run); otherwise the workers share them out."""
    return [(next_split + p) % splits for p in range(worker, splits, max(workers, 1))]


def advance(sizes, starts, next_split, workers, batch_size, drop_last, consumed):
    """(starts, next_split) after the loop consumed `consumed` more samples from a DataLoader with
    `workers` workers reading the rest of each split (sizes[s] - starts[s] samples) as
    splits_of() deals them out."""
    splits = len(sizes)
    reads = [splits_of(w, workers, splits, next_split) for w in range(max(workers, 1))]
    left = [sum(sizes[s] - starts[s] for s in r) for r in reads]
    if consumed > sum(left):
        raise ValueError(f"samples_seen={consumed} is more than this rank's epoch had left "
                         f"({sum(left)})")
    if len(reads) == 1:
        delivered, next_worker = [consumed], 0
    else:
        delivered, next_worker = worker_starts(left, batch_size, consumed, drop_last)
    starts = list(starts)
    for r, d in zip(reads, delivered):
        for s in r:
            take = min(d, sizes[s] - starts[s])
            starts[s] += take
            d -= take
    r = reads[next_worker]
    if r:  # the split that worker is in (its last one when it is done)
        next_split = next((s for s in r if starts[s] < sizes[s]), r[-1])
    return starts, next_split
