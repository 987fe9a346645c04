/*
 * cmd_meter.c: `tilebench meter probe|sim|export`.
 *   probe URI [--samples N] [--interval DUR]: opens a meter, prints what it
 *     says about itself and N samples as a table with their flags, and a
 *     summary line that scripts can parse.
 *   sim [--listen ADDR:PORT] [--protocol wt310|wt210|ptd] [--watts W |
 *     --trace FILE | --cpu IDLE:MAX] [--fault KIND:N]...: the meter emulator
 *     (metersim/meter_sim.h) for tests and demos, until SIGINT/SIGTERM;
 *     SIGUSR1 prints its counters.
 *   export URI... --listen ADDR:PORT [--interval DUR]: samples the meters
 *     and serves their latest readings, identity and error counts in
 *     Prometheus's text format (metrics/metrics.h, docs/metrics.md) until
 *     SIGINT/SIGTERM.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/commands.h"
#include "common/listen.h"
#include "common/tb_common.h"
#include "metrics/metrics.h"
#include "powermeter/meter.h"
#include "powermeter/proctree.h"
#include "metersim/meter_sim.h"

#define PROBE_DEFAULT_SAMPLES 5

static void usage(FILE *f) {
    fputs("usage: tilebench meter probe URI [--samples N] [--interval DUR]\n"
          "       tilebench meter sim [--listen ADDR:PORT] [--protocol wt310|wt210|ptd|ptd-temp]\n"
          "                           [--watts W | --trace FILE [--loop] [--trace-sync]\n"
          "                            | --cpu IDLE:MAX [--cpu-of PID[,PID...]]]\n"
          "                           [--volts V] [--pf PF] [--elements N] [--interval DUR]\n"
          "                           [--split S1,S2[,S3]] [--fault KIND:N[@ELEMENT]]...\n"
          "                           [--fault-channel K] [--pty]\n"
          "       tilebench meter export URI... --listen ADDR:PORT [--interval DUR]\n"
          "\n"
          "probe: open the meter, print its identity (model, *IDN?, ranges, driver) and N\n"
          "samples (default 5, one per --interval, default 1s) with their flags and, for a bad\n"
          "sample, its reason, then a line\n"
          "  summary: samples=N replies=R ok=K invalid=I overrange=O missing=M autorange=A\n"
          "           implausible=P mean_w=W   (mean_w over the ok samples only)\n"
          "  IMPLAUSIBLE (any driver): W negative or not finite, W above (CF x V range) x\n"
          "  (CF x A range) on fixed ranges (3 x the model's largest ranges on auto or\n"
          "  unknown ones, else a 90 kW feed ceiling), V or A negative, or V x A x PF (V x A\n"
          "  when PF is not read: W above it) off W by more than 1.5% of the larger of the\n"
          "  two plus 1.5% of V range x A range, doubled at CF 6 (see docs/meters.md,\n"
          "  \"Ranges, crest factor and plausibility\").\n"
          "  Meter URIs: wt310://HOST:PORT, wt210://HOST:PORT,\n"
          "  yokogawa+serial:///dev/ttyUSB0?model=wt310&baud=9600, ptd://HOST:8888,\n"
          "  ipmi://USER:PASS@HOST[:PORT]?method=dcmi|sensor&sensor=NAME, ipmi:local, rapl:,\n"
          "  estimate:?idle=W&max=W, auto.\n"
          "\n"
          "sim: a meter emulator on TCP (a real protocol peer for tests and demos).\n"
          "  --listen ADDR:PORT  address (default 127.0.0.1:0 = any free port; the bound\n"
          "                      port is printed as 'listening on ADDR:PORT')\n"
          "  --protocol P        wt310 (:NUMeric), wt210 (:MEASure) or ptd (SPEC PTDaemon)\n"
          "                      or ptd-temp (a PTDaemon in temperature mode: --watts or\n"
          "                      the trace's values are served as degrees C, for\n"
          "                      run --temperature ptd+temp://HOST:PORT)\n"
          "  --watts W           constant power (default 100 W)\n"
          "  --trace FILE        power from a trace: lines 'seconds,watts' (step function\n"
          "                      from the sim's start, printed as 'trace t=0 at monotonic\n"
          "                      N us'); --loop repeats it with the last line's time as\n"
          "                      its period (that line ends the period; its value is not\n"
          "                      served). A line may be\n"
          "                      'seconds,watts,volts,amps,pf': then V, A and PF are served\n"
          "                      as given, not derived. Watts may be negative: the sim\n"
          "                      serves implausible readings verbatim, for tests\n"
          "  --trace-sync        the trace's t=0 is the first value request instead (a\n"
          "                      run's first sample), printed as above when it comes\n"
          "  --cpu IDLE:MAX      power follows this host's CPU utilization (linear model:\n"
          "                      IDLE + (MAX - IDLE) x utilization; A = W / (V x PF))\n"
          "  --cpu-of PID,...    with --cpu: the utilization is that of these processes\n"
          "                      and all their descendants instead of the whole host's:\n"
          "                      their CPU time over each sample interval / (interval x\n"
          "                      online CPUs), clamped to 0..1 (at most 64 PIDs)\n"
          "  --volts V, --pf PF  voltage and power factor served (default 230 V, 0.95)\n"
          "  --elements N        input elements 1..3; W is split evenly, SIGMA is the sum\n"
          "                      (ptd: a WT332E/WT333E, RL lists each channel)\n"
          "  --split S1,S2[,S3]  with --elements 2 or 3: W and A split in these ratios\n"
          "                      instead (1,3: a quarter and three quarters); the ranges\n"
          "                      apply to every element, so the largest share over-ranges\n"
          "                      first\n"
          "  --fault-channel K   ptd: the nan and negative faults hit channel K only\n"
          "  --interval DUR      PTD sample interval when Go asks for 0 (default 1s)\n"
          "  --fault KIND:N      every Nth value request: nan, inf (over-range), garbage,\n"
          "                      stall (no reply), disconnect, uncertainty (PTD: 1.5%),\n"
          "                      negative (-27.1 W, -3.199 A: a WT310E field bug,\n"
          "                      mlcommons/power-dev#253), inconsistent (the current\n"
          "                      doubled, so V x A x PF = 2 x W)\n"
          "  --fault KIND:N@E    wt310 with --elements > 1: nan, inf or negative on element E\n"
          "                      alone (1..--elements), the other elements' values as they are\n"
          "  --pty               also serve on a pseudo-terminal (printed as 'pty PATH'),\n"
          "                      for yokogawa+serial://\n"
          "  Counters: send 'tb:count?' on a connection, or SIGUSR1 (printed on stdout).\n"
          "\n"
          "export: sample each meter once per --interval (default 1s, at least 100ms) and\n"
          "  serve the latest readings for Prometheus at http://ADDR:PORT/metrics (PORT 0 =\n"
          "  any free port; the address is printed as 'listening on ADDR:PORT'): W, V, A,\n"
          "  PF and uncertainty where the meter reports them, labelled with its ranges\n"
          "  (volt_range, amp_range, mode), its identity as tilebench_meter_info (model,\n"
          "  serial, firmware, URI with passwords redacted), reads and failed reads as\n"
          "  counters; a failed or flagged read keeps the last good sample and its time.\n"
          "  A meter read as several channels (ptd://...?channels=1,2, wt310://...?element=1,2)\n"
          "  also has one series per channel, label channel=\"N\": tilebench_meter_channel_watts,\n"
          "  _volts, _amps and _power_factor of the last good sample (they add up to\n"
          "  tilebench_meter_watts, the sum), and per channel last_read_ok, reads_total and\n"
          "  errors_total, which tell which channel failed.\n"
          "  Stops on SIGINT or SIGTERM (docs/metrics.md).\n"
          "\n"
          "exit status: 0 ok; 2 usage error, unknown meter scheme or (export) an address\n"
          "that cannot be bound; 3 the meter could not be opened, or (probe) every sample\n"
          "was missing.\n",
          f);
}

static int usage_error(const char *what) { return tb_cli_usage_error("meter", "%s", what); }

static const char *range_mode(int mode) {
    return mode == TB_RANGE_AUTO ? "auto" : mode == TB_RANGE_FIXED ? "fixed" : "?";
}

static void flags_text(unsigned f, char *buf, size_t len) {
    buf[0] = '\0';
    if (f & TB_SAMPLE_MISSING) strncat(buf, "MISSING,", len - strlen(buf) - 1);
    if (f & TB_SAMPLE_INVALID) strncat(buf, "INVALID,", len - strlen(buf) - 1);
    if (f & TB_SAMPLE_OVERRANGE) strncat(buf, "OVERRANGE,", len - strlen(buf) - 1);
    if (f & TB_SAMPLE_IMPLAUSIBLE) strncat(buf, "IMPLAUSIBLE,", len - strlen(buf) - 1);
    if (f & TB_SAMPLE_AUTORANGE) strncat(buf, "AUTORANGE,", len - strlen(buf) - 1);
    if (f & TB_SAMPLE_ESTIMATED) strncat(buf, "ESTIMATED,", len - strlen(buf) - 1);
    if (f & TB_SAMPLE_FLAT) strncat(buf, "FLAT,", len - strlen(buf) - 1); /* min = max = avg (IPMI DCMI) */
    if (buf[0])
        buf[strlen(buf) - 1] = '\0';
    else
        snprintf(buf, len, "ok");
}

