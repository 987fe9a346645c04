/*
 * oltp.c: the OLTP workload, DVD Store 2-like orders on PostgreSQL through
 * asynchronous libpq on the worker's event_base (one connection per user, as
 * DS2's driver threads each hold one).
 *
 * One order (the metric op, counted for OPM) is: a login, or a new customer
 * with new_customer_pct% chance; then browse_min..browse_max browses, each by
 * category, actor or title with 1/3 chance; then a purchase of
 * items_min..items_max items of quantity 1..quantity_max. Every decision takes
 * its own random draw (DS3 reuses one draw for several; we do not). A purchase
 * that finds too little stock changes nothing and is recorded as op
 * "Rollback", not as an error (DS2 counts rollbacks the same way).
 * Source: dvdstore/ds2 driver (ds2xdriver) order flow.
 *
 * Each step is also recorded as its own op. Its corrected latency counts
 * from when it was due: the first step (Login or NewCustomer) from the
 * order's intended start, so a late order (and the connect of a new
 * connection) shows in its first step too, and each later step from the
 * previous step's end; its uncorrected latency from its own send.
 *
 * Each step is one SQL statement in autocommit mode, so each is exactly one
 * PostgreSQL transaction: the server's pg_stat_database.xact_commit can be
 * checked against the client's counts of Login+NewCustomer+Browse+Purchase+Rollback.
 *
 * `mode = point` replaces the order with one primary-key lookup per op
 * (op "Point"): a fast, cheap target for load-generator scale tests.
 *
 * libpq connects, authenticates and prepares the statements; then, on a
 * connection without TLS or GSSAPI encryption, the statements run over the
 * wire client (loadgen/pg_wire.h: Bind, Execute and Sync out, the reply read
 * without building a PGresult), unless the workload says `client = libpq`.
 * With TLS libpq runs them too: the bytes on the socket are its to encrypt.
 */
#include <errno.h>
#include <event2/event.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/numfmt.h"
#include "loadgen/pg_wire.h"
#include "loadgen/workload.h"
#include "tiles/dataset.h"

enum {
    OP_ORDER = 0,
    OP_LOGIN,
    OP_NEWCUST,
    OP_BROWSE_CAT,
    OP_BROWSE_ACTOR,
    OP_BROWSE_TITLE,
    OP_PURCHASE,
    OP_ROLLBACK,
    OP_POINT,
    N_OPS
};
/* The op names are the tile model's (tiles/kinds.h: tb_kind_oltp_ops), in OP_ order. */
_Static_assert(N_OPS == TB_KIND_OLTP_N_OPS, "the oltp ops must be the catalog's");

enum { STEP_IDLE = 0, STEP_CONNECT, STEP_PREPARE, STEP_LOGIN, STEP_BROWSE, STEP_PURCHASE, STEP_POINT };

/* The statements, prepared once per connection (SQL-level PREPARE, all in one
 * round trip) and run with PQsendQueryPrepared, as DS2's driver does with its
 * stored procedures; each is one PostgreSQL transaction in autocommit. */
enum { Q_LOGIN = 0, Q_NEWCUST, Q_BROWSE_CAT, Q_BROWSE_ACTOR, Q_BROWSE_TITLE, Q_PURCHASE, Q_POINT, N_Q };
static const char *const q_names[N_Q] = {"tb_login",        "tb_new_customer", "tb_browse_category",
                                         "tb_browse_actor", "tb_browse_title", "tb_purchase",
                                         "tb_point"};
static const char prepare_sql[] =
    "PREPARE tb_login(text, text) AS SELECT login($1, $2);"
    "PREPARE tb_new_customer(text, text, text, text) AS SELECT new_customer($1, $2, $3, $4);"
    "PREPARE tb_browse_category(int) AS SELECT prod_id, title, actor, price FROM products"
    " WHERE category = $1 AND special = 1 LIMIT 10;"
    "PREPARE tb_browse_actor(text) AS SELECT prod_id, title, actor, price FROM products WHERE actor = $1 LIMIT 10;"
    "PREPARE tb_browse_title(text) AS SELECT prod_id, title, actor, price FROM products WHERE title = $1 LIMIT 10;"
    "PREPARE tb_purchase(int, int[], int[]) AS SELECT purchase($1, $2, $3);"
    "PREPARE tb_point(int) AS SELECT title, price FROM products WHERE prod_id = $1;";

/* Reconnect back-off after a failed connect: doubling from 100 ms to 5 s
 * (tilebench choice), reset by a successful connect. */
#define BACKOFF_MIN_US 100000
#define BACKOFF_MAX_US 5000000

