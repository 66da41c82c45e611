/*
 * steady.c - the closed-form steady state of a serving replica on
 * the step cost of step.c (its pieces: replica.c, burst.c) (docs/serving.md, "Steady state"),
 * and the figures a serving user asks for.
 *
 * Continuous batching (decode-first, chunked prefill under the engine's
 * token budget K): with t_dec(d) the step of d decodes at the mean
 * context ISL + OSL/2 and delta the marginal step time per prefill token
 * (a chunk of min(ISL, K - d) tokens, several prompts packed when they
 * queue):
 *   concurrency C  the closed loop of ttft.c (the engine's policy,
 *                  waves, the wait for a slot above C_max);
 *                  output tokens/s = C OSL / (TTFT + (OSL - 1) TPOT);
 *   request rate   t_dec(d) ~ a + b d (secant, re-taken at the solution
 *                  three times; where it fails, the balance bisected on
 *                  [1, C_max]), rho_p = lambda ISL delta:
 *                  TPOT = a / (1 - rho_p - lambda (OSL - 1) b), d =
 *                  lambda (OSL - 1) TPOT; unstable (the capacity) when
 *                  the denominator reaches 0 or d exceeds the KV limit:
 *                  then the replica runs at C_max as offline; TTFT adds
 *                  the M/D/1 wait of the prefill chunks, W = rho_p S /
 *                  (2 (1 - rho_p)), percentiles from P(W > x) ~ rho_p
 *                  exp(-x rho_p / W) (model estimates);
 *   prefill apart  an engine that runs prefill in steps of their own
 *                  (SGLang's default): the chunk's step tp = t(chunk,
 *                  0) holds the decodes up, delta = tp per prefill
 *                  token, the gap a decode sees across it tp + t_dec,
 *                  and the chunk may take the whole budget K (with
 *                  fixed lengths in a closed loop: waves, ttft.c);
 *   ITL            p50 a decode step t_dec; p99 the step with a prefill
 *                  chunk once a fraction f >= 1 % of the steps carries one
 *                  (f = arrivals per step x chunks per prompt / prompts
 *                  packed per prefill step);
 *   offline        C = C_max ("max"); the TTFT of an endless backlog
 *                  has no value: reported at C_max, never ranked on;
 *   finite runs    a benchmark's burst of N requests (task requests):
 *                  N <= C_max are all admitted at once (sv_burst); N >
 *                  C_max run the steady state at C_max until the queue
 *                  empties, then drain: the running set finishes at
 *                  falling concurrency, steps whose fixed cost (weights,
 *                  floors, host) fewer tokens share (sv_drain_tail); TTFT is
 *                  the backlog's, each waiting request admitted at a
 *                  completion of the C slots (renewal theory,
 *                  sv_burst_finite);
 *   SLA            the largest C <= C_max with TTFT and TPOT within the
 *                  task's limits (bisection: TPOT and TTFT grow with C).
 * Static batching (scheduler = "static"): the batch prefills in one step
 * (TTFT), then decodes in lock-step at the mean context (TPOT).
 * Speculative decoding (spec.c) replaces t_dec by the time per
 * accepted token of its verify and draft steps.
 * Pipeline parallel: pp micro-batches in flight, a token every pp stage
 * steps of C/pp sequences plus the sends. Replicas (dp) multiply the
 * rates.
 * Invariant: closed forms only (no step simulated); the SLA search
 * (bisection over C) and the rate's secant (three) take a bounded number
 * of steps.
 */
#include "serve.h"

#include <string.h>

