#!/usr/bin/env bash
# test_report_browser.sh: the HTML report (`tilebench report --format html`)
# as a reader sees it, in headless Chromium (Debian's chromium +
# chromium-driver, driven by python3-selenium). Reports of 1 level measured
# through two meter emulators as WT310s (the first's every 3rd reading NaN:
# bad samples to mark; the real-meter table; the meters' sum), of 3 levels
# (a short real sweep), of 12 levels (the 1-level run's rows copied in SQL,
# one sample dropped: a gap;
# tests/tools/report_levels.py), of 12 levels with 6 agents, 2 infrastructure
# operations and each workload alone per level (the wide tables) and of a
# 90,000 s steady state (thinning), at 1400 and 800 px wide. Checks, in the
# rendered page: no element's content
# overflows its box unless that box scrolls; every SVG text (legends, value
# labels) lies inside its chart and overlaps no other text; no two series of
# a chart look alike; the saturation marker runs through no value label; the
# meters table fits at 1400 px; the power over time chart draws one point per
# good sample (counted in the database), or the thinned count its caption
# states, keeps the spike, marks every bad sample and gap, renders its text at
# 11 px or more, keeps its level and phase labels in a band above the plot
# where no line runs and leaves headroom above the highest sample; the
# agents, scores, infra and interference tables sit in scroll boxes; the latency value
# tables show the stored p95 and are visible in print; on estimated power the
# meters table's URI wraps in words (not a letter group a line), the cells
# it has no value for show "–", and each event's time stays on one line. Screenshots go to
# test-artifacts/ under ctest's working directory.
source "$(dirname "$0")/lib.sh"

DB="$T/results.db"
ART="$PWD/test-artifacts"
TOOLS="$TB_SOURCE_DIR/tests/tools"
mkdir -p "$ART"
rm -f "$ART"/report-*.png "$ART"/report-*.html

for prog in /usr/bin/chromium /usr/bin/chromedriver /usr/bin/python3 /usr/bin/sqlite3; do
    [ -x "$prog" ] || fail "$prog not found (scripts/install-deps installs chromium, chromium-driver, python3-selenium)"
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed (scripts/install-deps)"

start_sim wt --protocol wt310 --watts 180 --fault nan:3
WT_PORT=$PORT
start_sim wt2 --protocol wt310 --watts 60 # a second meter: the chart adds their sum
"$TILEBENCH" sut up --tiles 3 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 4s --ramp-down 0 --idle 2s \
    --meter "wt310://127.0.0.1:$WT_PORT" --meter "wt310://127.0.0.1:$PORT" --db "$DB" --label "metered" --quiet >"$T/run1.log" 2>&1 ||
    fail "run 1 exited $?: $(cat "$T/run1.log")"
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..3 --ramp-up 1s --warm-up 1s --steady 2s --ramp-down 0 --idle 1s \
    --db "$DB" --label "three levels" --quiet >"$T/run2.log" 2>&1 || fail "run 2 exited $?: $(cat "$T/run2.log")"
stop_sims
R12=$(/usr/bin/python3 "$TOOLS/report_levels.py" "$DB" 1 --levels 12 --drop-sample 5) || fail "12-level copy failed"
RLONG=$(/usr/bin/python3 "$TOOLS/report_levels.py" "$DB" 2 --long 90000 --spike 900) || fail "long copy failed"
# 12 levels, each with 6 agents, 2 infrastructure operations and its workloads alone: the wide tables
RWIDE=$(/usr/bin/python3 "$TOOLS/report_levels.py" "$DB" 1 --levels 12 --agents 6 --infra --interference) ||
    fail "wide-table copy failed"
expect "stages stored for run 1 (idle, ramp-up, warm-up, steady, ramp-down)" \
    "$(sqlite3 "$DB" "SELECT count(DISTINCT stage) FROM stages WHERE run_id = 1")" -eq 5
expect "run 2 has 3 steady stages" "$(sqlite3 "$DB" "SELECT count(*) FROM stages WHERE run_id = 2 AND stage = 'steady'")" -eq 3

