/*
 * dlrm.c - DLRM in the detailed fidelity: MLP layers as GEMMs of the
 * local batch (backward: data and weight gradients, none into the dense
 * features), the dot interaction of tables + 1 vectors as a batched GEMM
 * plus its copies, embedding lookups as gathers at the effective HBM
 * bandwidth, the embeddings sharded table-, row- or column-wise
 * (detailed.h), ids and pooled vectors exchanged by all-to-all (row-wise:
 * partial sums reduce-scattered, their gradients all-gathered), the fused
 * sparse optimizer reading and writing every touched row and its state,
 * MLP gradients all-reduced in 25 MB buckets on the communication stream.
 */
#include "dt.h"

#include <math.h>
#include <string.h>

int64_t detailed_dlrm_column_shards(const model_t *m, const task_detailed_t *t,
                                    int64_t devices)
{
    if (t->emb_column_shards > 0)
        return t->emb_column_shards;
    for (int64_t c = 1; c < m->emb_dim; c++)
        if (m->emb_dim % c == 0 && m->tables * c >= devices)
            return c;
    return m->emb_dim;
}

void detailed_dlrm_shard(const model_t *m, const task_detailed_t *t, int64_t devices,
                         double batch, detailed_dlrm_emb *s)
{
    double T = (double)m->tables, R = (double)m->rows_per_table;
    double D = (double)m->emb_dim, L = (double)m->pooling, N = (double)devices;
    double sv;
    memset(s, 0, sizeof *s);
    s->id_copies = 1.0;
    switch (t->emb_sharding) {
    case TASK_EMB_ROW:
        s->shards = T;
        s->width = D;
        s->rows = ceil(R / N);
        s->lookups = T * batch * L / N;
        s->outputs = T * batch;
        break;
    case TASK_EMB_COLUMN: {
        double c = (double)detailed_dlrm_column_shards(m, t, devices);
        s->shards = ceil(T * c / N);
        s->width = D / c;
        s->rows = R;
        s->lookups = s->shards * batch * L;
        s->outputs = s->shards * batch;
        s->id_copies = c;
        break;
    }
    default:
        s->shards = ceil(T / N);
        s->width = D;
        s->rows = R;
        s->lookups = s->shards * batch * L;
        s->outputs = s->shards * batch;
        break;
    }
    sv = t->emb_optimizer == TASK_EMB_OPT_SGD       ? 0.0
         : t->emb_optimizer == TASK_EMB_OPT_ADAGRAD ? s->width
         : t->emb_optimizer == TASK_EMB_OPT_ADAM    ? 2.0 * s->width
                                                    : 1.0;
    s->state_values = sv;
}

static double dt_dlrm_ebytes(const model_t *m)
{
    return m->bytes_per_emb_param > 0 ? (double)m->bytes_per_emb_param : 4.0;
}

/* Width of the top MLP's input: the bottom output and the pairwise dots
 * of the tables + 1 vectors. */
static double dt_dlrm_top_in(const model_t *m)
{
    double T = (double)m->tables;
    return (double)m->emb_dim + T * (T + 1.0) / 2.0;
}

void detailed_dlrm_params(const model_t *m, double *bot, double *top, double *emb)
{
    double b = 0.0, t = 0.0, in = dt_dlrm_top_in(m);
    for (int i = 0; i + 1 < m->d.bot_n; i++)
        b += (double)m->d.bot_mlp[i] * (double)m->d.bot_mlp[i + 1] + (double)m->d.bot_mlp[i + 1];
    for (int j = 0; j < m->d.top_n; j++) {
        double out = (double)m->d.top_mlp[j];
        t += in * out + out;
        in = out;
    }
    *bot = b;
    *top = t;
    *emb = (double)m->tables * (double)m->rows_per_table * (double)m->emb_dim;
}

