/*
 * sut.c: the embedded SUT. `sut up` starts PostgreSQL, redis-server and
 * Dovecot from Debian's packages on 127.0.0.1 inside a run folder, waits until
 * each one answers, loads the per-tile OLTP data and writes the endpoints to
 * DIR/sut.ini.
 * `sut down` stops exactly the processes `up` started, and nothing else.
 *
 * Layout of the run folder DIR:
 *   pg/           PostgreSQL data directory (initdb; reused by the next `up`)
 *   pg.log        initdb and server output
 *   redis.conf    generated on every `up`
 *   redis.log     redis-server log; redis.pid its own pid file
 *   dovecot.conf  generated on every `up` (IMAP + LMTP, static passdb)
 *   dovecot.log   Dovecot's log (every process logs through the master)
 *   dovecot/      Dovecot's base_dir (sockets, master.pid) and state_dir
 *   mail/USER/    the maildirs, owned by "nobody"; emptied by every `up`
 *   mail.secret   the mail users' one password (mode 0600)
 *   web.tileN.log the reference web app of tile N (`tilebench webapp`)
 *   sut.state     the started processes: pid, start time and executable
 *   sut.ini       [sut] pg = <conninfo>, redis = HOST:PORT, imap = HOST:PORT,
 *                 lmtp = HOST:PORT, mail_user, mail_domain, mail_password_file,
 *                 web.tileN = http://127.0.0.1:PORT
 *
 * Mail delivery: the load generator speaks LMTP straight to Dovecot (no
 * Postfix in front). LMTP is what an MTA would hand the message to anyway,
 * the client is the same code as for SMTP (LHLO instead of EHLO, one reply
 * per recipient after DATA), and one server less keeps `sut up` fast and the
 * measured work on the mailbox store, which is what the tile's mail workload
 * is about. A real MTA can still be benchmarked: [sut] smtp = HOST:PORT.
 *
 * Servers are forked and exec'd directly (no pg_ctl, no daemonize), so the pid
 * recorded is the server's own. A recorded pid is only ever signalled after
 * /proc/PID/stat shows the same start time and /proc/PID/exe the same binary,
 * so a pid reused by an unrelated process is never touched.
 *
 * PostgreSQL refuses to run as root; when tilebench runs as root, initdb and
 * postgres run as Debian's "postgres" user, which then owns DIR/pg.
 */
#define _DEFAULT_SOURCE /* getgrouplist, setgroups: for dropping root in the child */
#define _XOPEN_SOURCE 700 /* nftw: emptying the maildirs */
#include "sut/sut.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <hiredis/hiredis.h>
#include <ini.h>
#include <libpq-fe.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sut/oltp_load.h"
#include "sut/web_load.h"

#define SUT_HOST "127.0.0.1"
#define SUT_PG_USER "tilebench" /* database superuser created by initdb */
#define SUT_PG_DB "tilebench"
/* The reference web app's database: its own, so that the OLTP database's
 * counters (pg_stat_database) count the OLTP workload alone. */
#define SUT_PG_WEB_DB "tilebench_web"
#define SUT_OS_PG_USER "postgres" /* Debian's account for the server under root */
#define SUT_START_TIMEOUT_US (30u * 1000000u)
#define SUT_STOP_TIMEOUT_US (10u * 1000000u)
#define SUT_POLL_US 20000u
#define SUT_MAX_TILES 1000
#define SUT_UNIX_PATH_MAX 107 /* sizeof(sun_path) - 1 on Linux */

enum { SVC_PG = 0, SVC_REDIS = 1, SVC_DOVECOT = 2, SVC_N = 3 };
static const char *const svc_names[SVC_N] = {"postgresql", "redis", "dovecot"};

/* Mail users of the embedded Dovecot: the account that owns the maildirs
 * (mail users may not be root) and the recipient domain. */
#define SUT_MAIL_OWNER "nobody"
#define SUT_MAIL_GROUP "nogroup"
#define SUT_MAIL_DOMAIN "tilebench.test"
#define SUT_MAIL_USER_PATTERN TB_MAIL_USER_PATTERN
/* Longest socket name Dovecot 2.3 creates under base_dir
 * ("replication-notify-fifo", "token-login/tokenlogin") plus its slash. */
#define SUT_DOVECOT_SOCK_NAME_MAX 24

/* One started server, as recorded in DIR/sut.state. */
typedef struct svc {
    int present;
    pid_t pid;
    unsigned long long start_ticks; /* /proc/PID/stat field 22: identifies the process */
    int port;
    char exe[PATH_MAX]; /* resolved executable, compared with /proc/PID/exe */
} svc;

typedef struct sut_state {
    svc s[SVC_N];
    /* The reference web app, one process per tile: web[i] serves tile i+1
     * (n_web entries, malloc'd; sut_state_free). */
    int n_web;
    svc *web;
    char sockdir[PATH_MAX]; /* a /tmp socket folder we made, "" when DIR/pg is used */
    char dovecot_base[PATH_MAX]; /* a /tmp base_dir we made, "" when DIR/dovecot is used */
    int lmtp_port;               /* Dovecot's second port, for status */
} sut_state;

/* The account servers run as: inactive when tilebench is not root. */
typedef struct run_as {
    int active;
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    int ngroups;
} run_as;

/* ---- small helpers ------------------------------------------------------ */

static void sleep_us(unsigned us) {
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Copies src into dst (len bytes), truncating; always terminates. */
static void copy_str(char *dst, size_t len, const char *src) {
    size_t n = strlen(src);
    if (len == 0) return;
    if (n >= len) n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Joins a and b with '/'; -1 when the result does not fit. */
static int path_join(char *out, size_t len, const char *a, const char *b) {
    int n = snprintf(out, len, "%s/%s", a, b);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

static int is_exec_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* mkdir -p with mode 0755 for every folder it creates (chmod'ed explicitly
 * so a restrictive umask cannot hide the folder from the postgres user). */
static int mkdir_p(const char *dir, char *err) {
    char buf[PATH_MAX];
    size_t i, len = strlen(dir);
    if (len == 0 || len >= sizeof buf) {
        tb_seterr(err, "--dir '%s': path is empty or too long", dir);
        return -1;
    }
    memcpy(buf, dir, len + 1);
    for (i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) == 0) {
            if (chmod(buf, 0755) != 0) {
                tb_seterr(err, "chmod %s: %s", buf, strerror(errno));
                return -1;
            }
        } else if (errno != EEXIST) {
            tb_seterr(err, "mkdir %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = saved;
    }
    return 0;
}

/* Last non-empty line of a log file (at most len-1 bytes), "" when none. */
static void log_tail(const char *path, char *out, size_t len) {
    char buf[4096];
    ssize_t n;
    off_t size;
    int fd = open(path, O_RDONLY);
    out[0] = '\0';
    if (fd < 0) return;
    size = lseek(fd, 0, SEEK_END);
    if (size > (off_t)(sizeof buf - 1)) lseek(fd, size - (off_t)(sizeof buf - 1), SEEK_SET);
    else lseek(fd, 0, SEEK_SET);
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    copy_str(out, len, line ? line + 1 : buf);
}

/* ---- finding binaries --------------------------------------------------- */

/* Directory of the PostgreSQL server binaries (initdb, postgres). The
 * environment variable TB_PG_BINDIR wins; else the newest Debian cluster
 * version under /usr/lib/postgresql; else the PATH. */
static int find_pg_bindir(char *out, size_t len, char *err) {
    static const char hint[] = "install the Debian package postgresql (or set TB_PG_BINDIR)";
    char a[PATH_MAX], b[PATH_MAX];
    const char *env = getenv("TB_PG_BINDIR");
    if (env && *env) {
        if (path_join(a, sizeof a, env, "initdb") == 0 && path_join(b, sizeof b, env, "postgres") == 0 &&
            is_exec_file(a) && is_exec_file(b)) {
            copy_str(out, len, env);
            return 0;
        }
        tb_seterr(err, "PostgreSQL server binaries not found (looked in TB_PG_BINDIR=%s); %s", env, hint);
        return -1;
    }

    long best = -1;
    DIR *d = opendir("/usr/lib/postgresql");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            char *end;
            long v = strtol(de->d_name, &end, 10);
            if (end == de->d_name || *end != '\0' || v <= best) continue;
            snprintf(a, sizeof a, "/usr/lib/postgresql/%s/bin/initdb", de->d_name);
            snprintf(b, sizeof b, "/usr/lib/postgresql/%s/bin/postgres", de->d_name);
            if (is_exec_file(a) && is_exec_file(b)) best = v;
        }
        closedir(d);
    }
    if (best >= 0) {
        snprintf(out, len, "/usr/lib/postgresql/%ld/bin", best);
        return 0;
    }

    const char *path = getenv("PATH");
    if (path) {
        char *copy = xstrdup(path), *save = NULL, *p;
        for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (path_join(a, sizeof a, p, "initdb") == 0 && path_join(b, sizeof b, p, "postgres") == 0 &&
                is_exec_file(a) && is_exec_file(b)) {
                copy_str(out, len, p);
                free(copy);
                return 0;
            }
        }
        free(copy);
    }
    tb_seterr(err, "PostgreSQL server binaries not found (looked in /usr/lib/postgresql/*/bin and PATH); %s", hint);
    return -1;
}

