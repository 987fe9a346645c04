/*
 * test_hist.c: unit tests of the latency histogram (qos/hist.c). Percentiles
 * are checked against an exactly sorted array of 100k values from several
 * distributions; merge against recording all in one; encode/decode for
 * roundtrip and for rejecting garbage, truncated and tampered blobs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/hist.h"

#define N_VALUES 100000

/* splitmix64 (Sebastiano Vigna, public domain algorithm): a deterministic
 * generator so failures reproduce. */
static uint64_t rng_state;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* uniform in (0, 1) */
static double rng_unit(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }
static double rng_normal(void) { /* Box-Muller */
    return sqrt(-2.0 * log(rng_unit())) * cos(6.283185307179586 * rng_unit());
}

static uint64_t to_us(double v) {
    if (v < 1.0) return 1;
    if (v > 1e8) return 100000000ull;
    return (uint64_t)llround(v);
}

enum { D_UNIFORM, D_EXP, D_LOGNORMAL, D_BIMODAL, D_PARETO, D_NARROW, D_COUNT };
static const char *const dist_names[D_COUNT] = {"uniform 1us..1s",     "exponential mean 5ms", "lognormal median 2ms",
                                                "bimodal 0.8ms/250ms", "pareto alpha 1.2",     "narrow 1.0..1.2ms"};

static void fill(int dist, uint64_t *v, size_t n) {
    size_t i;
    rng_state = 0x5eed0000u + (uint64_t)dist;
    for (i = 0; i < n; i++) {
        switch (dist) {
        case D_UNIFORM: v[i] = 1 + rng_next() % 1000000u; break;
        case D_EXP: v[i] = to_us(-5000.0 * log(rng_unit())); break;
        case D_LOGNORMAL: v[i] = to_us(exp(log(2000.0) + 1.0 * rng_normal())); break;
        case D_BIMODAL:
            v[i] = rng_next() % 10 ? to_us(800.0 + 100.0 * rng_normal()) : to_us(200000.0 + 100000.0 * rng_unit());
            break;
        case D_PARETO: v[i] = to_us(100.0 / pow(rng_unit(), 1.0 / 1.2)); break;
        default: v[i] = 1000 + rng_next() % 201u; break;
        }
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static tb_hist *hist_of(const uint64_t *v, size_t n) {
    tb_hist *h = tb_hist_new();
    size_t i;
    for (i = 0; i < n; i++)
        tb_hist_record(h, v[i]);
    return h;
}

/* Percentiles in basis points, so the exact nearest rank is integer math. */
static const unsigned pct_bp[] = {0, 1, 10, 100, 1000, 2500, 5000, 7500, 9000, 9500, 9900, 9990, 9999, 10000};
#define N_PCT (sizeof pct_bp / sizeof pct_bp[0])

static uint64_t exact_percentile(const uint64_t *sorted, size_t n, unsigned bp) {
    uint64_t rank = ((uint64_t)bp * n + 9999) / 10000; /* ceil */
    if (bp == 0) return sorted[0];
    if (rank < 1) rank = 1;
    return sorted[rank - 1];
}

/* Fraction of sorted values <= limit. */
static double exact_fraction(const uint64_t *sorted, size_t n, uint64_t limit) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] <= limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)lo / (double)n;
}

static void assert_same_hist(const tb_hist *a, const tb_hist *b) {
    uint8_t *ea, *eb;
    size_t la, lb, i;
    assert_int_equal(tb_hist_count(a), tb_hist_count(b));
    assert_int_equal(tb_hist_clamped(a), tb_hist_clamped(b));
    assert_int_equal(tb_hist_min(a), tb_hist_min(b));
    assert_int_equal(tb_hist_max(a), tb_hist_max(b));
    assert_true(tb_hist_mean(a) == tb_hist_mean(b));
    for (i = 0; i < N_PCT; i++)
        assert_int_equal(tb_hist_percentile(a, pct_bp[i] / 100.0), tb_hist_percentile(b, pct_bp[i] / 100.0));
    assert_int_equal(tb_hist_encode(a, &ea, &la), 0);
    assert_int_equal(tb_hist_encode(b, &eb, &lb), 0);
    assert_int_equal(la, lb);
    assert_memory_equal(ea, eb, la);
    free(ea);
    free(eb);
}

