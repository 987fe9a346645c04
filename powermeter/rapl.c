/*
 * rapl.c: the "rapl:" meter driver: CPU package (and DRAM) power from the
 * Linux powercap energy counters, as the delta of energy_uj over the time
 * between two reads (W = µJ / µs).
 *
 *   rapl:[?zones=package|package,dram|psys]   default: package,dram
 *
 * Which zones are summed, and why:
 *  - package-N (top-level intel-rapl:N): the whole socket. Its core and
 *    uncore subzones are already inside it and are never added again.
 *  - dram (a subzone intel-rapl:N:M named "dram"): memory power, which is
 *    NOT part of the package domain, so it is added (the issue asks for
 *    package plus dram).
 *  - psys (platform, top-level): covers the package and more, so it is used
 *    alone (zones=psys) and never summed with package.
 *  - intel-rapl-mmio:* mirrors the package zone through MMIO on client
 *    CPUs: skipped, or it would be counted twice.
 * Wrap or reset: energy_uj wraps at max_energy_range_uj, and a wrap is only
 * believed when its energy, (max - prev) + cur, is within what the zone can
 * draw over the interval (TB_RAPL_ZONE_MAX_W): prev near the top, cur near
 * zero. Any other drop is a reset (a reboot, a driver reload) and makes that
 * interval's sample INVALID (rapl.h, tb_rapl_interval); counting resumes from
 * the new value.
 * RAPL is not a wall-power meter (no PSU, fans, disks); the meter info says
 * "RAPL (CPU package + DRAM only)" so a reader can judge.
 *
 * TB_RAPL_ROOT (environment) replaces /sys/class/powercap for tests.
 */
#include "powermeter/rapl.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "powermeter/meter.h"
#include "powermeter/meter_uri.h"

#define RAPL_MAX_ZONES 32

int tb_rapl_interval(uint64_t prev_uj, uint64_t cur_uj, uint64_t max_range_uj, uint64_t dt_us, double max_w,
                     uint64_t *energy_uj) {
    double ceiling = max_w * (double)dt_us; /* W x us = uJ */
    uint64_t e;
    int wrapped = 0;
    *energy_uj = 0;
    if (max_range_uj && (cur_uj > max_range_uj || prev_uj > max_range_uj)) return -1; /* a bad read */
    if (cur_uj >= prev_uj) {
        e = cur_uj - prev_uj;
    } else {
        if (max_range_uj == 0) return -1; /* no range known: no guess */
        e = (max_range_uj - prev_uj) + cur_uj;
        wrapped = 1;
    }
    if ((double)e > ceiling) return -1; /* a reset (or a bad read), not energy the zone used */
    *energy_uj = e;
    return wrapped;
}

typedef struct zone {
    char path[512]; /* .../intel-rapl:N[:M]/energy_uj */
    char name[32];
    uint64_t max_uj, prev_uj;
} zone;

typedef struct rapl {
    char root[256];
    zone z[RAPL_MAX_ZONES];
    int n;
    int psys;
    uint64_t prev_us;
} rapl;

