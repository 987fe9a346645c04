#!/usr/bin/env bash
# test_publish.sh: `tilebench publish` on two short kv runs against the
# embedded SUT (docs/bundle.md). The bundle holds exactly the files the
# layout names, under one folder tilebench-run-UUID/, each listed once in
# manifest.json with a SHA-256 and size that sha256sum and stat agree with;
# data/power_samples.csv has the database's rows of the run, value for value
# (read back here with Python's csv and sqlite3 modules, counted and summed
# with the sqlite3 shell); report.json/csv/html and histograms.hlog equal a
# fresh `tilebench report`; the passwords put in the tile file (a [sut] pg conninfo password
# and a commented-out ptd:// meter URI with one) are in no file of the bundle
# or the site; a bad run id, a missing database, an unwritable -o and a run
# still running each give a clear error, exit 2 and leave no file; and
# `--site` writes an index linking each run's report, bundle and comparison,
# every relative link of which resolves to a file, every report and
# comparison linking back to the index; a third run measured by a meter
# emulator is not compared with the estimated ones before it, and the index
# says so; and a copy of the database that cannot be written (mode 0444 in a
# 0555 folder on a read-only bind mount: root ignores modes), in WAL mode
# with no -shm file, publishes, and the bundle checks (one whose -wal holds
# a transaction not yet in it is refused, naming the file).
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
PGPW="Pg-Secret-$$"
MPW="Meter-Secret-$$"
PG=$(sed -n 's/^pg = //p' "$T/sut/sut.ini")
{
    printf '[tile]\nname = kvpub\n[workload.kv]\nkind = kv\nusers = 2\nthink_time = 50ms\nthink_dist = uniform\n'
    printf 'unit = ops/s\nreference = 30\ntimeout = 1s\n'
    grep -v '^pg = ' "$T/sut/sut.ini"
    printf 'pg = %s password=%s\n' "$PG" "$PGPW" # the embedded SUT trusts loopback: never checked
    printf '; meter = ptd://admin:%s@127.0.0.1:8888\n' "$MPW"
} >"$T/tile.ini"
grep -qF -- "$PGPW" "$T/tile.ini" && grep -qF -- "$MPW" "$T/tile.ini" || fail "the passwords are not in the tile file"
DB="$T/results.db"
for i in 1 2; do
    "$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 --idle 1s \
        --db "$DB" --label "publish, \"it\" $i" --quiet >"$T/run$i.log" 2>&1 || fail "run $i exited $?: $(cat "$T/run$i.log")"
