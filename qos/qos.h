/*
 * qos.h: QoS rules and their evaluation. A rule limits one workload or one of
 * its ops: a latency percentile, a mean latency, the share of ops within a
 * latency limit, the deviation of the op mix from its target, the error rate,
 * or the throughput as a share of the reference. Evaluating all rules over the
 * figures of a load level (or of one tile of it) gives a verdict with one
 * line per rule saying observed vs limit.
 *
 * Each rule has three outcomes: pass, fail, or NOT JUDGED when the sample is
 * too small for the rule to mean anything (see "Minimum sample" below). A
 * rule that was not judged is never a pass: the verdict is PASS only when
 * every rule was judged and passed, FAIL when a judged rule failed, and
 * NOT_JUDGED (no judged rule failed, some rule could not be judged)
 * otherwise.
 *
 * Minimum sample (the number of ops n a rule needs to be judged):
 * - pNN: n >= ceil(1 / (1 - q)), q = NN / 100 (p90: 10, p95: 20, p99: 100,
 *   p99.9: 1000; p100 is the maximum: 1). The nearest-rank pNN of n values
 *   is the value of rank ceil(q n); below that n the rank is n, so the
 *   "percentile" would be the single slowest op of the sample, not a
 *   percentile of the distribution.
 * - within DUR >= PCT%: the same with q = PCT / 100 (99%: 100 ops): below it
 *   one slow op alone decides the share.
 * - mix deviation <= d pp: for each op of the mix with target share p,
 *   n >= z^2 p (1 - p) / d^2 mix ops (p, d as fractions) with z = 2.576,
 *   i.e. d is at least 2.576 standard deviations of the binomial share of
 *   n ops (the two-sided 99% normal quantile); a "*" rule takes the largest
 *   over its ops (Olio's TagSearch, 33.45%, at 2 pp: 3693 ops). Below it,
 *   chance alone would deviate by d more than 1% of the time per op. Why
 *   99% and not 3 sd (9 p (1 - p) / d^2, 5009 for TagSearch): the standard
 *   tile's compliant phase (40 min) gives one tile about 4,800 web ops, and
 *   Faban judges the mix of every such run; a minimum it could never reach
 *   would make every compliant run of the standard tile invalid. A limit of 0 pp cannot be met by chance at any n:
 * judged from the first op. `mix_deviation = PP@N` sets the minimum to N instead (N = 0: judged from the first op).
 * - mean, error rate: at least one op (for the error rate: one op or one
 *   error). One error is a real event, not a sampling artefact, so the error
 *   rate is judged on any sample.
 * - throughput: no minimum (it is a rate over the whole steady state).
 * With zero ops a rule is not judged ("no ops"), unless the rule's workload
 * completed no op at all in the selection (level or tile): then every one of
 * its op-based rules FAILS "no ops (web completed no op in steady state)",
 * because a workload whose users completed nothing is a stalled SUT, not a
 * small sample.
 * The rules themselves (tb_qos_rule) and their syntax in a tile file's
 * [qos.NAME] sections are the tile model's: tiles/qos_rule.h.
 * Pure computation: no I/O.
 */
#ifndef TB_QOS_QOS_H
#define TB_QOS_QOS_H

#include <stdint.h>

#include "common/tb_common.h"
#include "qos/hist.h"
#include "tiles/qos_rule.h"

/* The outcome of one rule, and of a verdict over several. Only
 * TB_QOS_PASS is a pass: test `== TB_QOS_PASS`, never truthiness. */
typedef enum {
    TB_QOS_FAIL = 0,      /* a judged rule missed its limit */
    TB_QOS_PASS = 1,      /* judged and met (a verdict: every rule judged and met) */
    TB_QOS_NOT_JUDGED = 2 /* too few ops to judge (a verdict: none failed, some not judged) */
} tb_qos_outcome;

/*
 * Observed figures of one op over one steady-state phase: either of one tile
 * (tile = 1..N) or already merged over tiles (tile = 0). Fields after `errors`
 * are optional: a zeroed struct means "no tile, no mix target".
 */
