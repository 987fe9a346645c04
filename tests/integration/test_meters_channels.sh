#!/usr/bin/env bash
# test_meters_channels.sh: two channels of one PTDaemon, end to end through
# ptd://...?channels=1,2 against the meter emulator serving a WT332E (two
# elements, 200 W split evenly):
# - a channel the analyzer does not have, a channel given twice or not a
#   number is an error at open (exit 2) naming the channels parameter;
# - a run stores each channel's reading beside the summed sample, the level's
#   mean power is the sum (each channel 100 W, the meter 200 W, counted once),
#   and the JSON, text and HTML reports list each channel under its meter;
# - every 2nd reading of channel 2 alone is bad (the WT310E field bug's
#   -27.1 W): those samples are bad, the level is invalid, channel 1 stays good;
# - the elements of a WT332E read the same way through wt310://?element=1,2;
#   every 2nd reading of element 2 alone bad (--fault negative:2@2): the level is
#   invalid, element 1 stays good; @2 on a meter of one element is exit 2;
# - `meter export` of both: one series per channel (label channel) whose W, V, A
#   and PF are what the emulator served each channel (100 W, 230 V, 100/230 A,
#   PF 1), adding up to the meter's summed W; with element 2 bad on every 2nd
#   reading, channel 2's errors and last_read_ok say so, channel 1's none, and
#   its W stays the last good reading (never -27.1).
# - the ranging pass (run --ranging) on two channels that draw unevenly
#   (--split 1,3 of 300 W at 230 V, PF 1: 75 W = 0.3261 A and 225 W =
#   0.9783 A), through ptd://?channels=1,2 and wt310://?element=1,2: the
#   stored peak is the larger channel's A (the sum, 1.304 A, or the smaller
#   channel's would differ), the ranges 300 V and 2 A (0.9783 x 1.25 = 1.22 A;
#   the smaller channel's 0.408 A would pick 0.5 A, on which the larger
#   over-ranges above 0.7 A), no steady sample auto-ranged, over-range or
#   bad, the level valid, and `tilebench check` of the bundle passes its
#   ranging line.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
start_sim two --protocol ptd --elements 2 --watts 200 --pf 1 --interval 500ms
P="ptd://127.0.0.1:$PORT"

