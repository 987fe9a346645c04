/*
 * node_exporter.h: host telemetry of a remote SUT from a Prometheus
 * node_exporter (the agent Linux fleets already run; Debian's
 * prometheus-node-exporter). Three layers: a no-I/O parser of the Prometheus
 * text exposition format (version 0.0.4), an HTTP GET of /metrics
 * (libcurl), and the mapping of node_exporter's metric names onto a
 * telemetry snapshot and the host configuration.
 */
#ifndef TB_POWERMETER_NODE_EXPORTER_H
#define TB_POWERMETER_NODE_EXPORTER_H

#include <stddef.h>

#include "common/tb_common.h"
#include "powermeter/hostinfo.h"
#include "powermeter/telemetry.h"

#define TB_PROM_MAX_LABELS 32

/* One sample line: name{labels} value [timestamp]. Strings are valid only
 * during the callback; label values are unescaped (\\, \", \n). */
typedef struct tb_prom_sample {
    const char *name;
    int n_labels;
    const char *label_name[TB_PROM_MAX_LABELS];
    const char *label_value[TB_PROM_MAX_LABELS];
    double value; /* NaN, +Inf and -Inf as given */
    int has_timestamp;
    long long timestamp_ms;
} tb_prom_sample;

/* The value of label `name`, or NULL. */
const char *tb_prom_label(const tb_prom_sample *s, const char *name);

/* Called once per sample line, in order. Return nonzero to stop parsing. */
typedef int (*tb_prom_cb)(const tb_prom_sample *s, void *ud);

/*
 * Parses text[0..len) in the Prometheus text format: '#' lines (HELP, TYPE,
 * comments) and blank lines are skipped; every other line must be a sample.
 * Like Prometheus itself, a malformed line fails the whole scrape: returns -1
 * with err "line N: why" (bad name, unterminated label value, bad escape,
 * missing or non-numeric value, more than TB_PROM_MAX_LABELS labels, a NUL
 * byte). Otherwise returns the number of sample lines handed to cb (>= 0),
 * counting the one whose callback asked to stop. cb may be NULL (validate
 * only). Pure: no I/O, no global state.
 */
int tb_prom_parse(const char *text, size_t len, tb_prom_cb cb, void *ud, char *err) TB_WUR;

/*
 * GET url (http:// only) with a timeout in ms. *body is malloc'd and
 * NUL-terminated (caller frees), *len its length. Returns 0, or -1 with err
 * "GET http://...: Connection refused" or "... HTTP 404".
 */
int tb_node_exporter_fetch(const char *url, long timeout_ms, char **body, size_t *len, char *err) TB_WUR;

/*
 * Maps a scrape onto a telemetry snapshot: node_cpu_seconds_total{cpu,mode}
 * summed over CPUs by mode (n_cpus = distinct cpu labels);
 * node_cpu_scaling_frequency_hertz averaged (else node_cpu_frequency_hertz).
 * node_exporter 1.5 has no cpuidle collector, so C-states are not available.
 * mono_us/wall_us are left to the caller. 0, or -1 with err on a parse error.
 */
int tb_node_exporter_snap(const char *text, size_t len, tb_telem_snap *s, char *err) TB_WUR;

/*
 * Maps a scrape onto the host configuration: node_uname_info (nodename,
 * sysname, release, machine), node_os_info (pretty_name),
 * node_memory_MemTotal_bytes, node_cpu_info (model_name, core, package; only
 * with --collector.cpu.info), CPUs from node_cpu_seconds_total, and
 * node_cpu_scaling_governor{governor} == 1 (cpufreq collector of node_exporter
 * 1.6 and later; Debian 12's 1.5.0 has no such metric) as the governor. Everything else (EPP, turbo, pstate status,
 * tuned) is not exported by node_exporter and stays not available. h->source is kept. 0, or -1 with err on a parse
 * error.
 */
int tb_node_exporter_hostinfo(const char *text, size_t len, tb_hostinfo *h, char *err) TB_WUR;

#endif
