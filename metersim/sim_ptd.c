/*
 * sim_ptd.c: the SPEC PTDaemon dialect of the emulator (sim_private.h).
 *
 * Subset served: Hello, Identify, RR, SR,V|A,x, Go,ms,rampup[,mark], Stop,
 * Watts, Uncertainty (and Accuracy), RL[,N]; anything else "Unknown
 * command". Samples are taken on PTD's own clock from Go; RL returns the
 * newest unread one and waits up to one interval when there is none, as PTD
 * does (per SPEC's PTDaemon harness notes on RL).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "metersim/sim_private.h"

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
        double w = sim_source_watts(m, m->go_us + k * m->interval_us);
        m->sum_w += w;
        if (k == 1 || w < m->min_w) m->min_w = w;
        if (k == 1 || w > m->max_w) m->max_w = w;
        m->unc_sum += SIM_PTD_UNC_GOOD;
        if (k == 1) m->unc_min = m->unc_max = SIM_PTD_UNC_GOOD;
    }
}

/* PTD's sample time stamp ("MM-DD-YYYY hh:mm:ss.mmm", local time) of the sample taken at at_us. */
static void ptd_timestamp(uint64_t at_us, char *ts, size_t len) {
    int64_t wall = tb_wall_us() - (int64_t)(tb_now_us() - at_us);
    time_t secs = (time_t)(wall / 1000000);
    struct tm tm;
    localtime_r(&secs, &tm);
    snprintf(ts, len, "%02d-%02d-%04d %02d:%02d:%02d.%03d", tm.tm_mon + 1, tm.tm_mday, tm.tm_year + 1900, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (int)((wall / 1000) % 1000));
}

/* Sends an RL reply with fault f that carries no values (garbage, no data,
 * over-range). Returns 1 when it did, 0 for a fault that keeps the values. */
static int ptd_send_fault(tb_msim *m, client *c, int f, uint64_t k, const char *ts) {
    char line[256];
    if (f == TB_MSIM_FAULT_GARBAGE) {
        m->c.garbage++;
        sim_put(c, "Last 1 sample\r\n");
        snprintf(line, sizeof line, "T\x7fime,,,@@garbage%llu\r\n", (unsigned long long)k);
        sim_put(c, line);
        return 1;
    }
    if (f == TB_MSIM_FAULT_NAN || f == TB_MSIM_FAULT_INF) {
        if (f == TB_MSIM_FAULT_NAN)
            m->c.nan++;
        else
            m->c.overrange++;
        m->errors++;
        snprintf(line, sizeof line,
                 "Last 1 sample\r\nTime,%s,Watts,-1.000000,Volts,-1.000000,Amps,-1.000000,PF,-1.000000\r\n", ts);
        sim_put(c, line);
        return 1;
    }
    return 0;
}

/* Appends the multi-channel groups ",Ch1,Watts,x,Volts,x,Amps,x,PF,x" to line:
 * W and A split over the elements (evenly, or by --split), fault chf (nan or
 * negative, or -1) on o.fault_channel alone. */
static void ptd_channels(const tb_msim *m, char *line, size_t len, double w, double u, double a, double pf, int chf) {
    int n = m->o.elements;
    for (int e = 1; e <= n; e++) {
        size_t used = strlen(line);
        double cw = w * sim_share(m, e), ca = a * sim_share(m, e);
        if (e == m->o.fault_channel && chf == TB_MSIM_FAULT_NAN) cw = ca = -1.0;
        if (e == m->o.fault_channel && chf == TB_MSIM_FAULT_NEGATIVE) cw = SIM_NEG_W, ca = SIM_NEG_A;
        if (used + 2 >= len) return;
        line[used - 2] = '\0'; /* before the CR LF */
        snprintf(line + used - 2, len - used + 2, ",Ch%d,Watts,%.6f,Volts,%.6f,Amps,%.6f,PF,%.6f\r\n", e, cw, u, ca,
                 pf);
    }
}

