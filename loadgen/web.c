/*
 * web.c: the web workload (Olio-like, Apache Olio UIDriver with Faban as
 * the harness) against the reference web application (docs/webapp.md), one
 * HTTP/1.1 keep-alive connection with a cookie jar per user
 * (loadgen/http_client.h).
 *
 * Ops: HomePage, Login, TagSearch, EventDetail, PersonDetail, AddPerson,
 * AddEvent. The next op follows a Markov matrix from the tile file
 * (`next.<Op> = To=PCT ...`, each row summing to 100); a user's first op is
 * drawn from the matrix's stationary distribution, which is also the mix
 * target for Faban's mix deviation rule. `min_cycle.<Op>` is the least gap
 * before that op (the driver's min_cycle_us hook; Olio: AddPerson 2 s,
 * AddEvent 3 s).
 *
 * One op is the page plus each distinct same-origin asset it references
 * (<link rel="stylesheet" href>, <script src>, <img src>), fetched one after
 * the other on the user's connection, as a browser with an empty cache
 * would; the driver times it from the op's intended start to the last byte
 * of the last asset. The page must carry <meta name="tb-page" content="OP">
 * (else TB_OP_ERR_CONTENT); a status >= 400 of the page or an asset is
 * TB_OP_ERR_SERVER. Every HTTP request that got a complete response is also
 * recorded as op "Request" (not in the mix, not in the metric), so its count
 * can be compared with the app's /stats counter; the op's first request is
 * timed (corrected) from the op's intended start, a later one from the
 * previous response, and (uncorrected) each from its own send.
 *
 * Targets: EventDetail and PersonDetail follow a link of the previous page
 * (Olio picks from the list it was shown), or a random id when that page had
 * none; TagSearch uses a random word of the app's tag list; Login draws
 * person k of `persons` (user<k>/password<k>); AddEvent logs in first when
 * the user has no session; AddPerson posts multipart/form-data with an
 * image part of image_size bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loadgen/http_client.h"
#include "loadgen/markov.h"
#include "loadgen/workload.h"
#include "tiles/dataset.h"

enum {
    OP_HOME = 0,
    OP_LOGIN,
    OP_TAGSEARCH,
    OP_EVENTDETAIL,
    OP_PERSONDETAIL,
    OP_ADDPERSON,
    OP_ADDEVENT,
    OP_REQUEST, /* every HTTP request: a sub-op, not in the mix or the metric */
    N_OPS
};
/* Stable names, from the tile model's catalog (tiles/kinds.h), in OP_ order: the tile
 * file, QoS rules and reports use them. */
_Static_assert(N_OPS == TB_KIND_WEB_N_OPS, "the web ops must be the catalog's");
static const char *const *const op_names = tb_kind_web_ops;
#define N_MIX          OP_REQUEST

#define WEB_MAX_BODY   (4u * 1024u * 1024u) /* page bytes kept for the marker and asset scan */
#define WEB_MAX_ASSETS 64
#define WEB_MAX_LINKS  32
#define WEB_PATH_LEN   192

typedef struct web_cfg {
    tb_markov mix;
    uint64_t min_cycle_us[N_MIX];
    uint64_t persons; /* registered persons per tile (Olio: 100 x users) */
    size_t image_size;
    char *image;
    tb_sut_endpoints ep; /* a deep copy: the base URL of each tile */
} web_cfg;

enum { STEP_NONE = 0, STEP_LOGIN, STEP_PAGE, STEP_ASSET };

