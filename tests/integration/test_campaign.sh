#!/usr/bin/env bash
# test_campaign.sh: `tilebench campaign` against the real embedded SUT, with
# short stages (1 tile, 3 s steady state per run).
#  1. Two configurations whose apply/revert commands append to a marker file,
#     and record how many runs the database holds at that moment: two runs,
#     one campaign row, both runs tagged with the campaign and their
#     configuration, apply -> run -> revert in order, the commands' output and
#     exit status stored, and a comparison (stdout, HTML, `compare --format
#     json`) with both configurations.
#  2. An apply command that fails: exit 3 with a message naming the
#     configuration, the command and its exit status; the baseline's run stays
#     in the database and its revert ran; the campaign is marked aborted.
#  3. SIGINT during a run: the run and the campaign end interrupted (exit 3),
#     and the configuration is still reverted.
#  4. Campaign file errors name file:line and the key, and start nothing.
#  5. A bad per-configuration key (or tile file, meter) exits 2 naming the
#     section and key, before any apply.
#  6. Configurations with their own tile files and keys: each run stores the
#     tile file text it ran (the two differ as the files do), its keys
#     (threads, label, meter) take effect; an apply that rewrites its tile
#     file in place is warned (console, the run's events, the comparison), the
#     run uses the new text, and a revert that restores it is warned too.
source "$(dirname "$0")/lib.sh"

DB="$T/results.db"
SWEEP="[sweep]
tiles = 1
ramp_up = 1s
warm_up = 1s
steady = 3s
ramp_down = 1s
idle = 0"

# what apply and revert commands record: the complete runs in the database at that moment
cat >"$T/runs_now.sh" <<EOF
sqlite3 "$DB" "SELECT count(*) FROM runs WHERE status = 'complete'" 2>/dev/null || echo 0
EOF

# ---- 1. two configurations ------------------------------------------------------
cat >"$T/governors.ini" <<EOF
[campaign]
name = it governors
baseline = base

$SWEEP

[config.base]
apply = echo "apply base \$(sh $T/runs_now.sh)" >>"$T/markers"; echo hello from apply base
revert = echo "revert base \$(sh $T/runs_now.sh)" >>"$T/markers"

[config.eco]
apply = echo "apply eco \$(sh $T/runs_now.sh)" >>"$T/markers"; X_TOKEN=T0kS3c sh -c 'echo "token is \$X_TOKEN"'
revert = echo "revert eco \$(sh $T/runs_now.sh)" >>"$T/markers"
EOF

rc=0
"$TILEBENCH" campaign --config "$T/governors.ini" --db "$DB" --report "$T/campaign.html" --quiet \
    >"$T/campaign1.log" 2>&1 || rc=$?
cat "$T/campaign1.log"
expect "campaign exit status" "$rc" -eq 0
# apply sees the runs finished before it, revert sees its own run finished
expect "markers: apply/revert order around the runs" "$(tr '\n' '|' <"$T/markers")" = \
    "apply base 0|revert base 1|apply eco 1|revert eco 2|"
expect "campaigns" "$(sqlite3 "$DB" "SELECT count(*) FROM campaigns")" -eq 1
CID=$(sqlite3 "$DB" "SELECT id FROM campaigns")
expect "campaign row" "$(sqlite3 "$DB" "SELECT name || '/' || baseline || '/' || status FROM campaigns")" = \
    "it governors/base/complete"
expect "runs in the campaign" "$(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE campaign_id = $CID")" -eq 2
expect "runs tagged with their configuration, labelled with it" \
    "$(sqlite3 "$DB" "SELECT group_concat(campaign_config || '=' || label || '=' || status, ',') FROM
        (SELECT * FROM runs WHERE campaign_id = $CID ORDER BY id)")" = "base=base=complete,eco=eco=complete"
