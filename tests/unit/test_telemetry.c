/*
 * test_telemetry.c: the host telemetry sampler and host configuration on
 * fake /proc, /sys and /dev/cpu trees written here, with known counters:
 * two snapshots with known deltas must give exact percentages and MHz.
 * Also the absent sources (no cpufreq, no cpuidle, no msr: NaN / none, never
 * invented), the interval-weighted aggregate, and the sampler thread.
 */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "powermeter/hostinfo.h"
#include "powermeter/telemetry.h"

#define EPS 1e-9

static char root[64];

static void mkdirs(const char *rel) {
    char p[512], *s;
    assert_true(snprintf(p, sizeof p, "%s/%s", root, rel) < (int)sizeof p);
    for (s = p + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

static void put(const char *rel, const char *fmt, ...) {
    char p[512], dir[512], *slash;
    va_list ap;
    FILE *f;
    snprintf(dir, sizeof dir, "%s", rel);
    if ((slash = strrchr(dir, '/'))) {
        *slash = '\0';
        mkdirs(dir);
    }
    snprintf(p, sizeof p, "%s/%s", root, rel);
    f = fopen(p, "w");
    assert_non_null(f);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    assert_int_equal(fclose(f), 0);
}

/* A fake msr device file: 8-byte values at the MSR addresses. */
static void put_msr(int cpu, uint64_t tsc, uint64_t mperf, uint64_t aperf) {
    char rel[64], p[512];
    int fd;
    snprintf(rel, sizeof rel, "dev/cpu/%d", cpu);
    mkdirs(rel);
    snprintf(p, sizeof p, "%s/%s/msr", root, rel);
    fd = open(p, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &tsc, 8, 0x10), 8);
    assert_int_equal(pwrite(fd, &mperf, 8, 0xE7), 8);
    assert_int_equal(pwrite(fd, &aperf, 8, 0xE8), 8);
    close(fd);
}

/* proc/stat with the aggregate line in ticks: user nice system idle iowait irq softirq steal guest guest_nice */
static void put_stat(unsigned u, unsigned n, unsigned s, unsigned i, unsigned io, unsigned irq, unsigned si,
                     unsigned st) {
    put("proc/stat",
        "cpu  %u %u %u %u %u %u %u %u 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\n"
        "intr 12345 0 0\nctxt 999\nbtime 1700000000\n",
        u, n, s, i, io, irq, si, st);
}

static void put_idle(int cpu, int state, const char *name, unsigned long long us) {
    char rel[128];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/name", cpu, state);
    put(rel, "%s\n", name);
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpuidle/state%d/time", cpu, state);
    put(rel, "%llu\n", us);
}

static void put_freq(int cpu, unsigned khz) {
    char rel[128];
    snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
    put(rel, "%u\n", khz);
}

static int rm_tree(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static int setup(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/tb_test_telem_XXXXXX");
    if (!mkdtemp(root)) return -1;
    mkdirs("sys/devices/system/cpu/cpu0");
    mkdirs("sys/devices/system/cpu/cpu1");
    return 0;
}

static int teardown(void **state) {
    (void)state;
    return rm_tree() == 0 ? 0 : -1;
}

/* Reads a snapshot and pins its time, so the interval is exact. */
static void snap_at(tb_telem_snap *s, uint64_t mono_us) {
    char err[TB_ERR_LEN] = "";
    assert_int_equal(tb_telem_read_local(root, s, err), 0);
    s->mono_us = mono_us;
}

static void test_cpu_split_exact(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(1000, 50, 500, 8000, 100, 10, 20, 30);
    snap_at(&a, 1000000);
    /* deltas: user 300, nice 0, sys 100, idle 500, iowait 100 => 1000 ticks */
    put_stat(1300, 50, 600, 8500, 200, 10, 20, 30);
    snap_at(&b, 2000000);
    assert_int_equal(b.n_cpus, 2);
    tb_telem_compute(&a, &b, &x);
    assert_true(x.interval_us == 1000000);
    assert_true(fabs(x.mode_pct[TB_CPU_USER] - 30.0) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_NICE] - 0.0) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_SYSTEM] - 10.0) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_IDLE] - 50.0) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_IOWAIT] - 10.0) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_STEAL] - 0.0) < EPS);
    assert_true(fabs(x.cpu_util_pct - 40.0) < EPS); /* 100 - idle - iowait */
    /* no cpufreq, no cpuidle, no msr in this tree: not available */
    assert_true(isnan(x.freq_mhz));
    assert_int_equal(x.freq_src, TB_FREQ_NONE);
    assert_int_equal(x.n_cstates, 0);
}

