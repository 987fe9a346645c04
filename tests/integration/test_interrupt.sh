#!/usr/bin/env bash
# test_interrupt.sh: SIGINT during a sweep against the embedded SUT (started
# by `run` itself). The level already finished stays stored, the run is marked
# interrupted, the exit code is 3, and every SUT process is stopped.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" run --tiles 1..3 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 1s \
    --sut-dir "$T/sut" --db "$T/results.db" --quiet >"$T/run.log" 2>&1 &
pid=$!

levels() { "$TILEBENCH" report latest --db "$T/results.db" --format json 2>/dev/null | jq '.run.levels | length' 2>/dev/null || echo 0; }
for _ in $(seq 1 120); do
    [ "$(levels)" -ge 1 ] && break
    kill -0 $pid 2>/dev/null || fail "run ended before level 1 was stored: $(cat "$T/run.log")"
    sleep 0.5
done
expect "levels stored before the signal" "$(levels)" -eq 1
pgrep -f "$T/sut" >/dev/null || fail "no SUT process found while the run is going"
sleep 3 # well inside level 2
kill -INT $pid
rc=0
wait $pid || rc=$?
expect "exit code after SIGINT" "$rc" -eq 3
"$TILEBENCH" report latest --db "$T/results.db" --format json >"$T/report.json"
expect "status" "$(jq -r .run.status "$T/report.json")" = interrupted
expect "levels kept" "$(jq '.run.levels | length' "$T/report.json")" -eq 1
expect "level kept has ops" "$(jq '[.run.levels[0].workloads[].ops] | add' "$T/report.json")" -gt 0
grep -q "interrupted" "$T/run.log" || fail "run did not say it was interrupted: $(cat "$T/run.log")"
sleep 1
left=$(pgrep -f "$T/sut" || true)
[ -z "$left" ] || fail "SUT processes still running after the interrupt: $left"
echo "ok: no SUT process left"
echo "PASS test_interrupt"