expect "steps stored in order, all exit 0" \
    "$(sqlite3 "$DB" "SELECT group_concat(step || ' ' || config || ' ' || exit_status, ',') FROM
        (SELECT * FROM campaign_steps WHERE campaign_id = $CID ORDER BY id)")" = \
    "apply base 0,revert base 0,apply eco 0,revert eco 0"
expect "apply output stored" \
    "$(sqlite3 "$DB" "SELECT output FROM campaign_steps WHERE campaign_id = $CID AND step = 'apply' AND config = 'base'")" \
    = "hello from apply base"
grep -q "\[apply base\] hello from apply base" "$T/campaign1.log" || fail "apply output not echoed"
# a secret the command assigns (X_TOKEN=...) and its output prints bare: hidden in the echo and the store
expect "apply output: the command's own secret hidden" \
    "$(sqlite3 "$DB" "SELECT output FROM campaign_steps WHERE campaign_id = $CID AND step = 'apply' AND config = 'eco'")" \
    = "token is ***"
grep -q "\[apply eco\] token is \*\*\*" "$T/campaign1.log" || fail "apply eco's output not echoed redacted"
! grep -q T0kS3c "$T/campaign1.log" || fail "the apply's secret reached the console"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM campaign_steps WHERE output LIKE '%T0kS3c%' OR command LIKE '%T0kS3c%'")" = 0 ] ||
    fail "the apply's secret reached the store"
BASE_RUN=$(sqlite3 "$DB" "SELECT id FROM runs WHERE campaign_id = $CID AND campaign_config = 'base'")
ECO_RUN=$(sqlite3 "$DB" "SELECT id FROM runs WHERE campaign_id = $CID AND campaign_config = 'eco'")
grep -q "tilebench compare: 2 runs against baseline run $BASE_RUN" "$T/campaign1.log" || fail "no comparison on stdout"
grep -q "^Score" "$T/campaign1.log" || fail "no score table in the comparison"
[ -s "$T/campaign.html" ] || fail "no HTML comparison at --report"
grep -q "<svg" "$T/campaign.html" || fail "HTML comparison has no chart"
grep -q "it governors: eco" "$T/campaign.html" || fail "HTML comparison does not name the campaign and eco"
grep -q "<script" "$T/campaign.html" && fail "HTML comparison has a script"

# the metric-op flag the comparison's p95 per workload uses, as the coordinator stored it
expect "oltp metric ops (Order, Point)" "$(sqlite3 "$DB" "SELECT group_concat(DISTINCT o.name) FROM ops o
    JOIN workloads w ON w.id = o.workload_id WHERE w.name = 'oltp' AND o.metric = 1")" = "Order,Point"
expect "kv metric ops" "$(sqlite3 "$DB" "SELECT group_concat(DISTINCT o.name) FROM ops o
    JOIN workloads w ON w.id = o.workload_id WHERE w.name = 'kv' AND o.metric = 1")" = "SET,GET"
expect "ops without the flag" "$(sqlite3 "$DB" "SELECT count(*) FROM ops WHERE metric IS NULL")" -eq 0

# the same comparison through `tilebench compare`
"$TILEBENCH" compare "$ECO_RUN" "$BASE_RUN" --baseline "$BASE_RUN" --db "$DB" --format json >"$T/compare.json"
J="$T/compare.json"
expect "compare baseline" "$(jq .comparison.baseline "$J")" -eq "$BASE_RUN"
expect "compare runs: configurations" "$(jq -r '[.comparison.runs[].campaign.config] | join(",")' "$J")" = "eco,base"
expect "compare level 1 tile present in both" "$(jq '[.comparison.levels[0].runs[].present] | all' "$J")" = true
expect "baseline % change of its own score" "$(jq '.comparison.levels[0].runs[1].score.pct' "$J")" = 0
# the compared scores are the stored ones, and eco's % change is
# (eco - base) / base x 100 of them, recomputed here (the JSON rounds to 0.01)
base_score=$(sqlite3 "$DB" "SELECT printf('%.17g', score) FROM levels WHERE run_id = $BASE_RUN")
eco_score=$(sqlite3 "$DB" "SELECT printf('%.17g', score) FROM levels WHERE run_id = $ECO_RUN")
echo "stored scores: base $base_score, eco $eco_score; compare: $(jq -c '[.comparison.levels[0].runs[].score]' "$J")"
expect_true "compared eco score = stored" "[$(jq '.comparison.levels[0].runs[0].score.value' "$J"), $eco_score]" \
    '(.[0] - .[1] | fabs) <= 1e-9 * .[1]'
