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
