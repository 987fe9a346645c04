#!/usr/bin/env bash
# test_valgrind.sh: a short sweep (1 tile of the standard tile definition:
# oltp, kv and mail against the embedded SUT, a few seconds of steady state),
# then `report` in every format, under valgrind memcheck: zero memory errors
# and zero definitely or indirectly lost blocks (--error-exitcode=99). The
# SUT's servers run outside valgrind; only tilebench is checked.
source "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || fail "valgrind not found (Debian package valgrind)"
"$TILEBENCH" sut up --tiles 1 --dir "$T/sut" >"$T/sut-up.log" 2>&1 || fail "sut up failed: $(cat "$T/sut-up.log")"
cat "$TB_SOURCE_DIR/tiles/standard.ini" "$T/sut/sut.ini" >"$T/tile.ini"
VG=(valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
    --error-exitcode=99 --track-fds=no --num-callers=30)

vg() { # NAME WANT-EXIT ARGS...: tilebench ARGS under valgrind, its log in $T/vg-NAME.log
    local name=$1 want=$2 rc=0
    shift 2
    "${VG[@]}" --log-file="$T/vg-$name.log" "$TILEBENCH" "$@" >"$T/$name.out" 2>&1 || rc=$?
    if [ $rc -eq 99 ]; then
        sed -n '/ERROR SUMMARY\|definitely lost\|indirectly lost\|Invalid\|uninitialised/p' "$T/vg-$name.log" >&2
        fail "tilebench $name: valgrind found errors or leaks (exit 99), see $T/vg-$name.log"
    fi
    [ $rc -eq "$want" ] || fail "tilebench $name under valgrind exited $rc, want $want: $(tail -3 "$T/$name.out")"
    grep -q 'ERROR SUMMARY: 0 errors' "$T/vg-$name.log" || fail "$name: valgrind found errors: $(grep 'ERROR SUMMARY' "$T/vg-$name.log")"
    # "definitely lost" / "indirectly lost" lines appear only when something leaked
    if grep -qE '(definitely|indirectly) lost: [1-9]' "$T/vg-$name.log"; then
        fail "$name: leaks: $(grep -E '(definitely|indirectly) lost' "$T/vg-$name.log")"
    fi
    echo "ok: $name under valgrind: $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$T/vg-$name.log"), $(grep -E 'All heap blocks were freed|definitely lost' "$T/vg-$name.log" | head -1 | sed 's/^==[0-9]*== *//')"
}

vg run 0 run --config "$T/tile.ini" --tiles 1 --ramp-up 1s --warm-up 1s --steady 4s --ramp-down 0 --idle 1s \
    --db "$T/r.db" --quiet
"$TILEBENCH" report latest --db "$T/r.db" --format json >"$T/r.json"
expect "run status" "$(jq -r .run.status "$T/r.json")" = complete
expect "ops measured under valgrind" "$(jq '[.run.levels[0].workloads[].ops] | add' "$T/r.json")" -gt 0
for fmt in text json csv html; do vg "report-$fmt" 0 report latest --db "$T/r.db" --format $fmt -o "$T/report.$fmt"; done
vg runs 0 runs --db "$T/r.db"
# validate exits 0 or 1 by the verdict of this short run; either is fine here
v=$("$TILEBENCH" validate latest --db "$T/r.db" >/dev/null 2>&1; echo $?)
vg validate "$v" validate latest --db "$T/r.db"
# error paths free what they took too
vg bad-config 2 run --config "$T/nonexistent.ini" --db "$T/r.db"
vg bad-tiles 2 run --config "$T/tile.ini" --tiles 3..1 --db "$T/r.db"
vg no-run 2 report 999 --db "$T/r.db"
vg refused-meter 3 meter probe "wt310://127.0.0.1:1" --samples 1
echo "PASS test_valgrind"
