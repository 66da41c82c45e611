#!/bin/sh
# test_file_limit.sh - a file-size limit (ulimit -f, a batch system's)
# on the ranks of a 2-rank sweep (issue 29): with SIGXFSZ ignored the
# write past the limit failed on one rank only, inside the layout's
# H5Fflush, and the two ranks waited for each other for ever (one in a
# metadata barrier, the other in H5FD_truncate's broadcast; on this
# spec from about 0.6 of the file's size up). For limits of 5, 60, 80 and
# 90 % of the finished file: the job ends within 60 s with a
# non-zero exit and a message naming the limit or the refused write, the
# file is not complete (best refuses it), and once the limit is gone
# --resume gives datasets identical to an uninterrupted run.
# usage: test_file_limit.sh MADSWEEP H5SAME TMP MPIRUN...
set -u
BIN=$1 SAME=$2 TMP=$3
shift 3
MPIRUN="$* -np 2"
fail() { echo "FAIL: $*"; exit 1; }
attr() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | head -n 1; }
mkdir -p "$TMP"
spec="$TMP/limit.cfg" ref="$TMP/limit_ref.h5" f="$TMP/limit.h5"
cat >"$spec" <<'EOF'
name = "limit";
fidelity = "detailed";
models = ["llama3-8b"];
system_grid = ({ hardware = "h100-sxm-80g"; nodes = [1, 2]; devices_per_node = [8]; });
tasks = ("pretrain");
stacks = ["megatron-core"];
global_batch = [64];
strategies = "auto";
EOF
rm -f "$ref"
$MPIRUN "$BIN" sweep "$spec" -o "$ref" --quiet || fail "reference sweep"
size=$(wc -c <"$ref")
# the unit of sh's ulimit -f (512 bytes in dash, 1024 in bash)
rm -f "$TMP/unit"
sh -c "ulimit -f 1; dd if=/dev/zero of='$TMP/unit' bs=64 count=64" 2>/dev/null
unit=$(wc -c <"$TMP/unit")
[ "$unit" -gt 0 ] || fail "cannot tell the unit of ulimit -f"
for pct in 5 60 80 90; do
  blocks=$((size / 100 * pct / unit))
  rm -f "$f"
  timeout 60 $MPIRUN sh -c "ulimit -f $blocks; exec '$BIN' sweep '$spec' -o '$f' --quiet" \
    >"$TMP/limit.log" 2>&1
  rc=$?
  [ $rc -ne 124 ] || { cat "$TMP/limit.log"; fail "$pct % of the file: the ranks hang (timeout)"; }
  [ $rc -ne 0 ] || fail "$pct % of the file: exit 0 under a file-size limit"
  grep -q "file-size limit\|refused a write\|refused the write" "$TMP/limit.log" ||
    { cat "$TMP/limit.log"; fail "$pct % of the file: no message about the refused write"; }
  [ "$(attr "$f" complete)" != 1 ] || fail "$pct % of the file: the file says complete"
  "$BIN" best "$f" >"$TMP/best.log" 2>&1 && fail "$pct % of the file: best read it"
  $MPIRUN "$BIN" sweep "$spec" -o "$f" --resume --quiet >"$TMP/resume.log" 2>&1 ||
    { cat "$TMP/resume.log"; fail "$pct % of the file: --resume"; }
  "$SAME" "$ref" "$f" >"$TMP/diff.txt" ||
    { cat "$TMP/diff.txt"; fail "$pct % of the file: resumed file differs"; }
  echo "$pct % of the file ($blocks blocks of $unit bytes): exit $rc, resumed identical"
done
echo "PASS"
