/*
 * stack.h - software stacks: how a training framework behaves, as facts
 * the detailed fidelity reads (configs/stacks.cfg holds the catalogue).
 *
 * A stack is not a fudge factor per run: it says which attention kernel
 * runs, which tensor-parallel collectives overlap which GEMMs, how much
 * of the sharded-data-parallel traffic overlaps compute and how much the
 * concurrent collectives slow that compute, what bandwidth data-parallel
 * rings that span nodes reach, what selective recomputation recomputes,
 * how pipeline stages are split and sent, what the optimizer holds and
 * moves, and the kernel overheads of eager execution. Options a run does
 * not state (sequence parallelism, interleaving, micro-batch) take the
 * stack's defaults.
 *
 * Facts that are uncertain carry a range: a stack_fact is a nominal
 * value and the two ends of its range, and stack_resolve() picks one
 * scenario (nominal, or every fact at its faster or at its slower end),
 * so that an evaluation under each gives a result and its band. Which end
 * is faster is a property of the fact (stack_fact_faster_high). Plain
 * value (no pointers).
 */
#ifndef MADSWEEP_STACK_H
#define MADSWEEP_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define STACK_NAME_MAX 64
#define STACK_SUMMARY_MAX 160

/* A fact with its range: lo <= v <= hi (equal when certain). */
typedef struct stack_fact {
    double v, lo, hi;
} stack_fact;

/* Which scenario of the ranges an evaluation takes. */
typedef enum stack_scenario {
    STACK_NOMINAL = 0,
    STACK_FAST = 1, /* every fact at the end that makes the step faster */
    STACK_SLOW = 2
} stack_scenario;

/* Pipeline send scheme without sequence parallelism. */
typedef enum stack_pp_send {
    STACK_PP_FULL = 0,          /* each rank sends its whole activation */
    STACK_PP_SCATTER_GATHER = 1 /* send 1/tp, all-gather inside the node */
} stack_pp_send;

/* A serving engine's defaults that depend on the GPU's memory (vLLM's
 * max_num_batched_tokens and max_num_seqs at >= 70 GiB, SGLang's
 * chunked_prefill_size and cuda_graph_max_bs by memory tier): from
 * `from_bytes` of device memory on, the largest tier that applies (0:
 * the stack's own value). */
typedef struct stack_tier {
    double from_bytes;
    int64_t token_budget, max_seqs, cuda_graph_max;
} stack_tier;
#define STACK_TIERS 6

