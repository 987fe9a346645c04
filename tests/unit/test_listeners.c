/*
 * test_listeners.c: unit tests of listeners.h against real sockets: a child
 * process listens on a loopback port (IPv4) and another on ::1 (IPv6); each
 * is found by its port, and only it. A port nobody listens on, and a port
 * with a connected but not listening socket, find nothing.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "powermeter/listeners.h"

/* A socket listening on an ephemeral loopback port (v6: ::1); its port. */
static int listen_on(int v6, int *port) {
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    }
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    *port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/* A child that holds a listening socket (v6 or not) until killed; its pid
 * and port. The parent closes its copy, so only the child holds it. */
static pid_t child_listener(int v6, int *port) {
    int fd = listen_on(v6, port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 60; i++) /* bounded: 60 s at most */
            sleep(1);
        _exit(0);
    }
    close(fd);
    return pid;
}

static void stop(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void test_found_by_port(void **state) {
    int p4, p6;
    pid_t got[8], a, b;
    char err[256] = "";
    (void)state;
    a = child_listener(0, &p4);
    b = child_listener(1, &p6);
    int ports4[] = {p4}, ports6[] = {p6}, both[] = {p6, 0, 70000, p4};
    assert_int_equal(tb_listener_pids(ports4, 1, got, 8, err), 1);
    assert_int_equal(got[0], a);
    assert_int_equal(tb_listener_pids(ports6, 1, got, 8, err), 1);
    assert_int_equal(got[0], b);
    assert_int_equal(tb_listener_pids(both, 4, got, 8, err), 2);
    assert_int_equal(got[0], a < b ? a : b); /* ascending */
    assert_int_equal(got[1], a < b ? b : a);
    assert_int_equal(tb_listener_pids(both, 4, got, 1, err), 1); /* at most max */
    stop(a);
    stop(b);
    assert_int_equal(tb_listener_pids(both, 4, got, 8, err), 0); /* gone with them */
}

/* A client socket connected to a port is no listener on it; only the
 * process that listens is found. */
static void test_connected_is_not_listening(void **state) {
    int port, c;
    pid_t got[8], a;
    char err[256] = "";
    struct sockaddr_in sa;
    (void)state;
    a = child_listener(0, &port);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    c = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof sa), 0);
    int ports[] = {port};
    assert_int_equal(tb_listener_pids(ports, 1, got, 8, err), 1);
    assert_int_equal(got[0], a); /* not this process, which holds the client end */
    close(c);
    stop(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_by_port),
        cmocka_unit_test(test_connected_is_not_listening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
