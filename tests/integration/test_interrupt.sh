#!/usr/bin/env bash
# test_interrupt.sh: SIGINT, then SIGTERM, during a sweep against the
# embedded SUT (started by `run` itself). The level already finished stays
# stored, the run is marked interrupted, the exit code is 3, and every SUT
# process is stopped.
source "$(dirname "$0")/lib.sh"

interrupt() { # SIGNAL
    local sig=$1 db="$T/results-$1.db" log="$T/run-$1.log" pid rc=0 left
    "$TILEBENCH" run --tiles 1..3 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 1s \
        --sut-dir "$T/sut" --db "$db" --quiet >"$log" 2>&1 &
    pid=$!
    levels() { "$TILEBENCH" report latest --db "$db" --format json 2>/dev/null | jq '.run.levels | length' 2>/dev/null || echo 0; }
    for _ in $(seq 1 120); do
        [ "$(levels)" -ge 1 ] && break
        kill -0 $pid 2>/dev/null || fail "SIG$sig: run ended before level 1 was stored: $(cat "$log")"
        sleep 0.5
    done
    expect "SIG$sig: levels stored before the signal" "$(levels)" -eq 1
    pgrep -f "$T/sut" >/dev/null || fail "SIG$sig: no SUT process found while the run is going"
    wait_steady "$db" 2 $pid # inside level 2
    kill -"$sig" $pid
    wait $pid || rc=$?
    expect "SIG$sig: exit code" "$rc" -eq 3
    "$TILEBENCH" report latest --db "$db" --format json >"$T/report-$sig.json"
    expect "SIG$sig: status" "$(jq -r .run.status "$T/report-$sig.json")" = interrupted
    expect "SIG$sig: levels kept" "$(jq '.run.levels | length' "$T/report-$sig.json")" -eq 1
    expect "SIG$sig: level kept has ops" "$(jq '[.run.levels[0].workloads[].ops] | add' "$T/report-$sig.json")" -gt 0
    grep -q "interrupted" "$log" || fail "SIG$sig: run did not say it was interrupted: $(cat "$log")"
    no_sut_left() { ! pgrep -f "$T/sut" >/dev/null; }
    wait_for "SIG$sig: SUT processes still running after the interrupt" 5 no_sut_left
    echo "ok: SIG$sig: no SUT process left"
}
interrupt INT
interrupt TERM

# wait_for_line LOG TEXT PID WHAT: waits (up to 2 min) until LOG has TEXT;
# fails when the run PID ends first or the text never comes
wait_for_line() {
    local log=$1 text=$2 pid=$3 what=$4
    for _ in $(seq 1 240); do
        grep -q "$text" "$log" && return 0
        kill -0 "$pid" 2>/dev/null || fail "$what: run ended early: $(cat "$log")"
        sleep 0.5
    done
    fail "$what: no '$text' in 2 min: $(cat "$log")"
}

# SIGINT in ramp-down: steady state has finished, so its phase is stored
# (a finished phase is never lost), and the run is interrupted
db="$T/results-rampdown.db"
"$TILEBENCH" run --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 30s --idle 1s \
    --sut-dir "$T/sut" --db "$db" >"$T/run-rampdown.log" 2>&1 &
pid=$!
wait_steady "$db" 1 $pid
sleep 4 # the 3 s steady state, then inside the 30 s ramp-down
kill -0 $pid 2>/dev/null || fail "ramp-down: run ended before the signal: $(cat "$T/run-rampdown.log")"
kill -INT $pid
rc=0
wait $pid || rc=$?
expect "ramp-down: exit code" "$rc" -eq 3
"$TILEBENCH" report latest --db "$db" --format json >"$T/report-rampdown.json"
expect "ramp-down: status" "$(jq -r .run.status "$T/report-rampdown.json")" = interrupted
expect "ramp-down: the finished level is kept" "$(jq '.run.levels | length' "$T/report-rampdown.json")" -eq 1
expect "ramp-down: it has ops" "$(jq '[.run.levels[0].workloads[].ops] | add' "$T/report-rampdown.json")" -gt 0
left=$(pgrep -f "$T/sut" || true)
[ -z "$left" ] || fail "ramp-down: SUT processes still running: $left"

# SIGINT while `run` is still loading tile data into its own embedded SUT (30
# tiles take tens of seconds): it stops between two tiles instead of loading
# them all first, stores the run as interrupted, exits 3, and leaves no SUT
# process and no temporary SUT folder behind.
db="$T/results-load.db"
"$TILEBENCH" run --tiles 30 --meter estimate: --db "$db" >"$T/run-load.log" 2>&1 &
pid=$!
wait_for_line "$T/run-load.log" "starting the embedded SUT" $pid load
sutdir=$(grep -o '/tmp/tilebench-sut\.[A-Za-z0-9]*' "$T/run-load.log" | head -1)
[ -n "$sutdir" ] || fail "load: no SUT folder named: $(cat "$T/run-load.log")"
# until PostgreSQL is up and the loader's session on it is open (the data load has begun)
pm_up() { pgrep -f "^[^ ]*/postgres -D $sutdir/pg" >/dev/null; }
wait_for "load: PostgreSQL of $sutdir" 60 pm_up
pm=$(pgrep -of "^[^ ]*/postgres -D $sutdir/pg")
loading() { pgrep -P "$pm" -f '^postgres: tilebench ' >/dev/null; }
wait_for "load: the loader's session on $sutdir/pg" 60 loading
sleep 1
kill -INT $pid
t0=$(date +%s)
rc=0
wait $pid || rc=$?
echo "load: run ended $(($(date +%s) - t0)) s after SIGINT"
expect "load: exit code" "$rc" -eq 3
grep -q "interrupted while loading tile data" "$T/run-load.log" || fail "load: no reason given: $(cat "$T/run-load.log")"
expect "load: status" "$("$TILEBENCH" report latest --db "$db" --format json | jq -r .run.status)" = interrupted
left=$(pgrep -f "$sutdir" || true)
[ -z "$left" ] || fail "load: SUT processes still running: $left"
[ ! -e "$sutdir" ] || fail "load: temporary SUT folder $sutdir left behind: $(ls "$sutdir")"
echo "PASS test_interrupt"
