/*
 * report_agents.c: the load-generator agents of a run (docs/agents.md) in
 * the text and HTML reports: per phase, each agent's tiles, users, ops,
 * CPU, loop stall, clock offset bound and loss. A run of the local load
 * generator has none, and nothing shows.
 */
#include <math.h>
#include <stdio.h>

#include "common/html.h"
#include "results/report_agents.h"

#define S(s) ((s) ? (s) : "")

static int any_agents(const tb_model_run *r) {
    for (size_t i = 0; i < r->n_levels; i++)
        if (r->levels[i].n_agents) return 1;
    return 0;
}

/* "1..2", or "-" for none. */
static const char *tiles_of(const tb_model_agent *a, char *buf, size_t len) {
    if (!a->tile_lo.known) return "-";
    snprintf(buf, len, "%lld..%lld", (long long)a->tile_lo.v, (long long)a->tile_hi.v);
    return buf;
}

/* CPU as % of the agent's threads over the phase's steady window. */
static double cpu_pct(const tb_model_agent *a, double steady_s) {
    return a->threads > 0 && steady_s > 0 ? 100.0 * a->cpu_s / ((double)a->threads * steady_s) : NAN;
}

void tb_report_text_agents(FILE *f, const tb_model_run *r) {
    if (!any_agents(r)) return;
    fputs("\nLoad-generator agents (per phase; stall and clock bound in ms)\n", f);
    fprintf(f, "  %5s %5s  %-16s %-16s %9s %6s %5s %10s %7s %6s %9s %11s  %s\n", "tiles", "phase", "agent", "host",
            "its tiles", "users", "thr", "ops", "errors", "CPU%", "stall max", "clock +/-", "lost at");
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_agents; k++) {
            const tb_model_agent *a = &lv->agents[k];
            char t[32], cpu[16], st[16], clk[16];
            double c = cpu_pct(a, lv->steady_s);
            snprintf(cpu, sizeof cpu, isnan(c) ? "-" : "%.0f", c);
            snprintf(st, sizeof st, a->stall_max_us.known ? "%.1f" : "-", (double)a->stall_max_us.v / 1000.0);
            snprintf(clk, sizeof clk, a->clock_bound_us.known ? "%.2f" : "-", (double)a->clock_bound_us.v / 1000.0);
            fprintf(f, "  %5lld %5lld  %-16.16s %-16.16s %9s %6lld %5lld %10lld %7lld %6s %9s %11s  %s\n",
                    (long long)lv->tiles, (long long)lv->phase, S(a->name), S(a->host), tiles_of(a, t, sizeof t),
                    (long long)a->users, (long long)a->threads, (long long)a->ops.v, (long long)a->errors.v, cpu, st,
                    clk, a->lost_at ? a->lost_at : "");
        }
    }
}

static void td(FILE *f, const char *s, int num) {
    fputs(num ? "<td class=\"n\">" : "<td>", f);
    tb_html_escape_file(f, s);
    fputs("</td>", f);
}

void tb_report_html_agents(FILE *f, const tb_model_run *r) {
    if (!any_agents(r)) return;
    fputs("<h2 id=\"agents\">Load-generator agents</h2>\n<div class=\"tw\"><table>\n<tr><th class=\"n\">tiles</th>"
          "<th class=\"n\">"
          "phase</th><th>agent</th><th>host</th><th>its tiles</th><th class=\"n\">users</th><th class=\"n\">threads"
          "</th><th class=\"n\">ops</th><th class=\"n\">errors</th><th class=\"n\">CPU %</th><th class=\"n\">stall "
          "max ms</th><th class=\"n\">clock &plusmn; ms</th><th>lost at</th></tr>\n",
          f);
    for (size_t i = 0; i < r->n_levels; i++) {
        const tb_model_level *lv = &r->levels[i];
        for (size_t k = 0; k < lv->n_agents; k++) {
            const tb_model_agent *a = &lv->agents[k];
            char b[8][32];
            double c = cpu_pct(a, lv->steady_s);
            snprintf(b[0], sizeof b[0], "%lld", (long long)lv->tiles);
            snprintf(b[1], sizeof b[1], "%lld", (long long)lv->phase);
            snprintf(b[2], sizeof b[2], "%lld", (long long)a->users);
            snprintf(b[3], sizeof b[3], "%lld", (long long)a->threads);
            snprintf(b[4], sizeof b[4], "%lld", (long long)a->ops.v);
            snprintf(b[5], sizeof b[5], "%lld", (long long)a->errors.v);
            snprintf(b[6], sizeof b[6], isnan(c) ? "-" : "%.0f", c);
            fputs(a->lost_at ? "<tr class=\"bad\">" : "<tr>", f);
            td(f, b[0], 1);
            td(f, b[1], 1);
            td(f, S(a->name), 0);
            td(f, S(a->host), 0);
            td(f, tiles_of(a, b[7], sizeof b[7]), 0);
            for (int j = 2; j <= 6; j++)
                td(f, b[j], 1);
            snprintf(b[7], sizeof b[7], a->stall_max_us.known ? "%.1f" : "-", (double)a->stall_max_us.v / 1000.0);
            td(f, b[7], 1);
            snprintf(b[7], sizeof b[7], a->clock_bound_us.known ? "%.2f" : "-", (double)a->clock_bound_us.v / 1000.0);
            td(f, b[7], 1);
            td(f, a->lost_at ? a->lost_at : "", 0);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table></div>\n<p class=\"note\">Each agent ran its tiles on its own host; the level's figures above are "
          "merged from theirs (histogram counts add). CPU is the agent's load-generator threads' time for work over "
          "steady state (90% of its threads makes the level invalid); the clock bound is half the best round trip "
          "to the broker at the level's start (over 5 ms warns, over 50 ms makes the level invalid).</p>\n",
          f);
}
