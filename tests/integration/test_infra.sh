#!/usr/bin/env bash
# test_infra.sh: infrastructure operations beside the tiles, against the
# embedded SUT's real PostgreSQL and Redis. Stage 1: the shipped example
# (tiles/examples/infra.ini: deploy, backup with pg_verifybackup, migrate and
# a command) over a sweep of 1..2 tiles: each operation ran in every level,
# the server-side evidence is in what the ops kept (the deployed cluster's
# order read back, pg_verifybackup's success line, the kv users' ops on the
# new Redis), and every level's final score equals 0.8 x app + 0.2 x infra
# recomputed here from the stored rows (not by tilebench's code). Stage 2: a
# command that exits 1 is an error with its output kept and fails the
# infrastructure error-rate rule; one that hangs is killed at its timeout;
# nothing an op started is left behind; a calibration with the failing one
# stores the rest and warns. Stage 3: SIGINT.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/tmp"
chmod 755 "$T/tmp"
export TMPDIR="$T/tmp" # the runner's folders go here: none may be left

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
[ -n "$REDIS" ] || fail "no redis in sut.ini"
redis_calls() { # the SUT's Redis: SET + GET calls so far
    redis-cli -h "${REDIS%:*}" -p "${REDIS##*:}" INFO commandstats | tr -d '\r' |
        sed -n 's/^cmdstat_\(get\|set\):calls=\([0-9]*\),.*/\2/p' | awk '{ n += $1 } END { print n + 0 }'
}

# The shipped example without its mail and web workloads (two cores run the
# tiles and the operations together), each operation thinking 1 s instead of
# its own.
awk '/^\[/ { skip = ($0 ~ /^\[(workload|qos)\.(web|mail)\]$/) } !skip' "$TB_SOURCE_DIR/tiles/examples/infra.ini" |
    sed '/^\[infra\./,/^\[/ s/^think_time = .*/think_time = 1s/' | cat - "$T/sut/sut.ini" >"$T/infra.ini"
for s in infra.deploy infra.backup infra.migrate infra.copy workload.oltp workload.kv; do
    grep -q "^\[$s\]" "$T/infra.ini" || fail "infra.ini: no [$s]"
done
! grep -q '^kind = \(web\|mail\)$' "$T/infra.ini" || fail "infra.ini: web or mail left"

calls_before=$(redis_calls)
# No warm-up: the operations' users start at the end of ramp-up, so their
# first ops start in the phase and a deploy (5-8 s at 2 tiles on 2 cores, twice
# that on a busy machine) ends one in the 20 s phase.
STAGES=(--ramp-up 2s --warm-up 0 --steady 20s --ramp-down 1s --idle 1s)
"$TILEBENCH" run --config "$T/infra.ini" --tiles 1..2 "${STAGES[@]}" --db "$T/results.db" --label "it infra" \
    --report "$T/report.txt" --quiet >"$T/run.log" 2>&1 || fail "run exited $?: $(cat "$T/run.log")"
calls_after=$(redis_calls)
# the deployed clusters are stopped under their loader's connection: libpq's notice is not ours to print
! grep -q 'terminating connection' "$T/run.log" || fail "a server notice on stderr: $(grep -m1 terminating "$T/run.log")"
DB="$T/results.db"
q() { sqlite3 -batch -noheader "$DB" "$@"; }
RUN=$(q "SELECT max(id) FROM runs")
expect "run status" "$(q "SELECT status FROM runs WHERE id = $RUN")" = complete
expect "levels" "$(q "SELECT count(*) FROM levels WHERE run_id = $RUN")" -eq 2

