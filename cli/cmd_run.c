/*
 * cmd_run.c: `tilebench run`: parses options into tb_run_opts, installs the
 * SIGINT/SIGTERM handler, and hands over to the coordinator with the console
 * (run_console.c) as its observer.
 */
#include <errno.h>
#include <getopt.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/remote.h"
#include "agent/wire.h"
#include "broker/broker.h"
#include "common/listen.h"
#include "cli/commands.h"
#include "cli/run_console.h"
#include "cli/run_metrics.h"
#include "coordinator/coordinator.h"
#include "loadgen/loadgen.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: tilebench run [options]\n\n"
            "Runs a sweep of load levels (tiles) against the SUT: active idle, then for each\n"
            "level ramp-up, warm-up, steady-state phases and ramp-down, sampling power at 1 Hz.\n"
            "With no [sut] section in the tile file, the embedded SUT (PostgreSQL, Redis,\n"
            "Dovecot, one reference web app per tile) is started on loopback and stopped\n"
            "at the end, also on SIGINT, SIGTERM, SIGHUP or failure.\n\n"
            "  --tiles SPEC        load levels: 3, 1..4, 1,2,4,8 or auto (default 1..3)\n"
            "  --max-tiles N       with --tiles auto: the most tiles to try (default 8)\n"
            "  --auto-step N       with --tiles auto: climb 1, 1+N, 1+2N, ... (default 1)\n"
            "  --auto-double       with --tiles auto: climb 1, 2, 4, 8, ...\n"
            "  --bisect            with --tiles auto: after the first failing level, bisect\n"
            "                      between it and the last passing one\n"
            "  --config FILE       tile definition file (default: the shipped standard tile,\n"
            "                      %s)\n"
            "  --db FILE           results database (default tilebench-results.db)\n"
            "  --label TEXT        a label for the run\n"
            "  --meter URI         power meter, repeatable, summed (default auto): wt310://H:P,\n"
            "                      wt210://H:P, yokogawa+serial:///dev/ttyUSB0?model=wt310,\n"
            "                      ptd://H:8888, ipmi://USER:PASS@H?method=dcmi|sensor,\n"
            "                      ipmi:local, rapl:, estimate:?idle=W&max=W, auto\n"
            "  --temperature URI   inlet temperature, sampled at 1 Hz, repeatable (up to 4;\n"
            "                      else [run] temperature): ptd+temp://H:8889, hwmon:NAME[/tempK],\n"
            "                      hwmon:/PATH, file:PATH (degrees C); a level under 20 C is\n"
            "                      invalid with --preset compliant, warned otherwise\n"
            "  --ramp-up DUR       override stage durations from the tile file; durations\n"
            "  --warm-up DUR       take unit suffixes: 500ms, 30s, 5m, 1h\n"
            "  --steady DUR\n"
            "  --ramp-down DUR\n"
            "  --phases N          steady-state phases per level\n"
            "  --idle DUR          active idle measurement before the sweep (0 = skip)\n"
            "  --ranging[=DUR]     a ranging pass at the start of each level's warm-up (no\n"
            "                      warm-up: at the end of ramp-up, every user started): the\n"
            "                      meters auto-range for DUR (default 10s) under the level's\n"
            "                      load, then get the smallest fixed V and A ranges that hold\n"
            "                      the peaks with 25%% headroom (wt310:, wt210:,\n"
            "                      yokogawa+serial:, ptd:; or [run] ranging = DUR)\n"
            "  --repeat N          run the sweep N times (default 1)\n"
            "  --preset NAME       demo (the tile file's stages) or compliant (VMmark-like:\n"
            "                      30m ramp-up, 3 x 40m phases, 4m active idle)\n"
            "  --report FILE       also write the report there (.html, .json, .csv, .hlog, else text)\n"
            "  --calibrate         run 1 tile and store each workload's throughput (and each\n"
            "                      [infra.NAME] operation's ops/hour) as the reference for\n"
            "                      this tile definition; later runs of the same definition\n"
            "                      normalize against it and say so (an operation that\n"
            "                      completed no op gets no reference, and a warning)\n"
            "  --interference      consolidation interference: before each load level, run\n"
            "                      each workload alone in its tiles (same users, same\n"
            "                      stages), then the whole tile; the report shows what each\n"
            "                      workload loses to its neighbours (default --tiles 1)\n"
            "  --telemetry SRC     SUT host telemetry (CPU util, frequency, C-states at 1 Hz):\n"
            "                      local, none, or a node_exporter URL such as\n"
            "                      http://HOST:9100/metrics (default: [sut] telemetry, else\n"
            "                      local when the SUT runs on this machine, else none)\n"
            "  --metrics ADDR:PORT serve live metrics for Prometheus at http://ADDR:PORT/metrics\n"
            "                      while the run goes (power per meter, stage, level, ops and\n"
            "                      errors per op, latency over the last 10 s and per phase,\n"
            "                      loop stall, CPU; docs/metrics.md);\n"
            "                      PORT 0 picks a free port; a busy address stops the run\n"
            "                      before it starts (or [run] metrics); the address is\n"
            "                      printed, on stderr with --quiet\n"
            "  --metrics-linger DUR\n"
            "                      keep serving the final metrics this long after the run\n"
            "                      (default 16s, 0 = close at once; SIGINT ends it; or\n"
            "                      [run] metrics_linger)\n"
            "  --threads N         load generator threads (default: online CPUs)\n"
            "  --broker URI        drive load-generator agents on other hosts through this\n"
            "                      broker: redis://[USER:PASS@]HOST:PORT[/DB], rediss://\n"
            "                      for TLS (docs/agents.md) (or the\n"
            "                      TILEBENCH_BROKER environment variable, which keeps a\n"
            "                      password off the command line; or [agents] broker)\n"
            "  --agents N          how many agents to wait for (or [agents] count)\n"
            "  --agent NAME        wait for this agent; repeatable (or [agents] names)\n"
            "  --agents-wait DUR   how long to wait for them (default 60s; exit 3 after)\n"
            "  --sut-dir DIR       run folder of the embedded SUT (default: a new temporary\n"
            "                      folder in $TMPDIR or /tmp, removed after a clean stop)\n"
            "  --dry-run           check the host, meters, tile file and SUT in a few seconds\n"
            "                      without starting load, as tilebench doctor does (exit 0\n"
            "                      all ok, 1 a warning, 2 a failure); --json for JSON\n"
            "  --quiet             no progress output\n"
            "  --verbose           under each level's line, each QoS rule that failed or was\n"
            "                      not judged, with its figures (by default one QoS verdict\n"
            "                      per level: pass, fail or incomplete, with the counts, and\n"
            "                      one line naming the failed rules or saying how long a\n"
            "                      steady state would judge every rule)\n"
            "  --help              this text\n\n"
            "The tile file's keys per workload kind are in docs/tile-file.md.\n"
            "Infrastructure operations ([infra.NAME]: command, deploy, backup, migrate) run\n"
            "beside the tiles in each load level; their programs (initdb, pg_basebackup,\n"
            "pg_verifybackup, redis-server, /bin/sh) and TMPDIR are checked before anything\n"
            "runs (exit 2 naming what is missing). Each level's score is then 0.8 x\n"
            "application + 0.2 x infrastructure (VMmark 3); an operation with no reference\n"
            "(reference = OPS_PER_HOUR, or --calibrate) leaves the application score alone,\n"
            "with a warning before the sweep. See docs/infra.md.\n"
            "Environment: TB_WORKER_NICE=N (-20..19) sets the load generator threads' nice\n"
            "value; TB_WORKER_SPIN_US=N (0..1000) how long a worker polls before it sleeps\n"
            "(default 0: it never spins); TB_WORKER_SCHED=auto|batch|other their scheduling\n"
            "policy (default auto: SCHED_BATCH when every workload is http or oltp at max\n"
            "rate, think_time = 0; see docs/method.md). With agents, each agent's own\n"
            "environment counts. A phase whose worker loop stalled over 10 ms gets a\n"
            "warning; on a machine shared with the SUT, give the load generator CPUs of its\n"
            "own (taskset -c).\n\n"
            "exit: 0 complete, 2 usage/configuration error, 3 aborted or interrupted\n",
            tb_tiledef_default_path());
}

