"""Data stalls made visible: `ferry.data.timed` around a real torch DataLoader (worker
processes included) measures how long the training loop waited for each batch, and
`ferry.track` logs it to a real `ferry serve` beside the run's own metrics, so "slow because of
data" is a chart. A loader slower than the loop shows a high wait fraction, a fast one a low
one; the meter passes len() and the loader's attributes through.

Ground truth (issue 33, part 2): loaders slow by a known amount, a new meter (and a new
DataLoader with worker processes) every epoch, logged by a real `ferry.track` to a real
`ferry serve`: each logged window matches what the loop really did in that window (its wait
fraction within 0.1, its batches/s within 25 % or one batch), and the windows together hold
every batch. The window arithmetic itself (epoch gaps, stalls longer than a window, meters
dropped before a sample) is checked exactly with a fake clock."""
import json
import pathlib
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest

from conftest import python_env
from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import ferry._stall as stall  # noqa: E402  (no torch: the window arithmetic runs in-process)

API = "/api/2.0/mlflow/"


def get(url, endpoint, **query):
    with urllib.request.urlopen(f"{url}{API}{endpoint}?{urllib.parse.urlencode(query)}",
                                timeout=30) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def server(ferry_bin, tmp_path_factory):
    data = tmp_path_factory.mktemp("stalls") / "data"
    data.mkdir()
    s = ServeProcess(ferry_bin, data)
    yield s
    s.stop()


SCRIPT = r"""
import json, sys, time, torch
import ferry.data, ferry.track

class Slow(torch.utils.data.IterableDataset):
    # Each sample costs `delay` seconds in the worker (a slow NAS, a heavy decode).
    def __init__(self, n, delay):
        self.n, self.delay = n, delay
    def __len__(self):
        return self.n
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        workers, wid = (info.num_workers, info.id) if info else (1, 0)
        for i in range(wid, self.n, workers):
            time.sleep(self.delay)
            yield torch.tensor([i], dtype=torch.float32)

run = ferry.track.init(project="stalls", name=sys.argv[1], data_interval=0.5)
slow = torch.utils.data.DataLoader(Slow(48, 0.04), batch_size=4, num_workers=2)
starved = ferry.data.timed(slow, name="starved")
assert len(starved) == len(slow) and starved.batch_size == 4
for step, batch in enumerate(starved):
    time.sleep(0.002)                      # the "GPU" step is short: the loop waits for data
    run.log({"loss": 1.0 / (step + 1)}, step=step)

fast = ferry.data.timed([torch.zeros(4)] * 40, name="fed")
for step, batch in enumerate(fast, start=100):
    time.sleep(0.02)                       # the loop is the bottleneck: no data wait
    run.log({"loss": 0.01}, step=step)
run.finish()
print(json.dumps({"run_id": run.run_id, "starved": starved.totals(), "fed": fast.totals()}))
"""


def test_timed_loader_logs_wait_fraction_beside_the_runs_metrics(server, python):
    p = python(SCRIPT.replace("sys.argv[1]", repr("starved-run")), MLFLOW_TRACKING_URI=server.url)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["starved"]["batches"] == 12 and out["fed"]["batches"] == 40
    assert out["starved"]["wait_fraction"] > 0.6, out
    assert out["fed"]["wait_fraction"] < 0.2, out

    run = get(server.url, "runs/get", run_id=out["run_id"])["run"]
    keys = {m["key"] for m in run["data"]["metrics"]}
    for name in ("starved", "fed"):
        for stat in ("wait_fraction", "wait_ms_mean", "wait_ms_p95", "wait_ms_max",
                     "batches_per_second"):
            assert f"data/{name}/{stat}" in keys, (name, stat, sorted(keys))
    starved = get(server.url, "metrics/get-history", run_id=out["run_id"],
                  metric_key="data/starved/wait_fraction")["metrics"]
    fed = get(server.url, "metrics/get-history", run_id=out["run_id"],
              metric_key="data/fed/wait_fraction")["metrics"]
    assert max(m["value"] for m in starved) > 0.6
    assert min(m["value"] for m in fed) < 0.2
    # Logged at the training step it was measured at, beside the run's own metric.
    assert all(0 <= int(m["step"]) <= 139 for m in starved + fed)
    assert "loss" in keys


def test_bad_name_and_interval_are_one_line_errors(python):
    p = python("import ferry.data\nferry.data.timed([], name='a/b')\n", check=False)
    assert p.returncode != 0 and "name must be a non-empty string without '/'" in p.stderr
    p = python("import ferry.track\nferry.track.init('x', url='http://127.0.0.1:9', "
               "data_interval=-1)\n", check=False)
    assert p.returncode != 0 and "data_interval must be seconds >= 0" in p.stderr


