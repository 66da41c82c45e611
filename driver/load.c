/*
 * load.c - libconfig loading of models, systems, tasks and points.
 *
 * Invariant: every value that reaches the cost model passed a type check
 * here and a domain check in cost/ (model_derive, cluster_derive,
 * eval_check); every failure names file, line and key. Key tables are
 * the single source of parsing, defaults and `madsweep keys` help.
 */
#include "load.h"

#include "../cost/detailed.h"
#include "suggest.h"
#include "lint.h"
#include "range.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef MADSWEEP_CONFIGS_DIR
#define MADSWEEP_CONFIGS_DIR "configs"
#endif

typedef enum load_type {
    LT_INT,
    LT_FLOAT,
    LT_BOOL,
    LT_STRING,
    LT_PLAN,
    LT_MODEL_KIND,
    LT_TASK_KIND,
    LT_MLP,
    LT_NOTE, /* a string that is checked but not stored */
    /* detailed fidelity */
    LT_ARCH,
    LT_POSITION,
    LT_RECOMPUTE,
    LT_SCHEDULE,
    LT_ATTENTION,
    LT_DTYPE,
    LT_ALGO,
    LT_LAYOUT,
    LT_EMB_SHARDING,
    LT_EMB_OPT,
    LT_FP8_RECIPE,
    LT_FACT,    /* a number, or [low, nominal, high] (cost/stack.h) */
    LT_TEXT,    /* a string of up to STACK_SUMMARY_MAX - 1 bytes */
    LT_TRI,     /* true/false stored as an int 1/0 (absent: -1, set by the caller) */
    LT_MB,      /* a task's micro_batch or vpp: an integer, or "auto" (load_auto_flag) */
    LT_PP_SEND, /* "full" or "scatter_gather" */
    LT_SCHEDULER, /* serving: "continuous" or "static" */
    LT_CONC,    /* serving concurrency: an integer, "max" or "sla" */
    LT_KVDTYPE, /* a KV-cache dtype stored as 1 + hw_dtype (absent: 0, the compute dtype) */
    LT_WDTYPE,  /* stored weights, TASK_W_* (absent: 0, the compute dtype) */
    LT_ANY /* resolved by the caller (a group or a catalogue name) */
} load_type;

enum { LK_DLRM = 1u, LK_LLM = 2u, LK_ALL = 3u };
enum { LR_NO = 0, LR_YES = 1, LR_FINETUNE = 2 };

typedef struct load_key {
    const char *name;
    load_type type;
    size_t offset;
    unsigned kinds; /* model kinds the key applies to */
    int required;   /* LR_* */
    const char *doc;
} load_key;

#define MK(n, t, k, r, d) {#n, t, offsetof(model_t, n), k, r, d}
static const load_key model_keys[] = {
    MK(name, LT_STRING, LK_ALL, LR_YES, "catalogue name"),
    {"type", LT_MODEL_KIND, offsetof(model_t, kind), LK_ALL, LR_YES,
     "\"dlrm\" or \"llm\""},
    MK(bytes_per_dense_param, LT_INT, LK_ALL, LR_YES,
       "bytes per dense parameter: 8/4/2/1 selects the FP64/FP32/FP16/INT8 peak"),
    MK(bytes_per_emb_param, LT_INT, LK_ALL, LR_YES, "bytes per embedding parameter"),
    MK(bot_mlp_layers, LT_INT, LK_DLRM, LR_YES, "bottom MLP layers"),
    MK(top_mlp_layers, LT_INT, LK_DLRM, LR_YES, "top MLP layers"),
    MK(mlp_dim, LT_INT, LK_DLRM, LR_YES, "MLP width (square layers)"),
    MK(tables, LT_INT, LK_DLRM, LR_YES, "embedding tables"),
    MK(rows_per_table, LT_INT, LK_DLRM, LR_YES, "rows per embedding table"),
    MK(emb_dim, LT_INT, LK_DLRM, LR_YES, "embedding dimension"),
    MK(pooling, LT_INT, LK_DLRM, LR_YES, "lookups pooled per table per sample"),
    MK(layers, LT_INT, LK_LLM, LR_YES, "transformer layers"),
    MK(heads, LT_INT, LK_LLM, LR_YES, "attention heads"),
    MK(kv_heads, LT_INT, LK_LLM, LR_NO, "key/value heads (default: heads)"),
    MK(hidden, LT_INT, LK_LLM, LR_YES, "model (attention) dimension"),
    MK(ffn, LT_INT, LK_LLM, LR_YES, "feed-forward dimension"),
    MK(seq_len, LT_INT, LK_LLM, LR_YES, "tokens per sample"),
    MK(vocab, LT_INT, LK_LLM, LR_YES, "word-embedding rows"),
    {"mlp", LT_MLP, offsetof(model_t, mlp), LK_LLM, LR_NO,
     "\"gelu\" (default) or \"swiglu\""},
    MK(causal, LT_BOOL, LK_LLM, LR_NO, "decoder (true, default) or encoder"),
};

#define SK(n, t, d) {#n, t, offsetof(cluster_t, n), LK_ALL, LR_YES, d}
#define LOAD_BASE_KEY(list, file)                                              \
    {"base", LT_NOTE, 0, LK_ALL, LR_NO,                                        \
     "an entry to start from (list '" list "' of this file, else " file        \
     "); the other keys override its figures, only name is required"}
static const load_key system_keys[] = {
    SK(name, LT_STRING, "catalogue name"),
    LOAD_BASE_KEY("systems", "systems.cfg"),
    SK(devices, LT_INT, "devices (GPUs) in the system"),
    SK(nodes, LT_INT, "nodes; devices per node = devices / nodes"),
    SK(peak_fp64_flops, LT_FLOAT, "FP64 peak per device, FLOP/s"),
    SK(peak_fp32_flops, LT_FLOAT, "FP32/TF32 peak per device, FLOP/s"),
    SK(peak_fp16_flops, LT_FLOAT, "FP16/BF16 peak per device, FLOP/s"),
    SK(peak_int8_ops, LT_FLOAT, "INT8 peak per device, OP/s"),
    SK(flops_util, LT_FLOAT, "fraction of peak FLOPS reached, (0, 1]"),
    SK(mem_capacity_bytes, LT_FLOAT, "device memory, bytes"),
    SK(mem_bw_bytes_per_s, LT_FLOAT, "device memory bandwidth, bytes/s"),
    SK(mem_bw_util, LT_FLOAT, "fraction of memory bandwidth reached, (0, 1]"),
    SK(nvlinks, LT_INT, "NVLinks per device"),
    SK(nvlink_bidir_bytes_per_s, LT_FLOAT,
       "bandwidth per NVLink, both directions, bytes/s"),
    SK(nvlink_util, LT_FLOAT, "fraction of NVLink bandwidth reached, (0, 1]"),
    SK(nic_ports, LT_INT, "IB/RoCE ports per node"),
    SK(nic_bidir_bytes_per_s, LT_FLOAT,
       "bandwidth per IB/RoCE port, both directions, bytes/s"),
    SK(nic_util, LT_FLOAT, "fraction of IB/RoCE bandwidth reached, (0, 1]"),
    SK(allreduce_intra_fraction, LT_FLOAT,
       "weight of intra-node bandwidth in the inter-node all-reduce blend, [0, 1]"),
    {"hardware", LT_ANY, 0, LK_ALL, LR_NO,
     "hardware generation (hardware.cfg name) whose board power and price apply"},
    {"board_power_w", LT_FLOAT, offsetof(cluster_t, board_power_w), LK_ALL, LR_NO,
     "board power per device, W (default: the hardware's)"},
    {"idle_power_w", LT_FLOAT, offsetof(cluster_t, idle_power_w), LK_ALL, LR_NO,
     "idle power per device, W (default: the hardware's, else 30 % of board power)"},
    {"price_per_hour_usd", LT_FLOAT, offsetof(cluster_t, price_per_hour_usd), LK_ALL,
     LR_NO, "price per device-hour, USD (default: the hardware's)"},
};

#define TK(n, t, k, r, d) {#n, t, offsetof(task_t, n), k, r, d}
static const load_key task_keys[] = {
    {"name", LT_NOTE, 0, LK_ALL, LR_NO, "label (not used)"},
    {"type", LT_TASK_KIND, offsetof(task_t, kind), LK_ALL, LR_YES,
     "\"pretrain\", \"finetune\" or \"inference\""},
    TK(dense, LT_PLAN, LK_ALL, LR_YES,
       "dense plan, innermost level first: [\"fsdp:8\", \"ddp:256\"] (ddp, fsdp, tp)"),
    {"embedding", LT_PLAN, offsetof(task_t, emb), LK_ALL, LR_YES,
     "embedding plan: [\"mp:8\", \"ddp:256\"] (mp, ddp)"},
    TK(local_batch_dense, LT_INT, LK_ALL, LR_YES,
       "samples per device in the dense component"),
    TK(local_batch_emb, LT_INT, LK_ALL, LR_YES,
       "samples per device in the embeddings"),
    TK(freeze_emb, LT_BOOL, LK_ALL, LR_FINETUNE, "finetune: embeddings frozen"),
    TK(freeze_dense, LT_BOOL, LK_LLM, LR_FINETUNE,
       "finetune: all transformer layers frozen"),
    TK(min_frozen_layer, LT_INT, LK_LLM, LR_FINETUNE,
       "finetune: layers below this index get gradients"),
    TK(freeze_top_mlp, LT_BOOL, LK_DLRM, LR_FINETUNE, "finetune: top MLP frozen"),
    TK(freeze_bot_mlp, LT_BOOL, LK_DLRM, LR_FINETUNE,
       "finetune: bottom MLP frozen"),
};

/* Detailed fidelity: models (LLM figures + model.d, or DLRM figures),
 * hardware generations, systems and strategies. */
#define DK(n, t, r, d) {#n, t, offsetof(model_t, n), LK_LLM, r, d}
#define DKD(n, t, doc) {#n, t, offsetof(model_t, d.n), LK_LLM, LR_NO, doc}
#define DKR(n, t, r, d) {#n, t, offsetof(model_t, n), LK_DLRM, r, d}
static const load_key dmodel_keys[] = {
    {"name", LT_STRING, offsetof(model_t, name), LK_ALL, LR_YES, "catalogue name"},
    {"type", LT_MODEL_KIND, offsetof(model_t, kind), LK_ALL, LR_YES, "\"llm\" or \"dlrm\""},
    DKR(tables, LT_INT, LR_YES, "embedding tables"),
    {"rows_per_table", LT_ANY, 0, LK_DLRM, LR_YES,
     "rows per embedding table: one number, or a list with one per table"},
    DKR(emb_dim, LT_INT, LR_YES, "embedding dimension (= the bottom MLP's output)"),
    {"pooling", LT_ANY, 0, LK_DLRM, LR_YES,
     "lookups pooled per table per sample: one number, or a list with one per table (multi-hot)"},
    {"interaction", LT_ANY, 0, LK_DLRM, LR_NO,
     "\"dot\" (default, pairwise dots) or \"dcnv2\" (low-rank cross layers)"},
    {"cross_layers", LT_INT, offsetof(model_t, d.cross_layers), LK_DLRM, LR_NO,
     "dcnv2: cross layers (default 3)"},
    {"cross_rank", LT_INT, offsetof(model_t, d.cross_rank), LK_DLRM, LR_NO,
     "dcnv2: rank of each cross layer's projection (default 512)"},
    DKR(bytes_per_emb_param, LT_INT, LR_NO, "bytes per embedding element (default 4, fp32)"),
    {"bot_mlp", LT_ANY, 0, LK_DLRM, LR_YES,
     "bottom MLP widths, dense features first, emb_dim last: [13, 512, 256, 128]"},
    {"top_mlp", LT_ANY, 0, LK_DLRM, LR_YES,
     "top MLP output widths; input emb_dim + tables (tables + 1) / 2: [1024, 1024, 512, 256, 1]"},
    DKD(arch, LT_ARCH,
        "\"gpt\" (default), \"llama\", \"mpt\", \"bloom\", \"vit\", \"mixtral\", \"deepseek\""),
    DK(layers, LT_INT, LR_YES, "transformer layers"),
    DK(hidden, LT_INT, LR_YES, "model dimension h"),
    DK(ffn, LT_INT, LR_YES, "feed-forward dimension (dense layers)"),
    DK(heads, LT_INT, LR_YES, "attention heads"),
    DK(kv_heads, LT_INT, LR_NO, "key/value heads, grouped-query attention (default: heads)"),
    DK(seq_len, LT_INT, LR_YES, "tokens per sample (ViT: patch tokens)"),
    DK(vocab, LT_INT, LR_YES, "vocabulary (0 for ViT: no embedding table or head)"),
    {"mlp", LT_MLP, offsetof(model_t, mlp), LK_LLM, LR_NO,
     "\"gelu\" (default, 2 matrices) or \"swiglu\" (3 matrices)"},
    DK(causal, LT_BOOL, LR_NO, "decoder (true, default) or encoder"),
    DKD(position, LT_POSITION, "\"learned\" (default), \"rope\", \"alibi\", \"none\""),
    DKD(untied_embeddings, LT_BOOL, "output head separate from the word embedding (default false)"),
    DKD(dropout, LT_TRI,
        "dropout layers whose masks are kept (default: gpt, bloom, vit yes; others no)"),
    DKD(experts, LT_INT, "MoE: routed experts per layer (default 0: dense)"),
    DKD(top_k, LT_INT, "MoE: experts per token (default 2)"),
    DKD(shared_experts, LT_INT, "MoE: always-active experts (default 0)"),
    DKD(expert_ffn, LT_INT, "MoE: FFN dimension of one expert (default ffn)"),
    DKD(dense_layers, LT_INT, "MoE: leading dense layers (default 0)"),
    DKD(head_dim, LT_INT, "per-head dimension (default hidden / heads; Qwen3: 128)"),
    DKD(qk_norm, LT_BOOL, "RMSNorm of each query and key head (Qwen3: true; default false)"),
    DKD(q_lora_rank, LT_INT,
        "MLA: rank of the query down-projection (default 0: full query projection)"),
    DKD(kv_lora_rank, LT_INT,
        "MLA: rank of the shared key/value latent (default 0: no MLA; DeepSeek-V3: 512)"),
    DKD(qk_nope_head_dim, LT_INT, "MLA: per-head query/key dimensions without RoPE (V3: 128)"),
    DKD(qk_rope_head_dim, LT_INT, "MLA: per-head RoPE query/key dimensions (V3: 64)"),
    DKD(v_head_dim, LT_INT, "MLA: per-head value dimension (V3: 128)"),
    DKD(mtp_layers, LT_INT,
        "multi-token prediction modules on the last stage (DeepSeek-V3: 1; default 0)"),
};

