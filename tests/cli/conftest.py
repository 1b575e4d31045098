"""Shared fixtures for ferry's end-to-end CLI tests.

The tests run the real ferry binary (FERRY_BIN) against the real Ceph RGW that the ctest fixture
started (FERRY_RGW_ENV names its env file). Run them through ctest, or by hand:
  tests/tools/rgw.sh start /tmp/rgw && FERRY_RGW_ENV=/tmp/rgw/env FERRY_BIN=build/dev/src/apps/ferry \
    /usr/bin/python3 -m pytest tests/cli
"""
import os
import pathlib
import subprocess
import sys
import time
import uuid

import boto3
import pytest
from botocore.config import Config

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long variants; run with FERRY_SLOW=1 (ctest -L slow)")


def _rgw():
    path = os.environ.get("FERRY_RGW_ENV")
    if not path or not os.path.exists(path):
        pytest.fail("FERRY_RGW_ENV does not name an RGW env file; run via ctest or tests/tools/rgw.sh")
    env = {}
    for line in open(path):
        if "=" in line:
            k, v = line.strip().split("=", 1)
            env[k] = v
    return env


@pytest.fixture(scope="session")
def rgw():
    return _rgw()


@pytest.fixture(scope="session")
def ferry_bin():
    path = os.path.abspath(os.environ.get("FERRY_BIN") or str(ROOT / "build/dev/src/apps/ferry"))
    if not os.path.exists(path):
        pytest.fail(f"ferry binary not found at {path}; build first or set FERRY_BIN")
    return path


ASAN_OPTIONS = "report_globals=0"
ASAN_FORK_GUARD = ROOT / "tests" / "tools" / "asan_fork_guard"


def base_env(rgw, **extra):
    """A minimal environment: RGW credentials the AWS way, nothing from the caller's AWS setup."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "AWS_ACCESS_KEY_ID": rgw["FERRY_TEST_S3_ACCESS_KEY"],
        "AWS_SECRET_ACCESS_KEY": rgw["FERRY_TEST_S3_SECRET_KEY"],
        "AWS_ENDPOINT_URL": rgw["FERRY_TEST_S3_ENDPOINT"],
        "AWS_REGION": rgw["FERRY_TEST_S3_REGION"],
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_EC2_METADATA_DISABLED": "true",
        # An ASan build registers each of its ~3 million instrumented globals (string literals,
        # sanitizer descriptors: 115 MB of .data) at every start, a third of a short command's
        # CPU: test_keys.py 79 s -> 51 s without. Overflows of globals go unnoticed here (the
        # unit tests still check them); heap, stack, use-after-free and leaks do not.
        "ASAN_OPTIONS": ASAN_OPTIONS,
    }
    env.update({k: v for k, v in extra.items() if v is not None})
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
    return env


class Ferry:
    def __init__(self, binary, rgw):
        self.binary = binary
        self.rgw = rgw

    def run(self, *args, env=None, input=None, timeout=120, check=False):
        e = base_env(self.rgw, **(env or {}))
        p = subprocess.run([self.binary, *map(str, args)], env=e, input=input,
                           capture_output=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"ferry {' '.join(map(str, args))} failed ({p.returncode}): "
                                 f"{p.stderr.decode(errors='replace')}")
        return p


@pytest.fixture(scope="session")
def ferry(ferry_bin, rgw):
    return Ferry(ferry_bin, rgw)


@pytest.fixture(scope="session")
def s3(rgw):
    """boto3, the reference S3 client, for cross-checking what ferry wrote and read."""
    return boto3.client("s3", endpoint_url=rgw["FERRY_TEST_S3_ENDPOINT"],
                        aws_access_key_id=rgw["FERRY_TEST_S3_ACCESS_KEY"],
                        aws_secret_access_key=rgw["FERRY_TEST_S3_SECRET_KEY"], region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}))


@pytest.fixture
def bucket(rgw):
    return rgw["FERRY_TEST_S3_BUCKET"]


@pytest.fixture
def prefix(bucket):
    """A fresh s3:// prefix for one test."""
    return f"s3://{bucket}/cli-{uuid.uuid4().hex[:10]}/"


