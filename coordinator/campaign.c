/*
 * campaign.c: parses a campaign file (inih) and runs it: for each SUT
 * configuration, apply command, the same sweep as `tilebench run` (through
 * tb_coordinator_run), revert command; then the comparison against the
 * baseline run (results/compare.h). See campaign.h for the file format.
 *
 * Commands run under /bin/sh -c in their own process group, so a Ctrl-C at
 * the terminal reaches tilebench (which then stops the run cleanly) but not a
 * revert command in progress; an apply in progress is sent SIGTERM instead.
 * Their combined stdout/stderr is echoed with a prefix and stored, with the
 * exit status, in campaign_steps.
 */
#include "coordinator/campaign.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loadgen/loadgen.h"
#include "results/compare.h"
#include "results/store.h"
#include "tiles/ini_text.h"
#include "tiles/tiledef.h"

#define MAX_OUTPUT (64 * 1024) /* output kept per command; the rest is echoed, not stored */

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
    snprintf(ps->err, sizeof ps->err, "%.200s:%d: [%.60s] %.40s: %.200s", ps->c->path, ps->in.line, section, key, why);
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
        if (!*val) return fail(ps, section, key, "must not be empty (leave it out for the standard tile)");
        if (strlen(val) + strlen(c->path) + 2 > sizeof c->tile_file) return fail(ps, section, key, "too long");
        if (val[0] == '/') snprintf(c->tile_file, sizeof c->tile_file, "%s", val);
        else {
            /* relative to the campaign file's folder, so the pair can move together */
            char *dup = xstrdup(c->path);
            snprintf(c->tile_file, sizeof c->tile_file, "%s/%s", dirname(dup), val);
            free(dup);
        }
    } else if (strcmp(key, "phases") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > 100) return fail(ps, section, key, "must be an integer 1..100");
        c->phases = (int)v;
    } else if (strcmp(key, "repeat") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > 100) return fail(ps, section, key, "must be an integer 1..100");
        c->repeat = (int)v;
    } else if (strcmp(key, "max_tiles") == 0) {
        if (tb_parse_u64(val, &v, e) != 0 || v < 1 || v > TB_MAX_LEVELS)
            return fail(ps, section, key, "must be an integer 1..256");
        c->max_tiles = (int)v;
    } else if (strcmp(key, "meter") == 0) {
        if (c->n_meters >= TB_MAX_METERS) return fail(ps, section, key, "too many meters (at most 16)");
        if (!*val || strlen(val) >= sizeof c->meters[0]) return fail(ps, section, key, "empty or too long");
        snprintf(c->meters[c->n_meters++], sizeof c->meters[0], "%s", val);
    } else {
        return fail(ps, section, key,
                    "unknown key (known: tiles, tile_file, ramp_up, warm_up, steady, ramp_down, idle, phases, repeat, "
                    "max_tiles, meter)");
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
        if (strcmp(key, "apply") == 0 || strcmp(key, "revert") == 0) {
            int apply = key[0] == 'a';
            if (!*val) return fail(ps, section, key, "empty command (use 'true' for nothing to do)");
            if (strlen(val) >= TB_CAMPAIGN_CMD_LEN) {
                snprintf(e, sizeof e, "command of %zu bytes, longer than the %d allowed (put a long command in a script)",
                         strlen(val), TB_CAMPAIGN_CMD_LEN - 1);
                return fail(ps, section, key, e);
            }
            snprintf(apply ? k->apply : k->revert, TB_CAMPAIGN_CMD_LEN, "%s", val);
            if (apply) k->has_apply = 1;
            else k->has_revert = 1;
        } else {
            return fail(ps, section, key, "unknown key (known: apply, revert)");
        }
        return 1;
    }
    return fail(ps, section, key, "unknown section (known: [campaign], [sweep], [config.NAME])");
}

static char *slurp(FILE *f, size_t *lenp) {
    size_t cap = 4096, len = 0, n;
    char *buf = xmalloc(cap);
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) buf = xrealloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    *lenp = len;
    return buf;
}

