/*
 * dlrm.c - DLRM in the detailed fidelity: MLP layers as GEMMs of the
 * local batch (backward: data and weight gradients, none into the dense
 * features), the dot interaction of tables + 1 vectors as a batched GEMM
 * plus its copies, the embeddings sharded table-, row- or column-wise
 * (detailed.h) with each shard's lookups, gradient scatter and fused
 * sparse optimizer (every touched row and its state read and written)
 * priced as the planner prices a table (emb.c dt_emb_work: gathers at the
 * effective HBM bandwidth with their burst), ids and pooled vectors
 * exchanged by all-to-all (row-wise: partial sums reduce-scattered, their
 * gradients all-gathered) in the stack's wire precision,
 * MLP gradients all-reduced in 25 MB buckets on the communication stream
 * (NCCL's small-message path, emb.c). emb_sharding = "auto" places each
 * table by the planner of emb.c (replicated, whole, row-split; hybrid
 * embeddings; hierarchical exchange). The DCNv2 interaction: cross_layers
 * low-rank layers on the (tables + 1) x emb_dim concatenation, each two
 * GEMMs of rank cross_rank and an element-wise x0 * (.) + b + x_l. The
 * stack's DLRM facts (stack.h) set the wire precision, the hybrid hot
 * fraction, the overlap of embedding work with the MLPs, the host cost
 * per iteration and the MLP GEMM rate; their ranges give the band.
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

/* fp32 optimizer values per row of `width` elements: none for SGD, one
 * per element for Adagrad, two for Adam, one (row-wise Adagrad) else. */
static double dt_dlrm_state_values(const task_detailed_t *t, double width)
{
    return t->emb_optimizer == TASK_EMB_OPT_SGD       ? 0.0
           : t->emb_optimizer == TASK_EMB_OPT_ADAGRAD ? width
           : t->emb_optimizer == TASK_EMB_OPT_ADAM    ? 2.0 * width
                                                      : 1.0;
}

void detailed_dlrm_shard(const model_t *m, const task_detailed_t *t, int64_t devices,
                         double batch, detailed_dlrm_emb *s)
{
    double T = (double)m->tables, R = (double)m->rows_per_table;
    double D = (double)m->emb_dim, L = (double)m->pooling, N = (double)devices;
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
    s->state_values = dt_dlrm_state_values(t, s->width);
}

static double dt_dlrm_ebytes(const model_t *m)
{
    return m->bytes_per_emb_param > 0 ? (double)m->bytes_per_emb_param : 4.0;
}

/* Width of the top MLP's input: the bottom output and the pairwise dots
 * of the tables + 1 vectors; DCNv2: the cross network's output, as wide
 * as its (tables + 1) x emb_dim input. */
static double dt_dlrm_top_in(const model_t *m)
{
    double T = (double)m->tables;
    if (m->d.interaction == MODEL_INTERACTION_DCNV2)
        return (T + 1.0) * (double)m->emb_dim;
    return (double)m->emb_dim + T * (T + 1.0) / 2.0;
}

/* Parameters of the DCNv2 cross network: per layer U and V (W x r) and
 * a bias of W. */
static double dt_dlrm_cross_params(const model_t *m)
{
    if (m->d.interaction != MODEL_INTERACTION_DCNV2)
        return 0.0;
    double W = ((double)m->tables + 1.0) * (double)m->emb_dim;
    return (double)m->d.cross_layers * (2.0 * W * (double)m->d.cross_rank + W);
}

/* Embedding rows of all tables (listed one by one, or uniform). */
static double dt_dlrm_rows(const model_t *m)
{
    if (m->d.n_tables <= 0)
        return (double)m->tables * (double)m->rows_per_table;
    double s = 0.0;
    for (int i = 0; i < m->d.n_tables; i++)
        s += (double)m->d.table_rows[i];
    return s;
}

/* The MLP layers' input and output widths, the bottom MLP's first
 * (*nb of them), then the top's (from dt_dlrm_top_in); returns the
 * count. */
