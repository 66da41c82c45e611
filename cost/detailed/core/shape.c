/*
 * shape.c - what a transformer holds and computes: the attention
 * projections' shapes (grouped-query or multi-head latent attention) at
 * a tensor-parallel degree, parameters (total, and per device for a
 * strategy: a dense and a MoE layer of either attention kind, the routed
 * experts, the embedding, the output head with multi-token prediction),
 * model FLOPs per sequence (what utilization counts as work). Attention
 * kinds (docs/model.md): full attention (with an output gate, sparse
 * attention's indexer, sinks), sliding windows and Gated DeltaNet as a
 * second kind on the layers the pattern gives it (core.h
 * dt_shape_alt_in: counts in closed form); Gated DeltaNet's work per
 * token and state per sequence (dt_shape_linear), the one source
 * training (llm/layer.c, memory.c) and serving (llm/kv.c, serve/) read. dt_shape_fill computes the
 * context's once per evaluation; detailed.h's detailed_params,
 * detailed_attn_params and detailed_model_flops are the same counts for
 * callers without a context.
 * Invariant: depends on the model and the degrees only, never on a
 * scenario's facts.
 */
#include "core.h"

#include <string.h>

static double dt_shape_emb_total(const model_t *m)
{
    double h = (double)m->hidden;
    double e = (double)m->vocab * h;
    if (m->d.position == MODEL_POS_LEARNED)
        e += (double)m->seq_len * h;
    if (m->d.untied_embeddings)
        e += (double)m->vocab * h;
    return e;
}

/* Attention parameters of all layers (whole): full layers and those of
 * the second kind (a model without one: layers x the full layer's). */
static double dt_shape_attn_all(const model_t *m, double attn)
{
    int64_t na = dt_shape_alt_in(m, 0, m->layers);
    double all = (double)(m->layers - na) * attn;
    if (na > 0) {
        dt_attn_sh a;
        dt_shape_attn_kind(m, 1.0, dt_shape_alt_kind(m), &a);
        all += (double)na * a.params;
    }
    return all;
}

void detailed_params(const model_t *m, const task_detailed_t *t, double *total,
                     double *per_device)
{
    double h = (double)m->hidden, mats = dt_shape_mlp_mats(m);
    double dense_mlp = mats * h * (double)m->ffn;
    double expert = mats * h * dt_shape_expert_ffn(m);
    double moe_l = dt_shape_moe_layers(m), dense_l = (double)m->layers - moe_l;
    double shared = (double)m->d.shared_experts * expert +
                    h * (double)m->d.experts; /* router */
    double attn = dt_shape_attn_params(m), attn_all = dt_shape_attn_all(m, attn);
    /* multi-token prediction: a layer of the last kind (full attention)
     * and its 2h x h projection per module (embedding and head shared) */
    double last_mlp = moe_l > 0.0 ? shared + (double)m->d.experts * expert : dense_mlp;
    double mtp = (double)m->d.mtp_layers * (attn + last_mlp + 2.0 * h * h);
    double tot = attn_all + dense_l * dense_mlp +
                 moe_l * (shared + (double)m->d.experts * expert) +
                 dt_shape_emb_total(m) + mtp;
    *total = tot;
    double tp = (double)(t->tp > 0 ? t->tp : 1), pp = (double)(t->pp > 0 ? t->pp : 1);
    double ep = (double)(t->ep > 0 ? t->ep : 1);
    double per = (attn_all + dense_l * dense_mlp +
                  moe_l * (shared + (double)m->d.experts * expert / ep)) /
                 (tp * pp);
    double emb = (double)m->vocab * h / tp;
    if (m->d.position == MODEL_POS_LEARNED)
        emb += (double)m->seq_len * h / tp;
    if (pp <= 1.0 && m->d.untied_embeddings)
        emb += (double)m->vocab * h / tp;
    *per_device = per + emb;
}

static void dt_shape_attn_gemm(dt_attn_sh *o, double n, double k)
{
    o->gn[o->n] = n;
    o->gk[o->n++] = k;
    o->params += n * k;
}

/* What full (and sliding) attention layers add to their projections:
 * the output gate's columns in the query GEMM (Qwen3-Next/3.5
 * Qwen3NextAttention: q_proj yields heads x 2 head_dim, query and gate),
 * the sparse-attention indexer (DeepSeek-V3.2 Indexer: wq_b from the
 * query latent, wk and weights_proj from the hidden state, replicated
 * over tp as the top-k it selects serves every head), the sinks' logits
 * (one per head). */
