/*
 * infra_def.c: the [infra.NAME] sections of a tile file (infrastructure
 * operations, docs/infra.md) and the checks of their [qos.infra.NAME] rules.
 */
#include "tiles/infra_def.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tb_common.h"

const char *tb_infra_kind_name(tb_infra_kind k) {
    static const char *const names[TB_INFRA_NKINDS] = {"deploy", "backup", "migrate", "command"};
    return k >= 0 && k < TB_INFRA_NKINDS ? names[k] : NULL;
}

const tb_infra_def *tb_tiledef_infra(const tb_tiledef *def, const char *name) {
    for (int i = 0; i < def->n_infra; i++)
        if (strcmp(def->infra[i].name, name) == 0) return &def->infra[i];
    return NULL;
}

int tb_infradef_is_rule(const char *workload) { return strncmp(workload, "infra.", 6) == 0; }

/* The operation of section [infra.NAME], added with its defaults on its
 * first key; NULL when the file already has TB_MAX_INFRA. */
static tb_infra_def *get_infra(tb_tiledef *def, const char *name, int line) {
    tb_infra_def *d = (tb_infra_def *)tb_tiledef_infra(def, name);
    if (d) return d;
    if (def->n_infra >= TB_MAX_INFRA) return NULL;
    def->infra = xrealloc(def->infra, (size_t)(def->n_infra + 1) * sizeof *def->infra);
    d = &def->infra[def->n_infra++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->file = def->path;
    d->line = line;
    d->kind = TB_INFRA_NKINDS; /* none yet: the check wants one */
    d->tiles_per_user = TB_INFRA_DEFAULT_TILES_PER_USER;
    d->timeout_us = TB_INFRA_DEFAULT_TIMEOUT_US;
    d->output_cap = TB_INFRA_DEFAULT_OUTPUT_CAP;
    return d;
}

/* SIZE: bytes, with an optional unit B, K/KiB, M/MiB (1024-based). */
static int parse_size(const char *val, uint64_t *out, char *why) {
    char num[32], e[TB_ERR_LEN];
    size_t n = strspn(val, "0123456789");
    const char *unit = val + n;
    uint64_t v, mul = 1;
    if (n == 0 || n >= sizeof num) {
        tb_seterr(why, "'%.60s': not a size (bytes, or with a unit: 4096, 4KiB, 1MiB)", val);
        return -1;
    }
    memcpy(num, val, n);
    num[n] = '\0';
    while (*unit == ' ')
        unit++;
    if (!*unit || strcmp(unit, "B") == 0)
        mul = 1;
    else if (strcmp(unit, "K") == 0 || strcmp(unit, "KiB") == 0 || strcmp(unit, "k") == 0)
        mul = 1024;
    else if (strcmp(unit, "M") == 0 || strcmp(unit, "MiB") == 0)
        mul = 1024 * 1024;
    else {
        tb_seterr(why, "'%.60s': unknown unit '%.20s' (use B, KiB or MiB)", val, unit);
        return -1;
    }
    if (tb_parse_u64(num, &v, e) != 0 || v > TB_INFRA_MAX_OUTPUT_CAP / mul) {
        tb_seterr(why, "'%.60s': must be at most 1MiB", val);
        return -1;
    }
    *out = v * mul;
    return 0;
}

/* A command's placeholders: {tile}, {level} and {dir}; any other {word} is
 * an error (a brace not around a word is the shell's). */
static int check_placeholders(const char *cmd, char *why) {
    for (const char *p = strchr(cmd, '{'); p; p = strchr(p + 1, '{')) {
        size_t n = 0;
        while (isalnum((unsigned char)p[1 + n]) || p[1 + n] == '_')
            n++;
        if (n == 0 || p[1 + n] != '}') continue;
        if ((n == 4 && strncmp(p + 1, "tile", 4) == 0) || (n == 5 && strncmp(p + 1, "level", 5) == 0) ||
            (n == 3 && strncmp(p + 1, "dir", 3) == 0))
            continue;
        tb_seterr(why, "unknown placeholder {%.*s} (known: {tile}, {level}, {dir}; write $VAR, not ${VAR})",
                  n > 40 ? 40 : (int)n, p + 1);
        return -1;
    }
    return 0;
}

static int set_kind(tb_infra_def *d, const char *val, char *why) {
    for (int k = 0; k < TB_INFRA_NKINDS; k++)
        if (strcmp(val, tb_infra_kind_name((tb_infra_kind)k)) == 0) {
            d->kind = (tb_infra_kind)k;
            return 0;
        }
    tb_seterr(why, "unknown kind '%.40s' (known: deploy, backup, migrate, command)", val);
    return -1;
}

/* The keys every kind has. 1: not one of them. */
static int set_common(tb_infra_def *d, const char *key, const char *val, char *why) {
    char e[TB_ERR_LEN];
    uint64_t n;
    if (strcmp(key, "kind") == 0) return set_kind(d, val, why);
    if (strcmp(key, "tiles_per_user") == 0) {
        if (tb_parse_u64(val, &n, e) != 0 || n < 1 || n > 100000) {
            tb_seterr(why, "'%.40s': must be an integer 1..100000 (one user per this many tiles)", val);
            return -1;
        }
        d->tiles_per_user = (int)n;
        return 0;
    }
    if (strcmp(key, "think_time") == 0) {
        if (tb_parse_duration_us(val, &d->think_us, e) == 0) return 0;
        tb_seterr(why, "%s", e);
        return -1;
    }
    if (strcmp(key, "timeout") == 0) {
        if (tb_parse_duration_us(val, &d->timeout_us, e) != 0) {
            tb_seterr(why, "%s", e);
            return -1;
        }
        if (d->timeout_us == 0) {
            tb_seterr(why, "must be > 0");
            return -1;
        }
        return 0;
    }
    if (strcmp(key, "reference") == 0) {
        if (tb_parse_double(val, &d->reference, e) != 0 || !(d->reference > 0)) {
            tb_seterr(why, "'%.40s': must be a number > 0 (ops per hour that score 1.0)", val);
            return -1;
        }
        return 0;
    }
    return 1;
}

int tb_infradef_set(tb_tiledef *def, const char *name, const char *key, const char *val, int line, char *why) {
    tb_infra_def *d;
    int rc;
    if (!*name || strlen(name) > TB_INFRA_MAX_NAME) {
        tb_seterr(why, "operation name must be 1..%d characters", TB_INFRA_MAX_NAME);
        return -1;
    }
    /* the name becomes part of folder names and of QoS rule names */
    if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(name) ||
        name[0] == '-') {
        tb_seterr(why, "operation name '%.40s': use letters, digits, '_' and '-' only (not starting with '-')", name);
        return -1;
    }
    if (!(d = get_infra(def, name, line))) {
        tb_seterr(why, "too many operations (at most %d [infra.NAME] sections)", TB_MAX_INFRA);
        return -1;
    }
    if ((rc = set_common(d, key, val, why)) <= 0) return rc;
    if (strcmp(key, "command") == 0) {
        if (!*val) {
            tb_seterr(why, "must not be empty");
            return -1;
        }
        if (check_placeholders(val, why) != 0) return -1;
        free(d->command);
        d->command = xstrdup(val);
        d->command_line = line;
    } else if (strcmp(key, "verify") == 0) {
        if (strcmp(val, "yes") && strcmp(val, "no")) {
            tb_seterr(why, "'%.40s': must be yes or no", val);
            return -1;
        }
        d->verify = strcmp(val, "yes") == 0;
        d->verify_line = line;
    } else if (strcmp(key, "output_cap") == 0) {
        if (parse_size(val, &d->output_cap, why) != 0) return -1;
        if (d->output_cap < 256) {
            tb_seterr(why, "'%.60s': must be at least 256 bytes (room for the op's status line)", val);
            return -1;
        }
        d->output_cap_line = line;
    } else {
        tb_seterr(why, "unknown key (known: kind, tiles_per_user, think_time, timeout, reference; command and "
                       "output_cap for kind command; verify for kind backup)");
        return -1;
    }
    return 0;
}