/*
 * Finds an executable: $env_var when set (it must be executable), else the
 * first hit in dirs (NULL-terminated, tried in order; "PATH" stands for the
 * PATH entries). On failure err says where it looked and what to install.
 */
static int find_program(const char *name, const char *env_var, const char *const *dirs, const char *install,
                        char *out, size_t len, char *err) {
    char a[PATH_MAX], looked[256] = "";
    const char *env = getenv(env_var);
    if (env && *env) {
        if (is_exec_file(env)) {
            copy_str(out, len, env);
            return 0;
        }
        tb_seterr(err, "%s not found (%s=%s is not an executable file)", name, env_var, env);
        return -1;
    }
    for (int d = 0; dirs[d]; d++) {
        const char *path = strcmp(dirs[d], "PATH") == 0 ? getenv("PATH") : dirs[d];
        char *copy, *save = NULL, *p;
        strncat(looked, d ? ", " : "", sizeof looked - strlen(looked) - 1);
        strncat(looked, dirs[d], sizeof looked - strlen(looked) - 1);
        if (!path) continue;
        copy = xstrdup(path);
        for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (path_join(a, sizeof a, p, name) == 0 && is_exec_file(a)) {
                copy_str(out, len, a);
                free(copy);
                return 0;
            }
        }
        free(copy);
    }
    tb_seterr(err, "%s not found (looked in %s); install %s (or set %s)", name, looked, install, env_var);
    return -1;
}

/* Path of redis-server: TB_REDIS_SERVER, else the PATH, /usr/bin, /usr/sbin. */
static int find_redis(char *out, size_t len, char *err) {
    static const char *const dirs[] = {"PATH", "/usr/bin", "/usr/sbin", NULL};
    return find_program("redis-server", "TB_REDIS_SERVER", dirs, "the Debian package redis-server", out, len, err);
}

/* Path of the dovecot master: TB_DOVECOT, else /usr/sbin/dovecot, else the PATH. */
static int find_dovecot(char *out, size_t len, char *err) {
    static const char *const dirs[] = {"/usr/sbin", "PATH", NULL};
    return find_program("dovecot", "TB_DOVECOT", dirs, "the Debian packages dovecot-imapd and dovecot-lmtpd", out,
                        len, err);
}

/* ---- ports -------------------------------------------------------------- */

/*
 * Binds 127.0.0.1:port (0 = any free port) with SO_REUSEADDR, as the servers
 * do, so a port in TIME_WAIT counts as free but a listening one does not.
 * Returns the bound socket (caller closes) and stores the port, or -1.
 */
