/*
 * llm.h - the mechanisms of the detailed fidelity that the transformer
 * families (train/, serve/) share (private to cost/detailed/), one file
 * each:
 *   gemm.c       a GEMM placed once (FLOPs, table efficiency, HBM bytes)
 *                and timed under a scenario's facts
 *   membound.c   memory-bound kernel groups (element-wise passes, launch
 *                floors)
 *   layer.c      the work of one transformer layer per micro-batch
 *   comm.c       what a layer's parallel degrees communicate, and what of
 *                it stays exposed
 *   pipeline.c   the stage split, the stages' layers, micro-batches in
 *                flight, the schedule's time
 *   kv.c         the KV cache of a serving replica and its concurrency
 *   memory.c     memory per device of the busiest stage, recompute =
 *                auto
 *   breakdown.c  exposed communication by parallel dimension and tier
 *   setup.c      an evaluation's resolved inputs: context, split,
 *                stages, memory (dt_eval)
 * They stand on core/ only. Invariants: pure functions of the context
 * (core.h) and their arguments; what no scenario's facts move is placed
 * once per evaluation in its memo (dt_memo) and each scenario applies its
 * facts to it with the same operations as costing it whole, so that the
 * band's runs repeat no lookup and every figure stays bit for bit.
 */
#ifndef MADSWEEP_DT_LLM_H
#define MADSWEEP_DT_LLM_H

#include "../core/core.h"

/* ---- GEMMs (gemm.c) */

/* A GEMM as far as no scenario's facts move its time (dt_gemm_place):
 * its FLOPs, its dtype's peak and the table's efficiency for its size,
 * the HBM time of its operands and of its weight gradient's reads and
 * accumulation (before the scenario's bandwidth multiplier), its launch
 * overheads, and for the FP8/FP4 casts its problems and the elements of
 * its inputs (m k + k n). A scenario's time is dt_gemm_at's: the same
 * operations as costing it whole. */
typedef struct dt_gemm_placed {
    double flops, peak, eff, tm, tw, kern, batch, cin;
    bool narrow;
} dt_gemm_placed;

/* A GEMM of m x k by k x n, `batch` of them, in the compute dtype (FP8
 * and FP4 GEMMs with their cast overhead when `lowp` and the compute
 * dtype is FP8 or FP4; others in BF16; `grouped`: one kernel per problem,
 * at one problem's efficiency), placed; its time, and with `wgrad` its
 * weight gradient's, under the context's facts. */
void dt_gemm_place(const dt_ctx *c, double m, double n, double k, double batch, bool lowp,
                   bool grouped, dt_gemm_placed *g);
double dt_gemm_at(const dt_ctx *c, const dt_gemm_placed *g, double *wgrad);

/* ---- memory-bound kernels (membound.c) */

/* Time of a memory-bound kernel group moving `bytes` in `kernels`
 * launches (the stack's pass factor and launch floor applied). */
double dt_membound_time(const dt_ctx *c, double bytes, double kernels);

/* ---- one transformer layer (layer.c) */

/* Backward of a layer in fine-tuning: trained (data and weight
 * gradients), frozen under something trained (data gradients only), or
 * frozen with nothing trained below it (no backward at all). */
enum { DT_TRAIN = 0, DT_DGRAD = 1, DT_NOBWD = 2 };

/* Cost of one transformer layer per device and micro-batch: compute
 * (layer.c), communication and wall times (comm.c). */
