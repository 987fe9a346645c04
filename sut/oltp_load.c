/*
 * oltp_load.c: creates one tile's OLTP data set (DVD Store 2-like) in its own
 * PostgreSQL schema "tile<N>": tables, data streamed with COPY through libpq,
 * indexes, and the three stored functions the OLTP workload calls (login,
 * new_customer, purchase). Everything runs in one transaction, so a tile is
 * either fully loaded or left as it was; a tile already loaded with the same
 * data version is left alone (`sut up` loads only what is missing).
 *
 * The data is deterministic: customers and products are pure functions of the
 * row id, and the order history comes from a PRNG seeded with the tile
 * number, so every run on every host sees the same rows and the same plans.
 * Sizes are DVD Store 2 "small": 20,000 customers, 10,000 products, and
 * 1,000 orders a month over 12 months of history. Stock is finite
 * (50..249 per product) and never restocked: over a long run some purchases
 * find too little stock and return 0, which the workload counts as a rollback
 * (DS2 behaviour).
 */
#include "sut/oltp_load.h"

#include <libpq-fe.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "sut/pg_copy.h"

/*
 * The schema as one SQL script. "@S@" stands for the schema name (tile<N>).
 * Function bodies name their tables with the schema so they work whatever the
 * caller's search_path is (and never touch another tile's tables).
 * Table and column names follow DVD Store 2 (ds2/pgsqlds2/build/pgsqlds2_create_tbl.sql).
 */
static const char oltp_sql[] =
    "BEGIN;\n"
    "DROP SCHEMA IF EXISTS @S@ CASCADE;\n"
    "CREATE SCHEMA @S@;\n"
    "SET LOCAL search_path = @S@;\n"

    /* DS2's 16 category names. */
    "CREATE TABLE categories (\n"
    "  category integer PRIMARY KEY,\n"
    "  categoryname varchar(50) NOT NULL);\n"
    "INSERT INTO categories SELECT i, n FROM unnest(ARRAY['Action','Animation','Children',\n"
    "  'Classics','Comedy','Documentary','Drama','Family','Foreign','Games','Horror','Music',\n"
    "  'New','Sci-Fi','Sports','Travel']) WITH ORDINALITY AS c(n, i);\n"

    "CREATE TABLE products (\n"
    "  prod_id integer PRIMARY KEY,\n"
    "  category integer NOT NULL,\n"
    "  title varchar(50) NOT NULL,\n"
    "  actor varchar(50) NOT NULL,\n"
    "  price numeric(12,2) NOT NULL,\n"
    "  special smallint,\n"
    "  common_prod_id integer NOT NULL);\n"
    "CREATE TABLE inventory (\n"
    "  prod_id integer PRIMARY KEY,\n"
    "  quan_in_stock integer NOT NULL,\n"
    "  sales integer NOT NULL);\n"
    /* First half US customers (region 1), second half international (region 2), as DS2. */
    "CREATE TABLE customers (\n"
    "  customerid serial PRIMARY KEY,\n"
    "  firstname varchar(50) NOT NULL,\n"
    "  lastname varchar(50) NOT NULL,\n"
    "  address1 varchar(50) NOT NULL,\n"
    "  city varchar(50) NOT NULL,\n"
    "  country varchar(50) NOT NULL,\n"
    "  region smallint NOT NULL,\n"
    "  email varchar(50),\n"
    "  phone varchar(50),\n"
    "  creditcardtype integer NOT NULL,\n"
    "  creditcard varchar(50) NOT NULL,\n"
    "  creditcardexpiration varchar(50) NOT NULL,\n"
    "  username varchar(50) NOT NULL,\n"
    "  password varchar(50) NOT NULL,\n"
    "  age smallint,\n"
    "  income integer,\n"
    "  gender varchar(1));\n"
    "CREATE TABLE orders (\n"
    "  orderid serial PRIMARY KEY,\n"
    "  orderdate date NOT NULL,\n"
    "  customerid integer NOT NULL REFERENCES customers (customerid),\n"
    "  netamount numeric(12,2) NOT NULL,\n"
    "  tax numeric(12,2) NOT NULL,\n"
    "  totalamount numeric(12,2) NOT NULL);\n"
    "CREATE TABLE orderlines (\n"
    "  orderlineid smallint NOT NULL,\n"
    "  orderid integer NOT NULL REFERENCES orders (orderid) ON DELETE CASCADE,\n"
    "  prod_id integer NOT NULL,\n"
    "  quantity smallint NOT NULL,\n"
    "  orderdate date NOT NULL);\n"
    "CREATE TABLE cust_hist (\n"
    "  customerid integer NOT NULL REFERENCES customers (customerid) ON DELETE CASCADE,\n"
    "  orderid integer NOT NULL,\n"
    "  prod_id integer NOT NULL);\n"
    "CREATE TABLE reorder (\n"
    "  prod_id integer NOT NULL,\n"
    "  date_low date NOT NULL,\n"
    "  quan_low integer NOT NULL,\n"
    "  date_reordered date,\n"
    "  quan_reordered integer,\n"
    "  date_expected date);\n"

    ;

