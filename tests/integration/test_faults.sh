#!/usr/bin/env bash
# test_faults.sh: faults in the middle of a run, against the meter emulator
# and the embedded SUT's real servers.
#  1. Meter faults during steady state (NaN, garbage, a stall, a disconnect):
#     the run goes on, the samples are flagged in the database, the driver
#     reconnects and good samples follow, and the level (far over 1% bad
#     samples) is invalid with the reason named.
#  2. Redis, 3. Dovecot, 4. PostgreSQL and 5. tile 1's reference web app each killed and restarted in the
#     middle of level 1 of a 1..2 sweep: the run completes, errors are
#     counted, level 1 fails QoS on its error rate with the rule named, and
#     level 2 is measured.
# (test_recovery checks that users reconnect inside the level of the restart,
# against the servers' own counters; this test checks the verdict and that
# the sweep goes on.)
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
"$TB" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
SUT="$T/sut/sut.ini"
STAGES=(--ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 0 --quiet)
q() { sqlite3 -batch "$1" "$2"; }

# ---- 1. meter faults mid-run ----
start_sim sim --protocol wt310 --watts 150 --fault nan:4 --fault stall:6 --fault garbage:7 --fault disconnect:10
{
    printf '[tile]\nname = kv\n[workload.kv]\nkind = kv\nusers = 2\nthink_time = 50ms\nthink_dist = uniform\n'
    printf 'reference = 40\nunit = ops/s\ntimeout = 1s\n[qos.kv]\nerror_rate = 0.5\n'
    cat "$SUT"
} >"$T/kv.ini"
"$TB" run --config "$T/kv.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 14s --ramp-down 0 --idle 0 --quiet --meter "wt310://127.0.0.1:$PORT?timeout=500ms" \
    --db "$T/meter.db" >"$T/meter-run.log" 2>&1 || fail "run with meter faults exited $?: $(cat "$T/meter-run.log")"
"$TB" report latest --db "$T/meter.db" --format json >"$T/meter.json"
J="$T/meter.json"
expect "status with meter faults" "$(jq -r .run.status "$J")" = complete
expect "level measured" "$(jq '[.run.levels[0].workloads[].ops] | add' "$J")" -gt 0
expect "level invalid" "$(jq .run.levels[0].valid "$J")" = false
jq -r '.run.levels[0].invalid_reason' "$J" | grep -Eq "power samples missing or invalid \(limit 1%; [0-9]+ missing, " ||
    fail "invalid_reason does not name the samples: $(jq -r '.run.levels[0].invalid_reason' "$J")"
echo "ok: reason: $(jq -r '.run.levels[0].invalid_reason' "$J")"
expect "samples_bad" "$(jq .run.levels[0].samples_bad "$J")" -gt 0
LID=$(q "$T/meter.db" "SELECT id FROM levels")
expect "samples flagged INVALID (nan, garbage)" "$(q "$T/meter.db" "SELECT count(*) FROM power_samples WHERE flags & 1")" -gt 0
expect "samples flagged MISSING (stall, disconnect)" "$(q "$T/meter.db" "SELECT count(*) FROM power_samples WHERE flags & 2")" -gt 0
first_missing=$(q "$T/meter.db" "SELECT min(mono_us) FROM power_samples WHERE flags & 2")
expect "good samples after the first missing one (reconnected)" \
    "$(q "$T/meter.db" "SELECT count(*) FROM power_samples WHERE flags & 7 = 0 AND mono_us > $first_missing")" -gt 0
exec 7<>"/dev/tcp/127.0.0.1/$PORT" || fail "cannot reach the sim for its counters"
printf 'tb:count?\n' >&7
IFS= read -r -t 5 line <&7 || fail "no counters from the sim"
exec 7<&-
conns=$(echo "${line%$'\r'}" | tr ' ' '\n' | sed -n 's/^connections=//p')
expect "meter connections (the driver reconnected after the stall and the disconnect)" "$conns" -ge 3
stop_sims

# restart_level SERVICE TILEFILE STOP-CMD START-CMD: a 1..2 sweep, SERVICE
# stopped 2 s into level 1's steady state and started again 1.5 s later; then
# the verdicts.
restart_level() {
    local svc=$1 ini=$2 stop=$3 start=$4 pid rc=0 j="$T/$1.json"
    "$TB" run --config "$ini" --tiles 1..2 "${STAGES[@]}" --db "$T/$svc.db" >"$T/$svc-run.log" 2>&1 &
    pid=$!
    wait_steady "$T/$svc.db" 1 $pid
    sleep 2
    [ "$(q "$T/$svc.db" 'SELECT count(*) FROM levels' 2>/dev/null || echo 0)" -eq 0 ] ||
        fail "$svc: level 1 ended before the restart"
    eval "$stop"
    sleep 1.5
    eval "$start"
    wait $pid || rc=$?
    expect "$svc: run exit (0: complete; a failed QoS verdict is not an exit status of run)" "$rc" -eq 0
    "$TB" report latest --db "$T/$svc.db" --format json >"$j"
    expect "$svc: status" "$(jq -r .run.status "$j")" = complete
    expect "$svc: levels" "$(jq '.run.levels | length' "$j")" -eq 2
    expect "$svc: level 1 errors counted" "$(jq '[.run.levels[0].workloads[].errors] | add' "$j")" -gt 0
    expect "$svc: level 1 QoS" "$(jq .run.levels[0].qos_pass "$j")" = false
    jq -r '.run.levels[0].qos[] | select(.pass == false) | .rule' "$j" | grep -q 'error' ||
        fail "$svc: level 1 fails, but not on its error rate: $(jq -c '[.run.levels[0].qos[] | select(.pass == false)]' "$j")"
    echo "ok: $svc: level 1 fails: $(jq -r '[.run.levels[0].qos[] | select(.pass == false) | .rule] | join("; ")' "$j")"
    # level 2's users connect afresh: reconnecting is test_recovery's
    expect "$svc: level 2 measured after the restart" "$(jq '[.run.levels[1].workloads[].ops] | add' "$j")" -gt 0
}

