#!/usr/bin/env bash
# test_agent_faults.sh: load-generator agents (agent/) under faults, on
# loopback: a broker redis-server and the embedded SUT in this test's folder,
# agents and coordinators as background processes, every wait bounded.
# Each scenario checks what was stored (sqlite3 on the results db, the JSON
# report) and, where users must stop, the SUT's own counters (Redis INFO
# commandstats of the kv workload's SET and GET):
#   1. kill -9 of an agent in level 1's steady state: that level is invalid,
#      naming the agent and when it was lost; the next level gives every tile
#      to the survivor and is valid; the run completes.
#   2. kill -9 of the coordinator: the agents' users stop within the lease
#      (TB_AGENT_LEASE_MS, 5 s) plus a margin, and they serve the next run.
#   3. the broker restarted mid-level (same port, ~1 s down): the run
#      completes; every phase stored has its whole counts or is invalid with
#      a reason; the level after the restart is valid.
#   4. SIGINT to the coordinator: every user stops, the run is interrupted, exit 3.
#   5. a second coordinator cannot take agents held by a first one: exit 3
#      after --agents-wait naming them; the first run is unaffected.
#   6. an agent with a bad broker (none; a wrong password) exits 2 without
#      showing the password, and so does one with a bad TB_WORKER_SCHED,
#      before it looks for the broker; --agents 2 with one agent exits 3
#      naming it.
source "$(dirname "$0")/lib.sh"

for tool in redis-server redis-cli sqlite3 jq python3; do command -v "$tool" >/dev/null || fail "$tool not found"; done
T0=$(date +%s)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

"$TILEBENCH" sut up --tiles 3 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
# The kv workload alone (its ops are Redis SET/GET, which the SUT counts), on the SUT's endpoints.
{
    printf '[tile]\nname = kv\n'
    sed -n '/^\[workload\.kv\]/,/^\[workload\.mail\]/p' "$TB_SOURCE_DIR/tiles/standard.ini" | sed '$d'
    cat "$T/sut/sut.ini"
} >"$T/tile.ini"
grep -q '^kind = kv' "$T/tile.ini" && ! grep -q '^kind = mail' "$T/tile.ini" || fail "tile.ini: not the kv workload alone"
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
sut_ops() { # SET + GET calls the SUT's Redis has served
    redis-cli -h "${REDIS%:*}" -p "${REDIS##*:}" INFO commandstats | tr -d '\r' |
        sed -n 's/^cmdstat_\(set\|get\):calls=\([0-9]*\),.*/\2/p' | awk '{ n += $1 } END { print n + 0 }'
}

