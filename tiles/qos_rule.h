/*
 * qos_rule.h: a QoS rule as a tile file states it in a [qos.NAME] section
 * ("Order.p95 = 2s": the workload, the op, the kind of limit and the limit),
 * and the parser of that syntax. What a rule means for a load level's
 * figures, and when a sample is too small to judge it, is the evaluation's
 * (qos/qos.h).
 */
#ifndef TB_TILES_QOS_RULE_H
#define TB_TILES_QOS_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

typedef enum {
    TB_QOS_PERCENTILE = 0, /* value at pct <= limit (ms); source: Faban max90th, Olio UIDriver */
    TB_QOS_MEAN,           /* mean latency <= limit (ms) */
    TB_QOS_ERROR_RATE,     /* errors / (ops + errors) * 100 < limit (%); source: Weathervane */
    TB_QOS_WITHIN,         /* % of ops with latency <= within_ms, >= limit (%); source: Weathervane
                              "99% of operations under the response-time limit" */
    TB_QOS_MIX,            /* worst 100 * |actual share - target share| <= limit (percentage
                              points); source: Faban driver Metrics, <mix allowedDeviation> */
    TB_QOS_THROUGHPUT      /* 100 * achieved / reference >= limit (%) */
} tb_qos_kind;

typedef struct tb_qos_rule {
    char workload[32]; /* workload section name, e.g. "oltp" */
    char op[32];       /* op name, e.g. "Order"; "*" = all ops of the workload (error rate, mix,
                          and always for throughput) */
    tb_qos_kind kind;
    double pct;        /* percentile for TB_QOS_PERCENTILE, e.g. 90 */
    double limit;      /* PERCENTILE, MEAN: ms; ERROR_RATE, WITHIN, THROUGHPUT: %; MIX: pp */
    char source[96];   /* where the limit comes from, e.g. "Olio UIDriver max90th" */
    double within_ms;  /* TB_QOS_WITHIN only: the latency limit in ms (limit holds the
                          required share in %); 0 for the other kinds */
    int min_ops_given; /* 1: min_ops below replaces the derived minimum sample
                          (`mix_deviation = PP@N`); 0: derived (see qos/qos.h, "Minimum sample") */
    uint64_t min_ops;  /* with min_ops_given: judged from this many ops (0 = from the first) */
} tb_qos_rule;

/*
 * Parses one key = value line of a [qos.WORKLOAD] section into *out:
 *   <Op>.pNN = DUR         percentile limit, NN in (0,100], e.g. p90, p99.9
 *   <Op>.mean = DUR        mean latency limit
 *   <Op>.within = DUR@PCT  at least PCT% of ops within DUR, e.g. "2s@99"
 *   [<Op>.]error_rate = PCT    error rate below PCT% (op "*" without <Op>)
 *   [<Op>.]mix_deviation = PP[@N]  mix deviation at most PP percentage points;
 *                          @N: judged from N mix ops (default: derived, see
 *                          "Minimum sample" in qos/qos.h)
 *   throughput = PCT       throughput at least PCT% of reference (workload only)
 * DUR takes unit suffixes (tb_parse_duration_us: "500ms", "2s"; bare = s)
 * and becomes ms. PCT is a number, optionally followed by '%': in [0,100]
 * for error_rate, (0,100] for within, > 0 for throughput. PP is in [0,100],
 * optionally followed by "pp". Blanks around '@' are allowed. Op names are
 * the text before the first '.', 1..31 characters.
 * out->source is left empty for the caller (e.g. "standard.ini:57").
 * Returns 0, or -1 with err (TB_ERR_LEN) = "[qos.web] Login.p999: percentile
 * must be p1..p100 (p999 is not p99.9: write p99.9)", i.e. section, key and
 * why; the caller prefixes "file:line: ". *out is unspecified on error.
 */
int tb_qos_parse_rule(const char *workload, const char *key, const char *value, tb_qos_rule *out, char *err) TB_WUR;

/* A rule's number as it is written: no trailing zeros, 3 decimals at most
 * (3000 -> "3000", 0.5 -> "0.5", 99.9 -> "99.9"; %g would switch to
 * exponents), into buf (len bytes). */
void tb_qos_fmt_num(double v, char *buf, size_t len);

#endif
