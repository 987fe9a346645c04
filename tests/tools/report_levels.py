#!/usr/bin/env python3
"""report_levels.py: builds report fixtures from a real stored run, in SQL.

    report_levels.py DB RUN --levels N [--drop-sample LEVEL] [--agents K] [--infra] [--interference]
        copies RUN into a new run of N load levels (tiles 1..N): each level
        is a copy of RUN's first level (its levels row, workloads, ops, QoS
        verdicts, power samples and stages), shifted in time so the levels
        follow each other; the run's meters, active idle samples and idle
        stage are copied once. --drop-sample LEVEL deletes the middle steady
        sample of meter 0 in that level, so the power chart has a second
        without a sample. saturation_tiles is set to N.
        --agents K gives each level K load-generator agents (long names and
        host names, one lost); --infra gives each level two infrastructure
        operations; --interference adds, per level, one level per workload
        that ran alone (no samples or stages of its own): the wide tables
        of a big run, for the layout checks.

    report_levels.py DB RUN --long SECONDS --spike WATTS
        copies RUN into a new run of one level whose steady state lasts
        SECONDS: meter 0's samples at 1 Hz, their watts cycled from RUN's
        real steady samples, with one sample of WATTS in the middle.

Prints the new run's id. Only the tables the HTML report reads are copied;
the stages table is the schema 11 one (tests/integration/test_report_browser.sh).
"""
import argparse
import sqlite3
import sys
import uuid

S = 1000000  # µs per s


