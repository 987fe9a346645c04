/*
 * archive.c: a bundle's files hashed (SHA-256, OpenSSL EVP) and packed into
 * one tar.gz (libarchive: pax format; gzip.c: deflated by a thread a core), and any file of
 * publish/ written through a temporary file beside its target, renamed at
 * the end (archive.h).
 */
#include "publish/archive.h"
#include "publish/gzip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "common/buf.h"

int tb_pub_hash(tb_pub_file *f, char *err) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;
    if (EVP_Digest(f->data, f->len, md, &n, EVP_sha256(), NULL) != 1 || n != 32) {
        tb_seterr(err, "SHA-256 of %s: OpenSSL's EVP_Digest failed", f->path);
        return -1;
    }
    for (i = 0; i < n; i++)
        snprintf(f->sha256 + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* A temporary file beside path, mode 0666 less the umask (mkstemp makes
 * it 0600). The fd, or -1 with err; *tmp is malloc'd (NULL on failure). */
static int open_temp(const char *path, char **tmp, char *err) {
    struct stat sb;
    size_t n = strlen(path) + 16;
    mode_t um;
    int fd;
    *tmp = NULL;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        tb_seterr(err, "write %s: %s", path, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
        return -1;
    }
    *tmp = xmalloc(n);
    snprintf(*tmp, n, "%s.tmp.XXXXXX", path);
    if ((fd = mkstemp(*tmp)) < 0) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0) tb_log(TB_LOG_WARN, "chmod %s: %s", *tmp, strerror(errno));
    return fd;
}

/* Ends a temporary file written with result rc: synced, closed and renamed
 * over path (rc 0), or removed (rc != 0, or a failure here). rc or -1. */
static int end_temp(int fd, char *tmp, const char *path, int rc, char *err) {
    if (rc == 0 && fsync(fd) != 0) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (close(fd) != 0 && rc == 0) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        tb_seterr(err, "write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) unlink(tmp);
    free(tmp);
    return rc;
}

/* libarchive's error, with the system's reason when it has one. */
static void archive_err(struct archive *a, const char *path, char *err) {
    const char *msg = archive_error_string(a);
    int e = archive_errno(a);
    if (e > 0)
        tb_seterr(err, "write %s: %s (%s)", path, strerror(e), msg ? msg : "libarchive");
    else
        tb_seterr(err, "write %s: %s", path, msg ? msg : "libarchive failed");
}

/* One regular file of the archive. ARCHIVE_OK or an error. */
static int put_entry(struct archive *a, const char *top, const tb_pub_file *f, int64_t mtime) {
    struct archive_entry *e = archive_entry_new();
    char name[160];
    size_t done = 0;
    int rc;
    snprintf(name, sizeof name, "%s/%s", top, f->path);
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)f->len);
    archive_entry_set_mtime(e, (time_t)mtime, 0);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_uname(e, "root");
    archive_entry_set_gname(e, "root");
    rc = archive_write_header(a, e);
    archive_entry_free(e);
    while (rc == ARCHIVE_OK && done < f->len) {
        la_ssize_t w = archive_write_data(a, f->data + done, f->len - done);
        if (w <= 0) return ARCHIVE_FATAL;
        done += (size_t)w;
    }
    return rc;
}

/* libarchive's output: the tar, in memory */
static la_ssize_t to_buf(struct archive *a, void *client, const void *data, size_t n) {
    tb_buf *b = client;
    if (tb_buf_add(b, data, n) != 0) {
        archive_set_error(a, ENOMEM, "the archive passed %zu MiB", b->max >> 20);
        return -1;
    }
    return (la_ssize_t)n;
}

/* The tar of the files, in memory. 0, or -1 with err. */
static int make_tar(tb_buf *tar, const char *path, const char *top, const tb_pub_file *files, size_t n, int64_t mtime,
                    char *err) {
    struct archive *a = archive_write_new();
    int rc = 0;
    if (!a) {
        tb_seterr(err, "write %s: libarchive: out of memory", path);
        return -1;
    }
    if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        archive_write_open(a, tar, NULL, to_buf, NULL) != ARCHIVE_OK) {
        archive_err(a, path, err);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (put_entry(a, top, &files[i], mtime) != ARCHIVE_OK) {
            archive_err(a, path, err);
            rc = -1;
        }
    }
    if (archive_write_close(a) != ARCHIVE_OK && rc == 0) {
        archive_err(a, path, err);
        rc = -1;
    }
    archive_write_free(a);
    return rc;
}

/* The bundle's gzip level: zlib's default (level 1 saves about 0.1 s of
 * CPU on a day-long run's 20 MiB of tar and makes the file 18% larger). */
#define GZIP_LEVEL 6

int tb_pub_write_tgz(const char *path, const char *top, const tb_pub_file *files, size_t n, int64_t mtime, char *err) {
    tb_buf tar;
    char *tmp, e[TB_ERR_LEN] = "";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int fd = open_temp(path, &tmp, err), rc;
    if (fd < 0) return -1;
    tb_buf_init(&tar, SIZE_MAX / 2);
    rc = make_tar(&tar, path, top, files, n, mtime, err);
    /* deflated by one thread a core, up to 4 */
    if (rc == 0 && tb_pub_gzip_write(fd, tar.ptr, tar.len, GZIP_LEVEL,
                                     cores < 1   ? 1
                                     : cores > 4 ? 4
                                                 : (int)cores,
                                     mtime, e) != 0) {
        tb_seterr(err, "write %s: %s", path, e);
        rc = -1;
    }
    tb_buf_free(&tar);
    return end_temp(fd, tmp, path, rc, err);
}

int tb_pub_write_file(const char *path, const void *data, size_t len, char *err) {
    char *tmp;
    const char *p = data;
    size_t done = 0;
    int fd = open_temp(path, &tmp, err), rc = 0;
    if (fd < 0) return -1;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            tb_seterr(err, "write %s: %s", path, w < 0 ? strerror(errno) : "no progress");
            rc = -1;
            break;
        }
        done += (size_t)w;
    }
    return end_temp(fd, tmp, path, rc, err);
}
