/*
 * redact.c: secrets out of what tilebench shows. A URI or conninfo keeps its
 * shape with the password replaced by "***" (tb_redact_uri), and error text
 * that may quote a URI raw loses every copy of its secrets (tb_redact_scrub).
 * Meter URIs, telemetry URLs, tile-file values and campaign commands all use
 * these, so there is one set of rules.
 */
#include "common/redact.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/tb_common.h"

/* Appends n bytes to out[len] at *pos, keeping room for the NUL; drops the excess. */
static void put(char *out, size_t len, size_t *pos, const char *s, size_t n) {
    size_t room = len - 1 - *pos;
    if (n > room) n = room;
    memcpy(out + *pos, s, n);
    *pos += n;
}

/* Query keys whose values are secrets (compared case-insensitively): the
 * usual short names, and any key ending in "password" or "passwd"
 * (sslpassword=, db_password=, ...). */
static int is_secret_key(const char *k, size_t n) {
    /* whole keys, and endings that make a key secret (sslpassword, access_token) */
    static const char *const keys[] = {"password", "passwd", "pass", "pwd", "token", "secret", "apikey", "api_key"};
    static const char *const endings[] = {"password", "passwd", "token", "secret"};
    size_t i;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i]) == n && strncasecmp(keys[i], k, n) == 0) return 1;
    for (i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        size_t kl = strlen(endings[i]);
        if (n > kl && strncasecmp(endings[i], k + n - kl, kl) == 0) return 1;
    }
    return 0;
}

/*
 * Finds the password span [*pw, *at) of uri's userinfo, or sets *pw NULL.
 * The userinfo '@' is the last '@' before the first '/', '?' or '#' of the
 * authority; when there is none there, the last '@' of the whole URI, so a
 * password holding an unescaped '/', '?' or '#' is still found (a false hit
 * only hides more than needed; in the opaque form the password must start
 * before the first '/', '?' or '#', so "estimate:?x=a@b" has none).
 */
static void find_password(const char *uri, const char **pw_out, const char **at_out) {
    const char *auth, *auth_end, *at = NULL, *pw = NULL, *p, *q;
    int opaque, fallback = 0;
    p = strstr(uri, "://");
    q = uri + strcspn(uri, "?#");
    opaque = !(p && p < q);
    auth = opaque ? uri : p + 3;
    auth_end = auth + strcspn(auth, "/?#");
    for (p = auth; p < auth_end; p++)
        if (*p == '@') at = p;
    if (!at && (at = strrchr(auth, '@')) != NULL) fallback = 1;
    if (at) {
        const char *c1 = NULL, *c2 = NULL;
        for (p = auth; p < at; p++) {
            if (*p != ':') continue;
            if (!c1)
                c1 = p;
            else if (!c2)
                c2 = p;
        }
        if (opaque && c2)
            pw = c2 + 1;
        else if (c1)
            pw = c1 + 1;
        else /* "user%3Apass@": a percent-encoded colon still starts a password */
            for (p = auth; !pw && p + 3 <= at; p++)
                if (p[0] == '%' && p[1] == '3' && (p[2] == 'A' || p[2] == 'a')) pw = p + 3;
        if (pw == at) pw = NULL; /* empty password */
        /* opaque form ("estimate:?x=a@b"): a password starts before the query */
        if (pw && fallback && opaque && pw >= auth_end) pw = NULL;
    }
    *pw_out = pw;
    *at_out = pw ? at : NULL;
}

/* Replaces every copy of s[0..n) in text (len bytes) with "***". */
static void scrub_span(char *text, size_t len, const char *s, size_t n) {
    char *needle, *out;
    const char *p = text, *h;
    size_t pos = 0;
    if (n == 0 || len == 0) return;
    needle = xmalloc(n + 1);
    memcpy(needle, s, n);
    needle[n] = '\0';
    out = xmalloc(len);
    while ((h = strstr(p, needle)) != NULL) {
        put(out, len, &pos, p, (size_t)(h - p));
        put(out, len, &pos, "***", 3);
        p = h + n;
    }
    put(out, len, &pos, p, strlen(p));
    out[pos] = '\0';
    memcpy(text, out, pos + 1);
    free(out);
    free(needle);
}

void tb_redact_scrub(char *text, size_t len, const char *uri) {
    const char *pw, *at, *p;
    if (!text || !uri) return;
    find_password(uri, &pw, &at);
    if (pw) scrub_span(text, len, pw, (size_t)(at - pw));
    p = strchr(at ? at : uri, '?');
    if (!p) return;
    for (p++; *p && *p != '#';) {
        size_t plen = strcspn(p, "&;#");
        size_t klen = strcspn(p, "=&;#");
        if (klen < plen && p[klen] == '=' && plen > klen + 1 && is_secret_key(p, klen))
            scrub_span(text, len, p + klen + 1, plen - klen - 1);
        p += plen;
        if (*p == '&' || *p == ';') p++;
    }
}

/*
 * Redaction rules:
 *  - "scheme://user:PASS@host..." -> "scheme://user:***@host...". The userinfo
 *    ends where find_password says, so an unescaped '@', '/', '?' or '#'
 *    inside the password is still hidden. The user stays visible.
 *  - Opaque form without "//" ("ipmi:user:PASS@host", or "user:PASS@host"):
 *    the password starts after the second ':' when there are two or more
 *    colons before the '@', else after the first. With no colon, a
 *    percent-encoded one ("user%3APASS@") starts it.
 *  - Query parameters password=, passwd=, pass=, pwd=, token=, secret=,
 *    apikey=, api_key=, and keys ending in password, passwd, token or secret
 *    (sslpassword=, access_token=), any case -> key=***.
 *  - Empty passwords are left as they are. Truncation only ever cuts.
 */
void tb_redact_uri(const char *uri, char *out, size_t len) {
    const char *at, *pw, *p, *q;
    size_t pos = 0;

    if (!out || len == 0) return;
    out[0] = '\0';
    if (!uri) return;

    find_password(uri, &pw, &at);

    /* Copy up to the query, hiding the password span [pw, at). */
    if (pw) {
        put(out, len, &pos, uri, (size_t)(pw - uri));
        put(out, len, &pos, "***", 3);
        p = at;
    } else {
        p = uri;
    }
    q = p + strcspn(p, "?#");
    put(out, len, &pos, p, (size_t)(q - p));
    p = q;

    /* Query: parameters separated by '&' (or ';'); stop at '#'. */
    if (*p == '?') {
        put(out, len, &pos, p, 1);
        p++;
        while (*p && *p != '#') {
            size_t plen = strcspn(p, "&;#");
            size_t klen = strcspn(p, "=&;#");
            if (klen < plen && p[klen] == '=' && plen > klen + 1 && is_secret_key(p, klen)) {
                put(out, len, &pos, p, klen + 1);
                put(out, len, &pos, "***", 3);
            } else {
                put(out, len, &pos, p, plen);
            }
            p += plen;
            if (*p == '&' || *p == ';') {
                put(out, len, &pos, p, 1);
                p++;
            }
        }
    }
    put(out, len, &pos, p, strlen(p)); /* fragment, if any */
    out[pos] = '\0';
}
