/*
 * compare_text.c: the terminal view of a comparison (compare_data.h): one
 * aligned table per figure, rows the load levels, columns the runs. Stored
 * strings have control characters shown as '?'.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/compare_data.h"
#include "results/model.h"

/* s with control characters as '?' (a label cannot drive the terminal),
 * cut to at most maxw code points with "..." when longer. Caller frees. */
static char *safe_text(const char *s, int maxw) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p), o = 0;
    char *t = xmalloc(n + 4);
    int total = 0, cols = 0, keep;
    for (size_t i = 0; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) total++;
    keep = maxw > 3 && total > maxw ? maxw - 3 : total;
    for (; *p; p++) {
        int lead = (*p & 0xc0) != 0x80;
        if (lead && cols == keep) break;
        t[o++] = (char)(*p < 0x20 || *p == 0x7f ? '?' : *p);
        cols += lead;
    }
    if (keep < total) {
        memcpy(t + o, "...", 3);
        o += 3;
    }
    t[o] = '\0';
    return t;
}

/* Display width in code points. */
static int text_width(const char *s) {
    int w = 0;
    for (; *s; s++)
        if ((*s & 0xc0) != 0x80) w++;
    return w;
}

static void put_padded(FILE *f, const char *s, int width, int right) {
    int pad = width - text_width(s);
    if (right)
        for (; pad > 0; pad--)
            fputc(' ', f);
    fputs(s, f);
    if (!right)
        for (; pad > 0; pad--)
            fputc(' ', f);
}

/* "1.100 +10.0%", "1.000" (baseline), "1.100 -" (no %), "missing". */
static void fmt_cell(char *buf, size_t len, const tb_cmp_level *lv, const tb_cmp_cell *c, int dec, int baseline) {
    if (!lv->present)
        snprintf(buf, len, "missing");
    else if (!isfinite(c->value))
        snprintf(buf, len, "-");
    else if (baseline)
        snprintf(buf, len, "%.*f", dec, c->value);
    else if (!isfinite(c->pct))
        snprintf(buf, len, "%.*f      -", dec, c->value);
    else
        snprintf(buf, len, "%.*f %+6.1f%%", dec, c->value, c->pct);
}

/* The cell of a table: a run figure (fig >= 0), the p95 of workload wl
 * (fig -1) or the mean power of host wl (fig -2). */
static const tb_cmp_cell *table_cell(const tb_cmp_level *lv, int fig, size_t wl) {
    return fig >= 0 ? &lv->fig[fig] : fig == -1 ? &lv->p95[wl] : &lv->host_w[wl];
}

/* One table: rows are load levels, columns the runs (table_cell's fig, wl). */
static void text_table(FILE *f, const tb_cmp_model *m, int fig, size_t wl) {
    char title[160], head[64], cell[96];
    int *w = xcalloc(m->n_runs, sizeof *w), dec = fig >= 0 ? tb_cmp_figures[fig].dec : fig == -1 ? 2 : 1;
    size_t i, k;
    if (fig == -2) {
        char *name = safe_text(m->hosts[wl], 40);
        snprintf(title, sizeof title, "Mean power of host %s (W)", name);
        free(name);
    } else if (fig >= 0) {
        const tb_cmp_figure *fg = &tb_cmp_figures[fig];
        snprintf(title, sizeof title, "%s%s%s%s",
                 fig == TB_CMP_SCORE && m->any_infra ? "Final score (0.8 x application + 0.2 x infrastructure)"
                                                     : fg->title,
                 *fg->unit ? " (" : "", fg->unit, *fg->unit ? ")" : "");
    } else {
        char *name = safe_text(m->workloads[wl], 40);
        snprintf(title, sizeof title, "p95 %s (ms)", name);
        free(name);
    }
    for (i = 0; i < m->n_runs; i++) {
        snprintf(head, sizeof head, "run %lld%s", (long long)m->runs[i].id, m->runs[i].is_baseline ? " (base)" : "");
        w[i] = text_width(head);
        for (k = 0; k < m->n_levels; k++) {
            const tb_cmp_level *lv = &m->runs[i].lv[k];
            fmt_cell(cell, sizeof cell, lv, table_cell(lv, fig, wl), dec, m->runs[i].is_baseline);
            if (text_width(cell) > w[i]) w[i] = text_width(cell);
        }
    }
    fprintf(f, "\n%s\n  %5s", title, "tiles");
    for (i = 0; i < m->n_runs; i++) {
        snprintf(head, sizeof head, "run %lld%s", (long long)m->runs[i].id, m->runs[i].is_baseline ? " (base)" : "");
        fputs("   ", f);
        put_padded(f, head, w[i], 1);
    }
    fputc('\n', f);
    for (k = 0; k < m->n_levels; k++) {
        fprintf(f, "  %5d", m->tiles[k]);
        for (i = 0; i < m->n_runs; i++) {
            const tb_cmp_level *lv = &m->runs[i].lv[k];
            fmt_cell(cell, sizeof cell, lv, table_cell(lv, fig, wl), dec, m->runs[i].is_baseline);
            fputs("   ", f);
            put_padded(f, cell, w[i], 1);
        }
        fputc('\n', f);
    }
    free(w);
}

