/*
 * linesock.h: the line transport that the instrument drivers share. Yokogawa
 * analyzers (TCP or RS-232) and SPEC PTDaemon all talk one text line per
 * message; this module connects (TCP with a timeout, or a serial port set up
 * with termios), sends a line with the protocol's terminator, and reads one
 * reply line with a deadline, so a silent meter becomes a timeout instead of
 * a hung poller. It knows nothing about any protocol.
 */
#ifndef TB_POWERMETER_LINESOCK_H
#define TB_POWERMETER_LINESOCK_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

typedef struct tb_linesock tb_linesock;

/* Return codes of tb_linesock_readline besides a length >= 0. */
enum { TB_LS_ERROR = -1, TB_LS_TIMEOUT = -2, TB_LS_CLOSED = -3 };

/* Longest reply line accepted, bytes (a WT310 :NUM:NORM:VAL? of 10 items is ~130). */
#define TB_LS_MAX_LINE 4096

/*
 * Connects to host:port over TCP within timeout_us (µs). host may be a name,
 * an IPv4 or an IPv6 address. Returns 0, or -1 with err
 * "connect HOST:PORT: why". Caller closes with tb_linesock_close.
 */
int tb_linesock_connect(const char *host, const char *port, uint64_t timeout_us, tb_linesock **out, char *err) TB_WUR;

/*
 * Opens a serial device (e.g. /dev/ttyUSB0 or a pty) raw, 8 data bits, no
 * parity, 1 stop bit, no flow control, at baud (1200..115200; Yokogawa
 * RS-232 default 9600 8N1, per the WT310 manual). Returns 0, or -1 with err
 * "PATH: why". Caller closes with tb_linesock_close.
 */
int tb_linesock_open_serial(const char *path, unsigned baud, tb_linesock **out, char *err) TB_WUR;

/*
 * Sends line followed by eol ("\n" for Yokogawa, "\r\n" for PTDaemon),
 * waiting at most timeout_us for the peer to accept it. Returns 0, or -1 with
 * err "send: why" (a closed peer gives "send: connection closed by peer").
 */
int tb_linesock_send(tb_linesock *c, const char *line, const char *eol, uint64_t timeout_us, char *err) TB_WUR;

/*
 * Reads one line into buf (len bytes, NUL-terminated) without its "\n" or
 * "\r\n", waiting at most timeout_us. Returns the line length, or
 * TB_LS_TIMEOUT ("reply timeout after N ms"), TB_LS_CLOSED ("connection
 * closed by peer") or TB_LS_ERROR, each with err. A line longer than len-1 is
 * an error. Bytes after the line stay buffered for the next call.
 */
int tb_linesock_readline(tb_linesock *c, char *buf, size_t len, uint64_t timeout_us, char *err) TB_WUR;

void tb_linesock_close(tb_linesock *c); /* NULL is a no-op */

/*
 * Splits "HOST:PORT", "[V6ADDR]:PORT" or "HOST" (then default_port) into
 * host and port buffers (each hostlen/portlen bytes). The authority ends at
 * '/', '?' or '#' or the end of the string; *rest (if not NULL) points there.
 * Returns 0, or -1 with err naming the text ("'host:x': bad port").
 */
int tb_linesock_split_hostport(const char *auth, const char *default_port, char *host, size_t hostlen, char *port,
                               size_t portlen, const char **rest, char *err) TB_WUR;

#endif