static void test_empty(void **state) {
    tb_hist *h = tb_hist_new();
    (void)state;
    assert_int_equal(tb_hist_count(h), 0);
    assert_int_equal(tb_hist_min(h), 0);
    assert_int_equal(tb_hist_max(h), 0);
    assert_true(tb_hist_mean(h) == 0.0);
    assert_int_equal(tb_hist_percentile(h, 0), 0);
    assert_int_equal(tb_hist_percentile(h, 50), 0);
    assert_int_equal(tb_hist_percentile(h, 100), 0);
    assert_true(tb_hist_fraction_below(h, 1000) == 0.0);
    assert_true(tb_hist_memory_bytes(h) < 1024);
    tb_hist_free(h);
    tb_hist_free(NULL);
}

/* Below 2048 µs every value is its own bucket, so percentiles are exact. */
static void test_exact_below_2048(void **state) {
    tb_hist *h = tb_hist_new();
    uint64_t v;
    (void)state;
    for (v = 2047; v >= 1; v--)
        tb_hist_record(h, v);
    assert_int_equal(tb_hist_count(h), 2047);
    assert_int_equal(tb_hist_min(h), 1);
    assert_int_equal(tb_hist_max(h), 2047);
    assert_true(tb_hist_mean(h) == 1024.0);
    for (v = 1; v <= 2047; v++) /* rank v of 2047 is the value v */
        assert_int_equal(tb_hist_percentile(h, (double)v * 100.0 / 2047.0), v);
    assert_true(tb_hist_fraction_below(h, 1000) == 1000.0 / 2047.0);
    assert_true(tb_hist_fraction_below(h, 0) == 0.0);
    assert_true(tb_hist_fraction_below(h, 5000) == 1.0);
    /* p out of range and NaN clamp to the ends */
    assert_int_equal(tb_hist_percentile(h, -5), 1);
    assert_int_equal(tb_hist_percentile(h, NAN), 1);
    assert_int_equal(tb_hist_percentile(h, 250), 2047);
    tb_hist_free(h);
}

static void test_zero_value(void **state) {
    tb_hist *h = tb_hist_new();
    (void)state;
    tb_hist_record(h, 0);
    tb_hist_record(h, 0);
    tb_hist_record(h, 3);
    assert_int_equal(tb_hist_count(h), 3);
    assert_int_equal(tb_hist_min(h), 0);
    assert_int_equal(tb_hist_max(h), 3);
    assert_true(tb_hist_mean(h) == 1.0);
    /* 0 lands in the 1 µs bucket, whose edge 1 lies inside [min, max] */
    assert_int_equal(tb_hist_percentile(h, 50), 1);
    assert_int_equal(tb_hist_percentile(h, 0), 0);
    assert_int_equal(tb_hist_percentile(h, 100), 3);
    tb_hist_free(h);
}

/* Around every power of two the reported edge is >= v and within 1/1024. */
static void test_bucket_width(void **state) {
    unsigned k;
    int d;
    (void)state;
    for (k = 0; k < 27; k++) {
        for (d = -1; d <= 1; d++) {
            uint64_t v = ((uint64_t)1 << k) + (uint64_t)(int64_t)d, got;
            tb_hist *h;
            if (v == 0 || v > TB_HIST_MAX_US) continue;
            h = tb_hist_new();
            tb_hist_record(h, v);
            tb_hist_record(h, 200000000ull); /* max beyond, so no clamp to max */
            got = tb_hist_percentile(h, 50);
            assert_true(got >= v);
            assert_true((got - v) * 1024 < v || got == v);
            tb_hist_free(h);
        }
    }
}

