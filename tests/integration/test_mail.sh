#!/usr/bin/env bash
# test_mail.sh: the mail workload against the embedded SUT's real Dovecot.
# Starts `tilebench sut up` (Dovecot IMAP + LMTP on free loopback ports), runs
# a short 1..2 tile sweep with a tile file holding only the standard tile's
# [workload.mail] and [qos.mail] sections plus sut.ini, and checks:
#  - the report: every mail action ran, no errors;
#  - the server agrees, op by op: Dovecot's log counts the deliveries it
#    saved and the messages each session expunged, and the maildirs (new/ +
#    cur/) give the appends; each equals the client's Send, Expunge and
#    Append count, up to the sessions Dovecot saw in flight when a level's
#    stop cut them (usually none);
#  - an independent IMAP client (Python's imaplib) finds the same number of
#    messages over IMAP, and every one's body matches its X-Tilebench-Checksum;
#  - Dovecot logged no error;
#  - against a faulty peer (garbage replies, a connection closed mid-literal)
#    the run completes and the errors are counted.
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || fail "python3 not found: it is the independent IMAP client of this test"

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
INI="$T/sut/sut.ini"
IMAP=$(sed -n 's/^imap = //p' "$INI")
LMTP=$(sed -n 's/^lmtp = //p' "$INI")
[[ "$IMAP" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'imap = 127.0.0.1:PORT' in sut.ini, got '$IMAP'"
[[ "$LMTP" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "expected 'lmtp = 127.0.0.1:PORT' in sut.ini, got '$LMTP'"
PWFILE=$(sed -n 's/^mail_password_file = //p' "$INI")
[[ -s "$PWFILE" ]] || fail "mail_password_file '$PWFILE' is missing or empty"
grep -q "$(cat "$PWFILE")" "$INI" && fail "sut.ini holds the mail password itself"
echo "ok: dovecot imap $IMAP, lmtp $LMTP"

{
    printf '[tile]\nname = mail-it\n\n'
    awk '/^\[/ { keep = ($0 == "[workload.mail]" || $0 == "[qos.mail]") } keep' "$TB_SOURCE_DIR/tiles/standard.ini"
    cat "$INI"
} >"$T/tile.ini"
grep -q '^kind = mail' "$T/tile.ini" || fail "no [workload.mail] section found in tiles/standard.ini"
USERS=$(awk '/^\[workload.mail\]/ { m = 1; next } /^\[/ { m = 0 } m && /^users *=/ { print $3 }' "$T/tile.ini")

"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 --ramp-up 2s --warm-up 1s --steady 8s --ramp-down 1s \
    --idle 1s --db "$T/results.db" --label "it mail" --quiet >"$T/run.log" 2>&1 || fail "run exited $?: $(cat "$T/run.log")"
"$TILEBENCH" report latest --db "$T/results.db" --format json >"$T/report.json"
J="$T/report.json"

expect "run status" "$(jq -r .run.status "$J")" = complete
expect "levels" "$(jq '.run.levels | length' "$J")" -eq 2
for i in 0 1; do
    expect "level $i mail ops" "$(jq "[.run.levels[$i].workloads[] | select(.name==\"mail\") | .ops] | add" "$J")" -gt 0
    expect "level $i mail errors" "$(jq "[.run.levels[$i].workloads[] | select(.name==\"mail\") | .errors] | add" "$J")" -eq 0
    expect "level $i mail QoS rules" "$(jq "[.run.levels[$i].qos[] | select(.rule | startswith(\"mail.\"))] | length" "$J")" -ge 8
done
count_all() { # op
    jq "[.run.levels[].workloads[] | select(.name==\"mail\") | .operations[] | select(.name==\"$1\") | .count_all] | add // 0" "$J"
}
errors_all() {
    jq '[.run.levels[].workloads[] | select(.name=="mail") | .operations[].errors] | add // 0' "$J"
}
for op in Send Login Select FetchHeaders FetchBody Store Append Search; do
    expect "client $op count over the run" "$(count_all $op)" -gt 0
done
expect "client mail errors in steady state" "$(errors_all)" -eq 0
# Every user logs in once per level (sessions are 3 minutes): 1 tile + 2 tiles.
expect "client logins = users x (1 + 2) tiles" "$(count_all Login)" -eq $((USERS * 3))

sent=$(count_all Send)
appended=$(count_all Append)
expunged=$(count_all Expunge)
client=$((sent + appended - expunged))
# Dovecot's own log, per op: each LMTP delivery it saved ("saved mail to
# INBOX"), and each IMAP session's end with its expunged=N count; a session
# the level's stop cut says "Connection closed (CMD finished N secs ago)", or
# "CMD running for" / "Disconnected in CMD" when that user had a command in
# flight. Wait until every session of the run has ended in the log: one IMAP
# session per user per level (1 tile + 2 tiles), every LMTP connect closed.
DLOG="$T/sut/dovecot.log"
imap_cut() { grep -c 'imap(.*Disconnected: Connection closed\|imap(.*Disconnected in ' "$DLOG" || true; }
lmtp_open() { echo $(($(grep -c 'lmtp(.*Connect from ' "$DLOG" || true) - $(grep -c 'lmtp(.*Disconnect from ' "$DLOG" || true))); }
lmtp_ended() { [ "$(lmtp_open)" -eq 0 ]; }
sessions_ended() { [ "$(imap_cut)" -ge $((USERS * 3)) ] && [ "$(lmtp_open)" -eq 0 ]; }
wait_for "Dovecot logged the end of every session of the run" 30 sessions_ended # 10 s was once too short under ASan, two tests at a time
cp "$DLOG" "$T/dovecot-run.log"
files=$(find "$T/sut/mail" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l)
echo "client: $sent sent + $appended appended - $expunged expunged = $client; maildirs hold $files"
expect "IMAP sessions the level stops cut (users x (1 + 2) tiles)" "$(imap_cut)" -eq $((USERS * 3))
saved=$(grep -c ': saved mail to INBOX$' "$T/dovecot-run.log" || true)
srv_expunged=$(sed -n 's/.*imap(.*Disconnected.* expunged=\([0-9]*\) .*/\1/p' "$T/dovecot-run.log" | awk '{ s += $1 } END { print s + 0 }')
srv_appended=$((files - saved + srv_expunged))
# in flight at a stop, as Dovecot saw it: an LMTP session closed before QUIT;
# an IMAP command running, or a UID STORE just done (an Expunge's first step:
# its \Deleted message goes with the next session's EXPUNGE)
lmtp_cut=$(grep -c 'lmtp(.*Disconnect from .*: Connection closed' "$T/dovecot-run.log" || true)
imap_busy=$(grep 'imap(.*Disconnected' "$T/dovecot-run.log" | grep -c 'running for\|Disconnected in \|(UID STORE finished' || true)
echo "dovecot: $saved saved, $srv_appended appended (maildirs - saved + expunged), $srv_expunged expunged;" \
    "in flight at the stops: $lmtp_cut LMTP sessions, $imap_busy IMAP commands"
expect "Dovecot's deliveries - client Sends (>= 0)" $((saved - sent)) -ge 0
expect "Dovecot's deliveries - client Sends (<= LMTP sessions in flight at the stops)" $((saved - sent)) -le "$lmtp_cut"
expect "Dovecot's expunged - client Expunges (>= 0)" $((srv_expunged - expunged)) -ge 0
expect "Dovecot's expunged - client Expunges (<= IMAP commands in flight at the stops)" $((srv_expunged - expunged)) -le "$imap_busy"
expect "Dovecot's appended - client Appends (>= 0)" $((srv_appended - appended)) -ge 0
expect "Dovecot's appended - client Appends (<= IMAP commands in flight at the stops)" $((srv_appended - appended)) -le "$imap_busy"

# An independent IMAP client: per user, the count over IMAP and every body's checksum.
python3 - "$IMAP" "$PWFILE" "$USERS" >"$T/imap-check.log" 2>&1 <<'EOF' || fail "IMAP check failed: $(cat "$T/imap-check.log")"
import imaplib, re, sys
host, port = sys.argv[1].rsplit(":", 1)
password = open(sys.argv[2]).read().strip()
users = int(sys.argv[3])

def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

total = good = 0
for t in (1, 2):
    for u in range(1, users + 1):
        m = imaplib.IMAP4(host, int(port))
        m.login("tile%d-user%d" % (t, u), password)
        typ, data = m.select("INBOX", readonly=True)
        n = int(data[0])
        if n:
            typ, data = m.fetch("1:*", "(BODY.PEEK[])")
            for part in data:
                if not isinstance(part, tuple):
                    continue
                msg = part[1]
                total += 1
                head, sep, body = msg.partition(b"\r\n\r\n")
                found = re.search(rb"(?im)^X-Tilebench-Checksum: fnv1a64:([0-9a-f]{16})\r?$", head)
                if sep and found and int(found.group(1), 16) == fnv1a64(body):
                    good += 1
                else:
                    print("bad message for tile%d-user%d: %r" % (t, u, msg[:200]))
        m.logout()
print("imap: %d messages, %d with a matching checksum" % (total, good))
sys.exit(0 if total == good else 1)
EOF
cat "$T/imap-check.log"
imap_total=$(sed -n 's/^imap: \([0-9]*\) messages.*/\1/p' "$T/imap-check.log")
expect "messages over IMAP = messages in the maildirs" "$imap_total" -eq "$files"
expect "messages over IMAP" "$imap_total" -gt 0

errs=$(grep -cE ' (Error|Panic|Fatal): ' "$T/sut/dovecot.log" || true)
expect "dovecot log errors" "$errs" -eq 0

# Send only (session_length = 0, what bench/mail uses): no IMAP at all, Send is
# the driver's op in a closed loop (think_time = 0), and the [sut] needs only
# the delivery endpoint. Every message the client counts is in a maildir; the
# server may hold one more per user, accepted as the level stopped.
SO_USERS=4
cat >"$T/send-only.ini" <<INIEOF
[tile]
name = mail-send-only
[workload.mail]
kind = mail
users = $SO_USERS
think_time = 0
think_dist = fixed
session_length = 0
timeout = 10s
unit = ops/s
reference = 1
[sut]
lmtp = $LMTP
$(grep '^mail_domain = ' "$INI")
INIEOF
before=$(find "$T/sut/mail" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l)
"$TILEBENCH" run --config "$T/send-only.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 \
    --idle 0 --db "$T/send-only.db" --quiet >"$T/send-only.log" 2>&1 || fail "send-only run exited $?: $(cat "$T/send-only.log")"
"$TILEBENCH" report latest --db "$T/send-only.db" --format json >"$T/send-only.json"
so() { jq "[.run.levels[].workloads[] | select(.name==\"mail\") | .operations[] | select(.name==\"$1\") | .$2] | add // 0" "$T/send-only.json"; }
so_sent=$(so Send count_all)
expect "send only: Send count" "$so_sent" -gt 0
expect "send only: Send errors" "$(so Send errors)" -eq 0
for op in Login Select FetchHeaders FetchBody Store Expunge Append Search Logout; do
    expect "send only: no $op" "$(so $op count_all)" -eq 0
done
# a closed loop, not the 10 s default send_interval: loopback LMTP takes far more than 2 per user in 4 s
expect "send only: closed loop (sends per user)" "$((so_sent / SO_USERS))" -gt 2
wait_for "Dovecot logged the end of every LMTP session of the send-only run" 10 lmtp_ended
after=$(find "$T/sut/mail" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l)
expect "send only: delivered - client count (>= 0)" "$((after - before - so_sent))" -ge 0
expect "send only: delivered - client count (<= users in flight)" "$((after - before - so_sent))" -le "$SO_USERS"
# keys that only mean something with IMAP sessions are rejected, naming the key
sed 's/^session_length = 0$/session_length = 0\nsend_interval = 1s/' "$T/send-only.ini" >"$T/send-only-bad.ini"
if "$TILEBENCH" run --config "$T/send-only-bad.ini" --tiles 1 --ramp-up 0 --warm-up 0 --steady 1s --ramp-down 0 \
    --idle 0 --db "$T/send-only-bad.db" --quiet >"$T/send-only-bad.log" 2>&1; then
    fail "send_interval with session_length = 0 was accepted"
fi
grep -q 'send_interval: not used with session_length = 0' "$T/send-only-bad.log" ||
    fail "send_interval with session_length = 0: unexpected message: $(cat "$T/send-only-bad.log")"
echo "ok: send_interval with session_length = 0 rejected: $(grep -m1 'send_interval: not used' "$T/send-only-bad.log")"

# Faults: a server that answers garbage, and one that closes in the middle of
# a literal. A small Python peer plays both (fault injection: Dovecot never
# misbehaves on purpose): IMAP on one port (greets, LOGIN/SELECT OK, then each
# UID FETCH gets a FETCH whose {5000} literal is cut after 3 bytes, and the
# connection closed), garbage to every LMTP connection on another. The run
# must finish, and count the errors as errors.
cat >"$T/faulty.py" <<'PYEOF'
import socket, sys, threading
def imap(c):
    f = c.makefile("rb")
    c.sendall(b"* OK faulty ready\r\n")
    for line in f:
        parts = line.split()
        if len(parts) < 2:
            break
        tag, cmd = parts[0], parts[1].upper()
        if cmd == b"LOGIN":
            c.sendall(tag + b" OK logged in\r\n")
        elif cmd == b"SELECT":
            c.sendall(b"* 1 EXISTS\r\n" + tag + b" OK selected\r\n")
        elif cmd == b"UID" and parts[2].upper() == b"SEARCH":
            c.sendall(b"* SEARCH 1\r\n" + tag + b" OK done\r\n")
        elif cmd == b"UID" and parts[2].upper() == b"FETCH":
            c.sendall(b"* 1 FETCH (UID 1 BODY[] {5000}\r\nabc")
            break
        else:
            c.sendall(b"* garbage \x01\x02 {x}\r\n" + tag + b" MAYBE\r\n")
    c.close()
def lmtp(c):
    c.sendall(b"garbage, not a reply\r\n")
    c.close()
def serve(sock, fn):
    while True:
        c, _ = sock.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()
socks = []
for fn in (imap, lmtp):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    socks.append((s, fn))
print(socks[0][0].getsockname()[1], socks[1][0].getsockname()[1], flush=True)
threading.Thread(target=serve, args=socks[1], daemon=True).start()
serve(*socks[0])
PYEOF
python3 "$T/faulty.py" >"$T/faulty.ports" 2>"$T/faulty.log" &
FAULTY=$!
at_exit 'kill $FAULTY 2>/dev/null'
for _ in $(seq 200); do [[ -s "$T/faulty.ports" ]] && break; sleep 0.1; done
read -r FIMAP FLMTP <"$T/faulty.ports" || fail "the faulty peer did not start: $(cat "$T/faulty.log")"
cat >"$T/faulty.ini" <<INIEOF
[tile]
name = mail-faults
[workload.mail]
kind = mail
users = 4
cycle_time = 200ms
send_interval = 300ms
session_length = 1m
mix = FetchBody=1
timeout = 2s
unit = ops/min
reference = 100
[qos.mail]
error_rate = 0.5
[sut]
imap = 127.0.0.1:$FIMAP
lmtp = 127.0.0.1:$FLMTP
mail_password = x
INIEOF
set +e
"$TILEBENCH" run --config "$T/faulty.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 4s --ramp-down 1s \
    --idle 1s --db "$T/faulty.db" --quiet >"$T/faulty-run.log" 2>&1
rc=$?
set -e
kill $FAULTY 2>/dev/null || true
expect "run against the faulty peer: exit (0: complete; a failed QoS verdict is not an exit status of run)" "$rc" -eq 0
"$TILEBENCH" report latest --db "$T/faulty.db" --format json >"$T/faulty.json"
ferr() { jq "[.run.levels[].workloads[] | select(.name==\"mail\") | .operations[] | select(.name==\"$1\") | .errors] | add // 0" "$T/faulty.json"; }
expect "faulty run status" "$(jq -r .run.status "$T/faulty.json")" = complete
expect "Send errors against a garbage LMTP server" "$(ferr Send)" -gt 0
expect "FetchBody errors when the server closes mid-literal" "$(ferr FetchBody)" -gt 0
expect "faulty run fails QoS (error rate)" "$(jq '.run.levels[0].qos_pass' "$T/faulty.json")" = false
echo "PASS test_mail"