expect_true "compared base score = stored" "[$(jq '.comparison.levels[0].runs[1].score.value' "$J"), $base_score]" \
    '(.[0] - .[1] | fabs) <= 1e-9 * .[1]'
expect_true "eco score % change = (eco - base) / base x 100, to 0.01" \
    "[$(jq '.comparison.levels[0].runs[0].score.pct' "$J"), $eco_score, $base_score]" \
    '(.[0] - (.[1] - .[2]) / .[2] * 100 | fabs) <= 0.005 + 1e-9'
# one p95 per workload of the standard tile
nwl=$(grep -c '^\[workload\.' "$TB_SOURCE_DIR/tiles/standard.ini")
expect "p95 per workload compared" "$(jq '.comparison.levels[0].runs[0].p95_ms | keys | length' "$J")" -eq "$nwl"
"$TILEBENCH" runs --db "$DB" >"$T/runs.txt"
grep -q "it governors  baseline base; runs: $BASE_RUN base, $ECO_RUN eco" "$T/runs.txt" ||
    fail "tilebench runs does not show the campaign: $(cat "$T/runs.txt")"

# compare's usage errors name the value
rc=0
"$TILEBENCH" compare "$BASE_RUN" 99 --db "$DB" >"$T/c.out" 2>"$T/c.err" || rc=$?
expect "compare with an unknown run exits 2" "$rc" -eq 2
grep -q "run 99 not found" "$T/c.err" || fail "unknown run not named: $(cat "$T/c.err")"
rc=0
"$TILEBENCH" compare "$BASE_RUN" "$ECO_RUN" --baseline 99 --db "$DB" >"$T/c.out" 2>"$T/c.err" || rc=$?
expect "compare with an unknown baseline exits 2" "$rc" -eq 2
grep -q "baseline: run 99 not found" "$T/c.err" || fail "unknown baseline not named: $(cat "$T/c.err")"

# ---- 2. an apply that fails --------------------------------------------------------
cat >"$T/failing.ini" <<EOF
[campaign]
name = it failing
baseline = base

$SWEEP

[config.base]
apply = echo apply base >>"$T/markers2"
revert = echo revert base >>"$T/markers2"

[config.broken]
apply = echo cannot set governor; exit 7
revert = echo revert broken >>"$T/markers2"
EOF
rc=0
"$TILEBENCH" campaign --config "$T/failing.ini" --db "$DB" --report "$T/failing.html" --quiet \
    >"$T/campaign2.log" 2>"$T/campaign2.err" || rc=$?
cat "$T/campaign2.log" "$T/campaign2.err"
expect "failing apply: exit status" "$rc" -eq 3
grep -q "configuration 'broken': apply command 'echo cannot set governor; exit 7' failed: exit status 7" \
    "$T/campaign2.err" || fail "the error does not name the configuration, command and exit status"
expect "markers: base applied, run, reverted; broken reverted after its failed apply" \
    "$(tr '\n' '|' <"$T/markers2")" = "apply base|revert base|revert broken|"
CID2=$(sqlite3 "$DB" "SELECT id FROM campaigns WHERE name = 'it failing'")
expect "failing campaign marked aborted" "$(sqlite3 "$DB" "SELECT status FROM campaigns WHERE id = $CID2")" = aborted
sqlite3 "$DB" "SELECT message FROM campaigns WHERE id = $CID2" | grep -q "exit status 7" ||
    fail "campaign message lacks the exit status"