/* The presets of --preset, as data: the stages each imposes (before the
 * --ramp-up etc. overrides) and whether it is judged as a compliant run. */
typedef struct run_preset {
    const char *name;
    int own_stages; /* 0: the tile file's stages */
    tb_stage_def stages;
    int compliant; /* every QoS rule must be judged (qos/validity.h) */
} run_preset;

static const run_preset presets[] = {
    {"demo", 0, {0}, 0},
    /* VMmark 2.x run rules: 30 min ramp-up, three 40 min phases; SPECpower: 240 s active idle */
    {"compliant",
     1,
     {.ramp_up_us = 30ull * 60 * 1000000,
      .warm_up_us = 0,
      .steady_us = 40ull * 60 * 1000000,
      .phases = 3,
      .ramp_down_us = 60ull * 1000000,
      .idle_us = 240ull * 1000000},
     1},
};

static const run_preset *find_preset(const char *name) {
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0) return &presets[i];
    return NULL;
}

/* "run", or "doctor" when tb_cli_run_main runs as `tilebench doctor`. */
static const char *cmd_name = "run";

static int bad(const char *opt, const char *msg) {
    fprintf(stderr, "tilebench %s: %s: %s\n", cmd_name, opt, msg);
    return TB_EXIT_USAGE;
}

