/*
 * sweep_progress.h - the progress lines of a running sweep on rank 0's
 * stderr: the count pass ("counting the valid points: 12/40 blocks") and
 * the evaluation ("sweep: 1200/5000 points (24.0%), 900 points/s, ETA
 * 4s"), at most one every `every` seconds.
 *
 * On a terminal a line rewrites itself (\r); off one each is a line of
 * its own, and the final evaluation line is left out: the summary on
 * stdout says the same, and mpirun forwards the two streams separately,
 * so a late stderr line would land inside the summary's tables in a
 * `2>&1` log. The count pass's callback also carries two test hooks (a
 * kill and a stop while counting).
 */
#ifndef MADSWEEP_SWEEP_PROGRESS_H
#define MADSWEEP_SWEEP_PROGRESS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../worker/worker.h"

/* The evaluation's progress: rows in the file, rows this run must write. */
typedef struct sweep_progress {
    FILE *err;
    bool tty;
    double t0, last, every;
    int64_t valid, todo;
} sweep_progress;

/* Prints a progress line of `done` rows; `final` ends a terminal's line. */
void sweep_progress_line(sweep_progress *t, int64_t done, bool final);

/* The worker's tick (worker.h; arg: a sweep_progress). */
void sweep_progress_on_chunk(worker *w, void *arg);

/* The count pass's progress on rank 0 (its share of the blocks), and
 * its test hooks: `kill` raises SIGKILL, `stop` SIGTERM once. */
typedef struct sweep_progress_count {
    FILE *err;
    bool tty, quiet, kill, stop;
    double t0, last, every;
} sweep_progress_count;

/* The count pass's callback (worker/count.h; arg: a sweep_progress_count). */
void sweep_progress_on_count(int64_t done, int64_t mine, void *arg);

#endif
