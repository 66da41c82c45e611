#!/usr/bin/env bash
# mpirun.sh - mpirun for madsweep sweeps, with SIGTERM, SIGINT and SIGHUP
# as stops that exit 75:
#
#   scripts/mpirun.sh -np 2 build/madsweep sweep SPEC.cfg -o OUT.h5
#
# Open MPI's mpirun (4.x) takes SIGTERM, SIGINT and SIGHUP as an abort:
# it sends SIGTERM to the ranks, SIGKILL a second later
# (odls_base_sigkill_timeout) and exits 1 whatever the ranks returned, and
# it refuses to forward SIGTERM (ess_base_forward_signals: "The system
# does not support trapping and forwarding of the specified signal"). The
# sweep's file stays resumable (the ranks stop, or die, at any moment
# safely), but a job script reads 1, not madsweep's 75. This wrapper runs
# mpirun in its own process group (a terminal's Ctrl-C reaches only the
# wrapper) and turns each of those signals into SIGUSR1 to mpirun, which
# forwards it: every rank stops within one chunk, keeps its file, and
# mpirun's 75 is the wrapper's status. A second signal is passed on the
# same way and ends the ranks at once. Any other status is mpirun's own.
# MADSWEEP_MPIRUN names the launcher (default mpirun; its words split, so
# it may carry options).
set -u
set -m # mpirun in a process group of its own
# shellcheck disable=SC2086
${MADSWEEP_MPIRUN:-mpirun} "$@" &
pid=$!
sig=
trap 'sig=1; kill -USR1 "$pid" 2>/dev/null' TERM INT HUP
while :; do
  sig=
  wait "$pid"
  rc=$?
  [ -n "$sig" ] || break # mpirun ended (else a signal ended the wait)
done
exit "$rc"
