/*
 * test_proctree.c: unit tests of powermeter/proctree.c. The stat line
 * parser on command names with spaces and ')'; a fake /proc (TB_PROC_ROOT)
 * with a process that exited mid-scan; and a real tree of busy processes
 * whose CPU time, read from /proc before they exit, must match what wait4
 * reports once they have.
 */
#define _DEFAULT_SOURCE /* mkdtemp, wait4 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "powermeter/proctree.h"

/* A stat line as Linux writes it, with comm and ppid and ticks in fields 14..17. */
static void stat_line(char *buf, size_t len, int pid, const char *comm, int ppid, int ut, int st, int cut, int cst) {
    snprintf(buf, len,
             "%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 %d %d %d %d 20 0 1 0 12345 1000000 100 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
             pid, comm, ppid, pid, pid, ut, st, cut, cst);
}

static void test_parse(void **state) {
    char line[512];
    pid_t pid, ppid;
    uint64_t ticks;
    (void)state;
    stat_line(line, sizeof line, 42, "postgres", 7, 10, 5, 3, 2);
    assert_int_equal(tb_proctree_parse_stat(line, &pid, &ppid, &ticks), 0);
    assert_int_equal(pid, 42);
    assert_int_equal(ppid, 7);
    assert_int_equal(ticks, 20);
    /* The name ends at the last ')': spaces, ')' and '(' inside it. */
    stat_line(line, sizeof line, 43, "a) b (c) 9 9", 8, 1, 2, 0, 0);
    assert_int_equal(tb_proctree_parse_stat(line, &pid, &ppid, &ticks), 0);
    assert_int_equal(pid, 43);
    assert_int_equal(ppid, 8);
    assert_int_equal(ticks, 3);
    assert_int_equal(tb_proctree_parse_stat("", &pid, &ppid, &ticks), -1);
    assert_int_equal(tb_proctree_parse_stat("12 (x S 1 2", &pid, &ppid, &ticks), -1);
    assert_int_equal(tb_proctree_parse_stat("12 (x) S 1 2 3", &pid, &ppid, &ticks), -1); /* cut short */
    assert_int_equal(tb_proctree_parse_stat("x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14", &pid, &ppid, &ticks), -1);
}

