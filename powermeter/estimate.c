/*
 * estimate.c: the "estimate:" meter driver. It has no power meter at all: it
 * turns host CPU utilization (from the aggregate "cpu" line of /proc/stat)
 * into watts with a linear model W = idle + (max - idle) * util, where util
 * is busy/total jiffies since the previous sample. It exists so that a run
 * without a real meter still produces a PPKW, and every sample it delivers
 * is flagged TB_SAMPLE_ESTIMATED so reports can say so.
 *
 * URI: estimate:[?idle=W&max=W]   (values in W; a trailing "W" is accepted)
 * The defaults idle=50 W, max=200 W are a placeholder model of a small
 * 1-socket server, not a measurement of anything: pass the SUT's own figures
 * (e.g. from its vendor's power calculator) to make the estimate meaningful.
 *
 * TB_PROC_STAT (environment, read at open) replaces /proc/stat for tests.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "powermeter/meter.h"

#define EST_DEFAULT_IDLE_W 50.0    /* placeholder, see the file comment */
#define EST_DEFAULT_MAX_W  200.0   /* placeholder, see the file comment */
#define EST_BASELINE_US    100000u /* first sample's window: baseline taken at open */

typedef struct est {
    char *stat_path;
    double idle_w, max_w;
    uint64_t prev_busy, prev_total; /* jiffies at the previous sample (or open) */
    double last_util;               /* < 0 until one interval had CPU time in it */
} est;