/* The options as given, before they are checked against the tile file. */
typedef struct run_args {
    tb_run_opts o;
    const char *tiles, *config, *preset;
    const char *dur_arg[5]; /* ramp_up warm_up steady ramp_down idle */
    const char *phases_arg;
    uint64_t max_tiles, repeat, threads;
    int max_tiles_given, quiet, verbose;
    int dry_run, json; /* --dry-run (doctor): the checks of cmd_doctor.c instead of the run; --json their output */
    const char *broker, *agents_wait;
    const char *metrics;        /* --metrics ADDR:PORT; NULL: none */
    const char *metrics_linger; /* --metrics-linger DUR; NULL: [run] metrics_linger, else the default */
    const char *ranging;        /* --ranging[=DUR]: "" without DUR; NULL: [run] ranging, else none */
    uint64_t agents;
    tb_remote_opts ro;
} run_args;

enum {
    O_TILES = 256,
    O_MAX_TILES,
    O_CONFIG,
    O_DB,
    O_LABEL,
    O_METER,
    O_TEMPERATURE,
    O_RAMP_UP,
    O_WARM_UP,
    O_STEADY,
    O_RAMP_DOWN,
    O_PHASES,
    O_IDLE,
    O_REPEAT,
    O_PRESET,
    O_REPORT,
    O_THREADS,
    O_SUT_DIR,
    O_QUIET,
    O_VERBOSE,
    O_HELP,
    O_CALIBRATE,
    O_AUTO_STEP,
    O_AUTO_DOUBLE,
    O_BISECT,
    O_TELEMETRY,
    O_BROKER,
    O_AGENTS,
    O_AGENT,
    O_AGENTS_WAIT,
    O_INTERFERENCE,
    O_METRICS,
    O_METRICS_LINGER,
    O_RANGING,
    O_DRY_RUN,
    O_JSON
};

