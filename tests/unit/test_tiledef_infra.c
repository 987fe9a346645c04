/*
 * test_tiledef_infra.c: [infra.NAME] and [qos.infra.NAME] sections of the
 * tile file (tiles/infra_def.c): the keys and their defaults, the implicit
 * error-rate rule, the workload hash, and each error with file:line.
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

#define WL "[workload.kv]\nkind = kv\nreference = 100\n" /* lines 1-3 */

static tb_tiledef *parse(const char *text, char *err) { return tb_tiledef_parse("i.ini", text, strlen(text), err); }

/* Parsing text fails with an error containing want. */
static void refused(const char *text, const char *want) {
    char err[TB_ERR_LEN] = "";
    tb_tiledef *d = parse(text, err);
    if (d || !strstr(err, want)) print_error("wanted '%s', got '%s'\n", want, err);
    assert_null(d);
    assert_non_null(strstr(err, want));
}

static const tb_qos_rule *rule_of(const tb_tiledef *d, const char *wl, tb_qos_kind k) {
    for (int i = 0; i < d->n_rules; i++)
        if (strcmp(d->rules[i].workload, wl) == 0 && d->rules[i].kind == k) return &d->rules[i];
    return NULL;
}

static void good_file(void **state) {
    char err[TB_ERR_LEN] = "";
    tb_tiledef *d;
    (void)state;
    d = parse(WL "[infra.backup]\nkind = backup\nverify = yes\ntiles_per_user = 2\nthink_time = 30s\n"
                 "timeout = 5m\nreference = 12\n"
                 "[infra.deploy]\nkind = deploy\n"
                 "[infra.script]\nkind = command\ncommand = virsh migrate vm{tile} --dir {dir} # level {level}\n"
                 "output_cap = 8KiB\n"
                 "[qos.infra.backup]\nbackup.p95 = 120s\nerror_rate = 5%\nthroughput = 50\n"
                 "[qos.infra.script]\ncommand.mean = 10s\n",
              err);
    if (!d) print_error("%s\n", err);
    assert_non_null(d);
    assert_int_equal(d->n_infra, 3);
    const tb_infra_def *b = tb_tiledef_infra(d, "backup"), *dp = tb_tiledef_infra(d, "deploy"),
                       *s = tb_tiledef_infra(d, "script");
    assert_non_null(b);
    assert_int_equal(b->kind, TB_INFRA_BACKUP);
    assert_int_equal(b->verify, 1);
    assert_int_equal(b->tiles_per_user, 2);
    assert_int_equal(b->think_us, 30000000);
    assert_int_equal(b->timeout_us, 300000000);
    assert_true(b->reference == 12);
    assert_int_equal(b->line, 5);
    assert_null(b->command);
    /* defaults */
    assert_int_equal(dp->kind, TB_INFRA_DEPLOY);
    assert_int_equal(dp->tiles_per_user, 4);
    assert_int_equal(dp->think_us, 0);
    assert_int_equal(dp->timeout_us, 600000000);
    assert_true(dp->reference == 0);
    assert_int_equal(dp->verify, 0);
    assert_int_equal(dp->output_cap, 4096);
    assert_int_equal(s->kind, TB_INFRA_COMMAND);
    assert_string_equal(s->command, "virsh migrate vm{tile} --dir {dir} # level {level}");
    assert_int_equal(s->output_cap, 8192);
    assert_string_equal(tb_infra_kind_name(TB_INFRA_MIGRATE), "migrate");
    /* the file's rules, and the implicit error rate where it gives none */
    const tb_qos_rule *p95 = rule_of(d, "infra.backup", TB_QOS_PERCENTILE);
    assert_non_null(p95);
    assert_string_equal(p95->op, "backup");
    assert_true(p95->limit == 120000);
    assert_string_equal(p95->source, "i.ini:18");
    assert_true(rule_of(d, "infra.backup", TB_QOS_ERROR_RATE)->limit == 5);
    assert_string_equal(rule_of(d, "infra.backup", TB_QOS_THROUGHPUT)->op, "*");
    const tb_qos_rule *dflt = rule_of(d, "infra.deploy", TB_QOS_ERROR_RATE);
    assert_non_null(dflt);
    assert_true(dflt->limit == 1);
    assert_string_equal(dflt->op, "*");
    assert_string_equal(dflt->source, "tilebench default: an infrastructure op must not fail");
    assert_non_null(rule_of(d, "infra.script", TB_QOS_ERROR_RATE));
    assert_string_equal(rule_of(d, "infra.script", TB_QOS_ERROR_RATE)->source, TB_INFRA_DEFAULT_RULE_SOURCE);
    assert_int_equal(d->n_rules, 6);
    tb_tiledef_free(d);
}

/* Without [infra.*] the hash is what it was before them (calibrations are
 * keyed by it: FNV-1a of "kv|kv|1|1000000|fixed|0|10000000|ops/s", computed apart); with them it changes with
 * their defining keys but not with reference. */
