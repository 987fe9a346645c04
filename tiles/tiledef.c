/*
 * tiledef.c: parses a tile definition file with inih (through ini_text.h,
 * which reads whole lines up to TB_INI_MAX_LINE) into a tb_tiledef and
 * checks it: every value is typed, every unknown section or key is an error,
 * and every error names file:line, the section and the key.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "tiles/tiledef.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/listen.h"
#include "tiles/infra_def.h"
#include "tiles/ini_text.h"
#include "tiles/kinds.h"

#define MAX_KEYS_SEEN 1024
#define MAX_TELEMETRY 256 /* bytes of a [sut] telemetry value, its NUL included */

typedef struct parse_state {
    tb_tiledef *def;
    tb_ini_text in; /* the text, read line by line: in.line is the current line */
    char err[TB_ERR_LEN];
    int failed;         /* 0, or the line of the first handler error */
    int sut_telem_line; /* line of [sut] telemetry; 0 none */
    int n_seen;         /* "section\0key" hashes already seen: a repeated key is an error */
    uint64_t seen[MAX_KEYS_SEEN];
} parse_state;

static uint64_t key_hash(const char *section, const char *key) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = section; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
    for (const char *p = key; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    return h;
}

static int fail(parse_state *ps, const char *section, const char *key, const char *why) {
    /* each part capped so the reason shows; tb_seterr ends a cut message in "..." */
    tb_seterr(ps->err, "%.120s:%d: [%.40s] %.40s: %.120s", ps->def->path, ps->in.line, section, key, why);
    ps->failed = ps->in.line;
    return 0; /* tells inih to stop */
}

static tb_workload_def *find_workload(tb_tiledef *def, const char *name) {
    for (int i = 0; i < def->n_workloads; i++)
        if (strcmp(def->workloads[i].name, name) == 0) return &def->workloads[i];
    return NULL;
}

/* The workload of section [workload.NAME], added with its defaults on its
 * first key; NULL when the file already has TB_MAX_WORKLOADS. */
static tb_workload_def *get_workload(parse_state *ps, const char *name) {
    tb_tiledef *def = ps->def;
    tb_workload_def *w = find_workload(def, name);
    if (w) return w;
    if (def->n_workloads >= TB_MAX_WORKLOADS) return NULL;
    def->workloads = xrealloc(def->workloads, (size_t)(def->n_workloads + 1) * sizeof *def->workloads);
    w = &def->workloads[def->n_workloads++];
    TB_ASSERT(def->n_workloads <= TB_MAX_WORKLOADS);
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    w->file = def->path;
    w->line = ps->in.line;
    w->users = 1;
    w->think_us = 1000000;
    snprintf(w->think_dist, sizeof w->think_dist, "fixed");
    snprintf(w->unit, sizeof w->unit, "ops/s");
    w->timeout_us = 10000000;
    return w;
}

static int set_stage(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_stage_def *st = &ps->def->stages;
    char e[TB_ERR_LEN];
    uint64_t *dst = NULL;
    if (strcmp(key, "phases") == 0) {
        uint64_t n;
        if (tb_parse_u64(val, &n, e) != 0) return fail(ps, sec, key, e);
        if (n < 1 || n > 100) return fail(ps, sec, key, "must be between 1 and 100");
        st->phases = (int)n;
        return 1;
    }
    if (strcmp(key, "ramp_up") == 0)
        dst = &st->ramp_up_us;
    else if (strcmp(key, "warm_up") == 0)
        dst = &st->warm_up_us;
    else if (strcmp(key, "steady") == 0)
        dst = &st->steady_us;
    else if (strcmp(key, "ramp_down") == 0)
        dst = &st->ramp_down_us;
    else if (strcmp(key, "idle") == 0)
        dst = &st->idle_us;
    else
        return fail(ps, sec, key, "unknown key (known: ramp_up, warm_up, steady, phases, ramp_down, idle)");
    if (tb_parse_duration_us(val, dst, e) != 0) return fail(ps, sec, key, e);
    if (dst == &st->steady_us && *dst < 1000000) return fail(ps, sec, key, "steady state must be at least 1s");
    return 1;
}

/* A key of [workload.NAME] that is not one of the common ones: kept for the
 * workload's own configure(). */
static int add_param(parse_state *ps, tb_workload_def *w, const char *sec, const char *key, const char *val) {
    char e[TB_ERR_LEN];
    tb_param *p;
    if (w->n_params >= TB_MAX_PARAMS) return fail(ps, sec, key, "too many keys");
    if (strlen(key) >= sizeof p->key) return fail(ps, sec, key, "key longer than 47 bytes");
    if (strlen(val) >= sizeof p->value) {
        snprintf(e, sizeof e, "value of %zu bytes, longer than the %zu allowed", strlen(val), sizeof p->value - 1);
        return fail(ps, sec, key, e);
    }
    w->params = xrealloc(w->params, (size_t)(w->n_params + 1) * sizeof *w->params);
    p = &w->params[w->n_params++];
    TB_ASSERT(w->n_params <= TB_MAX_PARAMS);
    snprintf(p->key, sizeof p->key, "%s", key);
    snprintf(p->value, sizeof p->value, "%s", val);
    p->line = ps->in.line;
    return 1;
}

