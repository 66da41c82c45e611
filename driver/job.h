/*
 * job.h - the process as one rank of an HPC job: stop signals and exits.
 *
 * Two things arrive through callbacks that take no arguments (a signal
 * handler, an atexit handler), so their state is the program's only
 * mutable process-wide state (the exception to the no-globals rule):
 *   - a stop request. SIGTERM (a time limit, scancel), SIGUSR1 (Slurm's
 *     --signal=B:USR1@120, forwarded by sweep.sbatch and by mpirun) and
 *     SIGINT set a flag that the sweep polls between and inside chunks
 *     (job_stop_signal); each handler resets itself, so a second signal
 *     of the same kind ends the process at once. A launcher that cannot
 *     signal the ranks safely (scripts/mpirun.sh: mpirun kills ranks that
 *     have no handler yet, and loses a signal before they exist) writes
 *     the signal's name to the file $MADSWEEP_STOP_FILE instead, which
 *     job_signals_install and then job_stop_signal (every 50 ms) read as
 *     the same stop request.
 *   - an exit guard. While a guarded phase runs (job_guard_begin), an
 *     exit() called from inside a library (libconfig's scanner exits on
 *     an @include of a directory) prints what was being done and, under
 *     MPI, calls MPI_Abort: no other rank is left waiting in a
 *     collective. Outside guarded phases the handler only finalizes MPI
 *     when it is still up.
 * Exit codes of the program (cmd.h) include JOB_EXIT_STOPPED.
 */
#ifndef MADSWEEP_JOB_H
#define MADSWEEP_JOB_H

/* A sweep stopped by a signal: its file is incomplete and `--resume`
 * finishes it (EX_TEMPFAIL of sysexits.h: "try again later"). */
#define JOB_EXIT_STOPPED 75

/* Registers the exit handler (once per process; later calls do nothing). */
void job_init(void);

/* Installs the stop handlers for SIGTERM, SIGUSR1 and SIGINT, and takes
 * a stop already in $MADSWEEP_STOP_FILE. */
void job_signals_install(void);

/* The first stop signal received (SIGTERM, ...; or named in the stop
 * file), or 0. */
int job_stop_signal(void);

/* Records a stop request as if `sig` had arrived (test hooks). */
void job_stop_request(int sig);

/* Guards a phase: `what` (copied, truncated to 255 bytes) names it in
 * the message printed if a library exits the process meanwhile. */
void job_guard_begin(const char *what);
void job_guard_end(void);

/* After MPI_Init (whose shared-memory set-up may meet the file-size
 * limit and fall back) and job_guard_begin: a write past the file-size
 * limit (SIGXFSZ) ends the rank at once, naming the guarded phase (exit
 * 1), rather than leave parallel HDF5 waiting in a collective. */
void job_file_limit_install(void);

#endif
