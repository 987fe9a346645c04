/*
 * tiledef.h: the tile definition (an INI file parsed with inih). The standard
 * tile ships as tiles/standard.ini; every default in it names its source.
 * A tile file holds: [tile] name; [stages] durations; one [workload.NAME]
 * section per workload (kind, users, think time, reference throughput, and
 * kind-specific keys kept as raw key/values for the workload to parse);
 * [qos.NAME] rules; an optional [sut] section with endpoints of servers
 * that are already running (without it, `run` starts the embedded SUT); and
 * optional [host.NAME] sections, one per SUT host, with its meters, its
 * telemetry source and the tiles it serves (docs/tile-file.md).
 */
#ifndef TB_TILES_TILEDEF_H
#define TB_TILES_TILEDEF_H

#include <stdint.h>

#include "common/tb_common.h"
#include "tiles/endpoints.h"
#include "tiles/qos_rule.h"

/* The most a tile file may hold (beyond them the file is refused); the
 * arrays below hold only what the file gives. */
#define TB_MAX_WORKLOADS 8  /* [workload.NAME] sections */
#define TB_MAX_PARAMS    32 /* kind-specific keys per workload */
#define TB_MAX_RULES     64 /* QoS rules, over all [qos.NAME] sections */

typedef struct tb_param {
    char key[48];
    char value[256];
    int line; /* line in the tile file, for error messages */
} tb_param;

typedef struct tb_workload_def {
    char name[32];       /* section suffix: [workload.oltp] -> "oltp" */
    const char *file;    /* the tile file, for error messages: the definition's path (not owned) */
    char kind[16];       /* "oltp", "kv": a kind of tiles/kinds.h */
    int line;            /* line of the section header */
    int users;           /* closed-loop users per tile */
    uint64_t think_us;   /* mean think (or cycle) time */
    char think_dist[16]; /* "uniform" (0..2x mean, DS2), "negexp" (Olio), "fixed" */
    double reference;    /* reference throughput per tile, in `unit` */
    char unit[16];       /* "OPM" (per minute) or "ops/s" */
    int cycle;           /* 1: think_us is a cycle time from intended start to the next (Olio);
                            0: a think time after each op completes (DS2) */
    uint64_t timeout_us; /* an op not done by then is an error (timeout) */
    int n_params;        /* every other key, for the workload's own configure() */
    tb_param *params;    /* n_params entries (heap, owned by the tile definition) */
} tb_workload_def;

typedef struct tb_stage_def {
    uint64_t ramp_up_us, warm_up_us, steady_us, ramp_down_us, idle_us;
    int phases;
} tb_stage_def;

/*
 * A parsed tile file, on the heap (tb_tiledef_load/parse). Its arrays and
 * strings are on the heap too, owned by it and freed with it by
 * tb_tiledef_free; pass it by pointer: a copy of the struct would share them
 * (and free them twice).
 */
/* [agents]: load-generator agents on other hosts instead of the local load
 * generator (docs/agents.md). count 0: none. */
#define TB_TILE_MAX_AGENTS 256
typedef struct tb_agents_def {
    int count;        /* agents to wait for */
    int n_names;      /* > 0: exactly these */
    char **names;     /* n_names heap strings */
    uint64_t wait_us; /* how long to wait for them; 0: the default */
    char *broker;     /* the broker's URI (a secret: never shown as given); NULL: none */
} tb_agents_def;

/* [run]: options of `run` that the command line may also give (and then
 * wins): the live metrics' address and how long they stay after the run. */
typedef struct tb_run_def {
    char *metrics;              /* metrics = ADDR:PORT (checked as such); NULL: none */
    int metrics_linger_set;     /* metrics_linger was given */
    uint64_t metrics_linger_us; /* metrics_linger = DUR (0: no linger) */
    uint64_t ranging_us;        /* ranging = DUR: the ranging pass of each level (0: none) */
    int ranging_line;           /* its line, 0: not given */
    char *temperature;          /* temperature = URI: the inlet temperature source (powermeter/temperature.h),
                                   opened by the run; NULL: none (--temperature gives more or replaces it) */
} tb_run_def;

