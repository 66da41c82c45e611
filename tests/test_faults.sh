#!/bin/sh
# test_faults.sh - faults with nothing lost (issue 9), under mpirun with 2
# ranks:
#   1. one rank (not mpirun) is SIGKILLed mid-sweep: the job ends within
#      30 s, without a hang; --resume gives datasets identical to an
#      uninterrupted run;
#   2. the file system fills up (a 40 MB tmpfs for a 64 MB file): a
#      message says the file system is full and the file is resumable;
#      after the tmpfs is grown, --resume gives identical datasets; then
#      the same while the file is being created (100 kB: the axis tables
#      do not fit): a message without an HDF5 stack, and --resume starts
#      the file over (issue 19). Needs
#      root and mount(2); where the tmpfs cannot be mounted this part is
#      reported as skipped (exit 77, a CTest skip) after part 1 passed.
# usage: test_faults.sh MADSWEEP H5SAME SRC TMP MPIRUN...
set -u
BIN=$1 SAME=$2 SRC=$3 TMP=$4
shift 4
MPIRUN="$* -np 2"
SPEC="$SRC/tests/sweep_jobs.cfg"
mkdir -p "$TMP"
. "$SRC/tests/jobs_lib.sh"
reference

say "1. SIGKILL to one rank mid-sweep"
f="$TMP/fault_kill.h5"
start "$f"
wait_file "$f"
wait_rows "$f"
victim=$(ranks | tail -n 1)
[ -n "$victim" ] || fail "no rank process found"
t0=$(date +%s)
kill -KILL "$victim"
wait "$job"
rc=$?
t1=$(date +%s)
[ $rc -ne 0 ] || fail "the job ended with exit 0 after losing a rank"
[ $((t1 - t0)) -le 30 ] || fail "the job took $((t1 - t0)) s to end after a rank died"
echo "the job ended $((t1 - t0)) s after the kill (exit $rc)"
resume "$f"
rm -f "$f"

say "2. a full file system"
mnt="$TMP/full"
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=40m madsweep-full "$mnt" 2>/dev/null; then
  echo "SKIP: cannot mount a tmpfs here (needs root and mount(2))"
  exit 77
fi
trap 'umount "$mnt" 2>/dev/null' EXIT
f="$mnt/fault_full.h5"
$MPIRUN "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/full.log" 2>&1 &&
  fail "the sweep succeeded on a full file system"
grep -q "the file system is full" "$TMP/full.log" ||
  { cat "$TMP/full.log"; fail "no message saying the file system is full"; }
[ "$(attr "$f" complete)" = 0 ] || fail "the file does not read complete = 0"
mount -o remount,size=400m "$mnt" || fail "cannot grow the tmpfs"
resume "$f"

say "3. a file system full while the file is created (the axis tables)"
rm -f "$f"
mount -o remount,size=100k "$mnt" || fail "cannot shrink the tmpfs"
$MPIRUN "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/full0.log" 2>&1 &&
  fail "the sweep succeeded on a 100 kB file system"
grep -q "the file system refused a write" "$TMP/full0.log" ||
  { cat "$TMP/full0.log"; fail "no message saying the write was refused"; }
grep -q "HDF5 error stack" "$TMP/full0.log" && fail "a bare HDF5 error stack"
mount -o remount,size=400m "$mnt" || fail "cannot grow the tmpfs"
resume "$f"
echo "test_faults: all passed"
