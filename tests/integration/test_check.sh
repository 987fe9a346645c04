#!/usr/bin/env bash
# test_check.sh: `tilebench check`, the independent verifier, on bundles of
# two short real runs against the embedded SUT, each measured by a meter
# emulator:
#  - a clean run's bundle is compliant (exit 0), and so is `check RUN`;
#  - a run on estimated power is not (exit 1, naming the rule);
#  - a run whose meter serves a NaN on every 2nd request (half its samples
#    bad) is not (exit 1), naming the bad-samples rule;
#  - one power sample edited: exit 1 naming the hash of data/power_samples.csv;
#    with the manifest's hash rewritten to match, exit 1 naming the level's
#    recomputed mean power (and PPKW), and no hash;
#  - the clean run passes the edges rule on whole-second stages (the samples
#    of warm-up and ramp-down beside each edge are stored); with the samples
#    within 600 ms of its steady start deleted (manifest rewritten), exit 1
#    naming the level's edges rule;
#  - a QoS verdict of each kind check judges again (kv's mix and throughput, an operation's error
#    rate, throughput and latency: p50, mean, within, from its histogram in histograms.hlog), a
#    manifest field (run_uuid, a meter's estimated and model, the tile file, the tilebench version)
#    and a figure of report.csv and report.html forged, with the manifest's hash rewritten: exit 1
#    naming it;
#  - each level's telemetry (and active idle's) recomputed from telemetry_samples.csv; a forged
#    utilization in report.json, an edited sample and a forged sample count: exit 1 naming it;
#  - a garbage file, an empty tar, a bundle without manifest.json, a bare (not gzip) tar and a
#    crafted table larger than check's memory limit: exit 2.
# The bundles come from `tilebench publish`; the clean run's is also written
# by the test itself from the database by the rules of docs/bundle.md (sqlite3
# CSV, the reports, sha256sum), so check is tested against a bundle that no
# tilebench code assembled as well.
#  - `check RUN` publishes the run first: the clean run exits 0, the NaN run 1,
#    an unknown run 2.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY not found: it edits the CSV"
DB="$T/results.db"

start_sim good --protocol wt310 --watts 180
P_GOOD=$PORT
start_sim nan --protocol wt310 --watts 180 --fault nan:2
P_NAN=$PORT

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
# a QoS rule of each kind check judges again: kv's mix (from the first op on) and throughput, and an
# operation beside the tile with a throughput rule and its default error rate
sed -i 's/^\[qos\.kv\]$/&\nmix_deviation = 20@0\nthroughput = 1/' "$T/tile.ini"
printf '[infra.copy]\nkind = command\nthink_time = 500ms\ntimeout = 5s\nreference = 3600\ncommand = true\n' >>"$T/tile.ini"
# and latency rules on its durations (the operation's histogram in histograms.hlog): p50 needs 2 ops
# (about 6 in 3 s), mean 1, within 2
printf '[qos.infra.copy]\nthroughput = 1\ncommand.p50 = 5s\ncommand.mean = 5s\ncommand.within = 5s@50\n' >>"$T/tile.ini"
# Whole-second stages, as the demo's: steady state starts 0.2 s after a level is
# planned and the poller ticks on the idle start's whole seconds, so the first
# steady sample comes about 0.8 s after the start; the edges rule (500 ms) passes
# on the warm-up sample 0.2 s before it, and at the end on the ramp-down's (every
# stage's samples are stored, schema 13). 3 s of active idle: 2 or more samples for its sample rate
# (fewer give no interval to judge, which fails the rule).
STAGES=(--tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 1s --idle 3s)
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --meter "wt310://127.0.0.1:$P_GOOD" --db "$DB" --quiet \
    >"$T/run1.log" 2>&1 || fail "run 1 exited $?: $(cat "$T/run1.log")"
# the NaN run's levels are invalid, so the run itself may exit 1 (validation); its rows are stored either way
rc=0
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --meter "wt310://127.0.0.1:$P_NAN" --db "$DB" --quiet \
    >"$T/run2.log" 2>&1 || rc=$?
[ "$rc" -le 1 ] || fail "run 2 exited $rc: $(cat "$T/run2.log")"
# run 3: power estimated from CPU utilization, never compliant
"$TB" run --config "$T/tile.ini" "${STAGES[@]}" --meter estimate: --db "$DB" --quiet >"$T/run3.log" 2>&1 ||
    fail "run 3 exited $?: $(cat "$T/run3.log")"
"$TB" sut down --dir "$T/sut" >/dev/null 2>&1 || fail "sut down failed"
stop_sims

q() { sqlite3 -batch -noheader "$DB" "$1"; }

