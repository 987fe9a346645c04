/*
 * tb_common.h: the few things every tilebench module shares: the error model
 * (int status + caller-supplied "what: why" buffer, in the style of redis's
 * anetSetError), allocation that aborts on failure, monotonic/wall clocks in
 * microseconds, duration parsing, and the one global: the log.
 */
#ifndef TB_COMMON_H
#define TB_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define TB_VERSION "0.1.0"
#define TB_ERR_LEN 256

#if defined(__GNUC__)
#define TB_WUR          __attribute__((warn_unused_result))
#define TB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TB_WUR
#define TB_PRINTF(a, b)
#endif

/*
 * TB_ASSERT(cond): a check of the program's own logic (an index within its
 * array, a count within its limit), never of input. Active in debug builds
 * (NDEBUG not defined: CMAKE_BUILD_TYPE=Debug) and in sanitizer and fuzz
 * builds (TB_SANITIZE or TB_FUZZ defined, or the compiler's own ASan macro),
 * where a false cond prints file:line and the condition and aborts. Compiled
 * out in release builds: cond is then not evaluated (it is still
 * type-checked), so it must have no side effects.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define TB_ASSERT_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TB_ASSERT_SANITIZER 1
#endif
#if !defined(NDEBUG) || defined(TB_SANITIZE) || defined(TB_FUZZ) || defined(TB_ASSERT_SANITIZER)
#include <stdio.h>
#include <stdlib.h>
#define TB_ASSERT(cond)                                                                                                \
    ((cond) ? (void)0                                                                                                  \
            : (fprintf(stderr, "%s:%d: %s: assertion failed: %s\n", __FILE__, __LINE__, __func__, #cond), abort()))
#else
#define TB_ASSERT(cond) ((void)sizeof((cond) ? 1 : 0))
#endif

/* Exit codes of the CLI contract (docs/cli.md, "Exit codes"). */
enum { TB_EXIT_OK = 0, TB_EXIT_VALIDATE = 1, TB_EXIT_USAGE = 2, TB_EXIT_ABORTED = 3 };

/* Writes "fmt..." into err (TB_ERR_LEN bytes); err may be NULL. A message
 * that does not fit is cut and ends in "..." (never silently). */
void tb_seterr(char *err, const char *fmt, ...) TB_PRINTF(2, 3);
/* Writes "what: msg" into err with msg on one line: its line ends and tabs
 * become spaces and trailing blanks go (for a library's message, such as
 * libpq's PQerrorMessage, which ends in a newline and may hold several). */
void tb_seterr_line(char *err, const char *what, const char *msg);
/* snprintf into out (len bytes) for descriptive text shown to a person (a
 * meter's model, a host's governors) that does not cut silently: a text that
 * does not fit is cut to end in "..." and the call returns -1 (0 when whole),
 * so a caller for whom a cut value is wrong can refuse it instead. */
int tb_fmt_capped(char *out, size_t len, const char *fmt, ...) TB_PRINTF(3, 4);

/* Allocation: abort with a message on out-of-memory (internal paths only). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Monotonic clock in µs (CLOCK_MONOTONIC): all durations inside tilebench. */
uint64_t tb_now_us(void);
/* Wall clock in µs since the epoch (CLOCK_REALTIME): only for timestamps at the edges. */
int64_t tb_wall_us(void);
/* Formats wall-clock µs as ISO 8601 UTC "2026-11-30T15:57:40Z" into buf (>= 32 bytes). */
void tb_format_wall(int64_t wall_us, char *buf, size_t len);

/*
 * Parses a duration with a unit suffix: "500ms", "30s", "5m", "2h", "250us";
 * a bare number means seconds. Decimals are allowed ("1.5s"). Negative values,
 * unknown suffixes and overflow are errors. Result in µs.
 * Returns 0, or -1 with err = "'10x': unknown unit 'x' (use us, ms, s, m, h)".
 */
int tb_parse_duration_us(const char *s, uint64_t *out_us, char *err) TB_WUR;

/* Formats µs as a short human duration ("1.5s", "5m", "250ms") into buf. */
void tb_format_duration(uint64_t us, char *buf, size_t len);

/*
 * Strict number parsing: the whole string must be a number; errors name the
 * value. Returns 0 or -1 with err set.
 */
int tb_parse_u64(const char *s, uint64_t *out, char *err) TB_WUR;
int tb_parse_double(const char *s, double *out, char *err) TB_WUR;

/* The log: the one global. Levels: 0 error, 1 warn, 2 info, 3 debug. */
enum { TB_LOG_ERROR = 0, TB_LOG_WARN, TB_LOG_INFO, TB_LOG_DEBUG };
void tb_log_set_level(int level);
void tb_log(int level, const char *fmt, ...) TB_PRINTF(2, 3);

#endif
