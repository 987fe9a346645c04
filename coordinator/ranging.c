/*
 * ranging.c: the ranging pass of a load level (docs/meters.md, "Ranging").
 * At the start of warm-up, with the level's load applied, every meter
 * auto-ranges for the ranging interval (in a level without warm-up: at the
 * end of ramp-up, once every user has started, ending TB_RANGING_SETTLE_US
 * before the first phase); the largest RMS V and A its samples
 * read then are the level's peaks, and each meter gets the smallest fixed
 * ranges of its list (powermeter/ranges.h) that hold them with headroom,
 * before the rest of warm-up and the measured phases. The choice is stored
 * (level_ranges) and told as an event of the run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/run_ctx.h"
#include "powermeter/ranges.h"

int tb_coord_ranging_in_ramp_up(const run_ctx *c) { return c->o->ranging_us && c->o->stages.warm_up_us == 0; }

uint64_t tb_coord_stagger_us(const run_ctx *c) {
    const tb_stage_def *sd = &c->o->stages;
    if (!tb_coord_ranging_in_ramp_up(c) || sd->ramp_up_us < c->o->ranging_us + TB_RANGING_SETTLE_US)
        return sd->ramp_up_us;
    return sd->ramp_up_us - c->o->ranging_us - TB_RANGING_SETTLE_US;
}

int tb_coord_ranging_fits(const tb_run_opts *o, char *err) {
    if (!o->ranging_us) return 0;
    if (o->stages.warm_up_us == 0 && o->ranging_us + TB_RANGING_SETTLE_US > o->stages.ramp_up_us) {
        tb_seterr(err,
                  "the ranging interval (%.3g s) and %.3g s to settle are longer than the ramp-up it runs in "
                  "(%.3g s; the level has no warm-up): give a shorter interval, a longer ramp-up or a warm-up",
                  (double)o->ranging_us / 1e6, (double)TB_RANGING_SETTLE_US / 1e6, (double)o->stages.ramp_up_us / 1e6);
        return -1;
    }
    if (o->stages.warm_up_us > 0 && o->ranging_us > o->stages.warm_up_us) {
        tb_seterr(err,
                  "the ranging interval (%.3g s) is longer than the warm-up it runs in (%.3g s): give a shorter "
                  "interval or a longer warm-up",
                  (double)o->ranging_us / 1e6, (double)o->stages.warm_up_us / 1e6);
        return -1;
    }
    return 0;
}

int tb_coord_ranging_check(run_ctx *c, char *err) {
    const tb_run_opts *o = c->o;
    char e[TB_ERR_LEN];
    if (!o->ranging_us) return TB_EXIT_OK;
    if (tb_coord_ranging_fits(o, e) != 0) {
        tb_seterr(err, "%s: %s", o->ranging_key ? o->ranging_key : "ranging", e);
        return TB_EXIT_USAGE;
    }
    for (int i = 0; i < c->n_meters; i++)
        if (!tb_meter_can_range(c->meters[i])) {
            tb_seterr(err,
                      "%s: meter '%s' cannot have its ranges set at run time (ranging needs wt310:, wt210:, "
                      "yokogawa+serial: or ptd:)",
                      o->ranging_key ? o->ranging_key : "ranging", c->infos[i].uri);
            return TB_EXIT_USAGE;
        }
    return TB_EXIT_OK;
}

/* Folds one reading's V and A into the peaks: 1 when both were finite. */
static int fold(double volts, double amps, double *v, double *a) {
    if (!isfinite(volts) || !isfinite(amps)) return 0;
    if (volts > *v) *v = volts;
    if (amps > *a) *a = amps;
    return 1;
}

/* The largest finite RMS V and A of meter i's good samples in ps[0..n); the
 * number of samples that gave both. A meter read as several channels
 * (s->nch > 0) has no V or A of its own: its peaks are the largest of its
 * good channels' (an analyzer's range applies to every element, so it must
 * hold the largest), and a sample counts when one of its channels gave both
 * (docs/meters.md, "Ranging"). */
