/*
 * dlrm.c - a DLRM iteration in the detailed fidelity: MLP layers and the
 * interaction (mlp.c) data parallel, the embeddings (emb.c) sharded
 * table-, row- or column-wise (detailed.h) or placed per table by the
 * planner (emb_plan.c), ids and pooled vectors exchanged by all-to-all
 * (row-wise: partial sums reduce-scattered, their gradients all-gathered)
 * in the stack's wire precision, MLP gradients all-reduced in 25 MB
 * buckets on the communication stream (emb.c's small all-reduce), all on
 * the two-stream engine. The stack's DLRM facts (stack.h) set the wire
 * precision, the hybrid hot fraction, the overlap of embedding work with
 * the MLPs, the host cost per iteration and the MLP GEMM rate; their
 * ranges give the band (the top's loop, this family's ends first so that
 * the nominal run's events stay in the engine).
 * Invariants: what the scenarios share is prepared once (dlrm_prep);
 * the memory of the embeddings is the scenario's (the planner reads its
 * hot fraction); nothing is allocated once the engine has its capacity.
 */
#include "dlrm.h"

#include <math.h>
#include <string.h>

static void dlrm_prep_of(const point_t *p, dlrm_prep *P)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const stack_desc *st = &p->stack;
    bool training = p->task.kind != TASK_INFERENCE;
    bool ft = p->task.kind == TASK_FINETUNE;
    int64_t n = t->dp > 0 ? t->dp : 1;
    hw_dtype dt = (hw_dtype)t->dtype;
    double ab = dt == HW_FP32 || dt == HW_TF32 ? 4.0 : 2.0;
    double eb = dlrm_shape_emb_bytes(m);
    P->n = n;
    P->dt = dt;
    P->ab = ab;
    P->gbytes = t->grad_reduce_bytes > 0 ? t->grad_reduce_bytes : ab;
    P->eb = eb;
    P->cb = st->emb_comm_bytes > 0 ? st->emb_comm_bytes : eb;
    P->layers = false;
    int64_t gb = t->global_batch > 0 ? t->global_batch
                                     : (t->micro_batch > 0 ? t->micro_batch : 1) * n;
    P->gb = gb;
    P->batch_ok = !(gb % n != 0 || (t->micro_batch > 0 && t->micro_batch * n != gb) ||
                    t->grad_accum > 1);
    if (!P->batch_ok)
        return;
    double B = (double)gb, b = B / (double)n;
    P->B = B;
    P->b = b;
    P->training = training;
    P->emb_train = training && !(ft && p->task.freeze_emb);
    P->bot_train = training && !(ft && p->task.freeze_bot_mlp);
    P->top_train = training && !(ft && p->task.freeze_top_mlp);
    P->below = P->emb_train || P->bot_train; /* interaction needs a backward */
    /* no sharding stated: table-wise (a copy of the task only then) */
    P->ts = t;
    if (t->emb_sharding == TASK_EMB_NONE) {
        P->ts_table = *t;
        P->ts_table.emb_sharding = TASK_EMB_TABLE;
        P->ts = &P->ts_table;
    }
    double T = (double)m->tables, D = (double)m->emb_dim, F = T + 1.0;

    /* ---- memory: MLPs and cross network (the embeddings: per scenario):
     * the layers' parameters (the sum detailed_dlrm_params reports),
     * their activations */
    P->nl = dlrm_shape_widths(m, P->w_in, P->w_out, &P->nb);
    double bot_p, top_p, acts = b * P->w_in[0] * ab;
    dlrm_shape_mlp_params(P->w_in, P->w_out, P->nl, P->nb, &bot_p, &top_p);
    for (int k = 0; k < P->nl; k++)
        acts += b * P->w_out[k] * ab;
    P->cross_p = dlrm_shape_cross_params(m);
    top_p += P->cross_p;
    P->bot_p = bot_p;
    P->top_p = top_p;
    P->mlp_train = (P->bot_train ? bot_p : 0.0) + (P->top_train ? top_p : 0.0);
    P->wb = ab > 2.0 ? 4.0 : 2.0;
    P->grads = P->wb * P->mlp_train;
    P->opt_mlp = (ab > 2.0 ? 8.0 : 12.0) * P->mlp_train;
    if (m->d.interaction == MODEL_INTERACTION_DCNV2)
        acts += b * F * D * ab * (1.0 + 3.0 * (double)m->d.cross_layers) +
                b * (double)m->d.cross_rank * ab * (double)m->d.cross_layers;
    else
        acts += b * (F * D + F * (F - 1.0) / 2.0) * ab; /* interaction in and out */
    P->acts = acts;
    P->dense_mem = P->wb * (bot_p + top_p) + P->grads + P->opt_mlp + acts;
    if (P->ts->emb_sharding != TASK_EMB_AUTO)
        emb_fixed(p, P->ts, n, B, b, eb, P->cb, P->emb_train, &P->E);
}

