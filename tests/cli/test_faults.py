"""Transient faults between ferry and RGW, injected by tests/tools/fault_proxy.py: resets in the
middle of a download, truncated answers, trickling connections and 503 SlowDown are retried and
the data is exact; throttling is ridden out for its own time budget."""
import hashlib
import os
import re
import time

import pytest

from conftest import one_line_error

# A short stall window so the tests do not wait 30 s (docs/configuration.md).
SHORT_WINDOW = {"FERRY_LOW_SPEED_TIME": "3"}


@pytest.fixture
def object_url(ferry, prefix, tmp_path):
    payload = os.urandom(24 * 1024 * 1024)
    src = tmp_path / "obj.bin"
    src.write_bytes(payload)
    ferry.run("cp", src, prefix + "obj.bin", check=True)
    return prefix + "obj.bin", hashlib.sha256(payload).hexdigest()


def download_through(ferry, proxy, url, tmp_path):
    out = tmp_path / "out.bin"
    p = ferry.run("-v", "cp", url, out, env={"AWS_ENDPOINT_URL": proxy.endpoint})
    return p, (hashlib.sha256(out.read_bytes()).hexdigest() if out.exists() else None)


def test_connection_resets_mid_download_are_resumed(ferry, fault_proxy, object_url, tmp_path):
    url, digest = object_url
    with fault_proxy("--faults", "3", "--reset-after", str(5 * 1024 * 1024)) as proxy:
        p, got = download_through(ferry, proxy, url, tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert got == digest
    assert b"retrying GetObject" in p.stderr


def test_truncated_answers_are_resumed(ferry, fault_proxy, object_url, tmp_path):
    url, digest = object_url
    with fault_proxy("--faults", "2", "--truncate-after", str(3 * 1024 * 1024)) as proxy:
        p, got = download_through(ferry, proxy, url, tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert got == digest


def test_slowdown_503_is_retried_for_uploads_and_downloads(ferry, fault_proxy, prefix, tmp_path):
    payload = os.urandom(20 * 1024 * 1024)
    src = tmp_path / "up.bin"
    src.write_bytes(payload)
    with fault_proxy("--faults", "3", "--http-status", "503") as proxy:
        p = ferry.run("-v", "cp", src, prefix + "up.bin", env={"AWS_ENDPOINT_URL": proxy.endpoint})
        assert p.returncode == 0, p.stderr.decode()
        assert b"HTTP 503" in p.stderr and b"retrying" in p.stderr
    assert ferry.run("cat", prefix + "up.bin", check=True).stdout == payload


def test_persistent_failure_gives_up_with_clear_error(ferry, fault_proxy, bucket):
    with fault_proxy("--faults", "100", "--http-status", "500") as proxy:
        p = ferry.run("stat", f"s3://{bucket}/anything", env={"AWS_ENDPOINT_URL": proxy.endpoint})
    assert p.returncode == 1
    assert b"HTTP 500" in p.stderr


def test_throttling_beyond_its_budget_fails_naming_throttling(ferry, fault_proxy, bucket):
    with fault_proxy("--faults", "100000", "--http-status", "503") as proxy:
        start = time.monotonic()
        p = ferry.run("stat", f"s3://{bucket}/anything",
                      env={"AWS_ENDPOINT_URL": proxy.endpoint, "FERRY_THROTTLE_BUDGET": "3"}, timeout=60)
        took = time.monotonic() - start
    assert p.returncode == 1
    err = p.stderr.decode().strip().splitlines()[-1]
    assert err.startswith(f"ferry: error: HeadObject 's3://{bucket}/anything' failed: HTTP 503"), err
    assert "still throttled after" in err and "(throttle budget 3 s)" in err, err
    assert 3 <= took < 30, took
    # One warning when throttling began (not one per attempt), then the error.
    warnings = [l for l in p.stderr.decode().splitlines() if "throttled by the server" in l]
    assert len(warnings) == 1, p.stderr.decode()


def test_throttling_for_seconds_is_ridden_out(ferry, fault_proxy, prefix, tmp_path):
    """Every GET answered 503 SlowDown for 8 s (dozens of answers; the old fixed budget of six
    attempts gave up after ~2 s): the copy waits it out and the bytes are exact."""
    src = tmp_path / "src"
    src.mkdir()
    payloads = {f"f{i}.bin": os.urandom(1024 * 1024) for i in range(6)}
    for name, data in payloads.items():
        (src / name).write_bytes(data)
    ferry.run("cp", "-r", src, prefix, check=True)
    log = tmp_path / "faults.log"
    out = tmp_path / "out"
    # The listing passes; then every request is throttled for 8 s.
    with fault_proxy("--pass-first", "1", "--faults", "100000", "--fault-seconds", "8",
                     "--http-status", "503", "--fault-log", log) as proxy:
        start = time.monotonic()
        p = ferry.run("cp", "-r", prefix, out, env={"AWS_ENDPOINT_URL": proxy.endpoint}, timeout=100)
        took = time.monotonic() - start
    stderr = p.stderr.decode()
    assert p.returncode == 0, stderr
    for name, data in payloads.items():
        assert (out / name).read_bytes() == data
    faults = len(log.read_text().splitlines())
    assert faults >= 30, faults
    assert 8 <= took < 60, took
    # Said at once, then at most every 10 s: not one line per attempt.
    warnings = [l for l in stderr.splitlines() if "throttled" in l]
    assert 1 <= len(warnings) <= 3, stderr
    assert "throttled by the server" in warnings[0] and "HTTP 503 SlowDown" in warnings[0], stderr


def test_retry_after_is_honoured(ferry, fault_proxy, prefix, tmp_path):
    src = tmp_path / "small.bin"
    src.write_bytes(b"x" * 100)
    ferry.run("cp", src, prefix + "small.bin", check=True)
    with fault_proxy("--faults", "2", "--http-status", "503", "--retry-after", "2") as proxy:
        start = time.monotonic()
        p = ferry.run("-v", "stat", prefix + "small.bin", env={"AWS_ENDPOINT_URL": proxy.endpoint})
        took = time.monotonic() - start
    assert p.returncode == 0, p.stderr.decode()
    delays = [int(d) for d in re.findall(rb"retrying HeadObject in (\d+) ms", p.stderr)]
    assert len(delays) == 2 and all(d >= 2000 for d in delays), p.stderr.decode()
    assert took >= 4, took


def test_trickling_download_is_retried_from_the_first_undelivered_byte(ferry, fault_proxy, object_url,
                                                                       tmp_path):
    """A server that stops, then sends 1 byte every 0.4 s (above curl's 1 byte/s limit, so the
    old client waited forever) is abandoned after the stall window and the read resumes."""
    url, digest = object_url
    out = tmp_path / "out.bin"
    with fault_proxy("--faults", "1", "--trickle-after", str(5 * 1024 * 1024), "--stall-ms", "500",
                     "--trickle-interval", "0.4") as proxy:
        start = time.monotonic()
        p = ferry.run("cp", url, out, env={"AWS_ENDPOINT_URL": proxy.endpoint, **SHORT_WINDOW}, timeout=90)
        took = time.monotonic() - start
    stderr = p.stderr.decode()
    assert p.returncode == 0, stderr
    assert hashlib.sha256(out.read_bytes()).hexdigest() == digest
    m = re.search(r"ferry: warn: GetObject '(.*?)' at \S+: stalled \(under 1 KiB/s for 3 s\); "
                  r"retrying from byte (\d+)", stderr)
    assert m, stderr
    assert m.group(1) == url and int(m.group(2)) > 0, stderr
    assert took < 45, took


def test_trickling_upload_sends_the_part_again(ferry, fault_proxy, prefix, tmp_path, s3, bucket):
    """A part whose upload trickles (the server reads a byte every 0.4 s) is abandoned after the
    stall window and sent again whole; the object is exact."""
    payload = os.urandom(40 * 1024 * 1024)  # a multipart upload: 8 MiB parts
    src = tmp_path / "up.bin"
    src.write_bytes(payload)
    with fault_proxy("--faults", "1", "--trickle-after-up", str(3 * 1024 * 1024)) as proxy:
        start = time.monotonic()
        p = ferry.run("cp", src, prefix + "up.bin",
                      env={"AWS_ENDPOINT_URL": proxy.endpoint, **SHORT_WINDOW}, timeout=90)
        took = time.monotonic() - start
    stderr = p.stderr.decode()
    assert p.returncode == 0, stderr
    assert re.search(r"ferry: warn: UploadPart '.*?' at \S+: stalled \(under 1 KiB/s "
                     r"for 3 s\); retrying and sending part \d+ again", stderr), stderr
    key = prefix.split("/", 3)[3] + "up.bin"
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == payload
    assert took < 45, took


@pytest.mark.parametrize("check,code", [("sha256", "XAmzContentSHA256Mismatch"), ("md5", "BadDigest"),
                                        ("chunked", "SignatureDoesNotMatch")])
@pytest.mark.parametrize("size_mib", [3, 40])  # one PutObject; a multipart upload (8 MiB parts)
def test_a_body_damaged_on_the_way_is_refused_by_the_server_and_sent_again(
        ferry, fault_proxy, prefix, tmp_path, s3, bucket, check, code, size_mib):
    if check == "chunked" and size_mib == 3:
        code = "XAmzContentSHA256Mismatch"  # PutObject: its SHA-256 in the signature
    """One bit of the upload flipped between ferry and RGW (after TCP's checksum): the server
    refuses the body (its SHA-256 in the signature, a chunk's signature, or Content-MD5), ferry
    says so and sends it again, and the object is exact. FERRY_S3_BODY_CHECKSUM picks the check
    (docs/configuration.md); "chunked" applies to parts, a PutObject signs its SHA-256."""
    payload = os.urandom(size_mib * 1024 * 1024)
    src = tmp_path / "up.bin"
    src.write_bytes(payload)
    with fault_proxy("--faults", "1", "--flip-up", str(1024 * 1024)) as proxy:
        p = ferry.run("-v", "cp", src, prefix + "up.bin",
                      env={"AWS_ENDPOINT_URL": proxy.endpoint, "FERRY_S3_BODY_CHECKSUM": check})
    stderr = p.stderr.decode()
    assert p.returncode == 0, stderr
    damaged = ("the body arrived damaged, or the credentials are wrong; sent again"
               if code == "SignatureDoesNotMatch" else "the body arrived damaged; sent again")
    assert code in stderr and damaged in stderr, stderr
    key = prefix.split("/", 3)[3] + "up.bin"
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == payload


def test_a_bad_body_checksum_setting_is_a_one_line_error(ferry, prefix, tmp_path):
    src = tmp_path / "x.bin"
    src.write_bytes(b"x")
    p = ferry.run("cp", src, prefix + "x.bin", env={"FERRY_S3_BODY_CHECKSUM": "crc"})
    assert p.returncode != 0
    assert one_line_error(p) == ("ferry: error: FERRY_S3_BODY_CHECKSUM='crc': expected auto, "
                                 "chunked, sha256 or md5")


def test_slow_but_working_link_is_not_a_stall(ferry, fault_proxy, prefix, tmp_path):
    """100 KB/s is two orders of magnitude above the 1 KiB/s minimum, even in a short window."""
    payload = os.urandom(400 * 1024)
    src = tmp_path / "slow.bin"
    src.write_bytes(payload)
    ferry.run("cp", src, prefix + "slow.bin", check=True)
    out = tmp_path / "out.bin"
    with fault_proxy("--faults", "0", "--rate", "100000") as proxy:
        p = ferry.run("-v", "cp", prefix + "slow.bin", out, env={"AWS_ENDPOINT_URL": proxy.endpoint, **SHORT_WINDOW})
    assert p.returncode == 0, p.stderr.decode()
    assert out.read_bytes() == payload
    assert b"stalled" not in p.stderr and b"retrying" not in p.stderr, p.stderr.decode()


def test_malformed_stall_setting_is_an_error_naming_the_variable(ferry, bucket):
    # A configuration error, not a command-line one: exit 1 (2 is for the command line only).
    p = ferry.run("stat", f"s3://{bucket}/x", env={"FERRY_LOW_SPEED_TIME": "soon"})
    assert p.returncode == 1
    assert "FERRY_LOW_SPEED_TIME='soon'" in one_line_error(p)
