"""The after-the-fact side of `ferry.track`: uploading a spool (`sync`, an offline run or one
left by an outage or a crash), finishing a run on the server, checkpoint retention, and the
command line `python -m ferry.track sync|retention`."""
import pathlib
import sys
import time

from ._track_client import (DROPPED_TAG, TrackError, _Client, _experiment_id,
                            _find_or_create_run, _log_params, _send_points, _set_tags,
                            _upload_artifact, _with_retry)
from ._track_spool import _Spool


def _from_json_value(v):
    return float(v) if isinstance(v, str) else v


def _finish_remote(client, run_id, summary, status, end_time, deadline=None, exit_code=None,
                   dropped=0):
    """Summary tags, then (for a run this client owns: status set) the exit code and status."""
    tags = {f"summary.{k}": repr(v) for k, v in summary.items()}
    if status and exit_code is not None:
        tags["ferry.exit_code"] = str(exit_code)
    if dropped:
        tags[DROPPED_TAG] = str(dropped)
    if tags:
        _with_retry(lambda: _set_tags(client, run_id, tags), "set summary tags", deadline)
    if status:
        _with_retry(lambda: client.post("runs/update", {"run_id": run_id, "status": status,
                                                        "end_time": end_time}),
                    "finish the run", deadline)


# ---------------------------------------------------------------- retention

def set_retention(project, keep_last=None, keep_best=None, metric=None, goal=None, url=None):
    """Sets the server-side checkpoint retention of experiment `project` (created if missing):
    the `ferry.retention.*` experiment tags (docs/semantics/mlflow-artifacts.md, "Retention").
    Only the settings given are changed; "" unsets one. The server applies the policy at once
    and after every checkpoint upload. Returns the experiment id; TrackError when refused."""
    client = _Client(url)
    exp_id = _experiment_id(client, project)
    if exp_id is None:
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
        run_id, _ = _with_retry(lambda: _find_or_create_run(
            client, meta["project"], meta.get("name"), meta["start_time"], meta.get("tags")),
            "create run", deadline)
        spool.update_meta(run_id=run_id)   # a second sync after a failure reuses it
    if meta.get("config") and not meta.get("params_sent"):
        _with_retry(lambda: _log_params(client, run_id, meta["config"]), "log params", deadline)
        spool.update_meta(params_sent=True)
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
