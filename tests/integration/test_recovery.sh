#!/usr/bin/env bash
# test_recovery.sh: users reconnect and keep working inside the level in which
# their server was killed and restarted. Two one-level runs against the embedded
# SUT; each kill is timed on the run's own record that steady state began (its
# "ramp-up and warm-up" event), never on a sleep from launch:
#  A. kv + mail + oltp: Redis, then Dovecot, then PostgreSQL are each killed,
#     kept down for OUTAGE, and restarted, one after the other in one steady
#     state. Each workload talks to its own server only, so its errors come
#     from its own outage.
#  B. web: tile 1's reference web app is killed and restarted in steady state
#     (alone: it needs PostgreSQL and Redis, whose outages would add 503s).
# After each restart, while the level is still in steady state, the server's
# own counters must move: Redis INFO commandstats GET+SET calls (a restarted
# Redis counts from 0), kv keys and every user connected again; messages appended over
# IMAP and delivered over LMTP into the maildirs after the restart, and every
# mail user logged in again (dovecot.log); new rows in tile1.orders and every
# user connected again (pg_stat_activity); the app's /stats request count (a
# restarted app counts from 0). The times of these readings are checked
# against the level's stored steady window. Then the level's stored errors for
# each workload are > 0 and within a bound from the measured outage (see
# bound_*), which users retrying without back-off exceed. The killed web app's
# log must hold no sanitizer report (it exits on SIGTERM).
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
SUT="$T/sut/sut.ini"
PG=$(sed -n 's/^pg = //p' "$SUT")
REDIS=$(sed -n 's/^redis = //p' "$SUT")
RP=${REDIS##*:}
IMAP=$(sed -n 's/^imap = //p' "$SUT")
W1=$(sed -n 's/^web\.tile1 = //p' "$SUT")
OUTAGE=1 # seconds each server stays down: every user tries (and fails) at least once meanwhile
KV_USERS=4 MAIL_USERS=4 OLTP_USERS=4 WEB_USERS=4
q() { psql "$PG" -XAtc "$1"; }
rcli() { redis-cli -p "$RP" "$@"; }
now() { echo "$EPOCHREALTIME"; }
# wait_for WHAT SECONDS COMMAND...: polls every 0.1 s until COMMAND succeeds;
# on time-out the failure shows COMMAND's last output
wait_for() {
    local what=$1 n=$(($2 * 10)) i out=
    shift 2
    for ((i = 0; i < n; i++)); do out=$("$@" 2>&1) && return 0; sleep 0.1; done
    fail "$what: not within $((n / 10)) s (last: ${out//$'\n'/ })"
}
# gone PID: exited (a zombie counts: pid 1 may be slow to reap what sut up left it)
gone() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
    [[ $st == Z* ]]
}
RUNPID=
at_exit '[ -n "$RUNPID" ] && kill "$RUNPID" 2>/dev/null'
# start_run NAME INI STEADY: the run in the background; returns when steady state has begun
start_run() {
    "$TB" run --config "$2" --tiles 1 --ramp-up 0 --warm-up 1s --steady "$3" --ramp-down 0 --idle 0 --quiet \
        --db "$T/$1.db" >"$T/$1-run.log" 2>&1 &
    RUNPID=$!
    wait_steady "$T/$1.db" 1 "$RUNPID" # the run's own record that steady state began
    echo "ok: $1: steady state began (run's event)"
}
# the level's steady window as stored (whole seconds, UTC) -> epoch seconds
stored_window() {
    local s
    s=$(sqlite3 -readonly "$T/$1.db" "SELECT strftime('%s', steady_start), strftime('%s', steady_end) FROM levels")
    echo "${s/|/ }"
}
# in_window NAME TIME WHAT: TIME (epoch, fractional) lies inside the stored steady window
in_window() {
    local s e
    read -r s e < <(stored_window "$1")
    expect_true "$3 at $2 after steady start $s" "$2" ". >= $s"
    expect_true "$3 at $2 before steady end $e (whole seconds, rounded down)" "$2" ". < $e"
}
werrors() {
    echo "$2: errors by op: $(jq -c "[.run.levels[0].workloads[] | select(.name==\"$2\") | .operations[] |
        select(.errors > 0) | {(.name): .errors}] | add" "$T/$1.json")" >&2
    jq "[.run.levels[0].workloads[] | select(.name==\"$2\") | .errors] | add" "$T/$1.json"
}
# bound_backoff USERS ERRS_PER_FAILED_OP OUTAGE_S: a user that lost its server
# fails the op in flight (or the next one) and, backing off 100 ms doubling
# (loadgen), retries at 0.1, 0.3, 0.7, 1.5 ... s after: at most
# floor(log2(10*D + 1)) + 1 retries fall inside an outage of D s. Two more
# for a statement the server ended and the next op finding the dead socket.
bound_backoff() {
    awk -v u="$1" -v e="$2" -v d="$3" 'BEGIN { print u * e * (3 + int(log(10 * d + 1) / log(2)) + 1) }'
}
# bound_paced USERS PERIOD_S OUTAGE_S: a user without back-off tries once per
# period (cycle_time or send_interval), plus the action in flight and one
# straddling the restart.
bound_paced() { awk -v u="$1" -v p="$2" -v d="$3" 'BEGIN { print u * (int(d / p) + 3) }'; }
# bound_poisson USERS MEAN_S OUTAGE_S: deliveries come at negexp gaps (mean
# send_interval): twice their expected number in the outage, plus 3 per user
# (a Poisson count of mean 16 exceeds 2 x 16 + 12 with chance below 1e-8).
bound_poisson() { awk -v u="$1" -v p="$2" -v d="$3" 'BEGIN { print int(2 * u * d / p) + 3 * u }'; }

# ---- the servers' own counters: each prints what it saw, and succeeds when
# the users are back (for the *_back checks) ----
MAILDIR="$T/sut/mail"
cmdcalls() { rcli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_\(get\|set\):calls=\([0-9]*\),.*/\2/p' |
    awk '{ s += $1 } END { print s + 0 }'; }
clients() { rcli INFO clients | tr -d '\r' | sed -n 's/^connected_clients://p'; }
kvkeys() { rcli --scan --pattern 't1:k*' | wc -l; }
# redis_back OP: GET+SET calls, kv keys, and clients OP kv users + 1 (this
# redis-cli). Before the kill the web app holds connections to this Redis
# too (-ge); run A sends it no request, so after the restart it has none (-eq).
redis_back() {
    local c k n
    c=$(cmdcalls) k=$(kvkeys) n=$(clients)
    echo "GET+SET calls $c, kv keys $k, clients $n"
    [ "$c" -gt 0 ] && [ "$k" -gt 0 ] && [ "$n" "$1" $((KV_USERS + 1)) ]
}
msgs_since() { # MARKER [-L|-l] : messages written after MARKER, with (-l) or without (-L) a Delivered-To header
    find "$MAILDIR" -type f \( -path '*/new/*' -o -path '*/cur/*' \) -newer "$1" -print0 |
        xargs -0r grep "$2" -m1 '^Delivered-To:' | wc -l
}
logins_since() { tail -c +"$(($1 + 1))" "$T/sut/dovecot.log" | sed -n 's/.* imap-login: Info: Login: user=<\([^>]*\)>.*/\1/p' |
    sort -u | wc -l; }
dovecot_back() {
    local a d l
    a=$(msgs_since "$1" -L) d=$(msgs_since "$1" -l) l=$(logins_since "$2")
    echo "$a appended and $d delivered messages, $l users logged in"
    [ "$a" -gt 0 ] && [ "$d" -gt 0 ] && [ "$l" -eq "$MAIL_USERS" ]
}
orders() { q "SELECT count(*) FROM tile1.orders"; }
conns() { q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tilebench' AND datname = 'tilebench'"; }
pg_back() {
    local o c
    o=$(orders) c=$(conns)
    echo "tile1.orders $o (was $1), $c user sessions"
    [ "$o" -gt "$1" ] && [ "$c" -eq "$OLTP_USERS" ]
}
requests() { curl -fs "$W1/stats" | jq .requests; }
web_back() {
    local r
    r=$(requests)
    echo "$r requests"
    [ "$r" -gt "$1" ]
}

# ---------------- A. Redis, Dovecot and PostgreSQL in one steady state ----------------
{
    printf '[tile]\nname = recovery\n'
    printf '[workload.kv]\nkind = kv\nusers = %d\nthink_time = 50ms\nthink_dist = uniform\nset_pct = 50\n' $KV_USERS
    printf 'reference = 40\nunit = ops/s\ntimeout = 1s\n'
    printf '[workload.mail]\nkind = mail\nusers = %d\ncycle_time = 200ms\nsend_interval = 300ms\n' $MAIL_USERS
    printf 'session_length = 1m\nmix = FetchHeaders=20 Append=40 Search=40\ntimeout = 2s\nunit = ops/min\n'
    printf 'reference = 100\n'
    printf '[workload.oltp]\nkind = oltp\nusers = %d\nthink_time = 50ms\nthink_dist = uniform\n' $OLTP_USERS
    printf 'unit = OPM\nreference = 1000\ntimeout = 5s\n'
    cat "$SUT"
} >"$T/a.ini"
STEADY_A=24
start_run a "$T/a.ini" ${STEADY_A}s

# -- Redis --
wait_for "redis: GET+SET calls and kv keys before the kill, from all $KV_USERS users" 10 redis_back -ge
t_kill=$(now)
rcli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait_for "redis: down" 10 bash -c "! redis-cli -p $RP PING"
sleep "$OUTAGE"
redis-server "$T/sut/redis.conf" --daemonize yes --pidfile "$T/redis2.pid" >/dev/null
# this redis-server is ours now, not `sut down`'s: stop it on the way out
at_exit '[ -f "$T/redis2.pid" ] && kill "$(cat "$T/redis2.pid")" 2>/dev/null'
wait_for "redis: up again" 10 rcli PING
t_up=$(now)
D_REDIS=$(awk -v a="$t_kill" -v b="$t_up" 'BEGIN { print b - a }')
wait_for "redis: GET+SET calls and kv keys after the restart, from all $KV_USERS users" 10 redis_back -eq
t_redis=$(now)
echo "ok: redis: down ${D_REDIS}s; after the restart $(redis_back -eq) (users + redis-cli)"

# -- Dovecot --
DM=$(cat "$T/sut/dovecot/base/master.pid" 2>/dev/null) || fail "no dovecot master.pid under $T/sut/dovecot/base"
touch "$T/before-dovecot"
wait_for "dovecot: appends and deliveries before the kill" 10 dovecot_back "$T/before-dovecot" 0
# the master and every process it forked: its imap processes would otherwise
# keep serving their sessions without it
DPIDS=$(pgrep -P "$DM" | tr '\n' ' ')
t_kill=$(now)
kill "$DM" $DPIDS
for p in $DM $DPIDS; do wait_for "dovecot: process $p down" 10 gone "$p"; done
sleep "$OUTAGE"
log_off=$(stat -c %s "$T/sut/dovecot.log")
setsid dovecot -F -c "$T/sut/dovecot.conf" >>"$T/dovecot-restart.log" 2>&1 </dev/null &
DM2=$!
at_exit 'kill "$DM2" 2>/dev/null && for _ in $(seq 50); do kill -0 "$DM2" 2>/dev/null || break; sleep 0.1; done'
wait_for "dovecot: up again" 10 bash -c "exec 3<>/dev/tcp/${IMAP%:*}/${IMAP##*:}"
t_up=$(now)
touch "$T/dovecot-up"
D_DOVECOT=$(awk -v a="$t_kill" -v b="$t_up" 'BEGIN { print b - a }')
wait_for "dovecot: IMAP appends, LMTP deliveries and all $MAIL_USERS users' logins after the restart" 10 \
    dovecot_back "$T/dovecot-up" "$log_off"
t_dovecot=$(now)
echo "ok: dovecot: down ${D_DOVECOT}s; after the restart $(dovecot_back "$T/dovecot-up" "$log_off")"

# -- PostgreSQL --
PM=$(head -1 "$T/sut/pg/postmaster.pid")
mapfile -d '' PGCMD <"/proc/$PM/cmdline"
wait_for "postgresql: orders before the kill" 10 pg_back "$(orders)"
t_kill=$(now)
kill -INT "$PM" # fast shutdown: sessions are ended, committed orders stay
wait_for "postgresql: down" 20 gone "$PM"
sleep "$OUTAGE"
setsid runuser -u postgres -- "${PGCMD[@]}" >>"$T/pg-restart.log" 2>&1 </dev/null &
# this postmaster is ours now, not `sut down`'s: stop it (fast shutdown) on the way out
at_exit 'pm=$(head -1 "$T/sut/pg/postmaster.pid" 2>/dev/null) && kill -INT "$pm" 2>/dev/null &&
    for _ in $(seq 100); do kill -0 "$pm" 2>/dev/null || break; sleep 0.1; done'
wait_for "postgresql: up again" 20 q "SELECT 1"
t_up=$(now)
o_up=$(orders)
D_PG=$(awk -v a="$t_kill" -v b="$t_up" 'BEGIN { print b - a }')
wait_for "postgresql: new rows in tile1.orders after the restart, all $OLTP_USERS users connected" 10 pg_back "$o_up"
t_pg=$(now)
echo "ok: postgresql: down ${D_PG}s; $(pg_back "$o_up")"

wait $RUNPID || fail "run A exited $?: $(cat "$T/a-run.log")"
RUNPID=
"$TB" report latest --db "$T/a.db" --format json >"$T/a.json"
expect "A: status" "$(jq -r .run.status "$T/a.json")" = complete
expect "A: one level" "$(jq '.run.levels | length' "$T/a.json")" -eq 1
in_window a "$t_redis" "redis: calls after the restart read"
in_window a "$t_dovecot" "dovecot: messages after the restart read"
in_window a "$t_pg" "postgresql: orders after the restart read"
e=$(werrors a kv) b=$(bound_backoff $KV_USERS 1 "$D_REDIS")
expect "kv: level errors (outage counted)" "$e" -gt 0
expect "kv: level errors (within back-off bound for ${D_REDIS}s)" "$e" -le "$b"
e=$(werrors a mail) b=$(($(bound_paced $MAIL_USERS 0.2 "$D_DOVECOT") + $(bound_poisson $MAIL_USERS 0.3 "$D_DOVECOT")))
expect "mail: level errors (outage counted)" "$e" -gt 0
expect "mail: level errors (within IMAP cycle + send interval bound for ${D_DOVECOT}s)" "$e" -le "$b"
e=$(werrors a oltp) b=$(bound_backoff $OLTP_USERS 2 "$D_PG") # an order and its step
expect "oltp: level errors (outage counted)" "$e" -gt 0
expect "oltp: level errors (within back-off bound for ${D_PG}s)" "$e" -le "$b"

# ---------------- B. the reference web app in one steady state ----------------
web_tile "$T/b.ini" "$WEB_USERS"
web_app_pid
start_run b "$T/b.ini" 12s
wait_for "webapp: requests before the kill" 10 web_back "$(requests)"
t_kill=$(now)
kill "$WP"
wait_for "webapp: down" 10 gone "$WP"
# it stopped on SIGTERM: in a sanitizer build its leak and error reports are in its log now
! grep -q 'Sanitizer' "$T/sut/web.tile1.log" || fail "webapp: sanitizer report at exit: $(cat "$T/sut/web.tile1.log")"
sleep "$OUTAGE"
setsid "${WEBCMD[@]}" >>"$T/web-restart.log" 2>&1 </dev/null &
WP2=$!
at_exit 'kill "$WP2" 2>/dev/null'
wait_for "webapp: up again" 10 curl -fs "$W1/healthz"
t_up=$(now)
D_WEB=$(awk -v a="$t_kill" -v b="$t_up" 'BEGIN { print b - a }')
wait_for "webapp: requests after the restart" 10 web_back 0
t_web=$(now)
echo "ok: webapp: down ${D_WEB}s; $(web_back 0) after the restart, pages $(curl -fs "$W1/stats" | jq -c .pages)"
wait $RUNPID || fail "run B exited $?: $(cat "$T/b-run.log")"
RUNPID=
"$TB" report latest --db "$T/b.db" --format json >"$T/b.json"
expect "B: status" "$(jq -r .run.status "$T/b.json")" = complete
in_window b "$t_web" "webapp: requests after the restart read"
e=$(werrors b web) b=$(bound_backoff $WEB_USERS 2 "$D_WEB") # a request and its page
expect "web: level errors (outage counted)" "$e" -gt 0
expect "web: level errors (within back-off bound for ${D_WEB}s)" "$e" -le "$b"
echo "PASS test_recovery"
