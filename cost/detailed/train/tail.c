/*
 * tail.c - a stage's end of a training step. The last micro-batch's
 * backward of the stage runs as two streams (the two-stream engine's
 * rule as a recurrence), one compute and one communication step per
 * layer, so that data-parallel gradient reduction (ZeRO 0-2, or ZeRO 3
 * when the stack reduces only the last micro-batch) overlaps the
 * backward as far as the dependencies and the stack's dp_overlap allow;
 * the rest of the reduction, the optimizer step (the stack's HBM bytes
 * per local parameter) and ZeRO 1/2's parameter all-gather (overlapped
 * with the next forward as far as dp_overlap allows) follow.
 * Invariants: O(layers of the stage), no events stored; with one kind of
 * layer and no trace the recurrence is taken in closed form, the same
 * figures.
 */
#include "train.h"

#include <math.h>

/* Stage s's layers in backward order, calling fn on each (chunk by
 * chunk from its last, layers from the last). */
static void dt_tail_layers(const dt_ctx *c, const dt_split *sp, int64_t s,
                           void (*fn)(void *, const dt_layer *, int64_t), void *ctx,
                           const dt_layers *y, const dt_stages *st)
{
    for (int64_t k = sp->chunks - c->d.pp + s; k >= 0; k -= c->d.pp) {
        int64_t lo, hi;
        dt_pipe_chunk_range(c, sp, k, &lo, &hi);
        for (int64_t i = hi - 1; i >= lo; i--)
            fn(ctx, &y->t[st->types == 1 ? st->uniform : dt_pipe_layer_type(c, i)], i);
    }
}

/* The replay's recurrence, one layer at a time. */
typedef struct dt_tail_rec {
    const dt_ctx *c;
    dt_tail *t;
    bool z3_last;
    double f, prev;
    const dt_tail_emit *emit;
} dt_tail_rec;

static void dt_tail_rec_layer(void *ctx, const dt_layer *L, int64_t i)
{
    dt_tail_rec *r = ctx;
    dt_tail *t = r->t;
    double sync = r->z3_last ? L->zero3_rs : L->grad_sync;
    /* compute beside the previous layer's collective slows */
    t->comp_end += L->bwd + r->c->f.slow * dt_min(L->bwd, r->f * r->prev);
    t->ncomp++;
    t->sync_sum += sync;
    t->serial += (1.0 - r->f) * sync;
    r->prev = sync;
    if (r->f > 0.0 && sync > 0) {
        double at = dt_max(t->comm_end, t->comp_end);
        t->comm_end = at + r->f * sync;
        t->ncomm++;
        if (r->emit)
            r->emit->fn(r->emit->ctx, DT_EMIT_SYNC, i, at, r->f * sync);
    }
}

