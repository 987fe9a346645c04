/*
 * qos_check.c: check 2's QoS part: each latency verdict of report.json
 * judged again from histograms.hlog (the HdrHistogram log, read by
 * hdrlog.c), each error-rate verdict from ops.csv's counts (infra.csv's for
 * an operation), each mix verdict from ops.csv's counts and the targets the
 * tile file gives (mix.c), each throughput verdict from the throughput
 * figures.c recomputes (an operation's ops per hour) over its reference. The rules
 * are qos.csv's rows, as the run judged them: their name says the workload,
 * op and kind, their limit and min_ops the threshold and the least sample.
 *
 * Histogram precision: a recomputed percentile is HdrHistogram's highest
 * value equivalent to the bucket that holds it; tilebench reports the same
 * bucket's upper edge clamped to the exact maximum. So the two agree to the
 * bucket's width: 1/1024 of the value (3 significant digits) plus 1 µs. A
 * verdict whose limit lies within that width of the observed value is
 * consistent either way and is not held against the run.
 */
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"
#include "verify/vmath.h"

#define HIST_REL    0.001
#define HIST_ABS_MS 0.001

typedef enum { K_PCT, K_MEAN, K_WITHIN, K_ERRORS, K_MIX, K_THROUGHPUT, K_OTHER } rkind;

typedef struct rule {
    char workload[128], op[128];
    rkind kind;
    double pct;       /* K_PCT: the percentile */
    double within_ms; /* K_WITHIN: the latency limit */
} rule;

/* "web.HomePage p90 <= 1000 ms", "kv.* error rate < 0.5%",
 * "web.Login within 500 ms >= 99%", "web.* mix deviation <= 2 pp",
 * "oltp.* throughput >= 95% of reference", "infra.bak.backup error rate <
 * 1%" (qos/qos.c's rule names). */
static int parse_rule(const char *s, rule *r) {
    const char *sp = strchr(s, ' '), *dot;
    size_t k;
    memset(r, 0, sizeof *r);
    if (!sp) return -1;
    for (dot = sp; dot > s && *dot != '.'; dot--) {
    }
    if (dot == s || (size_t)(dot - s) >= sizeof r->workload || (size_t)(sp - dot - 1) >= sizeof r->op) return -1;
    memcpy(r->workload, s, (size_t)(dot - s));
    memcpy(r->op, dot + 1, (size_t)(sp - dot - 1));
    s = sp + 1;
    k = strcspn(s, " ");
    if (s[0] == 'p' && k > 1 && sscanf(s + 1, "%lf", &r->pct) == 1)
        r->kind = K_PCT;
    else if (strncmp(s, "mean ", 5) == 0)
        r->kind = K_MEAN;
    else if (sscanf(s, "within %lf ms", &r->within_ms) == 1)
        r->kind = K_WITHIN;
    else if (strncmp(s, "error rate ", 11) == 0)
        r->kind = K_ERRORS;
    else if (strncmp(s, "mix deviation ", 14) == 0)
        r->kind = K_MIX;
    else if (strncmp(s, "throughput ", 11) == 0)
        r->kind = K_THROUGHPUT;
    else
        r->kind = K_OTHER;
    return 0;
}

/* A tag's name part equals name, where the writer replaced a character a
 * tag cannot hold (',' ' ') by another. */
static int name_eq(const char *tag, size_t len, const char *name) {
    if (strlen(name) != len) return 0;
    for (size_t i = 0; i < len; i++)
        if (tag[i] != name[i] && name[i] != ',' && name[i] != ' ') return 0;
    return 1;
}

/* Whether hlog tag "L<id>/T<tile>/<workload>/<op>" is one of the rule's
 * corrected histograms for level id and tile (0: every tile); for an
 * operation's rule (workload "infra.NAME", op its kind or "*") the tag is
 * "L<id>/infra/<name>/<kind>". */
/* Whether tag begins "L<id>/", id in plain decimal. */
static int level_is(const char *tag, int64_t id) {
    int64_t v = 0;
    size_t k = 1;
    if (tag[0] != 'L' || tag[1] < '0' || tag[1] > '9') return 0;
    for (; tag[k] >= '0' && tag[k] <= '9' && k < 19; k++)
        v = v * 10 + (tag[k] - '0');
    return tag[k] == '/' && v == id;
}

