/*
 * dlrm.h - the DLRM family of the detailed fidelity (private to
 * cost/detailed/): MLPs data parallel, embedding tables sharded, one file
 * per part:
 *   shape.c     what a DLRM holds: MLP widths, parameters, the shards of
 *               a fixed sharding (detailed.h's detailed_dlrm_*)
 *   mlp.c       the MLP layers and the interaction (dot or DCNv2) as
 *               GEMMs and memory-bound passes, placed once per evaluation
 *   emb.c       an embedding's work (lookups, pooling, gradient scatter,
 *               sparse optimizer), small all-reduces as NCCL runs them,
 *               and the embedding part of an iteration (fixed shardings,
 *               or the planner's)
 *   emb_plan.c  the per-table planner (emb_sharding = "auto")
 *   dlrm.c      the iteration on the two-stream engine, its figures, and
 *               the family the top runs
 * It stands on core/ only and calls no other family. Invariant: what the
 * band's scenarios share (shapes, memory of the MLPs, the layers' GEMMs,
 * a fixed sharding's embedding part) is computed once; a scenario applies
 * the stack's DLRM facts to it with the same operations as costing it
 * whole.
 */
#ifndef MADSWEEP_DT_DLRM_H
#define MADSWEEP_DT_DLRM_H

#include "../core/core.h"

/* ---- what a DLRM holds (shape.c) */

/* MLP layers of a DLRM: the bottom MLP's, then the top's. */
#define DLRM_LAYERS (2 * MODEL_MLP_MAX)

/* fp32 optimizer values per row of `width` elements (the task's
 * embedding optimizer). */
double dlrm_shape_state_values(const task_detailed_t *t, double width);
/* Bytes per embedding parameter (4 when the model does not say). */
double dlrm_shape_emb_bytes(const model_t *m);
/* Parameters of the DCNv2 cross network (0 for the dot interaction). */
double dlrm_shape_cross_params(const model_t *m);
/* The MLP layers' input and output widths, the bottom MLP's first (*nb
 * of them), then the top's; returns the count. */
int dlrm_shape_widths(const model_t *m, double *w_in, double *w_out, int *nb);
/* The bottom MLP's parameters (the first nb of the n layers of
 * dlrm_shape_widths) and the top MLP's, without the cross network: the one
 * sum that the reported counts and the memory model both read. */
void dlrm_shape_mlp_params(const double *w_in, const double *w_out, int n, int nb, double *bot,
                           double *top);

/* A layer's parameters: weights and biases. */
static inline double dlrm_shape_layer_params(double in, double out)
{
    return in * out + out;
}

/* ---- MLPs and the interaction (mlp.c) */

/* A GEMM (m x n x k, f = 2 m n k FLOPs at the hardware curve's
 * efficiency eff) as every scenario of the band shares it: its time at
 * the curve's rate and its floor (f at peak, one kernel). A scenario
 * runs it at geff times the curve's rate, never above peak
 * (dlrm_mlp_gemm_at). */
typedef struct dlrm_mlp_gemm {
    double raw, floor;
} dlrm_mlp_gemm;

static inline double dlrm_mlp_peak(const hw_t *hw, hw_dtype dt)
{
    return hw->peak_flops[dt] > 0 ? hw->peak_flops[dt] : hw->peak_flops[HW_BF16];
}

/* A GEMM of m x n x k (f FLOPs at the curve's efficiency eff); peak:
 * dlrm_mlp_peak(hw, dt). */
dlrm_mlp_gemm dlrm_mlp_gemm_of(const hw_t *hw, hw_dtype dt, double peak, double m, double n,
                               double k, double f, double eff);

static inline double dlrm_mlp_gemm_at(dlrm_mlp_gemm g, double geff)
{
    double t = g.raw / geff;
    return t > g.floor ? t : g.floor;
}

/* One MLP layer of `in` x `out` on b samples as the scenarios share it:
 * its forward, data and weight gradient GEMMs (`one`: the three take
 * one time, k of them in the backward), the memory-bound passes around
 * them, parameters, FLOPs. */
typedef struct dlrm_mlp_layer {
    dlrm_mlp_gemm g[3];
    double mem_f, mem_b, params, flops, k;
    bool dgrad, wgrad, one;
} dlrm_mlp_layer;

/* A layer whose forward GEMM (2 b out in FLOPs) has the curve's
 * efficiency ef; peak: dlrm_mlp_peak. */
