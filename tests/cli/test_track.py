"""`ferry.track` (python/ferry/track.py), the W&B-like client, against a real `ferry serve`:
exact histories, params from a nested config, steps going back, kill -9 and restart of the
server mid-run, offline spool + sync, artifacts with delete_local, finish."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import warnings

import pytest

from serve_helpers import ServeProcess, wait_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import ferry.track as track  # noqa: E402

API = "/api/2.0/mlflow/"


def get(url, endpoint, **query):
    with urllib.request.urlopen(f"{url}{API}{endpoint}?{urllib.parse.urlencode(query)}",
                                timeout=30) as r:
        return json.load(r)


def history(url, run_id, key):
    return [(m["value"], int(m["step"])) for m in
            get(url, "metrics/get-history", run_id=run_id, metric_key=key)["metrics"]]


def serve(ferry_bin, data, listen="127.0.0.1:0"):
    pathlib.Path(data).mkdir(parents=True, exist_ok=True)
    return ServeProcess(ferry_bin, data, listen=listen)


@pytest.fixture(scope="module")
def server(ferry_bin, tmp_path_factory):
    s = serve(ferry_bin, tmp_path_factory.mktemp("track") / "data")
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _no_tracking_env(no_tracking_env):
    """No tracking server, run or token from the caller's environment (conftest.py)."""


def test_20000_points_over_10_keys_read_back_exactly_with_params_summary_and_status(server, tmp_path):
    config = {"lr": 0.1, "optim": {"name": "adamw", "betas": {"b1": 0.9}}, "layers": 12}
    run = track.init(project="exact", name="r1", config=config, url=server.url,
                     spool_dir=tmp_path / "spool")
    t0 = time.monotonic()
    for step in range(2000):
        run.log({f"m{k}": step * 10 + k + 0.25 for k in range(5)} |
                {"nested": {f"m{k}": -step - k / 3 for k in range(5, 10)}})
    assert time.monotonic() - t0 < 5, "run.log must not wait for the network"
    run.finish()
    body = get(server.url, "runs/get", run_id=run.run_id)["run"]
    assert body["info"]["status"] == "FINISHED" and body["info"]["run_name"] == "r1"
    assert int(body["info"]["end_time"]) >= int(body["info"]["start_time"])
    params = {p["key"]: p["value"] for p in body["data"]["params"]}
    assert params == {"lr": "0.1", "optim.name": "adamw", "optim.betas.b1": "0.9", "layers": "12"}
    for k in range(5):
        assert history(server.url, run.run_id, f"m{k}") == [(s * 10 + k + 0.25, s) for s in range(2000)]
    for k in range(5, 10):
        assert history(server.url, run.run_id, f"nested.m{k}") == [(-s - k / 3, s) for s in range(2000)]
    tags = {t["key"]: t["value"] for t in body["data"]["tags"]}
    assert float(tags["summary.m3"]) == run.summary["m3"] == 1999 * 10 + 3.25
    assert tags["ferry.exit_code"] == "0" and tags["ferry.host"] == socket.gethostname()
    assert tags["mlflow.user"] == body["info"]["user_id"] != ""
    assert not (tmp_path / "spool").exists(), "an acknowledged spool is removed"
    exp = get(server.url, "experiments/get-by-name", experiment_name="exact")["experiment"]
    assert body["info"]["experiment_id"] == exp["experiment_id"]