/* A key given to an operation whose kind does not take it. */
static int check_kind_keys(const tb_infra_def *d, char *err) {
    const char *kind = tb_infra_kind_name(d->kind), *key = NULL;
    int line = 0;
    if (d->command_line && d->kind != TB_INFRA_COMMAND) key = "command", line = d->command_line;
    if (d->output_cap_line && d->kind != TB_INFRA_COMMAND) key = "output_cap", line = d->output_cap_line;
    if (d->verify_line && d->kind != TB_INFRA_BACKUP) key = "verify", line = d->verify_line;
    if (key) {
        tb_seterr(err, "%s:%d: [infra.%s] %s: not a key of kind %s (%s)", d->file, line, d->name, key, kind,
                  strcmp(key, "verify") == 0 ? "only backup takes it" : "only command takes it");
        return -1;
    }
    if (d->kind == TB_INFRA_COMMAND && !d->command) {
        tb_seterr(err,
                  "%s:%d: [infra.%s] command: missing (kind command runs it: command = ... with {tile}, "
                  "{level}, {dir})",
                  d->file, d->line, d->name);
        return -1;
    }
    return 0;
}

/* A [qos.infra.NAME] rule: its operation exists, its op is the kind's name
 * (or none), and it is a kind of rule an operation has. */
static int check_rule(const tb_tiledef *def, const tb_qos_rule *r, char *err) {
    const tb_infra_def *d = tb_tiledef_infra(def, r->workload + 6);
    const char *kind;
    if (!d) {
        tb_seterr(err, "%s: [qos.%s]: no operation named '%s' (no [infra.%s] section)", r->source, r->workload,
                  r->workload + 6, r->workload + 6);
        return -1;
    }
    kind = tb_infra_kind_name(d->kind);
    if (strcmp(r->op, "*") != 0 && strcmp(r->op, kind) != 0) {
        tb_seterr(err, "%s: [qos.%s] %s: no op '%s' in a %s operation (its op: %s)", r->source, r->workload, r->op,
                  r->op, kind, kind);
        return -1;
    }
    if (r->kind == TB_QOS_MIX) {
        tb_seterr(err, "%s: [qos.%s] mix_deviation: an operation has no mix", r->source, r->workload);
        return -1;
    }
    return 0;
}

