#!/usr/bin/env bash
# test_http.sh: the generic http workload against a real nginx on loopback
# (own config, pid and logs in the test's folder). nginx's access log is the
# server-side count:
#   1. two weighted URLs: requests in the access log = the client's GETs (the
#      only slack: one request per user in flight when the level stops), both
#      URLs drawn, one keep-alive connection per user, no errors;
#   2. a server that closes every connection after 5 requests (Connection:
#      close): the client reconnects, counts still agree, no errors;
#   3. `expect` text missing from the page: every op is an error (content),
#      while nginx served them all with 200;
#   4. a 404 URL: every op is an error (server), nginx logged 404s;
#   5. cycle_time is an open loop on a fixed grid of intended starts;
#   6. a bad URL is a configuration error (exit 2) naming the key;
#   7. max rate (think_time = 0, coarse timers): counts agree, no errors, the
#      stall probe reported;
#   8. a server that never answers: every op is a timeout, none early;
#   9. responses larger than the client's read buffer (64 KiB) at max rate:
#      none waits for its timeout (the read event is edge-triggered);
#  10. a body delimited by the server's close, its close arriving with it:
#      each ends at the close, none waits for its timeout;
#  11. a server that resets the connection in the middle of a response: each
#      request fails at once (I/O), none waits for its timeout.
source "$(dirname "$0")/lib.sh"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || fail "nginx is not installed (scripts/install-deps installs nginx-light)"

# a loopback port no socket uses (ss from iproute2), below the kernel's
# ephemeral range so that no outgoing connection takes it meanwhile
free_port() {
    local p lo
    lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
    while :; do
        p=$((10000 + RANDOM % (lo - 10000)))
        [ "$p" != "${1:-}" ] && ! ss -Htan "sport = :$p" | grep -q . && { echo "$p"; return; }
    done
}
P1=$(free_port)
P2=$(free_port "$P1")
mkdir -p "$T/www" "$T/nginx-tmp"
echo "<html><body>hello from tilebench's static page</body></html>" >"$T/www/index.html"
echo "<html><body>the other page</body></html>" >"$T/www/other.html"
cat >"$T/nginx.conf" <<EOF
worker_processes 1;
pid $T/nginx.pid;
error_log $T/nginx-error.log warn;
events { worker_connections 1024; }
http {
    log_format tb '\$server_port \$connection \$status \$request_uri';
    client_body_temp_path $T/nginx-tmp; proxy_temp_path $T/nginx-tmp; fastcgi_temp_path $T/nginx-tmp;
    uwsgi_temp_path $T/nginx-tmp; scgi_temp_path $T/nginx-tmp;
    keepalive_requests 100000;
    server { listen 127.0.0.1:$P1; root $T/www; access_log $T/access.log tb; }
    server { listen 127.0.0.1:$P2; root $T/www; access_log $T/access.log tb; keepalive_requests 5; }
}
EOF
"$NGINX" -c "$T/nginx.conf" -e "$T/nginx-error.log" >"$T/nginx-start.log" 2>&1 || fail "nginx did not start: $(cat "$T/nginx-start.log" "$T/nginx-error.log" 2>/dev/null)"
at_exit '[ -f "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid")"'
for _ in $(seq 200); do [ -s "$T/nginx.pid" ] && break; sleep 0.1; done
[ -s "$T/nginx.pid" ] || fail "nginx wrote no pid file"

