/*
 * oltp_load.h: the OLTP (DVD Store 2-like) schema and deterministic data
 * loader. Each tile gets its own PostgreSQL schema "tile<N>" in one database,
 * sized as DVD Store 2 "small": 20,000 customers, 10,000 products in 16
 * categories (source: dvdstore/ds2 README sizes).
 *
 * Tables per schema: categories, products, inventory, customers, orders,
 * orderlines, cust_hist, reorder. Functions (plpgsql, one statement per
 * request, as DS2's PostgreSQL stored procedures):
 *   login(username text, password text) -> int customerid (0 = no match)
 *   new_customer(firstname, lastname, ..., username, password) -> int customerid
 *   purchase(customerid int, prod_ids int[], quantities int[]) -> int orderid,
 *       0 when stock is short: nothing is changed (counted as a rollback).
 * Browse queries are plain SQL (see loadgen/oltp.c).
 * Customers are username 'user<i>' / password 'password' for i in 1..20000;
 * products 1..10000, category = 1 + (id-1) % 16; actor 'ACTOR <n>'; title 'TITLE <n>'.
 * Order history: 12 months x 1,000 orders from a PRNG seeded with the tile.
 * Loaded with COPY; a tile whose tb_meta says it holds this data version is
 * skipped, so reloading an existing SUT costs nothing.
 */
#ifndef TB_SUT_OLTP_LOAD_H
#define TB_SUT_OLTP_LOAD_H

#include "common/tb_common.h"
#include "tiles/dataset.h"

/* Bumped whenever the generated data changes, so `sut up` reloads old tiles. */
#define TB_OLTP_DATA_VERSION "2"

/* Creates schema tile<tile> with tables, indexes, functions and data over the
 * given libpq conninfo, unless it already holds TB_OLTP_DATA_VERSION data
 * (then it returns 0 at once); otherwise drops and recreates the schema.
 * Returns 0 or -1 with err carrying PQerrorMessage in "what: why" form. */
int tb_oltp_load(const char *conninfo, int tile, char *err) TB_WUR;

#endif
