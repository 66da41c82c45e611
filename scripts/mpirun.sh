#!/usr/bin/env bash
# mpirun.sh - mpirun for madsweep sweeps, with SIGTERM, SIGINT, SIGHUP and
# SIGUSR1 as stops that exit 75:
#
#   scripts/mpirun.sh -np 2 build/madsweep sweep SPEC.cfg -o OUT.h5
#
# Open MPI's mpirun (4.x) takes SIGTERM, SIGINT and SIGHUP as an abort:
# it sends SIGTERM to the ranks, SIGKILL a second later
# (odls_base_sigkill_timeout) and exits 1 whatever the ranks returned, and
# it refuses to forward SIGTERM (ess_base_forward_signals: "The system
# does not support trapping and forwarding of the specified signal"). The
# sweep's file stays resumable (the ranks stop, or die, at any moment
# safely), but a job script reads 1, not madsweep's 75.
#
# This wrapper runs mpirun in its own process group (a terminal's Ctrl-C
# reaches only the wrapper) and turns the first of those signals into a
# stop request that cannot be lost or kill anything: it writes the
# signal's name to a stop file (MADSWEEP_STOP_FILE, exported to the
# ranks), which every rank looks at as it installs its stop handlers and
# then every 50 ms with its stop flag (driver/job.h), so a signal in the
# first second stops the sweep as surely as a later one (issue 29:
# SIGUSR1 forwarded by mpirun before the ranks existed was lost, and
# before they had their handlers killed them with exit 138). Ranks on
# other nodes, which may not see the file, get SIGUSR1 from mpirun 5 s
# later, once mpirun has its handler for it. Every rank stops within one
# chunk and mpirun's 75 is the wrapper's status. A second signal ends the
# job at once (SIGTERM to mpirun: Open MPI's abort). Any other status is
# mpirun's own. MADSWEEP_MPIRUN names the launcher (default mpirun; its
# words split, so it may carry options). The traps are the script's first
# commands: a signal in the milliseconds before them ends the wrapper
# before anything started (no file, nothing to resume). SIGUSR1, the stop
# signal of madsweep's ranks and of a batch system's time limit
# (sbatch --signal=B:USR1@120), is a stop too: without its trap it ended
# the wrapper (exit 138) and left mpirun and the ranks running to the end
# with nobody waiting for them (issue 29).
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP
trap 'on_signal USR1' USR1
set -u
set -m # mpirun in a process group of its own
signals=0
pid=
first=
pending=
dir=
on_signal() {
  signals=$((signals + 1))
  if [ "$signals" -eq 1 ]; then
    first=$SECONDS
    if [ -n "$dir" ]; then
      printf 'SIG%s\n' "$1" >"$dir/stop.new" && mv -f "$dir/stop.new" "$dir/stop"
    else
      pending=$1 # before the stop file's directory exists
    fi
  elif [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
  fi
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/madsweep-stop.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
export MADSWEEP_STOP_FILE="$dir/stop"
if [ -n "$pending" ]; then
  printf 'SIG%s\n' "$pending" >"$dir/stop"
fi
# whether process $1 catches SIGUSR1 (bit 10 of SigCgt): mpirun forwards
# it only once its handler is installed, and dies of it before
catches_usr1() {
  local mask
  mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$mask" ] && (((16#$mask >> 9) & 1))
}
# shellcheck disable=SC2086
${MADSWEEP_MPIRUN:-mpirun} "$@" &
pid=$!
forwarded=
while kill -0 "$pid" 2>/dev/null; do
  if [ -n "$first" ] && [ -z "$forwarded" ] && [ $((SECONDS - first)) -ge 5 ] &&
     catches_usr1 "$pid"; then
    kill -USR1 "$pid" 2>/dev/null
    forwarded=1
  fi
  sleep 0.1
done
wait "$pid"
exit $?
