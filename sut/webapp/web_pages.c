/*
 * web_pages.c: the reference web application's pages (docs/webapp.md):
 * the layout every page shares, then one function per page, each with a
 * constant number of queries.
 */
#include "sut/webapp/web_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sut/webapp/web_html.h"

/* ---- page layout ----------------------------------------------------------- */

/* The head and top bar every page shares: the tb-page marker, 2 style
 * sheets, 3 scripts, the logo and the feed icon (7 assets). */
static void page_begin(page *p, int op, unsigned status, const char *title) {
    tb_buf *b = &p->html;
    p->status = status;
    p->op = op;
    tb_buf_put(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    tb_buf_putf(b, "<meta name=\"tb-page\" content=\"%s\">\n<title>", tb_kind_web_ops[op]);
    web_esc(b, title);
    tb_buf_put(b, " - tilebench events</title>\n");
    for (int i = 0; tb_web_page_css[i]; i++)
        tb_buf_putf(b, "<link rel=\"stylesheet\" href=\"%s\">\n", tb_web_page_css[i]);
    for (int i = 0; tb_web_page_js[i]; i++)
        tb_buf_putf(b, "<script src=\"%s\"></script>\n", tb_web_page_js[i]);
    tb_buf_put(b, "</head>\n<body>\n<div id=\"top\"><a href=\"/\"><img class=\"logo\" src=\"/static/img/logo.png\" "
                  "alt=\"tilebench events\"></a>\n<nav><a href=\"/\">Home</a> <a href=\"/tags?tag=music\">Music</a> "
                  "<a href=\"/tags?tag=food\">Food</a> <a href=\"/tags?tag=coding\">Coding</a></nav>\n"
                  "<form class=\"search\" action=\"/tags\" method=\"get\"><input id=\"q\" type=\"text\" name=\"tag\" "
                  "placeholder=\"tag\"> <input type=\"submit\" value=\"Search\"></form>\n"
                  "<a href=\"/\"><img src=\"/static/img/rss.png\" alt=\"feed\"></a></div>\n"
                  "<div id=\"main\"><div id=\"content\">\n<h1>");
    web_esc(b, title);
    tb_buf_put(b, "</h1>\n");
}

/* The side bar (login and register forms) and the footer. */
static void page_end(page *p) {
    tb_buf_put(&p->html, "</div>\n<div id=\"side\">\n<h2>Log in</h2>\n<form action=\"/login\" method=\"post\">"
                         "<label>User <input type=\"text\" name=\"user\" required></label>"
                         "<label>Password <input type=\"password\" name=\"password\" required></label>"
                         "<input type=\"submit\" value=\"Log in\"></form>\n"
                         "<h2>Register</h2>\n<form action=\"/persons\" method=\"post\" enctype=\"multipart/form-data\">"
                         "<label>Name <input type=\"text\" name=\"name\" required></label>"
                         "<label>E-mail <input type=\"email\" name=\"email\" required></label>"
                         "<label>Password <input type=\"password\" name=\"password\" required></label>"
                         "<label>Picture <input type=\"file\" name=\"image\"></label>"
                         "<input type=\"submit\" value=\"Register\"></form>\n</div></div>\n"
                         "<div id=\"foot\">tilebench reference web application</div>\n</body>\n</html>\n");
}

/* A thumbnail (one of TB_WEB_EVENT_THUMBS, by event id) and a linked title. */
static void event_item(tb_buf *b, const char *id, const char *title, const char *date, const char *city) {
    long n = atol(id);
    tb_buf_putf(b,
                "<li><img class=\"thumb\" src=\"/static/img/event%ld.png\" alt=\"\"><span class=\"when\" data-date=\"",
                n % TB_WEB_EVENT_THUMBS);
    web_esc(b, date);
    tb_buf_put(b, "\">");
    web_esc(b, date);
    tb_buf_put(b, "</span> <a href=\"/events/");
    web_esc(b, id);
    tb_buf_put(b, "\">");
    web_esc(b, title);
    tb_buf_put(b, "</a>");
    if (city) {
        tb_buf_put(b, " <span class=\"muted\">");
        web_esc(b, city);
        tb_buf_put(b, "</span>");
    }
    tb_buf_put(b, "</li>\n");
}

static void avatar(tb_buf *b, const char *person_id) {
    tb_buf_putf(b, "<img class=\"avatar\" src=\"/static/img/avatar%ld.png\" alt=\"\">",
                atol(person_id) % TB_WEB_AVATARS);
}

/* A page with just a message: errors and the result of a form. */
static void message_page(page *p, int op, unsigned status, const char *title, const char *text) {
    page_begin(p, op, status, title);
    tb_buf_put(&p->html, "<p class=\"error\">");
    web_esc(&p->html, text);
    tb_buf_put(&p->html, "</p>\n");
    page_end(p);
}

/* Error pages outside any op: a plain document without the marker. */
void web_error_page(page *p, unsigned status, const char *text) {
    p->status = status;
    p->op = -1;
    tb_buf_putf(&p->html,
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>%u</title></head>\n"
                "<body><h1>%u</h1><p>",
                status, status);
    web_esc(&p->html, text);
    tb_buf_put(&p->html, "</p></body></html>\n");
}

/* ---- pages ----------------------------------------------------------------- */

static void render_home(tb_webapp *app, slot *s, page *p) {
    PGresult *ev = web_run(s, "home_events", 0, NULL, NULL, NULL), *tg;
    tb_buf *b = &p->html;
    if (!ev) {
        message_page(p, OP_HOME, 503, "Unavailable", "the database did not answer");
        return;
    }
    tg = web_run(s, "home_tags", 0, NULL, NULL, NULL);
    if (!tg) {
        PQclear(ev);
        message_page(p, OP_HOME, 503, "Unavailable", "the database did not answer");
        return;
    }
    (void)app;
    page_begin(p, OP_HOME, 200, "Upcoming events");
    tb_buf_put(b, "<ul class=\"events\">\n");
    for (int i = 0; i < PQntuples(ev); i++) {
        event_item(b, PQgetvalue(ev, i, 0), PQgetvalue(ev, i, 1), PQgetvalue(ev, i, 2), PQgetvalue(ev, i, 4));
    }
    tb_buf_put(b, "</ul>\n<h2>Tags</h2>\n<div class=\"tagcloud\">\n");
    for (int i = 0; i < PQntuples(tg); i++) {
        tb_buf_put(b, "<a class=\"tag\" data-n=\"");
        web_esc(b, PQgetvalue(tg, i, 1));
        tb_buf_put(b, "\" href=\"/tags?tag=");
        web_esc(b, PQgetvalue(tg, i, 0));
        tb_buf_put(b, "\">");
        web_esc(b, PQgetvalue(tg, i, 0));
        tb_buf_put(b, "</a>\n");
    }
    tb_buf_put(b, "</div>\n");
    page_end(p);
    PQclear(ev);
    PQclear(tg);
}

/* HomePage: the cached page from Redis, else rendered and cached. */
static void page_home(tb_webapp *app, slot *s, page *p) {
    redisReply *rep = redisCommand(s->rd, "GET %s", app->k_home);
    if (rep && rep->type == REDIS_REPLY_STRING) {
        tb_buf_putn(&p->html, rep->str, rep->len);
        p->status = 200;
        p->op = OP_HOME;
        freeReplyObject(rep);
        return;
    }
    if (rep) freeReplyObject(rep);
    rep = redisCommand(s->rd, "WATCH %s", app->k_gen);
    if (rep) freeReplyObject(rep);
    render_home(app, s, p);
    if (p->status == 200 && !p->html.overflow) {
        redisAppendCommand(s->rd, "MULTI");
        redisAppendCommand(s->rd, "SET %s %b EX %d", app->k_home, tb_buf_str(&p->html), p->html.len,
                           TB_WEBAPP_HOME_TTL_S);
        redisAppendCommand(s->rd, "EXEC");
        for (int i = 0; i < 3; i++) {
            void *x = NULL;
            if (redisGetReply(s->rd, &x) != REDIS_OK) break;
            freeReplyObject(x);
        }
    } else {
        rep = redisCommand(s->rd, "UNWATCH");
        if (rep) freeReplyObject(rep);
    }
}

static const char *field(req *r, int f) { return tb_buf_str(&r->field[f]); }

/* 32 hex digits from the kernel's generator; -1 when it fails. */
static int new_session_id(char out[33]) {
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) return -1;
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

static void page_login(tb_webapp *app, slot *s, req *r, page *p) {
    const char *vals[2] = {field(r, F_USER), field(r, F_PASSWORD)};
    char sid[33];
    PGresult *res;
    redisReply *rep;
    if (!*vals[0] || !*vals[1]) {
        message_page(p, OP_LOGIN, 400, "Log in", "user and password are required");
        return;
    }
    res = web_run(s, "login", 2, vals, NULL, NULL);
    if (!res) {
        message_page(p, OP_LOGIN, 503, "Log in", "the database did not answer");
        return;
    }
    if (PQntuples(res) != 1) {
        PQclear(res);
        message_page(p, OP_LOGIN, 403, "Log in", "unknown user or wrong password");
        return;
    }
    if (new_session_id(sid) != 0) {
        PQclear(res);
        message_page(p, OP_LOGIN, 500, "Log in", "no random numbers for a session id");
        return;
    }
    rep = redisCommand(s->rd, "SET %s%s %s EX %d", app->k_sess, sid, PQgetvalue(res, 0, 0), TB_WEBAPP_SESSION_TTL_S);
    if (!rep || rep->type == REDIS_REPLY_ERROR) {
        if (rep) freeReplyObject(rep);
        PQclear(res);
        message_page(p, OP_LOGIN, 503, "Log in", "the session store did not answer");
        return;
    }
    freeReplyObject(rep);
    snprintf(p->cookie, sizeof p->cookie, "tbsid=%s; Path=/; HttpOnly", sid);
    page_begin(p, OP_LOGIN, 200, "Welcome");
    tb_buf_put(&p->html, "<p>");
    avatar(&p->html, PQgetvalue(res, 0, 0));
    tb_buf_put(&p->html, " Logged in as <a href=\"/persons/");
    web_esc(&p->html, PQgetvalue(res, 0, 0));
    tb_buf_put(&p->html, "\">");
    web_esc(&p->html, PQgetvalue(res, 0, 1));
    tb_buf_put(&p->html, "</a>.</p>\n<h2>Add an event</h2>\n<form action=\"/events\" method=\"post\">"
                         "<label>Title <input type=\"text\" name=\"title\" required></label>"
                         "<label>Description <textarea name=\"description\"></textarea></label>"
                         "<label>Date <input type=\"text\" name=\"date\" required></label>"
                         "<label>Tags <input type=\"text\" name=\"tags\"></label>"
                         "<input type=\"submit\" value=\"Add\"></form>\n");
    page_end(p);
    PQclear(res);
}

/* A tag: 1..32 lowercase letters, digits or '-'. */
static int tag_ok(const char *t) {
    size_t n = 0;
    for (; *t; t++, n++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9') || *t == '-')) return 0;
    return n >= 1 && n <= 32;
}

static void page_tags(slot *s, struct MHD_Connection *c, page *p) {
    const char *tag = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "tag");
    PGresult *res;
    char title[64];
    if (!tag || !tag_ok(tag)) {
        message_page(p, OP_TAGSEARCH, 400, "Tag search", "tag: expected 1 to 32 lowercase letters, digits or '-'");
        return;
    }
    res = web_run(s, "tag_search", 1, &tag, NULL, NULL);
    if (!res) {
        message_page(p, OP_TAGSEARCH, 503, "Tag search", "the database did not answer");
        return;
    }
    snprintf(title, sizeof title, "Events tagged %s", tag);
    page_begin(p, OP_TAGSEARCH, 200, title);
    tb_buf_putf(&p->html, "<p class=\"muted\">%d events</p>\n<ul class=\"events\">\n", PQntuples(res));
    for (int i = 0; i < PQntuples(res); i++)
        event_item(&p->html, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
                   PQgetvalue(res, i, 3));
    tb_buf_put(&p->html, "</ul>\n");
    page_end(p);
    PQclear(res);
}

static void page_event(slot *s, long id, page *p) {
    char idbuf[24];
    const char *v = idbuf;
    PGresult *ev, *pp;
    tb_buf *b = &p->html;
    snprintf(idbuf, sizeof idbuf, "%ld", id);
    ev = web_run(s, "event", 1, &v, NULL, NULL);
    if (!ev) {
        message_page(p, OP_EVENT, 503, "Event", "the database did not answer");
        return;
    }
    if (PQntuples(ev) != 1) {
        PQclear(ev);
        message_page(p, OP_EVENT, 404, "Event not found", "no event with this id");
        return;
    }
    pp = web_run(s, "event_people", 1, &v, NULL, NULL);
    if (!pp) {
        PQclear(ev);
        message_page(p, OP_EVENT, 503, "Event", "the database did not answer");
        return;
    }
    page_begin(p, OP_EVENT, 200, PQgetvalue(ev, 0, 1));
    tb_buf_putf(b, "<p><img class=\"thumb\" src=\"/static/img/event%ld.png\" alt=\"\"> ", id % TB_WEB_EVENT_THUMBS);
    web_esc(b, PQgetvalue(ev, 0, 3));
    tb_buf_put(b, " at ");
    web_esc(b, PQgetvalue(ev, 0, 4));
    tb_buf_put(b, ", ");
    web_esc(b, PQgetvalue(ev, 0, 5));
    tb_buf_put(b, ", ");
    web_esc(b, PQgetvalue(ev, 0, 6));
    tb_buf_put(b, "</p>\n<p>");
    web_esc(b, PQgetvalue(ev, 0, 2));
    tb_buf_put(b, "</p>\n<p class=\"muted\">Submitted by <a href=\"/persons/");
    web_esc(b, PQgetvalue(ev, 0, 7));
    tb_buf_put(b, "\">");
    web_esc(b, PQgetvalue(ev, 0, 8));
    tb_buf_put(b, "</a></p>\n<p>");
    {
        char *tags = xstrdup(PQgetvalue(ev, 0, 9)), *save = NULL;
        for (char *t = strtok_r(tags, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            tb_buf_put(b, "<a class=\"tag\" href=\"/tags?tag=");
            web_esc(b, t);
            tb_buf_put(b, "\">");
            web_esc(b, t);
            tb_buf_put(b, "</a> ");
        }
        free(tags);
    }
    tb_buf_put(b, "</p>\n<h2>Attendees</h2>\n<p>");
    for (int i = 0; i < PQntuples(pp); i++) {
        if (PQgetvalue(pp, i, 0)[0] != 'a') continue;
        tb_buf_put(b, "<a href=\"/persons/");
        web_esc(b, PQgetvalue(pp, i, 1));
        tb_buf_put(b, "\" title=\"");
        web_esc(b, PQgetvalue(pp, i, 2));
        tb_buf_put(b, "\">");
        avatar(b, PQgetvalue(pp, i, 1));
        tb_buf_put(b, "</a>");
    }
    tb_buf_put(b, "</p>\n<h2>Comments</h2>\n");
    for (int i = 0; i < PQntuples(pp); i++) {
        if (PQgetvalue(pp, i, 0)[0] != 'c') continue;
        tb_buf_put(b, "<div class=\"comment\"><a href=\"/persons/");
        web_esc(b, PQgetvalue(pp, i, 1));
        tb_buf_put(b, "\">");
        web_esc(b, PQgetvalue(pp, i, 2));
        tb_buf_put(b, "</a> <span class=\"muted\">");
        web_esc(b, PQgetvalue(pp, i, 4));
        tb_buf_put(b, "</span><br>");
        web_esc(b, PQgetvalue(pp, i, 3));
        tb_buf_put(b, "</div>\n");
    }
    page_end(p);
    PQclear(ev);
    PQclear(pp);
}

static void page_person(slot *s, long id, page *p) {
    char idbuf[24];
    const char *v = idbuf;
    PGresult *pr, *ev;
    tb_buf *b = &p->html;
    snprintf(idbuf, sizeof idbuf, "%ld", id);
    pr = web_run(s, "person", 1, &v, NULL, NULL);
    if (!pr) {
        message_page(p, OP_PERSON, 503, "Person", "the database did not answer");
        return;
    }
    if (PQntuples(pr) != 1) {
        PQclear(pr);
        message_page(p, OP_PERSON, 404, "Person not found", "no person with this id");
        return;
    }
    ev = web_run(s, "person_events", 1, &v, NULL, NULL);
    if (!ev) {
        PQclear(pr);
        message_page(p, OP_PERSON, 503, "Person", "the database did not answer");
        return;
    }
    page_begin(p, OP_PERSON, 200, PQgetvalue(pr, 0, 1));
    tb_buf_put(b, "<p>");
    avatar(b, idbuf);
    tb_buf_put(b, " ");
    web_esc(b, PQgetvalue(pr, 0, 3));
    tb_buf_put(b, ", member since ");
    web_esc(b, PQgetvalue(pr, 0, 5));
    tb_buf_put(b, " <span class=\"muted\">");
    web_esc(b, PQgetvalue(pr, 0, 2));
    tb_buf_put(b, "</span></p>\n<p>");
    web_esc(b, PQgetvalue(pr, 0, 4));
    tb_buf_put(b, "</p>\n");
    if (strcmp(PQgetvalue(pr, 0, 6), "0") != 0) {
        tb_buf_put(b, "<p class=\"muted\">Picture: ");
        web_esc(b, PQgetvalue(pr, 0, 6));
        tb_buf_put(b, " bytes</p>\n");
    }
    for (int k = 0; k < 2; k++) {
        char want = k == 0 ? 's' : 'a';
        tb_buf_put(b, k == 0 ? "<h2>Submitted events</h2>\n<ul class=\"events\">\n"
                             : "<h2>Attending</h2>\n<ul class=\"events\">\n");
        for (int i = 0; i < PQntuples(ev); i++)
            if (PQgetvalue(ev, i, 0)[0] == want)
                event_item(b, PQgetvalue(ev, i, 1), PQgetvalue(ev, i, 2), PQgetvalue(ev, i, 3), NULL);
        tb_buf_put(b, "</ul>\n");
    }
    page_end(p);
    PQclear(pr);
    PQclear(ev);
}

static void page_addperson(slot *s, req *r, page *p) {
    const char *vals[6];
    int lens[6] = {0}, fmts[6] = {0};
    PGresult *res;
    if (!*field(r, F_NAME) || !*field(r, F_EMAIL) || !*field(r, F_PASSWORD)) {
        message_page(p, OP_ADDPERSON, 400, "Register", "name, email and password are required");
        return;
    }
    vals[0] = field(r, F_EMAIL);
    vals[1] = field(r, F_PASSWORD);
    vals[2] = field(r, F_NAME);
    vals[3] = *field(r, F_CITY) ? field(r, F_CITY) : "unknown";
    vals[4] = r->field[F_IMAGE].len ? r->field[F_IMAGE].ptr : NULL; /* bytea, binary */
    lens[4] = (int)r->field[F_IMAGE].len;
    fmts[4] = 1;
    vals[5] = r->field[F_IMAGE].len ? (r->image_type[0] ? r->image_type : "application/octet-stream") : NULL;
    res = web_run(s, "add_person", 6, vals, lens, fmts);
    if (!res) {
        message_page(p, OP_ADDPERSON, 503, "Register", "the database did not answer");
        return;
    }
    page_begin(p, OP_ADDPERSON, 200, "Registered");
    tb_buf_put(&p->html, "<p>");
    avatar(&p->html, PQgetvalue(res, 0, 0));
    tb_buf_put(&p->html, " Welcome, <a href=\"/persons/");
    web_esc(&p->html, PQgetvalue(res, 0, 0));
    tb_buf_put(&p->html, "\">");
    web_esc(&p->html, vals[2]);
    tb_buf_putf(&p->html, "</a>. Your picture has %zu bytes.</p>\n", r->field[F_IMAGE].len);
    page_end(p);
    PQclear(res);
}

/* "YYYY-MM-DD" shape; PostgreSQL checks that the day exists. */
static int date_ok(const char *d) {
    static const char shape[] = "dddd-dd-dd";
    for (int i = 0; i < 10; i++)
        if (shape[i] == 'd' ? (d[i] < '0' || d[i] > '9') : d[i] != '-') return 0;
    return d[10] == '\0';
}

/* tags "a, b c" -> PostgreSQL array literal "{a,b,c}" of valid words (<= 16). */
static void tags_array(const char *in, tb_buf *out) {
    char *copy = xstrdup(in), *save = NULL;
    int n = 0;
    tb_buf_put(out, "{");
    for (char *t = strtok_r(copy, ", \t\r\n", &save); t && n < 16; t = strtok_r(NULL, ", \t\r\n", &save)) {
        for (char *q = t; *q; q++)
            if (*q >= 'A' && *q <= 'Z') *q = (char)(*q - 'A' + 'a');
        if (!tag_ok(t)) continue;
        tb_buf_put(out, n++ ? "," : "");
        tb_buf_put(out, t);
    }
    tb_buf_put(out, "}");
    free(copy);
}

static void page_addevent(tb_webapp *app, slot *s, struct MHD_Connection *c, req *r, page *p) {
    const char *sid = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "tbsid");
    const char *vals[7];
    char person[24];
    tb_buf tags = {.max = 4096}; /* from the tags field, at most 1 KiB */
    redisReply *rep;
    PGresult *res;
    size_t n = sid ? strlen(sid) : 0;
    int valid = n == 32;
    for (size_t i = 0; valid && i < n; i++)
        valid = (sid[i] >= '0' && sid[i] <= '9') || (sid[i] >= 'a' && sid[i] <= 'f');
    if (!valid) {
        message_page(p, OP_ADDEVENT, 401, "Add event", "log in first");
        return;
    }
    rep = redisCommand(s->rd, "GET %s%s", app->k_sess, sid);
    if (!rep) {
        message_page(p, OP_ADDEVENT, 503, "Add event", "the session store did not answer");
        return;
    }
    if (rep->type != REDIS_REPLY_STRING || rep->len >= sizeof person) {
        freeReplyObject(rep);
        message_page(p, OP_ADDEVENT, 401, "Add event", "the session expired: log in again");
        return;
    }
    memcpy(person, rep->str, rep->len);
    person[rep->len] = '\0';
    freeReplyObject(rep);
    if (!*field(r, F_TITLE) || !date_ok(field(r, F_DATE))) {
        message_page(p, OP_ADDEVENT, 400, "Add event", "title and date (YYYY-MM-DD) are required");
        return;
    }
    tags_array(field(r, F_TAGS), &tags);
    vals[0] = field(r, F_TITLE);
    vals[1] = field(r, F_DESCRIPTION);
    vals[2] = field(r, F_DATE);
    vals[3] = field(r, F_ADDRESS);
    vals[4] = *field(r, F_CITY) ? field(r, F_CITY) : "Online";
    vals[5] = person;
    vals[6] = tb_buf_str(&tags);
    res = PQexecPrepared(s->pg, "add_event", 7, vals, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        /* Class 22: data exception (a date such as 2026-02-31). */
        if (state && strncmp(state, "22", 2) == 0)
            message_page(p, OP_ADDEVENT, 400, "Add event", "invalid date");
        else {
            char err[TB_ERR_LEN];
            web_set_pq_err(err, "add_event", s->pg);
            tb_log(TB_LOG_WARN, "webapp: %s", err);
            message_page(p, OP_ADDEVENT, 503, "Add event", "the database did not answer");
        }
        PQclear(res);
        tb_buf_free(&tags);
        return;
    }
    /* Committed: drop the cached home page (see the top of this file). */
    redisAppendCommand(s->rd, "INCR %s", app->k_gen);
    redisAppendCommand(s->rd, "DEL %s", app->k_home);
    for (int i = 0; i < 2; i++) {
        void *x = NULL;
        if (redisGetReply(s->rd, &x) != REDIS_OK) break;
        freeReplyObject(x);
    }
    page_begin(p, OP_ADDEVENT, 200, "Event added");
    tb_buf_put(&p->html, "<p><a href=\"/events/");
    web_esc(&p->html, PQgetvalue(res, 0, 0));
    tb_buf_put(&p->html, "\">");
    web_esc(&p->html, vals[0]);
    tb_buf_put(&p->html, "</a> on ");
    web_esc(&p->html, vals[2]);
    tb_buf_put(&p->html, "</p>\n");
    page_end(p);
    PQclear(res);
    tb_buf_free(&tags);
}

void web_render(tb_webapp *app, slot *s, struct MHD_Connection *c, req *r, page *p) {
    switch (r->route) {
    case R_HOME: page_home(app, s, p); break;
    case R_LOGIN: page_login(app, s, r, p); break;
    case R_TAGS: page_tags(s, c, p); break;
    case R_EVENT: page_event(s, r->id, p); break;
    case R_PERSON: page_person(s, r->id, p); break;
    case R_ADDPERSON: page_addperson(s, r, p); break;
    default: page_addevent(app, s, c, r, p); break;
    }
}
