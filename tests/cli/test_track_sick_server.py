"""`ferry.track` under a sick server (issue 33): down, hung, slow and refusing stand-ins in
front of a real `ferry serve` (sick_server.py), kill -9 of training at random moments, a full
spool disk. What must hold: init never waits on the server, points reach the spool within
SPOOL_INTERVAL whatever the server does, nothing acknowledged to the caller is dropped silently,
and finish returns within its timeout."""
import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import warnings

import pytest

from serve_helpers import ServeProcess
from sick_server import SickServer

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import ferry.track as track  # noqa: E402

API = "/api/2.0/mlflow/"


def call(url, endpoint, body=None, **query):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{url}{API}{endpoint}?{urllib.parse.urlencode(query)}", data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def steps(url, run_id, key="x"):
    out, token = [], None
    while True:
        q = {"run_id": run_id, "metric_key": key, "max_results": 25000}
        if token:
            q["page_token"] = token
        page = call(url, "metrics/get-history", **q)
        out += [int(m["step"]) for m in page.get("metrics", [])]
        token = page.get("next_page_token")
        if not token:
            return out


def runs_of(url, project):
    exp = call(url, "experiments/get-by-name", experiment_name=project)["experiment"]["experiment_id"]
    return call(url, "runs/search", {"experiment_ids": [exp], "max_results": 100})["runs"]


@pytest.fixture(scope="module")
def server(ferry_bin, tmp_path_factory):
    data = tmp_path_factory.mktemp("sick") / "data"
    data.mkdir()
    s = ServeProcess(ferry_bin, data)
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _no_tracking_env(no_tracking_env):
    """No tracking server, run or token from the caller's environment (conftest.py)."""


@pytest.mark.parametrize("mode", ["refuse", "hang", "slow"])
def test_init_never_waits_on_the_server_and_the_run_arrives_whole(server, tmp_path, mode):
    sick = SickServer(server.url.split("://")[1], mode=mode, delay=2.0)
    project = f"sick-init-{mode}"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.monotonic()
            run = track.init(project=project, url=sick.url, config={"lr": 0.1},
                             spool_dir=tmp_path / "spool")
            started = time.monotonic() - t0
            assert run.run_id is None            # not created yet: it is created later
            assert any("creating the run when the server answers" in str(w.message)
                       for w in caught), [str(w.message) for w in caught]
            for step in range(2000):
                run.log({"x": step}, step=step)
            if mode == "slow":
                sick.set("slow")                 # every request 2 s late: the sender catches up
                t0 = time.monotonic()
                run.finish(timeout=60)
                assert run.run_id is not None
            else:
                t0 = time.monotonic()
                run.finish(timeout=2)
                ended = time.monotonic() - t0
                # Bounded by the timeout, whatever the server does (2 s + one spooler round).
                assert ended < 10, ended
                assert any("python -m ferry.track sync" in str(w.message) for w in caught)
                sick.set("forward")
                assert len(track.sync(tmp_path / "spool", sick.url)) == 1
        # A bound, not a speed: the report was 28 s then an exception.
        assert started < 5, started
        (only,) = runs_of(server.url, project)   # one run, never two
        run_id = only["info"]["run_id"]
        assert sorted(steps(server.url, run_id)) == list(range(2000))
        assert only["info"]["status"] == "FINISHED"
        assert {p["key"]: p["value"] for p in only["data"]["params"]} == {"lr": "0.1"}
        assert not (tmp_path / "spool").exists()
    finally:
        sick.stop()


TRAIN = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import ferry.track as track
run = track.init(project=sys.argv[3], url=sys.argv[2], spool_dir=sys.argv[4])
i = 0
while True:
    run.log({"x": i}, step=i)
    if i % 20 == 0:
        print(i, time.monotonic(), flush=True)
    i += 1
    time.sleep(0.0005)
