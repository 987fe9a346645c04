/*
 * report_text.c: the terminal summary of a run, and the run list, written
 * from the read model (model.h). Control characters in stored strings are
 * shown as '?' so a label cannot drive the terminal.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "powermeter/accuracy.h"
#include "results/report_fmt.h"
#include "results/report_agents.h"
#include "results/report_infra.h"
#include "results/report_temp.h"
#include "results/report_views.h"

#define put_safe tb_fmt_put_safe
#define S        tb_fmt_str

/* v with fmt into buf, or "-" when unknown. */
static const char *num(double v, const char *fmt, char *buf, size_t len) {
    if (!isfinite(v)) return "-";
    snprintf(buf, len, fmt, v);
    return buf;
}

/* Like num, with "n/a" for a figure the host did not provide. */
static const char *num_na(double v, const char *fmt, char *buf, size_t len) {
    return isfinite(v) ? num(v, fmt, buf, len) : "n/a";
}

/* A string, or "n/a" when missing or empty (telemetry's "not available"). */
static const char *str_na(const char *s) { return s && *s ? s : "n/a"; }

/* The SUT host's power configuration, one line each. */
static void text_host_config(FILE *f, const tb_model_obj *host) {
    static const char *const rows[][2] = {
        {"governor", "governor"},      {"scaling_driver", "driver"}, {"energy_performance_preference", "EPP"},
        {"energy_perf_bias", "EPB"},   {"turbo", "turbo"},           {"pstate_status", "pstate"},
        {"cpuidle_driver", "cpuidle"}, {"tuned_profile", "tuned"}};
    if (host->n == 0 || !tb_model_obj_get(host, "telemetry")) return; /* runs before telemetry */
    fputs("  power cfg   ", f);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fprintf(f, "%s%s ", i ? ", " : " ", rows[i][1]);
        put_safe(f, str_na(tb_model_obj_str(host, rows[i][0])), 0, 0);
    }
    fputs("\n  telemetry    ", f);
    put_safe(f, str_na(tb_model_obj_str(host, "telemetry")), 0, 0);
    fputc('\n', f);
}

static void text_host(FILE *f, const tb_model_obj *host) {
    const char *keys[] = {"hostname", "kernel", "cpu_model"};
    const tb_model_kv *cpus = tb_model_obj_get(host, "cpus");
    int first = 1;
    if (host->n == 0) return;
    fputs("  host        ", f);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = tb_model_obj_str(host, keys[i]);
        if (!v || !*v) continue;
        fputs(first ? " " : ", ", f);
        put_safe(f, v, 0, 0);
        first = 0;
    }
    if (cpus && cpus->kind == TB_KV_INT) fprintf(f, "%s%lld cpus", first ? " " : ", ", (long long)cpus->i);
    fputc('\n', f);
    text_host_config(f, host);
}

/* A meter's own averaging, where it tells: its window, and whether its
 * readings' min, max and average were equal (TB_SAMPLE_FLAT, ipmi.h). */
static void text_meter_averaging(FILE *f, const tb_model_meter *m) {
    long long flat = (long long)m->flat_readings, valid = (long long)m->valid_readings;
    if (!m->avg_window_ms.known && flat == 0) return;
    fputs("               ", f);
    if (m->avg_window_ms.known)
        fprintf(f, "averaging window %lld ms", (long long)m->avg_window_ms.v);
    else
        fputs("averaging window not reported", f);
    if (m->not_averaged)
        fprintf(f, "; NOT AVERAGED: min = max = average in all %lld valid readings", valid);
    else if (flat > 0)
        fprintf(f, "; min = max = average in %lld of %lld valid readings", flat, valid);
    fputc('\n', f);
}

/* A lab meter's published accuracy, calibration date and SPEC acceptance. */
static void text_meter_acceptance(FILE *f, const tb_model_meter *m) {
    if (m->estimated) return;
    fputs("               accepted by SPEC: ", f);
    fputs(tb_meter_spec_accepted_text(m->spec_accepted), f);
    fputs("; calibrated: ", f);
    put_safe(f, m->calibrated ? m->calibrated : "not stated", 0, 0);
    if (m->accuracy) {
        fputs("; accuracy ", f);
        put_safe(f, m->accuracy, 0, 0);
    }
    fputc('\n', f);
}

