/*
 * accuracy.h: what a lab meter's own figures say about a sample and about
 * the meter: the uncertainty of a Yokogawa W reading from the model's
 * published accuracy (powermeter/data/yokogawa_accuracy.txt), whether SPEC's
 * PTDaemon accepts the model (powermeter/data/spec_accepted.txt), and the
 * calibration date a lab meter URI carries (calibrated=YYYY-MM-DD). Both
 * tables are compiled in from their data files (CMakeLists.txt). Pure
 * functions over the tables and their arguments; no I/O.
 */
#ifndef TB_POWERMETER_ACCURACY_H
#define TB_POWERMETER_ACCURACY_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"
#include "powermeter/meter.h"

/* One model's active power accuracy at 45..66 Hz, crest factor 3:
 * +-(reading_pct % of reading + range_pct % of range). */
typedef struct tb_yoko_accuracy {
    char model[32];     /* the table's model, e.g. "WT310E" */
    double reading_pct; /* % of reading */
    double range_pct;   /* % of range (range = V range x A range) */
    double cf6_factor;  /* the range term's factor at crest factor 6 */
    char source[200];   /* the manual, section and figure's date */
} tb_yoko_accuracy;

/*
 * Finds the row of the accuracy table whose model is the longest
 * case-insensitive prefix of model ("WT310E" for "WT310E", "WT310" for
 * "WT310", "WT210" for "WT210 (760401)"). Returns 1 with *out, or 0 when
 * the table has no such model (its samples then have no uncertainty).
 */
int tb_yoko_accuracy_find(const char *model, tb_yoko_accuracy *out);

/*
 * The uncertainty of one W reading in percent of the reading:
 *   (reading_pct x W + range_pct x F x range_W) / W, with
 *   range_W = V range x A range x elements, F = cf6_factor at crest factor
 *   >= 6, else 1.
 * Elements > 1 (SIGMA, the sum of up to 3 elements) adds each element's
 * range term (the same ranges on every element). NaN when W <= 0 or is not
 * finite, or a range is unknown (<= 0). A pure function, for tests.
 */
double tb_yoko_uncertainty_pct(const tb_yoko_accuracy *acc, double watts, double volt_range_v, double amp_range_a,
                               double crest_factor, int elements);

/*
 * Whether SPEC's PTDaemon accepts the meter model named (as *IDN? or PTD's
 * Identify gives it): 1 yes, 0 no, -1 unknown (no model, or the list is
 * marked incomplete and does not name it). A PTD meter is judged by the
 * analyzer PTD drives. Text for reports: "yes", "no", "unknown".
 */
int tb_meter_spec_accepted(const char *model);
const char *tb_meter_spec_accepted_text(int accepted);
/* Where the accepted list comes from (its source line), for the reports. */
const char *tb_meter_spec_accepted_source(void);

/* A calibration older than this many days is stale (a warning; invalid
 * under --preset compliant). */
#define TB_METER_CALIBRATION_MAX_DAYS 365

/*
 * Parses a calibration date "YYYY-MM-DD" (a real calendar day, 1970..9999)
 * into days since 1970-01-01. A date after today (today_days, the same
 * count) is an error too. Returns 0, or -1 with err naming the value.
 */
int tb_meter_parse_calibrated(const char *val, int64_t today_days, int64_t *days, char *err) TB_WUR;
/* Today (UTC) as days since 1970-01-01. */
int64_t tb_meter_today_days(void);

/*
 * Whether a lab meter's calibration is in doubt on day today_days: 1 with why
 * ("meter 'wt310://...': calibrated 2024-05-01, 581 days ago (over 365)" or
 * "... : no calibrated=YYYY-MM-DD given") when it is a lab meter (info->lab)
 * with no date or one older than TB_METER_CALIBRATION_MAX_DAYS; 0 otherwise
 * (also for estimate:, rapl:, ipmi: and the other meters that are not lab
 * instruments: they have no calibration to state).
 */
int tb_meter_calibration_stale(const tb_meter_info *info, int64_t today_days, char *why, size_t len);

#endif
