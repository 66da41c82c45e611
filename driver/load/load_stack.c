/*
 * load_stack.c - reading software stacks (stacks.cfg, cost/stack.h):
 * the facts of a training framework or serving engine, a point's
 * `stack` key, and what a detailed task leaves to its stack.
 *
 * The keys are one table here; a serving engine must state its serving
 * facts and takes the idealized stack's training facts for the rest.
 * stack_check() in cost/ has the last word on ranges.
 */
#include "load.h"
#include "load_key.h"
#include "load_fit.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define STK(n, t, r, d, ...) LOAD_KEY(#n, t, offsetof(stack_desc, n), LK_ALL, r, d, __VA_ARGS__)
static const load_key stack_keys[] = {
    STK(name, LT_STRING, LR_YES, "catalogue name", LOAD_NONUM),
    STK(summary, LT_TEXT, LR_NO, "one line: what the stack is", LOAD_NONUM),
    LOAD_BASE_KEY("stacks", "stacks.cfg"),
    LOAD_KEY("match", LT_NOTE, 0, LK_ALL, LR_NO,
        "serving: the rows of a measurement file this engine stack serves, a row filter "
        "(driver/load/rowfilter.h; scripts/validate.py maps each row to the one stack it "
        "matches)", LOAD_NONUM),
    LOAD_FIT_TABLE_KEY,
    STK(attention, LT_ATTENTION, LR_YES,
        "attention kernel: \"flash\" (FlashAttention-2 class), \"tuned\" "
        "(vendor-tuned fused) or \"unfused\" (scores materialized)", LOAD_NONUM),
    STK(elementwise_passes, LT_FACT, LR_YES,
       "memory-bound traffic relative to fused kernels (1 fused; eager > 1)",
       LOAD_FLOAT(1.0, 100.0, "passes")),
    STK(launch_s, LT_FACT, LR_YES, "host launch cost per kernel not hidden, s",
        LOAD_FLOAT(0.0, 1e-3, "s per kernel")),
    STK(fp8_cast_passes, LT_FACT, LR_YES,
       "HBM passes over an FP8 GEMM's inputs for casts and scaling (bf16 bytes)",
       LOAD_FLOAT(0.0, 100.0, "passes")),
    STK(sequence_parallel, LT_BOOL, LR_YES, "sequence parallelism with tp > 1 when a run does not say",
        LOAD_UNIT("bool")),
    STK(tp_overlap_fwd, LT_FACT, LR_YES, "fraction of forward TP collectives that hides behind GEMMs",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    STK(tp_overlap_bwd, LT_FACT, LR_YES, "fraction of backward TP collectives that hides behind GEMMs",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    STK(dp_overlap, LT_FACT, LR_YES, "fraction of DP/ZeRO collectives that overlaps compute",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    STK(zero3_overlap, LT_FACT, LR_NO,
        "fraction of ZeRO 3's gathers and reduce-scatters that overlaps compute (default: "
        "dp_overlap)", LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(comm_slowdown, LT_FACT, LR_YES, "compute slowdown while collectives run beside it",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    STK(dp_rails, LT_INT, LR_YES, "NIC rails a DP ring spanning nodes uses (0: all)",
        LOAD_INT(0, 1024, "rails")),
    STK(dp_bus_efficiency, LT_FACT, LR_YES, "fraction of NIC bandwidth those DP rings reach",
        LOAD_FLOAT(1e-6, 1.0, "fraction")),
    STK(zero3_prefetch, LT_INT, LR_YES, "ZeRO 3/FSDP units all-gathered ahead",
        LOAD_INT(0, 64, "units")),
    STK(zero3_reshard, LT_BOOL, LR_YES, "ZeRO 3 frees gathered parameters after forward",
        LOAD_UNIT("bool")),
    STK(zero3_rs_every_microbatch, LT_BOOL, LR_YES,
       "ZeRO 3 reduce-scatters gradients every micro-batch (else the last)", LOAD_UNIT("bool")),
    STK(zero3_pp_defer, LT_BOOL, LR_YES,
        "with pp > 1, ZeRO 3 gathers once per step and reduces after the last micro-batch",
        LOAD_UNIT("bool")),
    STK(selective_attention, LT_BOOL, LR_YES, "\"selective\" recomputes the attention core",
        LOAD_UNIT("bool")),
    STK(selective_gemm_fraction, LT_FACT, LR_YES, "\"selective\" also recomputes this fraction of GEMMs",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    STK(pp_send, LT_PP_SEND, LR_YES, "pipeline sends without SP: \"full\" or \"scatter_gather\"",
        LOAD_NONUM),
    STK(pp_embedding_layers, LT_FLOAT, LR_YES, "the embedding counts as this many layers in the stage split",
        LOAD_FLOAT(0.0, 64.0, "layers")),
    STK(pp_loss_layers, LT_FLOAT, LR_YES, "the head and loss count as this many layers in the split",
        LOAD_FLOAT(0.0, 64.0, "layers")),
    STK(pp_weighted, LT_BOOL, LR_YES,
       "split by those weights always (else only when layers do not divide evenly)",
       LOAD_UNIT("bool")),
    STK(default_vpp, LT_INT, LR_YES, "interleaved chunks per stage when a run does not say",
        LOAD_INT(1, 1024, "virtual stages per device")),
    STK(default_micro_batch, LT_INT, LR_YES, "sequences per micro-batch when a run does not say",
        LOAD_INT(1, INT64_C(1) << 20, "sequences")),
    STK(default_zero_stage, LT_INT, LR_YES, "ZeRO stage (0-3) when a run does not say",
        LOAD_INT(0, 3, "ZeRO stage (0-3)")),
    LOAD_KEY("zero_stages", LT_ANY, 0, LK_ALL, LR_NO,
        "ZeRO stages the stack runs, a list of 0-3 (default: "
        "all); auto strategies offer only these", LOAD_NONUM),
    STK(serving, LT_BOOL, LR_NO,
        "a serving engine (its training facts optional: the idealized stack's)",
        LOAD_UNIT("bool")),
    STK(engine, LT_STRING, LR_NO,
        "serving: the engine whose launch command `madsweep point --engine-args` writes: "
        "\"vllm\", \"sglang\" or \"trtllm\" (default: none)", LOAD_NONUM),
    STK(token_budget, LT_INT, LR_NO, "serving: tokens per engine step (chunked-prefill budget)",
        LOAD_INT(16, RANGE_P24, "tokens per step")),
    STK(max_seqs, LT_INT, LR_NO, "serving: sequences running at once at most",
        LOAD_INT(1, RANGE_P24, "sequences")),
    STK(mem_fraction, LT_FACT, LR_NO,
        "serving: memory for weights + KV (of the total), or for KV (of the free memory)",
        LOAD_FLOAT(0.05, 1.0, "fraction")),
    STK(mem_fraction_of_free, LT_BOOL, LR_NO,
        "serving: mem_fraction is of the memory left after weights (TensorRT-LLM)",
        LOAD_UNIT("bool")),
    STK(mem_fraction_static, LT_BOOL, LR_NO,
        "serving: mem_fraction holds weights + KV only, activations outside it (SGLang)",
        LOAD_UNIT("bool")),
    STK(kv_block, LT_INT, LR_NO, "serving: tokens per KV-cache block",
        LOAD_INT(1, 4096, "tokens per block")),
    STK(kv_reserve, LT_BOOL, LR_NO,
        "serving: a request reserves its prompt + output KV on admission (else on demand)",
        LOAD_UNIT("bool")),
    STK(prefill_apart, LT_BOOL, LR_NO,
        "serving: prefill runs in steps of its own, decodes wait (SGLang; default false)",
        LOAD_UNIT("bool")),
    STK(kv_output_reserve, LT_FACT, LR_NO,
        "serving: on demand, share of a request's remaining output kept free for it (default 0)",
        LOAD_FLOAT(0.0, 1.0, "fraction")),
    STK(gemm_floor_s, LT_FACT, LR_NO, "serving: fixed cost per weight GEMM, s",
        LOAD_FLOAT(0.0, 1e-3, "s per GEMM")),
    STK(weight_bw_eff, LT_FACT, LR_NO, "serving: HBM fraction decode GEMMs stream weights at",
        LOAD_FLOAT(1e-6, 1.0, "fraction")),
    STK(gemm_eff_max, LT_FACT, LR_NO,
        "serving: GEMM efficiency of serving shapes at large m, fraction of the hardware's",
        LOAD_FLOAT(0.05, 1.5, "fraction")),
    STK(gemm_m_half, LT_FACT, LR_NO, "serving: tokens at which a GEMM reaches half of it",
        LOAD_FLOAT(0.0, 1e6, "tokens")),
    STK(kv_bw_eff, LT_FACT, LR_NO, "serving: HBM fraction decode attention reads the KV at",
        LOAD_FLOAT(1e-6, 1.0, "fraction")),
    STK(kv_per_query_head, LT_BOOL, LR_NO,
        "serving: decode attention reads K/V per query head (no GQA sharing; default false)",
        LOAD_UNIT("bool")),
    STK(attn_floor_s, LT_FACT, LR_NO, "serving: decode attention floor per layer, s",
        LOAD_FLOAT(0.0, 1e-3, "s per layer")),
    STK(prefill_attn_eff, LT_FACT, LR_NO, "serving: prefill attention, fraction of the BF16 peak",
        LOAD_FLOAT(1e-6, 1.0, "fraction of peak")),
    STK(ew_floor_s, LT_FACT, LR_NO, "serving: floor per fused element-wise kernel, s",
        LOAD_FLOAT(0.0, 1e-3, "s per kernel")),
    STK(allreduce_s, LT_FACT, LR_NO, "serving: TP all-reduce kernel latency per call, s",
        LOAD_FLOAT(0.0, 1e-2, "s per call")),
    STK(allreduce_bw_eff, LT_FACT, LR_NO, "serving: ... its fraction of scale-up bandwidth",
        LOAD_FLOAT(1e-6, 1.0, "fraction")),
    STK(allreduce_ramp_bytes, LT_FACT, LR_NO,
        "serving: bus bytes of the bandwidth all-reduce's ramp to full bandwidth (default 0)",
        LOAD_FLOAT(0.0, 1e10, "bytes")),
    STK(step_host_s, LT_FACT, LR_NO, "serving: host time per step not overlapped, s",
        LOAD_FLOAT(0.0, 1.0, "s per step")),
    STK(seq_host_s, LT_FACT, LR_NO,
        "serving: host time per sequence in a step not overlapped, s (default 0)",
        LOAD_FLOAT(0.0, 1e-2, "s per sequence")),
    STK(request_host_s, LT_FACT, LR_NO, "serving: host time in each request's TTFT, s",
        LOAD_FLOAT(0.0, 10.0, "s per request")),
    STK(dynamo_host_s, LT_FACT, LR_NO,
        "serving: host time in each request's TTFT behind Dynamo's front end (task front_end "
        "\"dynamo\"), s (default 0)", LOAD_FLOAT(0.0, 10.0, "s per request")),
    STK(kv_checkpoint, LT_BOOL, LR_NO,
        "serving: KV dtype \"auto\" takes the checkpoint's KV scheme (TensorRT-LLM: FP8 KV "
        "with FP8/NVFP4 ModelOpt checkpoints; default false: the model dtype)",
        LOAD_UNIT("bool")),
    STK(overlap, LT_BOOL, LR_NO,
        "serving: the scheduler forms step n+1 while step n runs (overlap or async "
        "scheduling; default false)", LOAD_UNIT("bool")),
    STK(cuda_graph_max, LT_INT, LR_NO,
        "serving: the largest decode batch a CUDA graph holds; larger ones run eagerly "
        "(default 0: every batch)", LOAD_INT(0, RANGE_P24, "sequences")),
    STK(eager_launch_s, LT_FACT, LR_NO,
        "serving: a kernel's host launch in a step run without its graph, s (default 0)",
        LOAD_FLOAT(0.0, 1e-3, "s per kernel")),
    STK(moe_a2a, LT_BOOL, LR_NO,
        "serving: MoE under attention DP dispatches and combines by all-to-all (DeepEP) by "
        "default (task moe_flex_dispatch says otherwise; default false: gather and scatter by "
        "all-reduce)", LOAD_UNIT("bool")),
    LOAD_KEY("tiers", LT_ANY, 0, LK_ALL, LR_NO,
        "serving: defaults by GPU memory, a list of groups { from_gib; token_budget; max_seqs; "
        "cuda_graph_max; } ascending (the largest from_gib at or below the GPU's memory "
        "applies; 0 or absent: the stack's own)", LOAD_NONUM),
    LOAD_KEY("releases", LT_ANY, 0, LK_ALL, LR_NO,
        "serving: facts by release, a list of groups { from = \"0.12\"; KEY = VALUE; ... } "
        "ascending; `stack = \"NAME@VERSION\"` applies those with from <= VERSION",
        LOAD_NONUM),
    LOAD_KEY("from", LT_NOTE, 0, LK_ALL, LR_NO,
        "in a release group: the first release it applies to", LOAD_NONUM),
    STK(swa_full_tokens_ratio, LT_FLOAT, LR_NO,
        "serving, sliding-window models: the window pool's tokens over the full pool's "
        "(SGLang's swa_full_tokens_ratio; default 0: one pool, each request its window)",
        LOAD_FLOAT(0.0, 16.0, "1")),
    STK(swa_share_by_window, LT_BOOL, LR_NO,
        "serving, sliding-window models: a pool per window size, memory shared in "
        "proportion to window x bytes per token (TensorRT-LLM; default false)",
        LOAD_UNIT("bool")),
    STK(linear_memory_ratio, LT_FLOAT, LR_NO,
        "serving, linear-attention models: the state pool's memory over the KV pool's "
        "(SGLang's mamba_full_memory_ratio; default 0: one pool)", LOAD_FLOAT(0.0, 16.0, "1")),
    STK(linear_slots, LT_FLOAT, LR_NO,
        "serving, linear-attention models: state slots a running request holds (SGLang "
        "with its radix cache: 3; default 1)", LOAD_FLOAT(0.0, 16.0, "states per request")),
    STK(param_bytes, LT_FLOAT, LR_YES, "persistent compute-dtype copy, bytes/parameter (0: none)",
        LOAD_FLOAT(0.0, 64.0, "bytes/parameter")),
    STK(master_bytes, LT_FLOAT, LR_YES, "fp32 master weights, bytes/parameter",
        LOAD_FLOAT(0.0, 64.0, "bytes/parameter")),
    STK(grad_bytes, LT_FLOAT, LR_YES, "gradient buffer, bytes/parameter",
        LOAD_FLOAT(0.0, 64.0, "bytes/parameter")),
    STK(optimizer_bytes, LT_FLOAT, LR_YES, "optimizer states, bytes/parameter",
        LOAD_FLOAT(0.0, 64.0, "bytes/parameter")),
    STK(grad_reduce_bytes, LT_FLOAT, LR_YES, "bytes per gradient element reduced",
        LOAD_FLOAT_OR0(0.125, 16.0, "bytes per element")),
    STK(zero3_grad_reduce_bytes, LT_FLOAT, LR_NO,
        "bytes per gradient element accumulated and reduced under ZeRO 3 (default: "
        "grad_reduce_bytes)", LOAD_FLOAT(0.0, 1e30, "bytes per element")),
    STK(optimizer_step_bytes, LT_FLOAT, LR_YES, "HBM bytes the optimizer step moves per parameter",
        LOAD_FLOAT(0.0, 1024.0, "bytes/parameter")),
    STK(reserve_bytes, LT_FLOAT, LR_YES, "CUDA context, allocator and workspace reserve, bytes",
        LOAD_FLOAT(0.0, 1e13, "bytes")),
    STK(logit_bytes, LT_FLOAT, LR_YES,
        "bytes per logit held on the last stage (logits, the loss's copy, gradient)",
        LOAD_FLOAT(0.0, 64.0, "bytes per logit")),
    STK(expert_tensor_parallel, LT_INT, LR_NO,
        "MoE: expert tensor parallelism when a run does not say (default 0: = tp; "
        "Megatron-Core MoE: 1, experts whole and ep folded over tp*dp*cp)",
        LOAD_INT(0, RANGE_P24, "devices")),
    STK(moe_a2a_overlap, LT_FACT, LR_NO,
        "MoE: fraction of the expert-parallel all-to-all hidden behind other work (default 0)",
        LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(moe_a2a_overlap_on, LT_FACT, LR_NO,
        "MoE: fraction of the all-to-all hidden when a run turns the 1F1B A2A overlap on "
        "(default 0: all of it, as far as the other micro-batch's compute lasts)",
        LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(moe_hierarchical_dispatch, LT_FACT, LR_NO,
        "MoE: share of the dispatch that is hierarchical (DeepEP/HybridEP: one network copy "
        "per remote scale-up domain, NVLink fan-out; default 0: flat all-to-all)",
        LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(selective_block_fraction, LT_FACT, LR_NO,
        "\"selective\" = whole-block checkpointing of this fraction of the layers (fms-fsdp; "
        "default 0: op-level selective recompute)", LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(selective_norm_act, LT_BOOL, LR_NO,
        "\"selective\" also recomputes the norms and the MLP activation (Megatron-Core "
        "recompute_modules layernorm, moe_act; default false)", LOAD_UNIT("bool")),
    STK(loss_bytes, LT_FACT, LR_YES,
        "HBM bytes the loss moves per logit, forward + backward (fused ~14, unfused fp32 ~56)",
        LOAD_FLOAT(0.0, 1024.0, "bytes per logit")),
    STK(emb_comm_bytes, LT_FLOAT, LR_NO,
        "DLRM: bytes per pooled embedding element exchanged (default: the table's)",
        LOAD_FLOAT(0.0, 1e30, "bytes per element")),
    STK(emb_dp_threshold_bytes, LT_FLOAT, LR_NO,
        "DLRM auto placement: tables of at most this many bytes (rows and optimizer state) "
        "replicated (default 0: none)", LOAD_FLOAT(0.0, 1e30, "bytes")),
    STK(emb_hierarchical, LT_BOOL, LR_NO,
        "DLRM: hierarchical all-to-all (NVLink in the node, then between nodes); on several "
        "nodes the auto placement plans as HugeCTR's hier_auto", LOAD_UNIT("bool")),
    STK(emb_split_columns, LT_BOOL, LR_NO,
        "DLRM: split tables by columns (default false: by rows, partial sums reduced)",
        LOAD_UNIT("bool")),
    STK(emb_hot_fraction, LT_FACT, LR_NO,
        "DLRM hybrid embedding: fraction of lookups hitting replicated frequent rows (0: none)",
        LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(emb_hot_rows, LT_FLOAT, LR_NO, "DLRM hybrid embedding: frequent rows replicated",
        LOAD_FLOAT(0.0, 1e30, "rows")),
    STK(emb_overlap, LT_FACT, LR_NO,
        "DLRM: fraction of the embedding work and exchange hidden behind the MLPs",
        LOAD_FLOAT(0.0, 1e30, "fraction")),
    STK(step_overhead_s, LT_FACT, LR_NO, "DLRM: per-iteration host cost not hidden, s",
        LOAD_FLOAT(0.0, 1e30, "s per iteration")),
    STK(mlp_efficiency, LT_FACT, LR_NO,
        "DLRM: dense GEMM rate relative to the hardware's curve (default 1)",
        LOAD_FLOAT(0.0, 1e30, "1")),
};

const load_table load_stack_table = {stack_keys, NKEYS(stack_keys)};

/* The facts a serving stack must state (a training stack has none of
 * them: their zeros are out of the serving ranges, so a point file does
 * not write them). */
static const char *const load_serving_facts[] = {
    "token_budget", "max_seqs", "mem_fraction", "mem_fraction_of_free", "kv_block",
    "kv_reserve", "gemm_floor_s", "weight_bw_eff", "gemm_eff_max", "gemm_m_half",
    "kv_bw_eff", "attn_floor_s", "prefill_attn_eff", "ew_floor_s", "allreduce_s",
    "allreduce_bw_eff", "step_host_s", "request_host_s"};

bool load_stack_is_serving_fact(const char *key)
{
    for (size_t i = 0; i < NKEYS(load_serving_facts); i++)
        if (strcmp(load_serving_facts[i], key) == 0)
            return true;
    return false;
}

/* A stack's `tiers`: its defaults by GPU memory (cost/stack.h). */
static int load_stack_tiers(const config_setting_t *g, stack_desc *st, load_err *err)
{
    const config_setting_t *l = config_setting_get_member(g, "tiers");
    if (!l)
        return 0;
    int n = config_setting_is_list(l) ? config_setting_length(l) : -1;
    if (n < 1 || n > STACK_TIERS) {
        load_fail(err, l, "key 'tiers' in stack '%s': a list of 1 to %d groups { from_gib; "
                  "token_budget; max_seqs; cuda_graph_max; }", st->name, STACK_TIERS);
        return -1;
    }
    static const char *const fields[] = {"from_gib", "token_budget", "max_seqs",
                                         "cuda_graph_max"};
    st->ntiers = n;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
        double v[4] = {0, 0, 0, 0};
        int m = config_setting_is_group(e) ? config_setting_length(e) : -1;
        for (int j = 0; j < m; j++) {
            const config_setting_t *x = config_setting_get_elem(e, (unsigned)j);
            size_t k = 0;
            while (k < 4 && strcmp(config_setting_name(x), fields[k]) != 0)
                k++;
            int ty = config_setting_type(x);
            if (k == 4 || (ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64 &&
                           ty != CONFIG_TYPE_FLOAT)) {
                m = -1;
                break;
            }
            v[k] = ty == CONFIG_TYPE_FLOAT ? config_setting_get_float(x)
                                           : (double)config_setting_get_int64(x);
        }
        if (m < 1 || !(v[0] >= 0.0 && v[0] <= 1e6) || v[1] < 0 || v[1] > RANGE_P24 ||
            v[2] < 0 || v[2] > RANGE_P24 || v[3] < 0 || v[3] > RANGE_P24) {
            load_fail(err, e, "key 'tiers' in stack '%s': element %d: a group of from_gib "
                      "(0-1e6), token_budget, max_seqs, cuda_graph_max (integers >= 0)",
                      st->name, i);
            return -1;
        }
        st->tier[i] = (stack_tier){v[0] * 1073741824.0, (int64_t)v[1], (int64_t)v[2],
                                   (int64_t)v[3]};
    }
    return 0;
}

/* The numbers of a release text ("0.12.0", "1.2.0rc6.post1": 0, 12, 0
 * and 1, 2, 0; what follows the digits of a part is ignored), at most 4;
 * -1 when it does not start with a digit. */
static int load_stack_version(const char *text, long v[4])
{
    int n = 0;
    const char *p = text;
    while (n < 4 && *p >= '0' && *p <= '9') {
        long x = 0;
        while (*p >= '0' && *p <= '9' && x < 100000)
            x = 10 * x + (*p++ - '0');
        v[n++] = x;
        while (*p && *p != '.')
            p++;
        if (*p == '.')
            p++;
    }
    for (int i = n; i < 4; i++)
        v[i] = 0;
    return n > 0 ? n : -1;
}

int load_stack_release(const config_setting_t *g, const char *requested, stack_desc *st,
                       load_err *err)
{
    const char *at = strchr(requested, '@');
    if (!at)
        return 0;
    long want[4];
    if (load_stack_version(at + 1, want) < 0) {
        load_fail(err, g, "stack '%s': the release after '@' is a version (\"0.12.0\")",
                  requested);
        return -1;
    }
    const config_setting_t *l = config_setting_get_member(g, "releases");
    int n = l && config_setting_is_list(l) ? config_setting_length(l) : 0;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
        const char *from = NULL;
        long v[4];
        if (!config_setting_is_group(e) ||
            config_setting_lookup_string(e, "from", &from) != CONFIG_TRUE ||
            load_stack_version(from, v) < 0 || config_setting_get_member(e, "releases") ||
            config_setting_get_member(e, "name")) {
            load_fail(err, e, "key 'releases' in stack '%s': element %d: a group with from = "
                      "\"VERSION\" and the facts that release changes", st->name, i);
            return -1;
        }
        int cmp = 0;
        for (int k = 0; k < 4 && !cmp; k++)
            cmp = want[k] < v[k] ? -1 : want[k] > v[k];
        if (cmp < 0)
            continue;
        /* every stack key but its name (the first), all optional */
        if (load_value_group(e, "stack release", stack_keys + 1, NKEYS(stack_keys) - 1, LK_ALL,
                             LG_BASED, st, err) ||
            load_stack_tiers(e, st, err))
            return -1;
    }
    snprintf(st->name, sizeof st->name, "%s", requested);
    const char *bad = NULL;
    if (stack_check(st, &bad) != STATUS_OK) {
        load_fail(err, g, "stack '%s': key '%s' out of range after its releases", requested,
                  bad);
        return -1;
    }
    return 0;
}

static int load_stack_at(const config_setting_t *g, const char *configs_dir, int depth,
                         stack_desc *st, load_err *err)
{
    memset(st, 0, sizeof *st);
    /* a stack with a base (a stack calibrated to a user's cluster,
     * scripts/calibrate.py --base) starts from it: only its name is
     * required, the keys it gives override */
    config_t aux;
    int aux_open = 0;
    const config_setting_t *b = NULL;
    if (load_base(g, "stacks", "stacks.cfg", configs_dir, NULL, depth, &aux, &aux_open, &b,
                  err) != 0 ||
        (b && load_stack_at(b, configs_dir, depth + 1, st, err) != 0)) {
        if (aux_open)
            config_destroy(&aux);
        return -1;
    }
    bool base_serving = b && st->serving;
    bool base_only = b && st->serving_only;
    if (aux_open)
        config_destroy(&aux);
    /* a serving engine states its serving facts; the training facts it
     * leaves out are the idealized stack's (they only shape its forward
     * kernels: attention, element-wise passes, FP8 casts, reserve) */
    int serving = base_serving;
    unsigned flags = b ? LG_BASED : 0;
    config_setting_lookup_bool(g, "serving", &serving);
    if (serving && !base_serving) {
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
    if (load_value_group(g, "stack", stack_keys, NKEYS(stack_keys), LK_ALL, flags, st, err) ||
        load_fit_check(g, "stack", &load_stack_table, true, err))
        return -1;
    const config_setting_t *zs = config_setting_get_member(g, "zero_stages");
    if (zs) {
        st->zero_stages = 0; /* a base's list replaced, not extended */
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
    if (config_setting_get_member(g, "from")) {
        load_fail(err, config_setting_get_member(g, "from"), "key 'from' in stack '%s': only "
                  "in a group of its list 'releases'", st->name);
        return -1;
    }
    if (load_stack_tiers(g, st, err) != 0)
        return -1;
    st->serving_only = config_setting_get_member(g, "dp_overlap") ? false
                       : b ? base_only : serving;
    const char *bad = NULL;
    if (stack_check(st, &bad) != STATUS_OK) {
        load_fail(err, load_value_member_or(g, bad), "key '%s' in stack '%s': out of range "
                  "(fractions in [0, 1], ranges ascending, bytes >= 0, counts >= 1)",
                  bad, st->name);
        return -1;
    }
    st->checked = true;
    return 0;
}

int load_stack_in(const config_setting_t *g, const char *configs_dir, stack_desc *st,
                  load_err *err)
{
    return load_stack_at(g, configs_dir, 0, st, err);
}

int load_stack(const config_setting_t *g, stack_desc *st, load_err *err)
{
    return load_stack_at(g, NULL, 0, st, err);
}

int load_stack_of_point(const config_setting_t *root, const char *configs_dir, stack_desc *st,
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
        if (load_open_catalogue(&aux, path, configs_dir, err) != 0)
            return -1;
        aux_open = 1;
        g = load_find(config_lookup(&aux, "stacks"), LOAD_STACK_DEFAULT);
        if (!g)
            load_fail(err, config_root_setting(&aux), "no stack named '%s' in list 'stacks' "
                      "(the default of points that name none)", LOAD_STACK_DEFAULT);
    }
    if (g && load_stack_in(g, configs_dir, st, err) == 0 &&
        (!s || !config_setting_get_string(s) ||
         load_stack_release(g, config_setting_get_string(s), st, err) == 0))
        rc = 0;
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

void load_stack_task_defaults(const config_setting_t *g, const stack_desc *st, task_t *t)
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
