/*
 * cmd_sut.c: `tilebench sut up|down|status`, the embedded SUT on loopback
 * or on the address of `--listen` (sut/sut.h). `up` starts PostgreSQL, Redis
 * and Dovecot in a run folder, loads the OLTP data for N tiles and prints the
 * endpoints and the path of sut.ini;
 * `down` stops exactly the servers `up` started there; `status` prints one
 * line per service.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "sut/sut.h"
#include "sut/web_load.h"

/* In /tmp, not the current folder: PostgreSQL runs as user postgres, which
 * cannot enter /root or most home folders. */
#define SUT_DEFAULT_DIR   "/tmp/tilebench-sut"
#define SUT_DEFAULT_TILES 1

static void sut_usage(FILE *f) {
    fprintf(f,
            "usage: tilebench sut up|down|status [--tiles N] [--dir DIR] [--pg-port P] [--redis-port P]\n"
            "                                   [--web-users N] [--listen ADDR]\n"
            "\n"
            "The embedded system under test: PostgreSQL, Redis and Dovecot from Debian and\n"
            "one reference web app per tile, started on 127.0.0.1 (or --listen ADDR) in a\n"
            "run folder, for `tilebench run` to load.\n"
            "\n"
            "  up      initdb (first time), start postgres, redis-server and dovecot, wait\n"
            "          until each answers, load the OLTP data of tiles 1..N that are missing\n"
            "          (schemas tile1..tileN in database tilebench), empty the maildirs, load\n"
            "          the web data (schemas web1..webN) and start one reference web app per\n"
            "          tile, and write DIR/sut.ini with the endpoints ([sut] pg = <conninfo>,\n"
            "          redis = HOST:PORT, imap, lmtp, mail_user, mail_password_file,\n"
            "          web.tile1 = http://HOST:PORT, ...; HOST is 127.0.0.1 or ADDR).\n"
            "          DIR must be new, empty, or a folder an earlier `up` made.\n"
            "  down    stop the servers `up` started in DIR (only those pids), keep data and logs.\n"
            "  status  one line per service: name, up/down, pid, endpoint, log file; it asks\n"
            "          each server at the address `up` listened on, so run it where that\n"
            "          address is reachable (in the same network namespace).\n"
            "\n"
            "options:\n"
            "  --dir DIR         run folder (default: " SUT_DEFAULT_DIR ")\n"
            "  --tiles N         tiles to create OLTP data for (up only; default %d); `run` needs\n"
            "                    at least as many as its largest load level\n"
            "  --pg-port P       PostgreSQL port (up only; default 0 = any free port)\n"
            "  --redis-port P    Redis port (up only; default 0 = any free port)\n"
            "  --web-users N     concurrent web users per tile the web data is sized for:\n"
            "                    100 x N persons per tile (Olio's rule; up only; default %d)\n"
            "  --listen ADDR     IPv4 address of this host every server listens on, the\n"
            "                    readiness checks connect to and the endpoints name (up only;\n"
            "                    default 127.0.0.1), for load generators on other hosts.\n"
            "                    PostgreSQL then trusts every host of ADDR's subnets (pg_hba\n"
            "                    \"samenet\") and Redis has no password: use it on a closed\n"
            "                    benchmark network only.\n"
            "  -h, --help        this text\n"
            "\n"
            "When run as root, PostgreSQL runs as the user postgres, which must be able to\n"
            "enter DIR. Logs: DIR/pg.log, DIR/redis.log, DIR/dovecot.log, DIR/web.tileN.log.\n"
            "environment: TB_PG_BINDIR (folder with initdb and postgres; default: newest\n"
            "  /usr/lib/postgresql/*/bin), TB_REDIS_SERVER (path of redis-server).\n"
            "exit status: 0 ok; 2 usage or configuration error (bad option, bad or foreign\n"
            "  --listen address, port in use, server not installed); 3 a server failed to\n"
            "  start, or status/down found a service down or no SUT in DIR.\n",
            SUT_DEFAULT_TILES, TB_WEB_DEFAULT_USERS);
}

