/*
 * eval.h - the cost model's entry point: a design point in, figures out.
 *
 * A point is a fidelity, a model, a cluster and a task, all plain values.
 * Fidelities are entries of a registry (struct of function pointers, one
 * static instance per fidelity file), selected by name or enum:
 *   madmax   - the MAD-Max reference's first-order model, figure for
 *              figure (see madmax.c).
 *   detailed - per-operation roofline with size-dependent efficiency,
 *              alpha-beta collectives on multi-level topologies, TP/SP,
 *              PP schedules, CP, EP, DP with ZeRO 0-3 and overlap, memory
 *              capacity (see cost/detailed/); reads model.d, task.detailed
 *              and system (hardware and topology) instead of cluster.
 * eval_point() checks the point against the fidelity's rules, runs it on
 * the caller's engine (reused across calls, so a sweep allocates nothing
 * per point) and fills a result_t: the fidelity's figures (NaN for those
 * it does not compute), then the memory verdict, per-device throughput,
 * energy and cost derived from them (cost/energy.h) for either fidelity.
 *
 * Return value: STATUS_OK or STATUS_INFEASIBLE_* (the point was evaluated
 * or found infeasible: data, written to r->status), or STATUS_INVALID_*
 * (the point breaks a rule; *where names the part at fault, e.g. "dense
 * plan"; STATUS_INVALID_NONFINITE/NEGATIVE: a figure, see eval_run), or
 * STATUS_NOMEM.
 */
#ifndef MADSWEEP_EVAL_H
#define MADSWEEP_EVAL_H

#include "cluster.h"
#include "engine.h"
#include "model.h"
#include "result.h"
#include "stack.h"
#include "status.h"
#include "task.h"
#include "topo.h"

#define COST_MODEL_VERSION "madmax-1"

typedef enum eval_fidelity {
    EVAL_MADMAX = 0,
    EVAL_DETAILED = 1,
    EVAL_NFIDELITIES = 2
} eval_fidelity;

/* Detailed serving with prefill/decode disaggregation
 * (cost/detailed/serve/disagg.c): the prefill pool of a point whose
 * system and task are the decode pool. Its replicas of tp x pp devices
 * prefill the prompts and send their KV caches to the decode replicas
 * over the network; `on` false: the point serves colocated. */
typedef struct point_prefill {
    bool on;
    bool rate_matched;    /* devices: as many replicas as the decode pool's rate needs */
    bool layerwise;       /* KV sent layer by layer during the prefill (else after it) */
    int64_t tp, pp;       /* a prefill replica's degrees */
    /* a prefill replica's own layout and limits (0: none / the stack's):
     * attention data parallelism, the experts' ep x etp, its batch limit
     * (TensorRT-LLM max_batch_size, vLLM max_num_seqs, SGLang
     * max_running_requests) and token budget per step */
    int64_t attn_dp, ep, etp, max_seqs, token_budget;
    topo_system_t system; /* its hardware and network; devices: the pool's (rate-matched:
                             one replica's) */
} point_prefill;

/* A prefill replica's expert tensor parallelism: its etp, else with ep
 * > 1 the experts spread over the replica's tp devices (tp / ep of them
 * per expert, AIConfigurator's moe_tp x moe_ep = tp), else tp. */
static inline int64_t eval_prefill_etp(const point_prefill *f)
{
    if (f->etp > 0)
        return f->etp;
    return f->ep > 1 && f->tp % f->ep == 0 ? f->tp / f->ep : f->ep > 1 ? 1 : f->tp;
}

/* A prefill pool's network from the decode system s: its collective
 * algorithm always; on the system's own hardware (own_hw: the pool
 * names none) that hardware and, where the pool states none, the
 * system's scale-up domain and NIC, as the pool's nodes are the
 * system's (issue 29: a system's devices_per_node and NIC were left at
 * the hardware's defaults for the pool). The caller derives the pool's
 * topology (topo_system_derive). */
