# shellcheck shell=bash
# netns.sh: "hosts" on this one machine for the integration tests (sourced,
# not run; source lib.sh first when the test uses it). Each host is a network
# namespace tbh-<pid>-NAME with loopback up and one interface, eth0, holding
# 198.18.0.N/24; the other end of its veth pair sits in a hub namespace
# tbh-<pid>-hub, on the Linux bridge br0 there, so every host reaches every
# other one. 198.18.0.0/15 is the range set aside for benchmark tests (RFC
# 2544, appendix C.2.2; RFC 5735, section 3).
#
# Nothing is created in the root namespace: each veth pair is made inside its
# host namespace with its peer sent straight into the hub, so the root
# namespace's interfaces, addresses and routes are never touched. The pid in
# the names keeps tests that run at the same time apart. netns_down (run when
# the test exits, pass or fail) stops whatever still runs in the namespaces
# and deletes them. A namespace that cannot be made (no CAP_SYS_ADMIN, no veth
# or bridge support) fails the test with the reason: it never skips.
#
#   netns_up NAME...        makes the hosts (NAME: 1 to 10 of a-z 0-9), the
#                           hub on the first call; the test's k-th host gets
#                           198.18.0.k; waits until each link is up
#   netns_addr NAME         prints the host's address
#   netns_ns NAME           prints the namespace's name (for `ip netns exec`)
#   netns_exec NAME CMD...  runs CMD in the host's namespace
#   netns_down              stops the namespaces' processes, deletes them
#
# Call netns_up in the test's own shell, not in $( ): it records the hosts in
# shell variables. It also deletes namespaces tbh-PID-* left behind by a test
# that was killed (PID gone) when nothing runs in them any more.

NETNS_PREFIX="tbh-$$"
NETNS_HUB="$NETNS_PREFIX-hub"
NETNS_NET="198.18.0"
NETNS_HOSTS=()    # the names netns_up made, in order
NETNS_CREATED=()  # every namespace this test made, the hub included
declare -A NETNS_ADDR=()

netns_fail() {
    if declare -F fail >/dev/null; then fail "netns: $*"; fi
    echo "FAIL: netns: $*" >&2
    exit 1
}

# netns_run WHAT CMD...: runs CMD; fails the test naming WHAT and CMD's own
# message when it does not succeed.
netns_run() {
    local what=$1 out
    shift
    out=$("$@" 2>&1) || netns_fail "$what: '$*' failed: ${out:-no message} (needs root with CAP_SYS_ADMIN and CAP_NET_ADMIN, and veth and bridge support in the kernel)"
}

netns_ns() { echo "$NETNS_PREFIX-$1"; }

netns_addr() {
    [ -n "${NETNS_ADDR[$1]:-}" ] || netns_fail "no host '$1' (netns_up it first)"
    echo "${NETNS_ADDR[$1]}"
}

netns_exec() {
    local name=$1
    shift
    [ -n "${NETNS_ADDR[$name]:-}" ] || netns_fail "no host '$name' (netns_up it first)"
    ip netns exec "$NETNS_PREFIX-$name" "$@"
}

netns_hub() {
    command -v ip >/dev/null || netns_fail "ip not found: install iproute2"
    [ "$(id -u)" -eq 0 ] || netns_fail "network namespaces need root (running as uid $(id -u))"
    netns_run "hub namespace" ip netns add "$NETNS_HUB"
    NETNS_CREATED+=("$NETNS_HUB")
    netns_run "hub loopback" ip -n "$NETNS_HUB" link set lo up
    netns_run "hub bridge" ip -n "$NETNS_HUB" link add br0 type bridge
    netns_run "hub bridge up" ip -n "$NETNS_HUB" link set br0 up
}

# netns_host NAME N: one host namespace with 198.18.0.N/24 on eth0.
netns_host() {
    local name=$1 n=$2 ns="$NETNS_PREFIX-$1" peer="v-$1"
    netns_run "namespace $ns" ip netns add "$ns"
    NETNS_CREATED+=("$ns")
    netns_run "$ns loopback" ip -n "$ns" link set lo up
    netns_run "$ns veth pair" ip -n "$ns" link add eth0 type veth peer name "$peer" netns "$NETNS_HUB"
    netns_run "$ns on the bridge" ip -n "$NETNS_HUB" link set "$peer" master br0
    netns_run "$ns hub side up" ip -n "$NETNS_HUB" link set "$peer" up
    netns_run "$ns address" ip -n "$ns" addr add "$NETNS_NET.$n/24" dev eth0
    netns_run "$ns eth0 up" ip -n "$ns" link set eth0 up
    NETNS_ADDR[$name]="$NETNS_NET.$n"
    NETNS_HOSTS+=("$name")
}