typedef struct oltp_cfg {
    tb_sut_endpoints ep; /* a deep copy: pg_conninfo, and each pg.tileN's own */
    int new_customer_pct;
    int browse_min, browse_max;
    int items_min, items_max, quantity_max;
    int point; /* mode = point: one primary-key lookup per op (a fast target for scale tests) */
    int libpq; /* client = libpq: libpq runs the statements too (default: the wire client) */
    int users; /* users per tile: each holds one PostgreSQL connection */
} oltp_cfg;

typedef struct oltp_user {
    const oltp_cfg *cfg;
    tb_user_ctx *u;
    PGconn *conn;
    struct event *sock_ev;  /* connect polling (one-shot) or reading results (persistent) */
    struct event *write_ev; /* flushing a query that did not fit the socket buffer */
    int step;
    int sub_op; /* op index recorded for the step in flight */
    int browses_left;
    int customerid;
    uint64_t step_due_us;   /* the step in flight was due: the order's intended start, or the previous step's end */
    uint64_t step_start_us; /* ... and was sent */
    PGresult *res;          /* first result of the statement in flight (libpq) */
    int wire;               /* the statements run over the wire client (set once prepared) */
    tb_pgw_reader rd;       /* ... which reads the reply of the one in flight */
    char *out;              /* ... and sends its request from here */
    size_t out_len, out_off, out_cap;
    unsigned long seq;   /* new-customer counter, makes usernames unique */
    uint64_t backoff_us; /* current reconnect back-off; 0 after a good connect */
} oltp_user;

static const char *const known_keys[] = {"mode",      "new_customer_pct", "browse_min", "browse_max", "items_min",
                                         "items_max", "quantity_max",     "client",     NULL};

static int get_int(const tb_workload_def *w, const char *key, int dflt, int lo, int hi, int *out, char *err) {
    uint64_t v;
    if (tb_wl_param_u64(w, key, (uint64_t)dflt, &v, err) != 0) return -1;
    if (v < (uint64_t)lo || v > (uint64_t)hi) {
        char want[64];
        snprintf(want, sizeof want, "must be between %d and %d", lo, hi);
        return tb_wl_param_bad(w, key, want, err);
    }
    *out = (int)v;
    return 0;
}

static void oltp_cfg_free(void *cfg) {
    oltp_cfg *c = cfg;
    tb_endpoints_free(&c->ep);
    free(c);
}

