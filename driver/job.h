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
 * It also sets, before MPI_Init, the MPI settings a rank depends on
 * (job_mpi_defaults).
 * Exit codes of the program (cmd.h) include JOB_EXIT_STOPPED.
 */
#ifndef MADSWEEP_JOB_H
#define MADSWEEP_JOB_H

/* A sweep stopped by a signal: its file is incomplete and `--resume`
 * finishes it (EX_TEMPFAIL of sysexits.h: "try again later"). */
#define JOB_EXIT_STOPPED 75

/* Registers the exit handler (once per process; later calls do nothing). */
void job_init(void);

/* Before MPI_Init, in every process that writes a file through MPI-IO:
 * the MPI settings a rank depends on, each set only where the user has
 * not set it already (in the environment, or with mpirun --mca, which
 * reaches the ranks as the same variables). One for now:
 *   OMPI_MCA_sharedfp=^sm. Open MPI's MPI-IO (ompio) opens a shared file
 *   pointer with every file. Its single-node component "sm" guards it
 *   with a named POSIX semaphore, /dev/shm/sem.OMPIO_<base name of the
 *   file>, that outlives a rank that dies inside the open (SIGKILL; by
 *   Open MPI 4.1's source also SIGBUS, its unchecked write of the pointer
 *   file in the session directory failing on a full /tmp): left taken,
 *   every later open of a file of that base name on the node, --resume
 *   included, waits in sem_wait for ever (a development VM kept one
 *   taken since its disk filled; a CI run's plain sweeps hung 900 s
 *   where this fits, without stacks to tell). HDF5 writes at
 *   explicit offsets and never moves a shared file pointer, so "sm" is
 *   left out and the component multi-node jobs already get, "lockedfile"
 *   (an fcntl lock the kernel releases with the process), takes its
 *   place; a SIGKILLed rank leaves its 8-byte <file>-<job>-<pid>.lock
 *   beside the output, nothing that blocks. Other MPI libraries ignore
 *   the variable. */
void job_mpi_defaults(void);

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
