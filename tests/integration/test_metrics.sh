#!/usr/bin/env bash
# test_metrics.sh: live metrics as a real Prometheus sees them. A Prometheus
# (Debian's /usr/bin/prometheus) on a free loopback port scrapes, every 1 s,
# `tilebench run --metrics` of a short 1-tile run against the embedded SUT,
# measured through wt310:// on the meter emulator serving a looped trace of
# known watts, and `tilebench meter export` of a second emulator serving
# 123.4 W with every third reading NaN. Then, through Prometheus's HTTP API:
#  - every power sample it scraped that the run also stored (power_samples)
#    has the stored watts at the stored time, its value is one of the trace's,
#    and the scrape saw it within the poller's and the scrape's timing;
#  - the op counters' last values equal the run's steady-state op counts as
#    its JSON report gives them (the counters carry steady-state ops, summed
#    over tiles and phases: docs/metrics.md), and they never went down;
#  - p99 latency per op equals the report's (one tile, one phase);
#  - the recent latency (tilebench_recent_latency_seconds) is there while a
#    phase runs, for ops the phase has, its ops at most the phase's count and
#    its p99 at most the phase's max latency, as the report gives them;
#  - the export's watts, volts, PF, ranges and identity are the emulator's,
#    a failed read kept the last good sample's time, and its read and error
#    counters equal the emulator's own request and NaN counters.
# Also: every counter is there at 0 from the first scrape (and in phase 1).
# After the run the final values stay served for --metrics-linger,
# then the port closes; a second run takes its address and linger from the
# tile file's [run] (the command line's address wins), prints the bound port
# on stderr with --quiet, and SIGINT ends its linger at once; a busy
# --metrics port (or [run] metrics) is a clear error and no run (no run row,
# no meter request); 404 and 405; 40 silent connections do not delay a
# scrape.
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
PROM=/usr/bin/prometheus
[ -x "$PROM" ] || fail "no $PROM: install Debian's prometheus package (scripts/install-deps)"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
# sim_counters PORT: the emulator's whole counter line ("tb:count?").
sim_counters() {
    local line
    exec 7<>"/dev/tcp/127.0.0.1/$1" || fail "cannot reach the sim on $1 for its counters"
    printf 'tb:count?\n' >&7
    IFS= read -r -t 5 line <&7 || fail "no counters from the sim on $1"
    exec 7<&-
    echo "${line%$'\r'}"
}
field_of() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# prom QUERY OUT: an instant query of Prometheus's HTTP API, its JSON in OUT.
prom() {
    curl -sfG "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" >"$2" ||
        fail "Prometheus query '$1' failed"
    [ "$(jq -r .status "$2")" = success ] || fail "Prometheus query '$1': $(cat "$2")"
}

# ---- the meters: the run's serves a looped trace (values of at most five
# digits, as a WT310 shows them), the export's 123.4 W with NaN every 3rd ----
TRACE_W="150.25 161.5 173.75 142.5 188.25 155.5"
# a step every 0.5 s; the last line ends the 3 s period (its value is not served)
printf 'seconds,watts\n0,150.25\n0.5,161.5\n1,173.75\n1.5,142.5\n2,188.25\n2.5,155.5\n3,0\n' >"$T/trace.csv"
start_sim run --protocol wt310 --trace "$T/trace.csv" --loop
RUN_SIM=$PORT
start_sim exp --protocol wt310 --watts 123.4 --fault nan:3
EXP_SIM=$PORT

"$TB" meter export "wt310://127.0.0.1:$EXP_SIM" --listen 127.0.0.1:0 --interval 500ms >"$T/export.log" 2>&1 &
EXPORT_PID=$!
at_exit 'kill "$EXPORT_PID" 2>/dev/null; wait "$EXPORT_PID" 2>/dev/null'
EXPORT_PORT=""
# the log is created by the background job itself: it may not exist yet (20 s at most, on a busy machine)
for ((i = 0; i < 400; i++)); do
    EXPORT_PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/export.log" 2>/dev/null || true)
    [ -n "$EXPORT_PORT" ] && break
    kill -0 "$EXPORT_PID" 2>/dev/null || fail "meter export exited: $(cat "$T/export.log")"
    sleep 0.05
done
[ -n "$EXPORT_PORT" ] || fail "meter export did not listen within 20 s: $(cat "$T/export.log")"

