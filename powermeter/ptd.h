/*
 * ptd.h: the reply parsers of the SPEC PTDaemon client (ptd.c), public so
 * unit tests can feed them raw reply lines. Pure functions over one line.
 *
 * Protocol facts (from mlcommons/power-dev's client
 * and compliance checker) and SPEC's harness code for PTDaemon meters: one
 * message per line ending in "\r\n"; Uncertainty values are fractions
 * (0.01 = 1%), SPEC compares them with max_average_uncertainty / 100; RL
 * sample values are -1 for an error and -2 for a missed sample.
 */
#ifndef TB_POWERMETER_PTD_H
#define TB_POWERMETER_PTD_H

#include <stddef.h>
#include <stdint.h>

#include "powermeter/meter.h"

#define TB_PTD_DEFAULT_PORT      "8888"
#define TB_PTD_UNCERTAINTY_LIMIT 0.01 /* SPEC: invalid above 1% */

/* What a reply line is (tb_ptd_classify). */
enum {
    TB_PTD_LINE = 0,    /* an ordinary reply */
    TB_PTD_ERROR,       /* an error reply: "Error: ...", "Unknown command", "Meter busy", ... */
    TB_PTD_UNCERT_WARN, /* "WARNING: Uncertainty 1.45%, which is above..." or
                           "ERROR: Can't evaluate uncertainty of this sample!" */
};

/* Classifies one reply line (see the enum). */
int tb_ptd_classify(const char *line);

/* The Identify reply: "YokogawaWT330E,1000,1,1,1,1,0,0,1,version=...,OS=...,mode=power,...,IDN;WITH;SEMICOLONS". */
typedef struct tb_ptd_ident {
    char device[64];      /* PTDaemon's device name, e.g. "YokogawaWT330E" */
    unsigned interval_ms; /* its sample interval */
    int can_w, can_v, can_a, can_pf;
    char version[64]; /* after "version=" */
    char mode[32];    /* after "mode=": "power" or "temperature" */
    char idn[128];    /* the last field with ';' turned into ',' ("" when none or "na") */
} tb_ptd_ident;

/* Parses an Identify reply. Returns 0, or -1 when it lacks a device name and interval. */
int tb_ptd_parse_identify(const char *line, tb_ptd_ident *out);

/* "Ranges,<ampAuto>,<ampRange>,<voltAuto>,<voltRange>" (-1 = unknown; a
 * multi-channel PTD puts its sum channel first: only the first set is read). */
typedef struct tb_ptd_ranges {
    int amp_auto, volt_auto;          /* 1 auto, 0 fixed, -1 unknown */
    double amp_range_a, volt_range_v; /* <= 0 unknown */
} tb_ptd_ranges;
int tb_ptd_parse_ranges(const char *line, tb_ptd_ranges *out);

/* "Watts,avg,min,max,samples,errors,valid" over the running measurement (W, counts). */
typedef struct tb_ptd_watts {
    double avg_w, min_w, max_w;
    uint64_t samples, errors, valid;
} tb_ptd_watts;
int tb_ptd_parse_watts(const char *line, tb_ptd_watts *out);

/* "Uncertainty,avg,min,max,total,invalid,valid,unknown" (also the pre-1.4.3
 * name "Accuracy"): fractions and sample counts over the running measurement. */
typedef struct tb_ptd_uncertainty {
    double avg, min, max; /* fractions: 0.0123 = 1.23% */
    uint64_t total, invalid, valid, unknown;
} tb_ptd_uncertainty;
int tb_ptd_parse_uncertainty(const char *line, tb_ptd_uncertainty *out);
/*
 * The uncertainty of the samples PTD took between two polls of its running
 * statistics prev and now: the change of avg x total over the change of
 * total, in percent, into *pct (NaN when it cannot be evaluated). Returns
 * TB_SAMPLE_INVALID when the samples are not valid by SPEC's rule: the
 * uncertainty is above TB_PTD_UNCERTAINTY_LIMIT, PTD counted a new invalid
 * or unknown one, or it cannot be evaluated (no new sample counted, the
 * counters went back, or the result is negative or not finite); else 0.
 */
unsigned tb_ptd_sample_uncertainty(const tb_ptd_uncertainty *prev, const tb_ptd_uncertainty *now, double *pct);

/* "Last N samples" / "Last 1 sample" -> N. Returns 0, or -1 otherwise. */
int tb_ptd_parse_rl_header(const char *line, unsigned *n);

/*
 * One RL sample line "Time,MM-DD-YYYY HH:MM:SS.mmm,Watts,x,Volts,x,Amps,x,PF,x"
 * (fields after the time in any order; unknown ones skipped). Fills W, V, A,
 * PF (NaN when absent or flagged) and returns TB_SAMPLE_* flags: 0 good,
 * TB_SAMPLE_INVALID for Watts -1 (an error) or a line that does not parse,
 * TB_SAMPLE_MISSING for Watts -2 (a missed sample). Other values, negative
 * ones included, are returned as read (meter.c judges them). *wall_us gets the
 * sample's time stamp (PTD host's local time) or 0 when it does not parse.
 */
unsigned tb_ptd_parse_rl_sample(const char *line, double *w, double *v, double *a, double *pf, int64_t *wall_us);

/*
 * The channels of a multi-channel RL sample line. PTDaemon started on several
 * channels of one analyzer (its -c 1,2 option) appends a group per channel to
 * the total, "...,PF,x,Ch1,Watts,x,Volts,x,Amps,x,PF,x,Ch2,Watts,x,...".
 * For each of the n channel numbers in want, fills out[i] (W, V, A, PF as
 * tb_ptd_parse_rl_sample reads them, flags 0, INVALID or MISSING the same
 * way); a channel whose group is absent is INVALID. Returns the number of
 * channels found.
 */
int tb_ptd_parse_rl_channels(const char *line, const int *want, int n, tb_channel_sample *out);

#endif