/* A meter read as several channels: one line per channel, its mean W per level. */
static void text_meter_channels(FILE *f, const tb_model_run *r, const tb_model_meter *m) {
    char b[32];
    if (!m->channels) return;
    fputs("               channels ", f);
    put_safe(f, m->channels, 0, 0);
    fputs(", summed\n", f);
    for (size_t i = 0; i < m->n_channels; i++) {
        const tb_model_channel *c = &m->channels_by_level[i];
        if (i == 0 || c->channel != m->channels_by_level[i - 1].channel)
            fprintf(f, "%s               channel %d  W by level:", i ? "\n" : "", c->channel);
        for (size_t k = 0; k < r->n_levels; k++)
            if (r->levels[k].id == c->level_id) fprintf(f, "  %lldt", (long long)r->levels[k].tiles);
        fprintf(f, " %s", num(c->mean_watts, "%.1f", b, sizeof b));
        if (c->bad_samples) fprintf(f, " (%lld/%lld bad)", (long long)c->bad_samples, (long long)c->samples);
    }
    if (m->n_channels) fputc('\n', f);
}

static void text_meters(FILE *f, const tb_model_run *r) {
    for (size_t i = 0; i < r->n_meters; i++) {
        const tb_model_meter *m = &r->meters[i];
        fprintf(f, "  meter %-6zu ", i);
        put_safe(f, m->uri, 0, 0);
        if (m->model && *m->model) {
            fputs("  ", f);
            put_safe(f, m->model, 0, 0);
        }
        if (m->idn && *m->idn) {
            fputs("  ", f);
            put_safe(f, m->idn, 0, 0);
        }
        if (m->estimated) fputs("  (ESTIMATED)", f);
        if (m->host) {
            fputs("  host ", f);
            put_safe(f, m->host, 0, 0);
        }
        fputc('\n', f);
        text_meter_averaging(f, m);
        text_meter_acceptance(f, m);
        text_meter_channels(f, r, m);
    }
    if (r->n_meters == 0) fputs("  meters       none recorded\n", f);
}

/* The worst and mean uncertainty the meters stated per level, where any did. */
static void text_level_uncertainty(FILE *f, const tb_model_run *r) {
    char b1[32], b2[32];
    size_t i;
    for (i = 0; i < r->n_levels && !isfinite(r->levels[i].max_uncertainty_pct); i++)
        ;
    if (i == r->n_levels) return;
    fputs("\nMeter uncertainty per level (% of W, as the meters state it; the limit is 1%)\n", f);
    fprintf(f, "  %5s %5s %8s %8s\n", "tiles", "phase", "worst", "mean");
    for (i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        fprintf(f, "  %5lld %5lld %8s %8s%s\n", (long long)lv->tiles, (long long)lv->phase,
                num(lv->max_uncertainty_pct, "%.3f", b1, sizeof b1),
                num(lv->mean_uncertainty_pct, "%.3f", b2, sizeof b2), lv->max_uncertainty_pct > 1.0 ? "  OVER 1%" : "");
    }
}

/* A level's QoS for the text view: its one word (tb_model_qos_verdict),
 * pass, fail or incomplete, as in every other output. */
static const char *text_qos(const tb_model_level *lv) { return tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged); }

/* The load levels whose QoS is incomplete (rules not judged), at the top. */
static void text_qos_warning(FILE *f, const tb_model_run *r) {
    char where[256] = "";
    long long last = -1;
    int n = 0;
    for (size_t k = 0; k < r->n_levels; k++) {
        long long t = (long long)r->levels[k].tiles;
        size_t l;
        if (strcmp(text_qos(&r->levels[k]), "incomplete") != 0 || t == last) continue;
        l = strlen(where);
        if (l + 1 < sizeof where) snprintf(where + l, sizeof where - l, "%s%lld", n ? ", " : "", t);
        last = t;
        n++;
    }
    if (n > 0)
        fprintf(f,
                "  QoS warning  incomplete at %s tile%s: rules not judged (too few ops), neither a pass nor a fail "
                "(see \"QoS not judged\")\n",
                where, strcmp(where, "1") == 0 ? "" : "s");
}

