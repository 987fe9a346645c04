/*
 * meter_sim.c: the power meter emulator (see meter_sim.h). One thread, one
 * poll() loop over the listening socket, the clients and an optional pty.
 * The instrument state (header mode, ranges, items) is global, as on a real
 * analyzer where every interface talks to the same instrument.
 *
 * Yokogawa subset served (WT310 :NUMeric, WT210 :MEASure; short or long
 * mnemonics, any case, several commands per line separated by ';'):
 *   *IDN? *RST *CLS :COMM:HEAD ON|OFF|? :COMM:VERB ON|OFF|? :COMM:REM
 *   :SYST:COMM:COMM  :NUM:FORM ASC|?  :NUM:NORM:NUM n|?  :NUM:NORM:ITEM<x>
 *   FUNC,ELEM|?  :NUM:NORM:VAL?  :INP|CONF:VOLT|CURR:RANG v|?  :INP|CONF:
 *   VOLT|CURR:AUTO b|?  :INP|CONF:CFAC 3|6|?  :RATE v|?  :STAT:ERR?
 *   :MEAS[:NORM]:ITEM:<V|A|W|PF|VA|VAR> ON|OFF|?  :MEAS[:NORM]:VAL?
 * Unknown headers set error 113 "Undefined header", bad values 224 "Illegal
 * parameter value" (reported by :STAT:ERR?); like IEEE 488.2 instruments it
 * sends nothing for a command without '?'.
 *
 * PTDaemon subset: Hello, Identify, RR, SR,V|A,x, Go,ms,rampup[,mark], Stop,
 * Watts, Uncertainty, RL[,N]; anything else "Unknown command". Samples are
 * taken on PTD's own clock from Go; RL returns the newest unread one and
 * waits up to one interval when there is none, as PTD does (per SPEC's
 * harness notes on RL).
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname are XSI */
#define _DEFAULT_SOURCE
#include "metersim/meter_sim.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "powermeter/meter.h"

#define SIM_MAX_CLIENTS  32
#define SIM_LINE         1024
#define SIM_PTD_UNC_GOOD 0.002 /* 0.2%: a WT310 well inside its range */
#define SIM_PTD_UNC_BAD  0.015 /* 1.5%: above SPEC's 1% limit */
#define SIM_NEG_W        -27.1 /* the WT310E field bug's reading (mlcommons/power-dev#253) */
#define SIM_NEG_A        -3.199

/* ---- trace ---- */

struct tb_msim_trace {
    double *t, *w;
    double *v, *a, *pf; /* NaN where the line gives only "t,W" */
    size_t n;
};

/* Parses the optional ",V,A,PF" after the watts of a trace line into out[3]
 * (all three or none). Returns 0, or -1 with err naming file:line. */
static int trace_vapf(const char *p, const char *path, size_t lineno, double out[3], char *err) {
    static const char *const names[3] = {"volts", "amps", "pf"};
    char *end;
    out[0] = out[1] = out[2] = NAN;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0') return 0;
    for (int k = 0; k < 3; k++) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';')
            p++;
        out[k] = strtod(p, &end);
        if (end == p || !isfinite(out[k])) {
            tb_seterr(err,
                      "%s:%zu: %s '%.20s' is not a number (a line is 'seconds,watts' or "
                      "'seconds,watts,volts,amps,pf')",
                      path, lineno, names[k], p);
            return -1;
        }
        p = end;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p) {
        tb_seterr(err, "%s:%zu: unexpected '%.20s' after the power factor", path, lineno, p);
        return -1;
    }
    return 0;
}

int tb_msim_trace_load(const char *path, tb_msim_trace **out, char *err) {
    FILE *f = fopen(path, "r");
    char line[256];
    size_t cap = 0, lineno = 0;
    tb_msim_trace *tr;

    *out = NULL;
    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    tr = xcalloc(1, sizeof *tr);
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end;
        double t, w, vapf[3];
        lineno++;
        line[strcspn(line, "\r\n")] = '\0'; /* so messages quote the value alone */
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#') continue;
        errno = 0;
        t = strtod(p, &end);
        if (end == p || !isfinite(t) || t < 0) {
            /* A header line ("time,watts") is allowed first. */
            if (tr->n == 0 && isalpha((unsigned char)*p)) continue;
            tb_seterr(err, "%s:%zu: time '%.20s' is not a number of seconds >= 0", path, lineno, p);
            goto fail;
        }
        p = end;
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';')
            p++;
        /* Negative watts are allowed: the emulator serves what it is told,
         * so tests can feed tilebench implausible readings. */
        w = strtod(p, &end);
        if (end == p || !isfinite(w)) {
            tb_seterr(err, "%s:%zu: watts '%.20s' is not a number", path, lineno, p);
            goto fail;
        }
        if (trace_vapf(end, path, lineno, vapf, err) != 0) goto fail;
        if (tr->n > 0 && t <= tr->t[tr->n - 1]) {
            tb_seterr(err, "%s:%zu: time %g s is not after the previous %g s", path, lineno, t, tr->t[tr->n - 1]);
            goto fail;
        }
        if (tr->n == cap) {
            cap = cap ? cap * 2 : 64;
            tr->t = xrealloc(tr->t, cap * sizeof *tr->t);
            tr->w = xrealloc(tr->w, cap * sizeof *tr->w);
            tr->v = xrealloc(tr->v, cap * sizeof *tr->v);
            tr->a = xrealloc(tr->a, cap * sizeof *tr->a);
            tr->pf = xrealloc(tr->pf, cap * sizeof *tr->pf);
        }
        tr->t[tr->n] = t;
        tr->w[tr->n] = w;
        tr->v[tr->n] = vapf[0];
        tr->a[tr->n] = vapf[1];
        tr->pf[tr->n] = vapf[2];
        tr->n++;
    }
    fclose(f);
    f = NULL;
    if (tr->n == 0) {
        tb_seterr(err, "%s: no 'time,watts' lines", path);
        goto fail;
    }
    *out = tr;
    return 0;
fail:
    if (f) fclose(f);
    tb_msim_trace_free(tr);
    return -1;
}

