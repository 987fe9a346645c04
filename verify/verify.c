/*
 * verify.c: `tilebench check`'s entry points (verify.h): reads the bundle,
 * its manifest and tables, then runs the three checks (bundle.c: hashes and
 * file set; figures.c and qos_check.c: the published figures recomputed;
 * rules.c: the run rules).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"

/* Largest bundle read (it is held in memory). */
#define MAX_BUNDLE ((size_t)2 << 30)

static size_t mem_used, mem_max = (size_t)TB_V_MEM_DEFAULT_MIB << 20;

void tb_vmem_reset(size_t max) {
    mem_used = 0;
    mem_max = max;
}

int tb_vmem_take(size_t n) {
    if (n > mem_max - mem_used) {
        mem_used = mem_max;
        return -1;
    }
    mem_used += n;
    return 0;
}

size_t tb_vmem_max(void) { return mem_max; }

/* The budget for one bundle: TILEBENCH_CHECK_MAX_MIB (1..1048576) or the
 * default; -1 when the variable is set to anything else. */
static int budget_start(char *err) {
    const char *s = getenv("TILEBENCH_CHECK_MAX_MIB");
    char *end;
    unsigned long long mib = TB_V_MEM_DEFAULT_MIB;
    if (s) {
        errno = 0;
        mib = strtoull(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || mib < 1 || mib > (1ull << 20)) {
            tb_seterr(err, "TILEBENCH_CHECK_MAX_MIB: '%.40s': expected a whole number of MiB from 1 to 1048576", s);
            return -1;
        }
    }
    tb_vmem_reset((size_t)mib << 20);
    return 0;
}

void tb_vresult_add(tb_vresult *r, int pass, const char *name, const char *limit, const char *fmt, ...) {
    tb_buf b;
    va_list ap;
    tb_vline *l;
    tb_buf_init(&b, 0);
    va_start(ap, fmt);
    if (tb_buf_vaddf(&b, fmt, ap) != 0) tb_buf_put(&b, "(figure too long)");
    va_end(ap);
    r->lines = tb_grow(r->lines, r->n, &r->cap, sizeof *r->lines);
    l = &r->lines[r->n++];
    l->pass = pass != 0;
    l->name = xstrdup(name);
    l->limit = xstrdup(limit);
    l->figure = tb_buf_take(&b, NULL);
    if (!pass) r->failed++;
}

void tb_vresult_free(tb_vresult *r) {
    for (size_t i = 0; i < r->n; i++) {
        free(r->lines[i].name);
        free(r->lines[i].figure);
        free(r->lines[i].limit);
    }
    free(r->lines);
    memset(r, 0, sizeof *r);
}

/* The manifest: present, JSON, the bundle format this reader knows. */
static json_t *load_manifest(const char *name, const tb_vbundle *b, char *err) {
    const tb_vfile *f = tb_vbundle_find(b, "manifest.json");
    json_error_t je;
    json_t *m;
    if (!f) {
        tb_seterr(err, "%s: no %s/manifest.json (not a tilebench bundle)", name, b->folder ? b->folder : "FOLDER");
        return NULL;
    }
    if (!(m = json_loadb((const char *)f->data, f->len, 0, &je))) {
        tb_seterr(err, "%s: manifest.json line %d: %s", name, je.line, je.text);
        return NULL;
    }
    if (!json_is_object(m) || !json_is_string(json_object_get(m, "format")) ||
        strcmp(json_string_value(json_object_get(m, "format")), "tilebench-bundle") != 0) {
        tb_seterr(err, "%s: manifest.json: format is not \"tilebench-bundle\"", name);
    } else if (json_integer_value(json_object_get(m, "format_version")) != 1) {
        tb_seterr(err, "%s: manifest.json: format_version %s (this check reads version 1)", name,
                  json_is_integer(json_object_get(m, "format_version")) ? "is another" : "is missing");
    } else if (!json_is_array(json_object_get(m, "files"))) {
        tb_seterr(err, "%s: manifest.json: no \"files\" array", name);
    } else {
        return m;
    }
    json_decref(m);
    return NULL;
}

/* data/TABLE.csv into t; optional tables read as empty when absent. */
static int load_table(const tb_vbundle *b, const char *table, int optional, tb_vcsv *t, char *err) {
    char path[96];
    const tb_vfile *f;
    snprintf(path, sizeof path, "data/%s.csv", table);
    if (!(f = tb_vbundle_find(b, path))) {
        memset(t, 0, sizeof *t);
        t->name = xstrdup(path);
        if (optional) return 0;
        tb_seterr(err, "%s is missing (every bundle has it)", path);
        return -1;
    }
    return tb_vcsv_parse(path, (const char *)f->data, f->len, t, err);
}