static int peaks(const tb_poll_sample *ps, int n, int i, double *v, double *a) {
    int k = 0;
    *v = *a = 0;
    for (int j = 0; j < n; j++) {
        const tb_sample *s = &ps[j].s;
        int got = 0;
        if (ps[j].meter != i || (s->flags & TB_SAMPLE_BAD)) continue;
        if (s->nch == 0) got = fold(s->volts, s->amps, v, a);
        for (int c = 0; c < s->nch && c < TB_METER_MAX_CHANNELS; c++)
            if (!(s->ch[c].flags & TB_SAMPLE_BAD)) got |= fold(s->ch[c].volts, s->ch[c].amps, v, a);
        k += got;
    }
    return k;
}

/* Meter i's fixed ranges from its samples over [t0, t1): set, stored, told.
 * 0, or -1 with err. */
static int fix_meter(run_ctx *c, int i, int tiles, const tb_poll_sample *ps, int n, uint64_t t0, uint64_t t1,
                     char *err) {
    tb_range_list rl;
    tb_meter_info info;
    double pv, pa, rv, ra;
    char msg[512];
    int k = peaks(ps, n, i, &pv, &pa);
    if (k == 0) {
        tb_seterr(err, "meter '%s': no valid V and A reading during the %d-tile ranging pass", c->infos[i].uri, tiles);
        return -1;
    }
    tb_meter_info_now(c->meters[i], &info);
    tb_ranges_for(info.model, info.crest_factor, &rl);
    rv = tb_range_pick(rl.volts, rl.n_volts, pv, TB_RANGING_HEADROOM);
    ra = tb_range_pick(rl.amps, rl.n_amps, pa, TB_RANGING_HEADROOM);
    if (rv < 0 || ra < 0) {
        tb_seterr(err, "meter '%s': the %d-tile peak %.4g %s x %.2f is above the largest range (%g %s)",
                  c->infos[i].uri, tiles, rv < 0 ? pv : pa, rv < 0 ? "V" : "A", TB_RANGING_HEADROOM,
                  rv < 0 ? rl.volts[rl.n_volts - 1] : rl.amps[rl.n_amps - 1], rv < 0 ? "V" : "A");
        return -1;
    }
    if (tb_meter_set_ranges(c->meters[i], rv, ra, err) != 0) return -1;
    tb_meter_info_now(c->meters[i], &c->infos[i]);
    {
        tb_ranging_row row = {tiles, c->repeat, i, c->alone ? c->alone->name : NULL, pv, pa, rv, ra, k, t0, t1};
        char e[TB_ERR_LEN];
        if (tb_store_put_ranging(c->store, c->run_id, &row, e) != 0) {
            tb_seterr(err, "%s", e);
            return -1;
        }
    }
    snprintf(msg, sizeof msg,
             "%d tiles ranging: meter %d peak %.4g V, %.4g A over %d samples; fixed ranges %g V, %g A (read back %g V, "
             "%g A)",
             tiles, i + 1, pv, pa, k, rv, ra, c->infos[i].volt_range_v, c->infos[i].amp_range_a);
    tb_coord_note(c, "info", msg);
    return 0;
}

int tb_coord_ranging(run_ctx *c, int tiles, const char *stage, char *err) {
    tb_poll_sample *ps = NULL;
    uint64_t t0, t1;
    int n, rc = 0;
    if (!c->o->ranging_us) return 0;
    for (int i = 0; i < c->n_meters; i++) {
        if (tb_meter_set_ranges(c->meters[i], 0, 0, err) != 0) return -1;
        tb_meter_info_now(c->meters[i], &c->infos[i]);
    }
    t0 = tb_now_us();
    if (tb_coord_wait(c, t0 + c->o->ranging_us, tiles, stage) != 0) return -2;
    t1 = tb_now_us();
    n = tb_poller_window(c->poller, t0, t1, &ps);
    for (int i = 0; i < c->n_meters && rc == 0; i++)
        rc = fix_meter(c, i, tiles, ps, n, t0, t1, err);
    free(ps);
    return rc;
}
