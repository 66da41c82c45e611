/*
 * model.h - descriptions of the models the cost model evaluates.
 *
 * A model_t is a plain value (no pointers, no heap) so a sweep can copy
 * and decode points freely. Raw architecture figures are set by the
 * loader; model_derive() fills the derived counts (parameters, FLOPs and
 * lookup bytes per sample) with the formulas of the MAD-Max reference:
 *   DLRM: square MLP layers of mlp_dim^2 parameters, 2 FLOPs per parameter
 *         per sample; lookups of tables * pooling * emb_dim * bytes.
 *   LLM:  4 h^2 attention and 2 h f FC parameters per layer, 2 FLOPs per
 *         parameter per token; word (vocab * h) and position (seq * h)
 *         embeddings; lookups of 2 * seq * h * bytes per sample.
 * Invariant after a successful model_derive(): every count is finite and
 * positive where the architecture requires it.
 */
#ifndef MADSWEEP_MODEL_H
#define MADSWEEP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#define MODEL_NAME_MAX 64
#define MODEL_MLP_MAX 16 /* DLRM MLP widths (detailed fidelity) */
#define MODEL_TABLES_MAX 64 /* DLRM tables listed one by one (detailed fidelity) */

typedef enum model_kind { MODEL_DLRM = 0, MODEL_LLM = 1 } model_kind;

typedef enum model_mlp { MODEL_MLP_GELU = 0, MODEL_MLP_SWIGLU = 1 } model_mlp;

/* Detailed fidelity only: architecture family, position encoding and
 * mixture-of-experts figures (madmax ignores all of them). */
typedef enum model_arch {
    MODEL_ARCH_GPT = 0,
    MODEL_ARCH_LLAMA = 1,
    MODEL_ARCH_MPT = 2,
    MODEL_ARCH_BLOOM = 3,
    MODEL_ARCH_VIT = 4,
    MODEL_ARCH_MIXTRAL = 5,
    MODEL_ARCH_DEEPSEEK = 6,
    MODEL_NARCHS = 7
} model_arch;

/* DLRM feature interaction (detailed fidelity). */
typedef enum model_interaction {
    MODEL_INTERACTION_DOT = 0,  /* pairwise dots of the tables + 1 vectors (Naumov et al. 2019) */
    MODEL_INTERACTION_DCNV2 = 1 /* low-rank cross layers on their concatenation (Wang et al. 2021) */
} model_interaction;

typedef enum model_position {
    MODEL_POS_LEARNED = 0,
    MODEL_POS_ROPE = 1,
    MODEL_POS_ALIBI = 2,
    MODEL_POS_NONE = 3
} model_position;

