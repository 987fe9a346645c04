/*
 * report_json.c: the JSON view of a run (the shape docs/results.md, "The JSON
 * report" documents), written from the read model (model.h). jansson is
 * used here only to write: the tree is built from the model and dumped.
 * Keys come in the documented order; extra keys (tile_name, tile_spec,
 * config_text, events, steady_*, samples_*) follow the contract's "fields
 * may be added". Unknown numbers are null.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "powermeter/accuracy.h"
#include "results/report_infra.h"
#include "results/report_temp.h"
#include "results/report_views.h"

/* Real numbers get 15 significant digits: every stored value round-trips
 * (latencies are whole µs / 1000) without the 17-digit noise of %.17g. */
#define JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

static json_t *jstr(const char *s) {
    json_t *j;
    if (!s) return json_null();
    j = json_string(s);
    return j ? j : json_null();
}

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *jint(tb_model_int v) { return v.known ? json_integer((json_int_t)v.v) : json_null(); }

static json_t *jobj(const tb_model_obj *o) {
    json_t *j = json_object();
    for (size_t i = 0; i < o->n; i++) {
        const tb_model_kv *kv = &o->kv[i];
        json_t *v;
        switch (kv->kind) {
        case TB_KV_STRING: v = jstr(kv->str); break;
        case TB_KV_INT: v = json_integer((json_int_t)kv->i); break;
        case TB_KV_REAL: v = json_real(kv->d); break;
        case TB_KV_BOOL: v = json_boolean(kv->i); break;
        case TB_KV_NULL: v = json_null(); break;
        case TB_KV_OTHER:
        default: v = json_loads(kv->str, JSON_DECODE_ANY, NULL); break;
        }
        json_object_set_new(j, kv->key, v ? v : json_null());
    }
    return j;
}

/* The meter's channels, each with its readings per level: [] for one input. */
static json_t *channels_json(const tb_model_run *r, const tb_model_meter *m) {
    json_t *a = json_array(), *ch = NULL, *lvs = NULL;
    int64_t n = 0, bad = 0;
    for (size_t i = 0; i < m->n_channels; i++) {
        const tb_model_channel *c = &m->channels_by_level[i];
        json_t *l = json_object();
        if (!ch || c->channel != m->channels_by_level[i - 1].channel) {
            ch = json_object();
            lvs = json_array();
            n = bad = 0;
            json_object_set_new(ch, "channel", json_integer(c->channel));
            json_object_set_new(ch, "levels", lvs);
            json_array_append_new(a, ch);
        }
        for (size_t k = 0; k < r->n_levels; k++)
            if (r->levels[k].id == c->level_id) {
                json_object_set_new(l, "tiles", json_integer(r->levels[k].tiles));
                json_object_set_new(l, "phase", json_integer(r->levels[k].phase));
                json_object_set_new(l, "repeat", json_integer(r->levels[k].repeat));
            }
        json_object_set_new(l, "mean_watts", jreal(c->mean_watts));
        json_object_set_new(l, "samples", json_integer(c->samples));
        json_object_set_new(l, "bad_samples", json_integer(c->bad_samples));
        json_array_append_new(lvs, l);
        n += c->samples;
        bad += c->bad_samples;
        json_object_set_new(ch, "samples", json_integer(n));
        json_object_set_new(ch, "bad_samples", json_integer(bad));
    }
    return a;
}

