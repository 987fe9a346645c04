#!/usr/bin/env bash
# test_security.sh: cheap checks of the security promises.
#  - The embedded SUT listens on loopback only: every TCP socket its
#    servers (PostgreSQL, Redis, Dovecot and their children) listen on,
#    per `ss -ltnp`, is bound to 127.0.0.1 or ::1.
#  - No password reaches the results database, a report or the logs: a run
#    whose tile file holds the mail password inline and a PostgreSQL
#    password in its conninfo (the mail workload logs in with it), and a run
#    with a password-bearing meter URI, and one whose PostgreSQL server
#    refuses (the error names the server), passwords in commented-out lines,
#    and runs refused for a syntax error or an over-long line on a password
#    line (exit 2), a telemetry URL with a password (its node_exporter
#    answering HTTP 500) and one in [sut] telemetry, a campaign whose
#    commands hold secrets and whose meter URI has a password, meter probes
#    whose driver errors quote the URI; then the database files, every
#    report format, `runs` and the runs' output are searched for them.
#  - Temporary folders are made with mkdtemp, never a guessed name: the
#    sources use no tmpnam/tempnam/mktemp.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
SUT="$T/sut/sut.ini"

# ---- loopback only ----
# the servers `sut up` recorded (sut.state), the processes whose command lines
# name the SUT folder, and all their descendants
pids="$(awk '!/^#/ && NF >= 4 { print $2 }' "$T/sut/sut.state") $(pgrep -f "$T/sut" || true)"
[ -n "$pids" ] || fail "no SUT process found"
all=" "
while [ -n "$pids" ]; do
    next=""
    for p in $pids; do
        case "$all" in *" $p "*) continue ;; esac
        all="$all$p "
        next="$next $(pgrep -P "$p" || true)"
    done
    pids=$next
done
n=0
while read -r line; do
    owner=0
    for p in $all; do case "$line" in *"pid=$p,"*) owner=1 ;; esac; done
    [ $owner -eq 1 ] || continue
    addr=$(echo "$line" | awk '{print $4}')
    case "$addr" in
    127.0.0.1:* | \[::1\]:*) n=$((n + 1)) ;;
    *) fail "an embedded SUT server listens beyond loopback: $line" ;;
    esac
done < <(ss -Hltnp)
# PostgreSQL, Redis, Dovecot IMAP and LMTP at least
expect "SUT listening sockets found, all on loopback" "$n" -ge 4

# ---- no password in the database, reports or logs ----
MAILPW=$(cat "$(sed -n 's/^mail_password_file = //p' "$SUT")")
[ -n "$MAILPW" ] || fail "no mail password in the SUT"
PGPW="Pg-Secret-$$"
CMTPW="Comment-Secret-$$"
PG=$(sed -n 's/^pg = //p' "$SUT")
{
    printf '[tile]\nname = secrets\n[workload.mail]\nkind = mail\nusers = 2\ncycle_time = 300ms\nsend_interval = 500ms\n'
    printf 'session_length = 1m\ntimeout = 2s\nunit = ops/min\nreference = 100\n'
    printf '[workload.oltp]\nkind = oltp\nusers = 1\nthink_time = 100ms\nunit = OPM\nreference = 100\ntimeout = 5s\n'
    grep -v '^mail_password_file\|^pg = ' "$SUT"
    printf 'mail_password = %s\n' "$MAILPW"
    printf 'pg = %s password=%s\n' "$PG" "$PGPW" # the embedded SUT trusts loopback: the password is not checked
    # commented-out lines hold secrets as well
    printf '; pg = %s password=%s\n#mail_password = %s\n' "$PG" "$CMTPW" "$CMTPW"
    printf ';pg.tile2 = postgresql://tb:%s@127.0.0.1/tb\n' "$CMTPW"
} >"$T/secrets.ini"
DB="$T/r.db"
"$TILEBENCH" run --config "$T/secrets.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 --idle 0 \
    --db "$DB" --label "security" >"$T/run.log" 2>&1 || fail "run exited $?: $(cat "$T/run.log")"
