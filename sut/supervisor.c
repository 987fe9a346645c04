/*
 * supervisor.c: starting, recognising and stopping the embedded SUT's
 * servers (supervisor.h), and running its one-shot tools.
 *
 * Servers are forked and exec'd directly (no pg_ctl, no daemonize), so the
 * pid recorded is the server's own. One-shot tools (initdb) run through
 * common/spawn.h, their output appended to the server's log file.
 */
#define _DEFAULT_SOURCE /* getgrouplist, setgroups: for dropping root in the child */
#include "sut/supervisor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/spawn.h"
#include "sut/sut_internal.h"

void sut_sleep_us(unsigned us) {
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- log files ---------------------------------------------------------- */

void sut_log_tail(const char *path, char *out, size_t len) {
    char buf[4096];
    ssize_t n;
    off_t size;
    int fd = open(path, O_RDONLY);
    out[0] = '\0';
    if (fd < 0) return;
    size = lseek(fd, 0, SEEK_END);
    if (size > (off_t)(sizeof buf - 1))
        lseek(fd, size - (off_t)(sizeof buf - 1), SEEK_SET);
    else
        lseek(fd, 0, SEEK_SET);
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    sut_copy_str(out, len, line ? line + 1 : buf);
}
/* ---- the listen address and ports ---------------------------------------- */

static char sut_host_str[INET_ADDRSTRLEN] = SUT_DEFAULT_HOST;

const char *sut_host(void) { return sut_host_str; }

int sut_set_host(const char *addr, char *err) {
    struct in_addr a;
    uint32_t h;
    if (!addr || inet_pton(AF_INET, addr, &a) != 1) {
        tb_seterr(err, "listen address '%s': not an IPv4 address (dotted quad such as 198.18.0.2)", addr ? addr : "");
        return -1;
    }
    h = ntohl(a.s_addr);
    if (h == INADDR_ANY || h == INADDR_BROADCAST || IN_MULTICAST(h)) {
        tb_seterr(err,
                  "listen address '%s': a wildcard, broadcast or multicast address cannot be an endpoint; "
                  "give the address of one interface",
                  addr);
        return -1;
    }
    inet_ntop(AF_INET, &a, sut_host_str, sizeof sut_host_str);
    return 0;
}

/*
 * Binds sut_host():port (0 = any free port) with SO_REUSEADDR, as the servers
 * do, so a port in TIME_WAIT counts as free but a listening one does not.
 * Returns the bound socket (caller closes) and stores the port, or -1.
 */
int sut_port_probe(int port, const char *what, int *got, char *err) {
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        tb_seterr(err, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, sut_host(), &sa.sin_addr);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1) != 0) {
        int e = errno;
        close(fd);
        if (e == EADDRINUSE)
            tb_seterr(err, "port %d (%s) is already in use on %s", port, what, sut_host());
        else if (e == EADDRNOTAVAIL)
            tb_seterr(err, "bind %s: %s (no interface of this host has that address)", sut_host(), strerror(e));
        else
            tb_seterr(err, "port %d (%s): bind %s: %s", port, what, sut_host(), strerror(e));
        return -1;
    }
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        tb_seterr(err, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *got = ntohs(sa.sin_port);
    return fd;
}

/* Picks or checks n ports (in[i] = 0: any free one). Every probe socket stays
 * open until all are chosen, so two "any free port" picks never collide. */
int sut_choose_ports(int n, const int *in, const char *const *what, int *out, char *err) {
    int fds[8], i, j, rc = 0;
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (in[i] != 0 && in[i] == in[j]) {
                tb_seterr(err, "%s and %s cannot share port %d", what[i], what[j], in[i]);
                return -1;
            }
    for (i = 0; i < n && rc == 0; i++) {
        fds[i] = sut_port_probe(in[i], what[i], &out[i], err);
        if (fds[i] < 0) rc = -1;
    }
    for (j = 0; j < i; j++)
        if (fds[j] >= 0) close(fds[j]);
    return rc;
}
/* ---- processes ---------------------------------------------------------- */

