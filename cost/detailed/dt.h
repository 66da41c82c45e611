/*
 * dt.h - what the files of the detailed fidelity share (private to
 * cost/detailed/; the public interface is cost/detailed.h).
 *
 * The fidelity is split by mechanism, one file each:
 *   fidelity.c  the registry entry: rules (check), resolved degrees, run
 *   params.c    parameters and FLOPs of a model (what is counted as work)
 *   layer.c     work of one transformer layer per micro-batch: GEMMs,
 *               attention core, memory-bound kernels, and the
 *               communication its parallel degrees imply
 *   memory.c    activation bytes and the frozen-layer bookkeeping
 *   train.c     the training iteration: stages, schedule, gradient
 *               reduction on the two-stream engine, figures
 *   dlrm.c      DLRM (embeddings sharded, MLPs data parallel)
 *   auto.c      the `auto` candidate strategies of sweeps
 *   names.c     enum names and strategy texts
 * Invariants: every function is a pure function of its inputs (no
 * globals, no allocation but the caller's engine); a dt_ctx is built once
 * per evaluation by dt_run_llm and read-only afterwards.
 */
#ifndef MADSWEEP_DT_H
#define MADSWEEP_DT_H

#include <stdbool.h>
#include <stdint.h>

#include "../detailed.h"

/* Dimensions of a layout, as indices of dt_ctx.stride. */
enum { DT_TP = 0, DT_CP = 1, DT_DP = 2, DT_PP = 3 };

/* Backward of a layer in fine-tuning: trained (data and weight
 * gradients), frozen under something trained (data gradients only), or
 * frozen with nothing trained below it (no backward at all). */
enum { DT_TRAIN = 0, DT_DGRAD = 1, DT_NOBWD = 2 };

/* Resolved degrees and batches of a task (defaults applied). */
typedef struct dt_deg {
    int64_t tp, pp, dp, cp, ep, v, mb, ga, gb, zero;
    double cf;
} dt_deg;

/* Cost of one transformer layer per device and micro-batch. */
typedef struct dt_layer {
    double fwd, bwd;        /* per micro-batch, incl. recomputation */
    double comp_fwd, comp_bwd;
    double tp_comm, a2a, cp_comm; /* per pass */
    double grad_sync;       /* ZeRO 0-2: this layer's gradient collective */
    double zero3_ag, zero3_rs;
    /* ZeRO 3 with overlap: what the one-layer-ahead prefetch cannot hide
     * at the ends of each chain (first layer's all-gather of a forward,
     * of a backward; last reduce-scatter of the iteration) */
    double z3_fhead, z3_bhead, z3_tail;
    double params;          /* per device */
} dt_layer;

/* One evaluation's resolved inputs. */
typedef struct dt_ctx {
    const point_t *p;
    const model_t *m;
    const task_detailed_t *t;
    const hw_t *hw;
    const topo_t *topo;
    dt_deg d;
    hw_dtype dt;
    double ab;     /* activation bytes */
    double gbytes; /* gradient bytes reduced */
    double tok;    /* tokens per device per micro-batch */
    double seq;    /* sequence (training) or prompt (inference) per cp rank */
    double kv_len; /* keys each query attends over: the whole sequence */
    int64_t stride[4];   /* per dimension (DT_TP...): devices between members */
    int64_t s_dpcp;      /* stride of the dp x cp group */
    int64_t zs;          /* ZeRO shard group size (hybrid sharding) */
    int64_t dpcp;
} dt_ctx;

static inline double dt_coll(const dt_ctx *c, topo_coll k, int64_t n, int64_t stride,
                             double bytes)
{
    return topo_coll_time(c->topo, k, n, stride, bytes);
}

static inline double dt_gemm(const dt_ctx *c, double m, double n, double k, double batch)
{
    return hw_gemm_time(c->hw, c->dt, m, n, k, batch);
}

/* ---- model shape (params.c) */

/* Parameters of one layer's attention (QKV with kv heads, output). */
static inline double dt_attn_params(const model_t *m)
{
    double h = (double)m->hidden, dh = h / (double)m->heads;
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    return h * (h + 2.0 * kv * dh) + h * h;
}

/* Weight matrices of the MLP: GeLU 2, SwiGLU 3. */
static inline double dt_mlp_mats(const model_t *m)
{
    return m->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0;
}

static inline int64_t dt_top_k(const model_t *m)
{
    return m->d.top_k > 0 ? m->d.top_k : 2;
}

static inline double dt_expert_ffn(const model_t *m)
{
    return (double)(m->d.expert_ffn > 0 ? m->d.expert_ffn : m->ffn);
}

/* MoE layers of the model (those from dense_layers on). */
static inline double dt_moe_layers(const model_t *m)
{
    if (m->d.experts <= 0)
        return 0.0;
    int64_t n = m->layers - m->d.dense_layers;
    return n > 0 ? (double)n : 0.0;
}

/* ---- across files */

void dt_degrees(const point_t *p, dt_deg *d);
/* Permutation `code` (0..23) of (tp, cp, dp, pp), innermost first. */
void dt_perm(int code, int order[4]);
void dt_layer_cost(const dt_ctx *c, bool moe, bool training, int mode, dt_layer *L);
double dt_act_bytes(const dt_ctx *c, task_recompute rc);
void dt_frozen_in(int64_t lo, int64_t hi, int64_t frozen, int64_t moe_from, double *fd,
                  double *fm);
status_code dt_run_llm(const point_t *p, engine *e, result_t *r);
status_code dt_check_dlrm(const point_t *p, const char **where);
status_code dt_run_dlrm(const point_t *p, engine *e, result_t *r);
int64_t dt_auto_count(void);
status_code dt_auto_apply(point_t *p, int64_t i, int64_t global_batch);
const char *dt_sharding_name(int s);
const char *dt_emb_opt_name(int o);

#endif
