/*
 * archive.h: publish/'s own: the files of a bundle in memory, their SHA-256
 * (OpenSSL's EVP), and the tar.gz that holds them (libarchive), written
 * whole or not at all.
 */
#ifndef TB_PUBLISH_ARCHIVE_H
#define TB_PUBLISH_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

typedef struct tb_pub_file {
    char path[64]; /* relative to the bundle's folder: "report.json", "data/runs.csv" */
    char *data;    /* malloc'd, len bytes */
    size_t len;
    char sha256[65]; /* lower-case hex, filled by tb_pub_hash */
} tb_pub_file;

/* Fills f->sha256 from its bytes. 0, or -1 with err. */
int tb_pub_hash(tb_pub_file *f, char *err) TB_WUR;

/*
 * Writes a gzip-compressed tar (POSIX pax, ustar where it fits) to path: one
 * regular file "top/PATH" per file, in the order given, mode 0644, owner
 * root, modified at mtime (unix seconds). The archive is written to a
 * temporary file beside path (mkstemp), synced and renamed over path at
 * the end, so a failure (a full disk, an unwritable folder) leaves neither
 * half an archive nor the temporary file, and an older file at path as it
 * was. Returns 0, or -1 with err naming path.
 */
int tb_pub_write_tgz(const char *path, const char *top, const tb_pub_file *files, size_t n, int64_t mtime,
                     char *err) TB_WUR;

/*
 * Writes len bytes to path the same way (a temporary file beside it,
 * renamed at the end): the static site's pages. 0, or -1 with err naming path.
 */
int tb_pub_write_file(const char *path, const void *data, size_t len, char *err) TB_WUR;

#endif