static void dt_shape_attn_extra_of(const model_t *m, double tp, dt_attn_sh *o)
{
    double h = (double)m->hidden, at = (double)m->heads / tp;
    if (m->d.attn_output_gate) {
        double g = at * o->dv;
        o->gn[0] += g;
        o->params += g * o->gk[0];
        o->gate = g;
    }
    if (m->d.index_topk > 0) {
        double ih = (double)m->d.index_heads, id = (double)m->d.index_head_dim;
        double ql = (double)m->d.q_lora_rank;
        dt_shape_attn_gemm(o, ih * id, ql > 0.0 ? ql : h);
        dt_shape_attn_gemm(o, id + ih, h);
    }
    if (m->d.attn_sinks)
        o->params += at;
}

static inline void dt_shape_attn_extra(const model_t *m, double tp, dt_attn_sh *o)
{
    if (m->d.attn_output_gate | m->d.attn_sinks | (m->d.index_topk > 0))
        dt_shape_attn_extra_of(m, tp, o);
}

void dt_shape_attn(const model_t *m, double tp, dt_attn_sh *o)
{
    double h = (double)m->hidden, a = (double)m->heads, at = a / tp;
    memset(o, 0, sizeof *o);
    if (m->d.kv_lora_rank <= 0) {
        double dh = dt_shape_head_dim(m);
        double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
        double kvt = kv >= tp ? kv / tp : 1.0;
        dt_shape_attn_gemm(o, (at + 2.0 * kvt) * dh, h);
        dt_shape_attn_gemm(o, h, at * dh);
        o->q = at * dh;
        o->k = o->v = kvt * dh;
        o->dqk = o->dv = dh;
        o->rope = o->q + o->k;
        dt_shape_attn_extra(m, tp, o);
        return;
    }
    /* DeepSeek-V2 (arXiv:2405.04434) section 2.1.2; Megatron-Core
     * multi_latent_attention.py: linear_q_down_proj and
     * linear_kv_down_proj are not tensor-parallel, the up-projections
     * and linear_proj are */
    double ql = (double)m->d.q_lora_rank, kvl = (double)m->d.kv_lora_rank;
    double nope = (double)m->d.qk_nope_head_dim, rope = (double)m->d.qk_rope_head_dim;
    double dv = (double)m->d.v_head_dim, dqk = nope + rope;
    if (ql > 0.0) {
        dt_shape_attn_gemm(o, ql, h);
        dt_shape_attn_gemm(o, at * dqk, ql);
    } else {
        dt_shape_attn_gemm(o, at * dqk, h);
    }
    dt_shape_attn_gemm(o, kvl + rope, h);
    dt_shape_attn_gemm(o, at * (nope + dv), kvl);
    dt_shape_attn_gemm(o, h, at * dv);
    o->q = o->k = at * dqk;
    o->v = at * dv;
    o->dqk = dqk;
    o->dv = dv;
    o->latent = ql + kvl + rope;
    o->rope = (at + 1.0) * rope; /* per-head query parts, one shared key */
    dt_shape_attn_extra(m, tp, o);
}

/* Gated DeltaNet's projections (Qwen3-Next/3.5 Qwen3NextGatedDeltaNet:
 * in_proj_qkvz h -> 2 hk dk + 2 hv dv, in_proj_ba h -> 2 hv, out_proj
 * hv dv -> h; the conv's kernel x channels, A_log and dt_bias per value
 * head, the gated norm's dv; heads split over tp). */
static void dt_shape_attn_linear(const model_t *m, double tp, dt_attn_sh *o)
{
    double h = (double)m->hidden;
    double hk = (double)m->d.linear_key_heads / tp, hv = (double)m->d.linear_value_heads / tp;
    double dk = (double)m->d.linear_key_head_dim, dv = (double)m->d.linear_value_head_dim;
    memset(o, 0, sizeof *o);
    dt_shape_attn_gemm(o, 2.0 * hk * dk + 2.0 * hv * dv, h);
    dt_shape_attn_gemm(o, 2.0 * hv, h);
    dt_shape_attn_gemm(o, h, hv * dv);
    o->params += (2.0 * hk * dk + hv * dv) * (double)m->d.linear_conv_kernel + 2.0 * hv + dv;
    o->q = o->k = hk * dk;
    o->v = hv * dv;
    o->dqk = dk;
    o->dv = dv;
    o->gate = hv * dv; /* z */
}

void dt_shape_attn_kind(const model_t *m, double tp, int kind, dt_attn_sh *o)
{
    if (kind == DT_KIND_LINEAR)
        dt_shape_attn_linear(m, tp, o);
    else
        dt_shape_attn(m, tp, o);
}