static const struct option longopts[] = {{"tiles", required_argument, NULL, O_TILES},
                                         {"max-tiles", required_argument, NULL, O_MAX_TILES},
                                         {"config", required_argument, NULL, O_CONFIG},
                                         {"db", required_argument, NULL, O_DB},
                                         {"label", required_argument, NULL, O_LABEL},
                                         {"meter", required_argument, NULL, O_METER},
                                         {"temperature", required_argument, NULL, O_TEMPERATURE},
                                         {"ramp-up", required_argument, NULL, O_RAMP_UP},
                                         {"warm-up", required_argument, NULL, O_WARM_UP},
                                         {"steady", required_argument, NULL, O_STEADY},
                                         {"ramp-down", required_argument, NULL, O_RAMP_DOWN},
                                         {"phases", required_argument, NULL, O_PHASES},
                                         {"idle", required_argument, NULL, O_IDLE},
                                         {"repeat", required_argument, NULL, O_REPEAT},
                                         {"preset", required_argument, NULL, O_PRESET},
                                         {"report", required_argument, NULL, O_REPORT},
                                         {"threads", required_argument, NULL, O_THREADS},
                                         {"sut-dir", required_argument, NULL, O_SUT_DIR},
                                         {"quiet", no_argument, NULL, O_QUIET},
                                         {"verbose", no_argument, NULL, O_VERBOSE},
                                         {"help", no_argument, NULL, O_HELP},
                                         {"calibrate", no_argument, NULL, O_CALIBRATE},
                                         {"auto-step", required_argument, NULL, O_AUTO_STEP},
                                         {"auto-double", no_argument, NULL, O_AUTO_DOUBLE},
                                         {"bisect", no_argument, NULL, O_BISECT},
                                         {"telemetry", required_argument, NULL, O_TELEMETRY},
                                         {"broker", required_argument, NULL, O_BROKER},
                                         {"agents", required_argument, NULL, O_AGENTS},
                                         {"agent", required_argument, NULL, O_AGENT},
                                         {"agents-wait", required_argument, NULL, O_AGENTS_WAIT},
                                         {"interference", no_argument, NULL, O_INTERFERENCE},
                                         {"metrics", required_argument, NULL, O_METRICS},
                                         {"metrics-linger", required_argument, NULL, O_METRICS_LINGER},
                                         {"ranging", optional_argument, NULL, O_RANGING},
                                         {"dry-run", no_argument, NULL, O_DRY_RUN},
                                         {"json", no_argument, NULL, O_JSON},
                                         {NULL, 0, NULL, 0}};

/* One option into *a: -1 taken, else an exit code (an error was printed, or --help). */
static int take_option(int opt, const char *arg, run_args *a) {
    tb_run_opts *o = &a->o;
    char err[TB_ERR_LEN];
    uint64_t v;
    switch (opt) {
    case O_TILES: a->tiles = arg; break;
    case O_MAX_TILES:
        if (tb_parse_u64(arg, &a->max_tiles, err) != 0 || a->max_tiles < 1 || a->max_tiles > TB_MAX_LEVELS)
            return bad("--max-tiles", "must be an integer 1..256");
        a->max_tiles_given = 1;
        break;
    case O_CONFIG: a->config = arg; break;
    case O_DB: o->db_path = arg; break;
    case O_LABEL: o->label = arg; break;
    case O_METER:
        if (o->n_meters >= TB_MAX_METERS) return bad("--meter", "too many meters (at most 16)");
        o->meter_uris[o->n_meters++] = arg;
        break;
    case O_TEMPERATURE:
        if (o->n_temps >= TB_MAX_TEMPS) return bad("--temperature", "too many temperature sources (at most 4)");
        o->temp_uris[o->n_temps++] = arg;
        break;
    case O_RAMP_UP: a->dur_arg[0] = arg; break;
    case O_WARM_UP: a->dur_arg[1] = arg; break;
    case O_STEADY: a->dur_arg[2] = arg; break;
    case O_RAMP_DOWN: a->dur_arg[3] = arg; break;
    case O_IDLE: a->dur_arg[4] = arg; break;
    case O_PHASES: a->phases_arg = arg; break;
    case O_REPEAT:
        if (tb_parse_u64(arg, &a->repeat, err) != 0 || a->repeat < 1 || a->repeat > 100)
            return bad("--repeat", "must be an integer 1..100");
        break;
    case O_PRESET:
        if (!find_preset(arg)) return bad("--preset", "must be demo or compliant");
        a->preset = arg;
        break;
    case O_REPORT: o->report_path = arg; break;
    case O_THREADS:
        if (tb_parse_u64(arg, &a->threads, err) != 0 || a->threads < 1 || a->threads > 256)
            return bad("--threads", "must be an integer 1..256");
        break;
    case O_SUT_DIR: o->sut_dir = arg; break;
    case O_QUIET: a->quiet = 1; break;
    case O_VERBOSE: a->verbose = 1; break;
    case O_CALIBRATE: o->calibrate = 1; break;
    case O_INTERFERENCE: o->interference = 1; break;
    case O_AUTO_STEP:
        if (tb_parse_u64(arg, &v, err) != 0 || v < 1 || v > TB_MAX_LEVELS)
            return bad("--auto-step", "must be an integer 1..256");
        o->auto_step = (int)v;
        break;
    case O_AUTO_DOUBLE: o->auto_double = 1; break;
    case O_BISECT: o->bisect = 1; break;
    case O_TELEMETRY:
        if (strcmp(arg, "local") != 0 && strcmp(arg, "none") != 0 &&
            (strncmp(arg, "http://", 7) != 0 || !arg[7] || arg[7] == '/'))
            return bad("--telemetry", "use local, none or a node_exporter URL (http://HOST:9100/metrics)");
        o->telemetry = arg;
        break;
    case O_BROKER: a->broker = arg; break;
    case O_AGENTS:
        if (tb_parse_u64(arg, &a->agents, err) != 0 || a->agents < 1 || a->agents > TB_REMOTE_MAX_AGENTS)
            return bad("--agents", "must be an integer 1..256");
        break;
    case O_AGENT:
        if (a->ro.n_names >= TB_REMOTE_MAX_AGENTS) return bad("--agent", "too many agents (at most 256)");
        if (!tb_wire_name_ok(arg)) return bad("--agent", "an agent name is 1..63 letters, digits, '.', '_' or '-'");
        for (int i = 0; i < a->ro.n_names; i++)
            if (strcmp(a->ro.names[i], arg) == 0) return bad("--agent", "this agent is named twice");
        a->ro.names[a->ro.n_names++] = arg;
        break;
    case O_AGENTS_WAIT: a->agents_wait = arg; break;
    case O_METRICS: {
        char host[256];
        int port;
        if (tb_listen_parse(arg, host, sizeof host, &port, err) != 0) return bad("--metrics", err);
        a->metrics = arg;
        break;
    }
    case O_METRICS_LINGER: a->metrics_linger = arg; break;
    case O_RANGING: a->ranging = arg ? arg : ""; break;
    case O_DRY_RUN: a->dry_run = 1; break;
    case O_JSON: a->json = 1; break;
    case O_HELP:
        if (strcmp(cmd_name, "doctor") == 0)
            tb_cli_doctor_usage(stdout);
        else
            usage(stdout);
        return TB_EXIT_OK;
    default: return -2;
    }
    return -1;
}

