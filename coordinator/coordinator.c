/*
 * coordinator.c: the sweep (see coordinator.h). Data flows one way: the
 * load generator and the meter poller measure; this file turns each finished
 * phase into a tb_level_result (QoS verdict, validity, score, PPKW) and
 * hands it to the results store, then moves on.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "coordinator/coordinator.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <libpq-fe.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "loadgen/loadgen.h"
#include "powermeter/hostinfo.h"
#include "powermeter/meter.h"
#include "powermeter/node_exporter.h"
#include "powermeter/poller.h"
#include "powermeter/telemetry.h"
#include "qos/qos.h"
#include "qos/validity.h"
#include "results/report.h"
#include "results/store.h"
#include "scoring/saturation.h"
#include "scoring/score.h"
#include "sut/sut.h"
#include "common/redact.h"

/* Grace after a phase end before collecting it, so an op that ended just
 * before the edge but was still being recorded is not lost. */
#define COLLECT_GRACE_US 50000
/* Telemetry sampling interval: 1 Hz, like the meter poller. */
#define TELEM_INTERVAL_US 1000000
/* Unmeasured pause between starting the embedded SUT and measuring active idle. */
#define SUT_SETTLE_US 3000000
/* A phase whose load generator loop stalled longer than this gets a warning
 * event: ops due then started late (issue 10's target for worker loops). */
#define STALL_WARN_US 10000

typedef struct run_ctx {
    const tb_run_opts *o;
    tb_store *store;
    int64_t run_id;
    tb_meter *meters[TB_MAX_METERS];
    tb_meter_info infos[TB_MAX_METERS];
    tb_poller *poller;
    tb_telem_source *tsrc;     /* NULL: telemetry is none */
    tb_telem_sampler *tsampler;
    char telem_spec[256];      /* the effective telemetry source: "local", a URL, or "none" */
    char telem_shown[256];     /* telem_spec for messages and the results: a URL's password redacted */
    uint64_t telem_failures;   /* failed telemetry reads already reported in an event */
    tb_loadgen *lg;
    tb_sut_endpoints ep;
    int sut_started;
    char sut_dir[512];   /* the embedded SUT's run folder */
    int sut_dir_temp;    /* we made it: remove it after a clean stop */
    int is_tty;
    int levels_done, levels_total;
    int repeat;                              /* 1-based repeat of the sweep in progress */
    double idle_w;                           /* active idle, W; 0 when not measured */
    double min_level_w;                      /* lowest phase mean power so far, W; 0 none */
    int min_level_tiles;
    double reference[TB_MAX_WORKLOADS];      /* per workload: the tile file's, or a calibration's */
    char def_hash[17];                       /* digest of the workload sections (calibration key) */
    int n_calib;                             /* calibration: phases of tile 1 measured so far */
    double calib[TB_MAX_PHASES][TB_MAX_WORKLOADS]; /* calibration: throughput per phase and workload */
    uint64_t run_start_us;
} run_ctx;

static void note(run_ctx *c, const char *kind, const char *msg);

/* " (estimated)" after a wattage when any meter is a model (estimate:, or auto
 * fell back to it): README promises every output says ESTIMATED POWER. */
static const char *est_mark(const run_ctx *c) {
    for (int i = 0; i < c->o->n_meters; i++)
        if (c->infos[i].estimated) return " (estimated)";
    return "";
}

static int stopped(const run_ctx *c) { return c->o->stop && *c->o->stop; }

static const char *stage_names[] = {"ramp-up", "warm-up", "steady", "ramp-down", "active idle"};

/* Progress line, once a second on a TTY: stage, level, time left, ops/s, W. */
static void progress(run_ctx *c, int tiles, const char *stage, int phase, uint64_t stage_end_us, uint64_t *last_ops,
                     uint64_t *last_t) {
    uint64_t now = tb_now_us(), ops = 0, errs = 0;
    double rate = 0, w;
    char left[32];
    if (!c->is_tty || c->o->quiet) return;
    if (c->lg) c->lg->ops->live(c->lg->self, &ops, &errs);
    if (*last_t && now > *last_t) rate = (double)(ops - *last_ops) * 1e6 / (double)(now - *last_t);
    *last_ops = ops;
    *last_t = now;
    w = c->poller ? tb_poller_latest_watts(c->poller) : NAN;
    tb_format_duration(stage_end_us > now ? (stage_end_us - now) / 1000000 * 1000000 : 0, left, sizeof left);
    if (phase > 0)
        printf("\r\033[K[level %d/%d: %d tiles] %s %d  %s left  %.0f ops/s  %llu errors  %.1f W%s", c->levels_done + 1,
               c->levels_total, tiles, stage, phase, left, rate, (unsigned long long)errs, w, est_mark(c));
    else
        printf("\r\033[K[level %d/%d: %d tiles] %s  %s left  %.0f ops/s  %llu errors  %.1f W%s", c->levels_done + 1,
               c->levels_total, tiles, stage, left, rate, (unsigned long long)errs, w, est_mark(c));
    fflush(stdout);
}

/* Sleeps until the monotonic deadline, showing progress; returns -1 early
 * when the run was interrupted. */
static int wait_until(run_ctx *c, uint64_t deadline_us, int tiles, const char *stage, int phase) {
    uint64_t last_ops = 0, last_t = 0;
    for (;;) {
        uint64_t now = tb_now_us();
        struct timespec ts;
        uint64_t step;
        if (stopped(c)) return -1;
        if (now >= deadline_us) return 0;
        progress(c, tiles, stage, phase, deadline_us, &last_ops, &last_t);
        step = deadline_us - now;
        if (step > 200000) step = 200000;
        ts.tv_sec = (time_t)(step / 1000000);
        ts.tv_nsec = (long)(step % 1000000) * 1000;
        nanosleep(&ts, NULL);
    }
}

static void end_progress_line(run_ctx *c) {
    if (c->is_tty && !c->o->quiet) {
        printf("\r\033[K");
        fflush(stdout);
    }
}

/* Mean power over [t0,t1): per meter by the trapezoid rule, summed over
 * meters (each is one SUT feed). Counts samples and bad samples. -1 when any
 * meter has no valid sample. */
static double window_power(run_ctx *c, uint64_t t0, uint64_t t1, tb_poll_sample **out_samples, int *out_n,
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
    for (int m = 0; m < c->o->n_meters; m++) {
        int k = 0;
        double w;
        for (int i = 0; i < n; i++) {
            if (ps[i].meter != m) continue;
            pts[k].t_us = ps[i].s.mono_us;
            pts[k].watts = ps[i].s.watts;
            pts[k].valid = !(ps[i].s.flags & TB_SAMPLE_BAD) && isfinite(ps[i].s.watts);
            k++;
        }
        w = tb_score_mean_power_w(pts, k, t0, t1);
        if (w < 0) missing_meter = 1;
        else sum += w;
    }
    free(pts);
    *out_samples = ps;
    *out_n = n;
    return missing_meter ? -1 : sum;
}

