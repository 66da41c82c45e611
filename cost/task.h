/*
 * task.h - what is run on the system: the task type, per-component plans,
 * batch sizes and (for fine-tuning) which parts are frozen.
 *
 * Components: the dense part (DLRM MLPs or LLM transformer layers) and the
 * embeddings. Local batches are per device and per component, as in the
 * MAD-Max reference; the global batch follows from the plans' replication
 * factors and must agree between components.
 */
#ifndef MADSWEEP_TASK_H
#define MADSWEEP_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

typedef enum task_kind {
    TASK_PRETRAIN = 0,
    TASK_FINETUNE = 1,
    TASK_INFERENCE = 2,
    TASK_NKINDS = 3
} task_kind;

/* Detailed fidelity: one strategy as Megatron-style degrees. Devices are
 * ordered by `layout` (default tp innermost, then cp, dp, pp outermost);
 * the expert-parallel group lies inside dp x cp. Zero means "default" for the
 * optional figures (see detailed.h). */
typedef enum task_recompute {
    TASK_RECOMPUTE_NONE = 0,
    TASK_RECOMPUTE_SELECTIVE = 1, /* what the stack's selective mode recomputes */
    TASK_RECOMPUTE_FULL = 2,
    TASK_RECOMPUTE_AUTO = 3       /* the least of the three whose memory fits */
} task_recompute;

typedef enum task_schedule {
    TASK_SCHEDULE_1F1B = 0,        /* interleaved when vpp > 1 */
    TASK_SCHEDULE_GPIPE = 1
} task_schedule;

typedef enum task_attention {
    TASK_ATTENTION_STACK = -1,     /* the software stack's kernel */
    TASK_ATTENTION_FLASH = 0,      /* FlashAttention-2-class kernels (flash-attn 2,
                                      PyTorch SDPA), no s x s tensors in memory */
    TASK_ATTENTION_UNFUSED = 1,    /* batched GEMMs + softmax kernels */
    TASK_ATTENTION_TUNED = 2       /* vendor-tuned fused attention (cuDNN via
                                      Transformer Engine, FlashAttention-3) */
} task_attention;

/* DLRM embedding sharding (detailed fidelity); NONE for LLMs, taken as
 * TABLE for a DLRM model. */
typedef enum task_emb_sharding {
    TASK_EMB_NONE = 0,
    TASK_EMB_TABLE = 1,   /* whole tables per device */
    TASK_EMB_ROW = 2,     /* every table split by rows over all devices */
    TASK_EMB_COLUMN = 3,  /* tables split into column shards, placed whole */
    TASK_EMB_AUTO = 4     /* per table, as the stacks' planners: replicated
                             (data-parallel), whole on one device, or split
                             by rows over a node (cost/detailed/dlrm/emb_plan.c) */
} task_emb_sharding;

/* Sparse optimizer of DLRM embedding rows: state values per row. */
typedef enum task_emb_optimizer {
    TASK_EMB_OPT_ROWWISE_ADAGRAD = 0, /* 1 fp32 value per row (default) */
    TASK_EMB_OPT_SGD = 1,             /* none */
    TASK_EMB_OPT_ADAGRAD = 2,         /* 1 fp32 value per element */
    TASK_EMB_OPT_ADAM = 3             /* 2 fp32 values per element */
} task_emb_optimizer;

/* How narrow-float (FP8, FP4) GEMM inputs are scaled (Transformer Engine
 * recipes): the stack's default, per-tensor delayed (amax history),
 * per-tensor current (amax of the tensor itself), blockwise (1x128 /
 * 128x128 FP8, DeepSeek-V3), MXFP8 (1x32 blocks, Blackwell), NVFP4 (16-
 * element blocks with an FP8 scale and a per-tensor one, Blackwell). */
typedef enum task_fp8_recipe {
    TASK_FP8_STACK = 0,
    TASK_FP8_DELAYED = 1,
    TASK_FP8_CURRENT = 2,
    TASK_FP8_BLOCKWISE = 3,
    TASK_FP8_MXFP8 = 4,
    TASK_FP8_NVFP4 = 5
} task_fp8_recipe;