typedef struct web_user {
    const web_cfg *cfg;
    tb_user_ctx *u;
    tb_http_target t;
    char prefix[WEB_PATH_LEN]; /* the base URL's path, without a trailing '/' */
    int have_target;
    tb_http_conn *conn;
    int cur;               /* Markov state: the last op, -1 before the first */
    int op;                /* op in flight */
    int step;              /* STEP_* of the request in flight */
    uint64_t req_due_us;   /* the request in flight was due: the op's intended start, or the previous response */
    uint64_t req_start_us; /* ... and was sent */
    uint64_t backoff_us;
    unsigned seq;
    char *assets; /* WEB_MAX_ASSETS x WEB_PATH_LEN paths of the page in flight */
    int n_assets, next_asset;
    /* links of the last page, for the next op's target */
    uint32_t events[WEB_MAX_LINKS], persons[WEB_MAX_LINKS];
    int n_events, n_persons;
    char *post; /* request body being sent (AddPerson, AddEvent, Login) */
} web_user;

/* ---- configuration ------------------------------------------------------- */

static const char *const known_keys[] = {"persons",
                                         "image_size",
                                         "next.HomePage",
                                         "next.Login",
                                         "next.TagSearch",
                                         "next.EventDetail",
                                         "next.PersonDetail",
                                         "next.AddPerson",
                                         "next.AddEvent",
                                         "min_cycle.HomePage",
                                         "min_cycle.Login",
                                         "min_cycle.TagSearch",
                                         "min_cycle.EventDetail",
                                         "min_cycle.PersonDetail",
                                         "min_cycle.AddPerson",
                                         "min_cycle.AddEvent",
                                         NULL};

static void web_cfg_free(void *cfg) {
    web_cfg *c = cfg;
    if (!c) return;
    free(c->image);
    tb_endpoints_free(&c->ep);
    free(c);
}

static int web_configure(const tb_workload_def *w, const tb_sut_endpoints *ep, void **out, char *err) {
    web_cfg *c;
    uint64_t isz;
    if (tb_wl_check_keys(w, known_keys, err) != 0) return -1;
    if (!tb_ep_has(ep->web_url) && ep->n_web_tile == 0) {
        tb_seterr(err, "workload %s: the SUT has no web endpoint ([sut] web = http://HOST:PORT or web.tileN)", w->name);
        return -1;
    }
    c = xcalloc(1, sizeof *c);
    tb_endpoints_copy(&c->ep, ep);
    if (tb_markov_parse(w, "next.", op_names, N_MIX, &c->mix, err) != 0) goto fail;
    for (int i = 0; i < N_MIX; i++) {
        char key[48];
        snprintf(key, sizeof key, "min_cycle.%s", op_names[i]);
        if (tb_wl_param_duration(w, key, 0, &c->min_cycle_us[i], err) != 0) goto fail;
    }
    /* Olio: registered users = 100 x concurrent users (sut/web_load.h sizes the data alike) */
    if (tb_wl_param_u64(w, "persons", (uint64_t)w->users * TB_WEB_PERSONS_PER_USER, &c->persons, err) != 0 ||
        tb_wl_param_u64(w, "image_size", 32768, &isz, err) != 0)
        goto fail;
    if (c->persons < 1 || c->persons > 100000000) {
        tb_seterr(err, "%s:%d: [workload.%s] persons: must be 1..100000000", w->file, w->line, w->name);
        goto fail;
    }
    if (isz < 1 || isz > 256 * 1024) {
        tb_seterr(err, "%s:%d: [workload.%s] image_size: must be 1..262144 bytes (the app takes at most 512 KiB)",
                  w->file, w->line, w->name);
        goto fail;
    }
    c->image_size = (size_t)isz;
    c->image = xmalloc(c->image_size);
    {
        /* image-like bytes: a PNG signature, then noise (incompressible, as an image);
           never mistaken for the multipart boundary, which holds '-' runs and letters only */
        static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        uint64_t x = 0x7765626931ull;
        for (size_t i = 0; i < c->image_size; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            c->image[i] = i < sizeof sig && i < c->image_size ? (char)sig[i] : (char)(x >> 24);
        }
    }
    *out = c;
    return 0;
fail:
    web_cfg_free(c);
    return -1;
}

/* ---- users ---------------------------------------------------------------- */

