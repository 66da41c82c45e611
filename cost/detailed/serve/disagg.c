/*
 * disagg.c - prefill/decode disaggregation
 * (docs/serving.md, "Prefill/decode disaggregation"; DistServe, OSDI'24; Splitwise,
 * ISCA'24; the P/D modes of vLLM, SGLang and TensorRT-LLM): prompts are
 * prefilled on one pool of replicas, their KV caches sent over the
 * network to a second pool that only decodes, possibly on other hardware.
 * The point's system and task are the decode pool; p->prefill names the
 * prefill pool (hardware, devices, tp, pp).
 *
 * Prefill pool, x replicas: steps of prompt chunks under the engine's
 * token budget K (prompts packed floor(K / ISL) to a step, or a long
 * prompt in ceil(ISL / K) chunks), costed by step.c on the pool's
 * own hardware and degrees:
 *   S    a prompt prefilled alone (chunks pipelined over pp stages);
 *   mu_p requests/s a replica prefills at full steps, at most one KV
 *        transfer at a time on its links: min(np / (n_c t_step), 1 / X).
 * KV transfer X: each prefill device sends its share of the prompt's KV
 * (ISL x its stage's KV bytes per token) to the decode devices, which
 * receive theirs: a point-to-point message on the topology (topo.h) of
 * the deployment: both pools in one row of scale-up domains when they
 * share the hardware (prefill devices first, the message crossing the
 * pool offset: NVLink inside an NVL72, the NIC between 8-GPU nodes),
 * else across the scale-out network, the slower side deciding. The
 * engines send after the prefill (vLLM's NIXL connector, SGLang's
 * Mooncake/NIXL backends, TensorRT-LLM's cache transceiver): TTFT adds X;
 * `kv_transfer = "layerwise"` (DistServe, Splitwise) overlaps it with the
 * prefill's layers: max(X / L, X - S (1 - 1 / L)) exposed.
 * Decode pool, y replicas of d decoding requests each: decode-only steps
 * (no prefill chunk stalls them), TPOT = t_dec(d), rate lambda_d = y d /
 * ((OSL - 1) TPOT) (the first token came from the prefill).
 * Rate matching: the deployment serves lambda = min(x mu_p, lambda_d);
 * the pool with the lower rate binds. The replicas the prefill pool
 * needs, x* = ceil(lambda_d / (rho_max mu_p)), with rho_max the
 * prefill's utilisation whose M/D/1 wait keeps TTFT within the SLA
 * (1 without one); prefill devices = "auto" evaluates with x*.
 * TTFT = host + S + exposed X + W: W the M/D/1 wait rho / (2 mu_p (1 -
 * rho)), rho = lambda / (x mu_p), when the decode pool binds (at most its
 * closed loop's population over the rate); when the prefill pool binds,
 * the decode pool runs at lambda (d solved as steady.c solves a
 * request rate) and the requests it does not hold wait for prefill
 * (Little: y (d - d_run) / lambda). Percentiles as steady.c's,
 * model estimates. A request rate is served open loop; past either
 * pool's capacity the deployment runs at the KV limit, saturated.
 * Invariant: the prefill pool is a context of its own (its hardware,
 * degrees and memory), built under the decode pool's scenario.
 */
#include "serve.h"

#include <math.h>
#include <string.h>

/* The prefill pool under the evaluation's scenario. */
typedef struct sv_prefill_pool {
    sv_model k;
    double S;        /* a prompt prefilled alone, s */
    double mu;       /* requests/s of one replica at full steps and links */
    double xfer;     /* KV transfer of one request, s */
    double exposed;  /* of it in TTFT */
    double replicas; /* given (0: rate-matched) */
    double dev;      /* devices per replica */
    double peak;     /* math peak of a device (mfu) */
} sv_prefill_pool;

/* One side's message of `bytes` per device to the other pool when the
 * pools do not share scale-up domains: across its scale-out network. */
static double sv_disagg_side(const topo_system_t *s, double bytes)
{
    topo_t t;
    const char *bad = NULL;
    int64_t dom = s->topo.level[0].span;
    if (topo_build(&t, &s->hw, 2 * dom, dom, s->nic_gbps_per_device * 1e9 / 8.0, 0, 1.0,
                   s->algo, &bad) != STATUS_OK)
        return -1.0;
    return topo_coll_time(&t, TOPO_P2P, 2, dom, bytes);
}