static void check_distribution(int dist) {
    uint64_t *v = malloc(N_VALUES * sizeof *v);
    tb_hist *h;
    double sum = 0.0;
    size_t i;
    assert_non_null(v);
    fill(dist, v, N_VALUES);
    h = hist_of(v, N_VALUES);
    qsort(v, N_VALUES, sizeof *v, cmp_u64);
    for (i = 0; i < N_VALUES; i++)
        sum += (double)v[i];

    assert_int_equal(tb_hist_count(h), N_VALUES);
    assert_int_equal(tb_hist_min(h), v[0]);
    assert_int_equal(tb_hist_max(h), v[N_VALUES - 1]);
    assert_true(fabs(tb_hist_mean(h) - sum / N_VALUES) <= 1e-9 * sum / N_VALUES);
    for (i = 0; i < N_PCT; i++) {
        uint64_t want = exact_percentile(v, N_VALUES, pct_bp[i]);
        uint64_t got = tb_hist_percentile(h, pct_bp[i] / 100.0);
        if (got < want || (got - want) * 1000 > want) {
            print_error("%s p%g: hist %llu, exact %llu\n", dist_names[dist], pct_bp[i] / 100.0, (unsigned long long)got,
                        (unsigned long long)want);
            fail();
        }
        if (want < 2048) assert_int_equal(got, want);
    }
    /* fraction below at the exact percentiles and a few round limits */
    for (i = 0; i < N_PCT + 4; i++) {
        static const uint64_t round_limits[] = {500, 2000, 10000, 1000000};
        uint64_t lim = i < N_PCT ? exact_percentile(v, N_VALUES, pct_bp[i]) : round_limits[i - N_PCT];
        double f = tb_hist_fraction_below(h, lim);
        double lo = exact_fraction(v, N_VALUES, lim);
        double hi = exact_fraction(v, N_VALUES, lim + lim / 1000);
        assert_true(f >= lo && f <= hi);
        if (lim < 2048) assert_true(f == lo);
    }
    printf("# %-22s memory %6zu B, blob ", dist_names[dist], tb_hist_memory_bytes(h));
    {
        uint8_t *blob;
        size_t len;
        assert_int_equal(tb_hist_encode(h, &blob, &len), 0);
        printf("%zu B\n", len);
        free(blob);
    }
    tb_hist_free(h);
    free(v);
}

static void test_percentiles_vs_sorted(void **state) {
    int d;
    (void)state;
    for (d = 0; d < D_COUNT; d++)
        check_distribution(d);
}

static void roundtrip(const tb_hist *h);

static void test_memory(void **state) {
    uint64_t *v = malloc(N_VALUES * sizeof *v);
    tb_hist *h, *empty = tb_hist_new();
    size_t empty_bytes = tb_hist_memory_bytes(empty);
    (void)state;
    assert_non_null(v);
    assert_true(empty_bytes < 128);
    fill(D_NARROW, v, N_VALUES);
    h = hist_of(v, N_VALUES);
    /* 1000..1200 µs, 100,000 values recorded one by one: busy, so dense
     * (560 B of pointers plus chunks 3 and 4) */
    assert_int_equal(tb_hist_memory_bytes(h), empty_bytes + 70 * sizeof(void *) + 2 * 2048);
    tb_hist_merge(empty, h); /* a merge of a dense one is dense */
    assert_int_equal(tb_hist_memory_bytes(empty), empty_bytes + 70 * sizeof(void *) + 2 * 2048);
    assert_same_hist(empty, h);
    tb_hist_free(empty);
    free(v);
    tb_hist_reset(h); /* keeps its storage, forgets values */
    assert_int_equal(tb_hist_count(h), 0);
    assert_int_equal(tb_hist_min(h), 0);
    assert_int_equal(tb_hist_max(h), 0);
    assert_int_equal(tb_hist_percentile(h, 50), 0);
    tb_hist_record(h, 7);
    assert_int_equal(tb_hist_percentile(h, 50), 7);
    assert_int_equal(tb_hist_min(h), 7);
    tb_hist_free(h);
}

/* A sparse histogram turns dense when its array, doubled, would take at
 * least the dense layout's bytes: 512 buckets 1..512 (4 KiB) stay sparse
 * (dense: 560 B of pointers plus chunks 0, 1, 2 = 6.6 KiB), a 513th would
 * need 8 KiB and turns it dense. Nothing is lost across the switch or at
 * the chunk boundaries (buckets 255 | 256, 511 | 512). */
