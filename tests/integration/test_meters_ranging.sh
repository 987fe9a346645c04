#!/usr/bin/env bash
# test_meters_ranging.sh: the ranging pass (run --ranging), end to end
# through wt310:// against the meter emulator. The emulator's load follows
# the run: a trace that steps from 69 W (230 V, 0.3 A, PF 1) to 300 W
# (1.304 A) between the 1-tile level and the 3-tile one (t = 0 at the
# poller's first request, --trace-sync; the step falls in the 1-tile level's
# ramp-down, well clear of both levels' ranging passes and phases).
# - with --ranging=2s each level auto-ranges at the start of warm-up and
#   then measures on fixed ranges chosen by hand: 300 V and 0.5 A for 1 tile
#   (0.3 A x 1.25 = 0.375 A), 300 V and 2 A for 3 tiles (1.304 A x 1.25 =
#   1.63 A); stored in level_ranges and told as events; no steady sample is
#   over-range or auto-ranged, and both levels are valid;
# - the same run on a fixed 0.5 A range, too small for 3 tiles, has
#   over-range steady samples and an invalid 3-tile level;
# - PTDaemon gets its ranges by SR (69 W: 300 V, 0.5 A), steady samples fixed;
# - bad input: an interval longer than the warm-up (--ranging and
#   [run] ranging, each named), and a meter that cannot set ranges: exit 2.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
printf 'time,watts\n0,69\n10,300\n' >"$T/trace.csv"

"$TB" sut up --tiles 3 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
STAGES=(--tiles 1,3 --ramp-up 1s --warm-up 4s --steady 3s --ramp-down 3s --phases 1 --idle 0)

# run NAME METER-URI [OPTIONS...]: the two levels into $T/NAME.db, its JSON report in $T/NAME.json.
run() {
    local name=$1 uri=$2
    shift 2
    "$TB" run --config "$T/tile.ini" "${STAGES[@]}" "$@" --meter "$uri" --db "$T/$name.db" --quiet \
        >"$T/$name.log" 2>&1 || fail "run $name exited $?: $(cat "$T/$name.log")"
    "$TB" report latest --db "$T/$name.db" --format json >"$T/$name.json" || fail "report $name"
}
q() { sqlite3 -batch -noheader "$T/$1.db" "$2"; }

# ---- bad input: exit 2, naming the option or key, before anything runs ----
start_sim bad --protocol wt310 --pf 1 --watts 69
rc=0
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --ranging=5s --meter "wt310://127.0.0.1:$PORT" --db "$T/bad.db" \
    >"$T/bad1.out" 2>&1 || rc=$?
expect "--ranging longer than warm-up: exit" "$rc" -eq 2
grep -q "^tilebench run: --ranging: the ranging interval (5 s) is longer than the warm-up it runs in (4 s)" \
    "$T/bad1.out" || fail "--ranging too long: no clear error: $(cat "$T/bad1.out")"
{ cat "$T/tile.ini"; printf '[run]\nranging = 6s\n'; } >"$T/tile-ranging.ini"
rc=0
"$TB" run --config "$T/tile-ranging.ini" "${STAGES[@]}" --meter "wt310://127.0.0.1:$PORT" --db "$T/bad.db" \
    >"$T/bad2.out" 2>&1 || rc=$?
expect "[run] ranging longer than warm-up: exit" "$rc" -eq 2
grep -q "\[run\] ranging: the ranging interval (6 s) is longer" "$T/bad2.out" ||
    fail "[run] ranging too long: no clear error: $(cat "$T/bad2.out")"
rc=0
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --ranging=2s --meter "estimate:" --db "$T/bad.db" \
    >"$T/bad3.out" 2>&1 || rc=$?
expect "--ranging with estimate:: exit" "$rc" -eq 2
grep -q "meter 'estimate:' cannot have its ranges set at run time" "$T/bad3.out" ||
    fail "--ranging with estimate:: no clear error: $(cat "$T/bad3.out")"
[ ! -e "$T/bad.db" ] || [ "$(sqlite3 "$T/bad.db" 'SELECT count(*) FROM levels')" = 0 ] || fail "a refused run measured"