typedef struct tb_qos_input {
    const char *workload;
    const char *op;
    const tb_hist *hist;   /* corrected (intended-start) latencies */
    uint64_t ops;          /* successful ops */
    uint64_t errors;       /* failed ops */
    int tile;              /* 1..N: figures of that tile only; 0: not tile-specific */
    int has_mix_target;    /* 1: this op is part of the workload's mix, target below */
    double mix_target_pct; /* target share of this op among the workload's mix ops, in %
                              (the targets of a workload's ops should add up to 100) */
} tb_qos_input;

/*
 * Throughput of one workload over one steady-state phase, for
 * TB_QOS_THROUGHPUT: one tile's (tile = 1..N) or summed over tiles (tile = 0).
 */
typedef struct tb_qos_wl_input {
    const char *workload;
    int tile;          /* 1..N, or 0 when not tile-specific */
    double throughput; /* achieved, in the workload's unit (e.g. OPM) */
    double reference;  /* reference throughput of the same tiles, same unit: one tile's
                          reference for a per-tile entry, reference x tiles for a summed one */
} tb_qos_wl_input;

/* Everything rules are evaluated over: per-op figures and per-workload
 * throughputs. Either array may be NULL with its count 0. Not owned. */
typedef struct tb_qos_inputs {
    const tb_qos_input *ops;
    int n_ops;
    const tb_qos_wl_input *workloads;
    int n_workloads;
} tb_qos_inputs;

typedef struct tb_qos_result {
    char rule[96];    /* "oltp.Order p90 <= 3000 ms" */
    double observed;  /* ms, %, or pp: the unit of limit; also set when not judged if there
                         were ops (for information only); NAN when nothing was observed
                         (no ops, no mix target, no throughput, a bad rule) */
    double limit;     /* the rule's limit (for WITHIN the required %, not the latency) */
    int pass;         /* 1 pass; 0 fail or not judged (a rule not judged never passes) */
    int not_judged;   /* 1: not judged, too few ops (pass is 0); 0: judged, pass says how */
    uint64_t ops;     /* the sample the minimum applies to: ops of the op(s) (latency, WITHIN),
                         mix ops of the workload (MIX), ops + errors (ERROR_RATE); 0 for
                         THROUGHPUT */
    uint64_t min_ops; /* the least sample for a verdict (see the top); 0 = no minimum */
    char reason[224]; /* "p90 4213.0 ms > 3000 ms"; when not judged, why: "4 ops, p90 needs 10
                         (with fewer it is the slowest op, not a percentile); observed 812.0 ms",
                         "no ops" */
    int tile;         /* whose verdict: 0 = the load level's (all tiles merged), N = tile N's alone
                         (set by the caller of tb_qos_verdict) */
} tb_qos_result;

/* Human name of a rule into buf (truncated to len), e.g.
 * "oltp.Order p90 <= 3000 ms", "web.Login mean <= 500 ms",
 * "web.* error rate < 0.5%", "web.HomePage within 2000 ms >= 99%",
 * "web.* mix deviation <= 2 pp", "oltp.* throughput >= 95% of reference". */
void tb_qos_rule_name(const tb_qos_rule *r, char *buf, size_t len);

/*
 * The least sample for a verdict (see "Minimum sample" at the top), for
 * tests and documentation:
 * - tb_qos_quantile_min_ops: ops a pNN rule (pct = NN) or a WITHIN rule
 *   (pct = its required share) needs: ceil(100 / (100 - pct)); 1 for pct
 *   >= 100 or pct <= 0. p90: 10, p99.9: 1000.
 * - tb_qos_mix_min_ops: mix ops an op of target share target_pct (%) needs
 *   for a limit of limit_pp percentage points: ceil(z^2 t (100 - t) / L^2)
 *   with t, L in % and z = TB_QOS_MIX_Z; 1 for L <= 0 or a target of 0 or
 *   100%. 25% at 2 pp: 6.635776 * 25 * 75 / 4 = 3110.52 -> 3111.
 */
uint64_t tb_qos_quantile_min_ops(double pct);
#define TB_QOS_MIX_Z      2.576 /* two-sided 99% quantile of the standard normal */
#define TB_QOS_MIX_Z_TEXT "2.576"
uint64_t tb_qos_mix_min_ops(double target_pct, double limit_pp);

