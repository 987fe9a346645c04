#!/usr/bin/env bash
# test_intended_start.sh: intended-start (open-loop) timing, against the
# embedded SUT's redis-server and PostgreSQL behind a delaying proxy
# (tests/tools/delay_proxy.py).
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
#    mean latency of an unheld op.
# Both counts are checked within U (each user's last op may or may not fit
# in the window). Then oltp orders behind the same proxy in front of
# PostgreSQL: an order's Login is timed from the order's intended start
# (see below). Figures come from the database (sqlite3) and the JSON report
# (jq); the arithmetic is this script's.
source "$(dirname "$0")/lib.sh"

U=8          # users
D=1000       # ms each reply in the window is held
W_H=1500     # ms the hold window lasts: > C + D (the second op is held), < 2D (the third is not)
C=20         # ms cycle time (open loop)
TH=150       # ms think time (closed loop): 2T + D < W_H, so two replies per user are held here too
STEADY=10    # s
K=2          # held replies per user, both loops

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
PG=$(sed -n 's/^pg = //p' "$T/sut/sut.ini")
PGPORT=$(echo "$PG" | sed -n 's/.*port=\([0-9]*\).*/\1/p')

# one_run NAME TARGET HOLD_MS WINDOW_MS HELD STEADY_S WORKLOAD-LINES SUT-LINE: a level
# of one tile behind a fresh proxy in front of TARGET, which holds replies
# for HOLD_MS during WINDOW_MS from 3 s into steady state. SUT-LINE names the
# proxy's port as @PORT@. Checks the proxy held HELD replies; leaves
# $T/NAME.db and $T/NAME.json
one_run() {
    local name=$1 target=$2 hold=$3 window=$4 held=$5 steady=$6 wl=$7 sut=$8 proxy run port=
    /usr/bin/python3 "$TB_SOURCE_DIR/tests/tools/delay_proxy.py" --target "$target" --hold-ms "$hold" \
        --window-ms "$window" --port-file "$T/$name.port" --status-file "$T/$name.status" >"$T/proxy-$name.log" 2>&1 &
    proxy=$!
    at_exit "kill $proxy 2>/dev/null"
    for _ in $(seq 100); do [ -s "$T/$name.port" ] && break; sleep 0.05; done
    port=$(cat "$T/$name.port" 2>/dev/null) || fail "the proxy did not start: $(cat "$T/proxy-$name.log")"
    printf '[tile]\nname = intended\n%s\n[sut]\n%s\n' "$wl" "${sut//@PORT@/$port}" >"$T/$name.ini"
    "$TILEBENCH" run --config "$T/$name.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady "${steady}s" --ramp-down 0 \
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
    expect "$name: replies the proxy held" "$(sed 's/^held=\([0-9]*\).*/\1/' "$T/$name.status")" -eq "$held"
}
# NAME COLUMN [OP]: a column of the one level's row of OP (default SET)
q() { sqlite3 "$T/$1.db" "SELECT $2 FROM ops WHERE name = '${3:-SET}'"; }
# NAME FIELD [OP]: the JSON report's uncorrected FIELD of OP (default SET)
unc() { jq ".run.levels[0].workloads[0].operations[] | select(.name == \"${3:-SET}\") | .uncorrected.$2" "$T/$1.json"; }
steady_s() { sqlite3 "$T/$1.db" "SELECT steady_s FROM levels"; }

kv() { printf '[workload.kv]\nkind = kv\nusers = %d\n%s\nthink_dist = fixed\nset_pct = 100\nunit = ops/s\nreference = 1\ntimeout = 5s\n' $U "$1"; }
one_run open "$REDIS" $D $W_H $((U * K)) $STEADY "$(kv "cycle_time = ${C}ms")" "redis = 127.0.0.1:@PORT@"
one_run closed "$REDIS" $D $W_H $((U * K)) $STEADY "$(kv "think_time = ${TH}ms")" "redis = 127.0.0.1:@PORT@"

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
# L: the mean latency of the unheld ops, from the stored mean (corrected: in
# a closed loop that includes the lateness of each op's start) less the
# U x K holds of D
L=$(jq -n "($(q closed mean_ms) * $n_closed - $U * $K * $D) / ($n_closed - $U * $K)")
pred_closed=$(jq -n "$U * ($W * 1000 - $K * $D) / ($TH + $L) | round")
echo "closed loop: $n_closed SETs in ${W} s (unheld mean $L ms), predicted $pred_closed;" \
    "open - closed = $((n_open - n_closed)), predicted $((pred_open - pred_closed))"
expect_true "closed-loop count - U*(W-2D)/(T+L) within the $U users" "$((n_closed - pred_closed))" "(if . < 0 then -. else . end) <= $U"
expect "closed loop: no errors" "$(q closed errors)" -eq 0
expect_true "closed loop: corrected max < 2D - C (no backlog)" "$(q closed max_ms)" ". < 2 * $D - $C"

# oltp (PostgreSQL behind the proxy): an order's first step is timed from the
# order's intended start. 8 users, an order (Login, one browse, Purchase)
# every OC; one reply per user is held OD (the window, shorter than OD, is
# over before the user sends again). The ~OD/OC orders due meanwhile start
# late, at once: their Logins carry that lateness (uniform over 0..OD), so
# (OD - x)/W of all Logins are above x: at W = 8 s and OD = 2 s, 5% above
# 1.6 s, so Login's corrected p95 >= OD/2. Each Login was answered at once:
# its uncorrected p95 stays small, and so does the corrected p95 of the
# Purchase, which is due at the browse's end, not at the order's start.
OD=2000 OC=100 OSTEADY=8
ow=$(printf '[workload.oltp]\nkind = oltp\nusers = %d\ncycle_time = %dms\nthink_dist = fixed\nnew_customer_pct = 0\nbrowse_min = 1\nbrowse_max = 1\nunit = OPM\nreference = 1\ntimeout = 10s\n' $U $OC)
one_run oltp "127.0.0.1:$PGPORT" $OD 300 $U $OSTEADY "$ow" "pg = ${PG//port=$PGPORT/port=@PORT@}"
echo "oltp Login: corrected p95 $(q oltp p95_ms Login), uncorrected p95 $(unc oltp p95_ms Login) ms;" \
    "Purchase: corrected p95 $(q oltp p95_ms Purchase) ms; $(q oltp count Order) orders"
expect_true "Login corrected p95 >= OD/2 (a late order's Login carries its lateness)" "$(q oltp p95_ms Login)" ". >= $OD / 2"
expect_true "Login uncorrected p95 < OD/10" "$(unc oltp p95_ms Login)" ". < $OD / 10"
expect_true "Purchase corrected p95 < OD/10 (due at the previous step's end)" "$(q oltp p95_ms Purchase)" ". < $OD / 10"
expect_true "oltp: orders - U*W/C within the $U users (every order due is done)" \
    $(($(q oltp count Order) - $(jq -n "$U * $(steady_s oltp) * 1000 / $OC | round"))) "(if . < 0 then -. else . end) <= $U"
echo "PASS test_intended_start"