void dt_shape_linear(const model_t *m, double tp, double act_bytes, dt_lin_sh *o)
{
    double hk = (double)m->d.linear_key_heads / tp, hv = (double)m->d.linear_value_heads / tp;
    double dk = (double)m->d.linear_key_head_dim, dv = (double)m->d.linear_value_head_dim;
    double sb = m->d.linear_state_bytes > 0 ? (double)m->d.linear_state_bytes : 4.0;
    double C = DT_LIN_CHUNK;
    o->fl_prompt = hv * (2.0 * C * (3.0 * dk + 2.0 * dv) + 6.0 * dk * dv + 2.0 * C * C / 3.0);
    o->fl_decode = hv * 6.0 * dk * dv;
    o->conv = 2.0 * hk * dk + hv * dv;
    o->state = hv * dk * dv * sb +
               (double)(m->d.linear_conv_kernel > 1 ? m->d.linear_conv_kernel - 1 : 0) *
                   o->conv * act_bytes;
    o->chunk_io = 2.0 * hv * dk * dv * act_bytes / C;
}

/* The attention core's forward FLOPs per token of one layer (whole) at
 * `s` tokens, `half`: the causal mean (a query sees half the sequence);
 * full layers through the `as` shape (with sparse attention: the
 * indexer over every key and attention over the top-k), the second
 * kind: a window's keys, or Gated DeltaNet's chunked work. */
static double dt_shape_core(const model_t *m, const dt_attn_sh *as, double s, bool alt,
                            bool half)
{
    double a = (double)m->heads;
    if (alt && dt_shape_alt_kind(m) == DT_KIND_LINEAR) {
        dt_lin_sh l;
        dt_shape_linear(m, 1.0, 2.0, &l);
        return l.fl_prompt;
    }
    double win = alt ? (double)m->d.sliding_window : 0.0;
    double topk = alt ? 0.0 : (double)m->d.index_topk;
    double keys = half ? dt_shape_pairs(0.0, s, win > 0.0 ? win : topk) / s
                       : dt_min(s, win > 0.0 ? win : topk > 0.0 ? topk : s);
    double fl = 2.0 * a * (as->dqk + as->dv) * keys;
    if (topk > 0.0) /* the indexer scores every key */
        fl += 2.0 * (double)m->d.index_heads * (double)m->d.index_head_dim *
              (half ? 0.5 * s : s);
    return fl;
}

double dt_shape_core_flops(const model_t *m, double seq, bool alt)
{
    dt_attn_sh as;
    dt_shape_attn_kind(m, 1.0, alt ? dt_shape_alt_kind(m) : DT_KIND_FULL, &as);
    return dt_shape_core(m, &as, seq, alt, m->causal);
}

double detailed_attn_params(const model_t *m)
{
    return dt_shape_attn_params(m);
}

int64_t detailed_alt_layers(const model_t *m)
{
    return dt_shape_alt_in(m, 0, m->layers);
}

static double dt_shape_layer_params_of(const dt_ctx *c, bool moe, const dt_attn_sh *as)
{
    const model_t *m = c->m;
    double tp = (double)c->d.tp, h = (double)m->hidden, mats = dt_shape_mlp_mats(m);
    double p = as->params; /* the shape at tp (dt_shape_fill: first) */
    if (!moe)
        return p + mats * h * (double)m->ffn / tp;
    double E = (double)m->d.experts, fe = dt_shape_expert_ffn(m) / (double)c->etp;
    p += E / (double)c->d.ep * mats * h * fe + h * E;
    if (m->d.shared_experts > 0) /* shared experts: tensor-parallel as a dense MLP */
        p += mats * h * (double)m->d.shared_experts * dt_shape_expert_ffn(m) / tp;
    return p;
}

static double dt_shape_expert_params_of(const dt_ctx *c)
{
    const model_t *m = c->m;
    if (m->d.experts <= 0)
        return 0.0;
    return (double)m->d.experts / (double)c->d.ep * dt_shape_mlp_mats(m) * (double)m->hidden *
           dt_shape_expert_ffn(m) / (double)c->etp;
}

static double dt_shape_emb_params_of(const dt_ctx *c)
{
    const model_t *m = c->m;
    double e = (double)m->vocab * (double)m->hidden / (double)c->d.tp;
    if (m->d.position == MODEL_POS_LEARNED)
        e += (double)m->seq_len * (double)m->hidden / (double)c->d.tp;
    return e;
}

/* The multi-token-prediction modules' parameters per device: a layer of
 * the last kind (full attention) and its 2h x h projection each. */
static double dt_shape_head_params_of_mtp(const dt_ctx *c)
{
    const model_t *m = c->m;
    double h = (double)m->hidden, tp = (double)c->d.tp;
    return m->d.mtp_layers > 0
               ? (double)m->d.mtp_layers *
                     (dt_shape_layer_params_of(c, m->d.experts > 0 && m->d.dense_layers < m->layers,
                                               &c->as) +
                      2.0 * h * h / tp)
               : 0.0;
}

