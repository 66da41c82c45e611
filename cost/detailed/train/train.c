/*
 * train.c - one training step of a transformer (pre-training or
 * fine-tuning) and its figures: the schedule (schedule.c), every stage's
 * tail (tail.c), the step ending with the last; the figures of the
 * busiest device (stage 0): compute, communication by collective and what
 * of it stays exposed, by parallel dimension and tier (llm/breakdown.c),
 * memory-bound and math-bound time, model FLOPs utilization.
 * And the family the top runs (top fidelity.c's band loop): prepared by
 * the tuner (tune.c), timed per scenario under the facts resolved for it.
 * Invariants: work O(pp vpp + layers per stage); nothing is allocated;
 * the band's ends compute the iteration time only.
 */
#include "train.h"

#include <math.h>

/* The figures of the busiest device, stage 0 (its tail t0), of a step
 * of iter seconds under schedule k. */
static void dt_train_figures(const dt_ctx *c, const dt_stages *st, const dt_sched *k,
                             const dt_tail *t0, double iter, result_t *r)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    const dt_layers *yp = &k->y;
    const dt_emb_head *xp = &k->x;
    double mm = (double)c->d.ga;
    const dt_stage *g0 = &st->s[0];
    double p2p = k->p2p, p2p_ag = k->p2p_ag;
    double sync_sum = t0->sync_sum, emb_sync = t0->emb_sync, ag = t0->ag;
    double ag_exposed = t0->ag_exposed, opt_time = t0->opt;
    int64_t ncomp = t0->ncomp, ncomm = t0->ncomm;
    bool z3_last = c->d.zero >= 3 && !c->z3_rs_mb;
    r->throughput_samples_per_s = (double)c->d.gb / iter;
    r->tokens_per_s = (double)c->d.gb * (double)m->seq_len / iter;
    double comp0 = dt_layers_sum(yp, st, g0, DT_LAYER_OFF(comp_fwd)) + dt_layers_sum(yp, st, g0, DT_LAYER_OFF(comp_bwd));
    r->compute_gemm_s = mm * (comp0 + xp->emb_f + xp->emb_b +
                              (c->d.pp == 1 ? xp->head_f + xp->head_b : 0.0)) +
                        opt_time;
    double pass = c->rc == TASK_RECOMPUTE_FULL ? 3.0 : 2.0;
    double tpcomm = pass * dt_layers_sum(yp, st, g0, DT_LAYER_OFF(tp_comm));
    if (yp->fmode == DT_NOBWD) /* frozen layers without a backward: one pass */
        tpcomm -= (pass - 1.0) * ((double)g0->n[DT_FDENSE] * yp->t[DT_FDENSE].tp_comm +
                                  (double)g0->n[DT_FMOE] * yp->t[DT_FMOE].tp_comm +
                                  (double)g0->n[DT_FDENSE + DT_ALT] * yp->t[DT_FDENSE + DT_ALT].tp_comm +
                                  (double)g0->n[DT_FMOE + DT_ALT] * yp->t[DT_FMOE + DT_ALT].tp_comm);
    tpcomm *= mm;
    double z3 =
        mm * (dt_layers_sum(yp, st, g0, DT_LAYER_OFF(zero3_ag)) * (c->z3_ag_mb ? 1.0 : 1.0 / mm) +
              dt_layers_sum(yp, st, g0, DT_LAYER_OFF(zero3_agb)));
    double z3rs = dt_layers_sum(yp, st, g0, DT_LAYER_OFF(zero3_rs)) * (z3_last ? 1.0 : mm);
    double a2a = mm * pass * dt_layers_sum(yp, st, g0, DT_LAYER_OFF(a2a));
    if (c->sp) {
        r->comm_allgather_s = 0.5 * tpcomm;
        r->comm_reducescatter_s = 0.5 * tpcomm;
        r->comm_allreduce_s = 0.0;
    } else {
        r->comm_allgather_s = 0.0;
        r->comm_reducescatter_s = 0.0;
        r->comm_allreduce_s = tpcomm;
    }
    r->comm_allgather_s += z3 + ag;
    r->comm_reducescatter_s += z3rs;
    if (c->d.zero == 0)
        r->comm_allreduce_s += sync_sum + emb_sync;
    else if (c->d.zero < 3)
        r->comm_reducescatter_s += sync_sum + emb_sync;
    else
        r->comm_allreduce_s += z3_last ? 0.0 : sync_sum; /* hybrid replicas */
    r->comm_alltoall_s = a2a;
    /* point-to-point: the stage's pipeline sends and context parallelism's
     * ring passes (forward, backward twice, the recomputed forward) */
    r->comm_p2p_s = mm * ((double)g0->sends * (p2p + p2p_ag) +
                          (pass + 1.0) * dt_layers_sum(yp, st, g0, DT_LAYER_OFF(cp_comm)));
    double comm = r->comm_allreduce_s + r->comm_allgather_s + r->comm_reducescatter_s +
                  r->comm_alltoall_s + r->comm_p2p_s;
    double exposed = iter - r->compute_gemm_s - r->pipeline_bubble_s;
    if (exposed < 0)
        exposed = 0;
    if (exposed > comm)
        exposed = comm;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    /* what bounds the step: memory-bound kernels (the layers', the
     * embedding, the loss), the optimizer, the rest math-bound; exposed
     * communication by dimension (breakdown.c) */
    r->optimizer_s = opt_time;
    r->compute_memory_s = mm * (dt_layers_sum(yp, st, g0, DT_LAYER_OFF(mem_f)) +
                                dt_layers_sum(yp, st, g0, DT_LAYER_OFF(mem_b)) + xp->emb_comp +
                                xp->emb_b + (c->d.pp == 1 ? xp->head_mf + xp->head_mb : 0.0));
    r->compute_math_s = dt_max(0.0, r->compute_gemm_s - r->compute_memory_s - opt_time);
    double est[DT_B_DIMS] = {
        [DT_B_TP] = mm * dt_layers_sum(yp, st, g0, DT_LAYER_OFF(tp_exp)),
        [DT_B_CP] = mm * dt_layers_sum(yp, st, g0, DT_LAYER_OFF(cp_exp)),
        [DT_B_EP] = a2a,
        [DT_B_PP] = mm * (double)g0->sends * (p2p + p2p_ag),
        [DT_B_DP] = -1.0};
    dt_breakdown_comm(c, exposed, est, r);
    r->events_compute = ncomp + 2; /* layers, embedding, optimizer */
    r->events_comm = ncomm + 1 + (ag_exposed > 0 ? 1 : 0);
    double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16];
    /* model FLOPs: forward, plus per layer two backward GEMM passes when
     * trained, one when it only passes data gradients down */
    double lt = (double)(m->layers - yp->frozen), ld = yp->fmode == DT_DGRAD ? (double)yp->frozen : 0.0;
    double ffac = 1.0 + (2.0 * lt + ld) / (double)m->layers;
    r->mfu = ffac * c->model_flops * (double)c->d.gb /
             (iter * (double)c->p->system.devices * peak);
}

