/*
 * sim_source.c: what the emulator serves: the load model (a constant, a
 * trace file or an estimate of the host's CPU), the faults injected into
 * every Nth value request, and the counters of what was served
 * (meter_sim.h, sim_private.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "metersim/sim_private.h"
#include "powermeter/proctree.h"

#include <unistd.h>

/* ---- trace ---- */

/* One line of a trace; v, a and pf are NaN where it gives only "t,W". */
typedef struct point {
    double t, w, v, a, pf;
} point;

struct tb_msim_trace {
    point *p;
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

/* Parses one trace line (comments and blank lines already skipped) into pt.
 * Returns 0, 1 for a header line to skip, or -1 with err. */
static int trace_point(char *p, const char *path, size_t lineno, const tb_buf *pts, point *pt, char *err) {
    const point *prev = pts->len ? (const point *)(const void *)(pts->ptr + pts->len - sizeof *pt) : NULL;
    char *end;
    double vapf[3];
    errno = 0;
    pt->t = strtod(p, &end);
    if (end == p || !isfinite(pt->t) || pt->t < 0) {
        /* A header line ("time,watts") is allowed first. */
        if (!prev && isalpha((unsigned char)*p)) return 1;
        tb_seterr(err, "%s:%zu: time '%.20s' is not a number of seconds >= 0", path, lineno, p);
        return -1;
    }
    p = end;
    while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';')
        p++;
    /* Negative watts are allowed: the emulator serves what it is told,
     * so tests can feed tilebench implausible readings. */
    pt->w = strtod(p, &end);
    if (end == p || !isfinite(pt->w)) {
        tb_seterr(err, "%s:%zu: watts '%.20s' is not a number", path, lineno, p);
        return -1;
    }
    if (trace_vapf(end, path, lineno, vapf, err) != 0) return -1;
    if (prev && pt->t <= prev->t) {
        tb_seterr(err, "%s:%zu: time %g s is not after the previous %g s", path, lineno, pt->t, prev->t);
        return -1;
    }
    pt->v = vapf[0];
    pt->a = vapf[1];
    pt->pf = vapf[2];
    return 0;
}

int tb_msim_trace_load(const char *path, tb_msim_trace **out, char *err) {
    FILE *f = fopen(path, "r");
    char line[256];
    size_t lineno = 0;
    tb_buf pts;

    *out = NULL;
    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    tb_buf_init(&pts, 0);
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        point pt;
        int rc;
        lineno++;
        line[strcspn(line, "\r\n")] = '\0'; /* so messages quote the value alone */
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#') continue;
        rc = trace_point(p, path, lineno, &pts, &pt, err);
        if (rc == 1) continue;
        if (rc == 0 && tb_buf_add(&pts, &pt, sizeof pt) != 0) {
            tb_seterr(err, "%s:%zu: more than %zu points", path, lineno, pts.max / sizeof pt);
            rc = -1;
        }
        if (rc != 0) {
            fclose(f);
            tb_buf_free(&pts);
            return -1;
        }
    }
    fclose(f);
    if (pts.len == 0) {
        tb_seterr(err, "%s: no 'time,watts' lines", path);
        tb_buf_free(&pts);
        return -1;
    }
    *out = xcalloc(1, sizeof **out);
    (*out)->n = pts.len / sizeof(point);
    (*out)->p = (point *)(void *)tb_buf_take(&pts, NULL);
    return 0;
}

