/*
 * pool.c - the prefill pool of a disaggregated deployment (disagg.c) as
 * a context of its own, built once per evaluation (sv_pool_prepare) from
 * its own keys: its hardware and devices, tp and pp, attention data
 * parallelism, the experts' ep x etp, its batch limit (max_seqs:
 * TensorRT-LLM's prefill workers run max_batch_size 1) and token budget
 * (K_p); what a band end moves (the facts, the KV transfer on the
 * network) is resolved per scenario (sv_pool_at).
 * A prefill step carries np = min(max_seqs_p, floor(K_p / ISL)) whole
 * prompts (at least one), or one prompt in n_c = ceil(ISL / K_p)
 * chunks; per replica:
 *   S    a prompt prefilled alone (chunks pipelined over pp stages);
 *   T    a step's service, n_c t(np): np prompts a T on np servers;
 *   mu   requests/s a replica prefills at full steps, at most one KV
 *        transfer at a time on its links: min(np / T, 1 / X).
 * KV transfer X: each prefill device sends its share of the prompt's KV
 * (ISL x its stage's KV bytes per token) to the decode devices, which
 * receive theirs: a point-to-point message on the topology (topo.h) of
 * the deployment: both pools in one row of scale-up domains when they
 * share the hardware (prefill devices first, the message crossing the
 * pool offset: NVLink inside an NVL72, the slower of the pools' NICs
 * between 8-GPU nodes), else across the scale-out network, the slower
 * side deciding.
 * Invariant: the pool's point, context and shapes are built once; no
 * uncertain fact moves them (its memory, its KV bytes per token, its
 * step's shape).
 */
#include "serve.h"

#include <math.h>
#include <string.h>

/* One side's message of `bytes` per device to the other pool when the
 * pools do not share scale-up domains: across its scale-out network. */
static double sv_pool_side(const topo_system_t *s, double bytes)
{
    topo_t t;
    const char *bad = NULL;
    int64_t dom = s->topo.level[0].span;
    if (topo_build(&t, &s->hw, 2 * dom, dom, s->nic_gbps_per_device * 1e9 / 8.0, 0, 1.0,
                   s->algo, &bad) != STATUS_OK)
        return -1.0;
    return topo_coll_time(&t, TOPO_P2P, 2, dom, bytes);
}

/* A system's NIC, bytes/s one direction: its own, else its hardware's. */
static double sv_pool_nic(const topo_system_t *s)
{
    return s->nic_gbps_per_device > 0.0 ? s->nic_gbps_per_device * 1e9 / 8.0
                                        : s->hw.nic_bytes_per_s;
}

/* KV transfer of one request: bp bytes from each prefill device, bd
 * into each decode device (network figures times the scenario's). Both
 * pools in one row of the decode system's scale-up domains when they
 * share the hardware, the slower of their NICs between the domains
 * (issue 29: the decode system's was taken, a pool's own NIC ignored). */
static double sv_pool_transfer(const dt_ctx *c, double bp, double bd)
{
    const topo_system_t *ps = &c->p->prefill.system, *ds = &c->p->system;
    double n = c->f.net;
    if (strcmp(ps->hw.name, ds->hw.name) == 0) {
        topo_t t;
        const char *bad = NULL;
        if (topo_build(&t, &ds->hw, ps->devices + ds->devices, ds->devices_per_node,
                       dt_min(sv_pool_nic(ps), sv_pool_nic(ds)), 0, 1.0, ds->algo, &bad) ==
            STATUS_OK)
            return topo_coll_time(&t, TOPO_P2P, 2, ps->devices, dt_max(bp, bd) / n);
    }
    return dt_max(sv_pool_side(ps, bp / n), sv_pool_side(ds, bd / n));
}

