/*
 * load_task.c - reading tasks: the MAD-Max task (plans and batches) and
 * the detailed strategy (parallel degrees, ZeRO, recomputation,
 * schedule, precision, serving workload), and a sweep's explicit
 * strategies.
 *
 * Each fidelity's keys are one table here. A key that only some task
 * types read is refused in a task of another type, with its line (the
 * point writer leaves it out by the same table).
 */
#include "load.h"
#include "load_key.h"

#include "../../cost/detailed.h"
#include "range.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Task keys that only some task types read name them in `types`
 * (LOAD_T_*; 0: every type): issue 19, given to another type they
 * changed nothing without a word: the serving keys of a training task,
 * the optimizer, backward-pass and pipeline-schedule keys and training
 * kernels of an inference task (serving takes its kernels from the
 * engine's stack), each found by evaluating a point with and without
 * it; fine-tuning's frozen parts and adapters elsewhere. The loaders
 * refuse them with their line and the point writer leaves them out. */
#define TKT(ty, n, t, k, r, d, ...) \
    LOAD_KEY_T(ty, #n, t, offsetof(task_t, n), k, r, d, __VA_ARGS__)
#define TK(n, t, k, r, d, ...) TKT(0, n, t, k, r, d, __VA_ARGS__)
static const load_key task_keys[] = {
    LOAD_KEY("name", LT_NOTE, 0, LK_ALL, LR_NO, "label (not used)", LOAD_NONUM),
    LOAD_KEY("type", LT_TASK_KIND, offsetof(task_t, kind), LK_ALL, LR_YES,
        "\"pretrain\", \"finetune\" or \"inference\"", LOAD_NONUM),
    TK(dense, LT_PLAN, LK_ALL, LR_YES,
       "dense plan, innermost level first: [\"fsdp:8\", \"ddp:256\"] (ddp, fsdp, tp)",
       LOAD_NONUM),
    LOAD_KEY("embedding", LT_PLAN, offsetof(task_t, emb), LK_ALL, LR_YES,
        "embedding plan: [\"mp:8\", \"ddp:256\"] (mp, ddp)", LOAD_NONUM),
    TK(local_batch_dense, LT_INT, LK_ALL, LR_YES,
       "samples per device in the dense component",
       LOAD_INT(1, RANGE_P36, "samples per device")),
    TK(local_batch_emb, LT_INT, LK_ALL, LR_YES,
       "samples per device in the embeddings", LOAD_INT(1, RANGE_P36, "samples per device")),
    TKT(LOAD_T_FINETUNE, freeze_emb, LT_BOOL, LK_ALL, LR_FINETUNE,
        "finetune: embeddings frozen", LOAD_UNIT("bool")),
    TKT(LOAD_T_FINETUNE, freeze_dense, LT_BOOL, LK_LLM, LR_FINETUNE,
        "finetune: all transformer layers frozen", LOAD_UNIT("bool")),
    TKT(LOAD_T_FINETUNE, min_frozen_layer, LT_INT, LK_LLM, LR_FINETUNE,
        "finetune: layers below this index get gradients",
        LOAD_INT(0, RANGE_P16, "layer index")),
    TKT(LOAD_T_FINETUNE, freeze_top_mlp, LT_BOOL, LK_DLRM, LR_FINETUNE,
        "finetune: top MLP frozen", LOAD_UNIT("bool")),
    TKT(LOAD_T_FINETUNE, freeze_bot_mlp, LT_BOOL, LK_DLRM, LR_FINETUNE,
        "finetune: bottom MLP frozen", LOAD_UNIT("bool")),
};

const load_table load_task_table = {task_keys, NKEYS(task_keys)};

#define DTT(ty, k, n, t, r, d, ...) \
    LOAD_KEY_T(ty, #n, t, offsetof(task_t, detailed.n), k, r, d, __VA_ARGS__)
#define DTK(n, t, r, d, ...) DTT(0, LK_LLM, n, t, r, d, __VA_ARGS__)
#define DTA(n, t, r, d, ...) DTT(0, LK_ALL, n, t, r, d, __VA_ARGS__)
#define DTR(n, t, r, d, ...) DTT(0, LK_DLRM, n, t, r, d, __VA_ARGS__)
static const load_key dtask_keys[] = {
    LOAD_KEY("name", LT_NOTE, 0, LK_ALL, LR_NO, "label (not used)", LOAD_NONUM),
    LOAD_KEY("type", LT_TASK_KIND, offsetof(task_t, kind), LK_ALL, LR_YES,
        "\"pretrain\", \"finetune\" or \"inference\"", LOAD_NONUM),
    DTK(tp, LT_INT, LR_YES, "tensor-parallel degree (innermost)",
        LOAD_INT(0, RANGE_P24, "devices (tensor-parallel degree)")),
    DTK(pp, LT_INT, LR_YES, "pipeline stages (outermost)",
        LOAD_INT(0, RANGE_P24, "stages (pipeline-parallel degree)")),
    DTA(dp, LT_INT, LR_YES, "data-parallel degree; tp*pp*dp*cp = devices (DLRM: devices)",
        LOAD_INT(0, RANGE_P24, "replicas (data-parallel degree)")),
    DTR(emb_sharding, LT_EMB_SHARDING, LR_NO,
        "embedding tables \"table\"-wise (default), \"row\"-wise, \"column\"-wise or "
        "\"auto\" (per table by a cost planner: replicated, whole or row-split)", LOAD_NONUM),
    DTT(LOAD_T_TRAIN, LK_DLRM, allreduce_sharp, LT_BOOL, LR_NO,
        "DLRM: gradient all-reduces reduced in the switches (SHARP, NCCL CollNet; default false)",
        LOAD_UNIT("bool")),
    DTR(emb_hybrid, LT_BOOL, LR_NO,
        "auto: hybrid embedding, frequent rows replicated (HugeCTR; default false)",
        LOAD_UNIT("bool")),
    DTR(emb_mem_comm_bw_ratio, LT_FLOAT, LR_NO,
        "auto, hierarchical stack: the planner's HBM-to-network bandwidth ratio as the run "
        "set it (HugeCTR MEM_COMM_BW_RATIO; 0 or absent: the hardware's)",
        LOAD_FLOAT(0.0, 1e6, "1")),
    DTR(emb_dp_threshold_bytes, LT_FLOAT, LR_NO,
        "auto: tables of at most this many bytes (rows and optimizer state) replicated "
        "(0: none; < 0 or absent: the stack's)", LOAD_FLOAT(0.0, 1e30, "bytes")),
    DTT(LOAD_T_TRAIN, LK_DLRM, emb_optimizer, LT_EMB_OPT, LR_NO,
        "sparse optimizer: \"rowwise_adagrad\" (default, 1 value per row), \"sgd\", "
        "\"adagrad\", \"adam\"", LOAD_NONUM),
    DTR(emb_column_shards, LT_INT, LR_NO,
        "column-wise: shards per table (default: smallest divisor of emb_dim with "
        "tables*shards >= devices)", LOAD_INT(0, RANGE_P16, "shards per table")),
    LOAD_KEY_T(LOAD_T_FINETUNE, "freeze_emb", LT_BOOL, offsetof(task_t, freeze_emb), LK_ALL, LR_NO,
        "finetune: embeddings frozen (no gradients, no optimizer states)", LOAD_UNIT("bool")),
    DTT(LOAD_T_FINETUNE, LK_LLM, frozen_layers, LT_INT, LR_NO,
        "finetune: the first N transformer layers frozen, the rest trained (default 0)",
        LOAD_INT(0, RANGE_P16, "layers")),
    LOAD_KEY_T(LOAD_T_FINETUNE, "freeze_bot_mlp", LT_BOOL,
        offsetof(task_t, freeze_bot_mlp), LK_DLRM, LR_NO,
        "finetune: bottom MLP frozen", LOAD_UNIT("bool")),
    LOAD_KEY_T(LOAD_T_FINETUNE, "freeze_top_mlp", LT_BOOL,
        offsetof(task_t, freeze_top_mlp), LK_DLRM, LR_NO,
        "finetune: top MLP frozen", LOAD_UNIT("bool")),
    DTK(cp, LT_INT, LR_NO, "context-parallel degree, ring attention (default 1)",
        LOAD_INT(0, RANGE_P24, "devices (context-parallel degree)")),
    DTK(ep, LT_INT, LR_NO, "expert-parallel degree inside dp*cp (default 1)",
        LOAD_INT(0, RANGE_P24, "devices (expert-parallel degree)")),
    DTT(LOAD_T_TRAIN, LK_LLM, vpp, LT_MB, LR_NO,
        "virtual stages per device, interleaved 1F1B (default 1), or \"auto\" (the fastest "
        "interleaving that fits, with pp > 1)",
        LOAD_INT(0, RANGE_P16, "virtual stages per device")),
    DTT(LOAD_T_TRAIN, LK_LLM, zero_stage, LT_INT, LR_NO,
        "0 none, 1 optimizer, 2 + gradients, 3 + parameters (FSDP)",
        LOAD_INT(0, 3, "ZeRO stage (0-3)")),
    DTK(sequence_parallel, LT_BOOL, LR_NO,
        "Megatron sequence parallelism with tp > 1 (default: the stack's)", LOAD_UNIT("bool")),
    DTT(LOAD_T_TRAIN, LK_LLM, recompute, LT_RECOMPUTE, LR_NO,
        "\"none\" (default), \"selective\" (what the stack's selective mode recomputes), "
        "\"full\", or \"auto\" (the least of them whose memory fits)", LOAD_NONUM),
    DTT(LOAD_T_TRAIN, LK_LLM, schedule, LT_SCHEDULE, LR_NO,
        "\"1f1b\" (default; interleaved when vpp > 1), \"interleaved\" (vpp default: the "
        "stack's) or \"gpipe\"", LOAD_NONUM),
    DTT(LOAD_T_TRAIN, LK_LLM, attention, LT_ATTENTION, LR_NO,
        "\"flash\" (FlashAttention-2 class), \"tuned\" (cuDNN/TE, FA3) "
        "or \"unfused\" (default: the stack's kernel)", LOAD_NONUM),
    DTT(LOAD_T_TRAIN, LK_ALL, overlap_dp_comm, LT_BOOL, LR_NO,
        "overlap DP/FSDP communication with compute, as far as the stack does (default true)",
        LOAD_UNIT("bool")),
    DTT(LOAD_T_TRAIN, LK_LLM, overlap_tp_comm, LT_TRI, LR_NO,
        "TP communication hidden behind the GEMMs: true fully, false never (default: as the "
        "stack does)", LOAD_UNIT("bool")),
    DTT(LOAD_T_TRAIN | LOAD_T_INFER, LK_LLM, moe_flex_dispatch, LT_TRI, LR_NO,
        "MoE token dispatcher: true flex (DeepEP, HybridEP: hierarchical), false all-to-all; "
        "inference under attn_dp: true DeepEP's all-to-all dispatch and combine, false the "
        "tokens gathered and scattered by all-reduce (default: the stack's)", LOAD_UNIT("bool")),
    DTT(LOAD_T_TRAIN, LK_LLM, moe_a2a_overlap, LT_TRI, LR_NO,
        "MoE EP all-to-all overlapped with the other micro-batch's compute (Megatron-Core "
        "overlap_moe_expert_parallel_comm; default: as the stack does)", LOAD_UNIT("bool")),
    DTT(LOAD_T_TRAIN, LK_LLM, compiled, LT_TRI, LR_NO,
        "torch.compile: true takes the fused end of the stack's element-wise passes, false "
        "the eager end (default: the stack's nominal)", LOAD_UNIT("bool")),
    LOAD_KEY("precision", LT_DTYPE, offsetof(task_t, detailed.dtype), LK_ALL, LR_NO,
        "\"bf16\" (default), \"fp16\", \"fp8\", \"fp4\", \"tf32\", \"fp32\" (refused on "
        "hardware without a peak in it)", LOAD_NONUM),
    DTA(micro_batch, LT_MB, LR_NO,
        "sequences per micro-batch, or \"auto\": the fastest dividing the replica's batch "
        "that fits (default: the stack's)", LOAD_INT(0, RANGE_P40, "samples (llm: sequences)")),
    DTA(global_batch, LT_INT, LR_NO, "sequences per iteration (default micro_batch*dp*grad_accum)",
        LOAD_INT(0, RANGE_P40, "sequences")),
    DTT(LOAD_T_TRAIN, LK_ALL, grad_accum, LT_INT, LR_NO,
        "micro-batches per replica (default global/(micro*dp))",
        LOAD_INT(0, RANGE_P40, "micro-batches")),
    DTK(capacity_factor, LT_FLOAT, LR_NO, "MoE capacity factor (default 1.0)",
        LOAD_FLOAT_OR0(1e-3, 1e3, "1")),
    DTK(memory_fraction, LT_FLOAT, LR_NO,
        "usable share of device memory (torch.cuda.set_per_process_memory_fraction; "
        "default 1.0)", LOAD_FLOAT_OR0(1e-3, 1.0, "fraction")),
    DTK(etp, LT_INT, LR_NO,
        "MoE expert tensor parallelism, dividing tp (default: the stack's expert_tensor_parallel; "
        "0 = tp); below tp, ep folds over tp*dp*cp", LOAD_INT(0, RANGE_P24, "devices")),
    DTT(LOAD_T_TRAIN, LK_ALL, grad_reduce_bytes, LT_FLOAT, LR_NO,
        "bytes per reduced gradient element (default: the stack's)",
        LOAD_FLOAT_OR0(0.125, 16.0, "bytes per element")),
    DTT(LOAD_T_INFER, LK_LLM, prompt_tokens, LT_INT, LR_NO,
        "inference: prompt length (default seq_len)", LOAD_INT(0, RANGE_P24, "tokens")),
    DTT(LOAD_T_INFER, LK_LLM, decode_tokens, LT_INT, LR_NO,
        "inference: generated tokens per sequence (required)",
        LOAD_INT(0, RANGE_P24, "tokens")),
    DTT(LOAD_T_INFER, LK_LLM, scheduler, LT_SCHEDULER, LR_NO,
        "inference: \"continuous\" batching (default: steps of decodes plus prefill chunks) "
        "or \"static\" (the batch prefills, then decodes in lock-step)", LOAD_NONUM),
    DTT(LOAD_T_INFER, LK_LLM, concurrency, LT_CONC, LR_NO,
        "inference: requests in flight over all replicas, \"max\" (the KV cache's limit; "
        "offline) or \"sla\" (the largest meeting ttft_max_s/tpot_max_s); default "
        "micro_batch*dp", LOAD_INT(1, RANGE_P24, "requests")),
    DTT(LOAD_T_INFER, LK_LLM, request_rate, LT_FLOAT, LR_NO,
        "inference: Poisson arrivals, requests/s over all replicas (open loop; 0: closed)",
        LOAD_FLOAT_OR0(1e-9, 1e9, "requests/s")),
    DTT(LOAD_T_INFER, LK_LLM, requests, LT_INT, LR_NO,
        "inference, concurrency \"max\": a burst of this many requests sent at once, as a "
        "benchmark client does (default 0: an endless backlog, the steady state)",
        LOAD_INT(0, RANGE_P40, "requests")),
    DTT(LOAD_T_INFER, LK_LLM, uniform_lengths, LT_BOOL, LR_NO,
        "inference: prompt and output lengths vary uniformly on [0, 2x] the mean "
        "prompt_tokens/decode_tokens (default false: fixed lengths)", LOAD_UNIT("bool")),
    DTT(LOAD_T_INFER, LK_LLM, attn_dp, LT_INT, LR_NO,
        "inference: attention data-parallel ranks inside the tp group, dividing tp (SGLang "
        "--enable-dp-attention --dp N: attention at tp/N on each rank's own requests and KV, "
        "the MLP/MoE over all tp devices; default 1: none)", LOAD_INT(0, RANGE_P16, "ranks")),
    DTT(LOAD_T_INFER, LK_LLM, max_seqs, LT_INT, LR_NO,
        "inference: the engine's batch limit per attention rank as launched (vLLM "
        "--max-num-seqs, SGLang --max-running-requests, TensorRT-LLM max_batch_size; default: "
        "the stack's for the GPU's memory)", LOAD_INT(0, RANGE_P24, "sequences")),
    DTT(LOAD_T_INFER, LK_LLM, token_budget, LT_INT, LR_NO,
        "inference: the engine's tokens per step as launched (vLLM --max-num-batched-tokens, "
        "SGLang --chunked-prefill-size, TensorRT-LLM max_num_tokens; default: the stack's for "
        "the GPU's memory)", LOAD_INT(0, RANGE_P24, "tokens per step")),
    DTT(LOAD_T_INFER, LK_LLM, rounds, LT_INT, LR_NO,
        "inference, closed loop: the benchmark client's requests per slot, the first round "
        "sent at once (aiperf --num-requests / --concurrency; default 0: an endless loop)",
        LOAD_INT(0, RANGE_P24, "requests per slot")),
    DTT(LOAD_T_INFER, LK_LLM, front_end, LT_FRONT_END, LR_NO,
        "inference: the server in front of the engine, \"engine\" (its own: vllm serve, "
        "sglang.launch_server, trtllm-serve; default) or \"dynamo\" (Dynamo's front end)",
        LOAD_NONUM),
    LOAD_KEY_T(LOAD_T_INFER, "kv_precision", LT_KVDTYPE,
        offsetof(task_t, detailed.kv_dtype), LK_LLM, LR_NO,
        "inference: KV-cache dtype \"bf16\", \"fp16\", \"fp8\" or \"int8\" (default: "
        "precision)", LOAD_NONUM),
    LOAD_KEY_T(LOAD_T_INFER, "weight_precision", LT_WDTYPE,
        offsetof(task_t, detailed.weight_dtype), LK_LLM, LR_NO,
        "inference: stored weights \"bf16\", \"fp16\", \"fp8\", \"int8\", \"int4\" (group "
        "scales per 128) or \"fp4\" (NVFP4, scales per 16); GEMMs in precision (default: "
        "precision)", LOAD_NONUM),
    DTT(LOAD_T_INFER, LK_LLM, spec_tokens, LT_INT, LR_NO,
        "inference: speculative decoding, draft tokens per step (default 0: off)",
        LOAD_INT(0, 64, "tokens per step")),
    DTT(LOAD_T_INFER, LK_LLM, spec_acceptance, LT_FLOAT, LR_NO,
        "inference: speculative decoding acceptance rate, 0-1",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    DTT(LOAD_T_INFER, LK_LLM, spec_draft_cost, LT_FLOAT, LR_NO,
        "inference: a draft step in target decode steps (default 0.05)",
        LOAD_FLOAT_OR0(1e-6, 10.0, "decode steps")),
    DTT(LOAD_T_INFER, LK_LLM, ttft_max_s, LT_FLOAT, LR_NO,
        "inference SLA: time to first token at most, s", LOAD_FLOAT_OR0(1e-6, 3600.0, "s")),
    DTT(LOAD_T_INFER, LK_LLM, tpot_max_s, LT_FLOAT, LR_NO,
        "inference SLA: time per output token at most, s",
        LOAD_FLOAT_OR0(1e-6, 3600.0, "s per token")),
    DTK(layout, LT_LAYOUT, LR_NO,
        "device order of the parallel dimensions, innermost first (default \"tp-cp-dp-pp\")",
        LOAD_NONUM),
    DTT(LOAD_T_TRAIN, LK_LLM, fp8_recipe, LT_FP8_RECIPE, LR_NO,
        "FP8/FP4 scaling: \"delayed\", \"current\", \"blockwise\", \"mxfp8\", \"nvfp4\" "
        "(default: the stack's cast passes as they are)", LOAD_NONUM),
    DTT(LOAD_T_FINETUNE, LK_LLM, lora_rank, LT_INT, LR_NO,
        "finetune: low-rank adapters of this rank in every layer; base weights frozen, data "
        "gradients through all layers (default 0: none)", LOAD_INT(0, RANGE_P24, "1")),
    DTT(LOAD_T_TRAIN, LK_LLM, recompute_layers, LT_INT, LR_NO,
        "recompute = \"full\" on this many layers per pipeline stage (NeMo block method; "
        "default 0: all)", LOAD_INT(0, RANGE_P16, "layers per stage")),
    DTT(LOAD_T_TRAIN, LK_LLM, shard_degree, LT_INT, LR_NO,
        "ZeRO/FSDP shard group inside dp*cp; smaller = hybrid sharding (default dp*cp)",
        LOAD_INT(0, RANGE_P24, "devices")),
};

const load_table load_task_detailed_table = {dtask_keys, NKEYS(dtask_keys)};

/* Refuses a member of task group g (whose keys are `keys`, already
 * walked by load_value_group) that a task of kind k would ignore: a key whose
 * `types` leave k out. */
static int load_task_type_check(const config_setting_t *g, const load_key *keys,
                                size_t nkeys, task_kind k, load_err *err)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        unsigned types = 0;
        for (size_t j = 0; j < nkeys; j++)
            if (strcmp(keys[j].name, config_setting_name(s)) == 0)
                types = keys[j].types;
        if (!types || (types & (1u << k)))
            continue;
        load_fail(err, s, "key '%s' only applies to %s; a task of type \"%s\" "
                  "would ignore it", config_setting_name(s),
                  types == LOAD_T_FINETUNE ? "type \"finetune\""
                  : types == LOAD_T_INFER  ? "type \"inference\""
                                           : "types \"pretrain\" and \"finetune\"",
                  task_kind_name(k));
        return -1;
    }
    return 0;
}

int load_task(const config_setting_t *g, const model_t *m, task_t *t,
              load_err *err)
{
    memset(t, 0, sizeof *t);
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "task: expected a group { ... }");
        return -1;
    }
    const config_setting_t *ts = config_setting_get_member(g, "type");
    if (!ts) {
        load_fail(err, g,
                  "missing key 'type' in task (\"pretrain\", \"finetune\" "
                  "or \"inference\")");
        return -1;
    }
    if (load_value(ts, &task_keys[1], t, err) != 0)
        return -1;
    unsigned kinds = m->kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    bool ft = t->kind == TASK_FINETUNE;
    char ns[96];
    snprintf(ns, sizeof ns, "task (%s of a %s model)", task_kind_name(t->kind),
             model_kind_name(m->kind));
    if (load_value_group(g, ns, task_keys, NKEYS(task_keys), kinds, ft, t, err) ||
        load_task_type_check(g, task_keys, NKEYS(task_keys), t->kind, err))
        return -1;
    if (!ft)
        t->min_frozen_layer = m->layers;
    if (t->local_batch_dense <= 0 || t->local_batch_emb <= 0) {
        const char *k = t->local_batch_dense <= 0 ? "local_batch_dense"
                                                  : "local_batch_emb";
        load_fail(err, load_value_member_or(g, k), "key '%s': must be positive", k);
        return -1;
    }
    return 0;
}

