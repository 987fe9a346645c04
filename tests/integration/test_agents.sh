#!/usr/bin/env bash
# test_agents.sh: a 2-level sweep driven through the broker by two
# load-generator agents on hosts of their own (tests/integration/netns.sh):
#   sut    `tilebench sut up --listen` its address (PostgreSQL, Redis, ...)
#   a1     `tilebench agent --name a1 --threads 1`
#   a2     the same, named a2, its wall clock 30 s ahead (libfaketime; its
#          monotonic clock left alone)
#   coord  the broker (redis-server), tests/tools/tcp_delay.py adding 3 ms each
#          way between the agents and the broker, and `tilebench run --broker
#          --agents 2 --tiles 2,3`, which uses the broker directly
# With equal threads the coordinator deals 2 tiles as 1 + 1 and 3 as 2 + 1,
# so both agents run tiles at both levels. Checks: every level names both
# agents with tile ranges covering 1..tiles once, ops from each, a measured
# clock; the merged counts equal the SUT's own counters (Redis INFO
# commandstats, pg_stat_database); each agent's clock offset is the true
# one (all namespaces share the machine's clocks) within its bound, the
# faked agent's too; the run is complete, every level valid, the placement
# events stored; the broker's password is in no log, report or store.
# About 30 s. Needs root (namespaces); fails, never skips, when they
# cannot be made or a server does not start.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns.sh"

START=$(date +%s)
for tool in psql redis-server redis-cli sqlite3 python3 pgrep; do
    command -v "$tool" >/dev/null || fail "$tool not found"
done
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -f "$FAKETIME_LIB" ] || fail "$FAKETIME_LIB not found: install Debian's faketime package"
DELAY_MS=3
BPORT=6379 # the broker, in coord's namespace (its own port space)

netns_up sut a1 a2 coord
SUT_IP=$(netns_addr sut)
CO_IP=$(netns_addr coord)
echo "ok: hosts sut $SUT_IP, a1 $(netns_addr a1), a2 $(netns_addr a2), coord $CO_IP"
# last registered, first run: the SUT stops before netns_down kills what is left
at_exit 'timeout 60 ip netns exec "$(netns_ns sut)" "$TILEBENCH" sut down --dir "$T/sut" >/dev/null 2>&1'

# 1. the SUT, with OLTP data for 3 tiles
timeout 180 ip netns exec "$(netns_ns sut)" "$TILEBENCH" sut up --tiles 3 --listen "$SUT_IP" --dir "$T/sut" \
    >"$T/sut-up.log" 2>&1 ||
    fail "sut up --listen $SUT_IP: exit $?: $(cat "$T/sut-up.log")"
