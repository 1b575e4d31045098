"""The MLflow tracking API of `ferry serve` (docs/semantics/mlflow.md) with the real npm `mlflow`
client (2.0.7) and plain urllib for what that client cannot send."""
import json
import pathlib
import signal
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from pg_helpers import new_database
from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
NPM = ROOT / "tests/tools/npm"
API = "/api/2.0/mlflow/"


class Tracker(ServeProcess):
    """`ferry serve --data DIR` (the tracker on its default SQLite file)."""

    def __init__(self, ferry_bin, data, *extra, **kwargs):
        if not str(data).startswith("s3://"):
            pathlib.Path(data).mkdir(parents=True, exist_ok=True)
        super().__init__(ferry_bin, data, *extra, **kwargs)

    def request(self, path, method="GET", body=None, headers=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, method=method, data=data,
                                     headers=headers or {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post(self, endpoint, body):
        status, raw = self.request(API + endpoint, "POST", body)
        return status, json.loads(raw)

    def get(self, endpoint, query, prefix=API):
        status, raw = self.request(prefix + endpoint + "?" + urllib.parse.urlencode(query))
        return status, json.loads(raw)



@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def tracker(request, ferry_bin, tmp_path_factory):
    """The same API suite on both engines: the default SQLite file, and a fresh database on the
    PostgreSQL the ctest fixture started (pg_helpers)."""
    extra = ["--tracker-db", new_database()] if request.param == "postgres" else []
    t = Tracker(ferry_bin, tmp_path_factory.mktemp("mlflow") / "data", *extra)
    yield t
    t.stop()


def new_run(tracker, experiment="0"):
    status, body = tracker.post("runs/create", {"experiment_id": experiment, "start_time": 1})
    assert status == 200, body
    return body["run"]["info"]["run_id"]


@pytest.mark.skipif(not (NPM / "node_modules/mlflow").exists(),
                    reason="npm clients missing: scripts/install-deps.sh installs them")
def test_npm_client_scenario(tracker):
    proc = subprocess.run(["node", NPM / "mlflow_client.mjs", "scenario", tracker.url, "npm-exp"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + tracker.log()
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    out = json.loads(line[len("RESULT "):])
    start = 1700000000000
    assert out["experiment"]["name"] == "npm-exp"
    assert {"key": "team", "value": "ml"} in out["experiment"]["tags"]
    assert out["unknown_experiment"]["status"] == 404
    assert out["unknown_experiment"]["data"] == {
        "error_code": "RESOURCE_DOES_NOT_EXIST",
        "message": "Could not find experiment with name 'npm-exp-missing'"}
    assert out["created"]["info"]["run_name"] == "npm-run"
    # The 1,000 points come back exactly, in step order.
    history = out["history"]
    assert len(history) == 1000
    for i, m in enumerate(history):
        assert (m["key"], m["value"], int(m["timestamp"]), int(m["step"])) == \
            ("loss", 1 / (i + 1), start + i, i)
    assert [r["info"]["run_id"] for r in out["search"].get("runs", [])] == [out["created"]["info"]["run_id"]]
    assert out["search_none"].get("runs", []) == []  # MLflow answers {} (no empty lists)
    assert {"key": "note", "value": "hello"} in out["tags_after_set"]
    assert all(t["key"] != "note" for t in out["tags_after_delete"])
    assert out["param_change"]["status"] == 400
    assert out["param_change"]["data"]["error_code"] == "INVALID_PARAMETER_VALUE"
    assert out["updated"]["status"] == "FINISHED"
    assert out["updated"]["end_time"] == start + 9000  # int64 as a JSON number, as MLflow sends it
    final = out["final"]
    assert final["info"]["status"] == "FINISHED"
    latest = {m["key"]: m for m in final["data"]["metrics"]}
    assert latest["loss"]["step"] == 999 and latest["acc"]["value"] == 0.9
    assert final["data"]["params"] == [{"key": "lr", "value": "0.1"}]
    assert "npm-exp" in out["listed"] and "Default" in out["listed"]


def test_bulk_interval_and_server_info(tracker):
    runs = [new_run(tracker), new_run(tracker)]
    for run in runs:
        metrics = [{"key": "loss", "value": i, "timestamp": i, "step": i} for i in range(1000)]
        assert tracker.post("runs/log-batch", {"run_id": run, "metrics": metrics})[0] == 200
    status, body = tracker.get("metrics/get-history-bulk-interval",
                               [("run_ids", runs[0]), ("run_ids", runs[1]), ("metric_key", "loss"),
                                ("start_step", 100), ("end_step", 199), ("max_results", 10)])
    assert status == 200, body
    by_run = {}
    for m in body["metrics"]:
        by_run.setdefault(m["run_id"], []).append(int(m["step"]))
    assert list(by_run) == runs
    for steps in by_run.values():
        assert steps[0] == 100 and steps[-1] == 199 and steps == sorted(steps)
        assert 2 <= len(steps) <= 40
    for prefix in ("/api/3.0/mlflow/", API, "/ajax-api/2.0/mlflow/"):
        status, info = tracker.get("server-info", [], prefix=prefix)
        assert status == 200 and "store_type" in info


def test_malformed_json_is_400_on_one_line(tracker):
    status, raw = tracker.request(API + "experiments/create", "POST", b'{"name": "x",')
    assert status == 400
    assert b"\n" not in raw.strip()
    body = json.loads(raw)
    assert body["error_code"] == "BAD_REQUEST" and "malformed JSON" in body["message"]
    status, body = tracker.post("runs/log-batch", {"run_id": new_run(tracker), "metrics": [
        {"key": "m", "value": "not-a-number", "timestamp": 1}]})
    assert status == 400 and body["error_code"] == "INVALID_PARAMETER_VALUE"
    assert "metrics[0].value" in body["message"]


def test_oversized_body_is_413(tracker):
    # The server answers as soon as Content-Length says too much, then closes: send the headers
    # and a little of the body over a raw socket and read the answer.
    host, port = tracker.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(f"POST {API}runs/log-batch HTTP/1.1\r\nHost: {host}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {17 << 20}\r\n\r\n".encode()
                  + b" " * 65536)
        answer = b""
        while b"\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_unknown_run_is_404(tracker):
    missing = "0" * 32
    status, body = tracker.get("runs/get", [("run_id", missing)])
    assert (status, body["error_code"]) == (404, "RESOURCE_DOES_NOT_EXIST")
    assert missing in body["message"]
    status, body = tracker.post("runs/log-batch", {"run_id": missing, "metrics": []})
    assert (status, body["error_code"]) == (404, "RESOURCE_DOES_NOT_EXIST")


def test_deleting_a_run_deletes_its_artifacts(tracker):
    run = new_run(tracker)
    status, body = tracker.get("runs/get", [("run_id", run)])
    uri = body["run"]["info"]["artifact_uri"]
    assert uri.startswith("mlflow-artifacts:/") and uri.endswith(f"/{run}/artifacts"), uri
    path = "/api/2.0/mlflow-artifacts/artifacts/" + uri[len("mlflow-artifacts:/"):].lstrip("/")
    other = new_run(tracker)
    _, body = tracker.get("runs/get", [("run_id", other)])
    other_path = "/api/2.0/mlflow-artifacts/artifacts/" + body["run"]["info"]["artifact_uri"][
        len("mlflow-artifacts:/"):].lstrip("/")
    for p in (path + "/ckpt/model.bin", other_path + "/model.bin"):
        status, _ = tracker.request(p, "PUT", b"x" * 1000, {"Content-Type": "application/octet-stream"})
        assert status == 200, p
    assert tracker.request(path + "/ckpt/model.bin")[0] == 200
    assert tracker.post("runs/delete", {"run_id": run})[0] == 200
    assert tracker.request(path + "/ckpt/model.bin")[0] == 404
    assert tracker.request(other_path + "/model.bin")[0] == 200  # another run's are kept
    # The run itself is only marked deleted (restorable), as MLflow does.
    assert tracker.post("runs/restore", {"run_id": run})[0] == 200


def test_retried_log_batch_never_duplicates_points(tracker):
    run = new_run(tracker)
    batch = {"run_id": run, "metrics": [
        {"key": "loss", "value": 0.5 * i, "timestamp": 10 + i, "step": i} for i in range(50)]}
    for _ in range(3):
        assert tracker.post("runs/log-batch", batch)[0] == 200
    status, body = tracker.get("metrics/get-history", [("run_id", run), ("metric_key", "loss")])
    assert status == 200
    assert [int(m["step"]) for m in body["metrics"]] == list(range(50))


def test_kill_9_then_restart_keeps_every_acknowledged_point(ferry_bin, tmp_path):
    first = Tracker(ferry_bin, tmp_path / "data")
    try:
        status, body = first.post("experiments/create", {"name": "durable"})
        assert status == 200, body
        run = new_run(first, body["experiment_id"])
        metrics = [{"key": "loss", "value": i / 7, "timestamp": i, "step": i} for i in range(500)]
        assert first.post("runs/log-batch", {"run_id": run, "metrics": metrics})[0] == 200
    finally:
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait()
    assert (tmp_path / "data/tracker/tracker.db").exists()
    again = Tracker(ferry_bin, tmp_path / "data")
    try:
        status, body = again.get("metrics/get-history", [("run_id", run), ("metric_key", "loss")])
        assert status == 200
        assert [(m["value"], int(m["step"])) for m in body["metrics"]] == \
            [(i / 7, i) for i in range(500)]
        status, body = again.get("experiments/get-by-name", [("experiment_name", "durable")])
        assert status == 200
    finally:
        again.stop()