/* Part 2, after the data is copied in: sequences, indexes, functions, the
 * "loaded" mark, statistics, COMMIT. */
static const char oltp_sql_post[] =
    "SET LOCAL search_path = @S@;\n"
    "SELECT setval(pg_get_serial_sequence('@S@.customers', 'customerid'), (SELECT max(customerid) FROM customers));\n"
    "SELECT setval(pg_get_serial_sequence('@S@.orders', 'orderid'), (SELECT max(orderid) FROM orders));\n"
    "CREATE TABLE tb_meta (k text PRIMARY KEY, v text NOT NULL);\n"
    "INSERT INTO tb_meta VALUES ('loaded', '" TB_OLTP_DATA_VERSION "');\n"
    /* Indexes after the data: one sort per index instead of row-by-row maintenance. */
    "CREATE INDEX ix_prod_category ON products (category);\n"
    "CREATE INDEX ix_prod_actor ON products (actor);\n"
    "CREATE INDEX ix_prod_title ON products (title);\n"
    "CREATE UNIQUE INDEX ix_cust_username ON customers (username);\n"
    "CREATE INDEX ix_order_custid ON orders (customerid);\n"
    "CREATE INDEX ix_orderlines_orderid ON orderlines (orderid);\n"
    "CREATE INDEX ix_cust_hist_customerid ON cust_hist (customerid);\n"

    /* login: customerid, or 0 when user name and password do not match. */
    "CREATE FUNCTION @S@.login(username text, password text) RETURNS integer\n"
    "LANGUAGE sql STABLE AS $f$\n"
    "  SELECT coalesce((SELECT c.customerid FROM @S@.customers c\n"
    "                    WHERE c.username = login.username AND c.password = login.password), 0)\n"
    "$f$;\n"

    /* new_customer: the new customerid, or 0 when the user name is taken. */
    "CREATE FUNCTION @S@.new_customer(firstname text, lastname text, username text,\n"
    "                                  password text) RETURNS integer\n"
    "LANGUAGE plpgsql AS $f$\n"
    "#variable_conflict use_column\n"
    "DECLARE v_id integer;\n"
    "BEGIN\n"
    "  INSERT INTO @S@.customers (firstname, lastname, address1, city, country, region,\n"
    "      email, phone, creditcardtype, creditcard, creditcardexpiration, username,\n"
    "      password, age, income, gender)\n"
    "    VALUES (new_customer.firstname, new_customer.lastname, '1 Main Street', 'CITY1',\n"
    "      'US', 1, new_customer.username || '@example.com', '0000000000', 1,\n"
    "      '0000000000000000', '2030/01', new_customer.username, new_customer.password,\n"
    "      30, 60000, 'F')\n"
    "    ON CONFLICT (username) DO NOTHING\n"
    "    RETURNING customerid INTO v_id;\n"
    "  RETURN coalesce(v_id, 0);\n"
    "END\n"
    "$f$;\n"

    /*
     * purchase: the new orderid, or 0 (nothing changed) when any product has
     * too little stock. Inventory rows are locked in prod_id order so that two
     * concurrent purchases of overlapping products cannot deadlock.
     * A product listed twice counts with the sum of its quantities.
     * Tax is 8.25% of the net amount (DS2).
     */
    "CREATE FUNCTION @S@.purchase(customerid integer, prod_ids integer[],\n"
    "                              quantities integer[]) RETURNS integer\n"
    "LANGUAGE plpgsql AS $f$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "  v_n integer := coalesce(cardinality(purchase.prod_ids), 0);\n"
    "  v_found integer;\n"
    "  v_short integer;\n"
    "  v_net numeric(12,2);\n"
    "  v_tax numeric(12,2);\n"
    "  v_orderid integer;\n"
    "BEGIN\n"
    "  IF v_n = 0 OR v_n <> coalesce(cardinality(purchase.quantities), 0) THEN\n"
    "    RAISE EXCEPTION 'purchase: prod_ids and quantities must be non-empty arrays of the same length';\n"
    "  END IF;\n"
    "  IF EXISTS (SELECT 1 FROM unnest(purchase.quantities) AS q WHERE q IS NULL OR q <= 0) THEN\n"
    "    RAISE EXCEPTION 'purchase: quantities must be positive';\n"
    "  END IF;\n"
    "  PERFORM 1 FROM @S@.inventory i WHERE i.prod_id = ANY (purchase.prod_ids)\n"
    "    ORDER BY i.prod_id FOR UPDATE;\n"
    "  SELECT count(i.prod_id), count(*) FILTER (WHERE i.quan_in_stock < w.q)\n"
    "    INTO v_found, v_short\n"
    "    FROM (SELECT u.p, sum(u.q) AS q FROM unnest(purchase.prod_ids, purchase.quantities)\n"
    "          AS u(p, q) GROUP BY u.p) w\n"
    "    LEFT JOIN @S@.inventory i ON i.prod_id = w.p;\n"
    "  IF v_found < (SELECT count(DISTINCT p) FROM unnest(purchase.prod_ids) AS p) THEN\n"
    "    RAISE EXCEPTION 'purchase: unknown prod_id in %', purchase.prod_ids;\n"
    "  END IF;\n"
    "  IF v_short > 0 THEN\n"
    "    RETURN 0;\n"
    "  END IF;\n"
    "  UPDATE @S@.inventory i SET quan_in_stock = i.quan_in_stock - w.q, sales = i.sales + w.q\n"
    "    FROM (SELECT u.p, sum(u.q) AS q FROM unnest(purchase.prod_ids, purchase.quantities)\n"
    "          AS u(p, q) GROUP BY u.p) w\n"
    "    WHERE i.prod_id = w.p;\n"
    "  SELECT sum(p.price * u.q) INTO v_net\n"
    "    FROM unnest(purchase.prod_ids, purchase.quantities) AS u(p, q)\n"
    "    JOIN @S@.products p ON p.prod_id = u.p;\n"
    "  v_tax := round(v_net * 0.0825, 2);\n"
    "  INSERT INTO @S@.orders (orderdate, customerid, netamount, tax, totalamount)\n"
    "    VALUES (current_date, purchase.customerid, v_net, v_tax, v_net + v_tax)\n"
    "    RETURNING orderid INTO v_orderid;\n"
    "  INSERT INTO @S@.orderlines (orderlineid, orderid, prod_id, quantity, orderdate)\n"
    "    SELECT u.n, v_orderid, u.p, u.q, current_date\n"
    "    FROM unnest(purchase.prod_ids, purchase.quantities) WITH ORDINALITY AS u(p, q, n);\n"
    "  INSERT INTO @S@.cust_hist (customerid, orderid, prod_id)\n"
    "    SELECT purchase.customerid, v_orderid, u.p\n"
    "    FROM unnest(purchase.prod_ids) AS u(p);\n"
    "  RETURN v_orderid;\n"
    "END\n"
    "$f$;\n"

    "ANALYZE categories, products, inventory, customers, orders, orderlines, cust_hist, reorder;\n"
    "COMMIT;\n";