static void test_sparse_to_dense(void **state) {
    tb_hist *h = tb_hist_new(), *ref = tb_hist_new(), *m = tb_hist_new();
    size_t empty_bytes = tb_hist_memory_bytes(h);
    size_t dense_bytes = empty_bytes + 70 * sizeof(void *) + 3 * 2048;
    uint64_t x;
    (void)state;
    for (x = 512; x >= 1; x--)
        tb_hist_record(h, x); /* descending: inserts at the front */
    tb_hist_record(h, 512);   /* an existing bucket: no new entry */
    assert_int_equal(tb_hist_memory_bytes(h), empty_bytes + 512 * 8);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 255 / 513), 255);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 256 / 513), 256);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 511 / 513), 511);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 512 / 513), 512);
    tb_hist_record(h, 700); /* the 513th bucket, in chunk 2 */
    assert_int_equal(tb_hist_memory_bytes(h), dense_bytes);
    assert_int_equal(tb_hist_count(h), 514);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 256 / 514), 256);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 511 / 514), 511);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 512 / 514), 512);
    assert_int_equal(tb_hist_percentile(h, 100.0 * 513 / 514), 512);
    assert_int_equal(tb_hist_percentile(h, 100), 700);
    assert_true(tb_hist_fraction_below(h, 255) == 255.0 / 514.0);
    assert_true(tb_hist_fraction_below(h, 511) == 511.0 / 514.0);
    assert_true(tb_hist_fraction_below(h, 512) == 513.0 / 514.0);
    /* the same values in another order, and a merge of a sparse and a dense one */
    for (x = 1; x <= 512; x++)
        tb_hist_record(ref, x);
    tb_hist_record(ref, 700);
    tb_hist_record(ref, 512);
    assert_same_hist(h, ref);
    tb_hist_record(m, 512);
    tb_hist_merge(m, h);
    tb_hist_merge(h, m);
    tb_hist_merge(ref, m);
    assert_same_hist(h, ref);
    roundtrip(h);
    tb_hist_reset(h); /* stays dense, chunks kept and zeroed */
    assert_int_equal(tb_hist_memory_bytes(h), dense_bytes);
    assert_int_equal(tb_hist_fraction_below(h, 5), 0.0);
    tb_hist_free(h);
    tb_hist_free(ref);
    tb_hist_free(m);
}

/* A sparse histogram that holds BUSY = 16,384 values turns dense at the next
 * one recorded (a busy op's histogram: an indexed add per value instead of a
 * search), and holds the same values as a sparse one made by merging halves
 * that each stayed sparse. */
static void test_busy_turns_dense(void **state) {
    enum { BUSY = 16384 };
    tb_hist *h = tb_hist_new(), *a = tb_hist_new(), *b = tb_hist_new(), *ref = tb_hist_new();
    size_t empty_bytes = tb_hist_memory_bytes(h);
    const uint64_t vals[3] = {100, 200, 300}; /* buckets 100 and 200 in chunk 0, 300 in chunk 1 */
    const uint64_t n100 = (BUSY + 2) / 3;     /* values 0, 3, 6, ... of the loop are 100 µs */
    uint64_t i;
    (void)state;
    for (i = 0; i < BUSY; i++) {
        tb_hist_record(h, vals[i % 3]);
        tb_hist_record(i < BUSY / 2 ? a : b, vals[i % 3]);
    }
    assert_int_equal(tb_hist_memory_bytes(h), empty_bytes + 8 * 8); /* still sparse: 3 of 8 entries */
    tb_hist_record(h, 300);
    tb_hist_record(b, 300);
    assert_int_equal(tb_hist_memory_bytes(h), empty_bytes + 70 * sizeof(void *) + 2 * 2048);
    assert_int_equal(tb_hist_memory_bytes(a), empty_bytes + 8 * 8);
    assert_int_equal(tb_hist_memory_bytes(b), empty_bytes + 8 * 8);
    tb_hist_merge(ref, a);
    tb_hist_merge(ref, b);
    assert_int_equal(tb_hist_memory_bytes(ref), empty_bytes + 8 * 8); /* a merge keeps it sparse */
    assert_int_equal(tb_hist_count(h), BUSY + 1);
    assert_int_equal(tb_hist_percentile(h, 100.0 * (double)n100 / (BUSY + 1)), 100);
    assert_int_equal(tb_hist_percentile(h, 100.0 * (double)(n100 + 1) / (BUSY + 1)), 200);
    assert_int_equal(tb_hist_percentile(h, 100), 300);
    assert_same_hist(h, ref);
    roundtrip(h);
    tb_hist_free(h);
    tb_hist_free(a);
    tb_hist_free(b);
    tb_hist_free(ref);
}

static void test_merge_equals_single(void **state) {
    int d;
    (void)state;
    for (d = 0; d < D_COUNT; d++) {
        uint64_t *v = malloc(N_VALUES * sizeof *v);
        tb_hist *all, *part[4], *sum = tb_hist_new();
        size_t i;
        assert_non_null(v);
        fill(d, v, N_VALUES);
        all = hist_of(v, N_VALUES);
        for (i = 0; i < 4; i++)
            part[i] = tb_hist_new();
        /* uneven split: worker 0 gets half the values */
        for (i = 0; i < N_VALUES; i++)
            tb_hist_record(part[(i & 1) ? 0 : 1 + i % 3], v[i]);
        for (i = 0; i < 4; i++)
            tb_hist_merge(sum, part[i]);
        tb_hist_merge(sum, NULL);
        assert_same_hist(sum, all);
        for (i = 0; i < 4; i++)
            tb_hist_free(part[i]);
        tb_hist_free(sum);
        tb_hist_free(all);
        free(v);
    }
}

