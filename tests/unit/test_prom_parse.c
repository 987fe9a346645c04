/*
 * test_prom_parse.c: the Prometheus text format parser (no I/O) on good
 * input (comments, HELP/TYPE, labels, escapes, NaN, +Inf, -Inf, timestamps,
 * CRLF) and garbage (each must fail with the line number), and the mapping
 * of node_exporter 1.5 metric names onto a telemetry snapshot and the host
 * configuration.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "powermeter/node_exporter.h"

#define EPS 1e-9

/* Everything the callback saw, flattened: "name{a=v,b=w} value ts". */
typedef struct seen {
    char line[16][256];
    double value[16];
    int n;
} seen;

static int record(const tb_prom_sample *s, void *ud) {
    seen *x = ud;
    size_t l;
    char *o;
    if (x->n == 16) return 1;
    o = x->line[x->n];
    l = (size_t)snprintf(o, 256, "%s{", s->name);
    for (int i = 0; i < s->n_labels; i++)
        l += (size_t)snprintf(o + l, 256 - l, "%s%s=%s", i ? "," : "", s->label_name[i], s->label_value[i]);
    l += (size_t)snprintf(o + l, 256 - l, "}");
    if (s->has_timestamp) snprintf(o + l, 256 - l, " @%lld", s->timestamp_ms);
    x->value[x->n++] = s->value;
    return 0;
}

static int parse(const char *text, seen *x, char *err) {
    memset(x, 0, sizeof *x);
    return tb_prom_parse(text, strlen(text), record, x, err);
}

static void test_good(void **state) {
    seen x;
    char err[TB_ERR_LEN] = "";
    const char *text = "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n"
                       "# TYPE node_cpu_seconds_total counter\n"
                       "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 9378.9\n"
                       "\n"
                       "   # an indented comment\n"
                       "go_gc_duration_seconds{quantile=\"0.5\"} NaN\n"
                       "http_x{le=\"+Inf\"} +Inf\n"
                       "neg -Inf\n"
                       "with_ts{a=\"1\",} 1.5e+09 1700000000123\r\n"
                       "esc{path=\"C:\\\\dir\\\"x\\\"\\nnext\"} -0.25\n"
                       "empty_labels{} 7\n"
                       "spaced { a = \"b\" , c=\"\" }   42  \n"
                       "colon:name_total 3";
    (void)state;
    assert_int_equal(parse(text, &x, err), 9);
    assert_string_equal(x.line[0], "node_cpu_seconds_total{cpu=0,mode=idle}");
    assert_true(fabs(x.value[0] - 9378.9) < EPS);
    assert_string_equal(x.line[1], "go_gc_duration_seconds{quantile=0.5}");
    assert_true(isnan(x.value[1]));
    assert_true(isinf(x.value[2]) && x.value[2] > 0);
    assert_true(isinf(x.value[3]) && x.value[3] < 0);
    assert_string_equal(x.line[4], "with_ts{a=1} @1700000000123");
    assert_true(fabs(x.value[4] - 1.5e9) < EPS);
    assert_string_equal(x.line[5], "esc{path=C:\\dir\"x\"\nnext}");
    assert_true(fabs(x.value[5] + 0.25) < EPS);
    assert_string_equal(x.line[6], "empty_labels{}");
    assert_string_equal(x.line[7], "spaced{a=b,c=}");
    assert_true(fabs(x.value[7] - 42) < EPS);
    assert_string_equal(x.line[8], "colon:name_total{}");
    assert_int_equal(tb_prom_parse("", 0, record, &x, err), 0);
    assert_int_equal(tb_prom_parse("# only\n# comments\n", 18, record, &x, err), 0);
}

static void test_label_lookup_and_stop(void **state) {
    seen x;
    char err[TB_ERR_LEN] = "";
    char big[16 * 24 + 1] = "";
    (void)state;
    for (int i = 0; i < 20; i++)
        strcat(big, "m 1\n");
    memset(&x, 0, sizeof x);
    /* the callback stops after 16: parsing stops there, no error */
    assert_int_equal(tb_prom_parse(big, strlen(big), record, &x, err), 17);
    assert_int_equal(x.n, 16);
}

static void expect_fail(const char *text, int line, const char *why) {
    seen x;
    char err[TB_ERR_LEN] = "", want[64];
    int rc;
    memset(&x, 0, sizeof x);
    rc = tb_prom_parse(text, strlen(text), record, &x, err);
    if (rc != -1) fail_msg("'%s' parsed (rc %d) but should fail", text, rc);
    snprintf(want, sizeof want, "line %d: ", line);
    if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, why))
        fail_msg("'%s': error '%s', wanted '%s...%s'", text, err, want, why);
}