/* The SUT hosts ([host.NAME]): tiles, telemetry source, active idle. */
static void text_hosts(FILE *f, const tb_model_run *r) {
    char b1[32], b2[32];
    for (size_t i = 0; i < r->n_hosts; i++) {
        const tb_model_host *h = &r->hosts[i];
        fputs("  host ", f);
        put_safe(f, h->name, 8, 31);
        fputs(" tiles ", f);
        put_safe(f, h->tiles, 0, 0);
        fputs(", telemetry ", f);
        put_safe(f, h->telemetry, 0, 0);
        fprintf(f, ", active idle %s W", num(h->active_idle_watts, "%.1f", b1, sizeof b1));
        if (isfinite(h->idle_cpu_util_pct))
            fprintf(f, " (CPU %s%%)", num_na(h->idle_cpu_util_pct, "%.1f", b2, sizeof b2));
        if (h->label) {
            fputs(": ", f);
            put_safe(f, h->label, 0, 0);
        }
        fputc('\n', f);
    }
}

/* Each host's share of each phase: its tiles, mean power and telemetry. */
static void text_level_hosts(FILE *f, const tb_model_run *r) {
    char b[3][32];
    if (r->n_hosts == 0) return;
    fputs("\nSUT hosts per level (avg W is each host's meters summed; the level's avg W is their sum)\n", f);
    fprintf(f, "  %5s %5s  %-12s %5s %9s %7s %6s %7s\n", "tiles", "phase", "host", "tiles", "avg W", "samples", "CPU%",
            "MHz");
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_hosts; k++) {
            const tb_model_level_host *h = &lv->hosts[k];
            fprintf(f, "  %5lld %5lld  ", (long long)lv->tiles, (long long)lv->phase);
            put_safe(f, h->name, 12, 31);
            fprintf(f, " %5lld %9s %7lld %6s %7s\n", (long long)h->tiles, num(h->avg_watts, "%.1f", b[0], sizeof b[0]),
                    (long long)h->samples, num_na(h->cpu_util_pct, "%.1f", b[1], sizeof b[1]),
                    num_na(h->avg_freq_mhz, "%.0f", b[2], sizeof b[2]));
        }
    }
}

static void text_header(FILE *f, const tb_model_run *r) {
    char b1[64];
    fprintf(f, "tilebench run %lld\n", (long long)r->id);
    if (r->label && *r->label) {
        fputs("  label        ", f);
        put_safe(f, r->label, 0, 0);
        fputc('\n', f);
    }
    fprintf(f, "  status       %s\n", S(r->status));
    fputs("  tile         ", f);
    put_safe(f, r->tile_name && *r->tile_name ? r->tile_name : "-", 0, 0);
    if (r->tile_spec && *r->tile_spec) {
        fputs(", load levels ", f);
        put_safe(f, r->tile_spec, 0, 0);
    }
    fputc('\n', f);
    fprintf(f, "  started      %s\n", r->started_at && *r->started_at ? r->started_at : "-");
    fprintf(f, "  finished     %s\n", r->finished_at && *r->finished_at ? r->finished_at : "-");
    fprintf(f, "  version      tilebench %s\n", S(r->tilebench_version));
    text_host(f, &r->host);
    text_meters(f, r);
    if (r->estimated_power) {
        fputs("\n  *** ESTIMATED POWER: watts come from a model, not a power meter. ***\n"
              "  *** Average watts, PPKW and efficiency below are estimates.      ***\n\n",
              f);
    }
    fprintf(f, "  active idle  %s W%s\n", num(r->active_idle_watts, "%.1f", b1, sizeof b1),
            r->n_hosts ? " (sum of the hosts')" : "");
    text_hosts(f, r);
    if (r->saturation_tiles.known) {
        long long sat = (long long)r->saturation_tiles.v;
        fprintf(f, "  saturation   %lld tile%s (largest load level whose QoS did not fail)\n", sat,
                sat == 1 ? "" : "s");
    } else if (strcmp(S(r->status), TB_RUN_COMPLETE) == 0) {
        fputs("  saturation   - (no load level passed QoS)\n", f);
    } else {
        fputs("  saturation   - (not determined: the run did not complete)\n", f);
    }
    text_qos_warning(f, r);
    fprintf(f, "  peak score   %s%s\n", num(r->peak_score, "%.3f", b1, sizeof b1),
            tb_report_run_has_infra(r) ? " (final score: 0.8 x application + 0.2 x infrastructure)" : "");
    fprintf(f, "  peak PPKW    %s\n", num(r->peak_ppkw, "%.2f", b1, sizeof b1));
    fprintf(f, "  overall      %s score/kW (sum of scores / sum of mean W over the levels and active idle)\n",
            num(r->overall_efficiency, "%.2f", b1, sizeof b1));
}

