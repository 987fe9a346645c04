#!/usr/bin/env bash
# test_oltp_faults.sh: the oltp workload's wire client recovers from a reply
# PostgreSQL itself never sends. tests/tools/pg_faults.py stands in for the
# server: its first 3 replies to a point lookup (one per user, in warm-up) are
# broken in one way (MODE), every later one is normal. Each broken reply costs
# its user the connection (and that op, or the next one: idlehalf and extra
# hold a whole row first); the user connects afresh, and with a clean reader
# (drop_conn resets it) its next lookups succeed. Before that
# reset, the rest of a cut-off or malformed reply stayed in the reader, and
# the user failed every op to the end of the run: 0 lookups in steady state
# for garbage, reset, midstall, unknown, biglen, idlehalf and extra.
# Per mode, in the 3 s steady state (3 users, 20 ms apart: about 440 lookups
# when every reply is normal):
#   - the run exits 0 (within timeout(1)'s 60 s: no hang)
#   - lookups >= 100 (recovered; the code without the reset made 0)
#   - errors <= 6 (the broken replies come as warm-up starts, so they are not
#     in it; but midstall's end at the op timeout, 1 s later, with the steady
#     state: room for each user's broken reply and one more)
#   - the lookups counted over the whole run <= the replies the server sent
#     with a whole row in them (a broken reply is never counted a success,
#     nor one reply twice)
# Also a run with libpq as the client (garbage: it must recover too), and an
# all-normal run as the baseline (no error at all).
source "$(dirname "$0")/lib.sh"

RUN=(--tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 --idle 0 --quiet --meter estimate: --threads 1
    --db "$T/r.db")
FAKE_PID=
# stop_fake: SIGTERM to the fake server, which writes its counters to
# $T/pg.stats as it exits; sets FAKE_RC, its exit status (0: it was up to the end).
stop_fake() {
    FAKE_RC=0
    [ -n "$FAKE_PID" ] || return 0
    kill -TERM "$FAKE_PID" 2>/dev/null || true
    wait "$FAKE_PID" || FAKE_RC=$?
    FAKE_PID=
}
at_exit stop_fake

# start_fake MODE: pg_faults.py with MODE for the first BAD (3) replies, on a free
# loopback port (sets FAKE_PORT). A server that does not start fails the test.
start_fake() {
    local mode=$1 i
    rm -f "$T/pg.port" "$T/pg.stats"
    /usr/bin/python3 "$TB_SOURCE_DIR/tests/tools/pg_faults.py" --portfile "$T/pg.port" --stats "$T/pg.stats" \
        --mode "$mode" --bad "${BAD:-3}" 2>"$T/pg-$mode.log" &
    FAKE_PID=$!
    for ((i = 0; i < 100; i++)); do
        [ -s "$T/pg.port" ] && break
        kill -0 "$FAKE_PID" 2>/dev/null || fail "pg_faults.py ($mode) exited at start: $(cat "$T/pg-$mode.log")"
        sleep 0.05
    done
    [ -s "$T/pg.port" ] || fail "pg_faults.py ($mode) did not listen within 5 s: $(cat "$T/pg-$mode.log")"
    FAKE_PORT=$(cat "$T/pg.port")
}

op() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"Point\") | .$1] | add" "$T/r.json"; }
server() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$T/pg.stats"; }

# run_mode MODE [CLIENT]: one run against the fake server in MODE; the
# report in $T/r.json, the server's counters in $T/pg.stats
run_mode() {
    local mode=$1 client=${2:-wire} rc=0 log="$T/run-$1-${2:-wire}.log"
    start_fake "$mode"
    {
        printf '[tile]\nname = faults\n[workload.oltp]\nkind = oltp\nmode = point\nusers = 3\n'
        printf 'think_time = 20ms\nthink_dist = fixed\ntimeout = 1s\nunit = ops/s\nreference = 1\nclient = %s\n' "$client"
        printf '[sut]\npg = host=127.0.0.1 port=%s dbname=x user=u\n' "$FAKE_PORT"
    } >"$T/faults.ini"
    timeout 60 "$TILEBENCH" run --config "$T/faults.ini" "${RUN[@]}" >"$log" 2>&1 || rc=$?
    stop_fake
    [ "$rc" -eq 0 ] || fail "$mode ($client): tilebench exited $rc (124: hung): $(tail -5 "$log")"
    [ "$FAKE_RC" -eq 0 ] || fail "$mode ($client): pg_faults.py had exited ($FAKE_RC): $(tail -5 "$T/pg-$mode.log")"
    if grep -q Traceback "$T/pg-$mode.log"; then fail "$mode ($client): pg_faults.py: $(cat "$T/pg-$mode.log")"; fi
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json" || fail "$mode ($client): no report"
    echo "$mode ($client): steady lookups $(op count), errors $(op errors) $(jq -c '[.run.levels[0].workloads[].operations[] | select(.name=="Point") | .errors_by_class][0]' "$T/r.json"); whole run $(op count_all); server: $(cat "$T/pg.stats")"
    expect "$mode ($client): broken replies sent" "$(server faults)" -eq "$([ -n "${BAD:-}" ] && server faults || echo 3)"
    expect "$mode ($client): lookups counted <= replies with a whole row" "$(op count_all)" -le "$(server results)"
}

# 1. the baseline: every reply normal (the first 3 too), no error
run_mode normal
expect "normal: steady-state lookups" "$(op count)" -ge 100
expect "normal: errors" "$(op errors)" -eq 0

# 2. one broken reply per user, each mode in turn; the user recovers
# (TB_FAULT_MODES="reset extra" runs just those, e.g. to see each one fail)
for mode in ${TB_FAULT_MODES:-garbage reset midstall unknown biglen idlehalf fatal fatalz extra}; do
    run_mode "$mode"
    expect "$mode: steady-state lookups (recovered)" "$(op count)" -ge 100
    expect "$mode: steady-state errors" "$(op errors)" -le 6
done

# 3. libpq as the client (it keeps its own reader): garbage, recovered as well
run_mode garbage libpq
expect "garbage (libpq): steady-state lookups (recovered)" "$(op count)" -ge 100
expect "garbage (libpq): steady-state errors" "$(op errors)" -le 6

# 4. a FATAL is the end of the connection even when a ReadyForQuery follows it (fatalz on
# every reply): each lookup is an I/O error with a new connection, never a server error
# on a connection kept (the client that took the ReadyForQuery as the statement's end
# counted 54 server errors in such a run)
BAD=1000000 run_mode fatalz
cls() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"Point\") | .errors_by_class.$1] | add" "$T/r.json"; }
expect "fatalz on every reply: server errors" "$(cls server)" -eq 0
expect "fatalz on every reply: I/O errors" "$(cls io)" -ge 10
echo "PASS test_oltp_faults"
