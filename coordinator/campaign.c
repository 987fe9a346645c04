/*
 * campaign.c: parses a campaign file (inih) and runs it: for each SUT
 * configuration, apply command, the same sweep as `tilebench run` (through
 * tb_coordinator_run), revert command; then the comparison against the
 * baseline run (results/compare.h). See campaign.h for the file format.
 *
 * Commands run under /bin/sh -c in their own process group, so a Ctrl-C at
 * the terminal reaches tilebench (which then stops the run cleanly) but not a
 * revert command in progress; an apply in progress is sent SIGTERM instead.
 * They run through common/spawn.h; their combined stdout/stderr goes to the
 * observer line by line and is stored, with the exit status, in
 * campaign_steps. Nothing here prints.
 */
#include "coordinator/campaign.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "common/redact.h"
#include "common/spawn.h"
#include "loadgen/loadgen.h"
#include "powermeter/meter.h"
#include "results/compare.h"
#include "results/store.h"
#include "tiles/ini_text.h"
#include "tiles/tiledef.h"

#define MAX_OUTPUT (64 * 1024) /* output kept per command; the rest is echoed, not stored */

/* ---- digests ------------------------------------------------------------------ */

/* hex gets the SHA-256 of len bytes at data (lower-case hex), "" when
 * OpenSSL fails. */
static void sha256_hex(const void *data, size_t len, char hex[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    hex[0] = '\0';
    if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32) return;
    for (unsigned i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* hex gets the SHA-256 of the file at path as it is now; "" when it cannot
 * be read (gone, unreadable), which differs from any digest. */
static void sha256_file(const char *path, char hex[65]) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char md[EVP_MAX_MD_SIZE], buf[16384];
    unsigned n = 0;
    size_t got;
    int ok;
    FILE *f = fopen(path, "rb");
    hex[0] = '\0';
    ok = f && ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    while (ok && (got = fread(buf, 1, sizeof buf, f)) > 0)
        ok = EVP_DigestUpdate(ctx, buf, got) == 1;
    ok = ok && !ferror(f) && EVP_DigestFinal_ex(ctx, md, &n) == 1 && n == 32;
    if (f) fclose(f);
    EVP_MD_CTX_free(ctx);
    if (!ok) return;
    for (unsigned i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* ---- parsing ------------------------------------------------------------------ */

typedef struct parse_state {
    tb_campaign *c;
    tb_ini_text in; /* the text, read line by line: in.line is the current line */
    char err[TB_ERR_LEN];
    int failed; /* the line of the first handler error, 0 for none */
    int baseline_line;
    char seen[256][96]; /* "section\tkey" already given */
    int n_seen;
} parse_state;

static int fail(parse_state *ps, const char *section, const char *key, const char *why) {
    tb_seterr(ps->err, "%.200s:%d: [%.60s] %.40s: %.200s", ps->c->path, ps->in.line, section, key, why);
    ps->failed = ps->in.line;
    return 0; /* stops inih */
}

static tb_campaign_config *get_config(parse_state *ps, const char *name) {
    tb_campaign *c = ps->c;
    for (int i = 0; i < c->n_configs; i++)
        if (strcmp(c->configs[i].name, name) == 0) return &c->configs[i];
    if (c->n_configs >= TB_CAMPAIGN_MAX_CONFIGS) return NULL;
    tb_campaign_config *k = &c->configs[c->n_configs++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->line = ps->in.line;
    return k;
}

/* A configuration name becomes a run label and a file-name-like token in
 * messages: letters, digits and - _ . only. */
static int valid_name(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '_' || *s == '.'))
            return 0;
    return 1;
}

/* tile_file = PATH into dst (len bytes): relative to the campaign file's
 * folder, so the pair can move together. */
static int set_tile_file(parse_state *ps, const char *section, const char *key, const char *val, char *dst,
                         size_t len) {
    tb_campaign *c = ps->c;
    if (!*val) return fail(ps, section, key, "must not be empty (leave it out for the standard tile)");
    if (strlen(val) + strlen(c->path) + 2 > len) return fail(ps, section, key, "too long");
    if (val[0] == '/') {
        snprintf(dst, len, "%s", val);
    } else {
        char *dup = xstrdup(c->path);
        snprintf(dst, len, "%s/%s", dirname(dup), val);
        free(dup);
    }
    return 1;
}

/* meter = URI, repeatable: appended to meters[*n]. */
static int add_meter(parse_state *ps, const char *section, const char *key, const char *val, int *n,
                     char (*meters)[512]) {
    if (*n >= TB_MAX_METERS) return fail(ps, section, key, "too many meters (at most 16)");
    if (!*val || strlen(val) >= 512) return fail(ps, section, key, "empty or too long");
    snprintf(meters[(*n)++], 512, "%s", val);
    return 1;
}

/* threads = N, as `run --threads`. */
static int set_threads(parse_state *ps, const char *section, const char *key, const char *val, int *dst) {
    uint64_t v;
    char e[TB_ERR_LEN];
    if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > 256) return fail(ps, section, key, "must be an integer 1..256");
    *dst = (int)v;
    return 1;
}

static int set_sweep(parse_state *ps, const char *section, const char *key, const char *val) {
    static const char *const stages[TB_CAMP_N_STAGES] = {"ramp_up", "warm_up", "steady", "ramp_down", "idle"};
    tb_campaign *c = ps->c;
    char e[TB_ERR_LEN];
    uint64_t v;
    for (int i = 0; i < TB_CAMP_N_STAGES; i++) {
        if (strcmp(key, stages[i]) != 0) continue;
        if (tb_parse_duration_us(val, &c->stage_us[i], e) != 0) return fail(ps, section, key, e);
        if (i == TB_CAMP_STEADY && c->stage_us[i] < 1000000)
            return fail(ps, section, key, "steady state must be at least 1s");
        c->stage_set |= 1u << i;
        return 1;
    }
    if (strcmp(key, "tiles") == 0) {
        if (!*val || strlen(val) >= sizeof c->tiles) return fail(ps, section, key, "empty or too long");
        snprintf(c->tiles, sizeof c->tiles, "%s", val);
    } else if (strcmp(key, "tile_file") == 0) {
        c->tile_file_line = ps->in.line;
        return set_tile_file(ps, section, key, val, c->tile_file, sizeof c->tile_file);
    } else if (strcmp(key, "phases") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > 100)
            return fail(ps, section, key, "must be an integer 1..100");
        c->phases = (int)v;
    } else if (strcmp(key, "repeat") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > 100)
            return fail(ps, section, key, "must be an integer 1..100");
        c->repeat = (int)v;
    } else if (strcmp(key, "max_tiles") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > TB_MAX_LEVELS)
            return fail(ps, section, key, "must be an integer 1..256");
        c->max_tiles = (int)v;
    } else if (strcmp(key, "meter") == 0) {
        if (!c->meter_line) c->meter_line = ps->in.line;
        return add_meter(ps, section, key, val, &c->n_meters, c->meters);
    } else if (strcmp(key, "threads") == 0) {
        return set_threads(ps, section, key, val, &c->threads);
    } else {
        return fail(ps, section, key,
                    "unknown key (known: tiles, tile_file, ramp_up, warm_up, steady, ramp_down, idle, phases, repeat, "
                    "max_tiles, meter, threads)");
    }
    return 1;
}