/* The implicit error-rate rule of an operation whose file gives none. */
static void add_default_rule(tb_tiledef *def, const tb_infra_def *d) {
    tb_qos_rule r;
    memset(&r, 0, sizeof r);
    snprintf(r.workload, sizeof r.workload, "infra.%.25s", d->name); /* names are at most 25 (TB_INFRA_MAX_NAME) */
    snprintf(r.op, sizeof r.op, "*");
    r.kind = TB_QOS_ERROR_RATE;
    r.limit = 1;
    snprintf(r.source, sizeof r.source, "%s", TB_INFRA_DEFAULT_RULE_SOURCE);
    def->rules = xrealloc(def->rules, (size_t)(def->n_rules + 1) * sizeof *def->rules);
    def->rules[def->n_rules++] = r;
}

int tb_infradef_check(tb_tiledef *def, char *err) {
    for (int i = 0; i < def->n_infra; i++) {
        const tb_infra_def *d = &def->infra[i];
        if (d->kind == TB_INFRA_NKINDS) {
            tb_seterr(err, "%s:%d: [infra.%s] kind: missing (known: deploy, backup, migrate, command)", d->file,
                      d->line, d->name);
            return -1;
        }
        if (check_kind_keys(d, err) != 0) return -1;
        for (int k = 0; k < i && d->kind == TB_INFRA_MIGRATE; k++)
            if (def->infra[k].kind == TB_INFRA_MIGRATE) {
                /* two would each move the same tiles' kv users, each unaware of the other's copy */
                tb_seterr(
                    err,
                    "%s:%d: [infra.%s] kind: migrate: a tile file may have one migrate operation ([infra.%s] is one)",
                    d->file, d->line, d->name, def->infra[k].name);
                return -1;
            }
    }
    for (int i = 0; i < def->n_rules; i++)
        if (tb_infradef_is_rule(def->rules[i].workload) && check_rule(def, &def->rules[i], err) != 0) return -1;
    for (int i = 0; i < def->n_infra; i++) {
        char wl[40];
        int has = 0;
        snprintf(wl, sizeof wl, "infra.%s", def->infra[i].name);
        for (int k = 0; k < def->n_rules; k++)
            if (def->rules[k].kind == TB_QOS_ERROR_RATE && strcmp(def->rules[k].workload, wl) == 0) has = 1;
        if (!has) add_default_rule(def, &def->infra[i]);
    }
    return 0;
}

uint64_t tb_infradef_hash(const tb_tiledef *def, uint64_t h, uint64_t (*fnv)(uint64_t, const char *)) {
    char buf[160];
    for (int i = 0; i < def->n_infra; i++) {
        const tb_infra_def *d = &def->infra[i];
        snprintf(buf, sizeof buf, "infra|%s|%s|%d|%llu|%llu|%d|%llu", d->name, tb_infra_kind_name(d->kind),
                 d->tiles_per_user, (unsigned long long)d->think_us, (unsigned long long)d->timeout_us, d->verify,
                 (unsigned long long)d->output_cap);
        h = fnv(h, buf);
        h = fnv(h, d->command ? d->command : "");
    }
    return h;
}

void tb_infradef_free(tb_tiledef *def) {
    for (int i = 0; i < def->n_infra; i++)
        free(def->infra[i].command);
    free(def->infra);
    def->infra = NULL;
    def->n_infra = 0;
}