status_code sv_pool_prepare(const dt_ctx *c, const sv_load *w, sv_pool *o)
{
    const point_prefill *f = &c->p->prefill;
    point_t *q = &o->p;
    *q = *c->p;
    q->prefill.on = false;
    q->system = f->system;
    task_detailed_t *t = &q->task.detailed;
    t->tp = f->tp;
    t->pp = f->pp;
    t->cp = 1;
    t->dp = f->system.devices / (f->tp * f->pp);
    t->attn_dp = f->attn_dp;
    t->ep = f->ep > 0 ? f->ep : 1;
    t->etp = eval_prefill_etp(f);
    t->max_seqs = f->max_seqs;
    t->token_budget = f->token_budget;
    t->vpp = t->shard_degree = 0;
    t->layout = 0;
    t->micro_batch = 1;
    t->global_batch = 0;
    t->decode_tokens = 1; /* it holds prompts until they are sent */
    t->spec_tokens = 0;
    result_t tmp;
    status_code rc = dt_setup(q, &o->v, &tmp);
    if (rc != STATUS_OK)
        return rc;
    const dt_ctx *pc = &o->v.c;
    if (!o->v.mem.kv_fits) /* its capacity, from the setup's memory */
        return STATUS_INFEASIBLE_MEMORY;
    sv_model_shape(pc, &o->v.st, &o->k);
    double adp = dt_kv_attn_dp(pc), K = dt_kv_budget(pc) * adp;
    o->nc = w->isl <= K ? 1.0 : ceil(w->isl / K);
    o->len = w->isl / o->nc;
    o->ctx = o->nc > 1.0 ? 0.5 * (w->isl - o->len) : 0.0;
    o->np = o->nc > 1.0 ? 1.0 : dt_max(1.0, dt_min(dt_kv_max_seqs(pc) * adp, floor(K / w->isl)));
    o->dev = (double)(f->tp * f->pp);
    o->replicas = f->rate_matched ? 0.0 : (double)t->dp;
    o->peak = pc->hw->peak_flops[pc->dt] > 0 ? pc->hw->peak_flops[pc->dt]
                                              : pc->hw->peak_flops[HW_BF16];
    o->scenario = -1;
    return STATUS_OK;
}

status_code sv_pool_at(const dt_ctx *c, const dt_kv *kvd, const sv_load *w, stack_scenario sc,
                       sv_pool *o)
{
    if (o->scenario == (int)sc)
        return STATUS_OK;
    dt_ctx *pc = &o->v.c;
    if (pc->scenario != sc)
        dt_facts_resolve(pc, sc);
    sv_model_facts(pc, sc, &o->k);
    const sv_model *k = &o->k;
    double t1 = sv_step(k, 1.0, o->len, o->ctx, 0.0, 0.0, NULL);
    o->S = (o->nc + k->pp - 1.0) * t1 + (k->pp - 1.0) * k->p2p_tok;
    o->T = o->nc * sv_step(k, o->np, o->len, o->ctx, 0.0, 0.0, NULL);
    o->xfer = sv_pool_transfer(c, w->isl * o->v.mem.kv.tok_bytes, w->isl * kvd->tok_bytes);
    if (o->xfer < 0.0)
        return STATUS_INFEASIBLE_SHAPE; /* pools that cannot be joined */
    o->mu = o->xfer > 0.0 ? dt_min(o->np / o->T, 1.0 / o->xfer) : o->np / o->T;
    double L = k->nd + k->nm;
    o->exposed = c->p->prefill.layerwise && L > 1.0
                     ? dt_max(o->xfer / L, o->xfer - o->S * (1.0 - 1.0 / L))
                     : o->xfer;
    o->scenario = (int)sc;
    return STATUS_OK;
}

double sv_pool_wait(const sv_pool *o, double x, double rho)
{
    /* Allen-Cunneen's M/G/m with Sakasegawa's P(wait): m = x np
     * servers, each a step's service T; c_a^2 = 1 (arrivals at random),
     * c_s^2 = 0 (a fixed service) */
    if (!(rho < 1.0))
        return INFINITY;
    double m = dt_max(1.0, x * o->np);
    return pow(rho, sqrt(2.0 * (m + 1.0)) - 1.0) / (m * (1.0 - rho)) * 0.5 * o->T;
}
