/*
 * coordinator.c: the sweep (see coordinator.h). Data flows one way: the
 * load generator and the meter poller measure; level.c and phase.c turn each
 * finished phase into a tb_level_result (QoS verdict, validity, score, PPKW)
 * and hand it to the results store, then move on. Nothing here prints: what
 * a person may see goes to the run's observer (observer.h).
 *
 * The run's lifecycle. c->state is how far the run got; each step is one
 * function, run in this order, and every way out of tb_coordinator_run goes
 * through its one exit (end_run), which finishes what the state says was
 * begun:
 *
 *   state        reached by           holds                                 a failure on the way there
 *   ST_OPEN      open_instruments     open-files limit checked, meters,     exit 2 (3: a meter does not
 *                                     telemetry source, store open          answer); no run row
 *   ST_RUN_ROW   begin_run_row        references, host, settings,           exit 2 (store) or 3 (the
 *                                     the run row                           node_exporter); no run row
 *   ST_SUT_UP    bring_sut_up         the SUT's endpoints (the embedded     run aborted (interrupted
 *                                     SUT started), load generator probed   while loading data); exit 2/3
 *   ST_SAMPLING  start_sampling       meter poller, telemetry sampler       run aborted; exit 3
 *   ST_IDLE      measure_idle         active idle stored (or skipped)       run aborted; exit 3
 *   ST_SWEEP     sweep                every load level stored, saturation   run aborted; exit 3
 *   ST_CALIBRATE calibrate            each workload's reference stored      run aborted; exit 3
 *   ST_FINISHED  end_run              status, saturation, report            -
 *
 * Any state may end the run as aborted (an error: what was measured stays
 * stored) or interrupted (a signal: *o->stop). Before ST_SAMPLING an ended
 * run row gets its status only; from ST_SAMPLING on, end_run also writes the
 * report and tells the observer the run's status. Resources are released in
 * one place (release) whatever the state.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "coordinator/coordinator.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/redact.h"
#include "agent/remote.h"
#include "coordinator/run_ctx.h"
#include "results/report.h"
#include "scoring/saturation.h"
#include "scoring/score.h"
#include "sut/sut.h"

/* Telemetry sampling interval: 1 Hz, like the meter poller. */
#define TELEM_INTERVAL_US 1000000
/* Unmeasured pause between starting the embedded SUT and measuring active idle. */
#define SUT_SETTLE_US 3000000

static const tb_run_observer silent;

/* Moves the run to the next state of the table above: one step at a time,
 * never back, and to ST_FINISHED from any state that samples (a run that
 * ends early). A step out of order is a bug of this file. */
static void advance(run_ctx *c, run_state to) {
    TB_ASSERT(to == c->state + 1 || (to == ST_FINISHED && c->state >= ST_SAMPLING));
    c->state = to;
}

void tb_coord_note(run_ctx *c, const char *kind, const char *msg) {
    char e[TB_ERR_LEN];
    if (c->store && c->run_id > 0 && tb_store_event(c->store, c->run_id, kind, msg, e) != 0)
        tb_log(TB_LOG_WARN, "%s", e); /* e starts with "store event: " */
}

void tb_coord_say(run_ctx *c, const char *event_kind, tb_run_msg_kind kind, const char *msg) {
    tb_coord_note(c, event_kind, msg);
    if (c->obs->message) c->obs->message(c->obs->arg, kind, msg);
}

int tb_coord_stopped(const run_ctx *c) { return c->o->stop && *c->o->stop; }

/* Any meter a model (estimate:, or auto fell back to it): the README (and docs/meters.md) promise
 * every output says ESTIMATED POWER. */
int tb_coord_estimated(const run_ctx *c) {
    for (int i = 0; i < c->n_meters; i++)
        if (c->infos[i].estimated) return 1;
    return 0;
}

static void progress_end(run_ctx *c) {
    if (c->obs->progress_end) c->obs->progress_end(c->obs->arg);
}