# ---- Prometheus, scraping the run's port (chosen now) and the export ----
MPORT=$(free_port)
PPORT=$(free_port)
[ "$MPORT" != "$PPORT" ] || PPORT=$(free_port)
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: run
    static_configs:
      - targets: ["127.0.0.1:$MPORT"]
  - job_name: export
    static_configs:
      - targets: ["127.0.0.1:$EXPORT_PORT"]
EOF
"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PPORT" \
    >"$T/prometheus.log" 2>&1 &
PROM_PID=$!
at_exit 'kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null'
prom_ready() {
    kill -0 "$PROM_PID" 2>/dev/null || fail "Prometheus exited: $(tail -5 "$T/prometheus.log")"
    curl -sf "http://127.0.0.1:$PPORT/-/ready"
}
wait_for "Prometheus ready on 127.0.0.1:$PPORT" 30 prom_ready
echo "ok: Prometheus up on $PPORT, scraping the run at $MPORT and the export at $EXPORT_PORT"

# meter export on a busy port: the same clear error, before anything is served
rc=0
"$TB" meter export "wt310://127.0.0.1:$EXP_SIM" --listen "127.0.0.1:$PPORT" >"$T/busy-export.log" 2>&1 || rc=$?
expect "meter export on a busy port: exit status" "$rc" -eq 2
grep -qx "tilebench meter export: --listen: listen 127.0.0.1:$PPORT: Address already in use" "$T/busy-export.log" ||
    fail "busy export port message: $(cat "$T/busy-export.log")"

"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"

# ---- a busy --metrics port (Prometheus's own): a clear error, and no run ----
rc=0
"$TB" run --config "$T/tile.ini" --tiles 1 --steady 1s --idle 0 --meter "wt310://127.0.0.1:$RUN_SIM" \
    --metrics "127.0.0.1:$PPORT" --db "$T/busy.db" >"$T/busy.log" 2>&1 || rc=$?
expect "run with a busy --metrics port: exit status" "$rc" -eq 2
grep -qx "tilebench run: --metrics: listen 127.0.0.1:$PPORT: Address already in use" "$T/busy.log" ||
    fail "busy port message: $(cat "$T/busy.log")"
if [ -e "$T/busy.db" ]; then expect "runs stored with a busy port" "$(sqlite3 "$T/busy.db" 'SELECT count(*) FROM runs')" -eq 0; fi
expect "meter requests with a busy port" "$(field_of "$(sim_counters "$RUN_SIM")" requests)" -eq 0

# ---- the run ----
# two phases of 3 s, so that the op counters advance twice and a few
# scrapes see each phase's recent latency; 2 s of ramp-down, so
# that Prometheus scrapes (every 1 s) the counts of the last phase, which
# come as it ends, before the run does
"$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --phases 2 --ramp-down 2s --idle 3s \
    --meter "wt310://127.0.0.1:$RUN_SIM" --metrics "127.0.0.1:$MPORT" --metrics-linger 3s --db "$T/results.db" \
    >"$T/run.log" 2>&1 &
RUN_PID=$!
at_exit 'kill "$RUN_PID" 2>/dev/null; wait "$RUN_PID" 2>/dev/null'
wait_for "the run's metrics at 127.0.0.1:$MPORT" 30 curl -sf "http://127.0.0.1:$MPORT/metrics"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect "GET /other" "$(code "http://127.0.0.1:$MPORT/other")" -eq 404
expect "POST /metrics" "$(code -X POST "http://127.0.0.1:$MPORT/metrics")" -eq 405
curl -sf -D "$T/headers" -o "$T/scrape.txt" "http://127.0.0.1:$MPORT/metrics" || fail "GET /metrics during the run"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$T/headers" || fail "content type: $(cat "$T/headers")"
grep -q '^# TYPE tilebench_run_ops_total counter$' "$T/scrape.txt" || fail "no tilebench_run_ops_total: $(cat "$T/scrape.txt")"
# from the run's start: every counter at 0 (each op the tile file names), the
# level and phase gauges at 0, the per-phase gauges NaN
for want in 'tilebench_phases_stored_total 0' 'tilebench_ops_total{workload="kv",op="GET"} 0' \
    'tilebench_op_errors_total{workload="kv",op="SET"} 0' 'tilebench_ops_total{workload="oltp",op="Order"} 0' \
    'tilebench_stage{stage="stopping"} 0' 'tilebench_phase 0' 'tilebench_level 0' 'tilebench_levels 0' 'tilebench_phase_watts NaN'; do
    grep -qxF "$want" "$T/scrape.txt" || fail "no '$want' in the first scrape: $(cat "$T/scrape.txt")"