static int set_workload(parse_state *ps, const char *sec, const char *name, const char *key, const char *val) {
    char e[TB_ERR_LEN];
    tb_workload_def *w;
    if (strlen(name) >= sizeof w->name) {
        snprintf(e, sizeof e, "workload name must be 1..%d characters", (int)sizeof w->name - 1);
        return fail(ps, sec, key, e);
    }
    if (!(w = get_workload(ps, name))) return fail(ps, sec, key, "too many workloads");
    if (strcmp(key, "kind") == 0) {
        if (!tb_kind_find(val)) {
            char known[64];
            tb_kind_names(known, sizeof known);
            snprintf(e, sizeof e, "unknown workload kind '%s' (known: %s)", val, known);
            return fail(ps, sec, key, e);
        }
        snprintf(w->kind, sizeof w->kind, "%s", val);
    } else if (strcmp(key, "users") == 0) {
        uint64_t n;
        if (tb_parse_u64(val, &n, e) != 0) return fail(ps, sec, key, e);
        if (n < 1 || n > 100000) return fail(ps, sec, key, "must be between 1 and 100000");
        w->users = (int)n;
    } else if (strcmp(key, "think_time") == 0 || strcmp(key, "cycle_time") == 0) {
        if (tb_parse_duration_us(val, &w->think_us, e) != 0) return fail(ps, sec, key, e);
        w->cycle = strcmp(key, "cycle_time") == 0;
    } else if (strcmp(key, "think_dist") == 0) {
        if (strcmp(val, "uniform") && strcmp(val, "negexp") && strcmp(val, "fixed"))
            return fail(ps, sec, key, "must be uniform (0..2x mean), negexp or fixed");
        snprintf(w->think_dist, sizeof w->think_dist, "%s", val);
    } else if (strcmp(key, "timeout") == 0) {
        if (tb_parse_duration_us(val, &w->timeout_us, e) != 0) return fail(ps, sec, key, e);
        if (w->timeout_us == 0) return fail(ps, sec, key, "must be > 0");
    } else if (strcmp(key, "reference") == 0) {
        if (tb_parse_double(val, &w->reference, e) != 0) return fail(ps, sec, key, e);
        if (w->reference <= 0) return fail(ps, sec, key, "must be > 0");
    } else if (strcmp(key, "unit") == 0) {
        if (strcmp(val, "OPM") && strcmp(val, "ops/s") && strcmp(val, "ops/min"))
            return fail(ps, sec, key, "must be OPM, ops/min or ops/s");
        snprintf(w->unit, sizeof w->unit, "%s", val);
    } else {
        return add_param(ps, w, sec, key, val);
    }
    return 1;
}

/* [qos.W] keys: the rule syntax of tiles/qos_rule.h (tb_qos_parse_rule). */
static int add_rule(parse_state *ps, const char *sec, const char *wname, const char *key, const char *val) {
    tb_tiledef *def = ps->def;
    char e[TB_ERR_LEN];
    tb_qos_rule r;
    const char *base = strrchr(def->path, '/');
    if (def->n_rules >= TB_MAX_RULES) return fail(ps, sec, key, "too many rules");
    if (tb_qos_parse_rule(wname, key, val, &r, e) != 0) {
        tb_seterr(ps->err, "%.200s:%d: %s", def->path, ps->in.line, e);
        ps->failed = ps->in.line;
        return 0;
    }
    snprintf(r.source, sizeof r.source, "%.80s:%d", base ? base + 1 : def->path, ps->in.line);
    def->rules = xrealloc(def->rules, (size_t)(def->n_rules + 1) * sizeof *def->rules);
    def->rules[def->n_rules++] = r;
    TB_ASSERT(def->n_rules <= TB_MAX_RULES);
    return 1;
}

static int set_tile(parse_state *ps, const char *sec, const char *key, const char *val) {
    char e[TB_ERR_LEN];
    if (strcmp(key, "name") == 0) {
        if (!*val) return fail(ps, sec, key, "must not be empty");
        snprintf(ps->def->name, sizeof ps->def->name, "%s", val);
    } else if (strcmp(key, "version") == 0) {
        uint64_t v;
        if (tb_parse_u64(val, &v, e) != 0) return fail(ps, sec, key, e);
    } else
        return fail(ps, sec, key, "unknown key (known: name, version)");
    return 1;
}

/* [sut] telemetry: where the SUT host's telemetry comes from; not an
 * endpoint, so the embedded SUT still starts when it is the only [sut] key. */
static int set_telemetry(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_tiledef *def = ps->def;
    if (strcmp(val, "local") != 0 && strcmp(val, "none") != 0 &&
        (strncmp(val, "http://", 7) != 0 || !val[7] || val[7] == '/'))
        return fail(ps, sec, key, "use local, none or a node_exporter URL (http://HOST:9100/metrics)");
    if (strlen(val) >= MAX_TELEMETRY) return fail(ps, sec, key, "too long");
    free(def->telemetry);
    def->telemetry = xstrdup(val);
    return 1;
}

