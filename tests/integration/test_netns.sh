#!/usr/bin/env bash
# test_netns.sh: several "hosts" on this one machine (tests/integration/netns.sh)
# carry a real benchmark. Host sut runs `tilebench sut up --listen 198.18.0.1`;
# host lg runs `tilebench run` with the standard tile and the [sut] section
# that sut up wrote, one short level. Checks: every endpoint names the SUT's
# address and every server listens there; bad --listen addresses are refused
# with exit 2; the report counts ops of every workload; the SUT's own counters
# (pg_stat_database, Redis INFO commandstats, read inside the sut namespace)
# saw at least that traffic; the SUT cannot be reached from the root
# namespace, and the root namespace's addresses and routes are unchanged.
# Then tests/tools/tcp_delay.py on host px adds 20 ms each way between lg and
# the SUT's Redis, measured by PING round trips. Needs root (namespaces);
# fails, never skips, when they cannot be made.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns.sh"

START=$(date +%s)
for tool in psql redis-cli jq ss; do command -v "$tool" >/dev/null || fail "$tool not found"; done
ROOT_BEFORE=$(ip -4 -o addr show; ip -4 route show table all)

netns_up sut lg px
SUT_IP=$(netns_addr sut)
LG_IP=$(netns_addr lg)
PX_IP=$(netns_addr px)
SUT_NS=$(netns_ns sut)
LG_NS=$(netns_ns lg)
PX_NS=$(netns_ns px)
echo "ok: hosts sut $SUT_IP, lg $LG_IP, px $PX_IP"
netns_exec lg ip -4 -o addr show dev eth0 | grep -q " $LG_IP/24 " || fail "lg: no $LG_IP/24 on eth0"
netns_exec lg ip -o link show lo | grep -q 'LOWER_UP' || fail "lg: loopback is not up"
# last registered, first run: the SUT stops before netns_down kills what is left
at_exit '"$TILEBENCH" sut down --dir "$T/sut" >/dev/null 2>&1'

# 1. bad --listen addresses: exit 2 and a message naming the problem
bad_listen() { # ADDR NEEDLE [NS]: sut up --listen ADDR (in host NS, default sut) must exit 2
    local rc=0 out
    out=$(timeout 30 ip netns exec "$(netns_ns "${3:-sut}")" "$TILEBENCH" sut up --listen "$1" --dir "$T/bad" 2>&1) || rc=$?
    expect "sut up --listen '$1': exit status" "$rc" -eq 2
    [[ "$out" == *"$2"* ]] || fail "sut up --listen '$1': expected '$2' in: $out"
}
bad_listen 198.18.0.300 "not an IPv4 address"
bad_listen "" "not an IPv4 address"
bad_listen 0.0.0.0 "wildcard"
bad_listen "$LG_IP" "no interface of this host has that address" # lg's address is not sut's
[ ! -e "$T/bad/sut.state" ] || fail "a refused sut up left $T/bad/sut.state"

# 2. the SUT on host sut, its endpoints and listeners on SUT_IP
timeout 180 ip netns exec "$SUT_NS" "$TILEBENCH" sut up --listen "$SUT_IP" --dir "$T/sut" >"$T/sut-up.log" 2>&1 ||
    fail "sut up --listen $SUT_IP: exit $?: $(cat "$T/sut-up.log")"
INI="$T/sut/sut.ini"
for key in redis imap lmtp; do
    grep -Eq "^$key = $SUT_IP:[0-9]+\$" "$INI" || fail "sut.ini: '$key' is not $SUT_IP:PORT: $(grep "^$key = " "$INI")"
