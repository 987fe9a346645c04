#!/usr/bin/env bash
# test_qos_word.sh: one QoS word per level everywhere. A short demo-like sweep
# (the standard tile, 1..3 tiles, the embedded SUT that `run` starts itself)
# leaves rules not judged (too few ops in 5 s). Its console has one QoS line
# per level ("QoS pass|fail|incomplete (N judged: ...)") and at most one line
# under it (the hint, or the failed rules), none of the old rule-by-rule
# lines; and each level's word is the same in the console, JSON, CSV, text,
# HTML, runs and validate, and equals the word worked out here from the JSON's
# rule rows (not by tilebench's code). The hint's steady state is recomputed
# from the same rows. `--verbose` brings the rule lines back.
source "$(dirname "$0")/lib.sh"

STAGES=(--ramp-up 2s --warm-up 1s --steady 5s --ramp-down 0 --idle 1s)
"$TILEBENCH" run --tiles 1..3 "${STAGES[@]}" --sut-dir "$T/sut" --db "$T/r.db" --report "$T/r.html" \
    >"$T/run.out" 2>"$T/run.err" || fail "run exited $?: $(cat "$T/run.out" "$T/run.err")"
cat "$T/run.out"

# ---- the console: one QoS line per level, at most one line under it ----
for n in 1 2 3; do
    expect "level $n: level lines with QoS" "$(grep -c "^level $n tiles phase 1: .*  QoS " "$T/run.out")" -eq 1
    # the QoS lines of level n: its level line and what follows it up to the next level's first line
    awk -v n="$n" '$0 ~ "^level " n " tiles phase 1: " { on = 1; print; next } /^level / { on = 0 } on && /QoS/' \
        "$T/run.out" >"$T/qos$n.lines"
    expect "level $n: QoS lines (the level's and at most one hint or failure line)" "$(wc -l <"$T/qos$n.lines")" -le 2
    expect "level $n: hint lines" "$(grep -c '^  QoS hint: ' "$T/qos$n.lines" || true)" -le 1
done
expect "no rule-by-rule lines without --verbose" "$(grep -c 'QoS not judged' "$T/run.out" || true)" -eq 0
expect "no old wording" "$(grep -Ec 'QoS (PASS|FAIL)|rules? not judged: too few ops' "$T/run.out" || true)" -eq 0

console_word() { sed -n "s/^level $1 tiles phase 1: .*  QoS \([a-z]*\) ([0-9]* judged: .*/\1/p" "$T/run.out"; }

# ---- every other output ----
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
"$TILEBENCH" report latest --db "$T/r.db" --format csv -o "$T/r.csv"
"$TILEBENCH" report latest --db "$T/r.db" >"$T/r.txt"
"$TILEBENCH" runs --db "$T/r.db" >"$T/runs.out"
rc=0
"$TILEBENCH" validate latest --db "$T/r.db" >"$T/validate.out" 2>&1 || rc=$?
cat "$T/validate.out" | grep -v '^    QoS NOT JUDGED' || true

# The word from the rule rows, worked out here: fail when a judged row failed,
# else incomplete when a row was not judged, else pass. And the hint's steady
# state: the most of steady_s x min_ops / ops over the rows not judged that
# saw ops, rounded up (10 s steps to 10 min, 1 min to 1 h, 5 min above).
python3 - "$T/r.json" "$T/r.csv" "$T/r.html" >"$T/words.txt" 2>"$T/words.err" <<'PYEOF' || fail "words: $(cat "$T/words.err")"
import csv, json, math, re, sys
levels = json.load(open(sys.argv[1]))["run"]["levels"]
csv_words = {}
for row in csv.DictReader(open(sys.argv[2])):
    csv_words.setdefault(int(row["tiles"]), set()).add(row["qos_verdict"])
