/*
 * dt.h - what the files of the detailed fidelity share (private to
 * cost/detailed/; the public interface is cost/detailed.h).
 *
 * The fidelity is split by mechanism, one file each:
 *   fidelity.c  the registry entry: rules (check), resolved degrees and
 *               stack facts, run (nominal and band scenarios)
 *   params.c    parameters and FLOPs of a model (what is counted as work)
 *   layer.c     work of one transformer layer per micro-batch: GEMMs,
 *               attention core, memory-bound kernels
 *   comm.c      the communication a layer's parallel degrees imply (TP,
 *               CP, EP, DP/ZeRO) and how much of it stays exposed
 *   memory.c    memory per device and pipeline stage, recompute = auto
 *   pipeline.c  stage split (uneven layers, embedding and head as load),
 *               the schedule's time and bubble, micro-batches in flight
 *   train.c     the training iteration: stages, schedule, gradient
 *               reduction on the two-stream engine, figures
 *   infer.c     inference: the entry to serving (serve.h: serve_step.c,
 *               serve_kv.c, serve_steady.c, serve_disagg.c)
 *   dlrm.c      DLRM (embeddings sharded, MLPs data parallel)
 *   emb.c       DLRM embeddings placed per table (planner), small all-reduces
 *   auto.c      the `auto` candidate strategies of sweeps
 *   names.c     enum names and strategy texts
 * Invariants: every function is a pure function of its inputs (no
 * globals, no allocation but the caller's engine); a dt_ctx is built once
 * per evaluation by dt_run_llm and read-only afterwards, but for its memo
 * (dt_memo), which keeps what the evaluation has worked out that no
 * scenario's facts move, filled when first needed.
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

/* Stack and hardware facts resolved for one scenario of their ranges
 * (stack.h): efficiency multipliers and the stack's behaviour. */
typedef struct dt_facts {
    double gemm, attn, mem, net; /* 1 +- the hardware's uncertainty */
    double ew_passes, launch_s, fp8_cast;
    double tpo_f, tpo_b;         /* TP overlap fractions */
    double dpo, slow, dp_bus;    /* DP overlap, compute slowdown, DP ring efficiency */
    double sel_gemm;             /* selective: fraction of GEMMs recomputed */
    double sel_block;            /* selective: fraction of blocks checkpointed whole (0: op-level) */
    double a2a_overlap;          /* MoE: fraction of the EP all-to-all hidden */
    double a2a_hier;             /* MoE: share of the dispatch that is hierarchical */
    double loss_bytes;           /* HBM bytes per logit of the loss, fwd + bwd */
} dt_facts;

/* A GEMM as far as no scenario's facts move its time (layer.c
 * dt_gemm_place): its FLOPs, its dtype's peak and the table's efficiency
 * for its size, the HBM time of its operands and of its weight
 * gradient's reads and accumulation (before the scenario's bandwidth
 * multiplier), its launch overheads, and for the FP8/FP4 casts its
 * problems and the elements of its inputs (m k + k n). A scenario's time
 * is dt_gemm_at's: the same operations as costing it whole. */
typedef struct dt_gemm_pl {
    double flops, peak, eff, tm, tw, kern, batch, cin;
    bool narrow;
} dt_gemm_pl;

/* One transformer layer's work as far as no scenario's facts move it
 * (layer.c dt_layer_plan, once per evaluation and micro-batch): its GEMMs
 * in the order their times are summed (pair[i]: GEMM i and i + 1, an
 * MLP's two, are added together first), its parameters per device and
 * MLP activation columns, the attention core (fused: its FLOPs and the
 * peak times the kernels' efficiency; unfused: its two batched GEMMs and
 * the HBM time of its score kernels, forward and backward), and the
 * bytes and launches of its memory-bound kernels (the norms, activation,
 * RoPE and q/k norms; the MoE permutation; selective recomputation's
 * norms and activation). */
#define DT_LAYER_GEMMS 12
typedef struct dt_lplan {
    int n;
    dt_gemm_pl g[DT_LAYER_GEMMS];
    bool pair[DT_LAYER_GEMMS];
    double params, act_cols;
    double attn_fl, attn_pe;
    dt_gemm_pl ua[2];
    double ua_mf, ua_mb;
    double elem_bytes, elem_kern, permute, na_bytes;
} dt_lplan;