#define HWO(i) (offsetof(hw_t, peak_flops) + (size_t)(i) * sizeof(double))
#define HK(n, t, r, d) {#n, t, offsetof(hw_t, n), LK_ALL, r, d}
static const load_key hw_keys[] = {
    HK(name, LT_STRING, LR_YES, "catalogue name"),
    LOAD_BASE_KEY("hardware", "hardware.cfg"),
    {"peak_fp32_flops", LT_FLOAT, HWO(HW_FP32), LK_ALL, LR_YES, "FP32 dense peak, FLOP/s"},
    {"peak_tf32_flops", LT_FLOAT, HWO(HW_TF32), LK_ALL, LR_NO, "TF32 dense peak, FLOP/s (0: none)"},
    {"peak_bf16_flops", LT_FLOAT, HWO(HW_BF16), LK_ALL, LR_YES,
     "BF16/FP16 dense tensor peak, FLOP/s"},
    {"peak_fp8_flops", LT_FLOAT, HWO(HW_FP8), LK_ALL, LR_NO, "FP8 dense peak, FLOP/s (0: none)"},
    {"peak_int8_ops", LT_FLOAT, HWO(HW_INT8), LK_ALL, LR_NO, "INT8 dense peak, OP/s (0: none)"},
    {"peak_fp4_flops", LT_FLOAT, HWO(HW_FP4), LK_ALL, LR_NO,
     "FP4 dense peak (NVFP4/MXFP4), FLOP/s (0: none: FP4 runs at the BF16 peak)"},
    HK(mem_capacity_bytes, LT_FLOAT, LR_YES, "device memory, bytes"),
    HK(mem_bw_bytes_per_s, LT_FLOAT, LR_YES, "device memory bandwidth, bytes/s"),
    HK(mem_bw_efficiency, LT_FLOAT, LR_YES, "fraction of memory bandwidth streaming kernels reach"),
    {"gemm_log10_flops", LT_ANY, 0, LK_ALL, LR_YES,
     "GEMM size points, log10 FLOPs, ascending (array of up to 8 floats)"},
    {"gemm_efficiency", LT_ANY, 0, LK_ALL, LR_YES,
     "GEMM fraction of peak at each size point (same length)"},
    HK(attention_efficiency, LT_FLOAT, LR_YES,
       "FlashAttention-2-class attention (forward and backward), fraction of peak"),
    HK(attention_tuned_efficiency, LT_FLOAT, LR_NO,
       "vendor-tuned fused attention (cuDNN/TE, FlashAttention-3), fraction of peak "
       "(default: attention_efficiency)"),
    HK(kernel_overhead_s, LT_FLOAT, LR_YES, "fixed cost per kernel, s"),
    {"gemm_fp8_log10_flops", LT_ANY, 0, LK_ALL, LR_NO,
     "FP8 GEMM size points, log10 FLOPs (default: FP8 GEMMs use the BF16 table)"},
    {"gemm_fp8_efficiency", LT_ANY, 0, LK_ALL, LR_NO,
     "FP8 GEMM fraction of the FP8 peak at each size point"},
    HK(serve_gemm_fp8_efficiency, LT_FLOAT, LR_NO,
       "serving: FP8 GEMM fraction of the FP8 peak at large m, from kernel sweeps "
       "(default: the FP8 table's top)"),
    {"gemm_fp4_log10_flops", LT_ANY, 0, LK_ALL, LR_NO,
     "FP4 GEMM size points, log10 FLOPs (default: FP4 GEMMs use the BF16 table)"},
    {"gemm_fp4_efficiency", LT_ANY, 0, LK_ALL, LR_NO,
     "FP4 GEMM fraction of the FP4 peak at each size point"},
    HK(efficiency_uncertainty, LT_FLOAT, LR_NO,
       "relative +- of the compute efficiencies, for the band (default 0)"),
    HK(network_uncertainty, LT_FLOAT, LR_NO,
       "relative +- of the network figures, for the band (default 0)"),
    HK(scaleup_devices, LT_INT, LR_YES, "devices per NVLink/NVSwitch (scale-up) domain"),
    HK(scaleup_tray_devices, LT_INT, LR_NO,
       "devices per compute tray inside a scale-up domain (default 0: jobs take whole "
       "domains; GB200 NVL72: 4, a job of whole trays spans whole and partial domains)"),
    HK(scaleup_bytes_per_s, LT_FLOAT, LR_YES, "scale-up bandwidth per device, one direction, bytes/s"),
    HK(scaleup_latency_s, LT_FLOAT, LR_YES, "scale-up latency per collective step, s"),
    HK(scaleup_efficiency, LT_FLOAT, LR_YES, "fraction of scale-up bandwidth collectives reach"),
    HK(scaleup_nvls_efficiency, LT_FLOAT, LR_NO,
       "in-switch reduction (NVLS) efficiency; 0 (default): the switch cannot reduce"),
    HK(nic_bytes_per_s, LT_FLOAT, LR_YES, "default NIC bandwidth per device, one direction, bytes/s"),
    HK(nic_latency_s, LT_FLOAT, LR_YES, "network latency per collective step, s"),
    HK(nic_efficiency, LT_FLOAT, LR_YES, "fraction of NIC bandwidth collectives reach"),
    HK(board_power_w, LT_FLOAT, LR_NO, "board power (TDP) per device, W (energy figures)"),
    HK(idle_power_w, LT_FLOAT, LR_NO,
       "power of a device waiting, W (default 30 % of board power; cost/energy.h)"),
    HK(price_per_hour_usd, LT_FLOAT, LR_NO, "price per device-hour, USD (cost figures)"),
};

#define YK(n, t, r, d) {#n, t, offsetof(topo_system_t, n), LK_ALL, r, d}
static const load_key dsystem_keys[] = {
    YK(name, LT_STRING, LR_YES, "name"),
    LOAD_BASE_KEY("systems", "detailed_systems.cfg"),
    {"hardware", LT_ANY, 0, LK_ALL, LR_YES,
     "hardware generation: a group or a name in list 'hardware' (hardware.cfg)"},
    YK(devices, LT_INT, LR_YES, "devices in the system"),
    YK(devices_per_node, LT_INT, LR_NO, "scale-up domain size (default: the hardware's)"),
    YK(nic_gbps_per_device, LT_FLOAT, LR_NO,
       "scale-out bandwidth per device, Gb/s one direction (default: the hardware's)"),
    YK(pod_devices, LT_INT, LR_NO, "devices per pod; above it the network is oversubscribed"),
    YK(pod_oversubscription, LT_FLOAT, LR_NO, "oversubscription above the pod (e.g. 7 for 1:7)"),
    {"collective", LT_ALGO, offsetof(topo_system_t, algo), LK_ALL, LR_NO,
     "\"auto\" (default: per collective and size the fastest, as NCCL's tuner), "
     "\"ring\", \"tree\" or \"hierarchical\""},
    {"board_power_w", LT_ANY, 0, LK_ALL, LR_NO, "board power per device, W (default: the hardware's)"},
    {"idle_power_w", LT_ANY, 0, LK_ALL, LR_NO, "idle power per device, W (default: the hardware's)"},
    {"price_per_hour_usd", LT_ANY, 0, LK_ALL, LR_NO,
     "price per device-hour, USD (default: the hardware's)"},
};

#define DTK(n, t, r, d) {#n, t, offsetof(task_t, detailed.n), LK_LLM, r, d}
#define DTA(n, t, r, d) {#n, t, offsetof(task_t, detailed.n), LK_ALL, r, d}
#define DTR(n, t, r, d) {#n, t, offsetof(task_t, detailed.n), LK_DLRM, r, d}
static const load_key dtask_keys[] = {
    {"name", LT_NOTE, 0, LK_ALL, LR_NO, "label (not used)"},
    {"type", LT_TASK_KIND, offsetof(task_t, kind), LK_ALL, LR_YES,
     "\"pretrain\", \"finetune\" or \"inference\""},
    DTK(tp, LT_INT, LR_YES, "tensor-parallel degree (innermost)"),
    DTK(pp, LT_INT, LR_YES, "pipeline stages (outermost)"),
    DTA(dp, LT_INT, LR_YES, "data-parallel degree; tp*pp*dp*cp = devices (DLRM: devices)"),
    DTR(emb_sharding, LT_EMB_SHARDING, LR_NO,
        "embedding tables \"table\"-wise (default), \"row\"-wise, \"column\"-wise or "
        "\"auto\" (per table by a cost planner: replicated, whole or row-split)"),
    DTR(allreduce_sharp, LT_BOOL, LR_NO,
        "DLRM: gradient all-reduces reduced in the switches (SHARP, NCCL CollNet; default false)"),
    DTR(emb_hybrid, LT_BOOL, LR_NO,
        "auto: hybrid embedding, frequent rows replicated (HugeCTR; default false)"),
    DTR(emb_mem_comm_bw_ratio, LT_FLOAT, LR_NO,
        "auto, hierarchical stack: the planner's HBM-to-network bandwidth ratio as the run "
        "set it (HugeCTR MEM_COMM_BW_RATIO; 0 or absent: the hardware's)"),
    DTR(emb_dp_threshold_bytes, LT_FLOAT, LR_NO,
        "auto: tables of at most this many bytes (rows and optimizer state) replicated "
        "(0: none; < 0 or absent: the stack's)"),
    DTR(emb_optimizer, LT_EMB_OPT, LR_NO,
        "sparse optimizer: \"rowwise_adagrad\" (default, 1 value per row), \"sgd\", "
        "\"adagrad\", \"adam\""),
    DTR(emb_column_shards, LT_INT, LR_NO,
        "column-wise: shards per table (default: smallest divisor of emb_dim with "
        "tables*shards >= devices)"),
    {"freeze_emb", LT_BOOL, offsetof(task_t, freeze_emb), LK_ALL, LR_NO,
     "finetune: embeddings frozen (no gradients, no optimizer states)"},
    DTK(frozen_layers, LT_INT, LR_NO,
        "finetune: the first N transformer layers frozen, the rest trained (default 0)"),
    {"freeze_bot_mlp", LT_BOOL, offsetof(task_t, freeze_bot_mlp), LK_DLRM, LR_NO,
     "finetune: bottom MLP frozen"},
    {"freeze_top_mlp", LT_BOOL, offsetof(task_t, freeze_top_mlp), LK_DLRM, LR_NO,
     "finetune: top MLP frozen"},
    DTK(cp, LT_INT, LR_NO, "context-parallel degree, ring attention (default 1)"),
    DTK(ep, LT_INT, LR_NO, "expert-parallel degree inside dp*cp (default 1)"),
    DTK(vpp, LT_MB, LR_NO,
        "virtual stages per device, interleaved 1F1B (default 1), or \"auto\" (the fastest "
        "interleaving that fits, with pp > 1)"),
    DTK(zero_stage, LT_INT, LR_NO, "0 none, 1 optimizer, 2 + gradients, 3 + parameters (FSDP)"),
    DTK(sequence_parallel, LT_BOOL, LR_NO,
        "Megatron sequence parallelism with tp > 1 (default: the stack's)"),
    DTK(recompute, LT_RECOMPUTE, LR_NO,
        "\"none\" (default), \"selective\" (what the stack's selective mode recomputes), "
        "\"full\", or \"auto\" (the least of them whose memory fits)"),
    DTK(schedule, LT_SCHEDULE, LR_NO,
        "\"1f1b\" (default; interleaved when vpp > 1), \"interleaved\" (vpp default: the "
        "stack's) or \"gpipe\""),
    DTK(attention, LT_ATTENTION, LR_NO,
        "\"flash\" (FlashAttention-2 class), \"tuned\" (cuDNN/TE, FA3) or \"unfused\" (default: the stack's kernel)"),
    DTA(overlap_dp_comm, LT_BOOL, LR_NO,
        "overlap DP/FSDP communication with compute, as far as the stack does (default true)"),
    DTK(overlap_tp_comm, LT_TRI, LR_NO,
        "TP communication hidden behind the GEMMs: true fully, false never (default: as the "
        "stack does)"),
    DTK(moe_flex_dispatch, LT_TRI, LR_NO,
        "MoE token dispatcher: true flex (DeepEP, HybridEP: hierarchical), false all-to-all "
        "(default: the stack's)"),
    DTK(moe_a2a_overlap, LT_TRI, LR_NO,
        "MoE EP all-to-all overlapped with the other micro-batch's compute (Megatron-Core "
        "overlap_moe_expert_parallel_comm; default: as the stack does)"),
    DTK(compiled, LT_TRI, LR_NO,
        "torch.compile: true takes the fused end of the stack's element-wise passes, false "
        "the eager end (default: the stack's nominal)"),
    {"precision", LT_DTYPE, offsetof(task_t, detailed.dtype), LK_ALL, LR_NO,
     "\"bf16\" (default), \"fp16\", \"fp8\", \"fp4\", \"tf32\", \"fp32\" (a peak the "
     "hardware lacks: its BF16 peak)"},
    DTA(micro_batch, LT_MB, LR_NO,
        "sequences per micro-batch, or \"auto\": the fastest dividing the replica's batch "
        "that fits (default: the stack's)"),
    DTA(global_batch, LT_INT, LR_NO, "sequences per iteration (default micro_batch*dp*grad_accum)"),
    DTA(grad_accum, LT_INT, LR_NO, "micro-batches per replica (default global/(micro*dp))"),
    DTK(capacity_factor, LT_FLOAT, LR_NO, "MoE capacity factor (default 1.0)"),
    DTK(memory_fraction, LT_FLOAT, LR_NO,
        "usable share of device memory (torch.cuda.set_per_process_memory_fraction; "
        "default 1.0)"),
    DTK(etp, LT_INT, LR_NO,
        "MoE expert tensor parallelism, dividing tp (default: the stack's expert_tensor_parallel; "
        "0 = tp); below tp, ep folds over tp*dp*cp"),
    DTA(grad_reduce_bytes, LT_FLOAT, LR_NO,
        "bytes per reduced gradient element (default: the stack's)"),
    DTK(prompt_tokens, LT_INT, LR_NO, "inference: prompt length (default seq_len)"),
    DTK(decode_tokens, LT_INT, LR_NO, "inference: generated tokens per sequence (required)"),
    DTK(scheduler, LT_SCHEDULER, LR_NO,
        "inference: \"continuous\" batching (default: steps of decodes plus prefill chunks) "
        "or \"static\" (the batch prefills, then decodes in lock-step)"),
    DTK(concurrency, LT_CONC, LR_NO,
        "inference: requests in flight over all replicas, \"max\" (the KV cache's limit; "
        "offline) or \"sla\" (the largest meeting ttft_max_s/tpot_max_s); default "
        "micro_batch*dp"),
    DTK(request_rate, LT_FLOAT, LR_NO,
        "inference: Poisson arrivals, requests/s over all replicas (open loop; 0: closed)"),
    DTK(requests, LT_INT, LR_NO,
        "inference, concurrency \"max\": a burst of this many requests sent at once, as a "
        "benchmark client does (default 0: an endless backlog, the steady state)"),
    DTK(uniform_lengths, LT_BOOL, LR_NO,
        "inference: prompt and output lengths vary uniformly on [0, 2x] the mean "
        "prompt_tokens/decode_tokens (default false: fixed lengths)"),
    DTK(attn_dp, LT_INT, LR_NO,
        "inference: attention data-parallel ranks inside the tp group, dividing tp (SGLang "
        "--enable-dp-attention --dp N: attention at tp/N on each rank's own requests and KV, "
        "the MLP/MoE over all tp devices; default 1: none)"),
    {"kv_precision", LT_KVDTYPE, offsetof(task_t, detailed.kv_dtype), LK_LLM, LR_NO,
     "inference: KV-cache dtype \"bf16\", \"fp16\", \"fp8\" or \"int8\" (default: "
     "precision)"},
    {"weight_precision", LT_WDTYPE, offsetof(task_t, detailed.weight_dtype), LK_LLM, LR_NO,
     "inference: stored weights \"bf16\", \"fp16\", \"fp8\", \"int8\", \"int4\" (group "
     "scales per 128) or \"fp4\" (NVFP4, scales per 16); GEMMs in precision (default: "
     "precision)"},
    DTK(spec_tokens, LT_INT, LR_NO,
        "inference: speculative decoding, draft tokens per step (default 0: off)"),
    DTK(spec_acceptance, LT_FLOAT, LR_NO, "inference: speculative decoding acceptance rate, 0-1"),
    DTK(spec_draft_cost, LT_FLOAT, LR_NO,
        "inference: a draft step in target decode steps (default 0.05)"),
    DTK(ttft_max_s, LT_FLOAT, LR_NO, "inference SLA: time to first token at most, s"),
    DTK(tpot_max_s, LT_FLOAT, LR_NO, "inference SLA: time per output token at most, s"),
    DTK(layout, LT_LAYOUT, LR_NO,
        "device order of the parallel dimensions, innermost first (default \"tp-cp-dp-pp\")"),
    DTK(fp8_recipe, LT_FP8_RECIPE, LR_NO,
        "FP8/FP4 scaling: \"delayed\", \"current\", \"blockwise\", \"mxfp8\", \"nvfp4\" "
        "(default: the stack's cast passes as they are)"),
    DTK(lora_rank, LT_INT, LR_NO,
        "finetune: low-rank adapters of this rank in every layer; base weights frozen, data "
        "gradients through all layers (default 0: none)"),
    DTK(recompute_layers, LT_INT, LR_NO,
        "recompute = \"full\" on this many layers per pipeline stage (NeMo block method; "
        "default 0: all)"),
    DTK(shard_degree, LT_INT, LR_NO,
        "ZeRO/FSDP shard group inside dp*cp; smaller = hybrid sharding (default dp*cp)"),
};

