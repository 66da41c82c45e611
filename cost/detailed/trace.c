/*
 * trace.c - the whole iteration of a detailed transformer point as
 * events, for a trace viewer: every pipeline stage on its own tracks
 * (compute; TP, CP, EP, PP and DP communication), forward, recompute and
 * backward of every micro-batch and chunk, the gaps between them (the
 * bubbles), gradient reduction, optimizer and parameter gathers;
 * inference as prefill, then decode steps.
 *
 * It is the evaluation's own schedule (train/'s dt_sched and
 * dt_tail_run), laid out in time, not a second model: every stage runs
 * its ops in its schedule's order (GPipe: every forward, then every
 * backward; 1F1B: pp - s - 1 warm-up forwards, then one forward one
 * backward, then the rest; Megatron's interleaved 1F1B: forward op k is
 * chunk (k / pp) mod v of micro-batch (k / (pp v)) pp + k mod pp after
 * 2 (pp - s - 1) + (v - 1) pp warm-up ops) at the slowest stage's pace,
 * its share of the closed form's bubble before its first op, after its
 * warm-up forwards and after its last op (the gaps); then its tail: the
 * last backward's gradient collectives at the times of the evaluation's
 * two-stream recurrence, what they leave, the optimizer and ZeRO 1/2's
 * exposed gather. The trace ends at the evaluated iteration time.
 * Collectives inside a pass are drawn at its start with their full
 * duration (what overlaps shows as overlap). Inference: prefill, then
 * decode steps (serve/'s steady state).
 * Invariant: the trace's events come from the evaluation's own
 * schedule and tails (or its serving figures), so it ends at the
 * evaluated iteration time; it allocates one schedule, freed before it
 * returns.
 */
#include "top.h"

#include "serve/serve.h"
#include "train/train.h"

#include <stdlib.h>
#include <string.h>

typedef struct dt_trace {
    const dt_ctx *c;
    const dt_split *sp;
    const dt_layers *y;
    const dt_emb_head *x;
    detailed_event_fn fn;
    void *ctx;
    double end;
} dt_trace;

static void dt_trace_emit(dt_trace *t, int64_t stage, int track, const char *name, int64_t mb,
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
static double dt_trace_sum(const dt_trace *t, int64_t lo, int64_t hi, size_t off)
{
    double s = 0.0;
    for (int64_t i = lo; i < hi; i++) {
        const dt_layer *L = &t->y->t[dt_pipe_layer_type(t->c, i)];
        s += DT_LAYER_FIELD(L, off);
    }
    return s;
}

/* Forward op index k of a stage -> micro-batch and local chunk. */
static void dt_trace_fwd_op(int64_t k, int64_t pp, int64_t v, int64_t *mb, int64_t *j)
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

/* One op (forward or backward of global chunk g, micro-batch mb, local
 * chunk j) of stage s at time t: its events; returns its duration (the
 * schedule's: layers, ZeRO 3 chain ends, embedding, head, send). */
static double dt_trace_op(dt_trace *t, const dt_sched *k, int64_t s, bool fwd, int64_t g,
                          int64_t mb, int64_t j, double at)
{
    const dt_ctx *c = t->c;
    int64_t C = t->sp->chunks;
    double h = (double)c->m->hidden, tp = (double)c->d.tp, full = c->tok * h * c->ab;
    bool split = c->sp || (c->st->pp_send == STACK_PP_SCATTER_GATHER && c->d.tp > 1);
    double send = k->p2p + k->p2p_ag;
    int64_t lo, hi;
    dt_pipe_chunk_range(c, t->sp, g, &lo, &hi);
    const dt_layers *y = &k->y;
    double tpc = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(tp_comm));
    double cpc = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(cp_comm));
    double a2a = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(a2a));
    const char *tpn = c->sp ? "all-gather + reduce-scatter (tp)" : "all-reduce (tp)";
    double dur;
    if (fwd) {
        dur = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(fwd)) +
              (hi > lo ? y->t[dt_pipe_layer_type(c, lo)].z3_fhead : 0.0) +
              (g == 0 ? k->x.emb_f : 0.0) + (g == C - 1 ? k->x.head_f : 0.0);
        dt_trace_emit(t, s, DETAILED_TRACK_COMPUTE, "forward", mb, j, at, dur, 0, 0);
        dt_trace_emit(t, s, DETAILED_TRACK_TP, tpn, mb, j, at, tpc, full, c->d.tp);
        dt_trace_emit(t, s, DETAILED_TRACK_CP, "ring attention (cp)", mb, j, at, cpc, full, c->d.cp);
        dt_trace_emit(t, s, DETAILED_TRACK_EP, "dispatch + combine (ep)", mb, j, at, a2a, full,
                      c->d.ep);
        if (c->d.zero >= 3 && (c->z3_ag_mb || mb == 0))
            dt_trace_emit(t, s, DETAILED_TRACK_DP, "all-gather parameters (zero3)", mb, j, at,
                          dt_trace_sum(t, lo, hi, DT_LAYER_OFF(zero3_ag)),
                          dt_shape_layer_params(c, false) * c->ab, c->zs);
        if (g < C - 1) {
            dt_trace_emit(t, s, DETAILED_TRACK_PP, "send activation (pp)", mb, j, at + dur, send,
                          split ? full / tp : full, 2);
            dur += send;
        }
        return dur;
    }
    double rec = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(recomp));
    dur = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(bwd)) +
          (hi > lo ? y->t[dt_pipe_layer_type(c, hi - 1)].z3_bhead : 0.0) +
          (g == 0 ? k->x.emb_b : 0.0) + (g == C - 1 ? k->x.head_b : 0.0);
    dt_trace_emit(t, s, DETAILED_TRACK_COMPUTE, "recompute", mb, j, at, rec, 0, 0);
    dt_trace_emit(t, s, DETAILED_TRACK_COMPUTE, "backward", mb, j, at + rec, dur - rec, 0, 0);
    dt_trace_emit(t, s, DETAILED_TRACK_TP, tpn, mb, j, at, tpc, full, c->d.tp);
    dt_trace_emit(t, s, DETAILED_TRACK_CP, "ring attention (cp)", mb, j, at, 2.0 * cpc, full,
                  c->d.cp);
    dt_trace_emit(t, s, DETAILED_TRACK_EP, "dispatch + combine (ep)", mb, j, at, a2a, full, c->d.ep);
    if (c->d.zero >= 3) {
        /* the gathers, then the reduce-scatters: the pass lasts at least
         * both (llm/comm.c's dt_comm_overlap) */
        double agb = dt_trace_sum(t, lo, hi, DT_LAYER_OFF(zero3_agb));
        dt_trace_emit(t, s, DETAILED_TRACK_DP, "all-gather parameters (zero3)", mb, j, at, agb,
                      dt_shape_layer_params(c, false) * c->ab, c->zs);
        if (c->z3_rs_mb)
            dt_trace_emit(t, s, DETAILED_TRACK_DP, "reduce-scatter gradients (zero3)", mb, j,
                          at + agb, dt_trace_sum(t, lo, hi, DT_LAYER_OFF(zero3_rs)),
                          dt_shape_layer_params(c, false) * c->gbytes, c->zs);
    }
    if (g > 0) {
        dt_trace_emit(t, s, DETAILED_TRACK_PP, "send gradient (pp)", mb, j, at + dur, send,
                      split ? full / tp : full, 2);
        dur += send;
    }
    return dur;
}