# Each operation ran (and succeeded) at least once in every level.
for op in deploy backup migrate copy; do
    for tiles in 1 2; do
        n=$(q "SELECT i.ops FROM infra i JOIN levels l ON l.id = i.level_id
               WHERE l.run_id = $RUN AND l.tiles = $tiles AND i.name = '$op'")
        expect "$op ops at $tiles tiles" "${n:-0}" -ge 1
        e=$(q "SELECT i.errors FROM infra i JOIN levels l ON l.id = i.level_id
               WHERE l.run_id = $RUN AND l.tiles = $tiles AND i.name = '$op'")
        expect "$op errors at $tiles tiles" "${e:-x}" -eq 0
    done
done
expect "backup moved bytes" "$(q "SELECT min(bytes) FROM infra WHERE name = 'backup'")" -gt 1000000

# Server-side evidence, from what the ops kept.
kept() { q "SELECT output FROM infra_outputs o JOIN levels l ON l.id = o.level_id
            WHERE l.run_id = $RUN AND o.name = '$1' AND o.status = 'ok'"; }
kept deploy >"$T/deploy.txt"
grep -qi 'order' "$T/deploy.txt" || fail "deploy kept no order read back: $(head -c 600 "$T/deploy.txt")"
kept backup >"$T/backup.txt"
grep -q 'backup successfully verified' "$T/backup.txt" ||
    fail "backup kept no pg_verifybackup success line: $(head -c 600 "$T/backup.txt")"
kept migrate >"$T/migrate.txt"
grep -q ' [1-9][0-9]* keys (DBSIZE)' "$T/migrate.txt" ||
    fail "migrate kept no count of the keys the new Redis holds: $(head -c 600 "$T/migrate.txt")"
kept copy >"$T/copy.txt"
grep -q 'tile1-level1\.txt' "$T/copy.txt" || fail "the command's stdout not kept: $(head -c 300 "$T/copy.txt")"
# The kv users kept working across the moves: ops in every level, no error beyond those the switch counted.
for tiles in 1 2; do
    kv=$(q "SELECT sum(w.ops) FROM workloads w JOIN levels l ON l.id = w.level_id
            WHERE l.run_id = $RUN AND l.tiles = $tiles AND w.name = 'kv'")
    expect "kv ops at $tiles tiles (the kv users went on through the migrate)" "${kv:-0}" -gt 100
done
# ...on the new Redis instances: the SUT's own Redis served fewer SET and GET
# than the kv users completed (it serves them again after each level).
client_kv=$(q "SELECT sum(o.count_all) FROM ops o JOIN workloads w ON w.id = o.workload_id JOIN levels l ON l.id = w.level_id
               WHERE l.run_id = $RUN AND w.name = 'kv'")
served=$((calls_after - calls_before))
echo "kv: the users completed $client_kv SET/GET, the SUT's Redis served $served"
expect "kv ops served by the migrated-to Redis instances (client - SUT's Redis)" "$((client_kv - served))" -gt 100

# Scores recomputed from the stored rows: app = sum over tiles of the
# geometric mean of throughput / reference; infra = geometric mean over the
# operations of (ops / steady_s x 3600) / reference; final = 0.8 app + 0.2
# infra; PPKW = final / kW.
python3 - "$DB" "$RUN" >"$T/recompute.log" 2>&1 <<'PYEOF' || fail "recomputed scores differ: $(cat "$T/recompute.log")"
import math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = int(sys.argv[2])
good = True
def close(what, got, want):
    global good
    ok = got is not None and want is not None and abs(got - want) <= 1e-9 * max(abs(want), 1e-300)
    print("%s %s: stored %r, recomputed %r" % ("ok" if ok else "MISMATCH", what, got, want))
    good &= ok
def geomean(v):
    return 0.0 if any(x <= 0 for x in v) else math.exp(sum(math.log(x) for x in v) / len(v))
for lid, tiles, steady_s, score, app_s, infra_s, watts, ppkw in db.execute(
        "SELECT id, tiles, steady_s, score, app_score, infra_score, avg_watts, ppkw FROM levels"
        " WHERE run_id = ? ORDER BY tiles, phase", (run,)).fetchall():
    app = 0.0
    for t in range(1, tiles + 1):
        app += geomean([tp / ref for tp, ref in db.execute(
            "SELECT throughput, reference FROM workloads WHERE level_id = ? AND tile = ?", (lid, t))])
    rows = db.execute("SELECT name, ops, reference FROM infra WHERE level_id = ? ORDER BY idx", (lid,)).fetchall()
    assert len(rows) == 4, rows
    infra = geomean([ops / steady_s * 3600.0 / ref for _, ops, ref in rows])
    final = 0.8 * app + 0.2 * infra
    close("%d tiles application score" % tiles, app_s, app)
    close("%d tiles infrastructure score" % tiles, infra_s, infra)
    close("%d tiles final score" % tiles, score, final)
    close("%d tiles PPKW" % tiles, ppkw, final / (watts / 1000.0))
sys.exit(0 if good else 1)
PYEOF
cat "$T/recompute.log"
# and by the project's own independent check of every published figure
python3 "$TB_SOURCE_DIR/tests/tools/recompute.py" "$DB" "$RUN" >"$T/recompute-all.log" 2>&1 ||
    fail "recompute.py: $(grep -v '^level' "$T/recompute-all.log")"
grep 'infrastructure' "$T/recompute-all.log" | head -2
# ...which catches an infrastructure figure that does not follow from the rows:
# one more op stored than the ops per hour, normalized and scores say
cp "$DB" "$T/tampered.db"
sqlite3 "$T/tampered.db" "UPDATE infra SET ops = ops + 1 WHERE idx = 0"
if python3 "$TB_SOURCE_DIR/tests/tools/recompute.py" "$T/tampered.db" "$RUN" >"$T/recompute-tampered.log" 2>&1; then
    fail "recompute.py accepted an infra row whose ops disagree with its ops per hour"
fi
grep -q 'MISMATCH .*infra\..*ops per hour' "$T/recompute-tampered.log" ||
    fail "recompute.py did not name the ops per hour: $(head -5 "$T/recompute-tampered.log")"
grep -q 'infrastructure' "$T/report.txt" && grep -q 'final' "$T/report.txt" ||
    fail "the text report has no application/infrastructure/final scores: $(head -40 "$T/report.txt")"
"$TILEBENCH" report latest --db "$DB" --format json >"$T/report.json"
expect "JSON app_score beside score" "$(jq '[.run.levels[] | select(.app_score != null and .infra_score != null)] | length' "$T/report.json")" -eq 2

# Stage 2: a command that fails and one that hangs, beside one kv tile.
{
    printf '[tile]\nname = infra-faults\n'
    sed -n '/^\[workload\.kv\]/,/^\[/{/^\[qos/!p}' "$TB_SOURCE_DIR/tiles/standard.ini"
    printf '[infra.fails]\nkind = command\nthink_time = 1s\ntimeout = 10s\nreference = 3600\n'
    printf 'command = echo failing on purpose at tile {tile}; echo to stderr >&2; exit 1\n'
    printf '[infra.hangs]\nkind = command\nthink_time = 500ms\ntimeout = 2s\nreference = 3600\n'
    printf 'command = exec sleep 600\n'
    cat "$T/sut/sut.ini"
} >"$T/faults.ini"
rc=0
"$TILEBENCH" run --config "$T/faults.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 1s --idle 0 \
    --db "$DB" --label "it infra faults" >"$T/run2.log" 2>&1 || rc=$?
expect "faults run exit status" "$rc" -eq 0
grep -Eq '^level 1 tiles phase 1: score [0-9.]+ \(app [0-9.]+, infra [0-9.]+\) ' "$T/run2.log" ||
    fail "the console's level line does not give app and infra beside the score: $(grep '^level' "$T/run2.log")"
RUN2=$(q "SELECT max(id) FROM runs")
L2=$(q "SELECT id FROM levels WHERE run_id = $RUN2")
expect "faults run: the failing command's errors" "$(q "SELECT errors FROM infra WHERE level_id = $L2 AND name = 'fails'")" -ge 2
expect "faults run: the failing command's successes" "$(q "SELECT ops FROM infra WHERE level_id = $L2 AND name = 'fails'")" -eq 0
out=$(q "SELECT output FROM infra_outputs WHERE level_id = $L2 AND name = 'fails' AND exit_code = 1 LIMIT 1")
[[ "$out" == *"failing on purpose at tile 1"* && "$out" == *"to stderr"* ]] ||
    fail "the failing command's stdout and stderr not kept: '$out'"
expect "faults run: failed ops kept with exit 1" \
    "$(q "SELECT count(*) FROM infra_outputs WHERE level_id = $L2 AND name = 'fails' AND status != 'ok' AND exit_code = 1")" -ge 2
expect "faults run: the error-rate rule of infra.fails failed" \
    "$(q "SELECT count(*) FROM qos WHERE level_id = $L2 AND rule LIKE 'infra.fails.%error rate%' AND judged = 1 AND pass = 0")" -eq 1
expect "faults run: the level failed QoS" "$(q "SELECT qos_pass FROM levels WHERE id = $L2")" -eq 0
expect "faults run: infra rules are the level's only (no per-tile verdict)" \
    "$(q "SELECT count(*) FROM qos WHERE level_id = $L2 AND rule LIKE 'infra.%' AND tile != 0")" -eq 0
expect "faults run: the hanging command's timeouts" "$(q "SELECT err_timeout FROM infra WHERE level_id = $L2 AND name = 'hangs'")" -ge 2
expect_true "faults run: a hanging op killed at its 2 s timeout (ms)" \
    "$(q "SELECT max(duration_ms) FROM infra_outputs WHERE level_id = $L2 AND name = 'hangs' AND status = 'timeout'")" \
    '. >= 1900 and . < 6000'
"$TILEBENCH" report "$RUN2" --db "$DB" >"$T/report2.txt"
grep -q 'failing on purpose' "$T/report2.txt" || fail "the text report does not show the failed op's output"
# the last lines of a failed op's output (its status line is at the end), its user numbered as stored (0-based)
grep -q '| \[exit status 1\]' "$T/report2.txt" || fail "the text report does not end a failed op's output with its status line"
u=$(q "SELECT user FROM infra_outputs WHERE level_id = $L2 AND name = 'fails' AND status != 'ok' LIMIT 1")
grep -q "fails user $u tile 1 at" "$T/report2.txt" || fail "the text report numbers the infrastructure user unlike the store ($u)"
grep -q 'infra.fails completed no op: its normalized throughput is 0, so the infrastructure score is 0' "$T/report2.txt" ||
    fail "the text report does not say why the infrastructure score is 0"
grep -q 'peak score .* (final score: 0.8 x application + 0.2 x infrastructure)' "$T/report2.txt" ||
    fail "the text report's peak score does not say it is the final score"
"$TILEBENCH" report "$RUN2" --db "$DB" --format html >"$T/report2.html"
grep -q 'final score: 0.8 &times; application + 0.2 &times; infrastructure' "$T/report2.html" ||
    fail "the HTML summary's peak score does not say it is the final score"
grep -q '<a href="#infra">infrastructure</a>' "$T/report2.html" || fail "the HTML nav has no infrastructure link"
grep -q ", user $u, tile 1, at" "$T/report2.html" || fail "the HTML report numbers the infrastructure user unlike the store ($u)"
nothing_left() { # after a run: no op's process, no runner folder
    ! pgrep -f '^sleep 600$' >/dev/null || fail "$1: a hanging command's sleep is still running"
    left=$(find "$T/tmp" -mindepth 1 -maxdepth 1 -name 'tilebench-infra.*' | head -3)
    [ -z "$left" ] || fail "$1: runner folders left behind: $left"
    echo "ok: $1: no op process and no runner folder left"
}
nothing_left "faults run"

# Stage 2b: --calibrate with an operation that completes no op: the kv
# workload's reference is stored, the operation gets none and a warning
# saying how to get one, and the run completes. Then a run of that file
# warns before its first level that the operation has no reference.
sed '/^\[infra\.hangs\]/,/^command = exec sleep/d; /^reference = 3600$/d' "$T/faults.ini" |
    sed 's/^name = infra-faults$/name = infra-calib/' >"$T/calib.ini"
rc=0
"$TILEBENCH" run --config "$T/calib.ini" --calibrate --ramp-up 1s --warm-up 0 --steady 4s --ramp-down 1s --idle 0 \
    --db "$DB" --label "it infra calibrate" >"$T/run-cal.log" 2>&1 || rc=$?
expect "calibration run exit status ($(tail -3 "$T/run-cal.log"))" "$rc" -eq 0
! grep -q '^tilebench run: *$' "$T/run-cal.log" || fail "an empty error message: $(cat "$T/run-cal.log")"
RUNC=$(q "SELECT max(id) FROM runs")
expect "calibration run status" "$(q "SELECT status FROM runs WHERE id = $RUNC")" = complete
expect "calibration: the kv workload's reference stored" \
    "$(q "SELECT count(*) FROM calibrations WHERE run_id = $RUNC AND workload = 'kv' AND reference > 0")" -eq 1
expect "calibration: no reference for infra.fails" \
    "$(q "SELECT count(*) FROM calibrations WHERE run_id = $RUNC AND workload = 'infra.fails'")" -eq 0
expect "calibration: a warning names infra.fails and how to get its reference" \
    "$(q "SELECT count(*) FROM events WHERE run_id = $RUNC AND kind = 'warning' AND message LIKE '%infra.fails%'
          AND message LIKE '%--calibrate again%' AND message LIKE '%reference =%'")" -eq 1
rc=0
"$TILEBENCH" run --config "$T/calib.ini" --tiles 1 --ramp-up 1s --warm-up 0 --steady 3s --ramp-down 1s --idle 0 \
    --db "$DB" --label "it infra no reference" >"$T/run-noref.log" 2>&1 || rc=$?
expect "no-reference run exit status" "$rc" -eq 0
first_warn=$(grep -n 'infrastructure operation fails has no reference' "$T/run-noref.log" | head -1 | cut -d: -f1)
first_level=$(grep -n '^level 1 tiles' "$T/run-noref.log" | head -1 | cut -d: -f1)
expect_true "no-reference warning (line ${first_warn:-none}) before the first level (line ${first_level:-none})" \
    "$(( ${first_warn:-999999} < ${first_level:-0} ))" '. == 1'

# Stage 3: SIGINT in steady state, while the hanging command runs: its op is
# killed and the runner's folder removed on the way out.
"$TILEBENCH" run --config "$T/faults.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 20s --ramp-down 1s --idle 0 \
    --db "$DB" --label "it infra sigint" --quiet >"$T/run3.log" 2>&1 &
RP=$!
wait_steady "$DB" 1 "$RP"
wait_for "a hanging op running" 10 pgrep -f '^sleep 600$'
kill -INT "$RP"
rc=0
wait "$RP" || rc=$?
expect "interrupted run exit status" "$rc" -eq 3
nothing_left "interrupted run"
echo "PASS test_infra"
