/*
 * othercpu.c: the share of this host's CPU that went to neither the SUT's
 * processes nor the load generator's during a phase's steady state
 * (docs/method.md, "Other CPU"). A comparison of runs is fair only when
 * the host ran nothing else: with power ESTIMATED from whole-host CPU, a
 * neighbour's load reads as the SUT's watts.
 *
 * At the phase's start and end: the host's CPU time by mode (/proc/stat),
 * and the CPU time of the process trees of the SUT's servers (the local
 * processes listening on the tile file's endpoint ports) together with
 * this process's own tree (the load generator, its threads, and any child
 * it runs). other = host busy (user + nice + system) - those trees, as a %
 * of all the host's CPU time in the window. Interrupt time and steal are
 * left out of busy: the kernel charges no process for them, and loopback
 * traffic's softirq time is the benchmark's own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include "coordinator/run_ctx.h"
#include "loadgen/http_client.h"
#include "powermeter/listeners.h"
#include "powermeter/proctree.h"
#include "powermeter/telemetry.h"

#define OTHER_MAX_ROOTS 64

/* The port in "... port=N ..." of a libpq conninfo; 0 none. */
static int conninfo_port(const char *ci) {
    const char *p = ci ? strstr(ci, "port=") : NULL;
    return p ? atoi(p + 5) : 0;
}

/* The port of a web URL, as the load generator reads it (80 when none is given); 0 when it does not parse. */
static int url_port(const char *url) {
    tb_http_target t;
    char path[2048], err[TB_ERR_LEN];
    if (!url || tb_http_url_parse(url, &t, path, sizeof path, err) != 0) return 0;
    if (t.sa.ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)&t.sa)->sin_port);
    if (t.sa.ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)&t.sa)->sin6_port);
    return 0;
}

static void add_port(int *ports, int *n, int port) {
    if (port <= 0 || port > 65535 || *n >= TB_LISTENERS_MAX_PORTS) return;
    for (int i = 0; i < *n; i++)
        if (ports[i] == port) return;
    ports[(*n)++] = port;
}

/* The endpoint ports of the SUT the tile file names. */
static int sut_ports(const tb_sut_endpoints *ep, int *ports) {
    int n = 0;
    add_port(ports, &n, conninfo_port(ep->pg_conninfo));
    for (int i = 0; i < ep->n_pg_tile; i++)
        add_port(ports, &n, conninfo_port(ep->pg_tile[i].conninfo));
    add_port(ports, &n, ep->redis_port);
    add_port(ports, &n, ep->imap_port);
    add_port(ports, &n, ep->lmtp_port);
    add_port(ports, &n, ep->smtp_port);
    add_port(ports, &n, url_port(ep->web_url));
    for (int i = 0; i < ep->n_web_tile; i++)
        add_port(ports, &n, url_port(ep->web_tile[i].url));
    return n;
}

/* The host's CPU seconds (busy, all) and the trees' at this instant. */
static int snap(run_ctx *c, tb_other_cpu_snap *s) {
    tb_telem_snap t;
    pid_t roots[OTHER_MAX_ROOTS];
    int ports[TB_LISTENERS_MAX_PORTS], np = sut_ports(&c->ep, ports), nr;
    char err[TB_ERR_LEN];
    memset(s, 0, sizeof *s);
    nr = np > 0 ? tb_listener_pids(ports, np, roots, OTHER_MAX_ROOTS - 1, err) : 0;
    if (nr < 0) nr = 0;
    s->sut_processes = nr;
    roots[nr++] = getpid();
    if (tb_telem_read_local("/", &t, err) != 0 || !t.have_cpu) return -1;
    if (tb_proctree_cpu(roots, nr, &s->trees_s, err) < 0) return -1;
    s->busy_s = t.cpu_s[TB_CPU_USER] + t.cpu_s[TB_CPU_NICE] + t.cpu_s[TB_CPU_SYSTEM];
    for (int m = 0; m < TB_CPU_NMODES; m++)
        s->all_s += t.cpu_s[m];
    s->ok = 1;
    return 0;
}

void tb_coord_other_cpu_begin(run_ctx *c, tb_other_cpu_snap *s) {
    if (snap(c, s) != 0) s->ok = 0;
}

double tb_coord_other_cpu_end(run_ctx *c, const tb_other_cpu_snap *s0) {
    tb_other_cpu_snap s1;
    double all, other;
    if (!s0->ok || snap(c, &s1) != 0) return NAN;
    all = s1.all_s - s0->all_s;
    if (!(all > 0)) return NAN;
    other = (s1.busy_s - s0->busy_s) - (s1.trees_s - s0->trees_s);
    if (other < 0) other = 0; /* the trees' and the host's clocks tick apart */
    return 100.0 * other / all;
}