def test_doc_snippet_module_is_importable_without_torch(tmp_path):
    """ferry.track reads the meters through ferry._stall, which never imports torch."""
    root = pathlib.Path(__file__).resolve().parents[2]
    code = ("import sys; import ferry.track; import ferry._stall; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(root / "python"), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr


# ------------------------------------------------------------ the window arithmetic, exactly

class FakeClock:
    """Replaces ferry._stall's clock: loaders and loop bodies advance it by known amounts."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t

    def loader(self, batches, produce):
        """An iterable whose every batch takes `produce` seconds to make (and 0 to start)."""
        clock = self

        class Loader:
            def __len__(self):
                return batches

            def __iter__(self):
                for i in range(batches):
                    clock.t += produce
                    yield i
        return Loader()


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(stall, "_now", c)
    return c


def close(window, **expected):
    assert window is not None
    assert set(window) == set(expected), window
    for k, v in expected.items():
        assert window[k] == pytest.approx(v, abs=1e-9), (k, window)


def test_a_window_covers_every_meter_of_its_name_and_leaves_the_epoch_gap_out(clock):
    """Two epochs, each with a new meter that is dropped at the epoch's end, 1 s of eval
    between them, one sample at the end: the window holds all 8 batches; the gap counts in
    batches/s (wall time) but not in wait_fraction."""
    for epoch in range(2):
        for _ in stall.timed(clock.loader(4, produce=0.1), name="unit-gap"):
            clock.t += 0.3                      # the step: 0.3 s of work per batch
        clock.t += 1.0                          # eval, checkpoint: no loop of this name runs
    streams = [s for s in stall.live_meters() if s.name == "unit-gap"]
    assert len(streams) == 1
    # 8 batches, 0.8 s wait, 2.4 s work, 2 s of gaps: 5.2 s of wall time.
    close(streams[0].window(), wait_fraction=0.8 / 3.2, batches_per_second=8 / 5.2,
          wait_ms_mean=100.0, wait_ms_p95=100.0, wait_ms_max=100.0)
    assert streams[0].window() is None          # nothing ran since: nothing to log


def test_a_stall_longer_than_the_window_shows_while_it_lasts(clock):
    """A batch that takes 3 s (workers starting, a cold NAS): a sample 2 s into the wait shows
    wait 1.0, 0 batches/s and the wait so far; the next one the rest of it and the batch with
    its whole wait."""
    s = stall.stream("unit-stall")
    inside = []

    class Stalled:
        def __iter__(self):
            clock.t += 2.0
            yield "late"
            clock.t += 2.0
            inside.append(s.window())           # ferry.track's thread samples mid-wait
            clock.t += 1.0
            yield "later"

    it = iter(stall.timed(Stalled(), name="unit-stall"))
    assert s.window() is None                   # not iterated yet: no window started
    assert next(it) == "late"
    clock.t += 1.0                              # the step
    close(s.window(), wait_fraction=2.0 / 3.0, batches_per_second=1 / 3.0,
          wait_ms_mean=2000.0, wait_ms_p95=2000.0, wait_ms_max=2000.0)
    assert next(it) == "later"
    close(inside[0], wait_fraction=1.0, batches_per_second=0.0, wait_ms_max=2000.0)
    clock.t += 1.0
    close(s.window(), wait_fraction=0.5, batches_per_second=0.5,
          wait_ms_mean=3000.0, wait_ms_p95=3000.0, wait_ms_max=3000.0)


def test_a_loop_left_early_or_a_dropped_meter_loses_nothing(clock):
    """`break` after 2 batches, the meter dropped before any sample; then a peek (reset=False)
    changes nothing, and the totals of the stream and of a meter agree."""
    meter = stall.timed(clock.loader(10, produce=0.2), name="unit-break")
    for i, _ in enumerate(meter):
        clock.t += 0.2
        if i == 1:
            break                               # the generator closes here: 2 batches, 2 steps
    totals = meter.totals()
    assert totals["batches"] == 2 and totals["wait_s"] == pytest.approx(0.4)
    assert totals["busy_s"] == pytest.approx(0.2)   # the 2nd step ends at the break, uncounted
    del meter
    clock.t += 10.0                             # long after: nothing runs, nothing accrues
    s = stall.stream("unit-break")
    peek = s.window(reset=False)
    close(peek, wait_fraction=0.4 / 0.8, batches_per_second=2 / 10.8,
          wait_ms_mean=200.0, wait_ms_p95=200.0, wait_ms_max=200.0)
    assert s.window() == peek
    assert s.window() is None
    assert s.totals()["batches"] == 2


def test_each_batch_counts_in_the_window_it_arrives_in(clock):
    """Samples between batches split the time exactly: every window of 1 s of a loop that waits
    0.25 s and works 0.25 s per batch says 0.5 and 2 batches/s, across 3 meters."""
    s = stall.stream("unit-steady")
    windows = []
    for epoch in range(3):
        for i, _ in enumerate(stall.timed(clock.loader(4, produce=0.25), name="unit-steady")):
            clock.t += 0.25
            if i % 2 == 1:
                windows.append(s.window())
    assert len(windows) == 6
    for w in windows:
        close(w, wait_fraction=0.5, batches_per_second=2.0, wait_ms_mean=250.0,
              wait_ms_p95=250.0, wait_ms_max=250.0)


# ------------------------------------------------- ground truth through ferry.track and serve

TRUTH = r"""
import json, sys, time, torch
import ferry.data, ferry.track

EPOCHS = 4
wall0, perf0 = time.time(), time.perf_counter()
def wall():
    return wall0 + time.perf_counter() - perf0

class InLoop:
    # Each batch takes 20 ms to make in the training process (decoding in the loop).
    def __iter__(self):
        for i in range(25):
            time.sleep(0.020)
            yield i

class InWorkers(torch.utils.data.IterableDataset):
    # Each batch takes 40 ms in a worker; 2 workers make one every 20 ms.
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        for i in range(info.id, 40, info.num_workers):
            time.sleep(0.040)
            yield torch.tensor([i])

run = ferry.track.init(project="stall-truth", name="truth", data_interval=0.5)
events, step = {}, 0
for name, work in (("inloop", 0.020), ("workers", 0.010)):
    loops, works = events.setdefault(name, ([], []))
    for epoch in range(EPOCHS):
        source = InLoop() if name == "inloop" else torch.utils.data.DataLoader(
            InWorkers(), batch_size=None, num_workers=2)      # new workers every epoch
        t0 = wall()
        for batch in ferry.data.timed(source, name=name):     # a new meter every epoch
            w0 = wall()
            time.sleep(work)                                  # the training step
            works.append((w0, wall()))
            step += 1
            run.log({"loss": 1.0 / step}, step=step)
        loops.append((t0, wall()))
        if epoch < EPOCHS - 1:
            time.sleep(0.05)                                  # eval, checkpoint
run.finish()
print(json.dumps({"run_id": run.run_id, "events": events}))
"""


def overlap(intervals, a, b):
    return sum(max(0.0, min(end, b) - max(start, a)) for start, end in intervals)


@pytest.mark.parametrize("name", ["inloop", "workers"])
def test_logged_windows_match_the_loops_ground_truth(server, truth_run, name):
    out = truth_run
    loops, works = out["events"][name]
    batches = len(works)
    assert batches == (100 if name == "inloop" else 160)
    loop_s = sum(e - s for s, e in loops)
    work_s = sum(e - s for s, e in works)
    if name == "inloop":   # the design: wait 20 ms and work 20 ms per batch, 25 batches/s
        assert (loop_s - work_s) / loop_s == pytest.approx(0.5, abs=0.1)
        assert batches / loop_s == pytest.approx(25, rel=0.25)

    def history(stat):
        points = get(server.url, "metrics/get-history", run_id=out["run_id"],
                     metric_key=f"data/{name}/{stat}")["metrics"]
        return sorted(points, key=lambda m: m["timestamp"])
    fractions, rates = history("wait_fraction"), history("batches_per_second")
    assert len(fractions) >= 3 and [m["timestamp"] for m in fractions] == \
        [m["timestamp"] for m in rates], (fractions, rates)
    start, counted, report = loops[0][0], 0.0, []
    for f, r in zip(fractions, rates):
        # The window ended when the point was logged and began at the one before (the first
        # at the first request for a batch).
        end = f["timestamp"] / 1000.0
        in_loop = overlap(loops, start, end)
        true_wait = (in_loop - overlap(works, start, end)) / max(in_loop, 1e-9)
        arrived = sum(1 for s, _ in works if start < s <= end)
        true_rate = arrived / (end - start)
        report.append((round(end - loops[0][0], 3), round(true_wait, 3), round(f["value"], 3),
                       round(true_rate, 1), round(r["value"], 1)))
        if in_loop >= 0.1:   # a window with a few ms in the loop (an epoch's tail) is all edge
            assert f["value"] == pytest.approx(true_wait, abs=0.1), report
        assert abs(r["value"] - true_rate) <= 0.25 * true_rate + 1.0 / (end - start), report
        counted += r["value"] * (end - start)
        start = end
    assert counted == pytest.approx(batches, abs=1.0), report   # no batch lost between windows
    print(name, "window end s, true wait, logged wait, true batches/s, logged:", report)


@pytest.fixture(scope="module")
def truth_run(server, rgw, tmp_path_factory):
    """One process, one ferry.track run: the in-loop scenario, then the worker one."""
    script = tmp_path_factory.mktemp("truth") / "truth.py"
    script.write_text(TRUTH)
    p = subprocess.run(["/usr/bin/python3", str(script)], capture_output=True, text=True,
                       timeout=300, env=python_env(rgw, MLFLOW_TRACKING_URI=server.url))
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])
