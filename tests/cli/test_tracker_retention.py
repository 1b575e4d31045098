"""Server-side checkpoint retention in `ferry serve` (issue 14; docs/semantics/mlflow-artifacts.md,
"Retention"): the policy set as experiment tags by plain MLflow REST calls (urllib) and by the
real npm `mlflow` client, checkpoints uploaded as a Trainer does (one PUT per file, one
checkpoint as a multipart upload), and exactly the expected checkpoints left, byte for byte."""
import hashlib
import json
import pathlib
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
NPM = ROOT / "tests/tools/npm"
API = "/api/2.0/mlflow/"
ART = "/api/2.0/mlflow-artifacts/artifacts/"
MPU = "/api/2.0/mlflow-artifacts/mpu/"

# eval_loss per step: the best is at 300; the last two are 900 and 1000.
LOSSES = {100: 0.9, 200: 0.8, 300: 0.1, 400: 0.7, 500: 0.6, 600: 0.5, 700: 0.45, 800: 0.4,
          900: 0.35, 1000: 0.3}


class Tracker(ServeProcess):
    def __init__(self, ferry_bin, data):
        pathlib.Path(data).mkdir(parents=True, exist_ok=True)
        super().__init__(ferry_bin, data)

    def request(self, path, method="GET", body=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, method=method, data=data,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post(self, endpoint, body):
        status, raw = self.request(API + endpoint, "POST", body)
        return status, json.loads(raw)

    def ok(self, endpoint, body):
        status, answer = self.post(endpoint, body)
        assert status == 200, answer
        return answer

    def set_policy(self, experiment_id, **settings):
        for key, value in settings.items():
            self.ok("experiments/set-experiment-tag", {
                "experiment_id": experiment_id, "key": "ferry.retention." + key,
                "value": str(value)})

    def listing(self, path):
        status, raw = self.request("/api/2.0/mlflow-artifacts/artifacts?" +
                                   urllib.parse.urlencode({"path": path}))
        assert status == 200, raw
        return sorted(f["path"] for f in json.loads(raw).get("files", []))

    def put(self, path, data):
        status, raw = self.request(ART + path, "PUT", data)
        assert status == 200, raw

    def multipart(self, path, data):
        """MLflow's multipart upload in two parts: create, PUT each part, complete."""
        up = self.ok_mpu("create/" + path, {"num_parts": 2})
        half = len(data) // 2
        for cred, chunk in zip(up["credentials"], [data[:half], data[half:]]):
            req = urllib.request.Request(cred["url"], method="PUT", data=chunk)
            with urllib.request.urlopen(req, timeout=60) as r:
                assert r.status == 200
        self.ok_mpu("complete/" + path, {"upload_id": up["upload_id"]})

    def ok_mpu(self, action, body):
        status, raw = self.request(MPU + action, "POST", body)
        assert status == 200, raw
        return json.loads(raw)


@pytest.fixture
def tracker(ferry_bin, tmp_path):
    t = Tracker(ferry_bin, tmp_path / "data")
    yield t
    t.stop()


def new_run(tracker, name):
    exp = tracker.ok("experiments/create", {"name": name})["experiment_id"]
    info = tracker.ok("runs/create", {"experiment_id": exp, "start_time": 1})["run"]["info"]
    root = info["artifact_uri"].removeprefix("mlflow-artifacts:/")
    return exp, info["run_id"], root


def checkpoint_bytes(step):
    return hashlib.sha256(str(step).encode()).digest() * (1000 + step)


def run_tags(tracker, run_id):
    status, raw = tracker.request(API + "runs/get?run_id=" + run_id)
    return {t["key"]: t["value"] for t in json.loads(raw)["run"]["data"].get("tags", [])}


def train(tracker, run_id, root, multipart_step=700):
    """Logs eval_loss and uploads checkpoints/checkpoint-STEP/{model.bin,trainer_state.json} at
    each step; one checkpoint's model goes up as a multipart upload."""
    for step, loss in LOSSES.items():
        tracker.ok("runs/log-batch", {"run_id": run_id, "metrics": [
            {"key": "eval_loss", "value": loss, "timestamp": 1000 + step, "step": step}]})
        base = f"{root}/checkpoints/checkpoint-{step}/"
        if step == multipart_step:
            tracker.multipart(base + "model.bin", checkpoint_bytes(step))
        else:
            tracker.put(base + "model.bin", checkpoint_bytes(step))
        tracker.put(base + "trainer_state.json", json.dumps({"step": step}).encode())


def test_keeps_the_last_two_and_the_best_one(tracker):
    exp, run_id, root = new_run(tracker, "retained")
    tracker.set_policy(exp, keep_last=2, keep_best=1, metric="eval_loss")
    train(tracker, run_id, root)
    kept = ["checkpoint-1000", "checkpoint-300", "checkpoint-900"]
    assert tracker.listing(f"{root}/checkpoints") == kept
    for step in LOSSES:
        status, body = tracker.request(f"{ART}{root}/checkpoints/checkpoint-{step}/model.bin")
        if f"checkpoint-{step}" in kept:
            assert status == 200 and body == checkpoint_bytes(step), step
        else:
            assert status == 404, step
            assert json.loads(body)["error_code"] == "RESOURCE_DOES_NOT_EXIST"
    # Recorded on the run and logged, one line per deleted checkpoint.
    deleted = run_tags(tracker, run_id)["ferry.retention.deleted"].split(",")
    assert sorted(deleted) == sorted(f"checkpoints/checkpoint-{s}"
                                     for s in (100, 200, 400, 500, 600, 700, 800))
    log = tracker.log()
    assert f"retention: run {run_id}: deleted checkpoint 'checkpoints/checkpoint-100' (not among " \
           "the last 2 or the best 1 by eval_loss" in log
    assert log.count("deleted checkpoint") == 7

    # Changing the policy applies it at once to the experiment's runs.
    tracker.set_policy(exp, keep_best=0)
    assert tracker.listing(f"{root}/checkpoints") == ["checkpoint-1000", "checkpoint-900"]
    tracker.set_policy(exp, keep_last=1)
    assert tracker.listing(f"{root}/checkpoints") == ["checkpoint-1000"]
    status, body = tracker.request(f"{ART}{root}/checkpoints/checkpoint-1000/model.bin")
    assert status == 200 and body == checkpoint_bytes(1000)


def test_without_a_policy_or_a_metric_nothing_goes(tracker):
    exp, run_id, root = new_run(tracker, "half-set")
    # keep_best without a metric: the best is unknown, so nothing may be deleted.
    tracker.set_policy(exp, keep_last=1, keep_best=1)
    train(tracker, run_id, root)
    assert len(tracker.listing(f"{root}/checkpoints")) == len(LOSSES)
    assert "deleted checkpoint" not in tracker.log()
    # The metric arrives: the policy is complete and applied.
    tracker.set_policy(exp, metric="eval_loss", goal="min")
    assert tracker.listing(f"{root}/checkpoints") == ["checkpoint-1000", "checkpoint-300"]


def test_an_open_multipart_upload_pins_its_checkpoint(tracker):
    exp, run_id, root = new_run(tracker, "pinned")
    tracker.set_policy(exp, keep_last=1)
    base = f"{root}/checkpoints/checkpoint-50/"
    tracker.put(base + "config.json", b"{}")
    up = tracker.ok_mpu("create/" + base + "model.bin", {"num_parts": 1})
    for step in (100, 200):
        tracker.put(f"{root}/checkpoints/checkpoint-{step}/model.bin", checkpoint_bytes(step))
    # checkpoint-100 went; checkpoint-50 stays while its upload is open.
    assert tracker.listing(f"{root}/checkpoints") == ["checkpoint-200", "checkpoint-50"]
    tracker.ok_mpu("abort/" + base + "model.bin", {"upload_id": up["upload_id"]})
    tracker.put(f"{root}/checkpoints/checkpoint-300/model.bin", checkpoint_bytes(300))
    assert tracker.listing(f"{root}/checkpoints") == ["checkpoint-300"]


def test_hugging_face_trainer_layout(tracker):
    """MLflowCallback (HF_MLFLOW_LOG_ARTIFACTS=1) logs each checkpoint as a model directory
    "checkpoint-STEP/" at the run's artifact root; other directories there stay."""
    exp, run_id, root = new_run(tracker, "trainer")
    tracker.set_policy(exp, keep_last=2)
    tracker.put(f"{root}/model/MLmodel", b"flavors: {}")
    for step in (500, 1000, 1500):
        for name in ("MLmodel", "artifacts/checkpoint-%d/model.safetensors" % step):
            tracker.put(f"{root}/checkpoint-{step}/{name}", checkpoint_bytes(step))
    assert tracker.listing(root) == ["checkpoint-1000", "checkpoint-1500", "model"]
    assert run_tags(tracker, run_id)["ferry.retention.deleted"] == "checkpoint-500"


def test_ferry_track_checkpoints(tracker, tmp_path):
    """ferry.track's log_artifact into checkpoints/ under a policy given at experiments/create."""
    tracker.ok("experiments/create", {"name": "track-retained", "tags": [
        {"key": "ferry.retention.keep_last", "value": "2"}]})
    code = (
        "import pathlib, sys\n"
        "import ferry.track as t\n"
        "run = t.init(project='track-retained', spool_dir=sys.argv[1])\n"
        "for step in (100, 200, 300):\n"
        "    f = pathlib.Path(sys.argv[1]) / f'model-{step}.pt'\n"
        "    f.write_bytes(bytes([step % 256]) * 4096)\n"
        "    run.log({'loss': 1 / step}, step=step)\n"
        "    run.log_artifact(f, name=f'checkpoints/step_{step:06d}/model.pt')\n"
        "run.finish()\n"
        "print(run.run_id)\n")
    p = subprocess.run(["/usr/bin/python3", "-c", code, str(tmp_path / "spool")],
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "python"),
                            "MLFLOW_TRACKING_URI": tracker.url},
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    run_id = p.stdout.split()[-1]
    status, raw = tracker.request(API + "runs/get?run_id=" + run_id)
    root = json.loads(raw)["run"]["info"]["artifact_uri"].removeprefix("mlflow-artifacts:/")
    assert tracker.listing(f"{root}/checkpoints") == ["step_000200", "step_000300"]