static void test_merge_empty(void **state) {
    tb_hist *a = tb_hist_new(), *e = tb_hist_new(), *c = tb_hist_new();
    (void)state;
    tb_hist_record(a, 5000);
    tb_hist_record(a, 12);
    tb_hist_merge(a, e); /* empty src changes nothing */
    assert_int_equal(tb_hist_count(a), 2);
    assert_int_equal(tb_hist_min(a), 12);
    tb_hist_merge(c, a); /* into empty */
    assert_same_hist(c, a);
    tb_hist_free(a);
    tb_hist_free(e);
    tb_hist_free(c);
}

static void test_clamp_above_100s(void **state) {
    tb_hist *h = tb_hist_new();
    uint64_t p;
    (void)state;
    tb_hist_record(h, 1000);
    tb_hist_record(h, 1000);
    tb_hist_record(h, 1000);
    tb_hist_record(h, TB_HIST_MAX_US);     /* exactly 100 s: not clamped */
    tb_hist_record(h, TB_HIST_MAX_US + 1); /* clamped */
    tb_hist_record(h, 200000000ull);       /* 200 s: clamped */
    assert_int_equal(tb_hist_count(h), 6);
    assert_int_equal(tb_hist_clamped(h), 2);
    assert_int_equal(tb_hist_min(h), 1000);
    assert_int_equal(tb_hist_max(h), 200000000ull);                       /* exact, unclamped */
    assert_true(tb_hist_mean(h) == (3000.0 + 1e8 + 1e8 + 1 + 2e8) / 6.0); /* exact sum */
    assert_int_equal(tb_hist_percentile(h, 50), 1000);
    p = tb_hist_percentile(h, 90); /* rank 6 of 6 lies in the 100 s bucket */
    assert_true(p >= TB_HIST_MAX_US && p - TB_HIST_MAX_US <= TB_HIST_MAX_US / 1000);
    assert_int_equal(tb_hist_percentile(h, 100), 200000000ull);
    assert_true(tb_hist_fraction_below(h, 1000) == 0.5);
    assert_true(tb_hist_fraction_below(h, 300000000ull) == 1.0);
    /* UINT64_MAX does not wrap the sum */
    tb_hist_record(h, UINT64_MAX);
    assert_int_equal(tb_hist_max(h), UINT64_MAX);
    assert_true(tb_hist_mean(h) == (double)UINT64_MAX / 7.0);
    tb_hist_free(h);
}

static void roundtrip(const tb_hist *h) {
    uint8_t *blob, *blob2;
    size_t len, len2;
    tb_hist *back = NULL;
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_hist_encode(h, &blob, &len), 0);
    assert_int_equal(tb_hist_decode(blob, len, &back, err), 0);
    assert_non_null(back);
    assert_same_hist(back, h);
    assert_int_equal(tb_hist_encode(back, &blob2, &len2), 0);
    assert_int_equal(len, len2);
    assert_memory_equal(blob, blob2, len);
    free(blob);
    free(blob2);
    tb_hist_free(back);
}

static void test_roundtrip(void **state) {
    int d;
    tb_hist *h = tb_hist_new();
    (void)state;
    roundtrip(h); /* empty */
    tb_hist_record(h, 0);
    roundtrip(h);
    tb_hist_record(h, UINT64_MAX); /* clamped, saturating sum */
    roundtrip(h);
    tb_hist_free(h);
    for (d = 0; d < D_COUNT; d++) {
        uint64_t *v = malloc(N_VALUES * sizeof *v);
        assert_non_null(v);
        fill(d, v, N_VALUES);
        h = hist_of(v, N_VALUES);
        roundtrip(h);
        tb_hist_free(h);
        free(v);
    }
}

/* A narrow distribution encodes to a few hundred bytes: 201 buckets. */
/* At most 2048 sparse buckets: spread over all eight chunks below 2048 µs
 * (so the dense layout stays the larger one), 2048 buckets stay sparse and
 * the 2049th turns the histogram dense; a merge whose buckets add up past
 * 2048 makes its target dense. Values agree with one-by-one recording. */