done
UUID=$(sqlite3 -batch "$DB" "SELECT uuid FROM runs WHERE id = 1")
UUID2=$(sqlite3 -batch "$DB" "SELECT uuid FROM runs WHERE id = 2")
[[ $UUID =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] || fail "run 1 uuid '$UUID' is not a v4 UUID"
[ "$UUID" != "$UUID2" ] || fail "two runs share the uuid $UUID"
echo "ok: runs 1 and 2 have the UUIDs $UUID and $UUID2"

# ---- the bundle ----
"$TILEBENCH" publish 1 --db "$DB" -o "$T/b.tar.gz" >"$T/pub.log" 2>&1 || fail "publish exited $?: $(cat "$T/pub.log")"
grep -q "^wrote $T/b.tar.gz: run 1 ($UUID)" "$T/pub.log" || fail "publish said: $(cat "$T/pub.log")"
mkdir "$T/cwd"
(cd "$T/cwd" && "$TILEBENCH" publish 1 --db "$DB" >/dev/null) || fail "publish without -o exited $?"
[ -f "$T/cwd/tilebench-run-$UUID.tar.gz" ] || fail "no default-named bundle: $(ls "$T/cwd")"
expect "files in the current folder" "$(ls -A "$T/cwd" | wc -l)" -eq 1

# exactly the layout's files, each once, all regular files under one folder
TOP="tilebench-run-$UUID"
want=$(printf '%s\n' manifest.json tiles.ini report.json report.csv report.html histograms.hlog \
    data/{runs,meters,hosts,levels,level_hosts,level_agents,workloads,ops,qos,infra,power_samples,telemetry_samples,channel_samples,level_ranges,inlet_temperatures,temperature_samples,events,calibrations}.csv |
    sed "s|^|$TOP/|" | sort)
got=$(tar -tzf "$T/b.tar.gz" | sort)
[ "$got" = "$want" ] || fail "the archive's entries differ from the layout: $(diff <(echo "$want") <(echo "$got"))"
expect "archive entries listed twice" "$(tar -tzf "$T/b.tar.gz" | sort | uniq -d | wc -l)" -eq 0
expect "archive entries that are not regular files" "$(tar -tvzf "$T/b.tar.gz" | grep -cv '^-')" -eq 0
mkdir "$T/x"
tar -xzf "$T/b.tar.gz" -C "$T/x"
B="$T/x/$TOP"
M="$B/manifest.json"
listed=$(jq -r '.files[].path' "$M")
[ "$( (echo "$listed"; echo manifest.json) | sed "s|^|$TOP/|" | sort)" = "$want" ] || fail "manifest.json does not list exactly the other files: $listed"
[ "$listed" = "$(echo "$listed" | LC_ALL=C sort)" ] || fail "manifest files not sorted by path"
n=0
while IFS=$'\t' read -r path sha bytes; do
    expect "$path bytes" "$(stat -c %s "$B/$path")" -eq "$bytes"
    [ "$(sha256sum "$B/$path" | cut -d' ' -f1)" = "$sha" ] || fail "$path: sha256sum $(sha256sum "$B/$path") != manifest $sha"
    n=$((n + 1))
done < <(jq -r '.files[] | [.path, .sha256, .bytes] | @tsv' "$M")
expect "files checked with sha256sum (all but manifest.json)" "$n" -eq 23
expect "manifest format" "$(jq -r '.format + " " + (.format_version | tostring)' "$M")" = "tilebench-bundle 1"
expect "manifest run" "$(jq -r '[.run_uuid, .run_id, .status, .label, .tile_name] | @tsv' "$M")" = \
    "$(printf '%s\t1\tcomplete\tpublish, "it" 1\tkvpub' "$UUID")"
expect "manifest meters" "$(jq '.meters | length' "$M")" -eq "$(sqlite3 -batch "$DB" "SELECT count(*) FROM meters WHERE run_id = 1")"
jq -e '.published_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")' "$M" >/dev/null || fail "published_at: $(jq .published_at "$M")"
jq -e '.source_revision | test("^([0-9a-f]{40}(-dirty)?|unknown)$")' "$M" >/dev/null || fail "source_revision: $(jq .source_revision "$M")"

# the reports are what `tilebench report` writes now
for f in report.json:json report.csv:csv report.html:html histograms.hlog:hlog; do
    "$TILEBENCH" report 1 --db "$DB" --format "${f#*:}" >"$T/fresh" || fail "report --format ${f#*:} exited $?"
    cmp -s "$T/fresh" "$B/${f%:*}" || fail "${f%:*} differs from a fresh report --format ${f#*:}: $(cmp "$T/fresh" "$B/${f%:*}")"
done
grep -q '^#\[StartTime: ' "$B/histograms.hlog" && [ "$(grep -cv '^#' "$B/histograms.hlog")" -ge 2 ] ||
    fail "histograms.hlog holds no histogram: $(head -5 "$B/histograms.hlog")"
echo "ok: report.json, report.csv, report.html and histograms.hlog equal fresh reports"
cmp -s <(sqlite3 -batch "$DB" "SELECT config_text FROM runs WHERE id = 1") <(cat "$B/tiles.ini"; echo) ||
    fail "tiles.ini is not the stored tile file text"

# data/power_samples.csv: the run's rows, value for value
rows=$(sqlite3 -batch "$DB" "SELECT count(*) FROM power_samples WHERE run_id = 1")
wsum=$(sqlite3 -batch "$DB" "SELECT printf('%.17g', total(watts)) FROM power_samples WHERE run_id = 1")
expect "power samples stored for run 1" "$rows" -gt 3
python3 - "$DB" "$B/data/power_samples.csv" "$rows" "$wsum" >"$T/csv.log" 2>&1 <<'PYEOF' || fail "power_samples.csv: $(cat "$T/csv.log")"
import csv, math, sqlite3, sys
db, path, rows, wsum = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
with open(path, newline="") as f:
    data = list(csv.reader(f))
cols = [r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(power_samples)")]
assert data[0] == cols, (data[0], cols)
body = data[1:]
assert len(body) == rows, ("rows", len(body), rows)
w = data[0].index("watts")
s = math.fsum(float(r[w]) for r in body if r[w] != "")
assert abs(s - wsum) <= 1e-12 * abs(wsum), ("sum of watts", s, wsum)
stored = sqlite3.connect(db).execute("SELECT * FROM power_samples WHERE run_id = 1 ORDER BY rowid").fetchall()
for got, want in zip(body, stored):
    for name, g, v in zip(cols, got, want):
        back = None if g == "" else (float(g) if isinstance(v, float) else int(g) if isinstance(v, int) else g)
        assert back == v, (name, g, v)
print("ok: %d rows, sum of watts %.17g, every value as stored" % (len(body), s))
PYEOF
cat "$T/csv.log"
declare -A WHERE=([runs]="id = 1" [levels]="run_id = 1" [events]="run_id = 1"
    [workloads]="level_id IN (SELECT id FROM levels WHERE run_id = 1)"
    [ops]="workload_id IN (SELECT w.id FROM workloads w JOIN levels l ON l.id = w.level_id WHERE l.run_id = 1)")
for t in "${!WHERE[@]}"; do
    n_db=$(sqlite3 -batch "$DB" "SELECT count(*) FROM $t WHERE ${WHERE[$t]}")
    n_csv=$(python3 -c 'import csv,sys; print(len(list(csv.reader(open(sys.argv[1], newline=""))))-1)' "$B/data/$t.csv")
    expect "data/$t.csv rows = the database's rows of run 1" "$n_csv" -eq "$n_db"
    expect "data/$t.csv rows" "$n_csv" -ge 1
done
expect "ops.csv has no BLOB column" "$(head -1 "$B/data/ops.csv" | grep -c hist)" -eq 0

# no password anywhere: the files, and the compressed archive as a whole
for pw in "$PGPW" "$MPW"; do
    if grep -rlF -- "$pw" "$T/x" "$T/pub.log"; then fail "a password is in the bundle (files above)"; fi
    if zcat "$T/b.tar.gz" | grep -qaF -- "$pw"; then fail "a password is in the archive"; fi
done
echo "ok: no password in the bundle"
grep -q '^pg = .* password=\*\*\*$' "$B/tiles.ini" || fail "tiles.ini lacks the redacted pg line: $(cat "$B/tiles.ini")"

# ---- errors: exit 2, a clear message, no file left ----
perr() { # NAME NEEDLE ARGS...: publish ARGS must exit 2 saying NEEDLE and leave nothing in $T/err
    local name=$1 needle=$2 rc=0
    shift 2
    mkdir -p "$T/err"
    (cd "$T/err" && "$TILEBENCH" publish "$@") >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    expect "$name: exit" "$rc" -eq 2
    grep -qF -- "$needle" "$T/$name.err" || fail "$name: the error does not say '$needle': $(cat "$T/$name.err")"
    expect "$name: files left in the folder" "$(find "$T/err" -mindepth 1 | wc -l)" -eq 0
    echo "ok: $name: $(head -1 "$T/$name.err")"
}
perr badrun "run 99 not found in $DB" 99 --db "$DB" -o "$T/err/b.tar.gz"
perr nodb "results database '$T/none.db' not found" 1 --db "$T/none.db" -o "$T/err/b.tar.gz"
perr nofolder "publish run 1 ($UUID) to $T/err/no/b.tar.gz: write $T/err/no/b.tar.gz: No such file or directory" \
    1 --db "$DB" -o "$T/err/no/b.tar.gz"
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$T/ro" && chmod 555 "$T/ro"
    rc=0
    "$TILEBENCH" publish 1 --db "$DB" -o "$T/ro/b.tar.gz" 2>"$T/ro.err" || rc=$?
    expect "read-only folder: exit" "$rc" -eq 2
    grep -qF "write $T/ro/b.tar.gz: Permission denied" "$T/ro.err" || fail "read-only folder: $(cat "$T/ro.err")"
    expect "read-only folder: files left" "$(ls -A "$T/ro" | wc -l)" -eq 0
else
    echo "note: as root a read-only folder is writable; the missing folder above is the unwritable -o"
fi
perr isdir "write $T/err: is a directory" 1 --db "$DB" -o "$T/err"
# a full disk in the middle of the archive: a file size limit (SIGXFSZ
# ignored, so the write fails with EFBIG) on a copy of the database in
# rollback-journal mode (a WAL reader would have to write its -shm file).
# The older file of that name stays as it was, and no temporary file is left.
cp "$DB" "$T/rollback.db"
[ "$(sqlite3 -batch "$T/rollback.db" "PRAGMA journal_mode=DELETE")" = delete ] || fail "rollback.db: no rollback journal"
mkdir "$T/full"
echo "an older bundle" >"$T/full/b.tar.gz"
rc=0
(trap '' XFSZ && prlimit --fsize=4096 "$TILEBENCH" publish 1 --db "$T/rollback.db" -o "$T/full/b.tar.gz") \
    >"$T/full.out" 2>"$T/full.err" || rc=$?
expect "a full disk: exit" "$rc" -eq 2
grep -qF "publish run 1 ($UUID) to $T/full/b.tar.gz: write $T/full/b.tar.gz: File too large" "$T/full.err" ||
    fail "a full disk: $(cat "$T/full.err")"
expect "a full disk: the older file kept" "$(cat "$T/full/b.tar.gz")" = "an older bundle"
expect "a full disk: files in the folder" "$(ls -A "$T/full" | wc -l)" -eq 1
echo "ok: a full disk: $(cat "$T/full.err")"
# a run still being written: its writer is this shell (alive, its start time as /proc says)
cp "$DB" "$T/running.db"
sqlite3 -batch "$T/running.db" "UPDATE runs SET status = 'running', finished_at = NULL, writer_pid = $$,
    writer_start = $(awk '{print $22}' /proc/$$/stat) WHERE id = 2"
perr running "run 2 ($UUID2) is still running" 2 --db "$T/running.db" -o "$T/err/b.tar.gz"

# ---- the site ----
# run 3: the same tile, its power measured by a meter (runs 1 and 2: estimated)
start_sim wt --protocol wt310 --watts 120
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 3s --ramp-down 0 --idle 1s \
    --meter "wt310://127.0.0.1:$PORT" --db "$DB" --label "measured" --quiet >"$T/run3.log" 2>&1 ||
    fail "run 3 exited $?: $(cat "$T/run3.log")"
stop_sims
UUID3=$(sqlite3 -batch "$DB" "SELECT uuid FROM runs WHERE id = 3")
expect "runs 1, 2, 3 estimated" "$(sqlite3 -batch "$DB" "SELECT group_concat(e, ',') FROM (SELECT
    EXISTS (SELECT 1 FROM meters m WHERE m.run_id = r.id AND m.estimated) AS e FROM runs r ORDER BY r.id)")" = "1,1,0"
"$TILEBENCH" publish --site "$T/site" --db "$DB" >"$T/site.log" 2>&1 || fail "publish --site exited $?: $(cat "$T/site.log")"
grep -q "3 runs, 3 published with a report and a bundle, 1 comparison" "$T/site.log" || fail "site: $(cat "$T/site.log")"
for u in "$UUID" "$UUID2" "$UUID3"; do
    grep -qF "href=\"runs/$u/report.html\"" "$T/site/index.html" || fail "index.html does not link run $u's report"
    grep -qF "href=\"runs/$u/tilebench-run-$u.tar.gz\"" "$T/site/index.html" || fail "index.html does not link run $u's bundle"
    grep -qF '<p class="site-nav"><a href="../../index.html">' "$T/site/runs/$u/report.html" ||
        fail "the site report of $u has no link back to the index"
    cmp -s <("$TILEBENCH" report --db "$DB" --format html "$(sqlite3 -batch "$DB" "SELECT id FROM runs WHERE uuid = '$u'")") \
        <(grep -vF '<p class="site-nav">' "$T/site/runs/$u/report.html") ||
        fail "site report of $u differs from a fresh HTML report (but for the link to the index)"
done
grep -qF "href=\"compare/$UUID-$UUID2.html\"" "$T/site/index.html" || fail "index.html does not link the comparison"
grep -qF '<p class="site-nav"><a href="../index.html">' "$T/site/compare/$UUID-$UUID2.html" ||
    fail "the comparison has no link back to the index"
# like with like: the measured run 3 is not compared with the estimated run 2, and the index says why
if ls "$T/site/compare/" | grep -qF -- "$UUID3"; then fail "a measured run compared with an estimated one: $(ls "$T/site/compare")"; fi
grep -qF "not compared with run 2: its power was estimated, this run's measured" "$T/site/index.html" ||
    fail "index.html does not say why run 3 has no comparison"
echo "ok: like with like: the measured run is not compared with the estimated ones, and the index says so"
grep -qF 'publish, &quot;it&quot; 1' "$T/site/index.html" || fail "index.html lacks the escaped label"
python3 - "$T/site" >"$T/links.log" 2>&1 <<'PYEOF' || fail "site links: $(cat "$T/links.log")"
import html.parser, os, sys, urllib.parse
root = sys.argv[1]
class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("href", "src") and v is not None]
checked, bad = 0, []
for d, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".html"):
            continue
        page = os.path.join(d, name)
        p = Links()
        p.feed(open(page, encoding="utf-8").read())
        for link in p.links:
            u = urllib.parse.urlsplit(link)
            if link.startswith("#"):
                continue
            if u.scheme or u.netloc or link.startswith("/"):
                bad.append("%s: not relative: %s" % (page, link))
                continue
            target = os.path.normpath(os.path.join(d, urllib.parse.unquote(u.path)))
            if not os.path.isfile(target) or not target.startswith(os.path.abspath(root)):
                bad.append("%s: %s does not resolve to a file of the site" % (page, link))
            checked += 1