#define PFK(n, t, r, d) {#n, t, offsetof(point_prefill, n), LK_LLM, r, d}
static const load_key prefill_keys[] = {
    {"hardware", LT_ANY, 0, LK_LLM, LR_NO,
     "the prefill pool's hardware: a group or a name in list 'hardware' (hardware.cfg; "
     "default: the system's)"},
    {"devices", LT_ANY, 0, LK_LLM, LR_YES,
     "devices of the prefill pool (a whole number of tp*pp replicas), or \"auto\": as "
     "many replicas as the decode pool's request rate needs (rate matching)"},
    PFK(tp, LT_INT, LR_NO, "a prefill replica's tensor-parallel degree (default: the task's tp)"),
    PFK(pp, LT_INT, LR_NO, "a prefill replica's pipeline stages (default 1)"),
    {"devices_per_node", LT_INT, offsetof(point_prefill, system.devices_per_node), LK_LLM,
     LR_NO, "its scale-up domain (default: the hardware's)"},
    {"nic_gbps_per_device", LT_FLOAT, offsetof(point_prefill, system.nic_gbps_per_device),
     LK_LLM, LR_NO, "its scale-out bandwidth per device, Gb/s one direction (default: the "
     "hardware's)"},
    {"kv_transfer", LT_ANY, 0, LK_LLM, LR_NO,
     "\"after_prefill\" (default: vLLM, SGLang, TensorRT-LLM send the KV when the prompt is "
     "done) or \"layerwise\" (each layer's KV sent behind the next layer's prefill)"},
};

#define STK(n, t, r, d) {#n, t, offsetof(stack_desc, n), LK_ALL, r, d}
static const load_key stack_keys[] = {
    STK(name, LT_STRING, LR_YES, "catalogue name"),
    STK(summary, LT_TEXT, LR_NO, "one line: what the stack is"),
    STK(attention, LT_ATTENTION, LR_YES,
        "attention kernel: \"flash\" (FlashAttention-2 class), \"tuned\" (vendor-tuned fused) or \"unfused\" (scores materialized)"),
    STK(elementwise_passes, LT_FACT, LR_YES,
       "memory-bound traffic relative to fused kernels (1 fused; eager > 1)"),
    STK(launch_s, LT_FACT, LR_YES, "host launch cost per kernel not hidden, s"),
    STK(fp8_cast_passes, LT_FACT, LR_YES,
       "HBM passes over an FP8 GEMM's inputs for casts and scaling (bf16 bytes)"),
    STK(sequence_parallel, LT_BOOL, LR_YES, "sequence parallelism with tp > 1 when a run does not say"),
    STK(tp_overlap_fwd, LT_FACT, LR_YES, "fraction of forward TP collectives that hides behind GEMMs"),
    STK(tp_overlap_bwd, LT_FACT, LR_YES, "fraction of backward TP collectives that hides behind GEMMs"),
    STK(dp_overlap, LT_FACT, LR_YES, "fraction of DP/ZeRO collectives that overlaps compute"),
    STK(zero3_overlap, LT_FACT, LR_NO,
        "fraction of ZeRO 3's gathers and reduce-scatters that overlaps compute (default: "
        "dp_overlap)"),
    STK(comm_slowdown, LT_FACT, LR_YES, "compute slowdown while collectives run beside it"),
    STK(dp_rails, LT_INT, LR_YES, "NIC rails a DP ring spanning nodes uses (0: all)"),
    STK(dp_bus_efficiency, LT_FACT, LR_YES, "fraction of NIC bandwidth those DP rings reach"),
    STK(zero3_prefetch, LT_INT, LR_YES, "ZeRO 3/FSDP units all-gathered ahead"),
    STK(zero3_reshard, LT_BOOL, LR_YES, "ZeRO 3 frees gathered parameters after forward"),
    STK(zero3_rs_every_microbatch, LT_BOOL, LR_YES,
       "ZeRO 3 reduce-scatters gradients every micro-batch (else the last)"),
    STK(zero3_pp_defer, LT_BOOL, LR_YES,
        "with pp > 1, ZeRO 3 gathers once per step and reduces after the last micro-batch"),
    STK(selective_attention, LT_BOOL, LR_YES, "\"selective\" recomputes the attention core"),
    STK(selective_gemm_fraction, LT_FACT, LR_YES, "\"selective\" also recomputes this fraction of GEMMs"),
    STK(pp_send, LT_PP_SEND, LR_YES, "pipeline sends without SP: \"full\" or \"scatter_gather\""),
    STK(pp_embedding_layers, LT_FLOAT, LR_YES, "the embedding counts as this many layers in the stage split"),
    STK(pp_loss_layers, LT_FLOAT, LR_YES, "the head and loss count as this many layers in the split"),
    STK(pp_weighted, LT_BOOL, LR_YES,
       "split by those weights always (else only when layers do not divide evenly)"),
    STK(default_vpp, LT_INT, LR_YES, "interleaved chunks per stage when a run does not say"),
    STK(default_micro_batch, LT_INT, LR_YES, "sequences per micro-batch when a run does not say"),
    STK(default_zero_stage, LT_INT, LR_YES, "ZeRO stage (0-3) when a run does not say"),
    {"zero_stages", LT_ANY, 0, LK_ALL, LR_NO,
     "ZeRO stages the stack runs, a list of 0-3 (default: all); auto strategies offer only these"},
    STK(serving, LT_BOOL, LR_NO,
        "a serving engine (its training facts optional: the idealized stack's)"),
    STK(token_budget, LT_INT, LR_NO, "serving: tokens per engine step (chunked-prefill budget)"),
    STK(max_seqs, LT_INT, LR_NO, "serving: sequences running at once at most"),
    STK(mem_fraction, LT_FACT, LR_NO,
        "serving: memory for weights + KV (of the total), or for KV (of the free memory)"),
    STK(mem_fraction_of_free, LT_BOOL, LR_NO,
        "serving: mem_fraction is of the memory left after weights (TensorRT-LLM)"),
    STK(mem_fraction_static, LT_BOOL, LR_NO,
        "serving: mem_fraction holds weights + KV only, activations outside it (SGLang)"),
    STK(kv_block, LT_INT, LR_NO, "serving: tokens per KV-cache block"),
    STK(kv_reserve, LT_BOOL, LR_NO,
        "serving: a request reserves its prompt + output KV on admission (else on demand)"),
    STK(prefill_apart, LT_BOOL, LR_NO,
        "serving: prefill runs in steps of its own, decodes wait (SGLang; default false)"),
    STK(kv_output_reserve, LT_FACT, LR_NO,
        "serving: on demand, share of a request's remaining output kept free for it (default 0)"),
    STK(gemm_floor_s, LT_FACT, LR_NO, "serving: fixed cost per weight GEMM, s"),
    STK(weight_bw_eff, LT_FACT, LR_NO, "serving: HBM fraction decode GEMMs stream weights at"),
    STK(gemm_eff_max, LT_FACT, LR_NO,
        "serving: GEMM efficiency of serving shapes at large m, fraction of the hardware's"),
    STK(gemm_m_half, LT_FACT, LR_NO, "serving: tokens at which a GEMM reaches half of it"),
    STK(kv_bw_eff, LT_FACT, LR_NO, "serving: HBM fraction decode attention reads the KV at"),
    STK(kv_per_query_head, LT_BOOL, LR_NO,
        "serving: decode attention reads K/V per query head (no GQA sharing; default false)"),
    STK(attn_floor_s, LT_FACT, LR_NO, "serving: decode attention floor per layer, s"),
    STK(prefill_attn_eff, LT_FACT, LR_NO, "serving: prefill attention, fraction of the BF16 peak"),
    STK(ew_floor_s, LT_FACT, LR_NO, "serving: floor per fused element-wise kernel, s"),
    STK(allreduce_s, LT_FACT, LR_NO, "serving: TP all-reduce kernel latency per call, s"),
    STK(allreduce_bw_eff, LT_FACT, LR_NO, "serving: ... its fraction of scale-up bandwidth"),
    STK(allreduce_ramp_bytes, LT_FACT, LR_NO,
        "serving: bus bytes of the bandwidth all-reduce's ramp to full bandwidth (default 0)"),
    STK(step_host_s, LT_FACT, LR_NO, "serving: host time per step not overlapped, s"),
    STK(seq_host_s, LT_FACT, LR_NO,
        "serving: host time per sequence in a step not overlapped, s (default 0)"),
    STK(request_host_s, LT_FACT, LR_NO, "serving: host time in each request's TTFT, s"),
    STK(param_bytes, LT_FLOAT, LR_YES, "persistent compute-dtype copy, bytes/parameter (0: none)"),
    STK(master_bytes, LT_FLOAT, LR_YES, "fp32 master weights, bytes/parameter"),
    STK(grad_bytes, LT_FLOAT, LR_YES, "gradient buffer, bytes/parameter"),
    STK(optimizer_bytes, LT_FLOAT, LR_YES, "optimizer states, bytes/parameter"),
    STK(grad_reduce_bytes, LT_FLOAT, LR_YES, "bytes per gradient element reduced"),
    STK(zero3_grad_reduce_bytes, LT_FLOAT, LR_NO,
        "bytes per gradient element accumulated and reduced under ZeRO 3 (default: "
        "grad_reduce_bytes)"),
    STK(optimizer_step_bytes, LT_FLOAT, LR_YES, "HBM bytes the optimizer step moves per parameter"),
    STK(reserve_bytes, LT_FLOAT, LR_YES, "CUDA context, allocator and workspace reserve, bytes"),
    STK(logit_bytes, LT_FLOAT, LR_YES,
        "bytes per logit held on the last stage (logits, the loss's copy, gradient)"),
    STK(expert_tensor_parallel, LT_INT, LR_NO,
        "MoE: expert tensor parallelism when a run does not say (default 0: = tp; "
        "Megatron-Core MoE: 1, experts whole and ep folded over tp*dp*cp)"),
    STK(moe_a2a_overlap, LT_FACT, LR_NO,
        "MoE: fraction of the expert-parallel all-to-all hidden behind other work (default 0)"),
    STK(moe_a2a_overlap_on, LT_FACT, LR_NO,
        "MoE: fraction of the all-to-all hidden when a run turns the 1F1B A2A overlap on "
        "(default 0: all of it, as far as the other micro-batch's compute lasts)"),
    STK(moe_hierarchical_dispatch, LT_FACT, LR_NO,
        "MoE: share of the dispatch that is hierarchical (DeepEP/HybridEP: one network copy "
        "per remote scale-up domain, NVLink fan-out; default 0: flat all-to-all)"),
    STK(selective_block_fraction, LT_FACT, LR_NO,
        "\"selective\" = whole-block checkpointing of this fraction of the layers (fms-fsdp; "
        "default 0: op-level selective recompute)"),
    STK(selective_norm_act, LT_BOOL, LR_NO,
        "\"selective\" also recomputes the norms and the MLP activation (Megatron-Core "
        "recompute_modules layernorm, moe_act; default false)"),
    STK(loss_bytes, LT_FACT, LR_YES,
        "HBM bytes the loss moves per logit, forward + backward (fused ~14, unfused fp32 ~56)"),
    STK(emb_comm_bytes, LT_FLOAT, LR_NO,
        "DLRM: bytes per pooled embedding element exchanged (default: the table's)"),
    STK(emb_dp_threshold_bytes, LT_FLOAT, LR_NO,
        "DLRM auto placement: tables of at most this many bytes (rows and optimizer state) "
        "replicated (default 0: none)"),
    STK(emb_hierarchical, LT_BOOL, LR_NO,
        "DLRM: hierarchical all-to-all (NVLink in the node, then between nodes); on several "
        "nodes the auto placement plans as HugeCTR's hier_auto"),
    STK(emb_split_columns, LT_BOOL, LR_NO,
        "DLRM: split tables by columns (default false: by rows, partial sums reduced)"),
    STK(emb_hot_fraction, LT_FACT, LR_NO,
        "DLRM hybrid embedding: fraction of lookups hitting replicated frequent rows (0: none)"),
    STK(emb_hot_rows, LT_FLOAT, LR_NO, "DLRM hybrid embedding: frequent rows replicated"),
    STK(emb_overlap, LT_FACT, LR_NO,
        "DLRM: fraction of the embedding work and exchange hidden behind the MLPs"),
    STK(step_overhead_s, LT_FACT, LR_NO, "DLRM: per-iteration host cost not hidden, s"),
    STK(mlp_efficiency, LT_FACT, LR_NO,
        "DLRM: dense GEMM rate relative to the hardware's curve (default 1)"),
};

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

/* ------------------------------------------------------------ errors */

void load_fail(load_err *err, const config_setting_t *s, const char *fmt, ...)
{
    int n = 0;
    const char *file = s ? config_setting_source_file(s) : NULL;
    unsigned line = s ? config_setting_source_line(s) : 0;
    n = snprintf(err->text, sizeof err->text, "%s:%u: ",
                 file ? file : "(input)", line);
    if (n < 0 || (size_t)n >= sizeof err->text)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text + n, sizeof err->text - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ files */

void load_reads_add(load_reads *r, const char *path)
{
    if (!r || r->n >= LOAD_READS_MAX)
        return;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->path[i], path) == 0)
            return;
    snprintf(r->path[r->n++], LOAD_PATH_MAX, "%s", path);
}

const char *load_configs_dir(const char *override)
{
    if (override && *override)
        return override;
    const char *env = getenv("MADSWEEP_CONFIGS");
    if (env && *env)
        return env;
    return MADSWEEP_CONFIGS_DIR;
}

int load_open(config_t *cfg, const char *path, const char *configs_dir,
              load_err *err)
{
    config_init(cfg);
    config_set_include_dir(cfg, configs_dir);
    if (lint_config(path, configs_dir, err->text, sizeof err->text) != 0) {
        config_destroy(cfg); /* what libconfig would exit or leak on */
        return -1;
    }
    if (config_read_file(cfg, path) == CONFIG_TRUE)
        return 0;
    if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
        snprintf(err->text, sizeof err->text,
                 "%s: cannot read file (missing or unreadable)", path);
    else
        snprintf(err->text, sizeof err->text, "%s:%d: syntax error: %s",
                 config_error_file(cfg) ? config_error_file(cfg) : path,
                 config_error_line(cfg), config_error_text(cfg));
    config_destroy(cfg);
    return -1;
}

/* ------------------------------------------------------------ values */

static const char *load_type_name(int type)
{
    switch (type) {
    case CONFIG_TYPE_GROUP:
        return "a group";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        return "an integer";
    case CONFIG_TYPE_FLOAT:
        return "a float";
    case CONFIG_TYPE_STRING:
        return "a string";
    case CONFIG_TYPE_BOOL:
        return "a boolean";
    case CONFIG_TYPE_ARRAY:
        return "an array";
    case CONFIG_TYPE_LIST:
        return "a list";
    default:
        return "nothing";
    }
}

static int load_plan(const config_setting_t *s, plan_t *p, load_err *err)
{
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s,
                  "key '%s': expected an array of \"strategy:degree\" "
                  "strings, got %s",
                  config_setting_name(s), load_type_name(t));
        return -1;
    }
    memset(p, 0, sizeof *p);
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *text = config_setting_get_string(e);
        if (!text) {
            load_fail(err, s, "key '%s': element %d is %s, expected a "
                      "\"strategy:degree\" string", config_setting_name(s),
                      i, load_type_name(config_setting_type(e)));
            return -1;
        }
        plan_strategy st;
        int64_t deg;
        const char *why = NULL;
        if (plan_parse_level(text, &st, &deg, &why) != 0) {
            load_fail(err, s, "key '%s': \"%s\": %s", config_setting_name(s),
                      text, why);
            return -1;
        }
        if (plan_push(p, st, deg) != 0) {
            load_fail(err, s, "key '%s': more than %d levels",
                      config_setting_name(s), PLAN_MAX_LEVELS);
            return -1;
        }
    }
    int64_t prod = 1;
    for (int i = 0; i < p->nlevels; i++)
        if (range_product(prod, p->degree[i], RANGE_P24, &prod) != 0) {
            load_fail(err, s, "key '%s': the degrees multiply past %lld "
                      "devices", config_setting_name(s), (long long)RANGE_P24);
            return -1;
        }
    return 0;
}

static int load_enum(const config_setting_t *s, const char *text, int value,
                     const char *expected, int *out, load_err *err)
{
    if (value < 0) {
        load_fail(err, s, "key '%s': unknown value \"%s\" (expected %s)",
                  config_setting_name(s), text, expected);
        return -1;
    }
    *out = value;
    return 0;
}