/* Under a level phase's rules not judged: how long a steady state would
 * judge them all (tb_model_qos_hint, as on the console). */
static void text_qos_hint(FILE *f, const tb_model_level *lv) {
    tb_model_qos_counts qc;
    char hint[512];
    tb_model_level_qos_count(lv, &qc);
    if (!tb_model_qos_hint(&qc, lv->steady_s, hint, sizeof hint)) return;
    fprintf(f, "  %lld tiles", (long long)lv->tiles);
    tb_fmt_put_alone(f, lv);
    fprintf(f, " phase %lld: hint: ", (long long)lv->phase);
    put_safe(f, hint, 0, 0);
    fputc('\n', f);
}

/* The rules of one level phase that went unjudged in its own verdict or a
 * tile's: one line per rule, saying where ("level; tiles 1, 2"), with the
 * level's reason (else the first tile's). Returns shown + lines written. */
static int text_not_judged_level(FILE *f, const tb_model_level *lv, int shown) {
    for (size_t j = 0; j < lv->n_qos; j++) {
        const tb_model_qos *q = &lv->qos[j];
        const char *rule = S(q->rule), *reason = NULL;
        int level = !q->judged, n_tiles = 0;
        char tiles[160] = "";
        if (level) reason = S(q->reason);
        for (size_t k = 0; k < lv->n_tile_qos; k++) {
            const tb_model_qos *t = &lv->tile_qos[k];
            size_t l = strlen(tiles);
            if (strcmp(S(t->rule), rule) != 0 || t->judged) continue;
            if (!reason) reason = S(t->reason);
            if (l + 1 < sizeof tiles)
                snprintf(tiles + l, sizeof tiles - l, "%s%lld", n_tiles ? ", " : "", (long long)t->tile);
            n_tiles++;
        }
        if (!level && n_tiles == 0) continue;
        if (!shown++)
            fputs("\nQoS not judged (too few ops for the rule to mean anything: neither a pass nor a fail)\n", f);
        fprintf(f, "  %lld tiles", (long long)lv->tiles);
        tb_fmt_put_alone(f, lv);
        fprintf(f, " phase %lld: ", (long long)lv->phase);
        put_safe(f, rule, 0, 0);
        fprintf(f, " (%s%s%s%s): ", level ? "level" : "", level && n_tiles ? "; " : "",
                n_tiles == 0   ? ""
                : n_tiles == 1 ? "tile "
                               : "tiles ",
                tiles);
        put_safe(f, reason, 0, 0);
        fputc('\n', f);
    }
    return shown;
}

static void text_qos_failures(FILE *f, const tb_model_run *r) {
    int failures = 0;
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t j = 0; j < lv->n_qos; j++) {
            const tb_model_qos *q = &lv->qos[j];
            if (q->pass || !q->judged) continue;
            if (!failures++) fputs("\nQoS failures\n", f);
            fprintf(f, "  %lld tiles", (long long)lv->tiles);
            tb_fmt_put_alone(f, lv);
            fprintf(f, " phase %lld: ", (long long)lv->phase);
            put_safe(f, q->rule, 0, 0);
            if (q->reason && *q->reason) {
                fputs(": ", f);
                put_safe(f, q->reason, 0, 0);
            }
            fputc('\n', f);
        }
    }
}

