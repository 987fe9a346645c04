/*
 * phase.c: one finished steady-state phase becomes a stored result
 * (tb_level_result): the workloads' throughput and the tile scores (VMmark),
 * the QoS verdicts of the level and of each tile, the mean power, PPKW and
 * the validity verdict (qos/validity.c's rules). Also active idle's power
 * judgement, which uses the same power rules.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/run_ctx.h"
#include "powermeter/accuracy.h"
#include "qos/qos.h"
#include "scoring/score.h"

/* Meter m's mean power over [t0, t1) from the window's samples ps, by the
 * trapezoid rule over its valid ones; -1 when it has none. pts: room for n. */
static double meter_mean(const tb_poll_sample *ps, int n, int m, uint64_t t0, uint64_t t1, tb_power_point *pts) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (ps[i].meter != m) continue;
        pts[k].t_us = ps[i].s.mono_us;
        pts[k].watts = ps[i].s.watts;
        pts[k].valid = !(ps[i].s.flags & TB_SAMPLE_BAD) && isfinite(ps[i].s.watts);
        k++;
    }
    return tb_score_mean_power_w(pts, k, t0, t1);
}

double tb_coord_window_power(run_ctx *c, uint64_t t0, uint64_t t1, tb_poll_sample **out_samples, int *out_n,
                             uint64_t *total, uint64_t *bad) {
    tb_poll_sample *ps = NULL;
    int n = tb_poller_window(c->poller, t0, t1, &ps);
    double sum = 0;
    int missing_meter = 0;
    tb_power_point *pts = xcalloc((size_t)n + 1, sizeof *pts);
    *total = (uint64_t)n;
    *bad = 0;
    for (int i = 0; i < n; i++)
        if (ps[i].s.flags & TB_SAMPLE_BAD) (*bad)++;
    /* per meter by the trapezoid rule, summed over meters (each is one SUT feed) */
    for (int m = 0; m < c->n_meters; m++) {
        double w = meter_mean(ps, n, m, t0, t1, pts);
        if (w < 0)
            missing_meter = 1;
        else
            sum += w;
    }
    free(pts);
    *out_samples = ps;
    *out_n = n;
    return missing_meter ? -1 : sum;
}

/* Samples of sampler whose interval lies inside [t0, t1): each covers about
 * one second, so one straddling an edge (part ramp-up, part steady) is left
 * out. The end may be up to the collect grace after t1. */
static int telem_window(tb_telem_sampler *ts, uint64_t t0, uint64_t t1, tb_telem_sample **out) {
    tb_telem_sample *s = NULL;
    int n = tb_telem_sampler_window(ts, t0, t1 + TB_COORD_COLLECT_GRACE_US, &s), k = 0;
    for (int i = 0; i < n; i++)
        if (s[i].mono_us - s[i].interval_us + TB_COORD_COLLECT_GRACE_US >= t0 &&
            s[i].mono_us <= t1 + TB_COORD_COLLECT_GRACE_US)
            s[k++] = s[i];
    *out = s;
    return k;
}

void tb_coord_host_results(run_ctx *c, const tb_poll_sample *ps, int n, uint64_t t0, uint64_t t1, int tiles,
                           tb_host_result *out) {
    tb_power_point *pts = xcalloc((size_t)n + 1, sizeof *pts);
    for (int h = 0; h < c->n_hosts; h++) {
        tb_host_result *r = &out[h];
        memset(r, 0, sizeof *r);
        r->name = c->o->def->hosts[h].name;
        for (int t = 1; t <= tiles; t++)
            r->tiles += tb_tiledef_host_of(c->o->def, t) == h;
        for (int m = 0; m < c->n_meters; m++) {
            double w;
            if (c->meter_host[m] != h) continue;
            for (int i = 0; i < n; i++)
                r->samples += ps[i].meter == m;
            w = meter_mean(ps, n, m, t0, t1, pts);
            /* as for the level: a meter without a valid sample leaves the host's power unknown */
            r->avg_watts = w < 0 || r->avg_watts < 0 ? -1 : r->avg_watts + w;
        }
        tb_telemetry_clear(&r->telemetry);
        if ((r->has_telemetry = c->host_tsampler[h] != NULL)) {
            tb_telem_sample *s = NULL;
            int k = telem_window(c->host_tsampler[h], t0, t1, &s);
            tb_telem_aggregate(s, k, &r->telemetry);
            free(s);
        }
    }
    free(pts);
}

