"""`ferry.track`: a small W&B-like client for the MLflow tracking API of `ferry serve`.

    run = ferry.track.init(project="resnet", config={"lr": 0.1, "opt": {"name": "sgd"}})
    for step in range(1000):
        run.log({"loss": loss, "acc": {"top1": top1}})
    run.log_artifact("ckpt.pt")
    run.finish()

Pure Python (stdlib only). `run.log` never blocks on the network: points go to a queue that a
background thread writes to an on-disk spool (JSON lines, one file per batch of at most 1,000
points) and sends with `runs/log-batch` about once a second. A batch file is deleted only after
the server acknowledged it; failed sends (connection errors, 5xx, 429) are retried with
backoff and a warning, so a server restart mid-run loses nothing, and a resent batch never
duplicates points (the server drops points equal in key, value, timestamp and step).
`offline=True` only writes the spool; `sync(spool_dir, url)` or
`python -m ferry.track sync DIR --url URL` uploads it later. Semantics: docs/semantics/mlflow.md.

What can still be lost: points logged in the last ~second before the process is killed with
SIGKILL (they are in memory, not yet in the spool). A normal exit, an exception and SIGTERM
(through atexit) flush them.
"""
import atexit
import getpass
import math
import numbers
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time
import uuid
import warnings

from ._stall import live_meters
from ._track_client import (MAX_METRICS, TrackError, _Client, _create_run, _log_params,
                            _param_value, _remote_size, _retryable, _send_points, _set_tags,
                            _upload_artifact, _with_retry)
from ._track_images import artifact_name, encode_png, image_bytes
from ._track_spool import _Spool, default_spool_root

__all__ = ["init", "sync", "set_retention", "Run", "TrackError", "encode_png"]

SEND_INTERVAL = 1.0     # seconds between log-batch calls while points trickle in
DATA_INTERVAL = 10.0    # seconds between data-stall samples (ferry.data.timed meters)


# ---------------------------------------------------------------- small pure helpers

def flatten(d, prefix=""):
    """{"a": {"b": 1}, "c": 2} -> {"a.b": 1, "c": 2}."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _number(key, value):
    """A metric value as float; TypeError for anything that is not a real number."""
    if isinstance(value, (str, bytes)) or value is None or isinstance(value, complex):
        raise TypeError(f"ferry.track: run.log value for {key!r} is {type(value).__name__} "
                        f"({value!r:.40}), not a number; log strings with run.config or tags")
    if isinstance(value, numbers.Real):
        return float(value)
    if hasattr(value, "item"):          # numpy / torch scalars
        return _number(key, value.item())
    raise TypeError(f"ferry.track: run.log value for {key!r} is {type(value).__name__}, not a number")


def _json_value(v):
    """Metric values as MLflow's JSON: non-finite ones as "NaN", "Infinity", "-Infinity"."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def _from_json_value(v):
    return float(v) if isinstance(v, str) else v


def _now_ms():
    return int(time.time() * 1000)


# ---------------------------------------------------------------- the run

