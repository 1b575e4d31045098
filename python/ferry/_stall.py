"""Data-stall timing: how long the training loop waited for each batch.

    loader = ferry.data.timed(torch.utils.data.DataLoader(ds, batch_size=64, num_workers=4))
    for batch in loader:          # the wait inside `next()` is the data stall
        train_step(batch)         # the time until the next `next()` is the loop's own work

When GPUs sit idle, the first question is whether the loop is waiting for data. A StallMeter
answers it with two clocks per batch: `wait` (time spent in the loader's `next()`, i.e. the
training loop blocked on data) and `busy` (time from handing a batch out until the loop asks
for the next one: forward, backward, optimizer, logging). `wait_fraction = wait / (wait + busy)`
near 0 means the data keeps up; near 1 means the GPU starves.

Meters register themselves (weakly) so `ferry.track` logs every live meter's window every
`data_interval` seconds as metrics `data/<name>/wait_fraction`, `wait_ms_mean`, `wait_ms_p95`,
`wait_ms_max` and `batches_per_second`, beside the system and GPU metrics. No torch import here:
`ferry.track` reads the meters without importing torch.
"""
import threading
import time
import weakref

__all__ = ["StallMeter", "timed", "live_meters"]

_LIVE = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()
_MAX_WINDOW_SAMPLES = 100_000  # waits kept per window for the percentile (bounded memory)


class StallMeter:
    """Wraps an iterable of batches (a DataLoader, a ShardDataset, any iterable) and times the
    training loop's wait for each batch. Iterating it iterates the wrapped object; `len()`,
    and attributes it does not define, pass through. Thread-safe reads: `window()` (and
    `totals()`) may be called from another thread while the loop runs."""

    def __init__(self, iterable, name="train"):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"ferry.data.timed: name must be a non-empty string without '/', "
                             f"not {name!r}")
        self.iterable = iterable
        self.name = name
        self._lock = threading.Lock()
        self._reset_window(time.perf_counter())
        self._total_wait = 0.0
        self._total_busy = 0.0
        self._total_batches = 0
        with _LIVE_LOCK:
            _LIVE.add(self)

    def _reset_window(self, now):
        self._win_start = now
        self._win_wait = 0.0
        self._win_busy = 0.0
        self._win_waits = []
        self._win_batches = 0

    def __iter__(self):
        it = iter(self.iterable)
        handed_out = None
        while True:
            start = time.perf_counter()
            try:
                batch = next(it)
            except StopIteration:
                return
            end = time.perf_counter()
            self._record(end - start, 0.0 if handed_out is None else start - handed_out)
            handed_out = time.perf_counter()
            yield batch

    def _record(self, wait, busy):
        with self._lock:
            self._win_wait += wait
            self._win_busy += busy
            self._win_batches += 1
            if len(self._win_waits) < _MAX_WINDOW_SAMPLES:
                self._win_waits.append(wait)
            self._total_wait += wait
            self._total_busy += busy
            self._total_batches += 1

    def __len__(self):
        return len(self.iterable)

    def __getattr__(self, attr):
        # Only called for attributes StallMeter lacks: the loader's dataset, batch_size, ...
        if attr == "iterable":
            raise AttributeError(attr)
        return getattr(self.iterable, attr)

    def window(self, reset=True):
        """The statistics since the last reset, as metric values; None when no batch came in
        the window (nothing to report)."""
        now = time.perf_counter()
        with self._lock:
            batches, wait, busy, waits = (self._win_batches, self._win_wait, self._win_busy,
                                          self._win_waits)
            elapsed = now - self._win_start
            if reset:
                self._reset_window(now)
        if batches == 0:
            return None
        waits = sorted(waits)
        p95 = waits[min(len(waits) - 1, int(0.95 * len(waits)))]
        return {
            "wait_fraction": wait / (wait + busy) if wait + busy > 0 else 0.0,
            "wait_ms_mean": 1000.0 * wait / batches,
            "wait_ms_p95": 1000.0 * p95,
            "wait_ms_max": 1000.0 * waits[-1],
            "batches_per_second": batches / elapsed if elapsed > 0 else 0.0,
        }

    def totals(self):
        """Since the meter was made: {"batches", "wait_s", "busy_s", "wait_fraction"}."""
        with self._lock:
            wait, busy, n = self._total_wait, self._total_busy, self._total_batches
        return {"batches": n, "wait_s": wait, "busy_s": busy,
                "wait_fraction": wait / (wait + busy) if wait + busy > 0 else 0.0}


def timed(iterable, name="train"):
    """`StallMeter(iterable, name)`: iterate the result instead of the loader."""
    return StallMeter(iterable, name)


def live_meters():
    """The meters still referenced somewhere (what `ferry.track` reports)."""
    with _LIVE_LOCK:
        return list(_LIVE)
