/*
 * sim_yokogawa.c: the Yokogawa dialect of the emulator (sim_private.h).
 *
 * Subset served (WT310 :NUMeric, WT210 :MEASure; short or long mnemonics,
 * any case, several commands per line separated by ';'), after the WT310
 * and WT210 communication interface user's manuals:
 *   *IDN? *RST *CLS :COMM:HEAD ON|OFF|? :COMM:VERB ON|OFF|? :COMM:REM
 *   :SYST:COMM:COMM  :NUM:FORM ASC|?  :NUM:NORM:NUM n|?  :NUM:NORM:ITEM<x>
 *   FUNC,ELEM|?  :NUM:NORM:VAL?  :INP|CONF:VOLT|CURR:RANG v|?  :INP|CONF:
 *   VOLT|CURR:AUTO b|?  :INP|CONF:CFAC 3|6|?  :RATE v|?  :STAT:ERR?
 *   :MEAS[:NORM]:ITEM:<V|A|W|PF|VA|VAR> ON|OFF|?  :MEAS[:NORM]:VAL?
 * Unknown headers set error 113 "Undefined header", bad values 224 "Illegal
 * parameter value" (reported by :STAT:ERR?); like IEEE 488.2 instruments it
 * sends nothing for a command without '?'.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metersim/sim_private.h"
#include "powermeter/ranges.h"

static const char *const wt210_names[6] = {"V", "A", "W", "PF", "VA", "VAR"};

static const double vranges[] = {7.5, 15, 30, 60, 75, 150, 300, 600};
static const double aranges[] = {0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20};

static int in_list(double v, const double *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (fabs(v - list[i]) <= list[i] * 1e-6) return 1;
    return 0;
}

int sim_range_ok(int volt, double v) { return volt ? in_list(v, vranges, 8) : in_list(v, aranges, 13); }

void sim_yoko_reset(tb_msim *m) {
    m->head = 1; /* Yokogawa powers up with headers on; drivers turn them off */
    m->verb = 0;
    m->err_code = 0;
    m->nitems = 3;
    snprintf(m->items[0].func, sizeof m->items[0].func, "U");
    snprintf(m->items[1].func, sizeof m->items[1].func, "I");
    snprintf(m->items[2].func, sizeof m->items[2].func, "P");
    for (int i = 0; i < 10; i++)
        m->items[i].elem = 1;
    for (int i = 3; i < 10; i++)
        snprintf(m->items[i].func, sizeof m->items[i].func, "P");
    m->wt210_on[0] = m->wt210_on[1] = m->wt210_on[2] = 1;
    m->wt210_on[3] = m->wt210_on[4] = m->wt210_on[5] = 0;
    /* 300 V x 2 A fixed: a power range of 600 W, which a WT310's 45-66 Hz
     * accuracy (0.1% of reading + 0.1% of range) keeps within the 1% rule
     * from 67 W up to the 140% of 2 A it serves before over-range (640 W at
     * 230 V): the steady loads tests serve (traces of 70-360 W). */
    m->vrange = 300;
    m->arange = 2;
    m->vauto = m->aauto = 0;
    m->cfac = 3;
    m->rate_s = 0.5;
}

/* ---- values ---- */

/* The value of function f for element e (0 = SIGMA) at the given total
 * watts: element e takes its share (sim_share) of W and A. */
static double yoko_func(const tb_msim *m, const char *f, int e, double total_w) {
    double share = e == 0 ? 1.0 : sim_share(m, e), w = total_w * share;
    double u = isfinite(m->src_v) ? m->src_v : m->o.volts, pf = isfinite(m->src_pf) ? m->src_pf : m->o.pf;
    double i = isfinite(m->src_a) ? m->src_a * share : u > 0 && pf > 0 ? w / (u * pf) : 0;
    double s = u * i;
    if (strcmp(f, "P") == 0 || strcmp(f, "W") == 0) return w;
    if (strcmp(f, "U") == 0 || strcmp(f, "V") == 0 || strcmp(f, "URMS") == 0) return u;
    if (strcmp(f, "I") == 0 || strcmp(f, "A") == 0 || strcmp(f, "IRMS") == 0) return i;
    if (strcmp(f, "LAMB") == 0 || strcmp(f, "LAMBDA") == 0 || strcmp(f, "PF") == 0) return pf;
    if (strcmp(f, "S") == 0 || strcmp(f, "VA") == 0) return s;
    if (strcmp(f, "Q") == 0 || strcmp(f, "VAR") == 0) return sqrt(fmax(0, s * s - w * w));
    if (strcmp(f, "FU") == 0 || strcmp(f, "FI") == 0) return 50.0;
    return NAN;
}

