/*
 * train.h - the training family of the detailed fidelity (pre-training
 * and fine-tuning of transformers; private to cost/detailed/), one file
 * per part of a step:
 *   layers.c    the per-layer costs of a step by type (dense, MoE,
 *               frozen), from llm/'s layer and communication costs
 *   emb_head.c  the embedding, the output head and loss, multi-token
 *               prediction
 *   schedule.c  the closed-form schedule: stage times, the pipeline's
 *               span and bubble, each stage's idle
 *   tail.c      a stage's end of step: the last backward beside the
 *               gradient collectives, optimizer, parameter gathers
 *   train.c     the step's time and figures; the family the top runs
 *   tune.c      the tuner's searches (micro_batch, vpp = "auto") and the
 *               evaluation's preparation
 * It stands on llm/ and core/ and calls no other family. Invariants: a
 * step costs O(pp vpp + layers per stage) and allocates nothing; the
 * schedule is the one both the evaluation and the trace read.
 */
#ifndef MADSWEEP_DT_TRAIN_H
#define MADSWEEP_DT_TRAIN_H

#include <stddef.h>

#include "../llm/llm.h"

/* ---- per-layer costs (layers.c) */

/* Per-layer costs of a step by type (DT_DENSE ...: dense and MoE layers,
 * trained and frozen), the frozen layers and their backward mode. */
typedef struct dt_layers {
    dt_layer t[DT_TYPES];
    int64_t frozen;
    int fmode;
} dt_layers;

void dt_layers_build(const dt_ctx *c, dt_layers *y);

/* A field of dt_layer by offset (DT_LAYER_OFF(fwd) ...). */
#define DT_LAYER_OFF(f) offsetof(dt_layer, f)
#define DT_LAYER_FIELD(L, off) (*(const double *)(const void *)((const char *)(L) + (off)))

/* Sum over a stage's layers of a per-layer figure (the types in use
 * only: with one kind of layer it is DT_DENSE or DT_MOE). */
static inline double dt_layers_sum(const dt_layers *y, const dt_stages *st, const dt_stage *g,
                                   size_t off)
{
    if (st->types == 1)
        return (double)g->n[st->uniform] * DT_LAYER_FIELD(&y->t[st->uniform], off);
    double s = 0.0;
    for (int t = 0; t < st->types; t++)
        s += (double)g->n[t] * DT_LAYER_FIELD(&y->t[t], off);
    return s;
}

/* Sum over a stage's chunks of a figure of their first (or last) layer
 * (which: dt_stage's first or last). */
static inline double dt_layers_ends_sum(const dt_layers *y, const dt_stages *st,
                                        const int32_t *which, size_t off)
{
    if (st->types == 1)
        return (double)which[st->uniform] * DT_LAYER_FIELD(&y->t[st->uniform], off);
    double s = 0.0;
    for (int t = 0; t < st->types; t++)
        s += (double)which[t] * DT_LAYER_FIELD(&y->t[t], off);
    return s;
}

/* ---- embedding, head and loss (emb_head.c) */

/* The embedding, output head and loss of a micro-batch. */
typedef struct dt_emb_head {
    double emb_f, emb_b, head_f, head_b;
    double emb_comp; /* emb_f's compute (without its TP all-reduce) */
    double head_mf, head_mb; /* the loss's memory-bound part of head_f, head_b */
} dt_emb_head;

void dt_emb_head_cost(const dt_ctx *c, const dt_layers *y, dt_emb_head *x);

/* ---- the schedule (schedule.c) */

/* The closed-form schedule of a training step, shared by the evaluation
 * and the trace: per stage its time per micro-batch ts (tf of it
 * forward), the pipeline's span (llm/pipeline.c's schedule time) and
 * bubble, ZeRO 3's once-per-step gather exposed before it (z3x). Stage
 * s idles bubble s/(pp-1) of the bubble before and after its ops (the
 * fill and drain a later stage waits, forward and backward shares), the
 * rest of the bubble after its warm-up forwards; it keeps the slowest
 * stage's pace. Its last backward ends at z3x + pipe - trail(s). */
typedef struct dt_sched {
    dt_layers y;
    dt_emb_head x;
    double p2p, p2p_ag;
    double ts[DT_MAX_STAGES], tf[DT_MAX_STAGES];
    double tmax, pipe, bubble, f, z3x;
    double params_dense, params_moe; /* dt_shape_layer_params, once */
} dt_sched;

void dt_sched_build(const dt_ctx *c, const dt_stages *st, dt_sched *k);
/* Idle of stage s before its first op and after its last. */
double dt_sched_lead(const dt_ctx *c, const dt_sched *k, int64_t s);
double dt_sched_trail(const dt_ctx *c, const dt_sched *k, int64_t s);

/* ---- a stage's end of step (tail.c) */

/* A stage's end of step: its last micro-batch's backward with the
 * gradient collectives beside it, the rest of the reduction, the
 * optimizer, ZeRO 1/2's exposed parameter gather. */
typedef struct dt_tail {
    double start, comp_end, comm_end, sync_sum, serial, emb_sync;
    double opt_at, opt, ag, ag_exposed, end;
    int64_t ncomp, ncomm;
    /* in: the last ZeRO 1/2 gather costed (trained parameters -> time),
     * reused by a stage with as many; out: this stage's */
    double memo_trained, memo_ag;
} dt_tail;

/* What dt_tail_run reports to a trace: a layer's overlapped gradient
 * collective, the backward stretched past the schedule by collectives
 * beside it, the reduction left after both streams. */
enum { DT_EMIT_SYNC = 0, DT_EMIT_SLOWED = 1, DT_EMIT_TAIL = 2 };
typedef struct dt_tail_emit {
    void (*fn)(void *ctx, int kind, int64_t layer, double start, double dur);
    void *ctx;
} dt_tail_emit;

/* Stage s's tail (emit NULL: no events); t's memo is read (zero it
 * first, or carry it from another stage's tail) and updated. */
void dt_tail_run(const dt_ctx *c, const dt_split *sp, const dt_stages *st, const dt_sched *k,
                 int64_t s, const dt_tail_emit *emit, dt_tail *t);
/* An upper bound of stage s's end (s > 0) that costs no collective,
 * given stage 0's tail t0; INFINITY when it does not apply. */
double dt_tail_bound(const dt_ctx *c, const dt_stages *st, const dt_sched *k, int64_t s,
                     const dt_tail *t0);

/* ---- the step (train.c) */

/* The step's time under the context's facts into r; `figures` false
 * computes the iteration time and bubble only (the band's ends, the
 * tuner's trials). */
status_code dt_train_time(const dt_ctx *c, const dt_split *sp, const dt_stages *st, engine *e,
                          result_t *r, bool figures);

/* The family the top runs (its state: a dt_eval). */
extern const dt_family dt_train_family;

/* ---- the tuner (tune.c) */

/* The evaluation of training point p: dt_setup's steps with the tuner's
 * searches between them (vpp = "auto": the fastest interleaving;
 * micro_batch = "auto": the fastest micro-batch that fits, as a tuned
 * run picks them). */
status_code dt_tune_prepare(const point_t *p, engine *e, dt_eval *v, result_t *r);

#endif
