"""`ferry serve --tracker-db postgresql://...` (docs/semantics/mlflow.md, "PostgreSQL"): two
replicas on one database ingesting at once, the database going away and coming back, a bad URL,
and artifacts shared through a shared --data. The MLflow API suite itself runs on PostgreSQL
too (test_mlflow_api.py's `tracker` fixture). Needs the `postgres` ctest fixture (pg_helpers)."""
import pathlib
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

from conftest import base_env
from pg_helpers import OwnServer, new_database, psql
from serve_helpers import minimal_env, wait_for
from test_mlflow_api import Tracker, new_run


def history(tracker, run, key):
    """Every point of `key`, through get-history's pages."""
    points, token = [], None
    while True:
        query = [("run_id", run), ("metric_key", key), ("max_results", 1000)]
        if token:
            query.append(("page_token", token))
        status, body = tracker.get("metrics/get-history", query)
        assert status == 200, body
        points += [(int(m["step"]), m["value"], int(m["timestamp"])) for m in body.get("metrics", [])]
        token = body.get("next_page_token")
        if not token:
            return points


def log_batch(tracker, run, metrics, params=()):
    return tracker.post("runs/log-batch", {"run_id": run, "metrics": metrics,
                                           "params": [{"key": k, "value": v} for k, v in params]})


def test_two_replicas_ingest_one_run_without_lost_or_duplicated_points(ferry_bin, tmp_path):
    db = new_database()
    a = Tracker(ferry_bin, tmp_path / "a", "--tracker-db", db)
    b = Tracker(ferry_bin, tmp_path / "b", "--tracker-db", db)
    try:
        status, body = a.post("experiments/create", {"name": "shared"})
        assert status == 200, body
        experiment = body["experiment_id"]
        assert b.get("experiments/get-by-name", [("experiment_name", "shared")])[1][
            "experiment"]["experiment_id"] == experiment
        run = new_run(b, experiment)
        clients, batches, per_batch = 8, 12, 250
        sent = {"loss": set(), "acc": set()}
        lock = threading.Lock()

        def client(c):
            for k in range(batches):
                metrics = []
                for i in range(per_batch):
                    step = (k * per_batch + i) * clients + c
                    key = "loss" if i % 2 else "acc"
                    metrics.append({"key": key, "value": (step % 101) / 7, "timestamp": step,
                                    "step": step})
                first, other = (a, b) if (c + k) % 2 else (b, a)
                status, body = log_batch(first, run, metrics, [("lr", "0.01")])
                assert status == 200, body
                if k % 3 == 0:  # the client retries (its answer was lost) through the other one
                    status, body = log_batch(other, run, metrics, [("lr", "0.01")])
                    assert status == 200, body
                with lock:
                    for m in metrics:
                        sent[m["key"]].add((m["step"], m["value"], m["timestamp"]))

        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(client, range(clients)))
        for key in ("loss", "acc"):
            for replica in (a, b):
                got = history(replica, run, key)
                assert len(got) == len(set(got)), f"duplicated points in {key}"
                assert sorted(got) == sorted(sent[key])
            query = [("run_ids", run), ("metric_key", key), ("max_results", 200)]
            answers = [r.get("metrics/get-history-bulk-interval", query) for r in (a, b)]
            assert answers[0][0] == answers[1][0] == 200
            assert answers[0][1] == answers[1][1]
            assert 50 <= len(answers[0][1]["metrics"]) <= 200
        run_a, run_b = (r.get("runs/get", [("run_id", run)])[1]["run"] for r in (a, b))
        assert run_a["data"] == run_b["data"]
        last = clients * batches * per_batch - 1
        assert max(int(m["step"]) for m in run_a["data"]["metrics"]) == last
    finally:
        a.stop()
        b.stop()


