/*
 * numfmt.c: integers and doubles as decimal text (numfmt.h).
 *
 * A finite double is m * 2^e with a 53-bit integer m. For v in [1e-5, 2^53)
 * the 17 significant digits are q = round(m * 10^k / 2^-e) with k = 16 - X,
 * X the decimal exponent of v (k is 1..21, so m * 10^k < 2^53 * 2^70 fits
 * in 128 bits). The remainder of that division says exactly whether the
 * digits round up, and a tie goes to the even digit, as glibc's printf does
 * in the default rounding mode.
 */
#include "common/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128; /* GCC and Clang on 64-bit targets */

/* The digits of u (u < 10^20) at out, without a NUL; their number. */
static size_t put_digits(uint64_t u, char *out) {
    char tmp[24];
    size_t n = 0, i;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

size_t tb_fmt_uint64(uint64_t v, char *out) {
    size_t n = put_digits(v, out);
    out[n] = '\0';
    return n;
}

size_t tb_fmt_int64(int64_t v, char *out) {
    if (v < 0) {
        out[0] = '-';
        return 1 + tb_fmt_uint64(0 - (uint64_t)v, out + 1);
    }
    return tb_fmt_uint64((uint64_t)v, out);
}

static const uint64_t pow10_u64[20] = {1ULL,
                                       10ULL,
                                       100ULL,
                                       1000ULL,
                                       10000ULL,
                                       100000ULL,
                                       1000000ULL,
                                       10000000ULL,
                                       100000000ULL,
                                       1000000000ULL,
                                       10000000000ULL,
                                       100000000000ULL,
                                       1000000000000ULL,
                                       10000000000000ULL,
                                       100000000000000ULL,
                                       1000000000000000ULL,
                                       10000000000000000ULL,
                                       100000000000000000ULL,
                                       1000000000000000000ULL,
                                       10000000000000000000ULL};

static u128 pow10_u128(int k) { return k < 20 ? (u128)pow10_u64[k] : (u128)pow10_u64[19] * pow10_u64[k - 19]; }

/* round(m * 10^k / 2^s), ties to even; s in 1..127, m * 10^k < 2^128. */
static uint64_t scaled_round(uint64_t m, int k, int s) {
    u128 p = (u128)m * pow10_u128(k);
    u128 q = p >> s, r = p - (q << s), half = (u128)1 << (s - 1);
    if (r > half || (r == half && (q & 1))) q++;
    return (uint64_t)q;
}

/* The 17 digits of v = m * 2^-s (1e-5 <= v < 2^53) in *q and its decimal
 * exponent in *x. */
static void digits17(uint64_t m, int s, double v, uint64_t *q, int *x) {
    int e10 = (int)floor(log10(v));
    u128 p;
    /* log10 may be one off near a power of ten: settle it exactly,
     * 10^e10 <= m * 2^-s < 10^(e10+1), on the truncated value */
    for (;;) {
        int k = 16 - e10;
        p = ((u128)m * pow10_u128(k)) >> s;
        if (p < (u128)pow10_u64[16])
            e10--;
        else if (p >= (u128)pow10_u64[17])
            e10++;
        else
            break;
    }
    *q = scaled_round(m, 16 - e10, s);
    if (*q == pow10_u64[17]) { /* 99999999999999999.5 rounded up */
        *q = pow10_u64[16];
        e10++;
    }
    *x = e10;
}

/* %.17g's text of digits q (17 of them) with decimal exponent x. */
static size_t put_g17(int neg, uint64_t q, int x, char *out) {
    char d[20];
    size_t n = 0, nd = 17;
    put_digits(q, d);
    while (nd > 1 && d[nd - 1] == '0') /* %g drops trailing zeros */
        nd--;
    if (neg) out[n++] = '-';
    if (x < -4 || x >= 17) { /* d.ddde-XX */
        out[n++] = d[0];
        if (nd > 1) {
            out[n++] = '.';
            memcpy(out + n, d + 1, nd - 1);
            n += nd - 1;
        }
        n += (size_t)sprintf(out + n, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
    } else if (x < 0) { /* 0.000ddd */
        out[n++] = '0';
        out[n++] = '.';
        for (int i = -1; i > x; i--)
            out[n++] = '0';
        memcpy(out + n, d, nd);
        n += nd;
    } else { /* ddd.ddd */
        size_t whole = (size_t)x + 1;
        memcpy(out + n, d, whole < nd ? whole : nd);
        n += whole < nd ? whole : nd;
        for (size_t i = nd; i < whole; i++)
            out[n++] = '0';
        if (nd > whole) {
            out[n++] = '.';
            memcpy(out + n, d + whole, nd - whole);
            n += nd - whole;
        }
    }
    out[n] = '\0';
    return n;
}

size_t tb_fmt_double17(double v, char *out) {
    double a = fabs(v);
    int neg = signbit(v) != 0, e2, x;
    uint64_t m, q;
    if (a < 9007199254740992.0 && a == (double)(int64_t)a) { /* a whole number below 2^53, and -0 */
        size_t n = 0;
        if (neg) out[n++] = '-';
        n += put_digits((uint64_t)a, out + n);
        out[n] = '\0';
        return n;
    }
    if (!(a >= 1e-5 && a < 9007199254740992.0)) return (size_t)snprintf(out, TB_NUMFMT_LEN, "%.17g", v);
    m = (uint64_t)ldexp(frexp(a, &e2), 53); /* a = m * 2^(e2 - 53), m < 2^53 exactly */
    digits17(m, 53 - e2, a, &q, &x);
    return put_g17(neg, q, x, out);
}
