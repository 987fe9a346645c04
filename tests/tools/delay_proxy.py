#!/usr/bin/python3
"""delay_proxy.py: a TCP proxy for tests that holds server replies on demand.

    delay_proxy.py --target HOST:PORT --hold-ms D --window-ms W --port-file F --status-file S

Listens on 127.0.0.1 (a free port, written to F once it accepts), opens one
connection to the target per client, and passes bytes both ways at once.
SIGUSR1 opens a hold window of W ms: every chunk the server sends while the
window is open reaches the client D ms after it arrived here (in order, per
connection); chunks after the window pass at once again. When the window and
its last hold are over, S gets one line:

    held=N max_hold_ms=X window_start=T0

N is the number of chunks held (with one request in flight per connection,
one chunk is one reply), X the longest hold as measured here, T0 the
window's start (time.monotonic, s). Stdlib only; stops on SIGTERM.
"""
import argparse
import asyncio
import os
import signal
import time


class Proxy:
    def __init__(self, args):
        host, port = args.target.rsplit(":", 1)
        self.target = (host, int(port))
        self.hold = args.hold_ms / 1000.0
        self.window = args.window_ms / 1000.0
        self.status_file = args.status_file
        self.t0 = None  # start of the hold window
        self.held = 0
        self.max_hold = 0.0
        self.pending = 0  # held chunks not yet passed on

    def in_window(self, t):
        return self.t0 is not None and self.t0 <= t < self.t0 + self.window

    def open_window(self):
        if self.t0 is not None:
            return  # one window per run
        self.t0 = time.monotonic()
        asyncio.get_running_loop().call_later(self.window + self.hold + 0.05, self.check_done)

    def check_done(self):
        if self.pending:
            asyncio.get_running_loop().call_later(0.05, self.check_done)
            return
        tmp = self.status_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("held=%d max_hold_ms=%.1f window_start=%.6f\n" % (self.held, self.max_hold * 1000, self.t0))
        os.rename(tmp, self.status_file)

    async def client(self, creader, cwriter):
        try:
            sreader, swriter = await asyncio.open_connection(*self.target)
        except OSError:
            cwriter.close()
            return
        queue = asyncio.Queue()
        tasks = [
            asyncio.ensure_future(self.pump(creader, swriter)),
            asyncio.ensure_future(self.replies(sreader, queue)),
            asyncio.ensure_future(self.release(queue, cwriter)),
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            t.cancel()
        for w in (cwriter, swriter):
            w.close()

    async def pump(self, reader, writer):
        while True:
            data = await reader.read(65536)
            if not data:
                return
            writer.write(data)
            await writer.drain()

    async def replies(self, reader, queue):
        """Reads the server's chunks and queues each with the moment it may go."""
        while True:
            data = await reader.read(65536)
            if not data:
                await queue.put(None)
                return
            now = time.monotonic()
            if self.in_window(now):
                self.held += 1
                self.pending += 1
                await queue.put((now, now + self.hold, data))
            else:
                await queue.put((now, now, data))

    async def release(self, queue, writer):
        while True:
            item = await queue.get()
            if item is None:
                return
            arrived, due, data = item
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
            if due > arrived:
                self.max_hold = max(self.max_hold, time.monotonic() - arrived)
                self.pending -= 1


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--hold-ms", type=float, required=True)
    ap.add_argument("--window-ms", type=float, required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--status-file", required=True)
    args = ap.parse_args()
    p = Proxy(args)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGUSR1, p.open_window)
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    server = await asyncio.start_server(p.client, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(args.port_file + ".tmp", args.port_file)
    await stop
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
