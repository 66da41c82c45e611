/*
 * tune.c - what a tuned training run picks for itself, and the
 * evaluation's preparation around it: micro_batch = "auto", the fastest
 * micro-batch that divides the replica's batch and fits (at most 64
 * sequences); vpp = "auto", the fastest interleaving with its fastest
 * micro-batch. Each trial is a step's time under the nominal facts
 * (train.c, without figures) on the split and memory it implies
 * (llm/setup.c's steps, llm/memory.c's fit).
 * Invariant: the searches leave the context as a point stating their
 * picks would have it (degrees, tokens), so the evaluation that follows
 * is that point's.
 */
#include "train.h"

/* The fastest micro-batch (*mb) of the split in sp/st that fits, and
 * its nominal time (*t_s; 0 when none fits): with micro_batch = "auto"
 * every divisor of the replica's batch up to 64 sequences, as a tuned
 * run picks it, else the point's own. The context keeps the micro-batch
 * it tried last. */
static status_code dt_tune_micro_batch(dt_ctx *c, const dt_split *sp, const dt_stages *st,
                                       engine *e, dt_mem *mem, result_t *r, int64_t *mb,
                                       double *t_s)
{
    double cap = dt_mem_capacity(c);
    task_recompute want = c->t->recompute;
    int64_t per = c->d.gb / c->d.dp, lo = c->d.mb, hi = c->d.mb;
    if (c->t->micro_batch_auto) {
        if (per < 1 || c->d.gb % c->d.dp != 0)
            return STATUS_INFEASIBLE_BATCH;
        lo = 1;
        hi = per < 64 ? per : 64;
    }
    *mb = 0;
    *t_s = 0.0;
    for (int64_t b = lo; b <= hi; b++) {
        if (c->t->micro_batch_auto) {
            if (per % b != 0)
                continue;
            dt_ctx_set_micro_batch(c, b);
            if (!dt_ctx_batch_ok(c))
                continue; /* an interleaving's partial group of micro-batches */
        } else if (!dt_ctx_batch_ok(c)) {
            return STATUS_OK; /* refused after the pick, as without it */
        }
        dt_mem_fit(c, st, want, mem);
        if (mem->total > cap)
            continue;
        status_code rc = dt_train_time(c, sp, st, e, r, false);
        if (rc != STATUS_OK)
            return rc;
        if (*mb == 0 || r->iteration_time_s < *t_s) {
            *mb = b;
            *t_s = r->iteration_time_s;
        }
    }
    return STATUS_OK;
}

/* vpp = "auto": the fastest interleaving (from the task's vpp, 1 when
 * unset, to as many chunks per stage as the stack's split gives every
 * chunk a layer) with the fastest micro-batch that fits, as a tuned run
 * picks it; none fitting: the first. The counts tried are those whose
 * chunks hold equal units (the published interleavings: 80 layers on pp
 * 4 x vpp 5, Llama 3.1 405B's 126 + 2 on 8 x 8), all of them when no
 * count does: an unequal split leaves its fullest stage setting the pace
 * and its bubble. Sets c->d.v (and leaves the micro-batch to the caller). */
static status_code dt_tune_vpp(dt_ctx *c, engine *e, dt_split *sp, dt_stages *st, dt_mem *mem,
                               result_t *r)
{
    const dt_deg d0 = c->d;
    const double tok0 = c->tok;
    int64_t best = 0, first = c->t->vpp > 1 ? c->t->vpp : 1, tried = 0;
    double tbest = 0.0;
    for (int pass = 0; pass < 2 && tried == 0; pass++) {
        for (int64_t v = first; v <= DT_MAX_STAGES / c->d.pp; v++) {
            c->d.v = v;
            dt_pipe_split_init(c, sp);
            if (!dt_pipe_split_ok(c, sp))
                break; /* fewer units per chunk with every v */
            if (pass == 0 && sp->r != 0)
                continue; /* an unequal split: tried when no count is equal */
            tried++;
            dt_pipe_stages_build(c, sp, st);
            int64_t mb;
            double t;
            c->d = d0;
            c->d.v = v;
            c->tok = tok0;
            status_code rc = dt_tune_micro_batch(c, sp, st, e, mem, r, &mb, &t);
            if (rc != STATUS_OK)
                return rc;
            if (mb > 0 && (best == 0 || t < tbest)) {
                best = v;
                tbest = t;
            }
        }
    }
    c->d = d0;
    c->d.v = best > 0 ? best : first;
    c->tok = tok0;
    return STATUS_OK;
}

status_code dt_tune_prepare(const point_t *p, engine *e, dt_eval *v, result_t *r)
{
    dt_ctx *c = &v->c;
    status_code rc = dt_setup_begin(p, v);
    if (rc != STATUS_OK)
        return rc;
    if (c->t->vpp_auto && c->d.pp > 1 && c->t->schedule != TASK_SCHEDULE_GPIPE &&
        c->d.pp <= DT_MAX_STAGES) {
        rc = dt_tune_vpp(c, e, &v->sp, &v->st, &v->mem, r);
        if (rc != STATUS_OK)
            return rc;
    }
    rc = dt_setup_split(v);
    if (rc != STATUS_OK)
        return rc;
    if (c->t->micro_batch_auto) {
        /* the fastest micro-batch that divides the replica's batch and
         * fits, as a tuned run picks it (at most 64 sequences) */
        int64_t best;
        double tbest;
        rc = dt_tune_micro_batch(c, &v->sp, &v->st, e, &v->mem, r, &best, &tbest);
        if (rc != STATUS_OK)
            return rc;
        dt_ctx_set_micro_batch(c, best > 0 ? best : 1);
    }
    return dt_setup_end(v, r);
}