/* The power part of a window's validity input (qos/validity.h): its
 * samples counted, each bad one in one kind (the most specific first), the
 * largest uncertainty and the auto-ranging ones. avg_w < 0: some meter gave
 * no valid sample (window_power). */
static void power_validity_input(const run_ctx *c, const tb_poll_sample *ps, int n, double avg_w, double window_s,
                                 tb_validity_input *vin) {
    memset(vin, 0, sizeof *vin);
    vin->samples_total = (uint64_t)n;
    vin->no_valid_meter = avg_w < 0;
    vin->meters = c->o->n_meters;
    vin->steady_s = window_s;
    for (int i = 0; i < n; i++) {
        unsigned f = ps[i].s.flags;
        if (isfinite(ps[i].s.uncertainty_pct) && ps[i].s.uncertainty_pct > vin->max_uncertainty_pct)
            vin->max_uncertainty_pct = ps[i].s.uncertainty_pct;
        if (f & TB_SAMPLE_AUTORANGE) vin->autorange++;
        if (f & TB_SAMPLE_IMPLAUSIBLE) vin->implausible++;
        else if (f & TB_SAMPLE_OVERRANGE) vin->overrange++;
        else if (f & TB_SAMPLE_MISSING) vin->missing++;
        else if (f & TB_SAMPLE_BAD) vin->invalid++;
    }
}

/* Active idle is judged by a level's power rules (its load generator is
 * idle, so the CPU rule does not apply): a warning event and console line
 * when they fail, since the idle figure feeds overall efficiency. */
static void judge_idle(run_ctx *c, const tb_poll_sample *ps, int n, double w, uint64_t idle_us) {
    tb_validity_input vin;
    tb_validity v;
    char msg[700];
    power_validity_input(c, ps, n, w, (double)idle_us / 1e6, &vin);
    if (tb_validity_judge(&vin, &v)) return;
    snprintf(msg, sizeof msg, "active idle: %s; its mean power, and the overall efficiency that uses it, rest on the rest",
             v.reason);
    note(c, "warning", msg);
    if (!c->o->quiet) printf("  warning: %s\n", msg);
}

/* Telemetry samples that lie inside [t0, t1): each covers about one
 * second, so one straddling an edge (part ramp-up, part steady) is left out.
 * The end may be up to the collect grace after t1. Caller frees. */
static int telem_window(run_ctx *c, uint64_t t0, uint64_t t1, tb_telem_sample **out) {
    tb_telem_sample *s = NULL;
    int n = tb_telem_sampler_window(c->tsampler, t0, t1 + COLLECT_GRACE_US, &s), k = 0;
    for (int i = 0; i < n; i++)
        if (s[i].mono_us - s[i].interval_us + COLLECT_GRACE_US >= t0 && s[i].mono_us <= t1 + COLLECT_GRACE_US)
            s[k++] = s[i];
    *out = s;
    return k;
}

/* "CPU 45.2% (user 30.1, sys 12.0, iowait 0.3), 2400 MHz (cpufreq), C0 45%, C1 54%"; n/a when not available. */
static void telem_line(const tb_telemetry *t, char *buf, size_t len) {
    size_t l = 0;
    if (isfinite(t->cpu_util_pct))
        l += (size_t)snprintf(buf + l, len - l, "CPU %.1f%% (user %.1f, sys %.1f, iowait %.1f)", t->cpu_util_pct,
                              t->mode_pct[TB_CPU_USER], t->mode_pct[TB_CPU_SYSTEM], t->mode_pct[TB_CPU_IOWAIT]);
    else l += (size_t)snprintf(buf + l, len - l, "CPU n/a");
    if (l < len && isfinite(t->avg_freq_mhz))
        l += (size_t)snprintf(buf + l, len - l, ", %.0f MHz (%s)", t->avg_freq_mhz, tb_telem_freq_source_name(t->freq_src));
    else if (l < len) l += (size_t)snprintf(buf + l, len - l, ", frequency n/a");
    if (l < len && t->n_cstates == 0) l += (size_t)snprintf(buf + l, len - l, ", C-states n/a");
    for (int k = 0; k < t->n_cstates && l < len; k++)
        l += (size_t)snprintf(buf + l, len - l, ", %s %.1f%%", t->cstate_name[k], t->cstate_pct[k]);
    if (l < len) snprintf(buf + l, len - l, " [%d samples]", t->n_samples);
}

static double per_unit(const char *unit) { return strcmp(unit, "ops/s") == 0 ? 1.0 : 60.0; }

