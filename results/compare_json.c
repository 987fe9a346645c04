/*
 * compare_json.c: the JSON view of a comparison (compare_data.h), the shape
 * docs/campaigns.md ("Comparing runs") documents. jansson is used only to write.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/compare_data.h"

#define JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* % change rounded to 0.01 (the precision a reader uses; exact in golden tests). */
static json_t *jpct(double v) { return isfinite(v) ? json_real(round(v * 100.0) / 100.0) : json_null(); }

static json_t *jcell(const tb_cmp_cell *c) {
    json_t *o = json_object();
    json_object_set_new(o, "value", jreal(c->value));
    json_object_set_new(o, "pct", jpct(c->pct));
    return o;
}

/* jansson refuses invalid UTF-8: replace such bytes so a label never fails the output. */
static json_t *jstr(const char *s) {
    json_t *j = json_string(s ? s : "");
    if (!j) {
        char *t = xstrdup(s);
        for (char *p = t; *p; p++)
            if ((unsigned char)*p >= 0x80) *p = '?';
        j = json_string(t);
        free(t);
    }
    return j ? j : json_null();
}

static json_t *model_json(const tb_cmp_model *m) {
    json_t *root = json_object(), *c = json_object(), *arr, *method;
    size_t i, j, k;
    json_object_set_new(root, "comparison", c);
    json_object_set_new(c, "tilebench_version", json_string(TB_VERSION));
    json_object_set_new(c, "baseline", json_integer((json_int_t)m->runs[m->baseline].id));
    method = json_object();
    json_object_set_new(method, "levels", json_string(tb_cmp_method_phases));
    json_object_set_new(method, "p95", json_string(tb_cmp_method_p95));
    json_object_set_new(method, "pct", json_string(tb_cmp_method_pct));
    json_object_set_new(c, "method", method);
    arr = json_array();
    for (i = 0; i < m->n_notes; i++)
        json_array_append_new(arr, jstr(m->notes[i]));
    json_object_set_new(c, "notes", arr);
    arr = json_array();
    for (i = 0; i < TB_CMP_N_FIG; i++) {
        json_t *f = json_object();
        json_object_set_new(f, "key", json_string(tb_cmp_figures[i].key));
        json_object_set_new(f, "unit", json_string(tb_cmp_figures[i].unit));
        json_object_set_new(f, "better",
                            json_string(tb_cmp_figures[i].better > 0   ? "higher"
                                        : tb_cmp_figures[i].better < 0 ? "lower"
                                                                       : "neither"));
        json_object_set_new(f, "stored", json_boolean(m->any_fig[i]));
        json_array_append_new(arr, f);
    }
    json_object_set_new(c, "figures", arr);
    arr = json_array();
    for (i = 0; i < m->n_workloads; i++)
        json_array_append_new(arr, jstr(m->workloads[i]));
    json_object_set_new(c, "workloads", arr);
    if (m->n_hosts) { /* runs with [host.NAME] sections only */
        arr = json_array();
        for (i = 0; i < m->n_hosts; i++)
            json_array_append_new(arr, jstr(m->hosts[i]));
        json_object_set_new(c, "hosts", arr);
    }
    arr = json_array();
    for (i = 0; i < m->n_runs; i++) {
        const tb_cmp_run *r = &m->runs[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_integer((json_int_t)r->id));
        json_object_set_new(o, "label", jstr(r->label));
        json_object_set_new(o, "baseline", json_boolean(r->is_baseline));
        json_object_set_new(o, "status", jstr(r->status));
        json_object_set_new(o, "tile_name", jstr(r->tile_name));
        json_object_set_new(o, "tile_spec", jstr(r->tile_spec));
        json_object_set_new(o, "started_at", jstr(r->started_at));
        json_object_set_new(o, "estimated_power", json_boolean(r->estimated));
        /* the worst steady state's CPU outside the SUT and the load generator */
        json_object_set_new(o, "other_cpu_max_pct", jreal(r->other_cpu_max_pct));
        json_object_set_new(o, "other_cpu_tiles",
                            isfinite(r->other_cpu_max_pct) ? json_integer(r->other_cpu_tiles) : json_null());
        json_object_set_new(o, "other_cpu_flagged", json_boolean(r->other_cpu_max_pct > TB_CMP_OTHER_CPU_LIMIT_PCT));
        json_object_set_new(o, "phases", json_integer(r->max_phases));
        json_object_set_new(o, "repeats", json_integer(r->max_repeats));
        if (r->campaign_id > 0) {
            json_t *cp = json_object();
            json_object_set_new(cp, "id", json_integer((json_int_t)r->campaign_id));
            json_object_set_new(cp, "name", jstr(r->campaign_name));
            json_object_set_new(cp, "config", jstr(r->campaign_config));
            json_object_set_new(o, "campaign", cp);
        } else {
            json_object_set_new(o, "campaign", json_null());
        }
        json_array_append_new(arr, o);
    }
    json_object_set_new(c, "runs", arr);
    arr = json_array();
    for (k = 0; k < m->n_levels; k++) {
        json_t *lvj = json_object(), *runs = json_array();
        json_object_set_new(lvj, "tiles", json_integer(m->tiles[k]));
        for (i = 0; i < m->n_runs; i++) {
            const tb_cmp_level *lv = &m->runs[i].lv[k];
            json_t *o = json_object(), *p95 = json_object();
            json_object_set_new(o, "run", json_integer((json_int_t)m->runs[i].id));
            json_object_set_new(o, "present", json_boolean(lv->present));
            json_object_set_new(o, "phases", json_integer(lv->phases));
            json_object_set_new(o, "repeats", json_integer(lv->repeats));
            json_object_set_new(o, "qos_pass", lv->present ? json_boolean(lv->qos_pass) : json_null());
            json_object_set_new(o, "qos_not_judged", lv->present ? json_integer(lv->qos_not_judged) : json_null());
            json_object_set_new(o, "valid", lv->present ? json_boolean(lv->valid) : json_null());
            for (j = 0; j < TB_CMP_N_FIG; j++)
                json_object_set_new(o, tb_cmp_figures[j].key, jcell(&lv->fig[j]));
            for (j = 0; j < m->n_workloads; j++)
                json_object_set_new(p95, m->workloads[j], jcell(&lv->p95[j]));
            json_object_set_new(o, "p95_ms", p95);
            if (m->n_hosts) {
                json_t *hw = json_object();
                for (j = 0; j < m->n_hosts; j++)
                    json_object_set_new(hw, m->hosts[j], jcell(&lv->host_w[j]));
                json_object_set_new(o, "host_watts", hw);
            }
            json_array_append_new(runs, o);
        }
        json_object_set_new(lvj, "runs", runs);
        json_array_append_new(arr, lvj);
    }
    json_object_set_new(c, "levels", arr);
    return root;
}

int tb_compare_write_json(const tb_cmp_model *m, FILE *f, char *err) {
    json_t *root = model_json(m);
    int rc;
    errno = 0;
    rc = json_dumpf(root, f, JSON_FLAGS) == 0 && fputc('\n', f) != EOF ? 0 : -1;
    if (rc != 0) tb_seterr(err, "write comparison: %s", errno ? strerror(errno) : "output error");
    json_decref(root);
    return rc;
}
