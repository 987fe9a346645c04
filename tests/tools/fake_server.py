"""fake_server.py: the loopback TCP server the fake meters share (sourced by
fake_ptd.py and fake_wt310.py). It listens on 127.0.0.1 on a free port,
writes the port to PORT_FILE (renamed into place, so a reader never sees half
of it), serves each connection in a thread with handler(conn, n) (n counts
connections from 1), and stops after 120 s so that it never outlives a test."""
import os
import socket
import threading
import time


def serve_forever(port_file, handler, lifetime_s=120):
    def run(c, n):
        try:
            handler(c, n)
        except OSError:
            pass
        finally:
            c.close()

    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    with open(port_file + ".tmp", "w") as pf:
        pf.write(str(s.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    deadline = time.time() + lifetime_s
    s.settimeout(1)
    n = 0
    while time.time() < deadline:
        try:
            c, _ = s.accept()
        except socket.timeout:
            continue
        n += 1
        threading.Thread(target=run, args=(c, n), daemon=True).start()