# csv_table RUN TABLE WHERE: data/TABLE.csv by docs/bundle.md: the table's
# columns in order without BLOBs, a header even without rows, NULL empty,
# REAL to 17 digits (printf %!.17g), RFC 4180 quoting.
csv_table() {
    local run=$1 table=$2 where=$3 cols sel
    cols=$(q "SELECT group_concat('\"' || name || '\"', ',') FROM pragma_table_info('$table') WHERE type != 'BLOB'")
    sel=$(q "SELECT group_concat(CASE WHEN type = 'REAL' THEN 'CASE WHEN typeof(\"' || name || '\") = ''real'' THEN printf(''%!.17g'', \"' || name || '\") ELSE \"' || name || '\" END' ELSE '\"' || name || '\"' END, ',') FROM pragma_table_info('$table') WHERE type != 'BLOB'")
    q "SELECT group_concat(name, ',') FROM pragma_table_info('$table') WHERE type != 'BLOB'"
    sqlite3 -batch -noheader -csv "$DB" "SELECT $sel FROM \"$table\" WHERE $where ORDER BY rowid"
}

# make_bundle RUN OUT: the bundle of RUN, by `tilebench publish`.
make_bundle() {
    "$TB" publish "$1" --db "$DB" -o "$2" >"$T/publish.log" 2>&1 || fail "publish $1: $(cat "$T/publish.log")"
}

# bundle_by_hand RUN OUT: the bundle of RUN written by this test alone.
bundle_by_hand() {
    local run=$1 out=$2 uuid dir lv
    uuid=$(q "SELECT uuid FROM runs WHERE id = $run")
    dir="$T/mk/tilebench-run-$uuid"
    rm -rf "$T/mk" && mkdir -p "$dir/data"
    # the tile file byte for byte (sqlite3's output would add a line end)
    q "SELECT writefile('$dir/tiles.ini', config_text) FROM runs WHERE id = $run" >/dev/null
    for f in json csv html; do "$TB" report "$run" --db "$DB" --format $f -o "$dir/report.$f" || fail "report $f"; done
    "$TB" report "$run" --db "$DB" --format hlog -o "$dir/histograms.hlog" || fail "report hlog"
    lv="level_id IN (SELECT id FROM levels WHERE run_id = $run)"
    csv_table "$run" runs "id = $run" >"$dir/data/runs.csv"
    for t in meters hosts levels power_samples telemetry_samples events; do
        csv_table "$run" $t "run_id = $run" >"$dir/data/$t.csv"
    done
    for t in level_hosts level_agents workloads qos infra; do csv_table "$run" $t "$lv" >"$dir/data/$t.csv"; done
    csv_table "$run" ops "workload_id IN (SELECT id FROM workloads WHERE $lv)" >"$dir/data/ops.csv"
    csv_table "$run" calibrations "0" >"$dir/data/calibrations.csv"
    write_manifest "$dir" "$run" "$uuid"
    (cd "$T/mk" && tar czf "$out" "tilebench-run-$uuid") || fail "tar"
}

# write_manifest DIR RUN UUID: manifest.json describing the run as stored (docs/bundle.md) and
# listing every other file, sorted.
write_manifest() {
    local dir=$1 run=$2 uuid=$3 desc meters
    desc=$(q "SELECT json_object('run_uuid', uuid, 'label', label, 'status', status, 'started_at', started_at,
        'finished_at', finished_at, 'published_at', '2026-01-01T00:00:00Z', 'tile_file', 'tiles.ini',
        'tile_name', tile_name, 'tile_spec', tile_spec, 'host', json(host_json)) FROM runs WHERE id = $run")
    meters=$(q "SELECT json_group_array(json_object('idx', idx, 'uri', uri, 'model', model, 'idn', idn,
        'serial', serial, 'firmware', firmware, 'driver', driver, 'host', host,
        'estimated', json(CASE WHEN estimated THEN 'true' ELSE 'false' END)))
        FROM (SELECT * FROM meters WHERE run_id = $run ORDER BY idx)")
    (cd "$dir" && find . -type f ! -name manifest.json | sed 's|^\./||' | LC_ALL=C sort | while read -r p; do
        jq -n --arg p "$p" --arg h "$(sha256sum "$p" | cut -d' ' -f1)" --argjson b "$(stat -c %s "$p")" \
            '{path: $p, sha256: $h, bytes: $b}'
    done) | jq -s --arg u "$uuid" --argjson id "$run" --argjson d "$desc" --argjson m "$meters" \
        '{format: "tilebench-bundle", format_version: 1, tilebench_version: "test", source_revision: "unknown",
        run_id: $id} + $d + {meters: $m, files: .}' >"$dir/manifest.json"
}