# ---- 2. Redis ----
REDIS=$(sed -n 's/^redis = //p' "$SUT")
RP=${REDIS##*:}
at_exit '[ -f "$T/redis2.pid" ] && kill "$(cat "$T/redis2.pid")" 2>/dev/null'
restart_level redis "$T/kv.ini" 'redis-cli -p $RP SHUTDOWN NOSAVE >/dev/null 2>&1 || true' \
    'redis-server "$T/sut/redis.conf" --daemonize yes --pidfile "$T/redis2.pid" >/dev/null;
     for _ in $(seq 200); do redis-cli -p $RP PING >/dev/null 2>&1 && break; sleep 0.1; done'

# ---- 3. Dovecot ----
{
    printf '[tile]\nname = mail\n[workload.mail]\nkind = mail\nusers = 4\ncycle_time = 200ms\nsend_interval = 300ms\n'
    printf 'session_length = 1m\ntimeout = 2s\nunit = ops/min\nreference = 100\n[qos.mail]\nerror_rate = 0.5\n'
    cat "$SUT"
} >"$T/mail.ini"
DM=$(cat "$T/sut/dovecot/base/master.pid" 2>/dev/null) || fail "no dovecot master.pid under $T/sut/dovecot/base"
at_exit '[ -n "${DM2:-}" ] && kill "$DM2" 2>/dev/null && for _ in $(seq 200); do kill -0 "$DM2" 2>/dev/null || break; sleep 0.1; done'
restart_level dovecot "$T/mail.ini" 'kill "$DM"; for _ in $(seq 100); do kill -0 "$DM" 2>/dev/null || break; sleep 0.05; done' \
    'setsid dovecot -F -c "$T/sut/dovecot.conf" >>"$T/dovecot-restart.log" 2>&1 </dev/null & DM2=$!
     IMAP=$(sed -n "s/^imap = //p" "$SUT")
     for _ in $(seq 100); do (exec 3<>"/dev/tcp/${IMAP%:*}/${IMAP##*:}") 2>/dev/null && break; sleep 0.05; done'

# ---- 4. PostgreSQL ----
{
    printf '[tile]\nname = oltp\n[workload.oltp]\nkind = oltp\nusers = 4\nthink_time = 50ms\nthink_dist = uniform\n'
    printf 'unit = OPM\nreference = 1000\ntimeout = 5s\n[qos.oltp]\nerror_rate = 0.5\n'
    cat "$SUT"
} >"$T/oltp.ini"
PG=$(sed -n 's/^pg = //p' "$SUT")
PM=$(head -1 "$T/sut/pg/postmaster.pid")
mapfile -d '' PGCMD <"/proc/$PM/cmdline"
at_exit 'pm=$(head -1 "$T/sut/pg/postmaster.pid" 2>/dev/null) && [ "$pm" != "$PM" ] && kill -INT "$pm" 2>/dev/null &&
    for _ in $(seq 100); do kill -0 "$pm" 2>/dev/null || break; sleep 0.1; done'
restart_level postgresql "$T/oltp.ini" 'kill -INT "$PM"; for _ in $(seq 100); do kill -0 "$PM" 2>/dev/null || break; sleep 0.05; done' \
    'setsid runuser -u postgres -- "${PGCMD[@]}" >>"$T/pg-restart.log" 2>&1 </dev/null &
     for _ in $(seq 100); do psql "$PG" -XAtc "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done'

# ---- 5. the reference web app of tile 1 ----
web_tile "$T/web.ini" 4 HomePage.error_rate=0.5 TagSearch.error_rate=0.5 EventDetail.error_rate=0.5
web_app_pid
W1=$(sed -n 's/^web\.tile1 = //p' "$SUT")
at_exit '[ -n "${WP2:-}" ] && kill "$WP2" 2>/dev/null'
restart_level webapp "$T/web.ini" 'kill "$WP"; for _ in $(seq 100); do kill -0 "$WP" 2>/dev/null || break; sleep 0.05; done' \
    'setsid "${WEBCMD[@]}" >>"$T/web-restart.log" 2>&1 </dev/null & WP2=$!
     for _ in $(seq 100); do curl -fs "$W1/healthz" >/dev/null 2>&1 && break; sleep 0.05; done'
echo "PASS test_faults"