/* Turns one phase's statistics into a stored result. */
static int finish_phase(run_ctx *c, const tb_level_plan *pl, int p, tb_lg_stats *st, tb_lg_stats *all,
                        double cpu_s, char *err) {
    const tb_tiledef *def = c->o->def;
    const tb_loadgen *lg = c->lg;
    tb_level_result lr;
    uint64_t t0 = pl->phase_start_us[p], t1 = pl->phase_end_us[p];
    double steady_s = (double)(t1 - t0) / 1e6;
    int nw = def->n_workloads, tiles = pl->tiles, rc;
    tb_workload_result *wr = xcalloc((size_t)tiles * (size_t)nw, sizeof *wr);
    tb_op_result *opr = xcalloc((size_t)tiles * (size_t)nw * TB_MAX_OPS, sizeof *opr);
    double *tile_scores = xcalloc((size_t)tiles, sizeof *tile_scores);
    double norm[TB_MAX_WORKLOADS];
    tb_qos_input *qin = xcalloc((size_t)tiles * (size_t)nw * TB_MAX_OPS, sizeof *qin);
    tb_qos_wl_input *wlin = xcalloc((size_t)tiles * (size_t)nw, sizeof *wlin);
    tb_qos_result *qr = xcalloc((size_t)def->n_rules * ((size_t)tiles + 1) + 1, sizeof *qr);
    tb_poll_sample *samples = NULL;
    tb_telem_sample *telem = NULL;
    int n_samples = 0, nq = 0;
    char msg[256];

    memset(&lr, 0, sizeof lr);
    lr.tiles = tiles;
    lr.phase = p + 1;
    lr.repeat = c->repeat;
    lr.steady_us = t1 - t0;
    lr.steady_start_mono_us = t0;
    lr.steady_end_mono_us = t1;
    lr.steady_end_wall_us = tb_wall_us() - (int64_t)(tb_now_us() - t1);
    lr.steady_start_wall_us = lr.steady_end_wall_us - (int64_t)(t1 - t0);
    tb_telemetry_clear(&lr.telemetry);
    if (c->tsampler) {
        lr.n_telem_samples = telem_window(c, t0, t1, &telem);
        lr.telem_samples = telem;
        tb_telem_aggregate(telem, lr.n_telem_samples, &lr.telemetry);
    }

    /* Throughput, normalization and tile scores (VMmark). */
    for (int t = 1; t <= tiles; t++) {
        for (int w = 0; w < nw; w++) {
            const tb_workload_vt *vt = lg->vt[w];
            tb_workload_result *r = &wr[(t - 1) * nw + w];
            snprintf(r->name, sizeof r->name, "%s", def->workloads[w].name);
            snprintf(r->unit, sizeof r->unit, "%s", def->workloads[w].unit);
            r->tile = t;
            r->reference = c->reference[w];
            r->n_ops = vt->n_ops;
            r->op_results = &opr[((t - 1) * nw + w) * TB_MAX_OPS];
            r->ops = 0;
            r->errors = 0;
            for (int k = 0; k < vt->n_ops; k++) {
                tb_opstat *os = tb_lg_cell(st, t, w, k);
                tb_op_result *o = &opr[((t - 1) * nw + w) * TB_MAX_OPS + k];
                snprintf(o->name, sizeof o->name, "%s", vt->op_names[k]);
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
                o->metric = (vt->metric_mask & (1u << k)) != 0;
                if (o->metric) r->ops += os->count;
                r->errors += os->errors;
            }
            r->throughput = tb_score_rate_per_s(r->ops, t1 - t0) * per_unit(r->unit);
            r->normalized = tb_score_normalize(r->throughput, r->reference);
            norm[w] = r->normalized;
        }
        tile_scores[t - 1] = tb_score_geomean(norm, nw);
        if (c->o->calibrate && t == 1 && c->n_calib < TB_MAX_PHASES) {
            for (int w = 0; w < nw; w++) c->calib[c->n_calib][w] = wr[w].throughput;
            c->n_calib++;
        }
    }
    lr.score = tb_score_sum(tile_scores, tiles);

    /* QoS: the level's verdict over all tiles merged, and each tile's own
     * (VMmark: every tile must meet QoS), from one array of per-tile inputs. */
    {
        int nin = 0, nwl = 0, nr = def->n_rules;
        tb_qos_inputs in;
        for (int t = 1; t <= tiles; t++) {
            for (int w = 0; w < nw; w++) {
                const tb_workload_vt *vt = lg->vt[w];
                tb_workload_result *r = &wr[(t - 1) * nw + w];
                for (int k = 0; k < vt->n_ops; k++) {
                    tb_opstat *os = tb_lg_cell(st, t, w, k);
                    tb_qos_input *q = &qin[nin++];
                    double target = vt->mix_target_pct ? vt->mix_target_pct(lg->cfg[w], k) : -1;
                    q->workload = def->workloads[w].name;
                    q->op = vt->op_names[k];
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
        }
        in.ops = qin;
        in.n_ops = nin;
        in.workloads = wlin;
        in.n_workloads = nwl;
        /* A rule not judged (too few ops) neither passes nor fails: the level
         * passes QoS when no judged rule failed, and counts its rules that
         * went unjudged in its own verdict or a tile's. */
        lr.qos_pass = tb_qos_verdict(def->rules, nr, &in, 0, qr) != TB_QOS_FAIL;
        nq = nr;
        for (int t = 1; t <= tiles; t++) {
            if (tb_qos_verdict(def->rules, nr, &in, t, qr + nq) == TB_QOS_FAIL) lr.qos_pass = 0;
            for (int i = 0; i < nr; i++) qr[nq + i].tile = t;
            nq += nr;
        }
        for (int i = 0; i < nr; i++)
            for (int k = i; k < nq; k += nr)
                if (qr[k].not_judged) {
                    lr.qos_not_judged++;
                    break;
                }
    }
    lr.n_qos = nq;
    lr.qos = qr;

    /* Power and validity. */
    lr.avg_watts = window_power(c, t0, t1, &samples, &n_samples, &lr.samples_total, &lr.samples_bad);
    lr.samples = samples;
    lr.n_samples = n_samples;
    lr.ppkw = lr.avg_watts > 0 ? tb_score_ppkw(lr.score, lr.avg_watts) : 0;
    {
        /* the rules are qos/validity.c's; here the samples are counted */
        tb_validity_input vin;
        tb_validity v;
        power_validity_input(c, samples, n_samples, lr.avg_watts, steady_s, &vin);
        vin.cpu_s = cpu_s;
        vin.threads = lg->ops->threads(lg->self);
        vin.compliant = c->o->preset && strcmp(c->o->preset, "compliant") == 0;
        vin.qos_not_judged = lr.qos_not_judged;
        lr.valid = tb_validity_judge(&vin, &v);
        snprintf(lr.invalid_reason, sizeof lr.invalid_reason, "%s", v.reason);
        for (int i = 0; i < v.n_warnings; i++) {
            snprintf(msg, sizeof msg, "%d tiles phase %d: %s", tiles, p + 1, v.warnings[i]);
            note(c, "warning", msg);
            if (!c->o->quiet) printf("  warning: %s\n", msg);
        }
    }
    lr.n_workloads = tiles * nw;
    lr.workloads = wr;

    if (lr.avg_watts > 0 && (c->min_level_w == 0 || lr.avg_watts < c->min_level_w)) {
        c->min_level_w = lr.avg_watts;
        c->min_level_tiles = tiles;
    }
    rc = tb_store_put_level(c->store, c->run_id, &lr, err);
    if (!c->o->quiet) {
        end_progress_line(c);
        char verdict[96];
        if (lr.qos_not_judged > 0)
            snprintf(verdict, sizeof verdict, "%s (%d rule%s not judged: too few ops)", lr.qos_pass ? "PASS" : "FAIL",
                     lr.qos_not_judged, lr.qos_not_judged == 1 ? "" : "s");
        else snprintf(verdict, sizeof verdict, "%s", lr.qos_pass ? "PASS" : "FAIL");
        printf("level %d tiles phase %d: score %.3f  %.1f W%s  PPKW %.2f  QoS %s  %s%s\n", tiles, p + 1, lr.score,
               lr.avg_watts, est_mark(c), lr.ppkw, verdict, lr.valid ? "valid" : "INVALID: ", lr.valid ? "" : lr.invalid_reason);
        for (int i = 0; i < nq; i++) {
            const char *what = qr[i].not_judged ? "not judged" : "fail";
            if (qr[i].pass) continue;
            /* per tile, an unjudged rule is one line for all tiles below */
            if (qr[i].not_judged && qr[i].tile) continue;
            if (qr[i].tile) printf("  QoS %s, tile %d: %s: %s\n", what, qr[i].tile, qr[i].rule, qr[i].reason);
            else printf("  QoS %s: %s: %s\n", what, qr[i].rule, qr[i].reason);
        }
        /* a rule not judged over all tiles merged has even fewer ops per
         * tile: only the rules judged at the level but not in some tile */
        for (int i = 0; i < def->n_rules; i++) {
            int n_tiles = 0;
            if (qr[i].not_judged) continue;
            for (int k = def->n_rules + i; k < nq; k += def->n_rules) n_tiles += qr[k].not_judged;
            if (n_tiles > 0)
                printf("  QoS not judged in %d of %d tile verdicts: %s\n", n_tiles, tiles, qr[i].rule);
        }
        fflush(stdout);
    }

    if (c->tsampler && tb_telem_sampler_failures(c->tsampler) > c->telem_failures) {
        uint64_t nf = tb_telem_sampler_failures(c->tsampler);
        snprintf(msg, sizeof msg, "%d tiles phase %d: %llu telemetry reads of %s failed so far (%llu new); its "
                                  "figures cover the samples that succeeded",
                 tiles, p + 1, (unsigned long long)nf, c->telem_shown, (unsigned long long)(nf - c->telem_failures));
        c->telem_failures = nf;
        note(c, "warning", msg);
    }
    if (!c->o->quiet && c->tsampler) {
        telem_line(&lr.telemetry, msg, sizeof msg);
        printf("  telemetry: %s\n", msg);
        fflush(stdout);
    }
    free(telem);
    free(qin);
    free(wlin);
    free(qr);
    free(samples);
    free(tile_scores);
    free(wr);
    free(opr);
    return rc == 0 ? (lr.qos_pass ? 1 : 0) : -1;
}

/* Runs one load level. Returns 1 when every phase passed QoS, 0 when one
 * failed, -1 on error (err set), -2 when interrupted. */
static int run_level(run_ctx *c, int tiles, char *err) {
    /* c->repeat says which repeat of the sweep this level belongs to */
    const tb_stage_def *sd = &c->o->stages;
    tb_level_plan pl;
    int all_pass = 1;
    uint64_t t;
    memset(&pl, 0, sizeof pl);
    pl.tiles = tiles;
    pl.start_us = tb_now_us() + 200000; /* time to create the users before the first is due */
    pl.ramp_up_us = sd->ramp_up_us;
    pl.n_phases = sd->phases;
    t = pl.start_us + sd->ramp_up_us + sd->warm_up_us;
    for (int p = 0; p < sd->phases; p++) {
        pl.phase_start_us[p] = t;
        pl.phase_end_us[p] = t + sd->steady_us;
        t += sd->steady_us;
    }
    if (!c->o->quiet && !c->is_tty) {
        printf("level %d tiles: ramp-up %.0fs, warm-up %.0fs, %d x %.0fs steady, ramp-down %.0fs\n", tiles,
               (double)sd->ramp_up_us / 1e6, (double)sd->warm_up_us / 1e6, sd->phases, (double)sd->steady_us / 1e6,
               (double)sd->ramp_down_us / 1e6);
        fflush(stdout);
    }
    if (c->lg->ops->start_level(c->lg->self, &pl, err) != 0) return -1;
    if (wait_until(c, pl.start_us + sd->ramp_up_us, tiles, stage_names[0], 0) != 0 ||
        wait_until(c, pl.phase_start_us[0], tiles, stage_names[1], 0) != 0)
        goto interrupted;
    for (int p = 0; p < sd->phases; p++) {
        tb_lg_stats *st = NULL, *all = NULL;
        double cpu0 = c->lg->ops->cpu_seconds(c->lg->self), cpu1;
        tb_lg_stalls sl;
        int r, cut = 0;
        c->lg->ops->stalls(c->lg->self, &sl); /* start the phase's stall record afresh */
        if (p == 0) {
            /* the connect storm of ramp-up shows here, apart from steady state */
            char msg[256];
            snprintf(msg, sizeof msg,
                     "%d tiles ramp-up and warm-up: load generator loop stall max %.1f ms, p99 %.1f ms "
                     "(own work: max %.1f ms, p99 %.1f ms)",
                     tiles, (double)sl.max_us / 1000.0, (double)sl.p99_us / 1000.0, (double)sl.own_max_us / 1000.0,
                     (double)sl.own_p99_us / 1000.0);
            note(c, "info", msg);
        }
        if (wait_until(c, pl.phase_end_us[p] + COLLECT_GRACE_US, tiles, stage_names[2], p + 1) != 0)
            goto interrupted;
        cpu1 = c->lg->ops->cpu_seconds(c->lg->self);
        c->lg->ops->stalls(c->lg->self, &sl);
        if (c->lg->ops->collect_phase(c->lg->self, p, &st, err) != 0) return -1;
        if (p == sd->phases - 1) {
            /* The last phase is stored with the whole level's op counts, after
             * ramp-down. A signal during ramp-down cuts it short, but the
             * phase itself has finished: it is stored before the run ends as
             * interrupted (the counts over every stage then end at the signal). */
            if (wait_until(c, pl.phase_end_us[p] + sd->ramp_down_us, tiles, stage_names[3], 0) != 0) {
                cut = 1;
                note(c, "info", "interrupted in ramp-down: the finished last phase is stored, and the level's counts "
                                "over every stage end at the signal");
            }
            if (c->lg->ops->stop_level(c->lg->self, &all, err) != 0) {
                tb_lg_stats_free(st);
                return -1;
            }
        }
        r = finish_phase(c, &pl, p, st, all, cpu1 - cpu0, err);
        if (r >= 0) {
            /* the load generator's own health over the phase, for the reader to judge the numbers */
            char msg[512], wait[32];
            uint64_t j50, j99, jmax;
            if (isnan(sl.cpu_wait_pct)) snprintf(wait, sizeof wait, "n/a");
            else snprintf(wait, sizeof wait, "%.1f%%", sl.cpu_wait_pct);
            tb_poller_jitter(c->poller, pl.phase_start_us[p], &j50, &j99, &jmax);
            snprintf(msg, sizeof msg,
                     "%d tiles phase %d: load generator loop stall max %.1f ms, p99 %.1f ms (own work: "
                     "max %.1f ms, p99 %.1f ms; workers waited for a CPU %s of the time); CPU %.0f%% of %d "
                     "threads; meter poller lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                     tiles, p + 1, (double)sl.max_us / 1000.0, (double)sl.p99_us / 1000.0,
                     (double)sl.own_max_us / 1000.0, (double)sl.own_p99_us / 1000.0, wait,
                     100.0 * (cpu1 - cpu0) / ((double)sd->steady_us / 1e6 * c->lg->ops->threads(c->lg->self)),
                     c->lg->ops->threads(c->lg->self), (double)j50 / 1000.0, (double)j99 / 1000.0,
                     (double)jmax / 1000.0);
            note(c, "info", msg);
            if (!c->o->quiet) printf("  %s\n", msg + strcspn(msg, ":") + 2);
            if (sl.max_us > STALL_WARN_US) {
                /* not invalid: intended-start timing puts the delay into the
                 * ops' latency, but the reader should know where it came from */
                snprintf(msg, sizeof msg,
                         "%d tiles phase %d: load generator loop stalled up to %.1f ms (over %d ms; own work %.1f "
                         "ms, workers waited for a CPU %s of the time): ops due then started late, and their "
                         "latency includes it; on a machine it shares with the SUT, give the load generator "
                         "cores of its own (taskset)",
                         tiles, p + 1, (double)sl.max_us / 1000.0, STALL_WARN_US / 1000,
                         (double)sl.own_max_us / 1000.0, wait);
                note(c, "warning", msg);
                if (!c->o->quiet) printf("  warning: %s\n", msg + strcspn(msg, ":") + 2);
            }
        }
        tb_lg_stats_free(st);
        tb_lg_stats_free(all);
        if (r < 0) return -1;
        if (r == 0) all_pass = 0;
        if (cut) return -2; /* the level is stopped already */
    }
    return all_pass;
interrupted:
    c->lg->ops->stop_level(c->lg->self, NULL, err);
    return -2;
}

/* Whether host names a server on this machine: loopback, a Unix socket
 * path, or unset (the endpoint is not used). */
static int is_local_host(const char *host) {
    if (!host || !*host || host[0] == '/') return 1;
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strcmp(host, "[::1]") == 0;
}

/* Host part of "http://HOST:PORT/..." (IPv6 in brackets kept). */
static int url_is_local(const char *url) {
    char host[160];
    const char *p = url, *e;
    if (!url || !*url) return 1;
    if (strncmp(p, "http://", 7) == 0) p += 7;
    e = *p == '[' ? strchr(p, ']') : NULL;
    e = e ? e + 1 : p + strcspn(p, ":/");
    snprintf(host, sizeof host, "%.*s", (int)(e - p), p);
    return is_local_host(host);
}

/* Whether libpq conninfo (key=value or URI) points at this machine; with no
 * host libpq uses the local Unix socket. */
static int conninfo_is_local(const char *conninfo) {
    PQconninfoOption *opts, *o;
    int local = 1;
    if (!conninfo || !*conninfo) return 1;
    if (!(opts = PQconninfoParse(conninfo, NULL))) return 0;
    for (o = opts; o->keyword; o++)
        if ((strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0) && o->val && *o->val) {
            char *list = xstrdup(o->val), *save = NULL;
            for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save)) local &= is_local_host(h);
            free(list);
        }
    PQconninfoFree(opts);
    return local;
}

