"""Data-stall timing: how long the training loop waited for each batch.

    loader = ferry.data.timed(torch.utils.data.DataLoader(ds, batch_size=64, num_workers=4))
    for epoch in range(epochs):
        for batch in loader:      # the wait inside `next()` is the data stall
            train_step(batch)     # the time until the next `next()` is the loop's own work

When GPUs sit idle, the first question is whether the loop is waiting for data. A StallMeter
answers it with two clocks: `wait` (time in the loader's `iter()` and `next()`, i.e. the training
loop blocked on data, worker start-up included) and `busy` (time from handing a batch out until
the loop asks for the next one: forward, backward, optimizer, logging).
`wait_fraction = wait / (wait + busy)` near 0 means the data keeps up; near 1 means the GPU
starves.

Design: one process-wide `StallStream` per name, fed by every meter of that name. A loop that
wraps a fresh loader in `timed()` each epoch (or re-creates its DataLoader) feeds the same
stream as one that wraps it once, so `ferry.track`'s window covers every batch since its last
sample whichever meter object saw it; a meter garbage-collected before the sample loses
nothing. Windows tile time: `window()` credits the part of a wait or a step still in progress
up to now and the rest to the next window, so a stall longer than the sampling interval shows
as wait_fraction 1.0 (and its length so far as wait_ms_max) instead of nothing. Time when no
loop of that name is iterating (between epochs: eval, checkpointing, set_epoch) is neither wait
nor busy: it is left out of wait_fraction and counted in batches_per_second, which is batches
over the window's wall time. The first batch of an epoch (a DataLoader starting its workers)
is a real stall and counts, as does the `next()` that ends the epoch (workers shutting down).

`ferry.track` reads `live_meters()` (the streams) every `data_interval` seconds and logs each
one's `window()` as `data/<name>/<stat>`. No torch import here: `ferry.track` reads the
streams without importing torch. Clock: `_now` (time.perf_counter; tests replace it).
"""
import threading
import time

__all__ = ["StallMeter", "StallStream", "timed", "live_meters"]

_now = time.perf_counter
_MAX_WINDOW_SAMPLES = 100_000  # waits kept per window for the percentile (bounded memory)
_STREAMS = {}                  # name -> StallStream, for the life of the process
_STREAMS_LOCK = threading.Lock()


class _Pass:
    """One iteration over a meter (an epoch): which clock runs and since when it is uncredited.
    A pass left early (`break`, an exception) gets `ended` without the stream's lock: a
    generator's finally may run inside the cyclic garbage collector, on a thread that holds
    that lock; the next window() or pass of the stream credits it and drops it."""
    __slots__ = ("phase", "since", "asked", "ended")

    def __init__(self, now):
        self.phase, self.since, self.asked, self.ended = "wait", now, now, None


class StallStream:
    """The process-wide statistics of every meter of one name (what `ferry.track` samples).
    Thread-safe: meters feed it from the training loop while `window()` is called from the
    tracker's thread."""

    def __init__(self, name):
        self.name = name
        self._lock = threading.Lock()
        self._passes = set()              # passes in progress (and left, not yet credited)
        self._win_start = None            # the last window(), or the first request for a batch
        self._win_wait = self._win_busy = 0.0
        self._win_waits = []
        self._win_batches = 0
        self._total_wait = self._total_busy = 0.0
        self._total_batches = 0

    # -- fed by StallMeter.__iter__ (the training loop's thread)

    def _begin(self):
        now = _now()
        p = _Pass(now)
        with self._lock:
            if self._win_start is None:
                self._win_start = now
            for left in [q for q in self._passes if q.ended is not None]:
                self._credit(left, now)  # left early, no window() since (no ferry.track run)
                self._passes.discard(left)
            self._passes.add(p)
        return p

    def _switch(self, p, now, waited=None):
        """Credits p's running clock up to `now` and starts the other one; `waited` (the whole
        wait for a batch that just arrived) counts the batch."""
        with self._lock:
            self._credit(p, now)
            p.phase = "busy" if p.phase == "wait" else "wait"
            p.asked = now
            if waited is not None:
                self._win_batches += 1
                self._total_batches += 1
                if len(self._win_waits) < _MAX_WINDOW_SAMPLES:
                    self._win_waits.append(waited)

    def _end(self, p, now):
        """The loader is exhausted: credits the last wait and drops the pass."""
        with self._lock:
            self._credit(p, now)
            p.ended = now
            self._passes.discard(p)

    def _credit(self, p, now):
        span = max(0.0, min(now, p.ended if p.ended is not None else now) - p.since)
        if p.phase == "wait":
            self._win_wait += span
            self._total_wait += span
        else:
            self._win_busy += span
            self._total_busy += span
        p.since = max(p.since, now)

    # -- read by ferry.track (any thread)

    def window(self, reset=True):
        """The statistics since the last window (or the first batch request), as metric values:
        wait_fraction (wait / (wait + busy), in-progress waits and steps credited up to now),
        batches_per_second (batches that arrived / the window's wall time, between-epoch time
        included), and over the batches that arrived in the window: wait_ms_mean,
        wait_ms_p95, wait_ms_max (each batch's whole wait). With no batch arriving but a loop
        waiting or working, only wait_fraction, batches_per_second 0 and wait_ms_max (the wait
        in progress so far, if any). None when no loop of this name ran in the window."""
        now = _now()
        with self._lock:
            if self._win_start is None:
                return None
            wait, busy = self._win_wait, self._win_busy
            longest = 0.0
            for p in list(self._passes):
                end = now if p.ended is None else min(now, p.ended)
                span = max(0.0, end - p.since)
                if p.phase == "wait":
                    wait += span
                    longest = max(longest, end - p.asked)  # the batch's wait so far
                else:
                    busy += span
                if reset:
                    self._credit(p, now)
                    if p.ended is not None:
                        self._passes.discard(p)
            batches, waits, elapsed = self._win_batches, self._win_waits, now - self._win_start
            if reset:
                self._win_start = now
                self._win_wait = self._win_busy = 0.0
                self._win_waits = []
                self._win_batches = 0
        if batches == 0 and wait + busy <= 0:
            return None
        out = {"wait_fraction": wait / (wait + busy) if wait + busy > 0 else 0.0,
               "batches_per_second": batches / elapsed if elapsed > 0 else 0.0}
        if batches:
            waits = sorted(waits)
            out["wait_ms_mean"] = 1000.0 * sum(waits) / len(waits)
            out["wait_ms_p95"] = 1000.0 * waits[min(len(waits) - 1, int(0.95 * len(waits)))]
            out["wait_ms_max"] = 1000.0 * max(waits[-1], longest)
        elif longest > 0:
            out["wait_ms_max"] = 1000.0 * longest
        return out

    def totals(self):
        """Since the first meter of this name: {"batches", "wait_s", "busy_s",
        "wait_fraction"}, credited up to the last window or batch."""
        with self._lock:
            wait, busy, n = self._total_wait, self._total_busy, self._total_batches
        return {"batches": n, "wait_s": wait, "busy_s": busy,
                "wait_fraction": wait / (wait + busy) if wait + busy > 0 else 0.0}


