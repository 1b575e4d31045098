"""Builds the `ferry` Python package with CMake: `pip install --no-build-isolation ./python`.

pip runs this in the source tree (python/ of the repository). The build step configures the
repository's CMake project (Release, for this interpreter) in build/pip, builds the native module
ferry._native and the `ferry` binary, and puts the module into the package and the binary into
the install prefix's bin/ (a venv's bin/, ~/.local/bin with --user). Everything comes from
Debian's packages (setuptools, pybind11-dev, the build dependencies of scripts/install-deps.sh
--build): nothing is downloaded, hence --no-build-isolation (with isolation pip would fetch
setuptools from an index).

FERRY_BUILD_DIR=DIR uses an existing CMake build directory instead of build/pip (it is built,
not reconfigured), e.g. build/release of a developer's checkout.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
BINARY = "build/ferry-bin/ferry"  # relative to HERE: written by build_ext, installed as bin/ferry


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(ferry VERSION ([\d.]+)", text)[1]


class CMakeBuild(build_ext):
    """Builds ferry._native and the ferry binary with the repository's CMake project."""

    def build_extension(self, ext):
        given = os.environ.get("FERRY_BUILD_DIR")
        build = pathlib.Path(given).resolve() if given else ROOT / "build" / "pip"
        if not given:
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=RelWithDebInfo", f"-DPython_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "ferry_native", "ferry",
                               "-j", jobs])
        native = sorted((build / "python" / "ferry").glob("_native*.so"))
        if not native:
            raise RuntimeError(f"no ferry/_native*.so in {build}/python after the build")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(native[0], target)
        # The binary travels as a data file into <prefix>/bin (see data_files below).
        binary = HERE / BINARY
        binary.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(build / "src" / "apps" / "ferry", binary)
        strip_debug_info(target, binary)


def strip_debug_info(*paths):
    """The build keeps debug info for profiling (RelWithDebInfo); installed copies drop it: the
    binary goes from ~200 MB to ~8 MB. Symbols stay, so stack traces still name functions."""
    strip = shutil.which("strip")  # binutils, there wherever g++ is
    if strip:
        subprocess.check_call([strip, "--strip-debug", *map(str, paths)])


setup(
    version=version(),
    ext_modules=[Extension("ferry._native", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    data_files=[("bin", [BINARY])],
)
