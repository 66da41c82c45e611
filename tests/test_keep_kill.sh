#!/bin/sh
# test_keep_kill.sh - reduced sweeps survive a SIGKILL at any moment
# (issue 19), under mpirun with 2 ranks. A keep sweep (feasible rows, or
# the top 2 per model and system), slowed down and checkpointing every
# 50 ms, is SIGKILLed (both ranks) at a random moment of its run, from
# before the file exists to after it is complete, TRIALS times (default
# 8); each time --resume (or a fresh run when the kill came before the
# file existed) must give datasets byte-identical to an uninterrupted
# run. A kill while the file is being created leaves a file --resume
# starts over; a kill between a batch of rows and its checkpoint leaves
# the file at the previous checkpoint. Then a sweep killed before its
# first timed checkpoint (--checkpoint 1000) resumes from the checkpoint
# written with the layout.
# usage: test_keep_kill.sh MADSWEEP H5SAME SRC TMP MPIRUN...
set -u
BIN=$1 SAME=$2 SRC=$3 TMP=$4
shift 4
MPIRUN="$* -np 2"
SPEC="$SRC/tests/sweep_jobs.cfg"
TRIALS=${TRIALS:-8}
mkdir -p "$TMP"
. "$SRC/tests/jobs_lib.sh"

# kill_job: SIGKILL to every rank of $job, then wait for mpirun
kill_job() {
  for p in $(ranks); do kill -KILL "$p" 2>/dev/null; done
  wait "$job"
}

i=0
for keep in 'feasible = true; group = ["model"];' \
            'top = 2; by = "iteration_time_s"; group = ["model", "system"];'; do
  i=$((i + 1))
  kspec="$TMP/kk$i.cfg"
  kref="$TMP/kk${i}_ref.h5"
  { cat "$SPEC"; echo "keep = { $keep };"; } >"$kspec"
  rm -f "$kref"
  $MPIRUN "$BIN" sweep "$kspec" -o "$kref" --quiet >"$TMP/kk_ref.log" 2>&1 ||
    { cat "$TMP/kk_ref.log"; fail "reference sweep ($keep)"; }
  # how long a slowed-down run takes: the kills land within it
  f="$TMP/kk$i.h5"
  rm -f "$f"
  t0=$(date +%s%N)
  MADSWEEP_CHUNK_DELAY_MS=10 $MPIRUN "$BIN" sweep "$kspec" -o "$f" --quiet \
    --checkpoint 0.05 >"$TMP/kk.log" 2>&1 || { cat "$TMP/kk.log"; fail "slowed run"; }
  span=$(( ($(date +%s%N) - t0) / 1000000 ))
  "$SAME" "$kref" "$f" >"$TMP/diff.txt" ||
    { cat "$TMP/diff.txt"; fail "a run with checkpoints every 50 ms differs ($keep)"; }
  t=0
  while [ $t -lt $((TRIALS / 2)) ]; do
    t=$((t + 1))
    ms=$(( $(od -An -N2 -tu2 /dev/urandom) % (span + 1) ))
    rm -f "$f"
    MADSWEEP_CHUNK_DELAY_MS=10 $MPIRUN "$BIN" sweep "$kspec" -o "$f" --quiet \
      --checkpoint 0.05 >"$TMP/kk.log" 2>&1 &
    job=$!
    sleep "$(awk "BEGIN { print $ms / 1000 }")"
    kill_job
    if [ -e "$f" ]; then
      how="--resume"
      $MPIRUN "$BIN" sweep "$kspec" -o "$f" --resume --quiet >"$TMP/kk_res.log" 2>&1
    else
      how="a fresh run (killed before the file existed)"
      $MPIRUN "$BIN" sweep "$kspec" -o "$f" --quiet >"$TMP/kk_res.log" 2>&1
    fi
    rc=$?
    [ $rc -eq 0 ] || { cat "$TMP/kk_res.log"; cp "$f" "$TMP/kk_failed.h5" 2>/dev/null
                       fail "trial $t ($keep), killed at $ms of $span ms: $how exit $rc"; }
    "$SAME" "$kref" "$f" >"$TMP/diff.txt" ||
      { cat "$TMP/diff.txt"; fail "trial $t ($keep), killed at $ms of $span ms: differs"; }
    echo "trial $t ($keep): killed at $ms of $span ms, $how: identical"
  done
done

say "killed before the first timed checkpoint"
f="$TMP/kk_first.h5"
rm -f "$f"
MADSWEEP_KILL_AFTER_CHUNKS=20 MADSWEEP_CHUNK_DELAY_MS=10 $MPIRUN "$BIN" sweep \
  "$kspec" -o "$f" --quiet --checkpoint 1000 >"$TMP/kk.log" 2>&1 &&
  fail "the sweep was not killed"
[ "$(attr "$f" keep_slot)" = 0 ] || fail "no checkpoint written with the layout"
resume "$f" "$kspec" "$kref"
rm -f "$TMP"/kk*.h5 "$TMP"/kk*.cfg
echo "test_keep_kill: all passed"