/* The communication groups a training step costs most often: tensor
 * parallel (tp at its stride), data parallel over dp x cp, its ZeRO
 * shard group, the expert data-parallel group and its shard group (on
 * the DP rings' rails). */
enum { DT_G_TP = 0, DT_G_DP = 1, DT_G_ZS = 2, DT_G_EDP = 3, DT_G_ZSE = 4, DT_GROUPS = 5 };

/* What this evaluation has already worked out that the band's scenarios
 * repeat: GEMM efficiencies looked up (FLOPs and dtype -> efficiency),
 * the layer plans of a dense and a MoE layer for the micro-batch of
 * plan_mb sequences (0: none yet), the GEMMs of the output head and of
 * multi-token prediction's projection, and the groups above placed on the
 * topology (once each, when first costed). */
#define DT_MEMO 24
typedef struct dt_memo {
    int n;
    double flops[DT_MEMO], eff[DT_MEMO];
    int dtype[DT_MEMO];
    int64_t plan_mb[2];
    dt_lplan lp[2];
    int64_t ends_mb;              /* micro-batch of head and mtp (0: none yet) */
    dt_gemm_pl head, mtp;         /* the output head's GEMM, an MTP module's projection */
    unsigned placed;              /* bit g: grp[g] placed (dt_group) */
    topo_grp grp[DT_GROUPS];
} dt_memo;
/* The efficiency hw_gemm_efficiency_dtype(hw, d, flops), looked up once
 * per size and dtype in mo (n = 0: empty; layer.c). */
double dt_memo_eff(dt_memo *mo, const hw_t *hw, hw_dtype d, double flops);

/* The attention projections of one layer per device at tensor
 * parallelism tp (params.c): grouped-query attention (QKV with kv heads
 * as one GEMM, output), or multi-head latent attention (query down- and
 * up-projection, the shared key/value latent with the RoPE key and its
 * up-projection, output; the down-projections replicated over tp as
 * Megatron-Core's MLASelfAttention keeps them). Per token: GEMMs (n
 * output columns, k inputs), parameters, the q, k, v columns the
 * attention core reads, the per-head query/key and value dimensions and
 * the latent columns stored beside them. */
#define DT_ATTN_GEMMS 5
typedef struct dt_attn_sh {
    int n;
    double gn[DT_ATTN_GEMMS], gk[DT_ATTN_GEMMS];
    double params, q, k, v, dqk, dv, latent;
    double rope; /* q and k columns RoPE rotates */
} dt_attn_sh;
void dt_attn_shape(const model_t *m, double tp, dt_attn_sh *o);

/* One evaluation's resolved inputs. */
typedef struct dt_ctx {
    const point_t *p;
    const model_t *m;
    const task_detailed_t *t;
    const hw_t *hw;
    const topo_t *topo;
    const stack_desc *st;
    dt_facts f;
    stack_scenario scenario; /* of the facts in f */
    dt_memo *memo;       /* the evaluation's GEMM efficiency lookups */
    topo_net dpnet;      /* how DP rings use the network (stack) */
    dt_deg d;
    hw_dtype dt;
    bool sp;             /* sequence parallel (tp > 1) */
    bool dropout;
    int attention;       /* task_attention, resolved */
    task_recompute rc;   /* resolved (auto: the mode chosen) */
    double rc_frac;      /* full recompute: share of a stage's layers recomputed */
    bool lora;           /* adapters in every layer: data gradients through all */
    bool z3_ag_mb;       /* ZeRO 3 gathers every micro-batch (else once per step) */
    bool z3_reshard;     /* ... and again for the backward */
    bool z3_rs_mb;       /* ZeRO 3 reduce-scatters every micro-batch (else after the last) */
    double ab;     /* activation bytes */
    double gbytes; /* gradient bytes reduced */
    double tok;    /* tokens per device per micro-batch */
    double seq;    /* sequence (training) or prompt (inference) per cp rank */
    double kv_len; /* keys each query attends over: the whole sequence */
    int64_t stride[4];   /* per dimension (DT_TP...): devices between members */
    int64_t s_dpcp;      /* stride of the dp x cp group */
    int64_t zs;          /* ZeRO shard group size (hybrid sharding) */
    int64_t dpcp;
    /* MoE expert grid: expert tensor parallelism etp, the EP group's
     * stride, the expert data-parallel group (size, stride) and its ZeRO
     * shard group; etp = tp: ep inside dp x cp as before */
    int64_t etp, s_ep, edp, s_edp, zse;
    /* what depends on the model and the degrees only, computed once per
     * evaluation (dt_ctx_params, from dt_prepare) and read by every
     * scenario: the attention shapes at tp and whole (tp 1), the parameters per device
     * of a dense and a MoE layer, of the routed experts, of the
     * embedding and the output head, the model FLOPs (causal halved) */
    dt_attn_sh as, as1;
    double lp[2], expert_params, emb_params, head_params, model_flops;
} dt_ctx;

