#!/usr/bin/env bash
# test_intended_start.sh: intended-start (open-loop) timing, against a real
# redis-server behind a delaying proxy (tests/tools/delay_proxy.py).
#
# The proxy holds every reply that reaches it during a window of W_H for D,
# once, in the middle of steady state. U kv users, one SET in flight each.
#  - Open loop (cycle_time C, fixed): a user's op due in the window waits D
#    for its reply, so does the one after it (sent late, at once), and then
#    the user works off its backlog of ops due meanwhile, each sent late but
#    answered at once. Every op due in the steady window W is done:
#    U * W / C ops. The corrected latency (from the intended start) of the
#    second held op is 2D - C and that of the backlog falls from there to 0,
#    so about D/W of all ops (10%) are above D: corrected p99 and max >= D.
#    Only the 2 held ops per user waited on the server themselves: their
#    uncorrected latency (from the send) is about D, 2 in W/C = 500 ops per
#    user (0.4%), so the uncorrected p99 stays far below D and the
#    uncorrected max near D, below the corrected max.
#  - Closed loop (think_time T, fixed): 2 replies per user are held too, but
#    no op is owed for the time lost: U * (W - 2D) / (T + L) ops, L the
#    typical latency of an unheld op (the level's corrected p50).
# Both counts are checked within U (each user's last op may or may not fit
# in the window). Figures come from the database (sqlite3) and the JSON
# report (jq); the arithmetic is this script's.
source "$(dirname "$0")/lib.sh"

U=8          # users
D=1000       # ms each reply in the window is held
W_H=1500     # ms the hold window lasts: > C + D (the second op is held), < 2D (the third is not)
C=20         # ms cycle time (open loop)
TH=150       # ms think time (closed loop): 2T + D < W_H, so two replies per user are held here too
STEADY=10    # s
K=2          # held replies per user, both loops

command -v redis-server >/dev/null || fail "redis-server not installed (scripts/install-deps)"
RP=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" --daemonize yes \
    --pidfile "$T/redis.pid" --logfile "$T/redis.log" || fail "redis-server did not start"
at_exit '[ -f "$T/redis.pid" ] && kill "$(cat "$T/redis.pid")"'
for _ in $(seq 100); do redis-cli -p "$RP" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done
redis-cli -p "$RP" PING | grep -q PONG || fail "redis-server on port $RP does not answer"

# one_run NAME TIMING-KEY: a level behind a fresh proxy, which holds replies
# for D during W_H from 3 s into steady state; leaves $T/NAME.json and the
# proxy's status line in $T/NAME.status
one_run() {
    local name=$1 timing=$2 proxy run port=
    /usr/bin/python3 "$TB_SOURCE_DIR/tests/tools/delay_proxy.py" --target "127.0.0.1:$RP" --hold-ms $D \
        --window-ms $W_H --port-file "$T/$name.port" --status-file "$T/$name.status" >"$T/proxy-$name.log" 2>&1 &
    proxy=$!
    at_exit "kill $proxy 2>/dev/null"
    for _ in $(seq 100); do [ -s "$T/$name.port" ] && break; sleep 0.05; done
    port=$(cat "$T/$name.port" 2>/dev/null) || fail "the proxy did not start: $(cat "$T/proxy-$name.log")"
    printf '[tile]\nname = intended\n[workload.kv]\nkind = kv\nusers = %d\n%s\nthink_dist = fixed\n' $U "$timing" \
        >"$T/$name.ini"
    printf 'set_pct = 100\nunit = ops/s\nreference = 1\ntimeout = 5s\n[sut]\nredis = 127.0.0.1:%s\n' "$port" \
        >>"$T/$name.ini"
    "$TILEBENCH" run --config "$T/$name.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady ${STEADY}s --ramp-down 0 \
        --idle 0 --db "$T/$name.db" >"$T/$name.log" 2>&1 &
    run=$!
    # the level starts when its line is printed; steady state begins 2 s later
    for _ in $(seq 200); do grep -q '^level 1 tiles' "$T/$name.log" && break; sleep 0.05; done
    grep -q '^level 1 tiles' "$T/$name.log" || fail "$name: the level did not start: $(cat "$T/$name.log")"
    sleep 5
    kill -USR1 $proxy
    wait $run || fail "$name: run exited $?: $(cat "$T/$name.log")"
    for _ in $(seq 100); do [ -s "$T/$name.status" ] && break; sleep 0.05; done
    [ -s "$T/$name.status" ] || fail "$name: the proxy never closed its window"
    kill $proxy
    "$TILEBENCH" report latest --db "$T/$name.db" --format json >"$T/$name.json"
    echo "$name: proxy $(cat "$T/$name.status")"
    expect "$name: replies the proxy held (users x $K)" "$(sed 's/^held=\([0-9]*\).*/\1/' "$T/$name.status")" -eq $((U * K))
}
q() { sqlite3 "$T/$1.db" "SELECT $2 FROM ops WHERE name = 'SET'"; } # NAME COLUMN: the one level's SET row
unc() { jq ".run.levels[0].workloads[0].operations[] | select(.name == \"SET\") | .uncorrected.$2" "$T/$1.json"; }
steady_s() { sqlite3 "$T/$1.db" "SELECT steady_s FROM levels"; }

one_run open "cycle_time = ${C}ms"
one_run closed "think_time = ${TH}ms"

# open loop: latency
c_p99=$(q open p99_ms) c_max=$(q open max_ms) u_p99=$(unc open p99_ms) u_max=$(unc open max_ms)
echo "open loop SET: corrected p99 $c_p99 max $c_max ms; uncorrected p99 $u_p99 max $u_max ms"
expect_true "corrected p99 >= D" "$c_p99" ". >= $D"
expect_true "corrected max >= 2D - C (the second held op)" "$c_max" ". >= 2 * $D - $C"
expect_true "uncorrected p99 < D/2 (0.4% of ops were held)" "$u_p99" ". < $D / 2"
expect_true "uncorrected max >= D (a held op)" "$u_max" ". >= $D"
expect_true "uncorrected max < 2D - C (no op held twice)" "$u_max" ". < 2 * $D - $C"
expect_true "JSON corrected p99 is the stored one" \
    "$(jq '.run.levels[0].workloads[0].operations[] | select(.name == "SET") | .p99_ms' "$T/open.json")" ". == $c_p99"

# open loop: every op due in the steady window is done
W=$(steady_s open)
n_open=$(q open count)
pred_open=$(jq -n "$U * $W * 1000 / $C | round")
echo "open loop: $n_open SETs in ${W} s, predicted $pred_open"
expect_true "open-loop count - U*W/C within the $U users" "$((n_open - pred_open))" "(if . < 0 then -. else . end) <= $U"
expect "open loop: no errors" "$(q open errors)" -eq 0

# closed loop: the held time is lost, not owed
W=$(steady_s closed)
n_closed=$(q closed count)
L=$(q closed p50_ms)
pred_closed=$(jq -n "$U * ($W * 1000 - $K * $D) / ($TH + $L) | round")
echo "closed loop: $n_closed SETs in ${W} s (p50 $L ms), predicted $pred_closed;" \
    "open - closed = $((n_open - n_closed)), predicted $((pred_open - pred_closed))"
expect_true "closed-loop count - U*(W-2D)/(T+L) within the $U users" "$((n_closed - pred_closed))" "(if . < 0 then -. else . end) <= $U"
expect "closed loop: no errors" "$(q closed errors)" -eq 0
expect_true "closed loop: corrected max < 2D - C (no backlog)" "$(q closed max_ms)" ". < 2 * $D - $C"
echo "PASS test_intended_start"