/* The MLP layers and the interaction (dlrm_prep's `layers`). */
static void dlrm_layers_of(const point_t *p, dlrm_prep *P)
{
    const model_t *m = &p->model;
    const hw_t *hw = &p->system.hw;
    double ab = P->ab, b = P->b;
    const double *w_in = P->w_in, *w_out = P->w_out;
    double eff[DLRM_LAYERS];
    int nl = P->nl, nb = P->nb;
    /* the forward GEMMs' efficiencies first, in a loop of their own */
    for (int k = 0; k < nl; k++)
        eff[k] = hw_gemm_efficiency_dtype(hw, P->dt, 2.0 * b * w_out[k] * w_in[k]);
    double flops = 0.0, peak = dlrm_mlp_peak(hw, P->dt);
    /* data gradients: none into the dense features, none below a
     * frozen bottom MLP; into the top MLP's input when the interaction
     * needs one, above it when anything below trains */
    bool dg_top0 = P->training && P->below, dg_top = P->training && (P->below || P->top_train);
    for (int k = 0; k < nl; k++) {
        bool dg = k < nb ? P->bot_train && k > 0 : k == nb ? dg_top0 : dg_top;
        bool wg = k < nb ? P->bot_train : P->top_train;
        dlrm_mlp_layer_of(hw, P->dt, peak, ab, b, w_in[k], w_out[k], dg, wg, eff[k], &P->l[k]);
        flops += P->l[k].flops;
    }
    dlrm_mlp_inter_of(m, hw, P->dt, ab, b, P->training && P->below, &P->x);
    P->flops = flops + P->x.flops;
    P->dense_opt = P->training ? hw_mem_time(hw, 30.0 * P->mlp_train) : 0.0;
    P->layers = true;
}

/* The all-reduce of the i-th gradient bucket, of `bytes`: the time an
 * earlier scenario found for the same bytes there, else computed (and
 * kept when it is the first). */
static inline double dlrm_bucket(dlrm_prep *P, const topo_t *topo, int64_t n, double bytes,
                                 bool sharp, int i)
{
    if (P->nbk < 0) /* one scenario */
        return emb_allreduce(topo, n, bytes, sharp);
    if (i < P->nbk && P->bk_bytes[i] == bytes)
        return P->bk_s[i];
    double s = emb_allreduce(topo, n, bytes, sharp);
    if (i == P->nbk && i < DLRM_BUCKETS) {
        P->bk_bytes[i] = bytes;
        P->bk_s[i] = s;
        P->nbk = i + 1;
    }
    return s;
}

/* The forward and backward of every MLP layer (the bottom MLP's, then
 * the top's) and of the interaction at a scenario's GEMM rate. */
typedef struct dlrm_pass {
    double lf[DLRM_LAYERS], lb[DLRM_LAYERS];
    double inter_f, inter_b;
} dlrm_pass;

/* The memory of a scenario (hot: its hybrid fraction) into r, the
 * embedding part of its iteration in *E (a fixed sharding's, or the
 * planner's in *Ea); false when it does not fit. */
