/*
 * qos.c: evaluates QoS rules (percentile, mean, share within a limit, mix
 * deviation, error rate, throughput vs reference) against the figures of a
 * load level or of one of its tiles and explains each verdict in one line.
 * The rule syntax of the tile file is parsed in tiles/qos_rule.c. Rule
 * limits are ms, % or percentage points; histogram values are µs. Pure
 * computation, no I/O.
 */
#include "qos/qos.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack for the comparisons of computed shares (%, pp) against a limit, so
 * that 100 * 95 / 100 vs 95 is not decided by the last bit of a double. */
#define SHARE_EPS 1e-9

/* Observed latency in ms: one decimal from 100 ms up ("4213.0"), three below
 * ("1.800") so sub-millisecond figures stay readable. */
static void fmt_ms(double v, char *buf, size_t len) { snprintf(buf, len, v >= 100.0 ? "%.1f" : "%.3f", v); }

/* "p90", "p99.9", "mean", "error rate", ... into buf. */
static void kind_label(const tb_qos_rule *r, char *buf, size_t len) {
    char num[32];
    switch (r->kind) {
    case TB_QOS_PERCENTILE:
        tb_qos_fmt_num(r->pct, num, sizeof num);
        snprintf(buf, len, "p%s", num);
        return;
    case TB_QOS_MEAN: snprintf(buf, len, "mean"); return;
    case TB_QOS_ERROR_RATE: snprintf(buf, len, "error rate"); return;
    case TB_QOS_WITHIN:
        tb_qos_fmt_num(r->within_ms, num, sizeof num);
        snprintf(buf, len, "within %s ms", num);
        return;
    case TB_QOS_MIX: snprintf(buf, len, "mix deviation"); return;
    case TB_QOS_THROUGHPUT: snprintf(buf, len, "throughput"); return;
    }
    snprintf(buf, len, "kind %d", (int)r->kind);
}

void tb_qos_rule_name(const tb_qos_rule *r, char *buf, size_t len) {
    char label[48], lim[32];
    tb_qos_fmt_num(r->limit, lim, sizeof lim);
    kind_label(r, label, sizeof label);
    switch (r->kind) {
    case TB_QOS_ERROR_RATE: snprintf(buf, len, "%s.%s %s < %s%%", r->workload, r->op, label, lim); return;
    case TB_QOS_WITHIN: snprintf(buf, len, "%s.%s %s >= %s%%", r->workload, r->op, label, lim); return;
    case TB_QOS_MIX: snprintf(buf, len, "%s.%s %s <= %s pp", r->workload, r->op, label, lim); return;
    case TB_QOS_THROUGHPUT: snprintf(buf, len, "%s.%s %s >= %s%% of reference", r->workload, r->op, label, lim); return;
    default: snprintf(buf, len, "%s.%s %s <= %s ms", r->workload, r->op, label, lim); return;
    }
}

/* tile 0 selects every input; t >= 1 only that tile's. */
static int tile_selected(int in_tile, int tile) { return tile == 0 || in_tile == tile; }

static int workload_matches(const tb_qos_rule *r, const char *workload) {
    return workload && strcmp(workload, r->workload) == 0;
}

static int input_matches(const tb_qos_rule *r, const tb_qos_input *in, int tile) {
    if (!in->op || !workload_matches(r, in->workload) || !tile_selected(in->tile, tile)) return 0;
    return strcmp(r->op, "*") == 0 || strcmp(in->op, r->op) == 0;
}

/* A judged outcome. */
static tb_qos_outcome finish(tb_qos_result *out, int pass) {
    out->not_judged = 0;
    out->pass = pass;
    return pass ? TB_QOS_PASS : TB_QOS_FAIL;
}

/* Not judged: too few ops; reason already written. */
static tb_qos_outcome unjudged(tb_qos_result *out) {
    out->not_judged = 1;
    out->pass = 0;
    return TB_QOS_NOT_JUDGED;
}

