/*
 * poller.c: the meter poller. One thread samples every meter once per tick on
 * an absolute CLOCK_MONOTONIC schedule (tick k is due at start + k*interval,
 * so jitter never accumulates), keeps every sample in a growable array under
 * a mutex, and lets the coordinator read them back by time window.
 *
 * The sleep is pthread_cond_timedwait on a CLOCK_MONOTONIC condvar with an
 * absolute deadline: the same schedule clock_nanosleep(TIMER_ABSTIME) would
 * give, but tb_poller_stop can wake it at once instead of waiting out the
 * interval. When a tick falls more than one interval behind (a meter that
 * hung, a stalled host), the missed ticks are skipped, not replayed in a
 * burst, and the lateness is recorded: a burst would put several samples at
 * one instant and bias the trapezoid mean toward that moment.
 */
#include "powermeter/poller.h"
#include "common/buf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tb_poller {
    tb_meter **meters; /* copy of the caller's array; meters themselves borrowed */
    int n;
    uint64_t interval_us;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* signalled by tb_poller_stop */
    int stopping;

    /* Guarded by mu. */
    tb_poll_sample *buf;
    size_t len, cap;
    tb_sample *latest; /* n: each meter's most recent sample */
    int *have_latest;  /* n */
    uint64_t max_jitter_us;
    uint64_t (*lates)[2]; /* per tick: due time and how late it woke, µs */
    size_t n_lates, cap_lates;
    uint64_t skipped;
};

static void us_to_timespec(uint64_t us, struct timespec *ts) {
    ts->tv_sec = (time_t)(us / 1000000u);
    ts->tv_nsec = (long)(us % 1000000u) * 1000L;
}

/* Waits until deadline_us (monotonic) or stop. Returns 1 when stopping. Called with mu held.
 * Only tb_now_us() decides that the deadline has passed: a timed wait that
 * reports ETIMEDOUT early (its clock is not the one we measure with, as
 * under an LD_PRELOADed time shim such as libfaketime when the wall clock
 * jumps) sleeps out the rest in short monotonic steps instead of taking a
 * sample early, so a wall-clock jump cannot make the poller race (found by
 * test_clock_jump: 240,000 samples in a 10 s steady state). */
static int wait_until(tb_poller *p, uint64_t deadline_us) {
    struct timespec ts;
    uint64_t now;
    us_to_timespec(deadline_us, &ts);
    while (!p->stopping && (now = tb_now_us()) < deadline_us) {
        int rc = pthread_cond_timedwait(&p->wake, &p->mu, &ts);
        if (rc == ETIMEDOUT && !p->stopping && (now = tb_now_us()) < deadline_us) {
            uint64_t step = deadline_us - now < 5000 ? deadline_us - now : 5000;
            struct timespec d;
            us_to_timespec(step, &d);
            pthread_mutex_unlock(&p->mu);
            (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
            pthread_mutex_lock(&p->mu);
        }
    }
    return p->stopping;
}

static void append(tb_poller *p, int meter, const tb_sample *s) {
    p->buf = tb_grow(p->buf, p->len, &p->cap, sizeof *p->buf);
    p->buf[p->len].meter = meter;
    p->buf[p->len].s = *s;
    p->len++;
    p->latest[meter] = *s;
    p->have_latest[meter] = 1;
}

static void *poll_main(void *arg) {
    /* The poller must wake on time while the load generator saturates the
     * cores (issue 6: p99 <= 5 ms): with the privilege, run it under the
     * real-time FIFO policy at the lowest priority, so it preempts ordinary
     * threads but sleeps almost all the time. Without it, stay as we are. */
    {
        struct sched_param sp = {.sched_priority = 1};
        int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
        if (rc != 0)
            tb_log(TB_LOG_DEBUG, "poller: no real-time priority (%s); timing may suffer under load", strerror(rc));
    }
    tb_poller *p = arg;
    tb_sample *tick = xcalloc((size_t)p->n, sizeof *tick);
    int *failing = xcalloc((size_t)p->n, sizeof *failing);
    uint64_t next = tb_now_us(); /* first sample immediately */
    int i;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        uint64_t now, late;
        if (wait_until(p, next)) break;
        now = tb_now_us();
        late = now > next ? now - next : 0;
        if (late > p->max_jitter_us) p->max_jitter_us = late;
        p->lates = tb_grow(p->lates, p->n_lates, &p->cap_lates, sizeof *p->lates);
        p->lates[p->n_lates][0] = next;
        p->lates[p->n_lates][1] = late;
        p->n_lates++;
        pthread_mutex_unlock(&p->mu);

        /* Sample without the lock: a slow meter must not block readers. Each
         * sample is kept as soon as it is read, not at the end of the tick:
         * a PTDaemon's RL waits up to an interval for its next sample, and a
         * tick's earlier samples kept only after it were missing from a
         * window read in the meantime (the steady state's end: one sample
         * per meter lost per phase, test_hosts). */
        for (i = 0; i < p->n; i++) {
            char err[TB_ERR_LEN] = "";
            if (tb_meter_sample(p->meters[i], &tick[i], err) != 0) {
                if (!failing[i]) tb_log(TB_LOG_WARN, "poller: %s (recording MISSING samples)", err);
                failing[i] = 1;
            } else if (failing[i]) {
                tb_log(TB_LOG_INFO, "poller: meter '%s' is back", tb_meter_get_info(p->meters[i])->uri);
                failing[i] = 0;
            }
            pthread_mutex_lock(&p->mu);
            append(p, i, &tick[i]);
            if (i + 1 < p->n) pthread_mutex_unlock(&p->mu);
        }
        next += p->interval_us;
        now = tb_now_us();
        if (now > next && now - next > p->interval_us) {
            /* More than one interval behind: skip to the latest due tick of
             * the original grid, and remember how late we were. */
            uint64_t behind = now - next;
            uint64_t skip = behind / p->interval_us;
            if (behind > p->max_jitter_us) p->max_jitter_us = behind;
            p->skipped += skip;
            next += skip * p->interval_us;
        }
    }
    pthread_mutex_unlock(&p->mu);
    free(failing);
    free(tick);
    return NULL;
}