static void test_iowait_backwards_is_zero(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    snap_at(&a, 0);
    put_stat(300, 0, 200, 1400, 90, 0, 0, 0); /* iowait went back by 10 ticks (proc(5)) */
    snap_at(&b, 1000000);
    tb_telem_compute(&a, &b, &x);
    assert_true(fabs(x.mode_pct[TB_CPU_IOWAIT]) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_USER] - 20.0) < EPS);
    assert_true(fabs(x.mode_pct[TB_CPU_IDLE] - 70.0) < EPS);
    assert_true(fabs(x.cpu_util_pct - 30.0) < EPS);
}

static void test_no_movement_is_na(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    snap_at(&a, 0);
    snap_at(&b, 1000000);
    tb_telem_compute(&a, &b, &x);
    assert_true(isnan(x.cpu_util_pct));
    for (int m = 0; m < TB_CPU_NMODES; m++)
        assert_true(isnan(x.mode_pct[m]));
}

static void test_cpufreq_mean(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    put_freq(0, 2000000);
    put_freq(1, 3000000);
    snap_at(&a, 0);
    put_freq(0, 1200000);
    put_freq(1, 1800000);
    snap_at(&b, 1000000);
    assert_int_equal(b.freq_src, TB_FREQ_CPUFREQ);
    tb_telem_compute(&a, &b, &x);
    assert_int_equal(x.freq_src, TB_FREQ_CPUFREQ);
    assert_true(fabs(x.freq_mhz - 1500.0) < EPS); /* the reading at the end of the interval */
    assert_string_equal(tb_telem_freq_source_name(x.freq_src), "cpufreq");
}

/* The msr device's file offset is the MSR number, so MPERF (0xE7) and APERF
 * (0xE8) overlap in a regular file: the reader is checked for picking the
 * source, and the arithmetic on snapshots with exact counters. */
static void test_aperf_mperf_preferred(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    put_freq(0, 800000);
    put_freq(1, 800000);
    put_msr(0, 1000, 5000, 7000);
    put_msr(1, 999, 5000, 9000);
    snap_at(&a, 0);
    assert_int_equal(a.freq_src, TB_FREQ_APERF_MPERF); /* readable msr wins over cpufreq */
    assert_true(a.tsc == 1000);
    assert_true(a.aperf == 16000); /* summed over CPUs */
    /* 1 s: TSC +2e9 (2000 MHz); MPERF +1e6 and APERF +1.5e6 over the CPUs => x1.5 */
    b = a;
    b.mono_us = 1000000;
    b.tsc = a.tsc + 2000000000ull;
    b.mperf = a.mperf + 1000000;
    b.aperf = a.aperf + 1500000;
    tb_telem_compute(&a, &b, &x);
    assert_int_equal(x.freq_src, TB_FREQ_APERF_MPERF);
    assert_true(fabs(x.freq_mhz - 3000.0) < 1e-6);
    assert_string_equal(tb_telem_freq_source_name(x.freq_src), "aperf/mperf");
    /* counters that did not move: not available, never the last value */
    b.mperf = a.mperf;
    tb_telem_compute(&a, &b, &x);
    assert_true(isnan(x.freq_mhz));
    assert_int_equal(x.freq_src, TB_FREQ_NONE);
}

static void test_msr_partial_falls_back(void **state) {
    tb_telem_snap a;
    char p[512];
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    put_freq(0, 2000000);
    put_freq(1, 2000000);
    put_msr(0, 1, 2, 3); /* cpu1's msr missing: all or nothing */
    snprintf(p, sizeof p, "%s/dev/cpu/1/msr", root);
    unlink(p);
    snap_at(&a, 0);
    assert_int_equal(a.freq_src, TB_FREQ_CPUFREQ);
    assert_true(fabs(a.freq_mhz - 2000.0) < EPS);
}