static json_t *meter_json(const tb_model_run *run, const tb_model_meter *m) {
    json_t *o = json_object(), *r = json_object();
    json_object_set_new(o, "uri", jstr(m->uri));
    json_object_set_new(o, "model", jstr(m->model));
    json_object_set_new(o, "idn", jstr(m->idn));
    json_object_set_new(o, "estimated", json_boolean(m->estimated));
    json_object_set_new(o, "serial", jstr(m->serial));
    json_object_set_new(o, "firmware", jstr(m->firmware));
    json_object_set_new(o, "driver", jstr(m->driver));
    json_object_set_new(r, "volts", jreal(m->volt_range_v));
    json_object_set_new(r, "amps", jreal(m->amp_range_a));
    json_object_set_new(r, "volt_mode", jstr(m->volt_mode));
    json_object_set_new(r, "amp_mode", jstr(m->amp_mode));
    json_object_set_new(o, "ranges", r);
    json_object_set_new(o, "crest_factor", jreal(m->crest_factor));
    json_object_set_new(o, "update_ms", jint(m->update_ms));
    json_object_set_new(o, "avg_window_ms", jint(m->avg_window_ms));
    json_object_set_new(o, "max_uncertainty_pct", jreal(m->max_uncertainty_pct));
    json_object_set_new(o, "accuracy", jstr(m->accuracy));
    json_object_set_new(o, "calibrated", jstr(m->calibrated));
    json_object_set_new(o, "spec_accepted", json_string(tb_meter_spec_accepted_text(m->spec_accepted)));
    json_object_set_new(o, "invalid_samples", json_integer(m->invalid_samples));
    json_object_set_new(o, "flat_readings", json_integer(m->flat_readings));
    json_object_set_new(o, "valid_readings", json_integer(m->valid_readings));
    json_object_set_new(o, "not_averaged", json_boolean(m->not_averaged));
    if (m->host) json_object_set_new(o, "host", jstr(m->host));                 /* [host.NAME] runs only */
    if (m->channels) json_object_set_new(o, "channels", channels_json(run, m)); /* channels= meters only */
    return o;
}

/* A rule not judged (too few ops) is neither: pass is null. */
static json_t *qos_json(const tb_model_qos *q) {
    json_t *o = json_object();
    if (q->tile > 0) json_object_set_new(o, "tile", json_integer(q->tile));
    json_object_set_new(o, "rule", jstr(q->rule));
    json_object_set_new(o, "observed", jreal(q->observed));
    json_object_set_new(o, "limit", jreal(q->limit));
    json_object_set_new(o, "pass", q->judged ? json_boolean(q->pass) : json_null());
    json_object_set_new(o, "verdict", json_string(!q->judged ? "not judged" : q->pass ? "pass" : "fail"));
    json_object_set_new(o, "judged", json_boolean(q->judged));
    json_object_set_new(o, "ops", jint(q->ops));
    json_object_set_new(o, "min_ops", jint(q->min_ops));
    json_object_set_new(o, "reason", jstr(q->reason));
    return o;
}

/* {"connect": n, "io": n, ...}; null when not split (rows before schema 5). */
static json_t *classes_json(const int64_t *by_class, const uint64_t *sum, int known) {
    json_t *o;
    if (!known) return json_null();
    o = json_object();
    for (int k = 0; k < TB_ERR_NCLASSES; k++)
        json_object_set_new(o, tb_store_err_class_name(k),
                            json_integer(by_class ? (json_int_t)by_class[k] : (json_int_t)sum[k]));
    return o;
}