/* Plain min and max (the fidelity's figures are never NaN; libm's fmin
 * and fmax are calls on the hot path). */
static inline double dt_min(double a, double b)
{
    return a < b ? a : b;
}
static inline double dt_max(double a, double b)
{
    return a > b ? a : b;
}

/* A collective inside the model (TP, CP, EP, PP groups). */
static inline double dt_coll(const dt_ctx *c, topo_coll k, int64_t n, int64_t stride,
                             double bytes)
{
    return topo_coll_time(c->topo, k, n, stride, bytes / c->f.net);
}

/* A data-parallel collective: rings at the stack's rails and efficiency. */
static inline double dt_dpcoll(const dt_ctx *c, topo_coll k, int64_t n, int64_t stride,
                               double bytes)
{
    return topo_coll_time_net(c->topo, k, n, stride, bytes / c->f.net, &c->dpnet);
}

/* Places group g (DT_G_TP ...) in the evaluation's memo (fidelity.c). */
void dt_group_place(const dt_ctx *c, int g);
/* Group g placed on the topology. */
static inline const topo_grp *dt_group(const dt_ctx *c, int g)
{
    if (!(c->memo->placed & (1u << g)))
        dt_group_place(c, g);
    return &c->memo->grp[g];
}

/* A collective of group g: as dt_coll (DT_G_TP) or dt_dpcoll (the
 * others); nothing to send costs nothing (topo.h), without placing the
 * group (a dense model's expert groups). */
static inline double dt_gcoll(const dt_ctx *c, topo_coll k, int g, double bytes)
{
    static const topo_net all = {0, 1.0};
    double b = bytes / c->f.net;
    if (b <= 0)
        return 0.0;
    return topo_coll_time_at(c->topo, k, dt_group(c, g), b, g == DT_G_TP ? &all : &c->dpnet);
}

/* A GEMM of m x k by k x n, `batch` of them (dt_gemm_p's arguments;
 * `grouped`: one kernel per problem, at one problem's efficiency), placed
 * (layer.c); its time, and with `wgrad` its weight gradient's, under the
 * context's facts. */
void dt_gemm_place(const dt_ctx *c, double m, double n, double k, double batch, bool lowp,
                   bool grouped, dt_gemm_pl *g);
double dt_gemm_at(const dt_ctx *c, const dt_gemm_pl *g, double *wgrad);

/* A GEMM in the compute dtype (FP8/FP4 GEMMs with their cast overhead
 * when `lowp` and the compute dtype is FP8 or FP4; others in BF16). */
double dt_gemm_p(const dt_ctx *c, double m, double n, double k, double batch, bool lowp);
static inline double dt_gemm(const dt_ctx *c, double m, double n, double k, double batch)
{
    return dt_gemm_p(c, m, n, k, batch, true);
}

/* Time of a memory-bound kernel group moving `bytes` in `kernels`
 * launches (the stack's pass factor and launch floor applied). */
double dt_elem(const dt_ctx *c, double bytes, double kernels);

/* ---- model shape (params.c) */

/* Per-head dimension: the model's head_dim, else hidden / heads. */
static inline double dt_head_dim(const model_t *m)
{
    return m->d.head_dim > 0 ? (double)m->d.head_dim : (double)m->hidden / (double)m->heads;
}


/* Elements one token keeps in one layer's KV cache per device: K and V
 * of its kv heads (grouped-query), or MLA's compressed latent and shared
 * RoPE key (kv_lora_rank + qk_rope_head_dim, the absorbed form inference
 * engines cache; whole on every tensor-parallel rank). */
static inline double dt_kv_cache_cols(const model_t *m, double tp)
{
    if (m->d.kv_lora_rank > 0)
        return (double)(m->d.kv_lora_rank + m->d.qk_rope_head_dim);
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double kvt = kv / tp > 1.0 ? kv / tp : 1.0;
    return 2.0 * kvt * dt_head_dim(m);
}

