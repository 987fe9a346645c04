/*
 * preflight.c: `tilebench doctor`'s checks of the host, the meters and the
 * tile file (preflight.h); the SUT's are in preflight_sut.c. Nothing here
 * starts load or a server, and nothing prints.
 */
#include "coordinator/preflight.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/redact.h"
#include "common/spawn.h"
#include "coordinator/run_ctx.h"
#include "powermeter/accuracy.h"
#include "powermeter/hostinfo.h"
#include "powermeter/node_exporter.h"

/* The preflight's own connections and programs get this long. */
#define PF_TIMEOUT_MS 2000

const char *tb_pf_status_name(tb_pf_status s) { return s == TB_PF_OK ? "ok" : s == TB_PF_WARN ? "warn" : "fail"; }

void tb_pf_add(tb_pf_report *r, const char *name, tb_pf_status st, const char *fmt, ...) {
    tb_pf_check *c;
    va_list ap;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->checks = xrealloc(r->checks, (size_t)r->cap * sizeof *r->checks);
    }
    c = &r->checks[r->n++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->status = st;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
    for (char *p = c->detail; *p; p++) /* one line each */
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
}

void tb_pf_na(tb_pf_report *r, const char *what) {
    size_t n = strlen(r->na);
    if (strstr(r->na, what)) return;
    snprintf(r->na + n, sizeof r->na - n, "%s%s", n ? ", " : "", what);
}

void tb_pf_report_free(tb_pf_report *r) {
    free(r->checks);
    memset(r, 0, sizeof *r);
}

/* The tile file: parsed already (else no report); its workloads' keys as
 * run checks them before any server starts. */
static void check_tile_file(tb_pf_report *r, const tb_run_opts *o, int max_tiles) {
    char err[TB_ERR_LEN];
    int users = 0;
    if (tb_loadgen_check(o->def, err) != 0) {
        tb_tiledef_escape_err(err);
        tb_pf_add(r, "tile-file", TB_PF_FAIL, "%s", err);
        return;
    }
    for (int w = 0; w < o->def->n_workloads; w++)
        users += o->def->workloads[w].users;
    tb_pf_add(r, "tile-file", TB_PF_OK, "%s: tile '%s', %d workload%s, %d users per tile; levels up to %d tile%s",
              o->def->path, o->def->name, o->def->n_workloads, o->def->n_workloads == 1 ? "" : "s", users, max_tiles,
              max_tiles == 1 ? "" : "s");
}

/* What the meter's one sample says, after it opened: st and detail. */
static tb_pf_status judge_sample(tb_pf_report *r, const tb_meter_info *in, const tb_sample *s, int compliant, char *out,
                                 size_t len) {
    char why[TB_ERR_LEN];
    size_t n;
    tb_pf_status st = TB_PF_OK;
    if (s->flags & TB_SAMPLE_BAD) {
        snprintf(out, len, "%s: a bad sample (%s)", in->model, tb_meter_reason_text(s->reason));
        return TB_PF_FAIL;
    }
    n = (size_t)snprintf(out, len, "%s%s%s, %.1f W", in->model, in->idn[0] ? " " : "", in->idn, s->watts);
    if (in->estimated) {
        snprintf(out + n, len - n, " estimated: a model of CPU utilization, not a measurement");
        tb_pf_na(r, "measured power (estimated)");
        return TB_PF_WARN;
    }
    if (isfinite(s->uncertainty_pct)) {
        n += (size_t)snprintf(out + n, len - n, ", uncertainty %.2f%%", s->uncertainty_pct);
        if (s->uncertainty_pct > TB_VALIDITY_MAX_UNCERTAINTY_PCT) {
            n += (size_t)snprintf(out + n, len - n, " (over %.0f%%: a level would be invalid)",
                                  TB_VALIDITY_MAX_UNCERTAINTY_PCT);
            st = TB_PF_WARN;
        }
    } else if (in->lab) {
        tb_pf_na(r, "meter uncertainty");
    }
    if (s->flags & TB_SAMPLE_AUTORANGE) {
        n += (size_t)snprintf(out + n, len - n, ", auto-ranging (a level warning; --ranging fixes the ranges)");
        st = TB_PF_WARN;
    }
    if (!isfinite(s->volts) && !s->nch) tb_pf_na(r, "volts, amps, power factor");
    if (tb_meter_calibration_stale(in, tb_meter_today_days(), why, sizeof why)) {
        snprintf(out + n, len - n, "; %s%s", why, compliant ? " (invalid under --preset compliant)" : "");
        return compliant ? TB_PF_FAIL : TB_PF_WARN;
    }
    if (in->calibrated[0]) snprintf(out + n, len - n, ", calibrated %s", in->calibrated);
    return st;
}

