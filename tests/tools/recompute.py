#!/usr/bin/python3
"""recompute.py: recomputes a run's published figures from the raw rows of a
tilebench results database, in code of its own (no tilebench code is called),
and compares them with what tilebench stored.

    recompute.py DB [RUN_ID]          (default: the newest run)

Definitions used (docs/method.md, "Scores and PPKW"; the units of the tile
file's `unit` key):
  - a workload's throughput = the count of its metric ops divided by the
    steady window's length, in the workload's unit: per second for `ops/s`,
    per minute (x 60) for `OPM` and `ops/min`. The metric ops (docs/tile-file.md,
    "Workloads", and docs/campaigns.md, "p95 per workload"): oltp's orders (`Order`, or `Point` in
    point mode), kv's `GET` and `SET`, every mail action, web's Olio ops (not
    the asset `Request`s), http's `GET`. ops.metric must say the same;
  - normalized = throughput / reference, the reference being the tile file's
    `reference` (the run's config_text) or, when the run normalized against a
    calibration, that calibration's row;
  - tile score = geometric mean of its workloads' normalized throughputs (0 when
    any is 0); in a consolidation-interference level (levels.alone, `run
    --interference`) the normalized throughput of the workload that ran alone;
    level score = sum of its tile scores (the application score);
  - with infrastructure operations ([infra.NAME] rows of the level): each
    one's ops per hour = its ops / the steady window's length x 3600,
    normalized = that / its reference (the tile file's `reference`, or the
    calibration named in settings.reference_source under "infra.NAME"); the
    infrastructure score = their geometric mean (unknown when one has no
    reference); the final score = 0.8 x application + 0.2 x infrastructure
    (VMmark 3), or the application score when the infrastructure score is
    unknown;
  - mean power = per meter, the trapezoid rule over that meter's valid samples
    in the steady window [start, end), divided by the time from its first to
    its last valid sample (one valid sample: its value), summed over meters;
  - PPKW = score / (mean power / 1000);
  - active idle (runs.active_idle_watts) = the same mean over the run's
    active idle samples: power_samples.stage 'idle' (schema 13), or on
    older rows (stage NULL) those without a level_id; ramp-up, warm-up and
    ramp-down samples (level_id NULL too) are no figure's.
A sample is valid when its watts are a finite number and its flags carry none
of invalid (0x01), missing (0x02), over range (0x04) or implausible (0x20);
estimated (0x08) and auto-ranging (0x10) samples are measurements.

Every figure must agree to REL (1e-9) relative. Prints one line per level and
one per disagreement; exits 0 when all agree, 1 when one does not, 2 on bad
input (no such database or run, a row missing what the check needs).
"""
import configparser
import json
import math
import sqlite3
import sys

REL = 1e-9
BAD_FLAGS = 0x01 | 0x02 | 0x04 | 0x20
PER_SECOND = {"ops/s": 1.0, "OPM": 60.0, "ops/min": 60.0}
OLIO = {"HomePage", "Login", "TagSearch", "EventDetail", "PersonDetail", "AddPerson", "AddEvent"}
METRIC = {  # kind -> is this op one of its metric ops
    "oltp": lambda op: op in ("Order", "Point"),
    "kv": lambda op: op in ("GET", "SET"),
    "mail": lambda op: True,
    "web": lambda op: op in OLIO,
    "http": lambda op: op == "GET",
}


class Check:
    def __init__(self):
        self.failures = 0
        self.compared = 0

    def close(self, what, stored, mine):
        """stored (from the database) against mine (recomputed)."""
        self.compared += 1
        if stored is None or mine is None:
            ok = stored is None and mine is None
        else:
            ok = abs(stored - mine) <= REL * max(abs(stored), abs(mine)) or stored == mine
        if not ok:
            self.failures += 1
            print(f"MISMATCH {what}: stored {stored!r}, recomputed {mine!r}")
        return ok

    def fail(self, what):
        self.compared += 1
        self.failures += 1
        print(f"MISMATCH {what}")

    def equal(self, what, stored, mine):
        self.compared += 1
        if stored != mine:
            self.failures += 1
            print(f"MISMATCH {what}: stored {stored!r}, recomputed {mine!r}")


def die(msg):
    print(f"recompute.py: {msg}", file=sys.stderr)
    sys.exit(2)


