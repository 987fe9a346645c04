/*
 * web_load.c: creates one tile's web data set (Olio-like social events) in
 * PostgreSQL schema "web<N>": tables, rows streamed with COPY through libpq,
 * then keys, indexes for every page's query, statistics and the tb_meta mark,
 * all in one transaction (a tile is fully loaded or left as it was). The
 * structure follows sut/oltp_load.c.
 *
 * Rows come from a splitmix64 stream seeded with the tile number, drawn in a
 * fixed order, so every run on every host sees the same data.
 */
#include "sut/web_load.h"

#include <libpq-fe.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "sut/pg_copy.h"

/* ---- word lists ------------------------------------------------------------ */

static const char *const first_names[32] = {
    "Ada",      "Alan",  "Grace",  "Linus", "Barbara", "Ken",   "Dennis", "Margaret", "Edsger", "Frances", "Donald",
    "Radia",    "Tim",   "Vint",   "Hedy",  "John",    "Karen", "Leslie", "Niklaus",  "Ole",    "Shafi",   "Whitfield",
    "Yukihiro", "Guido", "Bjarne", "Anita", "Brian",   "Carol", "Dana",   "Erik",     "Fiona",  "Gert"};
static const char *const last_names[32] = {
    "Lovelace",   "Turing",  "Hopper",    "Torvalds", "Liskov",     "Thompson", "Ritchie",   "Hamilton",
    "Dijkstra",   "Allen",   "Knuth",     "Perlman",  "Lee",        "Cerf",     "Lamarr",    "Backus",
    "Jones",      "Lamport", "Wirth",     "Dahl",     "Goldwasser", "Diffie",   "Matsumoto", "Rossum",
    "Stroustrup", "Borg",    "Kernighan", "Shaw",     "Scott",      "Berg",     "Moore",     "Haas"};
static const char *const cities[16] = {"Berlin", "Paris",  "Madrid", "Rome",   "Vienna", "Prague", "Oslo",   "Lisbon",
                                       "Dublin", "Zurich", "Warsaw", "Athens", "Boston", "Austin", "Denver", "Seattle"};
static const char *const fillers[32] = {"the",   "a",     "with",   "for",   "and",    "friends", "evening", "open",
                                        "great", "local", "annual", "free",  "first",  "new",     "session", "club",
                                        "night", "day",   "big",    "small", "weekly", "city",    "group",   "talk",
                                        "show",  "tour",  "fair",   "walk",  "lab",    "camp",    "jam",     "social"};

/* ---- generator ------------------------------------------------------------- */

/* The COPY text of one table goes into a tb_buf (common/buf.h) capped at
 * WEB_BYTES_PER_PERSON per registered person: the largest table, comments,
 * averages about 3.3 KB a person, so the cap is only reached if the
 * generator itself goes wrong. An append past it is refused and leaves
 * b->overflow set, which tb_web_generate checks once at the end. */
#define WEB_BYTES_PER_PERSON ((size_t)16 << 10)

