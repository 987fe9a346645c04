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
