#!/bin/sh
# test_stop.sh - graceful stops, one writer per file (issue 9), under
# mpirun with 2 ranks:
#   1. rank 0 raises SIGUSR1 after 2 chunks (MADSWEEP_STOP_AFTER_CHUNKS):
#      every rank stops, exit 75, complete = 0, best refuses the file,
#      --resume finishes it with datasets identical to an uninterrupted
#      run;
#   2. a real SIGUSR1 to mpirun (which forwards it, as sweep.sbatch does
#      with srun): the file exists with complete = 0 while the job runs, a
#      second sweep on it is refused before touching it, the job stops
#      with 75, --resume gives identical datasets;
#   3. SIGTERM to both ranks as soon as the file appears (in the check
#      pass, before any row): exit 75, --resume gives identical datasets.
# usage: test_stop.sh MADSWEEP H5SAME SRC TMP MPIRUN...
set -u
BIN=$1 SAME=$2 SRC=$3 TMP=$4
shift 4
MPIRUN="$* -np 2"
SPEC="$SRC/tests/sweep_jobs.cfg"
mkdir -p "$TMP"
. "$SRC/tests/jobs_lib.sh"
reference

say "1. stop requested by rank 0 after 2 chunks"
f="$TMP/stop_hook.h5"
rm -f "$f"
MADSWEEP_STOP_AFTER_CHUNKS=2 $MPIRUN "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/hook.log" 2>&1
rc=$?
[ $rc -eq 75 ] || { cat "$TMP/hook.log"; fail "exit $rc, want 75"; }
grep -q "stopped by SIGUSR1" "$TMP/hook.log" || fail "no stop message"
grep -q -- "--resume" "$TMP/hook.log" || fail "the message does not say how to resume"
[ "$(attr "$f" complete)" = 0 ] || fail "complete is not 0"
"$BIN" best "$f" >"$TMP/best.log" 2>&1 && fail "best read an unfinished file"
grep -q unfinished "$TMP/best.log" || fail "best does not say unfinished"
resume "$f"

say "2. SIGUSR1 to mpirun while it runs; a second sweep on the file"
f="$TMP/stop_usr1.h5"
start "$f"
wait_file "$f"
"$BIN" sweep "$SRC/configs/sweeps/quickstart.cfg" -o "$f" >"$TMP/second.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$TMP/second.log"; fail "second sweep: exit $rc, want 1"; }
grep -q "being written by another running sweep" "$TMP/second.log" ||
  fail "second sweep: no message"
kill -USR1 "$job"
wait "$job"
rc=$?
[ $rc -eq 75 ] || { cat "$TMP/job.log"; fail "SIGUSR1: exit $rc, want 75"; }
[ "$(attr "$f" complete)" = 0 ] || fail "complete is not 0 after SIGUSR1"
resume "$f"

say "3. SIGTERM to the ranks as soon as the file exists"
f="$TMP/stop_term.h5"
start "$f"
wait_file "$f"
pids=$(ranks)
[ -n "$pids" ] || fail "no rank processes found"
kill -TERM $pids
wait "$job"
rc=$?
[ $rc -eq 75 ] || { cat "$TMP/job.log"; fail "SIGTERM: exit $rc, want 75"; }
grep -q "during the check pass" "$TMP/job.log" ||
  { cat "$TMP/job.log"; fail "SIGTERM did not land in the check pass"; }
resume "$f"
rm -f "$TMP"/stop_*.h5
echo "test_stop: all passed"
