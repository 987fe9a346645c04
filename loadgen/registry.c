/*
 * registry.c: the workload kinds compiled in, and the parameter helpers that
 * workloads use to read their own keys from a tile definition.
 */
#include <stdio.h>
#include <string.h>

#include "loadgen/workload.h"

extern const tb_workload_vt tb_oltp_workload;
extern const tb_workload_vt tb_kv_workload;
extern const tb_workload_vt tb_mail_workload;
extern const tb_workload_vt tb_http_workload;
extern const tb_workload_vt tb_web_workload;

static const tb_workload_vt *const kinds[] = {&tb_oltp_workload, &tb_kv_workload, &tb_mail_workload, &tb_web_workload,
                                              &tb_http_workload};
#define N_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

const tb_workload_vt *tb_workload_find(const char *kind) {
    for (int i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i]->kind, kind) == 0) return kinds[i];
    return NULL;
}

int tb_workload_count(void) { return N_KINDS; }

const tb_workload_vt *tb_workload_at(int i) { return i >= 0 && i < N_KINDS ? kinds[i] : NULL; }

static const tb_param *param(const tb_workload_def *w, const char *key) { return tb_tiledef_param(w, key); }

int tb_wl_param_u64(const tb_workload_def *w, const char *key, uint64_t dflt, uint64_t *out, char *err) {
    const tb_param *p = param(w, key);
    char e[TB_ERR_LEN];
    if (!p) {
        *out = dflt;
        return 0;
    }
    if (tb_parse_u64(p->value, out, e) != 0) {
        tb_seterr(err, "%s:%d: [workload.%s] %s: %s", w->file, p->line, w->name, key, e);
        return -1;
    }
    return 0;
}

int tb_wl_param_bad(const tb_workload_def *w, const char *key, const char *want, char *err) {
    const tb_param *p = param(w, key);
    tb_seterr(err, "%s:%d: [workload.%s] %s: '%s': %s", w->file, p ? p->line : w->line, w->name, key,
              p ? p->value : "(default)", want);
    return -1;
}

int tb_wl_param_double(const tb_workload_def *w, const char *key, double dflt, double *out, char *err) {
    const tb_param *p = param(w, key);
    char e[TB_ERR_LEN];
    if (!p) {
        *out = dflt;
        return 0;
    }
    if (tb_parse_double(p->value, out, e) != 0) {
        tb_seterr(err, "%s:%d: [workload.%s] %s: %s", w->file, p->line, w->name, key, e);
        return -1;
    }
    return 0;
}

int tb_wl_param_duration(const tb_workload_def *w, const char *key, uint64_t dflt_us, uint64_t *out_us, char *err) {
    const tb_param *p = param(w, key);
    char e[TB_ERR_LEN];
    if (!p) {
        *out_us = dflt_us;
        return 0;
    }
    if (tb_parse_duration_us(p->value, out_us, e) != 0) {
        tb_seterr(err, "%s:%d: [workload.%s] %s: %s", w->file, p->line, w->name, key, e);
        return -1;
    }
    return 0;
}

int tb_wl_check_keys(const tb_workload_def *w, const char *const *known, char *err) {
    for (int i = 0; i < w->n_params; i++) {
        int ok = 0;
        for (int k = 0; known[k]; k++)
            if (strcmp(known[k], w->params[i].key) == 0) ok = 1;
        if (!ok) {
            char list[512] = "";
            for (int k = 0; known[k]; k++) {
                if (k) strncat(list, ", ", sizeof list - strlen(list) - 1);
                strncat(list, known[k], sizeof list - strlen(list) - 1);
            }
            tb_seterr(err,
                      "%s:%d: [workload.%s] %s: unknown key (known: kind, users, think_time, cycle_time, "
                      "think_dist, timeout, reference, unit, %s)",
                      w->file, w->params[i].line, w->name, w->params[i].key, list);
            return -1;
        }
    }
    return 0;
}
