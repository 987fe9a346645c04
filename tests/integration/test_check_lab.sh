#!/usr/bin/env bash
# test_check_lab.sh: `tilebench check`'s lab-measurement rules (docs/verify.md,
# "The lab-measurement rules") on bundles of two short real runs against the
# embedded SUT:
#  - run 1: a WT332E emulator read as elements 1,2 (wt310://...?element=1,2), with
#    an inlet temperature source (file:, 22 C) and --ranging=2s, its 200 W split
#    1:3 (50 W = 0.2174 A, 150 W = 0.6522 A): every power sample is the sum of
#    its channels, no channel makes a level invalid, the temperature rule passes,
#    and the ranging peaks are recomputed from channel_samples.csv (the larger
#    element's 0.6522 A: 300 V, 1 A);
#  - run 2: one WT310 emulator with --ranging=2s: the ranges recomputed from the
#    ranging interval's samples (69 W at 230 V: 0.3 A, so 300 V and 0.5 A);
#  - forgeries (the manifest's hash rewritten each time), each exit 1 naming the
#    item: a channel reading edited (its sum), the stored peak made the smaller
#    channel's, a channel's current in the ranging pass raised (its peak), one
#    channel made bad in every
#    sample of a level the run calls valid, a stored range widened, a stored
#    peak edited, an over-range steady sample in a valid level, an inlet minimum
#    of 18 C in a run claiming the compliant preset whose level is valid, a
#    minimum above the mean, a stored maximum and an active idle count the
#    readings do not give, readings edited under unchanged figures, a reading
#    moved out of its level's window; and the bundle without
#    temperature_samples.csv (an older run's) says "not recomputed", exit 0.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY not found: it edits the CSV"
DB="$T/results.db"

start_sim two --protocol wt310 --elements 2 --split 1,3 --watts 200 --pf 1
P_TWO=$PORT
start_sim one --protocol wt310 --watts 69 --pf 1
P_ONE=$PORT
echo 22.0 >"$T/inlet"

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
STAGES=(--tiles 1 --ramp-up 1s --warm-up 3s --steady 4s --ramp-down 1s --idle 3s)
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --meter "wt310://127.0.0.1:$P_TWO?element=1,2&volts=300&amps=2" \
    --ranging=2s --temperature "file:$T/inlet" --db "$DB" --quiet >"$T/run1.log" 2>&1 || fail "run 1 exited $?: $(cat "$T/run1.log")"
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --ranging=2s --meter "wt310://127.0.0.1:$P_ONE" --db "$DB" --quiet \
    >"$T/run2.log" 2>&1 || fail "run 2 exited $?: $(cat "$T/run2.log")"
"$TB" sut down --dir "$T/sut" >/dev/null 2>&1 || fail "sut down failed"
stop_sims

check_rc() {
    local name=$1 want=$2 rc=0
    "$TB" check "$3" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [ "$rc" -eq "$want" ] || fail "check $name: exit $rc, not $want: $(grep -v '^PASS' "$T/$name.out" "$T/$name.err")"
}
has() { grep -q -- "$2" "$T/$1.out" || fail "check $1: no line '$2': $(cat "$T/$1.out" "$T/$1.err")"; }
hasnt() { ! grep -q -- "$2" "$T/$1.out" || fail "check $1: unexpected '$2': $(grep -- "$2" "$T/$1.out")"; }

for run in 1 2; do
    "$TB" publish "$run" --db "$DB" -o "$T/run$run.tar.gz" >"$T/publish.log" 2>&1 || fail "publish $run: $(cat "$T/publish.log")"
done

# ---- the clean bundles pass every lab line ----
check_rc chan 0 "$T/run1.tar.gz"
has chan "^PASS channels meter 0: [0-9]* samples of every stage, each the sum of channels 1,2"
has chan "^PASS channels level [0-9]* (tiles 1) meter 0: channel 1 0 bad of [0-9]*, channel 2 0 bad of [0-9]*; stored valid"
has chan "^PASS inlet temperature level [0-9]* (tiles 1): min 22.0, mean 22.0, max 22.0 C over [0-9]* readings (recomputed from temperature_samples.csv); stored valid"
has chan "^PASS inlet temperature active idle: min 22.0, mean 22.0, max 22.0 C over [0-9]* readings (recomputed"
has chan "^PASS inlet temperature readings: [0-9]* readings, [0-9]* of them in steady windows"
has chan "^PASS ranges tiles 1 (repeat 1) meter 0: peaks 230 V, 0.652174 A over [0-9]* samples (their channels' largest): 300 V, 1 A; 1 measured phases, 0 over-range"
hasnt chan "^FAIL"
check_rc rng 0 "$T/run2.tar.gz"
has rng "^PASS ranges tiles 1 (repeat 1) meter 0: peaks 230 V, 0.3 A over [0-9]* samples: 300 V, 0.5 A; 1 measured phases, 0 over-range"
hasnt rng "^FAIL"

