/*
 * telemetry.h: host telemetry of the SUT, sampled at 1 Hz beside the meter
 * poller (docs/meters.md, "Host telemetry"): CPU utilization split by mode (sar), mean
 * CPU frequency, and C-state residency (turbostat's %C0/%C1/%C6).
 *
 * A source yields counter snapshots: "local" reads /proc and /sys under a
 * root prefix ("/" normally, a fake tree in tests); "http://HOST:PORT/metrics"
 * scrapes a Prometheus node_exporter (node_exporter.h). Two snapshots give a
 * sample (tb_telem_compute). Whatever a source cannot tell (no cpufreq in a
 * VM, no cpuidle in a container, no msr device) is NaN, never invented.
 */
#ifndef TB_POWERMETER_TELEMETRY_H
#define TB_POWERMETER_TELEMETRY_H

#include <stdint.h>

#include "common/tb_common.h"

#define TB_TELEM_MAX_CSTATES 12 /* cpuidle states per CPU (C0 excluded); Linux has at most 10 */
#define TB_TELEM_NAME_LEN    24

/* CPU time by mode, the columns of /proc/stat's "cpu" line (sar -u). */
enum {
    TB_CPU_USER,
    TB_CPU_NICE,
    TB_CPU_SYSTEM,
    TB_CPU_IDLE,
    TB_CPU_IOWAIT,
    TB_CPU_IRQ,
    TB_CPU_SOFTIRQ,
    TB_CPU_STEAL,
    TB_CPU_NMODES
};

/* Where the frequency came from. */
typedef enum {
    TB_FREQ_NONE = 0,     /* not available */
    TB_FREQ_CPUFREQ,      /* mean of cpufreq scaling_cur_freq over CPUs (instantaneous) */
    TB_FREQ_APERF_MPERF,  /* TSC rate x dAPERF/dMPERF summed over CPUs: turbostat's Bzy_MHz */
    TB_FREQ_NODE_EXPORTER /* mean of node_cpu_scaling_frequency_hertz (or node_cpu_frequency_hertz) */
} tb_freq_source;

/* Name of a frequency source: "cpufreq", "aperf/mperf", "node_exporter", "n/a". */
const char *tb_telem_freq_source_name(tb_freq_source s);

/* Raw counters at one instant. Cumulative values only; rates come from two. */
typedef struct tb_telem_snap {
    uint64_t mono_us; /* CLOCK_MONOTONIC when read */
    int64_t wall_us;
    int have_cpu;                /* cpu_s is valid */
    double cpu_s[TB_CPU_NMODES]; /* seconds summed over CPUs, by mode */
    int n_cpus;                  /* CPUs seen in the CPU-time source (0: unknown) */
    tb_freq_source freq_src;
    double freq_mhz;            /* instantaneous mean (cpufreq, node_exporter); NaN otherwise */
    uint64_t tsc, aperf, mperf; /* APERF/MPERF: cpu0's TSC; APERF and MPERF summed over CPUs */
    int n_cstates;              /* 0: cpuidle not available */
    int cstate_cpus;            /* CPUs whose cpuidle was read */
    char cstate_name[TB_TELEM_MAX_CSTATES][TB_TELEM_NAME_LEN];
    double cstate_us[TB_TELEM_MAX_CSTATES]; /* residency time summed over CPUs, µs */
} tb_telem_snap;

/* One telemetry sample: the interval between two snapshots. Percentages are
 * of the interval's CPU time (0..100); NaN means not available. */
typedef struct tb_telem_sample {
    uint64_t mono_us; /* end of the interval (the later snapshot) */
    int64_t wall_us;
    uint64_t interval_us;
    double cpu_util_pct; /* 100 - idle - iowait */
    double mode_pct[TB_CPU_NMODES];
    double freq_mhz;
    tb_freq_source freq_src;
    int n_cstates; /* entries in cstate_*: "C0" first (busy: time in no idle state), then cpuidle's */
    char cstate_name[TB_TELEM_MAX_CSTATES + 1][TB_TELEM_NAME_LEN];
    double cstate_pct[TB_TELEM_MAX_CSTATES + 1];
} tb_telem_sample;

/* A steady-state aggregate (one phase of a load level): interval-weighted
 * means of the samples; NaN when not available. */
