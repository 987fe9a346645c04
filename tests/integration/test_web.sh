#!/usr/bin/env bash
# test_web.sh: the web workload (Olio-like) against the reference web
# application that `tilebench sut up` starts on real PostgreSQL and Redis.
#   1. The app's /stats request counter equals the client's Request count
#      (every HTTP request with a complete response, pages and assets). The
#      only slack: a request in flight when the level stops is served by the
#      app but never recorded by the client, at most one per user (each user
#      has one connection and one request in flight at a time).
#   2. The observed op mix is within tolerance of Olio's long-run mix (the
#      matrix's stationary distribution, from the standard tile's rows), over
#      enough ops, through the real mix_deviation rule: the tolerance is 5
#      standard deviations of the widest op share (TagSearch, p = 0.334) at
#      the run's own op count, so chance alone does not fail it.
#   3. Every page op fetched its page and its assets: Request count per op
#      is well above 1 (Olio: about 20 requests per op).
#   4. A 200 page with the wrong content is a content error: HomePage
#      requests are sent to a base URL whose "/" is the app's TagSearch page
#      (a 200 carrying the TagSearch marker): every op fails while the app
#      answered every request with 2xx (so the errors are neither server
#      nor I/O errors). The errors land in the `content` class, in the
#      report's errors_by_class and in the database's ops.err_content, and
#      in no other class.
source "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || fail "curl is not installed (scripts/install-deps installs it)"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
W1=$(sed -n 's/^web\.tile1 = //p' "$T/sut/sut.ini")
[[ "$W1" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || fail "no web.tile1 in sut.ini: $(cat "$T/sut/sut.ini")"
stats() { curl -s "$W1/stats" | jq -r ".$1"; }

USERS=10
# The standard tile's web rows (Olio's matrix), with a 20x shorter cycle so a
# short run has enough ops (the mix does not depend on the timing).
ROWS=$(sed -n '/^\[workload.web\]/,/^\[/p' "$TB_SOURCE_DIR/tiles/standard.ini" | grep '^next\.')
[ "$(echo "$ROWS" | wc -l)" -eq 7 ] || fail "expected 7 next.* rows in the standard tile, got: $ROWS"
webtile() { # rows, then [sut] lines, then qos lines
    printf '[tile]\nname = web\n[workload.web]\nkind = web\nusers = %d\ncycle_time = 250ms\nthink_dist = negexp\n' "$USERS"
    printf 'min_cycle.AddPerson = 100ms\nmin_cycle.AddEvent = 150ms\ntimeout = 10s\nunit = ops/s\nreference = 40\n'
    printf '%s\n' "$1"
    printf '[sut]\n%s\n' "$2"
    printf '[qos.web]\n%s\n' "$3"
}
RUN=(--tiles 1 --ramp-up 1s --warm-up 1s --ramp-down 0 --idle 0 --quiet --meter estimate: --db "$T/r.db")
op() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"$1\") | .$2] | add" "$T/r.json"; }

# 1-3: counts and mix (the tolerance is set after a first look at nothing:
# 5 sigma at the expected op count; checked against the real count below)
STEADY=45
EXPECTED_OPS=$((USERS * STEADY * 4)) # 10 users x 45 s / 250 ms
TOL=$(jq -n "5 * 100 * ((0.334 * 0.666 / ($EXPECTED_OPS * 0.8)) | sqrt) | . * 100 | ceil / 100")
webtile "$ROWS" "web = $W1" "mix_deviation = $TOL
error_rate = 0.5" >"$T/mix.ini"
before=$(stats requests)
"$TILEBENCH" run --config "$T/mix.ini" "${RUN[@]}" --steady "${STEADY}s" >"$T/run1.log" 2>&1 ||
    fail "run exited $?: $(cat "$T/run1.log")"
sleep 0.5
after=$(stats requests)
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
client=$(op Request count_all)
server=$((after - before))
echo "requests: app $server, client $client"
expect "client requests" "$client" -gt 1000
expect "app requests - client requests (>= 0)" $((server - client)) -ge 0
expect "app requests - client requests (<= $USERS users with one request in flight at stop)" $((server - client)) -le $USERS

ops=$(jq '[.run.levels[0].workloads[].operations[] | select(.name != "Request") | .count] | add' "$T/r.json")
errors=$(jq '[.run.levels[0].workloads[].operations[] | .errors] | add' "$T/r.json")
echo "steady state: $ops page ops, $errors errors; mix tolerance $TOL pp"
jq -r '.run.levels[0].workloads[].operations[] | "  \(.name) \(.count) p90 \(.p90_ms) ms"' "$T/r.json"
expect "enough ops for the tolerance (>= 80% of $EXPECTED_OPS)" "$ops" -ge $((EXPECTED_OPS * 8 / 10))
expect "no errors" "$errors" -eq 0
mix=$(jq -c '.run.levels[0].qos[] | select(.rule | test("mix deviation"))' "$T/r.json")
echo "mix rule: $mix"
expect "mix rule judged (enough ops for 2.576 sd at $TOL pp)" "$(echo "$mix" | jq .judged)" = true
expect "mix within $TOL pp of Olio's long-run mix" "$(echo "$mix" | jq .pass)" = true
# the observed deviation, recomputed here: Olio's long-run mix is the
# stationary distribution of the standard tile's matrix (power iteration),
# the shares are each op's steady-state count among the 7 page ops, and the
# rule's figure is the widest gap, in percentage points
echo "$ROWS" >"$T/rows.txt"
python3 - "$T/rows.txt" "$T/r.json" "$(echo "$mix" | jq .observed)" >"$T/mix-check.log" 2>&1 <<'PYEOF' ||
import json, sys
ops = ["HomePage", "Login", "TagSearch", "EventDetail", "PersonDetail", "AddPerson", "AddEvent"]
P = {a: dict.fromkeys(ops, 0.0) for a in ops}
for line in open(sys.argv[1]).read().split("\n"):
    if not line.strip():
        continue
    key, val = line.split("=", 1)
    src = key.strip()[len("next."):]
    for tok in val.split():
        dst, w = tok.split("=")
        P[src][dst] = float(w)
pi = dict.fromkeys(ops, 1.0 / len(ops))
for _ in range(5000):
    nxt = dict.fromkeys(ops, 0.0)
    for a in ops:
        tot = sum(P[a].values())
        for b in ops:
            nxt[b] += pi[a] * P[a][b] / tot
    pi = nxt
count = dict.fromkeys(ops, 0)
for w in json.load(open(sys.argv[2]))["run"]["levels"][0]["workloads"]:
    for o in w["operations"]:
        if o["name"] in count:
            count[o["name"]] += o["count"]
total = sum(count.values())
dev = max(abs(100.0 * count[o] / total - 100.0 * pi[o]) for o in ops)
observed = float(sys.argv[3])
print("mix deviation: rule %.9f pp, recomputed %.9f pp over %d ops" % (observed, dev, total))
sys.exit(0 if abs(observed - dev) <= 1e-6 else 1)
PYEOF
    fail "the mix rule's deviation is not the recomputed one: $(cat "$T/mix-check.log")"
cat "$T/mix-check.log"
for o in HomePage TagSearch EventDetail Login; do
    expect "$o ran" "$(op "$o" count)" -gt 0
done
all_ops=$(jq '[.run.levels[0].workloads[].operations[] | select(.name != "Request") | .count_all] | add' "$T/r.json")
expect "requests per op (page + assets) above 5" $((client / all_ops)) -gt 5

# 4. wrong content: "/" under this base is the TagSearch page (200)
HOME_ONLY=$(printf 'next.%s = HomePage=100\n' HomePage Login TagSearch EventDetail PersonDetail AddPerson AddEvent)
webtile "$HOME_ONLY" "web = $W1/tags?tag=music&page=" "error_rate = 0.5" >"$T/wrong.ini"
before=$(stats requests)
tags_before=$(stats pages.TagSearch)
ok_before=$(stats responses_2xx_3xx)
"$TILEBENCH" run --config "$T/wrong.ini" "${RUN[@]}" --steady 5s >"$T/run2.log" 2>&1 ||
    fail "run exited $?: $(cat "$T/run2.log")"
sleep 0.5
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
served=$(($(stats requests) - before))
echo "wrong content: $(op HomePage errors) HomePage errors in steady state; app served $served requests," \
    "$(($(stats pages.TagSearch) - tags_before)) TagSearch pages, $(($(stats responses_2xx_3xx) - ok_before)) with 2xx"
expect "no good HomePage" "$(op HomePage count_all)" -eq 0
expect "HomePage errors" "$(op HomePage errors)" -gt 20
expect "the app served them as TagSearch pages" $(($(stats pages.TagSearch) - tags_before)) -eq "$served"
expect "all with 2xx (so not server errors)" $(($(stats responses_2xx_3xx) - ok_before)) -eq "$served"
expect "no asset fetched after a wrong page" "$(op Request count_all)" -le "$served"
expect "error-rate rule fails" "$(jq '.run.levels[0].qos[] | select(.rule | test("error")) | .pass' "$T/r.json")" = false
# the errors by class: every one a content error
home_errors=$(op HomePage errors)
expect "HomePage content errors (report)" "$(op HomePage errors_by_class.content)" -eq "$home_errors"
for cls in connect io timeout server; do
    expect "HomePage $cls errors (report)" "$(op HomePage errors_by_class.$cls)" -eq 0
done
expect "web workload content errors (report)" \
    "$(jq '[.run.levels[0].workloads[] | select(.name == "web") | .errors_by_class.content] | add' "$T/r.json")" \
    -eq "$(jq '[.run.levels[0].workloads[] | select(.name == "web") | .errors] | add' "$T/r.json")"
run_id=$(jq .run.id "$T/r.json")
db_classes=$(sqlite3 "$T/r.db" "SELECT sum(o.errors), sum(o.err_content), sum(o.err_connect + o.err_io + o.err_timeout +
    o.err_server) FROM ops o JOIN workloads w ON o.workload_id = w.id JOIN levels l ON w.level_id = l.id
    WHERE l.run_id = $run_id AND w.name = 'web' AND o.name = 'HomePage'")
echo "database: HomePage errors|content|other classes = $db_classes"
expect "stored HomePage errors by class (errors|content|others)" "$db_classes" = "$home_errors|$home_errors|0"

# 5. a per-op minimum cycle holds the op back (the driver's min_cycle_us hook):
#    HomePage and TagSearch alternate; TagSearch may not start until 1 h after
#    the previous op, so each user runs at most 3 ops (a first TagSearch, drawn
#    from the long-run mix, has no predecessor), where 50 ms cycles would give
#    about 100 in 5 s.
PINGPONG=$(printf 'next.%s = HomePage=100\n' Login EventDetail PersonDetail AddPerson AddEvent
    printf 'next.HomePage = TagSearch=100\nnext.TagSearch = HomePage=100\n')
webtile "$PINGPONG" "web = $W1" "error_rate = 0.5" | sed 's/^cycle_time = .*/cycle_time = 50ms/' >"$T/min.ini"
sed -i 's/^min_cycle.AddEvent = 150ms$/min_cycle.AddEvent = 150ms\nmin_cycle.TagSearch = 1h/' "$T/min.ini"
grep -q '^min_cycle.TagSearch = 1h$' "$T/min.ini" || fail "min.ini lacks the TagSearch minimum"
"$TILEBENCH" run --config "$T/min.ini" "${RUN[@]}" --steady 5s >"$T/run3.log" 2>&1 ||
    fail "run exited $?: $(cat "$T/run3.log")"
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
total=$(jq '[.run.levels[0].workloads[].operations[] | select(.name != "Request") | .count_all] | add' "$T/r.json")
echo "min cycle: $total ops by $USERS users"
expect "ops with a 1 h minimum before TagSearch (<= 3 per user)" "$total" -le $((3 * USERS))
expect "every user ran its first op" "$total" -ge "$USERS"
echo "PASS test_web"
