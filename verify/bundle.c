/*
 * bundle.c: a result bundle's archive and manifest (docs/bundle.md). The
 * gzip stream is inflated here with zlib (exactly one member, nothing after
 * it), the tar read with libarchive (any tar flavour; nothing but zero blocks
 * after its end), every regular file into memory; hashes are OpenSSL's EVP
 * SHA-256.
 */
#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/buf.h"
#include "common/tb_common.h"
#include "verify/verify_int.h"

/* Largest file of a bundle read into memory (power samples of a long run
 * are tens of MB), and the most entries. */
#define MAX_FILE  ((size_t)1 << 30)
#define MAX_FILES 4096

int tb_vsha256_hex(const void *data, size_t len, char *hex) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(c, data, len) == 1 &&
             EVP_DigestFinal_ex(c, md, &n) == 1 && n == 32;
    EVP_MD_CTX_free(c);
    if (!ok) return -1;
    for (unsigned int i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

static void add_str(char ***v, size_t *n, size_t *cap, const char *s) {
    *v = tb_grow(*v, *n, cap, sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
}

/* The part of path after "folder/", or NULL when path is not inside it or
 * escapes it (absolute, a ".." or "." component, an empty component). */
static const char *inside(const char *path, const char *folder) {
    size_t fl = strlen(folder);
    const char *rel, *p;
    if (strncmp(path, folder, fl) != 0 || path[fl] != '/') return NULL;
    rel = path + fl + 1;
    if (!*rel) return NULL;
    for (p = rel; *p;) {
        size_t k = strcspn(p, "/");
        if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.')) return NULL;
        p += k;
        if (*p == '/') p++;
    }
    return rel;
}

/* The folder an entry path names first ("tilebench-run-X/a" -> "tilebench-run-X"). */
static char *top_folder(const char *path) {
    size_t k = strcspn(path, "/");
    char *f = xmalloc(k + 1);
    memcpy(f, path, k);
    f[k] = '\0';
    return f;
}

static int read_data(struct archive *a, const char *path, tb_vfile *f, char *err) {
    size_t cap = 0;
    f->data = NULL;
    f->len = 0;
    for (;;) {
        const void *buf;
        size_t n;
        la_int64_t off;
        int rc = archive_read_data_block(a, &buf, &n, &off);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
            tb_seterr(err, "%s: %s", path, archive_error_string(a) ? archive_error_string(a) : "read error");
            free(f->data);
            return -1;
        }
        if (off < 0 || (size_t)off + n > MAX_FILE) {
            tb_seterr(err, "%s: larger than %zu MiB", path, MAX_FILE >> 20);
            free(f->data);
            return -1;
        }
        if ((size_t)off + n > cap) {
            size_t grown = (size_t)off + n > 2 * cap ? (size_t)off + n : 2 * cap;
            if (tb_vmem_take(grown - cap) != 0) {
                tb_seterr(err,
                          "%s: the bundle's files need more than %zu MiB in memory (check's limit, "
                          "TILEBENCH_CHECK_MAX_MIB)",
                          path, tb_vmem_max() >> 20);
                free(f->data);
                return -1;
            }
            cap = grown;
            f->data = xrealloc(f->data, cap + 1);
        }
        if ((size_t)off > f->len) memset(f->data + f->len, 0, (size_t)off - f->len); /* a sparse hole */
        memcpy(f->data + off, buf, n);
        if ((size_t)off + n > f->len) f->len = (size_t)off + n;
    }
    if (!f->data) f->data = xmalloc(1);
    f->data[f->len] = '\0'; /* text files can be read as strings */
    return 0;
}

/* Notes an entry that is no file of the bundle, saying why. */
static void stray(tb_vbundle *b, const char *path, struct archive_entry *e) {
    char line[600];
    const char *what = archive_entry_hardlink(e)               ? "is a hard link"
                       : archive_entry_filetype(e) == AE_IFLNK ? "is a symbolic link"
                       : archive_entry_filetype(e) == AE_IFREG ? NULL
                       : archive_entry_filetype(e) == AE_IFDIR ? NULL
                                                               : "is a device, FIFO or socket";
    if (!path[0]) path = "(an entry without a name)";
    if (what)
        snprintf(line, sizeof line, "'%.400s' %s: a bundle holds regular files only", path, what);
    else
        snprintf(line, sizeof line, "'%.400s' lies outside %s/", path, b->folder ? b->folder : "the bundle's folder");
    add_str(&b->stray, &b->n_stray, &b->cap_stray, line);
}

/* One entry: a regular file inside the folder is kept; anything else is
 * stray. Returns 0, or -1 with err when its data does not read. */
static int take_entry(struct archive *a, struct archive_entry *e, tb_vbundle *b, char *err) {
    const char *path = archive_entry_pathname(e), *rel;
    tb_vfile f;
    if (!path) path = "";
    while (path[0] == '.' && path[1] == '/')
        path += 2; /* "./tilebench-run-X/..." */
    if (!b->folder && path[0] && path[0] != '/') b->folder = top_folder(path);
    if (archive_entry_filetype(e) == AE_IFDIR) {
        /* the folder itself, or a folder inside it: nothing to hash */
        if (b->folder && (strcmp(path, b->folder) == 0 ||
                          (strlen(path) > strlen(b->folder) && strncmp(path, b->folder, strlen(b->folder)) == 0 &&
                           path[strlen(b->folder)] == '/')))
            return 0;
        stray(b, path, e);
        return 0;
    }
    rel = b->folder ? inside(path, b->folder) : NULL;
    if (!rel || archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e)) {
        stray(b, path, e);
        return 0;
    }
    if (tb_vbundle_find(b, rel)) {
        add_str(&b->dups, &b->n_dups, &b->cap_dups, rel);
        return 0;
    }
    if (read_data(a, path, &f, err) != 0) return -1;
    f.path = xstrdup(rel);
    b->files = tb_grow(b->files, b->n, &b->cap, sizeof *b->files);
    b->files[b->n++] = f;
    return 0;
}

