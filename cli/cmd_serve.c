/*
 * cmd_serve.c: `tilebench serve [--db FILE] [--listen 127.0.0.1:8080]`, the
 * results database over HTTP, read-only (results/serve.c). Runs until
 * SIGINT or SIGTERM, then stops cleanly: the signals are blocked before the
 * server's threads start and taken with sigwait, so no handler runs inside a
 * request.
 */
#include <getopt.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/listen.h"
#include "common/tb_common.h"
#include "results/serve.h"
#include "results/store.h"

#define DEFAULT_DB "tilebench-results.db"

static void usage(FILE *f) {
    fputs("usage: tilebench serve [--db FILE] [--listen ADDR:PORT] [--verbose]\n"
          "\n"
          "Publishes a results database over HTTP, read-only, until Ctrl-C (SIGINT) or SIGTERM:\n"
          "  /                 the run list: label, status, levels, saturation, peak score and PPKW,\n"
          "                    links, and a form to compare chosen runs\n"
          "  /runs/ID          the run's HTML report (the same page as `report --format html`)\n"
          "  /runs/ID.json     its JSON report; /runs/ID.csv its tidy CSV\n"
          "  /compare?runs=1,2,3&baseline=1   the runs normalized to the baseline per load level\n"
          "  /api/runs         the run list as JSON; /api/runs/ID the run's JSON report\n"
          "\n"
          "  --db FILE           results database (default " DEFAULT_DB "); opened read-only on\n"
          "                      every request, so a run that is writing shows its new load levels\n"
          "                      on reload; while it is missing or locked, pages answer 503\n"
          "  --listen ADDR:PORT  address to bind (default " TB_SERVE_DEFAULT_LISTEN "; [::1]:PORT for IPv6;\n"
          "                      PORT 0 = any free port, printed at start). There is no\n"
          "                      authentication: bind a non-loopback address only on a trusted network\n"
          "  -v, --verbose       log one line per request (method, path, status, bytes, ms) to stderr\n"
          "  -h, --help          show this help\n"
          "\n"
          "Exit status: 0 after a clean stop, 2 on a bad option, an address that does not\n"
          "resolve or a port already in use.\n",
          f);
}

int tb_cmd_serve(int argc, char **argv) {
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"listen", required_argument, NULL, 'l'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = DEFAULT_DB, *listen_arg = TB_SERVE_DEFAULT_LISTEN;
    char err[TB_ERR_LEN], host[TB_SERVE_HOST_LEN], addr[TB_SERVE_HOST_LEN + 16];
    tb_serve_opts o;
    tb_serve *sv = NULL;
    tb_store *probe = NULL;
    sigset_t stop_set;
    int c, port = 0, sig = 0;

    tb_cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'l': listen_arg = optarg; break;
        case 'v': tb_log_set_level(TB_LOG_DEBUG); break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        case ':': return tb_cli_usage_error("serve", "option '%s' needs a value", argv[optind - 1]);
        default: return tb_cli_usage_error("serve", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return tb_cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
    if (!*db) return tb_cli_usage_error("serve", "--db needs a file name%s", "");
    if (tb_listen_parse(listen_arg, host, sizeof host, &port, err) != 0)
        return tb_cli_usage_error("serve", "--listen: %s", err);

    /* Not fatal: the database may appear later (the first run is about to
     * start); requests say what is wrong until then. */
    if (tb_store_open_readonly(db, &probe, err) != 0)
        fprintf(stderr, "tilebench serve: warning: %s; pages answer 503 until it can be read\n", err);
    tb_store_close(probe);

    /* Blocked before the server's threads exist, so they inherit the mask
     * and only sigwait below receives the signals. */
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
    signal(SIGPIPE, SIG_IGN);

    o.db_path = db;
    o.host = host;
    o.port = port;
    if (tb_serve_start(&o, &sv, err) != 0) {
        fprintf(stderr, "tilebench serve: %s\n", err);
        return TB_EXIT_USAGE;
    }
    tb_serve_address(sv, addr, sizeof addr);
    printf("tilebench serve: http://%s/ (%s, read-only); Ctrl-C stops\n", addr, db);
    fflush(stdout);
    if (strcmp(host, "127.0.0.1") != 0 && strcmp(host, "::1") != 0 && strcmp(host, "localhost") != 0)
        fprintf(stderr,
                "tilebench serve: warning: listening on %s without authentication: anyone who can reach "
                "it can read these results\n",
                addr);

    while (sigwait(&stop_set, &sig) != 0) {
    }
    tb_log(TB_LOG_DEBUG, "serve: signal %d, stopping", sig);
    tb_serve_stop(sv);
    printf("tilebench serve: stopped\n");
    fflush(stdout);
    return TB_EXIT_OK;
}
