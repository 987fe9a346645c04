/*
 * listeners.c: the processes that listen on given TCP ports (listeners.h).
 */
#include "powermeter/listeners.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/tb_common.h"

#define TCP_LISTEN 0x0A /* st of a listening socket in /proc/net/tcp */

typedef struct inode_set {
    unsigned long *v;
    size_t n, cap;
} inode_set;

static int wanted_port(const int *ports, int n, unsigned port) {
    for (int i = 0; i < n; i++)
        if (ports[i] > 0 && ports[i] <= 65535 && (unsigned)ports[i] == port) return 1;
    return 0;
}

/* The inodes of the listening sockets on the wanted ports in one
 * /proc/net/tcp-style table. Returns 0, or -1 when the file is missing. */
static int table_inodes(const char *path, const int *ports, int n, inode_set *set) {
    FILE *f = fopen(path, "r");
    char line[512];
    if (!f) return -1;
    if (!fgets(line, sizeof line, f)) { /* the header */
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        char local[80], remote[80];
        unsigned st, port;
        unsigned long inode;
        const char *colon;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %79s %79s %x %*s %*s %*s %*s %*s %lu", local, remote, &st, &inode) != 4) continue;
        if (st != TCP_LISTEN || inode == 0 || !(colon = strrchr(local, ':'))) continue;
        if (sscanf(colon + 1, "%x", &port) != 1 || !wanted_port(ports, n, port)) continue;
        set->v = tb_grow(set->v, set->n, &set->cap, sizeof *set->v);
        set->v[set->n++] = inode;
    }
    fclose(f);
    return 0;
}

static int has_inode(const inode_set *set, unsigned long inode) {
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i] == inode) return 1;
    return 0;
}

/* Whether process pid holds one of set's socket inodes among its fds. */
static int holds_socket(long pid, const inode_set *set) {
    char path[64], target[64];
    struct dirent *e;
    DIR *d;
    int found = 0;
    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    if (!(d = opendir(path))) return 0; /* gone, or another user's */
    while (!found && (e = readdir(d))) {
        char link[320];
        unsigned long inode;
        ssize_t len;
        if (e->d_name[0] == '.') continue;
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        len = readlink(link, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = '\0';
        if (sscanf(target, "socket:[%lu]", &inode) == 1 && has_inode(set, inode)) found = 1;
    }
    closedir(d);
    return found;
}

static int cmp_pid(const void *a, const void *b) {
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

int tb_listener_pids(const int *ports, int n_ports, pid_t *pids, int max, char *err) {
    inode_set set = {0};
    struct dirent *e;
    DIR *proc;
    int n = 0;
    int v4 = table_inodes("/proc/net/tcp", ports, n_ports, &set);
    int v6 = table_inodes("/proc/net/tcp6", ports, n_ports, &set);
    if (v4 != 0 && v6 != 0) {
        tb_seterr(err, "listening sockets: cannot read /proc/net/tcp: %s", strerror(errno));
        return -1;
    }
    if (set.n == 0) return 0;
    if (!(proc = opendir("/proc"))) {
        tb_seterr(err, "listening sockets: cannot read /proc: %s", strerror(errno));
        free(set.v);
        return -1;
    }
    while (n < max && (e = readdir(proc))) {
        char *end;
        long pid;
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        if (holds_socket(pid, &set)) pids[n++] = (pid_t)pid;
    }
    closedir(proc);
    free(set.v);
    qsort(pids, (size_t)n, sizeof *pids, cmp_pid);
    return n;
}