static void print_num(double v, int width, int prec) {
    if (isnan(v))
        printf(" %*s", width, "-");
    else
        printf(" %*.*f", width, prec, v);
}

/* A meter read as several channels: a line per channel under the summed sample. */
static void print_channels(const tb_sample *s) {
    for (int k = 0; k < s->nch && k < TB_METER_MAX_CHANNELS; k++) {
        const tb_channel_sample *c = &s->ch[k];
        char fl[96], name[32];
        flags_text(c->flags, fl, sizeof fl);
        snprintf(name, sizeof name, "  channel %d", c->channel);
        printf("%4s  %-24s", "", name);
        print_num(c->watts, 10, 3);
        print_num(c->volts, 9, 2);
        print_num(c->amps, 9, 4);
        print_num(c->pf, 7, 4);
        const char *text = tb_meter_reason_text(c->reason), *colon = strstr(text, ": ");
        if (colon) text = colon + 2; /* "implausible: negative active power": the flags column says the first word */
        printf(" %6s  %s%s%s\n", "", fl, text[0] ? ": " : "", text);
    }
}

static int cmd_probe(int argc, char **argv) {
    static const struct option longopts[] = {
        {"samples", required_argument, NULL, 'n'},
        {"interval", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 64];
    uint64_t samples = PROBE_DEFAULT_SAMPLES, interval_us = 1000000u, next;
    unsigned long long n_ok = 0, n_inv = 0, n_over = 0, n_miss = 0, n_auto = 0, n_impl = 0;
    double sum_w = 0;
    const tb_meter_info *info;
    tb_meter *m = NULL;
    const char *uri;
    int c, rc;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (tb_parse_u64(optarg, &samples, err) != 0 || samples == 0 || samples > 1000000) {
                snprintf(msg, sizeof msg, "--samples: '%s': expected an integer 1..1000000", optarg);
                return usage_error(msg);
            }
            break;
        case 'i':
            if (tb_parse_duration_us(optarg, &interval_us, err) != 0) {
                snprintf(msg, sizeof msg, "--interval: %s", err);
                return usage_error(msg);
            }
            if (interval_us < 10000u) return usage_error("--interval: must be at least 10ms");
            break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': snprintf(msg, sizeof msg, "option '%s' needs a value", argv[optind - 1]); return usage_error(msg);
        default: snprintf(msg, sizeof msg, "unknown option '%s'", argv[optind - 1]); return usage_error(msg);
        }
    }
    if (optind + 1 != argc) return usage_error(optind >= argc ? "probe: missing URI" : "probe: one URI only");
    uri = argv[optind];
    if ((rc = tb_meter_open(uri, &m, err)) != 0) {
        fprintf(stderr, "tilebench meter probe: %s\n", err);
        return rc == TB_METER_EUNREACH ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
    }
    info = tb_meter_get_info(m);
    printf("meter:     %s\n", info->uri);
    printf("model:     %s\n", info->model);
    printf("idn:       %s\n", info->idn[0] ? info->idn : "-");
    if (info->serial[0] || info->firmware[0])
        printf("serial:    %s  firmware: %s\n", info->serial[0] ? info->serial : "-",
               info->firmware[0] ? info->firmware : "-");
    if (info->driver[0]) printf("driver:    %s\n", info->driver);
    if (info->volt_mode || info->amp_mode || info->volt_range_v > 0 || info->amp_range_a > 0)
        printf("ranges:    %g V (%s), %g A (%s)\n", info->volt_range_v, range_mode(info->volt_mode), info->amp_range_a,
               range_mode(info->amp_mode));
    if (info->crest_factor > 0) printf("crest:     %g\n", info->crest_factor);
    if (info->update_ms) printf("update:    %u ms\n", info->update_ms);
    if (info->avg_window_ms) printf("window:    %u ms (the meter's own averaging)\n", info->avg_window_ms);
    printf("estimated: %s\n", info->estimated ? "yes (ESTIMATED power, not a measurement)" : "no");
    printf("\n%4s  %-24s %10s %9s %9s %7s %6s  %s\n", "#", "time (UTC)", "W", "V", "A", "PF", "unc%", "flags");
    fflush(stdout);

    next = tb_now_us();
    for (uint64_t i = 0; i < samples; i++) {
        tb_sample s;
        char ts[32], fl[96], serr[TB_ERR_LEN] = "", why[256] = "";
        uint64_t now = tb_now_us();
        if (next > now) {
            struct timespec d = {(time_t)((next - now) / 1000000u), (long)(((next - now) % 1000000u) * 1000u)};
            nanosleep(&d, NULL);
        }
        next += interval_us;
        (void)tb_meter_sample(m, &s, serr);
        tb_format_wall(s.wall_us, ts, sizeof ts);
        flags_text(s.flags, fl, sizeof fl);
        printf("%4llu  %-24s", (unsigned long long)(i + 1), ts);
        print_num(s.watts, 10, 3);
        print_num(s.volts, 9, 2);
        print_num(s.amps, 9, 4);
        print_num(s.pf, 7, 4);
        print_num(s.uncertainty_pct, 6, 3);
        if (s.flags & TB_SAMPLE_IMPLAUSIBLE) (void)tb_meter_plausible(info, &s, why, sizeof why);
        if (serr[0])
            printf("  %s: %s\n", fl, serr);
        else if (s.reason != TB_REASON_NONE) {
            /* "IMPLAUSIBLE: negative active power: W -27.1 < 0": the text without its "implausible: " */
            const char *text = tb_meter_reason_text(s.reason), *colon = strstr(text, ": ");
            if (colon) text = colon + 2; /* the flags column says it */
            printf("  %s: %s%s%s\n", fl, text, why[0] ? ": " : "", why);
        } else
            printf("  %s\n", fl);
        print_channels(&s);
        fflush(stdout);
        if (s.flags & TB_SAMPLE_MISSING)
            n_miss++;
        else if (s.flags & TB_SAMPLE_OVERRANGE)
            n_over++;
        else if (s.flags & TB_SAMPLE_INVALID)
            n_inv++;
        else if (s.flags & TB_SAMPLE_IMPLAUSIBLE)
            n_impl++;
        else {
            n_ok++;
            sum_w += s.watts;
        }
        if (s.flags & TB_SAMPLE_AUTORANGE) n_auto++;
    }
    printf("summary: samples=%llu replies=%llu ok=%llu invalid=%llu overrange=%llu missing=%llu autorange=%llu "
           "implausible=%llu mean_w=%.3f\n",
           (unsigned long long)samples, (unsigned long long)samples - n_miss, n_ok, n_inv, n_over, n_miss, n_auto,
           n_impl, n_ok ? sum_w / (double)n_ok : NAN);
    tb_meter_close(m);
    return n_miss == samples ? TB_EXIT_ABORTED : TB_EXIT_OK;
}

