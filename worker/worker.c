/*
 * worker.c - dynamic chunk scheduling, evaluation and row output.
 *
 * Counters on rank 0 (an MPI window of three int64): [0] next chunk to
 * draw, [1] points evaluated, [2] ids processed. Every rank holds a
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

#include "check.h"

enum { W_NEXT = 0, W_EVALUATED = 1, W_IDS = 2, W_NCOUNTERS = 3 };

static int64_t worker_fetch_add(worker *w, int slot, int64_t add)
{
    int64_t old = 0;
    CHECK_MPI(MPI_Fetch_and_op(&add, &old, MPI_INT64_T, 0, slot, MPI_SUM,
                               w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
    return old;
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
    output_texts *text;
    uint8_t *have;
} worker_plans;

static const output_texts *worker_plan_text(worker_plans *pc,
                                            const space_cursor *cur)
{
    int64_t k = cur->idx[SPACE_STRATEGY];
    if (pc->system != cur->idx[SPACE_SYSTEM]) {
        memset(pc->have, 0, (size_t)pc->n);
        pc->system = cur->idx[SPACE_SYSTEM];
    }
    if (!pc->have[k]) {
        output_texts_of(&cur->p, &pc->text[k]);
        pc->have[k] = 1;
    }
    return &pc->text[k];
}

/* Evaluates the valid ids of [lo, hi) into buf; returns the row count. */
static int64_t worker_chunk(worker *w, space_cursor *cur, engine *e,
                            worker_plans *pc, int64_t lo, int64_t hi,
                            char *buf)
{
    const output_rows *r = w->rows;
    int64_t n = 0;
    result_t res;
    for (int64_t id = lo; id < hi; id++) {
        if (space_point(w->s, cur, id, NULL) != STATUS_OK)
            continue;
        status_code rc = eval_run(&cur->p, e, &res);
        if (!status_is_data(rc))
            check_die("evaluation failed (out of memory)", __FILE__, __LINE__);
        output_pack(r, buf + (size_t)n * r->t.size, id, cur->idx, &cur->p,
                    &res, worker_plan_text(pc, cur));
        n++;
        if (rc == STATUS_OK) {
            w->ok++;
            summary_consider(&w->best[summary_slot(w->s, cur->idx)],
                             summary_value(&cur->p, &res), id);
        } else {
            w->infeasible++;
        }
    }
    return n;
}

int worker_run(worker *w)
{
    CHECK_MPI(MPI_Comm_rank(w->comm, &w->rank));
    int64_t nslots = summary_slots(w->s);
    w->best = malloc((size_t)nslots * sizeof *w->best);
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
    summary_clear(w->best, nslots);
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
        int64_t c = worker_fetch_add(w, W_NEXT, 1);
        if (c >= w->nchunks)
            break;
        if (w->done[c])
            continue;
        int64_t lo = c * w->chunk;
        int64_t hi = lo + w->chunk < w->s->total ? lo + w->chunk : w->s->total;
        int64_t before = w->ok + w->infeasible;
        double t0 = MPI_Wtime();
        int64_t n = worker_chunk(w, cur, &e, &pc, lo, hi, buf);
        double t1 = MPI_Wtime();
        if (n != w->row_off[c + 1] - w->row_off[c])
            check_die("internal error: a chunk's valid count changed between "
                      "the check pass and evaluation", __FILE__, __LINE__);
        output_write_rows(w->out, w->row_off[c], n, buf);
        output_mark_done(w->out, c);
        w->t_eval += t1 - t0;
        w->t_write += MPI_Wtime() - t1;
        w->evaluated += w->ok + w->infeasible - before;
        w->chunks_done++;
        int64_t add[2] = {n, hi - lo};
        CHECK_MPI(MPI_Accumulate(&add[0], 1, MPI_INT64_T, 0, W_EVALUATED, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        CHECK_MPI(MPI_Accumulate(&add[1], 1, MPI_INT64_T, 0, W_IDS, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        if (w->kill_after > 0 && w->chunks_done >= w->kill_after)
            raise(SIGKILL);
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
