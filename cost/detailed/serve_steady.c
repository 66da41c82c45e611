/*
 * serve_steady.c - the closed-form steady state of a serving replica on
 * the step cost of serve_step.c (../shared/design/serving.md section 2),
 * and the figures a serving user asks for.
 *
 * Continuous batching (decode-first, chunked prefill under the engine's
 * token budget K): with t_dec(d) the step of d decodes at the mean
 * context ISL + OSL/2 and delta the marginal step time per prefill token
 * (a chunk of min(ISL, K - d) tokens, several prompts packed when they
 * queue):
 *   concurrency C  TPOT = t_dec(C) + C ISL delta / (OSL - 1);
 *                  TTFT = host + n_c t(chunk, C) (a request arrives
 *                  as another leaves, at the end of a step);
 *                  output tokens/s = C OSL / (TTFT + (OSL - 1) TPOT);
 *   request rate   t_dec(d) ~ a + b d (secant, re-taken at the solution
 *                  three times), rho_p = lambda ISL delta:
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
 *                  token, TTFT = host + n_c tp, the gap a decode sees
 *                  across it tp + t_dec, and the chunk may take the
 *                  whole budget K;
 *   waves          with fixed lengths the requests of a closed loop
 *                  finish and return in waves: TTFT ranges from its
 *                  value (desynchronized) to the last of a wave of C
 *                  prompts prefilled at full steps (ttft_wave_max_s);
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
 *                  floors, host) fewer tokens share (sv_tail); TTFT is
 *                  the backlog's, each waiting request admitted at a
 *                  completion of the C slots (renewal theory,
 *                  sv_finite);
 *   SLA            the largest C <= C_max with TTFT and TPOT within the
 *                  task's limits (bisection: TPOT and TTFT grow with C).
 * Static batching (scheduler = "static"): the batch prefills in one step
 * (TTFT), then decodes in lock-step at the mean context (TPOT).
 * Speculative decoding (serve_spec.c) replaces t_dec by the time per
 * accepted token of its verify and draft steps.
 * Pipeline parallel: pp micro-batches in flight, a token every pp stage
 * steps of C/pp sequences plus the sends. Replicas (dp) multiply the
 * rates.
 */
#include "serve.h"

#include <math.h>
#include <string.h>

/* A step of the replica: pp stage steps of 1/pp of the work, the sends. */
static double sv_t(const sv_model *k, double np, double len, double ctx, double d, double cd)
{
    if (k->pp <= 1.0)
        return sv_step(k, np, len, ctx, d, cd, NULL);
    return k->pp * sv_step(k, np / k->pp, len, ctx, d / k->pp, cd, NULL) +
           (k->pp - 1.0) * k->p2p_tok;
}

/* Time per output token of decode-only steps of d sequences (with
 * speculation: the verify and draft steps over the tokens accepted). */
double sv_tok(const sv_model *k, double d, double cd)
{
    if (k->pp <= 1.0)
        return sv_decode_token(k, d, cd);
    return k->pp * sv_decode_token(k, d / k->pp, cd) + (k->pp - 1.0) * k->p2p_tok / k->spec_e;
}

/* Prefill beside d decodes: prompts per step np, chunk length, chunks
 * per prompt, the time of the step that carries a chunk (tp), the gap a
 * decoding sequence sees across it (t), delta per prefill token. In one
 * step with the decodes (t = tp), delta is the step's marginal time per
 * prefill token; in a step of its own (the engine runs prefill apart),
 * the decodes wait for all of it (t = tp + a decode step, delta = tp per
 * token); fit, the whole prompts (or chunks) the step's room holds. */
typedef struct sv_pre {
    double np, len, nc, tp, t, delta, fit;
} sv_pre;

/* The step of d decodes alone, sv_t(k, 0, 0, 0, d, cd), from the time
 * per output token sv_tok(k, d, cd) = `tok` that the callers have: the
 * same step without speculation. */
static double sv_dec_step(const sv_model *k, double d, double cd, double tok)
{
    return k->rows <= 1.0 ? tok : sv_t(k, 0, 0, 0, d, cd);
}

