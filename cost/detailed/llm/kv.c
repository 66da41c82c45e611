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
 * Hybrid models: seq counts the full layers' KV over the request's
 * blocks, sliding-window layers' over at most the window and a block,
 * linear-attention layers' state (fixed per request), sparse attention's
 * indexer keys beside the latent, under the engine's rule for pools of
 * several kinds (dt_kv_seq_cost, stack.h).
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

/* What a stage holds per request beyond the full layers' KV (bytes per
 * device): a token of its sliding-window layers (win_tok, each holding
 * at most `win` tokens), the state of its linear-attention layers
 * (state). */
typedef struct dt_kv_alt {
    double win_tok, win, state;
} dt_kv_alt;

/* Pool bytes one request costs under the engine's rule for hybrid
 * models (stack.h; docs/serving.md, "Hybrid models"): full layers' tok
 * bytes per token over `blocks` tokens, the window layers' over at most
 * the window and a block (vLLM's sliding-window manager frees the blocks
 * that leave it), the linear layers' state. SGLang sizes a window pool
 * of ratio r times the full pool's tokens (sglang@001ccef0 python/sglang/
 * srt/model_executor/model_runner_kv_cache_mixin.py set_num_tokens_
 * hybrid_swa: full_tokens = memory / (F n_full + r S n_swa)) and a state
 * pool of rho / (1 + rho) of the memory, `slots` states a running
 * request (handle_max_mamba_cache, calculate_mamba_ratio); TensorRT-LLM
 * a pool per window size, shares in proportion to window x bytes per
 * token (NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/
 * kvCacheManager.cpp BlockManager::calculateWindowSizeToShare), the
 * full layers' window the request's whole length M. */
static double dt_kv_seq_cost(const stack_desc *s, double tok, double blocks, double M,
                             double block, const dt_kv_alt *a)
{
    double seq = tok * blocks;
    if (a->win_tok > 0.0) {
        double wt = dt_min(blocks, (ceil(a->win / block) + 1.0) * block);
        double r = s->swa_full_tokens_ratio;
        if (r > 0.0)
            seq = (tok + r * a->win_tok) * dt_max(blocks, wt / r);
        else if (s->swa_share_by_window)
            seq = (tok * M + a->win_tok * a->win) * dt_max(blocks / M, wt / a->win);
        else
            seq += a->win_tok * wt;
    }
    if (a->state > 0.0) {
        double rho = s->linear_memory_ratio;
        double st = a->state * (s->linear_slots > 0.0 ? s->linear_slots : 1.0);
        seq = rho > 0.0 ? dt_max(seq * (1.0 + rho), st * (1.0 + rho) / rho) : seq + st;
    }
    return seq;
}

/* Weight bytes per device of stage g's layers whose parameters are w (at
 * wb bytes each; nf full-attention layers, na of the second kind, each
 * with its projections at attention DP's width, more_f and more_a more
 * than at tp): each part in the precision the model keeps it in
 * (model.d.*_weight_precision), the rest at wb. */
static double dt_kv_stage_weights(const dt_ctx *c, const dt_stage *g, double wb, double w,
                                  double nf, double na, double more_f, double more_a)
{
    const model_t *m = c->m;
    if (!(m->d.attn_weight_precision | m->d.dense_weight_precision |
          m->d.expert_weight_precision))
        return wb * w;
    double attn = nf * (c->as.params + more_f) + na * (c->asa.params + more_a);
    double experts = (double)dt_stage_layers(g, true) * dt_shape_expert_params(c);
    double ba = dt_kv_part_bytes(c, m->d.attn_weight_precision);
    double bd = dt_kv_part_bytes(c, m->d.dense_weight_precision);
    double be = dt_kv_part_bytes(c, m->d.expert_weight_precision);
    return ba * attn + be * experts + bd * (w - attn - experts);
}

