/*
 * ranges.h: a power analyzer's input ranges and the ranging pass's choice
 * among them (docs/meters.md, "Ranging"). Pure functions: no I/O.
 *
 * The lists are a WT310's (WT310E user's manual IM WT310E-01EN, the input
 * specifications: voltage 15/30/60/150/300/600 V and current 0.5/1/2/5/10/20 A
 * at crest factor 3; at crest factor 6 every range is halved, 7.5..300 V and
 * 0.25..10 A). A WT210 and a WT330 element have the same voltage and
 * current ranges of its direct input (the 5-200 mA ones of the small
 * current input are left out: a server draws more). A PTDaemon serves the
 * analyzer it drives; tilebench gives it the WT310 list too.
 */
#ifndef TB_POWERMETER_RANGES_H
#define TB_POWERMETER_RANGES_H

#define TB_RANGES_MAX 8

/* The RMS a peak may reach above the ranging pass's peak before the chosen
 * range is too small: 25% (a WT310 takes 130% of range before it
 * over-ranges at crest factor 3, so load swings up to 1.3 / 1.25 = +4%
 * above that are still measured). */
#define TB_RANGING_HEADROOM 1.25

typedef struct tb_range_list {
    int n_volts, n_amps;
    double volts[TB_RANGES_MAX]; /* ascending, V */
    double amps[TB_RANGES_MAX];  /* ascending, A */
} tb_range_list;

/* The ranges of model ("WT310", "WT210 (760401)", "" unknown: the WT310's)
 * at crest factor cf (6: halved; anything else: 3). */
void tb_ranges_for(const char *model, double cf, tb_range_list *out);

/*
 * The smallest range of list[0..n) (ascending) that holds peak x headroom.
 * Returns that range, or -1 when even the largest does not (or peak is not
 * a finite value >= 0).
 */
double tb_range_pick(const double *list, int n, double peak, double headroom);

/* A range as a driver sends it: value > 0 as "%g", else auto_word (the
 * analyzer's word for auto-range: PTDaemon's "Auto", a Yokogawa's "auto"). */
void tb_range_setting(char *out, unsigned long n, double value, const char *auto_word);

#endif