# Ground truth from the database: meter 0's good and bad samples, the gaps
# (consecutive samples of one window more than 1.5 s apart), the meters, and
# the points of their sum (meter 0's samples with a good sample of every
# meter within half a second; 0 with one meter).
truth() {
    sqlite3 "$DB" "SELECT
        (SELECT count(*) FROM power_samples WHERE run_id = $1 AND meter_idx = 0 AND watts IS NOT NULL
            AND (flags & 39) = 0),
        (SELECT count(*) FROM power_samples WHERE run_id = $1 AND meter_idx = 0
            AND (watts IS NULL OR (flags & 39) != 0)),
        (SELECT count(*) FROM (SELECT mono_us - lag(mono_us) OVER w AS d,
            coalesce(level_id, 0) = lag(coalesce(level_id, 0)) OVER w AND
            coalesce(stage, '') = lag(coalesce(stage, '')) OVER w AS same
            FROM power_samples WHERE run_id = $1 AND meter_idx = 0 WINDOW w AS (ORDER BY mono_us))
            WHERE d > 1500000 AND same),
        (SELECT count(*) FROM meters WHERE run_id = $1),
        (SELECT CASE WHEN (SELECT count(*) FROM meters WHERE run_id = $1) < 2 THEN 0 ELSE
            (SELECT count(*) FROM power_samples a WHERE a.run_id = $1 AND a.meter_idx = 0 AND NOT EXISTS
                (SELECT 1 FROM meters m WHERE m.run_id = $1 AND NOT EXISTS
                    (SELECT 1 FROM power_samples b WHERE b.run_id = $1 AND b.meter_idx = m.idx
                        AND abs(b.mono_us - a.mono_us) <= 500000 AND b.watts IS NOT NULL AND (b.flags & 39) = 0)))
            END)" |
        tr '|' ' '
}
SPEC=""
for run in 1 2 "$R12" "$RLONG" "$RWIDE"; do
    "$TILEBENCH" report "$run" --db "$DB" --format html -o "$T/report-$run.html" >"$T/report-$run.log" 2>&1 ||
        fail "report $run exited $?: $(cat "$T/report-$run.log")"
    SPEC="$SPEC $run:$(truth "$run" | tr ' ' ',')"
done
echo "ok: ground truth (run:good,bad,gaps,meters,sum points):$SPEC"
read -r _ BAD1 _ METERS1 SUM1 <<<"$(truth 1)"
expect "run 1 has two meters" "$METERS1" -eq 2
expect "run 1 has points of the two meters' sum" "$SUM1" -ge 1
expect "the emulator's NaN readings are stored as bad samples" "$BAD1" -ge 1
read -r _ _ GAP12 _ _ <<<"$(truth "$R12")"
expect "the dropped sample is a gap" "$GAP12" -eq 1
SIZE=$(stat -c %s "$T/report-$RLONG.html")
expect "a 90,000-sample report stays small (bytes)" "$SIZE" -lt 2000000
# the stored p95 of run 1's ops (1 tile: the merged group is the op itself), for the latency tables
sqlite3 -separator ' ' "$DB" "SELECT w.name, o.name, o.p95_ms FROM ops o JOIN workloads w ON w.id = o.workload_id
    JOIN levels l ON l.id = w.level_id WHERE l.run_id = 1 AND o.p95_ms IS NOT NULL" >"$T/p95.txt"
expect "run 1 stored p95 values" "$(wc -l <"$T/p95.txt")" -ge 5

/usr/bin/python3 - "$T" "$ART" "$SPEC" "$RLONG" "$RWIDE" <<'PY' || fail "browser checks failed"
import base64, os, re, sys
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

tmp, art, spec, rlong, rwide = sys.argv[1:6]
truth = {}
for item in spec.split():
    run, vals = item.split(":")
    truth[run] = [int(v) for v in vals.split(",")]
p95 = {}
for line in open(os.path.join(tmp, "p95.txt")):
    w, op, v = line.split()
    p95[(w, op)] = float(v)

def ok(what, cond, detail=""):
    if not cond:
        raise SystemExit(f"FAIL: {what} {detail}")
    print(f"ok: {what}")

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
          "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + os.path.join(tmp, "chrome")):
    opts.add_argument(a)
if os.geteuid() == 0:
    opts.add_argument("--no-sandbox")  # Chromium refuses to run as root with its sandbox
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)