/* The gzip stream inflated here, handed to libarchive a piece at a time
 * (so the tar is never held whole): exactly one member, ending at the end
 * of the file, since a second member or trailing bytes could hide a file
 * that `tar -xzi` extracts. The last two pieces are kept, to see what
 * follows the tar's end-of-archive marker. */
#define GZ_PIECE ((size_t)1 << 16)
typedef struct gz_src {
    const char *name;
    z_stream z;
    const unsigned char *data;
    size_t len;
    unsigned char piece[2][GZ_PIECE];
    size_t piece_len[2], delivered; /* bytes of tar handed out so far */
    int cur, ended, failed;
    char err[TB_ERR_LEN];
} gz_src;

/* The next piece of tar into g->piece[g->cur]: its length, 0 at the end, -1
 * with g->err. */
static ssize_t gz_next(gz_src *g) {
    size_t got = 0;
    g->cur ^= 1;
    g->piece_len[g->cur] = 0;
    while (!g->ended && !g->failed && got == 0) {
        size_t in_left = g->len - (size_t)(g->z.next_in - g->data);
        int zr;
        g->z.avail_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        g->z.next_out = g->piece[g->cur];
        g->z.avail_out = (uInt)GZ_PIECE;
        zr = inflate(&g->z, Z_NO_FLUSH);
        got = GZ_PIECE - g->z.avail_out;
        if (zr == Z_STREAM_END) {
            g->ended = 1;
            if ((size_t)(g->z.next_in - g->data) != g->len) {
                tb_seterr(g->err,
                          "%s: %zu bytes after the gzip stream's end (a bundle is one gzip member and nothing else)",
                          g->name, g->len - (size_t)(g->z.next_in - g->data));
                g->failed = 1;
            }
        } else if (zr != Z_OK && !(zr == Z_BUF_ERROR && got > 0)) {
            tb_seterr(g->err, "%s: not a readable gzip stream (%s)", g->name,
                      zr == Z_BUF_ERROR ? "it ends before its end"
                      : g->z.msg        ? g->z.msg
                                        : "inflate error");
            g->failed = 1;
        }
    }
    if (g->failed) return -1;
    g->piece_len[g->cur] = got;
    g->delivered += got;
    return (ssize_t)got;
}

static la_ssize_t gz_read(struct archive *a, void *user, const void **buf) {
    gz_src *g = user;
    ssize_t n = gz_next(g);
    *buf = g->piece[g->cur];
    if (n < 0) archive_set_error(a, -1, "%s", g->err);
    return n;
}

