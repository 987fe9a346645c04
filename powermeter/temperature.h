/*
 * temperature.h: inlet temperature sources, beside the power meters. A
 * source is named by a URI and gives one reading in degrees Celsius:
 *   ptd+temp://HOST[:PORT]  a SPEC PTDaemon in temperature mode (its
 *                           Identify says mode=temperature; port 8889 by
 *                           default, the one the benchmarks use for it)
 *   hwmon:NAME[/tempK]      the Linux hwmon device whose name file is NAME
 *                           (/sys/class/hwmon/hwmonN/tempK_input, K = 1 by
 *                           default), millidegrees Celsius
 *   hwmon:/PATH             a tempK_input file named by its path
 *   file:PATH               a file holding one number in degrees Celsius,
 *                           read again at each sample (a sensor another
 *                           program writes, or a test's trace)
 * A sampler reads every source once a second on its own thread and answers
 * the minimum, mean and maximum over a time window (a phase, active idle),
 * and the readings themselves (stored one by one, table temperature_samples).
 * Sources measure; they never store or judge.
 */
#ifndef TB_POWERMETER_TEMPERATURE_H
#define TB_POWERMETER_TEMPERATURE_H

#include <stdint.h>

#include "common/tb_common.h"

#define TB_TEMP_PTD_DEFAULT_PORT "8889"
#define TB_TEMP_MAX_SOURCES      4
/* SPECpower: the inlet air of the SUT must be at least 20 degrees C. */
#define TB_TEMP_MIN_INLET_C 20.0
/* Readings outside this band are no inlet temperature (a wrong file, a
 * sensor unplugged): the sample is dropped, and said so. */
#define TB_TEMP_PLAUSIBLE_MIN_C (-40.0)
#define TB_TEMP_PLAUSIBLE_MAX_C 125.0

typedef struct tb_temp_source tb_temp_source;

/*
 * Opens a source and takes one reading, so that a bad source fails before
 * the run begins. Returns 0; -1 with err naming the URI for a configuration
 * error (unknown scheme, no such file or hwmon device, a reading that is not
 * a number or not plausible, a daemon not in temperature mode); -2
 * (TB_METER_EUNREACH) with err when a PTDaemon does not answer.
 */
int tb_temp_open(const char *uri, tb_temp_source **out, char *err) TB_WUR;
/* One reading now, degrees C. 0, or -1 with err naming the URI. */
int tb_temp_read(tb_temp_source *t, double *celsius, char *err);
const char *tb_temp_uri(const tb_temp_source *t); /* as given (no secrets: none of these takes one) */
void tb_temp_close(tb_temp_source *t);            /* NULL is a no-op */

/* Parsing, for tests. A file's text: one number (surrounding white space
 * allowed), times scale (0.001 for hwmon millidegrees). 0, or -1 with why. */
int tb_temp_parse_text(const char *text, double scale, double *celsius, char *why);
/* One PTDaemon temperature-mode RL sample line: the number after the field
 * "Temperature" ("Time,11-26-2026 10:00:01.000,Temperature,23.50,Humidity,40.0").
 * 0, or -1 when there is none, it does not parse, or it is PTD's error value (-1). */
int tb_temp_parse_ptd_sample(const char *line, double *celsius);

/* The readings of a window: count, minimum, mean and maximum (NaN when n is 0). */
typedef struct tb_temp_stats {
    int n;
    double min_c, mean_c, max_c;
} tb_temp_stats;

typedef struct tb_temp_sampler tb_temp_sampler;
/* Starts reading srcs (borrowed, n >= 1) every interval_us on a thread. 0 or -1 with err. */
int tb_temp_sampler_start(tb_temp_source **srcs, int n, uint64_t interval_us, tb_temp_sampler **out, char *err) TB_WUR;
/* Every source's readings taken in [t0_us, t1_us) (tb_now_us clock) together. */
void tb_temp_sampler_window(tb_temp_sampler *s, uint64_t t0_us, uint64_t t1_us, tb_temp_stats *out);
/* One reading: the source's index in the sampler's list, when it was taken
 * (tb_now_us's clock and the wall clock) and its value. */
typedef struct tb_temp_reading {
    int source;
    uint64_t mono_us;
    int64_t wall_us;
    double celsius;
} tb_temp_reading;
/* Every source's readings taken in [t0_us, t1_us), in the order taken, into
 * *out (malloc'd; NULL when none; the caller frees). Returns their count:
 * the same readings tb_temp_sampler_window summarizes. */
int tb_temp_sampler_readings(tb_temp_sampler *s, uint64_t t0_us, uint64_t t1_us, tb_temp_reading **out);
/* Failed readings so far (each failure is logged once until the source is back). */
uint64_t tb_temp_sampler_failures(tb_temp_sampler *s);
void tb_temp_sampler_stop(tb_temp_sampler *s); /* NULL is a no-op */

#endif