status_code dt_check_dlrm(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const task_t *k = &p->task;
    int64_t x;
    bool bad = m->tables < 1 || m->rows_per_table < 1 || m->emb_dim < 1 ||
               m->pooling < 1 || m->bytes_per_emb_param < 0 || m->d.bot_n < 2 ||
               m->tables > DT_MAX_COUNT || m->emb_dim > DT_MAX_COUNT ||
               m->rows_per_table > DT_MAX_BATCH || m->pooling > DT_MAX_COUNT ||
               m->bytes_per_emb_param > 64 ||
               !dt_mul_ok(m->tables, m->emb_dim, DT_MAX_BATCH, &x) ||
               m->d.bot_n > MODEL_MLP_MAX || m->d.top_n < 1 ||
               m->d.top_n > MODEL_MLP_MAX;
    for (int i = 0; !bad && i < m->d.bot_n; i++)
        bad = m->d.bot_mlp[i] < 1 || m->d.bot_mlp[i] > DT_MAX_COUNT;
    for (int i = 0; !bad && i < m->d.top_n; i++)
        bad = m->d.top_mlp[i] < 1 || m->d.top_mlp[i] > DT_MAX_COUNT;
    if (bad || m->d.bot_mlp[m->d.bot_n - 1] != m->emb_dim) {
        *where = "model";
        return STATUS_INVALID_VALUE;
    }
    if (t->dp < 0 || t->micro_batch < 0 || t->global_batch < 0 || t->grad_accum < 0 ||
        t->dp > DT_MAX_DEGREE || t->micro_batch > DT_MAX_BATCH ||
        t->global_batch > DT_MAX_BATCH || t->grad_accum > DT_MAX_BATCH ||
        t->emb_column_shards > DT_MAX_COUNT ||
        (t->micro_batch > 0 && !dt_mul_ok(t->micro_batch, t->dp > 0 ? t->dp : 1, DT_MAX_BATCH, &x)) ||
        t->dtype < 0 || t->dtype >= HW_NDTYPES || !(t->grad_reduce_bytes >= 0) ||
        t->emb_sharding < 0 || t->emb_sharding > TASK_EMB_COLUMN ||
        t->emb_optimizer < 0 || t->emb_optimizer > TASK_EMB_OPT_ADAM ||
        t->emb_column_shards < 0 ||
        (t->emb_column_shards > 0 && m->emb_dim % t->emb_column_shards != 0) ||
        t->frozen_layers != 0 || k->freeze_dense ||
        (k->kind != TASK_FINETUNE &&
         (k->freeze_emb || k->freeze_bot_mlp || k->freeze_top_mlp))) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    /* MLPs data parallel, tables sharded: no tp, pp, cp, ep, ZeRO */
    if (t->tp > 1 || t->pp > 1 || t->cp > 1 || t->ep > 1 || t->vpp > 1 ||
        t->zero_stage != 0 || t->sequence_parallel || t->shard_degree > 0) {
        *where = "task";
        return STATUS_INVALID_STRATEGY;
    }
    if ((t->dp > 0 ? t->dp : 1) != p->system.devices) {
        *where = "task";
        return STATUS_INVALID_PRODUCT;
    }
    return STATUS_OK;
}

/* One MLP layer of `in` x `out` on b samples. */
typedef struct dt_mlp_layer {
    double fwd, bwd, sync, params, flops;
} dt_mlp_layer;

static void dt_mlp_cost(const hw_t *hw, hw_dtype dt, double ab, double b, double in,
                        double out, bool dgrad, bool wgrad, dt_mlp_layer *L)
{
    double ov = hw->kernel_overhead_s;
    L->params = in * out + out;
    L->fwd = hw_gemm_time(hw, dt, b, out, in, 1) + hw_mem_time(hw, 2.0 * b * out * ab) + ov;
    L->flops = 2.0 * b * in * out * (1.0 + (dgrad ? 1.0 : 0.0) + (wgrad ? 1.0 : 0.0));
    L->bwd = 0.0;
    if (dgrad || wgrad)
        L->bwd = (dgrad ? hw_gemm_time(hw, dt, b, in, out, 1) : 0.0) +
                 (wgrad ? hw_gemm_time(hw, dt, in, out, b, 1) : 0.0) +
                 hw_mem_time(hw, 3.0 * b * out * ab) + ov;
}

