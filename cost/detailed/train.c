/*
 * train.c - one training step of a transformer (pre-training or
 * fine-tuning).
 *
 * The cost of one layer per micro-batch (layer.c, comm.c) gives each
 * pipeline chunk's forward and backward; a stage's time per micro-batch
 * is the sum of its chunks (pipeline.c's split), plus the embedding on
 * the first stage, the output head and loss on the last, the exposed
 * ends of ZeRO 3's gather chains and the point-to-point sends of its
 * chunk boundaries. The schedule is closed form (pipeline.c). The last
 * micro-batch's backward of the first stage then runs as two streams
 * (the engine's rule as a recurrence), one compute and one
 * communication step per layer, so that
 * data-parallel gradient reduction (ZeRO 0-2, or ZeRO 3 when the stack
 * reduces only the last micro-batch) overlaps the backward as far as
 * the dependencies and the stack's dp_overlap allow; the rest of the
 * reduction, the optimizer step (the stack's HBM bytes per local
 * parameter) and ZeRO 1/2's parameter all-gather (overlapped with the
 * next forward as far as dp_overlap allows) follow. Work is
 * O(pp vpp + layers per stage); nothing is allocated once the engine has
 * its capacity.
 * Fine-tuning: the first frozen_layers layers (and with freeze_emb the
 * embedding, and a tied head's weight) get no gradients, gradient
 * collectives or optimizer states; a frozen layer with something trained
 * below it runs a backward of data gradients only, one with nothing
 * trained below runs none and keeps no activations.
 */
#include "dt.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void dt_layers_build(const dt_ctx *c, dt_layers *y)
{
    const model_t *m = c->m;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = m->vocab > 0 && !(ft && c->p->task.freeze_emb);
    y->frozen = ft ? c->t->frozen_layers : 0;
    y->fmode = emb_train || c->lora ? DT_DGRAD : DT_NOBWD;
    dt_layer_cost(c, false, true, DT_TRAIN, &y->t[DT_DENSE]);
    dt_layer_comm(c, false, true, DT_TRAIN, &y->t[DT_DENSE]);
    if (m->d.experts > 0) {
        dt_layer_cost(c, true, true, DT_TRAIN, &y->t[DT_MOE]);
        dt_layer_comm(c, true, true, DT_TRAIN, &y->t[DT_MOE]);
    } else {
        y->t[DT_MOE] = y->t[DT_DENSE];
    }
    y->t[DT_FDENSE] = y->t[DT_DENSE];
    y->t[DT_FMOE] = y->t[DT_MOE];
    if (y->frozen > 0) {
        dt_layer_cost(c, false, true, y->fmode, &y->t[DT_FDENSE]);
        dt_layer_comm(c, false, true, y->fmode, &y->t[DT_FDENSE]);
        if (m->d.experts > 0) {
            dt_layer_cost(c, true, true, y->fmode, &y->t[DT_FMOE]);
            dt_layer_comm(c, true, true, y->fmode, &y->t[DT_FMOE]);
        } else {
            y->t[DT_FMOE] = y->t[DT_FDENSE];
        }
    }
}

#define DT_OFF(f) offsetof(dt_layer, f)
#define DT_FIELD(L, off) (*(const double *)(const void *)((const char *)(L) + (off)))

/* Sum over a stage's layers of a per-layer figure (the types in use
 * only: with one kind of layer it is DT_DENSE or DT_MOE). */
static double dt_stage_sum(const dt_layers *y, const dt_stages *st, const dt_stage *g,
                           size_t off)
{
    if (st->types == 1)
        return (double)g->n[st->uniform] * DT_FIELD(&y->t[st->uniform], off);
    double s = 0.0;
    for (int t = 0; t < st->types; t++)
        s += (double)g->n[t] * DT_FIELD(&y->t[t], off);
    return s;
}

/* Sum over a stage's chunks of a figure of their first (or last) layer. */
static double dt_stage_ends(const dt_layers *y, const dt_stages *st, const int32_t *which,
                            size_t off)
{
    if (st->types == 1)
        return (double)which[st->uniform] * DT_FIELD(&y->t[st->uniform], off);
    double s = 0.0;
    for (int t = 0; t < st->types; t++)
        s += (double)which[t] * DT_FIELD(&y->t[t], off);
    return s;
}