"""


@pytest.mark.parametrize("mode", ["hang", "refuse", "forward"])
def test_kill_9_of_training_loses_at_most_the_last_half_second(server, tmp_path, mode):
    """Two kills at random moments: every point logged more than 0.5 s before the kill is in
    the spool (SPOOL_INTERVAL is 0.2 s), and sync delivers each exactly once."""
    sick = SickServer(server.url.split("://")[1], mode="forward")
    try:
        for trial in range(2):
            project = f"sick-kill-{mode}-{trial}"
            spool = tmp_path / f"spool-{trial}"
            sick.set("forward")
            p = subprocess.Popen([sys.executable, "-c", TRAIN, str(ROOT / "python"), sick.url,
                                  project, str(spool)], stdout=subprocess.PIPE, text=True,
                                 stderr=subprocess.DEVNULL)
            first = p.stdout.readline()          # the run exists, logging has begun
            assert first, "the training script did not start"
            sick.set(mode)                       # then the server falls sick
            kill_at = time.monotonic() + random.uniform(1.0, 2.5)
            printed = []
            while time.monotonic() < kill_at:
                line = p.stdout.readline()
                step, at = line.split()
                printed.append((int(step), float(at)))
            p.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            p.wait()
            safe = max(s for s, at in printed if at <= killed - 0.5)
            sick.set("forward")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                (run_id,) = track.sync(spool, sick.url)
            got = steps(server.url, run_id)
            assert len(got) == len(set(got)), "a point arrived twice"
            missing = set(range(safe + 1)) - set(got)
            assert not missing, (mode, trial, safe, sorted(missing)[:10])
            print(f"{mode} trial {trial}: logged >= {printed[-1][0] + 1}, kept {len(got)}, "
                  f"lost {printed[-1][0] + 1 - len(got)} (at most {printed[-1][0] - safe} allowed)")
    finally:
        sick.stop()


@pytest.fixture
def tiny_disk(tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_spool_disk_is_said_at_once_and_no_point_is_lost(server, tiny_disk):
    project = "sick-full-disk"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = track.init(project=project, url=server.url, spool_dir=tiny_disk / "spool")
        # Fill the disk first, as another process would.
        filler = tiny_disk / "filler"
        try:
            with open(filler, "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
        t0 = time.monotonic()
        for step in range(6000):
            run.log({"x": step}, step=step)
        while run.spool_error is None and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        assert run.spool_error and "No space left" in run.spool_error
        said = [str(w.message) for w in caught if "cannot write the spool" in str(w.message)]
        assert said and "held in memory" in said[0], [str(w.message) for w in caught]
        run.finish(timeout=60)
    (only,) = runs_of(server.url, project)
    assert sorted(steps(server.url, only["info"]["run_id"])) == list(range(6000))
    assert only["info"]["status"] == "FINISHED"
    tags = {t["key"]: t["value"] for t in only["data"]["tags"]}
    assert "No space left" in tags["ferry.track.spool_error"]
    assert "ferry.track.dropped_points" not in tags
    assert run.dropped_points == 0
    left = [p.name for p in (tiny_disk / "spool").iterdir()] if (tiny_disk / "spool").exists() else []
    assert not [n for n in left if n.endswith(".tmp")], left


SYSTEM = r"""
import json, os, sys, time, warnings
import ferry.track as track
warnings.simplefilter("error")          # no warning: the native sampler is there
run = track.init(project="system", url=sys.argv[1], system_interval=0.3)
for step in range(20):
    run.log({"loss": 1 / (step + 1)})
    time.sleep(0.05)
time.sleep(0.8)
run.finish()
os.environ["MLFLOW_RUN_ID"] = run.run_id   # attached: the owner logs them, not this client
attached = track.init(project="system", url=sys.argv[1], system_interval=0.3)
attached.log({"later": 1.0})
time.sleep(0.8)
attached.finish()
print(run.run_id)
"""


def test_system_metrics_are_logged_by_the_same_sampler_as_ferry_run(server, python):
    """ferry.track logs system/... through ferry._native.SystemSampler (src/sysmetrics, the code
    of `ferry run --track`) at step = seconds since the start; not when attached."""
    run_id = python(SYSTEM.replace("sys.argv[1]", repr(server.url))).stdout.split()[-1]
    run = call(server.url, "runs/get", run_id=run_id)["run"]
    keys = {m["key"] for m in run["data"]["metrics"]}
    for key in ("system/cpu_utilization_percentage", "system/system_memory_usage_megabytes",
                "system/disk_usage_percentage", "system/network_receive_megabytes"):
        assert key in keys, sorted(keys)
    memory = call(server.url, "metrics/get-history", run_id=run_id,
                  metric_key="system/system_memory_usage_megabytes")["metrics"]
    assert len(memory) >= 3 and all(m["value"] > 0 for m in memory)
    assert [int(m["step"]) for m in memory] == sorted({int(m["step"]) for m in memory})
    assert int(memory[-1]["step"]) <= 10       # seconds since the start, not a counter
    # The attached client logged its point and no system sample of its own.
    assert len(call(server.url, "metrics/get-history", run_id=run_id,
                    metric_key="system/system_memory_usage_megabytes")["metrics"]) == len(memory)


def test_background_log_artifact_returns_at_once_and_finish_waits_for_it(server, tmp_path):
    """log_artifact(background=True) behind a server 2 s slow per request: training goes on at
    once, finish waits, the bytes arrive verified and the local file goes only after that."""
    sick = SickServer(server.url.split("://")[1], mode="forward", delay=2.0)
    try:
        run = track.init(project="sick-background", url=sick.url, spool_dir=tmp_path / "spool",
                         system_interval=0)
        ckpt = tmp_path / "ckpt.bin"
        data = os.urandom(8 << 20)
        ckpt.write_bytes(data)
        sick.set("slow")
        t0 = time.monotonic()
        remote = run.log_artifact(ckpt, name="model/ckpt.bin", delete_local=True, timeout=30,
                                  background=True)
        assert time.monotonic() - t0 < 1.0          # did not wait for the 2 s-slow server
        assert remote.endswith("/model/ckpt.bin") and ckpt.exists()
        run.log({"x": 1.0})
        run.finish(timeout=60)
        assert not ckpt.exists()                    # deleted after the verified upload
        url = f"{server.url}/api/2.0/mlflow-artifacts/artifacts/{urllib.parse.quote(remote)}"
        with urllib.request.urlopen(url, timeout=30) as r:
            assert r.read() == data
    finally:
        sick.stop()