def one_line_error(p):
    err = p.stderr.decode(errors="replace").strip()
    assert err, "expected an error message on stderr"
    assert len(err.splitlines()) == 1, f"error must be one line, got: {err!r}"
    return err


class Proxy:
    """tests/tools/fault_proxy.py as a context manager."""

    def __init__(self, target, tmp_path, *args):
        self.port_file = tmp_path / f"proxy-{uuid.uuid4().hex[:6]}.port"
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "tests/tools/fault_proxy.py"),
                                      "--target", target, "--port-file", str(self.port_file),
                                      "--lifetime", "300", *map(str, args)])
        port = wait_for(lambda: self.proc.poll() is not None or
                        (self.port_file.exists() and self.port_file.read_text()), "the fault proxy's port")
        assert port is not True, f"fault_proxy.py exited ({self.proc.returncode})"
        self.endpoint = f"http://127.0.0.1:{port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def fault_proxy(rgw, tmp_path):
    target = rgw["FERRY_TEST_S3_ENDPOINT"].split("://", 1)[1]
    return lambda *args: Proxy(target, tmp_path, *args)


@pytest.fixture
def no_tracking_env(monkeypatch):
    """The MLflow / ferry.track variables of the caller's environment unset."""
    for name in ("MLFLOW_TRACKING_URI", "FERRY_TRACK_URL", "MLFLOW_RUN_ID", "MLFLOW_TRACKING_TOKEN",
                 "FERRY_TRACK_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def python_env(rgw, **extra):
    """Environment for a /usr/bin/python3 child that imports ferry.data from the build."""
    env = base_env(rgw, **extra)
    env["PYTHONPATH"] = os.environ.get("FERRY_PYTHONPATH") or str(ROOT / "build/dev/python")
    preload = os.environ.get("FERRY_PY_PRELOAD")
    if preload is None and "build/dev" in env["PYTHONPATH"]:  # by hand against the ASan build
        preload = ":".join(subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True,
                                          text=True).stdout.strip() for lib in ("libasan.so", "libstdc++.so"))
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = f"{ASAN_OPTIONS}:detect_leaks=0"  # CPython's own allocations are not ours
        # GCC 12's ASan runtime can deadlock a forked child (DataLoader workers): see there.
        env["PYTHONPATH"] = f"{ASAN_FORK_GUARD}:{env['PYTHONPATH']}"
    return env


@pytest.fixture
def python(rgw, tmp_path):
    """python(code, **env) runs code in /usr/bin/python3 with ferry.data importable; returns
    the completed process (stdout/stderr as text)."""
    def run(code, check=True, timeout=300, **extra):
        script = tmp_path / f"script-{uuid.uuid4().hex[:8]}.py"
        script.write_text(code)
        p = subprocess.run(["/usr/bin/python3", str(script)], env=python_env(rgw, **extra),
                           capture_output=True, text=True, timeout=timeout)
        if check:
            assert p.returncode == 0, p.stderr[-4000:]
        return p
    return run


def wait_for(predicate, what, timeout=60):
    """The first truthy value of predicate(), polled every 50 ms; AssertionError after timeout.
    For what another process must have done before the test goes on: a fixed sleep is too short
    on the loaded CI machine (the ASan build takes 1-2 s to start there, RGW answers slowly)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} ({timeout} s)")


def wait_until_catching(pid, sig, timeout=60.0):
    """Waits until process `pid` handles `sig`: a handler (SigCgt in /proc/PID/status) or the
    signal blocked to be waited for (SigBlk: `ferry run` takes its signals with sigtimedwait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as f:
            masks = {k: int(v, 16) for k, v in (line.split()[:2] for line in f
                                                  if line.startswith(("SigCgt:", "SigBlk:")))}
        if (masks["SigCgt:"] | masks["SigBlk:"]) & (1 << (int(sig) - 1)):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not start handling signal {int(sig)} in {timeout} s")
