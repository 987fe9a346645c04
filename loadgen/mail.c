/*
 * mail.c: the mail workload (Exchange LoadGen / imaptest-like), against any
 * IMAP server plus an LMTP or SMTP endpoint, on libevent bufferevents.
 *
 * Each user is a mail client with two independent activities, as imaptest's
 * profile model has them:
 *  - IMAP: a session of session_length (imaptest: 3 min) on one connection,
 *    with one action every cycle_time (imaptest: every 2 s), driven by the
 *    generic user driver (intended-start timing, timeouts). A session is
 *    Login, Select, then actions drawn from `mix` (FetchHeaders, FetchBody,
 *    Store, Expunge, Append, Search), then Logout, then the next session.
 *  - Delivery: a message every send_interval (imaptest: 10 s) to a random
 *    user of the same tile, one LMTP (LHLO) or SMTP (EHLO) session per
 *    message, with PIPELINING when offered. It has its own timer, measured
 *    from each send's intended start like the driver's ops, and is recorded
 *    as op Send through tb_user_record_step.
 * Every op is one action; the metric is actions per minute (all ops).
 *
 * Send only: session_length = 0 means no IMAP at all. Each user then only
 * delivers, and Send is the driver's op like any other: the workload's
 * think_time or cycle_time paces it (think_time = 0 is a closed loop: the
 * next message as soon as the last one was accepted), the driver's timeout
 * applies, and latency counts from the intended start. send_interval, mix
 * and fetch_headers have no meaning then and are rejected; the [sut] needs
 * only an lmtp or smtp endpoint. bench/mail uses this to drive an MTA at
 * full speed.
 *
 * Messages carry a checksum header (mail_msg.h); FetchBody checks it and a
 * mismatch is TB_OP_ERR_CONTENT, as is any reply that is not IMAP/SMTP.
 * A NO/BAD/4xx/5xx is TB_OP_ERR_SERVER; a lost connection TB_OP_ERR_IO.
 *
 * The client tracks the UIDs of INBOX in sequence order (from SELECT's UID
 * SEARCH ALL, FETCH and EXPUNGE responses), so actions pick real messages.
 * Only this user's session touches its mailbox, so Expunge removes exactly
 * what the client counts; the integration test checks the maildirs against
 * Send + Append - Expunge.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "loadgen/imap_parse.h"
#include "common/buf.h"
#include "loadgen/mail_msg.h"
#include "loadgen/smtp_parse.h"
#include "loadgen/workload.h"

enum {
    OP_SEND = 0,
    OP_LOGIN,
    OP_SELECT,
    OP_FETCH_HEADERS,
    OP_FETCH_BODY,
    OP_STORE,
    OP_EXPUNGE,
    OP_APPEND,
    OP_SEARCH,
    OP_LOGOUT,
    N_OPS
};
/* Stable names, from the tile model's catalog (tiles/kinds.h), in OP_ order: the tile
 * file, QoS rules and reports use them. */
_Static_assert(N_OPS == TB_KIND_MAIL_N_OPS, "the mail ops must be the catalog's");
static const char *const *const op_names = tb_kind_mail_ops;

#define MAIL_MAX_UIDS     100000
#define MAIL_CORPUS_BYTES (512u * 1024u)

typedef struct mail_cfg {
    struct sockaddr_storage imap_sa, dlv_sa;
    socklen_t imap_sa_len, dlv_sa_len;
    char imap_ep[160], dlv_ep[160];         /* "host:port", for messages */
    int lmtp;                               /* 1: LHLO, 0: EHLO */
    int send;                               /* own send timer: send_interval > 0 with IMAP sessions */
    int send_only;                          /* session_length = 0: no IMAP; Send is the driver's op */
    char *user_pattern, *domain, *password; /* heap; "" when the SUT gives none */
    int users;                              /* users per tile: recipients are drawn among them */
    uint64_t send_interval_us, session_us, timeout_us;
    int mix[N_OPS], mix_total;
    double size_min, size_median, size_max, size_sigma; /* bytes; lognormal, clamped */
    int headers_n;                                      /* FetchHeaders: the last N messages plus new ones */
    tb_mail_corpus corpus;
} mail_cfg;

typedef struct mail_user mail_user;

/* One delivery in progress and the schedule of the next ones. */
typedef struct send_ctx {
    mail_user *mu;
    struct bufferevent *bev;
    struct event *timer, *timeout;
    uint64_t intended_us;
    uint64_t sent_us; /* the delivery in flight started (its uncorrected latency counts from here) */
    int started;      /* the schedule runs (from the user's first op) */
    int busy;         /* a delivery is in flight */
    int step;
    int pipelined; /* the server offered PIPELINING: envelope sent in one write */
    char rcpt[200];
    char *data; /* dot-stuffed message with its terminator */
    size_t data_len;
} send_ctx;

enum { IS_DOWN = 0, IS_GREETING, IS_READY };
enum {
    ST_NONE = 0,
    ST_LOGIN,
    ST_SELECT,
    ST_UIDS,
    ST_CMD,
    ST_STORE_DEL,
    ST_EXPUNGE,
    ST_APPEND_WAIT,
    ST_APPEND_DONE,
    ST_LOGOUT
};