/* KV transfer of one request: bp bytes from each prefill device, bd
 * into each decode device (network figures times the scenario's). */
static double sv_disagg_transfer(const dt_ctx *c, double bp, double bd)
{
    const topo_system_t *ps = &c->p->prefill.system, *ds = &c->p->system;
    double n = c->f.net;
    if (strcmp(ps->hw.name, ds->hw.name) == 0) {
        topo_t t;
        const char *bad = NULL;
        if (topo_build(&t, &ds->hw, ps->devices + ds->devices, ds->devices_per_node,
                       ds->nic_gbps_per_device * 1e9 / 8.0, 0, 1.0, ds->algo, &bad) ==
            STATUS_OK)
            return topo_coll_time(&t, TOPO_P2P, 2, ps->devices, dt_max(bp, bd) / n);
    }
    return dt_max(sv_disagg_side(ps, bp / n), sv_disagg_side(ds, bd / n));
}

/* The prefill pool's context (its hardware and degrees; one replica's
 * memory for a prompt), costs and transfer. */
static status_code sv_disagg_pool(const dt_ctx *c, const sv_load *w, const dt_kv *kvd, sv_prefill_pool *o)
{
    const point_prefill *f = &c->p->prefill;
    point_t q = *c->p;
    q.prefill.on = false;
    q.system = f->system;
    task_detailed_t *t = &q.task.detailed;
    t->tp = f->tp;
    t->pp = f->pp;
    t->cp = 1;
    t->dp = f->system.devices / (f->tp * f->pp);
    t->ep = c->d.ep > 1 && t->dp % c->d.ep == 0 ? c->d.ep : 1;
    t->etp = t->vpp = t->shard_degree = 0;
    t->layout = 0;
    t->micro_batch = 1;
    t->global_batch = 0;
    t->decode_tokens = 1; /* it holds prompts until they are sent */
    t->spec_tokens = 0;
    dt_eval pv; /* the pool's evaluation: its context, stages, memory */
    result_t tmp;
    status_code rc = dt_setup(&q, &pv, &tmp);
    if (rc != STATUS_OK)
        return rc;
    dt_ctx *pc = &pv.c;
    dt_facts_resolve(pc, c->scenario);
    if (!pv.mem.kv_fits) /* its capacity, from the setup's memory */
        return STATUS_INFEASIBLE_MEMORY;
    const dt_kv *kv = &pv.mem.kv;
    sv_model_init(pc, &pv.st, c->scenario, &o->k);
    const sv_model *k = &o->k;
    double isl = w->isl, K = w->K;
    double nc = isl <= K ? 1.0 : ceil(isl / K);
    double len = isl / nc, ctx = nc > 1.0 ? 0.5 * (isl - len) : 0.0;
    double np = nc > 1.0 ? 1.0 : floor(K / isl);
    double t1 = sv_step(k, 1.0, len, ctx, 0.0, 0.0, NULL);
    o->S = (nc + k->pp - 1.0) * t1 + (k->pp - 1.0) * k->p2p_tok;
    double mu = np / (nc * sv_step(k, np, len, ctx, 0.0, 0.0, NULL));
    o->xfer = sv_disagg_transfer(c, isl * kv->tok_bytes, isl * kvd->tok_bytes);
    if (o->xfer < 0.0)
        return STATUS_INFEASIBLE_SHAPE; /* pools that cannot be joined */
    o->mu = o->xfer > 0.0 ? dt_min(mu, 1.0 / o->xfer) : mu;
    double L = k->nd + k->nm;
    o->exposed = f->layerwise && L > 1.0 ? dt_max(o->xfer / L, o->xfer - o->S * (1.0 - 1.0 / L))
                                         : o->xfer;
    o->dev = (double)(f->tp * f->pp);
    o->replicas = f->rate_matched ? 0.0 : (double)t->dp;
    o->peak = pc->hw->peak_flops[pc->dt] > 0 ? pc->hw->peak_flops[pc->dt]
                                              : pc->hw->peak_flops[HW_BF16];
    return STATUS_OK;
}