expect "the baseline's run stays, complete" \
    "$(sqlite3 "$DB" "SELECT group_concat(campaign_config || '=' || status) FROM runs WHERE campaign_id = $CID2")" = \
    "base=complete"
expect "failed apply stored with its exit status and output" \
    "$(sqlite3 "$DB" "SELECT exit_status || ' ' || output FROM campaign_steps WHERE campaign_id = $CID2 AND
        step = 'apply' AND config = 'broken'")" = "7 cannot set governor"
grep -q "no comparison: only the baseline run finished" "$T/campaign2.log" || fail "no note about the comparison"
[ -e "$T/failing.html" ] && fail "a comparison page was written with one run"

# ---- 3. SIGINT during a run: the run ends interrupted, its revert still runs ----------
cat >"$T/sigint.ini" <<EOF
[campaign]
name = it sigint
baseline = base

[sweep]
tiles = 1
ramp_up = 1s
warm_up = 1s
steady = 60s
ramp_down = 1s
idle = 0

[config.base]
apply = echo apply base >>"$T/markers3"
revert = echo revert base >>"$T/markers3"

[config.other]
apply = echo apply other >>"$T/markers3"
revert = echo revert other >>"$T/markers3"
EOF
"$TILEBENCH" campaign --config "$T/sigint.ini" --db "$DB" --report "$T/sigint.html" --quiet \
    >"$T/campaign3.log" 2>&1 &
CPID=$!
at_exit "kill $CPID 2>/dev/null || true"
for _ in $(seq 1 240); do # until the run is being written (its row exists)
    [ "$(sqlite3 "$DB" "SELECT count(*) FROM runs r JOIN campaigns c ON c.id = r.campaign_id
        WHERE c.name = 'it sigint'" 2>/dev/null)" = 1 ] && break
    sleep 0.5
done
wait_steady "$DB" 1 "$CPID" # during the run's steady state
kill -INT "$CPID"
rc=0
wait "$CPID" || rc=$?
cat "$T/campaign3.log"
expect "interrupted campaign: exit status" "$rc" -eq 3
expect "markers: base applied and reverted, other never applied" "$(tr '\n' '|' <"$T/markers3")" = \
    "apply base|revert base|"
expect "interrupted campaign marked" \
    "$(sqlite3 "$DB" "SELECT status FROM campaigns WHERE name = 'it sigint'")" = interrupted
expect "its run marked interrupted" "$(sqlite3 "$DB" "SELECT r.status FROM runs r JOIN campaigns c
    ON c.id = r.campaign_id WHERE c.name = 'it sigint'")" = interrupted

# ---- 4. campaign file errors: file:line and key, exit 2, nothing runs ---------------
bad() { # NAME EXPECTED-MESSAGE, campaign text on stdin
    local rc=0
    cat >"$T/$1.ini"
    "$TILEBENCH" campaign --config "$T/$1.ini" --db "$T/bad.db" >"$T/$1.out" 2>"$T/$1.err" || rc=$?
    expect "$1: exit status" "$rc" -eq 2
    grep -qF "$2" "$T/$1.err" || fail "$1: expected '$2', got: $(cat "$T/$1.err")"
    [ -e "$T/bad.db" ] && fail "$1: a database was created"
    return 0
}
bad unknown-key "$T/unknown-key.ini:3: [campaign] baseline_run: unknown key" <<EOF
[campaign]
name = x
baseline_run = a
EOF
bad no-baseline-config "$T/no-baseline-config.ini:3: [campaign] baseline: 'c' is not a configuration (configurations: a, b)" <<EOF
[campaign]
name = x
baseline = c
[config.a]
apply = true
revert = true
[config.b]
apply = true
revert = true
EOF
bad missing-revert "$T/missing-revert.ini:5: [config.b] revert: missing" <<EOF
[campaign]
name = x
baseline = b
[config.b]
apply = true
[config.c]
apply = true
revert = true
EOF
bad bad-steady "$T/bad-steady.ini:5: [sweep] steady: " <<EOF
[campaign]
name = x
baseline = b
[sweep]
steady = 3 parsecs
EOF
# ---- 5. bad per-configuration keys: exit 2 naming them, nothing applied ----------
printf '[tile]\nname = broken\n[workload.kv\n' >"$T/broken-tile.ini"
for args in "cfg-unknown|tile = x|[config.b] tile: unknown key (known: apply, revert, tile_file" \
    "cfg-threads|threads = 0|[config.b] threads: must be an integer 1..256" \
    "cfg-tiles|tiles = 2..1|[config.b] tiles: tile spec '2..1'" \
    "cfg-tile-file|tile_file = broken-tile.ini|[config.b] tile_file: $T/broken-tile.ini:3: syntax error" \
    "cfg-no-tile-file|tile_file = missing.ini|[config.b] tile_file: " \
    "cfg-meter|meter = nosuch://x|[config.b] meter: "; do
    IFS='|' read -r name line want <<<"$args"
    rm -f "$T/applied"
    bad "$name" "$T/$name.ini:10: $want" <<EOF
