/*
 * web_assets.h: the reference web application's static files (css, js and
 * PNG images), built in memory at start and served by exact path only: there
 * is no filesystem behind /static/, so no request can reach a file.
 * The pages reference them as a browser page would (Olio: about 20 requests
 * per page view): every page links 2 style sheets, 3 scripts, the logo and
 * the feed icon; event lists add one of TB_WEB_EVENT_THUMBS thumbnails per
 * event, attendee lists one of TB_WEB_AVATARS avatars per person.
 */
#ifndef TB_SUT_WEB_ASSETS_H
#define TB_SUT_WEB_ASSETS_H

#include <stddef.h>

#define TB_WEB_EVENT_THUMBS 12 /* /static/img/event0.png .. event11.png */
#define TB_WEB_AVATARS      8  /* /static/img/avatar0.png .. avatar7.png */

typedef struct tb_web_asset {
    char path[48];            /* "/static/css/base.css" */
    const char *content_type; /* "text/css; charset=utf-8", "image/png", ... */
    unsigned char *data;
    size_t len;
} tb_web_asset;

typedef struct tb_web_assets {
    int n;
    tb_web_asset *a;
} tb_web_assets;

/* Builds every asset (the PNGs are generated, deterministic). Allocation
 * failure aborts. Free with tb_web_assets_free. */
void tb_web_assets_init(tb_web_assets *as);
void tb_web_assets_free(tb_web_assets *as);

/* The asset whose path equals path exactly (after MHD's percent-decoding),
 * or NULL: "/static/../x" or "/static/css/base.css/" find nothing. */
const tb_web_asset *tb_web_asset_find(const tb_web_assets *as, const char *path);

/* The paths every page references, in order; NULL-terminated. */
extern const char *const tb_web_page_css[];
extern const char *const tb_web_page_js[];

/* Writes an RGB PNG of w x h pixels (stored deflate blocks, so no zlib
 * dependency) in a pattern chosen by `variant`; returns malloc'd bytes,
 * length in *len. Caller frees. */
unsigned char *tb_web_png(int w, int h, unsigned variant, size_t *len);

#endif
