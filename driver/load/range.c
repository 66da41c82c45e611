/*
 * range.c - the accepted range of every number key of points and
 * catalogues (see range.h).
 *
 * Every number read is range-checked here, before any arithmetic, so
 * that products of counts fit in int64 and times stay finite: counts of
 * layers, heads, experts and MLP stacks at most 2^16, widths, tokens and
 * degrees at most 2^24 (the device bound), rows and batches at most 2^36
 * to 2^40. Rates, capacities and peaks are 0 (where allowed) or at
 * least 1 per second or byte (no denormals), at most 1e24; fractions
 * and efficiencies in [1e-6, 1]; latencies in [0, 3600] s. A key
 * missing from the tables gets the defaults (integers [0, 2^40], other
 * numbers [0, 1e30], always finite). Products of several keys are
 * checked where they are formed (range_product).
 */
#include "range.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct range_int {
    const char *key;
    int64_t lo, hi;
} range_int;

static const range_int range_ints[] = {
    {"bytes_per_dense_param", 1, 8}, {"bytes_per_emb_param", 0, 8},
    {"bot_mlp_layers", 1, RANGE_P16}, {"top_mlp_layers", 1, RANGE_P16},
    {"mlp_dim", 1, RANGE_P24}, {"tables", 1, INT64_C(1) << 20},
    {"rows_per_table", 1, RANGE_P40}, {"emb_dim", 1, RANGE_P16},
    {"pooling", 1, INT64_C(1) << 20}, {"layers", 1, RANGE_P16},
    {"heads", 1, RANGE_P16}, {"kv_heads", 0, RANGE_P16}, {"hidden", 1, RANGE_P24},
    {"ffn", 1, RANGE_P24}, {"seq_len", 1, RANGE_P24}, {"vocab", 0, RANGE_P24},
    {"experts", 0, RANGE_P16}, {"top_k", 0, RANGE_P16},
    {"shared_experts", 0, RANGE_P16}, {"expert_ffn", 0, RANGE_P24},
    {"dense_layers", 0, RANGE_P16}, {"head_dim", 0, RANGE_P16},
    {"q_lora_rank", 0, RANGE_P24}, {"kv_lora_rank", 0, RANGE_P24},
    {"qk_nope_head_dim", 0, RANGE_P16}, {"qk_rope_head_dim", 0, RANGE_P16},
    {"v_head_dim", 0, RANGE_P16}, {"mtp_layers", 0, RANGE_P16}, {"scaleup_tray_devices", 0, RANGE_P24},
    {"devices", 1, RANGE_P24},
    {"nodes", 1, RANGE_P24}, {"nvlinks", 1, RANGE_P16}, {"nic_ports", 1, RANGE_P16},
    {"local_batch_dense", 1, RANGE_P36}, {"local_batch_emb", 1, RANGE_P36},
    {"min_frozen_layer", 0, RANGE_P16}, {"scaleup_devices", 1, RANGE_P24},
    {"devices_per_node", 0, RANGE_P24}, {"pod_devices", 0, RANGE_P24},
    {"tp", 0, RANGE_P24}, {"pp", 0, RANGE_P24}, {"dp", 0, RANGE_P24},
    {"cp", 0, RANGE_P24}, {"ep", 0, RANGE_P24}, {"vpp", 0, RANGE_P16},
    {"zero_stage", 0, 3}, {"micro_batch", 0, RANGE_P40},
    {"global_batch", 0, RANGE_P40}, {"grad_accum", 0, RANGE_P40},
    {"prompt_tokens", 0, RANGE_P24}, {"decode_tokens", 0, RANGE_P24},
    {"shard_degree", 0, RANGE_P24}, {"emb_column_shards", 0, RANGE_P16},
    {"frozen_layers", 0, RANGE_P16}, {"lora_rank", 0, RANGE_P24},
    {"recompute_layers", 0, RANGE_P16},
    {"concurrency", 1, RANGE_P24}, {"attn_dp", 0, RANGE_P16},
    {"token_budget", 16, RANGE_P24}, {"spec_tokens", 0, 64}, {"max_seqs", 1, RANGE_P24}, {"kv_block", 1, 4096},
    /* software stacks (as cost/stack.c's stack_check bounds them) */
    {"etp", 0, RANGE_P24}, {"expert_tensor_parallel", 0, RANGE_P24},
    {"dp_rails", 0, 1024}, {"zero3_prefetch", 0, 64}, {"default_vpp", 1, 1024},
    {"default_micro_batch", 1, INT64_C(1) << 20}, {"default_zero_stage", 0, 3},
};