# ---- the broker, agents, coordinators -------------------------------------
BPORT=$(free_port)
BROKER=redis://127.0.0.1:$BPORT
BROKER_PID=""
start_broker() {
    redis-server --port "$BPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" \
        --logfile "$T/broker.log" --daemonize no &
    BROKER_PID=$!
    wait_for "the broker on port $BPORT" 5 redis-cli -p "$BPORT" PING
}
restart_broker() { # SECONDS: kill -9, then the same port again after SECONDS
    kill -9 "$BROKER_PID"
    wait "$BROKER_PID" 2>/dev/null || true
    BROKER_PID=""
    sleep "$1"
    start_broker
}
at_exit '[ -z "$BROKER_PID" ] || { kill "$BROKER_PID" 2>/dev/null; wait "$BROKER_PID" 2>/dev/null; }'
declare -A AGENT
start_agent() { # NAME (once an earlier agent of that name is gone)
    wait_for "the heartbeat of an earlier agent $1 expired" 5 unregistered "$1"
    "$TILEBENCH" agent --broker "$BROKER" --name "$1" --threads 1 >>"$T/agent-$1.log" 2>&1 &
    AGENT[$1]=$!
    wait_for "agent $1 registered" 5 registered "$1"
}
registered() { [ "$(redis-cli -p "$BPORT" EXISTS "tb:agent:$1")" = 1 ]; }
unregistered() { [ "$(redis-cli -p "$BPORT" EXISTS "tb:agent:$1")" = 0 ]; }
# agents_up NAME...: starts those not running
agents_up() {
    local a
    for a in "$@"; do [ -n "${AGENT[$a]:-}" ] || start_agent "$a"; done
}
# want N: scenario N is to run (TB_FAULTS="2 4" runs only those; default all)
want() { [[ " ${TB_FAULTS:-1 2 3 4 5 6} " == *" $1 "* ]]; }
at_exit 'for p in "${AGENT[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done'
STAGES=(--ramp-up 2s --warm-up 1s --ramp-down 1s --idle 0 --meter 'estimate:?idle=50&max=100')
RUN_PID=""
start_run() { # NAME TILES STEADY [ARGS...]: a coordinator in the background, results in $T/NAME.db
    local name=$1 tiles=$2 steady=$3
    shift 3
    "$TILEBENCH" run --config "$T/tile.ini" --broker "$BROKER" --tiles "$tiles" --steady "$steady" "${STAGES[@]}" \
        --db "$T/$name.db" --report "$T/$name.json" "$@" >"$T/$name.log" 2>&1 &
    RUN_PID=$!
}
at_exit '[ -z "$RUN_PID" ] || { kill "$RUN_PID" 2>/dev/null; wait "$RUN_PID" 2>/dev/null; }'
end_run() { # NAME WANT_RC: waits (2 min at most) for the coordinator started last
    local i rc=0
    for ((i = 0; i < 1200; i++)); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$RUN_PID" 2>/dev/null && fail "run $1 did not end within 2 min"
    wait "$RUN_PID" || rc=$?
    RUN_PID=""
    expect "run $1 exit status" "$rc" -eq "$2"
}
q() { sqlite3 -batch "$T/$1.db" "$2"; } # NAME SQL
# users_stopped WHAT: the SUT's SET/GET counters do not move for 2 s
users_stopped() {
    local a b
    a=$(sut_ops)
    sleep 2
    b=$(sut_ops)
    expect "$1: SUT SET+GET calls over 2 s (users stopped)" "$((b - a))" -eq 0
}
users_running() {
    local a b
    a=$(sut_ops)
    sleep 1
    b=$(sut_ops)
    expect "$1: SUT SET+GET calls over 1 s (users running)" "$((b - a))" -gt 0
}
# whole_or_invalid NAME: every stored phase is valid with its whole counts
# (the per-agent phase ops add up to the level's, every agent that had tiles
# counted some), or invalid with a reason.
whole_or_invalid() {
    local bad
    bad=$(jq '[.run.levels[] | select(
            (.valid and (([.workloads[].operations[].count] | add) != ([.agents[].ops] | add)
                         or any(.agents[]; .tile_lo != null and .ops == 0)))
            or (.valid | not) and ((.invalid_reason // "") == ""))] | length' "$T/$1.json")
    expect "run $1: phases neither whole nor invalid with a reason" "$bad" -eq 0
}

start_broker

# ---- 1. an agent killed mid-level ------------------------------------------
if want 1; then
agents_up a1 a2
start_run s1 2..3 4s --agents 2
wait_steady "$T/s1.db" 2 "$RUN_PID"
kill -9 "${AGENT[a1]}"
KILLED=$(date +%s)
wait "${AGENT[a1]}" 2>/dev/null || true
unset 'AGENT[a1]'
end_run s1 0
expect "s1 run status" "$(q s1 "SELECT status FROM runs")" = complete
expect "s1 level 2 tiles valid" "$(q s1 "SELECT valid FROM levels WHERE tiles = 2")" = 0
reason=$(q s1 "SELECT invalid_reason FROM levels WHERE tiles = 2")
[[ "$reason" == *"agent a1 lost at 20"* ]] || fail "s1 level 2: invalid_reason does not name a1 as lost: '$reason'"
echo "ok: s1 level 2 invalid: $reason"
lost=$(q s1 "SELECT lost_at FROM level_agents JOIN levels ON levels.id = level_id WHERE tiles = 2 AND name = 'a1'")
lost_s=$(date -d "$lost" +%s) || fail "s1: lost_at '$lost' is not a time"
# lost_at is when it was last heard: its last heartbeat, at most 1 s before the kill
expect "s1 a1 lost_at ($lost) minus the kill time (s)" "$((lost_s - KILLED))" -ge -2
expect "s1 a1 lost_at ($lost) minus the kill time (s)" "$((lost_s - KILLED))" -le 0
expect "s1 level 3 tiles valid" "$(q s1 "SELECT valid FROM levels WHERE tiles = 3")" = 1
expect "s1 level 3: a2's tiles" "$(q s1 "SELECT tile_lo || '..' || tile_hi FROM level_agents JOIN levels ON levels.id = level_id
    WHERE tiles = 3 AND name = 'a2'")" = 1..3
expect "s1 level 3: a1's tiles" "$(q s1 "SELECT coalesce(tile_lo, 'none') FROM level_agents JOIN levels ON levels.id = level_id
    WHERE tiles = 3 AND name = 'a1'")" = none
expect "s1 report: a1 lost_at in level 2 tiles" "$(jq -r '.run.levels[] | select(.tiles == 2) | .agents[] | select(.name == "a1") | .lost_at' "$T/s1.json")" = "$lost"
whole_or_invalid s1
fi

# ---- 2. the coordinator killed mid-level ----------------------------------
if want 2; then
agents_up a1 a2
n0=$(cat "$T"/agent-a[12].log | grep -c 'stopped renewing its lease' || true)
start_run s2 2..2 30s --agents 2
wait_steady "$T/s2.db" 2 "$RUN_PID"
users_running s2
kill -9 "$RUN_PID"
KILLED=$(date +%s%N)
wait "$RUN_PID" 2>/dev/null || true
RUN_PID=""
dropped() { [ "$(cat "$T"/agent-a[12].log | grep -c 'stopped renewing its lease')" -ge $((n0 + 2)) ]; }
wait_for "both agents drop the run of the killed coordinator" 8 dropped
took=$((($(date +%s%N) - KILLED) / 1000000))
expect "s2: both agents dropped the run (ms after the kill, lease 5000 + margin)" "$took" -le 7000
users_stopped s2
for a in a1 a2; do kill -0 "${AGENT[$a]}" || fail "agent $a exited after its coordinator was killed"; done
S2_AGENTS="${AGENT[a1]} ${AGENT[a2]}" # scenario 3's run is the new coordinator's they must accept
fi

# ---- 3. the broker restarted mid-level --------------------------------------
if want 3; then
agents_up a1 a2
start_run s3 2..3 4s --agents 2
wait_steady "$T/s3.db" 2 "$RUN_PID"
restart_broker 1
end_run s3 0
expect "s3 run status" "$(q s3 "SELECT status FROM runs")" = complete
if [ -n "${S2_AGENTS:-}" ]; then
    expect "s3: served by the agents whose coordinator was killed in s2" "${AGENT[a1]} ${AGENT[a2]}" = "$S2_AGENTS"
fi
expect "s3 levels stored" "$(q s3 "SELECT count(*) FROM levels")" -eq 2
whole_or_invalid s3
echo "note: s3 level 2 tiles: valid $(q s3 "SELECT valid || ' ' || coalesce(invalid_reason, '') FROM levels WHERE tiles = 2")"
expect "s3 level 3 tiles (after the restart) valid" "$(q s3 "SELECT valid FROM levels WHERE tiles = 3")" = 1
expect "s3 level 3 tiles: agents with tiles" "$(q s3 "SELECT count(*) FROM level_agents JOIN levels ON levels.id = level_id
    WHERE tiles = 3 AND tile_lo IS NOT NULL AND lost_at IS NULL")" -eq 2
for a in a1 a2; do grep -q 'connected again' "$T/agent-$a.log" || fail "agent $a did not say it reconnected"; done
# Again, the broker away from just after the phase's end (4 s after its
# start; its statistics were read) over the level's stop (1 s later): the
# coordinator's stop waits for the broker to come back, and reaches the
# agents, which reconnect after it was sent. Nothing is in flight as the
# broker dies, so nothing is lost: the level is valid.
start_run s3b 2..3 4s --agents 2
wait_steady "$T/s3b.db" 2 "$RUN_PID"
sleep 4.3
restart_broker 1.6
end_run s3b 0
expect "s3b run status" "$(q s3b "SELECT status FROM runs")" = complete
expect "s3b levels stored" "$(q s3b "SELECT count(*) FROM levels")" -eq 2
whole_or_invalid s3b
expect "s3b level 2 tiles valid ($(q s3b "SELECT coalesce(invalid_reason, '') FROM levels WHERE tiles = 2"))" \
    "$(q s3b "SELECT valid FROM levels WHERE tiles = 2")" = 1
expect "s3b level 3 tiles (after the restart) valid" "$(q s3b "SELECT valid FROM levels WHERE tiles = 3")" = 1
fi

# ---- 4. SIGINT to the coordinator ------------------------------------------
if want 4; then
agents_up a1 a2
start_run s4 2..2 30s --agents 2
wait_steady "$T/s4.db" 2 "$RUN_PID"
users_running s4
n0=$(cat "$T"/agent-a[12].log | grep -c 'run of coordinator .* ended' || true)
kill -INT "$RUN_PID"
end_run s4 3
expect "s4 run status" "$(q s4 "SELECT status FROM runs")" = interrupted
users_stopped s4
expect "s4: agents that say the run ended" "$(cat "$T"/agent-a[12].log | grep -c 'run of coordinator .* ended')" -eq $((n0 + 2))
fi

# ---- 5. a second coordinator while the first runs ---------------------------
if want 5; then
agents_up a1 a2
start_run s5 2..3 4s --agents 2
FIRST=$RUN_PID
wait_steady "$T/s5.db" 2 "$RUN_PID"
t=$(date +%s%N)
rc=0
timeout 20 "$TILEBENCH" run --config "$T/tile.ini" --broker "$BROKER" --agents 2 --agents-wait 3s --tiles 1..1 \
    --steady 4s "${STAGES[@]}" --db "$T/s5b.db" >"$T/s5b.log" 2>&1 || rc=$?
took=$((($(date +%s%N) - t) / 1000000))
expect "s5 second coordinator exit status" "$rc" -eq 3
expect "s5 second coordinator gave up (ms; --agents-wait 3s)" "$took" -le 6000
grep -Eq "in another coordinator's run: (a1, a2|a2, a1)$" "$T/s5b.log" || fail "s5: the second coordinator does not name a1, a2 as busy: $(cat "$T/s5b.log")"
echo "ok: s5: $(grep -o "waited.*" "$T/s5b.log")"
RUN_PID=$FIRST
end_run s5 0
expect "s5 first run status" "$(q s5 "SELECT status FROM runs")" = complete
expect "s5 first run: invalid phases" "$(q s5 "SELECT count(*) FROM levels WHERE valid = 0")" -eq 0
expect "s5 first run: levels" "$(q s5 "SELECT count(*) FROM levels")" -eq 2
whole_or_invalid s5
fi

# ---- 6. bad brokers, a missing agent ----------------------------------------
if want 6; then
agents_up a1 a2
NOPORT=$(free_port)
rc=0
timeout 20 "$TILEBENCH" agent --broker "redis://:NoSuchSecret1@127.0.0.1:$NOPORT" --name bad1 >"$T/bad1.log" 2>&1 || rc=$?
expect "s6 agent without a broker: exit status" "$rc" -eq 2
grep -q "127.0.0.1:$NOPORT" "$T/bad1.log" || fail "s6: no broker address in: $(cat "$T/bad1.log")"
! grep -q NoSuchSecret1 "$T/bad1.log" || fail "s6: the password is in the agent's output"
echo "ok: s6: $(tail -1 "$T/bad1.log")"
rc=0 # a bad worker setting stops it before it looks for the broker
TB_WORKER_SCHED=AUTO timeout 20 "$TILEBENCH" agent --broker "redis://127.0.0.1:$NOPORT" --name bad3 >"$T/bad3.log" 2>&1 ||
    rc=$?
expect "s6 agent with TB_WORKER_SCHED=AUTO: exit status" "$rc" -eq 2
grep -q "TB_WORKER_SCHED 'AUTO': expected auto, batch or other" "$T/bad3.log" || fail "s6: $(cat "$T/bad3.log")"
! grep -q "$NOPORT" "$T/bad3.log" || fail "s6: the agent tried the broker before its settings: $(cat "$T/bad3.log")"
echo "ok: s6: $(tail -1 "$T/bad3.log")"
PPORT=$(free_port)
redis-server --port "$PPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" --requirepass RightSecret2 \
    --logfile "$T/broker-pw.log" --daemonize no &
PW_PID=$!
at_exit 'kill "$PW_PID" 2>/dev/null; wait "$PW_PID" 2>/dev/null'
wait_for "the broker with a password" 5 redis-cli -p "$PPORT" -a RightSecret2 --no-auth-warning PING
rc=0
timeout 20 "$TILEBENCH" agent --broker "redis://:WrongSecret3@127.0.0.1:$PPORT" --name bad2 >"$T/bad2.log" 2>&1 || rc=$?
expect "s6 agent with a wrong password: exit status" "$rc" -eq 2
grep -qi "auth" "$T/bad2.log" || fail "s6: no authentication error in: $(cat "$T/bad2.log")"
! grep -q WrongSecret3 "$T/bad2.log" || fail "s6: the password is in the agent's output"
echo "ok: s6: $(tail -1 "$T/bad2.log")"
kill -TERM "${AGENT[a2]}"
rc=0
wait "${AGENT[a2]}" || rc=$?
unset 'AGENT[a2]'
expect "s6 agent a2 exit status on SIGTERM" "$rc" -eq 0
! registered a2 || fail "s6: a2 still registered after it stopped"
t=$(date +%s%N)
rc=0
timeout 20 "$TILEBENCH" run --config "$T/tile.ini" --broker "$BROKER" --agents 2 --agents-wait 3s --tiles 1..1 \
    --steady 4s "${STAGES[@]}" --db "$T/s6.db" >"$T/s6.log" 2>&1 || rc=$?
took=$((($(date +%s%N) - t) / 1000000))
expect "s6 run with one agent of 2: exit status" "$rc" -eq 3
expect "s6 run with one agent of 2 gave up (ms; --agents-wait 3s)" "$took" -le 6000
grep -q "1 ready (a1)" "$T/s6.log" || fail "s6: the run does not name a1 as the one that came: $(cat "$T/s6.log")"
echo "ok: s6: $(grep -o "waited.*" "$T/s6.log")"
fi

echo "test_agent_faults: $(($(date +%s) - T0)) s"
