/*
 * yokogawa.h: the reply parsers of the Yokogawa driver (yokogawa.c), public
 * so unit tests can feed them raw reply lines. They are pure functions over
 * one reply line: no I/O, no state.
 *
 * Wire facts (Yokogawa WT310 and WT210 user's
 * manuals, communication chapters): replies are ASCII NR1/NR3 numbers
 * separated by ','; with :COMM:HEAD ON a reply is preceded by its header
 * (":NUM:NORM:VAL 1.0E+00"); in ASCII mode "NAN" means no data and "INF"
 * over-range; in 488.2/float modes the same errors are 9.91E+37 (no data) and
 * 9.9E+37 (over-range), and any value >= 9.9E+37 is an error.
 */
#ifndef TB_POWERMETER_YOKOGAWA_H
#define TB_POWERMETER_YOKOGAWA_H

#include <stddef.h>

/* The error sentinels of the 488.2/float modes (see the file comment). */
#define TB_YOKO_NODATA    9.91e37
#define TB_YOKO_OVERRANGE 9.9e37

/*
 * Parses one numeric field (surrounding blanks allowed) into *v. Returns the
 * TB_SAMPLE_* flags of the value: 0 for a number; TB_SAMPLE_INVALID with *v =
 * NaN for "NAN", 9.91E+37, or text that is not a number; TB_SAMPLE_OVERRANGE
 * with *v = NaN for "INF", "-INF" or any other magnitude >= 9.9E+37.
 */
unsigned tb_yoko_parse_value(const char *field, size_t len, double *v);

/*
 * Skips a header if the reply carries one (":NUM:NORM:VAL 1.0E+00" ->
 * "1.0E+00"; WT210 ":MEAS:NORM:VAL ..." likewise). Returns a pointer into line.
 */
const char *tb_yoko_strip_header(const char *line);

/*
 * Splits a :NUM:NORM:VAL? / :MEAS:NORM:VAL? reply into at most max values,
 * each with its flags (tb_yoko_parse_value). Returns the number of fields in
 * the reply (which may exceed max; only max are stored), or -1 when the line
 * is empty. Callers compare the count with the items they configured.
 */
int tb_yoko_parse_values(const char *line, double *vals, unsigned *flags, int max);

/*
 * Parses an *IDN? reply "YOKOGAWA,WT310,C2PH13047V,F1.03" into maker, model,
 * serial and firmware (each buffer 64 bytes; missing fields become "").
 * Returns 0, or -1 when the reply has fewer than 2 fields or a field is empty
 * in a way no instrument sends (e.g. garbage without commas).
 */
int tb_yoko_parse_idn(const char *line, char maker[64], char model[64], char serial[64], char firmware[64]);

/*
 * Parses a :STAT:ERR? reply: `113,"Undefined header"` -> code 113 and the
 * message without quotes (msg: len bytes). Returns 0, or -1 when the reply
 * does not start with an integer.
 */
int tb_yoko_parse_error(const char *line, int *code, char *msg, size_t len);

/*
 * Parses an on/off query reply ("1", "0", "ON", "OFF", with or without a
 * header). Returns 1, 0, or -1 when it is neither.
 */
int tb_yoko_parse_bool(const char *line);

#endif