def tile_file_workloads(config_text):
    """{name: (unit, reference, kind)} from the tile file's [workload.NAME] sections."""
    cp = configparser.ConfigParser(
        strict=False, interpolation=None, comment_prefixes=(";", "#"), inline_comment_prefixes=None
    )
    cp.read_string(config_text or "")
    out = {}
    for sec in cp.sections():
        if not sec.startswith("workload."):
            continue
        ref = cp[sec].get("reference")
        out[sec[len("workload."):]] = (
            cp[sec].get("unit", "ops/s"),
            float(ref) if ref is not None else None,
            cp[sec].get("kind"),
        )
    return out


def tile_file_infra(config_text):
    """{name: reference or None} from the tile file's [infra.NAME] sections."""
    cp = configparser.ConfigParser(
        strict=False, interpolation=None, comment_prefixes=(";", "#"), inline_comment_prefixes=None
    )
    cp.read_string(config_text or "")
    return {
        sec[len("infra."):]: (float(cp[sec]["reference"]) if cp[sec].get("reference") is not None else None)
        for sec in cp.sections()
        if sec.startswith("infra.")
    }


def references(db, run):
    """({workload: (unit, reference, kind)}, {operation: reference or None}) the
    run should have normalized against."""
    config_text, settings = db.execute("SELECT config_text, settings_json FROM runs WHERE id = ?", (run,)).fetchone()
    refs = tile_file_workloads(config_text)
    infra_refs = tile_file_infra(config_text)
    if not refs:
        die(f"run {run}: no [workload.*] section in its stored config_text")
    # "calibration run N (...)": that run's calibrations row is the reference.
    src = json.loads(settings or "{}").get("reference_source") or {}
    for name, how in src.items():
        if isinstance(how, str) and how.startswith("calibration run "):
            cal_run = int(how.split()[2])
            row = db.execute(
                "SELECT unit, reference FROM calibrations WHERE run_id = ? AND workload = ? ORDER BY id DESC LIMIT 1",
                (cal_run, name),
            ).fetchone()
            if not row:
                die(f"run {run}: {name} was normalized against calibration run {cal_run}, which has no row for it")
            if name.startswith("infra."):
                infra_refs[name[len("infra."):]] = row[1]
            else:
                refs[name] = (row[0], row[1], refs.get(name, (None, None, None))[2])
    return refs, infra_refs


