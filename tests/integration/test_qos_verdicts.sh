#!/usr/bin/env bash
# test_qos_verdicts.sh: QoS verdicts end to end against a real Redis. A tile
# with an impossible p90 limit fails every level with that rule named,
# `--tiles auto` stops at the first failing level, and `validate` exits 1; a
# tile with generous limits validates with exit 0. A rule with too few ops to
# mean anything (a p99.9 over about a hundred ops) is NOT JUDGED: the level
# is no failure (`--tiles auto` climbs on) but no full pass either (the
# verdict is "incomplete", validate exits 1 naming the rule and the ops it
# needs, the reports warn at the top), and `--preset compliant` makes such a
# level invalid.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 3 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
tile() { # $1 = qos lines
    printf '[tile]\nname = kvonly\n[workload.kv]\nkind = kv\nusers = 3\nthink_time = 50ms\nthink_dist = uniform\nreference = 55\nunit = ops/s\n[qos.kv]\n%b\n' "$1"
    cat "$T/sut/sut.ini"
}
tile 'GET.p90 = 1us\nerror_rate = 0.5' >"$T/impossible.ini"
tile 'GET.p90 = 10s\nSET.p90 = 10s\nerror_rate = 5' >"$T/easy.ini"
tile 'GET.p99.9 = 10s\nSET.p90 = 10s\nerror_rate = 5' >"$T/fewops.ini"
STAGES=(--ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 --idle 0 --quiet)

# impossible limit, auto: the first level fails and the climb stops there
"$TILEBENCH" run --config "$T/impossible.ini" --tiles auto --max-tiles 3 "${STAGES[@]}" --db "$T/r.db" \
    >"$T/run1.log" 2>&1 || fail "run exited $?: $(cat "$T/run1.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r1.json"
expect "auto levels measured" "$(jq '.run.levels | length' "$T/r1.json")" -eq 1
expect "level 1 verdict" "$(jq '.run.levels[0].qos_pass' "$T/r1.json")" = false
expect "failing rule named" "$(jq -r '[.run.levels[0].qos[] | select(.pass == false) | .rule] | join(",")' "$T/r1.json")" = "kv.GET p90 <= 0.001 ms"
expect "saturation (none passed)" "$(jq '.run.saturation_tiles' "$T/r1.json")" = null
rc=0
"$TILEBENCH" validate --db "$T/r.db" >"$T/v1.out" 2>&1 || rc=$?
expect "validate exit on a failing run" "$rc" -eq 1
grep -q "QoS FAIL  kv.GET p90" "$T/v1.out" || fail "validate does not name the failing rule: $(cat "$T/v1.out")"
echo "ok: validate names the rule: $(grep 'QoS FAIL' "$T/v1.out")"

# generous limits: both levels pass, validate exits 0, per level too
"$TILEBENCH" run --config "$T/easy.ini" --tiles 1..2 "${STAGES[@]}" --db "$T/r.db" >"$T/run2.log" 2>&1 ||
    fail "run exited $?: $(cat "$T/run2.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r2.json"
expect "levels" "$(jq '.run.levels | length' "$T/r2.json")" -eq 2
expect "all pass" "$(jq '[.run.levels[].qos_pass] | all' "$T/r2.json")" = true
expect "every rule judged" "$(jq -c '[.run.levels[].qos_verdict] | unique' "$T/r2.json")" = '["pass"]'
expect "no rule left unjudged" "$(jq '[.run.levels[] | (.qos + .tile_qos)[] | select(.judged | not)] | length' "$T/r2.json")" -eq 0
expect "saturation" "$(jq '.run.saturation_tiles' "$T/r2.json")" -eq 2
rc=0; "$TILEBENCH" validate latest --db "$T/r.db" >"$T/v2.out" 2>&1 || rc=$?
expect "validate exit on a passing run" "$rc" -eq 0
rc=0; "$TILEBENCH" validate latest --db "$T/r.db" --tiles 2 >/dev/null 2>&1 || rc=$?
expect "validate --tiles 2" "$rc" -eq 0
rc=0; "$TILEBENCH" validate 1 --db "$T/r.db" --tiles 1 >/dev/null 2>&1 || rc=$?
expect "validate run 1 --tiles 1 (failed)" "$rc" -eq 1
rc=0; "$TILEBENCH" validate latest --db "$T/r.db" --tiles 5 >"$T/v3.out" 2>&1 || rc=$?
expect "validate --tiles 5 (no such level)" "$rc" -eq 2
grep -q "no load level with 5 tiles" "$T/v3.out" || fail "unclear message: $(cat "$T/v3.out")"
# too few ops: kv.GET p99.9 needs 1000 GETs (with fewer the "p99.9" is the
# slowest GET), a 3 s level of 3 users makes about a hundred
"$TILEBENCH" run --config "$T/fewops.ini" --tiles auto --max-tiles 2 "${STAGES[@]}" --db "$T/few.db" \
    >"$T/run4.log" 2>&1 || fail "run exited $?: $(cat "$T/run4.log")"