#define DT_DLRM_LAYERS (2 * MODEL_MLP_MAX)
static int dt_dlrm_widths(const model_t *m, double *w_in, double *w_out, int *nb)
{
    int n = 0;
    for (int i = 0; i + 1 < m->d.bot_n; i++, n++) {
        w_in[n] = (double)m->d.bot_mlp[i];
        w_out[n] = (double)m->d.bot_mlp[i + 1];
    }
    *nb = n;
    double in = dt_dlrm_top_in(m);
    for (int j = 0; j < m->d.top_n; j++, n++) {
        w_in[n] = in;
        w_out[n] = in = (double)m->d.top_mlp[j];
    }
    return n;
}

/* A layer's parameters: weights and biases. */
static inline double dt_dlrm_layer_params(double in, double out)
{
    return in * out + out;
}

/* The bottom MLP's parameters (the first nb of the n layers of
 * dt_dlrm_widths) and the top MLP's, without the cross network: the one
 * sum that the reported counts and the memory model both read. */
static void dt_dlrm_mlp_params(const double *w_in, const double *w_out, int n, int nb,
                               double *bot, double *top)
{
    double b = 0.0, t = 0.0;
    for (int k = 0; k < n; k++) {
        if (k < nb)
            b += dt_dlrm_layer_params(w_in[k], w_out[k]);
        else
            t += dt_dlrm_layer_params(w_in[k], w_out[k]);
    }
    *bot = b;
    *top = t;
}

