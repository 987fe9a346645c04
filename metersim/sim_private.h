/*
 * sim_private.h: what the emulator's files share (meter_sim.h is the public
 * side). meter_sim.c is the server (sockets, pty, clients, the poll loop);
 * sim_source.c the load model (constant, trace, CPU estimate), the faults
 * and the counters; sim_yokogawa.c the WT310/WT210 dialect; sim_ptd.c the
 * PTDaemon dialect. The instrument state lives in one struct tb_msim, as on
 * a real analyzer where every interface talks to the same instrument.
 */
#ifndef TB_METERSIM_SIM_PRIVATE_H
#define TB_METERSIM_SIM_PRIVATE_H

#include "metersim/meter_sim.h"
#include "powermeter/meter.h"

#define SIM_MAX_CLIENTS  32
#define SIM_LINE         1024
#define SIM_MAX_ITEMS    16    /* :NUM:NORM:NUM up to this: 4 items of 3 elements fit */
#define SIM_PTD_UNC_GOOD 0.002 /* 0.2%: a WT310 well inside its range */
#define SIM_PTD_UNC_BAD  0.015 /* 1.5%: above SPEC's 1% limit */
#define SIM_NEG_W        -27.1 /* the WT310E field bug's reading (mlcommons/power-dev#253) */
#define SIM_NEG_A        -3.199
#define SIM_OVER_RANGE   1.4 /* an input above 140% of its fixed range over-ranges (docs/meters.md) */

/* What a dialect's line handler asks of the server. */
enum { SIM_REPLY = 0, SIM_STALL = 1, SIM_DISCONNECT = 2 };

typedef struct client {
    int fd;
    int is_socket; /* 0: the pty master, which is never closed */
    char in[SIM_LINE * 2];
    size_t have;
    int rl_pending; /* PTD: an RL waits for the next sample */
    int rl_fault;   /* its fault kind, or -1 */
} client;

/* One WT310 numeric item: function name and element (0 = SIGMA). */
typedef struct item {
    char func[8];
    int elem;
} item;

struct tb_msim {
    tb_msim_opts o;
    tb_msim_trace *trace;
    tb_meter *cpu;
    double cpu_last_w;
    int ncpu;                    /* --cpu-of: online CPUs */
    double tree_cpu_s;           /* --cpu-of: the trees' CPU time at tree_us */
    uint64_t tree_us;            /* when it was read (monotonic) */
    double src_v, src_a, src_pf; /* the trace's V, A, PF now (set by sim_source_watts); NaN: derive them */
    int lfd, port;
    int pty_fd;
    char pty_path[64];
    client *clients[SIM_MAX_CLIENTS];
    uint64_t t0_us;
    int trace_wait; /* trace_from_request: t0_us is set by the first value request */
    FILE *out;      /* tb_msim_run's, for the line saying when that was */
    tb_msim_counters c;
    /* instrument state (Yokogawa) */
    int head, verb;
    int err_code;
    int nitems;
    item items[SIM_MAX_ITEMS];
    int wt210_on[6]; /* V A W PF VA VAR */
    double vrange, arange;
    int vauto, aauto, cfac;
    double rate_s;
    /* PTD state */
    int running;
    uint64_t go_us, interval_us;
    uint64_t last_read;  /* index of the newest sample RL returned */
    uint64_t stats_upto; /* samples folded into the stats below */
    double sum_w, min_w, max_w, unc_sum, unc_min, unc_max;
    uint64_t unc_invalid, errors;
    double vrange_ptd, arange_ptd;
    int vauto_ptd, aauto_ptd;
};

/* ---- sim_source.c ---- */

/* --cpu-of: a new utilization needs at least this long since the last
 * reading (the CPU times of /proc move in 10 ms ticks); a request sooner
 * gets the last watts. */
#define SIM_TREE_MIN_US 200000u

/* --cpu-of: takes the trees' baseline CPU time. 0, or -1 with err. */
int sim_tree_open(tb_msim *m, char *err);
/* Total watts at at_us from the source; sets m->src_v/src_a/src_pf (NaN
 * unless the trace gives them). The first call with trace_from_request sets
 * the trace's t = 0. */
double sim_source_watts(tb_msim *m, uint64_t at_us);
/* The fault for value request number n (1-based), or -1; uncertainty only for PTD. */
int sim_fault_for(const tb_msim *m, uint64_t n, int ptd);
/* Applies the negative or inconsistent fault to the values about to be served. */
void sim_implausible_values(tb_msim *m, int f, double *total_w);
/* Element e's (1..elements) share of the total W and A: --split's, else even. */
double sim_share(const tb_msim *m, int e);
/* The largest share of any element (the one a range must hold). */
double sim_max_share(const tb_msim *m);

/* ---- meter_sim.c ---- */

/* Sends text as is to the client. */
void sim_put(client *c, const char *s);
/* Sends the counters line ("requests=N ...") and eol to the client (the in-band "tb:count?"). */
void sim_put_counters(tb_msim *m, client *c, const char *eol);

/* ---- sim_yokogawa.c ---- */

/* The Yokogawa power-up state (also *RST). */
void sim_yoko_reset(tb_msim *m);
/* 1 when v is one of the WT310's voltage (volt = 1) or current ranges. */
int sim_range_ok(int volt, double v);
/* One Yokogawa line. Returns SIM_REPLY, SIM_STALL or SIM_DISCONNECT. */
int sim_yoko_line(tb_msim *m, client *c, const char *line);

/* ---- sim_ptd_temp.c ---- */

/* One line of a PTDaemon in temperature mode. Returns SIM_REPLY. */
int sim_ptd_temp_line(tb_msim *m, client *c, const char *line);

/* ---- sim_ptd.c ---- */

/* One PTDaemon line. Returns SIM_REPLY or SIM_DISCONNECT. */
int sim_ptd_line(tb_msim *m, client *c, const char *line);
/* Answers the RLs that wait for a sample, once it has come; lowers *timeout_ms
 * to the time until the next sample. */
void sim_ptd_pending(tb_msim *m, int *timeout_ms);

#endif