static volatile sig_atomic_t sim_stop, sim_dump;
static void on_stop(int sig) {
    (void)sig;
    sim_stop = 1;
}
static void on_dump(int sig) {
    (void)sig;
    sim_dump = 1;
}

/* Parses a non-negative number with an optional unit suffix (e.g. "120W"). */
static int parse_num(const char *opt, const char *val, const char *unit, double lo, double hi, double *out) {
    char *end;
    double v = strtod(val, &end);
    char msg[TB_ERR_LEN];
    if (end != val && unit && strcasecmp(end, unit) == 0) end += strlen(end);
    if (end == val || *end || !isfinite(v) || v < lo || v > hi) {
        snprintf(msg, sizeof msg, "%s: '%s': expected a number %g..%g%s%s", opt, val, lo, hi, unit ? " " : "",
                 unit ? unit : "");
        usage_error(msg);
        return -1;
    }
    *out = v;
    return 0;
}

/* What `meter sim` was asked for, while its options are read. */
typedef struct sim_args {
    tb_msim_opts o;
    const char *listen; /* --listen ADDR:PORT, or NULL */
    int have_watts;
    char cpu_uri[128];
} sim_args;

/* An option handler's answer when the options go on (else: the exit status). */
#define SIM_NEXT (-1)

static int sim_protocol(const char *val, tb_msim_opts *o) {
    char msg[TB_ERR_LEN + 64];
    if (strcasecmp(val, "wt310") == 0)
        o->protocol = TB_MSIM_WT310;
    else if (strcasecmp(val, "wt210") == 0)
        o->protocol = TB_MSIM_WT210;
    else if (strcasecmp(val, "ptd") == 0)
        o->protocol = TB_MSIM_PTD;
    else if (strcasecmp(val, "ptd-temp") == 0)
        o->protocol = TB_MSIM_PTD_TEMP;
    else {
        snprintf(msg, sizeof msg, "--protocol: '%s': expected wt310, wt210, ptd or ptd-temp", val);
        return usage_error(msg);
    }
    return SIM_NEXT;
}

