"""The HTTP side of `ferry.track`: MLflow REST calls to `ferry serve`, retried with backoff."""
import copy
import hashlib
import http.client
import json
import os
import socket
import time
import urllib.parse
import warnings

API = "/api/2.0/mlflow/"
ARTIFACTS_API = "/api/2.0/mlflow-artifacts/artifacts"
MAX_METRICS = 1000      # per log-batch call (docs/semantics/mlflow.md, "Logging and limits")
MAX_PARAMS = 100
MAX_TAGS = 100
DROPPED_TAG = "ferry.track.dropped_points"    # points given up (spool unwritable, server gone)
HTTP_TIMEOUT = 30       # seconds without a byte on an artifact transfer
API_TIMEOUT = 10        # seconds for a JSON call: a hung server is said within seconds


class TrackError(RuntimeError):
    """A request the server refused, or a server that stayed unreachable."""

    def __init__(self, message, status=None, body=None):
        super().__init__(message)
        self.status, self.body = status, body


def _retryable(error):
    return error.status is None or error.status >= 500 or error.status == 429


def _param_value(v):
    return v if isinstance(v, str) else \
        json.dumps(v, default=str) if isinstance(v, (list, tuple)) else str(v)


def _resolve_url(url):
    url = url or os.environ.get("MLFLOW_TRACKING_URI") or os.environ.get("FERRY_TRACK_URL")
    if not url:
        raise TrackError("ferry.track: no tracking server; pass url= or set MLFLOW_TRACKING_URI "
                         "(or FERRY_TRACK_URL) to the `ferry serve` URL, or use offline=True")
    if not url.startswith(("http://", "https://")):
        raise TrackError(f"ferry.track: tracking URL {url!r} must be http:// or https://")
    return url.rstrip("/")


# ---------------------------------------------------------------- HTTP