/* Slack for "ceil(x)" of a computed ratio, so that 100 / (100 - 90), which
 * is 10.000000000000002 in doubles, needs 10 ops and not 11. */
#define CEIL_EPS 1e-9

uint64_t tb_qos_quantile_min_ops(double pct) {
    double n;
    if (!(pct > 0.0) || pct >= 100.0) return 1;
    n = ceil(100.0 / (100.0 - pct) - CEIL_EPS);
    return n < 1.0 ? 1 : n >= 1.8e19 ? UINT64_MAX : (uint64_t)n;
}

uint64_t tb_qos_mix_min_ops(double target_pct, double limit_pp) {
    double n;
    if (!(limit_pp > 0.0) || !(target_pct > 0.0) || target_pct >= 100.0) return 1;
    /* z^2 p (1 - p) / d^2 with p = t / 100 and d = L / 100: the 100^2 cancel */
    n = ceil(TB_QOS_MIX_Z * TB_QOS_MIX_Z * target_pct * (100.0 - target_pct) / (limit_pp * limit_pp) - CEIL_EPS);
    return n < 1.0 ? 1 : n >= 1.8e19 ? UINT64_MAX : (uint64_t)n;
}

/* The rule's own minimum when the tile file gave one, else derived. A
 * latency-based rule needs at least one op whatever was given. */
static uint64_t min_sample(const tb_qos_rule *r, uint64_t derived) { return r->min_ops_given ? r->min_ops : derived; }

/* Whether the rule's workload completed no op at all (successes, any op)
 * in the selection: its rules then fail instead of going unjudged. */
static int workload_idle(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile) {
    int i;
    for (i = 0; i < n_in; i++)
        if (in[i].op && workload_matches(r, in[i].workload) && tile_selected(in[i].tile, tile) && in[i].ops > 0)
            return 0;
    return 1;
}

/* Zero ops: a fail when the whole workload completed nothing, else not judged. */
static tb_qos_outcome no_ops(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile, tb_qos_result *out) {
    out->observed = NAN;
    if (workload_idle(r, in, n_in, tile)) {
        snprintf(out->reason, sizeof out->reason, "no ops (%s completed no op in steady state)", r->workload);
        return finish(out, 0);
    }
    snprintf(out->reason, sizeof out->reason, "no ops");
    return unjudged(out);
}

static tb_qos_outcome eval_error_rate(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile,
                                      tb_qos_result *out) {
    uint64_t ops = 0, errors = 0;
    char lim[32];
    int i;
    for (i = 0; i < n_in; i++) {
        if (!input_matches(r, &in[i], tile)) continue;
        ops += in[i].ops;
        errors += in[i].errors;
    }
    tb_qos_fmt_num(r->limit, lim, sizeof lim);
    out->ops = ops + errors;
    out->min_ops = 1;
    if (ops + errors == 0) return no_ops(r, in, n_in, tile, out);
    out->observed = (double)errors / (double)(ops + errors) * 100.0;
    snprintf(out->reason, sizeof out->reason, "error rate %.3f%% %s %s%% (%llu of %llu ops)", out->observed,
             out->observed < r->limit ? "<" : ">=", lim, (unsigned long long)errors,
             (unsigned long long)(ops + errors));
    return finish(out, out->observed < r->limit);
}

/*
 * The latencies of every matching input as one histogram, or NULL when no
 * matching input has any. Merges (into *owned, which the caller frees) only
 * when several inputs match ("*", or one op per tile); otherwise returns the
 * input's own histogram untouched.
 */
static const tb_hist *matching_hist(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile, tb_hist **owned) {
    const tb_hist *single = NULL;
    int i;
    *owned = NULL;
    for (i = 0; i < n_in; i++) {
        if (!input_matches(r, &in[i], tile) || !in[i].hist || tb_hist_count(in[i].hist) == 0) continue;
        if (!single) {
            single = in[i].hist;
            continue;
        }
        if (!*owned) {
            *owned = tb_hist_new();
            tb_hist_merge(*owned, single);
        }
        tb_hist_merge(*owned, in[i].hist);
    }
    return *owned ? *owned : single;
}