/* The products the detailed fidelity forms from a strategy's integers
 * fit: tp pp dp cp at most 2^24 devices, micro_batch dp grad_accum at
 * most 2^40 sequences (0 counts as 1, the default). */
static int load_task_detailed_products(const config_setting_t *g,
                                       const task_detailed_t *t, load_err *err)
{
    const int64_t deg[4] = {t->tp, t->pp, t->dp, t->cp};
    const int64_t bat[3] = {t->micro_batch, t->dp, t->grad_accum};
    int64_t p = 1;
    for (int i = 0; i < 4; i++)
        if (range_product(p, deg[i] > 0 ? deg[i] : 1, RANGE_P24, &p) != 0) {
            load_fail(err, load_value_member_or(g, "dp"), "keys tp, pp, dp, cp: "
                      "their product exceeds %lld devices", (long long)RANGE_P24);
            return -1;
        }
    p = 1;
    for (int i = 0; i < 3; i++)
        if (range_product(p, bat[i] > 0 ? bat[i] : 1, RANGE_P40, &p) != 0) {
            load_fail(err, load_value_member_or(g, "micro_batch"), "keys micro_batch, "
                      "dp, grad_accum: their product exceeds %lld sequences",
                      (long long)RANGE_P40);
            return -1;
        }
    return 0;
}

