/*
 * core.h - the ground of the detailed fidelity (private to
 * cost/detailed/; the public interface is cost/detailed.h): what every
 * floor above stands on, calling nothing above it.
 *   ctx.c     an evaluation's context: resolved degrees, the layout's
 *             strides, the expert grid, the communication groups placed
 *             on the topology (once each, when first costed)
 *   facts.c   the stack's and hardware's facts under one scenario of
 *             their ranges (nominal, fast end, slow end)
 *   shape.c   what a model holds and computes: attention shapes,
 *             parameters, model FLOPs
 *   layout.c  the 24 orders of (tp, cp, dp, pp) over the devices
 *   names.c   enum names and strategy texts
 * and, in this header, the bounds every count is checked against, the
 * collectives at the context's facts, and dt_family: what a family gives
 * the top so that the band is written once.
 *
 * The floors of cost/detailed/, calls going down only (a call needs a
 * prototype, so includes are calls; scripts/check_includes.py checks
 * them):
 *   top         fidelity.c, rules.c, trace.c, auto.c (top.h)
 *   families    train/, serve/, dlrm/ (never each other)
 *   mechanisms  llm/ (GEMMs, layers, communication, pipeline, memory, KV)
 *   ground      core/ (and cost/kernel/ beside it)
 * Invariants: every function is a pure function of its inputs (no
 * globals, no allocation); a dt_ctx is built once per evaluation
 * (dt_ctx_init) and read afterwards, but for its facts (resolved again
 * for each scenario of the band), its micro-batch (the tuner's search),
 * its placed groups and its memo, which keep what the evaluation has
 * worked out that no scenario's facts move, filled when first needed.
 */
#ifndef MADSWEEP_DT_CORE_H
#define MADSWEEP_DT_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "../../detailed.h"

/* ---- bounds: every count the fidelity multiplies or loops over is
 * checked against these (rules.c) before any arithmetic, so that a
 * direct caller of the library cannot overflow or loop for ever */
#define DT_MAX_COUNT (INT64_C(1) << 26)   /* layers, widths, heads, tokens, experts */
#define DT_MIN_TOKEN_BUDGET 16            /* an engine step's tokens at least (a KV block) */
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

/* ---- the context (ctx.c) */

/* Dimensions of a layout, as indices of dt_ctx.stride. */
enum { DT_TP = 0, DT_CP = 1, DT_DP = 2, DT_PP = 3 };

/* Resolved degrees and batches of a task (defaults applied). */
typedef struct dt_deg {
    int64_t tp, pp, dp, cp, ep, v, mb, ga, gb, zero;
    double cf;
} dt_deg;

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

/* The attention projections of one layer per device at tensor
 * parallelism tp (shape.c): grouped-query attention (QKV with kv heads
 * as one GEMM, output), or multi-head latent attention (query down- and
 * up-projection, the shared key/value latent with the RoPE key and its
 * up-projection, output; the down-projections replicated over tp as
 * Megatron-Core's MLASelfAttention keeps them). Per token: GEMMs (n
 * output columns, k inputs), parameters, the q, k, v columns the
 * attention core reads, the per-head query/key and value dimensions and
 * the latent columns stored beside them. */
#define DT_ATTN_GEMMS 8
typedef struct dt_attn_sh {
    int n;
    double gn[DT_ATTN_GEMMS], gk[DT_ATTN_GEMMS];
    double params, q, k, v, dqk, dv, latent;
    double rope; /* q and k columns RoPE rotates */
    double gate; /* output-gate columns (attn_output_gate; 0: none) */
} dt_attn_sh;

/* Gated DeltaNet (linear attention) work of one layer on one device at
 * a tensor-parallel degree (heads split over it), from the chunked form
 * of Yang et al. 2024 (arXiv:2412.06464) as flash-linear-attention's
 * chunk_gated_delta_rule runs it (chunks of DT_LIN_CHUNK tokens): per
 * prompt token and value head, the chunk's K K^T, its triangular inverse
 * applied to K and V, the intra-chunk scores and output, and the state's
 * three products (read, output, update), and the triangular solve (C^3 /
 * 3 multiply-adds a chunk): 2 C (3 dk + 2 dv) + 6 dk dv + 2 C^2 / 3
 * FLOPs; per decoded token the recurrent step, 6 dk dv (read, update,
 * output); the state a sequence holds, dk x dv per value head in
 * linear_state_bytes plus the causal conv's last (kernel - 1) inputs of
 * q, k and v in the activations' dtype; the chunk states written and
 * read back (dk x dv per value head and chunk, activation dtype). */