/* A key of [config.NAME] into k. */
static int set_config(parse_state *ps, const char *section, tb_campaign_config *k, const char *key, const char *val) {
    char e[TB_ERR_LEN];
    int line = ps->in.line;
    if (strcmp(key, "apply") == 0 || strcmp(key, "revert") == 0) {
        int apply = key[0] == 'a';
        if (!*val) return fail(ps, section, key, "empty command (use 'true' for nothing to do)");
        if (strlen(val) >= TB_CAMPAIGN_CMD_LEN) {
            snprintf(e, sizeof e, "command of %zu bytes, longer than the %d allowed (put a long command in a script)",
                     strlen(val), TB_CAMPAIGN_CMD_LEN - 1);
            return fail(ps, section, key, e);
        }
        snprintf(apply ? k->apply : k->revert, TB_CAMPAIGN_CMD_LEN, "%s", val);
        if (apply)
            k->has_apply = 1;
        else
            k->has_revert = 1;
    } else if (strcmp(key, "tile_file") == 0) {
        k->tile_file_line = line;
        return set_tile_file(ps, section, key, val, k->tile_file, sizeof k->tile_file);
    } else if (strcmp(key, "tiles") == 0) {
        if (!*val || strlen(val) >= sizeof k->tiles) return fail(ps, section, key, "empty or too long");
        snprintf(k->tiles, sizeof k->tiles, "%s", val);
        k->tiles_line = line;
    } else if (strcmp(key, "meter") == 0) {
        if (!k->meter_line) k->meter_line = line;
        return add_meter(ps, section, key, val, &k->n_meters, k->meters);
    } else if (strcmp(key, "threads") == 0) {
        k->threads_line = line;
        return set_threads(ps, section, key, val, &k->threads);
    } else if (strcmp(key, "label") == 0) {
        if (!*val || strlen(val) >= sizeof k->label) return fail(ps, section, key, "empty or longer than 127 bytes");
        for (const char *p = val; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return fail(ps, section, key, "a control character has no place in a label");
        snprintf(k->label, sizeof k->label, "%s", val);
        k->label_line = line;
    } else {
        return fail(ps, section, key, "unknown key (known: apply, revert, tile_file, tiles, meter, threads, label)");
    }
    return 1;
}

static int handler(void *user, const char *section, const char *key, const char *val) {
    parse_state *ps = user;
    tb_campaign *c = ps->c;
    char e[TB_ERR_LEN], tag[96];
    if (ps->failed) return 0;
    snprintf(tag, sizeof tag, "%.60s\t%.30s", section, key);
    if (strcmp(key, "meter") != 0) { /* meter is repeatable; any other key given twice is a mistake */
        for (int i = 0; i < ps->n_seen; i++)
            if (strcmp(ps->seen[i], tag) == 0) return fail(ps, section, key, "given twice in this section");
        if (ps->n_seen < 256) snprintf(ps->seen[ps->n_seen++], sizeof ps->seen[0], "%s", tag);
    }
    if (strcmp(section, "campaign") == 0) {
        if (strcmp(key, "name") == 0) {
            if (!*val || strlen(val) >= sizeof c->name) return fail(ps, section, key, "empty or too long");
            snprintf(c->name, sizeof c->name, "%s", val);
        } else if (strcmp(key, "baseline") == 0) {
            if (!*val || strlen(val) >= sizeof c->baseline) return fail(ps, section, key, "empty or too long");
            snprintf(c->baseline, sizeof c->baseline, "%s", val);
            ps->baseline_line = ps->in.line;
        } else if (strcmp(key, "settle") == 0) {
            if (tb_parse_duration_us(val, &c->settle_us, e) != 0) return fail(ps, section, key, e);
        } else {
            return fail(ps, section, key, "unknown key (known: name, baseline, settle)");
        }
        return 1;
    }
    if (strcmp(section, "sweep") == 0) return set_sweep(ps, section, key, val);
    if (strncmp(section, "config.", 7) == 0) {
        const char *name = section + 7;
        tb_campaign_config *k;
        if (!valid_name(name) || strlen(name) >= sizeof k->name)
            return fail(ps, section, key,
                        "the configuration name after 'config.' must be 1..63 letters, digits, '-', '_' or '.'");
        k = get_config(ps, name);
        if (!k) return fail(ps, section, key, "too many configurations (at most 32)");
        return set_config(ps, section, k, key, val);
    }
    return fail(ps, section, key, "unknown section (known: [campaign], [sweep], [config.NAME])");
}

/* The tile specs of [sweep] and of each configuration that has its own. */
static int parse_tile_specs(tb_campaign *c, char *err) {
    char e[TB_ERR_LEN];
    if (tb_levels_parse(c->tiles, c->max_tiles, &c->levels, e) != 0) {
        tb_seterr(err, "%s: [sweep] tiles: %s", c->path, e);
        return -1;
    }
    for (int i = 0; i < c->n_configs; i++) {
        tb_campaign_config *k = &c->configs[i];
        if (*k->tiles && tb_levels_parse(k->tiles, c->max_tiles, &k->levels, e) != 0) {
            tb_seterr(err, "%s:%d: [config.%s] tiles: %s", c->path, k->tiles_line, k->name, e);
            return -1;
        }
    }
    return 0;
}

int tb_campaign_load(const char *path, tb_campaign *c, char *err) {
    parse_state *ps;
    char *raw = NULL;
    size_t len;
    int rc;
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->tiles, sizeof c->tiles, "1..3");
    c->repeat = 1;
    c->max_tiles = 8;
    ps = xcalloc(1, sizeof *ps);
    ps->c = c;
    if (!(raw = tb_ini_read_file(path, "campaign", &len, err))) {
        free(ps);
        return -1;
    }
    c->text = tb_ini_redact(raw, len, NULL); /* stored with the campaign: no secrets */
    sha256_hex(raw, len, c->sha256);         /* an apply that rewrites it is warned */
    rc = tb_ini_parse(&ps->in, c->path, raw, len, handler, ps);
    /* inih goes on after a syntax error and returns the first error's line (a
     * handler error counts too): a syntax error before the first handler error
     * is the one to report, as the keys after it land in the wrong section; a
     * line the reader refused (too long, a NUL byte) ended the text */
    if (rc > 0 && (!ps->failed || rc < ps->failed)) {
        tb_tiledef_syntax_error(path, raw, len, rc, err);
        goto fail;
    }
    if (ps->failed || ps->in.bad_line || rc != 0) {
        if (ps->failed)
            tb_seterr(err, "%s", ps->err);
        else if (ps->in.bad_line)
            tb_seterr(err, "%s", ps->in.bad);
        else
            tb_seterr(err, "%s: cannot parse (inih error %d)", path, rc);
        goto fail;
    }
    free(raw);
    raw = NULL;
    if (!*c->name) {
        tb_seterr(err, "%s: [campaign] name: missing (every campaign needs a name)", path);
        goto fail;
    }
    if (!*c->baseline) {
        tb_seterr(err, "%s: [campaign] baseline: missing (the name of the [config.NAME] runs are compared against)",
                  path);
        goto fail;
    }
    for (int i = 0; i < c->n_configs; i++) {
        const tb_campaign_config *k = &c->configs[i];
        if (!k->has_apply || !k->has_revert) {
            tb_seterr(err, "%s:%d: [config.%s] %s: missing (use 'true' for nothing to do)", path, k->line, k->name,
                      k->has_apply ? "revert" : "apply");
            goto fail;
        }
    }
    if (c->n_configs < 2) {
        tb_seterr(err, "%s: [config.NAME]: %d configuration%s; a campaign compares at least 2", path, c->n_configs,
                  c->n_configs == 1 ? "" : "s");
        goto fail;
    }
    {
        int found = 0;
        for (int i = 0; i < c->n_configs; i++)
            if (strcmp(c->configs[i].name, c->baseline) == 0) found = 1;
        if (!found) {
            char names[512];
            size_t o = 0;
            for (int i = 0; i < c->n_configs && o + 70 < sizeof names; i++)
                o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "", c->configs[i].name);
            tb_seterr(err, "%s:%d: [campaign] baseline: '%s' is not a configuration (configurations: %s)", path,
                      ps->baseline_line, c->baseline, names);
            goto fail;
        }
    }
    if (parse_tile_specs(c, err) != 0) goto fail;
    free(ps);
    return 0;
