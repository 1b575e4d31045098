"""Installing Ferry the ecosystem's way (issue 16), as a user would: `pip install ./python` into
a fresh venv (offline, Debian's setuptools and pybind11, --no-build-isolation) gives the package
with its native module in the venv's site-packages and the `ferry` binary in its bin/;
`cmake --install` puts the binary into PREFIX/bin. The test reuses the build under test
(FERRY_BUILD_DIR) so it takes seconds; the slow variant builds from nothing in build/pip, as a
user's first install does.
"""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import ROOT, python_env

BUILD_DIR = pathlib.Path(os.environ.get("FERRY_PYTHONPATH") or ROOT / "build/dev/python").resolve().parent
VERSION = re.search(r"project\(ferry VERSION ([\d.]+)", (ROOT / "CMakeLists.txt").read_text())[1]


def pip_env(rgw, **extra):
    """No PYTHONPATH (the build's package must not be what gets imported), no index (offline)."""
    env = python_env(rgw, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    for k in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS"):
        env.pop(k, None)
    return env


def make_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    return venv


def has_debug_info(path):
    p = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True,
                       check=True, timeout=60)
    return ".debug_info" in p.stdout


def check_installed(rgw, venv, tmp_path):
    """bin/ferry runs; ferry.data and ferry._native import from the venv, from another dir; the
    installed copies carry no debug info (the build's ~200 MB binary is ~8 MB without)."""
    p = subprocess.run([str(venv / "bin/ferry"), "--version"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and p.stdout.strip() == f"ferry {VERSION}", (p.stdout, p.stderr)
    env = python_env(rgw)   # keeps the ASan preload a sanitizer build needs
    env.pop("PYTHONPATH")
    code = ("import ferry.data, ferry.track, ferry._native\n"
            "print(ferry.data.__file__); print(ferry._native.__file__)")
    q = subprocess.run([str(venv / "bin/python3"), "-c", code], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr[-3000:]
    for path in q.stdout.split():
        assert path.startswith(str(venv / "lib")), q.stdout
    native = q.stdout.split()[1]
    assert has_debug_info(BUILD_DIR / "src/apps/ferry")  # the build keeps it, for profiling
    assert not has_debug_info(venv / "bin/ferry") and not has_debug_info(native)


def test_pip_install_into_a_venv_gives_the_package_and_the_binary(rgw, tmp_path):
    venv = make_venv(tmp_path)
    p = subprocess.run([str(venv / "bin/pip"), "install", "--no-build-isolation", "./python"],
                       cwd=ROOT, env=pip_env(rgw, FERRY_BUILD_DIR=str(BUILD_DIR)),
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    check_installed(rgw, venv, tmp_path)
    # And it goes again with pip: nothing of Ferry is left in the venv.
    p = subprocess.run([str(venv / "bin/pip"), "uninstall", "-y", "ferry"], env=pip_env(rgw),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert not (venv / "bin/ferry").exists()
    assert not list((venv / "lib").rglob("_native*.so"))


def test_cmake_install_puts_the_binary_into_prefix_bin(tmp_path):
    """As the README says it: `cmake --install build/release --strip`."""
    prefix = tmp_path / "prefix"
    p = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(prefix), "--strip"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([str(prefix / "bin/ferry"), "--version"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and p.stdout.strip() == f"ferry {VERSION}", (p.stdout, p.stderr)
    assert not has_debug_info(prefix / "bin/ferry")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("FERRY_SLOW"), reason="a full Release build; FERRY_SLOW=1")
def test_pip_install_from_nothing_builds_with_cmake(rgw, tmp_path):
    """What a user's first `pip install ./python` does: configure and build build/pip."""
    venv = make_venv(tmp_path)
    p = subprocess.run([str(venv / "bin/pip"), "install", "--no-build-isolation", "./python"],
                       cwd=ROOT, env=pip_env(rgw, FERRY_BUILD_DIR=None),
                       capture_output=True, text=True, timeout=7200)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    env = python_env(rgw)
    for k in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS"):   # a Release build: no ASan
        env.pop(k, None)
    q = subprocess.run([str(venv / "bin/python3"), "-c", "import ferry.data, ferry._native"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr[-3000:]
    assert subprocess.run([str(venv / "bin/ferry"), "--version"]).returncode == 0