done
grep -Eq "^pg = host=$SUT_IP port=[0-9]+ " "$INI" || fail "sut.ini: pg does not name $SUT_IP: $(grep '^pg = ' "$INI")"
grep -Eq "^web\.tile1 = http://$SUT_IP:[0-9]+\$" "$INI" || fail "sut.ini: web.tile1 is not on $SUT_IP"
! grep -v '^;' "$INI" | grep -q '127\.0\.0\.1' || fail "sut.ini still names 127.0.0.1: $(cat "$INI")"
grep -q "redis       $SUT_IP:" "$T/sut-up.log" || fail "sut up did not print the redis endpoint on $SUT_IP"
echo "ok: sut.ini names $SUT_IP for pg, redis, imap, lmtp, web.tile1"
PG=$(sed -n 's/^pg = //p' "$INI")
REDIS=$(sed -n 's/^redis = //p' "$INI")
RPORT=${REDIS##*:}
for ep in $(sed -n 's/^\(redis\|imap\|lmtp\) = //p; s/^web\.tile1 = http:\/\///p' "$INI") \
    "$SUT_IP:$(sed -n 's/.*port=\([0-9]*\).*/\1/p' <<<"$PG")"; do
    netns_exec sut ss -ltnH "( sport = :${ep##*:} )" | awk '{print $4}' | grep -qx "$ep" ||
        fail "nothing listens on $ep in $SUT_NS: $(netns_exec sut ss -ltnH)"
done
echo "ok: every server listens on $SUT_IP"
status_rc=0
netns_exec sut "$TILEBENCH" sut status --dir "$T/sut" >"$T/status.log" 2>&1 || status_rc=$?
expect "sut status in $SUT_NS (every service up on $SUT_IP)" "$status_rc" -eq 0
expect "sut status lines on $SUT_IP" "$(grep -c " up .* $SUT_IP:" "$T/status.log")" -eq 4

# 3. reachable from lg, not from the root namespace
expect "PING from lg" "$(timeout 10 ip netns exec "$LG_NS" redis-cli -h "$SUT_IP" -p "$RPORT" PING)" = PONG
if timeout 3 bash -c "exec 3<>/dev/tcp/$SUT_IP/$RPORT" 2>/dev/null; then
    fail "the SUT's Redis at $SUT_IP:$RPORT is reachable from the root namespace"
fi
echo "ok: $SUT_IP:$RPORT is not reachable from the root namespace"

# 4. one short level from lg against the SUT on sut
pg_xacts() {
    timeout 10 ip netns exec "$SUT_NS" psql "$PG" -XAtc \
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
}
redis_calls() { # cmd
    timeout 10 ip netns exec "$SUT_NS" redis-cli -h "$SUT_IP" -p "$RPORT" INFO commandstats | tr -d '\r' |
        sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0
}
pg_before=$(pg_xacts)
kv_before=$(($(redis_calls set) + $(redis_calls get)))
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$INI" >"$T/tile.ini"
timeout 240 ip netns exec "$LG_NS" "$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s \
    --steady 4s --ramp-down 0 --idle 0 --db "$T/results.db" --label "it netns" --quiet >"$T/run.log" 2>&1 ||
    fail "run in $LG_NS exited $?: $(cat "$T/run.log")"
"$TILEBENCH" report latest --db "$T/results.db" --format json >"$T/report.json"
J="$T/report.json"
expect "run status" "$(jq -r .run.status "$J")" = complete
expect "levels" "$(jq '.run.levels | length' "$J")" -eq 1
for w in oltp kv mail web; do
    expect "$w ops (from $LG_NS to $SUT_IP)" "$(jq "[.run.levels[0].workloads[] | select(.name == \"$w\") | .ops] | add // 0" "$J")" -gt 0
done
OLTP_OPS=$(jq '[.run.levels[0].workloads[] | select(.name == "oltp") | .ops] | add' "$J")
KV_OPS=$(jq '[.run.levels[0].workloads[] | select(.name == "kv") | .ops] | add' "$J")
# A session reports its transactions when it ends; the run's sessions end
# with the run, their statistics reach pg_stat_database within seconds.
pg_delta=0
for ((i = 0; i < 100; i++)); do
    pg_delta=$(($(pg_xacts) - pg_before))
    [ "$pg_delta" -ge "$OLTP_OPS" ] && break
    sleep 0.3
done
expect "SUT's pg_stat_database transactions during the run (>= the report's $OLTP_OPS OLTP ops)" "$pg_delta" -ge "$OLTP_OPS"
kv_delta=$(($(redis_calls set) + $(redis_calls get) - kv_before))
expect "SUT's Redis SET+GET calls during the run (>= the report's $KV_OPS kv ops)" "$kv_delta" -ge "$KV_OPS"

# 5. tcp_delay.py on px: 20 ms each way between lg and the SUT's Redis
ip netns exec "$PX_NS" /usr/bin/python3 "$TB_SOURCE_DIR/tests/tools/tcp_delay.py" --listen "$PX_IP:0" \
    --target "$SUT_IP:$RPORT" --delay-ms 20 --lifetime-s 60 --port-file "$T/px.port" >"$T/px.log" 2>&1 &
PX_PID=$!
at_exit 'kill "$PX_PID" 2>/dev/null; wait "$PX_PID" 2>/dev/null'
wait_for "tcp_delay.py listening in $PX_NS" 10 test -s "$T/px.port"
PX_PORT=$(cat "$T/px.port")
rtt_ms() { # HOST PORT: median round trip of 11 Redis PINGs from lg, in ms
    timeout 20 ip netns exec "$LG_NS" /usr/bin/python3 - "$1" "$2" <<'PYEOF'
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
rtts = []
for _ in range(11):
    t = time.monotonic()
    s.sendall(b"PING\r\n")
    assert s.recv(64) == b"+PONG\r\n"
    rtts.append((time.monotonic() - t) * 1000)
print(int(sorted(rtts)[5]))
PYEOF
}
direct=$(rtt_ms "$SUT_IP" "$RPORT") || fail "PINGs from lg to $SUT_IP:$RPORT failed"
delayed=$(rtt_ms "$PX_IP" "$PX_PORT") || fail "PINGs from lg through $PX_IP:$PX_PORT failed: $(cat "$T/px.log")"
expect "median PING round trip lg -> sut, direct (ms)" "$direct" -lt 10
expect "median PING round trip lg -> px -> sut, 20 ms each way (ms)" "$delayed" -ge 40
expect "median PING round trip lg -> px -> sut (ms, not far above 2 x 20)" "$delayed" -lt 100
kill -TERM "$PX_PID"
rc=0
wait "$PX_PID" || rc=$?
expect "tcp_delay.py exit status on SIGTERM" "$rc" -eq 0

# 6. down, and the root namespace as it was
netns_exec sut "$TILEBENCH" sut down --dir "$T/sut" >"$T/down.log" 2>&1 || fail "sut down: $(cat "$T/down.log")"
rc=0
"$TILEBENCH" sut status --dir "$T/sut" >/dev/null 2>&1 || rc=$?
expect "sut status after down (no SUT)" "$rc" -eq 3
[ "$(ip -4 -o addr show; ip -4 route show table all)" = "$ROOT_BEFORE" ] ||
    fail "the root namespace's addresses or routes changed"
! ip -4 -o addr show | grep -q ' 198\.1[89]\.' || fail "a 198.18.0.0/15 address in the root namespace"
echo "ok: root namespace addresses and routes unchanged"
echo "PASS: test_netns ($(($(date +%s) - START)) s)"
