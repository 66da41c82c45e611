/*
 * stack.c - checks and scenarios of software-stack facts (stack.h).
 */
#include "stack.h"

#include <math.h>
#include <string.h>

#include "task.h"

static bool stack_range_ok(stack_fact f, double min, double max)
{
    return isfinite(f.v) && isfinite(f.lo) && isfinite(f.hi) && f.lo <= f.v &&
           f.v <= f.hi && f.lo >= min && f.hi <= max;
}

static bool stack_bytes_ok(double b)
{
    return isfinite(b) && b >= 0.0 && b <= 64.0;
}

status_code stack_check(const stack_desc *s, const char **bad)
{
#define ST_BAD(cond, key)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            *bad = key;                                                     \
            return STATUS_INVALID_VALUE;                                    \
        }                                                                   \
    } while (0)
    ST_BAD(s->attention == TASK_ATTENTION_FLASH || s->attention == TASK_ATTENTION_UNFUSED ||
               s->attention == TASK_ATTENTION_TUNED,
           "attention");
    ST_BAD(stack_range_ok(s->elementwise_passes, 1.0, 100.0), "elementwise_passes");
    ST_BAD(stack_range_ok(s->launch_s, 0.0, 1e-3), "launch_s");
    ST_BAD(stack_range_ok(s->fp8_cast_passes, 0.0, 100.0), "fp8_cast_passes");
    ST_BAD(stack_range_ok(s->tp_overlap_fwd, 0.0, 1.0), "tp_overlap_fwd");
    ST_BAD(stack_range_ok(s->tp_overlap_bwd, 0.0, 1.0), "tp_overlap_bwd");
    ST_BAD(stack_range_ok(s->dp_overlap, 0.0, 1.0), "dp_overlap");
    ST_BAD(stack_range_ok(s->zero3_overlap, 0.0, 1.0), "zero3_overlap");
    ST_BAD(stack_range_ok(s->comm_slowdown, 0.0, 1.0), "comm_slowdown");
    ST_BAD(s->dp_rails >= 0 && s->dp_rails <= 1024, "dp_rails");
    ST_BAD(stack_range_ok(s->dp_bus_efficiency, 1e-3, 1.0) && s->dp_bus_efficiency.lo > 0.0,
           "dp_bus_efficiency");
    ST_BAD(s->zero3_prefetch >= 0 && s->zero3_prefetch <= 64, "zero3_prefetch");
    ST_BAD(stack_range_ok(s->selective_gemm_fraction, 0.0, 1.0), "selective_gemm_fraction");
    ST_BAD(s->pp_send == STACK_PP_FULL || s->pp_send == STACK_PP_SCATTER_GATHER, "pp_send");
    ST_BAD(isfinite(s->pp_embedding_layers) && s->pp_embedding_layers >= 0.0 &&
               s->pp_embedding_layers <= 64.0,
           "pp_embedding_layers");
    ST_BAD(isfinite(s->pp_loss_layers) && s->pp_loss_layers >= 0.0 && s->pp_loss_layers <= 64.0,
           "pp_loss_layers");
    ST_BAD(s->default_vpp >= 1 && s->default_vpp <= 1024, "default_vpp");
    ST_BAD(s->default_micro_batch >= 1 && s->default_micro_batch <= (1 << 20),
           "default_micro_batch");
    ST_BAD(s->default_zero_stage >= 0 && s->default_zero_stage <= 3, "default_zero_stage");
    ST_BAD(s->zero_stages <= 15u && stack_zero_ok(s, s->default_zero_stage), "zero_stages");
    ST_BAD(stack_bytes_ok(s->param_bytes), "param_bytes");
    ST_BAD(stack_bytes_ok(s->master_bytes), "master_bytes");
    ST_BAD(stack_bytes_ok(s->grad_bytes), "grad_bytes");
    ST_BAD(stack_bytes_ok(s->optimizer_bytes), "optimizer_bytes");
    ST_BAD(stack_bytes_ok(s->grad_reduce_bytes) && s->grad_reduce_bytes > 0.0,
           "grad_reduce_bytes");
    ST_BAD(stack_bytes_ok(s->zero3_grad_reduce_bytes), "zero3_grad_reduce_bytes");
    ST_BAD(isfinite(s->optimizer_step_bytes) && s->optimizer_step_bytes >= 0.0 &&
               s->optimizer_step_bytes <= 1024.0,
           "optimizer_step_bytes");
    ST_BAD(isfinite(s->reserve_bytes) && s->reserve_bytes >= 0.0 && s->reserve_bytes < 1e13,
           "reserve_bytes");
    ST_BAD(stack_bytes_ok(s->logit_bytes), "logit_bytes");
    ST_BAD(stack_range_ok(s->loss_bytes, 0.0, 1024.0), "loss_bytes");
    ST_BAD(s->expert_tensor_parallel >= 0 && s->expert_tensor_parallel <= (1 << 24),
           "expert_tensor_parallel");
    ST_BAD(stack_range_ok(s->moe_a2a_overlap, 0.0, 1.0), "moe_a2a_overlap");
    ST_BAD(stack_range_ok(s->moe_a2a_overlap_on, 0.0, 1.0), "moe_a2a_overlap_on");
    ST_BAD(stack_range_ok(s->moe_hierarchical_dispatch, 0.0, 1.0), "moe_hierarchical_dispatch");
    ST_BAD(stack_range_ok(s->selective_block_fraction, 0.0, 1.0), "selective_block_fraction");
    if (s->serving) {
        ST_BAD(s->token_budget >= 16 && s->token_budget <= (1 << 24), "token_budget");
        ST_BAD(s->max_seqs >= 1 && s->max_seqs <= (1 << 24), "max_seqs");
        ST_BAD(stack_range_ok(s->mem_fraction, 0.05, 1.0), "mem_fraction");
        ST_BAD(s->kv_block >= 1 && s->kv_block <= 4096, "kv_block");
        ST_BAD(stack_range_ok(s->gemm_floor_s, 0.0, 1e-3), "gemm_floor_s");
        ST_BAD(stack_range_ok(s->weight_bw_eff, 0.05, 1.0), "weight_bw_eff");
        ST_BAD(stack_range_ok(s->gemm_eff_max, 0.05, 1.5), "gemm_eff_max");
        ST_BAD(stack_range_ok(s->gemm_m_half, 0.0, 1e6), "gemm_m_half");
        ST_BAD(stack_range_ok(s->kv_bw_eff, 0.05, 1.0), "kv_bw_eff");
        ST_BAD(stack_range_ok(s->attn_floor_s, 0.0, 1e-3), "attn_floor_s");
        ST_BAD(stack_range_ok(s->prefill_attn_eff, 0.01, 1.0), "prefill_attn_eff");
        ST_BAD(stack_range_ok(s->ew_floor_s, 0.0, 1e-3), "ew_floor_s");
        ST_BAD(stack_range_ok(s->allreduce_s, 0.0, 1e-2), "allreduce_s");
        ST_BAD(stack_range_ok(s->allreduce_bw_eff, 0.01, 1.0), "allreduce_bw_eff");
        ST_BAD(stack_range_ok(s->allreduce_ramp_bytes, 0.0, 1e10), "allreduce_ramp_bytes");
        ST_BAD(stack_range_ok(s->step_host_s, 0.0, 1.0), "step_host_s");
        ST_BAD(stack_range_ok(s->kv_output_reserve, 0.0, 1.0), "kv_output_reserve");
        ST_BAD(stack_range_ok(s->seq_host_s, 0.0, 1e-2), "seq_host_s");
        ST_BAD(stack_range_ok(s->request_host_s, 0.0, 10.0), "request_host_s");
        ST_BAD(stack_range_ok(s->dynamo_host_s, 0.0, 10.0), "dynamo_host_s");
        ST_BAD(s->cuda_graph_max >= 0 && s->cuda_graph_max <= (1 << 24), "cuda_graph_max");
        ST_BAD(stack_range_ok(s->eager_launch_s, 0.0, 1e-3), "eager_launch_s");
        ST_BAD(s->ntiers >= 0 && s->ntiers <= STACK_TIERS, "tiers");
        for (int64_t i = 0; i < s->ntiers && i < STACK_TIERS; i++) {
            const stack_tier *t = &s->tier[i];
            ST_BAD(isfinite(t->from_bytes) && t->from_bytes >= 0.0 &&
                       (i == 0 || t->from_bytes > s->tier[i - 1].from_bytes) &&
                       t->token_budget >= 0 && t->token_budget <= (1 << 24) &&
                       (t->token_budget == 0 || t->token_budget >= 16) && t->max_seqs >= 0 &&
                       t->max_seqs <= (1 << 24) && t->cuda_graph_max >= 0 &&
                       t->cuda_graph_max <= (1 << 24),
                   "tiers");
        }
        ST_BAD(isfinite(s->swa_full_tokens_ratio) && s->swa_full_tokens_ratio >= 0.0 &&
                   s->swa_full_tokens_ratio <= 16.0,
               "swa_full_tokens_ratio");
        ST_BAD(isfinite(s->linear_memory_ratio) && s->linear_memory_ratio >= 0.0 &&
                   s->linear_memory_ratio <= 16.0,
               "linear_memory_ratio");
        ST_BAD(isfinite(s->linear_slots) && s->linear_slots >= 0.0 && s->linear_slots <= 16.0,
               "linear_slots");
    }
    ST_BAD(stack_bytes_ok(s->emb_comm_bytes), "emb_comm_bytes");
    ST_BAD(isfinite(s->emb_dp_threshold_bytes) && s->emb_dp_threshold_bytes >= 0.0 &&
               s->emb_dp_threshold_bytes < 1e13,
           "emb_dp_threshold_bytes");
    ST_BAD(stack_range_ok(s->emb_hot_fraction, 0.0, 1.0), "emb_hot_fraction");
    ST_BAD(isfinite(s->emb_hot_rows) && s->emb_hot_rows >= 0.0 && s->emb_hot_rows < 1e12,
           "emb_hot_rows");
    ST_BAD(stack_range_ok(s->emb_overlap, 0.0, 1.0), "emb_overlap");
    ST_BAD(stack_range_ok(s->step_overhead_s, 0.0, 1.0), "step_overhead_s");
    ST_BAD(stack_range_ok(s->mlp_efficiency, 0.0, 4.0), "mlp_efficiency");