/* The power part of a window's validity input (qos/validity.h): its
 * samples as the poller flagged them. avg_w < 0: some meter gave no valid
 * sample (tb_coord_window_power). */
static void power_validity_input(const run_ctx *c, const tb_poll_sample *ps, int n, double avg_w, double window_s,
                                 tb_validity_input *vin) {
    memset(vin, 0, sizeof *vin);
    vin->no_valid_meter = avg_w < 0;
    vin->meters = c->n_meters;
    vin->steady_s = window_s;
    for (int m = 0; m < c->n_meters && !vin->calibration[0]; m++)
        (void)tb_meter_calibration_stale(&c->infos[m], tb_meter_today_days(), vin->calibration,
                                         sizeof vin->calibration);
    for (int i = 0; i < n; i++) {
        unsigned f = ps[i].s.flags;
        tb_validity_sample s = {.bad = (f & TB_SAMPLE_BAD) != 0,
                                .missing = (f & TB_SAMPLE_MISSING) != 0,
                                .overrange = (f & TB_SAMPLE_OVERRANGE) != 0,
                                .implausible = (f & TB_SAMPLE_IMPLAUSIBLE) != 0,
                                .autorange = (f & TB_SAMPLE_AUTORANGE) != 0,
                                .uncertainty_pct = ps[i].s.uncertainty_pct};
        tb_validity_add_sample(vin, &s);
    }
}

/* An estimate (estimate:) cannot read above its model's maximum: when at
 * least half of a stage's samples of an estimated meter sit there, the host's
 * CPU was saturated (or busy with other work) and the watts are a floor, not
 * a figure. A warning, with what to look at (docs/method.md). */
#define EST_CEILING_SHARE 0.5
/* Active idle's CPU, from the estimate's own model, above this: not idle. */
#define EST_IDLE_CPU_MAX 0.20

static void warn_estimate_ceiling(run_ctx *c, const char *stage, const tb_poll_sample *ps, int n) {
    for (int m = 0; m < c->n_meters; m++) {
        const tb_meter_info *in = &c->infos[m];
        int valid = 0, top = 0;
        char msg[512];
        if (!in->estimated || !(in->model_max_w > in->model_idle_w)) continue;
        for (int i = 0; i < n; i++) {
            if (ps[i].meter != m || (ps[i].s.flags & TB_SAMPLE_BAD) || !isfinite(ps[i].s.watts)) continue;
            valid++;
            top += ps[i].s.watts >= in->model_max_w - 1e-9 * in->model_max_w;
        }
        if (valid == 0 || (double)top < EST_CEILING_SHARE * valid) continue;
        snprintf(msg, sizeof msg,
                 "%s: %d of %d estimated samples of meter %d sat at the model's maximum (%g W, CPU 100%%): the "
                 "host's CPU was saturated, so the estimate is a floor of the power, not a figure of it",
                 stage, top, valid, m, in->model_max_w);
        tb_coord_say(c, "warning", TB_RUN_MSG_STEP_WARNING, msg);
    }
}

/* Active idle on estimated power: the model's own CPU utilization over it
 * (W = idle + (max - idle) x CPU, inverted); above EST_IDLE_CPU_MAX the
 * host was busy with other work and the idle figure is not idle's. */
static void warn_estimate_idle_cpu(run_ctx *c, const tb_poll_sample *ps, int n) {
    for (int m = 0; m < c->n_meters; m++) {
        const tb_meter_info *in = &c->infos[m];
        double sum = 0, cpu;
        int valid = 0;
        char msg[512];
        if (!in->estimated || !(in->model_max_w > in->model_idle_w)) continue;
        for (int i = 0; i < n; i++)
            if (ps[i].meter == m && !(ps[i].s.flags & TB_SAMPLE_BAD) && isfinite(ps[i].s.watts)) {
                sum += ps[i].s.watts;
                valid++;
            }
        if (valid == 0) continue;
        cpu = (sum / valid - in->model_idle_w) / (in->model_max_w - in->model_idle_w);
        if (cpu <= EST_IDLE_CPU_MAX) continue;
        snprintf(msg, sizeof msg,
                 "active idle was not idle: CPU %.0f%% (meter %d's estimate, over %d samples; at most %.0f%% "
                 "expected): the host was busy with other work, and the estimated idle and load watts include it",
                 100.0 * cpu, m, valid, 100.0 * EST_IDLE_CPU_MAX);
        tb_coord_say(c, "warning", TB_RUN_MSG_STEP_WARNING, msg);
    }
}

