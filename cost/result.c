/*
 * result.c - the table of result figures (names, units, offsets).
 */
#include "result.h"

#include <string.h>

#define RF(n, u, t, d) {#n, u, d, t, offsetof(result_t, n)}

const result_field result_fields[] = {
    RF(iteration_time_s, "s", RESULT_F64,
       "time of one step of the global batch (inference: prefill and decode)"),
    RF(throughput_samples_per_s, "samples/s (llm: sequences/s)", RESULT_F64,
       "global batch / iteration time"),
    RF(samples_per_s_per_device, "samples/s per device (llm: sequences/s)", RESULT_F64,
       "throughput_samples_per_s / devices"),
    RF(global_batch, "samples (llm: sequences)", RESULT_I64,
       "samples per step over all devices (inference: sequences served concurrently)"),
    RF(compute_gemm_s, "s", RESULT_F64, "summed dense (GEMM) compute time"),
    RF(compute_emb_s, "s", RESULT_F64, "summed embedding lookup time (a lookup model only)"),
    RF(comm_alltoall_s, "s", RESULT_F64, "summed all-to-all time"),
    RF(comm_allreduce_s, "s", RESULT_F64, "summed all-reduce time"),
    RF(comm_allgather_s, "s", RESULT_F64, "summed all-gather time"),
    RF(comm_reducescatter_s, "s", RESULT_F64, "summed reduce-scatter time"),
    RF(comm_exposed_s, "s", RESULT_F64, "iteration time not covered by compute"),
    RF(comm_overlapped_s, "s", RESULT_F64, "communication hidden behind compute"),
    RF(events_compute, "events", RESULT_I64, "events in the compute stream"),
    RF(events_comm, "events", RESULT_I64, "events in the communication stream"),
    RF(mem_weights_bytes_per_device, "bytes", RESULT_F64, "model weights held per device"),
    RF(mem_grads_bytes_per_device, "bytes", RESULT_F64, "detailed: gradients held per device"),
    RF(mem_optimizer_bytes_per_device, "bytes", RESULT_F64,
       "detailed: optimizer states (Adam, fp32 master) per device"),
    RF(mem_activations_bytes_per_device, "bytes", RESULT_F64,
       "detailed: activations in flight per device"),
    RF(mem_kv_cache_bytes_per_device, "bytes", RESULT_F64, "detailed: inference KV cache per device"),
    RF(mem_total_bytes_per_device, "bytes", RESULT_F64, "detailed: all of the above"),
    RF(mem_capacity_bytes_per_device, "bytes", RESULT_F64, "device memory of the system"),
    RF(mem_fits, "1 fits, 0.5 marginal, 0 exceeds", RESULT_F64,
       "the memory counted fits the capacity (madmax counts weights only; its "
       "figures are computed either way); detailed: 0.5 = over the usable capacity "
       "by less than the stack's reserve (fits when the allocator fragments little: "
       "flagged, not refused)"),
    RF(mem_headroom_bytes_per_device, "bytes", RESULT_F64,
       "usable capacity (detailed: times the task's memory_fraction) minus the memory "
       "counted; negative when over"),
    RF(comm_p2p_s, "s", RESULT_F64, "detailed: summed pipeline point-to-point time"),
    RF(pipeline_bubble_s, "s", RESULT_F64, "detailed: pipeline fill and drain time"),
    RF(tokens_per_s, "tokens/s", RESULT_F64,
       "LLM: training tokens per second (inference: output tokens per second, prefill "
       "included)"),
    RF(tokens_per_s_per_device, "tokens/s per device", RESULT_F64, "LLM: tokens_per_s / devices"),
    RF(mfu, "1", RESULT_F64, "detailed: model FLOPs utilization (6N + attention, causal halved)"),
    RF(ttft_s, "s", RESULT_F64, "detailed inference: time to first token"),
    RF(tpot_s, "s", RESULT_F64, "detailed inference: time per output token"),
    RF(output_tokens_per_s, "tokens/s", RESULT_F64,
       "serving: generated tokens per second over all replicas, prefill included"),
    RF(output_tokens_per_s_per_device, "tokens/s per device", RESULT_F64,
       "serving: output_tokens_per_s / devices"),
    RF(total_tokens_per_s, "tokens/s", RESULT_F64, "serving: prompt + generated tokens per second"),
    RF(requests_per_s, "requests/s", RESULT_F64, "serving: completed requests per second"),
    RF(tokens_per_s_per_user, "tokens/s per user", RESULT_F64, "serving: 1 / tpot_s"),
    RF(ttft_p90_s, "s", RESULT_F64,
       "serving: TTFT 90th percentile (model estimate: M/D/1 queue of prefill chunks)"),
    RF(ttft_p99_s, "s", RESULT_F64, "serving: TTFT 99th percentile (model estimate)"),
    RF(itl_p50_s, "s", RESULT_F64, "serving: inter-token latency median (a decode step)"),
    RF(itl_p99_s, "s", RESULT_F64,
       "serving: inter-token latency 99th percentile (a step carrying a prefill chunk)"),
    RF(concurrency_resolved, "requests", RESULT_I64,
       "serving: requests in flight evaluated, over all replicas (\"max\"/\"sla\" resolved)"),
    RF(concurrency_max, "requests", RESULT_I64,
       "serving: the most requests the KV cache and the engine admit, all replicas"),
    RF(kv_use, "1", RESULT_F64, "serving: fraction of the KV-cache pool in use"),
    RF(goodput_requests_per_s, "requests/s", RESULT_F64,
       "serving: requests/s meeting the task's SLA (all of them or none: mean figures)"),
    RF(sla_met, "bool (1 met, 0 missed)", RESULT_F64,
       "serving: mean TTFT and TPOT within ttft_max_s and tpot_max_s (1 without an SLA)"),
    RF(ttft_wave_max_s, "s", RESULT_F64,
       "serving at a fixed concurrency: TTFT of the last request of a wave (fixed lengths "
       "make requests that start together return together), the upper end of the TTFT "
       "range whose lower end is ttft_s (model estimate; NaN under a request rate)"),
    RF(prefill_devices, "devices", RESULT_F64,
       "disaggregated serving: devices of the prefill pool (rate-matched when \"auto\"); "
       "devices and the per-device figures count both pools"),
    RF(prefill_replicas_matched, "replicas", RESULT_F64,
       "disaggregated serving: prefill replicas the decode pool's request rate needs "
       "(with the wait the TTFT SLA allows): the pool sized by rate matching"),
    RF(prefill_capacity_requests_per_s, "requests/s", RESULT_F64,
       "disaggregated serving: requests/s the prefill pool prefills and sends at most"),
    RF(decode_capacity_requests_per_s, "requests/s", RESULT_F64,
       "disaggregated serving: requests/s the decode pool completes at the resolved "
       "concurrency (request rate: at its KV limit)"),
    RF(prefill_decode_rate_ratio, "1", RESULT_F64,
       "disaggregated serving: prefill capacity / decode capacity; below 1 the prefill "
       "pool binds, above 1 the decode pool"),
    RF(kv_transfer_s, "s", RESULT_F64,
       "disaggregated serving: one request's prompt KV sent from the prefill to the "
       "decode pool over the network (point-to-point on the topology)"),
    RF(kv_transfer_exposed_s, "s", RESULT_F64,
       "disaggregated serving: the part of kv_transfer_s in TTFT (all of it, or layer "
       "by layer behind the prefill with kv_transfer = \"layerwise\")"),
    RF(deployment_devices, "devices", RESULT_F64,
       "the devices of the deployment: the system's, plus a disaggregated point's prefill "
       "pool (a study at a given GPU count: best --where deployment_devices==N)"),
    RF(iteration_time_lo_s, "s", RESULT_F64,
       "detailed: iteration time with every uncertain stack/hardware fact at its fast end"),
    RF(iteration_time_hi_s, "s", RESULT_F64,
       "detailed: iteration time with every uncertain stack/hardware fact at its slow end"),
    RF(micro_batch_resolved, "sequences", RESULT_I64,
       "detailed: sequences per micro-batch evaluated (micro_batch = \"auto\" resolved)"),
    RF(recompute_resolved, "1", RESULT_I64,
       "detailed: recompute mode evaluated, 0 none, 1 selective, 2 full (\"auto\" resolved)"),
    RF(vpp_resolved, "1", RESULT_I64,
       "detailed: virtual pipeline stages per device evaluated (vpp = \"auto\" resolved)"),
    RF(emb_dp_tables, "tables", RESULT_I64,
       "detailed DLRM, emb_sharding \"auto\": tables replicated (data-parallel)"),
    RF(emb_whole_tables, "tables", RESULT_I64,
       "detailed DLRM, emb_sharding \"auto\": tables placed whole on one device"),
    RF(emb_split_tables, "tables", RESULT_I64,
       "detailed DLRM, emb_sharding \"auto\": tables split by rows over a node's devices"),
    RF(energy_per_iteration_j, "J", RESULT_F64,
       "devices' energy of one iteration (busy/idle power model, cost/energy.h)"),
    RF(energy_per_sample_j, "J/sample (llm: J/sequence)", RESULT_F64,
       "energy_per_iteration_j / global batch"),
    RF(energy_per_token_j, "J/token", RESULT_F64,
       "LLM: energy per token (inference: per generated token)"),
    RF(cost_per_iteration_usd, "USD", RESULT_F64,
       "devices' hourly price over one iteration"),
    RF(cost_per_sample_usd, "USD/sample (llm: USD/sequence)", RESULT_F64,
       "cost_per_iteration_usd / global batch"),
    RF(cost_per_million_tokens_usd, "USD per 1e6 tokens", RESULT_F64,
       "LLM: cost per million tokens (inference: generated tokens)"),
    RF(compute_math_s, "s", RESULT_F64,
       "compute in math-bound kernels: GEMMs and attention (detailed LLMs)"),
    RF(compute_memory_s, "s", RESULT_F64,
       "compute in memory-bound kernels: element-wise, norms, loss, embedding; "
       "serving: decode steps bound by HBM streaming (detailed LLMs)"),
    RF(optimizer_s, "s", RESULT_F64, "optimizer step (detailed LLM training)"),
    RF(comm_exposed_tp_s, "s", RESULT_F64,
       "exposed tensor-parallel communication (detailed LLMs)"),
    RF(comm_exposed_cp_s, "s", RESULT_F64,
       "exposed context-parallel communication (detailed LLMs)"),
    RF(comm_exposed_ep_s, "s", RESULT_F64,
       "exposed expert-parallel communication (detailed LLMs)"),
    RF(comm_exposed_pp_s, "s", RESULT_F64,
       "exposed pipeline sends (detailed LLMs)"),
    RF(comm_exposed_dp_s, "s", RESULT_F64,
       "exposed data-parallel and ZeRO communication (detailed LLMs)"),
    RF(comm_exposed_scaleup_s, "s", RESULT_F64,
       "exposed communication of groups inside a scale-up domain (detailed LLMs)"),
    RF(comm_exposed_scaleout_s, "s", RESULT_F64,
       "exposed communication of groups crossing scale-up domains (detailed LLMs)"),
    RF(bound_code, "enum (cost/bound.h; text column bound_by)", RESULT_I64,
       "the largest share of the step: 1 compute_math, 2 compute_memory, 3 compute, "
       "4-8 comm_tp/cp/ep/pp/dp, 9 comm, 10 bubble, 11 optimizer (0: not ok)"),
    RF(comm_latency_modeled, "bool", RESULT_I64,
       "1: collectives pay a latency per step (detailed); 0: bandwidth only (MAD-Max), "
       "so plans of many small messages (serving, wide TP) look faster than they are"),
    RF(elasticity_compute, "1 (d log T / d log R)", RESULT_F64,
       "detailed, elasticities = true: step time's elasticity to the compute peaks (-1: "
       "bound by them, 0: indifferent)"),
    RF(elasticity_hbm_bw, "1 (d log T / d log R)", RESULT_F64,
       "detailed, elasticities = true: step time's elasticity to the HBM bandwidth"),
    RF(elasticity_scaleup_bw, "1 (d log T / d log R)", RESULT_F64,
       "detailed, elasticities = true: step time's elasticity to the scale-up bandwidth"),
    RF(elasticity_scaleout_bw, "1 (d log T / d log R)", RESULT_F64,
       "detailed, elasticities = true: step time's elasticity to the scale-out (NIC) "
       "bandwidth"),
};

