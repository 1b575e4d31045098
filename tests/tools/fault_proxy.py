#!/usr/bin/env python3
"""A fault-injecting TCP proxy for tests (loopback only).

Forwards 127.0.0.1:<port> to a target, and spoils the first N (--faults) connections in one of
these ways:
  --reset-after BYTES   reset the connection (RST) after BYTES of the server's answer
  --reset-after-up BYTES  reset the connection after BYTES sent by the client (uploads)
  --http-status CODE    answer the request itself with CODE (e.g. 503 SlowDown) and close;
                        --retry-after SECONDS adds a Retry-After header to that answer. This mode
                        counts and spoils requests, not connections (kept-alive connections
                        carry several)
  --truncate-after BYTES  close cleanly (FIN) after BYTES of the server's answer
  --trickle-after BYTES   after BYTES of the server's answer, stall for --stall-ms, then pass on
                        1 byte every --trickle-interval seconds (default 0.4): slow enough to be
                        useless, fast enough to defeat a "1 byte/s" timeout
  --trickle-after-up BYTES  the same for bytes sent by the client (uploads)
  --flip-up BYTES       flip one bit of the byte at offset BYTES of what the client sends and
                        pass everything on (a body damaged on the way; TCP's checksum missed it)
  --delay-ms MS         hold every chunk for MS milliseconds (all connections)
  --rate BYTES          at most BYTES per second each way on every connection (a slow link)
Connections after the first N pass through untouched. --pass-first K lets the first K through
before spoiling starts; with --fault-seconds S, only those within S seconds of the first spoiled
one are spoiled (e.g. "throttle everything for 8 s").
--fault-log FILE gets one line per spoiled connection. The chosen port is written to --port-file.
Stops by itself after --lifetime seconds; a trickle ends when either side closes.
"""
import argparse
import select
import socket
import struct
import sys
import threading
import time

TRICKLE_READ_AHEAD = 1 << 20
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


def read_request(sock, buffered=b""):
    """Reads one HTTP request (head and Content-Length body) from `sock`. Returns (request bytes,
    bytes read past it), or (None, b"") when the client closed first."""
    data = buffered
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        body += chunk
    return head + b"\r\n\r\n" + body[:length], body[length:]


