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
 * micro-batch's backward of the first stage then runs on the two-stream
 * engine, one compute and one communication event per layer, so that
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
#include <string.h>
#ifdef DT_DEBUG
#include <stdio.h>
#endif

/* Per-layer costs of a step: dense and MoE layers, trained and frozen. */
typedef struct dt_layers {
    dt_layer dense, moe, fdense, fmoe;
    int64_t frozen, moe_from;
    int fmode;
} dt_layers;

static void dt_layers_build(const dt_ctx *c, dt_layers *y)
{
    const model_t *m = c->m;
    bool ft = c->p->task.kind == TASK_FINETUNE;
    bool emb_train = m->vocab > 0 && !(ft && c->p->task.freeze_emb);
    y->frozen = ft ? c->t->frozen_layers : 0;
    y->moe_from = m->d.experts > 0 ? m->d.dense_layers : m->layers;
    y->fmode = emb_train ? DT_DGRAD : DT_NOBWD;
    dt_layer_cost(c, false, true, DT_TRAIN, &y->dense);
    dt_layer_comm(c, false, true, DT_TRAIN, &y->dense);
    if (m->d.experts > 0) {
        dt_layer_cost(c, true, true, DT_TRAIN, &y->moe);
        dt_layer_comm(c, true, true, DT_TRAIN, &y->moe);
    } else {
        y->moe = y->dense;
    }
    y->fdense = y->dense;
    y->fmoe = y->moe;
    if (y->frozen > 0) {
        dt_layer_cost(c, false, true, y->fmode, &y->fdense);
        dt_layer_comm(c, false, true, y->fmode, &y->fdense);
        if (m->d.experts > 0) {
            dt_layer_cost(c, true, true, y->fmode, &y->fmoe);
            dt_layer_comm(c, true, true, y->fmode, &y->fmoe);
        } else {
            y->fmoe = y->fdense;
        }
    }
}

/* The layer of index i. */
static const dt_layer *dt_layer_of(const dt_layers *y, int64_t i)
{
    return i >= y->moe_from ? (i < y->frozen ? &y->fmoe : &y->moe)
                            : (i < y->frozen ? &y->fdense : &y->dense);
}

/* Sum over layers [lo, hi) of a per-layer figure (offset into dt_layer). */
static double dt_range_sum(const dt_layers *y, int64_t lo, int64_t hi, size_t off)
{
    if (hi <= lo)
        return 0.0;
    double fd, fm;
    dt_frozen_in(lo, hi, y->frozen, y->moe_from, &fd, &fm);
    int64_t a = lo > y->moe_from ? lo : y->moe_from;
    double nm = (double)(hi > a ? hi - a : 0), nd = (double)(hi - lo) - nm;
#define DT_F(L) (*(const double *)(const void *)((const char *)&(L) + off))
    return (nd - fd) * DT_F(y->dense) + (nm - fm) * DT_F(y->moe) + fd * DT_F(y->fdense) +
           fm * DT_F(y->fmoe);
#undef DT_F
}

#define DT_OFF(f) offsetof(dt_layer, f)

/* Embedding, output head and loss of a micro-batch. */
typedef struct dt_ends {
    double emb_f, emb_b, head_f, head_b;
} dt_ends;

static void dt_ends_cost(const dt_ctx *c, const dt_layers *y, dt_ends *x)
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
    /* vocab-parallel cross entropy in fp32: ~10 passes of 4 bytes over
     * the logits forward (cast, max, shift, exp, sum, normalise), ~4
     * backward (softmax minus one-hot, cast); the head GEMM stays BF16 */
    double logits = c->tok * vocab_t;
    double g = dt_gemm_p(c, c->tok, vocab_t, h, 1, false);
    x->head_f = g + dt_elem(c, 40.0 * logits, 6.0);
    double hg = (head_train ? 1.0 : 0.0) + (below_train ? 1.0 : 0.0);
    x->head_b = hg > 0.0 ? hg * g + dt_elem(c, 16.0 * logits, 3.0) : 0.0;
}

