#!/usr/bin/env bash
# test_oltp.sh: the OLTP workload against a real PostgreSQL. The orders table
# grows by exactly the purchases the driver counts (within the orders in
# flight when the level stops), rolled-back purchases change nothing, and
# pg_stat_database's rollbacks stay at zero; a missing database or tile, or more
# users than the server has connections for, fails at start with exit 3 and a
# clear message. Sections 1, 2, 6, 7 and 8 run with each client the workload
# has: the wire client (the default; loadgen/pg_wire.c runs the statements
# libpq prepared) and libpq (`client = libpq`, and any TLS connection);
# 9 to 12 check which one ran, against the server's own count and the bytes
# on the socket. (A PostgreSQL restart in steady state: test_recovery.sh.)
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
PG=$(sed -n 's/^pg = //p' "$T/sut/sut.ini")
q() { psql "$PG" -XAtc "$1"; }
tile() { # extra lines...; CLIENT: the workload's client (wire, the default, or libpq)
    printf '[tile]\nname = oltp\n[workload.oltp]\nkind = oltp\nusers = 5\nthink_time = 50ms\nthink_dist = uniform\n'
    printf 'unit = OPM\nreference = 1000\ntimeout = 5s\nclient = %s\n' "${CLIENT:-wire}"
    printf '%s\n' "$@"
    cat "$T/sut/sut.ini"
}
tile >"$T/oltp.ini"
RUN=(--tiles 1 --ramp-up 0 --warm-up 1s --ramp-down 0 --idle 0 --quiet --db "$T/r.db")
sumop() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"$1\") | .$2] | add" "$T/r.json"; }

orders_check() { # CLIENT
    # 1. orders grow by exactly the committed purchases; rollbacks change nothing
    tile >"$T/oltp.ini"
    orders0=$(q "SELECT count(*) FROM tile1.orders")
    rb0=$(q "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()")
    "$TILEBENCH" run --config "$T/oltp.ini" --steady 4s "${RUN[@]}" >"$T/run1.log" 2>&1 || fail "run: $(cat "$T/run1.log")"
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    sleep 1
    orders1=$(q "SELECT count(*) FROM tile1.orders")
    rb1=$(q "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()")
    purchases=$(sumop Purchase count_all)
    rollbacks=$(sumop Rollback count_all)
    echo "orders +$((orders1 - orders0)), driver: $purchases purchases, $rollbacks rollbacks"
    expect "purchases" "$purchases" -gt 20
    expect "orders added - purchases counted (>= 0)" $((orders1 - orders0 - purchases)) -ge 0
    expect "orders added - purchases counted (<= 5 users in flight)" $((orders1 - orders0 - purchases)) -le 5
    expect "browse ops by kind" "$(jq '[.run.levels[0].workloads[].operations[] | select(.name | startswith("Browse")) | select(.count > 0)] | length' "$T/r.json")" -eq 3
    expect "errors" "$(jq '[.run.levels[0].workloads[].errors] | add' "$T/r.json")" -eq 0
    expect "server rollbacks (a short-stock purchase changes nothing and commits)" $((rb1 - rb0)) -eq 0

    # 2. a stock-out is a Rollback, not an error, and leaves the stock alone
    q "UPDATE tile1.inventory SET quan_in_stock = 0" >/dev/null
    "$TILEBENCH" run --config "$T/oltp.ini" --steady 2s "${RUN[@]}" >"$T/run2.log" 2>&1 || fail "run: $(cat "$T/run2.log")"
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    expect "rollbacks when out of stock" "$(sumop Rollback count_all)" -gt 5
    expect "no purchase when out of stock" "$(sumop Purchase count_all)" -eq 0
    expect "stock untouched" "$(q "SELECT sum(quan_in_stock) FROM tile1.inventory")" -eq 0
    expect "no errors from rollbacks" "$(jq '[.run.levels[0].workloads[].errors] | add' "$T/r.json")" -eq 0
    q "UPDATE tile1.inventory SET quan_in_stock = 1000" >/dev/null
}
for CLIENT in wire libpq; do
    echo "== 1, 2: client $CLIENT"
    orders_check
