/*
 * sweep.h - a design-space sweep over MPI ranks into one HDF5 file.
 *
 * sweep_run() is the whole `madsweep sweep` command as a library call on
 * a communicator, so tests run it in-process under mpirun. Phases:
 *   1. rank 0 loads the spec and broadcasts the outcome (a bad spec is a
 *      message with file, line and key on rank 0 and exit code 2 on every
 *      rank, before any collective I/O);
 *   2. rank 0 claims the output (worker/claim.h: never an input, never
 *      a file another running sweep holds), then the file is created
 *      with its root attributes and complete = 0 (or reopened with
 *      --resume; a missing or empty file starts afresh);
 *   3. the check pass: ids are cut into chunks of `chunk` ids; ranks count
 *      the valid ids of chunks round-robin (no evaluation) and an
 *      Allreduce gives every rank every chunk's count, hence each chunk's
 *      row offset in /results (a prefix sum) and the exact row total;
 *   4. the datasets are laid out (or, resuming, the chunks whose
 *      /progress byte is set are verified against their digests and
 *      skipped; a damaged file is refused);
 *   5. the worker loop (worker/worker.h) evaluates and writes;
 *   6. counts, rates and the best strategy of each (model, system) are
 *      reduced to rank 0, attributes written, complete = 1.
 * A stop signal (driver/job.h) during phases 3 or 5 ends the run on
 * every rank with the chunks written so far, complete = 0 and exit code
 * JOB_EXIT_STOPPED; `--resume` finishes the file.
 * The datasets depend only on the spec: identical for any rank count and
 * for a resumed run. Memory per rank is O(chunks) <= 2^22 entries plus
 * one chunk of rows, independent of the number of points.
 */
#ifndef MADSWEEP_SWEEP_H
#define MADSWEEP_SWEEP_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sweep_opts {
    const char *spec_path;
    const char *out_path;
    const char *configs_dir; /* NULL: load_configs_dir() default */
    bool resume;
    bool quiet;          /* no progress line and no summary */
    double progress_s;   /* seconds between progress lines (0: default) */
    int64_t kill_after;  /* test hook: each rank SIGKILLs itself after N chunks */
    int64_t stop_after;  /* test hook: rank 0 raises SIGUSR1 after N chunks */
} sweep_opts;

typedef struct sweep_stats {
    int64_t total, valid, invalid;
    int64_t evaluated_run; /* rows evaluated by this run (all ranks) */
    int64_t ok, infeasible; /* of this run */
    int64_t invalid_rows;   /* of this run: non-finite or negative figures */
    double elapsed_s, evals_per_s;
    int complete;
} sweep_stats;

/* Runs a sweep; returns the exit code (0 ok, 1 runtime failure or a
 * damaged or busy file, 2 bad input, JOB_EXIT_STOPPED stopped by a
 * signal), identical on every rank. Messages go to `err` and the summary
 * to `out`, on rank 0 only. `stats` may be NULL. */
int sweep_run(MPI_Comm comm, const sweep_opts *o, sweep_stats *stats,
              FILE *out, FILE *err);

#endif
