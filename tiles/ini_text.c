/*
 * ini_text.c: INI text read with libinih one whole line at a time (see
 * ini_text.h for why), and secrets redacted from such text.
 */
#include "tiles/ini_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/redact.h"

/* ---- reading ------------------------------------------------------------------ */

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* What the line l (n bytes, newline included) is, for a message: the key
 * before '=' or ':', or what else the line is. */
static void line_what(const char *l, size_t n, char *out, size_t outlen) {
    size_t k = 0, e;
    while (k < n && (is_blank(l[k]) || l[k] == '\r'))
        k++;
    if (k < n && (l[k] == ';' || l[k] == '#')) {
        snprintf(out, outlen, "(a comment)");
        return;
    }
    if (k < n && l[k] == '[') {
        snprintf(out, outlen, "(a section header)");
        return;
    }
    e = k;
    while (e < n && l[e] != '=' && l[e] != ':' && l[e] != '\n' && l[e] != '\0')
        e++;
    if (e >= n || l[e] == '\n' || l[e] == '\0') {
        snprintf(out, outlen, "(no key = value)");
        return;
    }
    while (e > k && is_blank(l[e - 1]))
        e--;
    snprintf(out, outlen, "%.*s%s", (int)(e - k < 40 ? e - k : 40), l + k, e - k > 40 ? "..." : "");
}

/* Notes the section a header line opens, as inih reads it: the text between
 * '[' and the first ']'. */
static void note_section(tb_ini_text *t, const char *l, size_t n) {
    size_t k = 0;
    const char *close;
    while (k < n && is_blank(l[k]))
        k++;
    if (k >= n || l[k] != '[') return;
    close = memchr(l + k, ']', n - k);
    if (close) snprintf(t->section, sizeof t->section, "%.*s", (int)(close - (l + k + 1)), l + k + 1);
}

static char *refuse(tb_ini_text *t, const char *l, size_t n, const char *why) {
    char what[64];
    line_what(l, n, what, sizeof what);
    if (t->section[0])
        tb_seterr(t->bad, "%.200s:%d: [%.60s] %s: %s", t->name, t->line, t->section, what, why);
    else
        tb_seterr(t->bad, "%.200s:%d: %s: %s", t->name, t->line, what, why);
    t->bad_line = t->line;
    return NULL; /* inih takes it as the end of the text */
}

/* inih's reader (fgets' contract: at most num - 1 bytes and a NUL): one whole
 * line per call, or NULL at the end or for a line it refuses. */
static char *reader(char *str, int num, void *stream) {
    tb_ini_text *t = stream;
    const char *l = t->text + t->off, *nl, *nul;
    size_t n, body;
    char why[160];
    if (t->off >= t->len || t->bad_line) return NULL;
    nl = memchr(l, '\n', t->len - t->off);
    n = nl ? (size_t)(nl - l) + 1 : t->len - t->off;
    body = n - (nl != NULL);
    if (body > 0 && l[body - 1] == '\r') body--;
    t->line++;
    if ((nul = memchr(l, '\0', n)) != NULL) {
        snprintf(why, sizeof why, "a NUL byte at byte %zu of the line (a binary file?)", (size_t)(nul - l) + 1);
        return refuse(t, l, n, why);
    }
    if (body > TB_INI_MAX_LINE || num < 1 || n >= (size_t)num) {
        snprintf(why, sizeof why, "line of %zu bytes, longer than the %d allowed", body,
                 num > 3 && num - 3 < TB_INI_MAX_LINE ? num - 3 : TB_INI_MAX_LINE);
        return refuse(t, l, n, why);
    }
    memcpy(str, l, n);
    str[n] = '\0';
    t->off += n;
    note_section(t, l, n);
    return str;
}

int tb_ini_parse(tb_ini_text *t, const char *name, const char *text, size_t len, ini_handler handler, void *user) {
    memset(t, 0, sizeof *t);
    t->name = name;
    t->text = text;
    t->len = len;
    /* Debian's libinih reads these at each parse: one heap buffer of the
     * whole limit, never grown (growing calls the reader again mid-line) */
    ini_use_stack = false;
    ini_allow_realloc = false;
    ini_max_line = TB_INI_MAX_LINE + 3;
    ini_initial_alloc = TB_INI_MAX_LINE + 3;
    return ini_parse_stream(reader, t, handler, user);
}

const char *tb_ini_line(const char *text, size_t len, int line, size_t *n) {
    size_t off = 0;
    for (int i = 1; off < len; i++) { /* as the reader: a line starts before the end */
        const char *l = text + off, *nl = memchr(l, '\n', len - off);
        size_t ln = nl ? (size_t)(nl - l) : len - off;
        if (i == line) {
            *n = ln;
            return l;
        }
        off += ln + (nl != NULL);
    }
    return NULL;
}

/* ---- redaction ---------------------------------------------------------------- */

typedef struct buf {
    char *b;
    size_t len, cap;
} buf;