/* --cpu IDLE:MAX: the estimate URI the emulator samples. */
static int sim_cpu(const char *val, sim_args *a) {
    const char *colon = strchr(val, ':');
    double idle, max;
    char lo[64], msg[TB_ERR_LEN + 64];
    if (!colon || (size_t)(colon - val) >= sizeof lo) {
        snprintf(msg, sizeof msg, "--cpu: '%s': expected IDLE:MAX in W (e.g. 50:200)", val);
        return usage_error(msg);
    }
    memcpy(lo, val, (size_t)(colon - val));
    lo[colon - val] = '\0';
    if (parse_num("--cpu IDLE", lo, "W", 0, 1e6, &idle) != 0 ||
        parse_num("--cpu MAX", colon + 1, "W", idle, 1e6, &max) != 0)
        return TB_EXIT_USAGE;
    snprintf(a->cpu_uri, sizeof a->cpu_uri, "estimate:?idle=%g&max=%g", idle, max);
    a->o.cpu_model = a->cpu_uri;
    a->o.cpu_idle_w = idle;
    a->o.cpu_max_w = max;
    return SIM_NEXT;
}

/* --cpu-of PID[,PID...]: the roots of the process trees whose CPU --cpu follows. */
static int sim_cpu_of(const char *val, tb_msim_opts *o) {
    char msg[TB_ERR_LEN + 128], e[TB_ERR_LEN];
    const char *p = val;
    o->n_cpu_of = 0;
    for (;;) {
        size_t n = strcspn(p, ",");
        char tok[24];
        uint64_t v;
        double cpu;
        if (n == 0 || n >= sizeof tok) {
            snprintf(msg, sizeof msg, "--cpu-of: '%s': expected PID[,PID...] (process ids)", val);
            return usage_error(msg);
        }
        memcpy(tok, p, n);
        tok[n] = '\0';
        if (tb_parse_u64(tok, &v, e) != 0 || v == 0 || v > 0x7fffffff) {
            snprintf(msg, sizeof msg, "--cpu-of: '%s': not a process id", tok);
            return usage_error(msg);
        }
        if (o->n_cpu_of == TB_MSIM_MAX_CPU_OF) return usage_error("--cpu-of: at most 64 process ids");
        o->cpu_of[o->n_cpu_of] = (pid_t)v;
        if (tb_proctree_cpu(&o->cpu_of[o->n_cpu_of], 1, &cpu, e) <= 0) {
            snprintf(msg, sizeof msg, "--cpu-of: %s: no such process", tok);
            return usage_error(msg);
        }
        o->n_cpu_of++;
        p += n;
        if (*p == '\0') return SIM_NEXT;
        p++;
    }
}

static int sim_elements(const char *val, tb_msim_opts *o) {
    char msg[TB_ERR_LEN + 64];
    if (strlen(val) != 1 || val[0] < '1' || val[0] > '3') {
        snprintf(msg, sizeof msg, "--elements: '%s': expected 1, 2 or 3", val);
        return usage_error(msg);
    }
    o->elements = val[0] - '0';
    return SIM_NEXT;
}

/* --split S1,S2[,S3]: each element's share of W and A, as ratios (1,3: a
 * quarter and three quarters), normalized to sum 1. */
static int sim_split(const char *val, tb_msim_opts *o) {
    char msg[TB_ERR_LEN + 64], *end;
    const char *p = val;
    double sum = 0, v[3];
    int n = 0;
    for (;;) {
        v[n] = strtod(p, &end);
        if (end == p || !isfinite(v[n]) || v[n] <= 0 || (*end && *end != ',') || (*end == ',' && n == 2)) {
            snprintf(msg, sizeof msg, "--split: '%.60s': expected 2 or 3 positive shares, e.g. 1,3", val);
            return usage_error(msg);
        }
        sum += v[n++];
        if (!*end) break;
        p = end + 1;
    }
    if (n < 2) {
        snprintf(msg, sizeof msg, "--split: '%.60s': expected 2 or 3 positive shares, e.g. 1,3", val);
        return usage_error(msg);
    }
    for (int i = 0; i < 3; i++)
        o->split[i] = i < n ? v[i] / sum : 0;
    return SIM_NEXT;
}

static int sim_interval(const char *val, tb_msim_opts *o) {
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 64];
    if (tb_parse_duration_us(val, &o->ptd_interval_us, err) != 0 || o->ptd_interval_us < 10000u) {
        snprintf(msg, sizeof msg, "--interval: '%s': expected a duration >= 10ms", val);
        return usage_error(msg);
    }
    return SIM_NEXT;
}

/* --fault KIND:N or KIND:N@ELEMENT (one element of a multi-element Yokogawa). */
static int sim_fault(const char *val, tb_msim_opts *o) {
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 64], spec[64];
    const char *at = strchr(val, '@');
    int elem = 0;
    if (o->nfaults == TB_MSIM_MAX_FAULTS) return usage_error("--fault: at most 8");
    if (at) {
        if (strlen(at) != 2 || at[1] < '1' || at[1] > '3') {
            snprintf(msg, sizeof msg, "--fault: '%.60s': expected KIND:N@ELEMENT with ELEMENT 1, 2 or 3", val);
            return usage_error(msg);
        }
        elem = at[1] - '0';
    }
    snprintf(spec, sizeof spec, "%.*s", at ? (int)(at - val) : (int)strlen(val), val);
    if (tb_msim_parse_fault(spec, &o->faults[o->nfaults], err) != 0) {
        snprintf(msg, sizeof msg, "--fault: %s", err);
        return usage_error(msg);
    }
    o->faults[o->nfaults].element = elem;
    if (elem && o->faults[o->nfaults].kind != TB_MSIM_FAULT_NAN && o->faults[o->nfaults].kind != TB_MSIM_FAULT_INF &&
        o->faults[o->nfaults].kind != TB_MSIM_FAULT_NEGATIVE) {
        snprintf(msg, sizeof msg, "--fault: '%.60s': only nan, inf and negative hit one element", val);
        return usage_error(msg);
    }
    o->nfaults++;
    return SIM_NEXT;
}

