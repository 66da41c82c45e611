/*
 * eval.c - the fidelity registry and the evaluation entry point.
 *
 * Around a fidelity's run, eval_run() keeps two invariants of result_t:
 *   - a figure the fidelity does not compute for the point is NaN, never
 *     0: before the run, the figures the fidelity computes (for the
 *     point's fidelity, model kind and task kind; eval_computed()) are
 *     set to 0, the fidelity's accumulators, and every other floating
 *     figure to NaN; after an infeasible verdict, the figures it did not
 *     reach become NaN (infeasible:memory keeps its memory breakdown);
 *   - the figures every row carries are derived after the run, from the
 *     fidelity's figures and the system: memory capacity and verdict,
 *     per-device throughput, energy and cost (cost/energy.h).
 */
#include "eval.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bound.h"
#include "detailed.h"
#include "energy.h"
#include "madmax.h"

static const eval_ops *const eval_registry[EVAL_NFIDELITIES] = {
    &madmax_ops,
    &detailed_ops,
};

const eval_ops *eval_ops_of(eval_fidelity f)
{
    if (f < 0 || f >= EVAL_NFIDELITIES)
        return NULL;
    return eval_registry[f];
}

int eval_fidelity_parse(const char *name)
{
    for (int i = 0; i < EVAL_NFIDELITIES; i++)
        if (strcmp(eval_registry[i]->name, name) == 0)
            return i;
    return -1;
}

const char *eval_fidelity_name(eval_fidelity f)
{
    const eval_ops *ops = eval_ops_of(f);
    return ops ? ops->name : "?";
}

status_code eval_check(const point_t *p, const char **where)
{
    const char *dummy = NULL;
    if (!where)
        where = &dummy;
    const eval_ops *ops = eval_ops_of(p->fidelity);
    if (!ops) {
        *where = "fidelity";
        return STATUS_INVALID_FIDELITY;
    }
    return ops->check(p, where);
}

/* ------------------------------------------------------------ figures */

#define EO(f) offsetof(result_t, f)
#define EVAL_END ((size_t)-1)
/* what bounds the step (cost/bound.h), split by the detailed LLM runs */
#define EVAL_BREAKDOWN                                                       \
    EO(compute_math_s), EO(compute_memory_s), EO(comm_exposed_tp_s),         \
        EO(comm_exposed_cp_s), EO(comm_exposed_ep_s), EO(comm_exposed_pp_s), \
        EO(comm_exposed_dp_s), EO(comm_exposed_scaleup_s),                   \
        EO(comm_exposed_scaleout_s)

/* Figures each fidelity computes (sets or accumulates), by case. */
static const size_t eval_madmax[] = {
    EO(iteration_time_s), EO(throughput_samples_per_s), EO(compute_gemm_s),
    EO(compute_emb_s), EO(comm_alltoall_s), EO(comm_allreduce_s),
    EO(comm_allgather_s), EO(comm_reducescatter_s), EO(comm_exposed_s),
    EO(comm_overlapped_s), EO(mem_weights_bytes_per_device), EVAL_END};
static const size_t eval_detailed_llm_train[] = {
    EO(iteration_time_s), EO(throughput_samples_per_s), EO(compute_gemm_s),
    EO(comm_alltoall_s), EO(comm_allreduce_s), EO(comm_allgather_s),
    EO(comm_reducescatter_s), EO(comm_exposed_s), EO(comm_overlapped_s),
    EO(mem_weights_bytes_per_device), EO(mem_grads_bytes_per_device),
    EO(mem_optimizer_bytes_per_device), EO(mem_activations_bytes_per_device),
    EO(mem_kv_cache_bytes_per_device), EO(mem_total_bytes_per_device),
    EO(comm_p2p_s), EO(pipeline_bubble_s), EO(tokens_per_s), EO(mfu),
    EO(iteration_time_lo_s), EO(iteration_time_hi_s), EVAL_BREAKDOWN,
    EO(optimizer_s), EVAL_END};
