/*
 * run_console.c: the console text of a run and of a campaign (see
 * run_console.h). The coordinator says what happened, with the figures; the
 * words, the live progress line on a terminal (rewritten in place with
 * "\r\033[K") and the stage lines otherwise are all here.
 */
#include "cli/run_console.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/compare.h"
#include "results/model.h"

static const char *est(int estimated) { return estimated ? " (estimated)" : ""; }

/* The text after the "N tiles phase P: " that begins a phase's event. */
static const char *after_prefix(const char *msg) { return msg + strcspn(msg, ":") + 2; }

static void on_run_begun(void *arg, int64_t run_id, const char *tile_name, const char *tile_spec, const char *db) {
    tb_run_console *con = arg;
    if (!con->quiet) printf("run %lld: %s, tiles %s, results in %s\n", (long long)run_id, tile_name, tile_spec, db);
}

static void on_reference(void *arg, const char *workload, const char *source) {
    tb_run_console *con = arg;
    if (!con->quiet) printf("%s: reference from %s\n", workload, source);
}

static void on_sut_starting(void *arg, const char *dir, int tiles) {
    tb_run_console *con = arg;
    if (con->quiet) return;
    printf("starting the embedded SUT in %s (%d tiles of data)...\n", dir, tiles);
    fflush(stdout);
}

static void on_agents_waiting(void *arg, int n, uint64_t wait_us) {
    tb_run_console *con = arg;
    if (con->quiet) return;
    printf("waiting up to %llu s for %d load-generator agent%s at the broker...\n",
           (unsigned long long)(wait_us / 1000000), n, n == 1 ? "" : "s");
    fflush(stdout);
}

static void on_idle_begun(void *arg, uint64_t idle_us) {
    tb_run_console *con = arg;
    if (con->quiet || con->is_tty) return;
    printf("active idle: %.0fs\n", (double)idle_us / 1e6);
    fflush(stdout);
}

static void on_idle_progress(void *arg, uint64_t left_us, double watts) {
    tb_run_console *con = arg;
    char left[32];
    if (con->quiet || !con->is_tty) return;
    tb_format_duration(left_us, left, sizeof left);
    printf("\r\033[Kactive idle  %s left  %.1f W", left, watts);
    fflush(stdout);
}

static void on_idle_done(void *arg, double watts, int estimated) {
    tb_run_console *con = arg;
    if (!con->quiet) printf("active idle: %.1f W%s\n", watts, est(estimated));
}

static void on_level_begun(void *arg, int tiles, const tb_stage_def *sd) {
    tb_run_console *con = arg;
    if (con->quiet || con->is_tty) return;
    printf("level %d tiles: ramp-up %.0fs, warm-up %.0fs, %d x %.0fs steady, ramp-down %.0fs\n", tiles,
           (double)sd->ramp_up_us / 1e6, (double)sd->warm_up_us / 1e6, sd->phases, (double)sd->steady_us / 1e6,
           (double)sd->ramp_down_us / 1e6);
    fflush(stdout);
}

static void on_level_alone(void *arg, int tiles, const char *alone) {
    tb_run_console *con = arg;
    if (con->quiet) return;
    if (alone)
        printf("level %d tiles: consolidation interference: %s alone in each tile\n", tiles, alone);
    else
        printf("level %d tiles: consolidation interference: the whole tile\n", tiles);
    fflush(stdout);
}

/* Once a second or so on a terminal: stage, level, time left, ops/s, W. */
static void on_progress(void *arg, const tb_run_progress *p) {
    tb_run_console *con = arg;
    char left[32];
    if (con->quiet || !con->is_tty) return;
    tb_format_duration(p->left_us, left, sizeof left);
    if (p->phase > 0)
        printf("\r\033[K[level %d/%d: %d tiles%s%s] %s %d  %s left  %.0f ops/s  %llu errors  %.1f W%s", p->level,
               p->levels_total, p->tiles, p->alone ? ", alone: " : "", p->alone ? p->alone : "", p->stage, p->phase,
               left, p->ops_per_s, (unsigned long long)p->errors, p->watts, est(p->estimated));
    else
        printf("\r\033[K[level %d/%d: %d tiles%s%s] %s  %s left  %.0f ops/s  %llu errors  %.1f W%s", p->level,
               p->levels_total, p->tiles, p->alone ? ", alone: " : "", p->alone ? p->alone : "", p->stage, left,
               p->ops_per_s, (unsigned long long)p->errors, p->watts, est(p->estimated));
    fflush(stdout);
}