/* [sut] pg.tileN = conninfo: tile N's own PostgreSQL. */
static int set_pg_tile(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_sut_endpoints *ep = &ps->def->sut;
    char e[TB_ERR_LEN];
    uint64_t t;
    if (tb_parse_u64(key + 7, &t, e) != 0 || t < 1 || t > 100000)
        return fail(ps, sec, key, "write pg.tileN with N >= 1 (e.g. pg.tile2)");
    for (int i = 0; i < ep->n_pg_tile; i++)
        if (ep->pg_tile[i].tile == (int)t) return fail(ps, sec, key, "this tile's server is given twice");
    if (ep->n_pg_tile >= TB_SUT_MAX_PG_TILES) return fail(ps, sec, key, "too many per-tile servers");
    if (strlen(val) >= TB_SUT_MAX_TILE_CONNINFO) return fail(ps, sec, key, "too long");
    tb_endpoints_add_pg_tile(ep, (int)t, val);
    return 1;
}

/* [sut] web = URL, or web.tileN = URL: tile N's own web app. */
static int set_web(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_sut_endpoints *ep = &ps->def->sut;
    char e[TB_ERR_LEN];
    if (strncmp(val, "http://", 7) != 0 || !val[7])
        return fail(ps, sec, key, "must be an http:// URL, e.g. http://127.0.0.1:8080");
    if (strcspn(val + 7, "@/?#") < strlen(val + 7) && val[7 + strcspn(val + 7, "@/?#")] == '@')
        return fail(ps, sec, key, "a user or password has no place in the web URL (http://HOST:PORT)");
    if (strlen(val) >= TB_SUT_MAX_URL) return fail(ps, sec, key, "too long");
    if (key[3] == '.') {
        uint64_t t;
        if (tb_parse_u64(key + 8, &t, e) != 0 || t < 1 || t > 100000)
            return fail(ps, sec, key, "write web.tileN with N >= 1 (e.g. web.tile2)");
        for (int i = 0; i < ep->n_web_tile; i++)
            if (ep->web_tile[i].tile == (int)t) return fail(ps, sec, key, "this tile's web URL is given twice");
        if (ep->n_web_tile >= TB_SUT_MAX_WEB_TILES) return fail(ps, sec, key, "too many per-tile web URLs");
        tb_endpoints_add_web_tile(ep, (int)t, val);
        return 1;
    }
    tb_endpoints_set(&ep->web_url, val);
    return 1;
}

/* HOST:PORT into *host (heap) and *port: redis, imap, lmtp, smtp. */
static int set_host_port(parse_state *ps, const char *sec, const char *key, const char *val, char **host, int *port) {
    const char *colon = strrchr(val, ':');
    char e[TB_ERR_LEN];
    uint64_t n;
    size_t len = colon ? (size_t)(colon - val) : 0;
    if (len == 0 || len >= TB_SUT_MAX_HOST) return fail(ps, sec, key, "must be HOST:PORT");
    /* the value is never quoted back: it may hold a password */
    if (strcspn(val, "@/ \t") < len)
        return fail(ps, sec, key, "must be HOST:PORT, without a scheme, a user or a password");
    if (tb_parse_u64(colon + 1, &n, e) != 0 || n < 1 || n > 65535) return fail(ps, sec, key, "port must be 1..65535");
    free(*host);
    *host = xmalloc(len + 1);
    memcpy(*host, val, len);
    (*host)[len] = '\0';
    *port = (int)n;
    return 1;
}

/* [sut] mail_user, mail_domain, mail_password, mail_password_file. */
static int set_mail(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_sut_endpoints *ep = &ps->def->sut;
    char e[TB_ERR_LEN];
    if (strcmp(key, "mail_user") == 0) {
        /* login pattern: %t = tile, %u = user (1-based) */
        if (strlen(val) >= TB_SUT_MAX_MAIL_USER) return fail(ps, sec, key, "too long");
        if (!strstr(val, "%u")) return fail(ps, sec, key, "must contain %u (the user number), e.g. tile%t-user%u");
        tb_endpoints_set(&ep->mail_user, val);
    } else if (strcmp(key, "mail_domain") == 0) {
        if (strlen(val) >= TB_SUT_MAX_MAIL_DOMAIN) return fail(ps, sec, key, "too long");
        tb_endpoints_set(&ep->mail_domain, val);
    } else if (strcmp(key, "mail_password") == 0) {
        /* note: the tile text is stored with the run; mail_password_file keeps it out */
        if (strlen(val) >= TB_SUT_MAX_PASSWORD) return fail(ps, sec, key, "too long");
        tb_endpoints_set(&ep->mail_password, val);
    } else {
        if (tb_sut_read_password_file(val, &ep->mail_password, e) != 0) return fail(ps, sec, key, e);
    }
    return 1;
}