void dt_ends_cost(const dt_ctx *c, const dt_layers *y, dt_ends *x)
{
    const model_t *m = c->m;
    memset(x, 0, sizeof *x);
    if (m->vocab <= 0)
        return;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = !(ft && c->p->task.freeze_emb);
    bool head_train = m->d.untied_embeddings || emb_train;
    bool below_train = emb_train || y->frozen < m->layers || c->lora; /* head needs dgrad */
    double h = (double)m->hidden, vocab_t = (double)m->vocab / (double)c->d.tp;
    x->emb_f = x->emb_comp = dt_elem(c, 2.0 * c->tok * h * c->ab, 1.0);
    if (c->d.tp > 1)
        x->emb_f += dt_gcoll(c, TOPO_ALLREDUCE, DT_G_TP, c->tok * h * c->ab);
    x->emb_b = emb_train ? x->emb_f : 0.0;
    /* cross entropy: the stack's HBM bytes per logit (a fused kernel
     * reads the 16-bit logits for the max and for the sum of exponentials
     * and writes the fp32 softmax, 2 + 2 + 4 bytes, backward reads it and
     * writes the gradient, 4 + 2: 14; an unfused fp32 implementation
     * moves about four times that), 4/7 forward. The head GEMM stays
     * BF16. */
    double logits = c->tok * vocab_t;
    dt_memo *mo = c->memo;
    if (mo->ends_mb != c->d.mb) { /* the GEMMs' shapes, once per micro-batch */
        dt_gemm_place(c, c->tok, vocab_t, h, 1, false, false, &mo->head);
        if (m->d.mtp_layers > 0)
            dt_gemm_place(c, c->tok, h / (double)c->d.tp, 2.0 * h, 1, true, false, &mo->mtp);
        mo->ends_mb = c->d.mb;
    }
    double g = dt_gemm_at(c, &mo->head, NULL);
    double lb = c->f.loss_bytes * logits;
    x->head_mf = hw_mem_time(c->hw, lb * 4.0 / 7.0) / c->f.mem + 3.0 * c->hw->kernel_overhead_s;
    x->head_f = g + x->head_mf;
    double hg = (head_train ? 1.0 : 0.0) + (below_train ? 1.0 : 0.0);
    x->head_mb = hg > 0.0 ? hw_mem_time(c->hw, lb * 3.0 / 7.0) / c->f.mem +
                                2.0 * c->hw->kernel_overhead_s
                          : 0.0;
    x->head_b = hg > 0.0 ? hg * g + x->head_mb : 0.0;
    if (m->d.mtp_layers > 0) {
        /* each module: its projection, a layer of the last kind, the
         * shared head and loss again (Megatron-Core multi_token_prediction.py) */
        const dt_layer *L = &y->t[m->d.experts > 0 && m->d.dense_layers < m->layers ? DT_MOE
                                                                                     : DT_DENSE];
        double pj = dt_gemm_at(c, &mo->mtp, NULL);
        double k = (double)m->d.mtp_layers;
        double hf = x->head_f, hb = x->head_b;
        x->head_f += k * (pj + L->fwd + hf);
        x->head_b += k * (2.0 * pj + L->bwd + hb);
    }
}

/* Forward sends of stage s per micro-batch (chunks not last), and backward
 * ones (chunks not first). */
static double dt_fwd_sends(const dt_ctx *c, int64_t s)
{
    return (double)c->d.v - (s == c->d.pp - 1 ? 1.0 : 0.0);
}

