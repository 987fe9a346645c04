#!/usr/bin/env bash
# test_serve.sh: `tilebench serve` over a real results database, built by a
# short sweep against the embedded SUT with a hostile label. Checks the pages
# and the API against the CLI's own reports (byte for byte), escaping, strict
# routes (traversal attempts are 404), read-only methods (405), headers, the
# 503 pages of a missing and a locked database, that a second run's levels
# appear while it is still running, the default loopback bind (ss -ltn), a
# port in use (exit 2), and a clean stop on SIGTERM.
source "$(dirname "$0")/lib.sh"

LABEL='<script>alert(1)</script>'
LABEL_ESC='&lt;script&gt;alert(1)&lt;/script&gt;'
DB="$T/results.db"

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
# 8 s of steady state: web makes about 2 ops/s for one tile, and a 3 s window
# under two parallel tests once had none, a score (and PPKW) of 0.
STAGES=(--ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 1s)

"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 "${STAGES[@]}" --db "$DB" --label "$LABEL" --quiet \
    >"$T/run1.log" 2>&1 || fail "run 1 exited $?: $(cat "$T/run1.log")"

# Note: no `curl | grep -q` below: grep quits at the first match, curl then
# fails on the closed pipe, and pipefail turns a match into a failure.

# start_serve NAME ARGS...: starts serve in the background, sets SPID and
# PORT from its "http://ADDR:PORT/" line.
start_serve() {
    local name=$1 i
    shift
    "$TILEBENCH" serve "$@" >"$T/$name.out" 2>"$T/$name.log" &
    SPID=$!
    at_exit "kill $SPID 2>/dev/null"
    for i in $(seq 1 200); do # 20 s: on a locked database the probe waits out the 5 s busy timeout
        PORT=$(sed -n 's|^tilebench serve: http://[^ ]*:\([0-9]*\)/ .*|\1|p' "$T/$name.out")
        [ -n "$PORT" ] && return 0
        kill -0 $SPID 2>/dev/null || fail "serve $* exited: $(cat "$T/$name.log")"
        sleep 0.1
    done
    fail "serve $* printed no address: $(cat "$T/$name.out" "$T/$name.log")"
}

DB_SUM=$(md5sum <"$DB")
start_serve serve --db "$DB" --listen 127.0.0.1:0 --verbose
SERVE_PID=$SPID
U="http://127.0.0.1:$PORT"
echo "serve on $U (pid $SERVE_PID)"

code() { curl -s --path-as-is -o /dev/null -w '%{http_code}' "$@"; }

# ---- pages and API ---------------------------------------------------------------
curl -sf "$U/" >"$T/index.html" || fail "GET / failed"
grep -qF "$LABEL_ESC" "$T/index.html" || fail "run list does not show the escaped label"
expect "'<script' in the run list" "$(grep -ci '<script' "$T/index.html" || true)" -eq 0
grep -q 'href="/runs/1"' "$T/index.html" || fail "run list has no link to /runs/1"
grep -q 'name="runs" value="1"' "$T/index.html" || fail "run list has no compare checkbox for run 1"
grep -q 'action="/compare"' "$T/index.html" || fail "run list has no compare form"

curl -sf "$U/runs/1" >"$T/run1.html" || fail "GET /runs/1 failed"
grep -qF "$LABEL_ESC" "$T/run1.html" || fail "report does not show the escaped label"
expect "'<script' in the report" "$(grep -ci '<script' "$T/run1.html" || true)" -eq 0
grep -q 'PPKW' "$T/run1.html" || fail "report has no PPKW"
grep -q 'href="/"' "$T/run1.html" || fail "report has no link back to the run list"

curl -sf "$U/api/runs" >"$T/runs.json" || fail "GET /api/runs failed"
expect "api runs count" "$(jq '.runs | length' "$T/runs.json")" -eq 1
expect "api run id" "$(jq '.runs[0].id' "$T/runs.json")" -eq 1
expect "api run status" "$(jq -r '.runs[0].status' "$T/runs.json")" = complete
expect "api run label (raw in JSON)" "$(jq -r '.runs[0].label' "$T/runs.json")" = "$LABEL"
expect "api run levels" "$(jq '.runs[0].levels' "$T/runs.json")" -eq 2
expect_true "api run peak PPKW" "$(jq '.runs[0].peak_ppkw' "$T/runs.json")" '. > 0'
expect "api run report link" "$(jq -r '.runs[0].links.html' "$T/runs.json")" = /runs/1