static void test_garbage(void **state) {
    (void)state;
    expect_fail("ok 1\n1abc 2\n", 2, "metric name");
    expect_fail("foo bar\n", 1, "not a number");
    expect_fail("foo\n", 1, "missing value");
    expect_fail("foo{a=b} 1\n", 1, "double quotes");
    expect_fail("foo{a=\"x} 1\n", 1, "unterminated label value");
    expect_fail("foo{a=\"\\q\"} 1\n", 1, "bad escape");
    expect_fail("foo{a=\"x\" b=\"y\"} 1\n", 1, "expected ','");
    expect_fail("foo{=\"x\"} 1\n", 1, "bad label name");
    expect_fail("foo{a\"x\"} 1\n", 1, "expected '='");
    expect_fail("foo 1 12abc\n", 1, "timestamp");
    expect_fail("foo 1 2 3\n", 1, "after the timestamp");
    expect_fail("foo 0x\n", 1, "not a number");
    expect_fail("foo Infinityy\n", 1, "not a number");
    expect_fail("\n\n{a=\"b\"} 1\n", 3, "metric name");
    expect_fail("<html><body>404</body></html>\n", 1, "metric name");
    {
        char many[2048] = "foo{";
        for (int i = 0; i < TB_PROM_MAX_LABELS + 1; i++) {
            char l[32];
            snprintf(l, sizeof l, "l%d=\"v\",", i);
            strcat(many, l);
        }
        strcat(many, "} 1\n");
        expect_fail(many, 1, "too many labels");
    }
    {
        static const char nul[] = "a 1\nb\0 2\n";
        char err[TB_ERR_LEN] = "";
        assert_int_equal(tb_prom_parse(nul, sizeof nul - 1, NULL, NULL, err), -1);
        assert_non_null(strstr(err, "line 2"));
    }
}

/* A trimmed scrape of Debian 12's prometheus-node-exporter 1.5.0 (2 CPUs,
 * cpu.info on), plus the cpufreq metrics of a host that has cpufreq; the
 * node_cpu_scaling_governor lines are in the shape newer node_exporters
 * (1.6+) print. */
static const char scrape[] =
    "# HELP node_cpu_info CPU information from /proc/cpuinfo.\n"
    "# TYPE node_cpu_info gauge\n"
    "node_cpu_info{cachesize=\"512 KB\",core=\"0\",cpu=\"0\",family=\"25\",microcode=\"0x1000065\",model=\"1\","
    "model_name=\"AMD EPYC 7713 64-Core Processor\",package=\"0\",stepping=\"1\",vendor=\"AuthenticAMD\"} 1\n"
    "node_cpu_info{cachesize=\"512 KB\",core=\"0\",cpu=\"1\",family=\"25\",microcode=\"0x1000065\",model=\"1\","
    "model_name=\"AMD EPYC 7713 64-Core Processor\",package=\"0\",stepping=\"1\",vendor=\"AuthenticAMD\"} 1\n"
    "# HELP node_cpu_scaling_frequency_hertz Current scaled CPU thread frequency in hertz.\n"
    "# TYPE node_cpu_scaling_frequency_hertz gauge\n"
    "node_cpu_scaling_frequency_hertz{cpu=\"0\"} 2.0e+09\n"
    "node_cpu_scaling_frequency_hertz{cpu=\"1\"} 3.0e+09\n"
    "node_cpu_frequency_hertz{cpu=\"0\"} 1.0e+09\n"
    "node_cpu_scaling_governor{cpu=\"0\",governor=\"performance\"} 0\n"
    "node_cpu_scaling_governor{cpu=\"0\",governor=\"schedutil\"} 1\n"
    "node_cpu_scaling_governor{cpu=\"1\",governor=\"performance\"} 0\n"
    "node_cpu_scaling_governor{cpu=\"1\",governor=\"schedutil\"} 1\n"
    "# TYPE node_cpu_seconds_total counter\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 9378.9\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"iowait\"} 26.73\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"irq\"} 0\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"nice\"} 2.87\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"softirq\"} 117.2\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"steal\"} 130.16\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"system\"} 959.02\n"
    "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 1566.24\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} 8912.17\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"iowait\"} 86.88\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"irq\"} 0\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"nice\"} 4.19\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"softirq\"} 164.29\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"steal\"} 136.31\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"system\"} 1157.31\n"
    "node_cpu_seconds_total{cpu=\"1\",mode=\"user\"} 1710.74\n"
    "node_cpu_guest_seconds_total{cpu=\"0\",mode=\"user\"} 0\n"
    "node_memory_MemTotal_bytes 2.5276510208e+10\n"
    "node_os_info{build_id=\"\",id=\"debian\",name=\"Debian GNU/Linux\",pretty_name=\"Debian GNU/Linux 12 "
    "(bookworm)\",version_id=\"12\"} 1\n"
    "node_uname_info{domainname=\"(none)\",machine=\"x86_64\",nodename=\"sut-7\",release=\"6.1.0-18-amd64\","
    "sysname=\"Linux\",version=\"#1 SMP PREEMPT_DYNAMIC\"} 1\n";