/* A stack fact: a number (certain), or [low, nominal, high]. */
static int load_fact(const config_setting_t *s, stack_fact *f, load_err *err)
{
    const char *name = config_setting_name(s);
    int t = config_setting_type(s);
    double v[3];
    if (t == CONFIG_TYPE_FLOAT || t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
        v[0] = v[1] = v[2] = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                    : (double)config_setting_get_int64(s);
    } else if ((t == CONFIG_TYPE_ARRAY || t == CONFIG_TYPE_LIST) &&
               config_setting_length(s) == 3) {
        for (unsigned i = 0; i < 3; i++) {
            const config_setting_t *e = config_setting_get_elem(s, i);
            int et = config_setting_type(e);
            if (et == CONFIG_TYPE_FLOAT)
                v[i] = config_setting_get_float(e);
            else if (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
                v[i] = (double)config_setting_get_int64(e);
            else {
                load_fail(err, s, "key '%s': element %u is %s, expected a number", name, i,
                          load_type_name(et));
                return -1;
            }
        }
        if (!(v[0] <= v[1] && v[1] <= v[2])) {
            load_fail(err, s, "key '%s': expected [low, nominal, high] in ascending order",
                      name);
            return -1;
        }
    } else {
        load_fail(err, s, "key '%s': expected a number or [low, nominal, high], got %s", name,
                  load_type_name(t));
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (range_check_float(s, name, v[i], err) != 0)
            return -1;
    f->lo = v[0];
    f->v = v[1];
    f->hi = v[2];
    return 0;
}

/* The "auto" flag of an LT_MB key of a task (micro_batch or vpp). */
static bool *load_auto_flag(task_t *t, const char *key)
{
    return strcmp(key, "vpp") == 0 ? &t->detailed.vpp_auto : &t->detailed.micro_batch_auto;
}

static int load_value(const config_setting_t *s, const load_key *k, void *obj,
                      load_err *err)
{
    char *dst = (char *)obj + k->offset;
    int t = config_setting_type(s);
    const char *name = config_setting_name(s);
    switch (k->type) {
    case LT_ANY:
        return 0;
    case LT_INT:
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected an integer, got %s", name,
                      load_type_name(t));
            return -1;
        }
        if (range_check_int(s, name, (int64_t)config_setting_get_int64(s), err))
            return -1;
        *(int64_t *)(void *)dst = (int64_t)config_setting_get_int64(s);
        return 0;
    case LT_FLOAT: {
        double v = 0.0;
        if (t == CONFIG_TYPE_FLOAT)
            v = config_setting_get_float(s);
        else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
            v = (double)config_setting_get_int64(s);
        else {
            load_fail(err, s, "key '%s': expected a number, got %s", name,
                      load_type_name(t));
            return -1;
        }
        if (range_check_float(s, name, v, err))
            return -1;
        *(double *)(void *)dst = v;
        return 0;
    }
    case LT_BOOL:
        if (t != CONFIG_TYPE_BOOL) {
            load_fail(err, s, "key '%s': expected true or false, got %s", name,
                      load_type_name(t));
            return -1;
        }
        *(bool *)(void *)dst = config_setting_get_bool(s) != 0;
        return 0;
    case LT_MB:
        if (t == CONFIG_TYPE_STRING && strcmp(config_setting_get_string(s), "auto") == 0) {
            *load_auto_flag((task_t *)obj, k->name) = true;
            return 0;
        }
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected an integer or \"auto\", got %s", name,
                      load_type_name(t));
            return -1;
        }
        if (range_check_int(s, name, (int64_t)config_setting_get_int64(s), err))
            return -1;
        *(int64_t *)(void *)dst = (int64_t)config_setting_get_int64(s);
        return 0;
    case LT_CONC:
        if (t == CONFIG_TYPE_STRING) {
            const char *text = config_setting_get_string(s);
            int v = strcmp(text, "max") == 0 ? 1 : strcmp(text, "sla") == 0 ? 2 : -1;
            if (load_enum(s, text, v, "an integer, \"max\" or \"sla\"", &v, err))
                return -1;
            *(int64_t *)(void *)dst = v == 1 ? TASK_CONC_MAX : TASK_CONC_SLA;
            return 0;
        }
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected an integer, \"max\" or \"sla\", got %s",
                      name, load_type_name(t));
            return -1;
        }
        if (range_check_int(s, name, (int64_t)config_setting_get_int64(s), err))
            return -1;
        *(int64_t *)(void *)dst = (int64_t)config_setting_get_int64(s);
        return 0;
    case LT_TRI:
        if (t != CONFIG_TYPE_BOOL) {
            load_fail(err, s, "key '%s': expected true or false, got %s", name,
                      load_type_name(t));
            return -1;
        }
        *(int *)(void *)dst = config_setting_get_bool(s) != 0;
        return 0;
    case LT_PLAN:
        return load_plan(s, (plan_t *)(void *)dst, err);
    case LT_FACT:
        return load_fact(s, (stack_fact *)(void *)dst, err);
    default:
        break;
    }
    /* string-valued keys */
    if (t != CONFIG_TYPE_STRING) {
        load_fail(err, s, "key '%s': expected a string, got %s", name,
                  load_type_name(t));
        return -1;
    }
    const char *text = config_setting_get_string(s);
    int v = 0;
    switch (k->type) {
    case LT_NOTE:
        return 0;
    case LT_SCHEDULER:
        v = strcmp(text, "continuous") == 0 ? TASK_SCHED_CONTINUOUS
            : strcmp(text, "static") == 0   ? TASK_SCHED_STATIC
                                            : -1;
        if (load_enum(s, text, v, "\"continuous\" or \"static\"", &v, err))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    case LT_WDTYPE:
        v = task_weight_parse(text);
        if (load_enum(s, text, v,
                      "\"bf16\", \"fp16\", \"fp8\", \"int8\", \"int4\" or \"fp4\"", &v,
                      err))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    case LT_KVDTYPE:
        v = hw_dtype_parse(text);
        if (v != HW_BF16 && v != HW_FP8 && v != HW_INT8)
            v = -1;
        if (load_enum(s, text, v, "\"bf16\", \"fp16\", \"fp8\" or \"int8\"", &v, err))
            return -1;
        *(int *)(void *)dst = v + 1;
        return 0;
    case LT_ARCH:
    case LT_POSITION:
    case LT_RECOMPUTE:
    case LT_SCHEDULE:
    case LT_ATTENTION:
    case LT_DTYPE:
    case LT_ALGO:
    case LT_LAYOUT:
    case LT_EMB_SHARDING:
    case LT_EMB_OPT:
    case LT_FP8_RECIPE: {
        static const char *const expect[] = {
            "\"gpt\", \"llama\", \"mpt\", \"bloom\", \"vit\", \"mixtral\" or \"deepseek\"",
            "\"learned\", \"rope\", \"alibi\" or \"none\"",
            "\"none\", \"selective\", \"full\" or \"auto\"",
            "\"1f1b\", \"interleaved\" or \"gpipe\"",
            "\"flash\", \"tuned\" or \"unfused\"",
            "\"fp32\", \"tf32\", \"bf16\", \"fp16\", \"fp8\", \"int8\" or \"fp4\"",
            "\"ring\", \"tree\" or \"hierarchical\"",
            "an order of tp, cp, dp, pp joined by '-', innermost first (\"tp-cp-dp-pp\")",
            "\"table\", \"row\" or \"column\"",
            "\"rowwise_adagrad\", \"sgd\", \"adagrad\" or \"adam\"",
            "\"delayed\", \"current\", \"blockwise\", \"mxfp8\" or \"nvfp4\""};
        int which = (int)k->type - (int)LT_ARCH;
        v = k->type == LT_ARCH        ? detailed_arch_parse(text)
            : k->type == LT_POSITION  ? detailed_position_parse(text)
            : k->type == LT_RECOMPUTE ? detailed_recompute_parse(text)
            : k->type == LT_SCHEDULE  ? detailed_schedule_parse(text)
            : k->type == LT_ATTENTION ? detailed_attention_parse(text)
            : k->type == LT_DTYPE     ? hw_dtype_parse(text)
            : k->type == LT_LAYOUT    ? detailed_layout_parse(text)
            : k->type == LT_EMB_SHARDING ? detailed_emb_sharding_parse(text)
            : k->type == LT_EMB_OPT   ? detailed_emb_optimizer_parse(text)
            : k->type == LT_FP8_RECIPE ? detailed_fp8_recipe_parse(text)
                                      : topo_algo_parse(text);
        if (load_enum(s, text, v, expect[which], &v, err))
            return -1;
        /* every detailed enum is stored as a C enum (int-sized) */
        *(int *)(void *)dst = v;
        return 0;
    }
    case LT_STRING:
    case LT_TEXT: {
        size_t max = k->type == LT_TEXT ? STACK_SUMMARY_MAX : MODEL_NAME_MAX;
        if (strlen(text) >= max) {
            load_fail(err, s, "key '%s': longer than %zu characters", name, max - 1);
            return -1;
        }
        memcpy(dst, text, strlen(text) + 1);
        return 0;
    }
    case LT_PP_SEND:
        v = strcmp(text, "full") == 0             ? STACK_PP_FULL
            : strcmp(text, "scatter_gather") == 0 ? STACK_PP_SCATTER_GATHER
                                                  : -1;
        if (load_enum(s, text, v, "\"full\" or \"scatter_gather\"", &v, err))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    case LT_MODEL_KIND:
        if (load_enum(s, text, model_kind_parse(text), "\"dlrm\" or \"llm\"",
                      &v, err))
            return -1;
        *(model_kind *)(void *)dst = (model_kind)v;
        return 0;
    case LT_TASK_KIND:
        if (load_enum(s, text, task_kind_parse(text),
                      "\"pretrain\", \"finetune\" or \"inference\"", &v, err))
            return -1;
        *(task_kind *)(void *)dst = (task_kind)v;
        return 0;
    case LT_MLP:
        v = strcmp(text, "gelu") == 0 ? MODEL_MLP_GELU
            : strcmp(text, "swiglu") == 0 ? MODEL_MLP_SWIGLU
                                          : -1;
        if (load_enum(s, text, v, "\"gelu\" or \"swiglu\"", &v, err))
            return -1;
        *(model_mlp *)(void *)dst = (model_mlp)v;
        return 0;
    default:
        return -1;
    }
}

/* load_group flags: fine-tuning keys required; a group with a `base`
 * (only `name` required: the base gave the rest, the group overrides). */
enum { LG_FINETUNE = 1u, LG_BASED = 2u };

/* Loads the keys of `keys` that apply to `kinds` from group g into obj:
 * unknown members (named with the closest key), missing required keys
 * and type errors are failures. */
static int load_group(const config_setting_t *g, const char *ns,
                      const load_key *keys, size_t nkeys, unsigned kinds,
                      unsigned flags, void *obj, load_err *err)
{
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "'%s': expected a group { ... }, got %s", ns,
                  load_type_name(config_setting_type(g)));
        return -1;
    }
    int n = config_setting_length(g);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(s);
        bool known = false;
        for (size_t k = 0; k < nkeys; k++)
            if (strcmp(keys[k].name, name) == 0 && (keys[k].kinds & kinds))
                known = true;
        if (!known) {
            suggest sg;
            suggest_init(&sg, name);
            for (size_t k = 0; k < nkeys; k++)
                if (keys[k].kinds & kinds)
                    suggest_offer(&sg, keys[k].name);
            char hint[SUGGEST_NAME_MAX + 32];
            load_fail(err, s, "unknown key '%s' in %s%s (see `madsweep keys`)",
                      name, ns, suggest_hint(&sg, hint, sizeof hint));
            return -1;
        }
    }
    for (size_t k = 0; k < nkeys; k++) {
        const load_key *key = &keys[k];
        if (!(key->kinds & kinds))
            continue;
        const config_setting_t *s =
            config_setting_get_member(g, key->name);
        if (!s) {
            bool need = key->required == LR_YES ||
                        (key->required == LR_FINETUNE && (flags & LG_FINETUNE));
            if (need && (flags & LG_BASED) && strcmp(key->name, "name") != 0)
                need = false;
            if (need) {
                load_fail(err, g, "missing key '%s' in %s (%s)", key->name,
                          ns, key->doc);
                return -1;
            }
            continue;
        }
        if (load_value(s, key, obj, err) != 0)
            return -1;
    }
    return 0;
}

static const config_setting_t *load_member_or(const config_setting_t *g,
                                              const char *name)
{
    const config_setting_t *s = config_setting_get_member(g, name);
    return s ? s : g;
}

int load_model(const config_setting_t *g, model_t *m, load_err *err)
{
    memset(m, 0, sizeof *m);
    m->causal = true;
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "model: expected a group { ... } or a catalogue name");
        return -1;
    }
    const config_setting_t *ts = config_setting_get_member(g, "type");
    if (!ts) {
        load_fail(err, g, "missing key 'type' in model (\"dlrm\" or \"llm\")");
        return -1;
    }
    const load_key *tk = &model_keys[1];
    if (load_value(ts, tk, m, err) != 0)
        return -1;
    unsigned kinds = m->kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    char ns[96];
    snprintf(ns, sizeof ns, "model (type %s)", model_kind_name(m->kind));
    if (load_group(g, ns, model_keys, NKEYS(model_keys), kinds, false, m, err))
        return -1;
    const char *bad = NULL;
    if (model_derive(m, &bad) != STATUS_OK) {
        load_fail(err, load_member_or(g, bad ? bad : "type"),
                  "key '%s' in model '%s': must be a positive integer",
                  bad ? bad : "?", m->name);
        return -1;
    }
    return 0;
}

int load_power(const config_setting_t *g, double *board_w, double *idle_w,
               double *price, load_err *err)
{
    static const char *const keys[3] = {"board_power_w", "idle_power_w",
                                        "price_per_hour_usd"};
    double *dst[3] = {board_w, idle_w, price};
    for (int i = 0; i < 3; i++) {
        const config_setting_t *s = config_setting_get_member(g, keys[i]);
        if (!s)
            continue;
        int t = config_setting_type(s);
        double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                   : t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64
                       ? (double)config_setting_get_int64(s)
                       : -1.0;
        if (t != CONFIG_TYPE_FLOAT && t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected a number >= 0", keys[i]);
            return -1;
        }
        if (range_check_float(s, keys[i], v, err) != 0)
            return -1;
        *dst[i] = v;
    }
    return 0;
}

/* ------------------------------------------------------------ bases */

#define LOAD_BASE_DEPTH 8

/* The entry that setting s (a group, or a string naming an entry of
 * list `list`) stands for: in g's own file only when configs_dir is
 * NULL, else as load_resolve() does, the catalogue configs_dir/file
 * then being open in *aux (*aux_open set) and noted in reads. NULL with
 * err set when there is none. */