/* [sut]: endpoints of servers that are already running, and telemetry. */
static int set_sut(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_sut_endpoints *ep = &ps->def->sut;
    if (strcmp(key, "telemetry") == 0) {
        ps->sut_telem_line = ps->in.line;
        return set_telemetry(ps, sec, key, val);
    }
    ps->def->has_sut = 1;
    if (strcmp(key, "pg") == 0) {
        if (strlen(val) >= TB_SUT_MAX_CONNINFO) return fail(ps, sec, key, "too long");
        tb_endpoints_set(&ep->pg_conninfo, val);
        return 1;
    }
    if (strncmp(key, "pg.tile", 7) == 0) return set_pg_tile(ps, sec, key, val);
    if (strcmp(key, "web") == 0 || strncmp(key, "web.tile", 8) == 0) return set_web(ps, sec, key, val);
    if (strcmp(key, "redis") == 0) return set_host_port(ps, sec, key, val, &ep->redis_host, &ep->redis_port);
    /* mail endpoints: IMAP sessions, and delivery over LMTP (LHLO) or SMTP (EHLO) */
    if (strcmp(key, "imap") == 0) return set_host_port(ps, sec, key, val, &ep->imap_host, &ep->imap_port);
    if (strcmp(key, "lmtp") == 0) return set_host_port(ps, sec, key, val, &ep->lmtp_host, &ep->lmtp_port);
    if (strcmp(key, "smtp") == 0) return set_host_port(ps, sec, key, val, &ep->smtp_host, &ep->smtp_port);
    if (strcmp(key, "mail_user") == 0 || strcmp(key, "mail_domain") == 0 || strcmp(key, "mail_password") == 0 ||
        strcmp(key, "mail_password_file") == 0)
        return set_mail(ps, sec, key, val);
    return fail(ps, sec, key,
                "unknown key (known: pg, pg.tileN, web, web.tileN, redis, imap, lmtp, smtp, mail_user, mail_domain, "
                "mail_password, mail_password_file, telemetry)");
}

/* [agents] names = a, b, c: the agents to wait for, each once. */
static int set_agent_names(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_agents_def *ag = &ps->def->agents;
    const char *p = val;
    while (*p) {
        size_t n;
        char name[64];
        while (*p == ' ' || *p == ',')
            p++;
        n = strcspn(p, " ,");
        if (!n) break;
        if (n >= sizeof name) return fail(ps, sec, key, "an agent name is longer than 63 characters");
        memcpy(name, p, n);
        name[n] = 0;
        for (size_t i = 0; i < n; i++)
            if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
                return fail(ps, sec, key, "agent names hold letters, digits, '.', '_' and '-' only");
        for (int i = 0; i < ag->n_names; i++)
            if (strcmp(ag->names[i], name) == 0) return fail(ps, sec, key, "an agent is named twice");
        if (ag->n_names >= TB_TILE_MAX_AGENTS) return fail(ps, sec, key, "too many agents (at most 256)");
        ag->names = xrealloc(ag->names, (size_t)(ag->n_names + 1) * sizeof *ag->names);
        ag->names[ag->n_names++] = xstrdup(name);
        p += n;
    }
    if (!ag->n_names) return fail(ps, sec, key, "no agent name given");
    return 1;
}

/* [agents]: count, names, wait, broker. */
static int set_agents(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_agents_def *ag = &ps->def->agents;
    char e[TB_ERR_LEN];
    uint64_t v;
    if (strcmp(key, "count") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > TB_TILE_MAX_AGENTS)
            return fail(ps, sec, key, "must be an integer 1..256");
        ag->count = (int)v;
        return 1;
    }
    if (strcmp(key, "names") == 0) return set_agent_names(ps, sec, key, val);
    if (strcmp(key, "wait") == 0) {
        if (tb_parse_duration_us(val, &ag->wait_us, e) != 0 || ag->wait_us < 1000000)
            return fail(ps, sec, key, "must be a duration of at least 1s (e.g. 60s)");
        return 1;
    }
    if (strcmp(key, "broker") == 0) {
        if (strncmp(val, "redis://", 8) != 0 && strncmp(val, "rediss://", 9) != 0)
            return fail(ps, sec, key, "must be a redis:// URI (redis://HOST:PORT, credentials before the host)");
        free(ag->broker);
        ag->broker = xstrdup(val);
        return 1;
    }
    return fail(ps, sec, key, "unknown key (known: count, names, wait, broker)");
}

/* [run]: metrics, metrics_linger, ranging. */
static int set_run(parse_state *ps, const char *sec, const char *key, const char *val) {
    tb_run_def *r = &ps->def->run;
    char e[TB_ERR_LEN], host[256];
    int port;
    if (strcmp(key, "metrics") == 0) {
        if (tb_listen_parse(val, host, sizeof host, &port, e) != 0)
            return fail(ps, sec, key, "must be ADDR:PORT (127.0.0.1:9464, [::1]:9464; PORT 0 picks a free one)");
        free(r->metrics);
        r->metrics = xstrdup(val);
        return 1;
    }
    if (strcmp(key, "metrics_linger") == 0) {
        if (tb_parse_duration_us(val, &r->metrics_linger_us, e) != 0 || r->metrics_linger_us > 3600ull * 1000000)
            return fail(ps, sec, key, "must be a duration of 0..1h (e.g. 15s; 0: none)");
        r->metrics_linger_set = 1;
        return 1;
    }
    if (strcmp(key, "ranging") == 0) {
        if (tb_parse_duration_us(val, &r->ranging_us, e) != 0 || r->ranging_us < 1000000 ||
            r->ranging_us > 3600ull * 1000000)
            return fail(ps, sec, key, "must be a duration of 1s..1h (e.g. 10s)");
        r->ranging_line = ps->in.line;
        return 1;
    }
    if (strcmp(key, "temperature") == 0) {
        if (!*val) return fail(ps, sec, key, "must not be empty (ptd+temp://HOST:PORT, hwmon:NAME or file:PATH)");
        if (strlen(val) >= 256) return fail(ps, sec, key, "too long");
        free(r->temperature);
        r->temperature = xstrdup(val);
        return 1;
    }
    return fail(ps, sec, key, "unknown key (known: metrics, metrics_linger, ranging, temperature)");
}