static void test_cstate_residency_exact(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    put_idle(0, 0, "POLL", 1000);
    put_idle(0, 1, "C1", 10000);
    put_idle(0, 2, "C6", 20000);
    put_idle(1, 0, "POLL", 1000);
    put_idle(1, 1, "C1", 30000);
    put_idle(1, 2, "C6", 40000);
    snap_at(&a, 5000000);
    /* over 1 s: cpu0 POLL +0, C1 +200 ms, C6 +500 ms; cpu1 POLL +100 ms, C1 +400 ms, C6 +300 ms */
    put_idle(0, 1, "C1", 210000);
    put_idle(0, 2, "C6", 520000);
    put_idle(1, 0, "POLL", 101000);
    put_idle(1, 1, "C1", 430000);
    put_idle(1, 2, "C6", 340000);
    snap_at(&b, 6000000);
    assert_int_equal(b.n_cstates, 3);
    assert_int_equal(b.cstate_cpus, 2);
    tb_telem_compute(&a, &b, &x);
    assert_int_equal(x.n_cstates, 4);
    assert_string_equal(x.cstate_name[0], "C0");
    assert_string_equal(x.cstate_name[1], "POLL");
    assert_string_equal(x.cstate_name[2], "C1");
    assert_string_equal(x.cstate_name[3], "C6");
    assert_true(fabs(x.cstate_pct[1] - 5.0) < EPS);  /* 100 ms / (2 CPUs x 1 s) */
    assert_true(fabs(x.cstate_pct[2] - 30.0) < EPS); /* 600 ms / 2 s */
    assert_true(fabs(x.cstate_pct[3] - 40.0) < EPS); /* 800 ms / 2 s */
    assert_true(fabs(x.cstate_pct[0] - 25.0) < EPS); /* busy: in no idle state */
}

static void test_cstate_counter_reset_is_na(void **state) {
    tb_telem_snap a, b;
    tb_telem_sample x;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    put_idle(0, 0, "C1", 500000);
    put_idle(1, 0, "C1", 500000);
    snap_at(&a, 0);
    put_idle(0, 0, "C1", 100); /* went backwards */
    snap_at(&b, 1000000);
    tb_telem_compute(&a, &b, &x);
    assert_int_equal(x.n_cstates, 0);
}

static void test_no_proc_stat_fails(void **state) {
    tb_telem_snap a;
    char err[TB_ERR_LEN] = "", p[512];
    (void)state;
    snprintf(p, sizeof p, "%s/proc/stat", root);
    unlink(p);
    assert_int_equal(tb_telem_read_local(root, &a, err), -1);
    assert_non_null(strstr(err, "proc/stat"));
}

static void test_aggregate_weighted(void **state) {
    tb_telem_sample s[3];
    tb_telemetry t;
    (void)state;
    memset(s, 0, sizeof s);
    for (int i = 0; i < 3; i++) {
        s[i].cpu_util_pct = s[i].freq_mhz = NAN;
        for (int m = 0; m < TB_CPU_NMODES; m++)
            s[i].mode_pct[m] = NAN;
    }
    s[0].interval_us = 1000000;
    s[0].cpu_util_pct = 10;
    s[0].mode_pct[TB_CPU_USER] = 10;
    s[0].freq_mhz = 1000;
    s[0].freq_src = TB_FREQ_CPUFREQ;
    s[0].n_cstates = 2;
    strcpy(s[0].cstate_name[0], "C0");
    strcpy(s[0].cstate_name[1], "C6");
    s[0].cstate_pct[0] = 10;
    s[0].cstate_pct[1] = 90;
    s[1].interval_us = 3000000; /* three times the weight */
    s[1].cpu_util_pct = 50;
    s[1].mode_pct[TB_CPU_USER] = 30;
    s[1].n_cstates = 2;
    strcpy(s[1].cstate_name[0], "C0");
    strcpy(s[1].cstate_name[1], "C6");
    s[1].cstate_pct[0] = 50;
    s[1].cstate_pct[1] = 50;
    s[2].interval_us = 1000000; /* nothing available: counts as a sample, adds nothing */
    tb_telem_aggregate(s, 3, &t);
    assert_int_equal(t.n_samples, 3);
    assert_true(fabs(t.cpu_util_pct - 40.0) < EPS);          /* (10 + 3 x 50) / 4 */
    assert_true(fabs(t.mode_pct[TB_CPU_USER] - 25.0) < EPS); /* (10 + 90) / 4 */
    assert_true(isnan(t.mode_pct[TB_CPU_SYSTEM]));
    assert_true(fabs(t.avg_freq_mhz - 1000.0) < EPS); /* only the sample that had it */
    assert_int_equal(t.freq_src, TB_FREQ_CPUFREQ);
    assert_int_equal(t.n_cstates, 2);
    assert_true(fabs(t.cstate_pct[0] - 40.0) < EPS);
    assert_true(fabs(t.cstate_pct[1] - 60.0) < EPS);
    tb_telem_aggregate(NULL, 0, &t);
    assert_true(isnan(t.cpu_util_pct) && isnan(t.avg_freq_mhz));
    assert_int_equal(t.n_cstates, 0);
}

