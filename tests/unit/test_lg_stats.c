/*
 * test_lg_stats.c: unit tests of the load generator's statistics and their
 * wire encoding (loadgen/lg_stats.c), and of the tile range of a level plan
 * (loadgen/worker.c): two halves of a sample set, encoded, decoded and
 * merged, equal the whole set recorded in one, byte for byte; empty stats
 * and NULL histograms round-trip; every malformed buffer (each field out of
 * range, every truncation, trailing bytes, a repeated cell, a bad histogram)
 * is refused with a message naming the problem; users keep their ramp-up
 * offsets whatever tile range a load generator runs; bad ranges are refused;
 * a level run on a range makes users of its tiles only; the live latency
 * record (loadgen/lg_live.c) records nothing until a phase is asked for,
 * only that phase, and hands over each interval once.
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
#include <time.h>

#include "loadgen/lg_live.h"
#include "loadgen/loadgen.h"

/* The header: magic, version, five u32; a cell: three u32 indices, 2 +
 * TB_OP_NSTATUS u64, then two u32 histogram lengths (and their bytes). */
#define HDR_BYTES   (4 + 1 + 5 * 4)
#define OFF_VERSION 4
#define OFF_TILES   5
#define OFF_NW      9
#define OFF_OPS     13
#define OFF_NSTATUS 17
#define OFF_NCELLS  21
#define CELL_FIXED  (3 * 4 + (2 + TB_OP_NSTATUS) * 8)
#define CELL_NOHIST (CELL_FIXED + 2 * 4)

/* splitmix64 (Sebastiano Vigna, public domain algorithm): deterministic, so
 * failures reproduce. */
static uint64_t rng_state;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Records one op into s as the worker does (worker.c record). */
static void rec(tb_lg_stats *s, int tile, int w, int op, tb_op_status st, uint64_t lat, uint64_t lat_unc) {
    tb_opstat *c = tb_lg_cell(s, tile, w, op);
    if (st == TB_OP_OK) {
        c->count++;
        if (!c->hist) c->hist = tb_hist_new();
        if (!c->hist_unc) c->hist_unc = tb_hist_new();
        tb_hist_record(c->hist, lat);
        tb_hist_record(c->hist_unc, lat_unc);
    } else {
        c->errors++;
        c->err_by_class[st]++;
    }
}

/* Decodes from an exact-size heap copy, so ASan catches a read past len. */
static int decode_copy(const uint8_t *buf, size_t len, tb_lg_stats **out, char *err) {
    uint8_t *copy = malloc(len ? len : 1);
    int rc;
    assert_non_null(copy);
    if (len) memcpy(copy, buf, len);
    err[0] = '\0';
    rc = tb_lg_stats_decode(len ? copy : NULL, len, out, err);
    free(copy);
    return rc;
}

static tb_lg_stats *roundtrip(const tb_lg_stats *s) {
    uint8_t *buf, *again;
    size_t len, len2;
    char err[TB_ERR_LEN];
    tb_lg_stats *d;
    assert_int_equal(tb_lg_stats_encode(s, &buf, &len), 0);
    if (decode_copy(buf, len, &d, err) != 0) fail_msg("decode of a valid buffer: %s", err);
    assert_true(tb_lg_stats_same_shape(s, d));
    /* canonical: it re-encodes to the same bytes */
    assert_int_equal(tb_lg_stats_encode(d, &again, &len2), 0);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, again, len);
    free(buf);
    free(again);
    return d;
}

/* The strictest comparison qos/hist.h offers: a histogram's encoding holds
 * count, clamped, min, max, sum and every bucket, and is canonical. */
