/*
 * meter_uri.h: the small URI helpers every meter driver needs: walk the
 * "?key=value&key=value" query, reject keys a driver does not know (so a typo
 * is an error, not a silently ignored option), percent-decode a component,
 * and parse option values with their units. No I/O.
 */
#ifndef TB_POWERMETER_METER_URI_H
#define TB_POWERMETER_METER_URI_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

/*
 * Finds key in the query text q (the part after '?', up to '#' or the end;
 * q may be NULL or empty) and copies its percent-decoded value into out (len
 * bytes). Returns 1 when found, 0 when absent, -1 with err when the value is
 * too long or badly escaped. A key given twice is an error (-1).
 */
int tb_meter_uri_param(const char *q, const char *key, char *out, size_t len, char *err) TB_WUR;

/*
 * Checks that every key in q is one of allowed (a NULL-terminated list).
 * Returns 0, or -1 with err "'foo': unknown parameter (keys: a, b)".
 */
int tb_meter_uri_check_keys(const char *q, const char *const *allowed, char *err) TB_WUR;

/*
 * Percent-decodes n bytes of in into out (len bytes, NUL-terminated):
 * "%40" -> '@'. Returns 0, or -1 when out is too short or an escape is bad.
 */
int tb_meter_uri_decode(const char *in, size_t n, char *out, size_t len);

/*
 * Parses a timeout/interval option: a duration with unit ("800ms", "2s"),
 * or a bare number of milliseconds ("800"). Must be 1 ms..1 h. Result in µs.
 * Returns 0, or -1 with err naming key and value.
 */
int tb_meter_uri_ms(const char *key, const char *val, uint64_t *out_us, char *err) TB_WUR;

/*
 * Parses a channel list "1,2" (channels= or element= of a meter URI): up to
 * max distinct numbers, each 1..9, into out; *n their count. Returns 0, or -1
 * with err naming key and value ("channels: '1,1': channel 1 given twice").
 */
int tb_meter_uri_channels(const char *key, const char *val, int *out, int max, int *n, char *err) TB_WUR;

#endif
