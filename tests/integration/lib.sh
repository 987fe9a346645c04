# lib.sh: shared helpers for the integration tests (sourced, not run).
# Each test works in its own temporary folder and stops every server it started.
set -euo pipefail

: "${TILEBENCH:?set TILEBENCH to the tilebench binary}"
: "${TB_SOURCE_DIR:?set TB_SOURCE_DIR to the source tree}"

T=$(mktemp -d /tmp/tb-it.XXXXXX)
chmod 755 "$T" # the PostgreSQL server runs as user postgres and must reach its folder
FAILED=0

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

# at_exit 'COMMAND': run COMMAND when the test exits, pass or fail, before the
# SUT is stopped (last registered, first run): for processes a test starts
# itself, such as an emulator or a server it restarted.
AT_EXIT=()
at_exit() { AT_EXIT+=("$1"); }

cleanup_dir() {
    local rc=$? i
    for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do eval "${AT_EXIT[i]}" || true; done
    if [ -d "$T/sut" ]; then "$TILEBENCH" sut down --dir "$T/sut" >/dev/null 2>&1 || true; fi
    if [ $rc -ne 0 ]; then
        echo "--- logs in $T (kept for inspection) ---" >&2
        for f in "$T"/*.log "$T"/sut/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -20 "$f" >&2; }; done
    else
        rm -rf "$T"
    fi
}
trap cleanup_dir EXIT