/* One meter: it opens, identifies itself, and one sample is good. */
static void check_meter(tb_pf_report *r, const char *name, const char *uri, const tb_run_opts *o) {
    int compliant = o->compliant;
    char err[TB_ERR_LEN], shown[256], detail[TB_PF_DETAIL_LEN];
    tb_meter *m = NULL;
    tb_sample s;
    tb_pf_status st;
    tb_redact_uri(uri, shown, sizeof shown);
    if (tb_meter_open(uri, &m, err) != 0) {
        /* err names the meter already ("meter 'URI': ..."), else it gets its URI */
        tb_pf_add(r, name, TB_PF_FAIL, "%s%s%s", strncmp(err, "meter '", 7) == 0 ? "" : shown,
                  strncmp(err, "meter '", 7) == 0 ? "" : ": ", err);
        tb_pf_na(r, "power (a meter fails)");
        return;
    }
    memset(&s, 0, sizeof s);
    if (tb_meter_sample(m, &s, err) != 0) {
        tb_pf_add(r, name, TB_PF_FAIL, "%s: opened, but no sample: %s", shown, err);
        tb_meter_close(m);
        return;
    }
    st = judge_sample(r, tb_meter_get_info(m), &s, compliant, detail, sizeof detail);
    if (o->ranging_us && !tb_meter_can_range(m)) /* the run refuses it before anything is measured */
        tb_pf_add(r, name, TB_PF_FAIL,
                  "%s: %s; %s: this meter cannot have its ranges set at run time (ranging needs wt310:, wt210:, "
                  "yokogawa+serial: or ptd:)",
                  shown, detail, o->ranging_key ? o->ranging_key : "--ranging");
    else
        tb_pf_add(r, name, st, "%s: %s", shown, detail);
    tb_meter_close(m);
}

/* Every meter the run would open: --meter's (default auto), or each
 * [host.NAME]'s. */
static void check_meters(tb_pf_report *r, const tb_run_opts *o) {
    char name[TB_PF_NAME_LEN];
    int k = 0;
    if (o->def->n_hosts) {
        if (o->n_meters)
            tb_pf_add(r, "meter", TB_PF_FAIL,
                      "--meter: the tile file's [host.NAME] sections name the meters; give none on the command line");
        for (int h = 0; h < o->def->n_hosts; h++)
            for (int m = 0; m < o->def->hosts[h].n_meters; m++) {
                snprintf(name, sizeof name, "meter.%s.%d", o->def->hosts[h].name, m + 1);
                check_meter(r, name, o->def->hosts[h].meters[m], o);
                k++;
            }
    } else {
        for (int i = 0; i < o->n_meters; i++) {
            snprintf(name, sizeof name, "meter.%d", i + 1);
            check_meter(r, name, o->meter_uris[i], o);
            k++;
        }
    }
    if (!k) {
        tb_pf_add(r, "meter", TB_PF_WARN, "no meter: power will not be measured");
        tb_pf_na(r, "power");
    }
}