[campaign]
name = x
baseline = a
[config.a]
apply = touch "$T/applied"
revert = true
[config.b]
apply = touch "$T/applied"
revert = true
$line
EOF
    [ -e "$T/applied" ] && fail "$name: an apply ran"
done
grep -q "nosuch" "$T/cfg-meter.err" || fail "cfg-meter: the URI is not named: $(cat "$T/cfg-meter.err")"

# ---- 6. own tile files and keys; an apply that rewrites its tile file ------------
STD="$TB_SOURCE_DIR/tiles/standard.ini"
sed 's/^users = 5$/users = 3/' "$STD" >"$T/tile-a.ini" # kv: 3 users per tile instead of 5
grep -q '^users = 3$' "$T/tile-a.ini" || fail "tile-a.ini: no kv users line changed"
cp "$STD" "$T/tile-b.ini"
cp "$STD" "$T/tile-b.orig"
THREADS=$(($(nproc) + 1)) # not the default (the online CPUs)
cat >"$T/own.ini" <<EOF
[campaign]
name = it own tiles
baseline = a

$SWEEP

[config.a]
tile_file = tile-a.ini
threads = $THREADS
label = fewer kv users
apply = true
revert = true

[config.b]
tile_file = $T/tile-b.ini
tiles = 1
meter = estimate:?idle=50&max=200
apply = sed -i 's/^name = standard\$/name = rewritten/' "$T/tile-b.ini" && cp "$T/tile-b.ini" "$T/tile-b.applied"
revert = cp "$T/tile-b.orig" "$T/tile-b.ini"
EOF
rc=0
"$TILEBENCH" campaign --config "$T/own.ini" --db "$DB" --report "$T/own.html" --quiet >"$T/campaign5.log" 2>&1 || rc=$?
cat "$T/campaign5.log"
expect "own tile files: exit status" "$rc" -eq 0
CID5=$(sqlite3 "$DB" "SELECT id FROM campaigns WHERE name = 'it own tiles'")
RA=$(sqlite3 "$DB" "SELECT id FROM runs WHERE campaign_id = $CID5 AND campaign_config = 'a'")
RB=$(sqlite3 "$DB" "SELECT id FROM runs WHERE campaign_id = $CID5 AND campaign_config = 'b'")
[ -n "$RA" ] && [ -n "$RB" ] || fail "runs of a and b not stored"
grep -q '^name = rewritten$' "$T/tile-b.applied" || fail "b's apply did not rewrite its tile file"
text() { sqlite3 "$DB" "SELECT config_text FROM runs WHERE id = $1"; }
[ "$(text "$RA")" = "$(cat "$T/tile-a.ini")" ] || fail "run a's config_text is not tile-a.ini"
[ "$(text "$RB")" = "$(cat "$T/tile-b.applied")" ] || fail "run b's config_text is not tile-b.ini as its apply left it"
expect "stored texts differ as the files do" "$(diff <(text "$RA") <(text "$RB"))" = \
    "$(diff "$T/tile-a.ini" "$T/tile-b.applied")"