fail:
    tb_tiledef_escape_err(err); /* secrets redacted, bytes escaped */
    free(raw);
    free(ps);
    tb_campaign_free(c);
    return -1;
}

void tb_campaign_free(tb_campaign *c) {
    if (!c) return;
    free(c->text);
    c->text = NULL;
}

/* ---- commands ------------------------------------------------------------------ */

/* s with its secrets redacted (tb_ini_redact_msg's rules): malloc'd. Room
 * for "***" standing for a shorter secret. */
static char *redacted(const char *s, size_t n) {
    size_t cap = 3 * n + 64;
    char *r = xmalloc(cap);
    memcpy(r, s, n);
    r[n] = '\0';
    tb_ini_redact_msg(r, cap);
    return r;
}

/* The secret values a command assigns (NAME=VALUE where the redaction
 * rules hide VALUE, e.g. PGPASSWORD=... or X_TOKEN=...): its output may
 * print them bare, and they are hidden there too. */
#define CMD_MAX_SECRETS 16
typedef struct cmd_secrets {
    int n;
    char *v[CMD_MAX_SECRETS];
} cmd_secrets;

/* The value after '=' at eq: up to a blank or a shell operator, or inside
 * the quotes it starts with. Its length; *start set. */
static size_t assigned_value(const char *eq, const char **start) {
    const char *v = eq + 1;
    if (*v == '\'' || *v == '"') {
        const char *end = strchr(v + 1, *v);
        *start = v + 1;
        return end ? (size_t)(end - v - 1) : strlen(v + 1);
    }
    *start = v;
    return strcspn(v, " \t\n;&|<>()`'\"");
}