static void test_sampler_thread(void **state) {
    tb_telem_source *src = NULL;
    tb_telem_sampler *smp = NULL;
    tb_telem_sample *w = NULL;
    char err[TB_ERR_LEN] = "";
    int n = 0, tries;
    (void)state;
    put_stat(100, 0, 100, 700, 100, 0, 0, 0);
    put_freq(0, 2400000);
    put_freq(1, 2400000);
    assert_int_equal(tb_telem_source_open_root(root, &src, err), 0);
    assert_string_equal(tb_telem_source_spec(src), "local");
    assert_int_equal(tb_telem_sampler_start(src, 20000, &smp, err), 0);
    for (tries = 0; tries < 500 && n < 3; tries++) {
        free(w);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
        n = tb_telem_sampler_window(smp, 0, UINT64_MAX, &w);
    }
    assert_int_equal((int)tb_telem_sampler_failures(smp), 0);
    tb_telem_sampler_stop(smp);
    assert_true(n >= 3);
    for (int i = 0; i < n; i++) {
        assert_true(w[i].interval_us > 0);
        assert_true(isnan(w[i].cpu_util_pct)); /* the fake counters never moved */
        assert_true(fabs(w[i].freq_mhz - 2400.0) < EPS);
        if (i > 0) assert_true(w[i].mono_us > w[i - 1].mono_us);
    }
    free(w);
    tb_telem_source_close(src);
}

static void test_source_specs(void **state) {
    tb_telem_source *src = NULL;
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_int_equal(tb_telem_source_open("http://127.0.0.1:9100/metrics", &src, err), 0);
    assert_string_equal(tb_telem_source_spec(src), "http://127.0.0.1:9100/metrics");
    tb_telem_source_close(src);
    assert_int_equal(tb_telem_source_open("ftp://x/metrics", &src, err), -1);
    assert_non_null(strstr(err, "ftp://x/metrics"));
    assert_int_equal(tb_telem_source_open("none", &src, err), -1);
    assert_int_equal(tb_telem_source_open("http://", &src, err), -1);
    tb_telem_source_close(NULL);
}

