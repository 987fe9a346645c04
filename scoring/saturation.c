/*
 * saturation.c: saturation of a sweep and the next-level decision of the
 * `--tiles auto` search (climb until QoS fails, then optional bisection).
 * Pure computation over the verdicts tried so far; no I/O, no state.
 */
#include "scoring/saturation.h"

/* Whether level t fails: any of its entries failing counts. */
static int level_fails(const int *tiles, const int *pass, int n, int t) {
    int i;
    for (i = 0; i < n; i++)
        if (tiles[i] == t && !pass[i]) return 1;
    return 0;
}

int tb_saturation_next(const int *tiles, const int *pass, int n, const tb_saturation_opts *o, tb_saturation_step *out,
                       char *err) {
    int start, step, first_fail = 0, best = 0, i;

    out->done = 0;
    out->next_tiles = 0;
    out->saturation = 0;
    out->first_fail = 0;
    out->capped = 0;
    if (!o || o->max_tiles < 1) {
        tb_seterr(err, "saturation search: max tiles must be at least 1");
        return -1;
    }
    start = o->start ? o->start : 1;
    step = o->step ? o->step : 1;
    if (start < 1 || start > o->max_tiles) {
        tb_seterr(err, "saturation search: first level %d outside 1..%d", start, o->max_tiles);
        return -1;
    }
    if (step < 1) {
        tb_seterr(err, "saturation search: step %d must be at least 1", o->step);
        return -1;
    }
    if (n < 0 || (n > 0 && (!tiles || !pass))) {
        tb_seterr(err, "saturation search: bad list of levels tried (n = %d)", n);
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (tiles[i] < 1) {
            tb_seterr(err, "saturation search: level %d has %d tiles (must be at least 1)", i + 1, tiles[i]);
            return -1;
        }
        if (!pass[i] && (first_fail == 0 || tiles[i] < first_fail)) first_fail = tiles[i];
    }
    for (i = 0; i < n; i++)
        if (pass[i] && (first_fail == 0 || tiles[i] < first_fail) && tiles[i] > best &&
            !level_fails(tiles, pass, n, tiles[i]))
            best = tiles[i];
    out->first_fail = first_fail;
    out->saturation = best;

    if (n == 0) {
        out->next_tiles = start;
        return 1;
    }
    if (first_fail == 0) {
        long next;
        if (best >= o->max_tiles) {
            out->done = 1;
            out->capped = 1;
            return 0;
        }
        next = o->doubling ? 2L * best : (long)best + step;
        out->next_tiles = next > o->max_tiles ? o->max_tiles : (int)next;
        return 1;
    }
    if (o->bisect && first_fail - best > 1) {
        out->next_tiles = best + (first_fail - best) / 2;
        return 1;
    }
    out->done = 1;
    return 0;
}

int tb_saturation_largest_pass(const int *tiles, const int *pass, int n) {
    int best = 0, i;
    for (i = 0; i < n; i++)
        if (pass[i] && tiles[i] > best && !level_fails(tiles, pass, n, tiles[i])) best = tiles[i];
    return best;
}
