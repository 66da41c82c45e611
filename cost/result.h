/*
 * result.h - the figures one evaluation produces, and their table.
 *
 * result_fields[] lists every figure once, with its JSON/HDF5 name, unit,
 * type and offset. The JSON report, the HDF5 compound type and the `best`
 * command are all generated from it, so a figure added here appears
 * everywhere. Names carry their unit (_s, _bytes...) where they have one.
 * A figure a fidelity does not compute for a point is NaN (JSON null),
 * never 0 (cost/eval.c); integer figures (global_batch, events_*) are
 * counts and stay 0 where nothing was counted. "samples" of an LLM are
 * sequences.
 */
#ifndef MADSWEEP_RESULT_H
#define MADSWEEP_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "status.h"

typedef struct result_t {
    int32_t status; /* status_code: ok or infeasible reason */
    double iteration_time_s;
    double throughput_samples_per_s;
    int64_t global_batch;
    double compute_gemm_s;
    double compute_emb_s;
    double comm_alltoall_s;
    double comm_allreduce_s;
    double comm_allgather_s;
    double comm_reducescatter_s;
    double comm_exposed_s;
    double comm_overlapped_s;
    int64_t events_compute;
    int64_t events_comm;
    double mem_weights_bytes_per_device;
    /* detailed fidelity (NaN where a fidelity does not compute them) */
    double mem_grads_bytes_per_device;
    double mem_optimizer_bytes_per_device;
    double mem_activations_bytes_per_device;
    double mem_kv_cache_bytes_per_device;
    double mem_total_bytes_per_device;
    double comm_p2p_s;
    double pipeline_bubble_s;
    double tokens_per_s;
    double mfu;
    double ttft_s;
    double tpot_s;
    /* detailed: the band of iteration_time_s under the uncertain stack
     * and hardware facts at their fast and slow ends */
    double iteration_time_lo_s;
    double iteration_time_hi_s;
    /* detailed: what the evaluation resolved (micro_batch = "auto",
     * recompute = "auto"): sequences per micro-batch, recompute mode */
    int64_t micro_batch_resolved;
    int64_t recompute_resolved;
    int64_t vpp_resolved;          /* virtual stages per device (vpp = "auto" resolved) */
    /* detailed DLRM, emb_sharding = "auto": the placement chosen, tables
     * replicated / whole on one device / split by rows in a node */
    int64_t emb_dp_tables, emb_whole_tables, emb_split_tables;
    /* derived after the fidelity's run, both fidelities (cost/eval.c) */
    double mem_capacity_bytes_per_device;
    double mem_fits;                 /* 1 fits, 0.5 within the band of fitting
                                        (flagged), 0 exceeds, NaN not known */
    double mem_headroom_bytes_per_device; /* usable capacity minus use */
    double samples_per_s_per_device;
    double tokens_per_s_per_device;
    double energy_per_iteration_j;   /* cost/energy.h */
    double energy_per_sample_j;
    double energy_per_token_j;
    double cost_per_iteration_usd;
    double cost_per_sample_usd;
    double cost_per_million_tokens_usd;
    /* detailed inference, serving (cost/detailed/serve_*.c) */
    double output_tokens_per_s;
    double output_tokens_per_s_per_device;
    double total_tokens_per_s;
    double requests_per_s;
    double tokens_per_s_per_user;
    double ttft_p90_s;
    double ttft_p99_s;
    double itl_p50_s;
    double itl_p99_s;
    int64_t concurrency_resolved;
    int64_t concurrency_max;
    double kv_use;
    double goodput_requests_per_s;
    double sla_met;
    double ttft_wave_max_s;
    /* serving with prefill/decode disaggregation (cost/detailed/serve/disagg.c; NaN
     * for a colocated point) */
    double prefill_devices;
    double prefill_replicas_matched;
    double prefill_capacity_requests_per_s;
    double decode_capacity_requests_per_s;
    double prefill_decode_rate_ratio;
    double kv_transfer_s;
    double kv_transfer_exposed_s;
    /* the devices of the deployment: the system's, and a disaggregated
     * point's prefill pool (every row) */
    double deployment_devices;
    /* what bounds the step (cost/bound.h), times of the busiest device
     * per iteration: compute split into math-bound kernels (GEMMs and
     * attention) and memory-bound ones (element-wise, norms, loss,
     * embedding; serving: decode steps whose HBM streaming outlasts
     * their math), the optimizer step, exposed communication by parallel
     * dimension and by network tier, and the largest of them (with the
     * pipeline bubble) as a code; NaN where a fidelity does not split */
    double compute_math_s;
    double compute_memory_s;
    double optimizer_s;
    double comm_exposed_tp_s;
    double comm_exposed_cp_s;
    double comm_exposed_ep_s;
    double comm_exposed_pp_s;
    double comm_exposed_dp_s;
    double comm_exposed_scaleup_s;
    double comm_exposed_scaleout_s;
    int64_t bound_code;
    /* 1 when the fidelity's collectives pay a latency per step (detailed),
     * 0 when they are priced by bandwidth alone (MAD-Max): its plans of
     * many small messages look faster than they are */
    int64_t comm_latency_modeled;
    /* d log T / d log R of the step time to compute, HBM bandwidth,
     * scale-up and scale-out bandwidth (cost/elastic.h; a sweep with
     * `elasticities = true`, and eval; NaN otherwise) */
    double elasticity_compute;
    double elasticity_hbm_bw;
    double elasticity_scaleup_bw;
    double elasticity_scaleout_bw;
} result_t;

typedef enum result_type { RESULT_F64 = 0, RESULT_I64 = 1 } result_type;

typedef struct result_field {
    const char *name;
    const char *unit; /* "s", "samples/s", "bytes", "1" (count) */
    const char *doc;
    result_type type;
    size_t offset;
} result_field;

/* The figures of result_t (status excluded), in output order. */
extern const result_field result_fields[];
extern const size_t result_nfields;

/* Value of a field of r as a double (int64 fields converted); inline:
 * every evaluation reads each field once (cost/eval.c's figure check). */
static inline double result_get(const result_t *r, const result_field *f)
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

/* The direction of a figure, the one rule of every ranking of results
 * (`madsweep best`, a sweep's `keep`): +1 when larger is better (rates:
 * a unit word ending "/s" or "/J", such as samples/s, tokens/s per
 * device, FLOP/s; and mfu), -1 when smaller is better (times, bytes,
 * counts, energy and cost, "J/token", "USD/sample"), 0 when neither is
 * (signed figures, whose better end depends on what is asked: the
 * elasticities, memory headroom; enum and bool codes). result_direction_of
 * takes any column's name and unit (the axis columns of a sweep file); a
 * figure of result_fields[] by that name takes the table's unit, never
 * the one given (issue 29: a file without its units attribute ranked the
 * slowest plan first). */
int result_direction(const result_field *f);
int result_direction_of(const char *name, const char *unit);

/* Field by name, or NULL. */
const result_field *result_find(const char *name);

#endif
