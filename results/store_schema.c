/*
 * store_schema.c: the results database schema, as the migrations that build
 * it (store_migrate.c applies them on open).
 */
#include "results/store_internal.h"

/*
 * The migrations, in order: migrations[i] takes the schema from version i to
 * i + 1. Never edit a shipped entry; append a new one and bump
 * TB_STORE_SCHEMA_VERSION (and note the change in docs/results.md, "Schema versions and migrations").
 *
 * Version 1. Notes on columns:
 *  - runs.writer_pid / writer_start: the writing process and its start time
 *    (/proc/PID/stat field 22, clock ticks since boot), so a reader can tell a
 *    run that is still being written from one whose writer was killed.
 *  - levels has no UNIQUE(run_id, tiles, phase): repeats of a level are rows too.
 *  - qos."limit" is quoted because LIMIT is an SQL keyword.
 *  - ops.hist / hist_uncorrected: tb_hist_encode BLOBs (corrected = from the
 *    intended start), so any percentile can be computed later; the p*_ms
 *    columns are precomputed from hist and NULL when count is 0.
 *  - power_samples.level_id is NULL for active idle samples (from 13 also
 *    for ramp-up, warm-up and ramp-down ones: see power_samples.stage).
 */
const char *const tb_store_migrations[TB_STORE_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  label TEXT NOT NULL DEFAULT '',"
    "  status TEXT NOT NULL CHECK (status IN ('running','complete','interrupted','aborted')),"
    "  tile_name TEXT,"
    "  tile_spec TEXT,"
    "  started_at TEXT NOT NULL,"
    "  finished_at TEXT,"
    "  tilebench_version TEXT NOT NULL,"
    "  host_json TEXT,"
    "  settings_json TEXT,"
    "  config_text TEXT,"
    "  active_idle_watts REAL,"
    "  saturation_tiles INTEGER,"
    "  writer_pid INTEGER,"
    "  writer_start INTEGER"
    ");"
    "CREATE TABLE meters ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  uri TEXT NOT NULL,"
    "  model TEXT,"
    "  idn TEXT,"
    "  estimated INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (run_id, idx)"
    ");"
    "CREATE TABLE levels ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  tiles INTEGER NOT NULL,"
    "  phase INTEGER NOT NULL,"
    "  steady_start TEXT,"
    "  steady_end TEXT,"
    "  steady_s REAL,"
    "  score REAL,"
    "  avg_watts REAL,"
    "  ppkw REAL,"
    "  qos_pass INTEGER NOT NULL,"
    "  valid INTEGER NOT NULL,"
    "  invalid_reason TEXT,"
    "  samples_total INTEGER,"
    "  samples_bad INTEGER,"
    "  cpu_util_pct REAL,"
    "  avg_freq_mhz REAL"
    ");"
    "CREATE INDEX levels_run ON levels(run_id, tiles, phase);"
    "CREATE TABLE workloads ("
    "  id INTEGER PRIMARY KEY,"
    "  level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  tile INTEGER NOT NULL,"
    "  ops INTEGER,"
    "  errors INTEGER,"
    "  throughput REAL,"
    "  unit TEXT,"
    "  reference REAL,"
    "  normalized REAL"
    ");"
    "CREATE INDEX workloads_level ON workloads(level_id);"
    "CREATE TABLE ops ("
    "  workload_id INTEGER NOT NULL REFERENCES workloads(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  count INTEGER,"
    "  errors INTEGER,"
    "  count_all INTEGER,"
    "  mean_ms REAL,"
    "  p50_ms REAL,"
    "  p90_ms REAL,"
    "  p95_ms REAL,"
    "  p99_ms REAL,"
    "  p999_ms REAL,"
    "  max_ms REAL,"
    "  hist BLOB,"
    "  hist_uncorrected BLOB"
    ");"
    "CREATE INDEX ops_workload ON ops(workload_id);"
    "CREATE TABLE power_samples ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  level_id INTEGER REFERENCES levels(id) ON DELETE CASCADE,"
    "  meter_idx INTEGER NOT NULL,"
    "  mono_us INTEGER NOT NULL,"
    "  wall_us INTEGER NOT NULL,"
    "  watts REAL,"
    "  volts REAL,"
    "  amps REAL,"
    "  pf REAL,"
    "  flags INTEGER NOT NULL DEFAULT 0"
    ");"
    "CREATE INDEX power_samples_run ON power_samples(run_id, level_id);"
    "CREATE INDEX power_samples_level ON power_samples(level_id);"
    "CREATE TABLE qos ("
    "  level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,"
    "  rule TEXT NOT NULL,"
    "  observed REAL,"
    "  \"limit\" REAL,"
    "  pass INTEGER NOT NULL,"
    "  reason TEXT"
    ");"
    "CREATE INDEX qos_level ON qos(level_id);"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  at TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('info','warning','error')),"
    "  message TEXT NOT NULL"
    ");"
    "CREATE INDEX events_run ON events(run_id);",
    /* 1 -> 2: repeats, per-tile QoS verdicts, calibrations */
    "ALTER TABLE levels ADD COLUMN repeat INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE qos ADD COLUMN tile INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE calibrations ("
    "  id INTEGER PRIMARY KEY,"
    "  tile_name TEXT NOT NULL,"
    "  def_hash TEXT NOT NULL,"
    "  workload TEXT NOT NULL,"
    "  reference REAL NOT NULL,"
    "  unit TEXT NOT NULL,"
    "  run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,"
    "  created_at TEXT NOT NULL"
    ");"
    "CREATE INDEX calibrations_key ON calibrations(tile_name, def_hash, workload);"
    /* what a meter says about itself (ranges and uncertainty in the report) */
    "ALTER TABLE meters ADD COLUMN serial TEXT;"
    "ALTER TABLE meters ADD COLUMN firmware TEXT;"
    "ALTER TABLE meters ADD COLUMN driver TEXT;"
    "ALTER TABLE meters ADD COLUMN volt_range_v REAL;"
    "ALTER TABLE meters ADD COLUMN amp_range_a REAL;"
    "ALTER TABLE meters ADD COLUMN volt_mode TEXT;"
    "ALTER TABLE meters ADD COLUMN amp_mode TEXT;"
    "ALTER TABLE meters ADD COLUMN crest_factor REAL;"
    "ALTER TABLE meters ADD COLUMN update_ms INTEGER;"
    "ALTER TABLE meters ADD COLUMN avg_window_ms INTEGER;"
    "ALTER TABLE power_samples ADD COLUMN uncertainty_pct REAL;",
    /* 2 -> 3: campaigns (several runs of one sweep under named SUT
     * configurations, coordinator/campaign.c), and which ops count toward their
     * workload's throughput (compare's p95 per workload). One self-contained
     * entry: campaigns, the apply/revert commands run, and the columns that
     * tie a run to its campaign. ops.metric is NULL on rows stored before. */
    "CREATE TABLE campaigns ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  baseline TEXT NOT NULL,"
    "  config_path TEXT,"
    "  config_text TEXT,"
    "  status TEXT NOT NULL CHECK (status IN ('running','complete','interrupted','aborted')),"
    "  message TEXT,"
    "  started_at TEXT NOT NULL,"
    "  finished_at TEXT,"
    "  writer_pid INTEGER,"
    "  writer_start INTEGER"
    ");"
    "CREATE TABLE campaign_steps ("
    "  id INTEGER PRIMARY KEY,"
    "  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,"
    "  config TEXT NOT NULL,"
    "  step TEXT NOT NULL CHECK (step IN ('apply','revert')),"
    "  command TEXT NOT NULL,"
    "  exit_status INTEGER,"
    "  output TEXT,"
    "  started_at TEXT NOT NULL,"
    "  finished_at TEXT"
    ");"
    "CREATE INDEX campaign_steps_campaign ON campaign_steps(campaign_id);"
    "ALTER TABLE runs ADD COLUMN campaign_id INTEGER REFERENCES campaigns(id) ON DELETE SET NULL;"
    "ALTER TABLE runs ADD COLUMN campaign_config TEXT;"
    "CREATE INDEX runs_campaign ON runs(campaign_id);"
    "ALTER TABLE ops ADD COLUMN metric INTEGER;",
    /* 3 -> 4: host telemetry (issue 9). Per level: CPU time by mode (% of
     * the steady state's CPU time), the frequency's source, the number of
     * 1 Hz samples, and C-state residency as a JSON object {"C0": %, "C1": %,
     * ...} (state names are the host's own, so not columns). Every sample is
     * kept in telemetry_samples (level_id NULL: active idle). NULL means not
     * available on that host. */
    "ALTER TABLE levels ADD COLUMN user_pct REAL;"
    "ALTER TABLE levels ADD COLUMN nice_pct REAL;"
    "ALTER TABLE levels ADD COLUMN sys_pct REAL;"
    "ALTER TABLE levels ADD COLUMN idle_pct REAL;"
    "ALTER TABLE levels ADD COLUMN iowait_pct REAL;"
    "ALTER TABLE levels ADD COLUMN irq_pct REAL;"
    "ALTER TABLE levels ADD COLUMN softirq_pct REAL;"
    "ALTER TABLE levels ADD COLUMN steal_pct REAL;"
    "ALTER TABLE levels ADD COLUMN freq_source TEXT;"
    "ALTER TABLE levels ADD COLUMN telemetry_samples INTEGER;"
    "ALTER TABLE levels ADD COLUMN cstate_residency_json TEXT;"
    "CREATE TABLE telemetry_samples ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  level_id INTEGER REFERENCES levels(id) ON DELETE CASCADE,"
    "  mono_us INTEGER NOT NULL,"
    "  wall_us INTEGER NOT NULL,"
    "  interval_us INTEGER NOT NULL,"
    "  cpu_util_pct REAL,"
    "  user_pct REAL, nice_pct REAL, sys_pct REAL, idle_pct REAL,"
    "  iowait_pct REAL, irq_pct REAL, softirq_pct REAL, steal_pct REAL,"
    "  freq_mhz REAL,"
    "  freq_source TEXT,"
    "  cstate_residency_json TEXT"
    ");"
    "CREATE INDEX telemetry_samples_run ON telemetry_samples(run_id, level_id);"
    "CREATE INDEX telemetry_samples_level ON telemetry_samples(level_id);",
    /* 4 -> 5: errors by class per op (issue 4: connect, io, timeout, server,
     * content; NULL on rows stored before, whose errors were not split), and
     * the third QoS outcome: a rule not judged for too few ops. qos.judged
     * is 0 for such a rule (its pass is 0 too: never a pass), ops is the
     * sample the rule's minimum applies to and min_ops that minimum (NULL
     * before). levels.qos_not_judged counts the level's rules not judged in
     * its verdict or a tile's; qos_pass = 1 means no judged rule failed. */
    "ALTER TABLE ops ADD COLUMN err_connect INTEGER;"
    "ALTER TABLE ops ADD COLUMN err_io INTEGER;"
    "ALTER TABLE ops ADD COLUMN err_timeout INTEGER;"
    "ALTER TABLE ops ADD COLUMN err_server INTEGER;"
    "ALTER TABLE ops ADD COLUMN err_content INTEGER;"
    "ALTER TABLE qos ADD COLUMN judged INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE qos ADD COLUMN ops INTEGER;"
    "ALTER TABLE qos ADD COLUMN min_ops INTEGER;"
    "ALTER TABLE levels ADD COLUMN qos_not_judged INTEGER NOT NULL DEFAULT 0;",
    /* 5 -> 6: why a power sample is bad (issue 19): tb_meter_reason_text of
     * its reason, e.g. "implausible: negative active power" for a sample
     * flagged IMPLAUSIBLE (0x20) by the meter front end's plausibility
     * check. NULL for a good sample, and on rows stored before. watts keeps
     * the raw reading even then; level means skip bad samples. */
    "ALTER TABLE power_samples ADD COLUMN reason TEXT;",
    /* 6 -> 7: the steady window on the monotonic clock of power_samples.mono_us
     * ([start, end) in µs), so its samples, edges and duration can be checked
     * from the rows alone (tests/tools/recompute.py); NULL before. */
    ("ALTER TABLE levels ADD COLUMN steady_start_mono_us INTEGER;"
     "ALTER TABLE levels ADD COLUMN steady_end_mono_us INTEGER;"),
    /* 7 -> 8: load-generator agents on other hosts (issue 21): one row per
     * agent and phase. tile_lo..tile_hi are the tiles it ran (NULL: none
     * this level); clock_offset_us is broker time minus the agent's
     * monotonic clock at the level's start and clock_bound_us the bound of
     * that estimate (half the best round trip), NULL when not measured;
     * lost_at the wall time it was lost, NULL when it was not. */
    "CREATE TABLE level_agents ("
    "  level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  host TEXT,"
    "  tile_lo INTEGER, tile_hi INTEGER,"
    "  threads INTEGER, users INTEGER,"
    "  ops INTEGER, errors INTEGER,"
    "  cpu_s REAL,"
    "  stall_max_us INTEGER, stall_p99_us INTEGER,"
    "  clock_offset_us INTEGER, clock_bound_us INTEGER,"
    "  lost_at TEXT"
    ");"
    "CREATE INDEX level_agents_level ON level_agents(level_id);",
    /* 8 -> 9: a SUT of several hosts (issue 21, [host.NAME] in the tile
     * file): one hosts row per host of the run (its tiles as written back,
     * its telemetry source with any password redacted, its configuration
     * from that source as in runs.host_json, NULL without one, its active
     * idle), a
     * level_hosts row per host and phase (its meters' mean power summed, the
     * level's tiles it serves, its telemetry summary), and each meter's
     * host. Runs without host sections have no such rows and meters.host
     * NULL; levels.avg_watts stays the sum over every meter. */
    "CREATE TABLE hosts ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  label TEXT,"
    "  tiles TEXT NOT NULL,"
    "  telemetry TEXT NOT NULL,"
    "  host_json TEXT,"
    "  active_idle_watts REAL,"
    "  idle_cpu_util_pct REAL,"
    "  idle_avg_freq_mhz REAL,"
    "  idle_telemetry_samples INTEGER,"
    "  PRIMARY KEY (run_id, idx)"
    ");"
    "CREATE TABLE level_hosts ("
    "  level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  tiles INTEGER NOT NULL,"
    "  avg_watts REAL,"
    "  samples INTEGER NOT NULL,"
    "  cpu_util_pct REAL,"
    "  avg_freq_mhz REAL,"
    "  freq_source TEXT,"
    "  telemetry_samples INTEGER"
    ");"
    "CREATE INDEX level_hosts_level ON level_hosts(level_id);"
    "ALTER TABLE meters ADD COLUMN host TEXT;",
    /* 9 -> 10: infrastructure operations and consolidation interference
     * (issue 22, docs/infra.md). levels.score stays the final score (0.8 x
     * app + 0.2 x infra with infrastructure operations, else the application
     * score); app_score is the sum of the tile scores, infra_score the
     * geometric mean of the operations' normalized ops/hour (NULL: none ran,
     * or one had no reference); alone is the workload an interference level
     * ran by itself (NULL: the whole tile). One infra row per operation and
     * phase (its errors by class in err_* columns, as ops has them; hist a
     * tb_hist_encode BLOB of op durations in µs), and one infra_outputs row
     * per op kept (status 'ok' or an error class). Older runs read app_score
     * NULL as score and infra_score NULL. */
    "ALTER TABLE levels ADD COLUMN app_score REAL;"
    "ALTER TABLE levels ADD COLUMN infra_score REAL;"
    "ALTER TABLE levels ADD COLUMN alone TEXT;"
    "CREATE TABLE infra ("
    "  level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  users INTEGER NOT NULL,"
    "  ops INTEGER NOT NULL,"
    "  errors INTEGER NOT NULL,"
    "  err_connect INTEGER NOT NULL DEFAULT 0,"
    "  err_io INTEGER NOT NULL DEFAULT 0,"
    "  err_timeout INTEGER NOT NULL DEFAULT 0,"
    "  err_server INTEGER NOT NULL DEFAULT 0,"
    "  err_content INTEGER NOT NULL DEFAULT 0,"
    "  count_all INTEGER NOT NULL,"
    "  bytes INTEGER NOT NULL DEFAULT 0,"
    "  mb_per_s REAL,"
    "  ops_per_hour REAL NOT NULL,"
    "  reference REAL,"
    "  normalized REAL,"
    "  mean_ms REAL,"
    "  p50_ms REAL,"
    "  p95_ms REAL,"
    "  p99_ms REAL,"
    "  max_ms REAL,"
    "  hist BLOB,"
    "  PRIMARY KEY (level_id, idx)"
    ");"
    "CREATE TABLE infra_outputs ("
    "  level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  user INTEGER NOT NULL,"
    "  tile INTEGER NOT NULL,"
    "  started_at TEXT NOT NULL,"
    "  duration_ms REAL NOT NULL,"
    "  status TEXT NOT NULL,"
    "  exit_code INTEGER,"
    "  output TEXT NOT NULL"
    ");"
    "CREATE INDEX infra_outputs_level ON infra_outputs(level_id);",
    /* 10 -> 11: published result bundles (issue 23, docs/bundle.md). uuid
     * names a run outside its database: lower-case 8-4-4-4-12 hex, random
     * version 4 (RFC 4122 section 4.4: the version nibble 4, the variant
     * bits 10, the rest random), set when the run is created (store.c) and
     * here for every older run. source_revision is the git revision the
     * writing tilebench was built from ("unknown" outside a git checkout;
     * NULL on older runs). */
    "ALTER TABLE runs ADD COLUMN uuid TEXT;"
    "ALTER TABLE runs ADD COLUMN source_revision TEXT;"
    "UPDATE runs SET uuid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||"
    " substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) ||"
    " substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));"
    "CREATE UNIQUE INDEX runs_uuid ON runs(uuid);",
    /* 11 -> 12: the edges of every stage of the run (issue 23: the power
     * over time chart shades them), on the monotonic clock of
     * power_samples.mono_us, [start, end) in µs as planned when the stage
     * began (a stage cut short by a signal keeps its planned end). stage is
     * 'idle' (active idle: tiles 0), 'ramp-up', 'warm-up', 'steady' (phase
     * 1..N) or 'ramp-down'; phase is 0 for the stages that are not a phase;
     * alone is the workload an interference level ran by itself (NULL: the
     * whole tile). Runs stored before have no rows: readers fall back to
     * levels.steady_*_mono_us and the active idle samples. */
    "CREATE TABLE stages ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  stage TEXT NOT NULL CHECK (stage IN ('idle','ramp-up','warm-up','steady','ramp-down')),"
    "  tiles INTEGER NOT NULL,"
    "  repeat INTEGER NOT NULL,"
    "  phase INTEGER NOT NULL,"
    "  alone TEXT,"
    "  start_mono_us INTEGER NOT NULL,"
    "  end_mono_us INTEGER NOT NULL"
    ");"
    "CREATE INDEX stages_run ON stages(run_id);",
    /* 12 -> 13: the stage each power sample was taken in (issue 23: the
     * edges rule needs the samples either side of a steady edge, the power
     * chart draws ramp-up, warm-up and ramp-down). 'steady' samples keep
     * the level_id of their phase, as before; 'idle', 'ramp-up', 'warm-up'
     * and 'ramp-down' ones have level_id NULL (a ramp sample is no level's
     * figure; the stages table says by time which level it belongs to).
     * Samples between stages (before active idle, the SUT's settle time, the
     * lead before a ramp-up, between levels) are not stored. NULL on rows
     * stored before: level_id NULL was active idle, any other steady. */
    "ALTER TABLE power_samples ADD COLUMN stage TEXT CHECK (stage IS NULL OR"
    " (stage IN ('idle','ramp-up','warm-up','steady','ramp-down') AND (stage = 'steady') = (level_id IS NOT NULL)));",
    /* 13 -> 14: a lab meter's calibration date as its URI states it
     * (calibrated=YYYY-MM-DD; NULL: none stated, or not a lab meter) and the
     * published accuracy the driver applied to each sample's uncertainty
     * (NULL: none). Older runs have NULL in both. */
    "ALTER TABLE meters ADD COLUMN calibrated TEXT;"
    "ALTER TABLE meters ADD COLUMN accuracy TEXT;",
    /* 14 -> 15: the ranging pass (issue 24): per level and meter, the peak
     * RMS V and A read while the meter auto-ranged at the start of warm-up,
     * over [start, end) on power_samples.mono_us's clock, and the fixed
     * ranges then set for the measured stages. alone: the workload an
     * interference level ran by itself (NULL: the whole tile). A run without
     * --ranging has no rows. */
    "CREATE TABLE level_ranges ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  tiles INTEGER NOT NULL,"
    "  repeat INTEGER NOT NULL,"
    "  alone TEXT,"
    "  meter INTEGER NOT NULL,"
    "  peak_v REAL NOT NULL,"
    "  peak_a REAL NOT NULL,"
    "  volt_range_v REAL NOT NULL CHECK (volt_range_v > 0),"
    "  amp_range_a REAL NOT NULL CHECK (amp_range_a > 0),"
    "  samples INTEGER NOT NULL,"
    "  start_mono_us INTEGER NOT NULL,"
    "  end_mono_us INTEGER NOT NULL"
    ");"
    "CREATE INDEX level_ranges_run ON level_ranges(run_id);",
    /* 15 -> 16: a meter read as several channels (PTDaemon multi-channel,
     * Yokogawa elements 1..3). meters.channels lists them ("1,2"; NULL: one
     * input). power_samples keeps one row per meter and tick, the channels'
     * sum, so every figure read from it (mean power = the sum over meters)
     * stays as it was and no channel is counted twice; each channel's own
     * reading is a channel_samples row beside it, at the same run, meter and
     * mono_us (and level and stage). Older runs have NULL and no rows. */
    "ALTER TABLE meters ADD COLUMN channels TEXT;"
    "CREATE TABLE channel_samples ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  level_id INTEGER REFERENCES levels(id) ON DELETE CASCADE,"
    "  meter_idx INTEGER NOT NULL,"
    "  channel INTEGER NOT NULL,"
    "  mono_us INTEGER NOT NULL,"
    "  stage TEXT,"
    "  watts REAL,"
    "  volts REAL,"
    "  amps REAL,"
    "  pf REAL,"
    "  flags INTEGER NOT NULL DEFAULT 0,"
    "  reason TEXT"
    ");"
    "CREATE INDEX channel_samples_run ON channel_samples(run_id, meter_idx, channel);"
    "CREATE INDEX channel_samples_level ON channel_samples(level_id);",
    /* 16 -> 17: the inlet temperature (issue 24) over each phase (level_id)
     * and over active idle (level_id NULL): the readings of the run's
     * temperature sources in the window, and their minimum, mean and maximum
     * in degrees C (NULL when samples is 0: a source that gave none). A run
     * with no row had no temperature source: "not measured". */
    "CREATE TABLE inlet_temperatures ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  level_id INTEGER REFERENCES levels(id) ON DELETE CASCADE,"
    "  samples INTEGER NOT NULL CHECK (samples >= 0),"
    "  min_c REAL,"
    "  mean_c REAL,"
    "  max_c REAL,"
    "  CHECK ((samples = 0) = (min_c IS NULL))"
    ");"
    "CREATE INDEX inlet_temperatures_run ON inlet_temperatures(run_id);",
    /* 17 -> 18: the host's CPU outside the SUT's and the load generator's
     * processes over each phase's steady state (issue 25), % of all the
     * host's CPU time; NULL: not measured (older runs, or /proc unreadable).
     * sut_processes: the local SUT server processes it found. */
    "ALTER TABLE levels ADD COLUMN other_cpu_pct REAL;"
    "ALTER TABLE levels ADD COLUMN sut_processes INTEGER;",
    /* 18 -> 19: every inlet temperature reading (issue 24), so that the
     * minimum, mean and maximum of inlet_temperatures can be recomputed from
     * them: the source's index in the run's list (settings_json
     * "temperature", 0-based), when it was read (mono_us on the clock of
     * power_samples.mono_us, wall_us the wall clock) and the value in
     * degrees C. stage and level_id as in power_samples: a steady reading
     * carries its phase's level_id, the readings of active idle and of a
     * level's ramp-up, warm-up and ramp-down have level_id NULL. Runs stored
     * before have no rows: their aggregates cannot be recomputed. One
     * self-contained entry (it may be renumbered). */
    "CREATE TABLE temperature_samples ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  level_id INTEGER REFERENCES levels(id) ON DELETE CASCADE,"
    "  source INTEGER NOT NULL CHECK (source >= 0),"
    "  mono_us INTEGER NOT NULL,"
    "  wall_us INTEGER NOT NULL,"
    "  celsius REAL NOT NULL,"
    "  stage TEXT NOT NULL CHECK (stage IN ('idle','ramp-up','warm-up','steady','ramp-down')"
    "    AND (stage = 'steady') = (level_id IS NOT NULL))"
    ");"
    "CREATE INDEX temperature_samples_run ON temperature_samples(run_id, level_id);"
    "CREATE INDEX temperature_samples_level ON temperature_samples(level_id);",
};

_Static_assert(sizeof tb_store_migrations / sizeof tb_store_migrations[0] == TB_STORE_SCHEMA_VERSION,
               "one migration per schema version");