done
CLIENT=wire
tile >"$T/oltp.ini"
# 3. at start: a database that does not exist, and a tile without data -> exit 3, clear message
sed 's/dbname=tilebench/dbname=nosuchdb/' "$T/oltp.ini" >"$T/nodb.ini"
rc=0; "$TILEBENCH" run --config "$T/nodb.ini" --steady 2s "${RUN[@]}" >"$T/run4.log" 2>&1 || rc=$?
expect "exit for a missing database" "$rc" -eq 3
grep -q 'database "nosuchdb" does not exist' "$T/run4.log" || fail "unclear error: $(cat "$T/run4.log")"
rc=0; timeout 60 "$TILEBENCH" run --config "$T/oltp.ini" --steady 2s --tiles 2 --ramp-up 0 --warm-up 0 --idle 0 \
    --quiet --db "$T/r.db" >"$T/run5.log" 2>&1 || rc=$?
expect "exit for a tile without data" "$rc" -eq 3
grep -q "tile 2 has no OLTP data" "$T/run5.log" || fail "unclear error: $(cat "$T/run5.log")"
# a password with an unquoted blank: libpq cannot read the conninfo, and its message would
# quote the words after the blank; neither the console nor the results file holds them
sed "s/^pg = \(.*\)$/pg = \1 password=ab s3cretXYZ/" "$T/oltp.ini" >"$T/badpw.ini"
rc=0; "$TILEBENCH" run --config "$T/badpw.ini" --steady 2s "${RUN[@]}" >"$T/run3.log" 2>&1 || rc=$?
expect "exit for a conninfo libpq cannot read" "$rc" -eq 3
grep -q "connect (unparsable conninfo): libpq cannot read it" "$T/run3.log" || fail "unclear error: $(cat "$T/run3.log")"
! grep -q s3cretXYZ "$T/run3.log" || fail "the password reached the console: $(cat "$T/run3.log")"
! sqlite3 "$T/r.db" .dump | grep -q s3cretXYZ || fail "the password reached the results file"
# more users than the server has connections for: exit 3 before the level, naming the numbers
# (the embedded SUT for 1 tile has max_connections 120)
sed 's/^users = 5$/users = 500/' "$T/oltp.ini" >"$T/many.ini"
rc=0; "$TILEBENCH" run --config "$T/many.ini" --steady 2s "${RUN[@]}" >"$T/run8.log" 2>&1 || rc=$?
expect "exit when users exceed free connections" "$rc" -eq 3
grep -q "1 tile x 500 users need 500 connections, but the server has [0-9]* free (max_connections 120" "$T/run8.log" ||
    fail "unclear connection-budget error: $(cat "$T/run8.log")"
# 4. a connection string per tile: [sut] pg.tileN overrides pg for that tile
printf 'pg.tile1 = %s\n' "$(echo "$PG" | sed 's/dbname=tilebench/dbname=tile1db/')" >"$T/pertile.sut"
cat "$T/oltp.ini" "$T/pertile.sut" >"$T/pertile.ini"
rc=0; "$TILEBENCH" run --config "$T/pertile.ini" --steady 2s "${RUN[@]}" >"$T/run6.log" 2>&1 || rc=$?
expect "exit when tile 1's own server is wrong" "$rc" -eq 3
grep -q 'tile 1: connect .*dbname=tile1db.*"tile1db" does not exist' "$T/run6.log" || fail "override not used: $(cat "$T/run6.log")"
printf 'pg.tile1 = %s\n' "$PG" >"$T/pertile.sut"
cat "$T/oltp.ini" "$T/pertile.sut" >"$T/pertile.ini"
"$TILEBENCH" run --config "$T/pertile.ini" --steady 2s "${RUN[@]}" >"$T/run7.log" 2>&1 || fail "per-tile run: $(cat "$T/run7.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
expect "orders through the per-tile server" "$(sumop Order count)" -gt 5
# 5. two tiles on one server, named two ways (tile 1 through "localhost", tile 2 through
# 127.0.0.1): their users are counted together against its free connections. Tile 2's data
# is a copy of tile 1's (the probe checks the product count).
psql "$PG" -qc "CREATE SCHEMA tile2; CREATE TABLE tile2.products AS SELECT * FROM tile1.products" ||
    fail "cannot copy tile 1's products to tile 2"
