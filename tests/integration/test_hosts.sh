#!/usr/bin/env bash
# test_hosts.sh: a SUT of two hosts ([host.NAME] in the tile file), each
# measured by its own meter emulator serving a known constant power (host a
# also by a constant estimate: model, summed within the host). A 2-level run
# (kv tiles 1..2; tile 1 on host a, tile 2 on host b, the host without a
# tiles key): the JSON report shows each host's mean power equal to its
# emulator's (the emulator adds no noise: --watts is served as given), the
# level's avg_watts is the sum of the hosts', and PPKW = score / (sum W /
# 1000), recomputed here in python. Host a samples this machine's telemetry,
# host b has none. A --meter beside host sections is refused.
source "$(dirname "$0")/lib.sh"

WA=123.4 WE=50 WB=211.7
start_sim simA --protocol wt310 --watts "$WA"
PA=$PORT
start_sim simB --protocol ptd --watts "$WB"
PB=$PORT

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
{
    printf '[tile]\nname = kv\n[workload.kv]\nkind = kv\nusers = 2\nthink_time = 50ms\nthink_dist = uniform\n'
    printf 'unit = ops/s\nreference = 10\ntimeout = 1s\n'
    cat "$T/sut/sut.ini"
    printf '[host.a]\nlabel = first box\nmeter = wt310://127.0.0.1:%s\nmeter.model = estimate:?idle=%s&max=%s\n' \
        "$PA" "$WE" "$WE"
    printf 'telemetry = local\ntiles = 1\n'
    printf '[host.b]\nmeter = ptd://127.0.0.1:%s\n' "$PB"
} >"$T/tile.ini"

# --meter beside [host.NAME] sections: refused before anything runs
rc=0
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --meter estimate: --db "$T/refused.db" --quiet \
    >"$T/refused.log" 2>&1 || rc=$?
expect "--meter with host sections: exit" "$rc" -eq 2
grep -q "\[host.NAME\] sections name the meters" "$T/refused.log" || fail "refusal message: $(cat "$T/refused.log")"
# a host's node_exporter that does not answer: aborted before anything is measured, no secret shown
sed 's|^\[host.b\]$|&\ntelemetry = http://u:s3cret@127.0.0.1:1/metrics|' "$T/tile.ini" >"$T/noexp.ini"
rc=0
"$TILEBENCH" run --config "$T/noexp.ini" --tiles 1 --db "$T/noexp.db" --quiet >"$T/noexp.log" 2>&1 || rc=$?
expect "unreachable host telemetry: exit" "$rc" -eq 3
grep -q "\[host.b\] telemetry" "$T/noexp.log" || fail "unreachable telemetry message: $(cat "$T/noexp.log")"
if grep -q s3cret "$T/noexp.log"; then fail "the telemetry password reached the output"; fi
# every host names its tiles: a sweep reaching a tile none serves is refused before it runs
sed 's|^\[host.b\]$|&\ntiles = 2|' "$T/tile.ini" >"$T/named.ini"
rc=0
"$TILEBENCH" run --config "$T/named.ini" --tiles 1..3 --db "$T/named.db" --quiet >"$T/named.log" 2>&1 || rc=$?
expect "a tile no host serves: exit" "$rc" -eq 2
grep -q "tile 3 is served by no \[host.NAME\]" "$T/named.log" || fail "no-host tile message: $(cat "$T/named.log")"

# a ramp-down of 1 s gives the last level's end edge a sample after it (check's edges rule, docs/verify.md)
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 --ramp-up 1s --warm-up 1s --steady 4s --ramp-down 1s \
    --idle 3s --db "$T/r.db" --report "$T/r.json" --quiet >"$T/run.log" 2>&1 || fail "run: $(cat "$T/run.log")"
J=$T/r.json
expect "run status" "$(jq -r .run.status "$J")" = complete
expect "invalid levels" "$(jq '[.run.levels[] | select(.valid != true)] | length' "$J")" -eq 0
expect "levels" "$(jq '.run.levels | length' "$J")" -eq 2
expect "hosts" "$(jq '.run.hosts | length' "$J")" -eq 2
expect "host a's tiles" "$(jq -r '.run.hosts[0].tiles' "$J")" = 1
expect "host b's tiles" "$(jq -r '.run.hosts[1].tiles' "$J")" = rest
expect "host a's label" "$(jq -r '.run.hosts[0].label' "$J")" = "first box"
expect "meters" "$(jq '.run.meters | length' "$J")" -eq 3
expect "meters' hosts" "$(jq -r '[.run.meters[].host] | join(",")' "$J")" = a,a,b
expect "host a's configuration (local)" "$(jq -r '.run.hosts[0].config.hostname' "$J")" = "$(hostname)"
expect "host b's configuration (no telemetry)" "$(jq '.run.hosts[1].config | length' "$J")" -eq 0

python3 - "$J" "$WA" "$WE" "$WB" <<'PY' || fail "per-host power or PPKW"
import json, sys
r = json.load(open(sys.argv[1]))["run"]
wa = float(sys.argv[2]) + float(sys.argv[3])  # host a: its emulator plus its constant model
wb = float(sys.argv[4])
bad = []
def near(what, got, want, tol=1e-6):
    ok = got is not None and abs(got - want) <= tol * max(1.0, abs(want))
    print(("ok: " if ok else "FAIL: ") + f"{what}: {got} vs {want}")
    if not ok: bad.append(what)
for h, want in zip(r["hosts"], (wa, wb)):
    near(f"idle of host {h['name']}", h["active_idle_watts"], want)
