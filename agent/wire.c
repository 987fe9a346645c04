/*
 * wire.c: the JSON parts of the agent protocol (wire.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent/wire.h"
#include "common/buf.h"

static void put_str(json_t *o, const char *k, const char *v) {
    if (tb_ep_has(v)) json_object_set_new(o, k, json_string(v));
}

static int get_str(const json_t *o, const char *k, char *out, size_t len, int required, char *err) {
    const json_t *v = json_object_get(o, k);
    if (!v) {
        if (!required) {
            out[0] = 0;
            return 0;
        }
        tb_seterr(err, "agent message: '%s' missing", k);
        return -1;
    }
    if (!json_is_string(v) || json_string_length(v) >= len) {
        tb_seterr(err, "agent message: '%s' is not a string of at most %zu bytes", k, len - 1);
        return -1;
    }
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

static int get_int(const json_t *o, const char *k, long long lo, long long hi, long long *out, char *err) {
    const json_t *v = json_object_get(o, k);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        tb_seterr(err, "agent message: '%s' is not an integer %lld..%lld", k, lo, hi);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

int tb_wire_name_ok(const char *name) {
    size_t n = strlen(name);
    if (n < 1 || n >= TB_AGENT_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
              ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

void tb_wire_key(char *out, size_t len, const char *kind, const char *name) {
    snprintf(out, len, "tb:%s:%s", kind, name);
}

json_t *tb_wire_info_json(const tb_agent_info *a) {
    return json_pack("{s:s, s:s, s:i, s:i, s:s, s:i, s:s, s:s}", "name", a->name, "host", a->host, "cores", a->cores,
                     "threads", a->threads, "version", a->version, "protocol", a->protocol, "state", a->state, "coord",
                     a->coord);
}

int tb_wire_info_parse(const char *text, size_t len, tb_agent_info *a, char *err) {
    json_error_t je;
    json_t *j = json_loadb(text, len, 0, &je);
    long long v;
    int rc = -1;
    memset(a, 0, sizeof *a);
    if (!json_is_object(j)) {
        tb_seterr(err, "agent registration is not a JSON object");
        goto out;
    }
    if (get_str(j, "name", a->name, sizeof a->name, 1, err) || get_str(j, "host", a->host, sizeof a->host, 1, err) ||
        get_str(j, "version", a->version, sizeof a->version, 1, err) ||
        get_str(j, "state", a->state, sizeof a->state, 1, err) ||
        get_str(j, "coord", a->coord, sizeof a->coord, 0, err))
        goto out;
    if (get_int(j, "cores", 1, 1 << 20, &v, err)) goto out;
    a->cores = (int)v;
    if (get_int(j, "threads", 1, 1 << 20, &v, err)) goto out;
    a->threads = (int)v;
    if (get_int(j, "protocol", 0, 1 << 20, &v, err)) goto out;
    a->protocol = (int)v;
    if (!tb_wire_name_ok(a->name)) {
        tb_seterr(err, "agent registration: bad name");
        goto out;
    }
    rc = 0;
out:
    json_decref(j);
    return rc;
}

json_t *tb_wire_endpoints_json(const tb_sut_endpoints *ep) {
    json_t *o = json_object(), *pg = json_array(), *web = json_array();
    put_str(o, "pg", ep->pg_conninfo);
    put_str(o, "redis_host", ep->redis_host);
    json_object_set_new(o, "redis_port", json_integer(ep->redis_port));
    put_str(o, "imap_host", ep->imap_host);
    json_object_set_new(o, "imap_port", json_integer(ep->imap_port));
    put_str(o, "lmtp_host", ep->lmtp_host);
    json_object_set_new(o, "lmtp_port", json_integer(ep->lmtp_port));
    put_str(o, "smtp_host", ep->smtp_host);
    json_object_set_new(o, "smtp_port", json_integer(ep->smtp_port));
    put_str(o, "mail_user", ep->mail_user);
    put_str(o, "mail_domain", ep->mail_domain);
    put_str(o, "mail_password", ep->mail_password);
    put_str(o, "web", ep->web_url);
    for (int i = 0; i < ep->n_pg_tile; i++)
        json_array_append_new(pg, json_pack("{s:i, s:s}", "tile", ep->pg_tile[i].tile, "v", ep->pg_tile[i].conninfo));
    for (int i = 0; i < ep->n_web_tile; i++)
        json_array_append_new(web, json_pack("{s:i, s:s}", "tile", ep->web_tile[i].tile, "v", ep->web_tile[i].url));
    json_object_set_new(o, "pg_tile", pg);
    json_object_set_new(o, "web_tile", web);
    return o;
}

/* One string endpoint field: absent is unset. */
static int ep_str(const json_t *j, const char *k, char **field, char *err) {
    const json_t *v = json_object_get(j, k);
    if (!v) return 0;
    if (!json_is_string(v) || json_string_length(v) >= TB_SUT_MAX_CONNINFO) {
        tb_seterr(err, "agent message: endpoint '%s' is not a string", k);
        return -1;
    }
    tb_endpoints_set(field, json_string_value(v));
    return 0;
}