static int tag_matches(const char *tag, int64_t id, int64_t tile, const rule *r) {
    long long l, t;
    int off = 0, infra = strncmp(r->workload, "infra.", 6) == 0;
    const char *w, *slash;
    if (!level_is(tag, id)) return 0; /* another level's: no sscanf for it (1,200 tags x rules) */
    if (infra) {
        if (sscanf(tag, "L%lld/infra/%n", &l, &off) != 1 || off == 0 || l != id) return 0;
    } else if (sscanf(tag, "L%lld/T%lld/%n", &l, &t, &off) != 2 || off == 0 || l != id || (tile && t != tile)) {
        return 0;
    }
    w = tag + off;
    slash = strrchr(w, '/');
    if (!slash || strstr(w, "/uncorrected")) return 0;
    if (!name_eq(w, (size_t)(slash - w), r->workload + (infra ? 6 : 0))) return 0;
    return strcmp(r->op, "*") == 0 || name_eq(slash + 1, strlen(slash + 1), r->op);
}

/* Whether the bundle gives the durations of the rule's operation in level
 * id: histograms.hlog holds its histogram, or infra.csv says it ended no op
 * (the store keeps no empty histogram). A bundle published before
 * operations had histograms in the log holds none. */
static int infra_hist_known(const tb_vdata *d, int64_t id, const rule *r) {
    int row = 0;
    for (size_t i = 0; i < d->hlog.n; i++)
        if (d->hlog.h[i].tag && tag_matches(d->hlog.h[i].tag, id, 0, r)) return 1;
    for (size_t i = 0; i < d->infra.n_rows; i++) {
        const char *name = tb_vcell(&d->infra, i, "name"), *kind = tb_vcell(&d->infra, i, "kind");
        if (tb_vcell_int(&d->infra, i, "level_id", -1) != id || !name || strcmp(name, r->workload + 6) != 0 ||
            (strcmp(r->op, "*") != 0 && (!kind || strcmp(kind, r->op) != 0)))
            continue;
        if (tb_vcell_int(&d->infra, i, "ops", 0) + tb_vcell_int(&d->infra, i, "errors", 0) > 0) return 0;
        row = 1;
    }
    return row;
}

/* The rule's histograms of the level (and tile) merged, counts index by
 * index (HdrHistogram's layout is the same for every tilebench histogram:
 * lowest 1, 3 significant digits). Returns -1 when two layouts differ. */
static int merge_into(const tb_vdata *d, int64_t id, int64_t tile, const rule *r, tb_vh_hist *m) {
    for (size_t i = 0; i < d->hlog.n; i++) {
        const tb_vh_hist *h = &d->hlog.h[i];
        if (!h->tag || !tag_matches(h->tag, id, tile, r)) continue;
        if (m->counts && (h->lowest != m->lowest || h->sig_digits != m->sig_digits)) return -1;
        if (!m->counts) {
            m->lowest = h->lowest;
            m->highest = h->highest;
            m->sig_digits = h->sig_digits;
        }
        if (h->n_counts > m->n_counts) {
            m->counts = xrealloc(m->counts, h->n_counts * sizeof *m->counts);
            memset(m->counts + m->n_counts, 0, (h->n_counts - m->n_counts) * sizeof *m->counts);
            m->n_counts = h->n_counts;
        }
        if (h->highest > m->highest) m->highest = h->highest;
        for (size_t k = 0; k < h->n_counts; k++)
            m->counts[k] += h->counts[k];
        m->total += h->total;
    }
    return 0;
}

static int merged(const tb_vdata *d, int64_t id, int64_t tile, const rule *r, tb_vh_hist *m) {
    memset(m, 0, sizeof *m);
    return merge_into(d, id, tile, r, m);
}

int tb_vlatency_merge(const tb_vdata *d, int64_t level_id, const char *workload, const char *op, tb_vh_hist *m) {
    rule r;
    memset(&r, 0, sizeof r);
    if (strlen(workload) >= sizeof r.workload || strlen(op) >= sizeof r.op) return -1;
    memcpy(r.workload, workload, strlen(workload));
    memcpy(r.op, op, strlen(op));
    return merge_into(d, level_id, 0, &r, m);
}