static tb_qos_outcome eval_latency(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile,
                                   tb_qos_result *out) {
    const tb_hist *h;
    tb_hist *merged;
    char label[48], lim[32], obs[32];
    uint64_t count;
    int pass;

    if (r->kind == TB_QOS_PERCENTILE && !(r->pct >= 0.0 && r->pct <= 100.0)) {
        out->observed = NAN;
        snprintf(out->reason, sizeof out->reason, "bad percentile %g (use 0..100)", r->pct);
        return finish(out, 0);
    }
    out->min_ops = min_sample(r, r->kind == TB_QOS_PERCENTILE ? tb_qos_quantile_min_ops(r->pct) : 1);
    h = matching_hist(r, in, n_in, tile, &merged);
    count = h ? tb_hist_count(h) : 0;
    out->ops = count;
    if (count == 0) return no_ops(r, in, n_in, tile, out);
    if (r->kind == TB_QOS_PERCENTILE)
        out->observed = (double)tb_hist_percentile(h, r->pct) / 1000.0;
    else
        out->observed = tb_hist_mean(h) / 1000.0;
    tb_hist_free(merged);

    kind_label(r, label, sizeof label);
    tb_qos_fmt_num(r->limit, lim, sizeof lim);
    fmt_ms(out->observed, obs, sizeof obs);
    if (count < out->min_ops) {
        snprintf(out->reason, sizeof out->reason, "%llu %s, %s needs %llu (%s); observed %s ms",
                 (unsigned long long)count, count == 1 ? "op" : "ops", label, (unsigned long long)out->min_ops,
                 r->min_ops_given ? "set in the tile file" : "with fewer it is the slowest op, not a percentile", obs);
        return unjudged(out);
    }
    pass = out->observed <= r->limit;
    snprintf(out->reason, sizeof out->reason, "%s %s ms %s %s ms", label, obs, pass ? "<=" : ">", lim);
    return finish(out, pass);
}

/* Weathervane: the share of ops whose latency is within within_ms. */
static tb_qos_outcome eval_within(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile,
                                  tb_qos_result *out) {
    const tb_hist *h;
    tb_hist *merged;
    char lim[32], lat[32];
    uint64_t limit_us, count, below;
    double us;
    int pass;

    tb_qos_fmt_num(r->limit, lim, sizeof lim);
    tb_qos_fmt_num(r->within_ms, lat, sizeof lat);
    if (!(r->within_ms >= 0.0)) {
        out->observed = NAN;
        snprintf(out->reason, sizeof out->reason, "bad latency limit %g ms", r->within_ms);
        return finish(out, 0);
    }
    out->min_ops = min_sample(r, tb_qos_quantile_min_ops(r->limit));
    h = matching_hist(r, in, n_in, tile, &merged);
    count = h ? tb_hist_count(h) : 0;
    out->ops = count;
    if (count == 0) return no_ops(r, in, n_in, tile, out);
    us = r->within_ms * 1000.0;
    limit_us = us >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(us);
    /* Back to a count, so that observed is 100 * below / count rounded once:
     * 99 of 100 then gives exactly the double 99, equal to a limit of 99. */
    below = (uint64_t)llround(tb_hist_fraction_below(h, limit_us) * (double)count);
    tb_hist_free(merged);
    out->observed = 100.0 * (double)below / (double)count;
    if (count < out->min_ops) {
        snprintf(out->reason, sizeof out->reason, "%llu %s, %s%% within needs %llu (%s); observed %.3f%%",
                 (unsigned long long)count, count == 1 ? "op" : "ops", lim, (unsigned long long)out->min_ops,
                 r->min_ops_given ? "set in the tile file" : "with fewer one slow op decides", out->observed);
        return unjudged(out);
    }
    pass = out->observed >= r->limit - SHARE_EPS;
    snprintf(out->reason, sizeof out->reason, "%.3f%% within %s ms %s %s%% (%llu of %llu ops)", out->observed, lat,
             pass ? ">=" : "<", lim, (unsigned long long)below, (unsigned long long)count);
    return finish(out, pass);
}

