"""`ferry run --track URL` against a real `ferry serve`: the job becomes an MLflow run with
system metrics, the command's own metrics (ferry.track, or plain MLflow REST through the
variables ferry gives it), its output log, its exit status and its checkpoints manifest; a
failing command, SIGTERM, a resumed attempt and an unreachable server (docs/semantics/run.md,
"--track")."""
import json
import pathlib
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from serve_helpers import ServeProcess, minimal_env, wait_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = "/api/2.0/mlflow/"

TRACKED_SCRIPT = r'''
import json, os, sys, time
import ferry.track
out = os.environ["FERRY_OUTPUT"]
run = ferry.track.init(project="ignored-when-attached")
for step in range(5):
    run.log({"loss": 1.0 / (step + 1)}, step=step)
print("hello from the script", flush=True)
print("a warning on stderr", file=sys.stderr, flush=True)
with open(os.path.join(out, "ckpt.pt"), "w") as f:
    f.write("weights" * 100)
trigger = os.environ["FERRY_SYNC_TRIGGER"]
open(trigger, "w").close()
while os.path.exists(trigger):
    time.sleep(0.05)
time.sleep(float(os.environ.get("HOLD", "2.5")))   # a few system-metric samples
run.finish()
info = {k: os.environ.get(k) for k in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID",
                                        "MLFLOW_EXPERIMENT_NAME", "PYTHONUNBUFFERED")}
import urllib.request
with urllib.request.urlopen(info["MLFLOW_TRACKING_URI"] + "/api/2.0/mlflow/runs/get?run_id="
                            + info["MLFLOW_RUN_ID"], timeout=30) as r:
    info["status_after_finish"] = json.load(r)["run"]["info"]["status"]
json.dump(info, open(os.environ["INFO"], "w"))
sys.exit(int(os.environ.get("EXIT", "0")))
'''

REST_SCRIPT = r'''
import json, os, time, urllib.request
url, run_id = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_RUN_ID"]
body = {"run_id": run_id, "metrics": [{"key": "acc", "value": 0.5 + i / 10,
        "timestamp": int(time.time() * 1000), "step": i} for i in range(3)]}
req = urllib.request.Request(url + "/api/2.0/mlflow/runs/log-batch", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"}, method="POST")
urllib.request.urlopen(req, timeout=30).read()
print("logged through REST")
'''


def get(url, endpoint, token=None, **query):
    req = urllib.request.Request(f"{url}{API}{endpoint}?{urllib.parse.urlencode(query)}")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def run_info(url, run_id):
    return get(url, "runs/get", run_id=run_id)["run"]


def tags(run):
    return {t["key"]: t["value"] for t in run["data"].get("tags", [])}


def history(url, run_id, key):
    return get(url, "metrics/get-history", run_id=run_id, metric_key=key).get("metrics", [])


def artifact(url, run, path):
    root = run["info"]["artifact_uri"].split(":", 1)[1].lstrip("/")
    with urllib.request.urlopen(f"{url}/api/2.0/mlflow-artifacts/artifacts/{root}/{path}",
                                timeout=30) as r:
        return r.read().decode()


@pytest.fixture
def server(ferry_bin, tmp_path):
    data = tmp_path / "serve-data"
    data.mkdir()
    s = ServeProcess(ferry_bin, data)
    yield s
    s.stop()