void tb_coord_warn_estimate(run_ctx *c, int tiles, int phase, const tb_poll_sample *ps, int n) {
    char stage[64];
    if (phase == 0) {
        warn_estimate_idle_cpu(c, ps, n);
        warn_estimate_ceiling(c, "active idle", ps, n);
        return;
    }
    snprintf(stage, sizeof stage, "%d tiles phase %d", tiles, phase);
    warn_estimate_ceiling(c, stage, ps, n);
}

/* Active idle is judged by a level's power rules (its load generator is
 * idle, so the CPU rule does not apply): a warning when they fail, since the
 * idle figure feeds overall efficiency. */
void tb_coord_judge_idle(run_ctx *c, const tb_poll_sample *ps, int n, double w, uint64_t idle_us) {
    tb_validity_input vin;
    tb_validity v;
    char msg[700];
    tb_coord_warn_estimate(c, 0, 0, ps, n);
    power_validity_input(c, ps, n, w, (double)idle_us / 1e6, &vin);
    if (tb_validity_judge(&vin, &v)) return;
    snprintf(
        msg, sizeof msg,
        "active idle: %s; its mean power, and the overall efficiency that uses it, rest on the samples that remain",
        v.reason);
    tb_coord_say(c, "warning", TB_RUN_MSG_STEP_WARNING, msg);
}

int tb_coord_telem_window(run_ctx *c, uint64_t t0, uint64_t t1, tb_telem_sample **out) {
    return telem_window(c->tsampler, t0, t1, out);
}

/* What one phase's result is made of; freed by phase_free. */
typedef struct phase_parts {
    const tb_level_plan *pl;
    int p, tiles, nw;
    int n_rules; /* the level's QoS rules (tb_coord_level_rules) */
    tb_level_result lr;
    tb_workload_result *wr; /* tiles x workloads */
    tb_op_result *opr;      /* tiles x workloads x TB_MAX_OPS */
    tb_qos_result *qr;
    tb_poll_sample *samples;
    tb_poll_sample *stage_ps[3]; /* ramp-up, warm-up, ramp-down (stage_samples) */
    tb_stage_samples ss[3];
    tb_temp_reading *temps[4]; /* inlet temperature readings: steady, then the stages of stage_samples */
    tb_temp_stage tstage[4];
    tb_telem_sample *telem;
    tb_agent_result *agents; /* the load generator's parts (agents); NULL: none */
    int n_agents;
    tb_host_result hosts[TB_MAX_HOSTS]; /* c->n_hosts of them: [host.NAME] */
    tb_coord_infra_phase infra;         /* the infrastructure operations' figures (infra_run.c) */
} phase_parts;

static void phase_free(phase_parts *pp) {
    tb_coord_infra_phase_free(&pp->infra);
    tb_coord_free_agents(pp->agents, pp->n_agents);
    free(pp->telem);
    free(pp->qr);
    free(pp->samples);
    for (int i = 0; i < 3; i++)
        free(pp->stage_ps[i]);
    for (int i = 0; i < 4; i++)
        free(pp->temps[i]);
    free(pp->wr);
    free(pp->opr);
}

static double per_unit(const char *unit) { return strcmp(unit, "ops/s") == 0 ? 1.0 : 60.0; }