/* A paragraph of ASCII text wrapped at 96 columns. */
static void put_wrapped(FILE *f, const char *s) {
    const int width = 96;
    while (*s) {
        int n = (int)strlen(s), cut = n;
        if (n > width) {
            for (cut = width; cut > 0 && s[cut] != ' '; cut--) {
            }
            if (cut == 0) cut = width;
        }
        fprintf(f, "%.*s\n", cut, s);
        s += cut;
        while (*s == ' ')
            s++;
    }
}

void tb_compare_write_text(const tb_cmp_model *m, FILE *f) {
    size_t i, k;
    fprintf(f, "tilebench compare: %zu runs against baseline run %lld\n", m->n_runs,
            (long long)m->runs[m->baseline].id);
    for (i = 0; i < m->n_runs; i++) {
        const tb_cmp_run *r = &m->runs[i];
        char *label = safe_text(*r->label ? r->label : "-", 30), *tile = safe_text(r->tile_name, 20),
             *spec = safe_text(r->tile_spec, 20);
        fprintf(f, "  run %-5lld %-8s ", (long long)r->id, r->is_baseline ? "baseline" : "");
        put_padded(f, label, 30, 0);
        fprintf(f, "  %s %s  %-11s %s", tile, spec, r->status, r->started_at);
        if (r->campaign_id > 0) {
            char *cn = safe_text(r->campaign_name, 30);
            fprintf(f, "  campaign %lld %s", (long long)r->campaign_id, cn);
            free(cn);
        }
        if (r->estimated) fputs("  ESTIMATED POWER", f);
        if (r->other_cpu_max_pct > TB_CMP_OTHER_CPU_LIMIT_PCT)
            fprintf(f, "  OTHER CPU %.1f%% at %d tiles", r->other_cpu_max_pct, r->other_cpu_tiles);
        fputc('\n', f);
        free(label);
        free(tile);
        free(spec);
    }
    for (i = 0; i < m->n_notes; i++) {
        char *n = safe_text(m->notes[i], 0);
        fprintf(f, "  note: %s\n", n);
        free(n);
    }
    fputc('\n', f);
    put_wrapped(f, tb_cmp_method_phases);
    put_wrapped(f, tb_cmp_method_pct);
    put_wrapped(f, tb_cmp_method_p95);
    if (m->n_levels == 0) {
        fputs("\n(no load level stored in any of the runs)\n", f);
        return;
    }
    for (k = 0; k < TB_CMP_N_FIG; k++)
        if (m->any_fig[k] || k <= TB_CMP_WATTS) text_table(f, m, (int)k, 0);
    for (k = 0; k < m->n_workloads; k++)
        text_table(f, m, -1, k);
    for (k = 0; k < m->n_hosts; k++)
        text_table(f, m, -2, k);
    /* QoS and validity: a % change at a failing level means little */
    fputs("\nQoS / validity per level (pass, fail, incomplete: rules not judged, too few ops; INVALID)\n  tiles", f);
    for (i = 0; i < m->n_runs; i++) {
        char head[32];
        snprintf(head, sizeof head, "run %lld", (long long)m->runs[i].id);
        fputs("   ", f);
        put_padded(f, head, i + 1 < m->n_runs ? 12 : 0, 0);
    }
    fputc('\n', f);
    for (k = 0; k < m->n_levels; k++) {
        fprintf(f, "  %5d", m->tiles[k]);
        for (i = 0; i < m->n_runs; i++) {
            const tb_cmp_level *lv = &m->runs[i].lv[k];
            char buf[32];
            if (!lv->present)
                snprintf(buf, sizeof buf, "missing");
            else
                snprintf(buf, sizeof buf, "%s%s", tb_model_qos_verdict(lv->qos_pass, lv->qos_not_judged),
                         lv->valid ? "" : " INVALID");
            fputs("   ", f);
            put_padded(f, buf, i + 1 < m->n_runs ? 12 : 0, 0);
        }
        fputc('\n', f);
    }
}