done
# a scrape during the first phase: the counters are there, still 0 (they
# advance when the phase ends), so increase() sees the first phase's step
for ((i = 0; i < 300; i++)); do
    curl -sf -o "$T/phase1.txt" "http://127.0.0.1:$MPORT/metrics" || fail "GET /metrics during the run"
    grep -qx 'tilebench_phase 1' "$T/phase1.txt" && break
    sleep 0.1
done
grep -qx 'tilebench_phase 1' "$T/phase1.txt" || fail "no scrape in phase 1 within 30 s: $(grep stage "$T/phase1.txt")"
for want in 'tilebench_phases_stored_total 0' 'tilebench_ops_total{workload="kv",op="GET"} 0' \
    'tilebench_op_errors_total{workload="kv",op="GET"} 0' 'tilebench_level 1' 'tilebench_levels 1'; do
    grep -qxF "$want" "$T/phase1.txt" || fail "no '$want' in a scrape in phase 1: $(cat "$T/phase1.txt")"
done
echo "ok: a scrape in phase 1 has the counters at 0"

# 40 clients that connect and send nothing, then a real scrape: answered
# within 1 s (the silent ones are closed by the server after its timeout)
python3 - "$MPORT" <<'PYEOF' || fail "a scrape behind silent clients was slow or failed"
import socket, sys, time
port = int(sys.argv[1])
silent = [socket.create_connection(("127.0.0.1", port), timeout=2) for _ in range(40)]
time.sleep(0.3)
t0 = time.monotonic()
c = socket.create_connection(("127.0.0.1", port), timeout=5)
c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
reply = b""
while len(reply) < 1 << 22:
    try:
        d = c.recv(65536)
    except socket.timeout:
        break
    if not d:
        break
    reply += d
took = time.monotonic() - t0
print("a scrape behind 40 silent clients: %d bytes in %.3f s" % (len(reply), took))
for s in silent:
    s.close()
sys.exit(0 if reply.split(b" ", 2)[1:2] == [b"200"] and took <= 1.0 else 1)
PYEOF

# the run ends, its final values stay served for the linger (3 s), then the port closes
for ((i = 0; i < 600; i++)); do
    grep -q '^metrics: the final values stay at ' "$T/run.log" && break
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.1
done
grep -qx "metrics: the final values stay at http://127.0.0.1:$MPORT/metrics for 3 s (Ctrl-C ends it)" "$T/run.log" ||
    fail "no linger line: $(tail -5 "$T/run.log")"
curl -sf -o "$T/linger.txt" "http://127.0.0.1:$MPORT/metrics" || fail "GET /metrics in the linger"
grep -qx 'tilebench_stage{stage="done"} 1' "$T/linger.txt" || fail "stage in the linger: $(grep stage "$T/linger.txt")"
grep -qx 'tilebench_phases_stored_total 2' "$T/linger.txt" || fail "phases in the linger: $(grep phases "$T/linger.txt")"
grep -q '^tilebench_phase_latency_seconds{workload="kv",op="GET",quantile="0.99"} [0-9]' "$T/linger.txt" ||
    fail "the last phase's latency in the linger: $(grep phase_latency "$T/linger.txt")"
# no phase runs: no recent latency
grep -qx 'tilebench_recent_latency_seconds{workload="kv",op="GET",quantile="0.99"} NaN' "$T/linger.txt" ||
    fail "recent latency in the linger: $(grep recent "$T/linger.txt")"
grep -qx 'tilebench_recent_window_seconds 0' "$T/linger.txt" || fail "recent window in the linger"
rc=0
wait "$RUN_PID" || rc=$?
expect "run exit status" "$rc" -eq 0
grep -qx "metrics: http://127.0.0.1:$MPORT/metrics" "$T/run.log" || fail "no metrics line in the run's output"
# the console observer still speaks: the metrics observer passes every callback on
grep -q '^level 1 tiles phase 2: score ' "$T/run.log" && grep -qx 'run 1 complete' "$T/run.log" ||
    fail "the console lines are missing: $(cat "$T/run.log")"
