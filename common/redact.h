/*
 * redact.h: passwords and other secrets replaced by "***" before anything is
 * shown, logged or stored.
 */
#ifndef TB_COMMON_REDACT_H
#define TB_COMMON_REDACT_H

#include <stddef.h>

/*
 * Copies uri into out (len bytes, always NUL-terminated, truncated if short)
 * with any password replaced by "***": user:PASS@host in the authority, and
 * the values of password=, passwd=, pass=, pwd=, token=, secret=, apikey=,
 * api_key= query parameters (and of keys ending in password, passwd, token
 * or secret, such as sslpassword= or access_token=); see redact.c.
 */
void tb_redact_uri(const char *uri, char *out, size_t len);

/*
 * Replaces in text (len bytes, NUL-terminated) every copy of a secret of uri
 * (its userinfo password, its secret query values) with "***": for error
 * text that may quote the URI or parts of it raw.
 */
void tb_redact_scrub(char *text, size_t len, const char *uri);

#endif
