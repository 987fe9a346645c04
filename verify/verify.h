/*
 * verify.h: `tilebench check`'s verifier: reads a result bundle
 * (docs/bundle.md), checks its manifest's hashes and file set, recomputes
 * every published figure of report.json from the raw data (data/TABLE.csv and
 * histograms.hlog) in code of its own, and judges the run rules
 * (docs/verify.md). It may include only common/ (scripts/check-layers): it
 * never calls the code that produced the figures it checks.
 */
#ifndef TB_VERIFY_VERIFY_H
#define TB_VERIFY_VERIFY_H

#include <stdarg.h>
#include <stddef.h>

#include "common/tb_common.h"

/* One check's outcome: printed as "PASS|FAIL name: figure (limit)". */
typedef struct tb_vline {
    int pass;
    char *name;   /* "hash data/power_samples.csv", "figure level 2 (tiles 2) ppkw" */
    char *figure; /* what was found: "published 123.4, recomputed 118.0" */
    char *limit;  /* what it must meet: "relative tolerance 1e-09" */
} tb_vline;

typedef struct tb_vresult {
    tb_vline *lines;
    size_t n, cap;
    size_t failed;      /* lines with pass == 0 */
    int preset_claimed; /* the run claimed the compliant preset (runs.settings_json preset) */
    char preset[32];    /* the preset it claimed, "(none)" when none */
    size_t not_applied; /* compliance rules not applied, as the preset was not claimed */
} tb_vresult;

/* Appends a line; the figure is printf-formatted. */
void tb_vresult_add(tb_vresult *r, int pass, const char *name, const char *limit, const char *fmt, ...) TB_PRINTF(5, 6);
void tb_vresult_free(tb_vresult *r);

/* What check's exit code says. */
enum { TB_VERIFY_COMPLIANT = 0, TB_VERIFY_NOT_COMPLIANT = 1, TB_VERIFY_UNREADABLE = 2 };

/* Checks the bundle file at path: TB_VERIFY_COMPLIANT when every line
 * passed, TB_VERIFY_NOT_COMPLIANT when one failed, TB_VERIFY_UNREADABLE with
 * err (TB_ERR_LEN bytes) when the file is no bundle (not a gzip tar, no or
 * a bad manifest.json, a file the checks need missing or malformed). out
 * holds the lines checked so far either way. */
int tb_verify_bundle_file(const char *path, tb_vresult *out, char *err);
/* The same over a bundle in memory (len bytes); name is used in messages. */
int tb_verify_bundle_mem(const char *name, const void *data, size_t len, tb_vresult *out, char *err);

#endif