/* Whether every endpoint of an external SUT is on this machine. */
static int sut_is_local(const tb_sut_endpoints *ep) {
    int local = conninfo_is_local(ep->pg_conninfo) && is_local_host(ep->redis_host) && is_local_host(ep->imap_host) &&
                is_local_host(ep->lmtp_host) && is_local_host(ep->smtp_host) && url_is_local(ep->web_url);
    for (int i = 0; i < ep->n_pg_tile; i++) local &= conninfo_is_local(ep->pg_tile[i].conninfo);
    for (int i = 0; i < ep->n_web_tile; i++) local &= url_is_local(ep->web_tile[i].url);
    return local;
}

/*
 * The telemetry source of the run: --telemetry, else [sut] telemetry, else
 * "local" when the SUT runs on this machine (embedded, or every endpoint on
 * loopback), else "none": sampling this machine would describe the load
 * generator, not the SUT. *why says so for the run's events ("" otherwise).
 */
static const char *telemetry_choice(const tb_run_opts *o, char *why, size_t len) {
    why[0] = '\0';
    if (o->telemetry && *o->telemetry) return o->telemetry;
    if (o->def->telemetry[0]) return o->def->telemetry;
    if (!o->def->has_sut || sut_is_local(&o->def->sut)) return "local";
    snprintf(why, len, "telemetry: none (the SUT's endpoints are not on this machine, so local figures would describe "
                       "the load generator); set [sut] telemetry = http://SUT:9100/metrics or run --telemetry URL");
    return "none";
}

