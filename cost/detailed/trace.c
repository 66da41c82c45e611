/*
 * trace.c - the whole iteration of a detailed transformer point as
 * events, for a trace viewer: every pipeline stage on its own tracks
 * (compute; TP, CP, EP, PP and DP communication), forward, recompute and
 * backward of every micro-batch and chunk, the gaps between them (the
 * bubbles), gradient reduction, optimizer and parameter gathers;
 * inference as prefill, then decode steps.
 *
 * Durations come from the model (layer.c, comm.c, train.c's ends); the
 * schedule is simulated op by op in the order a stage runs them: GPipe
 * (every forward, then every backward), 1F1B (pp - s - 1 warm-up
 * forwards, then one forward one backward, then the rest), or
 * Megatron's interleaved 1F1B (forward op k is chunk (k / pp) mod v of
 * micro-batch (k / (pp v)) pp + k mod pp; 2 (pp - s - 1) + (v - 1) pp
 * warm-up ops). A forward waits for the same micro-batch's previous
 * chunk and its send, a backward for the next chunk's backward (the last
 * chunk's for its own forward). The makespan it finds is close to, not
 * equal to, the closed form train.c evaluates (which takes the slowest
 * stage's pace for every micro-batch); detailed_trace returns both.
 * Collectives are drawn at the start of the compute they belong to with
 * their full duration (what overlaps shows as overlap). Allocates O(m
 * chunks) doubles for the simulation; pure otherwise.
 */
#include "dt.h"

#include <stdlib.h>
#include <string.h>

typedef struct dt_tr {
    const dt_ctx *c;
    const dt_split *sp;
    const dt_layers *y;
    const dt_ends *x;
    detailed_event_fn fn;
    void *ctx;
    double end;
} dt_tr;

static void dt_tr_emit(dt_tr *t, int64_t stage, int track, const char *name, int64_t mb,
                       int64_t chunk, double start, double dur, double bytes, int64_t group)
{
    if (!(dur > 0.0))
        return;
    detailed_event ev = {stage, track, name, mb, chunk, start, dur, bytes, group};
    t->fn(t->ctx, &ev);
    if (start + dur > t->end)
        t->end = start + dur;
}

/* Sum over layers [lo, hi) of a per-layer figure. */
static double dt_tr_sum(const dt_tr *t, int64_t lo, int64_t hi, size_t off)
{
    double s = 0.0;
    for (int64_t i = lo; i < hi; i++) {
        const dt_layer *L = &t->y->t[dt_layer_type(t->c, i)];
        s += *(const double *)(const void *)((const char *)L + off);
    }
    return s;
}

#define DT_TR(f) offsetof(dt_layer, f)

/* The simulation's state: per micro-batch and chunk the end of its
 * forward and backward (-1 not yet), per stage when its compute and its
 * DP track are free and how many forwards and backwards it ran. */
typedef struct dt_sim {
    double *fend, *bend, *free_at, *dp_free;
    int64_t *nf, *nb;
} dt_sim;

static void dt_sim_free(dt_sim *s)
{
    free(s->fend);
    free(s->bend);
    free(s->free_at);
    free(s->dp_free);
    free(s->nf);
    free(s->nb);
}

static status_code dt_sim_alloc(dt_sim *s, int64_t ops, int64_t pp)
{
    s->fend = malloc((size_t)ops * sizeof *s->fend);
    s->bend = malloc((size_t)ops * sizeof *s->bend);
    s->free_at = calloc((size_t)pp, sizeof *s->free_at);
    s->dp_free = calloc((size_t)pp, sizeof *s->dp_free);
    s->nf = calloc((size_t)pp, sizeof *s->nf);
    s->nb = calloc((size_t)pp, sizeof *s->nb);
    if (!s->fend || !s->bend || !s->free_at || !s->dp_free || !s->nf || !s->nb) {
        dt_sim_free(s);
        return STATUS_NOMEM;
    }
    for (int64_t i = 0; i < ops; i++)
        s->fend[i] = s->bend[i] = -1.0;
    return STATUS_OK;
}