typedef struct dt_layer {
    double comp_fwd, comp_bwd;  /* compute; bwd includes recomputation */
    double gemm_f, gemm_b;      /* their GEMM parts (what TP overlap hides behind) */
    double attn_f, attn_b;      /* attention core */
    double recomp;              /* recomputation inside comp_bwd */
    double mem_f, mem_b;        /* memory-bound kernels inside comp_fwd, comp_bwd */
    double tp_exp, cp_exp;      /* exposed TP and CP communication, fwd + bwd */
    double tp_comm, a2a, cp_comm; /* per pass */
    double grad_sync;           /* ZeRO 0-2: this layer's gradient collective */
    double zero3_ag, zero3_agb, zero3_rs; /* ZeRO 3 per micro-batch: gathers fwd, bwd; RS */
    double fwd, bwd;            /* wall time per micro-batch with exposed communication */
    /* ZeRO 3 with overlap: what the prefetch cannot hide at the ends of
     * each chain (first gather of a forward, of a backward; last
     * reduce-scatter of the iteration) */
    double z3_fhead, z3_bhead, z3_tail;
    double params;              /* per device */
} dt_layer;

/* One transformer layer's work as far as no scenario's facts move it
 * (once per evaluation and micro-batch): its GEMMs in the order their
 * times are summed (pair[i]: GEMM i and i + 1, an MLP's two, are added
 * together first), its parameters per device and MLP activation columns,
 * the attention core (fused: its FLOPs and the peak times the kernels'
 * efficiency; unfused: its two batched GEMMs and the HBM time of its
 * score kernels, forward and backward), and the bytes and launches of
 * its memory-bound kernels (the norms, activation, RoPE and q/k norms;
 * the MoE permutation; selective recomputation's norms and activation). */
#define DT_LAYER_GEMMS 12
typedef struct dt_layer_plan {
    int n;
    dt_gemm_placed g[DT_LAYER_GEMMS];
    bool pair[DT_LAYER_GEMMS];
    double params, act_cols;
    double attn_fl, attn_pe;
    dt_gemm_placed ua[2];
    double ua_mf, ua_mb;
    double elem_bytes, elem_kern, permute, na_bytes;
} dt_layer_plan;

/* Kinds of layer a plan is built for: bit DT_L_MOE a MoE layer (else
 * dense), bit DT_L_ALT one of the model's second attention kind (sliding
 * window or Gated DeltaNet; else full attention). A bool `moe` is the
 * full-attention kind of its MLP. */
enum { DT_L_MOE = 1, DT_L_ALT = 2, DT_L_KINDS = 4 };

/* The compute of a layer of kind `kind` (DT_L_*) in mode `mode`
 * (DT_TRAIN ...) into L. */
void dt_layer_cost(const dt_ctx *c, int kind, bool training, int mode, dt_layer *L);

/* ---- the evaluation's memo (dt_ctx.memo) */

/* What this evaluation has already worked out that the band's scenarios
 * repeat: GEMM efficiencies looked up (FLOPs and dtype -> efficiency;
 * gemm.c), the layer plans of a dense and a MoE layer for the
 * micro-batch of plan_mb sequences (0: none yet; layer.c), and the GEMMs
 * of the output head and of multi-token prediction's projection for the
 * micro-batch of ends_mb sequences (0: none yet; train/emb_head.c). */
#define DT_MEMO_EFFS 24
typedef struct dt_memo {
    int n;
    double flops[DT_MEMO_EFFS], eff[DT_MEMO_EFFS];
    int dtype[DT_MEMO_EFFS];
    int64_t plan_mb[DT_L_KINDS];
    dt_layer_plan lp[DT_L_KINDS];
    int64_t ends_mb;
    dt_gemm_placed head, mtp; /* the output head's GEMM, an MTP module's projection */
} dt_memo;

/* ---- communication of a layer (comm.c) */

/* The communication of a layer of kind `kind` (DT_L_*) whose compute is
 * in L, and L's wall times with what of it stays exposed. */
void dt_comm_layer(const dt_ctx *c, int kind, bool training, int mode, dt_layer *L);

/* ---- pipeline (pipeline.c) */

/* Stage split: units per chunk q (+1 for the first r), embedding and
 * head weights e and l in units of layers. */
typedef struct dt_split {
    int64_t chunks, q, r, e, l;
} dt_split;

