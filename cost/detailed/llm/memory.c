/*
 * memory.c - memory per device of each pipeline stage; the busiest one
 * decides whether a strategy fits.
 *
 * Training, stage s (its layers from pipeline.c's split; the embedding on
 * the first stage, the output head on the last):
 *   weights      the stack's param_bytes per parameter (32-bit compute:
 *                4, no separate master), sharded over the ZeRO group at
 *                stage 3;
 *   master, optimizer  master_bytes + optimizer_bytes per trained
 *                parameter, sharded from ZeRO 1 (reported together as
 *                optimizer);
 *   gradients    grad_bytes per trained parameter, sharded from ZeRO 2;
 *   ZeRO 3 working set: the gathered parameters of the layer computing
 *                and of the prefetched ones, one layer's unsharded
 *                gradients, and all of the stage's gathered parameters
 *                (and their unsharded gradients) when the stack keeps
 *                them across micro-batches;
 *   activations  per layer and micro-batch (dt_mem_act_bytes) times the
 *                micro-batches in flight (pipeline.c); full recompute
 *                adds one layer rebuilt; the last stage adds the logits
 *                (the stack's bytes per logit: the logits, the loss's
 *                copy, the gradient; 32-bit compute twice);
 *   reserve      the stack's CUDA context, allocator and workspace bytes.
 * Inference: the serving engine's memory (kv.c).
 *
 * Activation bytes per token and layer (16-bit; 32-bit activations
 * twice), after Korthikanti et al. 2022, term by term so that GQA, SwiGLU
 * and models without dropout get their own coefficients:
 *   replicated over tp unless sequence parallel: the two norm inputs
 *   (2h + 2h), the QKV and fc1 inputs (2h + 2h), the dropout masks (h +
 *   h, when the model has dropout);
 *   split by tp: q (2h), k and v (4h kv/a), the attention output (2h),
 *   the MLP's stored activations (GeLU: input and output, 4 f; SwiGLU:
 *   gate, up and their product, 6 f; MoE: per routed token copy);
 *   materialized attention scores (unfused kernels): softmax output, and
 *   with dropout its mask and output, (2 + 3) a s, dropped by Megatron's
 *   selective recompute.
 * GPT with dropout: 10 + 24/t + 5 a s/(h t), Korthikanti's coefficient.
 * Selective recompute with the stack's GEMM fraction g also drops g of
 * the GEMM outputs; full recompute keeps only each layer's input.
 * Invariants: the busiest stage decides (ties to the first); a middle
 * stage holding the layers of the one before it is never the busiest,
 * so it is skipped.
 */
#include "llm.h"

#include <math.h>
#include <string.h>

/* dt_mem_act_bytes for a layer of the second attention kind (alt) or a
 * full one. */