/* The deployment at d decoding requests per decode replica. */
typedef struct sv_disagg_state {
    sv_state s;
    double lam_p, lam_d; /* the pools' request rates: capacity, at d */
    double matched;      /* prefill replicas the decode pool's rate needs */
    double x;            /* prefill replicas evaluated */
} sv_disagg_state;

/* Prefill replicas for a rate lam: the utilisation whose wait keeps
 * TTFT within the SLA (W = rho / (2 mu (1 - rho)) <= B). */
static double sv_disagg_match(const dt_ctx *c, const sv_prefill_pool *pf, double lam)
{
    double rho = 1.0, B = c->t->ttft_max_s - (pf->k.host_req + pf->S + pf->exposed);
    if (c->t->ttft_max_s > 0.0 && B > 0.0)
        rho = 2.0 * B * pf->mu / (1.0 + 2.0 * B * pf->mu);
    double x = ceil(lam / (rho * pf->mu) - 1e-9);
    return x > 1.0 ? x : 1.0;
}

/* Decoding requests per replica at l requests/s per replica: d = l
 * (OSL - 1) t_dec(d), t_dec a secant re-taken at the solution (as
 * steady.c solves a rate); false when unstable. */
static bool sv_disagg_decode_at(const sv_model *k, const sv_load *w, double l, double *d, double *tpot)
{
    double cd = w->cd, o1 = w->osl - 1.0, dd = *d;
    for (int i = 0; i < 3; i++) {
        double d0 = dd > 1.0 ? dd : 1.0, d1 = 2.0 * d0;
        double t0 = sv_tpot(k, d0, cd), t1 = sv_tpot(k, d1, cd);
        double b = (t1 - t0) / (d1 - d0), a = t0 - b * d0;
        double den = 1.0 - l * o1 * b;
        if (den <= 0.0)
            return false;
        *tpot = a / den;
        dd = l * o1 * *tpot;
    }
    *d = dd;
    return true;
}

/* TTFT and its percentiles at rho of the prefill pool, the wait w. */
static void sv_disagg_ttft(const sv_prefill_pool *pf, double rho, double wq, sv_state *s)
{
    sv_ttft_queue(pf->k.host_req + pf->S + pf->exposed, rho, wq, s);
}

/* Closed loop: d decoding requests per decode replica. */
static void sv_disagg_closed_loop(const dt_ctx *c, const sv_model *k, const sv_load *w,
                                  const sv_prefill_pool *pf, double y, double d, sv_disagg_state *g)
{
    double o1 = w->osl - 1.0;
    double tpot = sv_tpot(k, d, w->cd);
    memset(g, 0, sizeof *g);
    g->lam_d = y * d / (o1 * tpot);
    g->matched = sv_disagg_match(c, pf, g->lam_d);
    g->x = pf->replicas > 0.0 ? pf->replicas : g->matched;
    g->lam_p = g->x * pf->mu;
    double lam = dt_min(g->lam_p, g->lam_d), run = d, wq = 0.0;
    double rho = lam / g->lam_p;
    if (g->lam_p >= g->lam_d) {
        /* the decode pool binds: an M/D/1 wait, at most its loop's */
        wq = rho < 1.0 ? dt_min(rho / (2.0 * pf->mu * (1.0 - rho)), o1 * tpot) : o1 * tpot;
    } else {
        /* the prefill pool binds: the decode pool runs below d, the
         * requests it does not hold wait for prefill */
        if (!sv_disagg_decode_at(k, w, lam / y, &run, &tpot) || run > d) {
            run = d;
            tpot = sv_tpot(k, d, w->cd);
        }
        double base = pf->k.host_req + pf->S + pf->exposed;
        wq = dt_max(0.0, y * (d - run) / lam - base);
    }
    sv_disagg_ttft(pf, rho, wq, &g->s);
    g->s.conc = run;
    g->s.tpot = tpot;
    g->s.itl_p50 = g->s.itl_p99 = tpot; /* decode-only steps */
    g->s.e2e = g->s.ttft + o1 * tpot;
    g->s.req_s = lam / y;
}