void detailed_dlrm_params(const model_t *m, double *bot, double *top, double *emb)
{
    double w_in[DT_DLRM_LAYERS], w_out[DT_DLRM_LAYERS], t;
    int nb, n = dt_dlrm_widths(m, w_in, w_out, &nb);
    dt_dlrm_mlp_params(w_in, w_out, n, nb, bot, &t);
    *top = t + dt_dlrm_cross_params(m);
    *emb = dt_dlrm_rows(m) * (double)m->emb_dim;
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
    bad = bad || (m->d.n_tables != 0 && (m->d.n_tables != m->tables ||
                                         m->d.n_tables > MODEL_TABLES_MAX)) ||
          m->d.interaction < MODEL_INTERACTION_DOT ||
          m->d.interaction > MODEL_INTERACTION_DCNV2 ||
          (m->d.interaction == MODEL_INTERACTION_DCNV2 &&
           (m->d.cross_layers < 1 || m->d.cross_layers > MODEL_MLP_MAX ||
            m->d.cross_rank < 1 || m->d.cross_rank > DT_MAX_COUNT));
    /* the listed tables without a branch per table: rows from 1 to
     * DT_MAX_BATCH (a power of two) have rows - 1 below it, as have
     * poolings from 1 (pooling - 1 from 0 to 2^31 - 2); anything else
     * sets a bit from DT_MAX_BATCH's up (a negative: the sign bit) */
    _Static_assert((DT_MAX_BATCH & (DT_MAX_BATCH - 1)) == 0 && DT_MAX_BATCH > INT32_MAX,
                   "DT_MAX_BATCH: a power of two above any pooling");
    uint64_t tab = 0;
    int nt = bad ? 0 : m->d.n_tables;
    for (int i = 0; i < nt; i++)
        tab |= ((uint64_t)m->d.table_rows[i] - 1u) |
               (uint64_t)((int64_t)m->d.table_pooling[i] - 1);
    bad = bad || tab >= (uint64_t)DT_MAX_BATCH;
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
        t->emb_sharding < 0 || t->emb_sharding > TASK_EMB_AUTO ||
        (t->emb_sharding == TASK_EMB_AUTO && m->tables > DT_MAX_TABLES) ||
        !(t->emb_dp_threshold_bytes < 1e15) || isnan(t->emb_dp_threshold_bytes) ||
        !(t->emb_mem_comm_bw_ratio >= 0 && t->emb_mem_comm_bw_ratio <= 1e6) ||
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

/* A GEMM (m x n x k, f = 2 m n k FLOPs at the hardware curve's
 * efficiency eff) as every scenario of the band shares it: its time at
 * the curve's rate and its floor (f at peak, one kernel). A scenario
 * runs it at geff times the curve's rate, never above peak
 * (dt_dlrm_at). */
typedef struct dt_dlrm_gemm {
    double raw, floor;
} dt_dlrm_gemm;

static inline double dt_dlrm_peak(const hw_t *hw, hw_dtype dt)
{
    return hw->peak_flops[dt] > 0 ? hw->peak_flops[dt] : hw->peak_flops[HW_BF16];
}

/* peak: dt_dlrm_peak(hw, dt) */
static inline dt_dlrm_gemm dt_dlrm_gemm_of(const hw_t *hw, hw_dtype dt, double peak, double m,
                                           double n, double k, double f, double eff)
{
    dt_dlrm_gemm g = {hw_gemm_time_eff(hw, dt, m, n, k, 1.0, 1.0, 1.0, eff),
                      f / peak + hw->kernel_overhead_s};
    return g;
}

static inline double dt_dlrm_at(dt_dlrm_gemm g, double geff)
{
    double t = g.raw / geff;
    return t > g.floor ? t : g.floor;
}

/* One MLP layer of `in` x `out` on b samples as the scenarios share it:
 * its forward, data and weight gradient GEMMs (`one`: the three take
 * one time, k of them in the backward), the memory-bound passes around
 * them, parameters, FLOPs. */
typedef struct dt_mlp_layer {
    dt_dlrm_gemm g[3];
    double mem_f, mem_b, params, flops, k;
    bool dgrad, wgrad, one;
} dt_mlp_layer;

/* Do the GEMMs b x out x in, b x in x out and in x out x b take one
 * time? Their FLOPs and bytes (hw_gemm_time_eff) are the same products
 * and sums in other orders, exact (hence equal) for whole numbers whose
 * product is at most 2^51: 2 b in out and the three products' sum then
 * stay below 2^53. The sizes are whole: the local batch divides the
 * global one (dt_dlrm_prep_of), the widths are counts or sums and
 * products of counts of at most DT_MAX_COUNT. */
static bool dt_mlp_one_time(double b, double in, double out)
{
    return b * in * out <= 0x1p51;
}

/* A layer whose forward GEMM (ff = 2 b out in FLOPs) has the curve's
 * efficiency ef; peak: dt_dlrm_peak. */
static inline void dt_mlp_layer_of(const hw_t *hw, hw_dtype dt, double peak, double ab,
                                   double b, double in, double out, bool dgrad, bool wgrad,
                                   double ef, dt_mlp_layer *L)
{
    /* forward, data and weight gradient GEMMs (a GEMM of the FLOPs of
     * one before reads its efficiency) */
    double ff = 2.0 * b * out * in;
    L->g[0] = dt_dlrm_gemm_of(hw, dt, peak, b, out, in, ff, ef);
    L->one = dt_mlp_one_time(b, in, out);
    if (L->one) {
        L->g[1] = L->g[2] = L->g[0];
    } else {
        double fd = 2.0 * b * in * out, fw = 2.0 * in * out * b;
        double ed = fd == ff ? ef : hw_gemm_efficiency_dtype(hw, dt, fd);
        double ew = fw == fd ? ed : fw == ff ? ef : hw_gemm_efficiency_dtype(hw, dt, fw);
        L->g[1] = dt_dlrm_gemm_of(hw, dt, peak, b, in, out, fd, ed);
        L->g[2] = dt_dlrm_gemm_of(hw, dt, peak, in, out, b, fw, ew);
    }
    L->params = dt_dlrm_layer_params(in, out);
    L->mem_f = hw_mem_time(hw, 2.0 * b * out * ab);
    L->mem_b = hw_mem_time(hw, 3.0 * b * out * ab);
    L->k = (double)((int)dgrad + (int)wgrad); /* 1 + k: 1.0 + (0 or 1) + (0 or 1) */
    L->flops = 2.0 * b * in * out * (1.0 + L->k);
    L->dgrad = dgrad;
    L->wgrad = wgrad;
}

/* A layer's forward and backward in a scenario whose GEMMs run at geff
 * times the curve's rate; kernel overhead ov per pass. */
static inline void dt_mlp_times(const dt_mlp_layer *L, double geff, double ov, double *fwd,
                                double *bwd)
{
    double gf = dt_dlrm_at(L->g[0], geff);
    *fwd = gf + L->mem_f + ov;
    *bwd = 0.0;
    if (L->one) { /* k times gf: exactly gf + gf, gf + 0 or 0 + gf */
        if (L->k > 0)
            *bwd = L->k * gf + L->mem_b + ov;
    } else if (L->dgrad || L->wgrad) {
        double gd = dt_dlrm_at(L->g[1], geff), gw = dt_dlrm_at(L->g[2], geff);
        *bwd = (L->dgrad ? gd : 0.0) + (L->wgrad ? gw : 0.0) + L->mem_b + ov;
    }
}

/* The interaction on b samples as the scenarios share it. Dot: the
 * F x F x D batched GEMM and its copies (no scenario's facts: f, bk
 * final); DCNv2: per cross layer V (W to r) and U (r to W) GEMMs and the
 * element-wise x0 * (.) + b + x_l (ew). */
typedef struct dt_dlrm_inter {
    bool dcn, bwd;
    dt_dlrm_gemm g[2];
    double ew, layers, f, bk, flops;
} dt_dlrm_inter;

static void dt_dlrm_inter_of(const model_t *m, const hw_t *hw, hw_dtype dt, double ab,
                             double b, bool bwd, dt_dlrm_inter *x)
{
    double T = (double)m->tables, D = (double)m->emb_dim, F = T + 1.0;
    double ov = hw->kernel_overhead_s;
    x->dcn = m->d.interaction == MODEL_INTERACTION_DCNV2;
    x->bwd = bwd;
    if (x->dcn) {
        double W = F * D, r = (double)m->d.cross_rank, Lc = (double)m->d.cross_layers;
        double f1 = 2.0 * b * r * W, f2 = 2.0 * b * W * r;
        double e1 = hw_gemm_efficiency_dtype(hw, dt, f1);
        double e2 = f2 == f1 ? e1 : hw_gemm_efficiency_dtype(hw, dt, f2);
        double peak = dt_dlrm_peak(hw, dt);
        x->g[0] = dt_dlrm_gemm_of(hw, dt, peak, b, r, W, f1, e1);
        x->g[1] = dt_dlrm_gemm_of(hw, dt, peak, b, W, r, f2, e2);
        x->ew = hw_mem_time(hw, 4.0 * b * W * ab);
        x->layers = Lc;
        x->f = x->bk = 0.0;
        x->flops = Lc * 4.0 * b * W * r * (bwd ? 3.0 : 1.0);
        return;
    }
    /* hw_gemm_time of b F x F x D GEMMs, its roofline inline */
    double ig = hw_gemm_time_eff(hw, dt, F, F, D, b, 1.0, 1.0,
                                 hw_gemm_efficiency_dtype(hw, dt, 2.0 * F * F * D * b));
    double imem = hw_mem_time(hw, b * (2.0 * F * D + F * F + F * (F - 1.0) / 2.0) * ab);
    x->f = ig + imem + ov;
    x->bk = bwd ? 2.0 * (ig + imem) + ov : 0.0;
    x->flops = 2.0 * b * F * F * D * (1.0 + (bwd ? 2.0 : 0.0));
}

/* The interaction's forward and backward in a scenario. */
static inline void dt_dlrm_inter_times(const dt_dlrm_inter *x, double geff, double ov,
                                       double *f, double *bk)
{
    if (!x->dcn) {
        *f = x->f;
        *bk = x->bk;
        return;
    }
    double g = dt_dlrm_at(x->g[0], geff) + dt_dlrm_at(x->g[1], geff);
    *f = x->layers * (g + x->ew + 3.0 * ov);
    *bk = x->bwd ? x->layers * (2.0 * g + 2.0 * x->ew + 5.0 * ov) : 0.0;
}

/* The embedding part of an iteration on the busiest device. */
typedef struct dt_dlrm_embt {
    double lookup, update, ids, pool_f, pool_b, grad_bytes, table_bytes, state_bytes,
        pooled_bytes;
    bool row;
} dt_dlrm_embt;

/* What every sharding's embedding work reads (emb.c dt_emb_work); the
 * planner's placement facts (hot fraction, replication threshold,
 * capacity, exchange) are `auto`'s to set. */
static void dt_dlrm_emb_in(const point_t *p, const task_detailed_t *ts, int64_t n, double B,
                           double eb, double cb, bool emb_train, dt_emb_in *in)
{
    const model_t *m = &p->model;
    memset(in, 0, sizeof *in);
    in->m = m;
    in->hw = &p->system.hw;
    in->topo = &p->system.topo;
    in->devices = n;
    in->per_node = p->system.topo.level[0].span;
    in->batch = B;
    in->dim = (double)m->emb_dim;
    in->eb = eb;
    in->cb = cb;
    in->state_values = dt_dlrm_state_values(ts, (double)m->emb_dim);
    in->mean_pool = (double)m->pooling;
    in->train = emb_train;
}

/* A fixed sharding (table-, row- or column-wise): each device's shards
 * are alike, so its work is one shard's (the planner's model of a
 * table's lookups, gradient scatter and update, dt_emb_work) times
 * their number. */
static void dt_dlrm_emb_fixed(const point_t *p, const task_detailed_t *ts, int64_t n, double B,
                              double b, double eb, double cb, bool emb_train, dt_dlrm_embt *o)
{
    const model_t *m = &p->model;
    const topo_t *topo = &p->system.topo;
    double ov = p->system.hw.kernel_overhead_s, T = (double)m->tables, D = (double)m->emb_dim;
    detailed_dlrm_emb s;
    detailed_dlrm_shard(m, ts, n, B, &s);
    dt_emb_in in;
    dt_dlrm_emb_in(p, ts, n, B, eb, cb, emb_train, &in);
    double fwd = 0.0, work = 0.0;
    if (s.shards > 0) {
        double nl = s.lookups / s.shards;
        work = s.shards * dt_emb_work(&in, s.width, s.rows, nl, s.outputs / s.shards, nl, &fwd);
        fwd *= s.shards;
    }
    double pooled = s.outputs * s.width * cb;
    o->row = ts->emb_sharding == TASK_EMB_ROW;
    o->lookup = fwd + ov;
    o->update = emb_train ? work - fwd + ov : 0.0;
    o->ids = topo_coll_time(topo, TOPO_ALLTOALL, n, 1,
                            T * b * (double)m->pooling * 4.0 * s.id_copies);
    o->pool_f = topo_coll_time(topo, o->row ? TOPO_REDUCESCATTER : TOPO_ALLTOALL, n, 1, pooled);
    /* the backward sends as much back: the same all-to-all, or the
     * all-gather of what the forward reduce-scattered (topo.h: one cost
     * for the two) */
    o->pool_b = emb_train ? o->pool_f : 0.0;
    o->grad_bytes = 0.0;
    o->table_bytes = s.shards * s.rows * s.width * eb;
    o->state_bytes = emb_train ? s.shards * s.rows * s.state_values * 4.0 : 0.0;
    o->pooled_bytes = (s.outputs * s.width + b * T * D) * cb;
}

/* The planner's last answer: the band's three runs differ only in the
 * stack's facts, of which the plan reads the hybrid hot fraction. */
typedef struct dt_emb_memo {
    bool valid;
    double hot, cap;
    dt_emb_plan plan;
} dt_emb_memo;

/* emb_sharding = "auto": the planner of emb.c. */
static void dt_dlrm_emb_auto(const point_t *p, const task_detailed_t *ts, int64_t n, double B,
                             double b, double eb, double cb, bool emb_train, double hot,
                             double cap, dt_dlrm_embt *o, dt_emb_plan *pl, dt_emb_memo *memo)
{
    const model_t *m = &p->model;
    const stack_desc *st = &p->stack;
    dt_emb_in in;
    dt_dlrm_emb_in(p, ts, n, B, eb, cb, emb_train, &in);
    in.hot = hot;
    in.hot_rows = st->emb_hot_rows;
    /* a hybrid embedding replicates frequent rows of every table instead
     * of whole small tables */
    in.dp_threshold = hot > 0                          ? 0.0
                      : ts->emb_dp_threshold_bytes >= 0 ? ts->emb_dp_threshold_bytes
                                                        : st->emb_dp_threshold_bytes;
    in.cap = cap;
    in.hierarchical = st->emb_hierarchical;
    in.split_columns = st->emb_split_columns;
    in.mem_comm_ratio = ts->emb_mem_comm_bw_ratio;
    if (memo->valid && memo->hot == hot && memo->cap == cap) {
        *pl = memo->plan;
    } else {
        dt_emb_plan_run(&in, pl);
        memo->valid = true;
        memo->hot = hot;
        memo->cap = cap;
        memo->plan = *pl;
    }
    double ov = p->system.hw.kernel_overhead_s;
    o->row = false;
    o->lookup = pl->fwd_s + ov;
    o->update = emb_train ? pl->work_s - pl->fwd_s + ov : 0.0;
    o->ids = pl->ids_s;
    o->pool_f = pl->a2a_s;
    o->pool_b = emb_train ? pl->a2a_s : 0.0;
    o->grad_bytes = emb_train ? pl->grad_bytes : 0.0;
    o->table_bytes = pl->table_bytes;
    o->state_bytes = 0.0; /* inside table_bytes */
    o->pooled_bytes = pl->pooled_bytes + b * (double)m->tables * (double)m->emb_dim * cb;
}


#define DT_DLRM_BUCKETS (2 * MODEL_MLP_MAX + 1) /* at most one per layer, and the last */

/* What an evaluation's scenarios share: the batch, the shapes, the
 * memory of the MLPs, the fixed shardings' embedding part (`auto`'s
 * reads the scenario's hot fraction) and, once a scenario fits in
 * memory (`layers`), the MLP layers and the interaction. A batch that
 * does not split (!batch_ok) leaves all but n, dt, ab, gbytes, eb, cb,
 * layers, gb and batch_ok unset. */
typedef struct dt_dlrm_prep {
    const task_detailed_t *ts; /* the task, or ts_table (table-wise) */
    task_detailed_t ts_table;
    int64_t n, gb;
    hw_dtype dt;
    bool batch_ok, training, emb_train, bot_train, top_train, below, layers;
    double ab, gbytes, eb, cb, B, b, wb;
    /* top_p: the top MLP and the cross network (cross_p) */
    double bot_p, top_p, cross_p, mlp_train, grads, opt_mlp, acts, dense_mem;
    dt_dlrm_embt E; /* fixed shardings */
    int nl, nb; /* MLP layers, of which the bottom MLP's first */
    double w_in[DT_DLRM_LAYERS], w_out[DT_DLRM_LAYERS];
    dt_mlp_layer l[DT_DLRM_LAYERS];
    dt_dlrm_inter x;
    double flops, dense_opt;
    /* the gradient buckets' all-reduces of the first scenario that
     * flushed them: bytes, time (a later one of the same bytes reads
     * it); nbk -1: no band, one scenario */
    int nbk;
    double bk_bytes[DT_DLRM_BUCKETS], bk_s[DT_DLRM_BUCKETS];
} dt_dlrm_prep;

static void dt_dlrm_prep_of(const point_t *p, dt_dlrm_prep *P)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const stack_desc *st = &p->stack;
    bool training = p->task.kind != TASK_INFERENCE;
    bool ft = p->task.kind == TASK_FINETUNE;
    int64_t n = t->dp > 0 ? t->dp : 1;
    hw_dtype dt = (hw_dtype)t->dtype;
    double ab = dt == HW_FP32 || dt == HW_TF32 ? 4.0 : 2.0;
    double eb = dt_dlrm_ebytes(m);
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
    P->nl = dt_dlrm_widths(m, P->w_in, P->w_out, &P->nb);
    double bot_p, top_p, acts = b * P->w_in[0] * ab;
    dt_dlrm_mlp_params(P->w_in, P->w_out, P->nl, P->nb, &bot_p, &top_p);
    for (int k = 0; k < P->nl; k++)
        acts += b * P->w_out[k] * ab;
    P->cross_p = dt_dlrm_cross_params(m);
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
        dt_dlrm_emb_fixed(p, P->ts, n, B, b, eb, P->cb, P->emb_train, &P->E);
}

