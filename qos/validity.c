/*
 * validity.c: the validity rules of a load level (see validity.h), each
 * adding its reason in the words the reports show. Shares of samples are
 * compared in integers (bad x 100 > total x 1%), so the 1% edge is exact.
 * Pure computation, no I/O.
 */
#include "qos/validity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void add(char *buf, size_t len, const char *msg) {
    size_t l = strlen(buf);
    if (l < len) snprintf(buf + l, len - l, "%s%s", l ? "; " : "", msg);
}

/* "1 missing, 2 implausible": the nonzero kinds of bad samples. */
static void breakdown(const tb_validity_input *in, char *buf, size_t len) {
    const struct {
        uint64_t n;
        const char *what;
    } kinds[] = {{in->missing, "missing"},
                 {in->invalid, "invalid"},
                 {in->overrange, "over-range"},
                 {in->implausible, "implausible"}};
    size_t l = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && l < len; k++)
        if (kinds[k].n > 0)
            l += (size_t)snprintf(buf + l, len - l, "%s%llu %s", l ? ", " : "", (unsigned long long)kinds[k].n,
                                  kinds[k].what);
}

static void bad_samples(const tb_validity_input *in, tb_validity *out) {
    uint64_t bad = in->missing + in->invalid + in->overrange + in->implausible;
    char kinds[160], msg[256];
    if (in->samples_total == 0 || bad * 100 <= in->samples_total * TB_VALIDITY_MAX_BAD_PCT) return;
    breakdown(in, kinds, sizeof kinds);
    snprintf(msg, sizeof msg, "%.1f%% of power samples missing or invalid (limit %d%%; %s)",
             100.0 * (double)bad / (double)in->samples_total, TB_VALIDITY_MAX_BAD_PCT, kinds);
    out->valid = 0;
    add(out->reason, sizeof out->reason, msg);
}

/* One sample per meter per whole second of steady state is expected; more
 * than 1% of them never arriving (not even as a bad sample) invalidates. */
static void expected_samples(const tb_validity_input *in, tb_validity *out) {
    uint64_t expected, short_by;
    char msg[128];
    if (in->meters <= 0 || !(in->steady_s >= 1)) return;
    expected = (uint64_t)in->meters * (uint64_t)floor(in->steady_s);
    if (in->samples_total >= expected) return;
    short_by = expected - in->samples_total;
    if (short_by * 100 <= expected * TB_VALIDITY_MAX_BAD_PCT) return;
    snprintf(msg, sizeof msg, "only %llu of %llu expected power samples", (unsigned long long)in->samples_total,
             (unsigned long long)expected);
    out->valid = 0;
    add(out->reason, sizeof out->reason, msg);
}

void tb_validity_add_sample(tb_validity_input *in, const tb_validity_sample *s) {
    in->samples_total++;
    if (isfinite(s->uncertainty_pct) && s->uncertainty_pct > in->max_uncertainty_pct)
        in->max_uncertainty_pct = s->uncertainty_pct;
    if (s->autorange) in->autorange++;
    if (s->implausible)
        in->implausible++;
    else if (s->overrange)
        in->overrange++;
    else if (s->missing)
        in->missing++;
    else if (s->bad)
        in->invalid++;
}

/* Each agent alone: CPU-bound, and how well its clock is known. */
static void judge_parts(const tb_validity_input *in, tb_validity *out) {
    char msg[256];
    for (int i = 0; i < in->n_parts && i < TB_VALIDITY_MAX_PARTS; i++) {
        const tb_validity_part *p = &in->parts[i];
        if (p->threads > 0 && in->steady_s > 0 &&
            p->cpu_s >= TB_VALIDITY_CPU_BOUND_FRACTION * in->steady_s * p->threads) {
            snprintf(msg, sizeof msg, "agent %s CPU-bound (%.0f%% of %d threads)", p->name,
                     100.0 * p->cpu_s / (in->steady_s * p->threads), p->threads);
            out->valid = 0;
            add(out->reason, sizeof out->reason, msg);
        }
        if (!p->clock_known) continue;
        if (p->clock_bound_us > TB_VALIDITY_CLOCK_MAX_US) {
            snprintf(msg, sizeof msg, "agent %s clock offset known only to +/- %.1f ms (limit %d ms)", p->name,
                     (double)p->clock_bound_us / 1000.0, TB_VALIDITY_CLOCK_MAX_US / 1000);
            out->valid = 0;
            add(out->reason, sizeof out->reason, msg);
        } else if (p->clock_bound_us > TB_VALIDITY_CLOCK_WARN_US && out->n_warnings < TB_VALIDITY_MAX_WARNINGS) {
            snprintf(out->warnings[out->n_warnings++], sizeof out->warnings[0],
                     "agent %s clock offset known only to +/- %.1f ms (over %d ms): its phase edges may be that far "
                     "from the others'",
                     p->name, (double)p->clock_bound_us / 1000.0, TB_VALIDITY_CLOCK_WARN_US / 1000);
        }
    }
}

