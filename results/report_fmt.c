/*
 * report_fmt.c: formatting pieces the report renderers share (report_fmt.h).
 */
#include "results/report_fmt.h"

#include <stdio.h>
#include <string.h>

void tb_fmt_put_safe(FILE *f, const char *s, int width, int maxw) {
    int cols = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (maxw > 3) {
        int total = 0;
        const unsigned char *q;
        for (q = p; *q; q++)
            if ((*q & 0xc0) != 0x80) total++;
        if (total <= maxw)
            maxw = 0;
        else
            maxw -= 3;
    }
    for (; *p; p++) {
        int lead = (*p & 0xc0) != 0x80;
        if (lead && maxw > 0 && cols == maxw) {
            fputs("...", f);
            cols += 3;
            break;
        }
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
        cols += lead;
    }
    for (; cols < width; cols++)
        fputc(' ', f);
}

void tb_fmt_error_classes(const tb_model_op_group *g, char *buf, size_t len) {
    size_t l = 0;
    uint64_t sum = 0;
    buf[0] = '\0';
    if (g->errors == 0) return;
    if (!g->classes_known) {
        snprintf(buf, len, "not split");
        return;
    }
    for (int k = 0; k < TB_ERR_NCLASSES; k++) {
        sum += g->errors_by_class[k];
        if (g->errors_by_class[k] == 0 || l >= len) continue;
        l += (size_t)snprintf(buf + l, len - l, "%s%s %llu", l ? ", " : "", tb_store_err_class_name(k),
                              (unsigned long long)g->errors_by_class[k]);
    }
    /* a writer that counted errors without a class: say so, not nothing */
    if (sum < g->errors && l < len)
        snprintf(buf + l, len - l, "%sother %llu", l ? ", " : "", (unsigned long long)(g->errors - sum));
}

void tb_fmt_put_alone(FILE *f, const tb_model_level *lv) {
    if (!lv->alone) return;
    fputs(" (", f);
    tb_fmt_put_safe(f, lv->alone, 0, 40);
    fputs(" alone)", f);
}