void dt_kv_init(const dt_ctx *c, const dt_stages *st, bool reserve, dt_kv *kv)
{
    const model_t *m = c->m;
    const stack_desc *s = c->st;
    double tp = (double)c->d.tp, h = (double)m->hidden;
    double lpd = dt_shape_layer_params(c, false), lpm = dt_shape_layer_params(c, true);
    double wb = dt_kv_bytes_per_weight(c);
    double adp = dt_kv_attn_dp(c), ta = tp / adp;
    double kvcols = dt_shape_kv_cols(m, ta) / adp; /* GQA K+V, or MLA's latent */
    double attn_more = 0.0, alt_more = 0.0; /* attention DP: projections at ta, not tp */
    if (adp > 1.0) {
        dt_attn_sh a1, a2;
        dt_shape_attn(m, ta, &a1);
        dt_shape_attn(m, tp, &a2);
        attn_more = a1.params - a2.params;
        if (c->alt != DT_KIND_FULL) {
            dt_shape_attn_kind(m, ta, c->alt, &a1);
            alt_more = a1.params - c->asa.params;
        }
    }
    /* sparse attention's indexer keys: index_head_dim FP8 values and an
     * FP32 scale per 128 a token and full layer, replicated over tp as
     * the latent (sglang model_runner_kv_cache_mixin.py
     * get_cell_size_per_token: index_head_dim + index_head_dim / 128 * 4) */
    double idx = m->d.index_topk > 0 ? ((double)m->d.index_head_dim +
                                        ceil((double)m->d.index_head_dim / 128.0) * 4.0) / adp
                                     : 0.0;
    dt_lin_sh lin;
    lin.state = 0.0;
    if (c->alt == DT_KIND_LINEAR) /* each rank its requests' states, heads at ta */
        dt_shape_linear(m, ta, c->ab, &lin);
    double max_seqs = dt_kv_max_seqs(c) * adp;
    hw_dtype kvd = dt_kv_dtype(c);
    double K = dt_kv_budget(c);
    double cols = m->d.experts > 0 ? (double)dt_shape_top_k(m) * dt_shape_expert_ffn(m) : (double)m->ffn;
    /* logits of the sequences one step samples, as the engines' memory
     * profiling sizes them: at most max_seqs, the budget, and 1024 (vLLM
     * profiles max_num_seqs 1024 on >= 70 GiB GPUs; SGLang samples a
     * CUDA-graph batch of at most 512-1024) */
    double sampled = dt_min(dt_min(dt_kv_max_seqs(c), K), 1024.0);
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
        const int32_t *an = g->n + DT_ALT;
        double na = c->alt != DT_KIND_FULL ? (double)dt_stage_alt(g) : 0.0;
        double nl = (double)(dt_stage_layers(g, false) + dt_stage_layers(g, true));
        double nf = nl - na; /* full-attention layers */
        double w = (double)(g->n[DT_DENSE] + g->n[DT_FDENSE]) * lpd +
                   (double)(g->n[DT_MOE] + g->n[DT_FMOE]) * lpm + nf * attn_more;
        if (na > 0.0) /* layers of the second attention kind */
            w += (double)(an[DT_DENSE] + an[DT_FDENSE]) * c->lp[2] +
                 (double)(an[DT_MOE] + an[DT_FMOE]) * c->lp[3] + na * alt_more;
        /* the MTP modules are loaded only to draft with (vLLM, SGLang and
         * TensorRT-LLM skip their weights otherwise) */
        double head = dt_shape_head_params(c) - (c->t->spec_tokens > 0 ? 0.0 : c->mtp_params);
        double ends = (i == 0 ? dt_shape_emb_params(c) : 0.0) + (i == c->d.pp - 1 ? head : 0.0);
        double weights = dt_kv_stage_weights(c, g, wb, w, nf, na, attn_more, alt_more) +
                         (wb < c->ab ? c->ab : wb) * ends;
        /* attention DP: the MLP's intermediates for the adp ranks'
         * gathered budgets */
        double acts = (adp > 1.0 ? K * 4.0 * h + adp * K * 3.0 * cols / tp
                                 : K * (4.0 * h + 3.0 * cols / tp)) * c->ab +
                      (i == c->d.pp - 1 ? sampled * (double)m->vocab / tp * 4.0 : 0.0);
        double f = s->mem_fraction.v;
        double pool = s->mem_fraction_of_free ? f * (cap - weights - acts - s->reserve_bytes)
                      : s->mem_fraction_static ? f * cap - weights - s->reserve_bytes
                                               : f * cap - weights - acts - s->reserve_bytes;
        double tok = nf * kvcols * hw_dtype_bytes(kvd) / (double)c->d.cp;
        dt_kv_alt alt = {0};
        if (idx > 0.0)
            tok += nf * idx / (double)c->d.cp;
        if (na > 0.0 && c->alt == DT_KIND_SLIDING) {
            alt.win_tok = na * kvcols * hw_dtype_bytes(kvd) / (double)c->d.cp;
            alt.win = (double)m->d.sliding_window;
        } else if (na > 0.0) {
            alt.state = na * lin.state / adp;
        }
        double seq = na > 0.0 ? dt_kv_seq_cost(s, tok, blocks, prompt + out,
                                               (double)s->kv_block, &alt)
                              : tok * blocks;
        double per = pool / seq;
        if (least < 0.0 || per < least) {
            least = per > 0.0 ? per : 0.0;
            kv->weights = weights;
            kv->acts = acts;
            kv->reserve = s->reserve_bytes;
            kv->pool = pool;
            kv->tok_bytes = tok + alt.win_tok;
            kv->state_bytes = alt.state;
            kv->seq_bytes = seq;
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