printf 'pg.tile1 = %s\n' "$(echo "$PG" | sed 's/host=127.0.0.1/host=localhost/')" >"$T/twonames.sut"
grep -q "host=localhost" "$T/twonames.sut" || fail "no host=127.0.0.1 in the SUT's conninfo: $PG"
sed 's/^users = 5$/users = 70/' "$T/oltp.ini" | cat - "$T/twonames.sut" >"$T/twonames.ini"
rc=0; "$TILEBENCH" run --config "$T/twonames.ini" --steady 2s --tiles 2 --ramp-up 0 --warm-up 0 --idle 0 --quiet \
    --db "$T/r.db" >"$T/run9.log" 2>&1 || rc=$?
expect "exit when 2 tiles x 70 users exceed one server's free connections" "$rc" -eq 3
grep -q "2 tiles x 70 users need 140 connections, but the server has [0-9]* free (max_connections 120" "$T/run9.log" ||
    fail "the two names of one server were not counted together: $(cat "$T/run9.log")"

# 6. results larger than libpq's read buffer (16 KiB at first) and the wire client's (16 KiB
# per read): each connection's read event is edge-triggered, so a read that leaves bytes in
# the socket must be followed by another (loadgen/oltp.c: socket_has_more for libpq, a full
# read for the wire client), or the op waits for its timeout. Every 20th product gets a
# 30 kB title, and 50 users' point lookups at max rate on one worker hit those 5% of the
# time; with that many sockets ready at once, a result has often arrived whole before its
# socket is read (without the second read, 33 of 50 users timed out).
q "ALTER TABLE tile1.products ALTER COLUMN title TYPE text; UPDATE tile1.products SET title = repeat('x', 30000) WHERE prod_id % 20 = 0" >/dev/null
expect "products with a 30 kB title" "$(q "SELECT count(*) FROM tile1.products WHERE length(title) = 30000")" -ge 400
big_and_idle() { # CLIENT
    tile "mode = point" | sed 's/^users = .*/users = 50/; s/^think_time = .*/think_time = 0/; s/^timeout = .*/timeout = 1s/' >"$T/big.ini"
    "$TILEBENCH" run --config "$T/big.ini" --threads 1 --steady 2s "${RUN[@]}" >"$T/run10.log" 2>&1 ||
        fail "big results run: $(cat "$T/run10.log")"
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    echo "6: $(sumop Point count_all) point lookups, 5% of them 30 kB results; $(sumop Point errors) errors"
    expect "point lookups with 30 kB results among them (>= 1000: 50 big ones expected)" "$(sumop Point count_all)" -ge 1000
    expect "no error or timeout with results larger than the read buffer" "$(sumop Point errors)" -eq 0
    # 7. the server closes idle connections (pg_terminate_backend between two ops of
    # every user): PostgreSQL's FATAL message and its close may come in one report of the
    # edge-triggered event, with no edge after it; the client must see the close then
    # (EV_CLOSED) and connect afresh for the next op, as it did with a level-triggered
    # event, so no op fails. A lookup every 4 s per user; the idle backends are
    # terminated 2 s after the launch.
    tile "mode = point" | sed 's/^think_time = .*/think_time = 4s/; s/^think_dist = .*/think_dist = fixed/' >"$T/idle.ini"
    "$TILEBENCH" run --config "$T/idle.ini" --threads 1 --steady 6s "${RUN[@]}" >"$T/run11.log" 2>&1 &
    RUNPID=$!
    sleep 2
    killed=$(q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'tilebench' AND state = 'idle'")
    wait "$RUNPID" || fail "idle-close run: $(cat "$T/run11.log")"
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    echo "7: $killed idle connections terminated; $(sumop Point count_all) point lookups, $(sumop Point errors) errors"
    expect "idle connections terminated between ops" "$killed" -eq 5
    expect "point lookups before and after the close" "$(sumop Point count_all)" -ge 10
    expect "no op failed after an idle close" "$(sumop Point errors)" -eq 0
}
for CLIENT in wire libpq; do
    echo "== 6, 7: client $CLIENT"
    big_and_idle
done

# 8. a statement the server refuses in mid-run: changing the type of a column the lookup
# returns makes every later run of the prepared statement fail ("cached plan must not
# change result type"). Each such lookup is a server error, the reply still ends in its
# ReadyForQuery, so the connection stays in step: no timeout, no I/O error, and the
# lookups go on failing at the same pace. The type changes 1.5 s into steady state (timed
# on the run's own record that its level began) and goes back after each client.
refused() { # CLIENT
    tile "mode = point" | sed 's/^think_time = .*/think_time = 20ms/' >"$T/refused.ini"
    "$TILEBENCH" run --config "$T/refused.ini" --threads 1 --steady 4s "${RUN[@]}" >"$T/run12.log" 2>&1 &
    RUNPID=$!
    wait_steady "$T/r.db" 1 "$RUNPID" # ramp-up (0) and the 1 s warm-up begin
    sleep 2.5
    q "ALTER TABLE tile1.products ALTER COLUMN price TYPE numeric(14,2)" >/dev/null
    wait "$RUNPID" || fail "refused-statement run: $(cat "$T/run12.log")"
    q "ALTER TABLE tile1.products ALTER COLUMN price TYPE numeric(12,2)" >/dev/null
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    cls() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"Point\") | .errors_by_class.$1] | add" "$T/r.json"; }
    echo "8: $(sumop Point count) lookups in steady state, server errors $(cls server), io $(cls io), timeouts $(cls timeout)"
    expect "lookups before the change" "$(sumop Point count)" -ge 100
    expect "server errors after it (5 users, 20 ms apart, about 2 s)" "$(cls server)" -ge 100
    expect "no I/O error: the reply ended in step" "$(cls io)" -eq 0
    expect "no timeout" "$(cls timeout)" -eq 0
    expect "no content error" "$(cls content)" -eq 0
}
for CLIENT in wire libpq; do
    echo "== 8: client $CLIENT"
    refused
