/*
 * worker.h - the evaluate-and-write loop every rank runs.
 *
 * Work is handed out in chunks of consecutive ids through an MPI
 * one-sided counter on rank 0 (MPI_Fetch_and_op, passive target), so a
 * rank that draws cheap points simply draws more chunks and rank 0
 * evaluates like every other rank. Every id of the space is a valid point
 * (space.h); chunks are cut by estimated cost (chunks.h).
 *
 * keep = "all": a chunk's rows go to /results at the chunk's first id,
 * their part rows (output_rows.h) at the chunk's part positions
 * (partpos.h, computed before the loop), then its /parts/index entry,
 * its digest and its /progress byte. Memory per rank: one chunk of rows
 * plus the chunk table and its part positions.
 *
 * Reduced sweeps (w->red set): each rank feeds its points to its reducer
 * (reduce.h) or, for keep = { feasible = true; }, buffers its feasible
 * rows. At a sync point every rank stops drawing at the same chunk X: a
 * rank that wants one (rank 0 when a checkpoint is due, a rank whose row
 * buffer is full) adds 2^40 to the counter, so the next draw of every
 * rank says "stop" and hands it the chunk it drew, which it keeps for
 * after the sync; X is the first such chunk, and every chunk below X has
 * been evaluated. The ranks then merge their states over a reduction tree
 * (reduce_merge), write the buffered rows in id order at offsets from the
 * summed per-chunk counts, and checkpoint chunks [0, X) (kept.h). The last
 * sync (no chunk left) writes the kept points, re-evaluated in slices by
 * every rank, to /results in id order, and /groups. Memory per rank: the
 * reducer, plus for feasible-only a bounded buffer of rows.
 *
 * Stops (w->stop, polled: a stop signal, driver/job.h): keep = "all", a
 * rank that sees one drops the chunk it is evaluating (polled every 1024
 * ids) and raises the window's halt counter, which every rank reads with
 * each draw, so every rank leaves the loop within one chunk; the file
 * keeps the chunks written so far. Reduced sweeps finish the chunk
 * (their reducer already holds its points) and ask for a sync point;
 * there the ranks agree that one of them stops, write a checkpoint of
 * chunks [0, X) as at any sync, and leave, so --resume continues from
 * exactly that state. Either way w->stopped is set on every rank.
 *
 * Digests (output.h /digests): keep = "all" writes each chunk's with its
 * progress byte; feasible-only, each rank the digests of its buffered
 * chunks' rows at every sync (before the progress bytes and the
 * checkpoint); ranked sweeps at the end, each rank those of the chunks
 * whose kept rows it re-evaluated (its slice of the kept ids is cut at
 * chunk boundaries, so each chunk's rows are one rank's).
 */
#ifndef MADSWEEP_WORKER_H
#define MADSWEEP_WORKER_H

#include <mpi.h>
#include <stdint.h>

#include "chunks.h"
#include "output.h"
#include "reduce.h"
#include "space.h"
#include "winners.h"

typedef struct worker worker;

/* Called on rank 0 after each of its chunks (progress reports). */
typedef void (*worker_tick)(worker *w, void *arg);

struct worker {
    /* inputs */
    MPI_Comm comm;
    const space *s;
    const output_rows *rows;
    output *out;
    const chunks *ch;
    const uint8_t *done;    /* [ch->n]: skip (resume, keep = "all") */
    int64_t kill_after; /* test hook: SIGKILL self after N chunks (0: off) */
    int64_t stop_after; /* test hook: rank 0 raises SIGUSR1 after N chunks */
    int64_t delay_ms;   /* test hook: sleep N ms after each chunk (0: off) */
    int64_t hold_after; /* test hook: after N chunks, wait for a stop (<= 60 s) */
    int (*stop)(void);  /* nonzero once this process was asked to stop
                           (a signal; NULL: never) */
    worker_tick tick;
    void *tick_arg;
    /* reduced sweeps: NULL for keep = "all" */
    reduce *red;
    int64_t first_chunk;  /* chunks [0, first_chunk) are in the restored state */
    int64_t rows_done;    /* rows of /results committed (feasible-only) */
    double checkpoint_s;  /* seconds between checkpoints on rank 0's clock */
    /* the summary's winners, [winners_slots()], the caller's: empty, or
     * as restored from a checkpoint; updated with every point evaluated
     * and merged over the ranks at every checkpoint */
    winners_best *best;
    /* results of this rank */
    int64_t evaluated, ok, infeasible, chunks_done;
    int64_t invalid; /* rows with a non-finite or negative figure (eval_run) */
    int stopped;     /* left the loop on a stop request (any rank's) */
    double t_eval, t_write; /* seconds evaluating and writing rows */
    double t_merge;         /* seconds in reduction merges */
    double t_root;          /* rank 0: seconds of root-only work (state and
                               table writes, sorting the kept set) */
    double t_final;         /* seconds re-evaluating and writing kept rows */
    int64_t syncs;          /* sync points (checkpoints and the last) */
    int64_t kept;           /* rows in /results at the end (reduced) */
    /* internal */
    int rank;
    MPI_Win win;
    int64_t *counters;
    int64_t *part_pos;    /* keep = "all": [(chunks + 1) * nparts] (partpos.h) */
    int64_t part_done[OUTPUT_NKINDS]; /* feasible-only: part rows committed */
};

/* Runs the loop until every chunk is drawn, or until a rank is asked to
 * stop (w->stopped, see above). Collective. Returns 0, or -1 when out of
 * memory (before any collective output call). */
int worker_run(worker *w);

/* Rank 0, inside a tick: chunks drawn so far and points evaluated by all
 * ranks (reported after each chunk). */
void worker_progress(worker *w, int64_t *chunks_drawn, int64_t *evaluated);

#endif
