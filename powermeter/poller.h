/*
 * poller.h: one thread that samples every meter at a fixed interval (1 Hz by
 * default, SPECpower) on an absolute monotonic schedule, so jitter never
 * accumulates, and keeps every sample in memory for the coordinator to read
 * by time window. It records its own lateness (jitter) per tick.
 */
#ifndef TB_POWERMETER_POLLER_H
#define TB_POWERMETER_POLLER_H

#include <stdint.h>

#include "powermeter/meter.h"

typedef struct tb_poller tb_poller;

/* A sample as the poller keeps it: which meter, and the sample. */
typedef struct tb_poll_sample {
    int meter; /* index into the meters given to tb_poller_start */
    tb_sample s;
} tb_poll_sample;

/*
 * Starts the poller thread over n meters (borrowed: they must outlive the
 * poller) with the given interval in µs (1000000 for 1 Hz). First sample is
 * taken immediately. Returns 0 or -1 with err.
 */
int tb_poller_start(tb_meter **meters, int n, uint64_t interval_us, tb_poller **out, char *err) TB_WUR;

/*
 * Copies the samples with mono_us in [t0_us, t1_us) into a malloc'd array
 * (caller frees), ordered by time then meter. Returns the count (>= 0).
 * Thread-safe while the poller runs.
 */
int tb_poller_window(tb_poller *p, uint64_t t0_us, uint64_t t1_us, tb_poll_sample **out);

/* The latest sample of each meter summed: W; NaN if any meter has none yet. */
double tb_poller_latest_watts(tb_poller *p);

/* Worst lateness of a tick behind its schedule so far, µs. */
uint64_t tb_poller_max_jitter_us(tb_poller *p);

/*
 * Ticks skipped so far because the poller fell more than one interval behind
 * (a slow meter or a stalled host); missed ticks are skipped, never replayed
 * in a burst. A nonzero count means the sample cadence had gaps.
 */
uint64_t tb_poller_skipped_ticks(tb_poller *p);

/* Wake-up lateness of the ticks due at or after since_us (monotonic):
 * nearest-rank p50 and p99 and the max, µs. Returns the number of ticks (0:
 * all three are 0). */
int tb_poller_jitter(tb_poller *p, uint64_t since_us, uint64_t *p50_us, uint64_t *p99_us, uint64_t *max_us);

/* Stops and joins the thread, frees everything. NULL is a no-op. */
void tb_poller_stop(tb_poller *p);

#endif