# The served reports are the CLI's, byte for byte.
"$TILEBENCH" report 1 --db "$DB" --format json >"$T/cli1.json"
"$TILEBENCH" report 1 --db "$DB" --format csv >"$T/cli1.csv"
curl -sf "$U/api/runs/1" >"$T/api1.json" || fail "GET /api/runs/1 failed"
curl -sf "$U/runs/1.json" >"$T/run1.json" || fail "GET /runs/1.json failed"
curl -sf "$U/runs/1.csv" >"$T/run1.csv" || fail "GET /runs/1.csv failed"
cmp -s "$T/api1.json" "$T/cli1.json" || fail "/api/runs/1 differs from report --format json"
cmp -s "$T/run1.json" "$T/cli1.json" || fail "/runs/1.json differs from report --format json"
cmp -s "$T/run1.csv" "$T/cli1.csv" || fail "/runs/1.csv differs from report --format csv"
expect "api report levels" "$(jq '.run.levels | length' "$T/api1.json")" -eq 2
expect "api report label" "$(jq -r '.run.label' "$T/api1.json")" = "$LABEL"
echo "ok: /api/runs/1, /runs/1.json and /runs/1.csv equal the CLI reports"

# ---- headers --------------------------------------------------------------------------
curl -s -D "$T/h.txt" -o /dev/null "$U/runs/1"
tr -d '\r' <"$T/h.txt" >"$T/headers.txt"
grep -qi "^content-security-policy: default-src 'none';" "$T/headers.txt" || fail "no restrictive CSP: $(cat "$T/headers.txt")"
grep -qi '^x-content-type-options: nosniff$' "$T/headers.txt" || fail "no nosniff header"
grep -qi '^content-type: text/html; charset=utf-8$' "$T/headers.txt" || fail "report is not text/html"
expect "api content type" "$(curl -s -o /dev/null -w '%{content_type}' "$U/api/runs")" = application/json
expect "csv content type" "$(curl -s -o /dev/null -w '%{content_type}' "$U/runs/1.csv")" = "text/csv; charset=utf-8"
expect "second request on a kept-alive connection opens no new one" \
    "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects} ' "$U/api/runs" "$U/runs/1" | awk '{print $2}')" -eq 0
expect "HEAD /runs/1 status" "$(curl -s -I -o /dev/null -w '%{http_code}' "$U/runs/1")" -eq 200
expect "HEAD /runs/1 body bytes" "$(curl -s -I -o /dev/null -w '%{size_download}' "$U/runs/1")" -eq 0

# ---- strict routes, methods, Host --------------------------------------------------------
for path in '/../../etc/passwd' '/runs/1/../../x' '/%2e%2e/%2e%2e/etc/passwd' '/runs/%2e%2e/%2e%2e/etc/passwd' \
    '/runs/1%00' '/runs/1%00.json' '/runs/1%2f..%2f..%2fetc%2fpasswd' '/runs/01' '/runs/-1' '/runs/1/' '/runs/1x' \
    '/api/runs/1.json' '/etc/passwd' '/results.db' '/favicon.ico' '/runs/%2531' '/runs/1%2500' '/runs/1%'; do
    expect "GET $path" "$(code "$U$path")" -eq 404
    if grep -q 'root:' <<<"$(curl -s --path-as-is "$U$path")"; then fail "$path leaked a file"; fi
done
expect "GET /runs/2 (no such run)" "$(code "$U/runs/2")" -eq 404
expect "GET /api/runs/2 (no such run, JSON)" "$(curl -s "$U/api/runs/2" | jq .status)" -eq 404
for m in POST PUT DELETE PATCH; do
    expect "$m /" "$(code -X $m "$U/")" -eq 405
done
expect "POST /runs/1 with a body" "$(code -X POST --data 'x=1' "$U/runs/1")" -eq 405
grep -qi '^allow: GET, HEAD$' <<<"$(curl -s -X POST -D - -o /dev/null "$U/" | tr -d '\r')" || fail "405 has no Allow: GET, HEAD"
expect "foreign Host header (DNS rebinding)" "$(code -H 'Host: evil.example' "$U/")" -eq 403
expect "Host localhost" "$(code -H "Host: localhost:$PORT" "$U/")" -eq 200
expect "database unchanged by serving" "$(md5sum <"$DB")" = "$DB_SUM"