/* Busy and total jiffies from the aggregate "cpu" line. 0 or -1 with err. */
static int read_cpu(const char *path, uint64_t *busy, uint64_t *total, char *err) {
    char line[512];
    /* user nice system idle iowait irq softirq steal; guest and guest_nice are
     * already counted inside user and nice, so they are left out. */
    uint64_t v[8] = {0};
    char *p, *end;
    FILE *f = fopen(path, "r");
    int n;

    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!fgets(line, sizeof line, f)) {
        tb_seterr(err, "%s: empty or unreadable", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    if (strncmp(line, "cpu ", 4) != 0) {
        tb_seterr(err, "%s: first line is not the aggregate 'cpu' line", path);
        return -1;
    }
    p = line + 4;
    for (n = 0; n < 8; n++) {
        while (*p == ' ')
            p++;
        if (*p == '\n' || *p == '\0') break;
        errno = 0;
        v[n] = strtoull(p, &end, 10);
        if (end == p || errno == ERANGE || (*end != ' ' && *end != '\n' && *end != '\0')) {
            tb_seterr(err, "%s: 'cpu' field %d is not a number", path, n + 1);
            return -1;
        }
        p = end;
    }
    if (n < 4) { /* Linux has had at least user nice system idle forever */
        tb_seterr(err, "%s: 'cpu' line has %d fields, expected at least 4", path, n);
        return -1;
    }
    *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    *busy = *total - v[3] - v[4]; /* idle and iowait are idle time */
    return 0;
}

/* Parses one "key=value" watt value: non-negative finite, optional "W". */
static int parse_watts(const char *key, const char *val, double *out, char *err) {
    char buf[64], perr[TB_ERR_LEN];
    size_t n = strlen(val);
    if (n >= sizeof buf) {
        tb_seterr(err, "%s: '%.20s...': value too long", key, val);
        return -1;
    }
    memcpy(buf, val, n + 1);
    if (n > 1 && (buf[n - 1] == 'W' || buf[n - 1] == 'w')) buf[n - 1] = '\0';
    if (tb_parse_double(buf, out, perr) != 0) {
        tb_seterr(err, "%s: '%s': not a number", key, val);
        return -1;
    }
    if (*out < 0) {
        tb_seterr(err, "%s: '%s': must not be negative", key, val);
        return -1;
    }
    return 0;
}

/* Parses "estimate:[?k=v&k=v]" into e. Errors name the key and value. */
static int parse_uri(const char *uri, est *e, char *err) {
    const char *p = strchr(uri, ':');
    int have_idle = 0, have_max = 0;

    e->idle_w = EST_DEFAULT_IDLE_W;
    e->max_w = EST_DEFAULT_MAX_W;
    p = p ? p + 1 : uri + strlen(uri);
    if (*p == '\0') return 0;
    if (*p != '?') {
        tb_seterr(err, "'%s': unexpected text after 'estimate:' (expected ?idle=W&max=W)", p);
        return -1;
    }
    p++;
    while (*p) {
        size_t plen = strcspn(p, "&");
        char param[128];
        char *eq;
        if (plen == 0) { /* tolerate "&&" and a trailing '&' */
            p++;
            continue;
        }
        if (plen >= sizeof param) {
            tb_seterr(err, "'%.20s...': parameter too long", p);
            return -1;
        }
        memcpy(param, p, plen);
        param[plen] = '\0';
        p += plen;
        if (*p == '&') p++;
        eq = strchr(param, '=');
        if (!eq) {
            tb_seterr(err, "'%s': expected key=value (keys: idle, max)", param);
            return -1;
        }
        *eq = '\0';
        if (strcmp(param, "idle") == 0) {
            if (have_idle++) {
                tb_seterr(err, "idle: given twice");
                return -1;
            }
            if (parse_watts("idle", eq + 1, &e->idle_w, err) != 0) return -1;
        } else if (strcmp(param, "max") == 0) {
            if (have_max++) {
                tb_seterr(err, "max: given twice");
                return -1;
            }
            if (parse_watts("max", eq + 1, &e->max_w, err) != 0) return -1;
        } else {
            tb_seterr(err, "'%s': unknown parameter (keys: idle, max)", param);
            return -1;
        }
    }
    if (e->max_w < e->idle_w) {
        tb_seterr(err, "max: %g W is below idle %g W", e->max_w, e->idle_w);
        return -1;
    }
    return 0;
}

static int est_open(const char *uri, void **self, char *err) {
    const char *env = getenv("TB_PROC_STAT");
    struct timespec ts = {0, EST_BASELINE_US * 1000L};
    est *e = xcalloc(1, sizeof *e);

    if (parse_uri(uri, e, err) != 0) {
        free(e);
        return -1;
    }
    e->stat_path = xstrdup(env && *env ? env : "/proc/stat");
    e->last_util = -1;
    if (read_cpu(e->stat_path, &e->prev_busy, &e->prev_total, err) != 0) {
        free(e->stat_path);
        free(e);
        return -1;
    }
    /* A sample taken right after open (the poller's first) must still cover
     * some CPU time: the baseline is ~100 ms old by the time we return. */
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    *self = e;
    return 0;
}

static int est_identify(void *self, tb_meter_info *info, char *err) {
    est *e = self;
    (void)err;
    snprintf(info->model, sizeof info->model, "estimate (CPU utilization, linear)");
    snprintf(info->idn, sizeof info->idn, "tilebench estimate: idle=%g W, max=%g W, from %s", e->idle_w, e->max_w,
             e->stat_path);
    info->estimated = 1;
    info->model_idle_w = e->idle_w;
    info->model_max_w = e->max_w;
    return 0;
}

static int est_sample(void *self, tb_sample *s, char *err) {
    est *e = self;
    uint64_t busy, total;
    int64_t d_busy, d_total;

    if (read_cpu(e->stat_path, &busy, &total, err) != 0) return -1;
    s->mono_us = tb_now_us();
    s->wall_us = tb_wall_us();
    s->flags = TB_SAMPLE_ESTIMATED;
    d_busy = (int64_t)(busy - e->prev_busy);
    d_total = (int64_t)(total - e->prev_total);
    if (d_total > 0) {
        /* iowait can run backwards on some kernels: clamp rather than trust. */
        double util = d_busy <= 0 ? 0.0 : (double)d_busy / (double)d_total;
        e->last_util = util > 1.0 ? 1.0 : util;
        e->prev_busy = busy;
        e->prev_total = total;
    }
    /* No jiffies elapsed (sampled within one tick): the last utilization still
     * holds, and the baseline is kept so the next delta covers the gap. */
    if (e->last_util < 0) {
        s->watts = NAN;
        s->flags |= TB_SAMPLE_INVALID;
        return 0;
    }
    s->watts = e->idle_w + (e->max_w - e->idle_w) * e->last_util;
    return 0;
}

static void est_close(void *self) {
    est *e = self;
    if (!e) return;
    free(e->stat_path);
    free(e);
}

/* Registered in meter.c's driver table (which carries the matching extern). */
extern const tb_meter_driver tb_meter_estimate_driver;
const tb_meter_driver tb_meter_estimate_driver = {
    .scheme = "estimate",
    .open = est_open,
    .identify = est_identify,
    .sample = est_sample,
    .close = est_close,
};
