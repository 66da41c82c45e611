#!/bin/sh
# test_slurm.sh - scripts/sweep.sbatch on a real single-node Slurm cluster
# (Debian's slurm-wlm and munge, started by scripts/slurm_cluster.sh):
#   1. `sbatch --nodes=1 --ntasks=2 scripts/sweep.sbatch quickstart.cfg
#      OUT.h5` finishes, and every dataset of OUT.h5 equals that of
#      `mpirun -np 2` (scripts/sweep_diff.sh);
#   2. the time-limit path: the batch script gets SIGUSR1 (what
#      --signal=B:USR1@120 sends; here scancel --signal=USR1 --batch, while
#      rows are being written), forwards it to srun, the sweep stops with
#      75, the script requeues the job, the requeued run resumes by itself
#      (--resume), and the file equals the uninterrupted mpirun run (the
#      job is slowed down by the sweep's test hook MADSWEEP_CHUNK_DELAY_MS,
#      which sbatch passes on to the tasks, so that the signal lands
#      while rows are written)
#      (Slurm delays a requeued job by 120 s; the test lifts the delay
#      with `scontrol update StartTime=now`);
#   2b. SIGTERM to the batch script (scancel --signal=TERM --batch): the
#      sweep stops the same way, the job ends with exit code 75 and is not
#      requeued, and --resume (mpirun) gives the uninterrupted datasets;
#   3. MADSWEEP_SRUN_MPI=none (a site without the PMIx plugin): the tasks
#      refuse to run, and say why, instead of each sweeping everything.
# Exits 77 (a CTest skip) only when the cluster cannot start (see
# slurm_cluster.sh: no root, no packages, a daemon that does not come up).
# usage: test_slurm.sh MADSWEEP H5SAME SRC TMP MPIRUN...
set -u
BIN=$1 SAME=$2 SRC=$3 TMP=$4
shift 4
MPIRUN="$* -np 2"
SPEC="$SRC/tests/sweep_jobs.cfg"
mkdir -p "$TMP"
. "$SRC/tests/jobs_lib.sh"
cl="$TMP/slurm"
env=$("$SRC/scripts/slurm_cluster.sh" start "$cl")
rc=$?
[ $rc -eq 0 ] || exit $rc
eval "$env"
trap '"$SRC/scripts/slurm_cluster.sh" stop "$cl"' EXIT
export MADSWEEP_BIN="$BIN"
sbatch_dir=$SRC/scripts

# job_state JOB: COMPLETED, PENDING, ...; job_field JOB KEY: its value
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
# wait_state JOB STATE...: until the job is in one of the states (300 s)
wait_state() {
  j=$1
  shift
  i=0
  while :; do
    s=$(job_field "$j" JobState)
    for w in "$@"; do [ "$s" = "$w" ] && return 0; done
    i=$((i + 1))
    [ $i -le 1500 ] || fail "job $j is $s after 300 s, want $*"
    sleep 0.2
  done
}

say "1. sbatch --nodes=1 --ntasks=2 scripts/sweep.sbatch quickstart.cfg"
q="$TMP/slurm_quickstart.h5"
qref="$TMP/mpirun_quickstart.h5"
rm -f "$q" "$qref"
timeout 600 sbatch --wait --nodes=1 --ntasks=2 --output="$TMP/slurm-%j.out" \
  "$sbatch_dir/sweep.sbatch" "$SRC/configs/sweeps/quickstart.cfg" "$q" >"$TMP/sbatch.log" 2>&1
rc=$?
cat "$TMP"/slurm-*.out 2>/dev/null | head -n 3
[ $rc -eq 0 ] || { cat "$TMP/sbatch.log" "$TMP"/slurm-*.out; fail "sbatch job: exit $rc"; }
grep -q "on 2 ranks" "$TMP"/slurm-*.out || fail "the job did not run 2 ranks"
$MPIRUN "$BIN" sweep "$SRC/configs/sweeps/quickstart.cfg" -o "$qref" --quiet ||
  fail "mpirun -np 2 reference"
sh "$SRC/scripts/sweep_diff.sh" "$qref" "$q" || fail "the Slurm file differs from mpirun -np 2"
rm -f "$q" "$qref" "$TMP"/slurm-*.out

say "1b. no task count, a MADSWEEP_SETUP hook: one rank, as mpirun -np 1"
q="$TMP/slurm_one.h5"
qref="$TMP/mpirun_one.h5"
rm -f "$q" "$qref" "$TMP"/one-*.out
printf 'echo "setup hook sourced"\nexport MADSWEEP_SETUP_SEEN=1\n' >"$TMP/setup.sh"
MADSWEEP_SETUP="$TMP/setup.sh" timeout 600 sbatch --wait --output="$TMP/one-%j.out" \
  "$sbatch_dir/sweep.sbatch" "$SPEC" "$q" >"$TMP/sbatch.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/sbatch.log" "$TMP"/one-*.out; fail "sbatch without a task count: exit $rc"; }
