#!/usr/bin/env bash
# test_temperature.sh: the inlet temperature end to end, beside a WT310
# emulator serving 69 W on ranges that fit it (calibrated recently, so a
# compliant level is judged on its temperature, not its meter):
# - bad sources are refused before the run (exit 2, the URI named): an
#   unknown scheme, a missing file, a file that holds no number, a
#   PTDaemon that runs in power mode;
# - a PTDaemon in temperature mode (the emulator's ptd-temp protocol) whose
#   trace dips from 22 to 18 C for 2 s inside the steady window makes that
#   level invalid under --preset compliant; the reports (JSON, text, CSV,
#   HTML) show min 18, max 22, and `tilebench validate` fails the level;
# - every reading is stored (temperature_samples): the steady ones with their
#   level, inside its window, giving the level's count, min, mean (the mean of
#   the readings) and max; the ramp-up and warm-up ones with their stage;
# - a file: source at 18 C in a demo run only warns; the level stays valid;
#   with a second source at 21 C each reading names its source;
# - a compliant run at a steady 23 C is not made invalid by it;
# - a compliant run without a source says "not measured", as a warning.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
RECENT=$(date -u -d '-10 days' +%F)
start_sim meter --protocol wt310 --watts 69 --pf 1
M="wt310://127.0.0.1:$PORT?volts=300&amps=0.5&calibrated=$RECENT"
# t = 0 is the run's first temperature reading (when it opens the source)
printf '0,22\n5,18\n7,22\n' >"$T/dip.csv"
start_sim dipsim --protocol ptd-temp --trace "$T/dip.csv" --trace-sync
DIP="ptd+temp://127.0.0.1:$PORT"
start_sim warmsim --protocol ptd-temp --watts 23
WARM="ptd+temp://127.0.0.1:$PORT"
start_sim power --protocol ptd --watts 69
POWER_PORT=$PORT

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
STAGES=(--tiles 1 --ramp-up 1s --warm-up 1s --steady 8s --phases 1 --ramp-down 0 --idle 0)
# run NAME [OPTIONS...]: one 1-tile level of 8 s into $T/NAME.db, its JSON report in $T/NAME.json.
run() {
    local name=$1
    shift
    "$TB" run --config "$T/tile.ini" "${STAGES[@]}" --meter "$M" "$@" --db "$T/$name.db" --quiet \
        >"$T/$name.log" 2>&1 || fail "run $name exited $?: $(cat "$T/$name.log")"
    "$TB" report latest --db "$T/$name.db" --format json >"$T/$name.json" || fail "report $name"
}
lv() { jq -r ".run.levels[0].$2" "$T/$1.json"; }
events() { sqlite3 -batch -noheader "$T/$1.db" "SELECT count(*) FROM events WHERE message LIKE '%$2%'"; }

# ---- bad input: exit 2 before anything runs, naming the URI ----
echo "warm" >"$T/word.txt"
for bad in "thermo://127.0.0.1:1" "file:$T/no-such-file" "file:$T/word.txt" "ptd+temp://127.0.0.1:$POWER_PORT" \
    "ptd+temp://127.0.0.1:1/x"; do
    rc=0
    "$TB" run --config "$T/tile.ini" "${STAGES[@]}" --meter "$M" --temperature "$bad" --db "$T/bad.db" \
        >"$T/bad.out" 2>&1 || rc=$?
    expect "--temperature $bad: exit" "$rc" -eq 2
    grep -qF "temperature '$bad'" "$T/bad.out" || fail "--temperature $bad: the URI is not named: $(cat "$T/bad.out")"
done
grep -q "unknown scheme" <("$TB" run --config "$T/tile.ini" --temperature x: --db "$T/bad.db" 2>&1) ||
    fail "an unknown scheme is not called one"
grep -q "'warm' is not a number" <("$TB" run --config "$T/tile.ini" --temperature "file:$T/word.txt" \
    --db "$T/bad.db" 2>&1) || fail "a word in the file is not called no number"

# ---- the dip under --preset compliant: invalid, reported, validate fails it ----
run dip --temperature "$DIP" --preset compliant
T0=$(sed -n 's/^trace t=0 at monotonic \([0-9]*\) us$/\1/p' "$T/dipsim.log")
[ -n "$T0" ] || fail "the temperature emulator did not say when its trace began: $(cat "$T/dipsim.log")"
read -r S0 S1 < <(sqlite3 -batch -noheader -separator ' ' "$T/dip.db" \
    "SELECT start_mono_us, end_mono_us FROM stages WHERE stage = 'steady'")
# the 18 C stretch [5 s, 7 s) of the trace must lie inside the steady window, or the test proves nothing
expect "the dip begins after steady state does (us)" "$((T0 + 5000000))" -gt "$S0"
expect "the dip ends before steady state does (us)" "$((T0 + 7000000))" -lt "$S1"
expect "dip: level valid" "$(lv dip valid)" = false
case "$(lv dip invalid_reason)" in
*"inlet temperature down to 18.0 C (minimum 20 C)"*) ;;
*) fail "dip: reason '$(lv dip invalid_reason)'" ;;
esac
expect "dip: min C" "$(lv dip inlet_temperature.min_c)" = 18
expect "dip: max C" "$(lv dip inlet_temperature.max_c)" = 22
# 1 Hz over 8 s: 8 readings (one either side at most), 2 of them in the dip
expect_true "dip: readings" "$(lv dip inlet_temperature.samples)" '. >= 7 and . <= 9'
expect_true "dip: mean C" "$(lv dip inlet_temperature.mean_c)" '. > 18 and . < 22'
expect "dip: measured" "$(jq -r .run.inlet_temperature_measured "$T/dip.json")" = true
rc=0
"$TB" validate latest --db "$T/dip.db" >"$T/dip.validate" 2>&1 || rc=$?
expect "validate of the dip: exit" "$rc" -eq 1
grep -q "inlet temperature down to 18.0 C" "$T/dip.validate" || fail "validate: no temperature reason: $(cat "$T/dip.validate")"
"$TB" report latest --db "$T/dip.db" >"$T/dip.txt" || fail "text report"
grep -Eq '^  1 tiles p1 +[0-9]+ +18\.0 +[0-9.]+ +22\.0  UNDER 20 C$' "$T/dip.txt" ||
    fail "text report: no inlet temperature line: $(grep -A4 'Inlet' "$T/dip.txt")"