static void put(buf *b, const char *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap)
            b->cap *= 2;
        b->b = xrealloc(b->b, b->cap);
    }
    memcpy(b->b + b->len, p, n);
    b->len += n;
    b->b[b->len] = '\0';
}

/* A password= or sslpassword= word at v[i..n) (PostgreSQL's keyword form):
 * its end after the value (quoted: up to the closing quote, \' escaped;
 * unquoted: up to a blank, "\ " being an escaped blank as libpq takes it),
 * or 0; *key_end is the end of its key. In stored text (text = 1), the words
 * after an unquoted value that are no keyword=value of their own are taken
 * as the rest of a password with an unquoted blank, which libpq refuses:
 * hidden with it. */
static size_t password_word(const char *v, size_t i, size_t n, size_t *key_end, int text) {
    size_t j = i;
    if (i > 0 && !strchr(" \t'\"(,", v[i - 1])) return 0;
    if (n - i > 11 && strncasecmp(v + i, "sslpassword", 11) == 0)
        j = i + 11;
    else if (n - i > 8 && strncasecmp(v + i, "password", 8) == 0)
        j = i + 8;
    else
        return 0;
    *key_end = j;
    while (j < n && is_blank(v[j]))
        j++;
    if (j >= n || v[j] != '=') return 0;
    j++;
    while (j < n && is_blank(v[j]))
        j++;
    if (j < n && v[j] == '\'') {
        j++;
        while (j < n && v[j] != '\'')
            j += (v[j] == '\\' && j + 1 < n) ? 2 : 1;
        if (j < n) j++;
    } else {
        char q = i > 0 && (v[i - 1] == '\'' || v[i - 1] == '"') ? v[i - 1] : '\n'; /* quoted in a message */
        while (j < n && !is_blank(v[j]) && v[j] != '\r' && v[j] != '\n' && v[j] != q)
            j += (v[j] == '\\' && j + 1 < n && v[j + 1] != '\n') ? 2 : 1;
        while (text) {
            size_t w = j, e;
            while (w < n && is_blank(v[w]))
                w++;
            for (e = w; e < n && !is_blank(v[e]) && v[e] != '\r' && v[e] != '\n' && v[e] != '=';)
                e++;
            if (e == w || (e < n && v[e] == '=')) break;
            j = e;
        }
    }
    return j;
}

/* A key naming a password: mail_password, password, passwd. */
static int secret_key(const char *k, size_t n) {
    return (n >= 8 && strncasecmp(k + n - 8, "password", 8) == 0) ||
           (n >= 6 && strncasecmp(k + n - 6, "passwd", 6) == 0);
}

static int is_key_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.'; }

/* A "KEY =" or "KEY:" whose KEY names a password, starting at v[i] anywhere
 * in a line (after a comment sign, after an inline comment, after other
 * words): the offset just past its '=' or ':', or 0. */
static size_t secret_assign(const char *v, size_t i, size_t n) {
    size_t j = i;
    if (i > 0 && is_key_char(v[i - 1])) return 0;
    while (j < n && is_key_char(v[j]))
        j++;
    if (j == i || !secret_key(v + i, j - i)) return 0;
    while (j < n && is_blank(v[j]))
        j++;
    return j < n && (v[j] == '=' || v[j] == ':') ? j + 1 : 0;
}

/* An environment assignment in a command, KEY=VALUE at v[i] with KEY naming
 * a secret (PGPASSWORD, MYSQL_PWD-like *_PASSWORD, *PASSWD, REDISCLI_AUTH and
 * other *_AUTH, *_TOKEN, *_SECRET): the end of its VALUE (a quoted one up to
 * its closing quote), or 0; *key_end just past the '='. */
static size_t env_assign(const char *v, size_t i, size_t n, size_t *key_end) {
    static const char *const tails[] = {"_auth", "_token", "_secret"};
    size_t j = i, kl;
    int secret;
    if (i > 0 && is_key_char(v[i - 1])) return 0;
    while (j < n && (isalnum((unsigned char)v[j]) || v[j] == '_'))
        j++;
    kl = j - i;
    if (kl == 0 || j >= n || v[j] != '=') return 0;
    secret = secret_key(v + i, kl);
    for (size_t t = 0; !secret && t < sizeof tails / sizeof tails[0]; t++) {
        size_t tl = strlen(tails[t]);
        secret = kl > tl && strncasecmp(v + j - tl, tails[t], tl) == 0;
    }
    if (!secret) return 0;
    *key_end = ++j;
    if (j < n && (v[j] == '\'' || v[j] == '"')) {
        char q = v[j++];
        while (j < n && v[j] != q && v[j] != '\n')
            j += (v[j] == '\\' && q == '"' && j + 1 < n) ? 2 : 1;
        if (j < n && v[j] == q) j++;
        return j;
    }
    while (j < n && !strchr(" \t\r\n;&|", v[j]))
        j += (v[j] == '\\' && j + 1 < n && v[j + 1] != '\n') ? 2 : 1;
    return j;
}