static void assert_hist_equal(const tb_hist *a, const tb_hist *b, size_t cell) {
    uint8_t *ea, *eb;
    size_t la, lb;
    if (!a || !b) {
        if (a != b) fail_msg("cell %zu: one histogram NULL, the other not", cell);
        return;
    }
    assert_int_equal(tb_hist_encode(a, &ea, &la), 0);
    assert_int_equal(tb_hist_encode(b, &eb, &lb), 0);
    if (la != lb || memcmp(ea, eb, la) != 0) fail_msg("cell %zu: histograms differ", cell);
    for (double p = 0; p <= 100; p += 0.5)
        assert_int_equal(tb_hist_percentile(a, p), tb_hist_percentile(b, p));
    free(ea);
    free(eb);
}

static void assert_stats_equal(const tb_lg_stats *a, const tb_lg_stats *b) {
    size_t n = (size_t)a->tiles * (size_t)a->n_workloads * TB_MAX_OPS;
    assert_true(tb_lg_stats_same_shape(a, b));
    for (size_t i = 0; i < n; i++) {
        const tb_opstat *x = &a->cells[i], *y = &b->cells[i];
        if (x->count != y->count || x->errors != y->errors)
            fail_msg("cell %zu: count %llu/%llu errors %llu/%llu", i, (unsigned long long)x->count,
                     (unsigned long long)y->count, (unsigned long long)x->errors, (unsigned long long)y->errors);
        for (int k = 0; k < TB_OP_NSTATUS; k++)
            if (x->err_by_class[k] != y->err_by_class[k]) fail_msg("cell %zu: err_by_class[%d] differs", i, k);
        assert_hist_equal(x->hist, y->hist, i);
        assert_hist_equal(x->hist_unc, y->hist_unc, i);
    }
}

/* 6000 ops over 3 tiles x 2 workloads x 5 ops, latencies log-uniform over
 * 1 µs .. 10 s (a few past the 100 s clamp), 8% errors of every class; each
 * goes to part a or b, and to all. Tile 3 workload 1 only gets a's ops and
 * op 4 only b's, so some cells exist in one part only. */
static void build_parts(tb_lg_stats *a, tb_lg_stats *b, tb_lg_stats *all) {
    rng_state = 0x1b5eed;
    for (int i = 0; i < 6000; i++) {
        int tile = 1 + (int)(rng_next() % 3), w = (int)(rng_next() % 2), op = (int)(rng_next() % 5);
        tb_op_status st = rng_next() % 100 < 8 ? (tb_op_status)(1 + rng_next() % (TB_OP_NSTATUS - 1)) : TB_OP_OK;
        uint64_t lat = (uint64_t)exp((double)(rng_next() % 1000000) / 1000000.0 * log(1e7));
        uint64_t unc = lat > 50 ? lat - rng_next() % 50 : lat;
        tb_lg_stats *part = rng_next() % 2 ? a : b;
        if (i % 997 == 0) lat = 150000000; /* clamped at 100 s */
        if (tile == 3 && w == 1) part = a;
        if (op == 4) part = b;
        rec(part, tile, w, op, st, lat, unc);
        rec(all, tile, w, op, st, lat, unc);
    }
}