/* Formats one value as a WT would in ASCII (NR3), or its error text. */
static void fmt_nr3(char *buf, size_t len, double v) {
    if (isnan(v))
        snprintf(buf, len, "NAN");
    else
        snprintf(buf, len, "%.5E", v);
}

/* Counts a served reply with fault f (or none: -1) and applies the implausible ones to *total. */
static void count_served(tb_msim *m, int f, double *total) {
    m->c.served++;
    if (f == TB_MSIM_FAULT_NAN) m->c.nan++;
    if (f == TB_MSIM_FAULT_INF) m->c.overrange++;
    if (f == TB_MSIM_FAULT_NEGATIVE || f == TB_MSIM_FAULT_INCONSISTENT) {
        m->c.implausible++;
        sim_implausible_values(m, f, total);
    } else if (f < 0 && *total < 0) {
        m->c.implausible++; /* a negative value of the trace, served as it is */
    }
}

/* The fault for value request n: its kind (or -1) and in *elem the one
 * element it hits (0: the whole reply). A whole-reply fault is
 * sim_fault_for's; an element's (--fault KIND:N@E) is looked up first. */
static int fault_for(const tb_msim *m, uint64_t n, int *elem) {
    *elem = 0;
    for (int i = 0; i < m->o.nfaults; i++)
        if (m->o.faults[i].element > 0 && n % m->o.faults[i].every == 0) {
            *elem = m->o.faults[i].element;
            return m->o.faults[i].kind;
        }
    return sim_fault_for(m, n, 0);
}

/* One value: item function func of element e at total watts, with fault f
 * on element fe (0: every element). */
static void one_value(tb_msim *m, char *v, size_t len, int wt210, const char *func, int e, int f, int fe, int over,
                      double total) {
    int hit = fe == 0 || fe == e;
    if (f == TB_MSIM_FAULT_NAN && hit)
        snprintf(v, len, wt210 ? "9.91E+37" : "NAN");
    else if ((f == TB_MSIM_FAULT_INF && hit) || over)
        snprintf(v, len, wt210 ? "9.9E+37" : "INF");
    else if (f == TB_MSIM_FAULT_NEGATIVE && fe > 0 && fe == e && (strcmp(func, "P") == 0 || strcmp(func, "I") == 0))
        fmt_nr3(v, len, func[0] == 'P' ? SIM_NEG_W : SIM_NEG_A);
    else
        fmt_nr3(v, len, yoko_func(m, func, e, total));
}

/* The values of a value query (its header first when headers are on) into buf. */
static void format_values(tb_msim *m, char *buf, size_t len, int wt210, int f, int fe, int over, double total) {
    size_t off = 0;
    buf[0] = '\0';
    if (m->head) off += (size_t)snprintf(buf, len, wt210 ? ":MEAS:NORM:VAL " : ":NUM:NORM:VAL ");
    for (int k = 0, first = 1; k < (wt210 ? 6 : m->nitems); k++) {
        char v[32];
        if (wt210 && !m->wt210_on[k]) continue;
        one_value(m, v, sizeof v, wt210, wt210 ? wt210_names[k] : m->items[k].func, wt210 ? 1 : m->items[k].elem, f, fe,
                  over, total);
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", first ? "" : ",", v);
        first = 0;
    }
}

/* Auto-range: the input moves to the smallest range of its crest factor's
 * list that holds the value (RANG? then reports it), as an analyzer's
 * auto-range settles; the largest when none does. */