typedef struct stack_desc {
    char name[STACK_NAME_MAX];
    char summary[STACK_SUMMARY_MAX];
    /* stack_check passed when the stack was loaded (load_stack sets it):
     * a point's check does not repeat it per evaluation; whoever changes
     * a fact of a checked stack clears it (0, as memset leaves it: checked
     * by every evaluation) */
    bool checked;
    /* ---- kernels */
    int attention;              /* task_attention: flash or unfused */
    /* memory-bound kernel traffic relative to fused kernels (1: fused,
     * > 1: eager PyTorch runs each element-wise op as its own pass) */
    stack_fact elementwise_passes;
    stack_fact launch_s;        /* host launch cost per kernel not hidden (eager) */
    /* FP8: HBM passes over each FP8 GEMM's inputs for casts and scaling
     * (amax), in units of the input's bf16 bytes */
    stack_fact fp8_cast_passes;
    /* ---- tensor parallelism */
    bool sequence_parallel;     /* default with tp > 1 when a run does not say */
    stack_fact tp_overlap_fwd;  /* fraction of forward TP collectives that can hide behind GEMMs */
    stack_fact tp_overlap_bwd;  /* same, backward */
    /* ---- data parallelism (ZeRO 0-3, FSDP) */
    stack_fact dp_overlap;      /* fraction of DP/ZeRO collectives that can overlap compute */
    stack_fact zero3_overlap;   /* the same for ZeRO 3's gathers and reduce-scatters
                                   (0: dp_overlap) */
    stack_fact comm_slowdown;   /* compute slowdown while collectives run beside it */
    int64_t dp_rails;           /* NIC rails a DP ring spanning nodes uses (0: all) */
    stack_fact dp_bus_efficiency; /* fraction of the NIC bandwidth those rings reach */
    int64_t zero3_prefetch;     /* units (layers) all-gathered ahead */
    bool zero3_reshard;         /* ZeRO 3 frees gathered params after forward (re-gathers in backward) */
    bool zero3_rs_every_microbatch; /* gradients reduce-scattered per micro-batch */
    /* with pipeline parallelism, parameters stay gathered across the
     * micro-batches of a step (gathered once) and gradients are reduced
     * once, after the last (torchtitan's FSDP2 + PP) */
    bool zero3_pp_defer;
    /* ---- recomputation */
    bool selective_attention;   /* "selective" recomputes the attention core (Megatron) */
    stack_fact selective_gemm_fraction; /* ... and this fraction of the layer's GEMMs (op-level AC) */
    /* ---- pipeline */
    int pp_send;                /* stack_pp_send */
    /* stage split: layers spread as evenly as possible over pp x vpp
     * chunks, the embedding and the output head + loss counted as this
     * many layers on the first and last chunk; always (pp_weighted), or
     * only when the layers do not divide evenly (Megatron's
     * account-for-embedding/loss options) */
    double pp_embedding_layers;
    double pp_loss_layers;
    bool pp_weighted;
    int64_t default_vpp;        /* interleaved chunks per stage when a run says interleaved but not how many */
    int64_t default_micro_batch; /* sequences per micro-batch when a run does not say */
    int64_t default_zero_stage; /* data-parallel sharding when a run does not say (0-3) */
    unsigned zero_stages;       /* ZeRO stages the stack runs: bit z for stage z (0: all) */
    /* ---- precision and optimizer (bytes per parameter) */
    double param_bytes;         /* persistent compute-dtype copy (0: the master is the parameter) */
    double master_bytes;        /* fp32 master weights */
    double grad_bytes;          /* gradient accumulation buffer */
    double optimizer_bytes;     /* optimizer states (Adam: 8) */
    double grad_reduce_bytes;   /* bytes per gradient element on the wire */
    double zero3_grad_reduce_bytes; /* the same (and accumulated) under ZeRO 3
                                   (0: grad_reduce_bytes) */
    double optimizer_step_bytes; /* HBM traffic of the optimizer step per local parameter */
    /* ---- memory */
    double reserve_bytes;       /* CUDA context, allocator fragmentation and workspaces */
    double logit_bytes;         /* bytes held per logit on the last stage: the logits,
                                   the loss's copy and the gradient */
    stack_fact loss_bytes;      /* HBM bytes the loss moves per logit, forward and
                                   backward (fused kernel ~14, unfused fp32 ~56) */
    /* ---- mixture of experts */
    int64_t expert_tensor_parallel; /* ETP when a run does not say (0: = tp) */
    stack_fact moe_a2a_overlap; /* fraction of the EP all-to-all hidden (overlapped
                                   with the other micro-batch's compute) in a run
                                   that does not say whether it overlaps */
    stack_fact moe_a2a_overlap_on; /* the same in a run that turns the overlap on
                                   (0: all of it, as far as the compute lasts) */
    /* "selective" as whole-block checkpointing of this fraction of the
     * layers (0: op-level selective recompute as above) */
    stack_fact selective_block_fraction;
    /* "selective" also recomputes the norms and the MLP activation
     * function (Megatron-Core --recompute-modules layernorm moe_act/mlp):
     * their outputs are not kept */
    bool selective_norm_act;
    /* MoE dispatch through the network: share of it that is hierarchical
     * (DeepEP, HybridEP: a token crosses to a remote scale-up domain once
     * and fans out there over NVLink; 0: flat all-to-all) */
    stack_fact moe_hierarchical_dispatch;
    /* ---- serving (cost/detailed/serve_*.c): an engine's facts; only a
     * stack with `serving` true serves inference */
    bool serving;
    bool serving_only;
    char engine[STACK_NAME_MAX]; /* the serving engine whose launch flags `madsweep point
                                    --engine-args` prints: "vllm", "sglang", "trtllm" ("":
                                    none) */          /* an engine without training facts: does not train */
    int64_t token_budget;       /* K: tokens per engine step (chunked prefill budget) */
    int64_t max_seqs;           /* sequences running at once at most */
    stack_fact mem_fraction;    /* memory for weights + KV (of total), or KV (of free) */
    bool mem_fraction_of_free;  /* TensorRT-LLM: fraction of the memory left after weights */
    bool mem_fraction_static;   /* SGLang: the fraction holds weights + KV only; activations
                                   and CUDA graphs live in the rest of the memory */
    int64_t kv_block;           /* tokens per KV block */
    bool kv_reserve;            /* reserve prompt + output on admission (else on demand) */
    /* the KV dtype "auto" takes the checkpoint's KV scheme (TensorRT-LLM:
     * kv_cache_quant_algo, FP8 in ModelOpt FP8/NVFP4 checkpoints); else the
     * model dtype (vLLM, SGLang) */
    bool kv_checkpoint;
    bool overlap;               /* the scheduler forms step n + 1 while step n runs (SGLang's
                                   overlap scheduler, TensorRT-LLM's overlap, vLLM's async
                                   scheduling): a new prompt meets two steps ahead */
    bool prefill_apart;         /* prefill chunks run in steps of their own, the decodes
                                   wait (SGLang without --enable-mixed-chunk); else a
                                   step carries both */
    stack_fact kv_output_reserve; /* on demand: share of each running request's remaining
                                     output held back from admission (SGLang's
                                     new_token_ratio; 0: none, vLLM) */
    stack_fact gemm_floor_s;    /* fixed cost per weight GEMM (t0) */
    stack_fact weight_bw_eff;   /* fraction of HBM bandwidth a decode GEMM streams weights at */
    stack_fact gemm_eff_max;    /* GEMM efficiency of serving shapes at large m, as a fraction
                                   of the generation's large-GEMM efficiency (hw table) */
    stack_fact gemm_m_half;     /* tokens m at which a GEMM reaches half of gemm_eff_max */
    stack_fact kv_bw_eff;       /* fraction of HBM bandwidth decode attention reads KV at */
    bool kv_per_query_head;     /* decode attention reads K/V once per query head (masked
                                   MHA without GQA sharing), else once per KV head */
    stack_fact attn_floor_s;    /* decode attention kernel floor per layer */
    stack_fact prefill_attn_eff; /* prefill attention FLOP/s, fraction of the BF16 peak */
    stack_fact ew_floor_s;      /* floor per fused element-wise kernel (4 per layer) */
    stack_fact allreduce_s;     /* custom all-reduce: latency per call (small messages) */
    stack_fact allreduce_bw_eff; /* ... and its fraction of the scale-up bandwidth */
    stack_fact allreduce_ramp_bytes; /* bus bytes the bandwidth (two-shot/NCCL) path
                                        costs beyond its asymptote: its ramp to full
                                        bandwidth (0: none) */
    stack_fact step_host_s;     /* host time per engine step not overlapped with the GPU */
    stack_fact seq_host_s;      /* ... and per sequence in the step (the scheduler's and the
                                   output processing's work per request and token) */
    stack_fact request_host_s;  /* host time in each request's TTFT (tokenize, schedule, return) */
    stack_fact dynamo_host_s;   /* ... with Dynamo's front end instead of the engine's server
                                   (task front_end "dynamo") */
    int64_t cuda_graph_max;     /* the largest decode batch a CUDA graph holds (0: every
                                   batch); larger ones run eagerly */
    stack_fact eager_launch_s;  /* a kernel's host launch in a step run without a graph */
    bool moe_a2a;               /* MoE under attention DP: the experts' tokens dispatched
                                   and combined by all-to-all (DeepEP) rather than gathered
                                   and scattered by all-reduce */
    int64_t ntiers;             /* defaults by GPU memory, ascending from_bytes */
    stack_tier tier[STACK_TIERS];
    /* hybrid models (docs/serving.md, "Hybrid models"): how the engine
     * holds the KV of sliding-window layers and the state of linear-
     * attention layers beside the full layers' KV. Windows: one pool,
     * each request holding its window's blocks (0, false: vLLM's hybrid
     * KV cache manager), a window pool of swa_full_tokens_ratio times the
     * full pool's tokens (SGLang), or a pool per window size sharing the
     * memory in proportion to window x bytes per token (TensorRT-LLM's
     * VSWA, swa_share_by_window). States: from the one pool (0: vLLM,
     * TensorRT-LLM), or a state pool of linear_memory_ratio times the
     * KV pool's memory of which a running request holds linear_slots
     * (SGLang's mamba pool, radix cache on: 3). */
    double swa_full_tokens_ratio;
    bool swa_share_by_window;
    double linear_memory_ratio;
    double linear_slots;
    /* ---- recommendation models (DLRM; 0 where a stack does not say) */
    double emb_comm_bytes;      /* bytes per pooled element on the wire (0: the table's) */
    double emb_dp_threshold_bytes; /* tables this small (rows, state) replicated (0: none) */
    bool emb_hierarchical;      /* all-to-all in two steps: NVLink in the node, one
                                   message per node pair over the network; on
                                   several nodes HugeCTR's hier_auto plan */
    bool emb_split_columns;     /* tables too large or too hot split by columns
                                   (else by rows, partial sums reduce-scattered) */
    stack_fact emb_hot_fraction; /* hybrid embedding: lookups that hit the replicated
                                    frequent rows (0: no hybrid embedding) */
    double emb_hot_rows;        /* hybrid embedding: frequent rows replicated */
    stack_fact emb_overlap;     /* fraction of the embedding work and exchange hidden
                                   behind the MLPs (pipelined iterations) */
    stack_fact step_overhead_s; /* per-iteration host cost of the distributed loop
                                   not hidden (Horovod negotiation; 0 with CUDA
                                   graphs); runs on one device have none */
    stack_fact mlp_efficiency;  /* dense GEMM rate relative to the hardware's curve
                                   (0: 1, the curve itself) */
} stack_desc;