static void exact_merge(void **state) {
    tb_lg_stats *a = tb_lg_stats_new(3, 2), *b = tb_lg_stats_new(3, 2), *all = tb_lg_stats_new(3, 2);
    tb_lg_stats *da, *db, *m = tb_lg_stats_new(3, 2);
    uint8_t *em, *eall;
    size_t lm, lall;
    uint64_t ops = 0, errs = 0;
    (void)state;
    build_parts(a, b, all);
    /* the parts are not trivial: a shared cell has ops in both */
    assert_true(tb_lg_cell(a, 1, 0, 0)->count > 0 && tb_lg_cell(b, 1, 0, 0)->count > 0);
    da = roundtrip(a);
    db = roundtrip(b);
    assert_stats_equal(a, da);
    tb_lg_stats_merge(m, da);
    tb_lg_stats_merge(m, db);
    assert_stats_equal(m, all);
    for (size_t i = 0; i < (size_t)3 * 2 * TB_MAX_OPS; i++) {
        ops += all->cells[i].count;
        errs += all->cells[i].errors;
    }
    assert_int_equal(ops + errs, 6000);
    assert_true(errs > 300);
    for (int k = 1; k < TB_OP_NSTATUS; k++) { /* every error class occurs */
        uint64_t n = 0;
        for (size_t i = 0; i < (size_t)3 * 2 * TB_MAX_OPS; i++)
            n += all->cells[i].err_by_class[k];
        if (n == 0) fail_msg("no error of class %d", k);
    }
    /* and the whole encodings are equal */
    assert_int_equal(tb_lg_stats_encode(m, &em, &lm), 0);
    assert_int_equal(tb_lg_stats_encode(all, &eall, &lall), 0);
    assert_int_equal(lm, lall);
    assert_memory_equal(em, eall, lm);
    free(em);
    free(eall);
    tb_lg_stats_free(a);
    tb_lg_stats_free(b);
    tb_lg_stats_free(all);
    tb_lg_stats_free(da);
    tb_lg_stats_free(db);
    tb_lg_stats_free(m);
}

static void roundtrip_empty(void **state) {
    int shapes[3][2] = {{1, 1}, {200, TB_MAX_WORKLOADS}, {100000, 1}};
    (void)state;
    for (int i = 0; i < 3; i++) {
        tb_lg_stats *s = tb_lg_stats_new(shapes[i][0], shapes[i][1]), *d;
        uint8_t *buf;
        size_t len;
        assert_int_equal(tb_lg_stats_encode(s, &buf, &len), 0);
        assert_int_equal(len, HDR_BYTES); /* compact: no cell */
        assert_memory_equal(buf, "TBLS\x01", 5);
        free(buf);
        d = roundtrip(s);
        assert_stats_equal(s, d);
        tb_lg_stats_free(s);
        tb_lg_stats_free(d);
    }
}