typedef struct range_float {
    const char *key;
    double lo, hi;
    int zero; /* 0 allowed besides [lo, hi] */
} range_float;

#define RANGE_RATE(k) {k, 1.0, 1e24, 0}
#define RANGE_PEAK(k) {k, 1.0, 1e24, 1}
#define RANGE_FRAC(k) {k, 1e-6, 1.0, 0}
#define RANGE_LAT(k) {k, 0.0, 3600.0, 1}
static const range_float range_floats[] = {
    RANGE_PEAK("peak_fp64_flops"), RANGE_PEAK("peak_fp32_flops"),
    RANGE_PEAK("peak_fp16_flops"), RANGE_PEAK("peak_int8_ops"),
    RANGE_PEAK("peak_tf32_flops"), RANGE_RATE("peak_bf16_flops"),
    RANGE_PEAK("peak_fp8_flops"), RANGE_PEAK("peak_fp4_flops"), RANGE_FRAC("flops_util"),
    RANGE_RATE("mem_capacity_bytes"), RANGE_RATE("mem_bw_bytes_per_s"),
    RANGE_FRAC("mem_bw_util"), RANGE_RATE("nvlink_bidir_bytes_per_s"),
    RANGE_FRAC("nvlink_util"), RANGE_RATE("nic_bidir_bytes_per_s"),
    RANGE_FRAC("nic_util"), {"allreduce_intra_fraction", 0.0, 1.0, 1},
    RANGE_FRAC("mem_bw_efficiency"), RANGE_FRAC("attention_efficiency"),
    RANGE_FRAC("gemm_efficiency"), {"gemm_log10_flops", -10.0, 40.0, 1},
    RANGE_LAT("kernel_overhead_s"), RANGE_RATE("scaleup_bytes_per_s"),
    RANGE_LAT("scaleup_latency_s"), RANGE_FRAC("scaleup_efficiency"),
    RANGE_RATE("nic_bytes_per_s"), RANGE_LAT("nic_latency_s"),
    RANGE_FRAC("nic_efficiency"), {"nic_gbps_per_device", 1e-3, 1e9, 1},
    {"pod_oversubscription", 1.0, 1e6, 1}, {"capacity_factor", 1e-3, 1e3, 1},
    {"memory_fraction", 1e-3, 1.0, 1},
    {"grad_reduce_bytes", 0.125, 16.0, 1},
    /* hardware: the FP8 / FP4 GEMM tables, the bands, power and price (cost/hw.c
     * hw_check: uncertainties below 0.5, idle power at most board power) */
    {"attention_tuned_efficiency", 1e-6, 1.0, 1}, {"serve_gemm_fp8_efficiency", 1e-6, 1.0, 1}, {"gemm_fp8_log10_flops", -10.0, 40.0, 1},
    RANGE_FRAC("gemm_fp8_efficiency"), {"gemm_fp4_log10_flops", -10.0, 40.0, 1},
    RANGE_FRAC("gemm_fp4_efficiency"), {"efficiency_uncertainty", 0.0, 0.49, 1},
    {"network_uncertainty", 0.0, 0.49, 1}, {"board_power_w", 1e-3, 1e6, 1},
    {"idle_power_w", 1e-3, 1e6, 1}, {"price_per_hour_usd", 1e-6, 1e6, 1},
    /* software stacks: numbers and [low, nominal, high] facts, each value
     * (as cost/stack.c's stack_check bounds them) */
    {"elementwise_passes", 1.0, 100.0, 0}, {"launch_s", 0.0, 1e-3, 1},
    {"fp8_cast_passes", 0.0, 100.0, 1}, {"tp_overlap_fwd", 0.0, 1.0, 1},
    {"tp_overlap_bwd", 0.0, 1.0, 1}, {"dp_overlap", 0.0, 1.0, 1},
    {"comm_slowdown", 0.0, 1.0, 1}, RANGE_FRAC("dp_bus_efficiency"),
    {"selective_gemm_fraction", 0.0, 1.0, 1}, {"pp_embedding_layers", 0.0, 64.0, 1},
    {"pp_loss_layers", 0.0, 64.0, 1}, {"param_bytes", 0.0, 64.0, 1},
    {"master_bytes", 0.0, 64.0, 1}, {"grad_bytes", 0.0, 64.0, 1},
    {"optimizer_bytes", 0.0, 64.0, 1}, {"optimizer_step_bytes", 0.0, 1024.0, 1},
    {"reserve_bytes", 0.0, 1e13, 1}, {"logit_bytes", 0.0, 64.0, 1},
    {"loss_bytes", 0.0, 1024.0, 1},
    /* serving (cost/stack.c's stack_check, task SLA and rate) */
    {"request_rate", 1e-9, 1e9, 1}, {"ttft_max_s", 1e-6, 3600.0, 1},
    {"tpot_max_s", 1e-6, 3600.0, 1}, {"mem_fraction", 0.05, 1.0, 0},
    {"gemm_floor_s", 0.0, 1e-3, 1}, RANGE_FRAC("weight_bw_eff"), {"gemm_eff_max", 0.05, 1.5, 0},
    {"gemm_m_half", 0.0, 1e6, 1}, RANGE_FRAC("kv_bw_eff"), {"attn_floor_s", 0.0, 1e-3, 1},
    RANGE_FRAC("prefill_attn_eff"), {"ew_floor_s", 0.0, 1e-3, 1},
    {"emb_mem_comm_bw_ratio", 0.0, 1e6, 1},
    {"allreduce_s", 0.0, 1e-2, 1}, RANGE_FRAC("allreduce_bw_eff"),
    {"allreduce_ramp_bytes", 0.0, 1e10, 1},
    {"step_host_s", 0.0, 1.0, 1}, {"seq_host_s", 0.0, 1e-2, 1},
    {"kv_output_reserve", 0.0, 1.0, 1},
    {"request_host_s", 0.0, 10.0, 1},
    {"spec_acceptance", 0.0, 1.0, 1}, {"spec_draft_cost", 1e-6, 10.0, 1},
};