static void collect_secrets(const char *cmd, cmd_secrets *cs) {
    cs->n = 0;
    for (const char *eq = strchr(cmd, '='); eq && cs->n < CMD_MAX_SECRETS; eq = strchr(eq + 1, '=')) {
        const char *name = eq, *val;
        size_t vlen = assigned_value(eq, &val);
        char probe[256];
        while (name > cmd && (isalnum((unsigned char)name[-1]) || name[-1] == '_' || name[-1] == '-'))
            name--;
        if (name == eq || vlen < 3 || (size_t)(eq - name) + vlen + 2 > sizeof probe) continue;
        snprintf(probe, sizeof probe, "%.*s=%.*s", (int)(eq - name), name, (int)vlen, val);
        {
            char before[256];
            memcpy(before, probe, sizeof before);
            tb_ini_redact_msg(probe, sizeof probe);
            if (strcmp(before, probe) == 0) continue; /* not a secret by the rules */
        }
        cs->v[cs->n] = xmalloc(vlen + 1);
        memcpy(cs->v[cs->n], val, vlen);
        cs->v[cs->n++][vlen] = '\0';
    }
}

static void free_secrets(cmd_secrets *cs) {
    for (int i = 0; i < cs->n; i++)
        free(cs->v[i]);
    cs->n = 0;
}

/* s (malloc'd) with every copy of a secret of cs replaced by "***":
 * returns the new string and frees s. */
static char *hide_secrets(char *s, const cmd_secrets *cs) {
    for (int i = 0; cs && i < cs->n; i++) {
        size_t vl = strlen(cs->v[i]);
        char *hit;
        while ((hit = strstr(s, cs->v[i]))) {
            size_t head = (size_t)(hit - s), tail = strlen(hit + vl);
            char *r = xmalloc(head + 3 + tail + 1);
            memcpy(r, s, head);
            memcpy(r + head, "***", 3);
            memcpy(r + head + 3, hit + vl, tail + 1);
            free(s);
            s = r;
        }
    }
    return s;
}

/* A command's output as it comes, cut into lines for the observer. */
typedef struct echo_state {
    const tb_campaign_observer *obs;
    const cmd_secrets *secrets; /* the command's own secret values, hidden in its output */
    const char *what, *config;
    char pending[512]; /* a partial line; a longer one is passed on in pieces */
    size_t plen;
} echo_state;

/* Passes one line of a command's output on, its secrets redacted. */
static void echo_line(echo_state *es) {
    char *r = hide_secrets(redacted(es->pending, es->plen), es->secrets);
    if (es->obs && es->obs->step_output) es->obs->step_output(es->obs->arg, es->what, es->config, r);
    free(r);
    es->plen = 0;
}

/* tb_spawn_opts.on_output: complete lines of chunk go on; a partial one
 * waits for the next chunk. */
static void echo_chunk(void *arg, const char *chunk, size_t n) {
    echo_state *es = arg;
    for (size_t i = 0; i < n; i++) {
        if (chunk[i] == '\n' || es->plen + 1 >= sizeof es->pending) {
            echo_line(es);
            if (chunk[i] == '\n') continue;
        }
        es->pending[es->plen++] = (unsigned char)chunk[i] < 0x20 && chunk[i] != '\t' ? '?' : chunk[i];
    }
}

/* How the command ended, for messages: "exit status 3", "killed by signal
 * 15 (Terminated)". */
static void describe(const tb_spawn_result *r, char *how, size_t len) {
    if (r->exited && r->exit_status == 127)
        snprintf(how, len, "exit status 127 (command not found?)");
    else if (r->exited)
        snprintf(how, len, "exit status %d", r->exit_status);
    else if (r->signal)
        snprintf(how, len, "killed by signal %d (%s)", r->signal, strsignal(r->signal));
    else
        snprintf(how, len, "lost (waitpid failed)");
}

/* Runs one apply or revert step: cmd with /bin/sh -c in a process group of
 * its own, stdin /dev/null, stdout+stderr kept and passed on; when
 * interruptible and *stop becomes set, the group gets SIGTERM (then SIGKILL
 * 5 s later). Records it in the store. Returns 1 when it succeeded (exit
 * status 0), 0 when not (msg says why). */
