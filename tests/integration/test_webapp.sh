#!/usr/bin/env bash
# test_webapp.sh: the reference web application (tilebench webapp) that
# `sut up` starts once per tile, against the real PostgreSQL and Redis of the
# embedded SUT, driven with curl:
#   - the web data per tile (Olio's 100 persons per web user, deterministic,
#     different per tile);
#   - every page carries its tb-page marker, references only assets that are
#     served with the right Content-Type and Content-Length, and keep-alive
#     reuses one connection;
#   - Login sets the tbsid cookie (session in Redis), AddEvent needs it (401
#     without), the new event is on the home page at once (the Redis cache is
#     invalidated), AddPerson stores a 50 KiB image part;
#   - /stats "requests" equals exactly the requests this test made;
#   - hostile input gets 4xx and the app stays up; nothing outside the
#     in-memory assets can be read;
#   - start errors exit non-zero with a clear message, SIGTERM exits 0, and
#     `sut down` stops the app processes; `sut up --web-users N` sizes the data.
source "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || fail "curl is not installed (scripts/install-deps installs it)"

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
INI="$T/sut/sut.ini"
PG=$(sed -n 's/^pg = //p' "$INI")
# the web data lives in its own database beside the OLTP one (sut/sut.c)
PG=${PG/dbname=tilebench /dbname=tilebench_web }
[[ "$PG" == *dbname=tilebench_web* ]] || fail "cannot derive the web database from pg = $PG"
REDIS=$(sed -n 's/^redis = //p' "$INI")
W1=$(sed -n 's/^web\.tile1 = //p' "$INI")
W2=$(sed -n 's/^web\.tile2 = //p' "$INI")
[[ "$W1" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'web.tile1 = http://127.0.0.1:PORT' in sut.ini, got '$W1'"
[[ "$W2" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'web.tile2 = http://127.0.0.1:PORT' in sut.ini, got '$W2'"
[ "$W1" != "$W2" ] || fail "tiles 1 and 2 share the web app $W1"
q() { psql "$PG" -XAtc "$1"; }
rcli() { redis-cli -h "${REDIS%:*}" -p "${REDIS##*:}" "$@"; }

# N counts every request this test sends to tile 1's app, except /stats and
# /healthz (which the app does not count either).
N=0
CODE=
# req CURL-ARGS...: one request to tile 1 (counted); body in $T/body,
# headers in $T/headers, status in $CODE.
req() {
    N=$((N + 1))
    curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' "$@" >"$T/code" || true
    CODE=$(cat "$T/code")
}
marker() { sed -n 's/.*<meta name="tb-page" content="\([A-Za-z]*\)">.*/\1/p' "$T/body" | head -1; }
stats() { curl -s "$W1/stats" | jq -r ".$1"; }

# 1. both apps answer, and /healthz and /stats are not counted
for w in "$W1" "$W2"; do
    expect "healthz of $w" "$(curl -s -o /dev/null -w '%{http_code}' "$w/healthz")" -eq 200
done
expect "requests before any page" "$(stats requests)" -eq 0

# 2. data: 100 persons per web user (default 10 users), per tile, deterministic
expect "tile 1 persons (100 x 10 users)" "$(q 'SELECT count(*) FROM web1.persons')" -eq 1000
expect "tile 2 persons" "$(q 'SELECT count(*) FROM web2.persons')" -eq 1000
expect "tile 1 events" "$(q 'SELECT count(*) FROM web1.events')" -eq 5000
expect "tags (fixed word list)" "$(q 'SELECT count(*) FROM web1.tags')" -eq 100
expect "user42's password is password42" "$(q "SELECT count(*) FROM web1.persons WHERE username = 'user42' AND password = 'password42'")" -eq 1
[ "$(q 'SELECT md5(string_agg(title, $$,$$ ORDER BY id)) FROM web1.events')" != \
  "$(q 'SELECT md5(string_agg(title, $$,$$ ORDER BY id)) FROM web2.events')" ] || fail "tiles 1 and 2 have the same events"
echo "ok: tiles 1 and 2 hold different events"

# 3. every page and its marker
req "$W1/"
expect "HomePage status" "$CODE" -eq 200
expect "HomePage marker" "$(marker)" = HomePage
cp "$T/body" "$T/home.html"
req "$W1/tags?tag=music"
expect "TagSearch status" "$CODE" -eq 200
expect "TagSearch marker" "$(marker)" = TagSearch
hits=$(grep -c 'href="/events/' "$T/body")
expect "TagSearch events (at most 125, Olio)" "$hits" -le 125
expect "TagSearch events (about 125 at 10 users)" "$hits" -ge 100
expect "TagSearch matches the database" "$hits" -eq "$(q "SELECT least(125, count(*)) FROM web1.event_tags et JOIN web1.tags t ON t.id = et.tag_id WHERE t.name = 'music'")"
req "$W1/tags?tag=nosuchtag"
expect "TagSearch of an unknown tag" "$CODE" -eq 200
expect "TagSearch of an unknown tag: no events" "$(grep -c 'href="/events/' "$T/body" || true)" -eq 0
req "$W1/events/42"
expect "EventDetail status" "$CODE" -eq 200
expect "EventDetail marker" "$(marker)" = EventDetail
title42=$(q 'SELECT title FROM web1.events WHERE id = 42')
grep -qF "$title42" "$T/body" || fail "EventDetail of event 42 does not show its title '$title42'"
expect "EventDetail attendees" "$(grep -o 'class="avatar"' "$T/body" | wc -l)" -eq "$(q 'SELECT count(*) FROM web1.attendees WHERE event_id = 42')"
req "$W1/persons/7"
expect "PersonDetail status" "$CODE" -eq 200
expect "PersonDetail marker" "$(marker)" = PersonDetail
grep -qF "$(q 'SELECT name FROM web1.persons WHERE id = 7')" "$T/body" || fail "PersonDetail does not show person 7's name"
req "$W1/events/99999999"
expect "missing event" "$CODE" -eq 404
req "$W1/persons/99999999"
expect "missing person" "$CODE" -eq 404
req "$W1/events/abc"
expect "event id that is not a number" "$CODE" -eq 404

# 4. the assets a page references: all served from memory, right type and length
mapfile -t assets < <(grep -oE '(href|src)="/static/[^"]*"' "$T/home.html" | sed 's/.*="\(.*\)"/\1/' | sort -u)
expect "distinct assets on the home page" "${#assets[@]}" -ge 10
for a in "${assets[@]}"; do
    req "$W1$a"
    [ "$CODE" = 200 ] || fail "asset $a: status $CODE"
    ct=$(sed -n 's/^[Cc]ontent-[Tt]ype: \([^;\r]*\).*/\1/p' "$T/headers")
    cl=$(sed -n 's/^[Cc]ontent-[Ll]ength: \([0-9]*\).*/\1/p' "$T/headers")
    case "$a" in
    *.css) want=text/css ;;
    *.js) want=application/javascript ;;
    *.png) want=image/png ;;
    *) want=unknown ;;
    esac
    [ "$ct" = "$want" ] || fail "asset $a: Content-Type '$ct', expected $want"
    [ "$cl" = "$(stat -c %s "$T/body")" ] || fail "asset $a: Content-Length $cl but $(stat -c %s "$T/body") bytes"
    if [ "$want" = image/png ]; then
        [ "$(head -c 8 "$T/body" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "asset $a is not a PNG"
    fi
done
echo "ok: ${#assets[@]} assets with the right Content-Type and Content-Length"
# keep-alive: three requests in one curl call share one connection
conns=$(curl -s -o /dev/null -o /dev/null -o /dev/null -w '%{num_connects}\n' "$W1/" "$W1/static/css/base.css" "$W1/events/1" | awk '{s += $1} END {print s}')
N=$((N + 3))
expect "connections for 3 keep-alive requests" "$conns" -eq 1

# 5. Login, AddEvent with and without the session, the home cache
req -d 'user=user5&password=wrong' "$W1/login"
expect "Login with a wrong password" "$CODE" -eq 403
expect "Login 403 page marker" "$(marker)" = Login
req -c "$T/jar" -d 'user=user5&password=password5' "$W1/login"
expect "Login status" "$CODE" -eq 200
expect "Login marker" "$(marker)" = Login
grep -qiE '^set-cookie: tbsid=[0-9a-f]{32}; Path=/; HttpOnly' "$T/headers" || fail "Login: no tbsid cookie in $(cat "$T/headers")"
sid=$(sed -n 's/^[Ss]et-[Cc]ookie: tbsid=\([0-9a-f]*\);.*/\1/p' "$T/headers")
expect "session in Redis holds person 5" "$(rcli GET "web1:sess:$sid")" -eq 5
ttl=$(rcli TTL "web1:sess:$sid")
expect "session TTL set" "$ttl" -gt 0
req "$W1/"
expect "home page cached in Redis" "$(rcli EXISTS web1:home)" -eq 1
today=$(date -u +%F)
title="Webapp test <b>$RANDOM</b> & co"
events0=$(q 'SELECT count(*) FROM web1.events')
req --data-urlencode "title=$title" --data-urlencode 'description=a test event' -d "date=$today" -d 'tags=music,jazz' "$W1/events"
expect "AddEvent without a session" "$CODE" -eq 401
expect "AddEvent 401 page marker" "$(marker)" = AddEvent
req -b "tbsid=0123456789abcdef0123456789abcdef" --data-urlencode "title=$title" -d "date=$today" "$W1/events"
expect "AddEvent with an unknown session" "$CODE" -eq 401
expect "no event added without a session" "$(q 'SELECT count(*) FROM web1.events')" -eq "$events0"
req -b "$T/jar" --data-urlencode "title=$title" --data-urlencode 'description=a test event' -d "date=$today" -d 'tags=music,jazz' "$W1/events"
expect "AddEvent with the session" "$CODE" -eq 200
expect "AddEvent marker" "$(marker)" = AddEvent
expect "event stored" "$(q 'SELECT count(*) FROM web1.events')" -eq $((events0 + 1))
newid=$(q 'SELECT max(id) FROM web1.events')
expect "event submitter = the logged-in person" "$(q "SELECT submitter FROM web1.events WHERE id = $newid")" -eq 5
expect "event tags" "$(q "SELECT string_agg(t.name, ',' ORDER BY t.name) FROM web1.event_tags et JOIN web1.tags t ON t.id = et.tag_id WHERE et.event_id = $newid")" = "jazz,music"
expect "home cache dropped by AddEvent" "$(rcli EXISTS web1:home)" -eq 0
escaped=$(sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' <<<"$title")
req "$W1/"
grep -qF "href=\"/events/$newid\">$escaped</a>" "$T/body" || fail "the new event $newid is not on the home page (escaped: $escaped)"
grep -qF "<b>" "$T/body" && fail "the home page carries the raw title markup"
echo "ok: the new event is on the home page, escaped"
req -b "$T/jar" --data-urlencode "title=x" -d "date=2026-02-31" "$W1/events"
expect "AddEvent with a date that does not exist" "$CODE" -eq 400
req -b "$T/jar" --data-urlencode "title=x" -d "date=tomorrow" "$W1/events"
expect "AddEvent with a malformed date" "$CODE" -eq 400

# 6. AddPerson: multipart with a 50 KiB image part, stored in PostgreSQL
head -c 51200 /dev/urandom >"$T/image.jpg"
persons0=$(q 'SELECT count(*) FROM web1.persons')
req -F 'name=Test <Person>' -F 'email=test@example.com' -F 'password=pw' -F "image=@$T/image.jpg;type=image/jpeg" "$W1/persons"
expect "AddPerson status" "$CODE" -eq 200
expect "AddPerson marker" "$(marker)" = AddPerson
expect "person stored" "$(q 'SELECT count(*) FROM web1.persons')" -eq $((persons0 + 1))
expect "image bytes stored" "$(q "SELECT length(image) FROM web1.persons WHERE id = (SELECT max(id) FROM web1.persons)")" -eq 51200
expect "image stored unchanged" "$(q "SELECT md5(image) FROM web1.persons WHERE id = (SELECT max(id) FROM web1.persons)")" = "$(md5sum "$T/image.jpg" | cut -d' ' -f1)"
expect "image type stored" "$(q "SELECT image_type FROM web1.persons WHERE id = (SELECT max(id) FROM web1.persons)")" = image/jpeg
req -F 'name=No Email' "$W1/persons"
expect "AddPerson without the required fields" "$CODE" -eq 400

# 7. concurrent requests on keep-alive connections: all served and counted
seq 1 200 | sed "s|.*|url = \"$W1/events/&\"\noutput = /dev/null|" >"$T/many.curl"
ok=$(curl -s --parallel --parallel-max 8 -K "$T/many.curl" -w '%{http_code}\n' | grep -c '^200$')
N=$((N + 200))
expect "200 event pages in parallel" "$ok" -eq 200

# 8. the app's counter equals the requests this test made
expect "/stats requests = requests made" "$(stats requests)" -eq "$N"
expect "/stats EventDetail pages" "$(stats pages.EventDetail)" -ge 201

# 9. hostile input: 4xx, nothing leaks, the app stays up
PORT1=${W1##*:}
trap '' PIPE
# raw PORT TEXT: the status line the server answers to TEXT sent as is
raw() {
    local line=""
    exec 5<>"/dev/tcp/127.0.0.1/$1" || return 0
    # The server may answer and close before it has read everything: the
    # write then fails with EPIPE (SIGPIPE is ignored), which is fine.
    printf '%b' "$2" >&5 2>/dev/null || true
    IFS= read -r -t 5 line <&5 || true
    exec 5<&-
    echo "${line%$'\r'}"
}
# raw_4xx DESCRIPTION TEXT: TEXT sent as is must get a 4xx status line
raw_4xx() {
    local st
    st=$(raw "$PORT1" "$2") || true
    [[ "$st" =~ ^HTTP/1\.[01]\ 4[0-9][0-9] ]] || fail "$1: expected a 4xx, got '$st'"
    echo "ok: $1: $st"
}
raw_4xx "garbage request line" 'NOT AN HTTP-REQUEST\r\n\r\n'
raw_4xx "control bytes as request line" '\x01\x02\x03 \x04 \x05\r\n\r\n'
raw_4xx "unknown HTTP version" 'GET / FOO/9\r\nHost: x\r\n\r\n'
raw_4xx "HTTP/1.1 without Host" 'GET / HTTP/1.1\r\n\r\n'
raw_4xx "header line without a colon" 'GET / HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n'
raw_4xx "bad Content-Length" 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: abc\r\n\r\n'
raw_4xx "negative Content-Length" 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n'
raw_4xx "Content-Length beyond 64 bits" 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n'
raw_4xx "malformed chunk" 'POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'
N=$((N + 1)) # its request line and headers were well formed: it reached the app, which counts it
# A request line of one token gets no status line from libmicrohttpd 0.9.75:
# it closes the connection at once. It must not answer anything else.
st=$(raw "$PORT1" 'GARBAGE\r\n\r\n') || true
[ -z "$st" ] || [[ "$st" =~ ^HTTP/1\.[01]\ 4[0-9][0-9] ]] || fail "one-token request line: got '$st'"
echo "ok: one-token request line: '${st:-connection closed}'"
big=$(head -c 100000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$W1/" || true)
[[ "$code" =~ ^4[0-9][0-9]$ ]] || fail "a 100 kB header: expected a 4xx, got '$code'"
echo "ok: a 100 kB header: $code"
head -c $((2 * 1024 * 1024)) /dev/zero >"$T/big.bin"
req -H 'Content-Type: application/x-www-form-urlencoded' --data-binary "@$T/big.bin" "$W1/login"
expect "2 MiB body" "$CODE" -eq 413
req -F 'name=x' -F 'email=y' -F 'password=z' -F "image=@$T/big.bin;type=image/png" "$W1/persons"
expect "2 MiB image part" "$CODE" -eq 413
head -c $((700 * 1024)) /dev/zero >"$T/700k.bin"
req -F 'name=x' -F 'email=y' -F 'password=z' -F "image=@$T/700k.bin;type=image/png" "$W1/persons"
expect "700 KiB image part (over the 512 KiB image cap, under the body cap)" "$CODE" -eq 413
expect "no person added by the refused uploads" "$(q 'SELECT count(*) FROM web1.persons')" -eq $((persons0 + 1))
req -X DELETE "$W1/"
expect "DELETE /" "$CODE" -eq 405
grep -qi '^allow: GET, HEAD' "$T/headers" || fail "405 without 'Allow: GET, HEAD'"
req "$W1/login"
expect "GET /login" "$CODE" -eq 405
req -X PUT -d x=1 "$W1/events"
expect "PUT /events" "$CODE" -eq 405
req -H 'Content-Type: text/plain' -d 'hello' "$W1/login"
expect "a POST body that is not a form" "$CODE" -eq 400
req -H 'Content-Type: multipart/form-data; boundary=zz' --data-binary $'--zz\r\nbroken' "$W1/persons"
[[ "$CODE" =~ ^4[0-9][0-9]$ ]] || fail "a broken multipart body: expected a 4xx, got $CODE"
echo "ok: broken multipart body: $CODE"
for p in '/static/../../etc/passwd' '/static/%2e%2e/%2e%2e/etc/passwd' '/static/..%2f..%2fetc%2fpasswd' \
    '/static/%252e%252e/etc/passwd' '/static/css/../../../../etc/passwd' '/static/' '/static/css/base.css/' \
    '/../../etc/passwd' '/%2e%2e/%2e%2e/etc/passwd'; do
    req --path-as-is "$W1$p"
    [[ "$CODE" =~ ^4[0-9][0-9]$ ]] || fail "$p: expected a 4xx, got $CODE"
    grep -q 'root:' "$T/body" && fail "$p: the answer holds /etc/passwd"
    echo "ok: $p -> $CODE"
done
req "$W1/tags?tag=%3Cscript%3E"
expect "TagSearch with markup in the tag" "$CODE" -eq 400
grep -q '<script>' "$T/body" && fail "the tag came back unescaped"
expect "healthz after the hostile input" "$(curl -s -o /dev/null -w '%{http_code}' "$W1/healthz")" -eq 200
expect "/stats requests = requests made (those libmicrohttpd refuses never reach the app)" "$(stats requests)" -eq "$N"
expect "/stats 5xx responses" "$(stats responses_5xx)" -eq 0

# 10. tile 2 is untouched by tile 1's work and counted on its own
expect "tile 2 requests" "$(curl -s "$W2/stats" | jq .requests)" -eq 0
expect "tile 2 events" "$(q 'SELECT count(*) FROM web2.events')" -eq 5000

# 11. the hidden subcommand: help, errors at start, clean exit on SIGTERM
"$TILEBENCH" --help | grep -q webapp && fail "webapp is listed in the main help"
"$TILEBENCH" webapp --help | grep -q -- '--listen HOST:PORT' || fail "tilebench webapp --help lacks --listen"
rc=0; "$TILEBENCH" webapp --listen 127.0.0.1:1 >"$T/w.out" 2>&1 || rc=$?
expect "webapp without --pg (usage)" "$rc" -eq 2
rc=0; "$TILEBENCH" webapp --listen 127.0.0.1:0 --pg "$PG" --tile 1 --redis "$REDIS" >"$T/w.out" 2>&1 || rc=$?
expect "webapp --listen port 0 (usage)" "$rc" -eq 2
free_port() { local p; for _ in $(seq 50); do p=$((20000 + RANDOM % 30000)); (exec 6<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }; done; fail "no free port"; }
P=$(free_port)
rc=0; "$TILEBENCH" webapp --listen "127.0.0.1:$P" --pg "$PG" --tile 9 --redis "$REDIS" >"$T/w.out" 2>&1 || rc=$?
expect "webapp for a tile without data" "$rc" -eq 3
grep -q 'schema web9 is missing or not loaded' "$T/w.out" || fail "no clear message for a missing schema: $(cat "$T/w.out")"
rc=0; "$TILEBENCH" webapp --listen "127.0.0.1:$P" --pg "host=127.0.0.1 port=1 dbname=x" --tile 1 --redis "$REDIS" >"$T/w.out" 2>&1 || rc=$?
expect "webapp without a database" "$rc" -eq 3
grep -q 'PostgreSQL' "$T/w.out" || fail "no clear message when PostgreSQL is unreachable: $(cat "$T/w.out")"
rc=0; "$TILEBENCH" webapp --listen "127.0.0.1:$PORT1" --pg "$PG" --tile 1 --redis "$REDIS" >"$T/w.out" 2>&1 || rc=$?
expect "webapp on a port in use" "$rc" -eq 3
grep -q 'Address already in use' "$T/w.out" || fail "no clear message for a port in use: $(cat "$T/w.out")"
"$TILEBENCH" webapp --listen "127.0.0.1:$P" --pg "$PG" --tile 2 --redis "$REDIS" --threads 2 >"$T/w.out" 2>&1 &
wpid=$!
at_exit "kill $wpid 2>/dev/null"
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$P/healthz" && break; sleep 0.1; done
expect "hand-started webapp answers" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/events/1")" -eq 200
kill -TERM "$wpid"
rc=0; wait "$wpid" || rc=$?
expect "webapp exit status after SIGTERM" "$rc" -eq 0

# 12. sut down stops the app processes
status=$("$TILEBENCH" sut status --dir "$T/sut") || fail "sut status: $status"
webpids=$(awk '/^web\.tile/ {for (i = 1; i < NF; i++) if ($i == "pid") print $(i + 1)}' <<<"$status")
expect "web app pids" "$(wc -w <<<"$webpids")" -eq 2
"$TILEBENCH" sut down --dir "$T/sut" >/dev/null || fail "sut down failed"
for p in $webpids; do
    # A stopped process may linger as a zombie until init reaps it; that is gone.
    state=$(ps -o stat= -p "$p" 2>/dev/null || true)
    [[ -z "$state" || "$state" == Z* ]] || fail "web app pid $p still runs after sut down ('$state')"
done
curl -s -o /dev/null "$W1/healthz" && fail "tile 1's web app still answers after sut down"
echo "ok: web app pids $(echo $webpids) gone"

# 13. --web-users sizes the data (100 persons per user); a loaded tile of
# another size is reloaded when the SUT comes up again in the same folder
rc=0; "$TILEBENCH" sut up --web-users 0 --dir "$T/sut" >"$T/wu.out" 2>&1 || rc=$?
expect "sut up --web-users 0" "$rc" -eq 2
grep -q -- '--web-users' "$T/wu.out" || fail "--web-users 0: the message does not name the option: $(cat "$T/wu.out")"
rc=0; "$TILEBENCH" sut status --web-users 3 --dir "$T/sut" >"$T/wu.out" 2>&1 || rc=$?
expect "sut status --web-users" "$rc" -eq 2
"$TILEBENCH" sut up --tiles 1 --web-users 3 --dir "$T/sut" >"$T/sut-up3.log" 2>&1 || fail "sut up --web-users 3: $(cat "$T/sut-up3.log")"
PG=$(sed -n 's/^pg = //p' "$T/sut/sut.ini")
PG=${PG/dbname=tilebench /dbname=tilebench_web }
W1=$(sed -n 's/^web\.tile1 = //p' "$T/sut/sut.ini")
expect "persons at 3 web users" "$(q 'SELECT count(*) FROM web1.persons')" -eq 300
expect "events at 3 web users" "$(q 'SELECT count(*) FROM web1.events')" -eq 1500
expect "one web app for one tile" "$(grep -c '^web\.tile' "$T/sut/sut.ini")" -eq 1
req "$W1/persons/300"
expect "person 300 at 3 web users" "$CODE" -eq 200
req "$W1/persons/301"
expect "person 301 at 3 web users" "$CODE" -eq 404
"$TILEBENCH" sut down --dir "$T/sut" >/dev/null || fail "sut down failed"

echo "PASS"