/* Sends the RL reply for the newest sample, with the fault chosen at request time. */
static void ptd_send_rl(tb_msim *m, client *c, int f) {
    char line[768], ts[64];
    uint64_t k, at;
    double w, u = m->o.volts, pf = m->o.pf, a;
    int chf = -1;

    ptd_update_stats(m);
    k = m->stats_upto;
    m->last_read = k;
    at = m->go_us + k * m->interval_us;
    w = sim_source_watts(m, at);
    if (isfinite(m->src_v)) u = m->src_v;
    if (isfinite(m->src_pf)) pf = m->src_pf;
    if (m->o.elements > 1 && m->o.fault_channel > 0 && (f == TB_MSIM_FAULT_NAN || f == TB_MSIM_FAULT_NEGATIVE)) {
        chf = f; /* one channel's reading is bad, the others and the line stand */
        f = -1;
        if (chf == TB_MSIM_FAULT_NAN)
            m->c.nan++;
        else
            m->c.implausible++;
    }
    if (f == TB_MSIM_FAULT_NEGATIVE || f == TB_MSIM_FAULT_INCONSISTENT) {
        m->c.implausible++;
        sim_implausible_values(m, f, &w);
    } else if (f < 0 && w < 0) {
        m->c.implausible++; /* a negative value of the trace, served as it is */
    }
    ptd_timestamp(at, ts, sizeof ts);
    a = isfinite(m->src_a) ? m->src_a : u > 0 && pf > 0 ? w / (u * pf) : 0.0;
    /* A fixed range too small for an input (the largest element's share of
     * the current: SR's range applies to every element): the analyzer
     * over-ranges, and PTDaemon serves the sample as one it could not read,
     * as the inf fault does (the emulator's model). */
    if (f < 0 && ((!m->vauto_ptd && u > SIM_OVER_RANGE * m->vrange_ptd) ||
                  (!m->aauto_ptd && fabs(a) * sim_max_share(m) > SIM_OVER_RANGE * m->arange_ptd)))
        f = TB_MSIM_FAULT_INF;
    m->c.served++;
    if (ptd_send_fault(m, c, f, k, ts)) return;
    if (f == TB_MSIM_FAULT_UNCERTAINTY) {
        m->c.uncertain++;
        m->unc_sum += SIM_PTD_UNC_BAD - SIM_PTD_UNC_GOOD;
        m->unc_invalid++;
        if (SIM_PTD_UNC_BAD > m->unc_max) m->unc_max = SIM_PTD_UNC_BAD;
    }
    snprintf(line, sizeof line, "Last 1 sample\r\nTime,%s,Watts,%.6f,Volts,%.6f,Amps,%.6f,PF,%.6f\r\n", ts, w, u, a,
             pf);
    if (m->o.elements > 1) ptd_channels(m, line, sizeof line, w, u, a, pf, chf);
    sim_put(c, line);
}

void sim_ptd_pending(tb_msim *m, int *timeout_ms) {
    uint64_t now = tb_now_us(), next;
    if (m->o.protocol != TB_MSIM_PTD || !m->running) return;
    for (int i = 0; i < SIM_MAX_CLIENTS; i++) {
        client *c = m->clients[i];
        if (!c || !c->rl_pending) continue;
        if (ptd_generated(m, now) > m->last_read) {
            c->rl_pending = 0;
            ptd_send_rl(m, c, c->rl_fault);
        }
    }
    next = m->go_us + (ptd_generated(m, now) + 1) * m->interval_us;
    if (next > now && (next - now) / 1000 + 1 < (uint64_t)*timeout_ms) *timeout_ms = (int)((next - now) / 1000 + 1);
}

/* ---- the commands; f[0] is the command, f[1..n-1] its parameters ---- */

static int ptd_hello(tb_msim *m, client *c, char **f, int n) {
    (void)m, (void)f, (void)n;
    sim_put(c, "Hello, PTDaemon here!\r\n");
    return SIM_REPLY;
}