/* What a pipeline stage holds (once per evaluation): its layers by type
 * (DT_DENSE, DT_MOE and their frozen variants, each again (+ DT_ALT)
 * for layers of the model's second attention kind), the types of the
 * first and last layer of each of its chunks (where ZeRO 3's gather
 * chains start), and the chunk boundaries it sends across per
 * micro-batch and pass. At most DT_MAX_STAGES stages (setup.c). */
enum { DT_DENSE = 0, DT_MOE = 1, DT_FDENSE = 2, DT_FMOE = 3, DT_ALT = 4, DT_TYPES = 8 };

/* The layer kind (DT_L_*) of type t, and its parameters per device. */
static inline int dt_type_kind(int t)
{
    return (t & 1) | ((t & DT_ALT) ? DT_L_ALT : 0);
}
static inline double dt_type_params(const dt_ctx *c, int t)
{
    return c->lp[dt_type_kind(t)];
}
#define DT_MAX_STAGES 512
typedef struct dt_stage {
    int32_t n[DT_TYPES], first[DT_TYPES], last[DT_TYPES];
    int32_t sends;
} dt_stage;
typedef struct dt_stages {
    int64_t count;
    int types;   /* types in use: 1 (one kind of layer), 2 (dense and MoE), 4
                    (and frozen), 8 (and two attention kinds) */
    int uniform; /* with one kind: DT_DENSE or DT_MOE (+ DT_ALT) */
    dt_stage s[DT_MAX_STAGES];
    /* same[s] (s >= 1): stage s holds what stage s - 1 does (layers of
     * the types in use, chunk ends, sends), found once per split: every
     * scenario's schedule and tails read it */
    bool same[DT_MAX_STAGES];
} dt_stages;

void dt_pipe_split_init(const dt_ctx *c, dt_split *sp);
bool dt_pipe_split_ok(const dt_ctx *c, const dt_split *sp);
/* Layers [lo, hi) of chunk k. */
void dt_pipe_chunk_range(const dt_ctx *c, const dt_split *sp, int64_t k, int64_t *lo, int64_t *hi);
/* Type of layer i (DT_DENSE ...). */
int dt_pipe_layer_type(const dt_ctx *c, int64_t i);
void dt_pipe_stages_build(const dt_ctx *c, const dt_split *sp, dt_stages *st);
/* Micro-batches stage s holds in flight (never more for a later stage:
 * dt_mem_busiest skips middle stages like the one before them). */
double dt_pipe_inflight(const dt_ctx *c, int64_t s);
/* The schedule's time: m micro-batches at the slowest stage's tmax, the
 * others' fill and drain (tsum - tmax) over the v chunks a stage runs. */
double dt_pipe_schedule_time(double tmax, double tsum, double m, double v);
/* Layers of a stage of MoE (moe) or dense MLPs, frozen or not, of
 * either attention kind; and those of the second kind. */
static inline int32_t dt_stage_layers(const dt_stage *g, bool moe)
{
    int b = moe ? DT_MOE : DT_DENSE;
    return g->n[b] + g->n[b + 2] + g->n[b + DT_ALT] + g->n[b + 2 + DT_ALT];
}
static inline int32_t dt_stage_alt(const dt_stage *g)
{
    return g->n[DT_ALT] + g->n[DT_ALT + 1] + g->n[DT_ALT + 2] + g->n[DT_ALT + 3];
}

/* ---- the KV cache of a serving replica (kv.c) */

typedef struct dt_kv {
    double weights, acts, reserve; /* bytes per device, busiest stage */
    double pool;                   /* bytes for the KV cache per device */
    double seq_bytes;              /* pool bytes one request costs (blocks, admission rule,
                                      the engine's rule for hybrid models) */
    double tok_bytes;              /* KV bytes per token on the busiest stage's device (full
                                      and sliding-window layers) */
    double state_bytes;            /* linear-attention state of one request on that device */
    int64_t cmax;                  /* requests one replica admits (KV and max_seqs) */
} dt_kv;

/* The KV-cache capacity of one replica (`reserve`: a request reserves
 * its whole length on admission). */
