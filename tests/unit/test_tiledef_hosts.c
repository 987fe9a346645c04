/*
 * test_tiledef_hosts.c: [host.NAME] sections of the tile file
 * (tiles/tiledef.c): meters, telemetry, tiles and label; which host serves
 * a tile; and the errors, each naming file:line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/tb_common.h"
#include "tiles/tiledef.h"

#define WL "[workload.kv]\nkind = kv\nreference = 100\n"

static tb_tiledef *parse(const char *text, char *err) { return tb_tiledef_parse("h.ini", text, strlen(text), err); }

/* Parsing text fails with an error containing want. */
static void refused(const char *text, const char *want) {
    char err[TB_ERR_LEN] = "";
    tb_tiledef *d = parse(text, err);
    if (d || !strstr(err, want)) print_error("wanted '%s', got '%s'\n", want, err);
    assert_null(d);
    assert_non_null(strstr(err, want));
}

static void two_hosts(void **state) {
    char err[TB_ERR_LEN], t[64];
    tb_tiledef *d;
    (void)state;
    d = parse(WL "[host.db]\nlabel = database box\nmeter = wt310://127.0.0.1:1\nmeter.psu2 = estimate:\n"
                 "telemetry = http://10.0.0.2:9100/metrics\ntiles = 1..2, 5\n"
                 "[host.app]\nmeter = ptd://127.0.0.1:2\ntelemetry = local\n",
              err);
    if (!d) print_error("%s\n", err);
    assert_non_null(d);
    assert_int_equal(d->n_hosts, 2);
    assert_string_equal(d->hosts[0].name, "db");
    assert_string_equal(d->hosts[0].label, "database box");
    assert_int_equal(d->hosts[0].n_meters, 2);
    assert_string_equal(d->hosts[0].meters[0], "wt310://127.0.0.1:1");
    assert_string_equal(d->hosts[0].meters[1], "estimate:");
    assert_string_equal(d->hosts[0].telemetry, "http://10.0.0.2:9100/metrics");
    assert_string_equal(d->hosts[1].telemetry, "local");
    assert_int_equal(d->hosts[1].tiles_given, 0);
    tb_tiledef_host_tiles(&d->hosts[0], t, sizeof t);
    assert_string_equal(t, "1..2, 5");
    tb_tiledef_host_tiles(&d->hosts[1], t, sizeof t);
    assert_string_equal(t, "rest");
    /* listed tiles go to db, every other one to app, the host without tiles */
    assert_int_equal(tb_tiledef_host_of(d, 1), 0);
    assert_int_equal(tb_tiledef_host_of(d, 2), 0);
    assert_int_equal(tb_tiledef_host_of(d, 3), 1);
    assert_int_equal(tb_tiledef_host_of(d, 5), 0);
    assert_int_equal(tb_tiledef_host_of(d, 6), 1);
    tb_tiledef_free(d);
}

static void every_tile_named(void **state) {
    char err[TB_ERR_LEN], t[64];
    tb_tiledef *d;
    (void)state;
    d = parse(WL "[host.a]\nmeter = estimate:\ntiles = 1..2\n[host.b]\nmeter = estimate:\ntiles = 3\n"
                 "[host.store]\nmeter = estimate:\ntiles = none\n",
              err);
    assert_non_null(d);
    assert_int_equal(d->hosts[0].telemetry[0] == 'n', 1); /* the default: none */
    assert_int_equal(tb_tiledef_host_of(d, 2), 0);
    assert_int_equal(tb_tiledef_host_of(d, 3), 1);
    assert_int_equal(tb_tiledef_host_of(d, 4), -1); /* no host: the run refuses such a level */
    tb_tiledef_host_tiles(&d->hosts[2], t, sizeof t);
    assert_string_equal(t, "none");
    tb_tiledef_free(d);
    /* no host section: no host serves anything (one SUT, as before) */
    d = parse(WL, err);
    assert_non_null(d);
    assert_int_equal(d->n_hosts, 0);
    assert_int_equal(tb_tiledef_host_of(d, 1), -1);
    tb_tiledef_free(d);
}

static void errors_name_the_line(void **state) {
    (void)state;
    refused(WL "[host.a]\nmeter = estimate:\ntiles = 1..4\n[host.b]\nmeter = estimate:\ntiles = 4..6\n",
            "h.ini:9: [host.b] tiles: tile 4 is served by [host.a] too");
    refused(WL "[host.a]\nmeter = estimate:\ntiles = 3, 1..2\n[host.b]\nmeter = estimate:\ntiles = 7, 2\n",
            "h.ini:9: [host.b] tiles: tile 2 is served by [host.a] too");
    refused(WL "[host.a]\nmeter = estimate:\n[host.b]\nmeter = estimate:\n",
            "h.ini:7: [host.b] tiles: missing, and [host.a] has none either");
    refused(WL "[host.a]\ntiles = 1\n", "h.ini:5: [host.a] meter: missing");
    refused(WL "[host.a]\nmeter = estimate:\ntiles = 4..2\n", "h.ini:6: [host.a] tiles: a range LO..HI needs LO");
    refused(WL "[host.a]\nmeter = estimate:\ntiles = 1..x\n", "h.ini:6: [host.a] tiles: write a tile");
    refused(WL "[host.a]\nmeter = estimate:\ntiles = 1, 1\n", "h.ini:6: [host.a] tiles: a tile is named twice");
    refused(WL "[host.a]\nmeter = estimate:\ntiles = 0\n", "h.ini:6: [host.a] tiles: write a tile");
    refused(WL "[host.a]\nmeter = estimate:\ntelemetry = ftp://x\n", "h.ini:6: [host.a] telemetry: use local");
    refused(WL "[host.a]\nmeter = estimate:\nwatts = 5\n", "h.ini:6: [host.a] watts: unknown key");
    refused(WL "[host.a]\nmeter = estimate:\nmeter = estimate:\n", "h.ini:6: [host.a] meter: given twice");
    refused(WL "[host.a b]\nmeter = estimate:\n", "h.ini:5: [host.a b] meter: host names hold");
    refused(WL "[host.a]\nmeter = estimate:\ntelemetry = local\ntiles = 1\n[host.b]\nmeter = estimate:\n"
               "telemetry = local\n",
            "[host.b] telemetry: local is [host.a]'s already");
    refused(WL "[sut]\ntelemetry = local\n[host.a]\nmeter = estimate:\n",
            "h.ini:5: [sut] telemetry: with [host.NAME] sections");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_hosts),
        cmocka_unit_test(every_tile_named),
        cmocka_unit_test(errors_name_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
