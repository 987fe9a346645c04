/*
 * broker.h: the connection to the control Redis, "the broker". The
 * coordinator and the load-generator agents on other hosts never talk to
 * each other directly: all connect to this one Redis (>= 5, for Streams) and
 * exchange commands, heartbeats and results over streams there (agent/).
 * This layer is the connection only: URI, AUTH, SELECT, timeouts, reconnect,
 * pipelining, and the offset of the broker's TIME from the local clock.
 *
 * redis://[[USER]:PASS@]HOST[:PORT][/DB], PORT 6379 and DB 0 by default:
 *   redis://broker.lab   redis://:PASS@10.0.0.5:6390/2   redis://agent:PASS@[fd00::5]
 * PASS alone AUTHs the default user (requirepass), USER:PASS a Redis 6 ACL
 * user. USER and PASS are percent-decoded (%40 '@', %3A ':', %2F '/').
 *
 * rediss://[[USER]:PASS@]HOST[:PORT][/DB][?ca=FILE] is the same over TLS
 * (Redis 6's tls-port), through a stunnel child per connection (tunnel.h),
 * as Debian 12's hiredis (0.14.1) has no TLS of its own. The broker's
 * certificate must chain to FILE (PEM), or to the system's CA store without
 * ca=, and name HOST.
 *
 * Errors (0 / -1 with "broker HOST:PORT: why" in err) never hold the
 * password. One tb_broker is for one thread at a time. SIGPIPE from writing
 * to a reset connection never reaches the process (see broker.c).
 */
#ifndef TB_BROKER_H
#define TB_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "common/tb_common.h"

typedef struct tb_broker_uri {
    char *host; /* without brackets for IPv6 */
    int port;
    char *user; /* NULL: AUTH with the password only (or no AUTH) */
    char *pass; /* NULL: no AUTH */
    int db;
    int tls;  /* rediss:// */
    char *ca; /* rediss://...?ca=FILE, else NULL (the system's CA store) */
} tb_broker_uri;

/* Parses uri into out (freed with tb_broker_uri_free; zeroed on error).
 * 0, or -1 with err ("broker URI: port '0' is not 1..65535"), never quoting
 * the user or password part. */
int tb_broker_uri_parse(const char *uri, tb_broker_uri *out, char *err) TB_WUR;
void tb_broker_uri_free(tb_broker_uri *u);
/* The URI as it may be shown: the password replaced by "***". */
void tb_broker_uri_shown(const char *uri, char *buf, size_t len);

typedef struct tb_broker tb_broker;

/*
 * Connects within timeout_ms (also the timeout of every later command until
 * tb_broker_set_timeout), AUTHs (user and password: AUTH user pass; password
 * only: AUTH pass), SELECTs the db and checks INFO server's redis_version is
 * 5 or later. 0 and *out, or -1 with err ("broker 127.0.0.1:6390: connection
 * refused", "broker ...: authentication failed (WRONGPASS ...)").
 */
int tb_broker_connect(const tb_broker_uri *u, int timeout_ms, tb_broker **out, char *err) TB_WUR;

/*
 * One command, printf-style as hiredis's redisCommand (%s, %b with a length
 * for binary values), or as argv with lengths (binary-safe). Returns the reply
 * (the caller frees it with freeReplyObject), or NULL with err for an I/O
 * error or timeout (the connection is then broken: tb_broker_broken) or for
 * an error reply (its message in err; the connection stays usable).
 */
redisReply *tb_broker_cmd(tb_broker *b, char *err, const char *fmt, ...);
redisReply *tb_broker_cmdv(tb_broker *b, int argc, const char **argv, const size_t *lens, char *err);

/* Pipelining: append commands (buffered here, 0 or -1 when broken), then
 * read each reply in order with tb_broker_reply (as tb_broker_cmd). */
int tb_broker_append(tb_broker *b, int argc, const char **argv, const size_t *lens);
redisReply *tb_broker_reply(tb_broker *b, char *err);

/* The last I/O failed or timed out: tb_broker_reconnect before the next use. */
int tb_broker_broken(const tb_broker *b);
/* Connects again (same address, AUTH, SELECT, command timeout). 0 or -1 with err. */
int tb_broker_reconnect(tb_broker *b, char *err) TB_WUR;
/* The command timeout from now on (and after a reconnect); a blocking read
 * (XREADGROUP ... BLOCK ms) needs a timeout above its ms. 0 or -1 (<= 0 ms). */
int tb_broker_set_timeout(tb_broker *b, int timeout_ms);
void tb_broker_close(tb_broker *b); /* NULL: no-op */
/* "host:port", "[v6]:port", with "user@" before and "/db" after when set:
 * for messages (never the password). */
const char *tb_broker_shown(const tb_broker *b);

/*
 * NTP-style offset of the broker's clock (TIME, unix µs) from the local
 * monotonic clock (tb_now_us): probes round trips, each t0 = tb_now_us(),
 * TIME, t1 = tb_now_us(); the one with the smallest round trip is kept, with
 * the broker's time taken to be at its midpoint: offset = broker_us -
 * (t0 + t1) / 2, bound = (t1 - t0 + 1) / 2. So broker_us is
 * local_mono_us + offset_us, within +-bound_us. TIME is the broker host's
 * wall clock, so a step of it (or a slew) shows only at the next probe.
 */
typedef struct tb_broker_clock {
    int64_t offset_us;
    uint64_t bound_us;
    uint64_t rtt_us; /* of the probe kept */
    int probes;      /* probes made */
} tb_broker_clock;

/* probes 1..1000. 0, or -1 with err. */
int tb_broker_clock_probe(tb_broker *b, int probes, tb_broker_clock *out, char *err) TB_WUR;
/* One probe's estimate (t0 <= t1, local µs; broker_us the TIME between them). */
void tb_broker_clock_sample(int64_t broker_us, uint64_t t0, uint64_t t1, tb_broker_clock *out);

/* Local monotonic µs to broker µs, and back (clamped at 0). */
static inline int64_t tb_broker_to_broker(const tb_broker_clock *c, uint64_t mono_us) {
    return (int64_t)mono_us + c->offset_us;
}
static inline uint64_t tb_broker_to_local(const tb_broker_clock *c, int64_t broker_us) {
    int64_t l = broker_us - c->offset_us;
    return l < 0 ? 0 : (uint64_t)l;
}

/* The "major.minor" of INFO server text's redis_version line. 0, or -1 when
 * there is none. */
int tb_broker_info_version(const char *info, int *major, int *minor) TB_WUR;

#endif