static void sv_prefill(const sv_model *k, const sv_load *w, double d, double arrivals,
                       double tok, sv_pre *o)
{
    double cd = w->cd;
    double room = k->apart ? w->K : w->K - d;
    if (room < 0.25 * w->K)
        room = 0.25 * w->K; /* engines keep prefill moving under a full decode batch */
    o->len = w->isl < room ? w->isl : room;
    o->nc = ceil(w->isl / o->len);
    /* prompts that queue pack into one step, up to the budget */
    o->fit = floor(room / o->len);
    o->np = arrivals > 1.0 ? (arrivals < o->fit ? arrivals : o->fit) : 1.0;
    if (o->np < 1.0)
        o->np = 1.0;
    double ctx = o->nc > 1.0 ? 0.5 * (w->isl - o->len) : 0.0;
    double td = sv_dec_step(k, d, cd, tok);
    if (k->apart) {
        o->tp = sv_t(k, o->np, o->len, ctx, 0, cd);
        o->t = o->tp + td;
        o->delta = o->tp / (o->np * o->len);
    } else {
        o->t = o->tp = sv_t(k, o->np, o->len, ctx, d, cd);
        o->delta = (o->t - td) / (o->np * o->len);
    }
}

/* Inter-token latency: a fraction f = arrivals per step x chunks per
 * prompt / prompts per prefill step of the steps carries a prefill (its
 * time p->t); the median is a decode step (td: prompts pack into few
 * steps), the 99th percentile the prefill step once f >= 1 %. */
static void sv_itl(double td, const sv_pre *p, double arrivals, sv_state *s)
{
    double f = arrivals * p->nc / p->np;
    s->itl_p50 = td;
    s->itl_p99 = f >= 0.01 ? p->t : td;
}

/* OSL - 1, the decode steps after a request's first token, as a
 * divisor (arrivals per step, a prefill share per decode): 1 at an
 * output of one token, where what it divides is guarded or moot. Where
 * it counts decode steps it is OSL - 1 itself, 0 at one token. */
static inline double sv_o1_div(const sv_load *w)
{
    return w->osl > 1.0 ? w->osl - 1.0 : 1.0;
}

/* OSL - 1 as the decode steps after the first token: none at one. */
static inline double sv_o1_steps(const sv_load *w)
{
    return dt_max(w->osl - 1.0, 0.0);
}

/* Closed loop at C requests in flight. */
static void sv_at(const sv_model *k, const sv_load *w, double C, sv_state *s)
{
    double cd = w->cd, o1 = sv_o1_div(w);
    double td = sv_tok(k, C, cd);
    sv_pre p;
    sv_prefill(k, w, C, C / o1, td, &p);
    memset(s, 0, sizeof *s);
    s->conc = C;
    s->tpot = td + (w->osl > 1.0 ? C * w->isl * p.delta / o1 : 0.0);
    /* closed loop: a request arrives as another leaves, at a step's end */
    s->ttft = k->host_req + p.nc * p.tp;
    s->ttft_p90 = s->ttft_p99 = s->ttft;
    /* fixed lengths: requests that start together finish together and
     * return as a wave of C prompts, `fit` of them (or of their chunks)
     * a step beside the decodes; the last waits for the whole wave: the
     * range's upper end. Each step costs its decode part (none when the
     * engine runs prefill apart) plus the marginal cost of its prompt
     * tokens (no step evaluated). */
    double fit = dt_min(dt_max(1.0, p.fit), C);
    double base = p.tp - p.np * p.len * p.delta;
    s->ttft_wave = k->host_req + p.nc * (ceil(C / fit) * base + C * p.len * p.delta);
    sv_itl(td, &p, C / o1, s);
    s->e2e = s->ttft + (w->osl - 1.0) * s->tpot;
    s->req_s = C / s->e2e;
}