double sv_bisect(double (*f)(const void *arg, double d), const void *arg, double hi)
{
    double lo = 1.0;
    if (!(hi > lo) || f(arg, hi) <= 0.0)
        return -1.0;
    if (f(arg, lo) >= 0.0)
        return lo;
    for (int i = 0; i < 50; i++) {
        double mid = 0.5 * (lo + hi);
        if (f(arg, mid) < 0.0)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* An open loop's balance at d decoding requests: d (1 - rho_p(d)) -
 * lam (OSL - 1) t_dec(d) (sv_bisect's f; p: the prefill step there). */
typedef struct sv_open_arg {
    const sv_model *k;
    const sv_load *w;
    double lam;
    sv_prefill_step *p;
} sv_open_arg;

static double sv_open_balance(const void *arg, double d)
{
    const sv_open_arg *a = arg;
    double t = sv_tpot(a->k, d, a->w->cd);
    sv_prefill_at(a->k, a->w, d, a->lam * t, t, a->p);
    return d * (1.0 - a->lam * a->w->isl * a->p->delta) - a->lam * sv_decode_steps(a->w) * t;
}

/* The fixed point by bisection on [1, cmax] where the secant fails: a
 * step cost that rises steeply at small batches (MoE experts touched,
 * window layers) gave the secant a slope that no rate below the capacity
 * satisfies, and the open loop was reported at the KV limit, its
 * requests/s above the rate offered (issue 29: gpt-oss-120b on one H200
 * at 2 requests/s served 10.84). false when the replica cannot keep up
 * below cmax. */
static bool sv_open_bisect(const sv_model *k, const sv_load *w, double lam, double cmax,
                           double *d, double *tpot, sv_prefill_step *p)
{
    double o1 = sv_decode_steps(w);
    sv_open_arg a = {k, w, lam, p};
    double x = o1 > 0.0 ? sv_bisect(sv_open_balance, &a, cmax) : -1.0;
    if (x < 0.0)
        return false;
    sv_open_balance(&a, x); /* p at the solution */
    *d = x;
    *tpot = x / (lam * o1);
    return true;
}

/* Open loop at lambda requests/s; false when unstable. */
static bool sv_open_loop(const sv_model *k, const sv_load *w, double lam, double cmax, sv_state *s)
{
    double cd = w->cd, o1 = sv_decode_steps(w);
    double d = 1.0, tpot = 0.0;
    sv_prefill_step p = {0};
    bool ok = true;
    for (int i = 0; i < 3 && ok; i++) {
        double d0 = d > 1.0 ? d : 1.0, d1 = 2.0 * d0;
        double t0 = sv_tpot(k, d0, cd), t1 = sv_tpot(k, d1, cd);
        double b = (t1 - t0) / (d1 - d0), a = t0 - b * d0;
        sv_prefill_at(k, w, d0, lam * p.t, t0, &p);
        double den = 1.0 - lam * w->isl * p.delta - lam * o1 * b;
        ok = den > 0.0;
        tpot = ok ? a / den : tpot;
        d = lam * o1 * tpot;
    }
    if ((!ok || d > cmax) && !sv_open_bisect(k, w, lam, cmax, &d, &tpot, &p))
        return false;
    double rho = lam * w->isl * p.delta, S = p.nc * p.tp;
    double wq = rho < 1.0 ? rho * S / (2.0 * (1.0 - rho)) : 0.0;
    memset(s, 0, sizeof *s);
    s->conc = d;
    s->tpot = tpot;
    /* the step in flight (and the next, formed during it, under an
     * overlap scheduler), its own chunks, the queue */
    sv_ttft_queue(k->host_req + (0.5 + k->overlap) * tpot + S, rho, wq, s);
    sv_itl(sv_tpot(k, d, cd), &p, lam * tpot, s);
    s->e2e = s->ttft + (w->osl - 1.0) * tpot;
    s->conc = lam * s->e2e; /* requests in flight (Little), prefilling or decoding */
    s->req_s = lam;
    return true;
}

/* Static batching of B sequences. */
static void sv_static_batch(const sv_model *k, const sv_load *w, double B, sv_state *s)
{
    memset(s, 0, sizeof *s);
    s->conc = B;
    s->ttft = k->host_req + sv_replica_step(k, B, w->isl, 0, 0, 0);
    s->ttft_p90 = s->ttft_p99 = s->ttft;
    s->tpot = sv_tpot(k, B, w->cd);
    s->itl_p50 = s->itl_p99 = s->tpot;
    s->e2e = s->ttft + (w->osl - 1.0) * s->tpot;
    s->req_s = B / s->e2e;
}

/* The largest concurrency meeting the SLA (1 when none does). */
static void sv_sla_search(const dt_ctx *c, const sv_model *k, const sv_load *w, int64_t cmax,
                          sv_state *s)
{
    int64_t lo = 1, hi = cmax;
    sv_closed_loop(k, w, (double)hi, s);
    if (sv_sla_met(c, s))
        return;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        sv_closed_loop(k, w, (double)mid, s);
        if (sv_sla_met(c, s))
            lo = mid;
        else
            hi = mid;
    }
    sv_closed_loop(k, w, (double)lo, s);
}

void sv_solve(const dt_ctx *c, const sv_model *k, const sv_load *w, int64_t cmax, sv_state *s)
{
    const task_detailed_t *t = c->t;
    double dp = (double)c->d.dp;
    if (t->scheduler == TASK_SCHED_STATIC) {
        sv_static_batch(k, w, (double)c->d.mb, s);
        return;
    }
    if (t->request_rate > 0.0) {
        if (!sv_open_loop(k, w, t->request_rate / dp, (double)cmax, s)) {
            sv_closed_loop(k, w, (double)cmax, s);
            s->saturated = true;
        }
        return;
    }
    if (t->concurrency == TASK_CONC_SLA) {
        sv_sla_search(c, k, w, cmax, s);
        return;
    }
    if (t->concurrency == TASK_CONC_MAX && t->requests > 0) {
        double N = ceil((double)t->requests / dp);
        if (N <= (double)cmax)
            sv_burst(c, k, w, N, s);
        else
            sv_burst_finite(c, k, w, N, (double)cmax, s);
        return;
    }
    double C = t->concurrency == TASK_CONC_MAX ? (double)cmax
               : t->concurrency > 0            ? ceil((double)t->concurrency / dp)
                                               : (double)c->d.mb;
    sv_loop_wait(k, w, C, (double)cmax, s);
}
