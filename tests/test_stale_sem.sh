#!/bin/sh
# test_stale_sem.sh - a sweep does not wait on a semaphore that a killed
# job left taken (driver/job.h, job_mpi_defaults), under mpirun with 2
# ranks. Open MPI's single-node shared-file-pointer component guards each
# MPI_File_open with the named semaphore OMPIO_<base name of the file>; a
# rank that dies inside the open (SIGKILL, or SIGBUS on a full /tmp)
# leaves it taken, and every later sweep writing a file of that base name
# on the node, --resume included, waited in sem_wait for ever (a
# development VM had kept one taken since its disk filled).
# The test leaves the semaphore of its file taken, then sweeps, and
# --resumes a stopped sweep, each bounded to 120 s (jobs_lib.sh's bounded:
# past it, the ranks' stacks and a failure).
# usage: test_stale_sem.sh MADSWEEP STALE_SEM SRC TMP MPIRUN...
set -u
BIN=$1 STALE=$2 SRC=$3 TMP=$4
shift 4
MPIRUN="$* -np 2"
mkdir -p "$TMP"
. "$SRC/tests/jobs_lib.sh"
f="$TMP/stale_sem_$$.h5"
sem="/OMPIO_stale_sem_$$.h5"
trap '"$STALE" unlink "$sem"' EXIT
rm -f "$f"
"$STALE" take "$sem" || fail "cannot leave $sem taken"

say "a sweep whose file's semaphore was left taken"
bounded 120 $MPIRUN "$BIN" sweep "$SRC/tests/sweep_jobs.cfg" -o "$f" --quiet \
  >"$TMP/stale_sem.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/stale_sem.log"; fail "the sweep exited $rc"; }

say "--resume of a stopped sweep, the semaphore taken again"
rm -f "$f"
bounded 120 env MADSWEEP_STOP_AFTER_CHUNKS=3 $MPIRUN "$BIN" sweep \
  "$SRC/tests/sweep_jobs.cfg" -o "$f" --quiet >"$TMP/stale_sem.log" 2>&1
rc=$?
[ $rc -eq 75 ] || { cat "$TMP/stale_sem.log"; fail "the stopped sweep exited $rc, want 75"; }
"$STALE" unlink "$sem" && "$STALE" take "$sem" || fail "cannot leave $sem taken"
bounded 120 $MPIRUN "$BIN" sweep "$SRC/tests/sweep_jobs.cfg" -o "$f" --resume --quiet \
  >"$TMP/stale_sem.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/stale_sem.log"; fail "--resume exited $rc"; }
rm -f "$f" "$f"-*.lock
echo "test_stale_sem: all passed"