void dlrm_mlp_layer_of(const hw_t *hw, hw_dtype dt, double peak, double ab, double b, double in,
                       double out, bool dgrad, bool wgrad, double ef, dlrm_mlp_layer *L);

/* A layer's forward and backward in a scenario whose GEMMs run at geff
 * times the curve's rate; kernel overhead ov per pass. */
static inline void dlrm_mlp_times(const dlrm_mlp_layer *L, double geff, double ov, double *fwd,
                                  double *bwd)
{
    double gf = dlrm_mlp_gemm_at(L->g[0], geff);
    *fwd = gf + L->mem_f + ov;
    *bwd = 0.0;
    if (L->one) { /* k times gf: exactly gf + gf, gf + 0 or 0 + gf */
        if (L->k > 0)
            *bwd = L->k * gf + L->mem_b + ov;
    } else if (L->dgrad || L->wgrad) {
        double gd = dlrm_mlp_gemm_at(L->g[1], geff), gw = dlrm_mlp_gemm_at(L->g[2], geff);
        *bwd = (L->dgrad ? gd : 0.0) + (L->wgrad ? gw : 0.0) + L->mem_b + ov;
    }
}

/* The interaction on b samples as the scenarios share it. Dot: the
 * F x F x D batched GEMM and its copies (no scenario's facts: f, bk
 * final); DCNv2: per cross layer V (W to r) and U (r to W) GEMMs and the
 * element-wise x0 * (.) + b + x_l (ew). */
typedef struct dlrm_mlp_inter {
    bool dcn, bwd;
    dlrm_mlp_gemm g[2];
    double ew, layers, f, bk, flops;
} dlrm_mlp_inter;

/* The interaction on b samples (bwd: with its backward). */
void dlrm_mlp_inter_of(const model_t *m, const hw_t *hw, hw_dtype dt, double ab, double b, bool bwd,
                       dlrm_mlp_inter *x);

/* The interaction's forward and backward in a scenario. */
static inline void dlrm_mlp_inter_times(const dlrm_mlp_inter *x, double geff, double ov, double *f,
                                        double *bk)
{
    if (!x->dcn) {
        *f = x->f;
        *bk = x->bk;
        return;
    }
    double g = dlrm_mlp_gemm_at(x->g[0], geff) + dlrm_mlp_gemm_at(x->g[1], geff);
    *f = x->layers * (g + x->ew + 3.0 * ov);
    *bk = x->bwd ? x->layers * (2.0 * g + 2.0 * x->ew + 5.0 * ov) : 0.0;
}

/* ---- embeddings (emb.c) and the planner (emb_plan.c) */

#define EMB_MAX_TABLES 1024   /* tables the planner places one by one */
#define EMB_NODE_MAX 128  /* devices per node it balances */
#define EMB_NODES_MAX 1024 /* nodes it assigns tables to */

/* What an embedding's work and the planner read. */
typedef struct emb_in {
    const model_t *m;
    const hw_t *hw;
    const topo_t *topo;
    int64_t devices, per_node;
    double batch;         /* global samples per iteration */
    double dim, eb, cb;   /* emb_dim, table bytes, bytes on the wire */
    double state_values;  /* optimizer values per row (fp32) */
    double hot, hot_rows; /* hybrid embedding: lookup fraction, rows */
    double dp_threshold;  /* replicated tables up to these bytes (0: none) */
    double cap;           /* device memory for tables and states */
    double mean_pool;     /* lookups per table per sample (mean) */
    bool train, hierarchical;
    bool split_columns;   /* split tables by columns (no partial sums) */
    double mem_comm_ratio; /* hier planner's HBM / network ratio (0: the hardware's) */
} emb_in;

/* The planner's placement: the busiest device's figures. */
typedef struct emb_plan {
    double work_s;        /* busiest device: lookups, pooling, update */
    double fwd_s;         /* its forward part (lookups, pooling) */
    double a2a_s;         /* one pooled exchange (forward; backward the same) */
    double ids_s;         /* ids to the model-parallel tables */
    double grad_bytes;    /* replicated rows' gradients all-reduced */
    double table_bytes;   /* busiest device: tables and their states */
    double pooled_bytes;  /* pooled vectors per device */
    double imbalance;     /* busiest device / mean */
    int n_dp, n_table, n_row, n_mp, split_per_node;
} emb_plan;

