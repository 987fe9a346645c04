#!/usr/bin/python3
"""pg_faults.py --portfile F --stats F --mode MODE [--bad N]: a stand-in for a
PostgreSQL server on 127.0.0.1 that injects protocol faults PostgreSQL itself
never makes, to test how the oltp workload's client (loadgen/oltp.c,
loadgen/pg_wire.c) recovers from them. It is not a PostgreSQL: it speaks just
enough of protocol v3 for tilebench's probe, its PREPARE batch and the point
lookup (no authentication, one canned row for every statement).

The first N replies to Bind/Execute/Sync (--bad, counted over all
connections; default: every reply) are MODE's, the later ones normal:
  normal     the row: BindComplete, DataRow, CommandComplete, ReadyForQuery
  garbage    bytes that are no message at all
  reset      half a DataRow, then a reset (RST: SO_LINGER 0)
  midstall   half a DataRow, then nothing more (the client's op timeout ends it)
  unknown    a message of type 'W', which no reply to a statement holds, then the row
  biglen     a DataRow announcing 0x7fffffff bytes
  idlehalf   the row, then, idle, half of a FATAL ErrorResponse and a close
  fatal      a FATAL ErrorResponse, then a close
  fatalz     a FATAL ErrorResponse followed by ReadyForQuery, then a close 50 ms later
  extra      the row, then half of a message nobody asked for

Writes its port to F (renamed into place), and its counters, one line
"connections=C binds=B replies=R results=W faults=X", to the --stats file at
exit, on SIGTERM and on SIGUSR1 (R: replies to a Sync; W: those among them
that held a whole row before any fault, so that at most W lookups can have
succeeded; X: the replies in MODE). Exits by itself after 120 s."""
import argparse
import os
import signal
import socket
import struct
import sys
import threading
import time

from fake_server import serve_forever

MODES = ("normal", "garbage", "reset", "midstall", "unknown", "biglen", "idlehalf", "fatal", "fatalz", "extra")
ap = argparse.ArgumentParser()
ap.add_argument("--portfile", required=True)
ap.add_argument("--stats", required=True)
ap.add_argument("--mode", choices=MODES, default="normal")
ap.add_argument("--bad", type=int, default=-1, help="replies in MODE (default: all)")
A = ap.parse_args()

lock = threading.Lock()
stats = {"connections": 0, "binds": 0, "replies": 0, "results": 0, "faults": 0}


def write_stats(*_):
    with lock:
        line = " ".join("%s=%d" % kv for kv in stats.items())
    with open(A.stats + ".tmp", "w") as f:
        f.write(line + "\n")
    os.rename(A.stats + ".tmp", A.stats)


def on_term(*_):
    write_stats()
    os._exit(0)  # the connection threads are daemons: nothing to wait for


# ---- messages ----
def msg(t, body=b""):
    return t + struct.pack("!I", len(body) + 4) + body


def cstr(s):
    return s.encode() + b"\0"


def row(*vals):  # DataRow
    return msg(b"D", struct.pack("!H", len(vals)) + b"".join(struct.pack("!I", len(v)) + v.encode() for v in vals))


def rowdesc(*names):  # RowDescription, all columns text
    return msg(b"T", struct.pack("!H", len(names)) + b"".join(cstr(n) + struct.pack("!IhIhih", 0, 0, 25, -1, -1, 0) for n in names))


def done(tag):  # CommandComplete
    return msg(b"C", cstr(tag))


def error(sev, code, text):  # ErrorResponse
    return msg(b"E", b"S" + cstr(sev) + b"V" + cstr(sev) + b"C" + cstr(code) + b"M" + cstr(text) + b"\0")


READY = msg(b"Z", b"I")
BIND_OK = msg(b"2")
ROW = row("TITLE 42", "12.34")
FATAL = error("FATAL", "57P01", "terminating connection due to administrator command")


def recvn(c, n):
    b = b""
    while len(b) < n:
        part = c.recv(n - len(b))
        if not part:
            raise ConnectionError("closed by the client")
        b += part
    return b


