/*
 * validity.h: the validity verdict of one load level (one phase), kept
 * apart from its QoS verdict. A level is invalid when (SPECpower-style run
 * rules):
 * - some meter gave no valid power sample in the steady window;
 * - more than 1% of its power samples are bad (missing, invalid, over range
 *   or implausible);
 * - more than 1% of the expected samples (one per meter per whole second of
 *   steady state) never arrived at all;
 * - a meter reported an uncertainty above 1%;
 * - a compliant run left a QoS rule unjudged (too few ops);
 * - the load generator used >= 90% of its threads' CPU time (CPU-bound: the
 *   figures would measure the load generator, not the SUT), or one of its
 *   agents did (each is judged alone, by name);
 * - an agent's clock offset to the broker is uncertain by more than 50 ms
 *   (its phase edges may be that far from the others'; over 5 ms warns);
 * - the load generator's results are not whole (an agent lost, results
 *   that never arrived: lg_fault).
 * - a compliant run's lab meter states no calibration date, or one over a
 *   year old (otherwise a warning).
 * - a compliant run's inlet temperature fell below 20 degrees C during the
 *   level (SPECpower's minimum; otherwise a warning).
 * Samples taken while the meter was auto-ranging give a warning, not an
 * invalid level; so does a compliant run without an inlet temperature
 * source ("not measured").
 *
 * The input is plain counts and figures, so the rules can be judged (and
 * tested) without meters or a run. Pure computation, no I/O.
 */
#ifndef TB_QOS_VALIDITY_H
#define TB_QOS_VALIDITY_H

#include <stdint.h>

/* The share of power samples (bad ones, or ones that never arrived) a
 * level may lose, in percent; more invalidates it. */
#define TB_VALIDITY_MAX_BAD_PCT 1
/* A meter uncertainty above this (percent of the reading) invalidates. */
#define TB_VALIDITY_MAX_UNCERTAINTY_PCT 1.0
/* The load generator is CPU-bound at this share of its threads' capacity. */
#define TB_VALIDITY_CPU_BOUND_FRACTION 0.9

#define TB_VALIDITY_MAX_WARNINGS       4
/* An agent's clock offset bound (half its round trip to the broker) over
 * this warns; over the second it invalidates the level. */
#define TB_VALIDITY_CLOCK_WARN_US 5000
#define TB_VALIDITY_CLOCK_MAX_US  50000
#define TB_VALIDITY_MAX_PARTS     256

/* One agent of a load generator made of several. */
typedef struct tb_validity_part {
    const char *name;
    double cpu_s; /* CPU time it used for work over the window */
    int threads;
    int clock_known; /* its offset was measured; clock_bound_us is the bound */
    uint64_t clock_bound_us;
} tb_validity_part;

typedef struct tb_validity_input {
    /* Power samples of the steady window, all meters together. Each bad one
     * counts in exactly one kind (tb_validity_add_sample picks implausible,
     * then over-range, then missing, then invalid); the bad ones are their sum. */
    uint64_t samples_total;
    uint64_t missing, invalid, overrange, implausible;
    int no_valid_meter;         /* nonzero: some meter has no valid sample in the window */
    int meters;                 /* meters polled (each should give one sample per second) */
    double steady_s;            /* length of the steady window, s */
    double max_uncertainty_pct; /* largest uncertainty a sample reported; 0 or NaN when none */
    uint64_t autorange;         /* samples taken while the meter was auto-ranging */
    double cpu_s;               /* load generator CPU time (user + system) over the window */
    int threads;                /* load generator threads (capacity: threads x steady_s) */
    int compliant;              /* nonzero for a compliant run (--preset compliant) */
    int qos_not_judged;         /* QoS rules not judged for too few ops */
    int n_parts;                /* agents of the load generator; 0: it is one whole */
    tb_validity_part parts[TB_VALIDITY_MAX_PARTS];
    const char *lg_fault; /* why the load generator's results are not whole; NULL or "": they are */
    /* Why a lab meter's calibration is in doubt (none stated, or over a year
     * old: powermeter/accuracy.h); "" when every lab meter's is recent. A
     * warning, or an invalid level when compliant. */
    char calibration[256];
    /* Inlet temperature over the window (powermeter/temperature.h): temp_source
     * is nonzero when the run has a source, temp_n the readings in the window,
     * temp_min_c their minimum. */
    int temp_source;
    int temp_n;
    double temp_min_c;
} tb_validity_input;

/* The least inlet temperature a level may see, degrees C (SPECpower). */
#define TB_VALIDITY_MIN_INLET_C 20.0

typedef struct tb_validity {
    int valid;
    char reason[512]; /* "" when valid; "; "-separated reasons otherwise */
    int n_warnings;
    char warnings[TB_VALIDITY_MAX_WARNINGS][192]; /* e.g. "3 power samples taken while the meter was auto-ranging" */
} tb_validity;

/* One power sample of the window, as the meter poller flagged it: counted
 * in samples_total, a bad one in exactly one kind (the most specific first:
 * implausible, then over-range, then missing, then invalid), its
 * uncertainty in the largest seen (NaN: not reported), and auto-ranging. */
typedef struct tb_validity_sample {
    int bad; /* any of the kinds below, or otherwise unusable */
    int missing, overrange, implausible, autorange;
    double uncertainty_pct;
} tb_validity_sample;
void tb_validity_add_sample(tb_validity_input *in, const tb_validity_sample *s);

/* Judges one level; fills *out and returns out->valid. */
int tb_validity_judge(const tb_validity_input *in, tb_validity *out);

#endif