status_code dt_train_time(const dt_ctx *c, const dt_split *sp, engine *e, result_t *r)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    dt_layers y;
    dt_layers_build(c, &y);
    dt_ends x;
    dt_ends_cost(c, &y, &x);
    double h = (double)m->hidden, tp = (double)c->d.tp, v = (double)c->d.v;
    double mm = (double)c->d.ga;

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
    double send = 2.0 * (p2p + p2p_ag); /* forward activation, backward gradient */

    /* stages */
    double tmax = 0.0, tsum = 0.0, p2p_sum = 0.0;
    int64_t nl0 = 0;
    for (int64_t s = 0; s < c->d.pp; s++) {
        double ts = 0.0;
        for (int64_t k = s; k < sp->chunks; k += c->d.pp) {
            int64_t lo, hi;
            dt_chunk_range(c, sp, k, &lo, &hi);
            ts += dt_range_sum(&y, lo, hi, DT_OFF(fwd)) + dt_range_sum(&y, lo, hi, DT_OFF(bwd));
            if (hi > lo) {
                /* ZeRO 3: exposed first gathers of each pass of the chunk */
                ts += dt_layer_of(&y, lo)->z3_fhead + dt_layer_of(&y, hi - 1)->z3_bhead;
            }
            if (c->d.pp > 1) {
                ts += send * ((k > 0) + (k < sp->chunks - 1)) / 2.0;
                p2p_sum += (p2p + p2p_ag) * (double)((k > 0) + (k < sp->chunks - 1));
            }
            if (s == 0)
                nl0 += hi - lo;
        }
        if (s == 0)
            ts += x.emb_f + x.emb_b;
        if (s == c->d.pp - 1)
            ts += x.head_f + x.head_b;
        tmax = ts > tmax ? ts : tmax;
        tsum += ts;
    }
    double tpipe = dt_schedule_time(tmax, tsum, mm, v);
    /* ZeRO 3 gathering once per step: the first stage's gathers beside
     * its first forward */
    if (c->d.zero >= 3 && !c->z3_ag_mb) {
        double ag0 = 0.0, fwd0 = x.emb_f;
        for (int64_t k = 0; k < sp->chunks; k += c->d.pp) {
            int64_t lo, hi;
            dt_chunk_range(c, sp, k, &lo, &hi);
            ag0 += dt_range_sum(&y, lo, hi, DT_OFF(zero3_ag));
            fwd0 += dt_range_sum(&y, lo, hi, DT_OFF(fwd));
        }
        double f0 = c->t->overlap_dp_comm ? c->f.dpo : 0.0;
        tpipe += (1.0 - f0) * ag0 + fmax(0.0, f0 * ag0 - fwd0);
    }
    r->pipeline_bubble_s = (tsum - tmax) / v;

    /* ---- last backward of stage 0 on the engine: per-layer gradient
     * collectives overlap the remaining backward layers */
    engine_reset(e);
    if (engine_reserve(e, (size_t)(2 * nl0 + 4)) != 0)
        return STATUS_NOMEM;
    double bwd0 = 0.0;
    for (int64_t k = 0; k < sp->chunks; k += c->d.pp) {
        int64_t lo, hi;
        dt_chunk_range(c, sp, k, &lo, &hi);
        bwd0 += dt_range_sum(&y, lo, hi, DT_OFF(bwd));
    }
    double start = tpipe - bwd0 - x.emb_b;
    if (start < 0)
        start = 0;
    engine_phase(e, start);
    engine_label lab = {ENGINE_PART_ATTN, ENGINE_OP_COMPUTE, 1, 0};
    engine_ev last = ENGINE_NONE, lastc = ENGINE_NONE;
    bool overlap = c->t->overlap_dp_comm;
    double f = overlap ? c->f.dpo : 0.0;
    /* ZeRO 3 reducing only the last micro-batch: its reduce-scatters are
     * this replay's gradient collectives */
    bool z3_last = c->d.zero >= 3 && !c->z3_rs_mb;
    double sync_sum = 0.0, serial = 0.0, prev = 0.0;
    for (int64_t k = sp->chunks - c->d.pp; k >= 0; k -= c->d.pp) {
        int64_t lo, hi;
        dt_chunk_range(c, sp, k, &lo, &hi);
        for (int64_t i = hi - 1; i >= lo; i--) {
            const dt_layer *L = dt_layer_of(&y, i);
            double sync = z3_last ? L->zero3_rs : L->grad_sync;
            lab.layer = (int32_t)i;
            lab.op = ENGINE_OP_COMPUTE;
            /* compute beside the previous layer's collective slows */
            double comp = L->bwd + c->f.slow * fmin(L->bwd, f * prev);
            last = engine_add(e, ENGINE_COMP, comp, &last, 1, lab);
            sync_sum += sync;
            serial += (1.0 - f) * sync;
            prev = sync;
            if (f > 0.0 && sync > 0) {
                lab.op = c->d.zero == 0 ? ENGINE_OP_WG_AR : ENGINE_OP_WG_RS;
                lastc = engine_add(e, ENGINE_COMM, f * sync, &last, 1, lab);
            }
        }
    }
    lab.layer = -1;
    lab.part = ENGINE_PART_EMB;
    last = engine_add(e, ENGINE_COMP, x.emb_b, &last, 1, lab);
    double emb_sync = 0.0;
    bool emb_train = m->vocab > 0 && y.fmode == DT_DGRAD;
    if (c->d.zero < 3 && emb_train) {
        double eb = dt_emb_params_dev(c) * c->gbytes;
        emb_sync = c->d.zero == 0 ? dt_dpcoll(c, TOPO_ALLREDUCE, c->dpcp, c->s_dpcp, eb)
                                  : dt_dpcoll(c, TOPO_REDUCESCATTER, c->zs, c->s_dpcp, eb);
    }
    engine_ev deps[2] = {last, lastc};
    lab.op = c->d.zero == 0 ? ENGINE_OP_WG_AR : ENGINE_OP_WG_RS;
    double tail_sync = emb_sync + serial + (z3_last ? 0.0 : y.dense.z3_tail);
    lastc = engine_add(e, ENGINE_COMM, tail_sync, deps, 2, lab);
    /* optimizer on the local (sharded from ZeRO 1) trained parameters */
    double trained = 0.0;
    {
        double lpd = dt_layer_params(c, false), lpm = dt_layer_params(c, true);
        int64_t L = m->layers, nmoe = dt_moe_in(m, 0, L);
        double fd, fm;
        dt_frozen_in(0, L, y.frozen, y.moe_from, &fd, &fm);
        trained = ((double)(L - nmoe) - fd) * lpd + ((double)nmoe - fm) * lpm;
        trained /= (double)c->d.pp;
        if (emb_train)
            trained += dt_emb_params_dev(c) / (double)c->d.pp;
    }
    double opt_params = trained / (c->d.zero >= 1 ? (double)c->zs : 1.0);
    double opt_time = hw_mem_time(hw, c->st->optimizer_step_bytes * opt_params) / c->f.mem;
    deps[1] = lastc;
    lab.op = ENGINE_OP_COMPUTE;
    last = engine_add(e, ENGINE_COMP, opt_time, deps, 2, lab);
    /* ZeRO 1/2: updated parameters all-gathered; with overlap they are
     * gathered layer by layer ahead of the next iteration's first forward
     * (only what exceeds that forward stays exposed) */
    double ag = 0.0, ag_exposed = 0.0;
    if (c->d.zero == 1 || c->d.zero == 2) {
        ag = dt_dpcoll(c, TOPO_ALLGATHER, c->zs, c->s_dpcp, trained * c->ab);
        double first_fwd = dt_range_sum(&y, 0, nl0, DT_OFF(fwd)) + x.emb_f;
        ag_exposed = (1.0 - f) * ag + fmax(0.0, f * ag - first_fwd);
    }
    lab.op = ENGINE_OP_WGT_AG;
    engine_add(e, ENGINE_COMM, ag_exposed, &last, 1, lab);
    double iter = engine_now(e);