USERS=4
tile() { # name, then http keys
    printf '[tile]\nname = http\n[workload.web1]\nkind = http\nusers = %d\nthink_time = 5ms\nthink_dist = uniform\n' "$USERS"
    printf 'timeout = 2s\nunit = ops/s\nreference = 1\n'
    printf '%s\n' "$@"
    # a [sut] section: the servers exist already, so `run` starts no embedded SUT
    printf '[sut]\nweb = http://127.0.0.1:%d\n' "$P1"
}
# run INI: one 3 s level, report in $T/r.json; the access log starts empty
run() {
    : >"$T/access.log"
    kill -USR1 "$(cat "$T/nginx.pid")" # reopen the log
    sleep 0.2
    "$TILEBENCH" run --config "$1" --tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 --idle 0 --quiet \
        --meter estimate: --db "$T/r.db" >"$T/run.log" 2>&1 || fail "run exited $?: $(cat "$T/run.log")"
    sleep 0.3 # nginx writes a line once the response has gone out
    "$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
}
get() { jq "[.run.levels[0].workloads[].operations[] | select(.name==\"GET\") | .$1] | add" "$T/r.json"; }
lines() { grep -c "${1:-}" "$T/access.log" || true; }

# 1. weighted URLs, counts, keep-alive
tile "urls = http://127.0.0.1:$P1/index.html=3 http://127.0.0.1:$P1/other.html=1" >"$T/t1.ini"
run "$T/t1.ini"
client=$(get count_all)
server=$(lines)
echo "1: client $client GETs, nginx $server requests"
expect "client GETs" "$client" -gt 200
expect "nginx requests - client GETs (>= 0)" $((server - client)) -ge 0
expect "nginx requests - client GETs (<= $USERS users in flight at stop)" $((server - client)) -le $USERS
expect "steady-state errors" "$(get errors)" -eq 0
other=$(lines ' /other.html$')
expect "other.html drawn (weight 1 of 4): share % above 10" $((other * 100 / server)) -gt 10
expect "other.html drawn (weight 1 of 4): share % below 40" $((other * 100 / server)) -lt 40
expect "all 200" "$(lines ' 200 ')" -eq "$server"
expect "keep-alive: one connection per user" "$(awk '{print $2}' "$T/access.log" | sort -u | wc -l)" -eq $USERS

# 2. the server closes each connection after 5 requests: the client reconnects
tile "urls = http://127.0.0.1:$P2/index.html=1" >"$T/t2.ini"
run "$T/t2.ini"
client=$(get count_all)
server=$(lines)
conns=$(awk '{print $2}' "$T/access.log" | sort -u | wc -l)
echo "2: client $client GETs, nginx $server requests on $conns connections"
expect "client GETs" "$client" -gt 200
expect "nginx requests - client GETs (>= 0)" $((server - client)) -ge 0
expect "nginx requests - client GETs (<= $USERS in flight)" $((server - client)) -le $USERS
expect "no errors across reconnects" "$(get errors)" -eq 0
expect "a new connection every 5 requests" "$conns" -ge $((server / 5))

# 3. expect text missing: content errors on 200 responses
tile "urls = http://127.0.0.1:$P1/other.html=1" "expect = hello from tilebench" >"$T/t3.ini"
run "$T/t3.ini"
echo "3: $(get errors) errors, $(get count_all) good; nginx $(lines) requests, $(lines ' 200 ') with 200"
expect "content mismatch: no good op" "$(get count_all)" -eq 0
expect "content mismatch: errors" "$(get errors)" -gt 50
expect "nginx served them with 200" "$(lines ' 200 ')" -ge "$(get errors)"
expect "and only 200" "$(lines ' 200 ')" -eq "$(lines)"
# the same page with text it holds passes
tile "urls = http://127.0.0.1:$P1/index.html=1" "expect = hello from tilebench" >"$T/t3b.ini"
run "$T/t3b.ini"
expect "expect text present: no errors" "$(get errors)" -eq 0
expect "expect text present: good ops" "$(get count_all)" -gt 50

# 4. a 404 URL: server errors
tile "urls = http://127.0.0.1:$P1/missing.html=1" >"$T/t4.ini"
run "$T/t4.ini"
echo "4: $(get errors) errors; nginx $(lines ' 404 ') 404s"
expect "404: no good op" "$(get count_all)" -eq 0
expect "404: errors" "$(get errors)" -gt 50
expect "nginx answered 404" "$(lines ' 404 ')" -ge "$(get errors)"

