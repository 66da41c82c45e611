/*
 * train.c - one training step of a transformer (pre-training or
 * fine-tuning).
 *
 * The cost of one layer per micro-batch (layer.c, comm.c) gives each
 * pipeline chunk's forward and backward; a stage's time per micro-batch
 * is the sum of its chunks (pipeline.c's split), plus the embedding on
 * the first stage, the output head and loss on the last, the exposed
 * ends of ZeRO 3's gather chains and the point-to-point sends of its
 * chunk boundaries. The schedule is closed form (pipeline.c). The last
 * micro-batch's backward of the first stage then runs as two streams
 * (the engine's rule as a recurrence), one compute and one
 * communication step per layer, so that
 * data-parallel gradient reduction (ZeRO 0-2, or ZeRO 3 when the stack
 * reduces only the last micro-batch) overlaps the backward as far as
 * the dependencies and the stack's dp_overlap allow; the rest of the
 * reduction, the optimizer step (the stack's HBM bytes per local
 * parameter) and ZeRO 1/2's parameter all-gather (overlapped with the
 * next forward as far as dp_overlap allows) follow. Work is
 * O(pp vpp + layers per stage); nothing is allocated once the engine has
 * its capacity.
 * Fine-tuning: the first frozen_layers layers (and with freeze_emb the
 * embedding, and a tied head's weight) get no gradients, gradient
 * collectives or optimizer states; a frozen layer with something trained
 * below it runs a backward of data gradients only, one with nothing
 * trained below runs none and keeps no activations.
 */
#include "dt.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void dt_layers_build(const dt_ctx *c, dt_layers *y)
{
    const model_t *m = c->m;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = m->vocab > 0 && !(ft && c->p->task.freeze_emb);
    y->frozen = ft ? c->t->frozen_layers : 0;
    y->fmode = emb_train ? DT_DGRAD : DT_NOBWD;
    dt_layer_cost(c, false, true, DT_TRAIN, &y->t[DT_DENSE]);
    dt_layer_comm(c, false, true, DT_TRAIN, &y->t[DT_DENSE]);
    if (m->d.experts > 0) {
        dt_layer_cost(c, true, true, DT_TRAIN, &y->t[DT_MOE]);
        dt_layer_comm(c, true, true, DT_TRAIN, &y->t[DT_MOE]);
    } else {
        y->t[DT_MOE] = y->t[DT_DENSE];
    }
    y->t[DT_FDENSE] = y->t[DT_DENSE];
    y->t[DT_FMOE] = y->t[DT_MOE];
    if (y->frozen > 0) {
        dt_layer_cost(c, false, true, y->fmode, &y->t[DT_FDENSE]);
        dt_layer_comm(c, false, true, y->fmode, &y->t[DT_FDENSE]);
        if (m->d.experts > 0) {
            dt_layer_cost(c, true, true, y->fmode, &y->t[DT_FMOE]);
            dt_layer_comm(c, true, true, y->fmode, &y->t[DT_FMOE]);
        } else {
            y->t[DT_FMOE] = y->t[DT_FDENSE];
        }
    }
}

#define DT_OFF(f) offsetof(dt_layer, f)
#define DT_FIELD(L, off) (*(const double *)(const void *)((const char *)(L) + (off)))

/* Sum over a stage's layers of a per-layer figure (the types in use
 * only: with one kind of layer it is DT_DENSE or DT_MOE). */
static double dt_stage_sum(const dt_layers *y, const dt_stages *st, const dt_stage *g,
                           size_t off)
{
    if (st->types == 1)
        return (double)g->n[st->uniform] * DT_FIELD(&y->t[st->uniform], off);
    double s = 0.0;
    for (int t = 0; t < st->types; t++)
        s += (double)g->n[t] * DT_FIELD(&y->t[t], off);
    return s;
}

/* Sum over a stage's chunks of a figure of their first (or last) layer. */
static double dt_stage_ends(const dt_layers *y, const dt_stages *st, const int32_t *which,
                            size_t off)
{
    if (st->types == 1)
        return (double)which[st->uniform] * DT_FIELD(&y->t[st->uniform], off);
    double s = 0.0;
    for (int t = 0; t < st->types; t++)
        s += (double)which[t] * DT_FIELD(&y->t[t], off);
    return s;
}