/* Parameters of one layer's attention (whole, tp = 1). */
static inline double dt_attn_params(const model_t *m)
{
    dt_attn_sh a;
    dt_attn_shape(m, 1.0, &a);
    return a.params;
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

/* Stage split (pipeline.c): units per chunk q (+1 for the first r),
 * embedding and head weights e and l in units of layers. */
typedef struct dt_split {
    int64_t chunks, q, r, e, l;
} dt_split;

/* What a pipeline stage holds (pipeline.c, once per evaluation): its
 * layers by type (DT_DENSE, DT_MOE and their frozen variants), the types
 * of the first and last layer of each of its chunks (where ZeRO 3's
 * gather chains start), and the chunk boundaries it sends across per
 * micro-batch and pass. At most DT_MAX_STAGES stages (the check). */
enum { DT_DENSE = 0, DT_MOE = 1, DT_FDENSE = 2, DT_FMOE = 3, DT_TYPES = 4 };
#define DT_MAX_STAGES 512
typedef struct dt_stage {
    int32_t n[DT_TYPES], first[DT_TYPES], last[DT_TYPES];
    int32_t sends;
} dt_stage;
typedef struct dt_stages {
    int64_t count;
    int types;   /* types in use: 1 (one kind of layer), 2 (dense and MoE), 4 */
    int uniform; /* with one kind: DT_DENSE or DT_MOE */
    dt_stage s[DT_MAX_STAGES];
    /* same[s] (s >= 1): stage s holds what stage s - 1 does (layers of
     * the types in use, chunk ends, sends), found once per split: every
     * scenario's schedule and tails read it */
    bool same[DT_MAX_STAGES];
} dt_stages;

/* KV-cache capacity of one serving replica (serve_kv.c). */
typedef struct sv_kv {
    double weights, acts, reserve; /* bytes per device, busiest stage */
    double pool;                   /* bytes for the KV cache per device */
    double seq_bytes;              /* KV bytes one request holds (blocks, admission rule) */
    double tok_bytes;              /* KV bytes per token on the busiest stage's device */
    int64_t cmax;                  /* requests one replica admits (KV and max_seqs) */
} sv_kv;

/* Memory of the busiest stage (memory.c); inference: the replica's KV
 * capacity too, and whether it admits the task (serve_kv.c sv_fits; no
 * uncertain fact moves it, so the serving run and its band reuse it). */
typedef struct dt_mem {
    double weights, grads, optimizer, activations, kv_cache, total;
    int64_t stage;
    sv_kv kv;
    bool kv_fits;
} dt_mem;

/* Per-layer costs of a step by type (DT_DENSE ...: dense and MoE
 * layers, trained and frozen), and the embedding, output head and loss
 * of a micro-batch (train.c). */
typedef struct dt_layers {
    dt_layer t[DT_TYPES];
    int64_t frozen;
    int fmode;
} dt_layers;
typedef struct dt_ends {
    double emb_f, emb_b, head_f, head_b;
    double emb_comp; /* emb_f's compute (without its TP all-reduce) */
    double head_mf, head_mb; /* the loss's memory-bound part of head_f, head_b */
} dt_ends;

/* The closed-form schedule of a training step (train.c), shared by the
 * evaluation and the trace: per stage its time per micro-batch ts (tf
 * of it forward), the pipeline's span (pipeline.c's schedule time) and
 * bubble, ZeRO 3's once-per-step gather exposed before it (z3x). Stage
 * s idles bubble s/(pp-1) of the bubble before and after its ops (the
 * fill and drain a later stage waits, forward and backward shares), the
 * rest of the bubble after its warm-up forwards; it keeps the slowest
 * stage's pace. Its last backward ends at z3x + pipe - trail(s). */
typedef struct dt_sched {
    dt_layers y;
    dt_ends x;
    double p2p, p2p_ag;
    double ts[DT_MAX_STAGES], tf[DT_MAX_STAGES];
    double tmax, pipe, bubble, f, z3x;
    double params_dense, params_moe; /* dt_layer_params, once */
} dt_sched;
/* A stage's end of step: its last micro-batch's backward with the
 * gradient collectives beside it, the rest of the reduction, the
 * optimizer, ZeRO 1/2's exposed parameter gather. */
typedef struct dt_tail {
    double start, comp_end, comm_end, sync_sum, serial, emb_sync;
    double opt_at, opt, ag, ag_exposed, end;
    int64_t ncomp, ncomm;
    /* in: the last ZeRO 1/2 gather costed (trained parameters -> time),
     * reused by a stage with as many; out: this stage's */
    double memo_trained, memo_ag;
} dt_tail;
/* What dt_tail_run reports to a trace: a layer's overlapped gradient
 * collective, the backward stretched past the schedule by collectives
 * beside it, the reduction left after both streams. */
enum { DT_EMIT_SYNC = 0, DT_EMIT_SLOWED = 1, DT_EMIT_TAIL = 2 };
typedef struct dt_tail_emit {
    void (*fn)(void *ctx, int kind, int64_t layer, double start, double dur);
    void *ctx;
} dt_tail_emit;

/* ---- bounds (fidelity.c): every count the fidelity multiplies or loops
 * over is checked against these before any arithmetic, so a direct
 * caller of the library cannot overflow or loop for ever */
#define DT_MAX_COUNT (INT64_C(1) << 26)   /* layers, widths, heads, tokens, experts */
#define DT_MAX_DEGREE (INT64_C(1) << 24)  /* each parallel degree */
#define DT_MAX_BATCH (INT64_C(1) << 40)   /* sequences, samples, rows */

/* a * b into *out; false on overflow or a result above `max` */
static inline bool dt_mul_ok(int64_t a, int64_t b, int64_t max, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > max)
        return false;
    *out = r;
    return true;
}

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

