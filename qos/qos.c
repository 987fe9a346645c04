/*
 * qos.c: evaluates one QoS rule (percentile, mean or error rate) against the
 * per-op figures of a load level and explains the verdict in one line. Rule
 * limits are ms or %, histogram values are µs. Pure computation, no I/O.
 */
#include "qos/qos.h"

#include <stdio.h>
#include <string.h>

/* A number without trailing zeros: 3000 -> "3000", 0.5 -> "0.5", 99.9 ->
 * "99.9" (3 decimals at most; %g would switch to exponents). */
static void fmt_num(double v, char *buf, size_t len) {
    char *dot, *end;
    snprintf(buf, len, "%.3f", v);
    dot = strchr(buf, '.');
    if (!dot) return;
    end = buf + strlen(buf) - 1;
    while (end > dot && *end == '0') *end-- = '\0';
    if (end == dot) *end = '\0';
}

/* Observed latency in ms: one decimal from 100 ms up ("4213.0"), three below
 * ("1.800") so sub-millisecond figures stay readable. */
static void fmt_ms(double v, char *buf, size_t len) {
    snprintf(buf, len, v >= 100.0 ? "%.1f" : "%.3f", v);
}

/* "p90", "p99.9", "mean" or "error rate" into buf. */
static void kind_label(const tb_qos_rule *r, char *buf, size_t len) {
    char num[32];
    switch (r->kind) {
    case TB_QOS_PERCENTILE:
        fmt_num(r->pct, num, sizeof num);
        snprintf(buf, len, "p%s", num);
        return;
    case TB_QOS_MEAN:
        snprintf(buf, len, "mean");
        return;
    case TB_QOS_ERROR_RATE:
        snprintf(buf, len, "error rate");
        return;
    }
    snprintf(buf, len, "kind %d", (int)r->kind);
}

void tb_qos_rule_name(const tb_qos_rule *r, char *buf, size_t len) {
    char label[48], lim[32];
    fmt_num(r->limit, lim, sizeof lim);
    kind_label(r, label, sizeof label);
    if (r->kind == TB_QOS_ERROR_RATE)
        snprintf(buf, len, "%s.%s %s < %s%%", r->workload, r->op, label, lim);
    else
        snprintf(buf, len, "%s.%s %s <= %s ms", r->workload, r->op, label, lim);
}

static int input_matches(const tb_qos_rule *r, const tb_qos_input *in) {
    if (!in->workload || !in->op || strcmp(in->workload, r->workload) != 0) return 0;
    return strcmp(r->op, "*") == 0 || strcmp(in->op, r->op) == 0;
}

static int finish(tb_qos_result *out, int pass) {
    out->pass = pass;
    return pass;
}

static int eval_error_rate(const tb_qos_rule *r, const tb_qos_input *in, int n_in,
                           tb_qos_result *out) {
    uint64_t ops = 0, errors = 0;
    char lim[32];
    int i;
    for (i = 0; i < n_in; i++) {
        if (!input_matches(r, &in[i])) continue;
        ops += in[i].ops;
        errors += in[i].errors;
    }
    fmt_num(r->limit, lim, sizeof lim);
    if (ops + errors == 0) {
        out->observed = 0.0;
        snprintf(out->reason, sizeof out->reason, "no ops, no errors: 0%% < %s%%", lim);
        return finish(out, 1);
    }
    out->observed = (double)errors / (double)(ops + errors) * 100.0;
    snprintf(out->reason, sizeof out->reason, "error rate %.3f%% %s %s%% (%llu of %llu ops)",
             out->observed, out->observed < r->limit ? "<" : ">=", lim,
             (unsigned long long)errors, (unsigned long long)(ops + errors));
    return finish(out, out->observed < r->limit);
}

static int eval_latency(const tb_qos_rule *r, const tb_qos_input *in, int n_in,
                        tb_qos_result *out) {
    const tb_hist *single = NULL;
    tb_hist *merged = NULL;
    char label[48], lim[32], obs[32];
    int i, pass;

    if (r->kind == TB_QOS_PERCENTILE && !(r->pct >= 0.0 && r->pct <= 100.0)) {
        out->observed = 0.0;
        snprintf(out->reason, sizeof out->reason, "bad percentile %g (use 0..100)", r->pct);
        return finish(out, 0);
    }
    /* Merge only when several inputs match ("*" or one op per tile). */
    for (i = 0; i < n_in; i++) {
        if (!input_matches(r, &in[i]) || !in[i].hist || tb_hist_count(in[i].hist) == 0)
            continue;
        if (!single) {
            single = in[i].hist;
            continue;
        }
        if (!merged) {
            merged = tb_hist_new();
            tb_hist_merge(merged, single);
        }
        tb_hist_merge(merged, in[i].hist);
    }
    if (merged) single = merged;
    if (!single) {
        out->observed = 0.0;
        snprintf(out->reason, sizeof out->reason, "no ops");
        return finish(out, 0);
    }
    if (r->kind == TB_QOS_PERCENTILE)
        out->observed = (double)tb_hist_percentile(single, r->pct) / 1000.0;
    else
        out->observed = tb_hist_mean(single) / 1000.0;
    tb_hist_free(merged);

    pass = out->observed <= r->limit;
    kind_label(r, label, sizeof label);
    fmt_num(r->limit, lim, sizeof lim);
    fmt_ms(out->observed, obs, sizeof obs);
    snprintf(out->reason, sizeof out->reason, "%s %s ms %s %s ms", label, obs,
             pass ? "<=" : ">", lim);
    return finish(out, pass);
}

int tb_qos_eval(const tb_qos_rule *r, const tb_qos_input *in, int n_in, tb_qos_result *out) {
    memset(out, 0, sizeof *out);
    tb_qos_rule_name(r, out->rule, sizeof out->rule);
    out->limit = r->limit;
    if (!in) n_in = 0;
    switch (r->kind) {
    case TB_QOS_PERCENTILE:
    case TB_QOS_MEAN:
        return eval_latency(r, in, n_in, out);
    case TB_QOS_ERROR_RATE:
        return eval_error_rate(r, in, n_in, out);
    }
    snprintf(out->reason, sizeof out->reason, "unknown rule kind %d", (int)r->kind);
    return finish(out, 0);
}