/* The host of section [host.NAME], added on its first key; NULL when the
 * file already has TB_MAX_HOSTS. */
static tb_host_def *get_host(parse_state *ps, const char *name) {
    tb_tiledef *def = ps->def;
    tb_host_def *h;
    for (int i = 0; i < def->n_hosts; i++)
        if (strcmp(def->hosts[i].name, name) == 0) return &def->hosts[i];
    if (def->n_hosts >= TB_MAX_HOSTS) return NULL;
    def->hosts = xrealloc(def->hosts, (size_t)(def->n_hosts + 1) * sizeof *def->hosts);
    h = &def->hosts[def->n_hosts++];
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    h->line = ps->in.line;
    h->telemetry = xstrdup("none");
    return h;
}

/* A tile number of a tiles list: 1..100000. */
static int tile_number(const char *s, size_t n, int *out) {
    char buf[16], e[TB_ERR_LEN];
    uint64_t v;
    while (n && *s == ' ')
        s++, n--;
    while (n && s[n - 1] == ' ')
        n--;
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (tb_parse_u64(buf, &v, e) != 0 || v < 1 || v > 100000) return -1;
    *out = (int)v;
    return 0;
}

/* [host.NAME] tiles = 1..4, 9, 11..12 (or none): the tiles whose load this
 * host serves. */
static int set_host_tiles(parse_state *ps, tb_host_def *h, const char *sec, const char *key, const char *val) {
    const char *p = val;
    static const char *bad = "write a tile, a range LO..HI or a list of them (e.g. 1..4, 9), or none";
    h->tiles_given = 1;
    h->tiles_line = ps->in.line;
    if (strcmp(val, "none") == 0) return 1;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *dots = strstr(p, "..");
        int lo, hi;
        if (dots && dots < p + n) {
            if (tile_number(p, (size_t)(dots - p), &lo) != 0 || tile_number(dots + 2, n - (size_t)(dots + 2 - p), &hi))
                return fail(ps, sec, key, bad);
        } else if (tile_number(p, n, &lo) != 0) {
            return fail(ps, sec, key, bad);
        } else {
            hi = lo;
        }
        if (lo > hi) return fail(ps, sec, key, "a range LO..HI needs LO <= HI");
        for (int i = 0; i < h->n_ranges; i++)
            if (lo <= h->tile_hi[i] && h->tile_lo[i] <= hi) return fail(ps, sec, key, "a tile is named twice");
        if (h->n_ranges >= TB_HOST_MAX_RANGES) return fail(ps, sec, key, "too many ranges (at most 16)");
        h->tile_lo[h->n_ranges] = lo;
        h->tile_hi[h->n_ranges++] = hi;
        p += n;
        if (*p == ',') p++;
    }
    if (!h->n_ranges) return fail(ps, sec, key, bad);
    return 1;
}

/* [host.NAME]: label, meter (and meter.SUFFIX for more), telemetry, tiles. */
static int set_host(parse_state *ps, const char *sec, const char *name, const char *key, const char *val) {
    tb_host_def *h;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
            return fail(ps, sec, key, "host names hold letters, digits, '.', '_' and '-' only");
    if (strlen(name) >= sizeof h->name) return fail(ps, sec, key, "host name must be 1..31 characters");
    if (!(h = get_host(ps, name))) return fail(ps, sec, key, "too many hosts (at most 16)");
    if (strcmp(key, "label") == 0) {
        if (strlen(val) >= sizeof h->label) return fail(ps, sec, key, "longer than 127 bytes");
        snprintf(h->label, sizeof h->label, "%s", val);
        return 1;
    }
    if (strcmp(key, "meter") == 0 || (strncmp(key, "meter.", 6) == 0 && key[6])) {
        if (!*val) return fail(ps, sec, key, "must not be empty (a meter URI, e.g. wt310://HOST:10001)");
        if (strlen(val) >= 512) return fail(ps, sec, key, "too long");
        if (h->n_meters >= TB_HOST_MAX_METERS) return fail(ps, sec, key, "too many meters (at most 8 per host)");
        h->meters[h->n_meters++] = xstrdup(val);
        return 1;
    }
    if (strcmp(key, "telemetry") == 0) {
        if (strcmp(val, "local") != 0 && strcmp(val, "none") != 0 &&
            (strncmp(val, "http://", 7) != 0 || !val[7] || val[7] == '/'))
            return fail(ps, sec, key, "use local, none or a node_exporter URL (http://HOST:9100/metrics)");
        if (strlen(val) >= MAX_TELEMETRY) return fail(ps, sec, key, "too long");
        free(h->telemetry);
        h->telemetry = xstrdup(val);
        return 1;
    }
    if (strcmp(key, "tiles") == 0) return set_host_tiles(ps, h, sec, key, val);
    return fail(ps, sec, key, "unknown key (known: label, meter, meter.SUFFIX, telemetry, tiles)");
}

/* The [host.NAME] sections as a whole: each has a meter; at most one has no
 * tiles key (it serves the rest); no tile is served by two; at most one
 * samples this machine; and [sut] telemetry gives way to theirs. */