done

# 9. the server's own count: each lookup is one transaction, so pg_stat_database's
# xact_commit grows by the lookups the client counted (all phases), plus one PREPARE per
# connection, the lookups in flight at the end (up to one per user) and the probe's and
# psql's own statements: 20 to 22 in all here, against some 280,000 lookups (the counter
# is the server's, read after the run's connections closed).
CLIENT=wire
tile "mode = point" | sed 's/^think_time = .*/think_time = 0/' >"$T/count.ini"
c0=$(q "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
"$TILEBENCH" run --config "$T/count.ini" --threads 1 --steady 3s "${RUN[@]}" >"$T/run13.log" 2>&1 ||
    fail "count run: $(cat "$T/run13.log")"
sleep 1.5
c1=$(q "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
n=$(sumop Point count_all)
echo "9: client counted $n lookups; the server committed $((c1 - c0)) transactions"
expect "lookups at max rate" "$n" -ge 5000
expect "server commits - lookups counted (>= 0: none counted twice)" $((c1 - c0 - n)) -ge 0
expect "server commits - lookups counted (<= 40: 5 PREPAREs, 5 in flight, the probe's, psql's)" $((c1 - c0 - n)) -le 40

# 10. which client ran: the wire client sends Bind, Execute and Sync and no Describe;
# libpq adds a Describe of the portal ('D', length 6, 'P', the unnamed portal). Under
# strace (ptrace), LeakSanitizer cannot run: a sanitizer build checks leaks in the other runs.
STRACE_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
sends() { # CLIENT: the run's sends, as strace shows them
    tile "mode = point" | sed 's/^think_time = .*/think_time = 100ms/' >"$T/strace.ini"
    ASAN_OPTIONS=$STRACE_ASAN strace -f -e trace=sendto -s 80 -o "$T/strace.$CLIENT" "$TILEBENCH" run --config "$T/strace.ini" --threads 1 \
        --steady 1s "${RUN[@]}" >"$T/run14.log" 2>&1 || fail "strace run: $(cat "$T/run14.log")"
    grep 'sendto(.*"B\\0\\0\\0.*tb_point' "$T/strace.$CLIENT" | wc -l
}
n_wire=$(CLIENT=wire sends)
n_libpq=$(CLIENT=libpq sends)
expect "the wire client's Bind messages" "$n_wire" -ge 20
expect "Bind messages with libpq" "$n_libpq" -ge 20
expect "no Describe from the wire client" "$(grep -c 'tb_point.*D\\0\\0\\0\\6P' "$T/strace.wire" || true)" -eq 0
expect "a Describe with every libpq Bind" "$(grep -c 'tb_point.*D\\0\\0\\0\\6P' "$T/strace.libpq" || true)" -eq "$n_libpq"

# 11. TLS: with the default client (wire), libpq runs the statements (the socket's bytes
# are encrypted), and the lookups work. The server gets a self-signed certificate and ssl = on.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -keyout "$T/sut/pg/server.key" \
    -out "$T/sut/pg/server.crt" >/dev/null 2>&1 || fail "openssl could not make a certificate"
chmod 600 "$T/sut/pg/server.key"
chown --reference="$T/sut/pg" "$T/sut/pg/server.key" "$T/sut/pg/server.crt"
q "ALTER SYSTEM SET ssl = on" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
for ((i = 0; i < 50; i++)); do # the reload is asynchronous
    [ "$(psql "$PG sslmode=require" -XAtc "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()" 2>/dev/null)" = t ] && break
    sleep 0.2
done
expect "the server offers TLS" "$(psql "$PG sslmode=require" -XAtc "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")" = t
CLIENT=wire tile "mode = point" | sed 's/^think_time = .*/think_time = 100ms/' |
    sed "s/^pg = \(.*\)$/pg = \1 sslmode=require/" >"$T/tls.ini"
grep -q '^client = wire$' "$T/tls.ini" && grep -q 'sslmode=require' "$T/tls.ini" || fail "tls.ini: $(cat "$T/tls.ini")"
ASAN_OPTIONS=$STRACE_ASAN strace -f -e trace=sendto -s 80 -o "$T/strace.tls" "$TILEBENCH" run --config "$T/tls.ini" --threads 1 --steady 1s \
    "${RUN[@]}" >"$T/run15.log" 2>&1 || fail "TLS run: $(cat "$T/run15.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
expect "lookups over TLS" "$(sumop Point count_all)" -ge 20
expect "errors over TLS" "$(sumop Point errors)" -eq 0
expect "no plaintext Bind over TLS" "$(grep -c 'tb_point' "$T/strace.tls" || true)" -eq 0

# 12. a client the workload does not have: exit 2 before any server is touched
tile "client = odbc" | sed '/^client = wire$/d' >"$T/bad.ini"
rc=0; "$TILEBENCH" run --config "$T/bad.ini" --steady 1s "${RUN[@]}" >"$T/run16.log" 2>&1 || rc=$?
expect "exit for an unknown client" "$rc" -eq 2
grep -q "client: 'odbc': use wire (the default) or libpq" "$T/run16.log" || fail "unclear error: $(cat "$T/run16.log")"
echo "PASS test_oltp"
