/*
 * fuzz_yokogawa.c: the Yokogawa reply parsers (powermeter/yokogawa.c) on
 * arbitrary reply lines: values (:NUM:NORM:VAL? / :MEAS:NORM:VAL?), *IDN?,
 * :SYST:ERR? and boolean replies. Checks: a value is either a finite number
 * with no flags or NaN with a flag, and never more fields are stored than asked.
 */
#include <math.h>

#include "powermeter/meter.h"
#include "powermeter/yokogawa.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *line = fuzz_cstr(data, size);
    double vals[8];
    unsigned flags[8];
    double v;
    unsigned f;
    int n, code;
    char maker[64], model[64], serial[64], fw[64], msg[128];

    f = tb_yoko_parse_value(line, size, &v);
    FUZZ_CHECK(f == 0 ? isfinite(v) : isnan(v));
    FUZZ_CHECK(tb_yoko_strip_header(line) >= line && tb_yoko_strip_header(line) <= line + strlen(line));
    for (int max = 0; max <= 8; max += 4) {
        memset(flags, 0xff, sizeof flags);
        n = tb_yoko_parse_values(line, vals, flags, max);
        FUZZ_CHECK(n >= -1);
        for (int i = 0; i < n && i < max; i++)
            FUZZ_CHECK(flags[i] == 0 ? isfinite(vals[i]) : isnan(vals[i]));
        for (int i = n < 0 ? 0 : (n < max ? n : max); i < 8; i++)
            FUZZ_CHECK(flags[i] == 0xffffffffu);
    }
    if (tb_yoko_parse_idn(line, maker, model, serial, fw) == 0)
        FUZZ_CHECK(strlen(maker) < 64 && strlen(model) < 64 && strlen(serial) < 64 && strlen(fw) < 64);
    if (tb_yoko_parse_error(line, &code, msg, sizeof msg) == 0) FUZZ_CHECK(strlen(msg) < sizeof msg);
    n = tb_yoko_parse_bool(line);
    FUZZ_CHECK(n >= -1 && n <= 1);
    free(line);
    return 0;
}
