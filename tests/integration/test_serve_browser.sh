#!/usr/bin/env bash
# test_serve_browser.sh: `tilebench serve` end to end in headless Chromium
# (Debian's chromium + chromium-driver, driven by python3-selenium). Two short
# runs against the embedded SUT, one labelled <script>alert(1)</script>; the
# browser loads the run list, clicks the report link of that run, checks the
# rendered text (label shown as text, no alert, PPKW, a load level row),
# ticks both runs and submits the compare form, and saves screenshots as test
# artifacts in test-artifacts/ under ctest's working directory (the build
# tree), each checked to be a PNG with real dimensions. A browser that cannot
# start fails the test.
source "$(dirname "$0")/lib.sh"

LABEL='<script>alert(1)</script>'
DB="$T/results.db"
ART="$PWD/test-artifacts"
mkdir -p "$ART"
rm -f "$ART"/serve-*.png

for prog in /usr/bin/chromium /usr/bin/chromedriver /usr/bin/python3; do
    [ -x "$prog" ] || fail "$prog not found (scripts/install-deps installs chromium, chromium-driver, python3-selenium)"
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed (scripts/install-deps)"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
# 8 s of steady state: web makes about 2 ops/s for one tile, and a 3 s window
# under two parallel tests once had none, a score (and PPKW) of 0.
STAGES=(--tiles 1 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 1s)
"$TILEBENCH" run --config "$T/tile.ini" "${STAGES[@]}" --db "$DB" --label "$LABEL" --quiet >"$T/run1.log" 2>&1 ||
    fail "run 1 exited $?: $(cat "$T/run1.log")"
"$TILEBENCH" run --config "$T/tile.ini" "${STAGES[@]}" --db "$DB" --label "second run" --quiet >"$T/run2.log" 2>&1 ||
    fail "run 2 exited $?: $(cat "$T/run2.log")"
PPKW=$("$TILEBENCH" report 1 --db "$DB" --format json | jq '.run.levels[0].ppkw')
expect_true "run 1 PPKW stored" "$PPKW" '. > 0'

"$TILEBENCH" serve --db "$DB" --listen 127.0.0.1:0 >"$T/serve.out" 2>"$T/serve.log" &
SPID=$!
at_exit "kill $SPID 2>/dev/null"
PORT=
for _ in $(seq 1 50); do
    PORT=$(sed -n 's|^tilebench serve: http://127.0.0.1:\([0-9]*\)/ .*|\1|p' "$T/serve.out")
    [ -n "$PORT" ] && break
    kill -0 $SPID 2>/dev/null || fail "serve exited: $(cat "$T/serve.log")"
    sleep 0.1
done
[ -n "$PORT" ] || fail "serve printed no address"

# The browser session. Every check raises on failure; its output lines are
# the "ok:" lines of this test.
/usr/bin/python3 - "http://127.0.0.1:$PORT" "$LABEL" "$ART" "$T/chrome" <<'PY' || fail "browser checks failed"
import os, sys
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

base, label, art, profile = sys.argv[1:5]

def ok(what, cond, detail=""):
    if not cond:
        raise SystemExit(f"FAIL: {what} {detail}")
    print(f"ok: {what}")

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
          "--no-first-run", "--user-data-dir=" + profile):
    opts.add_argument(a)
if os.geteuid() == 0:
    opts.add_argument("--no-sandbox")  # Chromium refuses to run as root with its sandbox
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
wait = WebDriverWait(driver, 30)

def no_alert(where):
    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        ok(f"no alert on {where}", True)
        return
    ok(f"no alert on {where}", False, f"(alert says {text!r})")