static void roundtrip_null_hists(void **state) {
    tb_lg_stats *s = tb_lg_stats_new(2, 3), *d;
    uint8_t *buf;
    size_t len;
    (void)state;
    tb_lg_cell(s, 1, 0, 0)->errors = 4; /* errors only, no histograms */
    tb_lg_cell(s, 1, 0, 0)->err_by_class[TB_OP_ERR_TIMEOUT] = 4;
    tb_lg_cell(s, 1, 2, 7)->count = 9;                                      /* a count without histograms */
    tb_lg_cell(s, 2, 1, 15)->hist = tb_hist_new();                          /* an empty corrected histogram */
    tb_lg_cell(s, 2, 2, 3)->err_by_class[TB_OP_ERR_IO] = 1;                 /* a class count alone */
    tb_hist_record((tb_lg_cell(s, 2, 2, 4)->hist_unc = tb_hist_new()), 77); /* only the uncorrected one */
    assert_int_equal(tb_lg_stats_encode(s, &buf, &len), 0);
    assert_int_equal(buf[OFF_NCELLS], 5);
    free(buf);
    d = roundtrip(s);
    assert_stats_equal(s, d);
    assert_null(tb_lg_cell(d, 1, 0, 0)->hist);
    assert_null(tb_lg_cell(d, 1, 2, 7)->hist_unc);
    assert_non_null(tb_lg_cell(d, 2, 1, 15)->hist);
    assert_int_equal(tb_hist_count(tb_lg_cell(d, 2, 1, 15)->hist), 0);
    assert_null(tb_lg_cell(d, 2, 2, 4)->hist);
    assert_int_equal(tb_hist_max(tb_lg_cell(d, 2, 2, 4)->hist_unc), 77);
    tb_lg_stats_free(s);
    tb_lg_stats_free(d);
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Decoding buf must fail with a message holding want. */
static void refuse(const uint8_t *buf, size_t len, const char *want, const char *what) {
    char err[TB_ERR_LEN];
    static tb_lg_stats dummy;
    tb_lg_stats *d = &dummy; /* must come back NULL */
    if (decode_copy(buf, len, &d, err) == 0) fail_msg("%s: accepted", what);
    assert_null(d);
    if (!strstr(err, want)) fail_msg("%s: message '%s' lacks '%s'", what, err, want);
}

/* A field of the header, or of cell 0 or 1 (no histograms: CELL_NOHIST
 * bytes each), set to v must be refused with want. */
static void refuse_set32(const uint8_t *valid, size_t len, size_t off, uint32_t v, const char *want) {
    uint8_t *b = malloc(len);
    char what[64];
    memcpy(b, valid, len);
    put32(b + off, v);
    snprintf(what, sizeof what, "u32 at %zu = %u", off, v);
    refuse(b, len, want, what);
    free(b);
}

static void decode_errors_fields(void **state) {
    tb_lg_stats *s = tb_lg_stats_new(4, 2);
    uint8_t *buf, *b;
    size_t len, c0 = HDR_BYTES, c1 = HDR_BYTES + CELL_NOHIST;
    (void)state;
    tb_lg_cell(s, 2, 1, 3)->errors = 1;
    tb_lg_cell(s, 3, 0, 0)->errors = 2;
    assert_int_equal(tb_lg_stats_encode(s, &buf, &len), 0);
    assert_int_equal(len, HDR_BYTES + 2 * CELL_NOHIST);
    b = malloc(len + 1);
    memcpy(b, buf, len);
    b[0] = 'X';
    refuse(b, len, "magic", "bad magic");
    refuse(NULL, 0, "magic", "no input");
    memcpy(b, buf, len);
    b[OFF_VERSION] = 2;
    refuse(b, len, "version 2", "version 2");
    memcpy(b, buf, len);
    b[len] = 0;
    refuse(b, len + 1, "1 trailing bytes", "trailing byte");
    refuse_set32(buf, len, OFF_TILES, 0, "tiles 0 out of range");
    refuse_set32(buf, len, OFF_TILES, 100001, "tiles 100001 out of range");
    refuse_set32(buf, len, OFF_TILES, UINT32_MAX, "tiles 4294967295 out of range");
    refuse_set32(buf, len, OFF_NW, 0, "workload count 0");
    refuse_set32(buf, len, OFF_NW, TB_MAX_WORKLOADS + 1, "workload count");
    refuse_set32(buf, len, OFF_OPS, TB_MAX_OPS + 1, "TB_MAX_OPS");
    refuse_set32(buf, len, OFF_NSTATUS, TB_OP_NSTATUS - 1, "TB_OP_NSTATUS");
    refuse_set32(buf, len, OFF_NCELLS, 4 * 2 * TB_MAX_OPS + 1, "cell count");
    refuse_set32(buf, len, OFF_NCELLS, 3, "truncated");
    refuse_set32(buf, len, OFF_NCELLS, 1, "trailing");
    refuse_set32(buf, len, c0, 0, "cell tile 0 out of range");
    refuse_set32(buf, len, c1, 5, "cell tile 5 out of range");
    refuse_set32(buf, len, c0 + 4, 2, "cell workload 2 out of range");
    refuse_set32(buf, len, c1 + 8, TB_MAX_OPS, "cell op 16 out of range");
    refuse_set32(buf, len, c1, 2, "out-of-order cell (tile 2, workload 0, op 0)");
    memcpy(b, buf, len); /* cell 1 := cell 0's index */
    memcpy(b + c1, buf + c0, 12);
    refuse(b, len, "duplicate cell (tile 2, workload 1, op 3)", "duplicate cell");
    memcpy(b, buf, len); /* cell 0's errors := 0: nothing left in it */
    memset(b + c0 + 12 + 8, 0, 8);
    refuse(b, len, "empty cell", "empty cell");
    refuse_set32(buf, len, c0 + CELL_FIXED, 1000, "truncated in corrected histogram (1000 bytes)");
    free(b);
    free(buf);
    tb_lg_stats_free(s);
}

static void decode_errors_hist(void **state) {
    tb_lg_stats *s = tb_lg_stats_new(1, 1);
    uint8_t *buf;
    size_t len, blob = HDR_BYTES + CELL_FIXED + 4;
    char want[64];
    (void)state;
    rec(s, 1, 0, 2, TB_OP_OK, 1234, 1000);
    assert_int_equal(tb_lg_stats_encode(s, &buf, &len), 0);
    buf[blob] = 0x7f; /* the histogram's version byte */
    snprintf(want, sizeof want, "corrected histogram at byte %zu: hist decode", blob);
    refuse(buf, len, want, "bad corrected histogram");
    buf[blob] = 0x01;
    buf[len - 1] ^= 0x40; /* the uncorrected histogram's last bucket count */
    refuse(buf, len, "uncorrected histogram", "bad uncorrected histogram");
    free(buf);
    tb_lg_stats_free(s);
}

/* Every proper prefix of a valid buffer with histograms is refused. */
static void decode_errors_truncated(void **state) {
    tb_lg_stats *a = tb_lg_stats_new(3, 2), *b = tb_lg_stats_new(3, 2), *all = tb_lg_stats_new(3, 2);
    uint8_t *buf;
    size_t len;
    (void)state;
    build_parts(a, b, all);
    assert_int_equal(tb_lg_stats_encode(a, &buf, &len), 0);
    assert_true(len > 1000);
    for (size_t n = 0; n < len; n++) {
        char what[64];
        snprintf(what, sizeof what, "prefix of %zu of %zu bytes", n, len);
        refuse(buf, n, n < 4 ? "magic" : "truncated", what);
    }
    free(buf);
    tb_lg_stats_free(a);
    tb_lg_stats_free(b);
    tb_lg_stats_free(all);
}

/* Two workloads of 3 and 2 users per tile, 5 tiles: user g of the 25 starts
 * at g/25 of the ramp-up, whatever tile range the plan runs. */
static void ramp_offsets(void **state) {
    tb_workload_def wl[2];
    tb_tiledef def;
    tb_level_plan pl;
    int g = 0;
    (void)state;
    memset(wl, 0, sizeof wl);
    memset(&def, 0, sizeof def);
    memset(&pl, 0, sizeof pl);
    wl[0].users = 3;
    wl[1].users = 2;
    def.n_workloads = 2;
    def.workloads = wl;
    pl.tiles = 5;
    pl.ramp_up_us = 1000000;
    for (int t = 1; t <= 5; t++)
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < wl[w].users; k++, g++) {
                uint64_t want = 1000000ull * (uint64_t)g / 25;
                pl.tile_lo = pl.tile_hi = 0;
                assert_int_equal(tb_lg_ramp_offset_us(&pl, &def, t, w, k), want);
                pl.tile_lo = t <= 2 ? 1 : 3; /* a load generator running tiles 1..2, another 3..5 */
                pl.tile_hi = t <= 2 ? 2 : 5;
                assert_int_equal(tb_lg_ramp_offset_us(&pl, &def, t, w, k), want);
            }
    assert_int_equal(g, 25);
    assert_int_equal(tb_lg_ramp_offset_us(&pl, &def, 3, 0, 0), 400000); /* g = 10 */
    assert_int_equal(tb_lg_ramp_offset_us(&pl, &def, 3, 1, 1), 560000); /* g = 14 */
    pl.ramp_up_us = 0;
    assert_int_equal(tb_lg_ramp_offset_us(&pl, &def, 5, 1, 1), 0);
}