static void *web_user_new(const void *cfg, tb_user_ctx *u) {
    web_user *s = xcalloc(1, sizeof *s);
    const char *url;
    char path[WEB_PATH_LEN], err[TB_ERR_LEN];
    s->cfg = cfg;
    s->u = u;
    s->cur = -1;
    url = tb_sut_web_url(&s->cfg->ep, tb_user_tile(u));
    if (url && tb_http_url_parse(url, &s->t, path, sizeof path, err) == 0) {
        size_t n = strlen(path);
        while (n && path[n - 1] == '/')
            path[--n] = '\0';
        snprintf(s->prefix, sizeof s->prefix, "%s", path);
        s->have_target = 1;
        s->conn = tb_http_conn_new(tb_user_base(u), &s->t, WEB_MAX_BODY);
    } else {
        tb_log(TB_LOG_WARN, "web: tile %d: %s", tb_user_tile(u), url ? err : "no web URL in [sut]");
    }
    s->assets = xmalloc((size_t)WEB_MAX_ASSETS * WEB_PATH_LEN);
    return s;
}

static int web_next_op(void *st) {
    web_user *s = st;
    double x = tb_user_rand01(s->u) * 100.0, acc = 0;
    const double *row = s->cur < 0 ? s->cfg->mix.target_pct : s->cfg->mix.next[s->cur];
    int last = 0;
    for (int k = 0; k < N_MIX; k++) {
        if (row[k] <= 0) continue;
        acc += row[k];
        last = k;
        if (x < acc) return s->cur = k;
    }
    return s->cur = last; /* rounding at the top of the row */
}

/* ---- page scanning --------------------------------------------------------- */

/* The value of attribute name (lower case) inside tag text t[0..n), e.g.
 * href="x": 1 and *v,*vl set, else 0. Quoted with " or ', or bare. */
static int attr(const char *t, size_t n, const char *name, const char **v, size_t *vl) {
    size_t nl = strlen(name);
    for (size_t i = 1; i + nl < n; i++) {
        const char *q;
        if (strncasecmp(t + i, name, nl) != 0 || (t[i - 1] != ' ' && t[i - 1] != '\t' && t[i - 1] != '\n')) continue;
        q = t + i + nl;
        while (q < t + n && *q == ' ')
            q++;
        if (q >= t + n || *q != '=') continue;
        q++;
        while (q < t + n && *q == ' ')
            q++;
        if (q < t + n && (*q == '"' || *q == '\'')) {
            const char *e = memchr(q + 1, *q, (size_t)(t + n - q - 1));
            if (!e) return 0;
            *v = q + 1;
            *vl = (size_t)(e - q - 1);
        } else {
            const char *e = q;
            while (e < t + n && *e != ' ' && *e != '>')
                e++;
            *v = q;
            *vl = (size_t)(e - q);
        }
        return 1;
    }
    return 0;
}

/* Same-origin path of a reference v[0..vl) into out: "/x" as is, an
 * absolute URL of our origin stripped to its path, a relative one joined to
 * the base path. 0 when it is another origin, a fragment or not a URL. */
static int same_origin(const web_user *s, const char *v, size_t vl, char *out, size_t cap) {
    size_t ol = strlen(s->t.origin);
    if (vl == 0 || vl >= cap - strlen(s->prefix) - 2 || v[0] == '#') return 0;
    if (vl >= 2 && v[0] == '/' && v[1] == '/') return 0; /* scheme-relative: another origin */
    if (v[0] == '/') {
        snprintf(out, cap, "%.*s", (int)vl, v);
        return 1;
    }
    if (memchr(v, ':', vl)) { /* absolute: ours only */
        const char *host = s->t.origin + 7;
        size_t hl = strlen(s->t.host);
        if (vl > ol && strncasecmp(v, s->t.origin, ol) == 0 && v[ol] == '/') {
            snprintf(out, cap, "%.*s", (int)(vl - ol), v + ol);
            return 1;
        }
        (void)host;
        if (vl > 7 + hl && strncasecmp(v, "http://", 7) == 0 && strncasecmp(v + 7, s->t.host, hl) == 0 &&
            v[7 + hl] == '/') {
            snprintf(out, cap, "%.*s", (int)(vl - 7 - hl), v + 7 + hl);
            return 1;
        }
        return 0;
    }
    /* the length check above keeps it in cap; a joined path that still would not fit is not followed */
    int n = snprintf(out, cap, "%s/%.*s", s->prefix, (int)vl, v);
    return n >= 0 && (size_t)n < cap;
}