# ---- bad input: exit 2 with the URI parameter named ----
for bad in "1,3:channel 3: the WT332E PTDaemon reads has channels 1..2" "1,1:channel 1 given twice" \
    "x:expected channel numbers"; do
    val=${bad%%:*} want=${bad#*:}
    rc=0
    "$TB" meter probe "$P?channels=$val" --samples 1 >"$T/bad.out" 2>&1 || rc=$?
    expect "probe channels=$val: exit" "$rc" -eq 2
    grep -q "channels: .*$want" "$T/bad.out" || fail "channels=$val: no clear error: $(cat "$T/bad.out")"
done

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
# run NAME METER-URI: one 1-tile level of 4 s into $T/NAME.db, its reports in $T/NAME.{json,txt,html}.
run() {
    local name=$1 uri=$2
    "$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 4s --ramp-down 0 --idle 0 \
        --meter "$uri" --db "$T/$name.db" --quiet >"$T/$name.log" 2>&1 || fail "run $name exited $?: $(cat "$T/$name.log")"
    "$TB" report latest --db "$T/$name.db" --format json >"$T/$name.json" || fail "report $name"
    "$TB" report latest --db "$T/$name.db" >"$T/$name.txt" || fail "text report $name"
    "$TB" report latest --db "$T/$name.db" --format html >"$T/$name.html" || fail "html report $name"
}
q() { sqlite3 -batch -noheader "$T/$1.db" "$2"; }

# ---- two good channels: summed, each reported ----
run good "$P?channels=1,2"
J="$T/good.json"
expect "good: meters" "$(jq '.run.meters | length' "$J")" -eq 1
expect "good: channels listed" "$(jq -c '[.run.meters[0].channels[].channel]' "$J")" = "[1,2]"
for c in 0 1; do
    expect_true "good: channel $((c + 1)) mean W" "$(jq ".run.meters[0].channels[$c].levels[0].mean_watts" "$J")" \
        '(. - 100) | fabs < 0.001'
    expect "good: channel $((c + 1)) bad samples" "$(jq ".run.meters[0].channels[$c].bad_samples" "$J")" -eq 0
done
expect_true "good: the level's mean power is the channels' sum, once" "$(jq '.run.levels[0].avg_watts' "$J")" \
    '(. - 200) | fabs < 0.001'
steady=$(q good "SELECT count(*) FROM power_samples WHERE stage = 'steady'")
expect "good: steady samples (1 Hz over 4 s)" "$steady" -ge 3
expect "good: two channel rows per steady sample" \
    "$(q good "SELECT count(*) FROM channel_samples WHERE stage = 'steady'")" -eq $((2 * steady))
expect "good: every channel row beside its summed sample" "$(q good "SELECT count(*) FROM channel_samples c
    WHERE NOT EXISTS (SELECT 1 FROM power_samples p WHERE p.run_id = c.run_id AND p.meter_idx = c.meter_idx
    AND p.mono_us = c.mono_us)")" -eq 0
expect "good: each sample the sum of its channels" "$(q good "SELECT count(*) FROM power_samples p WHERE
    abs(p.watts - (SELECT sum(watts) FROM channel_samples c WHERE c.run_id = p.run_id AND c.mono_us = p.mono_us))
    > 1e-6")" -eq 0
expect "good: meters.channels" "$(q good "SELECT channels FROM meters")" = "1,2"
case "$(jq -r '.run.levels[0].invalid_reason // ""' "$J")" in *"power samples"*) fail "good: level invalid for samples" ;; esac
grep -q "channels 1,2, summed" "$T/good.txt" || fail "text report: no channels line: $(cat "$T/good.txt")"
grep -Eq '^ +channel 1  W by level:  1t 100\.0$' "$T/good.txt" || fail "text report: channel 1: $(cat "$T/good.txt")"
grep -Eq '^ +channel 2  W by level:  1t 100\.0$' "$T/good.txt" || fail "text report: channel 2"
grep -q '<th class="n">channel</th>' "$T/good.html" || fail "html report: no channel table"

# ---- channel 2 bad on every 2nd reading: the level is invalid ----
start_sim bad --protocol ptd --elements 2 --watts 200 --pf 1 --interval 500ms --fault negative:2 --fault-channel 2
run bad "ptd://127.0.0.1:$PORT?channels=1,2"
J="$T/bad.json"
expect "bad: level valid" "$(jq -r '.run.levels[0].valid' "$J")" = false
case "$(jq -r '.run.levels[0].invalid_reason // ""' "$J")" in
*"of power samples missing or invalid"*) ;;
*) fail "bad: reason '$(jq -r '.run.levels[0].invalid_reason' "$J")'" ;;
esac
expect "bad: channel 1 bad samples" "$(jq '.run.meters[0].channels[0].bad_samples' "$J")" -eq 0
expect "bad: channel 2 bad samples" "$(jq '.run.meters[0].channels[1].bad_samples' "$J")" -ge 2
expect "bad: every bad channel reading makes its summed sample bad" "$(q bad "SELECT count(*) FROM channel_samples c
    JOIN power_samples p ON p.run_id = c.run_id AND p.meter_idx = c.meter_idx AND p.mono_us = c.mono_us
    WHERE (c.flags & 39) != 0 AND (p.flags & 39) = 0")" -eq 0
expect "bad: the channel's reason" "$(q bad "SELECT count(*) FROM channel_samples
    WHERE channel = 2 AND reason = 'implausible: negative active power'")" -ge 2
expect "bad: the sample's reason" "$(q bad "SELECT count(*) FROM power_samples
    WHERE reason = 'implausible: negative active power'")" -ge 2

