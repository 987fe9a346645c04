/*
 * campaign.h: a campaign runs the same sweep under several named SUT
 * configurations (power policies: governors, tuned profiles, turbo,
 * C-states) and compares them against a baseline configuration. Each
 * configuration is applied by a user command before its run and reverted by
 * another after it (always: also after a failed apply, a failed run or
 * SIGINT). The runs go through the coordinator exactly as `tilebench run`,
 * labelled with the configuration's name and tied to the campaign in the
 * results store; at the end the comparison against the baseline run is
 * written (HTML to a file; the observer gets it too).
 *
 * The campaign file (ini, parsed with inih; every error names file:line,
 * the section and the key):
 *
 *   [campaign]
 *   name = governors            ; required
 *   baseline = performance      ; required: the name of a [config.NAME] section
 *   settle = 10s                ; optional wait after each apply, before the run
 *   [sweep]                     ; every key optional; as `tilebench run`'s options
 *   tiles = 1..3                ; tile spec (default 1..3)
 *   tile_file = my.ini          ; default the shipped standard tile; relative to
 *                               ; the campaign file's folder
 *   ramp_up = 30s / warm_up / steady / ramp_down / idle = DURATION
 *   phases = 1 / repeat = 1 / max_tiles = 8 (with tiles = auto)
 *   meter = URI                 ; repeatable (summed), default auto
 *   threads = N                 ; load generator threads (default the online CPUs)
 *   [config.performance]        ; two or more
 *   apply = cpupower frequency-set -g performance
 *   revert = cpupower frequency-set -g schedutil
 *   tile_file / tiles / meter / threads  ; optional: this configuration's own,
 *                               ; instead of [sweep]'s (meter: all of them)
 *   label = text                ; optional: the run's label (default the name)
 *
 * Every file read before the first apply (the campaign file, each tile file)
 * is digested (SHA-256); the tile file of a configuration is read again after
 * its apply, for its run. An apply that changed such a file is a warning: told
 * to the observer and stored as an event of the run.
 *
 * Commands run with /bin/sh -c in their own process group, stdin from
 * /dev/null; their output goes to the observer and is stored with the exit
 * status.
 */
#ifndef TB_COORDINATOR_CAMPAIGN_H
#define TB_COORDINATOR_CAMPAIGN_H

#include <signal.h>
#include <stdint.h>

#include "common/tb_common.h"
#include "coordinator/coordinator.h"
#include "coordinator/observer.h"
#include "results/store.h"

#define TB_CAMPAIGN_MAX_CONFIGS 32
#define TB_CAMPAIGN_CMD_LEN     256 /* a longer command is an error: put it in a script */

typedef struct tb_campaign_config {
    char name[64];
    char apply[TB_CAMPAIGN_CMD_LEN];
    char revert[TB_CAMPAIGN_CMD_LEN];
    int line; /* first line of the section, for messages */
    int has_apply, has_revert;
    /* The configuration's own sweep keys; one not given takes [sweep]'s. The
     * *_line fields are the key's line (0: not given), for messages. */
    char tile_file[1024]; /* resolved path; "" = [sweep]'s */
    char tiles[128];      /* tile spec; "" = [sweep]'s */
    tb_levels levels;     /* tiles parsed */
    int n_meters;         /* 0 = [sweep]'s meters */
    char meters[TB_MAX_METERS][512];
    int threads;     /* load generator threads; 0 = [sweep]'s */
    char label[128]; /* the run's label; "" = the name */
    int tile_file_line, tiles_line, meter_line, threads_line, label_line;
} tb_campaign_config;

/* Stage overrides given in [sweep]: bit i set when stage i was given. */
enum { TB_CAMP_RAMP_UP, TB_CAMP_WARM_UP, TB_CAMP_STEADY, TB_CAMP_RAMP_DOWN, TB_CAMP_IDLE, TB_CAMP_N_STAGES };

