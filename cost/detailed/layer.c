/*
 * layer.c - the work of one transformer layer per device and
 * micro-batch, forward and backward, with the communication its parallel
 * degrees imply.
 *
 * Operations (T = micro_batch * seq_len / cp tokens per device):
 *   GEMMs     QKV (grouped-query: (a + 2 kv) dh columns), output
 *             projection, MLP (GeLU: 2 matrices, SwiGLU: 3), MoE router
 *             and experts (top-k tokens times capacity factor); all split
 *             by tp. Backward = 2 x forward (data and weight gradients).
 *             Time = roofline (hw_gemm_time).
 *   attention core: fused (flash) at the hardware's attention efficiency,
 *             4 T s dh a/tp FLOPs forward (halved when causal), backward
 *             2.5 x forward (FlashAttention-2 recomputes the scores); or
 *             unfused: two batched GEMMs over the full s x s scores plus
 *             softmax/dropout kernels over a s^2 elements.
 *   memory-bound kernels: layer norms, bias-dropout-residual adds
 *             (11 element accesses of T h, replicated over tp unless
 *             sequence parallel), GeLU/SwiGLU, RoPE; backward moves twice
 *             the bytes.
 *   tensor parallel: 2 all-reduces (or all-gather + reduce-scatter with
 *             sequence parallelism) of T h elements per layer and pass;
 *             with overlap_tp_comm only the part exceeding the GEMMs.
 *   context parallel: ring attention passes K,V chunks around cp ranks,
 *             overlapped with the attention core.
 *   expert parallel: dispatch and combine all-to-all per MoE layer and
 *             pass.
 *   data parallel: this layer's gradients all-reduced (ZeRO 0) or
 *             reduce-scattered (ZeRO 1, 2); ZeRO 3 all-gathers the
 *             parameters before each forward and backward and
 *             reduce-scatters the gradients after it, overlapped when
 *             overlap_dp_comm with a one-layer-ahead prefetch (the ends of
 *             each chain stay exposed: z3_fhead, z3_bhead, z3_tail).
 */
#include "dt.h"

#include <math.h>
#include <string.h>

