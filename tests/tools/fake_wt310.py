#!/usr/bin/python3
"""fake_wt310.py PORTFILE MODE: a WT310 stand-in on 127.0.0.1 (line-based
SCPI over TCP, header and verbose off) for replies the emulator (tilebench
meter sim) cannot produce. Writes its port to PORTFILE.
  latecfac  :INP:CFAC? is answered after 1.0 s (the driver waits 800 ms);
            poll k of :NUM:NORM:VAL? answers W = 100 + k, so a sample that
            shows an earlier poll's reply is seen
  huge      auto ranges; :NUM:NORM:VAL? answers 5e37,230,0.5,NAN
"""
import sys, time

from fake_server import serve_forever

port_file, mode = sys.argv[1], sys.argv[2]
IDN = "YOKOGAWA,WT310E,C2QE12345,F1.03"


def serve(c):
    f = c.makefile("rwb", buffering=0)
    polls = 0
    auto = "1" if mode == "huge" else "0"
    answers = {"*IDN?": IDN, ":STAT:ERR?": '0,"No error"', ":INP:VOLT:RANG?": "3.00E+02",
               ":INP:VOLT:AUTO?": auto, ":INP:CURR:RANG?": "2.00E+01", ":INP:CURR:AUTO?": auto,
               ":INP:CFAC?": "3", ":RATE?": "5.00E-01"}
    while True:
        line = f.readline()
        if not line:
            return
        cmd = line.decode("latin-1").strip()
        if not cmd.endswith("?"):
            continue
        if cmd == ":NUM:NORM:VAL?":
            polls += 1
            if mode == "huge":
                r = "5e37,230,0.5,NAN"
            else:
                w = 100 + polls
                r = "%.2f,230.00,%.4f,%.4f" % (w, w / 230 / 0.95, 0.95)
        elif cmd == ":INP:CFAC?" and mode == "latecfac":
            time.sleep(1.0)
            r = answers[cmd]
        else:
            r = answers.get(cmd, "")
        f.write((r + "\n").encode("latin-1"))


serve_forever(port_file, lambda c, n: serve(c))
