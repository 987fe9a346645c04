/*
 * levels.c: parses tile specs into the ascending list of load levels of a sweep.
 */
#include "tiles/levels.h"

#include <stdlib.h>
#include <string.h>

static int parse_count(const char *spec, const char *s, size_t n, int *out, char *err) {
    char buf[32];
    uint64_t v;
    char e[TB_ERR_LEN];
    if (n == 0 || n >= sizeof buf) {
        tb_seterr(err, "tile spec '%s': expected a number of tiles", spec);
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (tb_parse_u64(buf, &v, e) != 0) {
        tb_seterr(err, "tile spec '%s': %s", spec, e);
        return -1;
    }
    if (v < 1) {
        tb_seterr(err, "tile spec '%s': tiles must be >= 1", spec);
        return -1;
    }
    if (v > TB_MAX_TILES) {
        tb_seterr(err, "tile spec '%s': at most %d tiles", spec, TB_MAX_TILES);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Appends t to the levels; the caller has checked that there is room. */
static void push(tb_levels *out, int t) {
    TB_ASSERT(out->n >= 0 && out->n < TB_MAX_LEVELS);
    out->tiles[out->n++] = t;
}

int tb_levels_parse(const char *spec, int max_tiles, tb_levels *out, char *err) {
    const char *dots;
    memset(out, 0, sizeof *out);
    if (!spec || !*spec) {
        tb_seterr(err, "tile spec is empty (examples: 3, 1..4, 1,2,4,8, auto)");
        return -1;
    }
    if (strcmp(spec, "auto") == 0) {
        if (max_tiles < 1 || max_tiles > TB_MAX_LEVELS) {
            tb_seterr(err, "--max-tiles %d: must be 1..%d", max_tiles, TB_MAX_LEVELS);
            return -1;
        }
        out->is_auto = 1;
        for (int i = 0; i < max_tiles; i++)
            push(out, i + 1);
        return 0;
    }
    dots = strstr(spec, "..");
    if (dots) {
        int a, b;
        if (parse_count(spec, spec, (size_t)(dots - spec), &a, err) != 0) return -1;
        if (parse_count(spec, dots + 2, strlen(dots + 2), &b, err) != 0) return -1;
        if (b < a) {
            tb_seterr(err, "tile spec '%s': range end %d is below start %d", spec, b, a);
            return -1;
        }
        if (b - a + 1 > TB_MAX_LEVELS) {
            tb_seterr(err, "tile spec '%s': at most %d load levels", spec, TB_MAX_LEVELS);
            return -1;
        }
        for (int t = a; t <= b; t++)
            push(out, t);
        return 0;
    }
    for (const char *p = spec;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int t;
        if (parse_count(spec, p, n, &t, err) != 0) return -1;
        if (out->n > 0 && t <= out->tiles[out->n - 1]) {
            tb_seterr(err, "tile spec '%s': levels must be ascending without repeats", spec);
            return -1;
        }
        if (out->n >= TB_MAX_LEVELS) {
            tb_seterr(err, "tile spec '%s': at most %d load levels", spec, TB_MAX_LEVELS);
            return -1;
        }
        push(out, t);
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}
