/*
 * telemetry.c: host telemetry (see telemetry.h): local counter snapshots
 * from /proc and /sys under a root prefix, the sample between two
 * snapshots, steady-state aggregates, and the 1 Hz sampler thread.
 *
 * Why counters and deltas: /proc/stat, cpuidle's time and APERF/MPERF are
 * all cumulative, so a sample covers its whole interval exactly (what sar
 * and turbostat do) instead of one instant. cpufreq's scaling_cur_freq is
 * the exception, an instantaneous reading, which is why APERF/MPERF wins
 * when the msr device is readable.
 */
#include "powermeter/telemetry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "powermeter/meter.h"
#include "powermeter/node_exporter.h"
#include "common/redact.h"

#define MAX_CPUS          4096
#define MSR_TSC           0x10 /* IA32_TIME_STAMP_COUNTER */
#define MSR_MPERF         0xE7 /* IA32_MPERF (AMD: MPERF too) */
#define MSR_APERF         0xE8 /* IA32_APERF */
#define SCRAPE_TIMEOUT_MS 800  /* below the 1 s interval, so a slow scrape skips rather than piles up */

const char *tb_telem_freq_source_name(tb_freq_source s) {
    switch (s) {
    case TB_FREQ_CPUFREQ: return "cpufreq";
    case TB_FREQ_APERF_MPERF: return "aperf/mperf";
    case TB_FREQ_NODE_EXPORTER: return "node_exporter";
    case TB_FREQ_NONE:
    default: return "n/a";
    }
}

void tb_telemetry_clear(tb_telemetry *t) {
    memset(t, 0, sizeof *t);
    t->cpu_util_pct = NAN;
    t->avg_freq_mhz = NAN;
    for (int m = 0; m < TB_CPU_NMODES; m++)
        t->mode_pct[m] = NAN;
}

/* ---- local snapshot ---------------------------------------------------------------- */