void dt_ends_cost(const dt_ctx *c, const dt_layers *y, dt_ends *x)
{
    const model_t *m = c->m;
    memset(x, 0, sizeof *x);
    if (m->vocab <= 0)
        return;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = !(ft && c->p->task.freeze_emb);
    bool head_train = m->d.untied_embeddings || emb_train;
    bool below_train = emb_train || y->frozen < m->layers; /* head needs dgrad */
    double h = (double)m->hidden, vocab_t = (double)m->vocab / (double)c->d.tp;
    x->emb_f = dt_elem(c, 2.0 * c->tok * h * c->ab, 1.0);
    if (c->d.tp > 1)
        x->emb_f += dt_coll(c, TOPO_ALLREDUCE, c->d.tp, c->stride[DT_TP], c->tok * h * c->ab);
    x->emb_b = emb_train ? x->emb_f : 0.0;
    /* cross entropy: the stack's HBM bytes per logit (a fused kernel
     * reads the 16-bit logits for the max and for the sum of exponentials
     * and writes the fp32 softmax, 2 + 2 + 4 bytes, backward reads it and
     * writes the gradient, 4 + 2: 14; an unfused fp32 implementation
     * moves about four times that), 4/7 forward. The head GEMM stays
     * BF16. */
    double logits = c->tok * vocab_t;
    double g = dt_gemm_p(c, c->tok, vocab_t, h, 1, false);
    double lb = c->f.loss_bytes * logits;
    x->head_mf = hw_mem_time(c->hw, lb * 4.0 / 7.0) / c->f.mem + 3.0 * c->hw->kernel_overhead_s;
    x->head_f = g + x->head_mf;
    double hg = (head_train ? 1.0 : 0.0) + (below_train ? 1.0 : 0.0);
    x->head_mb = hg > 0.0 ? hw_mem_time(c->hw, lb * 3.0 / 7.0) / c->f.mem +
                                2.0 * c->hw->kernel_overhead_s
                          : 0.0;
    x->head_b = hg > 0.0 ? hg * g + x->head_mb : 0.0;
}

