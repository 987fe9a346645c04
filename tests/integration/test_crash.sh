#!/usr/bin/env bash
# test_crash.sh: `kill -9` of tilebench in the middle of a sweep (level 1
# committed, level 2 running). Nothing can clean up after SIGKILL, so this is
# what SQLite's transactions must carry alone: the database passes
# PRAGMA integrity_check, level 1 is there with its ops and power samples,
# `runs` and `report` show the run as interrupted (its writer is dead), and a
# new run writes to the same database.
source "$(dirname "$0")/lib.sh"

"$TILEBENCH" sut up --tiles 2 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
DB="$T/results.db"
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1..2 --ramp-up 1s --warm-up 1s --steady 8s --ramp-down 0 --idle 1s \
    --db "$DB" --quiet >"$T/run.log" 2>&1 &
pid=$!
at_exit 'kill -9 $pid 2>/dev/null'

q() { sqlite3 -batch "$DB" "$1"; }
levels() { q "SELECT count(*) FROM levels" 2>/dev/null || echo 0; }
for _ in $(seq 1 240); do
    [ "$(levels)" -ge 1 ] && break
    kill -0 $pid 2>/dev/null || fail "run ended before level 1 was stored: $(cat "$T/run.log")"
    sleep 0.25
done
expect "levels stored before the kill" "$(levels)" -eq 1
wait_steady "$DB" 2 $pid
sleep 1 # inside level 2's steady state
kill -0 $pid 2>/dev/null || fail "run ended before the kill: $(cat "$T/run.log")"
# level 2 is running: its samples are being taken, it is not stored yet
expect "still one level stored just before the kill" "$(levels)" -eq 1
kill -9 $pid
rc=0
wait $pid || rc=$?
expect "exit status of the killed run (128 + SIGKILL)" "$rc" -eq 137

expect "integrity_check" "$(q 'PRAGMA integrity_check')" = ok
expect "foreign_key_check (no orphans)" "$(q 'PRAGMA foreign_key_check' | wc -l)" -eq 0
expect "stored status is still 'running' (nobody could finish it)" "$(q 'SELECT status FROM runs')" = running
expect "level 1 kept" "$(q 'SELECT tiles FROM levels')" -eq 1
expect "level 1 ops" "$(q 'SELECT sum(o.count) FROM ops o JOIN workloads w ON o.workload_id = w.id')" -gt 0
expect "level 1 power samples" "$(q 'SELECT count(*) FROM power_samples p JOIN levels l ON p.level_id = l.id')" -gt 0

"$TILEBENCH" runs --db "$DB" >"$T/runs.out" 2>&1 || fail "runs failed: $(cat "$T/runs.out")"
grep -q interrupted "$T/runs.out" || fail "runs does not show the run as interrupted: $(cat "$T/runs.out")"
echo "ok: runs: $(grep interrupted "$T/runs.out")"
"$TILEBENCH" report latest --db "$DB" --format json >"$T/report.json" || fail "report failed"
expect "report status" "$(jq -r .run.status "$T/report.json")" = interrupted
expect "report levels" "$(jq '.run.levels | length' "$T/report.json")" -eq 1
expect "report level 1 ops" "$(jq '[.run.levels[0].workloads[].ops] | add' "$T/report.json")" -gt 0

# the same database takes a new run
"$TILEBENCH" run --config "$T/tile.ini" --tiles 1 --ramp-up 0 --warm-up 1s --steady 3s --ramp-down 0 --idle 0 \
    --db "$DB" --quiet >"$T/run2.log" 2>&1 || fail "a new run on the same database exited $?: $(cat "$T/run2.log")"
expect "runs in the database" "$(q 'SELECT count(*) FROM runs')" -eq 2
expect "new run complete" "$(q 'SELECT status FROM runs ORDER BY id DESC LIMIT 1')" = complete
expect "first run still interrupted" "$("$TILEBENCH" report 1 --db "$DB" --format json | jq -r .run.status)" = interrupted
expect "first run's stored status, written by the new run's writer" "$(q 'SELECT status FROM runs WHERE id = 1')" = interrupted
expect "integrity_check after the new run" "$(q 'PRAGMA integrity_check')" = ok
echo "PASS test_crash"
