/*
 * spawn.c: run a child to completion with captured, capped output, a
 * deadline and a stop flag (spawn.h).
 */
#define _DEFAULT_SOURCE /* setgroups */
#include "common/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"

#define SPAWN_DEFAULT_MAX      (64 * 1024)
#define SPAWN_DEFAULT_GRACE_US 5000000ULL
#define SPAWN_TICK_MS          200
#define SPAWN_TURN_CHUNKS      16 /* reads per turn: 64 KiB */
#define SPAWN_LAST_CHUNKS      64 /* after the exit: 256 KiB, more than a pipe holds */

extern char **environ;

/* In the child: a message on fd 2 with async-signal-safe calls only. */
static void child_say(const char *what, const char *name, int e) {
    char num[16];
    int i = (int)sizeof num;
    unsigned v = (unsigned)e;
    num[--i] = '\0';
    do {
        num[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    (void)!write(2, what, strlen(what));
    (void)!write(2, name, strlen(name));
    (void)!write(2, " (errno ", 8);
    (void)!write(2, num + i, strlen(num + i));
    (void)!write(2, ")\n", 2);
}

void tb_spawn_close_from(int lowfd) {
    long max;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0U) == 0) return;
#endif
    max = sysconf(_SC_OPEN_MAX);
    if (max <= 0 || max > 65536) max = 65536;
    for (long fd = lowfd; fd < max; fd++)
        close((int)fd);
}

int tb_spawn_find(const char *name, char *buf, size_t len) {
    const char *p = getenv("PATH");
    if (!p || !*p) p = "/usr/local/bin:/usr/bin:/bin";
    while (*p) {
        size_t n = strcspn(p, ":");
        if (n > 0 && (size_t)snprintf(buf, len, "%.*s/%s", (int)n, p, name) < len && access(buf, X_OK) == 0) return 0;
        p += n;
        if (*p == ':') p++;
    }
    return -1;
}

/* In the child, after fork: never returns. */
static void child(const tb_spawn_opts *o, int wfd) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2};
    struct sigaction sa;
    sigset_t none;
    int devnull = open("/dev/null", O_RDONLY);
    if (o->new_group) setpgid(0, 0);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(wfd, 1);
    dup2(wfd, 2);
    if (wfd > 2) close(wfd);
    if (devnull > 2) close(devnull);
    tb_spawn_close_from(3); /* the program gets none of ours (sockets, the results database) */
    if (o->dir && chdir(o->dir) != 0) {
        child_say("cannot enter the folder ", o->dir, errno);
        _exit(126);
    }
    if (o->drop && (setgroups(0, NULL) != 0 || setgid(o->gid) != 0 || setuid(o->uid) != 0)) {
        child_say("cannot switch user for ", o->shell ? "/bin/sh" : o->path, errno);
        _exit(126);
    }
    if (o->shell) {
        execle("/bin/sh", "sh", "-c", o->shell, (char *)NULL, o->envp ? o->envp : environ);
        child_say("cannot execute ", "/bin/sh", errno);
    } else {
        execve(o->path, (char *const *)o->argv, o->envp ? o->envp : environ);
        child_say("cannot execute ", o->path, errno);
    }
    _exit(127);
}

typedef struct {
    const tb_spawn_opts *o;
    tb_spawn_result *r;
    tb_buf out;
    pid_t pid;
    int fd;
    int termed, killed, exited, status;
    uint64_t deadline, kill_at;
} spawn_state;

static void signal_child(spawn_state *s, int sig) { kill(s->o->new_group ? -s->pid : s->pid, sig); }

/* Reads what the pipe holds now, at most max_chunks reads (so a child that
 * writes faster than on_output consumes cannot keep the deadline and the stop
 * flag from being looked at); closes it at EOF or on an error. */
