/*
 * spawn.h: run a child program to completion, the one way tilebench does it
 * (ipmitool, campaign apply/revert commands, the SUT's one-shot tools).
 *
 * The child gets stdin from /dev/null and stdout+stderr on one pipe; the
 * parent keeps up to output_max bytes of it (the rest is read and dropped,
 * so the child never blocks on a full pipe) and may see every chunk live
 * through on_output. A deadline or a stop flag ends the child: its process
 * group gets SIGTERM, then SIGKILL after grace_us. The child inherits no
 * descriptor of the parent's but stdin, stdout and stderr. The child can run in its
 * own process group (so its own children are stopped too) and as another
 * user (dropped before exec). Signal handlers the parent installed are reset
 * to their defaults in the child.
 */
#ifndef TB_COMMON_SPAWN_H
#define TB_COMMON_SPAWN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tb_common.h"

typedef struct {
    const char *path;        /* program to execve (with argv), or NULL with shell */
    const char *const *argv; /* argv[0] .. NULL */
    const char *shell;       /* instead of path/argv: run with /bin/sh -c */
    char *const *envp;       /* environment; NULL: the parent's */
    const char *dir;         /* working folder of the child; NULL: the parent's */
    size_t output_max;       /* bytes of output kept (0: 64 KiB) */
    uint64_t timeout_us;     /* 0: no deadline */
    uint64_t grace_us;       /* SIGTERM to SIGKILL (0: 5 s); 1: SIGKILL at once */
    int new_group;           /* run in a process group of its own, signalled as a group */
    int reap_group;          /* with new_group: once the child has exited, SIGKILL what it left
                                running in its group (a command's background jobs) */
    int drop;                /* switch to uid/gid (and no supplementary groups) before exec */
    uid_t uid;
    gid_t gid;
    volatile sig_atomic_t *stop;                               /* when it becomes non-zero, the child is stopped */
    void (*on_output)(void *arg, const char *chunk, size_t n); /* each chunk as it arrives */
    void *arg;
} tb_spawn_opts;

typedef struct {
    char *output; /* heap, NUL-terminated, at most output_max bytes (never NULL after tb_spawn_run) */
    size_t output_len;
    int output_cut; /* more output came than was kept */
    int exited;     /* exited normally: exit_status is valid */
    int exit_status;
    int signal;    /* the signal that ended it, or 0 */
    int timed_out; /* ended because of timeout_us */
    int stopped;   /* ended because *stop became set */
} tb_spawn_result;

/*
 * Runs the child and waits for it. Returns 0 when it ran (see r), -1 with err
 * ("fork: ...", "pipe: ...") when it could not be started; r->output is set
 * either way. An exec failure shows as exit status 127 with the reason in the
 * output.
 */
int tb_spawn_run(const tb_spawn_opts *o, tb_spawn_result *r, char *err) TB_WUR;
/* "exit status 2", "killed by signal 9 (Killed)", "timed out after 2s", ... */
void tb_spawn_describe(const tb_spawn_result *r, const tb_spawn_opts *o, char *buf, size_t len);
void tb_spawn_result_free(tb_spawn_result *r);

/* For a child forked elsewhere (broker/tunnel.c): closes every descriptor
 * from lowfd up; async-signal-safe, for use between fork and exec. */
void tb_spawn_close_from(int lowfd);
/* The first executable PATH/name into buf (PATH unset: /usr/local/bin,
 * /usr/bin, /bin); 0, or -1 when none is found. */
int tb_spawn_find(const char *name, char *buf, size_t len);

#endif