"$TILEBENCH" report latest --db "$T/few.db" --format json >"$T/r4.json"
expect "auto climbs past levels not fully judged" "$(jq '.run.levels | length' "$T/r4.json")" -eq 2
expect "saturation (no judged rule failed)" "$(jq '.run.saturation_tiles' "$T/r4.json")" -eq 2
expect "levels: no judged rule failed" "$(jq '[.run.levels[].qos_pass] | all' "$T/r4.json")" = true
expect "levels: verdict incomplete" "$(jq -c '[.run.levels[].qos_verdict] | unique' "$T/r4.json")" = '["incomplete"]'
expect "level 1: rules not judged" "$(jq '.run.levels[0].qos_not_judged' "$T/r4.json")" -eq 1
nj=$(jq -c '.run.levels[0].qos[] | select(.rule == "kv.GET p99.9 <= 10000 ms")' "$T/r4.json")
echo "not judged: $nj"
expect "GET p99.9 not judged" "$(echo "$nj" | jq .judged)" = false
expect "GET p99.9 is no pass" "$(echo "$nj" | jq .pass)" = null
expect "GET p99.9 verdict" "$(echo "$nj" | jq -r .verdict)" = "not judged"
expect "GET p99.9 needs 1000 ops" "$(echo "$nj" | jq .min_ops)" -eq 1000
expect_true "GET p99.9 had fewer" "$(echo "$nj" | jq .ops)" '. > 0 and . < 1000'
expect "SET p90 judged" "$(jq -r '.run.levels[0].qos[] | select(.rule == "kv.SET p90 <= 10000 ms") | .verdict' "$T/r4.json")" = pass
rc=0
"$TILEBENCH" validate latest --db "$T/few.db" >"$T/v4.out" 2>&1 || rc=$?
expect "validate exit with a rule not judged" "$rc" -eq 1
grep -q "1 tiles phase 1: QoS incomplete (2 judged: 2 passed, 0 failed; 1 not judged), valid" "$T/v4.out" ||
    fail "validate level line: $(cat "$T/v4.out")"
grep -Eq "QoS NOT JUDGED  kv.GET p99.9 <= 10000 ms: [0-9]+ ops, p99.9 needs 1000 \(" "$T/v4.out" ||
    fail "validate does not name the rule not judged: $(cat "$T/v4.out")"
echo "ok: validate: $(grep 'NOT JUDGED' "$T/v4.out" | head -1)"
"$TILEBENCH" report latest --db "$T/few.db" >"$T/r4.txt"
grep -q "QoS warning  incomplete at 1, 2 tiles: rules not judged" "$T/r4.txt" || fail "text report: no warning at the top"
grep -Eq "^ +1 +1 .*  incomplete +yes" "$T/r4.txt" || fail "text report: level verdict"
grep -q "^FAIL: QoS incomplete at 2 level phases" "$T/v4.out" || fail "validate's last line: $(tail -1 "$T/v4.out")"
"$TILEBENCH" report latest --db "$T/few.db" --format html -o "$T/r4.html"
grep -q "QoS incomplete</b>: 1 rule had too few ops to be judged (kv.GET p99.9 &lt;= 10000 ms)" "$T/r4.html" ||
    fail "HTML report: no validity warning for the rule not judged"
"$TILEBENCH" report latest --db "$T/few.db" --format csv -o "$T/r4.csv"
expect "CSV verdict column" "$(head -1 "$T/r4.csv" | tr ',' '\n' | grep -c '^qos_verdict')" -eq 1
grep -q ',incomplete,' "$T/r4.csv" || fail "CSV carries no 'incomplete' verdict"
# --preset compliant (its stages shortened here): a rule not judged makes the level invalid
"$TILEBENCH" run --config "$T/fewops.ini" --preset compliant --tiles 1 --phases 1 "${STAGES[@]}" --db "$T/few.db" \
    >"$T/run5.log" 2>&1 || fail "run exited $?: $(cat "$T/run5.log")"
"$TILEBENCH" report latest --db "$T/few.db" --format json >"$T/r5.json"
expect "compliant: invalid" "$(jq .run.levels[0].valid "$T/r5.json")" = false
expect_true "compliant: why" "$(jq '.run.levels[0].invalid_reason' "$T/r5.json")" \
    'test("1 QoS rule not judged \\(too few ops\\); a compliant run must judge every rule")'

# --calibrate: one tile's throughput becomes the reference of this tile
# definition; the next run normalizes against it and says where it came from
rc=0; "$TILEBENCH" run --config "$T/easy.ini" --calibrate --tiles 2 --db "$T/r.db" >"$T/c0.out" 2>&1 || rc=$?
expect "--calibrate with --tiles 2" "$rc" -eq 2
"$TILEBENCH" run --config "$T/easy.ini" --calibrate "${STAGES[@]}" --db "$T/r.db" >"$T/cal.log" 2>&1 ||
    fail "calibration run exited $?: $(cat "$T/cal.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/cal.json"
cal_id=$(jq .run.id "$T/cal.json")
cal_tput=$(jq '.run.levels[0].workloads[0].throughput' "$T/cal.json")
jq -r '.run.events[].message' "$T/cal.json" | grep -q "calibration: kv reference" || fail "no calibration event"
"$TILEBENCH" run --config "$T/easy.ini" --tiles 1 "${STAGES[@]}" --db "$T/r.db" >"$T/run3.log" 2>&1 ||
    fail "run after calibration exited $?: $(cat "$T/run3.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r3.json"
expect "reference source" "$(jq -r '.run.settings.reference_source.kv' "$T/r3.json" | cut -d' ' -f1-3)" = "calibration run $cal_id"
expect_true "reference = calibrated throughput" "$(jq '.run.levels[0].workloads[0].reference' "$T/r3.json")" ". == $cal_tput"
echo "PASS test_qos_verdicts"
