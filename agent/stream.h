/*
 * stream.h: one message of the agent protocol as one Redis stream entry
 * (XADD) and reading them back through a consumer group (XREADGROUP, then
 * XACK at once: each side handles what it read before it reads again).
 * Fields of an entry: "type", "from", "body" (JSON) and, for statistics,
 * "stats" (binary, tb_lg_stats_encode).
 */
#ifndef TB_AGENT_STREAM_H
#define TB_AGENT_STREAM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/broker.h"

/* Entries kept per stream (XADD MAXLEN ~): a coordinator reads its results
 * within a second, so this is minutes of a busy run's live progress. */
#define TB_STREAM_MAXLEN 100000

typedef struct tb_msg {
    uint64_t id_ms, id_seq; /* the entry's ID, "MS-SEQ": later entries have larger ones */
    char type[24];
    char from[128];
    json_t *body; /* an object; never NULL after a successful read */
    uint8_t *stats;
    size_t stats_len;
} tb_msg;

/* Appends one entry; body is not consumed. 0 or -1 with err. */
int tb_stream_send(tb_broker *b, const char *key, const char *type, const char *from, const json_t *body,
                   const uint8_t *stats, size_t stats_len, char *err) TB_WUR;
/* Creates the consumer group (and the stream) if missing; from "$" (only
 * new entries) or "0" (everything kept). 0 or -1 with err. */
int tb_stream_group(tb_broker *b, const char *key, const char *group, const char *from, char *err) TB_WUR;
/* Reads up to max new entries for consumer (blocking up to block_ms),
 * acknowledges them, and parses each into out[] (*n of them; malformed
 * entries are skipped and counted in *bad). A missing group (the broker
 * restarted and lost it) is made again from "0". 0 or -1 with err. */
int tb_stream_read(tb_broker *b, const char *key, const char *group, const char *consumer, int block_ms, tb_msg *out,
                   int max, int *n, int *bad, char *err) TB_WUR;
void tb_msg_free(tb_msg *m);
/* 1 when m's entry came after the entry (ms, seq). */
static inline int tb_msg_after(const tb_msg *m, uint64_t ms, uint64_t seq) {
    return m->id_ms > ms || (m->id_ms == ms && m->id_seq > seq);
}

/* Sleeps us microseconds (a signal may cut it short). */
void tb_nap_us(uint64_t us);

#endif