# Every problem of the layout, as text; [] when none.
LAYOUT_JS = r"""
const out = [];
const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : '');
const de = document.documentElement;
if (de.scrollWidth > window.innerWidth + 1) out.push('page scrolls sideways: ' + de.scrollWidth + ' > ' + window.innerWidth);
for (const e of document.body.querySelectorAll('*')) {
    if (e.closest('svg')) continue;
    const cs = getComputedStyle(e);
    if (cs.display === 'inline' || cs.display === 'none' || e.clientWidth === 0) continue;
    if (e.scrollWidth > e.clientWidth + 1 && cs.overflowX !== 'auto' && cs.overflowX !== 'scroll')
        out.push('overflow: ' + name(e) + ' content ' + e.scrollWidth + ' > box ' + e.clientWidth + ': ' +
                 e.textContent.slice(0, 60));
}
const boxes = t => {
    const r = [];
    const parts = t.querySelectorAll('tspan');
    for (const p of (parts.length ? parts : [t])) for (const b of p.getClientRects()) if (b.width > 0) r.push(b);
    return r;
};
const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
                      Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
document.querySelectorAll('svg').forEach((svg, si) => {
    const r = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')];
    const all = texts.map(t => [t, boxes(t)]);
    for (const [t, bs] of all) for (const b of bs)
        if (b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5)
            out.push('svg ' + si + ': text outside its chart (clipped): "' + t.textContent + '"');
    for (let i = 0; i < all.length; i++) for (let j = i + 1; j < all.length; j++)
        for (const a of all[i][1]) for (const b of all[j][1])
            if (hit(a, b)) out.push('svg ' + si + ': texts overlap: "' + all[i][0].textContent + '" and "' +
                                    all[j][0].textContent + '"');
    const styles = new Set();
    for (const p of svg.querySelectorAll('path.series')) {
        const k = p.getAttribute('stroke') + '|' + (p.getAttribute('stroke-dasharray') || '');
        if (styles.has(k)) out.push('svg ' + si + ': two series drawn alike (' + k + ')');
        styles.add(k);
    }
    for (const m of svg.querySelectorAll('line.mark')) {
        const mb = m.getBoundingClientRect();
        const line = {left: mb.left - 1, right: mb.right + 1, top: mb.top, bottom: mb.bottom};
        for (const t of svg.querySelectorAll('text.vl')) for (const b of boxes(t))
            if (hit(line, b)) out.push('svg ' + si + ': the marker line runs through the value label ' + t.textContent);
    }
});
return out;
"""

POWER_JS = r"""
const svg = document.getElementById('power-chart');
if (!svg) return null;
const paths = [...svg.querySelectorAll('path.pw')].map(p => ({
    cmds: (p.getAttribute('d').match(/[ML]/g) || []).length,
    points: +p.dataset.points, samples: +p.dataset.samples, h: p.getBBox().height}));
const thin = svg.parentNode.querySelector('.thin');
const stage = svg.querySelector('rect.stage');
return {paths: paths, bad: svg.querySelectorAll('path.bad').length, gaps: svg.querySelectorAll('rect.gap').length,
        thin: thin ? {samples: +thin.dataset.samples, points: +thin.dataset.points} : null,
        plot_h: stage ? stage.getBBox().height : 0, plot_w: svg.viewBox.baseVal.width - 90,
        caption: svg.parentNode.querySelector('figcaption').textContent};
"""

# Each wide table's heading and the class of the box its table sits in.
WIDE_JS = r"""
return ['agents', 'scores', 'infra', 'interference'].filter(id => document.getElementById(id)).map(id => {
    let e = document.getElementById(id);
    while (e && e.tagName !== 'TABLE' && !(e.querySelector && e.querySelector('table'))) e = e.nextElementSibling;
    const t = e && (e.tagName === 'TABLE' ? e : e.querySelector('table'));
    return [id, t ? t.parentNode.className : 'no table'];
});
"""

# The power over time chart's text as rendered (px), the smallest in the
# other charts for comparison, and what a line or a label collides with.
POWER_LAYOUT_JS = r"""
const px = svg => svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
const sizes = svg => [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * px(svg));
const svg = document.getElementById('power-chart');
const others = [...document.querySelectorAll('svg')].filter(s => s !== svg).flatMap(sizes);
const stages = [...svg.querySelectorAll('rect.stage')].map(r => r.getBBox());
const top = Math.min(...stages.map(b => b.y)), bottom = Math.max(...stages.map(b => b.y + b.height));
const out = [];
const labels = [...svg.querySelectorAll('text.sl')].map(t => [t.textContent, t.getBBox()]);
for (const [text, b] of labels)
    if (b.y + b.height > top + 0.5) out.push('stage label "' + text + '" inside the plot (bottom ' + (b.y + b.height) +
                                             ' > plot top ' + top + ')');
let highest = Infinity;
for (const p of svg.querySelectorAll('path.pw, circle.pw1')) {
    const pts = p.tagName === 'circle' ? [[+p.getAttribute('cx'), +p.getAttribute('cy')]] :
        [...p.getAttribute('d').matchAll(/[ML]([-\d.]+) ([-\d.]+)/g)].map(m => [+m[1], +m[2]]);
    for (const [x, y] of pts) {
        highest = Math.min(highest, y);
        for (const [text, b] of labels)
            if (x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + b.height)
                out.push('a line runs through the label "' + text + '" at ' + x + ',' + y);
    }
}
return {min_px: Math.min(...sizes(svg)), others_min_px: Math.min(...others), labels: labels.length,
        headroom: (highest - top) / (bottom - top), problems: out};
"""