/* The MLP layers and the interaction (dt_dlrm_prep's `layers`). */
static void dt_dlrm_layers_of(const point_t *p, dt_dlrm_prep *P)
{
    const model_t *m = &p->model;
    const hw_t *hw = &p->system.hw;
    double ab = P->ab, b = P->b;
    const double *w_in = P->w_in, *w_out = P->w_out;
    double eff[DT_DLRM_LAYERS];
    int nl = P->nl, nb = P->nb;
    /* the forward GEMMs' efficiencies first, in a loop of their own */
    for (int k = 0; k < nl; k++)
        eff[k] = hw_gemm_efficiency_dtype(hw, P->dt, 2.0 * b * w_out[k] * w_in[k]);
    double flops = 0.0, peak = dt_dlrm_peak(hw, P->dt);
    /* data gradients: none into the dense features, none below a
     * frozen bottom MLP; into the top MLP's input when the interaction
     * needs one, above it when anything below trains */
    bool dg_top0 = P->training && P->below, dg_top = P->training && (P->below || P->top_train);
    for (int k = 0; k < nl; k++) {
        bool dg = k < nb ? P->bot_train && k > 0 : k == nb ? dg_top0 : dg_top;
        bool wg = k < nb ? P->bot_train : P->top_train;
        dt_mlp_layer_of(hw, P->dt, peak, ab, b, w_in[k], w_out[k], dg, wg, eff[k], &P->l[k]);
        flops += P->l[k].flops;
    }
    dt_dlrm_inter_of(m, hw, P->dt, ab, b, P->training && P->below, &P->x);
    P->flops = flops + P->x.flops;
    P->dense_opt = P->training ? hw_mem_time(hw, 30.0 * P->mlp_train) : 0.0;
    P->layers = true;
}

