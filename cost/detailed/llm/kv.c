/*
 * kv.c - the KV cache of a serving replica and the concurrency it
 * admits (docs/serving.md, "Concurrency from KV
 * capacity"):
 *   pool   = f_mem x HBM - weights - A(K) - reserve (vLLM: a fraction
 *            of the total memory for weights, activations and KV),
 *            f_mem x HBM - weights - reserve (SGLang: mem_fraction_static
 *            holds weights and the KV pool, the activations and CUDA
 *            graphs use the rest), or f_kv x (HBM - weights - A(K) -
 *            reserve) (TensorRT-LLM: of the free memory);
 *   A(K)   the activation working set of one step of the engine's token
 *            budget K (one layer's hidden states, QKV and MLP
 *            intermediates) and the logits of the sequences sampled;
 *   seq    KV bytes one request holds: blocks of the engine's size over
 *            prompt + output (reserve on admission) or over its mean
 *            occupancy prompt + output / 2 (allocation on demand), plus
 *            the share r of its remaining output (output / 2 on average)
 *            that the engine keeps free for it when it admits others
 *            (SGLang's new_token_ratio);
 *   C_max  = min(max_seqs, floor(pool / seq)).
 * The KV cache is in its own precision (task kv_precision), weights in
 * theirs (weight_precision: 16, 8 or 4 bits with group scales) except the
 * word embedding and the output head, which quantized checkpoints keep
 * in the activations' precision (TensorRT-LLM's quantization excludes
 * lm_head by default, ModelOpt FP8 and AWQ/GPTQ checkpoints keep
 * embed_tokens and lm_head in BF16, vLLM quantizes neither unless told);
 * the busiest pipeline stage decides. Attention data parallelism (task
 * attn_dp = N): each rank holds its own requests' KV at attention's
 * tensor parallelism tp/N (per token of the replica 1/N of it; MLA's
 * latent, replicated by TP, is held once), the attention projections'
 * weights at tp/N, N schedulers admit max_seqs each, and the MLP works on
 * their N budgets gathered.
 * Invariant: no uncertain fact moves the capacity: a serving run and its
 * band share it.
 */
#include "llm.h"

#include <math.h>
#include <string.h>

void dt_kv_init(const dt_ctx *c, const dt_stages *st, bool reserve, dt_kv *kv)
{
    const model_t *m = c->m;
    const stack_desc *s = c->st;
    double tp = (double)c->d.tp, h = (double)m->hidden;
    double lpd = dt_shape_layer_params(c, false), lpm = dt_shape_layer_params(c, true);
    double wb = dt_kv_bytes_per_weight(c);
    double adp = dt_kv_attn_dp(c), ta = tp / adp;
    double kvcols = dt_shape_kv_cols(m, ta) / adp; /* GQA K+V, or MLA's latent */
    double attn_more = 0.0; /* attention DP: a layer's projections at ta, not tp */
    if (adp > 1.0) {
        dt_attn_sh a1, a2;
        dt_shape_attn(m, ta, &a1);
        dt_shape_attn(m, tp, &a2);
        attn_more = a1.params - a2.params;
    }
    double max_seqs = (double)s->max_seqs * adp;
    hw_dtype kvd = dt_kv_dtype(c);
    double K = (double)s->token_budget;
    double cols = m->d.experts > 0 ? (double)dt_shape_top_k(m) * dt_shape_expert_ffn(m) : (double)m->ffn;
    /* logits of the sequences one step samples, as the engines' memory
     * profiling sizes them: at most max_seqs, the budget, and 1024 (vLLM
     * profiles max_num_seqs 1024 on >= 70 GiB GPUs; SGLang samples a
     * CUDA-graph batch of at most 512-1024) */
    double sampled = dt_min(dt_min((double)s->max_seqs, K), 1024.0);
    double prompt = (double)(c->t->prompt_tokens > 0 ? c->t->prompt_tokens : m->seq_len);
    double out = (double)c->t->decode_tokens;
    /* a request reserving its whole length holds it for its lifetime:
     * over the running set, out x 2 dt_kv_grown (length-biased) */
    double grown = dt_kv_grown(c);
    double len = reserve ? prompt + 2.0 * grown * out : prompt + grown * out * (1.0 + s->kv_output_reserve.v);
    double blocks = ceil(len / (double)s->kv_block) * (double)s->kv_block;
    double cap = c->hw->mem_capacity_bytes;
    memset(kv, 0, sizeof *kv);
    double least = -1.0;
    for (int64_t i = 0; i < c->d.pp; i++) {
        const dt_stage *g = &st->s[i];
        double nl = (double)(g->n[DT_DENSE] + g->n[DT_FDENSE] + g->n[DT_MOE] + g->n[DT_FMOE]);
        double w = (double)(g->n[DT_DENSE] + g->n[DT_FDENSE]) * lpd +
                   (double)(g->n[DT_MOE] + g->n[DT_FMOE]) * lpm + nl * attn_more;
        double ends = (i == 0 ? dt_shape_emb_params(c) : 0.0) +
                      (i == c->d.pp - 1 ? dt_shape_head_params(c) : 0.0);
        double weights = wb * w + (wb < c->ab ? c->ab : wb) * ends;
        /* attention DP: the MLP's intermediates for the adp ranks'
         * gathered budgets */
        double acts = (adp > 1.0 ? K * 4.0 * h + adp * K * 3.0 * cols / tp
                                 : K * (4.0 * h + 3.0 * cols / tp)) * c->ab +
                      (i == c->d.pp - 1 ? sampled * (double)m->vocab / tp * 4.0 : 0.0);
        double f = s->mem_fraction.v;
        double pool = s->mem_fraction_of_free ? f * (cap - weights - acts - s->reserve_bytes)
                      : s->mem_fraction_static ? f * cap - weights - s->reserve_bytes
                                               : f * cap - weights - acts - s->reserve_bytes;
        double tok = nl * kvcols * hw_dtype_bytes(kvd) / (double)c->d.cp;
        double per = pool / (tok * blocks);
        if (least < 0.0 || per < least) {
            least = per > 0.0 ? per : 0.0;
            kv->weights = weights;
            kv->acts = acts;
            kv->reserve = s->reserve_bytes;
            kv->pool = pool;
            kv->tok_bytes = tok;
            kv->seq_bytes = tok * blocks;
            double n = per > 0.0 ? floor(per) : 0.0;
            kv->cmax = (int64_t)(n < max_seqs ? n : max_seqs);
        }
    }
}

bool dt_kv_fits(const dt_ctx *c, const dt_stages *st, dt_kv *kv)
{
    bool stat = c->t->scheduler == TASK_SCHED_STATIC;
    dt_kv_init(c, st, stat || c->st->kv_reserve, kv);
    if (kv->cmax < 1)
        return false;
    /* a static batch is admitted whole */
    return !stat || c->d.mb <= kv->cmax;
}