/* After the tar's end-of-archive marker (consumed bytes of tar) only zero
 * blocks may follow, to the gzip stream's end: -1 with err when a byte is
 * not. */
static int zeros_after_end(gz_src *g, size_t consumed, char *err) {
    size_t kept = g->piece_len[0] + g->piece_len[1], start = g->delivered - g->piece_len[g->cur];
    if (consumed + kept < g->delivered) consumed = g->delivered - kept; /* never: the reader looks 1 KiB ahead */
    for (int k = 0; k < 2; k++) {
        int i = k == 0 ? g->cur ^ 1 : g->cur;
        size_t at = k == 0 ? start - g->piece_len[i] : start;
        for (size_t j = 0; j < g->piece_len[i]; j++)
            if (at + j >= consumed && g->piece[i][j]) goto bad;
    }
    for (;;) {
        ssize_t n = gz_next(g);
        if (n < 0) {
            tb_seterr(err, "%s", g->err);
            return -1;
        }
        if (n == 0) return 0;
        for (ssize_t j = 0; j < n; j++)
            if (g->piece[g->cur][j]) goto bad;
    }
bad:
    tb_seterr(err, "%s: data after the tar's end-of-archive marker (only zero blocks may follow)", g->name);
    return -1;
}

int tb_vbundle_read(const char *name, const void *data, size_t len, tb_vbundle *b, char *err) {
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    char why[TB_ERR_LEN];
    int rc = -1, entries = 0;
    gz_src *g = xcalloc(1, sizeof *g);
    memset(b, 0, sizeof *b);
    /* docs/bundle.md: a bundle is gzip-compressed (RFC 1952's magic 1f 8b);
     * libarchive would read a bare tar too, which no publish writes */
    if (len < 2 || ((const unsigned char *)data)[0] != 0x1f || ((const unsigned char *)data)[1] != 0x8b) {
        tb_seterr(err, "%s: not a gzip-compressed tar (no gzip header; a bundle is a .tar.gz, docs/bundle.md)", name);
        goto done;
    }
    g->name = name;
    g->data = data;
    g->len = len;
    g->z.next_in = (unsigned char *)data;
    if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
        tb_seterr(err, "%s: zlib does not start", name);
        goto done;
    }
    archive_read_support_format_tar(a);
    if (archive_read_open(a, g, NULL, gz_read, NULL) != ARCHIVE_OK) {
        if (g->failed) {
            tb_seterr(err, "%s", g->err);
            goto done;
        }
        tb_seterr(err, "%s: not a gzip-compressed tar (%s)", name,
                  archive_error_string(a) ? archive_error_string(a) : "unknown format");
        goto done;
    }
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN && g->failed) {
            tb_seterr(err, "%s", g->err);
            goto done;
        }
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
            tb_seterr(err, "%s: not a readable gzip-compressed tar (%s)", name,
                      archive_error_string(a) ? archive_error_string(a) : "bad header");
            goto done;
        }
        if (++entries > MAX_FILES) {
            tb_seterr(err, "%s: more than %d entries", name, MAX_FILES);
            goto done;
        }
        if (take_entry(a, e, b, why) != 0) {
            tb_seterr(err, "%s: %s", name, g->failed ? g->err : why);
            goto done;
        }
    }
    if (entries == 0) {
        tb_seterr(err, "%s: an empty archive (expected the folder tilebench-run-UUID/ with manifest.json)", name);
        goto done;
    }
    if (zeros_after_end(g, (size_t)archive_filter_bytes(a, 0), err) != 0) goto done;
    rc = 0;
done:
    archive_read_free(a);
    inflateEnd(&g->z);
    free(g);
    return rc;
}

const tb_vfile *tb_vbundle_find(const tb_vbundle *b, const char *path) {
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->files[i].path, path) == 0) return &b->files[i];
    return NULL;
}

void tb_vbundle_free(tb_vbundle *b) {
    for (size_t i = 0; i < b->n; i++) {
        free(b->files[i].path);
        free(b->files[i].data);
    }
    for (size_t i = 0; i < b->n_stray; i++)
        free(b->stray[i]);
    for (size_t i = 0; i < b->n_dups; i++)
        free(b->dups[i]);
    free(b->files);
    free(b->stray);
    free(b->dups);
    free(b->folder);
    memset(b, 0, sizeof *b);
}

