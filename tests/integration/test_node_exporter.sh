#!/usr/bin/env bash
# test_node_exporter.sh: host telemetry from a real prometheus-node-exporter
# (Debian's 1.5) started on a free loopback port, and from the local host.
#  1. The scrape agrees with this host's own /proc/stat: the CPU count, and
#     each counter read between two /proc/stat reads lies between them.
#  2. A short sweep against the SUT of `sut up` with [sut] telemetry = the
#     exporter's URL stores per-level telemetry (non-NaN CPU utilization) and
#     about one telemetry sample per second of steady state, and the host
#     object comes from the exporter.
#  3. The same sweep with no telemetry setting samples locally (every endpoint
#     is on loopback), and the JSON report shows telemetry per level.
#  4. --telemetry none stores nothing; an unreachable exporter aborts (exit 3)
#     before any run is stored, naming the URL.
source "$(dirname "$0")/lib.sh"

NE=$(command -v prometheus-node-exporter || true)
[ -n "$NE" ] || fail "prometheus-node-exporter is not installed (scripts/install-deps)"

# GET /metrics with bash's /dev/tcp (no curl needed): the body on stdout.
scrape() {
    local port=$1
    exec 6<>"/dev/tcp/127.0.0.1/$port" || return 1
    printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&6
    tr -d '\r' <&6 | sed '1,/^$/d'
    exec 6<&-
}

PORT=""
for try in 1 2 3 4 5 6 7 8; do
    p=$((20000 + RANDOM % 40000))
    "$NE" --web.listen-address="127.0.0.1:$p" --collector.cpu.info >"$T/node_exporter.log" 2>&1 &
    pid=$!
    for _ in $(seq 50); do
        if scrape "$p" >"$T/first.txt" 2>/dev/null && grep -q '^node_cpu_seconds_total' "$T/first.txt"; then
            PORT=$p
            break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$PORT" ] && break
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
done
[ -n "$PORT" ] || fail "prometheus-node-exporter did not start: $(tail -5 "$T/node_exporter.log")"
at_exit "kill $pid; wait $pid 2>/dev/null"
URL="http://127.0.0.1:$PORT/metrics"
echo "ok: node_exporter $("$NE" --version 2>&1 | head -1 | awk '{print $3}') on $URL"

