/*
 * job.c - stop signals and the exit guard of a rank (see job.h).
 *
 * Invariant: the signal handler only stores into a volatile
 * sig_atomic_t (async-signal-safe); everything else reads it. The exit
 * handler never calls MPI_Finalize while a guarded phase is running:
 * finalizing there would wait for ranks that are waiting for this one.
 */
#define _POSIX_C_SOURCE 200809L
#include "job.h"

#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The process-wide state (see job.h for why it cannot be passed). */
static struct {
    volatile sig_atomic_t stop; /* signal number, 0 while none */
    int registered;             /* atexit handler installed */
    int guarded;                /* inside job_guard_begin/end */
    char what[256];
    char stop_file[1024];       /* $MADSWEEP_STOP_FILE, "" when unset */
    double next_look;           /* when to look at it again (monotonic s) */
} job_state;

static double job_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A stop request in the stop file (scripts/mpirun.sh writes the name of
 * the signal it got there): looked at most every 50 ms. */
static void job_stop_file_look(bool now)
{
    if (!job_state.stop_file[0] || job_state.stop != 0)
        return;
    double t = job_now();
    if (!now && t < job_state.next_look)
        return;
    job_state.next_look = t + 0.05;
    FILE *f = fopen(job_state.stop_file, "r");
    if (!f)
        return;
    char name[32] = "";
    if (!fgets(name, sizeof name, f))
        name[0] = '\0';
    fclose(f);
    int sig = strncmp(name, "SIGINT", 6) == 0   ? SIGINT
              : strncmp(name, "SIGHUP", 6) == 0 ? SIGHUP
              : strncmp(name, "SIGUSR1", 7) == 0 ? SIGUSR1
                                                 : SIGTERM;
    if (job_state.stop == 0)
        job_state.stop = sig;
}

static void job_on_signal(int sig)
{
    if (job_state.stop == 0)
        job_state.stop = sig;
}

static void job_at_exit(void)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (job_state.guarded) {
        int rank = 0;
        if (up && !down)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "madsweep: rank %d: a library ended the process while "
                "%s (the line above is its own message; libconfig exits "
                "this way on an @include of a directory or an unreadable "
                "file)%s\n", rank, job_state.what,
                up && !down ? "; aborting every rank" : "");
        fflush(stderr);
        if (up && !down)
            MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    if (up && !down)
        MPI_Finalize();
}

void job_mpi_defaults(void)
{
    setenv("OMPI_MCA_sharedfp", "^sm", 0);
}

void job_init(void)
{
    if (job_state.registered)
        return;
    job_state.registered = 1;
    atexit(job_at_exit);
}

/* SIGXFSZ: a write past the file-size limit (ulimit -f, a batch
 * system's). Ignored, the write fails with EFBIG on one rank only, and
 * parallel HDF5 does not always return from there: in the layout's
 * H5Fflush (H5FD_truncate's broadcast on one rank, a metadata barrier on
 * the other) every rank waited for ever (issue 29). So the rank says why
 * with write(2) and _exit(1)s at once: the launcher (mpirun, srun) ends
 * the others, the file never says complete = 1, and --resume finishes it
 * once the limit is raised. Only async-signal-safe calls here. */
static void job_on_file_limit(int sig)
{
    (void)sig;
    static const char a[] = "madsweep: the file-size limit (ulimit -f) refused a "
                            "write while ";
    static const char b[] = "; the output is unfinished (never complete = 1): raise "
                            "the limit, then `madsweep sweep SPEC -o OUT --resume` "
                            "finishes it\n";
    ssize_t w = write(STDERR_FILENO, a, sizeof a - 1);
    w = write(STDERR_FILENO, job_state.what, strlen(job_state.what));
    w = write(STDERR_FILENO, b, sizeof b - 1);
    (void)w;
    _exit(1);
}

void job_signals_install(void)
{
    static const int sigs[] = {SIGTERM, SIGUSR1, SIGINT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = job_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART; /* a second signal kills */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    const char *f = getenv("MADSWEEP_STOP_FILE");
    snprintf(job_state.stop_file, sizeof job_state.stop_file, "%s", f ? f : "");
    job_stop_file_look(true); /* a stop asked before this process had handlers */
}

int job_stop_signal(void)
{
    job_stop_file_look(false);
    return (int)job_state.stop;
}

void job_stop_request(int sig)
{
    job_on_signal(sig);
}

void job_guard_begin(const char *what)
{
    snprintf(job_state.what, sizeof job_state.what, "%s", what);
    job_state.guarded = 1;
}

void job_file_limit_install(void)
{
    struct sigaction fz;
    memset(&fz, 0, sizeof fz);
    fz.sa_handler = job_on_file_limit;
    sigemptyset(&fz.sa_mask);
    sigaction(SIGXFSZ, &fz, NULL);
}

void job_guard_end(void)
{
    job_state.guarded = 0;
}
