/*
 * worker.c - dynamic chunk scheduling, evaluation and row output.
 *
 * Counters on rank 0 (an MPI window of four int64): [0] next chunk to
 * draw, [1] points evaluated, [2] ids processed, [3] stop requests.
 * A rank that received a stop signal (driver/job.h) drops the chunk it
 * is evaluating and adds one to [3]; every rank reads [3] with each
 * draw (same round trip) and leaves the loop when it is set, so a
 * signal seen by one rank stops all of them within one chunk. Every
 * rank holds a
 * shared lock on the window for the whole loop (MPI_Win_lock_all) and
 * draws with MPI_Fetch_and_op + MPI_Win_flush, one chunk of thousands of
 * ids per round trip, so rank 0 is never a bottleneck and no message is
 * sent per point. Invariant: a chunk's rows are written before its
 * progress byte, and a chunk's row count equals its count from the check
 * pass (checked: a mismatch would shift every later row).
 */
#define _POSIX_C_SOURCE 200809L
#include "worker.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../driver/job.h"
#include "check.h"
#include "digest.h"

enum { W_NEXT = 0, W_EVALUATED = 1, W_IDS = 2, W_STOP = 3, W_NCOUNTERS = 4 };

/* Evaluated ids between two looks at the stop flag inside a chunk. */
#define WORKER_STOP_POLL 1024

