/*
 * store_internal.h: internal to results/. The SQLite handle of a store, for
 * the model reader (model_read.c, model_levels.c) and the store's own white-box
 * unit tests only; every other caller reads through the model (model.h).
 */
#ifndef TB_RESULTS_STORE_INTERNAL_H
#define TB_RESULTS_STORE_INTERNAL_H

#include "results/store.h"

struct sqlite3;

struct sqlite3 *tb_store_db(tb_store *s);

#endif