/* The published verdict of a rule in the level's report entry: "qos" for
 * tile 0, "tile_qos" with its tile otherwise. */
static const json_t *published(const json_t *lvj, const char *name, int64_t tile) {
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(lvj, tile ? "tile_qos" : "qos"), i, o) {
        const char *n = json_string_value(json_object_get(o, "rule"));
        if (n && strcmp(n, name) == 0 && (!tile || json_integer_value(json_object_get(o, "tile")) == tile)) return o;
    }
    return NULL;
}

/* Errors and ops of the rule's ops (ops.csv) in the level and tile. */
static void error_counts(const tb_vdata *d, int64_t id, int64_t tile, const rule *r, uint64_t *ops, uint64_t *err) {
    *ops = *err = 0;
    for (size_t w = 0; w < d->workloads.n_rows; w++) {
        const char *wn = tb_vcell(&d->workloads, w, "name");
        int64_t wid = tb_vcell_int(&d->workloads, w, "id", -1);
        if (tb_vcell_int(&d->workloads, w, "level_id", -1) != id || !wn || strcmp(wn, r->workload) != 0 ||
            (tile && tb_vcell_int(&d->workloads, w, "tile", -1) != tile))
            continue;
        for (size_t o = 0; o < d->ops.n_rows; o++) {
            const char *on = tb_vcell(&d->ops, o, "name");
            if (tb_vcell_int(&d->ops, o, "workload_id", -2) != wid || !on ||
                (strcmp(r->op, "*") != 0 && strcmp(on, r->op) != 0))
                continue;
            *ops += (uint64_t)tb_vcell_int(&d->ops, o, "count", 0);
            *err += (uint64_t)tb_vcell_int(&d->ops, o, "errors", 0);
        }
    }
}

typedef struct verdict {
    double observed; /* NAN: nothing observed */
    uint64_t n;      /* the sample */
    double tol;      /* how far observed may be from the published one */
    int ambiguous;   /* the limit lies within tol of observed */
    int pass;
    int rate;         /* a throughput rule: no sample, always judged */
    const char *prec; /* the tolerance, for the FAIL line */
} verdict;

/* Mix ops are counted exactly and the targets agree to far below this:
 * the run's and this file's way to the stationary mix differ by about
 * 1e-12 pp. */
#define MIX_TOL_PP 1e-6
#define SHARE_EPS  1e-9 /* the run's slack at a limit (qos/qos.c) */

/* Each mix op's count (ops.csv) of the rule's workload in the level and
 * tile (0: every tile). */
static void mix_counts(const tb_vdata *d, int64_t id, int64_t tile, const char *workload, const tb_vmix *mx,
                       uint64_t *cnt) {
    memset(cnt, 0, mx->n * sizeof *cnt);
    for (size_t w = 0; w < d->workloads.n_rows; w++) {
        const char *wn = tb_vcell(&d->workloads, w, "name");
        int64_t wid = tb_vcell_int(&d->workloads, w, "id", -1);
        if (tb_vcell_int(&d->workloads, w, "level_id", -1) != id || !wn || strcmp(wn, workload) != 0 ||
            (tile && tb_vcell_int(&d->workloads, w, "tile", -1) != tile))
            continue;
        for (size_t o = 0; o < d->ops.n_rows; o++) {
            const char *on = tb_vcell(&d->ops, o, "name");
            if (tb_vcell_int(&d->ops, o, "workload_id", -2) != wid || !on) continue;
            for (size_t k = 0; k < mx->n; k++)
                if (strcmp(on, mx->op[k]) == 0) cnt[k] += (uint64_t)tb_vcell_int(&d->ops, o, "count", 0);
        }
    }
}

/* Faban's mix rule: each op's share of the workload's mix ops against its
 * target (mix.c), the worst deviation in percentage points. -1 when the
 * tile file gives the workload no mix this check can work out. */