/* Forward op index k of a stage -> micro-batch and local chunk. */
static void dt_tr_fwd_op(int64_t k, int64_t pp, int64_t v, int64_t *mb, int64_t *j)
{
    if (v <= 1) {
        *mb = k;
        *j = 0;
        return;
    }
    int64_t in = k % (pp * v);
    *j = in / pp;
    *mb = (k / (pp * v)) * pp + in % pp;
}

static status_code dt_tr_train(dt_tr *t)
{
    const dt_ctx *c = t->c;
    int64_t pp = c->d.pp, v = c->d.v, m = c->d.ga, C = t->sp->chunks;
    /* interleaving needs whole groups of pp micro-batches */
    if (v > 1 && m % pp != 0)
        return STATUS_INFEASIBLE_BATCH;
    dt_sim sim;
    if (dt_sim_alloc(&sim, m * C, pp) != STATUS_OK)
        return STATUS_NOMEM;
    double *fend = sim.fend, *bend = sim.bend, *free_at = sim.free_at, *dp_free = sim.dp_free;
    int64_t *nf = sim.nf, *nb = sim.nb;
    double h = (double)c->m->hidden, tp = (double)c->d.tp;
    double full = c->tok * h * c->ab;
    bool split = c->sp || (c->st->pp_send == STACK_PP_SCATTER_GATHER && c->d.tp > 1);
    double send = 0.0;
    if (pp > 1) {
        send = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP], split ? full / tp : full);
        if (split && !c->sp)
            send += dt_coll(c, TOPO_ALLGATHER, c->d.tp, c->stride[DT_TP], full);
    }
    int64_t total = 2 * m * v, done = 0;
    bool gpipe = c->t->schedule == TASK_SCHEDULE_GPIPE;
    while (done < total * pp) {
        bool progress = false;
        for (int64_t s = 0; s < pp; s++) {
            for (;;) {
                int64_t n = m * v;
                if (nf[s] + nb[s] >= 2 * n)
                    break;
                /* the stage's next op: forward or backward */
                int64_t warm = gpipe ? n : v > 1 ? 2 * (pp - s - 1) + (v - 1) * pp : pp - s - 1;
                if (warm > n)
                    warm = n;
                bool fwd;
                if (nf[s] < warm)
                    fwd = true;
                else if (nf[s] >= n)
                    fwd = false;
                else
                    fwd = nb[s] >= nf[s] - warm; /* steady state: one forward, one backward */
                int64_t mb, j, k = fwd ? nf[s] : nb[s];
                dt_tr_fwd_op(k, pp, v, &mb, &j);
                if (!fwd)
                    j = v - 1 - j;
                int64_t g = j * pp + s; /* global chunk */
                double ready;
                if (fwd)
                    ready = g == 0 ? 0.0 : fend[mb * C + g - 1];
                else
                    ready = g == C - 1 ? fend[mb * C + g] : bend[mb * C + g + 1];
                if (ready < 0.0)
                    break; /* waits for another stage */
                if ((fwd && g > 0) || (!fwd && g < C - 1))
                    ready += send;
                double start = ready > free_at[s] ? ready : free_at[s];
                int64_t lo, hi;
                dt_chunk_range(c, t->sp, g, &lo, &hi);
                const dt_layers *y = t->y;
                double tpc = dt_tr_sum(t, lo, hi, DT_TR(tp_comm));
                double cpc = dt_tr_sum(t, lo, hi, DT_TR(cp_comm));
                double a2a = dt_tr_sum(t, lo, hi, DT_TR(a2a));
                if (fwd) {
                    double dur = dt_tr_sum(t, lo, hi, DT_TR(fwd)) +
                                 (hi > lo ? y->t[dt_layer_type(c, lo)].z3_fhead : 0.0) +
                                 (g == 0 ? t->x->emb_f : 0.0) + (g == C - 1 ? t->x->head_f : 0.0);
                    dt_tr_emit(t, s, DETAILED_TRACK_COMPUTE, "forward", mb, j, start, dur, 0, 0);
                    dt_tr_emit(t, s, DETAILED_TRACK_TP, c->sp ? "all-gather + reduce-scatter (tp)"
                                                             : "all-reduce (tp)",
                               mb, j, start, tpc, full, c->d.tp);
                    dt_tr_emit(t, s, DETAILED_TRACK_CP, "ring attention (cp)", mb, j, start, cpc,
                               full, c->d.cp);
                    dt_tr_emit(t, s, DETAILED_TRACK_EP, "dispatch + combine (ep)", mb, j, start,
                               a2a, full, c->d.ep);
                    if (c->d.zero >= 3 && (c->z3_ag_mb || mb == 0))
                        dt_tr_emit(t, s, DETAILED_TRACK_DP, "all-gather parameters (zero3)", mb,
                                   j, start, dt_tr_sum(t, lo, hi, DT_TR(zero3_ag)),
                                   dt_layer_params(c, false) * c->ab, c->zs);
                    fend[mb * C + g] = start + dur;
                    if (g < C - 1)
                        dt_tr_emit(t, s, DETAILED_TRACK_PP, "send activation (pp)", mb, j,
                                   start + dur, send, split ? full / tp : full, 2);
                    free_at[s] = start + dur;
                    nf[s]++;
                } else {
                    double rec = dt_tr_sum(t, lo, hi, DT_TR(recomp));
                    double dur = dt_tr_sum(t, lo, hi, DT_TR(bwd)) +
                                 (hi > lo ? y->t[dt_layer_type(c, hi - 1)].z3_bhead : 0.0) +
                                 (g == 0 ? t->x->emb_b : 0.0) + (g == C - 1 ? t->x->head_b : 0.0);
                    dt_tr_emit(t, s, DETAILED_TRACK_COMPUTE, "recompute", mb, j, start, rec, 0, 0);
                    dt_tr_emit(t, s, DETAILED_TRACK_COMPUTE, "backward", mb, j, start + rec,
                               dur - rec, 0, 0);
                    dt_tr_emit(t, s, DETAILED_TRACK_TP, c->sp ? "all-gather + reduce-scatter (tp)"
                                                             : "all-reduce (tp)",
                               mb, j, start, tpc, full, c->d.tp);
                    dt_tr_emit(t, s, DETAILED_TRACK_CP, "ring attention (cp)", mb, j, start,
                               2.0 * cpc, full, c->d.cp);
                    dt_tr_emit(t, s, DETAILED_TRACK_EP, "dispatch + combine (ep)", mb, j, start,
                               a2a, full, c->d.ep);
                    if (c->d.zero >= 3) {
                        dt_tr_emit(t, s, DETAILED_TRACK_DP, "all-gather parameters (zero3)", mb, j,
                                   start, dt_tr_sum(t, lo, hi, DT_TR(zero3_agb)),
                                   dt_layer_params(c, false) * c->ab, c->zs);
                        if (c->z3_rs_mb || mb == m - 1)
                            dt_tr_emit(t, s, DETAILED_TRACK_DP, "reduce-scatter gradients (zero3)",
                                       mb, j, start + dur * 0.5,
                                       dt_tr_sum(t, lo, hi, DT_TR(zero3_rs)),
                                       dt_layer_params(c, false) * c->gbytes, c->zs);
                    }
                    if ((c->d.zero < 3 || !c->z3_rs_mb) && mb == m - 1) {
                        /* the last micro-batch's gradients, one after the
                         * other on the stage's DP track */
                        double sync = dt_tr_sum(t, lo, hi,
                                                c->d.zero < 3 ? DT_TR(grad_sync) : DT_TR(zero3_rs));
                        double at = start > dp_free[s] ? start : dp_free[s];
                        if (!c->t->overlap_dp_comm)
                            at = start + dur > dp_free[s] ? start + dur : dp_free[s];
                        dt_tr_emit(t, s, DETAILED_TRACK_DP,
                                   c->d.zero == 0 ? "all-reduce gradients (dp)"
                                                  : "reduce-scatter gradients (dp)",
                                   mb, j, at, sync, dt_layer_params(c, false) * c->gbytes,
                                   c->d.zero == 0 ? c->dpcp : c->zs);
                        if (sync > 0.0)
                            dp_free[s] = at + sync;
                    }
                    bend[mb * C + g] = start + dur;
                    if (g > 0)
                        dt_tr_emit(t, s, DETAILED_TRACK_PP, "send gradient (pp)", mb, j,
                                   start + dur, send, split ? full / tp : full, 2);
                    free_at[s] = start + dur;
                    nb[s]++;
                }
                done++;
                progress = true;
            }
        }
        if (!progress)
            break;
    }
    status_code rc = done == total * pp ? STATUS_OK : STATUS_INFEASIBLE_SHAPE;
    /* per stage: the optimizer once its gradients are reduced, then
     * ZeRO 1/2's parameter all-gather (what the next forward cannot
     * hide) */
    double f = c->t->overlap_dp_comm ? c->f.dpo : 0.0;
    for (int64_t s = 0; rc == STATUS_OK && s < pp; s++) {
        double local = (double)dt_stage_layers(c, t->sp, s) * dt_layer_params(c, false);
        double opt = hw_mem_time(c->hw, c->st->optimizer_step_bytes * local /
                                            (c->d.zero >= 1 ? (double)c->zs : 1.0)) /
                     c->f.mem;
        double at = free_at[s] > dp_free[s] ? free_at[s] : dp_free[s];
        dt_tr_emit(t, s, DETAILED_TRACK_COMPUTE, "optimizer", -1, -1, at, opt, 0, 0);
        if (c->d.zero == 1 || c->d.zero == 2) {
            double ag = dt_dpcoll(c, TOPO_ALLGATHER, c->zs, c->s_dpcp, local * c->ab);
            double fwd = fend[0 * C + s] > 0 ? fend[0 * C + s] : 0.0; /* its first forward */
            double exposed = (1.0 - f) * ag + dt_max(0.0, f * ag - fwd);
            dt_tr_emit(t, s, DETAILED_TRACK_DP, "all-gather parameters (exposed)", -1, -1,
                       at + opt, exposed, local * c->ab, c->zs);
        }
    }
    dt_sim_free(&sim);
    return rc;
}