typedef struct tb_campaign {
    char path[512];
    char name[128];
    char baseline[64];
    uint64_t settle_us;
    char tiles[128];      /* tile spec as given ("1..3" by default) */
    tb_levels levels;     /* parsed */
    int max_tiles;        /* with tiles = auto */
    char tile_file[1024]; /* resolved path; "" = the shipped standard tile */
    uint64_t stage_us[TB_CAMP_N_STAGES];
    unsigned stage_set; /* TB_CAMP_* bits */
    int phases;         /* 0 = the tile file's */
    int repeat;         /* >= 1 */
    int n_meters;
    char meters[TB_MAX_METERS][512];
    int threads;                    /* 0 = the online CPUs */
    int tile_file_line, meter_line; /* [sweep]'s keys' lines (0: not given), for messages */
    char sha256[65];                /* of the file as read (lower-case hex) */
    int n_configs;
    tb_campaign_config configs[TB_CAMPAIGN_MAX_CONFIGS];
    char *text; /* the file's text, stored with the campaign; freed by tb_campaign_free */
} tb_campaign;

/*
 * Parses and checks the campaign file at path into *c: unknown sections and
 * keys, keys given twice, a missing name, baseline, apply or revert, a
 * baseline that names no configuration, fewer than 2 configurations, bad
 * tile specs, durations and numbers are errors naming file:line, the section
 * and the key. The tile files and meters are checked by tb_campaign_run,
 * before anything runs. Returns 0 or -1 with err; free with tb_campaign_free.
 */
int tb_campaign_load(const char *path, tb_campaign *c, char *err) TB_WUR;
void tb_campaign_free(tb_campaign *c);

/* What a campaign tells whoever watches it (the command line prints it);
 * a NULL callback sees nothing. Commands and their output are shown with
 * their secrets redacted. */
typedef struct tb_campaign_observer {
    void (*begun)(void *arg, int64_t campaign_id, const tb_campaign *c, const char *db_path);
    /* Configuration index (1-based) of n begins. */
    void (*config_begun)(void *arg, int index, int n, const char *config, int is_baseline);
    /* An apply or revert step (what) of config runs command. */
    void (*step_begun)(void *arg, const char *what, const char *config, const char *command);
    /* One line of its output (control characters as '?'), as it comes. */
    void (*step_output)(void *arg, const char *what, const char *config, const char *line);
    /* It succeeded (exit status 0) after seconds. */
    void (*step_done)(void *arg, const char *what, const char *config, double seconds);
    void (*settling)(void *arg, uint64_t settle_us);
    /* The apply of config changed file, which was read before it (its
     * content digest differs); msg says so in a sentence, also stored as a
     * warning event of config's run. */
    void (*file_changed)(void *arg, const char *config, const char *file, const char *msg);
    void (*run_complete)(void *arg, const char *config, int64_t run_id);
    /* The comparison of the finished runs (baseline first) against the
     * baseline run, read from s. */
    void (*comparison)(void *arg, tb_store *s, const int64_t *run_ids, int n, int64_t baseline_run);
    /* The HTML comparison was written to path. */
    void (*comparison_written)(void *arg, const char *path);
    /* Runs finished but none to compare: baseline_done says whether the baseline's did. */
    void (*no_comparison)(void *arg, int baseline_done);
    void (*done)(void *arg, int64_t campaign_id, const char *status, int n_done, int n_configs);
    const tb_run_observer *run; /* each run's observer; NULL: nobody */
    void *arg;
} tb_campaign_observer;

typedef struct tb_campaign_opts {
    const char *db_path;
    const char *report_path;              /* the HTML comparison; NULL: none */
    const tb_campaign_observer *observer; /* NULL: nobody */
    volatile sig_atomic_t *stop;          /* set by SIGINT/SIGTERM: the run in progress ends interrupted,
                                             its configuration is reverted, and the campaign stops */
} tb_campaign_opts;

/*
 * Runs the campaign: the baseline configuration first, then the others in
 * file order; for each, apply, the sweep, revert. Stops at the first apply
 * that fails (non-zero exit), run that does not complete, or revert that
 * fails, or on o->stop; runs already finished stay stored. At the end (also
 * after such a stop, when the baseline and at least one other run finished)
 * writes the comparison against the baseline run: HTML to o->report_path,
 * and to the observer. Each configuration's tile file is read twice: before
 * anything runs, with every meter URI, to check it (errors name the campaign
 * file's section and key), and again after its apply, for its run. Returns a
 * process exit code: 0 complete; 2 a configuration
 * error found before anything ran (tile file, meters, database, report
 * path); 3 stopped (err names the configuration, the command and its exit
 * status, or the run's error). *campaign_id gets the stored campaign's id
 * (-1 when none was created).
 */
int tb_campaign_run(const tb_campaign *c, const tb_campaign_opts *o, int64_t *campaign_id, char *err);

#endif