# forge NAME BUNDLE FILE PYTHON: data/FILE of BUNDLE edited by PYTHON (rows: the
# CSV's rows, head: its header), the manifest's hash rewritten: check must exit 1 (WANT_RC).
forge() {
    local name=$1 bundle=$2 file=$3 code=$4 d b
    rm -rf "$T/forge" && mkdir "$T/forge" && tar xzf "$bundle" -C "$T/forge" || fail "untar"
    b=$(ls "$T/forge")
    d="$T/forge/$b"
    "$PY" - "$d/data/$file" "$code" <<'PYEOF' || fail "forge $name"
import csv, sys
path, code = sys.argv[1], sys.argv[2]
rows = list(csv.reader(open(path, newline="")))
head = rows[0]
col = head.index
exec(code)
with open(path, "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
PYEOF
    jq --arg p "data/$file" --arg h "$(sha256sum "$d/data/$file" | cut -d' ' -f1)" \
        --argjson b "$(stat -c %s "$d/data/$file")" '(.files[] | select(.path == $p)) |= (.sha256 = $h | .bytes = $b)' \
        "$d/manifest.json" >"$T/m.json" && mv "$T/m.json" "$d/manifest.json" || fail "jq $name"
    (cd "$T/forge" && tar czf "$T/$name.tar.gz" "$b") || fail "tar"
    check_rc "$name" "${WANT_RC:-1}" "$T/$name.tar.gz"
    hasnt "$name" "^FAIL hash"
}

# a channel's reading 5 W higher: its summed sample is no longer the sum
forge chsum "$T/run1.tar.gz" channel_samples.csv '
r = next(r for r in rows[1:] if r[col("stage")] == "steady" and r[col("channel")] == "2")
r[col("watts")] = repr(float(r[col("watts")]) + 5.0)'
has chsum "^FAIL channels meter 0: sample at mono_us [0-9]*: watts 200, its channels sum to 205"

# the stored peak the smaller channel's current (as if it alone were ranged); channel 2's current in the pass raised
forge chpeak "$T/run1.tar.gz" level_ranges.csv 'rows[1][col("peak_a")] = "0.217391"'
has chpeak "^FAIL ranges tiles 1 (repeat 1) meter 0: stored 230 V, 0.217391 A over [0-9]* samples; the channels' readings give 230 V, 0.652174 A"
forge champs "$T/run1.tar.gz" channel_samples.csv '
for r in rows[1:]:
    if r[col("stage")] == "warm-up" and r[col("channel")] == "2":
        r[col("amps")] = "0.9"'
has champs "^FAIL ranges tiles 1 (repeat 1) meter 0: stored 230 V, 0.652174 A over [0-9]* samples; the channels' readings give 230 V, 0.9 A"

# channel 2 implausible in every steady sample (and so each summed sample, to keep the sums), the level still valid
forge chbad "$T/run1.tar.gz" channel_samples.csv '
for r in rows[1:]:
    if r[col("stage")] == "steady" and r[col("channel")] == "2":
        r[col("flags")] = "32"'
has chbad "^FAIL channels meter 0: sample at mono_us [0-9]*: flags 0x00, a channel's 0x20"
has chbad "^FAIL channels level [0-9]* (tiles 1) meter 0: channel 2: [0-9]* bad of the level's [0-9]* samples, but levels.csv says valid"

# a range wider than the rule picks, a peak that the samples do not give, an over-range steady sample
forge rwide "$T/run2.tar.gz" level_ranges.csv 'rows[1][col("amp_range_a")] = "2"'
has rwide "^FAIL ranges tiles 1 (repeat 1) meter 0: stored 300 V, 2 A; peaks 230 V, 0.3 A need 300 V, 0.5 A"
forge rpeak "$T/run2.tar.gz" level_ranges.csv 'rows[1][col("peak_a")] = "0.25"'
has rpeak "^FAIL ranges tiles 1 (repeat 1) meter 0: stored 230 V, 0.25 A over [0-9]* samples; the samples give 230 V, 0.3 A"
forge rover "$T/run2.tar.gz" power_samples.csv '
r = next(r for r in rows[1:] if r[col("stage")] == "steady")
r[col("flags")] = str(int(r[col("flags")]) | 4)'
has rover "^FAIL ranges tiles 1 (repeat 1) meter 0: .* 1 over-range or auto-ranged samples in valid ones"

# a stored maximum the readings do not give (min <= mean <= max still holds), and active idle's count
forge tmax "$T/run1.tar.gz" inlet_temperatures.csv '
r = next(r for r in rows[1:] if r[col("level_id")] != "")
r[col("max_c")] = "23"'
has tmax "^FAIL inlet temperature level [0-9]* (tiles 1): stored min 22, mean 22, max 23 C over [0-9]* readings; temperature_samples.csv gives min 22, mean 22, max 22 C over [0-9]*"
forge tidle "$T/run1.tar.gz" inlet_temperatures.csv '
r = next(r for r in rows[1:] if r[col("level_id")] == "")
r[col("samples")] = str(int(r[col("samples")]) + 1)'
has tidle "^FAIL inlet temperature active idle: stored min 22, mean 22, max 22 C over [0-9]* readings; temperature_samples.csv gives"
hasnt tidle "^FAIL inlet temperature level"

# two steady readings of the first level edited to 18 and 26 C (the mean stays 22): the stored figures are wrong
forge tread "$T/run1.tar.gz" temperature_samples.csv '
lid = next(r[col("level_id")] for r in rows[1:] if r[col("stage")] == "steady")
mine = [r for r in rows[1:] if r[col("level_id")] == lid]
mine[0][col("celsius")] = "18"
mine[1][col("celsius")] = "26"'
has tread "^FAIL inlet temperature level [0-9]* (tiles 1): stored min 22, mean 22, max 22 C .*gives min 18, mean 22, max 26 C"
hasnt tread "^FAIL inlet temperature readings"

# a steady reading moved 100 s past its level's window
forge twin "$T/run1.tar.gz" temperature_samples.csv '
r = next(r for r in rows[1:] if r[col("stage")] == "steady")
r[col("mono_us")] = str(int(r[col("mono_us")]) + 100000000)'
has twin "^FAIL inlet temperature readings: data/temperature_samples.csv row [0-9]*: mono_us [0-9]* outside level [0-9]* (tiles 1)"

# the inlet minimum 18 C (the readings and the figures edited alike): under a claimed compliant preset the
# valid level is wrong; a minimum above the mean
WANT_RC=0 forge tcold "$T/tread.tar.gz" inlet_temperatures.csv '
lid = next(r[col("level_id")] for r in rows[1:] if r[col("level_id")] != "")
for r in rows[1:]:
    if r[col("level_id")] == lid: r[col("min_c")], r[col("max_c")] = "18", "26"'
hasnt tcold "^FAIL inlet temperature" # not compliant: a warning only
has tcold "^PASS inlet temperature level [0-9]* (tiles 1): min 18.0, mean 22.0, max 26.0 C"
forge tcomp "$T/tcold.tar.gz" runs.csv '
import json
s = json.loads(rows[1][col("settings_json")]); s["preset"] = "compliant"
rows[1][col("settings_json")] = json.dumps(s)'
has tcomp "^FAIL inlet temperature level [0-9]* (tiles 1): min 18.0 C, but levels.csv says valid"
forge tmean "$T/run1.tar.gz" inlet_temperatures.csv '
r = next(r for r in rows[1:] if r[col("level_id")] != "")
r[col("min_c")] = "23"'
has tmean "^FAIL inlet temperature level [0-9]* (tiles 1): [0-9]* readings: min 23, mean 22, max 22 C (min <= mean <= max"
# a bundle without temperature_samples.csv (a run stored before the readings were kept): not recomputed, exit 0
rm -rf "$T/forge" && mkdir "$T/forge" && tar xzf "$T/run1.tar.gz" -C "$T/forge" || fail "untar"
b=$(ls "$T/forge")
rm "$T/forge/$b/data/temperature_samples.csv"
jq 'del(.files[] | select(.path == "data/temperature_samples.csv"))' "$T/forge/$b/manifest.json" >"$T/m.json" &&
    mv "$T/m.json" "$T/forge/$b/manifest.json" || fail "jq told"
(cd "$T/forge" && tar czf "$T/told.tar.gz" "$b") || fail "tar"
check_rc told 0 "$T/told.tar.gz"
has told "^PASS inlet temperature level [0-9]* (tiles 1): min 22.0, mean 22.0, max 22.0 C over [0-9]* readings (not recomputed: no temperature_samples.csv)"
has told "^PASS inlet temperature active idle: .*(not recomputed: no temperature_samples.csv)"
hasnt told "^PASS inlet temperature readings"
echo "PASS test_check_lab"