static void test_hostinfo_fake_tree(void **state) {
    tb_hostinfo h;
    json_t *j;
    (void)state;
    put("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ "
                        "2.00GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n");
    put("proc/meminfo", "MemTotal:       263852420 kB\nMemFree:         1000 kB\n");
    put("proc/sys/kernel/hostname", "sut-01\n");
    put("proc/sys/kernel/ostype", "Linux\n");
    put("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
    put("etc/os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
    put("sys/devices/system/cpu/online", "0-3\n");
    for (int c = 0; c < 4; c++) {
        char rel[128];
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        put(rel, "%d\n", c / 2 == 0 ? 0 : 1); /* cpus 0,1 on package 0; 2,3 on package 1 */
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/core_id", c);
        put(rel, "0\n"); /* core 0 twice per package: one core with two threads (SMT) */
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
        put(rel, "%s\n", "powersave");
    }
    put("sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "intel_pstate\n");
    put("sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "balance_performance\n");
    put("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
    put("sys/devices/system/cpu/intel_pstate/status", "active\n");
    put("sys/devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
    put("sys/devices/system/cpu/cpuidle/current_governor_ro", "menu\n");
    put("etc/tuned/active_profile", "throughput-performance\n");
    tb_hostinfo_read_local(root, &h);
    assert_string_equal(h.hostname, "sut-01");
    assert_string_equal(h.kernel, "Linux 6.1.0-18-amd64");
    assert_string_equal(h.os, "Debian GNU/Linux 12 (bookworm)");
    assert_string_equal(h.cpu_model, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
    assert_int_equal(h.memory_mib, 263852420 / 1024);
    assert_int_equal(h.cpus, 4);
    assert_int_equal(h.cores, 2); /* one core per package, two threads each */
    assert_int_equal(h.sockets, 2);
    assert_string_equal(h.scaling_driver, "intel_pstate");
    assert_string_equal(h.governor, "powersave");
    assert_string_equal(h.epp, "balance_performance");
    assert_string_equal(h.epb, ""); /* no cpu0/power/energy_perf_bias in the tree */
    assert_string_equal(h.turbo, "off (intel_pstate/no_turbo=1)");
    assert_string_equal(h.pstate_status, "intel_pstate active");
    assert_string_equal(h.cpuidle_driver, "intel_idle");
    assert_string_equal(h.cpuidle_governor, "menu");
    assert_string_equal(h.tuned_profile, "throughput-performance");
    j = tb_hostinfo_json(&h);
    assert_string_equal(json_string_value(json_object_get(j, "governor")), "powersave");
    assert_true(json_is_null(json_object_get(j, "energy_perf_bias")));
    assert_int_equal(json_integer_value(json_object_get(j, "cores")), 2);
    json_decref(j);

    /* one CPU on another governor, and boost from cpufreq when intel_pstate is absent */
    put("sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "performance\n");
    put("sys/devices/system/cpu/cpufreq/boost", "1\n");
    {
        char p[512];
        snprintf(p, sizeof p, "%s/sys/devices/system/cpu/intel_pstate/no_turbo", root);
        unlink(p);
        snprintf(p, sizeof p, "%s/sys/devices/system/cpu/intel_pstate/status", root);
        unlink(p);
    }
    put("sys/devices/system/cpu/amd_pstate/status", "passive\n");
    tb_hostinfo_read_local(root, &h);
    assert_string_equal(h.governor, "mixed: powersave, performance");
    assert_string_equal(h.turbo, "on (cpufreq/boost=1)");
    assert_string_equal(h.pstate_status, "amd_pstate passive");
}

static void test_hostinfo_empty_tree(void **state) {
    tb_hostinfo h;
    json_t *j;
    const char *key;
    json_t *v;
    int nulls = 0;
    (void)state;
    tb_hostinfo_read_local(root, &h); /* only empty cpu0, cpu1 dirs: a locked-down container */
    assert_string_equal(h.source, "local");
    assert_string_equal(h.hostname, "");
    assert_string_equal(h.cpu_model, "");
    assert_int_equal(h.cpus, -1);
    assert_int_equal(h.memory_mib, -1);
    assert_string_equal(h.governor, "");
    assert_string_equal(h.turbo, "");
    assert_string_equal(h.tuned_profile, "");
    j = tb_hostinfo_json(&h);
    json_object_foreach(j, key, v) {
        if (strcmp(key, "source") == 0 || strcmp(key, "arch") == 0) continue;
        assert_true(json_is_null(v));
        nulls++;
    }
    assert_true(nulls >= 15);
    json_decref(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cpu_split_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iowait_backwards_is_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_movement_is_na, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpufreq_mean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aperf_mperf_preferred, setup, teardown),
        cmocka_unit_test_setup_teardown(test_msr_partial_falls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cstate_residency_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cstate_counter_reset_is_na, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_proc_stat_fails, setup, teardown),
        cmocka_unit_test(test_aggregate_weighted),
        cmocka_unit_test_setup_teardown(test_sampler_thread, setup, teardown),
        cmocka_unit_test(test_source_specs),
        cmocka_unit_test_setup_teardown(test_hostinfo_fake_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostinfo_empty_tree, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