INI="$T/sut/sut.ini"
PG=$(sed -n 's/^pg = //p' "$INI")
REDIS=$(sed -n 's/^redis = //p' "$INI")
[ "${REDIS%:*}" = "$SUT_IP" ] || fail "sut.ini: redis is not on $SUT_IP: $REDIS"
RPORT=${REDIS##*:}
echo "ok: SUT up on $SUT_IP ($(($(date +%s) - START)) s)"

# 2. the broker and the delay proxy on coord
# A password, as a broker reachable from other hosts needs one (Redis refuses
# non-loopback clients without it: protected mode); it must reach no log,
# report or store (checked at the end).
BPASS="it-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
mkdir -p "$T/broker"
printf 'requirepass %s\n' "$BPASS" >"$T/broker/redis.conf"
ip netns exec "$(netns_ns coord)" timeout 300 redis-server "$T/broker/redis.conf" --bind "$CO_IP" --port "$BPORT" \
    --save '' --appendonly no --dir "$T/broker" --logfile "$T/broker.log" &
BROKER_PID=$!
at_exit 'kill "$BROKER_PID" 2>/dev/null; wait "$BROKER_PID" 2>/dev/null'
broker() { REDISCLI_AUTH="$BPASS" timeout 5 ip netns exec "$(netns_ns coord)" redis-cli -h "$CO_IP" -p "$BPORT" "$@"; }
broker_ping() { [ "$(broker PING)" = PONG ]; }
wait_for "the broker answering PING on $CO_IP:$BPORT" 10 broker_ping
ip netns exec "$(netns_ns coord)" /usr/bin/python3 "$TB_SOURCE_DIR/tests/tools/tcp_delay.py" --listen "$CO_IP:0" \
    --target "$CO_IP:$BPORT" --delay-ms "$DELAY_MS" --lifetime-s 300 --port-file "$T/px.port" >"$T/px.log" 2>&1 &
PX_PID=$!
at_exit 'kill "$PX_PID" 2>/dev/null; wait "$PX_PID" 2>/dev/null'
wait_for "tcp_delay.py listening on $CO_IP" 10 test -s "$T/px.port"
PX_PORT=$(cat "$T/px.port")
echo "ok: broker $CO_IP:$BPORT, ${DELAY_MS} ms each way through $CO_IP:$PX_PORT"

# 3. the agents, through the proxy; a2 with its wall clock (CLOCK_REALTIME,
# time(), gettimeofday) 30 s ahead. libfaketimeMT is libfaketime's build for
# multithreaded programs; FAKETIME_DONT_FAKE_MONOTONIC=1 leaves
# CLOCK_MONOTONIC, which tilebench times everything with, as it is.
AGENT_URI="redis://default:$BPASS@$CO_IP:$PX_PORT" # in the environment: off the command line
ip netns exec "$(netns_ns a1)" timeout 300 env TILEBENCH_BROKER="$AGENT_URI" \
    "$TILEBENCH" agent --name a1 --threads 1 >"$T/a1.log" 2>&1 &
A1_PID=$!
# (under ASan, a library preloaded before its runtime must be allowed, as test_clock_jump.sh does)
ip netns exec "$(netns_ns a2)" timeout 300 env TILEBENCH_BROKER="$AGENT_URI" LD_PRELOAD="$FAKETIME_LIB" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    FAKETIME=+30s FAKETIME_DONT_FAKE_MONOTONIC=1 "$TILEBENCH" agent --name a2 --threads 1 >"$T/a2.log" 2>&1 &
A2_PID=$!
at_exit 'kill "$A1_PID" "$A2_PID" 2>/dev/null; wait "$A1_PID" "$A2_PID" 2>/dev/null'
registered() { grep -q "agent: $1 registered at broker" "$T/$1.log"; }
wait_for "agent a1 registered" 15 registered a1
wait_for "agent a2 registered" 15 registered a2
# a2's log stamps (time(), HH:MM:SS) run 30 s ahead of this shell's clock
# (less the time since it registered: at most the 15 s waited above)
a2_skew=$(python3 - "$T/a2.log" <<'PYEOF'
import re, sys, time
stamp = re.match(r"(\d\d):(\d\d):(\d\d) agent: a2 registered", [l for l in open(sys.argv[1]) if "registered" in l][0])
h, m, s = map(int, stamp.groups())
now = time.localtime()
print(((h * 3600 + m * 60 + s) - (now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec)) % 86400)
PYEOF
)
expect "a2's wall clock ahead of ours (s, faked +30)" "$a2_skew" -ge 14
expect "a2's wall clock ahead of ours (s, faked +30)" "$a2_skew" -le 31
echo "ok: agents a1 and a2 registered through the proxy"

# 4. the servers' counters before, and the true clock offset
TILE="$T/tile.ini"
# The standard tile's oltp and kv workloads only: the reference web apps use
# the SUT's Redis and PostgreSQL as well (their own database, but Redis is
# shared), and mail has no counter to compare.
awk '/^\[/ { keep = ($0 == "[tile]" || $0 ~ /^\[(workload|qos)\.(oltp|kv)\]$/) } keep' \
    "$TB_SOURCE_DIR/tiles/standard.ini" | cat - "$INI" >"$TILE"
[ "$(grep -c '^kind = ' "$TILE")" -eq 2 ] || fail "tile.ini: expected 2 workloads: $(grep '^kind' "$TILE")"
users_of() { awk -v s="[workload.$1]" '/^\[/ { on = ($0 == s) } on && $1 == "users" { print $3 }' "$TILE"; }
KV_USERS=$(users_of kv)
OLTP_USERS=$(users_of oltp)
[ "${KV_USERS:-0}" -gt 0 ] && [ "${OLTP_USERS:-0}" -gt 0 ] || fail "tile.ini: no users for kv ($KV_USERS) or oltp ($OLTP_USERS)"
pg_xacts() {
    timeout 10 ip netns exec "$(netns_ns sut)" psql "$PG" -XAtc \
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
}
redis_calls() { # cmd
    timeout 10 ip netns exec "$(netns_ns sut)" redis-cli -h "$SUT_IP" -p "$RPORT" INFO commandstats | tr -d '\r' |
        sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0
}
# A session reports its transactions to pg_stat_database when it ends: count
# when no session is left on the OLTP database (process titles "postgres:
# USER DB HOST(PORT) STATE" under the postmaster; the pids are the root
# namespace's too).
PM=$(head -1 "$T/sut/pg/postmaster.pid")
DBNAME=$(sed -n 's/.*dbname=\([^ ]*\).*/\1/p' <<<"$PG")
[ -n "$PM" ] && [ -n "$DBNAME" ] || fail "no postmaster pid or dbname: '$PM' '$DBNAME'"
no_sessions() { ! pgrep -P "$PM" -f "^postgres: [^ ]+ $DBNAME " >/dev/null; }
true_offset() { # broker time (CLOCK_REALTIME) - CLOCK_MONOTONIC, µs, as every namespace sees them
    python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME) // 1000 - time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)'
}
wait_for "no session left on database $DBNAME" 30 no_sessions
pg_before=$(pg_xacts)
set_before=$(redis_calls set)
get_before=$(redis_calls get)
truth=("$(true_offset)")

