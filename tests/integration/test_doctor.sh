#!/usr/bin/env bash
# test_doctor.sh: `tilebench doctor` against the embedded SUT (`sut up`) and
# the meter emulator. With both up, the meter, temperature, open-files and
# every SUT line is ok; the lines that read this host (clock, governor, EPP,
# turbo, tuned, RAPL, telemetry) are judged here against what the host
# itself shows, read by this script, so on a VM without cpufreq or time
# synchronisation they are warn, and the exit status is 1 exactly when some
# line is warn. A fake powercap tree (TB_RAPL_ROOT) makes the RAPL line ok.
# Then: the emulator stopped -> the meter line fails, exit 2; a tile beyond
# the SUT's data -> the oltp and web lines fail; an open-files limit too low
# -> that line fails; Redis stopped -> the kv line
# fails, exit 2. Each doctor call must take a few seconds at most.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
"$TB" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
start_sim wt310 --protocol wt310 --watts 180
CAL=$(date -u -d '-30 days' +%F)
METER="wt310://127.0.0.1:$PORT?calibrated=$CAL"
echo 24.5 >"$T/inlet"

# doctor NAME ARGS...: runs doctor; output in $T/NAME.out, status in DRC;
# fails when it took 10 s or more.
doctor() {
    local name=$1 t0 t1
    shift
    t0=$(date +%s%N)
    DRC=0
    "$TB" doctor "$@" >"$T/$name.out" 2>"$T/$name.err" || DRC=$?
    t1=$(date +%s%N)
    expect "$name: doctor took (ms)" $(((t1 - t0) / 1000000)) -lt 10000
    cat "$T/$name.out"
}
# status NAME CHECK: the status column of one check's line.
status() { awk -v c="$2" '$2 == c {print $1}' "$T/$1.out"; }
is() {
    local got
    got=$(status "$1" "$2")
    [ "$got" = "$3" ] || fail "$1: check $2 is '$got', expected $3: $(grep -E "^[a-z]+ +$2 " "$T/$1.out")"
    echo "ok: $1: $2 is $3"
}
detail_has() { grep -E "^[a-z]+ +$2 " "$T/$1.out" | grep -qF -- "$3" || fail "$1: $2 lacks '$3'"; }

# ---- everything up ----
mkdir -p "$T/rapl/intel-rapl:0"
echo package-0 >"$T/rapl/intel-rapl:0/name"
echo 1000000 >"$T/rapl/intel-rapl:0/energy_uj"
echo 262143328850 >"$T/rapl/intel-rapl:0/max_energy_range_uj"
TB_RAPL_ROOT="$T/rapl" doctor up --config "$T/tile.ini" --tiles 1..2 --meter "$METER" --temperature "file:$T/inlet"
for c in tile-file meter.1 temperature.1 open-files sut.oltp sut.kv sut.mail sut.web rapl; do is up "$c" ok; done
detail_has up meter.1 "WT310"
detail_has up meter.1 "180.0 W"
detail_has up meter.1 "calibrated $CAL"
detail_has up temperature.1 "24.5 C"
detail_has up sut.oltp "max_connections $((100 + 20 * 2))"
detail_has up sut.oltp "tile2.products holds 10000 rows"
detail_has up sut.kv "maxclients 10000"
# the host's own lines, against what this script reads of the host
gov=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || true)
if [ -n "$gov" ]; then is up governor ok && detail_has up governor "$gov"; else is up governor warn; fi
prof=$(head -1 /etc/tuned/active_profile 2>/dev/null || true)
if [ -n "$prof" ]; then is up tuned ok && detail_has up tuned "$prof"; else is up tuned warn; fi
synced=no
[ "$(timedatectl show -p NTPSynchronized --value 2>/dev/null)" = yes ] && synced=yes
[ -e /run/systemd/timesync/synchronized ] && synced=yes
chronyc -n tracking 2>/dev/null | grep -q 'Leap status *: Normal' && synced=yes
if [ $synced = yes ]; then is up clock ok; else is up clock warn; fi
for c in epp turbo telemetry not-available; do
    s=$(status up "$c")
    [ "$s" = ok ] || [ "$s" = warn ] || fail "up: $c is '$s', expected ok or warn"
done
nwarn=$(awk '$1 == "warn"' "$T/up.out" | wc -l)
expect "up: fail lines" "$(awk '$1 == "fail"' "$T/up.out" | wc -l)" -eq 0
if [ "$nwarn" -gt 0 ]; then expect "up: exit with $nwarn warnings" "$DRC" -eq 1; else expect "up: exit" "$DRC" -eq 0; fi
expect "up: checks listed" "$(wc -l <"$T/up.out")" -eq 16

