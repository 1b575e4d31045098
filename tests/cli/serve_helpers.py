"""`ferry serve` as the CLI tests start it: a free loopback port, stderr in a file (a pipe left
unread would block a server that logs), the URL read from its `listening on` line."""
import os
import pathlib
import re
import signal
import subprocess
import threading
from http.server import ThreadingHTTPServer

from conftest import wait_for


def minimal_env():
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root")}


class ServeProcess:
    """`ferry serve --data DATA --listen 127.0.0.1:0 EXTRA...`; `url`, `log()`, `stop()`.
    `listen=` picks the address (a restart on the port of an earlier server)."""

    def __init__(self, ferry_bin, data, *extra, env=None, log=None, listen="127.0.0.1:0"):
        self.data = data if str(data).startswith("s3://") else pathlib.Path(data)
        self.err = pathlib.Path(log) if log else self.data.with_name(self.data.name + ".serve.log")
        self.proc = subprocess.Popen(
            [ferry_bin, "serve", "--data", str(self.data), "--listen", listen,
             *map(str, extra)],
            env=env or minimal_env(), stdout=subprocess.DEVNULL, stderr=open(self.err, "w"))
        m = wait_for(lambda: self.proc.poll() is not None or
                     re.search(r"listening on (http://[\d.]+:\d+)", self.log()),
                     f"ferry serve to listen ({self.err})")
        if m is True:
            raise AssertionError(f"ferry serve exited: {self.log()}")
        self.url = m.group(1)

    def log(self):
        return self.err.read_text() if self.err.exists() else ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)


class LocalServer:
    """An HTTP server in this test process on 127.0.0.1 (a stand-in upstream, an attacker's
    page): `handler` is a BaseHTTPRequestHandler class; `url` is http://127.0.0.1:PORT."""

    def __init__(self, handler):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
