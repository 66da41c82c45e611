/*
 * comm.c - what one transformer layer communicates per micro-batch, and
 * how much of it stays exposed beside its compute (layer.c).
 *
 *   tensor parallel: 2 all-reduces (or, with sequence parallelism, 2
 *             all-gathers + 2 reduce-scatters) of T h elements per pass.
 *             A fraction f of them can hide behind the pass's GEMMs (the
 *             stack's tp_overlap_fwd/bwd, or 0/1 when the task says):
 *             exposed = (1 - f) tp + max(0, f tp - GEMMs).
 *   context parallel: ring attention passes K,V chunks around the cp
 *             ranks beside the attention core (backward: K,V and their
 *             gradients); only what exceeds the core is exposed.
 *   expert parallel: dispatch and combine all-to-all of the routed tokens
 *             per MoE layer and pass, exposed.
 *   data parallel (on rings at the stack's rails and bus efficiency):
 *             ZeRO 0 all-reduces, ZeRO 1/2 reduce-scatter each layer's
 *             gradients (train/tail.c overlaps them with the last backward);
 *             ZeRO 3 all-gathers the parameters before each forward and,
 *             when the stack reshards after the forward, again before
 *             each backward, and reduce-scatters the gradients, every
 *             micro-batch. With overlap_dp_comm a fraction (the stack's
 *             dp_overlap) overlaps the layer's compute, which slows by
 *             the stack's comm_slowdown while it does (dt_comm_overlap); the
 *             rest is exposed. The first gather of each chain and the
 *             last reduce-scatter stay exposed (z3_fhead, z3_bhead,
 *             z3_tail). Hybrid sharding all-reduces the shards' gradients
 *             across the replicas.
 * Under full recomputation the recomputed forward repeats the forward's
 * TP, CP and EP communication.
 * Invariants: a collective is costed on the group's placement on the
 * topology (core/ctx.c), at the scenario's network multiplier; nothing
 * to send costs nothing.
 */
#include "llm.h"

#include <math.h>

/* One expert-parallel dispatch (or combine) of `bytes` per rank. Flat:
 * an all-to-all over the ep ranks. Hierarchical (DeepEP, HybridEP), when
 * the group spans n scale-up domains: a token routed to k experts crosses
 * to each remote domain once, so the network carries the expected
 * distinct domains n (1 - (1 - 1/n)^k) over the k copies of the flat
 * exchange, and fans out inside the domain over NVLink; the forwarding
 * runs while the network part arrives (DeepEP's internode dispatch and
 * combine pipeline RDMA and NVLink chunk by chunk), so the longer of the
 * two is the time. */
static double dt_comm_ep_a2a(const dt_ctx *c, double bytes)
{
    int64_t ep = c->d.ep, span = c->topo->level[0].span, extent = ep * c->s_ep;
    double flat = dt_coll(c, TOPO_ALLTOALL, ep, c->s_ep, bytes);
    double x = c->f.a2a_hier;
    if (x <= 0.0 || span <= 0 || extent <= span || c->s_ep >= span)
        return flat;
    double n = (double)extent / (double)span, k = (double)dt_shape_top_k(c->m);
    double f = fmin(1.0, n * (1.0 - pow(1.0 - 1.0 / n, k)) / k);
    double hier = fmax(dt_coll(c, TOPO_ALLTOALL, ep, c->s_ep, bytes * f),
                       dt_coll(c, TOPO_ALLTOALL, span / c->s_ep, c->s_ep, bytes));
    return x * fmin(hier, flat) + (1.0 - x) * flat;
}

/* Wall time of compute `comp` with `comm` beside it, a fraction `f` of
 * which can overlap: max(comp stretched by the stack's slowdown while
 * overlapped, f comm) + (1 - f) comm. */
static double dt_comm_overlap(const dt_ctx *c, double comp, double comm, double f)
{
    double hid = f * comm;
    double stretched = comp + c->f.slow * fmin(comp, hid);
    return fmax(stretched, hid) + (1.0 - f) * comm;
}