"$TILEBENCH" report latest --db "$DB" --format json >"$T/r.json"
expect "mail ops (logged in with the inline password)" "$(jq '[.run.levels[0].workloads[] | select(.name=="mail") | .ops] | add' "$T/r.json")" -gt 0
expect "oltp ops (connected with the password-bearing conninfo)" "$(jq '[.run.levels[0].workloads[] | select(.name=="oltp") | .ops] | add' "$T/r.json")" -gt 0
jq -r .run.config_text "$T/r.json" | grep -q '^mail_password = \*\*\*$' || fail "stored config text lacks the redacted mail_password line"

# a meter URI with a password: the meter does not answer, the run stops at start
MPW="Meter-Secret-$$"
rc=0
"$TILEBENCH" run --config "$T/secrets.ini" --tiles 1 --steady 1s --idle 0 --db "$DB" \
    --meter "ipmi://admin:$MPW@127.0.0.1:1?method=dcmi&timeout=1s" >"$T/run-meter.log" 2>&1 || rc=$?
expect "run with an unreachable meter: exit (3: aborted, the meter cannot be reached)" "$rc" -eq 3
grep -q "ipmi://admin:\*\*\*@127.0.0.1:1" "$T/run-meter.log" || fail "the meter error does not show the redacted URI: $(cat "$T/run-meter.log")"

# a PostgreSQL error names the server, without its password
sed "s/^pg = .*/pg = $(echo "$PG" | sed 's/dbname=tilebench/dbname=nosuchdb/') password=$PGPW/" "$T/secrets.ini" >"$T/nodb.ini"
rc=0
"$TILEBENCH" run --config "$T/nodb.ini" --tiles 1 --steady 1s --idle 0 --db "$DB" >"$T/run-nodb.log" 2>&1 || rc=$?
expect "run against a missing database: exit" "$rc" -eq 3
grep -q 'connect .*dbname=nosuchdb.*does not exist' "$T/run-nodb.log" || fail "unclear error: $(cat "$T/run-nodb.log")"
grep -qF -- "$PGPW" "$T/run-nodb.log" && fail "the PostgreSQL password is in the error: $(cat "$T/run-nodb.log")"
echo "ok: $(grep -o 'connect .*' "$T/run-nodb.log" | head -1)"

# errors on lines with a password (exit 2): a syntax error, a line over the limit
SYNPW="Syntax-Secret-$$"
{ cat "$T/secrets.ini"; printf 'mail_password %s\n' "$SYNPW"; } >"$T/syntax.ini"
{ cat "$T/secrets.ini"; printf 'pg = %s application_name=%s password=%s\n' "$PG" "$(head -c 70000 /dev/zero | tr '\0' x)" "$SYNPW"; } >"$T/long.ini"
for f in syntax long; do
    rc=0
    "$TILEBENCH" run --config "$T/$f.ini" --tiles 1 --steady 1s --idle 0 --db "$DB" >"$T/run-$f.log" 2>&1 || rc=$?
    expect "run with a $f error on a password line: exit" "$rc" -eq 2
    grep -q "$f.ini:$(wc -l <"$T/secrets.ini" | awk '{print $1 + 1}'): " "$T/run-$f.log" || fail "the error does not name the line: $(cat "$T/run-$f.log")"
done
jq -r .run.config_text "$T/r.json" | grep -q "^; pg = .*password=\*\*\*$" || fail "stored config text lacks the redacted commented pg line"

# a telemetry URL with a password: a node_exporter stand-in answers the host
# information read, then HTTP 500 to every sample (a warning, an event)
TELPW="Tel-Secret-$$"
cat >"$T/fake_ne.py" <<'PY'
import http.server, os, sys
BODY = b'node_uname_info{nodename="fake",machine="x86_64",release="6.1"} 1\n'
class H(http.server.BaseHTTPRequestHandler):
    n = 0
    def do_GET(self):
        H.n += 1
        ok = H.n == 1
        self.send_response(200 if ok else 500)
        self.send_header("Content-Length", str(len(BODY) if ok else 0))
        self.end_headers()
        if ok:
            self.wfile.write(BODY)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.server_port))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