static void test_sparse_limit(void **state) {
    tb_hist *h = tb_hist_new(), *lo = tb_hist_new(), *hi = tb_hist_new(), *m = tb_hist_new();
    size_t empty_bytes = tb_hist_memory_bytes(h);
    unsigned j, c;
    (void)state;
    for (j = 0; j < 256; j++)
        for (c = 0; c < 8; c++)
            if (c * 256 + j > 0) tb_hist_record(h, c * 256 + j);
    tb_hist_record(h, 2048); /* bucket 2048: the 2048th */
    assert_int_equal(tb_hist_count(h), 2048);
    assert_int_equal(tb_hist_memory_bytes(h), empty_bytes + 2048 * 8);
    tb_hist_record(h, 2050); /* bucket 2049 */
    assert_int_equal(tb_hist_memory_bytes(h), empty_bytes + 70 * sizeof(void *) + 9 * 2048);
    assert_int_equal(tb_hist_percentile(h, 50), 1025);                  /* rank 1025 of 2049 */
    assert_int_equal(tb_hist_percentile(h, 100.0 * 2048 / 2049), 2049); /* bucket 2048..2049 */
    assert_int_equal(tb_hist_percentile(h, 100), 2050);
    /* the same order split in two sparse parts: 1103 + 946 buckets */
    for (j = 0; j < 256; j++)
        for (c = 0; c < 8; c++)
            if (c * 256 + j > 0) tb_hist_record(j < 138 ? lo : hi, c * 256 + j);
    tb_hist_record(hi, 2048);
    tb_hist_record(hi, 2050);
    assert_int_equal(tb_hist_count(lo), 1103);
    assert_int_equal(tb_hist_memory_bytes(lo), empty_bytes + 2048 * 8);
    assert_int_equal(tb_hist_memory_bytes(hi), empty_bytes + 1024 * 8);
    tb_hist_merge(m, lo);
    tb_hist_merge(m, hi);
    assert_int_equal(tb_hist_memory_bytes(m), empty_bytes + 70 * sizeof(void *) + 9 * 2048);
    assert_same_hist(m, h);
    roundtrip(m);
    tb_hist_free(h);
    tb_hist_free(lo);
    tb_hist_free(hi);
    tb_hist_free(m);
}

/* LEB128 blob of version 1 from its fields (count, clamped, min, max, sum,
 * n, then n (gap, count) pairs). */
static size_t blob_of(uint8_t *buf, const uint64_t *f, size_t nf) {
    size_t pos = 0, i;
    buf[pos++] = 1;
    for (i = 0; i < nf; i++) {
        uint64_t v = f[i];
        while (v >= 0x80u) {
            buf[pos++] = (uint8_t)(v | 0x80u);
            v >>= 7;
        }
        buf[pos++] = (uint8_t)v;
    }
    return pos;
}

/* A bucket's count beyond 32 bits (from a decoded blob, a record or a
 * merge) is kept exactly. */
static void test_count_beyond_32_bits(void **state) {
    const uint64_t big = 0xffffffffull; /* the largest count a sparse entry holds */
    uint64_t f1[] = {big, 0, 5, 5, 5 * big, 1, 5, big};
    uint64_t f2[] = {big + 2, 0, 5, 6, 5 * (big + 1) + 6, 2, 5, big + 1, 0, 1};
    uint8_t b1[64], b2[64], *enc;
    size_t l1 = blob_of(b1, f1, 8), l2 = blob_of(b2, f2, 10), len;
    tb_hist *a = NULL, *b = NULL, *c = tb_hist_new();
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_hist_decode(b1, l1, &a, err), 0);
    assert_int_equal(tb_hist_decode(b1, l1, &b, err), 0);
    roundtrip(a);
    tb_hist_record(a, 5); /* bucket 5 goes past 2^32 - 1 */
    tb_hist_record(a, 6);
    assert_int_equal(tb_hist_count(a), big + 2);
    assert_int_equal(tb_hist_percentile(a, 99.9999999), 5);
    assert_int_equal(tb_hist_percentile(a, 100), 6);
    assert_int_equal(tb_hist_encode(a, &enc, &len), 0);
    assert_int_equal(len, l2);
    assert_memory_equal(enc, b2, l2);
    free(enc);
    /* merging the same count past 32 bits */
    tb_hist_record(c, 5);
    tb_hist_record(c, 6);
    tb_hist_merge(c, b);
    assert_same_hist(c, a);
    tb_hist_free(b);
    /* and decoding a count past 32 bits */
    assert_int_equal(tb_hist_decode(b2, l2, &b, err), 0);
    assert_same_hist(b, a);
    roundtrip(b);
    tb_hist_free(a);
    tb_hist_free(b);
    tb_hist_free(c);
}