def test_lower_step_is_warned_once_per_key_and_ignored_non_numbers_rejected(server, tmp_path):
    with track.init(project="steps", url=server.url, spool_dir=tmp_path / "s") as run:
        run.log({"loss": 1.0, "acc": 0.5}, step=10)
        with pytest.warns(UserWarning, match="step 5 for 'loss' is lower than its last step 10"):
            run.log({"loss": 2.0}, step=5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            run.log({"loss": 3.0}, step=4)          # the same key again: no second warning
        run.log({"loss": 4.0})                      # auto step: 11
        with pytest.raises(TypeError, match="'name' is str"):
            run.log({"name": "abc"})
    assert history(server.url, run.run_id, "loss") == [(1.0, 10), (4.0, 11)]
    assert history(server.url, run.run_id, "acc") == [(0.5, 10)]
    assert run.summary == {"loss": 4.0, "acc": 0.5}


def test_kill_9_and_restart_on_the_same_port_loses_and_duplicates_nothing(ferry_bin, tmp_path):
    data = tmp_path / "data"
    first = serve(ferry_bin, data)
    port = first.url.rsplit(":", 1)[1]
    run = track.init(project="outage", url=first.url, spool_dir=tmp_path / "spool")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(3000):
            run.log({"a": step, "b": step / 3})
            if step == 1000:
                time.sleep(1.5)                       # some batches acknowledged
                first.proc.send_signal(signal.SIGKILL)
                first.proc.wait()
            if step == 2000:                          # the client retries against nothing
                wait_for(lambda: any("retrying" in str(w.message) for w in caught),
                         "the client's retry warning")
                again = serve(ferry_bin, data, listen=f"127.0.0.1:{port}")
            if step % 100 == 0:
                time.sleep(0.01)
        try:
            run.finish(timeout=60)
            assert history(again.url, run.run_id, "a") == [(float(s), s) for s in range(3000)]
            assert history(again.url, run.run_id, "b") == [(s / 3, s) for s in range(3000)]
            assert get(again.url, "runs/get", run_id=run.run_id)["run"]["info"]["status"] == "FINISHED"
        finally:
            again.stop()
    assert any("retrying" in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert not (tmp_path / "spool").exists()


def test_offline_then_sync_by_function_and_by_command(server, tmp_path):
    spools = tmp_path / "spools"
    ids = []
    for i in range(2):
        run = track.init(project="offline", name=f"off{i}", config={"i": i, "d": {"x": "y"}},
                         offline=True, spool_dir=spools / f"run{i}")
        for step in range(1500):
            run.log({"loss": step + i / 10})
        run.finish(exit_code=i)
        names = sorted(p.name for p in (spools / f"run{i}").iterdir())
        assert names[-1] == "meta.json" and all(n.startswith("batch-") for n in names[:-1])
        assert sum(len((spools / f"run{i}" / n).read_text().splitlines()) for n in names[:-1]) == 1500
    ids += track.sync(spools / "run0", server.url)
    p = subprocess.run([sys.executable, "-m", "ferry.track", "sync", str(spools), "--url", server.url],
                       env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    ids += p.stdout.split()
    assert len(ids) == 2 and not spools.joinpath("run0").exists() and not spools.joinpath("run1").exists()
    for i, run_id in enumerate(ids):
        body = get(server.url, "runs/get", run_id=run_id)["run"]
        assert body["info"]["status"] == ["FINISHED", "FAILED"][i]
        assert body["info"]["run_name"] == f"off{i}"
        assert {p["key"]: p["value"] for p in body["data"]["params"]} == {"i": str(i), "d.x": "y"}
        assert history(server.url, run_id, "loss") == [(s + i / 10, s) for s in range(1500)]


def test_log_artifact_deletes_local_file_only_after_verified_upload(ferry_bin, tmp_path):
    s = serve(ferry_bin, tmp_path / "data")
    run = track.init(project="artifacts", url=s.url, spool_dir=tmp_path / "spool")
    try:
        ckpt = tmp_path / "ckpt.bin"
        payload = os.urandom(3 << 20)
        ckpt.write_bytes(payload)
        remote = run.log_artifact(ckpt, name="model/ckpt.bin", delete_local=True)
        assert not ckpt.exists()
        assert remote == run.artifact_uri.removeprefix("mlflow-artifacts:/") + "/model/ckpt.bin"
        with urllib.request.urlopen(f"{s.url}/api/2.0/mlflow-artifacts/artifacts/{remote}") as r:
            assert r.read() == payload
        kept = tmp_path / "kept.bin"
        kept.write_bytes(b"x" * 1000)
        run.log_artifact(kept)                       # delete_local=False keeps it
        assert kept.exists()
    finally:
        s.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(track.TrackError, match="failed"):
            run.log_artifact(kept, name="again.bin", delete_local=True, timeout=1)
    assert kept.read_bytes() == b"x" * 1000
    run.finished = True    # the server is gone; nothing to finish


def test_attaches_to_mlflow_run_id_and_reads_the_url_from_the_environment(server, tmp_path, monkeypatch):
    owner = track.init(project="attach", url=server.url, spool_dir=tmp_path / "o")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.url)
    monkeypatch.setenv("MLFLOW_RUN_ID", owner.run_id)
    with track.init(project="ignored", spool_dir=tmp_path / "a") as run:
        assert run.run_id == owner.run_id
        run.log({"x": 1})
    assert get(server.url, "runs/get", run_id=run.run_id)["run"]["info"]["status"] == "RUNNING"
    owner.finish(exit_code=3)
    info = get(server.url, "runs/get", run_id=run.run_id)["run"]["info"]
    assert info["status"] == "FAILED" and history(server.url, run.run_id, "x") == [(1.0, 0)]


def test_the_docs_example_runs_against_a_server(server, tmp_path):
    """docs/semantics/mlflow.md's ferry.track block (no-run in test_docs.py, which has no
    ferry serve) run here as written, with MLFLOW_TRACKING_URI set."""
    from doc_blocks import parse_blocks
    doc = ROOT / "docs/semantics/mlflow.md"
    blocks = [b for b in parse_blocks(doc.read_text(), "docs/semantics/mlflow.md")
              if b.info.startswith("python") and "ferry.track.init" in b.text]
    assert len(blocks) == 1
    (tmp_path / "example.py").write_text(blocks[0].text)
    p = subprocess.run(["/usr/bin/python3", "example.py"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
                            "PYTHONPATH": str(ROOT / "python"), "MLFLOW_TRACKING_URI": server.url})
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "ckpt.bin").exists()
    exp = get(server.url, "experiments/get-by-name", experiment_name="resnet")["experiment"]
    (run,) = get(server.url, "runs/search", experiment_ids=exp["experiment_id"])["runs"]
    assert run["info"]["status"] == "FINISHED"
    assert {p["key"]: p["value"] for p in run["data"]["params"]} == {"lr": "0.1", "optim.name": "sgd"}
    assert history(server.url, run["info"]["run_id"], "acc.top1") == [(s / 100, s) for s in range(100)]
    listing = f"{server.url}/api/2.0/mlflow-artifacts/artifacts?path=" + \
        run["info"]["artifact_uri"].removeprefix("mlflow-artifacts:/") + "/model"
    with urllib.request.urlopen(listing) as r:
        assert json.load(r)["files"] == [{"path": "ckpt.bin", "is_dir": False, "file_size": 4096}]
    assert not (tmp_path / ".cache/ferry/track").exists() or \
        not any((tmp_path / ".cache/ferry/track").iterdir())


def test_server_gone_at_finish_keeps_the_spool_and_sync_completes_the_run(ferry_bin, tmp_path):
    data = tmp_path / "data"
    s = serve(ferry_bin, data)
    run = track.init(project="late", url=s.url, spool_dir=tmp_path / "spool")
    run.log({"x": 0.5})
    assert run.flush(timeout=60)
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    for step in range(1, 2500):
        run.log({"x": step + 0.5})
    with pytest.warns(UserWarning, match="python -m ferry.track sync .*spool"):
        run.finish(timeout=1)
    assert (tmp_path / "spool/meta.json").exists() and list((tmp_path / "spool").glob("batch-*"))
    again = serve(ferry_bin, data)      # another port: sync is told the new URL
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert track.sync(tmp_path / "spool", again.url) == [run.run_id]
        assert history(again.url, run.run_id, "x") == [(s + 0.5, s) for s in range(2500)]
        info = get(again.url, "runs/get", run_id=run.run_id)["run"]
        assert info["info"]["status"] == "FINISHED"
        assert {t["key"]: t["value"] for t in info["data"]["tags"]}["summary.x"] == "2499.5"
        assert not (tmp_path / "spool").exists()
    finally:
        again.stop()


@pytest.mark.parametrize("ending, status", [("pass", "FINISHED"), ("raise SystemExit(0)", "FINISHED"),
                                            ("1 / 0", "FAILED")])
def test_atexit_finishes_an_unfinished_run(server, tmp_path, ending, status):
    """A script that never calls finish: its points arrive, the run ends (FAILED after an
    uncaught exception)."""
    code = (f"import ferry.track\nrun = ferry.track.init(project='atexit', url={server.url!r})\n"
            f"print(run.run_id, flush=True)\nfor i in range(3000):\n    run.log({{'v': i}})\n{ending}\n")
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                            "PYTHONPATH": str(ROOT / "python")})
    run_id = p.stdout.split()[0]
    assert get(server.url, "runs/get", run_id=run_id)["run"]["info"]["status"] == status, p.stderr
    assert history(server.url, run_id, "v") == [(float(i), i) for i in range(3000)]


