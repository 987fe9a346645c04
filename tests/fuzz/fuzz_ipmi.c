/*
 * fuzz_ipmi.c: the IPMI output parsers (powermeter/ipmi.c): the text of
 * `ipmitool dcmi power reading` and FreeIPMI `ipmi-dcmi
 * --get-system-power-statistics`, `ipmitool sensor reading` (plain and -c),
 * the raw DCMI Get Power Reading bytes, and `ipmitool raw`'s hex text of them. The first input byte picks the
 * sensor name looked for; the rest is the tool's output.
 */
#include <math.h>

#include "powermeter/ipmi.h"
#include "powermeter/meter.h"
#include "tests/fuzz/fuzz.h"

static const char *const names[] = {"Pwr Consumption", "PSU1 Power", "Power", "", "Total_Power", "a|b,c"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *name = names[size ? data[0] % (sizeof names / sizeof names[0]) : 0];
    char *text = fuzz_cstr(size ? data + 1 : data, size ? size - 1 : 0);
    tb_ipmi_dcmi d;
    double w;
    int rc;

    if (tb_ipmi_parse_dcmi_text(text, &d) == 0) (void)tb_ipmi_judge(d.cur_w, d.active);
    if (tb_ipmi_parse_sensor_text(text, name, &w) == 0) (void)tb_ipmi_judge(w, -1);
    {
        uint8_t b[32];
        int n = tb_ipmi_parse_raw_hex(text, b, sizeof b);
        FUZZ_CHECK(n >= -1 && n <= (int)sizeof b);
        if (n > 0) (void)tb_ipmi_parse_dcmi_raw(b, (size_t)n, &d);
    }
    /* the same bytes as a raw response (exact size: ASan sees an over-read) */
    rc = tb_ipmi_parse_dcmi_raw(data, size, &d);
    if (rc == 0) FUZZ_CHECK(size >= 1 && data[0] == 0);
    free(text);
    return 0;
}
