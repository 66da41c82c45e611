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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The process-wide state (see job.h for why it cannot be passed). */
static struct {
    volatile sig_atomic_t stop; /* signal number, 0 while none */
    int registered;             /* atexit handler installed */
    int guarded;                /* inside job_guard_begin/end */
    char what[256];
} job_state;

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

void job_init(void)
{
    if (job_state.registered)
        return;
    job_state.registered = 1;
    atexit(job_at_exit);
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
}

int job_stop_signal(void)
{
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

void job_guard_end(void)
{
    job_state.guarded = 0;
}