def test_trainer_callback_with_a_stand_in_transformers(server, tmp_path):
    """transformers is not installed here: a stand-in module with its TrainerCallback base
    drives FerryTrainerCallback the way Trainer calls it. (FerryAccelerateTracker is untested.)"""
    stub = tmp_path / "stub/transformers"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("class TrainerCallback:\n    pass\n")
    code = f"""
import types, ferry.track
cb = ferry.track.FerryTrainerCallback(project="hf", url={server.url!r})
args = types.SimpleNamespace(run_name="hf-run", to_dict=lambda: {{"learning_rate": 0.001, "x": None}})
state = types.SimpleNamespace(is_world_process_zero=True, global_step=0)
cb.on_train_begin(args, state, None)
run_id = cb.run.run_id
for step in range(1, 51):
    state.global_step = step
    cb.on_log(args, state, None, logs={{"loss": 1 / step, "epoch": step / 50, "note": "text"}})
cb.on_train_end(args, state, None)
print(run_id)
"""
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                            "PYTHONPATH": f"{ROOT / 'python'}:{tmp_path / 'stub'}"})
    assert p.returncode == 0, p.stderr
    run_id = p.stdout.split()[0]
    body = get(server.url, "runs/get", run_id=run_id)["run"]
    assert body["info"]["status"] == "FINISHED" and body["info"]["run_name"] == "hf-run"
    assert body["data"]["params"] == [{"key": "learning_rate", "value": "0.001"}]
    assert history(server.url, run_id, "loss") == [(1 / s, s) for s in range(1, 51)]


