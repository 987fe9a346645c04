/*
 * test_infra.c: the runner of infrastructure operations (infra/infra.c) with
 * real commands (/bin/sh, sleep, date): ops counted per phase by Faban's rule
 * (checked against the commands' own timestamps, written outside the op's
 * folder), a failing command's output kept and counted, a hanging one killed
 * at its timeout, and tb_infra_stop in the middle of an op leaving no process
 * and no folder behind. Deploy and backup ops run against a PostgreSQL
 * cluster this test starts itself (test_infra_pg.c holds that part).
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/tb_common.h"
#include "infra/infra.h"
#include "infra/infra_internal.h"
#include "tiles/tiledef.h"

#define WL "[workload.kv]\nkind = kv\nreference = 100\n"

static char base[256]; /* this test's folder: a space in its name, so {dir} must be quoted */

static tb_tiledef *parse_infra(const char *infra) {
    char text[2048], err[TB_ERR_LEN] = "";
    tb_tiledef *d;
    snprintf(text, sizeof text, WL "%s", infra);
    d = tb_tiledef_parse("infra.ini", text, strlen(text), err);
    if (!d) print_error("%s\n", err);
    assert_non_null(d);
    return d;
}

/* A fresh empty runner folder under base. */
static void make_dir(char *out, size_t len, const char *name) {
    snprintf(out, len, "%s/%s", base, name);
    assert_int_equal(mkdir(out, 0755), 0);
}

/* Entries in folder dir ("." and ".." aside). */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Processes whose command line holds marker (a unique sleep length). */
static int processes_with(const char *marker) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d))) {
        char path[300], buf[512];
        FILE *f;
        size_t got;
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        if (!(f = fopen(path, "r"))) continue;
        got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < got; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[got] = '\0';
        if (strstr(buf, marker)) n++;
    }
    closedir(d);
    return n;
}

/* A level starting in 100 ms: phases of phase_us each from start + lead_us. */
static tb_infra_level level(int tiles, int n_phases, uint64_t lead_us, uint64_t phase_us, uint64_t tail_us) {
    tb_infra_level lv;
    memset(&lv, 0, sizeof lv);
    lv.tiles = tiles;
    lv.level = 7;
    lv.start_us = tb_now_us() + 100000;
    lv.n_phases = n_phases;
    for (int p = 0; p < n_phases; p++) {
        lv.phase_start_us[p] = lv.start_us + lead_us + (uint64_t)p * phase_us;
        lv.phase_end_us[p] = lv.phase_start_us[p] + phase_us;
    }
    lv.end_us = lv.start_us + lead_us + (uint64_t)n_phases * phase_us + tail_us;
    return lv;
}

static void sleep_until(uint64_t t) {
    while (tb_now_us() < t)
        usleep(10000);
}

/* Ops of sleep 0.3 by two users over two phases: each phase's count is
 * the number of ops (by the commands' own clocks) that began in it and
 * ended before its end; an op across a phase boundary counts in neither. */
