/*
 * dataset.h: the size and shape of the data set a tile implies, shared by the
 * embedded SUT's loaders (sut/oltp_load.c, sut/web_load.c), which create it,
 * and the load generator (loadgen/oltp.c, loadgen/web.c), which draws keys
 * from it. Both sides must agree, so the numbers live here, once.
 *
 * OLTP: DVD Store 2 "small": 20,000 customers, 10,000 products in 16
 * categories (source: dvdstore/ds2 README sizes).
 * Web: Olio's rule, registered persons = 100 x the tile's concurrent web
 * users (source: Apache Olio, "number of users loaded = 100 x concurrent
 * users").
 */
#ifndef TB_TILES_DATASET_H
#define TB_TILES_DATASET_H

#define TB_OLTP_CUSTOMERS        20000
#define TB_OLTP_PRODUCTS         10000
#define TB_OLTP_CATEGORIES       16
#define TB_OLTP_ACTORS           200  /* distinct actor names */
#define TB_OLTP_TITLES           1000 /* distinct title words */
#define TB_OLTP_ORDERS_PER_MONTH 1000 /* DS2 small; 12 months of history are loaded */

#define TB_WEB_PERSONS_PER_USER  100 /* Olio: registered users = 100 x concurrent users */
#define TB_WEB_EVENTS_PER_PERSON 5
#define TB_WEB_TAGS              100 /* the fixed tag word list */
#define TB_WEB_DEFAULT_USERS     10  /* concurrent web users per tile when none is given */
#define TB_WEB_MAX_USERS         100000

/* Tag word i (0-based, i < TB_WEB_TAGS): lowercase ASCII letters only; tag
 * id i+1 in the tags table. NULL when out of range. */
const char *tb_web_tag(int i);

#endif
