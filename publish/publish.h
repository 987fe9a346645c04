/*
 * publish.h: a stored run as a result bundle (docs/bundle.md): one tar.gz
 * with its reports, its tile file, its rows as CSV and a manifest of SHA-256
 * sums, so a reader can check the figures without tilebench's database; and
 * a static site of every run of a database (index, reports, bundles, each
 * run compared with the previous one of its tile). Reads the database only.
 */
#ifndef TB_PUBLISH_PUBLISH_H
#define TB_PUBLISH_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

/* What tb_publish_bundle wrote. */
typedef struct tb_publish_done {
    char path[4096]; /* the bundle's file */
    char uuid[40];   /* the run's UUID */
    int64_t run_id;
    size_t files;   /* files in the bundle, manifest.json included */
    uint64_t bytes; /* their bytes before compression */
} tb_publish_done;

/*
 * Writes the bundle of run `which` (a run id or "latest") of the database at
 * db to out, or, when out is NULL, to tilebench-run-<UUID>.tar.gz in the
 * current folder. A run still being written is refused, and so is a run
 * whose stored meter URIs, host telemetry URLs or tile file text still hold
 * a secret that redact.h would hide (a database written without redaction):
 * nothing is published then. The file is written whole or not at all (see
 * archive.h). Returns 0 with *done filled, or -1 with err naming the run and
 * the file (or the database).
 */
int tb_publish_bundle(const char *db, const char *which, const char *out, tb_publish_done *done, char *err) TB_WUR;

/* What tb_publish_site wrote. */
typedef struct tb_publish_site_done {
    int runs;      /* runs listed in index.html */
    int published; /* of them, with a report and a bundle (not still running) */
    int compares;  /* compare/A-B.html pages */
} tb_publish_site_done;

/*
 * Writes a static site of every run of the database at db into the folder
 * dir (made when missing; files already there are replaced, others kept):
 * index.html, runs/<UUID>/report.html and runs/<UUID>/tilebench-run-<UUID>.tar.gz
 * per finished run, and compare/<A>-<B>.html comparing run B with A, the run
 * of the same tile name before it. Every link is relative. Returns 0 with
 * *done filled, or -1 with err naming the run and file that failed.
 */
int tb_publish_site(const char *db, const char *dir, tb_publish_site_done *done, char *err) TB_WUR;

#endif