def env_for(tmp_path, **extra):
    env = minimal_env()
    env["PYTHONPATH"] = str(ROOT / "python")
    env["INFO"] = str(tmp_path / "info.json")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def ferry_run(ferry_bin, tmp_path, url, script, *extra, env=None, job="job-t", wait=True,
              verbose=False, stdin=None):
    scratch = tmp_path / "scratch"
    dst = tmp_path / "dst"
    (tmp_path / "script.py").write_text(script)
    args = [ferry_bin, *(["-v"] if verbose else []), "run", "--no-preflight", "--track", url, "--system-metrics-interval", "1",
            "--out", f"{scratch}={dst}/{{job}}/{{attempt}}/", *extra,
            "--", "/usr/bin/python3", str(tmp_path / "script.py")]
    e = env or env_for(tmp_path)
    e["FERRY_RUN_ID"] = job
    if not wait:
        return subprocess.Popen(args, env=e, stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    return subprocess.run(args, env=e, capture_output=True, timeout=120)


def test_tracked_run_has_system_and_script_metrics_output_log_status_and_checkpoints(
        ferry_bin, server, tmp_path):
    p = ferry_run(ferry_bin, tmp_path, server.url, TRACKED_SCRIPT, "--experiment", "exp-a",
                  "--run-name", "first")
    assert p.returncode == 0, p.stderr.decode()
    # The command's output still reaches ferry's stdout and stderr, each to its own.
    assert b"hello from the script" in p.stdout and b"a warning on stderr" not in p.stdout
    assert b"a warning on stderr" in p.stderr
    info = json.loads((tmp_path / "info.json").read_text())
    assert info["MLFLOW_TRACKING_URI"] == server.url
    assert info["MLFLOW_EXPERIMENT_NAME"] == "exp-a" and info["PYTHONUNBUFFERED"] == "1"
    # ferry.track attached to ferry's run: its finish() left the status to ferry.
    assert info["status_after_finish"] == "RUNNING"
    run = run_info(server.url, info["MLFLOW_RUN_ID"])
    assert run["info"]["status"] == "FINISHED" and int(run["info"]["end_time"]) > 0
    assert run["info"]["run_name"] == "first"
    t = tags(run)
    assert t["ferry.exit_code"] == "0" and t["ferry.attempt"] == "0" and t["ferry.job"] == "job-t"
    assert t["ferry.checkpoints"] == f"{tmp_path}/dst/job-t/0/"
    assert "script.py" in t["ferry.command"] and t["ferry.host"]
    # ferry.track attached: its points are in the same run, and its finish() did not end it.
    assert [m["value"] for m in history(server.url, run["info"]["run_id"], "loss")] == \
        [1.0, 0.5, 1.0 / 3, 0.25, 0.2]
    for key in ("system/cpu_utilization_percentage", "system/system_memory_usage_megabytes",
                "system/disk_usage_percentage", "system/network_receive_megabytes"):
        assert len(history(server.url, run["info"]["run_id"], key)) >= 2, key
    log = artifact(server.url, run, "ferry/output.log")
    assert "hello from the script\n" in log and "a warning on stderr\n" in log
    ck = json.loads(artifact(server.url, run, "ferry/checkpoints.json"))
    files = {f["path"]: f for f in ck["outputs"][0]["files"]}
    assert files["ckpt.pt"]["size"] == 700
    assert files["ckpt.pt"]["url"] == f"{tmp_path}/dst/job-t/0/ckpt.pt"
    assert len(files["ckpt.pt"]["crc32c"]) == 8
    # Referenced, not uploaded again: the run's artifacts are ferry's two small files.
    root = run["info"]["artifact_uri"].split(":", 1)[1].lstrip("/")
    with urllib.request.urlopen(f"{server.url}/api/2.0/mlflow-artifacts/artifacts?"
                                + urllib.parse.urlencode({"path": root}), timeout=30) as r:
        assert [f["path"] for f in json.load(r)["files"]] == ["ferry"]
    with urllib.request.urlopen(f"{server.url}/api/2.0/mlflow-artifacts/artifacts?"
                                + urllib.parse.urlencode({"path": root + "/ferry"}), timeout=30) as r:
        assert sorted(f["path"] for f in json.load(r)["files"]) == ["checkpoints.json", "output.log"]


def test_plain_mlflow_rest_through_the_variables(ferry_bin, server, tmp_path):
    p = ferry_run(ferry_bin, tmp_path, server.url,
                  REST_SCRIPT + "\nimport json, os\njson.dump({'id': os.environ['MLFLOW_RUN_ID']},"
                  " open(os.environ['INFO'], 'w'))\n")
    assert p.returncode == 0, p.stderr.decode()
    run_id = json.loads((tmp_path / "info.json").read_text())["id"]
    assert [m["value"] for m in history(server.url, run_id, "acc")] == [0.5, 0.6, 0.7]
    run = run_info(server.url, run_id)
    assert run["info"]["status"] == "FINISHED"
    assert "logged through REST" in artifact(server.url, run, "ferry/output.log")


def test_a_failing_command_is_failed_with_its_exit_code(ferry_bin, server, tmp_path):
    p = ferry_run(ferry_bin, tmp_path, server.url, TRACKED_SCRIPT,
                  env=env_for(tmp_path, EXIT=3, HOLD=0))
    assert p.returncode == 3, p.stderr.decode()
    run = run_info(server.url, json.loads((tmp_path / "info.json").read_text())["MLFLOW_RUN_ID"])
    assert run["info"]["status"] == "FAILED"
    assert tags(run)["ferry.exit_code"] == "3"
    assert "hello from the script" in artifact(server.url, run, "ferry/output.log")


def test_sigterm_to_ferry_makes_the_run_killed(ferry_bin, server, tmp_path):
    # 'started' is printed before info.json is written, and info.json is renamed into place: once
    # it is there, the line is in ferry's pipe (no fixed sleep for it to get there).
    script = ("import json, os, time\n"
              "print('started', flush=True)\n"
              "json.dump({'id': os.environ['MLFLOW_RUN_ID']}, open(os.environ['INFO'] + '.tmp', 'w'))\n"
              "os.rename(os.environ['INFO'] + '.tmp', os.environ['INFO'])\n"
              "time.sleep(60)\n")
    proc = ferry_run(ferry_bin, tmp_path, server.url, script, wait=False)
    wait_for(lambda: proc.poll() is not None or (tmp_path / "info.json").exists(), "the command to start")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    run = run_info(server.url, json.loads((tmp_path / "info.json").read_text())["id"])
    assert run["info"]["status"] == "KILLED"
    assert tags(run)["ferry.exit_code"] == str(128 + signal.SIGTERM)
    assert "started" in artifact(server.url, run, "ferry/output.log")


def test_a_resumed_attempt_logs_into_the_same_run(ferry_bin, server, tmp_path):
    first = ferry_run(ferry_bin, tmp_path, server.url, TRACKED_SCRIPT, job="job-r",
                      env=env_for(tmp_path, EXIT=1, HOLD=0))
    assert first.returncode == 1, first.stderr.decode()
    run_id = json.loads((tmp_path / "info.json").read_text())["MLFLOW_RUN_ID"]
    second = ferry_run(ferry_bin, tmp_path, server.url, TRACKED_SCRIPT, "--resume",
                       str(tmp_path / "scratch"), job="job-r", env=env_for(tmp_path, HOLD=0))
    assert second.returncode == 0, second.stderr.decode()
    assert json.loads((tmp_path / "info.json").read_text())["MLFLOW_RUN_ID"] == run_id
    run = run_info(server.url, run_id)
    assert run["info"]["status"] == "FINISHED"
    t = tags(run)
    assert t["ferry.attempt"] == "1" and t["ferry.exit_code"] == "0"
    # When each attempt began, for the UI's marks.
    assert 0 < int(t["ferry.attempt.0.started_ms"]) < int(t["ferry.attempt.1.started_ms"])
    assert t["ferry.checkpoints"] == f"{tmp_path}/dst/job-r/1/"
    # Each attempt's output log is kept.
    assert "hello from the script" in artifact(server.url, run, "ferry/output.log")
    assert "hello from the script" in artifact(server.url, run, "ferry/output-attempt1.log")
    ck = json.loads(artifact(server.url, run, "ferry/checkpoints.json"))
    assert ck["attempt"] == "1"


def test_an_unreachable_server_is_one_warning_and_the_command_runs(ferry_bin, tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = ("import os, sys\n"
              "print('MLFLOW_RUN_ID' in os.environ)\n"
              "sys.exit(5)\n")
    p = ferry_run(ferry_bin, tmp_path, f"http://127.0.0.1:{port}", script)
    assert p.returncode == 5, p.stderr.decode()
    assert p.stdout.decode() == "False\n"
    warnings = [l for l in p.stderr.decode().splitlines() if "--track" in l]
    assert len(warnings) == 1, p.stderr.decode()
    assert "the command runs without tracking" in warnings[0]


def test_a_hung_server_delays_neither_the_start_nor_the_exit_past_the_bounds(ferry_bin, server,
                                                                            tmp_path):
    """A server that accepts connections and never answers: the command starts within
    kStartBudget (5 s) of ferry (the report: 30 s), and ferry exits within kFinalFlush (20 s)
    of the command's end when the server hangs mid-run (the report: 57 s). Bounds, not speeds:
    asserted with slack for a loaded machine."""
    from sick_server import SickServer
    sick = SickServer(server.url.split("://")[1], mode="hang")
    script = ("import os, time\n"
              "print(time.monotonic(), 'MLFLOW_RUN_ID' in os.environ, flush=True)\n")
    try:
        t0 = time.monotonic()
        p = ferry_run(ferry_bin, tmp_path, sick.url, script)
        assert p.returncode == 0, p.stderr.decode()
        started, tracked = p.stdout.decode().split()
        assert tracked == "False" and "the command runs without tracking" in p.stderr.decode()
        assert float(started) - t0 < 12, float(started) - t0
        # Answers at the start, hangs once the command runs: its end cannot be recorded.
        sick.set("forward")
        script = ("import os, sys, time\n"
                  "print('MLFLOW_RUN_ID' in os.environ, flush=True)\n"
                  "sys.stdin.readline()\n"          # until the server hangs
                  "time.sleep(2)\n"                  # a system-metrics sample meets it
                  "print(time.monotonic(), flush=True)\n")
        p = ferry_run(ferry_bin, tmp_path, sick.url, script, job="job-hang", wait=False,
                      stdin=subprocess.PIPE)
        assert p.stdout.readline() == b"True\n"
        sick.set("hang")
        p.stdin.write(b"go\n")
        p.stdin.flush()
        ended = float(p.stdout.readline())
        out, err = p.communicate(timeout=120)
        exited = time.monotonic()
        assert p.returncode == 0, err.decode()
        assert b"could not record the end of run" in err, err.decode()
        assert exited - ended < 20 + 8, exited - ended
    finally:
        sick.stop()


def test_track_mistakes_are_usage_errors(ferry_bin, tmp_path):
    for args, msg in ((["--track", "ftp://x"], "must be the tracking server's http://"),
                      (["--experiment", "e"], "need --track URL"),
                      (["--track", "http://127.0.0.1:1", "--system-metrics-interval", "-1"],
                       "--system-metrics-interval must be >= 0")):
        p = subprocess.run([ferry_bin, "run", *args, "--", "true"], env=minimal_env(),
                           capture_output=True, timeout=60)
        assert p.returncode == 2 and msg in p.stderr.decode(), (args, p.stderr.decode())


def test_sysmetrics_prints_one_sample(ferry_bin):
    p = subprocess.run([ferry_bin, "sysmetrics", "--json", "--wait", "200"], env=minimal_env(),
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    out = json.loads(p.stdout)
    assert out["gpus"]  # "N GPU(s) through ..." or why there are none
    for key in ("system/cpu_utilization_percentage", "system/system_memory_usage_percentage",
                "system/disk_usage_percentage", "system/network_transmit_megabytes"):
        assert key in out["metrics"], key
    if "not found" in out["gpus"]:   # no NVIDIA driver here: no GPU metric, and no error
        assert not any(k.startswith("system/gpu_") for k in out["metrics"])


def test_server_lost_mid_run_is_one_warning_and_queued_points_arrive_later(ferry_bin, tmp_path):
    data = tmp_path / "serve-data"
    data.mkdir()
    listen = "127.0.0.1:19210"  # a fixed port: the restarted server must be found again
    server = ServeProcess(ferry_bin, data, listen=listen)
    script = ("import json, os, time\n"
              "json.dump({'id': os.environ['MLFLOW_RUN_ID']}, open(os.environ['INFO'], 'w'))\n"
              "time.sleep(7)\n"
              "print('done', flush=True)\n")
    proc = ferry_run(ferry_bin, tmp_path, server.url, script, wait=False)
    try:
        wait_for(lambda: (tmp_path / "info.json").exists(), "the command to start")
        time.sleep(1.5)
        server.proc.send_signal(signal.SIGKILL)   # gone without a goodbye
        server.proc.wait()
        time.sleep(3)                             # samples taken meanwhile wait in ferry
        server = ServeProcess(ferry_bin, data, listen=listen,
                              log=tmp_path / "serve-again.log")
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    try:
        assert proc.returncode == 0, err.decode()
        warnings = [l for l in err.decode().splitlines() if "--track" in l and "warn" in l]
        assert len(warnings) == 1, err.decode()
        run_id = json.loads((tmp_path / "info.json").read_text())["id"]
        run = run_info(server.url, run_id)
        assert run["info"]["status"] == "FINISHED"
        steps = [int(m["step"]) for m in history(server.url, run_id,
                                                  "system/cpu_utilization_percentage")]
        # One sample a second for ~7 s, those of the outage included (sent when it came back).
        assert len(steps) >= 6 and len(set(steps)) == len(steps), steps
        assert "done" in artifact(server.url, run, "ferry/output.log")
    finally:
        server.stop()


def test_bearer_token_from_mlflow_tracking_token_never_shown(ferry_bin, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("s3cret-token-1234\n")
    data = tmp_path / "serve-data"
    data.mkdir()
    server = ServeProcess(ferry_bin, data, "--token-file", tokens)
    script = ("import json, os\nimport ferry.track\n"
              "run = ferry.track.init(project='p')\nrun.log({'loss': 2.0})\nrun.finish()\n"
              "json.dump({'id': os.environ['MLFLOW_RUN_ID']}, open(os.environ['INFO'], 'w'))\n")
    try:
        # Without the token: refused (401), one warning, the command runs untracked.
        p = ferry_run(ferry_bin, tmp_path, server.url, "import sys; sys.exit(4)\n")
        assert p.returncode == 4 and "HTTP 401" in p.stderr.decode(), p.stderr.decode()
        env = env_for(tmp_path, MLFLOW_TRACKING_TOKEN="s3cret-token-1234")
        p = ferry_run(ferry_bin, tmp_path, server.url, script, env=env, job="job-tok", verbose=True)
        assert p.returncode == 0, p.stderr.decode()
        assert b"s3cret-token-1234" not in p.stderr + p.stdout
        run_id = json.loads((tmp_path / "info.json").read_text())["id"]
        run = get(server.url, "runs/get", token="s3cret-token-1234", run_id=run_id)["run"]
        assert run["info"]["status"] == "FINISHED"
        assert "s3cret-token-1234" not in json.dumps(run)
        assert [m["value"] for m in get(server.url, "metrics/get-history", token="s3cret-token-1234",
                                         run_id=run_id, metric_key="loss")["metrics"]] == [2.0]
        assert "s3cret-token-1234" not in server.log()
    finally:
        server.stop()


def test_track_from_a_job_spec(ferry_bin, server, tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text(f"track: {{url: \"{server.url}\", experiment: from-spec, run_name: spec-run,"
                    " system_metrics_interval: 0}\n"
                    f"outputs: [\"{tmp_path}/scratch={tmp_path}/dst/{{job}}/\"]\n"
                    "preflight: false\n"
                    "command: [/usr/bin/python3, -c, \"import json, os; json.dump(dict(os.environ),"
                    " open(os.environ['INFO'], 'w'))\"]\n")
    env = env_for(tmp_path)
    env["FERRY_RUN_ID"] = "job-spec"
    p = subprocess.run([ferry_bin, "run", "--spec", spec], env=env, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    child = json.loads((tmp_path / "info.json").read_text())
    assert child["MLFLOW_EXPERIMENT_NAME"] == "from-spec"
    run = run_info(server.url, child["MLFLOW_RUN_ID"])
    assert run["info"]["run_name"] == "spec-run" and run["info"]["status"] == "FINISHED"
    # Interval 0: no system metrics at all.
    assert not [m for m in run["data"].get("metrics", []) if m["key"].startswith("system/")]