/* Returns sql with every "@S@" replaced by schema. Caller frees. */
static char *expand_schema(const char *script, const char *schema) {
    static const char tok[] = "@S@";
    size_t slen = strlen(schema), n = 0, cap;
    const char *p, *q;
    char *out, *o;
    for (p = script; (q = strstr(p, tok)) != NULL; p = q + sizeof tok - 1)
        n++;
    cap = strlen(script) + 1 + n * slen;
    out = o = xmalloc(cap);
    for (p = script; (q = strstr(p, tok)) != NULL; p = q + sizeof tok - 1) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, schema, slen);
        o += slen;
    }
    strcpy(o, p);
    return out;
}
/* ---- COPY ------------------------------------------------------------------- */

/* The COPY rows of one table go into a tb_buf (common/buf.h), sent in
 * chunks. The tables have fixed sizes (tiles/dataset.h); the largest,
 * customers, is about 3 MB, so 64 MiB is only reached if the generator itself
 * goes wrong. An append past the cap leaves b->overflow set, checked before
 * the load. */
#define OLTP_TABLE_MAX ((size_t)64 << 20)

/* splitmix64 (Vigna): the seeded generator of the order history. */
static uint64_t next_rand(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rand_range(uint64_t *x, int lo, int hi) { return lo + (int)(next_rand(x) % (uint64_t)(hi - lo + 1)); }

static const char *const countries[10] = {"Australia", "Canada", "Chile",  "China",        "France",
                                          "Germany",   "Japan",  "Russia", "South Africa", "UK"};

static void gen_products(tb_buf *b) {
    for (int id = 1; id <= TB_OLTP_PRODUCTS; id++)
        tb_buf_putf(b, "%d\t%d\tTITLE %d\tACTOR %d\t%d.99\t%d\t%d\n", id, 1 + (id - 1) % TB_OLTP_CATEGORIES,
                    1 + (id * 13) % TB_OLTP_TITLES, 1 + (id * 7) % TB_OLTP_ACTORS, 9 + id % 20, id % 100 < 5,
                    1 + (id * 31) % TB_OLTP_PRODUCTS);
}

static void gen_inventory(tb_buf *b) {
    for (int id = 1; id <= TB_OLTP_PRODUCTS; id++)
        tb_buf_putf(b, "%d\t%d\t0\n", id, 50 + id % 200);
}

/* First half US customers (region 1), second half international (region 2), as DS2. */
static void gen_customers(tb_buf *b) {
    for (long i = 1; i <= TB_OLTP_CUSTOMERS; i++) {
        int us = i <= TB_OLTP_CUSTOMERS / 2;
        tb_buf_putf(b,
                    "%ld\tFIRST%ld\tLAST%ld\t%ld Main Street\tCITY%ld\t%s\t%d\tuser%ld@example.com\t%010lld\t%ld\t"
                    "%016lld\t%ld/%02ld\tuser%ld\tpassword\t%ld\t%ld\t%s\n",
                    i, i, i, i, 1 + i % 1000, us ? "US" : countries[i % 10], us ? 1 : 2, i,
                    (long long)((i * 7919) % 10000000000LL), 1 + i % 5,
                    (long long)((i * 104729LL) % 10000000000000000LL), 2030 + i % 5, 1 + i % 12, i, 18 + i % 73,
                    20000 * (1 + i % 5), i % 2 == 0 ? "M" : "F");
    }
}

/* DS2 small: 1,000 orders a month for a year, 1..9 lines (average 5) of
 * quantity 1..3; each line also goes to cust_hist. Prices match products. */
static void gen_history(int tile, tb_buf *orders, tb_buf *lines, tb_buf *hist) {
    uint64_t x = 0x74696c6500000000ull + (uint64_t)tile; /* seed: "tile" and N */
    int orderid = 0;
    for (int month = 1; month <= 12; month++) {
        for (int k = 0; k < TB_OLTP_ORDERS_PER_MONTH; k++) {
            int cust = rand_range(&x, 1, TB_OLTP_CUSTOMERS), day = rand_range(&x, 1, 28);
            int n = rand_range(&x, 1, 9);
            long net_cents = 0;
            orderid++;
            for (int l = 1; l <= n; l++) {
                int prod = rand_range(&x, 1, TB_OLTP_PRODUCTS), q = rand_range(&x, 1, 3);
                net_cents += (long)q * ((9 + prod % 20) * 100 + 99);
                tb_buf_putf(lines, "%d\t%d\t%d\t%d\t2025-%02d-%02d\n", l, orderid, prod, q, month, day);
                tb_buf_putf(hist, "%d\t%d\t%d\n", cust, orderid, prod);
            }
            {
                long tax = (net_cents * 825 + 5000) / 10000; /* 8.25%, rounded to a cent (DS2) */
                tb_buf_putf(orders, "%d\t2025-%02d-%02d\t%d\t%ld.%02ld\t%ld.%02ld\t%ld.%02ld\n", orderid, month, day,
                            cust, net_cents / 100, net_cents % 100, tax / 100, tax % 100, (net_cents + tax) / 100,
                            (net_cents + tax) % 100);
            }
        }
    }
}

/* 1 when tile's schema holds data of this version, 0 when not (or absent). */
static int already_loaded(PGconn *conn, int tile) {
    char sql[96];
    PGresult *res;
    int yes;
    snprintf(sql, sizeof sql, "SELECT v FROM tile%d.tb_meta WHERE k = 'loaded'", tile);
    res = PQexec(conn, sql);
    yes = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
          strcmp(PQgetvalue(res, 0, 0), TB_OLTP_DATA_VERSION) == 0;
    PQclear(res);
    return yes;
}

static int exec_script(PGconn *conn, int tile, const char *script, const char *schema, char *err) {
    char *sql = expand_schema(script, schema), what[32];
    int rc;
    snprintf(what, sizeof what, "oltp load tile %d", tile);
    /* One simple-query string: the server runs it statement by statement and
     * stops at the first error, leaving the explicit transaction aborted. */
    rc = sut_pg_exec(conn, sql, what, err);
    free(sql);
    return rc;
}

int tb_oltp_load(const char *conninfo, int tile, char *err) {
    char schema[32], tc[512], what[32];
    PGconn *conn;
    PGresult *res;
    tb_buf b[6];
    int rc = 0;
    static const char *const tables[6] = {
        "products (prod_id, category, title, actor, price, special, common_prod_id)",
        "inventory (prod_id, quan_in_stock, sales)",
        ("customers (customerid, firstname, lastname, address1, city, country, region, email, phone, "
         "creditcardtype, creditcard, creditcardexpiration, username, password, age, income, gender)"),
        "orders (orderid, orderdate, customerid, netamount, tax, totalamount)",
        "orderlines (orderlineid, orderid, prod_id, quantity, orderdate)",
        "cust_hist (customerid, orderid, prod_id)"};

    if (tile < 1) {
        tb_seterr(err, "oltp load tile %d: tile numbers start at 1", tile);
        return -1;
    }
    snprintf(what, sizeof what, "oltp load tile %d", tile);
    if (!(conn = sut_pg_connect(conninfo, what, err))) return -1;
    if (already_loaded(conn, tile)) {
        PQfinish(conn);
        return 0;
    }
    snprintf(schema, sizeof schema, "tile%d", tile);
    for (int i = 0; i < 6; i++)
        tb_buf_init(&b[i], OLTP_TABLE_MAX);
    gen_products(&b[0]);
    gen_inventory(&b[1]);
    gen_customers(&b[2]);
    gen_history(tile, &b[3], &b[4], &b[5]);
    for (int i = 0; i < 6 && rc == 0; i++)
        if (b[i].overflow) {
            tb_seterr(err, "oltp load tile %d: the COPY data of %.*s passed %zu MiB", tile,
                      (int)strcspn(tables[i], " "), tables[i], OLTP_TABLE_MAX >> 20);
            rc = -1;
        }
    if (rc == 0) rc = exec_script(conn, tile, oltp_sql, schema, err);
    for (int i = 0; i < 6 && rc == 0; i++) {
        snprintf(tc, sizeof tc, "%s.%s", schema, tables[i]);
        rc = sut_pg_copy_in(conn, tc, tb_buf_str(&b[i]), b[i].len, what, err);
    }
    if (rc == 0) rc = exec_script(conn, tile, oltp_sql_post, schema, err);
    if (rc != 0) {
        res = PQexec(conn, "ROLLBACK");
        PQclear(res);
    }
    for (int i = 0; i < 6; i++)
        tb_buf_free(&b[i]);
    PQfinish(conn);
    return rc;
}