/* The later in the file of a group's two members a and b (either may be
 * NULL: the other). */
static const config_setting_t *load_task_later(const config_setting_t *a,
                                               const config_setting_t *b)
{
    if (!a || !b)
        return a ? a : b;
    return config_setting_index(b) > config_setting_index(a) ? b : a;
}

/* Serving keys that contradict each other or change nothing (issue 29):
 * `concurrency` and `request_rate` are two load models, a closed loop of
 * that many requests in flight and open Poisson arrivals; with a rate
 * the solver ran the open loop up to the KV cache's limit and ignored
 * the concurrency (cost/detailed/serve/steady.c sv_solve). Refused at
 * the later of the two; a rate of 0 (the closed loop, as the point
 * writer states it) goes with a concurrency. `requests` (a burst sent
 * at once) is read only by a continuous scheduler at concurrency "max"
 * without a rate (sv_solve): with a fixed or "sla" concurrency, a rate or
 * the static scheduler it changed nothing; refused there. Speculative
 * decoding with draft tokens and no acceptance rate drafted at an
 * acceptance of 0 (every draft rejected: slower than none, sv_spec_init);
 * an acceptance or draft cost without draft tokens changed nothing. The
 * static scheduler reads no load model; rounds belong to a closed loop;
 * "sla" without a limit is "max". */