/* Open loop at lambda requests/s; false when unstable. */
static bool sv_rate(const sv_model *k, const sv_load *w, double lam, double cmax, sv_state *s)
{
    double cd = w->cd, o1 = w->osl > 1.0 ? w->osl - 1.0 : 0.0;
    double d = 1.0, tpot = 0.0;
    sv_pre p = {0};
    for (int i = 0; i < 3; i++) {
        double d0 = d > 1.0 ? d : 1.0, d1 = 2.0 * d0;
        double t0 = sv_tok(k, d0, cd), t1 = sv_tok(k, d1, cd);
        double b = (t1 - t0) / (d1 - d0), a = t0 - b * d0;
        sv_prefill(k, w, d0, lam * p.t, t0, &p);
        double den = 1.0 - lam * w->isl * p.delta - lam * o1 * b;
        if (den <= 0.0)
            return false;
        tpot = a / den;
        d = lam * o1 * tpot;
    }
    if (d > cmax)
        return false;
    double rho = lam * w->isl * p.delta, S = p.nc * p.tp;
    double wq = rho < 1.0 ? rho * S / (2.0 * (1.0 - rho)) : 0.0;
    memset(s, 0, sizeof *s);
    s->conc = d;
    s->tpot = tpot;
    sv_ttft_queue(k->host_req + 0.5 * tpot + S, rho, wq, s);
    sv_itl(sv_tok(k, d, cd), &p, lam * tpot, s);
    s->e2e = s->ttft + (w->osl - 1.0) * tpot;
    s->conc = lam * s->e2e; /* requests in flight (Little), prefilling or decoding */
    s->req_s = lam;
    return true;
}

/* Decode time of n sequences from a moment on until the last has
 * finished (sv_tail): their remaining outputs r have the survival P(R >
 * r) = (1 - r / rmax)^p, so n (1 - x)^p of them are still running after
 * x rmax steps; the time is rmax times the mean step over x in [0, x_e],
 * x_e = 1 - n^(-1/p) the point where one sequence is left (the expected
 * last finish of n draws within a few % for p = 1, 2). A decode step's
 * time is smooth in the sequences it carries (its parts are rooflines
 * in them) and their count is a polynomial of degree p in x: 4-point
 * Gauss-Legendre quadrature, exact for a step linear in its sequences. */
static double sv_drain(const sv_model *k, double n, double rmax, double p, double cd)
{
    if (p <= 0.0 || n <= 1.0)
        return rmax * sv_tok(k, n > 1.0 ? n : 1.0, cd);
    static const double gx[4] = {-0.8611363115940526, -0.3399810435848563,
                                 0.3399810435848563, 0.8611363115940526};
    static const double gw[4] = {0.3478548451374538, 0.6521451548625461,
                                 0.6521451548625461, 0.3478548451374538};
    double xe = 1.0 - pow(n, -1.0 / p), sum = 0.0;
    for (int i = 0; i < 4; i++) {
        double x = 0.5 * xe * (1.0 + gx[i]);
        sum += gw[i] * sv_tok(k, dt_max(1.0, n * pow(1.0 - x, p)), cd);
    }
    return rmax * 0.5 * xe * sum;
}

/* The decode time of n running sequences until all have finished, by
 * the output lengths (sv_drain): OSL - 1 decode tokens after the first,
 * fixed, or uniform on [0, 2 (OSL - 1)] (task uniform_lengths: the
 * survival 1 - r / rmax, p = 1). `fresh`: the n have just started, so
 * their remaining outputs are their lengths; else they are the running
 * set of a steady state, whose remaining outputs are the equilibrium
 * residuals, density P(O > r) / E[O] (renewal theory): survival (1 - r /
 * rmax)^(p + 1), mean rmax / (p + 2): fixed lengths L give residuals
 * uniform on [0, L] (p = 1), uniform lengths on [0, 2 L] residuals of
 * survival (1 - r / 2 L)^2 and mean 2 L / 3. E[R] in *mean. */
static double sv_tail(const sv_model *k, const sv_load *w, double n, bool fresh, bool uniform,
                      double *mean)
{
    double o1 = sv_o1_steps(w);
    double p = (uniform ? 1.0 : 0.0) + (fresh ? 0.0 : 1.0);
    double rmax = uniform ? 2.0 * o1 : o1;
    *mean = rmax / (p + 1.0);
    return sv_drain(k, n, rmax, p, w->cd);
}

/* The fill of a run of n requests sent at once, n at most the C_max the
 * replica admits (a burst, sv_burst, or a finite run's first C, sv_finite):
 * every request is admitted, the decode step at n (td), the prefill
 * beside n decodes with n prompts queued (p), the prompts a step (np,
 * at most n) and a prompt's share of its steps (prompt). */
typedef struct sv_fill {
    sv_pre p;
    double td, np, prompt;
} sv_fill;