static const struct option sim_longopts[] = {
    {"listen", required_argument, NULL, 'l'},
    {"protocol", required_argument, NULL, 'p'},
    {"watts", required_argument, NULL, 'w'},
    {"trace", required_argument, NULL, 't'},
    {"loop", no_argument, NULL, 'L'},
    {"cpu", required_argument, NULL, 'c'},
    {"cpu-of", required_argument, NULL, 'O'},
    {"volts", required_argument, NULL, 'v'},
    {"pf", required_argument, NULL, 'f'},
    {"elements", required_argument, NULL, 'e'},
    {"fault-channel", required_argument, NULL, 'C'},
    {"split", required_argument, NULL, 'S'},
    {"interval", required_argument, NULL, 'i'},
    {"fault", required_argument, NULL, 'F'},
    {"pty", no_argument, NULL, 'P'},
    {"help", no_argument, NULL, 'h'},
    {"trace-sync", no_argument, NULL, 'R'},
    {NULL, 0, NULL, 0},
};

/* One option from getopt_long (c, optarg). Returns SIM_NEXT, or the exit status. */
static int sim_option(int c, char **argv, sim_args *a) {
    char msg[TB_ERR_LEN + 64];
    switch (c) {
    case 'l': a->listen = optarg; return SIM_NEXT;
    case 'p': return sim_protocol(optarg, &a->o);
    case 'w':
        if (parse_num("--watts", optarg, "W", 0, 1e6, &a->o.watts) != 0) return TB_EXIT_USAGE;
        a->have_watts = 1;
        return SIM_NEXT;
    case 't': a->o.trace = optarg; return SIM_NEXT;
    case 'L': a->o.trace_loop = 1; return SIM_NEXT;
    case 'R': a->o.trace_from_request = 1; return SIM_NEXT;
    case 'c': return sim_cpu(optarg, a);
    case 'O': return sim_cpu_of(optarg, &a->o);
    case 'v': return parse_num("--volts", optarg, "V", 1, 1000, &a->o.volts) != 0 ? TB_EXIT_USAGE : SIM_NEXT;
    case 'f': return parse_num("--pf", optarg, NULL, 0.01, 1, &a->o.pf) != 0 ? TB_EXIT_USAGE : SIM_NEXT;
    case 'e': return sim_elements(optarg, &a->o);
    case 'C':
        if (strlen(optarg) != 1 || optarg[0] < '1' || optarg[0] > '3')
            return usage_error("--fault-channel: expected 1, 2 or 3");
        a->o.fault_channel = optarg[0] - '0';
        return SIM_NEXT;
    case 'i': return sim_interval(optarg, &a->o);
    case 'S': return sim_split(optarg, &a->o);
    case 'F': return sim_fault(optarg, &a->o);
    case 'P': a->o.pty = 1; return SIM_NEXT;
    case 'h': usage(stdout); return TB_EXIT_OK;
    case ':': snprintf(msg, sizeof msg, "option '%s' needs a value", argv[optind - 1]); return usage_error(msg);
    default: snprintf(msg, sizeof msg, "unknown option '%s'", argv[optind - 1]); return usage_error(msg);
    }
}

/* Options that contradict each other or the protocol. Returns SIM_NEXT, or the exit status. */
static int sim_check(const sim_args *a) {
    const tb_msim_opts *o = &a->o;
    if (o->n_cpu_of && (a->have_watts || o->trace))
        return usage_error("--cpu-of: follows processes with --cpu IDLE:MAX; it contradicts --watts and --trace");
    if (o->n_cpu_of && !o->cpu_model) return usage_error("--cpu-of: needs --cpu IDLE:MAX (the watts it maps to)");
    if ((a->have_watts + (o->trace != NULL) + (o->cpu_model != NULL)) > 1)
        return usage_error("--watts, --trace and --cpu contradict each other: give one");
    if (o->trace_loop && !o->trace) return usage_error("--loop only applies to --trace");
    if (o->trace_from_request && !o->trace) return usage_error("--trace-sync only applies to --trace");
    for (int i = 0; i < o->nfaults; i++) {
        if (o->faults[i].kind == TB_MSIM_FAULT_UNCERTAINTY && o->protocol != TB_MSIM_PTD)
            return usage_error("--fault uncertainty: only the ptd protocol reports uncertainty");
        if (o->faults[i].element && (o->protocol != TB_MSIM_WT310 || o->faults[i].element > o->elements))
            return usage_error("--fault KIND:N@ELEMENT: needs --protocol wt310 and an element within --elements "
                               "(ptd: --fault-channel)");
    }
    if (o->pty && (o->protocol == TB_MSIM_PTD || o->protocol == TB_MSIM_PTD_TEMP))
        return usage_error("--pty: PTDaemon is TCP only");
    if (o->fault_channel && (o->protocol != TB_MSIM_PTD || o->fault_channel > o->elements))
        return usage_error("--fault-channel: needs --protocol ptd and a channel within --elements");
    int shares = (o->split[0] > 0) + (o->split[1] > 0) + (o->split[2] > 0);
    if (shares && (o->protocol == TB_MSIM_PTD_TEMP || o->protocol == TB_MSIM_WT210 || shares != o->elements))
        return usage_error("--split: one share per element of --elements (2 or 3), with --protocol wt310 or ptd");
    if (o->protocol == TB_MSIM_PTD_TEMP && (o->nfaults || o->cpu_model))
        return usage_error("--protocol ptd-temp: serves --watts or the trace as degrees C (no --fault, no --cpu)");
    return SIM_NEXT;
}