/* The command line into *a, and the load levels checked: -1, or an exit code. */
static int parse_args(int argc, char **argv, run_args *a) {
    tb_run_opts *o = &a->o;
    char err[TB_ERR_LEN];
    int opt, r;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if ((r = take_option(opt, optarg, a)) == -1) continue;
        if (r != -2) return r;
        fprintf(stderr, "tilebench %s: unknown or incomplete option '%s' (see tilebench %s --help)\n", cmd_name,
                argv[optind - 1], cmd_name);
        return TB_EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf(stderr, "tilebench %s: unexpected argument '%s' (see tilebench %s --help)\n", cmd_name, argv[optind],
                cmd_name);
        return TB_EXIT_USAGE;
    }
    if (a->json && !a->dry_run) return bad("--json", "applies to tilebench doctor (or run --dry-run)");
    if (o->calibrate && a->tiles && strcmp(a->tiles, "1") != 0)
        return bad("--calibrate", "measures one tile: drop --tiles or give --tiles 1");
    if (!a->tiles) a->tiles = o->calibrate || o->interference ? "1" : "1..3";
    if (tb_levels_parse(a->tiles, (int)a->max_tiles, &o->levels, err) != 0) return bad("--tiles", err);
    if (a->max_tiles_given && !o->levels.is_auto) return bad("--max-tiles", "only applies to --tiles auto");
    if ((o->auto_step || o->auto_double || o->bisect) && !o->levels.is_auto)
        return bad(o->auto_step     ? "--auto-step"
                   : o->auto_double ? "--auto-double"
                                    : "--bisect",
                   "only applies to --tiles auto");
    if (o->auto_step && o->auto_double) return bad("--auto-step", "contradicts --auto-double: give one");
    return -1;
}