/* Index of the trace point in force at t_s (see tb_msim_trace_watts). */
static size_t trace_at(const tb_msim_trace *tr, double t_s, int loop) {
    size_t lo = 0, hi;
    double last = tr->t[tr->n - 1];
    if (loop && last > 0 && t_s >= last) t_s = fmod(t_s, last);
    if (t_s < tr->t[0]) return 0;
    hi = tr->n; /* find the last index with t <= t_s */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->t[mid] <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double tb_msim_trace_watts(const tb_msim_trace *tr, double t_s, int loop) { return tr->w[trace_at(tr, t_s, loop)]; }

void tb_msim_trace_free(tb_msim_trace *tr) {
    if (!tr) return;
    free(tr->t);
    free(tr->w);
    free(tr->v);
    free(tr->a);
    free(tr->pf);
    free(tr);
}

/* ---- faults and counters ---- */

static const char *const fault_names[TB_MSIM_FAULT_KINDS] = {"nan",        "inf",         "garbage",  "stall",
                                                             "disconnect", "uncertainty", "negative", "inconsistent"};

const char *tb_msim_fault_name(int kind) { return kind >= 0 && kind < TB_MSIM_FAULT_KINDS ? fault_names[kind] : "?"; }

void tb_msim_defaults(tb_msim_opts *o) {
    memset(o, 0, sizeof *o);
    o->protocol = TB_MSIM_WT310;
    snprintf(o->host, sizeof o->host, "127.0.0.1");
    snprintf(o->port, sizeof o->port, "0");
    o->watts = 100.0;
    o->volts = 230.0;
    o->pf = 0.95;
    o->elements = 1;
    o->ptd_interval_us = 1000000u;
}

int tb_msim_parse_fault(const char *spec, tb_msim_fault *out, char *err) {
    const char *colon = strchr(spec, ':');
    char e[TB_ERR_LEN];
    uint64_t n;
    int k;
    if (!colon) {
        tb_seterr(err, "'%s': expected KIND:N (e.g. nan:5 = every 5th request)", spec);
        return -1;
    }
    for (k = 0; k < TB_MSIM_FAULT_KINDS; k++)
        if (strlen(fault_names[k]) == (size_t)(colon - spec) &&
            strncasecmp(spec, fault_names[k], (size_t)(colon - spec)) == 0)
            break;
    if (k == TB_MSIM_FAULT_KINDS) {
        tb_seterr(err,
                  "'%s': unknown fault '%.*s' (nan, inf, garbage, stall, disconnect, uncertainty, negative, "
                  "inconsistent)",
                  spec, (int)(colon - spec), spec);
        return -1;
    }
    if (tb_parse_u64(colon + 1, &n, e) != 0 || n == 0) {
        tb_seterr(err, "'%s': N must be an integer >= 1", spec);
        return -1;
    }
    out->kind = k;
    out->every = n;
    return 0;
}

void tb_msim_format_counters(const tb_msim_counters *c, char *buf, size_t len) {
    snprintf(buf, len,
             "requests=%llu served=%llu valid=%llu nan=%llu overrange=%llu garbage=%llu uncertain=%llu "
             "implausible=%llu stalled=%llu disconnects=%llu connections=%llu",
             (unsigned long long)c->requests, (unsigned long long)c->served, (unsigned long long)c->valid,
             (unsigned long long)c->nan, (unsigned long long)c->overrange, (unsigned long long)c->garbage,
             (unsigned long long)c->uncertain, (unsigned long long)c->implausible, (unsigned long long)c->stalled,
             (unsigned long long)c->disconnects, (unsigned long long)c->connections);
}

/* ---- the server ---- */

typedef struct client {
    int fd;
    int is_socket; /* 0: the pty master, which is never closed */
    char in[SIM_LINE * 2];
    size_t have;
    int rl_pending; /* PTD: an RL waits for the next sample */
    int rl_fault;   /* its fault kind, or -1 */
} client;

/* One WT310 numeric item: function name and element (0 = SIGMA). */
typedef struct item {
    char func[8];
    int elem;
} item;

struct tb_msim {
    tb_msim_opts o;
    tb_msim_trace *trace;
    tb_meter *cpu;
    double cpu_last_w;
    double src_v, src_a, src_pf; /* the trace's V, A, PF now (set by source_watts); NaN: derive them */
    int lfd, port;
    int pty_fd;
    char pty_path[64];
    client *clients[SIM_MAX_CLIENTS];
    uint64_t t0_us;
    int trace_wait; /* trace_from_request: t0_us is set by the first value request */
    FILE *out;      /* tb_msim_run's, for the line saying when that was */
    tb_msim_counters c;
    /* instrument state */
    int head, verb;
    int err_code;
    int nitems;
    item items[10];
    int wt210_on[6]; /* V A W PF VA VAR */
    double vrange, arange;
    int vauto, aauto, cfac;
    double rate_s;
    /* PTD state */
    int running;
    uint64_t go_us, interval_us;
    uint64_t last_read;  /* index of the newest sample RL returned */
    uint64_t stats_upto; /* samples folded into the stats below */
    double sum_w, min_w, max_w, unc_sum, unc_min, unc_max;
    uint64_t unc_invalid, errors;
    double vrange_ptd, arange_ptd;
    int vauto_ptd, aauto_ptd;
};

static const char *const wt210_names[6] = {"V", "A", "W", "PF", "VA", "VAR"};

/* Total watts now from the source. */
static double source_watts(tb_msim *m, uint64_t at_us) {
    double t;
    if (m->trace_wait) {
        m->trace_wait = 0;
        m->t0_us = at_us;
        if (m->out) {
            fprintf(m->out, "trace t=0 at monotonic %llu us\n", (unsigned long long)at_us);
            fflush(m->out);
        }
    }
    t = at_us > m->t0_us ? (double)(at_us - m->t0_us) / 1e6 : 0.0;
    m->src_v = m->src_a = m->src_pf = NAN;
    if (m->trace) {
        size_t k = trace_at(m->trace, t, m->o.trace_loop);
        m->src_v = m->trace->v[k];
        m->src_a = m->trace->a[k];
        m->src_pf = m->trace->pf[k];
        return m->trace->w[k];
    }
    if (m->cpu) {
        tb_sample s;
        char e[TB_ERR_LEN];
        if (tb_meter_sample(m->cpu, &s, e) == 0 && !(s.flags & TB_SAMPLE_BAD) && isfinite(s.watts))
            m->cpu_last_w = s.watts;
        return m->cpu_last_w;
    }
    return m->o.watts;
}

/* The fault for value request number n (1-based), or -1. */
static int fault_for(const tb_msim *m, uint64_t n, int ptd) {
    for (int i = 0; i < m->o.nfaults; i++) {
        if (n % m->o.faults[i].every != 0) continue;
        if (m->o.faults[i].kind == TB_MSIM_FAULT_UNCERTAINTY && !ptd) continue;
        return m->o.faults[i].kind;
    }
    return -1;
}

static void reset_instrument(tb_msim *m) {
    m->head = 1; /* Yokogawa powers up with headers on; drivers turn them off */
    m->verb = 0;
    m->err_code = 0;
    m->nitems = 3;
    snprintf(m->items[0].func, sizeof m->items[0].func, "U");
    snprintf(m->items[1].func, sizeof m->items[1].func, "I");
    snprintf(m->items[2].func, sizeof m->items[2].func, "P");
    for (int i = 0; i < 10; i++)
        m->items[i].elem = 1;
    for (int i = 3; i < 10; i++)
        snprintf(m->items[i].func, sizeof m->items[i].func, "P");
    m->wt210_on[0] = m->wt210_on[1] = m->wt210_on[2] = 1;
    m->wt210_on[3] = m->wt210_on[4] = m->wt210_on[5] = 0;
    m->vrange = 300;
    m->arange = 20;
    m->vauto = m->aauto = 0;
    m->cfac = 3;
    m->rate_s = 0.5;
}

static int bind_listen(tb_msim *m, char *err) {
    struct addrinfo hints, *res = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int one = 1, rc;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(m->o.host, m->o.port, &hints, &res);
    if (rc != 0) {
        tb_seterr(err, "listen %s:%s: %s", m->o.host, m->o.port, gai_strerror(rc));
        return -1;
    }
    m->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (m->lfd < 0 || setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(m->lfd, res->ai_addr, res->ai_addrlen) != 0 || listen(m->lfd, 16) != 0) {
        tb_seterr(err, "listen %s:%s: %s", m->o.host, m->o.port, strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    if (getsockname(m->lfd, (struct sockaddr *)&ss, &sl) != 0) {
        tb_seterr(err, "getsockname: %s", strerror(errno));
        return -1;
    }
    m->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

static int open_pty(tb_msim *m, char *err) {
    struct termios t;
    const char *name;
    int fd = posix_openpt(O_RDWR | O_NOCTTY);
    if (fd < 0 || grantpt(fd) != 0 || unlockpt(fd) != 0 || !(name = ptsname(fd))) {
        tb_seterr(err, "pty: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    snprintf(m->pty_path, sizeof m->pty_path, "%s", name);
    /* Raw on our side too, so '\n' is not turned into "\r\n" on the way out. */
    if (tcgetattr(fd, &t) == 0) {
        t.c_oflag &= ~(tcflag_t)OPOST;
        t.c_lflag &= ~(tcflag_t)(ECHO | ICANON | ISIG | IEXTEN);
        t.c_iflag &= ~(tcflag_t)(ICRNL | INLCR | IGNCR | IXON);
        (void)tcsetattr(fd, TCSANOW, &t);
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    m->pty_fd = fd;
    m->clients[0] = xcalloc(1, sizeof(client));
    m->clients[0]->fd = fd;
    m->clients[0]->is_socket = 0;
    return 0;
}

int tb_msim_open(const tb_msim_opts *o, tb_msim **out, char *err) {
    tb_msim *m = xcalloc(1, sizeof *m);
    *out = NULL;
    m->o = *o;
    m->o.trace = NULL;
    m->o.cpu_model = NULL;
    m->lfd = -1;
    m->pty_fd = -1;
    if (o->elements < 1 || o->elements > 3) {
        tb_seterr(err, "elements: %d: must be 1..3", o->elements);
        goto fail;
    }
    if (o->trace && tb_msim_trace_load(o->trace, &m->trace, err) != 0) goto fail;
    if (o->cpu_model) {
        char e[TB_ERR_LEN];
        if (tb_meter_open(o->cpu_model, &m->cpu, e) != 0) {
            tb_seterr(err, "cpu model: %s", e);
            goto fail;
        }
    }
    reset_instrument(m);
    m->vrange_ptd = 300;
    m->arange_ptd = 20;
    if (bind_listen(m, err) != 0) goto fail;
    if (o->pty && open_pty(m, err) != 0) goto fail;
    m->trace_wait = m->trace && o->trace_from_request;
    m->t0_us = m->trace_wait ? 0 : tb_now_us();
    m->cpu_last_w = 0;
    m->src_v = m->src_a = m->src_pf = NAN;
    *out = m;
    return 0;
fail:
    tb_msim_close(m);
    return -1;
}

int tb_msim_port(const tb_msim *m) { return m->port; }
const char *tb_msim_pty_path(const tb_msim *m) { return m->pty_path; }
uint64_t tb_msim_t0_us(const tb_msim *m) { return m->t0_us; }

void tb_msim_get_counters(const tb_msim *m, tb_msim_counters *c) {
    *c = m->c;
    c->valid = c->served - c->nan - c->overrange - c->garbage - c->uncertain - c->implausible;
}

static void drop_client(tb_msim *m, int i) {
    client *c = m->clients[i];
    if (!c) return;
    if (!c->is_socket) { /* the pty stays; only its input is forgotten */
        c->have = 0;
        c->rl_pending = 0;
        return;
    }
    close(c->fd);
    free(c);
    m->clients[i] = NULL;
}

void tb_msim_close(tb_msim *m) {
    if (!m) return;
    for (int i = 0; i < SIM_MAX_CLIENTS; i++) {
        if (m->clients[i] && m->clients[i]->is_socket) close(m->clients[i]->fd);
        free(m->clients[i]);
    }
    if (m->pty_fd >= 0) close(m->pty_fd);
    if (m->lfd >= 0) close(m->lfd);
    tb_meter_close(m->cpu);
    tb_msim_trace_free(m->trace);
    free(m);
}

/* Sends text as is (a short reply on a local socket: a blocking write loop is fine). */
static void put(client *c, const char *s) {
    size_t n = strlen(s), off = 0;
    int spins = 0;
    while (off < n) {
        ssize_t w = c->is_socket ? send(c->fd, s + off, n - off, MSG_NOSIGNAL) : write(c->fd, s + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EINTR || errno == EAGAIN) && spins++ < 1000) {
            struct pollfd p = {c->fd, POLLOUT, 0};
            (void)poll(&p, 1, 10);
            continue;
        }
        return; /* the peer is gone; its read side will notice */
    }
}

/* ---- Yokogawa ---- */

/* Long and short forms of the mnemonics the subset uses (short = a prefix). */
static const char *const mnemonics[][2] = {
    {"COMMUNICATE", "COMM"}, {"HEADER", "HEAD"},  {"VERBOSE", "VERB"}, {"REMOTE", "REM"},     {"NUMERIC", "NUM"},
    {"NORMAL", "NORM"},      {"VALUE", "VAL"},    {"NUMBER", "NUM"},   {"FORMAT", "FORM"},    {"INPUT", "INP"},
    {"VOLTAGE", "VOLT"},     {"CURRENT", "CURR"}, {"RANGE", "RANG"},   {"CFACTOR", "CFAC"},   {"STATUS", "STAT"},
    {"ERROR", "ERR"},        {"SYSTEM", "SYST"},  {"MEASURE", "MEAS"}, {"CONFIGURE", "CONF"}, {"ELEMENT", "ELEM"},
    {"SIGMA", "SIGM"},       {"ITEM", "ITEM"},    {"AUTO", "AUTO"},    {"RATE", "RATE"},      {"SAMPLE", "SAMP"},
    {"DEGREE", "DEGR"},
};

/* Canonical short form of one header token (uppercased, suffix digits kept apart). */
static void canon_token(const char *tok, size_t n, char *out, size_t len, int *suffix) {
    char up[32];
    size_t k = 0, d = n;
    *suffix = 0;
    while (d > 0 && isdigit((unsigned char)tok[d - 1]))
        d--;
    if (d < n && d > 0)
        *suffix = atoi(tok + d);
    else
        d = n;
    for (k = 0; k < d && k + 1 < sizeof up; k++)
        up[k] = (char)toupper((unsigned char)tok[k]);
    up[k] = '\0';
    for (size_t i = 0; i < sizeof mnemonics / sizeof mnemonics[0]; i++) {
        if (strcmp(up, mnemonics[i][0]) == 0 || strcmp(up, mnemonics[i][1]) == 0) {
            snprintf(out, len, "%s", mnemonics[i][1]);
            return;
        }
    }
    snprintf(out, len, "%s", up);
}

static int parse_bool(const char *a, int *out) {
    if (strcasecmp(a, "ON") == 0 || strcmp(a, "1") == 0)
        *out = 1;
    else if (strcasecmp(a, "OFF") == 0 || strcmp(a, "0") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

static int in_list(double v, const double *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (fabs(v - list[i]) <= list[i] * 1e-6) return 1;
    return 0;
}

static const double vranges[] = {7.5, 15, 30, 60, 75, 150, 300, 600};
static const double aranges[] = {0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20};

/* The value of function f for element e (0 = SIGMA) at the given total watts. */
static double yoko_func(const tb_msim *m, const char *f, int e, double total_w) {
    double n = (double)m->o.elements, w = e == 0 ? total_w : total_w / n;
    double u = isfinite(m->src_v) ? m->src_v : m->o.volts, pf = isfinite(m->src_pf) ? m->src_pf : m->o.pf;
    double i = isfinite(m->src_a) ? (e == 0 ? m->src_a : m->src_a / n) : u > 0 && pf > 0 ? w / (u * pf) : 0;
    double s = u * i;
    if (strcmp(f, "P") == 0 || strcmp(f, "W") == 0) return w;
    if (strcmp(f, "U") == 0 || strcmp(f, "V") == 0 || strcmp(f, "URMS") == 0) return u;
    if (strcmp(f, "I") == 0 || strcmp(f, "A") == 0 || strcmp(f, "IRMS") == 0) return i;
    if (strcmp(f, "LAMB") == 0 || strcmp(f, "LAMBDA") == 0 || strcmp(f, "PF") == 0) return pf;
    if (strcmp(f, "S") == 0 || strcmp(f, "VA") == 0) return s;
    if (strcmp(f, "Q") == 0 || strcmp(f, "VAR") == 0) return sqrt(fmax(0, s * s - w * w));
    if (strcmp(f, "FU") == 0 || strcmp(f, "FI") == 0) return 50.0;
    return NAN;
}

/* Formats one value as a WT would in ASCII (NR3), or its error text. */
static void fmt_nr3(char *buf, size_t len, double v) {
    if (isnan(v))
        snprintf(buf, len, "NAN");
    else
        snprintf(buf, len, "%.5E", v);
}

/*
 * The implausible faults, applied to the values about to be served (through
 * src_*, which source_watts resets for the next reply): negative serves the
 * WT310E field bug's reading (mlcommons/power-dev#253), -27.1 W and -3.199 A
 * whatever the source; inconsistent keeps W and doubles the current, so
 * V x A x PF is twice W.
 */
static void implausible_values(tb_msim *m, int f, double *total_w) {
    double u = isfinite(m->src_v) ? m->src_v : m->o.volts, pf = isfinite(m->src_pf) ? m->src_pf : m->o.pf;
    if (f == TB_MSIM_FAULT_NEGATIVE) {
        *total_w = SIM_NEG_W;
        m->src_a = SIM_NEG_A;
    } else {
        m->src_a = 2.0 * (isfinite(m->src_a) ? m->src_a : u > 0 && pf > 0 ? *total_w / (u * pf) : 0);
    }
}

/* Builds the reply to a value query, applying the fault. Returns 0 to send
 * buf, 1 to stall, 2 to disconnect. */
static int yoko_values(tb_msim *m, char *buf, size_t len, int wt210) {
    uint64_t n = ++m->c.requests;
    int f = fault_for(m, n, 0);
    double total = source_watts(m, tb_now_us());
    size_t off = 0;
    int over = 0;

    if (f == TB_MSIM_FAULT_STALL) {
        m->c.stalled++;
        return 1;
    }
    if (f == TB_MSIM_FAULT_DISCONNECT) {
        m->c.disconnects++;
        return 2;
    }
    m->c.served++;
    if (f == TB_MSIM_FAULT_GARBAGE) {
        m->c.garbage++;
        snprintf(buf, len, "#\x7f%%@!garbage~~%llu", (unsigned long long)n);
        return 0;
    }
    if (f == TB_MSIM_FAULT_NAN) m->c.nan++;
    if (f == TB_MSIM_FAULT_INF) m->c.overrange++;
    if (f == TB_MSIM_FAULT_NEGATIVE || f == TB_MSIM_FAULT_INCONSISTENT) {
        m->c.implausible++;
        implausible_values(m, f, &total);
    } else if (f < 0 && total < 0) {
        m->c.implausible++; /* a negative value of the trace, served as it is */
    }
    /* A real over-range: the input is above 140% of a fixed range. */
    {
        double u = isfinite(m->src_v) ? m->src_v : m->o.volts, i = yoko_func(m, "I", 1, total);
        if ((!m->vauto && u > 1.4 * m->vrange) || (!m->aauto && i > 1.4 * m->arange)) over = 1;
    }
    buf[0] = '\0';
    if (m->head) off += (size_t)snprintf(buf, len, wt210 ? ":MEAS:NORM:VAL " : ":NUM:NORM:VAL ");
    for (int k = 0, first = 1; k < (wt210 ? 6 : m->nitems); k++) {
        char v[32];
        if (wt210 && !m->wt210_on[k]) continue;
        if (f == TB_MSIM_FAULT_NAN)
            snprintf(v, sizeof v, wt210 ? "9.91E+37" : "NAN");
        else if (f == TB_MSIM_FAULT_INF || over)
            snprintf(v, sizeof v, wt210 ? "9.9E+37" : "INF");
        else if (wt210)
            fmt_nr3(v, sizeof v, yoko_func(m, wt210_names[k], 1, total));
        else
            fmt_nr3(v, sizeof v, yoko_func(m, m->items[k].func, m->items[k].elem, total));
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", first ? "" : ",", v);
        first = 0;
    }
    if (over && f < 0) m->c.overrange++;
    return 0;
}

/* Handles one Yokogawa command. Appends a query's reply to rep. Returns 0,
 * 1 stall (no reply to this line), 2 disconnect. */
static int yoko_command(tb_msim *m, const char *cmd, char *rep, size_t replen) {
    char hdr[128] = "", arg[128] = "", canon[160] = "", out[SIM_LINE] = "";
    const char *p = cmd, *tok;
    int query, idx = 0, wt210 = m->o.protocol == TB_MSIM_WT210;
    size_t hn;
    int rc = 0;

    while (*p == ' ')
        p++;
    hn = strcspn(p, " ");
    if (hn == 0) return 0;
    if (hn >= sizeof hdr) hn = sizeof hdr - 1;
    memcpy(hdr, p, hn);
    hdr[hn] = '\0';
    p += hn;
    while (*p == ' ')
        p++;
    snprintf(arg, sizeof arg, "%s", p);
    for (size_t k = strlen(arg); k > 0 && isspace((unsigned char)arg[k - 1]); k--)
        arg[k - 1] = '\0';
    query = hdr[strlen(hdr) - 1] == '?';
    if (query) hdr[strlen(hdr) - 1] = '\0';

    if (hdr[0] == '*') {
        if (strcasecmp(hdr, "*IDN") == 0 && query) {
            snprintf(out, sizeof out, "%s",
                     wt210 ? "YOKOGAWA,760401,91K000001,F3.01" /* WT210: model code, not name */
                           : "YOKOGAWA,WT310,C2PH13047V,F1.03");
        } else if (strcasecmp(hdr, "*RST") == 0) {
            reset_instrument(m);
        } else if (strcasecmp(hdr, "*CLS") == 0) {
            m->err_code = 0;
        } else if (strcasecmp(hdr, "*OPC") == 0 && query) {
            snprintf(out, sizeof out, "1");
        } else {
            m->err_code = 113;
        }
        goto reply;
    }
    /* Canonical header: short forms joined by ':', suffix of ITEM kept in idx. */
    tok = hdr[0] == ':' ? hdr + 1 : hdr;
    while (*tok) {
        size_t n = strcspn(tok, ":");
        char t[32];
        int suffix;
        canon_token(tok, n, t, sizeof t, &suffix);
        if (strcmp(t, "ITEM") == 0) idx = suffix;
        if (strcmp(t, "ELEM") == 0 || strcmp(t, "SIGM") == 0) { /* WT210 item element: one element only */
            tok += n;
            if (*tok == ':') tok++;
            continue;
        }
        if (canon[0]) strncat(canon, ":", sizeof canon - strlen(canon) - 1);
        strncat(canon, t, sizeof canon - strlen(canon) - 1);
        tok += n;
        if (*tok == ':') tok++;
    }
    /* ":MEAS:ITEM:W" is ":MEAS:NORM:ITEM:W" with NORM left out. */
    if (strncmp(canon, "MEAS:", 5) == 0 && strncmp(canon, "MEAS:NORM:", 10) != 0) {
        char tmp[160];
        snprintf(tmp, sizeof tmp, "MEAS:NORM:%s", canon + 5);
        snprintf(canon, sizeof canon, "%s", tmp);
    }

    if (strcmp(canon, "COMM:HEAD") == 0 || strcmp(canon, "COMM:VERB") == 0) {
        int *flag = canon[5] == 'H' ? &m->head : &m->verb;
        if (query)
            snprintf(out, sizeof out, "%d", *flag);
        else if (parse_bool(arg, flag) != 0)
            m->err_code = 224;
    } else if (strcmp(canon, "COMM:REM") == 0 || strcmp(canon, "SYST:COMM:COMM") == 0) {
        if (query) snprintf(out, sizeof out, "1");
    } else if (strcmp(canon, "STAT:ERR") == 0 && query) {
        if (m->err_code == 0)
            snprintf(out, sizeof out, "0,\"No error\"");
        else if (m->err_code == 113)
            snprintf(out, sizeof out, "113,\"Undefined header\"");
        else
            snprintf(out, sizeof out, "%d,\"Illegal parameter value\"", m->err_code);
        m->err_code = 0;
    } else if (!wt210 && strcmp(canon, "NUM:FORM") == 0) {
        if (query)
            snprintf(out, sizeof out, "%s", m->verb ? "ASCII" : "ASC");
        else if (strncasecmp(arg, "ASC", 3) != 0)
            m->err_code = 224; /* only ASCII is emulated */
    } else if (!wt210 && strcmp(canon, "NUM:NORM:NUM") == 0) {
        if (query)
            snprintf(out, sizeof out, "%d", m->nitems);
        else {
            int n = atoi(arg);
            if (n < 1 || n > 10)
                m->err_code = 224;
            else
                m->nitems = n;
        }
    } else if (!wt210 && strcmp(canon, "NUM:NORM:ITEM") == 0) {
        if (idx < 1 || idx > 10)
            m->err_code = 224;
        else if (query) {
            item *it = &m->items[idx - 1];
            if (it->elem)
                snprintf(out, sizeof out, "%s,%d", it->func, it->elem);
            else
                snprintf(out, sizeof out, "%s,SIGMA", it->func);
        } else {
            char fn[16] = "", el[16] = "";
            const char *c = strchr(arg, ',');
            size_t fl = c ? (size_t)(c - arg) : strlen(arg);
            int e;
            if (fl == 0 || fl >= sizeof fn) {
                m->err_code = 224;
                goto reply;
            }
            for (size_t k = 0; k < fl; k++)
                fn[k] = (char)toupper((unsigned char)arg[k]);
            snprintf(el, sizeof el, "%s", c ? c + 1 : "1");
            if (strcasecmp(el, "SIGMA") == 0 || strcasecmp(el, "SIGM") == 0)
                e = 0;
            else
                e = atoi(el);
            if (isnan(yoko_func(m, fn, 1, 1.0)) || e < 0 || e > m->o.elements)
                m->err_code = 224;
            else {
                snprintf(m->items[idx - 1].func, sizeof m->items[idx - 1].func, "%s", fn);
                m->items[idx - 1].elem = e;
            }
        }
    } else if ((!wt210 && strcmp(canon, "NUM:NORM:VAL") == 0) || (wt210 && strcmp(canon, "MEAS:NORM:VAL") == 0)) {
        if (!query)
            m->err_code = 113;
        else {
            rc = yoko_values(m, out, sizeof out, wt210);
            if (rc != 0) return rc;
            /* yoko_values put the header in already */
            size_t l = strlen(rep);
            snprintf(rep + l, replen - l, "%s%s", l ? ";" : "", out);
            return 0;
        }
    } else if (wt210 && strncmp(canon, "MEAS:NORM:ITEM:", 15) == 0) {
        int k;
        for (k = 0; k < 6; k++)
            if (strcmp(canon + 15, wt210_names[k]) == 0) break;
        if (k == 6)
            m->err_code = 113;
        else if (query)
            snprintf(out, sizeof out, "%d", m->wt210_on[k]);
        else if (parse_bool(arg, &m->wt210_on[k]) != 0)
            m->err_code = 224;
    } else if (strcmp(canon, wt210 ? "CONF:VOLT:RANG" : "INP:VOLT:RANG") == 0 ||
               strcmp(canon, wt210 ? "CONF:CURR:RANG" : "INP:CURR:RANG") == 0) {
        int volt = strstr(canon, "VOLT") != NULL;
        double *r = volt ? &m->vrange : &m->arange;
        if (query)
            fmt_nr3(out, sizeof out, *r);
        else {
            char *end;
            double v = strtod(arg, &end);
            while (*end && isalpha((unsigned char)*end))
                end++; /* "300V", "2A" */
            if (end == arg || *end || !(volt ? in_list(v, vranges, 8) : in_list(v, aranges, 13)))
                m->err_code = 224;
            else {
                *r = v;
                *(volt ? &m->vauto : &m->aauto) = 0; /* setting a range turns auto off */
            }
        }
    } else if (strcmp(canon, wt210 ? "CONF:VOLT:AUTO" : "INP:VOLT:AUTO") == 0 ||
               strcmp(canon, wt210 ? "CONF:CURR:AUTO" : "INP:CURR:AUTO") == 0) {
        int *a = strstr(canon, "VOLT") ? &m->vauto : &m->aauto;
        if (query)
            snprintf(out, sizeof out, "%d", *a);
        else if (parse_bool(arg, a) != 0)
            m->err_code = 224;
    } else if (strcmp(canon, wt210 ? "CONF:CFAC" : "INP:CFAC") == 0) {
        if (query)
            snprintf(out, sizeof out, "%d", m->cfac);
        else if (strcmp(arg, "3") == 0 || strcmp(arg, "6") == 0)
            m->cfac = atoi(arg);
        else
            m->err_code = 224;
    } else if (!wt210 && strcmp(canon, "RATE") == 0) {
        if (query)
            fmt_nr3(out, sizeof out, m->rate_s);
        else {
            static const char *const rates[] = {"100MS", "250MS", "500MS", "1S", "2S", "5S"};
            static const double secs[] = {0.1, 0.25, 0.5, 1, 2, 5};
            int k;
            for (k = 0; k < 6; k++)
                if (strcasecmp(arg, rates[k]) == 0) break;
            if (k == 6)
                m->err_code = 224;
            else
                m->rate_s = secs[k];
        }
    } else {
        m->err_code = 113;
    }
reply:
    if (query && out[0]) {
        size_t l = strlen(rep);
        if (m->head && hdr[0] != '*')
            snprintf(rep + l, replen - l, "%s:%s %s", l ? ";" : "", canon, out);
        else
            snprintf(rep + l, replen - l, "%s%s", l ? ";" : "", out);
    }
    return 0;
}

/* One Yokogawa line: commands separated by ';'. */
static int yoko_line(tb_msim *m, client *c, const char *line) {
    char rep[SIM_LINE * 2] = "", one[SIM_LINE];
    const char *p = line;
    if (strcasecmp(line, "tb:count?") == 0) {
        tb_msim_counters k;
        tb_msim_get_counters(m, &k);
        tb_msim_format_counters(&k, rep, sizeof rep);
        strncat(rep, "\n", sizeof rep - strlen(rep) - 1);
        put(c, rep);
        return 0;
    }
    while (*p) {
        size_t n = strcspn(p, ";");
        int rc;
        if (n >= sizeof one) n = sizeof one - 1;
        memcpy(one, p, n);
        one[n] = '\0';
        rc = yoko_command(m, one, rep, sizeof rep);
        if (rc != 0) return rc;
        p += n;
        if (*p == ';') p++;
    }
    if (rep[0]) {
        strncat(rep, "\n", sizeof rep - strlen(rep) - 1);
        put(c, rep);
    }
    return 0;
}

/* ---- PTDaemon ---- */

/* Samples PTD has taken since Go (sample k at go + k * interval). */
static uint64_t ptd_generated(const tb_msim *m, uint64_t now) {
    if (!m->running || now < m->go_us) return 0;
    return (now - m->go_us) / m->interval_us;
}

/* Folds samples up to now into the running statistics. */
static void ptd_update_stats(tb_msim *m) {
    uint64_t gen = ptd_generated(m, tb_now_us());
    while (m->stats_upto < gen) {
        uint64_t k = ++m->stats_upto;
        double w = source_watts(m, m->go_us + k * m->interval_us);
        m->sum_w += w;
        if (k == 1 || w < m->min_w) m->min_w = w;
        if (k == 1 || w > m->max_w) m->max_w = w;
        m->unc_sum += SIM_PTD_UNC_GOOD;
        if (k == 1) m->unc_min = m->unc_max = SIM_PTD_UNC_GOOD;
    }
}

/* Sends the RL reply for the newest sample, with the fault chosen at request time. */
static int ptd_send_rl(tb_msim *m, client *c, int f) {
    char line[256], ts[64];
    uint64_t k, at;
    time_t secs;
    struct tm tm;
    int64_t wall;
    double w, u = m->o.volts, pf = m->o.pf;

    ptd_update_stats(m);
    k = m->stats_upto;
    m->last_read = k;
    at = m->go_us + k * m->interval_us;
    w = source_watts(m, at);
    if (isfinite(m->src_v)) u = m->src_v;
    if (isfinite(m->src_pf)) pf = m->src_pf;
    if (f == TB_MSIM_FAULT_NEGATIVE || f == TB_MSIM_FAULT_INCONSISTENT) {
        m->c.implausible++;
        implausible_values(m, f, &w);
    } else if (f < 0 && w < 0) {
        m->c.implausible++; /* a negative value of the trace, served as it is */
    }
    wall = tb_wall_us() - (int64_t)(tb_now_us() - at);
    secs = (time_t)(wall / 1000000);
    localtime_r(&secs, &tm);
    snprintf(ts, sizeof ts, "%02d-%02d-%04d %02d:%02d:%02d.%03d", tm.tm_mon + 1, tm.tm_mday, tm.tm_year + 1900,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)((wall / 1000) % 1000));
    m->c.served++;
    if (f == TB_MSIM_FAULT_GARBAGE) {
        m->c.garbage++;
        put(c, "Last 1 sample\r\n");
        snprintf(line, sizeof line, "T\x7fime,,,@@garbage%llu\r\n", (unsigned long long)k);
        put(c, line);
        return 0;
    }
    if (f == TB_MSIM_FAULT_NAN || f == TB_MSIM_FAULT_INF) {
        if (f == TB_MSIM_FAULT_NAN)
            m->c.nan++;
        else
            m->c.overrange++;
        m->errors++;
        snprintf(line, sizeof line,
                 "Last 1 sample\r\nTime,%s,Watts,-1.000000,Volts,-1.000000,Amps,-1.000000,PF,-1.000000\r\n", ts);
        put(c, line);
        return 0;
    }
    if (f == TB_MSIM_FAULT_UNCERTAINTY) {
        m->c.uncertain++;
        m->unc_sum += SIM_PTD_UNC_BAD - SIM_PTD_UNC_GOOD;
        m->unc_invalid++;
        if (SIM_PTD_UNC_BAD > m->unc_max) m->unc_max = SIM_PTD_UNC_BAD;
    }
    snprintf(line, sizeof line, "Last 1 sample\r\nTime,%s,Watts,%.6f,Volts,%.6f,Amps,%.6f,PF,%.6f\r\n", ts, w, u,
             isfinite(m->src_a) ? m->src_a
             : u > 0 && pf > 0  ? w / (u * pf)
                                : 0.0,
             pf);
    put(c, line);
    return 0;
}

/* Handles one PTD line. Returns 0, or 2 to disconnect. */
static int ptd_line(tb_msim *m, client *c, const char *line) {
    char out[512], buf[256], *f[8] = {0};
    int n = 0;
    char *p;

    if (strcasecmp(line, "tb:count?") == 0) {
        tb_msim_counters k;
        tb_msim_get_counters(m, &k);
        tb_msim_format_counters(&k, out, sizeof out);
        strncat(out, "\r\n", sizeof out - strlen(out) - 1);
        put(c, out);
        return 0;
    }
    snprintf(buf, sizeof buf, "%s", line);
    for (p = buf; n < 8;) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p++ = '\0';
    }
    if (strcmp(f[0], "Hello") == 0) {
        put(c, "Hello, PTDaemon here!\r\n");
    } else if (strcmp(f[0], "Identify") == 0) {
        snprintf(out, sizeof out,
                 "YokogawaWT310,%llu,1,1,1,1,0,0,1,version=1.9.2-tilebench-sim,OS=Linux,mode=power,1,1,1,0,0,"
                 "no_cal_date,YOKOGAWA;WT310;C2PH13047V;F1.03\r\n",
                 (unsigned long long)(m->o.ptd_interval_us / 1000));
        put(c, out);
    } else if (strcmp(f[0], "RR") == 0) {
        snprintf(out, sizeof out, "Ranges,%d,%g,%d,%g\r\n", m->aauto_ptd, m->aauto_ptd ? -1.0 : m->arange_ptd,
                 m->vauto_ptd, m->vauto_ptd ? -1.0 : m->vrange_ptd);
        put(c, out);
    } else if (strcmp(f[0], "SR") == 0) {
        int volt;
        double v;
        char *end;
        if (n != 3) {
            put(c, "Invalid number of parameters\r\n");
            return 0;
        }
        volt = strcmp(f[1], "V") == 0;
        if (!volt && strcmp(f[1], "A") != 0) {
            put(c, "Error in parameter\r\n");
            return 0;
        }
        if (strcasecmp(f[2], "Auto") == 0) {
            *(volt ? &m->vauto_ptd : &m->aauto_ptd) = 1;
        } else {
            v = strtod(f[2], &end);
            if (end == f[2] || *end || !(volt ? in_list(v, vranges, 8) : in_list(v, aranges, 13))) {
                put(c, "Error in parameter\r\n");
                return 0;
            }
            *(volt ? &m->vrange_ptd : &m->arange_ptd) = v;
            *(volt ? &m->vauto_ptd : &m->aauto_ptd) = 0;
        }
        put(c, volt ? "Range V changed\r\n" : "Range A changed\r\n");
    } else if (strcmp(f[0], "Go") == 0) {
        long ms, ramp;
        if (n < 3) {
            put(c, "Invalid number of parameters\r\n");
            return 0;
        }
        ms = strtol(f[1], NULL, 10);
        ramp = strtol(f[2], NULL, 10);
        if (ms < 0 || ramp < 0) {
            put(c, "Error in parameter\r\n");
            return 0;
        }
        if (m->running) {
            put(c, "Error: measurement already running\r\n");
            return 0;
        }
        m->running = 1;
        m->interval_us = ms > 0 ? (uint64_t)ms * 1000u : m->o.ptd_interval_us;
        m->go_us = tb_now_us();
        m->last_read = m->stats_upto = 0;
        m->sum_w = m->min_w = m->max_w = m->unc_sum = m->unc_min = m->unc_max = 0;
        m->unc_invalid = m->errors = 0;
        snprintf(out, sizeof out,
                 "Starting untimed measurement, maximum 500000 samples at %llums with %ld rampup samples\r\n",
                 (unsigned long long)(m->interval_us / 1000), ramp);
        put(c, out);
    } else if (strcmp(f[0], "Stop") == 0) {
        if (!m->running)
            put(c, "Error: no measurement to stop\r\n");
        else {
            m->running = 0;
            for (int i = 0; i < SIM_MAX_CLIENTS; i++)
                if (m->clients[i]) m->clients[i]->rl_pending = 0;
            put(c, "Stopping untimed measurement\r\n");
        }
    } else if (strcmp(f[0], "Watts") == 0) {
        ptd_update_stats(m);
        if (m->stats_upto == 0) {
            put(c, "Watts,-1.000000,-1.000000,-1.000000,0,0,0\r\n");
        } else {
            snprintf(out, sizeof out, "Watts,%.6f,%.6f,%.6f,%llu,%llu,%llu\r\n", m->sum_w / (double)m->stats_upto,
                     m->min_w, m->max_w, (unsigned long long)m->stats_upto, (unsigned long long)m->errors,
                     (unsigned long long)(m->stats_upto - m->errors));
            put(c, out);
        }
    } else if (strcmp(f[0], "Uncertainty") == 0 || strcmp(f[0], "Accuracy") == 0) {
        ptd_update_stats(m);
        if (m->stats_upto == 0) {
            snprintf(out, sizeof out, "%s,-1.000000,-1.000000,-1.000000,0,0,0,0\r\n", f[0]);
        } else {
            uint64_t tot = m->stats_upto;
            snprintf(out, sizeof out, "%s,%.6f,%.6f,%.6f,%llu,%llu,%llu,0\r\n", f[0], m->unc_sum / (double)tot,
                     m->unc_min, m->unc_max, (unsigned long long)tot, (unsigned long long)m->unc_invalid,
                     (unsigned long long)(tot - m->unc_invalid));
        }
        put(c, out);
    } else if (strcmp(f[0], "RL") == 0) {
        uint64_t req;
        int fk;
        if (!m->running) {
            put(c, "No data\r\n");
            return 0;
        }
        req = ++m->c.requests;
        fk = fault_for(m, req, 1);
        if (fk == TB_MSIM_FAULT_STALL) {
            m->c.stalled++;
            return 0;
        }
        if (fk == TB_MSIM_FAULT_DISCONNECT) {
            m->c.disconnects++;
            return 2;
        }
        ptd_update_stats(m);
        if (m->stats_upto > m->last_read) return ptd_send_rl(m, c, fk);
        c->rl_pending = 1; /* wait for the next sample, as PTD does */
        c->rl_fault = fk;
    } else {
        put(c, "Unknown command\r\n");
    }
    return 0;
}

/* ---- the loop ---- */

static void handle_input(tb_msim *m, int i) {
    client *c = m->clients[i];
    for (;;) {
        char *nl = memchr(c->in, '\n', c->have);
        char line[SIM_LINE];
        size_t n, used;
        int rc;
        if (!nl) {
            if (c->have >= sizeof c->in - 1) c->have = 0; /* a runaway line: forget it */
            return;
        }
        used = (size_t)(nl - c->in) + 1;
        n = used - 1;
        if (n > 0 && c->in[n - 1] == '\r') n--;
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, c->in, n);
        line[n] = '\0';
        memmove(c->in, c->in + used, c->have - used);
        c->have -= used;
        if (c->rl_pending) continue; /* a PTD client talking while it waits: ignore */
        rc = m->o.protocol == TB_MSIM_PTD ? ptd_line(m, c, line) : yoko_line(m, c, line);
        if (rc == 2) {
            drop_client(m, i);
            return;
        }
    }
}

int tb_msim_run(tb_msim *m, volatile sig_atomic_t *stop, volatile sig_atomic_t *dump, FILE *out, char *err) {
    struct pollfd pfd[SIM_MAX_CLIENTS + 1];
    int map[SIM_MAX_CLIENTS + 1];

    m->out = out;
    while (!*stop) {
        int n = 0, timeout = 200, rc;
        if (dump && *dump) {
            tb_msim_counters k;
            char line[512];
            *dump = 0;
            tb_msim_get_counters(m, &k);
            tb_msim_format_counters(&k, line, sizeof line);
            fprintf(out, "counters: %s\n", line);
            fflush(out);
        }
        /* Pending RLs: answer those whose sample has come; sleep until the next. */
        if (m->o.protocol == TB_MSIM_PTD && m->running) {
            uint64_t now = tb_now_us(), next;
            for (int i = 0; i < SIM_MAX_CLIENTS; i++) {
                client *c = m->clients[i];
                if (!c || !c->rl_pending) continue;
                if (ptd_generated(m, now) > m->last_read) {
                    c->rl_pending = 0;
                    (void)ptd_send_rl(m, c, c->rl_fault);
                }
            }
            next = m->go_us + (ptd_generated(m, now) + 1) * m->interval_us;
            if (next > now && (next - now) / 1000 + 1 < (uint64_t)timeout) timeout = (int)((next - now) / 1000 + 1);
        }
        pfd[n].fd = m->lfd;
        pfd[n].events = POLLIN;
        map[n++] = -1;
        for (int i = 0; i < SIM_MAX_CLIENTS; i++) {
            if (!m->clients[i]) continue;
            pfd[n].fd = m->clients[i]->fd;
            pfd[n].events = POLLIN;
            map[n++] = i;
        }
        rc = poll(pfd, (nfds_t)n, timeout);
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0) {
            tb_seterr(err, "poll: %s", strerror(errno));
            return -1;
        }
        for (int k = 0; k < n; k++) {
            if (!pfd[k].revents) continue;
            if (map[k] < 0) {
                int fd = accept(m->lfd, NULL, NULL);
                int slot;
                if (fd < 0) continue;
                for (slot = 0; slot < SIM_MAX_CLIENTS && m->clients[slot]; slot++) {
                }
                if (slot == SIM_MAX_CLIENTS) {
                    close(fd);
                    continue;
                }
                (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                m->clients[slot] = xcalloc(1, sizeof(client));
                m->clients[slot]->fd = fd;
                m->clients[slot]->is_socket = 1;
                m->c.connections++;
                continue;
            }
            {
                client *c = m->clients[map[k]];
                ssize_t r;
                if (!c) continue;
                r = read(c->fd, c->in + c->have, sizeof c->in - 1 - c->have);
                if (r > 0) {
                    c->have += (size_t)r;
                    handle_input(m, map[k]);
                } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                    if (c->is_socket)
                        drop_client(m, map[k]);
                    else {
                        struct timespec ts = {0, 50000000}; /* pty without a reader: do not spin */
                        nanosleep(&ts, NULL);
                    }
                }
            }
        }
    }
    return 0;
}