#undef ST_BAD
    return STATUS_OK;
}

static stack_fact stack_exact(double v)
{
    return (stack_fact){v, v, v};
}

void stack_ideal(stack_desc *s)
{
    memset(s, 0, sizeof *s);
    strcpy(s->name, "ideal");
    strcpy(s->summary, "idealized: fused kernels, perfectly overlapped data parallelism");
    s->attention = TASK_ATTENTION_FLASH;
    s->elementwise_passes = stack_exact(1.0);
    s->launch_s = stack_exact(0.0);
    s->fp8_cast_passes = stack_exact(0.0);
    s->sequence_parallel = false;
    s->tp_overlap_fwd = stack_exact(0.0);
    s->tp_overlap_bwd = stack_exact(0.0);
    s->dp_overlap = stack_exact(1.0);
    s->comm_slowdown = stack_exact(0.0);
    s->dp_rails = 0;
    s->dp_bus_efficiency = stack_exact(1.0);
    s->zero3_prefetch = 1;
    s->zero3_reshard = true;
    s->zero3_rs_every_microbatch = true;
    s->selective_attention = true;
    s->selective_gemm_fraction = stack_exact(0.0);
    s->pp_send = STACK_PP_FULL;
    s->pp_embedding_layers = 0.0;
    s->pp_loss_layers = 0.0;
    s->default_vpp = 1;
    s->default_micro_batch = 1;
    /* mixed-precision Adam of Rajbhandari et al. 2020: 2 + 2 + 12 */
    s->param_bytes = 2.0;
    s->master_bytes = 4.0;
    s->grad_bytes = 2.0;
    s->optimizer_bytes = 8.0;
    s->grad_reduce_bytes = 2.0;
    s->optimizer_step_bytes = 30.0;
    s->reserve_bytes = 0.0;
    s->logit_bytes = 6.0; /* 16-bit logits + fp32 softmax (Megatron's fused loss) */
    s->loss_bytes = stack_exact(14.0); /* a fused kernel: read 2+2, write 4; read 4, write 2 */
    stack_serving_defaults(s);
}

