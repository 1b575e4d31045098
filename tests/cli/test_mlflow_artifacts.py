"""MLflow artifacts in `ferry serve` (issue 14) with curl against the real binary.

The store is --data's tracker/artifacts/ (a local directory). Backs
docs/semantics/mlflow-artifacts.md: a 2 GiB streamed PUT and GET compared by sha256, a client
killed mid-PUT leaves nothing, a multipart upload of 4 parallel parts with a retried part, abort,
list and delete, and path traversal answered 400. One test runs on the suite's RGW (S3) instead.
"""
import hashlib
import json
import os
import re
import signal
import subprocess
import time

import pytest
from conftest import base_env

API = "/api/2.0/mlflow-artifacts"


class Served:
    def __init__(self, ferry_bin, data, log, env=None):
        env = env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                      "HOME": os.environ.get("HOME", "/root")}
        # stderr (the access log) goes to a file: a pipe nobody reads would block the server.
        self.log = log
        self.proc = subprocess.Popen([ferry_bin, "serve", "--data", str(data), "--listen",
                                      "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL,
                                     stderr=open(log, "wb"))
        deadline = time.monotonic() + 60  # the ASan build under load; --data on RGW
        while time.monotonic() < deadline:
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read_text())
            if m:
                self.url = m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.proc.kill()
        raise AssertionError(f"ferry serve did not start: {log.read_text()!r}")

    def curl(self, *args, input=None, check=True):
        """Runs curl; returns (status, body bytes)."""
        p = subprocess.run(["curl", "-sS", "--path-as-is", "-o", "-", "-w", "\n%{http_code}",
                            *args], input=input, capture_output=True, timeout=600)
        body, _, code = p.stdout.rpartition(b"\n")
        if check:
            assert p.returncode == 0, p.stderr
        return int(code or 0), body

    def json(self, *args, input=None):
        # A POST that writes without a token must say it is JSON (curl's default is a form).
        status, body = self.curl("-H", "Content-Type: application/json", *args, input=input)
        return status, (json.loads(body) if body.strip() else None)


@pytest.fixture
def served(ferry_bin, tmp_path):
    s = Served(ferry_bin, tmp_path / "data", tmp_path / "serve.log")
    yield s
    s.proc.send_signal(signal.SIGTERM)
    try:
        s.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        s.proc.kill()
        s.proc.wait()


def art_dir(tmp_path):
    return tmp_path / "data" / "tracker" / "artifacts"


def files_under(path):
    """Every regular file below `path` (directories left empty do not count)."""
    out = []
    for root, _, names in os.walk(path):
        out += [os.path.join(root, n) for n in names]
    return sorted(out)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def test_two_gib_put_then_get_by_sha256(served, tmp_path):
    url = served.url + API + "/artifacts/1/run1/artifacts/ckpt.bin"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # Streamed from /dev/urandom through tee: the source never touches the disk; curl sends it
    # chunked (no Content-Length), the server streams it into the store.
    script = f"""set -euo pipefail
sha256sum < {fifo} > {tmp_path}/put.sum &
head -c 2147483648 /dev/urandom | tee {fifo} | curl -sS --fail -T - -o /dev/null '{url}'
wait
curl -sS --fail '{url}' | sha256sum > {tmp_path}/get.sum
"""
    subprocess.run(["bash", "-c", script], check=True, timeout=900)
    put = (tmp_path / "put.sum").read_text().split()[0]
    get = (tmp_path / "get.sum").read_text().split()[0]
    assert put == get
    stored = art_dir(tmp_path) / "1/run1/artifacts/ckpt.bin"
    assert stored.stat().st_size == 2 << 30
    # A ranged read of the same object.
    status, body = served.curl("-H", "Range: bytes=1073741824-1073741833", url)
    assert status == 206 and len(body) == 10
    with open(stored, "rb") as f:
        f.seek(1 << 30)
        assert body == f.read(10)