def screenshot(name):
    m = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = m.get("cssContentSize") or m["contentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000), "scale": 1}})
    path = os.path.join(art, name)
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    print(f"screenshot: {path}")

def check_power(run, what):
    good, bad, gaps, meters, sum_points = truth[run]
    pw = driver.execute_script(POWER_JS)
    ok(f"{what}: power over time chart present", pw is not None)
    lines = meters + (meters > 1)
    ok(f"{what}: one line per meter ({meters}), and their sum when several", len(pw["paths"]) == lines,
       repr(pw["paths"]))
    if meters > 1:
        s = pw["paths"][-1]
        ok(f"{what}: the sum has a point wherever every meter has a good sample ({sum_points})",
           s["samples"] == sum_points and (s["cmds"] == sum_points or pw["thin"]), repr(s))
    p = pw["paths"][0]
    ok(f"{what}: the line's points are the ones it says it drew", p["cmds"] == p["points"], repr(p))
    ok(f"{what}: the line covers every good sample in the database ({good})", p["samples"] == good, repr(p))
    if pw["thin"]:
        ok(f"{what}: the caption states the thinned count drawn", pw["thin"]["points"] == p["cmds"]
           and pw["thin"]["samples"] == good, repr(pw["thin"]))
        ok(f"{what}: thinned to at most about 2 points per pixel column", p["cmds"] <= 2 * pw["plot_w"] + 4,
           repr(p))
    else:
        ok(f"{what}: one point per good sample", p["cmds"] == good, repr(p))
    ok(f"{what}: every bad sample marked ({bad})", pw["bad"] == bad, f"({pw['bad']})")
    ok(f"{what}: every gap marked ({gaps})", pw["gaps"] == gaps, f"({pw['gaps']})")
    return pw

try:
    runs = [r for r in truth if r != rlong]
    for run in runs:
        url = "file://" + os.path.join(tmp, f"report-{run}.html")
        for width in (1400, 800):
            driver.set_window_size(width, 1000)
            driver.get(url)
            what = f"run {run} at {width} px"
            problems = driver.execute_script(LAYOUT_JS)
            ok(f"{what}: no overflow, clipped legend, overlapping text or look-alike series", not problems,
               "\n  " + "\n  ".join(problems[:20]))
            check_power(run, what)
            pl = driver.execute_script(POWER_LAYOUT_JS)
            print(f"{what}: power chart text {pl['min_px']:.1f} px at the smallest, the other charts' "
                  f"{pl['others_min_px']:.1f} px; headroom {100 * pl['headroom']:.0f}% of the plot")
            ok(f"{what}: the power chart's text is at least 11 px", pl["min_px"] >= 11 - 0.05, repr(pl["min_px"]))
            ok(f"{what}: the power chart has level and phase labels, above the plot, no line through one",
               pl["labels"] >= 2 and not pl["problems"], "\n  " + "\n  ".join(pl["problems"][:10]))
            ok(f"{what}: the power line stays clear of the top frame (headroom at least 6% of the plot)",
               pl["headroom"] >= 0.06, repr(pl["headroom"]))
            if run == rwide:
                boxes = driver.execute_script(WIDE_JS)
                ok(f"{what}: the agents, scores, infra and interference tables are there, each in a scroll box",
                   len(boxes) == 4 and all(b[1] == "tw" for b in boxes), repr(boxes))
            screenshot(f"report-{run}-{width}.png")
            if width == 1400:  # the power chart alone, readable at full size
                with open(os.path.join(art, f"report-{run}-power.png"), "wb") as f:
                    f.write(driver.find_element("id", "power-chart").screenshot_as_png)
        if run == "1":
            driver.set_window_size(1400, 1000)
            driver.get(url)
            fits = driver.execute_script(r"""
                const box = document.getElementById('meters').nextElementSibling;
                const last = box.querySelector('tr:last-child td:last-child');
                return [box.className, box.scrollWidth, box.clientWidth, last.textContent,
                        last.getBoundingClientRect().right <= box.getBoundingClientRect().right + 0.5];""")
            ok("run 1 at 1400 px: the meters table fits, its estimated column shown", fits[0] == "tw" and
               fits[1] <= fits[2] and fits[4] and fits[3] == "no (measured)", repr(fits))
            seen = 0
            for w, op in p95:
                cells = driver.execute_script(r"""
                    for (const fig of document.querySelectorAll('figure')) {
                        const title = fig.querySelector('svg text.ct');
                        if (!title || title.textContent !== arguments[0] + ' latency against tiles') continue;
                        for (const td of fig.querySelectorAll('table.lt td[rowspan]'))
                            if (td.textContent === arguments[1]) {
                                const rows = td.parentNode.parentNode.rows, i = td.parentNode.rowIndex;
                                return [rows[i + 1].cells[0].textContent, rows[i + 1].cells[1].textContent];
                            }
                    }
                    return null;""", w, op)
                ok(f"latency table of {w}.{op} has a p95 row", cells is not None and cells[0] == "p95", repr(cells))
                want = p95[(w, op)]
                ok(f"latency table {w}.{op} p95 {cells[1]} = stored {want:.3f}",
                   abs(float(cells[1].rstrip("\u2020")) - want) <= (0.05 if want >= 100 else 0.0005) + 1e-9, "")
                seen += 1
            ok("latency values compared", seen >= 5, f"({seen})")
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
            shown = driver.execute_script(
                "return [...document.querySelectorAll('table.lt')].every(t => t.getBoundingClientRect().height > 0 "
                "&& getComputedStyle(t).visibility === 'visible')")
            ok("latency value tables visible in print", shown)
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        if run == "2":  # on estimated power (no --meter): the meters table's URI, the events' times
            for width in (1400, 800):
                driver.set_window_size(width, 1000)
                driver.get(url)
                # lines of text in a cell: the line boxes of its contents (a cell is as tall as its row)
                cells = driver.execute_script(r"""
                    const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
                                          return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; };
                    const box = document.getElementById('meters').nextElementSibling;
                    const row = box.querySelector('tr:nth-child(2)'), uri = row.cells[1];
                    const ev = document.getElementById('events').nextElementSibling;
                    const times = [...ev.querySelectorAll('tr td:first-child')];
                    return [uri.textContent, lines(uri), [4, 5, 6].map(i => row.cells[i].textContent), times.length,
                            Math.max(0, ...times.map(lines))];""")
                ok(f"run 2 at {width} px: the estimate's URI on at most 2 lines, not a letter group a line",
                   cells[0].startswith("estimate:") and cells[1] <= 2, repr(cells))
                ok(f"run 2 at {width} px: driver, V range, A range it has not show \u2013",
                   cells[2] == ["\u2013"] * 3, repr(cells))
                ok(f"run 2 at {width} px: each event's time on one line", cells[3] >= 1 and cells[4] == 1,
                   repr(cells))
    driver.set_window_size(1400, 1000)
    driver.get("file://" + os.path.join(tmp, f"report-{rlong}.html"))
    pw = check_power(rlong, "90,000 s steady state")
    ok("90,000 s: thinned", pw["thin"] is not None and pw["thin"]["points"] < truth[rlong][0], repr(pw["thin"]))
    ok("90,000 s: thinning kept the spike (the line spans over half the plot's height)",
       pw["paths"][0]["h"] > 0.5 * pw["plot_h"], repr((pw["paths"][0], pw["plot_h"])))
    ok("90,000 s: the caption says it was thinned", "Thinned for drawing" in pw["caption"])
    screenshot("report-long-1400.png")
finally:
    driver.quit()
PY

cp "$T"/report-*.html "$ART"/ # the pages themselves, for a look in any browser
for png in "$ART"/report-*.png; do
    expect "$(basename "$png") signature" "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
    expect "$(basename "$png") bytes" "$(stat -c %s "$png")" -gt 10000
done
echo "PASS test_report_browser (screenshots in $ART)"
