#!/usr/bin/env bash
# test_meters.sh: the Yokogawa (WT310, WT210, TCP and serial) and PTDaemon
# drivers against the meter emulator (`tilebench meter sim`, a real TCP
# server) through `tilebench meter probe`, including every fault mode. Each
# case compares what probe got with the emulator's own served-sample counter
# (read in-band with "tb:count?"), and the expected flag of every sample.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
# probe NAME URI N [ARGS]: runs meter probe; the output stays in $T/NAME.out.
probe() {
    local name=$1 uri=$2 n=$3
    shift 3
    local rc=0
    "$TB" meter probe "$uri" --samples "$n" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    PROBE_RC=$rc
}

# field NAME KEY: a value from the probe's summary line.
field() { sed -n 's/^summary: .*/&/p' "$T/$1.out" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# row NAME I: the flags column of sample I.
row_flags() { awk -v i="$2" '$1 == i && NF >= 3 {print $NF}' "$T/$1.out" | head -1; }
row_has() { grep -E "^ +$2 " "$T/$1.out" | grep -q -- "$3" || fail "$1: sample $2 lacks '$3': $(grep -E "^ +$2 " "$T/$1.out")"; }

# ---- WT310, clean ----
start_sim wt310 --protocol wt310 --watts 123.4
probe wt310 "wt310://127.0.0.1:$PORT" 5 --interval 100ms
expect "wt310 probe exit" "$PROBE_RC" -eq 0
grep -q '^model: *WT310$' "$T/wt310.out" || fail "wt310: model line: $(grep model "$T/wt310.out")"
grep -q '^idn: *YOKOGAWA,WT310,C2PH13047V,F1.03$' "$T/wt310.out" || fail "wt310: idn line"
grep -q '^ranges: *300 V (fixed), 2 A (fixed)$' "$T/wt310.out" || fail "wt310: ranges read back: $(grep ranges "$T/wt310.out")"
expect "wt310 ok samples" "$(field wt310 ok)" -eq 5
[ "$(field wt310 mean_w)" = "123.400" ] || fail "wt310 mean_w $(field wt310 mean_w), want 123.400"
expect "wt310 sim served = probe replies" "$(sim_count "$PORT" served)" -eq "$(field wt310 replies)"
expect "wt310 sim requests" "$(sim_count "$PORT" requests)" -eq 5

# ---- WT310, every fault mode ----
# request: 1 ok, 2 ok, 3 nan, 4 inf, 5 garbage, 6 nan, 7 stall, 8 inf, 9 nan,
#          10 garbage, 11 disconnect, 12 nan (the first listed fault wins)
start_sim wt310f --protocol wt310 --watts 80 --fault nan:3 --fault inf:4 --fault garbage:5 --fault stall:7 \
    --fault disconnect:11
probe wt310f "wt310://127.0.0.1:$PORT?timeout=500ms" 12 --interval 100ms
expect "wt310 faults probe exit" "$PROBE_RC" -eq 0
expect "wt310 faults ok" "$(field wt310f ok)" -eq 2
expect "wt310 faults invalid (nan, garbage)" "$(field wt310f invalid)" -eq 6
expect "wt310 faults overrange (inf)" "$(field wt310f overrange)" -eq 2
expect "wt310 faults missing (stall, disconnect)" "$(field wt310f missing)" -eq 2
for i in 3 5 6 9 10 12; do row_has wt310f $i INVALID; done
for i in 4 8; do row_has wt310f $i OVERRANGE; done
row_has wt310f 7 "reply timeout after 500 ms (will reconnect)"
row_has wt310f 11 "connection closed by peer (will reconnect)"
row_has wt310f 8 OVERRANGE # the reconnect after the stall worked
row_has wt310f 12 INVALID  # ... and after the disconnect
# 1 first connection + 2 reconnects + this counter query (the first)
expect "wt310 faults: connections" "$(sim_count "$PORT" connections)" -eq 4
expect "wt310 faults: sim served = probe replies" "$(sim_count "$PORT" served)" -eq "$(field wt310f replies)"
expect "wt310 faults: sim nan" "$(sim_count "$PORT" nan)" -eq 4
expect "wt310 faults: sim overrange" "$(sim_count "$PORT" overrange)" -eq 2
expect "wt310 faults: sim garbage" "$(sim_count "$PORT" garbage)" -eq 2
expect "wt310 faults: sim stalled" "$(sim_count "$PORT" stalled)" -eq 1
expect "wt310 faults: sim disconnects" "$(sim_count "$PORT" disconnects)" -eq 1

# ---- WT310: ranges asked in the URI are set and read back; a range too
# small for 230 V over-ranges for real; auto-ranging flags every sample ----
start_sim wt310r --protocol wt310 --watts 100 --elements 3
probe wt310r "wt310://127.0.0.1:$PORT?volts=150&amps=auto&crest=6&element=sigma" 3 --interval 100ms
grep -q '^ranges: *150 V (fixed), 2 A (auto)$' "$T/wt310r.out" || fail "wt310r ranges: $(grep ranges "$T/wt310r.out")"
grep -q '^crest: *6$' "$T/wt310r.out" || fail "wt310r crest factor"
expect "wt310r overrange at 230 V on the 150 V range" "$(field wt310r overrange)" -eq 3
expect "wt310r autorange flagged" "$(field wt310r autorange)" -eq 3
# The range set above is instrument state, as on a real meter: set it back.
probe wt310s "wt310://127.0.0.1:$PORT?element=sigma&volts=300&amps=5" 2 --interval 100ms
[ "$(field wt310s mean_w)" = "100.000" ] || fail "SIGMA of 3 elements: mean_w $(field wt310s mean_w), want 100.000"
probe wt310e "wt310://127.0.0.1:$PORT?element=2&volts=300" 2 --interval 100ms
[ "$(field wt310e mean_w)" = "33.333" ] || fail "element 2 of 3: mean_w $(field wt310e mean_w), want 33.333"
probe wt310bad "wt310://127.0.0.1:$PORT?volts=151" 1
expect "a range the meter rejects: exit" "$PROBE_RC" -eq 3
grep -q 'error 224' "$T/wt310bad.err" || fail "rejected range: $(cat "$T/wt310bad.err")"

# ---- WT210 (:MEAS, 488.2 sentinels) ----
# request: 1 ok, 2 nan (9.91E+37), 3 inf (9.9E+37), 4 nan, 5 ok, 6 nan
start_sim wt210 --protocol wt210 --watts 42 --fault nan:2 --fault inf:3
probe wt210 "wt210://127.0.0.1:$PORT" 6 --interval 100ms
grep -q '^model: *WT210 (760401)$' "$T/wt210.out" || fail "wt210 model: $(grep model "$T/wt210.out")"
expect "wt210 ok" "$(field wt210 ok)" -eq 2
expect "wt210 invalid (9.91E+37)" "$(field wt210 invalid)" -eq 3
expect "wt210 overrange (9.9E+37)" "$(field wt210 overrange)" -eq 1
[ "$(field wt210 mean_w)" = "42.000" ] || fail "wt210 mean_w $(field wt210 mean_w)"
expect "wt210 sim served = probe replies" "$(sim_count "$PORT" served)" -eq "$(field wt210 replies)"

# ---- Yokogawa over a serial line (the sim's pseudo-terminal) ----
start_sim serial --protocol wt310 --watts 55 --pty --fault inf:2
[ -n "$PTY" ] || fail "sim --pty printed no pty path"
probe serial "yokogawa+serial://$PTY?model=wt310&baud=115200" 3 --interval 100ms
expect "serial probe exit" "$PROBE_RC" -eq 0
expect "serial ok" "$(field serial ok)" -eq 2
expect "serial overrange" "$(field serial overrange)" -eq 1
expect "serial: sim served = probe replies" "$(sim_count "$PORT" served)" -eq "$(field serial replies)"

# ---- a trace: the served watts follow the file ----
printf 'time,watts\n0,61.5\n3600,99\n' >"$T/trace.csv"
start_sim trace --protocol wt310 --trace "$T/trace.csv"
probe trace "wt310://127.0.0.1:$PORT" 2 --interval 100ms
[ "$(field trace mean_w)" = "61.500" ] || fail "trace: mean_w $(field trace mean_w), want 61.500"

# ---- PTDaemon ----
# request: 1 ok, 2 ok, 3 uncertainty 1.5%, 4 nan (-1), 5 garbage, 6 unc, 7 stall,
#          8 nan, 9 unc, 10 garbage, 11 disconnect, 12 unc
start_sim ptd --protocol ptd --watts 215.5 --fault uncertainty:3 --fault nan:4 --fault garbage:5 --fault stall:7 \
    --fault disconnect:11
probe ptd "ptd://127.0.0.1:$PORT?interval=200ms&timeout=1500ms" 12 --interval 200ms
expect "ptd probe exit" "$PROBE_RC" -eq 0
grep -q '^idn: *YOKOGAWA,WT310,C2PH13047V,F1.03$' "$T/ptd.out" || fail "ptd: analyzer idn via Identify"
grep -q '^driver: *ptd 1.9.2-tilebench-sim (YokogawaWT310)$' "$T/ptd.out" || fail "ptd: driver line"
grep -q '^ranges: *300 V (fixed), 20 A (fixed)$' "$T/ptd.out" || fail "ptd: RR ranges"
expect "ptd ok" "$(field ptd ok)" -eq 2
expect "ptd invalid (uncertainty, -1, garbage)" "$(field ptd invalid)" -eq 8
expect "ptd missing (stall, disconnect)" "$(field ptd missing)" -eq 2
for i in 3 6 9 12; do row_has ptd $i INVALID; done
# The uncertainty column is PTD's, averaged over the samples since the last
# poll: 1.5% when exactly the faulty one was taken in between.
[ "$(grep -c ' 1\.500  INVALID' "$T/ptd.out")" -ge 1 ] || fail "ptd: no sample shows 1.500% uncertainty"
row_has ptd 1 "0.200  ok"
[ "$(field ptd mean_w)" = "215.500" ] || fail "ptd mean_w $(field ptd mean_w)"
expect "ptd: sim served = probe replies" "$(sim_count "$PORT" served)" -eq "$(field ptd replies)"
expect "ptd: sim uncertain" "$(sim_count "$PORT" uncertain)" -eq 4
expect "ptd: sim stalled" "$(sim_count "$PORT" stalled)" -eq 1
expect "ptd: sim disconnects" "$(sim_count "$PORT" disconnects)" -eq 1
# PTD's own protocol errors come back in its words
exec 8<>"/dev/tcp/127.0.0.1/$PORT"
printf 'Bogus\r\nSR,V\r\nSR,V,123\r\n' >&8
for want in "Unknown command" "Invalid number of parameters" "Error in parameter"; do
    IFS= read -r -t 5 line <&8 || fail "ptd: no reply for '$want'"
    [ "${line%$'\r'}" = "$want" ] || fail "ptd: got '$line', want '$want'"
done
exec 8<&-
echo "ok: ptd error replies"

# ---- SIGUSR1 prints the counters ----
kill -USR1 "$SIM_PID"
for i in $(seq 1 50); do grep -q '^counters: ' "$T/ptd.log" && break; sleep 0.05; done
grep -q '^counters: requests=12 served=10 ' "$T/ptd.log" || fail "SIGUSR1 counters: $(grep counters "$T/ptd.log")"
echo "ok: SIGUSR1 counters"

# ---- errors ----
probe refused "wt310://127.0.0.1:1" 1
expect "connection refused: exit" "$PROBE_RC" -eq 3
grep -q "connect 127.0.0.1:1: Connection refused" "$T/refused.err" || fail "refused: $(cat "$T/refused.err")"
probe bogus "bogus://x" 1
expect "unknown scheme: exit" "$PROBE_RC" -eq 2
rc=0
"$TB" meter sim --listen "127.0.0.1:$PORT" >"$T/busy.log" 2>&1 || rc=$?
expect "sim on a busy port: exit" "$rc" -eq 3
grep -q "Address already in use" "$T/busy.log" || fail "busy port: $(cat "$T/busy.log")"
rc=0
"$TB" meter sim --watts 5 --trace "$T/trace.csv" >"$T/contra.log" 2>&1 || rc=$?
expect "--watts with --trace: exit" "$rc" -eq 2
rc=0
"$TB" meter sim --fault nan:0 >"$T/fault0.log" 2>&1 || rc=$?
expect "--fault nan:0: exit" "$rc" -eq 2

# run: a meter that does not answer aborts the run (exit 3), and
# stores no run; a bad parameter in a valid scheme is a usage error (exit 2)
rc=0
"$TB" run --tiles 1 --meter "ptd://127.0.0.1:1" --db "$T/unreach.db" >"$T/unreach.log" 2>&1 || rc=$?
expect "run with an unreachable meter: exit" "$rc" -eq 3
grep -q "Connection refused" "$T/unreach.log" || fail "unreachable meter: $(cat "$T/unreach.log")"
rc=0
"$TB" run --tiles 1 --meter "ptd://127.0.0.1:1?bogus=1" --db "$T/unreach.db" >"$T/badparam.log" 2>&1 || rc=$?
expect "run with a bad meter parameter: exit" "$rc" -eq 2
grep -q "'bogus': unknown parameter" "$T/badparam.log" || fail "bad meter parameter: $(cat "$T/badparam.log")"

# a valid URI for a meter this host lacks is a missing device (exit 3, as a
# missing serial device), not a usage error; a bad parameter stays exit 2
rc=0
TB_RAPL_ROOT=/nonexistent/powercap "$TB" meter probe rapl: >"$T/norapl.log" 2>&1 || rc=$?
expect "rapl: without powercap zones: exit" "$rc" -eq 3
grep -q "no RAPL powercap interface" "$T/norapl.log" || fail "rapl: without zones: $(cat "$T/norapl.log")"
rc=0
TB_RAPL_ROOT=/nonexistent/powercap "$TB" meter probe "rapl:?zones=core" >"$T/badrapl.log" 2>&1 || rc=$?
expect "rapl: with a bad zones value: exit" "$rc" -eq 2
if [ ! -e /dev/ipmi0 ] && [ ! -e /dev/ipmi/0 ] && [ ! -e /dev/ipmidev/0 ]; then
    rc=0
    "$TB" meter probe ipmi:local >"$T/noipmi.log" 2>&1 || rc=$?
    expect "ipmi:local without /dev/ipmi0: exit" "$rc" -eq 3
    grep -q "no in-band BMC" "$T/noipmi.log" || fail "ipmi:local without a BMC: $(cat "$T/noipmi.log")"
fi

echo "PASS test_meters"