const char *load_serving_idle_key(int64_t concurrency, double ttft_max_s, double tpot_max_s,
                                  int64_t rounds, bool disaggregated, char *why, size_t size)
{
    /* "sla" searches the largest concurrency within the limits; with
     * none it was "max" reported as meeting an SLA */
    if (concurrency == TASK_CONC_SLA && !(ttft_max_s > 0.0) && !(tpot_max_s > 0.0)) {
        snprintf(why, size, "key 'concurrency': \"sla\" needs an SLA, ttft_max_s or "
                 "tpot_max_s (without one it is \"max\")");
        return "concurrency";
    }
    /* nor does a disaggregated deployment model a client's first round
     * (ttft.c's, colocated) */
    if (disaggregated && rounds > 0) {
        snprintf(why, size, "key 'rounds': a disaggregated deployment (prefill = { ... }) "
                 "runs the steady state; a client's rounds change nothing");
        return "rounds";
    }
    return NULL;
}

static int load_task_serving_check(const config_setting_t *g, const task_t *t,
                                   load_err *err)
{
    const config_setting_t *cs = config_setting_get_member(g, "concurrency");
    const config_setting_t *rs = config_setting_get_member(g, "request_rate");
    if (cs && rs && t->detailed.request_rate > 0.0) {
        const config_setting_t *later = load_task_later(cs, rs);
        load_fail(err, later, "key '%s': 'concurrency' and 'request_rate' are two load "
                  "models (a closed loop of requests in flight, open Poisson arrivals); "
                  "give one", config_setting_name(later));
        return -1;
    }
    const task_detailed_t *d = &t->detailed;
    if (d->requests > 0 &&
        (d->concurrency != TASK_CONC_MAX || d->request_rate > 0.0 ||
         d->scheduler == TASK_SCHED_STATIC)) {
        const char *why = d->request_rate > 0.0            ? "an open loop at request_rate"
                          : d->scheduler == TASK_SCHED_STATIC ? "scheduler \"static\""
                          : d->concurrency == TASK_CONC_SLA  ? "concurrency \"sla\""
                          : cs                             ? "a fixed concurrency"
                                                           : "the default concurrency "
                                                             "(micro_batch*dp)";
        load_fail(err, config_setting_get_member(g, "requests"), "key 'requests': a burst "
                  "of requests is sent only at concurrency = \"max\"; with %s it changes "
                  "nothing", why);
        return -1;
    }
    /* a static batch is micro_batch x dp sequences prefilled together,
     * then decoded in lock-step (sv_solve runs it before any load model):
     * a concurrency, a request rate or client rounds changed nothing */
    static const char *const loads[3] = {"concurrency", "request_rate", "rounds"};
    bool given[3] = {cs != NULL, d->request_rate > 0.0, d->rounds > 0};
    for (int j = 0; j < 3 && d->scheduler == TASK_SCHED_STATIC; j++)
        if (given[j]) {
            load_fail(err, config_setting_get_member(g, loads[j]), "key '%s': scheduler "
                      "\"static\" serves one batch of micro_batch x dp sequences; it "
                      "changes nothing", loads[j]);
            return -1;
        }
    /* the client's rounds are a closed loop's (ttft.c: its first round's
     * burst): an open loop has none, and a burst of requests is the whole
     * run with its fill already (burst.c; rounds counted that fill twice) */
    if (d->rounds > 0 && (d->request_rate > 0.0 || d->requests > 0)) {
        load_fail(err, config_setting_get_member(g, "rounds"), "key 'rounds': a closed "
                  "loop's requests per slot; %s", d->request_rate > 0.0
                      ? "an open loop at request_rate has no rounds"
                      : "a burst of requests is the whole run (give one of requests "
                        "and rounds)");
        return -1;
    }
    char why[300];
    const char *idle = load_serving_idle_key(d->concurrency, d->ttft_max_s, d->tpot_max_s, 0,
                                             false, why, sizeof why);
    if (idle) {
        load_fail(err, config_setting_get_member(g, idle), "%s", why);
        return -1;
    }
    const config_setting_t *as = config_setting_get_member(g, "spec_acceptance");
    if (d->spec_tokens > 0 && !as) {
        load_fail(err, config_setting_get_member(g, "spec_tokens"), "key 'spec_tokens': "
                  "speculative decoding needs 'spec_acceptance', the share of draft tokens "
                  "the target accepts (0-1); without it every draft would be rejected");
        return -1;
    }
    static const char *const spec_only[2] = {"spec_acceptance", "spec_draft_cost"};
    for (int j = 0; j < 2 && d->spec_tokens <= 0; j++)
        if (config_setting_get_member(g, spec_only[j])) {
            load_fail(err, config_setting_get_member(g, spec_only[j]), "key '%s': without "
                      "draft tokens (spec_tokens > 0) it changes nothing", spec_only[j]);
            return -1;
        }
    return 0;
}

