/*
 * metrics.h: live metrics in Prometheus's text exposition format 0.0.4.
 *
 * A registry holds families (a name, a help text, a type: gauge or counter)
 * and, in each, series told apart by their labels. Updates and the render
 * take one mutex, so any thread may update while the HTTP server's thread
 * renders; the render writes the whole text under it (its copy of the
 * registry), so a scrape never sees an update half made.
 *
 * The format, as the Prometheus documentation states it ("Exposition
 * formats", prometheus.io/docs/instrumenting/exposition_formats/): one
 * "# HELP name text" and one "# TYPE name type" line per family, then its
 * samples "name{label="value",...} value", each line ending in "\n". In a
 * label value a backslash, a double quote and a line feed are written \\, \"
 * and \n; in a help text a backslash and a line feed. Values are Go-style
 * floats: NaN, +Inf, -Inf, or a decimal number. Metric names match
 * [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and do not
 * begin with "__" (reserved for Prometheus itself).
 */
#ifndef TB_METRICS_METRICS_H
#define TB_METRICS_METRICS_H

#include <stddef.h>

#include "common/buf.h"
#include "common/tb_common.h"

/* The content type of the rendered text (for the HTTP reply). */
#define TB_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef enum tb_metric_type { TB_METRIC_GAUGE, TB_METRIC_COUNTER } tb_metric_type;

typedef struct tb_metrics tb_metrics;

tb_metrics *tb_metrics_new(void);
void tb_metrics_free(tb_metrics *m); /* NULL is a no-op */

/*
 * Declares a family. 0, or -1 with err: a name the format does not allow,
 * or a name declared before (one family per name).
 */
int tb_metrics_declare(tb_metrics *m, const char *name, tb_metric_type type, const char *help, char *err);

/*
 * The updates. labels is NULL (no labels) or a NULL-terminated list of
 * name, value pairs: (const char *[]){"meter", "0", "uri", u, NULL}. The
 * same label names in the same order name the same series; a new list
 * makes a new series. Each returns 0, or -1 (nothing changed) for a family
 * not declared, a label name the format does not allow, or:
 *  - tb_metrics_set on a counter with a value below its current one (a
 *    counter never goes down) or not finite;
 *  - tb_metrics_add with a negative or non-finite delta on a counter.
 * A label value that is not valid UTF-8 has each bad byte replaced by '?'.
 */
int tb_metrics_set(tb_metrics *m, const char *name, const char *const *labels, double v);
int tb_metrics_add(tb_metrics *m, const char *name, const char *const *labels, double delta);
/* Removes every series of family name (a gauge whose label set changed,
 * such as an info gauge). */
void tb_metrics_clear(tb_metrics *m, const char *name);
/* The series' value: 0, or -1 when there is no such series. */
int tb_metrics_get(tb_metrics *m, const char *name, const char *const *labels, double *v);

/* The whole registry as exposition text: families in the order declared,
 * series in the order made, families without a series left out. Caller
 * frees; *len (may be NULL) gets its length. */
char *tb_metrics_render(tb_metrics *m, size_t *len);

/* The pieces of the format, for tests and for other writers. */
int tb_metrics_name_ok(const char *name);
int tb_metrics_label_name_ok(const char *name);
/* Appends v escaped as a label value (without the quotes) to out. */
void tb_metrics_escape_label(const char *v, tb_buf *out);
/* A sample value as the format writes it: NaN, +Inf, -Inf, or the
 * shortest of %.15g and %.17g that reads back as v. len >= 32. */
void tb_metrics_format_value(double v, char *buf, size_t len);

/* ---- the HTTP server (server.c) ------------------------------------------ */

typedef struct tb_metrics_server tb_metrics_server;

/*
 * Serves m at listen (ADDR:PORT) on libmicrohttpd's own thread: GET (and
 * HEAD) /metrics is the rendered text; any other path 404, any other method
 * 405. The address is bound here, so a bad or busy one is an error now:
 * -1 with err ("listen 127.0.0.1:9464: Address already in use"). m must
 * outlive the server.
 */
int tb_metrics_serve(tb_metrics *m, const char *listen, tb_metrics_server **out, char *err) TB_WUR;
/* The address bound, "127.0.0.1:9464" or "[::1]:9464" (the real port for 0). */
void tb_metrics_server_address(const tb_metrics_server *s, char *buf, size_t len);
int tb_metrics_server_port(const tb_metrics_server *s);
/* Stops the thread and closes the socket. NULL is a no-op. */
void tb_metrics_server_stop(tb_metrics_server *s);

#endif