/* splitmix64 (Vigna), as in oltp_load.c. */
static uint64_t next_rand(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rand_range(uint64_t *x, int lo, int hi) { return lo + (int)(next_rand(x) % (uint64_t)(hi - lo + 1)); }

/* n words from the filler and tag lists, separated by spaces. */
static void gen_words(tb_buf *b, uint64_t *x, int n, int capital) {
    for (int i = 0; i < n; i++) {
        const char *w =
            (next_rand(x) & 1) ? fillers[rand_range(x, 0, 31)] : tb_web_tag(rand_range(x, 0, TB_WEB_TAGS - 1));
        if (i) tb_buf_put(b, " ");
        if (capital && w[0] >= 'a' && w[0] <= 'z')
            tb_buf_putf(b, "%c%s", w[0] - 'a' + 'A', w + 1);
        else
            tb_buf_put(b, w);
    }
}

/* One stream per table, so tables can be generated independently and in
 * any order with the same result. */
static uint64_t seed(int tile, int table) {
    return 0x7765620000000000ull /* "web" */ ^ ((uint64_t)tile << 16) ^ (uint64_t)table;
}

static void gen_persons(tb_buf *b, int tile, int persons) {
    uint64_t x = seed(tile, TB_WEB_PERSONS);
    for (int k = 1; k <= persons; k++) {
        int f = rand_range(&x, 0, 31), l = rand_range(&x, 0, 31), c = rand_range(&x, 0, 15);
        int y = 2020 + rand_range(&x, 0, 5), m = rand_range(&x, 1, 12), d = rand_range(&x, 1, 28);
        tb_buf_putf(b, "%d\tuser%d\tpassword%d\t%s %s\tuser%d@example.com\t%s\t", k, k, k, first_names[f],
                    last_names[l], k, cities[c]);
        gen_words(b, &x, rand_range(&x, 8, 20), 0);
        tb_buf_putf(b, "\t%04d-%02d-%02d\n", y, m, d);
    }
}

static void gen_events(tb_buf *b, int tile, int persons) {
    uint64_t x = seed(tile, TB_WEB_EVENTS);
    int events = persons * TB_WEB_EVENTS_PER_PERSON;
    for (int e = 1; e <= events; e++) {
        int y = 2030 + rand_range(&x, 0, 1), m = rand_range(&x, 1, 12), d = rand_range(&x, 1, 28);
        int h = rand_range(&x, 8, 21), c = rand_range(&x, 0, 15), sub = rand_range(&x, 1, persons);
        tb_buf_putf(b, "%d\t", e);
        gen_words(b, &x, rand_range(&x, 2, 5), 1);
        tb_buf_put(b, "\t");
        gen_words(b, &x, rand_range(&x, 20, 60), 0);
        tb_buf_putf(b, "\t%04d-%02d-%02d\t%02d:%02d\t%d %s Street\t%s\t%d\t2029-12-%02d 12:00:00+00\n", y, m, d, h,
                    rand_range(&x, 0, 3) * 15, rand_range(&x, 1, 999), last_names[rand_range(&x, 0, 31)], cities[c],
                    sub, rand_range(&x, 1, 28));
    }
}

static void gen_tags(tb_buf *b) {
    for (int i = 0; i < TB_WEB_TAGS; i++)
        tb_buf_putf(b, "%d\t%s\n", i + 1, tb_web_tag(i));
}

/* k distinct values in 1..n (k <= 20) into out, by rejection. */
static int pick_distinct(uint64_t *x, int k, int n, int *out) {
    int got = 0;
    if (k > n) k = n;
    while (got < k) {
        int v = rand_range(x, 1, n), dup = 0;
        for (int i = 0; i < got; i++)
            dup |= out[i] == v;
        if (!dup) out[got++] = v;
    }
    return got;
}

static void gen_event_tags(tb_buf *b, int tile, int persons) {
    uint64_t x = seed(tile, TB_WEB_EVENT_TAGS);
    int events = persons * TB_WEB_EVENTS_PER_PERSON, ids[20];
    for (int e = 1; e <= events; e++) {
        int n = pick_distinct(&x, rand_range(&x, 1, 5), TB_WEB_TAGS, ids);
        for (int i = 0; i < n; i++)
            tb_buf_putf(b, "%d\t%d\n", e, ids[i]);
    }
}

static void gen_attendees(tb_buf *b, int tile, int persons) {
    uint64_t x = seed(tile, TB_WEB_ATTENDEES);
    int events = persons * TB_WEB_EVENTS_PER_PERSON, ids[20];
    for (int e = 1; e <= events; e++) {
        int n = pick_distinct(&x, rand_range(&x, 0, 20), persons, ids);
        for (int i = 0; i < n; i++)
            tb_buf_putf(b, "%d\t%d\n", e, ids[i]);
    }
}

static void gen_comments(tb_buf *b, int tile, int persons) {
    uint64_t x = seed(tile, TB_WEB_COMMENTS);
    int events = persons * TB_WEB_EVENTS_PER_PERSON, id = 0;
    for (int e = 1; e <= events; e++) {
        int n = rand_range(&x, 0, 10);
        for (int i = 0; i < n; i++) {
            tb_buf_putf(b, "%d\t%d\t%d\t", ++id, e, rand_range(&x, 1, persons));
            gen_words(b, &x, rand_range(&x, 5, 25), 0);
            tb_buf_putf(b, "\t2029-%02d-%02d 18:%02d:00+00\n", rand_range(&x, 1, 12), rand_range(&x, 1, 28),
                        rand_range(&x, 0, 59));
        }
    }
}

char *tb_web_generate(int tile, int users, int table, size_t *len) {
    tb_buf b;
    int persons;
    if (tile < 1 || users < 1 || users > TB_WEB_MAX_USERS || table < 0 || table >= TB_WEB_NTABLES) return NULL;
    persons = users * TB_WEB_PERSONS_PER_USER;
    tb_buf_init(&b, (size_t)persons * WEB_BYTES_PER_PERSON);
    switch (table) {
    case TB_WEB_PERSONS: gen_persons(&b, tile, persons); break;
    case TB_WEB_EVENTS: gen_events(&b, tile, persons); break;
    case TB_WEB_TAGTABLE: gen_tags(&b); break;
    case TB_WEB_EVENT_TAGS: gen_event_tags(&b, tile, persons); break;
    case TB_WEB_ATTENDEES: gen_attendees(&b, tile, persons); break;
    default: gen_comments(&b, tile, persons); break;
    }
    if (b.overflow) {
        tb_buf_free(&b);
        return NULL;
    }
    return tb_buf_take(&b, len);
}

/* ---- loading --------------------------------------------------------------- */

/* "@S@" stands for the schema name (web<N>). Keys and indexes come after the
 * data (one sort per index instead of row-by-row maintenance). */
static const char web_sql_pre[] = "BEGIN;\n"
                                  "DROP SCHEMA IF EXISTS @S@ CASCADE;\n"
                                  "CREATE SCHEMA @S@;\n"
                                  "SET LOCAL search_path = @S@;\n"
                                  "CREATE TABLE persons (\n"
                                  "  id serial, username text NOT NULL, password text NOT NULL,\n"
                                  "  name text NOT NULL, email text NOT NULL, city text NOT NULL,\n"
                                  "  summary text NOT NULL, created date NOT NULL DEFAULT current_date,\n"
                                  "  image bytea, image_type text);\n"
                                  "CREATE TABLE events (\n"
                                  "  id serial, title text NOT NULL, description text NOT NULL,\n"
                                  "  event_date date NOT NULL, event_time time NOT NULL DEFAULT '19:00',\n"
                                  "  address text NOT NULL, city text NOT NULL, submitter integer NOT NULL,\n"
                                  "  created timestamptz NOT NULL DEFAULT now());\n"
                                  "CREATE TABLE tags (id integer, name text NOT NULL);\n"
                                  "CREATE TABLE event_tags (event_id integer NOT NULL, tag_id integer NOT NULL);\n"
                                  "CREATE TABLE attendees (event_id integer NOT NULL, person_id integer NOT NULL);\n"
                                  "CREATE TABLE comments (\n"
                                  "  id serial, event_id integer NOT NULL, person_id integer NOT NULL,\n"
                                  "  body text NOT NULL, created timestamptz NOT NULL DEFAULT now());\n";

static const char web_sql_post[] =
    "SET LOCAL search_path = @S@;\n"
    "ALTER TABLE persons ADD PRIMARY KEY (id);\n"
    "ALTER TABLE events ADD PRIMARY KEY (id);\n"
    "ALTER TABLE tags ADD PRIMARY KEY (id);\n"
    "ALTER TABLE tags ADD UNIQUE (name);\n"
    "ALTER TABLE comments ADD PRIMARY KEY (id);\n"
    /* TagSearch: tag -> its events; EventDetail: an event's tags. */
    "ALTER TABLE event_tags ADD PRIMARY KEY (tag_id, event_id);\n"
    "CREATE INDEX ix_event_tags_event ON event_tags (event_id);\n"
    /* EventDetail: attendees of an event; PersonDetail: events a person attends. */
    "ALTER TABLE attendees ADD PRIMARY KEY (event_id, person_id);\n"
    "CREATE INDEX ix_attendees_person ON attendees (person_id);\n"
    /* EventDetail: newest comments first. */
    "CREATE INDEX ix_comments_event ON comments (event_id, id);\n"
    /* HomePage: upcoming events in date order; PersonDetail: a person's events. */
    "CREATE INDEX ix_events_date ON events (event_date, id);\n"
    "CREATE INDEX ix_events_submitter ON events (submitter, event_date);\n"
    /* Login. Not unique: AddPerson takes the e-mail as user name, and a
     * client may send the same one twice. */
    "CREATE INDEX ix_persons_username ON persons (username);\n"
    "ALTER TABLE events ADD FOREIGN KEY (submitter) REFERENCES persons (id);\n"
    "ALTER TABLE event_tags ADD FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE;\n"
    "ALTER TABLE event_tags ADD FOREIGN KEY (tag_id) REFERENCES tags (id);\n"
    "ALTER TABLE attendees ADD FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE;\n"
    "ALTER TABLE attendees ADD FOREIGN KEY (person_id) REFERENCES persons (id);\n"
    "ALTER TABLE comments ADD FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE;\n"
    "ALTER TABLE comments ADD FOREIGN KEY (person_id) REFERENCES persons (id);\n"
    "SELECT setval(pg_get_serial_sequence('@S@.persons', 'id'), (SELECT max(id) FROM persons));\n"
    "SELECT setval(pg_get_serial_sequence('@S@.events', 'id'), (SELECT max(id) FROM events));\n"
    "SELECT setval(pg_get_serial_sequence('@S@.comments', 'id'), greatest(1, (SELECT max(id) FROM comments)));\n"
    "CREATE TABLE tb_meta (k text PRIMARY KEY, v text NOT NULL);\n"
    "INSERT INTO tb_meta VALUES ('loaded', '@V@');\n"
    "ANALYZE persons, events, tags, event_tags, attendees, comments;\n"
    "COMMIT;\n";

/* script with "@S@" -> schema and "@V@" -> version. Caller frees. */
static char *expand(const char *script, const char *schema, const char *version) {
    tb_buf b;
    const char *p = script, *q;
    tb_buf_init(&b, 0);
    while ((q = strstr(p, "@")) != NULL) {
        if (strncmp(q, "@S@", 3) == 0 || strncmp(q, "@V@", 3) == 0) {
            tb_buf_putf(&b, "%.*s%s", (int)(q - p), p, q[1] == 'S' ? schema : version);
            p = q + 3;
        } else {
            tb_buf_putf(&b, "%.*s", (int)(q - p + 1), p);
            p = q + 1;
        }
    }
    tb_buf_put(&b, p);
    return tb_buf_take(&b, NULL);
}
static int exec_script(PGconn *conn, int tile, const char *script, const char *schema, const char *version, char *err) {
    char *sql = expand(script, schema, version), what[32];
    int rc;
    snprintf(what, sizeof what, "web load tile %d", tile);
    rc = sut_pg_exec(conn, sql, what, err);
    free(sql);
    return rc;
}

int tb_web_load(const char *conninfo, int tile, int users, char *err) {
    static const char *const tables[TB_WEB_NTABLES] = {
        "persons (id, username, password, name, email, city, summary, created)",
        "events (id, title, description, event_date, event_time, address, city, submitter, created)",
        "tags (id, name)",
        "event_tags (event_id, tag_id)",
        "attendees (event_id, person_id)",
        "comments (id, event_id, person_id, body, created)"};
    char schema[32], version[64], sql[128], tc[256], what[32];
    PGconn *conn;
    PGresult *res;
    int rc = 0, loaded;

    if (tile < 1) {
        tb_seterr(err, "web load tile %d: tile numbers start at 1", tile);
        return -1;
    }
    if (users < 1 || users > TB_WEB_MAX_USERS) {
        tb_seterr(err, "web load tile %d: users %d: must be 1..%d", tile, users, TB_WEB_MAX_USERS);
        return -1;
    }
    snprintf(schema, sizeof schema, "web%d", tile);
    /* The version names the person count too: other users = other data. */
    snprintf(version, sizeof version, "%s persons=%d", TB_WEB_DATA_VERSION, users * TB_WEB_PERSONS_PER_USER);
    snprintf(what, sizeof what, "web load tile %d", tile);
    if (!(conn = sut_pg_connect(conninfo, what, err))) return -1;
    snprintf(sql, sizeof sql, "SELECT v FROM %s.tb_meta WHERE k = 'loaded'", schema);
    res = PQexec(conn, sql);
    loaded =
        PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), version) == 0;
    PQclear(res);
    if (loaded) {
        PQfinish(conn);
        return 0;
    }
    rc = exec_script(conn, tile, web_sql_pre, schema, version, err);
    for (int t = 0; t < TB_WEB_NTABLES && rc == 0; t++) {
        size_t len = 0;
        char *data = tb_web_generate(tile, users, t, &len);
        snprintf(tc, sizeof tc, "%s.%s", schema, tables[t]);
        if (!data) {
            tb_seterr(err, "web load tile %d: table %s passed %zu bytes per person", tile, tables[t],
                      WEB_BYTES_PER_PERSON);
            rc = -1;
            break;
        }
        rc = sut_pg_copy_in(conn, tc, data, len, what, err);
        free(data);
    }
    if (rc == 0) rc = exec_script(conn, tile, web_sql_post, schema, version, err);
    if (rc != 0) {
        res = PQexec(conn, "ROLLBACK");
        PQclear(res);
    }
    PQfinish(conn);
    return rc;
}