# --json: the same checks and statuses
TB_RAPL_ROOT="$T/rapl" "$TB" doctor --json --config "$T/tile.ini" --tiles 1..2 --meter "$METER" \
    --temperature "file:$T/inlet" >"$T/up.json" 2>/dev/null || true
[ "$(jq -r '.[] | "\(.status) \(.check)"' "$T/up.json")" = "$(awk '{print $1, $2}' "$T/up.out")" ] ||
    fail "--json does not list the text's checks: $(cat "$T/up.json")"
echo "ok: --json lists the same checks"
# run --dry-run is the same checks
"$TB" run --dry-run --config "$T/tile.ini" --tiles 1..2 --meter "$METER" >"$T/dry.out" 2>/dev/null || true
is dry sut.oltp ok
is dry meter.1 ok

# ---- the embedded SUT (no [sut] section): its programs ----
doctor embedded --tiles 1 --meter "$METER"
is embedded sut ok
detail_has embedded sut "embedded"

# ---- a cold inlet and a meter without a calibration date: warnings, failures under compliant ----
echo 17 >"$T/inlet"
doctor cold --config "$T/tile.ini" --tiles 1 --meter "wt310://127.0.0.1:$PORT" --temperature "file:$T/inlet"
is cold temperature.1 warn
is cold meter.1 warn
detail_has cold meter.1 "no calibrated=YYYY-MM-DD given"
doctor coldc --preset compliant --config "$T/tile.ini" --tiles 1 --meter "wt310://127.0.0.1:$PORT" \
    --temperature "file:$T/inlet"
is coldc temperature.1 fail
is coldc meter.1 fail
expect "compliant, cold: exit" "$DRC" -eq 2

# ---- usage errors name the option ----
"$TB" doctor --meter >"$T/u1.out" 2>&1 && fail "doctor --meter without URI: expected exit 2"
grep -q -- "--meter" "$T/u1.out" || fail "usage error does not name --meter: $(cat "$T/u1.out")"
rc=0
"$TB" run --json --tiles 1 >"$T/u2.out" 2>&1 || rc=$?
expect "run --json without --dry-run: exit" "$rc" -eq 2
grep -q -- "--json" "$T/u2.out" || fail "usage error does not name --json: $(cat "$T/u2.out")"
rc=0
"$TB" doctor --help >"$T/help.out" 2>&1 || rc=$?
expect "doctor --help: exit" "$rc" -eq 0
grep -q "^usage: tilebench doctor" "$T/help.out" || fail "doctor --help: $(head -3 "$T/help.out")"

# ---- more tiles than the SUT holds: sized for the largest level ----
doctor big --config "$T/tile.ini" --tiles 3 --meter "$METER"
is big sut.oltp fail
detail_has big sut.oltp "tile 3 has no OLTP data"
is big sut.web fail
is big sut.kv ok
expect "big: exit" "$DRC" -eq 2

# ---- an open-files limit below what 3 tiles' 135 users need (about 451) ----
rc=0
(ulimit -n 300 && exec "$TB" doctor --config "$T/tile.ini" --tiles 3 --meter "$METER") >"$T/fd.out" 2>/dev/null || rc=$?
is fd open-files fail
detail_has fd open-files "the hard limit is 300"
expect "open files too few: exit" "$rc" -eq 2

# ---- the emulator stopped: the meter fails ----
stop_sims
doctor nometer --config "$T/tile.ini" --tiles 1..2 --meter "$METER"
is nometer meter.1 fail
detail_has nometer meter.1 "127.0.0.1:$PORT"
is nometer sut.oltp ok
expect "emulator stopped: exit" "$DRC" -eq 2

# ---- Redis stopped: the kv line fails ----
REDIS=$(sed -n 's/^redis = //p' "$T/sut/sut.ini")
redis-cli -h 127.0.0.1 -p "${REDIS##*:}" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait_for "redis to stop" 20 bash -c "! redis-cli -h 127.0.0.1 -p ${REDIS##*:} PING"
start_sim wt310b --protocol wt310 --watts 180
doctor noredis --config "$T/tile.ini" --tiles 1..2 --meter "wt310://127.0.0.1:$PORT?calibrated=$CAL"
is noredis meter.1 ok
is noredis sut.kv fail
detail_has noredis sut.kv "connect 127.0.0.1:${REDIS##*:}"
is noredis sut.oltp ok
expect "Redis stopped: exit" "$DRC" -eq 2
# ---- --ranging with a meter that cannot range: the run would refuse it, so doctor fails it ----
doctor norange --config "$T/tile.ini" --tiles 1 --ranging=2s --meter estimate:
is norange meter.1 fail
detail_has norange meter.1 "--ranging: this meter cannot have its ranges set at run time"
expect "ranging on estimate: exit" "$DRC" -eq 2
stop_sims
echo "PASS: test_doctor"