/* start_level refuses a bad tile range before it starts anything. */
static void bad_tile_ranges(void **state) {
    static const int bad[][2] = {{0, 3}, {2, 0}, {-1, 2}, {0, -1}, {1, 5}, {4, 3}, {-2, -1}, {5, 5}};
    char path[1024], err[TB_ERR_LEN] = "";
    const char *src = getenv("TB_SOURCE_DIR");
    tb_sut_endpoints ep = {0};
    tb_tiledef *d;
    tb_loadgen *lg;
    tb_level_plan pl;
    (void)state;
    snprintf(path, sizeof path, "%s/tiles/examples/redis-seed.ini", src ? src : ".");
    if (!(d = tb_tiledef_load(path, err))) fail_msg("%s", err);
    tb_endpoints_set(&ep.redis_host, "127.0.0.1");
    ep.redis_port = 1;
    if (tb_loadgen_local_open(d, &ep, 1, &lg, err) != 0) fail_msg("%s", err);
    memset(&pl, 0, sizeof pl);
    pl.tiles = 4;
    pl.n_phases = 1;
    pl.start_us = tb_now_us() + 10000000;
    pl.phase_start_us[0] = pl.start_us + 1000000;
    pl.phase_end_us[0] = pl.start_us + 2000000;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pl.tile_lo = bad[i][0];
        pl.tile_hi = bad[i][1];
        err[0] = '\0';
        if (lg->ops->start_level(lg->self, &pl, err) == 0) fail_msg("range %d..%d accepted", pl.tile_lo, pl.tile_hi);
        if (!strstr(err, "bad tile range")) fail_msg("range %d..%d: '%s'", pl.tile_lo, pl.tile_hi, err);
    }
    tb_loadgen_close(lg);
    tb_tiledef_free(d);
    tb_endpoints_free(&ep);
}