/* Index of the trace point in force at t_s (see tb_msim_trace_watts). */
static size_t trace_at(const tb_msim_trace *tr, double t_s, int loop) {
    size_t lo = 0, hi;
    double last = tr->p[tr->n - 1].t;
    if (loop && last > 0 && t_s >= last) t_s = fmod(t_s, last);
    if (t_s < tr->p[0].t) return 0;
    hi = tr->n; /* find the last index with t <= t_s */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->p[mid].t <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double tb_msim_trace_watts(const tb_msim_trace *tr, double t_s, int loop) { return tr->p[trace_at(tr, t_s, loop)].w; }

void tb_msim_trace_free(tb_msim_trace *tr) {
    if (!tr) return;
    free(tr->p);
    free(tr);
}

/* ---- the source ---- */

int sim_tree_open(tb_msim *m, char *err) {
    char e[TB_ERR_LEN];
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    int found = tb_proctree_cpu(m->o.cpu_of, m->o.n_cpu_of, &m->tree_cpu_s, e);
    if (found < 0) {
        tb_seterr(err, "cpu-of: %s", e);
        return -1;
    }
    if (found == 0) {
        tb_seterr(err, "cpu-of: none of the %d processes exists", m->o.n_cpu_of);
        return -1;
    }
    m->ncpu = n > 0 ? (int)n : 1;
    m->tree_us = tb_now_us();
    m->cpu_last_w = m->o.cpu_idle_w;
    return 0;
}

/* --cpu-of: IDLE + (MAX - IDLE) x u, u the trees' CPU time since the last
 * reading over (that interval x online CPUs), clamped to [0, 1]. A tree
 * that lost a process (reparented away) gives a negative delta: u = 0. */
static double tree_watts(tb_msim *m) {
    uint64_t now = tb_now_us();
    double cpu, u;
    char e[TB_ERR_LEN];
    if (now - m->tree_us < SIM_TREE_MIN_US || tb_proctree_cpu(m->o.cpu_of, m->o.n_cpu_of, &cpu, e) < 0)
        return m->cpu_last_w;
    u = (cpu - m->tree_cpu_s) / ((double)(now - m->tree_us) / 1e6 * m->ncpu);
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    m->tree_cpu_s = cpu;
    m->tree_us = now;
    m->cpu_last_w = m->o.cpu_idle_w + (m->o.cpu_max_w - m->o.cpu_idle_w) * u;
    return m->cpu_last_w;
}

double sim_source_watts(tb_msim *m, uint64_t at_us) {
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
        const point *pt = &m->trace->p[trace_at(m->trace, t, m->o.trace_loop)];
        m->src_v = pt->v;
        m->src_a = pt->a;
        m->src_pf = pt->pf;
        return pt->w;
    }
    if (m->o.n_cpu_of > 0) return tree_watts(m);
    if (m->cpu) {
        tb_sample s;
        char e[TB_ERR_LEN];
        if (tb_meter_sample(m->cpu, &s, e) == 0 && !(s.flags & TB_SAMPLE_BAD) && isfinite(s.watts))
            m->cpu_last_w = s.watts;
        return m->cpu_last_w;
    }
    return m->o.watts;
}

/*
 * The implausible faults, applied to the values about to be served (through
 * src_*, which sim_source_watts resets for the next reply): negative serves
 * the WT310E field bug's reading (mlcommons/power-dev#253), -27.1 W and
 * -3.199 A whatever the source; inconsistent keeps W and doubles the
 * current, so V x A x PF is twice W.
 */
void sim_implausible_values(tb_msim *m, int f, double *total_w) {
    double u = isfinite(m->src_v) ? m->src_v : m->o.volts, pf = isfinite(m->src_pf) ? m->src_pf : m->o.pf;
    if (f == TB_MSIM_FAULT_NEGATIVE) {
        *total_w = SIM_NEG_W;
        m->src_a = SIM_NEG_A;
    } else {
        m->src_a = 2.0 * (isfinite(m->src_a) ? m->src_a : u > 0 && pf > 0 ? *total_w / (u * pf) : 0);
    }
}

double sim_share(const tb_msim *m, int e) {
    int n = m->o.elements > 0 ? m->o.elements : 1;
    if (e < 1 || e > n || e > 3) return 0;
    return m->o.split[0] > 0 ? m->o.split[e - 1] : 1.0 / n;
}

double sim_max_share(const tb_msim *m) {
    double s = 0;
    for (int e = 1; e <= m->o.elements && e <= 3; e++)
        s = fmax(s, sim_share(m, e));
    return s > 0 ? s : 1.0;
}

/* ---- faults ---- */

static const char *const fault_names[TB_MSIM_FAULT_KINDS] = {"nan",        "inf",         "garbage",  "stall",
                                                             "disconnect", "uncertainty", "negative", "inconsistent"};

const char *tb_msim_fault_name(int kind) { return kind >= 0 && kind < TB_MSIM_FAULT_KINDS ? fault_names[kind] : "?"; }

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

int sim_fault_for(const tb_msim *m, uint64_t n, int ptd) {
    for (int i = 0; i < m->o.nfaults; i++) {
        if (n % m->o.faults[i].every != 0) continue;
        if (m->o.faults[i].kind == TB_MSIM_FAULT_UNCERTAINTY && !ptd) continue;
        return m->o.faults[i].kind;
    }
    return -1;
}

/* ---- options and counters ---- */

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

void tb_msim_get_counters(const tb_msim *m, tb_msim_counters *c) {
    *c = m->c;
    c->valid = c->served - c->nan - c->overrange - c->garbage - c->uncertain - c->implausible;
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