# 5. the sweep
run_rc=0
# (TB_WORKER_SPIN_US here is the coordinator's, which its agents do not read:
# the run must not store it, nor a workers' policy of its own)
TB_WORKER_SPIN_US=3 timeout 100 ip netns exec "$(netns_ns coord)" "$TILEBENCH" run --config "$TILE" \
    --broker "redis://default:$BPASS@$CO_IP:$BPORT" --agents 2 --agents-wait 20s --tiles 2,3 \
    --ramp-up 2s --warm-up 1s --steady 3s --ramp-down 1s --idle 0 \
    --meter 'estimate:?idle=50&max=100' --db "$T/results.db" --report "$T/report.json" --label "it agents" \
    --quiet >"$T/run.log" 2>&1 || run_rc=$?
truth+=("$(true_offset)")
expect "run exit status" "$run_rc" -eq 0
# the coordinator let go of both agents as it ended: leases gone, agents idle
no_leases() { [ -z "$(broker --scan --pattern 'tb:lease:*')" ]; }
wait_for "the coordinator's leases on a1 and a2 released (they would lapse only 5 s after the last renewal)" 2 no_leases
idle() { broker GET "tb:agent:$1" | grep -q '"state": *"idle"'; }
wait_for "agent a1 idle again after the run" 2 idle a1
wait_for "agent a2 idle again after the run" 2 idle a2
echo "ok: leases released, a1 and a2 idle"
wait_for "the run's sessions on $DBNAME ended (each flushes its statistics as it ends)" 30 no_sessions
pg_after=$(pg_xacts)
set_after=$(redis_calls set)
get_after=$(redis_calls get)
truth+=("$(true_offset)")
echo "ok: sweep done ($(($(date +%s) - START)) s)"

