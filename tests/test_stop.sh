#!/bin/sh
# test_stop.sh - graceful stops, one writer per file (issue 9), under
# mpirun with 2 ranks:
#   1. rank 0 raises SIGUSR1 after 2 chunks (MADSWEEP_STOP_AFTER_CHUNKS):
#      every rank stops, exit 75, complete = 0, best refuses the file,
#      --resume finishes it with datasets identical to an uninterrupted
#      run;
#   2. a real SIGUSR1 to mpirun (which forwards it, as sweep.sbatch does
#      with srun) while every rank holds after its first chunk
#      (MADSWEEP_HOLD_AFTER_CHUNKS, so the sweep cannot finish before the
#      signal lands): the file exists with complete = 0 while the job runs, a
#      second sweep on it is refused before touching it, the job stops
#      with 75, --resume gives identical datasets;
#   3. SIGTERM to both ranks as soon as the file exists: exit 75, --resume
#      gives identical datasets;
#   4. a stop in the count pass (MADSWEEP_STOP_IN_COUNT: rank 0 raises
#      SIGTERM there): exit 75 before any row, no datasets yet, --resume
#      lays the file out and gives identical datasets;
#   5. reduced sweeps (keep top 2 per model and system; keep feasible
#      rows): a SIGUSR1 after 3 chunks makes the ranks checkpoint what
#      they reduced (keep/slot<keep_slot>/state chunks > 0) and exit 75; --resume continues from
#      the checkpoint to datasets identical to an uninterrupted reduced run
#   6. SIGTERM raised just before MPI_Init (MADSWEEP_STOP_BEFORE_INIT):
#      exit 75, and --resume gives identical datasets
#   7. SIGTERM to mpirun itself: Open MPI aborts the job (SIGTERM to the
#      ranks, SIGKILL a second later) and exits 1 whatever they return;
#      the file is resumable all the same and --resume gives identical
#      datasets;
#   8. SIGTERM to scripts/mpirun.sh, the launcher that turns SIGTERM into
#      a stop request (its stop file): exit 75, --resume gives identical
#      datasets;
#   8b. SIGUSR1 to scripts/mpirun.sh (a batch system's warning signal): the
#      same, exit 75 (the wrapper died of it, exit 138, mpirun and the
#      ranks running on to the end);
#   9. SIGTERM to scripts/mpirun.sh at moments of its first second (as
#      mpirun starts, as the ranks start, while they load the spec): never
#      lost (exit 0), never a kill (exit 138: SIGUSR1 before the ranks had
#      their handlers; issue 29), always 75 and a file --resume finishes
# (an output equal to an input: tests/data/bad/spec_output_is_input.cfg).
# usage: test_stop.sh MADSWEEP H5SAME SRC TMP MPIRUN...
set -u
BIN=$1 SAME=$2 SRC=$3 TMP=$4
shift 4
LAUNCH="$*"
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
# every rank waits after its first chunk until the signal lands (the
# slowed sweep alone finished first on a loaded machine: exit 0; issue 29)
MADSWEEP_HOLD_AFTER_CHUNKS=1
export MADSWEEP_HOLD_AFTER_CHUNKS
start "$f"
unset MADSWEEP_HOLD_AFTER_CHUNKS
wait_file "$f"
"$BIN" sweep "$SRC/configs/sweeps/quickstart.cfg" -o "$f" >"$TMP/second.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$TMP/second.log"; fail "second sweep: exit $rc, want 1"; }
grep -q "being written by another running sweep" "$TMP/second.log" ||
  fail "second sweep: no message"
wait_rows "$f"
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
grep -q "stopped by SIGTERM" "$TMP/job.log" || { cat "$TMP/job.log"; fail "no stop message"; }
resume "$f"

say "4. a stop in the count pass"
f="$TMP/stop_count.h5"
rm -f "$f"
MADSWEEP_STOP_IN_COUNT=1 $MPIRUN "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/count.log" 2>&1
rc=$?
[ $rc -eq 75 ] || { cat "$TMP/count.log"; fail "stop in the count pass: exit $rc, want 75"; }
grep -q "during the count pass" "$TMP/count.log" ||
  { cat "$TMP/count.log"; fail "the stop did not land in the count pass"; }
[ "$(attr "$f" complete)" = 0 ] || fail "complete is not 0 after a stop in the count pass"
h5dump -H -d /results "$f" >/dev/null 2>&1 && fail "the file has rows after a stop in the count pass"
resume "$f"

