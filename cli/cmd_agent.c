/*
 * cmd_agent.c: `tilebench agent`: a load generator on a client host that a
 * coordinator drives through the broker (agent/agent.h, docs/agents.md).
 * Prints what happens, one line each, to stderr.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "cli/commands.h"
#include "loadgen/loadgen.h"

static void usage(FILE *f) {
    fprintf(f, "usage: tilebench agent [--broker URI] [--name NAME] [--threads N]\n\n"
               "Runs a load generator on this host for coordinators that drive it through a\n"
               "broker (a Redis server of its own, not one the tiles load). It registers,\n"
               "heartbeats every second, and serves run after run, level after level, until\n"
               "SIGINT, SIGTERM or SIGHUP. When its coordinator stops renewing its lease for 5 s\n"
               "(killed, network cut) it stops every user at once.\n\n"
               "  --broker URI   redis://[USER:PASS@]HOST:PORT[/DB], or rediss://...[?ca=FILE]\n"
               "                 for TLS (through stunnel); or the TILEBENCH_BROKER\n"
               "                 environment variable, which keeps a password off the\n"
               "                 command line (and out of ps)\n"
               "  --name NAME    the agent's name (default: the host name): letters, digits,\n"
               "                 '.', '_', '-'; unique per broker\n"
               "  --threads N    load generator threads (default: online CPUs)\n"
               "  --help         this text\n\n"
               "TB_WORKER_NICE, TB_WORKER_SPIN_US and TB_WORKER_SCHED set this agent's worker\n"
               "threads as they do a run's (tilebench run --help); the run does not store them.\n"
               "docs/agents.md explains the broker, the protocol and a systemd unit.\n"
               "exit: 0 stopped by a signal, 2 usage error or the broker refused it, 3 failed\n");
}

static void say(void *arg, int level, const char *msg) {
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    (void)arg;
    localtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    fprintf(stderr, "%s agent: %s%s\n", ts,
            level == TB_LOG_ERROR  ? "error: "
            : level == TB_LOG_WARN ? "warning: "
                                   : "",
            msg);
}

int tb_cmd_agent(int argc, char **argv) {
    static const struct option longopts[] = {{"broker", required_argument, NULL, 'b'},
                                             {"name", required_argument, NULL, 'n'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    tb_agent_opts o;
    char err[TB_ERR_LEN];
    uint64_t v;
    int opt, rc;
    memset(&o, 0, sizeof o);
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b': o.broker_uri = optarg; break;
        case 'n': o.name = optarg; break;
        case 't':
            if (tb_parse_u64(optarg, &v, err) != 0 || v < 1 || v > 256) {
                fprintf(stderr, "tilebench agent: --threads: must be an integer 1..256\n");
                return TB_EXIT_USAGE;
            }
            o.threads = (int)v;
            break;
        case 'h': usage(stdout); return TB_EXIT_OK;
        default:
            fprintf(stderr, "tilebench agent: unknown or incomplete option '%s' (see tilebench agent --help)\n",
                    argv[optind - 1]);
            return TB_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tilebench agent: unexpected argument '%s' (see tilebench agent --help)\n", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (!o.broker_uri) o.broker_uri = getenv("TILEBENCH_BROKER");
    if (!o.broker_uri || !*o.broker_uri) {
        fprintf(stderr, "tilebench agent: no broker: give --broker redis://HOST:PORT or set TILEBENCH_BROKER\n");
        return TB_EXIT_USAGE;
    }
    if (tb_loadgen_env_check(err) != 0) { /* before it registers: a run would only fail later */
        fprintf(stderr, "tilebench agent: %s\n", err);
        return TB_EXIT_USAGE;
    }
    tb_cli_catch_signals();
    o.stop = tb_cli_stop_flag();
    o.say = say;
    rc = tb_agent_serve(&o, err);
    if (rc != 0) fprintf(stderr, "tilebench agent: %s\n", err);
    return rc;
}