status_code dt_run_dlrm(const point_t *p, engine *e, result_t *r)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const hw_t *hw = &p->system.hw;
    const topo_t *topo = &p->system.topo;
    bool training = p->task.kind != TASK_INFERENCE;
    bool ft = p->task.kind == TASK_FINETUNE;
    int64_t n = t->dp > 0 ? t->dp : 1;
    hw_dtype dt = (hw_dtype)t->dtype;
    double ab = dt == HW_FP32 || dt == HW_TF32 ? 4.0 : 2.0;
    double gbytes = t->grad_reduce_bytes > 0 ? t->grad_reduce_bytes : ab;
    double eb = dt_dlrm_ebytes(m), ov = hw->kernel_overhead_s;
    int64_t gb = t->global_batch > 0 ? t->global_batch
                                     : (t->micro_batch > 0 ? t->micro_batch : 1) * n;
    r->global_batch = gb;
    if (gb % n != 0 || (t->micro_batch > 0 && t->micro_batch * n != gb) ||
        t->grad_accum > 1)
        return STATUS_INFEASIBLE_BATCH;
    double B = (double)gb, b = B / (double)n;
    bool emb_train = training && !(ft && p->task.freeze_emb);
    bool bot_train = training && !(ft && p->task.freeze_bot_mlp);
    bool top_train = training && !(ft && p->task.freeze_top_mlp);
    bool below = emb_train || bot_train; /* interaction needs a backward */
    task_detailed_t ts = *t;
    if (ts.emb_sharding == TASK_EMB_NONE)
        ts.emb_sharding = TASK_EMB_TABLE;
    detailed_dlrm_emb s;
    detailed_dlrm_shard(m, &ts, n, B, &s);
    double T = (double)m->tables, D = (double)m->emb_dim, F = T + 1.0;

    /* ---- memory */
    double bot_p, top_p, emb_p;
    detailed_dlrm_params(m, &bot_p, &top_p, &emb_p);
    double mlp_train = (bot_train ? bot_p : 0.0) + (top_train ? top_p : 0.0);
    double wb = ab > 2.0 ? 4.0 : 2.0;
    double table_bytes = s.shards * s.rows * s.width * eb;
    double weights = wb * (bot_p + top_p) + table_bytes;
    double grads = wb * mlp_train;
    double opt = (ab > 2.0 ? 8.0 : 12.0) * mlp_train +
                 (emb_train ? s.shards * s.rows * s.state_values * 4.0 : 0.0);
    double acts = b * (double)m->d.bot_mlp[0] * ab;
    for (int i = 1; i < m->d.bot_n; i++)
        acts += b * (double)m->d.bot_mlp[i] * ab;
    for (int j = 0; j < m->d.top_n; j++)
        acts += b * (double)m->d.top_mlp[j] * ab;
    acts += b * (F * D + F * (F - 1.0) / 2.0) * ab;  /* interaction in and out */
    acts += (s.outputs * s.width + b * T * D) * eb;  /* pooled: sent, received */
    r->mem_weights_bytes_per_device = weights;
    r->mem_grads_bytes_per_device = grads;
    r->mem_optimizer_bytes_per_device = opt;
    r->mem_activations_bytes_per_device = acts;
    r->mem_total_bytes_per_device = weights + grads + opt + acts;
    if (r->mem_total_bytes_per_device > hw->mem_capacity_bytes)
        return STATUS_INFEASIBLE_MEMORY;

    /* ---- embeddings: gathers, pooled exchange, sparse update */
    double pooled = s.outputs * s.width * eb;
    double lookup = hw_mem_time(hw, (s.lookups + s.outputs) * s.width * eb) + ov;
    double update = emb_train ? hw_mem_time(hw, s.outputs * s.width * eb +
                                                    s.lookups * (2.0 * s.width * eb +
                                                                 2.0 * 4.0 * s.state_values)) +
                                    ov
                              : 0.0;
    double ids = topo_coll_time(topo, TOPO_ALLTOALL, n, 1,
                                T * b * (double)m->pooling * 4.0 * s.id_copies);
    bool row = ts.emb_sharding == TASK_EMB_ROW;
    double pool_f = row ? topo_coll_time(topo, TOPO_REDUCESCATTER, n, 1, pooled)
                        : topo_coll_time(topo, TOPO_ALLTOALL, n, 1, pooled);
    double pool_b = !emb_train ? 0.0
                    : row      ? topo_coll_time(topo, TOPO_ALLGATHER, n, 1, pooled)
                               : topo_coll_time(topo, TOPO_ALLTOALL, n, 1, pooled);

    /* ---- MLPs and the dot interaction */
    dt_mlp_layer bl[MODEL_MLP_MAX], tl[MODEL_MLP_MAX];
    double flops = 0.0, fwd_c = 0.0, bwd_c = 0.0;
    for (int i = 0; i + 1 < m->d.bot_n; i++) {
        /* no data gradient into the dense features; nothing trained
         * below a frozen bottom MLP */
        dt_mlp_cost(hw, dt, ab, b, (double)m->d.bot_mlp[i], (double)m->d.bot_mlp[i + 1],
                    bot_train && i > 0, bot_train, &bl[i]);
        flops += bl[i].flops;
        fwd_c += bl[i].fwd;
        bwd_c += bl[i].bwd;
    }
    double in = dt_dlrm_top_in(m);
    for (int j = 0; j < m->d.top_n; j++) {
        double out = (double)m->d.top_mlp[j];
        bool dg = j == 0 ? below : (below || top_train);
        dt_mlp_cost(hw, dt, ab, b, in, out, training && dg, top_train, &tl[j]);
        flops += tl[j].flops;
        fwd_c += tl[j].fwd;
        bwd_c += tl[j].bwd;
        in = out;
    }
    double ig = hw_gemm_time(hw, dt, F, F, D, b);
    double imem = hw_mem_time(hw, b * (2.0 * F * D + F * F + F * (F - 1.0) / 2.0) * ab);
    double inter_f = ig + imem + ov;
    double inter_b = training && below ? 2.0 * (ig + imem) + ov : 0.0;
    flops += 2.0 * b * F * F * D * (1.0 + (inter_b > 0 ? 2.0 : 0.0));
    double dense_opt = training ? hw_mem_time(hw, 30.0 * mlp_train) : 0.0;

    /* ---- the iteration on the two streams: ids exchanged, lookups,
     * pooled exchange overlapped with the bottom MLP, interaction, top
     * MLP; backward with per-layer gradient all-reduces on the comm
     * stream, the pooled gradients' exchange, the sparse update */
    engine_reset(e);
    if (engine_reserve(e, (size_t)(4 * MODEL_MLP_MAX + 16)) != 0)
        return STATUS_NOMEM;
    engine_label lab = {ENGINE_PART_EMB, ENGINE_OP_ALL2ALL, 0, -1};
    engine_ev ev_ids = engine_add(e, ENGINE_COMM, ids, NULL, 0, lab);
    lab.op = ENGINE_OP_COMPUTE;
    engine_ev ev_lk = engine_add(e, ENGINE_COMP, lookup, &ev_ids, 1, lab);
    lab.op = row ? ENGINE_OP_WG_RS : ENGINE_OP_ALL2ALL;
    engine_ev ev_pool = engine_add(e, ENGINE_COMM, pool_f, &ev_lk, 1, lab);
    lab.part = ENGINE_PART_MLPBOT;
    lab.op = ENGINE_OP_COMPUTE;
    engine_ev last = ENGINE_NONE, lastc = ENGINE_NONE;
    for (int i = 0; i + 1 < m->d.bot_n; i++) {
        lab.layer = i;
        last = engine_add(e, ENGINE_COMP, bl[i].fwd, NULL, 0, lab);
    }
    lab.part = ENGINE_PART_MLPTOP;
    lab.layer = -1;
    last = engine_add(e, ENGINE_COMP, inter_f, &ev_pool, 1, lab);
    for (int j = 0; j < m->d.top_n; j++) {
        lab.layer = j;
        last = engine_add(e, ENGINE_COMP, tl[j].fwd, NULL, 0, lab);
    }
    /* gradients all-reduced in buckets of at least DT_DLRM_BUCKET bytes
     * (PyTorch DDP's 25 MB), launched as the backward fills them */
    double ar_sum = 0.0, pending = 0.0;
    bool overlap = t->overlap_dp_comm;