static void put_stat(const char *root, int pid, const char *comm, int ppid, int ticks) {
    char dir[512], path[600], line[512];
    FILE *f;
    snprintf(dir, sizeof dir, "%s/%d", root, pid);
    assert_int_equal(mkdir(dir, 0755), 0);
    if (!comm) return; /* a folder without a stat file: the process exited mid-scan */
    snprintf(path, sizeof path, "%s/stat", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    stat_line(line, sizeof line, pid, comm, ppid, ticks, 0, 0, 0);
    fputs(line, f);
    fclose(f);
}

/* A fake /proc: 10 <- 11 <- 13, 10 <- 12 (exited mid-scan, its child 14 still listed), 20 apart. */
static void test_fake_proc(void **state) {
    char root[] = "/tmp/tb-proctree.XXXXXX", cmd[600];
    double s;
    long hz = sysconf(_SC_CLK_TCK);
    pid_t r1[] = {10}, r2[] = {10, 11}, r3[] = {999}, r4[] = {20, 13};
    char err[TB_ERR_LEN] = "";
    (void)state;
    assert_non_null(mkdtemp(root));
    put_stat(root, 10, "sut", 1, 100);
    put_stat(root, 11, "child) (x", 10, 20);
    put_stat(root, 12, NULL, 10, 0);
    put_stat(root, 13, "grand child", 11, 3);
    put_stat(root, 14, "orphan", 12, 50);
    put_stat(root, 20, "other", 1, 7);
    setenv("TB_PROC_ROOT", root, 1);
    assert_int_equal(tb_proctree_cpu(r1, 1, &s, err), 3);
    assert_true(fabs(s - 123.0 / (double)hz) < 1e-12);
    assert_int_equal(tb_proctree_cpu(r2, 2, &s, err), 3); /* overlapping roots: each once */
    assert_true(fabs(s - 123.0 / (double)hz) < 1e-12);
    assert_int_equal(tb_proctree_cpu(r3, 1, &s, err), 0);
    assert_true(s == 0);
    assert_int_equal(tb_proctree_cpu(r4, 2, &s, err), 2);
    assert_true(fabs(s - 10.0 / (double)hz) < 1e-12);
    setenv("TB_PROC_ROOT", "/nonexistent-proc", 1);
    assert_int_equal(tb_proctree_cpu(r1, 1, &s, err), -1);
    assert_non_null(strstr(err, "/nonexistent-proc"));
    unsetenv("TB_PROC_ROOT");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* Burns CPU until this process has used cpu_s of it (at most 5 s of wall time). */
static void burn(double cpu_s) {
    struct timeval t0, t;
    volatile double x = 1;
    gettimeofday(&t0, NULL);
    for (;;) {
        struct rusage ru;
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
        getrusage(RUSAGE_SELF, &ru);
        gettimeofday(&t, NULL);
        if ((double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6 >=
                cpu_s ||
            (double)(t.tv_sec - t0.tv_sec) + (t.tv_usec - t0.tv_usec) / 1e6 > 5)
            break;
    }
}

/*
 * The tree's root (named "a) b (c", so its stat line has spaces and ')' in
 * it): burns 0.2 s, forks a child that burns 0.2 s and exits (reaped: its
 * time moves to the root's cutime), forks one that burns 0.2 s, says ready
 * and stays until go closes, burns 0.2 s more, waits for go to close, reaps
 * the second child and exits: 0.8 s of CPU in all.
 */
static void tree_root(int ready_w, int go_r) {
    char c;
    pid_t a, b;
    prctl(PR_SET_NAME, "a) b (c", 0, 0, 0);
    burn(0.2);
    if ((a = fork()) == 0) {
        burn(0.2);
        _exit(0);
    }
    waitpid(a, NULL, 0);
    if ((b = fork()) == 0) {
        burn(0.2);
        if (write(ready_w, "b", 1) != 1) _exit(1);
        while (read(go_r, &c, 1) < 0 && errno == EINTR) {
        }
        _exit(0);
    }
    burn(0.4);                                        /* its own 0.2 s so far plus 0.2 s more */
    while (read(go_r, &c, 1) < 0 && errno == EINTR) { /* until go closes */
    }
    (void)c;
    waitpid(b, NULL, 0);
    _exit(0);
}

static void test_real_tree(void **state) {
    int ready[2], go[2], status;
    pid_t root, roots[1];
    char c, err[TB_ERR_LEN] = "";
    double s, truth;
    struct rusage ru;
    long hz = sysconf(_SC_CLK_TCK);
    int n;
    (void)state;
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    root = fork();
    assert_true(root >= 0);
    if (root == 0) {
        close(ready[0]);
        close(go[1]);
        tree_root(ready[1], go[0]);
    }
    close(ready[1]);
    close(go[0]);
    /* The second child says ready once it burned its share; then wait for
     * the root to finish its own burn (it blocks on go: its CPU stops). */
    assert_int_equal(read(ready[0], &c, 1), 1);
    roots[0] = root;
    for (int i = 0; i < 100; i++) { /* bounded: 100 x 50 ms */
        double before;
        n = tb_proctree_cpu(roots, 1, &before, err);
        usleep(50000);
        n = tb_proctree_cpu(roots, 1, &s, err);
        if (n == 2 && s >= 0.75 && s - before < 0.005) break;
    }
    assert_int_equal(n, 2); /* the root and its living child */
    close(go[1]);           /* both exit: the child reads EOF, the root reaps it */
    assert_int_equal(wait4(root, &status, 0, &ru), root);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    truth = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    /* /proc truncates each of the 6 nonzero fields (root: utime, stime,
     * cutime, cstime; child: utime, stime) to whole ticks: under 6 ticks
     * low. After the read, the child's exit and the root's reaping and exit
     * cost some CPU more: 20 ms is ample for that. */
    print_message("proctree %.3f s, wait4 %.3f s (tick %.0f ms)\n", s, truth, 1000.0 / (double)hz);
    assert_true(truth >= 0.8 - 0.01);
    assert_true(s <= truth + 1e-9);
    assert_true(truth - s <= 6.0 / (double)hz + 0.02);
    n = tb_proctree_cpu(roots, 1, &s, err); /* reaped: gone */
    assert_int_equal(n, 0);
    close(ready[0]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_fake_proc),
        cmocka_unit_test(test_real_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
