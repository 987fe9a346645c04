/*
 * gzip.h: a buffer written as one gzip member (RFC 1952), deflated by
 * several threads at once: the bundle's tar is about 20 MiB for a day-long
 * run, and one thread of zlib was the last third of `publish`'s time.
 */
#ifndef TB_PUBLISH_GZIP_H
#define TB_PUBLISH_GZIP_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

/*
 * Writes data (len bytes) to fd as one gzip member at zlib's level (1-9),
 * header time mtime (unix seconds). The data is cut into up to `parts`
 * pieces of at least 1 MiB, each deflated by a thread of its own with the
 * 32 KiB before it as its dictionary (as pigz does), so the output is one
 * ordinary deflate stream that any gunzip reads, about as small as one
 * thread makes it. Returns 0, or -1 with err (zlib's reason, or write's).
 */
int tb_pub_gzip_write(int fd, const void *data, size_t len, int level, int parts, int64_t mtime, char *err) TB_WUR;

#endif