#define DT_DLRM_BUCKET 25e6
#define DT_DLRM_FLUSH(force)                                                     \
    do {                                                                         \
        if (pending > 0 && ((force) || pending >= DT_DLRM_BUCKET)) {            \
            double ar = topo_coll_time(topo, TOPO_ALLREDUCE, n, 1, pending);     \
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
            last = engine_add(e, ENGINE_COMP, tl[j].bwd, NULL, 0, lab);
            pending += top_train ? tl[j].params * gbytes : 0.0;
            DT_DLRM_FLUSH(false);
        }
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, inter_b, NULL, 0, lab);
        lab.part = ENGINE_PART_EMB;
        lab.op = row ? ENGINE_OP_ACT_AR : ENGINE_OP_ALL2ALL;
        engine_ev ev_g = engine_add(e, ENGINE_COMM, pool_b, &last, 1, lab);
        lab.part = ENGINE_PART_MLPBOT;
        for (int i = m->d.bot_n - 2; i >= 0; i--) {
            lab.layer = i;
            lab.op = ENGINE_OP_COMPUTE;
            last = engine_add(e, ENGINE_COMP, bl[i].bwd, NULL, 0, lab);
            pending += bot_train ? bl[i].params * gbytes : 0.0;
            DT_DLRM_FLUSH(i == 0);
        }