/* --listen ADDR:PORT ([ADDR] for IPv6) into o->host and o->port. Returns SIM_NEXT, or the exit status. */
static int sim_listen(const char *arg, tb_msim_opts *o) {
    const char *colon = strrchr(arg, ':');
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 64];
    size_t hl;
    uint64_t port;
    if (!colon || tb_parse_u64(colon + 1, &port, err) != 0 || port > 65535) {
        snprintf(msg, sizeof msg, "--listen: '%s': expected ADDR:PORT (PORT 0 = any free port)", arg);
        return usage_error(msg);
    }
    hl = (size_t)(colon - arg);
    if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']') {
        arg++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof o->host) {
        snprintf(msg, sizeof msg, "--listen: '%s': missing address", arg);
        return usage_error(msg);
    }
    memcpy(o->host, arg, hl);
    o->host[hl] = '\0';
    snprintf(o->port, sizeof o->port, "%llu", (unsigned long long)port);
    return SIM_NEXT;
}

/* The lines that say what the emulator serves and where. */
static void sim_banner(const tb_msim_opts *o, const tb_msim *sim) {
    printf("meter sim %s: %s", TB_VERSION,
           o->protocol == TB_MSIM_PTD        ? "ptd"
           : o->protocol == TB_MSIM_PTD_TEMP ? "ptd-temp (degrees C)"
           : o->protocol == TB_MSIM_WT210    ? "wt210"
                                             : "wt310");
    if (o->trace)
        printf(", trace %s%s", o->trace, o->trace_loop ? " (looped)" : "");
    else if (o->n_cpu_of) {
        printf(", %g..%g W by the CPU of pid", o->cpu_idle_w, o->cpu_max_w);
        for (int i = 0; i < o->n_cpu_of; i++)
            printf("%s%ld", i ? "," : " ", (long)o->cpu_of[i]);
        printf(" and descendants");
    } else if (o->cpu_model)
        printf(", %s", o->cpu_model);
    else
        printf(", %g W", o->watts);
    printf(", %g V, PF %g, %d element%s", o->volts, o->pf, o->elements, o->elements > 1 ? "s" : "");
    for (int i = 0; o->split[0] > 0 && i < o->elements; i++)
        printf("%s%.3g", i ? ":" : " split ", o->split[i]);
    for (int i = 0; i < o->nfaults; i++) {
        printf("%s%s:%llu", i ? "," : ", faults ", tb_msim_fault_name(o->faults[i].kind),
               (unsigned long long)o->faults[i].every);
        if (o->faults[i].element) printf("@%d", o->faults[i].element);
    }
    printf("\n");
    if (tb_msim_pty_path(sim)[0]) printf("pty %s\n", tb_msim_pty_path(sim));
    if (o->trace && !o->trace_from_request)
        printf("trace t=0 at monotonic %llu us\n", (unsigned long long)tb_msim_t0_us(sim));
    if (strchr(o->host, ':'))
        printf("listening on [%s]:%d\n", o->host, tb_msim_port(sim));
    else
        printf("listening on %s:%d\n", o->host, tb_msim_port(sim));
    fflush(stdout);
}

/* Serves until SIGINT or SIGTERM (SIGUSR1: the counters), then prints the counters. */
static int sim_serve(const tb_msim_opts *o, tb_msim *sim) {
    struct sigaction sa;
    tb_msim_counters k;
    char err[TB_ERR_LEN], line[512];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_dump;
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sim_banner(o, sim);
    if (tb_msim_run(sim, &sim_stop, &sim_dump, stdout, err) != 0) {
        fprintf(stderr, "tilebench meter sim: %s\n", err);
        return TB_EXIT_ABORTED;
    }
    tb_msim_get_counters(sim, &k);
    tb_msim_format_counters(&k, line, sizeof line);
    printf("counters: %s\n", line);
    fflush(stdout);
    return TB_EXIT_OK;
}

static int cmd_sim(int argc, char **argv) {
    sim_args a;
    tb_msim *sim = NULL;
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 64];
    int c, rc;

    memset(&a, 0, sizeof a);
    tb_msim_defaults(&a.o);
    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", sim_longopts, NULL)) != -1)
        if ((rc = sim_option(c, argv, &a)) != SIM_NEXT) return rc;
    if (optind != argc) {
        snprintf(msg, sizeof msg, "sim: unexpected argument '%s'", argv[optind]);
        return usage_error(msg);
    }
    if ((rc = sim_check(&a)) != SIM_NEXT) return rc;
    if (a.listen && (rc = sim_listen(a.listen, &a.o)) != SIM_NEXT) return rc;
    if (tb_msim_open(&a.o, &sim, err) != 0) {
        fprintf(stderr, "tilebench meter sim: %s\n", err);
        return strstr(err, "listen") ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
    }
    rc = sim_serve(&a.o, sim);
    tb_msim_close(sim);
    return rc;
}

/* ---- export ---------------------------------------------------------------------- */

#define EXPORT_MAX_METERS 16

/* One exported meter: the meter and the labels of its series. */
typedef struct export_meter {
    tb_meter *m;
    const tb_meter_info *info;
    char idx[16], volt_range[32], amp_range[32];
    const char *mode;
    char channel[TB_METER_MAX_CHANNELS][8]; /* a meter read as channels: each one's number, as a label */
} export_meter;

