#!/usr/bin/env bash
# test_meters_ipmi.sh: the IPMI driver against a real BMC peer on loopback:
# OpenIPMI's ipmi_sim (Debian openipmi) over RMCP+/lanplus. The SDR power sensor "Pwr Consumption" reads a
# file the test writes; DCMI Get Power Reading, which stock ipmi_sim lacks,
# is answered by a small ipmi_sim module built here from the C below against
# libopenipmi-dev's server headers. Checks: values follow the file, 0 W and
# "not active" readings are INVALID, the averaging window is recorded, a
# wrong password is a clear error that never shows the password. A 250 ms
# window (which ipmitool's text prints as 0 s) is stored as 250 ms, and a BMC
# whose readings all have min = max = average is NOT AVERAGED in the text and
# HTML reports of a run.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
for tool in ipmi_sim sdrcomp ipmitool cc ss; do
    command -v "$tool" >/dev/null || fail "$tool not found (scripts/install-deps installs openipmi, ipmitool, libopenipmi-dev)"
done
[ -f /usr/include/OpenIPMI/mcserv.h ] || fail "OpenIPMI/mcserv.h not found (install libopenipmi-dev)"

SIM_PID=""
at_exit '[ -n "$SIM_PID" ] && { kill "$SIM_PID" 2>/dev/null; wait "$SIM_PID" 2>/dev/null; }'

# ---- the DCMI module: Get Power Reading (NetFn 0x2C, cmd 0x02, group
# extension 0xDC) from a file "WATTS [active|inactive [PERIOD_MS [MIN MAX AVG]]]"
# (default: 1000 ms, min = max = avg = WATTS); DCMI spec 1.5 6.6.1 layout.
cat >"$T/dcmi_mod.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <OpenIPMI/serv.h>
#include <OpenIPMI/mcserv.h>
static char path[512];
int ipmi_sim_module_init(sys_data_t *sys, const char *options);
static void le(unsigned char *p, uint32_t v, int n) { for (int i = 0; i < n; i++) p[i] = (v >> (8 * i)) & 0xff; }
static void get_power_reading(lmc_data_t *mc, msg_t *msg, unsigned char *rdata, unsigned int *rdata_len, void *cb) {
    unsigned w = 0, period = 1000, mma[3];
    char state[32] = "active";
    int n = 0;
    FILE *f = fopen(path, "r");
    (void)mc; (void)cb;
    if (msg->cmd != 0x02) { rdata[0] = 0xC1; *rdata_len = 1; return; }
    if (f) { n = fscanf(f, "%u %31s %u %u %u %u", &w, state, &period, &mma[0], &mma[1], &mma[2]); fclose(f); }
    if (n < 1) w = 0;
    if (n < 6) mma[0] = mma[1] = mma[2] = w;
    rdata[0] = 0x00;
    rdata[1] = 0xDC;
    le(rdata + 2, w, 2); /* current */
    for (int i = 0; i < 3; i++) le(rdata + 4 + 2 * i, mma[i], 2); /* min, max, avg */
    le(rdata + 10, (uint32_t)time(NULL), 4);
    le(rdata + 14, period, 4); /* averaging period, ms */
    rdata[18] = strcmp(state, "inactive") == 0 ? 0x00 : 0x40;
    *rdata_len = 19;
}
int ipmi_sim_module_init(sys_data_t *sys, const char *options) {
    (void)sys;
    snprintf(path, sizeof path, "%s", options);
    ipmi_emu_register_group_extension_handler(0xDC, get_power_reading, NULL);
    return 0;
}
EOF
cc -shared -fPIC -Wall -Werror -o "$T/dcmi_mod.so" "$T/dcmi_mod.c" 2>"$T/cc.log" ||
    fail "cannot build the DCMI ipmi_sim module: $(cat "$T/cc.log")"

# ---- a free UDP port on loopback ----
PORT=""
for i in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    if ! ss -Hulnp "sport = :$p" 2>/dev/null | grep -q .; then PORT=$p; break; fi
done
[ -n "$PORT" ] || fail "no free UDP port found"