void dt_sched_build(const dt_ctx *c, const dt_stages *st, dt_sched *k)
{
    const model_t *m = c->m;
    dt_layers_build(c, &k->y);
    dt_ends_cost(c, &k->y, &k->x);
    const dt_layers *y = &k->y;
    double h = (double)m->hidden, tp = (double)c->d.tp, v = (double)c->d.v;

    /* point-to-point per chunk boundary and pass: sequence parallel (or
     * the scatter/gather scheme) sends 1/tp and all-gathers it inside
     * the node */
    k->p2p = k->p2p_ag = 0.0;
    if (c->d.pp > 1) {
        double full = c->tok * h * c->ab;
        bool split = c->sp || (c->st->pp_send == STACK_PP_SCATTER_GATHER && c->d.tp > 1);
        k->p2p = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP], split ? full / tp : full);
        if (split && !c->sp)
            k->p2p_ag = dt_gcoll(c, TOPO_ALLGATHER, DT_G_TP, full);
    }

    /* stages: their layers, the exposed first gathers of each chunk's
     * passes (ZeRO 3), their sends, the embedding and the head */
    double tmax = 0.0, tsum = 0.0, send = k->p2p + k->p2p_ag;
    for (int64_t s = 0; s < c->d.pp; s++) {
        if (s > 1 && s < c->d.pp - 1 && st->same[s]) {
            /* a middle stage like the one before it: the same sums */
            k->tf[s] = k->tf[s - 1];
            k->ts[s] = k->ts[s - 1];
            tmax = k->ts[s] > tmax ? k->ts[s] : tmax;
            tsum += k->ts[s];
            continue;
        }
        const dt_stage *g = &st->s[s];
        double tf = dt_stage_sum(y, st, g, DT_OFF(fwd)) +
                    dt_stage_ends(y, st, g->first, DT_OFF(z3_fhead)) + dt_fwd_sends(c, s) * send;
        double tb = dt_stage_sum(y, st, g, DT_OFF(bwd)) +
                    dt_stage_ends(y, st, g->last, DT_OFF(z3_bhead)) +
                    ((double)g->sends - dt_fwd_sends(c, s)) * send;
        if (s == 0) {
            tf += k->x.emb_f;
            tb += k->x.emb_b;
        }
        if (s == c->d.pp - 1) {
            tf += k->x.head_f;
            tb += k->x.head_b;
        }
        k->tf[s] = tf;
        k->ts[s] = tf + tb;
        tmax = k->ts[s] > tmax ? k->ts[s] : tmax;
        tsum += k->ts[s];
    }
    k->tmax = tmax;
    k->pipe = dt_schedule_time(tmax, tsum, (double)c->d.ga, v);
    k->bubble = (tsum - tmax) / v;
    k->f = c->t->overlap_dp_comm ? c->f.dpo : 0.0;
    k->params_dense = dt_layer_params(c, false);
    k->params_moe = m->d.experts > 0 ? dt_layer_params(c, true) : k->params_dense;
    /* ZeRO 3 gathering once per step: the first stage's gathers beside
     * the compute of its first forward (its collectives are no window: a
     * faster collective never leaves a gather more exposed) */
    k->z3x = 0.0;
    if (c->d.zero >= 3 && !c->z3_ag_mb) {
        const dt_stage *g0 = &st->s[0];
        double ag0 = dt_stage_sum(y, st, g0, DT_OFF(zero3_ag));
        double win = dt_stage_sum(y, st, g0, DT_OFF(comp_fwd)) + k->x.emb_comp;
        k->z3x = (1.0 - k->f) * ag0 + fmax(0.0, k->f * ag0 - win);
    }
}

double dt_sched_lead(const dt_ctx *c, const dt_sched *k, int64_t s)
{
    if (c->d.pp <= 1 || !(k->ts[s] > 0))
        return 0.0;
    return k->bubble * (double)s / (double)(c->d.pp - 1) * (k->tf[s] / k->ts[s]);
}

double dt_sched_trail(const dt_ctx *c, const dt_sched *k, int64_t s)
{
    if (c->d.pp <= 1 || !(k->ts[s] > 0))
        return 0.0;
    return k->bubble * (double)s / (double)(c->d.pp - 1) * (1.0 - k->tf[s] / k->ts[s]);
}

/* Stage s's layers in backward order, calling fn on each (chunk by
 * chunk from its last, layers from the last). */
static void dt_tail_layers(const dt_ctx *c, const dt_split *sp, int64_t s,
                           void (*fn)(void *, const dt_layer *, int64_t), void *ctx,
                           const dt_layers *y, const dt_stages *st)
{
    for (int64_t k = sp->chunks - c->d.pp + s; k >= 0; k -= c->d.pp) {
        int64_t lo, hi;
        dt_chunk_range(c, sp, k, &lo, &hi);
        for (int64_t i = hi - 1; i >= lo; i--)
            fn(ctx, &y->t[st->types == 1 ? st->uniform : dt_layer_type(c, i)], i);
    }
}

/* The replay's recurrence, one layer at a time. */
typedef struct dt_rec {
    const dt_ctx *c;
    dt_tail *t;
    bool z3_last;
    double f, prev;
    const dt_tail_emit *emit;
} dt_rec;