static void sv_fill_at(const sv_model *k, const sv_load *w, double n, sv_fill *f)
{
    f->td = sv_tok(k, n, w->cd);
    sv_prefill(k, w, n, n, f->td, &f->p);
    f->np = f->p.np < n ? f->p.np : n;
    f->prompt = w->isl * f->p.tp / (f->p.np * f->p.len);
}

/* The first token of the j-th prompt of a fill of n (j a quantile's
 * position, not a whole number): j + np / 2 prompts' prefill on average
 * over the np of its step, at most the last prompt's, n prompts. */
static double sv_fill_ttft(const sv_model *k, const sv_fill *f, double n, double j)
{
    return k->host_req + dt_min(n, j + 0.5 * f->np) * f->prompt;
}

/* The decodes of a burst of N after its last prompt's first token
 * (sv_burst). The fill ran sf = N nc / np steps, each decoding a token of
 * every request prefilled before it, so the j-th request has decoded sf
 * - j nc / np of its outputs by then: the remaining outputs are its
 * lengths less a shift uniform on [0, sf]. Fixed lengths o1: uniform on
 * [o1 - sf, o1]; o1 - sf steps at N, then the drain of remainders
 * uniform on [0, sf] (sv_drain, p = 1), or, when the fill outlasts the
 * outputs, the N o1 / sf still running with remainders uniform on [0,
 * o1]. Lengths uniform on [0, 2 o1]: the survival of the remainder is
 * (1 - sf / 4 o1) (1 - r / (2 o1 - sf / 2)) but for its corner near the
 * top, p = 1 again over the share still running. */
static double sv_burst_tail(const sv_model *k, const sv_load *w, double N, const sv_fill *f,
                            bool uniform)
{
    double o1 = sv_o1_steps(w), sf = N * f->p.nc / f->np; /* np >= 1 */
    if (!(o1 > 0.0))
        return 0.0; /* one output token: done at the first */
    if (uniform) {
        double top = 2.0 * o1;
        if (sf < top)
            return sv_drain(k, N * (1.0 - sf / (2.0 * top)), top - 0.5 * sf, 1.0, w->cd);
        return sv_drain(k, N * o1 / sf, top, 1.0, w->cd);
    }
    if (sf < o1)
        return (o1 - sf) * sv_tok(k, N, w->cd) + sv_drain(k, N, sf, 1.0, w->cd);
    return sv_drain(k, N * o1 / sf, o1, 1.0, w->cd);
}

/* An offline burst of N <= C_max requests sent at once (a benchmark
 * client's run): every request is admitted, the prompts prefill in
 * order, np of them a step (packed under the budget), the decodes run
 * beside them (or wait for them, prefill apart) and then alone. A
 * prompt's first token comes at the end of its step: the mean TTFT is
 * host + (N + np) / 2 prompts' prefill. Its decodes are held up by the
 * prompt steps after its own, (N - np) / 2 prompts on average, each
 * ISL x delta: the mean over the requests of TPOT = (e2e - TTFT) /
 * (OSL - 1), as a benchmark computes it, is t_dec + (N - np) ISL delta /
 * (2 (OSL - 1)), about half the steady state's prefill share at C = N.
 * The burst ends when the last prompt's request has decoded: its TTFT
 * plus the decodes the N requests have left (sv_burst_tail: those
 * prefilled early decoded beside the later prompts' steps). */
static void sv_burst(const dt_ctx *c, const sv_model *k, const sv_load *w, double N,
                     sv_state *s)
{
    double o1 = sv_o1_div(w);
    sv_fill f;
    sv_fill_at(k, w, N, &f);
    memset(s, 0, sizeof *s);
    s->conc = N;
    s->tpot = f.td + (w->osl > 1.0 ? 0.5 * (N - f.np) * w->isl * f.p.delta / o1 : 0.0);
    s->ttft = k->host_req + 0.5 * (N + f.np) * f.prompt;
    s->ttft_p90 = sv_fill_ttft(k, &f, N, 0.9 * N);
    s->ttft_p99 = sv_fill_ttft(k, &f, N, 0.99 * N);
    /* every decode step of the prefill phase carries a chunk */
    sv_itl(f.td, &f.p, 1.0, s);
    s->e2e = s->ttft + (w->osl - 1.0) * s->tpot;
    double end = k->host_req + N * f.prompt + sv_burst_tail(k, w, N, &f, c->t->uniform_lengths);
    s->req_s = N / (end > s->e2e ? end : s->e2e);
}

