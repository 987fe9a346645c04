/*
 * cmd_webapp.c: `tilebench webapp`, the reference web application of one tile
 * (sut/webapp/webapp.h). Hidden from the main help: the embedded SUT (`sut up`)
 * starts one per tile; it can also be run by hand against any PostgreSQL
 * database that holds schema web<N> and any Redis. Runs until SIGTERM or
 * SIGINT, then stops cleanly (exit 0).
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/commands.h"
#include "common/tb_common.h"
#include "sut/webapp/webapp.h"

static void webapp_usage(FILE *f) {
    fprintf(f,
            "usage: tilebench webapp --listen HOST:PORT --pg CONNINFO --tile N --redis HOST:PORT [--threads T]\n"
            "\n"
            "The reference web application (Olio-like social events) of one tile: HTTP/1.1\n"
            "on HOST:PORT (an IPv4 address), data in PostgreSQL schema web<N> (loaded by\n"
            "`tilebench sut up`), sessions and the home-page cache in Redis (keys web<N>:...).\n"
            "The HTTP contract is docs/webapp.md. `sut up` starts one per tile.\n"
            "\n"
            "options:\n"
            "  --listen HOST:PORT  address to serve on, e.g. 127.0.0.1:8080\n"
            "  --pg CONNINFO       libpq conninfo of the database holding schema web<N>\n"
            "  --tile N            tile number (>= 1)\n"
            "  --redis HOST:PORT   Redis server for sessions and the page cache\n"
            "  --threads T         HTTP worker threads, each with its own PostgreSQL and\n"
            "                      Redis connection (1..%d, default %d)\n"
            "  -h, --help          this text\n"
            "\n"
            "Runs until SIGTERM or SIGINT. exit status: 0 stopped by a signal; 2 usage error;\n"
            "3 could not start (database, schema, Redis or the listening address).\n",
            TB_WEBAPP_MAX_THREADS, TB_WEBAPP_DEFAULT_THREADS);
}

/* "HOST:PORT" into host (len bytes) and port 1..65535; -1 with a message. */
static int parse_hostport(const char *opt, const char *v, char *host, size_t len, int *port) {
    const char *colon = strrchr(v, ':');
    char err[TB_ERR_LEN];
    uint64_t p;
    if (!colon || colon == v || (size_t)(colon - v) >= len) {
        fprintf(stderr, "tilebench webapp: --%s '%s': expected HOST:PORT\n", opt, v);
        return -1;
    }
    if (tb_parse_u64(colon + 1, &p, err) != 0 || p < 1 || p > 65535) {
        fprintf(stderr, "tilebench webapp: --%s '%s': port must be 1..65535\n", opt, v);
        return -1;
    }
    memcpy(host, v, (size_t)(colon - v));
    host[colon - v] = '\0';
    *port = (int)p;
    return 0;
}

static int parse_int(const char *opt, const char *v, long lo, long hi, int *out) {
    char err[TB_ERR_LEN];
    uint64_t x;
    if (tb_parse_u64(v, &x, err) != 0 || x < (uint64_t)lo || x > (uint64_t)hi) {
        fprintf(stderr, "tilebench webapp: --%s '%s': must be an integer between %ld and %ld\n", opt, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int tb_cmd_webapp(int argc, char **argv) {
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"pg", required_argument, NULL, 'p'},
        {"tile", required_argument, NULL, 't'},
        {"redis", required_argument, NULL, 'r'},
        {"threads", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char host[64] = "", redis_host[128] = "", err[TB_ERR_LEN] = "";
    tb_webapp_config cfg;
    tb_webapp *app = NULL;
    sigset_t set;
    int c, sig = 0;

    memset(&cfg, 0, sizeof cfg);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            if (parse_hostport("listen", optarg, host, sizeof host, &cfg.port) != 0) return TB_EXIT_USAGE;
            break;
        case 'p': cfg.pg_conninfo = optarg; break;
        case 't':
            if (parse_int("tile", optarg, 1, 100000, &cfg.tile) != 0) return TB_EXIT_USAGE;
            break;
        case 'r':
            if (parse_hostport("redis", optarg, redis_host, sizeof redis_host, &cfg.redis_port) != 0)
                return TB_EXIT_USAGE;
            break;
        case 'T':
            if (parse_int("threads", optarg, 1, TB_WEBAPP_MAX_THREADS, &cfg.threads) != 0) return TB_EXIT_USAGE;
            break;
        case 'h': webapp_usage(stdout); return TB_EXIT_OK;
        case ':':
            fprintf(stderr, "tilebench webapp: %s needs a value (see tilebench webapp --help)\n", argv[optind - 1]);
            return TB_EXIT_USAGE;
        default:
            fprintf(stderr, "tilebench webapp: unknown option '%s' (see tilebench webapp --help)\n", argv[optind - 1]);
            return TB_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tilebench webapp: unexpected argument '%s'\n", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (!host[0] || !cfg.pg_conninfo || !cfg.tile || !redis_host[0]) {
        fprintf(stderr, "tilebench webapp: --listen, --pg, --tile and --redis are required (see tilebench webapp "
                        "--help)\n");
        return TB_EXIT_USAGE;
    }
    cfg.host = host;
    cfg.redis_host = redis_host;

    /* Blocked before the worker threads exist, so they inherit the mask and
     * only sigwait below sees the signals. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Every keep-alive connection is a descriptor: take all the kernel allows. */
    {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0) tb_log(TB_LOG_WARN, "webapp: cannot raise the open-file limit");
        }
    }

    if (tb_webapp_open(&cfg, &app, err) != 0) {
        fprintf(stderr, "tilebench webapp: %s\n", err);
        return TB_EXIT_ABORTED;
    }
    printf("webapp tile %d: serving http://%s:%d (schema web%d, redis %s:%d, %d threads)\n", cfg.tile, host, cfg.port,
           cfg.tile, redis_host, cfg.redis_port, cfg.threads ? cfg.threads : TB_WEBAPP_DEFAULT_THREADS);
    fflush(stdout);
    while (sigwait(&set, &sig) != 0) {
    }
    printf("webapp tile %d: signal %d, stopping after %llu requests\n", cfg.tile, sig,
           (unsigned long long)tb_webapp_requests(app));
    fflush(stdout);
    tb_webapp_close(app);
    return TB_EXIT_OK;
}
