/*
 * server.c: the registry over HTTP on libmicrohttpd, on one thread of its
 * own (MHD's internal polling thread, epoll or poll as MHD picks: a run
 * holds many sockets, so select's 1024 descriptors would not do). GET or
 * HEAD /metrics answers the rendered text; HEAD is allowed because HTTP
 * requires a server that answers GET to answer HEAD (RFC 9110, 9.1). The
 * socket is bound here, before MHD starts, so that a bad or busy address is
 * the caller's error with the system's reason. The one thread serves every
 * connection without blocking on any (MHD's event loop), so a silent client
 * delays nobody while the connection table has room.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/listen.h"
#include "metrics/metrics.h"

/* A client that connects and sends nothing (or sends slowly) holds one of
 * these connections until the timeout, and only a full table makes a scrape
 * wait: the table is wide and the timeout short, so a few silent sockets
 * never delay a scrape (a scrape takes milliseconds; Prometheus reconnects
 * when its idle keep-alive connection was closed). */
#define MAX_CONNECTIONS      256
#define CONNECTION_TIMEOUT_S 3

struct tb_metrics_server {
    struct MHD_Daemon *mhd;
    tb_metrics *m;
    struct sockaddr_storage addr;
};

/* Queues body (malloc'd; the response frees it). */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len, const char *ctype) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result text_reply(struct MHD_Connection *c, unsigned status, const char *text) {
    return reply(c, status, xstrdup(text), strlen(text), "text/plain; charset=utf-8");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_len, void **con_cls) {
    tb_metrics_server *sv = cls;
    size_t len;
    char *body;
    (void)version;
    (void)upload;
    (void)upload_len;
    if (!*con_cls) { /* the headers are in; the reply comes on the next call */
        *con_cls = sv;
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return text_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n");
    if (strcmp(url, "/metrics") != 0)
        return text_reply(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
    body = tb_metrics_render(sv->m, &len);
    return reply(c, MHD_HTTP_OK, body, len, TB_METRICS_CONTENT_TYPE);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    char msg[512];
    size_t n;
    (void)cls;
    vsnprintf(msg, sizeof msg, fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    tb_log(TB_LOG_DEBUG, "metrics: libmicrohttpd: %s", msg);
}

int tb_metrics_serve(tb_metrics *m, const char *listen, tb_metrics_server **out, char *err) {
    tb_metrics_server *sv;
    char host[256];
    int port, fd;
    *out = NULL;
    if (tb_listen_parse(listen, host, sizeof host, &port, err) != 0) return -1;
    sv = xcalloc(1, sizeof *sv);
    sv->m = m;
    if ((fd = tb_listen_bind(host, port, 64, &sv->addr, err)) < 0) {
        free(sv);
        return -1;
    }
    sv->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, sv,
                               MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
                               MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
                               (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
    if (!sv->mhd) {
        tb_seterr(err, "metrics: libmicrohttpd could not start on %s", listen);
        close(fd);
        free(sv);
        return -1;
    }
    *out = sv;
    return 0;
}

int tb_metrics_server_port(const tb_metrics_server *s) { return tb_sockaddr_port(&s->addr); }

void tb_metrics_server_address(const tb_metrics_server *s, char *buf, size_t len) {
    tb_sockaddr_format(&s->addr, buf, len);
}

void tb_metrics_server_stop(tb_metrics_server *s) {
    if (!s) return;
    MHD_stop_daemon(s->mhd); /* joins its thread and closes the listening socket */
    free(s);
}