class Run:
    """What `init` returns. `log`, `log_image`, `summary`, `config`, `log_artifact`, `finish`; a context
    manager (an exception finishes the run as FAILED)."""

    def __init__(self, project, name=None, config=None, url=None, offline=False, spool_dir=None,
                 data_interval=DATA_INTERVAL):
        self.project, self.name, self.offline = project, name, offline
        if not isinstance(data_interval, numbers.Real) or data_interval < 0:
            raise ValueError(f"ferry.track: data_interval must be seconds >= 0 (0 = off), not "
                             f"{data_interval!r}")
        self.data_interval = float(data_interval)
        self._next_data_sample = time.monotonic() + self.data_interval
        self.config = flatten(dict(config or {}))
        self.summary = {}
        self.start_time = _now_ms()
        self._client = None if offline else _Client(url)
        self._attached = False
        tags = _run_tags()
        if offline:
            self.run_id = "offline-" + uuid.uuid4().hex
            self.artifact_uri = None
        elif os.environ.get("MLFLOW_RUN_ID"):
            self.run_id = os.environ["MLFLOW_RUN_ID"]
            info = _with_retry(lambda: self._client.get("runs/get", {"run_id": self.run_id}),
                               "get the run", deadline=time.monotonic() + 30)["run"]["info"]
            self.artifact_uri = info["artifact_uri"]
            self._attached = True
        else:
            self.run_id, self.artifact_uri = _with_retry(
                lambda: _create_run(self._client, project, name, self.start_time, tags),
                "create the run", deadline=time.monotonic() + 30)
        self.spool = _Spool(pathlib.Path(spool_dir) if spool_dir else default_spool_root() / self.run_id)
        left = self.spool.meta()
        if self.spool.batches() and (offline or left.get("run_id") != self.run_id):
            raise TrackError(f"ferry.track: {self.spool.dir} holds unsent points of another run; "
                             f"upload them with `python -m ferry.track sync {self.spool.dir}` "
                             "or pick another spool_dir")
        self.spool.update_meta(run_id=None if offline else self.run_id, project=project,
                               name=name, config={k: _param_value(v) for k, v in self.config.items()},
                               start_time=self.start_time, tags=tags,
                               url=None if offline else self._client.url, offline=offline,
                               attached=self._attached)
        if self.config and not offline:
            _with_retry(lambda: _log_params(self._client, self.run_id, self.config), "log params",
                        deadline=time.monotonic() + 60)
        self._lock = threading.Lock()
        self._queue = []
        self._wake = threading.Event()
        self._flush_done = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._queued_total = 0
        self._spooled_total = 0
        self._done_total = 0
        self._next_step = 0
        self._last_step = {}
        self._warned_keys = set()
        self.finished = False
        self._thread = threading.Thread(target=self._loop, name=f"ferry.track {self.run_id}",
                                        daemon=True)
        self._thread.start()
        atexit.register(self._atexit)

    # -- logging

    def log(self, data, step=None):
        """Queues the points of `data` (nested dicts flattened with '.'); returns at once."""
        if self.finished:
            raise TrackError("ferry.track: run.log after run.finish()")
        values = {k: _number(k, v) for k, v in flatten(data).items()}
        if step is None:
            step = self._next_step
        elif not isinstance(step, numbers.Integral) or isinstance(step, bool):
            raise TypeError(f"ferry.track: step must be an int, not {type(step).__name__}")
        step = int(step)
        self._next_step = max(self._next_step, step + 1)
        self._log_points(values, step)

    def _log_points(self, values, step):
        t = _now_ms()
        points = []
        for k, v in values.items():
            last = self._last_step.get(k)
            if last is not None and step < last:
                if k not in self._warned_keys:
                    self._warned_keys.add(k)
                    warnings.warn(f"ferry.track: step {step} for {k!r} is lower than its last step "
                                  f"{last}; the point is ignored (warned once per key)", stacklevel=3)
                continue
            self._last_step[k] = step
            self.summary[k] = v
            points.append({"k": k, "v": _json_value(v), "t": t, "s": step})
        if points:
            with self._lock:
                self._queue.extend(points)
                self._queued_total += len(points)
                if len(self._queue) >= MAX_METRICS:
                    self._wake.set()

    def _loop(self):
        """The sender thread; an unexpected error (a full disk) is warned about, not fatal."""
        while True:
            try:
                return self._send_loop()
            except Exception as e:   # noqa: BLE001 - the thread must not die silently
                warnings.warn(f"ferry.track: the sender thread failed: {e!r}; retrying in 1 s")
                time.sleep(1)
                if self._give_up():
                    return

    def _send_loop(self):
        """Background: queue -> spool files -> log-batch, oldest first; retried with backoff."""
        delay, warned = 0.25, False
        while True:
            self._wake.wait(SEND_INTERVAL)
            self._wake.clear()
            stopping = self._stop.is_set()   # set before finish's wake: this round sends all
            self._sample_data(final=stopping)
            self._spill()
            if self.offline:
                with self._lock:
                    self._flush_done.notify_all()
                if stopping:
                    return
                continue
            for path in self.spool.pending():
                is_image = path.suffix == ".bin"
                try:
                    points = [] if is_image else _Spool.read_batch(path)
                except ValueError as e:
                    warnings.warn(f"ferry.track: {path} is not JSON lines ({e}); renamed *.rejected")
                    os.replace(path, str(path) + ".rejected")
                    continue
                try:
                    if is_image:
                        _upload_artifact(self._client, self.artifact_uri, path,
                                         _Spool.image_name(path))
                    else:
                        _send_points(self._client, self.run_id, points)
                except TrackError as e:
                    if _retryable(e):
                        if not warned:
                            warnings.warn(f"{e}; retrying with backoff (unsent points are kept in "
                                          f"{self.spool.dir})")
                            warned = True
                        if self._stop.is_set():
                            time.sleep(delay)     # finishing: back off, then retry
                        else:
                            self._stop.wait(delay)
                        if self._give_up():
                            with self._lock:
                                self._flush_done.notify_all()
                            return
                        delay = min(delay * 2, 5.0)
                        self._wake.set()   # retry at once after the backoff
                        break
                    warnings.warn(f"{e}; the server refused these points, kept in {path}.rejected")
                    os.replace(path, str(path) + ".rejected")
                    with self._lock:
                        self._done_total += len(points)
                        self._flush_done.notify_all()
                    continue
                if warned:
                    warnings.warn("ferry.track: the tracking server answers again; sending the spool")
                delay, warned = 0.25, False
                _Spool.remove_image(path) if is_image else path.unlink()
                with self._lock:
                    self._done_total += len(points)
                    self._flush_done.notify_all()
                self._spill()
            else:
                with self._lock:
                    self._flush_done.notify_all()
                if stopping:
                    return

    def _sample_data(self, final=False):
        """Every data_interval seconds (and once when finishing), logs each live
        ferry.data.timed meter's window as data/<name>/<stat> at the current step."""
        if self.data_interval <= 0 or (not final and time.monotonic() < self._next_data_sample):
            return
        self._next_data_sample = time.monotonic() + self.data_interval
        values = {}
        for meter in live_meters():
            window = meter.window()
            if window:
                values.update({f"data/{meter.name}/{k}": v for k, v in window.items()})
        if values:
            self._log_points(values, max(self._next_step - 1, 0))

    def _give_up(self):
        return self._deadline is not None and time.monotonic() > self._deadline

    _deadline = None

    def _spill(self):
        """Moves queued points into spool files of at most MAX_METRICS points."""
        with self._lock:
            queue, self._queue = self._queue, []
        for i in range(0, len(queue), MAX_METRICS):
            self.spool.write_batch(queue[i:i + MAX_METRICS])
        with self._lock:
            self._spooled_total += len(queue)

    def flush(self, timeout=None):
        """Waits until every point logged so far is acknowledged (offline: spooled). Returns
        False when the timeout passed first (the points stay in the spool)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            target = self._queued_total
            self._wake.set()
            while (self._spooled_total if self.offline else self._done_total) < target \
                    or (not self.offline and self.spool.pending()):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                if not self._thread.is_alive():
                    return False
                self._wake.set()
                self._flush_done.wait(min(left, 0.5) if left is not None else 0.5)
        return True

    # -- artifacts

    def log_artifact(self, path, name=None, delete_local=False, timeout=10):
        """Uploads a file (streamed, verified with its SHA-256) under the run's artifacts as
        `name` (default: the file's name). With delete_local=True the local file is deleted
        after the server acknowledged it and a listing shows the same size. Raises TrackError
        (the local file kept) when the server refuses it or stays unreachable for `timeout` s."""
        path = pathlib.Path(path)
        name = name or path.name
        if self.offline:
            raise TrackError("ferry.track: log_artifact needs a server; not available offline")
        remote, size = _with_retry(
            lambda: _upload_artifact(self._client, self.artifact_uri, path, name),
            f"upload {path}", deadline=time.monotonic() + timeout)
        if delete_local:
            stored = _with_retry(lambda: _remote_size(self._client, remote), f"list {remote}",
                                 deadline=time.monotonic() + timeout)
            if stored != size:
                raise TrackError(f"ferry.track: {remote} has size {stored} on the server, "
                                 f"{size} here; {path} kept")
            path.unlink()
        return remote

    def log_image(self, image, key="image", step=None):
        """Queues an image as the artifact `images/<key>/step-<step:08d>.<ext>` (step default:
        the run's current step) and returns at once: the sender thread uploads it, verified
        with its SHA-256, and it waits in the spool like points until the server acknowledged
        it. `image`: a file path, PNG/JPEG bytes, a PIL image, or a numpy array / torch tensor
        (HW, HWC or CHW; uint8, or floats in 0..1) encoded as PNG. Returns the artifact path."""
        if self.finished:
            raise TrackError("ferry.track: run.log_image after run.finish()")
        if step is None:
            step = max(self._next_step - 1, 0)
        elif not isinstance(step, numbers.Integral) or isinstance(step, bool) or step < 0:
            raise TypeError(f"ferry.track: step must be an int >= 0, not {step!r}")
        data, ext = image_bytes(image)
        name = artifact_name(key, int(step), ext)
        self.spool.write_image(name, data)
        with self._lock:
            self._wake.set()
        return name

    # -- finishing

    def finish(self, exit_code=0, timeout=120):
        """Sends everything, sets the `summary.<key>` tags, then status FINISHED (FAILED when
        exit_code != 0) and end_time. A run attached through MLFLOW_RUN_ID keeps its status
        (its owner, e.g. `ferry run --track`, ends it). When the server stays unreachable for
        `timeout` seconds the spool is kept and a warning names the `sync` command."""
        if self.finished:
            return
        self.finished = True
        status = "FINISHED" if exit_code == 0 else "FAILED"
        end = _now_ms()
        self._deadline = time.monotonic() + timeout
        self._stop.set()
        self._wake.set()
        ok = self.flush(timeout)
        self._thread.join(5)
        self.spool.update_meta(summary={k: _json_value(v) for k, v in self.summary.items()},
                               status=status, end_time=end, exit_code=int(exit_code))
        if self.offline:
            return
        if ok:
            try:
                _finish_remote(self._client, self.run_id, self.summary,
                               None if self._attached else status, end,
                               deadline=self._deadline, exit_code=int(exit_code))
                self.spool.remove_if_done()
                return
            except TrackError as e:
                reason = str(e)
        else:
            reason = "the tracking server did not acknowledge every point"
        warnings.warn(f"ferry.track: {reason}; the run is kept in {self.spool.dir}: upload it "
                      f"with `python -m ferry.track sync {self.spool.dir} --url {self._client.url}`")

    def _atexit(self):
        if not self.finished:
            failed = getattr(sys, "last_type", None) is not None
            self.finish(exit_code=1 if failed else 0, timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.finish(exit_code=0 if exc_type is None else 1)
        return False


def _finish_remote(client, run_id, summary, status, end_time, deadline=None, exit_code=None):
    """Summary tags, then (for a run this client owns: status set) the exit code and status."""
    tags = {f"summary.{k}": repr(v) for k, v in summary.items()}
    if status and exit_code is not None:
        tags["ferry.exit_code"] = str(exit_code)
    if tags:
        _with_retry(lambda: _set_tags(client, run_id, tags), "set summary tags", deadline)
    if status:
        _with_retry(lambda: client.post("runs/update", {"run_id": run_id, "status": status,
                                                        "end_time": end_time}),
                    "finish the run", deadline)


def _git_commit(directory):
    """HEAD's commit of the git work tree holding `directory`, or None (no git, no repo)."""
    try:
        p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True,
                           text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = p.stdout.strip()
    return commit if p.returncode == 0 and len(commit) in (40, 64) else None


def _run_tags():
    """What MLflow's client records about where a run comes from, plus the host."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else os.getcwd()
    tags = {"mlflow.source.name": os.path.basename(script) or "python",
            "mlflow.source.type": "LOCAL", "ferry.host": socket.gethostname()}
    try:
        tags["mlflow.user"] = getpass.getuser()
    except (KeyError, OSError):
        pass
    commit = _git_commit(os.path.dirname(script) if os.path.isfile(script) else os.getcwd())
    if commit:
        tags["mlflow.source.git.commit"] = commit
    return tags


def init(project, name=None, config=None, url=None, offline=False, spool_dir=None,
         data_interval=DATA_INTERVAL):
    """Starts (or, with MLFLOW_RUN_ID set, attaches to) a run in experiment `project` on the
    server at `url` (default MLFLOW_TRACKING_URI, then FERRY_TRACK_URL); `config` (nested dicts
    flattened with '.') is logged as params. offline=True only writes the spool
    (default ~/.cache/ferry/track/<run id>/); upload it later with `sync`. Every
    `data_interval` seconds (0 = off) the data stalls measured by `ferry.data.timed` loaders are
    logged as data/<name>/wait_fraction, wait_ms_mean, wait_ms_p95, wait_ms_max and
    batches_per_second."""
    return Run(project, name=name, config=config, url=url, offline=offline, spool_dir=spool_dir,
               data_interval=data_interval)


# ---------------------------------------------------------------- integrations
# FerryTrainerCallback and FerryAccelerateTracker live in ferry/_track_integrations.py and are
# built on first use, so `import ferry.track` never imports transformers or accelerate.
_LAZY = ("FerryTrainerCallback", "FerryAccelerateTracker")


def __getattr__(name):
    """The integrations are built on first use, so `import ferry.track` never imports
    transformers or accelerate."""
    if name in _LAZY:
        from ferry import _track_integrations
        cls = _track_integrations.build(name)
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------- retention

def set_retention(project, keep_last=None, keep_best=None, metric=None, goal=None, url=None):
    """Sets the server-side checkpoint retention of experiment `project` (created if missing):
    the `ferry.retention.*` experiment tags (docs/semantics/mlflow-artifacts.md, "Retention").
    Only the settings given are changed; "" unsets one. The server applies the policy at once
    and after every checkpoint upload. Returns the experiment id; TrackError when refused."""
    client = _Client(url)
    try:
        exp_id = client.get("experiments/get-by-name",
                            {"experiment_name": project})["experiment"]["experiment_id"]
    except TrackError as e:
        if e.status != 404:
            raise
        exp_id = client.post("experiments/create", {"name": project})["experiment_id"]
    settings = {"keep_last": keep_last, "keep_best": keep_best, "metric": metric, "goal": goal}
    for key, value in settings.items():
        if value is not None:
            client.post("experiments/set-experiment-tag", {
                "experiment_id": exp_id, "key": "ferry.retention." + key, "value": str(value)})
    return exp_id


# ---------------------------------------------------------------- sync

def sync(spool_dir, url=None):
    """Uploads spooled runs: `spool_dir` is one run's spool or a directory of them. An offline
    run is created on the server then; an online one (left behind by a crash or an outage)
    gets its missing points. Returns the run ids; each spool is deleted once uploaded."""
    root = pathlib.Path(spool_dir)
    dirs = [root] if (root / "meta.json").exists() else sorted(
        p.parent for p in root.glob("*/meta.json"))
    if not dirs:
        raise TrackError(f"ferry.track: {root} holds no spooled run (no meta.json)")
    client = _Client(url)
    return [_sync_one(client, _Spool(d)) for d in dirs]


def _sync_one(client, spool):
    meta = spool.meta()
    deadline = time.monotonic() + 60
    run_id = meta.get("run_id")
    if not run_id:
        run_id, _ = _with_retry(lambda: _create_run(client, meta["project"], meta.get("name"),
                                                    meta["start_time"], meta.get("tags")),
                                "create run", deadline)
        spool.update_meta(run_id=run_id)   # a second sync after a failure reuses it
        if meta.get("config"):
            _with_retry(lambda: _log_params(client, run_id, meta["config"]), "log params", deadline)
    artifact_uri = None
    for path in spool.pending():
        if path.suffix == ".bin":
            if artifact_uri is None:
                artifact_uri = _with_retry(lambda: client.get("runs/get", {"run_id": run_id}),
                                           "get the run", deadline)["run"]["info"]["artifact_uri"]
            _with_retry(lambda: _upload_artifact(client, artifact_uri, path,
                                                 _Spool.image_name(path)),
                        f"upload {path.name}", deadline)
            _Spool.remove_image(path)
            continue
        points = _Spool.read_batch(path)
        _with_retry(lambda: _send_points(client, run_id, points), f"send {path.name}", deadline)
        path.unlink()
    if meta.get("status"):
        summary = {k: _from_json_value(v) for k, v in meta.get("summary", {}).items()}
        _finish_remote(client, run_id, summary, None if meta.get("attached") else meta["status"],
                       meta.get("end_time"), deadline, meta.get("exit_code"))
        spool.remove_if_done()
    return run_id


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(prog="python -m ferry.track")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sync", help="upload spooled runs (offline, or left by an outage)")
    s.add_argument("dir", help="one run's spool directory, or a directory of them")
    s.add_argument("--url", help="the `ferry serve` URL (default MLFLOW_TRACKING_URI)")
    r = sub.add_parser("retention", help="set an experiment's server-side checkpoint retention")
    r.add_argument("project", help="the experiment (created if missing)")
    r.add_argument("--keep-last", help="keep the N checkpoints with the highest steps")
    r.add_argument("--keep-best", help="keep the K best checkpoints by --metric")
    r.add_argument("--metric", help="the metric 'best' is measured by")
    r.add_argument("--goal", help="min (default) or max")
    r.add_argument("--url", help="the `ferry serve` URL (default MLFLOW_TRACKING_URI)")
    args = parser.parse_args(argv)
    try:
        if args.command == "retention":
            print(set_retention(args.project, args.keep_last, args.keep_best, args.metric,
                                args.goal, args.url))
            return 0
        for run_id in sync(args.dir, args.url):
            print(run_id)
    except TrackError as e:
        print(str(e).splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
