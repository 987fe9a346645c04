/*
 * output.c: what the subcommands that write a file (report, compare) share:
 * picking a format by the file's extension, and writing the file whole or
 * not at all, with its write errors reported.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/tb_common.h"

int tb_cli_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

int tb_cli_close_checked(FILE *f, const char *path, int rc, char *err) {
    if (rc != 0 && ferror(f)) { /* the writer's own "write report: ..." */
        char e[TB_ERR_LEN];
        snprintf(e, sizeof e, "%s", err);
        tb_seterr(err, "write %s: %s", path, e);
    } else if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
        tb_seterr(err, "write %s: %s", path, errno ? strerror(errno) : "output error");
        rc = -1;
    }
    if (fclose(f) != 0 && rc == 0) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

int tb_cli_write_file(const char *path, tb_cli_writer write, void *ctx, char *err) {
    size_t n = strlen(path) + 32;
    char *tmp;
    FILE *f;
    int rc;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or a FIFO (/dev/stdout, /dev/full): written in place, never
         * replaced by a renamed file */
        if (!(f = fopen(path, "w"))) {
            tb_seterr(err, "write %s: %s", path, strerror(errno));
            return -1;
        }
        return tb_cli_close_checked(f, path, write(ctx, f, err), err);
    }
    tmp = xmalloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    if (!(f = fopen(tmp, "w"))) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    rc = tb_cli_close_checked(f, path, write(ctx, f, err), err);
    if (rc == 0 && rename(tmp, path) != 0) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) unlink(tmp);
    free(tmp);
    return rc;
}

void tb_cli_getopt_reset(void) {
#ifdef __GLIBC__
    optind = 0;
#else
    optind = 1;
#endif
    opterr = 0;
}

int tb_cli_usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "tilebench %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see tilebench %s --help)\n", cmd);
    return TB_EXIT_USAGE;
}