/* The all-reduce of the i-th gradient bucket, of `bytes`: the time an
 * earlier scenario found for the same bytes there, else computed (and
 * kept when it is the first). */
static inline double dt_dlrm_bucket(dt_dlrm_prep *P, const topo_t *topo, int64_t n,
                                    double bytes, bool sharp, int i)
{
    if (P->nbk < 0) /* one scenario */
        return dt_dlrm_allreduce(topo, n, bytes, sharp);
    if (i < P->nbk && P->bk_bytes[i] == bytes)
        return P->bk_s[i];
    double s = dt_dlrm_allreduce(topo, n, bytes, sharp);
    if (i == P->nbk && i < DT_DLRM_BUCKETS) {
        P->bk_bytes[i] = bytes;
        P->bk_s[i] = s;
        P->nbk = i + 1;
    }
    return s;
}

static status_code dt_dlrm_iter(const point_t *p, dt_dlrm_prep *P, engine *e, result_t *r,
                                stack_scenario sc, dt_emb_memo *memo)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const hw_t *hw = &p->system.hw;
    const topo_t *topo = &p->system.topo;
    const stack_desc *st = &p->stack;
    int64_t n = P->n;
    double gbytes = P->gbytes, ov = hw->kernel_overhead_s;
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
    bool bot_train = P->bot_train, top_train = P->top_train;

    /* ---- memory: the MLPs' (shared), the embeddings' */
    dt_dlrm_embt Ea;
    const dt_dlrm_embt *E = &P->E; /* a fixed sharding's */
    r->emb_dp_tables = r->emb_whole_tables = r->emb_split_tables = 0;
    if (P->ts->emb_sharding == TASK_EMB_AUTO) {
        dt_emb_plan pl;
        dt_dlrm_emb_auto(p, P->ts, n, B, P->b, P->eb, P->cb, P->emb_train, hot,
                         hw->mem_capacity_bytes - P->dense_mem, &Ea, &pl, memo);
        E = &Ea;
        r->emb_dp_tables = pl.n_dp;
        r->emb_whole_tables = pl.n_table;
        r->emb_split_tables = pl.n_row;
    }
    double acts = P->acts + E->pooled_bytes, grads = P->grads;
    r->mem_weights_bytes_per_device = P->wb * (P->bot_p + P->top_p) + E->table_bytes;
    r->mem_grads_bytes_per_device = grads;
    r->mem_optimizer_bytes_per_device = P->opt_mlp + E->state_bytes;
    r->mem_activations_bytes_per_device = acts;
    r->mem_total_bytes_per_device = r->mem_weights_bytes_per_device + grads +
                                    r->mem_optimizer_bytes_per_device + acts;
    if (r->mem_total_bytes_per_device > hw->mem_capacity_bytes)
        return STATUS_INFEASIBLE_MEMORY;

    /* ---- MLPs and the interaction at this scenario's GEMM rate */
    if (!P->layers)
        dt_dlrm_layers_of(p, P);
    /* forward and backward of the bottom MLP's layers, then the top's */
    int nb = P->nb, nl = P->nl;
    double lf[DT_DLRM_LAYERS], lb[DT_DLRM_LAYERS];
    double fwd_c = 0.0, bwd_c = 0.0;
    for (int k = 0; k < nl; k++) {
        dt_mlp_times(&P->l[k], geff, ov, &lf[k], &lb[k]);
        fwd_c += lf[k];
        bwd_c += lb[k];
    }
    double inter_f, inter_b;
    dt_dlrm_inter_times(&P->x, geff, ov, &inter_f, &inter_b);
    double flops = P->flops, cross_p = P->cross_p, dense_opt = P->dense_opt;

    /* ---- the iteration on the two streams: ids exchanged, lookups,
     * pooled exchange overlapped with the bottom MLP, interaction, top
     * MLP; backward with per-layer gradient all-reduces on the comm
     * stream, the pooled gradients' exchange, the sparse update. The
     * part of the embedding work the stack pipelines behind the MLPs
     * (emb_overlap) leaves the critical path. */
    double keep = 1.0 - emb_ov;
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
    last = engine_add(e, ENGINE_COMP, inter_f, &ev_pool, 1, lab);
    for (int j = 0; j < m->d.top_n; j++) {
        lab.layer = j;
        last = engine_add(e, ENGINE_COMP, lf[nb + j], NULL, 0, lab);
    }
    /* gradients all-reduced in buckets of at least DT_DLRM_BUCKET bytes
     * (PyTorch DDP's 25 MB), launched as the backward fills them */
    double ar_sum = 0.0, pending = 0.0;
    int fi = 0; /* buckets flushed */
    bool overlap = t->overlap_dp_comm;