/* Latency from the actual send; null when the stored histogram is unreadable. */
static json_t *uncorrected_json(const tb_model_op *op) {
    static const char *const names[TB_MODEL_UNC_PCTS] = {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms"};
    json_t *o;
    if (!op->uncorrected_readable) return json_null();
    o = json_object();
    json_object_set_new(o, "mean_ms", jreal(op->unc_mean_ms));
    for (int i = 0; i < TB_MODEL_UNC_PCTS; i++)
        json_object_set_new(o, names[i], jreal(op->unc_pct_ms[i]));
    json_object_set_new(o, "max_ms", jreal(op->unc_max_ms));
    return o;
}

static json_t *op_json(const tb_model_op *op) {
    json_t *o = json_object();
    json_object_set_new(o, "name", jstr(op->name));
    json_object_set_new(o, "count", jint(op->count));
    json_object_set_new(o, "errors", jint(op->errors));
    json_object_set_new(o, "count_all", jint(op->count_all));
    json_object_set_new(o, "mean_ms", jreal(op->mean_ms));
    json_object_set_new(o, "p50_ms", jreal(op->p50_ms));
    json_object_set_new(o, "p90_ms", jreal(op->p90_ms));
    json_object_set_new(o, "p95_ms", jreal(op->p95_ms));
    json_object_set_new(o, "p99_ms", jreal(op->p99_ms));
    json_object_set_new(o, "p999_ms", jreal(op->p999_ms));
    json_object_set_new(o, "max_ms", jreal(op->max_ms));
    json_object_set_new(o, "errors_by_class", classes_json(op->errors_by_class, NULL, op->classes_known));
    json_object_set_new(o, "uncorrected", uncorrected_json(op));
    return o;
}

static json_t *workload_json(const tb_model_workload *w) {
    json_t *o = json_object(), *ops = json_array();
    json_object_set_new(o, "name", jstr(w->name));
    json_object_set_new(o, "tile", json_integer(w->tile));
    json_object_set_new(o, "ops", jint(w->ops));
    json_object_set_new(o, "errors", jint(w->errors));
    json_object_set_new(o, "errors_by_class", classes_json(NULL, w->errors_by_class, w->classes_known));
    json_object_set_new(o, "throughput", jreal(w->throughput));
    json_object_set_new(o, "unit", jstr(w->unit));
    json_object_set_new(o, "reference", jreal(w->reference));
    json_object_set_new(o, "normalized", jreal(w->normalized));
    for (size_t k = 0; k < w->n_ops; k++)
        json_array_append_new(ops, op_json(&w->ops_list[k]));
    json_object_set_new(o, "operations", ops);
    return o;
}

/* null (JSON) where the host did not tell; {} C-states without cpuidle. */
static json_t *telemetry_json(const tb_model_telemetry *t) {
    static const char *const modes[TB_MODEL_CPU_MODES] = {"user_pct",   "nice_pct", "sys_pct",     "idle_pct",
                                                          "iowait_pct", "irq_pct",  "softirq_pct", "steal_pct"};
    json_t *o = json_object();
    json_object_set_new(o, "cpu_util_pct", jreal(t->cpu_util_pct));
    json_object_set_new(o, "avg_freq_mhz", jreal(t->avg_freq_mhz));
    json_object_set_new(o, "freq_source", jstr(t->freq_source));
    for (int m = 0; m < TB_MODEL_CPU_MODES; m++)
        json_object_set_new(o, modes[m], jreal(t->mode_pct[m]));
    json_object_set_new(o, "samples", jint(t->samples));
    json_object_set_new(o, "cstate_residency_pct", jobj(&t->cstate_residency_pct));
    return o;
}

/* The load-generator agents that ran the phase (a run with agents only). */
static json_t *agents_json(const tb_model_level *lv) {
    json_t *arr = json_array();
    for (size_t i = 0; i < lv->n_agents; i++) {
        const tb_model_agent *a = &lv->agents[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", jstr(a->name));
        json_object_set_new(o, "host", jstr(a->host));
        json_object_set_new(o, "tile_lo", jint(a->tile_lo));
        json_object_set_new(o, "tile_hi", jint(a->tile_hi));
        json_object_set_new(o, "threads", json_integer(a->threads));
        json_object_set_new(o, "users", json_integer(a->users));
        json_object_set_new(o, "ops", jint(a->ops));
        json_object_set_new(o, "errors", jint(a->errors));
        json_object_set_new(o, "cpu_s", jreal(a->cpu_s));
        json_object_set_new(o, "stall_max_us", jint(a->stall_max_us));
        json_object_set_new(o, "stall_p99_us", jint(a->stall_p99_us));
        json_object_set_new(o, "clock_offset_us", jint(a->clock_offset_us));
        json_object_set_new(o, "clock_bound_us", jint(a->clock_bound_us));
        json_object_set_new(o, "lost_at", jstr(a->lost_at));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* Each SUT host's share of the phase (a run with [host.NAME] sections only):
 * its meters' mean power summed, and its telemetry; avg_watts is their sum. */
static json_t *level_hosts_json(const tb_model_level *lv) {
    json_t *arr = json_array();
    for (size_t i = 0; i < lv->n_hosts; i++) {
        const tb_model_level_host *h = &lv->hosts[i];
        json_t *o = json_object(), *t = json_object();
        json_object_set_new(o, "name", jstr(h->name));
        json_object_set_new(o, "tiles", json_integer(h->tiles));
        json_object_set_new(o, "avg_watts", jreal(h->avg_watts));
        json_object_set_new(o, "samples", json_integer(h->samples));
        json_object_set_new(t, "cpu_util_pct", jreal(h->cpu_util_pct));
        json_object_set_new(t, "avg_freq_mhz", jreal(h->avg_freq_mhz));
        json_object_set_new(t, "freq_source", jstr(h->freq_source));
        json_object_set_new(t, "samples", jint(h->telemetry_samples));
        json_object_set_new(o, "telemetry", t);
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The run's SUT hosts: what each is, and its active idle. */
static json_t *hosts_json(const tb_model_run *r) {
    json_t *arr = json_array();
    for (size_t i = 0; i < r->n_hosts; i++) {
        const tb_model_host *h = &r->hosts[i];
        json_t *o = json_object(), *idle = json_object();
        json_object_set_new(o, "name", jstr(h->name));
        json_object_set_new(o, "label", jstr(h->label));
        json_object_set_new(o, "tiles", jstr(h->tiles));
        json_object_set_new(o, "telemetry", jstr(h->telemetry));
        json_object_set_new(o, "config", jobj(&h->config));
        json_object_set_new(o, "active_idle_watts", jreal(h->active_idle_watts));
        json_object_set_new(idle, "cpu_util_pct", jreal(h->idle_cpu_util_pct));
        json_object_set_new(idle, "avg_freq_mhz", jreal(h->idle_avg_freq_mhz));
        json_object_set_new(idle, "samples", jint(h->idle_telemetry_samples));
        json_object_set_new(o, "active_idle_telemetry", idle);
        json_array_append_new(arr, o);
    }
    return arr;
}

/* Energy per op and the efficiency curve's point (docs/method.md). */
static json_t *energy_json(const tb_model_level *lv, double peak_score) {
    json_t *o = json_object(), *wls = json_array();
    tb_model_energy e;
    tb_model_level_energy(lv, peak_score, &e);
    json_object_set_new(o, "joules", jreal(e.joules));
    json_object_set_new(o, "metric_ops", jreal(e.ops));
    json_object_set_new(o, "j_per_op", jreal(e.j_per_op));
    json_object_set_new(o, "normalized_performance", jreal(e.norm_perf));
    json_object_set_new(o, "efficiency_per_kw", jreal(e.efficiency));
    for (size_t k = 0; k < e.n; k++) {
        json_t *w = json_object();
        json_object_set_new(w, "workload", jstr(e.wl[k].workload));
        json_object_set_new(w, "metric_ops", jreal(e.wl[k].ops));
        json_object_set_new(w, "normalized", jreal(e.wl[k].normalized));
        json_object_set_new(w, "energy_share", jreal(e.wl[k].share));
        json_object_set_new(w, "j_per_op", jreal(e.wl[k].j_per_op));
        json_array_append_new(wls, w);
    }
    json_object_set_new(o, "workloads", wls);
    return o;
}

static json_t *level_json(const tb_model_level *lv, double peak_score) {
    json_t *o = json_object(), *qos = json_array(), *tq = json_array(), *wls = json_array();
    json_object_set_new(o, "tiles", json_integer(lv->tiles));
    json_object_set_new(o, "phase", json_integer(lv->phase));
    json_object_set_new(o, "repeat", json_integer(lv->repeat));
    json_object_set_new(o, "alone", jstr(lv->alone));
    json_object_set_new(o, "score", jreal(lv->score));
    json_object_set_new(o, "avg_watts", jreal(lv->avg_watts));
    json_object_set_new(o, "ppkw", jreal(lv->ppkw));
    json_object_set_new(o, "qos_pass", json_boolean(lv->qos_pass));
    json_object_set_new(o, "qos_not_judged", json_integer(lv->qos_not_judged));
    json_object_set_new(o, "qos_verdict", json_string(tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged)));
    json_object_set_new(o, "valid", json_boolean(lv->valid));
    json_object_set_new(o, "invalid_reason", jstr(lv->invalid_reason));
    json_object_set_new(o, "steady_start", jstr(lv->steady_start));
    json_object_set_new(o, "steady_end", jstr(lv->steady_end));
    json_object_set_new(o, "steady_s", jreal(lv->steady_s));
    json_object_set_new(o, "samples_total", jint(lv->samples_total));
    json_object_set_new(o, "samples_bad", jint(lv->samples_bad));
    json_object_set_new(o, "max_uncertainty_pct", jreal(lv->max_uncertainty_pct));
    json_object_set_new(o, "mean_uncertainty_pct", jreal(lv->mean_uncertainty_pct));
    json_object_set_new(o, "other_cpu_pct", jreal(lv->other_cpu_pct));
    json_object_set_new(o, "sut_processes", lv->sut_processes >= 0 ? json_integer(lv->sut_processes) : json_null());
    for (size_t i = 0; i < lv->n_qos; i++)
        json_array_append_new(qos, qos_json(&lv->qos[i]));
    for (size_t i = 0; i < lv->n_tile_qos; i++)
        json_array_append_new(tq, qos_json(&lv->tile_qos[i]));
    json_object_set_new(o, "qos", qos);
    json_object_set_new(o, "tile_qos", tq);
    json_object_set_new(o, "telemetry", telemetry_json(&lv->telemetry));
    for (size_t i = 0; i < lv->n_workloads; i++)
        json_array_append_new(wls, workload_json(&lv->workloads[i]));
    json_object_set_new(o, "workloads", wls);
    if (lv->n_agents) json_object_set_new(o, "agents", agents_json(lv));
    if (lv->n_hosts) json_object_set_new(o, "hosts", level_hosts_json(lv));
    tb_report_json_infra_level(o, lv);
    json_object_set_new(o, "inlet_temperature", tb_report_json_temp(&lv->inlet));
    json_object_set_new(o, "energy", energy_json(lv, peak_score));
    return o;
}

static json_t *stats_json(const tb_score_stats *st) {
    json_t *o = json_object();
    json_object_set_new(o, "mean", st->n > 0 ? json_real(st->mean) : json_null());
    json_object_set_new(o, "min", st->n > 0 ? json_real(st->min) : json_null());
    json_object_set_new(o, "max", st->n > 0 ? json_real(st->max) : json_null());
    return o;
}

static json_t *summary_json(const tb_model_summary *s) {
    json_t *o = json_object();
    json_object_set_new(o, "tiles", json_integer(s->tiles));
    json_object_set_new(o, "phases", json_integer(s->phases));
    json_object_set_new(o, "repeats", json_integer(s->repeats));
    json_object_set_new(o, "qos_pass", json_boolean(s->qos_pass));
    json_object_set_new(o, "qos_not_judged", json_integer(s->qos_not_judged));
    json_object_set_new(o, "qos_verdict", json_string(tb_model_qos_verdict(s->qos_pass, s->qos_not_judged)));
    json_object_set_new(o, "valid", json_boolean(s->valid));
    json_object_set_new(o, "score", stats_json(&s->score));
    json_object_set_new(o, "avg_watts", stats_json(&s->avg_watts));
    json_object_set_new(o, "ppkw", stats_json(&s->ppkw));
    tb_report_json_infra_summary(o, s);
    return o;
}

static void add_arrays(json_t *run, const tb_model_run *r) {
    json_t *levels = json_array(), *summary = json_array(), *events = json_array();
    for (size_t i = 0; i < r->n_levels; i++)
        json_array_append_new(levels, level_json(&r->levels[i], r->peak_score));
    json_object_set_new(run, "levels", levels);
    for (size_t i = 0; i < r->n_summary; i++)
        json_array_append_new(summary, summary_json(&r->summary[i]));
    json_object_set_new(run, "summary", summary);
    for (size_t i = 0; i < r->n_events; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "at", jstr(r->events[i].at));
        json_object_set_new(e, "kind", jstr(r->events[i].kind));
        json_object_set_new(e, "message", jstr(r->events[i].message));
        json_array_append_new(events, e);
    }
    json_object_set_new(run, "events", events);
    if (r->n_ranging) {
        json_t *rg = json_array();
        for (size_t i = 0; i < r->n_ranging; i++) {
            const tb_model_ranging *g = &r->ranging[i];
            json_t *e = json_object();
            json_object_set_new(e, "tiles", json_integer((json_int_t)g->tiles));
            json_object_set_new(e, "repeat", json_integer((json_int_t)g->repeat));
            json_object_set_new(e, "alone", jstr(g->alone));
            json_object_set_new(e, "meter", json_integer((json_int_t)g->meter));
            json_object_set_new(e, "peak_v", jreal(g->peak_v));
            json_object_set_new(e, "peak_a", jreal(g->peak_a));
            json_object_set_new(e, "volt_range_v", jreal(g->volt_range_v));
            json_object_set_new(e, "amp_range_a", jreal(g->amp_range_a));
            json_object_set_new(e, "samples", json_integer((json_int_t)g->samples));
            json_array_append_new(rg, e);
        }
        json_object_set_new(run, "ranging", rg);
    }
}

static json_t *run_json(const tb_model_run *r) {
    json_t *run = json_object(), *meters = json_array(), *idle = json_object();
    json_object_set_new(run, "id", json_integer(r->id));
    json_object_set_new(run, "label", jstr(r->label));
    json_object_set_new(run, "status", jstr(r->status));
    json_object_set_new(run, "started_at", jstr(r->started_at));
    json_object_set_new(run, "finished_at", jstr(r->finished_at));
    json_object_set_new(run, "tilebench_version", jstr(r->tilebench_version));
    json_object_set_new(run, "tile_name", jstr(r->tile_name));
    json_object_set_new(run, "tile_spec", jstr(r->tile_spec));
    json_object_set_new(run, "host", jobj(&r->host));
    for (size_t i = 0; i < r->n_meters; i++)
        json_array_append_new(meters, meter_json(r, &r->meters[i]));
    json_object_set_new(run, "meters", meters);
    if (r->n_hosts) json_object_set_new(run, "hosts", hosts_json(r));
    json_object_set_new(run, "active_idle_watts", jreal(r->active_idle_watts));
    json_object_set_new(idle, "cpu_util_pct", jreal(r->idle_cpu_util_pct));
    json_object_set_new(idle, "avg_freq_mhz", jreal(r->idle_avg_freq_mhz));
    json_object_set_new(idle, "samples", json_integer(r->idle_telemetry_samples));
    json_object_set_new(run, "active_idle_telemetry", idle);
    json_object_set_new(run, "inlet_temperature_measured", json_boolean(r->temp_measured));
    json_object_set_new(run, "active_idle_inlet_temperature", tb_report_json_temp(&r->idle_inlet));
    json_object_set_new(run, "saturation_tiles", jint(r->saturation_tiles));
    json_object_set_new(run, "peak_score", jreal(r->peak_score));
    json_object_set_new(run, "peak_ppkw", jreal(r->peak_ppkw));
    json_object_set_new(run, "overall_efficiency", jreal(r->overall_efficiency));
    tb_report_json_infra_run(run, r);
    json_object_set_new(run, "estimated_power", json_boolean(r->estimated_power));
    json_object_set_new(run, "settings", jobj(&r->settings));
    json_object_set_new(run, "config_text", jstr(r->config_text));
    add_arrays(run, r);
    {
        json_t *intf = tb_report_interference_json(r);
        if (intf) json_object_set_new(run, "interference", intf);
    }
    return run;
}

int tb_report_write_json(const tb_model_run *r, FILE *f, char *err) {
    json_t *root = json_object();
    int rc;
    json_object_set_new(root, "run", run_json(r));
    errno = 0;
    rc = json_dumpf(root, f, JSON_FLAGS) == 0 && fputc('\n', f) != EOF ? 0 : -1;
    if (rc != 0) tb_seterr(err, "write report: %s", errno ? strerror(errno) : "output error");
    json_decref(root);
    return rc;
}
