#!/usr/bin/env bash
# test_hdrlog.sh: `report --format hlog` (an HdrHistogram interval log) read
# by a third party, hdr-histogram-js (tests/tools/hdr/hlog-summary.js), not
# by tilebench. A short kv run against the embedded SUT's real Redis, two
# steady-state phases; then per op and phase: the histogram's total count
# equals the op's steady-state `count` in the database (the histograms hold
# the ok ops of the steady state; count_all counts every stage), for the
# corrected and the uncorrected histogram; p50, p99 and max equal the JSON
# report's within HdrHistogram's precision (0.1% + 1 µs); Interval_Max is the
# max in ms; StartTimestamp and Interval_Length are the phase's steady state
# in seconds after the run's start. `-o FILE.hlog` picks the format by itself.
source "$(dirname "$0")/lib.sh"

HDR="$TB_SOURCE_DIR/tests/tools/hdr"
[ -f "$HDR/node_modules/hdr-histogram-js/package.json" ] ||
    fail "hdr-histogram-js is not installed in $HDR (scripts/install-deps runs npm ci there)"
command -v node >/dev/null || fail "node is not installed (scripts/install-deps)"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
{
    printf '[tile]\nname = kv\n[workload.kv]\nkind = kv\nusers = 4\nthink_time = 5ms\nthink_dist = uniform\n'
    printf 'set_pct = 30\nunit = ops/s\nreference = 1\ntimeout = 1s\n'
    cat "$T/sut/sut.ini"
} >"$T/kv.ini"
"$TILEBENCH" run --config "$T/kv.ini" --tiles 1 --phases 2 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 \
    --idle 1s --quiet --db "$T/r.db" >"$T/run.log" 2>&1 || fail "run exited $?: $(cat "$T/run.log")"

"$TILEBENCH" report latest --db "$T/r.db" --format hlog >"$T/run.hlog" 2>"$T/report.log" ||
    fail "report --format hlog: $(cat "$T/report.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
"$TILEBENCH" report latest --db "$T/r.db" -o "$T/by-name.hlog" || fail "report -o by-name.hlog"
cmp -s "$T/run.hlog" "$T/by-name.hlog" || fail "-o FILE.hlog did not write the hlog format"
head -c 2 "$T/run.hlog" | grep -q '#\[' || fail "the log does not start with a comment: $(head -3 "$T/run.hlog")"

node "$HDR/hlog-summary.js" "$T/run.hlog" >"$T/summary.json" 2>"$T/node.log" ||
    fail "hdr-histogram-js could not read the log: $(cat "$T/node.log")"

python3 - "$T/r.db" "$T/r.json" "$T/summary.json" "$T/run.hlog" >"$T/check.log" 2>&1 <<'PYEOF' || fail "the log does not match the run: $(grep -v '^ok' "$T/check.log")"
import datetime, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
levels_json = json.load(open(sys.argv[2]))["run"]["levels"]
summary = json.load(open(sys.argv[3]))
text = open(sys.argv[4], "rb").read().decode("utf-8")
lines = [l for l in text.split("\n") if l.startswith("Tag=")]
bad = []
def check(ok, what):
    print(("ok: " if ok else "MISMATCH: ") + what)
    if not ok:
        bad.append(what)
# HdrHistogram_c's header reader takes comment lines of up to 127 bytes
for l in text.split("\n"):
    if not l.startswith("Tag="):
        check(len(l.encode()) + 1 < 128, "header line under 128 bytes: %s" % l[:40])
def iso(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()
def close(node_us, json_ms):
    want = json_ms * 1000.0
    return abs(node_us - want) <= 0.001 * want + 1.0

started = iso(db.execute("SELECT started_at FROM runs").fetchone()[0])
fields = {}
for l in lines:
    f = l.split(",")
    check(len(f) == 5, "5 fields in %s" % f[0])
    fields[f[0][4:]] = f
levels = db.execute("SELECT id, phase, steady_start, steady_s FROM levels ORDER BY repeat, tiles, alone IS NULL, id").fetchall()
check(len(levels) == 2 and len(levels_json) == 2, "2 phases stored and reported")
n_hist = 0
for (lid, phase, steady_start, steady_s), lj in zip(levels, levels_json):
    check(lj["phase"] == phase and lj["steady_start"] == steady_start, "level %d is JSON level phase %d" % (lid, phase))
    wj = {(w["name"], w["tile"]): w for w in lj["workloads"]}
    for wname, tile, oname, count, hist, unc in db.execute(
            "SELECT w.name, w.tile, o.name, o.count, o.hist IS NOT NULL, o.hist_uncorrected IS NOT NULL"
            " FROM ops o JOIN workloads w ON w.id = o.workload_id WHERE w.level_id = ? ORDER BY w.id, o.rowid", (lid,)):
        oj = [o for o in wj[(wname, tile)]["operations"] if o["name"] == oname][0]
        base = "L%d/T%d/%s/%s" % (lid, tile, wname, oname)
        for tag, stored, figs in ((base, hist, oj), (base + "/uncorrected", unc, oj["uncorrected"])):
            if not stored:
                check(tag not in summary, "%s: no histogram stored, none in the log" % tag)
                continue
            n_hist += 1
            s = summary.get(tag)
            check(s is not None, "%s in the log" % tag)
            if s is None:
                continue
            check(s["count"] == count, "%s: count %d, ops.count %d" % (tag, s["count"], count))
            if count == 0:
                continue
            for p in ("p50", "p99"):
                check(close(s[p], figs[p + "_ms"]), "%s: %s %d us, JSON %.3f ms" % (tag, p, s[p], figs[p + "_ms"]))
            check(close(s["max"], figs["max_ms"]), "%s: max %d us, JSON %.3f ms" % (tag, s["max"], figs["max_ms"]))
            f = fields[tag]
            check(abs(float(f[1]) - (iso(steady_start) - started)) < 0.0005,
                  "%s: StartTimestamp %s = steady start - run start" % (tag, f[1]))
            check(abs(float(f[2]) - steady_s) < 0.0005, "%s: Interval_Length %s = steady_s %.3f" % (tag, f[2], steady_s))
            check(round(float(f[3]) * 1000) == s["max"], "%s: Interval_Max %s ms = max %d us" % (tag, f[3], s["max"]))
check(n_hist == len(lines) and n_hist >= 8, "%d histograms stored, %d lines in the log" % (n_hist, len(lines)))
check(sum(s["count"] for s in summary.values()) > 100, "more than 100 values in all")
sys.exit(1 if bad else 0)
PYEOF
grep -c '^ok' "$T/check.log" | sed 's/^/ok: checks passed: /'