def screenshot(name):
    # the whole page, not just the viewport
    m = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = m.get("cssContentSize") or m["contentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
    import base64
    path = os.path.join(art, name)
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    print(f"screenshot: {path}")

try:
    driver.get(base + "/")
    ok("run list title", driver.title == "tilebench results", repr(driver.title))
    no_alert("the run list")
    rows = driver.find_elements(By.CSS_SELECTOR, "table#runs tbody tr")
    ok("run list has 2 rows", len(rows) == 2, f"({len(rows)})")
    cell = driver.find_element(By.CSS_SELECTOR, "tr#run-1 td.label")
    ok("label rendered as text in the run list", cell.text == label, repr(cell.text))
    ok("no script element in the run list", not driver.find_elements(By.TAG_NAME, "script"))
    status = driver.find_element(By.CSS_SELECTOR, "tr#run-1 .badge").text
    ok("run 1 status shown", status == "complete", repr(status))
    screenshot("serve-runs.png")

    driver.find_element(By.CSS_SELECTOR, "tr#run-1 a.report").click()
    wait.until(EC.url_to_be(base + "/runs/1"))
    ok("report link leads to /runs/1", driver.current_url == base + "/runs/1", driver.current_url)
    no_alert("the report")
    h1 = driver.find_element(By.TAG_NAME, "h1").text
    ok("report heading shows the label as text", h1.startswith("tilebench run 1: " + label), repr(h1))
    ok("no script element in the report", not driver.find_elements(By.TAG_NAME, "script"))
    body = driver.find_element(By.TAG_NAME, "body").text
    ok("report text has PPKW", "PPKW" in body)
    ok("report text has the estimated-power banner", "ESTIMATED POWER" in body)
    lv = driver.find_elements(By.XPATH, "//h2[@id='levels']/following-sibling::div[1]/table//tr[td]")
    ok("report has one load level row", len(lv) == 1, f"({len(lv)})")
    cells = [td.text for td in lv[0].find_elements(By.TAG_NAME, "td")]
    ok("level row: 1 tile, phase 1", cells[:2] == ["1", "1"], repr(cells))
    ok("level row: PPKW is a number > 0", float(cells[5]) > 0, repr(cells))
    charts = driver.find_elements(By.CSS_SELECTOR, "svg")
    ok("report draws SVG charts", len(charts) >= 3, f"({len(charts)})")
    shown = driver.execute_script("var s = document.querySelector('svg'); return s.getBoundingClientRect().width")
    ok("first chart is laid out", shown > 100, f"({shown} px)")
    screenshot("serve-report.png")

    driver.find_element(By.LINK_TEXT, "\u2190 all runs").click()
    wait.until(EC.url_to_be(base + "/"))
    driver.find_element(By.CSS_SELECTOR, "input[name=runs][value='1']").click()
    driver.find_element(By.CSS_SELECTOR, "input[name=runs][value='2']").click()
    driver.find_element(By.CSS_SELECTOR, "input[name=baseline][value='2']").click()
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait.until(EC.url_contains("/compare?"))
    ok("compare form submits by GET", "runs=1" in driver.current_url and "runs=2" in driver.current_url
       and "baseline=2" in driver.current_url, driver.current_url)
    no_alert("the comparison")
    h1 = driver.find_element(By.TAG_NAME, "h1").text
    ok("comparison against run 2", "against baseline run 2" in h1, repr(h1))
    ok("comparison shows the label as text", label in driver.find_element(By.TAG_NAME, "body").text)
    screenshot("serve-compare.png")
finally:
    driver.quit()
PY

# The artifacts are real PNGs with a size.
for png in serve-runs.png serve-report.png serve-compare.png; do
    f="$ART/$png"
    [ -s "$f" ] || fail "$f missing or empty"
    expect "$png signature" "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
    dims=$(/usr/bin/python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$f")
    expect "$png width" "${dims% *}" -ge 800
    expect "$png height" "${dims#* }" -ge 300
    expect "$png bytes" "$(stat -c %s "$f")" -gt 10000
done
kill -TERM $SPID
wait $SPID || fail "serve did not stop cleanly"
echo "PASS test_serve_browser (screenshots in $ART)"
