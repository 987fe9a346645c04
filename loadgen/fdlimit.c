/*
 * fdlimit.c: whether this process may open the sockets a level's users
 * need (loadgen.h, tb_loadgen_fd_check), raising its soft limit when the
 * hard one allows.
 */
#include <stdio.h>
#include <sys/resource.h>

#include "loadgen/loadgen.h"

unsigned long long tb_loadgen_fd_need(const tb_tiledef *def, int tiles, unsigned long long *users) {
    unsigned long long u = 0, need = 0;
    for (int w = 0; w < def->n_workloads; w++) {
        const tb_workload_vt *vt = tb_workload_find(def->workloads[w].kind);
        int per = vt && vt->sockets_per_user > 0 ? vt->sockets_per_user : 2;
        u += (unsigned long long)def->workloads[w].users;
        need += (unsigned long long)per * (unsigned long long)def->workloads[w].users;
    }
    if (users) *users = u * (unsigned long long)tiles;
    return need * (unsigned long long)tiles + 256;
}

int tb_loadgen_fd_check(const tb_tiledef *def, int max_tiles, char *err) {
    struct rlimit rl;
    unsigned long long users = 0, need = tb_loadgen_fd_need(def, max_tiles, &users);
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        snprintf(err, TB_ERR_LEN,
                 "--tiles: %llu users at %d tiles need about %llu open files, and the limit is %llu (raise it with "
                 "ulimit -n, "
                 "or run fewer tiles or users)",
                 users, max_tiles, need, (unsigned long long)rl.rlim_cur);
        return -1;
    }
    return 0;
}