#define DT_DLRM_BUCKET 25e6
#define DT_DLRM_FLUSH(force)                                                     \
    do {                                                                         \
        if (pending > 0 && ((force) || pending >= DT_DLRM_BUCKET)) {            \
            double ar = dt_dlrm_bucket(P, topo, n, pending, t->allreduce_sharp, fi++); \
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
            DT_DLRM_FLUSH(false);
        }
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, inter_b, NULL, 0, lab);
        pending += top_train ? cross_p * gbytes : 0.0;
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
            DT_DLRM_FLUSH(i == 0);
        }
#undef DT_DLRM_FLUSH
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
        engine_add(e, ENGINE_COMP, dense_opt, deps, 2, lab);
    }
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
    double peak = dt_dlrm_peak(hw, P->dt);
    r->mfu = flops / (iter * peak);
    return STATUS_OK;
}

status_code dt_run_dlrm(const point_t *p, engine *e, result_t *r)
{
    /* the band: the stack's DLRM facts at their fast, then slow ends
     * (skipped when the stack states them all exactly); the nominal run
     * last, its events left in the engine */
    const stack_desc *st = &p->stack;
    const stack_fact *f[] = {&st->emb_hot_fraction, &st->emb_overlap, &st->step_overhead_s,
                             &st->mlp_efficiency};
    bool ranged = false;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ranged = ranged || f[i]->lo != f[i]->hi;
    double lo = 0.0, hi = 0.0;
    dt_emb_memo memo;
    memo.valid = false;
    dt_dlrm_prep P; /* what the scenarios share */
    dt_dlrm_prep_of(p, &P);
    P.nbk = ranged ? 0 : -1;
    if (ranged) {
        result_t band = *r;
        if (dt_dlrm_iter(p, &P, e, &band, STACK_FAST, &memo) == STATUS_OK)
            lo = band.iteration_time_s;
        band = *r;
        if (dt_dlrm_iter(p, &P, e, &band, STACK_SLOW, &memo) == STATUS_OK)
            hi = band.iteration_time_s;
    }
    status_code rc = dt_dlrm_iter(p, &P, e, r, STACK_NOMINAL, &memo);
    if (rc != STATUS_OK)
        return rc;
    r->iteration_time_lo_s = ranged ? lo : r->iteration_time_s;
    r->iteration_time_hi_s = ranged ? hi : r->iteration_time_s;
    return STATUS_OK;
}