# ---- the ranging pass: ranges follow the load ----
start_sim ranged --protocol wt310 --pf 1 --trace "$T/trace.csv" --trace-sync
run ranged "wt310://127.0.0.1:$PORT?volts=300&amps=20" --ranging=2s
expect "1 tile: ranges" "$(q ranged 'SELECT volt_range_v || " " || amp_range_a FROM level_ranges WHERE tiles = 1')" = "300.0 0.5"
expect "3 tiles: ranges" "$(q ranged 'SELECT volt_range_v || " " || amp_range_a FROM level_ranges WHERE tiles = 3')" = "300.0 2.0"
expect_true "3 tiles: peak A" "$(q ranged 'SELECT peak_a FROM level_ranges WHERE tiles = 3')" '(. - 1.30435) | fabs < 0.001'
expect "ranging rows have samples" "$(q ranged 'SELECT count(*) FROM level_ranges WHERE samples >= 1')" -eq 2
expect "ranging events" "$(q ranged "SELECT count(*) FROM events WHERE message LIKE '% tiles ranging: meter 1 peak %'")" -eq 2
expect "steady samples over-range or auto-ranged" \
    "$(q ranged "SELECT count(*) FROM power_samples WHERE stage = 'steady' AND (flags & 20) != 0")" -eq 0
expect "steady samples" "$(q ranged "SELECT count(*) FROM power_samples WHERE stage = 'steady'")" -ge 4
expect "warm-up samples auto-ranged" "$(q ranged "SELECT count(*) FROM power_samples WHERE stage = 'warm-up' AND (flags & 16) != 0")" -ge 2
expect "ranged: both levels valid" "$(jq '[.run.levels[] | select(.valid)] | length' "$T/ranged.json")" -eq 2
"$TB" report latest --db "$T/ranged.db" >"$T/ranged.txt" || fail "text report"
grep -Eq '^ +3 +1 +1 +230 +1\.304 +300 +2 +[0-9]+$' "$T/ranged.txt" || fail "text report: no ranges: $(cat "$T/ranged.txt")"
expect "JSON report: ranges" "$(jq -c '[.run.ranging[] | [.tiles, .volt_range_v, .amp_range_a]]' "$T/ranged.json")" = \
    '[[1,300,0.5],[3,300,2]]'
"$TB" report latest --db "$T/ranged.db" --format html >"$T/ranged.html" || fail "html report"
grep -q 'Ranging pass: each level' "$T/ranged.html" || fail "HTML report: no ranging table"

# ---- PTDaemon: SR between measurements (Stop, SR,V / SR,A, RR, Go) ----
start_sim ptd --protocol ptd --pf 1 --watts 69
STAGES=(--tiles 1 --ramp-up 1s --warm-up 4s --steady 3s --ramp-down 0 --phases 1 --idle 0)
run ptd "ptd://127.0.0.1:$PORT" --ranging=2s
expect "ptd: ranges" "$(q ptd 'SELECT volt_range_v || " " || amp_range_a FROM level_ranges')" = "300.0 0.5"
expect "ptd: steady samples auto-ranged" "$(q ptd "SELECT count(*) FROM power_samples WHERE stage = 'steady' AND (flags & 16) != 0")" -eq 0
expect "ptd: warm-up samples auto-ranged" "$(q ptd "SELECT count(*) FROM power_samples WHERE stage = 'warm-up' AND (flags & 16) != 0")" -ge 1
STAGES=(--tiles 1,3 --ramp-up 1s --warm-up 4s --steady 3s --ramp-down 3s --phases 1 --idle 0)

# ---- a fixed range too small for 3 tiles: over-range, invalid ----
start_sim fixed --protocol wt310 --pf 1 --trace "$T/trace.csv" --trace-sync
run fixed "wt310://127.0.0.1:$PORT?volts=300&amps=0.5"
expect "fixed: no ranging rows" "$(q fixed 'SELECT count(*) FROM level_ranges')" -eq 0
expect "fixed: 3-tile steady over-range samples" "$(q fixed "SELECT count(*) FROM power_samples p JOIN levels l ON l.id = p.level_id WHERE l.tiles = 3 AND (p.flags & 4) != 0")" -ge 1
expect "fixed: 1 tile valid" "$(jq -r '.run.levels[] | select(.tiles == 1) | .valid' "$T/fixed.json")" = true
expect "fixed: 3 tiles valid" "$(jq -r '.run.levels[] | select(.tiles == 3) | .valid' "$T/fixed.json")" = false

echo "PASS test_meters_ranging"
