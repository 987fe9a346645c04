/*
 * web_load.h: the reference web application's data (Olio-like social
 * events) and its deterministic loader. Each tile gets its own PostgreSQL
 * schema "web<N>" in the SUT's database (next to the OLTP schema "tile<N>").
 *
 * Sizes follow Olio's rule: registered persons = 100 x the tile's concurrent
 * web users (source: Apache Olio, "number of users loaded = 100 x concurrent
 * users"). Per person there are TB_WEB_EVENTS_PER_PERSON events; every event
 * has 1..5 tags from a fixed list of TB_WEB_TAGS words, 0..20 attendees and
 * 0..10 comments. With the default 10 users per tile a tag matches about 150
 * events, so a TagSearch (capped at 125 rows) returns about 125 (Olio).
 *
 * Tables per schema: persons, events, tags, event_tags, attendees, comments,
 * tb_meta. Person k (1-based) has username 'user<k>' and password
 * 'password<k>' (benchmark data, not a secret). Event dates fall in
 * 2030-2031, so "upcoming" stays meaningful for years.
 * Loaded with COPY in one transaction; a tile whose tb_meta already holds
 * this data version and person count is skipped.
 */
#ifndef TB_SUT_WEB_LOAD_H
#define TB_SUT_WEB_LOAD_H

#include <stddef.h>

#include "common/tb_common.h"
#include "tiles/dataset.h"

/* Bumped whenever the generated data or the schema changes. */
#define TB_WEB_DATA_VERSION "1"

/* The generated tables, in load order. */
enum {
    TB_WEB_PERSONS = 0,
    TB_WEB_EVENTS,
    TB_WEB_TAGTABLE,
    TB_WEB_EVENT_TAGS,
    TB_WEB_ATTENDEES,
    TB_WEB_COMMENTS,
    TB_WEB_NTABLES
};

/*
 * Generates table `table` (TB_WEB_*) of tile (>= 1) for `users` concurrent
 * users as PostgreSQL COPY text (tab-separated, one row a line) into a
 * malloc'd buffer, length in *len. Deterministic: the same (tile, users)
 * give the same bytes on every host; different tiles get different data.
 * Caller frees. NULL for a bad table, tile or users (or if the text passed
 * its cap of 16 KiB per registered person).
 */
char *tb_web_generate(int tile, int users, int table, size_t *len);

/*
 * Creates schema web<tile> (tables, data through COPY, indexes, tb_meta)
 * for `users` concurrent web users (1..TB_WEB_MAX_USERS) over the libpq
 * conninfo, unless it already holds data of TB_WEB_DATA_VERSION for the same
 * person count (then it returns 0 at once); otherwise drops and recreates
 * the schema, in one transaction. 0, or -1 with err ("web load tile N: why").
 */
int tb_web_load(const char *conninfo, int tile, int users, char *err) TB_WUR;

#endif
