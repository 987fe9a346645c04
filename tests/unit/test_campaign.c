/*
 * test_campaign.c: unit tests of the campaign file parser (coordinator/campaign.c):
 * the shipped example parses into the expected sweep and configurations, a
 * relative tile_file is taken from the campaign file's folder, meter repeats,
 * a configuration's own keys (tile_file, tiles, meter, threads, label),
 * and errors name file:line, the section and the key (unknown section and
 * key, a key given twice, long lines, NUL bytes, a bad tile spec), and the
 * stored text has no password.
 * Running a campaign is tested end to end in tests/integration/test_campaign.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/campaign.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tb-campaign-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    char p[128];
    (void)state;
    snprintf(p, sizeof p, "%s/c.ini", dir);
    unlink(p);
    rmdir(dir);
    return 0;
}

/* Writes text to DIR/c.ini and parses it: 0 or -1 with err. */
static int load_text(const char *text, tb_campaign *c, char *err, char *path, size_t plen) {
    FILE *f;
    snprintf(path, plen, "%s/c.ini", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return tb_campaign_load(path, c, err);
}

static void example_parses(void **state) {
    tb_campaign *c = calloc(1, sizeof *c);
    char err[TB_ERR_LEN] = "", path[512];
    (void)state;
    snprintf(path, sizeof path, "%s/tiles/examples/campaign-governors.ini",
             getenv("TB_SOURCE_DIR") ? getenv("TB_SOURCE_DIR") : TB_SOURCE_DIR);
    if (tb_campaign_load(path, c, err) != 0) fail_msg("%s", err);
    assert_string_equal(c->name, "cpu governors");
    assert_string_equal(c->baseline, "performance");
    assert_int_equal(c->settle_us, 10000000);
    assert_string_equal(c->tiles, "1..3");
    assert_int_equal(c->levels.n, 3);
    assert_int_equal(c->stage_us[TB_CAMP_STEADY], 120000000);
    assert_true(c->stage_set & (1u << TB_CAMP_STEADY));
    assert_int_equal(c->n_configs, 3);
    assert_string_equal(c->configs[1].name, "powersave");
    assert_string_equal(c->configs[1].apply, "cpupower frequency-set -g powersave && tuned-adm profile powersave");
    assert_string_equal(c->configs[2].revert, "true");
    assert_string_equal(c->tile_file, ""); /* the standard tile */
    assert_non_null(c->text);
    tb_campaign_free(c);
    free(c);
}

static void relative_tile_file_and_meters(void **state) {
    tb_campaign *c = calloc(1, sizeof *c);
    char err[TB_ERR_LEN] = "", path[512], want[600];
    (void)state;
    if (load_text("[campaign]\nname = n\nbaseline = a\n[sweep]\ntile_file = mine.ini\nmeter = rapl:\n"
                  "meter = estimate:?idle=50&max=200\n[config.a]\napply = true\nrevert = true\n[config.b]\n"
                  "apply = echo b;exit 0\nrevert = true\n",
                  c, err, path, sizeof path) != 0)
        fail_msg("%s", err);
    snprintf(want, sizeof want, "%s/mine.ini", dir);
    assert_string_equal(c->tile_file, want);
    assert_int_equal(c->n_meters, 2);
    assert_string_equal(c->meters[1], "estimate:?idle=50&max=200");
    assert_string_equal(c->configs[1].apply, "echo b;exit 0"); /* ';' after a word is not a comment */
    assert_string_equal(c->tiles, "1..3");                     /* default */
    tb_campaign_free(c);
    free(c);
}

/* A configuration's own keys: a relative tile_file from the campaign file's
 * folder, its tile spec parsed, meters repeated, threads, label; the other
 * configuration keeps [sweep]'s (left empty). */
static void config_own_keys(void **state) {
    tb_campaign *c = calloc(1, sizeof *c);
    char err[TB_ERR_LEN] = "", path[512], want[600];
    (void)state;
    if (load_text("[campaign]\nname = n\nbaseline = a\n[sweep]\nthreads = 4\nmeter = rapl:\n[config.a]\napply = true\n"
                  "revert = true\n[config.b]\napply = true\nrevert = true\ntile_file = b.ini\ntiles = 2..4\n"
                  "meter = estimate:\nmeter = rapl:\nthreads = 3\nlabel = b with 3 threads\n",
                  c, err, path, sizeof path) != 0)
        fail_msg("%s", err);
    assert_int_equal(c->threads, 4);
    assert_string_equal(c->configs[0].tile_file, "");
    assert_int_equal(c->configs[0].n_meters, 0);
    assert_int_equal(c->configs[0].threads, 0);
    snprintf(want, sizeof want, "%s/b.ini", dir);
    assert_string_equal(c->configs[1].tile_file, want);
    assert_int_equal(c->configs[1].tile_file_line, 13);
    assert_int_equal(c->configs[1].levels.n, 3);
    assert_int_equal(c->configs[1].levels.tiles[2], 4);
    assert_int_equal(c->configs[1].n_meters, 2);
    assert_string_equal(c->configs[1].meters[0], "estimate:");
    assert_int_equal(c->configs[1].threads, 3);
    assert_string_equal(c->configs[1].label, "b with 3 threads");
    tb_campaign_free(c);
    free(c);
}

static void errors_name_line_and_key(void **state) {
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[campaign]\nname = n\n[tiles]\nx = 1\n", ":4: [tiles] x: unknown section"},
        {"[campaign]\nname = n\nname = m\n", ":3: [campaign] name: given twice"},
        {"[campaign]\nname = n\nbaseline = a\n[sweep]\ntiles = 0\n[config.a]\napply = true\nrevert = true\n"
         "[config.b]\napply = true\nrevert = true\n",
         "[sweep] tiles: tile spec '0'"},
        {"[campaign]\nname = n\nbaseline = a\n[config.a]\napply = true\nrevert = true\n",
         "1 configuration; a campaign compares at least 2"},
        {"[campaign]\nbaseline = a\n", "[campaign] name: missing"},
        {"[campaign]\nname = n\nbaseline = a\n[config.a b]\napply = true\n",
         ":5: [config.a b] apply: the configuration name"},
        {"[campaign]\nname = n\nbaseline = a\n[config.a]\napply =\n", ":5: [config.a] apply: empty command"},
        {"[campaign]\nname = n\n[sweep]\nphases = 0\n", ":4: [sweep] phases: must be an integer 1..100"},
        {"[campaign]\nname = n\n[config.a]\nthreads = 0\n", ":4: [config.a] threads: must be an integer 1..256"},
        {"[campaign]\nname = n\n[config.a]\nthreads = 2\nthreads = 3\n", ":5: [config.a] threads: given twice"},
        {"[campaign]\nname = n\n[config.a]\nlabel =\n", ":4: [config.a] label: empty"},
        {"[campaign]\nname = n\n[config.a]\nlabel = a\x1b[31mred\n", ":4: [config.a] label: a control character"},
        {"[campaign]\nname = n\n[config.a]\ntile_file =\n", ":4: [config.a] tile_file: must not be empty"},
        {"[campaign]\nname = n\n[config.a]\nsteady = 1s\n", ":4: [config.a] steady: unknown key"},
        {"[campaign]\nname = n\nbaseline = a\n[config.a]\napply = true\nrevert = true\n[config.b]\napply = true\n"
         "revert = true\ntiles = 0\n",
         ":10: [config.b] tiles: tile spec '0'"},
        /* a syntax error is reported at its own line, not at the first key
         * after it (which inih files under the section before it) */
        {"[campaign]\nname = n\nbaseline = a\n[sweep\ntiles = 1\n",
         ":4: syntax error: unclosed section header (no ']'): '[sweep'"},
        {"[campaign]\nname = n\nsettle\nbaseline = a\n",
         ":3: syntax error: expected key = value (or [section]): 'settle'"},
        /* a handler error before a syntax error is the first error */
        {"[campaign]\nname = n\nnope = 1\n[sweep\n", ":3: [campaign] nope: unknown key"},
        {"[campaign]\nname = n\n\x02"
         "bad\n",
         ":3: syntax error: expected key = value (or [section]): '\\x02bad'"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_campaign *c = calloc(1, sizeof *c);
        char err[TB_ERR_LEN] = "", path[512];
        assert_int_equal(load_text(cases[i].text, c, err, path, sizeof path), -1);
        if (!strstr(err, cases[i].want) || !strstr(err, path))
            fail_msg("case %zu: '%s' lacks '%s' or the file name", i, err, cases[i].want);
        free(c);
    }
}

/* Lines are read whole (Debian's inih reads 199 bytes at a time by itself):
 * a 255-byte command is taken, a 256-byte one is an error naming its line
 * and key, as is a line over TB_INI_MAX_LINE and a NUL byte; the line
 * numbers after a long line are right. */
static void long_line(void **state) {
    tb_campaign *c = calloc(1, sizeof *c);
    char err[TB_ERR_LEN] = "", path[512], *text = malloc(80000);
    static const char two[] = "[config.b]\napply = true\nrevert = true\n";
    (void)state;
    snprintf(text, 80000,
             "[campaign]\nname = n\nbaseline = a\n[config.a]\napply = echo %0250d\nrevert = true\n%snope = 1\n", 0,
             two);
    assert_int_equal(load_text(text, c, err, path, sizeof path), -1);
    if (!strstr(err, ":10: [config.b] nope: unknown key")) fail_msg("'%s'", err);
    tb_campaign_free(c);
    snprintf(text, 80000, "[campaign]\nname = n\nbaseline = a\n[config.a]\napply = echo %0250d\nrevert = true\n%s", 0,
             two);
    if (load_text(text, c, err, path, sizeof path) != 0) fail_msg("a 255-byte command: %s", err);
    assert_int_equal(strlen(c->configs[0].apply), 255);
    tb_campaign_free(c);
    snprintf(text, 80000, "[campaign]\nname = n\nbaseline = a\n[config.a]\napply = echo %0251d\nrevert = true\n%s", 0,
             two);
    assert_int_equal(load_text(text, c, err, path, sizeof path), -1);
    if (!strstr(err, ":5: [config.a] apply: command of 256 bytes, longer than the 255 allowed")) fail_msg("'%s'", err);
    snprintf(text, 80000, "[campaign]\nname = n\nbaseline = a\n[config.a]\nrevert = true\napply = echo %070000d\n%s", 0,
             two);
    assert_int_equal(load_text(text, c, err, path, sizeof path), -1);
    if (!strstr(err, ":6: [config.a] apply: line of 70013 bytes, longer than the 65536 allowed")) fail_msg("'%s'", err);
    free(text);
    free(c);
}

/* A NUL byte is an error naming its line; the text stored with the campaign
 * has its secrets redacted, commented-out lines too. */
static void nul_and_secrets(void **state) {
    static const char nul[] = "[campaign]\nname = n\nbaseline = a\n[sweep]\nmeter = rapl:\0\n";
    static const char secrets[] =
        "[campaign]\nname = n\nbaseline = a\n[sweep]\nmeter = ipmi://admin:Hidden1@127.0.0.1?method=dcmi\n"
        "; meter = ipmi://admin:Hidden2@127.0.0.1\n[config.a]\napply = REDISCLI_AUTH=Hidden3 redis-cli ping\n"
        "revert = echo password=Hidden4 DB_TOKEN=\"Hidden 5\"; true\n"
        "[config.b]\napply = true\nrevert = true\n";
    tb_campaign *c = calloc(1, sizeof *c);
    char err[TB_ERR_LEN] = "", path[512];
    FILE *f;
    (void)state;
    snprintf(path, sizeof path, "%s/c.ini", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(nul, 1, sizeof nul - 1, f), sizeof nul - 1);
    fclose(f);
    assert_int_equal(tb_campaign_load(path, c, err), -1);
    if (!strstr(err, ":5: [sweep] meter: a NUL byte at byte 14")) fail_msg("'%s'", err);
    if (load_text(secrets, c, err, path, sizeof path) != 0) fail_msg("%s", err);
    assert_string_equal(c->meters[0], "ipmi://admin:Hidden1@127.0.0.1?method=dcmi"); /* used as given */
    if (strstr(c->text, "Hidden")) fail_msg("stored text holds a password:\n%s", c->text);
    assert_non_null(strstr(c->text, "\nmeter = ipmi://admin:***@127.0.0.1?method=dcmi\n"));
    assert_non_null(strstr(c->text, "\n; meter = ipmi://admin:***@127.0.0.1\n"));
    assert_non_null(strstr(c->text, "\napply = REDISCLI_AUTH=*** redis-cli ping\n"));
    assert_string_equal(c->configs[0].apply, "REDISCLI_AUTH=Hidden3 redis-cli ping"); /* run as given */
    tb_campaign_free(c);
    free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(example_parses),
        cmocka_unit_test_setup_teardown(relative_tile_file_and_meters, setup, teardown),
        cmocka_unit_test_setup_teardown(config_own_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(errors_name_line_and_key, setup, teardown),
        cmocka_unit_test_setup_teardown(long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(nul_and_secrets, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
