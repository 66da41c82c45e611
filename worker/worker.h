/*
 * worker.h - the evaluate-and-write loop every rank runs.
 *
 * Work is handed out in chunks of consecutive ids through an MPI
 * one-sided counter on rank 0 (MPI_Fetch_and_op, passive target), so a
 * rank that draws cheap points simply draws more chunks and rank 0
 * evaluates like every other rank. A chunk's rows go to /results at the
 * chunk's row offset (the prefix count of valid ids before it, known to
 * every rank from the check pass), then its /progress byte is set.
 * Memory per rank: one chunk of rows plus the per-chunk tables.
 */
#ifndef MADSWEEP_WORKER_H
#define MADSWEEP_WORKER_H

#include <mpi.h>
#include <stdint.h>

#include "../driver/space.h"
#include "output.h"

/* Best point of a (model, system) pair by throughput; id -1 when none. */
typedef struct worker_best {
    double value;
    int64_t id;
} worker_best;

typedef struct worker worker;

/* Called on rank 0 after each of its chunks (progress reports). */
typedef void (*worker_tick)(worker *w, void *arg);

struct worker {
    /* inputs */
    MPI_Comm comm;
    const space *s;
    const output_rows *rows;
    output *out;
    const int64_t *row_off; /* [nchunks + 1] */
    const uint8_t *done;    /* [nchunks]: skip (resume) */
    int64_t chunk, nchunks;
    int64_t kill_after; /* test hook: SIGKILL self after N chunks (0: off) */
    int64_t stop_after; /* test hook: rank 0 raises SIGUSR1 after N chunks */
    worker_tick tick;
    void *tick_arg;
    /* results of this rank */
    int64_t evaluated, ok, infeasible, chunks_done;
    int64_t invalid; /* rows with a non-finite or negative figure */
    int stopped;     /* left the loop on a stop request (any rank's) */
    double t_eval, t_write; /* seconds evaluating and writing rows */
    worker_best *best; /* [models * systems] */
    /* internal */
    int rank;
    MPI_Win win;
    int64_t *counters;
};

/* Runs the loop until every chunk is drawn or a rank received a stop
 * signal (w->stopped; chunks then in flight on other ranks are finished,
 * the signalled rank's is dropped). Collective. Returns 0, or -1 when
 * out of memory (before any collective output call). */
int worker_run(worker *w);

/* Rank 0, inside a tick: chunks drawn so far and points evaluated by all
 * ranks (reported after each chunk). */
void worker_progress(worker *w, int64_t *chunks_drawn, int64_t *evaluated);

#endif
