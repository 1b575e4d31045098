"""Data stalls made visible: `ferry.data.timed` around a real torch DataLoader (worker
processes included) measures how long the training loop waited for each batch, and
`ferry.track` logs it to a real `ferry serve` beside the run's own metrics, so "slow because of
data" is a chart. A loader slower than the loop shows a high wait fraction, a fast one a low
one; the meter passes len() and the loader's attributes through."""
import json
import pathlib
import urllib.parse
import urllib.request

import pytest

from serve_helpers import ServeProcess

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
    import subprocess
    root = pathlib.Path(__file__).resolve().parents[2]
    code = ("import sys; import ferry.track; import ferry._stall; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(root / "python"), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
