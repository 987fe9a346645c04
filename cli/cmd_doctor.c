/*
 * cmd_doctor.c: `tilebench doctor` (= `run --dry-run`): before a long run,
 * what this host and tile file will and will not measure. The options are
 * run's (cmd_run.c parses them); the checks are coordinator/preflight.c's;
 * this file prints them: one line each, `ok|warn|fail  NAME  detail`, or a
 * JSON array with --json.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "coordinator/preflight.h"

void tb_cli_doctor_usage(FILE *f) {
    fputs("usage: tilebench doctor [--config FILE] [--tiles SPEC] [--meter URI]... [--temperature URI]...\n"
          "                        [--telemetry local|none|URL] [--preset demo|compliant] [--json]\n\n"
          "Checks, in a few seconds and without starting load or servers, what a run with the\n"
          "same options will and will not measure (every option of tilebench run is taken;\n"
          "`run --dry-run` is the same). One line per check: ok, warn or fail, its name, and\n"
          "what was found:\n"
          "  tile-file      the tile file and its workloads' keys\n"
          "  meter.N        each meter (default auto) opens, names itself and gives one good\n"
          "                 sample; estimate: warns (a model, not a measurement), so do an\n"
          "                 uncertainty over 1% and a lab meter without a calibration date\n"
          "                 under a year old (fail with --preset compliant)\n"
          "  temperature.N  each --temperature source gives a reading\n"
          "  clock          synchronised (timedatectl, chronyc, or systemd-timesyncd's\n"
          "                 flag file); none of them answers: warn, unknown\n"
          "  governor, epp, turbo, tuned   the power policy as the run records it;\n"
          "                 not readable (a VM): warn\n"
          "  rapl           the powercap energy counters readable (warn when not)\n"
          "  telemetry      one snapshot of the telemetry source: CPU time, frequency, C-states\n"
          "  open-files     the limit against what the largest load level's users need\n"
          "  sut, sut.NAME  no [sut] section: the embedded SUT's programs are installed;\n"
          "                 with one: each workload's servers answer within 2 s and are sized\n"
          "                 for the largest level (PostgreSQL max_connections and the tile's\n"
          "                 rows, Redis maxclients and keys, the mail greetings), then the\n"
          "                 run's own SUT-ready check\n"
          "  not-available  what the report will show as not available\n\n"
          "  --json              the checks as a JSON array of {check, status, detail}\n"
          "  --help              this text\n\n"
          "exit: 0 every check ok, 1 a warning, 2 a failure or a usage error\n",
          f);
}

int tb_cli_doctor_report(const struct tb_run_opts *o, int json) {
    tb_pf_report r = {0};
    tb_pf_status worst = tb_preflight_run(o, &r);
    if (json) {
        json_t *a = json_array();
        char *text;
        for (int i = 0; i < r.n; i++)
            json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "check", r.checks[i].name, "status",
                                               tb_pf_status_name(r.checks[i].status), "detail", r.checks[i].detail));
        text = json_dumps(a, JSON_INDENT(2));
        printf("%s\n", text);
        free(text);
        json_decref(a);
    } else {
        for (int i = 0; i < r.n; i++)
            printf("%-4s  %-13s  %s\n", tb_pf_status_name(r.checks[i].status), r.checks[i].name, r.checks[i].detail);
    }
    tb_pf_report_free(&r);
    fflush(stdout);
    return (int)worst;
}

int tb_cmd_doctor(int argc, char **argv) { return tb_cli_run_main(argc, argv, 1); }
