/*
 * rapl.h: what the RAPL driver (rapl.c) exposes for tests: the counter
 * arithmetic. The driver itself is reached through tb_meter_open("rapl:").
 *
 * Facts (kernel Documentation/power/powercap/powercap.rst, shared/notes/
 * meters.md): /sys/class/powercap/intel-rapl:N[:M]/energy_uj counts µJ and
 * wraps at max_energy_range_uj; zone names are package-N, core, uncore, dram,
 * psys; energy_uj is readable by root only since the CVE-2020-8694 fix.
 */
#ifndef TB_POWERMETER_RAPL_H
#define TB_POWERMETER_RAPL_H

#include <stdint.h>

/* Environment variable naming a fake powercap root for tests (default
 * /sys/class/powercap). Read at open. */
#define TB_RAPL_ROOT_ENV "TB_RAPL_ROOT"

/*
 * Energy between two readings of one counter, µJ. When cur < prev the
 * counter wrapped once: the energy is (max_range_uj - prev) + cur. A cur
 * above max_range_uj (a bad read) or a zero max_range_uj with a wrap gives 0.
 */
uint64_t tb_rapl_delta_uj(uint64_t prev_uj, uint64_t cur_uj, uint64_t max_range_uj);

#endif
