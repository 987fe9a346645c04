/*
 * listen.c: listening TCP sockets from "ADDR:PORT" (listen.h).
 */
#include "common/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int tb_listen_parse(const char *s, char *host, size_t host_len, int *port, char *err) {
    const char *colon = s ? strrchr(s, ':') : NULL, *h = s;
    size_t hl;
    uint64_t p;
    if (!colon || !colon[1] || tb_parse_u64(colon + 1, &p, NULL) != 0 || p > 65535) {
        tb_seterr(err, "'%s': expected ADDR:PORT with PORT 0..65535 (e.g. 127.0.0.1:8080)", s ? s : "");
        return -1;
    }
    hl = (size_t)(colon - s);
    if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
        h++;
        hl -= 2;
    } else if (memchr(s, ':', hl)) {
        tb_seterr(err, "'%s': an IPv6 address goes in brackets ([::1]:8080)", s);
        return -1;
    }
    if (hl == 0) {
        tb_seterr(err, "'%s': missing address before the port (e.g. 127.0.0.1:8080)", s);
        return -1;
    }
    if (hl >= host_len) {
        tb_seterr(err, "'%s': address too long", s);
        return -1;
    }
    for (size_t i = 0; i < hl; i++)
        if (h[i] <= ' ' || h[i] == '/' || h[i] == '[' || h[i] == ']' || (unsigned char)h[i] >= 0x7f) {
            tb_seterr(err, "'%s': the address has a character that no address has", s);
            return -1;
        }
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

int tb_listen_bind(const char *host, int port, int backlog, struct sockaddr_storage *bound, char *err) {
    struct addrinfo hints, *res = NULL;
    char ports[16], shown[300];
    socklen_t blen = sizeof *bound;
    int fd, one = 1, gai;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(ports, sizeof ports, "%d", port);
    if (strchr(host, ':'))
        snprintf(shown, sizeof shown, "[%s]:%d", host, port);
    else
        snprintf(shown, sizeof shown, "%s:%d", host, port);
    if ((gai = getaddrinfo(host, ports, &hints, &res)) != 0) {
        tb_seterr(err, "listen %s: %s", shown, gai_strerror(gai));
        return -1;
    }
    fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    if (fd < 0) {
        tb_seterr(err, "listen %s: socket: %s", shown, strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    /* SO_REUSEADDR lets a restart bind past TIME_WAIT; on Linux it does not
     * let two listeners share a port, so a busy port still fails here */
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)bound, &blen) != 0) {
        tb_seterr(err, "listen %s: %s", shown, strerror(errno));
        close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    return fd;
}

int tb_sockaddr_port(const struct sockaddr_storage *a) {
    if (a->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
    return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

void tb_sockaddr_format(const struct sockaddr_storage *a, char *buf, size_t len) {
    char h[INET6_ADDRSTRLEN] = "?";
    if (a->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, h, sizeof h);
        snprintf(buf, len, "[%s]:%d", h, tb_sockaddr_port(a));
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, h, sizeof h);
        snprintf(buf, len, "%s:%d", h, tb_sockaddr_port(a));
    }
}
