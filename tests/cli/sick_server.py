"""A TCP stand-in in front of a real server, for clients under a sick server: `mode` switches
at any time between "forward" (a plain relay), "slow" (each connection waits `delay` seconds
before its first byte is relayed), "hang" (connections are accepted and read, never answered; connections already relayed
stop being answered too)
and "refuse" (the listening socket is closed: connection refused; `mode` back to another
reopens it on the same port)."""
import socket
import threading
import time


class SickServer:
    def __init__(self, target=None, mode="forward", delay=3.0):
        self.target = target            # "host:port" of the real server, or None (hang only)
        self.mode, self.delay = "forward", delay
        self._conns, self._lock = [], threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()
        self.set(mode)

    def set(self, mode):
        """Switches the mode; "refuse" closes the port, another mode reopens it."""
        if mode == "refuse" and self.mode != "refuse":
            self.mode = mode
            self._listener.close()
        elif mode != "refuse" and self.mode == "refuse":
            self._listener = socket.create_server(("127.0.0.1", self.port))
            self.mode = mode
            self._accepting = threading.Thread(target=self._accept, daemon=True)
            self._accepting.start()
        else:
            self.mode = mode

    def _accept(self):
        listener = self._listener
        while not self._closed:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn, self.mode), daemon=True).start()

    def _serve(self, conn, mode):
        if mode == "hang" or self.target is None:
            try:
                while conn.recv(65536):     # read everything, answer nothing
                    pass
            except OSError:
                pass
            return
        if mode == "slow":
            time.sleep(self.delay)
        host, port = self.target.rsplit(":", 1)
        try:
            upstream = socket.create_connection((host, int(port)))
        except OSError:
            conn.close()
            return
        with self._lock:
            self._conns.append(upstream)
        for a, b in ((conn, upstream), (upstream, conn)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src, dst):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                if self.mode == "refuse":
                    break
                if self.mode != "hang":      # kept-alive connections fall sick too
                    dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def stop(self):
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            for c in self._conns:
                try:
                    c.close()
                except OSError:
                    pass