# ---- ipmi_sim set-up ----
echo 120 >"$T/watts"
echo 215 >"$T/dcmi_watts"
mkdir -p "$T/state/ipmi_sim/tbsim"
cat >"$T/lan.conf" <<EOF
name "tbsim"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $PORT
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
user 2 true "admin" "s3cr3t-pw" admin 10 none md2 md5 straight
loadlib "$T/dcmi_mod.so" "$T/dcmi_watts"
EOF
cat >"$T/sim.emu" <<EOF
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
sensor_add 0x20 0 0 35 0x6f event-only
sensor_add 0x20 0 1 0x0b 0x01 poll 1000 file "$T/watts" div=2
mc_enable 0x20
EOF
# The power sensor: 8-bit raw value, m=2, so 0..510 W in 2 W steps (div=2 above).
cat >"$T/power.sdrs" <<'EOF'
sdr type 18
	device_slave_address	0x20
	device_channel_number	0
	chassis			true
	ipmb_event_gen		false
	ipmb_event_recv		false
	fru_inventory		false
	sel			true
	sdr			true
	sensor			true
	entity_id		system_board
	entity_instance		1
	id_string		"tilebench BMC"
endsdr
sdr type 1
	sensor_owner_id		0x20
	sensor_owner_lun	0
	channel_number		0
	sensor_number		1
	entity_id		system_board
	entity_instance		1
	sensor_type		Other_Units_Based_Sensor
	init_scanning		true
	init_sensor_type	true
	default_sensor_scan_on	true
	event_reading_type_code	1
	analog_data_format	unsigned
	rate_unit		none
	modifier_unit		none
	percentage		false
	base_unit		Watts
	modifier_unit_code	unspecified
	linearization		linear
	m			2
	tolerance		0
	b			0
	accuracy		1
	accuracy_exp		0
	sensor_direction	input
	r_exp			0
	b_exp			0
	sensor_maximum		255
	sensor_minimum		0
	id_string		"Pwr Consumption"
endsdr
EOF
sdrcomp -o "$T/state/ipmi_sim/tbsim/sdr.20.main" "$T/power.sdrs" >"$T/sdrcomp.log" 2>&1 ||
    fail "sdrcomp failed: $(cat "$T/sdrcomp.log")"
ipmi_sim -c "$T/lan.conf" -f "$T/sim.emu" -s "$T/state" -n >"$T/ipmi_sim.log" 2>&1 &
SIM_PID=$!
for i in $(seq 1 100); do
    ss -Huln "sport = :$PORT" 2>/dev/null | grep -q . && break
    kill -0 "$SIM_PID" 2>/dev/null || fail "ipmi_sim exited: $(cat "$T/ipmi_sim.log")"
    sleep 0.05
done
ss -Huln "sport = :$PORT" | grep -q . || fail "ipmi_sim did not bind UDP $PORT within 5 s: $(cat "$T/ipmi_sim.log")"
echo "ok: ipmi_sim up on udp 127.0.0.1:$PORT"