# probe prints each channel under the summed sample; any 2 requests in a row hold an even one
"$TB" meter probe "ptd://127.0.0.1:$PORT?channels=1,2" --samples 2 >"$T/probe.out" 2>&1 || fail "probe: $(cat "$T/probe.out")"
grep -Eq '^ +channel 2 +-27\.100 .* IMPLAUSIBLE: negative active power$' "$T/probe.out" ||
    fail "probe: no bad channel 2 line: $(cat "$T/probe.out")"
grep -Eq '^ +channel 1 +100\.000 ' "$T/probe.out" || fail "probe: no channel 1 line"

# ---- the elements of a Yokogawa WT332E (wt310://...?element=1,2): summed; one it lacks is exit 2 ----
start_sim wt --protocol wt310 --elements 2 --watts 200 --pf 1
W="wt310://127.0.0.1:$PORT"
"$TB" meter probe "$W?element=1,2&volts=300&amps=2" --samples 2 --interval 200ms >"$T/wt.out" 2>&1 ||
    fail "probe element=1,2: $(cat "$T/wt.out")"
grep -q 'mean_w=200.000' "$T/wt.out" || fail "element=1,2: not the sum: $(cat "$T/wt.out")"
grep -q '^driver: .*element 1,2$' "$T/wt.out" || fail "element=1,2: driver line: $(grep driver "$T/wt.out")"
rc=0
"$TB" meter probe "$W?element=1,3" --samples 1 >"$T/wt3.out" 2>&1 || rc=$?
expect "probe element=1,3 on a WT332E: exit" "$rc" -eq 2
grep -q "element: element 3: the WT332E has elements 1..2" "$T/wt3.out" || fail "element=1,3: $(cat "$T/wt3.out")"

# ---- element 2 of a WT332E bad on every 2nd reading (--fault negative:2@2): the level is invalid ----
start_sim wtbad --protocol wt310 --elements 2 --watts 200 --pf 1 --fault negative:2@2
WTBAD_PORT=$PORT
run wtbad "wt310://127.0.0.1:$PORT?element=1,2&volts=300&amps=2"
J="$T/wtbad.json"
expect "wtbad: level valid" "$(jq -r '.run.levels[0].valid' "$J")" = false
case "$(jq -r '.run.levels[0].invalid_reason // ""' "$J")" in
*"of power samples missing or invalid"*) ;;
*) fail "wtbad: reason '$(jq -r '.run.levels[0].invalid_reason' "$J")'" ;;
esac
expect "wtbad: element 1 bad samples" "$(jq '.run.meters[0].channels[0].bad_samples' "$J")" -eq 0
expect "wtbad: element 2 bad samples" "$(jq '.run.meters[0].channels[1].bad_samples' "$J")" -ge 2
expect "wtbad: element 2's reason" "$(q wtbad "SELECT count(*) FROM channel_samples
    WHERE channel = 2 AND reason = 'implausible: negative active power'")" -ge 2
