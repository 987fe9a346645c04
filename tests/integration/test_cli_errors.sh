#!/usr/bin/env bash
# test_cli_errors.sh: bad input exits 2 with a message that names the problem,
# before anything is started or stored.
source "$(dirname "$0")/lib.sh"

# expect_exit2 PATTERN -- ARGS...: runs tilebench ARGS, wants exit 2 and PATTERN in stderr
expect_exit2() {
    local pattern=$1
    shift
    local rc=0
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -eq 2 ] || fail "'$*' exited $rc, want 2 (stderr: $(cat "$T/err"))"
    grep -qF -- "$pattern" "$T/err" || fail "'$*': stderr lacks '$pattern': $(cat "$T/err")"
    echo "ok: $* -> exit 2: $(head -1 "$T/err")"
}

TB=$TILEBENCH
expect_exit2 "--bogus" $TB run --bogus
expect_exit2 "unknown command 'frobnicate'" $TB frobnicate
expect_exit2 "'10x': unknown unit 'x'" $TB run --steady 10x
expect_exit2 "must not be negative" $TB run --ramp-up -5s
expect_exit2 "tile spec '0'" $TB run --tiles 0
expect_exit2 "range end 1 is below start 3" $TB run --tiles 3..1
expect_exit2 "/nonexistent/tile.ini" $TB run --config /nonexistent/tile.ini
expect_exit2 "only applies to --tiles auto" $TB run --tiles 2 --max-tiles 4
expect_exit2 "--phases" $TB run --phases zero
expect_exit2 "unknown scheme" $TB run --meter "bogus://x" --db "$T/r.db" --sut-dir "$T/sut"
printf '[workload.kv]\nkind = kv\nusers = many\nreference = 1\n' >"$T/bad.ini"
expect_exit2 "$T/bad.ini:3: [workload.kv] users: 'many'" $TB run --config "$T/bad.ini"
# a malformed line is named itself, not a later key that landed in the wrong section
printf '[workload.kv]\nkind = kv\nreference = 1\n[qos.kv]\nGET.p90 = 1s\n[workload.web\nkind = http\n' >"$T/unclosed.ini"
expect_exit2 "$T/unclosed.ini:6: syntax error: unclosed section header (no ']'): '[workload.web'" \
    $TB run --config "$T/unclosed.ini"
# bytes from the file are escaped (\xNN), never sent raw to the terminal: a binary
# file, and a control byte in a value that only the workload's own check rejects
no_raw_bytes() { ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/err" || fail "raw control bytes: $(cat -v "$T/err")"; }
expect_exit2 "$TILEBENCH:1: syntax error: expected key = value (or [section]): '\x7fELF" $TB run --config "$TILEBENCH"
no_raw_bytes
printf '[workload.kv]\nkind = kv\nreference = 1\nkey_pattern = \033[31mred\n' >"$T/esc.ini"
expect_exit2 "$T/esc.ini:4: [workload.kv] key_pattern: '\x1b[31mred'" $TB run --config "$T/esc.ini"
no_raw_bytes
expect_exit2 "not found" $TB report latest --db "$T/none.db"
expect_exit2 "--db needs a file name" $TB run --tiles 1 --meter estimate: --db ""
# A missing PostgreSQL installation is a configuration error, named as such.
TB_PG_BINDIR=/nonexistent expect_exit2 "PostgreSQL" $TB run --tiles 1 --idle 0 --sut-dir "$T/sut" --db "$T/r2.db"
[ -z "$(pgrep -f "$T/sut" || true)" ] || fail "processes left after a failed SUT start"
echo "PASS test_cli_errors"
