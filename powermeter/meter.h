/*
 * meter.h: the power meter interface. A meter is named by a URI
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
#define TB_SAMPLE_INVALID   0x01u /* NaN, garbage, out of uncertainty */
#define TB_SAMPLE_MISSING   0x02u /* no reply in time */
#define TB_SAMPLE_OVERRANGE 0x04u /* over range (e.g. Yokogawa 9.9E+37) */
#define TB_SAMPLE_ESTIMATED 0x08u /* a model, not a measurement */
/* A warning, not BAD: the meter was auto-ranging when the sample was taken
 * (SPECpower: no auto-ranging during measurement; tilebench makes it a level
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
#define TB_SAMPLE_BAD  (TB_SAMPLE_INVALID | TB_SAMPLE_MISSING | TB_SAMPLE_OVERRANGE | TB_SAMPLE_IMPLAUSIBLE)

/* Channels of one meter read at once (PTDaemon multi-channel, Yokogawa
 * elements 1..3): at most this many. */
#define TB_METER_MAX_CHANNELS 3

/* One channel's part of a sample: its own readings, flags and reason. */
typedef struct tb_channel_sample {
    int channel;                   /* its number on the meter (tb_meter_info.channel[]) */
    double watts, volts, amps, pf; /* NaN when unknown */
    unsigned flags;                /* TB_SAMPLE_* of this channel alone */
    int reason;                    /* TB_REASON_*; 0 when the channel's reading is good */
} tb_channel_sample;

typedef struct tb_sample {
    uint64_t mono_us;       /* CLOCK_MONOTONIC when taken */
    int64_t wall_us;        /* CLOCK_REALTIME when taken */
    double watts;           /* W; NaN when unknown */
    double volts, amps, pf; /* NaN when the meter does not report them */
    double uncertainty_pct; /* the meter's own uncertainty of this W, %; NaN unknown (PTD) */
    unsigned flags;
    int reason; /* TB_REASON_*: why the sample is bad (tb_meter_sample sets it); 0 when it is not */
    /* A meter read as several channels (tb_meter_info.nchannels > 1): each
     * channel's part, in the info's order. The sample itself is then their
     * sum: watts = the sum of the channels' W, V/A/PF NaN, and it is bad when
     * any channel is (tb_meter_sample sums and judges; a driver fills ch[]
     * and sets nch). nch is 0 for a meter of one input. */
    int nch;
    tb_channel_sample ch[TB_METER_MAX_CHANNELS];
} tb_sample;

/*
 * Why a sample is bad, one code per sample (tb_sample.reason, stored with the
 * sample as tb_meter_reason_text). The first three restate the driver's own
 * flag; the IMPLAUSIBLE ones come from tb_meter_plausible.
 */
enum {
    TB_REASON_NONE = 0,
    TB_REASON_MISSING,     /* TB_SAMPLE_MISSING: no reply in time, or the driver failed */
    TB_REASON_INVALID,     /* TB_SAMPLE_INVALID: no data, a reply that does not parse, uncertainty */
    TB_REASON_OVERRANGE,   /* TB_SAMPLE_OVERRANGE: the meter says its input is over range */
    TB_REASON_NEGATIVE,    /* IMPLAUSIBLE: active power below 0 W */
    TB_REASON_NONFINITE,   /* IMPLAUSIBLE: W NaN or infinite, yet not flagged by the driver */
    TB_REASON_ABOVE_RANGE, /* IMPLAUSIBLE: W above what the fixed V and A ranges can measure */
    TB_REASON_VAPF,        /* IMPLAUSIBLE: V x A x PF disagrees with W beyond the meter's accuracy */
    TB_REASON_NEGATIVE_VA, /* IMPLAUSIBLE: an RMS voltage or current below 0 */
    TB_REASON_COUNT
};

/* How a meter input range is set: tb_meter_info.volt_mode / amp_mode. */
enum { TB_RANGE_UNKNOWN = 0, TB_RANGE_FIXED = 1, TB_RANGE_AUTO = 2 };

/*
 * What a meter says about itself at open, for the report (so that "the
 * report states the meter model, *IDN?, ranges and uncertainty"). Every
 * numeric field is 0 when the meter does not tell (a zero range, rate or
 * window is meaningless, so 0 cannot be mistaken for a reading).
 */