BMC="ipmi://admin:s3cr3t-pw@127.0.0.1:$PORT"
field() { sed -n 's/^summary: .*/&/p' "$T/$1.out" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
probe() {
    local name=$1 uri=$2 n=$3 rc=0
    "$TB" meter probe "$uri" --samples "$n" --interval 200ms >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    PROBE_RC=$rc
    if grep -q 's3cr3t-pw' "$T/$name.out" "$T/$name.err"; then fail "$name: the password appears in the output"; fi
}

# wait_watts NAME URI WANT: probes once every 0.2 s (up to ~6 s) until the
# reading is WANT: the BMC polls its file once a second, and reads 0 (no
# reading yet, rightly INVALID) until its first poll.
wait_watts() {
    local name=$1 uri=$2 want=$3 i
    for i in $(seq 1 30); do
        probe "$name" "$uri" 1
        [ "$(field "$name" mean_w)" = "$want" ] && return 0
        sleep 0.2
    done
    fail "$name: the reading never became $want W: $(cat "$T/$name.out" "$T/$name.err")"
}

# ---- SDR sensor by name ----
SENSOR="$BMC?method=sensor&sensor=Pwr%20Consumption"
wait_watts sensor1 "$SENSOR" 120.000
probe sensor "$SENSOR" 2
expect "sensor probe exit" "$PROBE_RC" -eq 0
[ "$(field sensor mean_w)" = "120.000" ] || fail "sensor: mean_w $(field sensor mean_w), want 120.000"
expect "sensor ok samples" "$(field sensor ok)" -eq 2
grep -q "^meter: *ipmi://admin:\*\*\*@127.0.0.1:$PORT" "$T/sensor.out" || fail "sensor: URI not redacted"
echo 200 >"$T/watts"
wait_watts sensor2 "$SENSOR" 200.000
echo "ok: the sensor follows the BMC's value (200 W)"
echo 0 >"$T/watts"
for i in $(seq 1 30); do
    probe sensor0 "$SENSOR" 1
    [ "$(field sensor0 invalid)" = "1" ] && break
    sleep 0.2
done
expect "0 W from the sensor is INVALID" "$(field sensor0 invalid)" -eq 1
probe nosensor "$BMC?method=sensor&sensor=No%20Such%20Sensor" 1
expect "unknown sensor: exit" "$PROBE_RC" -eq 3
grep -q "No Such Sensor" "$T/nosensor.err" || fail "unknown sensor: $(cat "$T/nosensor.err")"

# ---- DCMI Get Power Reading (through the module) ----
probe dcmi "$BMC" 2
expect "dcmi probe exit" "$PROBE_RC" -eq 0
[ "$(field dcmi mean_w)" = "215.000" ] || fail "dcmi: mean_w $(field dcmi mean_w): $(cat "$T/dcmi.out" "$T/dcmi.err")"
grep -q '^window: *1000 ms' "$T/dcmi.out" || fail "dcmi: averaging window not recorded: $(cat "$T/dcmi.out")"
echo "300 inactive" >"$T/dcmi_watts"
probe dcmi_off "$BMC?method=dcmi" 1
expect "dcmi not active is INVALID" "$(field dcmi_off invalid)" -eq 1
echo 65535 >"$T/dcmi_watts"
probe dcmi_max "$BMC" 1
expect "dcmi 65535 W is INVALID" "$(field dcmi_max invalid)" -eq 1
echo 0 >"$T/dcmi_watts"
probe dcmi_zero "$BMC" 1
expect "dcmi 0 W is INVALID" "$(field dcmi_zero invalid)" -eq 1

# ---- a sub-second window, averaged and not-averaged readings ----
# ipmitool's text gives the window in whole seconds, so 250 ms prints as
# "00000000 Seconds"; the driver must read 250 from the raw DCMI reply.
echo "215 active 250 190 240 214" >"$T/dcmi_watts"
IPMI_PASSWORD=s3cr3t-pw ipmitool -I lanplus -H 127.0.0.1 -p "$PORT" -U admin -E -C 3 dcmi power reading \
    >"$T/dcmi_text.out" 2>&1 || fail "ipmitool dcmi power reading: $(cat "$T/dcmi_text.out")"
grep -Eq 'Sampling period: *00000000 Seconds' "$T/dcmi_text.out" ||
    fail "ipmitool did not print a 250 ms window as 0 s: $(cat "$T/dcmi_text.out")"
probe win "$BMC" 2
grep -q '^window: *250 ms' "$T/win.out" || fail "dcmi: 250 ms window not read from the raw reply: $(cat "$T/win.out")"
expect "averaged readings (min < max) are not FLAT" "$(grep -c 'FLAT' "$T/win.out" || true)" -eq 0
echo "215 active 250" >"$T/dcmi_watts" # min = max = avg = 215
probe flat "$BMC" 2
expect "min = max = avg readings are FLAT (flag column)" "$(grep -Ec '^ +[12] .*FLAT$' "$T/flat.out")" -eq 2
echo "ok: the 250 ms window comes from the raw reply; min = max = avg readings are FLAT"

# A run through this BMC: the window is stored in ms and, with every reading
# flat over more than TB_IPMI_NOT_AVERAGED_MIN (10) readings, the meter is
# NOT AVERAGED in the text and HTML reports. A second run whose readings are
# averaged shows the window and no such verdict. The load: kv against a
# redis-server of our own on loopback.
# The port: one that no socket uses in any state, below the kernel's
# ephemeral range; a start that still loses the port to another process
# (a bind race) is tried again on another one.
REDIS_PID=""
at_exit '[ -n "$REDIS_PID" ] && { kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; }'
for try in 1 2 3 4 5; do
    RP=""
    for i in $(seq 1 50); do
        p=$((20000 + RANDOM % 12000))
        if ! ss -Htan "sport = :$p" 2>/dev/null | grep -q .; then RP=$p; break; fi
    done
    [ -n "$RP" ] || fail "no free TCP port for redis"
    redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" >"$T/redis.log" 2>&1 &
    REDIS_PID=$!
    for i in $(seq 1 100); do
        [ "$(redis-cli -h 127.0.0.1 -p "$RP" ping 2>/dev/null)" = PONG ] && break 2
        kill -0 "$REDIS_PID" 2>/dev/null || break
        sleep 0.05
    done
    grep -q "Address already in use" "$T/redis.log" || fail "redis-server did not start: $(cat "$T/redis.log")"
    echo "redis port $RP was taken meanwhile; another"
done
[ "$(redis-cli -h 127.0.0.1 -p "$RP" ping)" = PONG ] || fail "redis-server did not answer within 5 s"
printf '[tile]\nname = kv\n[workload.kv]\nkind = kv\nusers = 1\nthink_time = 50ms\nthink_dist = uniform\nunit = ops/s\nreference = 1\ntimeout = 1s\n[sut]\nredis = 127.0.0.1:%s\n' \
    "$RP" >"$T/kv.ini"
bmc_run() { # NAME STEADY: one level against the BMC into $T/NAME.db, and its text and HTML reports
    "$TB" run --config "$T/kv.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady "$2" --ramp-down 0 --idle 0 \
        --meter "$BMC" --db "$T/$1.db" --quiet >"$T/$1.log" 2>&1 || fail "$1: run exited $?: $(cat "$T/$1.log")"
    "$TB" report latest --db "$T/$1.db" >"$T/$1.txt" || fail "$1: text report failed"
    "$TB" report latest --db "$T/$1.db" --format html -o "$T/$1.html" || fail "$1: html report failed"
    if grep -q 's3cr3t-pw' "$T/$1.txt" "$T/$1.html"; then fail "$1: the password appears in a report"; fi
}
# db_int NAME SQL: one number from the database, read by Python's sqlite3, not tilebench
db_int() { /usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$T/$1.db" "$2"; }
bmc_run flat 15s
expect "flat run: meters.avg_window_ms" "$(db_int flat 'SELECT avg_window_ms FROM meters')" -eq 250
VALID=$(db_int flat 'SELECT count(*) FROM power_samples WHERE (flags & 39) = 0')   # 39 = 0x27, BAD
FLAT=$(db_int flat 'SELECT count(*) FROM power_samples WHERE (flags & 39) = 0 AND (flags & 64) != 0') # 64 = FLAT
expect "flat run: valid readings (>= 10, the 'many' of the rule)" "$VALID" -ge 10
expect "flat run: every valid reading stored FLAT" "$FLAT" -eq "$VALID"
grep -Eq "^ +averaging window 250 ms; NOT AVERAGED: min = max = average in all $VALID valid readings\$" "$T/flat.txt" ||
    fail "flat run: text report lacks the window or the verdict: $(grep -A1 'meter 0' "$T/flat.txt")"
grep -q "<td class=\"n\">250</td><td class=\"fail\">NOT AVERAGED: min = max = average in all $VALID valid readings</td>" \
    "$T/flat.html" || fail "flat run: HTML meters table lacks the window or the verdict: $(grep -o '<td><code>ipmi[^\n]*' "$T/flat.html" | head -c 800)"
echo "ok: flat run: window 250 ms stored and shown; NOT AVERAGED in text and HTML ($FLAT of $VALID)"

echo "215 active 250 190 240 214" >"$T/dcmi_watts"
bmc_run avg 3s
expect "averaged run: meters.avg_window_ms" "$(db_int avg 'SELECT avg_window_ms FROM meters')" -eq 250
expect "averaged run: FLAT samples" "$(db_int avg 'SELECT count(*) FROM power_samples WHERE (flags & 64) != 0')" -eq 0
grep -Eq '^ +averaging window 250 ms$' "$T/avg.txt" || fail "averaged run: text: $(grep -A1 'meter 0' "$T/avg.txt")"
grep -q '<td class="n">250</td><td></td>' "$T/avg.html" || fail "averaged run: HTML meters row"
expect "averaged run: no verdict in the text report" "$(grep -c 'NOT AVERAGED\|min = max' "$T/avg.txt" || true)" -eq 0
expect "averaged run: no verdict cell in the HTML report" "$(grep -c 'class="fail">NOT AVERAGED' "$T/avg.html" || true)" -eq 0
echo "ok: averaged run: window shown, no NOT AVERAGED"

# ---- a wrong password: a clear error, exit 3, no password shown ----
probe badpw "ipmi://admin:wrong-pw@127.0.0.1:$PORT" 1
expect "wrong password: exit" "$PROBE_RC" -eq 3
grep -q "cannot log in to the BMC" "$T/badpw.err" || fail "wrong password: $(cat "$T/badpw.err")"
if grep -q 'wrong-pw' "$T/badpw.err" "$T/badpw.out"; then fail "wrong password echoed"; fi

echo "PASS test_meters_ipmi"