#define DT_LIN_CHUNK 64.0
typedef struct dt_lin_sh {
    double fl_prompt, fl_decode; /* FLOPs per prompt token, per decoded token */
    double state;                /* bytes of one sequence's state */
    double chunk_io;             /* HBM bytes per prompt token of the chunk states */
    double conv;                 /* conv channels (2 hk dk + hv dv) on the device */
} dt_lin_sh;

/* The communication groups a step costs most often: tensor parallel (tp
 * at its stride), data parallel over dp x cp, its ZeRO shard group, the
 * expert data-parallel group and its shard group (on the DP rings'
 * rails), each placed on the topology once per evaluation, when first
 * costed (dt_group). */
enum { DT_G_TP = 0, DT_G_DP = 1, DT_G_ZS = 2, DT_G_EDP = 3, DT_G_ZSE = 4, DT_GROUPS = 5 };
typedef struct dt_groups {
    unsigned placed; /* bit g: grp[g] placed */
    topo_grp grp[DT_GROUPS];
} dt_groups;

/* What the mechanisms have worked out for this evaluation (llm/llm.h):
 * a pointer here, its contents theirs. */
struct dt_memo;

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
    dt_groups *groups;       /* the groups placed so far */
    struct dt_memo *memo;    /* the mechanisms' memo (llm.h) */
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
     * evaluation (dt_shape_fill) and read by every scenario: the
     * attention shapes at tp and whole (tp 1), the parameters per device
     * of a dense and a MoE layer, of the routed experts, of the embedding
     * and the output head, the model FLOPs (causal halved) */
    dt_attn_sh as, as1;
    double lp[4], expert_params, emb_params, head_params, model_flops;
    double mtp_params; /* of head_params: the multi-token-prediction modules */
    /* the model's second attention kind (shape.c DT_KIND_*; FULL: none),
     * its projections at tp and whole, its Gated DeltaNet work at tp */
    int alt;
    dt_attn_sh asa, asa1;
    dt_lin_sh lin;
} dt_ctx;

/* The resolved degrees of p's task. */
void dt_ctx_degrees(const point_t *p, dt_deg *d);
/* The context of an evaluation of p (facts at their nominal values;
 * `ideal` holds the idealized stack when p names none; no group placed
 * yet; memo: the mechanisms', which the caller resets). */
void dt_ctx_init(dt_ctx *c, const point_t *p, stack_desc *ideal, dt_groups *groups,
                 struct dt_memo *memo);
/* Micro-batches of mb sequences (the accumulation steps and tokens with
 * them). */
void dt_ctx_set_micro_batch(dt_ctx *c, int64_t mb);
/* A training step's batch splits into whole micro-batches per replica,
 * and an interleaved pipeline (vpp > 1) runs whole groups of pp of them
 * (Megatron-LM's interleaved schedule refuses other counts: "number of
 * microbatches is not divisible by pipeline-model-parallel-size"). The
 * evaluation, the trace and the auto searches read this one rule. */
bool dt_ctx_batch_ok(const dt_ctx *c);
/* Places group g (DT_G_TP ...) on the topology. */
void dt_group_place(const dt_ctx *c, int g);

/* Group g placed on the topology. */
static inline const topo_grp *dt_group(const dt_ctx *c, int g)
{
    if (!(c->groups->placed & (1u << g)))
        dt_group_place(c, g);
    return &c->groups->grp[g];
}

/* A collective of `bytes` inside the model (TP, CP, EP, PP groups: n
 * members `stride` apart) at the scenario's network multiplier. */
static inline double dt_coll(const dt_ctx *c, topo_coll k, int64_t n, int64_t stride,
                             double bytes)
{
    return topo_coll_time(c->topo, k, n, stride, bytes / c->f.net);
}

