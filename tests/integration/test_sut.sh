#!/usr/bin/env bash
# test_sut.sh: `tilebench sut up/status/down` against the real Debian servers.
# Starts the embedded SUT (PostgreSQL + Redis + Dovecot) with 2 tiles in a temporary
# folder on free loopback ports, checks the data and stored functions through
# psql with the conninfo from sut.ini, checks Redis with redis-cli, Dovecot's
# IMAP and LMTP greetings and a LOGIN with the generated password, checks the
# usage errors (port in use, PostgreSQL missing), then stops it and checks that
# the processes and ports are gone. A SUT that cannot start fails the test.
#
# Environment: TILEBENCH (path of the binary), TB_SOURCE_DIR (source tree).
set -euo pipefail

: "${TILEBENCH:?set TILEBENCH to the tilebench binary}"
: "${TB_SOURCE_DIR:?set TB_SOURCE_DIR to the source tree}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
    if [[ "$3" != "$2" ]]; then fail "$1: expected '$2', got '$3'"; fi
    echo "ok: $1 = $3"
}

# expect_contains WHAT NEEDLE HAYSTACK
expect_contains() {
    if [[ "$3" != *"$2"* ]]; then fail "$1: expected output containing '$2', got: $3"; fi
    echo "ok: $1 mentions '$2'"
}

for tool in psql redis-cli; do
    command -v "$tool" >/dev/null || fail "$tool not found: install postgresql-client and redis-tools"
done

work=$(mktemp -d)
# sanitizer reports go to files here, one per process, and fail the test (see cleanup)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$work/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$work/ubsan:print_stacktrace=1"
# As root PostgreSQL runs as user postgres, which must be able to enter the folder.
chmod 755 "$work"
sut="$work/sut"
other="$work/other"