#undef DT_DLRM_FLUSH
        lab.part = ENGINE_PART_EMB;
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, update, &ev_g, 1, lab);
        lab.part = ENGINE_PART_MLPTOP;
        lab.op = ENGINE_OP_WG_AR;
        if (!overlap)
            lastc = engine_add(e, ENGINE_COMM, ar_sum, &last, 1, lab);
        engine_ev deps[2] = {last, lastc};
        lab.op = ENGINE_OP_COMPUTE;
        engine_add(e, ENGINE_COMP, dense_opt, deps, 2, lab);
    }
    double iter = engine_now(e);

    /* ---- figures */
    r->iteration_time_s = iter;
    r->throughput_samples_per_s = B / iter;
    r->compute_gemm_s = fwd_c + inter_f + (training ? bwd_c + inter_b + dense_opt : 0.0);
    r->compute_emb_s = lookup + update;
    r->comm_alltoall_s = ids + (row ? 0.0 : pool_f + pool_b);
    r->comm_reducescatter_s = row ? pool_f : 0.0;
    r->comm_allgather_s = row ? pool_b : 0.0;
    r->comm_allreduce_s = ar_sum;
    double comm = r->comm_alltoall_s + r->comm_reducescatter_s + r->comm_allgather_s +
                  r->comm_allreduce_s;
    double exposed = iter - r->compute_gemm_s - r->compute_emb_s;
    exposed = exposed < 0 ? 0 : exposed > comm ? comm : exposed;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    r->events_compute = e->count[ENGINE_COMP];
    r->events_comm = e->count[ENGINE_COMM];
    double peak = hw->peak_flops[dt] > 0 ? hw->peak_flops[dt] : hw->peak_flops[HW_BF16];
    r->mfu = flops / (iter * peak);
    return STATUS_OK;
}
