/*
 * store_internal.h: internal to results/. The SQLite handle of a store, for
 * the model reader (model_read.c, model_levels.c) and the store's own white-box
 * unit tests only; every other caller reads through the model (model.h). And
 * the schema's migrations, which store.c applies.
 */
#ifndef TB_RESULTS_STORE_INTERNAL_H
#define TB_RESULTS_STORE_INTERNAL_H

#include "results/store.h"

struct sqlite3;

struct sqlite3 *tb_store_db(tb_store *s);

/* The migrations (store_schema.c): entry i takes the schema from version i
 * to i + 1, one SQL text each. */
extern const char *const tb_store_migrations[TB_STORE_SCHEMA_VERSION];

#endif
