# jobs_lib.sh - helpers of the process-level sweep tests (sourced).
#
# Needs: BIN (madsweep), MPIRUN (mpirun words, 2 ranks), TMP (a scratch
# directory), SRC (the source tree), SAME (tests/h5same: every dataset
# byte-identical, as scripts/sweep_diff.sh checks, faster on big files).
# Every test sweeps tests/sweep_jobs.cfg.

fail() { echo "FAIL: $*"; exit 1; }
say() { echo "-- $*"; }

# attr FILE NAME: an integer root attribute (empty when unreadable)
attr() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p' | head -n 1; }

# ended PID: whether process PID (a child of this shell) has ended (gone,
# or a zombie not yet waited for)
ended() {
  _state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0
  [ -z "$_state" ] || [ "$_state" = Z ]
}

# stacks: what the processes of $job (mpirun and its ranks) wait in, and
# the ranks' stacks where gdb is installed
stacks() {
  echo "mpirun $job: waiting in $(cat "/proc/$job/wchan" 2>/dev/null)"
  for p in $(ranks); do
    echo "rank process $p: waiting in $(cat "/proc/$p/wchan" 2>/dev/null)"
    command -v gdb >/dev/null 2>&1 &&
      gdb -p "$p" -batch -ex 'thread apply all bt' 2>/dev/null | grep '^#'
  done
}

# wait_job SECONDS WHAT: waits for $job (an mpirun of the sweep) and
# returns its exit status; past SECONDS it is a hang, which fails the test
# at once with the processes' stacks (on the test's own output, fd 3,
# whatever the caller redirected), rather than at CTest's timeout with no
# output (a CI run's test_keep_kill: 900 s)
exec 3>&1
wait_job() {
  n=0
  until ended "$job"; do
    n=$((n + 1))
    if [ $n -gt $(($1 * 10)) ]; then
      { echo "FAIL: still running after $1 s: $2"; stacks; } >&3
      kill -KILL $(ranks) "$job" 2>/dev/null
      exit 1
    fi
    sleep 0.1
  done
  wait "$job"
}

# bounded SECONDS CMD...: CMD in the background, then wait_job
bounded() {
  lim=$1
  shift
  "$@" &
  job=$!
  wait_job "$lim" "$*"
}

# the uninterrupted reference of the spec (made once, kept in $TMP)
reference() {
  ref="$TMP/jobs_ref.h5"
  if [ "$(attr "$ref" complete)" != 1 ]; then
    rm -f "$ref"
    bounded 300 $MPIRUN "$BIN" sweep "$SPEC" -o "$ref" --quiet || fail "reference sweep"
  fi
}

# same FILE: every dataset equals the reference's
same() {
  "$SAME" "$ref" "$1" >"$TMP/diff.txt" ||
    { cat "$TMP/diff.txt"; fail "$1 differs from the uninterrupted run"; }
}

# resume FILE [SPEC REF]: --resume finishes it; its datasets equal the
# reference's (of SPEC: REF)
resume() {
  bounded 300 $MPIRUN "$BIN" sweep "${2:-$SPEC}" -o "$1" --resume --quiet \
    >"$TMP/resume.log" 2>&1 || { cat "$TMP/resume.log"; fail "--resume of $1"; }
  [ "$(attr "$1" complete)" = 1 ] || fail "$1 is not complete after --resume"
  if [ -n "${3:-}" ]; then
    "$SAME" "$3" "$1" >"$TMP/diff.txt" ||
      { cat "$TMP/diff.txt"; fail "$1 differs from the uninterrupted run $3"; }
  else
    same "$1"
  fi
}

# the per-chunk delay of interrupted runs (a test hook of the sweep): the
# uninterrupted sweep takes under a second, this makes it about 5 s
JOBS_DELAY_MS=${JOBS_DELAY_MS:-40}

# start FILE [SPEC]: a slowed-down sweep in the background; its pid in $job
start() {
  rm -f "$1"
  MADSWEEP_CHUNK_DELAY_MS=$JOBS_DELAY_MS $MPIRUN "$BIN" sweep "${2:-$SPEC}" -o "$1" \
    --quiet >"$TMP/job.log" 2>&1 &
  job=$!
}

# wait_file FILE: until FILE is an HDF5 file with complete = 0 (10 s)
wait_file() {
  i=0
  while [ "$(attr "$1" complete)" != 0 ]; do
    i=$((i + 1))
    [ $i -le 500 ] || fail "$1 did not appear within 10 s"
    sleep 0.02
  done
}

# wait_rows FILE: until rows are being written (a byte of /progress is 1)
wait_rows() {
  i=0
  until h5dump -d /progress -y "$1" 2>/dev/null | sed -n '/DATA {/,/}/p' |
        grep -Eq '(^|[ ,])1(,|$| )'; do
    i=$((i + 1))
    [ $i -le 1000 ] || fail "no rows written to $1 within 20 s"
    sleep 0.02
  done
}

# ranks: the pids of the ranks of $job (mpirun's madsweep children; read
# from /proc, so the tests need no procps)
ranks() {
  for d in /proc/[0-9]*; do
    [ "$(cut -d' ' -f4 "$d/stat" 2>/dev/null)" = "$job" ] &&
      grep -q "madsweep" "$d/cmdline" 2>/dev/null && echo "${d#/proc/}"
  done
  true
}
