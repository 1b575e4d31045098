#!/usr/bin/env python3
"""A fault-injecting TCP proxy for tests (loopback only).

Forwards 127.0.0.1:<port> to a target, and spoils the first N connections in one of these ways:
  --reset-after BYTES   reset the connection (RST) after BYTES of the server's answer
  --reset-after-up BYTES  reset the connection after BYTES sent by the client (uploads)
  --http-status CODE    answer the request itself with CODE (e.g. 503 SlowDown) and close
  --truncate-after BYTES  close cleanly (FIN) after BYTES of the server's answer
  --delay-ms MS         hold every chunk for MS milliseconds (all connections)
Connections after the first N pass through untouched. The chosen port is written to --port-file.
Stops by itself after --lifetime seconds.
"""
import argparse
import socket
import struct
import sys
import threading
import time

SLOWDOWN_BODY = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                 b'<Message>Please reduce your request rate.</Message><RequestId>fault-proxy</RequestId></Error>')


def rst_close(sock):
    """Closes with a TCP RST. SHUT_RD first wakes the other pump thread blocked in recv() on this
    socket; until it lets go, close() would not release the socket and nothing would be sent."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    sock.close()


def read_request(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return data


class Proxy:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.connections = 0
        self.faults_done = 0

    def pump(self, src, dst, limit, mode):
        sent = 0
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                if self.args.delay_ms:
                    time.sleep(self.args.delay_ms / 1000.0)
                if limit is not None and sent + len(chunk) >= limit:
                    dst.sendall(chunk[: max(0, limit - sent)])
                    if mode == "reset":
                        rst_close(dst)
                        rst_close(src)
                    else:
                        dst.shutdown(socket.SHUT_RDWR)
                        dst.close()
                        src.close()
                    return
                dst.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def handle(self, client):
        with self.lock:
            self.connections += 1
            faulty = self.faults_done < self.args.faults
            if faulty:
                self.faults_done += 1
        a = self.args
        if faulty and a.http_status:
            read_request(client)
            body = SLOWDOWN_BODY if a.http_status == 503 else b""
            reason = {503: "Slow Down", 500: "Internal Error"}.get(a.http_status, "Error")
            client.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
                           b"Connection: close\r\n\r\n%s" % (a.http_status, reason.encode(), len(body), body))
            client.close()
            return
        upstream = socket.create_connection((a.target_host, a.target_port))
        limit, mode = None, None
        if faulty and a.reset_after is not None:
            limit, mode = a.reset_after, "reset"
        elif faulty and a.truncate_after is not None:
            limit, mode = a.truncate_after, "truncate"
        up_limit = a.reset_after_up if faulty and a.reset_after_up is not None else None
        threading.Thread(target=self.pump, args=(client, upstream, up_limit, "reset" if up_limit else None),
                         daemon=True).start()
        self.pump(upstream, client, limit, mode)

    def serve(self):
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", self.args.port))
        srv.listen(64)
        with open(self.args.port_file, "w") as f:
            f.write(str(srv.getsockname()[1]))
        srv.settimeout(0.5)
        deadline = time.time() + self.args.lifetime
        while time.time() < deadline:
            try:
                client, _ = srv.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self.handle, args=(client,), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True, help="host:port")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", required=True)
    p.add_argument("--faults", type=int, default=1, help="how many connections to spoil")
    p.add_argument("--reset-after", type=int)
    p.add_argument("--reset-after-up", type=int)
    p.add_argument("--truncate-after", type=int)
    p.add_argument("--http-status", type=int)
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=600)
    a = p.parse_args()
    host, port = a.target.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("fault_proxy: only loopback targets are allowed")
    a.target_host, a.target_port = host, int(port)
    Proxy(a).serve()


if __name__ == "__main__":
    main()