/* Parses an option value as an integer in [lo, hi]; errors name the option. */
static int parse_opt_int(const char *opt, const char *val, long lo, long hi, int *out) {
    char err[TB_ERR_LEN];
    uint64_t v;
    if (tb_parse_u64(val, &v, err) != 0) {
        fprintf(stderr, "tilebench sut: --%s: %s\n", opt, err);
        return -1;
    }
    if (v < (uint64_t)lo || v > (uint64_t)hi) {
        fprintf(stderr, "tilebench sut: --%s: '%s': must be between %ld and %ld\n", opt, val, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* --listen: a dotted-quad IPv4 address, checked here for the message; sut
 * up refuses wildcard and multicast addresses and ones no interface has. */
static int check_listen(const char *val) {
    struct in_addr a;
    if (inet_pton(AF_INET, val, &a) != 1) {
        fprintf(stderr, "tilebench sut: --listen: '%s': not an IPv4 address (dotted quad such as 198.18.0.2)\n", val);
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t up_interrupted;

static void on_up_signal(int sig) { up_interrupted = sig; }

static int sut_cmd_up(const tb_sut_options *opt) {
    char err[TB_ERR_LEN] = "", ini[2 * PATH_MAX + 16], abs[PATH_MAX], schemas[48];
    tb_sut_endpoints ep = {0};
    uint64_t t0 = tb_now_us();
    struct sigaction sa;
    int rc;

    /* Ctrl-C, SIGTERM or a closed terminal during the start must not leave
     * half-started servers behind: note the signal, finish starting (the
     * servers run in their own sessions, so they do not see it), then stop
     * everything and exit 3. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_up_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    printf("sut up: starting PostgreSQL, Redis and Dovecot in %s, OLTP and web data for %d tile%s...\n", opt->dir,
           opt->tiles, opt->tiles == 1 ? "" : "s");
    fflush(stdout);
    rc = tb_sut_up(opt, &ep, err);
    if (rc != 0) {
        fprintf(stderr, "tilebench sut up: %s\n", err);
        return rc == TB_SUT_EUSAGE ? TB_EXIT_USAGE : TB_EXIT_ABORTED;
    }
    if (up_interrupted) {
        fprintf(stderr, "tilebench sut up: interrupted by signal %d: stopping what was started\n", (int)up_interrupted);
        if (tb_sut_down(opt->dir, err) != 0) fprintf(stderr, "tilebench sut up: %s\n", err);
        tb_endpoints_free(&ep);
        return TB_EXIT_ABORTED;
    }
    if (opt->tiles == 1)
        snprintf(schemas, sizeof schemas, "schema tile1");
    else
        snprintf(schemas, sizeof schemas, "schemas tile1..tile%d", opt->tiles);
    /* Absolute, so it can be pasted from any folder. */
    if (opt->dir[0] != '/' && getcwd(abs, sizeof abs))
        snprintf(ini, sizeof ini, "%s/%s/sut.ini", abs, opt->dir);
    else
        snprintf(ini, sizeof ini, "%s/sut.ini", opt->dir);
    printf("sut up: ready in %.1fs\n"
           "  postgresql  %s\n"
           "  redis       %s:%d\n"
           "  oltp        %s\n"
           "  endpoints   %s\n",
           (double)(tb_now_us() - t0) / 1e6, tb_ep_str(ep.pg_conninfo), tb_ep_str(ep.redis_host), ep.redis_port,
           schemas, ini);
    for (int i = 0; i < ep.n_web_tile; i++)
        printf("  web.tile%-3d %s\n", ep.web_tile[i].tile, ep.web_tile[i].url);
    printf("stop with: tilebench sut down --dir %s\n", opt->dir);
    tb_endpoints_free(&ep);
    return TB_EXIT_OK;
}

static int sut_cmd_down(const char *dir) {
    char err[TB_ERR_LEN] = "";
    uint64_t t0 = tb_now_us();
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "tilebench sut down: %s: %s\n", dir, stat(dir, &sb) != 0 ? strerror(errno) : "not a folder");
        return TB_EXIT_USAGE;
    }
    if (tb_sut_down(dir, err) != 0) {
        fprintf(stderr, "tilebench sut down: %s\n", err);
        return TB_EXIT_ABORTED;
    }
    printf("sut down: stopped (%.1fs); data and logs kept in %s\n", (double)(tb_now_us() - t0) / 1e6, dir);
    return TB_EXIT_OK;
}

static int sut_cmd_status(const char *dir) {
    char err[TB_ERR_LEN] = "";
    int down = tb_sut_status(dir, stdout, err);
    if (down < 0) {
        fprintf(stderr, "tilebench sut status: %s\n", err);
        return TB_EXIT_ABORTED;
    }
    return down == 0 ? TB_EXIT_OK : TB_EXIT_ABORTED;
}

int tb_cmd_sut(int argc, char **argv) {
    static const struct option longopts[] = {
        {"tiles", required_argument, NULL, 't'},
        {"dir", required_argument, NULL, 'd'},
        {"pg-port", required_argument, NULL, 'p'},
        {"redis-port", required_argument, NULL, 'r'},
        {"web-users", required_argument, NULL, 'w'},
        {"listen", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tb_sut_options opt = {SUT_DEFAULT_DIR, SUT_DEFAULT_TILES, 0, 0, TB_WEB_DEFAULT_USERS, NULL, NULL};
    const char *up_only = NULL, *action;
    int c;
    opt.stop = &up_interrupted; /* a signal during the data load ends it early */

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (parse_opt_int("tiles", optarg, 1, 1000, &opt.tiles) != 0) return TB_EXIT_USAGE;
            up_only = "--tiles";
            break;
        case 'd':
            if (!*optarg) {
                fprintf(stderr, "tilebench sut: --dir: empty path\n");
                return TB_EXIT_USAGE;
            }
            opt.dir = optarg;
            break;
        case 'p':
            if (parse_opt_int("pg-port", optarg, 0, 65535, &opt.pg_port) != 0) return TB_EXIT_USAGE;
            up_only = "--pg-port";
            break;
        case 'r':
            if (parse_opt_int("redis-port", optarg, 0, 65535, &opt.redis_port) != 0) return TB_EXIT_USAGE;
            up_only = "--redis-port";
            break;
        case 'w':
            if (parse_opt_int("web-users", optarg, 1, TB_WEB_MAX_USERS, &opt.web_users) != 0) return TB_EXIT_USAGE;
            up_only = "--web-users";
            break;
        case 'l':
            if (check_listen(optarg) != 0) return TB_EXIT_USAGE;
            opt.host = optarg;
            up_only = "--listen";
            break;
        case 'h': sut_usage(stdout); return TB_EXIT_OK;
        case ':':
            fprintf(stderr, "tilebench sut: %s needs a value (see tilebench sut --help)\n", argv[optind - 1]);
            return TB_EXIT_USAGE;
        default:
            fprintf(stderr, "tilebench sut: unknown option '%s' (see tilebench sut --help)\n", argv[optind - 1]);
            return TB_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tilebench sut: missing action: up, down or status (see tilebench sut --help)\n");
        return TB_EXIT_USAGE;
    }
    if (optind + 1 < argc) {
        fprintf(stderr, "tilebench sut: unexpected argument '%s'\n", argv[optind + 1]);
        return TB_EXIT_USAGE;
    }
    action = argv[optind];
    if (strcmp(action, "up") == 0) return sut_cmd_up(&opt);
    if (strcmp(action, "down") != 0 && strcmp(action, "status") != 0) {
        fprintf(stderr, "tilebench sut: unknown action '%s' (use up, down or status)\n", action);
        return TB_EXIT_USAGE;
    }
    if (up_only) {
        fprintf(stderr, "tilebench sut %s: %s only applies to `sut up`\n", action, up_only);
        return TB_EXIT_USAGE;
    }
    return strcmp(action, "down") == 0 ? sut_cmd_down(opt.dir) : sut_cmd_status(opt.dir);
}