/* The stages: the tile file's, the preset's, then the options': -1, or an exit code. */
static int set_stages(run_args *a, const tb_tiledef *def) {
    static const char *names[5] = {"--ramp-up", "--warm-up", "--steady", "--ramp-down", "--idle"};
    tb_stage_def *st = &a->o.stages;
    uint64_t *dst[5] = {&st->ramp_up_us, &st->warm_up_us, &st->steady_us, &st->ramp_down_us, &st->idle_us};
    char err[TB_ERR_LEN];
    uint64_t v;
    *st = find_preset(a->preset)->own_stages ? find_preset(a->preset)->stages : def->stages;
    for (int i = 0; i < 5; i++)
        if (a->dur_arg[i] && tb_parse_duration_us(a->dur_arg[i], dst[i], err) != 0) return bad(names[i], err);
    if (st->steady_us < 1000000) return bad("--steady", "steady state must be at least 1s");
    if (a->phases_arg) {
        if (tb_parse_u64(a->phases_arg, &v, err) != 0 || v < 1 || v > 100)
            return bad("--phases", "must be an integer 1..100");
        st->phases = (int)v;
    }
    return -1;
}

/* What the tile file decides: stages, the report path, each workload's
 * keys (checked now, before any server starts): -1, or an exit code. */
static int check_sweep(run_args *a, const tb_tiledef *def) {
    tb_run_opts *o = &a->o;
    char err[TB_ERR_LEN];
    int r;
    if ((r = set_stages(a, def)) != -1) return r;
    if (o->n_meters == 0 && !def->n_hosts) o->meter_uris[o->n_meters++] = "auto"; /* [host.NAME]: theirs */
    if (o->n_temps == 0 && def->run.temperature) o->temp_uris[o->n_temps++] = def->run.temperature;
    /* A report that cannot be written should stop the run now, not after the sweep. */
    if (o->report_path) {
        int existed = access(o->report_path, F_OK) == 0;
        FILE *rf = fopen(o->report_path, "a");
        if (!rf) {
            snprintf(err, sizeof err, "'%s': %s", o->report_path, strerror(errno));
            return bad("--report", err);
        }
        fclose(rf);
        if (!existed) remove(o->report_path);
    }
    if (tb_loadgen_check(def, err) != 0) {
        tb_tiledef_escape_err(err); /* it quotes values from the file */
        fprintf(stderr, "tilebench %s: %s\n", cmd_name, err);
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* The agents: the options', else the environment's broker, else the tile
 * file's [agents]: -1 (a->o.agents set, or NULL for the local load
 * generator), or an exit code. */
static int set_agents(run_args *a, const tb_tiledef *def) {
    tb_remote_opts *ro = &a->ro;
    const char *env = getenv("TILEBENCH_BROKER");
    char err[TB_ERR_LEN];
    int cli = a->agents || ro->n_names; /* the command line replaces the file's count and names as a whole */
    if (!cli)
        for (int i = 0; i < def->agents.n_names && i < TB_REMOTE_MAX_AGENTS; i++)
            ro->names[ro->n_names++] = def->agents.names[i];
    ro->agents = a->agents ? (int)a->agents : !cli && def->agents.count ? def->agents.count : ro->n_names;
    /* the environment names a broker, it does not ask for agents */
    ro->broker_uri = a->broker ? a->broker : ro->agents && env && *env ? env : def->agents.broker;
    if (!ro->broker_uri && !ro->agents) {
        if (a->agents_wait) return bad("--agents-wait", "applies to a run with agents (--broker, --agents)");
        return -1;
    }
    if (!ro->broker_uri)
        return bad(a->agents            ? "--agents"
                   : ro->n_names && cli ? "--agent"
                                        : "[agents]",
                   "agents need a broker: give --broker redis://HOST:PORT (or TILEBENCH_BROKER)");
    if (!ro->agents)
        return bad(a->broker ? "--broker" : "[agents] broker",
                   "say how many agents to wait for: --agents N (or --agent NAME, or [agents] count)");
    if (ro->n_names && ro->n_names != ro->agents)
        return bad(cli ? "--agents" : "[agents] count",
                   cli ? "does not match the number of --agent names" : "does not match the number of [agents] names");
    {
        /* a bad URI is a usage error now, before anything is measured or stored */
        tb_broker_uri u;
        if (tb_broker_uri_parse(ro->broker_uri, &u, err) != 0) return bad(a->broker ? "--broker" : "broker", err);
        tb_broker_uri_free(&u);
    }
    ro->wait_us = def->agents.wait_us;
    if (a->agents_wait && (tb_parse_duration_us(a->agents_wait, &ro->wait_us, err) != 0 || ro->wait_us < 1000000))
        return bad("--agents-wait", "must be a duration of at least 1s (e.g. 60s)");
    if (a->threads)
        return bad("--threads", "sets the local load generator; agents take theirs from `tilebench agent --threads`");
    ro->stop = tb_cli_stop_flag();
    a->o.agents = ro;
    return -1;
}

/* The ranging pass's interval when --ranging gives none: long enough for a
 * WT310 to settle its auto-range (it steps one range per update) and see
 * the load's swings at 1 Hz. */
#define RANGING_DEFAULT_US 10000000ull

/* The ranging pass: the option's, else the tile file's [run] ranging. It
 * runs inside warm-up (without one, at the end of ramp-up), so it must fit
 * in it. -1, or an exit code. */
static int set_ranging(run_args *a, const tb_tiledef *def) {
    tb_run_opts *o = &a->o;
    char err[TB_ERR_LEN], msg[TB_ERR_LEN + 160];
    if (a->ranging) {
        o->ranging_key = "--ranging";
        o->ranging_us = RANGING_DEFAULT_US;
        if (a->ranging[0] && (tb_parse_duration_us(a->ranging, &o->ranging_us, err) != 0 || o->ranging_us < 1000000 ||
                              o->ranging_us > 3600ull * 1000000))
            return bad("--ranging", "must be a duration of 1s..1h (e.g. 10s)");
    } else if (def->run.ranging_line) {
        o->ranging_key = "[run] ranging";
        o->ranging_us = def->run.ranging_us;
    } else {
        return -1;
    }
    if (tb_coord_ranging_fits(o, msg) != 0) return bad(o->ranging_key, msg);
    return -1;
}

/* How long the final metrics stay served after the run by default: a little
 * over Prometheus's default scrape interval (15 s), so the last phase's
 * figures get scraped. */
#define METRICS_LINGER_DEFAULT_US 16000000ull
#define METRICS_LINGER_MAX_US     (3600ull * 1000000)

/* The metrics' address and linger: the options', else the tile file's
 * [run]: -1, or an exit code. */
static int set_metrics(run_args *a, const tb_tiledef *def, uint64_t *linger_us) {
    char err[TB_ERR_LEN];
    *linger_us = METRICS_LINGER_DEFAULT_US;
    if (!a->metrics) a->metrics = def->run.metrics;
    if (a->metrics_linger) {
        if (tb_parse_duration_us(a->metrics_linger, linger_us, err) != 0 || *linger_us > METRICS_LINGER_MAX_US)
            return bad("--metrics-linger", "must be a duration of 0..1h (e.g. 15s; 0: none)");
        if (!a->metrics) return bad("--metrics-linger", "applies to a run with --metrics (or [run] metrics)");
    } else if (def->run.metrics_linger_set)
        *linger_us = def->run.metrics_linger_us;
    return -1;
}

/* Binds the metrics' address (a bad or busy one is an error before anything
 * runs) and puts the metrics observer in front of the console's. The
 * address bound goes to stdout, or to stderr with --quiet (PORT 0 must be
 * discoverable). 0, or -1 with err. */
static int start_metrics(const run_args *a, tb_run_metrics *rm, const tb_run_observer *con_obs, tb_run_observer *obs,
                         tb_metrics **metrics, tb_metrics_server **msrv, char *err) {
    char where[300];
    *metrics = tb_metrics_new();
    if (tb_metrics_serve(*metrics, a->metrics, msrv, err) != 0) {
        tb_metrics_free(*metrics);
        *metrics = NULL;
        return -1;
    }
    tb_run_metrics_init(rm, *metrics, con_obs, obs);
    tb_run_metrics_ops(rm, a->o.def);
    tb_metrics_server_address(*msrv, where, sizeof where);
    fprintf(a->quiet ? stderr : stdout, "metrics: http://%s/metrics\n", where);
    fflush(a->quiet ? stderr : stdout);
    return 0;
}

/* After the run, the final values stay served for linger_us, so that
 * Prometheus scrapes the last phase; SIGINT (or SIGTERM, SIGHUP) ends the
 * wait at once, and an interrupted run does not wait. */
static void linger_metrics(const tb_metrics_server *msrv, uint64_t linger_us, int quiet) {
    volatile sig_atomic_t *stop = tb_cli_stop_flag();
    uint64_t end;
    char where[300];
    if (!msrv || linger_us == 0 || *stop) return;
    tb_metrics_server_address(msrv, where, sizeof where);
    if (!quiet) {
        printf("metrics: the final values stay at http://%s/metrics for %.3g s (Ctrl-C ends it)\n", where,
               (double)linger_us / 1e6);
        fflush(stdout);
    }
    end = tb_now_us() + linger_us;
    while (!*stop) {
        uint64_t now = tb_now_us(), step;
        struct timespec ts;
        if (now >= end) break;
        step = end - now < 100000 ? end - now : 100000;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)step * 1000;
        nanosleep(&ts, NULL); /* a signal cuts it short */
    }
}