# 6. the report, the store and the counters
python3 - "$T/report.json" "$T/results.db" "$DELAY_MS" "$((set_after - set_before))" "$((get_after - get_before))" \
    "$((pg_after - pg_before))" "$KV_USERS" "$OLTP_USERS" "${truth[@]}" >"$T/checks.log" 2>&1 <<'PYEOF' || checks_rc=$?
import json, sqlite3, sys
rep, dbfile = sys.argv[1], sys.argv[2]
delay_us = int(sys.argv[3]) * 1000
srv_set, srv_get, srv_xacts = map(int, sys.argv[4:7])
kv_per_tile, oltp_per_tile = map(int, sys.argv[7:9])  # users per tile
truth = [int(x) for x in sys.argv[9:]]
run = json.load(open(rep))["run"]
db = sqlite3.connect(dbfile)
bad = []
def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        bad.append(what)

check(run["status"] == "complete", "run status %r is complete" % run["status"])
env = run["settings"].get("environment") or {}
check("TB_WORKER_SPIN_US" not in env, "the coordinator's TB_WORKER_SPIN_US not stored: %r" % env)
check(run["settings"].get("loadgen_sched", "absent") is None, "no workers' policy of the coordinator's stored: %r"
      % run["settings"].get("loadgen_sched", "absent"))
levels = run["levels"]
check(sorted(lv["tiles"] for lv in levels) == [2, 3], "levels of 2 and 3 tiles: %r" % [lv["tiles"] for lv in levels])

# The true offset: every namespace shares the machine's CLOCK_REALTIME (what
# the broker's TIME reads) and CLOCK_MONOTONIC (what the agents time with),
# so broker time - an agent's monotonic clock is REALTIME - MONOTONIC,
# sampled here before, just after and after the run. Only a step of the wall
# clock moves it (NTP's slewing moves both clocks alike).
check(max(truth) - min(truth) <= 1000, "true offset steady over the run (samples %r)" % truth)
true_off = sum(truth) // len(truth)