static const config_setting_t *load_entry(const config_setting_t *s,
                                          const char *list, const char *file,
                                          const char *configs_dir,
                                          load_reads *reads, config_t *aux,
                                          int *aux_open, load_err *err)
{
    if (configs_dir) {
        const config_setting_t *e =
            load_resolve(s, list, file, configs_dir, aux, aux_open, err);
        if (*aux_open) {
            char path[LOAD_PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", configs_dir, file);
            load_reads_add(reads, path);
        }
        return e;
    }
    if (config_setting_is_group(s))
        return s;
    const char *name = config_setting_get_string(s);
    const config_setting_t *root = s;
    while (config_setting_parent(root))
        root = config_setting_parent(root);
    const config_setting_t *l = config_setting_get_member(root, list);
    const config_setting_t *e = name ? load_find(l, name) : NULL;
    if (!e) {
        char hint[SUGGEST_NAME_MAX + 32];
        load_fail(err, s, "key '%s': \"%s\" is not in list '%s' of this file%s",
                  config_setting_name(s), name ? name : "?", list,
                  name ? load_suggest(l, NULL, name, hint, sizeof hint) : "");
    }
    return e;
}

/* The entry that g's `base` names, in list `list` of g's own file or
 * (configs_dir not NULL) of the catalogue configs_dir/file, which is
 * then open in *aux (*aux_open set; noted in reads). *base is NULL when
 * g has no base. Returns 0, or -1 with err set. */
static int load_base(const config_setting_t *g, const char *list,
                     const char *file, const char *configs_dir,
                     load_reads *reads, int depth, config_t *aux, int *aux_open,
                     const config_setting_t **base, load_err *err)
{
    *base = NULL;
    const config_setting_t *bs =
        config_setting_is_group(g) ? config_setting_get_member(g, "base") : NULL;
    if (!bs)
        return 0;
    const char *name = config_setting_get_string(bs);
    if (!name) {
        load_fail(err, bs, "key 'base': expected the name of an entry of list "
                  "'%s'", list);
        return -1;
    }
    if (depth >= LOAD_BASE_DEPTH) {
        load_fail(err, bs, "key 'base': more than %d bases in a chain (does "
                  "\"%s\" lead back to itself?)", LOAD_BASE_DEPTH, name);
        return -1;
    }
    *base = load_entry(bs, list, file, configs_dir, reads, aux, aux_open, err);
    if (*base == g) {
        load_fail(err, bs, "key 'base': \"%s\" names the entry itself", name);
        *base = NULL;
    }
    return *base ? 0 : -1;
}

/* A MAD-Max system's power and price: from its `hardware` (a hardware.cfg
 * entry), under its own board_power_w, idle_power_w, price_per_hour_usd
 * (a system without `hardware` keeps what its keys or its base gave). */
static int load_system_power(const config_setting_t *g, const char *configs_dir,
                             load_reads *reads, cluster_t *c, load_err *err)
{
    const config_setting_t *hs = config_setting_get_member(g, "hardware");
    if (!hs)
        return 0;
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *hg = load_entry(hs, "hardware", "hardware.cfg",
                                            configs_dir, reads, &aux, &aux_open, err);
    hw_t h;
    if (hg && load_hw_in(hg, configs_dir, reads, &h, err) == 0) {
        snprintf(c->hardware, sizeof c->hardware, "%s", h.name);
        if (!config_setting_get_member(g, "board_power_w"))
            c->board_power_w = h.board_power_w;
        if (!config_setting_get_member(g, "idle_power_w"))
            c->idle_power_w = h.idle_power_w;
        if (!config_setting_get_member(g, "price_per_hour_usd"))
            c->price_per_hour_usd = h.price_per_hour_usd;
        rc = 0;
    }
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

static int load_system_at(const config_setting_t *g, const char *configs_dir,
                          load_reads *reads, int depth, cluster_t *c,
                          load_err *err)
{
    memset(c, 0, sizeof *c);
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *b = NULL;
    if (load_base(g, "systems", "systems.cfg", configs_dir, reads, depth, &aux,
                  &aux_open, &b, err) != 0 ||
        (b && load_system_at(b, configs_dir, reads, depth + 1, c, err) != 0) ||
        load_group(g, "system", system_keys, NKEYS(system_keys), LK_ALL,
                   b ? LG_BASED : 0, c, err) ||
        load_system_power(g, configs_dir, reads, c, err))
        goto out;
    const char *bad = NULL;
    status_code st = cluster_derive(c, &bad);
    if (st == STATUS_OK) {
        rc = 0;
        goto out;
    }
    const config_setting_t *at = load_member_or(g, bad ? bad : "name");
    if (st == STATUS_INVALID_VALUE)
        load_fail(err, at,
                  "key '%s' in system '%s': must be a finite number > 0 "
                  "(utilizations in (0, 1], blend fraction in [0, 1], "
                  "peaks, power and price >= 0, idle power <= board power)",
                  bad, c->name);
    else if (st == STATUS_INVALID_NODES)
        load_fail(err, at,
                  "key '%s' in system '%s': %lld devices do not divide into "
                  "%lld nodes",
                  bad, c->name, (long long)c->devices, (long long)c->nodes);
    else
        load_fail(err, at, "key '%s' in system '%s': %s (%s)", bad, c->name,
                  status_text(st), status_name(st));
out:
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

int load_system(const config_setting_t *g, const char *configs_dir,
                load_reads *reads, cluster_t *c, load_err *err)
{
    return load_system_at(g, configs_dir, reads, 0, c, err);
}

/* Task keys that only some task types read (issue 19: given to another
 * type they changed nothing without a word: the serving keys of a
 * training task, the optimizer, backward-pass and pipeline-schedule keys
 * of an inference task, each found by evaluating a point with and
 * without it; fine-tuning's frozen parts and adapters elsewhere). The
 * loaders refuse them with their line and the point writer leaves them
 * out: one table for both fidelities. */
enum {
    LOAD_T_TRAIN = (1u << TASK_PRETRAIN) | (1u << TASK_FINETUNE),
    LOAD_T_FINETUNE = 1u << TASK_FINETUNE,
    LOAD_T_INFER = 1u << TASK_INFERENCE
};
static const struct {
    const char *key;
    unsigned types; /* 1 << task_kind */
} load_task_type_keys[] = {
    /* fine-tuning (both fidelities) */
    {"freeze_emb", LOAD_T_FINETUNE},
    {"freeze_dense", LOAD_T_FINETUNE},
    {"min_frozen_layer", LOAD_T_FINETUNE},
    {"freeze_top_mlp", LOAD_T_FINETUNE},
    {"freeze_bot_mlp", LOAD_T_FINETUNE},
    {"frozen_layers", LOAD_T_FINETUNE},
    {"lora_rank", LOAD_T_FINETUNE},
    /* training, detailed: optimizer and gradients, the backward pass
     * and its recomputation, the pipeline schedule, the training
     * kernels (serving takes its kernels from the engine's stack) */
    {"zero_stage", LOAD_T_TRAIN},
    {"shard_degree", LOAD_T_TRAIN},
    {"grad_accum", LOAD_T_TRAIN},
    {"grad_reduce_bytes", LOAD_T_TRAIN},
    {"overlap_dp_comm", LOAD_T_TRAIN},
    {"recompute", LOAD_T_TRAIN},
    {"recompute_layers", LOAD_T_TRAIN},
    {"vpp", LOAD_T_TRAIN},
    {"schedule", LOAD_T_TRAIN},
    {"attention", LOAD_T_TRAIN},
    {"overlap_tp_comm", LOAD_T_TRAIN},
    {"fp8_recipe", LOAD_T_TRAIN},
    {"emb_optimizer", LOAD_T_TRAIN},
    {"allreduce_sharp", LOAD_T_TRAIN},
    {"moe_flex_dispatch", LOAD_T_TRAIN},
    {"moe_a2a_overlap", LOAD_T_TRAIN},
    {"compiled", LOAD_T_TRAIN},
    /* serving, detailed */
    {"prompt_tokens", LOAD_T_INFER},
    {"decode_tokens", LOAD_T_INFER},
    {"scheduler", LOAD_T_INFER},
    {"concurrency", LOAD_T_INFER},
    {"request_rate", LOAD_T_INFER},
    {"kv_precision", LOAD_T_INFER},
    {"weight_precision", LOAD_T_INFER},
    {"spec_tokens", LOAD_T_INFER},
    {"spec_acceptance", LOAD_T_INFER},
    {"spec_draft_cost", LOAD_T_INFER},
    {"ttft_max_s", LOAD_T_INFER},
    {"tpot_max_s", LOAD_T_INFER},
    {"requests", LOAD_T_INFER},
    {"uniform_lengths", LOAD_T_INFER},
    {"attn_dp", LOAD_T_INFER},
};

/* The task types key `key` applies to (every type for a key not listed). */
static unsigned load_task_key_types(const char *key)
{
    for (size_t i = 0; i < NKEYS(load_task_type_keys); i++)
        if (strcmp(load_task_type_keys[i].key, key) == 0)
            return load_task_type_keys[i].types;
    return LOAD_T_TRAIN | LOAD_T_INFER;
}

/* Refuses a member of task group g that a task of kind k would ignore. */
static int load_task_type_check(const config_setting_t *g, task_kind k,
                                load_err *err)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        unsigned types = load_task_key_types(config_setting_name(s));
        if (types & (1u << k))
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
    if (load_group(g, ns, task_keys, NKEYS(task_keys), kinds, ft, t, err) ||
        load_task_type_check(g, t->kind, err))
        return -1;
    if (!ft)
        t->min_frozen_layer = m->layers;
    if (t->local_batch_dense <= 0 || t->local_batch_emb <= 0) {
        const char *k = t->local_batch_dense <= 0 ? "local_batch_dense"
                                                  : "local_batch_emb";
        load_fail(err, load_member_or(g, k), "key '%s': must be positive", k);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ detailed */

/* Member `key` of g as an array or list of 1..max elements (`what` names
 * them in messages); NULL with err set otherwise. */
static const config_setting_t *load_array(const config_setting_t *g,
                                          const char *key, int max,
                                          const char *what, int *len,
                                          load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s, "key '%s': expected an array of %s, got %s", key,
                  what, load_type_name(t));
        return NULL;
    }
    *len = config_setting_length(s);
    if (*len < 1 || *len > max) {
        load_fail(err, s, "key '%s': expected 1 to %d %s, got %d", key, max,
                  what, *len);
        return NULL;
    }
    return s;
}

/* An array of 1..MODEL_MLP_MAX positive integers. */
static int load_iarray(const config_setting_t *g, const char *key, int64_t *out,
                       int *n, load_err *err)
{
    int len = 0;
    const config_setting_t *s =
        load_array(g, key, MODEL_MLP_MAX, "integers", &len, err);
    if (!s)
        return -1;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int et = config_setting_type(e);
        if ((et != CONFIG_TYPE_INT && et != CONFIG_TYPE_INT64) ||
            config_setting_get_int64(e) < 1 || config_setting_get_int64(e) > RANGE_P24) {
            load_fail(err, s, "key '%s': element %d must be a positive integer "
                      "of at most %lld", key, i, (long long)RANGE_P24);
            return -1;
        }
        out[i] = (int64_t)config_setting_get_int64(e);
    }
    *n = len;
    return 0;
}

/* rows_per_table / pooling: one positive integer (every table), or a
 * list of exactly `tables` of them (the model then lists its tables one
 * by one; *mean receives their mean, rounded up). */
static int load_table_figure(const config_setting_t *g, const char *key, model_t *m,
                             int64_t max, int64_t *mean, bool rows, load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    int t = s ? config_setting_type(s) : CONFIG_TYPE_NONE;
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
        *mean = (int64_t)config_setting_get_int64(s);
        return 0;
    }
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s, "key '%s' in model '%s': expected an integer or a list of "
                  "integers, one per table, got %s", key, m->name, load_type_name(t));
        return -1;
    }
    int len = config_setting_length(s);
    if (len != m->tables || len > MODEL_TABLES_MAX) {
        load_fail(err, s, "key '%s' in model '%s': the list has %d entries, tables is %lld "
                  "(at most %d tables listed)", key, m->name, len, (long long)m->tables,
                  MODEL_TABLES_MAX);
        return -1;
    }
    double sum = 0.0;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int et = config_setting_type(e);
        long long v = (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
                          ? config_setting_get_int64(e) : 0;
        if (v < 1 || v > max) {
            load_fail(err, s, "key '%s' in model '%s': element %d must be a positive "
                      "integer of at most %lld", key, m->name, i, (long long)max);
            return -1;
        }
        if (rows)
            m->d.table_rows[i] = (int64_t)v;
        else
            m->d.table_pooling[i] = (int32_t)v;
        sum += (double)v;
    }
    m->d.n_tables = len;
    *mean = (int64_t)ceil(sum / len);
    return 0;
}

/* interaction and the cross layers' defaults (Wang et al. 2021; the
 * DCNv2 of MLPerf and of NVIDIA's TF2 code: 3 layers of rank 512). */
static int load_dmodel_interaction(const config_setting_t *g, model_t *m, load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, "interaction");
    const char *text = s ? config_setting_get_string(s) : "dot";
    if (!text || (strcmp(text, "dot") != 0 && strcmp(text, "dcnv2") != 0)) {
        load_fail(err, s, "key 'interaction' in model '%s': expected \"dot\" or \"dcnv2\"",
                  m->name);
        return -1;
    }
    m->d.interaction = strcmp(text, "dcnv2") == 0 ? MODEL_INTERACTION_DCNV2
                                                   : MODEL_INTERACTION_DOT;
    if (m->d.interaction == MODEL_INTERACTION_DCNV2) {
        if (!config_setting_get_member(g, "cross_layers"))
            m->d.cross_layers = 3;
        if (!config_setting_get_member(g, "cross_rank"))
            m->d.cross_rank = 512;
    }
    if (m->d.cross_layers < 0 || m->d.cross_layers > MODEL_MLP_MAX ||
        m->d.cross_rank < 0 || m->d.cross_rank > RANGE_P24 ||
        (m->d.interaction == MODEL_INTERACTION_DCNV2 &&
         (m->d.cross_layers < 1 || m->d.cross_rank < 1))) {
        load_fail(err, load_member_or(g, "cross_layers"),
                  "model '%s': cross_layers must be 1 to %d and cross_rank positive "
                  "(dcnv2 only)", m->name, MODEL_MLP_MAX);
        return -1;
    }
    return 0;
}

static int load_dmodel_dlrm(const config_setting_t *g, model_t *m, load_err *err)
{
    if (load_iarray(g, "bot_mlp", m->d.bot_mlp, &m->d.bot_n, err) ||
        load_iarray(g, "top_mlp", m->d.top_mlp, &m->d.top_n, err))
        return -1;
    if (m->tables > 0 &&
        (load_table_figure(g, "rows_per_table", m, RANGE_P40, &m->rows_per_table, true, err) ||
         load_table_figure(g, "pooling", m, RANGE_P24, &m->pooling, false, err) ||
         load_dmodel_interaction(g, m, err)))
        return -1;
    /* one figure listed, the other not: the list takes the single value */
    for (int i = 0; i < m->d.n_tables; i++) {
        if (m->d.table_rows[i] == 0)
            m->d.table_rows[i] = m->rows_per_table;
        if (m->d.table_pooling[i] == 0)
            m->d.table_pooling[i] = (int32_t)(m->pooling < RANGE_P24 ? m->pooling : RANGE_P24);
    }
    static const char *const pos[] = {"tables", "rows_per_table", "emb_dim", "pooling"};
    const int64_t vals[] = {m->tables, m->rows_per_table, m->emb_dim, m->pooling};
    for (size_t i = 0; i < NKEYS(pos); i++)
        if (vals[i] <= 0) {
            load_fail(err, load_member_or(g, pos[i]),
                      "key '%s' in model '%s': must be a positive integer", pos[i],
                      m->name);
            return -1;
        }
    if (m->bytes_per_emb_param < 0) {
        load_fail(err, load_member_or(g, "bytes_per_emb_param"),
                  "key 'bytes_per_emb_param' in model '%s': must be positive", m->name);
        return -1;
    }
    if (m->d.bot_n < 2 || m->d.bot_mlp[m->d.bot_n - 1] != m->emb_dim) {
        load_fail(err, load_member_or(g, "bot_mlp"),
                  "key 'bot_mlp' in model '%s': at least an input and an output "
                  "width, the last equal to emb_dim (%lld) for the dot interaction",
                  m->name, (long long)m->emb_dim);
        return -1;
    }
    return 0;
}

int load_dmodel(const config_setting_t *g, model_t *m, load_err *err)
{
    memset(m, 0, sizeof *m);
    m->causal = true;
    m->kind = MODEL_LLM;
    m->d.dropout = -1;
    const config_setting_t *ts =
        config_setting_is_group(g) ? config_setting_get_member(g, "type") : NULL;
    if (ts && load_value(ts, &dmodel_keys[1], m, err) != 0)
        return -1;
    unsigned kinds = m->kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    if (load_group(g, m->kind == MODEL_DLRM ? "detailed model (type dlrm)"
                                            : "detailed model",
                   dmodel_keys, NKEYS(dmodel_keys), kinds, false, m, err))
        return -1;
    if (m->kind == MODEL_DLRM)
        return load_dmodel_dlrm(g, m, err);
    static const char *const pos[] = {"layers", "hidden", "ffn", "heads", "seq_len"};
    const int64_t vals[] = {m->layers, m->hidden, m->ffn, m->heads, m->seq_len};
    for (size_t i = 0; i < NKEYS(pos); i++)
        if (vals[i] <= 0) {
            load_fail(err, load_member_or(g, pos[i]),
                      "key '%s' in model '%s': must be a positive integer", pos[i],
                      m->name);
            return -1;
        }
    if ((m->d.head_dim <= 0 && m->hidden % m->heads != 0) ||
        (m->kv_heads > 0 && m->heads % m->kv_heads != 0) || m->vocab < 0) {
        load_fail(err, load_member_or(g, "heads"),
                  "model '%s': heads must divide hidden (unless head_dim is "
                  "given), kv_heads must divide heads, vocab must be >= 0", m->name);
        return -1;
    }
    if (m->vocab == 0 && m->d.arch != MODEL_ARCH_VIT) {
        load_fail(err, load_member_or(g, "vocab"),
                  "key 'vocab' in model '%s': 0 only for arch \"vit\"", m->name);
        return -1;
    }
    return 0;
}

