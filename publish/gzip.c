/*
 * gzip.c: one gzip member from several deflating threads (gzip.h).
 *
 * Each piece but the last ends in a sync flush (an empty stored block), so
 * it ends on a byte boundary and is not the final block; the next piece
 * starts with the previous 32 KiB as its dictionary, so its matches may
 * reach back as they would in one stream. The CRC-32s of the pieces are
 * combined (zlib's crc32_combine) for the trailer.
 */
#include "publish/gzip.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#define MAX_PARTS 16
#define MIN_PART  ((size_t)1 << 20)
#define WINDOW    ((size_t)32 << 10)
#define MAX_CALL  ((size_t)1 << 30)

typedef struct piece {
    const unsigned char *in, *data; /* this piece; the whole buffer (for the dictionary) */
    size_t len;
    int level, last;
    unsigned char *out;
    size_t out_len;
    uLong crc;
    int rc; /* a zlib code: Z_OK when done */
} piece;

static void *deflate_piece(void *arg) {
    piece *p = arg;
    z_stream z;
    size_t cap;
    memset(&z, 0, sizeof z);
    p->crc = crc32_z(0, p->in, p->len);
    if ((p->rc = deflateInit2(&z, p->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) != Z_OK) return NULL;
    if (p->in > p->data) {
        size_t back = (size_t)(p->in - p->data) < WINDOW ? (size_t)(p->in - p->data) : WINDOW;
        p->rc = deflateSetDictionary(&z, p->in - back, (uInt)back);
    }
    cap = deflateBound(&z, (uLong)p->len) + 64; /* and the sync flush's 5 bytes */
    p->out = xmalloc(cap);
    z.next_in = (unsigned char *)p->in;
    z.next_out = p->out;
    while (p->rc == Z_OK) { /* zlib takes at most 4 GiB a call */
        size_t left = p->len - (size_t)(z.next_in - p->in);
        int final = left <= MAX_CALL;
        z.avail_in = final ? (uInt)left : (uInt)MAX_CALL;
        z.avail_out =
            (uInt)(cap - (size_t)(z.next_out - p->out) > MAX_CALL ? MAX_CALL : cap - (size_t)(z.next_out - p->out));
        p->rc = deflate(&z, !final ? Z_NO_FLUSH : p->last ? Z_FINISH : Z_SYNC_FLUSH);
        if (final) { /* done: the stream ended, or the flush is out whole */
            int done = p->last ? p->rc == Z_STREAM_END : p->rc == Z_OK && z.avail_in == 0 && z.avail_out > 0;
            p->rc = done ? Z_OK : p->rc == Z_OK || p->rc == Z_STREAM_END ? Z_BUF_ERROR : p->rc;
            break;
        }
    }
    p->out_len = (size_t)(z.next_out - p->out);
    deflateEnd(&z);
    return NULL;
}

static int write_all(int fd, const void *buf, size_t len, char *err) {
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            tb_seterr(err, "%s", w < 0 ? strerror(errno) : "no progress");
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void put_le32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

/* The pieces' output, between the header and the trailer. */
static int write_member(int fd, const piece *ps, int n, size_t len, int64_t mtime, char *err) {
    unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, tail[8]; /* deflate, no flags, Unix */
    uLong crc = ps[0].crc;
    put_le32(head + 4, mtime > 0 && mtime <= UINT32_MAX ? (uint32_t)mtime : 0);
    for (int i = 1; i < n; i++)
        crc = crc32_combine(crc, ps[i].crc, (z_off_t)ps[i].len);
    put_le32(tail, (uint32_t)crc);
    put_le32(tail + 4, (uint32_t)len); /* ISIZE: the length modulo 2^32 */
    if (write_all(fd, head, sizeof head, err) != 0) return -1;
    for (int i = 0; i < n; i++)
        if (write_all(fd, ps[i].out, ps[i].out_len, err) != 0) return -1;
    return write_all(fd, tail, sizeof tail, err);
}

int tb_pub_gzip_write(int fd, const void *data, size_t len, int level, int parts, int64_t mtime, char *err) {
    piece ps[MAX_PARTS];
    pthread_t th[MAX_PARTS];
    int started[MAX_PARTS] = {0}, n, rc = 0;
    size_t each;
    if (parts < 1) parts = 1;
    if (parts > MAX_PARTS) parts = MAX_PARTS;
    n = len / MIN_PART < (size_t)parts ? (int)(len / MIN_PART) : parts;
    if (n < 1) n = 1;
    each = len / (size_t)n;
    for (int i = 0; i < n; i++) {
        ps[i] = (piece){.in = (const unsigned char *)data + each * (size_t)i, .data = data, .level = level};
        ps[i].len = i == n - 1 ? len - each * (size_t)i : each;
        ps[i].last = i == n - 1;
    }
    for (int i = 1; i < n; i++) /* the first piece runs on this thread */
        started[i] = pthread_create(&th[i], NULL, deflate_piece, &ps[i]) == 0;
    deflate_piece(&ps[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            deflate_piece(&ps[i]);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        if (ps[i].rc != Z_OK) {
            tb_seterr(err, "gzip: zlib: %s", ps[i].rc == Z_MEM_ERROR ? "out of memory" : "deflate failed");
            rc = -1;
        }
    }
    if (rc == 0) rc = write_member(fd, ps, n, len, mtime, err);
    for (int i = 0; i < n; i++)
        free(ps[i].out);
    return rc;
}
