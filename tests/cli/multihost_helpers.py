"""Several "hosts" on one machine for the scale-out tests (tests/cli/test_multihost.py): network
namespaces joined by veth pairs to a bridge in the root namespace, each host's link shaped by
tbf (the bandwidth a host gets from the servers), and a TCP forwarder that makes a server bound
to 127.0.0.1 (Ceph RGW, as the test fixture starts it) reachable from the hosts.

    net = Hosts(4, rate="400mbit")          # hosts 0..3 at 10.X.0.10.., the root side at 10.X.0.1
    fwd = Forwarder(net.gateway, 8123, "127.0.0.1", rgw_port)
    net.run(2, ["python3", "-c", "..."], env=...)   # a process on host 2
    net.close()

Needs root and iproute2 (ip, tc). Names carry the test process's pid so parallel runs never
share a namespace, a bridge or an address range."""
import os
import socket
import subprocess
import threading


def sh(*cmd, check=True):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))}: {p.stderr.strip()}")
    return p


class Hosts:
    def __init__(self, n, rate="400mbit"):
        tag = os.getpid() % 10000
        self.subnet = 100 + os.getpid() % 150  # 10.<subnet>.0.0/24
        self.bridge = f"fbr{tag}"
        self.names = [f"fh{tag}-{i}" for i in range(n)]
        self.gateway = f"10.{self.subnet}.0.1"
        self.addresses = [f"10.{self.subnet}.0.{10 + i}" for i in range(n)]
        self._links = []
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            sh("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
            sh("ip", "link", "set", self.bridge, "up")
            for i, ns in enumerate(self.names):
                outer, inner = f"fv{tag}-{i}", f"fi{tag}-{i}"
                sh("ip", "netns", "add", ns)
                sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
                self._links.append(outer)
                sh("ip", "link", "set", inner, "netns", ns)
                sh("ip", "link", "set", outer, "master", self.bridge)
                sh("ip", "link", "set", outer, "up")
                # Egress of the root side = what the host downloads; the host's own side shapes
                # what it uploads.
                sh("tc", "qdisc", "add", "dev", outer, "root", "tbf", "rate", rate,
                   "burst", "256kb", "latency", "50ms")
                for cmd in (["ip", "link", "set", "lo", "up"],
                            ["ip", "addr", "add", f"{self.addresses[i]}/24", "dev", inner],
                            ["ip", "link", "set", inner, "up"],
                            ["tc", "qdisc", "add", "dev", inner, "root", "tbf", "rate", rate,
                             "burst", "256kb", "latency", "50ms"]):
                    sh("ip", "netns", "exec", ns, *cmd)
        except BaseException:
            self.close()
            raise

    def command(self, i, cmd):
        return ["ip", "netns", "exec", self.names[i], *map(str, cmd)]

    def popen(self, i, cmd, **kw):
        return subprocess.Popen(self.command(i, cmd), **kw)

    def run(self, i, cmd, **kw):
        return subprocess.run(self.command(i, cmd), **kw)

    def close(self):
        for ns in self.names:
            sh("ip", "netns", "del", ns, check=False)
        for link in self._links:
            sh("ip", "link", "del", link, check=False)
        sh("ip", "link", "del", self.bridge, check=False)


class Forwarder:
    """Accepts on (host, port) and relays each connection to (to_host, to_port), both ways."""

    def __init__(self, host, port, to_host, to_port):
        self.target = (to_host, to_port)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(128)
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while True:
                data = src.recv(1 << 20)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
                try:
                    s.shutdown(how)
                except OSError:
                    pass

    def close(self):
        self.sock.close()
