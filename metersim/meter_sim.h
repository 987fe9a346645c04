/*
 * meter_sim.h: the power meter emulator behind `tilebench meter sim`. A real
 * TCP server (and optionally a pseudo-terminal, for the serial transport)
 * that speaks the Yokogawa WT310 :NUMeric and WT210 :MEASure command subsets
 * or the SPEC PTDaemon protocol, serves watts from a constant, a trace file
 * or the host's CPU utilization, injects faults on request, and counts what
 * it served so tests can compare its counters with what a client got.
 *
 * Counters are read in-band with the extra command "tb:count?" (one line,
 * see tb_msim_format_counters), which no real meter has and no driver sends.
 */
#ifndef TB_METERSIM_METER_SIM_H
#define TB_METERSIM_METER_SIM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/tb_common.h"

/* TB_MSIM_PTD_TEMP: a PTDaemon in temperature mode; the source is served as degrees C. */
enum { TB_MSIM_WT310 = 0, TB_MSIM_WT210, TB_MSIM_PTD, TB_MSIM_PTD_TEMP };

/* Fault kinds, applied to every Nth value request (1-based: N, 2N, ...). */
enum {
    TB_MSIM_FAULT_NAN = 0,      /* no data: "NAN" (WT310), 9.91E+37 (WT210), Watts -1 (PTD) */
    TB_MSIM_FAULT_INF,          /* over-range: "INF" (WT310), 9.9E+37 (WT210), Watts -1 (PTD) */
    TB_MSIM_FAULT_GARBAGE,      /* a line of noise instead of the values */
    TB_MSIM_FAULT_STALL,        /* no reply at all to that request */
    TB_MSIM_FAULT_DISCONNECT,   /* the connection is closed instead of replying */
    TB_MSIM_FAULT_UNCERTAINTY,  /* PTD only: the sample's uncertainty is 1.5% (> 1%) */
    TB_MSIM_FAULT_NEGATIVE,     /* -27.1 W and -3.199 A, the WT310E field bug (mlcommons/power-dev#253) */
    TB_MSIM_FAULT_INCONSISTENT, /* W as the source says, the current doubled: V x A x PF = 2 W */
    TB_MSIM_FAULT_KINDS
};

typedef struct tb_msim_fault {
    int kind;       /* TB_MSIM_FAULT_* */
    uint64_t every; /* >= 1 */
    int element;    /* Yokogawa with elements > 1 (KIND:N@ELEMENT): nan, inf and negative hit this
                     * element's values alone (1..elements); 0: every value of the reply */
} tb_msim_fault;

#define TB_MSIM_MAX_FAULTS 8
#define TB_MSIM_MAX_CPU_OF 64 /* process trees --cpu-of may follow */

typedef struct tb_msim_opts {
    int protocol;           /* TB_MSIM_* */
    char host[128];         /* listen address, default "127.0.0.1" */
    char port[8];           /* "0" = any free port (the bound one is printed) */
    double watts;           /* constant source, W (used when no trace and no cpu model) */
    const char *trace;      /* trace file "t_s,W" or "t_s,W,V,A,PF" per line (W may be < 0), or NULL */
    int trace_loop;         /* 1: the trace repeats; 0: the last value holds */
    int trace_from_request; /* 1: the trace's t = 0 is the first value request, not the start */
    const char *cpu_model;  /* an estimate: URI ("estimate:?idle=50&max=200"), or NULL */
    double cpu_idle_w;      /* with cpu_of: the model's watts at 0 and full utilization */
    double cpu_max_w;
    pid_t cpu_of[TB_MSIM_MAX_CPU_OF]; /* n_cpu_of > 0: power follows the CPU of these processes and */
    int n_cpu_of;                     /* their descendants (powermeter/proctree.h), not the host's */
    double volts;                     /* the voltage served, V (default 230) */
    double pf;                        /* the power factor served (default 0.95) */
    int elements;                     /* input elements 1..3 (WT330 has 3); W is split evenly unless split[] */
    double split[3];                  /* --split: each element's share of W (summing to 1); all 0: even */
    int fault_channel;                /* PTD with elements > 1: the nan and negative faults hit only this
                                       * channel (1..elements) of the multi-channel RL line; 0: the whole line */
    uint64_t ptd_interval_us;         /* PTD sample interval when Go asks for 0 */
    int pty;                          /* 1: also serve the protocol on a pseudo-terminal */
    tb_msim_fault faults[TB_MSIM_MAX_FAULTS];
    int nfaults; /* the first matching fault wins when several hit one request */
} tb_msim_opts;