"$TB" report latest --db "$T/dip.db" --format csv >"$T/dip.csv.out" || fail "csv report"
col=$(head -1 "$T/dip.csv.out" | tr -d '\r' | tr ',' '\n' | grep -n '^inlet_min_c$' | cut -d: -f1)
[ -n "$col" ] || fail "csv: no inlet_min_c column"
expect "csv: inlet_min_c" "$(sed -n 2p "$T/dip.csv.out" | cut -d, -f"$col")" = 18
# the readings behind the figures, checked in SQL of their own
dq() { sqlite3 -batch -noheader "$T/dip.db" "$1"; }
expect "dip: steady readings stored" "$(dq "SELECT count(*) FROM temperature_samples WHERE stage = 'steady'")" -eq \
    "$(lv dip inlet_temperature.samples)"
expect "dip: readings agree with the stored figures" "$(dq "SELECT count(*) FROM inlet_temperatures i WHERE
    i.level_id IS NOT NULL AND (i.samples, i.min_c, i.max_c) IS (SELECT count(*), min(celsius), max(celsius)
    FROM temperature_samples t WHERE t.level_id = i.level_id) AND abs(i.mean_c - (SELECT avg(celsius)
    FROM temperature_samples t WHERE t.level_id = i.level_id)) < 1e-9")" -eq 1
expect "dip: steady readings outside their window" "$(dq "SELECT count(*) FROM temperature_samples t
    JOIN levels l ON l.id = t.level_id WHERE t.mono_us < l.steady_start_mono_us OR t.mono_us >= l.steady_end_mono_us")" -eq 0
expect "dip: readings of 18 C in steady state" "$(dq "SELECT count(*) FROM temperature_samples
    WHERE stage = 'steady' AND celsius = 18")" -ge 1
for st in ramp-up warm-up; do
    expect "dip: $st readings" "$(dq "SELECT count(*) FROM temperature_samples WHERE stage = '$st'
        AND level_id IS NULL")" -ge 1
done
expect "dip: readings with a wall clock" "$(dq "SELECT count(*) FROM temperature_samples WHERE wall_us <= 0")" -eq 0
"$TB" report latest --db "$T/dip.db" --format html >"$T/dip.html" || fail "html report"
grep -q 'id="temperature"' "$T/dip.html" || fail "html: no inlet temperature section"

# ---- a file: source at 18 C in a demo run: a warning, the level stays valid ----
echo "18.0" >"$T/inlet.txt"
echo "21.0" >"$T/inlet2.txt"
run cold --temperature "file:$T/inlet.txt" --temperature "file:$T/inlet2.txt"
expect "cold: source 0's readings" "$(sqlite3 -batch -noheader "$T/cold.db" "SELECT count(*) FROM temperature_samples
    WHERE source = 0 AND celsius = 18.0")" -ge 7
expect "cold: source 1's readings" "$(sqlite3 -batch -noheader "$T/cold.db" "SELECT count(*) FROM temperature_samples
    WHERE source = 1 AND celsius = 21.0")" -ge 7
expect "cold: readings of no source's value" "$(sqlite3 -batch -noheader "$T/cold.db" "SELECT count(*)
    FROM temperature_samples WHERE NOT (source = 0 AND celsius = 18.0) AND NOT (source = 1 AND celsius = 21.0)")" -eq 0
case "$(lv cold invalid_reason)" in *inlet*) fail "cold demo: reason '$(lv cold invalid_reason)'" ;; esac
expect "cold demo: min C" "$(lv cold inlet_temperature.min_c)" = 18
expect "cold demo: a warning" "$(events cold 'inlet temperature down to 18.0 C%')" -ge 1

# ---- a steady 23 C, compliant: the temperature does not invalidate ----
run warm --temperature "$WARM" --preset compliant
case "$(lv warm invalid_reason)" in *inlet*) fail "warm: reason '$(lv warm invalid_reason)'" ;; esac
expect "warm: min C" "$(lv warm inlet_temperature.min_c)" = 23
expect "warm: max C" "$(lv warm inlet_temperature.max_c)" = 23

# ---- no source, compliant: not measured, a warning ----
run none --preset compliant
expect "none: measured" "$(jq -r .run.inlet_temperature_measured "$T/none.json")" = false
expect "none: readings" "$(sqlite3 -batch -noheader "$T/none.db" "SELECT count(*) FROM temperature_samples")" -eq 0
expect "none: level measured" "$(lv none inlet_temperature.measured)" = false
expect "none: a warning" "$(events none 'inlet temperature not measured%')" -ge 1
"$TB" report latest --db "$T/none.db" >"$T/none.txt" || fail "text report of none"
grep -q "Inlet temperature: not measured" "$T/none.txt" || fail "text: not measured unsaid: $(cat "$T/none.txt")"
stop_sims
echo "PASS test_temperature"