/* The phase's window on both clocks, and its host telemetry. */
static void phase_window(run_ctx *c, phase_parts *pp) {
    tb_level_result *lr = &pp->lr;
    uint64_t t0 = pp->pl->phase_start_us[pp->p], t1 = pp->pl->phase_end_us[pp->p];
    lr->tiles = pp->tiles;
    lr->phase = pp->p + 1;
    lr->repeat = c->repeat;
    lr->alone = c->alone ? c->alone->name : NULL;
    lr->steady_us = t1 - t0;
    lr->steady_start_mono_us = t0;
    lr->steady_end_mono_us = t1;
    lr->steady_end_wall_us = tb_wall_us() - (int64_t)(tb_now_us() - t1);
    lr->steady_start_wall_us = lr->steady_end_wall_us - (int64_t)(t1 - t0);
    tb_telemetry_clear(&lr->telemetry);
    if (c->tsampler) {
        lr->n_telem_samples = tb_coord_telem_window(c, t0, t1, &pp->telem);
        lr->telem_samples = pp->telem;
        tb_telem_aggregate(pp->telem, lr->n_telem_samples, &lr->telemetry);
    }
    lr->other_cpu_pct = c->phase_other_cpu_pct;
    lr->sut_processes = c->phase_sut_processes;
    if (lr->other_cpu_pct > TB_OTHER_CPU_WARN_PCT) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "%d tiles phase %d: %.1f%% of the host's CPU went to processes outside the SUT (%d server "
                 "process%s found) and the load generator in steady state (more than %g%%): %s",
                 pp->tiles, pp->p + 1, lr->other_cpu_pct, lr->sut_processes, lr->sut_processes == 1 ? "" : "es",
                 TB_OTHER_CPU_WARN_PCT,
                 tb_coord_estimated(c) ? "the estimated watts count that load as the SUT's"
                                       : "compare this run with care");
        tb_coord_say(c, "warning", TB_RUN_MSG_STEP_WARNING, msg);
    }
}

/* One workload of one tile: its ops' counts and latencies, its throughput
 * and normalized throughput. */
static void workload_result(run_ctx *c, phase_parts *pp, tb_lg_stats *st, tb_lg_stats *all, int t, int w) {
    const tb_loadgen *lg = c->lg;
    const tb_workload_def *wd = &c->o->def->workloads[w];
    int cell = (t - 1) * pp->nw + w, n_ops = lg->ops->n_ops(lg->self, w);
    tb_workload_result *r = &pp->wr[cell];
    snprintf(r->name, sizeof r->name, "%s", wd->name);
    snprintf(r->unit, sizeof r->unit, "%s", wd->unit);
    r->tile = t;
    r->reference = c->reference[w];
    r->n_ops = n_ops;
    r->op_results = &pp->opr[cell * TB_MAX_OPS];
    for (int k = 0; k < n_ops; k++) {
        tb_opstat *os = tb_lg_cell(st, t, w, k);
        tb_op_result *o = &r->op_results[k];
        snprintf(o->name, sizeof o->name, "%s", lg->ops->op_name(lg->self, w, k));
        o->count = os->count;
        o->errors = os->errors;
        o->errors_by_class[TB_ERR_CONNECT] = os->err_by_class[TB_OP_ERR_CONNECT];
        o->errors_by_class[TB_ERR_IO] = os->err_by_class[TB_OP_ERR_IO];
        o->errors_by_class[TB_ERR_TIMEOUT] = os->err_by_class[TB_OP_ERR_TIMEOUT];
        o->errors_by_class[TB_ERR_SERVER] = os->err_by_class[TB_OP_ERR_SERVER];
        o->errors_by_class[TB_ERR_CONTENT] = os->err_by_class[TB_OP_ERR_CONTENT];
        o->count_all = all ? tb_lg_cell(all, t, w, k)->count : 0;
        o->hist = os->hist;
        o->hist_uncorrected = os->hist_unc;
        o->metric = lg->ops->op_is_metric(lg->self, w, k);
        if (o->metric) r->ops += os->count;
        r->errors += os->errors;
    }
    r->throughput = tb_score_rate_per_s(r->ops, pp->lr.steady_us) * per_unit(r->unit);
    r->normalized = tb_score_normalize(r->throughput, r->reference);
}

/* Throughput, normalization and tile scores (VMmark); a calibration keeps
 * tile 1's throughput of each workload. */
