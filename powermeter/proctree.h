/*
 * proctree.h: the CPU time of process trees, read from /proc.
 *
 * Given root PIDs, the CPU time (user + system) of those processes and of
 * every descendant alive now, found by walking each process's parent PID
 * over /proc/PID/stat. Each process counts its own time (utime, stime) and
 * the time of its children it has already waited for (cutime, cstime), so
 * a child that exits and is reaped inside the tree moves its time to its
 * parent instead of taking it out of the sum: the total only grows while
 * the tree's processes reap their own children, which servers do (a
 * PostgreSQL backend, a Dovecot login process). Time of a process that
 * leaves the tree (reparented to init) is no longer counted.
 *
 * Uses: the meter emulator's load that follows the SUT's processes
 * (`meter sim --cpu IDLE:MAX --cpu-of PID`), and the host's CPU outside
 * given trees.
 *
 * TB_PROC_ROOT (environment) replaces "/proc" for tests.
 */
#ifndef TB_POWERMETER_PROCTREE_H
#define TB_POWERMETER_PROCTREE_H

#include <stdint.h>
#include <sys/types.h>

#include "common/tb_common.h"

/*
 * The CPU time, in seconds, of roots[0..n) and their descendants into
 * *cpu_s (each process counted once, also when roots overlap). Returns the
 * number of processes counted (0 when no root exists), or -1 with err when
 * /proc cannot be read. A process that exits while /proc is scanned is
 * skipped.
 */
int tb_proctree_cpu(const pid_t *roots, int n, double *cpu_s, char *err) TB_WUR;

/*
 * Parses one /proc/PID/stat line: pid, parent pid and its CPU clock ticks
 * (utime + stime + cutime + cstime). The command name may hold spaces and
 * ')': it ends at the line's last ')'. Returns 0, or -1 for a malformed line.
 */
int tb_proctree_parse_stat(const char *line, pid_t *pid, pid_t *ppid, uint64_t *ticks);

#endif
