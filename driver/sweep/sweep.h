/*
 * sweep.h - a design-space sweep over MPI ranks into one HDF5 file.
 *
 * sweep_run() is the whole `madsweep sweep` command as a library call on
 * a communicator, so tests run it in-process under mpirun. Phases:
 *   1. rank 0 loads the spec and broadcasts the outcome (a bad spec is a
 *      message with file, line and key on rank 0 and exit code 2 on every
 *      rank, before any collective I/O);
 *   2. rank 0 claims the output (worker/claim.h: never an input, never a
 *      non-HDF5 file, never a file another running sweep holds; the lock
 *      is taken before anything is truncated and held to the end), then
 *      the file is created with its axis tables, attributes (complete = 0
 *      from the first second) and provenance (or reopened with --resume,
 *      which refuses a damaged file, a changed spec, tool version or
 *      catalogue file, the stacks catalogue included; an empty file
 *      starts afresh), so that it exists before anything long;
 *   3. the count pass (worker/count.h): ranks count the valid points of
 *      the (model, system) blocks without evaluating, with progress on
 *      rank 0; ids are dense over the valid points (worker/space.h), the
 *      chunks are cut by estimated cost (worker/chunks.h), and /results,
 *      /progress and /skipped are laid out (a resumed file that was
 *      stopped or killed while counting is laid out now; otherwise it is
 *      verified, worker/verify.h: the chunks whose /progress byte is set,
 *      or a reduced sweep's checkpoint and committed rows, against their
 *      digests, and skipped; a damaged file is refused; a complete one
 *      is verified whole before it is called complete);
 *   4. the worker loop (worker/worker.h) evaluates and writes;
 *   5. counts, rates and the summary's winners (worker/winners.h: the best
 *      point of each model, system and task) are reduced, attributes
 *      written, complete = 1; rank 0 prints the summary (summary.h).
 * A stop signal (driver/job.h) during phases 3 or 4 ends the run on
 * every rank with what was written (a reduced sweep: a checkpoint of
 * what it reduced), complete = 0 and exit code JOB_EXIT_STOPPED;
 * `--resume` finishes the file with the datasets of an uninterrupted run.
 * The datasets depend only on the spec: identical for any rank count and
 * for a resumed run. Memory per rank: the chunk table (at most 2^22
 * entries), two integers per (model, system) block and one chunk of rows,
 * independent of the number of points.
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
    const char *stacks_path; /* a stacks fragment over stacks.cfg (overlay.h), or NULL */
    bool resume;
    bool quiet;          /* no progress line and no summary */
    double progress_s;   /* seconds between progress lines (0: default) */
    int64_t kill_after;  /* test hook: each rank SIGKILLs itself after N chunks */
    int64_t kill_finish; /* test hook: each rank SIGKILLs itself while finishing:
                          * 1 before the complete mark, 2 after it (before
                          * the checkpoints of a reduced sweep are removed) */
    const char *command_line; /* stored in the file (NULL: "(library call)") */
    bool kill_in_count;  /* test hook: rank 0 SIGKILLs itself while counting */
    bool stop_in_count;  /* test hook: rank 0 raises SIGTERM while counting */
    int64_t stop_after;  /* test hook: rank 0 raises SIGUSR1 after N chunks */
    int64_t delay_ms;    /* test hook: every rank sleeps N ms after each chunk */
    int64_t hold_after;  /* test hook: every rank waits for a stop after N chunks */
    double checkpoint_s; /* reduced sweeps: seconds between checkpoints
                            (0: SWEEP_CHECKPOINT_S; < 0: at every chunk of rank 0) */
} sweep_opts;

#define SWEEP_CHECKPOINT_S 60.0

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
