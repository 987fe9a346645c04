/*
 * infra.c: the runner of infrastructure operations (infra/infra.h).
 */
#include "infra/infra.h"

int tb_infra_users(const tb_infra_def *d, int tiles) {
    int per = d->tiles_per_user > 0 ? d->tiles_per_user : 1;
    int n = (tiles + per - 1) / per;
    return n > 0 ? n : 1;
}