typedef struct tb_meter_info {
    char uri[256];           /* redacted: passwords replaced with "***" */
    char model[64];          /* e.g. "estimate", "WT310" */
    char idn[128];           /* *IDN? or equivalent; "" when none */
    int estimated;           /* 1 when watts come from a model, not a meter */
    char serial[64];         /* instrument serial number (3rd *IDN? field); "" unknown */
    char firmware[64];       /* firmware version (4th *IDN? field); "" unknown */
    char driver[64];         /* how it is read, e.g. "ptd 1.9.2 (YokogawaWT310)"; "" none */
    double volt_range_v;     /* voltage range read back from the meter, V; 0 unknown */
    double amp_range_a;      /* current range read back, A; 0 unknown */
    int volt_mode, amp_mode; /* TB_RANGE_*: fixed or auto-ranging, as read back */
    double crest_factor;     /* 3 or 6 on Yokogawa; 0 unknown */
    unsigned update_ms;      /* the meter's own update/sample interval, ms; 0 unknown */
    unsigned avg_window_ms;  /* averaging window of one reading (IPMI DCMI), ms; 0 unknown */
    int elements;            /* input elements summed into W (Yokogawa SIGMA: up to 3); 0 or 1: one */
    int lab;                 /* 1 for a lab meter (wt310:, wt210:, yokogawa+serial:, ptd:): calibrated= applies */
    char calibrated[11];     /* calibrated=YYYY-MM-DD of the URI; "" none given */
    char accuracy[256];      /* the published accuracy the driver applies ("0.1% of reading + ..."); "" none */
    int nchannels;           /* channels read and summed (channels= of the URI); 0 or 1: one input */
    int channel[TB_METER_MAX_CHANNELS]; /* their numbers on the meter (element 1..3, PTD's Ch1..) */
    double model_idle_w;                /* estimate: the model's W at 0% CPU; 0 for a meter */
    double model_max_w;                 /* estimate: the model's W at 100% CPU (its ceiling); 0 for a meter */
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
    /* Sets the input ranges at run time (the ranging pass): volts and amps
     * in V and A, or 0 for auto-range; then the ranges are read back and
     * identify reports them. 0, or -1 with err (the meter refused or did not
     * answer). NULL: the meter has no ranges to set (ranging refuses it). */
    int (*set_ranges)(void *self, double volts, double amps, char *err);
} tb_meter_driver;

/*
 * Opens a meter by URI: "wt310://HOST:PORT", "wt210://HOST:PORT",
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
/*
 * One sample, 0 on success (the sample may still be flagged, e.g. INVALID).
 * On driver error returns -1 with err ("meter '<uri>': why") and fills *s as
 * MISSING, stamped now, watts/volts/amps/pf NaN. Samples of an estimated
 * meter always carry TB_SAMPLE_ESTIMATED.
 */
int tb_meter_sample(tb_meter *m, tb_sample *s, char *err);
void tb_meter_close(tb_meter *m); /* NULL is a no-op */

/* 1 when the meter's driver can set its ranges at run time (set_ranges). */
int tb_meter_can_range(const tb_meter *m);
/*
 * Sets the meter's V and A ranges (0: auto-range) while a poller may be
 * sampling it (the two take turns), then refreshes its info with the ranges
 * read back. 0, or -1 with err ("meter '<uri>': ..."; a meter that cannot
 * set ranges says so).
 */
int tb_meter_set_ranges(tb_meter *m, double volts, double amps, char *err);
/* A copy of the info taken between samples (safe while a poller runs). */
void tb_meter_info_now(tb_meter *m, tb_meter_info *out);

