/*
 * markov.h: a next-op Markov matrix read from a workload's keys, and its
 * stationary distribution (the long-run op mix), as Faban's FlatMix /
 * MatrixMix drives Olio's UIDriver. Pure computation, no I/O.
 *
 * Keys: one row per op, `<prefix><From> = To=PCT To=PCT ...` (spaces or
 * commas between entries; ops not named get 0), each row summing to 100.
 * Example (Olio): next.HomePage = Login=11 TagSearch=52 EventDetail=36 AddPerson=1
 */
#ifndef TB_LOADGEN_MARKOV_H
#define TB_LOADGEN_MARKOV_H

#include "common/tb_common.h"
#include "tiles/tiledef.h"

#define TB_MARKOV_MAX 16

typedef struct tb_markov {
    int n;                                     /* ops */
    double next[TB_MARKOV_MAX][TB_MARKOV_MAX]; /* next[from][to] in %, rows sum to 100 */
    double target_pct[TB_MARKOV_MAX];          /* stationary distribution in %, sums to 100 */
} tb_markov;

/*
 * Reads the rows `<prefix><op>` for the n ops named in ops (n <=
 * TB_MARKOV_MAX) from w's keys into *m, checks them, and computes the
 * stationary distribution. Every op needs a row. Errors name file:line and
 * key: "t.ini:14: [workload.web] next.Login: row sums to 99, not 100",
 * "... next.Login: 'Nowhere=5': unknown op (known: HomePage, ...)",
 * "... : the matrix has no single long-run mix (ops that cannot reach each
 * other)". 0 or -1 with err.
 */
int tb_markov_parse(const tb_workload_def *w, const char *prefix, const char *const *ops, int n, tb_markov *m,
                    char *err) TB_WUR;

/*
 * Solves pi = pi P with sum(pi) = 1 by Gaussian elimination (partial
 * pivoting) for the n x n matrix of m->next (rows in %), into
 * m->target_pct (in %). 0, or -1 when the chain has no unique stationary
 * distribution (a singular system: it is not irreducible).
 */
int tb_markov_stationary(tb_markov *m) TB_WUR;

#endif