# 5. open loop: cycle_time = 100 ms makes each user's requests due on a fixed
#    100 ms grid (the driver's intended starts), so the 3 s steady state holds
#    30 or 31 due requests per user however fast the server is; one still in
#    flight at the end of steady state is left out (Faban's rule)
tile "urls = http://127.0.0.1:$P1/index.html=1" | sed 's/^think_time = .*/cycle_time = 100ms/; s/^think_dist = .*/think_dist = fixed/' >"$T/t6.ini"
run "$T/t6.ini"
steady=$(get count)
echo "5: $steady GETs in 3 s of steady state from $USERS users on a 100 ms grid"
expect "open loop: at most 31 due requests per user" "$steady" -le $((USERS * 31))
expect "open loop: the grid's requests were sent (half of them, even on a busy machine)" "$steady" -ge $((USERS * 15))
expect "open loop: no errors" "$(get errors)" -eq 0

# 7. max rate (think_time = 0): the loops run on coarse timers (loadgen/worker.c,
#    needs_precise_timers); counts still agree with nginx, no errors, and the
#    stall probe (its own periodic timerfd) reported the phase
tile "urls = http://127.0.0.1:$P1/index.html=1" | sed 's/^think_time = .*/think_time = 0/; s/^think_dist = .*/think_dist = fixed/' >"$T/t7.ini"
run "$T/t7.ini"
client=$(get count_all)
server=$(lines)
echo "7: max rate: client $client GETs, nginx $server requests"
expect "max rate: client GETs" "$client" -gt 1000
expect "max rate: nginx requests - client GETs (>= 0)" $((server - client)) -ge 0
expect "max rate: nginx requests - client GETs (<= $USERS in flight)" $((server - client)) -le $USERS
expect "max rate: no errors" "$(get errors)" -eq 0
expect "max rate: keep-alive, one connection per user" "$(awk '{print $2}' "$T/access.log" | sort -u | wc -l)" -eq $USERS
expect "max rate: the stall probe reported the phase" \
    "$(jq '[.run.events[].message | select(test("loop stall max [0-9.]+ ms, p99 [0-9.]+ ms"))] | length' "$T/r.json")" -ge 1

# 8. a server that accepts connections and never answers: every op times out
#    (timeout = 300 ms; the driver arms its timeout timer lazily and re-arms it
#    for the op in flight), never before its 300 ms are up, so the 3 s steady
#    state holds at most 11 timeouts per user; and at least one each
P3=$(free_port "$P1")
python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    held.append(s.accept()[0])
' "$P3" &
SILENT=$!
at_exit "kill $SILENT"
for _ in $(seq 200); do ss -Htln "sport = :$P3" | grep -q . && break; sleep 0.1; done
tile "urls = http://127.0.0.1:$P3/index.html=1" | sed 's/^timeout = .*/timeout = 300ms/' >"$T/t8.ini"
run "$T/t8.ini"
errors=$(get errors)
echo "8: silent server: $(get count_all) good ops, $errors errors (timeouts) in steady state"
expect "silent server: no good op" "$(get count_all)" -eq 0
expect "silent server: a timeout per user at least" "$errors" -ge $USERS
expect "silent server: no timeout before its 300 ms" "$errors" -le $((USERS * 11))

# 9. a 300 kB page at max rate from 50 users on one worker: the connection's
#    read event is edge-triggered, so a read that fills the 64 KiB buffer must be
#    followed by another (loadgen/http_client.c, on_readable's return), or a
#    response that has arrived whole waits for its timeout; nginx logs them all
head -c 300000 /dev/zero | tr '\0' 'x' >"$T/www/big.html"
USERS=50
tile "urls = http://127.0.0.1:$P1/big.html=1" | sed 's/^think_time = .*/think_time = 0/; s/^think_dist = .*/think_dist = fixed/; s/^timeout = .*/timeout = 1s/' >"$T/t9.ini"
run "$T/t9.ini"
client=$(get count_all)
echo "9: 300 kB page: client $client GETs, $(get errors) errors; nginx $(lines ' 200 ') with 200"
expect "300 kB page: client GETs" "$client" -gt 200
expect "300 kB page: no error or timeout" "$(get errors)" -eq 0
expect "300 kB page: nginx served each (>= client GETs)" "$(lines ' 200 ')" -ge "$client"
USERS=4

