#!/usr/bin/env python3
"""bench/cost.py: what one op costs each tool, from a `perf stat -x,` run of each.

    cost.py UNIT NAME_A OPS_A PERF_A USER_A SYS_A NAME_B OPS_B PERF_B USER_B SYS_B

UNIT names the op ("request", "transaction"). OPS_x is the ops the run of
tool x made, PERF_x the file `perf stat -x, -o FILE` wrote for it, and
USER_x / SYS_x its user and kernel CPU in microseconds per op (medians of the
script's own rounds, from wait4). Prints a Markdown table: CPU per op, every
system call per op (all of them, then by kind: every kind the bench counts
that either tool made at least 0.005 times per op), and context switches per
op, with the ratio B / A. Exits 2 when a file cannot be read or holds no
count for an event.
"""
import sys


def read_perf(path):
    """{event: count} from perf stat's CSV output (count,unit,event,...)."""
    counts = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) < 3 or line.startswith("#"):
                    continue
                try:
                    counts[parts[2]] = float(parts[0])
                except ValueError:  # "<not counted>", "<not supported>"
                    continue
    except OSError as e:
        sys.exit(f"bench/cost.py: {path}: {e.strerror}")
    if "raw_syscalls:sys_enter" not in counts or "context-switches" not in counts:
        sys.exit(f"bench/cost.py: {path}: no system call or context switch count (perf stat failed?)")
    return counts


def ratio(a, b):
    return f"{b / a:.2f}" if a > 0 else "-"


def main(argv):
    if len(argv) != 12:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    unit = argv[1]
    tools = []
    for i in (2, 7):
        name, ops, perf, user, sys_ = argv[i : i + 5]
        ops = float(ops)
        if ops <= 0:
            sys.exit(f"bench/cost.py: {name} made no {unit}s")
        tools.append((name, ops, read_perf(perf), float(user), float(sys_)))
    (na, oa, pa, ua, sa), (nb, ob, pb, ub, sb) = tools
    rows = [
        (f"user CPU µs per {unit}", ua, ub, 2),
        (f"kernel CPU µs per {unit}", sa, sb, 2),
        (f"all CPU µs per {unit}", ua + sa, ub + sb, 2),
        (f"system calls per {unit}", pa["raw_syscalls:sys_enter"] / oa, pb["raw_syscalls:sys_enter"] / ob, 3),
    ]
    kinds = sorted({k for k in list(pa) + list(pb) if k.startswith("syscalls:sys_enter_")})
    for k in kinds:
        a, b = pa.get(k, 0.0) / oa, pb.get(k, 0.0) / ob
        if a >= 0.005 or b >= 0.005:
            rows.append((f"  {k[len('syscalls:sys_enter_'):]}", a, b, 3))
    rows.append((f"context switches per {unit}", pa["context-switches"] / oa, pb["context-switches"] / ob, 3))
    print(f"| cost | {na} | {nb} | {nb} / {na} |")
    print("|---|---|---|---|")
    for label, a, b, prec in rows:
        print(f"| {label} | {a:.{prec}f} | {b:.{prec}f} | {ratio(a, b)} |")


if __name__ == "__main__":
    main(sys.argv)
