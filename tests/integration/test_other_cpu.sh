#!/usr/bin/env bash
# test_other_cpu.sh: the host's CPU outside the SUT's and the load
# generator's processes in steady state (levels.other_cpu_pct), and the
# warnings of compare when it is more than 5% (issue 25). Runs alone
# (TB_SERIAL_TESTS): a neighbouring test is "other CPU" too.
# - a quiet run on the estimate meter: the SUT's servers are found (the
#   processes listening on the tile file's ports), the figure is under 5%,
#   and compare flags nothing but the estimate;
# - the same run beside a busy loop (a CPU hog outside both): the figure is
#   at least 80% of the hog's own share of the host's CPU over the run, read
#   here from its /proc/PID/stat (the ground truth); the run's events warn,
#   and compare (text, JSON, HTML) names the figure for that run only.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
{
    printf '[tile]\nname = kv\n[workload.kv]\nkind = kv\nusers = 2\nthink_time = 20ms\nthink_dist = uniform\n'
    printf 'unit = ops/s\nreference = 10\ntimeout = 1s\n'
    printf '[workload.oltp]\nkind = oltp\nusers = 1\nthink_time = 50ms\nunit = ops/s\nreference = 5\ntimeout = 2s\n'
    cat "$T/sut/sut.ini"
} >"$T/tile.ini"
DB=$T/r.db
run() {
    "$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 \
        --idle 0 --meter estimate: --db "$DB" --label "$1" --quiet >"$T/$1.log" 2>&1 || fail "run $1: $(cat "$T/$1.log")"
}
q() { sqlite3 -batch -noheader "$DB" "$1"; }

run quiet
n=$(q "SELECT sut_processes FROM levels WHERE run_id = 1")
expect_true "SUT server processes found (redis, postgres, ...)" "$n" ". >= 2"
o=$(q "SELECT other_cpu_pct FROM levels WHERE run_id = 1")
[ -n "$o" ] || fail "quiet run: no other_cpu_pct stored"
python3 -c "import sys; sys.exit(0 if float('$o') < 5 else 1)" || fail "quiet run: other CPU $o% (expected under 5%)"

# a busy loop outside the SUT and the load generator, for the whole run
(
    end=$((SECONDS + 120)) # bounded: 2 minutes at most
    while [ $SECONDS -lt $end ]; do :; done
) &
HOG=$! # the subshell itself spins, so its /proc/PID/stat is the hog's
at_exit "kill $HOG 2>/dev/null"
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$HOG/stat"; } # utime + stime (fields 14, 15)
t0=$(ticks) w0=$(date +%s.%N)
run busy
t1=$(ticks) w1=$(date +%s.%N)
kill $HOG
hog=$(python3 -c "import os; print(100 * ($t1 - $t0) / os.sysconf('SC_CLK_TCK') / (($w1 - $w0) * os.cpu_count()))")
o2=$(q "SELECT other_cpu_pct FROM levels WHERE run_id = 2")
echo "hog's share of the host's CPU over the run: $hog%; stored other CPU: $o2%"
python3 -c "import sys; sys.exit(0 if float('$o2') >= 0.8 * float('$hog') and float('$hog') > 10 else 1)" ||
    fail "busy run: other CPU $o2% is not at least 80% of the hog's $hog%"
q "SELECT message FROM events WHERE run_id = 2" | grep -q "of the host's CPU went to processes outside the SUT" ||
    fail "busy run: no warning event: $(q "SELECT message FROM events WHERE run_id = 2")"

"$TILEBENCH" compare 1 2 --db "$DB" >"$T/cmp.txt" || fail "compare"
"$TILEBENCH" compare 1 2 --db "$DB" --format json >"$T/cmp.json" || fail "compare json"
"$TILEBENCH" compare 1 2 --db "$DB" -o "$T/cmp.html" || fail "compare html"
grep -q "^  run 2 .*OTHER CPU [0-9.]*% at 1 tiles" "$T/cmp.txt" || fail "compare text: run 2 not flagged: $(cat "$T/cmp.txt")"
! grep -q "^  run 1 .*OTHER CPU" "$T/cmp.txt" || fail "compare text: the quiet run flagged"
grep -q "run 2: [0-9.]*% of the host's CPU went to processes outside the SUT and the load generator" "$T/cmp.txt" ||
    fail "compare text: no note for run 2"
grep -q "run 1: ESTIMATED POWER (a model of whole-host CPU" "$T/cmp.txt" || fail "compare text: no estimate note"
expect "json: run 1 flagged" "$(jq '.comparison.runs[0].other_cpu_flagged' "$T/cmp.json")" = false
expect "json: run 2 flagged" "$(jq '.comparison.runs[1].other_cpu_flagged' "$T/cmp.json")" = true
python3 -c "import sys, json; r = json.load(open('$T/cmp.json'))['comparison']['runs'][1]; sys.exit(0 if abs(r['other_cpu_max_pct'] - float('$o2')) < 1e-6 else 1)" ||
    fail "json: run 2's figure is not the stored one"
grep -q "other CPU [0-9.]*% at 1 tiles" "$T/cmp.html" || fail "compare html: run 2 not flagged"
"$TILEBENCH" report 2 --db "$DB" --format json >"$T/r2.json" || fail "report json"
expect "report json: the level's other_cpu_pct" "$(jq '.run.levels[0].other_cpu_pct' "$T/r2.json")" = "$(jq '.comparison.runs[1].other_cpu_max_pct' "$T/cmp.json")"
echo "ok"
