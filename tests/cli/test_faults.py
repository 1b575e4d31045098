"""Transient faults between ferry and RGW, injected by tests/tools/fault_proxy.py: resets in the
middle of a download, truncated answers and 503 SlowDown are retried and the data is exact."""
import hashlib
import os

import pytest


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
    with fault_proxy("--faults", "100", "--http-status", "503") as proxy:
        p = ferry.run("stat", f"s3://{bucket}/anything", env={"AWS_ENDPOINT_URL": proxy.endpoint})
    assert p.returncode == 1
    assert b"HTTP 503" in p.stderr