static void text_levels(FILE *f, const tb_model_run *r) {
    int not_judged = 0;
    char b1[32], b2[32], b3[32];
    fputs("\nLoad levels\n", f);
    if (r->n_levels == 0) {
        fputs("  (no load level stored)\n", f);
        return;
    }
    fprintf(f, "  %5s %5s %10s %9s %10s  %-20s  %s\n", "tiles", "phase", "score", "avg W", "PPKW", "QoS", "valid");
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        fprintf(f, "  %5lld %5lld %10s %9s %10s  %-20s  ", (long long)lv->tiles, (long long)lv->phase,
                num(lv->score, "%.3f", b1, sizeof b1), num(lv->avg_watts, "%.1f", b2, sizeof b2),
                num(lv->ppkw, "%.2f", b3, sizeof b3), text_qos(lv));
        if (lv->valid)
            fputs("yes", f);
        else {
            fputs("NO", f);
            if (lv->invalid_reason && *lv->invalid_reason) {
                fputs(": ", f);
                put_safe(f, lv->invalid_reason, 0, 0);
            }
        }
        if (lv->alone) {
            fputs("  (alone: ", f);
            put_safe(f, lv->alone, 0, 40);
            fputc(')', f);
        }
        fputc('\n', f);
    }
    text_level_uncertainty(f, r);
    tb_report_text_temp(f, r);
    text_qos_failures(f, r);
    for (size_t i = 0; i < r->n_levels; i++) {
        int before = not_judged;
        not_judged = text_not_judged_level(f, &r->levels[i], not_judged);
        if (not_judged > before) text_qos_hint(f, &r->levels[i]);
    }
}

/* CPU utilization by mode, frequency and C-state residency per level; n/a
 * where the host did not tell. */
static void text_telemetry(FILE *f, const tb_model_run *r) {
    char b[6][32];
    if (r->n_levels == 0 || r->n_hosts) return; /* [host.NAME]: each host's is in "SUT hosts per level" */
    fputs("\nHost telemetry over steady state (% of CPU time; C-states: % of time per CPU)\n", f);
    fprintf(f, "  %5s %5s %6s %6s %6s %6s %6s %7s  %-13s %s\n", "tiles", "phase", "CPU%", "user", "sys", "iowait",
            "idle", "MHz", "freq source", "C-state residency");
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        const tb_model_telemetry *t = &lv->telemetry;
        const tb_model_obj *cs = &t->cstate_residency_pct;
        int first = 1;
        fprintf(f, "  %5lld %5lld %6s %6s %6s %6s %6s %7s  %-13s ", (long long)lv->tiles, (long long)lv->phase,
                num_na(t->cpu_util_pct, "%.1f", b[0], sizeof b[0]), num_na(t->mode_pct[0], "%.1f", b[1], sizeof b[1]),
                num_na(t->mode_pct[2], "%.1f", b[2], sizeof b[2]), num_na(t->mode_pct[4], "%.1f", b[3], sizeof b[3]),
                num_na(t->mode_pct[3], "%.1f", b[4], sizeof b[4]), num_na(t->avg_freq_mhz, "%.0f", b[5], sizeof b[5]),
                str_na(t->freq_source));
        for (size_t k = 0; k < cs->n; k++) {
            const tb_model_kv *v = &cs->kv[k];
            if (v->kind != TB_KV_INT && v->kind != TB_KV_REAL) continue;
            fputs(first ? "" : " ", f);
            put_safe(f, v->key, 0, 16);
            fprintf(f, " %.1f", v->kind == TB_KV_INT ? (double)v->i : v->d);
            first = 0;
        }
        if (first) fputs("n/a", f);
        tb_fmt_put_alone(f, lv);
        fputc('\n', f);
    }
}