void dt_tail_run(const dt_ctx *c, const dt_split *sp, const dt_stages *st, const dt_sched *k,
                 int64_t s, const dt_tail_emit *emit, dt_tail *t)
{
    const model_t *m = c->m;
    const dt_layers *y = &k->y;
    const dt_stage *g = &st->s[s];
    double f = k->f;
    *t = (dt_tail){.memo_trained = t->memo_trained, .memo_ag = t->memo_ag};
    /* ---- the last micro-batch's backward of the stage with the
     * gradient collectives beside it: a compute stream and a
     * communication stream, each collective starting when its layer's
     * backward and the previous collective are done (the two-stream
     * engine's rule, as a recurrence: O(layers), no events stored). It
     * ends where the schedule ends the stage's last backward. */
    double emb_b = s == 0 ? k->x.emb_b : 0.0;
    double bwd = dt_layers_sum(y, st, g, DT_LAYER_OFF(bwd));
    double last = k->z3x + k->pipe - dt_sched_trail(c, k, s);
    double start = last - bwd - emb_b;
    if (start < 0)
        start = 0;
    t->start = start;
    /* ZeRO 3 reducing only the last micro-batch: its reduce-scatters are
     * this replay's gradient collectives */
    bool z3_last = c->d.zero >= 3 && !c->z3_rs_mb;
    t->comp_end = t->comm_end = start;
    int64_t nl = 0;
    for (int ty = 0; ty < DT_TYPES; ty++)
        nl += g->n[ty];
    if (st->types == 1 && nl > 0 && !emit) {
        /* identical layers: the recurrence in closed form (the first
         * backward runs alone, the others beside a collective) */
        const dt_layer *L = &y->t[st->uniform];
        double sync = z3_last ? L->zero3_rs : L->grad_sync, fs = f * sync;
        double b1 = L->bwd, b = L->bwd + c->f.slow * dt_min(L->bwd, fs);
        double n = (double)nl;
        t->sync_sum = n * sync;
        t->serial = n * (1.0 - f) * sync;
        t->ncomp = nl;
        t->comp_end = start + b1 + (n - 1.0) * b;
        if (f > 0.0 && sync > 0) {
            t->comm_end = dt_max(start + b1 + n * fs, t->comp_end + fs);
            t->ncomm = nl;
        }
    } else {
        dt_tail_rec r = {c, t, z3_last, f, 0.0, emit};
        dt_tail_layers(c, sp, s, dt_tail_rec_layer, &r, y, st);
    }
    t->comp_end += emb_b; /* the embedding's backward */
    bool emb_train = s == 0 && m->vocab > 0 && y->fmode == DT_DGRAD;
    double emb_params = emb_train ? dt_shape_emb_params(c) : 0.0;
    if (c->d.zero < 3 && emb_train) {
        double eb = emb_params * c->gbytes;
        t->emb_sync = c->d.zero == 0 ? dt_group_coll(c, TOPO_ALLREDUCE, DT_G_DP, eb)
                                     : dt_group_coll(c, TOPO_REDUCESCATTER, DT_G_ZS, eb);
    }
    /* what could not overlap, and the first layer's ZeRO 3 reduction,
     * once both streams are done */
    int t0 = st->uniform;
    if (st->types != 1) {
        int64_t lo0, hi0;
        dt_pipe_chunk_range(c, sp, s, &lo0, &hi0);
        t0 = dt_pipe_layer_type(c, lo0);
    }
    double tail_sync = t->emb_sync + t->serial + (z3_last ? 0.0 : y->t[t0].z3_tail);
    double at = dt_max(t->comm_end, t->comp_end);
    if (emit) {
        if (t->comp_end > last)
            emit->fn(emit->ctx, DT_EMIT_SLOWED, -1, last, t->comp_end - last);
        emit->fn(emit->ctx, DT_EMIT_TAIL, -1, at, tail_sync);
    }
    t->comm_end = at + tail_sync;
    /* optimizer on the stage's local (sharded from ZeRO 1) trained
     * parameters, after the reductions */
    double trained = (double)g->n[DT_DENSE] * k->params_dense +
                     (double)g->n[DT_MOE] * k->params_moe +
                     emb_params;
    int32_t moe_tr = g->n[DT_MOE] + g->n[DT_MOE + DT_ALT];
    if (dt_stage_alt(g) > 0) /* layers of the second attention kind */
        trained += (double)g->n[DT_DENSE + DT_ALT] * dt_type_params(c, DT_DENSE + DT_ALT) +
                   (double)g->n[DT_MOE + DT_ALT] * dt_type_params(c, DT_MOE + DT_ALT);
    double ex = (double)moe_tr * dt_shape_expert_params(c); /* sharded over the expert DP group */
    double opt_params = c->d.zero >= 1 ? (trained - ex) / (double)c->zs + ex / (double)c->zse
                                       : trained;
    t->opt = hw_mem_time(c->hw, c->st->optimizer_step_bytes * opt_params) / c->f.mem;
    t->opt_at = dt_max(t->comp_end, t->comm_end);
    t->comp_end = t->opt_at + t->opt;
    /* ZeRO 1/2: updated parameters all-gathered; with overlap they are
     * gathered layer by layer ahead of the next iteration's first forward
     * (only what exceeds that forward's compute stays exposed) */
    if (c->d.zero == 1 || c->d.zero == 2) {
        double win = dt_layers_sum(y, st, g, DT_LAYER_OFF(comp_fwd)) + (s == 0 ? k->x.emb_comp : 0.0);
        if (!(trained == t->memo_trained && trained > 0 && ex == 0.0)) {
            t->memo_trained = ex == 0.0 ? trained : 0.0;
            t->memo_ag = dt_group_coll(c, TOPO_ALLGATHER, DT_G_ZS, (trained - ex) * c->ab) +
                         dt_group_coll(c, TOPO_ALLGATHER, DT_G_ZSE, ex * c->ab);
        }
        t->ag = t->memo_ag;
        t->ag_exposed = (1.0 - f) * t->ag + dt_max(0.0, f * t->ag - win);
    }
    t->end = t->comp_end + t->ag_exposed;
}

/* An upper bound of stage s's end (s > 0) that costs no collective:
 * dt_tail_run's closed form for one kind of layer with its ZeRO 1/2
 * gather bounded by stage 0's (t0) when the stage holds no more trained
 * parameters (a collective never takes less for more bytes, and the
 * exposed part grows with the gather); INFINITY when it does not apply. */
double dt_tail_bound(const dt_ctx *c, const dt_stages *st, const dt_sched *k, int64_t s,
                     const dt_tail *t0)
{
    const dt_stage *g = &st->s[s];
    if (st->types != 1 || (st->uniform & DT_ALT)) /* one kind, full attention */
        return (double)INFINITY;
    const dt_layer *L = &k->y.t[st->uniform];
    double n = (double)g->n[st->uniform];
    double trained = (double)g->n[DT_DENSE] * k->params_dense + (double)g->n[DT_MOE] * k->params_moe;
    bool gather = c->d.zero == 1 || c->d.zero == 2;
    /* experts shard over their own DP group: no bound, run the stage */
    if (!(n >= 1.0) || (gather && !(trained <= t0->memo_trained)) || g->n[DT_MOE] > 0)
        return (double)INFINITY;
    double last = k->z3x + k->pipe - dt_sched_trail(c, k, s);
    double start = last - n * L->bwd;
    if (!(start >= 0))
        return (double)INFINITY;
    bool z3_last = c->d.zero >= 3 && !c->z3_rs_mb;
    double f = k->f, sync = z3_last ? L->zero3_rs : L->grad_sync, fs = f * sync;
    double b1 = L->bwd, b = L->bwd + c->f.slow * dt_min(L->bwd, fs);
    double comp_end = start + b1 + (n - 1.0) * b, comm_end = start;
    if (f > 0.0 && sync > 0)
        comm_end = dt_max(start + b1 + n * fs, comp_end + fs);
    double tail = n * (1.0 - f) * sync + (z3_last ? 0.0 : L->z3_tail);
    double opt = hw_mem_time(c->hw, c->st->optimizer_step_bytes * trained /
                                        (c->d.zero >= 1 ? (double)c->zs : 1.0)) /
                 c->f.mem;
    double ag = gather ? t0->memo_ag : 0.0, win = n * L->comp_fwd;
    return dt_max(comp_end, comm_end) + tail + opt + (1.0 - f) * ag +
           dt_max(0.0, f * ag - win);
}