static void score_phase(run_ctx *c, phase_parts *pp, tb_lg_stats *st, tb_lg_stats *all) {
    double *tile_scores = xcalloc((size_t)pp->tiles, sizeof *tile_scores), norm[TB_MAX_WORKLOADS];
    for (int t = 1; t <= pp->tiles; t++) {
        for (int w = 0; w < pp->nw; w++) {
            workload_result(c, pp, st, all, t, w);
            norm[w] = pp->wr[(t - 1) * pp->nw + w].normalized;
        }
        /* a workload alone (--interference): its own normalized throughput */
        tile_scores[t - 1] = c->alone ? norm[c->alone - c->o->def->workloads] : tb_score_geomean(norm, pp->nw);
        if (c->o->calibrate && !c->alone && t == 1 && c->n_calib < TB_MAX_PHASES) {
            for (int w = 0; w < pp->nw; w++)
                c->calib[c->n_calib][w] = pp->wr[w].throughput;
            c->n_calib++;
        }
    }
    pp->lr.score = tb_score_sum(tile_scores, pp->tiles);
    pp->lr.n_workloads = pp->tiles * pp->nw;
    pp->lr.workloads = pp->wr;
    free(tile_scores);
}

/* QoS: the level's verdict over all tiles merged, and each tile's own
 * (VMmark: every tile must meet QoS), from one array of per-tile inputs. A
 * rule not judged (too few ops) neither passes nor fails: the level passes
 * QoS when no judged rule failed, and counts its rules that went unjudged in
 * its own verdict or a tile's. */
static void judge_qos(run_ctx *c, phase_parts *pp, tb_lg_stats *st) {
    const tb_tiledef *def = c->o->def;
    const tb_loadgen *lg = c->lg;
    int nin = 0, nwl = 0, nr, nq, tiles = pp->tiles;
    tb_qos_rule *own;
    const tb_qos_rule *rules = tb_coord_level_rules(c, &nr, &own);
    tb_qos_input *qin = xcalloc((size_t)tiles * (size_t)pp->nw * TB_MAX_OPS + TB_MAX_INFRA, sizeof *qin);
    tb_qos_wl_input *wlin = xcalloc((size_t)tiles * (size_t)pp->nw + TB_MAX_INFRA, sizeof *wlin);
    tb_qos_inputs in;
    /* rules of infrastructure operations are the level's, not a tile's: the tiles' verdicts leave them out */
    tb_qos_rule *trules = xcalloc((size_t)nr + 1, sizeof *trules);
    int ntr = 0, *tix = xcalloc((size_t)nr + 1, sizeof *tix);
    for (int i = 0; i < nr; i++) {
        tix[i] = tb_coord_infra_rule(&rules[i]) ? -1 : ntr;
        if (tix[i] >= 0) trules[ntr++] = rules[i];
    }
    pp->qr = xcalloc((size_t)nr + (size_t)ntr * (size_t)tiles + 1, sizeof *pp->qr);
    for (int t = 1; t <= tiles; t++)
        for (int w = 0; w < pp->nw; w++) {
            const tb_workload_result *r = &pp->wr[(t - 1) * pp->nw + w];
            for (int k = 0; k < r->n_ops; k++) {
                tb_opstat *os = tb_lg_cell(st, t, w, k);
                tb_qos_input *q = &qin[nin++];
                double target = lg->ops->mix_target_pct(lg->self, w, k);
                q->workload = def->workloads[w].name;
                q->op = lg->ops->op_name(lg->self, w, k);
                q->hist = os->hist;
                q->ops = os->count;
                q->errors = os->errors;
                q->tile = t;
                q->has_mix_target = target >= 0;
                q->mix_target_pct = target >= 0 ? target : 0;
            }
            wlin[nwl].workload = def->workloads[w].name;
            wlin[nwl].tile = t;
            wlin[nwl].throughput = r->throughput;
            wlin[nwl].reference = r->reference;
            nwl++;
        }
    nq = tb_coord_infra_qos(c, &pp->lr, qin + nin, wlin + nwl);
    nin += nq;
    nwl += nq;
    in.ops = qin;
    in.n_ops = nin;
    in.workloads = wlin;
    in.n_workloads = nwl;
    pp->lr.qos_pass = tb_qos_verdict(rules, nr, &in, 0, pp->qr) != TB_QOS_FAIL;
    nq = nr;
    for (int t = 1; t <= tiles; t++) {
        if (tb_qos_verdict(trules, ntr, &in, t, pp->qr + nq) == TB_QOS_FAIL) pp->lr.qos_pass = 0;
        for (int i = 0; i < ntr; i++)
            pp->qr[nq + i].tile = t;
        nq += ntr;
    }
    for (int i = 0; i < nr; i++) {
        int nj = pp->qr[i].not_judged;
        for (int k = nr + tix[i]; !nj && tix[i] >= 0 && k < nq; k += ntr)
            nj = pp->qr[k].not_judged;
        pp->lr.qos_not_judged += nj;
    }
    pp->n_rules = nr;
    pp->lr.n_qos = nq;
    pp->lr.qos = pp->qr;
    free(trules);
    free(tix);
    free(qin);
    free(wlin);
    free(own);
}