static int ptd_identify(tb_msim *m, client *c, char **f, int n) {
    char out[512];
    /* Several elements: a WT332E or WT333E, which PTDaemon names multichannel. */
    const char *dev = m->o.elements > 1 ? "YokogawaWT330_multichannel" : "YokogawaWT310";
    const char *idn = m->o.elements == 3   ? "YOKOGAWA;WT333E;C3VD30030E;F1.04"
                      : m->o.elements == 2 ? "YOKOGAWA;WT332E;C3VD30031E;F1.04"
                                           : "YOKOGAWA;WT310;C2PH13047V;F1.03";
    (void)f, (void)n;
    snprintf(out, sizeof out,
             "%s,%llu,1,1,1,1,0,0,1,version=1.9.2-tilebench-sim,OS=Linux,mode=power,1,1,1,0,0,"
             "no_cal_date,%s\r\n",
             dev, (unsigned long long)(m->o.ptd_interval_us / 1000), idn);
    sim_put(c, out);
    return SIM_REPLY;
}

/* RR: read ranges (-1 when auto). */
static int ptd_read_ranges(tb_msim *m, client *c, char **f, int n) {
    char out[512];
    (void)f, (void)n;
    snprintf(out, sizeof out, "Ranges,%d,%g,%d,%g\r\n", m->aauto_ptd, m->aauto_ptd ? -1.0 : m->arange_ptd, m->vauto_ptd,
             m->vauto_ptd ? -1.0 : m->vrange_ptd);
    sim_put(c, out);
    return SIM_REPLY;
}

/* SR,V|A,value|Auto: set a range. */
static int ptd_set_range(tb_msim *m, client *c, char **f, int n) {
    int volt;
    double v;
    char *end;
    if (n != 3) {
        sim_put(c, "Invalid number of parameters\r\n");
        return SIM_REPLY;
    }
    volt = strcmp(f[1], "V") == 0;
    if (!volt && strcmp(f[1], "A") != 0) {
        sim_put(c, "Error in parameter\r\n");
        return SIM_REPLY;
    }
    if (strcasecmp(f[2], "Auto") == 0) {
        *(volt ? &m->vauto_ptd : &m->aauto_ptd) = 1;
    } else {
        v = strtod(f[2], &end);
        if (end == f[2] || *end || !sim_range_ok(volt, v)) {
            sim_put(c, "Error in parameter\r\n");
            return SIM_REPLY;
        }
        *(volt ? &m->vrange_ptd : &m->arange_ptd) = v;
        *(volt ? &m->vauto_ptd : &m->aauto_ptd) = 0;
    }
    sim_put(c, volt ? "Range V changed\r\n" : "Range A changed\r\n");
    return SIM_REPLY;
}

