/*
 * supervisor.h: the embedded SUT's process supervisor. It starts a server
 * (its own session, stdin from /dev/null, output appended to a log file, root
 * dropped when asked), records it (pid, start time, executable), tells
 * whether a recorded pid is still the process it started, and stops exactly
 * that process. It also picks free loopback ports for the servers.
 *
 * A recorded pid is only ever signalled after /proc/PID/stat shows the same
 * start time and /proc/PID/exe the same binary, so a pid reused by an
 * unrelated process is never touched.
 */
#ifndef TB_SUT_SUPERVISOR_H
#define TB_SUT_SUPERVISOR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tb_common.h"

/* The address the servers listen on unless `sut up --listen` says otherwise. */
#define SUT_DEFAULT_HOST     "127.0.0.1"
#define SUT_START_TIMEOUT_US (30u * 1000000u)
#define SUT_STOP_TIMEOUT_US  (10u * 1000000u)
#define SUT_POLL_US          20000u

/* One started server, as recorded in DIR/sut.state. */
typedef struct svc {
    int present;
    pid_t pid;
    unsigned long long start_ticks; /* /proc/PID/stat field 22: identifies the process */
    int port;
    char exe[PATH_MAX]; /* resolved executable, compared with /proc/PID/exe */
} svc;

/* The account servers run as: inactive when tilebench is not root. */
typedef struct run_as {
    int active;
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    int ngroups;
} run_as;

/* Sleeps us microseconds, through signals. */
void sut_sleep_us(unsigned us);
/* Last non-empty line of a log file (at most len-1 bytes), "" when none. */
void sut_log_tail(const char *path, char *out, size_t len);

/*
 * The IPv4 address every server of the SUT listens on and every readiness
 * check connects to: SUT_DEFAULT_HOST until sut_set_host changes it
 * (tb_sut_up sets it from its options, tb_sut_status and check_not_running
 * from DIR/sut.state). One SUT per process at a time.
 */
const char *sut_host(void);
/* 0, or -1 with err when addr is not a dotted-quad IPv4 address of one
 * interface (0.0.0.0, broadcast and multicast addresses are refused). */
int sut_set_host(const char *addr, char *err);

/* Binds sut_host():port (0 = any free port); returns the socket (caller
 * closes) and stores the port in *got, or -1 with err. */
int sut_port_probe(int port, const char *what, int *got, char *err);
/* Picks or checks n ports (in[i] = 0: any free one), all distinct. 0 or -1. */
int sut_choose_ports(int n, const int *in, const char *const *what, int *out, char *err);

/* Looks up the account a server runs as under root. 0 or -1 with err. */
int sut_run_as_lookup(const char *user, run_as *ra, char *err);
/* In a freshly forked child: drops root if ra is active. Async-signal-safe. */
int sut_child_drop(const run_as *ra);

/* Starts argv (ra: NULL or the account to run as) with stdout and stderr
 * appended to logpath. Returns the pid, or -1 with *rc = TB_SUT_EUSAGE (log
 * not writable) or TB_SUT_ESTART, and err. */
pid_t sut_spawn_logged(char *const argv[], const run_as *ra, const char *logpath, int *rc, char *err);
/* Runs a one-shot tool to completion (common/spawn.h), its output appended
 * to logpath as it comes. 0 when it exited with status 0; else TB_SUT_EUSAGE
 * (log not writable) or TB_SUT_ESTART with err naming the tool, its status,
 * the log and the log's last line. */
int sut_run_tool(const char *const argv[], const run_as *ra, const char *what, const char *logpath, char *err);

/* Records a freshly spawned child: pid, start time and the resolved binary. */
void sut_svc_record(svc *s, pid_t pid, int port, const char *binary);

enum { ALIVE_GONE = 0, ALIVE_OURS = 1, ALIVE_REUSED = 2, ALIVE_UNKNOWN = -1 };
/* Is the recorded service still the process we started? ALIVE_* (UNKNOWN
 * with errno set when its executable cannot be read). */
int sut_svc_alive(const svc *s);
/* Stops one service: first_sig, then SIGKILL after SUT_STOP_TIMEOUT_US. 0 or -1. */
int sut_svc_stop(const char *name, svc *s, int first_sig, char *err);
/* While a service starts: 0 when it still runs as ours, else TB_SUT_ESTART
 * with err saying how it ended and the last line of its log. */
int sut_check_starting(const char *name, const svc *s, const char *logpath, char *err);

/* Waits until answers(arg) is true: 0; TB_SUT_ESTART (err set) when the
 * service exited; 1 (err untouched) when deadline passed first. */
int sut_wait_ready(const char *name, const svc *s, const char *logpath, uint64_t deadline, int (*answers)(void *arg),
                   void *arg, char *err);

#endif