# check_rc NAME EXPECTED ARGS...: runs check, keeps its output in $T/NAME.out.
check_rc() {
    local name=$1 want=$2 rc=0
    shift 2
    "$TB" check "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [ "$rc" -eq "$want" ] || fail "check $name: exit $rc, expected $want: $(cat "$T/$name.out" "$T/$name.err")"
    echo "ok: check $name exits $rc"
}
has() { grep -q -- "$2" "$T/$1.out" || fail "check $1: no line '$2': $(cat "$T/$1.out" "$T/$1.err")"; }
hasnt() { ! grep -q -- "$2" "$T/$1.out" || fail "check $1: unexpected '$2': $(grep -- "$2" "$T/$1.out")"; }

make_bundle 1 "$T/good.tar.gz"
make_bundle 2 "$T/nan.tar.gz"
bundle_by_hand 1 "$T/hand.tar.gz"

# ---- a clean run: compliant; each kind of check ran ----
check_rc good 0 "$T/good.tar.gz"
for l in "^PASS manifest files" "^PASS hashes" "^PASS manifest run" "^PASS figures level" "^PASS figures run" \
    "^PASS qos level" "^PASS rule bad samples" "^PASS rule edges level [0-9]* (tiles 1): farthest edge" \
    "^PASS rule sample rate active idle" "^PASS rule load generator CPU"; do has good "$l"; done
expect "ramp-up, warm-up and ramp-down samples stored" \
    "$(q "SELECT count(DISTINCT stage) FROM power_samples WHERE run_id = 1 AND level_id IS NULL")" -eq 4
# the CPU rule shows the event it rests on whole, not cut in the middle
has good "^PASS rule load generator CPU: at most [0-9]*% of [0-9]* threads (event [0-9]*: .*poller lateness.* ms) "
hasnt good "^FAIL"
# the demo preset claims no compliance: the last line says what exit 0 established
has good "checks, 0 failed: figures consistent; compliance not claimed (preset demo): 4 compliance rules not applied$"
hasnt good ": compliant$"
has good "^PASS rule calibration: preset demo: not required"
has good "^PASS latency: [1-9][0-9]* op figures agree with histograms.hlog"
has good "^PASS report.json run: [1-9][0-9]* fields agree"
has good "^PASS report.json levels: 1 levels: QoS verdict, rules not judged, max and mean uncertainty agree"
"$TB" check "$T/good.tar.gz" --json >"$T/good.json" || fail "check --json exited $?"
expect "--json: one entry per line" "$(jq length "$T/good.json")" -eq "$(grep -c '^PASS' "$T/good.out")"
expect "--json: all pass" "$(jq '[.[] | select(.pass | not)] | length' "$T/good.json")" -eq 0

# the same run's bundle as this test writes it: check reads the format, not one writer's habits
check_rc hand 0 "$T/hand.tar.gz"
hasnt hand "^FAIL"

# ---- half the samples NaN: the bad-samples rule fails, the figures still agree ----
check_rc nan 1 "$T/nan.tar.gz"
has nan "^FAIL rule bad samples level [0-9]* (tiles 1): [0-9]* bad of"
hasnt nan "^FAIL figure"
hasnt nan "^FAIL hash"

# ---- estimated power: never compliant, whatever else passes ----
make_bundle 3 "$T/est.tar.gz"
check_rc est 1 "$T/est.tar.gz"
has est "^FAIL rule measured power meter 0: ESTIMATED"
has good "^PASS rule measured power meter 0: measured"

# ---- one sample edited: the hash names the file ----
mkdir "$T/edit" && tar xzf "$T/good.tar.gz" -C "$T/edit" || fail "untar"
B=$(ls "$T/edit")
"$PY" - "$T/edit/$B/data/power_samples.csv" <<'PYEOF' || fail "edit a sample"
import csv, sys
path = sys.argv[1]
rows = list(csv.reader(open(path, newline="")))
head = rows[0]
li, wi = head.index("level_id"), head.index("watts")
for r in rows[1:]:
    if r[li] != "":
        r[wi] = repr(float(r[wi]) + 25.0)
        break
else:
    sys.exit("no steady sample to edit")