struct mail_user {
    const mail_cfg *cfg;
    tb_user_ctx *u;
    char login[64], addr[200];
    /* IMAP */
    struct bufferevent *bev;
    int istate;
    int logged_in, selected;
    uint64_t session_end_us;
    int op;   /* op in flight, -1 none */
    int step; /* ST_* of the command in flight */
    unsigned tagn;
    char tag[16];
    tb_imap_scan scan;
    uint32_t *uids; /* INBOX UIDs in sequence order: uids[seq-1] */
    size_t n_uids, cap_uids;
    uint32_t exists;
    uint32_t target_uid;
    int fetched;     /* FETCH responses with the wanted data seen for this command */
    int bad_content; /* a fetched message failed its check */
    int search_sets_list;
    char *append_msg;
    size_t append_len;
    unsigned long seq; /* message counter for Message-IDs */
    struct event *defer_ev;
    tb_op_status defer_status;
    send_ctx snd;
};

/* ---- configuration ------------------------------------------------------ */

/* session_length = 0 (send only) makes send_interval, mix and fetch_headers
 * meaningless: see the file header. */
static const char *const known_keys[] = {"send_interval",  "session_length",  "mix",
                                         "msg_size_min",   "msg_size_median", "msg_size_max",
                                         "msg_size_sigma", "fetch_headers",   NULL};
static const char *const imap_only_keys[] = {"send_interval", "mix", "fetch_headers", NULL};

static int resolve(const char *host, int port, struct sockaddr_storage *sa, socklen_t *len, char *err) {
    struct addrinfo hints, *res = NULL;
    char ps[16];
    int rc;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof ps, "%d", port);
    rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0 || !res) {
        tb_seterr(err, "resolve %s:%d: %s", host, port, gai_strerror(rc));
        return -1;
    }
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *len = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* "FetchHeaders=30 FetchBody=30 ..." (spaces or commas between entries). */
static int parse_mix(const tb_workload_def *w, const char *s, int *mix, int *total, char *err) {
    const tb_param *p = tb_tiledef_param(w, "mix");
    char buf[256], *save = NULL, *tok;
    int line = p ? p->line : w->line;
    memset(mix, 0, sizeof(int) * N_OPS);
    *total = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (tok = strtok_r(buf, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
        char *eq = strchr(tok, '='), *end;
        long v;
        int k, found = -1;
        if (!eq) {
            tb_seterr(err, "%s:%d: [workload.%s] mix: '%s': expected Action=weight", w->file, line, w->name, tok);
            return -1;
        }
        *eq = '\0';
        for (k = OP_FETCH_HEADERS; k <= OP_SEARCH; k++)
            if (strcmp(op_names[k], tok) == 0) found = k;
        if (found < 0) {
            tb_seterr(err,
                      "%s:%d: [workload.%s] mix: '%s': unknown action (known: FetchHeaders, FetchBody, Store, "
                      "Expunge, Append, Search)",
                      w->file, line, w->name, tok);
            return -1;
        }
        v = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || *end || v < 0 || v > 1000000) {
            tb_seterr(err, "%s:%d: [workload.%s] mix: %s: weight '%s' must be 0..1000000", w->file, line, w->name, tok,
                      eq + 1);
            return -1;
        }
        mix[found] = (int)v;
        *total += (int)v;
    }
    if (*total <= 0) {
        tb_seterr(err, "%s:%d: [workload.%s] mix: no action has a weight above 0", w->file, line, w->name);
        return -1;
    }
    return 0;
}

static void free_strings(mail_cfg *c) {
    free(c->user_pattern);
    free(c->domain);
    free(c->password);
}