/* SPECpower: the inlet air at least 20 degrees C throughout; invalid for a
 * compliant run, a warning otherwise. A compliant run without a source is
 * warned: the figure is not measured, which the reports say. */
static void judge_temperature(const tb_validity_input *in, tb_validity *out) {
    char msg[192];
    if (!in->temp_source) {
        if (in->compliant && out->n_warnings < TB_VALIDITY_MAX_WARNINGS)
            snprintf(out->warnings[out->n_warnings++], sizeof out->warnings[0],
                     "inlet temperature not measured (a compliant run should name a --temperature source)");
        return;
    }
    if (in->temp_n == 0) {
        if (out->n_warnings < TB_VALIDITY_MAX_WARNINGS)
            snprintf(out->warnings[out->n_warnings++], sizeof out->warnings[0],
                     "no inlet temperature reading in the steady window");
        return;
    }
    if (!(in->temp_min_c < TB_VALIDITY_MIN_INLET_C)) return;
    snprintf(msg, sizeof msg, "inlet temperature down to %.1f C (minimum %.0f C)", in->temp_min_c,
             TB_VALIDITY_MIN_INLET_C);
    if (in->compliant) {
        out->valid = 0;
        add(out->reason, sizeof out->reason, msg);
    } else if (out->n_warnings < TB_VALIDITY_MAX_WARNINGS) {
        snprintf(out->warnings[out->n_warnings++], sizeof out->warnings[0], "%s", msg);
    }
}

int tb_validity_judge(const tb_validity_input *in, tb_validity *out) {
    char msg[192];
    memset(out, 0, sizeof *out);
    out->valid = 1;
    if (in->no_valid_meter) {
        out->valid = 0;
        add(out->reason, sizeof out->reason, "no valid power samples from a meter");
    }
    bad_samples(in, out);
    expected_samples(in, out);
    /* SPECpower: a meter's uncertainty above 1% invalidates; auto-ranging
     * during measurement is a warning */
    if (in->max_uncertainty_pct > TB_VALIDITY_MAX_UNCERTAINTY_PCT) {
        snprintf(msg, sizeof msg, "meter uncertainty up to %.2f%% (limit %.0f%%)", in->max_uncertainty_pct,
                 TB_VALIDITY_MAX_UNCERTAINTY_PCT);
        out->valid = 0;
        add(out->reason, sizeof out->reason, msg);
    }
    if (in->calibration[0] && in->compliant) {
        char cal[sizeof in->calibration + 64];
        snprintf(cal, sizeof cal, "%s (a compliant run needs a calibration within a year)", in->calibration);
        out->valid = 0;
        add(out->reason, sizeof out->reason, cal);
    } else if (in->calibration[0] && out->n_warnings < TB_VALIDITY_MAX_WARNINGS) {
        snprintf(out->warnings[out->n_warnings++], sizeof out->warnings[0], "%.150s (over a year, or none)",
                 in->calibration);
    }
    judge_temperature(in, out);
    if (in->autorange > 0 && out->n_warnings < TB_VALIDITY_MAX_WARNINGS)
        snprintf(out->warnings[out->n_warnings++], sizeof out->warnings[0],
                 "%llu power sample%s taken while the meter was auto-ranging", (unsigned long long)in->autorange,
                 in->autorange == 1 ? "" : "s");
    if (in->compliant && in->qos_not_judged > 0) {
        /* a compliant run is long enough to judge every rule; one that is not
         * cannot claim the QoS it was meant to show */
        snprintf(msg, sizeof msg, "%d QoS rule%s not judged (too few ops); a compliant run must judge every rule",
                 in->qos_not_judged, in->qos_not_judged == 1 ? "" : "s");
        out->valid = 0;
        add(out->reason, sizeof out->reason, msg);
    }
    if (in->threads > 0 && in->steady_s > 0 &&
        in->cpu_s >= TB_VALIDITY_CPU_BOUND_FRACTION * in->steady_s * in->threads) {
        snprintf(msg, sizeof msg, "load generator CPU-bound (%.0f%% of %d threads)",
                 100.0 * in->cpu_s / (in->steady_s * in->threads), in->threads);
        out->valid = 0;
        add(out->reason, sizeof out->reason, msg);
    }
    judge_parts(in, out);
    if (in->lg_fault && in->lg_fault[0]) {
        out->valid = 0;
        add(out->reason, sizeof out->reason, in->lg_fault);
    }
    return out->valid;
}
