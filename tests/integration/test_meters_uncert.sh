#!/usr/bin/env bash
# test_meters_uncert.sh: a Yokogawa meter's uncertainty and calibration, end
# to end through wt310:// against the meter emulator serving 69 W (230 V,
# 0.3 A, PF 1):
# - a calibration date that is no date or lies ahead is an error at open
#   (exit 2), and estimate: refuses the key;
# - on a 20 A range each sample's uncertainty is the WT310's published
#   accuracy computed by hand, 8.8%, and the level is invalid for it; on the
#   0.5 A range that fits it is 0.32% and the level is not;
# - no calibration date is a stored warning; a stale one makes a compliant
#   run's level invalid.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
RECENT=$(date -u -d '-10 days' +%F)
STALE=$(date -u -d '-400 days' +%F)
AHEAD=$(date -u -d '+2 days' +%F)
start_sim u --protocol wt310 --watts 69 --pf 1
U="wt310://127.0.0.1:$PORT"

# ---- calibrated=: bad input is an error at open ----
for bad in "$AHEAD" 2026-02-30 yesterday; do
    rc=0
    "$TB" meter probe "$U?calibrated=$bad" --samples 1 >"$T/bad.out" 2>&1 || rc=$?
    expect "probe calibrated=$bad: exit" "$rc" -eq 2
    grep -q "calibrated: '$bad': " "$T/bad.out" || fail "calibrated=$bad: no clear error: $(cat "$T/bad.out")"
done
grep -q "a date in the future" <("$TB" meter probe "$U?calibrated=$AHEAD" --samples 1 2>&1) ||
    fail "a future calibration date is not called one"
rc=0
"$TB" meter probe "estimate:?calibrated=$RECENT" --samples 1 >"$T/est.out" 2>&1 || rc=$?
expect "estimate: with calibrated=: exit" "$rc" -eq 2
grep -q "'calibrated': unknown parameter" "$T/est.out" || fail "estimate: took calibrated=: $(cat "$T/est.out")"

# ---- the uncertainty of one sample, by hand ----
# WT310, 45-66 Hz (IM WT310-02EN 7.3.2): +-(0.1% of reading + 0.1% of range).
# 300 V x 20 A = 6000 W range: (0.069 W + 6 W) / 69 W = 8.796%.
# 300 V x 0.5 A = 150 W range: (0.069 W + 0.15 W) / 69 W = 0.317%.
"$TB" meter probe "$U?volts=300&amps=20" --samples 1 >"$T/p20.out" 2>&1 || fail "probe 20 A: $(cat "$T/p20.out")"
unc=$(awk '$1 == 1 {print $7}' "$T/p20.out")
expect "20 A range: the sample's unc%" "$unc" = 8.796
"$TB" meter probe "$U?volts=300&amps=0.5" --samples 1 >"$T/p05.out" 2>&1 || fail "probe 0.5 A: $(cat "$T/p05.out")"
unc=$(awk '$1 == 1 {print $7}' "$T/p05.out")
expect "0.5 A range: the sample's unc%" "$unc" = 0.317

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
# run NAME METER-URI [OPTIONS...]: one 1-tile level of 4 s into $T/NAME.db, its JSON report in $T/NAME.json.
run() {
    local name=$1 uri=$2
    shift 2
    "$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 4s --ramp-down 0 --idle 0 "$@" \
        --meter "$uri" --db "$T/$name.db" --quiet >"$T/$name.log" 2>&1 || fail "run $name exited $?: $(cat "$T/$name.log")"
    "$TB" report latest --db "$T/$name.db" --format json >"$T/$name.json" || fail "report $name"
}
reason() { jq -r '.run.levels[0].invalid_reason // ""' "$T/$1.json"; }

# ---- a badly fitting range: the level is invalid for its uncertainty ----
run wide "$U?volts=300&amps=20&calibrated=$RECENT"
J="$T/wide.json"
expect "20 A: level valid" "$(jq -r '.run.levels[0].valid' "$J")" = false
case "$(reason wide)" in *"meter uncertainty up to 8.80% (limit 1%)"*) ;; *) fail "20 A: reason '$(reason wide)'" ;; esac
expect_true "20 A: worst uncertainty" "$(jq '.run.levels[0].max_uncertainty_pct' "$J")" '(. - 8.7957) | fabs < 0.001'
expect_true "20 A: mean uncertainty" "$(jq '.run.levels[0].mean_uncertainty_pct' "$J")" '(. - 8.7957) | fabs < 0.001'
expect "20 A: calibrated stored" "$(jq -r '.run.meters[0].calibrated' "$J")" = "$RECENT"
expect "20 A: accepted by SPEC" "$(jq -r '.run.meters[0].spec_accepted' "$J")" = unknown
jq -r '.run.meters[0].accuracy' "$J" | grep -q 'WT310: 0.1% of reading + 0.1% of range.*IM WT310-02EN' ||
    fail "20 A: accuracy '$(jq -r '.run.meters[0].accuracy' "$J")'"
"$TB" report latest --db "$T/wide.db" >"$T/wide.txt" || fail "text report"
grep -Eq '^ +1 +1 +8\.796 +8\.796  OVER 1%$' "$T/wide.txt" || fail "text report: no per-level uncertainty: $(cat "$T/wide.txt")"
grep -q "accepted by SPEC: unknown; calibrated: $RECENT; accuracy WT310" "$T/wide.txt" || fail "text report: meter papers"

# ---- the range that fits, no calibration date: a warning only ----
run fit "$U?volts=300&amps=0.5"
case "$(reason fit)" in *uncertainty* | *calibrat*) fail "0.5 A: reason '$(reason fit)'" ;; esac
expect_true "0.5 A: worst uncertainty" "$(jq '.run.levels[0].max_uncertainty_pct' "$T/fit.json")" '(. - 0.31739) | fabs < 0.001'
expect "0.5 A: calibrated" "$(jq -r '.run.meters[0].calibrated' "$T/fit.json")" = null
expect "0.5 A: a warning for no calibration date" \
    "$(sqlite3 -batch -noheader "$T/fit.db" "SELECT count(*) FROM events WHERE message LIKE '%no calibrated=YYYY-MM-DD given%'")" -ge 1

# ---- a stale calibration under --preset compliant: invalid ----
run stale "$U?volts=300&amps=0.5&calibrated=$STALE" --preset compliant --phases 1
case "$(reason stale)" in
*"calibrated $STALE, 400 days ago (over 365) (a compliant run needs a calibration within a year)"*) ;;
*) fail "stale, compliant: reason '$(reason stale)'" ;;
esac
expect "stale, compliant: level valid" "$(jq -r '.run.levels[0].valid' "$T/stale.json")" = false
echo "PASS test_meters_uncert"