int load_task_detailed(const config_setting_t *g, model_kind kind, task_t *t,
                       load_err *err)
{
    memset(t, 0, sizeof *t);
    t->detailed.dtype = HW_BF16;
    t->detailed.overlap_dp_comm = true;
    t->detailed.attention = TASK_ATTENTION_STACK;
    t->detailed.overlap_tp_comm = -1;
    t->detailed.moe_flex_dispatch = -1;
    t->detailed.moe_a2a_overlap = -1;
    t->detailed.compiled = -1;
    unsigned kinds = kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    if (load_value_group(g, kind == MODEL_DLRM ? "detailed task (dlrm)" : "detailed task",
                         dtask_keys, NKEYS(dtask_keys), kinds, false, t, err))
        return -1;
    if (load_task_type_check(g, dtask_keys, NKEYS(dtask_keys), t->kind, err) ||
        load_task_serving_check(g, t, err))
        return -1;
    if (t->detailed.frozen_layers < 0) {
        load_fail(err, load_value_member_or(g, "frozen_layers"),
                  "key 'frozen_layers': expected an integer >= 0");
        return -1;
    }
    if (kind == MODEL_DLRM && t->detailed.emb_sharding == TASK_EMB_NONE)
        t->detailed.emb_sharding = TASK_EMB_TABLE;
    if (!config_setting_get_member(g, "emb_dp_threshold_bytes"))
        t->detailed.emb_dp_threshold_bytes = -1.0; /* the stack's */
    else if (!(t->detailed.emb_dp_threshold_bytes < 1e15)) {
        load_fail(err, load_value_member_or(g, "emb_dp_threshold_bytes"),
                  "key 'emb_dp_threshold_bytes': expected a number below 1e15 "
                  "(< 0: the stack's)");
        return -1;
    }
    return load_task_detailed_products(g, &t->detailed, err);
}

