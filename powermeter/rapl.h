/*
 * rapl.h: what the RAPL driver (rapl.c) exposes for tests: the counter
 * arithmetic. The driver itself is reached through tb_meter_open("rapl:").
 *
 * Facts (kernel Documentation/power/powercap/powercap.rst): /sys/class/powercap/intel-rapl:N[:M]/energy_uj counts µJ
 * and wraps at max_energy_range_uj; zone names are package-N, core, uncore, dram, psys; energy_uj is readable by root
 * only since the CVE-2020-8694 fix.
 */
#ifndef TB_POWERMETER_RAPL_H
#define TB_POWERMETER_RAPL_H

#include <stdint.h>

/* Environment variable naming a fake powercap root for tests (default
 * /sys/class/powercap). Read at open. */
#define TB_RAPL_ROOT_ENV "TB_RAPL_ROOT"

/*
 * A zone's power ceiling for telling a wrap from a reset, W. No package,
 * DRAM or psys zone of one socket draws 2 kW (the largest server packages
 * are rated around 500 W), so an interval that would imply more is not
 * energy that was used.
 */
#define TB_RAPL_ZONE_MAX_W 2000.0

/*
 * A counter's energy between two readings dt_us apart, into *energy_uj.
 * Returns 0 (counted forward), 1 (wrapped once), or -1 when the interval
 * has no trustworthy energy:
 *  - cur >= prev: a forward count, cur - prev;
 *  - cur < prev: a wrap only if it is one that real power could make: the
 *    wrap's energy (max_range_uj - prev) + cur is within max_w over dt_us,
 *    which needs prev near max_range_uj and cur near 0. Any other drop is a
 *    reset (a reboot, an rmmod/modprobe of intel_rapl, a firmware reset of
 *    the counter): -1, never (max_range_uj - prev) + cur, which for a
 *    counter reset halfway up a 262 kJ range would be a 131 kW "sample";
 *  - -1 also for cur or prev above a known max_range_uj (a bad read), a
 *    drop with no range known (0), and a forward count beyond max_w over
 *    dt_us (a bad read, or a reset followed by more counting than possible).
 * A reset within max_w x dt_us of the top of the range cannot be told from
 * a wrap; the energy it gives is then bounded by max_w x dt_us anyway.
 */
int tb_rapl_interval(uint64_t prev_uj, uint64_t cur_uj, uint64_t max_range_uj, uint64_t dt_us, double max_w,
                     uint64_t *energy_uj);

/*
 * The driver never takes a delta over less than this: the counters update
 * about once a millisecond, so a shorter delta is mostly quantization. When a
 * sample is asked for sooner after the previous read (the first sample of
 * `meter probe`, right after open), the driver waits out the rest and reads
 * then, rather than report the sample invalid.
 */
#define TB_RAPL_MIN_INTERVAL_US 20000u

#endif