static void counts_by_fabans_rule(void **state) {
    char dir[300], logdir[300], cmd[1024], infra[1400], err[TB_ERR_LEN];
    tb_tiledef *def;
    tb_sut_endpoints ep;
    tb_infra *r;
    tb_infra_stat *st[2];
    tb_infra_op_output *outs[2];
    int n_outs[2], lines = 0, users_seen[3] = {0, 0, 0};
    int64_t off = tb_wall_us() - (int64_t)tb_now_us(); /* wall = mono + off */
    uint64_t sure[2] = {0, 0}, maybe[2] = {0, 0}, slack = 30000;
    (void)state;
    make_dir(dir, sizeof dir, "phases");
    make_dir(logdir, sizeof logdir, "phases-log");
    /* {dir} must be an empty folder that is also the working folder */
    snprintf(cmd, sizeof cmd,
             "[ -d {dir} ] && [ -z \"$(ls -A {dir})\" ] && [ \"$(pwd)\" = {dir} ] || exit 9; "
             "s=$(date +%%s%%N); sleep 0.3; e=$(date +%%s%%N); echo \"$s $e {tile} {level}\" >> \"%s/log\"",
             logdir);
    snprintf(infra, sizeof infra, "[infra.cmd]\nkind = command\ntiles_per_user = 1\ncommand = %s\n", cmd);
    def = parse_infra(infra);
    memset(&ep, 0, sizeof ep);
    tb_infra_level lv = level(2, 2, 500000, 1500000, 400000);
    assert_int_equal(tb_infra_check(def, &ep, err), 0);
    r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    for (int p = 0; p < 2; p++) {
        sleep_until(lv.phase_end_us[p]);
        assert_int_equal(tb_infra_collect(r, p, &st[p], &outs[p], &n_outs[p], err), 0);
    }
    sleep_until(lv.end_us + 200000);
    tb_infra_stop(r);
    assert_int_equal(entries(dir), 0); /* every op's folder removed */

    /* the ground truth: the commands' own start and end, on the wall clock */
    char path[400];
    snprintf(path, sizeof path, "%s/log", logdir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long long s, e;
    int tile, lvl;
    while (fscanf(f, "%lld %lld %d %d", &s, &e, &tile, &lvl) == 4) {
        int64_t ms = s / 1000 - off, me = e / 1000 - off; /* µs, monotonic */
        lines++;
        assert_int_equal(lvl, 7);
        assert_true(tile == 1 || tile == 2);
        users_seen[tile]++;
        for (int p = 0; p < 2; p++) {
            int64_t ps = (int64_t)lv.phase_start_us[p], pe = (int64_t)lv.phase_end_us[p];
            /* the runner's start is a little before the command's, its end a little after */
            int in = ms >= ps && ms < pe && me < pe;
            int near = (ms - ps < (int64_t)slack && ms - ps > -(int64_t)slack) ||
                       (pe - me < (int64_t)slack && pe - me > -(int64_t)slack) ||
                       (pe - ms < (int64_t)slack && pe - ms > -(int64_t)slack);
            if (in && !near) sure[p]++;
            if (near) maybe[p]++;
        }
    }
    fclose(f);
    assert_true(users_seen[1] >= 2 && users_seen[2] >= 2); /* each user kept its own tile */
    for (int p = 0; p < 2; p++) {
        if (st[p][0].ops < sure[p] || st[p][0].ops > sure[p] + maybe[p])
            print_error("phase %d: runner %llu ops, commands say %llu (+%llu near a boundary)\n", p,
                        (unsigned long long)st[p][0].ops, (unsigned long long)sure[p], (unsigned long long)maybe[p]);
        assert_true(st[p][0].ops >= sure[p] && st[p][0].ops <= sure[p] + maybe[p]);
        /* two users, 1.5 s, 0.3 s ops: 8 or so on an idle machine, far fewer on a busy one */
        if (st[p][0].ops < 2)
            print_error("phase %d: %llu ops (commands: %llu sure, %llu near a boundary, %d in all)\n", p,
                        (unsigned long long)st[p][0].ops, (unsigned long long)sure[p], (unsigned long long)maybe[p],
                        lines);
        assert_true(st[p][0].ops >= 2);
        assert_int_equal(st[p][0].errors, 0);
        assert_int_equal(st[p][0].users, 2);
        assert_non_null(st[p][0].hist);
        assert_int_equal(tb_hist_count(st[p][0].hist), st[p][0].ops);
        assert_true(tb_hist_min(st[p][0].hist) >= 300000);
    }
    /* count_all at the second collect: every op ended by then, any stage */
    assert_true(st[1][0].count_all <= (uint64_t)lines);
    assert_true(st[1][0].count_all >= st[0][0].ops + st[1][0].ops);
    /* the first TB_INFRA_KEEP_OK ok ops kept, no more */
    assert_int_equal(n_outs[0] + n_outs[1], TB_INFRA_KEEP_OK);
    assert_int_equal(outs[0][0].status, TB_OP_OK);
    assert_int_equal(outs[0][0].exit_code, 0);
    for (int p = 0; p < 2; p++) {
        tb_infra_stats_free(st[p], 1);
        tb_infra_outputs_free(outs[p], n_outs[p]);
    }
    tb_tiledef_free(def);
}

/* exit 3 is an error of class server, with what the command printed kept;
 * the implicit error-rate rule is there. */
static void failing_command_kept(void **state) {
    char dir[300], err[TB_ERR_LEN];
    tb_tiledef *def =
        parse_infra("[infra.bad]\nkind = command\ncommand = echo oops on tile {tile}; echo to-stderr >&2; "
                    "echo PGPASSWORD=hush-4711 postgresql://u:hush-4712@h/db; exit 3\n"
                    "think_time = 200ms\n");
    tb_sut_endpoints ep;
    tb_infra_stat *st;
    tb_infra_op_output *outs;
    int n;
    (void)state;
    memset(&ep, 0, sizeof ep);
    make_dir(dir, sizeof dir, "fail");
    tb_infra_level lv = level(1, 1, 0, 1000000, 100000);
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    sleep_until(lv.phase_end_us[0]);
    assert_int_equal(tb_infra_collect(r, 0, &st, &outs, &n, err), 0);
    tb_infra_stop(r);
    assert_true(st[0].errors >= 2);
    assert_int_equal(st[0].ops, 0);
    assert_int_equal(st[0].err_by_class[TB_OP_ERR_SERVER], st[0].errors);
    assert_true(n >= 2);
    assert_int_equal(outs[0].status, TB_OP_ERR_SERVER);
    assert_int_equal(outs[0].exit_code, 3);
    assert_int_equal(outs[0].tile, 1);
    assert_non_null(strstr(outs[0].text, "oops on tile 1"));
    assert_non_null(strstr(outs[0].text, "to-stderr"));
    assert_non_null(strstr(outs[0].text, "exit status 3"));
    assert_null(strstr(outs[0].text, "hush-471")); /* passwords in the output are kept redacted */
    assert_non_null(strstr(outs[0].text, "PGPASSWORD= ***"));
    /* the rule that fails the level on such an op */
    int found = 0;
    for (int i = 0; i < def->n_rules; i++)
        if (strcmp(def->rules[i].workload, "infra.bad") == 0 && def->rules[i].kind == TB_QOS_ERROR_RATE &&
            def->rules[i].limit == 1 && strcmp(def->rules[i].source, TB_INFRA_DEFAULT_RULE_SOURCE) == 0)
            found++;
    assert_int_equal(found, 1);
    tb_infra_stats_free(st, 1);
    tb_infra_outputs_free(outs, n);
    tb_tiledef_free(def);
}

/* A command's output is kept up to output_cap bytes, and says it was cut. */
static void output_capped(void **state) {
    char dir[300], err[TB_ERR_LEN];
    tb_tiledef *def = parse_infra("[infra.loud]\nkind = command\noutput_cap = 300\nthink_time = 10s\n"
                                  "command = yes abcdefghij | head -c 50000; exit 1\n");
    tb_sut_endpoints ep;
    tb_infra_stat *st;
    tb_infra_op_output *outs;
    int n;
    (void)state;
    memset(&ep, 0, sizeof ep);
    make_dir(dir, sizeof dir, "loud");
    tb_infra_level lv = level(1, 1, 0, 700000, 0);
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    sleep_until(lv.phase_end_us[0]);
    assert_int_equal(tb_infra_collect(r, 0, &st, &outs, &n, err), 0);
    tb_infra_stop(r);
    assert_int_equal(n, 1);
    assert_true(strlen(outs[0].text) <= 300);
    assert_true(strlen(outs[0].text) >= 200);
    assert_non_null(strstr(outs[0].text, "abcdefghij\nabcdefghij\n"));
    assert_non_null(strstr(outs[0].text, "[exit status 1; output cut]"));
    tb_infra_stats_free(st, 1);
    tb_infra_outputs_free(outs, n);
    tb_tiledef_free(def);
}

/* A command that hangs is killed at its timeout (its process group too)
 * and counted as a timeout error. */
static void hanging_command_killed(void **state) {
    char dir[300], err[TB_ERR_LEN];
    tb_tiledef *def = parse_infra("[infra.hang]\nkind = command\ntimeout = 500ms\n"
                                  "command = sleep 30.4561 & sleep 30.4562; echo never\n");
    tb_sut_endpoints ep;
    tb_infra_stat *st;
    tb_infra_op_output *outs;
    int n;
    (void)state;
    memset(&ep, 0, sizeof ep);
    make_dir(dir, sizeof dir, "hang");
    tb_infra_level lv = level(1, 1, 0, 1800000, 100000);
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    sleep_until(lv.phase_end_us[0]);
    assert_int_equal(tb_infra_collect(r, 0, &st, &outs, &n, err), 0);
    tb_infra_stop(r);
    for (int i = 0; i < 100 && processes_with("30.456"); i++)
        usleep(10000);
    assert_int_equal(processes_with("30.456"), 0);
    assert_true(st[0].errors >= 2);
    assert_int_equal(st[0].err_by_class[TB_OP_ERR_TIMEOUT], st[0].errors);
    assert_true(tb_hist_min(st[0].hist) >= 500000);
    assert_true(tb_hist_max(st[0].hist) < 1000000); /* sleep ends at SIGTERM */
    assert_true(n >= 2);
    assert_non_null(strstr(outs[0].text, "timed out"));
    assert_null(strstr(outs[0].text, "never"));
    assert_int_equal(entries(dir), 0);
    tb_infra_stats_free(st, 1);
    tb_infra_outputs_free(outs, n);
    tb_tiledef_free(def);
}

/* tb_infra_stop while ops run: no process, no folder left, and quickly. */
static void stop_mid_op(void **state) {
    char dir[300], mark[400], infra[800], err[TB_ERR_LEN];
    tb_sut_endpoints ep;
    uint64_t t0;
    (void)state;
    memset(&ep, 0, sizeof ep);
    make_dir(dir, sizeof dir, "stop");
    snprintf(mark, sizeof mark, "%s/started", base);
    snprintf(infra, sizeof infra,
             "[infra.long]\nkind = command\ntiles_per_user = 2\ncommand = touch {dir}/inside; "
             "touch \"%s\"; sleep 20.7891\n",
             mark);
    tb_tiledef *def = parse_infra(infra);
    tb_infra_level lv = level(3, 1, 0, 30000000, 0); /* 2 users */
    tb_infra *r = tb_infra_start(def, &ep, dir, &lv, err);
    assert_non_null(r);
    while (access(mark, F_OK) != 0)
        usleep(10000);
    usleep(100000);
    assert_true(processes_with("20.7891") >= 2); /* sh -c and its sleep, per user */
    assert_int_equal(entries(dir), 2);
    t0 = tb_now_us();
    tb_infra_stop(r);
    assert_true(tb_now_us() - t0 < 4000000);
    /* SIGKILL went to each op's process group before stop returned; give
     * the kernel a moment to end them (and init to reap the orphans) */
    for (int i = 0; i < 100 && processes_with("20.7891"); i++)
        usleep(10000);
    assert_int_equal(processes_with("20.7891"), 0);
    assert_int_equal(entries(dir), 0);
    tb_tiledef_free(def);
}

/* Users per operation: ceil(tiles / tiles_per_user), at least one. */
static void users_and_tiles(void **state) {
    tb_infra_def d;
    (void)state;
    memset(&d, 0, sizeof d);
    d.tiles_per_user = 4;
    assert_int_equal(tb_infra_users(&d, 1), 1);
    assert_int_equal(tb_infra_users(&d, 4), 1);
    assert_int_equal(tb_infra_users(&d, 5), 2);
    assert_int_equal(tb_infra_users(&d, 9), 3);
    d.tiles_per_user = 1;
    assert_int_equal(tb_infra_users(&d, 3), 3);
}

static int setup(void **state) {
    (void)state;
    snprintf(base, sizeof base, "/tmp/tb infra 'q' XXXXXX");
    if (!mkdtemp(base)) return -1;
    return chmod(base, 0711);
}

/* A conninfo value in quotes, ' and \ escaped (libpq's rule); too small a buffer is refused. */
static void conninfo_values_quoted(void **state) {
    char out[64];
    (void)state;
    assert_int_equal(infra_conninfo_quote("/tmp/a b/it's\\x", out, sizeof out), 0);
    assert_string_equal(out, "'/tmp/a b/it\\'s\\\\x'");
    assert_int_equal(infra_conninfo_quote("", out, sizeof out), 0);
    assert_string_equal(out, "''");
    assert_int_equal(infra_conninfo_quote("abcdef", out, 9), 0);
    assert_string_equal(out, "'abcdef'");
    assert_int_equal(infra_conninfo_quote("abcdef", out, 8), -1);
    assert_int_equal(infra_conninfo_quote("abcd'", out, 9), 0);
    assert_string_equal(out, "'abcd\\''");
    assert_int_equal(infra_conninfo_quote("abcd'", out, 8), -1);
}

static int teardown(void **state) {
    char cmd[400];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf \"%s\"", base);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(users_and_tiles),        cmocka_unit_test(counts_by_fabans_rule),
        cmocka_unit_test(failing_command_kept),   cmocka_unit_test(hanging_command_killed),
        cmocka_unit_test(output_capped),          cmocka_unit_test(stop_mid_op),
        cmocka_unit_test(conninfo_values_quoted),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