class Proxy:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.connections = 0
        self.faults_done = 0
        self.seen = 0  # connections, or requests with --http-status
        self.first_fault_at = None

    def trickle(self, src, dst, pending, upload):
        """Passes `pending` and then whatever `src` sends on to `dst` one byte per interval. Ends
        when the client closes: for an upload that is `src` (read), for a download `dst` (sendall
        raises). Reads ahead at most 1 MiB, then only watches `src` for a close."""
        a = self.args
        if a.stall_ms:
            time.sleep(a.stall_ms / 1000.0)
        next_send = time.monotonic()
        src_open = True
        while True:
            wait = max(0.0, next_send - time.monotonic()) if pending else a.trickle_interval
            if not src_open:
                if not pending:
                    return
                time.sleep(wait)
            elif select.select([src], [], [], wait)[0]:
                if len(pending) < TRICKLE_READ_AHEAD:
                    chunk = src.recv(65536)
                else:
                    chunk = src.recv(1, socket.MSG_PEEK)
                    time.sleep(max(0.0, next_send - time.monotonic()))  # no busy loop
                if not chunk:
                    if upload:
                        return  # the client gave up
                    src_open = False  # the server is done; keep trickling what we hold
                elif len(pending) < TRICKLE_READ_AHEAD:
                    pending += chunk
            if pending and time.monotonic() >= next_send:
                dst.sendall(pending[:1])  # raises once a downloading client has gone
                pending = pending[1:]
                next_send = time.monotonic() + a.trickle_interval

    def pump(self, src, dst, limit, mode, upload=False):
        sent = 0
        rate = self.args.rate
        try:
            while True:
                chunk = src.recv(min(65536, max(1, rate // 10)) if rate else 65536)
                if not chunk:
                    break
                if self.args.delay_ms:
                    time.sleep(self.args.delay_ms / 1000.0)
                if rate:
                    time.sleep(len(chunk) / rate)
                if mode == "flip" and limit is not None and sent + len(chunk) > limit:
                    at = limit - sent
                    chunk = chunk[:at] + bytes([chunk[at] ^ 0x01]) + chunk[at + 1:]
                    limit = None
                if mode != "flip" and limit is not None and sent + len(chunk) >= limit:
                    dst.sendall(chunk[: max(0, limit - sent)])
                    if mode == "trickle":
                        self.trickle(src, dst, chunk[max(0, limit - sent):], upload)
                        return
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

    def spoil(self):
        """Decides whether the next connection (or request, with --http-status) is spoiled."""
        a = self.args
        with self.lock:
            self.seen += 1
            if self.seen <= a.pass_first:
                return False
            now = time.monotonic()
            if self.first_fault_at is None:
                self.first_fault_at = now
            faulty = self.faults_done < a.faults and (
                a.fault_seconds is None or now - self.first_fault_at < a.fault_seconds)
            if faulty:
                self.faults_done += 1
                if a.fault_log:
                    with open(a.fault_log, "a") as f:
                        f.write("%.3f fault %d\n" % (now - self.first_fault_at, self.faults_done))
            return faulty

    def answer_requests(self, client):
        """--http-status: decides per request (a retry must not slip through on a kept-alive
        connection); a spoiled request gets the error answer and the connection is closed."""
        a = self.args
        upstream, buffered = None, b""
        try:
            while True:
                request, buffered = read_request(client, buffered)
                if request is None:
                    return
                if self.spoil():
                    body = SLOWDOWN_BODY if a.http_status == 503 else b""
                    reason = {503: "Slow Down", 500: "Internal Error",
                              429: "Too Many Requests"}.get(a.http_status, "Error")
                    extra = b"Retry-After: %d\r\n" % a.retry_after if a.retry_after is not None else b""
                    client.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
                                   b"%sConnection: close\r\n\r\n%s"
                                   % (a.http_status, reason.encode(), len(body), extra, body))
                    return
                if upstream is None:
                    upstream = socket.create_connection((a.target_host, a.target_port))
                    threading.Thread(target=self.pump, args=(upstream, client, None, None), daemon=True).start()
                upstream.sendall(request)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    sock.close()

    def handle(self, client):
        a = self.args
        with self.lock:
            self.connections += 1
        if a.http_status:
            self.answer_requests(client)
            return
        faulty = self.spoil()
        upstream = socket.create_connection((a.target_host, a.target_port))
        limit, mode = None, None
        if faulty and a.reset_after is not None:
            limit, mode = a.reset_after, "reset"
        elif faulty and a.truncate_after is not None:
            limit, mode = a.truncate_after, "truncate"
        elif faulty and a.trickle_after is not None:
            limit, mode = a.trickle_after, "trickle"
        up_limit, up_mode = None, None
        if faulty and a.reset_after_up is not None:
            up_limit, up_mode = a.reset_after_up, "reset"
        elif faulty and a.trickle_after_up is not None:
            up_limit, up_mode = a.trickle_after_up, "trickle"
        elif faulty and a.flip_up is not None:
            up_limit, up_mode = a.flip_up, "flip"
        threading.Thread(target=self.pump, args=(client, upstream, up_limit, up_mode, True),
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
    p.add_argument("--retry-after", type=int)
    p.add_argument("--trickle-after", type=int)
    p.add_argument("--trickle-after-up", type=int)
    p.add_argument("--flip-up", type=int)
    p.add_argument("--trickle-interval", type=float, default=0.4)
    p.add_argument("--stall-ms", type=int, default=0)
    p.add_argument("--fault-seconds", type=float)
    p.add_argument("--pass-first", type=int, default=0)
    p.add_argument("--rate", type=int, default=0)
    p.add_argument("--fault-log")
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
