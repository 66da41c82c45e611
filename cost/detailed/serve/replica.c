/*
 * replica.c - one serving replica's steps on the step cost of step.c, the
 * building blocks of the steady state (steady.c) and of finite runs
 * (burst.c):
 *   a step    pp stage steps of 1/pp of the work, plus the sends between
 *             them (sv_replica_step);
 *   TPOT      a decode-only step of d sequences per token (with
 *             speculation: the verify and draft steps over the tokens
 *             accepted; sv_tpot);
 *   prefill   the step that carries a prompt's chunk beside d decodes
 *             under the engine's token budget K (several prompts packed
 *             when they queue; a step of its own when the engine runs
 *             prefill apart), its marginal time per prefill token delta;
 *   ITL       p50 a decode step; p99 the prefill step once a fraction
 *             f >= 1 % of the steps carries one (f = arrivals per step x
 *             chunks per prompt / prompts packed per prefill step).
 * The closed loop on these steps: ttft.c.
 * Invariant: closed forms only; no step is simulated.
 */
#include "serve.h"


double sv_replica_step(const sv_model *k, double np, double len, double ctx, double d, double cd)
{
    if (k->pp <= 1.0)
        return sv_step(k, np, len, ctx, d, cd, NULL);
    return k->pp * sv_step(k, np / k->pp, len, ctx, d / k->pp, cd, NULL) +
           (k->pp - 1.0) * k->p2p_tok;
}

double sv_tpot(const sv_model *k, double d, double cd)
{
    if (k->pp <= 1.0)
        return sv_spec_decode_token(k, d, cd);
    return k->pp * sv_spec_decode_token(k, d / k->pp, cd) + (k->pp - 1.0) * k->p2p_tok / k->spec_e;
}

/* The step of d decodes alone, sv_replica_step(k, 0, 0, 0, d, cd), from the time
 * per output token sv_tpot(k, d, cd) = `tok` that the callers have: the
 * same step without speculation. */
static double sv_decode_step(const sv_model *k, double d, double cd, double tok)
{
    return k->rows <= 1.0 ? tok : sv_replica_step(k, 0, 0, 0, d, cd);
}

void sv_prefill_at(const sv_model *k, const sv_load *w, double d, double arrivals, double tok,
                   sv_prefill_step *o)
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
    double td = sv_decode_step(k, d, cd, tok);
    if (k->apart) {
        o->tp = sv_replica_step(k, o->np, o->len, ctx, 0, cd);
        o->t = o->tp + td;
        o->delta = o->tp / (o->np * o->len);
    } else {
        o->t = o->tp = sv_replica_step(k, o->np, o->len, ctx, d, cd);
        o->delta = (o->t - td) / (o->np * o->len);
    }
}

/* Inter-token latency: a fraction f = arrivals per step x chunks per
 * prompt / prompts per prefill step of the steps carries a prefill (its
 * time p->t); the median is a decode step (td: prompts pack into few
 * steps), the 99th percentile the prefill step once f >= 1 %. */
void sv_itl(double td, const sv_prefill_step *p, double arrivals, sv_state *s)
{
    double f = arrivals * p->nc / p->np;
    s->itl_p50 = td;
    s->itl_p99 = f >= 0.01 ? p->t : td;
}