static int ep_port(const json_t *j, const char *k, int *port, char *err) {
    long long v;
    if (get_int(j, k, 0, 65535, &v, err) != 0) return -1;
    *port = (int)v;
    return 0;
}

/* The per-tile arrays ("pg_tile", "web_tile"): entries {tile, v}. */
static int ep_tiles(const json_t *j, const char *k, tb_sut_endpoints *ep, int pg, char *err) {
    const json_t *a = json_object_get(j, k), *e;
    size_t i;
    if (!json_is_array(a)) {
        tb_seterr(err, "agent message: endpoint '%s' is not an array", k);
        return -1;
    }
    json_array_foreach(a, i, e) {
        long long t;
        const json_t *v = json_object_get(e, "v");
        if (get_int(e, "tile", 1, 1000000, &t, err) != 0) return -1;
        if (!json_is_string(v)) {
            tb_seterr(err, "agent message: endpoint '%s' entry has no value", k);
            return -1;
        }
        if (pg)
            tb_endpoints_add_pg_tile(ep, (int)t, json_string_value(v));
        else
            tb_endpoints_add_web_tile(ep, (int)t, json_string_value(v));
    }
    return 0;
}

int tb_wire_endpoints_parse(const json_t *j, tb_sut_endpoints *ep, char *err) {
    memset(ep, 0, sizeof *ep);
    if (!json_is_object(j)) {
        tb_seterr(err, "agent message: endpoints are not an object");
        return -1;
    }
    if (ep_str(j, "pg", &ep->pg_conninfo, err) || ep_str(j, "redis_host", &ep->redis_host, err) ||
        ep_port(j, "redis_port", &ep->redis_port, err) || ep_str(j, "imap_host", &ep->imap_host, err) ||
        ep_port(j, "imap_port", &ep->imap_port, err) || ep_str(j, "lmtp_host", &ep->lmtp_host, err) ||
        ep_port(j, "lmtp_port", &ep->lmtp_port, err) || ep_str(j, "smtp_host", &ep->smtp_host, err) ||
        ep_port(j, "smtp_port", &ep->smtp_port, err) || ep_str(j, "mail_user", &ep->mail_user, err) ||
        ep_str(j, "mail_domain", &ep->mail_domain, err) || ep_str(j, "mail_password", &ep->mail_password, err) ||
        ep_str(j, "web", &ep->web_url, err) || ep_tiles(j, "pg_tile", ep, 1, err) ||
        ep_tiles(j, "web_tile", ep, 0, err)) {
        tb_endpoints_free(ep);
        return -1;
    }
    return 0;
}

json_t *tb_wire_plan_json(const tb_wire_plan *p) {
    json_t *ph = json_array();
    for (int i = 0; i < p->n_phases; i++)
        json_array_append_new(ph, json_pack("[I, I]", (json_int_t)p->phase_start_b[i], (json_int_t)p->phase_end_b[i]));
    return json_pack("{s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:o}", "seq", p->seq, "tiles", p->tiles, "lo", p->tile_lo,
                     "hi", p->tile_hi, "start", (json_int_t)p->start_b, "ramp_up_us", (json_int_t)p->ramp_up_us,
                     "workload_mask", (json_int_t)p->workload_mask, "phases", ph);
}