def test_client_killed_mid_put_leaves_nothing(served, tmp_path):
    url = served.url + API + "/artifacts/1/run1/artifacts/partial.bin"
    src = tmp_path / "src.bin"
    with open(src, "wb") as f:
        f.write(os.urandom(64 << 20))
    # With Content-Length (from a file) and chunked (from a pipe), slowed down, then killed.
    for args in (["-T", str(src)], ["-T", "-"]):
        stdin = open(src, "rb") if args[1] == "-" else subprocess.DEVNULL
        p = subprocess.Popen(["curl", "-sS", "--limit-rate", "8M", *args, url], stdin=stdin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        p.kill()
        p.wait()
        # The server drops what it received once it sees the connection gone: polled, not a
        # fixed 0.5 s (a loaded machine can take longer); what is left must be nothing.
        deadline = time.monotonic() + 60
        while files_under(art_dir(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert files_under(art_dir(tmp_path)) == []
        status, _ = served.curl(url)
        assert status == 404
    status, listing = served.json(served.url + API + "/artifacts?path=1/run1/artifacts")
    assert status == 200 and listing.get("files", []) == []


def test_checksum_headers_are_verified(served, tmp_path):
    url = served.url + API + "/artifacts/x/model.bin"
    data = os.urandom(1 << 20)
    (tmp_path / "m.bin").write_bytes(data)
    good = hashlib.sha256(data).hexdigest()
    status, body = served.curl("-T", str(tmp_path / "m.bin"), "-H", "x-ferry-sha256: " + "0" * 64,
                               url)
    assert status == 400 and b"sha256" in body
    assert served.curl(url)[0] == 404
    status, _ = served.curl("-T", str(tmp_path / "m.bin"), "-H", "x-ferry-sha256: " + good, url)
    assert status == 200
    status, body = served.curl(url)
    assert status == 200 and body == data


def _parts(data, part_size):
    return [data[i:i + part_size] for i in range(0, len(data), part_size)]


@pytest.mark.parametrize("declare_size", [True, False], ids=["direct", "staged"])
def test_multipart_four_parallel_parts_one_retried(served, tmp_path, declare_size):
    part_size = 16 << 20  # a multiple of 8 MiB: direct into the store's part writer
    data = os.urandom(3 * part_size + 12345)
    parts = _parts(data, part_size)
    for i, p in enumerate(parts, 1):
        (tmp_path / f"part{i}").write_bytes(p)
    (tmp_path / "wrong").write_bytes(os.urandom(part_size))
    path = "1/run1/artifacts/model/ckpt.pt"
    req = {"path": "/local/ckpt.pt", "num_parts": 4}
    if declare_size:
        req.update(size=len(data), part_size=part_size)
    status, created = served.json("-X", "POST", "--data-binary", json.dumps(req),
                                  served.url + API + "/mpu/create/" + path)
    assert status == 200, created
    assert created["direct"] == declare_size
    upload_id = created["upload_id"]
    urls = {c["part_number"]: c["url"] for c in created["credentials"]}
    assert sorted(urls) == [1, 2, 3, 4]
    assert urls[1].startswith(served.url + API + "/mpu/part/" + upload_id + "/")

    # Part 2 first goes up with the wrong bytes (and is sent again below); part 3's first attempt
    # is killed mid-body. Then all four in parallel.
    assert served.curl("-T", str(tmp_path / "wrong"), urls[2])[0] == 200
    p = subprocess.Popen(["curl", "-sS", "--limit-rate", "4M", "-T", str(tmp_path / "part3"),
                          urls[3]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    p.kill()
    p.wait()
    time.sleep(0.3)
    status, state = served.json(served.url + API + "/mpu/" + upload_id)
    assert status == 200
    assert [x["part_number"] for x in state["parts"]] == [2]  # the killed part is not reported
    procs = [subprocess.Popen(["curl", "-sS", "-D", str(tmp_path / f"h{i}"), "-o", "/dev/null",
                               "-w", "%{http_code}", "-T", str(tmp_path / f"part{i}"), urls[i]],
                              stdout=subprocess.PIPE) for i in range(1, 5)]
    codes = [pr.communicate(timeout=300)[0] for pr in procs]
    assert codes == [b"200"] * 4
    etags = {}
    for i in range(1, 5):
        m = re.search(r"(?im)^etag:\s*(\S+)", (tmp_path / f"h{i}").read_text())
        etags[i] = m.group(1)
        assert re.fullmatch(r'"[0-9a-f]{8}"', etags[i]), etags[i]   # the part's CRC32C
    status, state = served.json(served.url + API + "/mpu/" + upload_id)
    assert [x["part_number"] for x in state["parts"]] == [1, 2, 3, 4]
    assert {x["part_number"]: x["etag"] for x in state["parts"]} == \
        {i: e.strip('"') for i, e in etags.items()}
    # Nothing is visible before complete.
    assert served.curl(served.url + API + "/artifacts/" + path)[0] == 404
    done = {"path": "/local/ckpt.pt", "upload_id": upload_id,
            "parts": [{"part_number": i, "etag": etags[i]} for i in range(1, 5)]}
    status, _ = served.json("-X", "POST", "--data-binary", json.dumps(done),
                            served.url + API + "/mpu/complete/" + path)
    assert status == 200
    subprocess.run(["bash", "-c", f"curl -sS --fail '{served.url}{API}/artifacts/{path}' "
                    f"| sha256sum > {tmp_path}/get.sum"], check=True)
    assert (tmp_path / "get.sum").read_text().split()[0] == hashlib.sha256(data).hexdigest()
    assert files_under(art_dir(tmp_path)) == [str(art_dir(tmp_path) / path)]


def test_multipart_abort_leaves_nothing(served, tmp_path):
    (tmp_path / "p").write_bytes(os.urandom(1 << 20))
    path = "1/run1/artifacts/aborted.bin"
    status, created = served.json("-X", "POST", "--data-binary", '{"num_parts": 2}',
                                  served.url + API + "/mpu/create/" + path)
    assert status == 200
    url = created["credentials"][0]["url"]
    assert served.curl("-T", str(tmp_path / "p"), url)[0] == 200
    status, _ = served.json("-X", "POST", "--data-binary",
                            json.dumps({"upload_id": created["upload_id"]}),
                            served.url + API + "/mpu/abort/" + path)
    assert status == 200
    assert served.curl(served.url + API + "/artifacts/" + path)[0] == 404
    assert served.curl(served.url + API + "/mpu/" + created["upload_id"])[0] == 404
    assert files_under(art_dir(tmp_path)) == []


def test_list_and_delete(served, tmp_path):
    base = served.url + API + "/artifacts/"
    for name, body in [("r/a.txt", b"hello"), ("r/d/b.bin", b"12"), ("r/d/e/c", b"x")]:
        assert served.curl("-X", "PUT", "--data-binary", body, base + name)[0] == 200
    status, listing = served.json(served.url + API + "/artifacts?path=r")
    assert status == 200
    assert listing == {"files": [{"path": "a.txt", "is_dir": False, "file_size": 5},
                                 {"path": "d", "is_dir": True}]}
    status, listing = served.json(served.url + API + "/artifacts?path=r/d")
    assert [f["path"] for f in listing["files"]] == ["b.bin", "e"]
    assert served.curl("-X", "DELETE", base + "r/d")[0] == 200
    status, listing = served.json(served.url + API + "/artifacts?path=r")
    assert [f["path"] for f in listing["files"]] == ["a.txt"]
    assert served.curl("-X", "DELETE", base + "r/a.txt")[0] == 200
    assert served.curl(base + "r/a.txt")[0] == 404


def test_traversal_is_400(served, tmp_path):
    (tmp_path / "outside").write_text("secret")
    for target in [API + "/artifacts/../../outside", API + "/artifacts/a/%2e%2e/%2e%2e/x",
                   API + "/artifacts/a%2f..%2f..%2fx", API + "/artifacts?path=../..",
                   API + "/artifacts?path=/etc", API + "/mpu/create/../x",
                   API + "/artifacts/.ferry-mpu/x"]:
        for method in ("GET", "PUT", "DELETE", "POST"):
            status, _ = served.curl("-X", method, "--data-binary", "x", served.url + target)
            assert status in (400, 405), (method, target, status)
            if method == "GET":
                assert status == 400, target
    assert (tmp_path / "outside").read_text() == "secret"


def test_on_s3_put_multipart_list_delete(ferry_bin, rgw, prefix, s3, bucket, tmp_path):
    """The same API with an S3 store (Ceph RGW) as --data: direct parts become S3 multipart."""
    s = Served(ferry_bin, prefix, tmp_path / "serve.log", env=base_env(rgw))
    try:
        key_root = prefix[len(f"s3://{bucket}/"):] + "tracker/artifacts/"
        data = os.urandom(40 << 20)
        (tmp_path / "a.bin").write_bytes(data)
        base = s.url + API + "/artifacts/"
        assert s.curl("-T", str(tmp_path / "a.bin"), "-H",
                      "x-ferry-sha256: " + hashlib.sha256(data).hexdigest(), base + "r/a.bin")[0] == 200
        status, body = s.curl(base + "r/a.bin")
        assert status == 200 and body == data
        part_size = 16 << 20
        status, created = s.json("-X", "POST", "--data-binary",
                                 json.dumps({"num_parts": 3, "size": len(data),
                                             "part_size": part_size}),
                                 s.url + API + "/mpu/create/r/big.bin")
        assert status == 200 and created["direct"]
        for i, part in enumerate(_parts(data, part_size), 1):
            (tmp_path / f"p{i}").write_bytes(part)
        procs = [subprocess.Popen(["curl", "-sS", "--fail", "-o", "/dev/null", "-T",
                                   str(tmp_path / f"p{c['part_number']}"), c["url"]])
                 for c in reversed(created["credentials"])]
        assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
        assert s.curl(base + "r/big.bin")[0] == 404
        status, _ = s.json("-X", "POST", "--data-binary",
                           json.dumps({"upload_id": created["upload_id"]}),
                           s.url + API + "/mpu/complete/r/big.bin")
        assert status == 200
        got = s3.get_object(Bucket=bucket, Key=key_root + "r/big.bin")["Body"].read()
        assert hashlib.sha256(got).hexdigest() == hashlib.sha256(data).hexdigest()
        status, listing = s.json(s.url + API + "/artifacts?path=r")
        assert [f["path"] for f in listing["files"]] == ["a.bin", "big.bin"]
        assert s.curl("-X", "DELETE", base + "r")[0] == 200
        left = s3.list_objects_v2(Bucket=bucket, Prefix=key_root).get("Contents", [])
        assert left == []
        uploads = s3.list_multipart_uploads(Bucket=bucket, Prefix=key_root).get("Uploads", [])
        assert uploads == []
    finally:
        s.proc.send_signal(signal.SIGTERM)
        s.proc.wait(timeout=60)