def stream(name):
    """The StallStream of `name`, made on first use."""
    with _STREAMS_LOCK:
        s = _STREAMS.get(name)
        if s is None:
            s = _STREAMS[name] = StallStream(name)
        return s


class StallMeter:
    """Wraps an iterable of batches (a DataLoader, a ShardDataset, any iterable) and times the
    training loop's wait for each batch into the stream of its name. Iterating it iterates the
    wrapped object (again each time: one meter for all epochs, or a new one per epoch, give the
    same statistics); `len()`, and attributes it does not define, pass through. `totals()` is
    this meter's own; `window()` is its stream's (all meters of the name)."""

    def __init__(self, iterable, name="train"):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"ferry.data.timed: name must be a non-empty string without '/', "
                             f"not {name!r}")
        self.iterable = iterable
        self.name = name
        self.stream = stream(name)
        self._lock = threading.Lock()
        self._total_wait = self._total_busy = 0.0
        self._total_batches = 0

    def __iter__(self):
        s = self.stream
        p = s._begin()
        asked = p.since
        try:
            it = iter(self.iterable)  # a DataLoader starts its workers here: part of the wait
            while True:
                try:
                    batch = next(it)
                except StopIteration:
                    end = _now()
                    s._end(p, end)
                    self._add(end - asked, 0.0, 0)
                    return
                got = _now()
                s._switch(p, got, waited=got - asked)
                self._add(got - asked, 0.0, 1)
                yield batch
                asked = _now()
                s._switch(p, asked)
                self._add(0.0, asked - got, 0)
        finally:
            if p.ended is None:
                p.ended = _now()  # left early; no lock here (see _Pass)

    def _add(self, wait, busy, batches):
        with self._lock:
            self._total_wait += wait
            self._total_busy += busy
            self._total_batches += batches

    def __len__(self):
        return len(self.iterable)

    def __getattr__(self, attr):
        # Only called for attributes StallMeter lacks: the loader's dataset, batch_size, ...
        if attr in ("iterable", "stream"):
            raise AttributeError(attr)
        return getattr(self.iterable, attr)

    def window(self, reset=True):
        """The window of this meter's stream (every meter of this name): StallStream.window."""
        return self.stream.window(reset)

    def totals(self):
        """This meter's own, since it was made: {"batches", "wait_s", "busy_s",
        "wait_fraction"}."""
        with self._lock:
            wait, busy, n = self._total_wait, self._total_busy, self._total_batches
        return {"batches": n, "wait_s": wait, "busy_s": busy,
                "wait_fraction": wait / (wait + busy) if wait + busy > 0 else 0.0}


def timed(iterable, name="train"):
    """`StallMeter(iterable, name)`: iterate the result instead of the loader."""
    return StallMeter(iterable, name)


def live_meters():
    """One StallStream per name used in this process (what `ferry.track` reports): each has
    `.name` and `.window()`. A stream outlives its meters, so no batch is lost between epochs."""
    with _STREAMS_LOCK:
        return list(_STREAMS.values())