/* Each inlet temperature source gives a reading. */
static void check_temps(tb_pf_report *r, const tb_run_opts *o) {
    char name[TB_PF_NAME_LEN], err[TB_ERR_LEN];
    if (!o->n_temps) tb_pf_na(r, "inlet temperature (no --temperature)");
    for (int i = 0; i < o->n_temps; i++) {
        tb_temp_source *t = NULL;
        double c;
        char shown[256];
        tb_redact_uri(o->temp_uris[i], shown, sizeof shown);
        snprintf(name, sizeof name, "temperature.%d", i + 1);
        if (tb_temp_open(o->temp_uris[i], &t, err) != 0) {
            tb_pf_add(r, name, TB_PF_FAIL, "%s", err);
            continue;
        }
        if (tb_temp_read(t, &c, err) != 0)
            tb_pf_add(r, name, TB_PF_FAIL, "%s: no reading: %s", shown, err);
        else if (c < TB_TEMP_MIN_INLET_C)
            tb_pf_add(r, name, o->compliant ? TB_PF_FAIL : TB_PF_WARN, "%s: %.1f C, below %.0f C", shown, c,
                      TB_TEMP_MIN_INLET_C);
        else
            tb_pf_add(r, name, TB_PF_OK, "%s: %.1f C", shown, c);
        tb_temp_close(t);
    }
}

/* Runs argv (argv[0] found on the PATH) for at most PF_TIMEOUT_MS: 1 with
 * its output in out when it exited 0, 0 when it is not installed or
 * failed (no systemd, no daemon). */
static int run_tool(const char *const *argv, char *out, size_t len) {
    char path[512], err[TB_ERR_LEN];
    tb_spawn_opts so;
    tb_spawn_result res;
    int ok;
    out[0] = '\0';
    if (tb_spawn_find(argv[0], path, sizeof path) != 0) return 0;
    memset(&so, 0, sizeof so);
    so.path = path;
    so.argv = argv;
    so.output_max = 4096;
    so.timeout_us = PF_TIMEOUT_MS * 1000ull;
    so.grace_us = 1;
    if (tb_spawn_run(&so, &res, err) != 0) {
        tb_spawn_result_free(&res);
        return 0;
    }
    ok = res.exited && res.exit_status == 0;
    snprintf(out, len, "%s", res.output);
    tb_spawn_result_free(&res);
    return ok;
}

/* Clock synchronisation: systemd's view (timedatectl), chrony's, or the
 * flag file systemd-timesyncd writes; none of them: unknown. */
static void check_clock(tb_pf_report *r) {
    static const char *const td[] = {"timedatectl", "show", "-p", "NTPSynchronized", "--value", NULL};
    static const char *const ch[] = {"chronyc", "-n", "tracking", NULL};
    char out[4096];
    if (run_tool(td, out, sizeof out)) {
        out[strcspn(out, "\r\n")] = '\0';
        if (strcmp(out, "yes") == 0)
            tb_pf_add(r, "clock", TB_PF_OK, "synchronised (timedatectl: NTPSynchronized=yes)");
        else
            tb_pf_add(r, "clock", TB_PF_WARN, "not synchronised (timedatectl: NTPSynchronized=%s)", out);
        return;
    }
    if (run_tool(ch, out, sizeof out)) {
        char *l = strstr(out, "Leap status");
        char *v = l ? strchr(l, ':') : NULL;
        if (v) v[strcspn(v, "\r\n")] = '\0';
        if (v && strstr(v, "Normal"))
            tb_pf_add(r, "clock", TB_PF_OK, "synchronised (chronyc tracking: Leap status%s)", v);
        else
            tb_pf_add(r, "clock", TB_PF_WARN, "not synchronised (chronyc tracking: %s)", v ? v + 1 : "no leap status");
        return;
    }
    if (access("/run/systemd/timesync/synchronized", F_OK) == 0) {
        tb_pf_add(r, "clock", TB_PF_OK, "synchronised (/run/systemd/timesync/synchronized)");
        return;
    }
    tb_pf_add(r, "clock", TB_PF_WARN,
              "unknown: no timedatectl answer, no chronyc, no /run/systemd/timesync/synchronized (samples' wall-clock "
              "times cannot be compared with another host's)");
}