with open(path, "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
PYEOF
(cd "$T/edit" && tar czf "$T/edited.tar.gz" "$B") || fail "tar"
check_rc edited 1 "$T/edited.tar.gz"
has edited "^FAIL hash data/power_samples.csv: sha256 "

# ---- the manifest's hash rewritten to match: the recomputed figure names the level ----
jq --arg h "$(sha256sum "$T/edit/$B/data/power_samples.csv" | cut -d' ' -f1)" \
    --argjson b "$(stat -c %s "$T/edit/$B/data/power_samples.csv")" \
    '(.files[] | select(.path == "data/power_samples.csv")) |= (.sha256 = $h | .bytes = $b)' \
    "$T/edit/$B/manifest.json" >"$T/m.json" && mv "$T/m.json" "$T/edit/$B/manifest.json" || fail "jq"
(cd "$T/edit" && tar czf "$T/rehashed.tar.gz" "$B") || fail "tar"
check_rc rehashed 1 "$T/rehashed.tar.gz"
hasnt rehashed "^FAIL hash"
has rehashed "^PASS hashes"
has rehashed "^FAIL figure level [0-9]* (tiles 1) avg_watts: published [0-9.]*, recomputed [0-9.]*"
has rehashed "^FAIL figure level [0-9]* (tiles 1) ppkw: published"

# rehash FILE: the manifest's sha256 and bytes of data/FILE made to match it
rehash() {
    jq --arg p "data/$1" --arg h "$(sha256sum "$T/edit/$B/data/$1" | cut -d' ' -f1)" \
        --argjson b "$(stat -c %s "$T/edit/$B/data/$1")" \
        '(.files[] | select(.path == $p)) |= (.sha256 = $h | .bytes = $b)' \
        "$T/edit/$B/manifest.json" >"$T/m.json" && mv "$T/m.json" "$T/edit/$B/manifest.json" || fail "jq"
}
# ---- a crafted value (a repeat of 2^63 - 1 once hung check): unreadable, at once ----
cp "$T/edit/$B/data/levels.csv" "$T/levels.orig"
python3 - "$T/edit/$B/data/levels.csv" <<'PYEOF' || fail "edit levels.csv"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
rows[1][rows[0].index("repeat")] = "9223372036854775807"
csv.writer(open(sys.argv[1], "w", newline=""), lineterminator="\n").writerows(rows)
PYEOF
rehash levels.csv
(cd "$T/edit" && tar czf "$T/repeat.tar.gz" "$B") || fail "tar"
check_rc repeat 2 "$T/repeat.tar.gz"
grep -q "levels.csv row 1: repeat 9223372036854775807.*out of range" "$T/repeat.err" ||
    fail "crafted repeat: no reason: $(cat "$T/repeat.err")"
mv "$T/levels.orig" "$T/edit/$B/data/levels.csv" && rehash levels.csv
# ---- a trillion tiles (once a loop of a trillion turns): unreadable at once, nothing on stdout ----
cp "$T/edit/$B/data/levels.csv" "$T/levels.orig"
python3 - "$T/edit/$B/data/levels.csv" <<'PYEOF' || fail "edit levels.csv"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
rows[1][rows[0].index("tiles")] = "1000000000000"
csv.writer(open(sys.argv[1], "w", newline=""), lineterminator="\n").writerows(rows)
PYEOF
rehash levels.csv
(cd "$T/edit" && tar czf "$T/tiles.tar.gz" "$B") || fail "tar"
SECONDS=0
check_rc tiles 2 "$T/tiles.tar.gz"
expect "a trillion tiles refused within seconds:" "$SECONDS" -le 10
grep -q "levels.csv row 1: tiles 1000000000000 is out of range (1..100000)" "$T/tiles.err" ||
    fail "crafted tiles: no reason: $(cat "$T/tiles.err")"
[ ! -s "$T/tiles.out" ] || fail "exit 2 printed to stdout: $(cat "$T/tiles.out")"
mv "$T/levels.orig" "$T/edit/$B/data/levels.csv" && rehash levels.csv
# ---- a file hidden after the gzip stream (a second member, tar -xzi extracts it) or trailing bytes ----
mkdir -p "$T/hide/$B" && echo secret >"$T/hide/$B/hidden.txt"
cp "$T/good.tar.gz" "$T/base.tar.gz"
(cd "$T/hide" && tar czf "$T/hidden.gz" "$B/hidden.txt") || fail "tar"
cat "$T/base.tar.gz" "$T/hidden.gz" >"$T/member.tar.gz"
mkdir "$T/unpack" && tar -xzif "$T/member.tar.gz" -C "$T/unpack" && [ -e "$T/unpack/$B/hidden.txt" ] ||
    fail "tar -xzi does not extract the second member: the test proves nothing"
check_rc member 2 "$T/member.tar.gz"
grep -q "bytes after the gzip stream's end" "$T/member.err" || fail "second member: no reason: $(cat "$T/member.err")"
{ cat "$T/base.tar.gz" && printf 'trailing'; } >"$T/trail.tar.gz"
check_rc trail 2 "$T/trail.tar.gz"
grep -q "8 bytes after the gzip stream's end" "$T/trail.err" || fail "trailing bytes: no reason: $(cat "$T/trail.err")"
check_rc base 0 "$T/base.tar.gz"
# ---- a file name with a newline and an escape code cannot forge a line ----
printf 'x' >"$T/edit/$B/x"$'\n'"PASS forged"$'\e'"[1A"
(cd "$T/edit" && tar czf "$T/forged.tar.gz" "$B") || fail "tar"
check_rc forged 1 "$T/forged.tar.gz"
hasnt forged "^PASS forged"
grep -q $'\e' "$T/forged.out" && fail "forged: an escape code reached the output"
rm -f "$T/edit/$B/x"$'\n'*

# ---- the samples next to a steady edge deleted: the edges rule names the level ----
# every sample within 600 ms of the steady start (1 Hz: one or two, of warm-up or
# steady state), so the nearest left is more than 500 ms away
mkdir "$T/edge" && tar xzf "$T/good.tar.gz" -C "$T/edge" || fail "untar"
EB=$(ls "$T/edge")
T0=$(q "SELECT steady_start_mono_us FROM levels WHERE run_id = 1")
LID=$(q "SELECT id FROM levels WHERE run_id = 1")
"$PY" - "$T/edge/$EB/data/power_samples.csv" "$T0" <<'PYEOF' || fail "delete the samples at the edge"
import csv, sys
path, t0 = sys.argv[1], int(sys.argv[2])
rows = list(csv.reader(open(path, newline="")))
ti = rows[0].index("mono_us")
keep = [rows[0]] + [r for r in rows[1:] if abs(int(r[ti]) - t0) > 600000]
if len(rows) - len(keep) < 1:
    sys.exit("no sample within 600 ms of the steady start")
print("deleted %d samples next to the steady start" % (len(rows) - len(keep)))
csv.writer(open(path, "w", newline=""), lineterminator="\n").writerows(keep)
PYEOF
jq --arg h "$(sha256sum "$T/edge/$EB/data/power_samples.csv" | cut -d' ' -f1)" \
    --argjson b "$(stat -c %s "$T/edge/$EB/data/power_samples.csv")" \
    '(.files[] | select(.path == "data/power_samples.csv")) |= (.sha256 = $h | .bytes = $b)' \
    "$T/edge/$EB/manifest.json" >"$T/m.json" && mv "$T/m.json" "$T/edge/$EB/manifest.json" || fail "jq"
(cd "$T/edge" && tar czf "$T/edge.tar.gz" "$EB") || fail "tar"
check_rc edge 1 "$T/edge.tar.gz"
has edge "^PASS hashes"
has edge "^FAIL rule edges level $LID (tiles 1): farthest edge: the start, [0-9]* ms from meter 0's nearest sample"

# ---- forged: one file of a fresh copy of the good bundle edited, its hash rewritten ----
mkdir "$T/forge" && tar xzf "$T/good.tar.gz" -C "$T/forge" || fail "untar"
# forge NAME FILE FILTER: FILE (of the bundle's folder) made by jq FILTER (or, with FILTER '-', by
# the commands on stdin, run in the folder), the manifest's hash rewritten; checked into $T/NAME.out
# (exit 1), the file restored
forge() {
    local name=$1 file=$2 filter=$3 d="$T/forge/$B"
    cp "$d/$file" "$T/forge.orig" && cp "$d/manifest.json" "$T/manifest.orig"
    if [ "$filter" = - ]; then (cd "$d" && bash -e) || fail "forge $name"; else
        jq "$filter" "$T/forge.orig" >"$d/$file" || fail "jq $name"
    fi
    [ "$file" = manifest.json ] || jq --arg p "$file" --arg h "$(sha256sum "$d/$file" | cut -d' ' -f1)" \
        --argjson b "$(stat -c %s "$d/$file")" '(.files[] | select(.path == $p)) |= (.sha256 = $h | .bytes = $b)' \
        "$T/manifest.orig" >"$d/manifest.json" || fail "jq rehash $name"
    (cd "$T/forge" && tar czf "$T/$name.tar.gz" "$B") || fail "tar"
    check_rc "$name" 1 "$T/$name.tar.gz"
    hasnt "$name" "^FAIL hash"
    cp "$T/forge.orig" "$d/$file" && cp "$T/manifest.orig" "$d/manifest.json"
}
QOS='.run.levels[0].qos[]'
# the verdicts check judges again from ops.csv, infra.csv and the tile file
has good "^PASS qos level [0-9]* (tiles 1): [0-9]* verdicts agree"
forge mixv report.json "($QOS | select(.rule == \"kv.* mix deviation <= 20 pp\") | .verdict) = \"fail\""
has mixv "^FAIL qos level [0-9]* (tiles 1) kv.\* mix deviation <= 20 pp: published fail (observed [0-9.e-]*), recomputed pass"
forge mixo report.json "($QOS | select(.rule == \"kv.* mix deviation <= 20 pp\") | .observed) |= . + 0.01"
has mixo "^FAIL qos level [0-9]* (tiles 1) kv.\* mix deviation <= 20 pp: .*(observed within 1e-06 pp)"
forge thrv report.json "($QOS | select(.rule | startswith(\"kv.* throughput\")) | .observed) |= . * 1.001"
has thrv "^FAIL qos level [0-9]* (tiles 1) kv.\* throughput >= 1% of reference: published pass"
forge infrae report.json "($QOS | select(.rule | startswith(\"infra.copy.* error rate\")) | .verdict) = \"fail\""
has infrae "^FAIL qos level [0-9]* (tiles 1) infra.copy.\\* error rate < 1%: published fail"
forge infrat report.json "($QOS | select(.rule | startswith(\"infra.copy.* throughput\")) | .verdict) = \"fail\""
has infrat "^FAIL qos level [0-9]* (tiles 1) infra.copy.\\* throughput >= 1% of reference: published fail"
# an operation's latency rules, judged again from its durations (tag L<id>/infra/copy/command)
grep -q "^Tag=L[0-9]*/infra/copy/command," "$T/forge/$B/histograms.hlog" ||
    fail "histograms.hlog: no histogram of operation copy: $(grep -c Tag= "$T/forge/$B/histograms.hlog") tags"
expect "infra.copy latency rules judged" "$(jq '[.run.levels[0].qos[] | select(.rule | startswith("infra.copy.command"))
    | select(.verdict == "pass")] | length' "$T/forge/$B/report.json")" -eq 3