near("run idle = sum of the hosts'", r["active_idle_watts"], wa + wb)
for lv in r["levels"]:
    hs = {h["name"]: h for h in lv["hosts"]}
    t = lv["tiles"]
    near(f"{t} tiles: host a W", hs["a"]["avg_watts"], wa)
    near(f"{t} tiles: host b W", hs["b"]["avg_watts"], wb)
    near(f"{t} tiles: avg_watts = sum of the hosts'", lv["avg_watts"], hs["a"]["avg_watts"] + hs["b"]["avg_watts"])
    near(f"{t} tiles: ppkw = score / (sum W / 1000)", lv["ppkw"], lv["score"] / ((wa + wb) / 1000.0))
    near(f"{t} tiles: tiles on a", hs["a"]["tiles"], 1)
    near(f"{t} tiles: tiles on b", hs["b"]["tiles"], t - 1)
    if not hs["a"]["samples"] >= 3 or not hs["b"]["samples"] >= 3: bad.append("samples per host")
    if not (hs["a"]["telemetry"]["samples"] or 0) >= 2: bad.append("host a telemetry samples")
    if hs["b"]["telemetry"]["samples"] is not None: bad.append("host b has no telemetry")
    if lv["score"] <= 0: bad.append("score")
sys.exit(1 if bad else 0)
PY

# the store holds the same: level_hosts rows sum to levels.avg_watts
n=$(sqlite3 "$T/r.db" "SELECT count(*) FROM levels l WHERE abs(l.avg_watts -
    (SELECT sum(avg_watts) FROM level_hosts h WHERE h.level_id = l.id)) > 1e-6")
expect "levels whose avg_watts is not the hosts' sum" "$n" -eq 0
# every published figure (scores, the summed power, PPKW) recomputed from the raw rows
python3 "$TB_SOURCE_DIR/tests/tools/recompute.py" "$T/r.db" 1 >"$T/recompute.log" 2>&1 ||
    fail "recompute.py: $(cat "$T/recompute.log")"
for fmt in text csv html; do
    "$TILEBENCH" report latest --db "$T/r.db" --format $fmt >"$T/r.$fmt" || fail "report --format $fmt"
done
grep -q "host a" "$T/r.text" || fail "text report names no host: $(head -40 "$T/r.text")"
grep -q "SUT hosts per level" "$T/r.text" || fail "text report: no per-host table"
head -1 "$T/r.csv" | grep -q ',watts_a,tiles_a,watts_b,tiles_b' || fail "csv: no per-host columns: $(head -1 "$T/r.csv")"
grep -q 'id="hosts"' "$T/r.html" || fail "html: no SUT hosts section"
# tilebench check recomputes each host's mean power, samples and active idle from its meters' rows
"$TILEBENCH" publish 1 --db "$T/r.db" -o "$T/r.tar.gz" >"$T/publish.log" 2>&1 || fail "publish: $(cat "$T/publish.log")"
rc=0
"$TILEBENCH" check "$T/r.tar.gz" >"$T/check.out" 2>&1 || rc=$? # a demo run on an estimate is never compliant
[ "$rc" -le 1 ] || fail "check exited $rc: $(cat "$T/check.out")"
grep -q "^PASS figures hosts: [0-9]* figures of 6 host entries agree" "$T/check.out" ||
    fail "check: no per-host line: $(cat "$T/check.out")"
! grep -q "^FAIL figure.* host " "$T/check.out" || fail "check: a host's figure: $(grep host "$T/check.out")"
# the only rule a clean two-host run breaks is host a's estimated model: every
# sample of every meter is stored (a PTDaemon's RL waits for its next sample,
# and the other meters' samples of that tick must not miss the steady window)
expect "check's failures" "$(grep -c '^FAIL' "$T/check.out")" -eq 1
grep -q "^FAIL rule measured power meter 1: ESTIMATED" "$T/check.out" || fail "check: $(grep FAIL "$T/check.out")"

# compare: a second (1-level) run shows each host's power beside the first's
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 --idle 0 \
    --db "$T/r.db" --quiet >"$T/run2.log" 2>&1 || fail "run 2: $(cat "$T/run2.log")"
"$TILEBENCH" compare 1 2 --db "$T/r.db" --format json >"$T/cmp.json" || fail "compare json"
expect "compare hosts" "$(jq -r '.comparison.hosts | join(",")' "$T/cmp.json")" = a,b
W2=$(jq '.comparison.levels[0].runs[1].host_watts.b.value' "$T/cmp.json")
expect_true "compare: run 2 host b W" "$W2" "((. - $WB) | fabs) < 1e-6"
"$TILEBENCH" compare 1 2 --db "$T/r.db" >"$T/cmp.txt" || fail "compare text"
grep -q "Mean power of host a (W)" "$T/cmp.txt" || fail "compare text: no host table: $(cat "$T/cmp.txt")"
# ... and beside a run without hosts (the same tile, one --meter): its host cells are unknown
sed '/^\[host\./,$d' "$T/tile.ini" >"$T/nohosts.ini"
"$TILEBENCH" run --config "$T/nohosts.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 --idle 0 \
    --meter "wt310://127.0.0.1:$PA" --db "$T/r.db" --quiet >"$T/run3.log" 2>&1 || fail "run 3: $(cat "$T/run3.log")"
expect "run 3 has no hosts key" "$(jq '.run | has("hosts")' <("$TILEBENCH" report 3 --db "$T/r.db" --format json))" = false
"$TILEBENCH" compare 1 3 --db "$T/r.db" --format json >"$T/cmp3.json" || fail "compare 1 3"
expect "compare: run 3 host a W unknown" "$(jq '.comparison.levels[0].runs[1].host_watts.a.value' "$T/cmp3.json")" = null
"$TILEBENCH" compare 1 3 --db "$T/r.db" --format html >"$T/cmp3.html" || fail "compare html"
grep -q "Mean power of host b (W)" "$T/cmp3.html" || fail "compare html: no host table"
echo "PASS test_hosts"