/* One power-policy field as read: ok with its value, else warn. */
static void policy_line(tb_pf_report *r, const char *name, const char *value, const char *more, const char *na) {
    if (value && *value)
        tb_pf_add(r, name, TB_PF_OK, "%s%s", value, more);
    else {
        tb_pf_add(r, name, TB_PF_WARN, "not available (%s): the report says so", na);
        tb_pf_na(r, name);
    }
}

/* Governor, EPP (or EPB), turbo and tuned as the run records them: this
 * machine's, or the node_exporter's for a telemetry URL. */
static void check_policy(tb_pf_report *r, const char *telem) {
    tb_hostinfo h;
    char more[200] = "", epp[100] = "";
    if (strncmp(telem, "http://", 7) == 0) {
        char *body = NULL, err[TB_ERR_LEN], shown[256];
        size_t len = 0;
        tb_redact_uri(telem, shown, sizeof shown);
        tb_hostinfo_clear(&h, shown);
        if (tb_node_exporter_fetch(telem, PF_TIMEOUT_MS, &body, &len, err) != 0 ||
            tb_node_exporter_hostinfo(body, len, &h, err) != 0) {
            tb_pf_add(r, "host-config", TB_PF_FAIL, "telemetry %s: %s (the run stops before it starts)", shown, err);
            free(body);
            return;
        }
        free(body);
    } else {
        tb_hostinfo_read_local("/", &h);
    }
    if (h.scaling_driver[0] || h.pstate_status[0])
        snprintf(more, sizeof more, " (driver %s%s%s)", h.scaling_driver[0] ? h.scaling_driver : "?",
                 h.pstate_status[0] ? ", " : "", h.pstate_status);
    policy_line(r, "governor", h.governor, more, "no cpufreq: a VM or container hides it");
    if (h.epp[0]) snprintf(epp, sizeof epp, "%s", h.epp);
    if (h.epb[0]) snprintf(epp + strlen(epp), sizeof epp - strlen(epp), "%sEPB %s", epp[0] ? ", " : "", h.epb);
    policy_line(r, "epp", epp, "", "no energy_performance_preference or energy_perf_bias");
    policy_line(r, "turbo", h.turbo, "", "no intel_pstate/no_turbo or cpufreq/boost");
    policy_line(r, "tuned", h.tuned_profile, "", "no /etc/tuned/active_profile: tuned is not running");
}

/* RAPL: the powercap energy counters readable (meter auto tries them first). */
static void check_rapl(tb_pf_report *r) {
    char err[TB_ERR_LEN];
    tb_meter *m = NULL;
    tb_sample s;
    if (tb_meter_open("rapl:", &m, err) != 0) {
        tb_pf_add(r, "rapl", TB_PF_WARN, "not readable: %s (meter auto falls back to ipmi:local, then estimate:)", err);
        tb_pf_na(r, "RAPL package power");
        return;
    }
    memset(&s, 0, sizeof s);
    if (tb_meter_sample(m, &s, err) != 0 || (s.flags & TB_SAMPLE_BAD))
        tb_pf_add(r, "rapl", TB_PF_WARN, "%s: opened, but no good sample: %s", tb_meter_get_info(m)->idn,
                  s.flags & TB_SAMPLE_BAD ? tb_meter_reason_text(s.reason) : err);
    else
        tb_pf_add(r, "rapl", TB_PF_OK, "%s: %.1f W", tb_meter_get_info(m)->idn, s.watts);
    tb_meter_close(m);
}