static void auto_range(tb_msim *m, double u, double i) {
    tb_range_list rl;
    double r;
    tb_ranges_for("WT310", m->cfac, &rl);
    if (m->vauto && isfinite(u)) {
        r = tb_range_pick(rl.volts, rl.n_volts, fabs(u), 1.0);
        m->vrange = r > 0 ? r : rl.volts[rl.n_volts - 1];
    }
    if (m->aauto && isfinite(i)) {
        r = tb_range_pick(rl.amps, rl.n_amps, fabs(i), 1.0);
        m->arange = r > 0 ? r : rl.amps[rl.n_amps - 1];
    }
}

/* Builds the reply to a value query, applying the fault. Returns SIM_REPLY
 * to send buf, SIM_STALL or SIM_DISCONNECT. */
static int yoko_values(tb_msim *m, char *buf, size_t len, int wt210) {
    uint64_t n = ++m->c.requests;
    int fe, f = fault_for(m, n, &fe);
    double total = sim_source_watts(m, tb_now_us()), u, i;
    int over = 0;

    if (f == TB_MSIM_FAULT_STALL) {
        m->c.stalled++;
        return SIM_STALL;
    }
    if (f == TB_MSIM_FAULT_DISCONNECT) {
        m->c.disconnects++;
        return SIM_DISCONNECT;
    }
    if (f == TB_MSIM_FAULT_GARBAGE) {
        m->c.served++;
        m->c.garbage++;
        snprintf(buf, len, "#\x7f%%@!garbage~~%llu", (unsigned long long)n);
        return SIM_REPLY;
    }
    if (fe > 0 && f == TB_MSIM_FAULT_NEGATIVE) { /* one element's values only: the others and the total stay */
        m->c.served++;
        m->c.implausible++;
    } else {
        count_served(m, f, &total);
    }
    /* A real over-range: an input is above 140% of a fixed range. The ranges
     * apply to every element (the range commands carry no element), so the
     * element of the largest share decides. */
    u = isfinite(m->src_v) ? m->src_v : m->o.volts;
    i = yoko_func(m, "I", 0, total) * sim_max_share(m);
    auto_range(m, u, i);
    if ((!m->vauto && u > SIM_OVER_RANGE * m->vrange) || (!m->aauto && i > SIM_OVER_RANGE * m->arange)) over = 1;
    format_values(m, buf, len, wt210, f, fe, over, total);
    if (over && f < 0) m->c.overrange++;
    return SIM_REPLY;
}

/* ---- one command ---- */

/* One command of a line, as parsed. */
typedef struct yoko_cmd {
    char hdr[128];   /* as sent, without the '?' */
    char arg[128];   /* the rest, trailing blanks cut */
    char canon[160]; /* the header in short forms joined by ':' ("NUM:NORM:ITEM") */
    int query;       /* the header ended in '?' */
    int idx;         /* the suffix of ITEM<x> */
    int wt210;
    char out[SIM_LINE]; /* a query's answer, without the header */
    int raw;            /* out is the whole reply (value queries): no header added */
} yoko_cmd;

/* Long and short forms of the mnemonics the subset uses (short = a prefix). */
static const char *const mnemonics[][2] = {
    {"COMMUNICATE", "COMM"}, {"HEADER", "HEAD"},  {"VERBOSE", "VERB"}, {"REMOTE", "REM"},     {"NUMERIC", "NUM"},
    {"NORMAL", "NORM"},      {"VALUE", "VAL"},    {"NUMBER", "NUM"},   {"FORMAT", "FORM"},    {"INPUT", "INP"},
    {"VOLTAGE", "VOLT"},     {"CURRENT", "CURR"}, {"RANGE", "RANG"},   {"CFACTOR", "CFAC"},   {"STATUS", "STAT"},
    {"ERROR", "ERR"},        {"SYSTEM", "SYST"},  {"MEASURE", "MEAS"}, {"CONFIGURE", "CONF"}, {"ELEMENT", "ELEM"},
    {"SIGMA", "SIGM"},       {"ITEM", "ITEM"},    {"AUTO", "AUTO"},    {"RATE", "RATE"},      {"SAMPLE", "SAMP"},
    {"DEGREE", "DEGR"},
};