/* An input that takes part in the mix of the rule's workload. */
static int mix_input(const tb_qos_rule *r, const tb_qos_input *in, int tile) {
    return in->has_mix_target && in->op && workload_matches(r, in->workload) && tile_selected(in->tile, tile);
}

/* Faban: share of each op among the workload's mix ops vs its target share. */
static tb_qos_outcome eval_mix(const tb_qos_rule *r, const tb_qos_input *in, int n_in, int tile, tb_qos_result *out) {
    int all = strcmp(r->op, "*") == 0;
    int *first = xmalloc((size_t)(n_in > 0 ? n_in : 1) * sizeof *first); /* one input per op name */
    int nd = 0, worst = -1, need_op = -1, d, i, pass;
    uint64_t total = 0, need = 0;
    double worst_dev = -1.0, worst_share = 0.0;
    char lim[32], tgt[32];

    for (i = 0; i < n_in; i++) {
        if (!mix_input(r, &in[i], tile)) continue;
        total += in[i].ops;
        for (d = 0; d < nd; d++)
            if (strcmp(in[first[d]].op, in[i].op) == 0) break;
        if (d == nd) first[nd++] = i;
    }
    for (d = 0; d < nd; d++) {
        const tb_qos_input *op = &in[first[d]];
        uint64_t cnt = 0, m;
        double share, dev;
        if (!all && strcmp(op->op, r->op) != 0) continue;
        for (i = first[d]; i < n_in; i++)
            if (mix_input(r, &in[i], tile) && strcmp(in[i].op, op->op) == 0) cnt += in[i].ops;
        share = total > 0 ? 100.0 * (double)cnt / (double)total : 0.0;
        dev = fabs(share - op->mix_target_pct);
        if (dev > worst_dev) {
            worst_dev = dev;
            worst_share = share;
            worst = first[d];
        }
        m = tb_qos_mix_min_ops(op->mix_target_pct, r->limit);
        if (m > need) {
            need = m;
            need_op = first[d];
        }
    }
    free(first);

    out->observed = NAN;
    if (worst < 0) { /* no mix op at all, or the named op is not one */
        if (all)
            snprintf(out->reason, sizeof out->reason, "no mix target for %s", r->workload);
        else
            snprintf(out->reason, sizeof out->reason, "no mix target for %s.%s", r->workload, r->op);
        return finish(out, 0);
    }
    out->ops = total;
    out->min_ops = min_sample(r, need);
    if (total == 0) return no_ops(r, in, n_in, tile, out);
    out->observed = worst_dev;
    tb_qos_fmt_num(r->limit, lim, sizeof lim);
    if (total < out->min_ops) {
        if (r->min_ops_given || need_op < 0) {
            snprintf(out->reason, sizeof out->reason,
                     "%llu mix %s, needs %llu (set in the tile file); observed %.3f pp (%s)", (unsigned long long)total,
                     total == 1 ? "op" : "ops", (unsigned long long)out->min_ops, worst_dev, in[worst].op);
        } else {
            tb_qos_fmt_num(in[need_op].mix_target_pct, tgt, sizeof tgt);
            snprintf(out->reason, sizeof out->reason,
                     "%llu mix %s, needs %llu (%s pp = " TB_QOS_MIX_Z_TEXT
                     " sd of %s's %s%% share); observed %.3f pp (%s)",
                     (unsigned long long)total, total == 1 ? "op" : "ops", (unsigned long long)out->min_ops, lim,
                     in[need_op].op, tgt, worst_dev, in[worst].op);
        }
        return unjudged(out);
    }
    pass = worst_dev <= r->limit + SHARE_EPS;
    tb_qos_fmt_num(in[worst].mix_target_pct, tgt, sizeof tgt);
    snprintf(out->reason, sizeof out->reason, "%s share %.3f%% (target %s%%): %.3f pp %s %s pp", in[worst].op,
             worst_share, tgt, worst_dev, pass ? "<=" : ">", lim);
    return finish(out, pass);
}

