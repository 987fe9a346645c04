/*
 * util.c: small helpers the pieces of the embedded SUT share: bounded string
 * copies and path joins, mkdir -p, rm -rf, a loopback TCP connection, and
 * the check for a stop asked for while tile data loads.
 */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700 /* nftw */
#include "sut/sut_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

void sut_copy_str(char *dst, size_t len, const char *src) {
    size_t n = strlen(src);
    if (len == 0) return;
    if (n >= len) n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Joins a and b with '/'; -1 when the result does not fit. */
int sut_path_join(char *out, size_t len, const char *a, const char *b) {
    int n = snprintf(out, len, "%s/%s", a, b);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}
/* chmod'ed explicitly, so a restrictive umask cannot hide a folder from the postgres user. */
int sut_mkdir_p(const char *dir, char *err) {
    char buf[PATH_MAX];
    size_t i, len = strlen(dir);
    if (len == 0 || len >= sizeof buf) {
        tb_seterr(err, "--dir '%s': path is empty or too long", dir);
        return -1;
    }
    memcpy(buf, dir, len + 1);
    for (i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) == 0) {
            if (chmod(buf, 0755) != 0) {
                tb_seterr(err, "chmod %s: %s", buf, strerror(errno));
                return -1;
            }
        } else if (errno != EEXIST) {
            tb_seterr(err, "mkdir %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = saved;
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf path (no symlinks followed); "" is a no-op. 0 or -1 with errno. */
int sut_remove_tree(const char *path) {
    struct stat sb;
    if (!path[0] || lstat(path, &sb) != 0) return 0;
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int sut_loopback_connect(int port) {
    struct sockaddr_in sa;
    struct timeval tv = {1, 0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, sut_host(), &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int sut_interrupted(const tb_sut_options *opt, char *err) {
    if (!opt->stop || !*opt->stop) return 0;
    tb_seterr(err, "interrupted while loading tile data");
    return 1;
}
