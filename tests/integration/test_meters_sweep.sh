#!/usr/bin/env bash
# test_meters_sweep.sh: end to end, a 1-level run against the embedded SUT
# measured through wt310:// against the meter emulator serving a trace of
# known watts. The report must name the meter (WT310, not estimated), give
# avg_watts within 0.5% of the trace's value, and PPKW = score / kW exactly;
# the emulator must have served every sample the run asked for.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH

# A trace whose time-weighted mean is known whatever window the run measures:
# one value for the whole run (the step model holds the last value).
WATTS=187.5
printf 'time,watts\n0,%s\n' "$WATTS" >"$T/trace.csv"
start_sim sim --protocol wt310 --trace "$T/trace.csv"

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
"$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 5s --ramp-down 1s --idle 0 \
    --meter "wt310://127.0.0.1:$PORT" --db "$T/results.db" --quiet >"$T/run.log" 2>&1 ||
    fail "run exited $?: $(cat "$T/run.log")"
"$TB" report latest --db "$T/results.db" --format json >"$T/report.json"
J="$T/report.json"

expect "run status" "$(jq -r .run.status "$J")" = complete
expect "meter model" "$(jq -r '.run.meters[0].model' "$J")" = WT310
expect "meter not estimated" "$(jq -r '.run.meters[0].estimated' "$J")" = false
expect "run not estimated" "$(jq -r '.run.estimated_power' "$J")" = false
W=$(jq '.run.levels[0].avg_watts' "$J")
expect_true "avg_watts within 0.5% of the trace's $WATTS W" "$W" "((. - $WATTS) | fabs) <= $WATTS * 0.005"
S=$(jq '.run.levels[0].score' "$J")
P=$(jq '.run.levels[0].ppkw' "$J")
expect_true "ppkw = score / kW" "$P" "((. - ($S / ($W / 1000))) | fabs) <= 1e-9 * ."

# Every sample the run took was served by the emulator, none faulty.
exec 7<>"/dev/tcp/127.0.0.1/$PORT" || fail "cannot reach the sim for its counters"
printf 'tb:count?\n' >&7
IFS= read -r -t 5 line <&7 || fail "no counters from the sim"
exec 7<&-
served=$(echo "$line" | tr ' ' '\n' | sed -n 's/^served=//p')
valid=$(echo "$line" | tr ' ' '\n' | sed -n 's/^valid=//p')
expect "sim served samples (about 1 Hz over ~8 s of stages)" "$served" -ge 6
expect "sim: all served samples valid" "$valid" -eq "$served"
echo "PASS test_meters_sweep"