static void add_asset(web_user *s, const char *v, size_t vl) {
    char path[WEB_PATH_LEN];
    if (!same_origin(s, v, vl, path, sizeof path)) return;
    for (int i = 0; i < s->n_assets; i++)
        if (strcmp(s->assets + (size_t)i * WEB_PATH_LEN, path) == 0) return; /* fetched once per page view */
    if (s->n_assets == WEB_MAX_ASSETS) return;
    memcpy(s->assets + (size_t)s->n_assets++ * WEB_PATH_LEN, path, WEB_PATH_LEN);
}

/* Remembers a link to /events/N or /persons/N for the next op's target. */
static void add_link(web_user *s, const char *v, size_t vl) {
    char path[WEB_PATH_LEN], *end;
    unsigned long id;
    size_t pl = strlen(s->prefix);
    const char *p;
    if (!same_origin(s, v, vl, path, sizeof path) || strncmp(path, s->prefix, pl) != 0) return;
    p = path + pl;
    if (strncmp(p, "/events/", 8) == 0) {
        id = strtoul(p + 8, &end, 10);
        if (*end == '\0' && id > 0 && id <= UINT32_MAX && s->n_events < WEB_MAX_LINKS)
            s->events[s->n_events++] = (uint32_t)id;
    } else if (strncmp(p, "/persons/", 9) == 0) {
        id = strtoul(p + 9, &end, 10);
        if (*end == '\0' && id > 0 && id <= UINT32_MAX && s->n_persons < WEB_MAX_LINKS)
            s->persons[s->n_persons++] = (uint32_t)id;
    }
}

/* Scans a page for its assets (into s->assets) and links (s->events, s->persons). */
static void scan_page(web_user *s, const char *b, size_t n) {
    const char *p = b, *end = b + n;
    s->n_assets = s->next_asset = 0;
    s->n_events = s->n_persons = 0;
    while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        const char *gt = memchr(p, '>', (size_t)(end - p)), *v;
        size_t tl, vl;
        if (!gt) break;
        tl = (size_t)(gt - p);
        if (tl > 5 && strncasecmp(p, "<link", 5) == 0 && (p[5] == ' ' || p[5] == '\n')) {
            if (attr(p, tl, "rel", &v, &vl) && vl == 10 && strncasecmp(v, "stylesheet", 10) == 0 &&
                attr(p, tl, "href", &v, &vl))
                add_asset(s, v, vl);
        } else if (tl > 7 && strncasecmp(p, "<script", 7) == 0 && (p[7] == ' ' || p[7] == '\n')) {
            if (attr(p, tl, "src", &v, &vl)) add_asset(s, v, vl);
        } else if (tl > 4 && strncasecmp(p, "<img", 4) == 0 && (p[4] == ' ' || p[4] == '\n')) {
            if (attr(p, tl, "src", &v, &vl)) add_asset(s, v, vl);
        } else if (tl > 2 && (p[1] == 'a' || p[1] == 'A') && (p[2] == ' ' || p[2] == '\n')) {
            if (attr(p, tl, "href", &v, &vl)) add_link(s, v, vl);
        }
        p = gt + 1;
    }
}

/* ---- requests -------------------------------------------------------------- */

static void on_response(void *arg, tb_http_result r, const tb_http_parser *resp, const char *why);