/* Looks up the account PostgreSQL runs as under root. */
int sut_run_as_lookup(const char *user, run_as *ra, char *err) {
    struct passwd pw, *res = NULL;
    char buf[4096];
    memset(ra, 0, sizeof *ra);
    if (getpwnam_r(user, &pw, buf, sizeof buf, &res) != 0 || !res) {
        tb_seterr(err,
                  "running as root, but user '%s' does not exist (PostgreSQL refuses to run as root); "
                  "install the Debian package postgresql",
                  user);
        return -1;
    }
    ra->active = 1;
    ra->uid = pw.pw_uid;
    ra->gid = pw.pw_gid;
    ra->ngroups = (int)(sizeof ra->groups / sizeof ra->groups[0]);
    if (getgrouplist(user, pw.pw_gid, ra->groups, &ra->ngroups) < 0) {
        ra->groups[0] = pw.pw_gid; /* more than 64 groups: the primary one is enough */
        ra->ngroups = 1;
    }
    return 0;
}

/* In a freshly forked child: drops root if asked. Only async-signal-safe calls. */
int sut_child_drop(const run_as *ra) {
    if (!ra || !ra->active) return 0;
    if (setgroups((size_t)ra->ngroups, ra->groups) != 0) return -1;
    if (setgid(ra->gid) != 0) return -1;
    if (setuid(ra->uid) != 0) return -1;
    return 0;
}

/*
 * Forks and execs argv[0] in its own session (so a Ctrl-C aimed at tilebench
 * does not hit the servers) with default signal handling, stdin from
 * /dev/null, stdout and stderr to outfd, no other inherited descriptors, cwd /,
 * and the identity ra. Returns the child's pid or -1 with err.
 */
static pid_t spawn(char *const argv[], const run_as *ra, int outfd, char *err) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM};
    struct rlimit rl;
    int maxfd = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) maxfd = (int)rl.rlim_cur;
    if (maxfd > 65536) maxfd = 65536;

    pid_t pid = fork();
    if (pid < 0) {
        tb_seterr(err, "fork for %s: %s", argv[0], strerror(errno));
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        size_t i;
        int fd;
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        fd = open("/dev/null", O_RDONLY);
        if (fd >= 0 && fd != 0) {
            dup2(fd, 0);
            close(fd);
        }
        if (outfd >= 0) {
            if (outfd != 1) dup2(outfd, 1);
            if (outfd != 2) dup2(outfd, 2);
        }
        for (fd = 3; fd < maxfd; fd++)
            close(fd);
        if (chdir("/") != 0 || sut_child_drop(ra) != 0) {
            static const char m[] = "tilebench: cannot switch to the server's user\n";
            if (write(2, m, sizeof m - 1) < 0) _exit(126);
            _exit(126);
        }
        execv(argv[0], argv);
        {
            static const char m[] = "tilebench: exec failed: ";
            const char *why = strerror(errno);
            if (write(2, m, sizeof m - 1) < 0 || write(2, argv[0], strlen(argv[0])) < 0 || write(2, ": ", 2) < 0 ||
                write(2, why, strlen(why)) < 0 || write(2, "\n", 1) < 0)
                _exit(127);
        }
        _exit(127);
    }
    return pid;
}

/* spawn() with stdout and stderr appended to logpath (servers report early
 * config errors there before their own logging starts). Returns the pid, or
 * -1 with *rc = TB_SUT_EUSAGE (log not writable) or TB_SUT_ESTART. */
pid_t sut_spawn_logged(char *const argv[], const run_as *ra, const char *logpath, int *rc, char *err) {
    int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    pid_t pid;
    if (fd < 0) {
        tb_seterr(err, "%s: %s", logpath, strerror(errno));
        *rc = TB_SUT_EUSAGE;
        return -1;
    }
    pid = spawn(argv, ra, fd, err);
    close(fd);
    *rc = TB_SUT_ESTART;
    return pid;
}

