/*
 * test_common_pieces.c: unit tests of the shared pieces in common/: the
 * error buffer (tb_seterr marks a cut message), the
 * bounded growable buffer (buf.c), HTML escaping (html.c) and running a child
 * (spawn.c) against real /bin/sh children: output kept up to its cap,
 * exit status and signals told apart, a deadline that kills a child that
 * ignores SIGTERM, a stop flag, a process group stopped as a whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/html.h"
#include "common/spawn.h"

static void test_buf_grows_and_caps(void **state) {
    tb_buf b;
    char big[100];
    (void)state;
    tb_buf_init(&b, 10);
    assert_string_equal(tb_buf_str(&b), "");
    assert_int_equal(tb_buf_adds(&b, "abcd"), 0);
    assert_int_equal(tb_buf_addf(&b, "%d%s", 12, "ef"), 0);
    assert_string_equal(tb_buf_str(&b), "abcd12ef");
    assert_int_equal(b.len, 8);
    /* 3 more would make 11 > 10: refused as a whole, the text kept */
    assert_int_equal(tb_buf_adds(&b, "xyz"), -1);
    assert_int_equal(b.overflow, 1);
    assert_string_equal(tb_buf_str(&b), "abcd12ef");
    assert_int_equal(tb_buf_adds(&b, "gh"), 0); /* exactly 10 fits */
    assert_string_equal(tb_buf_str(&b), "abcd12efgh");
    tb_buf_free(&b);

    /* the unchecked appends: a refusal sets overflow, which stays set */
    tb_buf_init(&b, 6);
    tb_buf_put(&b, "abc");
    tb_buf_putf(&b, "%d", 1234); /* 7 > 6: refused */
    assert_int_equal(b.overflow, 1);
    tb_buf_putn(&b, "de", 2); /* fits, overflow still set */
    assert_string_equal(tb_buf_str(&b), "abcde");
    assert_int_equal(b.overflow, 1);
    tb_buf_reset(&b);
    assert_int_equal(b.overflow, 0);
    tb_buf_free(&b);

    tb_buf_init(&b, 0); /* default cap: grows by doubling well past one chunk */
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tb_buf_add(&b, big, sizeof big), 0);
    assert_int_equal(b.len, 100000);
    assert_true(b.cap >= 100001 && b.cap <= 2 * 100001);
    {
        size_t n;
        char *p = tb_buf_take(&b, &n);
        assert_int_equal(n, 100000);
        assert_int_equal(p[99999], 'x');
        assert_int_equal(p[100000], '\0');
        free(p);
    }
    assert_null(b.ptr);
    tb_buf_free(&b);
}

/* tb_seterr: a message that fits is whole; a longer one is cut to
 * TB_ERR_LEN - 1 bytes ending in "...", not silently. */
static void test_seterr_marks_a_cut(void **state) {
    char err[TB_ERR_LEN], want[TB_ERR_LEN];
    (void)state;
    tb_seterr(err, "meter %s: %d", "x", 7);
    assert_string_equal(err, "meter x: 7");
    memset(want, 'a', sizeof want);
    want[TB_ERR_LEN - 1] = '\0';
    tb_seterr(err, "%s", want); /* TB_ERR_LEN - 1 bytes: fits */
    assert_string_equal(err, want);
    tb_seterr(err, "%sb", want);
    assert_int_equal(strlen(err), TB_ERR_LEN - 1);
    assert_string_equal(err + TB_ERR_LEN - 4, "...");
    assert_memory_equal(err, want, TB_ERR_LEN - 4);
}

/* tb_grow: room for index n, doubling from 8, new elements zeroed. */
static void test_grow(void **state) {
    int *a = NULL;
    size_t cap = 0;
    (void)state;
    a = tb_grow(a, 0, &cap, sizeof *a);
    assert_int_equal(cap, 8);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(a[i], 0);
    a[7] = 7;
    assert_ptr_equal(tb_grow(a, 7, &cap, sizeof *a), a); /* fits: unchanged */
    a = tb_grow(a, 8, &cap, sizeof *a);
    assert_int_equal(cap, 16);
    assert_int_equal(a[7], 7);
    assert_int_equal(a[8], 0);
    assert_int_equal(a[15], 0);
    a = tb_grow(a, 100, &cap, sizeof *a); /* a jump: doubled until it fits */
    assert_int_equal(cap, 128);
    assert_int_equal(a[100], 0);
    assert_int_equal(a[7], 7);
    free(a);
}

