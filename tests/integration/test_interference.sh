#!/usr/bin/env bash
# test_interference.sh: `run --interference` on 1 tile of two workloads (the
# standard tile's oltp and kv) against the embedded SUT. Checks that each
# workload ran alone in a stored level of its own (levels.alone) and then the
# whole tile; that in an alone level the other workload had no op, both in
# the store and on the server (Redis INFO commandstats and the PostgreSQL
# backends of the OLTP database, sampled during the run); and that the
# report's interference figures (JSON) equal those recomputed here from the
# stored levels: throughput together / alone, each percentile rule's
# together / alone (the ops table's p95_ms / p99_ms), marginal power alone
# (mean power - active idle), J/op, and the tile's marginal power against
# the sum alone. Saturation must come from the whole tile's level only. tilebench check
# recomputes the table (percentile ratios from histograms.hlog) and report.csv's copy, and a
# forged percentile, ratio or CSV cell (manifest rewritten) fails it.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
awk '/^\[/ { skip = ($0 == "[workload.web]" || $0 == "[qos.web]" || $0 == "[workload.mail]" || $0 == "[qos.mail]") } !skip' \
    "$TB_SOURCE_DIR/tiles/standard.ini" | cat - "$T/sut/sut.ini" >"$T/tile.ini"
expect "workloads in the tile" "$(grep -c '^\[workload\.' "$T/tile.ini")" -eq 2
PG=$(sed -n 's/^pg = //p' "$T/sut/sut.ini")
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
RHOST=${REDIS%:*}
RPORT=${REDIS##*:}
PM=$(head -1 "$T/sut/pg/postmaster.pid")
DBNAME=$(echo "$PG" | sed -n 's/.*dbname=\([^ ]*\).*/\1/p')
[ -n "$PM" ] && [ -n "$DBNAME" ] || fail "no postmaster pid or dbname: '$PM' '$DBNAME'"

# Server-side evidence over time: every 0.25 s the wall clock (ms), Redis's
# SET and GET calls, and the sessions on the OLTP database (its backends'
# process titles, so the sampling itself opens none). Bounded: 480 samples.
sample() {
    local i set get sess
    for ((i = 0; i < 480; i++)); do
        stats=$(redis-cli -h "$RHOST" -p "$RPORT" INFO commandstats 2>/dev/null | tr -d '\r')
        set=$(echo "$stats" | sed -n 's/^cmdstat_set:calls=\([0-9]*\),.*/\1/p')
        get=$(echo "$stats" | sed -n 's/^cmdstat_get:calls=\([0-9]*\),.*/\1/p')
        sess=$(pgrep -P "$PM" -f "^postgres: [^ ]+ $DBNAME " | wc -l || true)
        echo "$(date +%s%3N) ${set:-0} ${get:-0} $sess"
        sleep 0.25
    done
}
sample >"$T/server.txt" &
SAMPLER=$!
at_exit "kill $SAMPLER 2>/dev/null; wait $SAMPLER 2>/dev/null"

"$TILEBENCH" run --config "$T/tile.ini" --interference --ramp-up 2s --warm-up 2s --steady 8s --ramp-down 1s \
    --idle 2s --db "$T/results.db" --report "$T/report.json" >"$T/run.log" 2>&1 ||
    fail "run exited $?: $(cat "$T/run.log")"
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
J="$T/report.json"
DB="$T/results.db"
"$TILEBENCH" report latest --db "$DB" --format text >"$T/report.txt"
"$TILEBENCH" report latest --db "$DB" --format csv >"$T/report.csv"
"$TILEBENCH" report latest --db "$DB" --format html >"$T/report.html"

expect "run status" "$(jq -r .run.status "$J")" = complete
expect "stored levels (alone column, in run order)" \
    "$(sqlite3 "$DB" "SELECT group_concat(tiles || ':' || coalesce(alone, '-'), ' ') FROM (SELECT * FROM levels ORDER BY id)")" \
    = "1:oltp 1:kv 1:-"
expect "settings.interference" "$(jq .run.settings.interference "$J")" = true
expect "JSON levels' alone" "$(jq -c '[.run.levels[].alone]' "$J")" = '["oltp","kv",null]'
expect "summary: the whole tile only" "$(jq '.run.summary | length' "$J")" -eq 1
# (the alone levels pass or fail QoS on their own: only the whole tile's verdict counts)
expect "saturation from the whole tile" "$(jq .run.saturation_tiles "$J")" = \
    "$(sqlite3 "$DB" "SELECT CASE WHEN qos_pass THEN '1' ELSE 'null' END FROM levels WHERE alone IS NULL")"
grep -q "consolidation interference: oltp alone" "$T/run.log" || fail "the observer was not told of oltp alone: $(cat "$T/run.log")"
grep -q "^Consolidation interference" "$T/report.txt" || fail "text report: no interference table"
grep -q "^tiles,repeat,workload,throughput_alone" "$T/report.csv" || fail "csv report: no interference table"
python3 - "$T/report.csv" "$J" <<'PYEOF' || fail "csv report: its interference table differs from the JSON one"
import csv, io, json, sys
main, table = open(sys.argv[1], newline="").read().split("\r\n\r\n")
assert next(csv.reader(io.StringIO(main))) [-1] == "alone"
rows = list(csv.DictReader(io.StringIO(table)))
for w in json.load(open(sys.argv[2]))["run"]["interference"]["levels"][0]["workloads"]:
    mine = [r for r in rows if r["workload"] == w["name"]]
    assert len(mine) == len(w["percentiles"]) and all(abs(float(r["throughput_ratio"]) - w["throughput_ratio"]) < 1e-12 for r in mine), (mine, w)
PYEOF
grep -q 'id="interference"' "$T/report.html" && grep -q "Throughput together / alone" "$T/report.html" ||
    fail "html report: no interference section or chart"
# the alone levels labelled in every per-level table, the ratios' order said
grep -q "^  1 tiles (oltp alone), phase 1$" "$T/report.txt" || fail "text report: the latency table does not label oltp alone"
grep -q "(together/alone [0-9.n/a]*/[0-9.n/a]* ms)" "$T/report.txt" || fail "text report: the percentile ratios' order is not said"
grep -q '<a href="#interference">interference</a>' "$T/report.html" || fail "html report: no interference link in its nav"
# a ratio of a rule not judged (together or alone) is marked, in JSON, text and HTML
cat >"$T/judged.py" <<'PYEOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
intf = json.load(open(sys.argv[2]))["run"]["interference"]
text, html = open(sys.argv[3]).read(), open(sys.argv[4]).read()
starred = False
for w in intf["levels"][0]["workloads"]:
    for p in w["percentiles"]:
        (bad,) = db.execute("SELECT count(*) FROM qos q JOIN levels l ON l.id = q.level_id WHERE q.rule = ? AND "
                            "q.judged = 0 AND q.tile = 0 AND (l.alone IS NULL OR l.alone = ?)", (p["rule"], w["name"])).fetchone()
        assert p["judged"] is (bad == 0), (p, bad)
        starred |= not p["judged"]
note = "fewer ops than the rule needs to be judged"
assert (note in text) == starred and (note in html) == starred, starred
print("percentile ratios: %s not judged" % ("some" if starred else "none"))
PYEOF
python3 "$T/judged.py" "$DB" "$J" "$T/report.txt" "$T/report.html" ||
    fail "not-judged percentile ratios: JSON, text or HTML disagree with the stored verdicts"
# the same with the oltp-alone level's percentile rule made not judged (as with too few ops): marked *
cp "$DB" "$T/unjudged.db"
sqlite3 "$T/unjudged.db" "UPDATE qos SET judged = 0, pass = 0 WHERE rule LIKE 'oltp.% p%<=%'
    AND level_id = (SELECT id FROM levels WHERE alone = 'oltp')"
for fmt in json text html; do
    "$TILEBENCH" report latest --db "$T/unjudged.db" --format "$fmt" >"$T/unjudged.$fmt"
done
grep -q "[0-9]\* (together/alone " "$T/unjudged.text" || fail "text report: a ratio of a rule not judged is not marked *"
[ "$(jq '[.run.interference.levels[].workloads[].percentiles[] | select(.judged == false)] | length' "$T/unjudged.json")" -ge 1 ] ||
    fail "JSON: no percentile with judged false after its rule was made not judged"
python3 "$T/judged.py" "$T/unjudged.db" "$T/unjudged.json" "$T/unjudged.text" "$T/unjudged.html" ||
    fail "not-judged percentile ratios (a rule not judged): JSON, text or HTML disagree with the stored verdicts"

# The store: the workload that did not run had no op in an alone level (nor
# over its whole level, count_all), and the one that ran had some.
stored_ops() { # alone workload
    sqlite3 "$DB" "SELECT coalesce(sum(o.count + o.count_all), 0) FROM levels l JOIN workloads w ON w.level_id = l.id
                   JOIN ops o ON o.workload_id = w.id WHERE l.alone IS '$1' AND w.name = '$2'"
}
expect "stored kv ops in the oltp-alone level" "$(stored_ops oltp kv)" -eq 0
expect "stored oltp ops in the kv-alone level" "$(stored_ops kv oltp)" -eq 0
expect "stored oltp ops in the oltp-alone level" "$(stored_ops oltp oltp)" -gt 100
expect "stored kv ops in the kv-alone level" "$(stored_ops kv kv)" -gt 100
# QoS of a workload that did not run is not judged there (it would fail "no ops").
expect "kv rules in the oltp-alone level" "$(sqlite3 "$DB" "SELECT count(*) FROM qos q JOIN levels l ON l.id = q.level_id
    WHERE l.alone = 'oltp' AND q.rule LIKE 'kv.%'")" -eq 0

# The server: from the first steady-state phase start to its end, per level.
python3 - "$DB" "$T/server.txt" >"$T/server.log" 2>&1 <<'PYEOF' || fail "server-side counts: $(cat "$T/server.log")"
import sqlite3, sys, datetime
db = sqlite3.connect(sys.argv[1])
rows = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 4]
def ms(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000
ok = True
for alone, s0, s1 in db.execute("SELECT coalesce(alone, '-'), steady_start, steady_end FROM levels ORDER BY id"):
    t0, t1 = ms(s0), ms(s1)
    inside = [r for r in rows if t0 <= r[0] <= t1]
    assert len(inside) >= 10, (alone, len(inside), s0, s1)
    kv = (inside[-1][1] + inside[-1][2]) - (inside[0][1] + inside[0][2])
    sess = max(r[3] for r in inside)
    print("%s level: %d samples, Redis SET+GET calls %d, OLTP sessions up to %d" % (alone, len(inside), kv, sess))
    want_kv = alone in ("kv", "-")
    want_pg = alone in ("oltp", "-")
    ok &= (kv > 0) == want_kv and (sess > 0) == want_pg
sys.exit(0 if ok else 1)
PYEOF
cat "$T/server.log"

# The report's ratios, recomputed from the stored levels (one phase each).
python3 - "$DB" "$J" >"$T/recompute.log" 2>&1 <<'PYEOF' || fail "recomputed figures differ: $(cat "$T/recompute.log")"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
intf = json.load(open(sys.argv[2]))["run"]["interference"]
idle = db.execute("SELECT active_idle_watts FROM runs").fetchone()[0]
good = True
def close(what, got, want):
    global good
    ok = got is not None and abs(got - want) <= 1e-9 * max(abs(want), 1e-12)
    print("%s %s: published %r, recomputed %r" % ("ok" if ok else "MISMATCH", what, got, want))
    good &= ok
def level(alone):
    return db.execute("SELECT id, steady_s, avg_watts FROM levels WHERE alone IS ?", (alone,)).fetchone()
def ops(lid, wl):
    return db.execute("SELECT sum(ops) FROM workloads WHERE level_id = ? AND name = ?", (lid, wl)).fetchone()[0]
def pct(lid, wl, op, p):
    col = {95: "p95_ms", 99: "p99_ms", 90: "p90_ms", 50: "p50_ms"}[int(p)]
    return db.execute("SELECT o.%s FROM ops o JOIN workloads w ON w.id = o.workload_id WHERE w.level_id = ? AND "
                      "w.name = ? AND o.name = ?" % col, (lid, wl, op)).fetchone()[0]
assert len(intf["levels"]) == 1, intf
lv = intf["levels"][0]
assert [w["name"] for w in lv["workloads"]] == ["oltp", "kv"], lv
close("active idle", intf["active_idle_watts"], idle)
whole, ws, ww = level(None)
sum_alone = 0
for w in lv["workloads"]:
    name = w["name"]
    lid, s, watts = level(name)
    ops_alone, ops_tog = ops(lid, name) / s, ops(whole, name) / ws
    close(name + " throughput ratio", w["throughput_ratio"], ops_tog / ops_alone)
    close(name + " ops/s alone", w["ops_per_s_alone"], ops_alone)
    close(name + " marginal W alone", w["marginal_watts_alone"], watts - idle)
    close(name + " J/op alone", w["joules_per_op_alone"], (watts - idle) / ops_alone)
    sum_alone += watts - idle
    rules = [r for (r,) in db.execute("SELECT rule FROM qos WHERE level_id = ? AND tile = 0 AND rule LIKE ? AND "
                                      "rule LIKE '% p%<=%'", (whole, name + ".%"))]
    assert len(w["percentiles"]) == len(rules) >= 1, (w["percentiles"], rules)
    for p in w["percentiles"]:
        op = p["op"]
        close("%s %s p%g ratio" % (name, op, p["percentile"]), p["ratio"],
              pct(whole, name, op, p["percentile"]) / pct(lid, name, op, p["percentile"]))
close("tile marginal W together", lv["marginal_watts_together"], ww - idle)
close("sum of marginal W alone", lv["marginal_watts_alone_sum"], sum_alone)
close("sharing saves W", lv["sharing_saves_watts"], sum_alone - (ww - idle))
if sum_alone > 0:
    close("sharing saves %", lv["sharing_saves_pct"], 100 * (sum_alone - (ww - idle)) / sum_alone)
else:  # an estimate on a busy host can put active idle above load: no share of a sum <= 0
    print("sum alone %r <= 0: sharing saves %% is %r" % (sum_alone, lv["sharing_saves_pct"]))
    good &= lv["sharing_saves_pct"] is None
sys.exit(0 if good else 1)
PYEOF
cat "$T/recompute.log"
# Every stored figure of every level, alone ones included, by the project's own recomputation.
python3 "$TB_SOURCE_DIR/tests/tools/recompute.py" "$DB" >"$T/recompute-all.log" 2>&1 ||
    fail "recompute.py: $(cat "$T/recompute-all.log")"
tail -1 "$T/recompute-all.log"
# tilebench check recomputes the interference table from the rows and histograms.hlog, percentile
# ratios included, and holds report.csv's copy of it against report.json
"$TILEBENCH" publish 1 --db "$DB" -o "$T/r.tar.gz" >"$T/publish.log" 2>&1 || fail "publish: $(cat "$T/publish.log")"
rc=0
"$TILEBENCH" check "$T/r.tar.gz" >"$T/check.out" 2>&1 || rc=$? # a demo run: the edges rule may fail
[ "$rc" -le 1 ] || fail "check exited $rc: $(cat "$T/check.out")"
grep -q "^PASS figures interference: [0-9]* figures of 1 levels agree (.*percentiles alone and together" \
    "$T/check.out" || fail "check: no interference line: $(cat "$T/check.out")"
grep -q "^PASS report.csv interference: [0-9]* rows, [0-9]* figures agree" "$T/check.out" ||
    fail "check: no line for report.csv's interference table: $(cat "$T/check.out")"
! grep -q "^FAIL figure" "$T/check.out" || fail "check: a figure: $(grep '^FAIL figure' "$T/check.out")"
! grep -q "^FAIL report.csv" "$T/check.out" || fail "check: report.csv: $(grep '^FAIL report.csv' "$T/check.out")"
# forged, the manifest's hash rewritten: one percentile of the table (report.json) and one cell of
# report.csv's copy; each check exits 1 naming the figure
mkdir "$T/forge" && tar xzf "$T/r.tar.gz" -C "$T/forge" || fail "untar"
B=$(ls "$T/forge")
forge() { # NAME FILE: after FILE of the bundle was edited, rehash, pack and check it; restore from r.tar.gz
    local d="$T/forge/$B" rc=0
    jq --arg p "$2" --arg h "$(sha256sum "$d/$2" | cut -d' ' -f1)" --argjson b "$(stat -c %s "$d/$2")" \
        '(.files[] | select(.path == $p)) |= (.sha256 = $h | .bytes = $b)' "$d/manifest.json" >"$T/m.json" &&
        mv "$T/m.json" "$d/manifest.json" || fail "jq rehash $1"
    (cd "$T/forge" && tar czf "$T/$1.tar.gz" "$B") || fail "tar $1"
    "$TILEBENCH" check "$T/$1.tar.gz" >"$T/$1.out" 2>&1 || rc=$?
    expect "check $1: exit status" "$rc" -eq 1
    ! grep -q "^FAIL hash" "$T/$1.out" || fail "check $1: a hash failed: the manifest was not rewritten"
    rm -rf "$T/forge/$B" && tar xzf "$T/r.tar.gz" -C "$T/forge" || fail "untar"
}
P0='.run.interference.levels[0].workloads[0].percentiles[0]'
W0=$(jq -r '.run.interference.levels[0].workloads[0].name' "$J")
jq "$P0.together_ms |= . * 1.05 + 1 | $P0.ratio |= . * 1.05" "$T/forge/$B/report.json" >"$T/f.json" &&
    mv "$T/f.json" "$T/forge/$B/report.json" || fail "jq forge"
forge pctf report.json
grep -q "^FAIL figure interference tiles 1 repeat 1 $W0\..* together_ms: published" "$T/pctf.out" ||
    fail "check pctf: no line for the forged percentile: $(cat "$T/pctf.out")"
jq "$P0.ratio |= . * 1.01" "$T/forge/$B/report.json" >"$T/f.json" && mv "$T/f.json" "$T/forge/$B/report.json" ||
    fail "jq forge"
forge ratiof report.json
grep -q "^FAIL figure interference tiles 1 repeat 1 $W0\..* ratio: published" "$T/ratiof.out" ||
    fail "check ratiof: no line for the forged ratio: $(cat "$T/ratiof.out")"
python3 - "$T/forge/$B/report.csv" <<'PYEOF' || fail "edit report.csv"
import csv, sys
text = open(sys.argv[1], newline="").read()
head, tail = text.split("\r\n\r\n", 1)
rows = list(csv.reader(tail.splitlines()))
i = rows[0].index("percentile_ratio")
rows[1][i] = repr(float(rows[1][i]) * 1.01)
with open(sys.argv[1], "w", newline="") as f:
    f.write(head + "\r\n\r\n")
    csv.writer(f, lineterminator="\r\n").writerows(rows)
PYEOF
forge csvf report.csv
grep -q "^FAIL report.csv row 1 (interference: tiles 1, repeat 1, $W0) percentile_ratio: csv" "$T/csvf.out" ||
    fail "check csvf: no line for the forged cell: $(cat "$T/csvf.out")"
"$TILEBENCH" validate latest --db "$DB" >"$T/validate.log" 2>&1 || true
grep -q "1 tiles (oltp alone) phase 1" "$T/validate.log" || fail "validate does not show the alone level: $(cat "$T/validate.log")"
echo "PASS test_interference"