/*
 * The plausibility check that tb_meter_sample applies to every driver's
 * samples, after the driver's own flags (a pure function, for tests). A
 * sample the driver already flagged MISSING, INVALID or OVERRANGE is not
 * judged again (returns TB_REASON_NONE). Otherwise, in this order:
 *  - TB_REASON_NONFINITE: watts is NaN or infinite;
 *  - TB_REASON_NEGATIVE: watts < 0 (a server's power feed only consumes);
 *  - TB_REASON_ABOVE_RANGE: watts > tb_meter_max_watts(info). With both
 *    ranges fixed and known: the largest instantaneous power the inputs can
 *    take is the measurable peak voltage times the measurable peak current,
 *    and a mean (active) power cannot exceed it. On a Yokogawa the crest
 *    factor is the largest multiple of a range that an input takes as a peak
 *    (WT310E user's manual IM WT310E-01EN, 2.7), so the bound is
 *    CF x V range x CF x A range, times the elements summed (SIGMA). Without
 *    a crest factor CF = 3, the smallest Yokogawa's meters offer: 9 x V range
 *    x A range is still above the 7.84 x V range x A range that a WT310E
 *    shows before it signals over-range (280% of range on each input at crest
 *    factor 6A, IM WT310E-02EN 1.5). A range that auto-ranges or is unknown
 *    counts as 3 x the model's largest range (meter.c's table: WT310/WT330/
 *    WT210 600 V and 20 A, WT310HC/EH 40 A, WT500 1000 V and 40 A); with the
 *    model unknown too, the bound is TB_PLAUSIBLE_FEED_MAX_W;
 *  - TB_REASON_NEGATIVE_VA: an RMS voltage or current read below 0;
 *  - TB_REASON_VAPF: V and A are finite, one element is read, and
 *    |W - V x A x PF| is above the tolerance below, or, PF not read,
 *    |W| > V x A + the tolerance (|PF| <= 1). A Yokogawa computes
 *    PF = P / (U x I) from its own readings (IM WT310E-02EN
 *    7.4.3), so the two agree up to the rounding of five digits unless PF was
 *    clipped at 1, which only the measurement errors of P, U and I can cause.
 *    The tolerance is their sum taken at the WT310E's widest stated accuracy
 *    for DC to 100 kHz without the frequency term, +-(0.5% of reading + 0.5%
 *    of range) each (IM WT310E-02EN 7.3; range error doubled at crest factor
 *    6): 1.5% of the larger of |W| and |V x A x PF| (V x A without PF), plus
 *    (when both ranges are known) 1.5% of V range x A range, x2 at CF 6.
 * Returns the TB_REASON_* code. When why is not NULL it receives a one-line
 * explanation with the numbers ("W -27.1 < 0").
 */
#define TB_PLAUSIBLE_DEFAULT_CREST 3.0
#define TB_PLAUSIBLE_VAPF_READING  0.015 /* 3 x 0.5% of reading */
#define TB_PLAUSIBLE_VAPF_RANGE    0.015 /* 3 x 0.5% of range (x2 at crest factor 6) */
/* The most one meter feed can carry when neither ranges nor model bound W: a
 * 3-phase 415 V (line to line) 125 A rack feed, sqrt(3) x 415 x 125 = 89.8
 * kVA, rounded up. No single server or rack a tile runs on draws more. */
#define TB_PLAUSIBLE_FEED_MAX_W 90000.0
int tb_meter_plausible(const tb_meter_info *info, const tb_sample *s, char *why, size_t len);
/* The bound tb_meter_plausible uses for TB_REASON_ABOVE_RANGE, W (always > 0:
 * from the ranges, the model's largest ranges, or TB_PLAUSIBLE_FEED_MAX_W). */
double tb_meter_max_watts(const tb_meter_info *info);
/* Short fixed text of a reason code ("implausible: negative active power"),
 * stored with each bad sample; "" for TB_REASON_NONE or an unknown code. */
const char *tb_meter_reason_text(int reason);

/*
 * The input elements (channels) of a Yokogawa model as *IDN? names it
 * (case-insensitive prefix): WT310*, WT210 one; WT332* two; WT333*, WT500
 * three. 0 when the model is not known (the caller cannot check a channel).
 */
int tb_meter_model_channels(const char *model);

/*
 * Sums the channels of s (s->nch > 0) into s itself, after judging each
 * channel alone with tb_meter_plausible (as one element of info): watts is
 * the sum, V, A and PF NaN; every BAD flag and AUTORANGE of a channel is
 * the sample's too, and the reason is the first bad channel's. A sample
 * with a bad channel is bad whatever its sum (one channel's bad samples make
 * the level invalid). A pure function, for tests.
 */
void tb_meter_sum_channels(const tb_meter_info *info, tb_sample *s);

#endif