static bool dlrm_memory(const point_t *p, const dlrm_prep *P, double hot, emb_memo *memo,
                        emb_part *Ea, const emb_part **E, result_t *r)
{
    const hw_t *hw = &p->system.hw;
    *E = &P->E; /* a fixed sharding's */
    r->emb_dp_tables = r->emb_whole_tables = r->emb_split_tables = 0;
    if (P->ts->emb_sharding == TASK_EMB_AUTO) {
        emb_plan pl;
        emb_auto(p, P->ts, P->n, P->B, P->b, P->eb, P->cb, P->emb_train, hot,
                 hw->mem_capacity_bytes - P->dense_mem, Ea, &pl, memo);
        *E = Ea;
        r->emb_dp_tables = pl.n_dp;
        r->emb_whole_tables = pl.n_table;
        r->emb_split_tables = pl.n_row;
    }
    double acts = P->acts + (*E)->pooled_bytes, grads = P->grads;
    r->mem_weights_bytes_per_device = P->wb * (P->bot_p + P->top_p) + (*E)->table_bytes;
    r->mem_grads_bytes_per_device = grads;
    r->mem_optimizer_bytes_per_device = P->opt_mlp + (*E)->state_bytes;
    r->mem_activations_bytes_per_device = acts;
    r->mem_total_bytes_per_device = r->mem_weights_bytes_per_device + grads +
                                    r->mem_optimizer_bytes_per_device + acts;
    return !(r->mem_total_bytes_per_device > hw->mem_capacity_bytes);
}

/* The iteration on the two streams of engine e: ids exchanged, lookups,
 * pooled exchange overlapped with the bottom MLP, interaction, top MLP;
 * backward with per-layer gradient all-reduces on the comm stream, the
 * pooled gradients' exchange, the sparse update. The part of the
 * embedding work the stack pipelines behind the MLPs (1 - keep) leaves
 * the critical path. The all-reduces' sum in *ar_sum. */
static status_code dlrm_streams(const point_t *p, dlrm_prep *P, const emb_part *E,
                                const dlrm_pass *T, double keep, engine *e, double *ar_sum_out)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const topo_t *topo = &p->system.topo;
    int64_t n = P->n;
    double gbytes = P->gbytes;
    bool training = P->training, bot_train = P->bot_train, top_train = P->top_train;
    const double *lf = T->lf, *lb = T->lb;
    int nb = P->nb;
    bool row = E->row;
    engine_reset(e);
    if (engine_reserve(e, (size_t)(4 * MODEL_MLP_MAX + 16)) != 0)
        return STATUS_NOMEM;
    engine_label lab = {ENGINE_PART_EMB, ENGINE_OP_ALL2ALL, 0, -1};
    engine_ev ev_ids = engine_add(e, ENGINE_COMM, E->ids * keep, NULL, 0, lab);
    lab.op = ENGINE_OP_COMPUTE;
    engine_ev ev_lk = engine_add(e, ENGINE_COMP, E->lookup * keep, &ev_ids, 1, lab);
    lab.op = row ? ENGINE_OP_WG_RS : ENGINE_OP_ALL2ALL;
    engine_ev ev_pool = engine_add(e, ENGINE_COMM, E->pool_f * keep, &ev_lk, 1, lab);
    lab.part = ENGINE_PART_MLPBOT;
    lab.op = ENGINE_OP_COMPUTE;
    engine_ev last = ENGINE_NONE, lastc = ENGINE_NONE;
    for (int i = 0; i + 1 < m->d.bot_n; i++) {
        lab.layer = i;
        last = engine_add(e, ENGINE_COMP, lf[i], NULL, 0, lab);
    }
    lab.part = ENGINE_PART_MLPTOP;
    lab.layer = -1;
    last = engine_add(e, ENGINE_COMP, T->inter_f, &ev_pool, 1, lab);
    for (int j = 0; j < m->d.top_n; j++) {
        lab.layer = j;
        last = engine_add(e, ENGINE_COMP, lf[nb + j], NULL, 0, lab);
    }
    /* gradients all-reduced in buckets of at least DLRM_BUCKET_BYTES bytes
     * (PyTorch DDP's 25 MB), launched as the backward fills them */
    double ar_sum = 0.0, pending = 0.0;
    int fi = 0; /* buckets flushed */
    bool overlap = t->overlap_dp_comm;
