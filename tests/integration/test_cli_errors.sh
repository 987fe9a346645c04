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
# the first 4 KiB of the binary itself (the whole one, under ASan, is over the 16 MiB cap)
head -c 4096 "$TILEBENCH" >"$T/binary"
expect_exit2 "$T/binary:1: (no key = value): a NUL byte at byte 8 of the line (a binary file?)" $TB run --config "$T/binary"
no_raw_bytes
printf '[workload.kv]\nkind = kv\nreference = 1\nkey_pattern = \033[31mred\n' >"$T/esc.ini"
expect_exit2 "$T/esc.ini:4: [workload.kv] key_pattern: '\x1b[31mred'" $TB run --config "$T/esc.ini"
no_raw_bytes
# lines are read whole up to 64 KiB (Debian's inih alone reads 199 bytes at a
# time): a 226-byte urls line is one value, so the error on the next line names
# line 5; a 10 MB line is refused naming its own line and key; a NUL byte too
head='[workload.web]\nkind = http\nreference = 1\n'
printf "${head}urls = /%s\nusers = many\n" "$(head -c 218 /dev/zero | tr '\0' a)" >"$T/long.ini"
expect_exit2 "$T/long.ini:5: [workload.web] users: 'many'" $TB run --config "$T/long.ini"
printf "${head}urls = /%s\nusers = many\n" "$(head -c 10485752 /dev/zero | tr '\0' a)" >"$T/huge.ini"
expect_exit2 "$T/huge.ini:4: [workload.web] urls: line of 10485760 bytes, longer than the 65536 allowed" \
    $TB run --config "$T/huge.ini"
printf '[workload.kv]\nkind = kv\nreference = 1\0 0\n' >"$T/nul.ini"
expect_exit2 "$T/nul.ini:3: [workload.kv] reference: a NUL byte at byte 14" $TB run --config "$T/nul.ini"
# errors on a line with a password quote it without the password: a syntax
# error (no '='), a pg line over the limit
printf '[workload.kv]\nkind = kv\nreference = 1\n[sut]\nmail_password Cli-Secret-1\n' >"$T/pwsyntax.ini"
expect_exit2 "$T/pwsyntax.ini:5: syntax error: expected key = value (or [section]): 'mail_password ***'" \
    $TB run --config "$T/pwsyntax.ini"
printf '[workload.kv]\nkind = kv\nreference = 1\n[sut]\npg = host=127.0.0.1 application_name=%s password=Cli-Secret-2\n' \
    "$(head -c 70000 /dev/zero | tr '\0' x)" >"$T/pglong.ini"
expect_exit2 "$T/pglong.ini:5: [sut] pg: line of 70059 bytes, longer than the 65536 allowed" $TB run --config "$T/pglong.ini"
for f in "$T/pwsyntax.ini" "$T/pglong.ini"; do
    $TB run --config "$f" >/dev/null 2>"$T/err" || true
    ! grep -q Cli-Secret "$T/err" || fail "a password is in the error: $(cat "$T/err")"
done
expect_exit2 "not found" $TB report latest --db "$T/none.db"
expect_exit2 "--db needs a file name" $TB run --tiles 1 --meter estimate: --db ""
# A missing PostgreSQL installation is a configuration error, named as such.
TB_PG_BINDIR=/nonexistent expect_exit2 "PostgreSQL" $TB run --tiles 1 --idle 0 --sut-dir "$T/sut" --db "$T/r2.db"
[ -z "$(pgrep -f "$T/sut" || true)" ] || fail "processes left after a failed SUT start"
# Infrastructure operations ([infra.NAME]): a bad key is named at its line;
# a program an operation needs and cannot find is named with its Debian
# package, before any server starts or any run is stored.
kv='[workload.kv]\nkind = kv\nreference = 1\n'
printf "${kv}[infra.x]\nkind = vmotion\n" >"$T/ikind.ini"
expect_exit2 "$T/ikind.ini:5: [infra.x] kind: unknown kind 'vmotion' (known: deploy, backup, migrate, command)" \
    $TB run --config "$T/ikind.ini"
printf "${kv}[infra.x]\nkind = command\ncommand = echo {tile2}\n" >"$T/iplace.ini"
expect_exit2 "$T/iplace.ini:6: [infra.x] command: unknown placeholder {tile2}" $TB run --config "$T/iplace.ini"
printf "${kv}[infra.x]\nkind = command\ntiles_per_user = 0\ncommand = true\n" >"$T/itpu.ini"
expect_exit2 "$T/itpu.ini:6: [infra.x] tiles_per_user: '0'" $TB run --config "$T/itpu.ini"
# an operation's name becomes part of folder names: nothing but letters, digits, _ and -
printf "${kv}[infra.../v]\nkind = command\ncommand = pwd\n" >"$T/iname.ini"
expect_exit2 "$T/iname.ini:5: [infra.../v] kind: operation name '../v': use letters, digits" \
    $TB run --config "$T/iname.ini"
printf "${kv}[infra.m1]\nkind = migrate\n[infra.m2]\nkind = migrate\n" >"$T/imig.ini"
expect_exit2 "$T/imig.ini:7: [infra.m2] kind: migrate: a tile file may have one migrate operation" \
    $TB run --config "$T/imig.ini"
printf "${kv}[infra.c]\nkind = command\ncommand = true\noutput_cap = 10\n" >"$T/icap.ini"
expect_exit2 "$T/icap.ini:7: [infra.c] output_cap: '10': must be at least 256 bytes" $TB run --config "$T/icap.ini"
mkdir -p "$T/nobin"
printf "${kv}[infra.b]\nkind = backup\n" >"$T/iback.ini"
TB_PG_BINDIR="$T/nobin" expect_exit2 "$T/iback.ini:5: [infra.b] backup: pg_basebackup not found" \
    $TB run --config "$T/iback.ini" --db "$T/ib.db"
grep -qF "install postgresql-client-" "$T/err" || fail "no Debian package named: $(cat "$T/err")"
printf "${kv}[infra.d]\nkind = deploy\n" >"$T/idep.ini"
TB_PG_BINDIR="$T/nobin" expect_exit2 "$T/idep.ini:5: [infra.d] deploy: initdb not found" \
    $TB run --config "$T/idep.ini" --db "$T/ib.db"
grep -qF "install postgresql-1" "$T/err" || fail "no Debian package named: $(cat "$T/err")"
# TMPDIR, where the operations' folders go, missing or too long: exit 2 naming it, before anything runs.
printf "${kv}[infra.c]\nkind = command\ncommand = true\n" >"$T/icmd.ini"
TMPDIR="$T/no-such-tmp" expect_exit2 "TMPDIR $T/no-such-tmp: No such file or directory" \
    $TB run --config "$T/icmd.ini" --db "$T/ib.db"
long="$T/$(printf 'd%.0s' {1..250})/$(printf 'e%.0s' {1..250})"
mkdir -p "$long"
TMPDIR="$long" expect_exit2 "TMPDIR is too long a path for their folders (${#long} bytes, at most 466)" $TB run --config "$T/icmd.ini" --db "$T/ib.db"
[ ! -e "$T/ib.db" ] || fail "a run was stored although an operation's program is missing"
echo "PASS test_cli_errors"