/* The first token of the j-th request of a finite run's backlog
 * (sv_finite): the j-th prompt of the fill f of C, or the (j - C)-th
 * completion of the C slots after the first one's wait0. */
static double sv_backlog(const sv_model *k, const sv_fill *f, double j, double C, double wait0,
                         double mu)
{
    return j <= C ? sv_fill_ttft(k, f, C, j) : wait0 + (j - C) / C * mu;
}

/* A finite run of N requests above the C the replica admits (offline,
 * task requests = N > C_max): the steady state at C until the last
 * request is admitted, N e2e / C for the whole work of N requests at
 * full concurrency (their prompts, N (OSL - 1) / C decode steps); then
 * the running set drains (sv_tail): its C E[R] remaining tokens take the
 * drain's time instead of E[R] steps at C. The run's requests/s is N
 * over the sum. With fixed lengths a burst runs in waves of C that start
 * and finish together; the last wave, N mod C requests, decodes OSL
 * steps at its own concurrency: with a step linear in its sequences (a +
 * b d) its excess over full steps is a OSL (1 - (N mod C) / C), on
 * average over N mod C a OSL / 2, the desynchronized drain's.
 * TTFT is the backlog's, as the benchmark measures it: the first C
 * prompts prefill in order (request j <= C at j prompts' prefill, at
 * most the last one's, as a burst of C: sv_fill; the fill F = C of
 * them); request C + i waits for the i-th completion. Each
 * of the C slots renews at the cycle mu = the steady e2e, its cycles
 * starting after the fill (F / 2 on average); by renewal theory a slot's
 * n-th completion comes at mu (n + (1 - cv^2) / 2), cv the cycle's
 * coefficient of variation (0 for fixed lengths, (OSL - 1) TPOT / (mu
 * sqrt 3) for outputs uniform on [0, 2 (OSL - 1)]), so request C + i has
 * its first token at F / 2 + mu (i / C + (1 - cv^2) / 2) plus the steady
 * TTFT; the mean, p90 and p99 over the N requests in that order. TPOT
 * and ITL are the steady state's (a request of the drain sees shorter
 * steps). */
static void sv_finite(const dt_ctx *c, const sv_model *k, const sv_load *w, double N, double C,
                      sv_state *s)
{
    sv_at(k, w, C, s);
    sv_fill f;
    sv_fill_at(k, w, C, &f);
    double er = 0.0;
    double drain = sv_tail(k, w, C, false, c->t->uniform_lengths, &er);
    double extra = dt_max(0.0, drain - er * f.td);
    double mu = s->e2e;
    s->req_s = N / (N * mu / C + extra);
    double dec = (w->osl - 1.0) * s->tpot;
    double cv2 = c->t->uniform_lengths ? dec * dec / (3.0 * mu * mu) : 0.0;
    double wait0 = 0.5 * C * f.prompt + 0.5 * (1.0 - cv2) * mu + s->ttft;
    double M = N - C;
    double first = k->host_req + 0.5 * f.np * f.prompt;
    s->ttft = (C * (first + 0.5 * C * f.prompt) + M * (wait0 + 0.5 * (M + 1.0) / C * mu)) / N;
    s->ttft_p90 = sv_backlog(k, &f, 0.9 * N, C, wait0, mu);
    s->ttft_p99 = sv_backlog(k, &f, 0.99 * N, C, wait0, mu);
    s->ttft_wave = 0.0; /* the burst's range is its backlog's */
    s->e2e = s->ttft + dec;
}

/* Static batching of B sequences. */
static void sv_static(const sv_model *k, const sv_load *w, double B, sv_state *s)
{
    memset(s, 0, sizeof *s);
    s->conc = B;
    s->ttft = k->host_req + sv_t(k, B, w->isl, 0, 0, 0);
    s->ttft_p90 = s->ttft_p99 = s->ttft;
    s->tpot = sv_tok(k, B, w->cd);
    s->itl_p50 = s->itl_p99 = s->tpot;
    s->e2e = s->ttft + (w->osl - 1.0) * s->tpot;
    s->req_s = B / s->e2e;
}