/* Reads the first line of root/rel into buf without its newline. 0 or -1. */
static int read_line(const char *root, const char *rel, char *buf, size_t len) {
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (!(f = fopen(path, "r"))) return -1;
    if (!fgets(buf, (int)len, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* An unsigned decimal file (cpufreq kHz, cpuidle µs). 0 or -1. */
static int read_u64(const char *root, const char *rel, uint64_t *v) {
    char buf[64], *end;
    if (read_line(root, rel, buf, sizeof buf) != 0) return -1;
    errno = 0;
    *v = strtoull(buf, &end, 10);
    return end == buf || errno ? -1 : 0;
}

/* proc/stat: the aggregate "cpu" line, and the number of "cpuN" lines. */
static int read_stat(const char *root, tb_telem_snap *s, char *err) {
    char path[1024], line[1024];
    FILE *f;
    long hz = sysconf(_SC_CLK_TCK);
    int got = 0;
    snprintf(path, sizeof path, "%s/proc/stat", root);
    if (!(f = fopen(path, "r"))) {
        tb_seterr(err, "telemetry: %s: %s", path, strerror(errno));
        return -1;
    }
    if (hz <= 0) hz = 100;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu ", 4) == 0) {
            char *p = line + 4, *end;
            int n;
            /* guest and guest_nice (fields 9, 10) are already inside user and nice */
            for (n = 0; n < TB_CPU_NMODES; n++) {
                unsigned long long v;
                errno = 0;
                v = strtoull(p, &end, 10);
                if (end == p || errno) break;
                s->cpu_s[n] = (double)v / (double)hz;
                p = end;
            }
            if (n < 4) {
                fclose(f);
                tb_seterr(err, "telemetry: %s: the 'cpu' line has %d fields, expected at least 4", path, n);
                return -1;
            }
            got = 1;
        } else if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
            s->n_cpus++;
        }
    }
    fclose(f);
    if (!got) {
        tb_seterr(err, "telemetry: %s: no aggregate 'cpu' line", path);
        return -1;
    }
    s->have_cpu = 1;
    return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The cpuN directories under sys/devices/system/cpu, sorted. Returns the count. */
static int list_cpus(const char *root, int *ids, int cap) {
    char path[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(path, sizeof path, "%s/sys/devices/system/cpu", root);
    if (!(d = opendir(path))) return 0;
    while ((e = readdir(d)) && n < cap) {
        char *end;
        long id;
        if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9') continue;
        id = strtol(e->d_name + 3, &end, 10);
        if (*end || id < 0 || id >= MAX_CPUS) continue;
        ids[n++] = (int)id;
    }
    closedir(d);
    qsort(ids, (size_t)n, sizeof *ids, cmp_int);
    return n;
}

static int pread_u64(int fd, off_t off, uint64_t *v) {
    return pread(fd, v, sizeof *v, off) == (ssize_t)sizeof *v ? 0 : -1;
}

/* APERF/MPERF of every CPU through dev/cpu/N/msr (root and the msr module
 * needed). All or nothing: a partial sum would mix CPUs between snapshots. */
static int read_msr(const char *root, const int *cpus, int n, tb_telem_snap *s) {
    uint64_t aperf = 0, mperf = 0, tsc = 0;
    if (n == 0) return -1;
    for (int i = 0; i < n; i++) {
        char path[1024];
        uint64_t a, m, t;
        int fd, bad;
        snprintf(path, sizeof path, "%s/dev/cpu/%d/msr", root, cpus[i]);
        if ((fd = open(path, O_RDONLY)) < 0) return -1;
        bad = pread_u64(fd, MSR_APERF, &a) || pread_u64(fd, MSR_MPERF, &m) || (i == 0 && pread_u64(fd, MSR_TSC, &t));
        close(fd);
        if (bad) return -1;
        if (i == 0) tsc = t;
        aperf += a;
        mperf += m;
    }
    s->tsc = tsc;
    s->aperf = aperf;
    s->mperf = mperf;
    s->freq_src = TB_FREQ_APERF_MPERF;
    return 0;
}

/* Mean scaling_cur_freq (kHz) of the CPUs that have one. */
static void read_cpufreq(const char *root, const int *cpus, int n, tb_telem_snap *s) {
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        char rel[128];
        uint64_t khz;
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpus[i]);
        if (read_u64(root, rel, &khz) != 0) continue;
        sum += (double)khz / 1000.0;
        k++;
    }
    if (k > 0) {
        s->freq_mhz = sum / k;
        s->freq_src = TB_FREQ_CPUFREQ;
    }
}

/* cpuidle residency: stateK's time (µs) summed over CPUs; names from the
 * first CPU that has cpuidle (turbostat does the same). */
static void read_cpuidle(const char *root, const int *cpus, int n, tb_telem_snap *s) {
    for (int i = 0; i < n; i++) {
        int k, have = 0;
        for (k = 0; k < TB_TELEM_MAX_CSTATES; k++) {
            char rel[160], name[TB_TELEM_NAME_LEN];
            uint64_t us;
            snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/time", cpus[i], k);
            if (read_u64(root, rel, &us) != 0) break;
            snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/name", cpus[i], k);
            if (read_line(root, rel, name, sizeof name) != 0) snprintf(name, sizeof name, "state%d", k);
            if (s->cstate_cpus == 0) {
                if (k >= s->n_cstates) s->n_cstates = k + 1;
                snprintf(s->cstate_name[k], sizeof s->cstate_name[k], "%s", name);
            } else if (k >= s->n_cstates || strcmp(name, s->cstate_name[k]) != 0) {
                continue; /* a state the first CPU does not have: not comparable */
            }
            s->cstate_us[k] += (double)us;
            have = 1;
        }
        if (have) s->cstate_cpus++;
    }
}

int tb_telem_read_local(const char *root, tb_telem_snap *s, char *err) {
    int *ids = xmalloc(MAX_CPUS * sizeof *ids), n;
    memset(s, 0, sizeof *s);
    s->freq_mhz = NAN;
    if (!root || !*root) root = "/";
    if (read_stat(root, s, err) != 0) {
        free(ids);
        return -1;
    }
    n = list_cpus(root, ids, MAX_CPUS);
    if (read_msr(root, ids, n, s) != 0) read_cpufreq(root, ids, n, s);
    read_cpuidle(root, ids, n, s);
    free(ids);
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    return 0;
}