# ---- a run writing while serve reads ---------------------------------------------------------
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 1s \
    --db "$DB" --label live --quiet >"$T/run2.log" 2>&1 &
RUN2=$!
at_exit "kill -INT $RUN2 2>/dev/null; wait $RUN2 2>/dev/null"
seen=0
for _ in $(seq 1 240); do
    kill -0 $RUN2 2>/dev/null || fail "run 2 ended before a level was seen: $(cat "$T/run2.log")"
    st=$(code "$U/")
    [ "$st" = 200 ] || fail "GET / during run 2 answered $st"
    if curl -sf "$U/api/runs/2" >"$T/api2.json" 2>/dev/null &&
        [ "$(jq '.run.levels | length' "$T/api2.json")" -ge 1 ]; then
        seen=1
        break
    fi
    sleep 0.25
done
expect "a level of run 2 seen through serve" "$seen" -eq 1
expect "run 2 status while its level shows" "$(jq -r .run.status "$T/api2.json")" = running
expect_true "run 2 level 1 score" "$(jq '.run.levels[0].score' "$T/api2.json")" '. > 0'
curl -sf "$U/api/runs" >"$T/runs2.json"
expect "run list during run 2: run 2 running" "$(jq -r '.runs[] | select(.id == 2) | .status' "$T/runs2.json")" = running
expect "run list newest first" "$(jq -c '[.runs[].id]' "$T/runs2.json")" = "[2,1]"
grep -q 'RUN IN PROGRESS' <<<"$(curl -sf "$U/runs/2")" || fail "report of run 2 has no in-progress banner"
expect "GET /runs/1 during run 2" "$(code "$U/runs/1")" -eq 200
kill -INT $RUN2
rc=0
wait $RUN2 || rc=$?
expect "run 2 exit after SIGINT" "$rc" -eq 3
expect "run 2 status after SIGINT" "$(curl -sf "$U/api/runs" | jq -r '.runs[] | select(.id == 2) | .status')" = interrupted

# ---- /compare ---------------------------------------------------------------------------------
expect "compare with one run" "$(code "$U/compare?runs=1")" -eq 400
expect "compare with no runs" "$(code "$U/compare")" -eq 400
expect "compare: one run ticked plus another baseline" "$(code "$U/compare?runs=1&baseline=2")" -eq 200
expect "compare with a bad id" "$(code "$U/compare?runs=1,x")" -eq 400
expect "compare with %00" "$(code "$U/compare?runs=1%00,2")" -eq 400
expect "compare with an unknown run" "$(code "$U/compare?runs=1,99")" -eq 404
expect "compare with an unknown baseline" "$(code "$U/compare?runs=1,2&baseline=99")" -eq 404
curl -sf "$U/compare?runs=1,2&baseline=1" >"$T/compare.html" || fail "GET /compare?runs=1,2&baseline=1 failed"
grep -q 'tilebench compare: 2 runs against baseline run 1' "$T/compare.html" || fail "compare page has no title line"
grep -qF "$LABEL_ESC" "$T/compare.html" || fail "compare page does not show the escaped label"
expect "'<script' in the compare page" "$(grep -ci '<script' "$T/compare.html" || true)" -eq 0
grep -q 'href="/"' "$T/compare.html" || fail "compare page has no link back to the run list"
# the run list's form sends repeated runs= parameters
curl -sf "$U/compare?runs=1&runs=2&baseline=2" >"$T/compare2.html" || fail "GET /compare (form style) failed"
grep -q 'against baseline run 2' "$T/compare2.html" || fail "form-style compare does not use baseline 2"
"$TILEBENCH" compare 1 2 --baseline 1 --db "$DB" --format html >"$T/cli-compare.html"
expect "compare page = CLI compare + one nav line" "$(diff "$T/cli-compare.html" "$T/compare.html" | grep -c '^[<>]')" -eq 1

# ---- logging: one line per request at debug level (--verbose) ---------------------------------
grep -q 'serve: GET /api/runs -> 200' "$T/serve.log" || fail "no request line in the --verbose log"
grep -q 'serve: POST / -> 405' "$T/serve.log" || fail "no 405 line in the --verbose log"