static void test_html_escape(void **state) {
    tb_buf b;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    (void)state;
    tb_buf_init(&b, 0);
    assert_int_equal(tb_html_escape_buf(&b, "<a href=\"x\">&'\x01\tz</a>"), 0);
    assert_string_equal(tb_buf_str(&b), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\xef\xbf\xbd\tz&lt;/a&gt;");
    assert_int_equal(tb_html_escape_buf(&b, NULL), 0);
    tb_html_escape_file(f, "plain \x7f & <b>\n");
    tb_html_escape_file(f, NULL);
    fclose(f);
    assert_string_equal(text, "plain \xef\xbf\xbd &amp; &lt;b&gt;\n");
    free(text);
    tb_buf_free(&b);
    tb_buf_init(&b, 4); /* "&amp;" is 5 bytes: past the cap */
    assert_int_equal(tb_html_escape_buf(&b, "&"), -1);
    tb_buf_free(&b);
}

static tb_spawn_result sh(const char *cmd, size_t max, uint64_t timeout_us) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN];
    memset(&o, 0, sizeof o);
    o.shell = cmd;
    o.output_max = max;
    o.timeout_us = timeout_us;
    o.new_group = 1;
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    return r;
}

static void test_spawn_status_and_output(void **state) {
    tb_spawn_result r;
    char d[64];
    (void)state;
    r = sh("echo out; echo err >&2; exit 3", 0, 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_status, 3);
    assert_string_equal(r.output, "out\nerr\n");
    tb_spawn_describe(&r, NULL, d, sizeof d);
    assert_string_equal(d, "exit status 3");
    tb_spawn_result_free(&r);

    r = sh("kill -USR1 $$", 0, 0);
    assert_false(r.exited);
    assert_int_equal(r.signal, SIGUSR1);
    tb_spawn_result_free(&r);

    /* 100,000 bytes written, 1,000 kept, the writer never blocked */
    r = sh("head -c 100000 /dev/zero | tr '\\0' y; exit 0", 1000, 20000000);
    assert_true(r.exited);
    assert_int_equal(r.exit_status, 0);
    assert_int_equal(r.output_len, 1000);
    assert_true(r.output_cut);
    assert_false(r.timed_out);
    tb_spawn_result_free(&r);
}

static void test_spawn_exec_failure(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN];
    const char *argv[] = {"nope", NULL};
    (void)state;
    memset(&o, 0, sizeof o);
    o.path = "/nonexistent/tilebench-nope";
    o.argv = argv;
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_status, 127);
    assert_non_null(strstr(r.output, "cannot execute /nonexistent/tilebench-nope"));
    tb_spawn_result_free(&r);
    /* the working folder: given, and one that cannot be entered */
    memset(&o, 0, sizeof o);
    o.shell = "pwd";
    o.dir = "/usr";
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_string_equal(r.output, "/usr\n");
    tb_spawn_result_free(&r);
    o.dir = "/nonexistent-dir";
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_int_equal(r.exit_status, 126);
    assert_non_null(strstr(r.output, "cannot enter the folder /nonexistent-dir"));
    tb_spawn_result_free(&r);
}

/* A child that ignores SIGTERM, with a grandchild in its group: the deadline
 * ends both (SIGKILL after the grace), in about timeout + grace. */
static void test_spawn_deadline_kills_group(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN], d[64];
    uint64_t t0;
    (void)state;
    memset(&o, 0, sizeof o);
    o.shell = "trap '' TERM; sleep 30 & echo started; wait; echo never";
    o.timeout_us = 300000;
    o.grace_us = 300000;
    o.new_group = 1;
    t0 = tb_now_us();
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(tb_now_us() - t0 < 5000000);
    assert_true(tb_now_us() - t0 >= 550000);
    assert_true(r.timed_out);
    assert_false(r.exited);
    assert_int_equal(r.signal, SIGKILL);
    assert_string_equal(r.output, "started\n");
    tb_spawn_describe(&r, &o, d, sizeof d);
    assert_string_equal(d, "timed out after 300ms");
    tb_spawn_result_free(&r);
}

static volatile sig_atomic_t stop_flag;
static void set_stop_on_output(void *arg, const char *chunk, size_t n) {
    (void)arg;
    if (memchr(chunk, '!', n)) stop_flag = 1;
}

static void test_spawn_stop_flag(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN];
    (void)state;
    memset(&o, 0, sizeof o);
    stop_flag = 0;
    o.shell = "echo go!; exec sleep 30";
    o.stop = &stop_flag;
    o.on_output = set_stop_on_output;
    o.new_group = 1;
    o.timeout_us = 20000000;
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(r.stopped);
    assert_false(r.timed_out);
    assert_int_equal(r.signal, SIGTERM);
    tb_spawn_result_free(&r);
}