# netns_stale: deletes the empty namespaces of tests that are gone.
netns_stale() {
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^tbh-[0-9]+-' || true); do
        pid=${ns#tbh-}
        pid=${pid%%-*}
        [ "$pid" != "$$" ] && ! kill -0 "$pid" 2>/dev/null || continue
        if [ -z "$(ip netns pids "$ns" 2>/dev/null)" ]; then
            ip netns del "$ns" 2>/dev/null && echo "note: deleted $ns, left by test pid $pid" >&2
        else
            echo "note: $ns (test pid $pid is gone) still has processes: left alone" >&2
        fi
    done
}

netns_up() {
    local name
    [ $# -ge 1 ] || netns_fail "netns_up: no host names"
    if [ ${#NETNS_CREATED[@]} -eq 0 ]; then
        netns_stale
        # last registered, first run: after the test's own at_exit commands
        # registered later (say a `sut down`), before lib.sh stops its SUT
        # (without lib.sh: an EXIT trap, netns_down first and then the trap
        # the test had set, which may end in exit; a trap set after netns_up
        # would replace this one)
        if declare -F at_exit >/dev/null; then
            at_exit netns_down
        else
            NETNS_PREV_TRAP=$(trap -p EXIT)
            NETNS_PREV_TRAP=${NETNS_PREV_TRAP#"trap -- "}
            NETNS_PREV_TRAP=${NETNS_PREV_TRAP%" EXIT"}
            eval "NETNS_PREV_TRAP=${NETNS_PREV_TRAP:-''}"
            trap 'NETNS_RC=$?; netns_down; set +e; (exit $NETNS_RC); eval "$NETNS_PREV_TRAP"' EXIT
        fi
        netns_hub
    fi
    for name in "$@"; do
        [[ "$name" =~ ^[a-z0-9]{1,10}$ ]] || netns_fail "host name '$name': 1 to 10 of a-z 0-9"
        [ -z "${NETNS_ADDR[$name]:-}" ] || netns_fail "host '$name' exists already"
        [ ${#NETNS_HOSTS[@]} -lt 250 ] || netns_fail "at most 250 hosts"
        netns_host "$name" $((${#NETNS_HOSTS[@]} + 1))
    done
    # each host's link has carrier and its bridge port forwards, within 5 s
    for name in "$@"; do
        local i ok=0
        for ((i = 0; i < 50; i++)); do
            if ip -n "$NETNS_PREFIX-$name" link show eth0 2>/dev/null | grep -q 'LOWER_UP' &&
                bridge -n "$NETNS_HUB" link show dev "v-$name" 2>/dev/null | grep -q 'state forwarding'; then
                ok=1
                break
            fi
            sleep 0.1
        done
        [ $ok -eq 1 ] || netns_fail "host $name: eth0 has no carrier or its bridge port does not forward within 5 s: $(ip -n "$NETNS_PREFIX-$name" link show eth0 2>&1) / $(bridge -n "$NETNS_HUB" link show dev "v-$name" 2>&1)"
    done
}

# netns_down: every process still in one of the namespaces gets SIGTERM, then
# SIGKILL after 5 s; then the namespaces go (with them the veths and the
# bridge). Safe to call twice.
netns_down() {
    local ns p pids i
    for ns in "${NETNS_CREATED[@]}"; do
        pids=$(ip netns pids "$ns" 2>/dev/null) || continue
        for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    done
    for ((i = 0; i < 50; i++)); do
        pids=""
        for ns in "${NETNS_CREATED[@]}"; do pids+=$(ip netns pids "$ns" 2>/dev/null || true); done
        [ -z "$pids" ] && break
        sleep 0.1
    done
    for ns in "${NETNS_CREATED[@]}"; do
        for p in $(ip netns pids "$ns" 2>/dev/null || true); do kill -KILL "$p" 2>/dev/null || true; done
    done
    for ((i = ${#NETNS_CREATED[@]} - 1; i >= 0; i--)); do
        ip netns del "${NETNS_CREATED[i]}" 2>/dev/null || true
    done
    NETNS_CREATED=()
}