static double dt_mem_act_kind(const dt_ctx *c, task_recompute rc, bool alt)
{
    const model_t *m = c->m;
    double s = c->seq, b = (double)c->d.mb, h = (double)m->hidden;
    double a = (double)m->heads, t = (double)c->d.tp;
    double w = c->ab / 2.0, spdiv = c->sp ? t : 1.0;
    double tok = s * b;
    if (rc == TASK_RECOMPUTE_FULL && c->rc_frac < 1.0) /* only some layers */
        return c->rc_frac * w * tok * 2.0 * h / spdiv +
               (1.0 - c->rc_frac) * dt_mem_act_kind(c, TASK_RECOMPUTE_NONE, alt);
    if (rc == TASK_RECOMPUTE_FULL)
        return w * tok * 2.0 * h / spdiv;
    if (rc == TASK_RECOMPUTE_SELECTIVE && c->f.sel_block > 0.0) /* whole blocks */
        return c->f.sel_block * dt_mem_act_kind(c, TASK_RECOMPUTE_FULL, alt) +
               (1.0 - c->f.sel_block) * dt_mem_act_kind(c, TASK_RECOMPUTE_NONE, alt);
    double drop = c->dropout ? 1.0 : 0.0;
    double rep = 8.0 * h + 2.0 * drop * h;
    double cols = (double)m->ffn;
    if (m->d.experts > 0 && m->d.dense_layers < m->layers)
        cols = (double)dt_shape_top_k(m) * c->d.cf * dt_shape_expert_ffn(m) +
               (double)m->d.shared_experts * dt_shape_expert_ffn(m);
    double mlp = (m->mlp == MODEL_MLP_SWIGLU ? 6.0 : 4.0) * cols;
    const dt_attn_sh as = alt ? c->asa1 : c->as1; /* the whole attention (tp 1) */
    bool lin = alt && c->alt == DT_KIND_LINEAR;
    /* Q, K, V, O in and out (and MLA's latents, replicated over tp) */
    double qkvo = 2.0 * (as.q + as.k + as.v) + 2.0 * (lin ? as.v : a * as.dv) +
                  2.0 * as.latent * t;
    if (m->d.qk_norm && !lin) /* per-head q and k norms keep their inputs */
        qkvo += 2.0 * (as.q + as.k);
    if (as.gate > 0.0) /* the gate's input and the gated output */
        qkvo += 4.0 * as.gate;
    if (lin) /* the conv's inputs, the normed q and k, the gates b and a */
        qkvo += 2.0 * (as.q + as.k + as.v) + 2.0 * (as.q + as.k) +
                4.0 * (double)m->d.linear_value_heads;
    if (c->lora) {
        /* frozen linears keep no input for a weight gradient (Transformer
         * Engine saves inputmat only when the weight requires grad): the
         * MLP keeps its first GEMM's output for the activation's backward,
         * not the second norm's output nor the activation's; the attention
         * projections' inputs stay for the adapters */
        mlp = (m->mlp == MODEL_MLP_SWIGLU ? 4.0 : 2.0) * cols;
        rep -= 2.0 * h;
    } else if (c->dt == HW_FP8) {
        /* FP8 linears save the FP8 cast of their input for the weight
         * gradient (TE Linear/LayerNormLinear, torchao Float8Linear): one
         * byte, not two, of both norm outputs, the attention output and
         * the activation's output */
        rep -= 2.0 * h;
        qkvo -= a * as.dv;
        mlp -= cols;
    }
    double par = qkvo + mlp;
    double scores = 0.0;
    if (c->attention == TASK_ATTENTION_UNFUSED && !lin)
        scores = (2.0 + 3.0 * drop) * a * c->kv_len;
    if (rc == TASK_RECOMPUTE_SELECTIVE) {
        if (c->st->selective_attention)
            scores = 0.0;
        if (c->st->selective_norm_act) { /* two norm outputs, the activation's output */
            rep -= 4.0 * h;
            par -= 2.0 * cols;
        }
        par -= c->f.sel_gemm * (qkvo - 2.0 * h + (m->mlp == MODEL_MLP_SWIGLU ? 4.0 : 2.0) * cols);
    }
    return w * tok * (rep / spdiv + (par + scores) / t);
}

double dt_mem_act_bytes(const dt_ctx *c, task_recompute rc)
{
    return dt_mem_act_kind(c, rc, false);
}

/* Parameters of a stage's layers, those trained, and the layers that
 * keep activations (all but frozen ones with nothing trained below), of
 * the full attention kind (kept[0]) and the second (kept[1]). */
