/*
 * sweep_progress.c - the progress lines of a running sweep on rank 0's
 * stderr (see sweep_progress.h).
 */
#include "sweep_progress.h"

#include <math.h>
#include <signal.h>

static void sweep_progress_eta(double s, char *buf, size_t size)
{
    if (!(s >= 0) || s > 1e9)
        snprintf(buf, size, "?");
    else if (s < 60)
        snprintf(buf, size, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void sweep_progress_line(sweep_progress *t, int64_t done, bool final)
{
    if (final && !t->tty)
        return;
    double now = MPI_Wtime();
    double dt = now - t->t0;
    double rate = dt > 0 ? (double)done / dt : 0;
    char eta[32];
    sweep_progress_eta(rate > 0 ? (double)(t->todo - done) / rate : -1, eta,
                   sizeof eta);
    fprintf(t->err, "%ssweep: %lld/%lld points (%.1f%%), %.0f points/s, "
            "ETA %s%s", t->tty ? "\r" : "", (long long)done,
            (long long)t->todo,
            t->todo ? 100.0 * (double)done / (double)t->todo : 100.0, rate,
            final ? "0s" : eta, t->tty && !final ? "   " : "\n");
    fflush(t->err);
    t->last = now;
}

void sweep_progress_on_chunk(worker *w, void *arg)
{
    sweep_progress *t = arg;
    if (MPI_Wtime() - t->last < t->every)
        return;
    int64_t drawn, evaluated;
    worker_progress(w, &drawn, &evaluated);
    sweep_progress_line(t, evaluated, false);
}

void sweep_progress_on_count(int64_t done, int64_t mine, void *arg)
{
    sweep_progress_count *t = arg;
    if (t->kill)
        raise(SIGKILL); /* test hook: the file exists, the layout does not */
    if (t->stop) {
        t->stop = false;
        raise(SIGTERM); /* test hook: a stop while counting */
    }
    double now = MPI_Wtime();
    if (t->quiet || (now - t->last < t->every && done < mine))
        return;
    if (done == mine && now - t->t0 < t->every)
        return; /* short passes print nothing */
    fprintf(t->err, "%ssweep: counting the valid points: %lld/%lld blocks "
            "(%.1f%%), %.1f s%s", t->tty ? "\r" : "", (long long)done,
            (long long)mine, mine ? 100.0 * (double)done / (double)mine : 100.0,
            now - t->t0, t->tty && done < mine ? "   " : "\n");
    fflush(t->err);
    t->last = now;
}
