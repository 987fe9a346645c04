#!/usr/bin/env bash
# test_meter_plausible.sh: implausible meter readings are invalid samples,
# for every driver, with their reason (issue 19).
#  - probe: the emulator serves negative (the WT310E field bug, -27.1 W /
#    -3.199 A), out-of-range and V x A x PF-inconsistent readings, over the
#    WT310 and PTDaemon protocols, plus NaN and over-range replies: each is a
#    bad sample with its reason, and the samples after it are good again.
#  - sweep: a meter that alternates 200 W and -27.1 W gives an INVALID level
#    whose reason names implausible samples and whose mean power is the
#    trace's 200 W (the bogus samples excluded); every raw sample is in
#    power_samples with its flags and reason. A second run mixes NaN, INF and
#    inconsistent replies with good ones: each stored with its own reason.
# Expected figures come from the traces and the meter's ranges as printed by
# probe, computed here (python3's sqlite3 reads the database).
source "$(dirname "$0")/lib.sh"

TB=$TILEBENCH
# probe NAME URI N: N samples 10 ms apart (PTD: its own interval) into $T/NAME.out.
probe() {
    "$TB" meter probe "$2" --samples "$3" --interval 10ms >"$T/$1.out" 2>"$T/$1.err" ||
        fail "probe $1 exited $?: $(cat "$T/$1.err")"
}
field() { sed -n 's/^summary: //p' "$T/$1.out" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
row() { grep -E "^ +$2  " "$T/$1.out" || fail "$1: no sample row $2"; }
row_has() { row "$1" "$2" | grep -q -- "$3" || fail "$1: sample $2 lacks '$3': $(row "$1" "$2")"; }
row_ok() { row "$1" "$2" | grep -qE '  ok$' || fail "$1: sample $2 is not ok: $(row "$1" "$2")"; }

# ---- the trace format: "seconds,watts[,volts,amps,pf]", watts may be < 0 ----
printf 'time,watts\n0,-5\n1,200,230\n' >"$T/bad.csv"
rc=0
"$TB" meter sim --trace "$T/bad.csv" >"$T/badtrace.log" 2>&1 || rc=$?
expect "a trace line with V but no A, PF: exit" "$rc" -eq 2
grep -q "bad.csv:3: amps '' is not a number" "$T/badtrace.log" || fail "bad trace line: $(cat "$T/badtrace.log")"

# ---- probe: negative, over WT310 and PTD ----
start_sim neg --protocol wt310 --watts 200 --fault negative:2
probe neg "wt310://127.0.0.1:$PORT" 6
for i in 2 4 6; do
    row_has neg $i "-27.100"
    row_has neg $i "-3.1990"
    row_has neg $i "IMPLAUSIBLE: negative active power: W -27.1 < 0"
done
for i in 1 3 5; do row_ok neg $i; done
expect "neg: implausible samples" "$(field neg implausible)" -eq 3
expect "neg: ok samples" "$(field neg ok)" -eq 3
expect "neg: mean_w over the ok samples" "$(field neg mean_w)" = 200.000
expect "neg: sim served the fault 3 times" "$(sim_count "$PORT" implausible)" -eq 3

# A negative value in a trace (no fault): the sim counts it as implausible
# too, so its counters agree with what probe found.
printf '0,150\n0.25,-5\n' >"$T/negtrace.csv"
start_sim negtrace --protocol wt310 --trace "$T/negtrace.csv" --trace-sync
"$TB" meter probe "wt310://127.0.0.1:$PORT" --samples 3 --interval 300ms >"$T/negtrace.out" 2>&1 ||
    fail "probe negtrace exited $?: $(cat "$T/negtrace.out")"
row_ok negtrace 1
for i in 2 3; do row_has negtrace $i "IMPLAUSIBLE: negative active power: W -5 < 0"; done
expect "negtrace: implausible samples" "$(field negtrace implausible)" -eq 2
expect "negtrace: sim's implausible = probe's" "$(sim_count "$PORT" implausible)" -eq 2
expect "negtrace: sim's valid = probe's ok" "$(sim_count "$PORT" valid)" -eq "$(field negtrace ok)"

start_sim negptd --protocol ptd --watts 200 --interval 50ms --fault negative:2
probe negptd "ptd://127.0.0.1:$PORT?interval=50ms" 4
for i in 2 4; do row_has negptd $i "IMPLAUSIBLE: negative active power"; done
for i in 1 3; do row_ok negptd $i; done
expect "ptd neg: implausible samples" "$(field negptd implausible)" -eq 2

# ---- probe: above what the ranges can measure ----
# The bound is (CF x V range) x (CF x A range), from the ranges probe prints.
printf '0,60000,230,0.5,0.95\n' >"$T/over.csv"
start_sim over --protocol wt310 --trace "$T/over.csv"
probe over "wt310://127.0.0.1:$PORT" 2
read -r VR AR < <(sed -n 's/^ranges: *\([0-9.]*\) V (fixed), \([0-9.]*\) A (fixed)$/\1 \2/p' "$T/over.out")
CF=$(sed -n 's/^crest: *//p' "$T/over.out")
[ -n "$VR" ] && [ -n "$AR" ] && [ -n "$CF" ] || fail "over: ranges or crest factor not printed: $(cat "$T/over.out")"
MAXW=$(awk -v v="$VR" -v a="$AR" -v c="$CF" 'BEGIN { printf "%.0f", c * v * c * a }')
expect "over: the trace's 60000 W is above the bound" "$MAXW" -lt 60000
for i in 1 2; do row_has over $i "IMPLAUSIBLE: active power above what the V and A ranges can measure: W 60000 > $MAXW W"; done
# Just inside the bound W is judged on (and here fails) V x A x PF only.
printf '0,%s,230,0.5,0.95\n' "$((MAXW - 1))" >"$T/inside.csv"
start_sim inside --protocol wt310 --trace "$T/inside.csv"
probe inside "wt310://127.0.0.1:$PORT" 1
row_has inside 1 "IMPLAUSIBLE: V x A x PF disagrees with W"

# ---- probe: V x A x PF inconsistent, from a trace and from the fault ----
# 230 V x 2 A x 0.95 = 437 W against 200 W; tolerance 1.5% of 437 + 1.5% of the ranges.
TOL=$(awk -v v="$VR" -v a="$AR" 'BEGIN { printf "%.3f", 0.015 * 437 + 0.015 * v * a }')
expect_true "vapf: 237 W off is beyond the tolerance" "$TOL" ". < 237"
printf '0,200,230,2,0.95\n' >"$T/vapf.csv"
start_sim vapf --protocol wt310 --trace "$T/vapf.csv"
probe vapf "wt310://127.0.0.1:$PORT" 2
row_has vapf 1 "IMPLAUSIBLE: V x A x PF disagrees with W beyond the meter's accuracy: V x A x PF = 230 x 2 x 0.95 = 437 W"
start_sim vapff --protocol wt310 --watts 200 --fault inconsistent:2
probe vapff "wt310://127.0.0.1:$PORT" 4
for i in 2 4; do row_has vapff $i "IMPLAUSIBLE: V x A x PF disagrees"; done
for i in 1 3; do row_ok vapff $i; done
# A good sample as the WT310 emulator serves it (PF = P / (U x I)) passes.
printf '0,199.45,229.87,0.91234,0.95103\n' >"$T/good.csv"
start_sim good --protocol wt310 --trace "$T/good.csv"
probe good "wt310://127.0.0.1:$PORT" 2
for i in 1 2; do row_ok good $i; done

# ---- probe: NaN and over-range replies carry their reason too ----
start_sim nan --protocol wt310 --watts 200 --fault nan:2 --fault inf:3
probe nan "wt310://127.0.0.1:$PORT" 4
row_has nan 2 "INVALID: the meter or driver flagged the reading"
row_has nan 3 "OVERRANGE: the meter reports its input above range"
for i in 1; do row_ok nan $i; done
row_has nan 4 "INVALID:"

# ---- PTD replies that never end (fake_ptd.py: the emulator answers well) ----
# Endless warnings, "Last 1000000 samples" and 5 lines one a second: each
# reply is due within one timeout (1 s interval + 1.5 s) and 64 lines, so the
# first sample is MISSING with its reason, the connection is reset, and the
# next sample is good again. timeout(1) turns a hang into a failure.
fake_meter() { # SCRIPT NAME MODE: starts tests/tools/SCRIPT, sets FAKE_PORT
    local script=$1
    shift
    rm -f "$T/$1.port"
    /usr/bin/python3 "$TB_SOURCE_DIR/tests/tools/$script" "$T/$1.port" "$2" 2>"$T/fake-$1.log" &
    FAKE_PIDS="${FAKE_PIDS:-} $!"
    for _ in $(seq 100); do [ -s "$T/$1.port" ] && break; sleep 0.05; done
    FAKE_PORT=$(cat "$T/$1.port") || fail "fake meter $1 did not start: $(cat "$T/fake-$1.log")"
}
stop_fakes() { for p in ${FAKE_PIDS:-}; do kill "$p" 2>/dev/null || true; done; FAKE_PIDS=; }
at_exit stop_fakes
for mode in warn last slow; do
    fake_meter fake_ptd.py "$mode" "$mode"
    t0=$(date +%s)
    timeout 15 "$TB" meter probe "ptd://127.0.0.1:$FAKE_PORT" --samples 2 --interval 10ms >"$T/$mode.out" 2>"$T/$mode.err" ||
        fail "ptd $mode: probe exited $? (124: hung): $(cat "$T/$mode.out" "$T/$mode.err")"
    t1=$(date +%s)
    expect "ptd $mode: probe took (s)" "$((t1 - t0))" -le 6
    row_has "$mode" 1 "MISSING: "
    row_ok "$mode" 2
done
row_has warn 1 "'RL,1': reply of more than 64 lines (will reconnect)"
row_has last 1 "'RL,1': announces 1000000 samples for one asked (will reconnect)"
row_has slow 1 "'RL,1': reply not complete within 2500 ms (will reconnect)"
# Uncertainty that cannot be evaluated is not valid (SPEC): counters frozen
# at 0 samples, or a running average that falls (a negative sum).
fake_meter fake_ptd.py frozen frozen
timeout 15 "$TB" meter probe "ptd://127.0.0.1:$FAKE_PORT" --samples 2 --interval 10ms >"$T/frozen.out" 2>&1 ||
    fail "frozen: probe exited $?: $(cat "$T/frozen.out")"
for i in 1 2; do row_has frozen $i "  -  INVALID: the meter or driver flagged the reading"; done
fake_meter fake_ptd.py negavg negavg
timeout 15 "$TB" meter probe "ptd://127.0.0.1:$FAKE_PORT" --samples 2 --interval 10ms >"$T/negavg.out" 2>&1 ||
    fail "negavg: probe exited $?: $(cat "$T/negavg.out")"
row_ok negavg 1
row_has negavg 2 "  -  INVALID: the meter or driver flagged the reading"
# An Identify reply with a terminal escape: printed with '?' for the bytes
# (the IDN's ';' are PTD's commas).
fake_meter fake_ptd.py esc esc
timeout 15 "$TB" meter probe "ptd://127.0.0.1:$FAKE_PORT" --samples 1 >"$T/esc.out" 2>&1 ||
    fail "esc: probe exited $?: $(cat "$T/esc.out")"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/esc.out"; then fail "esc: control bytes printed raw"; fi
grep -q '^idn: *YOKOGAWA,WT310E,C2QE?\]0,pwned?,F1.03$' "$T/esc.out" || fail "esc: idn not sanitized: $(cat -v "$T/esc.out")"
stop_fakes

# ---- a WT310 set-up reply that comes late (fake_wt310.py) ----
# :INP:CFAC? answered after 1.0 s (timeout 800 ms): the crest factor is lost,
# the late "3" is not :RATE?'s reply (0.5 s), and poll k's reply (W = 100 + k)
# is sample k's, never an earlier poll's.
fake_meter fake_wt310.py latecfac latecfac
timeout 15 "$TB" meter probe "wt310://127.0.0.1:$FAKE_PORT" --samples 3 --interval 10ms >"$T/latecfac.out" \
    2>"$T/latecfac.err" || fail "latecfac: probe exited $?: $(cat "$T/latecfac.out" "$T/latecfac.err")"
grep -q '^update: *500 ms$' "$T/latecfac.out" || fail "latecfac: :RATE? not 500 ms: $(cat "$T/latecfac.out")"
if grep -q '^crest:' "$T/latecfac.out"; then fail "latecfac: a crest factor from a timed-out reply"; fi
for i in 1 2 3; do
    row latecfac $i | grep -qE "^ +$i  \S+ +$((100 + i))\.000 .*  ok$" ||
        fail "latecfac: sample $i is not poll $i's $((100 + i)) W: $(row latecfac $i)"
done
stop_fakes

# ---- auto ranges and an absurd reading: bounded by the model's largest ranges ----
# A WT310E on auto: 3 x 600 V x 3 x 20 A = 108 kW; 5e37 W is far above.
fake_meter fake_wt310.py huge huge
timeout 15 "$TB" meter probe "wt310://127.0.0.1:$FAKE_PORT" --samples 2 --interval 10ms >"$T/huge.out" 2>&1 ||
    fail "huge: probe exited $?: $(cat "$T/huge.out")"
for i in 1 2; do row_has huge $i "IMPLAUSIBLE,AUTORANGE: active power above what the V and A ranges can measure: W 5e+37 > 108000 W = 1800 V peak x 60 A peak"; done
expect "huge: ok samples" "$(field huge ok)" -eq 0
stop_fakes

# ---- sweep: 200 W and -27.1 W alternately ----
W=200
printf 'time,watts\n0,%s\n' "$W" >"$T/trace.csv"
start_sim sweep --protocol wt310 --trace "$T/trace.csv" --fault negative:2
SWEEP_PORT=$PORT
"$TB" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
run() { # PORT NAME STEADY [IDLE]
    "$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady "$3" --ramp-down 1s --idle "${4:-0}" \
        --meter "wt310://127.0.0.1:$1" --db "$T/results.db" --quiet >"$T/run-$2.log" 2>&1 ||
        fail "run $2 exited $?: $(cat "$T/run-$2.log")"
}
run "$SWEEP_PORT" neg 6s 3s
"$TB" report latest --db "$T/results.db" --format json >"$T/neg.json"
J="$T/neg.json"
expect "run status (the run goes on)" "$(jq -r .run.status "$J")" = complete
expect "level invalid" "$(jq .run.levels[0].valid "$J")" = false
REASON=$(jq -r '.run.levels[0].invalid_reason' "$J")
echo "$REASON" | grep -qi implausible || fail "invalid_reason does not mention implausible samples: $REASON"
echo "ok: invalid_reason: $REASON"
# The report's per-meter count of bad samples counts the implausible ones
# too: every negative raw value the run stored (active idle included).
NEG=$(sqlite3 "$T/results.db" "SELECT count(*) FROM power_samples WHERE run_id = (SELECT max(id) FROM runs) AND watts < 0")
expect "negative raw samples stored" "$NEG" -gt 0
expect "report: meter's invalid_samples = the negative samples" "$(jq '.run.meters[0].invalid_samples' "$J")" -eq "$NEG"
# Active idle, judged by the same power rules: its bad samples are a warning
# event (the idle figure feeds overall efficiency), naming them.
IDLE_BAD=$(sqlite3 "$T/results.db" "SELECT count(*) FROM power_samples WHERE run_id = (SELECT max(id) FROM runs)
    AND stage = 'idle' AND watts < 0")
expect "active idle: negative samples" "$IDLE_BAD" -gt 0
expect "active idle: one warning naming its $IDLE_BAD implausible samples" "$(sqlite3 "$T/results.db" "SELECT count(*)
    FROM events WHERE run_id = (SELECT max(id) FROM runs) AND kind = 'warning'
    AND message LIKE 'active idle: %power samples missing or invalid (limit 1%; $IDLE_BAD implausible)%'")" -eq 1
AVG=$(jq '.run.levels[0].avg_watts' "$J")
# A constant trace: any window's time-weighted mean is its one value.
expect_true "avg_watts is the trace's $W W (bogus samples excluded)" "$AVG" "((. - $W) | fabs) <= $W * 1e-9"

# The raw samples, checked in the database by code of this test's own.
/usr/bin/python3 - "$T/results.db" "$W" <<'EOF' || fail "power_samples check failed"
import sqlite3, sys
db, w_good = sys.argv[1], float(sys.argv[2])
c = sqlite3.connect(db)
run_id, = c.execute("SELECT max(id) FROM runs").fetchone()
lid, total, bad, avg = c.execute(
    "SELECT id, samples_total, samples_bad, avg_watts FROM levels WHERE run_id = ?", (run_id,)).fetchone()
rows = c.execute("SELECT mono_us, watts, amps, flags, reason FROM power_samples WHERE level_id = ? ORDER BY mono_us",
                 (lid,)).fetchall()
def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
if len(rows) != total: die(f"{len(rows)} stored samples, level says {total}")
if len(rows) < 5: die(f"only {len(rows)} samples in a 6 s steady state")
neg = [r for r in rows if r[1] is not None and r[1] < 0]
good = [r for r in rows if r[1] == w_good]
if len(neg) + len(good) != len(rows): die(f"samples neither {w_good} nor negative: {rows}")
for r in neg:
    if r[1] != -27.1 or r[2] != -3.199: die(f"negative sample not kept raw: {r}")
    if not r[3] & 0x20: die(f"negative sample without the IMPLAUSIBLE flag: {r}")
    if r[4] != "implausible: negative active power": die(f"negative sample's reason: {r}")
for r in good:
    if r[3] & 0x27 or r[4] is not None: die(f"good sample flagged: {r}")
if abs(len(neg) - len(good)) > 1 or len(neg) < 2: die(f"{len(neg)} negative vs {len(good)} good: not alternating")
for a, b in zip(rows, rows[1:]):
    if (a[1] < 0) == (b[1] < 0): die(f"two samples in a row alike: {a} {b}")
if bad != len(neg): die(f"samples_bad {bad}, {len(neg)} implausible stored")
# mean power by the trapezoid rule over the valid samples, and the naive mean
pts = [(r[0], r[1]) for r in rows if not r[3] & 0x27]
e = sum((w0 + w1) / 2 * (t1 - t0) for (t0, w0), (t1, w1) in zip(pts, pts[1:]))
mean = e / (pts[-1][0] - pts[0][0])
if abs(mean - avg) > 1e-9 * avg: die(f"trapezoid of the stored valid samples {mean} != avg_watts {avg}")
naive = sum(r[1] for r in rows) / len(rows)
print(f"ok: {len(rows)} samples stored, {len(neg)} implausible with reason; mean {mean:.6f} W; "
      f"believing the bogus samples would give {naive:.1f} W")
EOF

# ---- a run on a PTDaemon that streams warnings to every RL: it ends ----
# Every sample is MISSING within its deadline; the run completes, invalid.
fake_meter fake_ptd.py warnall warnall
rc=0
timeout 60 "$TB" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 1s --idle 0 \
    --meter "ptd://127.0.0.1:$FAKE_PORT" --db "$T/warnall.db" --quiet >"$T/run-warnall.log" 2>&1 || rc=$?
[ "$rc" -ne 124 ] || fail "warnall: the run hung: $(tail -5 "$T/run-warnall.log")"
"$TB" report latest --db "$T/warnall.db" --format json >"$T/warnall.json" || fail "warnall: no report (run exited $rc)"
expect "warnall: run status" "$(jq -r .run.status "$T/warnall.json")" = complete
expect "warnall: level invalid" "$(jq .run.levels[0].valid "$T/warnall.json")" = false
expect "warnall: no valid sample stored" "$(sqlite3 "$T/warnall.db" "SELECT count(*) FROM power_samples
    WHERE flags & 1 = 0 AND flags & 2 = 0")" -eq 0
expect "warnall: missing samples stored with their reason" "$(sqlite3 "$T/warnall.db" "SELECT count(*)
    FROM power_samples WHERE reason LIKE 'missing:%'")" -gt 0
stop_fakes

# ---- a second run: NaN, over-range and inconsistent replies ----
# request n: n % 4 == 0 INF, else n % 3 == 0 NaN, else even: V x A x PF
# doubled, else 200 W (the first listed fault wins). By residue mod 12, any
# 8 requests in a row hold each of the four; a 9 s steady state has 9.
start_sim mixed --protocol wt310 --trace "$T/trace.csv" --fault inf:4 --fault nan:3 --fault inconsistent:2
run "$PORT" mixed 9s
"$TB" report latest --db "$T/results.db" --format json >"$T/mixed.json"
expect "mixed: run status" "$(jq -r .run.status "$T/mixed.json")" = complete
expect "mixed: level invalid" "$(jq .run.levels[0].valid "$T/mixed.json")" = false
expect_true "mixed: avg_watts is the trace's $W W" "$(jq '.run.levels[0].avg_watts' "$T/mixed.json")" \
    "((. - $W) | fabs) <= $W * 1e-9"
/usr/bin/python3 - "$T/results.db" <<'EOF' || fail "mixed power_samples check failed"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run_id, = c.execute("SELECT max(id) FROM runs").fetchone()
rows = c.execute("SELECT s.watts, s.amps, s.flags, s.reason FROM power_samples s JOIN levels l ON s.level_id = l.id"
                 " WHERE l.run_id = ?", (run_id,)).fetchall()
kinds = {}
for w, a, f, why in rows:
    if f == 0 and why is None and w == 200:
        k = "ok"
    elif f == 0x01 and w is None and why.startswith("invalid:"):
        k = "nan"
    elif f == 0x04 and w is None and why.startswith("over-range:"):
        k = "inf"
    elif f == 0x20 and w == 200 and why == "implausible: V x A x PF disagrees with W beyond the meter's accuracy":
        k = "vapf"
    else:
        print(f"FAIL: sample with unexpected flags/reason: {(w, a, f, why)}", file=sys.stderr)
        sys.exit(1)
    kinds[k] = kinds.get(k, 0) + 1
print("ok: mixed run samples by kind:", kinds)
if len(rows) < 8:
    print(f"FAIL: only {len(rows)} samples in a 9 s steady state", file=sys.stderr)
    sys.exit(1)
for k in ("ok", "nan", "inf", "vapf"):
    if kinds.get(k, 0) == 0:
        print(f"FAIL: no '{k}' sample stored: {kinds}", file=sys.stderr)
        sys.exit(1)
EOF
# The emulators exit cleanly on SIGTERM, with no sanitizer report (ASan build).
stop_sims
if grep -lE "AddressSanitizer|LeakSanitizer|runtime error" "$T"/*.log; then fail "sanitizer report from the meter sim"; fi
echo "PASS test_meter_plausible"