/* Latency per workload and op of one level, tiles merged. */
static void text_latency_level(FILE *f, const tb_model_level *lv) {
    const tb_model_op_group *g = lv->groups;
    size_t n = lv->n_groups;
    int any_errors = 0;
    if (n == 0) return;
    fprintf(f, "  %lld tiles", (long long)lv->tiles);
    tb_fmt_put_alone(f, lv);
    fprintf(f, ", phase %lld\n", (long long)lv->phase);
    for (size_t i = 0; i < n; i++)
        any_errors |= g[i].errors > 0;
    fprintf(f, "    %-10s %-16s %10s %8s %10s %10s %10s%s\n", "workload", "op", "count", "errors", "p50", "p95", "p99",
            any_errors ? "  errors by class" : "");
    for (size_t i = 0; i < n; i++) {
        char cls[160];
        fputs("    ", f);
        put_safe(f, g[i].workload, 10, 10);
        fputc(' ', f);
        put_safe(f, g[i].op, 16, 16);
        fprintf(f, " %10llu %8llu", (unsigned long long)g[i].count, (unsigned long long)g[i].errors);
        if (tb_hist_count(g[i].hist) == 0)
            fprintf(f, " %10s %10s %10s", "-", "-", "-");
        else
            fprintf(f, " %10.1f %10.1f %10.1f", (double)tb_hist_percentile(g[i].hist, 50) / 1000.0,
                    (double)tb_hist_percentile(g[i].hist, 95) / 1000.0,
                    (double)tb_hist_percentile(g[i].hist, 99) / 1000.0);
        tb_fmt_error_classes(&g[i], cls, sizeof cls);
        fprintf(f, "%s%s\n", *cls ? "  " : "", cls);
    }
}

/* Energy per op and the efficiency curve's points (docs/method.md). */
static void text_energy(FILE *f, const tb_model_run *r) {
    if (r->n_levels == 0) return;
    fputs("\nEnergy per op (energy = mean W x steady s; per workload split by share of normalized throughput)\n"
          "  tiles phase  energy kJ   metric ops     J/op  norm perf  eff /kW  per workload: share, J/op\n",
          f);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        tb_model_energy e;
        tb_model_level_energy(lv, r->peak_score, &e);
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        fprintf(f, "  %5lld %5lld  %9s  %11s  %7s  %9s  %7s ", (long long)lv->tiles, (long long)lv->phase,
                num(e.joules / 1000.0, "%.3f", b1, sizeof b1), num(e.ops, "%.0f", b2, sizeof b2),
                num(e.j_per_op, "%.4f", b3, sizeof b3), num(e.norm_perf, "%.3f", b4, sizeof b4),
                num(e.efficiency, "%.3f", b5, sizeof b5));
        tb_fmt_put_alone(f, lv);
        for (size_t k = 0; k < e.n; k++) {
            fputs(k ? "; " : " ", f);
            put_safe(f, e.wl[k].workload, 0, 24);
            fprintf(f, " %s%%, %s J", num(100.0 * e.wl[k].share, "%.1f", b1, sizeof b1),
                    num(e.wl[k].j_per_op, "%.4f", b2, sizeof b2));
        }
        fputc('\n', f);
    }
}

/* The ranging pass: the ranges each level measured on. */
static void text_ranging(FILE *f, const tb_model_run *r) {
    if (!r->n_ranging) return;
    fputs("\nRanging (peaks while auto-ranging at the start of warm-up, or without one at the end of ramp-up; fixed "
          "ranges measured on)\n",
          f);
    fputs("  tiles repeat meter     peak V     peak A  range V  range A  samples\n", f);
    for (size_t i = 0; i < r->n_ranging; i++) {
        const tb_model_ranging *g = &r->ranging[i];
        fprintf(f, "  %5lld %6lld %5lld %10.4g %10.4g %8g %8g %8lld", (long long)g->tiles, (long long)g->repeat,
                (long long)g->meter + 1, g->peak_v, g->peak_a, g->volt_range_v, g->amp_range_a, (long long)g->samples);
        if (g->alone) {
            fputs("  alone: ", f);
            put_safe(f, g->alone, 0, 0);
        }
        fputc('\n', f);
    }
}

