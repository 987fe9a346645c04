#!/usr/bin/env bash
# test_kv.sh: the kv workload against a real redis-server. Redis's own INFO
# commandstats agree with the client's SET/GET counts with pipelining, also
# with batches larger than the socket buffer; the
# sequential pattern covers the key space; Zipf keys are skewed where uniform
# keys are not; and a Redis restart in the middle of steady state is survived,
# with the failed ops counted as errors and the level still measured. An
# out-of-range setting is refused, named at its own line.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
RP=${REDIS##*:}
rc() { redis-cli -h 127.0.0.1 -p "$RP" "$@"; }
calls() { rc INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0; }
tile() { # extra kv keys... (THINK: think time, default 20ms)
    printf '[tile]\nname = kv\n[workload.kv]\nkind = kv\nusers = 4\nthink_time = %s\nthink_dist = uniform\nunit = ops/s\nreference = 1\ntimeout = 1s\n' "${THINK:-20ms}"
    printf '%s\n' "$@"
    cat "$T/sut/sut.ini"
}
RUN=(--tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 --idle 0 --quiet --db "$T/r.db")
sum() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"$1\") | .$2] | add" "$T/r.json"; }

# sets_match NAME MIN PIPELINE KV-KEYS...: runs 4 users of SETs with those kv
# keys (on a flushed Redis) and checks the client counted more than MIN SETs,
# that Redis's SET calls equal the client's (up to the 4 x PIPELINE commands
# still in flight at the end) and that no op failed
sets_match() {
    local name=$1 min=$2 pipe=$3 before client server
    shift 3
    tile "set_pct = 100" "pipeline = $pipe" "$@" >"$T/$name.ini"
    rc FLUSHALL >/dev/null
    before=$(calls set)
    "$TILEBENCH" run --config "$T/$name.ini" "${RUN[@]}" >"$T/$name.log" 2>&1 || fail "run: $(cat "$T/$name.log")"
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    client=$(sum SET count_all)
    server=$(($(calls set) - before))
    expect "$name: client SETs" "$client" -gt "$min"
    expect "$name: server SET calls - client SETs (>= 0)" $((server - client)) -ge 0
    expect "$name: server SET calls - client SETs (<= 4 users x pipeline $pipe in flight)" $((server - client)) \
        -le $((4 * pipe))
    expect "$name: no errors" "$(sum SET errors)" -eq 0
}

# 1. pipelining + sequential keys: server calls equal client counts
sets_match seq 500 4 "key_pattern = sequential" "keyspace = 500"
expect "sequential keys cover the key space" "$(rc DBSIZE)" -eq 500

# 1b. batches larger than the socket buffer (16 x 256 KiB): the write that
#     kv makes as it queues a batch cannot take it all, and the rest goes
#     out through hiredis's write event; every command still arrives once
sets_match big 64 16 "value_size = 262144" "key_pattern = sequential" "keyspace = 50"
expect "a stored value is whole" "$(rc STRLEN t1:k0)" -eq 262144

# 2. Zipf versus uniform: distinct keys written out of ~N SETs over 100k keys
distinct() { # pattern
    THINK=2ms tile "set_pct = 100" "key_pattern = $1" "keyspace = 100000" >"$T/$1.ini"
    rc FLUSHALL >/dev/null
    "$TILEBENCH" run --config "$T/$1.ini" "${RUN[@]}" >"$T/run-$1.log" 2>&1 || fail "run: $(cat "$T/run-$1.log")"
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
    echo "$(rc DBSIZE) $(sum SET count_all)"
}
read -r dz nz < <(distinct zipf)
read -r du nu < <(distinct uniform)
echo "zipf: $dz distinct keys of $nz SETs; uniform: $du of $nu"
expect "uniform keys rarely repeat (distinct*100/ops)" $((du * 100 / nu)) -ge 90
expect "zipf keys repeat (distinct*100/ops)" $((dz * 100 / nz)) -le 60

# 3. Redis restarts mid-steady-state: errors are counted, the level is measured.
#    Regression: kv_reconnect_after_refused_connect (a refused reconnect used a
#    context hiredis had already freed, and the run crashed).
# error_rate = 0.01 (%): one error in 10,000 fails it, and this level has
# fewer ops than that (4 users x 20 ms think time x 8 s)
tile "set_pct = 50" "[qos.kv]" "error_rate = 0.01" >"$T/restart.ini"
"$TILEBENCH" run --config "$T/restart.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady 8s --ramp-down 0 --idle 0 \
    --quiet --db "$T/r.db" >"$T/run3.log" 2>&1 &
pid=$!
wait_steady "$T/r.db" 1 $pid
sleep 1
rc SHUTDOWN NOSAVE >/dev/null 2>&1 || true
sleep 1.5
redis-server "$T/sut/redis.conf" --daemonize yes --pidfile "$T/redis2.pid" >/dev/null
# this redis-server is ours now, not `sut down`'s: stop it on the way out, pass or fail
at_exit '[ -f "$T/redis2.pid" ] && kill "$(cat "$T/redis2.pid")" 2>/dev/null'
for _ in $(seq 200); do rc PING >/dev/null 2>&1 && break; sleep 0.1; done
wait $pid || fail "run exited $? after the restart: $(cat "$T/run3.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
expect "run status" "$(jq -r .run.status "$T/r.json")" = complete
errors=$(jq '[.run.levels[0].workloads[].errors] | add' "$T/r.json")
ops=$(jq '[.run.levels[0].workloads[].ops] | add' "$T/r.json")
echo "restart level: $ops ops, $errors errors"
expect "errors counted during the outage" "$errors" -gt 0
expect "ops before and after the outage" "$ops" -gt 400
# the verdict follows from the counts: the error-rate rule's figure is the
# errors' share of all steady-state ops (recomputed here), and it fails the level
rule=$(jq -c '.run.levels[0].qos[] | select(.rule | test("error rate"))' "$T/r.json")
echo "error-rate rule: $rule"
expect_true "error rate observed = 100 x errors / (ops + errors)" \
    "[$(echo "$rule" | jq .observed), $((100 * errors)), $((ops + errors))]" '.[0] as $o | ($o - .[1] / .[2] | fabs) <= 1e-9 * $o'
expect "error-rate rule fails" "$(echo "$rule" | jq .pass)" = false
expect "level verdict: QoS fails on the error rate" "$(jq ".run.levels[0].qos_pass" "$T/r.json")" = false
# 5. an out-of-range kv setting is refused before the run (exit 2), naming the key,
# its value and its own line in the tile file
for bad in "set_pct = 150" "keyspace = 0" "value_size = 2000000" "zipf_theta = 1" "pipeline = 0"; do
    key=${bad%% =*}
    tile "$bad" >"$T/bad.ini"
    line=$(grep -n "^$bad\$" "$T/bad.ini" | cut -d: -f1)
    rc=0; "$TILEBENCH" run --config "$T/bad.ini" "${RUN[@]}" >"$T/bad.log" 2>&1 || rc=$?
    expect "exit for '$bad'" "$rc" -eq 2
    grep -q "bad.ini:$line: \[workload.kv\] $key: '${bad##*= }': expected" "$T/bad.log" ||
        fail "'$bad': message does not name the key at line $line: $(cat "$T/bad.log")"
done
echo "PASS test_kv"