/* The telemetry source: one snapshot, and what it can tell. */
static void check_telemetry(tb_pf_report *r, const char *spec, const char *why) {
    char err[TB_ERR_LEN], shown[256];
    tb_telem_source *src = NULL;
    tb_telem_snap s;
    tb_redact_uri(spec, shown, sizeof shown);
    if (strcmp(spec, "none") == 0) {
        tb_pf_add(r, "telemetry", TB_PF_WARN, "none%s%s", *why ? ": " : "", why);
        tb_pf_na(r, "CPU utilization, frequency, C-states (telemetry none)");
        return;
    }
    memset(&s, 0, sizeof s);
    if (tb_telem_source_open(spec, &src, err) != 0 || tb_telem_source_read(src, &s, err) != 0 || !s.have_cpu) {
        tb_pf_add(r, "telemetry", TB_PF_FAIL, "%s: %s", shown, s.have_cpu ? err : "no CPU time");
        tb_telem_source_close(src);
        return;
    }
    tb_telem_source_close(src);
    if (s.freq_src == TB_FREQ_NONE) tb_pf_na(r, "CPU frequency");
    if (!s.n_cstates) tb_pf_na(r, "C-states");
    tb_pf_add(r, "telemetry", s.freq_src == TB_FREQ_NONE || !s.n_cstates ? TB_PF_WARN : TB_PF_OK,
              "%s: CPU time of %d CPUs; frequency %s; C-states %s", shown, s.n_cpus,
              s.freq_src == TB_FREQ_NONE ? "not available" : tb_telem_freq_source_name(s.freq_src),
              s.n_cstates ? "from cpuidle" : "not available");
}

/* The open-files limit against what the largest level's users need; run
 * raises the soft limit up to the hard one by itself. */
static void check_fds(tb_pf_report *r, const tb_run_opts *o, int max_tiles) {
    struct rlimit rl;
    unsigned long long users = 0, need = tb_loadgen_fd_need(o->def, max_tiles, &users);
    char lim[64];
    if (o->agents) {
        tb_pf_add(r, "open-files", TB_PF_OK, "agents run the users: each checks its own share when it joins");
        return;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        tb_pf_add(r, "open-files", TB_PF_WARN, "the limit cannot be read; %llu users need about %llu", users, need);
        return;
    }
    if (rl.rlim_max == RLIM_INFINITY)
        snprintf(lim, sizeof lim, "unlimited");
    else
        snprintf(lim, sizeof lim, "%llu", (unsigned long long)rl.rlim_max);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        tb_pf_add(r, "open-files", TB_PF_FAIL,
                  "%llu users at %d tiles need about %llu open files, and the hard limit is %s (raise it with "
                  "ulimit -n or LimitNOFILE=, or run fewer tiles or users)",
                  users, max_tiles, need, lim);
    else
        tb_pf_add(r, "open-files", TB_PF_OK, "%llu users at %d tiles need about %llu; limit %llu (hard %s)%s", users,
                  max_tiles, need, (unsigned long long)rl.rlim_cur, lim,
                  rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need ? ", run raises it" : "");
}

tb_pf_status tb_preflight_run(const tb_run_opts *o, tb_pf_report *r) {
    char why[TB_ERR_LEN];
    const char *telem = tb_coord_telemetry_choice(o, why, sizeof why);
    int max_tiles = 1, sut_local = !o->def->has_sut || tb_coord_sut_is_local(&o->def->sut);
    tb_pf_status worst = TB_PF_OK;
    for (int i = 0; i < o->levels.n; i++)
        if (o->levels.tiles[i] > max_tiles) max_tiles = o->levels.tiles[i];
    check_tile_file(r, o, max_tiles);
    check_meters(r, o);
    check_temps(r, o);
    check_clock(r);
    if (o->def->n_hosts)
        tb_pf_add(r, "governor", TB_PF_WARN, "[host.NAME]: each host's policy comes from its telemetry, not checked");
    else
        check_policy(r, telem);
    if (sut_local) check_rapl(r);
    if (!o->def->n_hosts) check_telemetry(r, telem, why);
    check_fds(r, o, max_tiles);
    tb_pf_sut(r, o->def, max_tiles);
    if (r->na[0])
        tb_pf_add(r, "not-available", TB_PF_WARN, "the report will show as not available: %s", r->na);
    else
        tb_pf_add(r, "not-available", TB_PF_OK, "nothing: every figure the report shows can be measured");
    for (int i = 0; i < r->n; i++)
        if (r->checks[i].status > worst) worst = r->checks[i].status;
    return worst;
}
