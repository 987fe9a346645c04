/*
 * test_markov.c: unit tests of the next-op Markov matrix (loadgen/markov.c)
 * and of the web workload's configuration that uses it (loadgen/web.c):
 * the shipped standard tile's Olio matrix has Olio's long-run mix (Home 26.2,
 * Login 10.2, TagSearch 33.5, EventDetail 24.7, PersonDetail 2.6, AddPerson
 * 0.8, AddEvent 2.0, rounded to one decimal as docs/tile-file.md gives them), which web's
 * mix_target_pct reports; the per-op minimum cycles come through; bad rows
 * fail with file:line and key.
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
#include <unistd.h>

#include "loadgen/markov.h"
#include "loadgen/workload.h"
#include "tiles/tiledef.h"

static const char *const olio_ops[] = {"HomePage",     "Login",     "TagSearch", "EventDetail",
                                       "PersonDetail", "AddPerson", "AddEvent"};

static const tb_workload_def *find_wl(const tb_tiledef *d, const char *name) {
    for (int i = 0; i < d->n_workloads; i++)
        if (strcmp(d->workloads[i].name, name) == 0) return &d->workloads[i];
    return NULL;
}

static tb_sut_endpoints web_ep(void) {
    tb_sut_endpoints ep = {0};
    tb_endpoints_set(&ep.web_url, "http://127.0.0.1:1");
    return ep; /* the caller frees it with tb_endpoints_free */
}

static void standard_tile_olio_mix(void **state) {
    char path[1024], err[TB_ERR_LEN] = "";
    const char *src = getenv("TB_SOURCE_DIR");
    tb_tiledef *d;
    const tb_workload_def *w;
    const tb_workload_vt *vt = tb_workload_find("web");
    tb_sut_endpoints ep = web_ep();
    void *cfg = NULL;
    /* exact stationary shares of Olio's matrix, and rounded to one decimal (docs/tile-file.md) */
    static const double exact[7] = {26.152, 10.223, 33.445, 24.681, 2.611, 0.843, 2.045};
    static const double rounded[7] = {26.2, 10.2, 33.5, 24.7, 2.6, 0.8, 2.0};
    double sum = 0;
    (void)state;
    assert_non_null(vt);
    snprintf(path, sizeof path, "%s/tiles/standard.ini", src ? src : ".");
    if (!(d = tb_tiledef_load(path, err))) fail_msg("%s", err);
    w = find_wl(d, "web");
    assert_non_null(w);
    assert_string_equal(w->kind, "web");
    if (vt->configure(w, &ep, &cfg, err) != 0) fail_msg("%s", err);
    for (int k = 0; k < 7; k++) {
        double t = vt->mix_target_pct(cfg, k);
        assert_string_equal(vt->op_names[k], olio_ops[k]);
        if (fabs(t - exact[k]) > 0.001) fail_msg("%s: %.4f, want %.3f", olio_ops[k], t, exact[k]);
        /* 33.445 is "33.5" in the note: rounded so the seven add up to 100 */
        if (fabs(t - rounded[k]) > 0.06) fail_msg("%s: %.4f, note says %.1f", olio_ops[k], t, rounded[k]);
        sum += t;
    }
    assert_true(fabs(sum - 100) < 1e-9);
    assert_string_equal(vt->op_names[7], "Request");
    assert_true(vt->mix_target_pct(cfg, 7) < 0);         /* the sub-op is not in the mix */
    assert_int_equal(vt->metric_mask, 0x7f);             /* nor in the metric */
    assert_int_equal(vt->min_cycle_us(cfg, 5), 2000000); /* AddPerson */
    assert_int_equal(vt->min_cycle_us(cfg, 6), 3000000); /* AddEvent */
    assert_int_equal(vt->min_cycle_us(cfg, 0), 0);       /* HomePage: none */
    vt->cfg_free(cfg);
    tb_endpoints_free(&ep);
    tb_tiledef_free(d);
}

/* A two-state chain by hand: stay 90 / leave 10 and stay 50 / leave 50:
 * pi = (5/6, 1/6). */
