/*
 * util.c: helpers the kinds of infrastructure operations share
 * (infra_internal.h).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infra/infra_internal.h"

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP || flag == FTW_D) return rmdir(path) != 0 && errno != ENOENT ? -1 : 0;
    return unlink(path) != 0 && errno != ENOENT ? -1 : 0;
}

int infra_remove_tree(const char *path) {
    struct stat sb;
    if (!path || !*path) return 0;
    if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode)) return unlink(path);
    /* a folder of 0700 made by another account (postgres): root reads it anyway */
    return nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) != 0 ? -1 : 0;
}

static uint64_t tree_total;
static int add_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F && S_ISREG(sb->st_mode)) tree_total += (uint64_t)sb->st_size;
    return 0;
}

uint64_t infra_tree_bytes(const char *path) {
    /* nftw has no user argument: one walk at a time */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    uint64_t n;
    pthread_mutex_lock(&mu);
    tree_total = 0;
    (void)nftw(path, add_one, 32, FTW_PHYS);
    n = tree_total;
    pthread_mutex_unlock(&mu);
    return n;
}

uint64_t infra_left_us(uint64_t start_us, uint64_t budget_us) {
    uint64_t now = tb_now_us();
    return now - start_us >= budget_us ? 0 : budget_us - (now - start_us);
}