def check_infra(db, chk, tag, lid, window_s, infra_refs):
    """The level's infrastructure score recomputed from its infra rows (None:
    unknown, or the level ran no operation), checked against the rows."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'infra'").fetchone():
        return None, False  # before schema 10
    rows = db.execute(
        "SELECT name, ops, ops_per_hour, reference, normalized FROM infra WHERE level_id = ? ORDER BY idx", (lid,)
    ).fetchall()
    if not rows:
        return None, False
    chk.equal(f"{tag}: infrastructure operations", sorted(r[0] for r in rows), sorted(infra_refs))
    norms = []
    for name, ops, oph, ref, norm in rows:
        itag = f"{tag} infra.{name}"
        my_oph = ops / window_s * 3600.0
        chk.close(f"{itag}: ops per hour", oph, my_oph)
        want_ref = infra_refs.get(name)
        chk.close(f"{itag}: reference", ref if ref else None, want_ref)
        my_norm = my_oph / want_ref if want_ref and want_ref > 0 else None
        chk.close(f"{itag}: normalized", norm, my_norm)
        norms.append(my_norm)
    return (None if any(n is None for n in norms) else geomean(norms)), True


def trapezoid_mean(points):
    """points: [(t_us, watts)] in time order, all valid. None when empty."""
    if not points:
        return None
    span = points[-1][0] - points[0][0]
    if span == 0:
        return sum(w for _, w in points) / len(points)
    energy = 0.0
    for (ta, wa), (tb, wb) in zip(points, points[1:]):
        energy += 0.5 * (wa + wb) * (tb - ta)
    return energy / span


def geomean(values):
    if not values or any(not (v > 0) for v in values):
        return 0.0
    # the n-th root of the product (tilebench goes through logs)
    return math.prod(values) ** (1.0 / len(values))


def check_level(db, chk, run, lv, refs, infra_refs, n_meters):
    (lid, tiles, phase, rep, steady_s, t0, t1, score, avg_w, ppkw, s_total, s_bad, alone) = lv
    tag = f"level {tiles} tiles phase {phase} repeat {rep}" + (f" ({alone} alone)" if alone else "")
    if t0 is None or t1 is None:
        die(f"{tag}: no steady_start_mono_us/steady_end_mono_us (stored before schema 7?)")
    window_s = (t1 - t0) / 1e6
    chk.close(f"{tag}: steady_s against the monotonic window", steady_s, window_s)

    # Throughput, normalization, tile scores, level score.
    tile_scores = []
    for tile in range(1, tiles + 1):
        rows = db.execute(
            "SELECT id, name, ops, unit, reference, throughput, normalized FROM workloads"
            " WHERE level_id = ? AND tile = ? ORDER BY id",
            (lid, tile),
        ).fetchall()
        names = sorted(r[1] for r in rows)
        chk.equal(f"{tag} tile {tile}: workloads", names, sorted(refs))
        norms, alone_norm = [], None
        for wid, name, ops, unit, ref, thr, norm in rows:
            wtag = f"{tag} tile {tile} {name}"
            want_unit, want_ref, kind = refs.get(name, (None, None, None))
            counts = db.execute("SELECT name, count, metric FROM ops WHERE workload_id = ?", (wid,)).fetchall()
            if kind not in METRIC:
                die(f"{wtag}: kind '{kind}': which of its ops count is not known to this check")
            for op, _, flag in counts:
                chk.equal(f"{wtag} op {op}: metric flag", flag, 1 if METRIC[kind](op) else 0)
            metric_ops = sum(c for op, c, _ in counts if METRIC[kind](op))
            chk.equal(f"{wtag}: ops = its metric ops' counts", ops, metric_ops)
            chk.equal(f"{wtag}: unit", unit, want_unit)
            chk.close(f"{wtag}: reference", ref, want_ref)
            if unit not in PER_SECOND:
                die(f"{wtag}: unit '{unit}' is none of {sorted(PER_SECOND)}")
            my_thr = metric_ops / window_s * PER_SECOND[unit]
            chk.close(f"{wtag}: throughput ({unit})", thr, my_thr)
            my_norm = my_thr / want_ref if want_ref and want_ref > 0 else 0.0
            chk.close(f"{wtag}: normalized", norm, my_norm)
            norms.append(my_norm)
            if name == alone:
                alone_norm = my_norm
        if alone and alone_norm is None:
            die(f"{tag} tile {tile}: no workload row of {alone}, which ran alone")
        tile_scores.append(alone_norm if alone else geomean(norms))
    stray = db.execute(
        "SELECT count(*) FROM workloads WHERE level_id = ? AND (tile < 1 OR tile > ?)", (lid, tiles)
    ).fetchone()[0]
    chk.equal(f"{tag}: workload rows of tiles outside 1..{tiles}", stray, 0)
    my_app = sum(tile_scores)
    my_infra, ran_infra = check_infra(db, chk, tag, lid, window_s, infra_refs)
    if ran_infra:
        app_score, infra_score = db.execute(
            "SELECT app_score, infra_score FROM levels WHERE id = ?", (lid,)
        ).fetchone()
        chk.close(f"{tag}: application score", app_score, my_app)
        chk.close(f"{tag}: infrastructure score", infra_score, my_infra)
    my_score = my_app if my_infra is None else 0.8 * my_app + 0.2 * my_infra
    chk.close(f"{tag}: score", score, my_score)

    # Mean power.
    samples = db.execute(
        "SELECT meter_idx, mono_us, watts, flags FROM power_samples WHERE level_id = ? ORDER BY mono_us, meter_idx",
        (lid,),
    ).fetchall()
    outside = [s for s in samples if not (t0 <= s[1] < t1)]
    if outside:
        chk.fail(
            f"{tag}: {len(outside)} of its stored samples lie outside its steady window [{t0}, {t1}) us"
            f" (meter {outside[0][0]} at {outside[0][1]} us)"
        )
    else:
        chk.compared += 1
    per_meter = {m: [] for m in range(n_meters)}
    bad = 0
    for m, t, w, flags in samples:
        if m not in per_meter:
            die(f"{tag}: a sample of meter {m}, but the run has {n_meters} meters")
        if w is None or not math.isfinite(w) or (flags & BAD_FLAGS):
            bad += 1
            continue
        per_meter[m].append((t, w))
    chk.equal(f"{tag}: samples_total", s_total, len(samples))
    chk.equal(f"{tag}: samples_bad", s_bad, bad)
    means = {m: trapezoid_mean(p) for m, p in per_meter.items()}
    my_w = None if any(v is None for v in means.values()) else sum(means.values())
    chk.close(f"{tag}: avg_watts", avg_w, my_w)
    my_ppkw = my_score / (my_w / 1000.0) if my_w is not None and my_w > 0 else None
    chk.close(f"{tag}: ppkw", ppkw, my_ppkw)
    per = ", ".join(f"meter {m} {v:.4f} W ({len(per_meter[m])} valid)" for m, v in means.items() if v is not None)
    print(
        f"{tag}: score {my_score:.12g} (tiles {', '.join(f'{s:.6g}' for s in tile_scores)}"
        + (f"; infrastructure {my_infra:.6g}" if my_infra is not None else "")
        + "), "
        f"mean power {my_w if my_w is None else round(my_w, 6)} W ({per}), "
        f"ppkw {my_ppkw if my_ppkw is None else round(my_ppkw, 6)}, window {window_s:g} s"
    )


def check_idle(db, chk, run, n_meters):
    """Active idle's mean power from its samples, told from the ramps' by stage."""
    has_stage = any(c[1] == "stage" for c in db.execute("PRAGMA table_info(power_samples)"))  # schema 13
    where = "(stage = 'idle' OR (stage IS NULL AND level_id IS NULL))" if has_stage else "level_id IS NULL"
    samples = db.execute(
        f"SELECT meter_idx, mono_us, watts, flags FROM power_samples WHERE run_id = ? AND {where}"
        " ORDER BY mono_us, meter_idx",
        (run,),
    ).fetchall()
    stored = db.execute("SELECT active_idle_watts FROM runs WHERE id = ?", (run,)).fetchone()[0]
    per_meter = {m: [] for m in range(n_meters)}
    for m, t, w, flags in samples:
        if m not in per_meter:
            die(f"active idle: a sample of meter {m}, but the run has {n_meters} meters")
        if w is not None and math.isfinite(w) and not (flags & BAD_FLAGS):
            per_meter[m].append((t, w))
    means = [trapezoid_mean(p) for p in per_meter.values()]
    mine = None if not samples or any(v is None for v in means) else sum(means)
    chk.close("active idle watts", stored, mine)
    print(f"active idle: {len(samples)} samples, mean power {mine if mine is None else round(mine, 6)} W")


def main(argv):
    if len(argv) not in (2, 3):
        die("usage: recompute.py DB [RUN_ID]")
    try:
        db = sqlite3.connect(f"file:{argv[1]}?mode=ro", uri=True)
        if len(argv) == 3:
            run = int(argv[2])
        else:
            row = db.execute("SELECT max(id) FROM runs").fetchone()
            run = row[0] if row else None
    except (sqlite3.Error, ValueError) as e:
        die(f"{argv[1]}: {e}")
    if run is None or not db.execute("SELECT 1 FROM runs WHERE id = ?", (run,)).fetchone():
        die(f"{argv[1]}: no run {run}")
    refs, infra_refs = references(db, run)
    n_meters = db.execute("SELECT count(*) FROM meters WHERE run_id = ?", (run,)).fetchone()[0]
    has_alone = any(c[1] == "alone" for c in db.execute("PRAGMA table_info(levels)"))  # schema 10
    levels = db.execute(
        "SELECT id, tiles, phase, repeat, steady_s, steady_start_mono_us, steady_end_mono_us, score, avg_watts,"
        " ppkw, samples_total, samples_bad, " + ("alone" if has_alone else "NULL") + " FROM levels"
        " WHERE run_id = ? ORDER BY id",
        (run,),
    ).fetchall()
    if not levels:
        die(f"run {run}: no levels stored")
    chk = Check()
    for lv in levels:
        check_level(db, chk, run, lv, refs, infra_refs, n_meters)
    check_idle(db, chk, run, n_meters)
    if chk.failures:
        print(f"FAIL: {chk.failures} of {chk.compared} figures disagree (run {run})")
        return 1
    print(f"ok: all {chk.compared} figures of run {run} agree to {REL:g} relative")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