def test_database_restart_mid_ingest_is_503_then_ingest_resumes(ferry_bin, tmp_path):
    pg = OwnServer(tmp_path / "pg")
    password = "not-used-but-secret-7c1f"  # trust authentication ignores it; it must never show
    url = pg.url.replace("postgres@", f"postgres:{password}@")
    t = Tracker(ferry_bin, tmp_path / "data", "--tracker-db", url)
    try:
        assert "postgres:[REDACTED]@127.0.0.1" in t.log()
        run = new_run(t)
        statuses, unavailable, acked = [], [], []
        stop = threading.Event()

        def ingest():  # a client that retries each batch until it is acknowledged
            k = 0
            while not stop.is_set():
                metrics = [{"key": "loss", "value": k + i / 10, "timestamp": k, "step": k * 10 + i}
                           for i in range(10)]
                status, body = log_batch(t, run, metrics)
                statuses.append(status)
                if status == 200:
                    acked.extend((m["step"], m["value"], m["timestamp"]) for m in metrics)
                    k += 1
                elif status == 503:
                    unavailable.append(body)
                    stop.wait(0.05)

        worker = threading.Thread(target=ingest)
        worker.start()
        try:
            wait_for(lambda: len(acked) >= 200, "ingest to start")
            pg.kill()
            wait_for(lambda: len(unavailable) >= 3, "503 answers while the database is down")
            # Reads fail the same way.
            status, body = t.get("runs/get", [("run_id", run)])
            assert status == 503 and body["error_code"] == "TEMPORARILY_UNAVAILABLE"
            pg.start()
            down = len(acked)
            wait_for(lambda: len(acked) >= down + 200, "ingest to resume after the restart")
        finally:
            stop.set()
            worker.join(timeout=60)
        assert set(statuses) == {200, 503}, set(statuses)
        for body in unavailable:
            assert body["error_code"] == "TEMPORARILY_UNAVAILABLE"
            assert "tracker database" in body["message"] and "\n" not in body["message"]
            assert password not in body["message"]
        got = history(t, run, "loss")
        assert len(got) == len(set(got))
        assert sorted(got) == sorted(acked)
        assert password not in t.log()
    finally:
        t.stop()
        pg.stop()


def test_unreachable_database_is_a_one_line_error_without_the_password(ferry_bin, tmp_path):
    proc = subprocess.run([ferry_bin, "serve", "--data", tmp_path, "--listen", "127.0.0.1:0",
                           "--tracker-db", "postgresql://ann:hunter2-secret@127.0.0.1:1/ferry"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "cannot open the tracker database" in err and "127.0.0.1:1/ferry" in err
    assert "hunter2" not in err


def test_replicas_share_artifacts_through_a_shared_s3_data(ferry_bin, rgw, prefix, tmp_path):
    """Artifacts live under --data, not in PostgreSQL: replicas on one s3:// --data see each
    other's artifacts (with separate local --data dirs they would not)."""
    db = new_database()
    env = base_env(rgw)
    a = Tracker(ferry_bin, prefix, "--tracker-db", db, env=env, log=tmp_path / "a.log")
    b = Tracker(ferry_bin, prefix, "--tracker-db", db, env=env, log=tmp_path / "b.log")
    try:
        run = new_run(a)
        uri = b.get("runs/get", [("run_id", run)])[1]["run"]["info"]["artifact_uri"]
        path = "/api/2.0/mlflow-artifacts/artifacts/" + uri[len("mlflow-artifacts:/"):].lstrip("/")
        status, _ = a.request(path + "/model.bin", "PUT", b"w" * 4096,
                              {"Content-Type": "application/octet-stream"})
        assert status == 200
        assert b.request(path + "/model.bin") == (200, b"w" * 4096)
        assert b.post("runs/delete", {"run_id": run})[0] == 200
        assert a.request(path + "/model.bin")[0] == 404
        status, body = a.get("runs/get", [("run_id", run)])
        assert body["run"]["info"]["lifecycle_stage"] == "deleted"
    finally:
        a.stop()
        b.stop()


def test_password_from_pgpassword_and_a_wrong_one_is_a_clear_error(ferry_bin, tmp_path):
    """The documented way to give a password (PGPASSWORD, read by libpq) works; a wrong password
    in the URL is refused with PostgreSQL's reason and never printed."""
    pg = OwnServer(tmp_path / "pg")
    try:
        psql(pg.url, "CREATE ROLE ann LOGIN PASSWORD 'right-pw-41d9'")
        psql(pg.url, "CREATE DATABASE anndb OWNER ann")
        cluster = pathlib.Path((tmp_path / "pg/cluster").read_text().strip())
        hba = cluster / "data/pg_hba.conf"
        hba.write_text("host all ann 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        psql(pg.url, "SELECT pg_reload_conf()")
        url = pg.url.replace("postgres@", "ann@").rsplit("/", 1)[0] + "/anndb"
        env = dict(minimal_env(), PGPASSWORD="right-pw-41d9")
        t = Tracker(ferry_bin, tmp_path / "data", "--tracker-db", url, env=env)
        try:
            run = new_run(t)
            assert log_batch(t, run, [{"key": "m", "value": 1, "timestamp": 1, "step": 1}])[0] == 200
            assert "right-pw" not in t.log()
        finally:
            t.stop()
        wrong = url.replace("ann@", "ann:wrong-pw-93be@")
        proc = subprocess.run([ferry_bin, "serve", "--data", tmp_path / "data2", "--listen",
                               "127.0.0.1:0", "--tracker-db", wrong], env=minimal_env(),
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0
        err = proc.stderr.strip()
        assert len(err.splitlines()) == 1, err
        assert 'password authentication failed for user "ann"' in err
        assert "wrong-pw" not in err
    finally:
        pg.stop()