/* The tail's events of one stage (dt_tail_run's reports). */
typedef struct dt_trace_tail {
    dt_trace *t;
    int64_t s;
} dt_trace_tail;

static void dt_trace_tail_event(void *ctx, int kind, int64_t layer, double start, double dur)
{
    dt_trace_tail *a = ctx;
    const dt_ctx *c = a->t->c;
    int64_t m = c->d.ga;
    bool z3 = c->d.zero >= 3;
    const char *sync = z3 ? "reduce-scatter gradients (zero3)"
                      : c->d.zero == 0 ? "all-reduce gradients (dp)"
                                       : "reduce-scatter gradients (dp)";
    int64_t group = c->d.zero == 0 ? c->dpcp : c->zs;
    double bytes = dt_shape_layer_params(c, false) * c->gbytes;
    if (kind == DT_EMIT_SYNC)
        dt_trace_emit(a->t, a->s, DETAILED_TRACK_DP, sync, m - 1, layer, start, dur, bytes, group);
    else if (kind == DT_EMIT_SLOWED)
        dt_trace_emit(a->t, a->s, DETAILED_TRACK_COMPUTE, "backward (beside gradient collectives)",
                      m - 1, -1, start, dur, 0, 0);
    else
        dt_trace_emit(a->t, a->s, DETAILED_TRACK_DP, "gradient reduction (not overlapped)", m - 1,
                      -1, start, dur, bytes, group);
}

/* The step from the closed-form schedule the evaluation uses (train/schedule.c's
 * dt_sched): every stage's ops in its schedule's order at the slowest
 * stage's pace, its share of the bubble before its first op, after its
 * warm-up forwards and after its last op; then its tail. */