/* Each of the space-separated columns is in t's header: -1 with err if not. */
static int need_cols(const tb_vcsv *t, const char *cols, char *err) {
    char name[64];
    for (const char *p = cols; *p;) {
        size_t k = strcspn(p, " ");
        snprintf(name, sizeof name, "%.*s", (int)k, p);
        if (tb_vcsv_col(t, name) < 0) {
            tb_seterr(err, "%s: no column %s (the table's columns, docs/bundle.md)", t->name, name);
            return -1;
        }
        p += k;
        while (*p == ' ')
            p++;
    }
    return 0;
}

static int load_tables(const tb_vbundle *b, tb_vdata *d, char *err) {
    struct {
        const char *name;
        int optional;
        tb_vcsv *t;
    } tables[] = {{"runs", 0, &d->runs},
                  {"meters", 0, &d->meters},
                  {"levels", 0, &d->levels},
                  {"workloads", 0, &d->workloads},
                  {"ops", 0, &d->ops},
                  {"qos", 0, &d->qos},
                  {"power_samples", 0, &d->power},
                  {"events", 0, &d->events},
                  {"infra", 1, &d->infra},
                  {"level_agents", 1, &d->agents},
                  {"calibrations", 1, &d->calibrations},
                  {"telemetry_samples", 1, &d->telem},
                  {"channel_samples", 1, &d->channels},
                  {"level_ranges", 1, &d->ranges},
                  {"inlet_temperatures", 1, &d->inlet},
                  {"temperature_samples", 1, &d->temps}};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (load_table(b, tables[i].name, tables[i].optional, tables[i].t, err) != 0) return -1;
    if (need_cols(&d->runs, "settings_json config_text", err) != 0 || need_cols(&d->meters, "idx", err) != 0 ||
        need_cols(&d->levels, "id tiles phase steady_start_mono_us steady_end_mono_us", err) != 0 ||
        need_cols(&d->workloads, "id level_id name tile", err) != 0 ||
        need_cols(&d->ops, "workload_id name count errors", err) != 0 ||
        need_cols(&d->qos, "level_id rule limit tile judged min_ops", err) != 0 ||
        need_cols(&d->power, "level_id meter_idx mono_us watts flags", err) != 0 ||
        need_cols(&d->events, "message", err) != 0 ||
        (d->infra.n_cols && need_cols(&d->infra, "level_id name ops", err) != 0) ||
        (d->telem.n_cols && need_cols(&d->telem,
                                      "level_id interval_us cpu_util_pct user_pct nice_pct sys_pct idle_pct iowait_pct"
                                      " irq_pct softirq_pct steal_pct freq_mhz freq_source cstate_residency_json",
                                      err) != 0) ||
        (d->channels.n_cols && need_cols(&d->channels, "meter_idx channel mono_us watts flags", err) != 0) ||
        (d->ranges.n_cols && need_cols(&d->ranges,
                                       "tiles repeat alone meter peak_v peak_a volt_range_v amp_range_a samples"
                                       " start_mono_us end_mono_us",
                                       err) != 0) ||
        (d->inlet.n_cols && need_cols(&d->inlet, "level_id samples min_c mean_c max_c", err) != 0) ||
        (d->temps.n_cols && need_cols(&d->temps, "level_id source mono_us celsius stage", err) != 0))
        return -1;
    if (d->runs.n_rows != 1) {
        tb_seterr(err, "data/runs.csv: %zu rows (a bundle holds one run)", d->runs.n_rows);
        return -1;
    }
    return 0;
}

