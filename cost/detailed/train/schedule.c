/*
 * schedule.c - the closed-form schedule of a training step. The cost of
 * one layer per micro-batch (layers.c) gives each pipeline chunk's
 * forward and backward; a stage's time per micro-batch is the sum of its
 * chunks (llm/pipeline.c's split), plus the embedding on the first
 * stage, the output head and loss on the last (emb_head.c), the exposed
 * ends of ZeRO 3's gather chains and the point-to-point sends of its
 * chunk boundaries. The pipeline's span is llm/pipeline.c's schedule
 * time; each stage's share of the bubble is its idle before its first op
 * and after its last (dt_sched_lead, dt_sched_trail).
 * Invariant: the schedule is the evaluation's and the trace's (the top's
 * trace.c lays it out in time), never a second model.
 */
#include "train.h"

#include <math.h>

/* Forward sends of stage s per micro-batch (chunks not last), and backward
 * ones (chunks not first). */
static double dt_sched_fwd_sends(const dt_ctx *c, int64_t s)
{
    return (double)c->d.v - (s == c->d.pp - 1 ? 1.0 : 0.0);
}

void dt_sched_build(const dt_ctx *c, const dt_stages *st, dt_sched *k)
{
    const model_t *m = c->m;
    dt_layers_build(c, &k->y);
    dt_emb_head_cost(c, &k->y, &k->x);
    const dt_layers *y = &k->y;
    double h = (double)m->hidden, tp = (double)c->d.tp, v = (double)c->d.v;

    /* point-to-point per chunk boundary and pass: sequence parallel (or
     * the scatter/gather scheme) sends 1/tp and all-gathers it inside
     * the node */
    k->p2p = k->p2p_ag = 0.0;
    if (c->d.pp > 1) {
        double full = c->tok * h * c->ab;
        bool split = c->sp || (c->st->pp_send == STACK_PP_SCATTER_GATHER && c->d.tp > 1);
        k->p2p = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP], split ? full / tp : full);
        if (split && !c->sp)
            k->p2p_ag = dt_group_coll(c, TOPO_ALLGATHER, DT_G_TP, full);
    }

    /* stages: their layers, the exposed first gathers of each chunk's
     * passes (ZeRO 3), their sends, the embedding and the head */
    double tmax = 0.0, tsum = 0.0, send = k->p2p + k->p2p_ag;
    for (int64_t s = 0; s < c->d.pp; s++) {
        if (s > 1 && s < c->d.pp - 1 && st->same[s]) {
            /* a middle stage like the one before it: the same sums */
            k->tf[s] = k->tf[s - 1];
            k->ts[s] = k->ts[s - 1];
            tmax = k->ts[s] > tmax ? k->ts[s] : tmax;
            tsum += k->ts[s];
            continue;
        }
        const dt_stage *g = &st->s[s];
        double tf = dt_layers_sum(y, st, g, DT_LAYER_OFF(fwd)) +
                    dt_layers_ends_sum(y, st, g->first, DT_LAYER_OFF(z3_fhead)) + dt_sched_fwd_sends(c, s) * send;
        double tb = dt_layers_sum(y, st, g, DT_LAYER_OFF(bwd)) +
                    dt_layers_ends_sum(y, st, g->last, DT_LAYER_OFF(z3_bhead)) +
                    ((double)g->sends - dt_sched_fwd_sends(c, s)) * send;
        if (s == 0) {
            tf += k->x.emb_f;
            tb += k->x.emb_b;
        }
        if (s == c->d.pp - 1) {
            tf += k->x.head_f;
            tb += k->x.head_b;
        }
        k->tf[s] = tf;
        k->ts[s] = tf + tb;
        tmax = k->ts[s] > tmax ? k->ts[s] : tmax;
        tsum += k->ts[s];
    }
    k->tmax = tmax;
    k->pipe = dt_pipe_schedule_time(tmax, tsum, (double)c->d.ga, v);
    k->bubble = (tsum - tmax) / v;
    k->f = c->t->overlap_dp_comm ? c->f.dpo : 0.0;
    k->params_dense = dt_shape_layer_params(c, false);
    k->params_moe = m->d.experts > 0 ? dt_shape_layer_params(c, true) : k->params_dense;
    /* ZeRO 3 gathering once per step: the first stage's gathers beside
     * the compute of its first forward (its collectives are no window: a
     * faster collective never leaves a gather more exposed) */
    k->z3x = 0.0;
    if (c->d.zero >= 3 && !c->z3_ag_mb) {
        const dt_stage *g0 = &st->s[0];
        double ag0 = dt_layers_sum(y, st, g0, DT_LAYER_OFF(zero3_ag));
        double win = dt_layers_sum(y, st, g0, DT_LAYER_OFF(comp_fwd)) + k->x.emb_comp;
        k->z3x = (1.0 - k->f) * ag0 + fmax(0.0, k->f * ag0 - win);
    }
}

double dt_sched_lead(const dt_ctx *c, const dt_sched *k, int64_t s)
{
    if (c->d.pp <= 1 || !(k->ts[s] > 0))
        return 0.0;
    return k->bubble * (double)s / (double)(c->d.pp - 1) * (k->tf[s] / k->ts[s]);
}

double dt_sched_trail(const dt_ctx *c, const dt_sched *k, int64_t s)
{
    if (c->d.pp <= 1 || !(k->ts[s] > 0))
        return 0.0;
    return k->bubble * (double)s / (double)(c->d.pp - 1) * (1.0 - k->tf[s] / k->ts[s]);
}
