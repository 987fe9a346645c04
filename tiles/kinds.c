/*
 * kinds.c: the catalog of workload kinds and their op names (kinds.h).
 */
#include "tiles/kinds.h"

#include <string.h>

/* DS2-style OLTP: an order is Login, browses and a Purchase (or Rollback);
 * Point is the point-select mode's one query. */
const char *const tb_kind_oltp_ops[TB_KIND_OLTP_N_OPS] = {
    "Order", "Login", "NewCustomer", "BrowseCategory", "BrowseActor", "BrowseTitle", "Purchase", "Rollback", "Point"};

const char *const tb_kind_kv_ops[TB_KIND_KV_N_OPS] = {"SET", "GET"};

/* Send is delivery (LMTP or SMTP); the rest are IMAP commands. */
const char *const tb_kind_mail_ops[TB_KIND_MAIL_N_OPS] = {"Send",  "Login",   "Select", "FetchHeaders", "FetchBody",
                                                          "Store", "Expunge", "Append", "Search",       "Logout"};

/* Olio's pages (the tile file's next.Op matrix); Request is every HTTP
 * request, a sub-op outside the mix and the metric. */
const char *const tb_kind_web_ops[TB_KIND_WEB_N_OPS] = {"HomePage",     "Login",     "TagSearch", "EventDetail",
                                                        "PersonDetail", "AddPerson", "AddEvent",  "Request"};

const char *const tb_kind_http_ops[TB_KIND_HTTP_N_OPS] = {"GET"};

static const tb_kind kinds[] = {
    {"oltp", TB_KIND_OLTP_N_OPS, tb_kind_oltp_ops}, {"kv", TB_KIND_KV_N_OPS, tb_kind_kv_ops},
    {"mail", TB_KIND_MAIL_N_OPS, tb_kind_mail_ops}, {"web", TB_KIND_WEB_N_OPS, tb_kind_web_ops},
    {"http", TB_KIND_HTTP_N_OPS, tb_kind_http_ops},
};
#define N_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

int tb_kind_count(void) { return N_KINDS; }

const tb_kind *tb_kind_at(int i) { return i >= 0 && i < N_KINDS ? &kinds[i] : NULL; }

const tb_kind *tb_kind_find(const char *name) {
    for (int i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    return NULL;
}

int tb_kind_op(const tb_kind *k, const char *op) {
    for (int i = 0; i < k->n_ops; i++)
        if (strcmp(k->op_names[i], op) == 0) return i;
    return -1;
}

/* Appends ", " (unless buf is empty) and s to buf (len bytes), cut to fit. */
static void append(char *buf, size_t len, const char *s) {
    if (buf[0]) strncat(buf, ", ", len - strlen(buf) - 1);
    strncat(buf, s, len - strlen(buf) - 1);
}

void tb_kind_names(char *buf, size_t len) {
    if (len == 0) return;
    buf[0] = '\0';
    for (int i = 0; i < N_KINDS; i++)
        append(buf, len, kinds[i].name);
}

void tb_kind_op_list(const tb_kind *k, char *buf, size_t len) {
    if (len == 0) return;
    buf[0] = '\0';
    for (int i = 0; i < k->n_ops; i++)
        append(buf, len, k->op_names[i]);
}