static void test_node_exporter_snap(void **state) {
    tb_telem_snap s;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_node_exporter_snap(scrape, strlen(scrape), &s, err), 0);
    assert_int_equal(s.have_cpu, 1);
    assert_int_equal(s.n_cpus, 2);
    assert_true(fabs(s.cpu_s[TB_CPU_USER] - (1566.24 + 1710.74)) < 1e-6);
    assert_true(fabs(s.cpu_s[TB_CPU_SYSTEM] - (959.02 + 1157.31)) < 1e-6);
    assert_true(fabs(s.cpu_s[TB_CPU_IDLE] - (9378.9 + 8912.17)) < 1e-6);
    assert_true(fabs(s.cpu_s[TB_CPU_STEAL] - (130.16 + 136.31)) < 1e-6);
    assert_int_equal(s.freq_src, TB_FREQ_NODE_EXPORTER);
    assert_true(fabs(s.freq_mhz - 2500.0) < EPS); /* scaling frequency preferred over cpuinfo_cur_freq */
    assert_int_equal(s.n_cstates, 0);             /* node_exporter 1.5 has no cpuidle collector */

    /* two scrapes one second apart: exact split */
    {
        const char *a = "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 10\n"
                        "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 10\n"
                        "node_cpu_seconds_total{cpu=\"1\",mode=\"user\"} 10\n"
                        "node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} 10\n";
        const char *b = "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 10.5\n"
                        "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 10.5\n"
                        "node_cpu_seconds_total{cpu=\"1\",mode=\"user\"} 11\n"
                        "node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} 10\n";
        tb_telem_snap sa, sb;
        tb_telem_sample x;
        assert_int_equal(tb_node_exporter_snap(a, strlen(a), &sa, err), 0);
        assert_int_equal(tb_node_exporter_snap(b, strlen(b), &sb, err), 0);
        sa.mono_us = 0;
        sb.mono_us = 1000000;
        tb_telem_compute(&sa, &sb, &x);
        assert_true(fabs(x.cpu_util_pct - 75.0) < EPS);
        assert_true(fabs(x.mode_pct[TB_CPU_USER] - 75.0) < EPS);
        assert_true(fabs(x.mode_pct[TB_CPU_IDLE] - 25.0) < EPS);
        assert_true(isnan(x.freq_mhz)); /* no cpufreq metrics in these scrapes */
        assert_int_equal(x.n_cstates, 0);
    }
    assert_int_equal(tb_node_exporter_snap("garbage here\n", 13, &s, err), -1);
    assert_non_null(strstr(err, "line 1"));
}

static void test_node_exporter_hostinfo(void **state) {
    tb_hostinfo h;
    char err[TB_ERR_LEN] = "";
    (void)state;
    tb_hostinfo_clear(&h, "http://sut-7:9100/metrics");
    assert_int_equal(tb_node_exporter_hostinfo(scrape, strlen(scrape), &h, err), 0);
    assert_string_equal(h.hostname, "sut-7");
    assert_string_equal(h.kernel, "Linux 6.1.0-18-amd64");
    assert_string_equal(h.arch, "x86_64");
    assert_string_equal(h.os, "Debian GNU/Linux 12 (bookworm)");
    assert_string_equal(h.cpu_model, "AMD EPYC 7713 64-Core Processor");
    assert_int_equal(h.cpus, 2);
    assert_int_equal(h.cores, 1); /* both threads on core 0 of package 0 */
    assert_int_equal(h.sockets, 1);
    assert_int_equal(h.memory_mib, 25276510208LL / 1048576);
    assert_string_equal(h.governor, "schedutil");
    /* not exported by node_exporter: not available */
    assert_string_equal(h.epp, "");
    assert_string_equal(h.turbo, "");
    assert_string_equal(h.tuned_profile, "");
    assert_string_equal(h.source, "http://sut-7:9100/metrics");

    /* without --collector.cpu.info: no model, no core count */
    tb_hostinfo_clear(&h, "x");
    {
        const char *t = "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1\n";
        assert_int_equal(tb_node_exporter_hostinfo(t, strlen(t), &h, err), 0);
    }
    assert_int_equal(h.cpus, 1);
    assert_int_equal(h.cores, -1);
    assert_string_equal(h.cpu_model, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_label_lookup_and_stop),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_node_exporter_snap),
        cmocka_unit_test(test_node_exporter_hostinfo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