/* A level run on tiles 2..3 of 4 makes users of those tiles only: their
 * ops (each a refused connect to a closed port, TB_OP_ERR_CONNECT) land in
 * the cells of tiles 2 and 3, and the stats keep all 4 tiles' shape. */
static void tile_range_runs_only_its_tiles(void **state) {
    static const char tile[] = "[tile]\nname = range\n[stages]\nramp_up = 1s\nwarm_up = 1s\nsteady = 1s\n"
                               "ramp_down = 0\nidle = 1s\n[workload.kv]\nkind = kv\nusers = 3\n"
                               "think_time = 20ms\nthink_dist = fixed\ntimeout = 1s\nunit = ops/s\nreference = 1\n";
    char err[TB_ERR_LEN] = "";
    tb_sut_endpoints ep = {0};
    tb_tiledef *d;
    tb_loadgen *lg;
    tb_level_plan pl;
    tb_lg_stats *all = NULL;
    uint64_t per_tile[5] = {0};
    (void)state;
    if (!(d = tb_tiledef_parse("range.ini", tile, sizeof tile - 1, err))) fail_msg("%s", err);
    tb_endpoints_set(&ep.redis_host, "127.0.0.1");
    ep.redis_port = 1; /* nothing listens: every connect is refused at once */
    if (tb_loadgen_local_open(d, &ep, 2, &lg, err) != 0) fail_msg("%s", err);
    memset(&pl, 0, sizeof pl);
    pl.tiles = 4;
    pl.tile_lo = 2;
    pl.tile_hi = 3;
    pl.n_phases = 1;
    pl.start_us = tb_now_us() + 20000;
    pl.ramp_up_us = 100000;
    pl.phase_start_us[0] = pl.start_us + 100000;
    pl.phase_end_us[0] = pl.start_us + 300000;
    if (lg->ops->start_level(lg->self, &pl, err) != 0) fail_msg("%s", err);
    /* until every user has had an op (a refused connect each), at most 5 s */
    for (int i = 0; i < 250; i++) {
        uint64_t ops, errs;
        nanosleep(&(struct timespec){0, 20000000}, NULL);
        lg->ops->live(lg->self, &ops, &errs);
        if (ops + errs >= 12 && tb_now_us() > pl.start_us + pl.ramp_up_us) break;
    }
    if (lg->ops->stop_level(lg->self, &all, err) != 0) fail_msg("%s", err);
    assert_int_equal(all->tiles, 4);
    for (int t = 1; t <= 4; t++)
        for (int k = 0; k < TB_MAX_OPS; k++)
            per_tile[t] += tb_lg_cell(all, t, 0, k)->count + tb_lg_cell(all, t, 0, k)->errors;
    if (per_tile[1] || per_tile[4] || !per_tile[2] || !per_tile[3])
        fail_msg("ops per tile 1..4: %llu %llu %llu %llu", (unsigned long long)per_tile[1],
                 (unsigned long long)per_tile[2], (unsigned long long)per_tile[3], (unsigned long long)per_tile[4]);
    tb_lg_stats_free(all);
    tb_loadgen_close(lg);
    tb_tiledef_free(d);
    tb_endpoints_free(&ep);
}

