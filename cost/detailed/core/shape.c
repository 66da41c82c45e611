/*
 * shape.c - what a transformer holds and computes: the attention
 * projections' shapes (grouped-query or multi-head latent attention) at
 * a tensor-parallel degree, parameters (total, and per device for a
 * strategy: a dense and a MoE layer, the routed experts, the embedding,
 * the output head with multi-token prediction), model FLOPs per sequence
 * (what utilization counts as work). dt_shape_fill computes the
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

void detailed_params(const model_t *m, const task_detailed_t *t, double *total,
                     double *per_device)
{
    double h = (double)m->hidden, mats = dt_shape_mlp_mats(m);
    double dense_mlp = mats * h * (double)m->ffn;
    double expert = mats * h * dt_shape_expert_ffn(m);
    double moe_l = dt_shape_moe_layers(m), dense_l = (double)m->layers - moe_l;
    double shared = (double)m->d.shared_experts * expert +
                    h * (double)m->d.experts; /* router */
    double attn = dt_shape_attn_params(m);
    /* multi-token prediction: a layer of the last kind and its 2h x h
     * projection per module (embedding and head shared) */
    double last_mlp = moe_l > 0.0 ? shared + (double)m->d.experts * expert : dense_mlp;
    double mtp = (double)m->d.mtp_layers * (attn + last_mlp + 2.0 * h * h);
    double tot = (double)m->layers * attn + dense_l * dense_mlp +
                 moe_l * (shared + (double)m->d.experts * expert) +
                 dt_shape_emb_total(m) + mtp;
    *total = tot;
    double tp = (double)(t->tp > 0 ? t->tp : 1), pp = (double)(t->pp > 0 ? t->pp : 1);
    double ep = (double)(t->ep > 0 ? t->ep : 1);
    double per = ((double)m->layers * attn + dense_l * dense_mlp +
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
}

double detailed_attn_params(const model_t *m)
{
    return dt_shape_attn_params(m);
}

static double dt_shape_layer_params_of(const dt_ctx *c, bool moe)
{
    const model_t *m = c->m;
    double tp = (double)c->d.tp, h = (double)m->hidden, mats = dt_shape_mlp_mats(m);
    double p = c->as.params; /* the shape at tp (dt_shape_fill: first) */
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

static double dt_shape_head_params_of(const dt_ctx *c)
{
    /* untied: its own matrix; tied: the last stage keeps a copy of the
     * word embedding when it is not also the first */
    const model_t *m = c->m;
    double h = (double)m->hidden, tp = (double)c->d.tp;
    double mtp =
        m->d.mtp_layers > 0
            ? (double)m->d.mtp_layers *
                  (dt_shape_layer_params_of(c, m->d.experts > 0 && m->d.dense_layers < m->layers) +
                   2.0 * h * h / tp)
            : 0.0;
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
    double core = 2.0 * s * (double)m->heads * (as.dqk + as.dv) * (double)m->layers *
                  (causal_half && m->causal ? 0.5 : 1.0);
    return s * (per_token + core * (1.0 + (double)m->d.mtp_layers / (double)m->layers));
}

double detailed_model_flops(const model_t *m, bool causal_half)
{
    dt_attn_sh as;
    dt_shape_attn(m, 1.0, &as);
    return dt_shape_model_flops(m, &as, causal_half);
}

void dt_shape_fill(dt_ctx *c)
{
    dt_shape_attn(c->m, (double)c->d.tp, &c->as);
    c->lp[0] = dt_shape_layer_params_of(c, false);
    c->lp[1] = dt_shape_layer_params_of(c, true);
    c->expert_params = dt_shape_expert_params_of(c);
    c->emb_params = dt_shape_emb_params_of(c);
    c->head_params = dt_shape_head_params_of(c);
    dt_shape_attn(c->m, 1.0, &c->as1);
    c->model_flops = dt_shape_model_flops(c->m, &c->as1, true);
}
