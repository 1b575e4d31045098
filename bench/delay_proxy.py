#!/usr/bin/env python3
"""A TCP delay line: every chunk is forwarded `--delay-ms` after it arrived, in each direction,
without limiting throughput (tc netem is missing here; see shared/ENVIRONMENT.md). A 1 ms delay
each way is a 2 ms round trip: a NAS or object store across a busy network.

  delay_proxy.py --listen 127.0.0.1:0 --target 127.0.0.1:7480 --delay-ms 1 --port-file F
"""
import argparse
import asyncio
import time


async def pipe(reader, writer, delay):
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except OSError:
            pass

    sender = asyncio.create_task(send())
    try:
        while True:
            data = await reader.read(1 << 18)
            if not data:
                break
            queue.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main(args):
    host, port = args.target.rsplit(":", 1)
    delay = args.delay_ms / 1000.0

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer, delay),
                             pipe(server_reader, client_writer, delay))
        for w in (client_writer, server_writer):
            w.close()

    lhost, lport = args.listen.rsplit(":", 1)
    server = await asyncio.start_server(handle, lhost, int(lport))
    bound = server.sockets[0].getsockname()[1]
    if args.port_file:
        with open(args.port_file, "w") as f:
            f.write(str(bound))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--target", required=True)
    p.add_argument("--delay-ms", type=float, default=1.0)
    p.add_argument("--port-file")
    asyncio.run(main(p.parse_args()))