static int judge_mix(const tb_vdata *d, const tb_vlevel *lv, size_t q, const rule *r, verdict *v) {
    int64_t tile = tb_vcell_int(&d->qos, q, "tile", 0);
    double limit = tb_vcell_real(&d->qos, q, "limit"), worst = -1.0;
    uint64_t cnt[8], total = 0;
    tb_vmix mx;
    if (tb_vmix_targets(d->config, r->workload, &mx) != 0) return -1;
    mix_counts(d, lv->id, tile, r->workload, &mx, cnt);
    for (size_t k = 0; k < mx.n; k++)
        total += cnt[k];
    for (size_t k = 0; k < mx.n && total > 0; k++) {
        double dev;
        if (strcmp(r->op, "*") != 0 && strcmp(r->op, mx.op[k]) != 0) continue;
        dev = fabs(100.0 * (double)cnt[k] / (double)total - mx.pct[k]);
        if (dev > worst) worst = dev;
    }
    /* an op that is no mix op: the run fails the rule with no sample */
    v->n = worst < 0.0 && total > 0 ? 0 : total;
    if (worst >= 0.0) {
        v->observed = worst;
        v->tol = MIX_TOL_PP;
        v->prec = "observed within 1e-06 pp";
        v->pass = worst <= limit + SHARE_EPS;
        v->ambiguous = fabs(worst - limit) <= v->tol;
    }
    return 0;
}

/* A throughput rule: 100 x the throughput over the reference, summed over
 * the tiles selected (a workload), or the operation's ops per hour over its
 * reference (infra.NAME). -1 when a workload's kind or unit is unknown. */
static int judge_rate(const tb_vdata *d, const tb_vrefs *f, const tb_vlevel *lv, size_t q, const rule *r, verdict *v) {
    int64_t tile = tb_vcell_int(&d->qos, q, "tile", 0);
    double limit = tb_vcell_real(&d->qos, q, "limit"), thr = 0.0, ref = 0.0;
    size_t n = 0;
    v->rate = 1;
    if (strncmp(r->workload, "infra.", 6) == 0) {
        for (size_t i = 0; i < d->infra.n_rows; i++) {
            const char *name = tb_vcell(&d->infra, i, "name");
            if (tb_vcell_int(&d->infra, i, "level_id", -1) != lv->id || !name || strcmp(name, r->workload + 6) != 0)
                continue;
            thr += (double)tb_vcell_int(&d->infra, i, "ops", 0) * 3600.0 / lv->window_s;
            ref += tb_vinfra_ref(f, name);
            n++;
        }
    } else {
        for (size_t w = 0; w < d->workloads.n_rows; w++) {
            const char *wn = tb_vcell(&d->workloads, w, "name");
            double t, rf;
            if (tb_vcell_int(&d->workloads, w, "level_id", -1) != lv->id || !wn || strcmp(wn, r->workload) != 0 ||
                (tile && tb_vcell_int(&d->workloads, w, "tile", -1) != tile))
                continue;
            if (tb_vworkload_rate(d, f, w, lv->window_s, &t, &rf) != 0) return -1;
            thr += t;
            ref += isnan(rf) ? 0.0 : rf; /* no reference: the run's 0 */
            n++;
        }
    }
    if (n > 0 && ref > 0.0) {
        v->observed = 100.0 * thr / ref;
        v->tol = 1e-9 * fabs(v->observed) + 1e-12;
        v->prec = "observed within relative tolerance 1e-09";
        v->pass = v->observed >= limit - SHARE_EPS;
        v->ambiguous = fabs(v->observed - limit) <= v->tol;
    }
    return 0;
}

/* An operation's error rate: errors / (ops + errors) of its infra.csv row. */
static void infra_errors(const tb_vdata *d, int64_t id, const rule *r, uint64_t *ops, uint64_t *err) {
    *ops = *err = 0;
    for (size_t i = 0; i < d->infra.n_rows; i++) {
        const char *name = tb_vcell(&d->infra, i, "name"), *kind = tb_vcell(&d->infra, i, "kind");
        if (tb_vcell_int(&d->infra, i, "level_id", -1) != id || !name || strcmp(name, r->workload + 6) != 0 ||
            (strcmp(r->op, "*") != 0 && (!kind || strcmp(kind, r->op) != 0)))
            continue;
        *ops += (uint64_t)tb_vcell_int(&d->infra, i, "ops", 0);
        *err += (uint64_t)tb_vcell_int(&d->infra, i, "errors", 0);
    }
}

