#!/bin/sh
# test_keep_kill.sh - reduced sweeps survive a SIGKILL at any moment
# (issue 19), under mpirun with 2 and 3 ranks. A small keep sweep (about
# 180 chunks of 64 ids; feasible rows, the top 2 per model and system, or
# a Pareto front per model), slowed down and checkpointing every 50 ms,
# is SIGKILLed (every rank) at a random moment of its run, from before the
# file exists to after it is complete, TRIALS times (default 12: the keep
# modes in turn, every other trial on 3 ranks); each time --resume (on 2
# ranks; or a fresh run when the kill came before the file existed) must
# give datasets byte-identical to an uninterrupted 2-rank run. A kill
# while the file is being created leaves a file --resume starts over; a
# kill between a batch of rows and its checkpoint leaves the file at the
# previous checkpoint. Then a sweep killed before its first timed
# checkpoint (--checkpoint 1000) resumes from the checkpoint written with
# the layout.
# usage: test_keep_kill.sh MADSWEEP H5SAME SRC TMP MPIRUN...
set -u
BIN=$1 SAME=$2 SRC=$3 TMP=$4
shift 4
LAUNCH="$*"
MPIRUN="$LAUNCH -np 2"
TRIALS=${TRIALS:-12}
mkdir -p "$TMP"
. "$SRC/tests/jobs_lib.sh"

# kill_job: SIGKILL to every rank of $job, then wait for mpirun (60 s)
kill_job() {
  for p in $(ranks); do kill -KILL "$p" 2>/dev/null; done
  wait_job 60 "mpirun, after its ranks' SIGKILL"
}

# the keep modes, one spec and one uninterrupted 2-rank reference each
set -- 'feasible = true; group = ["model"];' \
       'top = 2; by = "iteration_time_s"; group = ["model", "system"];' \
       'pareto = ["mfu", "tokens_per_s"]; group = ["model"];'
modes=$#
i=0
for keep in "$@"; do
  i=$((i + 1))
  cat >"$TMP/kk$i.cfg" <<EOT
models = ["llama2-7b", "gpt3-1.3b"];
system_grid = ( { hardware = ["h100-sxm-80g", "a100-80g"]; nodes = [1]; } );
tasks = ["pretrain", "inference"];
global_batch = [256];
strategies = "auto";
chunk = 64;
keep = { $keep };
EOT
  say "reference of keep mode $i"
  rm -f "$TMP/kk${i}_ref.h5"
  bounded 300 $MPIRUN "$BIN" sweep "$TMP/kk$i.cfg" -o "$TMP/kk${i}_ref.h5" --quiet \
    >"$TMP/kk_ref.log" 2>&1 ||
    { cat "$TMP/kk_ref.log"; fail "reference sweep ($keep)"; }
done

# how long a slowed-down run takes (the kills land within it); it must
# equal the reference with checkpoints every 50 ms
say "a slowed-down run, checkpoints every 50 ms"
f="$TMP/kk.h5"
rm -f "$f"
t0=$(date +%s%N)
bounded 300 env MADSWEEP_CHUNK_DELAY_MS=10 $MPIRUN "$BIN" sweep "$TMP/kk1.cfg" -o "$f" \
  --quiet --checkpoint 0.05 >"$TMP/kk.log" 2>&1 || { cat "$TMP/kk.log"; fail "slowed run"; }
span=$(( ($(date +%s%N) - t0) / 1000000 ))
"$SAME" "$TMP/kk1_ref.h5" "$f" >"$TMP/diff.txt" ||
  { cat "$TMP/diff.txt"; fail "a run with checkpoints every 50 ms differs"; }

t=0
while [ $t -lt "$TRIALS" ]; do
  i=$((t % modes + 1))
  np=$((2 + t % 2))
  t=$((t + 1))
  kspec="$TMP/kk$i.cfg"
  ms=$(( $(od -An -N2 -tu2 /dev/urandom) % (span + 1) ))
  rm -f "$f"
  MADSWEEP_CHUNK_DELAY_MS=10 $LAUNCH -np $np "$BIN" sweep "$kspec" -o "$f" --quiet \
    --checkpoint 0.05 >"$TMP/kk.log" 2>&1 &
  job=$!
  sleep "$(awk "BEGIN { print $ms / 1000 }")"
  kill_job
  if [ -e "$f" ]; then
    how="--resume"
    bounded 300 $MPIRUN "$BIN" sweep "$kspec" -o "$f" --resume --quiet >"$TMP/kk_res.log" 2>&1
  else
    how="a fresh run (killed before the file existed)"
    bounded 300 $MPIRUN "$BIN" sweep "$kspec" -o "$f" --quiet >"$TMP/kk_res.log" 2>&1
  fi
  rc=$?
  what="trial $t (keep mode $i, $np ranks), killed at $ms of $span ms"
  [ $rc -eq 0 ] || { cat "$TMP/kk_res.log"; cp "$f" "$TMP/kk_failed.h5" 2>/dev/null
                     fail "$what: $how exit $rc"; }
  "$SAME" "$TMP/kk${i}_ref.h5" "$f" >"$TMP/diff.txt" ||
    { cat "$TMP/diff.txt"; cp "$f" "$TMP/kk_failed.h5"; fail "$what: differs"; }
  echo "$what, $how: identical"
done

# killed while finishing (the rows and /groups written, the file not yet
# marked complete; then marked complete, its checkpoints not yet removed):
# a kill there once left keep_slot naming a removed /keep
for at in 1 2; do
  for i in 1 2; do
    say "killed while finishing ($at), keep mode $i"
    f="$TMP/kk_fin.h5"
    rm -f "$f"
    bounded 300 env MADSWEEP_KILL_FINISH=$at $MPIRUN "$BIN" sweep "$TMP/kk$i.cfg" -o "$f" \
      --quiet >"$TMP/kk.log" 2>&1 && fail "the sweep was not killed while finishing ($at)"
    [ "$(attr "$f" complete)" = $((at - 1)) ] || fail "complete is not $((at - 1)) at kill $at"
    resume "$f" "$TMP/kk$i.cfg" "$TMP/kk${i}_ref.h5"
    h5ls "$f" | grep -q '^keep ' && fail "/keep left in the finished file (kill $at)"
  done
done

say "killed before the first timed checkpoint"
f="$TMP/kk_first.h5"
rm -f "$f"
bounded 300 env MADSWEEP_KILL_AFTER_CHUNKS=20 MADSWEEP_CHUNK_DELAY_MS=10 $MPIRUN "$BIN" \
  sweep "$TMP/kk2.cfg" -o "$f" --quiet --checkpoint 1000 >"$TMP/kk.log" 2>&1 &&
  fail "the sweep was not killed"
[ "$(attr "$f" keep_slot)" = 0 ] || fail "no checkpoint written with the layout"
resume "$f" "$TMP/kk2.cfg" "$TMP/kk2_ref.h5"
rm -f "$TMP"/kk*.h5 "$TMP"/kk*.h5-*.lock "$TMP"/kk*.cfg
echo "test_keep_kill: all passed"