expect "wtbad: element 1 never bad" "$(q wtbad "SELECT count(*) FROM channel_samples WHERE channel = 1 AND flags != 0")" -eq 0
# ---- meter export: one series per channel beside the sum ----
# export NAME URI: `meter export URI` until it made 6 reads, its /metrics in $T/NAME.prom; then SIGTERM, exit 0.
export_scrape() {
    local name=$1 uri=$2 pid port="" i rc=0
    "$TB" meter export "$uri" --listen 127.0.0.1:0 --interval 200ms >"$T/$name.log" 2>&1 &
    pid=$!
    at_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
    for ((i = 0; i < 400; i++)); do
        port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/$name.log" 2>/dev/null || true)
        [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/metrics" >"$T/$name.prom" &&
            grep -Eq '^tilebench_meter_reads_total\{.*\} ([6-9]|[1-9][0-9]+)$' "$T/$name.prom" && break
        kill -0 "$pid" 2>/dev/null || fail "meter export $name exited: $(cat "$T/$name.log")"
        sleep 0.1
    done
    grep -Eq '^tilebench_meter_reads_total\{.*\} ([6-9]|[1-9][0-9]+)$' "$T/$name.prom" ||
        fail "meter export $name: not 6 reads within 40 s: $(cat "$T/$name.log" "$T/$name.prom")"
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    expect "meter export $name exit status on SIGTERM" "$rc" -eq 0
}
# series NAME FAMILY [CHANNEL]: the value of FAMILY in NAME's scrape (of that channel)
series() {
    local sel=${3:+,channel=\"$3\"}
    awk -v f="$2" -v sel="$sel" 'index($0, f "{") == 1 && (sel == "" || index($0, sel "}")) { print $NF }' "$T/$1.prom"
}
export_scrape xgood "$P?channels=1,2"
for ch in 1 2; do
    expect "export: channel $ch W" "$(series xgood tilebench_meter_channel_watts $ch)" = 100
    expect "export: channel $ch V" "$(series xgood tilebench_meter_channel_volts $ch)" = 230
    expect_true "export: channel $ch A" "$(series xgood tilebench_meter_channel_amps $ch)" '(. - 100 / 230) | fabs < 1e-5'
    expect "export: channel $ch PF" "$(series xgood tilebench_meter_channel_power_factor $ch)" = 1
    expect "export: channel $ch errors" "$(series xgood tilebench_meter_channel_errors_total $ch)" -eq 0
    # a scrape may fall between a read's channel and sum updates: one read apart at most
    expect_true "export: channel $ch reads" \
        "$(($(series xgood tilebench_meter_channel_reads_total $ch) - $(series xgood tilebench_meter_reads_total)))" \
        '. == 0 or . == 1'
done
expect "export: the summed W" "$(series xgood tilebench_meter_watts)" = 200
expect "export: channel series" "$(grep -c '^tilebench_meter_channel_watts{' "$T/xgood.prom")" -eq 2
grep -q '^# HELP tilebench_meter_channel_watts ' "$T/xgood.prom" || fail "export: no help for the channel series"
export_scrape xbad "wt310://127.0.0.1:$WTBAD_PORT?element=1,2&volts=300&amps=2"
expect "export bad: element 1 errors" "$(series xbad tilebench_meter_channel_errors_total 1)" -eq 0
expect "export bad: element 1 last read ok" "$(series xbad tilebench_meter_channel_last_read_ok 1)" -eq 1
expect_true "export bad: element 2 errors, every 2nd read" "$(series xbad tilebench_meter_channel_errors_total 2)" '. >= 2'
expect_true "export bad: the sum's errors are element 2's (one read apart at most)" \
    "$(($(series xbad tilebench_meter_channel_errors_total 2) - $(series xbad tilebench_meter_errors_total)))" \
    '. == 0 or . == 1'
for ch in 1 2; do
    expect "export bad: element $ch W, the last good reading" "$(series xbad tilebench_meter_channel_watts $ch)" = 100
done
expect "export bad: the summed W" "$(series xbad tilebench_meter_watts)" = 200

rc=0
"$TB" meter sim --protocol wt310 --fault nan:2@2 >"$T/elem.out" 2>&1 || rc=$?
expect "sim --fault nan:2@2 with one element: exit" "$rc" -eq 2
grep -q "needs --protocol wt310 and an element within --elements" "$T/elem.out" || fail "no clear error: $(cat "$T/elem.out")"

# ---- the ranging pass over two uneven channels: the larger decides ----
# ranged NAME URI: one 1-tile level with a 2 s ranging pass into $T/NAME.db, and its check.
ranged() {
    local name=$1 uri=$2 want_a
    "$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 4s --steady 3s --ramp-down 0 --idle 0 \
        --ranging=2s --meter "$uri" --db "$T/$name.db" --quiet >"$T/$name.log" 2>&1 ||
        fail "run $name exited $?: $(cat "$T/$name.log")"
    "$TB" report latest --db "$T/$name.db" --format json >"$T/$name.json" || fail "report $name"
    want_a=$(jq -n '225 / 230')
    echo "$name: $(q "$name" "SELECT 'peak ' || peak_v || ' V, ' || peak_a || ' A over ' || samples || ' samples; ranges '
        || volt_range_v || ' V, ' || amp_range_a || ' A' FROM level_ranges")"
    expect "$name: one ranging row" "$(q "$name" 'SELECT count(*) FROM level_ranges')" -eq 1
    expect_true "$name: the peak is the larger channel's A" "$(q "$name" 'SELECT peak_a FROM level_ranges')" \
        "(. - $want_a) | fabs < 1e-4"
    expect_true "$name: the peak is the largest good channel reading of the pass (SQL)" "$(q "$name" "SELECT
        r.peak_a - (SELECT max(c.amps) FROM channel_samples c WHERE c.meter_idx = 0 AND (c.flags & 39) = 0
        AND c.mono_us >= r.start_mono_us AND c.mono_us < r.end_mono_us) FROM level_ranges r")" 'fabs < 1e-9'
    expect_true "$name: the peak V" "$(q "$name" 'SELECT peak_v FROM level_ranges')" '(. - 230) | fabs < 1e-6'
    expect "$name: ranges" "$(q "$name" 'SELECT volt_range_v || " " || amp_range_a FROM level_ranges')" = "300.0 2.0"
    expect "$name: steady samples" "$(q "$name" "SELECT count(*) FROM power_samples WHERE stage = 'steady'")" -ge 2
    expect "$name: steady samples auto-ranged, over-range or bad" "$(q "$name" "SELECT count(*) FROM power_samples
        WHERE stage = 'steady' AND (flags & (16 | 39)) != 0")" -eq 0
    expect "$name: steady channel readings auto-ranged, over-range or bad" "$(q "$name" "SELECT count(*)
        FROM channel_samples WHERE stage = 'steady' AND (flags & (16 | 39)) != 0")" -eq 0
    expect "$name: warm-up samples auto-ranged" "$(q "$name" "SELECT count(*) FROM power_samples
        WHERE stage = 'warm-up' AND (flags & 16) != 0")" -ge 1
    expect "$name: level valid" "$(jq -r '.run.levels[0].valid' "$T/$name.json")" = true
    "$TB" publish 1 --db "$T/$name.db" -o "$T/$name.tar.gz" >"$T/$name-publish.log" 2>&1 ||
        fail "publish $name: $(cat "$T/$name-publish.log")"
    "$TB" check "$T/$name.tar.gz" >"$T/$name-check.out" 2>&1 || fail "check $name: $(grep -v '^PASS' "$T/$name-check.out")"
    grep -Eq "^PASS ranges tiles 1 \(repeat 1\) meter 0: peaks 230 V, 0.978261 A over [0-9]+ samples \(their channels' largest\): 300 V, 2 A; 1 measured phases, 0 over-range" \
        "$T/$name-check.out" || fail "check $name: no ranging line: $(grep ranges "$T/$name-check.out")"
}
start_sim rptd --protocol ptd --elements 2 --split 1,3 --watts 300 --pf 1 --interval 500ms
ranged rptd "ptd://127.0.0.1:$PORT?channels=1,2"
start_sim rwt --protocol wt310 --elements 2 --split 1,3 --watts 300 --pf 1
ranged rwt "wt310://127.0.0.1:$PORT?element=1,2&volts=300&amps=20"
rc=0
"$TB" meter sim --protocol ptd --elements 3 --split 1,3 >"$T/split.out" 2>&1 || rc=$?
expect "sim --split of 2 shares with 3 elements: exit" "$rc" -eq 2
grep -q "^tilebench meter: --split: one share per element of --elements" "$T/split.out" || fail "--split: no clear error: $(cat "$T/split.out")"
stop_sims
echo "PASS test_meters_channels"