rc=0
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$MPORT/metrics" || rc=$?
expect "curl to the metrics port after the run (7: connection refused)" "$rc" -eq 7

"$TB" report latest --db "$T/results.db" --format json >"$T/report.json" || fail "report failed"
expect "run status" "$(jq -r .run.status "$T/report.json")" = complete

# ---- [run] in the tile file: a busy address there is the same clear error ----
{ cat "$T/tile.ini"; printf '[run]\nmetrics = 127.0.0.1:%s\nmetrics_linger = 60s\n' "$PPORT"; } >"$T/tile-run.ini"
rc=0
"$TB" run --config "$T/tile-run.ini" --tiles 1 --steady 1s --idle 0 --meter "wt310://127.0.0.1:$RUN_SIM" \
    --db "$T/busy.db" >"$T/busy-file.log" 2>&1 || rc=$?
expect "run with a busy [run] metrics: exit status" "$rc" -eq 2
grep -qx "tilebench run: \[run\] metrics: listen 127.0.0.1:$PPORT: Address already in use" "$T/busy-file.log" ||
    fail "busy [run] metrics message: $(cat "$T/busy-file.log")"
# --metrics wins over the file's address (its linger, 60 s, stays); --quiet
# still prints the bound port, on stderr; SIGINT ends the linger at once
"$TB" run --config "$T/tile-run.ini" --tiles 1 --ramp-up 0 --warm-up 0 --steady 1s --ramp-down 0 --idle 0 --quiet \
    --meter "wt310://127.0.0.1:$RUN_SIM" --metrics 127.0.0.1:0 --db "$T/quiet.db" >"$T/quiet.out" 2>"$T/quiet.err" &
QPID=$!
at_exit 'kill "$QPID" 2>/dev/null; wait "$QPID" 2>/dev/null'
QPORT=""
for ((i = 0; i < 600; i++)); do
    QPORT=$(sed -n 's|^metrics: http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$T/quiet.err" 2>/dev/null || true)
    [ -n "$QPORT" ] && break
    kill -0 "$QPID" 2>/dev/null || fail "the quiet run exited: $(cat "$T/quiet.err")"
    sleep 0.05
done
[ -n "$QPORT" ] || fail "no bound port on stderr with --quiet: $(cat "$T/quiet.err")"
expect "the quiet run's port (not the file's)" "$QPORT" -ne "$PPORT"
# the run is over once its status is stored; the process lingers
for ((i = 0; i < 1200; i++)); do
    [ -s "$T/quiet.db" ] && [ "$(sqlite3 "$T/quiet.db" "SELECT status FROM runs" 2>/dev/null)" = complete ] && break
    kill -0 "$QPID" 2>/dev/null || fail "the quiet run exited before its linger: $(cat "$T/quiet.err")"
    sleep 0.1
done
sleep 1
kill -0 "$QPID" 2>/dev/null || fail "the quiet run did not linger (the file says 60 s)"
curl -sf -o "$T/quiet-linger.txt" "http://127.0.0.1:$QPORT/metrics" || fail "GET /metrics in the quiet run's linger"
grep -qx 'tilebench_stage{stage="done"} 1' "$T/quiet-linger.txt" || fail "the quiet run's stage in its linger"
[ ! -s "$T/quiet.out" ] || fail "--quiet printed on stdout: $(cat "$T/quiet.out")"
t0=$(date +%s%N)
kill -INT "$QPID"
rc=0
wait "$QPID" || rc=$?
took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "quiet run exit status (complete, SIGINT in the linger)" "$rc" -eq 0
expect "ms from SIGINT in the linger to exit" "$took_ms" -le 2000
rc=0
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$QPORT/metrics" || rc=$?
expect "curl to the quiet run's port after it ended" "$rc" -eq 7

# ---- what Prometheus holds of the run ----
prom 'tilebench_power_watts{job="run",meter="0"}[10m]' "$T/q_watts.json"
prom 'tilebench_power_sample_timestamp_seconds{job="run",meter="0"}[10m]' "$T/q_ts.json"
prom 'tilebench_ops_total{job="run"}[10m]' "$T/q_ops.json"
prom 'tilebench_op_errors_total{job="run"}[10m]' "$T/q_errs.json"
prom 'tilebench_run_ops_total{job="run"}[10m]' "$T/q_runops.json"
prom 'tilebench_phase_latency_seconds{job="run",quantile="0.99"}[10m]' "$T/q_p99.json"
prom 'max_over_time(tilebench_stage{job="run",stage="steady"}[10m])' "$T/q_steady.json"
prom 'tilebench_recent_latency_seconds{job="run"}[10m]' "$T/q_recent.json"
prom 'tilebench_recent_ops{job="run"}[10m]' "$T/q_recent_ops.json"
prom 'tilebench_phase{job="run"}[10m]' "$T/q_phase.json"
prom 'tilebench_stage{job="run",stage="done"}[10m]' "$T/q_done.json"
expect "Prometheus saw stage steady" "$(jq -r '.data.result[0].value[1]' "$T/q_steady.json")" = 1
# the first phase's step, as increase() sees it: the whole count of phase 1
prom 'tilebench_phases_stored_total{job="run"}[10m]' "$T/q_stored.json"
expect "phases stored, first scraped value" "$(jq -r '.data.result[0].values[0][1]' "$T/q_stored.json")" = 0

python3 - "$T" "$T/results.db" "$TRACE_W" >"$T/check_run.log" 2>&1 <<'PYEOF' || fail "run metrics differ: $(cat "$T/check_run.log")"
import json, sqlite3, sys
T, dbpath, trace = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()]
def series(name):
    return json.load(open("%s/%s.json" % (T, name)))["data"]["result"]