/* Reads one unsigned decimal from a sysfs file. 0, or -1 with errno kept for the caller. */
static int read_u64(const char *path, uint64_t *out) {
    char buf[64], *end;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    if (!fgets(buf, sizeof buf, f)) {
        fclose(f);
        errno = EIO;
        return -1;
    }
    fclose(f);
    errno = 0;
    *out = strtoull(buf, &end, 10);
    if (end == buf || errno || (*end && *end != '\n')) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int read_name(const char *dir, char *out, size_t len) {
    char p[600];
    FILE *f;
    snprintf(p, sizeof p, "%s/name", dir);
    f = fopen(p, "r");
    if (!f) return -1;
    if (!fgets(out, (int)len, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

/* Adds the zone at dir if its name is wanted. 0, or -1 with err. */
static int add_zone(rapl *r, const char *dir, const char *name, char *err) {
    zone *z;
    char p[600];
    if (r->n == RAPL_MAX_ZONES) return 0;
    z = &r->z[r->n];
    snprintf(z->name, sizeof z->name, "%s", name);
    snprintf(z->path, sizeof z->path, "%s/energy_uj", dir);
    snprintf(p, sizeof p, "%s/max_energy_range_uj", dir);
    if (read_u64(p, &z->max_uj) != 0) {
        tb_seterr(err, "%s: %s", p, strerror(errno));
        return -1;
    }
    if (read_u64(z->path, &z->prev_uj) != 0) {
        if (errno == EACCES || errno == EPERM)
            tb_seterr(err,
                      "%s: permission denied: energy_uj is readable by root only since the CVE-2020-8694 fix "
                      "(run as root, or grant read access to the tilebench user)",
                      z->path);
        else
            tb_seterr(err, "%s: %s", z->path, strerror(errno));
        return -1;
    }
    r->n++;
    return 0;
}

static int is_zone_dir(const char *d) {
    /* intel-rapl:N or intel-rapl:N:M; not intel-rapl-mmio:N (see the file comment). */
    return strncmp(d, "intel-rapl:", 11) == 0;
}

static int scan(rapl *r, int want_pkg, int want_dram, int want_psys, char *err) {
    DIR *d = opendir(r->root);
    struct dirent *e;
    char names[RAPL_MAX_ZONES * 2][64];
    int nn = 0, rc = 0;

    if (!d) {
        tb_seterr(err, "%s: %s (no RAPL powercap interface on this host)", r->root, strerror(errno));
        return -1;
    }
    /* zone folders are short ("intel-rapl:0:1"): a name too long to hold is none of them */
    while ((e = readdir(d)) && nn < RAPL_MAX_ZONES * 2)
        if (is_zone_dir(e->d_name) && strlen(e->d_name) < sizeof names[0])
            memcpy(names[nn++], e->d_name, strlen(e->d_name) + 1);
    closedir(d);
    /* Sorted, so zones come in a stable order whatever readdir does. */
    for (int i = 1; i < nn; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[64];
            memcpy(t, names[j], sizeof t);
            memcpy(names[j], names[j - 1], sizeof t);
            memcpy(names[j - 1], t, sizeof t);
        }
    for (int i = 0; i < nn && rc == 0; i++) {
        char dir[512], zname[32];
        int sub = strchr(names[i] + 11, ':') != NULL;
        if (snprintf(dir, sizeof dir, "%s/%s", r->root, names[i]) >= (int)sizeof dir) continue; /* not a zone path */
        if (read_name(dir, zname, sizeof zname) != 0) continue;
        if (!sub && strncmp(zname, "package-", 8) == 0 && want_pkg)
            rc = add_zone(r, dir, zname, err);
        else if (!sub && strcmp(zname, "psys") == 0 && want_psys)
            rc = add_zone(r, dir, zname, err);
        else if (sub && strcmp(zname, "dram") == 0 && want_dram)
            rc = add_zone(r, dir, zname, err);
        /* also a top-level dram zone (some AMD/older layouts) */
        else if (!sub && strcmp(zname, "dram") == 0 && want_dram)
            rc = add_zone(r, dir, zname, err);
        /* core, uncore: inside package; skipped on purpose */
    }
    if (rc != 0) return -1;
    if (r->n == 0) {
        tb_seterr(err, "%s: no %s zone found", r->root, want_psys ? "psys" : "package-N");
        return -1;
    }
    return 0;
}

static int rapl_open(const char *uri, void **self, char *err) {
    static const char *const keys[] = {"zones", NULL};
    const char *env = getenv(TB_RAPL_ROOT_ENV), *q = strchr(uri, '?');
    rapl *r = xcalloc(1, sizeof *r);
    char v[64];
    int rc, pkg = 1, dram = 1, psys = 0;

    if (strncmp(uri, "rapl:", 5) != 0 || (uri[5] && uri[5] != '?')) {
        tb_seterr(err, "expected rapl: or rapl:?zones=package,dram|package|psys");
        goto fail;
    }
    if (q && tb_meter_uri_check_keys(q, keys, err) != 0) goto fail;
    rc = tb_meter_uri_param(q, "zones", v, sizeof v, err);
    if (rc < 0) goto fail;
    if (rc == 1) {
        if (strcmp(v, "package,dram") == 0 || strcmp(v, "dram,package") == 0)
            pkg = dram = 1;
        else if (strcmp(v, "package") == 0)
            dram = 0;
        else if (strcmp(v, "psys") == 0) {
            pkg = dram = 0;
            psys = 1;
        } else {
            tb_seterr(err, "zones: '%s': expected package,dram, package or psys (psys already contains the package)",
                      v);
            goto fail;
        }
    }
    snprintf(r->root, sizeof r->root, "%s", env && *env ? env : "/sys/class/powercap");
    r->psys = psys;
    if (scan(r, pkg, dram, psys, err) != 0) {
        free(r);
        return TB_METER_EUNREACH; /* the URI is fine; this host has no readable RAPL zone (exit 3, as a missing serial
                                     device) */
    }
    r->prev_us = tb_now_us();
    *self = r;
    return 0;
fail:
    free(r);
    return -1;
}

static int rapl_identify(void *self, tb_meter_info *info, char *err) {
    rapl *r = self;
    size_t used;
    (void)err;
    snprintf(info->model, sizeof info->model, "%s",
             r->psys ? "RAPL psys (platform)" : "RAPL (CPU package + DRAM only)");
    used = (size_t)snprintf(info->idn, sizeof info->idn, "powercap %s:", r->root);
    for (int i = 0; i < r->n && used < sizeof info->idn; i++)
        used += (size_t)snprintf(info->idn + used, sizeof info->idn - used, " %s", r->z[i].name);
    snprintf(info->driver, sizeof info->driver, "rapl energy_uj deltas");
    info->estimated = 0;
    return 0;
}

/* Reads every zone's counter into cur, and the time of the read. 0 or -1 with err. */
static int read_all(rapl *r, uint64_t *cur, uint64_t *now, char *err) {
    for (int i = 0; i < r->n; i++) {
        if (read_u64(r->z[i].path, &cur[i]) != 0) {
            tb_seterr(err, "%s: %s", r->z[i].path, strerror(errno));
            return -1;
        }
    }
    *now = tb_now_us();
    return 0;
}

static void sleep_us(uint64_t us) {
    struct timespec d = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
}

/* One interval: the sum of the zones' energies over the time since the last
 * read. A zone whose counter reset (tb_rapl_interval -1) makes the sample
 * INVALID; every zone starts afresh from this read either way. */
static int rapl_sample(void *self, tb_sample *s, char *err) {
    rapl *r = self;
    uint64_t now, dt, total = 0, cur[RAPL_MAX_ZONES];
    if (read_all(r, cur, &now, err) != 0) return -1;
    if (now - r->prev_us < TB_RAPL_MIN_INTERVAL_US) { /* too soon: wait, do not report an invalid sample */
        sleep_us(TB_RAPL_MIN_INTERVAL_US - (now - r->prev_us));
        if (read_all(r, cur, &now, err) != 0) return -1;
    }
    dt = now - r->prev_us;
    for (int i = 0; i < r->n; i++) {
        uint64_t e;
        if (tb_rapl_interval(r->z[i].prev_uj, cur[i], r->z[i].max_uj, dt, TB_RAPL_ZONE_MAX_W, &e) < 0) {
            s->flags |= TB_SAMPLE_INVALID;
            tb_log(TB_LOG_WARN,
                   "rapl: %s went from %llu to %llu uJ in %llu us (range %llu uJ): a counter reset or bad read, "
                   "not a wrap; this interval is invalid",
                   r->z[i].path, (unsigned long long)r->z[i].prev_uj, (unsigned long long)cur[i],
                   (unsigned long long)dt, (unsigned long long)r->z[i].max_uj);
        }
        total += e;
        r->z[i].prev_uj = cur[i];
    }
    s->mono_us = now;
    s->wall_us = tb_wall_us();
    s->watts = (s->flags & TB_SAMPLE_INVALID) ? NAN : (double)total / (double)dt;
    r->prev_us = now;
    return 0;
}

static void rapl_close(void *self) { free(self); }

/* Registered in meter.c's driver table. */
extern const tb_meter_driver tb_meter_rapl_driver;
const tb_meter_driver tb_meter_rapl_driver = {
    .scheme = "rapl", .open = rapl_open, .identify = rapl_identify, .sample = rapl_sample, .close = rapl_close};