/* [host.NAME]: one host of a SUT of several (docs/tile-file.md). */
#define TB_MAX_HOSTS       16 /* [host.NAME] sections */
#define TB_HOST_MAX_METERS 8  /* meter and meter.SUFFIX keys per host */
#define TB_HOST_MAX_RANGES 16 /* ranges in a tiles list */
typedef struct tb_host_def {
    char name[32];   /* section suffix: [host.db1] -> "db1" */
    char label[128]; /* free text, "" none */
    int line;        /* line of the section's first key */
    int n_meters;
    char *meters[TB_HOST_MAX_METERS]; /* meter URIs (heap), in file order; summed like --meter */
    char *telemetry;                  /* "local", "none" or a node_exporter URL (heap; never NULL) */
    int tiles_line;                   /* line of the tiles key; 0 none */
    int tiles_given;                  /* 0: no tiles key: it serves every tile no other host names */
    int n_ranges;                     /* tiles_given with 0 ranges: tiles = none */
    int tile_lo[TB_HOST_MAX_RANGES], tile_hi[TB_HOST_MAX_RANGES];
} tb_host_def;

/* [infra.NAME]: an infrastructure operation run beside the tiles during
 * steady state (VMmark's infrastructure workloads; docs/infra.md). */
#define TB_MAX_INFRA 8 /* [infra.NAME] sections */
typedef enum {
    TB_INFRA_DEPLOY = 0, /* a fresh PostgreSQL cluster: initdb, start, load a tile's data, one DS2 order, remove */
    TB_INFRA_BACKUP,     /* pg_basebackup of the SUT's PostgreSQL into a temporary folder, then removed */
    TB_INFRA_MIGRATE,    /* a tile's Redis data set replicated to a fresh Redis, its kv users switched to it */
    TB_INFRA_COMMAND,    /* a user command with {tile}, {level} and {dir} placeholders */
    TB_INFRA_NKINDS
} tb_infra_kind;

typedef struct tb_infra_def {
    char name[32];    /* section suffix: [infra.backup] -> "backup" */
    const char *file; /* the tile file, for error messages (not owned) */
    int line;         /* line of the section's first key */
    tb_infra_kind kind;
    int tiles_per_user;  /* one infrastructure user per this many tiles of the level, at least one */
    uint64_t think_us;   /* a user's wait after one op ends before its next begins */
    uint64_t timeout_us; /* an op still running then is killed and counted as a timeout error */
    double reference;    /* ops per hour that score 1.0 (the whole level's, not per user); 0: none given */
    char *command;       /* TB_INFRA_COMMAND: the command line (heap); NULL for the other kinds */
    int verify;          /* TB_INFRA_BACKUP: check each backup with pg_verifybackup before removing it */
    uint64_t output_cap; /* bytes of an op's stdout+stderr kept (TB_INFRA_COMMAND; the others keep a
                            one-line account of what they did) */
    /* lines of the kind-specific keys (0: not given), for "file:line: [infra.NAME] key:" errors
     * found once the section's kind is known */
    int command_line, verify_line, output_cap_line;
} tb_infra_def;

/* Defaults of [infra.NAME] (docs/infra.md says where they come from). */
#define TB_INFRA_DEFAULT_TILES_PER_USER 4
#define TB_INFRA_DEFAULT_TIMEOUT_US     600000000ull /* 600 s */
#define TB_INFRA_DEFAULT_OUTPUT_CAP     4096
#define TB_INFRA_MAX_OUTPUT_CAP         (1ull << 20) /* 1 MiB per op */
#define TB_INFRA_MAX_NAME               25           /* "infra." + NAME must fit a QoS rule's workload (31) */
/* The source of the error-rate rule added to an operation whose [qos.infra.NAME] gives none. */
#define TB_INFRA_DEFAULT_RULE_SOURCE "tilebench default: an infrastructure op must not fail"

/* "deploy", "backup", "migrate", "command"; NULL out of range. */
const char *tb_infra_kind_name(tb_infra_kind k);