for lv in levels:
    n, tag = lv["tiles"], "%d tiles" % lv["tiles"]
    check(lv["valid"] is True, "%s valid (%r)" % (tag, lv.get("invalid_reason")))
    ags = {a["name"]: a for a in lv.get("agents") or []}
    check(sorted(ags) == ["a1", "a2"], "%s: agents %r are a1 and a2" % (tag, sorted(ags)))
    covered = []
    for name, a in sorted(ags.items()):
        if a["tile_lo"] is not None:
            covered += range(a["tile_lo"], a["tile_hi"] + 1)
        print("   %s %s: tiles %s..%s, %s ops, %s errors, offset %s us +/- %s us" %
              (tag, name, a["tile_lo"], a["tile_hi"], a["ops"], a["errors"], a["clock_offset_us"], a["clock_bound_us"]))
        # equal threads: 2 tiles go 1 + 1, 3 go 2 + 1, so each agent has tiles
        check(a["tile_lo"] is not None and a["tile_lo"] >= 1, "%s %s ran tiles" % (tag, name))
        check((a["ops"] or 0) > 0, "%s %s: ops %r > 0" % (tag, name, a["ops"]))
        if a["tile_lo"]:
            want = (a["tile_hi"] - a["tile_lo"] + 1) * (kv_per_tile + oltp_per_tile)
            check(a["users"] == want and a["threads"] == 1, "%s %s: %r users (%d), %r threads (1)"
                  % (tag, name, a["users"], want, a["threads"]))
        # the merge: the agent's phase ops (every op of every workload) are
        # the ops the level stored for its tiles
        mine = sum(o["count"] for w in lv["workloads"] if a["tile_lo"] and a["tile_lo"] <= w["tile"] <= a["tile_hi"]
                   for o in w["operations"])
        check(mine == a["ops"], "%s %s: the level's ops of tiles %s..%s (%d) are the agent's (%r)"
              % (tag, name, a["tile_lo"], a["tile_hi"], mine, a["ops"]))
        check(a["errors"] == 0, "%s %s: errors %r == 0" % (tag, name, a["errors"]))
        check(a["lost_at"] is None, "%s %s not lost (%r)" % (tag, name, a["lost_at"]))
        off, bound = a["clock_offset_us"], a["clock_bound_us"]
        if off is None or bound is None:
            check(False, "%s %s: clock offset and bound measured (%r, %r)" % (tag, name, off, bound))
            continue
        err = off - true_off
        # The estimate: broker_us - midpoint of the best TIME round trip, known
        # to +/- half that trip (bound_us). Its true error is within that
        # bound (1 ms of slack for the sampling above); a2's wall clock being
        # 30 s off must not show: tilebench never reads it for timing.
        check(abs(err) <= bound + 1000, "%s %s: offset %+d us from the true one, within its bound %d us + 1 ms"
              % (tag, name, err, bound))
        # Sharper: tcp_delay.py holds every chunk >= delay_us each way, so the
        # best trip of 2 x bound us has at most 2 x (bound - delay_us) of
        # asymmetric time in it, and the midpoint is off by at most bound -
        # delay_us. An estimate from the trip's start or end (not its
        # midpoint) would be >= delay_us off and fail this.
        check(bound >= delay_us, "%s %s: bound %d us >= the proxy's %d us one way" % (tag, name, bound, delay_us))
        check(abs(err) <= bound - delay_us + 1000, "%s %s: offset %+d us from the true one, within bound - delay + 1 ms"
              " = %d us (the delay is symmetric)" % (tag, name, err, bound - delay_us + 1000))
        a["err"] = err
    check(sorted(covered) == list(range(1, n + 1)), "%s: tiles %r cover 1..%d once" % (tag, sorted(covered), n))
    # Both agents turn the coordinator's broker-time phase edges into their
    # own monotonic time with their offsets, so an edge lands off by that
    # agent's error: a1's and a2's edges are within |err1| + |err2| of each
    # other. The first check above bounds that by bound1 + bound2 + 2 ms
    # (about 9 ms with 3 ms each way), the sharper one by (bound1 - delay) +
    # (bound2 - delay) + 2 ms (about 3 ms), so the faked agent's phases start
    # and end < 5 ms from the other's: checked on the measured errors. (The
    # coordinator's own offset, over a direct link, is not stored.)
    if all("err" in a for a in ags.values()) and len(ags) == 2:
        spread = sum(abs(a["err"]) for a in ags.values())
        check(spread < 5000, "%s: a1's and a2's phase edges within %d us of each other (< 5 ms)" % (tag, spread))

# Counts over every stage: the kv workload's SET and GET, the oltp steps.
# ops.count_all is the whole level's count of good ops (any stage), stored
# with the level's last phase; the per-phase counts cover the steady window only.
def count_all(wl, op_filter, *args):
    return db.execute("SELECT coalesce(sum(o.count_all), 0) FROM ops o JOIN workloads w ON w.id = o.workload_id "
                      "JOIN levels l ON l.id = w.level_id WHERE w.name = ? AND l.phase = (SELECT max(phase) FROM "
                      "levels l2 WHERE l2.run_id = l.run_id AND l2.tiles = l.tiles AND l2.repeat = l.repeat) AND "
                      + op_filter, (wl,) + args).fetchone()[0]
def json_count_all(wl, name):
    return sum(o["count_all"] for lv in levels for w in lv["workloads"] if w["name"] == wl
               for o in w["operations"] if o["name"] == name)
cli_set, cli_get = count_all("kv", "o.name = ?", "SET"), count_all("kv", "o.name = ?", "GET")
check(cli_set == json_count_all("kv", "SET") and cli_get == json_count_all("kv", "GET"),
      "kv count_all: store %d SET %d GET, report %d SET %d GET" % (cli_set, cli_get, json_count_all("kv", "SET"),
                                                                  json_count_all("kv", "GET")))