def reply(c, mode, described):
    """Answers one Sync in mode (described: libpq sent a Describe of the
    portal, which wants a RowDescription). False when the connection ends."""
    ok = BIND_OK + (rowdesc("title", "price") if described else b"") + ROW + done("SELECT 1") + READY
    if mode == "normal":
        c.sendall(ok)
    elif mode == "garbage":
        c.sendall(b"\x00\x01garbage\xff\xfe" * 8)
    elif mode == "reset":
        c.sendall(BIND_OK + ROW[:7])
        time.sleep(0.01)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return False
    elif mode == "midstall":
        c.sendall(BIND_OK + ROW[:9])
    elif mode == "unknown":
        c.sendall(msg(b"W", b"\0\0\0") + ok)
    elif mode == "biglen":
        c.sendall(BIND_OK + b"D" + struct.pack("!I", 0x7FFFFFFF) + b"x" * 16)
    elif mode == "idlehalf":
        c.sendall(ok)
        time.sleep(0.005)
        c.sendall(error("FATAL", "57P05", "terminating connection due to idle-session timeout")[:10])
        return False
    elif mode == "fatal":
        c.sendall(FATAL)
        return False
    elif mode == "fatalz":
        c.sendall(FATAL + READY)
        time.sleep(0.05)
        return False
    elif mode == "extra":
        c.sendall(ok + b"N\0\0")
    return True


def simple_query(c, sql):
    """The probe's two queries and the PREPARE batch, answered plausibly."""
    if "max_connections" in sql:  # max_connections, reserved, in use (the probe's own)
        c.sendall(rowdesc("max", "reserved", "used") + row("100", "3", "1") + done("SELECT 1") + READY)
    elif "count(*)" in sql:  # the tile's products
        c.sendall(rowdesc("count") + row("10000") + done("SELECT 1") + READY)
    elif sql.startswith("PREPARE"):
        c.sendall(done("PREPARE") * sql.count("PREPARE ") + READY)
    else:
        c.sendall(error("ERROR", "42601", "pg_faults: unknown query") + READY)


def serve(c, _nth):
    with lock:
        stats["connections"] += 1
    while True:  # startup: SSLRequest or GSSENCRequest answered 'N', then the StartupMessage
        body = recvn(c, struct.unpack("!I", recvn(c, 4))[0] - 4)
        if struct.unpack("!I", body[:4])[0] not in (80877103, 80877104):
            break
        c.sendall(b"N")
    out = msg(b"R", struct.pack("!I", 0))  # AuthenticationOk
    for k, v in (("server_version", "15.0"), ("client_encoding", "UTF8"), ("standard_conforming_strings", "on"),
                 ("integer_datetimes", "on"), ("DateStyle", "ISO, MDY")):
        out += msg(b"S", cstr(k) + cstr(v))
    c.sendall(out + msg(b"K", struct.pack("!II", 1234, 5678)) + READY)
    described = False
    while True:
        t = recvn(c, 1)
        body = recvn(c, struct.unpack("!I", recvn(c, 4))[0] - 4)
        if t == b"X":  # Terminate
            return
        if t == b"Q":
            simple_query(c, body.rstrip(b"\0").decode())
        elif t == b"B":
            with lock:
                stats["binds"] += 1
        elif t == b"D":
            described = True
        elif t == b"S":
            with lock:
                stats["replies"] += 1
                bad = A.bad < 0 or stats["faults"] < A.bad
                mode = A.mode if bad else "normal"
                stats["faults"] += bad
                stats["results"] += mode in ("normal", "idlehalf", "extra")
            described, was = False, described
            if not reply(c, mode, was):
                return  # fake_server closes the connection
        # Execute, Parse, Flush: nothing to answer before the Sync


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGUSR1, write_stats)
write_stats()
try:
    serve_forever(A.portfile, serve)
finally:
    write_stats()
sys.exit(0)
