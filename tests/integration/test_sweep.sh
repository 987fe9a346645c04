#!/usr/bin/env bash
# test_sweep.sh: a 2-level sweep against the embedded SUT's real PostgreSQL and
# Redis with short stages. Checks the JSON report (2 levels, ops, watts, a QoS
# verdict per level) and that the servers' own counters agree with what the
# load generator says it did: pg_stat_database.xact_commit against the OLTP
# statements (each is one transaction), and Redis INFO commandstats against
# SET/GET counts. The only slack allowed is ops in flight when a level stops.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
# The standard tile without its web workload: the reference web app keeps its
# data in the same PostgreSQL database, so its queries would blur the
# xact_commit comparison below (test_web.sh checks the web counters).
awk '/^\[/ { skip = ($0 == "[workload.web]" || $0 == "[qos.web]") } !skip' "$TB_SOURCE_DIR/tiles/standard.ini" |
    cat - "$T/sut/sut.ini" >"$T/tile.ini"
grep -q '^\[workload.oltp\]' "$T/tile.ini" && ! grep -q '^kind = web' "$T/tile.ini" || fail "tile.ini: web not removed"
PG=$(sed -n 's/^pg = //p' "$T/sut/sut.ini")
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
RHOST=${REDIS%:*}
RPORT=${REDIS##*:}

pg_commits() {
    psql "$PG" -XAtc "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
}
redis_calls() { # cmd
    redis-cli -h "$RHOST" -p "$RPORT" INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0
}

# A session reports its transactions to pg_stat_database when it ends (or
# after up to 10 s idle, PGSTAT_IDLE_INTERVAL): count when no session is left
# on the OLTP database, by the backends' process titles ("postgres: USER DB
# HOST(PORT) STATE"; the reference web apps use a database of their own), so
# that this test's own polling adds no transaction.
PM=$(head -1 "$T/sut/pg/postmaster.pid")
DBNAME=$(echo "$PG" | sed -n 's/.*dbname=\([^ ]*\).*/\1/p')
[ -n "$PM" ] && [ -n "$DBNAME" ] || fail "no postmaster pid or dbname: '$PM' '$DBNAME'"
no_sessions() { ! pgrep -P "$PM" -f "^postgres: [^ ]+ $DBNAME " >/dev/null; }
wait_for "no session left on database $DBNAME" 30 no_sessions
pg_before=$(pg_commits)
set_before=$(redis_calls set)
get_before=$(redis_calls get)

"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 --ramp-up 2s --warm-up 1s --steady 6s --ramp-down 1s \
    --idle 2s --db "$T/results.db" --label "it sweep" --quiet >"$T/run.log" 2>&1 || fail "run exited $?: $(cat "$T/run.log")"

wait_for "the run's sessions on $DBNAME ended (each flushes its statistics as it ends)" 30 no_sessions
pg_after=$(pg_commits)
set_after=$(redis_calls set)
get_after=$(redis_calls get)

"$TILEBENCH" report latest --db "$T/results.db" --format json >"$T/report.json"
J="$T/report.json"

expect "run status" "$(jq -r .run.status "$J")" = complete
expect "levels" "$(jq '.run.levels | length' "$J")" -eq 2
expect "level tiles" "$(jq -c '[.run.levels[].tiles]' "$J")" = "[1,2]"
for i in 0 1; do
    expect "level $i ops" "$(jq "[.run.levels[$i].workloads[].ops] | add" "$J")" -gt 0
    expect_true "level $i avg_watts" "$(jq ".run.levels[$i].avg_watts" "$J")" '. > 0'
    expect "level $i QoS rules" "$(jq ".run.levels[$i].qos | length" "$J")" -ge 3
    expect "level $i workload entries (3 per tile: oltp, kv, mail)" "$(jq ".run.levels[$i].workloads | length" "$J")" -eq $((3 * (i + 1)))
done
# Each level's published figures, recomputed here from the stored raw rows
# (not by tilebench's code), to 1e-9 relative: mean power by the trapezoid
# rule over the level's valid samples, normalized = throughput / reference,
# score = sum over tiles of the geometric mean of the tile's normalized
# throughputs, PPKW = score / kW; and the QoS verdict is "no judged rule
# failed", over all tiles and each tile's own (the report's rule rows).
python3 - "$T/results.db" "$J" >"$T/recompute.log" 2>&1 <<'PYEOF' || fail "recomputed figures differ: $(cat "$T/recompute.log")"
import json, math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
levels = json.load(open(sys.argv[2]))["run"]["levels"]
BAD = 0x01 | 0x02 | 0x04 | 0x20  # invalid, missing, over range, implausible
def close(what, got, want):
    ok = got is not None and abs(got - want) <= 1e-9 * max(abs(want), 1e-300)
    print("%s %s: published %r, recomputed %r" % ("ok" if ok else "MISMATCH", what, got, want))
    return ok
good = True
rows = db.execute("SELECT id, tiles, score, avg_watts, ppkw, qos_pass FROM levels ORDER BY tiles, phase").fetchall()
assert len(rows) == len(levels) == 2, (len(rows), len(levels))
for (lid, tiles, score, watts, ppkw, qos_pass), lv in zip(rows, levels):
    pts = [(t, w) for t, w, f in db.execute("SELECT mono_us, watts, flags FROM power_samples WHERE level_id = ? "
                                            "ORDER BY mono_us", (lid,)) if not f & BAD and w is not None and math.isfinite(w)]
    assert len(pts) >= 2, pts
    energy = sum((w0 + w1) / 2 * (t1 - t0) for (t0, w0), (t1, w1) in zip(pts, pts[1:]))
    good &= close("%d tiles mean power (W, %d samples)" % (tiles, len(pts)), watts, energy / (pts[-1][0] - pts[0][0]))
    per_tile = {}
    for tile, name, thr, ref, norm in db.execute("SELECT tile, name, throughput, reference, normalized FROM workloads "
                                                 "WHERE level_id = ?", (lid,)):
        good &= close("%d tiles tile %d %s normalized" % (tiles, tile, name), norm, thr / ref)
        per_tile.setdefault(tile, []).append(thr / ref)
    assert sorted(per_tile) == list(range(1, tiles + 1)), per_tile
    want = sum(math.exp(sum(math.log(x) for x in xs) / len(xs)) for xs in per_tile.values())
    good &= close("%d tiles score" % tiles, score, want) & close("%d tiles score (report)" % tiles, lv["score"], want)
    good &= close("%d tiles PPKW" % tiles, ppkw, want / (energy / (pts[-1][0] - pts[0][0]) / 1000))
    failed = [q["rule"] for q in lv["qos"] + lv["tile_qos"] if q["judged"] and q["pass"] is False]
    verdict = not failed
    print("%s %d tiles verdict: published %s, failed rules %s" % ("ok" if verdict == bool(qos_pass) == lv["qos_pass"]
                                                                  else "MISMATCH", tiles, lv["qos_pass"], failed))
    good &= verdict == bool(qos_pass) == lv["qos_pass"]
sys.exit(0 if good else 1)
PYEOF
cat "$T/recompute.log"
expect "estimated power flagged" "$(jq .run.estimated_power "$J")" = true
expect "label" "$(jq -r .run.label "$J")" = "it sweep"

# Server-side counters against client counts over whole levels (count_all).
client_xacts=$(jq '[.run.levels[].workloads[] | select(.name=="oltp") | .operations[]
                    | select(.name != "Order") | .count_all] | add' "$J")
client_set=$(jq '[.run.levels[].workloads[] | select(.name=="kv") | .operations[] | select(.name=="SET") | .count_all] | add' "$J")
client_get=$(jq '[.run.levels[].workloads[] | select(.name=="kv") | .operations[] | select(.name=="GET") | .count_all] | add' "$J")
server_xacts=$((pg_after - pg_before))
server_set=$((set_after - set_before))
server_get=$((get_after - get_before))
echo "postgres: server $server_xacts transactions, client $client_xacts statements"
echo "redis: server SET $server_set GET $server_get, client SET $client_set GET $client_get"
expect "client OLTP statements" "$client_xacts" -gt 100
# PostgreSQL also counts two transactions per new session: its startup (which
# reads the catalogs) and the batch of PREPAREs the driver sends once per
# connection. 10 OLTP users at 1 tile + 20 at 2 tiles = 30 sessions, plus the
# psql session of this test. Statements in flight when a level stops may have
# committed without the client counting them: at most one per user (30).
sessions=30
diff=$((server_xacts - client_xacts))
expect "pg xacts - client statements (>= 2 per session: every counted statement committed)" "$diff" -ge $((2 * sessions))
expect "pg xacts - client statements (<= 2 per session + in-flight + psql)" "$diff" -le $((2 * sessions + 30 + 4))
dset=$((server_set - client_set))
dget=$((server_get - client_get))
expect "redis SET calls - client SETs" "$dset" -ge 0
expect "redis SET calls - client SETs (<= 15 kv users in flight)" "$dset" -le 15
expect "redis GET calls - client GETs" "$dget" -ge 0
expect "redis GET calls - client GETs (<= 15 kv users in flight)" "$dget" -le 15

# The run listing knows it.
"$TILEBENCH" runs --db "$T/results.db" | grep -q "complete" || fail "runs does not list the complete run"
echo "PASS test_sweep"