/* Work (s) of `n` lookups on one table (or shard) of `rows` rows, `w`
 * wide, for `bsz` samples on one device: gathers and pooled writes (the
 * forward part also added to *fwd), in training the gradient scatter and
 * the optimizer's read-modify-write of the rows that `nu` lookups touch
 * (n for the device's own; a replicated table's replicas update the rows
 * of the whole batch's lookups, once, after the all-reduce). The one
 * model of an embedding's work: the planner's and the fixed shardings'. */
double emb_work(const emb_in *in, double w, double rows, double n, double bsz, double nu,
                double *fwd);
/* A ring reduce-scatter of `bytes` over the g devices of a node (level
 * l0). */
double emb_node_rs(const topo_level *l0, int64_t g, double bytes);
/* A small all-reduce as NCCL runs it (the MLP gradients' buckets and the
 * replicated rows'): the algorithm NCCL picks for its size, or with
 * in-network reduction (sharp) reduce-scatter in the node, the switches'
 * reduction across nodes, all-gather in the node. */
double emb_allreduce(const topo_t *topo, int64_t n, double bytes, bool sharp);

/* The planner: every table placed (replicated, whole, split). */
void emb_plan_run(const emb_in *in, emb_plan *out);

/* The embedding part of an iteration on the busiest device. */
typedef struct emb_part {
    double lookup, update, ids, pool_f, pool_b, grad_bytes, table_bytes, state_bytes,
        pooled_bytes;
    bool row;
} emb_part;

/* The planner's last answer: the band's three runs differ only in the
 * stack's facts, of which the plan reads the hybrid hot fraction. */
typedef struct emb_memo {
    bool valid;
    double hot, cap;
    emb_plan plan;
} emb_memo;

/* A fixed sharding's (table-, row- or column-wise) embedding part of an
 * iteration (n devices, global batch B, b per device; eb, cb: table and
 * wire bytes). */
void emb_fixed(const point_t *p, const task_detailed_t *ts, int64_t n, double B, double b,
               double eb, double cb, bool emb_train, emb_part *o);
/* emb_sharding = "auto": the planner's (hot: the scenario's hybrid
 * fraction; cap: device memory left for the tables), its plan in *pl,
 * reused from memo when the scenario's hot fraction and capacity are the
 * last plan's. */
void emb_auto(const point_t *p, const task_detailed_t *ts, int64_t n, double B, double b, double eb,
              double cb, bool emb_train, double hot, double cap, emb_part *o, emb_plan *pl,
              emb_memo *memo);

/* ---- the iteration (dlrm.c) */

#define DLRM_BUCKETS (2 * MODEL_MLP_MAX + 1) /* at most one per layer, and the last */

/* What an evaluation's scenarios share: the batch, the shapes, the
 * memory of the MLPs, the fixed shardings' embedding part (`auto`'s
 * reads the scenario's hot fraction) and, once a scenario fits in
 * memory (`layers`), the MLP layers and the interaction. A batch that
 * does not split (!batch_ok) leaves all but n, dt, ab, gbytes, eb, cb,
 * layers, gb and batch_ok unset. */
typedef struct dlrm_prep {
    const task_detailed_t *ts; /* the task, or ts_table (table-wise) */
    task_detailed_t ts_table;
    int64_t n, gb;
    hw_dtype dt;
    bool batch_ok, training, emb_train, bot_train, top_train, below, layers;
    double ab, gbytes, eb, cb, B, b, wb;
    /* top_p: the top MLP and the cross network (cross_p) */
    double bot_p, top_p, cross_p, mlp_train, grads, opt_mlp, acts, dense_mem;
    emb_part E; /* fixed shardings */
    int nl, nb; /* MLP layers, of which the bottom MLP's first */
    double w_in[DLRM_LAYERS], w_out[DLRM_LAYERS];
    dlrm_mlp_layer l[DLRM_LAYERS];
    dlrm_mlp_inter x;
    double flops, dense_opt;
    /* the gradient buckets' all-reduces of the first scenario that
     * flushed them: bytes, time (a later one of the same bytes reads
     * it); nbk -1: no band, one scenario */
    int nbk;
    double bk_bytes[DLRM_BUCKETS], bk_s[DLRM_BUCKETS];
} dlrm_prep;

/* A DLRM evaluation: the point, what its scenarios share, the planner's
 * last plan, whether the stack's DLRM facts have ranges (no band
 * otherwise). */
typedef struct dlrm_eval {
    const point_t *p;
    dlrm_prep P;
    emb_memo memo;
    bool ranged;
} dlrm_eval;

extern const dt_family dlrm_family;

#endif