def test_ferry_track_retention_command(tracker):
    """`python -m ferry.track retention` sets the tags; a bad value is its one-line error."""
    def track(*args):
        return subprocess.run(["/usr/bin/python3", "-m", "ferry.track", "retention", *args,
                               "--url", tracker.url],
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "python")},
                              capture_output=True, text=True, timeout=60)
    p = track("cli-retained", "--keep-last", "1", "--keep-best", "1", "--metric", "acc",
              "--goal", "max")
    assert p.returncode == 0, p.stderr
    exp = p.stdout.strip()
    status, raw = tracker.request(API + "experiments/get?experiment_id=" + exp)
    tags = {t["key"]: t["value"] for t in json.loads(raw)["experiment"]["tags"]}
    assert tags == {"ferry.retention.keep_last": "1", "ferry.retention.keep_best": "1",
                    "ferry.retention.metric": "acc", "ferry.retention.goal": "max"}
    bad = track("cli-retained", "--keep-last", "abc")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1, bad.stderr
    assert "ferry.retention.keep_last" in bad.stderr and "INVALID_PARAMETER_VALUE" in bad.stderr


def test_bad_policy_tags_are_refused(tracker):
    exp, _, _ = new_run(tracker, "bad")
    for key, value, words in [("keep_last", "abc", "is not a count"),
                              ("goal", "lowest", "'min' or 'max'"),
                              ("keep_lats", "2", "not a retention setting")]:
        status, body = tracker.post("experiments/set-experiment-tag", {
            "experiment_id": exp, "key": "ferry.retention." + key, "value": value})
        assert status == 400 and body["error_code"] == "INVALID_PARAMETER_VALUE", body
        assert words in body["message"] and "ferry.retention." + key in body["message"]


@pytest.mark.skipif(not (NPM / "node_modules/mlflow").exists(),
                    reason="npm clients missing: scripts/install-deps.sh installs them")
def test_policy_and_metrics_from_the_npm_client(tracker):
    exp, run_id, root = new_run(tracker, "npm-retained")
    points = ",".join(f"{s}:{v}" for s, v in LOSSES.items())
    proc = subprocess.run(
        ["node", NPM / "mlflow_retention.mjs", tracker.url, exp, run_id, points,
         "keep_last=1", "keep_best=1", "metric=eval_loss"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for step in LOSSES:
        tracker.put(f"{root}/checkpoints/checkpoint-{step}/model.bin", checkpoint_bytes(step))
    assert tracker.listing(f"{root}/checkpoints") == ["checkpoint-1000", "checkpoint-300"]
