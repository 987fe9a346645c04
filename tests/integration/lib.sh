# lib.sh: shared helpers for the integration tests (sourced, not run).
# Each test works in its own temporary folder and stops every server it started.
set -euo pipefail

: "${TILEBENCH:?set TILEBENCH to the tilebench binary}"
: "${TB_SOURCE_DIR:?set TB_SOURCE_DIR to the source tree}"

T=$(mktemp -d /tmp/tb-it.XXXXXX)
chmod 755 "$T" # the PostgreSQL server runs as user postgres and must reach its folder
FAILED=0
# Sanitizer reports of every process a test starts (tilebench itself, and the
# long-lived children whose stderr goes to a log nobody reads: the reference
# web apps that `sut up` starts, the meter emulator) go to files here, one per
# process; cleanup_dir fails the test when any exists. No effect on a build
# without sanitizers. scripts/test adds detect_leaks=1.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/ubsan:print_stacktrace=1"

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
    exit 1
}

# expect DESCRIPTION ACTUAL OP EXPECTED   (OP: -eq -gt -ge -le -lt -ne)
expect() {
    local what=$1 actual=$2 op=$3 want=$4
    if [ "$actual" "$op" "$want" ]; then
        echo "ok: $what: $actual $op $want"
    else
        fail "$what: expected $op $want, got '$actual'"
    fi
}

# expect_float DESCRIPTION ACTUAL JQ-CONDITION  e.g. expect_float watts 57.2 '. > 0'
expect_true() {
    local what=$1 value=$2 cond=$3
    if [ "$(jq -n --argjson v "$value" "\$v | $cond")" = "true" ]; then
        echo "ok: $what: $value satisfies $cond"
    else
        fail "$what: $value does not satisfy $cond"
    fi
}