static int load_farray(const config_setting_t *g, const char *key, double *out,
                       int *n, load_err *err)
{
    int len = 0;
    const config_setting_t *s =
        load_array(g, key, HW_EFF_POINTS, "numbers", &len, err);
    if (!s)
        return -1;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int et = config_setting_type(e);
        if (et == CONFIG_TYPE_FLOAT)
            out[i] = config_setting_get_float(e);
        else if (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
            out[i] = (double)config_setting_get_int64(e);
        else {
            load_fail(err, s, "key '%s': element %d is %s, expected a number", key,
                      i, load_type_name(et));
            return -1;
        }
        if (range_check_float(e, key, out[i], err) != 0)
            return -1;
    }
    *n = len;
    return 0;
}

/* A narrow-float GEMM table (FP8, FP4) of a hardware entry: both keys or
 * neither, with or without a base (one table); a base's table stays when
 * neither is given. */
static int load_hw_narrow(const config_setting_t *g, const char *xkey, const char *ykey,
                          const char *name, double *xs, double *ys, int *points,
                          load_err *err)
{
    if (!config_setting_get_member(g, xkey) && !config_setting_get_member(g, ykey))
        return 0;
    int nx = 0, ny = 0;
    if (load_farray(g, xkey, xs, &nx, err) || load_farray(g, ykey, ys, &ny, err))
        return -1;
    if (nx != ny) {
        load_fail(err, load_member_or(g, ykey), "hardware '%s': %s has %d points, %s %d",
                  name, ykey, ny, xkey, nx);
        return -1;
    }
    *points = nx;
    return 0;
}

static int load_hw_at(const config_setting_t *g, const char *configs_dir,
                      load_reads *reads, int depth, hw_t *h, load_err *err)
{
    memset(h, 0, sizeof *h);
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *b = NULL;
    if (load_base(g, "hardware", "hardware.cfg", configs_dir, reads, depth, &aux,
                  &aux_open, &b, err) != 0 ||
        (b && load_hw_at(b, configs_dir, reads, depth + 1, h, err) != 0) ||
        load_group(g, "hardware", hw_keys, NKEYS(hw_keys), LK_ALL,
                   b ? LG_BASED : 0, h, err))
        goto out;
    bool hx = config_setting_get_member(g, "gemm_log10_flops") != NULL;
    bool hy = config_setting_get_member(g, "gemm_efficiency") != NULL;
    if (b && hx != hy) {
        load_fail(err, load_member_or(g, hx ? "gemm_log10_flops" : "gemm_efficiency"),
                  "hardware '%s': give gemm_log10_flops and gemm_efficiency "
                  "together (they are one table)", h->name);
        goto out;
    }
    if (!b || hx) {
        int nx = 0, ny = 0;
        if (load_farray(g, "gemm_log10_flops", h->gemm_log10_flops, &nx, err) ||
            load_farray(g, "gemm_efficiency", h->gemm_efficiency, &ny, err))
            goto out;
        if (nx != ny) {
            load_fail(err, load_member_or(g, "gemm_efficiency"),
                      "hardware '%s': gemm_efficiency has %d points, "
                      "gemm_log10_flops %d", h->name, ny, nx);
            goto out;
        }
        h->gemm_points = nx;
    }
    if (load_hw_narrow(g, "gemm_fp8_log10_flops", "gemm_fp8_efficiency", h->name,
                       h->gemm_fp8_log10_flops, h->gemm_fp8_efficiency,
                       &h->gemm_fp8_points, err) ||
        load_hw_narrow(g, "gemm_fp4_log10_flops", "gemm_fp4_efficiency", h->name,
                       h->gemm_fp4_log10_flops, h->gemm_fp4_efficiency,
                       &h->gemm_fp4_points, err))
        goto out;
    const char *bad = NULL;
    if (hw_check(h, &bad) != STATUS_OK) {
        load_fail(err, load_member_or(g, bad), "key '%s' in hardware '%s': out of "
                  "range (peaks and bandwidths > 0, efficiencies in (0, 1], "
                  "size points ascending)", bad, h->name);
        goto out;
    }
    rc = 0;
out:
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

int load_hw_in(const config_setting_t *g, const char *configs_dir,
               load_reads *reads, hw_t *h, load_err *err)
{
    return load_hw_at(g, configs_dir, reads, 0, h, err);
}

static const load_key *load_hw_numeric(const char *key)
{
    for (size_t i = 0; i < NKEYS(hw_keys); i++)
        if ((hw_keys[i].type == LT_FLOAT || hw_keys[i].type == LT_INT) &&
            strcmp(hw_keys[i].name, key) == 0)
            return &hw_keys[i];
    return NULL;
}

int load_hw_number(const hw_t *h, const char *key, double *v)
{
    const load_key *k = load_hw_numeric(key);
    if (!k)
        return -1;
    const char *src = (const char *)h + k->offset;
    *v = k->type == LT_INT ? (double)*(const int64_t *)(const void *)src
                           : *(const double *)(const void *)src;
    return 0;
}

int load_hw_scale(hw_t *h, const char *key, double f)
{
    const load_key *k = load_hw_numeric(key);
    if (!k)
        return -1;
    char *dst = (char *)h + k->offset;
    if (k->type == LT_INT) {
        int64_t *p = (int64_t *)(void *)dst;
        double x = floor((double)*p * f + 0.5);
        *p = x < 1 ? 1 : (int64_t)x;
    } else {
        *(double *)(void *)dst *= f;
    }
    return 0;
}

void load_hw_number_keys(char *buf, size_t size, struct suggest *sg)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < NKEYS(hw_keys); i++) {
        if (hw_keys[i].type != LT_FLOAT && hw_keys[i].type != LT_INT)
            continue;
        if (sg)
            suggest_offer(sg, hw_keys[i].name);
        int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                         hw_keys[i].name);
        if (w < 0 || used + (size_t)w >= size)
            break;
        used += (size_t)w;
    }
}

int load_hw(const config_setting_t *g, hw_t *h, load_err *err)
{
    return load_hw_at(g, NULL, NULL, 0, h, err);
}

void load_domain_advice(char *buf, size_t size, int64_t devices, int64_t domain)
{
    int64_t k = domain > 0 ? devices / domain : 0;
    if (k < 1)
        snprintf(buf, size, "the nearest valid size is %lld (1 x %lld)",
                 (long long)domain, (long long)domain);
    else
        snprintf(buf, size, "the nearest valid sizes are %lld (%lld x %lld) and "
                 "%lld (%lld x %lld)", (long long)(k * domain), (long long)k,
                 (long long)domain, (long long)((k + 1) * domain),
                 (long long)(k + 1), (long long)domain);
}

/* The message of a system whose topology does not derive. */
static void load_dsystem_fail(const config_setting_t *g, const topo_system_t *sys,
                              status_code st, const char *bad, load_err *err)
{
    int64_t domain = sys->devices_per_node > 0 ? sys->devices_per_node
                                               : sys->hw.scaleup_devices;
    if (st == STATUS_INVALID_NODES && domain > 0 && sys->devices > domain) {
        char advice[160];
        load_domain_advice(advice, sizeof advice, sys->devices, domain);
        load_fail(err, load_member_or(g, sys->devices_per_node > 0
                                             ? "devices_per_node" : "devices"),
                  "system '%s': %lld devices are not a whole number of scale-up "
                  "domains of %lld devices (%s %s); %s, or set devices_per_node",
                  sys->name, (long long)sys->devices, (long long)domain,
                  sys->devices_per_node > 0 ? "devices_per_node of" : "the NVLink/"
                  "scale-up domain of hardware", sys->devices_per_node > 0
                  ? "this system" : sys->hw.name, advice);
        return;
    }
    if (bad && strcmp(bad, "pod_devices") == 0 && st == STATUS_INVALID_VALUE) {
        load_fail(err, load_member_or(g, "pod_devices"),
                  "key 'pod_devices' in system '%s': a pod of %lld devices must "
                  "be a whole number of scale-up domains of %lld and divide the "
                  "system's %lld devices into whole pods",
                  sys->name, (long long)sys->pod_devices, (long long)domain,
                  (long long)sys->devices);
        return;
    }
    load_fail(err, load_member_or(g, bad ? bad : "devices"),
              "key '%s' in system '%s': %s (devices %lld, per node "
              "%lld, pod %lld)", bad ? bad : "?", sys->name,
              status_text(st), (long long)sys->devices,
              (long long)sys->devices_per_node, (long long)sys->pod_devices);
}

static int load_dsystem_at(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, int depth, topo_system_t *sys,
                           load_err *err)
{
    memset(sys, 0, sizeof *sys);
    config_t base_aux, aux; /* opened by load_base / load_resolve when needed */
    int base_open = 0, aux_open = 0, rc = -1;
    const config_setting_t *b = NULL;
    if (load_base(g, "systems", "detailed_systems.cfg", configs_dir, reads, depth,
                  &base_aux, &base_open, &b, err) != 0 ||
        (b && load_dsystem_at(b, configs_dir, reads, depth + 1, sys, err) != 0) ||
        load_group(g, "detailed system", dsystem_keys, NKEYS(dsystem_keys), LK_ALL,
                   b ? LG_BASED : 0, sys, err))
        goto out;
    const config_setting_t *hm = config_setting_get_member(g, "hardware");
    if (hm) {
        const config_setting_t *hs = load_entry(hm, "hardware", "hardware.cfg",
                                                configs_dir, reads, &aux, &aux_open,
                                                err);
        if (!hs || load_hw_at(hs, configs_dir, reads, 0, &sys->hw, err) != 0)
            goto out;
    }
    /* the system's power and price over its hardware's (or its base's) */
    if (load_power(g, &sys->hw.board_power_w, &sys->hw.idle_power_w,
                   &sys->hw.price_per_hour_usd, err) != 0)
        goto out;
    const char *bad = NULL;
    status_code st = topo_system_derive(sys, &bad);
    if (st == STATUS_OK)
        rc = 0;
    else
        load_dsystem_fail(g, sys, st, bad, err);
out:
    if (aux_open)
        config_destroy(&aux);
    if (base_open)
        config_destroy(&base_aux);
    return rc;
}

int load_dsystem(const config_setting_t *g, const char *configs_dir,
                 load_reads *reads, topo_system_t *sys, load_err *err)
{
    return load_dsystem_at(g, configs_dir, reads, 0, sys, err);
}

/* The products the detailed fidelity forms from a strategy's integers
 * fit: tp pp dp cp at most 2^24 devices, micro_batch dp grad_accum at
 * most 2^40 sequences (0 counts as 1, the default). */
static int load_dtask_products(const config_setting_t *g,
                               const task_detailed_t *t, load_err *err)
{
    const int64_t deg[4] = {t->tp, t->pp, t->dp, t->cp};
    const int64_t bat[3] = {t->micro_batch, t->dp, t->grad_accum};
    int64_t p = 1;
    for (int i = 0; i < 4; i++)
        if (range_product(p, deg[i] > 0 ? deg[i] : 1, RANGE_P24, &p) != 0) {
            load_fail(err, load_member_or(g, "dp"), "keys tp, pp, dp, cp: "
                      "their product exceeds %lld devices", (long long)RANGE_P24);
            return -1;
        }
    p = 1;
    for (int i = 0; i < 3; i++)
        if (range_product(p, bat[i] > 0 ? bat[i] : 1, RANGE_P40, &p) != 0) {
            load_fail(err, load_member_or(g, "micro_batch"), "keys micro_batch, "
                      "dp, grad_accum: their product exceeds %lld sequences",
                      (long long)RANGE_P40);
            return -1;
        }
    return 0;
}

int load_dtask(const config_setting_t *g, model_kind kind, task_t *t,
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
    if (load_group(g, kind == MODEL_DLRM ? "detailed task (dlrm)" : "detailed task",
                   dtask_keys, NKEYS(dtask_keys), kinds, false, t, err))
        return -1;
    if (load_task_type_check(g, t->kind, err))
        return -1;
    if (t->detailed.frozen_layers < 0) {
        load_fail(err, load_member_or(g, "frozen_layers"),
                  "key 'frozen_layers': expected an integer >= 0");
        return -1;
    }
    if (kind == MODEL_DLRM && t->detailed.emb_sharding == TASK_EMB_NONE)
        t->detailed.emb_sharding = TASK_EMB_TABLE;
    if (!config_setting_get_member(g, "emb_dp_threshold_bytes"))
        t->detailed.emb_dp_threshold_bytes = -1.0; /* the stack's */
    else if (!(t->detailed.emb_dp_threshold_bytes < 1e15)) {
        load_fail(err, load_member_or(g, "emb_dp_threshold_bytes"),
                  "key 'emb_dp_threshold_bytes': expected a number below 1e15 "
                  "(< 0: the stack's)");
        return -1;
    }
    return load_dtask_products(g, &t->detailed, err);
}

/* Keys of an explicit detailed strategy (a sweep's `strategies` list):
 * the strategy keys of a detailed task, none required. */
static const char *const load_dstrategy_names[] = {
    "name", "tp", "pp", "dp", "cp", "ep", "etp", "vpp", "zero_stage", "shard_degree",
    "sequence_parallel", "recompute", "recompute_layers", "schedule", "attention",
    "overlap_dp_comm", "overlap_tp_comm", "micro_batch", "layout"};

