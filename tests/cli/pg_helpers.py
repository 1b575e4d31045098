"""PostgreSQL for the tracker's CLI tests: the server the ctest fixture started
(tests/tools/postgres.sh; FERRY_PG_URL, or FERRY_PG_ENV naming its env file) and a fresh
database per test. Tests fail, never skip, without it. By hand:
  tests/tools/postgres.sh start /tmp/pg && FERRY_PG_ENV=/tmp/pg/env ... pytest tests/cli/...
"""
import os
import pathlib
import subprocess
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
POSTGRES_SH = ROOT / "tests/tools/postgres.sh"


def read_env(path):
    env = {}
    for line in open(path):
        if "=" in line:
            k, v = line.strip().split("=", 1)
            env[k] = v
    return env


def server_url():
    url = os.environ.get("FERRY_PG_URL")
    if url:
        return url
    path = os.environ.get("FERRY_PG_ENV")
    if not path or not os.path.exists(path):
        pytest.fail("no PostgreSQL: set FERRY_PG_URL or FERRY_PG_ENV (tests/tools/postgres.sh "
                    "start DIR writes DIR/env); ctest's `postgres` fixture does")
    return read_env(path)["FERRY_PG_URL"]


def psql(url, sql):
    return subprocess.run(["psql", "-X", "-v", "ON_ERROR_STOP=1", "-Atc", sql, url],
                          check=True, capture_output=True, text=True, timeout=60).stdout


def new_database(url=None, prefix="ferry"):
    """A fresh, empty database on the server; its URL."""
    url = url or server_url()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    psql(url, f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name


class OwnServer:
    """A PostgreSQL server of the test's own (for tests that kill it): start(), kill(), stop()."""

    def __init__(self, directory):
        self.dir = pathlib.Path(directory)
        self.start()
        self.url = read_env(self.dir / "env")["FERRY_PG_URL"]

    def start(self):
        subprocess.run([POSTGRES_SH, "start", self.dir], check=True, capture_output=True,
                       timeout=120)

    def kill(self):
        subprocess.run([POSTGRES_SH, "kill", self.dir], check=True, capture_output=True,
                       timeout=60)

    def stop(self):
        subprocess.run([POSTGRES_SH, "stop", self.dir], capture_output=True, timeout=60)