/* Reads state letter and start time (clock ticks after boot) of a pid from
 * /proc/PID/stat. -1 when the process does not exist. */
static int proc_stat(pid_t pid, char *state, unsigned long long *start) {
    char path[64], buf[1024];
    ssize_t n;
    int fd, field;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    /* "pid (comm) S ppid ...": comm may hold spaces and parentheses. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ') return -1;
    p += 2;
    *state = *p;
    for (field = 3; field < 22 && p; field++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    if (!p) return -1;
    *start = strtoull(p, NULL, 10);
    return 0;
}

/*
 * Is the recorded service still the process we started?
 *   ALIVE_OURS    yes, running
 *   ALIVE_GONE    it exited (reaped here if it was our child)
 *   ALIVE_REUSED  the pid now belongs to another process: ours is gone
 *   ALIVE_UNKNOWN cannot tell (its executable is not readable), errno set
 */
int sut_svc_alive(const svc *s) {
    char state = 0, exe[PATH_MAX];
    unsigned long long start = 0;
    char path[64];
    ssize_t n;
    int st;
    pid_t w;

    if (!s->present || s->pid <= 0) return ALIVE_GONE;
    w = waitpid(s->pid, &st, WNOHANG);
    if (w == s->pid) return ALIVE_GONE; /* our child, now reaped */
    if (proc_stat(s->pid, &state, &start) != 0) return ALIVE_GONE;
    if (start != s->start_ticks) return ALIVE_REUSED;
    if (state == 'Z' || state == 'X') return ALIVE_GONE;
    if (w == 0) return ALIVE_OURS; /* our own unreaped child: the pid cannot have been reused */
    snprintf(path, sizeof path, "/proc/%ld/exe", (long)s->pid);
    n = readlink(path, exe, sizeof exe - 1);
    if (n < 0) return errno == ENOENT ? ALIVE_GONE : ALIVE_UNKNOWN;
    exe[n] = '\0';
    /* After a package upgrade the running image shows as "<path> (deleted)". */
    static const char del[] = " (deleted)";
    size_t el = strlen(exe);
    if (el > sizeof del - 1 && strcmp(exe + el - (sizeof del - 1), del) == 0) exe[el - (sizeof del - 1)] = '\0';
    return strcmp(exe, s->exe) == 0 ? ALIVE_OURS : ALIVE_REUSED;
}

/*
 * Stops one service: first_sig, then up to SUT_STOP_TIMEOUT_US for it to
 * exit, then SIGKILL. Identity is re-checked before every signal. For
 * PostgreSQL first_sig is SIGINT, which is exactly what `pg_ctl stop -m fast`
 * sends (disconnect clients, checkpoint, exit).
 */
int sut_svc_stop(const char *name, svc *s, int first_sig, char *err) {
    uint64_t deadline;
    int a = sut_svc_alive(s), killed = 0;
    if (a == ALIVE_UNKNOWN) {
        tb_seterr(err, "%s pid %ld: cannot check that it is the process tilebench started: %s; not stopping it", name,
                  (long)s->pid, strerror(errno));
        return -1;
    }
    if (a != ALIVE_OURS) return 0;
    if (kill(s->pid, first_sig) != 0 && errno != ESRCH) {
        tb_seterr(err, "%s pid %ld: kill: %s", name, (long)s->pid, strerror(errno));
        return -1;
    }
    deadline = tb_now_us() + SUT_STOP_TIMEOUT_US;
    for (;;) {
        sut_sleep_us(SUT_POLL_US);
        a = sut_svc_alive(s);
        if (a == ALIVE_GONE || a == ALIVE_REUSED) return 0;
        if (tb_now_us() < deadline) continue;
        if (killed) {
            tb_seterr(err, "%s pid %ld: still running after SIGKILL", name, (long)s->pid);
            return -1;
        }
        if (a == ALIVE_OURS) {
            tb_log(TB_LOG_WARN, "%s pid %ld did not stop within %us; sending SIGKILL", name, (long)s->pid,
                   SUT_STOP_TIMEOUT_US / 1000000u);
            kill(s->pid, SIGKILL);
        }
        killed = 1;
        deadline = tb_now_us() + 5u * 1000000u;
    }
}

/* Records a freshly spawned child: pid, start time and the resolved binary. */
void sut_svc_record(svc *s, pid_t pid, int port, const char *binary) {
    char state;
    memset(s, 0, sizeof *s);
    s->present = 1;
    s->pid = pid;
    s->port = port;
    if (proc_stat(pid, &state, &s->start_ticks) != 0) s->start_ticks = 0;
    if (!realpath(binary, s->exe)) sut_copy_str(s->exe, sizeof s->exe, binary);
}
/*
 * While a service starts: 0 when it still runs as ours, else TB_SUT_ESTART with
 * err saying how it ended (exit status or signal) and the last line of its log.
 */
int sut_check_starting(const char *name, const svc *s, const char *logpath, char *err) {
    char tail[160], how[48];
    int st = 0;
    pid_t w = waitpid(s->pid, &st, WNOHANG);
    if (w == 0) return 0; /* our child, still running */
    if (w == s->pid) {
        if (WIFEXITED(st))
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(st));
        else
            snprintf(how, sizeof how, "wait status %d", st);
    } else if (sut_svc_alive(s) == ALIVE_OURS) {
        return 0;
    } else {
        snprintf(how, sizeof how, "gone");
    }
    sut_log_tail(logpath, tail, sizeof tail);
    tb_seterr(err, "%s exited during startup (%s), see %s%s%s", name, how, logpath, tail[0] ? ": " : "", tail);
    return TB_SUT_ESTART;
}