int tb_poller_start(tb_meter **meters, int n, uint64_t interval_us, tb_poller **out, char *err) {
    pthread_condattr_t ca;
    tb_poller *p;
    int i, rc;

    *out = NULL;
    if (!meters || n < 1) {
        tb_seterr(err, "poller: no meters to poll");
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (!meters[i]) {
            tb_seterr(err, "poller: meter %d is NULL", i);
            return -1;
        }
    }
    if (interval_us == 0) {
        tb_seterr(err, "poller: interval must be > 0 us");
        return -1;
    }
    p = xcalloc(1, sizeof *p);
    p->n = n;
    p->interval_us = interval_us;
    p->meters = xcalloc((size_t)n, sizeof *p->meters);
    memcpy(p->meters, meters, (size_t)n * sizeof *meters);
    p->latest = xcalloc((size_t)n, sizeof *p->latest);
    p->have_latest = xcalloc((size_t)n, sizeof *p->have_latest);
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines come from tb_now_us() */
    pthread_cond_init(&p->wake, &ca);
    pthread_condattr_destroy(&ca);

    rc = pthread_create(&p->thread, NULL, poll_main, p);
    if (rc != 0) {
        tb_seterr(err, "poller: pthread_create: %s", strerror(rc));
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
        free(p->have_latest);
        free(p->latest);
        free(p->meters);
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

static int cmp_poll_sample(const void *a, const void *b) {
    const tb_poll_sample *x = a, *y = b;
    if (x->s.mono_us != y->s.mono_us) return x->s.mono_us < y->s.mono_us ? -1 : 1;
    return (x->meter > y->meter) - (x->meter < y->meter);
}

int tb_poller_window(tb_poller *p, uint64_t t0_us, uint64_t t1_us, tb_poll_sample **out) {
    tb_poll_sample *res = NULL;
    size_t i, n = 0;

    *out = NULL;
    if (t1_us <= t0_us) return 0;
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < p->len; i++)
        if (p->buf[i].s.mono_us >= t0_us && p->buf[i].s.mono_us < t1_us) n++;
    if (n) {
        size_t k = 0;
        res = xmalloc(n * sizeof *res);
        for (i = 0; i < p->len; i++)
            if (p->buf[i].s.mono_us >= t0_us && p->buf[i].s.mono_us < t1_us) res[k++] = p->buf[i];
    }
    pthread_mutex_unlock(&p->mu);
    /* Appended in tick order already; sorting guards against drivers that
     * stamp samples with the meter's own (earlier) time. */
    if (n > 1) qsort(res, n, sizeof *res, cmp_poll_sample);
    *out = res;
    return (int)n;
}

double tb_poller_latest_watts(tb_poller *p) {
    double sum = 0;
    int i;
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < p->n; i++) {
        const tb_sample *s = &p->latest[i];
        if (!p->have_latest[i] || (s->flags & TB_SAMPLE_BAD) || isnan(s->watts)) {
            sum = NAN;
            break;
        }
        sum += s->watts;
    }
    pthread_mutex_unlock(&p->mu);
    return sum;
}

uint64_t tb_poller_max_jitter_us(tb_poller *p) {
    uint64_t v;
    pthread_mutex_lock(&p->mu);
    v = p->max_jitter_us;
    pthread_mutex_unlock(&p->mu);
    return v;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int tb_poller_jitter(tb_poller *p, uint64_t since_us, uint64_t *p50_us, uint64_t *p99_us, uint64_t *max_us) {
    uint64_t *v;
    size_t n = 0;
    pthread_mutex_lock(&p->mu);
    v = xmalloc((p->n_lates + 1) * sizeof *v);
    for (size_t i = 0; i < p->n_lates; i++)
        if (p->lates[i][0] >= since_us) v[n++] = p->lates[i][1];
    pthread_mutex_unlock(&p->mu);
    *p50_us = *p99_us = *max_us = 0;
    if (n > 0) {
        qsort(v, n, sizeof *v, cmp_u64);
        /* nearest rank, as the latency histogram reports */
        *p50_us = v[(size_t)((double)n * 0.50 + 0.999999) - 1];
        *p99_us = v[(size_t)((double)n * 0.99 + 0.999999) - 1];
        *max_us = v[n - 1];
    }
    free(v);
    return (int)n;
}

uint64_t tb_poller_skipped_ticks(tb_poller *p) {
    uint64_t v;
    pthread_mutex_lock(&p->mu);
    v = p->skipped;
    pthread_mutex_unlock(&p->mu);
    return v;
}

void tb_poller_stop(tb_poller *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->buf);
    free(p->lates);
    free(p->have_latest);
    free(p->latest);
    free(p->meters);
    free(p);
}