/* What the emulator did, since it started. */
typedef struct tb_msim_counters {
    uint64_t requests;                           /* value requests received (:NUM:NORM:VAL?, :MEAS:NORM:VAL?, RL) */
    uint64_t served;                             /* value replies sent (PTD: RL sample lines), faulty ones included */
    uint64_t valid;                              /* served - nan - overrange - garbage - uncertain - implausible */
    uint64_t nan, overrange, garbage, uncertain; /* served with that fault */
    uint64_t implausible; /* served with the negative or inconsistent fault, or a negative trace value */
    uint64_t stalled;     /* requests left unanswered */
    uint64_t disconnects; /* connections closed instead of a reply */
    uint64_t connections; /* connections accepted */
} tb_msim_counters;

typedef struct tb_msim tb_msim;

/* Fills o with the defaults (wt310, 127.0.0.1:0, 100 W, 230 V, PF 0.95, 1 element, 1 s). */
void tb_msim_defaults(tb_msim_opts *o);

/*
 * Parses a fault spec "KIND:N" (KIND: nan, inf, garbage, stall, disconnect,
 * uncertainty, negative, inconsistent; N >= 1: every Nth value request).
 * Returns 0, or -1 with err naming the spec.
 */
int tb_msim_parse_fault(const char *spec, tb_msim_fault *out, char *err) TB_WUR;
/* The spec name of a fault kind ("nan"), "?" for an unknown one. */
const char *tb_msim_fault_name(int kind);

/*
 * Loads the trace (if any), opens the CPU model (if any) and binds the
 * listening socket. Returns 0, or -1 with err ("listen 127.0.0.1:8888:
 * Address already in use", "trace.csv:3: ..."). Caller frees with
 * tb_msim_close.
 */
int tb_msim_open(const tb_msim_opts *o, tb_msim **out, char *err) TB_WUR;

/* The bound TCP port (useful after asking for port 0). */
int tb_msim_port(const tb_msim *m);
/* The pseudo-terminal's path ("/dev/pts/N"), or "" without --pty. */
const char *tb_msim_pty_path(const tb_msim *m);
/* The source's time zero (a trace's t = 0 s) on CLOCK_MONOTONIC, µs: lets a
 * test map trace time onto the monotonic times stored with each sample. With
 * trace_from_request it is 0 until the first value request, and tb_msim_run
 * prints "trace t=0 at monotonic N us" to its out when that request comes. */
uint64_t tb_msim_t0_us(const tb_msim *m);

/*
 * Serves until *stop becomes nonzero (set it from a signal handler). Each
 * time *dump is nonzero it prints the counters line to out and clears it
 * (SIGUSR1 in the CLI). Returns 0, or -1 with err on a fatal socket error.
 */
int tb_msim_run(tb_msim *m, volatile sig_atomic_t *stop, volatile sig_atomic_t *dump, FILE *out, char *err);

void tb_msim_get_counters(const tb_msim *m, tb_msim_counters *c);

/* "requests=N served=N valid=N nan=N overrange=N garbage=N uncertain=N
 * implausible=N stalled=N disconnects=N connections=N" into buf (len bytes). */
void tb_msim_format_counters(const tb_msim_counters *c, char *buf, size_t len);

void tb_msim_close(tb_msim *m); /* NULL is a no-op */

/*
 * The trace model, public for tests. Lines are "seconds,watts" or
 * "seconds,watts,volts,amps,pf" (then those are served as given instead of
 * the --volts/--pf defaults and the current derived from them); watts may be
 * negative, to serve implausible readings. The watts at t_s seconds since the
 * start are those of the last point with time <= t_s (a step function); before
 * the first point, the first value; after the last, the last value, or with
 * loop the trace starts over (period = last time; requires last time > 0).
 */
typedef struct tb_msim_trace tb_msim_trace;
int tb_msim_trace_load(const char *path, tb_msim_trace **out, char *err) TB_WUR;
double tb_msim_trace_watts(const tb_msim_trace *t, double t_s, int loop);
void tb_msim_trace_free(tb_msim_trace *t);

#endif