forge infrap report.json "($QOS | select(.rule | startswith(\"infra.copy.command p50\")) | .verdict) = \"fail\""
has infrap "^FAIL qos level [0-9]* (tiles 1) infra.copy.command p50 <= [0-9.]* ms: published fail (observed [0-9.e-]*), recomputed pass"
forge infram report.json "($QOS | select(.rule | startswith(\"infra.copy.command mean\")) | .observed) |= . * 1.5 + 1"
has infram "^FAIL qos level [0-9]* (tiles 1) infra.copy.command mean <= [0-9.]* ms: published pass"
forge infraw report.json "($QOS | select(.rule | startswith(\"infra.copy.command within\")) | .verdict) = \"fail\""
has infraw "^FAIL qos level [0-9]* (tiles 1) infra.copy.command within [0-9.]* ms >= 50%: published fail"
# a raised least sample would turn a failed rule into one not judged: qos.csv's min_ops is worked out too
cat >"$T/raise_min.py" <<'PYEOF'
import csv
rows = list(csv.reader(open("data/qos.csv", newline="")))
h = rows[0]
for r in rows[1:]:
    if r[h.index("rule")] == "kv.GET p99 <= 25 ms":
        r[h.index("min_ops")] = "999999"
csv.writer(open("data/qos.csv", "w", newline=""), lineterminator="\n").writerows(rows)
PYEOF
forge minops data/qos.csv - <<<"python3 $T/raise_min.py"
has minops "^FAIL qos level [0-9]* (tiles 1) kv.GET p99 <= 25 ms min_ops: qos.csv says 999999, the rule needs 100"

