#!/usr/bin/python3
"""synth_run.py: turns one short real run of a tilebench database into a run
of compliant length, for bench/report.

    synth_run.py DB SEED_RUN LEVELS PHASES STEADY_S

Copies run SEED_RUN into a new run (its id is printed) of LEVELS load levels
(1..LEVELS tiles) x PHASES phases, each phase's steady window STEADY_S
seconds long. Every level row, and every row hanging off it (workloads, ops
with their histograms, QoS verdicts, per-host and per-agent rows), is a copy
of the seed run's first level with its tiles, phase and window changed; the
run gets one power sample and one telemetry sample per second from its first
idle second to its last ramp-down second (a 1 Hz trace of a sine-wave load,
with the seed's columns), each tagged as the store tags them: stage 'idle',
'ramp-up', 'warm-up' and 'ramp-down' with level_id NULL, 'steady' with its
level's id (schema 13; before it, ramp samples are left out, since a NULL
level_id read as active idle), with a stages row for each stage. The
figures are not meant to add up: the point is the amount of data a report,
a bundle and a check must read (about 90,000 samples and 1,000 histograms
with LEVELS=10, PHASES=3, STEADY_S=2400).
"""
import datetime
import math
import sqlite3
import sys
import uuid

STAGE_S = 300  # ramp-up + warm-up (half each) before each phase, ramp-down after it (compliant-like)


def columns(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def quoted(names):
    return ",".join('"' + n + '"' for n in names)


def copy_rows(db, table, where, args, changes):
    """Copies the rows of TABLE matching WHERE with CHANGES applied; returns
    [(old rowid, new rowid)]."""
    cols = columns(db, table)
    out = []
    for row in db.execute(f"SELECT rowid, * FROM {table} WHERE {where}", args).fetchall():
        vals = dict(zip(cols, row[1:]))
        vals.update(changes)
        vals.pop("id", None)  # a fresh INTEGER PRIMARY KEY
        if "uuid" in vals:
            vals["uuid"] = str(uuid.uuid4())
        names = list(vals)
        cur = db.execute(f"INSERT INTO {table} ({quoted(names)}) VALUES ({','.join('?' * len(names))})",
                         [vals[n] for n in names])
        out.append((row[0], cur.lastrowid))
    return out


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    db = sqlite3.connect(sys.argv[1])
    seed, levels, phases, steady = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    [(_, run)] = copy_rows(db, "runs", "id = ?", (seed,), {"label": "synthetic compliant-length run"})
    seed_level = db.execute("SELECT id FROM levels WHERE run_id = ? ORDER BY id LIMIT 1", (seed,)).fetchone()[0]
    level_tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    if "level_id" in columns(db, t) and t not in ("power_samples", "telemetry_samples")]
    for t in ("meters", "hosts"):
        copy_rows(db, t, "run_id = ?", (seed,), {"run_id": run})
    t0, mono0 = 1.7e9, 10**12
    clock = 60.0  # active idle first
    power, telem = [], []
    pcols = [c for c in columns(db, "power_samples")]
    tcols = [c for c in columns(db, "telemetry_samples")]
    pseed = dict(zip(pcols, db.execute("SELECT * FROM power_samples WHERE run_id = ? LIMIT 1", (seed,)).fetchone()))
    tseed = db.execute("SELECT * FROM telemetry_samples WHERE run_id = ? LIMIT 1", (seed,)).fetchone()
    tseed = dict(zip(tcols, tseed)) if tseed else None

    has_stage = "stage" in pcols
    has_stages = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'stages'").fetchone() is not None

    def samples(level_id, start, end, stage, tiles=0, phase=0):
        if not has_stage and stage not in ("idle", "steady"):
            return
        if has_stages:
            db.execute("INSERT INTO stages (run_id, stage, tiles, repeat, phase, start_mono_us, end_mono_us)"
                       " VALUES (?, ?, ?, 1, ?, ?, ?)", (run, stage, tiles, phase, mono0 + int(start * 1e6),
                                                       mono0 + int(end * 1e6)))
        for s in range(int(start), int(end)):
            w = 150 + 50 * math.sin(s / 300.0)
            p = dict(pseed, run_id=run, level_id=level_id, mono_us=mono0 + s * 10**6, wall_us=int((t0 + s) * 1e6),
                     watts=w, flags=0)
            if has_stage:
                p["stage"] = stage
            power.append([p[c] for c in pcols])
            if tseed:
                t = dict(tseed, run_id=run, level_id=level_id, mono_us=mono0 + s * 10**6, wall_us=int((t0 + s) * 1e6))
                telem.append([t[c] for c in tcols])

    samples(None, 0, clock, "idle")
    for tiles in range(1, levels + 1):
        for phase in range(1, phases + 1):
            start = clock + STAGE_S
            end = start + steady
            changes = {"run_id": run, "tiles": tiles, "phase": phase, "steady_start": iso(t0 + start),
                       "steady_end": iso(t0 + end), "steady_s": steady,
                       "steady_start_mono_us": mono0 + int(start * 1e6), "steady_end_mono_us": mono0 + int(end * 1e6)}
            [(_, level)] = copy_rows(db, "levels", "id = ?", (seed_level,), changes)
            for t in level_tables:
                pairs = copy_rows(db, t, "level_id = ?", (seed_level,), {"level_id": level})
                if t == "workloads":
                    for old, new in pairs:
                        copy_rows(db, "ops", "workload_id = ?", (old,), {"workload_id": new})
            samples(None, clock, clock + STAGE_S / 2, "ramp-up", tiles)
            samples(None, clock + STAGE_S / 2, start, "warm-up", tiles)
            samples(level, start, end, "steady", tiles, phase)
            samples(None, end, end + STAGE_S, "ramp-down", tiles)
            clock = end + STAGE_S
    db.executemany(f"INSERT INTO power_samples ({quoted(pcols)}) VALUES ({','.join('?' * len(pcols))})", power)
    if tseed:
        db.executemany(f"INSERT INTO telemetry_samples ({quoted(tcols)}) VALUES ({','.join('?' * len(tcols))})",
                       telem)
    db.execute("UPDATE runs SET started_at = ?, finished_at = ? WHERE id = ?", (iso(t0), iso(t0 + clock), run))
    db.commit()
    hists = db.execute("SELECT count(hist) + count(hist_uncorrected) FROM ops JOIN workloads w ON w.id = workload_id "
                       "JOIN levels l ON l.id = w.level_id WHERE l.run_id = ?", (run,)).fetchone()[0]
    print(run, len(power), len(telem), hists)


main()