/* Ends the run as aborted with exit code rc. */
static int fail(run_ctx *c, int rc) {
    c->status = TB_RUN_ABORTED;
    return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Releases whatever the run holds, in any state. */
static void release(run_ctx *c) {
    char e[TB_ERR_LEN];
    tb_coord_infra_end(c); /* before the load generator its migrate ops switch */
    tb_loadgen_close(c->lg);
    c->lg = NULL;
    tb_endpoints_free(&c->ep);
    tb_poller_stop(c->poller);
    c->poller = NULL;
    tb_temp_sampler_stop(c->temp_sampler);
    c->temp_sampler = NULL;
    for (int i = 0; i < c->n_temps; i++)
        tb_temp_close(c->temps[i]);
    c->n_temps = 0;
    tb_telem_sampler_stop(c->tsampler);
    c->tsampler = NULL;
    tb_telem_source_close(c->tsrc);
    c->tsrc = NULL;
    for (int h = 0; h < c->n_hosts; h++) {
        tb_telem_sampler_stop(c->host_tsampler[h]);
        tb_telem_source_close(c->host_tsrc[h]);
        c->host_tsampler[h] = NULL;
        c->host_tsrc[h] = NULL;
    }
    for (int i = 0; i < c->n_meters; i++)
        tb_meter_close(c->meters[i]);
    c->n_meters = 0;
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

/* -> ST_OPEN: open files, meters, the telemetry source, the store. A bad
 * URI or source is a configuration error, found before anything runs (for
 * `run` and every `campaign` configuration alike). */
static int open_instruments(run_ctx *c, char *err) {
    const tb_run_opts *o = c->o;
    char why[TB_ERR_LEN];
    int r;
    /* the users' sockets are this process's own only with the local load
     * generator; each agent checks its share of a level (agent.c) */
    if (!o->agents && tb_loadgen_fd_check(o->def, c->max_tiles, err) != 0) return TB_EXIT_USAGE;
    if ((r = tb_coord_infra_check(c, err)) != TB_EXIT_OK) return r; /* [infra.NAME]: a missing program */
    for (int i = 0; i < o->n_temps; i++) {
        /* a bad URI, file or reading is a usage error (2); a daemon that does not answer aborts (3) */
        if ((r = tb_temp_open(o->temp_uris[i], &c->temps[i], err)) != 0)
            return r == TB_METER_EUNREACH ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
        c->n_temps = i + 1;
    }
    if (o->def->n_hosts) {
        /* [host.NAME]: each host's meters and telemetry; none for the run as a whole */
        if ((r = tb_coord_open_hosts(c, err)) != TB_EXIT_OK) return r;
        snprintf(c->telem_spec, sizeof c->telem_spec, "none");
        snprintf(c->telem_shown, sizeof c->telem_shown, "per host");
        if (tb_store_open(o->db_path, &c->store, err) != 0) return TB_EXIT_USAGE;
        advance(c, ST_OPEN);
        return TB_EXIT_OK;
    }
    for (int i = 0; i < o->n_meters; i++) {
        if ((r = tb_meter_open(o->meter_uris[i], &c->meters[i], err)) != 0)
            /* a meter that does not answer aborts (3); a bad URI is a usage error (2) */
            return r == TB_METER_EUNREACH ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
        c->infos[i] = *tb_meter_get_info(c->meters[i]); /* the meter itself warns when it is an estimate */
        c->n_meters = i + 1;
    }
    snprintf(c->telem_spec, sizeof c->telem_spec, "%s", tb_coord_telemetry_choice(o, why, sizeof why));
    tb_redact_uri(c->telem_spec, c->telem_shown, sizeof c->telem_shown);
    if (strcmp(c->telem_spec, "none") != 0 && tb_telem_source_open(c->telem_spec, &c->tsrc, err) != 0)
        return TB_EXIT_USAGE;
    if (*why) {
        tb_log(TB_LOG_WARN, "%s", why);
        snprintf(c->telem_note, sizeof c->telem_note, "%s", why);
    }
    if (tb_store_open(o->db_path, &c->store, err) != 0) return TB_EXIT_USAGE;
    advance(c, ST_OPEN);
    return TB_EXIT_OK;
}

/* References: the tile file's, unless a calibration of this very tile
 * definition exists (and this run is not itself a calibration). Returns
 * where each came from, for the settings. */
static json_t *load_references(run_ctx *c) {
    const tb_run_opts *o = c->o;
    json_t *refs = json_object();
    char e[TB_ERR_LEN];
    tb_tiledef_workload_hash(o->def, c->def_hash);
    for (int w = 0; w < o->def->n_workloads; w++) {
        const tb_workload_def *wd = &o->def->workloads[w];
        double ref;
        int64_t cal_run;
        char at[32], src[128];
        int r = o->calibrate
                    ? 1
                    : tb_store_get_calibration(c->store, o->def->name, c->def_hash, wd->name, &ref, &cal_run, at, e);
        c->reference[w] = wd->reference;
        snprintf(src, sizeof src, "tile file: %g %s", wd->reference, wd->unit);
        if (r < 0) tb_log(TB_LOG_WARN, "%s (using the tile file's reference)", e);
        if (r == 0) {
            c->reference[w] = ref;
            snprintf(src, sizeof src, "calibration run %lld (%s): %.4g %s", (long long)cal_run, at, ref, wd->unit);
            if (c->obs->reference) c->obs->reference(c->obs->arg, wd->name, src);
        }
        json_object_set_new(refs, wd->name, json_string(src));
    }
    tb_coord_infra_references(c, refs);
    return refs;
}

/* -> ST_RUN_ROW: the run row with its references, host and settings. */
static int begin_run_row(run_ctx *c, char *err) {
    const tb_run_opts *o = c->o;
    json_t *refs = load_references(c), *hj = tb_coord_host_info(c, err), *sj;
    tb_run_info ri;
    tb_host_info hosts[TB_MAX_HOSTS];
    int r;
    if (hj && tb_coord_host_rows(c, hosts, err) != 0) {
        json_decref(hj); /* a host's node_exporter cannot be read: as below */
        hj = NULL;
    }
    if (!hj) {
        /* the SUT host's node_exporter cannot be read: nothing measured, no run stored */
        json_decref(refs);
        return TB_EXIT_ABORTED;
    }
    sj = tb_coord_settings(c, refs);
    memset(&ri, 0, sizeof ri);
    ri.label = o->label ? o->label : "";
    ri.tile_name = o->def->name;
    ri.tile_spec = o->tile_spec;
    ri.config_text = o->def->text ? o->def->text : "";
    ri.settings_json = json_dumps(sj, JSON_COMPACT);
    ri.host_json = json_dumps(hj, JSON_COMPACT);
    ri.started_wall_us = tb_wall_us();
    ri.n_meters = c->n_meters;
    ri.meters = c->infos;
    ri.n_hosts = c->n_hosts;
    ri.hosts = hosts;
    ri.meter_hosts = c->meter_host_name;
    ri.campaign_id = o->campaign_id;
    ri.campaign_config = o->campaign_config;
    json_decref(hj);
    json_decref(sj);
    r = tb_store_begin_run(c->store, &ri, &c->run_id, err);
    tb_coord_host_rows_free(hosts, c->n_hosts);
    free((char *)ri.host_json);
    free((char *)ri.settings_json);
    if (r != 0) return TB_EXIT_USAGE;
    advance(c, ST_RUN_ROW);
    if (c->obs->run_begun) c->obs->run_begun(c->obs->arg, c->run_id, o->def->name, o->tile_spec, o->db_path);
    for (int i = 0; i < o->n_notes; i++)
        tb_coord_note(c, "warning", o->notes[i]);
    if (*c->telem_note) tb_coord_note(c, "info", c->telem_note);
    tb_coord_infra_say_noref(c); /* before the sweep, now that the references are known */
    return TB_EXIT_OK;
}

/* The embedded SUT's run folder: --sut-dir, else a new temporary one. */
static int make_sut_dir(run_ctx *c, char *err) {
    const char *tmp = getenv("TMPDIR");
    if (c->o->sut_dir) {
        snprintf(c->sut_dir, sizeof c->sut_dir, "%s", c->o->sut_dir);
        return 0;
    }
    snprintf(c->sut_dir, sizeof c->sut_dir, "%s/tilebench-sut.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(c->sut_dir)) {
        tb_seterr(err, "temporary SUT folder %s: %s", c->sut_dir, strerror(errno));
        return -1;
    }
    chmod(c->sut_dir, 0755); /* PostgreSQL runs as user postgres and must enter it */
    c->sut_dir_temp = 1;
    return 0;
}

/* Starts the embedded SUT with data for the most tiles of the sweep. */
static int start_embedded_sut(run_ctx *c, char *err) {
    const tb_run_opts *o = c->o;
    tb_sut_options so = {.tiles = c->max_tiles};
    int r;
    /* The reference web app's data is sized for the tile's web users
     * (100 persons each, Olio); the first workload of kind web decides. */
    for (int w = 0; w < o->def->n_workloads; w++)
        if (strcmp(o->def->workloads[w].kind, "web") == 0 && o->def->workloads[w].users > 0) {
            so.web_users = o->def->workloads[w].users;
            break;
        }
    if (make_sut_dir(c, err) != 0) return fail(c, TB_EXIT_ABORTED);
    so.dir = c->sut_dir;
    so.stop = o->stop;
    if (c->obs->sut_starting) c->obs->sut_starting(c->obs->arg, c->sut_dir, c->max_tiles);
    r = tb_sut_up(&so, &c->ep, err);
    /* A failed start keeps its logs for diagnosis (an empty folder goes);
     * an interrupted one has nothing to diagnose: its servers are
     * stopped, and the temporary folder goes. */
    if (r == TB_SUT_EINTR && c->sut_dir_temp && nftw(c->sut_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        tb_log(TB_LOG_WARN, "remove %s: %s", c->sut_dir, strerror(errno));
    else if (r != 0 && c->sut_dir_temp)
        rmdir(c->sut_dir); /* best effort */
    if (r != 0) {
        c->status = r == TB_SUT_EINTR ? TB_RUN_INTERRUPTED : TB_RUN_ABORTED;
        return r == TB_SUT_EUSAGE ? TB_EXIT_USAGE : TB_EXIT_ABORTED;
    }
    c->sut_started = 1;
    return TB_EXIT_OK;
}

/* The local load generator, or the agents the options name (agent/remote.h). */
static int open_loadgen(run_ctx *c, char *err) {
    int r;
    if (!c->o->agents)
        return tb_loadgen_local_open(c->o->def, &c->ep, c->o->threads, &c->lg, err) == 0 ? TB_EXIT_OK
                                                                                         : fail(c, TB_EXIT_USAGE);
    if (c->obs->agents_waiting)
        c->obs->agents_waiting(c->obs->arg, c->o->agents->agents,
                               c->o->agents->wait_us ? c->o->agents->wait_us : TB_REMOTE_WAIT_DEFAULT_US);
    r = tb_loadgen_remote_open(c->o->def, &c->ep, c->o->agents, &c->lg, err);
    if (r != 0) return fail(c, r == -2 ? TB_EXIT_ABORTED : TB_EXIT_USAGE);
    tb_coord_note_agents(c);
    return TB_EXIT_OK;
}

/* -> ST_SUT_UP: the config's endpoints, or the embedded SUT started here;
 * the load generator against them, and each workload's servers answer and
 * hold data for every tile. */
static int bring_sut_up(run_ctx *c, char *err) {
    int rc;
    if (c->o->def->has_sut)
        tb_endpoints_copy(&c->ep, &c->o->def->sut);
    else if ((rc = start_embedded_sut(c, err)) != TB_EXIT_OK)
        return rc;
    if ((rc = open_loadgen(c, err)) != TB_EXIT_OK) return rc;
    if (c->lg->ops->probe(c->lg->self, c->max_tiles, err) != 0) return fail(c, TB_EXIT_ABORTED);
    advance(c, ST_SUT_UP);
    return TB_EXIT_OK;
}

/* -> ST_SAMPLING: the meter poller, and host telemetry in its own thread at
 * normal priority (a slow scrape can never delay the poller's ticks). */
static int start_sampling(run_ctx *c, char *err) {
    if (tb_poller_start(c->meters, c->n_meters, 1000000, &c->poller, err) != 0) return fail(c, TB_EXIT_ABORTED);
    if (c->n_temps && tb_temp_sampler_start(c->temps, c->n_temps, 1000000, &c->temp_sampler, err) != 0)
        return fail(c, TB_EXIT_ABORTED);
    if (c->tsrc && tb_telem_sampler_start(c->tsrc, TELEM_INTERVAL_US, &c->tsampler, err) != 0)
        return fail(c, TB_EXIT_ABORTED);
    for (int h = 0; h < c->n_hosts; h++)
        if (c->host_tsrc[h] &&
            tb_telem_sampler_start(c->host_tsrc[h], TELEM_INTERVAL_US, &c->host_tsampler[h], err) != 0)
            return fail(c, TB_EXIT_ABORTED);
    advance(c, ST_SAMPLING);
    return TB_EXIT_OK;
}

/* Active idle's inlet temperature and its readings: stored, and a warning under 20 C (the
 * levels are judged by it; idle is no level). */
static int store_idle_temperature(run_ctx *c, uint64_t t0, uint64_t t1, char *err) {
    tb_temp_stats ts;
    tb_temp_reading *r = NULL;
    char msg[160];
    int nr, rc;
    tb_temp_sampler_window(c->temp_sampler, t0, t1, &ts);
    nr = tb_temp_sampler_readings(c->temp_sampler, t0, t1, &r);
    rc = tb_store_put_idle_temperature(c->store, c->run_id, ts.n, ts.min_c, ts.mean_c, ts.max_c, r, nr, err);
    free(r);
    if (rc != 0) return fail(c, TB_EXIT_ABORTED);
    if (ts.n > 0 && ts.min_c < TB_TEMP_MIN_INLET_C) {
        snprintf(msg, sizeof msg, "active idle: inlet temperature down to %.1f C (minimum %.0f C)", ts.min_c,
                 TB_TEMP_MIN_INLET_C);
        tb_coord_say(c, "warning", TB_RUN_MSG_STEP_WARNING, msg);
    }
    return TB_EXIT_OK;
}

/* Stores active idle over [t0, t1): its power, the warning when its power
 * rules fail, its telemetry. */
static int store_idle(run_ctx *c, uint64_t t0, uint64_t t1, char *err) {
    tb_poll_sample *ps = NULL;
    uint64_t total, bad;
    int n = 0, rc = TB_EXIT_OK;
    double w = tb_coord_window_power(c, t0, t1, &ps, &n, &total, &bad);
    if (tb_store_put_idle(c->store, c->run_id, w, ps, n, err) != 0) {
        free(ps);
        return fail(c, TB_EXIT_ABORTED);
    }
    if (c->obs->idle_done) c->obs->idle_done(c->obs->arg, w, tb_coord_estimated(c));
    tb_coord_judge_idle(c, ps, n, w, c->o->stages.idle_us);
    if (c->n_hosts) {
        tb_host_result hr[TB_MAX_HOSTS];
        tb_coord_host_results(c, ps, n, t0, t1, 0, hr);
        if (tb_store_put_idle_hosts(c->store, c->run_id, hr, c->n_hosts, err) != 0) rc = fail(c, TB_EXIT_ABORTED);
    }
    if (c->tsampler) {
        tb_telem_sample *ts = NULL;
        tb_telemetry agg;
        int nt = tb_coord_telem_window(c, t0, t1, &ts);
        tb_telem_aggregate(ts, nt, &agg);
        if (tb_store_put_idle_telemetry(c->store, c->run_id, ts, nt, err) != 0)
            rc = fail(c, TB_EXIT_ABORTED);
        else if (c->obs->telemetry)
            c->obs->telemetry(c->obs->arg, &agg);
        free(ts);
    }
    if (rc == TB_EXIT_OK && c->temp_sampler) rc = store_idle_temperature(c, t0, t1, err);
    if (rc == TB_EXIT_OK) c->idle_w = w > 0 ? w : 0;
    free(ps);
    return rc;
}

/* -> ST_IDLE: active idle, services up and no load (SPECpower). Servers
 * just started still do start-up work (checkpoints, statistics, process
 * spawning): they settle first, unmeasured. */
static int measure_idle(run_ctx *c, char *err) {
    uint64_t idle_us = c->o->stages.idle_us, t0, t1;
    int rc = TB_EXIT_OK;
    if (idle_us > 0 && c->sut_started) {
        uint64_t settle_end = tb_now_us() + SUT_SETTLE_US;
        while (tb_now_us() < settle_end && !tb_coord_stopped(c))
            nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    if (idle_us > 0 && !tb_coord_stopped(c)) {
        t0 = tb_now_us();
        t1 = t0 + idle_us;
        tb_stage_row row = {"idle", 0, c->repeat, 0, NULL, t0, t1};
        char e[TB_ERR_LEN];
        if (tb_store_put_stage(c->store, c->run_id, &row, e) != 0) /* drawing only (level.c) */
            tb_log(TB_LOG_WARN, "%s (the report's power chart will not shade it)", e);
        if (c->obs->idle_begun) c->obs->idle_begun(c->obs->arg, idle_us);
        while (tb_now_us() < t1 && !tb_coord_stopped(c)) {
            if (c->obs->idle_progress)
                c->obs->idle_progress(c->obs->arg, (t1 - tb_now_us()) / 1000000 * 1000000,
                                      tb_poller_latest_watts(c->poller));
            tb_coord_tell_meters(c);
            nanosleep(&(struct timespec){0, 200000000L}, NULL);
        }
        progress_end(c);
        if (!tb_coord_stopped(c)) rc = store_idle(c, t0, t1, err);
    }
    if (rc == TB_EXIT_OK) advance(c, ST_IDLE);
    return rc;
}

/* Every level run so far, over all repeats: saturation comes from these. */
typedef struct tried_levels {
    int n, cap;
    int *tiles, *passed;
} tried_levels;

static void tried_add(tried_levels *t, int tiles, int passed) {
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->tiles = xrealloc(t->tiles, (size_t)t->cap * sizeof *t->tiles);
        t->passed = xrealloc(t->passed, (size_t)t->cap * sizeof *t->passed);
    }
    t->tiles[t->n] = tiles;
    t->passed[t->n++] = passed;
}

/* The next level of level i of this repeat (whose verdicts start at
 * rep_first): 1 with *tiles, 0 when the repeat is done, -1 with err. With
 * --tiles auto it climbs (and optionally bisects) from this repeat's own
 * verdicts. */
static int next_level(run_ctx *c, const tried_levels *t, int rep_first, int i, int *tiles, char *err) {
    const tb_run_opts *o = c->o;
    tb_saturation_opts so = {
        .max_tiles = o->levels.n, .step = o->auto_step, .doubling = o->auto_double, .bisect = o->bisect};
    tb_saturation_step step;
    char e[TB_ERR_LEN];
    int r;
    if (!o->levels.is_auto) {
        if (i >= o->levels.n) return 0;
        *tiles = o->levels.tiles[i];
        return 1;
    }
    r = tb_saturation_next(t->tiles + rep_first, t->passed + rep_first, t->n - rep_first, &so, &step, e);
    if (r < 0) {
        tb_seterr(err, "auto: %s", e);
        return -1;
    }
    if (r == 0) {
        if (step.capped)
            snprintf(e, sizeof e,
                     "auto: every level up to %d tiles passed QoS: the SUT did not saturate "
                     "(saturation >= %d tiles)",
                     o->levels.n, step.saturation);
        else
            snprintf(e, sizeof e, "auto: QoS failed at %d tiles; saturation is %d tiles", step.first_fail,
                     step.saturation);
        tb_coord_say(c, "info", TB_RUN_MSG_INFO, e);
        return 0;
    }
    *tiles = step.next_tiles;
    return 1;
}

/* One repeat of the sweep: its levels in order until done or stopped. */
static int sweep_once(run_ctx *c, tried_levels *t, char *err) {
    int rep_first = t->n, tiles, r;
    for (int i = 0; !tb_coord_stopped(c); i++) {
        if ((r = next_level(c, t, rep_first, i, &tiles, err)) < 0) return fail(c, TB_EXIT_ABORTED);
        if (r == 0) break;
        r = tb_coord_run_level_set(c, tiles, err); /* with --interference, each workload alone first */
        c->levels_done++;
        if (r == -2) break;
        if (r >= 0 && c->lg->ops->gone && c->lg->ops->gone(c->lg->self)) {
            snprintf(err, TB_ERR_LEN, "%s", c->lg->ops->gone(c->lg->self));
            r = -1;
        }
        if (r < 0) {
            tb_coord_note(c, "error", err);
            return fail(c, TB_EXIT_ABORTED);
        }
        tried_add(t, tiles, r == 1);
    }
    return TB_EXIT_OK;
}

/* -> ST_SWEEP: every repeat; the saturation is the largest level that
 * passes QoS in every repeat (VMmark). */
static int sweep(run_ctx *c, char *err) {
    tried_levels t = {0, 0, NULL, NULL};
    int rc = TB_EXIT_OK;
    for (int rep = 0; rep < c->o->repeat && !tb_coord_stopped(c) && rc == TB_EXIT_OK; rep++) {
        c->repeat = rep + 1;
        rc = sweep_once(c, &t, err);
    }
    c->saturation = tb_saturation_largest_pass(t.tiles, t.passed, t.n);
    if (c->saturation == 0) c->saturation = -1;
    free(t.tiles);
    free(t.passed);
    if (rc == TB_EXIT_OK) advance(c, ST_SWEEP);
    return rc;
}

/* A loaded level below active idle means the power source saw other load
 * (an estimate reads the whole host's CPU), not this benchmark. */
static void check_idle_against_load(run_ctx *c) {
    char e[TB_ERR_LEN];
    if (!(c->idle_w > 0 && c->min_level_w > 0 && c->min_level_w < c->idle_w)) return;
    snprintf(e, sizeof e,
             "active idle (%.1f W) is above the mean power under load (%.1f W at %d tiles): the power figures "
             "were disturbed by other activity on the host%s",
             c->idle_w, c->min_level_w, c->min_level_tiles,
             c->infos[0].estimated ? " (the estimate reads the whole host's CPU)" : "");
    tb_coord_say(c, "warning", TB_RUN_MSG_WARNING, e);
}

/* -> ST_CALIBRATE: the median phase's 1-tile throughput of each workload
 * and operation becomes its reference (a complete calibration run only);
 * one with no throughput gets none, and a warning. A store failure aborts
 * the run with err, after the others are stored. */
static int calibrate(run_ctx *c, char *err) {
    const tb_run_opts *o = c->o;
    int rc = TB_EXIT_OK;
    char e[TB_ERR_LEN];
    for (int w = 0; o->calibrate && w < o->def->n_workloads && c->n_calib > 0; w++) {
        double v[TB_MAX_PHASES], ref;
        const tb_workload_def *wd = &o->def->workloads[w];
        for (int p = 0; p < c->n_calib; p++)
            v[p] = c->calib[p][w];
        ref = tb_score_median(v, c->n_calib);
        if (!(ref > 0) || !isfinite(ref)) {
            snprintf(e, sizeof e,
                     "calibration: %s completed no successful operation at 1 tile, so no reference is stored "
                     "(the tile file's %g %s stays); fix what failed, then run --calibrate again",
                     wd->name, wd->reference, wd->unit);
            tb_coord_say(c, "warning", TB_RUN_MSG_WARNING, e);
            continue;
        }
        if (tb_store_put_calibration(c->store, c->run_id, o->def->name, c->def_hash, wd->name, ref, wd->unit, e) != 0) {
            if (rc == TB_EXIT_OK) snprintf(err, TB_ERR_LEN, "%s", e);
            rc = TB_EXIT_ABORTED;
            continue;
        }
        snprintf(e, sizeof e, "calibration: %s reference %.4g %s (tile file: %g) for tile %s [%s]", wd->name, ref,
                 wd->unit, wd->reference, o->def->name, c->def_hash);
        tb_coord_say(c, "info", TB_RUN_MSG_INFO, e);
    }
    if (tb_coord_infra_calibrate(c, e) != 0 && rc == TB_EXIT_OK) {
        snprintf(err, TB_ERR_LEN, "%s", e);
        rc = TB_EXIT_ABORTED;
    }
    if (rc == TB_EXIT_OK)
        advance(c, ST_CALIBRATE);
    else
        c->status = TB_RUN_ABORTED;
    return rc;
}

/* The report (--report), its format from the file name's extension. */
static void write_report(run_ctx *c) {
    const char *path = c->o->report_path;
    tb_report_format fmt = tb_report_format_for_path(path);
    char e[TB_ERR_LEN];
    FILE *f = fopen(path, "w");
    if (!f) {
        tb_log(TB_LOG_ERROR, "report %s: %s", path, strerror(errno));
        return;
    }
    if (tb_report_write(c->store, c->run_id, fmt, f, e) != 0) tb_log(TB_LOG_ERROR, "report: %s", e);
    if (fclose(f) != 0)
        tb_log(TB_LOG_ERROR, "report %s: write failed", path);
    else if (c->obs->report_written)
        c->obs->report_written(c->obs->arg, path);
}

/* The one exit: finishes the run row the state says exists, then releases
 * everything. */
static void end_run(run_ctx *c, const char *err) {
    char e[TB_ERR_LEN];
    if (c->state >= ST_RUN_ROW && c->state < ST_SAMPLING) {
        /* ended before anything was measured: the error and the status only */
        tb_coord_note(c, "error", err);
        if (tb_store_finish_run(c->store, c->run_id, c->status, -1, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
    } else if (c->state >= ST_SAMPLING) {
        if (tb_store_finish_run(c->store, c->run_id, c->status, c->saturation, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
        if (c->o->report_path && c->store) write_report(c);
    }
    release(c);
    if (c->state >= ST_SAMPLING) {
        advance(c, ST_FINISHED);
        if (c->obs->run_done) c->obs->run_done(c->obs->arg, c->run_id, c->status);
    }
}

int tb_coordinator_run(const tb_run_opts *o, int64_t *run_id, char *err) {
    run_ctx c;
    int rc;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.obs = o->observer ? o->observer : &silent;
    c.status = TB_RUN_COMPLETE;
    c.saturation = -1;
    c.run_id = -1;
    c.phase_other_cpu_pct = NAN;
    for (int i = 0; i < o->levels.n; i++)
        if (o->levels.tiles[i] > c.max_tiles) c.max_tiles = o->levels.tiles[i];
    c.levels_total = o->levels.n * o->repeat * tb_coord_levels_per_level(o);

    if ((rc = open_instruments(&c, err)) != TB_EXIT_OK || (rc = tb_coord_ranging_check(&c, err)) != TB_EXIT_OK ||
        (rc = begin_run_row(&c, err)) != TB_EXIT_OK || (rc = bring_sut_up(&c, err)) != TB_EXIT_OK ||
        (rc = start_sampling(&c, err)) != TB_EXIT_OK || (rc = measure_idle(&c, err)) != TB_EXIT_OK ||
        (rc = sweep(&c, err)) != TB_EXIT_OK)
        goto end;
    check_idle_against_load(&c);
    if (tb_coord_stopped(&c)) {
        progress_end(&c);
        c.status = TB_RUN_INTERRUPTED;
        rc = TB_EXIT_ABORTED;
        tb_seterr(err, "interrupted: levels finished so far are stored; run marked interrupted");
        tb_coord_note(&c, "warning", "interrupted by signal");
    }
    if (strcmp(c.status, TB_RUN_COMPLETE) == 0 && calibrate(&c, err) != TB_EXIT_OK) rc = TB_EXIT_ABORTED;
end:
    *run_id = c.state >= ST_RUN_ROW ? c.run_id : -1;
    end_run(&c, err);
    return rc;
}