/* ---- one-shot tools ----------------------------------------------------- */

static void tool_output(void *arg, const char *chunk, size_t n) {
    int fd = *(const int *)arg;
    while (n > 0) {
        ssize_t w = write(fd, chunk, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* the log is best effort, as for the servers */
        chunk += w;
        n -= (size_t)w;
    }
}

int sut_run_tool(const char *const argv[], const run_as *ra, const char *what, const char *logpath, char *err) {
    tb_spawn_opts o;
    tb_spawn_result r;
    char tail[160], e[TB_ERR_LEN];
    int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644), rc;
    if (fd < 0) {
        tb_seterr(err, "%s: %s", logpath, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    memset(&o, 0, sizeof o);
    o.path = argv[0];
    o.argv = argv;
    o.output_max = 4096; /* every byte goes to the log through on_output */
    o.new_group = 1;     /* a Ctrl-C aimed at tilebench does not hit the tool */
    o.drop = ra && ra->active;
    o.uid = ra ? ra->uid : 0;
    o.gid = ra ? ra->gid : 0;
    o.on_output = tool_output;
    o.arg = &fd;
    o.dir = "/"; /* as the servers: a tool running as postgres cannot complain that it cannot
                    enter the folder tilebench was started in (e.g. /root) */
    int spawned = tb_spawn_run(&o, &r, e);
    close(fd);
    if (spawned != 0) {
        tb_seterr(err, "%s: %s", what, e);
        tb_spawn_result_free(&r);
        return TB_SUT_ESTART;
    }
    rc = r.exited && r.exit_status == 0 ? 0 : TB_SUT_ESTART;
    if (rc != 0) {
        sut_log_tail(logpath, tail, sizeof tail);
        tb_seterr(err, "%s failed (status %d), see %s: %s", what, r.exited ? r.exit_status : -1, logpath, tail);
    }
    tb_spawn_result_free(&r);
    return rc;
}

/* ---- waiting for a server ----------------------------------------------- */

int sut_wait_ready(const char *name, const svc *s, const char *logpath, uint64_t deadline, int (*answers)(void *arg),
                   void *arg, char *err) {
    for (;;) {
        if (answers(arg)) return 0;
        if (sut_check_starting(name, s, logpath, err) != 0) return TB_SUT_ESTART;
        if (tb_now_us() > deadline) return 1;
        sut_sleep_us(SUT_POLL_US);
    }
}
