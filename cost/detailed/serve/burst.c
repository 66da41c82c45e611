/*
 * burst.c - finite serving runs, as a benchmark client sends them (task
 * requests = N with concurrency "max"):
 *   a burst   N <= C_max requests sent at once: all admitted, the prompts
 *             prefill in order, np of them a step, the decodes beside
 *             them and then alone (sv_burst);
 *   a backlog N > C_max: the steady state at C_max until the queue
 *             empties, then the drain: the running set finishes at
 *             falling concurrency, steps whose fixed cost (weights,
 *             floors, host) fewer tokens share (sv_drain_tail); TTFT is the
 *             backlog's, each waiting request admitted at a completion of
 *             the C slots (renewal theory, sv_burst_finite).
 * The drain integrates the decode step over the remaining outputs'
 * survival by Gauss-Legendre quadrature (exact for a step linear in its
 * sequences). Invariant: closed forms on replica.c's steps only.
 */
#include "serve.h"

#include <string.h>

/* Decode time of n sequences from a moment on until the last has
 * finished (sv_drain_tail): their remaining outputs r have the survival P(R >
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
        return rmax * sv_tpot(k, n > 1.0 ? n : 1.0, cd);
    static const double gx[4] = {-0.8611363115940526, -0.3399810435848563,
                                 0.3399810435848563, 0.8611363115940526};
    static const double gw[4] = {0.3478548451374538, 0.6521451548625461,
                                 0.6521451548625461, 0.3478548451374538};
    double xe = 1.0 - pow(n, -1.0 / p), sum = 0.0;
    for (int i = 0; i < 4; i++) {
        double x = 0.5 * xe * (1.0 + gx[i]);
        sum += gw[i] * sv_tpot(k, dt_max(1.0, n * pow(1.0 - x, p)), cd);
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
static double sv_drain_tail(const sv_model *k, const sv_load *w, double n, bool fresh, bool uniform,
                            double *mean)
{
    double o1 = sv_decode_steps(w);
    double p = (uniform ? 1.0 : 0.0) + (fresh ? 0.0 : 1.0);
    double rmax = uniform ? 2.0 * o1 : o1;
    *mean = rmax / (p + 1.0);
    return sv_drain(k, n, rmax, p, w->cd);
}

/* The fill of a run of n requests sent at once, n at most the C_max the
 * replica admits (a burst, sv_burst, or a finite run's first C, sv_burst_finite):
 * every request is admitted, the decode step at n (td), the prefill
 * beside n decodes with n prompts queued (p), the prompts a step (np,
 * at most n) and a prompt's share of its steps (prompt). */
typedef struct sv_fill {
    sv_prefill_step p;
    double td, np, prompt;
} sv_fill;

static void sv_fill_at(const sv_model *k, const sv_load *w, double n, sv_fill *f)
{
    f->td = sv_tpot(k, n, w->cd);
    sv_prefill_at(k, w, n, n, f->td, &f->p);
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
    double o1 = sv_decode_steps(w), sf = N * f->p.nc / f->np; /* np >= 1 */
    if (!(o1 > 0.0))
        return 0.0; /* one output token: done at the first */
    if (uniform) {
        double top = 2.0 * o1;
        if (sf < top)
            return sv_drain(k, N * (1.0 - sf / (2.0 * top)), top - 0.5 * sf, 1.0, w->cd);
        return sv_drain(k, N * o1 / sf, top, 1.0, w->cd);
    }
    if (sf < o1)
        return (o1 - sf) * sv_tpot(k, N, w->cd) + sv_drain(k, N, sf, 1.0, w->cd);
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
void sv_burst(const dt_ctx *c, const sv_model *k, const sv_load *w, double N,
                     sv_state *s)
{
    double o1 = sv_decode_steps(w);
    sv_fill f;
    sv_fill_at(k, w, N, &f);
    memset(s, 0, sizeof *s);
    s->conc = N;
    s->tpot = f.td + (o1 > 0.0 ? 0.5 * (N - f.np) * w->isl * f.p.delta / o1 : 0.0);
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
 * (sv_burst_finite): the j-th prompt of the fill f of C, or the (j - C)-th
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
 * the running set drains (sv_drain_tail): its C E[R] remaining tokens take the
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
void sv_burst_finite(const dt_ctx *c, const sv_model *k, const sv_load *w, double N, double C,
                     sv_state *s)
{
    sv_closed_loop(k, w, C, s);
    sv_fill f;
    sv_fill_at(k, w, C, &f);
    double er = 0.0;
    double drain = sv_drain_tail(k, w, C, false, c->t->uniform_lengths, &er);
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
