/*
 * tunnel.h: TLS to the broker for rediss:// URIs. Debian 12's hiredis (0.14)
 * has no TLS of its own (hiredis_ssl came with 1.0.0), so each connection
 * runs one stunnel (Debian package stunnel4) in inetd mode on one end of a
 * socketpair, as a TLS client to the broker; hiredis speaks plain Redis on
 * the other end (redisConnectFd). The certificate chain is verified against
 * the URI's ca= file or the system's CA store, and the certificate must name
 * the host (checkHost, or checkIP for an address). Nothing secret goes into
 * stunnel's configuration or command line: AUTH travels inside the stream.
 * When the connection's descriptor is closed (or this process dies), the
 * child sees the end of its input and exits.
 */
#ifndef TB_BROKER_TUNNEL_H
#define TB_BROKER_TUNNEL_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;  /* 0: none */
    int fd;     /* our end of the socketpair, handed to hiredis (which closes it) */
    int log_fd; /* stunnel's log (non-blocking read end), -1: none */
} tb_tunnel;

/* Starts the child. 0 with t filled, or -1 with err. ca: NULL for the
 * system's CA store. */
int tb_tunnel_open(tb_tunnel *t, const char *host, int port, const char *ca, char *err);
/* Why the tunnel failed, from stunnel's log ("certificate verify failed:
 * self-signed certificate in certificate chain"), or "" when it said
 * nothing. Waits up to wait_ms for the child to write it. */
void tb_tunnel_why(tb_tunnel *t, int wait_ms, char *buf, size_t len);
/* After the connection (t->fd) is closed: ends and reaps the child. */
void tb_tunnel_close(tb_tunnel *t);

#endif