/* A data-parallel collective: rings at the stack's rails and efficiency. */
static inline double dt_dp_coll(const dt_ctx *c, topo_coll k, int64_t n, int64_t stride,
                                double bytes)
{
    return topo_coll_time_net(c->topo, k, n, stride, bytes / c->f.net, &c->dpnet);
}

/* A collective of group g: as dt_coll (DT_G_TP) or dt_dp_coll (the
 * others); nothing to send costs nothing (topo.h), without placing the
 * group (a dense model's expert groups). */
static inline double dt_group_coll(const dt_ctx *c, topo_coll k, int g, double bytes)
{
    static const topo_net all = {0, 1.0};
    double b = bytes / c->f.net;
    if (b <= 0)
        return 0.0;
    return topo_coll_time_at(c->topo, k, dt_group(c, g), b, g == DT_G_TP ? &all : &c->dpnet);
}

/* ---- facts (facts.c) */

/* The facts of scenario sc into c->f (and the DP rings' use of the
 * network into c->dpnet). */
void dt_facts_resolve(dt_ctx *c, stack_scenario sc);

/* ---- model shape (shape.c) */

/* Attention kinds: full (grouped-query or latent, with DeepSeek sparse
 * attention when index_topk > 0), sliding window, Gated DeltaNet. */
enum { DT_KIND_FULL = 0, DT_KIND_SLIDING = 1, DT_KIND_LINEAR = 2 };

/* The model's second attention kind (DT_KIND_FULL: every layer full). */
static inline int dt_shape_alt_kind(const model_t *m)
{
    if (m->d.linear_value_heads > 0)
        return DT_KIND_LINEAR;
    return m->d.sliding_window > 0 ? DT_KIND_SLIDING : DT_KIND_FULL;
}

/* Layers of the second kind among [lo, hi): those not full, full being
 * layer i with (i + 1) % k == 0 (k = full_attention_interval; the
 * multiples of k in [lo + 1, hi]: hi / k - lo / k). */
static inline int64_t dt_shape_alt_in(const model_t *m, int64_t lo, int64_t hi)
{
    if (hi <= lo || dt_shape_alt_kind(m) == DT_KIND_FULL)
        return 0;
    int64_t k = m->d.full_attention_interval;
    return k <= 0 ? hi - lo : (hi - lo) - (hi / k - lo / k);
}

/* Query-key pairs of a causal chunk of `len` queries after `ctx` cached
 * tokens, each query seeing at most `window` keys (<= 0: all): the sum
 * over positions i of min(i, window), in the continuous form the full
 * case takes (len (ctx + len / 2)). */
static inline double dt_shape_pairs(double ctx, double len, double window)
{
    if (window <= 0.0 || ctx + len <= window)
        return len * (ctx + 0.5 * len);
    if (ctx >= window)
        return len * window;
    double a = window - ctx; /* queries still below the window */
    return a * (ctx + 0.5 * a) + (len - a) * window;
}

void dt_shape_attn(const model_t *m, double tp, dt_attn_sh *o);
/* The projections of a layer of kind `kind` (DT_KIND_*): full and
 * sliding layers share dt_shape_attn's (with the output gate, the
 * indexer of sparse attention on full layers, the sinks' logits);
 * Gated DeltaNet's q/k/v/z and b/a projections, its conv and gates,
 * the output projection. */
void dt_shape_attn_kind(const model_t *m, double tp, int kind, dt_attn_sh *o);
/* Gated DeltaNet's work at tp, the conv state in `act_bytes` a value. */
void dt_shape_linear(const model_t *m, double tp, double act_bytes, dt_lin_sh *o);
/* Forward FLOPs per token of one layer's attention core at a sequence of
 * `seq` tokens (causal: the mean query sees half), whole (tp 1), for a
 * full layer (with sparse attention's indexer and top-k) or one of the
 * second kind. */
double dt_shape_core_flops(const model_t *m, double seq, bool alt);
/* Fills the context's shapes and parameter counts (its degrees
 * resolved). */