static const size_t eval_detailed_llm_infer[] = {
    EO(iteration_time_s), EO(throughput_samples_per_s), EO(compute_gemm_s),
    EO(comm_alltoall_s), EO(comm_allreduce_s), EO(comm_allgather_s),
    EO(comm_reducescatter_s), EO(comm_exposed_s), EO(comm_overlapped_s),
    EO(comm_p2p_s), EO(mem_weights_bytes_per_device),
    EO(mem_activations_bytes_per_device), EO(mem_kv_cache_bytes_per_device),
    EO(mem_total_bytes_per_device), EO(tokens_per_s), EO(ttft_s), EO(tpot_s), EO(mfu),
    EO(iteration_time_lo_s), EO(iteration_time_hi_s), EO(output_tokens_per_s),
    EO(output_tokens_per_s_per_device), EO(total_tokens_per_s), EO(requests_per_s),
    EO(tokens_per_s_per_user), EO(ttft_p90_s), EO(ttft_p99_s), EO(itl_p50_s), EO(itl_p99_s),
    EO(kv_use), EO(goodput_requests_per_s), EO(sla_met), EVAL_BREAKDOWN, EVAL_END};
static const size_t eval_detailed_dlrm[] = {
    EO(iteration_time_s), EO(throughput_samples_per_s), EO(compute_gemm_s),
    EO(compute_emb_s), EO(comm_alltoall_s), EO(comm_allreduce_s),
    EO(comm_allgather_s), EO(comm_reducescatter_s), EO(comm_exposed_s),
    EO(comm_overlapped_s), EO(mem_weights_bytes_per_device),
    EO(mem_grads_bytes_per_device), EO(mem_optimizer_bytes_per_device),
    EO(mem_activations_bytes_per_device), EO(mem_total_bytes_per_device),
    EO(mfu), EVAL_END};

const size_t *eval_computed(const point_t *p)
{
    if (p->fidelity != EVAL_DETAILED)
        return eval_madmax;
    if (p->model.kind == MODEL_DLRM)
        return eval_detailed_dlrm;
    return p->task.kind == TASK_INFERENCE ? eval_detailed_llm_infer
                                          : eval_detailed_llm_train;
}

static void eval_put(result_t *r, size_t off, double v)
{
    memcpy((char *)r + off, &v, sizeof v);
}

static int eval_is_memory(size_t off)
{
    return off == EO(mem_weights_bytes_per_device) ||
           off == EO(mem_grads_bytes_per_device) ||
           off == EO(mem_optimizer_bytes_per_device) ||
           off == EO(mem_activations_bytes_per_device) ||
           off == EO(mem_kv_cache_bytes_per_device) ||
           off == EO(mem_total_bytes_per_device);
}

/* The 8-byte figures after the status: every one is a field of
 * result.c's table, F64 or I64; the I64 ones (counts: 0 where nothing
 * was counted) are listed here (test_detailed checks the list against
 * the table). */
#define EVAL_FIRST EO(iteration_time_s)
#define EVAL_SLOTS ((sizeof(result_t) - EVAL_FIRST) / 8)
static const size_t eval_ints[] = {
    EO(global_batch), EO(events_compute), EO(events_comm), EO(concurrency_resolved),
    EO(concurrency_max), EO(micro_batch_resolved), EO(recompute_resolved), EO(vpp_resolved),
    EO(emb_dp_tables), EO(emb_whole_tables), EO(emb_split_tables), EO(bound_code),
    EO(comm_latency_modeled), EVAL_END};

const size_t *eval_int_figures(void)
{
    return eval_ints;
}