static const struct {
    const char *name;
    tb_metric_type type;
    const char *help;
} export_families[] = {
    {"tilebench_meter_info", TB_METRIC_GAUGE,
     "The meter's identity: index, URI (passwords redacted), model, serial, firmware, driver, estimated (value 1)."},
    {"tilebench_meter_watts", TB_METRIC_GAUGE, "Active power of the last good sample, W."},
    {"tilebench_meter_volts", TB_METRIC_GAUGE, "RMS voltage of the last good sample, V (where the meter reports it)."},
    {"tilebench_meter_amps", TB_METRIC_GAUGE, "RMS current of the last good sample, A (where the meter reports it)."},
    {"tilebench_meter_power_factor", TB_METRIC_GAUGE,
     "Power factor of the last good sample (where the meter reports it)."},
    {"tilebench_meter_uncertainty_ratio", TB_METRIC_GAUGE,
     "The meter's own uncertainty of the last good sample's W, as a ratio (where the meter reports it)."},
    {"tilebench_meter_sample_timestamp_seconds", TB_METRIC_GAUGE,
     "Wall-clock time of the last good sample, seconds since the epoch (it stays while reads fail)."},
    {"tilebench_meter_last_read_timestamp_seconds", TB_METRIC_GAUGE,
     "Wall-clock time of the last read, good or not, seconds since the epoch."},
    {"tilebench_meter_last_read_ok", TB_METRIC_GAUGE, "1 when the last read gave a good sample, else 0."},
    {"tilebench_meter_reads_total", TB_METRIC_COUNTER, "Reads of the meter."},
    {"tilebench_meter_errors_total", TB_METRIC_COUNTER,
     "Failed reads: no reply, or a sample flagged invalid, missing, over range or implausible."},
    /* a meter read as several channels (channels= / element=): each channel of the summed sample */
    {"tilebench_meter_channel_watts", TB_METRIC_GAUGE,
     "Active power of one channel in the last good sample, W; the channels add up to tilebench_meter_watts."},
    {"tilebench_meter_channel_volts", TB_METRIC_GAUGE, "RMS voltage of one channel in the last good sample, V."},
    {"tilebench_meter_channel_amps", TB_METRIC_GAUGE, "RMS current of one channel in the last good sample, A."},
    {"tilebench_meter_channel_power_factor", TB_METRIC_GAUGE, "Power factor of one channel in the last good sample."},
    {"tilebench_meter_channel_last_read_ok", TB_METRIC_GAUGE,
     "1 when the channel's reading in the last read was good, else 0."},
    {"tilebench_meter_channel_reads_total", TB_METRIC_COUNTER, "Reads of the channel."},
    {"tilebench_meter_channel_errors_total", TB_METRIC_COUNTER,
     "Reads in which this channel gave no reading, or one flagged invalid, missing, over range or implausible."},
};

static const char *export_mode(const tb_meter_info *in) {
    if (in->volt_mode == TB_RANGE_AUTO || in->amp_mode == TB_RANGE_AUTO) return "auto";
    if (in->volt_mode == TB_RANGE_FIXED && in->amp_mode == TB_RANGE_FIXED) return "fixed";
    return "unknown";
}

static void export_range(double v, char *buf, size_t len) {
    if (v > 0)
        snprintf(buf, len, "%g", v);
    else
        snprintf(buf, len, "unknown");
}

/* The channels of meter e's read s (read: tb_meter_sample gave a sample; ok:
 * the summed sample is good). Each channel's counters and last_read_ok are
 * its own; its values change only with a good summed sample, so the channels
 * shown always add up to the watts shown. */
static void export_channels(tb_metrics *reg, export_meter *e, const tb_sample *s, int read, int ok) {
    for (int k = 0; k < e->info->nchannels && k < TB_METER_MAX_CHANNELS; k++) {
        const char *const lab[] = {"meter", e->idx, "uri", e->info->uri, "channel", e->channel[k], NULL};
        const tb_channel_sample *c = read && k < s->nch ? &s->ch[k] : NULL;
        int good = c && !(c->flags & TB_SAMPLE_BAD) && isfinite(c->watts);
        (void)tb_metrics_add(reg, "tilebench_meter_channel_reads_total", lab, 1);
        (void)tb_metrics_add(reg, "tilebench_meter_channel_errors_total", lab, good ? 0 : 1);
        (void)tb_metrics_set(reg, "tilebench_meter_channel_last_read_ok", lab, good);
        if (!ok || !c) continue;
        (void)tb_metrics_set(reg, "tilebench_meter_channel_watts", lab, c->watts);
        if (isfinite(c->volts)) (void)tb_metrics_set(reg, "tilebench_meter_channel_volts", lab, c->volts);
        if (isfinite(c->amps)) (void)tb_metrics_set(reg, "tilebench_meter_channel_amps", lab, c->amps);
        if (isfinite(c->pf)) (void)tb_metrics_set(reg, "tilebench_meter_channel_power_factor", lab, c->pf);
    }
}

/* One read of meter e into the registry. */
static void export_read(tb_metrics *reg, export_meter *e) {
    const char *const id[] = {"meter", e->idx, "uri", e->info->uri, NULL};
    const char *const lab[] = {"meter",     e->idx,       "uri",  e->info->uri, "volt_range", e->volt_range,
                               "amp_range", e->amp_range, "mode", e->mode,      NULL};
    char err[TB_ERR_LEN];
    tb_sample s;
    int read = tb_meter_sample(e->m, &s, err) == 0, ok = read && !(s.flags & TB_SAMPLE_BAD) && isfinite(s.watts);
    if (e->info->nchannels > 1) export_channels(reg, e, &s, read, ok);
    (void)tb_metrics_add(reg, "tilebench_meter_reads_total", id, 1);
    (void)tb_metrics_add(reg, "tilebench_meter_errors_total", id, ok ? 0 : 1);
    (void)tb_metrics_set(reg, "tilebench_meter_last_read_ok", id, ok);
    (void)tb_metrics_set(reg, "tilebench_meter_last_read_timestamp_seconds", id, (double)s.wall_us / 1e6);
    if (!ok) return; /* the last good sample stays, with its time */
    (void)tb_metrics_set(reg, "tilebench_meter_watts", lab, s.watts);
    if (isfinite(s.volts)) (void)tb_metrics_set(reg, "tilebench_meter_volts", lab, s.volts);
    if (isfinite(s.amps)) (void)tb_metrics_set(reg, "tilebench_meter_amps", lab, s.amps);
    if (isfinite(s.pf)) (void)tb_metrics_set(reg, "tilebench_meter_power_factor", lab, s.pf);
    if (isfinite(s.uncertainty_pct))
        (void)tb_metrics_set(reg, "tilebench_meter_uncertainty_ratio", lab, s.uncertainty_pct / 100.0);
    (void)tb_metrics_set(reg, "tilebench_meter_sample_timestamp_seconds", id, (double)s.wall_us / 1e6);
}