void dt_kv_init(const dt_ctx *c, const dt_stages *st, bool reserve, dt_kv *kv);
/* The replica's KV capacity under the task's scheduler (static batches
 * reserve their whole length); false when not even one request (or, for
 * a static batch, not the whole batch) fits. */
bool dt_kv_fits(const dt_ctx *c, const dt_stages *st, dt_kv *kv);

/* The KV cache's dtype: the task's kv_precision, else the engine's
 * "auto" (docs/serving.md, "KV cache dtype"): FP8 when the engine takes
 * the checkpoint's KV scheme (stack kv_checkpoint: TensorRT-LLM reads
 * kv_cache_quant_algo, which ModelOpt's FP8 and NVFP4 checkpoints set to
 * FP8) and the stored weights are FP8 or FP4 (an FP4 point is taken as
 * an NVFP4 ModelOpt checkpoint); else the activations' dtype (vLLM and
 * SGLang "auto": the model dtype, BF16 under FP8, INT8 and FP4 weights).
 * Never FP4: no engine holds its KV in FP4 by default. */
static inline hw_dtype dt_kv_dtype(const dt_ctx *c)
{
    if (c->t->kv_dtype > 0)
        return (hw_dtype)(c->t->kv_dtype - 1);
    int w = c->t->weight_dtype;
    bool q = w == TASK_W_FP8 || w == TASK_W_FP4 ||
             (w == TASK_W_SAME && (c->dt == HW_FP8 || c->dt == HW_FP4));
    if (c->st->kv_checkpoint && q)
        return HW_FP8;
    return c->dt == HW_FP32 || c->dt == HW_TF32 || c->dt == HW_BF16 ? c->dt : HW_BF16;
}

/* The share of its output a running request holds on average, over
 * the running set: 1/2 for fixed lengths; with outputs uniform on
 * [0, 2 OSL] long requests stay longer (length-biased): E[O^2] / (2 E[O]
 * OSL) = 2/3. */
static inline double dt_kv_grown(const dt_ctx *c)
{
    return c->t->uniform_lengths ? 2.0 / 3.0 : 0.5;
}

/* Attention data parallelism (task attn_dp): its ranks (1: none);
 * attention runs at tensor parallelism tp / ranks. */
static inline double dt_kv_attn_dp(const dt_ctx *c)
{
    return c->t->attn_dp > 1 ? (double)c->t->attn_dp : 1.0;
}

/* The engine's token budget per step and batch limit per attention
 * rank: the task's (the launch's max_num_batched_tokens / max_num_tokens
 * / chunked_prefill_size, max_num_seqs / max_batch_size /
 * max_running_requests), else the stack's defaults. */
static inline double dt_kv_budget(const dt_ctx *c)
{
    if (c->t->token_budget > 0)
        return (double)c->t->token_budget;
    const stack_tier *t = stack_tier_at(c->st, c->hw->mem_capacity_bytes);
    return (double)(t && t->token_budget > 0 ? t->token_budget : c->st->token_budget);
}
static inline double dt_kv_max_seqs(const dt_ctx *c)
{
    if (c->t->max_seqs > 0)
        return (double)c->t->max_seqs;
    const stack_tier *t = stack_tier_at(c->st, c->hw->mem_capacity_bytes);
    return (double)(t && t->max_seqs > 0 ? t->max_seqs : c->st->max_seqs);
}
/* The largest decode batch per rank a CUDA graph holds (0: every one). */
static inline double dt_kv_graph_max(const dt_ctx *c)
{
    const stack_tier *t = stack_tier_at(c->st, c->hw->mem_capacity_bytes);
    return (double)(t && t->cuda_graph_max > 0 ? t->cuda_graph_max : c->st->cuda_graph_max);
}

/* Bytes per stored weight when serving: the task's weight_precision,
 * else the compute dtype's. */