/* ---- across files */

/* Parameters per device of one layer (dense or MoE; KV heads replicated
 * when fewer than tp), of its routed experts, of the embedding (first
 * stage) and of the output head (last stage). */
static inline double dt_layer_params(const dt_ctx *c, bool moe)
{
    return c->lp[moe ? 1 : 0];
}
static inline double dt_expert_params(const dt_ctx *c)
{
    return c->expert_params;
}
static inline double dt_emb_params_dev(const dt_ctx *c)
{
    return c->emb_params;
}
static inline double dt_head_params_dev(const dt_ctx *c)
{
    return c->head_params;
}
/* Fills the context's shapes and parameter counts above (params.c). */
void dt_ctx_params(dt_ctx *c);

void dt_degrees(const point_t *p, dt_deg *d);
/* Permutation `code` (0..23) of (tp, cp, dp, pp), innermost first. */
void dt_perm(int code, int order[4]);
void dt_layer_cost(const dt_ctx *c, bool moe, bool training, int mode, dt_layer *L);
void dt_layer_comm(const dt_ctx *c, bool moe, bool training, int mode, dt_layer *L);
/* Wall time of compute `comp` with `comm` beside it, a fraction `f` of
 * which can overlap: max(comp stretched by the stack's slowdown while
 * overlapped, f comm) + (1 - f) comm. */
double dt_overlap(const dt_ctx *c, double comp, double comm, double f);
double dt_act_bytes(const dt_ctx *c, task_recompute rc);
void dt_memory(const dt_ctx *c, const dt_stages *st, task_recompute rc, dt_mem *mem);
void dt_stages_build(const dt_ctx *c, const dt_split *sp, dt_stages *st);
/* Type of layer i (DT_DENSE ...). */
int dt_layer_type(const dt_ctx *c, int64_t i);
void dt_split_init(const dt_ctx *c, dt_split *sp);
bool dt_split_ok(const dt_ctx *c, const dt_split *sp);
void dt_chunk_range(const dt_ctx *c, const dt_split *sp, int64_t k, int64_t *lo, int64_t *hi);
int64_t dt_stage_layers(const dt_ctx *c, const dt_split *sp, int64_t s);
/* Micro-batches stage s holds in flight (never more for a later stage:
 * dt_memory skips middle stages like the one before them). */
double dt_inflight(const dt_ctx *c, int64_t s);
double dt_schedule_time(double tmax, double tsum, double m, double v);
/* MoE layers of [lo, hi). */
static inline int64_t dt_moe_in(const model_t *m, int64_t lo, int64_t hi)
{
    if (m->d.experts <= 0)
        return 0;
    int64_t a = lo > m->d.dense_layers ? lo : m->d.dense_layers;
    return hi > a ? hi - a : 0;
}
void dt_frozen_in(int64_t lo, int64_t hi, int64_t frozen, int64_t moe_from, double *fd,
                  double *fm);
/* The context of an evaluation of p (facts at their nominal values;
 * `ideal` holds the idealized stack when p names none). */