# telemetry: each level's figures (and active idle's) recomputed from telemetry_samples.csv
has good "^PASS figures telemetry: [1-9][0-9]* figures of 1 levels and active idle agree"
forge telu report.json '.run.levels[0].telemetry.cpu_util_pct |= . + 0.5'
has telu "^FAIL figure telemetry level [0-9]* (tiles 1) cpu_util_pct: published [0-9.e-]*, recomputed"
cat >"$T/bump_telem.py" <<'PYEOF'
import csv
rows = list(csv.reader(open("data/telemetry_samples.csv", newline="")))
h = rows[0]
for r in rows[1:]:
    if r[h.index("level_id")] != "" and r[h.index("sys_pct")] != "":
        r[h.index("sys_pct")] = repr(float(r[h.index("sys_pct")]) + 7.0)
        break
else:
    raise SystemExit("no steady telemetry sample with sys_pct")
csv.writer(open("data/telemetry_samples.csv", "w", newline=""), lineterminator="\n").writerows(rows)
PYEOF
forge telsamp data/telemetry_samples.csv - <<<"python3 $T/bump_telem.py"
has telsamp "^FAIL figure telemetry level [0-9]* (tiles 1) sys_pct: published"
forge telidle report.json '.run.active_idle_telemetry.samples |= . + 1'
has telidle "^FAIL figure telemetry: .*active idle: published [0-9]*, telemetry_samples.csv"

# the manifest's descriptive fields against the data
forge uuid manifest.json '.run_uuid = "00000000-0000-4000-8000-000000000000"'
has uuid "^FAIL manifest run_uuid: manifest says '00000000-0000-4000-8000-000000000000', runs.csv uuid"
forge estm manifest.json '.meters[0].estimated = true'
has estm "^FAIL manifest meters\[0\].estimated: manifest says true, meters.csv estimated 0"
forge idn manifest.json '.meters[0].model = "WT3000"'
has idn "^FAIL manifest meters\[0\].model: manifest says 'WT3000'"
forge tilef tiles.ini - <<<'sed -i "s/^reference = .*/reference = 1/" tiles.ini'
has tilef "^FAIL manifest tile_file: tiles.ini ([0-9]* bytes) differs from config_text"
forge vers report.json '.run.tilebench_version = "9.9.9"'
has vers "^FAIL manifest tilebench_version: report.json says '9.9.9', runs.csv tilebench_version"