bool sv_meets(const dt_ctx *c, const sv_state *s)
{
    return (c->t->ttft_max_s <= 0.0 || s->ttft <= c->t->ttft_max_s) &&
           (c->t->tpot_max_s <= 0.0 || s->tpot <= c->t->tpot_max_s);
}

/* The largest concurrency meeting the SLA (1 when none does). */
static void sv_sla(const dt_ctx *c, const sv_model *k, const sv_load *w, int64_t cmax,
                   sv_state *s)
{
    int64_t lo = 1, hi = cmax;
    sv_at(k, w, (double)hi, s);
    if (sv_meets(c, s))
        return;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        sv_at(k, w, (double)mid, s);
        if (sv_meets(c, s))
            lo = mid;
        else
            hi = mid;
    }
    sv_at(k, w, (double)lo, s);
}

/* The replica's state under the task's load. */
static void sv_solve(const dt_ctx *c, const sv_model *k, const sv_load *w, int64_t cmax,
                     sv_state *s)
{
    const task_detailed_t *t = c->t;
    double dp = (double)c->d.dp;
    if (t->scheduler == TASK_SCHED_STATIC) {
        sv_static(k, w, (double)c->d.mb, s);
        return;
    }
    if (t->request_rate > 0.0) {
        if (!sv_rate(k, w, t->request_rate / dp, (double)cmax, s)) {
            sv_at(k, w, (double)cmax, s);
            s->saturated = true;
        }
        return;
    }
    if (t->concurrency == TASK_CONC_SLA) {
        sv_sla(c, k, w, cmax, s);
        return;
    }
    if (t->concurrency == TASK_CONC_MAX && t->requests > 0) {
        double N = ceil((double)t->requests / dp);
        if (N <= (double)cmax)
            sv_burst(c, k, w, N, s);
        else
            sv_finite(c, k, w, N, (double)cmax, s);
        return;
    }
    double C = t->concurrency == TASK_CONC_MAX ? (double)cmax
               : t->concurrency > 0            ? ceil((double)t->concurrency / dp)
                                               : (double)c->d.mb;
    sv_at(k, w, C < (double)cmax ? C : (double)cmax, s);
}

bool sv_begin(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, sv_model *k,
              sv_load *w)
{
    if (!mem->kv_fits)
        return false;
    sv_model_init(c, st, c->scenario, k);
    w->isl = (double)(c->t->prompt_tokens > 0 ? c->t->prompt_tokens : c->m->seq_len);
    w->osl = (double)c->t->decode_tokens;
    w->K = (double)c->st->token_budget * sv_adp(c); /* attention DP: a budget a rank */
    w->cd = w->isl + sv_grown(c) * w->osl;
    return true;
}

/* The colocated steady state under c's facts into r; k and w are left
 * for the band. */
static status_code sv_serve_at(const dt_ctx *c, const dt_stages *st, const dt_mem *mem,
                               sv_model *k, sv_load *w, result_t *r)
{
    if (!sv_begin(c, st, mem, k, w))
        return STATUS_INFEASIBLE_MEMORY;
    sv_state s;
    sv_solve(c, k, w, mem->kv.cmax, &s);
    sv_put(c, k, &mem->kv, w, &s, (double)c->p->system.devices, r);
    return STATUS_OK;
}

status_code sv_serve(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r)
{
    sv_model k;
    sv_load w;
    return sv_serve_at(c, st, mem, &k, &w, r);
}

status_code sv_serve_band(dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r)
{
    sv_model k;
    sv_load w;
    status_code rc = sv_serve_at(c, st, mem, &k, &w, r);
    if (rc != STATUS_OK)
        return rc;
    static const stack_scenario ends[2] = {STACK_FAST, STACK_SLOW};
    double *dst[2] = {&r->iteration_time_lo_s, &r->iteration_time_hi_s};
    for (int i = 0; i < 2; i++) {
        sv_state s;
        dt_facts_resolve(c, ends[i]);
        sv_model_facts(c, ends[i], &k);
        sv_solve(c, &k, &w, mem->kv.cmax, &s);
        *dst[i] = s.e2e;
    }
    return STATUS_OK;
}