/* Keys of an explicit detailed strategy (a sweep's `strategies` list):
 * the strategy keys of a detailed task, none required. */
static const char *const load_task_strategy_names[] = {
    "name", "tp", "pp", "dp", "cp", "ep", "etp", "vpp", "zero_stage", "shard_degree",
    "sequence_parallel", "recompute", "recompute_layers", "schedule", "attention",
    "overlap_dp_comm", "overlap_tp_comm", "micro_batch", "layout"};

int load_task_strategy(const config_setting_t *g, detailed_template *s, load_err *err)
{
    enum { N = NKEYS(load_task_strategy_names) };
    load_key keys[N];
    size_t n = 0;
    for (size_t k = 0; k < NKEYS(dtask_keys); k++)
        for (size_t j = 0; j < N; j++)
            if (strcmp(dtask_keys[k].name, load_task_strategy_names[j]) == 0) {
                keys[n] = dtask_keys[k];
                keys[n++].required = LR_NO;
            }
    memset(s, 0, sizeof *s);
    task_t t;
    memset(&t, 0, sizeof t);
    t.kind = TASK_PRETRAIN;
    task_detailed_t *d = &t.detailed;
    d->tp = d->pp = d->cp = d->ep = d->vpp = 1;
    d->overlap_dp_comm = true;
    d->attention = TASK_ATTENTION_STACK;
    d->overlap_tp_comm = -1;
    d->micro_batch = 1;
    if (load_value_group(g, "strategy", keys, n, LK_LLM, 0, &t, err))
        return -1;
    static const char *const deg[] = {"tp", "pp", "cp", "ep", "vpp", "micro_batch"};
    const int64_t val[] = {d->tp, d->pp, d->cp, d->ep, d->vpp_auto ? 1 : d->vpp,
                           d->micro_batch_auto ? 1 : d->micro_batch};
    for (size_t i = 0; i < NKEYS(deg); i++)
        if (val[i] < 1) {
            load_fail(err, load_value_member_or(g, deg[i]), "key '%s': expected an integer "
                      ">= 1, got %lld", deg[i], (long long)val[i]);
            return -1;
        }
    if ((d->vpp > 1 || d->vpp_auto) && d->pp <= 1) {
        load_fail(err, load_value_member_or(g, "vpp"), "key 'vpp': virtual stages need a "
                  "pipeline (pp > 1); pp is %lld", (long long)d->pp);
        return -1;
    }
    if ((d->vpp > 1 || d->vpp_auto) && d->schedule == TASK_SCHEDULE_GPIPE) {
        load_fail(err, load_value_member_or(g, "schedule"), "key 'schedule': \"gpipe\" has "
                  "no virtual stages (use \"1f1b\" or \"interleaved\", or vpp = 1)");
        return -1;
    }
    if (load_task_detailed_products(g, d, err))
        return -1;
    s->t = *d;
    s->zero_set = config_setting_get_member(g, "zero_stage") != NULL;
    s->sp_set = config_setting_get_member(g, "sequence_parallel") != NULL;
    s->etp_set = config_setting_get_member(g, "etp") != NULL;
    const config_setting_t *sch = config_setting_get_member(g, "schedule");
    const char *sv = sch ? config_setting_get_string(sch) : NULL;
    s->vpp_stack = sv && strcmp(sv, "interleaved") == 0 &&
                   !config_setting_get_member(g, "vpp");
    return 0;
}
