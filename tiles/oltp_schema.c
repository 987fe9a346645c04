/*
 * oltp_schema.c: creates one tile's OLTP data set (DVD Store 2-like) in its own
 * PostgreSQL schema "tile<N>": tables, deterministic data from generate_series,
 * indexes, and the three stored functions the OLTP workload calls (login,
 * new_customer, purchase). Everything runs in one transaction, so a tile is
 * either fully loaded or left as it was.
 *
 * The data is a pure function of the row id, so every run on every host sees
 * the same rows and the same plans. Stock is finite (50..249 per product) and
 * never restocked: over a long run some purchases find too little stock and
 * return 0, which the workload counts as a rollback (DS2 behaviour).
 */
#include "tiles/oltp_schema.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    "INSERT INTO products\n"
    "  SELECT id, 1 + (id - 1) % 16, 'TITLE ' || (1 + (id * 13) % 1000),\n"
    "         'ACTOR ' || (1 + (id * 7) % 200), 9.99 + (id % 20), (id % 100 < 5)::int,\n"
    "         1 + (id * 31) % 10000\n"
    "  FROM generate_series(1, 10000) AS id;\n"

    "CREATE TABLE inventory (\n"
    "  prod_id integer PRIMARY KEY,\n"
    "  quan_in_stock integer NOT NULL,\n"
    "  sales integer NOT NULL);\n"
    "INSERT INTO inventory SELECT id, 50 + id % 200, 0 FROM generate_series(1, 10000) AS id;\n"

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
    "INSERT INTO customers (customerid, firstname, lastname, address1, city, country, region,\n"
    "    email, phone, creditcardtype, creditcard, creditcardexpiration, username, password,\n"
    "    age, income, gender)\n"
    "  SELECT i, 'FIRST' || i, 'LAST' || i, i || ' Main Street', 'CITY' || (1 + i % 1000),\n"
    "         CASE WHEN i <= 10000 THEN 'US'\n"
    "              ELSE (ARRAY['Australia','Canada','Chile','China','France','Germany','Japan',\n"
    "                          'Russia','South Africa','UK'])[1 + i % 10] END,\n"
    "         CASE WHEN i <= 10000 THEN 1 ELSE 2 END,\n"
    "         'user' || i || '@example.com', lpad(((i * 7919) % 10000000000)::text, 10, '0'),\n"
    "         1 + i % 5, lpad(((i::bigint * 104729) % 10000000000000000)::text, 16, '0'),\n"
    "         (2030 + i % 5) || '/' || lpad((1 + i % 12)::text, 2, '0'),\n"
    "         'user' || i, 'password', 18 + i % 73, 20000 * (1 + i % 5),\n"
    "         CASE WHEN i % 2 = 0 THEN 'M' ELSE 'F' END\n"
    "  FROM generate_series(1, 20000) AS i;\n"
    "SELECT setval(pg_get_serial_sequence('@S@.customers', 'customerid'), 20000);\n"

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

/* Returns oltp_sql with every "@S@" replaced by schema. Caller frees. */
static char *expand_schema(const char *schema) {
    static const char tok[] = "@S@";
    size_t slen = strlen(schema), n = 0, cap;
    const char *p, *q;
    char *out, *o;
    for (p = oltp_sql; (q = strstr(p, tok)) != NULL; p = q + sizeof tok - 1) n++;
    cap = sizeof oltp_sql + n * slen;
    out = o = xmalloc(cap);
    for (p = oltp_sql; (q = strstr(p, tok)) != NULL; p = q + sizeof tok - 1) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, schema, slen);
        o += slen;
    }
    strcpy(o, p);
    return out;
}

/* Writes "oltp load tile N: <libpq message>" into err, on one line. */
static void set_pq_err(char *err, int tile, const char *msg) {
    char buf[TB_ERR_LEN];
    size_t i, len;
    snprintf(buf, sizeof buf, "%s", msg && *msg ? msg : "unknown libpq error");
    len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) buf[--len] = '\0';
    for (i = 0; i < len; i++)
        if (buf[i] == '\n' || buf[i] == '\t') buf[i] = ' ';
    tb_seterr(err, "oltp load tile %d: %s", tile, buf);
}

int tb_oltp_load(const char *conninfo, int tile, char *err) {
    char schema[32];
    char *sql;
    PGconn *conn;
    PGresult *res;
    int rc = 0;

    if (tile < 1) {
        tb_seterr(err, "oltp load tile %d: tile numbers start at 1", tile);
        return -1;
    }
    conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) {
        set_pq_err(err, tile, PQerrorMessage(conn));
        PQfinish(conn);
        return -1;
    }
    /* Drop/create chatter ("schema does not exist, skipping") is not for the user. */
    res = PQexec(conn, "SET client_min_messages = warning");
    PQclear(res);

    snprintf(schema, sizeof schema, "tile%d", tile);
    sql = expand_schema(schema);
    /* One simple-query string: the server runs it statement by statement and
     * stops at the first error, leaving the explicit transaction aborted. */
    res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
        set_pq_err(err, tile, PQerrorMessage(conn));
        rc = -1;
    }
    PQclear(res);
    free(sql);
    PQfinish(conn);
    return rc;
}