static void two_state(void **state) {
    tb_markov m;
    (void)state;
    memset(&m, 0, sizeof m);
    m.n = 2;
    m.next[0][0] = 90, m.next[0][1] = 10;
    m.next[1][0] = 50, m.next[1][1] = 50;
    assert_int_equal(tb_markov_stationary(&m), 0);
    assert_true(fabs(m.target_pct[0] - 500.0 / 6) < 1e-9);
    assert_true(fabs(m.target_pct[1] - 100.0 / 6) < 1e-9);
    /* two closed classes: no single long-run mix */
    m.next[0][0] = 100, m.next[0][1] = 0;
    m.next[1][0] = 0, m.next[1][1] = 100;
    assert_int_equal(tb_markov_stationary(&m), -1);
}

/* Writes a web tile with the given rows (NULL-terminated extra lines) and
 * returns web's configure error. */
static int configure_with(const char *const *lines, char *err) {
    char path[] = "/tmp/tb-test-markov-XXXXXX";
    int fd = mkstemp(path), rc;
    FILE *f = fdopen(fd, "w");
    tb_tiledef *d;
    tb_sut_endpoints ep = web_ep();
    const tb_workload_vt *vt = tb_workload_find("web");
    void *cfg = NULL;
    fprintf(f, "[tile]\nname = t\n[workload.web]\nkind = web\nusers = 2\nreference = 1\n");
    for (int i = 0; lines[i]; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
    if (!(d = tb_tiledef_load(path, err))) fail_msg("load: %s", err);
    rc = vt->configure(&d->workloads[0], &ep, &cfg, err);
    if (rc == 0) vt->cfg_free(cfg);
    tb_endpoints_free(&ep);
    tb_tiledef_free(d);
    unlink(path);
    return rc;
}

#define ROWS_OK                                                                                                        \
    "next.Login = TagSearch=60 EventDetail=20 AddEvent=20",                                                            \
        "next.TagSearch = HomePage=21 Login=6 TagSearch=41 EventDetail=31 AddPerson=1",                                \
        "next.EventDetail = HomePage=72 Login=21 PersonDetail=6 AddPerson=1",                                          \
        "next.PersonDetail = HomePage=52 Login=6 EventDetail=31 PersonDetail=11", "next.AddPerson = PersonDetail=100", \
        "next.AddEvent = EventDetail=100"

static void bad_rows(void **state) {
    char err[TB_ERR_LEN] = "";
    (void)state;
    {
        const char *l[] = {"next.HomePage = Login=11 TagSearch=52 EventDetail=36 AddPerson=1", ROWS_OK, NULL};
        if (configure_with(l, err) != 0) fail_msg("good matrix rejected: %s", err);
    }
    {
        const char *l[] = {"next.HomePage = Login=11 TagSearch=52 EventDetail=35 AddPerson=1", ROWS_OK, NULL};
        assert_int_equal(configure_with(l, err), -1);
        assert_non_null(strstr(err, ":7: [workload.web] next.HomePage: row sums to 99, not 100"));
    }
    {
        const char *l[] = {"next.HomePage = Login=11 Nowhere=89", ROWS_OK, NULL};
        assert_int_equal(configure_with(l, err), -1);
        assert_non_null(strstr(err, "next.HomePage: 'Nowhere': unknown op (known: HomePage, Login"));
    }
    {
        const char *l[] = {"next.HomePage = Login=eleven", ROWS_OK, NULL};
        assert_int_equal(configure_with(l, err), -1);
        assert_non_null(strstr(err, "next.HomePage: Login: 'eleven' must be a percentage"));
    }
    {
        const char *l[] = {ROWS_OK, NULL};
        assert_int_equal(configure_with(l, err), -1);
        assert_non_null(strstr(err, "next.HomePage: missing"));
    }
    {
        const char *l[] = {"next.HomePage = Login=11 TagSearch=52 EventDetail=36 AddPerson=1", ROWS_OK,
                           "min_cycle.AddPerson = soon", NULL};
        assert_int_equal(configure_with(l, err), -1);
        assert_non_null(strstr(err, "min_cycle.AddPerson"));
    }
    {
        const char *l[] = {"next.HomePage = Login=11 TagSearch=52 EventDetail=36 AddPerson=1", ROWS_OK,
                           "next.Logout = HomePage=100", NULL};
        assert_int_equal(configure_with(l, err), -1);
        assert_non_null(strstr(err, "next.Logout: unknown key"));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(standard_tile_olio_mix),
        cmocka_unit_test(two_state),
        cmocka_unit_test(bad_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