static void drain(spawn_state *s, int max_chunks) {
    char chunk[4096];
    for (int i = 0; i < max_chunks;) {
        ssize_t n = read(s->fd, chunk, sizeof chunk);
        if (n > 0) {
            size_t room = s->out.max - s->out.len, keep = (size_t)n < room ? (size_t)n : room;
            if (keep < (size_t)n) s->r->output_cut = 1;
            if (keep && tb_buf_add(&s->out, chunk, keep) != 0) s->r->output_cut = 1;
            if (s->o->on_output) s->o->on_output(s->o->arg, chunk, (size_t)n);
            i++;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        close(s->fd);
        s->fd = -1;
        return;
    }
}

/* The deadline, the stop flag and the SIGTERM-to-SIGKILL grace. */
static void police(spawn_state *s, uint64_t now) {
    uint64_t grace = s->o->grace_us ? s->o->grace_us : SPAWN_DEFAULT_GRACE_US;
    if (!s->termed) {
        if (s->deadline && now >= s->deadline)
            s->r->timed_out = 1;
        else if (s->o->stop && *s->o->stop)
            s->r->stopped = 1;
        else
            return;
        s->termed = 1;
        if (grace <= 1) {
            signal_child(s, SIGKILL);
            s->killed = 1;
        } else {
            signal_child(s, SIGTERM);
            s->kill_at = now + grace;
        }
    } else if (!s->killed && now >= s->kill_at) {
        signal_child(s, SIGKILL);
        s->killed = 1;
    }
}

/* One turn: wait up to a tick for output, read a bounded share of it, then
 * look at the child. 1 when done. */
static int turn(spawn_state *s) {
    uint64_t now = tb_now_us();
    int ms = SPAWN_TICK_MS;
    police(s, now);
    if (s->deadline && !s->termed && s->deadline > now && (s->deadline - now) / 1000 + 1 < (uint64_t)ms)
        ms = (int)((s->deadline - now) / 1000 + 1);
    if (s->fd >= 0) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, ms) > 0) drain(s, SPAWN_TURN_CHUNKS);
    } else {
        (void)poll(NULL, 0, 20);
    }
    if (!s->exited) {
        pid_t w = waitpid(s->pid, &s->status, WNOHANG);
        if (w == s->pid)
            s->exited = 1;
        else if (w < 0 && errno != EINTR)
            return 1; /* lost: nothing more to wait for */
    }
    /* What the child wrote before it exited is in the pipe (at most the pipe's
     * size); a background grandchild may hold the pipe open and go on
     * writing: read a bounded amount more, never until it stops. */
    if (s->exited && s->fd >= 0) drain(s, SPAWN_LAST_CHUNKS);
    return s->exited;
}

int tb_spawn_run(const tb_spawn_opts *o, tb_spawn_result *r, char *err) {
    spawn_state s;
    int pfd[2];
    memset(r, 0, sizeof *r);
    memset(&s, 0, sizeof s);
    s.o = o;
    s.r = r;
    r->exit_status = -1;
    tb_buf_init(&s.out, o->output_max ? o->output_max : SPAWN_DEFAULT_MAX);
    if (!o->shell && (!o->path || !o->argv || !o->argv[0])) {
        tb_seterr(err, "spawn: no program given");
        r->output = tb_buf_take(&s.out, &r->output_len);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    if (pipe(pfd) != 0) {
        tb_seterr(err, "pipe: %s", strerror(errno));
        r->output = tb_buf_take(&s.out, &r->output_len);
        return -1;
    }
    s.pid = fork();
    if (s.pid < 0) {
        tb_seterr(err, "fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        r->output = tb_buf_take(&s.out, &r->output_len);
        return -1;
    }
    if (s.pid == 0) {
        close(pfd[0]);
        child(o, pfd[1]);
    }
    if (o->new_group) setpgid(s.pid, s.pid); /* also here: whichever runs first */
    close(pfd[1]);
    s.fd = pfd[0];
    (void)fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) | O_NONBLOCK);
    (void)fcntl(s.fd, F_SETFD, FD_CLOEXEC);
    if (o->timeout_us) s.deadline = tb_now_us() + o->timeout_us;
    while (!turn(&s)) {
    }
    /* Stopped or timed out: what is left of its group (a grandchild that
     * ignored SIGTERM after the child itself died) gets SIGKILL now. */
    if ((s.termed || o->reap_group) && o->new_group) kill(-s.pid, SIGKILL);
    if (s.fd >= 0) close(s.fd);
    if (s.exited && WIFEXITED(s.status)) {
        r->exited = 1;
        r->exit_status = WEXITSTATUS(s.status);
    } else if (s.exited && WIFSIGNALED(s.status)) {
        r->signal = WTERMSIG(s.status);
    }
    r->output = tb_buf_take(&s.out, &r->output_len);
    return 0;
}

void tb_spawn_describe(const tb_spawn_result *r, const tb_spawn_opts *o, char *buf, size_t len) {
    char d[32];
    if (r->timed_out) {
        tb_format_duration(o ? o->timeout_us : 0, d, sizeof d);
        snprintf(buf, len, "timed out after %s", d);
    } else if (r->stopped) {
        snprintf(buf, len, "stopped (interrupted)");
    } else if (r->exited && r->exit_status == 127) {
        snprintf(buf, len, "exit status 127 (command not found?)");
    } else if (r->exited) {
        snprintf(buf, len, "exit status %d", r->exit_status);
    } else if (r->signal) {
        snprintf(buf, len, "killed by signal %d (%s)", r->signal, strsignal(r->signal));
    } else {
        snprintf(buf, len, "lost (waitpid failed)");
    }
}

void tb_spawn_result_free(tb_spawn_result *r) {
    free(r->output);
    r->output = NULL;
    r->output_len = 0;
}