static int mail_configure(const tb_workload_def *w, const tb_sut_endpoints *ep, void **out, char *err) {
    mail_cfg *c;
    uint64_t hn;
    const tb_param *mix;
    const char *dhost;
    int dport;
    if (tb_wl_check_keys(w, known_keys, err) != 0) return -1;
    c = xcalloc(1, sizeof *c);
    c->users = w->users;
    c->timeout_us = w->timeout_us;
    c->user_pattern = xstrdup(tb_ep_str(ep->mail_user));
    c->domain = xstrdup(tb_ep_str(ep->mail_domain));
    c->password = xstrdup(tb_ep_str(ep->mail_password));
    if (tb_wl_param_duration(w, "send_interval", 10000000, &c->send_interval_us, err) ||
        tb_wl_param_duration(w, "session_length", 180000000, &c->session_us, err) ||
        tb_wl_param_double(w, "msg_size_min", 2048, &c->size_min, err) ||
        tb_wl_param_double(w, "msg_size_median", 8192, &c->size_median, err) ||
        tb_wl_param_double(w, "msg_size_max", 102400, &c->size_max, err) ||
        tb_wl_param_double(w, "msg_size_sigma", 1.0, &c->size_sigma, err) ||
        tb_wl_param_u64(w, "fetch_headers", 10, &hn, err))
        goto fail;
    if (!(c->size_min >= 64 && c->size_min <= c->size_median && c->size_median <= c->size_max &&
          c->size_max <= 16.0 * 1024 * 1024 && c->size_sigma >= 0 && c->size_sigma <= 5)) {
        tb_seterr(err,
                  "%s:%d: [workload.%s] msg_size_*: need 64 <= min <= median <= max <= 16 MiB (bytes) and "
                  "0 <= sigma <= 5",
                  w->file, w->line, w->name);
        goto fail;
    }
    if (hn < 1 || hn > 1000) {
        tb_seterr(err, "%s:%d: [workload.%s] fetch_headers: must be 1..1000", w->file, w->line, w->name);
        goto fail;
    }
    c->headers_n = (int)hn;
    c->send_only = c->session_us == 0;
    if (c->send_only) {
        for (int k = 0; imap_only_keys[k]; k++) {
            const tb_param *p = tb_tiledef_param(w, imap_only_keys[k]);
            if (!p) continue;
            tb_seterr(err,
                      "%s:%d: [workload.%s] %s: not used with session_length = 0 (send only: think_time or "
                      "cycle_time paces the sends)",
                      w->file, p->line, w->name, imap_only_keys[k]);
            goto fail;
        }
    } else {
        if (!tb_ep_has(ep->imap_host) || ep->imap_port <= 0) {
            tb_seterr(err, "workload %s: the SUT has no IMAP endpoint ([sut] imap = HOST:PORT)", w->name);
            goto fail;
        }
        if (!tb_ep_has(ep->mail_password)) {
            tb_seterr(err, "workload %s: the SUT has no mail password ([sut] mail_password_file = FILE)", w->name);
            goto fail;
        }
        mix = tb_tiledef_param(w, "mix");
        if (parse_mix(w, mix ? mix->value : "FetchHeaders=30 FetchBody=30 Store=15 Expunge=8 Append=7 Search=10",
                      c->mix, &c->mix_total, err) != 0)
            goto fail;
        if (resolve(ep->imap_host, ep->imap_port, &c->imap_sa, &c->imap_sa_len, err) != 0) goto fail;
        snprintf(c->imap_ep, sizeof c->imap_ep, "%s:%d", ep->imap_host, ep->imap_port);
    }
    c->lmtp = ep->lmtp_port > 0;
    dhost = c->lmtp ? ep->lmtp_host : ep->smtp_host;
    dport = c->lmtp ? ep->lmtp_port : ep->smtp_port;
    if (c->send_interval_us > 0 || c->send_only) {
        if (!tb_ep_has(dhost) || dport <= 0) {
            tb_seterr(err, "workload %s: %s but the SUT has no delivery endpoint ([sut] lmtp or smtp = HOST:PORT)",
                      w->name, c->send_only ? "session_length = 0 (send only)" : "send_interval > 0");
            goto fail;
        }
        if (resolve(dhost, dport, &c->dlv_sa, &c->dlv_sa_len, err) != 0) goto fail;
        snprintf(c->dlv_ep, sizeof c->dlv_ep, "%s:%d", dhost, dport);
        c->send = !c->send_only;
    }
    tb_mail_corpus_init(&c->corpus, MAIL_CORPUS_BYTES + (size_t)c->size_max, 0x7469);
    *out = c;
    return 0;
fail:
    free_strings(c);
    free(c);
    return -1;
}

static void mail_cfg_free(void *cfg) {
    mail_cfg *c = cfg;
    tb_mail_corpus_free(&c->corpus);
    free_strings(c);
    free(c);
}

/* ---- helpers ------------------------------------------------------------ */

/* Body size draw: lognormal around the median, clamped to [min, max]. */
static size_t draw_size(mail_user *mu) {
    const mail_cfg *c = mu->cfg;
    double u1 = tb_user_rand01(mu->u), u2 = tb_user_rand01(mu->u);
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2); /* Box-Muller */
    double v = c->size_median * exp(c->size_sigma * z);
    if (v < c->size_min) v = c->size_min;
    if (v > c->size_max) v = c->size_max;
    return (size_t)v;
}

static char *new_message(mail_user *mu, const char *to, size_t *len) {
    char msgid[128];
    snprintf(msgid, sizeof msgid, "%s.%lu.%016llx@tilebench", mu->login, ++mu->seq,
             (unsigned long long)tb_user_rand(mu->u));
    return tb_mail_msg_build(&mu->cfg->corpus, mu->addr, to, msgid, draw_size(mu), tb_user_rand(mu->u), len);
}

static void make_addr(const mail_cfg *c, const char *login, char *out, size_t len) {
    if (c->domain[0])
        snprintf(out, len, "%s@%s", login, c->domain);
    else
        snprintf(out, len, "%s", login);
}

static struct bufferevent *connect_to(mail_user *mu, const struct sockaddr_storage *sa, socklen_t len,
                                      bufferevent_data_cb rd, bufferevent_event_cb ev, void *arg) {
    struct bufferevent *b = bufferevent_socket_new(tb_user_base(mu->u), -1, BEV_OPT_CLOSE_ON_FREE);
    if (!b) return NULL;
    bufferevent_setcb(b, rd, NULL, ev, arg);
    bufferevent_enable(b, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(b, (const struct sockaddr *)sa, (int)len) != 0) {
        bufferevent_free(b);
        return NULL;
    }
    return b;
}

/* ---- IMAP session ------------------------------------------------------- */

static void imap_drop(mail_user *mu) {
    if (mu->bev) bufferevent_free(mu->bev);
    mu->bev = NULL;
    mu->istate = IS_DOWN;
    mu->logged_in = mu->selected = 0;
    mu->n_uids = 0;
    mu->exists = 0;
    mu->step = ST_NONE;
    mu->search_sets_list = 0;
    free(mu->append_msg);
    mu->append_msg = NULL;
    tb_imap_scan_reset(&mu->scan);
}