static tb_qos_outcome eval_throughput(const tb_qos_rule *r, const tb_qos_wl_input *w, int n_w, int tile,
                                      tb_qos_result *out) {
    double thr = 0.0, ref = 0.0;
    char lim[32], a[32], b[32];
    int i, n = 0, pass;
    for (i = 0; i < n_w; i++) {
        if (!workload_matches(r, w[i].workload) || !tile_selected(w[i].tile, tile)) continue;
        thr += w[i].throughput;
        ref += w[i].reference;
        n++;
    }
    out->observed = NAN;
    if (n == 0) {
        snprintf(out->reason, sizeof out->reason, "no throughput for %s", r->workload);
        return finish(out, 0);
    }
    if (!(ref > 0.0)) {
        snprintf(out->reason, sizeof out->reason, "no reference throughput for %s", r->workload);
        return finish(out, 0);
    }
    out->observed = 100.0 * thr / ref;
    pass = out->observed >= r->limit - SHARE_EPS;
    tb_qos_fmt_num(r->limit, lim, sizeof lim);
    tb_qos_fmt_num(thr, a, sizeof a);
    tb_qos_fmt_num(ref, b, sizeof b);
    snprintf(out->reason, sizeof out->reason, "throughput %.3f%% of reference %s %s%% (%s of %s)", out->observed,
             pass ? ">=" : "<", lim, a, b);
    return finish(out, pass);
}

tb_qos_outcome tb_qos_eval_inputs(const tb_qos_rule *r, const tb_qos_inputs *in, int tile, tb_qos_result *out) {
    const tb_qos_input *ops = in ? in->ops : NULL;
    const tb_qos_wl_input *wls = in ? in->workloads : NULL;
    int n_ops = ops && in->n_ops > 0 ? in->n_ops : 0;
    int n_wls = wls && in->n_workloads > 0 ? in->n_workloads : 0;

    memset(out, 0, sizeof *out);
    tb_qos_rule_name(r, out->rule, sizeof out->rule);
    out->limit = r->limit;
    switch (r->kind) {
    case TB_QOS_PERCENTILE:
    case TB_QOS_MEAN: return eval_latency(r, ops, n_ops, tile, out);
    case TB_QOS_ERROR_RATE: return eval_error_rate(r, ops, n_ops, tile, out);
    case TB_QOS_WITHIN: return eval_within(r, ops, n_ops, tile, out);
    case TB_QOS_MIX: return eval_mix(r, ops, n_ops, tile, out);
    case TB_QOS_THROUGHPUT: return eval_throughput(r, wls, n_wls, tile, out);
    }
    snprintf(out->reason, sizeof out->reason, "unknown rule kind %d", (int)r->kind);
    return finish(out, 0);
}

tb_qos_outcome tb_qos_eval(const tb_qos_rule *r, const tb_qos_input *in, int n_in, tb_qos_result *out) {
    tb_qos_inputs set;
    memset(&set, 0, sizeof set);
    set.ops = in;
    set.n_ops = in ? n_in : 0;
    return tb_qos_eval_inputs(r, &set, 0, out);
}

tb_qos_outcome tb_qos_verdict(const tb_qos_rule *rules, int n_rules, const tb_qos_inputs *in, int tile,
                              tb_qos_result *out) {
    int i, failed = 0, unjudged = 0;
    for (i = 0; i < n_rules; i++) {
        tb_qos_outcome o = tb_qos_eval_inputs(&rules[i], in, tile, &out[i]);
        if (o == TB_QOS_FAIL)
            failed = 1;
        else if (o == TB_QOS_NOT_JUDGED)
            unjudged = 1;
    }
    return failed ? TB_QOS_FAIL : unjudged ? TB_QOS_NOT_JUDGED : TB_QOS_PASS;
}