# report.csv and report.html against report.json
has good "^PASS report.csv: [0-9]* rows, [0-9]* figures agree"
has good "^PASS report.html: 1 levels: steady time, score, mean power and PPKW agree"
cat >"$T/bump_csv.py" <<'PYEOF'
import csv
rows = list(csv.reader(open("report.csv", newline="")))
i = rows[0].index("score")
rows[1][i] = repr(float(rows[1][i]) * 1.01)
csv.writer(open("report.csv", "w", newline=""), lineterminator="\r\n").writerows(rows)
PYEOF
forge csvs report.csv - <<<"python3 $T/bump_csv.py"
has csvs "^FAIL report.csv row 1 (level 1: tiles 1, phase 1) score: csv [0-9.]*, report.json [0-9.]*"
cat >"$T/bump_html.py" <<'PYEOF'
import re
s = open("report.html").read()
i = s.index('<tr class="level')
j = s.index("</tr>", i)
cells = s[i:j].split('<td class="n">')
cells[4] = re.sub(r"^[0-9.]+", "9.999", cells[4])  # tiles, phase, steady (s), score
open("report.html", "w").write(s[:i] + '<td class="n">'.join(cells) + s[j:])
PYEOF
forge htmls report.html - <<<"python3 $T/bump_html.py"
has htmls "^FAIL report.html level 1 (tiles 1, phase 1) score: page shows 9.999, report.json [0-9.]*"

# the headline cards of report.html against report.json
has good "^PASS report.html cards: peak score, peak PPKW, overall efficiency and active idle agree"
cat >"$T/bump_card.py" <<'PYEOF'
import re, sys
s = open("report.html").read()
key = '<div class="k">%s</div><div class="v">' % sys.argv[1]
i = s.index(key) + len(key)
j = s.index("</div>", i)
v = s[i:j]
dec = len(v.split(".")[1]) if "." in v else 0
open("report.html", "w").write(s[:i] + "%.*f" % (dec, float(v) * 10) + s[j:])
PYEOF
for card in "Peak score" "Peak PPKW" "Overall efficiency" "Active idle"; do
    forge card report.html - <<<"python3 $T/bump_card.py '$card'"
    has card "^FAIL report.html card $card: page shows [0-9.]*, report.json [0-9.]*"
done

# each op's latency figures (and the uncorrected ones) against histograms.hlog
OP='.run.levels[0].workloads[0].operations[0]'
for f in p50_ms p90_ms p95_ms p99_ms p999_ms max_ms mean_ms; do
    forge "lat_$f" report.json "$OP.$f /= 10"
    has "lat_$f" "^FAIL latency level [0-9]* (tiles 1) tile 1 [a-z]*\.[A-Za-z]* $f: published"
    forge "unc_$f" report.json "$OP.uncorrected.$f /= 10"
    has "unc_$f" "^FAIL latency level [0-9]* (tiles 1) tile 1 [a-z]*\.[A-Za-z]* uncorrected $f: published"
done
forge lat_count report.json "$OP.count |= (. / 10 | floor)"
has lat_count "^FAIL latency level [0-9]* (tiles 1) tile 1 [a-z]*\.[A-Za-z]* count: published [0-9]*, histogram"