/*
 * Evaluates one rule against per-op inputs (matched by workload and op; "*"
 * merges all ops of the workload; several matching inputs, e.g. one per tile,
 * are merged too; the tile field is ignored). A rule with fewer ops than its
 * minimum sample (see the top; zero ops: reason "no ops") is not judged
 * (TB_QOS_NOT_JUDGED, pass 0, not_judged 1), unless its workload completed no op
 * at all: then it fails "no ops (W completed no op in steady state)".
 * out->reason is filled on pass as well ("p90 812.0 ms <= 1000 ms");
 * observed latencies are ms, rates %. Returns the outcome, filling *out. in
 * may be NULL when n_in is 0. A TB_QOS_THROUGHPUT rule has no per-workload
 * input here and fails ("no throughput for oltp"): use tb_qos_eval_inputs
 * for it.
 * Same as tb_qos_eval_inputs(r, {in, n_in, NULL, 0}, 0, out).
 */
tb_qos_outcome tb_qos_eval(const tb_qos_rule *r, const tb_qos_input *in, int n_in, tb_qos_result *out);

/*
 * Evaluates one rule over in (NULL = no inputs) and fills *out; returns the
 * outcome (TB_QOS_PASS, TB_QOS_FAIL or TB_QOS_NOT_JUDGED).
 *
 * tile selects the inputs: 0 takes every input whatever its tile field (the
 * level verdict: per-tile entries of one op are merged, histograms added,
 * counts and throughputs summed); t >= 1 takes only inputs whose tile == t
 * (a per-tile verdict; tile-0 inputs are left out).
 *
 * Per kind, beyond tb_qos_eval:
 * - WITHIN: observed = 100 * share of the merged histogram's values <=
 *   within_ms (tb_hist_fraction_below: exact below 2048 µs, 0.1% buckets
 *   above); pass iff observed >= limit.
 * - MIX: per workload, the mix ops are the matching-workload inputs with
 *   has_mix_target set (others are ignored); the inputs of one op name are
 *   summed and the first one's target counts. share = 100 * successful ops of
 *   the op / successful ops of all mix ops (Faban counts successes only).
 *   observed = the largest |share - target| in percentage points over the
 *   mix ops (op "*"), or that op's own deviation (a named op); ties go to the
 *   first op in input order; pass iff observed <= limit; the reason names the
 *   op ("HomePage share 27.100% (target 25%): 2.100 pp > 2 pp"). Give an input
 *   for every op of the mix, even one that ran 0 times: an absent op cannot
 *   count as deviating. Fails with "no mix target for web" when no input
 *   carries a target. ops = the mix ops summed; min_ops = the largest
 *   tb_qos_mix_min_ops over the ops judged (or rule->min_ops).
 * - THROUGHPUT: observed = 100 * sum(throughput) / sum(reference) over the
 *   selected tb_qos_wl_input entries of the workload (rule op is ignored);
 *   pass iff observed >= limit. Fails with "no throughput for oltp" when no
 *   entry matches and "no reference throughput" when the references sum to 0.
 *
 * WITHIN, MIX and THROUGHPUT compare with 1e-9 slack (% or pp), so float
 * rounding of a share exactly at the limit never flips the verdict.
 *
 * How the coordinator calls it: build one array of per-tile inputs (one
 * tb_qos_input per tile x workload x op with tile = t, and one
 * tb_qos_wl_input per tile x workload with that tile's throughput and one
 * tile's reference), then call tb_qos_verdict with tile = 0 for the level
 * verdict and with tile = 1..N for each tile's verdict. VMmark counts a run as
 * compliant only when every workload of every tile meets its QoS, so the
 * strict level verdict is: level pass AND every tile pass.
 */
tb_qos_outcome tb_qos_eval_inputs(const tb_qos_rule *r, const tb_qos_inputs *in, int tile, tb_qos_result *out);

/*
 * Evaluates rules[0..n_rules-1] over in for tile (0 = whole level, t >= 1 =
 * tile t only; see tb_qos_eval_inputs) into out[0..n_rules-1] (caller's
 * array of n_rules). Returns TB_QOS_FAIL when a judged rule failed, else
 * TB_QOS_NOT_JUDGED when some rule was not judged, else TB_QOS_PASS (also
 * when n_rules is 0).
 */
tb_qos_outcome tb_qos_verdict(const tb_qos_rule *rules, int n_rules, const tb_qos_inputs *in, int tile,
                              tb_qos_result *out);

#endif
