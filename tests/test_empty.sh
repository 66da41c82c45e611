#!/bin/sh
# test_empty.sh - a spec with no valid point is data (issue 19), under
# mpirun with 2 ranks: keep = "all", feasible rows and top-K each write a
# complete file with zero rows and say "0 valid points"; `best` reads it
# (exit 0, "0 of 0 rows"), `point` says there is no valid point (exit 2),
# and --resume of the complete file exits 0.
# usage: test_empty.sh MADSWEEP SRC TMP MPIRUN...
set -u
BIN=$1 SRC=$2 TMP=$3
shift 3
MPIRUN="$* -np 2"
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$TMP"
attr() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | head -n 1; }
for keep in '' 'keep = { feasible = true; };' \
            'keep = { top = 2; by = "iteration_time_s"; group = ["model"]; };'; do
  spec="$TMP/empty.cfg" f="$TMP/empty.h5"
  { cat "$SRC/tests/data/sweep_empty.cfg"; echo "$keep"; } >"$spec"
  rm -f "$f"
  $MPIRUN "$BIN" sweep "$spec" -o "$f" >"$TMP/empty.log" 2>&1 ||
    { cat "$TMP/empty.log"; fail "sweep ($keep)"; }
  grep -q " 0 valid points" "$TMP/empty.log" || { cat "$TMP/empty.log"; fail "no '0 valid points' ($keep)"; }
  [ "$(attr "$f" complete)" = 1 ] || fail "not complete ($keep)"
  [ "$(attr "$f" points_valid)" = 0 ] || fail "points_valid is not 0 ($keep)"
  "$BIN" best "$f" >"$TMP/best.log" 2>&1 || { cat "$TMP/best.log"; fail "best ($keep)"; }
  grep -q "0 of 0 rows" "$TMP/best.log" || { cat "$TMP/best.log"; fail "best output ($keep)"; }
  "$BIN" point "$f" 0 >"$TMP/point.log" 2>&1
  [ $? -eq 2 ] && grep -q "no valid point" "$TMP/point.log" ||
    { cat "$TMP/point.log"; fail "point ($keep)"; }
  $MPIRUN "$BIN" sweep "$spec" -o "$f" --resume --quiet >"$TMP/empty.log" 2>&1 ||
    { cat "$TMP/empty.log"; fail "--resume of the complete empty file ($keep)"; }
  echo "empty ($keep): complete, zero rows, best and point read it"
done
echo "test_empty: all passed"