#define DLRM_BUCKET_BYTES 25e6
#define DLRM_FLUSH(force)                                                     \
    do {                                                                         \
        if (pending > 0 && ((force) || pending >= DLRM_BUCKET_BYTES)) {            \
            double ar = dlrm_bucket(P, topo, n, pending, t->allreduce_sharp, fi++); \
            ar_sum += ar;                                                        \
            pending = 0.0;                                                       \
            if (overlap) {                                                       \
                lab.op = ENGINE_OP_WG_AR;                                        \
                lastc = engine_add(e, ENGINE_COMM, ar, &last, 1, lab);           \
            }                                                                    \
        }                                                                        \
    } while (0)
    if (training) {
        lab.bwd = 1;
        for (int j = m->d.top_n - 1; j >= 0; j--) {
            lab.layer = j;
            lab.op = ENGINE_OP_COMPUTE;
            last = engine_add(e, ENGINE_COMP, lb[nb + j], NULL, 0, lab);
            pending += top_train ? P->l[nb + j].params * gbytes : 0.0;
            DLRM_FLUSH(false);
        }
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, T->inter_b, NULL, 0, lab);
        pending += top_train ? P->cross_p * gbytes : 0.0;
        lab.part = ENGINE_PART_EMB;
        lab.op = row ? ENGINE_OP_ACT_AR : ENGINE_OP_ALL2ALL;
        engine_ev ev_g = engine_add(e, ENGINE_COMM, E->pool_b * keep, &last, 1, lab);
        lab.part = ENGINE_PART_MLPBOT;
        for (int i = m->d.bot_n - 2; i >= 0; i--) {
            lab.layer = i;
            lab.op = ENGINE_OP_COMPUTE;
            last = engine_add(e, ENGINE_COMP, lb[i], NULL, 0, lab);
            pending += bot_train ? P->l[i].params * gbytes : 0.0;
            if (i == 0)
                pending += E->grad_bytes; /* replicated rows, same collective */
            DLRM_FLUSH(i == 0);
        }
#undef DLRM_FLUSH
        lab.part = ENGINE_PART_EMB;
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, E->update * keep, &ev_g, 1, lab);
        lab.part = ENGINE_PART_MLPTOP;
        lab.op = ENGINE_OP_WG_AR;
        if (!overlap)
            lastc = engine_add(e, ENGINE_COMM, ar_sum, &last, 1, lab);
        engine_ev deps[2] = {last, lastc};
        lab.op = ENGINE_OP_COMPUTE;
        engine_add(e, ENGINE_COMP, P->dense_opt, deps, 2, lab);
    }
    *ar_sum_out = ar_sum;
    return STATUS_OK;
}