static int oltp_configure(const tb_workload_def *w, const tb_sut_endpoints *ep, void **out, char *err) {
    oltp_cfg *c;
    if (tb_wl_check_keys(w, known_keys, err) != 0) return -1;
    if (!tb_ep_has(ep->pg_conninfo) && ep->n_pg_tile == 0) {
        tb_seterr(err, "workload %s: the SUT has no PostgreSQL endpoint ([sut] pg = conninfo, or pg.tileN)", w->name);
        return -1;
    }
    c = xcalloc(1, sizeof *c);
    c->users = w->users;
    tb_endpoints_copy(&c->ep, ep);
    {
        const tb_param *m = tb_tiledef_param(w, "mode");
        if (m && strcmp(m->value, "point") == 0)
            c->point = 1;
        else if (m && strcmp(m->value, "order") != 0) {
            tb_seterr(err, "%s:%d: [workload.%s] mode: '%s': use order (DVD Store orders) or point (one lookup)",
                      w->file, m->line, w->name, m->value);
            oltp_cfg_free(c);
            return -1;
        }
    }
    if (get_int(w, "new_customer_pct", 20, 0, 100, &c->new_customer_pct, err) ||
        get_int(w, "browse_min", 1, 0, 100, &c->browse_min, err) ||
        get_int(w, "browse_max", 5, 0, 100, &c->browse_max, err) ||
        get_int(w, "items_min", 1, 1, 100, &c->items_min, err) ||
        get_int(w, "items_max", 9, 1, 100, &c->items_max, err) ||
        get_int(w, "quantity_max", 3, 1, 1000, &c->quantity_max, err)) {
        oltp_cfg_free(c);
        return -1;
    }
    {
        const tb_param *m = tb_tiledef_param(w, "client");
        if (m && strcmp(m->value, "libpq") == 0)
            c->libpq = 1;
        else if (m && strcmp(m->value, "wire") != 0) {
            tb_seterr(err, "%s:%d: [workload.%s] client: '%s': use wire (the default) or libpq", w->file, m->line,
                      w->name, m->value);
            oltp_cfg_free(c);
            return -1;
        }
    }
    if (c->browse_max < c->browse_min || c->items_max < c->items_min) {
        tb_seterr(err, "%s:%d: [workload.%s] browse_max/items_max must not be below browse_min/items_min", w->file,
                  w->line, w->name);
        oltp_cfg_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

/* The conninfo of tile's server: its own ([sut] pg.tileN) or the shared one. */
static const char *conninfo_for(const oltp_cfg *c, int tile) {
    for (int i = 0; i < c->ep.n_pg_tile; i++)
        if (c->ep.pg_tile[i].tile == tile) return c->ep.pg_tile[i].conninfo;
    return tb_ep_str(c->ep.pg_conninfo);
}

static void *oltp_user_new(const void *cfg, tb_user_ctx *u) {
    oltp_user *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->u = u;
    return s;
}

static int oltp_next_op(void *st) {
    oltp_user *s = st;
    return s->cfg->point ? OP_POINT : OP_ORDER;
}

static void drop_conn(oltp_user *s) {
    if (s->sock_ev) event_free(s->sock_ev);
    if (s->write_ev) event_free(s->write_ev);
    s->sock_ev = s->write_ev = NULL;
    if (s->res) PQclear(s->res);
    s->res = NULL;
    if (s->conn) PQfinish(s->conn);
    s->conn = NULL;
    s->wire = 0;
    s->out_len = s->out_off = 0;
    tb_pgw_reader_reset(&s->rd); /* a reply cut off with the connection is forgotten with it */
}

/* Ends the order with status st (OK or an error class) at end_us (tb_now_us). */
static void order_done(oltp_user *s, tb_op_status st, uint64_t end_us) {
    s->step = STEP_IDLE;
    tb_user_op_done_at(s->u, st, end_us);
}

/* Completes the order on the next loop turn (never inside op_start). */
static void order_done_later(oltp_user *s, tb_op_status st) {
    s->step = STEP_IDLE;
    tb_user_op_done_soon(s->u, st);
}

/* After a failed connect or a lost connection: wait longer before the next try. */
static void back_off(oltp_user *s) {
    s->backoff_us = s->backoff_us ? s->backoff_us * 2 : BACKOFF_MIN_US;
    if (s->backoff_us > BACKOFF_MAX_US) s->backoff_us = BACKOFF_MAX_US;
    tb_user_delay_next(s->u, s->backoff_us);
}

static void fail_step(oltp_user *s, tb_op_status st) {
    /* a failed step of an order is recorded itself; a point lookup is the op */
    if (s->step >= STEP_LOGIN && s->step != STEP_POINT)
        tb_user_record_step(s->u, s->sub_op, s->step_due_us, s->step_start_us, tb_now_us(), st);
    if (st == TB_OP_ERR_IO || st == TB_OP_ERR_CONNECT || s->step == STEP_PREPARE) {
        drop_conn(s); /* unusable: lost, or without its prepared statements */
        back_off(s);
    }
    order_done_later(s, st);
}

static void on_write(evutil_socket_t fd, short what, void *arg);

static void flush_out(oltp_user *s);

/* Waits until the socket takes more of a request (edge-triggered). */
static void await_write(oltp_user *s) {
    if (!s->write_ev) s->write_ev = event_new(tb_user_base(s->u), PQsocket(s->conn), EV_WRITE | EV_ET, on_write, s);
    event_add(s->write_ev, NULL);
}

/* Sends what is left of the wire client's request. */
static void wire_flush(oltp_user *s) {
    while (s->out_off < s->out_len) {
        ssize_t n = send(PQsocket(s->conn), s->out + s->out_off, s->out_len - s->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            s->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            await_write(s);
            return;
        } else {
            fail_step(s, TB_OP_ERR_IO);
            return;
        }
    }
}

/* Runs prepared statement q over the wire client: one send of Bind, Execute and Sync. */
static void wire_send(oltp_user *s, int q, int n, const char *const *vals) {
    size_t need = tb_pgw_exec_len(q_names[q], n, vals);
    if (!tb_pgw_reader_between(&s->rd)) { /* part of a message nobody asked for: out of step */
        fail_step(s, TB_OP_ERR_IO);
        return;
    }
    if (need > s->out_cap) {
        s->out = xrealloc(s->out, need);
        s->out_cap = need;
    }
    s->out_len = tb_pgw_exec(s->out, q_names[q], n, vals);
    s->out_off = 0;
    tb_pgw_reader_reset(&s->rd);
    wire_flush(s);
}

/* Runs prepared statement q; its result arrives through on_read. */
static void send_step(oltp_user *s, int step, int sub_op, int q, int n, const char *const *vals) {
    s->step = step;
    s->sub_op = sub_op;
    /* a point lookup is the op itself: its start is the op's (sent_us), and
     * only an order's steps are recorded with their own start */
    if (step != STEP_POINT) s->step_start_us = tb_now_us();
    if (s->wire) {
        wire_send(s, q, n, vals);
        return;
    }
    if (!PQsendQueryPrepared(s->conn, q_names[q], n, vals, NULL, NULL, 0)) {
        fail_step(s, TB_OP_ERR_IO);
        return;
    }
    flush_out(s);
}

static void flush_out(oltp_user *s) {
    int r = PQflush(s->conn);
    if (r < 0)
        fail_step(s, TB_OP_ERR_IO);
    else if (r == 1)
        await_write(s);
}

static void on_write(evutil_socket_t fd, short what, void *arg) {
    oltp_user *s = arg;
    (void)fd;
    (void)what;
    if (!s->conn) return;
    if (s->wire)
        wire_flush(s);
    else
        flush_out(s);
}

static void step_login(oltp_user *s) {
    char a[64], b[64];
    if (tb_user_rand_range(s->u, 1, 100) <= s->cfg->new_customer_pct) {
        const char *v[4] = {"First", "Last", a, "password"};
        snprintf(a, sizeof a, "nc%d_%d_%lu_%llu", tb_user_tile(s->u), tb_user_index(s->u), ++s->seq,
                 (unsigned long long)(tb_user_rand(s->u) % 1000000000ull));
        send_step(s, STEP_LOGIN, OP_NEWCUST, Q_NEWCUST, 4, v);
    } else {
        const char *v[2] = {b, "password"};
        snprintf(b, sizeof b, "user%d", tb_user_rand_range(s->u, 1, TB_OLTP_CUSTOMERS));
        send_step(s, STEP_LOGIN, OP_LOGIN, Q_LOGIN, 2, v);
    }
}

static void step_browse(oltp_user *s) {
    char a[64];
    const char *v[1] = {a};
    switch (tb_user_rand_range(s->u, 0, 2)) { /* DS2: by category, actor or title, 1/3 each */
    case 0:
        snprintf(a, sizeof a, "%d", tb_user_rand_range(s->u, 1, TB_OLTP_CATEGORIES));
        send_step(s, STEP_BROWSE, OP_BROWSE_CAT, Q_BROWSE_CAT, 1, v);
        break;
    case 1:
        snprintf(a, sizeof a, "ACTOR %d", tb_user_rand_range(s->u, 1, TB_OLTP_ACTORS));
        send_step(s, STEP_BROWSE, OP_BROWSE_ACTOR, Q_BROWSE_ACTOR, 1, v);
        break;
    default:
        snprintf(a, sizeof a, "TITLE %d", tb_user_rand_range(s->u, 1, TB_OLTP_TITLES));
        send_step(s, STEP_BROWSE, OP_BROWSE_TITLE, Q_BROWSE_TITLE, 1, v);
        break;
    }
}

static void step_purchase(oltp_user *s) {
    char cust[32], ids[1024], qty[512];
    size_t li = 0, lq = 0;
    int n = tb_user_rand_range(s->u, s->cfg->items_min, s->cfg->items_max);
    const char *v[3] = {cust, ids, qty};
    snprintf(cust, sizeof cust, "%d", s->customerid);
    ids[li++] = '{';
    qty[lq++] = '{';
    for (int i = 0; i < n && li < sizeof ids - 16 && lq < sizeof qty - 8; i++) {
        li += (size_t)snprintf(ids + li, sizeof ids - li, "%s%d", i ? "," : "",
                               tb_user_rand_range(s->u, 1, TB_OLTP_PRODUCTS));
        lq += (size_t)snprintf(qty + lq, sizeof qty - lq, "%s%d", i ? "," : "",
                               tb_user_rand_range(s->u, 1, s->cfg->quantity_max));
    }
    snprintf(ids + li, sizeof ids - li, "}");
    snprintf(qty + lq, sizeof qty - lq, "}");
    send_step(s, STEP_PURCHASE, OP_PURCHASE, Q_PURCHASE, 3, v);
}

static void step_point(oltp_user *s) {
    char a[TB_NUMFMT_LEN];
    const char *v[1] = {a};
    tb_fmt_int64(tb_user_rand_range(s->u, 1, TB_OLTP_PRODUCTS), a); /* snprintf was 8% of the op's instructions */
    send_step(s, STEP_POINT, OP_POINT, Q_POINT, 1, v);
}

/* The first statement of the op in flight, once connected. */
static void first_step(oltp_user *s) {
    if (s->cfg->point)
        step_point(s);
    else
        step_login(s);
}

static void next_browse_or_purchase(oltp_user *s) {
    if (s->browses_left > 0) {
        s->browses_left--;
        step_browse(s);
    } else {
        step_purchase(s);
    }
}

/* What a statement's result said, from libpq's PGresult or the wire client's reply. */
typedef struct step_res {
    const char *error; /* the server's message when the statement failed, else NULL */
    int rows;
    const char *first; /* the first row's first field, NULL when none or NULL */
} step_res;

/* Whether the wire client's connection can serve: no TLS or GSSAPI
 * encryption (their bytes are libpq's), and the workload did not ask for libpq. */
static int wire_usable(const oltp_user *s) { return !s->cfg->libpq && !PQsslInUse(s->conn) && !PQgssEncInUse(s->conn); }

/* A statement finished with result r. */
static void on_step_result(oltp_user *s, const step_res *r) {
    uint64_t end = tb_now_us();
    if (r->error) {
        tb_log(TB_LOG_DEBUG, "oltp tile %d user %d: %s", tb_user_tile(s->u), tb_user_index(s->u), r->error);
        fail_step(s, TB_OP_ERR_SERVER);
        return;
    }
    switch (s->step) {
    case STEP_LOGIN: {
        int id = r->rows == 1 && r->first ? atoi(r->first) : 0;
        if (id <= 0) { /* a known user must log in; a new username must be new */
            fail_step(s, TB_OP_ERR_CONTENT);
            return;
        }
        tb_user_record_step(s->u, s->sub_op, s->step_due_us, s->step_start_us, end, TB_OP_OK);
        s->step_due_us = end;
        s->customerid = id;
        s->browses_left = tb_user_rand_range(s->u, s->cfg->browse_min, s->cfg->browse_max);
        next_browse_or_purchase(s);
        break;
    }
    case STEP_POINT:
        s->step = STEP_IDLE;
        tb_user_op_done_at(s->u, r->rows == 1 ? TB_OP_OK : TB_OP_ERR_CONTENT, end);
        break;
    case STEP_PREPARE:
        s->backoff_us = 0; /* connected and ready */
        s->wire = wire_usable(s);
        first_step(s);
        break;
    case STEP_BROWSE:
        tb_user_record_step(s->u, s->sub_op, s->step_due_us, s->step_start_us, end, TB_OP_OK);
        s->step_due_us = end;
        next_browse_or_purchase(s);
        break;
    case STEP_PURCHASE: {
        int orderid = r->rows == 1 && r->first ? atoi(r->first) : -1;
        if (orderid < 0) {
            fail_step(s, TB_OP_ERR_CONTENT);
            return;
        }
        tb_user_record_step(s->u, orderid == 0 ? OP_ROLLBACK : OP_PURCHASE, s->step_due_us, s->step_start_us, end,
                            TB_OP_OK);
        order_done(s, TB_OP_OK, end);
        break;
    }
    default: /* a result with nothing in flight: protocol confusion */ drop_conn(s); break;
    }
}

/* Whether the socket still holds something libpq has not read, bytes or
 * the server's close: one non-blocking peek (the edge-triggered read event
 * fires only for what arrives later, and PQconsumeInput reads once, at most
 * what its buffer holds). */
static int socket_has_more(PGconn *conn) {
    char b;
    ssize_t n = recv(PQsocket(conn), &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

/* Takes every result libpq has whole. 1 while the statement is still busy
 * (more bytes to come), 0 when it is done or the connection went. */
static int take_results(oltp_user *s) {
    while (s->conn && !PQisBusy(s->conn)) {
        PGresult *r = PQgetResult(s->conn);
        if (!r) { /* statement complete */
            PGresult *done = s->res;
            ExecStatusType rs = done ? PQresultStatus(done) : PGRES_FATAL_ERROR;
            step_res sr = {NULL, 0, NULL};
            s->res = NULL;
            if (s->step < STEP_PREPARE) {
                if (done) PQclear(done);
                return 0;
            }
            if (rs != PGRES_TUPLES_OK && rs != PGRES_COMMAND_OK)
                sr.error = done ? PQresultErrorMessage(done) : PQerrorMessage(s->conn);
            else if ((sr.rows = PQntuples(done)) > 0 && PQnfields(done) > 0 && !PQgetisnull(done, 0, 0))
                sr.first = PQgetvalue(done, 0, 0);
            on_step_result(s, &sr); /* may send the next statement, or drop the connection */
            if (done) PQclear(done);
            return 0;
        }
        /* keep the first result, or the first error among several (PREPARE x7) */
        if (!s->res) {
            s->res = r;
        } else if (PQresultStatus(r) == PGRES_FATAL_ERROR && PQresultStatus(s->res) != PGRES_FATAL_ERROR) {
            PQclear(s->res);
            s->res = r;
        } else {
            PQclear(r);
        }
    }
    return s->conn != NULL;
}

/* The server closed the wire client's connection, said it will (FATAL or
 * PANIC: it closes after one), or the connection broke. With a statement in
 * flight that is its failure, an I/O error with the back-off, as libpq reports
 * it (its result for the FATAL is followed by the lost connection). Idle, the
 * connection is just gone: the next op connects afresh. */
static void wire_lost(oltp_user *s) {
    if (s->rd.reply.error)
        tb_log(TB_LOG_DEBUG, "oltp tile %d user %d: %s %s", tb_user_tile(s->u), tb_user_index(s->u),
               s->rd.reply.severity, s->rd.reply.message);
    if (s->step >= STEP_LOGIN)
        fail_step(s, TB_OP_ERR_IO); /* drops the connection */
    else
        drop_conn(s);
}

/* Whether the reply read so far says the server is closing the connection. */
static int wire_closing(const oltp_user *s) {
    const tb_pgw_reply *r = &s->rd.reply;
    return r->error && (strcmp(r->severity, "FATAL") == 0 || strcmp(r->severity, "PANIC") == 0);
}

/* Reads buf[0..n) of the server's stream into the reply in flight; ends the
 * statement at its ReadyForQuery. 0, or -1 when the connection was dropped. */
static int wire_take(oltp_user *s, const char *buf, size_t n) {
    char err[TB_ERR_LEN];
    while (n > 0) {
        int done;
        long k = tb_pgw_feed(&s->rd, buf, n, &done, err);
        if (k < 0) {
            tb_log(TB_LOG_DEBUG, "oltp tile %d user %d: %s", tb_user_tile(s->u), tb_user_index(s->u), err);
            if (s->step >= STEP_LOGIN)
                fail_step(s, TB_OP_ERR_IO);
            else
                drop_conn(s);
            return -1;
        }
        buf += k;
        n -= (size_t)k;
        if (!done) break;
        if (wire_closing(s)) break; /* a FATAL is the end, whatever follows it */
        if (s->step < STEP_LOGIN) { /* a reply with nothing in flight: protocol confusion */
            drop_conn(s);
            return -1;
        }
        tb_pgw_reply rep = s->rd.reply;
        step_res sr = {rep.error ? rep.message : NULL, rep.rows, rep.first_len >= 0 ? rep.first : NULL};
        tb_pgw_reader_reset(&s->rd);
        on_step_result(s, &sr); /* may send the next statement, or drop the connection */
        if (!s->conn) return -1;
    }
    /* the server's FATAL before it closes (pg_terminate_backend, a shutdown,
     * idle_session_timeout), or any error while idle: the close or reset that
     * follows may have come in this same report, with no edge after it */
    if (wire_closing(s) || (s->step < STEP_LOGIN && s->rd.reply.error)) {
        wire_lost(s);
        return -1;
    }
    return 0;
}

/* The wire client's read event (edge-triggered): reads until a read comes
 * back short, which drained the socket (what arrives later is a new edge),
 * or, once the server's close came with the report (EV_CLOSED), to the close. */
static void wire_read(oltp_user *s, short what) {
    char buf[16384];
    for (;;) {
        ssize_t n = recv(PQsocket(s->conn), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            wire_lost(s);
            return;
        }
        if (wire_take(s, buf, (size_t)n) != 0) return;
        if ((size_t)n < sizeof buf && !(what & EV_CLOSED)) return;
    }
}

/* The connection's read event is edge-triggered (EV_ET): epoll reports the
 * socket once per arrival of bytes and does not poll it again at the next
 * wait, as it does a level-triggered one after every report (a tcp_poll per
 * op). A result that libpq holds whole left nothing unread (the server sends
 * nothing unasked between results); one still busy may have left bytes, or
 * the close, behind, so a peek decides whether to read again. When the
 * server has closed (EV_CLOSED: its FIN came with this report, and no edge
 * will follow), reading goes on while the peek finds anything, the close
 * included, so the close is seen now: an idle connection is dropped before
 * its next op, as a level-triggered event would have had it. */
static void on_read(evutil_socket_t fd, short what, void *arg) {
    oltp_user *s = arg;
    /* unasked: no statement was in flight, so what came is the server's own
     * (its FATAL message before it closes), and the close or reset after it
     * may be queued already: reported as an error, epoll's report carries no
     * EV_CLOSED */
    int closed = (what & EV_CLOSED) != 0, unasked = s->step < STEP_PREPARE;
    (void)fd;
    if (s->wire) {
        wire_read(s, what);
        return;
    }
    do {
        if (!PQconsumeInput(s->conn)) {
            if (s->step >= STEP_LOGIN)
                fail_step(s, TB_OP_ERR_IO);
            else
                drop_conn(s); /* the server closed an idle connection */
            return;
        }
    } while ((take_results(s) || closed || unasked) && s->conn && !s->wire && socket_has_more(s->conn));
}

static void on_connect_poll(evutil_socket_t fd, short what, void *arg);

static void arm_connect(oltp_user *s, PostgresPollingStatusType pr) {
    short ev = pr == PGRES_POLLING_READING ? EV_READ : EV_WRITE;
    if (s->sock_ev) event_free(s->sock_ev);
    s->sock_ev = event_new(tb_user_base(s->u), PQsocket(s->conn), ev, on_connect_poll, s);
    event_add(s->sock_ev, NULL);
}

static void connected(oltp_user *s) {
    if (s->sock_ev) event_free(s->sock_ev);
    PQsetnonblocking(s->conn, 1);
    s->sock_ev = event_new(tb_user_base(s->u), PQsocket(s->conn), EV_READ | EV_PERSIST | EV_ET | EV_CLOSED, on_read, s);
    event_add(s->sock_ev, NULL);
    /* prepare every statement in one round trip, then run the op */
    s->step = STEP_PREPARE;
    s->step_start_us = tb_now_us();
    if (!PQsendQuery(s->conn, prepare_sql)) {
        fail_step(s, TB_OP_ERR_IO);
        return;
    }
    flush_out(s);
}

static void on_connect_poll(evutil_socket_t fd, short what, void *arg) {
    oltp_user *s = arg;
    PostgresPollingStatusType pr = PQconnectPoll(s->conn);
    (void)fd;
    (void)what;
    if (pr == PGRES_POLLING_OK)
        connected(s);
    else if (pr == PGRES_POLLING_FAILED) {
        tb_log(TB_LOG_DEBUG, "oltp connect: %s", PQerrorMessage(s->conn));
        drop_conn(s);
        back_off(s);
        order_done(s, TB_OP_ERR_CONNECT, tb_now_us());
    } else
        arm_connect(s, pr);
}

static void oltp_op_start(void *st, int op) {
    oltp_user *s = st;
    (void)op;
    /* the first step (Login or NewCustomer) is due when the order was: a late
     * order, or the connect and PREPARE before it, shows in its latency */
    s->step_due_us = tb_user_intended_us(s->u);
    if (!s->conn) {
        char opts[64];
        const char *keys[] = {"dbname", "options", "application_name", NULL};
        const char *vals[] = {conninfo_for(s->cfg, tb_user_tile(s->u)), opts, "tilebench", NULL};
        snprintf(opts, sizeof opts, "-csearch_path=tile%d", tb_user_tile(s->u));
        s->conn = PQconnectStartParams(keys, vals, 1);
        if (!s->conn || PQstatus(s->conn) == CONNECTION_BAD) {
            drop_conn(s);
            back_off(s);
            order_done_later(s, TB_OP_ERR_CONNECT);
            return;
        }
        s->step = STEP_CONNECT;
        arm_connect(s, PGRES_POLLING_WRITING);
        return;
    }
    first_step(s);
}

static void oltp_op_cancel(void *st) {
    oltp_user *s = st;
    drop_conn(s);
    s->step = STEP_IDLE;
}

static void oltp_user_free(void *st) {
    oltp_user *s = st;
    drop_conn(s);
    free(s->out);
    free(s);
}

/* SUT-ready check: one connection, and tiles 1..tiles each have their
 * schema with its products loaded. */
/*
 * conninfo as shown in a message: every option libpq reads from it except
 * the password (PQconninfoParse; keyword=value in libpq's order), so no
 * password reaches the terminal, the log or the run's events. 1, or 0 and
 * "(unparsable conninfo)" when libpq cannot read it.
 */
static int conninfo_shown(const char *ci, char *out, size_t len) {
    PQconninfoOption *opts = PQconninfoParse(ci, NULL);
    size_t n = 0;
    out[0] = '\0';
    if (!opts) {
        snprintf(out, len, "(unparsable conninfo)");
        return 0;
    }
    for (PQconninfoOption *o = opts; o->keyword && n < len; o++) {
        if (!o->val || strcmp(o->keyword, "password") == 0) continue;
        n += (size_t)snprintf(out + n, len - n, "%s%s=%s", n ? " " : "", o->keyword, o->val);
    }
    PQconninfoFree(opts);
    return 1;
}

/* Free connection slots on conn's server for a role like ours: max_connections
 * less the slots reserved for superusers (unless we are one) less the client
 * backends connected now (this probe's own included, so +1). A role without
 * pg_read_all_stats sees other roles' sessions with a NULL backend_type:
 * those with a user count too (which may count an autovacuum worker: a
 * stricter check by a few). -1 when the query fails (not judged). */
static int free_slots(PGconn *conn, int *max_conn, int *in_use) {
    PGresult *r = PQexec(conn, "SELECT current_setting('max_connections')::int, "
                               "CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN 0 "
                               "ELSE current_setting('superuser_reserved_connections')::int END, "
                               "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                               "OR (backend_type IS NULL AND usesysid IS NOT NULL))::int");
    int n = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        *max_conn = atoi(PQgetvalue(r, 0, 0));
        *in_use = atoi(PQgetvalue(r, 0, 2)) - 1;
        n = *max_conn - atoi(PQgetvalue(r, 0, 1)) - *in_use;
    }
    PQclear(r);
    return n;
}

/* One PostgreSQL server (host:port as libpq connected to it) and the
 * connections the tiles on it will open. */
typedef struct pg_server {
    char key[300];
    char shown[600]; /* the first tile's conninfo, password hidden */
    int tiles, avail, max_conn, in_use;
} pg_server;

static int oltp_probe(const void *cfg, int tiles, char *err) {
    const oltp_cfg *c = cfg;
    pg_server *sv = xcalloc((size_t)tiles, sizeof *sv);
    int rc = 0, n_sv = 0;
    for (int t = 1; t <= tiles && rc == 0; t++) {
        const char *ci = conninfo_for(c, t);
        char shown[600], key[300];
        const char *keys[] = {"dbname", "application_name", "connect_timeout", NULL};
        const char *vals[] = {ci, "tilebench-probe", "10", NULL};
        char sql[96];
        PGconn *conn;
        PGresult *r;
        int k;
        if (!*ci) {
            tb_seterr(err, "oltp: tile %d has no PostgreSQL endpoint ([sut] pg = conninfo, or pg.tile%d)", t, t);
            rc = -1;
            break;
        }
        conn = PQconnectdbParams(keys, vals, 1);
        if (PQstatus(conn) != CONNECTION_OK) {
            char *msg = PQerrorMessage(conn);
            const char *why = msg;
            size_t n = strlen(msg);
            while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                msg[--n] = '\0';
            if (!conninfo_shown(ci, shown, sizeof shown)) /* libpq's message quotes the text: maybe a password */
                why = "libpq cannot read it (a value with a space or a quote goes in single quotes, "
                      "with \\' and \\\\ for a quote and a backslash)";
            tb_seterr(err, "oltp: tile %d: connect %s: %s", t, shown, why);
            PQfinish(conn);
            rc = -1;
            break;
        }
        /* Connections are counted per server, whatever database or host name
         * each tile's conninfo gives: the server is the address libpq
         * connected to (PQhostaddr; for a Unix socket, its folder) and port,
         * and the first tile on it asks for its free slots. */
        {
            const char *h = PQhostaddr(conn) && *PQhostaddr(conn) ? PQhostaddr(conn) : PQhost(conn);
            snprintf(key, sizeof key, "%s:%s", h ? h : "", PQport(conn) ? PQport(conn) : "");
        }
        for (k = 0; k < n_sv && strcmp(sv[k].key, key) != 0; k++) {
        }
        if (k == n_sv) {
            n_sv++;
            snprintf(sv[k].key, sizeof sv[k].key, "%s", key);
            conninfo_shown(ci, sv[k].shown, sizeof sv[k].shown);
            sv[k].avail = free_slots(conn, &sv[k].max_conn, &sv[k].in_use);
        }
        sv[k].tiles++;
        snprintf(sql, sizeof sql, "SELECT count(*) FROM tile%d.products", t);
        r = PQexec(conn, sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || atoi(PQgetvalue(r, 0, 0)) != TB_OLTP_PRODUCTS) {
            conninfo_shown(ci, shown, sizeof shown);
            tb_seterr(err,
                      "oltp: %s: tile %d has no OLTP data (schema tile%d with %d products); load it with "
                      "`tilebench sut up --tiles %d` or point [sut] pg at a loaded server",
                      shown, t, t, TB_OLTP_PRODUCTS, tiles);
            rc = -1;
        }
        PQclear(r);
        PQfinish(conn);
    }
    /* too many users for a server show here, not as a level of connect errors */
    for (int k = 0; k < n_sv && rc == 0; k++) {
        long need = (long)sv[k].tiles * c->users;
        if (sv[k].avail < 0 || need <= sv[k].avail) continue;
        tb_seterr(err,
                  "oltp: %s: %d tile%s x %d users need %ld connections, but the server has %d free "
                  "(max_connections %d, %d in use); raise max_connections (`tilebench sut up --tiles %d` "
                  "sizes the embedded SUT) or run fewer tiles",
                  sv[k].shown, sv[k].tiles, sv[k].tiles == 1 ? "" : "s", c->users, need, sv[k].avail, sv[k].max_conn,
                  sv[k].in_use, tiles);
        rc = -1;
    }
    free(sv);
    return rc;
}

const tb_workload_vt tb_oltp_workload = {
    .kind = "oltp",
    .n_ops = N_OPS,
    .op_names = tb_kind_oltp_ops,
    .metric_mask = (1u << OP_ORDER) | (1u << OP_POINT),
    .sockets_per_user = 1,
    .coarse_at_max_rate =
        1, /* its only timers: the back-off after a lost connection, the zero-delay "done next turn" */
    .probe = oltp_probe,
    .configure = oltp_configure,
    .cfg_free = oltp_cfg_free,
    .user_new = oltp_user_new,
    .next_op = oltp_next_op,
    .op_start = oltp_op_start,
    .op_cancel = oltp_op_cancel,
    .user_free = oltp_user_free,
};
