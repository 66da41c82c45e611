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

typedef struct stack_desc {
    char name[STACK_NAME_MAX];
    char summary[STACK_SUMMARY_MAX];
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
    /* ---- precision and optimizer (bytes per parameter) */
    double param_bytes;         /* persistent compute-dtype copy (0: the master is the parameter) */
    double master_bytes;        /* fp32 master weights */
    double grad_bytes;          /* gradient accumulation buffer */
    double optimizer_bytes;     /* optimizer states (Adam: 8) */
    double grad_reduce_bytes;   /* bytes per gradient element on the wire */
    double optimizer_step_bytes; /* HBM traffic of the optimizer step per local parameter */
    /* ---- memory */
    double reserve_bytes;       /* CUDA context, allocator fragmentation and workspaces */
    double logit_bytes;         /* bytes held per logit on the last stage: the logits,
                                   the loss's copy and the gradient */
    stack_fact loss_bytes;      /* HBM bytes the loss moves per logit, forward and
                                   backward (fused kernel ~14, unfused fp32 ~56) */
    /* ---- recommendation models (DLRM; 0 where a stack does not say) */
    double emb_comm_bytes;      /* bytes per pooled element on the wire (0: the table's) */
    double emb_dp_threshold_bytes; /* tables this small replicated (0: none) */
    bool emb_hierarchical;      /* all-to-all in two steps: NVLink in the node, one
                                   message per node pair over the network */
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
 * value makes the step faster. */
double stack_pick(stack_fact f, stack_scenario sc, bool faster_high);

#endif