/* Canonical short form of one header token (uppercased, suffix digits kept apart). */
static void canon_token(const char *tok, size_t n, char *out, size_t len, int *suffix) {
    char up[32];
    size_t k = 0, d = n;
    *suffix = 0;
    while (d > 0 && isdigit((unsigned char)tok[d - 1]))
        d--;
    if (d < n && d > 0)
        *suffix = atoi(tok + d);
    else
        d = n;
    for (k = 0; k < d && k + 1 < sizeof up; k++)
        up[k] = (char)toupper((unsigned char)tok[k]);
    up[k] = '\0';
    for (size_t i = 0; i < sizeof mnemonics / sizeof mnemonics[0]; i++) {
        if (strcmp(up, mnemonics[i][0]) == 0 || strcmp(up, mnemonics[i][1]) == 0) {
            snprintf(out, len, "%s", mnemonics[i][1]);
            return;
        }
    }
    snprintf(out, len, "%s", up);
}

/* Splits cmd into header and argument. Returns -1 for an empty command. */
static int parse_command(const char *cmd, int wt210, yoko_cmd *c) {
    const char *p = cmd;
    size_t hn;
    memset(c, 0, sizeof *c);
    c->wt210 = wt210;
    while (*p == ' ')
        p++;
    hn = strcspn(p, " ");
    if (hn == 0) return -1;
    if (hn >= sizeof c->hdr) hn = sizeof c->hdr - 1;
    memcpy(c->hdr, p, hn);
    c->hdr[hn] = '\0';
    p += hn;
    while (*p == ' ')
        p++;
    snprintf(c->arg, sizeof c->arg, "%s", p);
    for (size_t k = strlen(c->arg); k > 0 && isspace((unsigned char)c->arg[k - 1]); k--)
        c->arg[k - 1] = '\0';
    c->query = c->hdr[strlen(c->hdr) - 1] == '?';
    if (c->query) c->hdr[strlen(c->hdr) - 1] = '\0';
    return 0;
}

/* The canonical header: short forms joined by ':', the suffix of ITEM in idx. */
static void canon_header(yoko_cmd *c) {
    const char *tok = c->hdr[0] == ':' ? c->hdr + 1 : c->hdr;
    while (*tok) {
        size_t n = strcspn(tok, ":");
        char t[32];
        int suffix;
        canon_token(tok, n, t, sizeof t, &suffix);
        if (strcmp(t, "ITEM") == 0) c->idx = suffix;
        /* WT210 item element (ELEM, SIGM): one element only, so left out */
        if (strcmp(t, "ELEM") != 0 && strcmp(t, "SIGM") != 0) {
            if (c->canon[0]) strncat(c->canon, ":", sizeof c->canon - strlen(c->canon) - 1);
            strncat(c->canon, t, sizeof c->canon - strlen(c->canon) - 1);
        }
        tok += n;
        if (*tok == ':') tok++;
    }
    /* ":MEAS:ITEM:W" is ":MEAS:NORM:ITEM:W" with NORM left out. */
    if (strncmp(c->canon, "MEAS:", 5) == 0 && strncmp(c->canon, "MEAS:NORM:", 10) != 0) {
        char tmp[160];
        snprintf(tmp, sizeof tmp, "MEAS:NORM:%s", c->canon + 5);
        snprintf(c->canon, sizeof c->canon, "%s", tmp);
    }
}

