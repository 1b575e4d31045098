"""Test data for the web UI (tests/cli/test_ui.py, bench/ui_bench.py): runs with metrics (one
planted spike), params, tags, images, an output log, a checkpoint manifest and artifacts,
logged through the REST API of a running `ferry serve`, plus many small runs for the table.
Keep-alive connections, one per thread, keep thousands of runs quick."""
import http.client
import json
import math
import random
import struct
import threading
import time
import urllib.parse
import zlib
from concurrent.futures import ThreadPoolExecutor

SPIKE_STEP = 1234
SPIKE_VALUE = 50.0


class Client:
    """A keep-alive HTTP client of one ferry serve (one per thread)."""

    def __init__(self, url, token=None):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.conn = None
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}

    def request(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                self.conn.request(method, path, body=data, headers={**self.auth, **(headers or {})})
                r = self.conn.getresponse()
                payload = r.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        if r.status >= 300:
            raise AssertionError(f"{method} {path}: HTTP {r.status} {payload[:300]!r}")
        return json.loads(payload) if payload and payload[:1] in b"{[" else payload

    def api(self, path, body):
        return self.request("POST", "/api/2.0/mlflow/" + path, body,
                            {"Content-Type": "application/json"})

    def put_artifact(self, run, name, data):
        root = run["info"]["artifact_uri"].split(":", 1)[1].lstrip("/")
        self.request("PUT", "/api/2.0/mlflow-artifacts/artifacts/" + urllib.parse.quote(f"{root}/{name}"),
                     data, {"Content-Type": "application/octet-stream"})


def png(width, height, rgb_of):
    """A PNG (RGB, 8 bit) whose pixel (x, y) is rgb_of(x, y)."""
    raw = b"".join(b"\0" + bytes(c for x in range(width) for c in rgb_of(x, y))
                   for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def log_points(c, run_id, points, params=(), tags=()):
    c.api("runs/log-batch", {"run_id": run_id, "metrics": [], "params": list(params),
                             "tags": list(tags)})
    for i in range(0, len(points), 1000):
        c.api("runs/log-batch", {"run_id": run_id, "metrics": points[i:i + 1000]})


def create_run(c, exp_id, name, start_ms, tags=(), user="alice"):
    return c.api("runs/create", {"experiment_id": exp_id, "run_name": name, "user_id": user,
                                 "start_time": start_ms, "tags": list(tags)})["run"]


def seed_demo(url, steps=2000, runs=5):
    """Experiment 'ui-demo': `runs` runs of `steps` steps. Run 0 has the spike (loss =
    SPIKE_VALUE at SPIKE_STEP), system/GPU/data metrics, images, log, manifest and artifacts;
    the last run is still RUNNING. Returns {"experiment_id", "runs": [run...], "weights": bytes}."""
    c = Client(url)
    exp = c.api("experiments/create", {"name": "ui-demo"})["experiment_id"]
    rng = random.Random(15)
    t0 = (int(time.time()) // 60 - 60) * 60000  # an hour ago: the running run's duration is ~1 h
    out = []
    for r in range(runs):
        lr = [0.1, 0.03, 0.01, 0.003, 0.001][r % 5]
        run = create_run(c, exp, f"resnet-lr{lr}", t0 + r * 60000, [
            {"key": "mlflow.user", "value": "alice"},
            {"key": "mlflow.source.name", "value": "train.py"},
            {"key": "mlflow.source.git.commit", "value": f"{r:02d}3f9a1c0d5e7b2a4c6e8f0a1b3c5d7e9f1a2b3c4"},
            {"key": "ferry.host", "value": f"gpu-node-{r % 2}"},
            {"key": "ferry.attempt", "value": "0"},
            {"key": "ferry.checkpoints", "value": f"s3://ckpt/resnet/{r}/"}])
        rid = run["info"]["run_id"]
        pts = []
        for s in range(steps):
            loss = 2.0 / math.sqrt(s + 1) * (1 + r * 0.1) + rng.gauss(0, 0.01)
            if r == 0 and s == SPIKE_STEP:
                loss = SPIKE_VALUE
            ts = t0 + r * 60000 + s * 250
            pts.append({"key": "loss", "value": loss, "timestamp": ts, "step": s})
            pts.append({"key": "acc", "value": 1 - loss / 3, "timestamp": ts, "step": s})
            if s % 10 == 0:
                pts += [{"key": "system/cpu_utilization_percentage", "value": 50 + 30 * math.sin(s / 90),
                         "timestamp": ts, "step": s},
                        {"key": "system/system_memory_usage_megabytes", "value": 8000 + s,
                         "timestamp": ts, "step": s},
                        {"key": "system/gpu_0_utilization_percentage", "value": 90 - 20 * (s % 200 < 20),
                         "timestamp": ts, "step": s},
                        {"key": "data/train/wait_fraction", "value": 0.05 + 0.4 * (s % 200 < 20),
                         "timestamp": ts, "step": s}]
        last = pts[-2]["value"]
        log_points(c, rid, pts,
                   params=[{"key": "lr", "value": str(lr)}, {"key": "batch_size", "value": str(64 * (r + 1))},
                           {"key": "optim", "value": "sgd" if r % 2 else "adam"},
                           {"key": "epochs", "value": "10"}],
                   tags=[{"key": "summary.loss", "value": f"{last:.4f}"}])
        if r < runs - 1:
            c.api("runs/set-tag", {"run_id": rid, "key": "ferry.exit_code", "value": "0"})
            c.api("runs/update", {"run_id": rid, "status": "FINISHED",
                                  "end_time": t0 + r * 60000 + steps * 250})
        out.append(c.request("GET", f"/api/2.0/mlflow/runs/get?run_id={rid}")["run"])
    run0 = out[0]
    for step in (0, 100, 200):
        c.put_artifact(run0, f"images/samples/step-{step:08d}.png",
                       png(32, 32, lambda x, y, s=step: (x * 8 % 256, y * 8 % 256, s % 256)))
    # Run 0 was resumed once: attempt 0 stopped half-way, attempt 1 (tag ferry.attempt) finished;
    # `ferry run --track` keeps each attempt's output log.
    c.api("runs/set-tag", {"run_id": run0["info"]["run_id"], "key": "ferry.attempt", "value": "1"})
    c.put_artifact(run0, "ferry/output.log",
                   "".join(f"step {s} loss {2 / math.sqrt(s + 1):.4f}\n"
                           for s in range(0, steps // 2, 50)).encode() + b"stopped: SIGTERM\n")
    c.put_artifact(run0, "ferry/output-attempt1.log",
                   "".join(f"step {s} loss {2 / math.sqrt(s + 1):.4f}\n"
                           for s in range(steps // 2, steps, 50)).encode()
                   + b"training done\n")
    c.put_artifact(run0, "ferry/checkpoints.json", json.dumps({
        "format": 1, "run_id": "job-demo", "attempt": "0", "rank": "0",
        "outputs": [{"destination": "s3://ckpt/resnet/0/",
                     "manifest": "s3://ckpt/resnet/0/_ferry/manifest.json",
                     "synced_at": "2026-12-01T10:00:00Z", "attempt": "0", "state": "complete", "final": True,
                     "files": [{"path": "ckpt.pt", "url": "s3://ckpt/resnet/0/ckpt.pt", "size": 734003200,
                                "crc32c": "0a1b2c3d", "status": "ok"},
                               # an http(s) destination: the browser fetches the bytes itself
                               {"path": "best/model.pt", "size": 4096, "crc32c": "98dd4acc",
                                "status": "ok", "url": url + "/api/2.0/mlflow-artifacts/artifacts/"
                                + run0["info"]["artifact_uri"].split(":", 1)[1].lstrip("/")
                                + "/checkpoints/best/model.pt"}]}]}, indent=2).encode())
    weights = bytes(rng.getrandbits(8) for _ in range(200_000))
    c.put_artifact(run0, "model/weights.bin", weights)
    c.put_artifact(run0, "checkpoints/best/model.pt", b"\0" * 4096)
    return {"experiment_id": exp, "runs": out, "weights": weights}


def seed_table(url, n, threads=4, name="table"):
    """Experiment `name` with n small runs: params lr/layers, metrics loss/acc (one point each),
    tag team. Returns the experiment id."""
    exp = Client(url).api("experiments/create", {"name": name})["experiment_id"]
    local = threading.local()
    start = int(time.time() * 1000) - n * 1000

    def one(i):
        c = getattr(local, "c", None) or Client(url)
        local.c = c
        run = create_run(c, exp, f"trial-{i:05d}", start + i * 1000, user=f"user{i % 7}")
        rid = run["info"]["run_id"]
        c.api("runs/log-batch", {"run_id": rid,
            "metrics": [{"key": "loss", "value": ((i * 7919) % 10007) / 10007, "timestamp": 1, "step": 1},
                        {"key": "acc", "value": (i % 1000) / 1000, "timestamp": 1, "step": 1}],
            "params": [{"key": "lr", "value": str(10 ** -(1 + i % 4))},
                       {"key": "layers", "value": str(i % 50)}],
            "tags": [{"key": "team", "value": "vision" if i % 3 else "nlp"}]})
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(n)))
    return exp


def seed_tracked(url, spool_dir):
    """A run logged by ferry.track itself (python/ferry, stdlib only): config, metrics and
    run.log_image at three steps under the key "samples/val", so the UI is tested on the
    artifact layout the client really writes. Returns the run id."""
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import ferry.track as track
    run = track.init(project="ui-track", name="tracked", config={"lr": 0.1, "optim": {"name": "sgd"}},
                     url=url, spool_dir=str(spool_dir), data_interval=0)
    for step in range(30):
        run.log({"loss": 1 / (step + 1)}, step=step)
        if step % 10 == 0:
            image = png(16, 16, lambda x, y, s=step: (s * 8, x * 16, y * 16))
            run.log_image(image, key="samples/val", step=step)
    # One loader sample, as ferry.track logs a ferry.data.timed meter's window: a single point
    # at the run's current step (its chart must still show it).
    Client(url).api("runs/log-batch", {"run_id": run.run_id, "metrics": [
        {"key": "data/train/batches_per_second", "value": 57.0, "timestamp": int(time.time() * 1000),
         "step": 29}]})
    run.finish()
    return run.run_id
