/*
 * listeners.h: which processes of this host listen on given TCP ports. The
 * run uses it to find the SUT's server processes on the local host (the
 * ones that serve the tile file's endpoints), so that it can tell their CPU
 * from the load generator's and from anything else the host runs
 * (docs/method.md, "Other CPU").
 *
 * Read from /proc/net/tcp and /proc/net/tcp6 (sockets in the LISTEN state,
 * their inodes) and /proc/PID/fd (which process holds each inode). A
 * process whose fd folder cannot be read (another user's, without root) is
 * not found: the caller says so rather than guessing.
 */
#ifndef TB_POWERMETER_LISTENERS_H
#define TB_POWERMETER_LISTENERS_H

#include <sys/types.h>

#define TB_LISTENERS_MAX_PORTS 64

/*
 * The PIDs that hold a listening TCP socket (IPv4 or IPv6, any address) on
 * one of ports[0..n_ports) (1..65535; others are ignored), in ascending
 * order, each once, at most max of them into pids. Returns how many were
 * found (0: none), or -1 with err when /proc cannot be read at all.
 */
int tb_listener_pids(const int *ports, int n_ports, pid_t *pids, int max, char *err);

#endif