typedef struct task_detailed_t {
    int64_t tp, pp, dp, cp, ep, vpp;
    bool vpp_auto;                 /* training with pp > 1: the fastest interleaving
                                      that fits (vpp ignored; see micro_batch_auto) */
    int64_t zero_stage;            /* 0..3 */
    bool sequence_parallel;
    task_recompute recompute;
    task_schedule schedule;
    task_attention attention;
    bool overlap_dp_comm;          /* DP/FSDP comm overlapped with compute
                                      (as far as the stack overlaps it) */
    int overlap_tp_comm;           /* TP comm hidden behind the GEMMs: -1 as
                                      the stack does, 0 never, 1 fully */
    int moe_flex_dispatch;         /* MoE token dispatcher: -1 the stack's, 0
                                      all-to-all, 1 flex (DeepEP/HybridEP) */
    int moe_a2a_overlap;           /* MoE EP all-to-all beside the other micro-
                                      batch's compute: -1 as the stack does, 0 off,
                                      1 on */
    int compiled;                  /* torch.compile (stacks whose element-wise
                                      passes span eager to compiled): -1 the stack's
                                      nominal, 0 eager, 1 compiled */
    int dtype;                     /* hw_dtype of compute */
    int64_t micro_batch;           /* sequences per micro-batch (0: the stack's default) */
    bool micro_batch_auto;         /* training: the fastest micro-batch dividing the
                                      replica's batch that fits (micro_batch ignored) */
    int64_t global_batch;          /* sequences per iteration (0: derived) */
    int64_t grad_accum;            /* micro-batches per replica (0: derived) */
    double capacity_factor;        /* MoE (0: 1.0) */
    double memory_fraction;        /* usable share of device memory, as the caching
                                      allocator's per-process fraction (0: 1.0) */
    int64_t etp;                   /* MoE: expert tensor parallelism (0: tp); with
                                      etp < tp the expert parallel group folds over
                                      tp x dp x cp (Megatron-Core MoE parallel folding) */
    double grad_reduce_bytes;      /* bytes per gradient element reduced (0: the stack's) */
    int64_t prompt_tokens;         /* inference: prompt length (0: seq_len) */
    int64_t decode_tokens;         /* inference: generated tokens */
    int layout;                    /* order of tp/cp/dp/pp on the devices,
                                      innermost first (detailed.h); 0 default */
    int64_t shard_degree;          /* ZeRO sharding group inside dp x cp
                                      (hybrid sharding); 0: all of dp x cp */
    /* fine-tuning (with task_t.freeze_*): the first frozen_layers
     * transformer layers are frozen, the rest trained */
    int64_t frozen_layers;
    /* fine-tuning with low-rank adapters (LoRA) of this rank in every
     * layer: the base weights frozen, data gradients through every layer,
     * weight gradients and optimizer states only for the adapters
     * (0: none) */
    int64_t lora_rank;
    /* recompute = "full" on only this many layers per pipeline stage
     * (NeMo activations_checkpoint_method "block", _num_layers); 0: all */
    int64_t recompute_layers;
    int fp8_recipe;                /* task_fp8_recipe (0: the stack's casts) */
    /* DLRM */
    int emb_sharding;              /* task_emb_sharding */
    int emb_optimizer;             /* task_emb_optimizer */
    int64_t emb_column_shards;     /* column-wise: shards per table (0: default) */
    /* serving (inference; cost/detailed/serve_*.c) */
    int scheduler;                 /* TASK_SCHED_*: continuous batching (default) or static */
    int64_t concurrency;           /* requests in flight over all replicas; TASK_CONC_* */
    double request_rate;           /* open loop: requests/s over all replicas (0: closed loop) */
    int64_t requests;              /* offline: a burst of this many requests (0: endless backlog) */
    int64_t rounds;                /* closed loop: the client's requests per slot (aiperf
                                      --num-requests / concurrency; 0: an endless loop) */
    /* prompt and output lengths uniform on [0, 2 x mean] (benchmark
     * clients' random datasets at range ratio 0), not fixed */
    bool uniform_lengths;
    int kv_dtype;                  /* 1 + hw_dtype of the KV cache (0: the compute dtype) */
    int weight_dtype;              /* TASK_W_*: stored weights (0: the compute dtype) */
    double ttft_max_s, tpot_max_s; /* the SLA (0: none) */
    /* attention data parallelism inside a TP group (SGLang
     * --enable-dp-attention with --dp N, vLLM's data-parallel attention
     * for MLA models): N ranks each run attention on their own requests
     * at tensor parallelism tp/N, the MLP/MoE runs on the gathered
     * tokens over all tp devices (0 or 1: none) */
    int64_t attn_dp;
    /* serving: the engine's batch limit per attention rank (max_num_seqs,
     * max_batch_size, max_running_requests) and token budget per step
     * (max_num_batched_tokens, max_num_tokens, chunked_prefill_size) as
     * the launch sets them (0: the stack's default) */
    int64_t max_seqs, token_budget;
    int front_end;                 /* TASK_FRONT_*: the server in front of the engine */
    int64_t spec_tokens;           /* speculative decoding: draft tokens gamma (0: off) */
    double spec_acceptance;        /* ... acceptance rate alpha, [0, 1] */
    double spec_draft_cost;        /* ... a draft step in target decode steps (0: 0.05) */
    /* auto: tables of at most this many bytes (rows and their optimizer
     * state) are replicated (data-parallel); < 0: the stack's, 0: none */
    double emb_dp_threshold_bytes;
    /* auto: hybrid embedding (HugeCTR): every table's frequent rows
     * replicated, the stack's emb_hot_fraction of lookups local */
    bool emb_hybrid;
    /* auto, hierarchical placement: the planner's MEM_COMM_BW_RATIO as
     * the run configured it (HugeCTR hier_auto); 0: the hardware's HBM
     * over network bandwidth */
    double emb_mem_comm_bw_ratio;
    /* DLRM: all-reduces reduced in the network switches (SHARP / NCCL
     * CollNet) */
    bool allreduce_sharp;
} task_detailed_t;

