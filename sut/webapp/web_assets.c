/*
 * web_assets.c: the reference web application's static files, held in memory.
 * Style sheets and scripts are real (small) css and js; the images are PNGs
 * generated here with stored (uncompressed) deflate blocks, so their sizes
 * are those of small photos and thumbnails (5..30 KiB) without a zlib
 * dependency.
 */
#include "sut/webapp/web_assets.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tb_common.h"

const char *const tb_web_page_css[] = {"/static/css/base.css", "/static/css/layout.css", NULL};
const char *const tb_web_page_js[] = {"/static/js/app.js", "/static/js/forms.js", "/static/js/calendar.js", NULL};

static const char base_css[] =
    "/* tilebench reference web application: base styles */\n"
    "html { font-family: 'DejaVu Sans', Verdana, sans-serif; font-size: 15px; color: #222; }\n"
    "body { margin: 0; background: #f4f4f0; }\n"
    "a { color: #1d5fa8; text-decoration: none; }\n"
    "a:hover { text-decoration: underline; }\n"
    "h1 { font-size: 1.6em; margin: 0.4em 0; }\n"
    "h2 { font-size: 1.25em; margin: 0.8em 0 0.4em; border-bottom: 1px solid #ccc; }\n"
    "p { line-height: 1.45; }\n"
    "table { border-collapse: collapse; width: 100%; }\n"
    "th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e2e2dc; }\n"
    "form label { display: block; margin-top: 0.6em; font-weight: bold; }\n"
    "form input[type=text], form input[type=password], form input[type=email], form textarea {\n"
    "  width: 100%; max-width: 32em; padding: 4px; border: 1px solid #aaa; border-radius: 3px; }\n"
    "button, input[type=submit] { margin-top: 1em; padding: 5px 14px; background: #1d5fa8; color: #fff;\n"
    "  border: 0; border-radius: 3px; cursor: pointer; }\n"
    ".tag { display: inline-block; margin: 2px 4px; padding: 1px 6px; background: #e6eef8; border-radius: 8px; }\n"
    ".tagcloud .tag.big { font-size: 1.3em; }\n"
    ".muted { color: #777; font-size: 0.9em; }\n"
    ".error { color: #a11; font-weight: bold; }\n"
    ".thumb { width: 64px; height: 48px; vertical-align: middle; margin-right: 8px; border-radius: 3px; }\n"
    ".avatar { width: 48px; height: 48px; border-radius: 24px; vertical-align: middle; margin: 2px; }\n"
    ".comment { margin: 0.6em 0; padding: 0.4em 0.8em; background: #fff; border-left: 3px solid #1d5fa8; }\n";

static const char layout_css[] =
    "/* tilebench reference web application: page layout */\n"
    "#top { background: #1d3557; color: #fff; padding: 6px 16px; display: flex; align-items: center; }\n"
    "#top img.logo { height: 40px; margin-right: 16px; }\n"
    "#top nav a { color: #fff; margin-right: 14px; }\n"
    "#top form.search { margin-left: auto; }\n"
    "#main { display: flex; max-width: 72em; margin: 0 auto; padding: 12px; }\n"
    "#content { flex: 3; padding-right: 16px; }\n"
    "#side { flex: 1; background: #fff; padding: 8px 12px; border-radius: 4px; }\n"
    "#foot { text-align: center; color: #777; padding: 16px; font-size: 0.85em; }\n"
    "ul.events { list-style: none; padding: 0; }\n"
    "ul.events li { display: flex; align-items: center; padding: 6px 0; border-bottom: 1px solid #e2e2dc; }\n"
    "ul.events li .when { width: 7em; color: #555; }\n"
    "@media (max-width: 700px) { #main { flex-direction: column; } #content { padding-right: 0; } }\n";

