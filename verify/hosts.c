/*
 * hosts.c: check 2's per-host power (a SUT of several hosts, [host.NAME]):
 * each level's entry of report.json "hosts" is recomputed from the samples
 * of the meters meters.csv gives that host (docs/results.md, level_hosts):
 * its mean power is the sum over its meters of each one's trapezoid mean
 * (unknown when one has no valid sample), its samples the count of its
 * meters' samples in the level; and each host's active idle (report.json
 * run.hosts) the same over the samples without a level. A run without
 * hosts has no such entries and gets no line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

/* Host name's mean power over samples s (its meters' trapezoid means
 * summed, NAN when one has none, or when it has no meter) and the number of
 * its meters' samples. */
static double host_power(const tb_vdata *d, const char *name, const tb_vsample *s, size_t n, size_t *count) {
    tb_vsample *one = xcalloc(n + 1, sizeof *one);
    double sum = 0.0;
    int meters = 0;
    *count = 0;
    for (size_t m = 0; m < d->meters.n_rows; m++) {
        const char *h = tb_vcell(&d->meters, m, "host");
        int64_t idx = tb_vcell_int(&d->meters, m, "idx", -1);
        size_t k = 0;
        if (!h || strcmp(h, name) != 0) continue;
        meters++;
        for (size_t i = 0; i < n; i++)
            if (s[i].meter == idx) {
                one[k] = s[i];
                one[k++].meter = 0;
            }
        *count += k;
        sum += tb_vmean_power(one, k, 1);
    }
    free(one);
    return meters ? sum : NAN;
}

/* A published figure against the recomputed one; a FAIL line names it. */
static void cmp(tb_vresult *r, const char *where, const char *host, const char *what, const json_t *o, const char *key,
                double mine, size_t *ok) {
    const json_t *v = json_object_get(o, key);
    double pub = json_is_number(v) ? json_number_value(v) : NAN;
    char name[300];
    if ((isnan(pub) && isnan(mine)) || tb_v_close(pub, mine, TB_V_REL)) {
        (*ok)++;
        return;
    }
    snprintf(name, sizeof name, "figure %s host %.100s %s", where, host, what);
    tb_vresult_add(r, 0, name, "relative tolerance 1e-09", "published %.12g, recomputed %.12g", pub, mine);
}

void tb_vcheck_hosts(const tb_vdata *d, tb_vresult *r) {
    const json_t *run = json_object_get(d->report, "run"), *levels = json_object_get(run, "levels");
    size_t ok = 0, entries = 0, before = r->failed, i, n;
    json_t *h;
    for (size_t l = 0; l < d->n_lv; l++) {
        const json_t *lvj = tb_vreport_level(levels, l, &d->lv[l]);
        json_array_foreach(json_object_get(lvj, "hosts"), i, h) {
            const char *name = json_string_value(json_object_get(h, "name"));
            double w;
            if (!name) continue;
            entries++;
            w = host_power(d, name, d->lv[l].s, d->lv[l].n_s, &n);
            cmp(r, d->lv[l].tag, name, "avg_watts", h, "avg_watts", w, &ok);
            cmp(r, d->lv[l].tag, name, "samples", h, "samples", (double)n, &ok);
        }
    }
    json_array_foreach(json_object_get(run, "hosts"), i, h) {
        const char *name = json_string_value(json_object_get(h, "name"));
        if (!name) continue;
        entries++;
        cmp(r, "run", name, "active_idle_watts", h, "active_idle_watts", host_power(d, name, d->idle, d->n_idle, &n),
            &ok);
    }
    if (entries && r->failed == before)
        tb_vresult_add(r, 1, "figures hosts", "each within relative tolerance 1e-09",
                       "%zu figures of %zu host entries agree (mean power, samples, active idle per host)", ok,
                       entries);
}