static void workload_hash(void **state) {
    char err[TB_ERR_LEN], h0[17], h1[17], h2[17], h3[17];
    tb_tiledef *d;
    (void)state;
    d = parse(WL, err);
    tb_tiledef_workload_hash(d, h0);
    tb_tiledef_free(d);
    assert_string_equal(h0, "7e9bd8d6fd4d7191");
    d = parse(WL "[infra.c]\nkind = command\ncommand = true\nreference = 5\n", err);
    tb_tiledef_workload_hash(d, h1);
    tb_tiledef_free(d);
    d = parse(WL "[infra.c]\nkind = command\ncommand = true\nreference = 9\n", err);
    tb_tiledef_workload_hash(d, h2);
    tb_tiledef_free(d);
    d = parse(WL "[infra.c]\nkind = command\ncommand = false\n", err);
    tb_tiledef_workload_hash(d, h3);
    tb_tiledef_free(d);
    assert_string_not_equal(h0, h1);
    assert_string_equal(h1, h2);
    assert_string_not_equal(h1, h3);
}

static void errors_name_the_line(void **state) {
    (void)state;
    refused(WL "[infra.x]\nkind = vmotion\n", "i.ini:5: [infra.x] kind: unknown kind 'vmotion'");
    refused(WL "[infra.x]\nkind = command\ncommand = run {tile} {host}\n",
            "i.ini:6: [infra.x] command: unknown placeholder {host}");
    refused(WL "[infra.x]\nkind = command\ncommand = echo ${HOME}\n",
            "i.ini:6: [infra.x] command: unknown placeholder {HOME}");
    refused(WL "[infra.x]\nkind = backup\ntiles_per_user = 0\n", "i.ini:6: [infra.x] tiles_per_user: '0'");
    refused(WL "[infra.x]\nkind = backup\nsize = 3\n", "i.ini:6: [infra.x] size: unknown key");
    refused(WL "[infra.x]\nkind = backup\ncommand = true\n", "i.ini:6: [infra.x] command: not a key of kind backup");
    refused(WL "[infra.x]\nverify = yes\nkind = deploy\n", "i.ini:5: [infra.x] verify: not a key of kind deploy");
    refused(WL "[infra.x]\nkind = command\ncommand = true\nverify = no\n",
            "i.ini:7: [infra.x] verify: not a key of kind command");
    refused(WL "[infra.x]\nkind = migrate\noutput_cap = 1KiB\n",
            "i.ini:6: [infra.x] output_cap: not a key of kind migrate");
    refused(WL "[infra.x]\nkind = command\n", "i.ini:5: [infra.x] command: missing");
    refused(WL "[infra.x]\ntimeout = 10s\n", "i.ini:5: [infra.x] kind: missing");
    refused(WL "[infra.x]\nkind = backup\ntimeout = 0\n", "i.ini:6: [infra.x] timeout: must be > 0");
    refused(WL "[infra.x]\nkind = backup\nverify = maybe\n", "i.ini:6: [infra.x] verify: 'maybe'");
    refused(WL "[infra.x]\nkind = command\ncommand = true\noutput_cap = 2GiB\n",
            "i.ini:7: [infra.x] output_cap: '2GiB': unknown unit");
    refused(WL "[infra.x]\nkind = command\ncommand = true\noutput_cap = 2048MiB\n",
            "i.ini:7: [infra.x] output_cap: '2048MiB': must be at most 1MiB");
    refused(WL "[infra.x]\nkind = backup\nkind = deploy\n", "i.ini:6: [infra.x] kind: given twice");
    refused(WL "[infra.abcdefghijklmnopqrstuvwxyz]\nkind = backup\n",
            "i.ini:5: [infra.abcdefghijklmnopqrstuvwxyz] kind: "
            "operation name must be 1..25 characters");
    /* QoS rules of operations */
    refused(WL "[qos.infra.y]\nerror_rate = 1%\n[infra.x]\nkind = backup\n",
            "i.ini:5: [qos.infra.y]: no operation named 'y' (no [infra.y] section)");
    refused(WL "[infra.x]\nkind = backup\n[qos.infra.x]\ndeploy.p95 = 10s\n",
            "i.ini:7: [qos.infra.x] deploy: no op 'deploy' in a backup operation");
    refused(WL "[infra.x]\nkind = backup\n[qos.infra.x]\nmix_deviation = 2\n",
            "i.ini:7: [qos.infra.x] mix_deviation: an operation has no mix");
    refused(WL "[infra.x]\nkind = backup\n[qos.infra.x]\nbackup.p95 = soon\n", "i.ini:7: [qos.infra.x] backup.p95");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_file),
        cmocka_unit_test(workload_hash),
        cmocka_unit_test(errors_name_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
