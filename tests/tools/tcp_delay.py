#!/usr/bin/python3
"""tcp_delay.py: a TCP proxy for tests that adds a fixed delay both ways.

    tcp_delay.py --listen HOST:PORT --target HOST:PORT --delay-ms D
                 [--lifetime-s L] [--port-file F]

Listens on HOST:PORT (PORT 0: a free port; HOST any local IPv4 address, a
network namespace's own included), opens one connection to the target per
client and passes bytes both ways; every chunk leaves D ms after it arrived
here, in order, per connection and direction. Chunks are not held back by
one another's delay (a chunk that came 1 ms after the one before leaves 1 ms
after it), so the proxy adds latency, not a bandwidth limit: a request and
its reply cross it with 2 x D more round-trip time.

Once it accepts, the port is written to F (through a temporary file) and to
stdout as "listening on HOST:PORT". It exits on SIGTERM or SIGINT, and by
itself after L seconds (default 600), so a test that dies leaves nothing
running for long. Stdlib only.
"""
import argparse
import asyncio
import os
import signal
import sys
import time


def host_port(text):
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError("'%s': expected HOST:PORT" % text)
    return host, int(port)


class Delay:
    def __init__(self, target, delay_s):
        self.target = target
        self.delay = delay_s

    async def client(self, creader, cwriter):
        try:
            sreader, swriter = await asyncio.open_connection(*self.target)
        except OSError as e:
            print("tcp_delay: connect %s:%d: %s" % (self.target + (e,)), file=sys.stderr, flush=True)
            cwriter.close()
            return
        gives, pending = [], set()
        for reader, writer in ((creader, swriter), (sreader, cwriter)):
            queue = asyncio.Queue()
            gives.append(asyncio.ensure_future(self.give(queue, writer)))
            pending |= {asyncio.ensure_future(self.take(reader, queue)), gives[-1]}
        # until both directions passed their end of stream on, or one failed (a reset)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if any(not t.cancelled() and t.exception() for t in done) or all(g.done() for g in gives):
                break
        for t in pending:
            t.cancel()
        for w in (cwriter, swriter):
            w.close()

    async def take(self, reader, queue):
        """Reads chunks and queues each with the moment it may leave."""
        while True:
            data = await reader.read(65536)
            await queue.put((time.monotonic() + self.delay, data))
            if not data:
                return

    async def give(self, queue, writer):
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()


async def main():
    ap = argparse.ArgumentParser(description="TCP proxy that adds a fixed delay to every chunk, both ways")
    ap.add_argument("--listen", type=host_port, required=True, help="HOST:PORT to listen on (PORT 0: any free one)")
    ap.add_argument("--target", type=host_port, required=True, help="HOST:PORT to forward to")
    ap.add_argument("--delay-ms", type=float, required=True, help="delay added to every chunk, each way")
    ap.add_argument("--lifetime-s", type=float, default=600.0, help="exit after this many seconds (default 600)")
    ap.add_argument("--port-file", help="write the port listened on to this file")
    args = ap.parse_args()
    if args.delay_ms < 0 or args.lifetime_s <= 0:
        ap.error("--delay-ms must be >= 0 and --lifetime-s > 0")
    d = Delay(args.target, args.delay_ms / 1000.0)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    loop.call_later(args.lifetime_s, lambda: stop.done() or stop.set_result(None))
    server = await asyncio.start_server(d.client, args.listen[0], args.listen[1])
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("listening on %s:%d" % (args.listen[0], port), flush=True)
    await stop
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