const size_t result_nfields = sizeof result_fields / sizeof result_fields[0];

const result_field *result_find(const char *name)
{
    for (size_t i = 0; i < result_nfields; i++)
        if (strcmp(result_fields[i].name, name) == 0)
            return &result_fields[i];
    return NULL;
}

int result_direction_of(const char *name, const char *unit)
{
    const result_field *f = name ? result_find(name) : NULL;
    if (f)
        unit = f->unit; /* the tool's own unit, whatever a file says */
    if (name && (strncmp(name, "elasticity_", 11) == 0 ||
                 strcmp(name, "mem_headroom_bytes_per_device") == 0))
        return 0; /* signed: no better end */
    if (unit && (strncmp(unit, "enum", 4) == 0 || strncmp(unit, "bool", 4) == 0))
        return 0; /* codes */
    /* a rate is per second or per joule: a unit word ending "/s" or "/J"
     * ("samples/s (llm: sequences/s)", "tokens/s per device", "FLOP/s");
     * "J/sample", "USD/sequence" and "bytes/parameter" are not */
    for (const char *p = unit ? strchr(unit, '/') : NULL; p; p = strchr(p + 1, '/'))
        if ((p[1] == 's' || p[1] == 'J') &&
            (p[2] == '\0' || p[2] == ' ' || p[2] == ')' || p[2] == ','))
            return 1;
    return name && strcmp(name, "mfu") == 0 ? 1 : -1;
}

int result_direction(const result_field *f)
{
    return result_direction_of(f->name, f->unit);
}