static const char app_js[] =
    "/* tilebench reference web application: page behaviour */\n"
    "(function () {\n"
    "  'use strict';\n"
    "  function byId(id) { return document.getElementById(id); }\n"
    "  function highlightTags() {\n"
    "    var tags = document.querySelectorAll('.tagcloud .tag');\n"
    "    var max = 0, i, n;\n"
    "    for (i = 0; i < tags.length; i++) { n = +tags[i].getAttribute('data-n') || 0; if (n > max) max = n; }\n"
    "    for (i = 0; i < tags.length; i++) {\n"
    "      n = +tags[i].getAttribute('data-n') || 0;\n"
    "      if (max && n > max * 0.7) tags[i].className += ' big';\n"
    "    }\n"
    "  }\n"
    "  function relativeDates() {\n"
    "    var els = document.querySelectorAll('.when[data-date]'), now = Date.now(), i, d;\n"
    "    for (i = 0; i < els.length; i++) {\n"
    "      d = Date.parse(els[i].getAttribute('data-date'));\n"
    "      if (!isNaN(d)) els[i].title = Math.round((d - now) / 86400000) + ' days from now';\n"
    "    }\n"
    "  }\n"
    "  document.addEventListener('DOMContentLoaded', function () {\n"
    "    highlightTags();\n"
    "    relativeDates();\n"
    "    var q = byId('q');\n"
    "    if (q) q.addEventListener('focus', function () { q.select(); });\n"
    "  });\n"
    "})();\n";

static const char forms_js[] = "/* tilebench reference web application: form checks before submit */\n"
                               "(function () {\n"
                               "  'use strict';\n"
                               "  function required(form) {\n"
                               "    var els = form.querySelectorAll('[required]'), i, ok = true;\n"
                               "    for (i = 0; i < els.length; i++) {\n"
                               "      if (!els[i].value) { els[i].style.borderColor = '#a11'; ok = false; }\n"
                               "      else els[i].style.borderColor = '';\n"
                               "    }\n"
                               "    return ok;\n"
                               "  }\n"
                               "  document.addEventListener('submit', function (ev) {\n"
                               "    if (!required(ev.target)) ev.preventDefault();\n"
                               "  }, true);\n"
                               "})();\n";

static const char calendar_js[] =
    "/* tilebench reference web application: a date picker for the event form */\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var months = ['Jan','Feb','Mar','Apr','May','Jun','Jul','Aug','Sep','Oct','Nov','Dec'];\n"
    "  function pad(n) { return n < 10 ? '0' + n : '' + n; }\n"
    "  function iso(d) { return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()); }\n"
    "  function label(d) { return d.getDate() + ' ' + months[d.getMonth()] + ' ' + d.getFullYear(); }\n"
    "  document.addEventListener('DOMContentLoaded', function () {\n"
    "    var input = document.querySelector('input[name=date]');\n"
    "    if (!input) return;\n"
    "    if (!input.value) input.value = iso(new Date());\n"
    "    input.title = label(new Date(input.value));\n"
    "    input.addEventListener('change', function () { input.title = label(new Date(input.value)); });\n"
    "  });\n"
    "})();\n";

/* ---- PNG ---------------------------------------------------------------- */

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Appends a chunk (length, type, data, CRC over type and data) at out+*off. */
static void chunk(unsigned char *out, size_t *off, const char *type, const unsigned char *data, size_t n) {
    unsigned char *c = out + *off;
    put32(c, (uint32_t)n);
    memcpy(c + 4, type, 4);
    if (n) memcpy(c + 8, data, n);
    put32(c + 8 + n, crc32_update(0, c + 4, n + 4));
    *off += 12 + n;
}

