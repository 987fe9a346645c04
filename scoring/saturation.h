/*
 * saturation.h: saturation (the largest load level that passes QoS, VMmark)
 * and the search behind `tilebench run --tiles auto`: climb the load until a
 * level fails QoS, then optionally bisect between the last passing and the
 * first failing level. A pure function of the verdicts seen so far, so the
 * coordinator keeps no search state of its own and tests need no SUT.
 */
#ifndef TB_SCORING_SATURATION_H
#define TB_SCORING_SATURATION_H

#include "common/tb_common.h"

/* How `--tiles auto` climbs. Zeroed fields take the defaults noted. */
typedef struct tb_saturation_opts {
    int max_tiles; /* highest level to try (--max-tiles); must be >= 1 */
    int start;     /* first level; 0 = 1 */
    int step;      /* climb by +step: start, start+step, ...; 0 = 1 (1, 2, 3, ...) */
    int doubling;  /* 1: climb start, 2*start, 4*start, ... instead of +step */
    int bisect;    /* 1: after the first failure, bisect between the last pass below it and it */
} tb_saturation_opts;

typedef struct tb_saturation_step {
    int done;       /* 1: the search is over and saturation is final */
    int next_tiles; /* when !done: the level to run next; 0 when done */
    int saturation; /* largest passing level below first_fail (0: none passed); when !done,
                       the best so far */
    int first_fail; /* smallest failing level tried; 0 when none failed */
    int capped;     /* done because max_tiles passed: the SUT did not saturate, so report
                       saturation as ">= max_tiles" */
} tb_saturation_step;

/*
 * The next step of the search, given the n levels tried so far: tiles[i]
 * tiles, pass[i] its QoS verdict (nonzero = pass), in any order. A level
 * listed more than once (repeats) counts as failing if any entry fails.
 *
 * Let F be the smallest failing level and P the largest passing level below
 * F (below everything, when nothing failed). Then:
 * - nothing tried: run `start`;
 * - nothing failed: if P >= max_tiles, done (capped); else run P + step, or
 *   2 * P with doubling, at most max_tiles;
 * - something failed: with bisect and F - P > 1, run P + (F - P) / 2 (a level
 *   never tried, as any tried level lies at or below P or at or above F);
 *   otherwise done with saturation P (0 when even the first level failed).
 * With the default +1 climb, F - P is 1 and bisection never adds a level;
 * it pays off with step > 1 or doubling (1, 2, 4, 8 fails -> 6 -> 5 or 7).
 * Returns 1 when out->next_tiles should run, 0 when done, -1 with err on bad
 * input (n < 0, a tile count < 1, max_tiles < 1, start > max_tiles, step < 0,
 * NULL arrays with n > 0).
 */
int tb_saturation_next(const int *tiles, const int *pass, int n, const tb_saturation_opts *o, tb_saturation_step *out,
                       char *err) TB_WUR;

/*
 * Saturation of a fixed sweep: the largest level whose verdict
 * passes, whatever failed below it; a level listed more than once passes only
 * if every entry passes. 0 when none passed. tiles/pass as above.
 */
int tb_saturation_largest_pass(const int *tiles, const int *pass, int n);

#endif
