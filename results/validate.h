/*
 * validate.h: the verdict of a stored run for `tilebench validate`: it passes
 * only when every selected load level passed QoS with every rule judged (a
 * rule not judged for too few ops is not a pass) and is valid (QoS pass and
 * validity are separate verdicts, both required), and, when every level is
 * selected, the run itself completed. Reads only.
 */
#ifndef TB_RESULTS_VALIDATE_H
#define TB_RESULTS_VALIDATE_H

#include <stdint.h>
#include <stdio.h>

#include "results/store.h"

/*
 * Checks run_id, all levels (tiles == 0) or only the levels with that many
 * tiles, and prints one line per level phase plus one per failing QoS rule
 * (observed vs limit), per rule not judged (ops vs the least it needs) and
 * per validity problem to f.
 * Returns 1 pass, 0 fail, -1 with err (database error, or no such level).
 */
int tb_validate_run(tb_store *s, int64_t run_id, int tiles, FILE *f, char *err);

#endif