/* A manifest path that stays inside the folder. */
static int path_ok(const char *p) {
    char buf[16] = "f";
    size_t need = strlen(p) + 3;
    char *joined = xmalloc(need);
    int ok;
    snprintf(joined, need, "%s/%s", buf, p);
    ok = p[0] && inside(joined, buf) != NULL;
    free(joined);
    return ok;
}

/* Checks each listed file's hash and size; lists into seen which files of
 * the bundle the manifest names. */
static void check_listed(const tb_vbundle *b, const json_t *files, tb_vresult *r, char *seen, size_t *n_ok,
                         size_t *set_bad) {
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *path = json_string_value(json_object_get(f, "path"));
        const char *want = json_string_value(json_object_get(f, "sha256"));
        json_t *bytes = json_object_get(f, "bytes");
        const tb_vfile *have;
        char hex[65];
        size_t j;
        if (!path || !want) {
            tb_vresult_add(r, 0, "manifest files", "each entry has path and sha256", "entry %zu has no %s", i + 1,
                           path ? "sha256" : "path");
            (*set_bad)++;
            continue;
        }
        if (!path_ok(path)) {
            tb_vresult_add(r, 0, "manifest files", "paths inside the bundle's folder", "'%s' escapes the folder", path);
            (*set_bad)++;
            continue;
        }
        for (j = 0; j < i; j++)
            if (json_string_value(json_object_get(json_array_get(files, j), "path")) &&
                strcmp(json_string_value(json_object_get(json_array_get(files, j), "path")), path) == 0)
                break;
        if (j < i) {
            tb_vresult_add(r, 0, "manifest files", "each file listed once", "%s is listed twice", path);
            (*set_bad)++;
            continue;
        }
        if (!(have = tb_vbundle_find(b, path))) {
            tb_vresult_add(r, 0, "manifest files", "every listed file present", "%s is listed but missing", path);
            (*set_bad)++;
            continue;
        }
        seen[have - b->files] = 1;
        if (tb_vsha256_hex(have->data, have->len, hex) != 0) {
            tb_vresult_add(r, 0, "hash", "SHA-256", "%s: SHA-256 failed (OpenSSL)", path);
            continue;
        }
        if (strcmp(hex, want) != 0) {
            char name[300];
            snprintf(name, sizeof name, "hash %s", path);
            tb_vresult_add(r, 0, name, "the manifest's SHA-256", "sha256 %s, manifest says %.64s", hex, want);
            continue;
        }
        if (json_is_integer(bytes) && (size_t)json_integer_value(bytes) != have->len) {
            char name[300];
            snprintf(name, sizeof name, "hash %s", path);
            tb_vresult_add(r, 0, name, "the manifest's bytes", "%zu bytes, manifest says %lld", have->len,
                           (long long)json_integer_value(bytes));
            continue;
        }
        (*n_ok)++;
    }
}

void tb_vcheck_manifest(const tb_vbundle *b, const json_t *manifest, tb_vresult *r) {
    const json_t *files = json_object_get(manifest, "files");
    char *seen = xcalloc(b->n + 1, 1);
    size_t n_ok = 0, set_bad = 0, before, listed = json_array_size(files);
    check_listed(b, files, r, seen, &n_ok, &set_bad);
    before = r->failed;
    for (size_t i = 0; i < b->n; i++)
        if (!seen[i] && strcmp(b->files[i].path, "manifest.json") != 0)
            tb_vresult_add(r, 0, "manifest files", "every file listed", "%s is in the bundle but not listed",
                           b->files[i].path);
    for (size_t i = 0; i < b->n_stray; i++)
        tb_vresult_add(r, 0, "manifest files", "only regular files inside the bundle's folder", "%s", b->stray[i]);
    for (size_t i = 0; i < b->n_dups; i++)
        tb_vresult_add(r, 0, "manifest files", "each file once", "the archive holds %s twice", b->dups[i]);
    if (r->failed == before && set_bad == 0)
        tb_vresult_add(r, 1, "manifest files", "every file but manifest.json listed once, none missing or outside",
                       "%zu files listed, %zu in the bundle", listed, b->n - 1);
    if (n_ok == listed)
        tb_vresult_add(r, 1, "hashes", "SHA-256 and size as the manifest says", "%zu of %zu match", n_ok, listed);
    free(seen);
}