static void test_blob_is_compact(void **state) {
    uint64_t *v = malloc(N_VALUES * sizeof *v);
    uint8_t *blob;
    size_t len;
    tb_hist *h;
    (void)state;
    assert_non_null(v);
    fill(D_NARROW, v, N_VALUES);
    h = hist_of(v, N_VALUES);
    assert_int_equal(tb_hist_encode(h, &blob, &len), 0);
    assert_true(len < 1 + 5 * 10 + 201 * 3);
    assert_int_equal(blob[0], 1); /* version byte */
    free(blob);
    tb_hist_free(h);
    free(v);
}

static size_t put_var(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Builds "version, count, clamped, min, max, sum, n, pairs..." from varints. */
static size_t build_blob(uint8_t *buf, uint8_t version, const uint64_t *f, size_t nf) {
    size_t pos = 0, i;
    buf[pos++] = version;
    for (i = 0; i < nf; i++)
        pos += put_var(buf + pos, f[i]);
    return pos;
}

static void expect_reject(const uint8_t *buf, size_t len, const char *needle) {
    tb_hist *h = (tb_hist *)buf; /* must be overwritten with NULL */
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_hist_decode(buf, len, &h, err), -1);
    assert_null(h);
    assert_true(strncmp(err, "hist decode: ", 13) == 0);
    if (needle && !strstr(err, needle)) {
        print_error("err '%s' lacks '%s'\n", err, needle);
        fail();
    }
}

static void test_decode_rejects_crafted(void **state) {
    uint8_t buf[128];
    size_t len;
    (void)state;
    expect_reject(NULL, 0, "empty");
    expect_reject(buf, 0, "empty");
    { /* a valid blob first, to show build_blob works: 2 values of 5 µs */
        const uint64_t ok[] = {2, 0, 5, 5, 10, 1, 5, 2};
        tb_hist *h = NULL;
        len = build_blob(buf, 1, ok, 8);
        assert_int_equal(tb_hist_decode(buf, len, &h, NULL), 0);
        assert_int_equal(tb_hist_percentile(h, 50), 5);
        tb_hist_free(h);
        len = build_blob(buf, 2, ok, 8);
        expect_reject(buf, len, "version 2");
        len = build_blob(buf, 1, ok, 8);
        buf[len++] = 0;
        expect_reject(buf, len, "trailing");
    }
    {
        const uint64_t f[] = {2, 0, 5, 5, 10, 1, 5, 3}; /* bucket holds 3, header 2 */
        expect_reject(buf, build_blob(buf, 1, f, 8), "bucket");
    }
    {
        const uint64_t f[] = {2, 0, 5, 5, 10, 2, 5, 1, 0, 1}; /* min/max say 5, bucket 6 used */
        expect_reject(buf, build_blob(buf, 1, f, 10), "do not match");
    }
    {
        const uint64_t f[] = {1, 0, 5, 5, 5, 1, 17910, 1}; /* index beyond range */
        expect_reject(buf, build_blob(buf, 1, f, 8), "range");
    }
    {
        const uint64_t f[] = {1, 0, 5, 5, 5, 1, UINT64_MAX, 1}; /* gap overflow */
        expect_reject(buf, build_blob(buf, 1, f, 8), "range");
    }
    {
        const uint64_t f[] = {1, 0, 5, 5, 5, 1, 5, 0}; /* zero count bucket */
        expect_reject(buf, build_blob(buf, 1, f, 8), "bucket");
    }
    {
        const uint64_t f[] = {1, 0, 9, 5, 9, 1, 5, 1}; /* min > max */
        expect_reject(buf, build_blob(buf, 1, f, 8), "inconsistent");
    }
    {
        const uint64_t f[] = {0, 0, 0, 0, 0, 1, 5, 1}; /* empty with a bucket */
        expect_reject(buf, build_blob(buf, 1, f, 8), "empty histogram");
    }
    {
        const uint64_t f[] = {1, 0, 5, 5, 5, 1, 5, 1};
        len = build_blob(buf, 1, f, 1);
        buf[len - 1] |= 0x80; /* count becomes 2 bytes: "1" overlong */
        buf[len++] = 0x00;
        expect_reject(buf, len, "overlong");
    }
    { /* 11-byte varint */
        buf[0] = 1;
        memset(buf + 1, 0xff, 10);
        buf[11] = 0x01;
        expect_reject(buf, 12, "overflows");
        memset(buf + 1, 0xff, 9);
        buf[10] = 0x02; /* 10th byte with more than bit 63 */
        expect_reject(buf, 11, "overflows");
    }
}

