/*
 * proctree.c: the CPU time of process trees from /proc (proctree.h).
 *
 * One scan of /proc reads every process's stat line (pid, ppid, CPU ticks)
 * into a table sorted by pid; the roots are marked, then every process whose
 * parent is marked, pass after pass, until a pass marks none (one pass per
 * generation below the roots).
 */
#define _DEFAULT_SOURCE /* DT_DIR */
#include "powermeter/proctree.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct proc_row {
    pid_t pid, ppid;
    uint64_t ticks;
    int in_tree;
} proc_row;

int tb_proctree_parse_stat(const char *line, pid_t *pid, pid_t *ppid, uint64_t *ticks) {
    const char *rp = strrchr(line, ')'), *p;
    char *end;
    unsigned long long v[4] = {0};
    long long id, parent = -1;
    errno = 0;
    id = strtoll(line, &end, 10);
    if (!rp || end == line || *end != ' ' || end[1] != '(' || id <= 0 || errno) return -1;
    /* After the name: state (3), ppid (4), ... utime (14), stime (15), cutime (16), cstime (17). */
    p = rp + 1;
    while (*p == ' ')
        p++;
    if (!*p || isspace((unsigned char)*p)) return -1;
    p++; /* the state letter */
    for (int field = 4; field <= 17; field++) {
        long long x;
        while (*p == ' ')
            p++;
        errno = 0;
        x = strtoll(p, &end, 10);
        if (end == p || errno || (*end != ' ' && *end != '\n' && *end != '\0')) return -1;
        p = end;
        if (field == 4) parent = x;
        if (field >= 14) {
            if (x < 0) return -1; /* cutime and cstime are signed in the kernel; never below 0 */
            v[field - 14] = (unsigned long long)x;
        }
    }
    if (parent < 0) return -1;
    *pid = (pid_t)id;
    *ppid = (pid_t)parent;
    *ticks = v[0] + v[1] + v[2] + v[3];
    return 0;
}

/* Reads root/NAME/stat into *row. 0, or -1 when the process is gone or its line is unreadable. */
static int read_stat(const char *root, const char *name, proc_row *row) {
    char path[512], line[1024];
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "%s/%s/stat", root, name);
    f = fopen(path, "r");
    if (!f) return -1; /* exited since readdir: skipped */
    n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    memset(row, 0, sizeof *row);
    return n > 0 ? tb_proctree_parse_stat(line, &row->pid, &row->ppid, &row->ticks) : -1;
}

static int by_pid(const void *a, const void *b) {
    pid_t x = ((const proc_row *)a)->pid, y = ((const proc_row *)b)->pid;
    return x < y ? -1 : x > y;
}

static proc_row *find(proc_row *rows, size_t n, pid_t pid) {
    proc_row key = {.pid = pid};
    return bsearch(&key, rows, n, sizeof *rows, by_pid);
}

/* Every process of /proc into *out (sorted by pid); their number, or -1 with err. */
static long scan(const char *root, proc_row **out, char *err) {
    DIR *d = opendir(root);
    struct dirent *de;
    proc_row *rows = NULL;
    size_t n = 0, cap = 0;
    if (!d) {
        tb_seterr(err, "%s: %s", root, strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        const char *s = de->d_name;
        if (!isdigit((unsigned char)s[0]) || strspn(s, "0123456789") != strlen(s)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            rows = xrealloc(rows, cap * sizeof *rows);
        }
        if (read_stat(root, s, &rows[n]) == 0) n++;
    }
    closedir(d);
    if (n) qsort(rows, n, sizeof *rows, by_pid);
    *out = rows;
    return (long)n;
}

int tb_proctree_cpu(const pid_t *roots, int n, double *cpu_s, char *err) {
    const char *env = getenv("TB_PROC_ROOT");
    const char *root = env && *env ? env : "/proc";
    long hz = sysconf(_SC_CLK_TCK);
    proc_row *rows = NULL;
    long nr = scan(root, &rows, err);
    uint64_t ticks = 0;
    int counted = 0, changed = 1;
    *cpu_s = 0;
    if (nr < 0) return -1;
    if (hz <= 0) hz = 100;
    for (int i = 0; i < n; i++) {
        proc_row *r = find(rows, (size_t)nr, roots[i]);
        if (r) r->in_tree = 1;
    }
    while (changed) { /* one pass per generation */
        changed = 0;
        for (long i = 0; i < nr; i++) {
            proc_row *parent;
            if (rows[i].in_tree || rows[i].ppid <= 0) continue;
            parent = find(rows, (size_t)nr, rows[i].ppid);
            if (parent && parent->in_tree) rows[i].in_tree = changed = 1;
        }
    }
    for (long i = 0; i < nr; i++)
        if (rows[i].in_tree) {
            ticks += rows[i].ticks;
            counted++;
        }
    free(rows);
    *cpu_s = (double)ticks / (double)hz;
    return counted;
}
