/*
 * ipmi.h: the parsers of the IPMI driver (ipmi.c), public for unit tests:
 * ipmitool's and FreeIPMI's DCMI "power reading" text (both ipmitool
 * layouts), ipmitool's "sensor reading" text, and the raw DCMI Get Power
 * Reading response bytes. Pure functions, no I/O.
 *
 * Facts (DCMI 1.5 spec section 6.6.1; ipmitool and
 * FreeIPMI output): the response is cc, 0xDC, then current, min, max, avg
 * (16-bit LE W), a 32-bit timestamp, a 32-bit averaging period in ms and a
 * state byte whose bit 0x40 means "power measurement active". Field
 * problems: all zeros, 0 W, 65535 W, "deactivated", a 1 ms period.
 */
#ifndef TB_POWERMETER_IPMI_H
#define TB_POWERMETER_IPMI_H

#include <stddef.h>
#include <stdint.h>

/* One DCMI power reading, whatever it was parsed from. */
typedef struct tb_ipmi_dcmi {
    double cur_w, min_w, max_w, avg_w; /* NaN when absent */
    uint32_t period_ms;                /* the BMC's averaging window; 0 unknown */
    int active;                        /* 1 active, 0 not active, -1 not reported */
} tb_ipmi_dcmi;

/*
 * Parses the text of `ipmitool dcmi power reading` (old layout: one label
 * per line; newer: timestamp and sampling period on one line) or FreeIPMI
 * `ipmi-dcmi --get-system-power-statistics`, by label, not by line position.
 * Returns 0 when at least the current reading was found, else -1.
 */
int tb_ipmi_parse_dcmi_text(const char *text, tb_ipmi_dcmi *out);

/*
 * Parses the raw DCMI Get Power Reading response (n bytes starting with the
 * completion code). Returns 0; -1 when too short or the group extension is
 * not 0xDC; or the nonzero completion code (e.g. 0x89 "reporting period out
 * of range", 0xC1 "invalid command") as a positive number.
 */
int tb_ipmi_parse_dcmi_raw(const uint8_t *b, size_t n, tb_ipmi_dcmi *out);

/*
 * Parses what `ipmitool raw` prints for a reply: the response data after the
 * completion code (ipmitool prints no code on success), as hex bytes
 * separated by spaces and newlines (" dc 64 00 ..."). Returns the number of
 * bytes put in out, or -1 for a token that is not one or two hex digits, or
 * more than cap bytes.
 */
int tb_ipmi_parse_raw_hex(const char *text, uint8_t *out, size_t cap);

/* 1 when the reading's min, max and average are all known and equal: a
 * "flat" reading (TB_SAMPLE_FLAT). */
int tb_ipmi_dcmi_flat(const tb_ipmi_dcmi *d);

/*
 * The "not averaged" verdict on a BMC: of its valid readings, at least
 * TB_IPMI_NOT_AVERAGED_MIN and every one flat. One flat reading proves
 * nothing (a steady load, a coarse BMC); ten in a row do, for a BMC that
 * claims to average over its window: a real server's draw moves by more
 * than the 1 W resolution of DCMI within a second, so a BMC that averages
 * gives min < max nearly every time. Such a BMC's "average" is one
 * instantaneous value, and its window says nothing about the reading.
 */
#define TB_IPMI_NOT_AVERAGED_MIN 10
int tb_ipmi_not_averaged(long long flat_readings, long long valid_readings);

/*
 * Parses `ipmitool sensor reading NAME` ("Pwr Consumption  | 120") or its
 * -c form ("Pwr Consumption,120") for the sensor called name. Returns 0 with
 * *watts, or -1 when the sensor is not in the text or has no number ("na").
 */
int tb_ipmi_parse_sensor_text(const char *text, const char *name, double *watts);

/*
 * Judges a reading: returns TB_SAMPLE_INVALID for 0 W, >= 65535 W (the
 * "no reading" patterns BMCs send), a negative or NaN value, or a DCMI
 * reading not marked active (active == 0); else 0.
 */
unsigned tb_ipmi_judge(double watts, int active);

#endif