int load_dstrategy(const config_setting_t *g, detailed_template *s, load_err *err)
{
    enum { N = NKEYS(load_dstrategy_names) };
    load_key keys[N];
    size_t n = 0;
    for (size_t k = 0; k < NKEYS(dtask_keys); k++)
        for (size_t j = 0; j < N; j++)
            if (strcmp(dtask_keys[k].name, load_dstrategy_names[j]) == 0) {
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
    if (load_group(g, "strategy", keys, n, LK_LLM, 0, &t, err))
        return -1;
    static const char *const deg[] = {"tp", "pp", "cp", "ep", "vpp", "micro_batch"};
    const int64_t val[] = {d->tp, d->pp, d->cp, d->ep, d->vpp_auto ? 1 : d->vpp,
                           d->micro_batch_auto ? 1 : d->micro_batch};
    for (size_t i = 0; i < NKEYS(deg); i++)
        if (val[i] < 1) {
            load_fail(err, load_member_or(g, deg[i]), "key '%s': expected an integer "
                      ">= 1, got %lld", deg[i], (long long)val[i]);
            return -1;
        }
    if ((d->vpp > 1 || d->vpp_auto) && d->pp <= 1) {
        load_fail(err, load_member_or(g, "vpp"), "key 'vpp': virtual stages need a "
                  "pipeline (pp > 1); pp is %lld", (long long)d->pp);
        return -1;
    }
    if ((d->vpp > 1 || d->vpp_auto) && d->schedule == TASK_SCHEDULE_GPIPE) {
        load_fail(err, load_member_or(g, "schedule"), "key 'schedule': \"gpipe\" has "
                  "no virtual stages (use \"1f1b\" or \"interleaved\", or vpp = 1)");
        return -1;
    }
    if (load_dtask_products(g, d, err))
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

/* ------------------------------------------------------------ stacks */

/* The facts a serving stack must state (a training stack has none of
 * them: their zeros are out of the serving ranges, so a point file does
 * not write them). */
static const char *const load_serving_facts[] = {
    "token_budget", "max_seqs", "mem_fraction", "mem_fraction_of_free", "kv_block",
    "kv_reserve", "gemm_floor_s", "weight_bw_eff", "gemm_eff_max", "gemm_m_half",
    "kv_bw_eff", "attn_floor_s", "prefill_attn_eff", "ew_floor_s", "allreduce_s",
    "allreduce_bw_eff", "step_host_s", "request_host_s"};

static bool load_is_serving_fact(const char *key)
{
    for (size_t i = 0; i < NKEYS(load_serving_facts); i++)
        if (strcmp(load_serving_facts[i], key) == 0)
            return true;
    return false;
}

int load_stack(const config_setting_t *g, stack_desc *st, load_err *err)
{
    memset(st, 0, sizeof *st);
    /* a serving engine states its serving facts; the training facts it
     * leaves out are the idealized stack's (they only shape its forward
     * kernels: attention, element-wise passes, FP8 casts, reserve) */
    int serving = 0;
    unsigned flags = 0;
    if (config_setting_lookup_bool(g, "serving", &serving) == CONFIG_TRUE && serving) {
        stack_ideal(st);
        flags = LG_BASED;
        for (size_t i = 0; i <= NKEYS(load_serving_facts); i++) {
            /* and the reserve, which every stack has */
            const char *key = i < NKEYS(load_serving_facts) ? load_serving_facts[i]
                                                             : "reserve_bytes";
            if (!config_setting_get_member(g, key)) {
                load_fail(err, g, "missing key '%s' in serving stack", key);
                return -1;
            }
        }
    }
    if (load_group(g, "stack", stack_keys, NKEYS(stack_keys), LK_ALL, flags, st, err))
        return -1;
    const config_setting_t *zs = config_setting_get_member(g, "zero_stages");
    if (zs) {
        int n = config_setting_is_array(zs) || config_setting_is_list(zs)
                    ? config_setting_length(zs) : -1;
        for (int i = 0; i < n; i++) {
            const config_setting_t *e = config_setting_get_elem(zs, (unsigned)i);
            int z = config_setting_type(e) == CONFIG_TYPE_INT ? config_setting_get_int(e) : -1;
            if (z < 0 || z > 3) {
                n = -1;
                break;
            }
            st->zero_stages |= 1u << z;
        }
        if (n < 1) {
            load_fail(err, zs, "key 'zero_stages' in stack '%s': a list of ZeRO stages 0-3, "
                      "e.g. [0, 1]", st->name);
            return -1;
        }
    }
    st->serving_only = serving && !config_setting_get_member(g, "dp_overlap");
    const char *bad = NULL;
    if (stack_check(st, &bad) != STATUS_OK) {
        load_fail(err, load_member_or(g, bad), "key '%s' in stack '%s': out of range "
                  "(fractions in [0, 1], ranges ascending, bytes >= 0, counts >= 1)",
                  bad, st->name);
        return -1;
    }
    st->checked = true;
    return 0;
}

int load_point_stack(const config_setting_t *root, const char *configs_dir, stack_desc *st,
                     load_err *err)
{
    const config_setting_t *s = config_setting_get_member(root, "stack");
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *g = NULL;
    if (s) {
        g = load_resolve(s, "stacks", "stacks.cfg", configs_dir, &aux, &aux_open, err);
    } else {
        /* not stated: the catalogue's "unknown", the tool's default stack */
        char path[1024];
        snprintf(path, sizeof path, "%s/stacks.cfg", configs_dir);
        if (load_open(&aux, path, configs_dir, err) != 0)
            return -1;
        aux_open = 1;
        g = load_find(config_lookup(&aux, "stacks"), LOAD_STACK_DEFAULT);
        if (!g)
            load_fail(err, config_root_setting(&aux), "no stack named '%s' in list 'stacks' "
                      "(the default of points that name none)", LOAD_STACK_DEFAULT);
    }
    if (g && load_stack(g, st, err) == 0)
        rc = 0;
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

void load_dtask_defaults(const config_setting_t *g, const stack_desc *st, task_t *t)
{
    task_detailed_t *d = &t->detailed;
    if (d->emb_sharding != TASK_EMB_NONE)
        return; /* DLRM: the stack's facts are about transformers */
    if (!config_setting_get_member(g, "zero_stage") && t->kind != TASK_INFERENCE)
        d->zero_stage = st->default_zero_stage;
    if (!config_setting_get_member(g, "sequence_parallel"))
        d->sequence_parallel = st->sequence_parallel && d->tp > 1;
    if (!config_setting_get_member(g, "etp"))
        d->etp = st->expert_tensor_parallel;
    const config_setting_t *sch = config_setting_get_member(g, "schedule");
    const char *sv = sch ? config_setting_get_string(sch) : NULL;
    if (sv && strcmp(sv, "interleaved") == 0 && !config_setting_get_member(g, "vpp"))
        d->vpp = st->default_vpp;
}

/* ------------------------------------------------------------ catalogues */

const char *load_suggest(const config_setting_t *a, const config_setting_t *b,
                         const char *name, char *buf, size_t size)
{
    suggest sg;
    suggest_init(&sg, name);
    const config_setting_t *lists[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        if (!lists[k] || !config_setting_is_list(lists[k]))
            continue;
        for (int i = 0; i < config_setting_length(lists[k]); i++) {
            const char *en = NULL;
            const config_setting_t *e = config_setting_get_elem(lists[k], (unsigned)i);
            if (config_setting_is_group(e) &&
                config_setting_lookup_string(e, "name", &en) == CONFIG_TRUE)
                suggest_offer(&sg, en);
        }
    }
    return suggest_hint(&sg, buf, size);
}

/* The name of a list element: the string, or a group's "name". */
static const char *load_elem_name(const config_setting_t *e)
{
    if (config_setting_is_group(e)) {
        const char *n = NULL;
        return config_setting_lookup_string(e, "name", &n) ? n : NULL;
    }
    return config_setting_get_string(e);
}

/* A name listed twice in `list` (a spec axis or a catalogue) is refused,
 * naming both places: a repeat would evaluate the same points twice and
 * `best --group` would merge them silently (issue 19). 0, or -1 with
 * err set. */
int load_unique(const config_setting_t *list, const char *key, load_err *err)
{
    int len = config_setting_length(list);
    for (int i = 1; i < len; i++) {
        const config_setting_t *b = config_setting_get_elem(list, (unsigned)i);
        const char *nb = load_elem_name(b);
        for (int j = 0; nb && j < i; j++) {
            const config_setting_t *a = config_setting_get_elem(list, (unsigned)j);
            const char *na = load_elem_name(a);
            if (na && strcmp(na, nb) == 0) {
                const char *fa = config_setting_source_file(a);
                load_fail(err, b, "key '%s': \"%s\" is listed twice (first at "
                          "%s:%d); each name may appear once", key, nb,
                          fa ? fa : "?", config_setting_source_line(a));
                return -1;
            }
        }
    }
    return 0;
}

const config_setting_t *load_find(const config_setting_t *list,
                                  const char *name)
{
    if (!list || !config_setting_is_list(list))
        return NULL;
    int n = config_setting_length(list);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        const char *en = NULL;
        if (config_setting_is_group(e) &&
            config_setting_lookup_string(e, "name", &en) == CONFIG_TRUE &&
            strcmp(en, name) == 0)
            return e;
    }
    return NULL;
}

const config_setting_t *load_resolve(const config_setting_t *s,
                                     const char *list, const char *catalog_file,
                                     const char *configs_dir, config_t *aux,
                                     int *aux_open, load_err *err)
{
    if (config_setting_is_group(s))
        return s;
    const char *name = config_setting_get_string(s);
    if (!name) {
        load_fail(err, s, "key '%s': expected a group or a catalogue name, "
                  "got %s", config_setting_name(s),
                  load_type_name(config_setting_type(s)));
        return NULL;
    }
    const config_setting_t *root = s;
    while (config_setting_parent(root))
        root = config_setting_parent(root);
    const config_setting_t *hit =
        load_find(config_setting_get_member(root, list), name);
    if (hit)
        return hit;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", configs_dir, catalog_file);
    if (!*aux_open) {
        load_err cerr;
        if (load_open(aux, path, configs_dir, &cerr) != 0) {
            load_fail(err, s, "'%s' is not defined here and the catalogue "
                      "could not be read: %s", name, cerr.text);
            return NULL;
        }
        *aux_open = 1;
    }
    hit = load_find(config_lookup(aux, list), name);
    if (!hit) {
        char hint[SUGGEST_NAME_MAX + 32];
        load_fail(err, s, "key '%s': \"%s\" is not in the catalogue %s "
                  "(list '%s')%s", config_setting_name(s), name, path, list,
                  load_suggest(config_setting_get_member(root, list),
                               config_lookup(aux, list), name, hint, sizeof hint));
    }
    return hit;
}

/* ------------------------------------------------------------ points */

static const char *const point_keys[] = {"fidelity", "model", "system", "task",
                                         "stack", "models", "systems", "stacks",
                                         "hardware", "prefill"};

static const config_setting_t *load_where(const config_setting_t *task,
                                          const char *where)
{
    if (where && strcmp(where, "dense plan") == 0)
        return load_member_or(task, "dense");
    if (where && strcmp(where, "embedding plan") == 0)
        return load_member_or(task, "embedding");
    return task;
}

/* Strategy keys that contradict each other or the hardware are refused
 * with the key's line (issue 19: they were evaluated as something else
 * without a word). */
static int load_dtask_consistent(const config_setting_t *g, task_t *t,
                                 const hw_t *hw, load_err *err)
{
    task_detailed_t *d = &t->detailed;
    /* inference serves global_batch concurrent sequences over dp
     * replicas: the micro-batch (a replica's share) follows from it, as
     * in a sweep; one that disagrees is refused (it was evaluated with
     * micro_batch x dp sequences, the global batch ignored) */
    if (t->kind == TASK_INFERENCE && d->global_batch > 0 && !d->micro_batch_auto) {
        int64_t dp = d->dp > 0 ? d->dp : 1;
        if (d->micro_batch > 0 && d->micro_batch * dp != d->global_batch) {
            load_fail(err, load_member_or(g, "global_batch"), "key 'global_batch': "
                      "%lld sequences, but micro_batch %lld x dp %lld serve %lld "
                      "(inference: give one of global_batch and micro_batch)",
                      (long long)d->global_batch, (long long)d->micro_batch,
                      (long long)dp, (long long)(d->micro_batch * dp));
            return -1;
        }
        if (d->global_batch % dp != 0) {
            load_fail(err, load_member_or(g, "global_batch"), "key 'global_batch': "
                      "%lld sequences do not split evenly over dp %lld replicas",
                      (long long)d->global_batch, (long long)dp);
            return -1;
        }
        d->micro_batch = d->global_batch / dp;
    }
    if (d->vpp > 1 && d->pp <= 1) {
        load_fail(err, load_member_or(g, "vpp"), "key 'vpp': %lld virtual stages "
                  "need a pipeline (pp > 1); pp is %lld", (long long)d->vpp,
                  (long long)d->pp);
        return -1;
    }
    if (d->vpp > 1 && d->schedule == TASK_SCHEDULE_GPIPE) {
        load_fail(err, load_member_or(g, "schedule"), "key 'schedule': \"gpipe\" "
                  "has no virtual stages; vpp is %lld (use \"1f1b\" or "
                  "\"interleaved\", or vpp = 1)", (long long)d->vpp);
        return -1;
    }
    if (d->dtype == HW_FP8 && !(hw->peak_flops[HW_FP8] > 0)) {
        load_fail(err, load_member_or(g, "precision"), "key 'precision': \"fp8\" "
                  "on hardware '%s', which has no FP8 peak (peak_fp8_flops 0)",
                  hw->name);
        return -1;
    }
    return 0;
}

int load_prefill_pool(const config_setting_t *g, int64_t tp_default, point_prefill *f,
                      load_err *err)
{
    memset(f, 0, sizeof *f);
    if (load_group(g, "prefill", prefill_keys, NKEYS(prefill_keys), LK_LLM, 0, f, err))
        return -1;
    f->on = true;
    if (f->tp <= 0 && tp_default <= 0) {
        load_fail(err, g, "key 'tp' in prefill: a sweep's prefill pool states its "
                  "tensor-parallel degree (the decode pool's varies with the strategy)");
        return -1;
    }
    f->tp = f->tp > 0 ? f->tp : tp_default;
    f->pp = f->pp > 0 ? f->pp : 1;
    const config_setting_t *ds = config_setting_get_member(g, "devices");
    const char *dtext = config_setting_get_string(ds);
    if (dtext && strcmp(dtext, "auto") == 0) {
        f->rate_matched = true;
        f->system.devices = f->tp * f->pp; /* one replica; the evaluation sizes it */
    } else if (!dtext && (config_setting_type(ds) == CONFIG_TYPE_INT ||
                          config_setting_type(ds) == CONFIG_TYPE_INT64) &&
               config_setting_get_int64(ds) >= 1 && config_setting_get_int64(ds) <= RANGE_P24) {
        f->system.devices = config_setting_get_int64(ds);
    } else {
        load_fail(err, ds, "key 'devices' in prefill: expected an integer from 1 to %lld or "
                  "\"auto\"", (long long)RANGE_P24);
        return -1;
    }
    const config_setting_t *ks = config_setting_get_member(g, "kv_transfer");
    if (ks) {
        const char *kt = config_setting_get_string(ks);
        if (!kt || (strcmp(kt, "after_prefill") != 0 && strcmp(kt, "layerwise") != 0)) {
            load_fail(err, ks, "key 'kv_transfer' in prefill: expected \"after_prefill\" "
                      "or \"layerwise\"");
            return -1;
        }
        f->layerwise = strcmp(kt, "layerwise") == 0;
    }
    return 0;
}

int load_prefill_derive(const config_setting_t *g, point_prefill *f, load_err *err)
{
    const char *bad = NULL;
    status_code st = topo_system_derive(&f->system, &bad);
    if (st == STATUS_OK)
        return 0;
    load_fail(err, load_member_or(g, bad && strcmp(bad, "devices_per_node") == 0 ? bad
                                                                             : "devices"),
              "prefill pool of %lld devices: %s (key %s)", (long long)f->system.devices,
              status_text(st), bad ? bad : "?");
    return -1;
}

/* A detailed serving point's prefill pool (`prefill = { ... }`,
 * cost/detailed/serve_disagg.c): the point's system and task are the
 * decode pool. */
static int load_prefill(const config_setting_t *g, const char *configs_dir, point_t *p,
                        load_err *err)
{
    point_prefill *f = &p->prefill;
    if (p->task.kind != TASK_INFERENCE || p->model.kind != MODEL_LLM) {
        load_fail(err, g, "key 'prefill': a prefill pool serves an LLM inference task "
                  "(task type \"inference\")");
        return -1;
    }
    if (load_prefill_pool(g, p->task.detailed.tp > 0 ? p->task.detailed.tp : 1, f, err))
        return -1;
    f->system.hw = p->system.hw;
    snprintf(f->system.name, sizeof f->system.name, "%s-prefill", p->system.name);
    f->system.algo = p->system.algo;
    int rc = -1, aux_open = 0;
    config_t aux;
    const config_setting_t *hm = config_setting_get_member(g, "hardware");
    if (hm) {
        const config_setting_t *hs = load_entry(hm, "hardware", "hardware.cfg", configs_dir,
                                                NULL, &aux, &aux_open, err);
        if (!hs || load_hw_at(hs, configs_dir, NULL, 0, &f->system.hw, err) != 0)
            goto out;
    }
    rc = load_prefill_derive(g, f, err);
out:
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

int load_point(const char *path, const char *configs_dir, point_t *p,
               load_err *err)
{
    config_t cfg, mcat, scat;
    int mopen = 0, sopen = 0, rc = -1;
    memset(p, 0, sizeof *p);
    if (load_open(&cfg, path, configs_dir, err) != 0)
        return -1;
    const config_setting_t *root = config_root_setting(&cfg);
    int n = config_setting_length(root);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        bool known = false;
        for (size_t k = 0; k < NKEYS(point_keys); k++)
            if (strcmp(point_keys[k], config_setting_name(s)) == 0)
                known = true;
        if (!known) {
            suggest sg;
            suggest_init(&sg, config_setting_name(s));
            for (size_t k = 0; k < NKEYS(point_keys); k++)
                suggest_offer(&sg, point_keys[k]);
            char hint[SUGGEST_NAME_MAX + 32];
            load_fail(err, s, "unknown key '%s' in point%s (expected fidelity, "
                      "model, system, task, stack, prefill)", config_setting_name(s),
                      suggest_hint(&sg, hint, sizeof hint));
            goto out;
        }
    }
    const config_setting_t *fs = config_setting_get_member(root, "fidelity");
    p->fidelity = EVAL_MADMAX;
    if (fs) {
        const char *fn = config_setting_get_string(fs);
        int f = fn ? eval_fidelity_parse(fn) : -1;
        if (f < 0) {
            load_fail(err, fs, "key 'fidelity': expected \"madmax\" or \"detailed\"");
            goto out;
        }
        p->fidelity = (eval_fidelity)f;
    }
    if (p->fidelity == EVAL_DETAILED) {
        for (size_t k = 0; k < 3; k++) {
            static const char *const dneed[] = {"model", "system", "task"};
            if (!config_setting_get_member(root, dneed[k])) {
                load_fail(err, root, "missing key '%s' in point", dneed[k]);
                goto out;
            }
        }
        const config_setting_t *dm = load_resolve(
            config_setting_get_member(root, "model"), "models",
            "detailed_models.cfg", configs_dir, &mcat, &mopen, err);
        if (!dm || load_dmodel(dm, &p->model, err))
            goto out;
        const config_setting_t *ds = load_resolve(
            config_setting_get_member(root, "system"), "systems",
            "detailed_systems.cfg", configs_dir, &scat, &sopen, err);
        if (!ds || load_dsystem(ds, configs_dir, NULL, &p->system, err))
            goto out;
        if (p->system.pod_devices > p->system.devices) {
            /* the pod level would be dropped without a word (issue 19) */
            load_fail(err, load_member_or(ds, "pod_devices"), "key 'pod_devices': a "
                      "pod of %lld devices is larger than system '%s' (%lld devices)",
                      (long long)p->system.pod_devices, p->system.name,
                      (long long)p->system.devices);
            goto out;
        }
        snprintf(p->cluster.name, sizeof p->cluster.name, "%s", p->system.name);
        p->cluster.devices = p->system.devices;
        p->cluster.devices_per_node = p->system.topo.level[0].span;
        p->cluster.nodes = p->system.devices / p->cluster.devices_per_node;
        const config_setting_t *dt = config_setting_get_member(root, "task");
        if (load_point_stack(root, configs_dir, &p->stack, err) ||
            load_dtask(dt, p->model.kind, &p->task, err))
            goto out;
        load_dtask_defaults(dt, &p->stack, &p->task);
        if (load_dtask_consistent(dt, &p->task, &p->system.hw, err) != 0)
            goto out;
        const config_setting_t *pf = config_setting_get_member(root, "prefill");
        if (pf && load_prefill(pf, configs_dir, p, err) != 0)
            goto out;
        const char *dwhere = NULL;
        status_code dst = eval_check(p, &dwhere);
        if (dst != STATUS_OK) {
            load_fail(err, dwhere && strcmp(dwhere, "model") == 0 ? dm
                           : dwhere && strcmp(dwhere, "prefill") == 0 ? pf
                                                                       : dt,
                      "%s on system '%s' (%lld devices): %s (rule %s)",
                      dwhere ? dwhere : "task", p->system.name,
                      (long long)p->system.devices, status_text(dst),
                      status_name(dst));
            goto out;
        }
        rc = 0;
        goto out;
    }
    if (config_setting_get_member(root, "prefill")) {
        load_fail(err, config_setting_get_member(root, "prefill"), "key 'prefill': a "
                  "disaggregated prefill pool needs fidelity = \"detailed\"");
        goto out;
    }
    const char *need[] = {"model", "system", "task"};
    for (size_t k = 0; k < NKEYS(need); k++) {
        if (!config_setting_get_member(root, need[k])) {
            load_fail(err, root, "missing key '%s' in point", need[k]);
            goto out;
        }
    }
    const config_setting_t *ms = load_resolve(
        config_setting_get_member(root, "model"), "models", "models.cfg",
        configs_dir, &mcat, &mopen, err);
    if (!ms || load_model(ms, &p->model, err))
        goto out;
    const config_setting_t *ss = load_resolve(
        config_setting_get_member(root, "system"), "systems", "systems.cfg",
        configs_dir, &scat, &sopen, err);
    if (!ss || load_system(ss, configs_dir, NULL, &p->cluster, err))
        goto out;
    const config_setting_t *ts = config_setting_get_member(root, "task");
    if (load_task(ts, &p->model, &p->task, err))
        goto out;
    const char *where = NULL;
    status_code st = eval_check(p, &where);
    if (st != STATUS_OK) {
        char plan[PLAN_TEXT_MAX] = "";
        if (where && strcmp(where, "dense plan") == 0)
            plan_format(&p->task.dense, plan, sizeof plan);
        else if (where && strcmp(where, "embedding plan") == 0)
            plan_format(&p->task.emb, plan, sizeof plan);
        load_fail(err, load_where(ts, where),
                  "%s%s%s%s on system '%s' (%lld devices, %lld per node): "
                  "%s (rule %s)",
                  where ? where : "task", *plan ? " \"" : "", plan,
                  *plan ? "\"" : "", p->cluster.name,
                  (long long)p->cluster.devices,
                  (long long)p->cluster.devices_per_node, status_text(st),
                  status_name(st));
        goto out;
    }
    rc = 0;
out:
    if (mopen)
        config_destroy(&mcat);
    if (sopen)
        config_destroy(&scat);
    config_destroy(&cfg);
    return rc;
}

/* ------------------------------------------------------------ help */

static void load_print_table(FILE *out, const char *title,
                             const load_key *keys, size_t n)
{
    fprintf(out, "%s:\n", title);
    for (size_t i = 0; i < n; i++) {
        const char *kinds = keys[i].kinds == LK_ALL    ? ""
                            : keys[i].kinds == LK_DLRM ? " [dlrm]"
                                                       : " [llm]";
        const char *req = keys[i].required == LR_YES        ? ""
                          : keys[i].required == LR_FINETUNE ? " (finetune)"
                                                            : " (optional)";
        char range[80] = "";
        load_type ty = keys[i].type;
        bool power = strcmp(keys[i].name, "board_power_w") == 0 ||
                     strcmp(keys[i].name, "idle_power_w") == 0 ||
                     strcmp(keys[i].name, "price_per_hour_usd") == 0;
        if (ty == LT_INT || ty == LT_MB || ty == LT_FLOAT || ty == LT_FACT || power) {
            char r[64];
            if (ty == LT_INT || ty == LT_MB)
                range_int_text(keys[i].name, r, sizeof r);
            else
                range_float_text(keys[i].name, r, sizeof r);
            snprintf(range, sizeof range, " {%s}", r);
        }
        fprintf(out, "  %-26s %s%s%s%s\n", keys[i].name, keys[i].doc, range,
                kinds, req);
    }
}

void load_print_keys(FILE *out)
{
    fprintf(out, "{a to b}: the accepted range of a number (checked when it "
            "is read)\n");
    fprintf(out, "point: fidelity (\"madmax\" or \"detailed\"), model, system, task, stack, "
                 "prefill (detailed serving)\n");
    load_print_table(out, "model", model_keys, NKEYS(model_keys));
    load_print_table(out, "system", system_keys, NKEYS(system_keys));
    load_print_table(out, "task", task_keys, NKEYS(task_keys));
    load_print_table(out, "detailed model (detailed_models.cfg)", dmodel_keys,
                     NKEYS(dmodel_keys));
    load_print_table(out, "hardware (hardware.cfg)", hw_keys, NKEYS(hw_keys));
    load_print_table(out, "detailed system", dsystem_keys, NKEYS(dsystem_keys));
    load_print_table(out, "detailed task", dtask_keys, NKEYS(dtask_keys));
    load_print_table(out, "prefill (detailed inference point: a disaggregated prefill pool; "
                     "system and task are the decode pool)", prefill_keys, NKEYS(prefill_keys));
    load_print_table(out, "stack (configs/stacks.cfg; a fact is a number or [low, nominal, high])",
                     stack_keys, NKEYS(stack_keys));
}

/* ------------------------------------------------------------ writing */

/* The name of enum value v of a key type, or NULL: the name whose
 * parse gives v (the parsers are the single source of the names). */
static const char *load_enum_name(load_type t, int v, char *buf, size_t size)
{
    static const char *const arch[] = {"gpt", "llama", "mpt", "bloom", "vit",
                                       "mixtral", "deepseek"};
    static const char *const pos[] = {"learned", "rope", "alibi", "none"};
    static const char *const rc[] = {"none", "selective", "full", "auto"};
    static const char *const sched[] = {"1f1b", "gpipe"};
    static const char *const att[] = {"flash", "unfused", "tuned"};
    static const char *const dt[] = {"bf16", "fp32", "tf32", "fp8", "int8", "fp4"};
    static const char *const algo[] = {"auto", "ring", "tree", "hierarchical"};
    static const char *const shard[] = {"table", "row", "column", "auto"};
    static const char *const opt[] = {"rowwise_adagrad", "sgd", "adagrad", "adam"};
    static const char *const f8[] = {"delayed", "current", "blockwise", "mxfp8", "nvfp4"};
    const char *const *names = NULL;
    size_t n = 0;
    int (*parse)(const char *) = NULL;
#define LOAD_NAMES(a, f) (names = (a), n = NKEYS(a), parse = (f))
    switch (t) {
    case LT_ARCH: LOAD_NAMES(arch, detailed_arch_parse); break;
    case LT_POSITION: LOAD_NAMES(pos, detailed_position_parse); break;
    case LT_RECOMPUTE: LOAD_NAMES(rc, detailed_recompute_parse); break;
    case LT_SCHEDULE: LOAD_NAMES(sched, detailed_schedule_parse); break;
    case LT_ATTENTION: LOAD_NAMES(att, detailed_attention_parse); break;
    case LT_DTYPE: LOAD_NAMES(dt, hw_dtype_parse); break;
    case LT_ALGO: LOAD_NAMES(algo, topo_algo_parse); break;
    case LT_EMB_SHARDING: LOAD_NAMES(shard, detailed_emb_sharding_parse); break;
    case LT_EMB_OPT: LOAD_NAMES(opt, detailed_emb_optimizer_parse); break;
    case LT_FP8_RECIPE: LOAD_NAMES(f8, detailed_fp8_recipe_parse); break;
    case LT_LAYOUT: {
        /* every order of the four dimensions */
        static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 4; c++) {
                    int d = 6 - a - b - c;
                    if (a == b || a == c || b == c || d < 0 || d > 3 || d == a ||
                        d == b || d == c)
                        continue;
                    snprintf(buf, size, "%s-%s-%s-%s", dims[a], dims[b],
                             dims[c], dims[d]);
                    if (detailed_layout_parse(buf) == v)
                        return buf;
                }
        return NULL;
    }
    default:
        return NULL;
    }
#undef LOAD_NAMES
    for (size_t i = 0; i < n; i++)
        if (parse(names[i]) == v)
            return names[i];
    return NULL;
}

const char *load_double_text(double v, char *buf, size_t size)
{
    /* the shortest of 15, 16 or 17 digits that reads back as v */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".eEin") && strlen(buf) + 2 < size)
        strcat(buf, ".0");
    return buf;
}