/* Open loop at lam requests/s; false when past either pool's capacity. */
static bool sv_disagg_open_loop(const dt_ctx *c, const sv_model *k, const sv_load *w,
                                const sv_prefill_pool *pf, double y, double cmax, double lam,
                                sv_disagg_state *g)
{
    double o1 = w->osl - 1.0, d = 1.0, tpot = 0.0;
    memset(g, 0, sizeof *g);
    g->lam_d = y * cmax / (o1 * sv_tpot(k, cmax, w->cd));
    g->matched = sv_disagg_match(c, pf, lam);
    g->x = pf->replicas > 0.0 ? pf->replicas : g->matched;
    g->lam_p = g->x * pf->mu;
    if (lam >= g->lam_p || !sv_disagg_decode_at(k, w, lam / y, &d, &tpot) || d > cmax)
        return false;
    double rho = lam / g->lam_p;
    sv_disagg_ttft(pf, rho, rho / (2.0 * pf->mu * (1.0 - rho)), &g->s);
    g->s.conc = d;
    g->s.tpot = tpot;
    g->s.itl_p50 = g->s.itl_p99 = tpot;
    g->s.e2e = g->s.ttft + o1 * tpot;
    g->s.req_s = lam / y;
    return true;
}

/* The deployment under the task's load. */
static void sv_disagg_solve(const dt_ctx *c, const sv_model *k, const sv_load *w,
                            const sv_prefill_pool *pf, int64_t cmax, sv_disagg_state *g)
{
    const task_detailed_t *t = c->t;
    double y = (double)c->d.dp;
    if (t->request_rate > 0.0) {
        if (!sv_disagg_open_loop(c, k, w, pf, y, (double)cmax, t->request_rate, g)) {
            sv_disagg_closed_loop(c, k, w, pf, y, (double)cmax, g);
            g->s.saturated = true;
        }
        return;
    }
    if (t->concurrency == TASK_CONC_SLA) {
        int64_t lo = 1, hi = cmax;
        sv_disagg_closed_loop(c, k, w, pf, y, (double)hi, g);
        if (sv_sla_met(c, &g->s))
            return;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            sv_disagg_closed_loop(c, k, w, pf, y, (double)mid, g);
            if (sv_sla_met(c, &g->s))
                lo = mid;
            else
                hi = mid;
        }
        sv_disagg_closed_loop(c, k, w, pf, y, (double)lo, g);
        return;
    }
    double d = t->concurrency == TASK_CONC_MAX ? (double)cmax
               : t->concurrency > 0            ? ceil((double)t->concurrency / y)
                                               : (double)c->d.mb;
    sv_disagg_closed_loop(c, k, w, pf, y, d < (double)cmax ? d : (double)cmax, g);
}

status_code sv_disagg(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r)
{
    const dt_kv *kv = &mem->kv;
    sv_model k;
    sv_load w;
    if (!sv_model_begin(c, st, mem, &k, &w))
        return STATUS_INFEASIBLE_MEMORY;
    const model_t *m = c->m;
    sv_prefill_pool pf;
    status_code rc = sv_disagg_pool(c, &w, kv, &pf);
    if (rc != STATUS_OK)
        return rc;
    sv_disagg_state g;
    sv_disagg_solve(c, &k, &w, &pf, kv->cmax, &g);
    double dd = (double)c->p->system.devices, pd = g.x * pf.dev;
    sv_result_write(c, &k, kv, &w, &g.s, dd + pd, r);
    double lam = g.s.req_s * (double)c->d.dp;
    int64_t n = (int64_t)llround(lam * g.s.e2e); /* in flight, prefill included */
    r->global_batch = r->concurrency_resolved = n > 0 ? n : 1;
    double peak = c->hw->peak_flops[c->dt] > 0 ? c->hw->peak_flops[c->dt]
                                               : c->hw->peak_flops[HW_BF16];
    double fl = 2.0 * c->model_flops / (double)m->seq_len;
    r->mfu = lam * (w.isl + w.osl) * fl / (dd * peak + pd * pf.peak);
    r->prefill_devices = pd;
    r->prefill_replicas_matched = g.matched;
    r->prefill_capacity_requests_per_s = g.lam_p;
    r->decode_capacity_requests_per_s = g.lam_d;
    r->prefill_decode_rate_ratio = g.lam_p / g.lam_d;
    r->kv_transfer_s = pf.xfer;
    r->kv_transfer_exposed_s = pf.exposed;
    return STATUS_OK;
}