static int step(tb_store *s, int64_t campaign_id, const tb_campaign_config *k, const char *what, const char *cmd,
                int interruptible, const tb_campaign_opts *o, char *msg) {
    const tb_campaign_observer *obs = o->observer;
    cmd_secrets secrets;
    echo_state es = {obs, &secrets, what, k->name, "", 0};
    tb_spawn_opts so = {.shell = cmd,
                        .output_max = MAX_OUTPUT,
                        .grace_us = 5000000,
                        .new_group = 1,
                        .stop = interruptible ? o->stop : NULL,
                        .on_output = echo_chunk,
                        .arg = &es};
    tb_spawn_result r;
    char how[TB_ERR_LEN], e[TB_ERR_LEN];
    int64_t t0 = tb_wall_us(), t1;
    int status = -1;
    char *shown = redacted(cmd, strlen(cmd)), *output; /* the command runs as given; shown and stored redacted */
    collect_secrets(cmd, &secrets);
    if (obs && obs->step_begun) obs->step_begun(obs->arg, what, k->name, shown);
    if (tb_spawn_run(&so, &r, e) != 0)
        tb_seterr(how, "could not start: %s", e);
    else
        describe(&r, how, sizeof how);
    if (es.plen > 0) echo_line(&es);
    if (r.exited) status = r.exit_status;
    t1 = tb_wall_us();
    output = xmalloc(r.output_len + 64);
    snprintf(output, r.output_len + 64, "%s%s", r.output, r.output_cut ? "\n[output cut at 64 KiB]" : "");
    free(r.output);
    r.output = hide_secrets(redacted(output, strlen(output)), &secrets);
    if (tb_store_campaign_step(s, campaign_id, k->name, what, shown, status, r.output, t0, t1, e) != 0)
        tb_log(TB_LOG_WARN, "%s", e);
    if (status != 0)
        tb_seterr(msg, "configuration '%s': %s command '%s' failed: %s", k->name, what, shown, how);
    else if (obs && obs->step_done)
        obs->step_done(obs->arg, what, k->name, (double)(t1 - t0) / 1e6);
    tb_spawn_result_free(&r);
    free_secrets(&secrets);
    free(output);
    free(shown);
    return status == 0;
}

/* ---- the campaign ---------------------------------------------------------------- */

