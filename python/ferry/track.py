"""`ferry.track`: a small W&B-like client for the MLflow tracking API of `ferry serve`.

    run = ferry.track.init(project="resnet", config={"lr": 0.1, "opt": {"name": "sgd"}})
    for step in range(1000):
        run.log({"loss": loss, "acc": {"top1": top1}})
    run.log_artifact("ckpt.pt")
    run.finish()

Pure Python (stdlib only). `run.log` never blocks on the network: points go to a queue that a
spooler thread writes to an on-disk spool every 0.2 s (JSON lines, one file per batch of at
most 1,000 points), and a sender thread sends the spool with `runs/log-batch` about once a
second. A batch file is deleted only after the server acknowledged it; failed sends (connection
errors, timeouts, 5xx, 429) are retried with backoff and a warning, so a server restart mid-run
loses nothing, and a resent batch never duplicates points (the server drops points equal in
key, value, timestamp and step). `init` gives the server 0.8 s: a server that is down or hung
is a warning, and the sender creates the run when it answers. `offline=True` only writes the
spool; `sync(spool_dir, url)` or `python -m ferry.track sync DIR --url URL` uploads it later.
Semantics: docs/semantics/mlflow.md.

What can still be lost: points logged in the last ~0.2 s before the process is killed with
SIGKILL (they are in memory, not yet in the spool), and, while the spool cannot be written (a
full disk: said at once), the points held in memory. A normal exit, an exception and SIGTERM
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
from ._track_client import (MAX_METRICS, TrackError, _artifact_dir, _Client, _create_run,
                            _find_or_create_run, _log_params, _param_value, _remote_size,
                            _retryable, _send_points, _set_tags, _upload_artifact, _with_retry)
from ._track_images import artifact_name, encode_png, image_bytes
from ._track_spool import _Spool, default_spool_root
# sync, set_retention and the command line (`python -m ferry.track`) live in _track_sync.py.
from ._track_sync import _finish_remote, main, set_retention, sync  # noqa: F401

__all__ = ["init", "sync", "set_retention", "Run", "TrackError", "encode_png"]

SEND_INTERVAL = 1.0     # seconds between log-batch calls while points trickle in
SPOOL_INTERVAL = 0.2    # seconds between spool writes: what a SIGKILL of training can lose
START_TIMEOUT = 0.8     # seconds init() gives the server before the run is created later
MAX_HELD = 200_000      # points kept in memory while the spool cannot be written
CLIENT_ID_TAG = "ferry.track.client_id"       # finds a run whose creation answer was lost
SPOOL_ERROR_TAG = "ferry.track.spool_error"   # set while the client's spool cannot be written
DATA_INTERVAL = 10.0    # seconds between data-stall samples (ferry.data.timed meters)
SYSTEM_INTERVAL = 10.0  # seconds between system-metric samples (as `ferry run --track`)


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


def _now_ms():
    return int(time.time() * 1000)


# ---------------------------------------------------------------- the run

class Run:
    """What `init` returns. `log`, `log_image`, `summary`, `config`, `log_artifact`, `finish`; a context
    manager (an exception finishes the run as FAILED).

    Two threads of its own, so that no server can hold up training or the spool: the spooler
    moves logged points to the on-disk spool every SPOOL_INTERVAL seconds (never touching the
    network), the sender creates the run when the server was not there at `init`, then sends
    the spool oldest first. `spool_error` (None, or why the spool cannot be written) and
    `dropped_points` (points given up: only past MAX_HELD while the spool cannot be written)
    are the run's state as the user can read it."""

    def __init__(self, project, name=None, config=None, url=None, offline=False, spool_dir=None,
                 data_interval=DATA_INTERVAL, require_server=False, system_interval=SYSTEM_INTERVAL,
                 disk_path=None):
        self.project, self.name, self.offline = project, name, offline
        if not isinstance(data_interval, numbers.Real) or data_interval < 0:
            raise ValueError(f"ferry.track: data_interval must be seconds >= 0 (0 = off), not "
                             f"{data_interval!r}")
        self.data_interval = float(data_interval)
        if not isinstance(system_interval, numbers.Real) or system_interval < 0:
            raise ValueError(f"ferry.track: system_interval must be seconds >= 0 (0 = off), not "
                             f"{system_interval!r}")
        self.system_interval = float(system_interval)
        self._disk_path = str(disk_path or os.getcwd())
        self._sampler = None
        self._next_system_sample = time.monotonic() + self.system_interval
        self._system_step = -1
        self._next_data_sample = time.monotonic() + self.data_interval
        self.config = flatten(dict(config or {}))
        self.summary = {}
        self.start_time = _now_ms()
        self.spool_error, self.dropped_points = None, 0
        self._client = None if offline else _Client(url)
        self._attached = False
        self._client_id = uuid.uuid4().hex
        tags = {**_run_tags(), CLIENT_ID_TAG: self._client_id}
        self._tags = tags
        self.run_id = self._artifact_uri = None
        if offline:
            self.run_id = "offline-" + uuid.uuid4().hex
        elif os.environ.get("MLFLOW_RUN_ID"):
            # Attached to a run its owner created (`ferry run --track`): nothing to ask the server
            # now; the artifact URI is read when an upload needs it. The owner logs the system
            # metrics (ferry run --track does), so they are not logged twice.
            self.run_id = os.environ["MLFLOW_RUN_ID"]
            self._attached = True
            self.system_interval = 0.0
        else:
            self._open(project, name, tags, require_server)
        local_id = self.run_id or "pending-" + self._client_id
        self.spool = _Spool(pathlib.Path(spool_dir) if spool_dir else default_spool_root() / local_id)
        left = self.spool.meta()
        if self.spool.batches() and (offline or self.run_id is None
                                     or left.get("run_id") != self.run_id):
            raise TrackError(f"ferry.track: {self.spool.dir} holds unsent points of another run; "
                             f"upload them with `python -m ferry.track sync {self.spool.dir}` "
                             "or pick another spool_dir")
        self._meta(run_id=None if offline else self.run_id, project=project,
                   name=name, config={k: _param_value(v) for k, v in self.config.items()},
                   start_time=self.start_time, tags=tags,
                   url=None if offline else self._client.url, offline=offline,
                   attached=self._attached, params_sent=not self.config)
        self._params_sent = not self.config
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()   # _ensure_run: the sender and log_artifact
        self._uploads = []        # (thread, path, name) of log_artifact(background=True)
        self._queue = []          # logged, not yet given to the spooler
        self._held = []           # the spooler could not write them (spool_error): sent from here
        self._spool_wake = threading.Event()
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
        self._spooler = threading.Thread(target=self._guarded, args=(self._spool_loop,),
                                         name=f"ferry.track spool {local_id}", daemon=True)
        self._thread = threading.Thread(target=self._guarded, args=(self._send_loop,),
                                        name=f"ferry.track send {local_id}", daemon=True)
        self._spooler.start()
        self._thread.start()
        atexit.register(self._atexit)

    def _open(self, project, name, tags, require_server):
        """Creates the run, giving the server START_TIMEOUT seconds; one that does not answer
        in time is the warning and a run created later by the sender (or `sync`), unless
        require_server: then it is retried for 30 s and raises."""
        if require_server:
            self.run_id, self._artifact_uri = _with_retry(
                lambda: _create_run(self._client, project, name, self.start_time, tags),
                "create the run", deadline=time.monotonic() + 30)
            return
        try:
            self.run_id, self._artifact_uri = _create_run(
                self._client.until(time.monotonic() + START_TIMEOUT), project, name,
                self.start_time, tags)
        except TrackError as e:
            if not _retryable(e):
                raise
            warnings.warn(f"{e}; logging to the spool and creating the run when the server "
                          "answers (require_server=True fails instead)", stacklevel=4)

    @property
    def artifact_uri(self):
        """The run's artifact root (None offline, or while the run is not yet created)."""
        if self._artifact_uri is None and self.run_id and not self.offline:
            self._artifact_uri = _with_retry(
                lambda: self._client.get("runs/get", {"run_id": self.run_id}),
                "get the run", deadline=time.monotonic() + 10)["run"]["info"]["artifact_uri"]
        return self._artifact_uri

    def _meta(self, **values):
        """The spool's meta.json; a spool that cannot be written is the run's spool_error."""
        try:
            self.spool.update_meta(**values)
            return True
        except OSError as e:
            self._spool_failed(e)
            return False

    def _spool_failed(self, error):
        # Said at once, then again only after a minute (a spool that fills as fast as the sender
        # empties it would say so five times a second).
        if self.spool_error is None and time.monotonic() - self._spool_warned_at > 60:
            self._spool_warned_at = time.monotonic()
            warnings.warn(f"ferry.track: cannot write the spool in {self.spool.dir}: {error}; "
                          f"points are held in memory (at most {MAX_HELD}) and sent from there; "
                          "a kill loses them", stacklevel=2)
        self.spool_error = str(error)

    _spool_warned_at = -math.inf

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
                    self._spool_wake.set()

    def _guarded(self, loop):
        """A thread's body; an unexpected error is warned about and the loop restarted."""
        while True:
            try:
                return loop()
            except Exception as e:   # noqa: BLE001 - the thread must not die silently
                warnings.warn(f"ferry.track: {threading.current_thread().name} failed: {e!r}; "
                              "retrying in 1 s")
                time.sleep(1)
                if self._give_up():
                    return

    def _spool_loop(self):
        """Queue -> spool files, every SPOOL_INTERVAL s; never waits on the network."""
        while True:
            self._spool_wake.wait(SPOOL_INTERVAL)
            self._spool_wake.clear()
            stopping = self._stop.is_set()
            self._sample_data(final=stopping)
            self._sample_system(final=stopping)
            if self._spill():
                self._wake.set()
            if stopping:
                return

    def _spill(self):
        """Moves queued (and held) points into spool files of at most MAX_METRICS points.
        Returns whether any were written. A write that fails keeps them held in memory (the
        sender sends them from there), at most MAX_HELD, the oldest given up past that."""
        with self._lock:
            points, self._held, self._queue = self._held + self._queue, [], []
        written = 0
        try:
            for i in range(0, len(points), MAX_METRICS):
                self.spool.write_batch(points[i:i + MAX_METRICS])
                written = i + len(points[i:i + MAX_METRICS])
        except OSError as e:
            self._spool_failed(e)
        else:
            if self.spool_error is not None and points:
                self.spool_error = None   # said with the next failure's warning, if any
        with self._lock:
            self._spooled_total += written
            self._held = points[written:] + self._held
            over = len(self._held) - MAX_HELD
            if over > 0:
                del self._held[:over]
                self.dropped_points += over
                self._done_total += over        # given up, said: flush does not wait for them
                warnings.warn(f"ferry.track: the spool cannot be written and the server does not "
                              f"take the points: {self.dropped_points} point(s) given up so far "
                              "(the oldest)")
            self._flush_done.notify_all()
        return written > 0

    def _send_loop(self):
        """Background: creates the run if `init` could not, then spool files and held points ->
        log-batch, oldest first; retried with backoff."""
        delay, warned = 0.25, False
        told_error = None
        while True:
            self._wake.wait(SEND_INTERVAL)
            self._wake.clear()
            stopping = self._stop.is_set() and not self._spooler.is_alive()
            if self.offline:
                with self._lock:
                    self._flush_done.notify_all()
                if stopping:
                    return
                continue
            try:
                with self._run_lock:
                    self._ensure_run()
                if self.spool_error != told_error and self.spool_error is not None:
                    _set_tags(self._client, self.run_id, {SPOOL_ERROR_TAG: self.spool_error})
                told_error = self.spool_error
                sent_all = self._send_pending()
            except TrackError as e:
                if not _retryable(e):
                    warnings.warn(f"{e}; the server refused the run; the spool is kept in "
                                  f"{self.spool.dir}")
                    with self._lock:
                        self._flush_done.notify_all()
                    return
                if not warned:
                    warnings.warn(f"{e}; retrying with backoff (unsent points are kept in "
                                  f"{self.spool.dir})")
                    warned = True
                self._stop.wait(delay) if not self._stop.is_set() else time.sleep(delay)
                if self._give_up():
                    with self._lock:
                        self._flush_done.notify_all()
                    return
                delay = min(delay * 2, 5.0)
                self._wake.set()   # retry at once after the backoff
                continue
            if warned:
                warnings.warn("ferry.track: the tracking server answers again; sending the spool")
            delay, warned = 0.25, False
            with self._lock:
                self._flush_done.notify_all()
            if stopping and sent_all:
                return

    def _ensure_run(self):
        """The run, created now when the server did not answer at `init`; then the params."""
        if self.run_id is None:
            self.run_id, self._artifact_uri = _find_or_create_run(
                self._client, self.project, self.name, self.start_time, self._tags)
            self._meta(run_id=self.run_id)
            warnings.warn(f"ferry.track: run {self.run_id} created on {self._client.url}; "
                          "sending the spool")
        if not self._params_sent:
            _log_params(self._client, self.run_id, dict(self.config))
            self._params_sent = True
            self._meta(params_sent=True)

    def log_params(self, params):
        """Adds params (nested dicts flattened with '.') to the run's config; the sender logs
        them (a param keeps its first value: another one is refused by the server)."""
        self.config.update(flatten(dict(params)))
        self._params_sent = False
        self._meta(config={k: _param_value(v) for k, v in self.config.items()}, params_sent=False)
        self._wake.set()

    def _send_pending(self):
        """Spool files, then held points; True when nothing was left."""
        for path in self.spool.pending():
            is_image = path.suffix == ".bin"
            try:
                points = [] if is_image else _Spool.read_batch(path)
            except ValueError as e:
                warnings.warn(f"ferry.track: {path} is not JSON lines ({e}); renamed *.rejected")
                os.replace(path, str(path) + ".rejected")
                continue
            except FileNotFoundError:
                continue
            try:
                if is_image:
                    _upload_artifact(self._client, self.artifact_uri, path, _Spool.image_name(path))
                else:
                    _send_points(self._client, self.run_id, points)
            except TrackError as e:
                if _retryable(e):
                    raise
                warnings.warn(f"{e}; the server refused these points, kept in {path}.rejected")
                os.replace(path, str(path) + ".rejected")
            else:
                _Spool.remove_image(path) if is_image else path.unlink()
            with self._lock:
                self._done_total += len(points)
                self._flush_done.notify_all()
        while True:
            with self._lock:
                chunk, self._held = self._held[:MAX_METRICS], self._held[MAX_METRICS:]
            if not chunk:
                return True
            try:
                _send_points(self._client, self.run_id, chunk)
            except TrackError as e:
                if _retryable(e):
                    with self._lock:
                        self._held = chunk + self._held
                    raise
                warnings.warn(f"{e}; the server refused {len(chunk)} held point(s)")
            with self._lock:
                self._done_total += len(chunk)
                self._flush_done.notify_all()

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

    def _sample_system(self, final=False):
        """Every system_interval seconds (and once when finishing), the system metrics of
        `ferry run --track` (the same C++ sampler: CPU, memory, disk, network, NVIDIA GPUs) at
        step = seconds since the run started, as there."""
        if self.system_interval <= 0:
            return
        if self._sampler is None:   # at the first round: the baseline of the rates
            try:
                from ferry import _native
                self._sampler = _native.SystemSampler(self._disk_path)
            except (ImportError, OSError) as e:
                warnings.warn(f"ferry.track: no system metrics: ferry's native module is not "
                              f"importable ({e}); pass system_interval=0 to say nothing")
                self.system_interval = 0.0
            return
        if not final and time.monotonic() < self._next_system_sample:
            return
        self._next_system_sample = time.monotonic() + self.system_interval
        now = _now_ms()
        self._system_step = max(self._system_step + 1, (now - self.start_time) // 1000)
        points = [{"k": k, "v": _json_value(v), "t": now, "s": self._system_step}
                  for k, v in self._sampler.sample()]
        if points:
            with self._lock:
                self._queue.extend(points)
                self._queued_total += len(points)

    def _give_up(self):
        return self._deadline is not None and time.monotonic() > self._deadline

    _deadline = None

    def flush(self, timeout=None):
        """Waits until every point logged so far is acknowledged (offline: spooled). Returns
        False when the timeout passed first (the points stay in the spool)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            target = self._queued_total
            self._spool_wake.set()
            self._wake.set()
            while (self._spooled_total if self.offline else self._done_total) < target \
                    or (not self.offline and (self._held or self.spool.pending())):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                if not self._thread.is_alive():
                    return False
                self._spool_wake.set()
                self._wake.set()
                self._flush_done.wait(min(left, 0.5) if left is not None else 0.5)
        return True

    # -- artifacts

    def log_artifact(self, path, name=None, delete_local=False, timeout=10, background=False):
        """Uploads a file (streamed, verified with its SHA-256) under the run's artifacts as
        `name` (default: the file's name). With delete_local=True the local file is deleted
        after the server acknowledged it and a listing shows the same size. Raises TrackError
        (the local file kept) when the server refuses it or stays unreachable for `timeout` s.
        background=True returns at once: a thread of its own uploads it (the server shows an
        artifact only once all of it arrived verified), a failure is a warning naming the file
        (kept), and `finish` waits for it within its own timeout."""
        path = pathlib.Path(path)
        name = name or path.name
        if self.offline:
            raise TrackError("ferry.track: log_artifact needs a server; not available offline")
        if self.finished:
            raise TrackError("ferry.track: run.log_artifact after run.finish()")
        if background:
            if not path.is_file():
                raise TrackError(f"ferry.track: log_artifact: {path} is not a file")
            t = threading.Thread(target=self._upload_in_background,
                                 args=(path, name, delete_local, timeout),
                                 name=f"ferry.track upload {name}", daemon=True)
            with self._lock:
                self._uploads.append((t, path, name))
            t.start()
            return self._artifact_path(name)
        return self._upload(path, name, delete_local, timeout)

    def _artifact_path(self, name):
        uri = self._artifact_uri
        return f"{_artifact_dir(uri)}/{name}" if uri else name

    def _upload_in_background(self, path, name, delete_local, timeout):
        # Until the upload succeeds, the server refuses it, or finish's deadline passes.
        while True:
            try:
                self._upload(path, name, delete_local, timeout)
                return
            except (TrackError, OSError) as e:
                retry = isinstance(e, TrackError) and _retryable(e) and not self._give_up()
                if not retry:
                    warnings.warn(f"ferry.track: background upload of {path} as {name} failed: "
                                  f"{str(e).removeprefix('ferry.track: ')}; {path} kept")
                    return

    def _upload(self, path, name, delete_local, timeout):
        deadline = time.monotonic() + timeout
        with self._run_lock:
            _with_retry(self._ensure_run, "create the run", deadline=deadline)
        uri = _with_retry(lambda: self.artifact_uri, "get the run", deadline=deadline)
        remote, size = _with_retry(
            lambda: _upload_artifact(self._client, uri, path, name),
            f"upload {path}", deadline=deadline)
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
        (HW, HWC or CHW; uint8, or floats in 0..1) encoded as PNG. Returns the artifact path.
        Raises TrackError when the spool cannot be written (the image is not kept)."""
        if self.finished:
            raise TrackError("ferry.track: run.log_image after run.finish()")
        if step is None:
            step = max(self._next_step - 1, 0)
        elif not isinstance(step, numbers.Integral) or isinstance(step, bool) or step < 0:
            raise TypeError(f"ferry.track: step must be an int >= 0, not {step!r}")
        data, ext = image_bytes(image)
        name = artifact_name(key, int(step), ext)
        try:
            self.spool.write_image(name, data)
        except OSError as e:
            self._spool_failed(e)
            raise TrackError(f"ferry.track: image {name} not kept: cannot write the spool in "
                             f"{self.spool.dir}: {e}") from None
        self._wake.set()
        return name

    # -- finishing

    def finish(self, exit_code=0, timeout=120):
        """Sends everything, sets the `summary.<key>` tags, then status FINISHED (FAILED when
        exit_code != 0) and end_time. A run attached through MLFLOW_RUN_ID keeps its status
        (its owner, e.g. `ferry run --track`, ends it). Returns within about `timeout` seconds
        whatever the server does: when it has not taken everything by then the spool is kept
        and a warning names the `sync` command."""
        if self.finished:
            return
        self.finished = True
        status = "FINISHED" if exit_code == 0 else "FAILED"
        end = _now_ms()
        self._deadline = time.monotonic() + timeout
        self._stop.set()
        self._spool_wake.set()
        self._spooler.join(min(timeout, 5))
        self._wake.set()
        ok = self.flush(max(self._deadline - time.monotonic(), 0))
        self._thread.join(min(5, max(self._deadline - time.monotonic(), 0)))
        with self._lock:
            uploads = list(self._uploads)
        for t, _, _ in uploads:
            t.join(max(self._deadline - time.monotonic(), 0))
        left = [f"{path} as {name}" for t, path, name in uploads if t.is_alive()]
        if left:
            warnings.warn(f"ferry.track: {len(left)} background upload(s) still in flight at the "
                          f"finish timeout, abandoned (the server keeps no part of them; the local "
                          f"files are kept): {', '.join(left)}")
        self._meta(summary={k: _json_value(v) for k, v in self.summary.items()},
                   status=status, end_time=end, exit_code=int(exit_code),
                   dropped_points=self.dropped_points)
        if self.offline:
            if not ok:
                warnings.warn(f"ferry.track: {len(self._held)} point(s) could not be written to "
                              f"the spool in {self.spool.dir} ({self.spool_error}); they are lost")
            return
        if ok and self.run_id is not None:
            try:
                _finish_remote(self._client.until(self._deadline + 1), self.run_id, self.summary,
                               None if self._attached else status, end,
                               deadline=self._deadline, exit_code=int(exit_code),
                               dropped=self.dropped_points)
                self.spool.remove_if_done()
                return
            except TrackError as e:
                reason = str(e).removeprefix("ferry.track: ")
        else:
            reason = "the tracking server did not acknowledge every point"
        held = f" ({len(self._held)} point(s) only in memory: lost at exit)" if self._held else ""
        warnings.warn(f"ferry.track: {reason}; the run is kept in {self.spool.dir}{held}: upload it "
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
         data_interval=DATA_INTERVAL, require_server=False, system_interval=SYSTEM_INTERVAL,
         disk_path=None):
    """Starts (or, with MLFLOW_RUN_ID set, attaches to) a run in experiment `project` on the
    server at `url` (default MLFLOW_TRACKING_URI, then FERRY_TRACK_URL); `config` (nested dicts
    flattened with '.') is logged as params. offline=True only writes the spool
    (default ~/.cache/ferry/track/<run id>/); upload it later with `sync`. Every
    `data_interval` seconds (0 = off) the data stalls measured by `ferry.data.timed` loaders are
    logged as data/<name>/wait_fraction, wait_ms_mean, wait_ms_p95, wait_ms_max and
    batches_per_second. A server that does not answer within START_TIMEOUT seconds (down,
    hung, slow) is a warning, not a wait: the run logs to the spool and the background thread
    creates it when the server answers (`run.run_id` is None until then); require_server=True
    retries for 30 s and raises TrackError instead. Every `system_interval` seconds (0 = off;
    off when attached through MLFLOW_RUN_ID, whose owner logs them) the system metrics of
    `ferry run --track` are logged as system/... (disk usage: of `disk_path`, default the
    working directory)."""
    return Run(project, name=name, config=config, url=url, offline=offline, spool_dir=spool_dir,
               data_interval=data_interval, require_server=require_server,
               system_interval=system_interval, disk_path=disk_path)


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


if __name__ == "__main__":
    sys.exit(main())