static void text_events(FILE *f, const tb_model_run *r) {
    int shown = 0;
    for (size_t i = 0; i < r->n_events; i++) {
        const tb_model_event *e = &r->events[i];
        if (strcmp(S(e->kind), "info") == 0) continue;
        if (!shown++) fputs("\nWarnings and errors\n", f);
        fprintf(f, "  %s %s: ", S(e->at), S(e->kind));
        put_safe(f, e->message, 0, 0);
        fputc('\n', f);
    }
}

int tb_report_write_text(const tb_model_run *r, FILE *f, char *err) {
    (void)err; /* write errors are caught by the caller's ferror check */
    text_header(f, r);
    text_levels(f, r);
    text_energy(f, r);
    tb_report_text_infra(f, r);
    text_level_hosts(f, r);
    tb_report_text_agents(f, r);
    text_telemetry(f, r);
    if (r->n_levels > 0) {
        fputs("\nLatency in ms (corrected, from intended start; tiles merged)\n", f);
        for (size_t i = 0; i < r->n_levels; i++)
            text_latency_level(f, &r->levels[i]);
    }
    tb_report_interference_text(r, f);
    text_ranging(f, r);
    text_events(f, r);
    return 0;
}

/* ---- the run list ---------------------------------------------------------------- */

/* Campaigns (coordinator/campaign.c), after the runs: id, status, name, baseline,
 * and each configuration's run. Nothing when there are none. */
static void list_campaigns(const tb_model_run_list *l, FILE *f) {
    for (size_t i = 0; i < l->n_campaigns; i++) {
        const tb_model_campaign *k = &l->campaigns[i];
        if (i == 0) fputs("\ncampaigns\n", f);
        fprintf(f, "%6lld  %-20s  %-11s  ", (long long)k->id, k->started_at ? k->started_at : "-",
                k->status ? k->status : "-");
        put_safe(f, k->name, 0, 40);
        fputs("  baseline ", f);
        put_safe(f, k->baseline, 0, 40);
        fputs("; runs:", f);
        for (size_t j = 0; j < k->n_runs; j++) {
            fprintf(f, "%s %lld ", j ? "," : "", (long long)k->runs[j].id);
            put_safe(f, k->runs[j].config, 0, 40);
        }
        if (k->n_runs == 0) fputs(" none", f);
        fputc('\n', f);
        if (k->message && *k->message) {
            fputs("        ", f);
            put_safe(f, k->message, 0, 0);
            fputc('\n', f);
        }
    }
}

int tb_report_write_run_list(const tb_model_run_list *l, FILE *f, char *err) {
    int n_est = 0;
    for (size_t i = 0; i < l->n_runs; i++) {
        const tb_model_run_row *w = &l->runs[i];
        char score[32] = "-", ppkw[32] = "-";
        if (i == 0)
            fprintf(f, "%6s  %-20s  %-11s  %-30s  %6s  %-10s  %10s  %10s\n", "id", "started", "status", "label",
                    "levels", "QoS", "peak score", "peak PPKW ");
        if (!isnan(w->peak_score)) snprintf(score, sizeof score, "%.3f", w->peak_score);
        /* "*": ESTIMATED POWER (an estimate: meter), explained below the table;
         * a space otherwise, so the digits of every row line up */
        if (!isnan(w->peak_ppkw))
            snprintf(ppkw, sizeof ppkw, "%.2f%s", w->peak_ppkw, w->estimated ? "*" : " ");
        else
            snprintf(ppkw, sizeof ppkw, "- ");
        if (w->estimated) n_est++;
        fprintf(f, "%6lld  %-20s  %-11s  ", (long long)w->id, w->started_at ? w->started_at : "-",
                w->status ? w->status : "-");
        put_safe(f, w->label, 30, 30);
        fprintf(f, "  %6d  %-10s  %10s  %10s\n", w->levels, w->qos_verdict ? w->qos_verdict : "-", score, ppkw);
    }
    if (n_est > 0)
        fputs("* ESTIMATED POWER: watts (and so PPKW) come from a model (estimate: meter), not a power meter\n", f);
    list_campaigns(l, f);
    if (l->n_runs == 0) fputs("no runs yet\n", f);
    if (fflush(f) != 0 || ferror(f)) {
        tb_seterr(err, "write run list: %s", strerror(errno));
        return -1;
    }
    return 0;
}