static int check_hosts(const tb_tiledef *def, int sut_telem_line, char *err) {
    const tb_host_def *rest = NULL, *local = NULL;
    if (def->n_hosts == 0) return 0;
    if (sut_telem_line) {
        tb_seterr(err, "%s:%d: [sut] telemetry: with [host.NAME] sections each host names its own telemetry", def->path,
                  sut_telem_line);
        return -1;
    }
    for (int i = 0; i < def->n_hosts; i++) {
        const tb_host_def *h = &def->hosts[i];
        if (!h->n_meters) {
            tb_seterr(err, "%s:%d: [host.%s] meter: missing (meter = URI, e.g. wt310://HOST:10001 or estimate:)",
                      def->path, h->line, h->name);
            return -1;
        }
        if (!h->tiles_given && rest) {
            tb_seterr(err,
                      "%s:%d: [host.%s] tiles: missing, and [host.%s] has none either: only one host may serve "
                      "the remaining tiles (give tiles = none to a host that serves none)",
                      def->path, h->line, h->name, rest->name);
            return -1;
        }
        if (!h->tiles_given) rest = h;
        if (strcmp(h->telemetry, "local") == 0 && local) {
            tb_seterr(err, "%s:%d: [host.%s] telemetry: local is [host.%s]'s already (local means this machine)",
                      def->path, h->line, h->name, local->name);
            return -1;
        }
        if (strcmp(h->telemetry, "local") == 0) local = h;
        for (int j = 0; j < i; j++)
            for (int a = 0; a < h->n_ranges; a++)
                for (int b = 0; b < def->hosts[j].n_ranges; b++) {
                    const tb_host_def *o = &def->hosts[j];
                    int lo = h->tile_lo[a] > o->tile_lo[b] ? h->tile_lo[a] : o->tile_lo[b];
                    if (lo > h->tile_hi[a] || lo > o->tile_hi[b]) continue;
                    tb_seterr(err, "%s:%d: [host.%s] tiles: tile %d is served by [host.%s] too", def->path,
                              h->tiles_line, h->name, lo, o->name);
                    return -1;
                }
    }
    return 0;
}

int tb_tiledef_host_of(const tb_tiledef *def, int tile) {
    int rest = -1;
    for (int i = 0; i < def->n_hosts; i++) {
        const tb_host_def *h = &def->hosts[i];
        if (!h->tiles_given) rest = i;
        for (int r = 0; r < h->n_ranges; r++)
            if (tile >= h->tile_lo[r] && tile <= h->tile_hi[r]) return i;
    }
    return rest;
}

void tb_tiledef_host_tiles(const tb_host_def *h, char *out, size_t len) {
    size_t o = 0;
    snprintf(out, len, "%s", h->tiles_given ? "none" : "rest");
    for (int r = 0; r < h->n_ranges && o < len; r++) {
        int k = h->tile_lo[r] == h->tile_hi[r]
                    ? snprintf(out + o, len - o, "%s%d", r ? ", " : "", h->tile_lo[r])
                    : snprintf(out + o, len - o, "%s%d..%d", r ? ", " : "", h->tile_lo[r], h->tile_hi[r]);
        if (k < 0) break;
        o += (size_t)k;
    }
}

static int handler(void *user, const char *section, const char *key, const char *val) {
    parse_state *ps = user;
    uint64_t h = key_hash(section, key);
    if (ps->failed) return 0;
    /* a key given twice would silently take the last value (users = 10, then 20) */
    for (int i = 0; i < ps->n_seen; i++)
        if (ps->seen[i] == h) return fail(ps, section, key, "given twice in this section");
    if (ps->n_seen < MAX_KEYS_SEEN) ps->seen[ps->n_seen++] = h;
    if (strcmp(section, "tile") == 0) return set_tile(ps, section, key, val);
    if (strcmp(section, "stages") == 0) return set_stage(ps, section, key, val);
    if (strncmp(section, "workload.", 9) == 0 && section[9]) return set_workload(ps, section, section + 9, key, val);
    if (strncmp(section, "qos.", 4) == 0 && section[4]) return add_rule(ps, section, section + 4, key, val);
    if (strcmp(section, "sut") == 0) return set_sut(ps, section, key, val);
    if (strcmp(section, "agents") == 0) return set_agents(ps, section, key, val);
    if (strcmp(section, "run") == 0) return set_run(ps, section, key, val);
    if (strncmp(section, "host.", 5) == 0 && section[5]) return set_host(ps, section, section + 5, key, val);
    if (strncmp(section, "infra.", 6) == 0 && section[6]) {
        char why[TB_ERR_LEN];
        if (tb_infradef_set(ps->def, section + 6, key, val, ps->in.line, why) != 0) return fail(ps, section, key, why);
        return 1;
    }
    return fail(
        ps, section, key,
        "unknown section (known: tile, stages, workload.NAME, qos.NAME, sut, agents, run, host.NAME, infra.NAME)");
}