/* ---- samples and aggregates ------------------------------------------------------ */

void tb_telem_compute(const tb_telem_snap *a, const tb_telem_snap *b, tb_telem_sample *o) {
    uint64_t dt = b->mono_us > a->mono_us ? b->mono_us - a->mono_us : 0;
    memset(o, 0, sizeof *o);
    o->mono_us = b->mono_us;
    o->wall_us = b->wall_us;
    o->interval_us = dt;
    o->cpu_util_pct = o->freq_mhz = NAN;
    for (int m = 0; m < TB_CPU_NMODES; m++)
        o->mode_pct[m] = NAN;

    if (a->have_cpu && b->have_cpu) {
        double d[TB_CPU_NMODES], total = 0;
        for (int m = 0; m < TB_CPU_NMODES; m++) {
            d[m] = b->cpu_s[m] - a->cpu_s[m];
            /* iowait may run backwards on some kernels (proc(5)): count it as 0 */
            if (d[m] < 0) d[m] = 0;
            total += d[m];
        }
        if (total > 0) {
            for (int m = 0; m < TB_CPU_NMODES; m++)
                o->mode_pct[m] = 100.0 * d[m] / total;
            o->cpu_util_pct = 100.0 - o->mode_pct[TB_CPU_IDLE] - o->mode_pct[TB_CPU_IOWAIT];
            if (o->cpu_util_pct < 0) o->cpu_util_pct = 0;
        }
    }

    if (a->freq_src == b->freq_src && b->freq_src != TB_FREQ_NONE) {
        if (b->freq_src == TB_FREQ_APERF_MPERF) {
            /* turbostat's Bzy_MHz: TSC rate x APERF/MPERF; MHz = TSC ticks per µs */
            if (dt > 0 && b->tsc > a->tsc && b->mperf > a->mperf && b->aperf >= a->aperf)
                o->freq_mhz = (double)(b->tsc - a->tsc) / (double)dt * (double)(b->aperf - a->aperf) /
                              (double)(b->mperf - a->mperf);
        } else if (isfinite(b->freq_mhz)) {
            o->freq_mhz = b->freq_mhz; /* instantaneous: the reading at the end of the interval */
        }
        if (isfinite(o->freq_mhz)) o->freq_src = b->freq_src;
    }

    if (dt > 0 && a->n_cstates > 0 && a->n_cstates == b->n_cstates && a->cstate_cpus == b->cstate_cpus &&
        b->cstate_cpus > 0) {
        double sum = 0, pct[TB_TELEM_MAX_CSTATES];
        int ok = 1;
        for (int k = 0; k < b->n_cstates && ok; k++) {
            double d = b->cstate_us[k] - a->cstate_us[k];
            if (strcmp(a->cstate_name[k], b->cstate_name[k]) != 0 || d < 0) ok = 0;
            pct[k] = 100.0 * d / ((double)b->cstate_cpus * (double)dt);
            sum += pct[k];
        }
        if (ok) {
            o->n_cstates = b->n_cstates + 1;
            snprintf(o->cstate_name[0], sizeof o->cstate_name[0], "C0");
            o->cstate_pct[0] = sum >= 100.0 ? 0.0 : 100.0 - sum;
            for (int k = 0; k < b->n_cstates; k++) {
                snprintf(o->cstate_name[k + 1], sizeof o->cstate_name[k + 1], "%s", b->cstate_name[k]);
                o->cstate_pct[k + 1] = pct[k];
            }
        }
    }
}