/*
 * The run's host object: the SUT host's configuration (hostinfo.h) from the
 * telemetry source: this machine for "local" and "none", the node_exporter
 * otherwise (then this machine, which only generates load, goes under
 * "loadgen_host"). -1 with err when the node_exporter cannot be read.
 */
static json_t *host_info(run_ctx *c, char *err) {
    tb_hostinfo h;
    json_t *j;
    if (c->tsrc && strcmp(c->telem_spec, "local") != 0) {
        char *body = NULL;
        size_t len = 0;
        char e[TB_ERR_LEN];
        tb_hostinfo local;
        if (tb_node_exporter_fetch(c->telem_spec, 5000, &body, &len, e) != 0) {
            tb_seterr(err, "telemetry: %s", e);
            return NULL;
        }
        tb_hostinfo_clear(&h, c->telem_shown);
        if (tb_node_exporter_hostinfo(body, len, &h, e) != 0) {
            tb_seterr(err, "telemetry %s: not Prometheus text: %s", c->telem_shown, e);
            free(body);
            return NULL;
        }
        free(body);
        j = tb_hostinfo_json(&h);
        tb_hostinfo_read_local("/", &local);
        json_object_set_new(j, "loadgen_host", tb_hostinfo_json(&local));
    } else {
        tb_hostinfo_read_local("/", &h);
        j = tb_hostinfo_json(&h);
    }
    json_object_set_new(j, "telemetry", json_string(c->telem_shown));
    return j;
}