static void eval_init(const point_t *p, result_t *r)
{
    static const double nan_or_zero[2] = {[RESULT_F64] = (double)NAN, [RESULT_I64] = 0.0};
    if (EVAL_FIRST + 8 * result_nfields == sizeof *r) {
        /* the figures, each listed once, tile result_t after the status:
         * the status and its padding 0, every figure NaN (one pass over
         * the slots), then the counts 0 (their 0 has the bits of 0.0) */
        memset(r, 0, EVAL_FIRST);
        const double nan = (double)NAN;
#pragma GCC unroll 8
        for (size_t i = 0; i < EVAL_SLOTS; i++)
            eval_put(r, EVAL_FIRST + 8 * i, nan);
#pragma GCC unroll 16
        for (size_t k = 0; k + 1 < sizeof eval_ints / sizeof eval_ints[0]; k++)
            eval_put(r, eval_ints[k], 0.0);
    } else {
        memset(r, 0, sizeof *r);
        for (size_t i = 0; i < result_nfields; i++)
            eval_put(r, result_fields[i].offset, nan_or_zero[result_fields[i].type]);
    }
    for (const size_t *o = eval_computed(p); *o != EVAL_END; o++)
        eval_put(r, *o, 0.0);
}

/* An infeasible point keeps only what was computed before its verdict. */
static void eval_mask_infeasible(const point_t *p, result_t *r)
{
    bool mem = r->status == STATUS_INFEASIBLE_MEMORY;
    for (const size_t *o = eval_computed(p); *o != EVAL_END; o++)
        if (!(mem && eval_is_memory(*o)))
            eval_put(r, *o, (double)NAN);
    if (r->global_batch == 0 && p->fidelity == EVAL_DETAILED)
        r->global_batch = p->task.detailed.global_batch;
}

int64_t eval_devices(const point_t *p)
{
    return p->fidelity == EVAL_DETAILED ? p->system.devices : p->cluster.devices;
}

/* Tokens of one iteration: an LLM's sequences times their tokens
 * (detailed inference: the generated tokens); NaN for a DLRM. */
static double eval_tokens(const point_t *p, const result_t *r)
{
    if (p->model.kind != MODEL_LLM)
        return (double)NAN;
    double gb = (double)r->global_batch;
    if (p->fidelity == EVAL_DETAILED && p->task.kind == TASK_INFERENCE)
        return gb * (double)p->task.detailed.decode_tokens;
    return gb * (double)p->model.seq_len;
}

static double eval_sum(double a, double b)
{
    return (isfinite(a) ? a : 0.0) + (isfinite(b) ? b : 0.0);
}

/* A disaggregated serving point's prefill pool (cost/detailed/
 * serve/disagg.c, its devices resolved by the evaluation) joins the
 * decode pool's devices: *d becomes the mean device of the two, weighted
 * by their counts (the sum of their power and price; the busy share is
 * the decode pool's), and the devices counted are returned. */
static double eval_pools(const point_t *p, const result_t *r, energy_device *d)
{
    double n = (double)eval_devices(p), np = r->prefill_devices;
    if (!p->prefill.on || !(np > 0.0))
        return n;
    const hw_t *h = &p->prefill.system.hw;
    energy_device e = {h->board_power_w, h->idle_power_w, h->price_per_hour_usd};
    double ie = energy_idle_w(&e), id = energy_idle_w(d);
    bool power = e.board_power_w > 0.0 && d->board_power_w > 0.0;
    bool price = e.price_per_hour_usd > 0.0 && d->price_per_hour_usd > 0.0;
    d->board_power_w = power ? (n * d->board_power_w + np * e.board_power_w) / (n + np) : 0.0;
    d->idle_power_w = power ? (n * id + np * ie) / (n + np) : 0.0;
    d->price_per_hour_usd =
        price ? (n * d->price_per_hour_usd + np * e.price_per_hour_usd) / (n + np) : 0.0;
    return n + np;
}