void sv_put(const dt_ctx *c, const sv_model *k, const sv_kv *kv, const sv_load *w,
            const sv_state *s, double devices, result_t *r)
{
    const model_t *m = c->m;
    double dp = (double)c->d.dp;
    double req = s->req_s * dp;
    /* the parts of a decode step: compute, TP all-reduce, host */
    sv_parts pt;
    sv_step(k, 0, 0, 0, s->conc / k->pp, w->cd, &pt);
    double comp = pt.total > 0.0 ? (pt.gemm + pt.attn + pt.ew + pt.head) / pt.total : 0.0;
    double tpsh = pt.total > 0.0 ? pt.tp / pt.total : 0.0;
    r->ttft_s = s->ttft;
    r->tpot_s = s->tpot;
    r->iteration_time_s = s->e2e;
    r->global_batch = (int64_t)llround(s->conc * dp) > 0 ? (int64_t)llround(s->conc * dp) : 1;
    r->throughput_samples_per_s = req;
    r->output_tokens_per_s = req * w->osl;
    r->tokens_per_s = r->output_tokens_per_s;
    r->output_tokens_per_s_per_device = r->output_tokens_per_s / devices;
    r->total_tokens_per_s = req * (w->isl + w->osl);
    r->requests_per_s = req;
    r->tokens_per_s_per_user = 1.0 / s->tpot;
    r->ttft_p90_s = s->ttft_p90;
    r->ttft_p99_s = s->ttft_p99;
    r->ttft_wave_max_s = s->ttft_wave > 0.0 ? dt_max(s->ttft_wave, s->ttft) : (double)NAN;
    r->itl_p50_s = s->itl_p50;
    r->itl_p99_s = s->itl_p99;
    r->concurrency_resolved = r->global_batch;
    r->concurrency_max = (int64_t)kv->cmax * c->d.dp;
    double used = (s->conc < (double)kv->cmax ? s->conc : (double)kv->cmax) * kv->seq_bytes;
    r->kv_use = kv->pool > 0.0 ? used / kv->pool : 0.0;
    bool met = sv_meets(c, s) && !s->saturated;
    r->sla_met = met ? 1.0 : 0.0;
    r->goodput_requests_per_s = met ? req : 0.0;
    r->compute_gemm_s = comp * s->e2e;
    r->comm_allreduce_s = tpsh * s->e2e;
    r->comm_allgather_s = r->comm_reducescatter_s = r->comm_alltoall_s = 0.0;
    r->comm_p2p_s = (k->pp - 1.0) * k->p2p_tok * (w->osl - 1.0);
    r->comm_exposed_s = r->comm_allreduce_s + r->comm_p2p_s;
    r->comm_overlapped_s = 0.0;
    /* what bounds it (cost/bound.h): decode attention and the fused
     * element-wise kernels read HBM; a weight GEMM is memory-bound for
     * as long as streaming its weights takes; the rest is math */
    double stream = 0.0;
    for (int i = 0; i < 4; i++)
        stream += k->g[i].wbytes / (k->bw * k->eta_w);
    stream *= k->nd + k->nm;
    double gmem = pt.gemm < stream ? pt.gemm : stream;
    double memsh = pt.total > 0.0 ? (pt.attn + pt.ew + gmem) / pt.total : 0.0;
    r->compute_memory_s = memsh * s->e2e;
    r->compute_math_s = dt_max(0.0, r->compute_gemm_s - r->compute_memory_s);
    double est[DT_B_DIMS] = {[DT_B_TP] = r->comm_allreduce_s, [DT_B_PP] = r->comm_p2p_s};
    dt_breakdown_comm(c, r->comm_exposed_s, est, r);
    /* the memory as the KV capacity counts it (weights in their own
     * precision, one step's activations) */
    r->mem_weights_bytes_per_device = kv->weights;
    r->mem_activations_bytes_per_device = kv->acts;
    r->mem_kv_cache_bytes_per_device = used;
    r->mem_total_bytes_per_device = kv->weights + kv->acts + kv->reserve + used;
    double peak = c->hw->peak_flops[c->dt] > 0 ? c->hw->peak_flops[c->dt]
                                               : c->hw->peak_flops[HW_BF16];
    double fl = 2.0 * c->model_flops / (double)m->seq_len;
    r->mfu = req * (w->isl + w->osl) * fl / (devices * peak);
}