int tb_cmd_run(int argc, char **argv) { return tb_cli_run_main(argc, argv, 0); }

int tb_cli_run_main(int argc, char **argv, int doctor) {
    run_args a;
    char err[TB_ERR_LEN];
    tb_tiledef *def;
    int64_t run_id;
    tb_run_console con;
    tb_run_observer obs, con_obs;
    tb_run_metrics rm;
    tb_metrics *metrics = NULL;
    tb_metrics_server *msrv = NULL;
    uint64_t linger_us;
    int rc;

    memset(&a, 0, sizeof a);
    a.o.db_path = "tilebench-results.db";
    a.o.label = "";
    a.preset = "demo";
    a.max_tiles = 8;
    a.repeat = 1;
    a.dry_run = doctor;
    cmd_name = doctor ? "doctor" : "run";
    if ((rc = parse_args(argc, argv, &a)) != -1) return rc;
    if (!a.config) a.config = tb_tiledef_default_path();
    if (!(def = tb_tiledef_load(a.config, err))) {
        fprintf(stderr, "tilebench %s: %s\n", cmd_name, err);
        return TB_EXIT_USAGE;
    }
    if ((rc = check_sweep(&a, def)) != -1 || (rc = set_agents(&a, def)) != -1 ||
        (rc = set_metrics(&a, def, &linger_us)) != -1 || (rc = set_ranging(&a, def)) != -1) {
        tb_tiledef_free(def);
        return rc;
    }
    a.o.def = def;
    a.o.tile_spec = a.tiles;
    a.o.repeat = (int)a.repeat;
    a.o.threads = (int)a.threads;
    a.o.preset = a.preset;
    a.o.compliant = find_preset(a.preset)->compliant;
    if (a.dry_run) { /* the checks only: no store, no server, no load */
        rc = tb_cli_doctor_report(&a.o, a.json);
        tb_tiledef_free(def);
        return rc;
    }
    a.o.stop = tb_cli_stop_flag();
    tb_run_console_init(&con, a.quiet, &con_obs);
    con.verbose = a.verbose;
    obs = con_obs;
    if (a.metrics && start_metrics(&a, &rm, &con_obs, &obs, &metrics, &msrv, err) != 0) {
        const char *opt = a.metrics == def->run.metrics ? "[run] metrics" : "--metrics";
        tb_tiledef_free(def);
        return bad(opt, err);
    }
    a.o.observer = &obs;
    tb_cli_catch_signals();

    rc = tb_coordinator_run(&a.o, &run_id, err);
    if (rc != TB_EXIT_OK) fprintf(stderr, "tilebench run: %s\n", err);
    linger_metrics(msrv, linger_us, a.quiet);
    tb_metrics_server_stop(msrv); /* the port is closed when the run is over, and the linger */
    if (metrics) tb_run_metrics_free(&rm);
    tb_metrics_free(metrics);
    tb_tiledef_free(def);
    return rc;
}