static int port_probe(int port, const char *what, int *got, char *err) {
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
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1) != 0) {
        int e = errno;
        close(fd);
        if (e == EADDRINUSE) tb_seterr(err, "port %d (%s) is already in use on " SUT_HOST, port, what);
        else tb_seterr(err, "port %d (%s): bind " SUT_HOST ": %s", port, what, strerror(e));
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
static int choose_ports(int n, const int *in, const char *const *what, int *out, char *err) {
    int fds[8], i, j, rc = 0;
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (in[i] != 0 && in[i] == in[j]) {
                tb_seterr(err, "%s and %s cannot share port %d", what[i], what[j], in[i]);
                return -1;
            }
    for (i = 0; i < n && rc == 0; i++) {
        fds[i] = port_probe(in[i], what[i], &out[i], err);
        if (fds[i] < 0) rc = -1;
    }
    for (j = 0; j < i; j++)
        if (fds[j] >= 0) close(fds[j]);
    return rc;
}

/* ---- processes ---------------------------------------------------------- */

/* Looks up the account PostgreSQL runs as under root. */
static int run_as_lookup(const char *user, run_as *ra, char *err) {
    struct passwd pw, *res = NULL;
    char buf[4096];
    memset(ra, 0, sizeof *ra);
    if (getpwnam_r(user, &pw, buf, sizeof buf, &res) != 0 || !res) {
        tb_seterr(err, "running as root, but user '%s' does not exist (PostgreSQL refuses to run as root); "
                       "install the Debian package postgresql", user);
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
static int child_drop(const run_as *ra) {
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
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
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
        for (fd = 3; fd < maxfd; fd++) close(fd);
        if (chdir("/") != 0 || child_drop(ra) != 0) {
            static const char m[] = "tilebench: cannot switch to the server's user\n";
            if (write(2, m, sizeof m - 1) < 0) _exit(126);
            _exit(126);
        }
        execv(argv[0], argv);
        {
            static const char m[] = "tilebench: exec failed: ";
            const char *why = strerror(errno);
            if (write(2, m, sizeof m - 1) < 0 || write(2, argv[0], strlen(argv[0])) < 0 ||
                write(2, ": ", 2) < 0 || write(2, why, strlen(why)) < 0 || write(2, "\n", 1) < 0)
                _exit(127);
        }
        _exit(127);
    }
    return pid;
}

/* spawn() with stdout and stderr appended to logpath (servers report early
 * config errors there before their own logging starts). Returns the pid, or
 * -1 with *rc = TB_SUT_EUSAGE (log not writable) or TB_SUT_ESTART. */
static pid_t spawn_logged(char *const argv[], const run_as *ra, const char *logpath, int *rc, char *err) {
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

enum { ALIVE_GONE = 0, ALIVE_OURS = 1, ALIVE_REUSED = 2, ALIVE_UNKNOWN = -1 };

/*
 * Is the recorded service still the process we started?
 *   ALIVE_OURS    yes, running
 *   ALIVE_GONE    it exited (reaped here if it was our child)
 *   ALIVE_REUSED  the pid now belongs to another process: ours is gone
 *   ALIVE_UNKNOWN cannot tell (its executable is not readable), errno set
 */
static int svc_alive(const svc *s) {
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
static int svc_stop(const char *name, svc *s, int first_sig, char *err) {
    uint64_t deadline;
    int a = svc_alive(s), killed = 0;
    if (a == ALIVE_UNKNOWN) {
        tb_seterr(err, "%s pid %ld: cannot check that it is the process tilebench started: %s; not stopping it",
                  name, (long)s->pid, strerror(errno));
        return -1;
    }
    if (a != ALIVE_OURS) return 0;
    if (kill(s->pid, first_sig) != 0 && errno != ESRCH) {
        tb_seterr(err, "%s pid %ld: kill: %s", name, (long)s->pid, strerror(errno));
        return -1;
    }
    deadline = tb_now_us() + SUT_STOP_TIMEOUT_US;
    for (;;) {
        sleep_us(SUT_POLL_US);
        a = svc_alive(s);
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
static void svc_record(svc *s, pid_t pid, int port, const char *binary) {
    char state;
    memset(s, 0, sizeof *s);
    s->present = 1;
    s->pid = pid;
    s->port = port;
    if (proc_stat(pid, &state, &s->start_ticks) != 0) s->start_ticks = 0;
    if (!realpath(binary, s->exe)) copy_str(s->exe, sizeof s->exe, binary);
}

static void sut_state_free(sut_state *st) {
    free(st->web);
    st->web = NULL;
    st->n_web = 0;
}

/* web[tile-1], growing the array as needed. */
static svc *state_web(sut_state *st, int tile) {
    if (tile > st->n_web) {
        st->web = xrealloc(st->web, (size_t)tile * sizeof *st->web);
        memset(st->web + st->n_web, 0, (size_t)(tile - st->n_web) * sizeof *st->web);
        st->n_web = tile;
    }
    return &st->web[tile - 1];
}

/* ---- state file --------------------------------------------------------- */

static int write_state(const char *dir, const sut_state *st, char *err) {
    char path[PATH_MAX], tmp[PATH_MAX];
    FILE *f;
    int i;
    if (path_join(path, sizeof path, dir, "sut.state") != 0 || path_join(tmp, sizeof tmp, dir, "sut.state.tmp") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    f = fopen(tmp, "w");
    if (!f) {
        tb_seterr(err, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# tilebench sut state: the servers `tilebench sut up` started in this folder.\n"
               "# `tilebench sut down` stops exactly these (pid, start time and executable must match).\n"
               "# service pid start_ticks port executable\n");
    for (i = 0; i < SVC_N; i++)
        if (st->s[i].present)
            fprintf(f, "%s %ld %llu %d %s\n", svc_names[i], (long)st->s[i].pid, st->s[i].start_ticks, st->s[i].port,
                    st->s[i].exe);
    for (i = 0; i < st->n_web; i++)
        if (st->web[i].present)
            fprintf(f, "web.tile%d %ld %llu %d %s\n", i + 1, (long)st->web[i].pid, st->web[i].start_ticks,
                    st->web[i].port, st->web[i].exe);
    if (st->sockdir[0]) fprintf(f, "sockdir %s\n", st->sockdir);
    if (st->dovecot_base[0]) fprintf(f, "dovecot_base %s\n", st->dovecot_base);
    if (st->lmtp_port > 0) fprintf(f, "lmtp_port %d\n", st->lmtp_port);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* 0 = read, 1 = no state file, -1 = unreadable or malformed (err set). */
static int read_state(const char *dir, sut_state *st, char *err) {
    char path[PATH_MAX], line[PATH_MAX + 128];
    FILE *f;
    int lineno = 0;
    memset(st, 0, sizeof *st);
    if (path_join(path, sizeof path, dir, "sut.state") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char name[32];
        long pid;
        unsigned long long start;
        int port, off = 0, i;
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        if (strncmp(line, "sockdir ", 8) == 0) {
            copy_str(st->sockdir, sizeof st->sockdir, line + 8);
            continue;
        }
        if (strncmp(line, "dovecot_base ", 13) == 0) {
            copy_str(st->dovecot_base, sizeof st->dovecot_base, line + 13);
            continue;
        }
        if (strncmp(line, "lmtp_port ", 10) == 0) {
            st->lmtp_port = atoi(line + 10);
            continue;
        }
        if (sscanf(line, "%31s %ld %llu %d %n", name, &pid, &start, &port, &off) != 4 || off == 0 || pid <= 0) {
            tb_seterr(err, "%s:%d: malformed line", path, lineno);
            fclose(f);
            return -1;
        }
        svc *sv = NULL;
        for (i = 0; i < SVC_N; i++)
            if (strcmp(name, svc_names[i]) == 0) sv = &st->s[i];
        if (!sv && strncmp(name, "web.tile", 8) == 0) {
            char *end;
            long t = strtol(name + 8, &end, 10);
            if (*end == '\0' && t >= 1 && t <= SUT_MAX_TILES) sv = state_web(st, (int)t);
        }
        if (!sv) {
            tb_seterr(err, "%s:%d: unknown service '%s'", path, lineno, name);
            fclose(f);
            sut_state_free(st);
            return -1;
        }
        sv->present = 1;
        sv->pid = (pid_t)pid;
        sv->start_ticks = start;
        sv->port = port;
        copy_str(sv->exe, sizeof sv->exe, line + off);
    }
    fclose(f);
    return 0;
}

/* Removes a /tmp socket folder made by up, with the files a killed postmaster leaves. */
static void remove_sockdir(const char *sockdir, int port) {
    char p[PATH_MAX + 32];
    if (!sockdir[0]) return;
    snprintf(p, sizeof p, "%s/.s.PGSQL.%d", sockdir, port);
    unlink(p);
    snprintf(p, sizeof p, "%s/.s.PGSQL.%d.lock", sockdir, port);
    unlink(p);
    rmdir(sockdir);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf path (no symlinks followed); "" is a no-op. 0 or -1 with errno. */
static int remove_tree(const char *path);

/* Removes a /tmp/tilebench-dovecot-XXXXXX base we made, and nothing else: the
 * path comes from DIR/sut.state, which must not be able to name any folder. */
static void remove_dovecot_base(const char *path) {
    static const char prefix[] = "/tmp/tilebench-dovecot-";
    if (!path || !*path) return;
    if (strncmp(path, prefix, sizeof prefix - 1) != 0 || strlen(path) != sizeof prefix - 1 + 6 ||
        strchr(path + sizeof prefix - 1, '/')) {
        tb_log(TB_LOG_WARN, "sut: not removing '%s' named in sut.state: not a folder tilebench makes", path);
        return;
    }
    remove_tree(path);
}

static int remove_tree(const char *path) {
    struct stat sb;
    if (!path[0] || lstat(path, &sb) != 0) return 0;
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Stops every service in st, newest first. 0 or -1 with err (first failure). */
static int stop_all(const sut_state *st_in, char *err) {
    sut_state st = *st_in;
    char e[TB_ERR_LEN] = "";
    int rc = 0;
    /* The web apps first: they are clients of PostgreSQL and Redis. */
    for (int t = 0; t < st.n_web; t++) {
        char name[32];
        svc w = st.web[t];
        snprintf(name, sizeof name, "web.tile%d", t + 1);
        if (w.present && svc_stop(name, &w, SIGTERM, e) != 0) {
            if (rc == 0) tb_seterr(err, "%s", e);
            rc = -1;
        }
    }
    /* SIGTERM to the dovecot master stops its children too (imap, lmtp, auth). */
    if (st.s[SVC_DOVECOT].present && svc_stop(svc_names[SVC_DOVECOT], &st.s[SVC_DOVECOT], SIGTERM, e) != 0) {
        tb_seterr(err, "%s", e);
        rc = -1;
    }
    if (st.s[SVC_PG].present && svc_stop(svc_names[SVC_PG], &st.s[SVC_PG], SIGINT, e) != 0) {
        if (rc == 0) tb_seterr(err, "%s", e);
        rc = -1;
    }
    if (st.s[SVC_REDIS].present && svc_stop(svc_names[SVC_REDIS], &st.s[SVC_REDIS], SIGTERM, e) != 0) {
        if (rc == 0) tb_seterr(err, "%s", e);
        rc = -1;
    }
    if (rc == 0) remove_sockdir(st.sockdir, st.s[SVC_PG].port);
    if (rc == 0) remove_dovecot_base(st.dovecot_base);
    return rc;
}

/* ---- PostgreSQL --------------------------------------------------------- */

static void pg_ping_conninfo(char *out, size_t len, int port) {
    snprintf(out, len, "host=" SUT_HOST " port=%d dbname=postgres user=" SUT_PG_USER " connect_timeout=2", port);
}

/* Checks, as the server's account, that every folder on the way to dir can
 * be entered; the child exits with the index of the first one that cannot. */
static int check_traversable(const char *dir, const run_as *ra, char *err) {
    pid_t pid;
    int st;
    size_t i, len = strlen(dir);
    pid = fork();
    if (pid < 0) {
        tb_seterr(err, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        char buf[PATH_MAX];
        int k = 0;
        if (child_drop(ra) != 0) _exit(255);
        memcpy(buf, dir, len + 1);
        for (i = 1; i <= len; i++) {
            if (buf[i] != '/' && buf[i] != '\0') continue;
            k++;
            char saved = buf[i];
            buf[i] = '\0';
            if (access(buf, X_OK) != 0) _exit(k > 250 ? 250 : k);
            buf[i] = saved;
        }
        _exit(0);
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 255) {
        tb_seterr(err, "cannot switch to user " SUT_OS_PG_USER " to check %s", dir);
        return -1;
    }
    /* Rebuild the prefix that failed, for the message. */
    char bad[PATH_MAX];
    int k = 0, want = WEXITSTATUS(st);
    copy_str(bad, sizeof bad, dir);
    for (i = 1; i <= len; i++) {
        if (bad[i] != '/' && bad[i] != '\0') continue;
        if (++k == want) {
            bad[i] = '\0';
            break;
        }
    }
    tb_seterr(err, "%s: user " SUT_OS_PG_USER " (PostgreSQL cannot run as root) cannot enter %s; "
                   "chmod o+x it or choose another --dir", dir, bad);
    return -1;
}

/* Runs initdb into datadir unless it already holds a cluster. */
static int pg_initdb(const char *bindir, const char *datadir, const char *logpath, const run_as *ra,
                     char *err) {
    char pgver[PATH_MAX], initdb[PATH_MAX], dd[PATH_MAX + 16], tail[160];
    struct stat sb;
    int st;
    pid_t pid;

    if (path_join(pgver, sizeof pgver, datadir, "PG_VERSION") != 0) {
        tb_seterr(err, "%s: path too long", datadir);
        return TB_SUT_EUSAGE;
    }
    if (stat(pgver, &sb) == 0) return 0; /* reuse: tb_oltp_load recreates the data anyway */
    if (mkdir(datadir, 0700) != 0 && errno != EEXIST) {
        tb_seterr(err, "mkdir %s: %s", datadir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (ra->active && chown(datadir, ra->uid, ra->gid) != 0) {
        tb_seterr(err, "chown %s to " SUT_OS_PG_USER ": %s", datadir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (path_join(initdb, sizeof initdb, bindir, "initdb") != 0) {
        tb_seterr(err, "%s: path too long", bindir);
        return TB_SUT_EUSAGE;
    }
    snprintf(dd, sizeof dd, "--pgdata=%s", datadir);
    /* C locale: identical sort order and plans on every host, whatever LANG says.
     * --no-sync: the cluster is scratch space rebuilt by every `sut up`; the
     * running server itself keeps fsync and synchronous_commit on. */
    char *argv[] = {initdb, dd, "--username=" SUT_PG_USER, "--auth=trust", "--encoding=UTF8", "--locale=C",
                    "--no-sync", NULL};
    int sprc;
    pid = spawn_logged(argv, ra, logpath, &sprc, err);
    if (pid < 0) return sprc;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    log_tail(logpath, tail, sizeof tail);
    tb_seterr(err, "initdb failed (status %d), see %s: %s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, logpath, tail);
    return TB_SUT_ESTART;
}

/*
 * PostgreSQL's max_connections for `tiles` tiles: 100 for tools, probes and
 * the superuser reserve, plus 20 per tile, which holds a tile's web app (4
 * connections) and the standard tile's 10 OLTP users with room for a tile
 * file that gives OLTP more users. A fixed 1000 let only 71 standard tiles
 * connect. Capped at 10000 (each slot costs shared memory: the lock table
 * alone holds max_locks_per_transaction = 64 entries per connection).
 */
int tb_sut_pg_max_connections(int tiles) {
    long n = 100 + 20L * (tiles > 0 ? tiles : 1);
    return n > 10000 ? 10000 : (int)n;
}

/* Starts the postmaster; settings go on its command line so that they win
 * over whatever postgresql.conf of a reused data folder says. */
static int pg_start(const char *bindir, const char *datadir, const char *sockdir, int port, int tiles,
                    const char *logpath, const run_as *ra, svc *out, char *err) {
    char postgres[PATH_MAX], c_port[32], c_sock[PATH_MAX + 32], c_conns[48];
    pid_t pid;
    if (path_join(postgres, sizeof postgres, bindir, "postgres") != 0) {
        tb_seterr(err, "%s: path too long", bindir);
        return TB_SUT_EUSAGE;
    }
    snprintf(c_port, sizeof c_port, "port=%d", port);
    snprintf(c_sock, sizeof c_sock, "unix_socket_directories=%s", sockdir);
    snprintf(c_conns, sizeof c_conns, "max_connections=%d", tb_sut_pg_max_connections(tiles));
    char *argv[] = {postgres, "-D", (char *)datadir, "-c", "listen_addresses=" SUT_HOST, "-c", c_port,
                    "-c", c_sock, "-c", c_conns, "-c", "shared_buffers=128MB",
                    "-c", "logging_collector=off", "-c", "log_destination=stderr", NULL};
    int sprc;
    pid = spawn_logged(argv, ra, logpath, &sprc, err);
    if (pid < 0) return sprc;
    svc_record(out, pid, port, postgres);
    return 0;
}

/*
 * While a service starts: 0 when it still runs as ours, else TB_SUT_ESTART with
 * err saying how it ended (exit status or signal) and the last line of its log.
 */
static int check_starting(const char *name, const svc *s, const char *logpath, char *err) {
    char tail[160], how[48];
    int st = 0;
    pid_t w = waitpid(s->pid, &st, WNOHANG);
    if (w == 0) return 0; /* our child, still running */
    if (w == s->pid) {
        if (WIFEXITED(st)) snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st)) snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(st));
        else snprintf(how, sizeof how, "wait status %d", st);
    } else if (svc_alive(s) == ALIVE_OURS) {
        return 0;
    } else {
        snprintf(how, sizeof how, "gone");
    }
    log_tail(logpath, tail, sizeof tail);
    tb_seterr(err, "%s exited during startup (%s), see %s%s%s", name, how, logpath, tail[0] ? ": " : "", tail);
    return TB_SUT_ESTART;
}

/* Waits until the postmaster accepts connections (PQping). */
static int pg_wait(const svc *s, const char *logpath, uint64_t deadline, char *err) {
    char ci[160];
    pg_ping_conninfo(ci, sizeof ci, s->port);
    for (;;) {
        if (PQping(ci) == PQPING_OK) return 0;
        if (check_starting("postgresql", s, logpath, err) != 0) return TB_SUT_ESTART;
        if (tb_now_us() > deadline) {
            tb_seterr(err, "postgresql on port %d did not answer within %us, see %s", s->port,
                      SUT_START_TIMEOUT_US / 1000000u, logpath);
            return TB_SUT_ESTART;
        }
        sleep_us(SUT_POLL_US);
    }
}

/* Writes "what: <libpq message on one line>" into err. */
static void set_pg_err(char *err, const char *what, const char *msg) {
    char buf[TB_ERR_LEN];
    size_t i, len;
    copy_str(buf, sizeof buf, msg ? msg : "");
    len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) buf[--len] = '\0';
    for (i = 0; i < len; i++)
        if (buf[i] == '\n') buf[i] = ' ';
    tb_seterr(err, "%s: %s", what, buf);
}

/* Creates database db (a fixed identifier of ours) unless it exists. */
static int pg_create_db(int port, const char *db, char *err) {
    char ci[160], sql[128];
    PGconn *c;
    PGresult *r;
    int rc = 0;
    snprintf(ci, sizeof ci, "host=" SUT_HOST " port=%d dbname=postgres user=" SUT_PG_USER " connect_timeout=10",
             port);
    c = PQconnectdb(ci);
    if (PQstatus(c) != CONNECTION_OK) {
        set_pg_err(err, "postgresql: connect", PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    snprintf(sql, sizeof sql, "SELECT 1 FROM pg_database WHERE datname = '%s'", db);
    r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        set_pg_err(err, "postgresql: list databases", PQerrorMessage(c));
        rc = -1;
    } else if (PQntuples(r) == 0) {
        PQclear(r);
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
        r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            snprintf(sql, sizeof sql, "postgresql: create database %s", db);
            set_pg_err(err, sql, PQerrorMessage(c));
            rc = -1;
        }
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}

/* ---- Redis -------------------------------------------------------------- */

/* Writes s as a double-quoted redis.conf string. */
static void conf_quoted(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int redis_write_conf(const char *dir, int port, char *err) {
    char path[PATH_MAX], p[PATH_MAX];
    FILE *f;
    if (path_join(path, sizeof path, dir, "redis.conf") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    f = fopen(path, "w");
    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# Generated by `tilebench sut up` on every start; edits are overwritten.\n"
               "# A benchmark cache: loopback only, no persistence.\n"
               "bind " SUT_HOST "\nport %d\nprotected-mode no\ndaemonize no\n", port);
    fputs("dir ", f);
    conf_quoted(f, dir);
    fputs("\nlogfile ", f);
    if (path_join(p, sizeof p, dir, "redis.log") == 0) conf_quoted(f, p);
    fputs("\npidfile ", f);
    if (path_join(p, sizeof p, dir, "redis.pid") == 0) conf_quoted(f, p);
    fputs("\nsave \"\"\nappendonly no\nmaxclients 10000\n", f);
    if (fclose(f) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int redis_start(const char *binary, const char *dir, int port, const char *logpath, svc *out, char *err) {
    char conf[PATH_MAX], bin[PATH_MAX];
    pid_t pid;
    if (path_join(conf, sizeof conf, dir, "redis.conf") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    copy_str(bin, sizeof bin, binary);
    char *argv[] = {bin, conf, NULL};
    /* Until it opens its logfile, redis reports config errors on stderr. */
    int sprc;
    pid = spawn_logged(argv, NULL, logpath, &sprc, err);
    if (pid < 0) return sprc;
    svc_record(out, pid, port, binary);
    return 0;
}

/* 1 when redis on port answers PING with PONG. */
static int redis_ping(int port) {
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout(SUT_HOST, port, tv);
    int ok = 0;
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisReply *r = redisCommand(c, "PING");
        ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return ok;
}

static int redis_wait(const svc *s, const char *logpath, uint64_t deadline, char *err) {
    for (;;) {
        if (redis_ping(s->port)) return 0;
        if (check_starting("redis", s, logpath, err) != 0) return TB_SUT_ESTART;
        if (tb_now_us() > deadline) {
            tb_seterr(err, "redis on port %d did not answer PING within %us, see %s", s->port,
                      SUT_START_TIMEOUT_US / 1000000u, logpath);
            return TB_SUT_ESTART;
        }
        sleep_us(SUT_POLL_US);
    }
}

/* ---- Dovecot ------------------------------------------------------------ */

/*
 * 1 when a server on 127.0.0.1:port greets with a line starting with prefix
 * ("* OK" for IMAP, "220" for LMTP) within a second, else 0.
 */
static int mail_greets(int port, const char *prefix) {
    struct sockaddr_in sa;
    struct timeval tv = {1, 0};
    char buf[256];
    size_t got = 0;
    int ok = 0, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
            ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        ok = got >= strlen(prefix) && memcmp(buf, prefix, strlen(prefix)) == 0;
    }
    close(fd);
    return ok;
}

/* A fresh random password for the mail users: 32 hex digits from /dev/urandom. */
static int mail_password_new(char *out, size_t len, char *err) {
    unsigned char raw[16];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tb_seterr(err, "/dev/urandom: %s", strerror(errno));
        return -1;
    }
    while (got < sizeof raw) {
        ssize_t n = read(fd, raw + got, sizeof raw - got);
        if (n <= 0) {
            tb_seterr(err, "/dev/urandom: %s", n < 0 ? strerror(errno) : "short read");
            close(fd);
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    if (len < 2 * sizeof raw + 1) {
        tb_seterr(err, "mail password buffer too small");
        return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++) snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* Writes DIR/mail.secret (mode 0600): the password, one line. */
static int mail_secret_write(const char *dir, const char *password, char *err) {
    char path[PATH_MAX];
    int fd;
    size_t n = strlen(password);
    if (path_join(path, sizeof path, dir, "mail.secret") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, password, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (close(fd) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The owner of the maildirs: nobody/nogroup under root (mail users may not be
 * root: "userdb returned 0 as uid"), else the current user. */
typedef struct mail_owner {
    uid_t uid;
    gid_t gid;
    char user[64], group[64]; /* for default_internal_user and friends when not root */
} mail_owner;

static int mail_owner_lookup(mail_owner *mo, char *err) {
    struct passwd pw, *pr = NULL;
    struct group gr, *grp = NULL;
    char buf[4096];
    memset(mo, 0, sizeof *mo);
    if (geteuid() == 0) {
        if (getpwnam_r(SUT_MAIL_OWNER, &pw, buf, sizeof buf, &pr) != 0 || !pr) {
            tb_seterr(err, "user '" SUT_MAIL_OWNER "' does not exist (it owns the embedded Dovecot's maildirs)");
            return -1;
        }
        mo->uid = pw.pw_uid;
        if (getgrnam_r(SUT_MAIL_GROUP, &gr, buf, sizeof buf, &grp) != 0 || !grp) {
            tb_seterr(err, "group '" SUT_MAIL_GROUP "' does not exist (it owns the embedded Dovecot's maildirs)");
            return -1;
        }
        mo->gid = gr.gr_gid;
        copy_str(mo->user, sizeof mo->user, SUT_MAIL_OWNER);
        copy_str(mo->group, sizeof mo->group, SUT_MAIL_GROUP);
        return 0;
    }
    /* Not root: Dovecot runs every process as us (untested beyond a start). */
    mo->uid = geteuid();
    mo->gid = getegid();
    if (getpwuid_r(mo->uid, &pw, buf, sizeof buf, &pr) != 0 || !pr) {
        tb_seterr(err, "cannot find the name of uid %ld for Dovecot's users", (long)mo->uid);
        return -1;
    }
    copy_str(mo->user, sizeof mo->user, pw.pw_name);
    if (getgrgid_r(mo->gid, &gr, buf, sizeof buf, &grp) != 0 || !grp) {
        tb_seterr(err, "cannot find the name of gid %ld for Dovecot's users", (long)mo->gid);
        return -1;
    }
    copy_str(mo->group, sizeof mo->group, gr.gr_name);
    return 0;
}

/* Empties DIR/mail (every `up` starts with empty mailboxes, as the OLTP data
 * is reloaded) and hands it to the mail owner. */
static int mail_dir_reset(const char *dir, const mail_owner *mo, char *err) {
    char path[PATH_MAX];
    if (path_join(path, sizeof path, dir, "mail") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    if (remove_tree(path) != 0) {
        tb_seterr(err, "removing %s: %s", path, strerror(errno));
        return -1;
    }
    if (mkdir(path, 0755) != 0 || chmod(path, 0755) != 0) {
        tb_seterr(err, "mkdir %s: %s", path, strerror(errno));
        return -1;
    }
    if (chown(path, mo->uid, mo->gid) != 0) {
        tb_seterr(err, "chown %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * Writes DIR/dovecot.conf: the recipe of notes/dovecot.md (checked on Debian
 * 12 with Dovecot 2.3.19). Values are written unquoted: dir comes from
 * realpath and is checked for characters that would need quoting.
 */
static int dovecot_write_conf(const char *dir, const char *base, int imap_port, int lmtp_port,
                              const char *password, const mail_owner *mo, char *err) {
    char path[PATH_MAX];
    FILE *f;
    int root = geteuid() == 0;
    if (path_join(path, sizeof path, dir, "dovecot.conf") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    unlink(path); /* it holds the password: recreate with 0600 */
    {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            tb_seterr(err, "%s: %s", path, strerror(errno));
            if (fd >= 0) close(fd);
            return -1;
        }
    }
    fprintf(f,
            "# Generated by `tilebench sut up` on every start; edits are overwritten.\n"
            "# The embedded mail server: IMAP and LMTP on loopback, no TLS, one static\n"
            "# password for every user, maildirs in the run folder (notes/dovecot.md).\n"
            "base_dir = %s\n"
            "state_dir = %s/dovecot/state\n"
            "log_path = %s/dovecot.log\n"
            "instance_name = tilebench-%d\n"
            "protocols = imap lmtp\n"
            "listen = " SUT_HOST "\n"
            "ssl = no\n"
            "disable_plaintext_auth = no\n"
            "auth_mechanisms = plain login\n"
            "# RCPT TO:<tile1-user1@" SUT_MAIL_DOMAIN "> and LOGIN tile1-user1 are the same user\n"
            "auth_username_format = %%Ln\n"
            "mail_location = maildir:%s/mail/%%u\n"
            "passdb {\n  driver = static\n  args = password=%s\n}\n"
            "userdb {\n  driver = static\n  args = uid=%ld gid=%ld home=%s/mail/%%u\n}\n"
            "default_internal_user = %s\n"
            "default_internal_group = %s\n"
            "default_login_user = %s\n"
            "# A benchmark opens many sessions from one address: lift the per-user and\n"
            "# per-process limits that protect a public server.\n"
            "default_process_limit = 2000\n"
            "default_client_limit = 8000\n"
            "mail_max_userip_connections = 100\n"
            "service imap-login {\n"
            "  inet_listener imap {\n    address = " SUT_HOST "\n    port = %d\n  }\n"
            "  inet_listener imaps {\n    port = 0\n  }\n"
            "  # high-performance mode: login processes serve many connections\n"
            "  service_count = 0\n"
            "  process_min_avail = 1\n"
            "}\n"
            "service lmtp {\n"
            "  inet_listener lmtp {\n    address = " SUT_HOST "\n    port = %d\n  }\n"
            "}\n"
            "protocol lmtp {\n  postmaster_address = postmaster@" SUT_MAIL_DOMAIN "\n}\n",
            base, dir, dir, imap_port, dir, password, (long)mo->uid, (long)mo->gid, dir,
            root ? "dovecot" : mo->user, root ? "dovecot" : mo->group, root ? "dovenull" : mo->user, imap_port,
            lmtp_port);
    if (fclose(f) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Starts the dovecot master in the foreground (-F), so the pid recorded is
 * the master's own; it forks its imap, lmtp and auth processes itself. */
static int dovecot_start(const char *binary, const char *dir, int imap_port, const char *logpath, svc *out,
                         char *err) {
    char conf[PATH_MAX], bin[PATH_MAX];
    pid_t pid;
    if (path_join(conf, sizeof conf, dir, "dovecot.conf") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    copy_str(bin, sizeof bin, binary);
    char *argv[] = {bin, "-F", "-c", conf, NULL};
    /* Until it opens log_path, dovecot reports config errors on stderr. */
    int sprc;
    pid = spawn_logged(argv, NULL, logpath, &sprc, err);
    if (pid < 0) return sprc;
    svc_record(out, pid, imap_port, binary);
    return 0;
}

/* Waits until IMAP greets with "* OK" and LMTP with "220". */
static int dovecot_wait(const svc *s, int lmtp_port, const char *logpath, uint64_t deadline, char *err) {
    for (;;) {
        if (mail_greets(s->port, "* OK") && mail_greets(lmtp_port, "220")) return 0;
        if (check_starting("dovecot", s, logpath, err) != 0) return TB_SUT_ESTART;
        if (tb_now_us() > deadline) {
            tb_seterr(err, "dovecot on ports %d (imap) and %d (lmtp) did not greet within %us, see %s", s->port,
                      lmtp_port, SUT_START_TIMEOUT_US / 1000000u, logpath);
            return TB_SUT_ESTART;
        }
        sleep_us(SUT_POLL_US);
    }
}

/* Characters that would need quoting in dovecot.conf or break the recipe. */
static int conf_safe_path(const char *p) {
    for (; *p; p++)
        if (*p == ' ' || *p == '"' || *p == '\\' || *p == '#' || *p == '%' || *p == '$' || *p == '{' || *p == '}' ||
            *p == '\n' || *p == '=')
            return 0;
    return 1;
}

/* ---- the reference web application ---------------------------------------- */

/* 1 when GET /healthz on 127.0.0.1:port answers 200 within a second. */
static int web_healthy(int port) {
    static const char rq[] = "GET /healthz HTTP/1.1\r\nHost: " SUT_HOST "\r\nConnection: close\r\n\r\n";
    struct sockaddr_in sa;
    struct timeval tv = {1, 0};
    char buf[64];
    size_t got = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = 0;
    if (fd < 0) return 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && write(fd, rq, sizeof rq - 1) == (ssize_t)(sizeof rq - 1)) {
        while (got < 12) {
            ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        buf[got] = '\0';
        ok = got >= 12 && strncmp(buf, "HTTP/1.", 7) == 0 && strncmp(buf + 8, " 200", 4) == 0;
    }
    close(fd);
    return ok;
}

/* Starts `tilebench webapp` (this very binary) for tile on port, its output
 * appended to DIR/web.tileN.log. */
static int web_start(const char *self, const char *dir, int tile, int port, const char *pg_conninfo,
                     const tb_sut_endpoints *ep, svc *out, char *err) {
    char bin[PATH_MAX], logpath[PATH_MAX], listen[32], tilearg[16], redis[160], conninfo[512], name[32];
    int sprc;
    pid_t pid;
    snprintf(name, sizeof name, "web.tile%d.log", tile);
    if (path_join(logpath, sizeof logpath, dir, name) != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    copy_str(bin, sizeof bin, self);
    copy_str(conninfo, sizeof conninfo, pg_conninfo);
    snprintf(listen, sizeof listen, SUT_HOST ":%d", port);
    snprintf(tilearg, sizeof tilearg, "%d", tile);
    snprintf(redis, sizeof redis, "%s:%d", ep->redis_host, ep->redis_port);
    char *argv[] = {bin, "webapp", "--listen", listen, "--pg", conninfo, "--tile", tilearg, "--redis", redis, NULL};
    pid = spawn_logged(argv, NULL, logpath, &sprc, err);
    if (pid < 0) return sprc;
    svc_record(out, pid, port, self);
    return 0;
}

/* Waits until every web app answers /healthz. */
static int web_wait(const sut_state *st, const char *dir, uint64_t deadline, char *err) {
    for (int t = 0; t < st->n_web; t++) {
        char name[32], logpath[PATH_MAX];
        snprintf(name, sizeof name, "web.tile%d", t + 1);
        snprintf(logpath, sizeof logpath, "%s/%s.log", dir, name);
        for (;;) {
            if (web_healthy(st->web[t].port)) break;
            if (check_starting(name, &st->web[t], logpath, err) != 0) return TB_SUT_ESTART;
            if (tb_now_us() > deadline) {
                tb_seterr(err, "%s on port %d did not answer /healthz within %us, see %s", name, st->web[t].port,
                          SUT_START_TIMEOUT_US / 1000000u, logpath);
                return TB_SUT_ESTART;
            }
            sleep_us(SUT_POLL_US);
        }
    }
    return 0;
}

/* ---- sut.ini ------------------------------------------------------------ */

static int write_ini(const char *dir, const tb_sut_endpoints *ep, int tiles, char *err) {
    char path[PATH_MAX], tmp[PATH_MAX], when[32];
    FILE *f;
    if (path_join(path, sizeof path, dir, "sut.ini") != 0 || path_join(tmp, sizeof tmp, dir, "sut.ini.tmp") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    tb_format_wall(tb_wall_us(), when, sizeof when);
    f = fopen(tmp, "w");
    if (!f) {
        tb_seterr(err, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f,
            "; Endpoints of the embedded SUT, written by `tilebench sut up` (tilebench %s) at %s.\n"
            "; Servers run from %s; stop them with: tilebench sut down --dir %s\n"
            "; OLTP data: schemas tile1 to tile%d in database " SUT_PG_DB
            " (search_path is not part of pg; each tile uses its own schema).\n"
            "; Mail: Dovecot IMAP, and LMTP delivery straight into it (no MTA in front).\n"
            "; Users are mail_user with %%t = tile, %%u = user (1-based), any number of them;\n"
            "; the password is in mail_password_file, so this text (which a run stores) holds none.\n"
            "; This section can be copied into a tile config to target these servers.\n"
            "[sut]\n"
            "pg = %s\n"
            "redis = %s:%d\n"
            "imap = %s:%d\n"
            "lmtp = %s:%d\n"
            "mail_user = %s\n"
            "mail_domain = %s\n"
            "mail_password_file = %s/mail.secret\n",
            TB_VERSION, when, dir, dir, tiles, ep->pg_conninfo, ep->redis_host, ep->redis_port, ep->imap_host,
            ep->imap_port, ep->lmtp_host, ep->lmtp_port, ep->mail_user, ep->mail_domain, dir);
    /* The reference web app: one process per tile. */
    if (ep->n_web_tile > 0)
        fprintf(f, "; Web: one reference app per tile, its data in schema web<N> of database " SUT_PG_WEB_DB "\n");
    for (int i = 0; i < ep->n_web_tile; i++) fprintf(f, "web.tile%d = %s\n", ep->web_tile[i].tile, ep->web_tile[i].url);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

typedef struct ini_ctx {
    tb_sut_endpoints *ep;
    char err[TB_ERR_LEN];
    int seen_pg, seen_redis, seen_imap;
} ini_ctx;

/* "HOST:PORT" into host (len bytes) and port; -1 when malformed. */
static int split_hostport(const char *value, char *host, size_t len, int *port) {
    const char *colon = strrchr(value, ':');
    char *end;
    long p = colon ? strtol(colon + 1, &end, 10) : 0;
    size_t hl = colon ? (size_t)(colon - value) : 0;
    if (!colon || hl == 0 || hl >= len || colon[1] == '\0' || *end != '\0' || p < 1 || p > 65535) return -1;
    memcpy(host, value, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

static int sut_ini_handler(void *user, const char *section, const char *name, const char *value) {
    ini_ctx *c = user;
    if (strcmp(section, "sut") != 0) return 1;
    if (strcmp(name, "pg") == 0) {
        if (strlen(value) >= sizeof c->ep->pg_conninfo) {
            snprintf(c->err, sizeof c->err, "[sut] pg: conninfo longer than %zu bytes", sizeof c->ep->pg_conninfo - 1);
            return 0;
        }
        copy_str(c->ep->pg_conninfo, sizeof c->ep->pg_conninfo, value);
        c->seen_pg = 1;
    } else if (strcmp(name, "web") == 0 || strncmp(name, "web.tile", 8) == 0) {
        tb_sut_endpoints *ep = c->ep;
        char *dst = ep->web_url, *end;
        if (strncmp(value, "http://", 7) != 0 || strlen(value) >= sizeof ep->web_url) {
            snprintf(c->err, sizeof c->err, "[sut] %s = '%.64s': expected an http:// URL", name, value);
            return 0;
        }
        if (name[3] == '.') {
            long t = strtol(name + 8, &end, 10);
            if (*end != '\0' || t < 1 || ep->n_web_tile >= TB_SUT_MAX_WEB_TILES) {
                snprintf(c->err, sizeof c->err, "[sut] %s: expected web.tileN with 1 <= N, at most %d", name,
                         TB_SUT_MAX_WEB_TILES);
                return 0;
            }
            ep->web_tile[ep->n_web_tile].tile = (int)t;
            dst = ep->web_tile[ep->n_web_tile++].url;
        }
        copy_str(dst, sizeof ep->web_url, value);
    } else if (strcmp(name, "redis") == 0) {
        const char *colon = strrchr(value, ':');
        char *end;
        long port = colon ? strtol(colon + 1, &end, 10) : 0;
        size_t hl = colon ? (size_t)(colon - value) : 0;
        if (!colon || hl == 0 || hl >= sizeof c->ep->redis_host || *end != '\0' || port < 1 || port > 65535) {
            snprintf(c->err, sizeof c->err, "[sut] redis = '%.64s': expected HOST:PORT", value);
            return 0;
        }
        memcpy(c->ep->redis_host, value, hl);
        c->ep->redis_host[hl] = '\0';
        c->ep->redis_port = (int)port;
        c->seen_redis = 1;
    } else if (strcmp(name, "imap") == 0 || strcmp(name, "lmtp") == 0 || strcmp(name, "smtp") == 0) {
        tb_sut_endpoints *ep = c->ep;
        int bad = name[0] == 'i'   ? split_hostport(value, ep->imap_host, sizeof ep->imap_host, &ep->imap_port)
                  : name[0] == 'l' ? split_hostport(value, ep->lmtp_host, sizeof ep->lmtp_host, &ep->lmtp_port)
                                   : split_hostport(value, ep->smtp_host, sizeof ep->smtp_host, &ep->smtp_port);
        if (bad) {
            snprintf(c->err, sizeof c->err, "[sut] %s = '%.64s': expected HOST:PORT", name, value);
            return 0;
        }
        if (name[0] == 'i') c->seen_imap = 1;
    } else if (strcmp(name, "mail_user") == 0 || strcmp(name, "mail_domain") == 0) {
        char *dst = name[5] == 'u' ? c->ep->mail_user : c->ep->mail_domain;
        size_t cap = name[5] == 'u' ? sizeof c->ep->mail_user : sizeof c->ep->mail_domain;
        if (strlen(value) >= cap) {
            snprintf(c->err, sizeof c->err, "[sut] %s: longer than %zu bytes", name, cap - 1);
            return 0;
        }
        copy_str(dst, cap, value);
    } else if (strcmp(name, "mail_password") == 0) {
        if (strlen(value) >= sizeof c->ep->mail_password) {
            snprintf(c->err, sizeof c->err, "[sut] mail_password: too long");
            return 0;
        }
        copy_str(c->ep->mail_password, sizeof c->ep->mail_password, value);
    } else if (strcmp(name, "mail_password_file") == 0) {
        char e[TB_ERR_LEN];
        if (tb_sut_read_password_file(value, c->ep->mail_password, sizeof c->ep->mail_password, e) != 0) {
            snprintf(c->err, sizeof c->err, "[sut] mail_password_file: %.200s", e);
            return 0;
        }
    }
    return 1;
}

/* ---- public API --------------------------------------------------------- */

int tb_sut_read_endpoints(const char *dir, tb_sut_endpoints *ep, char *err) {
    char path[PATH_MAX];
    ini_ctx c;
    int rc;
    memset(ep, 0, sizeof *ep);
    memset(&c, 0, sizeof c);
    c.ep = ep;
    if (path_join(path, sizeof path, dir, "sut.ini") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    rc = ini_parse(path, sut_ini_handler, &c);
    if (rc == -1) {
        tb_seterr(err, "%s: %s (start the SUT with `tilebench sut up --dir %s`)", path, strerror(errno), dir);
        return -1;
    }
    if (rc != 0) {
        tb_seterr(err, "%s:%d: %s", path, rc, c.err[0] ? c.err : "syntax error");
        return -1;
    }
    if (!c.seen_pg && !c.seen_redis && !c.seen_imap) {
        tb_seterr(err, "%s: no [sut] section with pg, redis or imap", path);
        return -1;
    }
    return 0;
}

#define SUT_MARKER ".tilebench-sut"

/*
 * Makes sure dir is ours to fill (and to empty: `up` empties DIR/mail and
 * rewrites the config files): an empty folder is claimed with a marker file;
 * a folder with the marker is ours; anything else is refused, so `--dir /var`
 * can never wipe /var/mail. 0, or -1 with err.
 */
static int claim_dir(const char *dir, char *err) {
    char marker[PATH_MAX];
    DIR *d;
    struct dirent *e;
    int empty = 1;
    FILE *f;
    if (path_join(marker, sizeof marker, dir, SUT_MARKER) != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    if (access(marker, F_OK) == 0) return 0;
    d = opendir(dir);
    if (!d) {
        tb_seterr(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) empty = 0;
    closedir(d);
    if (!empty) {
        tb_seterr(err, "%s is not empty and is not a tilebench SUT folder (no %s in it): choose a new or empty "
                       "folder, since `sut up` empties DIR/mail and rewrites its config files",
                  dir, SUT_MARKER);
        return -1;
    }
    f = fopen(marker, "w");
    if (!f || fputs("This folder belongs to `tilebench sut`: it may empty and rewrite what is in it.\n", f) < 0 ||
        fclose(f) != 0) {
        tb_seterr(err, "%s: %s", marker, strerror(errno));
        return -1;
    }
    return 0;
}

/* 1 with err when a stop was asked for (loading 200 tiles takes minutes). */
static int interrupted(const tb_sut_options *opt, char *err) {
    if (!opt->stop || !*opt->stop) return 0;
    tb_seterr(err, "interrupted while loading tile data");
    return 1;
}

int tb_sut_up(const tb_sut_options *opt, tb_sut_endpoints *ep, char *err) {
    char pgbin[PATH_MAX], redisbin[PATH_MAX], dir[PATH_MAX], datadir[PATH_MAX], sockdir[PATH_MAX];
    char pglog[PATH_MAX], redislog[PATH_MAX], dovecotbin[PATH_MAX], dovecotlog[PATH_MAX], dcbase[PATH_MAX];
    char password[64];
    static const char *const port_names[4] = {"postgresql", "redis", "imap", "lmtp"};
    int ports_in[4], ports[4];
    run_as ra;
    mail_owner mo;
    sut_state st, old;
    int pg_port = 0, redis_port = 0, imap_port = 0, lmtp_port = 0, rc, i;
    char web_conninfo[192];
    uint64_t deadline;

    memset(ep, 0, sizeof *ep);
    memset(&st, 0, sizeof st);
    memset(&ra, 0, sizeof ra);
    if (!opt || !opt->dir || !*opt->dir) {
        tb_seterr(err, "sut up: no run folder given");
        return TB_SUT_EUSAGE;
    }
    if (opt->tiles < 1 || opt->tiles > SUT_MAX_TILES) {
        tb_seterr(err, "sut up: tiles %d: must be 1..%d", opt->tiles, SUT_MAX_TILES);
        return TB_SUT_EUSAGE;
    }
    if (opt->pg_port < 0 || opt->pg_port > 65535 || opt->redis_port < 0 || opt->redis_port > 65535) {
        tb_seterr(err, "sut up: ports must be 0..65535 (0 = any free port)");
        return TB_SUT_EUSAGE;
    }

    /* Everything that can be checked before starting anything. */
    if (find_pg_bindir(pgbin, sizeof pgbin, err) != 0) return TB_SUT_EUSAGE;
    if (find_redis(redisbin, sizeof redisbin, err) != 0) return TB_SUT_EUSAGE;
    if (find_dovecot(dovecotbin, sizeof dovecotbin, err) != 0) return TB_SUT_EUSAGE;
    if (geteuid() == 0 && run_as_lookup(SUT_OS_PG_USER, &ra, err) != 0) return TB_SUT_EUSAGE;
    if (mail_owner_lookup(&mo, err) != 0) return TB_SUT_EUSAGE;
    if (mkdir_p(opt->dir, err) != 0) return TB_SUT_EUSAGE;
    if (!realpath(opt->dir, dir)) {
        tb_seterr(err, "%s: %s", opt->dir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (strlen(dir) > PATH_MAX - 64) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    if (!conf_safe_path(dir)) {
        tb_seterr(err, "%s: the run folder's path may not hold spaces or any of \"\\#%%$={} "
                       "(it goes into dovecot.conf unquoted)", dir);
        return TB_SUT_EUSAGE;
    }
    if (claim_dir(dir, err) != 0) return TB_SUT_EUSAGE;
    rc = read_state(dir, &old, err);
    if (rc < 0) return TB_SUT_EUSAGE;
    if (rc == 0) {
        for (i = 0; i < SVC_N + old.n_web; i++) {
            const svc *o = i < SVC_N ? &old.s[i] : &old.web[i - SVC_N];
            int a = svc_alive(o);
            if (a == ALIVE_OURS || a == ALIVE_UNKNOWN) {
                char name[32];
                if (i < SVC_N) copy_str(name, sizeof name, svc_names[i]);
                else snprintf(name, sizeof name, "web.tile%d", i - SVC_N + 1);
                tb_seterr(err, "a SUT is already running in %s (%s pid %ld); stop it with `tilebench sut down --dir %s`",
                          dir, name, (long)o->pid, dir);
                sut_state_free(&old);
                return TB_SUT_EUSAGE;
            }
        }
        remove_sockdir(old.sockdir, old.s[SVC_PG].port);
        remove_dovecot_base(old.dovecot_base);
        sut_state_free(&old);
    }
    if (ra.active && check_traversable(dir, &ra, err) != 0) return TB_SUT_EUSAGE;
    ports_in[0] = opt->pg_port;
    ports_in[1] = opt->redis_port;
    ports_in[2] = 0; /* any free port */
    ports_in[3] = 0;
    if (choose_ports(4, ports_in, port_names, ports, err) != 0) return TB_SUT_EUSAGE;
    pg_port = ports[0];
    redis_port = ports[1];
    imap_port = ports[2];
    lmtp_port = ports[3];

    if (path_join(datadir, sizeof datadir, dir, "pg") != 0 || path_join(pglog, sizeof pglog, dir, "pg.log") != 0 ||
        path_join(redislog, sizeof redislog, dir, "redis.log") != 0 ||
        path_join(dovecotlog, sizeof dovecotlog, dir, "dovecot.log") != 0 ||
        path_join(dcbase, sizeof dcbase, dir, "dovecot") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    if (mkdir_p(dcbase, err) != 0) return TB_SUT_EUSAGE;
    /* Dovecot's sockets live in base_dir and must fit in sun_path. */
    if (strlen(dcbase) + SUT_DOVECOT_SOCK_NAME_MAX > SUT_UNIX_PATH_MAX) {
        snprintf(dcbase, sizeof dcbase, "/tmp/tilebench-dovecot-XXXXXX");
        if (!mkdtemp(dcbase)) {
            tb_seterr(err, "mkdtemp %s: %s", dcbase, strerror(errno));
            return TB_SUT_EUSAGE;
        }
        chmod(dcbase, 0755);
        copy_str(st.dovecot_base, sizeof st.dovecot_base, dcbase);
    } else {
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/base", dcbase);
        copy_str(dcbase, sizeof dcbase, sub);
        if (mkdir_p(dcbase, err) != 0) return TB_SUT_EUSAGE;
    }
    st.lmtp_port = lmtp_port;
    /* The socket path DIR/pg/.s.PGSQL.PORT.lock must fit in sun_path. */
    if (strlen(datadir) + strlen("/.s.PGSQL.65535.lock") <= SUT_UNIX_PATH_MAX) {
        copy_str(sockdir, sizeof sockdir, datadir);
    } else {
        snprintf(sockdir, sizeof sockdir, "/tmp/tilebench-pg-XXXXXX");
        if (!mkdtemp(sockdir)) {
            tb_seterr(err, "mkdtemp %s: %s", sockdir, strerror(errno));
            return TB_SUT_EUSAGE;
        }
        if (ra.active && chown(sockdir, ra.uid, ra.gid) != 0) {
            tb_seterr(err, "chown %s: %s", sockdir, strerror(errno));
            rmdir(sockdir);
            return TB_SUT_EUSAGE;
        }
        copy_str(st.sockdir, sizeof st.sockdir, sockdir);
    }

    /* Redis first: it starts while initdb runs. */
    rc = redis_write_conf(dir, redis_port, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0) rc = redis_start(redisbin, dir, redis_port, redislog, &st.s[SVC_REDIS], err);
    if (rc == 0) rc = write_state(dir, &st, err) != 0 ? TB_SUT_ESTART : 0;
    /* Dovecot next, also while initdb runs. */
    if (rc == 0) rc = mail_password_new(password, sizeof password, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = mail_secret_write(dir, password, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0) rc = mail_dir_reset(dir, &mo, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0)
        rc = dovecot_write_conf(dir, dcbase, imap_port, lmtp_port, password, &mo, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0) rc = dovecot_start(dovecotbin, dir, imap_port, dovecotlog, &st.s[SVC_DOVECOT], err);
    if (rc == 0) rc = write_state(dir, &st, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = pg_initdb(pgbin, datadir, pglog, &ra, err);
    if (rc == 0) rc = pg_start(pgbin, datadir, sockdir, pg_port, opt->tiles, pglog, &ra, &st.s[SVC_PG], err);
    if (rc == 0) rc = write_state(dir, &st, err) != 0 ? TB_SUT_ESTART : 0;
    deadline = tb_now_us() + SUT_START_TIMEOUT_US;
    if (rc == 0) rc = pg_wait(&st.s[SVC_PG], pglog, deadline, err);
    if (rc == 0) rc = redis_wait(&st.s[SVC_REDIS], redislog, deadline, err);
    if (rc == 0) rc = dovecot_wait(&st.s[SVC_DOVECOT], lmtp_port, dovecotlog, deadline, err);
    if (rc == 0) rc = pg_create_db(pg_port, SUT_PG_DB, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = pg_create_db(pg_port, SUT_PG_WEB_DB, err) != 0 ? TB_SUT_ESTART : 0;
    snprintf(web_conninfo, sizeof web_conninfo,
             "host=" SUT_HOST " port=%d dbname=" SUT_PG_WEB_DB " user=" SUT_PG_USER, pg_port);

    snprintf(ep->pg_conninfo, sizeof ep->pg_conninfo,
             "host=" SUT_HOST " port=%d dbname=" SUT_PG_DB " user=" SUT_PG_USER, pg_port);
    copy_str(ep->redis_host, sizeof ep->redis_host, SUT_HOST);
    ep->redis_port = redis_port;
    copy_str(ep->imap_host, sizeof ep->imap_host, SUT_HOST);
    ep->imap_port = imap_port;
    copy_str(ep->lmtp_host, sizeof ep->lmtp_host, SUT_HOST);
    ep->lmtp_port = lmtp_port;
    copy_str(ep->mail_user, sizeof ep->mail_user, SUT_MAIL_USER_PATTERN);
    copy_str(ep->mail_domain, sizeof ep->mail_domain, SUT_MAIL_DOMAIN);
    copy_str(ep->mail_password, sizeof ep->mail_password, password);

    for (i = 1; rc == 0 && i <= opt->tiles; i++) {
        uint64_t t0 = tb_now_us();
        if (interrupted(opt, err)) rc = TB_SUT_EINTR;
        else if (tb_oltp_load(ep->pg_conninfo, i, err) != 0) rc = TB_SUT_ESTART;
        else tb_log(TB_LOG_DEBUG, "oltp data for tile %d loaded in %.2fs", i, (double)(tb_now_us() - t0) / 1e6);
    }
    /* The reference web app: data, then one process per tile on a free port,
     * all started before waiting on any. */
    if (rc == 0) {
        int web_users = opt->web_users > 0 ? opt->web_users : TB_WEB_DEFAULT_USERS;
        int n_web = opt->tiles < TB_SUT_MAX_WEB_TILES ? opt->tiles : TB_SUT_MAX_WEB_TILES;
        char self[PATH_MAX];
        int *fds = xcalloc((size_t)n_web, sizeof *fds), *wports = xcalloc((size_t)n_web, sizeof *wports), nfd = 0;
        if (n_web < opt->tiles)
            tb_log(TB_LOG_WARN, "sut up: the reference web app runs for tiles 1..%d only (of %d)", n_web, opt->tiles);
        if (!realpath("/proc/self/exe", self)) {
            tb_seterr(err, "/proc/self/exe: %s", strerror(errno));
            rc = TB_SUT_EUSAGE;
        }
        for (i = 1; rc == 0 && i <= n_web; i++) {
            uint64_t t0 = tb_now_us();
            if (interrupted(opt, err)) rc = TB_SUT_EINTR;
            else if (tb_web_load(web_conninfo, i, web_users, err) != 0) rc = TB_SUT_ESTART;
            else tb_log(TB_LOG_DEBUG, "web data for tile %d loaded in %.2fs", i, (double)(tb_now_us() - t0) / 1e6);
        }
        /* Every probe socket stays open until all ports are chosen. */
        for (i = 0; rc == 0 && i < n_web; i++) {
            fds[i] = port_probe(0, "web", &wports[i], err);
            if (fds[i] < 0) rc = TB_SUT_EUSAGE;
            else nfd++;
        }
        for (i = 0; i < nfd; i++) close(fds[i]);
        for (i = 1; rc == 0 && i <= n_web; i++) {
            rc = web_start(self, dir, i, wports[i - 1], web_conninfo, ep, state_web(&st, i), err);
            if (rc == 0) rc = write_state(dir, &st, err) != 0 ? TB_SUT_ESTART : 0;
        }
        if (rc == 0) rc = web_wait(&st, dir, tb_now_us() + SUT_START_TIMEOUT_US, err);
        for (i = 1; rc == 0 && i <= n_web; i++) {
            ep->web_tile[ep->n_web_tile].tile = i;
            snprintf(ep->web_tile[ep->n_web_tile++].url, sizeof ep->web_tile[0].url, "http://" SUT_HOST ":%d",
                     wports[i - 1]);
        }
        free(fds);
        free(wports);
    }
    if (rc == 0) rc = write_ini(dir, ep, opt->tiles, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) {
        sut_state_free(&st);
        return 0;
    }

    /* Failure part-way: stop what this call started, keep the logs. */
    {
        char e2[TB_ERR_LEN];
        char path[PATH_MAX];
        if (stop_all(&st, e2) != 0) tb_log(TB_LOG_WARN, "sut up cleanup: %s", e2);
        else if (path_join(path, sizeof path, dir, "sut.state") == 0) unlink(path);
        sut_state_free(&st);
    }
    memset(ep, 0, sizeof *ep);
    return rc;
}

int tb_sut_down(const char *dir, char *err) {
    sut_state st;
    char path[PATH_MAX];
    int rc = read_state(dir, &st, err);
    if (rc == 1) return 0; /* nothing was started here (or it is already down) */
    if (rc < 0) return -1;
    rc = stop_all(&st, err);
    sut_state_free(&st);
    if (rc != 0) return -1;
    /* The endpoints are gone with the servers; data and logs stay for a look. */
    if (path_join(path, sizeof path, dir, "sut.ini") == 0) unlink(path);
    if (path_join(path, sizeof path, dir, "sut.state") == 0) unlink(path);
    return 0;
}

int tb_sut_status(const char *dir, FILE *f, char *err) {
    sut_state st;
    int rc = read_state(dir, &st, err), down = 0, i;
    if (rc == 1) {
        tb_seterr(err, "no SUT in %s (no sut.state; start one with `tilebench sut up --dir %s`)", dir, dir);
        return -1;
    }
    if (rc < 0) return -1;
    for (i = 0; i < SVC_N + st.n_web; i++) {
        const svc *s = i < SVC_N ? &st.s[i] : &st.web[i - SVC_N];
        const char *word = "down", *note = "";
        char log[PATH_MAX + 16], name[32];
        if (i < SVC_N) copy_str(name, sizeof name, svc_names[i]);
        else snprintf(name, sizeof name, "web.tile%d", i - SVC_N + 1);
        if (!s->present) {
            if (i >= SVC_N) continue; /* a tile without a web app (beyond the web tiles) */
            fprintf(f, "%-10s  down  (not started)\n", name);
            down++;
            continue;
        }
        if (i < SVC_N)
            snprintf(log, sizeof log, "%s/%s", dir, i == SVC_PG ? "pg.log" : i == SVC_REDIS ? "redis.log" : "dovecot.log");
        else snprintf(log, sizeof log, "%s/%s.log", dir, name);
        switch (svc_alive(s)) {
        case ALIVE_OURS: {
            char ci[160];
            pg_ping_conninfo(ci, sizeof ci, s->port);
            if (i == SVC_PG      ? PQping(ci) == PQPING_OK
                : i == SVC_REDIS ? redis_ping(s->port)
                : i >= SVC_N     ? web_healthy(s->port)
                                 : mail_greets(s->port, "* OK") && (st.lmtp_port <= 0 || mail_greets(st.lmtp_port, "220")))
                word = "up";
            else note = "  (running but not answering)";
            break;
        }
        case ALIVE_UNKNOWN: note = "  (cannot inspect the process)"; break;
        case ALIVE_REUSED: note = "  (exited; the pid now belongs to another process)"; break;
        default: note = "  (exited)"; break;
        }
        if (strcmp(word, "up") != 0) down++;
        fprintf(f, "%-10s  %-4s  pid %-7ld  " SUT_HOST ":%-5d  log %s%s\n", name, word, (long)s->pid, s->port, log,
                note);
    }
    sut_state_free(&st);
    return down;
}