static void dt_rec_layer(void *ctx, const dt_layer *L, int64_t i)
{
    dt_rec *r = ctx;
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
    double bwd = dt_stage_sum(y, st, g, DT_OFF(bwd));
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
        dt_rec r = {c, t, z3_last, f, 0.0, emit};
        dt_tail_layers(c, sp, s, dt_rec_layer, &r, y, st);
    }
    t->comp_end += emb_b; /* the embedding's backward */
    bool emb_train = s == 0 && m->vocab > 0 && y->fmode == DT_DGRAD;
    double emb_params = emb_train ? dt_emb_params_dev(c) : 0.0;
    if (c->d.zero < 3 && emb_train) {
        double eb = emb_params * c->gbytes;
        t->emb_sync = c->d.zero == 0 ? dt_gcoll(c, TOPO_ALLREDUCE, DT_G_DP, eb)
                                     : dt_gcoll(c, TOPO_REDUCESCATTER, DT_G_ZS, eb);
    }
    /* what could not overlap, and the first layer's ZeRO 3 reduction,
     * once both streams are done */
    int t0 = st->uniform;
    if (st->types != 1) {
        int64_t lo0, hi0;
        dt_chunk_range(c, sp, s, &lo0, &hi0);
        t0 = dt_layer_type(c, lo0);
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
    double ex = (double)g->n[DT_MOE] * dt_expert_params(c); /* sharded over the expert DP group */
    double opt_params = c->d.zero >= 1 ? (trained - ex) / (double)c->zs + ex / (double)c->zse
                                       : trained;
    t->opt = hw_mem_time(c->hw, c->st->optimizer_step_bytes * opt_params) / c->f.mem;
    t->opt_at = dt_max(t->comp_end, t->comm_end);
    t->comp_end = t->opt_at + t->opt;
    /* ZeRO 1/2: updated parameters all-gathered; with overlap they are
     * gathered layer by layer ahead of the next iteration's first forward
     * (only what exceeds that forward's compute stays exposed) */
    if (c->d.zero == 1 || c->d.zero == 2) {
        double win = dt_stage_sum(y, st, g, DT_OFF(comp_fwd)) + (s == 0 ? k->x.emb_comp : 0.0);
        if (!(trained == t->memo_trained && trained > 0 && ex == 0.0)) {
            t->memo_trained = ex == 0.0 ? trained : 0.0;
            t->memo_ag = dt_gcoll(c, TOPO_ALLGATHER, DT_G_ZS, (trained - ex) * c->ab) +
                         dt_gcoll(c, TOPO_ALLGATHER, DT_G_ZSE, ex * c->ab);
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
static double dt_tail_bound(const dt_ctx *c, const dt_stages *st, const dt_sched *k, int64_t s,
                            const dt_tail *t0)
{
    const dt_stage *g = &st->s[s];
    if (st->types != 1)
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

status_code dt_train_time(const dt_ctx *c, const dt_split *sp, const dt_stages *st, engine *e,
                          result_t *r, bool figures)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    (void)e;
    dt_sched k;
    dt_sched_build(c, st, &k);
    const dt_layers *yp = &k.y;
    const dt_ends *xp = &k.x;
    double mm = (double)c->d.ga;
    const dt_stage *g0 = &st->s[0];
    double p2p = k.p2p, p2p_ag = k.p2p_ag;
    r->pipeline_bubble_s = k.bubble;
    /* every stage's tail; the step ends with the last. A middle stage
     * made like the one before it (same layers, chunks, sends) ends no
     * later: its tail is the same, shifted by its trailing idle, which
     * grows with s. */
    dt_tail tl, t0;
    t0.memo_trained = t0.memo_ag = 0.0;
    dt_tail_run(c, sp, st, &k, 0, NULL, &t0);
    double iter = t0.end;
    tl.memo_trained = t0.memo_trained;
    tl.memo_ag = t0.memo_ag;
    for (int64_t s = 1; s < c->d.pp; s++) {
        if (s > 1 && s < c->d.pp - 1 && st->same[s])
            continue;
        if (dt_tail_bound(c, st, &k, s, &t0) <= iter)
            continue;
        dt_tail_run(c, sp, st, &k, s, NULL, &tl);
        iter = tl.end > iter ? tl.end : iter;
    }
    double sync_sum = t0.sync_sum, emb_sync = t0.emb_sync, ag = t0.ag, ag_exposed = t0.ag_exposed;
    double opt_time = t0.opt;
    int64_t ncomp = t0.ncomp, ncomm = t0.ncomm;
    bool z3_last = c->d.zero >= 3 && !c->z3_rs_mb;
    r->iteration_time_s = iter;
    if (!figures)
        return STATUS_OK;

    /* ---- figures of the busiest device: stage 0 */
    r->throughput_samples_per_s = (double)c->d.gb / iter;
    r->tokens_per_s = (double)c->d.gb * (double)m->seq_len / iter;
    double comp0 = dt_stage_sum(yp, st, g0, DT_OFF(comp_fwd)) + dt_stage_sum(yp, st, g0, DT_OFF(comp_bwd));
    r->compute_gemm_s = mm * (comp0 + xp->emb_f + xp->emb_b +
                              (c->d.pp == 1 ? xp->head_f + xp->head_b : 0.0)) +
                        opt_time;
    double pass = c->rc == TASK_RECOMPUTE_FULL ? 3.0 : 2.0;
    double tpcomm = pass * dt_stage_sum(yp, st, g0, DT_OFF(tp_comm));
    if (yp->fmode == DT_NOBWD) /* frozen layers without a backward: one pass */
        tpcomm -= (pass - 1.0) * ((double)g0->n[DT_FDENSE] * yp->t[DT_FDENSE].tp_comm +
                                  (double)g0->n[DT_FMOE] * yp->t[DT_FMOE].tp_comm);
    tpcomm *= mm;
    double z3 = mm * (dt_stage_sum(yp, st, g0, DT_OFF(zero3_ag)) * (c->z3_ag_mb ? 1.0 : 1.0 / mm) +
                      dt_stage_sum(yp, st, g0, DT_OFF(zero3_agb)));
    double z3rs = dt_stage_sum(yp, st, g0, DT_OFF(zero3_rs)) * (z3_last ? 1.0 : mm);
    double a2a = mm * pass * dt_stage_sum(yp, st, g0, DT_OFF(a2a));
    if (c->sp) {
        r->comm_allgather_s = 0.5 * tpcomm;
        r->comm_reducescatter_s = 0.5 * tpcomm;
        r->comm_allreduce_s = 0.0;
    } else {
        r->comm_allgather_s = 0.0;
        r->comm_reducescatter_s = 0.0;
        r->comm_allreduce_s = tpcomm;
    }
    r->comm_allgather_s += z3 + ag;
    r->comm_reducescatter_s += z3rs;
    if (c->d.zero == 0)
        r->comm_allreduce_s += sync_sum + emb_sync;
    else if (c->d.zero < 3)
        r->comm_reducescatter_s += sync_sum + emb_sync;
    else
        r->comm_allreduce_s += z3_last ? 0.0 : sync_sum; /* hybrid replicas */
    r->comm_alltoall_s = a2a;
    /* point-to-point: the stage's pipeline sends and context parallelism's
     * ring passes (forward, backward twice, the recomputed forward) */
    r->comm_p2p_s = mm * ((double)g0->sends * (p2p + p2p_ag) +
                          (pass + 1.0) * dt_stage_sum(yp, st, g0, DT_OFF(cp_comm)));
    double comm = r->comm_allreduce_s + r->comm_allgather_s + r->comm_reducescatter_s +
                  r->comm_alltoall_s + r->comm_p2p_s;
    double exposed = iter - r->compute_gemm_s - r->pipeline_bubble_s;
    if (exposed < 0)
        exposed = 0;
    if (exposed > comm)
        exposed = comm;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    /* what bounds the step: memory-bound kernels (the layers', the
     * embedding, the loss), the optimizer, the rest math-bound; exposed
     * communication by dimension (breakdown.c) */
    r->optimizer_s = opt_time;
    r->compute_memory_s = mm * (dt_stage_sum(yp, st, g0, DT_OFF(mem_f)) +
                                dt_stage_sum(yp, st, g0, DT_OFF(mem_b)) + xp->emb_comp + xp->emb_b +
                                (c->d.pp == 1 ? xp->head_mf + xp->head_mb : 0.0));
    r->compute_math_s = dt_max(0.0, r->compute_gemm_s - r->compute_memory_s - opt_time);
    double est[DT_B_DIMS] = {
        [DT_B_TP] = mm * dt_stage_sum(yp, st, g0, DT_OFF(tp_exp)),
        [DT_B_CP] = mm * dt_stage_sum(yp, st, g0, DT_OFF(cp_exp)),
        [DT_B_EP] = a2a,
        [DT_B_PP] = mm * (double)g0->sends * (p2p + p2p_ag),
        [DT_B_DP] = -1.0};
    dt_breakdown_comm(c, exposed, est, r);
    r->events_compute = ncomp + 2; /* layers, embedding, optimizer */
    r->events_comm = ncomm + 1 + (ag_exposed > 0 ? 1 : 0);
    double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16];
    /* model FLOPs: forward, plus per layer two backward GEMM passes when
     * trained, one when it only passes data gradients down */
    double lt = (double)(m->layers - yp->frozen), ld = yp->fmode == DT_DGRAD ? (double)yp->frozen : 0.0;
    double ffac = 1.0 + (2.0 * lt + ld) / (double)m->layers;
    r->mfu = ffac * c->model_flops * (double)c->d.gb /
             (iter * (double)c->p->system.devices * peak);
    return STATUS_OK;
}