void dt_shape_fill(dt_ctx *c);

/* Per-head dimension: the model's head_dim, else hidden / heads. */
static inline double dt_shape_head_dim(const model_t *m)
{
    return m->d.head_dim > 0 ? (double)m->d.head_dim : (double)m->hidden / (double)m->heads;
}

/* Elements one token keeps in one layer's KV cache per device: K and V
 * of its kv heads (grouped-query), or MLA's compressed latent and shared
 * RoPE key (kv_lora_rank + qk_rope_head_dim, the absorbed form inference
 * engines cache; whole on every tensor-parallel rank). */
static inline double dt_shape_kv_cols(const model_t *m, double tp)
{
    if (m->d.kv_lora_rank > 0)
        return (double)(m->d.kv_lora_rank + m->d.qk_rope_head_dim);
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double kvt = kv / tp > 1.0 ? kv / tp : 1.0;
    return 2.0 * kvt * dt_shape_head_dim(m);
}

/* Parameters of one layer's attention (whole, tp = 1). */
static inline double dt_shape_attn_params(const model_t *m)
{
    dt_attn_sh a;
    dt_shape_attn(m, 1.0, &a);
    return a.params;
}

/* Weight matrices of the MLP: GeLU 2, SwiGLU 3. */
static inline double dt_shape_mlp_mats(const model_t *m)
{
    return m->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0;
}

/* Experts a token is routed to (2 when unset). */
static inline int64_t dt_shape_top_k(const model_t *m)
{
    return m->d.top_k > 0 ? m->d.top_k : 2;
}

/* An expert's MLP width (the dense one when unset). */
static inline double dt_shape_expert_ffn(const model_t *m)
{
    return (double)(m->d.expert_ffn > 0 ? m->d.expert_ffn : m->ffn);
}

/* MoE layers of the model (those from dense_layers on). */
static inline double dt_shape_moe_layers(const model_t *m)
{
    if (m->d.experts <= 0)
        return 0.0;
    int64_t n = m->layers - m->d.dense_layers;
    return n > 0 ? (double)n : 0.0;
}

/* Parameters per device (dt_shape_fill's) of one layer (dense or MoE;
 * KV heads replicated when fewer than tp), of its routed experts, of the
 * embedding (first stage) and of the output head (last stage). */
static inline double dt_shape_layer_params(const dt_ctx *c, bool moe)
{
    return c->lp[moe ? 1 : 0];
}
/* ... of a layer of the second attention kind (dense or MoE). */
static inline double dt_shape_alt_layer_params(const dt_ctx *c, bool moe)
{
    return c->lp[moe ? 3 : 2];
}
static inline double dt_shape_expert_params(const dt_ctx *c)
{
    return c->expert_params;
}
static inline double dt_shape_emb_params(const dt_ctx *c)
{
    return c->emb_params;
}
static inline double dt_shape_head_params(const dt_ctx *c)
{
    return c->head_params;
}

/* ---- layouts (layout.c) */

/* The order of layout `code` (0..23, a permutation of DT_TP, DT_CP,
 * DT_DP, DT_PP), innermost first. */
void dt_layout_order(int code, int order[4]);

/* ---- what a family gives the top (fidelity.c) */

/* A family of the fidelity (train/, serve/, dlrm/) as the top's one band
 * loop runs it. prepare fills `self` (the family's evaluation state, in
 * the top's storage) from p, writing what it resolves into r; time_at
 * costs the point under scenario sc of the stack's and hardware's
 * ranges: at STACK_NOMINAL every figure into r, at a band end
 * (STACK_FAST, STACK_SLOW) r's iteration_time_s (the rest of r is
 * scratch). ranged (NULL: always) says whether the ranges move anything
 * (when not, the ends are the nominal time); nominal_last runs the band's
 * ends first, so that the nominal run's events are those left in the
 * engine. */
typedef struct dt_family {
    status_code (*prepare)(void *self, const point_t *p, engine *e, result_t *r);
    status_code (*time_at)(void *self, stack_scenario sc, engine *e, result_t *r);
    bool (*ranged)(const void *self);
    bool nominal_last;
} dt_family;

#endif