status_code dt_train_time(const dt_ctx *c, const dt_split *sp, const dt_stages *st, engine *e,
                          result_t *r, bool figures)
{
    (void)e;
    dt_sched k;
    dt_sched_build(c, st, &k);
    r->pipeline_bubble_s = k.bubble;
    /* every stage's tail; the step ends with the last. A middle stage
     * made like the one before it (same layers, chunks, sends) ends no
     * later: its tail is the same, shifted by its trailing idle, which
     * grows with s. */
    dt_tail tl, t0;
    t0.memo_trained = t0.memo_ag = 0.0;
    dt_tail_run(c, sp, st, &k, 0, NULL, &t0);
    double iter = t0.end;
    tl.memo_trained = t0.memo_trained;
    tl.memo_ag = t0.memo_ag;
    for (int64_t s = 1; s < c->d.pp; s++) {
        if (s > 1 && s < c->d.pp - 1 && st->same[s])
            continue;
        if (dt_tail_bound(c, st, &k, s, &t0) <= iter)
            continue;
        dt_tail_run(c, sp, st, &k, s, NULL, &tl);
        iter = tl.end > iter ? tl.end : iter;
    }
    r->iteration_time_s = iter;
    if (figures)
        dt_train_figures(c, st, &k, &t0, iter, r);
    return STATUS_OK;
}

/* ---- the family (core.h dt_family; its state a dt_eval) */

static status_code dt_train_prepare(void *self, const point_t *p, engine *e, result_t *r)
{
    return dt_tune_prepare(p, e, self, r);
}

/* Scenario sc's step: the facts resolved again when they are another
 * scenario's (the preparation leaves the nominal ones). */
static status_code dt_train_at(void *self, stack_scenario sc, engine *e, result_t *r)
{
    dt_eval *v = self;
    if (v->c.scenario != sc)
        dt_facts_resolve(&v->c, sc);
    return dt_train_time(&v->c, &v->sp, &v->st, e, r, sc == STACK_NOMINAL);
}

const dt_family dt_train_family = {dt_train_prepare, dt_train_at, NULL, false};
