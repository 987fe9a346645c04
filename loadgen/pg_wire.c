/*
 * pg_wire.c: Bind/Execute/Sync out, the backend's reply in (pg_wire.h).
 */
#include "loadgen/pg_wire.h"

#include <string.h>

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static char *put32(char *p, uint32_t v) {
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
    return p + 4;
}

static char *put16(char *p, uint16_t v) {
    p[0] = (char)(v >> 8);
    p[1] = (char)v;
    return p + 2;
}

void tb_pgw_reader_reset(tb_pgw_reader *r) {
    r->hdr_len = 0;
    r->left = 0;
    r->keep_len = 0;
    memset(&r->reply, 0, sizeof r->reply);
    r->reply.first_len = -1;
}

int tb_pgw_reader_between(const tb_pgw_reader *r) { return r->hdr_len == 0 && r->left == 0; }

/* Copies the C string starting at p (at most end - p bytes, maybe unterminated) into out[cap]. */
static void copy_field(const unsigned char *p, const unsigned char *end, char *out, size_t cap) {
    size_t n = 0;
    while (p + n < end && p[n] && n + 1 < cap)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* ErrorResponse: fields of a code byte and a C string, up to a 0 code. Only
 * the kept start of the body is looked at: a message cut there is cut. */
static void take_error(tb_pgw_reply *rep, const unsigned char *p, const unsigned char *end) {
    rep->error = 1;
    while (p < end && *p) {
        unsigned char code = *p++;
        const unsigned char *v = p;
        while (p < end && *p)
            p++;
        if (code == 'V' || (code == 'S' && !rep->severity[0]))
            copy_field(v, p, rep->severity, sizeof rep->severity);
        else if (code == 'C')
            copy_field(v, p, rep->sqlstate, sizeof rep->sqlstate);
        else if (code == 'M')
            copy_field(v, p, rep->message, sizeof rep->message);
        if (p < end) p++; /* the field's NUL */
    }
}

/* DataRow of body length body: the first row's first field, as far as the
 * kept bytes hold it. -1 with err when its first field cannot fit the row. */
static int take_row(tb_pgw_reply *rep, const unsigned char *p, unsigned kept, uint32_t body, char *err) {
    uint32_t len;
    size_t n;
    if (p[0] == 0 && p[1] == 0) { /* no field */
        rep->rows++;
        return 0;
    }
    len = body >= 6 ? get32(p + 2) : 0;
    if (body < 6 || (len != 0xffffffffu && len > body - 6)) {
        tb_seterr(err, "PostgreSQL protocol: a DataRow's first field does not fit its %u bytes", body);
        return -1;
    }
    if (++rep->rows != 1 || len == 0xffffffffu) return 0; /* not the first row, or NULL */
    rep->first_len = (long)len;
    n = len < sizeof rep->first - 1 ? len : sizeof rep->first - 1;
    if (n > kept - 6) n = kept - 6;
    memcpy(rep->first, p + 6, n);
    rep->first[n] = '\0';
    return 0;
}

/* Whether a message of type t and length len (the field's value) can be part
 * of a reply to Bind/Execute/Sync; err says why not. */
static int type_ok(unsigned char t, uint32_t len, char *err) {
    switch (t) {
    case '2': /* BindComplete */
    case 's': /* PortalSuspended */
    case 'I': /* EmptyQueryResponse */
        if (len == 4) return 1;
        break;
    case 'Z': /* ReadyForQuery */
        if (len == 5) return 1;
        break;
    case 'D': /* DataRow: at least its field count */
        if (len >= 6) return 1;
        break;
    case 'C': /* CommandComplete */
    case 'E': /* ErrorResponse */
    case 'N': /* NoticeResponse */
    case 'S': /* ParameterStatus */
    case 'A': /* NotificationResponse */ return 1;
    default: tb_seterr(err, "PostgreSQL protocol: unexpected message type 0x%02x in a statement's reply", t); return 0;
    }
    tb_seterr(err, "PostgreSQL protocol: message '%c' of length %u", t, len);
    return 0;
}

/* A whole message has been read (its kept body in r->keep). 1 at
 * ReadyForQuery, -1 with err when its body is not what its type holds. */
static int message_end(tb_pgw_reader *r, char *err) {
    switch (r->hdr[0]) {
    case 'D': return take_row(&r->reply, r->keep, r->keep_len, get32(r->hdr + 1) - 4, err);
    case 'E': take_error(&r->reply, r->keep, r->keep + r->keep_len); return 0;
    case 'Z':
        if (r->keep[0] != 'I' && r->keep[0] != 'T' && r->keep[0] != 'E') {
            tb_seterr(err, "PostgreSQL protocol: ReadyForQuery with status 0x%02x", r->keep[0]);
            return -1;
        }
        r->reply.status = (char)r->keep[0];
        return 1;
    default: return 0;
    }
}

long tb_pgw_feed(tb_pgw_reader *r, const char *buf, size_t len, int *done, char *err) {
    const unsigned char *p = (const unsigned char *)buf;
    size_t off = 0;
    *done = 0;
    while (off < len) {
        if (r->hdr_len < 5) { /* the header: type and length */
            r->hdr[r->hdr_len++] = p[off++];
            if (r->hdr_len < 5) continue;
            uint32_t mlen = get32(r->hdr + 1);
            if (mlen < 4 || mlen > TB_PGW_MAX_MSG) {
                tb_seterr(err, "PostgreSQL protocol: message length %u", mlen);
                return -1;
            }
            if (!type_ok(r->hdr[0], mlen, err)) return -1;
            r->left = mlen - 4;
            r->keep_len = 0;
        } else { /* the body: kept up to TB_PGW_KEEP where it matters, the rest passed over */
            size_t n = len - off < r->left ? len - off : r->left;
            unsigned char t = r->hdr[0];
            if ((t == 'D' || t == 'E' || t == 'Z') && r->keep_len < TB_PGW_KEEP) {
                size_t k = TB_PGW_KEEP - r->keep_len < n ? TB_PGW_KEEP - r->keep_len : n;
                memcpy(r->keep + r->keep_len, p + off, k);
                r->keep_len += (unsigned)k;
            }
            off += n;
            r->left -= (uint32_t)n;
        }
        if (r->hdr_len == 5 && r->left == 0) { /* a whole message */
            int end = message_end(r, err);
            r->hdr_len = 0;
            if (end < 0) return -1;
            if (end) {
                *done = 1;
                return (long)off;
            }
        }
    }
    return (long)off;
}

size_t tb_pgw_exec_len(const char *stmt, int n, const char *const *vals) {
    size_t b = 1 + 4 + 1 + strlen(stmt) + 1 + 2 + 2 + 2; /* Bind without its values */
    for (int i = 0; i < n; i++)
        b += 4 + strlen(vals[i]);
    return b + (1 + 4 + 1 + 4) + (1 + 4); /* Execute, Sync */
}

size_t tb_pgw_exec(char *out, const char *stmt, int n, const char *const *vals) {
    char *p = out, *len_at;
    size_t sl = strlen(stmt);
    *p++ = 'B';
    len_at = p;
    p += 4;
    *p++ = '\0'; /* the unnamed portal */
    memcpy(p, stmt, sl + 1);
    p += sl + 1;
    p = put16(p, 0); /* no parameter format codes: all text */
    p = put16(p, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        size_t vl = strlen(vals[i]);
        p = put32(p, (uint32_t)vl);
        memcpy(p, vals[i], vl);
        p += vl;
    }
    p = put16(p, 0); /* no result format codes: all text */
    put32(len_at, (uint32_t)(p - len_at));
    *p++ = 'E';
    p = put32(p, 4 + 1 + 4);
    *p++ = '\0';     /* the unnamed portal */
    p = put32(p, 0); /* every row */
    *p++ = 'S';
    p = put32(p, 4);
    return (size_t)(p - out);
}