static inline void eval_prefill_network(point_prefill *f, const topo_system_t *s, bool own_hw)
{
    f->system.algo = s->algo;
    if (!own_hw)
        return;
    f->system.hw = s->hw;
    if (f->system.devices_per_node == 0)
        f->system.devices_per_node = s->devices_per_node;
    if (!(f->system.nic_gbps_per_device > 0.0))
        f->system.nic_gbps_per_device = s->nic_gbps_per_device;
}

typedef struct point_t {
    eval_fidelity fidelity;
    model_t model;     /* derived fields filled */
    cluster_t cluster; /* derived fields filled */
    task_t task;
    topo_system_t system; /* detailed fidelity: hardware and topology */
    stack_desc stack;        /* detailed fidelity: the software stack */
    point_prefill prefill;   /* detailed serving: a disaggregated prefill pool */
} point_t;

typedef struct eval_ops {
    const char *name;
    const char *version;
    /* Rules of the fidelity; *where names the part at fault. */
    status_code (*check)(const point_t *p, const char **where);
    /* Evaluates a checked point. */
    status_code (*run)(const point_t *p, engine *e, result_t *r);
    /* `auto` strategies for sweeps (NULL when the fidelity has none):
     * auto_count() is the number of candidate strategies, a constant of
     * the fidelity (the candidates' numbering, /axes/strategy);
     * auto_apply() writes candidate i and the global batch into p->task
     * (plans and local batches) and returns STATUS_OK, or the code of the
     * rule that candidate i breaks for p's model, cluster and stack (the
     * sweep does not enumerate such points and counts them by code;
     * worker/space.h). */
    int64_t (*auto_count)(void);
    status_code (*auto_apply)(point_t *p, int64_t i, int64_t global_batch);
} eval_ops;

/* Registry lookups; NULL when unknown. */
const eval_ops *eval_ops_of(eval_fidelity f);
int eval_fidelity_parse(const char *name);
const char *eval_fidelity_name(eval_fidelity f);

/* Checks without evaluating (cheap: used by sweep enumeration). */
status_code eval_check(const point_t *p, const char **where);

/* Checks and evaluates; see the header comment for the return value. */
status_code eval_point(const point_t *p, engine *e, result_t *r,
                       const char **where);

/* Evaluates a point already checked (sweeps check every point in their
 * enumeration): the fidelity's run between the NaN initialisation of the
 * figures it does not compute and the derived figures (memory verdict,
 * per-device throughput, energy and cost; see eval.c), then the figure
 * check: a computed figure (eval_computed, the ones an infeasible point
 * keeps) or a derived one that is infinite, or negative beyond rounding
 * (below -1e-9 x the iteration time), or a computed figure that is NaN,
 * makes the point STATUS_INVALID_NONFINITE or STATUS_INVALID_NEGATIVE
 * (inputs that passed their range checks but combine badly), with
 * *where (when not NULL) naming the figure and every figure zeroed, so
 * that no such figure reaches a report or a sweep row. A figure that is
 * NaN because the fidelity does not compute it is not checked. Same
 * return value as eval_point; r->status is set unless STATUS_NOMEM (also
 * returned when the engine dropped events past its reservation). */
status_code eval_run(const point_t *p, engine *e, result_t *r, const char **where);

/* eval_run's figure check on r (after the run and the derived figures):
 * the first bad figure, with *why its status, or NULL. */
const result_field *eval_bad_figure(const point_t *p, const result_t *r, status_code *why);

/* The offsets of result_t's integer figures (the counts), ended by
 * (size_t)-1: every RESULT_I64 field of result_fields[], no other. */
const size_t *eval_int_figures(void);

/* Offsets in result_t of the figures the point's fidelity computes for
 * its model and task kind, ending with (size_t)-1. */
const size_t *eval_computed(const point_t *p);

/* Devices of the point's system (either fidelity). */
int64_t eval_devices(const point_t *p);

#endif
