/*
 * validate.c: `tilebench validate`'s verdict over a stored run (see
 * validate.h), read through the typed model (model.h): its status and its
 * levels with their QoS verdicts.
 */
#include "results/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/model.h"

/* The rules of one level that failed or were not judged: the failures
 * first, then by tile (the level's own verdict before the tiles'), each in
 * the order stored. *n gets their count; the array is malloc'd. */
static const tb_model_qos **rules_to_show(const tb_model_level *lv, size_t *n) {
    const tb_model_qos **v = xcalloc(lv->n_qos + lv->n_tile_qos + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < lv->n_qos; i++)
        if (!lv->qos[i].pass) v[k++] = &lv->qos[i];
    for (size_t i = 0; i < lv->n_tile_qos; i++)
        if (!lv->tile_qos[i].pass) v[k++] = &lv->tile_qos[i];
    /* a stable insertion sort on (judged first, tile) */
    for (size_t i = 1; i < k; i++) {
        const tb_model_qos *x = v[i];
        size_t j = i;
        while (j > 0 && (v[j - 1]->judged < x->judged || (v[j - 1]->judged == x->judged && v[j - 1]->tile > x->tile))) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    *n = k;
    return v;
}

/* Prints the QoS rules of one level row that failed or were not judged
 * (too few ops): observed vs limit for a failure, the sample vs the least
 * sample for a rule not judged. */
static void print_rules(const tb_model_level *lv, FILE *f) {
    size_t n;
    const tb_model_qos **v = rules_to_show(lv, &n);
    for (size_t i = 0; i < n; i++) {
        const tb_model_qos *q = v[i];
        const char *rule = q->rule ? q->rule : "?", *reason = q->reason;
        fputs(q->judged ? "    QoS FAIL  " : "    QoS NOT JUDGED  ", f);
        if (q->tile > 0) fprintf(f, "tile %d: ", q->tile);
        if (q->judged) {
            fprintf(f, "%s: observed ", rule);
            /* unknown: nothing observed (no ops), "n/a" rather than an invented 0 */
            if (isnan(q->observed))
                fputs("n/a", f);
            else
                fprintf(f, "%.3f", q->observed);
            fprintf(f, ", limit %.3f", isnan(q->limit) ? 0.0 : q->limit);
            if (reason && *reason) fprintf(f, " (%s)", reason);
        } else if (reason && *reason && strcmp(reason, "no ops") != 0) {
            fprintf(f, "%s: %s", rule, reason); /* says the ops and the least it needs */
        } else {
            fprintf(f, "%s: %lld ops, needs %lld", rule, (long long)q->ops.v, (long long)q->min_ops.v);
        }
        fputc('\n', f);
    }
    free(v);
}

static int by_store_order(const void *a, const void *b) {
    const tb_model_level *x = *(const tb_model_level *const *)a, *y = *(const tb_model_level *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The selected levels (all, or those with `tiles` tiles) in the order stored. */
static const tb_model_level **select_levels(const tb_model_run *r, int tiles, size_t *n) {
    const tb_model_level **v = xcalloc(r->n_levels + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < r->n_levels; i++)
        if (tiles == 0 || r->levels[i].tiles == tiles) v[k++] = &r->levels[i];
    qsort(v, k, sizeof *v, by_store_order);
    *n = k;
    return v;
}

/* What kept the run from passing, counted over its level phases. */
typedef struct tally {
    int fail, incomplete, invalid;
} tally;

/* One line per level phase with its QoS word (tb_model_qos_verdict, as in
 * every report) and counts, its hint, and its failing rules; 1 when all passed. */
static int print_levels(const tb_model_level *const *lv, size_t n, FILE *f, tally *t) {
    int pass = 1;
    for (size_t i = 0; i < n; i++) {
        int valid = lv[i]->valid;
        const char *why = lv[i]->invalid_reason, *word = tb_model_qos_verdict(lv[i]->qos_pass, lv[i]->qos_not_judged);
        char counts[128], hint[512];
        tb_model_qos_counts qc;
        tb_model_level_qos_count(lv[i], &qc);
        tb_model_qos_counts_text(&qc, counts, sizeof counts);
        fprintf(f, "  %d tiles%s%s%s phase %d: QoS %s (%s), %s\n", (int)lv[i]->tiles, lv[i]->alone ? " (" : "",
                lv[i]->alone ? lv[i]->alone : "", lv[i]->alone ? " alone)" : "", (int)lv[i]->phase, word, counts,
                valid ? "valid" : "INVALID");
        if (!valid) fprintf(f, "    INVALID   %s\n", why && *why ? why : "(no reason stored)");
        if (strcmp(word, "pass") != 0) print_rules(lv[i], f);
        if (strcmp(word, "incomplete") == 0 && tb_model_qos_hint(&qc, lv[i]->steady_s, hint, sizeof hint))
            fprintf(f, "    QoS hint  %s\n", hint);
        /* a rule not judged is not a pass: QoS has not been shown to hold */
        if (strcmp(word, "fail") == 0) t->fail++;
        if (strcmp(word, "incomplete") == 0) t->incomplete++;
        if (!valid) t->invalid++;
        if (strcmp(word, "pass") != 0 || !valid) pass = 0;
    }
    return pass;
}

/* One "QoS fail at 2 level phases" part of the last line; *sep goes from ": " to "; ". */
static void put_part(FILE *f, const char **sep, int n, const char *what, const char *note) {
    if (n <= 0) return;
    fprintf(f, "%s%s at %d level phase%s%s", *sep, what, n, n == 1 ? "" : "s", note);
    *sep = "; ";
}

/* The last line: PASS, or FAIL with what kept the run from passing, in the
 * same words as the level lines ("QoS incomplete at 3 level phases"). */
static void print_result(FILE *f, int pass, const tally *t, const char *run_not_complete) {
    const char *sep = ": ";
    if (pass) {
        fputs("PASS\n", f);
        return;
    }
    fputs("FAIL", f);
    put_part(f, &sep, t->fail, "QoS fail", "");
    put_part(f, &sep, t->incomplete, "QoS incomplete", " (a rule not judged is no pass)");
    put_part(f, &sep, t->invalid, "INVALID", "");
    if (run_not_complete) fprintf(f, "%srun %s", sep, run_not_complete);
    fputc('\n', f);
}

int tb_validate_run(tb_store *s, int64_t run_id, int tiles, FILE *f, char *err) {
    tb_model_run *r = NULL;
    const tb_model_level **lv;
    size_t n;
    int pass;
    tally t = {0, 0, 0};
    char status[32];
    if (tb_model_read_run(s, run_id, TB_MODEL_VERDICTS_ONLY | TB_MODEL_RAW_TEXT, &r, err) != 0) return -1;
    snprintf(status, sizeof status, "%s", r->status ? r->status : "");
    lv = select_levels(r, tiles, &n);
    fprintf(f, "run %lld (%s)\n", (long long)run_id, status);
    if (n == 0 && tiles > 0) {
        tb_seterr(err, "run %lld has no load level with %d tiles", (long long)run_id, tiles);
        free(lv);
        tb_model_run_free(r);
        return -1;
    }
    pass = print_levels(lv, n, f, &t);
    free(lv);
    tb_model_run_free(r);
    if (n == 0) { /* a run that measured nothing cannot pass */
        fprintf(f, "  no load level was measured\nFAIL: no load level was measured\n");
        return 0;
    }
    if (tiles == 0 && strcmp(status, TB_RUN_COMPLETE) != 0) {
        fprintf(f, "  run is %s: not every load level was measured\n", status);
        pass = 0;
    }
    print_result(f, pass, &t, tiles == 0 && strcmp(status, TB_RUN_COMPLETE) != 0 ? status : NULL);
    return pass;
}