typedef struct tb_telemetry {
    double cpu_util_pct;
    double avg_freq_mhz;
    double mode_pct[TB_CPU_NMODES];
    tb_freq_source freq_src;
    int n_samples;
    int n_cstates;
    char cstate_name[TB_TELEM_MAX_CSTATES + 1][TB_TELEM_NAME_LEN];
    double cstate_pct[TB_TELEM_MAX_CSTATES + 1];
} tb_telemetry;

/* Sets every figure of t to "not available" (NaN, no C-states, 0 samples). */
void tb_telemetry_clear(tb_telemetry *t);

/*
 * Reads the local counters under root ("/" or a fake tree holding
 * proc/stat, sys/devices/system/cpu/..., dev/cpu/N/msr) into *s. The CPU
 * times come from the "cpu" line of proc/stat (USER_HZ ticks, converted to
 * s with sysconf(_SC_CLK_TCK)). Frequency: APERF/MPERF through
 * dev/cpu/N/msr when every online CPU's is readable, else cpufreq
 * scaling_cur_freq, else none. C-states: cpuN/cpuidle/stateK/{name,time}.
 * Returns 0, or -1 with err when proc/stat itself cannot be read (the one
 * source without which nothing is measured).
 */
int tb_telem_read_local(const char *root, tb_telem_snap *s, char *err) TB_WUR;

/*
 * The sample between snapshots a (earlier) and b. Pure computation. A figure
 * is NaN when either snapshot lacks its source, when the sources differ, or
 * when its counters went backwards or did not move (CPU hotplug, reset).
 * C-state residency: each cpuidle state's time delta as a % of the interval
 * per CPU (time summed over CPUs / (CPUs x interval)), like turbostat's
 * %C1/%C6; "C0" = 100 - their sum, clamped at 0.
 */
void tb_telem_compute(const tb_telem_snap *a, const tb_telem_snap *b, tb_telem_sample *out);

/*
 * Aggregates n samples (interval-weighted means) into *t: each figure over
 * the samples where it is available; NaN when none is. C-states by name,
 * in the order first seen.
 */
void tb_telem_aggregate(const tb_telem_sample *samples, int n, tb_telemetry *t);

/* ---- sources and the sampler ------------------------------------------------ */

typedef struct tb_telem_source tb_telem_source;

/*
 * Opens a source from a spec: "local" (root "/"), or an
 * "http://HOST:PORT/PATH" node_exporter URL. "none" is not a source (the
 * caller skips telemetry). Returns 0, or -1 with err naming the bad spec.
 * Opening does no I/O.
 */
int tb_telem_source_open(const char *spec, tb_telem_source **out, char *err) TB_WUR;

/* Same, "local" over another root prefix (tests). */
int tb_telem_source_open_root(const char *root, tb_telem_source **out, char *err) TB_WUR;

/* One snapshot. 0, or -1 with err ("telemetry http://h:9100/metrics: Connection refused"). */
int tb_telem_source_read(tb_telem_source *src, tb_telem_snap *s, char *err) TB_WUR;

/* The spec it was opened with ("local", the URL). */
const char *tb_telem_source_spec(const tb_telem_source *src);

void tb_telem_source_close(tb_telem_source *src); /* NULL is a no-op */

typedef struct tb_telem_sampler tb_telem_sampler;

/*
 * Starts a thread that snapshots src every interval_us on an absolute
 * CLOCK_MONOTONIC schedule (first snapshot at once, first sample one
 * interval later) and keeps every sample in memory. It runs at normal
 * priority, in its own thread, so a slow scrape never delays the meter
 * poller (which runs SCHED_FIFO when allowed). src is borrowed. A failed
 * snapshot is logged once and skipped (the next sample spans the gap).
 * Returns 0 or -1 with err.
 */
int tb_telem_sampler_start(tb_telem_source *src, uint64_t interval_us, tb_telem_sampler **out, char *err) TB_WUR;

/* Copies the samples whose end mono_us is in [t0_us, t1_us) into a malloc'd
 * array (caller frees). Returns the count. Thread-safe. */
int tb_telem_sampler_window(tb_telem_sampler *t, uint64_t t0_us, uint64_t t1_us, tb_telem_sample **out);

/* Snapshots that failed so far. */
uint64_t tb_telem_sampler_failures(tb_telem_sampler *t);

/* Stops and joins the thread, frees everything. NULL is a no-op. */
void tb_telem_sampler_stop(tb_telem_sampler *t);

#endif