static void op_finish(mail_user *mu, tb_op_status st) {
    mu->op = -1;
    mu->step = ST_NONE;
    if (st == TB_OP_ERR_IO || st == TB_OP_ERR_CONTENT || st == TB_OP_ERR_CONNECT) imap_drop(mu);
    tb_user_op_done(mu->u, st);
}

static void on_defer(evutil_socket_t fd, short what, void *arg) {
    mail_user *mu = arg;
    (void)fd;
    (void)what;
    op_finish(mu, mu->defer_status);
}

/* Ends the op on the next loop turn (never inside op_start). */
static void finish_later(mail_user *mu, tb_op_status st) {
    struct timeval zero = {0, 0};
    mu->defer_status = st;
    if (!mu->defer_ev) mu->defer_ev = evtimer_new(tb_user_base(mu->u), on_defer, mu);
    evtimer_add(mu->defer_ev, &zero);
}

/* Sends "TAG fmt\r\n"; the tag is remembered for the tagged reply. */
static void imap_cmd(mail_user *mu, int step, const char *fmt, ...) TB_PRINTF(3, 4);
static void imap_cmd(mail_user *mu, int step, const char *fmt, ...) {
    struct evbuffer *out = bufferevent_get_output(mu->bev);
    va_list ap;
    snprintf(mu->tag, sizeof mu->tag, "t%u", ++mu->tagn);
    mu->step = step;
    mu->fetched = 0;
    evbuffer_add_printf(out, "%s ", mu->tag);
    va_start(ap, fmt);
    evbuffer_add_vprintf(out, fmt, ap);
    va_end(ap);
    evbuffer_add(out, "\r\n", 2);
}

static uint32_t pick_uid(mail_user *mu) { return mu->uids[tb_user_rand(mu->u) % mu->n_uids]; }

static void uids_set(mail_user *mu, size_t idx, uint32_t uid) {
    if (idx > mu->n_uids || idx >= MAIL_MAX_UIDS) return;
    if (idx < mu->n_uids) {
        if (mu->uids[idx] != uid) {
            mu->uids[idx] = uid; /* out of step: keep what the server says, drop what follows */
            mu->n_uids = idx + 1;
        }
        return;
    }
    mu->uids = tb_grow(mu->uids, mu->n_uids, &mu->cap_uids, sizeof *mu->uids);
    mu->uids[mu->n_uids++] = uid;
}

/* Untagged data, whatever command is in flight. */
static void imap_untagged(mail_user *mu, const tb_imap_resp *r) {
    char err[TB_ERR_LEN];
    if (r->has_num && strcmp(r->word, "EXISTS") == 0) {
        mu->exists = r->num;
        if (mu->n_uids > r->num) mu->n_uids = r->num;
    } else if (r->has_num && strcmp(r->word, "EXPUNGE") == 0) {
        if (r->num >= 1 && r->num <= mu->n_uids) {
            memmove(mu->uids + r->num - 1, mu->uids + r->num, (mu->n_uids - r->num) * sizeof *mu->uids);
            mu->n_uids--;
        }
        if (mu->exists > 0) mu->exists--;
    } else if (r->has_num && strcmp(r->word, "FETCH") == 0) {
        tb_imap_fetch f;
        if (tb_imap_fetch_parse(r, &f, err) != 0) {
            tb_log(TB_LOG_DEBUG, "mail %s: %s", mu->login, err);
            mu->bad_content = 1;
            return;
        }
        if (f.has_uid && f.seq >= 1) uids_set(mu, f.seq - 1, f.uid);
        if (mu->op == OP_FETCH_BODY && f.body && f.has_uid && f.uid == mu->target_uid) {
            mu->fetched++;
            if (tb_mail_msg_verify(f.body, f.body_len, err) != 0) {
                tb_log(TB_LOG_DEBUG, "mail %s uid %u: %s", mu->login, f.uid, err);
                mu->bad_content = 1;
            }
        } else if (mu->op == OP_FETCH_HEADERS && f.body) {
            uint64_t sum;
            mu->fetched++;
            if (tb_mail_header_checksum(f.body, f.body_len, &sum) != 0) {
                tb_log(TB_LOG_DEBUG, "mail %s uid %u: header without " TB_MAIL_CHECKSUM_HEADER, mu->login, f.uid);
                mu->bad_content = 1;
            }
        }
    } else if (strcmp(r->word, "SEARCH") == 0) {
        size_t n = 0;
        uint32_t *tmp;
        if (tb_imap_search_parse(r, NULL, 0, &n, err) != 0) {
            mu->bad_content = 1;
            return;
        }
        if (!mu->search_sets_list) {
            mu->fetched++;
            return;
        }
        if (n > MAIL_MAX_UIDS) n = MAIL_MAX_UIDS;
        tmp = xmalloc((n ? n : 1) * sizeof *tmp);
        if (tb_imap_search_parse(r, tmp, n, &n, err) == 0) {
            mu->n_uids = 0;
            for (size_t i = 0; i < n && i < MAIL_MAX_UIDS; i++)
                uids_set(mu, i, tmp[i]);
        }
        free(tmp);
        mu->fetched++;
    } else if (r->status == TB_IMAP_BYE && mu->step != ST_LOGOUT) {
        tb_log(TB_LOG_DEBUG, "mail %s: server said BYE: %.*s", mu->login, (int)(r->rest_len > 80 ? 80 : r->rest_len),
               r->rest);
    }
}

