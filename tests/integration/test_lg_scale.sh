#!/usr/bin/env bash
# test_lg_scale.sh: the load generator with many tiles on several workers,
# against a real redis-server. With 16 tiles on 2 workers each tile's users
# all go to one worker (tile-affine): every tile is still loaded, and the
# server counts at least every op the client counted. The per-phase event
# gives the loop-stall figures with their own-work share (never above the
# whole), and the ramp-up's. TB_WORKER_NICE sets the workers' nice value,
# and a bad one is refused, named; so is a bad TB_WORKER_SPIN_US, and with
# spinning off or at max rate the server still counts every client op. The
# workers run SCHED_BATCH at max rate (http, oltp) and SCHED_OTHER with a
# think time, unless TB_WORKER_SCHED says otherwise; auto keeps a policy the
# process was started with (chrt), other and batch set theirs (as root); the
# run stores the policy asked; a bad TB_WORKER_SCHED is refused before any
# file is made.
# Users built a chunk per loop turn are all built. A run stopped (SIGSTOP)
# for 300 ms inside phase 1 shows that stall and its warning in phase 1;
# phase 2's warning agrees with its own figure. No other timing is asserted.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
RP=${REDIS##*:}
calls() { redis-cli -h 127.0.0.1 -p "$RP" INFO commandstats | tr -d '\r' |
    sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0; }
{
    printf '[tile]\nname = lg-scale\n[workload.kv]\nkind = kv\nusers = 2\nthink_time = 20ms\nthink_dist = uniform\n'
    printf 'set_pct = 50\nunit = ops/s\nreference = 1\ntimeout = 2s\n'
    cat "$T/sut/sut.ini"
} >"$T/t.ini"
RUN=(--config "$T/t.ini" --tiles 16 --threads 2 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 --idle 0
    --meter estimate: --telemetry none --db "$T/r.db")

# workers PID: "NICE/POLICY" of the run PID's worker threads (from their
# /proc stat: fields 19 and 41; SCHED_OTHER is 0, SCHED_BATCH 3, SCHED_IDLE
# 5), each distinct pair once, as soon as both workers (--threads 2) are
# named (a worker is named once its policy and nice are set); what it saw by
# then if that takes over 10 s
workers() {
    local seen="" n
    for _ in $(seq 100); do
        sleep 0.1
        seen=$(for f in /proc/$1/task/*; do
            if grep -q '^tb-worker' "$f/comm" 2>/dev/null; then awk '{print $19 "/" $41}' "$f/stat" 2>/dev/null || true; fi
        done)
        n=$(echo "$seen" | grep -c / || true)
        [ "$n" -ge 2 ] && break
    done
    echo $(echo "$seen" | sort -u)
}

# 1. 16 tiles on 2 workers, at nice 5 (raising it needs no privilege); with a
# think time they run SCHED_OTHER
before=$(($(calls set) + $(calls get)))
TB_WORKER_NICE=5 "$TILEBENCH" run "${RUN[@]}" >"$T/run.log" 2>&1 &
pid=$!
seen=$(workers $pid)
wait $pid || fail "run: $(tail -5 "$T/run.log")"
expect "workers' nice/policy under TB_WORKER_NICE=5, think time 20 ms" "$seen" = 5/0
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
loaded=$(jq '[.run.levels[0].workloads[] | select(([.operations[].count_all] | add) > 0) | .tile] | unique | length' "$T/r.json")
expect "tiles with ops" "$loaded" -eq 16
client=$(jq '[.run.levels[0].workloads[].operations[].count_all] | add' "$T/r.json")
server=$(($(calls set) + $(calls get) - before))
expect "client ops" "$client" -gt 0
expect "server SET+GET calls - client ops (>= 0)" $((server - client)) -ge 0
expect "server SET+GET calls - client ops (<= 32 users in flight)" $((server - client)) -le 32
expect "errors" "$(jq '[.run.levels[0].workloads[].operations[].errors] | add' "$T/r.json")" -eq 0
# ESTIMATED POWER is said beside the watts of each level line and in the run list
grep -Eq "^level 16 tiles phase 1: score [0-9.]+  [0-9.]+ W \(estimated\)  PPKW " "$T/run.log" ||
    fail "level line without (estimated): $(grep '^level' "$T/run.log")"
"$TILEBENCH" runs --db "$T/r.db" >"$T/runs.out"
grep -Eq " [0-9.]+\*$" "$T/runs.out" || fail "runs: peak PPKW without *: $(cat "$T/runs.out")"
grep -q "^\* ESTIMATED POWER: " "$T/runs.out" || fail "runs: no ESTIMATED POWER footnote: $(cat "$T/runs.out")"
echo "ok: estimated power flagged: $(grep '^level' "$T/run.log" | head -1)"

# 2. the stall events: figures present, own work never above the whole
msg=$(jq -r '[.run.events[].message | select(test("phase 1: load generator loop stall"))][0]' "$T/r.json")
re='stall max ([0-9.]+) ms, p99 ([0-9.]+) ms \(own work: max ([0-9.]+) ms, p99 ([0-9.]+) ms; workers waited for a CPU ([0-9.]+%|n/a) of the time\)'
[[ "$msg" =~ $re ]] || fail "phase stall event: '$msg'"
expect_true "own-work stall max <= stall max" "[${BASH_REMATCH[3]}, ${BASH_REMATCH[1]}]" '.[0] <= .[1]'
expect_true "own-work stall p99 <= stall p99" "[${BASH_REMATCH[4]}, ${BASH_REMATCH[2]}]" '.[0] <= .[1]'
ramp=$(jq -r '[.run.events[].message | select(test("ramp-up and warm-up: load generator loop stall max"))] | length' "$T/r.json")
expect "ramp-up stall events" "$ramp" -eq 1

# 3. a bad TB_WORKER_NICE is refused, named
if TB_WORKER_NICE=fast "$TILEBENCH" run "${RUN[@]}" >"$T/bad.log" 2>&1; then fail "TB_WORKER_NICE=fast was accepted"; fi
grep -q "TB_WORKER_NICE 'fast'" "$T/bad.log" || fail "no message naming TB_WORKER_NICE: $(cat "$T/bad.log")"
echo "ok: TB_WORKER_NICE=fast refused: $(grep -o "TB_WORKER_NICE 'fast'[^\"]*" "$T/bad.log" | head -1)"

# 4. spin-then-block off (TB_WORKER_SPIN_US=0) and at max rate (think time 0,
# where the workers spin): the server still counts every op the client counted
# (kv keeps libevent's precise timers at max rate, and so SCHED_OTHER too)
for spin in 0 20; do
    sed 's/^think_time = 20ms$/think_time = 0/' "$T/t.ini" >"$T/max.ini"
    before=$(($(calls set) + $(calls get)))
    TB_WORKER_NICE=7 TB_WORKER_SPIN_US=$spin "$TILEBENCH" run --config "$T/max.ini" --tiles 2 --threads 2 --ramp-up 0 \
        --warm-up 0 --steady 2s --ramp-down 0 --idle 0 --meter estimate: --telemetry none --db "$T/spin.db" \
        >"$T/spin.log" 2>&1 &
    pid=$!
    seen=$(workers $pid)
    wait $pid || fail "TB_WORKER_SPIN_US=$spin run: $(tail -5 "$T/spin.log")"
    expect "kv workers' nice/policy at max rate, TB_WORKER_NICE=7" "$seen" = 7/0
    "$TILEBENCH" report latest --db "$T/spin.db" --format json >"$T/spin.json"
    client=$(jq '[.run.levels[0].workloads[].operations[].count_all] | add' "$T/spin.json")
    server=$(($(calls set) + $(calls get) - before))
    expect "TB_WORKER_SPIN_US=$spin: client ops" "$client" -gt 100
    expect "TB_WORKER_SPIN_US=$spin: server calls - client ops (0..4 users in flight)" $((server - client)) -le 4
    expect "TB_WORKER_SPIN_US=$spin: server calls >= client ops" "$server" -ge "$client"
done
if TB_WORKER_SPIN_US=-3 "$TILEBENCH" run "${RUN[@]}" >"$T/bad.log" 2>&1; then fail "TB_WORKER_SPIN_US=-3 was accepted"; fi
grep -q "TB_WORKER_SPIN_US '-3': expected an integer 0..1000" "$T/bad.log" ||
    fail "no message naming TB_WORKER_SPIN_US: $(cat "$T/bad.log")"
# oltp point lookups and http at max rate run SCHED_BATCH, keeping their nice
# value, unless TB_WORKER_SCHED=other; auto keeps the SCHED_IDLE of a process
# started under chrt -i, other does not; the run stores what its workers ran
WEB=$(sed -n 's/^web.tile1 = //p' "$T/sut/sut.ini")
{
    printf '[tile]\nname = lg-batch\n[workload.oltp]\nkind = oltp\nmode = point\nusers = 2\nthink_time = 0\n'
    printf 'unit = ops/s\nreference = 1\n'
    printf '[workload.http]\nkind = http\nusers = 2\nthink_time = 0\nurls = %s/=1\nunit = ops/s\nreference = 1\n' "$WEB"
    cat "$T/sut/sut.ini"
} >"$T/oltp.ini"
# sched_run WANT STORED [ENV... --] [PREFIX...]: a max-rate oltp + http run at
# nice 7; its workers' nice/policy must be WANT and its stored policy STORED
sched_run() {
    local want=$1 stored=$2 envs=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    rm -f "$T"/oltp.db*
    env TB_WORKER_NICE=7 "${envs[@]}" "$@" "$TILEBENCH" run --config "$T/oltp.ini" --tiles 1 --threads 2 --ramp-up 0 \
        --warm-up 0 --steady 1s --ramp-down 0 --idle 0 --meter estimate: --telemetry none --db "$T/oltp.db" \
        >"$T/oltp.log" 2>&1 &
    pid=$!
    seen=$(workers $pid)
    wait $pid || fail "oltp + http run, ${envs[*]} $*: $(tail -5 "$T/oltp.log")"
    expect "oltp + http workers' nice/policy at max rate, ${envs[*]} $*" "$seen" = "$want"
    expect "stored policy, ${envs[*]} $*" \
        "$("$TILEBENCH" report latest --db "$T/oltp.db" --format json | jq -r .run.settings.loadgen_sched)" = "$stored"
}
sched_run 7/3 SCHED_BATCH
sched_run 7/3 SCHED_BATCH TB_WORKER_SCHED=auto
sched_run 7/0 SCHED_OTHER TB_WORKER_SCHED=other
sched_run 7/5 SCHED_IDLE -- chrt -i 0
sched_run 7/3 SCHED_BATCH TB_WORKER_SCHED=auto -- chrt -R -o 0
if [ "$(id -u)" = 0 ]; then # leaving SCHED_IDLE takes CAP_SYS_NICE
    sched_run 7/0 SCHED_OTHER TB_WORKER_SCHED=other -- chrt -i 0
    sched_run 7/3 SCHED_BATCH TB_WORKER_SCHED=batch -- chrt -i 0
else # without it the workers keep SCHED_IDLE and say why; the run stores what was asked
    sched_run 7/5 SCHED_BATCH TB_WORKER_SCHED=batch -- chrt -i 0
    grep -q "cannot run SCHED_BATCH (TB_WORKER_SCHED)" "$T/oltp.log" || fail "no warning: $(cat "$T/oltp.log")"
fi
TB_WORKER_SCHED=batch "$TILEBENCH" run "${RUN[@]}" --tiles 2 --steady 1s >"$T/batch.log" 2>&1 &
pid=$!
seen=$(workers $pid)
wait $pid || fail "TB_WORKER_SCHED=batch run: $(tail -5 "$T/batch.log")"
expect "workers' nice/policy with a think time, TB_WORKER_SCHED=batch" "$seen" = 0/3
# a bad value is refused before the results file (or anything else) is made
TB_WORKER_SCHED=idle "$TILEBENCH" run "${RUN[@]}" --db "$T/refused.db" >"$T/bad.log" 2>&1 && rc=0 || rc=$?
expect "TB_WORKER_SCHED=idle: exit status" "$rc" -eq 2
grep -q "TB_WORKER_SCHED 'idle': expected auto, batch or other" "$T/bad.log" ||
    fail "no message naming TB_WORKER_SCHED: $(cat "$T/bad.log")"
expect "results files made by the refused run" "$(ls "$T" | grep -c '^refused\.db' || true)" -eq 0

# 5. a level's users are built a chunk (128) per loop turn: with 400 users per
# worker every one of them is built and connected, both when users are dealt
# out one by one (2 tiles) and when whole tiles go to a worker (16 tiles)
clients() { redis-cli -h 127.0.0.1 -p "$RP" INFO clients | tr -d '\r' | sed -n 's/^connected_clients://p'; }
for shape in "2 400" "16 50"; do
    read -r tiles per_tile <<<"$shape"
    sed -e "s/^users = 2\$/users = $per_tile/" -e 's/^think_time = 20ms$/think_time = 200ms/' "$T/t.ini" >"$T/many.ini"
    # the earlier runs' connections may still be closing on the server: wait until the count holds
    c0=$(clients)
    settled=0
    for _ in $(seq 50); do
        sleep 0.2
        c=$(clients)
        [ "$c" = "$c0" ] && settled=1 && break
        c0=$c
    done
    expect "Redis connection count settled before the run" "$settled" -eq 1
    "$TILEBENCH" run --config "$T/many.ini" --tiles "$tiles" --threads 2 --ramp-up 1s --warm-up 1s --steady 5s \
        --ramp-down 0 --idle 0 --meter estimate: --telemetry none --db "$T/many.db" >"$T/many.log" 2>&1 &
    pid=$!
    # every user connects at its first op, by the end of ramp-up; wait for all of
    # them while the run lasts (no timing asserted), then compare
    c1=$c0
    for _ in $(seq 100); do
        sleep 0.1
        c1=$(clients)
        [ $((c1 - c0)) -ge 800 ] && break
        kill -0 $pid 2>/dev/null || break
    done
    wait $pid || fail "$tiles x $per_tile users run: $(tail -5 "$T/many.log")"
    expect "Redis connections of $tiles tiles x $per_tile users on 2 workers" $((c1 - c0)) -eq 800
    "$TILEBENCH" report latest --db "$T/many.db" --format json >"$T/many.json"
    expect "$tiles x $per_tile users: errors" "$(jq '[.run.levels[0].workloads[].operations[].errors] | add' "$T/many.json")" -eq 0
    expect "$tiles x $per_tile users: tiles with ops" \
        "$(jq '[.run.levels[0].workloads[] | select(([.operations[].count_all] | add) > 0) | .tile] | unique | length' "$T/many.json")" -eq "$tiles"
    rm -f "$T/many.db"*
done
# 6. a phase whose loop stalled over 10 ms gets a warning event, and only such
# a phase. The run is stopped (SIGSTOP) for 300 ms inside phase 1's steady
# state: the stall probe's tick (every 20 ms) due first after the stop fires
# at least 280 ms late, so phase 1 must show a stall of that size and its
# warning, on the console too. Phase 2 is left alone: its warning, if any,
# must agree with its own figure.
phase_max() { # PHASE: the phase's stall max, ms
    jq -r "[.run.events[].message | select(test(\"phase $1: load generator loop stall max\"))][0]" "$T/stall.json" |
        sed -n 's/.*loop stall max \([0-9.]*\) ms.*/\1/p'
}
phase_warns() { # PHASE
    jq "[.run.events[] | select(.kind == \"warning\" and (.message | test(\"phase $1: load generator loop stalled up to\")))] | length" "$T/stall.json"
}
"$TILEBENCH" run --config "$T/t.ini" --tiles 1 --threads 1 --ramp-up 0 --warm-up 0 --steady 2s --phases 2 \
    --ramp-down 0 --idle 0 --meter estimate: --telemetry none --db "$T/r.db" >"$T/stall.log" 2>&1 &
pid=$!
at_exit "kill -CONT $pid 2>/dev/null"
wait_steady "$T/r.db" 1 $pid
sleep 0.5
kill -STOP $pid
sleep 0.3
kill -CONT $pid
rc=0
wait $pid || rc=$?
expect "run stopped for 300 ms" "$rc" -eq 0
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/stall.json"
max=$(phase_max 1)
[ -n "$max" ] || fail "no phase 1 stall figure: $(jq -r '.run.events[].message' "$T/stall.json")"
expect_true "phase 1 stall max (ms) after a 300 ms stop" "$max" '. >= 280'
expect "phase 1 warning events for a ${max} ms stall" "$(phase_warns 1)" -eq 1
grep -q "warning: load generator loop stalled up to $max ms (over 10 ms" "$T/stall.log" ||
    fail "no stall warning on the console: $(grep -i stall "$T/stall.log")"
max2=$(phase_max 2)
[ -n "$max2" ] || fail "no phase 2 stall figure: $(jq -r '.run.events[].message' "$T/stall.json")"
expect "phase 2 warning events for a ${max2} ms stall" "$(phase_warns 2)" -eq "$(jq -n "if $max2 > 10 then 1 else 0 end")"
echo "PASS test_lg_scale"
