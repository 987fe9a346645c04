/*
 * fuzz_ptd.c: the SPEC PTDaemon reply parsers (powermeter/ptd.c) on
 * arbitrary reply lines: classify, Identify, Ranges (RR), Watts,
 * Uncertainty, the RL header and RL sample lines. Checks: a sample flagged
 * good has a finite watts value.
 */
#include <math.h>

#include "powermeter/meter.h"
#include "powermeter/ptd.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *line = fuzz_cstr(data, size);
    tb_ptd_ident id;
    tb_ptd_ranges rr;
    tb_ptd_watts w;
    tb_ptd_uncertainty u;
    unsigned n, flags;
    double watts, volts, amps, pf;
    int64_t wall;
    int c = tb_ptd_classify(line);

    FUZZ_CHECK(c == TB_PTD_LINE || c == TB_PTD_ERROR || c == TB_PTD_UNCERT_WARN);
    if (tb_ptd_parse_identify(line, &id) == 0)
        FUZZ_CHECK(strlen(id.device) < sizeof id.device && strlen(id.idn) < sizeof id.idn &&
                   strlen(id.version) < sizeof id.version && strlen(id.mode) < sizeof id.mode);
    (void)tb_ptd_parse_ranges(line, &rr);
    (void)tb_ptd_parse_watts(line, &w);
    (void)tb_ptd_parse_uncertainty(line, &u);
    (void)tb_ptd_parse_rl_header(line, &n);
    flags = tb_ptd_parse_rl_sample(line, &watts, &volts, &amps, &pf, &wall);
    if (flags == 0) FUZZ_CHECK(isfinite(watts));
    free(line);
    return 0;
}