#ifdef DT_DEBUG
    fprintf(stderr, "DBG tpipe %.4f tmax %.4f tsum %.4f start %.4f bwd0 %.4f sync_sum %.4f serial %.4f emb_sync %.4f ag %.4f agx %.4f opt %.4f iter %.4f\n"
            "DBG dense fwd %.6f bwd %.6f comp_fwd %.6f comp_bwd %.6f tp %.6f gemm_f %.6f gemm_b %.6f grad_sync %.6f z3ag %.6f z3rs %.6f recomp %.6f\n",
            tpipe, tmax, tsum, start, bwd0, sync_sum, serial, emb_sync, ag, ag_exposed, opt_time, iter,
            y.dense.fwd, y.dense.bwd, y.dense.comp_fwd, y.dense.comp_bwd, y.dense.tp_comm, y.dense.gemm_f, y.dense.gemm_b, y.dense.grad_sync, y.dense.zero3_ag, y.dense.zero3_rs, y.dense.recomp);
#endif

    /* ---- figures */
    r->iteration_time_s = iter;
    r->throughput_samples_per_s = (double)c->d.gb / iter;
    r->tokens_per_s = (double)c->d.gb * (double)m->seq_len / iter;
    /* compute on the busiest device: stage 0's layers for every
     * micro-batch, its ends, the optimizer */
    double comp0 = 0.0;
    for (int64_t k = 0; k < sp->chunks; k += c->d.pp) {
        int64_t lo, hi;
        dt_chunk_range(c, sp, k, &lo, &hi);
        comp0 += dt_range_sum(&y, lo, hi, DT_OFF(comp_fwd)) +
                 dt_range_sum(&y, lo, hi, DT_OFF(comp_bwd));
    }
    r->compute_gemm_s = mm * (comp0 + x.emb_f + x.emb_b +
                              (c->d.pp == 1 ? x.head_f + x.head_b : 0.0)) +
                        opt_time;
    double pass = c->rc == TASK_RECOMPUTE_FULL ? 3.0 : 2.0;
    double tpcomm = 0.0, z3 = 0.0, z3rs = 0.0, a2a = 0.0;
    for (int64_t k = 0; k < sp->chunks; k += c->d.pp) {
        int64_t lo, hi;
        dt_chunk_range(c, sp, k, &lo, &hi);
        tpcomm += pass * dt_range_sum(&y, lo, hi, DT_OFF(tp_comm));
        z3 += dt_range_sum(&y, lo, hi, DT_OFF(zero3_ag)) * (c->z3_ag_mb ? 1.0 : 1.0 / mm) +
              dt_range_sum(&y, lo, hi, DT_OFF(zero3_agb));
        z3rs += dt_range_sum(&y, lo, hi, DT_OFF(zero3_rs));
        a2a += (pass) * dt_range_sum(&y, lo, hi, DT_OFF(a2a));
    }
    tpcomm *= mm;
    z3 *= mm;
    z3rs *= z3_last ? 1.0 : mm;
    if (y.frozen > 0 && y.fmode == DT_NOBWD) /* frozen layers: one TP pass */
        tpcomm -= mm * (pass - 1.0) * dt_range_sum(&y, 0, y.frozen < nl0 ? y.frozen : nl0,
                                                   DT_OFF(tp_comm));
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
    r->comm_alltoall_s = mm * a2a;
    r->comm_p2p_s = mm * p2p_sum;
    double comm = r->comm_allreduce_s + r->comm_allgather_s + r->comm_reducescatter_s +
                  r->comm_alltoall_s + r->comm_p2p_s;
    double exposed = iter - r->compute_gemm_s - r->pipeline_bubble_s;
    if (exposed < 0)
        exposed = 0;
    if (exposed > comm)
        exposed = comm;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    r->events_compute = e->count[ENGINE_COMP];
    r->events_comm = e->count[ENGINE_COMM];
    const hw_t *hwp = c->hw;
    double peak = hwp->peak_flops[c->dt] > 0 ? hwp->peak_flops[c->dt] : hwp->peak_flops[HW_BF16];
    /* model FLOPs: forward, plus per layer two backward GEMM passes when
     * trained, one when it only passes data gradients down */
    double lt = (double)(m->layers - y.frozen), ld = y.fmode == DT_DGRAD ? (double)y.frozen : 0.0;
    double ffac = 1.0 + (2.0 * lt + ld) / (double)m->layers;
    r->mfu = ffac * detailed_model_flops(m, true) * (double)c->d.gb /
             (iter * (double)c->p->system.devices * peak);
    return STATUS_OK;
}