def test_integrations_are_lazy_and_say_what_is_missing():
    p = subprocess.run(["/usr/bin/python3", "-c", "import sys, ferry.track\n"
                        "assert 'transformers' not in sys.modules\n"
                        "ferry.track.FerryAccelerateTracker"],
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "python")})
    assert p.returncode == 1 and "No module named 'accelerate'" in p.stderr, p.stderr


def test_bearer_token_from_mlflow_tracking_token(ferry_bin, tmp_path, monkeypatch):
    tokens = tmp_path / "tokens"
    tokens.write_text("s3cret-token\n")
    data = tmp_path / "data"
    data.mkdir()
    s = ServeProcess(ferry_bin, data, "--token-file", tokens)
    try:
        with pytest.raises(track.TrackError) as e:
            track.init(project="p", url=s.url, spool_dir=tmp_path / "a")
        assert "401" in str(e.value)
        monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "s3cret-token")
        run = track.init(project="p", url=s.url, spool_dir=tmp_path / "b")
        run.log({"loss": 1.0})
        run.finish()
        assert "s3cret-token" not in s.log()
    finally:
        s.stop()


def test_script_in_a_git_repo_records_its_commit_host_and_exit_code(server, tmp_path):
    """A training script run from a git work tree: the run carries mlflow.source.git.commit
    (HEAD), mlflow.source.name, ferry.host, and ferry.exit_code from finish(exit_code=3)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "train.py").write_text(
        "import ferry.track\n"
        "run = ferry.track.init(project='git-runs')\n"
        "run.log({'loss': 0.5})\n"
        "run.finish(exit_code=3)\n"
        "print(run.run_id)\n")
    subprocess.run(git + ["add", "train.py"], check=True)
    subprocess.run(git + ["commit", "-qm", "train"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    p = subprocess.run(["/usr/bin/python3", str(repo / "train.py")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
                            "PYTHONPATH": str(ROOT / "python"), "MLFLOW_TRACKING_URI": server.url})
    assert p.returncode == 0, p.stderr
    body = get(server.url, "runs/get", run_id=p.stdout.strip())["run"]
    tags = {t["key"]: t["value"] for t in body["data"]["tags"]}
    assert tags["mlflow.source.git.commit"] == head
    assert tags["mlflow.source.name"] == "train.py" and tags["ferry.exit_code"] == "3"
    assert tags["ferry.host"] == socket.gethostname()
    assert body["info"]["status"] == "FAILED"
