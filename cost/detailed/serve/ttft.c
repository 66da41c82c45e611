/*
 * ttft.c - the closed loop of C requests in flight on one replica, TTFT
 * and TPOT from one step model (docs/serving.md, "TTFT under load"), as
 * a closed-loop benchmark client measures them (a new request is sent
 * when one returns; `rounds` requests per slot after a warm-up):
 *   decode-first  (vLLM V1, TensorRT-LLM, SGLang with mixed chunks): the
 *             running decodes first, then waiting prompts under the token
 *             budget K: `cap` = fit / n_c prompts a step (fit whole
 *             prompts in the room K - d, or one chunk of n_c). A returned
 *             request's next prompt meets a step in flight, W_s = t_step
 *             (1/2 + o) (o = 1 when the engine forms the next step during
 *             this one: an overlap or async scheduler; none when it is
 *             the only request), t_step the mean step (f of them carry
 *             a prompt), then its n_c prefill steps S; prompts
 *             arrive a = C / (OSL - 1 + n_c) a step, rho = a / cap: the
 *             mean M/D/1 wait r / (2 (1 - r)) of a step's service t_m /
 *             cap, r = rho (C - 1) / C the other requests' load; at rho
 *             >= 1 the loop limits itself: R = cap
 *             (OSL - 1 + n_c) run and the others wait their turn (the C >
 *             R wait below). The first round's burst of C prompts adds
 *             (C / cap - 1) / 2 steps t_m, once in `rounds` (later
 *             arrivals come staggered by it);
 *             TPOT = t_dec(C) + C ISL delta / (OSL - 1) (replica.c);
 *   prefill-first (SGLang's default): waiting prompts run in prefill
 *             steps of their own, p = floor(K / ISL) prompts (or a chunk
 *             of K), and every decode waits for them. With fixed lengths
 *             the C requests of a wave finish in the same decode step and
 *             return together: the wave re-forms every round, n =
 *             ceil(C / p) prefill steps t_p; request j of the wave has
 *             its first token after j of them, so TTFT = F + (n + 1) / 2
 *             n_c t_p and TPOT = t_dec(C) + (n - 1) / 2 n_c t_p / (OSL -
 *             1) (each request's decodes wait for the steps after its
 *             own), e2e = n n_c t_p + (OSL - 1) t_dec, the cycle. Lengths
 *             spread (uniform_lengths): the decode-first forms on the
 *             prefill steps apart (sv_prefill_at);
 *   C above C_max (KV capacity or the batch limit) or above R: the
 *             loop runs at C_max and the other requests wait for a slot;
 *             one frees every e2e(C_max) / C_max (Little): TTFT += (C -
 *             C_max) / C_max x e2e(C_max), TPOT is C_max's.
 * F, the front end's per-request time (tokenize, schedule, return), is
 * the stack's request_host_s.
 * Invariant: closed forms on replica.c's steps (two or three step
 * evaluations), no step simulated; e2e = TTFT + (OSL - 1) TPOT and
 * requests/s = C / e2e in every branch (Little's law of the loop).
 */
#include "serve.h"

#include <string.h>

/* e2e and the rate of a loop of C requests from TTFT and TPOT (conc,
 * the requests running, the caller's). */
static void sv_loop_close(const sv_load *w, double C, sv_state *s)
{
    s->e2e = s->ttft + (w->osl - 1.0) * s->tpot;
    s->req_s = C / s->e2e;
}

void sv_slot_wait(const sv_load *w, double wait, sv_state *s)
{
    s->ttft += wait;
    s->ttft_p90 += 0.9 * 2.0 * wait; /* the waits spread evenly over [0, 2 wait] */
    s->ttft_p99 += 0.99 * 2.0 * wait;
    if (s->ttft_wave > 0.0)
        s->ttft_wave += 2.0 * wait;
    s->e2e = s->ttft + (w->osl - 1.0) * s->tpot;
}

/* C requests in a loop whose state s serves fewer of them at its rate:
 * the others wait for a slot (Little: C requests at s->req_s take C /
 * req_s each; the running ones' TPOT unchanged, the rest is waiting
 * before the first token). */
static void sv_loop_add_wait(const sv_load *w, double C, sv_state *s)
{
    sv_slot_wait(w, C / s->req_s - s->e2e, s);
}