/* The tagged reply of the command in flight: next step or the op's end. */
static void imap_tagged(mail_user *mu, const tb_imap_resp *r) {
    if (mu->op < 0 || strcmp(r->tag, mu->tag) != 0) {
        tb_log(TB_LOG_DEBUG, "mail %s: reply for unknown tag %s", mu->login, r->tag);
        if (mu->op >= 0) op_finish(mu, TB_OP_ERR_CONTENT);
        return;
    }
    if (r->status != TB_IMAP_OK) {
        tb_log(TB_LOG_DEBUG, "mail %s: %s %s: %.*s", mu->login, op_names[mu->op], r->word,
               (int)(r->rest_len > 120 ? 120 : r->rest_len), r->rest);
        if (mu->op == OP_LOGIN) imap_drop(mu);
        op_finish(mu, TB_OP_ERR_SERVER);
        return;
    }
    switch (mu->step) {
    case ST_LOGIN:
        mu->logged_in = 1;
        mu->session_end_us = tb_now_us() + mu->cfg->session_us;
        op_finish(mu, TB_OP_OK);
        return;
    case ST_SELECT:
        mu->search_sets_list = 1;
        imap_cmd(mu, ST_UIDS, "UID SEARCH ALL");
        return;
    case ST_UIDS:
        mu->search_sets_list = 0;
        mu->selected = 1;
        op_finish(mu, mu->bad_content ? TB_OP_ERR_CONTENT : TB_OP_OK);
        return;
    case ST_STORE_DEL: imap_cmd(mu, ST_EXPUNGE, "EXPUNGE"); return;
    case ST_APPEND_WAIT:
        /* OK without a continuation request: the server took no literal */
        op_finish(mu, TB_OP_ERR_CONTENT);
        return;
    case ST_APPEND_DONE: {
        uint32_t uid;
        /* Only when no unknown message sits between ours and the list's end. */
        if (tb_imap_appenduid(r, &uid) && mu->exists == mu->n_uids + 1 &&
            (mu->n_uids == 0 || mu->uids[mu->n_uids - 1] < uid))
            uids_set(mu, mu->n_uids, uid);
        op_finish(mu, TB_OP_OK);
        return;
    }
    case ST_LOGOUT:
        imap_drop(mu);
        op_finish(mu, TB_OP_OK);
        return;
    default: break;
    }
    /* ST_CMD and ST_EXPUNGE: single commands whose data came as untagged responses */
    if (mu->bad_content) {
        op_finish(mu, TB_OP_ERR_CONTENT);
        return;
    }
    if (mu->op == OP_FETCH_BODY && mu->fetched != 1) {
        tb_log(TB_LOG_DEBUG, "mail %s: FETCH of uid %u returned %d bodies", mu->login, mu->target_uid, mu->fetched);
        op_finish(mu, TB_OP_ERR_CONTENT);
        return;
    }
    op_finish(mu, TB_OP_OK);
}

static void imap_on_read(struct bufferevent *bev, void *arg) {
    mail_user *mu = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in);
        char err[TB_ERR_LEN];
        const char *data;
        ssize_t n;
        tb_imap_resp r;
        if (len == 0 || !mu->bev) return;
        /* in a literal: wait for all of it before making the buffer contiguous */
        if (mu->scan.in_lit && len < mu->scan.lit_end) return;
        data = (const char *)evbuffer_pullup(in, -1);
        n = tb_imap_scan_next(&mu->scan, data, len, err);
        if (n == 0) return;
        if (n < 0 || tb_imap_resp_parse(data, (size_t)n, &r, err) != 0) {
            tb_log(TB_LOG_DEBUG, "mail %s: %s", mu->login, err);
            if (mu->op >= 0)
                op_finish(mu, TB_OP_ERR_CONTENT);
            else
                imap_drop(mu);
            return;
        }
        if (r.kind == TB_IMAP_UNTAGGED && mu->istate == IS_GREETING) {
            mu->istate = IS_READY;
            if (r.status == TB_IMAP_OK) {
                char pw[300], user[140];
                if (tb_imap_quote(mu->cfg->password, pw, sizeof pw) != 0 ||
                    tb_imap_quote(mu->login, user, sizeof user) != 0) {
                    op_finish(mu, TB_OP_ERR_CONTENT);
                    return;
                }
                imap_cmd(mu, ST_LOGIN, "LOGIN %s %s", user, pw);
            } else if (r.status == TB_IMAP_PREAUTH) {
                mu->logged_in = 1;
                mu->session_end_us = tb_now_us() + mu->cfg->session_us;
                evbuffer_drain(in, (size_t)n);
                tb_imap_scan_reset(&mu->scan);
                op_finish(mu, TB_OP_OK);
                continue;
            } else {
                imap_drop(mu); /* BYE (server full, refused) or garbage instead of a greeting */
                op_finish(mu, r.status == TB_IMAP_BYE ? TB_OP_ERR_SERVER : TB_OP_ERR_CONTENT);
                return;
            }
        } else if (r.kind == TB_IMAP_UNTAGGED) {
            imap_untagged(mu, &r);
        } else if (r.kind == TB_IMAP_CONTINUE) {
            if (mu->step == ST_APPEND_WAIT && mu->append_msg) {
                struct evbuffer *out = bufferevent_get_output(bev);
                evbuffer_add(out, mu->append_msg, mu->append_len);
                evbuffer_add(out, "\r\n", 2);
                free(mu->append_msg);
                mu->append_msg = NULL;
                mu->step = ST_APPEND_DONE;
            } else if (mu->op >= 0) {
                op_finish(mu, TB_OP_ERR_CONTENT);
                return;
            }
        } else {
            /* The op may end here, and even drop the connection with its
             * buffers: work from a copy of the tagged line, drained first.
             * (Regression: imap_tagged_after_drain, a use-after-free that
             * AddressSanitizer caught in test_sweep's mail workload.) */
            char stack[1024], *line = (size_t)n < sizeof stack ? stack : xmalloc((size_t)n + 1);
            memcpy(line, data, (size_t)n);
            line[n] = '\0';
            evbuffer_drain(in, (size_t)n);
            tb_imap_scan_reset(&mu->scan);
            if (tb_imap_resp_parse(line, (size_t)n, &r, err) == 0) imap_tagged(mu, &r);
            if (line != stack) free(line);
            continue;
        }
        if (!mu->bev) return;
        evbuffer_drain(in, (size_t)n);
        tb_imap_scan_reset(&mu->scan);
    }
}