static range_int range_int_of(const char *key)
{
    for (size_t i = 0; i < sizeof range_ints / sizeof range_ints[0]; i++)
        if (strcmp(range_ints[i].key, key) == 0)
            return range_ints[i];
    return (range_int){key, 0, RANGE_P40};
}

static range_float range_float_of(const char *key)
{
    for (size_t i = 0; i < sizeof range_floats / sizeof range_floats[0]; i++)
        if (strcmp(range_floats[i].key, key) == 0)
            return range_floats[i];
    return (range_float){key, 0.0, 1e30, 1};
}

void range_int_text(const char *key, char *buf, size_t size)
{
    range_int r = range_int_of(key);
    snprintf(buf, size, "%lld to %lld", (long long)r.lo, (long long)r.hi);
}

void range_float_text(const char *key, char *buf, size_t size)
{
    range_float r = range_float_of(key);
    snprintf(buf, size, "%s%g to %g", r.zero && r.lo > 0 ? "0, or " : "", r.lo,
             r.hi);
}

int range_check_int(const config_setting_t *s, const char *key, int64_t v,
                    load_err *err)
{
    range_int r = range_int_of(key);
    if (v >= r.lo && v <= r.hi)
        return 0;
    char range[64];
    range_int_text(key, range, sizeof range);
    load_fail(err, s, "key '%s': %lld is out of range: must be %s%s", key,
              (long long)v, r.lo == 1 ? "positive, " : "", range);
    return -1;
}

int range_check_float(const config_setting_t *s, const char *key, double v,
                      load_err *err)
{
    range_float r = range_float_of(key);
    if (isfinite(v) && ((v >= r.lo && v <= r.hi) || (r.zero && v == 0.0)))
        return 0;
    char range[64];
    range_float_text(key, range, sizeof range);
    load_fail(err, s, "key '%s': %g is out of range: must be a finite number%s "
              "from %s", key, v, r.zero ? "" : " > 0", range);
    return -1;
}

int range_product(int64_t a, int64_t b, int64_t max, int64_t *out)
{
    int64_t p;
    if (__builtin_mul_overflow(a, b, &p) || p > max || p < -max)
        return -1;
    *out = p;
    return 0;
}