static void dt_mem_stage_params(const dt_ctx *c, const dt_stage *g, double lp_dense, double lp_moe,
                                double *all, double *trained, int64_t kept[2])
{
    const int32_t *n = g->n, *a = g->n + DT_ALT;
    double lad = c->lp[2], lam = c->lp[3];
    *all = (double)(n[DT_DENSE] + n[DT_FDENSE]) * lp_dense +
           (double)(n[DT_MOE] + n[DT_FMOE]) * lp_moe;
    *trained = (double)n[DT_DENSE] * lp_dense + (double)n[DT_MOE] * lp_moe;
    bool emb_train = c->m->vocab > 0 && !c->p->task.freeze_emb;
    kept[0] = n[DT_DENSE] + n[DT_MOE] + (emb_train || c->lora ? n[DT_FDENSE] + n[DT_FMOE] : 0);
    kept[1] = a[DT_DENSE] + a[DT_MOE] + (emb_train || c->lora ? a[DT_FDENSE] + a[DT_FMOE] : 0);
    if (dt_stage_alt(g) > 0) {
        *all += (double)(a[DT_DENSE] + a[DT_FDENSE]) * lad + (double)(a[DT_MOE] + a[DT_FMOE]) * lam;
        *trained += (double)a[DT_DENSE] * lad + (double)a[DT_MOE] * lam;
    }
}

/* Inference: the serving replica's memory (kv.c): weights, the
 * activation working set of one step's token budget, the reserve and the
 * KV pool the engine allocates up front; a total above the capacity when
 * not even one request fits (or a static batch does not). */
static void dt_mem_serving(const dt_ctx *c, const dt_stages *st, dt_mem *mem)
{
    memset(mem, 0, sizeof *mem);
    const dt_kv *kv = &mem->kv;
    bool fits = mem->kv_fits = dt_kv_fits(c, st, &mem->kv);
    mem->weights = kv->weights;
    mem->activations = kv->acts;
    mem->kv_cache = kv->pool > 0.0 ? kv->pool : 0.0;
    mem->total = kv->weights + kv->acts + kv->reserve + mem->kv_cache;
    if (!fits && mem->total <= c->hw->mem_capacity_bytes)
        mem->total = nextafter(c->hw->mem_capacity_bytes, (double)INFINITY);
}

