#!/usr/bin/python3
"""fake_ptd.py PORTFILE MODE: a PTDaemon stand-in on 127.0.0.1 for replies the
emulator (tilebench meter sim) cannot produce. Writes its port to PORTFILE.
The first connection misbehaves as MODE says; later ones answer well, so a
client that resets its connection gets good samples again.
  warn    RL,1 answered with endless "WARNING: Uncertainty" lines
  warnall every connection: as warn
  last    RL,1 answered "Last 1000000 samples", then one sample line a second
  slow    RL,1 answered "Last 5 samples", then one sample line a second
  frozen  every connection: Uncertainty counters never change
  negavg  every connection: the running uncertainty average goes down (< 0 per sample)
  esc     every connection: Identify carries a terminal escape sequence
  good    every connection answers well
"""
import sys, time

from fake_server import serve_forever

port_file, mode = sys.argv[1], sys.argv[2]
SAMPLE = "Time,11-30-2026 16:00:01.250,Watts,200.000000,Volts,230.000000,Amps,0.915000,PF,0.950339"


def serve(c, nth):
    f = c.makefile("rwb", buffering=0)
    bad = nth == 1 or mode in ("frozen", "negavg", "esc", "warnall")
    total, avg = 0, 0.002
    def say(s):
        f.write((s + "\r\n").encode("latin-1"))
    while True:
        line = f.readline()
        if not line:
            return
        cmd = line.decode("latin-1").strip()
        if cmd == "Hello":
            say("Hello, PTDaemon here!")
        elif cmd == "Identify":
            idn = "YOKOGAWA;WT310E;C2QE\x1b]0;pwned\x07;F1.03" if mode == "esc" else "YOKOGAWA;WT310E;C2QE12345;F1.03"
            say("WT310E,1000,1,1,1,1,version=1.11.0-fake,mode=power," + idn)
        elif cmd == "Stop":
            say("Stopping untimed measurement")
        elif cmd == "RR":
            say("Ranges,0,20,0,300")
        elif cmd.startswith("Go,"):
            say("Starting untimed measurement, maximum 500000 samples at 1000ms with 0 rampup samples")
        elif cmd == "RL,1":
            if bad and mode in ("warn", "warnall"):
                while True:
                    say("WARNING: Uncertainty 1.45%, exceeds 1.00%")
                    time.sleep(0.02)
            if bad and mode == "last":
                say("Last 1000000 samples")
                while True:
                    say(SAMPLE)
                    time.sleep(1)
            if bad and mode == "slow":
                say("Last 5 samples")
                for _ in range(5):
                    time.sleep(1)
                    say(SAMPLE)
            say("Last 1 sample")
            say(SAMPLE)
        elif cmd == "Uncertainty":
            if mode == "frozen":
                say("Uncertainty,0.002,0.001,0.003,0,0,0,0")
                continue
            if mode == "negavg" and total > 0:
                avg = avg / 4  # the running average falls: the new samples' sum < 0
            total += 1
            say("Uncertainty,%.6f,0.001,0.003,%d,0,%d,0" % (avg, total, total))
        else:
            say("Unknown command")


serve_forever(port_file, serve)
