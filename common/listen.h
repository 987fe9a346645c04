/*
 * listen.h: a listening TCP socket from "ADDR:PORT", as `serve --listen`,
 * `run --metrics` and `meter export --listen` take it: the text parsed, the
 * socket bound, and the address it got (port 0 picks a free one) as text.
 */
#ifndef TB_COMMON_LISTEN_H
#define TB_COMMON_LISTEN_H

#include <stddef.h>
#include <sys/socket.h>

#include "common/tb_common.h"

/* "ADDR:PORT" (IPv6 in brackets: "[::1]:8080"; PORT 0..65535, 0 for any
 * free port) into host (without brackets) and *port. -1 with err naming the
 * text and what is wrong. */
int tb_listen_parse(const char *s, char *host, size_t host_len, int *port, char *err) TB_WUR;

/* host:port resolved (numeric port), bound and listening with the given
 * backlog; the address it got in *bound. Returns the socket (close-on-exec),
 * or -1 with err ("listen 127.0.0.1:9464: Address already in use"). */
int tb_listen_bind(const char *host, int port, int backlog, struct sockaddr_storage *bound, char *err) TB_WUR;

/* The port of an IPv4 or IPv6 address; "ADDR:PORT" ("[ADDR]:PORT" for IPv6). */
int tb_sockaddr_port(const struct sockaddr_storage *a);
void tb_sockaddr_format(const struct sockaddr_storage *a, char *buf, size_t len);

#endif