/* report.json, the run's settings and tile file, the histograms. */
static int load_rest(const tb_vbundle *b, tb_vdata *d, tb_vresult *r, char *err) {
    const tb_vfile *f = tb_vbundle_find(b, "report.json");
    const char *settings = tb_vcell(&d->runs, 0, "settings_json");
    json_error_t je;
    char why[TB_ERR_LEN];
    if (!f) {
        tb_seterr(err, "report.json is missing");
        return -1;
    }
    if (!(d->report = json_loadb((const char *)f->data, f->len, 0, &je))) {
        tb_seterr(err, "report.json line %d: %s", je.line, je.text);
        return -1;
    }
    if (!json_is_object(json_object_get(d->report, "run"))) {
        tb_seterr(err, "report.json: no \"run\" object");
        return -1;
    }
    d->settings = settings ? json_loads(settings, 0, &je) : json_object();
    if (!d->settings) {
        tb_seterr(err, "data/runs.csv: settings_json: %s", je.text);
        return -1;
    }
    d->config = tb_vcell(&d->runs, 0, "config_text");
    if (!d->config && (f = tb_vbundle_find(b, "tiles.ini"))) d->config = (const char *)f->data;
    if (!(f = tb_vbundle_find(b, "histograms.hlog"))) {
        tb_vresult_add(r, 0, "file histograms.hlog", "in every bundle (docs/bundle.md)",
                       "absent: latency verdicts cannot be recomputed");
        return 0;
    }
    if (tb_vh_log_parse((const char *)f->data, f->len, &d->hlog, why) != 0) {
        tb_seterr(err, "histograms.hlog: %s", why);
        return -1;
    }
    return 0;
}

static void free_data(tb_vdata *d) {
    tb_vcsv *t[] = {&d->runs,  &d->meters,       &d->levels, &d->workloads, &d->ops,      &d->qos,
                    &d->infra, &d->power,        &d->events, &d->agents,    &d->channels, &d->ranges,
                    &d->inlet, &d->calibrations, &d->telem,  &d->temps};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        tb_vcsv_free(t[i]);
    tb_vmodel_free(d);
    tb_vh_log_free(&d->hlog);
    json_decref(d->report);
    json_decref(d->settings);
}

int tb_verify_bundle_mem(const char *name, const void *data, size_t len, tb_vresult *out, char *err) {
    tb_vbundle b;
    tb_vdata d;
    json_t *manifest = NULL;
    char why[TB_ERR_LEN];
    int rc = TB_VERIFY_UNREADABLE;
    memset(&d, 0, sizeof d);
    if (budget_start(err) != 0) return TB_VERIFY_UNREADABLE;
    if (tb_vmem_take(len) != 0) {
        tb_seterr(err, "%s: larger than check's memory limit of %zu MiB (TILEBENCH_CHECK_MAX_MIB)", name,
                  tb_vmem_max() >> 20);
        return TB_VERIFY_UNREADABLE;
    }
    if (tb_vbundle_read(name, data, len, &b, err) != 0) goto done;
    if (!(manifest = load_manifest(name, &b, err))) goto done;
    tb_vcheck_manifest(&b, manifest, out);
    if (load_tables(&b, &d, why) != 0 || load_rest(&b, &d, out, why) != 0 || tb_vmodel_build(&d, why) != 0) {
        tb_seterr(err, "%s: %s", name, why);
        goto done;
    }
    tb_vcheck_describe(&b, manifest, &d, out);
    tb_vcheck_figures(&d, out);
    tb_vcheck_hosts(&d, out);
    tb_vcheck_telemetry(&d, out);
    tb_vcheck_interference(&d, out);
    tb_vcheck_reports(&b, &d, out);
    tb_vcheck_qos(&d, out);
    tb_vcheck_latency(&d, out);
    tb_vcheck_levelsum(&d, out);
    tb_vcheck_rules(&d, out);
    tb_vcheck_lab(&d, out);
    rc = out->failed ? TB_VERIFY_NOT_COMPLIANT : TB_VERIFY_COMPLIANT;
done:
    free_data(&d);
    json_decref(manifest);
    tb_vbundle_free(&b);
    return rc;
}

int tb_verify_bundle_file(const char *path, tb_vresult *out, char *err) {
    FILE *f = fopen(path, "rb");
    tb_buf b;
    char chunk[65536];
    size_t n;
    int rc;
    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return TB_VERIFY_UNREADABLE;
    }
    tb_buf_init(&b, MAX_BUNDLE);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (tb_buf_add(&b, chunk, n) != 0) break;
    if (ferror(f) || b.overflow) {
        tb_seterr(err, "%s: %s", path, b.overflow ? "larger than 2 GiB" : strerror(errno));
        fclose(f);
        tb_buf_free(&b);
        return TB_VERIFY_UNREADABLE;
    }
    fclose(f);
    rc = tb_verify_bundle_mem(path, b.ptr ? b.ptr : "", b.len, out, err);
    tb_buf_free(&b);
    return rc;
}