/* The figures every row carries, derived from the fidelity's. */
static void eval_derive(const point_t *p, result_t *r)
{
    bool det = p->fidelity == EVAL_DETAILED;
    energy_device d = {
        .board_power_w = det ? p->system.hw.board_power_w : p->cluster.board_power_w,
        .idle_power_w = det ? p->system.hw.idle_power_w : p->cluster.idle_power_w,
        .price_per_hour_usd = det ? p->system.hw.price_per_hour_usd
                                  : p->cluster.price_per_hour_usd};
    double n = det ? eval_pools(p, r, &d) : (double)eval_devices(p);
    r->deployment_devices = n;
    double cap = det ? p->system.hw.mem_capacity_bytes : p->cluster.mem_capacity_bytes;
    double need = det ? r->mem_total_bytes_per_device : r->mem_weights_bytes_per_device;
    r->mem_capacity_bytes_per_device = cap;
    double frac = det && p->task.detailed.memory_fraction > 0.0 ? p->task.detailed.memory_fraction
                                                                : 1.0;
    if (isfinite(need))
        r->mem_headroom_bytes_per_device = cap * frac - need;
    r->comm_latency_modeled = det ? 1 : 0;
    if (r->status == STATUS_INFEASIBLE_MEMORY)
        r->mem_fits = 0.0;
    else if (isfinite(need))
        r->mem_fits = need <= cap * frac ? 1.0 : det ? 0.5 : 0.0;
    if (r->status != STATUS_OK)
        return;
    double tokens = eval_tokens(p, r);
    if (!det && isfinite(tokens))
        r->tokens_per_s = tokens / r->iteration_time_s;
    r->samples_per_s_per_device = r->throughput_samples_per_s / n;
    r->tokens_per_s_per_device = r->tokens_per_s / n;
    energy_in in = {.devices = (int64_t)n,
                    .iteration_s = r->iteration_time_s,
                    .busy_s = eval_sum(r->compute_gemm_s, r->compute_emb_s),
                    .samples = (double)r->global_batch,
                    .tokens = tokens};
    energy_out out;
    energy_eval(&d, &in, &out);
    r->energy_per_iteration_j = out.energy_per_iteration_j;
    r->energy_per_sample_j = out.energy_per_sample_j;
    r->energy_per_token_j = out.energy_per_token_j;
    r->cost_per_iteration_usd = out.cost_per_iteration_usd;
    r->cost_per_sample_usd = out.cost_per_sample_usd;
    r->cost_per_million_tokens_usd = out.cost_per_million_tokens_usd;
}

/* Is figure `off` one the point keeps after its verdict? (computed, in
 * `comp` indexed by offset / 8, and, when infeasible, not masked) */
static bool eval_kept(const bool *comp, const result_t *r, size_t off)
{
    if (!comp[off / 8])
        return false;
    return r->status == STATUS_OK ||
           (r->status == STATUS_INFEASIBLE_MEMORY && eval_is_memory(off));
}

/* Could eval_bad_figure find a bad figure in r? A cheap test, true for
 * every r it would fault (and for some it would not), over r's 8-byte
 * words (word 0 the status, then a figure each) as bits, without a
 * branch per figure: a bad figure is negative (its sign bit, a double's
 * or an int64's), +inf, or a NaN the point keeps (its computed figures,
 * eval_kept). A word is odd when it is negative, or infinite or NaN
 * other than the quiet NaN eval_init writes (exponent all ones: adding
 * the exponent's lowest bit carries into the sign); then only the
 * figures the point keeps are read. */
_Static_assert(sizeof(result_t) % 8 == 0 && offsetof(result_t, iteration_time_s) == 8,
               "result_t: the status, then 8-byte figures");