static status_code dlrm_iter(const point_t *p, dlrm_prep *P, engine *e, result_t *r,
                             stack_scenario sc, emb_memo *memo)
{
    const task_detailed_t *t = &p->task.detailed;
    const hw_t *hw = &p->system.hw;
    const stack_desc *st = &p->stack;
    double ov = hw->kernel_overhead_s;
    double geff = stack_pick(st->mlp_efficiency, sc, true);
    double emb_ov = stack_pick(st->emb_overlap, sc, true);
    /* the distributed loop's host cost (collective negotiation, the
     * launch of the exchange): runs on one device have none */
    double host = t->dp > 1 ? stack_pick(st->step_overhead_s, sc, false) : 0.0;
    double hot = t->emb_hybrid ? stack_pick(st->emb_hot_fraction, sc, true) : 0.0;
    if (!(geff > 0))
        geff = 1.0;
    r->global_batch = P->gb;
    if (!P->batch_ok) /* the rest of P is not set */
        return STATUS_INFEASIBLE_BATCH;
    bool training = P->training;
    double B = P->B;

    /* ---- memory: the MLPs' (shared), the embeddings' */
    emb_part Ea;
    const emb_part *E;
    if (!dlrm_memory(p, P, hot, memo, &Ea, &E, r))
        return STATUS_INFEASIBLE_MEMORY;

    /* ---- MLPs and the interaction at this scenario's GEMM rate */
    if (!P->layers)
        dlrm_layers_of(p, P);
    /* forward and backward of the bottom MLP's layers, then the top's */
    int nl = P->nl;
    dlrm_pass T;
    double fwd_c = 0.0, bwd_c = 0.0;
    for (int k = 0; k < nl; k++) {
        dlrm_mlp_times(&P->l[k], geff, ov, &T.lf[k], &T.lb[k]);
        fwd_c += T.lf[k];
        bwd_c += T.lb[k];
    }
    dlrm_mlp_inter_times(&P->x, geff, ov, &T.inter_f, &T.inter_b);
    double flops = P->flops, dense_opt = P->dense_opt;
    double inter_f = T.inter_f, inter_b = T.inter_b;

    /* ---- the iteration on the two streams */
    double ar_sum;
    status_code rc = dlrm_streams(p, P, E, &T, 1.0 - emb_ov, e, &ar_sum);
    if (rc != STATUS_OK)
        return rc;
    bool row = E->row;
    double iter = engine_now(e) + host;
    /* what was pipelined still takes its time on the device */
    double emb_all = E->ids + E->lookup + E->pool_f + E->pool_b + E->update;
    if (iter < emb_all)
        iter = emb_all;

    /* ---- figures */
    r->iteration_time_s = iter;
    r->throughput_samples_per_s = B / iter;
    r->compute_gemm_s = fwd_c + inter_f + (training ? bwd_c + inter_b + dense_opt : 0.0);
    r->compute_emb_s = E->lookup + E->update;
    r->comm_alltoall_s = E->ids + (row ? 0.0 : E->pool_f + E->pool_b);
    r->comm_reducescatter_s = row ? E->pool_f : 0.0;
    r->comm_allgather_s = row ? E->pool_b : 0.0;
    r->comm_allreduce_s = ar_sum;
    double comm = r->comm_alltoall_s + r->comm_reducescatter_s + r->comm_allgather_s +
                  r->comm_allreduce_s;
    double exposed = iter - r->compute_gemm_s - r->compute_emb_s;
    exposed = exposed < 0 ? 0 : exposed > comm ? comm : exposed;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    r->events_compute = e->count[ENGINE_COMP];
    r->events_comm = e->count[ENGINE_COMM];
    double peak = dlrm_mlp_peak(hw, P->dt);
    r->mfu = flops / (iter * peak);
    return STATUS_OK;
}

/* ---- the family (core.h dt_family; its state a dlrm_eval) */

static status_code dlrm_prepare(void *self, const point_t *p, engine *e, result_t *r)
{
    dlrm_eval *d = self;
    (void)e;
    (void)r;
    /* a band when the stack's DLRM facts have ranges (skipped when it
     * states them all exactly) */
    const stack_desc *st = &p->stack;
    const stack_fact *f[] = {&st->emb_hot_fraction, &st->emb_overlap, &st->step_overhead_s,
                             &st->mlp_efficiency};
    bool ranged = false;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ranged = ranged || f[i]->lo != f[i]->hi;
    d->p = p;
    d->ranged = ranged;
    d->memo.valid = false;
    dlrm_prep_of(p, &d->P);
    d->P.nbk = ranged ? 0 : -1;
    return STATUS_OK;
}

/* Scenario sc's iteration. A band end that the scenario cannot run (its
 * embeddings do not fit, its batch does not split) has no time: 0. */
static status_code dlrm_time_at(void *self, stack_scenario sc, engine *e, result_t *r)
{
    dlrm_eval *d = self;
    status_code rc = dlrm_iter(d->p, &d->P, e, r, sc, &d->memo);
    if (rc != STATUS_OK && sc != STACK_NOMINAL) {
        r->iteration_time_s = 0.0;
        return STATUS_OK;
    }
    return rc;
}

static bool dlrm_ranged(const void *self)
{
    return ((const dlrm_eval *)self)->ranged;
}

/* the nominal run last: its events are the engine's for a trace */
const dt_family dlrm_family = {dlrm_prepare, dlrm_time_at, dlrm_ranged, true};