static void live_record(void **state) {
    tb_lg_live l, taken;
    tb_lg_stats *out;
    (void)state;
    tb_lg_live_init(&l);
    tb_lg_live_record(&l, 0, 1, 2, 500); /* nobody asked: nothing kept */
    assert_null(l.h[1][2]);
    tb_lg_live_swap(&l, 0, &taken); /* phase 0 from now on */
    out = tb_lg_stats_new(1, 2);
    tb_lg_live_drain(&taken, 0, out);
    assert_int_equal(tb_lg_cell(out, 1, 1, 2)->count, 0);
    tb_lg_stats_free(out);
    tb_lg_live_record(&l, 0, 1, 2, 500);
    tb_lg_live_record(&l, 0, 1, 2, 700);
    tb_lg_live_record(&l, 1, 1, 2, 900); /* another phase: not this record's */
    tb_lg_live_record(&l, 0, 0, 0, 100);
    tb_lg_live_record(&l, 0, TB_MAX_WORKLOADS, 0, 100); /* out of range: ignored */
    tb_lg_live_swap(&l, 0, &taken);
    out = tb_lg_stats_new(1, 2);
    tb_lg_live_drain(&taken, 0, out);
    assert_int_equal(tb_lg_cell(out, 1, 1, 2)->count, 2);
    assert_int_equal(tb_hist_max(tb_lg_cell(out, 1, 1, 2)->hist), 700);
    assert_int_equal(tb_lg_cell(out, 1, 0, 0)->count, 1);
    tb_lg_live_drain(&taken, 0, out); /* drained once: nothing left to add */
    assert_int_equal(tb_lg_cell(out, 1, 1, 2)->count, 2);
    tb_lg_stats_free(out);
    /* the next interval has only what came after */
    tb_lg_live_record(&l, 0, 1, 2, 300);
    tb_lg_live_swap(&l, 1, &taken); /* phase 1 from now on: phase 0's tail is dropped */
    out = tb_lg_stats_new(1, 2);
    tb_lg_live_drain(&taken, 1, out);
    assert_int_equal(tb_lg_cell(out, 1, 1, 2)->count, 0);
    tb_lg_stats_free(out);
    tb_lg_live_record(&l, 1, 1, 2, 300);
    tb_lg_live_swap(&l, 1, &taken);
    out = tb_lg_stats_new(1, 2);
    tb_lg_live_drain(&taken, 1, out);
    assert_int_equal(tb_lg_cell(out, 1, 1, 2)->count, 1);
    tb_lg_stats_free(out);
    tb_lg_live_clear(&l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_merge),
        cmocka_unit_test(roundtrip_empty),
        cmocka_unit_test(roundtrip_null_hists),
        cmocka_unit_test(decode_errors_fields),
        cmocka_unit_test(decode_errors_hist),
        cmocka_unit_test(decode_errors_truncated),
        cmocka_unit_test(ramp_offsets),
        cmocka_unit_test(bad_tile_ranges),
        cmocka_unit_test(tile_range_runs_only_its_tiles),
        cmocka_unit_test(live_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