# report.json's meters and preset against meters.csv and runs.csv
forge rmodel report.json '.run.meters[0].model = "WT3000"'
has rmodel "^FAIL report.json meters\[0\].model: report.json says 'WT3000', meters.csv model"
forge ridn report.json '.run.meters[0].idn = "forged"'
has ridn "^FAIL report.json meters\[0\].idn: report.json says 'forged'"
forge rest report.json '.run.meters[0].estimated = true'
has rest "^FAIL report.json meters\[0\].estimated: report.json says true, meters.csv estimated 0"
forge ruri report.json '.run.meters[0].uri = "wt310://10.9.9.9"'
has ruri "^FAIL report.json meters\[0\].uri: report.json says 'wt310://10.9.9.9', meters.csv uri without its password"
forge restp report.json '.run.estimated_power = true'
has restp "^FAIL report.json estimated_power: report.json says true, meters.csv has no estimated meter"
forge rpreset report.json '.run.settings.preset = "compliant"'
has rpreset "^FAIL report.json settings.preset: report.json says 'compliant', runs.csv settings_json preset 'demo'"
# the compliant preset claimed in runs.csv: the compliance rules apply, the meter states no calibration
cat >"$T/claim.py" <<'PYEOF'
import csv, json
rows = list(csv.reader(open("data/runs.csv", newline="")))
i = rows[0].index("settings_json")
s = json.loads(rows[1][i])
s["preset"] = "compliant"
rows[1][i] = json.dumps(s)
csv.writer(open("data/runs.csv", "w", newline=""), lineterminator="\n").writerows(rows)
PYEOF
forge claim data/runs.csv - <<<"python3 $T/claim.py"
has claim "^FAIL rule calibration meter 0: no calibration date stated"
has claim "^FAIL rule stages: preset compliant, but"
has claim "^FAIL report.json settings.preset: report.json says 'demo', runs.csv settings_json preset 'compliant'"
has claim "checks, [0-9]* failed: NOT compliant$"
# a level's QoS verdict and uncertainty against qos.csv and the samples
LV='.run.levels[0]'
# the clean run leaves rules not judged (its steady state is 3 s): its verdict is incomplete
forge rverdict report.json "$LV.qos_verdict = \"pass\""
has rverdict "^FAIL report.json level [0-9]* (tiles 1) qos_verdict: published pass, qos.csv gives incomplete"
forge rqpass report.json "$LV.qos_pass = false"
has rqpass "^FAIL report.json level [0-9]* (tiles 1) qos_pass: published false"
forge rnj report.json "$LV.qos_not_judged = 2"
has rnj "^FAIL report.json level [0-9]* (tiles 1) qos_not_judged: published 2, qos.csv gives [1-9][0-9]*"
forge rmaxu report.json "$LV.max_uncertainty_pct /= 10"
has rmaxu "^FAIL report.json level [0-9]* (tiles 1) max_uncertainty_pct: published"
forge rmeanu report.json "$LV.mean_uncertainty_pct /= 10"
has rmeanu "^FAIL report.json level [0-9]* (tiles 1) mean_uncertainty_pct: published"

# ---- a bundle must be gzip-compressed: a bare tar is refused ----
(cd "$T/forge" && tar cf "$T/plain.tar" "$B") || fail "tar"
check_rc plain 2 "$T/plain.tar"
grep -q "not a gzip-compressed tar (no gzip header" "$T/plain.err" || fail "plain tar: no reason: $(cat "$T/plain.err")"

# ---- a crafted table far larger than the memory check may take: exit 2, not an OOM ----
python3 - "$T/forge/$B/data/power_samples.csv" <<'PYEOF' || fail "huge table"
import sys
with open(sys.argv[1]) as f:
    head = f.readline()
n = head.count(",") + 1
row = ",".join(["1"] * n) + "\n"
# 1 million rows: about 26 MB of text, well inside 64 MiB as files (whose
# buffers may round up to a power of two), far beyond it as parsed cells
with open(sys.argv[1], "w") as f:
    f.write(head)
    for _ in range(100):
        f.write(row * 10000)
PYEOF
(cd "$T/forge" && tar czf "$T/huge.tar.gz" "$B") || fail "tar"
rc=0
TILEBENCH_CHECK_MAX_MIB=64 timeout 60 "$TB" check "$T/huge.tar.gz" >"$T/huge.out" 2>"$T/huge.err" || rc=$?
expect "huge table: exit status" "$rc" -eq 2
grep -q "power_samples.csv line [0-9]*: the tables need more than 64 MiB in memory" "$T/huge.err" ||
    fail "huge table: no reason: $(cat "$T/huge.err")"

# ---- unreadable: exit 2 with a reason ----
head -c 3000 /dev/urandom >"$T/garbage.tar.gz"
check_rc garbage 2 "$T/garbage.tar.gz"
grep -q "not a" "$T/garbage.err" || fail "garbage: no reason: $(cat "$T/garbage.err")"
tar czf "$T/empty.tar.gz" -T /dev/null || fail "tar"
check_rc empty 2 "$T/empty.tar.gz"
grep -q "empty archive" "$T/empty.err" || fail "empty: no reason: $(cat "$T/empty.err")"
rm "$T/edit/$B/manifest.json"
(cd "$T/edit" && tar czf "$T/nomanifest.tar.gz" "$B") || fail "tar"
check_rc nomanifest 2 "$T/nomanifest.tar.gz"
grep -q "no $B/manifest.json" "$T/nomanifest.err" || fail "no manifest: no reason: $(cat "$T/nomanifest.err")"
check_rc missing 2 "$T/no-such-bundle.tar.gz"

# ---- RUN: published to a temporary folder, then checked ----
mkdir "$T/tmp"
TMPDIR="$T/tmp" check_rc run1 0 1 --db "$DB"
TMPDIR="$T/tmp" check_rc run2 1 2 --db "$DB"
has run2 "^FAIL rule bad samples"
TMPDIR="$T/tmp" check_rc latest 1 latest --db "$DB"
has latest "^FAIL rule measured power"
TMPDIR="$T/tmp" check_rc run9 2 9 --db "$DB"
[ -s "$T/run9.err" ] || fail "check 9: no reason given"
expect "temporary folders left by check RUN" "$(find "$T/tmp" -mindepth 1 | wc -l)" -eq 0
echo "PASS test_check"
