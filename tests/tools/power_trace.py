#!/usr/bin/python3
"""power_trace.py: power traces for the meter emulator (`tilebench meter sim
--trace`), and their exact time-weighted mean, in code of its own.

    power_trace.py make SPEC OUT.csv
        SPEC lines (seconds, watts; '#' starts a comment):
            flat T0 T1 W        W from T0 to T1
            ramp T0 T1 W0 W1    linear from W0 at T0 to W1 at T1
        Segments must follow each other without gaps. A ramp becomes steps of
        10 ms, each holding the line's value at the middle of its step, so the
        played step function has the ramp's own mean over each step.
        The last point's value holds after the trace ends.
    power_trace.py mean TRACE.csv A B
        The time-weighted mean, W, of the trace as the emulator plays it (the
        value of the last point at or before t; before the first point, the
        first value) over [A, B) seconds of trace time.
    power_trace.py features TRACE.csv A B
        How many steps (a change of more than 5 W from one point to the next)
        and ramps (at least 50 points in a row changing by under 5 W each,
        all in one direction) lie inside [A, B).
"""
import sys

RAMP_STEP_S = 0.01


def die(msg):
    print(f"power_trace.py: {msg}", file=sys.stderr)
    sys.exit(2)


def make(spec_path, out_path):
    points = []
    end = None
    with open(spec_path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            kind, args = line[0], [float(x) for x in line[1:]]
            if kind == "flat" and len(args) == 3:
                t0, t1, w0, w1 = args[0], args[1], args[2], args[2]
            elif kind == "ramp" and len(args) == 4:
                t0, t1, w0, w1 = args
            else:
                die(f"{spec_path}:{n}: expected 'flat T0 T1 W' or 'ramp T0 T1 W0 W1'")
            if end is not None and abs(t0 - end) > 1e-9:
                die(f"{spec_path}:{n}: starts at {t0} s, the previous segment ends at {end} s")
            if not t1 > t0:
                die(f"{spec_path}:{n}: ends at {t1} s, not after its start {t0} s")
            if kind == "flat":
                points.append((t0, w0))
            else:
                k = round((t1 - t0) / RAMP_STEP_S)
                for i in range(k):
                    mid = (i + 0.5) / k
                    points.append((t0 + (t1 - t0) * i / k, w0 + (w1 - w0) * mid))
            end = t1
    if not points:
        die(f"{spec_path}: no segments")
    with open(out_path, "w") as f:
        f.write("time,watts\n")
        for t, w in points:
            f.write(f"{t:.6f},{w:.6f}\n")


def load(path):
    pts = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line[0].isalpha():
                continue
            t, w = line.split(",")
            pts.append((float(t), float(w)))
    return pts


def mean(pts, a, b):
    if not b > a:
        die(f"window [{a}, {b}) is empty")
    energy = 0.0
    for i, (t, w) in enumerate(pts):
        lo = t if i > 0 else float("-inf")
        hi = pts[i + 1][0] if i + 1 < len(pts) else float("inf")
        lo, hi = max(lo, a), min(hi, b)
        if hi > lo:
            energy += w * (hi - lo)
    return energy / (b - a)


def features(pts, a, b):
    before = [(t, w) for t, w in pts if t < a][-1:]  # the point that holds at a
    inside = before + [(t, w) for t, w in pts if a <= t < b]
    steps = sum(1 for (_, w0), (_, w1) in zip(inside, inside[1:]) if abs(w1 - w0) > 5)
    ramps, run, direction = 0, 0, 0
    for (_, w0), (_, w1) in zip(inside, inside[1:]):
        d = w1 - w0
        s = (d > 0) - (d < 0)
        if 0 < abs(d) <= 5 and (run == 0 or s == direction):
            run, direction = run + 1, s
        else:
            ramps += run >= 50
            run, direction = (1, s) if 0 < abs(d) <= 5 else (0, 0)
    ramps += run >= 50
    return steps, ramps


def main(argv):
    if len(argv) == 4 and argv[1] == "make":
        make(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "mean":
        print(f"{mean(load(argv[2]), float(argv[3]), float(argv[4])):.9f}")
    elif len(argv) == 5 and argv[1] == "features":
        print("%d %d" % features(load(argv[2]), float(argv[3]), float(argv[4])))
    else:
        die("usage: power_trace.py make SPEC OUT.csv | mean TRACE.csv A B | features TRACE.csv A B")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