/* A consumer slower than the child's writing: the pipe never runs dry, and
 * the deadline must still be looked at (a campaign's `yes` once ignored
 * Ctrl-C for ever). */
static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void slow_consumer(void *arg, const char *chunk, size_t n) {
    (void)arg;
    (void)chunk;
    (void)n;
    sleep_us(2000);
}

static void test_spawn_deadline_with_endless_output(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN];
    uint64_t t0;
    (void)state;
    memset(&o, 0, sizeof o);
    o.shell = "exec yes";
    o.timeout_us = 300000;
    o.grace_us = 1;
    o.new_group = 1;
    o.output_max = 1000;
    o.on_output = slow_consumer;
    t0 = tb_now_us();
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(tb_now_us() - t0 < 5000000);
    assert_true(r.timed_out);
    assert_true(r.output_cut);
    tb_spawn_result_free(&r);
}

/* 1 when process pid is gone or a zombie (killed, not yet reaped by init). */
static int gone(long pid) {
    char path[64], buf[256];
    FILE *f;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r"))) return 1;
    buf[0] = '\0';
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
    return strstr(buf, ") Z ") != NULL;
}

/* The child dies of SIGTERM at the deadline, its background grandchild
 * ignores SIGTERM: the group still gets SIGKILL, nothing is left behind. */
static void test_spawn_stopped_group_leaves_nothing(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN];
    long pid = 0;
    int waited = 0;
    (void)state;
    memset(&o, 0, sizeof o);
    o.shell = "(trap '' TERM; exec sleep 30) & echo $!; wait";
    o.timeout_us = 500000;
    o.new_group = 1;
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(r.timed_out);
    assert_int_equal(sscanf(r.output, "%ld", &pid), 1);
    assert_true(pid > 1);
    while (!gone(pid) && waited++ < 100)
        sleep_us(20000);
    assert_true(gone(pid));
    tb_spawn_result_free(&r);
}

/* reap_group: a background job the child left in its group ends when the
 * child exits; without it, the job would outlive the spawn. */
static void test_spawn_reap_group(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN];
    long pid = 0;
    int waited = 0;
    (void)state;
    memset(&o, 0, sizeof o);
    o.shell = "sleep 30 >/dev/null 2>&1 & echo $!";
    o.timeout_us = 5000000;
    o.new_group = 1;
    o.reap_group = 1;
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_status, 0);
    assert_int_equal(sscanf(r.output, "%ld", &pid), 1);
    assert_true(pid > 1);
    while (!gone(pid) && waited++ < 100)
        sleep_us(20000);
    assert_true(gone(pid));
    tb_spawn_result_free(&r);
}

/* A spawned program gets no descriptor of the parent's past stderr, even one
 * without FD_CLOEXEC (a load generator's socket, the results database). */
static void test_spawn_inherits_no_descriptor(void **state) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char err[TB_ERR_LEN], want[32];
    int p[2];
    (void)state;
    assert_int_equal(pipe(p), 0); /* no O_CLOEXEC */
    /* well above what the listing shell opens itself (its glob's directory takes the lowest free fd) */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dup2(p[i], 40 + i), 40 + i);
        close(p[i]);
        p[i] = 40 + i;
    }
    memset(&o, 0, sizeof o);
    o.shell = "for f in /proc/$$/fd/*; do echo \"fd ${f##*/}\"; done";
    o.timeout_us = 5000000;
    assert_int_equal(tb_spawn_run(&o, &r, err), 0);
    assert_true(r.exited);
    assert_non_null(strstr(r.output, "fd 2\n"));
    for (int i = 0; i < 2; i++) {
        snprintf(want, sizeof want, "fd %d\n", p[i]);
        if (strstr(r.output, want)) fail_msg("the child holds the parent's fd %d: %s", p[i], r.output);
    }
    tb_spawn_result_free(&r);
    close(p[0]);
    close(p[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spawn_reap_group),
        cmocka_unit_test(test_spawn_inherits_no_descriptor),
        cmocka_unit_test(test_buf_grows_and_caps),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_seterr_marks_a_cut),
        cmocka_unit_test(test_html_escape),
        cmocka_unit_test(test_spawn_status_and_output),
        cmocka_unit_test(test_spawn_exec_failure),
        cmocka_unit_test(test_spawn_deadline_kills_group),
        cmocka_unit_test(test_spawn_stop_flag),
        cmocka_unit_test(test_spawn_deadline_with_endless_output),
        cmocka_unit_test(test_spawn_stopped_group_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