void tb_telem_aggregate(const tb_telem_sample *s, int n, tb_telemetry *t) {
    double w_util = 0, w_freq = 0, w_mode[TB_CPU_NMODES] = {0}, w_cs[TB_TELEM_MAX_CSTATES + 1] = {0};
    double util = 0, freq = 0, mode[TB_CPU_NMODES] = {0};
    tb_telemetry_clear(t);
    t->n_samples = n;
    for (int i = 0; i < n; i++) {
        double w = (double)s[i].interval_us;
        if (!(w > 0)) continue;
        if (isfinite(s[i].cpu_util_pct)) {
            util += w * s[i].cpu_util_pct;
            w_util += w;
        }
        for (int m = 0; m < TB_CPU_NMODES; m++)
            if (isfinite(s[i].mode_pct[m])) {
                mode[m] += w * s[i].mode_pct[m];
                w_mode[m] += w;
            }
        if (isfinite(s[i].freq_mhz)) {
            freq += w * s[i].freq_mhz;
            w_freq += w;
            /* one source per run in practice; a change is shown as the latest */
            t->freq_src = s[i].freq_src;
        }
        for (int k = 0; k < s[i].n_cstates; k++) {
            int j;
            for (j = 0; j < t->n_cstates; j++)
                if (strcmp(t->cstate_name[j], s[i].cstate_name[k]) == 0) break;
            if (j == t->n_cstates) {
                if (j > TB_TELEM_MAX_CSTATES) continue;
                snprintf(t->cstate_name[j], sizeof t->cstate_name[j], "%s", s[i].cstate_name[k]);
                t->cstate_pct[j] = 0;
                t->n_cstates++;
            }
            t->cstate_pct[j] += w * s[i].cstate_pct[k];
            w_cs[j] += w;
        }
    }
    if (w_util > 0) t->cpu_util_pct = util / w_util;
    if (w_freq > 0) t->avg_freq_mhz = freq / w_freq;
    for (int m = 0; m < TB_CPU_NMODES; m++)
        if (w_mode[m] > 0) t->mode_pct[m] = mode[m] / w_mode[m];
    for (int j = 0; j < t->n_cstates; j++)
        t->cstate_pct[j] = w_cs[j] > 0 ? t->cstate_pct[j] / w_cs[j] : NAN;
}

/* ---- sources ------------------------------------------------------------------------ */

struct tb_telem_source {
    char *spec; /* for messages: a URL's password redacted */
    char *root; /* local: the prefix; NULL for node_exporter */
    char *url;  /* node_exporter: the /metrics URL */
};

int tb_telem_source_open_root(const char *root, tb_telem_source **out, char *err) {
    tb_telem_source *s;
    (void)err;
    s = xcalloc(1, sizeof *s);
    s->spec = xstrdup("local");
    s->root = xstrdup(root && *root ? root : "/");
    *out = s;
    return 0;
}

int tb_telem_source_open(const char *spec, tb_telem_source **out, char *err) {
    tb_telem_source *s;
    *out = NULL;
    if (spec && strcmp(spec, "local") == 0) return tb_telem_source_open_root("/", out, err);
    if (!spec || strncmp(spec, "http://", 7) != 0 || !spec[7] || spec[7] == '/' || strpbrk(spec, " \t\r\n")) {
        char shown[1024];
        tb_redact_uri(spec ? spec : "", shown, sizeof shown);
        tb_seterr(err,
                  "telemetry '%s': use local, none, or a node_exporter URL such as "
                  "http://HOST:9100/metrics",
                  shown);
        return -1;
    }
    s = xcalloc(1, sizeof *s);
    {
        char shown[1024];
        tb_redact_uri(spec, shown, sizeof shown);
        s->spec = xstrdup(shown);
    }
    s->url = xstrdup(spec);
    *out = s;
    return 0;
}

int tb_telem_source_read(tb_telem_source *src, tb_telem_snap *s, char *err) {
    char *body = NULL;
    size_t len = 0;
    char e[TB_ERR_LEN];
    int rc;
    if (src->root) return tb_telem_read_local(src->root, s, err);
    if (tb_node_exporter_fetch(src->url, SCRAPE_TIMEOUT_MS, &body, &len, err) != 0) return -1;
    rc = tb_node_exporter_snap(body, len, s, e);
    free(body);
    if (rc != 0) {
        tb_seterr(err, "telemetry %s: %s", src->spec, e);
        return -1;
    }
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    return 0;
}

const char *tb_telem_source_spec(const tb_telem_source *src) { return src->spec; }

