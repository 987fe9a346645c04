#!/usr/bin/env bash
# test_clock_jump.sh: the wall clock jumps in the middle of steady state,
# 3 hours forward and then 4 hours back (libfaketime moves CLOCK_REALTIME of
# the tilebench process only; CLOCK_MONOTONIC is left alone). Stages, the
# steady-state duration, throughput and the 1 Hz power samples run on the
# monotonic clock, so the stored steady_s and the sample count are those of
# an undisturbed run and the level is valid. The stored wall time stamps of
# the samples must show both jumps: proof that the clock really moved.
source "$(dirname "$0")/lib.sh"

FT=""
for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 /usr/lib/*/faketime/libfaketimeMT.so.1; do
    [ -f "$f" ] && { FT=$f; break; }
done
[ -n "$FT" ] || fail "libfaketimeMT.so.1 not found (Debian package libfaketime)"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
{
    printf '[tile]\nname = kv-clock\n[workload.kv]\nkind = kv\nusers = 3\nthink_time = 20ms\nthink_dist = uniform\n'
    printf 'reference = 100\nunit = ops/s\n[qos.kv]\nerror_rate = 1\n'
    cat "$T/sut/sut.ini"
} >"$T/tile.ini"
DB="$T/results.db"
STEADY=10

echo "+0" >"$T/faketime"
# an ASan build checks that its runtime comes first among the loaded libraries; the shim goes first here
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
FAKETIME_TIMESTAMP_FILE="$T/faketime" FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 LD_PRELOAD="$FT" \
    "$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady ${STEADY}s --ramp-down 0 \
    --idle 0 --db "$DB" --quiet >"$T/run.log" 2>&1 &
pid=$!
at_exit 'kill $pid 2>/dev/null'
wait_steady "$DB" 1 $pid
sleep 2 # 2 s into steady state
echo "+3h" >"$T/faketime"
echo "ok: wall clock of the run +3 h"
sleep 3
echo "-1h" >"$T/faketime"
echo "ok: wall clock of the run -4 h (to 1 h behind)"
rc=0
wait $pid || rc=$?
expect "run exit" "$rc" -eq 0

q() { sqlite3 -batch "$DB" "$1"; }
LID=$(q "SELECT id FROM levels")
# the jumps happened inside the measured level: the samples' wall stamps jump
steps="SELECT wall_us - lag(wall_us) OVER (ORDER BY mono_us) AS d FROM power_samples WHERE level_id = $LID"
fwd=$(q "SELECT max(d) FROM ($steps)")
back=$(q "SELECT min(d) FROM ($steps)")
echo "largest step between consecutive samples' wall stamps: +$((fwd / 1000000)) s, $((back / 1000000)) s"
expect "wall clock jumped forward between two samples (> 2.9 h)" "$fwd" -gt $((29 * 360 * 1000000))
expect "wall clock jumped back between two samples (< -3.9 h)" "$back" -lt $((-39 * 360 * 1000000))
mono_span=$(q "SELECT max(mono_us) - min(mono_us) FROM power_samples WHERE level_id = $LID")
expect "monotonic span of the level's samples (us, < steady + 2 s)" "$mono_span" -lt $(((STEADY + 2) * 1000000))

"$TILEBENCH" report latest --db "$DB" --format json >"$T/report.json"
J="$T/report.json"
expect "status" "$(jq -r .run.status "$J")" = complete
expect "level valid" "$(jq '.run.levels[0].valid' "$J")" = true
steady_s=$(q "SELECT steady_s FROM levels")
expect_true "stored steady_s = --steady $STEADY s (monotonic)" "$steady_s" "((. - $STEADY) | fabs) < 0.5"
expect_true "power samples in steady state: one per second" "$(q 'SELECT samples_total FROM levels')" \
    ". >= $((STEADY - 1)) and . <= $((STEADY + 1))"
expect "bad samples" "$(q 'SELECT samples_bad FROM levels')" -eq 0
ops=$(jq '.run.levels[0].workloads[0].ops' "$J")
tput=$(jq '.run.levels[0].workloads[0].throughput' "$J")
expect_true "throughput = ops / steady_s" "$tput" "((. - ($ops / $steady_s)) | fabs) <= 0.01 * ."
expect "ops" "$ops" -gt 0
echo "PASS test_clock_jump"