def points(s):
    return [(float(t), float(v)) for t, v in s["values"]]
good = True
def check(ok, what):
    global good
    print(("ok: " if ok else "MISMATCH: ") + what)
    good &= bool(ok)

# power: pair each scrape's watts with its sample time (same scrape, same timestamp)
w, ts = series("q_watts"), series("q_ts")
check(len(w) == 1 and len(ts) == 1, "one power series and one timestamp series for meter 0")
W, TS = dict(points(w[0])), dict(points(ts[0]))
# once the run is done (its linger), the gauges keep the last sample while time goes on: not compared
done = {t for t, v in points(series("q_done")[0]) if v == 1}
W = {t: v for t, v in W.items() if t not in done}
db = sqlite3.connect(dbpath)
rows = db.execute("SELECT wall_us, watts, level_id, stage FROM power_samples WHERE meter_idx = 0"
                  " ORDER BY wall_us").fetchall()
stored = {u: x for u, x, _, _ in rows}
# a stored window: consecutive samples of one stage (and level); the time between stages is not stored
windows, key = {}, None
for u, _, lid, stage in rows:
    if key is None or (lid, stage) != key[:2]:
        key = (lid, stage, u)
    windows.setdefault(key, []).append(u)
matched = 0
for scrape in sorted(W):
    if scrape not in TS:
        check(False, "scrape at %.3f has watts but no sample time" % scrape)
        continue
    t_us = round(TS[scrape] * 1e6)
    lag = scrape - TS[scrape]
    # the poller samples at 1 Hz and the gauge follows within 0.2 s; Prometheus
    # stamps a scrape as it starts it, so a sample set during the request shows
    # a few ms "early"
    if not -0.1 <= lag <= 2.5 or W[scrape] not in trace:
        check(False, "scrape at %.3f: %r W sampled %.3f s before it (trace values %r)" % (scrape, W[scrape], lag, trace))
    hit = [u for u in stored if abs(u - t_us) <= 1]
    if hit:
        x = stored[hit[0]]
        if x != W[scrape]:
            check(False, "sample at %d us: stored %r W, Prometheus %r W" % (t_us, x, W[scrape]))
        matched += 1
    elif any(min(v) <= t_us <= max(v) for v in windows.values()):
        check(False, "scraped sample at %d us is inside a stored window but no stored sample has its time" % t_us)
check(matched >= 3, "%d scraped power samples match stored ones (time and watts), of %d scrapes" % (matched, len(W)))

# op counters: last value = the report's steady-state counts summed over tiles and phases
rep = json.load(open("%s/report.json" % T))["run"]
want_ok, want_err, want_p99 = {}, {}, {}
check([lv["phase"] for lv in rep["levels"]] == [1, 2], "the report has phases 1 and 2 of one level")
for lv in rep["levels"]:
    for wl in lv["workloads"]:
        for op in wl["operations"]:
            k = (wl["name"], op["name"])
            want_ok[k] = want_ok.get(k, 0) + op["count"]
            want_err[k] = want_err.get(k, 0) + op["errors"]
            if lv["phase"] == 2 and op["count"] > 0:  # the gauge holds the last phase's
                want_p99[k] = op["p99_ms"]
