/*
 * markov.c: next-op Markov matrices and their stationary distribution. See
 * markov.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/markov.h"

static int op_index(const char *const *ops, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i], name) == 0) return i;
    return -1;
}

static void op_list(const char *const *ops, int n, char *out, size_t cap) {
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i) strncat(out, ", ", cap - strlen(out) - 1);
        strncat(out, ops[i], cap - strlen(out) - 1);
    }
}

int tb_markov_stationary(tb_markov *m) {
    /* A x = b with A = P^T - I, the last equation replaced by sum(x) = 1 */
    double a[TB_MARKOV_MAX][TB_MARKOV_MAX + 1];
    int n = m->n;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            a[i][j] = m->next[j][i] / 100.0 - (i == j ? 1.0 : 0.0);
        a[i][n] = 0;
    }
    for (int j = 0; j < n; j++)
        a[n - 1][j] = 1.0;
    a[n - 1][n] = 1.0;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        if (fabs(a[piv][c]) < 1e-9) return -1;
        if (piv != c)
            for (int k = 0; k <= n; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
        for (int r = 0; r < n; r++) {
            double f;
            if (r == c || a[r][c] == 0) continue;
            f = a[r][c] / a[c][c];
            for (int k = c; k <= n; k++)
                a[r][k] -= f * a[c][k];
        }
    }
    for (int i = 0; i < n; i++) {
        double x = a[i][n] / a[i][i];
        if (x < -1e-9) return -1;
        m->target_pct[i] = x < 0 ? 0 : 100.0 * x;
    }
    return 0;
}

int tb_markov_parse(const tb_workload_def *w, const char *prefix, const char *const *ops, int n, tb_markov *m,
                    char *err) {
    char list[512];
    memset(m, 0, sizeof *m);
    m->n = n;
    op_list(ops, n, list, sizeof list);
    for (int from = 0; from < n; from++) {
        char key[64], buf[256], *save = NULL, *tok;
        const tb_param *p;
        double sum = 0;
        snprintf(key, sizeof key, "%s%s", prefix, ops[from]);
        p = tb_tiledef_param(w, key);
        if (!p) {
            tb_seterr(err, "%s:%d: [workload.%s] %s: missing (every op needs a row: %sOP = To=PCT ...)", w->file,
                      w->line, w->name, key, prefix);
            return -1;
        }
        snprintf(buf, sizeof buf, "%s", p->value);
        for (tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
            char *eq = strchr(tok, '='), *end;
            double v;
            int to;
            if (!eq) {
                tb_seterr(err, "%s:%d: [workload.%s] %s: '%s': expected To=PCT", w->file, p->line, w->name, key, tok);
                return -1;
            }
            *eq = '\0';
            to = op_index(ops, n, tok);
            if (to < 0) {
                tb_seterr(err, "%s:%d: [workload.%s] %s: '%s': unknown op (known: %s)", w->file, p->line, w->name, key,
                          tok, list);
                return -1;
            }
            v = strtod(eq + 1, &end);
            if (end == eq + 1 || *end || !(v >= 0 && v <= 100)) {
                tb_seterr(err, "%s:%d: [workload.%s] %s: %s: '%s' must be a percentage 0..100", w->file, p->line,
                          w->name, key, tok, eq + 1);
                return -1;
            }
            m->next[from][to] = v;
            sum += v;
        }
        if (fabs(sum - 100.0) > 1e-6) {
            tb_seterr(err, "%s:%d: [workload.%s] %s: row sums to %g, not 100", w->file, p->line, w->name, key, sum);
            return -1;
        }
    }
    if (tb_markov_stationary(m) != 0) {
        tb_seterr(err,
                  "%s:%d: [workload.%s] %s*: the matrix has no single long-run mix (some ops cannot reach each "
                  "other)",
                  w->file, w->line, w->name, prefix);
        return -1;
    }
    return 0;
}