void stack_serving_defaults(stack_desc *s)
{
    /* the silicon figures of docs/serving.md ("Silicon figures") at
     * their middles; engine facts as vLLM V1's defaults */
    s->serving = true;
    s->token_budget = 8192;
    s->max_seqs = 1024;
    s->mem_fraction = stack_exact(0.9);
    s->mem_fraction_of_free = false;
    s->mem_fraction_static = false;
    s->prefill_apart = false;
    s->kv_block = 16;
    s->kv_reserve = false;
    s->gemm_floor_s = stack_exact(4e-6);
    s->weight_bw_eff = stack_exact(0.85);
    s->gemm_eff_max = stack_exact(1.0);
    s->gemm_m_half = stack_exact(100.0);
    s->kv_bw_eff = stack_exact(0.85);
    s->attn_floor_s = stack_exact(8e-6);
    s->prefill_attn_eff = stack_exact(0.5);
    s->ew_floor_s = stack_exact(2e-6);
    s->allreduce_s = stack_exact(5e-6);
    s->allreduce_bw_eff = stack_exact(0.7);
    s->allreduce_ramp_bytes = stack_exact(0.0);
    s->step_host_s = stack_exact(0.0);
    s->seq_host_s = stack_exact(0.0);
    s->kv_output_reserve = stack_exact(0.0);
    s->request_host_s = stack_exact(0.0);
    s->dynamo_host_s = stack_exact(0.0);
    s->eager_launch_s = stack_exact(0.0);
}