for name, want in (("q_ops", want_ok), ("q_errs", want_err)):
    got = {}
    for s in series(name):
        vals = [v for _, v in points(s)]
        k = (s["metric"]["workload"], s["metric"]["op"])
        got[k] = vals[-1]
        if any(b < a for a, b in zip(vals, vals[1:])):
            check(False, "%s %r went down: %r" % (name, k, vals))
        steps = sorted(set(vals))
        if name == "q_ops" and k == ("kv", "GET") and len(steps) < 2:  # after phase 1, after phase 2
            check(False, "%s %r did not advance at each phase's end: %r" % (name, k, steps))
    check(got == {k: float(v) for k, v in want.items()}, "%s last values %r = report %r" % (name, got, want))
check(sum(want_ok.values()) > 100, "the run did %d steady-state ops" % sum(want_ok.values()))
vals = [v for _, v in points(series("q_runops")[0])]
check(all(b >= a for a, b in zip(vals, vals[1:])) and vals[-1] > 0, "tilebench_run_ops_total never went down, ends at %r" % vals[-1])
got_p99 = {(s["metric"]["workload"], s["metric"]["op"]): points(s)[-1][1] * 1000 for s in series("q_p99")}
for k, ms in want_p99.items():
    check(k in got_p99 and abs(got_p99[k] - ms) <= 1e-6 * ms, "%s %s p99 %r ms = report %r ms" % (k + (got_p99.get(k), ms)))

# recent latency, scrape by scrape, against the phase the scrape was in (or
# the one before: the phase gauge moves a moment before the window does)
phase_at = dict(points(series("q_phase")[0]))
ph = {}
for lv in rep["levels"]:
    for wl in lv["workloads"]:
        for op in wl["operations"]:
            ph[(lv["phase"], wl["name"], op["name"])] = op
seen = {}
for s in series("q_recent_ops"):
    k = (s["metric"]["workload"], s["metric"]["op"])
    for t, n in points(s):
        p = int(phase_at.get(t, 0))
        if p == 0 or n == 0:
            continue
        cap = max(ph.get((q,) + k, {"count": 0})["count"] for q in (p, p - 1))
        if n > cap:
            check(False, "%s at %.3f: %d recent ops, over phase %d's %d" % (k, t, n, p, cap))
        seen[k] = seen.get(k, 0) + 1
check(seen.get(("kv", "GET"), 0) >= 2, "scrapes with recent kv GET ops in a phase: %r" % seen)
nq = 0
for s in series("q_recent"):
    k = (s["metric"]["workload"], s["metric"]["op"])
    for t, v in points(s):
        p = int(phase_at.get(t, 0))
        if p == 0 or v != v:  # NaN: none in the window
            continue
        top = max(ph.get((q,) + k, {"max_ms": 0})["max_ms"] or 0 for q in (p, p - 1))
        if not 0 < v * 1000 <= top * 1.001 + 1e-6:
            check(False, "%s q%s at %.3f: recent %r ms, phase %d's max %r ms" % (k, s["metric"]["quantile"], t, v * 1000, p, top))
        nq += s["metric"]["quantile"] == "0.99" and k == ("kv", "GET")
check(nq >= 2, "%d scrapes with a recent kv GET p99, each within the phase's max" % nq)
sys.exit(0 if good else 1)
PYEOF
cat "$T/check_run.log"