cleanup() {
    local rc=$?
    "$TILEBENCH" sut down --dir "$other" >/dev/null 2>&1 || true
    "$TILEBENCH" sut down --dir "$sut" >/dev/null 2>&1 || true
    # sanitizer reports of the processes started here, the web apps included (as lib.sh)
    if compgen -G "$work/[au]*san.*" >/dev/null; then
        for f in "$work"/[au]*san.*; do echo "== sanitizer report $f" >&2; head -60 "$f" >&2; done
        echo "FAIL: sanitizer reports from the processes this test started (above)" >&2
        [[ $rc -ne 0 ]] || rc=1
    fi
    if [[ $rc -ne 0 ]]; then
        for log in "$sut/pg.log" "$sut/redis.log" "$sut/dovecot.log"; do
            [[ -f "$log" ]] && { echo "--- last lines of $log" >&2; tail -n 20 "$log" >&2; }
        done
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT

# 1. up with 2 tiles.
if ! out=$("$TILEBENCH" sut up --tiles 2 --dir "$sut" 2>&1); then
    fail "sut up --tiles 2: expected exit 0; output: $out"
fi
echo "$out"
expect_contains "sut up output" "$sut/sut.ini" "$out"

ini="$sut/sut.ini"
[[ -f "$ini" ]] || fail "expected $ini to exist"
grep -qx '\[sut\]' "$ini" || fail "expected a [sut] section in $ini"
conninfo=$(sed -n 's/^pg = //p' "$ini")
redis_ep=$(sed -n 's/^redis = //p' "$ini")
[[ -n "$conninfo" ]] || fail "expected 'pg = <conninfo>' in $ini"
[[ "$redis_ep" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'redis = 127.0.0.1:PORT' in $ini, got '$redis_ep'"
pg_port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$conninfo")
redis_port=${redis_ep##*:}
expect_contains "conninfo" "host=127.0.0.1" "$conninfo"
imap_ep=$(sed -n 's/^imap = //p' "$ini")
lmtp_ep=$(sed -n 's/^lmtp = //p' "$ini")
pwfile=$(sed -n 's/^mail_password_file = //p' "$ini")
[[ "$imap_ep" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'imap = 127.0.0.1:PORT' in $ini, got '$imap_ep'"
[[ "$lmtp_ep" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'lmtp = 127.0.0.1:PORT' in $ini, got '$lmtp_ep'"
expect_eq "mail_user pattern" 'tile%t-user%u' "$(sed -n 's/^mail_user = //p' "$ini")"
[[ -s "$pwfile" ]] || fail "expected mail_password_file '$pwfile' to hold the password"
expect_eq "mail password file mode" 600 "$(stat -c %a "$pwfile")"
imap_port=${imap_ep##*:}
lmtp_port=${lmtp_ep##*:}

# 2. status: one line per service, all up.
status=$("$TILEBENCH" sut status --dir "$sut") || fail "sut status: expected exit 0 (all up), output: $status"
echo "$status"
expect_eq "services up" 3 "$(grep -cE '^(postgresql|redis|dovecot) +up ' <<<"$status")"
expect_eq "web apps up (one per tile)" 2 "$(grep -cE '^web\.tile[12] +up ' <<<"$status")"
pids=$(awk '{for (i = 1; i < NF; i++) if ($i == "pid") print $(i + 1)}' <<<"$status")
expect_eq "pids listed" 5 "$(wc -w <<<"$pids")"

# 3. OLTP data and functions, through the endpoint in sut.ini.
q() { psql -X -v ON_ERROR_STOP=1 -At "$conninfo" -c "$1"; }
expect_eq "tile1 customers" 20000 "$(q 'SELECT count(*) FROM tile1.customers')"
# sized for the tiles: 100 + 20 per tile (a fixed 1000 let only 71 standard tiles connect)
expect_eq "max_connections for 2 tiles" 140 "$(q 'SHOW max_connections')"
expect_eq "tile2 customers" 20000 "$(q 'SELECT count(*) FROM tile2.customers')"
expect_eq "tile1 products" 10000 "$(q 'SELECT count(*) FROM tile1.products')"
expect_eq "tile2 products" 10000 "$(q 'SELECT count(*) FROM tile2.products')"
expect_eq "tile1 categories" 16 "$(q 'SELECT count(DISTINCT category) FROM tile1.products')"
# DS2 small order history: 12 months x 1,000 orders, 1..9 lines each; each tile's own draw
expect_eq "tile1 history orders" 12000 "$(q 'SELECT count(*) FROM tile1.orders')"
expect_eq "tile2 history orders" 12000 "$(q 'SELECT count(*) FROM tile2.orders')"
expect_eq "history lines = cust_hist rows" "$(q 'SELECT count(*) FROM tile1.orderlines')" "$(q 'SELECT count(*) FROM tile1.cust_hist')"
[ "$(q 'SELECT sum(totalamount) FROM tile1.orders')" != "$(q 'SELECT sum(totalamount) FROM tile2.orders')" ] ||
    fail "tiles 1 and 2 have the same order history: the seed is not per tile"
echo "ok: order history differs between tiles"
expect_eq "login user42" 42 "$(q "SELECT tile1.login('user42', 'password')")"
expect_eq "login with a wrong password" 0 "$(q "SELECT tile1.login('user42', 'nope')")"
expect_eq "new_customer with a taken username" 0 "$(q "SELECT tile1.new_customer('A', 'B', 'user7', 'pw')")"

# Product 10 has 60 in stock, product 11 has 61 (50 + id % 200).
stock_before=$(q 'SELECT string_agg(quan_in_stock::text, $$,$$ ORDER BY prod_id) FROM tile1.inventory WHERE prod_id IN (10, 11, 12, 13)')
expect_eq "tile1 stock of products 10..13" "60,61,62,63" "$stock_before"
orderid=$(q 'SELECT tile1.purchase(5, ARRAY[10, 11], ARRAY[2, 1])')
[[ "$orderid" =~ ^[0-9]+$ && "$orderid" -gt 0 ]] || fail "purchase of small quantities: expected an orderid > 0, got '$orderid'"
echo "ok: purchase returned orderid $orderid"
expect_eq "stock after the purchase" "58,60,62,63" \
    "$(q 'SELECT string_agg(quan_in_stock::text, $$,$$ ORDER BY prod_id) FROM tile1.inventory WHERE prod_id IN (10, 11, 12, 13)')"
expect_eq "orderlines of order $orderid" 2 "$(q "SELECT count(*) FROM tile1.orderlines WHERE orderid = $orderid")"
expect_eq "tile2 orders untouched" 12000 "$(q 'SELECT count(*) FROM tile2.orders')"

expect_eq "purchase beyond stock" 0 "$(q 'SELECT tile1.purchase(5, ARRAY[12, 13], ARRAY[1, 1000])')"
expect_eq "stock after the short purchase" "58,60,62,63" \
    "$(q 'SELECT string_agg(quan_in_stock::text, $$,$$ ORDER BY prod_id) FROM tile1.inventory WHERE prod_id IN (10, 11, 12, 13)')"
expect_eq "orders after the short purchase" 12001 "$(q 'SELECT count(*) FROM tile1.orders')"

# 4. Redis answers.
expect_eq "redis PING" PONG "$(redis-cli -h 127.0.0.1 -p "$redis_port" PING)"

# 4b. Dovecot: greetings, a login with the generated password, and a wrong one.
imap_login() { # user password -> the tagged reply line
    local line
    exec 5<>"/dev/tcp/127.0.0.1/$imap_port"
    IFS= read -r -t 5 line <&5 || true
    [[ "$line" == "* OK"* ]] || fail "IMAP greeting: expected '* OK ...', got '$line'"
    printf 'a1 LOGIN "%s" "%s"\r\na2 LOGOUT\r\n' "$1" "$2" >&5
    while IFS= read -r -t 5 line <&5; do
        if [[ "$line" == a1\ * ]]; then echo "${line%$'\r'}"; break; fi
    done
    exec 5<&-
}
expect_contains "IMAP LOGIN tile2-user7 with the generated password" "a1 OK" "$(imap_login tile2-user7 "$(cat "$pwfile")")"
expect_contains "IMAP LOGIN with a wrong password" "a1 NO" "$(imap_login tile1-user1 wrong)"
exec 5<>"/dev/tcp/127.0.0.1/$lmtp_port"
IFS= read -r -t 5 line <&5 || true
exec 5<&-
expect_contains "LMTP greeting" "220 " "$line"
[[ -d "$sut/mail" ]] || fail "expected the maildir root $sut/mail"
expect_eq "maildir root owner" "nobody" "$(stat -c %U "$sut/mail")"

# 5. Usage errors exit 2 and say why.
set +e
out=$("$TILEBENCH" sut up --dir "$other" --pg-port "$pg_port" 2>&1)
rc=$?
set -e
expect_eq "exit status of a second SUT on the same --pg-port" 2 "$rc"
expect_contains "second SUT on port $pg_port" "in use" "$out"

set +e
out=$(TB_PG_BINDIR=/nonexistent "$TILEBENCH" sut up --dir "$other" 2>&1)
rc=$?
set -e
expect_eq "exit status with TB_PG_BINDIR=/nonexistent" 2 "$rc"
expect_contains "missing PostgreSQL" "PostgreSQL" "$out"
[[ ! -f "$other/sut.state" ]] || fail "expected no sut.state after failed starts, found $other/sut.state"

# A one-shot tool that fails (initdb here): its output lands in pg.log, the
# error names it with its exit status and last line, and what up had already
# started (Redis, Dovecot) is stopped again.
fakepg="$work/fakepg"
mkdir -p "$fakepg"
printf '#!/bin/sh\necho "fake initdb: first line"\necho "fake initdb: cannot go on" >&2\nexit 3\n' >"$fakepg/initdb"
printf '#!/bin/sh\nexit 1\n' >"$fakepg/postgres"
chmod 755 "$fakepg" "$fakepg/initdb" "$fakepg/postgres"
set +e
out=$(TB_PG_BINDIR="$fakepg" "$TILEBENCH" sut up --dir "$other" 2>&1)
rc=$?
set -e
expect_eq "exit status when initdb fails" 3 "$rc"
expect_contains "failing initdb" "initdb failed (status 3), see $other/pg.log: fake initdb: cannot go on" "$out"
grep -q "fake initdb: first line" "$other/pg.log" || fail "expected initdb's output in $other/pg.log"
echo "ok: initdb's output is in pg.log"
[[ ! -f "$other/sut.state" ]] || fail "expected no sut.state after a failed initdb, found $other/sut.state"
if pgrep -f "$other/redis.conf" >/dev/null || pgrep -f "$other/dovecot.conf" >/dev/null; then
    fail "after a failed initdb: expected the Redis and Dovecot that up started in $other to be stopped"
fi
echo "ok: Redis and Dovecot stopped after the failed initdb"

# 6. down stops exactly what up started.
"$TILEBENCH" sut down --dir "$sut" || fail "sut down: expected exit 0"
for pid in $pids; do
    # A stopped server may linger as a zombie until init reaps it; that is gone.
    state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
    [[ -z "$state" || "$state" == Z* ]] || fail "after down: expected pid $pid to be gone, it is '$state'"
done
echo "ok: pids $(echo $pids) gone"
for port in "$pg_port" "$redis_port" "$imap_port" "$lmtp_port"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        fail "after down: expected port $port to be closed, it accepts connections"
    fi
done
echo "ok: ports $pg_port, $redis_port, $imap_port and $lmtp_port closed"
set +e
"$TILEBENCH" sut status --dir "$sut" >/dev/null 2>&1
rc=$?
set -e
expect_eq "status exit after down" 3 "$rc"

# 7. Regression: down never signals a pid that is not the process up started
# (pid reuse). Fake a state file naming a live sleep with a wrong start time.
mkdir -p "$work/stale"
sleep 300 &
sleeper=$!
printf 'postgresql %d 1 5432 /usr/lib/postgresql/15/bin/postgres\nredis %d 1 6379 /usr/bin/redis-server\n' \
    "$sleeper" "$sleeper" >"$work/stale/sut.state"
"$TILEBENCH" sut down --dir "$work/stale" >/dev/null || fail "sut down on a stale state: expected exit 0"
kill -0 "$sleeper" 2>/dev/null || fail "sut down killed pid $sleeper, which it did not start"
kill "$sleeper"
wait "$sleeper" 2>/dev/null || true
echo "ok: a reused pid was left alone"

echo "PASS: test_sut"
