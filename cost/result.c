/*
 * result.c - the table of result figures (names, units, offsets).
 */
#include "result.h"

#include <string.h>

#define RF(n, u, t, d) {#n, u, d, t, offsetof(result_t, n)}

const result_field result_fields[] = {
    RF(iteration_time_s, "s", RESULT_F64, "time of one step of the global batch"),
    RF(throughput_samples_per_s, "samples/s", RESULT_F64, "global batch / iteration time"),
    RF(global_batch, "samples", RESULT_I64, "samples per step over all devices"),
    RF(compute_gemm_s, "s", RESULT_F64, "summed dense (GEMM) compute time"),
    RF(compute_emb_s, "s", RESULT_F64, "summed embedding lookup time"),
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
    RF(comm_p2p_s, "s", RESULT_F64, "detailed: summed pipeline point-to-point time"),
    RF(pipeline_bubble_s, "s", RESULT_F64, "detailed: pipeline fill and drain time"),
    RF(tokens_per_s, "tokens/s", RESULT_F64,
       "detailed: training tokens per second (inference: decode tokens per second)"),
    RF(mfu, "1", RESULT_F64, "detailed: model FLOPs utilization (6N + attention, causal halved)"),
    RF(ttft_s, "s", RESULT_F64, "detailed inference: time to first token"),
    RF(tpot_s, "s", RESULT_F64, "detailed inference: time per output token"),
    RF(iteration_time_lo_s, "s", RESULT_F64,
       "detailed: iteration time with every uncertain stack/hardware fact at its fast end"),
    RF(iteration_time_hi_s, "s", RESULT_F64,
       "detailed: iteration time with every uncertain stack/hardware fact at its slow end"),
};

const size_t result_nfields = sizeof result_fields / sizeof result_fields[0];

double result_get(const result_t *r, const result_field *f)
{
    const char *p = (const char *)r + f->offset;
    if (f->type == RESULT_I64) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}

const result_field *result_find(const char *name)
{
    for (size_t i = 0; i < result_nfields; i++)
        if (strcmp(result_fields[i].name, name) == 0)
            return &result_fields[i];
    return NULL;
}

int result_direction(const result_field *f)
{
    /* larger is better for rates and efficiencies ("X per Y": samples/s,
     * tokens/s, ...) and for utilization; smaller for times, bytes,
     * counts, energy and cost */
    return strchr(f->unit, '/') != NULL || strcmp(f->name, "mfu") == 0 ? 1 : -1;
}