/* Inlet temperature readings of stage over [t0, t1) into the phase's result
 * (stored in temperature_samples beside the power samples of that stage). */
static void temp_stage(run_ctx *c, phase_parts *pp, const char *stage, uint64_t t0, uint64_t t1) {
    int k = pp->lr.n_temp_stages++;
    pp->tstage[k].stage = stage;
    pp->tstage[k].n = tb_temp_sampler_readings(c->temp_sampler, t0, t1, &pp->temps[k]);
    pp->tstage[k].readings = pp->temps[k];
    pp->lr.temp_stages = pp->tstage;
}

/* The inlet temperature over the steady window, for the result and its
 * validity, with the readings it comes from. */
static void phase_temperature(run_ctx *c, phase_parts *pp, uint64_t t0, uint64_t t1, tb_validity_input *vin) {
    tb_level_result *lr = &pp->lr;
    tb_temp_stats ts;
    lr->has_temp = vin->temp_source = c->temp_sampler != NULL;
    if (!c->temp_sampler) return;
    tb_temp_sampler_window(c->temp_sampler, t0, t1, &ts);
    lr->temp_n = vin->temp_n = ts.n;
    lr->temp_min_c = vin->temp_min_c = ts.min_c;
    lr->temp_mean_c = ts.mean_c;
    lr->temp_max_c = ts.max_c;
    temp_stage(c, pp, "steady", t0, t1);
}

/* Mean power, PPKW and the validity verdict; the rules are
 * qos/validity.c's, here the samples are counted. */
static void judge_power(run_ctx *c, phase_parts *pp, double cpu_s) {
    tb_level_result *lr = &pp->lr;
    uint64_t t0 = pp->pl->phase_start_us[pp->p], t1 = pp->pl->phase_end_us[pp->p];
    tb_validity_input vin;
    tb_validity v;
    char msg[256];
    lr->avg_watts =
        tb_coord_window_power(c, t0, t1, &pp->samples, &lr->n_samples, &lr->samples_total, &lr->samples_bad);
    lr->samples = pp->samples;
    /* each host's share; the level's avg_watts (and so PPKW) stays the sum over every meter */
    tb_coord_host_results(c, pp->samples, lr->n_samples, t0, t1, pp->tiles, pp->hosts);
    lr->n_hosts = c->n_hosts;
    lr->hosts = pp->hosts;
    lr->ppkw = lr->avg_watts > 0 ? tb_score_ppkw(lr->score, lr->avg_watts) : 0;
    power_validity_input(c, pp->samples, lr->n_samples, lr->avg_watts, (double)(t1 - t0) / 1e6, &vin);
    vin.cpu_s = cpu_s;
    vin.threads = c->lg->ops->threads(c->lg->self);
    vin.compliant = c->o->compliant;
    vin.qos_not_judged = lr->qos_not_judged;
    phase_temperature(c, pp, t0, t1, &vin);
    pp->agents = tb_coord_phase_agents(c, &vin, &pp->n_agents);
    lr->agents = pp->agents;
    lr->n_agents = pp->n_agents;
    lr->valid = tb_validity_judge(&vin, &v);
    snprintf(lr->invalid_reason, sizeof lr->invalid_reason, "%s", v.reason);
    for (int i = 0; i < v.n_warnings; i++) {
        snprintf(msg, sizeof msg, "%d tiles phase %d: %s", pp->tiles, pp->p + 1, v.warnings[i]);
        tb_coord_say(c, "warning", TB_RUN_MSG_STEP_WARNING, msg);
    }
    tb_coord_warn_estimate(c, pp->tiles, pp->p + 1, pp->samples, lr->n_samples);
    /* whole-tile levels only: a workload alone (--interference) is not the tile's load */
    if (!c->alone && lr->avg_watts > 0 && (c->min_level_w == 0 || lr->avg_watts < c->min_level_w)) {
        c->min_level_w = lr->avg_watts;
        c->min_level_tiles = pp->tiles;
    }
}

