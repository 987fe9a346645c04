/*
 * hostinfo.h: the SUT host's configuration, captured once per run: what the
 * CPU is, how much memory, which kernel, and every power policy a reader
 * needs to judge the numbers (scaling driver and governor, EPP or EPB,
 * turbo/boost, intel_pstate/amd_pstate status, cpuidle driver, tuned
 * profile). An empty string (or -1) means "not available": containers and
 * VMs often hide these, and nothing is guessed.
 */
#ifndef TB_POWERMETER_HOSTINFO_H
#define TB_POWERMETER_HOSTINFO_H

#include <jansson.h>

#include "common/tb_common.h"

typedef struct tb_hostinfo {
    char hostname[128];
    char kernel[128]; /* "Linux 6.1.0-18-amd64" */
    char arch[32];
    char os[128]; /* PRETTY_NAME of os-release */
    char cpu_model[128];
    int cpus;             /* logical CPUs (threads) online; -1 n/a */
    int cores;            /* physical cores (distinct package/core ids); -1 n/a */
    int sockets;          /* -1 n/a */
    long long memory_mib; /* MemTotal; -1 n/a */
    char scaling_driver[64];
    char governor[64];      /* cpu0's scaling_governor; "mixed: a, b" when CPUs differ */
    char epp[64];           /* cpu0's energy_performance_preference */
    char epb[16];           /* cpu0's energy_perf_bias (0 performance .. 15 powersave) */
    char turbo[48];         /* "on" / "off", with the file it came from */
    char pstate_status[64]; /* "intel_pstate active", "amd_pstate passive", ... */
    char cpuidle_driver[64];
    char cpuidle_governor[64];
    char tuned_profile[128];
    char source[160]; /* "local" or the node_exporter URL */
} tb_hostinfo;

/* Marks every field "not available" and sets source. */
void tb_hostinfo_clear(tb_hostinfo *h, const char *source);

/*
 * Reads the local host's configuration under root ("/" or a fake tree):
 * proc/cpuinfo, proc/meminfo, proc/sys/kernel/{hostname,ostype,osrelease},
 * etc/os-release, sys/devices/system/cpu/{online,cpuN/topology,cpufreq/...,
 * intel_pstate/..., amd_pstate/..., cpuidle/...}, etc/tuned/active_profile.
 * Never fails: what cannot be read stays "not available".
 */
void tb_hostinfo_read_local(const char *root, tb_hostinfo *h);

/*
 * The host object of the run (runs.host_json, the JSON report's run.host):
 * every field as a key; "not available" is JSON null. Caller decrefs.
 */
json_t *tb_hostinfo_json(const tb_hostinfo *h);

#endif
