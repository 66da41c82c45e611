/*
 * disagg.c - prefill/decode disaggregation
 * (docs/serving.md, "Prefill/decode disaggregation"; DistServe, OSDI'24; Splitwise,
 * ISCA'24; the P/D modes of vLLM, SGLang and TensorRT-LLM): prompts are
 * prefilled on one pool of replicas, their KV caches sent over the
 * network to a second pool that only decodes, possibly on other hardware.
 * The point's system and task are the decode pool; p->prefill names the
 * prefill pool (hardware, devices, tp, pp).
 *
 * Prefill pool, x replicas: a context of its own (pool.c: its hardware,
 * degrees, attention DP, experts, batch limit and budget), prepared once;
 * per replica S (a prompt alone), T (a step's service of np prompts), mu
 * (requests/s at full steps and links) and the KV transfer X on the
 * topology. The engines send after the prefill (vLLM's NIXL connector,
 * SGLang's Mooncake/NIXL backends, TensorRT-LLM's cache transceiver):
 * TTFT adds X; `kv_transfer = "layerwise"` (DistServe, Splitwise)
 * overlaps it with the prefill's layers: max(X / L, X - S (1 - 1 / L))
 * exposed.
 * Decode pool, y replicas of d decoding requests each: decode-only steps
 * (no prefill chunk stalls them), TPOT = t_dec(d), rate lambda_d = y d /
 * ((OSL - 1) TPOT) (the first token came from the prefill).
 * Rate matching: the deployment serves lambda = min(x mu_p, lambda_d);
 * the pool with the lower rate binds. The replicas the prefill pool
 * needs, x* = ceil(lambda_d / (rho_max mu_p)), with rho_max the
 * prefill's utilisation whose M/D/1 wait keeps TTFT within the SLA
 * (1 without one); prefill devices = "auto" evaluates with x*.
 * TTFT = host + W + S + exposed X + the decode step in flight (and the
 * next one an overlap scheduler has formed): W Allen-Cunneen's wait of
 * the x np prefill servers at rho = lambda / (x mu_p) (pool.c), when
 * the decode pool binds (at most its closed loop's population over the
 * rate); when the prefill pool binds,
 * the decode pool runs at lambda (d solved as steady.c solves a
 * request rate) and the requests it does not hold wait for prefill
 * (Little: y (d - d_run) / lambda). A concurrency above the decode
 * pool's KV limit C_max runs the loop at C_max, the others waiting for
 * a slot (Little: (d - C_max) / req_s more before the first token, as
 * ttft.c's colocated loop). Percentiles as steady.c's,
 * model estimates. A request rate is served open loop; past either
 * pool's capacity the deployment runs at the KV limit, saturated.
 * Invariant: the prefill pool is a context of its own (its hardware,
 * degrees and memory), built once and resolved under the decode pool's
 * scenario.
 */
#include "serve.h"

#include <math.h>
#include <string.h>

/* The deployment at d decoding requests per decode replica. */
typedef struct sv_disagg_state {
    sv_state s;
    double lam_p, lam_d; /* the pools' request rates: capacity, at d */
    double matched;      /* prefill replicas the decode pool's rate needs */
    double x;            /* prefill replicas evaluated */
} sv_disagg_state;

/* Prefill replicas for a rate lam: the fewest at rho < 1 whose wait
 * (sv_pool_wait) keeps TTFT within the SLA. */
static double sv_disagg_match(const dt_ctx *c, const sv_pool *pf, double lam)
{
    double B = c->t->ttft_max_s - (pf->k.host_req + pf->S + pf->exposed);
    double x = ceil(lam / pf->mu - 1e-9);
    x = x > 1.0 ? x : 1.0;
    if (!(c->t->ttft_max_s > 0.0 && B > 0.0))
        return x;
    /* the fewest replicas whose wait keeps TTFT within the SLA */
    for (int i = 0; i < 64 && sv_pool_wait(pf, x, lam / (x * pf->mu)) > B; i++)
        x += 1.0;
    return x;
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

/* The decode pool's balance at d: d - l (OSL - 1) t_dec(d) (sv_bisect's f). */
typedef struct sv_disagg_arg {
    const sv_model *k;
    const sv_load *w;
    double l;
} sv_disagg_arg;

static double sv_disagg_balance(const void *arg, double d)
{
    const sv_disagg_arg *a = arg;
    return d - a->l * (a->w->osl - 1.0) * sv_tpot(a->k, d, a->w->cd);
}

/* As sv_disagg_decode_at, and where its secant fails (a step cost rising
 * steeply at small batches: MoE experts touched, window layers), the
 * balance bisected on [1, cap] (sv_bisect, as steady.c's open loop;
 * issue 29: gpt-oss-120b's decode pool at 5 requests/s was reported at
 * its capacity, 26.7); false when the pool cannot keep up below cap. */
static bool sv_disagg_decode_solve(const sv_model *k, const sv_load *w, double l, double cap,
                                   double *d, double *tpot)
{
    if (sv_disagg_decode_at(k, w, l, d, tpot) && *d <= cap)
        return true;
    sv_disagg_arg a = {k, w, l};
    double x = w->osl > 1.0 ? sv_bisect(sv_disagg_balance, &a, cap) : -1.0;
    if (x < 0.0)
        return false;
    *d = x;
    *tpot = sv_tpot(k, x, w->cd);
    return true;
}

/* What every request's first token takes: the front end, its prompt
 * alone, the exposed transfer, the decode step in flight (t_dec, and
 * the next under an overlap scheduler) that it joins. */
static double sv_disagg_base(const sv_model *k, const sv_pool *pf, double tpot)
{
    return pf->k.host_req + pf->S + pf->exposed + (0.5 + k->overlap) * tpot;
}

/* TTFT and its percentiles at rho of the prefill pool, the wait w. */
static void sv_disagg_ttft(const sv_model *k, const sv_pool *pf, double tpot, double rho,
                           double wq, sv_state *s)
{
    sv_ttft_queue(sv_disagg_base(k, pf, tpot), rho, wq, s);
}

/* Closed loop: d decoding requests per decode replica. */
static void sv_disagg_closed_loop(const dt_ctx *c, const sv_model *k, const sv_load *w,
                                  const sv_pool *pf, double y, double d, sv_disagg_state *g)
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
        wq = dt_min(sv_pool_wait(pf, g->x, rho), o1 * tpot);
    } else {
        /* the prefill pool binds: the decode pool runs below d, the
         * requests it does not hold wait for prefill */
        if (!sv_disagg_decode_solve(k, w, lam / y, d, &run, &tpot)) {
            run = d;
            tpot = sv_tpot(k, d, w->cd);
        }
        wq = dt_max(0.0, y * (d - run) / lam - sv_disagg_base(k, pf, tpot));
    }
    sv_disagg_ttft(k, pf, tpot, rho, wq, &g->s);
    g->s.conc = run;
    g->s.tpot = tpot;
    g->s.itl_p50 = g->s.itl_p99 = tpot; /* decode-only steps */
    g->s.e2e = g->s.ttft + o1 * tpot;
    g->s.req_s = lam / y;
}

