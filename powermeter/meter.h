/*
 * meter.h: the power meter interface. A meter is named by a URI (design.md)
 * and delivers samples: a timestamp plus W, and V, A, PF where known, with
 * flags for doubtful samples. Each driver is one file exporting one
 * tb_meter_driver table; tb_meter_open dispatches on the URI scheme.
 * Meters measure; they never store or score.
 */
#ifndef TB_POWERMETER_METER_H
#define TB_POWERMETER_METER_H

#include <stdint.h>

#include "common/tb_common.h"

/* Sample flags. Any of INVALID/MISSING/OVERRANGE makes a sample invalid. */
#define TB_SAMPLE_INVALID 0x01u   /* NaN, garbage, out of uncertainty */
#define TB_SAMPLE_MISSING 0x02u   /* no reply in time */
#define TB_SAMPLE_OVERRANGE 0x04u /* over range (e.g. Yokogawa 9.9E+37) */
#define TB_SAMPLE_ESTIMATED 0x08u /* a model, not a measurement */
#define TB_SAMPLE_BAD (TB_SAMPLE_INVALID | TB_SAMPLE_MISSING | TB_SAMPLE_OVERRANGE)

typedef struct tb_sample {
    uint64_t mono_us; /* CLOCK_MONOTONIC when taken */
    int64_t wall_us;  /* CLOCK_REALTIME when taken */
    double watts;     /* W; NaN when unknown */
    double volts, amps, pf; /* NaN when the meter does not report them */
    unsigned flags;
} tb_sample;

typedef struct tb_meter_info {
    char uri[256];    /* redacted: passwords replaced with "***" */
    char model[64];   /* e.g. "estimate", "WT310" */
    char idn[128];    /* *IDN? or equivalent; "" when none */
    int estimated;    /* 1 when watts come from a model, not a meter */
} tb_meter_info;

typedef struct tb_meter tb_meter;

typedef struct tb_meter_driver {
    const char *scheme; /* URI scheme without ':' e.g. "estimate" */
    /* Opens from the full URI; *self owned by the driver. 0 or -1 with err. */
    int (*open)(const char *uri, void **self, char *err);
    /* Fills model/idn/estimated (uri is filled by the caller). 0 or -1. */
    int (*identify)(void *self, tb_meter_info *info, char *err);
    /* Takes one sample now. Returns 0 with *s filled (possibly flagged), or -1
     * with err when the meter failed (the caller records a MISSING sample). */
    int (*sample)(void *self, tb_sample *s, char *err);
    void (*close)(void *self);
} tb_meter_driver;

/*
 * Opens a meter by URI: "estimate:?idle=W&max=W", or "auto" (the best real
 * source on this host; falls back to estimate: and then says so in its info).
 * Returns 0, or -1 with err naming the URI ("meter 'foo:': unknown scheme").
 * Caller closes with tb_meter_close.
 */
int tb_meter_open(const char *uri, tb_meter **out, char *err) TB_WUR;
/*
 * Opens a meter with an explicit driver, bypassing the scheme table: for
 * tests (fake meters) and for drivers not registered yet. drv is borrowed and
 * must outlive the meter; uri is passed to drv->open as is and stored
 * redacted. Returns 0, or -1 with err. Caller closes with tb_meter_close.
 */
int tb_meter_open_driver(const tb_meter_driver *drv, const char *uri, tb_meter **out, char *err) TB_WUR;
const tb_meter_info *tb_meter_get_info(const tb_meter *m);
/*
 * One sample, 0 on success (the sample may still be flagged, e.g. INVALID).
 * On driver error returns -1 with err ("meter '<uri>': why") and fills *s as
 * MISSING, stamped now, watts/volts/amps/pf NaN. Samples of an estimated
 * meter always carry TB_SAMPLE_ESTIMATED.
 */
int tb_meter_sample(tb_meter *m, tb_sample *s, char *err);
void tb_meter_close(tb_meter *m); /* NULL is a no-op */

/*
 * Copies uri into out (len bytes, always NUL-terminated, truncated if short)
 * with any password replaced by "***": user:PASS@host in the authority, and
 * the values of password=, passwd=, pass=, pwd= query parameters.
 */
void tb_meter_redact_uri(const char *uri, char *out, size_t len);

#endif
