#!/usr/bin/env bash
# test_estimate_busy.sh: a run on estimated power (estimate:) whose host was
# busy with other work. The estimate reads the host's CPU from /proc/stat
# (TB_PROC_STAT replaces it): a writer here advances its counters every 0.1 s
# as a host at 100% CPU would (busy jiffies only), so every sample sits at
# the model's maximum. The run must warn, as run events the report shows,
# that active idle was not idle (its CPU from the model) and that the
# estimate sat at its ceiling (in active idle and in the phase); a second run
# on a host at about 2% CPU has neither warning. Both stay warnings: the
# runs complete.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
STAT="$T/stat"

# write_stat BUSY_STEP IDLE_STEP: /proc/stat's aggregate line, advanced every
# 0.1 s by these jiffies, until the file "$T/stop" exists (90 s at most)
write_stat() {
    local busy=1000 idle=100000 i
    for ((i = 0; i < 900; i++)); do
        [ -e "$T/stop" ] && return 0
        printf 'cpu  %d 0 0 %d 0 0 0 0 0 0\n' "$busy" "$idle" >"$STAT.tmp"
        mv "$STAT.tmp" "$STAT"
        busy=$((busy + $1))
        idle=$((idle + $2))
        sleep 0.1
    done
}

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"

# run_on NAME BUSY_STEP IDLE_STEP: a short run on estimate:?idle=60&max=180
run_on() {
    rm -f "$T/stop"
    write_stat "$2" "$3" &
    local wpid=$! rc=0
    sleep 0.3
    TB_PROC_STAT="$STAT" "$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 0 --warm-up 0 --steady 3s \
        --ramp-down 0 --idle 3s --meter 'estimate:?idle=60&max=180' --db "$T/$1.db" --quiet >"$T/$1.log" 2>&1 ||
        rc=$?
    touch "$T/stop"
    wait "$wpid"
    expect "$1 run exit status" "$rc" -eq 0
    "$TB" report latest --db "$T/$1.db" --format json >"$T/$1.json" || fail "report of the $1 run failed"
    "$TB" report latest --db "$T/$1.db" --format html >"$T/$1.html" || fail "html report of the $1 run failed"
    expect "$1 run status" "$(jq -r .run.status "$T/$1.json")" = complete
}
# warnings NAME PATTERN: the run's warning events matching PATTERN
warnings() { jq -r --arg p "$2" '[.run.events[] | select(.kind == "warning" and (.message | test($p)))] | length' "$T/$1.json"; }

# ---- the busy host: 100% CPU all along ----
run_on busy 10 0
expect "busy: 'active idle was not idle' warnings" "$(warnings busy '^active idle was not idle: CPU 100%')" -eq 1
expect "busy: ceiling warning in active idle" \
    "$(warnings busy "^active idle: [0-9]+ of [0-9]+ estimated samples of meter 0 sat at the model's maximum \\(180 W")" -eq 1
expect "busy: ceiling warning in the phase" \
    "$(warnings busy "^1 tiles phase 1: [0-9]+ of [0-9]+ estimated samples of meter 0 sat at the model's maximum")" -eq 1
grep -q 'active idle was not idle: CPU 100%' "$T/busy.html" || fail "the HTML report does not show the idle warning"
expect "busy: the phase's mean power is the model's maximum" "$(jq -r '.run.levels[0].avg_watts' "$T/busy.json")" = 180

# ---- a quiet host: about 2% CPU (2 busy jiffies in 100) ----
run_on quiet 2 98
expect "quiet: 'not idle' warnings" "$(warnings quiet 'not idle')" -eq 0
expect "quiet: ceiling warnings" "$(warnings quiet "model's maximum")" -eq 0
expect_true "quiet: idle watts about 60 + 120 x 2%" "$(jq -r '.run.active_idle_watts' "$T/quiet.json")" \
    '. > 61 and . < 64'
echo "PASS test_estimate_busy"