void dt_mem_busiest(const dt_ctx *c, const dt_stages *stg, task_recompute rc, dt_mem *mem)
{
    if (c->p->task.kind == TASK_INFERENCE) {
        dt_mem_serving(c, stg, mem);
        return;
    }
    const model_t *m = c->m;
    const stack_desc *st = c->st;
    double lpd = dt_shape_layer_params(c, false), lpm = dt_shape_layer_params(c, true);
    double lp = fmax(lpd, m->d.experts > 0 ? lpm : 0.0);
    if (c->alt != DT_KIND_FULL) /* the largest layer: either attention kind */
        lp = fmax(lp, fmax(c->lp[2], m->d.experts > 0 ? c->lp[3] : 0.0));
    double n = (double)c->zs;
    bool wide = c->ab > 2.0; /* 32-bit compute: the parameters are the master */
    double pbytes = wide ? 4.0 : st->param_bytes, mbytes = wide ? 0.0 : st->master_bytes;
    double gather = wide ? 4.0 : 2.0;
    double act_layer = dt_mem_act_bytes(c, rc);
    double act_full_layer = rc == TASK_RECOMPUTE_FULL ? dt_mem_act_bytes(c, TASK_RECOMPUTE_NONE) : 0.0;
    double act_alt = c->alt != DT_KIND_FULL ? dt_mem_act_kind(c, rc, true) : 0.0;
    /* the logits, the loss's copy of them and their gradient, as the
     * stack's loss holds them */
    double logits = c->tok * (double)m->vocab / (double)c->d.tp *
                    (c->ab > 2.0 ? c->st->logit_bytes * 2.0 : c->st->logit_bytes);
    bool emb_train = m->vocab > 0 && !(c->p->task.kind == TASK_FINETUNE && c->p->task.freeze_emb);
    memset(mem, 0, sizeof *mem);
    for (int64_t s = 0; s < c->d.pp; s++) {
        /* a middle stage holding the layers of the one before it needs no
         * more memory (nothing but its micro-batches in flight differ, and
         * they never grow with s): it cannot be the busiest (ties go to
         * the first) */
        if (s > 0 && s < c->d.pp - 1 &&
            memcmp(stg->s[s].n, stg->s[s - 1].n, sizeof stg->s[s].n) == 0)
            continue;
        double all, tr;
        int64_t kept[2];
        dt_mem_stage_params(c, &stg->s[s], lpd, lpm, &all, &tr, kept);
        if (s == 0) {
            all += dt_shape_emb_params(c);
            tr += emb_train ? dt_shape_emb_params(c) : 0.0;
        }
        if (s == c->d.pp - 1) {
            double hp = dt_shape_head_params(c);
            all += hp;
            tr += (m->d.untied_embeddings || emb_train) ? hp : 0.0;
        }
        /* experts' states shard over the expert data-parallel group */
        const int32_t *sn = stg->s[s].n;
        double ex_all = (double)dt_stage_layers(&stg->s[s], true) * dt_shape_expert_params(c);
        double ex_tr = (double)(sn[DT_MOE] + sn[DT_MOE + DT_ALT]) * dt_shape_expert_params(c);
        double ne = (double)c->zse;
        double opt = (mbytes + st->optimizer_bytes) * tr, grads = st->grad_bytes * tr;
        if (c->d.zero >= 1)
            opt = (mbytes + st->optimizer_bytes) * ((tr - ex_tr) / n + ex_tr / ne);
        if (c->d.zero >= 2)
            grads = st->grad_bytes * ((tr - ex_tr) / n + ex_tr / ne);
        double weights = pbytes * all;
        if (c->d.zero >= 3) {
            weights = pbytes * ((all - ex_all) / n + ex_all / ne);
            weights += (1.0 + (double)st->zero3_prefetch) * lp * gather;
            if (!c->z3_reshard)
                weights += (all - lp) * gather;
            grads += lp * c->gbytes;
            if (!c->z3_rs_mb) /* reduced after the last micro-batch: kept whole until then */
                grads += (all - lp) * gather;
        }
        double inflight = dt_pipe_inflight(c, s);
        double acts = (double)kept[0] * act_layer * inflight + act_full_layer;
        if (kept[1] > 0) /* layers of the second attention kind */
            acts += (double)kept[1] * act_alt * inflight;
        if (s == c->d.pp - 1 && m->vocab > 0)
            acts += logits;
        if (s == c->d.pp - 1) /* multi-token prediction: its layers and logits */
            acts += (double)m->d.mtp_layers * (act_layer * inflight + logits);
        double total = weights + grads + opt + acts + st->reserve_bytes;
        if (s == 0 || total > mem->total) {
            mem->weights = weights;
            mem->grads = grads;
            mem->optimizer = opt;
            mem->activations = acts;
            mem->kv_cache = 0.0;
            mem->total = total;
            mem->stage = s;
        }
    }
}

double dt_mem_capacity(const dt_ctx *c)
{
    double f = c->t->memory_fraction > 0.0 ? c->t->memory_fraction : 1.0;
    return c->hw->mem_capacity_bytes * f;
}

void dt_mem_fit(dt_ctx *c, const dt_stages *st, task_recompute want, dt_mem *mem)
{
    double cap = dt_mem_capacity(c);
    if (c->p->task.kind == TASK_INFERENCE) {
        c->rc = TASK_RECOMPUTE_NONE;
    } else if (want == TASK_RECOMPUTE_AUTO) {
        static const task_recompute modes[3] = {TASK_RECOMPUTE_NONE, TASK_RECOMPUTE_SELECTIVE,
                                                TASK_RECOMPUTE_FULL};
        for (int i = 0; i < 3; i++) {
            c->rc = modes[i];
            dt_mem_busiest(c, st, c->rc, mem);
            if (mem->total <= cap)
                return;
        }
        return;
    } else {
        c->rc = want;
    }
    dt_mem_busiest(c, st, c->rc, mem);
}