typedef struct model_detailed_t {
    model_arch arch;
    model_position position;
    bool untied_embeddings;  /* output head has its own vocab x h matrix */
    int dropout;             /* dropout layers (masks kept): 1 yes, 0 no,
                                -1 the architecture's default (gpt, bloom,
                                vit: yes; llama, mpt, mixtral, deepseek: no) */
    int64_t experts;         /* routed experts per MoE layer (0: dense) */
    int64_t top_k;           /* experts per token */
    int64_t shared_experts;  /* always-active experts (DeepSeek) */
    int64_t expert_ffn;      /* FFN dimension of one expert */
    int64_t dense_layers;    /* leading layers that stay dense (MoE) */
    int64_t head_dim;        /* per-head dimension (0: hidden / heads);
                                Qwen3 sets 128 with heads x head_dim != hidden */
    bool qk_norm;            /* RMSNorm over each query and key head before
                                RoPE (Qwen3 q_norm/k_norm, Megatron-Core
                                --qk-layernorm): two element-wise kernels */
    /* Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank > 0
     * turns it on): queries through a rank-q_lora_rank bottleneck (0: a
     * full projection), keys and values through a shared rank-
     * kv_lora_rank latent; per head qk_nope_head_dim + qk_rope_head_dim
     * query/key dimensions (the RoPE key shared by the heads) and
     * v_head_dim value dimensions */
    int64_t q_lora_rank;
    int64_t kv_lora_rank;
    int64_t qk_nope_head_dim;
    int64_t qk_rope_head_dim;
    int64_t v_head_dim;
    /* multi-token prediction modules (DeepSeek-V3: 1): each one more
     * transformer layer of the last layer's kind, a 2h x h projection of
     * the normed hidden state and the next token's embedding, and the
     * shared output head and loss again, on the last pipeline stage */
    int64_t mtp_layers;
    /* Attention kinds (docs/model.md, "Attention kinds"): layer i (from
     * 0) is full attention when (i + 1) % full_attention_interval == 0
     * (Hugging Face's full_attention_interval and layer_types: gpt-oss
     * 2, Qwen3.5 4; 1: every layer; 0: none), the others of the model's
     * second kind: sliding-window attention over the last
     * sliding_window tokens (> 0), or Gated DeltaNet linear attention
     * (linear_value_heads > 0: a recurrent state per sequence instead of
     * a KV cache, Yang et al. 2024, arXiv:2412.06464). Without either
     * every layer is full attention (the interval is then ignored).
     * Counts per pipeline stage follow from the pattern in closed form
     * (core.h dt_shape_alt_in), never from a per-layer list. */
    int64_t sliding_window;
    int64_t full_attention_interval;
    int64_t linear_key_heads, linear_value_heads;       /* q/k heads, v heads */
    int64_t linear_key_head_dim, linear_value_head_dim;
    int64_t linear_conv_kernel;   /* causal depthwise conv width (Qwen3.5: 4) */
    int64_t linear_state_bytes;   /* bytes per recurrent-state element (mamba_ssm_dtype:
                                     4 float32, 2 bfloat16; 0: 4) */
    bool attn_sinks;              /* a learned sink logit per head in the softmax
                                     (gpt-oss): heads parameters, one key more */
    bool attn_output_gate;        /* sigmoid gate on the attention output: the query
                                     projection also yields heads x head_dim gate
                                     columns (Qwen3-Next/3.5 attn_output_gate) */
    /* DeepSeek sparse attention (DeepSeek-V3.2; index_topk > 0): on each
     * full-attention layer an indexer of index_heads heads of
     * index_head_dim scores every cached key (its own key cache of
     * index_head_dim FP8 values and a scale per token), and attention
     * reads only the index_topk keys it selects */
    int64_t index_topk, index_heads, index_head_dim;
    /* Stored precision per part of the checkpoint (TASK_W_*; 0: the
     * task's weight_precision): attention projections, dense MLPs (and
     * shared experts), routed experts (gpt-oss: MXFP4 experts beside
     * BF16 attention, quantization_config.modules_to_not_convert) */
    int attn_weight_precision, dense_weight_precision, expert_weight_precision;
    /* DLRM: MLP widths. bot_mlp[0] is the dense-feature input, the last
     * bottom width the bottom output (= emb_dim for the dot interaction);
     * top_mlp lists the top layers' output widths (input: the
     * interaction's emb_dim + tables (tables + 1) / 2 features). */
    int bot_n, top_n;
    int64_t bot_mlp[MODEL_MLP_MAX];
    int64_t top_mlp[MODEL_MLP_MAX];
    /* DLRM interaction: dot, or DCNv2 = cross_layers layers
     * x_{l+1} = x0 * (U_l V_l^T x_l + b_l) + x_l of rank cross_rank on
     * x0 = the (tables + 1) emb_dim concatenation, feeding the top MLP */
    int interaction;          /* model_interaction */
    int64_t cross_layers, cross_rank;
    /* DLRM tables one by one (n_tables > 0; rows_per_table and pooling
     * then hold their means, rounded up, for the uniform formulas) */
    int n_tables;
    int64_t table_rows[MODEL_TABLES_MAX];
    int32_t table_pooling[MODEL_TABLES_MAX];
} model_detailed_t;

typedef struct model_t {
    char name[MODEL_NAME_MAX];
    model_kind kind;
    int64_t bytes_per_dense_param; /* selects the FLOPS peak: 8/4/2/1 */
    int64_t bytes_per_emb_param;

    /* DLRM */
    int64_t bot_mlp_layers;
    int64_t top_mlp_layers;
    int64_t mlp_dim;
    int64_t tables;
    int64_t rows_per_table;
    int64_t emb_dim;
    int64_t pooling;

    /* LLM (transformer) */
    int64_t layers;
    int64_t heads;
    int64_t kv_heads;   /* detailed fidelity; madmax ignores it */
    int64_t hidden;     /* attention / model dimension */
    int64_t ffn;        /* FC (feed-forward) dimension */
    int64_t seq_len;    /* tokens per sample */
    int64_t vocab;      /* word-embedding rows */
    model_mlp mlp;      /* detailed fidelity; madmax ignores it */
    bool causal;        /* detailed fidelity; madmax ignores it */

    /* derived by model_derive() */
    double dense_params;      /* MLP or transformer parameters */
    double emb_params;        /* embedding-table parameters */
    double total_params;
    double layer_params;      /* DLRM: one MLP layer */
    double attn_layer_params; /* LLM: one attention block */
    double fc_layer_params;   /* LLM: one FC block */
    double layer_flops;       /* DLRM: FLOPs per sample of one MLP layer */
    double attn_layer_flops;  /* LLM: FLOPs per sample of one attention */
    double fc_layer_flops;    /* LLM: FLOPs per sample of one FC block */
    double total_flops;       /* forward FLOPs per sample */
    double lookup_bytes;      /* embedding bytes read per sample */

    model_detailed_t d;       /* detailed fidelity (appended) */
} model_t;

/* Fills the derived fields. Returns STATUS_INVALID_VALUE when a required
 * figure is not positive, with *bad set to the name of the first such
 * field (a loader key name). */
status_code model_derive(model_t *m, const char **bad);

/* "dlrm" / "llm"; model_kind_parse returns -1 for an unknown name. */
const char *model_kind_name(model_kind k);
int model_kind_parse(const char *s);

#endif