/* Checks that need the whole file: kinds set, rules refer to real ops. */
static int check(tb_tiledef *def, char *err) {
    if (def->n_workloads == 0) {
        tb_seterr(err, "%s: no [workload.NAME] section: a tile needs at least one workload", def->path);
        return -1;
    }
    for (int i = 0; i < def->n_workloads; i++) {
        tb_workload_def *w = &def->workloads[i];
        if (!w->kind[0]) {
            char known[64];
            tb_kind_names(known, sizeof known);
            tb_seterr(err, "%s:%d: [workload.%s] kind: missing (known: %s)", def->path, w->line, w->name, known);
            return -1;
        }
        if (w->reference <= 0) {
            tb_seterr(err, "%s:%d: [workload.%s] reference: missing (reference throughput per tile, in %s)", def->path,
                      w->line, w->name, w->unit);
            return -1;
        }
    }
    for (int i = 0; i < def->n_rules; i++) {
        tb_qos_rule *r = &def->rules[i];
        tb_workload_def *w = find_workload(def, r->workload);
        const tb_kind *k;
        if (tb_infradef_is_rule(r->workload)) continue; /* tb_infradef_check's */
        if (!w) {
            tb_seterr(err, "%s: [qos.%s]: no workload named '%s'", r->source, r->workload, r->workload);
            return -1;
        }
        if (strcmp(r->op, "*") == 0) continue;
        k = tb_kind_find(w->kind);
        TB_ASSERT(k != NULL); /* the kind key took only catalog kinds */
        if (tb_kind_op(k, r->op) < 0) {
            char ops[256];
            tb_kind_op_list(k, ops, sizeof ops);
            tb_seterr(err, "%s: [qos.%s] %s: no op '%s' in a %s workload (ops: %s)", r->source, r->workload, r->op,
                      r->op, w->kind, ops);
            return -1;
        }
    }
    return tb_infradef_check(def, err);
}

/* Appends s[0..n) to out (size outlen, always terminated) with bytes that
 * would garble a terminal escaped as \xNN: control bytes, DEL and bytes that
 * are not part of a valid UTF-8 sequence (a binary file given as --config).
 * Stops early, ending in "...", when out is full. */
static void escape_bytes(const char *s, size_t n, char *out, size_t outlen) {
    const unsigned char *p = (const unsigned char *)s;
    size_t o = strlen(out), i = 0;
    while (i < n && p[i]) {
        size_t k = 1, need = 0;
        if (p[i] >= 0xc2 && p[i] <= 0xdf)
            need = 1;
        else if (p[i] >= 0xe0 && p[i] <= 0xef)
            need = 2;
        else if (p[i] >= 0xf0 && p[i] <= 0xf4)
            need = 3;
        if (need) {
            while (k <= need && i + k < n && (p[i + k] & 0xc0) == 0x80)
                k++;
            if (k != need + 1) need = 0, k = 1; /* truncated sequence: escape the lead byte */
        }
        int esc = !need && (p[i] < 0x20 || p[i] >= 0x7f);
        size_t w = esc ? 4 : k;
        if (o + w + 4 > outlen) {
            if (o + 4 <= outlen) memcpy(out + o, "...", 3), o += 3;
            break;
        }
        if (esc)
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", p[i]);
        else
            memcpy(out + o, p + i, k), o += k;
        i += k;
    }
    out[o < outlen ? o : outlen - 1] = '\0';
}

void tb_tiledef_escape_err(char *err) {
    char raw[TB_ERR_LEN];
    snprintf(raw, sizeof raw, "%s", err);
    tb_ini_redact_msg(raw, sizeof raw); /* a value quoted in a message may hold a password */
    err[0] = '\0';
    escape_bytes(raw, strlen(raw), err, TB_ERR_LEN);
}

/* The syntax error inih found at `line` (a line it could not parse): what is
 * wrong and an excerpt of the line, its secrets redacted as in the stored
 * text and its bytes escaped. */
static void syntax_error(const char *name, const char *text, size_t len, int line, char *err) {
    char excerpt[72] = "", *red; /* escape_bytes ends it in "..." when longer */
    const char *l = tb_ini_line(text, len, line, &len), *why;
    size_t n;
    if (!l) {
        tb_seterr(err, "%s:%d: syntax error (expected [section] or key = value)", name, line);
        return;
    }
    red = tb_ini_redact(l, len, &n);
    l = red;
    if (line == 1 && strncmp(l, "\xEF\xBB\xBF", 3) == 0) l += 3, n -= 3; /* inih skips a UTF-8 BOM */
    while (n > 0 && (*l == ' ' || *l == '\t' || *l == '\r'))
        l++, n--;
    while (n > 0 && (l[n - 1] == ' ' || l[n - 1] == '\t' || l[n - 1] == '\r'))
        n--;
    why = *l == '[' ? "unclosed section header (no ']')" : "expected key = value (or [section])";
    escape_bytes(l, n, excerpt, sizeof excerpt);
    tb_seterr(err, "%s:%d: syntax error: %s: '%s'", name, line, why, excerpt);
    free(red);
}

void tb_tiledef_syntax_error(const char *name, const char *text, size_t len, int line, char *err) {
    syntax_error(name, text, len, line, err);
    tb_tiledef_escape_err(err);
}

/* Frees what *def holds and zeroes it; again on a zeroed one is harmless. */
static void clear_def(tb_tiledef *def) {
    for (int i = 0; i < def->n_workloads; i++)
        free(def->workloads[i].params);
    free(def->workloads);
    free(def->rules);
    free(def->path);
    free(def->telemetry);
    free(def->text);
    tb_endpoints_free(&def->sut);
    for (int i = 0; i < def->agents.n_names; i++)
        free(def->agents.names[i]);
    free(def->agents.names);
    free(def->agents.broker);
    free(def->run.metrics);
    free(def->run.temperature);
    for (int i = 0; i < def->n_hosts; i++) {
        for (int m = 0; m < def->hosts[i].n_meters; m++)
            free(def->hosts[i].meters[m]);
        free(def->hosts[i].telemetry);
    }
    free(def->hosts);
    tb_infradef_free(def);
    memset(def, 0, sizeof *def);
}