/* Open loop at lam requests/s; false when past either pool's capacity. */
static bool sv_disagg_open_loop(const dt_ctx *c, const sv_model *k, const sv_load *w,
                                const sv_pool *pf, double y, double cmax, double lam,
                                sv_disagg_state *g)
{
    double o1 = w->osl - 1.0, d = 1.0, tpot = 0.0;
    memset(g, 0, sizeof *g);
    g->lam_d = y * cmax / (o1 * sv_tpot(k, cmax, w->cd));
    g->matched = sv_disagg_match(c, pf, lam);
    g->x = pf->replicas > 0.0 ? pf->replicas : g->matched;
    g->lam_p = g->x * pf->mu;
    if (lam >= g->lam_p || !sv_disagg_decode_solve(k, w, lam / y, cmax, &d, &tpot))
        return false;
    double rho = lam / g->lam_p;
    sv_disagg_ttft(k, pf, tpot, rho, sv_pool_wait(pf, g->x, rho), &g->s);
    g->s.conc = d;
    g->s.tpot = tpot;
    g->s.itl_p50 = g->s.itl_p99 = tpot;
    g->s.e2e = g->s.ttft + o1 * tpot;
    g->s.req_s = lam / y;
    return true;
}

/* The deployment under the task's load. */
static void sv_disagg_solve(const dt_ctx *c, const sv_model *k, const sv_load *w,
                            const sv_pool *pf, int64_t cmax, sv_disagg_state *g)
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
    /* above the decode pool's KV limit the others wait for a slot, one
     * freeing every 1 / req_s (Little), as a colocated loop's do */
    if (d > (double)cmax)
        sv_slot_wait(w, (d - (double)cmax) / g->s.req_s, &g->s);
}

status_code sv_disagg(const dt_ctx *c, const sv_model *k, const sv_load *w, const dt_kv *kv,
                      sv_pool *pf, stack_scenario sc, result_t *r)
{
    status_code rc = sv_pool_at(c, kv, w, sc, pf);
    if (rc != STATUS_OK)
        return rc;
    sv_disagg_state g;
    sv_disagg_solve(c, k, w, pf, kv->cmax, &g);
    if (sc != STACK_NOMINAL) {
        r->iteration_time_s = g.s.e2e;
        return STATUS_OK;
    }
    double dd = (double)c->p->system.devices, pd = g.x * pf->dev;
    sv_result_write(c, k, kv, w, &g.s, dd + pd, r);
    double lam = g.s.req_s * (double)c->d.dp;
    int64_t n = (int64_t)llround(lam * g.s.e2e); /* in flight, prefill included */
    r->global_batch = r->concurrency_resolved = n > 0 ? n : 1;
    double peak = c->hw->peak_flops[c->dt] > 0 ? c->hw->peak_flops[c->dt]
                                               : c->hw->peak_flops[HW_BF16];
    double fl = 2.0 * c->model_flops / (double)c->m->seq_len;
    r->mfu = lam * (w->isl + w->osl) * fl / (dd * peak + pd * pf->peak);
    r->prefill_devices = pd;
    r->prefill_replicas_matched = g.matched;
    r->prefill_capacity_requests_per_s = g.lam_p;
    r->decode_capacity_requests_per_s = g.lam_d;
    r->prefill_decode_rate_ratio = g.lam_p / g.lam_d;
    r->kv_transfer_s = pf->xfer;
    r->kv_transfer_exposed_s = pf->exposed;
    return STATUS_OK;
}