static void on_progress_end(void *arg) {
    tb_run_console *con = arg;
    if (con->quiet || !con->is_tty) return;
    printf("\r\033[K");
    fflush(stdout);
}

/* --verbose: the QoS rules that did not pass, one line each; a rule not
 * judged in some tile is one line for every tile. */
static void print_qos_rules(const tb_level_result *lr, int n_rules) {
    const tb_qos_result *qr = lr->qos;
    for (int i = 0; i < lr->n_qos; i++) {
        const char *what = qr[i].not_judged ? "not judged" : "fail";
        if (qr[i].pass) continue;
        if (qr[i].not_judged && qr[i].tile) continue;
        if (qr[i].tile)
            printf("    QoS %s, tile %d: %s: %s\n", what, qr[i].tile, qr[i].rule, qr[i].reason);
        else
            printf("    QoS %s: %s: %s\n", what, qr[i].rule, qr[i].reason);
    }
    /* a rule not judged over all tiles merged has even fewer ops per tile:
     * only the rules judged at the level but not in some tile */
    for (int i = 0; i < n_rules && i < lr->n_qos; i++) {
        int n_tiles = 0;
        if (qr[i].not_judged) continue;
        for (int k = n_rules + i; k < lr->n_qos; k += n_rules)
            n_tiles += qr[k].not_judged;
        if (n_tiles > 0) printf("    QoS not judged in %d of %d tile verdicts: %s\n", n_tiles, lr->tiles, qr[i].rule);
    }
}

/* The phase's rule rows as the read model has them, so that the counts and
 * the hint come from the same code as the reports' (results/model.c). */
static void model_rows(const tb_level_result *lr, tb_model_qos *level, size_t *n, tb_model_qos *tiles, size_t *nt) {
    *n = *nt = 0;
    for (int i = 0; i < lr->n_qos; i++) {
        const tb_qos_result *q = &lr->qos[i];
        tb_model_qos *m = q->tile ? &tiles[(*nt)++] : &level[(*n)++];
        m->tile = q->tile;
        m->rule = (char *)q->rule;
        m->reason = (char *)q->reason;
        m->observed = q->observed;
        m->limit = q->limit;
        m->judged = !q->not_judged;
        m->pass = q->pass;
        m->ops = (tb_model_int){(int64_t)q->ops, 1};
        m->min_ops = (tb_model_int){(int64_t)q->min_ops, 1};
    }
}

/* One QoS line under the level line at most: the failed rules named, else
 * the hint that says how long a steady state would judge every rule. */
static void print_qos_summary(const tb_level_result *lr, const tb_model_qos_counts *c, int verbose) {
    double steady_s = (double)lr->steady_us / 1e6;
    char hint[512];
    if (c->failed > 0) {
        printf("  QoS failed: %s%s (the report%s has each rule's figures)\n", c->first_failed ? c->first_failed : "?",
               c->failed > 1 ? " and more" : "", verbose ? " and the lines below" : ", or run --verbose,");
    } else if (tb_model_qos_hint(c, steady_s, hint, sizeof hint)) {
        printf("  QoS hint: %s\n", hint);
    }
}