static status_code dt_trace_train(dt_trace *t, const dt_stages *st)
{
    const dt_ctx *c = t->c;
    int64_t pp = c->d.pp, v = c->d.v, m = c->d.ga;
    if (!dt_ctx_batch_ok(c)) /* as the evaluation refuses it */
        return STATUS_INFEASIBLE_BATCH;
    dt_sched *k = malloc(sizeof *k);
    if (!k)
        return STATUS_NOMEM;
    dt_sched_build(c, st, k);
    t->y = &k->y;
    t->x = &k->x;
    bool gpipe = c->t->schedule == TASK_SCHEDULE_GPIPE;
    if (k->z3x > 0)
        dt_trace_emit(t, 0, DETAILED_TRACK_DP, "all-gather parameters (zero3, exposed)", -1, -1,
                      0.0, k->z3x, dt_shape_layer_params(c, false) * c->ab, c->zs);
    double end = 0.0;
    for (int64_t s = 0; s < pp; s++) {
        int64_t n = m * v, nf = 0, nb = 0;
        int64_t warm = gpipe ? n : v > 1 ? 2 * (pp - s - 1) + (v - 1) * pp : pp - s - 1;
        if (warm > n)
            warm = n;
        double stretch = k->ts[s] > 0 ? k->tmax / k->ts[s] : 1.0;
        double mid = pp > 1 ? k->bubble * (1.0 - (double)s / (double)(pp - 1)) : 0.0;
        double at = k->z3x + dt_sched_lead(c, k, s);
        while (nf + nb < 2 * n) {
            if (nf == warm && nb == 0)
                at += mid; /* waiting for the first backward */
            bool fwd = nf < warm || (nf < n && nb >= nf - warm);
            int64_t mb, j;
            dt_trace_fwd_op(fwd ? nf : nb, pp, v, &mb, &j);
            if (!fwd)
                j = v - 1 - j;
            double dur = dt_trace_op(t, k, s, fwd, j * pp + s, mb, j, at);
            at += dur * stretch;
            if (fwd)
                nf++;
            else
                nb++;
        }
        dt_tail tl;
        tl.memo_trained = tl.memo_ag = 0.0;
        dt_trace_tail a = {t, s};
        dt_tail_emit emit = {dt_trace_tail_event, &a};
        dt_tail_run(c, t->sp, st, k, s, &emit, &tl);
        dt_trace_emit(t, s, DETAILED_TRACK_COMPUTE, "optimizer", -1, -1, tl.opt_at, tl.opt, 0, 0);
        dt_trace_emit(t, s, DETAILED_TRACK_DP, "all-gather parameters (exposed)", -1, -1,
                      tl.comp_end, tl.ag_exposed, 0, c->zs);
        end = tl.end > end ? tl.end : end;
    }
    free(k);
    t->end = end > t->end ? end : t->end;
    return STATUS_OK;
}

/* Serving: one request's life in the steady state the evaluation
 * resolves (serve/steady.c): its TTFT, then a step per further token of
 * TPOT, each with its share of TP all-reduce; the same figures the
 * result carries. */
static status_code dt_trace_serving(dt_trace *t, sv_eval *s)
{
    const dt_ctx *c = t->c;
    result_t r;
    memset(&r, 0, sizeof r);
    status_code rc = sv_serve_at(s, STACK_NOMINAL, &r);
    if (rc != STATUS_OK)
        return rc;
    double tok = (double)r.global_batch / (double)c->d.dp * (double)c->m->hidden * c->ab;
    double ar = r.iteration_time_s > 0.0 ? r.comm_allreduce_s / r.iteration_time_s : 0.0;
    dt_trace_emit(t, 0, DETAILED_TRACK_COMPUTE, "prefill", -1, -1, 0.0, r.ttft_s, 0, 0);
    int64_t steps = c->t->decode_tokens;
    for (int64_t i = 1; i < steps; i++) {
        double start = r.ttft_s + (double)(i - 1) * r.tpot_s;
        dt_trace_emit(t, 0, DETAILED_TRACK_COMPUTE, "decode step", i, -1, start, r.tpot_s, 0, 0);
        if (c->d.tp > 1)
            dt_trace_emit(t, 0, DETAILED_TRACK_TP, "all-reduce (tp)", i, -1, start, ar * r.tpot_s,
                          tok, c->d.tp);
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
    /* the evaluation's own preparation: the serving family's, or the
     * training tuner's */
    union {
        sv_eval serve;
        dt_eval train;
    } s;
    bool serving = p->task.kind == TASK_INFERENCE;
    dt_eval *v = serving ? &s.serve.v : &s.train;
    result_t r;
    engine e;
    engine_init(&e, false);
    rc = serving ? sv_serve_prepare(&s.serve, p, &r) : dt_tune_prepare(p, &e, &s.train, &r);
    engine_free(&e);
    if (rc != STATUS_OK)
        return rc;
    dt_trace t = {&v->c, &v->sp, NULL, NULL, fn, ctx, 0.0};
    if (serving) {
        rc = dt_trace_serving(&t, &s.serve);
    } else {
        rc = dt_trace_train(&t, &v->st);
    }
    if (end_s)
        *end_s = t.end;
    return rc;
}