typedef struct tb_tiledef {
    char *path; /* the file (or the name given to tb_tiledef_parse) */
    char name[64];
    tb_stage_def stages;
    int n_workloads;
    tb_workload_def *workloads; /* n_workloads entries, in file order */
    int n_rules;
    tb_qos_rule *rules; /* n_rules entries, in file order */
    int has_sut;        /* a [sut] section with endpoints was given (telemetry alone does not count) */
    char *telemetry;    /* [sut] telemetry: "local", "none", a node_exporter URL; "" = default
                           (never NULL in a parsed definition) */
    tb_sut_endpoints sut;
    tb_agents_def agents;
    tb_run_def run;      /* [run] */
    int n_hosts;         /* [host.NAME] sections; 0: one SUT measured by --meter/--telemetry */
    tb_host_def *hosts;  /* n_hosts entries, in file order */
    int n_infra;         /* [infra.NAME] sections; 0: none (the score is the application score alone) */
    tb_infra_def *infra; /* n_infra entries, in file order; QoS rules of [qos.infra.NAME] are in rules,
                            with workload "infra.NAME" and op the kind's name or "*" */
    char *text;          /* the file's text for the results store, secrets redacted in every
                            line, commented out or not (tb_ini_redact) */
} tb_tiledef;

/*
 * Parses the tile file at path. Errors name file:line and the key:
 * "tiles/x.ini:12: [workload.oltp] users: 'ten': not a non-negative integer".
 * Returns the definition (free it with tb_tiledef_free) or NULL with err.
 */
tb_tiledef *tb_tiledef_load(const char *path, char *err) TB_WUR;

/*
 * Parses a tile definition held in memory (text: len bytes, NUL not needed),
 * as tb_tiledef_load does with a file's contents; name stands for the file in
 * error messages ("name:LINE: [section] key: why") and in def->path. Returns
 * the definition (free it with tb_tiledef_free) or NULL with err.
 */
tb_tiledef *tb_tiledef_parse(const char *name, const char *text, size_t len, char *err) TB_WUR;
/* Frees def and everything it holds; NULL is a no-op. */
void tb_tiledef_free(tb_tiledef *def);
/* The [infra.NAME] of def named name, or NULL. */
const tb_infra_def *tb_tiledef_infra(const tb_tiledef *def, const char *name);

/* Rewrites err (TB_ERR_LEN bytes, NUL-terminated) with passwords redacted
 * (tb_ini_redact_msg) and control bytes, DEL and
 * bytes outside valid UTF-8 as \xNN, cut with "..." when it no longer fits:
 * for errors that quote names or values from a tile file, which may be a
 * binary file given as --config. tb_tiledef_load/parse do it themselves;
 * callers checking a parsed tile further (tb_loadgen_check) use it before
 * printing. */
void tb_tiledef_escape_err(char *err);

/* The INI syntax error inih reported at `line` of text (len bytes, named
 * name in the message): err gets "name:line: syntax error: WHY: 'EXCERPT'",
 * WHY saying an unclosed section header or a line that is not key = value,
 * EXCERPT the line with its secrets redacted (tb_ini_redact) and control and
 * non-UTF-8 bytes escaped. Shared by the tile and campaign file parsers. */
void tb_tiledef_syntax_error(const char *name, const char *text, size_t len, int line, char *err);

/* The index of the host serving tile (1-based) in def->hosts, or -1 when
 * no host does (or the file has no [host.NAME] section): its tiles list,
 * else the one host without a tiles key. */
int tb_tiledef_host_of(const tb_tiledef *def, int tile);

/* h's tiles as written back: "1..4, 9", "none", or "rest" (no tiles key). */
void tb_tiledef_host_tiles(const tb_host_def *h, char *out, size_t len);

/* The workload's kind-specific value for key, or NULL. */
const tb_param *tb_tiledef_param(const tb_workload_def *w, const char *key);

/* A digest (FNV-1a 64, 16 hex digits + NUL into out[17]) of what defines the
 * load of the tile: every workload's name, kind, users, timing, timeout,
 * unit and own keys. Stages, QoS rules, references and [sut] are left out, so
 * a calibration stays valid across SUTs and stage lengths but not across a
 * changed workload. */
void tb_tiledef_workload_hash(const tb_tiledef *def, char out[17]);

/* Path of the shipped standard tile: $TB_TILE_FILE when set; else, for a
 * binary whose own file lies inside the source tree it was built from (run
 * from its build folder, e.g. build/tilebench), that tree's
 * tiles/standard.ini; else (an installed binary, or that file is gone) the
 * installed PREFIX/share/tilebench/standard.ini (TB_DATA_DIR). An installed
 * binary never reads the tree it was built in. */
const char *tb_tiledef_default_path(void);

#endif