int tb_wire_plan_parse(const json_t *j, tb_wire_plan *p, char *err) {
    long long v;
    const json_t *ph, *e;
    size_t i;
    memset(p, 0, sizeof *p);
    if (get_int(j, "seq", 0, 1LL << 40, &v, err)) return -1;
    p->seq = (int)v;
    if (get_int(j, "tiles", 1, 100000, &v, err)) return -1;
    p->tiles = (int)v;
    if (get_int(j, "lo", 1, p->tiles, &v, err)) return -1;
    p->tile_lo = (int)v;
    if (get_int(j, "hi", p->tile_lo, p->tiles, &v, err)) return -1;
    p->tile_hi = (int)v;
    if (get_int(j, "start", 0, INT64_MAX, &v, err)) return -1;
    p->start_b = v;
    if (get_int(j, "ramp_up_us", 0, 1LL << 40, &v, err)) return -1;
    p->ramp_up_us = (uint64_t)v;
    /* absent from a plan of an older coordinator: every workload runs */
    if (json_object_get(j, "workload_mask")) {
        if (get_int(j, "workload_mask", 0, (1LL << TB_MAX_WORKLOADS) - 1, &v, err)) return -1;
        p->workload_mask = (unsigned)v;
    }
    ph = json_object_get(j, "phases");
    if (!json_is_array(ph) || json_array_size(ph) < 1 || json_array_size(ph) > TB_MAX_PHASES) {
        tb_seterr(err, "agent message: 'phases' is not an array of 1..%d phases", TB_MAX_PHASES);
        return -1;
    }
    json_array_foreach(ph, i, e) {
        json_t *a = json_array_get(e, 0), *b = json_array_get(e, 1);
        if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(b) <= json_integer_value(a) ||
            json_integer_value(a) < p->start_b) {
            tb_seterr(err, "agent message: phase %zu is not [start, end) after the level's start", i + 1);
            return -1;
        }
        p->phase_start_b[i] = json_integer_value(a);
        p->phase_end_b[i] = json_integer_value(b);
    }
    p->n_phases = (int)json_array_size(ph);
    return 0;
}

json_t *tb_wire_stalls_json(const tb_lg_stalls *s) {
    return json_pack("{s:I, s:I, s:I, s:I, s:f}", "max_us", (json_int_t)s->max_us, "p99_us", (json_int_t)s->p99_us,
                     "own_max_us", (json_int_t)s->own_max_us, "own_p99_us", (json_int_t)s->own_p99_us, "cpu_wait_pct",
                     isnan(s->cpu_wait_pct) ? -1.0 : s->cpu_wait_pct);
}

static uint64_t u64_of(const json_t *j, const char *k) {
    const json_t *v = json_object_get(j, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

void tb_wire_stalls_parse(const json_t *j, tb_lg_stalls *s) {
    const json_t *w = json_object_get(j, "cpu_wait_pct");
    s->max_us = u64_of(j, "max_us");
    s->p99_us = u64_of(j, "p99_us");
    s->own_max_us = u64_of(j, "own_max_us");
    s->own_p99_us = u64_of(j, "own_p99_us");
    s->cpu_wait_pct = json_is_number(w) && json_number_value(w) >= 0 ? json_number_value(w) : NAN;
}

/* The header name of an INI line "[name]" (spaces allowed around), or 0. */
static int is_header(const char *l, size_t n, const char **name, size_t *nlen) {
    size_t i = 0, e;
    while (i < n && (l[i] == ' ' || l[i] == '\t'))
        i++;
    if (i == n || l[i] != '[') return 0;
    e = i + 1;
    while (e < n && l[e] != ']')
        e++;
    if (e == n) return 0;
    i++;
    while (i < e && (l[i] == ' ' || l[i] == '\t'))
        i++;
    *name = l + i;
    while (e > i && (l[e - 1] == ' ' || l[e - 1] == '\t'))
        e--;
    *nlen = e - i;
    return 1;
}

char *tb_wire_tile_text(const char *text) {
    tb_buf b;
    int skip = 0;
    const char *l = text;
    tb_buf_init(&b, 0);
    while (*l) {
        const char *nl = strchr(l, '\n'), *name;
        size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l), nlen;
        if (is_header(l, n, &name, &nlen)) skip = nlen == 3 && strncmp(name, "sut", 3) == 0;
        if (skip)
            tb_buf_putn(&b, "\n", 1); /* line numbers in an agent's errors stay the file's */
        else
            tb_buf_putn(&b, l, n);
        l += n;
    }
    return tb_buf_take(&b, NULL);
}