int tb_campaign_load(const char *path, tb_campaign *c, char *err) {
    parse_state *ps;
    struct stat sb;
    char *raw = NULL;
    size_t len;
    FILE *f;
    int rc;
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->tiles, sizeof c->tiles, "1..3");
    c->repeat = 1;
    c->max_tiles = 8;
    ps = xcalloc(1, sizeof *ps);
    ps->c = c;
    f = fopen(path, "r");
    if (!f) {
        tb_seterr(err, "campaign %s: %s", path, strerror(errno));
        free(ps);
        return -1;
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        free(ps);
        tb_seterr(err, "campaign %s: is a directory, not a campaign file", path);
        return -1;
    }
    raw = slurp(f, &len);
    fclose(f);
    c->text = tb_ini_redact(raw, len, NULL); /* stored with the campaign: no secrets */
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
        if (ps->failed) tb_seterr(err, "%s", ps->err);
        else if (ps->in.bad_line) tb_seterr(err, "%s", ps->in.bad);
        else tb_seterr(err, "%s: cannot parse (inih error %d)", path, rc);
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
    {
        char e[TB_ERR_LEN];
        if (tb_levels_parse(c->tiles, c->max_tiles, &c->levels, e) != 0) {
            tb_seterr(err, "%s: [sweep] tiles: %s", path, e);
            goto fail;
        }
    }
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

/* The outcome of one command, for messages: "exit status 3", "killed by
 * signal 15", "could not start". */
typedef struct cmd_result {
    int exit_status; /* -1 when it did not exit normally */
    char how[64];
    char *output;    /* malloc'd, NUL-terminated, at most MAX_OUTPUT bytes (then a note) */
} cmd_result;

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

/* Prints one line of a command's output with a prefix, its secrets redacted. */
static void echo_line(const char *prefix, const char *line, size_t n) {
    char *r = redacted(line, n);
    printf("  %s %s\n", prefix, r);
    free(r);
}

/* Echoes complete lines of buf[0..n) with a prefix; keeps a partial line in
 * *pending for the next call. */
static void echo_lines(const char *prefix, const char *buf, size_t n, char *pending, size_t *plen, size_t pcap) {
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n' || *plen + 1 >= pcap) {
            echo_line(prefix, pending, *plen);
            *plen = 0;
            if (buf[i] == '\n') continue;
        }
        pending[(*plen)++] = (unsigned char)buf[i] < 0x20 && buf[i] != '\t' ? '?' : buf[i];
    }
    fflush(stdout);
}

/*
 * Runs cmd with /bin/sh -c in a new process group, stdin /dev/null,
 * stdout+stderr captured. When interruptible and *stop becomes set, the group
 * gets SIGTERM (then SIGKILL 5 s later). Always waits for the shell. Returns
 * 0 when the command could be run (see r->exit_status), -1 with err when it
 * could not be started.
 */
