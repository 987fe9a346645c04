#!/usr/bin/env bash
# test_disk_full.sh: the results database runs out of room in the middle of
# a sweep (level 1 committed, level 2 running). The run stops with exit 3 and
# an error that names the database and says it is full; level 1 stays intact
# (with its ops and power samples), SQLite's integrity check passes, and once
# there is room again the same database takes a new run, and the first run's
# stored status becomes what readers showed ('interrupted' where the full disk
# also refused the final status, else the 'aborted' it stored).
# The database lives on a 4 MB tmpfs, filled to the last byte after level 1
# (a real ENOSPC). Where mounting is not allowed (an unprivileged container),
# or with TB_TEST_DISK_FULL=fsize, the run's RLIMIT_FSIZE is lowered to 1
# byte instead (prlimit; SIGXFSZ ignored, so the next write fails with EFBIG).
# Then reports that cannot be written (a full device, a file size limit):
# exit 2 naming the file, the device kept, an old report file kept.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
mkdir "$T/small"
MODE=fsize
if [ "${TB_TEST_DISK_FULL:-}" != fsize ] && mount -t tmpfs -o size=4m tmpfs "$T/small" 2>"$T/mount.log"; then
    MODE=tmpfs
    at_exit 'umount "$T/small"'
fi
echo "ok: disk full by $MODE"
DB="$T/small/results.db"
q() { sqlite3 -batch "$DB" "$1"; }
levels() { q "SELECT count(*) FROM levels" 2>/dev/null || echo 0; }

# the run's output goes through a pipe: a file size limit on the run (fsize
# mode) must not cut its own messages
mkfifo "$T/run.fifo"
cat "$T/run.fifo" >"$T/run.log" &
logger=$!
(
    trap '' XFSZ # inherited as ignored: an over-limit write fails with EFBIG instead of killing the run
    exec "$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 \
        --idle 1s --db "$DB" --quiet >"$T/run.fifo" 2>&1
) &
pid=$!
at_exit 'kill $pid 2>/dev/null'
for _ in $(seq 1 240); do
    [ "$(levels)" -ge 1 ] && break
    kill -0 $pid 2>/dev/null || fail "run ended before level 1 was stored: $(cat "$T/run.log")"
    sleep 0.25
done
expect "levels stored before the disk fills" "$(levels)" -eq 1
if [ $MODE = tmpfs ]; then
    dd if=/dev/zero of="$T/small/fill" bs=4k >/dev/null 2>&1 || true # stops at ENOSPC
    expect "free blocks left on the small filesystem" "$(df --output=avail "$T/small" | tail -1 | tr -d ' ')" -eq 0
else
    # A limit of 1 byte: the kernel refuses any write that reaches past a
    # file's first byte (at whatever offset the file already has), and every
    # write SQLite makes for level 2 (a WAL frame, at offset 32 or later, or
    # a whole page) does, so the next write of the database must fail.
    prlimit --pid "$pid" --fsize=1 || fail "prlimit failed"
    expect "the run's file size limit (bytes)" "$(prlimit --pid "$pid" --fsize --output SOFT --noheadings | tr -d ' ')" -eq 1
fi

rc=0
wait $pid || rc=$?
wait $logger
cat "$T/run.log"
expect "exit code when the database is full" "$rc" -eq 3
grep -q "store put level 2 phase 1: .*$DB" "$T/run.log" || fail "the error does not name level 2 and the database"
if [ $MODE = tmpfs ]; then
    grep -q "database or disk is full (no space left for $DB" "$T/run.log" || fail "the error does not say the disk is full"
else
    grep -q "file size limit reached for $DB" "$T/run.log" || fail "the error does not say the file size limit was reached"
fi
grep -q "earlier ones are intact" "$T/run.log" || fail "the error does not say what is kept"