unsigned char *tb_web_png(int w, int h, unsigned variant, size_t *len) {
    size_t row = (size_t)w * 3 + 1, raw_len = row * (size_t)h;
    size_t nblocks = raw_len / 65535 + 1, z_len = 2 + raw_len + nblocks * 5 + 4;
    unsigned char *raw = xmalloc(raw_len), *z = xmalloc(z_len), *out = xmalloc(8 + 25 + 12 + z_len + 12);
    unsigned char ihdr[13];
    uint32_t a = 1, b = 0;
    size_t off = 0, zo = 0, i;

    /* A smooth two-colour gradient with stripes; colours from the variant. */
    for (int y = 0; y < h; y++) {
        unsigned char *r = raw + (size_t)y * row;
        r[0] = 0; /* filter: none */
        for (int x = 0; x < w; x++) {
            unsigned v = variant * 2654435761u;
            r[1 + x * 3] = (unsigned char)((v >> 8) + x * 3);
            r[2 + x * 3] = (unsigned char)((v >> 16) + y * 4);
            r[3 + x * 3] = (unsigned char)((v >> 24) ^ (((x / 6) + (y / 6)) % 2 ? 0x30 : 0));
        }
    }
    /* zlib stream of stored blocks; Adler-32 at the end (RFC 1950/1951). */
    z[zo++] = 0x78;
    z[zo++] = 0x01;
    for (off = 0; off < raw_len || off == 0;) {
        size_t n = raw_len - off > 65535 ? 65535 : raw_len - off;
        z[zo++] = off + n == raw_len ? 1 : 0;
        z[zo++] = (unsigned char)(n & 0xff);
        z[zo++] = (unsigned char)(n >> 8);
        z[zo++] = (unsigned char)(~n & 0xff);
        z[zo++] = (unsigned char)((~n >> 8) & 0xff);
        memcpy(z + zo, raw + off, n);
        zo += n;
        off += n;
        if (n == 0) break;
    }
    for (i = 0; i < raw_len; i++) {
        a = (a + raw[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    put32(z + zo, (b << 16) | a);
    zo += 4;

    memcpy(out, "\x89PNG\r\n\x1a\n", 8);
    off = 8;
    put32(ihdr, (uint32_t)w);
    put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    chunk(out, &off, "IHDR", ihdr, sizeof ihdr);
    chunk(out, &off, "IDAT", z, zo);
    chunk(out, &off, "IEND", NULL, 0);
    free(raw);
    free(z);
    *len = off;
    return out;
}

/* ---- the table ------------------------------------------------------------ */

static void add_text(tb_web_assets *as, const char *path, const char *type, const char *text) {
    tb_web_asset *x = &as->a[as->n++];
    snprintf(x->path, sizeof x->path, "%s", path);
    x->content_type = type;
    x->len = strlen(text);
    x->data = xmalloc(x->len);
    memcpy(x->data, text, x->len);
}

static void add_png(tb_web_assets *as, const char *path, int w, int h, unsigned variant) {
    tb_web_asset *x = &as->a[as->n++];
    snprintf(x->path, sizeof x->path, "%s", path);
    x->content_type = "image/png";
    x->data = tb_web_png(w, h, variant, &x->len);
}

void tb_web_assets_init(tb_web_assets *as) {
    char path[48];
    as->n = 0;
    as->a = xcalloc(8 + TB_WEB_EVENT_THUMBS + TB_WEB_AVATARS, sizeof *as->a);
    add_text(as, tb_web_page_css[0], "text/css; charset=utf-8", base_css);
    add_text(as, tb_web_page_css[1], "text/css; charset=utf-8", layout_css);
    add_text(as, tb_web_page_js[0], "application/javascript; charset=utf-8", app_js);
    add_text(as, tb_web_page_js[1], "application/javascript; charset=utf-8", forms_js);
    add_text(as, tb_web_page_js[2], "application/javascript; charset=utf-8", calendar_js);
    add_png(as, "/static/img/logo.png", 160, 40, 1);
    add_png(as, "/static/img/rss.png", 16, 16, 2);
    for (int i = 0; i < TB_WEB_EVENT_THUMBS; i++) {
        snprintf(path, sizeof path, "/static/img/event%d.png", i);
        add_png(as, path, 64, 48, 100u + (unsigned)i);
    }
    for (int i = 0; i < TB_WEB_AVATARS; i++) {
        snprintf(path, sizeof path, "/static/img/avatar%d.png", i);
        add_png(as, path, 48, 48, 200u + (unsigned)i);
    }
}

void tb_web_assets_free(tb_web_assets *as) {
    if (!as || !as->a) return;
    for (int i = 0; i < as->n; i++)
        free(as->a[i].data);
    free(as->a);
    as->a = NULL;
    as->n = 0;
}

const tb_web_asset *tb_web_asset_find(const tb_web_assets *as, const char *path) {
    for (int i = 0; i < as->n; i++)
        if (strcmp(as->a[i].path, path) == 0) return &as->a[i];
    return NULL;
}