static int run_command(const char *cmd, const char *prefix, int interruptible, volatile sig_atomic_t *stop,
                       cmd_result *r, char *err) {
    int pfd[2], status = 0, killed = 0, exited = 0;
    pid_t pid;
    size_t len = 0, cap = 4096, plen = 0;
    char pending[512];
    uint64_t kill_at = 0;
    memset(r, 0, sizeof *r);
    r->exit_status = -1;
    r->output = xmalloc(cap);
    r->output[0] = '\0';
    fflush(stdout);
    fflush(stderr);
    if (pipe(pfd) != 0) {
        tb_seterr(err, "pipe: %s", strerror(errno));
        snprintf(r->how, sizeof r->how, "could not start");
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        tb_seterr(err, "fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        snprintf(r->how, sizeof r->how, "could not start");
        return -1;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        struct sigaction sa;
        setpgid(0, 0);
        /* the parent's handlers do not belong in the command */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGPIPE, &sa, NULL);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever runs first */
    close(pfd[1]);
    fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
    for (;;) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        int pr = poll(&p, 1, 200);
        if (pr > 0) {
            char buf[4096];
            ssize_t n = read(pfd[0], buf, sizeof buf);
            if (n > 0) {
                if (len + (size_t)n < MAX_OUTPUT) {
                    while (len + (size_t)n + 1 > cap) r->output = xrealloc(r->output, cap *= 2);
                    memcpy(r->output + len, buf, (size_t)n);
                    len += (size_t)n;
                    r->output[len] = '\0';
                }
                echo_lines(prefix, buf, (size_t)n, pending, &plen, sizeof pending);
                continue;
            }
            if (n == 0) break; /* every writer closed: the command and its children are done */
            if (errno != EAGAIN && errno != EINTR) break;
        }
        if (!exited) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) exited = 1;
        }
        if (exited) break; /* the shell is gone; a background child may hold the pipe: stop reading */
        if (interruptible && stop && *stop && !killed) {
            kill(-pid, SIGTERM);
            killed = 1;
            kill_at = tb_now_us() + 5000000;
        }
        if (killed == 1 && tb_now_us() >= kill_at) {
            kill(-pid, SIGKILL);
            killed = 2;
        }
    }
    close(pfd[0]);
    if (plen > 0) echo_line(prefix, pending, plen);
    while (!exited) {
        pid_t w = waitpid(pid, &status, 0);
        if (w == pid) exited = 1;
        else if (w < 0 && errno != EINTR) break;
    }
    if (len + 1 >= MAX_OUTPUT) {
        r->output = xrealloc(r->output, len + 64);
        snprintf(r->output + len, 64, "\n[output cut at %d KiB]", MAX_OUTPUT / 1024);
    }
    if (exited && WIFEXITED(status)) {
        r->exit_status = WEXITSTATUS(status);
        snprintf(r->how, sizeof r->how, "exit status %d", r->exit_status);
        if (r->exit_status == 127) snprintf(r->how, sizeof r->how, "exit status 127 (command not found?)");
    } else if (exited && WIFSIGNALED(status)) {
        snprintf(r->how, sizeof r->how, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
        snprintf(r->how, sizeof r->how, "lost (waitpid failed)");
    }
    fflush(stdout);
    return 0;
}

/* Runs one apply or revert step, echoes it, records it in the store. Returns
 * 1 when it succeeded (exit status 0), 0 when not (msg says why). */
static int step(tb_store *s, int64_t campaign_id, const tb_campaign_config *k, const char *what, const char *cmd,
                int interruptible, volatile sig_atomic_t *stop, char *msg) {
    cmd_result r;
    char prefix[96], e[TB_ERR_LEN];
    int64_t t0 = tb_wall_us(), t1;
    int ok;
    char *shown = redacted(cmd, strlen(cmd)), *output; /* the command runs as given; shown and stored redacted */
    snprintf(prefix, sizeof prefix, "[%s %s]", what, k->name);
    printf("%s %s: %s\n", what, k->name, shown);
    fflush(stdout);
    if (run_command(cmd, prefix, interruptible, stop, &r, e) != 0) {
        snprintf(r.how, sizeof r.how, "could not start: %s", e);
    }
    t1 = tb_wall_us();
    ok = r.exit_status == 0;
    output = redacted(r.output, strlen(r.output));
    if (tb_store_campaign_step(s, campaign_id, k->name, what, shown, r.exit_status, output, t0, t1, e) != 0)
        tb_log(TB_LOG_WARN, "%s", e);
    if (!ok)
        snprintf(msg, TB_ERR_LEN, "configuration '%s': %s command '%s' failed: %s", k->name, what, shown, r.how);
    else
        printf("%s %s: done (%.1fs)\n", what, k->name, (double)(t1 - t0) / 1e6);
    free(r.output);
    free(output);
    free(shown);
    return ok;
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

/* Writes the comparison of the finished runs against the baseline run:
 * text to stdout, HTML (through a temporary file renamed into place) to
 * report_path. */
static void write_comparison(const tb_campaign_opts *o, const int64_t *ids, int n, int64_t base) {
    tb_store *s = NULL;
    char e[TB_ERR_LEN];
    if (tb_store_open_readonly(o->db_path, &s, e) != 0) {
        tb_log(TB_LOG_ERROR, "comparison: %s", e);
        return;
    }
    printf("\n");
    if (tb_compare_write(s, ids, n, base, TB_COMPARE_TEXT, stdout, e) != 0) tb_log(TB_LOG_ERROR, "comparison: %s", e);
    if (o->report_path) {
        size_t len = strlen(o->report_path) + 32;
        char *tmp = xmalloc(len);
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
            } else {
                printf("comparison report: %s\n", o->report_path);
            }
        }
        free(tmp);
    }
    tb_store_close(s);
}