/* Judges rule r again for the level's row q of qos.csv. Returns 0, or -1
 * when the rule kind is not recomputed here. */
static int judge(const tb_vdata *d, const tb_vrefs *f, const tb_vlevel *lv, size_t q, const rule *r, verdict *v,
                 char *why) {
    int64_t tile = tb_vcell_int(&d->qos, q, "tile", 0);
    double limit = tb_vcell_real(&d->qos, q, "limit");
    int infra = strncmp(r->workload, "infra.", 6) == 0;
    tb_vh_hist m;
    memset(v, 0, sizeof *v);
    v->observed = NAN;
    if (r->kind == K_MIX) return infra ? -1 : judge_mix(d, lv, q, r, v);
    if (r->kind == K_THROUGHPUT) return judge_rate(d, f, lv, q, r, v);
    if (r->kind == K_ERRORS) {
        uint64_t ops, err;
        if (infra)
            infra_errors(d, lv->id, r, &ops, &err);
        else
            error_counts(d, lv->id, tile, r, &ops, &err);
        v->n = ops + err;
        if (v->n) v->observed = 100.0 * (double)err / (double)v->n;
        v->tol = 1e-9 * fabs(v->observed);
        v->prec = "observed within relative tolerance 1e-09";
        v->pass = v->observed < limit;
        return 0;
    }
    if (r->kind == K_OTHER) return -1;
    if (merged(d, lv->id, tile, r, &m) != 0) {
        snprintf(why, TB_ERR_LEN, "histograms of different layouts");
        free(m.counts);
        return -1;
    }
    v->n = m.total;
    if (m.total > 0) {
        if (r->kind == K_PCT) {
            v->observed = (double)tb_vh_value_at_percentile(&m, r->pct) / 1000.0;
        } else if (r->kind == K_MEAN) {
            v->observed = tb_vh_mean(&m) / 1000.0;
        } else {
            v->observed = 100.0 * tb_vh_fraction_at_or_below(&m, (uint64_t)llround(r->within_ms * 1000.0));
        }
        v->tol = r->kind == K_WITHIN ? 100.0 / (double)m.total : HIST_REL * v->observed + HIST_ABS_MS;
        v->pass = r->kind == K_WITHIN ? v->observed >= limit : v->observed <= limit;
        v->ambiguous = fabs(v->observed - limit) <= v->tol;
    }
    free(m.counts);
    return 0;
}

/* "pass", "fail" or "not judged" of a published verdict. */
static const char *pub_word(const json_t *p) {
    const char *v = json_string_value(json_object_get(p, "verdict"));
    return v ? v : "?";
}

/* Compares row q's recomputed verdict with the published one; 1 when they
 * agree. A disagreement is a FAIL line. */
