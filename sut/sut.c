/*
 * sut.c: the embedded SUT. `sut up` starts PostgreSQL, redis-server and
 * Dovecot from Debian's packages on 127.0.0.1 (or the address of `--listen`)
 * inside a run folder, waits until
 * each one answers, loads the per-tile OLTP data and writes the endpoints to
 * DIR/sut.ini.
 * `sut down` stops exactly the processes `up` started, and nothing else.
 *
 * Layout of the run folder DIR:
 *   pg/           PostgreSQL data directory (initdb; reused by the next `up`)
 *   pg.log        initdb and server output
 *   redis.conf    generated on every `up`
 *   redis.log     redis-server log; redis.pid its own pid file
 *   dovecot.conf  generated on every `up` (IMAP + LMTP, static passdb)
 *   dovecot.log   Dovecot's log (every process logs through the master)
 *   dovecot/      Dovecot's base_dir (sockets, master.pid) and state_dir
 *   mail/USER/    the maildirs, owned by "nobody"; emptied by every `up`
 *   mail.secret   the mail users' one password (mode 0600)
 *   web.tileN.log the reference web app of tile N (`tilebench webapp`)
 *   sut.state     the started processes: pid, start time and executable
 *   sut.ini       [sut] pg = <conninfo>, redis = HOST:PORT, imap = HOST:PORT,
 *                 lmtp = HOST:PORT, mail_user, mail_domain, mail_password_file,
 *                 web.tileN = http://HOST:PORT (HOST: 127.0.0.1 or --listen)
 *   pg/tilebench_hba.conf  the client authentication, generated on every `up`
 *
 * The pieces: sut/supervisor.c starts, recognises and stops the processes;
 * sut/tools.c finds the programs; sut/postgres.c, sut/redis.c,
 * sut/dovecot.c and sut/webapps.c start one kind of server each;
 * sut/state.c keeps DIR/sut.state. This file orchestrates up, down and
 * status.
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "sut/sut.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sut/oltp_load.h"
#include "sut/sut_internal.h"
#include "sut/tools.h"

static int write_ini(const char *dir, const tb_sut_endpoints *ep, int tiles, char *err) {
    char path[PATH_MAX], tmp[PATH_MAX], when[32];
    FILE *f;
    if (sut_path_join(path, sizeof path, dir, "sut.ini") != 0 ||
        sut_path_join(tmp, sizeof tmp, dir, "sut.ini.tmp") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    tb_format_wall(tb_wall_us(), when, sizeof when);
    f = fopen(tmp, "w");
    if (!f) {
        tb_seterr(err, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f,
            "; Endpoints of the embedded SUT, written by `tilebench sut up` (tilebench %s) at %s.\n"
            "; Servers run from %s; stop them with: tilebench sut down --dir %s\n"
            "; OLTP data: schemas tile1 to tile%d in database " SUT_PG_DB
            " (search_path is not part of pg; each tile uses its own schema).\n"
            "; Mail: Dovecot IMAP, and LMTP delivery straight into it (no MTA in front).\n"
            "; Users are mail_user with %%t = tile, %%u = user (1-based), any number of them;\n"
            "; the password is in mail_password_file, so this text (which a run stores) holds none.\n"
            "; This section can be copied into a tile config to target these servers.\n"
            "[sut]\n"
            "pg = %s\n"
            "redis = %s:%d\n"
            "imap = %s:%d\n"
            "lmtp = %s:%d\n"
            "mail_user = %s\n"
            "mail_domain = %s\n"
            "mail_password_file = %s/mail.secret\n",
            TB_VERSION, when, dir, dir, tiles, tb_ep_str(ep->pg_conninfo), tb_ep_str(ep->redis_host), ep->redis_port,
            tb_ep_str(ep->imap_host), ep->imap_port, tb_ep_str(ep->lmtp_host), ep->lmtp_port, tb_ep_str(ep->mail_user),
            tb_ep_str(ep->mail_domain), dir);
    /* The reference web app: one process per tile. */
    if (ep->n_web_tile > 0)
        fprintf(f, "; Web: one reference app per tile, its data in schema web<N> of database " SUT_PG_WEB_DB "\n");
    for (int i = 0; i < ep->n_web_tile; i++)
        fprintf(f, "web.tile%d = %s\n", ep->web_tile[i].tile, ep->web_tile[i].url);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
