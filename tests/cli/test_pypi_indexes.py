"""ferry serve caching several simple indexes at once (docs/semantics/pypi.md, "Several
indexes"): PyPI and a PyTorch-style wheel index (`tests/tools/pypi_standin.py`: /whl/cu124/, HTML
only, links absolute to another path, `#sha256=` fragments, local version labels, no .metadata),
with the real pip (Debian's 23.0.1) the way ML teams call it: `--index-url
.../pypi/torch-cu124/simple/ --extra-index-url .../pypi/pypi/simple/`. nginx's access log shows
what reached upstream.
"""
import concurrent.futures
import hashlib
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from pypi_helpers import Upstream
from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIG = (2 << 30) + (1 << 20)  # 2 GiB and 1 MiB: past every 32-bit size and offset


def venv(path):
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages",
                    path], check=True)
    return path


def pip(env_dir, served, *args, timeout=300):
    env = dict(os.environ, PIP_FIND_LINKS="", PIP_CONFIG_FILE="/dev/null")
    return subprocess.run(
        [env_dir / "bin/python", "-m", "pip", "install", "--no-cache-dir",
         "--disable-pip-version-check", "--index-url", served.url + "/pypi/torch-cu124/simple/",
         "--extra-index-url", served.url + "/pypi/pypi/simple/", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=timeout)


def serve(ferry_bin, data, upstream, *extra):
    return ServeProcess(ferry_bin, data, "--pypi-upstream", f"pypi={upstream.pypi}",
                        "--pypi-upstream", f"torch-cu124={upstream.torch}",
                        "--pypi-upstream", upstream.pypi, *extra)


def wheel_gets(lines, name):
    return [line for line in lines if line.startswith("GET ") and name in line]


@pytest.fixture
def upstream(tmp_path):
    u = Upstream(tmp_path / "pypi")
    yield u
    u.stop()


def test_pip_takes_torch_from_its_index_and_the_rest_from_pypi_through_the_cache(
        ferry_bin, upstream, tmp_path):
    served = serve(ferry_bin, tmp_path / "data", upstream)
    try:
        p = pip(venv(tmp_path / "v1"), served, "ferrytorch==2.5.0+cu124")
        assert p.returncode == 0, p.stderr
        assert "ferrytorch-2.5.0+cu124" in p.stdout and "ferrydemo-beta-0.2" in p.stdout
        assert "/pypi/torch-cu124/files/ferrytorch/sha256/" in p.stdout
        cold = upstream.new_requests()
        assert wheel_gets(cold, "/whl/cu124/ferrytorch-2.5.0%2Bcu124") or \
            wheel_gets(cold, "/whl/cu124/ferrytorch-2.5.0+cu124"), cold
        assert wheel_gets(cold, "/files/ferrydemo-beta/"), cold
        # The page through Ferry keeps the sha256 of upstream's fragment; --require-hashes works.
        page = subprocess.run(["curl", "-s", served.url + "/pypi/torch-cu124/simple/ferrytorch/"],
                              capture_output=True, text=True).stdout
        good = (upstream.dir / "www/whl/cu124/ferrytorch-2.5.0+cu124-py3-none-any.whl").read_bytes()
        sha = hashlib.sha256(good).hexdigest()
        assert f"#sha256={sha}" in page and "2.5.0%2Bcu124" in page
        beta = hashlib.sha256(next((upstream.dir / "www/files/ferrydemo-beta").glob("*0.2*.whl"))
                              .read_bytes()).hexdigest()
        (tmp_path / "req.txt").write_text(f"ferrytorch==2.5.0+cu124 --hash=sha256:{sha}\n"
                                          f"ferrydemo-beta==0.2 --hash=sha256:{beta}\n")
        v2 = venv(tmp_path / "v2")
        p = pip(v2, served, "--require-hashes", "-r", tmp_path / "req.txt")
        assert p.returncode == 0, p.stderr
        assert upstream.new_requests() == [], "the second machine reached upstream"
        # The unnamed index is still at /pypi/simple/; each index has its own page counters.
        assert subprocess.run(["curl", "-sf", "-o", "/dev/null", served.url + "/pypi/simple/ferrydemo-beta/"]
                              ).returncode == 0
        metrics = subprocess.run(["curl", "-s", served.url + "/metrics"], capture_output=True,
                                 text=True).stdout
        assert re.search(r'ferry_pypi_pages_total\{result="hit",index="torch-cu124"\} [1-9]', metrics), metrics
        # A file whose bytes do not match the page's sha256: pip sees an error, nothing is
        # published; once upstream has the right bytes the next try fetches them again.
        p = pip(venv(tmp_path / "v3"), served, "ferrytorch==2.4.0+cu124")
        assert p.returncode != 0
        blobs = [b.name for b in (tmp_path / "data/cache/blobs").rglob("*") if b.is_file()]
        bad = upstream.dir / "www/whl/cu124/ferrytorch-2.4.0+cu124-py3-none-any.whl"
        good_sha = hashlib.sha256(bad.with_name(bad.name + ".good").read_bytes()).hexdigest()
        assert not any(good_sha in b for b in blobs)
        upstream.new_requests()
        shutil.copy(bad.with_name(bad.name + ".good"), bad)
        p = pip(tmp_path / "v3", served, "ferrytorch==2.4.0+cu124")
        assert p.returncode == 0, p.stderr
        assert wheel_gets(upstream.new_requests(), "ferrytorch-2.4.0")
    finally:
        served.stop()


@pytest.mark.parametrize("value", ["Torch=http://127.0.0.1:9/", "files=http://127.0.0.1:9/",
                                   "x=ftp://host/", "a=http://h/ a=http://i/"])
def test_bad_index_flags_are_one_line_usage_errors(ferry_bin, tmp_path, value):
    args = [a for v in value.split() for a in ("--pypi-upstream", v)]
    p = subprocess.run([ferry_bin, "serve", "--data", tmp_path / "d", *args], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2 and "--pypi-upstream '" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("FERRY_SLOW"),
                    reason="18 GiB through pip, 136 s on the 2-core machine: FERRY_SLOW=1 (ctest -L slow)")
def test_eight_cold_pips_of_a_2gib_wheel_make_one_upstream_download(ferry_bin, tmp_path):
    """Eight machines (fresh venvs) pip-install a 2 GiB + 1 MiB wheel at once through a cold
    cache: one upstream GET, eight good installs; a ninth machine reads nothing upstream."""
    upstream = Upstream(tmp_path / "pypi", "--big-wheel", str(BIG))
    served = serve(ferry_bin, tmp_path / "data", upstream)
    try:
        envs = [venv(tmp_path / f"m{i}") for i in range(8)]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            done = list(pool.map(lambda e: pip(e, served, "ferrytorch==2.5.1+cu124", timeout=900), envs))
        for p in done:
            assert p.returncode == 0, p.stderr[-2000:]
        gets = wheel_gets(upstream.new_requests(), "ferrytorch-2.5.1")
        assert len(gets) == 1, gets
        for e in envs:
            weights = next(e.glob("lib/python3*/site-packages/ferrytorch/weights.bin"))
            assert weights.stat().st_size == BIG
            shutil.rmtree(e)  # 2 GiB each
        again = venv(tmp_path / "again")
        p = pip(again, served, "ferrytorch==2.5.1+cu124", timeout=900)
        assert p.returncode == 0, p.stderr[-2000:]
        assert wheel_gets(upstream.new_requests(), "ferrytorch-2.5.1") == []
        hwm = int(re.search(r"VmHWM:\s+(\d+)", pathlib.Path(f"/proc/{served.proc.pid}/status")
                            .read_text()).group(1))
        print(f"ferry serve peak RSS {hwm} KiB")
    finally:
        served.stop()
        upstream.stop()