html = open(sys.argv[3]).read()
html_words = {}
for m in re.finditer(r'<tr class="level[^"]*"><td class="n">(\d+)</td><td class="n">1</td>(?:<td[^>]*>[^<]*</td>){4}'
                     r'<td><span class="[a-z]+">([a-z]+)</span>', html):
    html_words[int(m.group(1))] = m.group(2)
def up(s):
    step = 10 if s <= 600 else 60 if s <= 3600 else 300
    return math.ceil(math.ceil(s) / step) * step
for lv in levels:
    rows = lv["qos"] + lv["tile_qos"]
    word = ("fail" if any(r["judged"] and r["pass"] is False for r in rows)
            else "incomplete" if any(not r["judged"] for r in rows) else "pass")
    need = [lv["steady_s"] * r["min_ops"] / r["ops"] for r in rows if not r["judged"] and r["ops"] and r["min_ops"]]
    hint = "%d" % up(max(need)) if need else "-"
    cw = csv_words.get(lv["tiles"], set())
    print(lv["tiles"], word, lv["qos_verdict"], ",".join(sorted(cw)), html_words.get(lv["tiles"], "?"), hint)
PYEOF
cat "$T/words.txt"
expect "levels" "$(wc -l <"$T/words.txt")" -eq 3
worst=pass
while read -r tiles word json csvw htmlw hint; do
    expect "level $tiles: JSON's word = the word from its rule rows" "$json" = "$word"
    expect "level $tiles: console" "$(console_word "$tiles")" = "$word"
    expect "level $tiles: CSV" "$csvw" = "$word"
    expect "level $tiles: HTML" "$htmlw" = "$word"
    expect "level $tiles: text" "$(awk -v n="$tiles" '/^Load levels$/ { on = 1; next } on && /^$/ { on = 0 }
        on && $1 == n && $2 == 1 { print $6 }' "$T/r.txt")" = "$word"
    expect "level $tiles: validate" \
        "$(sed -n "s/^  $tiles tiles phase 1: QoS \([a-z]*\) ([0-9]* judged: .*/\1/p" "$T/validate.out")" = "$word"
    if [ "$word" = incomplete ]; then
        expect "level $tiles: console hint's steady state (recomputed from the rule rows)" \
            "$(sed -n 's/^  QoS hint: a steady state of at least \([0-9]*\) s .*/\1/p' "$T/qos$tiles.lines")" = "$hint"
        grep -q "^    QoS hint  a steady state of at least $hint s " "$T/validate.out" ||
            fail "validate: no hint of $hint s at $tiles tiles"
    fi
    [ "$word" = fail ] && worst=fail
    [ "$word" = incomplete ] && [ "$worst" = pass ] && worst=incomplete
done <"$T/words.txt"
expect "the run was left incomplete (rules not judged in 5 s)" "$(grep -c ' incomplete ' "$T/words.txt")" -ge 1
expect "runs: the run's word is its worst level's" "$(awk '$1 == "1" { print $(NF - 2) }' "$T/runs.out")" = "$worst"
if [ "$worst" = pass ]; then
    expect "validate exit" "$rc" -eq 0
else
    expect "validate exit" "$rc" -eq 1
    grep -q "^FAIL: .*QoS $worst at " "$T/validate.out" || fail "validate's last line does not say QoS $worst"
fi

# ---- --verbose: the rule-by-rule lines come back under the level line ----
rm -rf "$T/sut" # the first run stopped its servers; cleanup_dir stops those of this one if it fails
"$TILEBENCH" run --tiles 1 "${STAGES[@]}" --verbose --sut-dir "$T/sut" --db "$T/v.db" >"$T/verbose.out" 2>&1 ||
    fail "run --verbose exited $?: $(cat "$T/verbose.out")"
expect "--verbose: rule lines" "$(grep -c '^    QoS not judged' "$T/verbose.out" || true)" -ge 1
"$TILEBENCH" run --help | grep -q -- '--verbose' || fail "run --help does not document --verbose"
echo "PASS test_qos_word"