void tb_telem_source_close(tb_telem_source *src) {
    if (!src) return;
    free(src->spec);
    free(src->root);
    free(src->url);
    free(src);
}

/* ---- the sampler thread ---------------------------------------------------------- */

struct tb_telem_sampler {
    tb_telem_source *src;
    uint64_t interval_us;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int stopping;
    /* guarded by mu */
    tb_telem_sample *buf;
    size_t len, cap;
    uint64_t failures;
};

static void *sampler_main(void *arg) {
    tb_telem_sampler *t = arg;
    tb_telem_snap prev, cur;
    int have_prev = 0, failing = 0;
    uint64_t next = tb_now_us();
    pthread_mutex_lock(&t->mu);
    for (;;) {
        struct timespec ts = {(time_t)(next / 1000000u), (long)(next % 1000000u) * 1000L};
        char err[TB_ERR_LEN] = "";
        int rc;
        while (!t->stopping && tb_now_us() < next)
            if (pthread_cond_timedwait(&t->wake, &t->mu, &ts) == ETIMEDOUT) break;
        if (t->stopping) break;
        pthread_mutex_unlock(&t->mu);
        rc = tb_telem_source_read(t->src, &cur, err);
        pthread_mutex_lock(&t->mu);
        if (rc != 0) {
            t->failures++;
            if (!failing) tb_log(TB_LOG_WARN, "%s (telemetry samples skipped until it recovers)", err);
            failing = 1;
        } else {
            if (failing) tb_log(TB_LOG_INFO, "telemetry %s is back", tb_telem_source_spec(t->src));
            failing = 0;
            if (have_prev) {
                t->buf = tb_grow(t->buf, t->len, &t->cap, sizeof *t->buf);
                tb_telem_compute(&prev, &cur, &t->buf[t->len++]);
            }
            prev = cur;
            have_prev = 1;
        }
        next += t->interval_us;
        {
            uint64_t now = tb_now_us();
            if (now > next) next += (now - next) / t->interval_us * t->interval_us; /* skip, never burst */
        }
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int tb_telem_sampler_start(tb_telem_source *src, uint64_t interval_us, tb_telem_sampler **out, char *err) {
    pthread_condattr_t ca;
    tb_telem_sampler *t;
    int rc;
    *out = NULL;
    if (!src || interval_us == 0) {
        tb_seterr(err, "telemetry sampler: %s", src ? "interval must be > 0 us" : "no source");
        return -1;
    }
    t = xcalloc(1, sizeof *t);
    t->src = src;
    t->interval_us = interval_us;
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->wake, &ca);
    pthread_condattr_destroy(&ca);
    if ((rc = pthread_create(&t->thread, NULL, sampler_main, t)) != 0) {
        tb_seterr(err, "telemetry sampler: pthread_create: %s", strerror(rc));
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int tb_telem_sampler_window(tb_telem_sampler *t, uint64_t t0_us, uint64_t t1_us, tb_telem_sample **out) {
    size_t i, n = 0;
    tb_telem_sample *res = NULL;
    *out = NULL;
    if (t1_us <= t0_us) return 0;
    pthread_mutex_lock(&t->mu);
    for (i = 0; i < t->len; i++)
        if (t->buf[i].mono_us >= t0_us && t->buf[i].mono_us < t1_us) n++;
    if (n) {
        size_t k = 0;
        res = xmalloc(n * sizeof *res);
        for (i = 0; i < t->len; i++)
            if (t->buf[i].mono_us >= t0_us && t->buf[i].mono_us < t1_us) res[k++] = t->buf[i];
    }
    pthread_mutex_unlock(&t->mu);
    *out = res;
    return (int)n;
}

uint64_t tb_telem_sampler_failures(tb_telem_sampler *t) {
    uint64_t v;
    pthread_mutex_lock(&t->mu);
    v = t->failures;
    pthread_mutex_unlock(&t->mu);
    return v;
}

void tb_telem_sampler_stop(tb_telem_sampler *t) {
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->stopping = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->mu);
    free(t->buf);
    free(t);
}