# ---- the export, through Prometheus ----
prom 'last_over_time(tilebench_meter_watts{job="export"}[10m])' "$T/e_w.json"
expect "export watts series" "$(jq '.data.result | length' "$T/e_w.json")" -eq 1
expect "export watts" "$(jq -r '.data.result[0].value[1]' "$T/e_w.json")" = 123.4
expect "export volt_range" "$(jq -r '.data.result[0].metric.volt_range' "$T/e_w.json")" = 300
expect "export amp_range" "$(jq -r '.data.result[0].metric.amp_range' "$T/e_w.json")" = 2
expect "export mode" "$(jq -r '.data.result[0].metric.mode' "$T/e_w.json")" = fixed
expect "export uri" "$(jq -r '.data.result[0].metric.uri' "$T/e_w.json")" = "wt310://127.0.0.1:$EXP_SIM"
prom 'last_over_time(tilebench_meter_volts{job="export"}[10m])' "$T/e_v.json"
expect "export volts" "$(jq -r '.data.result[0].value[1]' "$T/e_v.json")" = 230
prom 'last_over_time(tilebench_meter_power_factor{job="export"}[10m])' "$T/e_pf.json"
expect "export PF" "$(jq -r '.data.result[0].value[1]' "$T/e_pf.json")" = 0.95
prom 'last_over_time(tilebench_meter_amps{job="export"}[10m])' "$T/e_a.json"
expect_true "export amps = W / (V x PF) to the meter's 5 digits" "$(jq -r '.data.result[0].value[1]' "$T/e_a.json")" \
    '((. - 123.4 / 230 / 0.95) | fabs) <= 1e-4 * .'
prom 'tilebench_meter_info{job="export"}' "$T/e_info.json"
expect "export model" "$(jq -r '.data.result[0].metric.model' "$T/e_info.json")" = WT310
expect "export serial" "$(jq -r '.data.result[0].metric.serial' "$T/e_info.json")" = C2PH13047V
expect "export firmware" "$(jq -r '.data.result[0].metric.firmware' "$T/e_info.json")" = F1.03
prom 'tilebench_meter_last_read_ok{job="export"}[10m]' "$T/e_ok.json"
prom 'tilebench_meter_sample_timestamp_seconds{job="export"}[10m]' "$T/e_sts.json"
prom 'tilebench_meter_last_read_timestamp_seconds{job="export"}[10m]' "$T/e_rts.json"
python3 - "$T" >"$T/check_export.log" 2>&1 <<'PYEOF' || fail "export timestamps: $(cat "$T/check_export.log")"
import json, sys
T = sys.argv[1]
def pts(n):
    return {float(t): float(v) for t, v in json.load(open("%s/%s.json" % (T, n)))["data"]["result"][0]["values"]}
ok, sts, rts = pts("e_ok"), pts("e_sts"), pts("e_rts")
good = bad = 0
for t in sorted(ok):
    if t not in sts or t not in rts:
        continue  # no good sample yet
    if ok[t] == 1:
        good += sts[t] == rts[t]
        assert sts[t] == rts[t], "a good last read at %.3f: sample time %r != read time %r" % (t, sts[t], rts[t])
    else:
        # a failed read keeps the last good sample, one or two 500 ms reads before it
        assert 0.3 <= rts[t] - sts[t] <= 1.6, "failed read at %.3f: sample time %r, read time %r" % (t, sts[t], rts[t])
        bad += 1
print("scrapes after a good read: %d, after a failed read: %d" % (good, bad))
assert good >= 2 and bad >= 1
PYEOF
cat "$T/check_export.log"

# reads and errors against the emulator's own counters, at one moment (no
# read between the two counter queries)
same=0
for ((i = 0; i < 20; i++)); do
    c1=$(sim_counters "$EXP_SIM")
    curl -sf "http://127.0.0.1:$EXPORT_PORT/metrics" >"$T/export.txt" || fail "GET the export's /metrics"
    c2=$(sim_counters "$EXP_SIM")
    reads=$(sed -n 's/^tilebench_meter_reads_total{meter="0",[^}]*} //p' "$T/export.txt")
    errs=$(sed -n 's/^tilebench_meter_errors_total{meter="0",[^}]*} //p' "$T/export.txt")
    # (each counter query is a connection of its own: compare the requests)
    if [ "$(field_of "$c1" requests)" = "$(field_of "$c2" requests)" ] && [ "$reads" = "$(field_of "$c1" requests)" ]; then
        same=1
        break
    fi
    sleep 0.13
done
expect "export reads = emulator requests at one moment" "$same" -eq 1
expect "export errors = emulator NaN replies" "$errs" -eq "$(field_of "$c1" nan)"
expect "export errors" "$errs" -ge 3

kill -TERM "$EXPORT_PID"
rc=0
wait "$EXPORT_PID" || rc=$?
expect "meter export exit status on SIGTERM" "$rc" -eq 0
rc=0
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$EXPORT_PORT/metrics" || rc=$?
expect "curl to the export's port after it stopped" "$rc" -eq 7
stop_sims
echo "PASS test_metrics"