# wait_for WHAT SECONDS COMMAND...: runs COMMAND every 0.1 s until it
# succeeds; fails naming WHAT when SECONDS pass first.
wait_for() {
    local what=$1 secs=$2 i
    shift 2
    for ((i = 0; i < secs * 10; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "$what: not within $secs s"
}

# wait_steady DB TILES PID: waits until the run PID, writing DB, is in the
# steady state of its level of TILES tiles: the coordinator stores the event
# "TILES tiles ramp-up and warm-up: ..." as that level's first phase starts.
# Fails when the run ends first, or after 2 minutes.
wait_steady() {
    local db=$1 tiles=$2 pid=$3 i n
    for ((i = 0; i < 1200; i++)); do
        n=0
        [ -s "$db" ] && n=$(sqlite3 -batch "$db" "SELECT count(*) FROM events e JOIN runs r ON r.id = e.run_id
            WHERE r.status = 'running' AND e.message LIKE '$tiles tiles ramp-up and warm-up:%'" 2>/dev/null) || n=0
        [ "${n:-0}" -ge 1 ] && return 0
        kill -0 "$pid" 2>/dev/null || fail "the run ended before the steady state of its $tiles-tile level"
        sleep 0.1
    done
    fail "no steady state of a $tiles-tile level in $db within 2 min"
}

# web_tile FILE USERS [QOS-LINE...]: a tile file of the web workload alone,
# USERS users at a 200 ms cycle with the standard tile's Markov rows, the QoS
# lines given (under [qos.web]), and the embedded SUT's endpoints ($SUT).
web_tile() {
    local file=$1 users=$2
    shift 2
    {
        printf '[tile]\nname = web\n[workload.web]\nkind = web\nusers = %d\ncycle_time = 200ms\n' "$users"
        printf 'think_dist = negexp\n'
        sed -n '/^\[workload\.web\]/,/^\[/{/^next\./p}' "$TB_SOURCE_DIR/tiles/standard.ini"
        printf 'timeout = 2s\nunit = ops/s\nreference = 20\n'
        [ $# -eq 0 ] || printf '[qos.web]\n%s\n' "$@"
        cat "$SUT"
    } >"$file"
    grep -q '^next\.HomePage' "$file" || fail "no Markov rows copied from the standard tile"
}
# web_app_pid: the pid of tile 1's reference web app, from the embedded SUT's
# state file (sets WP and WEBCMD, its command line, for a restart).
web_app_pid() {
    WP=$(awk '$1 == "web.tile1" {print $2}' "$T/sut/sut.state")
    [ -n "$WP" ] && kill -0 "$WP" || fail "no running web.tile1 in $T/sut/sut.state"
    mapfile -d '' WEBCMD <"/proc/$WP/cmdline"
}

# start_sim NAME ARGS...: the meter emulator (`tilebench meter sim ARGS`) on a
# free loopback port, its output in $T/NAME.log; sets PORT, SIM_PID (and PTY
# with --pty) and adds the pid to SIM_PIDS, which are stopped when the test
# exits. Fails the test when the emulator exits or does not listen within 20 s
# (tests run two at a time, and under ASan: a start can take seconds).
SIM_PIDS=()
start_sim() {
    local name=$1 i
    shift
    : >"$T/$name.log" # exists before the loop below reads it, however late the child starts
    "$TILEBENCH" meter sim --listen 127.0.0.1:0 "$@" >"$T/$name.log" 2>&1 &
    SIM_PID=$!
    SIM_PIDS+=("$SIM_PID")
    PORT=""
    for ((i = 0; i < 400; i++)); do
        PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/$name.log")
        [ -n "$PORT" ] && break
        kill -0 "$SIM_PID" 2>/dev/null || fail "meter sim '$name' exited before listening: $(cat "$T/$name.log")"
        sleep 0.05
    done
    [ -n "$PORT" ] || fail "meter sim '$name' did not listen within 20 s: $(cat "$T/$name.log")"
    PTY=$(sed -n 's/^pty //p' "$T/$name.log")
    echo "ok: sim $name up on port $PORT${PTY:+ and $PTY}"
}
# stop_sims: SIGTERM to every emulator this test started; each must exit 0
# (a clean exit, so that a sanitizer build's leak check ran).
stop_sims() {
    local p rc
    for p in "${SIM_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || fail "meter sim $p had exited before the end"; done
    for p in "${SIM_PIDS[@]}"; do
        rc=0
        wait "$p" || rc=$?
        expect "meter sim $p exit status on SIGTERM" "$rc" -eq 0
    done
    SIM_PIDS=()
}
# sim_count PORT KEY: one counter of the emulator, asked in-band ("tb:count?").
sim_count() {
    local port=$1 key=$2 line
    exec 7<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to the sim on $port for its counters"
    printf 'tb:count?\n' >&7
    IFS= read -r -t 5 line <&7 || fail "no counters from the sim on $port"
    exec 7<&-
    line=${line%$'\r'}
    echo "$line" | tr ' ' '\n' | sed -n "s/^$key=//p"
}

# sanitizer_reports: after the test's own children (an emulator, a restarted
# web app) were signalled, waits up to 10 s for them to exit, so that their
# reports are written; then prints every sanitizer report under $T and
# returns 1 if there is any.
sanitizer_reports() {
    local i f
    for ((i = 0; i < 100; i++)); do [ -z "$(jobs -pr)" ] && break; sleep 0.1; done
    compgen -G "$T/[au]*san.*" >/dev/null || return 0
    for f in "$T"/[au]*san.*; do echo "== sanitizer report $f" >&2; head -60 "$f" >&2; done
    echo "FAIL: sanitizer reports from the processes this test started (above)" >&2
    return 1
}

# at_exit 'COMMAND': run COMMAND when the test exits, pass or fail, before the
# SUT is stopped (last registered, first run): for processes a test starts
# itself, such as an emulator or a server it restarted.
AT_EXIT=()
at_exit() { AT_EXIT+=("$1"); }
at_exit 'for p in "${SIM_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done'

cleanup_dir() {
    local rc=$? i
    for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do eval "${AT_EXIT[i]}" || true; done
    if [ -d "$T/sut" ]; then "$TILEBENCH" sut down --dir "$T/sut" >/dev/null 2>&1 || true; fi
    sanitizer_reports || { [ $rc -ne 0 ] || rc=1; }
    if [ $rc -ne 0 ]; then
        echo "--- logs in $T (kept for inspection) ---" >&2
        for f in "$T"/*.log "$T"/sut/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -20 "$f" >&2; }; done
    else
        rm -rf "$T"
    fi
    exit $rc
}
trap cleanup_dir EXIT