status_code dt_train_time(const dt_ctx *c, const dt_split *sp, const dt_stages *st, engine *e,
                          result_t *r, bool figures)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    dt_layers y;
    dt_layers_build(c, &y);
    dt_ends x;
    dt_ends_cost(c, &y, &x);
    double h = (double)m->hidden, tp = (double)c->d.tp, v = (double)c->d.v;
    double mm = (double)c->d.ga;
    const dt_stage *g0 = &st->s[0];

    /* point-to-point per chunk boundary and pass: sequence parallel (or
     * the scatter/gather scheme) sends 1/tp and all-gathers it inside
     * the node */
    double p2p = 0.0, p2p_ag = 0.0;
    if (c->d.pp > 1) {
        double full = c->tok * h * c->ab;
        bool split = c->sp || (c->st->pp_send == STACK_PP_SCATTER_GATHER && c->d.tp > 1);
        p2p = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP], split ? full / tp : full);
        if (split && !c->sp)
            p2p_ag = dt_coll(c, TOPO_ALLGATHER, c->d.tp, c->stride[DT_TP], full);
    }

    /* stages: their layers, the exposed first gathers of each chunk's
     * passes (ZeRO 3), their sends, the embedding and the head */
    double tmax = 0.0, tsum = 0.0;
    for (int64_t s = 0; s < c->d.pp; s++) {
        const dt_stage *g = &st->s[s];
        double ts = dt_stage_sum(&y, st, g, DT_OFF(fwd)) + dt_stage_sum(&y, st, g, DT_OFF(bwd)) +
                    dt_stage_ends(&y, st, g->first, DT_OFF(z3_fhead)) +
                    dt_stage_ends(&y, st, g->last, DT_OFF(z3_bhead)) +
                    (double)g->sends * (p2p + p2p_ag);
        if (s == 0)
            ts += x.emb_f + x.emb_b;
        if (s == c->d.pp - 1)
            ts += x.head_f + x.head_b;
        tmax = ts > tmax ? ts : tmax;
        tsum += ts;
    }
    double tpipe = dt_schedule_time(tmax, tsum, mm, v);
    r->pipeline_bubble_s = (tsum - tmax) / v;
    double f = c->t->overlap_dp_comm ? c->f.dpo : 0.0;
    double fwd0 = dt_stage_sum(&y, st, g0, DT_OFF(fwd)) + x.emb_f; /* first forward */
    /* ZeRO 3 gathering once per step: the first stage's gathers beside
     * its first forward */
    if (c->d.zero >= 3 && !c->z3_ag_mb) {
        double ag0 = dt_stage_sum(&y, st, g0, DT_OFF(zero3_ag));
        tpipe += (1.0 - f) * ag0 + fmax(0.0, f * ag0 - fwd0);
    }

    /* ---- the last micro-batch's backward of stage 0 with the gradient
     * collectives beside it: a compute stream and a communication
     * stream, each collective starting when its layer's backward and the
     * previous collective are done (the two-stream engine's rule, as a
     * recurrence: O(layers), no events stored) */
    double bwd0 = dt_stage_sum(&y, st, g0, DT_OFF(bwd));
    double start = tpipe - bwd0 - x.emb_b;
    if (start < 0)
        start = 0;
    (void)e;
    /* ZeRO 3 reducing only the last micro-batch: its reduce-scatters are
     * this replay's gradient collectives */
    bool z3_last = c->d.zero >= 3 && !c->z3_rs_mb;
    double sync_sum = 0.0, serial = 0.0, prev = 0.0;
    double comp_end = start, comm_end = start;
    int64_t ncomp = 0, ncomm = 0;
    int64_t nl0 = 0;
    for (int t = 0; t < DT_TYPES; t++)
        nl0 += g0->n[t];
    if (st->types == 1 && nl0 > 0) {
        /* identical layers: the recurrence in closed form (the first
         * backward runs alone, the others beside a collective) */
        const dt_layer *L = &y.t[st->uniform];
        double sync = z3_last ? L->zero3_rs : L->grad_sync, fs = f * sync;
        double b1 = L->bwd, b = L->bwd + c->f.slow * dt_min(L->bwd, fs);
        double n = (double)nl0;
        sync_sum = n * sync;
        serial = n * (1.0 - f) * sync;
        ncomp = nl0;
        comp_end = start + b1 + (n - 1.0) * b;
        if (f > 0.0 && sync > 0) {
            comm_end = dt_max(start + b1 + n * fs, comp_end + fs);
            ncomm = nl0;
        }
    } else {
        for (int64_t k = sp->chunks - c->d.pp; k >= 0; k -= c->d.pp) {
            int64_t lo, hi;
            dt_chunk_range(c, sp, k, &lo, &hi);
            for (int64_t i = hi - 1; i >= lo; i--) {
                const dt_layer *L = &y.t[st->types == 1 ? st->uniform : dt_layer_type(c, i)];
                double sync = z3_last ? L->zero3_rs : L->grad_sync;
                /* compute beside the previous layer's collective slows */
                comp_end += L->bwd + c->f.slow * dt_min(L->bwd, f * prev);
                ncomp++;
                sync_sum += sync;
                serial += (1.0 - f) * sync;
                prev = sync;
                if (f > 0.0 && sync > 0) {
                    comm_end = dt_max(comm_end, comp_end) + f * sync;
                    ncomm++;
                }
            }
        }
    }
    comp_end += x.emb_b; /* the embedding's backward */
    double emb_sync = 0.0;
    bool emb_train = m->vocab > 0 && y.fmode == DT_DGRAD;
    if (c->d.zero < 3 && emb_train) {
        double eb = dt_emb_params_dev(c) * c->gbytes;
        emb_sync = c->d.zero == 0 ? dt_dpcoll(c, TOPO_ALLREDUCE, c->dpcp, c->s_dpcp, eb)
                                  : dt_dpcoll(c, TOPO_REDUCESCATTER, c->zs, c->s_dpcp, eb);
    }
    /* what could not overlap, and the last layer's ZeRO 3 reduction,
     * once both streams are done */
    int t0 = st->types == 1 ? st->uniform : dt_layer_type(c, 0);
    double tail_sync = emb_sync + serial + (z3_last ? 0.0 : y.t[t0].z3_tail);
    comm_end = fmax(comm_end, comp_end) + tail_sync;
    /* optimizer on stage 0's local (sharded from ZeRO 1) trained
     * parameters, after the reductions */
    double trained = (double)g0->n[DT_DENSE] * dt_layer_params(c, false) +
                     (double)g0->n[DT_MOE] * dt_layer_params(c, true) +
                     (emb_train ? dt_emb_params_dev(c) : 0.0);
    double opt_params = trained / (c->d.zero >= 1 ? (double)c->zs : 1.0);
    double opt_time = hw_mem_time(hw, c->st->optimizer_step_bytes * opt_params) / c->f.mem;
    comp_end = fmax(comp_end, comm_end) + opt_time;
    /* ZeRO 1/2: updated parameters all-gathered; with overlap they are
     * gathered layer by layer ahead of the next iteration's first forward
     * (only what exceeds that forward stays exposed) */
    double ag = 0.0, ag_exposed = 0.0;
    if (c->d.zero == 1 || c->d.zero == 2) {
        ag = dt_dpcoll(c, TOPO_ALLGATHER, c->zs, c->s_dpcp, trained * c->ab);
        ag_exposed = (1.0 - f) * ag + fmax(0.0, f * ag - fwd0);
    }
    double iter = comp_end + ag_exposed;
    r->iteration_time_s = iter;
    if (!figures)
        return STATUS_OK;

    /* ---- figures of the busiest device: stage 0 */
    r->throughput_samples_per_s = (double)c->d.gb / iter;
    r->tokens_per_s = (double)c->d.gb * (double)m->seq_len / iter;
    double comp0 = dt_stage_sum(&y, st, g0, DT_OFF(comp_fwd)) + dt_stage_sum(&y, st, g0, DT_OFF(comp_bwd));
    r->compute_gemm_s = mm * (comp0 + x.emb_f + x.emb_b +
                              (c->d.pp == 1 ? x.head_f + x.head_b : 0.0)) +
                        opt_time;
    double pass = c->rc == TASK_RECOMPUTE_FULL ? 3.0 : 2.0;
    double tpcomm = pass * dt_stage_sum(&y, st, g0, DT_OFF(tp_comm));
    if (y.fmode == DT_NOBWD) /* frozen layers without a backward: one pass */
        tpcomm -= (pass - 1.0) * ((double)g0->n[DT_FDENSE] * y.t[DT_FDENSE].tp_comm +
                                  (double)g0->n[DT_FMOE] * y.t[DT_FMOE].tp_comm);
    tpcomm *= mm;
    double z3 = mm * (dt_stage_sum(&y, st, g0, DT_OFF(zero3_ag)) * (c->z3_ag_mb ? 1.0 : 1.0 / mm) +
                      dt_stage_sum(&y, st, g0, DT_OFF(zero3_agb)));
    double z3rs = dt_stage_sum(&y, st, g0, DT_OFF(zero3_rs)) * (z3_last ? 1.0 : mm);
    double a2a = mm * pass * dt_stage_sum(&y, st, g0, DT_OFF(a2a));
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
                          (pass + 1.0) * dt_stage_sum(&y, st, g0, DT_OFF(cp_comm)));
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
    r->compute_memory_s = mm * (dt_stage_sum(&y, st, g0, DT_OFF(mem_f)) +
                                dt_stage_sum(&y, st, g0, DT_OFF(mem_b)) + x.emb_f + x.emb_b +
                                (c->d.pp == 1 ? x.head_mf + x.head_mb : 0.0));
    r->compute_math_s = dt_max(0.0, r->compute_gemm_s - r->compute_memory_s - opt_time);
    double est[DT_B_DIMS] = {
        [DT_B_TP] = mm * dt_stage_sum(&y, st, g0, DT_OFF(tp_exp)),
        [DT_B_CP] = mm * dt_stage_sum(&y, st, g0, DT_OFF(cp_exp)),
        [DT_B_EP] = a2a,
        [DT_B_PP] = mm * (double)g0->sends * (p2p + p2p_ag),
        [DT_B_DP] = -1.0};
    dt_breakdown_comm(c, exposed, est, r);
    r->events_compute = ncomp + 2; /* layers, embedding, optimizer */
    r->events_comm = ncomm + 1 + (ag_exposed > 0 ? 1 : 0);
    double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16];
    /* model FLOPs: forward, plus per layer two backward GEMM passes when
     * trained, one when it only passes data gradients down */
    double lt = (double)(m->layers - y.frozen), ld = y.fmode == DT_DGRAD ? (double)y.frozen : 0.0;
    double ffac = 1.0 + (2.0 * lt + ld) / (double)m->layers;
    r->mfu = ffac * detailed_model_flops(m, true) * (double)c->d.gb /
             (iter * (double)c->p->system.devices * peak);
    return STATUS_OK;
}