/usr/bin/python3 "$T/fake_ne.py" "$T/ne.port" &
NE_PID=$!
at_exit 'kill $NE_PID 2>/dev/null; wait $NE_PID 2>/dev/null'
wait_for "the node_exporter stand-in's port" 10 test -s "$T/ne.port"
TDB="$T/tel.db"
"$TILEBENCH" run --config "$T/secrets.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 --idle 0 \
    --db "$TDB" --telemetry "http://admin:$TELPW@127.0.0.1:$(cat "$T/ne.port")/metrics" >"$T/run-tel.log" 2>&1 ||
    fail "telemetry run exited $?: $(cat "$T/run-tel.log")"
grep -q "GET http://admin:\*\*\*@127.0.0.1:[0-9]*/metrics: HTTP 500" "$T/run-tel.log" ||
    fail "no redacted telemetry warning: $(cat "$T/run-tel.log")"
expect "telemetry in the run's settings" "$(sqlite3 "$TDB" "SELECT json_extract(settings_json, '$.telemetry') FROM runs")" \
    = "http://admin:***@127.0.0.1:$(cat "$T/ne.port")/metrics"
for fmt in text html json; do
    "$TILEBENCH" report latest --db "$TDB" --format $fmt -o "$T/report.tel.$fmt" || fail "report $fmt of the telemetry run"
done
# [sut] telemetry with a password that cannot be reached: exit 3, redacted
VTELPW="ValTel-Secret-$$"
{ cat "$T/secrets.ini"; printf 'telemetry = http://u:%s@127.0.0.1:1/metrics\n' "$VTELPW"; } >"$T/tel1.ini"
rc=0
"$TILEBENCH" run --config "$T/tel1.ini" --tiles 1 --steady 1s --idle 0 --db "$TDB" >"$T/run-tel1.log" 2>&1 || rc=$?
expect "run with an unreachable [sut] telemetry: exit" "$rc" -eq 3
grep -q "http://u:\*\*\*@127.0.0.1:1/metrics" "$T/run-tel1.log" || fail "unclear telemetry error: $(cat "$T/run-tel1.log")"

# campaign commands with secrets (a password= word, a URI, environment
# assignments) and a campaign meter with a password that cannot be reached:
# the commands still run with them (camp.env), while the echo, the stored
# steps, output and text and the campaign's message are redacted
CWPW="CampWord-$$" CUPW="CampUri-$$" CEPW="CampEnv-$$" CRPW="CampRedis-$$" CMPW="CampMeter-$$"
cat >"$T/camp.ini" <<EOF
[campaign]
name = secrets
baseline = base
[sweep]
tile_file = $T/secrets.ini
tiles = 1
steady = 1s
idle = 0
meter = ipmi://admin:$CMPW@127.0.0.1:1?method=dcmi&timeout=1s
[config.base]
apply = echo host=x password=$CWPW ipmi://a:$CUPW@h; PGPASSWORD=$CEPW sh -c 'echo "\$PGPASSWORD" >$T/camp.env'; echo REDISCLI_AUTH=$CRPW
revert = REDISCLI_AUTH=$CRPW true
[config.b]
apply = true
revert = true
EOF
CDB="$T/camp.db"
rc=0
"$TILEBENCH" campaign --config "$T/camp.ini" --db "$CDB" >"$T/run-camp.log" 2>&1 || rc=$?
expect "campaign whose meter cannot be reached: exit" "$rc" -eq 3
expect "the apply command ran with its secret" "$(cat "$T/camp.env")" = "$CEPW"
grep -q "^apply base: echo host=x password=\*\*\* ipmi://a:\*\*\*@h; PGPASSWORD=\*\*\* sh" "$T/run-camp.log" ||
    fail "the apply command is not shown redacted: $(cat "$T/run-camp.log")"
