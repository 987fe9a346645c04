/*
 * stream.c: protocol messages as Redis stream entries (stream.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/stream.h"

int tb_stream_send(tb_broker *b, const char *key, const char *type, const char *from, const json_t *body,
                   const uint8_t *stats, size_t stats_len, char *err) {
    char maxlen[24], *text = json_dumps(body, JSON_COMPACT);
    const char *argv[14];
    size_t lens[14];
    int argc = 0;
    redisReply *r;
    if (!text) {
        tb_seterr(err, "agent message: cannot encode the body");
        return -1;
    }
    snprintf(maxlen, sizeof maxlen, "%d", TB_STREAM_MAXLEN);
#define ARG(s, l) (argv[argc] = (s), lens[argc++] = (l))
    ARG("XADD", 4);
    ARG(key, strlen(key));
    ARG("MAXLEN", 6);
    ARG("~", 1);
    ARG(maxlen, strlen(maxlen));
    ARG("*", 1);
    ARG("type", 4);
    ARG(type, strlen(type));
    ARG("from", 4);
    ARG(from, strlen(from));
    ARG("body", 4);
    ARG(text, strlen(text));
    if (stats) {
        ARG("stats", 5);
        ARG((const char *)stats, stats_len);
    }
#undef ARG
    r = tb_broker_cmdv(b, argc, argv, lens, err);
    free(text);
    if (!r) return -1;
    freeReplyObject(r);
    return 0;
}

int tb_stream_group(tb_broker *b, const char *key, const char *group, const char *from, char *err) {
    char e[TB_ERR_LEN];
    redisReply *r = tb_broker_cmd(b, e, "XGROUP CREATE %s %s %s MKSTREAM", key, group, from);
    if (r) {
        freeReplyObject(r);
        return 0;
    }
    if (strstr(e, "BUSYGROUP")) return 0; /* it exists */
    tb_seterr(err, "%s", e);
    return -1;
}

/* One entry [id, [field, value, ...]] into m: 0, or -1 when malformed. */
static int parse_entry(const redisReply *e, tb_msg *m) {
    const redisReply *kv;
    json_error_t je;
    memset(m, 0, sizeof *m);
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[1]->type != REDIS_REPLY_ARRAY ||
        e->element[0]->type != REDIS_REPLY_STRING)
        return -1;
    {
        unsigned long long ms, seq;
        char tail;
        if (sscanf(e->element[0]->str, "%llu-%llu%c", &ms, &seq, &tail) != 2) return -1;
        m->id_ms = ms;
        m->id_seq = seq;
    }
    kv = e->element[1];
    for (size_t i = 0; i + 1 < kv->elements; i += 2) {
        const redisReply *k = kv->element[i], *v = kv->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) continue;
        if (strcmp(k->str, "type") == 0)
            snprintf(m->type, sizeof m->type, "%s", v->str);
        else if (strcmp(k->str, "from") == 0)
            snprintf(m->from, sizeof m->from, "%s", v->str);
        else if (strcmp(k->str, "body") == 0 && !m->body)
            m->body = json_loadb(v->str, v->len, 0, &je);
        else if (strcmp(k->str, "stats") == 0 && !m->stats && v->len > 0) {
            m->stats = xmalloc(v->len);
            memcpy(m->stats, v->str, v->len);
            m->stats_len = v->len;
        }
    }
    if (!m->type[0] || !json_is_object(m->body)) {
        tb_msg_free(m);
        return -1;
    }
    return 0;
}

/* XREADGROUP's reply: nil (timeout) or [[key, [entry, ...]]]. */
static void parse_read(tb_broker *b, const char *key, const char *group, const redisReply *r, tb_msg *out, int max,
                       int *n, int *bad) {
    const redisReply *entries;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->element[0]->type != REDIS_REPLY_ARRAY ||
        r->element[0]->elements != 2)
        return;
    entries = r->element[0]->element[1];
    if (entries->type != REDIS_REPLY_ARRAY) return;
    for (size_t i = 0; i < entries->elements; i++) {
        const redisReply *e = entries->element[i];
        char err[TB_ERR_LEN];
        if (e->type == REDIS_REPLY_ARRAY && e->elements >= 1 && e->element[0]->type == REDIS_REPLY_STRING) {
            redisReply *a = tb_broker_cmd(b, err, "XACK %s %s %s", key, group, e->element[0]->str);
            if (a) freeReplyObject(a);
        }
        if (*n < max && parse_entry(e, &out[*n]) == 0)
            (*n)++;
        else
            (*bad)++;
    }
}

int tb_stream_read(tb_broker *b, const char *key, const char *group, const char *consumer, int block_ms, tb_msg *out,
                   int max, int *n, int *bad, char *err) {
    redisReply *r;
    char e[TB_ERR_LEN];
    *n = *bad = 0;
    r = tb_broker_cmd(b, e, "XREADGROUP GROUP %s %s COUNT %d BLOCK %d STREAMS %s >", group, consumer, max, block_ms,
                      key);
    if (!r && strstr(e, "NOGROUP") && !tb_broker_broken(b)) {
        if (tb_stream_group(b, key, group, "0", err) != 0) return -1;
        r = tb_broker_cmd(b, e, "XREADGROUP GROUP %s %s COUNT %d BLOCK %d STREAMS %s >", group, consumer, max, block_ms,
                          key);
    }
    if (!r) {
        tb_seterr(err, "%s", e);
        return -1;
    }
    parse_read(b, key, group, r, out, max, n, bad);
    freeReplyObject(r);
    return 0;
}

void tb_msg_free(tb_msg *m) {
    json_decref(m->body);
    free(m->stats);
    memset(m, 0, sizeof *m);
}

void tb_nap_us(uint64_t us) {
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}