static inline double dt_kv_bytes_per_weight(const dt_ctx *c)
{
    double b = task_weight_bytes(c->t->weight_dtype);
    return b > 0.0 ? b : hw_dtype_bytes(c->dt);
}

/* ... of a part the model keeps in precision w (TASK_W_*; 0: as the
 * rest, dt_kv_bytes_per_weight). */
static inline double dt_kv_part_bytes(const dt_ctx *c, int w)
{
    double b = task_weight_bytes(w);
    return b > 0.0 ? b : dt_kv_bytes_per_weight(c);
}

/* ---- memory (memory.c) */

/* Memory of the busiest stage; inference: the replica's KV capacity too,
 * and whether it admits the task (dt_kv_fits; no uncertain fact moves
 * it, so the serving run and its band reuse it). */
typedef struct dt_mem {
    double weights, grads, optimizer, activations, kv_cache, total;
    int64_t stage;
    dt_kv kv;
    bool kv_fits;
} dt_mem;

/* Activation bytes of one layer and micro-batch under recompute mode rc. */
double dt_mem_act_bytes(const dt_ctx *c, task_recompute rc);
/* The busiest stage's memory under recompute mode rc. */
void dt_mem_busiest(const dt_ctx *c, const dt_stages *st, task_recompute rc, dt_mem *mem);
/* Usable device memory: the capacity times the task's memory_fraction. */
double dt_mem_capacity(const dt_ctx *c);
/* Memory with the recompute mode `want` (auto: the least recomputation
 * that fits; c->rc is set to the mode taken). */
void dt_mem_fit(dt_ctx *c, const dt_stages *st, task_recompute want, dt_mem *mem);

/* ---- what bounds the step (breakdown.c) */

/* Parallel dimensions of the exposed-communication split. */
enum { DT_B_TP = 0, DT_B_CP = 1, DT_B_EP = 2, DT_B_PP = 3, DT_B_DP = 4, DT_B_DIMS = 5 };

/* Splits exposed communication `exposed` over the dimensions into r's
 * comm_exposed_*_s: est[] the exposed time of each dimension the
 * fidelity knows (est[DT_B_DP] < 0: data parallelism takes what the
 * others leave), scaled down together when they pass `exposed`; and
 * over the tiers, a dimension's group inside one scale-up domain or
 * across domains. */
void dt_breakdown_comm(const dt_ctx *c, double exposed, const double est[DT_B_DIMS],
                       result_t *r);

/* ---- an evaluation's resolved inputs (setup.c) */

/* The context and what it points into (so they live together), the
 * pipeline split and stages, the busiest stage's memory. */
typedef struct dt_eval {
    dt_ctx c;
    stack_desc ideal;
    dt_groups groups;
    dt_memo memo;
    dt_split sp;
    dt_stages st;
    dt_mem mem;
} dt_eval;

/* The steps of dt_setup, for a caller that searches between them
 * (train/tune.c): the context of p, its shapes (STATUS_OK or
 * STATUS_INFEASIBLE_SHAPE); the pipeline split of its degrees and the
 * stages (STATUS_INFEASIBLE_SHAPE when the chunks do not fit the
 * layers); the resolved batch into r and its check
 * (STATUS_INFEASIBLE_BATCH), the memory (recompute = auto: the least
 * that fits) into r and v->mem (STATUS_INFEASIBLE_MEMORY beyond the
 * capacity and the stack's reserve). */
status_code dt_setup_begin(const point_t *p, dt_eval *v);
status_code dt_setup_split(dt_eval *v);
status_code dt_setup_end(dt_eval *v, result_t *r);
/* The three in a row: p's evaluation without the tuner's searches (the
 * point's own micro-batch and interleaving). */
status_code dt_setup(const point_t *p, dt_eval *v, result_t *r);
/* Whether p's degrees pass the shape rules dt_setup reports as
 * infeasible:shape (tp divides the heads, cp the sequence, ep the
 * experts, the pp x vpp chunks fit the layers), without evaluating. */
bool dt_setup_shape_ok(const point_t *p);

#endif
