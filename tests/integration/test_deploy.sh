#!/usr/bin/env bash
# test_deploy.sh: deploy/tilebench-agent@.service passes `systemd-analyze
# verify` as instance lab1 (a copy whose ExecStart names this build's binary,
# since verify checks that the executable exists) with exit 0 and no message
# about the unit, holds the settings the agent relies on, and rates below 5
# in `systemd-analyze security`. The check itself must catch a typo'd
# directive and a missing binary: it is run on such broken copies too.
# TB_AGENT_UNIT=FILE checks another unit file.
source "$(dirname "$0")/lib.sh"

UNIT=${TB_AGENT_UNIT:-$TB_SOURCE_DIR/deploy/tilebench-agent@.service}
DEFAULT_BIN=/usr/local/bin/tilebench
command -v systemd-analyze >/dev/null || fail "systemd-analyze not found: install systemd"
[ -f "$UNIT" ] || fail "no unit file $UNIT"

# verify_unit FILE BIN: 0 when `systemd-analyze verify` of FILE, installed
# as tilebench-agent@lab1.service with ExecStart's binary replaced by BIN,
# exits 0 and says nothing about the unit; else 1, with its output in
# $T/verify.out. Lines about other units (the host's own) are only shown.
verify_unit() {
    local file=$1 bin=$2 dir rc=0
    dir=$(mktemp -d "$T/unit.XXXXXX")
    sed "s|^\(ExecStart=\)$DEFAULT_BIN |\1$bin |" "$file" >"$dir/tilebench-agent@lab1.service"
    SYSTEMD_LOG_LEVEL=notice timeout 60 systemd-analyze verify "$dir/tilebench-agent@lab1.service" >"$T/verify.out" 2>&1 || rc=$?
    grep -v 'tilebench-agent@' "$T/verify.out" | sed 's/^/note (not about the unit): /' >&2 || true
    [ "$rc" -eq 0 ] && ! grep -q 'tilebench-agent@' "$T/verify.out"
}

# 1. the unit as shipped, its ExecStart pointed at this build's binary
grep -q "^ExecStart=$DEFAULT_BIN agent --name %i" "$UNIT" || fail "ExecStart does not run '$DEFAULT_BIN agent --name %i'"
verify_unit "$UNIT" "$TILEBENCH" || fail "systemd-analyze verify: $(cat "$T/verify.out")"
echo "ok: systemd-analyze verify tilebench-agent@lab1.service: exit 0, no message about the unit"

# 2. what the agent relies on
has() { # WHAT LINE-REGEX
    grep -Eq "^$2\$" "$UNIT" || fail "$1: no line matching '$2' in $UNIT"
    echo "ok: $1"
}
has "broker URI from /etc/tilebench/agent-%i.env" 'EnvironmentFile=/etc/tilebench/agent-%i\.env'
has "restart on failure" 'Restart=on-failure'
has "a delay before a restart" 'RestartSec=[1-9][0-9]*s?'
has "a dedicated user" '(DynamicUser=yes|User=tilebench)'
has "65536 file descriptors" 'LimitNOFILE=65536'
has "SIGTERM to stop" 'KillSignal=SIGTERM'
has "a bounded stop" 'TimeoutStopSec=[1-9][0-9]*s?'
for d in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes; do has "$d" "$d"; done
! grep -E '^ExecStart=.*(--broker|redis://)' "$UNIT" || fail "the broker URI (and its password) is on ExecStart's command line"
! grep -E '^RestrictAddressFamilies=' "$UNIT" | grep -qv 'AF_INET' || fail "RestrictAddressFamilies leaves no AF_INET"
grep -q '0600' "$UNIT" || fail "the unit does not document mode 0600 for the environment file"
echo "ok: no broker URI on the command line; mode 0600 documented"

# systemd's own exposure rating (0 = locked down, 10 = exposed; 3.2 when this
# was written): the hardening must keep it below 5
dir=$(mktemp -d "$T/sec.XXXXXX")
sed "s|^\(ExecStart=\)$DEFAULT_BIN |\1$TILEBENCH |" "$UNIT" >"$dir/tilebench-agent@lab1.service"
timeout 60 systemd-analyze security --offline=yes --threshold=50 "$dir/tilebench-agent@lab1.service" >"$T/security.out" 2>&1 ||
    fail "systemd-analyze security: exposure above 5: $(tail -1 "$T/security.out")"
echo "ok: $(grep -o 'Overall exposure level.*' "$T/security.out")"

# 3. the check catches a typo'd directive, and a binary that is not there
sed 's/^RestartSec=/RestartSek=/' "$UNIT" >"$T/typo.service"
grep -q '^RestartSek=' "$T/typo.service" || fail "could not make the typo'd copy"
if verify_unit "$T/typo.service" "$TILEBENCH"; then fail "a typo'd directive (RestartSek=) passed the check"; fi
grep -q "Unknown key 'RestartSek'" "$T/verify.out" || fail "no 'Unknown key' message for RestartSek=: $(cat "$T/verify.out")"
echo "ok: a typo'd directive fails the check: $(grep -m1 RestartSek "$T/verify.out")"
if verify_unit "$UNIT" "$T/no-such-tilebench"; then fail "a missing ExecStart binary passed the check"; fi
echo "ok: a missing binary fails the check: $(grep -m1 'not executable' "$T/verify.out")"