# ---- database missing or locked: 503, and serve keeps going ---------------------------------------
start_serve missing --db "$T/none.db" --listen 127.0.0.1:0
MISSING_PID=$SPID
grep -q "not found" "$T/missing.log" || fail "no warning about the missing database: $(cat "$T/missing.log")"
expect "missing DB: /" "$(code "http://127.0.0.1:$PORT/")" -eq 503
grep -q "none.db&#39; not found" <<<"$(curl -s "http://127.0.0.1:$PORT/")" || fail "503 page does not name the database"
expect "missing DB: /api/runs JSON status" "$(curl -s "http://127.0.0.1:$PORT/api/runs" | jq .status)" -eq 503
cp "$DB" "$T/none.db"
expect "DB created later: /api/runs" "$(curl -s "http://127.0.0.1:$PORT/api/runs" | jq '.runs | length')" -eq 2
rm -f "$T/none.db"

cp "$DB" "$T/locked.db"
(
    echo "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; SELECT 'locked';"
    sleep 30
) | sqlite3 "$T/locked.db" >"$T/lock.out" &
LOCKER=$!
at_exit "kill $LOCKER 2>/dev/null"
for _ in $(seq 1 50); do grep -q locked "$T/lock.out" && break; sleep 0.1; done
grep -q locked "$T/lock.out" || fail "could not lock the copy of the database"
start_serve locked --db "$T/locked.db" --listen 127.0.0.1:0
expect "locked DB: /" "$(code "http://127.0.0.1:$PORT/")" -eq 503
grep -q "locked" <<<"$(curl -s "http://127.0.0.1:$PORT/api/runs/1" | jq -r .detail)" || fail "503 does not say locked"
kill -TERM $SPID
wait $SPID || fail "serve on the locked database did not stop cleanly"
kill $LOCKER 2>/dev/null || true
kill -TERM $MISSING_PID
wait $MISSING_PID || fail "serve on the missing database did not stop cleanly"

# ---- usage errors -------------------------------------------------------------------------------
for bad in 127.0.0.1 127.0.0.1:99999 :8080 '::1:80' 'no such host:80' 127.0.0.1:80x; do
    rc=0
    "$TILEBENCH" serve --db "$DB" --listen "$bad" >/dev/null 2>"$T/bad.err" || rc=$?
    expect "--listen '$bad' exit" "$rc" -eq 2
    grep -qF -- "$bad" "$T/bad.err" || fail "--listen '$bad': message does not name it: $(cat "$T/bad.err")"
done
rc=0
"$TILEBENCH" serve --db "$DB" --listen 127.0.0.1:$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$T/serve.out") \
    >/dev/null 2>"$T/inuse.err" || rc=$?
expect "port in use: exit" "$rc" -eq 2
grep -q "Address already in use" "$T/inuse.err" || fail "port in use: no clear message: $(cat "$T/inuse.err")"
grep -q -- "--listen ADDR:PORT" <<<"$("$TILEBENCH" serve --help)" || fail "serve --help does not document --listen"

# ---- default address: 127.0.0.1:8080 only -----------------------------------------------------------
if [ -n "$(ss -ltnH 'sport = :8080')" ]; then
    fail "port 8080 is already in use on this machine ($(ss -ltnH 'sport = :8080')); this test checks the default address"
fi
(cd "$T" && exec "$TILEBENCH" serve >"$T/default.out" 2>"$T/default.log") &
DEF=$!
at_exit "kill $DEF 2>/dev/null"
for _ in $(seq 1 50); do grep -q http "$T/default.out" && break; sleep 0.1; done
grep -q '^tilebench serve: http://127.0.0.1:8080/ (tilebench-results.db, read-only)' "$T/default.out" ||
    fail "default address line: $(cat "$T/default.out" "$T/default.log")"
ss -ltnH 'sport = :8080' >"$T/ss.txt"
cat "$T/ss.txt"
expect "listening sockets on :8080" "$(wc -l <"$T/ss.txt")" -eq 1
expect "default bind address" "$(awk '{print $4}' "$T/ss.txt")" = 127.0.0.1:8080
expect "default serve answers (no DB yet: 503)" "$(code http://127.0.0.1:8080/)" -eq 503
expect "no request log without --verbose" "$(grep -c 'serve: GET' "$T/default.log" || true)" -eq 0
kill -INT $DEF
rc=0
wait $DEF || rc=$?
expect "exit after SIGINT" "$rc" -eq 0

# ---- clean stop -----------------------------------------------------------------------------------
kill -TERM $SERVE_PID
rc=0
wait $SERVE_PID || rc=$?
expect "serve exit after SIGTERM" "$rc" -eq 0
grep -q '^tilebench serve: stopped' "$T/serve.out" || fail "serve did not say it stopped"
echo "PASS test_serve"