void dt_ctx_init(dt_ctx *c, const point_t *p, stack_desc *ideal, dt_memo *memo);
void dt_facts_resolve(dt_ctx *c, stack_scenario sc);
status_code dt_run_llm(const point_t *p, engine *e, result_t *r);
/* The step's time under the context's facts; `figures` false computes
 * the iteration time only (the band's scenarios). */
status_code dt_train_time(const dt_ctx *c, const dt_split *sp, const dt_stages *st, engine *e,
                          result_t *r, bool figures);
/* Serving under the context's facts (infer.c), on the KV capacity of
 * dt_prepare's memory (mem); dt_infer_run: under the nominal facts with
 * the band (iteration_time_lo_s, _hi_s), c left at the slow end. */
status_code dt_infer_time(const dt_ctx *c, const dt_stages *st, const dt_mem *mem,
                          result_t *r);
status_code dt_infer_run(dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r);
void dt_layers_build(const dt_ctx *c, dt_layers *y);
void dt_ends_cost(const dt_ctx *c, const dt_layers *y, dt_ends *x);
void dt_sched_build(const dt_ctx *c, const dt_stages *st, dt_sched *k);
/* Idle of stage s before its first op and after its last. */
double dt_sched_lead(const dt_ctx *c, const dt_sched *k, int64_t s);
double dt_sched_trail(const dt_ctx *c, const dt_sched *k, int64_t s);
/* Stage s's tail (emit NULL: no events); t's memo is read (zero it
 * first, or carry it from another stage's tail) and updated. */
void dt_tail_run(const dt_ctx *c, const dt_split *sp, const dt_stages *st, const dt_sched *k,
                 int64_t s, const dt_tail_emit *emit, dt_tail *t);
/* The context of p with its split and stages, micro-batch and
 * recompute mode resolved (auto), memory in *mem: STATUS_OK, or the
 * infeasible status (fidelity.c). */
status_code dt_prepare(const point_t *p, engine *e, dt_ctx *c, stack_desc *ideal, dt_memo *memo,
                       dt_split *sp, dt_stages *st, dt_mem *mem, result_t *r);
/* DLRM embeddings placed per table (emb.c). */
#define DT_MAX_TABLES 1024   /* tables the planner places one by one */
#define DT_EMB_NODE_MAX 128  /* devices per node it balances */
#define DT_EMB_NODES_MAX 1024 /* nodes it assigns tables to */
typedef struct dt_emb_in {
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
} dt_emb_in;
typedef struct dt_emb_plan {
    double work_s;        /* busiest device: lookups, pooling, update */
    double fwd_s;         /* its forward part (lookups, pooling) */
    double a2a_s;         /* one pooled exchange (forward; backward the same) */
    double ids_s;         /* ids to the model-parallel tables */
    double grad_bytes;    /* replicated rows' gradients all-reduced */
    double table_bytes;   /* busiest device: tables and their states */
    double pooled_bytes;  /* pooled vectors per device */
    double imbalance;     /* busiest device / mean */
    int n_dp, n_table, n_row, n_mp, split_per_node;
} dt_emb_plan;
void dt_emb_plan_run(const dt_emb_in *in, dt_emb_plan *out);
/* Work (s) of `n` lookups on one table (or shard) of `rows` rows, `w`
 * wide, for `bsz` samples on one device: gathers and pooled writes (the
 * forward part also added to *fwd), in training the gradient scatter and
 * the optimizer's read-modify-write of the rows that `nu` lookups touch
 * (n for the device's own; a replicated table's replicas update the rows
 * of the whole batch's lookups, once, after the all-reduce). The one
 * model of an embedding's work: the planner's and the fixed shardings'
 * (dlrm.c). */
double dt_emb_work(const dt_emb_in *in, double w, double rows, double n, double bsz, double nu,
                   double *fwd);
/* A small all-reduce as NCCL runs it: reduce-scatter in the node, tree
 * across nodes, all-gather in the node. */
double dt_dlrm_allreduce(const topo_t *topo, int64_t n, double bytes, bool sharp);

status_code dt_check_dlrm(const point_t *p, const char **where);
status_code dt_run_dlrm(const point_t *p, engine *e, result_t *r);
int64_t dt_auto_count(void);
status_code dt_auto_apply(point_t *p, int64_t i, int64_t global_batch);
const char *dt_sharding_name(int s);
const char *dt_emb_opt_name(int o);

#endif