int tb_campaign_run(const tb_campaign *c, const tb_campaign_opts *o, int64_t *campaign_id, char *err) {
    tb_tiledef def;
    tb_run_opts ro;
    tb_store *s = NULL;
    tb_campaign_info ci;
    int order[TB_CAMPAIGN_MAX_CONFIGS], n_order = 0, rc = TB_EXIT_OK, n_done = 0, base_done = 0;
    int64_t run_ids[TB_CAMPAIGN_MAX_CONFIGS], base_run = -1;
    const char *status = TB_RUN_COMPLETE;
    char msg[TB_ERR_LEN] = "", e[TB_ERR_LEN];
    const char *tile_file = *c->tile_file ? c->tile_file : tb_tiledef_default_path();

    *campaign_id = -1;
    /* The sweep, exactly as `tilebench run` builds it. */
    if (tb_tiledef_load(tile_file, &def, err) != 0) return TB_EXIT_USAGE;
    memset(&ro, 0, sizeof ro);
    ro.def = &def;
    ro.levels = c->levels;
    ro.tile_spec = c->tiles;
    ro.stages = def.stages;
    {
        uint64_t *dst[TB_CAMP_N_STAGES] = {&ro.stages.ramp_up_us, &ro.stages.warm_up_us, &ro.stages.steady_us,
                                           &ro.stages.ramp_down_us, &ro.stages.idle_us};
        for (int i = 0; i < TB_CAMP_N_STAGES; i++)
            if (c->stage_set & (1u << i)) *dst[i] = c->stage_us[i];
    }
    if (c->phases > 0) ro.stages.phases = c->phases;
    ro.repeat = c->repeat;
    ro.db_path = o->db_path;
    for (int i = 0; i < c->n_meters; i++) ro.meter_uris[ro.n_meters++] = c->meters[i];
    if (ro.n_meters == 0) ro.meter_uris[ro.n_meters++] = "auto";
    ro.quiet = o->quiet;
    ro.preset = "demo";
    ro.stop = o->stop;
    if (tb_loadgen_check(&def, err) != 0) {
        tb_tiledef_free(&def);
        return TB_EXIT_USAGE;
    }
    /* A report that cannot be written should stop the campaign now, not after it. */
    if (o->report_path) {
        int existed = access(o->report_path, F_OK) == 0;
        FILE *rf = fopen(o->report_path, "a");
        if (!rf) {
            tb_seterr(err, "--report '%s': %s", o->report_path, strerror(errno));
            tb_tiledef_free(&def);
            return TB_EXIT_USAGE;
        }
        fclose(rf);
        if (!existed) remove(o->report_path);
    }
    if (tb_store_open(o->db_path, &s, err) != 0) {
        tb_tiledef_free(&def);
        return TB_EXIT_USAGE;
    }
    ci.name = c->name;
    ci.baseline = c->baseline;
    ci.config_path = c->path;
    ci.config_text = c->text;
    if (tb_store_begin_campaign(s, &ci, campaign_id, err) != 0) {
        tb_store_close(s);
        tb_tiledef_free(&def);
        return TB_EXIT_USAGE;
    }
    ro.campaign_id = *campaign_id;

    /* the baseline first: a campaign stopped later can still be compared */
    for (int i = 0; i < c->n_configs; i++)
        if (strcmp(c->configs[i].name, c->baseline) == 0) order[n_order++] = i;
    for (int i = 0; i < c->n_configs; i++)
        if (strcmp(c->configs[i].name, c->baseline) != 0) order[n_order++] = i;
    printf("campaign %lld '%s': %d configurations (baseline %s), tiles %s, results in %s\n", (long long)*campaign_id,
           c->name, c->n_configs, c->baseline, c->tiles, o->db_path);

    for (int j = 0; j < n_order; j++) {
        const tb_campaign_config *k = &c->configs[order[j]];
        int64_t run_id = -1;
        int r, applied_ok;
        if (o->stop && *o->stop) {
            status = TB_RUN_INTERRUPTED;
            snprintf(msg, sizeof msg, "interrupted before configuration '%s'", k->name);
            rc = TB_EXIT_ABORTED;
            break;
        }
        printf("\n=== configuration %d/%d: %s%s ===\n", j + 1, n_order, k->name,
               strcmp(k->name, c->baseline) == 0 ? " (baseline)" : "");
        fflush(stdout);
        applied_ok = step(s, *campaign_id, k, "apply", k->apply, 1, o->stop, msg);
        if (!applied_ok) {
            /* apply may have changed part of the system before failing: revert anyway */
            status = o->stop && *o->stop ? TB_RUN_INTERRUPTED : TB_RUN_ABORTED;
            rc = TB_EXIT_ABORTED;
            if (!step(s, *campaign_id, k, "revert", k->revert, 0, o->stop, e)) tb_log(TB_LOG_WARN, "%s", e);
            break;
        }
        if (c->settle_us > 0 && !o->quiet) printf("settling %.1fs\n", (double)c->settle_us / 1e6);
        if (c->settle_us > 0 && settle(c->settle_us, o->stop) != 0) {
            status = TB_RUN_INTERRUPTED;
            snprintf(msg, sizeof msg, "interrupted while settling after applying configuration '%s'", k->name);
            rc = TB_EXIT_ABORTED;
            if (!step(s, *campaign_id, k, "revert", k->revert, 0, o->stop, e)) tb_log(TB_LOG_WARN, "%s", e);
            break;
        }
        ro.label = k->name;
        ro.campaign_config = k->name;
        r = tb_coordinator_run(&ro, &run_id, e);
        if (r != TB_EXIT_OK) {
            snprintf(msg, sizeof msg, "configuration '%s': run %lld: %s", k->name, (long long)run_id, e);
            status = o->stop && *o->stop ? TB_RUN_INTERRUPTED : TB_RUN_ABORTED;
            rc = r == TB_EXIT_USAGE && n_done == 0 ? TB_EXIT_USAGE : TB_EXIT_ABORTED;
        } else {
            printf("configuration %s: run %lld complete\n", k->name, (long long)run_id);
            run_ids[n_done++] = run_id;
            if (strcmp(k->name, c->baseline) == 0) {
                base_done = 1;
                base_run = run_id;
            }
        }
        /* revert always; a failed revert leaves the SUT in an unknown state: stop */
        if (!step(s, *campaign_id, k, "revert", k->revert, 0, o->stop, e)) {
            if (rc == TB_EXIT_OK) {
                snprintf(msg, sizeof msg, "%s", e);
                status = TB_RUN_ABORTED;
                rc = TB_EXIT_ABORTED;
            } else {
                tb_log(TB_LOG_WARN, "%s", e);
            }
        }
        if (rc != TB_EXIT_OK) break;
    }
    if (tb_store_finish_campaign(s, *campaign_id, status, msg, e) != 0) tb_log(TB_LOG_ERROR, "%s", e);
    tb_store_close(s);
    tb_tiledef_free(&def);
    if (base_done && n_done >= 2) {
        write_comparison(o, run_ids, n_done, base_run);
    } else if (n_done > 0) {
        printf("\nno comparison: %s\n",
               base_done ? "only the baseline run finished" : "the baseline run did not finish");
    }
    printf("campaign %lld %s: %d of %d configurations measured\n", (long long)*campaign_id, status, n_done, n_order);
    if (rc != TB_EXIT_OK) tb_seterr(err, "%s", msg);
    return rc;
}