/* Copies v[0..n) to b with password= values and URI passwords as ***. In
 * stored text (text = 1), a password key's value anywhere in the line is
 * hidden to the end of the line, too; a message keeps what follows it. */
static void put_redacted(buf *b, const char *v, size_t n, int text) {
    size_t i = 0, verbatim = 0; /* v[verbatim..i) was copied as is */
    while (i < n) {
        size_t k = 0, j = password_word(v, i, n, &k, text);
        if (j) {
            put(b, v + i, k - i);
            put(b, "=***", 4);
            i = verbatim = j;
            continue;
        }
        if (text && (j = secret_assign(v, i, n)) != 0) {
            size_t eol = n;
            while (eol > j && (v[eol - 1] == '\n' || v[eol - 1] == '\r'))
                eol--;
            put(b, v + i, j - i);
            if (eol > j) put(b, " ***", 4);
            i = verbatim = eol;
            continue;
        }
        if ((j = env_assign(v, i, n, &k)) != 0) {
            put(b, v + i, k - i);
            put(b, "***", 3);
            i = verbatim = j;
            continue;
        }
        if (n - i > 3 && strncmp(v + i, "://", 3) == 0) { /* a URI: from its word's start to a blank */
            size_t start = i, end = i;
            char *in, *out;
            while (start > verbatim && !strchr(" \t='\"", v[start - 1]))
                start--;
            while (end < n && !strchr(" \t\r\n'\"", v[end]))
                end++;
            in = xmalloc(end - start + 1);
            out = xmalloc(2 * (end - start) + 16); /* "***" may be longer than what it hides */
            memcpy(in, v + start, end - start);
            in[end - start] = '\0';
            tb_redact_uri(in, out, 2 * (end - start) + 16);
            b->len -= i - start; /* drop the scheme already copied */
            put(b, out, strlen(out));
            free(in);
            free(out);
            i = verbatim = end;
            continue;
        }
        put(b, v + i, 1);
        i++;
    }
}

/* One line (n bytes, its newline included) into b, redacted. A comment
 * prefix is looked through: a commented-out line holds the same secrets. */
static void redact_line(buf *b, const char *l, size_t n) {
    size_t k = 0, ks, ke, d;
    while (k < n && is_blank(l[k]))
        k++;
    while (k < n && (l[k] == ';' || l[k] == '#'))
        k++;
    while (k < n && is_blank(l[k]))
        k++;
    ks = k;
    while (k < n && !strchr("=: \t\r\n", l[k]))
        k++;
    ke = d = k;
    while (d < n && is_blank(l[d]))
        d++;
    if (ke > ks && secret_key(l + ks, ke - ks)) {
        size_t eol = n;
        if (d < n && (l[d] == '=' || l[d] == ':')) ke = d + 1;
        while (eol > ke && (l[eol - 1] == '\n' || l[eol - 1] == '\r'))
            eol--;
        put(b, l, ke);
        if (eol > ke) put(b, " ***", 4);
        put(b, l + eol, n - eol);
        return;
    }
    put(b, l, ks);
    put_redacted(b, l + ks, n - ks, 1);
}

char *tb_ini_redact(const char *text, size_t len, size_t *out_len) {
    buf b = {xmalloc(len + 64), 0, len + 64};
    size_t pos = 0;
    b.b[0] = '\0';
    while (pos < len) {
        const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - l) + 1 : len - pos;
        redact_line(&b, l, n);
        pos += n;
    }
    if (out_len) *out_len = b.len;
    return b.b;
}

void tb_ini_redact_msg(char *s, size_t size) {
    size_t n = strlen(s);
    buf b = {xmalloc(n + 64), 0, n + 64};
    b.b[0] = '\0';
    put_redacted(&b, s, n, 0);
    snprintf(s, size, "%s", b.b);
    free(b.b);
}

char *tb_ini_read_file(const char *path, const char *what, size_t *len, char *err) {
    struct stat sb;
    char chunk[8192];
    size_t n;
    tb_buf b;
    FILE *f = fopen(path, "r");
    if (!f) {
        tb_seterr(err, "%s %s: %s", what, path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        tb_seterr(err, "%s %s: is a directory, not a %s file", what, path, strcmp(what, "config") == 0 ? "tile" : what);
        return NULL;
    }
    tb_buf_init(&b, TB_INI_MAX_FILE);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (tb_buf_add(&b, chunk, n) != 0) break;
    if (b.overflow || ferror(f)) {
        if (b.overflow)
            tb_seterr(err, "%s %s: larger than %zu MiB", what, path, TB_INI_MAX_FILE >> 20);
        else
            tb_seterr(err, "%s %s: %s", what, path, strerror(errno));
        fclose(f);
        tb_buf_free(&b);
        return NULL;
    }
    fclose(f);
    return tb_buf_take(&b, len);
}