static void load_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* Writes "key = value;" for key k of the object at p; nothing for a
 * value with no configuration form (a non-finite number, an unnamed
 * enum value: the defaults). */
static void load_write_value(FILE *out, const load_key *k, const void *obj,
                             int indent)
{
    const char *p = (const char *)obj + k->offset;
    char buf[PLAN_TEXT_MAX];
    const char *text = NULL;
    int iv = 0;
    switch (k->type) {
    case LT_INT: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        fprintf(out, "%*s%s = %lld%s;\n", indent, "", k->name, (long long)v,
                v > INT32_MAX || v < INT32_MIN ? "L" : "");
        return;
    }
    case LT_FLOAT: {
        double v;
        memcpy(&v, p, sizeof v);
        char num[40];
        if (isfinite(v))
            fprintf(out, "%*s%s = %s;\n", indent, "", k->name,
                    load_double_text(v, num, sizeof num));
        return;
    }
    case LT_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        fprintf(out, "%*s%s = %s;\n", indent, "", k->name, v ? "true" : "false");
        return;
    }
    case LT_TRI: {
        int v;
        memcpy(&v, p, sizeof v);
        if (v >= 0) /* -1: not stated, left to the default */
            fprintf(out, "%*s%s = %s;\n", indent, "", k->name, v ? "true" : "false");
        return;
    }
    case LT_MB: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        task_t t;
        memcpy(&t, obj, sizeof t);
        if (*load_auto_flag(&t, k->name))
            fprintf(out, "%*s%s = \"auto\";\n", indent, "", k->name);
        else
            fprintf(out, "%*s%s = %lld;\n", indent, "", k->name, (long long)v);
        return;
    }
    case LT_FACT: {
        stack_fact f;
        memcpy(&f, p, sizeof f);
        char a[40], b[40], c[40];
        if (f.lo == f.v && f.v == f.hi)
            fprintf(out, "%*s%s = %s;\n", indent, "", k->name,
                    load_double_text(f.v, b, sizeof b));
        else
            fprintf(out, "%*s%s = [%s, %s, %s];\n", indent, "", k->name,
                    load_double_text(f.lo, a, sizeof a), load_double_text(f.v, b, sizeof b),
                    load_double_text(f.hi, c, sizeof c));
        return;
    }
    case LT_PP_SEND:
        memcpy(&iv, p, sizeof iv);
        text = iv == STACK_PP_SCATTER_GATHER ? "scatter_gather" : "full";
        break;
    case LT_SCHEDULER:
        memcpy(&iv, p, sizeof iv);
        text = iv == TASK_SCHED_STATIC ? "static" : "continuous";
        break;
    case LT_WDTYPE:
        memcpy(&iv, p, sizeof iv);
        text = task_weight_name(iv);
        if (!text)
            return; /* not stated: the compute dtype */
        break;
    case LT_KVDTYPE:
        memcpy(&iv, p, sizeof iv);
        if (iv <= 0)
            return; /* not stated: the compute dtype */
        text = load_enum_name(LT_DTYPE, iv - 1, buf, sizeof buf);
        break;
    case LT_CONC: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        if (v == TASK_CONC_MAX || v == TASK_CONC_SLA)
            text = v == TASK_CONC_MAX ? "max" : "sla";
        else if (v > 0) /* 0: not stated, micro_batch x dp */
            fprintf(out, "%*s%s = %lld;\n", indent, "", k->name, (long long)v);
        if (!text)
            return;
        break;
    }
    case LT_PLAN: {
        const plan_t *pl = (const plan_t *)(const void *)p;
        fprintf(out, "%*s%s = [", indent, "", k->name);
        for (int l = 0; l < pl->nlevels; l++)
            fprintf(out, "%s\"%s:%lld\"", l ? ", " : "",
                    plan_strategy_name(pl->strategy[l]), (long long)pl->degree[l]);
        fputs("];\n", out);
        return;
    }
    case LT_STRING:
    case LT_TEXT:
        text = p;
        break;
    case LT_MODEL_KIND:
        memcpy(&iv, p, sizeof iv);
        text = model_kind_name((model_kind)iv);
        break;
    case LT_TASK_KIND:
        memcpy(&iv, p, sizeof iv);
        text = task_kind_name((task_kind)iv);
        break;
    case LT_MLP:
        memcpy(&iv, p, sizeof iv);
        text = iv == MODEL_MLP_SWIGLU ? "swiglu" : "gelu";
        break;
    default:
        memcpy(&iv, p, sizeof iv);
        text = load_enum_name(k->type, iv, buf, sizeof buf);
        break;
    }
    if (!text)
        return;
    fprintf(out, "%*s%s = ", indent, "", k->name);
    load_write_string(out, text);
    fputs(";\n", out);
}

void load_write_keys(FILE *out, load_ns ns, const void *obj, model_kind kind,
                     int indent,
                     void (*skipped)(const char *key, void *arg), void *arg)
{
    static const struct {
        const load_key *keys;
        size_t n;
    } tables[] = {
        {model_keys, NKEYS(model_keys)},   {system_keys, NKEYS(system_keys)},
        {task_keys, NKEYS(task_keys)},     {dmodel_keys, NKEYS(dmodel_keys)},
        {hw_keys, NKEYS(hw_keys)},         {dsystem_keys, NKEYS(dsystem_keys)},
        {dtask_keys, NKEYS(dtask_keys)},   {stack_keys, NKEYS(stack_keys)}};
    unsigned kinds = kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    bool is_task = ns == LOAD_NS_TASK || ns == LOAD_NS_DTASK;
    /* a task's keys for other task types: the loaders refuse them */
    task_kind tk = is_task ? ((const task_t *)obj)->kind : TASK_PRETRAIN;
    for (size_t i = 0; i < tables[ns].n; i++) {
        const load_key *k = &tables[ns].keys[i];
        if (!(k->kinds & kinds) || k->type == LT_NOTE)
            continue;
        if (is_task && !(load_task_key_types(k->name) & (1u << tk)))
            continue;
        /* a training stack's serving facts: not stated, so not written */
        if (ns == LOAD_NS_STACK && !((const stack_desc *)obj)->serving &&
            load_is_serving_fact(k->name))
            continue;
        if (k->type == LT_ANY) {
            if (skipped)
                skipped(k->name, arg);
            continue;
        }
        load_write_value(out, k, obj, indent);
    }
}