/* Waits us unless *stop is set; 0, or -1 when stopped. */
static int settle(uint64_t us, volatile sig_atomic_t *stop) {
    uint64_t end = tb_now_us() + us;
    while (tb_now_us() < end) {
        if (stop && *stop) return -1;
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    return 0;
}

/* Writes the HTML comparison through a temporary file renamed into place. */
static void write_comparison_html(const tb_campaign_opts *o, tb_store *s, const int64_t *ids, int n, int64_t base) {
    size_t len = strlen(o->report_path) + 32;
    char *tmp = xmalloc(len), e[TB_ERR_LEN];
    FILE *f;
    snprintf(tmp, len, "%s.tmp.%ld", o->report_path, (long)getpid());
    f = fopen(tmp, "w");
    if (!f) {
        tb_log(TB_LOG_ERROR, "comparison report %s: %s", o->report_path, strerror(errno));
    } else {
        int rc = tb_compare_write(s, ids, n, base, TB_COMPARE_HTML, f, e);
        if (fclose(f) != 0 && rc == 0) {
            snprintf(e, sizeof e, "write %s: %s", o->report_path, strerror(errno));
            rc = -1;
        }
        if (rc == 0 && rename(tmp, o->report_path) != 0) {
            snprintf(e, sizeof e, "rename to %s: %s", o->report_path, strerror(errno));
            rc = -1;
        }
        if (rc != 0) {
            tb_log(TB_LOG_ERROR, "comparison report: %s", e);
            unlink(tmp);
        } else if (o->observer && o->observer->comparison_written) {
            o->observer->comparison_written(o->observer->arg, o->report_path);
        }
    }
    free(tmp);
}

/* The comparison of the finished runs against the baseline run: to the
 * observer, and as HTML to report_path. */
static void write_comparison(const tb_campaign_opts *o, const int64_t *ids, int n, int64_t base) {
    tb_store *s = NULL;
    char e[TB_ERR_LEN];
    if (tb_store_open_readonly(o->db_path, &s, e) != 0) {
        tb_log(TB_LOG_ERROR, "comparison: %s", e);
        return;
    }
    if (o->observer && o->observer->comparison) o->observer->comparison(o->observer->arg, s, ids, n, base);
    if (o->report_path) write_comparison_html(o, s, ids, n, base);
    tb_store_close(s);
}

/* The tile file configuration k runs: its own, else [sweep]'s, else the standard tile. */
static const char *tile_file_of(const tb_campaign *c, const tb_campaign_config *k) {
    return *k->tile_file ? k->tile_file : *c->tile_file ? c->tile_file : tb_tiledef_default_path();
}

/* out gets "FILE:LINE: [SECTION] key: " of the line that gave configuration
 * k its tile_file or meter (k's own, else [sweep]'s), "" for the default. */
static void where_key(const tb_campaign *c, const tb_campaign_config *k, const char *key, char *out, size_t len) {
    int tf = strcmp(key, "tile_file") == 0;
    int own = tf ? k->tile_file_line : k->meter_line, sweep = tf ? c->tile_file_line : c->meter_line;
    if (own)
        snprintf(out, len, "%.500s:%d: [config.%s] %s: ", c->path, own, k->name, key);
    else if (sweep)
        snprintf(out, len, "%.500s:%d: [sweep] %s: ", c->path, sweep, key);
    else
        out[0] = '\0';
}

/* Reads the tile file at path, parses it and checks it for the load
 * generator; sha256 gets the digest of the bytes parsed. NULL with err. */
static tb_tiledef *load_tile(const char *path, char sha256[65], char *err) {
    size_t len;
    char *text;
    tb_tiledef *def;
    if (!(text = tb_ini_read_file(path, "config", &len, err))) return NULL;
    sha256_hex(text, len, sha256);
    def = tb_tiledef_parse(path, text, len, err);
    free(text);
    if (def && tb_loadgen_check(def, err) != 0) {
        tb_tiledef_escape_err(err);
        tb_tiledef_free(def);
        def = NULL;
    }
    return def;
}

/* The sweep of configuration k, exactly as `tilebench run` builds it: its
 * own keys, else [sweep]'s. */
static void sweep_opts(const tb_campaign *c, const tb_campaign_config *k, const tb_campaign_opts *o,
                       const tb_tiledef *def, tb_run_opts *ro) {
    uint64_t *dst[TB_CAMP_N_STAGES] = {&ro->stages.ramp_up_us, &ro->stages.warm_up_us, &ro->stages.steady_us,
                                       &ro->stages.ramp_down_us, &ro->stages.idle_us};
    int n_meters = k->n_meters ? k->n_meters : c->n_meters;
    const char(*meters)[512] = k->n_meters ? k->meters : c->meters;
    memset(ro, 0, sizeof *ro);
    ro->def = def;
    ro->levels = *k->tiles ? k->levels : c->levels;
    ro->tile_spec = *k->tiles ? k->tiles : c->tiles;
    ro->stages = def->stages;
    for (int i = 0; i < TB_CAMP_N_STAGES; i++)
        if (c->stage_set & (1u << i)) *dst[i] = c->stage_us[i];
    if (c->phases > 0) ro->stages.phases = c->phases;
    ro->repeat = c->repeat;
    ro->threads = k->threads ? k->threads : c->threads;
    ro->db_path = o->db_path;
    for (int i = 0; i < n_meters; i++)
        ro->meter_uris[ro->n_meters++] = meters[i];
    if (ro->n_meters == 0 && !def->n_hosts) ro->meter_uris[ro->n_meters++] = "auto"; /* [host.NAME]: theirs */
    if (def->run.temperature) ro->temp_uris[ro->n_temps++] = def->run.temperature;   /* the inlet, as `run` reads it */
    if (def->run.ranging_us) { /* the tile file's ranging pass, as `run` reads it */
        ro->ranging_us = def->run.ranging_us;
        ro->ranging_key = "[run] ranging";
    }
    ro->observer = o->observer ? o->observer->run : NULL;
    ro->preset = "demo";
    ro->stop = o->stop;
    ro->label = *k->label ? k->label : k->name;
    ro->campaign_config = k->name;
}

/* What the run of k stores of its configuration (settings_json's
 * campaign_config): the keys it gave itself (meters redacted), and the
 * digests of the tile file text it runs and of the campaign file. malloc'd. */
static char *config_json(const tb_campaign *c, const tb_campaign_config *k, const char *tile_sha256) {
    json_t *j = json_object(), *keys = json_object();
    char *text, shown[512];
    json_object_set_new(j, "name", json_string(k->name));
    if (k->tile_file_line) json_object_set_new(keys, "tile_file", json_string(k->tile_file));
    if (*k->tiles) json_object_set_new(keys, "tiles", json_string(k->tiles));
    if (k->n_meters) {
        json_t *m = json_array();
        for (int i = 0; i < k->n_meters; i++) {
            tb_redact_uri(k->meters[i], shown, sizeof shown);
            json_array_append_new(m, json_string(shown));
        }
        json_object_set_new(keys, "meter", m);
    }
    if (k->threads) json_object_set_new(keys, "threads", json_integer(k->threads));
    if (*k->label) json_object_set_new(keys, "label", json_string(k->label));
    json_object_set_new(j, "keys", keys);
    json_object_set_new(j, "tile_file_sha256", json_string(tile_sha256));
    json_object_set_new(j, "campaign_file_sha256", json_string(c->sha256));
    text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return text ? text : xstrdup("{}");
}

/* A report that cannot be written should stop the campaign now, not after it. */
static int check_report_path(const char *path, char *err) {
    int existed;
    FILE *rf;
    if (!path) return 0;
    existed = access(path, F_OK) == 0;
    if (!(rf = fopen(path, "a"))) {
        tb_seterr(err, "--report '%s': %s", path, strerror(errno));
        return -1;
    }
    fclose(rf);
    if (!existed) remove(path);
    return 0;
}

/* A file read before the first apply (the campaign file, a tile file) and
 * its content's digest when last looked at. */
typedef struct read_file {
    const char *path; /* the campaign's, or tb_tiledef_default_path() */
    char sha256[65];
} read_file;
#define MAX_READ_FILES (TB_CAMPAIGN_MAX_CONFIGS + 2)

/* The campaign in progress. */
typedef struct campaign_ctx {
    const tb_campaign *c;
    const tb_campaign_opts *o;
    tb_store *s;
    int64_t id;
    const char *status;
    int rc, n_done, base_done;
    int64_t run_ids[TB_CAMPAIGN_MAX_CONFIGS], base_run;
    char msg[TB_ERR_LEN];
    int n_files;
    read_file files[MAX_READ_FILES];
    int n_notes; /* the warnings of the run to come (an apply changed a file) */
    char *notes[MAX_READ_FILES];
} campaign_ctx;

static int stopped(const campaign_ctx *cc) { return cc->o->stop && *cc->o->stop; }

static void add_file(campaign_ctx *cc, const char *path, const char *sha256) {
    for (int i = 0; i < cc->n_files; i++)
        if (strcmp(cc->files[i].path, path) == 0) return;
    if (cc->n_files >= MAX_READ_FILES) return;
    cc->files[cc->n_files].path = path;
    snprintf(cc->files[cc->n_files++].sha256, 65, "%s", sha256);
}

/* A meter URI that does not parse is an error now, before any apply (one
 * that parses but does not answer is left to the run, as `run` does). */
static int check_meter(const char *uri, const char *where, char *err) {
    tb_meter *m = NULL;
    char e[TB_ERR_LEN];
    int r;
    if (strcmp(uri, "auto") == 0) return 0;
    r = tb_meter_open(uri, &m, e);
    tb_meter_close(m);
    if (r == 0 || r == TB_METER_EUNREACH) return 0;
    tb_seterr(err, "%s%s", where, e);
    return -1;
}

/* Before anything runs: each configuration's tile file read, parsed and
 * checked (its digest kept), and each meter URI it would open. 0, or -1 with
 * err naming the campaign file's section and key. */
static int check_configs(campaign_ctx *cc, char *err) {
    const tb_campaign *c = cc->c;
    char e[TB_ERR_LEN], where[700], sha[65];
    add_file(cc, c->path, c->sha256);
    for (int i = 0; i < c->n_configs; i++) {
        const tb_campaign_config *k = &c->configs[i];
        const char *tf = tile_file_of(c, k);
        tb_tiledef *def;
        where_key(c, k, "tile_file", where, sizeof where);
        if (!(def = load_tile(tf, sha, e))) {
            tb_seterr(err, "%s%s", where, e);
            return -1;
        }
        tb_tiledef_free(def);
        add_file(cc, tf, sha);
        where_key(c, k, "meter", where, sizeof where);
        for (int m = 0; m < (k->n_meters ? k->n_meters : c->n_meters); m++)
            if (check_meter(k->n_meters ? k->meters[m] : c->meters[m], where, err) != 0) return -1;
    }
    return 0;
}

/* After the apply or revert (what) of k: every file read before whose
 * content changed is told to the observer and becomes a warning; those of an
 * apply wait in cc->notes for k's run, those of a revert go to run_id (done). */
static void check_files(campaign_ctx *cc, const tb_campaign_config *k, const char *what, int64_t run_id) {
    const tb_campaign_observer *obs = cc->o->observer;
    const char *own = tile_file_of(cc->c, k);
    char sha[65], msg[1400], e[TB_ERR_LEN];
    for (int i = 0; i < cc->n_files; i++) {
        read_file *f = &cc->files[i];
        const char *then;
        sha256_file(f->path, sha);
        if (strcmp(sha, f->sha256) == 0) continue;
        if (f->path == cc->c->path)
            then = "the campaign file is not read again: the campaign goes on as it was read";
        else if (strcmp(f->path, own) == 0 && what[0] == 'a')
            then = "the run uses the new content";
        else
            then = "a configuration that uses it reads the new content before its run";
        snprintf(msg, sizeof msg, "%s%s' changed %s, read before it; %s",
                 what[0] == 'a' ? TB_EVENT_APPLY_CHANGED : TB_EVENT_REVERT_CHANGED, k->name, f->path, then);
        tb_ini_redact_msg(msg, sizeof msg);
        snprintf(f->sha256, sizeof f->sha256, "%s", sha);
        if (obs && obs->file_changed) obs->file_changed(obs->arg, k->name, f->path, msg);
        if (what[0] == 'a' && cc->n_notes < MAX_READ_FILES)
            cc->notes[cc->n_notes++] = xstrdup(msg);
        else if (what[0] != 'a' && run_id > 0 && tb_store_event(cc->s, run_id, "warning", msg, e) != 0)
            tb_log(TB_LOG_WARN, "%s", e);
    }
}

static void drop_notes(campaign_ctx *cc) {
    for (int i = 0; i < cc->n_notes; i++)
        free(cc->notes[i]);
    cc->n_notes = 0;
}

/* Ends the campaign with status and exit code rc; revert k first when given
 * (apply may have changed part of the system before failing). */
static void stop_campaign(campaign_ctx *cc, const char *status, int rc, const tb_campaign_config *k) {
    char e[TB_ERR_LEN];
    cc->status = status;
    cc->rc = rc;
    if (k && !step(cc->s, cc->id, k, "revert", k->revert, 0, cc->o, e)) tb_log(TB_LOG_WARN, "%s", e);
}

/* The sweep of k once applied: its tile file read again (the apply may have
 * changed it), then the run. A tile file that no longer reads stops the
 * campaign. *run_id: the stored run, or -1. */
static void run_sweep(campaign_ctx *cc, const tb_campaign_config *k, int64_t *run_id) {
    const tb_campaign_observer *obs = cc->o->observer;
    tb_run_opts ro;
    tb_tiledef *def;
    char e[TB_ERR_LEN], sha[65], *cj;
    int r;
    if (!(def = load_tile(tile_file_of(cc->c, k), sha, e))) {
        tb_seterr(cc->msg, "configuration '%s': tile file after apply: %s", k->name, e);
        cc->status = TB_RUN_ABORTED;
        cc->rc = TB_EXIT_ABORTED;
        return;
    }
    sweep_opts(cc->c, k, cc->o, def, &ro);
    ro.campaign_id = cc->id;
    ro.campaign_json = cj = config_json(cc->c, k, sha);
    ro.n_notes = cc->n_notes;
    ro.notes = (const char *const *)cc->notes;
    r = tb_coordinator_run(&ro, run_id, e);
    if (r != TB_EXIT_OK) {
        tb_seterr(cc->msg, "configuration '%s': run %lld: %s", k->name, (long long)*run_id, e);
        cc->status = stopped(cc) ? TB_RUN_INTERRUPTED : TB_RUN_ABORTED;
        cc->rc = r == TB_EXIT_USAGE && cc->n_done == 0 ? TB_EXIT_USAGE : TB_EXIT_ABORTED;
    } else {
        if (obs && obs->run_complete) obs->run_complete(obs->arg, k->name, *run_id);
        cc->run_ids[cc->n_done++] = *run_id;
        if (strcmp(k->name, cc->c->baseline) == 0) {
            cc->base_done = 1;
            cc->base_run = *run_id;
        }
    }
    free(cj);
    tb_tiledef_free(def);
}

/* Configuration k: apply, settle, the sweep, revert (always; a failed
 * revert leaves the SUT in an unknown state: the campaign stops). */
static void run_config(campaign_ctx *cc, const tb_campaign_config *k) {
    const tb_campaign_observer *obs = cc->o->observer;
    int64_t run_id = -1;
    char e[TB_ERR_LEN];
    if (!step(cc->s, cc->id, k, "apply", k->apply, 1, cc->o, cc->msg)) {
        stop_campaign(cc, stopped(cc) ? TB_RUN_INTERRUPTED : TB_RUN_ABORTED, TB_EXIT_ABORTED, k);
        return;
    }
    check_files(cc, k, "apply", -1);
    if (cc->c->settle_us > 0 && obs && obs->settling) obs->settling(obs->arg, cc->c->settle_us);
    if (cc->c->settle_us > 0 && settle(cc->c->settle_us, cc->o->stop) != 0) {
        snprintf(cc->msg, sizeof cc->msg, "interrupted while settling after applying configuration '%s'", k->name);
        drop_notes(cc);
        stop_campaign(cc, TB_RUN_INTERRUPTED, TB_EXIT_ABORTED, k);
        return;
    }
    run_sweep(cc, k, &run_id);
    drop_notes(cc);
    if (!step(cc->s, cc->id, k, "revert", k->revert, 0, cc->o, e)) {
        if (cc->rc == TB_EXIT_OK) {
            snprintf(cc->msg, sizeof cc->msg, "%s", e);
            stop_campaign(cc, TB_RUN_ABORTED, TB_EXIT_ABORTED, NULL);
        } else {
            tb_log(TB_LOG_WARN, "%s", e);
        }
    }
    check_files(cc, k, "revert", run_id);
}

/* The stored campaign row, once the sweep and the report path are known good. */
static int begin_campaign(campaign_ctx *cc, char *err) {
    tb_campaign_info ci;
    if (tb_store_open(cc->o->db_path, &cc->s, err) != 0) return -1;
    ci.name = cc->c->name;
    ci.baseline = cc->c->baseline;
    ci.config_path = cc->c->path;
    ci.config_text = cc->c->text;
    if (tb_store_begin_campaign(cc->s, &ci, &cc->id, err) != 0) {
        tb_store_close(cc->s);
        return -1;
    }
    return 0;
}

int tb_campaign_run(const tb_campaign *c, const tb_campaign_opts *o, int64_t *campaign_id, char *err) {
    const tb_campaign_observer *obs = o->observer;
    campaign_ctx *cc = xcalloc(1, sizeof *cc);
    int order[TB_CAMPAIGN_MAX_CONFIGS], n_order = 0, rc;
    char e[TB_ERR_LEN];

    *campaign_id = -1;
    cc->c = c;
    cc->o = o;
    cc->status = TB_RUN_COMPLETE;
    cc->base_run = -1;
    cc->id = -1;
    if (check_configs(cc, err) != 0 || check_report_path(o->report_path, err) != 0 || begin_campaign(cc, err) != 0) {
        free(cc);
        return TB_EXIT_USAGE;
    }
    *campaign_id = cc->id;
    /* the baseline first: a campaign stopped later can still be compared */
    for (int i = 0; i < c->n_configs; i++)
        if (strcmp(c->configs[i].name, c->baseline) == 0) order[n_order++] = i;
    for (int i = 0; i < c->n_configs; i++)
        if (strcmp(c->configs[i].name, c->baseline) != 0) order[n_order++] = i;
    if (obs && obs->begun) obs->begun(obs->arg, cc->id, c, o->db_path);

    for (int j = 0; j < n_order && cc->rc == TB_EXIT_OK; j++) {
        const tb_campaign_config *k = &c->configs[order[j]];
        if (stopped(cc)) {
            snprintf(cc->msg, sizeof cc->msg, "interrupted before configuration '%s'", k->name);
            stop_campaign(cc, TB_RUN_INTERRUPTED, TB_EXIT_ABORTED, NULL);
            break;
        }
        if (obs && obs->config_begun)
            obs->config_begun(obs->arg, j + 1, n_order, k->name, strcmp(k->name, c->baseline) == 0);
        run_config(cc, k);
    }
    if (tb_store_finish_campaign(cc->s, cc->id, cc->status, cc->msg, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
    tb_store_close(cc->s);
    if (cc->base_done && cc->n_done >= 2)
        write_comparison(o, cc->run_ids, cc->n_done, cc->base_run);
    else if (cc->n_done > 0 && obs && obs->no_comparison)
        obs->no_comparison(obs->arg, cc->base_done);
    if (obs && obs->done) obs->done(obs->arg, cc->id, cc->status, cc->n_done, n_order);
    if (cc->rc != TB_EXIT_OK) tb_seterr(err, "%s", cc->msg);
    rc = cc->rc;
    free(cc);
    return rc;
}