/* Stored weights of a served model (the GEMMs' math stays `dtype`):
 * 16-bit, 8-bit (FP8, INT8), and 4-bit with group scales (INT4 as
 * AWQ/GPTQ: an FP16 scale per 128 weights; FP4 as NVFP4: an FP8 scale per
 * 16). */
enum { TASK_W_SAME = 0, TASK_W_BF16 = 1, TASK_W_FP8 = 2, TASK_W_INT8 = 3, TASK_W_INT4 = 4,
       TASK_W_FP4 = 5 };
int task_weight_parse(const char *s);
const char *task_weight_name(int w);
double task_weight_bytes(int w);

/* The server in front of a serving engine: its own (vllm serve,
 * sglang.launch_server, trtllm-serve) or Dynamo's front end. */
enum { TASK_FRONT_ENGINE = 0, TASK_FRONT_DYNAMO = 1 };

/* Serving scheduler. */
enum { TASK_SCHED_CONTINUOUS = 0, TASK_SCHED_STATIC = 1 };
/* concurrency: a count > 0, or 0 = micro_batch x dp (the static batch),
 * TASK_CONC_MAX = the largest the KV cache and the engine admit (offline:
 * all requests queued), TASK_CONC_SLA = the largest meeting the SLA. */
#define TASK_CONC_MAX (-1)
#define TASK_CONC_SLA (-2)

typedef struct task_t {
    task_kind kind;
    plan_t dense;
    plan_t emb;
    int64_t local_batch_dense; /* samples per device, dense component */
    int64_t local_batch_emb;   /* samples per device, embeddings */

    /* fine-tuning: frozen parts */
    bool freeze_emb;
    bool freeze_dense;        /* LLM: all transformer layers */
    bool freeze_top_mlp;      /* DLRM */
    bool freeze_bot_mlp;      /* DLRM */
    int64_t min_frozen_layer; /* LLM: layers below it get gradients */

    task_detailed_t detailed; /* detailed fidelity (appended) */
} task_t;

/* Factors a plan implies, as the reference's get_parallelization_factors:
 * duplicate = product of replicating degrees (ddp, fsdp), shard = product
 * of sharding degrees (fsdp, tp for dense; mp for embeddings). */
typedef struct task_factors {
    int64_t dense_duplicate, dense_shard;
    int64_t emb_duplicate, emb_shard;
    int64_t global_batch_dense, global_batch_emb;
} task_factors;

void task_factors_of(const task_t *t, task_factors *f);

/* "pretrain" / "finetune" / "inference"; parse returns -1 if unknown. */
const char *task_kind_name(task_kind k);
int task_kind_parse(const char *s);

#endif