/* The tier of a device with `mem` bytes (NULL: none applies). */
static inline const stack_tier *stack_tier_at(const stack_desc *s, double mem)
{
    const stack_tier *t = NULL;
    for (int64_t i = 0; i < s->ntiers && i < STACK_TIERS; i++)
        if (s->tier[i].from_bytes <= mem)
            t = &s->tier[i];
    return t;
}

/* Whether the stack runs ZeRO stage z (its zero_stages; 0: every stage). */
static inline bool stack_zero_ok(const stack_desc *s, int64_t z)
{
    return z >= 0 && z <= 3 && (s->zero_stages == 0 || (s->zero_stages >> z) & 1u);
}

/* A serving engine with middle-of-the-road facts (stack_ideal's serving
 * part, and what tests use). */
void stack_serving_defaults(stack_desc *s);

/* Checks the facts (ranges ordered, fractions in [0, 1], bytes >= 0);
 * on a bad one returns STATUS_INVALID_VALUE with *bad its key name. */
status_code stack_check(const stack_desc *s, const char **bad);

/* An idealized stack: fused kernels, flash attention, no TP overlap,
 * perfectly overlappable DP traffic without slowdown, every rail at full
 * bus efficiency, Megatron-style selective recompute, the mixed-precision
 * Adam of Rajbhandari et al. 2020 (2 + 2 + 12 bytes per parameter,
 * 16-bit gradient reduction), even pipeline splits, no reserve. For tests
 * and for library callers without a catalogue. */
void stack_ideal(stack_desc *s);

/* The value of f under scenario sc; `faster_high` says whether a higher
 * value makes the step faster (inline: a dozen per scenario of every
 * evaluation). */
static inline double stack_pick(stack_fact f, stack_scenario sc, bool faster_high)
{
    switch (sc) {
    case STACK_FAST:
        return faster_high ? f.hi : f.lo;
    case STACK_SLOW:
        return faster_high ? f.lo : f.hi;
    default:
        return f.v;
    }
}

#endif