static int compare(const tb_vdata *d, const tb_vlevel *lv, size_t q, const char *name, const verdict *v,
                   const json_t *p, tb_vresult *r) {
    int64_t tile = tb_vcell_int(&d->qos, q, "tile", 0), min_ops = tb_vcell_int(&d->qos, q, "min_ops", 1);
    int judged = v->rate || (v->n > 0 && (int64_t)v->n >= min_ops);
    const char *word = pub_word(p), *mine = !judged ? "not judged" : v->pass ? "pass" : "fail";
    double pub_obs = json_number_value(json_object_get(p, "observed"));
    json_t *pops = json_object_get(p, "ops");
    char what[400], tl[32] = "";
    if (tile) snprintf(tl, sizeof tl, " tile %lld", (long long)tile);
    snprintf(what, sizeof what, "qos %s%s %s", lv->tag, tl, name);
    if (v->rate && isnan(v->observed)) {
        if (strcmp(word, "fail") == 0) return 1;
        tb_vresult_add(r, 0, what, "no throughput or no reference is a fail",
                       "published %s (observed %.6g), recomputed fail (no throughput or no reference)", word, pub_obs);
        return 0;
    }
    if (!v->rate && json_is_integer(pops) && (uint64_t)json_integer_value(pops) != v->n) {
        tb_vresult_add(r, 0, what, "the same sample", "published %lld ops, recomputed %llu",
                       (long long)json_integer_value(pops), (unsigned long long)v->n);
        return 0;
    }
    if (!v->rate && v->n == 0) {
        if (strcmp(word, "pass") == 0) {
            tb_vresult_add(r, 0, what, "no ops is never a pass", "published pass, recomputed no ops");
            return 0;
        }
        return 1;
    }
    if (!json_is_number(json_object_get(p, "observed")) || fabs(pub_obs - v->observed) > v->tol) {
        tb_vresult_add(r, 0, what, v->prec ? v->prec : "observed within the histogram's precision",
                       "published %s (observed %.6g), recomputed %s (observed %.6g from %llu ops)", word, pub_obs, mine,
                       v->observed, (unsigned long long)v->n);
        return 0;
    }
    if (strcmp(word, mine) != 0 && !(judged && v->ambiguous && strcmp(word, "not judged") != 0)) {
        tb_vresult_add(r, 0, what, "the same verdict",
                       "published %s (observed %.6g), recomputed %s (observed %.6g from %llu ops)", word, pub_obs, mine,
                       v->observed, (unsigned long long)v->n);
        return 0;
    }
    return 1;
}

/* The "@N" of a mix rule in the tile file ([qos.W] mix_deviation = PP@N, or
 * OP.mix_deviation): N, or -1 when not given. */
typedef struct at_n {
    const rule *r;
    int64_t n;
} at_n;

static int at_cb(void *user, const char *section, const char *key, const char *value) {
    at_n *a = user;
    const char *at = strchr(value, '@');
    char want[160];
    if (strncmp(section, "qos.", 4) != 0 || strcmp(section + 4, a->r->workload) != 0 || !at) return 1;
    if (strcmp(a->r->op, "*") == 0)
        snprintf(want, sizeof want, "mix_deviation");
    else
        snprintf(want, sizeof want, "%s.mix_deviation", a->r->op);
    if (strcmp(key, want) == 0) a->n = strtoll(at + 1, NULL, 10);
    return 1;
}

/* The least sample the rule needs (docs/method.md, "Rules not judged"):
 * ceil(1 / (1 - q)) for a percentile or a share within a limit, 1 for a
 * mean or an error rate, z^2 p (1 - p) / d^2 for a mix (the largest over its
 * ops, or the tile file's @N); -1 when not worked out here (throughput). */
static int64_t least_sample(const tb_vdata *d, const rule *ru, double limit) {
    double q = ru->kind == K_PCT ? ru->pct : limit, n = 1.0;
    tb_vmix mx;
    at_n a = {ru, -1};
    if (ru->kind == K_PCT || ru->kind == K_WITHIN) {
        n = q > 0.0 && q < 100.0 ? ceil(100.0 / (100.0 - q) - 1e-9) : 1.0;
    } else if (ru->kind == K_MIX) {
        ini_parse_string(d->config ? d->config : "", at_cb, &a);
        if (a.n >= 0) return a.n;
        if (tb_vmix_targets(d->config, ru->workload, &mx) != 0) return -1;
        for (size_t k = 0; k < mx.n && limit > 0.0; k++) {
            double t = mx.pct[k], m;
            if ((strcmp(ru->op, "*") != 0 && strcmp(ru->op, mx.op[k]) != 0) || !(t > 0.0 && t < 100.0)) continue;
            m = ceil(2.576 * 2.576 * t * (100.0 - t) / (limit * limit) - 1e-9); /* z: the two-sided 99% quantile */
            if (m > n) n = m;
        }
    } else if (ru->kind != K_MEAN && ru->kind != K_ERRORS) {
        return -1;
    }
    return n > 9e15 ? -1 : (int64_t)n;
}

/* Whether rule ru of level id can be judged again here: its kind is one this
 * file recomputes and its data is in the bundle. */