# one_shot_server PORT close|reset: a server on PORT that reads each request and
#   answers it on its own connection, then ends that connection. close: a 200
#   whose body ends at the close (no Content-Length). reset: the first 1000 of
#   100000 promised body bytes, then a reset (SO_LINGER 0). Stopped at exit.
one_shot_server() {
    python3 -c '
import socket, struct, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
reset = sys.argv[2] == "reset"
while True:
    c = s.accept()[0]
    req = b""
    while b"\r\n\r\n" not in req:
        d = c.recv(4096)
        if not d:
            break
        req += d
    if req and reset:
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000)
    elif req:
        c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello from a close-delimited body")
    if reset:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
' "$1" "$2" &
    at_exit "kill $!"
}

# 10. a server that ends each body by closing the connection (no Content-Length):
#     the close often arrives with the body, in one report of the edge-triggered
#     event; the client must read on to the end (EV_CLOSED) and take the body as
#     complete there, not wait for an edge that never comes (its 1 s timeout)
P4=$(free_port "$P1")
one_shot_server "$P4" close
for _ in $(seq 200); do ss -Htln "sport = :$P4" | grep -q . && break; sleep 0.1; done
tile "urls = http://127.0.0.1:$P4/index.html=1" "expect = close-delimited body" |
    sed 's/^think_time = .*/think_time = 0/; s/^think_dist = .*/think_dist = fixed/; s/^timeout = .*/timeout = 1s/' >"$T/t10.ini"
run "$T/t10.ini"
echo "10: close-delimited bodies: $(get count_all) good GETs, $(get errors) errors"
expect "close-delimited bodies: good GETs" "$(get count_all)" -gt 200
expect "close-delimited bodies: no error or timeout" "$(get errors)" -eq 0

# 11. a server that sends part of a response and then resets the connection
#     (SO_LINGER 0): the reset, queued behind the bytes, raises no edge of its own
#     and no EV_CLOSED, so the client reads on until the socket is empty and meets
#     it there. Every request then fails at once, many per user in 3 s; waiting
#     for the 5 s timeout instead would leave one per user at most.
P5=$(free_port "$P1")
one_shot_server "$P5" reset
for _ in $(seq 200); do ss -Htln "sport = :$P5" | grep -q . && break; sleep 0.1; done
tile "urls = http://127.0.0.1:$P5/index.html=1" |
    sed 's/^think_time = .*/think_time = 0/; s/^think_dist = .*/think_dist = fixed/; s/^timeout = .*/timeout = 5s/' >"$T/t11.ini"
run "$T/t11.ini"
echo "11: reset mid-response: $(get count_all) good GETs, $(get errors) errors"
expect "reset mid-response: no good GET" "$(get count_all)" -eq 0
expect "reset mid-response: each request fails at once (many errors, not one timeout per user)" "$(get errors)" -gt $((USERS * 10))

# 6. a bad key and a bad URL are configuration errors (exit 2) naming the key
tile "urls = ftp://127.0.0.1/x=1" >"$T/t5.ini"
rc=0
"$TILEBENCH" run --config "$T/t5.ini" --tiles 1 --quiet --db "$T/r.db" >"$T/run5.log" 2>&1 || rc=$?
expect "bad URL exit code" "$rc" -eq 2
grep -q "urls: url 'ftp://127.0.0.1/x': only http:// URLs" "$T/run5.log" || fail "bad URL message: $(cat "$T/run5.log")"
echo "PASS test_http"