/* Draws the next chunk and reads the stop counter in one round trip. */
static int64_t worker_draw(worker *w, int64_t *stop)
{
    int64_t old = 0, one = 1;
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, W_NEXT, MPI_SUM,
                               w->win));
    CHECK_MPI(MPI_Fetch_and_op(NULL, stop, MPI_INT64_T, 0, W_STOP, MPI_NO_OP,
                               w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
    return old;
}

/* Tells every rank to stop drawing (this rank saw a signal). */
static void worker_request_stop(worker *w)
{
    int64_t one = 1;
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, W_STOP, 1, MPI_INT64_T,
                             MPI_SUM, w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
}

void worker_progress(worker *w, int64_t *chunks_drawn, int64_t *evaluated)
{
    int64_t v[2] = {0, 0};
    CHECK_MPI(MPI_Fetch_and_op(NULL, &v[0], MPI_INT64_T, 0, W_NEXT,
                               MPI_NO_OP, w->win));
    CHECK_MPI(MPI_Fetch_and_op(NULL, &v[1], MPI_INT64_T, 0, W_EVALUATED,
                               MPI_NO_OP, w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
    *chunks_drawn = v[0] < w->nchunks ? v[0] : w->nchunks;
    *evaluated = v[1];
}

/* Plan texts per strategy for one system (formatting costs as much as
 * a small evaluation, and the text depends only on system and strategy:
 * detailed texts leave out the micro-batch, which inference derives from
 * the global batch). */
typedef struct worker_plans {
    int64_t system; /* -1: empty */
    int64_t n;
    char (*text)[2][OUTPUT_PLAN_WIDTH];
    uint8_t *have;
} worker_plans;

static void worker_plan_text(worker_plans *pc, const space_cursor *cur,
                             const char **dense, const char **emb)
{
    int64_t k = cur->idx[SPACE_STRATEGY];
    if (pc->system != cur->idx[SPACE_SYSTEM]) {
        memset(pc->have, 0, (size_t)pc->n);
        pc->system = cur->idx[SPACE_SYSTEM];
    }
    if (!pc->have[k]) {
        output_plan_texts(&cur->p, pc->text[k][0], pc->text[k][1],
                          OUTPUT_PLAN_WIDTH);
        pc->have[k] = 1;
    }
    *dense = pc->text[k][0];
    *emb = pc->text[k][1];
}

/* Evaluates the valid ids of [lo, hi) into buf; returns the row count,
 * or -1 when a stop signal arrived meanwhile (the chunk is dropped). */
static int64_t worker_chunk(worker *w, space_cursor *cur, engine *e,
                            worker_plans *pc, int64_t lo, int64_t hi,
                            char *buf)
{
    const eval_ops *ops = w->s->sp->ops;
    const output_rows *r = w->rows;
    int64_t nsys = w->s->radix[SPACE_SYSTEM];
    int64_t n = 0;
    result_t res;
    for (int64_t id = lo; id < hi; id++) {
        if ((id - lo) % WORKER_STOP_POLL == WORKER_STOP_POLL - 1 &&
            job_stop_signal())
            return -1;
        if (space_point(w->s, cur, id, NULL) != STATUS_OK)
            continue;
        memset(&res, 0, sizeof res);
        status_code rc = eval_run(ops, &cur->p, e, &res, NULL);
        if (rc == STATUS_NOMEM)
            check_die("evaluation failed (out of memory)", __FILE__, __LINE__);
        const char *dense, *emb;
        worker_plan_text(pc, cur, &dense, &emb);
        output_pack(r, buf + (size_t)n * r->t.size, id, cur->idx, &cur->p,
                    &res, dense, emb);
        n++;
        if (rc == STATUS_OK) {
            w->ok++;
            worker_best *b =
                &w->best[cur->idx[SPACE_MODEL] * nsys + cur->idx[SPACE_SYSTEM]];
            if (b->id < 0 || res.throughput_samples_per_s > b->value) {
                b->value = res.throughput_samples_per_s;
                b->id = id;
            }
        } else if (status_is_data(rc)) {
            w->infeasible++;
        } else {
            w->invalid++; /* a non-finite or negative figure (eval_run) */
        }
    }
    return n;
}

int worker_run(worker *w)
{
    CHECK_MPI(MPI_Comm_rank(w->comm, &w->rank));
    int64_t npairs = w->s->radix[SPACE_MODEL] * w->s->radix[SPACE_SYSTEM];
    w->best = malloc((size_t)npairs * sizeof *w->best);
    char *buf = calloc((size_t)w->chunk, w->rows->t.size); /* checks n*size */
    space_cursor *cur = malloc(sizeof *cur);
    int64_t nk = w->s->radix[SPACE_STRATEGY];
    worker_plans pc = {.system = -1, .n = nk,
                       .text = malloc((size_t)nk * sizeof *pc.text),
                       .have = calloc((size_t)nk, 1)};
    int bad = !w->best || !buf || !cur || !pc.text || !pc.have, any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, w->comm));
    if (any) {
        free(buf);
        free(cur);
        free(pc.text);
        free(pc.have);
        return -1;
    }
    for (int64_t i = 0; i < npairs; i++) {
        w->best[i].value = 0;
        w->best[i].id = -1;
    }
    space_cursor_init(cur);
    engine e;
    engine_init(&e, false);

    CHECK_MPI(MPI_Win_allocate(w->rank == 0 ? W_NCOUNTERS * sizeof(int64_t) : 0,
                               sizeof(int64_t), MPI_INFO_NULL, w->comm,
                               &w->counters, &w->win));
    if (w->rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        memset(w->counters, 0, W_NCOUNTERS * sizeof(int64_t));
        CHECK_MPI(MPI_Win_unlock(0, w->win));
    }
    CHECK_MPI(MPI_Barrier(w->comm));
    CHECK_MPI(MPI_Win_lock_all(0, w->win));
    for (;;) {
        if (job_stop_signal()) {
            worker_request_stop(w);
            w->stopped = 1;
            break;
        }
        int64_t stop = 0;
        int64_t c = worker_draw(w, &stop);
        if (stop > 0)
            w->stopped = 1;
        if (c >= w->nchunks || stop > 0)
            break;
        if (w->done[c])
            continue;
        int64_t lo = c * w->chunk;
        int64_t hi = lo + w->chunk < w->s->total ? lo + w->chunk : w->s->total;
        int64_t b_ok = w->ok, b_inf = w->infeasible, b_inv = w->invalid;
        int64_t before = b_ok + b_inf + b_inv;
        double t0 = MPI_Wtime();
        int64_t n = worker_chunk(w, cur, &e, &pc, lo, hi, buf);
        if (n < 0) { /* stopped inside the chunk: dropped, not written */
            w->ok = b_ok;
            w->infeasible = b_inf;
            w->invalid = b_inv;
            worker_request_stop(w);
            w->stopped = 1;
            break;
        }
        double t1 = MPI_Wtime();
        if (n != w->row_off[c + 1] - w->row_off[c])
            check_die("internal error: a chunk's valid count changed between "
                      "the check pass and evaluation", __FILE__, __LINE__);
        output_write_rows(w->out, w->row_off[c], n, buf);
        output_mark_done(w->out, c, digest_rows(buf, n, w->rows->t.size));
        w->t_eval += t1 - t0;
        w->t_write += MPI_Wtime() - t1;
        w->evaluated += w->ok + w->infeasible + w->invalid - before;
        w->chunks_done++;
        int64_t add[2] = {n, hi - lo};
        CHECK_MPI(MPI_Accumulate(&add[0], 1, MPI_INT64_T, 0, W_EVALUATED, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        CHECK_MPI(MPI_Accumulate(&add[1], 1, MPI_INT64_T, 0, W_IDS, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        if (w->kill_after > 0 && w->chunks_done >= w->kill_after)
            raise(SIGKILL);
        if (w->stop_after > 0 && w->rank == 0 && w->chunks_done == w->stop_after)
            raise(SIGUSR1);
        if (w->rank == 0 && w->tick)
            w->tick(w, w->tick_arg);
    }
    CHECK_MPI(MPI_Win_unlock_all(w->win));
    CHECK_MPI(MPI_Win_free(&w->win));
    engine_free(&e);
    free(buf);
    free(cur);
    free(pc.text);
    free(pc.have);
    return 0;
}