static void imap_on_event(struct bufferevent *bev, short what, void *arg) {
    mail_user *mu = arg;
    (void)bev;
    if (what & BEV_EVENT_CONNECTED) return;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        int connecting = mu->istate == IS_GREETING && mu->op == OP_LOGIN && !(what & BEV_EVENT_EOF);
        tb_log(TB_LOG_DEBUG, "mail %s: imap %s: %s", mu->login, mu->cfg->imap_ep,
               (what & BEV_EVENT_EOF) ? "connection closed" : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        if (mu->op >= 0) {
            /* LOGOUT's BYE and close may beat its tagged OK: that is still a logout */
            op_finish(mu, mu->step == ST_LOGOUT ? TB_OP_OK : connecting ? TB_OP_ERR_CONNECT : TB_OP_ERR_IO);
        }
        imap_drop(mu);
    }
}

/* ---- delivery (LMTP / SMTP) --------------------------------------------- */

enum { SS_GREETING = 1, SS_HELO, SS_MAIL, SS_RCPT, SS_DATA, SS_BODY, SS_QUIT };

static void send_schedule(send_ctx *s);

static void send_drop(send_ctx *s) {
    if (s->bev) bufferevent_free(s->bev);
    s->bev = NULL;
    free(s->data);
    s->data = NULL;
    s->step = 0;
}

static void send_end(send_ctx *s, tb_op_status st) {
    uint64_t now = tb_now_us();
    mail_user *mu = s->mu;
    if (!s->busy) return;
    s->busy = 0;
    if (s->timeout) evtimer_del(s->timeout);
    send_drop(s);
    if (mu->cfg->send_only) {
        tb_user_op_done(mu->u, st); /* the driver's op: it records and schedules */
        return;
    }
    tb_user_record_step(mu->u, OP_SEND, s->intended_us, s->sent_us, now, st);
    send_schedule(s);
}

static void send_write(send_ctx *s, const char *fmt, ...) TB_PRINTF(2, 3);
static void send_write(send_ctx *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    evbuffer_add_vprintf(bufferevent_get_output(s->bev), fmt, ap);
    va_end(ap);
}

/* After LHLO/EHLO: builds the message and sends MAIL FROM (and, when the
 * server pipelines, RCPT TO and DATA in the same write; RFC 2920). */
static void send_envelope(send_ctx *s) {
    mail_user *mu = s->mu;
    const mail_cfg *c = mu->cfg;
    char login[64];
    size_t len;
    char *msg;
    tb_sut_mail_user(c->user_pattern, tb_user_tile(mu->u), tb_user_rand_range(mu->u, 1, c->users), login, sizeof login);
    make_addr(c, login, s->rcpt, sizeof s->rcpt);
    msg = new_message(mu, s->rcpt, &len);
    s->data = xmalloc(tb_smtp_stuffed_cap(len));
    s->data_len = tb_smtp_dot_stuff(msg, len, s->data);
    free(msg);
    send_write(s, "MAIL FROM:<%s>\r\n", mu->addr);
    if (s->pipelined) send_write(s, "RCPT TO:<%s>\r\nDATA\r\n", s->rcpt);
    s->step = SS_MAIL;
}

/* One reply of the delivery dialogue: the next command, or the end. */
static void send_on_reply(send_ctx *s, const tb_smtp_reply *r) {
    switch (s->step) {
    case SS_GREETING:
        if (r->code != 220) break;
        send_write(s, "%s tilebench\r\n", s->mu->cfg->lmtp ? "LHLO" : "EHLO");
        s->step = SS_HELO;
        return;
    case SS_HELO:
        if (r->code != 250) break;
        s->pipelined = (r->caps & TB_SMTP_CAP_PIPELINING) != 0;
        send_envelope(s);
        return;
    case SS_MAIL:
        if (r->code != 250) break;
        if (!s->pipelined) send_write(s, "RCPT TO:<%s>\r\n", s->rcpt);
        s->step = SS_RCPT;
        return;
    case SS_RCPT:
        if (r->code != 250 && r->code != 251) break;
        if (!s->pipelined) send_write(s, "DATA\r\n");
        s->step = SS_DATA;
        return;
    case SS_DATA:
        if (r->code != 354) break;
        evbuffer_add(bufferevent_get_output(s->bev), s->data, s->data_len);
        s->step = SS_BODY;
        return;
    case SS_BODY:
        /* LMTP: one reply per accepted recipient (RFC 2033 4.2); we have one */
        if (r->code != 250) break;
        send_write(s, "QUIT\r\n");
        s->step = SS_QUIT;
        return;
    case SS_QUIT: send_end(s, TB_OP_OK); return;
    default: break;
    }
    tb_log(TB_LOG_DEBUG, "mail %s: delivery step %d: unexpected reply %d", s->mu->login, s->step, r->code);
    /* 4xx/5xx: the server refused; anything else: it does not speak the protocol */
    send_end(s, r->code >= 400 ? TB_OP_ERR_SERVER : TB_OP_ERR_CONTENT);
}