/* Go,interval_ms,rampup_samples[,mark]: start an untimed measurement. */
static int ptd_go(tb_msim *m, client *c, char **f, int n) {
    char out[512];
    long ms, ramp;
    if (n < 3) {
        sim_put(c, "Invalid number of parameters\r\n");
        return SIM_REPLY;
    }
    ms = strtol(f[1], NULL, 10);
    ramp = strtol(f[2], NULL, 10);
    if (ms < 0 || ramp < 0) {
        sim_put(c, "Error in parameter\r\n");
        return SIM_REPLY;
    }
    if (m->running) {
        sim_put(c, "Error: measurement already running\r\n");
        return SIM_REPLY;
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
    sim_put(c, out);
    return SIM_REPLY;
}

static int ptd_stop(tb_msim *m, client *c, char **f, int n) {
    (void)f, (void)n;
    if (!m->running) {
        sim_put(c, "Error: no measurement to stop\r\n");
        return SIM_REPLY;
    }
    m->running = 0;
    for (int i = 0; i < SIM_MAX_CLIENTS; i++)
        if (m->clients[i]) m->clients[i]->rl_pending = 0;
    sim_put(c, "Stopping untimed measurement\r\n");
    return SIM_REPLY;
}

/* Watts: average, min, max, samples, errors, good samples since Go. */
static int ptd_watts(tb_msim *m, client *c, char **f, int n) {
    char out[512];
    (void)f, (void)n;
    ptd_update_stats(m);
    if (m->stats_upto == 0) {
        sim_put(c, "Watts,-1.000000,-1.000000,-1.000000,0,0,0\r\n");
        return SIM_REPLY;
    }
    snprintf(out, sizeof out, "Watts,%.6f,%.6f,%.6f,%llu,%llu,%llu\r\n", m->sum_w / (double)m->stats_upto, m->min_w,
             m->max_w, (unsigned long long)m->stats_upto, (unsigned long long)m->errors,
             (unsigned long long)(m->stats_upto - m->errors));
    sim_put(c, out);
    return SIM_REPLY;
}

/* Uncertainty (or Accuracy): average, min, max, samples, invalid, valid, 0. */
static int ptd_uncertainty(tb_msim *m, client *c, char **f, int n) {
    char out[512];
    (void)n;
    ptd_update_stats(m);
    if (m->stats_upto == 0) {
        snprintf(out, sizeof out, "%s,-1.000000,-1.000000,-1.000000,0,0,0,0\r\n", f[0]);
    } else {
        uint64_t tot = m->stats_upto;
        snprintf(out, sizeof out, "%s,%.6f,%.6f,%.6f,%llu,%llu,%llu,0\r\n", f[0], m->unc_sum / (double)tot, m->unc_min,
                 m->unc_max, (unsigned long long)tot, (unsigned long long)m->unc_invalid,
                 (unsigned long long)(tot - m->unc_invalid));
    }
    sim_put(c, out);
    return SIM_REPLY;
}

/* RL: the newest unread sample, or wait for the next one. */
static int ptd_read_last(tb_msim *m, client *c, char **f, int n) {
    uint64_t req;
    int fk;
    (void)f, (void)n;
    if (!m->running) {
        sim_put(c, "No data\r\n");
        return SIM_REPLY;
    }
    req = ++m->c.requests;
    fk = sim_fault_for(m, req, 1);
    if (fk == TB_MSIM_FAULT_STALL) {
        m->c.stalled++;
        return SIM_REPLY;
    }
    if (fk == TB_MSIM_FAULT_DISCONNECT) {
        m->c.disconnects++;
        return SIM_DISCONNECT;
    }
    ptd_update_stats(m);
    if (m->stats_upto > m->last_read) {
        ptd_send_rl(m, c, fk);
        return SIM_REPLY;
    }
    c->rl_pending = 1; /* wait for the next sample, as PTD does */
    c->rl_fault = fk;
    return SIM_REPLY;
}

static const struct {
    const char *name; /* case-sensitive, as PTD's */
    int (*run)(tb_msim *m, client *c, char **f, int n);
} commands[] = {
    {"Hello", ptd_hello},
    {"Identify", ptd_identify},
    {"RR", ptd_read_ranges},
    {"SR", ptd_set_range},
    {"Go", ptd_go},
    {"Stop", ptd_stop},
    {"Watts", ptd_watts},
    {"Uncertainty", ptd_uncertainty},
    {"Accuracy", ptd_uncertainty},
    {"RL", ptd_read_last},
};

int sim_ptd_line(tb_msim *m, client *c, const char *line) {
    char buf[256], *f[8] = {0};
    int n = 0;
    char *p;

    if (strcasecmp(line, "tb:count?") == 0) {
        sim_put_counters(m, c, "\r\n");
        return SIM_REPLY;
    }
    snprintf(buf, sizeof buf, "%s", line);
    for (p = buf; n < 8;) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p++ = '\0';
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(f[0], commands[i].name) == 0) return commands[i].run(m, c, f, n);
    sim_put(c, "Unknown command\r\n");
    return SIM_REPLY;
}