void dt_comm_layer(const dt_ctx *c, int kind, bool training, int mode, dt_layer *L)
{
    const model_t *m = c->m;
    bool moe = kind & DT_L_MOE;
    double tp = (double)c->d.tp, T = c->tok, h = (double)m->hidden, ab = c->ab;

    /* tensor parallel, per pass */
    double tpc = 0.0;
    if (c->d.tp > 1) {
        double bytes = T * h * ab;
        /* an all-gather and a reduce-scatter of one buffer cost the same
         * (topo.h): one costed for both */
        tpc = c->sp ? 4.0 * dt_group_coll(c, TOPO_ALLGATHER, DT_G_TP, bytes)
                    : 2.0 * dt_group_coll(c, TOPO_ALLREDUCE, DT_G_TP, bytes);
    }
    L->tp_comm = tpc;
    double of = c->f.tpo_f, ob = c->f.tpo_b;
    double tpx_f = (1.0 - of) * tpc + dt_max(0.0, of * tpc - L->gemm_f);

    /* context parallel: K,V chunks around the ring beside the core */
    double cpx_f = 0.0, cpx_b = 0.0;
    if (c->d.cp > 1) {
        const dt_attn_sh *as = &c->as; /* K and V of this rank's heads (MLA: whole per head) */
        double kvb = T * (as->k + as->v) * ab;
        if ((kind & DT_L_ALT) && c->alt == DT_KIND_SLIDING) /* the window's keys only */
            kvb *= dt_min(1.0, (double)m->d.sliding_window / c->kv_len);
        else if ((kind & DT_L_ALT) && c->alt == DT_KIND_LINEAR) /* a state per sequence */
            kvb = (double)c->d.mb * c->lin.state;
        double ring = (double)(c->d.cp - 1) * dt_coll(c, TOPO_P2P, 2, c->stride[DT_CP], kvb);
        L->cp_comm = ring;
        cpx_f = fmax(0.0, ring - L->attn_f);
        cpx_b = fmax(0.0, 2.0 * ring - L->attn_b);
    }

    /* expert parallel: dispatch and combine per pass */
    double a2a = 0.0;
    if (moe && c->d.ep > 1) {
        double k = (double)dt_shape_top_k(m);
        double bytes = T * k * c->d.cf * h * ab / (c->sp ? tp : 1.0);
        a2a = 2.0 * dt_comm_ep_a2a(c, bytes);
    }
    L->a2a = a2a;
    /* the stack's share hides behind the other micro-batch's compute */
    double ao = c->f.a2a_overlap;
    double a2ax_f = (1.0 - ao) * a2a + dt_max(0.0, ao * a2a - L->comp_fwd);

    L->fwd = L->comp_fwd + tpx_f + cpx_f + a2ax_f;
    L->tp_exp = tpx_f;
    L->cp_exp = cpx_f;
    if (!training)
        return;
    bool overlap = c->t->overlap_dp_comm;
    double dpo = overlap ? c->f.dpo : 0.0;
    double params = L->params, pb = c->ab > 2.0 ? 4.0 : 2.0; /* gathered dtype */
    double expert_part = 0.0;
    if (moe) {
        double fe = dt_shape_expert_ffn(m) / (double)c->etp;
        expert_part = (double)m->d.experts / (double)c->d.ep * dt_shape_mlp_mats(m) * h * fe;
    }
    double dense_part = params - expert_part;
    int64_t zs = c->zs;
    if (mode == DT_NOBWD) {
        /* frozen, nothing trained below: forward only (ZeRO 3 still
         * gathers the parameters for it) */
        if (c->d.zero >= 3) {
            L->zero3_ag = dt_group_coll(c, TOPO_ALLGATHER, DT_G_ZS, dense_part * pb) +
                          dt_group_coll(c, TOPO_ALLGATHER, DT_G_ZSE, expert_part * pb);
            L->z3_fhead = overlap ? fmin(L->zero3_ag, L->fwd) : 0.0;
            L->fwd = dt_comm_overlap(c, L->fwd, L->zero3_ag, dpo);
        }
        return;
    }
    double tpx_b = (1.0 - ob) * tpc + dt_max(0.0, ob * tpc - L->gemm_b);
    double a2ax_b = (1.0 - ao) * a2a + dt_max(0.0, ao * a2a - L->comp_bwd);
    L->bwd = L->comp_bwd + tpx_b + cpx_b + a2ax_b;
    if (c->rc == TASK_RECOMPUTE_FULL)
        L->bwd += c->rc_frac * (tpx_f + cpx_f + a2ax_f);
    L->tp_exp += tpx_b + (c->rc == TASK_RECOMPUTE_FULL ? c->rc_frac * tpx_f : 0.0);
    L->cp_exp += cpx_b + (c->rc == TASK_RECOMPUTE_FULL ? c->rc_frac * cpx_f : 0.0);

    /* data-parallel traffic of this layer's parameters */
    double gscale = mode == DT_DGRAD ? 0.0 : 1.0; /* frozen: no gradients */
    double grb = c->gbytes;
    if (c->d.zero >= 3) {
        L->zero3_ag = dt_group_coll(c, TOPO_ALLGATHER, DT_G_ZS, dense_part * pb) +
                      dt_group_coll(c, TOPO_ALLGATHER, DT_G_ZSE, expert_part * pb);
        L->zero3_agb = c->z3_reshard ? L->zero3_ag : 0.0;
        L->zero3_rs = gscale * (dt_group_coll(c, TOPO_REDUCESCATTER, DT_G_ZS, dense_part * grb) +
                                dt_group_coll(c, TOPO_REDUCESCATTER, DT_G_ZSE, expert_part * grb));
        double rs_mb = c->z3_rs_mb ? L->zero3_rs : 0.0;
        double ag_mb = c->z3_ag_mb ? L->zero3_ag : 0.0;
        if (overlap) {
            /* chains of per-layer overlapped gathers miss their ends: the
             * first gather (or, comm-bound, the last compute) */
            L->z3_fhead = fmin(ag_mb, L->fwd);
            L->z3_bhead = fmin(L->zero3_agb, L->bwd);
            L->z3_tail = fmin(L->zero3_rs, L->bwd);
        }
        L->fwd = dt_comm_overlap(c, L->fwd, ag_mb, dpo);
        L->bwd = dt_comm_overlap(c, L->bwd, L->zero3_agb + rs_mb, dpo);
    } else if (mode == DT_TRAIN) {
        if (c->d.zero == 0) {
            L->grad_sync = dt_group_coll(c, TOPO_ALLREDUCE, DT_G_DP, dense_part * grb) +
                           dt_group_coll(c, TOPO_ALLREDUCE, DT_G_EDP, expert_part * grb);
        } else {
            L->grad_sync =
                dt_group_coll(c, TOPO_REDUCESCATTER, DT_G_ZS, dense_part * grb) +
                dt_group_coll(c, TOPO_REDUCESCATTER, DT_G_ZSE, expert_part * grb);
        }
    }
    /* hybrid sharding: the shards' gradients are all-reduced across the
     * replicas (once per iteration, with the last backward) */
    if (mode == DT_TRAIN && c->d.zero >= 1 && zs < c->dpcp) {
        int64_t reps = c->dpcp / zs;
        L->grad_sync +=
            dt_dp_coll(c, TOPO_ALLREDUCE, reps, c->s_dpcp * zs, params * grb / (double)zs);
    }
}