static void on_phase_done(void *arg, const tb_level_result *lr, int n_rules, int estimated) {
    tb_run_console *con = arg;
    char counts[128], score[96];
    size_t n = (size_t)(lr->n_qos > 0 ? lr->n_qos : 0), nl, nt;
    tb_model_qos *rows = xcalloc(n + 1, sizeof *rows), *tiles = xcalloc(n + 1, sizeof *tiles);
    tb_model_qos_counts qc;
    if (con->quiet) {
        free(rows), free(tiles);
        return;
    }
    on_progress_end(arg);
    model_rows(lr, rows, &nl, tiles, &nt);
    tb_model_qos_count(rows, nl, tiles, nt, (double)lr->steady_us / 1e6, &qc);
    tb_model_qos_counts_text(&qc, counts, sizeof counts);
    if (lr->has_infra && isfinite(lr->infra_score))
        snprintf(score, sizeof score, "%.3f (app %.3f, infra %.3f)", lr->score, lr->app_score, lr->infra_score);
    else if (lr->has_infra)
        snprintf(score, sizeof score, "%.3f (app %.3f, infra n/a: no reference)", lr->score, lr->app_score);
    else
        snprintf(score, sizeof score, "%.3f", lr->score);
    printf("level %d tiles%s%s phase %d: score %s  %.1f W%s  PPKW %.2f  QoS %s (%s)  %s%s\n", lr->tiles,
           lr->alone ? ", alone: " : "", lr->alone ? lr->alone : "", lr->phase, score, lr->avg_watts, est(estimated),
           lr->ppkw, tb_model_qos_verdict(lr->qos_pass, lr->qos_not_judged), counts,
           lr->valid ? "valid" : "INVALID: ", lr->valid ? "" : lr->invalid_reason);
    print_qos_summary(lr, &qc, con->verbose);
    if (con->verbose) print_qos_rules(lr, n_rules);
    free(rows), free(tiles);
    fflush(stdout);
}

/* "CPU 45.2% (user 30.1, sys 12.0, iowait 0.3), 2400 MHz (cpufreq), C0 45%, C1 54%"; n/a when not available. */
static void telem_line(const tb_telemetry *t, char *buf, size_t len) {
    size_t l = 0;
    if (isfinite(t->cpu_util_pct))
        l += (size_t)snprintf(buf + l, len - l, "CPU %.1f%% (user %.1f, sys %.1f, iowait %.1f)", t->cpu_util_pct,
                              t->mode_pct[TB_CPU_USER], t->mode_pct[TB_CPU_SYSTEM], t->mode_pct[TB_CPU_IOWAIT]);
    else
        l += (size_t)snprintf(buf + l, len - l, "CPU n/a");
    if (l < len && isfinite(t->avg_freq_mhz))
        l += (size_t)snprintf(buf + l, len - l, ", %.0f MHz (%s)", t->avg_freq_mhz,
                              tb_telem_freq_source_name(t->freq_src));
    else if (l < len)
        l += (size_t)snprintf(buf + l, len - l, ", frequency n/a");
    if (l < len && t->n_cstates == 0) l += (size_t)snprintf(buf + l, len - l, ", C-states n/a");
    for (int k = 0; k < t->n_cstates && l < len; k++)
        l += (size_t)snprintf(buf + l, len - l, ", %s %.1f%%", t->cstate_name[k], t->cstate_pct[k]);
    if (l < len) snprintf(buf + l, len - l, " [%d samples]", t->n_samples);
}

static void on_telemetry(void *arg, const tb_telemetry *t) {
    tb_run_console *con = arg;
    char line[256];
    if (con->quiet) return;
    telem_line(t, line, sizeof line);
    printf("  telemetry: %s\n", line);
    fflush(stdout);
}

static void on_message(void *arg, tb_run_msg_kind kind, const char *msg) {
    tb_run_console *con = arg;
    if (con->quiet) return;
    switch (kind) {
    case TB_RUN_MSG_INFO: printf("%s\n", msg); break;
    case TB_RUN_MSG_WARNING: printf("warning: %s\n", msg); break;
    case TB_RUN_MSG_STEP_WARNING: printf("  warning: %s\n", msg); break;
    case TB_RUN_MSG_PHASE_HEALTH: printf("  %s\n", after_prefix(msg)); break;
    case TB_RUN_MSG_PHASE_STALL: printf("  warning: %s\n", after_prefix(msg)); break;
    }
}

static void on_report_written(void *arg, const char *path) {
    tb_run_console *con = arg;
    if (!con->quiet) printf("report: %s\n", path);
}

static void on_run_done(void *arg, int64_t run_id, const char *status) {
    tb_run_console *con = arg;
    if (!con->quiet) printf("run %lld %s\n", (long long)run_id, status);
}