/* Cost of one layer; `moe` selects the MoE MLP, `mode` its backward. */
void dt_layer_cost(const dt_ctx *c, bool moe, bool training, int mode,
                   dt_layer *L)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    double tp = (double)c->d.tp, T = c->tok, h = (double)m->hidden;
    double a = (double)m->heads, dh = h / a;
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double at = a / tp, kvt = kv >= tp ? kv / tp : 1.0;
    double mats = dt_mlp_mats(m), ab = c->ab, ov = hw->kernel_overhead_s;
    bool sp = c->t->sequence_parallel && c->d.tp > 1;
    memset(L, 0, sizeof *L);

    /* GEMMs */
    double g = dt_gemm(c, T, (at + 2.0 * kvt) * dh, h, 1) + dt_gemm(c, T, h, at * dh, 1);
    double params = (h * (at + 2.0 * kvt) * dh + at * dh * h);
    double ffn_t = (double)m->ffn / tp;
    double a2a = 0.0;
    if (!moe) {
        g += dt_gemm(c, T, (mats - 1.0) * ffn_t, h, 1) + dt_gemm(c, T, h, ffn_t, 1);
        params += mats * h * ffn_t;
    } else {
        double E = (double)m->d.experts, ep = (double)c->d.ep;
        double fe = dt_expert_ffn(m) / tp, k = (double)dt_top_k(m);
        double local = E / ep;
        double rows = T * k * c->d.cf / local; /* tokens per local expert */
        g += dt_gemm(c, T, E, h, 1);          /* router */
        g += dt_gemm(c, rows, (mats - 1.0) * fe, h, local) +
             dt_gemm(c, rows, h, fe, local);
        params += local * mats * h * fe + h * E;
        if (m->d.shared_experts > 0) {
            double fs = (double)m->d.shared_experts * fe;
            g += dt_gemm(c, T, (mats - 1.0) * fs, h, 1) + dt_gemm(c, T, h, fs, 1);
            params += mats * h * fs;
        }
        if (c->d.ep > 1) {
            double bytes = T * k * c->d.cf * h * ab / (sp ? tp : 1.0);
            a2a = 2.0 * dt_coll(c, TOPO_ALLTOALL, c->d.ep, c->s_dpcp, bytes);
        }
    }
    L->params = params;

    /* attention core */
    double s = c->kv_len, mbat = (double)c->d.mb;
    double attn_f, attn_b, attn_elem_f = 0.0, attn_elem_b = 0.0;
    if (c->t->attention == TASK_ATTENTION_FLASH) {
        double fl = 4.0 * mbat * at * c->seq * s * dh * (m->causal ? 0.5 : 1.0);
        double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt]
                                                : hw->peak_flops[HW_BF16];
        attn_f = fl / (peak * hw->attention_efficiency) + ov;
        attn_b = 2.5 * (attn_f - ov) + ov;
    } else {
        double batch = mbat * at;
        attn_f = dt_gemm(c, c->seq, s, dh, batch) + dt_gemm(c, c->seq, dh, s, batch);
        attn_b = 2.0 * attn_f;
        double el = batch * c->seq * s;
        attn_elem_f = hw_mem_time(hw, el * (4.0 * ab + 1.0)) + 3.0 * ov;
        attn_elem_b = hw_mem_time(hw, el * (5.0 * ab + 1.0)) + 3.0 * ov;
    }
    if (c->d.cp > 1) {
        double kvb = 2.0 * T * kvt * dh * ab;
        double ring = (double)(c->d.cp - 1) *
                      dt_coll(c, TOPO_P2P, 2, c->stride[DT_CP], kvb);
        L->cp_comm = ring;
        if (ring > attn_f)
            attn_f = ring;
        if (2.0 * ring > attn_b)
            attn_b = 2.0 * ring;
    }

    /* memory-bound kernels */
    double rep = 11.0 * T * h * ab / (sp ? tp : 1.0);
    double act = (mats == 3.0 ? 3.0 : 2.0) * T * ffn_t * ab;
    if (moe)
        act = (mats == 3.0 ? 3.0 : 2.0) * T * (double)dt_top_k(m) * c->d.cf *
              dt_expert_ffn(m) / tp * ab;
    if (m->d.position == MODEL_POS_ROPE)
        act += 2.0 * T * (at + kvt) * dh * ab;
    double elem_f = hw_mem_time(hw, rep + act) + 8.0 * ov;

    /* tensor parallel collectives per pass */
    double tpc = 0.0;
    if (c->d.tp > 1) {
        double bytes = T * h * ab;
        int64_t st = c->stride[DT_TP];
        tpc = sp ? 2.0 * (dt_coll(c, TOPO_ALLGATHER, c->d.tp, st, bytes) +
                          dt_coll(c, TOPO_REDUCESCATTER, c->d.tp, st, bytes))
                 : 2.0 * dt_coll(c, TOPO_ALLREDUCE, c->d.tp, st, bytes);
    }
    L->tp_comm = tpc;
    L->a2a = a2a;
    /* with TP overlap (userbuffers-style pipelined GEMM + collective) only
     * what exceeds the layer's GEMMs stays exposed */
    double tpx = c->t->overlap_tp_comm ? fmax(0.0, tpc - g) : tpc;

    L->comp_fwd = g + attn_f + attn_elem_f + elem_f;
    L->fwd = L->comp_fwd + tpx + a2a;
    if (!training)
        return;
    if (mode == DT_NOBWD) {
        /* frozen, nothing trained below: forward only (ZeRO 3 still
         * gathers the parameters for it) */
        if (c->d.zero >= 3) {
            int64_t zs = c->zs;
            L->zero3_ag = dt_coll(c, TOPO_ALLGATHER, zs, c->s_dpcp, params * ab);
            L->z3_fhead = c->t->overlap_dp_comm ? fmin(L->zero3_ag, L->fwd) : 0.0;
            if (!c->t->overlap_dp_comm)
                L->fwd += L->zero3_ag;
            else if (L->zero3_ag > L->fwd)
                L->fwd = L->zero3_ag;
        }
        return;
    }
    /* data gradients always; weight gradients when trained */
    double gb = mode == DT_DGRAD ? g : 2.0 * g;
    L->comp_bwd = gb + attn_b + attn_elem_b + 2.0 * elem_f;
    L->bwd = L->comp_bwd + (c->t->overlap_tp_comm ? fmax(0.0, tpc - gb) : tpc) + a2a;
    if (c->t->recompute == TASK_RECOMPUTE_FULL) {
        L->comp_bwd += L->comp_fwd;
        L->bwd += L->fwd;
    } else if (c->t->recompute == TASK_RECOMPUTE_SELECTIVE) {
        L->comp_bwd += attn_f + attn_elem_f;
        L->bwd += attn_f + attn_elem_f;
    }

    /* data-parallel traffic of this layer's parameters */
    double expert_part = 0.0;
    if (moe) {
        double fe = dt_expert_ffn(m) / tp;
        expert_part = (double)m->d.experts / (double)c->d.ep * mats * h * fe;
    }
    double dense_part = params - expert_part;
    double gscale = mode == DT_DGRAD ? 0.0 : 1.0; /* frozen: no gradients */
    int64_t edp = c->dpcp / c->d.ep, es = c->s_dpcp * c->d.ep;
    int64_t zs = c->zs, zse = zs / c->d.ep > 0 ? zs / c->d.ep : 1;
    if (c->d.zero >= 3) {
        /* shard group: zs ranks (hybrid sharding: zs < dp cp) */
        L->zero3_ag = dt_coll(c, TOPO_ALLGATHER, zs, c->s_dpcp, dense_part * ab) +
                      dt_coll(c, TOPO_ALLGATHER, zse, es, expert_part * ab);
        L->zero3_rs =
            gscale * (dt_coll(c, TOPO_REDUCESCATTER, zs, c->s_dpcp, dense_part * c->gbytes) +
                      dt_coll(c, TOPO_REDUCESCATTER, zse, es, expert_part * c->gbytes));
        if (c->t->overlap_dp_comm) {
            /* chains of per-layer max(compute, comm) miss their ends:
             * the first gather (or, comm-bound, the last compute) */
            L->z3_fhead = fmin(L->zero3_ag, L->fwd);
            L->z3_bhead = fmin(L->zero3_ag, L->bwd);
            L->z3_tail = fmin(L->zero3_rs, L->bwd);
            if (L->zero3_ag > L->fwd)
                L->fwd = L->zero3_ag;
            if (L->zero3_ag + L->zero3_rs > L->bwd)
                L->bwd = L->zero3_ag + L->zero3_rs;
        } else {
            L->fwd += L->zero3_ag;
            L->bwd += L->zero3_ag + L->zero3_rs;
        }
    } else if (mode == DT_TRAIN) {
        if (c->d.zero == 0) {
            L->grad_sync = dt_coll(c, TOPO_ALLREDUCE, c->dpcp, c->s_dpcp, dense_part * c->gbytes) +
                           dt_coll(c, TOPO_ALLREDUCE, edp, es, expert_part * c->gbytes);
        } else {
            L->grad_sync =
                dt_coll(c, TOPO_REDUCESCATTER, zs, c->s_dpcp, dense_part * c->gbytes) +
                dt_coll(c, TOPO_REDUCESCATTER, zse, es, expert_part * c->gbytes);
        }
    }
    /* hybrid sharding: the shards' gradients are all-reduced across the
     * replicas (once per iteration, with the last backward) */
    if (mode == DT_TRAIN && c->d.zero >= 1 && zs < c->dpcp) {
        int64_t reps = c->dpcp / zs;
        L->grad_sync += dt_coll(c, TOPO_ALLREDUCE, reps, c->s_dpcp * zs,
                                params * c->gbytes / (double)zs);
    }
}