check(cli_set > 0 and cli_get > 0, "kv ops counted (%d SET, %d GET)" % (cli_set, cli_get))
kv_users = sum(lv["tiles"] for lv in levels) * kv_per_tile
# What Redis counted and the load generator did not: a command sent before
# the level stopped whose reply had not come back (one per user at most,
# pipeline 1), or one that timed out (an error: none, checked above per
# phase). The kv probe sends PING only.
for name, srv, cli in (("SET", srv_set, cli_set), ("GET", srv_get, cli_get)):
    print("   redis %s: server %d calls, merged count_all %d (difference %d)" % (name, srv, cli, srv - cli))
    check(0 <= srv - cli <= kv_users, "redis %s calls %d = merged count_all %d + 0..%d in flight at the stops"
          % (name, srv, cli, kv_users))
cli_steps = count_all("oltp", "o.name != ?", "Order")  # an Order is made of steps, not a statement
oltp_users = sum(lv["tiles"] for lv in levels) * oltp_per_tile
n_tiles = max(lv["tiles"] for lv in levels)
# PostgreSQL counts, besides each step (one statement in autocommit): two
# transactions per user session (its startup, which reads the catalogs, and
# the batch of PREPAREs), the agents' probes (a session per tile checked:
# startup and a count of the tile's products, and one free-slots query for
# the server; the first agent checks every tile of the largest level, the
# other tile 1 only), and this test's psql session that read "before"
# (startup and its query). Steps in flight when a level stops may commit
# uncounted: at most one per user. (An autovacuum or autoanalyze of the
# database would add its own transactions; too few rows change here to
# trigger one, and a few would hide in that slack.)
fixed = 2 * oltp_users + (2 * n_tiles + 1) + (2 * 1 + 1) + 2
print("   postgres: server %d transactions, merged steps %d, sessions and probes %d (difference %d)"
      % (srv_xacts, cli_steps, fixed, srv_xacts - cli_steps - fixed))
check(0 <= srv_xacts - cli_steps - fixed <= oltp_users,
      "pg transactions %d = merged steps %d + %d + 0..%d in flight" % (srv_xacts, cli_steps, fixed, oltp_users))

placed = [m for (m,) in db.execute("SELECT message FROM events WHERE message LIKE '% tiles placed:%' ORDER BY id")]
print("   events: %r" % placed)
check(len(placed) == 2 and all(" a1 tiles " in m and " a2 tiles " in m for m in placed),
      "a 'tiles placed' event per level naming both agents' tiles")
check(all(r[0] == 1 for r in db.execute("SELECT valid FROM levels")), "every stored level valid")
sys.exit(1 if bad else 0)
PYEOF
cat "$T/checks.log"
[ "${checks_rc:-0}" -eq 0 ] || fail "report checks (above): $(grep -c '^FAIL' "$T/checks.log") failed, first: $(grep -m1 '^FAIL\|Error' "$T/checks.log")"

# the broker's password appears in no log, report or store
if grep -rlaF -- "$BPASS" "$T"/*.log "$T/report.json" "$T/results.db" >"$T/leaks" 2>/dev/null; then
    fail "the broker's password is in: $(tr '\n' ' ' <"$T/leaks")"
fi
echo "ok: the broker's password is in no log, report or store"

# 7. the agents stop on SIGTERM with exit 0
kill -TERM "$A1_PID" "$A2_PID"
for p in "$A1_PID" "$A2_PID"; do
    rc=0
    wait "$p" || rc=$?
    expect "agent (pid $p) exit status on SIGTERM" "$rc" -eq 0
done
expect "registrations left at the broker after the agents stopped" "$(broker EXISTS tb:agent:a1 tb:agent:a2)" -eq 0
timeout 60 ip netns exec "$(netns_ns sut)" "$TILEBENCH" sut down --dir "$T/sut" >"$T/down.log" 2>&1 || fail "sut down: $(cat "$T/down.log")"
echo "PASS: test_agents ($(($(date +%s) - START)) s)"