expect "run b ran the rewritten tile" "$(sqlite3 "$DB" "SELECT tile_name FROM runs WHERE id = $RB")" = rewritten
expect "run a: label and threads" "$(sqlite3 "$DB" "SELECT label || '/' || json_extract(settings_json,
    '\$.loadgen_threads') FROM runs WHERE id = $RA")" = "fewer kv users/$THREADS"
expect "run a: its own keys stored" "$(sqlite3 "$DB" "SELECT json_extract(settings_json, '\$.campaign_config.keys')
    FROM runs WHERE id = $RA")" = "{\"tile_file\":\"$T/tile-a.ini\",\"threads\":$THREADS,\"label\":\"fewer kv users\"}"
expect "run b: its meter" "$(sqlite3 "$DB" "SELECT group_concat(uri) FROM meters WHERE run_id = $RB")" = \
    "estimate:?idle=50&max=200"
expect "run a: [sweep]'s meter (auto)" "$(sqlite3 "$DB" "SELECT count(*) FROM meters WHERE run_id = $RA AND
    model LIKE '%auto%'")" -eq 1
expect "run b: its own keys stored" "$(sqlite3 "$DB" "SELECT json_extract(settings_json, '\$.campaign_config.keys')
    FROM runs WHERE id = $RB")" = "{\"tile_file\":\"$T/tile-b.ini\",\"tiles\":\"1\",\"meter\":[\"estimate:?idle=50&max=200\"]}"
expect "run b: the digest of the tile text it ran" "$(sqlite3 "$DB" "SELECT json_extract(settings_json,
    '\$.campaign_config.tile_file_sha256') FROM runs WHERE id = $RB")" = "$(sha256sum <"$T/tile-b.applied" | cut -d' ' -f1)"
APPLY_MSG="apply of configuration 'b' changed $T/tile-b.ini, read before it; the run uses the new content"
REVERT_MSG="revert of configuration 'b' changed $T/tile-b.ini, read before it"
expect "run b: the apply's and the revert's warnings stored" "$(sqlite3 "$DB" "SELECT group_concat(message, '|') FROM
    (SELECT message FROM events WHERE run_id = $RB AND kind = 'warning' AND message LIKE '%configuration%changed%'
    ORDER BY id)")" = "$APPLY_MSG|$REVERT_MSG; a configuration that uses it reads the new content before its run"
expect "run a: no such warning" "$(sqlite3 "$DB" "SELECT count(*) FROM events WHERE run_id = $RA AND
    message LIKE '%changed%read before it%'")" -eq 0
grep -qF "warning: $APPLY_MSG" "$T/campaign5.log" || fail "the apply's warning is not shown with --quiet"
grep -qF "run $RB: $APPLY_MSG" "$T/campaign5.log" || fail "the comparison does not note the apply's change"
grep -qF "$T/tile-b.ini, read before it" "$T/own.html" || fail "the HTML comparison does not note the change"
# run a's tile is 'standard' with 3 kv users, the earlier base run's 'standard' with 5: the same name,
# other workload sections, so compare says the load changed; two runs of the same tile do not
"$TILEBENCH" compare "$BASE_RUN" "$RA" --db "$DB" >"$T/cmp-load.txt" || fail "compare base a"
grep -qF "run $RA's tile 'standard' has other workload sections" "$T/cmp-load.txt" ||
    fail "compare: no note that run a's load differs: $(cat "$T/cmp-load.txt")"
"$TILEBENCH" compare "$BASE_RUN" "$ECO_RUN" --db "$DB" >"$T/cmp-same.txt" || fail "compare base eco"
! grep -q "has other workload sections" "$T/cmp-same.txt" || fail "compare: same tile noted as changed"

echo "test_campaign: all checks passed"