print("\n".join(bad) or "ok: %d relative links, every one a file of the site" % checked)
sys.exit(1 if bad or checked < 5 else 0)
PYEOF
cat "$T/links.log"
for pw in "$PGPW" "$MPW"; do
    if grep -rlF -- "$pw" "$T/site"; then fail "a password is in the site (files above)"; fi
    for b in "$T"/site/runs/*/*.tar.gz; do zcat "$b" | grep -qaF -- "$pw" && fail "a password is in $b"; done
done
echo "ok: no password in the site"

# a run whose UUID is not one (a crafted database): refused, nothing written outside -o or the site
cp "$DB" "$T/crafted.db"
sqlite3 "$T/crafted.db" "UPDATE runs SET uuid = '../../crafted' WHERE id = 1"
rc=0
(cd "$T" && "$TILEBENCH" publish 1 --db "$T/crafted.db" >"$T/crafted.log" 2>&1) || rc=$?
expect "publish of a run with a crafted UUID: exit" "$rc" -eq 2
grep -q "its UUID is not 8-4-4-4-12" "$T/crafted.log" || fail "crafted UUID: no reason: $(cat "$T/crafted.log")"
rc=0
"$TILEBENCH" publish --site "$T/site-crafted" --db "$T/crafted.db" >"$T/crafted-site.log" 2>&1 || rc=$?
expect "publish --site with a crafted UUID: exit" "$rc" -eq 2
[ ! -e "$T/../crafted" ] && [ ! -e "$T/crafted" ] && [ ! -e "$T/site-crafted/../crafted" ] ||
    fail "a crafted UUID wrote outside: $(ls -d "$T"/../crafted* "$T"/crafted 2>&1)"
echo "ok: a crafted UUID is refused"
# a runs/ (or compare/) inside the site that is a symbolic link: refused, nothing written through it
for sub in runs compare; do
    mkdir -p "$T/site-link-$sub" "$T/outside-$sub" && ln -s "$T/outside-$sub" "$T/site-link-$sub/$sub"
    rc=0
    "$TILEBENCH" publish --site "$T/site-link-$sub" --db "$DB" >"$T/link-$sub.log" 2>&1 || rc=$?
    expect "publish --site with $sub/ a symbolic link: exit" "$rc" -ne 0
    grep -qF "site-link-$sub/$sub is a symbolic link: publish --site writes only inside" "$T/link-$sub.log" ||
        fail "$sub/ a link: no reason: $(cat "$T/link-$sub.log")"
    [ -z "$(ls -A "$T/outside-$sub")" ] || fail "publish --site wrote through $sub/: $(ls -R "$T/outside-$sub")"
done
echo "ok: a symbolic link inside the site is refused"

# a database that cannot be written, in WAL mode with no -shm or -wal (they
# cannot be made): publish and check read it (immutable); the bundle checks
mkdir "$T/rodb"
cp "$DB" "$T/rodb/results.db"
expect "the copy is in WAL mode" "$(sqlite3 -batch "$T/rodb/results.db" "PRAGMA journal_mode")" = wal
rm -f "$T/rodb/results.db-wal" "$T/rodb/results.db-shm"
chmod 0444 "$T/rodb/results.db"
chmod 0555 "$T/rodb"
mkdir "$T/ro-out"
rc=0
unshare -m sh -c 'mount --bind -o ro "$1" "$1" || exit 8; touch "$1/x" 2>/dev/null && exit 9
    "$2" publish 1 --db "$1/results.db" -o "$3/b.tar.gz" && "$2" publish --site "$3/site" --db "$1/results.db" || exit
    "$2" check 3 --db "$1/results.db" >"$3/check.log" 2>&1
    echo $? >"$3/check.rc"' sh "$T/rodb" "$TILEBENCH" "$T/ro-out" >"$T/ro-pub.log" 2>&1 || rc=$?
expect "publish and publish --site of a read-only WAL database: exit (8, 9: no read-only mount)" "$rc" -eq 0
grep -q "3 runs, 3 published with a report and a bundle, 1 comparison" "$T/ro-pub.log" || fail "ro site: $(cat "$T/ro-pub.log")"
expect "check 3 --db of the read-only database: exit (0 compliant, 1 not; 2 unreadable): $(cat "$T/ro-out/check.log")" \
    "$(cat "$T/ro-out/check.rc")" -le 1
grep -q "^PASS manifest" "$T/ro-out/check.log" || fail "check 3 of the read-only database: $(cat "$T/ro-out/check.log")"
rc=0
"$TILEBENCH" check "$T/ro-out/b.tar.gz" >"$T/ro-check.log" 2>&1 || rc=$?
expect "check of the read-only database's bundle of run 1: exit (2: unreadable): $(cat "$T/ro-check.log")" "$rc" -le 1
grep -q "^PASS manifest" "$T/ro-check.log" || fail "check of the read-only database's bundle: $(cat "$T/ro-check.log")"
expect "nothing made next to the read-only database" "$(ls -A "$T/rodb" | tr '\n' ' ')" = "results.db "
chmod 0755 "$T/rodb"
echo "ok: a read-only WAL database publishes, and its bundle checks"
# ... but not when a -wal file beside it holds a transaction not yet in it
# (read immutable, that run would be missing): a clear error naming the file
mkdir "$T/rowal"
python3 - "$DB" "$T/rowal" <<'PYEOF' || fail "could not copy a database with a pending -wal"
import shutil, sqlite3, sys
db, out = sys.argv[1:3]
shutil.copy(db, out + "/results.db")
con = sqlite3.connect(out + "/results.db")
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("UPDATE runs SET label = 'only in the -wal' WHERE id = 1")
con.commit()
shutil.copy(out + "/results.db", out + "/copy.db")  # the database and its -wal while the writer holds them
shutil.copy(out + "/results.db-wal", out + "/copy.db-wal")
con.close()
PYEOF
rm -f "$T/rowal/results.db"*
[ -s "$T/rowal/copy.db-wal" ] || fail "the copied -wal is empty"
chmod 0555 "$T/rowal"
rc=0
unshare -m sh -c 'mount --bind -o ro "$1" "$1" || exit 8; "$2" publish 1 --db "$1/copy.db" -o "$3/w.tar.gz"' \
    sh "$T/rowal" "$TILEBENCH" "$T/ro-out" >"$T/ro-wal.log" 2>&1 || rc=$?
expect "publish of a read-only database with a pending -wal: exit" "$rc" -eq 2
grep -qF "$T/rowal/copy.db-wal holds transactions not yet in it" "$T/ro-wal.log" ||
    fail "pending -wal: no clear error: $(cat "$T/ro-wal.log")"
[ ! -e "$T/ro-out/w.tar.gz" ] || fail "a bundle was written without the -wal's transaction"
chmod 0755 "$T/rowal"
echo "ok: a read-only database whose -wal holds a transaction is refused, naming the file"
echo "PASS test_publish"