grep -q "setup hook sourced" "$TMP"/one-*.out || fail "MADSWEEP_SETUP was not sourced"
grep -q "on 1 ranks" "$TMP"/one-*.out || { cat "$TMP"/one-*.out; fail "the job did not run 1 rank"; }
${MPIRUN%-np 2} -np 1 "$BIN" sweep "$SPEC" -o "$qref" --quiet ||
  fail "mpirun -np 1 reference"
sh "$SRC/scripts/sweep_diff.sh" "$qref" "$q" || fail "the Slurm file differs from mpirun -np 1"
rm -f "$q" "$qref" "$TMP"/one-*.out

say "2. SIGUSR1 to the batch script: stop, requeue, resume"
reference
f="$TMP/slurm_requeue.h5"
rm -f "$f"
j=$(MADSWEEP_CHUNK_DELAY_MS=$JOBS_DELAY_MS sbatch --parsable --nodes=1 --ntasks=2 \
  --output="$TMP/requeue-%j.out" "$sbatch_dir/sweep.sbatch" "$SPEC" "$f") || fail "sbatch"
wait_file "$f"
wait_rows "$f"
scancel --signal=USR1 --batch "$j" || fail "scancel --signal=USR1"
wait_state "$j" PENDING COMPLETED FAILED
[ "$(job_field "$j" JobState)" = PENDING ] ||
  { cat "$TMP/requeue-$j.out"; fail "the job was not requeued"; }
scontrol update jobid="$j" StartTime=now || fail "scontrol update StartTime"
wait_state "$j" COMPLETED FAILED CANCELLED
log="$TMP/requeue-$j.out"
[ "$(job_field "$j" JobState)" = COMPLETED ] || { cat "$log"; fail "the requeued job did not complete"; }
[ "$(job_field "$j" Restarts)" = 1 ] || { cat "$log"; fail "Restarts is not 1"; }
grep -q "stopped by SIGUSR1" "$log" || { cat "$log"; fail "no stop message"; }
grep -q "requeueing job" "$log" || { cat "$log"; fail "no requeue"; }
grep -q "run 2, resuming" "$log" || { cat "$log"; fail "the second run did not resume"; }
[ "$(attr "$f" complete)" = 1 ] || fail "complete is not 1"
sh "$SRC/scripts/sweep_diff.sh" "$ref" "$f" >"$TMP/diff.txt" ||
  { cat "$TMP/diff.txt"; fail "the requeued file differs from mpirun -np 2"; }
rm -f "$f"

say "2b. SIGTERM to the batch script: stop, exit 75, no requeue"
f="$TMP/slurm_term.h5"
rm -f "$f"
j=$(MADSWEEP_CHUNK_DELAY_MS=$JOBS_DELAY_MS sbatch --parsable --nodes=1 --ntasks=2 \
  --output="$TMP/term-%j.out" "$sbatch_dir/sweep.sbatch" "$SPEC" "$f") || fail "sbatch"
wait_file "$f"
wait_rows "$f"
scancel --signal=TERM --batch "$j" || fail "scancel --signal=TERM"
wait_state "$j" COMPLETED FAILED CANCELLED PENDING
log="$TMP/term-$j.out"
[ "$(job_field "$j" JobState)" = FAILED ] || { cat "$log"; fail "job state $(job_field "$j" JobState), want FAILED"; }
[ "$(job_field "$j" ExitCode)" = 75:0 ] || { cat "$log"; fail "exit code $(job_field "$j" ExitCode), want 75:0"; }
grep -q "stopped by SIGTERM" "$log" || { cat "$log"; fail "no stop message"; }
grep -q "resubmit with RESUME=1" "$log" || { cat "$log"; fail "no resubmit advice"; }
[ "$(attr "$f" complete)" = 0 ] || fail "complete is not 0 after SIGTERM"
resume "$f"
rm -f "$f" "$TMP"/term-*.out

say "3. MADSWEEP_SRUN_MPI=none: the tasks refuse"
f="$TMP/slurm_nompi.h5"
rm -f "$f"
MADSWEEP_SRUN_MPI=none timeout 600 sbatch --wait --nodes=1 --ntasks=2 \
  --output="$TMP/nompi-%j.out" "$sbatch_dir/sweep.sbatch" \
  "$SRC/configs/sweeps/quickstart.cfg" "$f" >"$TMP/sbatch.log" 2>&1 &&
  fail "the job succeeded with srun --mpi=none"
grep -q "srun started 2 tasks without an MPI plugin" "$TMP"/nompi-*.out ||
  { cat "$TMP"/nompi-*.out; fail "no refusal message"; }
[ ! -s "$f" ] || fail "a file was written"
rm -f "$TMP"/nompi-*.out "$TMP"/requeue-*.out
echo "test_slurm: all passed"