static json_t *settings(const tb_run_opts *o, const tb_sut_endpoints *ep, int embedded, json_t *refs) {
    json_t *s = json_object();
    char buf[32];
    json_object_set_new(s, "reference_source", refs);
    json_object_set_new(s, "calibrate", json_boolean(o->calibrate));
    json_object_set_new(s, "tile_file", json_string(o->def->path));
    json_object_set_new(s, "tile_name", json_string(o->def->name));
    json_object_set_new(s, "tiles", json_string(o->tile_spec));
    json_object_set_new(s, "preset", json_string(o->preset));
    tb_format_duration(o->stages.ramp_up_us, buf, sizeof buf);
    json_object_set_new(s, "ramp_up", json_string(buf));
    tb_format_duration(o->stages.warm_up_us, buf, sizeof buf);
    json_object_set_new(s, "warm_up", json_string(buf));
    tb_format_duration(o->stages.steady_us, buf, sizeof buf);
    json_object_set_new(s, "steady", json_string(buf));
    json_object_set_new(s, "phases", json_integer(o->stages.phases));
    tb_format_duration(o->stages.ramp_down_us, buf, sizeof buf);
    json_object_set_new(s, "ramp_down", json_string(buf));
    tb_format_duration(o->stages.idle_us, buf, sizeof buf);
    json_object_set_new(s, "idle", json_string(buf));
    json_object_set_new(s, "repeat", json_integer(o->repeat));
    json_object_set_new(s, "loadgen_threads", json_integer(o->threads));
    json_object_set_new(s, "sut", json_string(embedded ? "embedded" : "external"));
    json_object_set_new(s, "intended_start_timing", json_true());
    (void)ep;
    return s;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void cleanup(run_ctx *c) {
    char e[TB_ERR_LEN];
    tb_loadgen_close(c->lg);
    c->lg = NULL;
    tb_endpoints_free(&c->ep); /* the load generator was the last to read it */
    tb_poller_stop(c->poller);
    c->poller = NULL;
    tb_telem_sampler_stop(c->tsampler);
    c->tsampler = NULL;
    tb_telem_source_close(c->tsrc);
    c->tsrc = NULL;
    for (int i = 0; i < c->o->n_meters; i++) tb_meter_close(c->meters[i]);
    if (c->sut_started) {
        if (tb_sut_down(c->sut_dir, e) != 0) {
            tb_log(TB_LOG_WARN, "sut down: %s (logs kept in %s)", e, c->sut_dir);
        } else if (c->sut_dir_temp) {
            if (nftw(c->sut_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
                tb_log(TB_LOG_WARN, "remove %s: %s", c->sut_dir, strerror(errno));
        }
        c->sut_started = 0;
    }
    tb_store_close(c->store);
    c->store = NULL;
}

static void note(run_ctx *c, const char *kind, const char *msg) {
    char e[TB_ERR_LEN];
    if (c->store && c->run_id > 0 && tb_store_event(c->store, c->run_id, kind, msg, e) != 0)
        tb_log(TB_LOG_WARN, "%s", e); /* e starts with "store event: " */
}

/* Each user holds up to its workload's sockets_per_user connections (mail:
 * IMAP and SMTP/LMTP, 2; the others 1): refuse a sweep that cannot get its
 * sockets, after raising the soft limit as far as the hard one allows,
 * instead of failing every connect. */
static int check_fd_limit(const tb_tiledef *def, int max_tiles, char *err) {
    struct rlimit rl;
    unsigned long long users = 0, need = 0;
    for (int w = 0; w < def->n_workloads; w++) {
        const tb_workload_vt *vt = tb_workload_find(def->workloads[w].kind);
        int per = vt && vt->sockets_per_user > 0 ? vt->sockets_per_user : 2;
        users += (unsigned long long)def->workloads[w].users;
        need += (unsigned long long)per * (unsigned long long)def->workloads[w].users;
    }
    users *= (unsigned long long)max_tiles;
    need = need * (unsigned long long)max_tiles + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        snprintf(err, TB_ERR_LEN,
                 "--tiles: %llu users at %d tiles need about %llu open files, and the limit is %llu (raise it with ulimit -n, "
                 "or run fewer tiles or users)",
                 users, max_tiles, need, (unsigned long long)rl.rlim_cur);
        return -1;
    }
    return 0;
}

int tb_coordinator_run(const tb_run_opts *o, int64_t *run_id, char *err) {
    run_ctx c;
    tb_run_info ri;
    json_t *hj, *sj;
    char *host_text, *set_text, e[TB_ERR_LEN], telem_note[TB_ERR_LEN] = "";
    int max_tiles = 0, saturation = -1, rc = TB_EXIT_OK, r;
    const char *status = TB_RUN_COMPLETE;

    memset(&c, 0, sizeof c);
    c.o = o;
    c.run_id = -1;
    *run_id = -1;
    c.is_tty = isatty(STDOUT_FILENO);
    for (int i = 0; i < o->levels.n; i++)
        if (o->levels.tiles[i] > max_tiles) max_tiles = o->levels.tiles[i];
    c.levels_total = o->levels.n * o->repeat;

    /* Open files (for `run` and every `campaign` configuration alike), then
     * meters: a bad URI is a configuration error, found before anything runs. */
    if (check_fd_limit(o->def, max_tiles, err) != 0) {
        cleanup(&c);
        return TB_EXIT_USAGE;
    }
    for (int i = 0; i < o->n_meters; i++) {
        if ((r = tb_meter_open(o->meter_uris[i], &c.meters[i], err)) != 0) {
            /* a meter that does not answer aborts (3); a bad URI is a usage error (2) */
            cleanup(&c);
            return r == TB_METER_EUNREACH ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
        }
        c.infos[i] = *tb_meter_get_info(c.meters[i]); /* the meter itself warns when it is an estimate */
    }
    {
        /* Telemetry: a bad source is a configuration error, found before anything runs */
        char why[TB_ERR_LEN];
        snprintf(c.telem_spec, sizeof c.telem_spec, "%s", telemetry_choice(o, why, sizeof why));
        tb_redact_uri(c.telem_spec, c.telem_shown, sizeof c.telem_shown);
        if (strcmp(c.telem_spec, "none") != 0 && tb_telem_source_open(c.telem_spec, &c.tsrc, err) != 0) {
            cleanup(&c);
            return TB_EXIT_USAGE;
        }
        if (*why) {
            tb_log(TB_LOG_WARN, "%s", why);
            snprintf(telem_note, sizeof telem_note, "%s", why);
        }
    }
    if (tb_store_open(o->db_path, &c.store, err) != 0) {
        cleanup(&c);
        return TB_EXIT_USAGE;
    }

    /* References: the tile file's, unless a calibration of this very tile
     * definition exists (and this run is not itself a calibration). */
    tb_tiledef_workload_hash(o->def, c.def_hash);
    {
        json_t *refs = json_object();
        for (int w = 0; w < o->def->n_workloads; w++) {
            const tb_workload_def *wd = &o->def->workloads[w];
            double ref;
            int64_t cal_run;
            char at[32], src[128];
            c.reference[w] = wd->reference;
            snprintf(src, sizeof src, "tile file: %g %s", wd->reference, wd->unit);
            r = o->calibrate ? 1
                             : tb_store_get_calibration(c.store, o->def->name, c.def_hash, wd->name, &ref, &cal_run, at, e);
            if (r < 0) tb_log(TB_LOG_WARN, "%s (using the tile file's reference)", e);
            if (r == 0) {
                c.reference[w] = ref;
                snprintf(src, sizeof src, "calibration run %lld (%s): %.4g %s", (long long)cal_run, at, ref, wd->unit);
                if (!o->quiet) printf("%s: reference from %s\n", wd->name, src);
            }
            json_object_set_new(refs, wd->name, json_string(src));
        }
        hj = host_info(&c, err);
        if (!hj) {
            /* the SUT host's node_exporter cannot be read: nothing measured, no run stored */
            json_decref(refs);
            cleanup(&c);
            return TB_EXIT_ABORTED;
        }
        sj = settings(o, &o->def->sut, !o->def->has_sut, refs);
        json_object_set_new(sj, "telemetry", json_string(c.telem_shown));
    }
    host_text = json_dumps(hj, JSON_COMPACT);
    set_text = json_dumps(sj, JSON_COMPACT);
    json_decref(hj);
    json_decref(sj);
    memset(&ri, 0, sizeof ri);
    ri.label = o->label ? o->label : "";
    ri.tile_name = o->def->name;
    ri.tile_spec = o->tile_spec;
    ri.config_text = o->def->text ? o->def->text : "";
    ri.settings_json = set_text;
    ri.host_json = host_text;
    ri.started_wall_us = tb_wall_us();
    ri.n_meters = o->n_meters;
    ri.meters = c.infos;
    ri.campaign_id = o->campaign_id;
    ri.campaign_config = o->campaign_config;
    r = tb_store_begin_run(c.store, &ri, &c.run_id, err);
    free(host_text);
    free(set_text);
    if (r != 0) {
        cleanup(&c);
        return TB_EXIT_USAGE;
    }
    *run_id = c.run_id;
    if (!o->quiet) printf("run %lld: %s, tiles %s, results in %s\n", (long long)c.run_id, o->def->name, o->tile_spec, o->db_path);
    if (*telem_note) note(&c, "info", telem_note);

    /* The SUT: the config's endpoints, or the embedded one started here. */
    if (o->def->has_sut) {
        tb_endpoints_copy(&c.ep, &o->def->sut);
    } else {
        tb_sut_options so = {.tiles = max_tiles};
        /* The reference web app's data is sized for the tile's web users
         * (100 persons each, Olio); the first workload of kind web decides. */
        for (int w = 0; w < o->def->n_workloads; w++)
            if (strcmp(o->def->workloads[w].kind, "web") == 0 && o->def->workloads[w].users > 0) {
                so.web_users = o->def->workloads[w].users;
                break;
            }
        if (o->sut_dir) {
            snprintf(c.sut_dir, sizeof c.sut_dir, "%s", o->sut_dir);
        } else {
            const char *tmp = getenv("TMPDIR");
            snprintf(c.sut_dir, sizeof c.sut_dir, "%s/tilebench-sut.XXXXXX", tmp && *tmp ? tmp : "/tmp");
            if (!mkdtemp(c.sut_dir)) {
                tb_seterr(err, "temporary SUT folder %s: %s", c.sut_dir, strerror(errno));
                note(&c, "error", err);
                if (tb_store_finish_run(c.store, c.run_id, TB_RUN_ABORTED, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
                cleanup(&c);
                return TB_EXIT_ABORTED;
            }
            chmod(c.sut_dir, 0755); /* PostgreSQL runs as user postgres and must enter it */
            c.sut_dir_temp = 1;
        }
        so.dir = c.sut_dir;
        so.stop = o->stop;
        if (!o->quiet) {
            printf("starting the embedded SUT in %s (%d tiles of data)...\n", c.sut_dir, max_tiles);
            fflush(stdout);
        }
        r = tb_sut_up(&so, &c.ep, err);
        /* A failed start keeps its logs for diagnosis (an empty folder goes);
         * an interrupted one has nothing to diagnose: its servers are
         * stopped, and the temporary folder goes. */
        if (r == TB_SUT_EINTR && c.sut_dir_temp && nftw(c.sut_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
            tb_log(TB_LOG_WARN, "remove %s: %s", c.sut_dir, strerror(errno));
        else if (r != 0 && c.sut_dir_temp)
            rmdir(c.sut_dir); /* best effort */
        if (r != 0) {
            const char *st = r == TB_SUT_EINTR ? TB_RUN_INTERRUPTED : TB_RUN_ABORTED;
            note(&c, "error", err);
            if (tb_store_finish_run(c.store, c.run_id, st, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
            cleanup(&c);
            return r == TB_SUT_EUSAGE ? TB_EXIT_USAGE : TB_EXIT_ABORTED;
        }
        c.sut_started = 1;
    }
    if (tb_loadgen_local_open(o->def, &c.ep, o->threads, &c.lg, err) != 0) {
        note(&c, "error", err);
        if (tb_store_finish_run(c.store, c.run_id, TB_RUN_ABORTED, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
        cleanup(&c);
        return TB_EXIT_USAGE;
    }
    /* SUT ready: each workload's servers answer and hold data for every tile */
    for (int w = 0; w < o->def->n_workloads; w++) {
        const tb_workload_vt *vt = c.lg->vt[w];
        if (vt->probe && vt->probe(c.lg->cfg[w], max_tiles, err) != 0) {
            note(&c, "error", err);
            if (tb_store_finish_run(c.store, c.run_id, TB_RUN_ABORTED, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
            cleanup(&c);
            return TB_EXIT_ABORTED;
        }
    }
    if (tb_poller_start(c.meters, o->n_meters, 1000000, &c.poller, err) != 0) {
        note(&c, "error", err);
        if (tb_store_finish_run(c.store, c.run_id, TB_RUN_ABORTED, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
        cleanup(&c);
        return TB_EXIT_ABORTED;
    }
    /* Host telemetry in its own thread at normal priority: a slow scrape
     * can never delay the meter poller's ticks. */
    if (c.tsrc && tb_telem_sampler_start(c.tsrc, TELEM_INTERVAL_US, &c.tsampler, err) != 0) {
        note(&c, "error", err);
        if (tb_store_finish_run(c.store, c.run_id, TB_RUN_ABORTED, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
        cleanup(&c);
        return TB_EXIT_ABORTED;
    }
    c.run_start_us = tb_now_us();

    /* Active idle: services up, no load (SPECpower). Servers just started
     * still do start-up work (checkpoints, statistics, process spawning):
     * let them settle first, unmeasured. */
    if (o->stages.idle_us > 0 && c.sut_started) {
        uint64_t settle_end = tb_now_us() + SUT_SETTLE_US;
        while (tb_now_us() < settle_end && !stopped(&c)) nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    if (o->stages.idle_us > 0 && !stopped(&c)) {
        uint64_t t0 = tb_now_us(), t1 = t0 + o->stages.idle_us, total, bad;
        tb_poll_sample *ps = NULL;
        int n = 0;
        double w;
        if (!o->quiet && !c.is_tty) {
            printf("active idle: %.0fs\n", (double)o->stages.idle_us / 1e6);
            fflush(stdout);
        }
        {
            uint64_t a = 0, b = 0;
            while (tb_now_us() < t1 && !stopped(&c)) {
                if (c.is_tty && !o->quiet) {
                    char left[32];
                    uint64_t now = tb_now_us();
                    tb_format_duration((t1 - now) / 1000000 * 1000000, left, sizeof left);
                    printf("\r\033[Kactive idle  %s left  %.1f W", left, tb_poller_latest_watts(c.poller));
                    fflush(stdout);
                }
                (void)a;
                (void)b;
                nanosleep(&(struct timespec){0, 200000000L}, NULL);
            }
        }
        end_progress_line(&c);
        if (!stopped(&c)) {
            w = window_power(&c, t0, t1, &ps, &n, &total, &bad);
            if (tb_store_put_idle(c.store, c.run_id, w, ps, n, err) != 0) {
                free(ps);
                rc = TB_EXIT_ABORTED;
                status = TB_RUN_ABORTED;
                goto done;
            }
            if (!o->quiet) printf("active idle: %.1f W%s\n", w, est_mark(&c));
            judge_idle(&c, ps, n, w, o->stages.idle_us);
            if (c.tsampler) {
                tb_telem_sample *ts = NULL;
                tb_telemetry agg;
                int nt = telem_window(&c, t0, t1, &ts);
                tb_telem_aggregate(ts, nt, &agg);
                if (tb_store_put_idle_telemetry(c.store, c.run_id, ts, nt, err) != 0) {
                    free(ts);
                    free(ps);
                    rc = TB_EXIT_ABORTED;
                    status = TB_RUN_ABORTED;
                    goto done;
                }
                free(ts);
                if (!o->quiet) {
                    char line[256];
                    telem_line(&agg, line, sizeof line);
                    printf("  telemetry: %s\n", line);
                }
            }
            c.idle_w = w > 0 ? w : 0;
            free(ps);
        }
    }

    {
        /* every level run so far, over all repeats: saturation comes from these */
        int n_tried = 0, cap_tried = o->repeat * (o->levels.n + 16);
        int *tried = xcalloc((size_t)cap_tried, sizeof *tried), *passed = xcalloc((size_t)cap_tried, sizeof *passed);
        for (int rep = 0; rep < o->repeat && !stopped(&c); rep++) {
            int rep_first = n_tried;
            c.repeat = rep + 1;
            for (int i = 0; !stopped(&c); i++) {
                int tiles;
                if (o->levels.is_auto) {
                    /* climb (and optionally bisect) from this repeat's own verdicts */
                    tb_saturation_opts so = {.max_tiles = o->levels.n, .step = o->auto_step,
                                             .doubling = o->auto_double, .bisect = o->bisect};
                    tb_saturation_step step;
                    r = tb_saturation_next(tried + rep_first, passed + rep_first, n_tried - rep_first, &so, &step, e);
                    if (r < 0) {
                        tb_seterr(err, "auto: %s", e);
                        rc = TB_EXIT_ABORTED;
                        status = TB_RUN_ABORTED;
                        break;
                    }
                    if (r == 0) {
                        if (step.capped)
                            snprintf(e, sizeof e, "auto: every level up to %d tiles passed QoS: the SUT did not "
                                                  "saturate (saturation >= %d tiles)", o->levels.n, step.saturation);
                        else
                            snprintf(e, sizeof e, "auto: QoS failed at %d tiles; saturation is %d tiles",
                                     step.first_fail, step.saturation);
                        note(&c, "info", e);
                        if (!o->quiet) printf("%s\n", e);
                        break;
                    }
                    tiles = step.next_tiles;
                } else {
                    if (i >= o->levels.n) break;
                    tiles = o->levels.tiles[i];
                }
                r = run_level(&c, tiles, err);
                c.levels_done++;
                if (r == -2) break;
                if (r < 0) {
                    note(&c, "error", err);
                    rc = TB_EXIT_ABORTED;
                    status = TB_RUN_ABORTED;
                    break;
                }
                if (n_tried == cap_tried) {
                    cap_tried *= 2;
                    tried = xrealloc(tried, (size_t)cap_tried * sizeof *tried);
                    passed = xrealloc(passed, (size_t)cap_tried * sizeof *passed);
                }
                tried[n_tried] = tiles;
                passed[n_tried++] = r == 1;
            }
            if (rc != TB_EXIT_OK) break;
        }
        /* VMmark: the largest level that passes QoS (in every repeat) */
        saturation = tb_saturation_largest_pass(tried, passed, n_tried);
        if (saturation == 0) saturation = -1;
        free(tried);
        free(passed);
        if (rc != TB_EXIT_OK) goto done;
    }
    if (c.idle_w > 0 && c.min_level_w > 0 && c.min_level_w < c.idle_w) {
        /* a loaded level below active idle means the power source saw other
         * load (an estimate reads the whole host's CPU), not this benchmark */
        snprintf(e, sizeof e,
                 "active idle (%.1f W) is above the mean power under load (%.1f W at %d tiles): the power figures "
                 "were disturbed by other activity on the host%s",
                 c.idle_w, c.min_level_w, c.min_level_tiles,
                 c.infos[0].estimated ? " (the estimate reads the whole host's CPU)" : "");
        note(&c, "warning", e);
        if (!o->quiet) printf("warning: %s\n", e);
    }
    if (stopped(&c)) {
        end_progress_line(&c);
        status = TB_RUN_INTERRUPTED;
        rc = TB_EXIT_ABORTED;
        tb_seterr(err, "interrupted: levels finished so far are stored; run marked interrupted");
        note(&c, "warning", "interrupted by signal");
    }
    if (o->calibrate && strcmp(status, TB_RUN_COMPLETE) == 0) {
        /* the median phase's 1-tile throughput of each workload becomes its reference */
        for (int w = 0; w < o->def->n_workloads && c.n_calib > 0; w++) {
            double v[TB_MAX_PHASES];
            const tb_workload_def *wd = &o->def->workloads[w];
            for (int p = 0; p < c.n_calib; p++) v[p] = c.calib[p][w];
            double ref = tb_score_median(v, c.n_calib);
            if (tb_store_put_calibration(c.store, c.run_id, o->def->name, c.def_hash, wd->name, ref, wd->unit, e) != 0) {
                tb_log(TB_LOG_ERROR, "%s", e);
                rc = TB_EXIT_ABORTED;
                status = TB_RUN_ABORTED;
                continue;
            }
            snprintf(e, sizeof e, "calibration: %s reference %.4g %s (tile file: %g) for tile %s [%s]", wd->name, ref,
                     wd->unit, wd->reference, o->def->name, c.def_hash);
            note(&c, "info", e);
            if (!o->quiet) printf("%s\n", e);
        }
    }
done:
    if (tb_store_finish_run(c.store, c.run_id, status, saturation, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
    if (o->report_path && c.store) {
        FILE *f = fopen(o->report_path, "w");
        tb_report_format fmt = TB_REPORT_TEXT;
        const char *dot = strrchr(o->report_path, '.');
        if (dot && tb_report_parse_format(dot + 1, &fmt, e) != 0) fmt = TB_REPORT_TEXT;
        if (!f) tb_log(TB_LOG_ERROR, "report %s: %s", o->report_path, strerror(errno));
        else {
            if (tb_report_write(c.store, c.run_id, fmt, f, e) != 0) tb_log(TB_LOG_ERROR, "report: %s", e);
            if (fclose(f) != 0) tb_log(TB_LOG_ERROR, "report %s: write failed", o->report_path);
            else if (!o->quiet) printf("report: %s\n", o->report_path);
        }
    }
    cleanup(&c);
    if (!o->quiet) printf("run %lld %s\n", (long long)*run_id, status);
    return rc;
}
