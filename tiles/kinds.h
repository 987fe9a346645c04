/*
 * kinds.h: the workload kinds a tile file may name ([workload.NAME] kind =
 * ...), as data: each kind's name and the stable names of its ops, which QoS
 * rules ([qos.NAME] Order.p95 = ...), the tile file's own keys (web's
 * next.HomePage rows) and reports refer to. The tile model checks a file
 * against this catalog alone; the load generator's workloads (loadgen/) take
 * their op names from it, so the two cannot disagree.
 *
 * An op's index is its position in its kind's list, and the workload numbers
 * its ops the same way (loadgen/mail.c: OP_SEND = 0, OP_LOGIN = 1, ...), so
 * appending an op here means adding it at the end of the workload's numbering
 * too. A name, once shipped, stays: stored results and tile files use it.
 */
#ifndef TB_TILES_KINDS_H
#define TB_TILES_KINDS_H

#include <stddef.h>

#include "common/tb_common.h"

/* Ops per kind: the workloads size their op numbering to these. */
#define TB_KIND_OLTP_N_OPS 9
#define TB_KIND_KV_N_OPS   2
#define TB_KIND_MAIL_N_OPS 10
#define TB_KIND_WEB_N_OPS  8
#define TB_KIND_HTTP_N_OPS 1

/* The op names of each kind, in op index order. */
extern const char *const tb_kind_oltp_ops[TB_KIND_OLTP_N_OPS];
extern const char *const tb_kind_kv_ops[TB_KIND_KV_N_OPS];
extern const char *const tb_kind_mail_ops[TB_KIND_MAIL_N_OPS];
extern const char *const tb_kind_web_ops[TB_KIND_WEB_N_OPS];
extern const char *const tb_kind_http_ops[TB_KIND_HTTP_N_OPS];

typedef struct tb_kind {
    const char *name; /* "oltp": the value of a [workload.NAME] kind key */
    int n_ops;
    const char *const *op_names; /* n_ops names, e.g. "Order", "Login" */
} tb_kind;

/* The number of kinds, and kind i (0-based, in the order oltp, kv, mail,
 * web, http); NULL when i is out of range. */
int tb_kind_count(void);
const tb_kind *tb_kind_at(int i);

/* The kind named name; NULL when there is none. */
const tb_kind *tb_kind_find(const char *name);

/* The index of op in k's list, or -1 when k has no op of that name. */
int tb_kind_op(const tb_kind *k, const char *op);

/* "oltp, kv, mail, web, http" into buf (len bytes, always terminated): the
 * known kinds, for error messages. */
void tb_kind_names(char *buf, size_t len);

/* k's op names joined with ", " ("SET, GET") into buf (len bytes, always
 * terminated, cut when it does not fit): for error messages. */
void tb_kind_op_list(const tb_kind *k, char *buf, size_t len);

#endif
