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
/* A warning, not BAD: the meter was auto-ranging when the sample was taken
 * (SPECpower: no auto-ranging during measurement; design.md makes it a level
 * warning). */
#define TB_SAMPLE_AUTORANGE 0x10u
/* Physically implausible: negative or non-finite W, W beyond what the
 * configured V x A range (x crest factor) can measure, or V, A, PF that
 * disagree with W beyond the meter's accuracy. Set by one shared check in
 * the meter front end (meter.c), never by a driver. */
#define TB_SAMPLE_IMPLAUSIBLE 0x20u
/* A warning, not BAD: the reading's own minimum, maximum and average over
 * its averaging window are equal (IPMI DCMI), so the BMC may not average at
 * all; over many readings that is the "not averaged" verdict (ipmi.h). */
#define TB_SAMPLE_FLAT 0x40u
#define TB_SAMPLE_BAD (TB_SAMPLE_INVALID | TB_SAMPLE_MISSING | TB_SAMPLE_OVERRANGE | TB_SAMPLE_IMPLAUSIBLE)

typedef struct tb_sample {
    uint64_t mono_us; /* CLOCK_MONOTONIC when taken */
    int64_t wall_us;  /* CLOCK_REALTIME when taken */
    double watts;     /* W; NaN when unknown */
    double volts, amps, pf; /* NaN when the meter does not report them */
    double uncertainty_pct; /* the meter's own uncertainty of this W, %; NaN unknown (PTD) */
    unsigned flags;
} tb_sample;

/* How a meter input range is set: tb_meter_info.volt_mode / amp_mode. */
enum { TB_RANGE_UNKNOWN = 0, TB_RANGE_FIXED = 1, TB_RANGE_AUTO = 2 };

/*
 * What a meter says about itself at open, for the report (design.md: "the
 * report states the meter model, *IDN?, ranges and uncertainty"). Every
 * numeric field is 0 when the meter does not tell (a zero range, rate or
 * window is meaningless, so 0 cannot be mistaken for a reading).
 */
typedef struct tb_meter_info {
    char uri[256];    /* redacted: passwords replaced with "***" */
    char model[64];   /* e.g. "estimate", "WT310" */
    char idn[128];    /* *IDN? or equivalent; "" when none */
    int estimated;    /* 1 when watts come from a model, not a meter */
    char serial[64];  /* instrument serial number (3rd *IDN? field); "" unknown */
    char firmware[64]; /* firmware version (4th *IDN? field); "" unknown */
    char driver[64];  /* how it is read, e.g. "ptd 1.9.2 (YokogawaWT310)"; "" none */
    double volt_range_v; /* voltage range read back from the meter, V; 0 unknown */
    double amp_range_a;  /* current range read back, A; 0 unknown */
    int volt_mode, amp_mode; /* TB_RANGE_*: fixed or auto-ranging, as read back */
    double crest_factor;     /* 3 or 6 on Yokogawa; 0 unknown */
    unsigned update_ms;      /* the meter's own update/sample interval, ms; 0 unknown */
    unsigned avg_window_ms;  /* averaging window of one reading (IPMI DCMI), ms; 0 unknown */
} tb_meter_info;

typedef struct tb_meter tb_meter;

typedef struct tb_meter_driver {
    const char *scheme; /* URI scheme without ':' e.g. "estimate" */
    /* Opens from the full URI; *self owned by the driver. 0, or -1 with err
     * for a bad URI, or TB_METER_EUNREACH with err when the URI is fine but
     * the meter (or its BMC or daemon) did not answer. */
    int (*open)(const char *uri, void **self, char *err);
    /* Fills model/idn/estimated (uri is filled by the caller). 0 or -1 (the
     * meter did not answer: tb_meter_open returns TB_METER_EUNREACH). */
    int (*identify)(void *self, tb_meter_info *info, char *err);
    /* Takes one sample now. Returns 0 with *s filled (possibly flagged), or -1
     * with err when the meter failed (the caller records a MISSING sample). */
    int (*sample)(void *self, tb_sample *s, char *err);
    void (*close)(void *self);
} tb_meter_driver;

/*
 * Opens a meter by URI (design.md): "wt310://HOST:PORT", "wt210://HOST:PORT",
 * "yokogawa+serial:///dev/ttyUSB0?model=wt310&baud=9600", "ptd://HOST:8888",
 * "ipmi://USER:PASS@HOST[:PORT]?method=dcmi|sensor&sensor=NAME", "ipmi:local",
 * "rapl:", "estimate:?idle=W&max=W", or "auto" (rapl:, then ipmi:local, else
 * estimate: and then says so in its info). Each driver file documents its
 * parameters.
 * Returns 0; -1 with err naming the URI for a configuration error ("meter
 * 'foo:': unknown scheme", a bad parameter); TB_METER_EUNREACH with err when
 * the URI is valid but the meter did not answer (connection refused, timeout,
 * IPMI authentication failed): the CLI exits 3 for that, 2 for the former.
 * Caller closes with tb_meter_close.
 */
#define TB_METER_EUNREACH (-2)
int tb_meter_open(const char *uri, tb_meter **out, char *err) TB_WUR;
/*
 * Opens a meter with an explicit driver, bypassing the scheme table: for
 * tests (fake meters) and for drivers not registered yet. drv is borrowed and
 * must outlive the meter; uri is passed to drv->open as is and stored
 * redacted. Returns 0, or -1 with err. Caller closes with tb_meter_close.
 */
int tb_meter_open_driver(const tb_meter_driver *drv, const char *uri, tb_meter **out, char *err) TB_WUR;
const tb_meter_info *tb_meter_get_info(const tb_meter *m);
/* 1 when uri names a registered scheme (or "auto"), else 0: lets the CLI
 * tell a usage error (exit 2) from a meter that cannot be reached. */
int tb_meter_scheme_known(const char *uri);
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