static void test_decode_rejects_truncated(void **state) {
    uint64_t *v = malloc(N_VALUES * sizeof *v);
    tb_hist *h, *e = tb_hist_new();
    uint8_t *blob, *copy;
    size_t len, cut;
    (void)state;
    assert_non_null(v);
    fill(D_LOGNORMAL, v, N_VALUES);
    h = hist_of(v, N_VALUES);
    assert_int_equal(tb_hist_encode(h, &blob, &len), 0);
    for (cut = 0; cut < len; cut++) {
        /* an exact-size copy so ASan catches any read past the end */
        copy = malloc(cut ? cut : 1);
        memcpy(copy, blob, cut);
        expect_reject(copy, cut, cut ? NULL : "empty");
        free(copy);
    }
    free(blob);
    assert_int_equal(tb_hist_encode(e, &blob, &len), 0);
    for (cut = 1; cut < len; cut++)
        expect_reject(blob, cut, "truncated");
    free(blob);
    tb_hist_free(h);
    tb_hist_free(e);
    free(v);
}

/* Whatever decodes must re-encode to the same bytes; nothing may read out of
 * bounds (run under ASan). */
static void check_garbage(const uint8_t *buf, size_t len) {
    tb_hist *h = NULL;
    char err[TB_ERR_LEN] = "";
    uint8_t *copy = malloc(len ? len : 1), *re;
    size_t rlen;
    memcpy(copy, buf, len);
    if (tb_hist_decode(copy, len, &h, err) == 0) {
        assert_int_equal(tb_hist_encode(h, &re, &rlen), 0);
        assert_int_equal(rlen, len);
        assert_memory_equal(re, copy, len);
        free(re);
        tb_hist_free(h);
    } else {
        assert_null(h);
        assert_true(err[0] != '\0');
    }
    free(copy);
}

static void test_decode_garbage(void **state) {
    uint8_t buf[96], *blob;
    size_t len, i;
    int round, bit, accepted = 0;
    tb_hist *h;
    (void)state;
    rng_state = 42;
    for (round = 0; round < 50000; round++) {
        len = 1 + rng_next() % sizeof buf;
        for (i = 0; i < len; i++)
            buf[i] = (uint8_t)rng_next();
        if (round % 2) buf[0] = 1; /* get past the version byte */
        check_garbage(buf, len);
    }
    /* every single-bit flip of a real blob */
    h = tb_hist_new();
    for (i = 0; i < 300; i++)
        tb_hist_record(h, 100 + (rng_next() % 5000));
    tb_hist_record(h, 150000000ull);
    assert_int_equal(tb_hist_encode(h, &blob, &len), 0);
    for (i = 0; i < len; i++) {
        for (bit = 0; bit < 8; bit++) {
            tb_hist *back = NULL;
            blob[i] ^= (uint8_t)(1u << bit);
            if (tb_hist_decode(blob, len, &back, NULL) == 0) accepted++;
            tb_hist_free(back);
            check_garbage(blob, len);
            blob[i] ^= (uint8_t)(1u << bit);
        }
    }
    /* most flips are caught by the consistency checks */
    assert_true(accepted < (int)(len * 8) / 4);
    free(blob);
    tb_hist_free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_exact_below_2048),
        cmocka_unit_test(test_zero_value),
        cmocka_unit_test(test_bucket_width),
        cmocka_unit_test(test_percentiles_vs_sorted),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_sparse_to_dense),
        cmocka_unit_test(test_count_beyond_32_bits),
        cmocka_unit_test(test_sparse_limit),
        cmocka_unit_test(test_busy_turns_dense),
        cmocka_unit_test(test_merge_equals_single),
        cmocka_unit_test(test_merge_empty),
        cmocka_unit_test(test_clamp_above_100s),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_blob_is_compact),
        cmocka_unit_test(test_decode_rejects_crafted),
        cmocka_unit_test(test_decode_rejects_truncated),
        cmocka_unit_test(test_decode_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