/* Sends method path with an optional body of content type ctype. */
static void send_req(web_user *s, const char *method, const char *path, const char *ctype, const char *body,
                     size_t body_len) {
    char head[1024];
    int n;
    if (ctype)
        n = snprintf(head, sizeof head,
                     "%s %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tilebench-web\r\nAccept: */*\r\n"
                     "Content-Type: %s\r\nContent-Length: %zu\r\n",
                     method, s->prefix, path, s->t.host, ctype, body_len);
    else
        n = snprintf(head, sizeof head, "%s %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tilebench-web\r\nAccept: */*\r\n",
                     method, s->prefix, path, s->t.host);
    s->req_start_us = tb_now_us();
    if (n < 0 || (size_t)n >= sizeof head ||
        tb_http_conn_send(s->conn, head, (size_t)n, body, body_len, on_response, s) != 0) {
        s->step = STEP_NONE;
        tb_user_op_done_soon(s->u, TB_OP_ERR_IO);
    }
}

/* Asset paths are already prefixed (same_origin joins relative ones). */
static void send_asset(web_user *s) {
    char head[512];
    const char *path = s->assets + (size_t)s->next_asset++ * WEB_PATH_LEN;
    int n = snprintf(head, sizeof head, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tilebench-web\r\nAccept: */*\r\n",
                     path, s->t.host);
    s->step = STEP_ASSET;
    s->req_start_us = tb_now_us();
    if (n < 0 || (size_t)n >= sizeof head ||
        tb_http_conn_send(s->conn, head, (size_t)n, NULL, 0, on_response, s) != 0) {
        s->step = STEP_NONE;
        tb_user_op_done_soon(s->u, TB_OP_ERR_IO);
    }
}

static void send_login(web_user *s, int step) {
    uint64_t k = 1 + tb_user_rand(s->u) % s->cfg->persons;
    char body[128];
    int n = snprintf(body, sizeof body, "user=user%llu&password=password%llu", (unsigned long long)k,
                     (unsigned long long)k);
    s->step = step;
    send_req(s, "POST", "/login", "application/x-www-form-urlencoded", body, (size_t)n);
}

/* A date 1..365 days after 2026-01-01, as YYYY-MM-DD (days per month of a common year). */
static void draw_date(web_user *s, char *out, size_t cap) {
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int d = tb_user_rand_range(s->u, 0, 364), m = 0;
    while (d >= mdays[m])
        d -= mdays[m++];
    snprintf(out, cap, "2027-%02d-%02d", m + 1, d + 1);
}

static void send_page(web_user *s) {
    char path[WEB_PATH_LEN];
    s->step = STEP_PAGE;
    switch (s->op) {
    case OP_HOME: send_req(s, "GET", "/", NULL, NULL, 0); return;
    case OP_LOGIN: send_login(s, STEP_PAGE); return;
    case OP_TAGSEARCH:
        snprintf(path, sizeof path, "/tags?tag=%s", tb_web_tag(tb_user_rand_range(s->u, 0, TB_WEB_TAGS - 1)));
        send_req(s, "GET", path, NULL, NULL, 0);
        return;
    case OP_EVENTDETAIL: {
        uint64_t id = s->n_events ? s->events[tb_user_rand_range(s->u, 0, s->n_events - 1)]
                                  : 1 + tb_user_rand(s->u) % (s->cfg->persons * TB_WEB_EVENTS_PER_PERSON);
        snprintf(path, sizeof path, "/events/%llu", (unsigned long long)id);
        send_req(s, "GET", path, NULL, NULL, 0);
        return;
    }
    case OP_PERSONDETAIL: {
        uint64_t id = s->n_persons ? s->persons[tb_user_rand_range(s->u, 0, s->n_persons - 1)]
                                   : 1 + tb_user_rand(s->u) % s->cfg->persons;
        snprintf(path, sizeof path, "/persons/%llu", (unsigned long long)id);
        send_req(s, "GET", path, NULL, NULL, 0);
        return;
    }
    case OP_ADDPERSON: {
        const web_cfg *c = s->cfg;
        char bnd[64], ctype[96], head[1024], tail[96];
        unsigned long long r = (unsigned long long)tb_user_rand(s->u);
        unsigned seq = ++s->seq;
        int hn, tn;
        snprintf(bnd, sizeof bnd, "----tilebench%016llx", r);
        snprintf(ctype, sizeof ctype, "multipart/form-data; boundary=%s", bnd);
        hn = snprintf(head, sizeof head,
                      "--%s\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nNew Person %u\r\n"
                      "--%s\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nt%d-u%d-%u-%016llx@example.com\r\n"
                      "--%s\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nsecret%u\r\n"
                      "--%s\r\nContent-Disposition: form-data; name=\"image\"; filename=\"me.png\"\r\n"
                      "Content-Type: image/png\r\n\r\n",
                      bnd, seq, bnd, tb_user_tile(s->u), tb_user_index(s->u), seq, r, bnd, seq, bnd);
        tn = snprintf(tail, sizeof tail, "\r\n--%s--\r\n", bnd);
        free(s->post);
        s->post = xmalloc((size_t)hn + c->image_size + (size_t)tn);
        memcpy(s->post, head, (size_t)hn);
        memcpy(s->post + hn, c->image, c->image_size);
        memcpy(s->post + (size_t)hn + c->image_size, tail, (size_t)tn);
        send_req(s, "POST", "/persons", ctype, s->post, (size_t)hn + c->image_size + (size_t)tn);
        return;
    }
    case OP_ADDEVENT: {
        char date[32], body[512]; /* date: "2027-" and two %02d of an int, 11 bytes each at most */
        int n;
        draw_date(s, date, sizeof date);
        n = snprintf(body, sizeof body,
                     "title=Event+%u+of+user+%d&description=A+tilebench+event+with+a+short+description.&date=%s"
                     "&tags=%s+%s",
                     ++s->seq, tb_user_index(s->u), date, tb_web_tag(tb_user_rand_range(s->u, 0, TB_WEB_TAGS - 1)),
                     tb_web_tag(tb_user_rand_range(s->u, 0, TB_WEB_TAGS - 1)));
        send_req(s, "POST", "/events", "application/x-www-form-urlencoded", body, (size_t)n);
        return;
    }
    default: tb_user_op_done_soon(s->u, TB_OP_ERR_IO);
    }
}

static void end_op(web_user *s, tb_op_status st) {
    s->step = STEP_NONE;
    tb_user_op_done(s->u, st);
}

static void on_response(void *arg, tb_http_result r, const tb_http_parser *resp, const char *why) {
    web_user *s = arg;
    uint64_t now = tb_now_us();
    char marker[80];
    if (r != TB_HTTP_OK) {
        tb_op_status st = r == TB_HTTP_ECONNECT ? TB_OP_ERR_CONNECT
                          : r == TB_HTTP_EPROTO ? TB_OP_ERR_CONTENT
                                                : TB_OP_ERR_IO;
        tb_log(TB_LOG_DEBUG, "web: %s: %s", op_names[s->op], why);
        tb_user_record_step(s->u, OP_REQUEST, s->req_due_us, s->req_start_us, now, st);
        if (r == TB_HTTP_ECONNECT) {
            /* back off before reconnecting: 100 ms doubling to 5 s (tilebench choice, as kv) */
            s->backoff_us = s->backoff_us ? (s->backoff_us * 2 > 5000000 ? 5000000 : s->backoff_us * 2) : 100000;
            tb_user_delay_next(s->u, s->backoff_us);
        }
        end_op(s, st);
        return;
    }
    s->backoff_us = 0;
    /* a complete response: the server served this request, whatever its status */
    tb_user_record_step(s->u, OP_REQUEST, s->req_due_us, s->req_start_us, now, TB_OP_OK);
    s->req_due_us = now;
    if (resp->status >= 400) {
        if (resp->status == 401 || resp->status == 403) tb_http_conn_clear_cookies(s->conn); /* log in again */
        end_op(s, TB_OP_ERR_SERVER);
        return;
    }
    switch (s->step) {
    case STEP_LOGIN: /* AddEvent's login first: now the event itself */ send_page(s); return;
    case STEP_PAGE:
        snprintf(marker, sizeof marker, "<meta name=\"tb-page\" content=\"%s\">", op_names[s->op]);
        if (!resp->body || !strstr(resp->body, marker)) {
            end_op(s, TB_OP_ERR_CONTENT);
            return;
        }
        scan_page(s, resp->body, resp->body_len);
        break;
    default: break;
    }
    if (s->next_asset < s->n_assets)
        send_asset(s);
    else
        end_op(s, TB_OP_OK);
}

static void web_op_start(void *st, int op) {
    web_user *s = st;
    s->op = op;
    s->req_due_us = tb_user_intended_us(s->u);
    if (!s->have_target) {
        tb_user_op_done_soon(s->u, TB_OP_ERR_CONNECT);
        return;
    }
    if (op == OP_ADDEVENT && !tb_http_conn_has_cookie(s->conn, "tbsid"))
        send_login(s, STEP_LOGIN);
    else
        send_page(s);
}

static void web_op_cancel(void *st) {
    web_user *s = st;
    if (s->conn) tb_http_conn_drop(s->conn);
    s->step = STEP_NONE;
}

static void web_user_free(void *st) {
    web_user *s = st;
    tb_http_conn_free(s->conn);
    free(s->assets);
    free(s->post);
    free(s);
}

/* SUT ready: each tile's app answers GET /healthz with 200 within 5 s (not
 * counted by the app's /stats, so request counts stay comparable). */
static int web_probe(const void *cfg, int tiles, char *err) {
    const web_cfg *c = cfg;
    for (int t = 1; t <= tiles; t++) {
        const char *url = tb_sut_web_url(&c->ep, t);
        tb_http_target tg;
        char path[WEB_PATH_LEN], e[TB_ERR_LEN];
        int status;
        if (!url) {
            tb_seterr(err, "web: tile %d has no web URL ([sut] web or web.tile%d)", t, t);
            return -1;
        }
        if (tb_http_url_parse(url, &tg, path, sizeof path, e) != 0) {
            tb_seterr(err, "web: tile %d: %s", t, e);
            return -1;
        }
        {
            size_t n = strlen(path);
            while (n && path[n - 1] == '/')
                path[--n] = '\0';
            strncat(path, "/healthz", sizeof path - strlen(path) - 1);
        }
        if (tb_http_probe(&tg, path, 5000, &status, e) != 0) {
            tb_seterr(err, "web: tile %d: %s", t, e);
            return -1;
        }
        if (status != 200) {
            tb_seterr(err, "web: tile %d: GET %s%s answered %d, not 200", t, tg.origin, path, status);
            return -1;
        }
    }
    return 0;
}

static double web_mix_target_pct(const void *cfg, int op) {
    const web_cfg *c = cfg;
    return op >= 0 && op < N_MIX ? c->mix.target_pct[op] : -1;
}

static uint64_t web_min_cycle_us(const void *cfg, int op) {
    const web_cfg *c = cfg;
    return op >= 0 && op < N_MIX ? c->min_cycle_us[op] : 0;
}

const tb_workload_vt tb_web_workload = {
    .kind = "web",
    .n_ops = N_OPS,
    .op_names = tb_kind_web_ops,
    .metric_mask = (1u << N_MIX) - 1,
    .sockets_per_user = 1,
    .configure = web_configure,
    .cfg_free = web_cfg_free,
    .user_new = web_user_new,
    .next_op = web_next_op,
    .op_start = web_op_start,
    .op_cancel = web_op_cancel,
    .user_free = web_user_free,
    .probe = web_probe,
    .mix_target_pct = web_mix_target_pct,
    .min_cycle_us = web_min_cycle_us,
};