grep -q "ipmi://admin:\*\*\*@127.0.0.1:1" "$T/run-camp.log" || fail "the meter error is unclear: $(cat "$T/run-camp.log")"
expect "stored apply output" "$(sqlite3 "$CDB" "SELECT replace(output, char(10), '|') FROM campaign_steps
    WHERE step = 'apply' AND config = 'base'")" = "host=x password=*** ipmi://a:***@h|REDISCLI_AUTH=***|"
# meter probes with a password in the URI, each a usage error (2): wt310 and
# ptd take no login, and ipmi's has an unescaped '/'; none may echo it
for u in "wt310://admin:$CMPW@127.0.0.1:1" "ptd://admin:$CMPW@127.0.0.1:1" "ipmi://admin:Ip/$CMPW@127.0.0.1:1"; do
    rc=0
    "$TILEBENCH" meter probe "$u" >"$T/run-probe.log" 2>&1 || rc=$?
    expect "meter probe ${u%%:*} with a password: exit status" "$rc" -eq 2
    grep -q "admin:\*\*\*@127.0.0.1:1" "$T/run-probe.log" || fail "unclear probe error: $(cat "$T/run-probe.log")"
    cat "$T/run-probe.log" >>"$T/run-probes.log"
done

for fmt in text html json csv; do "$TILEBENCH" report latest --db "$DB" --format $fmt -o "$T/report.$fmt" || fail "report $fmt"; done
"$TILEBENCH" runs --db "$DB" >"$T/runs.out"
# the database with its WAL (when there is one), read as bytes; every report;
# every log of tilebench. Only files that exist: grep exits 2 on a missing
# one, even when another matched, and `if` would take that as no match.
files=()
for f in "$DB" "$DB-wal" "$TDB" "$TDB-wal" "$CDB" "$CDB-wal" "$T"/report.* "$T/runs.out" "$T"/run*.log; do [ -e "$f" ] && files+=("$f"); done
expect "files searched for passwords" "${#files[@]}" -ge 18
for secret in "$MAILPW" "$PGPW" "$MPW" "$CMTPW" "$SYNPW" "$TELPW" "$VTELPW" "$CWPW" "$CUPW" "$CEPW" "$CRPW" "$CMPW"; do
    if grep -alF -- "$secret" "${files[@]}"; then
        fail "a password ($secret) was found in the files above"
    fi
done
sqlite3 "$DB" .dump >"$T/dump.sql"
grep -qF -- "$MAILPW" "$T/dump.sql" && fail "the mail password is in the database dump"
grep -qF -- "$PGPW" "$T/dump.sql" && fail "the PostgreSQL password is in the database dump"
grep -qF -- "$CMTPW" "$T/dump.sql" && fail "a commented-out password is in the database dump"
sqlite3 "$TDB" .dump | grep -qF -- "$TELPW" && fail "the telemetry password is in the database dump"
sqlite3 "$CDB" .dump | grep -qE -- "$CWPW|$CUPW|$CEPW|$CRPW|$CMPW" && fail "a campaign password is in the database dump"
echo "ok: no password in the database, $(ls "$T"/report.* | wc -l) reports, runs and the run logs"

# ---- temporary folders: mkdtemp only ----
PRODUCT=("$TB_SOURCE_DIR"/{common,tiles,qos,scoring,powermeter,loadgen,metersim,sut,results,coordinator,cli})
for d in "${PRODUCT[@]}"; do [ -d "$d" ] || fail "product folder $d is missing: update this list"; done
if grep -rnE '\b(tmpnam|tempnam|mktemp)\s*\(' "${PRODUCT[@]}" --include='*.c'; then
    fail "a temporary name is guessed (use mkdtemp/mkstemp)"
fi
expect "mkdtemp call sites" "$(grep -rn 'mkdtemp(' "${PRODUCT[@]}" --include='*.c' | wc -l)" -ge 1
echo "PASS test_security"