#define SUT_MARKER ".tilebench-sut"

/*
 * Makes sure dir is ours to fill (and to empty: `up` empties DIR/mail and
 * rewrites the config files): an empty folder is claimed with a marker file;
 * a folder with the marker is ours; anything else is refused, so `--dir /var`
 * can never wipe /var/mail. 0, or -1 with err.
 */
static int claim_dir(const char *dir, char *err) {
    char marker[PATH_MAX];
    DIR *d;
    struct dirent *e;
    int empty = 1;
    FILE *f;
    if (sut_path_join(marker, sizeof marker, dir, SUT_MARKER) != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    if (access(marker, F_OK) == 0) return 0;
    d = opendir(dir);
    if (!d) {
        tb_seterr(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) empty = 0;
    closedir(d);
    if (!empty) {
        tb_seterr(err,
                  "%s is not empty and is not a tilebench SUT folder (no %s in it): choose a new or empty "
                  "folder, since `sut up` empties DIR/mail and rewrites its config files",
                  dir, SUT_MARKER);
        return -1;
    }
    f = fopen(marker, "w");
    if (!f || fputs("This folder belongs to `tilebench sut`: it may empty and rewrite what is in it.\n", f) < 0 ||
        fclose(f) != 0) {
        tb_seterr(err, "%s: %s", marker, strerror(errno));
        return -1;
    }
    return 0;
}

/* Everything `up` works with: the programs, the paths in the run folder, the
 * ports and the state of what it has started so far. */
typedef struct up_ctx {
    char pgbin[PATH_MAX], redisbin[PATH_MAX], dovecotbin[PATH_MAX];
    char dir[PATH_MAX], datadir[PATH_MAX], sockdir[PATH_MAX], dcbase[PATH_MAX];
    char pglog[PATH_MAX], redislog[PATH_MAX], dovecotlog[PATH_MAX];
    char password[64];
    char web_conninfo[192];
    int pg_port, redis_port, imap_port, lmtp_port;
    run_as ra;
    mail_owner mo;
    sut_state st;
} up_ctx;

static int check_options(const tb_sut_options *opt, char *err) {
    if (!opt || !opt->dir || !*opt->dir) {
        tb_seterr(err, "sut up: no run folder given");
        return TB_SUT_EUSAGE;
    }
    if (opt->tiles < 1 || opt->tiles > SUT_MAX_TILES) {
        tb_seterr(err, "sut up: tiles %d: must be 1..%d", opt->tiles, SUT_MAX_TILES);
        return TB_SUT_EUSAGE;
    }
    if (opt->pg_port < 0 || opt->pg_port > 65535 || opt->redis_port < 0 || opt->redis_port > 65535) {
        tb_seterr(err, "sut up: ports must be 0..65535 (0 = any free port)");
        return TB_SUT_EUSAGE;
    }
    if (sut_set_host(opt->host ? opt->host : SUT_DEFAULT_HOST, err) != 0) return TB_SUT_EUSAGE;
    return 0;
}

/* Everything that can be checked before starting anything: the programs,
 * the accounts, and a run folder that is ours. */
static int preflight(const tb_sut_options *opt, up_ctx *c, char *err) {
    if (sut_find_pg_bindir(c->pgbin, sizeof c->pgbin, err) != 0) return TB_SUT_EUSAGE;
    if (sut_find_redis(c->redisbin, sizeof c->redisbin, err) != 0) return TB_SUT_EUSAGE;
    if (sut_find_dovecot(c->dovecotbin, sizeof c->dovecotbin, err) != 0) return TB_SUT_EUSAGE;
    if (geteuid() == 0 && sut_run_as_lookup(SUT_OS_PG_USER, &c->ra, err) != 0) return TB_SUT_EUSAGE;
    if (sut_mail_owner_lookup(&c->mo, err) != 0) return TB_SUT_EUSAGE;
    if (sut_mkdir_p(opt->dir, err) != 0) return TB_SUT_EUSAGE;
    if (!realpath(opt->dir, c->dir)) {
        tb_seterr(err, "%s: %s", opt->dir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (strlen(c->dir) > PATH_MAX - 64) {
        tb_seterr(err, "%s: path too long", c->dir);
        return TB_SUT_EUSAGE;
    }
    if (!sut_conf_safe_path(c->dir)) {
        tb_seterr(err,
                  "%s: the run folder's path may not hold spaces or any of \"\\#%%$={} "
                  "(it goes into dovecot.conf unquoted)",
                  c->dir);
        return TB_SUT_EUSAGE;
    }
    if (claim_dir(c->dir, err) != 0) return TB_SUT_EUSAGE;
    return 0;
}

/* Refuses to start over a SUT that still runs in dir; else removes the /tmp
 * folders the previous `up` made. */
static int check_not_running(const char *dir, char *err) {
    sut_state old;
    int rc = sut_read_state(dir, &old, err);
    if (rc < 0) return TB_SUT_EUSAGE;
    if (rc == 1) return 0;
    for (int i = 0; i < SVC_N + old.n_web; i++) {
        const svc *o = i < SVC_N ? &old.s[i] : &old.web[i - SVC_N];
        int a = sut_svc_alive(o);
        if (a == ALIVE_OURS || a == ALIVE_UNKNOWN) {
            char name[32];
            if (i < SVC_N)
                sut_copy_str(name, sizeof name, sut_svc_names[i]);
            else
                snprintf(name, sizeof name, "web.tile%d", i - SVC_N + 1);
            tb_seterr(err, "a SUT is already running in %s (%s pid %ld); stop it with `tilebench sut down --dir %s`",
                      dir, name, (long)o->pid, dir);
            sut_state_free(&old);
            return TB_SUT_EUSAGE;
        }
    }
    sut_remove_sockdir(old.sockdir, old.s[SVC_PG].port);
    sut_remove_dovecot_base(old.dovecot_base);
    sut_state_free(&old);
    return 0;
}

static int pick_ports(const tb_sut_options *opt, up_ctx *c, char *err) {
    static const char *const port_names[4] = {"postgresql", "redis", "imap", "lmtp"};
    int ports_in[4] = {opt->pg_port, opt->redis_port, 0, 0}, ports[4]; /* 0: any free port */
    if (sut_choose_ports(4, ports_in, port_names, ports, err) != 0) return TB_SUT_EUSAGE;
    c->pg_port = ports[0];
    c->redis_port = ports[1];
    c->imap_port = ports[2];
    c->lmtp_port = ports[3];
    c->st.lmtp_port = c->lmtp_port;
    return 0;
}

/* Dovecot's sockets live in base_dir and must fit in sun_path: DIR/dovecot/base,
 * or a /tmp folder when that path is too long. */
static int make_dovecot_base(up_ctx *c, char *err) {
    if (sut_mkdir_p(c->dcbase, err) != 0) return TB_SUT_EUSAGE;
    if (strlen(c->dcbase) + SUT_DOVECOT_SOCK_NAME_MAX > SUT_UNIX_PATH_MAX) {
        snprintf(c->dcbase, sizeof c->dcbase, "/tmp/tilebench-dovecot-XXXXXX");
        if (!mkdtemp(c->dcbase)) {
            tb_seterr(err, "mkdtemp %s: %s", c->dcbase, strerror(errno));
            return TB_SUT_EUSAGE;
        }
        chmod(c->dcbase, 0755);
        sut_copy_str(c->st.dovecot_base, sizeof c->st.dovecot_base, c->dcbase);
        return 0;
    }
    char sub[sizeof c->dcbase];
    if (sut_path_join(sub, sizeof sub, c->dcbase, "base") != 0) {
        tb_seterr(err, "%s/base: path too long", c->dcbase);
        return TB_SUT_EUSAGE;
    }
    memcpy(c->dcbase, sub, sizeof sub);
    return sut_mkdir_p(c->dcbase, err) != 0 ? TB_SUT_EUSAGE : 0;
}

/* The socket path DIR/pg/.s.PGSQL.PORT.lock must fit in sun_path: DIR/pg,
 * or a /tmp folder when that path is too long. */
static int make_pg_sockdir(up_ctx *c, char *err) {
    if (strlen(c->datadir) + strlen("/.s.PGSQL.65535.lock") <= SUT_UNIX_PATH_MAX) {
        sut_copy_str(c->sockdir, sizeof c->sockdir, c->datadir);
        return 0;
    }
    snprintf(c->sockdir, sizeof c->sockdir, "/tmp/tilebench-pg-XXXXXX");
    if (!mkdtemp(c->sockdir)) {
        tb_seterr(err, "mkdtemp %s: %s", c->sockdir, strerror(errno));
        return TB_SUT_EUSAGE;
    }
    if (c->ra.active && chown(c->sockdir, c->ra.uid, c->ra.gid) != 0) {
        tb_seterr(err, "chown %s: %s", c->sockdir, strerror(errno));
        rmdir(c->sockdir);
        return TB_SUT_EUSAGE;
    }
    sut_copy_str(c->st.sockdir, sizeof c->st.sockdir, c->sockdir);
    return 0;
}

static int make_paths(up_ctx *c, char *err) {
    const char *dir = c->dir;
    if (sut_path_join(c->datadir, sizeof c->datadir, dir, "pg") != 0 ||
        sut_path_join(c->pglog, sizeof c->pglog, dir, "pg.log") != 0 ||
        sut_path_join(c->redislog, sizeof c->redislog, dir, "redis.log") != 0 ||
        sut_path_join(c->dovecotlog, sizeof c->dovecotlog, dir, "dovecot.log") != 0 ||
        sut_path_join(c->dcbase, sizeof c->dcbase, dir, "dovecot") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return TB_SUT_EUSAGE;
    }
    int rc = make_dovecot_base(c, err);
    return rc != 0 ? rc : make_pg_sockdir(c, err);
}

/* Starts Redis and Dovecot (both start while initdb runs), then PostgreSQL,
 * recording each in sut.state as soon as it is started. */
static int start_servers(const tb_sut_options *opt, up_ctx *c, char *err) {
    const char *dir = c->dir;
    int rc = sut_redis_write_conf(dir, c->redis_port, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0) rc = sut_redis_start(c->redisbin, dir, c->redis_port, c->redislog, &c->st.s[SVC_REDIS], err);
    if (rc == 0) rc = sut_write_state(dir, &c->st, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = sut_mail_password_new(c->password, sizeof c->password, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = sut_mail_secret_write(dir, c->password, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0) rc = sut_mail_dir_reset(dir, &c->mo, err) != 0 ? TB_SUT_EUSAGE : 0;
    if (rc == 0)
        rc = sut_dovecot_write_conf(dir, c->dcbase, c->imap_port, c->lmtp_port, c->password, &c->mo, err) != 0
                 ? TB_SUT_EUSAGE
                 : 0;
    if (rc == 0) rc = sut_dovecot_start(c->dovecotbin, dir, c->imap_port, c->dovecotlog, &c->st.s[SVC_DOVECOT], err);
    if (rc == 0) rc = sut_write_state(dir, &c->st, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = sut_pg_initdb(c->pgbin, c->datadir, c->pglog, &c->ra, err);
    if (rc == 0)
        rc = sut_pg_start(c->pgbin, c->datadir, c->sockdir, c->pg_port, opt->tiles, c->pglog, &c->ra, &c->st.s[SVC_PG],
                          err);
    if (rc == 0) rc = sut_write_state(dir, &c->st, err) != 0 ? TB_SUT_ESTART : 0;
    return rc;
}

/* Waits until every server answers, then creates the two databases. */
static int wait_servers(up_ctx *c, char *err) {
    uint64_t deadline = tb_now_us() + SUT_START_TIMEOUT_US;
    int rc = sut_pg_wait(&c->st.s[SVC_PG], c->pglog, deadline, err);
    if (rc == 0) rc = sut_redis_wait(&c->st.s[SVC_REDIS], c->redislog, deadline, err);
    if (rc == 0) rc = sut_dovecot_wait(&c->st.s[SVC_DOVECOT], c->lmtp_port, c->dovecotlog, deadline, err);
    if (rc == 0) rc = sut_pg_create_db(c->pg_port, SUT_PG_DB, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc == 0) rc = sut_pg_create_db(c->pg_port, SUT_PG_WEB_DB, err) != 0 ? TB_SUT_ESTART : 0;
    return rc;
}

#define SUT_PG_CONNINFO "host=%s port=%d dbname=" SUT_PG_DB " user=" SUT_PG_USER

static void fill_endpoints(const up_ctx *c, tb_sut_endpoints *ep) {
    char conninfo[sizeof SUT_PG_CONNINFO + 16 + 12]; /* %s: an IPv4 address; %d: at most 11 bytes */
    snprintf(conninfo, sizeof conninfo, SUT_PG_CONNINFO, sut_host(), c->pg_port);
    tb_endpoints_set(&ep->pg_conninfo, conninfo);
    tb_endpoints_set(&ep->redis_host, sut_host());
    ep->redis_port = c->redis_port;
    tb_endpoints_set(&ep->imap_host, sut_host());
    ep->imap_port = c->imap_port;
    tb_endpoints_set(&ep->lmtp_host, sut_host());
    ep->lmtp_port = c->lmtp_port;
    tb_endpoints_set(&ep->mail_user, SUT_MAIL_USER_PATTERN);
    tb_endpoints_set(&ep->mail_domain, SUT_MAIL_DOMAIN);
    tb_endpoints_set(&ep->mail_password, c->password);
}

/* The OLTP data of every tile (schemas tile<N>). */
static int load_oltp_data(const tb_sut_options *opt, const tb_sut_endpoints *ep, char *err) {
    for (int i = 1; i <= opt->tiles; i++) {
        uint64_t t0 = tb_now_us();
        if (sut_interrupted(opt, err)) return TB_SUT_EINTR;
        if (tb_oltp_load(ep->pg_conninfo, i, err) != 0) return TB_SUT_ESTART;
        tb_log(TB_LOG_DEBUG, "oltp data for tile %d loaded in %.2fs", i, (double)(tb_now_us() - t0) / 1e6);
    }
    return 0;
}

/* Failure part-way: stop what this call started, keep the logs. */
static void undo_up(up_ctx *c) {
    char e2[TB_ERR_LEN], path[PATH_MAX];
    if (sut_stop_all(&c->st, e2) != 0)
        tb_log(TB_LOG_WARN, "sut up cleanup: %s", e2);
    else if (sut_path_join(path, sizeof path, c->dir, "sut.state") == 0)
        unlink(path);
}

int tb_sut_up(const tb_sut_options *opt, tb_sut_endpoints *ep, char *err) {
    up_ctx *c;
    int rc;
    memset(ep, 0, sizeof *ep);
    if ((rc = check_options(opt, err)) != 0) return rc;
    c = xcalloc(1, sizeof *c);
    rc = preflight(opt, c, err);
    if (rc == 0) rc = check_not_running(c->dir, err);
    if (rc == 0 && c->ra.active && sut_check_traversable(c->dir, &c->ra, err) != 0) rc = TB_SUT_EUSAGE;
    sut_copy_str(c->st.host, sizeof c->st.host, sut_host());
    if (rc == 0) rc = pick_ports(opt, c, err);
    if (rc == 0) rc = make_paths(c, err);
    if (rc != 0) { /* nothing started yet */
        free(c);
        return rc;
    }
    rc = start_servers(opt, c, err);
    if (rc == 0) rc = wait_servers(c, err);
    snprintf(c->web_conninfo, sizeof c->web_conninfo, "host=%s port=%d dbname=" SUT_PG_WEB_DB " user=" SUT_PG_USER,
             sut_host(), c->pg_port);
    fill_endpoints(c, ep);
    if (rc == 0) rc = load_oltp_data(opt, ep, err);
    if (rc == 0) rc = sut_webapps_up(opt, c->dir, c->web_conninfo, &c->st, ep, err);
    if (rc == 0) rc = write_ini(c->dir, ep, opt->tiles, err) != 0 ? TB_SUT_ESTART : 0;
    if (rc != 0) {
        undo_up(c);
        tb_endpoints_free(ep);
    }
    sut_state_free(&c->st);
    free(c);
    return rc;
}

int tb_sut_down(const char *dir, char *err) {
    sut_state st;
    char path[PATH_MAX];
    int rc = sut_read_state(dir, &st, err);
    if (rc == 1) return 0; /* nothing was started here (or it is already down) */
    if (rc < 0) return -1;
    rc = sut_stop_all(&st, err);
    sut_state_free(&st);
    if (rc != 0) return -1;
    /* The endpoints are gone with the servers; data and logs stay for a look. */
    if (sut_path_join(path, sizeof path, dir, "sut.ini") == 0) unlink(path);
    if (sut_path_join(path, sizeof path, dir, "sut.state") == 0) unlink(path);
    return 0;
}

int tb_sut_status(const char *dir, FILE *f, char *err) {
    sut_state st;
    int rc = sut_read_state(dir, &st, err), down = 0, i;
    if (rc == 1) {
        tb_seterr(err, "no SUT in %s (no sut.state; start one with `tilebench sut up --dir %s`)", dir, dir);
        return -1;
    }
    if (rc < 0) return -1;
    /* The address up listened on; a state file from before --listen: loopback. */
    if (sut_set_host(st.host[0] ? st.host : SUT_DEFAULT_HOST, err) != 0) {
        sut_state_free(&st);
        return -1;
    }
    for (i = 0; i < SVC_N + st.n_web; i++) {
        const svc *s = i < SVC_N ? &st.s[i] : &st.web[i - SVC_N];
        const char *word = "down", *note = "";
        char log[PATH_MAX + 16], name[32];
        if (i < SVC_N)
            sut_copy_str(name, sizeof name, sut_svc_names[i]);
        else
            snprintf(name, sizeof name, "web.tile%d", i - SVC_N + 1);
        if (!s->present) {
            if (i >= SVC_N) continue; /* a tile without a web app (beyond the web tiles) */
            fprintf(f, "%-10s  down  (not started)\n", name);
            down++;
            continue;
        }
        if (i < SVC_N)
            snprintf(log, sizeof log, "%s/%s", dir,
                     i == SVC_PG      ? "pg.log"
                     : i == SVC_REDIS ? "redis.log"
                                      : "dovecot.log");
        else
            snprintf(log, sizeof log, "%s/%s.log", dir, name);
        switch (sut_svc_alive(s)) {
        case ALIVE_OURS: {
            if (i == SVC_PG      ? sut_pg_answers(s->port)
                : i == SVC_REDIS ? sut_redis_ping(s->port)
                : i >= SVC_N
                    ? sut_web_healthy(s->port)
                    : sut_mail_greets(s->port, "* OK") && (st.lmtp_port <= 0 || sut_mail_greets(st.lmtp_port, "220")))
                word = "up";
            else
                note = "  (running but not answering)";
            break;
        }
        case ALIVE_UNKNOWN: note = "  (cannot inspect the process)"; break;
        case ALIVE_REUSED: note = "  (exited; the pid now belongs to another process)"; break;
        default: note = "  (exited)"; break;
        }
        if (strcmp(word, "up") != 0) down++;
        fprintf(f, "%-10s  %-4s  pid %-7ld  %s:%-5d  log %s%s\n", name, word, (long)s->pid, sut_host(), s->port, log,
                note);
    }
    sut_state_free(&st);
    return down;
}