static void send_on_read(struct bufferevent *bev, void *arg) {
    send_ctx *s = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in);
        char err[TB_ERR_LEN];
        tb_smtp_reply r;
        int rc;
        if (len == 0 || !s->bev) return;
        rc = tb_smtp_reply_parse((const char *)evbuffer_pullup(in, -1), len, &r, err);
        if (rc == 0) return;
        if (rc < 0) {
            tb_log(TB_LOG_DEBUG, "mail %s: %s: %s", s->mu->login, s->mu->cfg->dlv_ep, err);
            send_end(s, TB_OP_ERR_CONTENT);
            return;
        }
        evbuffer_drain(in, r.len);
        send_on_reply(s, &r);
    }
}

static void send_on_event(struct bufferevent *bev, short what, void *arg) {
    send_ctx *s = arg;
    (void)bev;
    if (what & BEV_EVENT_CONNECTED) return;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        tb_log(TB_LOG_DEBUG, "mail %s: delivery %s: %s", s->mu->login, s->mu->cfg->dlv_ep,
               (what & BEV_EVENT_EOF) ? "connection closed" : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        if (s->step == SS_QUIT)
            send_end(s, TB_OP_OK); /* delivered; the close raced QUIT's reply */
        else
            send_end(s, s->step == SS_GREETING && !(what & BEV_EVENT_EOF) ? TB_OP_ERR_CONNECT : TB_OP_ERR_IO);
    }
}

static void send_start(send_ctx *s) {
    mail_user *mu = s->mu;
    uint64_t t = mu->cfg->timeout_us;
    struct timeval tv = {(time_t)(t / 1000000), (suseconds_t)(t % 1000000)};
    s->busy = 1;
    s->sent_us = tb_now_us();
    s->step = SS_GREETING;
    s->pipelined = 0;
    if (s->timeout) evtimer_add(s->timeout, &tv); /* send only: the driver's timeout */
    s->bev = connect_to(mu, &mu->cfg->dlv_sa, mu->cfg->dlv_sa_len, send_on_read, send_on_event, s);
    if (s->bev) return;
    if (mu->cfg->send_only) {
        s->busy = 0; /* inside op_start: the driver's result must wait a loop turn */
        tb_user_op_done_soon(mu->u, TB_OP_ERR_CONNECT);
    } else {
        send_end(s, TB_OP_ERR_CONNECT); /* outside any driver callback: fine to record now */
    }
}

static void send_on_timer(evutil_socket_t fd, short what, void *arg) {
    send_ctx *s = arg;
    (void)fd;
    (void)what;
    /* The timer is armed only when no send is in flight (send_schedule runs at
     * each send's end), so a late send starts at once and its latency counts
     * from its intended start: no coordinated omission. */
    if (!s->busy) send_start(s);
}

static void send_on_timeout(evutil_socket_t fd, short what, void *arg) {
    send_ctx *s = arg;
    (void)fd;
    (void)what;
    tb_log(TB_LOG_DEBUG, "mail %s: delivery timed out at step %d", s->mu->login, s->step);
    send_end(s, TB_OP_ERR_TIMEOUT);
}

/* Negative-exponential gap with the configured mean (truncated at 5x, as the
 * driver's negexp think times), so sends of many users form a Poisson stream. */
static uint64_t send_gap(send_ctx *s) {
    double mean = (double)s->mu->cfg->send_interval_us;
    double x = -mean * log(1.0 - tb_user_rand01(s->mu->u));
    return (uint64_t)(x > 5 * mean ? 5 * mean : x);
}

/* Arms the timer for the next send's intended start. */
static void send_schedule(send_ctx *s) {
    uint64_t now = tb_now_us(), d;
    struct timeval tv;
    s->intended_us += send_gap(s);
    d = s->intended_us > now ? s->intended_us - now : 0;
    tv.tv_sec = (time_t)(d / 1000000);
    tv.tv_usec = (suseconds_t)(d % 1000000);
    evtimer_add(s->timer, &tv);
}

/* ---- workload methods --------------------------------------------------- */

static void *mail_user_new(const void *cfg, tb_user_ctx *u) {
    mail_user *mu = xcalloc(1, sizeof *mu);
    mu->cfg = cfg;
    mu->u = u;
    mu->op = -1;
    tb_sut_mail_user(mu->cfg->user_pattern, tb_user_tile(u), tb_user_index(u) + 1, mu->login, sizeof mu->login);
    make_addr(mu->cfg, mu->login, mu->addr, sizeof mu->addr);
    mu->snd.mu = mu;
    return mu;
}

