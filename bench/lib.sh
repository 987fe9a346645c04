# bench/lib.sh: helpers shared by the bench/ scripts (sourced, not run).
#
#   bench_free_port             a free TCP port on 127.0.0.1 below the kernel's
#                               ephemeral range (no outgoing connection takes it)
#   bench_nginx_start DIR NW    nginx with its own config, pid, logs and temp
#                               files in DIR, NW workers, serving DIR/www (the
#                               caller fills it) on 127.0.0.1; sets NGINX_PORT.
#                               Returns 2 when nginx is missing, 3 when it does
#                               not start.
#   bench_nginx_stop DIR        stops the nginx bench_nginx_start started in DIR
#   median                      the median of the numbers on stdin
#   bench_stats                 "MEDIAN MIN MAX" of the numbers on stdin
#   bench_fmt PREC MEDIAN MIN MAX   "MEDIAN (MIN-MAX)" with PREC decimals
#   bench_cpu OUT ERR CMD...    runs CMD with stdout to OUT and stderr to ERR
#                               and prints "WALL USER SYS RC": wall seconds,
#                               and the user and system CPU seconds the kernel
#                               accounted to CMD's process, all its threads and
#                               the children it waited for, read from wait4's
#                               rusage once it has exited (never sampled while
#                               it runs); RC is its exit status (128+N for a
#                               signal). Its own return status is 0.
#   bench_repeat NAME VALUE     checks that VALUE (a REPEAT) is a whole number
#                               >= 1; exits 2 naming NAME otherwise
#   bench_cost_check            exits 2 (naming COST=0) unless perf can count
#                               the events of a cost run; sets BENCH_COST_EVENTS
#   bench_cost_cmd FILE         prints the perf stat prefix that counts those
#                               events for a command into FILE: every system
#                               call (raw_syscalls:sys_enter), the system calls
#                               a client's loop makes by kind, context switches
#   bench_first_peer I          true when round I (1-based) of alternating
#                               runs starts with the peer tool: odd rounds run
#                               the peer first, even rounds tilebench first, so
#                               neither always runs on a warmer server
#
# nginx's worker_connections follows `ulimit -n`: raise it before starting.

bench_free_port() {
    local lo p
    lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
    while :; do
        p=$((10000 + RANDOM % (lo - 10000)))
        ss -Htan "sport = :$p" | grep -q . || { echo "$p"; return; }
    done
}

bench_nginx_start() {
    local dir=$1 nw=${2:-1} nginx nofile
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [ -x "$nginx" ] || { echo "nginx not found (apt-get install nginx-light)" >&2; return 2; }
    nofile=$(ulimit -n)
    NGINX_PORT=$(bench_free_port)
    mkdir -p "$dir/www" "$dir/tmp"
    cat >"$dir/nginx.conf" <<EOF
worker_processes $nw;
worker_rlimit_nofile $nofile;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections $((nofile - 100)); }
http {
    access_log off;
    client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    server { listen 127.0.0.1:$NGINX_PORT backlog=16384; root $dir/www; }
}
EOF
    "$nginx" -c "$dir/nginx.conf" -e "$dir/error.log" || return 3
    for _ in $(seq 50); do [ -s "$dir/nginx.pid" ] && return 0; sleep 0.1; done
    echo "nginx did not start: $(tail -3 "$dir/error.log")" >&2
    return 3
}

bench_nginx_stop() {
    [ -s "$1/nginx.pid" ] && kill "$(cat "$1/nginx.pid")" 2>/dev/null
    return 0
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

bench_stats() { sort -g | awk '{v[NR] = $1} END {if (!NR) exit 1; m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR]}'; }

bench_fmt() { awk -v p="$1" -v m="$2" -v lo="$3" -v hi="$4" 'BEGIN {printf "%.*f (%.*f-%.*f)", p, m, p, lo, p, hi}'; }

bench_cpu() {
    python3 - "$@" <<'PY'
import os, sys, time
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
        os.execvp(cmd[0], cmd)
    except OSError as e:
        os.write(2, f"bench_cpu: {cmd[0]}: {e}\n".encode())
    os._exit(127)
_, status, ru = os.wait4(pid, 0)  # the kernel's accounting of the exited process
wall = time.monotonic() - t0
rc = os.waitstatus_to_exitcode(status)
print(f"{wall:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {rc if rc >= 0 else 128 - rc}")
PY
}

bench_repeat() {
    case "$2" in '' | *[!0-9]*) echo "bench: $1 '$2': expected a whole number >= 1" >&2; exit 2 ;; esac
    [ "$2" -ge 1 ] || { echo "bench: $1 '$2': expected a whole number >= 1" >&2; exit 2; }
}

bench_first_peer() { [ $(($1 % 2)) -eq 1 ]; }

# the system calls a load generator's loop makes, counted by kind in a cost run
BENCH_COST_SYSCALLS="read write readv writev sendto recvfrom sendmsg recvmsg epoll_wait epoll_pwait epoll_ctl
 poll ppoll select pselect6 futex clock_gettime timerfd_settime getrusage sched_yield nanosleep clock_nanosleep
 ioctl fcntl"

bench_cost_check() {
    local s
    BENCH_COST_EVENTS="raw_syscalls:sys_enter,context-switches,cpu-migrations"
    for s in $BENCH_COST_SYSCALLS; do BENCH_COST_EVENTS="$BENCH_COST_EVENTS,syscalls:sys_enter_$s"; done
    command -v perf >/dev/null || { echo "bench: perf not found (apt-get install linux-perf), or COST=0 to skip the cost table" >&2; exit 2; }
    perf stat -x, -o /dev/null -e "$BENCH_COST_EVENTS" -- true 2>/dev/null ||
        { echo "bench: perf cannot count system call tracepoints here (root, or kernel.perf_event_paranoid <= 1); COST=0 skips the cost table" >&2; exit 2; }
}

bench_cost_cmd() { echo "perf stat -x, -o $1 -e $BENCH_COST_EVENTS --"; }
