"""Read-write and read-only bearer tokens of `ferry serve` (docs/semantics/serve.md,
"Authentication"): --token-file and --read-token-file against the real binary, with MLflow REST
calls (urllib) and ferry.track's bearer token variable."""
import json
import pathlib
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from serve_helpers import ServeProcess, minimal_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = "/api/2.0/mlflow/"
ART = "/api/2.0/mlflow-artifacts/"
WRITER = "writer-s3cret-7f2a"
READER = "reader-s3cret-91cd"


def call(url, path, method="GET", body=None, token=None):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url + path, method=method, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture
def served(ferry_bin, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "rw").write_text(f"# trainers\n{WRITER}\n")
    (tmp_path / "ro").write_text(f"{READER}\n")
    # `ferry -v serve ...`: the access log on, to show that no token reaches it.
    verbose = tmp_path / "ferry-v"
    verbose.write_text(f'#!/bin/sh\nexec "{ferry_bin}" -v "$@"\n')
    verbose.chmod(0o755)
    s = ServeProcess(str(verbose), tmp_path / "data", "--token-file", tmp_path / "rw",
                     "--read-token-file", tmp_path / "ro")
    yield s
    s.stop()


def test_read_token_reads_and_is_refused_writes(served):
    url = served.url
    # The writer sets things up.
    status, raw = call(url, API + "experiments/create", "POST", {"name": "shared"}, WRITER)
    assert status == 200, raw
    exp = json.loads(raw)["experiment_id"]
    status, raw = call(url, API + "runs/create", "POST", {"experiment_id": exp}, WRITER)
    run = json.loads(raw)["run"]["info"]
    root = run["artifact_uri"].removeprefix("mlflow-artifacts:/")
    assert call(url, ART + f"artifacts/{root}/model.bin", "PUT", b"weights", WRITER)[0] == 200
    batch = {"run_id": run["run_id"],
             "metrics": [{"key": "loss", "value": 0.5, "timestamp": 1, "step": 1}]}
    assert call(url, API + "runs/log-batch", "POST", batch, WRITER)[0] == 200

    # The reader may search (POST), get and download.
    status, raw = call(url, API + "runs/search", "POST", {"experiment_ids": [exp]}, READER)
    assert status == 200 and json.loads(raw)["runs"][0]["info"]["run_id"] == run["run_id"]
    assert call(url, API + "experiments/search", "POST", {"max_results": 10}, READER)[0] == 200
    assert call(url, API + "runs/get?run_id=" + run["run_id"], token=READER)[0] == 200
    assert call(url, ART + f"artifacts/{root}/model.bin", token=READER) == (200, b"weights")
    assert call(url, ART + "artifacts?path=" + urllib.parse.quote(root), token=READER)[0] == 200

    # ... and gets 403 PERMISSION_DENIED for every write.
    for path, method, body in [
            (API + "runs/log-batch", "POST", batch),
            (API + "experiments/set-experiment-tag", "POST",
             {"experiment_id": exp, "key": "k", "value": "v"}),
            (API + "runs/delete", "POST", {"run_id": run["run_id"]}),
            (ART + f"artifacts/{root}/model.bin", "PUT", b"overwritten"),
            (ART + f"artifacts/{root}/model.bin", "DELETE", None),
            (ART + f"mpu/create/{root}/big.bin", "POST", {"num_parts": 1})]:
        status, raw = call(url, path, method, body, READER)
        assert status == 403, (path, method, raw)
        answer = json.loads(raw)
        assert answer["error_code"] == "PERMISSION_DENIED", answer
        assert "read-only" in answer["message"]
    # Nothing changed.
    assert call(url, ART + f"artifacts/{root}/model.bin", token=WRITER) == (200, b"weights")

    # No token: 401; a wrong one: 401.
    status, raw = call(url, API + "runs/search", "POST", {"experiment_ids": [exp]})
    assert status == 401 and json.loads(raw)["error_code"] == "UNAUTHENTICATED"
    assert call(url, ART + f"artifacts/{root}/model.bin", token="guess")[0] == 401
    assert call(url, "/healthz")[0] == 200

    served.stop()
    log = served.log()
    assert "runs/search" in log  # the access log (-v) was on
    assert WRITER not in log and READER not in log


def test_ferry_track_with_a_read_token_is_refused_writes(served):
    """ferry.track sends MLFLOW_TRACKING_TOKEN; with a read-only token its first write fails."""
    spool = served.data.parent / "spool"
    code = (f"SPOOL = {str(spool)!r}\n"
            "import ferry.track as t\n"
            "try:\n"
            "    r = t.init(project='p', spool_dir=SPOOL)\n"
            "    r.log({'loss': 1.0}, step=1); r.finish()\n"
            "except Exception as e:\n"
            "    print('FAILED', type(e).__name__, e)\n")
    env = dict(minimal_env(), PYTHONPATH=str(ROOT / "python"), MLFLOW_TRACKING_URI=served.url,
               MLFLOW_TRACKING_TOKEN=READER)
    p = subprocess.run(["/usr/bin/python3", "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    out = p.stdout + p.stderr
    assert "403" in out or "PERMISSION_DENIED" in out, out
    assert READER not in out


@pytest.mark.parametrize("args,message", [
    (["--listen", "0.0.0.0:0", "--allow-remote"], "--allow-anonymous"),
    (["--read-token-file", "/nonexistent/tokens"], "--read-token-file"),
])
def test_bad_token_setups_are_usage_errors(ferry_bin, tmp_path, args, message):
    p = subprocess.run([ferry_bin, "serve", "--data", str(tmp_path), *args], env=minimal_env(),
                       capture_output=True, timeout=30)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert err.count("\n") == 1 and message in err, err


def test_a_token_in_both_files_is_a_usage_error(ferry_bin, tmp_path):
    (tmp_path / "rw").write_text("same-token\n")
    (tmp_path / "ro").write_text("other\nsame-token\n")
    p = subprocess.run([ferry_bin, "serve", "--data", str(tmp_path), "--token-file",
                        str(tmp_path / "rw"), "--read-token-file", str(tmp_path / "ro")],
                       env=minimal_env(), capture_output=True, timeout=30)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert "also in --token-file" in err and "same-token" not in err, err
