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
    sleep 3 # well inside level 2
    kill -"$sig" $pid
    wait $pid || rc=$?
    expect "SIG$sig: exit code" "$rc" -eq 3
    "$TILEBENCH" report latest --db "$db" --format json >"$T/report-$sig.json"
    expect "SIG$sig: status" "$(jq -r .run.status "$T/report-$sig.json")" = interrupted
    expect "SIG$sig: levels kept" "$(jq '.run.levels | length' "$T/report-$sig.json")" -eq 1
    expect "SIG$sig: level kept has ops" "$(jq '[.run.levels[0].workloads[].ops] | add' "$T/report-$sig.json")" -gt 0
    grep -q "interrupted" "$log" || fail "SIG$sig: run did not say it was interrupted: $(cat "$log")"
    sleep 1
    left=$(pgrep -f "$T/sut" || true)
    [ -z "$left" ] || fail "SIG$sig: SUT processes still running after the interrupt: $left"
    echo "ok: SIG$sig: no SUT process left"
}
interrupt INT
interrupt TERM
echo "PASS test_interrupt"
