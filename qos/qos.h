/*
 * qos.h: QoS rules and their evaluation. A rule limits one workload's op
 * (percentile, mean, or error rate); evaluating all rules of a load level gives
 * its verdict: pass iff every rule passes, with one line per rule saying
 * observed vs limit. Pure computation: no I/O.
 */
#ifndef TB_QOS_QOS_H
#define TB_QOS_QOS_H

#include <stdint.h>

#include "qos/hist.h"

typedef enum {
    TB_QOS_PERCENTILE = 0, /* value at pct <= limit (ms) */
    TB_QOS_MEAN,           /* mean latency <= limit (ms) */
    TB_QOS_ERROR_RATE      /* errors / (ops + errors) * 100 < limit (%) */
} tb_qos_kind;

typedef struct tb_qos_rule {
    char workload[32]; /* workload section name, e.g. "oltp" */
    char op[32];       /* op name, e.g. "Order"; "*" = all ops of the workload (error rate) */
    tb_qos_kind kind;
    double pct;        /* percentile for TB_QOS_PERCENTILE, e.g. 90 */
    double limit;      /* ms for latency kinds, percent for error rate */
    char source[96];   /* where the limit comes from, e.g. "Olio UIDriver max90th" */
} tb_qos_rule;

/* Observed figures of one op over one steady-state phase, merged over tiles. */
typedef struct tb_qos_input {
    const char *workload;
    const char *op;
    const tb_hist *hist; /* corrected (intended-start) latencies */
    uint64_t ops;        /* successful ops */
    uint64_t errors;     /* failed ops */
} tb_qos_input;

typedef struct tb_qos_result {
    char rule[96];   /* "oltp.Order p90 <= 3000 ms" */
    double observed; /* ms or % */
    double limit;
    int pass;        /* 1 pass, 0 fail */
    char reason[160];/* on fail: "p90 4213.0 ms > 3000 ms"; "no ops" when nothing was measured */
} tb_qos_result;

/* Human name of a rule into buf (truncated to len), e.g.
 * "oltp.Order p90 <= 3000 ms", "web.Login mean <= 500 ms",
 * "web.* error rate < 0.5%". */
void tb_qos_rule_name(const tb_qos_rule *r, char *buf, size_t len);

/*
 * Evaluates one rule against the inputs (matched by workload and op; "*"
 * merges all ops of the workload; several matching inputs, e.g. one per tile,
 * are merged too). A latency rule with zero matching ops (no matching input,
 * or only NULL/empty histograms) fails with reason "no ops". An error-rate
 * rule with zero ops and zero errors passes with observed 0. out->reason is
 * filled on pass as well ("p90 812.0 ms <= 1000 ms"); observed latencies are
 * ms, rates %. Returns pass (1) or fail (0), filling *out. in may be NULL when
 * n_in is 0.
 */
int tb_qos_eval(const tb_qos_rule *r, const tb_qos_input *in, int n_in, tb_qos_result *out);

#endif