static double dt_shape_head_params_of(const dt_ctx *c)
{
    /* untied: its own matrix; tied: the last stage keeps a copy of the
     * word embedding when it is not also the first */
    const model_t *m = c->m;
    double h = (double)m->hidden, tp = (double)c->d.tp;
    double mtp = dt_shape_head_params_of_mtp(c);
    if (m->vocab <= 0 || (!m->d.untied_embeddings && c->d.pp == 1))
        return mtp;
    return (double)m->vocab * h / tp + mtp;
}

/* detailed_model_flops with the whole attention's shape (tp 1) in as:
 * its parameters; QK^T over the query/key dimension, PV over the
 * value's. */
static double dt_shape_model_flops(const model_t *m, const dt_attn_sh *a, bool causal_half)
{
    const dt_attn_sh as = *a;
    double h = (double)m->hidden, s = (double)m->seq_len;
    double mats = dt_shape_mlp_mats(m), moe_l = dt_shape_moe_layers(m);
    double dense_l = (double)m->layers - moe_l;
    double attn = as.params;
    double active_expert = (double)(dt_shape_top_k(m) + m->d.shared_experts) * mats *
                           h * dt_shape_expert_ffn(m);
    /* multi-token prediction: per module a layer of the last kind, its
     * projection and the head again */
    double mtp = (double)m->d.mtp_layers *
                 (attn + (moe_l > 0.0 ? active_expert : mats * h * (double)m->ffn) +
                  2.0 * h * h + (double)m->vocab * h);
    double per_token = 2.0 * ((double)m->layers * attn +
                              dense_l * mats * h * (double)m->ffn +
                              moe_l * active_expert + (double)m->vocab * h + mtp);
    bool half = causal_half && m->causal;
    int64_t na = dt_shape_alt_in(m, 0, m->layers);
    if (na == 0 && m->d.index_topk <= 0) {
        double core = 2.0 * s * (double)m->heads * (as.dqk + as.dv) * (double)m->layers *
                      (half ? 0.5 : 1.0);
        return s * (per_token + core * (1.0 + (double)m->d.mtp_layers / (double)m->layers));
    }
    /* attention kinds: the second kind's projections instead of the full
     * one's, and each kind's core (the MTP modules' layers are full) */
    dt_attn_sh alt;
    dt_shape_attn_kind(m, 1.0, dt_shape_alt_kind(m), &alt);
    double nf = (double)(m->layers - na) + (double)m->d.mtp_layers;
    per_token += 2.0 * (double)na * (alt.params - attn);
    double core = nf * dt_shape_core(m, &as, s, false, half) +
                  (na > 0 ? (double)na * dt_shape_core(m, &alt, s, true, half) : 0.0);
    return s * (per_token + core);
}

double detailed_model_flops(const model_t *m, bool causal_half)
{
    dt_attn_sh as;
    dt_shape_attn(m, 1.0, &as);
    return dt_shape_model_flops(m, &as, causal_half);
}

void dt_shape_fill(dt_ctx *c)
{
    const model_t *m = c->m;
    double tp = (double)c->d.tp;
    dt_shape_attn(m, tp, &c->as);
    c->lp[0] = dt_shape_layer_params_of(c, false, &c->as);
    c->lp[1] = dt_shape_layer_params_of(c, true, &c->as);
    c->alt = dt_shape_alt_kind(m);
    if (c->alt != DT_KIND_FULL) {
        dt_shape_attn_kind(m, tp, c->alt, &c->asa);
        dt_shape_attn_kind(m, 1.0, c->alt, &c->asa1);
        c->lp[2] = dt_shape_layer_params_of(c, false, &c->asa);
        c->lp[3] = dt_shape_layer_params_of(c, true, &c->asa);
        if (c->alt == DT_KIND_LINEAR)
            dt_shape_linear(m, tp, c->ab, &c->lin);
    } else { /* no second kind: nothing reads its shapes but their (zero) parameters */
        c->asa.params = c->asa1.params = 0.0;
        c->lp[2] = c->lp[0];
        c->lp[3] = c->lp[1];
    }
    c->expert_params = dt_shape_expert_params_of(c);
    c->emb_params = dt_shape_emb_params_of(c);
    c->head_params = dt_shape_head_params_of(c);
    c->mtp_params = dt_shape_head_params_of_mtp(c);
    dt_shape_attn(c->m, 1.0, &c->as1);
    c->model_flops = dt_shape_model_flops(c->m, &c->as1, true);
}
