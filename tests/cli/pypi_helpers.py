"""tests/tools/pypi_standin.py as the tests use it: one place that starts it and reads its env."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
STANDIN = ROOT / "tests/tools/pypi_standin.py"


class Upstream:
    """The stand-in: its index URLs (.pypi, .torch), the files it serves (www/files/<project>/)
    and its access log."""

    def __init__(self, d, *extra):
        self.dir = pathlib.Path(d)
        subprocess.run([sys.executable, STANDIN, "start", self.dir, *extra], check=True,
                       capture_output=True)
        env = dict(line.split("=", 1) for line in (self.dir / "env").read_text().split())
        self.pypi, self.torch = env["PYPI_STANDIN_URL"], env["TORCH_STANDIN_URL"]
        self.seen = 0

    def file(self, project, name):
        return self.dir / "www/files" / project / name

    def new_requests(self):
        """Access-log lines since the last call."""
        lines = (self.dir / "access.log").read_text().splitlines()
        new, self.seen = lines[self.seen:], len(lines)
        return new

    def stop(self):
        subprocess.run([sys.executable, STANDIN, "stop", self.dir], capture_output=True)