/* Serving: one request's life in the steady state the evaluation
 * resolves (serve_steady.c): its TTFT, then a step per further token of
 * TPOT, each with its share of TP all-reduce; the same figures the
 * result carries. */
static status_code dt_tr_infer(dt_tr *t, const dt_stages *st)
{
    const dt_ctx *c = t->c;
    result_t r;
    memset(&r, 0, sizeof r);
    status_code rc = dt_infer_time(c, st, &r);
    if (rc != STATUS_OK)
        return rc;
    double tok = (double)r.global_batch / (double)c->d.dp * (double)c->m->hidden * c->ab;
    double ar = r.iteration_time_s > 0.0 ? r.comm_allreduce_s / r.iteration_time_s : 0.0;
    dt_tr_emit(t, 0, DETAILED_TRACK_COMPUTE, "prefill", -1, -1, 0.0,
               r.ttft_s, 0, 0);
    int64_t steps = c->t->decode_tokens;
    for (int64_t i = 1; i < steps; i++) {
        double start = r.ttft_s + (double)(i - 1) * r.tpot_s;
        dt_tr_emit(t, 0, DETAILED_TRACK_COMPUTE, "decode step", i, -1, start, r.tpot_s,
                   0, 0);
        if (c->d.tp > 1)
            dt_tr_emit(t, 0, DETAILED_TRACK_TP, "all-reduce (tp)", i, -1, start,
                       ar * r.tpot_s, tok, c->d.tp);
    }
    return STATUS_OK;
}

status_code detailed_trace(const point_t *p, detailed_event_fn fn, void *ctx, double *end_s)
{
    if (p->model.kind != MODEL_LLM)
        return STATUS_INVALID_FIDELITY;
    const char *where = NULL;
    status_code rc = eval_check(p, &where);
    if (rc != STATUS_OK)
        return rc;
    dt_ctx c;
    stack_desc ideal;
    dt_split sp;
    dt_stages st;
    dt_mem mem;
    result_t r;
    engine e;
    dt_memo memo;
    engine_init(&e, false);
    rc = dt_prepare(p, &e, &c, &ideal, &memo, &sp, &st, &mem, &r);
    engine_free(&e);
    if (rc != STATUS_OK)
        return rc;
    dt_layers y;
    dt_ends x;
    dt_tr t = {&c, &sp, &y, &x, fn, ctx, 0.0};
    if (p->task.kind == TASK_INFERENCE) {
        rc = dt_tr_infer(&t, &st);
    } else {
        dt_layers_build(&c, &y);
        dt_ends_cost(&c, &y, &x);
        rc = dt_tr_train(&t);
    }
    if (end_s)
        *end_s = t.end;
    return rc;
}