static int recomputable(const tb_vdata *d, int64_t id, const rule *ru) {
    int infra = strncmp(ru->workload, "infra.", 6) == 0;
    tb_vmix mx;
    switch (ru->kind) {
    case K_ERRORS:
    case K_THROUGHPUT: return 1;
    case K_MIX: return !infra && tb_vmix_targets(d->config, ru->workload, &mx) == 0;
    case K_PCT:
    case K_MEAN:
    case K_WITHIN: return d->hlog.n > 0 && (!infra || infra_hist_known(d, id, ru));
    default: return 0;
    }
}

/* qos.csv's min_ops of row q is the least sample the rule needs; a FAIL
 * line when not (a raised minimum would turn a fail into "not judged"). */
static int least_ok(const tb_vdata *d, const tb_vlevel *lv, size_t q, const rule *ru, const char *name, tb_vresult *r) {
    int64_t want = least_sample(d, ru, tb_vcell_real(&d->qos, q, "limit")), got;
    char what[400];
    if (want < 0 || tb_vcsv_int(&d->qos, q, tb_vcsv_col(&d->qos, "min_ops"), &got) != 1 || got == want) return 1;
    snprintf(what, sizeof what, "qos %s %s min_ops", lv->tag, name);
    tb_vresult_add(r, 0, what, "the least sample docs/method.md gives the rule",
                   "qos.csv says %lld, the rule needs %lld", (long long)got, (long long)want);
    return 0;
}

static void check_level(const tb_vdata *d, const tb_vrefs *f, const tb_vlevel *lv, const json_t *lvj, tb_vresult *r) {
    size_t agree = 0, judged = 0, skipped = 0, before = r->failed;
    for (size_t q = 0; q < d->qos.n_rows; q++) {
        const char *name = tb_vcell(&d->qos, q, "rule");
        int64_t tile = tb_vcell_int(&d->qos, q, "tile", 0);
        rule ru;
        verdict v;
        char why[TB_ERR_LEN] = "";
        const json_t *p;
        if (tb_vcell_int(&d->qos, q, "level_id", -1) != lv->id || !name) continue;
        if (parse_rule(name, &ru) != 0) {
            skipped++;
            continue;
        }
        if (!(p = published(lvj, name, tile))) {
            tb_vresult_add(r, 0, "qos", "each judged rule in report.json", "%s tile %lld %s: not in report.json",
                           lv->tag, (long long)tile, name);
            continue;
        }
        if (!recomputable(d, lv->id, &ru)) {
            skipped++;
            continue;
        }
        if (judge(d, f, lv, q, &ru, &v, why) != 0) {
            if (why[0]) tb_vresult_add(r, 0, "qos", "readable histograms", "%s %s: %s", lv->tag, name, why);
            skipped++;
            continue;
        }
        if (!least_ok(d, lv, q, &ru, name, r)) continue;
        agree += compare(d, lv, q, name, &v, p, r);
        judged += v.rate || (v.n > 0 && (int64_t)v.n >= tb_vcell_int(&d->qos, q, "min_ops", 1));
    }
    if (r->failed == before) {
        char what[160];
        snprintf(what, sizeof what, "qos %s", lv->tag);
        if (skipped)
            tb_vresult_add(r, 1, what, "each verdict as published, at the histogram's precision",
                           "%zu verdicts agree (%zu judged); %zu rules not recomputed (operations' latencies without "
                           "histograms, mixes the tile file does not give%s)",
                           agree, judged, skipped, d->hlog.n == 0 ? ", no histograms" : "");
        else
            tb_vresult_add(r, 1, what, "each verdict as published, at the histogram's precision",
                           "%zu verdicts agree (%zu judged); every rule recomputed", agree, judged);
    }
}

void tb_vcheck_qos(const tb_vdata *d, tb_vresult *r) {
    const json_t *levels = json_object_get(json_object_get(d->report, "run"), "levels");
    int parsed;
    tb_vrefs *f = tb_vrefs_load(d, &parsed); /* a tile file that does not parse fails in figures.c */
    for (size_t i = 0; i < d->n_lv; i++) {
        const json_t *lvj = tb_vreport_level(levels, i, &d->lv[i]);
        if (lvj) check_level(d, f, &d->lv[i], lvj, r); /* a level missing in report.json fails in figures.c */
    }
    tb_vrefs_free(f);
}