# still full: the database reads, and it is consistent
expect "integrity_check while full" "$(q 'PRAGMA integrity_check')" = ok
[ $MODE = tmpfs ] && rm -f "$T/small/fill"
expect "integrity_check" "$(q 'PRAGMA integrity_check')" = ok
expect "levels kept" "$(q 'SELECT group_concat(tiles) FROM levels')" = 1
expect "level 1 ops" "$(q 'SELECT sum(count) FROM ops')" -gt 0
expect "level 1 power samples" "$(q 'SELECT count(*) FROM power_samples p JOIN levels l ON p.level_id = l.id')" -gt 0
"$TILEBENCH" report latest --db "$DB" --format json >"$T/report.json" || fail "report failed"
status=$(jq -r .run.status "$T/report.json")
[ "$status" = interrupted ] || [ "$status" = aborted ] || fail "status '$status', want interrupted or aborted"
echo "ok: run status $status"
expect "report levels" "$(jq '.run.levels | length' "$T/report.json")" -eq 1

# with room again, the same database takes a new run (no limit on this one)
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady 2s --ramp-down 0 --idle 0 \
    --db "$DB" --quiet >"$T/run2.log" 2>&1 || fail "a new run on the same database exited $?: $(cat "$T/run2.log")"
expect "new run complete" "$(q 'SELECT status FROM runs ORDER BY id DESC LIMIT 1')" = complete
# the full disk had refused the first run's final status; the next writer to open the file writes it
expect "first run's stored status once the disk has room (what readers showed)" "$(q 'SELECT status FROM runs ORDER BY id LIMIT 1')" = "$status"
expect "integrity_check after the new run" "$(q 'PRAGMA integrity_check')" = ok

# a report that cannot be written is exit 2 with a message naming the file:
# to a full device (a /dev/full node of our own: written in place, never
# replaced by a renamed file), to stdout on it, and to a regular file under
# a 4 KiB file size limit (the old report stays, no temporary file is left)
mknod "$T/full" c 1 7 || fail "mknod of a full device failed"
for out in "-o $T/full" "-"; do
    rc=0
    if [ "$out" = - ]; then
        "$TILEBENCH" report latest --db "$DB" --format html >"$T/full" 2>"$T/report-full.err" || rc=$?
    else
        "$TILEBENCH" report latest --db "$DB" --format html $out 2>"$T/report-full.err" || rc=$?
        cp "$T/report-full.err" "$T/report-full-o.err"
    fi
    expect "report $out to a full device: exit" "$rc" -eq 2
    grep -q "No space left on device" "$T/report-full.err" || fail "unclear error: $(cat "$T/report-full.err")"
    [ -c "$T/full" ] || fail "report $out replaced the device with a file"
done
grep -qF "write $T/full: " "$T/report-full-o.err" || fail "the error does not name the file: $(cat "$T/report-full-o.err")"
rc=0
"$TILEBENCH" compare 1 2 --db "$DB" --format html -o "$T/full" 2>"$T/compare-full.err" || rc=$?
expect "compare -o a full device: exit" "$rc" -eq 2
grep -qF "write $T/full: " "$T/compare-full.err" || fail "unclear compare error: $(cat "$T/compare-full.err")"
[ -c "$T/full" ] || fail "compare replaced the device with a file"
echo "old report" >"$T/old.html"
# a copy without WAL: reading it writes no -shm file, which the limit would refuse
sqlite3 "$DB" ".backup $T/nowal.db" && sqlite3 "$T/nowal.db" "PRAGMA journal_mode=DELETE" >/dev/null || fail "db copy"
rc=0
(trap '' XFSZ; ulimit -f 4; exec "$TILEBENCH" report latest --db "$T/nowal.db" --format html -o "$T/old.html") \
    2>"$T/report-big.err" || rc=$?
expect "report over the file size limit: exit" "$rc" -eq 2
grep -qF "write $T/old.html: " "$T/report-big.err" || fail "unclear error: $(cat "$T/report-big.err")"
expect "the old report is kept" "$(cat "$T/old.html")" = "old report"
expect "temporary files left" "$(find "$T" -maxdepth 1 -name 'old.html.tmp.*' | wc -l)" -eq 0
echo "PASS test_disk_full"