/* Opens the meters of argv[0..n) into e: 0, or the exit status (an error was printed; the ones opened are closed). */
static int export_open(char **uris, int n, export_meter *e, tb_metrics *reg) {
    char err[TB_ERR_LEN];
    for (int i = 0; i < n; i++) {
        int rc = tb_meter_open(uris[i], &e[i].m, err);
        if (rc != 0) {
            fprintf(stderr, "tilebench meter export: %s\n", err); /* the front end redacts the URI */
            for (int k = 0; k < i; k++)
                tb_meter_close(e[k].m);
            return rc == TB_METER_EUNREACH ? TB_EXIT_ABORTED : TB_EXIT_USAGE;
        }
        e[i].info = tb_meter_get_info(e[i].m);
        snprintf(e[i].idx, sizeof e[i].idx, "%d", i);
        export_range(e[i].info->volt_range_v, e[i].volt_range, sizeof e[i].volt_range);
        export_range(e[i].info->amp_range_a, e[i].amp_range, sizeof e[i].amp_range);
        e[i].mode = export_mode(e[i].info);
        for (int k = 0; k < e[i].info->nchannels && k < TB_METER_MAX_CHANNELS; k++)
            snprintf(e[i].channel[k], sizeof e[i].channel[k], "%d", e[i].info->channel[k]);
        (void)tb_metrics_set(reg, "tilebench_meter_info",
                             (const char *[]){"meter", e[i].idx, "uri", e[i].info->uri, "model", e[i].info->model,
                                              "serial", e[i].info->serial, "firmware", e[i].info->firmware, "driver",
                                              e[i].info->driver, "estimated", e[i].info->estimated ? "1" : "0", NULL},
                             1);
    }
    return 0;
}

/* Reads every meter once per interval_us on an absolute schedule until the stop flag. */
static void export_loop(tb_metrics *reg, export_meter *e, int n, uint64_t interval_us) {
    volatile sig_atomic_t *stop = tb_cli_stop_flag();
    uint64_t next = tb_now_us();
    while (!*stop) {
        uint64_t now = tb_now_us();
        if (now >= next) {
            for (int i = 0; i < n && !*stop; i++)
                export_read(reg, &e[i]);
            next += interval_us;
            if (next < tb_now_us()) next = tb_now_us() + interval_us; /* a slow meter: skip, never burst */
            continue;
        }
        uint64_t step = next - now > 100000 ? 100000 : next - now; /* SIGINT/SIGTERM within 0.1 s */
        struct timespec d = {(time_t)(step / 1000000u), (long)(step % 1000000u) * 1000};
        nanosleep(&d, NULL);
    }
}

static int cmd_export(int argc, char **argv) {
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"interval", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 64], host[256], where[300];
    uint64_t interval_us = 1000000u;
    const char *listen = NULL;
    export_meter e[EXPORT_MAX_METERS];
    tb_metrics *reg;
    tb_metrics_server *srv = NULL;
    int c, n, port, rc;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            if (tb_listen_parse(optarg, host, sizeof host, &port, err) != 0) {
                snprintf(msg, sizeof msg, "--listen: %s", err);
                return usage_error(msg);
            }
            listen = optarg;
            break;
        case 'i':
            if (tb_parse_duration_us(optarg, &interval_us, err) != 0 || interval_us < 100000u) {
                snprintf(msg, sizeof msg, "--interval: '%s': expected a duration of at least 100ms", optarg);
                return usage_error(msg);
            }
            break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': snprintf(msg, sizeof msg, "option '%s' needs a value", argv[optind - 1]); return usage_error(msg);
        default: snprintf(msg, sizeof msg, "unknown option '%s'", argv[optind - 1]); return usage_error(msg);
        }
    }
    n = argc - optind;
    if (n < 1) return usage_error("export: give at least one meter URI");
    if (n > EXPORT_MAX_METERS) return usage_error("export: at most 16 meters");
    if (!listen) return usage_error("export: --listen ADDR:PORT is required (e.g. 127.0.0.1:9465)");
    memset(e, 0, sizeof e);
    reg = tb_metrics_new();
    for (size_t i = 0; i < sizeof export_families / sizeof export_families[0]; i++)
        (void)tb_metrics_declare(reg, export_families[i].name, export_families[i].type, export_families[i].help, err);
    if ((rc = export_open(argv + optind, n, e, reg)) != 0) {
        tb_metrics_free(reg);
        return rc;
    }
    if (tb_metrics_serve(reg, listen, &srv, err) != 0) {
        fprintf(stderr, "tilebench meter export: --listen: %s\n", err);
        rc = TB_EXIT_USAGE;
    } else {
        tb_cli_catch_signals();
        tb_metrics_server_address(srv, where, sizeof where);
        printf("meter export %s: %d meter%s every %.3gs\nlistening on %s\n", TB_VERSION, n, n == 1 ? "" : "s",
               (double)interval_us / 1e6, where);
        fflush(stdout);
        export_loop(reg, e, n, interval_us);
        tb_metrics_server_stop(srv);
        rc = TB_EXIT_OK;
    }
    for (int i = 0; i < n; i++)
        tb_meter_close(e[i].m);
    tb_metrics_free(reg);
    return rc;
}

int tb_cmd_meter(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return TB_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return TB_EXIT_OK;
    }
    if (strcmp(argv[1], "probe") == 0) return cmd_probe(argc - 1, argv + 1);
    if (strcmp(argv[1], "sim") == 0) return cmd_sim(argc - 1, argv + 1);
    if (strcmp(argv[1], "export") == 0) return cmd_export(argc - 1, argv + 1);
    fprintf(stderr, "tilebench meter: unknown subcommand '%s' (probe, sim or export)\n", argv[1]);
    return TB_EXIT_USAGE;
}