say "5. reduced sweeps: a stop checkpoints, --resume completes exactly"
for keep in 'top = 2; by = "iteration_time_s"; group = ["model", "system"];' \
            'feasible = true; group = ["model"];'; do
  kspec="$TMP/stop_keep.cfg"
  { cat "$SPEC"; echo "keep = { $keep };"; } >"$kspec"
  kref="$TMP/stop_keep_ref.h5"
  f="$TMP/stop_keep.h5"
  rm -f "$kref" "$f"
  $MPIRUN "$BIN" sweep "$kspec" -o "$kref" --quiet >"$TMP/keep_ref.log" 2>&1 ||
    { cat "$TMP/keep_ref.log"; fail "reduced reference sweep ($keep)"; }
  MADSWEEP_STOP_AFTER_CHUNKS=3 MADSWEEP_CHUNK_DELAY_MS=$JOBS_DELAY_MS \
    $MPIRUN "$BIN" sweep "$kspec" -o "$f" --quiet >"$TMP/keep.log" 2>&1
  rc=$?
  [ $rc -eq 75 ] || { cat "$TMP/keep.log"; fail "reduced ($keep): exit $rc, want 75"; }
  grep -q "reduced (checkpointed)" "$TMP/keep.log" ||
    { cat "$TMP/keep.log"; fail "reduced ($keep): no checkpoint message"; }
  [ "$(attr "$f" complete)" = 0 ] || fail "reduced ($keep): complete is not 0"
  kc=$(attr "$f" "keep/slot$(attr "$f" keep_slot)/state/chunks")
  [ -n "$kc" ] && [ "$kc" -gt 0 ] || fail "reduced ($keep): no checkpoint (keep_chunks '$kc')"
  resume "$f" "$kspec" "$kref"
  echo "reduced ($keep): stopped with $kc chunks checkpointed, resumed identical"
done

say "6. a stop while MPI starts (the handlers come before MPI_Init)"
f="$TMP/stop_init.h5"
rm -f "$f"
MADSWEEP_STOP_BEFORE_INIT=1 $MPIRUN "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/init.log" 2>&1
rc=$?
[ $rc -eq 75 ] || { cat "$TMP/init.log"; fail "a stop before MPI_Init: exit $rc, want 75"; }
resume "$f"

say "7. SIGTERM to mpirun: Open MPI's abort, a resumable file"
f="$TMP/stop_mpirun.h5"
start "$f"
wait_file "$f"
wait_rows "$f"
kill -TERM "$job"
wait "$job"
rc=$?
[ $rc -ne 0 ] || fail "SIGTERM to mpirun: exit 0"
echo "SIGTERM to mpirun: exit $rc (Open MPI's status for a signalled mpirun)"
[ "$(attr "$f" complete)" = 0 ] || fail "complete is not 0 after SIGTERM to mpirun"
resume "$f"

# 8b: SIGUSR1 ended the wrapper with 138, the ranks running on (issue 29);
# the ranks hold after their first chunk until the stop lands
for sig in TERM USR1; do
  say "8. SIG$sig to scripts/mpirun.sh: exit 75"
  f="$TMP/stop_wrapper.h5"
  rm -f "$f"
  MADSWEEP_MPIRUN="$LAUNCH" MADSWEEP_HOLD_AFTER_CHUNKS=1 \
    "$SRC/scripts/mpirun.sh" -np 2 "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/job.log" 2>&1 &
  job=$!
  wait_file "$f"
  wait_rows "$f"
  kill -$sig "$job"
  wait "$job"
  rc=$?
  [ $rc -eq 75 ] || { cat "$TMP/job.log"; fail "SIG$sig to scripts/mpirun.sh: exit $rc, want 75"; }
  grep -q "stopped by SIG$sig" "$TMP/job.log" || { cat "$TMP/job.log"; fail "no stop message"; }
  [ "$(attr "$f" complete)" = 0 ] || fail "complete is not 0 after SIG$sig to scripts/mpirun.sh"
  resume "$f"
done

say "9. SIGTERM to scripts/mpirun.sh in its first second"
for d in 0 0.01 0.03 0.1 0.2 0.3 0.5 0.7 1.0; do
  f="$TMP/stop_early.h5"
  rm -f "$f"
  MADSWEEP_MPIRUN="$LAUNCH" MADSWEEP_CHUNK_DELAY_MS=$JOBS_DELAY_MS \
    "$SRC/scripts/mpirun.sh" -np 2 "$BIN" sweep "$SPEC" -o "$f" --quiet >"$TMP/job.log" 2>&1 &
  job=$!
  # from the moment the wrapper catches SIGTERM (its first command; before
  # it, bash's default ends it with nothing started)
  i=0
  until [ -r "/proc/$job/status" ] &&
        mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$job/status") &&
        [ -n "$mask" ] && [ $(((0x$mask >> 14) & 1)) -eq 1 ]; do
    i=$((i + 1))
    [ $i -le 1000 ] || fail "scripts/mpirun.sh never caught SIGTERM"
    sleep 0.005
  done
  sleep "$d"
  kill -TERM "$job"
  wait "$job"
  rc=$?
  [ $rc -eq 75 ] || { cat "$TMP/job.log"; fail "SIGTERM $d s after the start: exit $rc, want 75"; }
  grep -q "stopped by SIGTERM" "$TMP/job.log" ||
    { cat "$TMP/job.log"; fail "SIGTERM $d s after the start: no stop message"; }
  resume "$f"
  echo "SIGTERM $d s after the start: exit 75, resumed identical"
done

rm -f "$TMP"/stop_*.h5 "$TMP"/stop_*.cfg
echo "test_stop: all passed"