/* Prefill-first with fixed lengths: the wave of C. */
static void sv_loop_waves(const sv_model *k, const sv_load *w, double C, sv_state *s)
{
    double o1 = sv_decode_steps(w), td = sv_tpot(k, C, w->cd);
    double nc = w->isl <= w->K ? 1.0 : ceil(w->isl / w->K);
    double len = w->isl / nc, ctx = nc > 1.0 ? 0.5 * (w->isl - len) : 0.0;
    double p = nc > 1.0 ? 1.0 : dt_max(1.0, dt_min(C, floor(w->K / w->isl)));
    double n = ceil(C / p);
    double tp = nc * sv_replica_step(k, p, len, ctx, 0.0, w->cd);
    memset(s, 0, sizeof *s);
    s->conc = C;
    s->ttft = k->host_req + 0.5 * (n + 1.0) * tp;
    s->tpot = td + (o1 > 0.0 ? 0.5 * (n - 1.0) * tp / o1 : 0.0);
    s->ttft_p90 = k->host_req + ceil(0.9 * n) * tp;
    s->ttft_p99 = k->host_req + ceil(0.99 * n) * tp;
    s->ttft_wave = k->host_req + n * tp;
    s->itl_p50 = td;
    s->itl_p99 = n / (n + o1) >= 0.01 ? tp + td : td; /* a wave's prefill steps */
    sv_loop_close(w, C, s);
}

/* Decode-first (or prefill apart with lengths spread): C desynchronized
 * requests. *limit: the requests the prefill capacity keeps running (C
 * when it keeps up). */
static void sv_loop_staggered(const sv_model *k, const sv_load *w, double C, sv_state *s,
                              double *limit)
{
    double o1 = sv_decode_steps(w), per = o1 > 0.0 ? o1 : 1.0;
    double td = sv_tpot(k, C, w->cd);
    sv_prefill_step p;
    sv_prefill_at(k, w, C, C / per, td, &p);
    double cap = dt_max(1.0, p.fit) / p.nc; /* prompts a step admits */
    double a = C / (per + p.nc), rho = a / cap;
    double tds = k->rows <= 1.0 ? td : sv_replica_step(k, 0, 0, 0, C, w->cd);
    double f = dt_min(1.0, a * p.nc / p.np); /* steps that carry a prompt */
    double step = tds + f * (p.t - tds);
    memset(s, 0, sizeof *s);
    s->conc = C;
    s->tpot = td + (o1 > 0.0 ? C * w->isl * p.delta / o1 : 0.0);
    double S = p.nc * p.tp, ws = C > 1.0 ? step * (0.5 + k->overlap) : 0.0;
    /* the queue a prompt meets: the other C - 1 requests' prompts */
    double ro = rho * (C - 1.0) / C;
    double wq = rho < 1.0 ? ro / (2.0 * (1.0 - ro)) * p.tp / cap : 0.0;
    double burst = k->rounds > 0.0 && C > cap ? 0.5 * (C / cap - 1.0) * p.tp / k->rounds : 0.0;
    s->ttft = k->host_req + ws + S + wq + burst;
    s->ttft_p90 = s->ttft_p99 = s->ttft;
    /* fixed lengths: the range's upper end, a wave of C prompts `fit` of
     * them a step beside the decodes (each step its decode part plus the
     * marginal cost of its prompt tokens) */
    double fit = dt_min(dt_max(1.0, p.fit), C);
    double base = p.tp - p.np * p.len * p.delta;
    s->ttft_wave = k->host_req + p.nc * (ceil(C / fit) * base + C * p.len * p.delta);
    sv_itl(td, &p, a, s);
    sv_loop_close(w, C, s);
    *limit = rho < 1.0 ? C : dt_min(C, dt_max(1.0, floor(cap * (per + p.nc))));
}

void sv_closed_loop(const sv_model *k, const sv_load *w, double C, sv_state *s)
{
    if (k->apart && !k->uniform) {
        sv_loop_waves(k, w, C, s);
        return;
    }
    double R = C;
    sv_loop_staggered(k, w, C, s, &R);
    if (R < C) { /* the prefill cannot keep up: R run, the others wait */
        double r2;
        sv_loop_staggered(k, w, R, s, &r2);
        sv_loop_add_wait(w, C, s);
        s->conc = C; /* all admitted, the others in the engine's queue */
    }
}

void sv_loop_wait(const sv_model *k, const sv_load *w, double C, double cmax, sv_state *s)
{
    sv_closed_loop(k, w, C <= cmax ? C : cmax, s);
    if (C > s->conc)
        sv_loop_add_wait(w, C, s);
}