/* The level's samples outside steady state that this phase stores:
 * ramp-up and warm-up with the first phase, ramp-down with the last, by
 * level.c's timeline. The windows are half-open and meet the steady ones
 * at each edge, so each sample of the level's stages is stored once (and
 * each inlet temperature reading). A ramp-down cut short by a signal keeps
 * the samples taken until then. */
static void stage_samples(run_ctx *c, phase_parts *pp) {
    const tb_level_plan *pl = pp->pl;
    /* ramp-up's end: pl->ramp_up_us is the users' stagger, which a ranging
     * pass in ramp-up makes shorter than the stage */
    uint64_t up = pl->phase_start_us[0] - c->o->stages.warm_up_us, end = pl->phase_end_us[pl->n_phases - 1];
    const struct {
        const char *stage;
        uint64_t t0, t1;
        int here;
    } w[3] = {{"ramp-up", pl->start_us, up, pp->p == 0},
              {"warm-up", up, pl->phase_start_us[0], pp->p == 0},
              {"ramp-down", end, end + c->o->stages.ramp_down_us, pp->p == pl->n_phases - 1}};
    for (int i = 0; i < 3; i++) {
        tb_stage_samples *ss = &pp->ss[pp->lr.n_stage_samples];
        if (!w[i].here) continue;
        ss->stage = w[i].stage;
        ss->n = tb_poller_window(c->poller, w[i].t0, w[i].t1, &pp->stage_ps[i]);
        ss->samples = pp->stage_ps[i];
        pp->lr.n_stage_samples++;
        if (c->temp_sampler) temp_stage(c, pp, w[i].stage, w[i].t0, w[i].t1);
    }
    pp->lr.stage_samples = pp->ss;
}

/* Failed telemetry reads since the previous phase, as a warning event. */
static void note_telemetry_failures(run_ctx *c, const phase_parts *pp) {
    uint64_t nf;
    char msg[512]; /* room for the telemetry source (up to 255 bytes) and the counts */
    if (!c->tsampler || (nf = tb_telem_sampler_failures(c->tsampler)) <= c->telem_failures) return;
    tb_fmt_capped(msg, sizeof msg,
                  "%d tiles phase %d: %llu telemetry reads of %s failed so far (%llu new); its "
                  "figures cover the samples that succeeded",
                  pp->tiles, pp->p + 1, (unsigned long long)nf, c->telem_shown,
                  (unsigned long long)(nf - c->telem_failures));
    c->telem_failures = nf;
    tb_coord_note(c, "warning", msg);
}

int tb_coord_finish_phase(run_ctx *c, const tb_level_plan *pl, int p, tb_lg_stats *st, tb_lg_stats *all, double cpu_s,
                          char *err) {
    phase_parts pp;
    int rc;
    memset(&pp, 0, sizeof pp);
    pp.pl = pl;
    pp.p = p;
    pp.tiles = pl->tiles;
    pp.nw = c->o->def->n_workloads;
    pp.wr = xcalloc((size_t)pp.tiles * (size_t)pp.nw, sizeof *pp.wr);
    pp.opr = xcalloc((size_t)pp.tiles * (size_t)pp.nw * TB_MAX_OPS, sizeof *pp.opr);
    phase_window(c, &pp);
    score_phase(c, &pp, st, all);
    tb_coord_infra_results(c, &pp.lr, &pp.infra); /* the final score from the application score */
    judge_qos(c, &pp, st);
    judge_power(c, &pp, cpu_s);
    stage_samples(c, &pp);
    rc = tb_store_put_level(c->store, c->run_id, &pp.lr, err);
    if (c->obs->phase_done) c->obs->phase_done(c->obs->arg, &pp.lr, pp.n_rules, tb_coord_estimated(c));
    note_telemetry_failures(c, &pp);
    if (c->tsampler && c->obs->telemetry) c->obs->telemetry(c->obs->arg, &pp.lr.telemetry);
    rc = rc == 0 ? (pp.lr.qos_pass ? 1 : 0) : -1;
    phase_free(&pp);
    return rc;
}
