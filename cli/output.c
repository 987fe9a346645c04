/*
 * output.c: what the subcommands that write a file (report, compare) share:
 * picking a format by the file's extension and closing the file with its
 * write errors reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