static int parse_bool(const char *a, int *out) {
    if (strcasecmp(a, "ON") == 0 || strcmp(a, "1") == 0)
        *out = 1;
    else if (strcasecmp(a, "OFF") == 0 || strcmp(a, "0") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

/* A flag that is set with ON|OFF|1|0 and read with '?'. */
static void bool_setting(tb_msim *m, yoko_cmd *c, int *flag) {
    if (c->query)
        snprintf(c->out, sizeof c->out, "%d", *flag);
    else if (parse_bool(c->arg, flag) != 0)
        m->err_code = 224;
}

/* *IDN? *RST *CLS *OPC? (IEEE 488.2 common commands). */
static void common_command(tb_msim *m, yoko_cmd *c) {
    if (strcasecmp(c->hdr, "*IDN") == 0 && c->query) {
        snprintf(c->out, sizeof c->out, "%s",
                 c->wt210             ? "YOKOGAWA,760401,91K000001,F3.01"  /* WT210: model code, not name */
                 : m->o.elements == 3 ? "YOKOGAWA,WT333E,C3VD30030E,F1.04" /* several elements: a WT330 */
                 : m->o.elements == 2 ? "YOKOGAWA,WT332E,C3VD30031E,F1.04"
                                      : "YOKOGAWA,WT310,C2PH13047V,F1.03");
    } else if (strcasecmp(c->hdr, "*RST") == 0) {
        sim_yoko_reset(m);
    } else if (strcasecmp(c->hdr, "*CLS") == 0) {
        m->err_code = 0;
    } else if (strcasecmp(c->hdr, "*OPC") == 0 && c->query) {
        snprintf(c->out, sizeof c->out, "1");
    } else {
        m->err_code = 113;
    }
}

/* :COMM:HEAD and :COMM:VERB */
static int cmd_comm_flag(tb_msim *m, yoko_cmd *c) {
    bool_setting(m, c, c->canon[5] == 'H' ? &m->head : &m->verb);
    return SIM_REPLY;
}

/* :COMM:REM and :SYST:COMM:COMM (remote mode: always on) */
static int cmd_remote(tb_msim *m, yoko_cmd *c) {
    (void)m;
    if (c->query) snprintf(c->out, sizeof c->out, "1");
    return SIM_REPLY;
}

static int cmd_error(tb_msim *m, yoko_cmd *c) {
    if (!c->query) {
        m->err_code = 113;
        return SIM_REPLY;
    }
    if (m->err_code == 0)
        snprintf(c->out, sizeof c->out, "0,\"No error\"");
    else if (m->err_code == 113)
        snprintf(c->out, sizeof c->out, "113,\"Undefined header\"");
    else
        snprintf(c->out, sizeof c->out, "%d,\"Illegal parameter value\"", m->err_code);
    m->err_code = 0;
    return SIM_REPLY;
}

static int cmd_num_format(tb_msim *m, yoko_cmd *c) {
    if (c->query)
        snprintf(c->out, sizeof c->out, "%s", m->verb ? "ASCII" : "ASC");
    else if (strncasecmp(c->arg, "ASC", 3) != 0)
        m->err_code = 224; /* only ASCII is emulated */
    return SIM_REPLY;
}

static int cmd_num_items(tb_msim *m, yoko_cmd *c) {
    if (c->query) {
        snprintf(c->out, sizeof c->out, "%d", m->nitems);
    } else {
        int n = atoi(c->arg);
        if (n < 1 || n > SIM_MAX_ITEMS)
            m->err_code = 224;
        else
            m->nitems = n;
    }
    return SIM_REPLY;
}

/* :NUM:NORM:ITEM<x> FUNC,ELEM|SIGMA */
static void set_item(tb_msim *m, yoko_cmd *c) {
    char fn[sizeof m->items[0].func] = "", el[16] = ""; /* a longer function is no function: error 224 */
    const char *comma = strchr(c->arg, ',');
    size_t fl = comma ? (size_t)(comma - c->arg) : strlen(c->arg);
    int e;
    if (fl == 0 || fl >= sizeof fn) {
        m->err_code = 224;
        return;
    }
    for (size_t k = 0; k < fl; k++)
        fn[k] = (char)toupper((unsigned char)c->arg[k]);
    snprintf(el, sizeof el, "%s", comma ? comma + 1 : "1");
    if (strcasecmp(el, "SIGMA") == 0 || strcasecmp(el, "SIGM") == 0)
        e = 0;
    else
        e = atoi(el);
    if (isnan(yoko_func(m, fn, 1, 1.0)) || e < 0 || e > m->o.elements) {
        m->err_code = 224;
        return;
    }
    snprintf(m->items[c->idx - 1].func, sizeof m->items[c->idx - 1].func, "%s", fn);
    m->items[c->idx - 1].elem = e;
}

static int cmd_num_item(tb_msim *m, yoko_cmd *c) {
    if (c->idx < 1 || c->idx > SIM_MAX_ITEMS) {
        m->err_code = 224;
    } else if (c->query) {
        const item *it = &m->items[c->idx - 1];
        if (it->elem)
            snprintf(c->out, sizeof c->out, "%s,%d", it->func, it->elem);
        else
            snprintf(c->out, sizeof c->out, "%s,SIGMA", it->func);
    } else {
        set_item(m, c);
    }
    return SIM_REPLY;
}

/* :NUM:NORM:VAL? (WT310), :MEAS:NORM:VAL? (WT210) */
static int cmd_values(tb_msim *m, yoko_cmd *c) {
    if (!c->query) {
        m->err_code = 113;
        return SIM_REPLY;
    }
    c->raw = 1; /* yoko_values puts the header in itself */
    return yoko_values(m, c->out, sizeof c->out, c->wt210);
}

/* :MEAS:NORM:ITEM:<V|A|W|PF|VA|VAR> ON|OFF (WT210) */
static int cmd_wt210_item(tb_msim *m, yoko_cmd *c) {
    int k;
    for (k = 0; k < 6; k++)
        if (strcmp(c->canon + 15, wt210_names[k]) == 0) break;
    if (k == 6)
        m->err_code = 113;
    else
        bool_setting(m, c, &m->wt210_on[k]);
    return SIM_REPLY;
}

/* :INP|CONF:VOLT|CURR:RANG v ("300V", "2A" too) */
static int cmd_range(tb_msim *m, yoko_cmd *c) {
    int volt = strstr(c->canon, "VOLT") != NULL;
    double *r = volt ? &m->vrange : &m->arange;
    char *end;
    double v;
    if (c->query) {
        fmt_nr3(c->out, sizeof c->out, *r);
        return SIM_REPLY;
    }
    v = strtod(c->arg, &end);
    while (*end && isalpha((unsigned char)*end))
        end++;
    if (end == c->arg || *end || !sim_range_ok(volt, v)) {
        m->err_code = 224;
    } else {
        *r = v;
        *(volt ? &m->vauto : &m->aauto) = 0; /* setting a range turns auto off */
    }
    return SIM_REPLY;
}

/* :INP|CONF:VOLT|CURR:AUTO b */
static int cmd_auto(tb_msim *m, yoko_cmd *c) {
    bool_setting(m, c, strstr(c->canon, "VOLT") ? &m->vauto : &m->aauto);
    return SIM_REPLY;
}

/* :INP|CONF:CFAC 3|6 */
static int cmd_cfac(tb_msim *m, yoko_cmd *c) {
    if (c->query)
        snprintf(c->out, sizeof c->out, "%d", m->cfac);
    else if (strcmp(c->arg, "3") == 0 || strcmp(c->arg, "6") == 0)
        m->cfac = atoi(c->arg);
    else
        m->err_code = 224;
    return SIM_REPLY;
}

/* :RATE 100MS|250MS|500MS|1S|2S|5S (WT310) */
static int cmd_rate(tb_msim *m, yoko_cmd *c) {
    static const char *const rates[] = {"100MS", "250MS", "500MS", "1S", "2S", "5S"};
    static const double secs[] = {0.1, 0.25, 0.5, 1, 2, 5};
    int k;
    if (c->query) {
        fmt_nr3(c->out, sizeof c->out, m->rate_s);
        return SIM_REPLY;
    }
    for (k = 0; k < 6; k++)
        if (strcasecmp(c->arg, rates[k]) == 0) break;
    if (k == 6)
        m->err_code = 224;
    else
        m->rate_s = secs[k];
    return SIM_REPLY;
}

#define ON_WT310 1
#define ON_WT210 2
#define ON_BOTH  3

/* The commands by canonical header; prefix: the header only starts so. */
static const struct {
    const char *canon;
    int models; /* ON_* */
    int prefix;
    int (*run)(tb_msim *m, yoko_cmd *c);
} commands[] = {
    {"COMM:HEAD", ON_BOTH, 0, cmd_comm_flag},
    {"COMM:VERB", ON_BOTH, 0, cmd_comm_flag},
    {"COMM:REM", ON_BOTH, 0, cmd_remote},
    {"SYST:COMM:COMM", ON_BOTH, 0, cmd_remote},
    {"STAT:ERR", ON_BOTH, 0, cmd_error},
    {"NUM:FORM", ON_WT310, 0, cmd_num_format},
    {"NUM:NORM:NUM", ON_WT310, 0, cmd_num_items},
    {"NUM:NORM:ITEM", ON_WT310, 0, cmd_num_item},
    {"NUM:NORM:VAL", ON_WT310, 0, cmd_values},
    {"MEAS:NORM:VAL", ON_WT210, 0, cmd_values},
    {"MEAS:NORM:ITEM:", ON_WT210, 1, cmd_wt210_item},
    {"INP:VOLT:RANG", ON_WT310, 0, cmd_range},
    {"INP:CURR:RANG", ON_WT310, 0, cmd_range},
    {"CONF:VOLT:RANG", ON_WT210, 0, cmd_range},
    {"CONF:CURR:RANG", ON_WT210, 0, cmd_range},
    {"INP:VOLT:AUTO", ON_WT310, 0, cmd_auto},
    {"INP:CURR:AUTO", ON_WT310, 0, cmd_auto},
    {"CONF:VOLT:AUTO", ON_WT210, 0, cmd_auto},
    {"CONF:CURR:AUTO", ON_WT210, 0, cmd_auto},
    {"INP:CFAC", ON_WT310, 0, cmd_cfac},
    {"CONF:CFAC", ON_WT210, 0, cmd_cfac},
    {"RATE", ON_WT310, 0, cmd_rate},
};

/* Runs a command with a canonical header; an unknown one is error 113. */
static int dispatch(tb_msim *m, yoko_cmd *c) {
    int model = c->wt210 ? ON_WT210 : ON_WT310;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        size_t n = strlen(commands[i].canon);
        if (!(commands[i].models & model)) continue;
        if (commands[i].prefix ? strncmp(c->canon, commands[i].canon, n) == 0
                               : strcmp(c->canon, commands[i].canon) == 0)
            return commands[i].run(m, c);
    }
    m->err_code = 113;
    return SIM_REPLY;
}

/* Appends a command's answer to the line's reply (';' between answers). */
static void append_reply(const tb_msim *m, const yoko_cmd *c, char *rep, size_t replen) {
    size_t l = strlen(rep);
    if (c->raw)
        snprintf(rep + l, replen - l, "%s%s", l ? ";" : "", c->out);
    else if (!c->query || !c->out[0])
        return;
    else if (m->head && c->hdr[0] != '*')
        snprintf(rep + l, replen - l, "%s:%s %s", l ? ";" : "", c->canon, c->out);
    else
        snprintf(rep + l, replen - l, "%s%s", l ? ";" : "", c->out);
}

/* Handles one Yokogawa command. Appends a query's reply to rep. Returns
 * SIM_REPLY, SIM_STALL (no reply to this line) or SIM_DISCONNECT. */
static int yoko_command(tb_msim *m, const char *cmd, char *rep, size_t replen) {
    yoko_cmd c;
    int rc = SIM_REPLY;
    if (parse_command(cmd, m->o.protocol == TB_MSIM_WT210, &c) != 0) return SIM_REPLY;
    if (c.hdr[0] == '*') {
        common_command(m, &c);
    } else {
        canon_header(&c);
        rc = dispatch(m, &c);
        if (rc != SIM_REPLY) return rc;
    }
    append_reply(m, &c, rep, replen);
    return SIM_REPLY;
}

int sim_yoko_line(tb_msim *m, client *c, const char *line) {
    char rep[SIM_LINE * 2] = "", one[SIM_LINE];
    const char *p = line;
    if (strcasecmp(line, "tb:count?") == 0) {
        sim_put_counters(m, c, "\n");
        return SIM_REPLY;
    }
    while (*p) {
        size_t n = strcspn(p, ";");
        int rc;
        if (n >= sizeof one) n = sizeof one - 1;
        memcpy(one, p, n);
        one[n] = '\0';
        rc = yoko_command(m, one, rep, sizeof rep);
        if (rc != SIM_REPLY) return rc;
        p += n;
        if (*p == ';') p++;
    }
    if (rep[0]) {
        strncat(rep, "\n", sizeof rep - strlen(rep) - 1);
        sim_put(c, rep);
    }
    return SIM_REPLY;
}