static int mail_next_op(void *st) {
    mail_user *mu = st;
    const mail_cfg *c = mu->cfg;
    int r, k;
    if (c->send_only) return OP_SEND;
    if (!mu->logged_in) return OP_LOGIN;
    if (!mu->selected) return OP_SELECT;
    if (tb_now_us() >= mu->session_end_us) return OP_LOGOUT;
    r = tb_user_rand_range(mu->u, 1, c->mix_total);
    for (k = OP_FETCH_HEADERS; k <= OP_SEARCH; k++) {
        r -= c->mix[k];
        if (r <= 0) break;
    }
    if (k > OP_SEARCH) k = OP_FETCH_HEADERS;
    /* An empty mailbox has nothing to read, flag or delete: look for new mail. */
    if (mu->n_uids == 0 && (k == OP_FETCH_BODY || k == OP_STORE || k == OP_EXPUNGE)) k = OP_FETCH_HEADERS;
    return k;
}

static void mail_op_start(void *st, int op) {
    mail_user *mu = st;
    send_ctx *s = &mu->snd;
    if (!s->started && mu->cfg->send) {
        /* the delivery schedule starts with the user (after its ramp-up offset) */
        s->started = 1;
        s->timer = evtimer_new(tb_user_base(mu->u), send_on_timer, s);
        s->timeout = evtimer_new(tb_user_base(mu->u), send_on_timeout, s);
        s->intended_us = tb_now_us();
        send_schedule(s);
    }
    if (op == OP_SEND) {
        send_start(s); /* send only (session_length = 0): the driver's op */
        return;
    }
    mu->op = op;
    mu->bad_content = 0;
    mu->fetched = 0;
    if (op != OP_LOGIN && (!mu->bev || mu->istate != IS_READY)) {
        finish_later(mu, TB_OP_ERR_IO); /* the session was lost between ops */
        return;
    }
    switch (op) {
    case OP_LOGIN:
        imap_drop(mu);
        mu->bev = connect_to(mu, &mu->cfg->imap_sa, mu->cfg->imap_sa_len, imap_on_read, imap_on_event, mu);
        if (!mu->bev) {
            finish_later(mu, TB_OP_ERR_CONNECT);
            return;
        }
        mu->istate = IS_GREETING;
        mu->step = ST_LOGIN;
        return;
    case OP_SELECT: imap_cmd(mu, ST_SELECT, "SELECT INBOX"); return;
    case OP_FETCH_HEADERS: {
        uint32_t lo = mu->n_uids > (size_t)mu->cfg->headers_n ? mu->uids[mu->n_uids - (size_t)mu->cfg->headers_n] : 1;
        imap_cmd(mu, ST_CMD, "UID FETCH %u:* (UID FLAGS RFC822.SIZE BODY.PEEK[HEADER])", lo);
        return;
    }
    case OP_FETCH_BODY:
        mu->target_uid = pick_uid(mu);
        imap_cmd(mu, ST_CMD, "UID FETCH %u (UID BODY[])", mu->target_uid);
        return;
    case OP_STORE: imap_cmd(mu, ST_CMD, "UID STORE %u +FLAGS (\\Seen)", pick_uid(mu)); return;
    case OP_EXPUNGE: imap_cmd(mu, ST_STORE_DEL, "UID STORE %u +FLAGS.SILENT (\\Deleted)", pick_uid(mu)); return;
    case OP_APPEND:
        free(mu->append_msg);
        mu->append_msg = new_message(mu, mu->addr, &mu->append_len);
        imap_cmd(mu, ST_APPEND_WAIT, "APPEND INBOX (\\Seen) {%zu}", mu->append_len);
        return;
    case OP_SEARCH: imap_cmd(mu, ST_CMD, "UID SEARCH UNSEEN"); return;
    case OP_LOGOUT: imap_cmd(mu, ST_LOGOUT, "LOGOUT"); return;
    default: finish_later(mu, TB_OP_ERR_CONTENT); return;
    }
}

static void mail_op_cancel(void *st) {
    mail_user *mu = st;
    if (mu->cfg->send_only) {
        mu->snd.busy = 0; /* the driver timed the delivery out and records it */
        send_drop(&mu->snd);
        return;
    }
    imap_drop(mu);
    mu->op = -1;
    if (mu->defer_ev) evtimer_del(mu->defer_ev);
}

static void mail_user_free(void *st) {
    mail_user *mu = st;
    imap_drop(mu);
    send_drop(&mu->snd);
    if (mu->snd.timer) event_free(mu->snd.timer);
    if (mu->snd.timeout) event_free(mu->snd.timeout);
    if (mu->defer_ev) event_free(mu->defer_ev);
    free(mu->uids);
    free(mu);
}

const tb_workload_vt tb_mail_workload = {
    .kind = "mail",
    .n_ops = N_OPS,
    .op_names = tb_kind_mail_ops,
    /* every op is an action: actions per minute (LoadGen's tasks per user-day, per minute) */
    .metric_mask = (1u << N_OPS) - 1,
    .sockets_per_user = 2,
    .configure = mail_configure,
    .cfg_free = mail_cfg_free,
    .user_new = mail_user_new,
    .next_op = mail_next_op,
    .op_start = mail_op_start,
    .op_cancel = mail_op_cancel,
    .user_free = mail_user_free,
};