/* Fills the zeroed *def from text; 0, or -1 with err and *def cleared. */
static int parse_into(const char *name, const char *text, size_t len, tb_tiledef *def, char *err) {
    parse_state *ps = xcalloc(1, sizeof *ps); /* in.bad and err: a few KiB, off the stack */
    int rc;
    def->path = xstrdup(name);
    def->telemetry = xstrdup("");
    snprintf(def->name, sizeof def->name, "unnamed");
    def->stages.ramp_up_us = 5000000;
    def->stages.warm_up_us = 5000000;
    def->stages.steady_us = 20000000;
    def->stages.ramp_down_us = 2000000;
    def->stages.idle_us = 5000000;
    def->stages.phases = 1;
    def->text = tb_ini_redact(text, len, NULL);
    ps->def = def;
    rc = tb_ini_parse(&ps->in, def->path, text, len, handler, ps);
    /* inih goes on after a syntax error and returns the first error's line
     * (a handler error counts too): a syntax error before the first handler
     * error is the one to report, as later keys land in the wrong section;
     * a line the reader refused (too long, a NUL byte) ended the text */
    if (rc > 0 && (!ps->failed || rc < ps->failed))
        tb_tiledef_syntax_error(name, text, len, rc, err);
    else if (ps->failed)
        tb_seterr(err, "%s", ps->err);
    else if (ps->in.bad_line)
        tb_seterr(err, "%s", ps->in.bad);
    else if (rc != 0)
        tb_seterr(err, "%s: cannot parse (inih error %d)", name, rc);
    else if (check(def, err) == 0 && check_hosts(def, ps->sut_telem_line, err) == 0) {
        free(ps);
        return 0;
    }
    tb_tiledef_escape_err(err);
    clear_def(def);
    free(ps);
    return -1;
}

tb_tiledef *tb_tiledef_parse(const char *name, const char *text, size_t len, char *err) {
    tb_tiledef *def = xcalloc(1, sizeof *def);
    if (parse_into(name, text, len, def, err) != 0) {
        free(def);
        return NULL;
    }
    return def;
}

tb_tiledef *tb_tiledef_load(const char *path, char *err) {
    size_t len;
    char *text;
    tb_tiledef *def;
    if (!(text = tb_ini_read_file(path, "config", &len, err))) return NULL;
    def = tb_tiledef_parse(path, text, len, err);
    free(text);
    return def;
}

void tb_tiledef_free(tb_tiledef *def) {
    if (!def) return;
    clear_def(def);
    free(def);
}

const tb_param *tb_tiledef_param(const tb_workload_def *w, const char *key) {
    TB_ASSERT(w->n_params >= 0 && w->n_params <= TB_MAX_PARAMS);
    for (int i = 0; i < w->n_params; i++)
        if (strcmp(w->params[i].key, key) == 0) return &w->params[i];
    return NULL;
}

/* 1 when this program's own file (/proc/self/exe) lies inside the source
 * tree it was built from (TB_SOURCE_DIR): a binary run from its build
 * folder (build/tilebench, a unit test), not an installed one. */
static int run_from_source_tree(void) {
    char exe[PATH_MAX], src[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    size_t sl;
    if (n <= 0 || !realpath(TB_SOURCE_DIR, src)) return 0;
    exe[n] = '\0';
    sl = strlen(src);
    return strncmp(exe, src, sl) == 0 && exe[sl] == '/';
}

const char *tb_tiledef_default_path(void) {
    const char *env = getenv("TB_TILE_FILE");
    if (env && *env) return env;
    if (run_from_source_tree() && access(TB_SOURCE_DIR "/tiles/standard.ini", R_OK) == 0)
        return TB_SOURCE_DIR "/tiles/standard.ini";
    return TB_DATA_DIR "/standard.ini";
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h ^ 0xff; /* a separator, so "ab"+"c" differs from "a"+"bc" */
}

void tb_tiledef_workload_hash(const tb_tiledef *def, char out[17]) {
    uint64_t h = 0xcbf29ce484222325ull;
    char buf[160];
    TB_ASSERT(def->n_workloads >= 0 && def->n_workloads <= TB_MAX_WORKLOADS);
    for (int i = 0; i < def->n_workloads; i++) {
        const tb_workload_def *w = &def->workloads[i];
        snprintf(buf, sizeof buf, "%s|%s|%d|%llu|%s|%d|%llu|%s", w->name, w->kind, w->users,
                 (unsigned long long)w->think_us, w->think_dist, w->cycle, (unsigned long long)w->timeout_us, w->unit);
        h = fnv1a(h, buf);
        for (int k = 0; k < w->n_params; k++) {
            h = fnv1a(h, w->params[k].key);
            h = fnv1a(h, w->params[k].value);
        }
    }
    h = tb_infradef_hash(def, h, fnv1a); /* no [infra.NAME]: h unchanged, as before them */
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}