# 1. The exporter against /proc/stat read just before and just after it.
HZ=$(getconf CLK_TCK)
before=$(head -1 /proc/stat)
scrape "$PORT" >"$T/scrape.txt"
after=$(head -1 /proc/stat)
ncpu_proc=$(grep -c '^cpu[0-9]' /proc/stat)
ncpu_ne=$(sed -n 's/^node_cpu_seconds_total{cpu="\([0-9]*\)",mode="idle"}.*/\1/p' "$T/scrape.txt" | sort -u | wc -l)
expect "CPUs: node_exporter vs /proc/stat" "$ncpu_ne" -eq "$ncpu_proc"
# columns of the "cpu" line: user=2 nice=3 system=4 idle=5 iowait=6 irq=7 softirq=8 steal=9
for pair in user:2 nice:3 system:4 idle:5 steal:9; do
    mode=${pair%:*}
    col=${pair#*:}
    ticks=$(sed -n "s/^node_cpu_seconds_total{cpu=\"[0-9]*\",mode=\"$mode\"} //p" "$T/scrape.txt" |
        awk -v hz="$HZ" '{ s += $1 } END { printf "%.0f", s * hz }')
    lo=$(echo "$before" | awk -v c="$col" '{print $c}')
    hi=$(echo "$after" | awk -v c="$col" '{print $c}')
    # node_exporter rounds each CPU's seconds to 1/HZ: allow one tick per CPU
    expect "$mode ticks >= /proc/stat before - $ncpu_proc" "$ticks" -ge $((lo - ncpu_proc))
    expect "$mode ticks <= /proc/stat after + $ncpu_proc" "$ticks" -le $((hi + ncpu_proc))
done
expect "MemTotal" "$(awk '/^node_memory_MemTotal_bytes/ {printf "%.0f", $2 / 1024}' "$T/scrape.txt")" -eq \
    "$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"

# 2. A sweep with telemetry from the exporter.
"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
printf 'telemetry = %s\n' "$URL" >>"$T/tile.ini" # sut.ini ends inside [sut]
grep -q '^\[sut\]' "$T/sut/sut.ini" || fail "sut.ini has no [sut] section"
STAGES=(--tiles 1 --ramp-up 2s --warm-up 1s --steady 6s --ramp-down 1s --idle 2s --quiet)
"$TILEBENCH" run --config "$T/tile.ini" "${STAGES[@]}" --db "$T/ne.db" --label "ne" >"$T/run-ne.log" 2>&1 ||
    fail "run with node_exporter exited $?: $(cat "$T/run-ne.log")"
DB="$T/ne.db"
q() { sqlite3 "$DB" "$1"; }
expect "levels stored" "$(q 'SELECT count(*) FROM levels')" -eq 1
expect "cpu_util_pct is a number" "$(q 'SELECT typeof(cpu_util_pct) FROM levels')" = real
expect_true "cpu_util_pct in (0, 100]" "$(q 'SELECT cpu_util_pct FROM levels')" '. > 0 and . <= 100'
expect_true "user + sys + idle + iowait <= 100" \
    "$(q 'SELECT user_pct + sys_pct + idle_pct + iowait_pct FROM levels')" '. <= 100.0001'
n=$(q 'SELECT count(*) FROM telemetry_samples s JOIN levels l ON l.id = s.level_id')
expect "steady-state telemetry samples (6 s at 1 Hz, edges left out)" "$n" -ge 4
expect "steady-state telemetry samples, at most one per second" "$n" -le 7
expect "telemetry_samples column in levels" "$(q 'SELECT telemetry_samples FROM levels')" -eq "$n"
expect "active idle samples" "$(q 'SELECT count(*) FROM telemetry_samples WHERE level_id IS NULL')" -ge 1
expect "C-states (node_exporter 1.5 has no cpuidle collector): not available" \
    "$(q 'SELECT count(*) FROM levels WHERE cstate_residency_json IS NOT NULL')" -eq 0
"$TILEBENCH" report latest --db "$DB" --format json >"$T/ne.json"
expect "host from the exporter" "$(jq -r .run.host.source "$T/ne.json")" = "$URL"
expect "host.telemetry" "$(jq -r .run.host.telemetry "$T/ne.json")" = "$URL"
expect "host.hostname = node_uname_info nodename" "$(jq -r .run.host.hostname "$T/ne.json")" = \
    "$(sed -n 's/^node_uname_info{.*nodename="\([^"]*\)".*/\1/p' "$T/scrape.txt")"
expect "host.cpus" "$(jq -r .run.host.cpus "$T/ne.json")" -eq "$ncpu_proc"
expect "loadgen_host is this machine" "$(jq -r .run.host.loadgen_host.source "$T/ne.json")" = local
expect "EPP is not exported: null" "$(jq -r '.run.host.energy_performance_preference' "$T/ne.json")" = null
expect "report: cstate_residency_pct is an empty object" \
    "$(jq -c '.run.levels[0].telemetry.cstate_residency_pct' "$T/ne.json")" = "{}"

# 3. No telemetry setting: every endpoint is on loopback, so local.
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile-local.ini"
"$TILEBENCH" run --config "$T/tile-local.ini" "${STAGES[@]}" --db "$T/local.db" --report "$T/local.json" \
    >"$T/run-local.log" 2>&1 || fail "local run exited $?: $(cat "$T/run-local.log")"
J="$T/local.json"
expect "default telemetry for a loopback SUT" "$(jq -r .run.host.telemetry "$J")" = local
expect_true "local cpu_util_pct" "$(jq '.run.levels[0].telemetry.cpu_util_pct' "$J")" '. > 0 and . <= 100'
expect_true "local user_pct" "$(jq '.run.levels[0].telemetry.user_pct' "$J")" '. >= 0'
expect_true "local telemetry samples" "$(jq '.run.levels[0].telemetry.samples' "$J")" '. >= 4'
if [ -e /sys/devices/system/cpu/cpu0/cpuidle/state0/time ]; then
    expect_true "C0 residency" "$(jq '.run.levels[0].telemetry.cstate_residency_pct.C0' "$J")" '. >= 0 and . <= 100'
    expect_true "C-states sum to 100" "$(jq '[.run.levels[0].telemetry.cstate_residency_pct[]] | add' "$J")" \
        '. > 99.9 and . < 100.1'
else
    expect "no cpuidle: C-states not available" "$(jq -c '.run.levels[0].telemetry.cstate_residency_pct' "$J")" = "{}"
fi
if [ -e /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq ] || [ -r /dev/cpu/0/msr ]; then
    expect_true "avg_freq_mhz" "$(jq '.run.levels[0].telemetry.avg_freq_mhz' "$J")" '. > 0'
else
    expect "no cpufreq, no msr: frequency not available" "$(jq '.run.levels[0].telemetry.avg_freq_mhz' "$J")" = null
fi
"$TILEBENCH" report latest --db "$T/local.db" >"$T/local.txt"
grep -q "Host telemetry over steady state" "$T/local.txt" || fail "text report has no telemetry table"
"$TILEBENCH" report latest --db "$T/local.db" --format html -o "$T/local.html"
for want in 'id="host"' 'Host CPU utilization against tiles' 'id="telemetry"' '<th>tuned profile</th>'; do
    grep -q "$want" "$T/local.html" || fail "HTML report lacks $want"
done
echo "ok: HTML report has the host configuration, the telemetry chart and table"

# 4. none, and an exporter that is not there.
"$TILEBENCH" run --config "$T/tile-local.ini" "${STAGES[@]}" --idle 0 --telemetry none --db "$T/none.db" \
    >"$T/run-none.log" 2>&1 || fail "run --telemetry none exited $?: $(cat "$T/run-none.log")"
expect "none: no samples" "$(sqlite3 "$T/none.db" 'SELECT count(*) FROM telemetry_samples')" -eq 0
expect "none: cpu_util_pct NULL" "$(sqlite3 "$T/none.db" 'SELECT typeof(cpu_util_pct) FROM levels')" = null
rc=0
"$TILEBENCH" run --config "$T/tile-local.ini" "${STAGES[@]}" --telemetry "http://127.0.0.1:1/metrics" \
    --db "$T/gone.db" >"$T/run-gone.log" 2>&1 || rc=$?
expect "unreachable exporter: exit" "$rc" -eq 3
grep -q "127.0.0.1:1/metrics" "$T/run-gone.log" || fail "error does not name the URL: $(cat "$T/run-gone.log")"
expect "unreachable exporter: no run stored" "$(sqlite3 "$T/gone.db" 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)" -eq 0

# 5. The exporter dies during the sweep: the run completes, the level's
#    telemetry is not available (never the last value), and an event says why.
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 3s --warm-up 1s --steady 4s --ramp-down 1s --idle 0 \
    --db "$T/died.db" >"$T/run-died.log" 2>&1 &
run_pid=$!
for _ in $(seq 600); do
    grep -q '^level 1 tiles: ramp-up' "$T/run-died.log" && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
done
grep -q '^level 1 tiles: ramp-up' "$T/run-died.log" || fail "the run never reached level 1: $(cat "$T/run-died.log")"
kill "$pid"
wait "$pid" 2>/dev/null || true
rc=0
wait "$run_pid" || rc=$?
expect "run after the exporter died: exit" "$rc" -eq 0
expect "died: cpu_util_pct NULL" "$(sqlite3 "$T/died.db" 'SELECT typeof(cpu_util_pct) FROM levels')" = null
expect "died: no steady-state samples" \
    "$(sqlite3 "$T/died.db" 'SELECT count(*) FROM telemetry_samples WHERE level_id IS NOT NULL')" -eq 0
expect "died: warning event" \
    "$(sqlite3 "$T/died.db" "SELECT count(*) FROM events WHERE kind = 'warning' AND message LIKE '%telemetry reads%failed%'")" -ge 1
echo "PASS test_node_exporter"