def cols(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def copy_rows(db, table, where, args, overrides, skip=("id",)):
    """Copies the rows of table matching where, with column overrides (a
    value, or a function of the row dict); returns [(old row, new rowid)]."""
    names = [c for c in cols(db, table) if c not in skip]
    out = []
    for row in db.execute(f"SELECT rowid, * FROM {table} WHERE {where}", args).fetchall():
        d = dict(zip(["rowid"] + cols(db, table), row))
        vals = []
        for c in names:
            o = overrides.get(c, d[c])
            if c == "uuid" and c not in overrides:
                o = str(uuid.uuid4())  # runs.uuid is unique: a copy is a new run
            vals.append(o(d) if callable(o) else o)
        quoted = ", ".join(f'"{c}"' for c in names)  # qos."limit" is an SQL keyword
        cur = db.execute(f"INSERT INTO {table} ({quoted}) VALUES ({', '.join('?' * len(names))})", vals)
        out.append((d, cur.lastrowid))
    return out


def copy_level(db, src_level, new_run, tiles, shift):
    """Copies levels row src_level into new_run as `tiles` tiles, its
    samples and steady edges shifted by shift µs; returns the new level id."""
    sh = lambda c: (lambda d: d[c] + shift if d[c] is not None else None)
    [(_, lid)] = copy_rows(db, "levels", "id = ?", (src_level,), {
        "run_id": new_run, "tiles": tiles,
        "steady_start_mono_us": sh("steady_start_mono_us"), "steady_end_mono_us": sh("steady_end_mono_us")})
    for w, wid in copy_rows(db, "workloads", "level_id = ?", (src_level,), {"level_id": lid}):
        copy_rows(db, "ops", "workload_id = ?", (w["id"],), {"workload_id": wid}, skip=())
    copy_rows(db, "qos", "level_id = ?", (src_level,), {"level_id": lid}, skip=())
    copy_rows(db, "power_samples", "level_id = ?", (src_level,),
              {"run_id": new_run, "level_id": lid, "mono_us": sh("mono_us"), "wall_us": sh("wall_us")}, skip=())
    return lid


def wide_tables(db, a, lid, src_level, new_run, k):
    """The agents, infra and alone rows of level lid (tiles k) of new_run."""
    for n in range(a.agents):
        db.execute("INSERT INTO level_agents (level_id, name, host, tile_lo, tile_hi, threads, users, ops, errors,"
                   " cpu_s, stall_max_us, stall_p99_us, clock_offset_us, clock_bound_us, lost_at)"
                   " VALUES (?, ?, ?, ?, ?, 4, ?, ?, ?, 1.5, 2500, 900, 120, 340, ?)",
                   (lid, f"load-generator-agent-{n:02d}", f"lg{n:02d}.rack-17.example-datacenter.internal", n + 1,
                    n + k, 40 * k, 123456789 + n, n, "2026-12-03T14:00:00Z" if n == 1 else None))
    if a.infra:
        for n, kind in enumerate(("vmotion", "storage-migration")):
            db.execute("INSERT INTO infra (level_id, idx, name, kind, users, ops, errors, err_timeout, count_all,"
                       " bytes, mb_per_s, ops_per_hour, reference, normalized, mean_ms, p50_ms, p95_ms, p99_ms,"
                       " max_ms) VALUES (?, ?, ?, ?, 2, 1234, 3, 3, 1237, 987654321, 812.5, 4442.4, 4000, 1.111,"
                       " 810.2, 802.1, 1203.4, 1500.9, 2999.9)", (lid, n, f"{kind}-between-racks", kind))
    if a.interference:
        for (w,) in db.execute("SELECT DISTINCT name FROM workloads WHERE level_id = ?", (src_level,)).fetchall():
            [(_, alid)] = copy_rows(db, "levels", "id = ?", (src_level,), {"run_id": new_run, "tiles": k, "alone": w})
            for wr, wid in copy_rows(db, "workloads", "level_id = ? AND name = ?", (src_level, w), {"level_id": alid}):
                copy_rows(db, "ops", "workload_id = ?", (wr["id"],), {"workload_id": wid}, skip=())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("run", type=int)
    ap.add_argument("--levels", type=int)
    ap.add_argument("--drop-sample", type=int)
    ap.add_argument("--long", type=int)
    ap.add_argument("--spike", type=float)
    ap.add_argument("--agents", type=int, default=0)
    ap.add_argument("--infra", action="store_true")
    ap.add_argument("--interference", action="store_true")
    a = ap.parse_args()
    db = sqlite3.connect(a.db)
    src = db.execute("SELECT id, tiles, repeat FROM levels WHERE run_id = ? ORDER BY id LIMIT 1", (a.run,)).fetchone()
    if not src:
        sys.exit(f"run {a.run} has no level")
    level, tiles, repeat = src
    stages = db.execute("SELECT min(start_mono_us), max(end_mono_us) FROM stages WHERE run_id = ? AND tiles = ?"
                        " AND repeat = ? AND stage != 'idle'", (a.run, tiles, repeat)).fetchone()
    if stages[0] is None:
        sys.exit(f"run {a.run} has no stages rows (a run stored before schema 11?)")
    span = stages[1] - stages[0] + S  # a second between copies
    label = f"{a.levels} levels copied from run {a.run}" if a.levels else f"{a.long} s steady state from run {a.run}"
    [(_, rid)] = copy_rows(db, "runs", "id = ?", (a.run,), {"label": label, "saturation_tiles": a.levels or 1})
    copy_rows(db, "meters", "run_id = ?", (a.run,), {"run_id": rid}, skip=())
    copy_rows(db, "power_samples", "run_id = ? AND level_id IS NULL AND coalesce(stage, 'idle') = 'idle'", (a.run,),
              {"run_id": rid}, skip=())
    copy_rows(db, "stages", "run_id = ? AND stage = 'idle'", (a.run,), {"run_id": rid}, skip=())
    if a.levels:
        for k in range(1, a.levels + 1):
            shift = (k - 1) * span
            lid = copy_level(db, level, rid, k, shift)
            copy_rows(db, "stages", "run_id = ? AND tiles = ? AND repeat = ? AND stage != 'idle'",
                      (a.run, tiles, repeat), {"run_id": rid, "tiles": k,
                                               "start_mono_us": lambda d, s=shift: d["start_mono_us"] + s,
                                               "end_mono_us": lambda d, s=shift: d["end_mono_us"] + s}, skip=())
            wide_tables(db, a, lid, level, rid, k)
            if k == a.drop_sample:
                rows = db.execute("SELECT rowid FROM power_samples WHERE level_id = ? AND meter_idx = 0"
                                  " ORDER BY mono_us", (lid,)).fetchall()
                if len(rows) < 3:
                    sys.exit(f"level {k} has {len(rows)} samples of meter 0: too few to drop the middle one")
                db.execute("DELETE FROM power_samples WHERE rowid = ?", rows[len(rows) // 2])
    else:
        real = [r[0] for r in db.execute("SELECT watts FROM power_samples WHERE level_id = ? AND meter_idx = 0"
                                         " AND watts IS NOT NULL AND flags & 39 = 0 ORDER BY mono_us", (level,))]
        if not real:
            sys.exit(f"run {a.run}'s first level has no good sample of meter 0")
        t0 = db.execute("SELECT steady_start_mono_us FROM levels WHERE id = ?", (level,)).fetchone()[0]
        [(_, lid)] = copy_rows(db, "levels", "id = ?", (level,), {
            "run_id": rid, "steady_s": float(a.long), "steady_end_mono_us": t0 + a.long * S})
        for w, wid in copy_rows(db, "workloads", "level_id = ?", (level,), {"level_id": lid}):
            copy_rows(db, "ops", "workload_id = ?", (w["id"],), {"workload_id": wid}, skip=())
        db.execute("INSERT INTO stages (run_id, stage, tiles, repeat, phase, alone, start_mono_us, end_mono_us)"
                   " VALUES (?, 'steady', ?, ?, 1, NULL, ?, ?)", (rid, tiles, repeat, t0, t0 + a.long * S))
        rows = [(rid, lid, 0, t0 + i * S + 1000, i * S, a.spike if i == a.long // 2 else real[i % len(real)], 0)
                for i in range(a.long)]
        db.executemany("INSERT INTO power_samples (run_id, level_id, meter_idx, mono_us, wall_us, watts, flags)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    print(rid)


if __name__ == "__main__":
    main()