void tb_run_console_init(tb_run_console *con, int quiet, tb_run_observer *obs) {
    memset(obs, 0, sizeof *obs);
    con->is_tty = isatty(STDOUT_FILENO);
    con->quiet = quiet;
    con->verbose = 0;
    obs->run_begun = on_run_begun;
    obs->reference = on_reference;
    obs->sut_starting = on_sut_starting;
    obs->agents_waiting = on_agents_waiting;
    obs->idle_begun = on_idle_begun;
    obs->idle_progress = on_idle_progress;
    obs->idle_done = on_idle_done;
    obs->level_begun = on_level_begun;
    obs->level_alone = on_level_alone;
    obs->progress = on_progress;
    obs->progress_end = on_progress_end;
    obs->phase_done = on_phase_done;
    obs->telemetry = on_telemetry;
    obs->message = on_message;
    obs->report_written = on_report_written;
    obs->run_done = on_run_done;
    obs->arg = con;
}

/* ---- campaigns ---------------------------------------------------------------- */

static void on_campaign_begun(void *arg, int64_t id, const tb_campaign *c, const char *db_path) {
    (void)arg;
    printf("campaign %lld '%s': %d configurations (baseline %s), tiles %s, results in %s\n", (long long)id, c->name,
           c->n_configs, c->baseline, c->tiles, db_path);
}

static void on_config_begun(void *arg, int index, int n, const char *config, int is_baseline) {
    (void)arg;
    printf("\n=== configuration %d/%d: %s%s ===\n", index, n, config, is_baseline ? " (baseline)" : "");
    fflush(stdout);
}

static void on_step_begun(void *arg, const char *what, const char *config, const char *command) {
    (void)arg;
    printf("%s %s: %s\n", what, config, command);
    fflush(stdout);
}

static void on_step_output(void *arg, const char *what, const char *config, const char *line) {
    (void)arg;
    printf("  [%s %s] %s\n", what, config, line);
    fflush(stdout);
}

static void on_step_done(void *arg, const char *what, const char *config, double seconds) {
    (void)arg;
    printf("%s %s: done (%.1fs)\n", what, config, seconds);
}

static void on_settling(void *arg, uint64_t settle_us) {
    tb_run_console *con = arg;
    if (!con->quiet) printf("settling %.1fs\n", (double)settle_us / 1e6);
}

static void on_run_complete(void *arg, const char *config, int64_t run_id) {
    (void)arg;
    printf("configuration %s: run %lld complete\n", config, (long long)run_id);
}

static void on_comparison(void *arg, tb_store *s, const int64_t *run_ids, int n, int64_t baseline_run) {
    char e[TB_ERR_LEN];
    (void)arg;
    printf("\n");
    if (tb_compare_write(s, run_ids, n, baseline_run, TB_COMPARE_TEXT, stdout, e) != 0)
        tb_log(TB_LOG_ERROR, "comparison: %s", e);
}

static void on_comparison_written(void *arg, const char *path) {
    (void)arg;
    printf("comparison report: %s\n", path);
}

static void on_no_comparison(void *arg, int baseline_done) {
    (void)arg;
    printf("\nno comparison: %s\n",
           baseline_done ? "only the baseline run finished" : "the baseline run did not finish");
}

static void on_campaign_done(void *arg, int64_t id, const char *status, int n_done, int n_configs) {
    (void)arg;
    printf("campaign %lld %s: %d of %d configurations measured\n", (long long)id, status, n_done, n_configs);
}

void tb_campaign_console_init(tb_run_console *con, tb_campaign_observer *obs) {
    memset(obs, 0, sizeof *obs);
    obs->begun = on_campaign_begun;
    obs->config_begun = on_config_begun;
    obs->step_begun = on_step_begun;
    obs->step_output = on_step_output;
    obs->step_done = on_step_done;
    obs->settling = on_settling;
    obs->run_complete = on_run_complete;
    obs->comparison = on_comparison;
    obs->comparison_written = on_comparison_written;
    obs->no_comparison = on_no_comparison;
    obs->done = on_campaign_done;
    obs->arg = con;
}