class _Client:
    """JSON requests to one server; every failure is a TrackError (status None: no answer)."""

    def __init__(self, url, timeout=HTTP_TIMEOUT):
        self.url = _resolve_url(url)
        parts = urllib.parse.urlsplit(self.url)
        self.https = parts.scheme == "https"
        self.netloc, self.base = parts.netloc, parts.path.rstrip("/")
        self.timeout = timeout
        self.deadline = None    # time.monotonic() by which every request must end

    def until(self, deadline):
        """This client, its requests cut short to end by `deadline` (time.monotonic())."""
        c = copy.copy(self)
        c.deadline = deadline
        return c

    def _connection(self, timeout):
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.netloc, timeout=timeout, blocksize=1 << 20)
        conn.connect()
        # As urllib3 (MLflow's client) and curl: no Nagle wait on a body's last partial segment.
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def raw(self, method, path, body=None, headers=None, timeout=None):
        what = f"{method} {self.url}{path}"
        timeout = timeout or self.timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                raise TrackError(f"ferry.track: {what} failed: no time left for it")
        conn = None
        try:
            conn = self._connection(timeout)
            headers = dict(headers or {})
            # A server started with --token-file wants a bearer token: MLflow's own variable,
            # read at each request and never put in a message.
            token = os.environ.get("MLFLOW_TRACKING_TOKEN") or os.environ.get("FERRY_TRACK_TOKEN")
            if token:
                headers["Authorization"] = f"Bearer {token}"
            conn.request(method, self.base + path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise TrackError(f"ferry.track: {what} failed: {e}") from None
        finally:
            if conn is not None:
                conn.close()
        if resp.status != 200:
            raise TrackError(f"ferry.track: {what} failed: HTTP {resp.status} "
                             f"{data[:500].decode(errors='replace')}", resp.status, data)
        return data

    def post(self, endpoint, body):
        data = json.dumps(body, allow_nan=False).encode()
        return json.loads(self.raw("POST", API + endpoint, data,
                                   {"Content-Type": "application/json"}, API_TIMEOUT) or b"{}")

    def get(self, endpoint, query):
        return json.loads(self.raw("GET", API + endpoint + "?" + urllib.parse.urlencode(query),
                                   timeout=API_TIMEOUT) or b"{}")

    def error_code(self, error):
        try:
            return json.loads(error.body).get("error_code")
        except (TypeError, ValueError, AttributeError):
            return None


def _with_retry(call, what, deadline=None):
    """call() until it succeeds; retryable failures wait 0.25 s doubling to 5 s, with one warning
    per outage. Raises the TrackError when it is not retryable or the deadline passed."""
    delay, warned = 0.25, False
    while True:
        try:
            result = call()
            if warned:
                warnings.warn(f"ferry.track: {what}: the server answers again", stacklevel=2)
            return result
        except TrackError as e:
            if not _retryable(e) or (deadline is not None and time.monotonic() + delay > deadline):
                raise
            if not warned:
                warnings.warn(f"{e}; retrying", stacklevel=2)
                warned = True
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


def _experiment_id(client, project):
    """The id of experiment `project`, or None when there is none."""
    try:
        return client.get("experiments/get-by-name",
                          {"experiment_name": project})["experiment"]["experiment_id"]
    except TrackError as e:
        if e.status != 404:
            raise
        return None


def _create_run(client, project, name, start_time, tags=None):
    """The run's (run_id, artifact_uri): experiment `project` found by name or created."""
    exp_id = _experiment_id(client, project)
    if exp_id is None:
        try:
            exp_id = client.post("experiments/create", {"name": project})["experiment_id"]
        except TrackError as e2:   # created by a concurrent process in between
            if client.error_code(e2) != "RESOURCE_ALREADY_EXISTS":
                raise
            exp_id = _experiment_id(client, project)
    body = {"experiment_id": exp_id, "start_time": start_time,
            "user_id": (tags or {}).get("mlflow.user") or os.environ.get("USER", ""),
            "tags": [{"key": k, "value": v} for k, v in (tags or {}).items()]}
    if name:
        body["run_name"] = name
    info = client.post("runs/create", body)["run"]["info"]
    return info["run_id"], info["artifact_uri"]


def _find_or_create_run(client, project, name, start_time, tags):
    """As _create_run, but first looks for the run its tag ferry.track.client_id names: a
    creation whose answer was lost (a timeout at init) is found, not made twice."""
    client_id = (tags or {}).get("ferry.track.client_id")
    if client_id:
        exp_id = _experiment_id(client, project)
        if exp_id is not None:
            found = client.post("runs/search", {
                "experiment_ids": [exp_id], "max_results": 1, "run_view_type": "ALL",
                "filter": f"tags.`ferry.track.client_id` = '{client_id}'"}).get("runs", [])
            if found:
                return found[0]["info"]["run_id"], found[0]["info"]["artifact_uri"]
    return _create_run(client, project, name, start_time, tags)


def _log_params(client, run_id, params):
    items = [{"key": k, "value": _param_value(v)} for k, v in params.items()]
    for i in range(0, len(items), MAX_PARAMS):
        client.post("runs/log-batch", {"run_id": run_id, "params": items[i:i + MAX_PARAMS]})


def _set_tags(client, run_id, tags):
    items = [{"key": k, "value": str(v)[:8000]} for k, v in tags.items()]
    for i in range(0, len(items), MAX_TAGS):
        client.post("runs/log-batch", {"run_id": run_id, "tags": items[i:i + MAX_TAGS]})


def _send_points(client, run_id, points):
    metrics = [{"key": p["k"], "value": p["v"], "timestamp": p["t"], "step": p["s"]} for p in points]
    for i in range(0, len(metrics), MAX_METRICS):
        client.post("runs/log-batch", {"run_id": run_id, "metrics": metrics[i:i + MAX_METRICS]})


def _artifact_dir(artifact_uri):
    """`mlflow-artifacts:/1/<run>/artifacts` -> `1/<run>/artifacts`."""
    if not artifact_uri.startswith("mlflow-artifacts:"):
        raise TrackError(f"ferry.track: artifact_uri {artifact_uri!r} is not served by the "
                         "tracking server (mlflow-artifacts:/...)")
    path = artifact_uri[len("mlflow-artifacts:"):]
    if path.startswith("//"):   # mlflow-artifacts://host/path
        path = path[2:].partition("/")[2]
    return path.strip("/")


def _sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _upload_artifact(client, artifact_uri, path, name):
    """Streams the file with x-ferry-sha256; returns (remote path, size)."""
    rel = _artifact_dir(artifact_uri)
    size = os.path.getsize(path)
    digest = _sha256_of(path)
    target = f"{ARTIFACTS_API}/{urllib.parse.quote(rel + '/' + name)}"
    with open(path, "rb") as f:
        client.raw("PUT", target, body=f, headers={
            "Content-Length": str(size), "x-ferry-sha256": digest,
            "Content-Type": "application/octet-stream"})
    return rel + "/" + name, size


def _remote_size(client, remote):
    parent, _, leaf = remote.rpartition("/")
    listing = json.loads(client.raw("GET", ARTIFACTS_API + "?" + urllib.parse.urlencode(
        {"path": parent})) or b"{}")
    for f in listing.get("files", []):
        if f.get("path") in (leaf, remote) and not f.get("is_dir"):
            return int(f.get("file_size", -1))
    return None