static bool eval_maybe_bad(const point_t *p, const result_t *r)
{
    const double qnan = (double)NAN;
    uint64_t q, acc = 0;
    memcpy(&q, &qnan, sizeof q);
    const uint64_t exp_lsb = UINT64_C(1) << 52;
    const char *base = (const char *)r;
#pragma GCC unroll 8
    for (size_t i = 1; i < sizeof(result_t) / 8; i++) {
        uint64_t u;
        memcpy(&u, base + 8 * i, sizeof u);
        /* all ones when u is negative or its exponent all ones (the
         * sign of u + exp_lsb for u >= 0); then u ^ q is not 0 unless u
         * is the NaN eval_init writes */
        uint64_t special = 0 - ((((u + exp_lsb) | u) >> 63));
        acc |= (u ^ q) & special;
    }
    if (acc)
        return true;
    bool ok = r->status == STATUS_OK, mem = r->status == STATUS_INFEASIBLE_MEMORY;
    if (!ok && !mem)
        return false;
    for (const size_t *o = eval_computed(p); *o != EVAL_END; o++) {
        double v;
        memcpy(&v, base + *o, sizeof v);
        if (isnan(v) && (ok || eval_is_memory(*o)))
            return true;
    }
    return false;
}

/* The first figure of r that is bad, or NULL: a kept figure (eval_kept)
 * that is not finite, any other that is infinite (NaN there means "not
 * computed"), or any figure but the headroom negative beyond rounding. Figures that are
 * differences of sums (overlapped = comm - exposed) can come out a few
 * ulps below zero: a negative figure within 1e-9 of the iteration time
 * is rounding, not an error, and is kept as it is (the MAD-Max reference
 * itself prints comm_overlapped_s = -9.5e-12 s in its sample025, and
 * parity keeps such figures). */
const result_field *eval_bad_figure(const point_t *p, const result_t *r, status_code *why)
{
    if (!eval_maybe_bad(p, r))
        return NULL;
    double tol = isfinite(r->iteration_time_s) ? 1e-9 * fabs(r->iteration_time_s)
                                               : 0.0;
    /* the computed figures by offset: one pass, not one per field */
    bool comp[sizeof(result_t) / 8 + 1];
    memset(comp, 0, sizeof comp);
    for (const size_t *o = eval_computed(p); *o != EVAL_END; o++)
        comp[*o / 8] = true;
    for (size_t i = 0; i < result_nfields; i++) {
        const result_field *f = &result_fields[i];
        double v = result_get(r, f);
        if (v >= -tol && v < (double)INFINITY)
            continue; /* finite, not negative beyond rounding: most figures */
        if (isnan(v)) { /* "not computed", unless kept */
            if (f->type == RESULT_F64 && eval_kept(comp, r, f->offset)) {
                *why = STATUS_INVALID_NONFINITE;
                return f;
            }
            continue;
        }
        bool signed_fig = f->offset == EO(mem_headroom_bytes_per_device); /* < 0: over */
        if (isinf(v) || !signed_fig) { /* infinite, or negative beyond rounding */
            *why = v < -tol ? STATUS_INVALID_NEGATIVE : STATUS_INVALID_NONFINITE;
            return f;
        }
    }
    return NULL;
}

status_code eval_run(const point_t *p, engine *e, result_t *r, const char **where)
{
    eval_init(p, r);
    e->full = false;
    status_code rc = eval_registry[p->fidelity]->run(p, e, r);
    if (rc == STATUS_NOMEM || e->full) /* events past the reservation */
        return STATUS_NOMEM;
    if (!status_is_data(rc))
        return rc;
    r->status = (int32_t)rc;
    if (rc != STATUS_OK)
        eval_mask_infeasible(p, r);
    eval_derive(p, r);
    bound_derive(r);
    status_code why = STATUS_OK;
    const result_field *f = eval_bad_figure(p, r, &why);
    if (f) {
        int64_t gb = r->global_batch;
        memset(r, 0, sizeof *r);
        r->global_batch = gb;
        rc = why;
        r->status = (int32_t)rc;
        if (where)
            *where = f->name;
    }
    return rc;
}

status_code eval_point(const point_t *p, engine *e, result_t *r,
                       const char **where)
{
    status_code rc = eval_check(p, where);
    if (rc != STATUS_OK) {
        memset(r, 0, sizeof *r);
        return rc;
    }
    return eval_run(p, e, r, where); /* which initialises r */
}
