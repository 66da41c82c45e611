/*
 * layer.c - the work of one transformer layer per device and
 * micro-batch, forward and backward (comm.c adds what its parallel
 * degrees communicate and what of that stays exposed).
 *
 * A plan per kind of layer (llm.h DT_L_*): dense or MoE MLP, full
 * attention or the model's second kind (a sliding window: each query
 * sees at most the window's keys; Gated DeltaNet: its projections, the
 * chunked form's FLOPs at the attention efficiency, its conv, norms and
 * chunk states as memory-bound traffic; core/shape.c). Parts the model
 * keeps in BF16 (model.d.*_weight_precision) run their GEMMs in BF16
 * under FP8/FP4 compute.
 * Operations (T = micro_batch * seq_len / cp tokens per device):
 *   GEMMs     QKV (grouped-query: (a + 2 kv) dh columns), output
 *             projection, MLP (GeLU: 2 matrices, SwiGLU: 3, gate and up
 *             as one GEMM), MoE router (BF16) and experts (top-k tokens
 *             times capacity factor), shared experts; all split by tp.
 *             Backward = data and weight gradients, each the forward's
 *             FLOPs; the weight gradient's memory side reads the input
 *             and the output's gradient and reads and writes the
 *             stack's gradient buffer (accumulated in place every
 *             micro-batch; ZeRO 3 writes it once in its reduce dtype),
 *             which bounds grouped expert GEMMs of few rows per expert.
 *             Time = roofline (hw_gemm_time_scaled); FP8 (FP4)
 *             GEMMs run at the FP8 (FP4) peak and table and pay the
 *             stack's cast/scaling passes.
 *   attention core (BF16 even under FP8/FP4): fused (flash) at the
 *             hardware's attention efficiency, 4 T s dh a/tp FLOPs
 *             forward (halved when causal), backward 2.5 x forward
 *             (FlashAttention-2 recomputes the scores); or unfused
 *             (materialized scores): two batched GEMMs over the s x s
 *             scores plus softmax/dropout kernels over a s^2 elements.
 *   memory-bound kernels: norms, residual adds and dropout (11 element
 *             accesses of T h, replicated over tp unless sequence
 *             parallel), GeLU (2 of T f/tp) or SwiGLU (3), RoPE (2 of the
 *             q and k elements), per-head q/k norms (qk_norm: 2 of the q
 *             and k elements, two more kernels), times the stack's pass factor (eager
 *             PyTorch runs each element-wise op as its own pass) with a
 *             floor of the stack's launch cost per kernel; backward moves
 *             twice the bytes.
 *   recomputation in the backward: full = the whole forward again;
 *             selective = the attention core when the stack's selective
 *             mode recomputes it (Megatron) plus the stack's fraction of
 *             the GEMMs and of the element-wise work (op-level AC).
 * What no scenario's facts move (the GEMMs' FLOPs, table efficiencies and
 * HBM bytes, the core's FLOPs, the kernels' bytes) is placed once per
 * evaluation and micro-batch (dt_layer_plan_build, kept in the
 * evaluation's memo); each scenario applies its facts to the plan with
 * the same operations as costing the layer whole (gemm.c dt_gemm_at), so
 * the band's runs repeat no lookup and every figure stays bit for bit.
 * Invariant: the plan depends on the micro-batch only (re-planned when
 * the tuner changes it), the costs on the plan and the scenario's facts.
 */
#include "llm.h"

#include <string.h>

/* The layer's GEMM `i` placed (with `pair`: summed with the next). */
static void dt_layer_plan_gemm(const dt_ctx *c, dt_layer_plan *lp, bool pair, double m, double n,
                               double k, double batch, bool lowp, bool grouped)
{
    lp->pair[lp->n] = pair;
    dt_gemm_place(c, m, n, k, batch, lowp, grouped, &lp->g[lp->n++]);
}

/* Whether a part's GEMMs run in the narrow compute dtype: its stored
 * weights (part_w, TASK_W_*) are not kept wider (a BF16-kept part runs
 * in BF16 under FP8/FP4 compute). */
static bool dt_layer_part_lowp(const dt_ctx *c, int part_w)
{
    return !(part_w == TASK_W_BF16 && hw_dtype_narrow(c->dt)) &&
           !(part_w == TASK_W_FP8 && c->dt == HW_FP4);
}

/* The attention core's forward FLOPs on this device for a layer of the
 * second kind, or of a full one with sparse attention: the window's or
 * the top-k's keys per query (the indexer scoring every key), or Gated
 * DeltaNet's chunked work (its states' traffic into *io bytes). */
static double dt_layer_core_alt(const dt_ctx *c, bool alt, const dt_attn_sh *as, double *io)
{
    const model_t *m = c->m;
    double mbat = (double)c->d.mb, at = (double)m->heads / (double)c->d.tp, s = c->kv_len;
    *io = 0.0;
    if (alt && c->alt == DT_KIND_LINEAR) {
        *io = mbat * c->seq * c->lin.chunk_io;
        return mbat * c->seq * c->lin.fl_prompt;
    }
    double lim = alt ? (double)m->d.sliding_window : (double)m->d.index_topk;
    double keys = m->causal ? dt_shape_pairs(0.0, s, lim) / s : dt_min(s, lim);
    double fl = 2.0 * mbat * at * c->seq * keys * (as->dqk + as->dv);
    if (!alt) /* the indexer, replicated over tp */
        fl += 2.0 * mbat * c->seq * (double)m->d.index_heads * (double)m->d.index_head_dim * s *
              (m->causal ? 0.5 : 1.0);
    return fl;
}

/* The plan of a layer of kind `kind` (llm.h DT_L_*) at the context's
 * micro-batch. */
static void dt_layer_plan_build(const dt_ctx *c, int kind, dt_layer_plan *lp)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    bool moe = kind & DT_L_MOE, alt = kind & DT_L_ALT;
    double tp = (double)c->d.tp, T = c->tok, h = (double)m->hidden;
    double at = (double)m->heads / tp;
    double mats = dt_shape_mlp_mats(m), ab = c->ab;
    const dt_attn_sh *as = alt ? &c->asa : &c->as;
    bool alow = dt_layer_part_lowp(c, m->d.attn_weight_precision);

    /* GEMMs: forward (= data gradient) and weight gradient */
    lp->n = 0;
    for (int i = 0; i < as->n; i++)
        dt_layer_plan_gemm(c, lp, false, T, as->gn[i], as->gk[i], 1, alow, false);
    double params = as->params, permute = 0.0;
    double ffn_t = (double)m->ffn / tp;
    double act_cols = ffn_t; /* MLP activation columns per token */
    bool dlow = dt_layer_part_lowp(c, m->d.dense_weight_precision);
    bool elow = dt_layer_part_lowp(c, m->d.expert_weight_precision);
    if (!moe) {
        dt_layer_plan_gemm(c, lp, true, T, (mats - 1.0) * ffn_t, h, 1, dlow, false);
        dt_layer_plan_gemm(c, lp, false, T, h, ffn_t, 1, dlow, false);
        params += mats * h * ffn_t;
    } else {
        double E = (double)m->d.experts, ep = (double)c->d.ep, etp = (double)c->etp;
        double fe = dt_shape_expert_ffn(m) / etp, k = (double)dt_shape_top_k(m);
        double local = E / ep;
        /* tokens per local expert: this rank's share of its expert
         * group's routed tokens (T k cf / tp per rank at full width when
         * etp = 1; T k cf at fe / tp when etp = tp) */
        double rows = T * k * c->d.cf * etp / (tp * local);
        dt_layer_plan_gemm(c, lp, false, T, E, h, 1, false, false); /* router */
        dt_layer_plan_gemm(c, lp, true, rows, (mats - 1.0) * fe, h, local, elow, true);
        dt_layer_plan_gemm(c, lp, false, rows, h, fe, local, elow, true);
        params += local * mats * h * fe + h * E;
        act_cols = k * c->d.cf * dt_shape_expert_ffn(m) / tp;
        /* token permutation before the dispatch and unpermutation with
         * the router's weights after the combine (Megatron-Core
         * moe_utils.permute/unpermute): read T h, write T k h, and back */
        permute = 2.0 * (T + T * k * c->d.cf) * h * ab / (c->sp ? tp : 1.0);
        if (m->d.shared_experts > 0) {
            double fs = (double)m->d.shared_experts * dt_shape_expert_ffn(m) / tp;
            dt_layer_plan_gemm(c, lp, true, T, (mats - 1.0) * fs, h, 1, dlow, false);
            dt_layer_plan_gemm(c, lp, false, T, h, fs, 1, dlow, false);
            params += mats * h * fs;
            act_cols += fs;
        }
    }
    lp->params = params;
    lp->act_cols = act_cols;
    lp->permute = permute;

    /* attention core (Gated DeltaNet's chunked kernels always fused) */
    double s = c->kv_len, mbat = (double)c->d.mb, core_io = 0.0;
    bool other = alt || m->d.index_topk > 0; /* a window, top-k keys or linear */
    if (c->attention != TASK_ATTENTION_UNFUSED || (alt && c->alt == DT_KIND_LINEAR)) {
        /* FLOP/s of fused attention on this hardware: FlashAttention-2-class
         * kernels, or the vendor-tuned ones where the generation has a
         * figure (times the scenario's multiplier) */
        hw_dtype d = hw_dtype_narrow(c->dt) ? HW_BF16 : c->dt;
        double peak = hw->peak_flops[d] > 0 ? hw->peak_flops[d] : hw->peak_flops[HW_BF16];
        double eff = c->attention == TASK_ATTENTION_TUNED && hw->attention_tuned_efficiency > 0
                         ? hw->attention_tuned_efficiency
                         : hw->attention_efficiency;
        lp->attn_fl =
            other ? dt_layer_core_alt(c, alt, as, &core_io)
                  : 2.0 * mbat * at * c->seq * s * (as->dqk + as->dv) * (m->causal ? 0.5 : 1.0);
        lp->attn_pe = peak * eff;
    } else {
        double batch = mbat * at;
        dt_gemm_place(c, c->seq, s, as->dqk, batch, false, false, &lp->ua[0]);
        dt_gemm_place(c, c->seq, as->dv, s, batch, false, false, &lp->ua[1]);
        double el = batch * c->seq * s;
        lp->ua_mf = hw_mem_time(hw, el * (4.0 * ab + 1.0));
        lp->ua_mb = hw_mem_time(hw, el * (5.0 * ab + 1.0));
    }

    /* memory-bound kernels */
    double rep = 11.0 * T * h * ab / (c->sp ? tp : 1.0);
    double act = (mats == 3.0 ? 3.0 : 2.0) * T * act_cols * ab;
    if (m->d.position == MODEL_POS_ROPE)
        act += 2.0 * T * as->rope * ab;
    if (m->d.qk_norm && !(alt && c->alt == DT_KIND_LINEAR)) /* per-head RMSNorm of q and k */
        act += 2.0 * T * (as->q + as->k) * ab;
    double kern = m->d.qk_norm ? 10.0 : 8.0;
    if (as->gate > 0.0) { /* the gate: sigmoid (or the gated norm) times the output */
        act += 3.0 * T * as->gate * ab;
        kern += 1.0;
    }
    if (alt && c->alt == DT_KIND_LINEAR) {
        /* Gated DeltaNet: the causal conv over q, k, v (read, write), the
         * l2 norms of q and k and the gates' activations (one pass each),
         * the chunk states' traffic (core_io) */
        act += 2.0 * T * c->lin.conv * ab + 2.0 * T * (as->q + as->k) * ab + core_io;
        kern += 3.0;
    }
    lp->elem_bytes = rep + act;
    lp->elem_kern = kern;
    /* selective recomputation's norms (read T h, write T h, twice) and
     * activation */
    lp->na_bytes = 4.0 * T * h * ab / (c->sp ? tp : 1.0) +
                   (mats == 3.0 ? 3.0 : 2.0) * T * act_cols * ab;
}

void dt_layer_cost(const dt_ctx *c, int kind, bool training, int mode, dt_layer *L)
{
    dt_memo *mo = c->memo;
    if (mo->plan_mb[kind] != c->d.mb) {
        dt_layer_plan_build(c, kind, &mo->lp[kind]);
        mo->plan_mb[kind] = c->d.mb;
    }
    const dt_layer_plan *lp = &mo->lp[kind];
    double ov = c->hw->kernel_overhead_s;
    memset(L, 0, sizeof *L);

    /* GEMMs */
    double g = 0.0, gw = 0.0; /* forward (= data gradient) and weight gradient */
    bool wg = training && mode == DT_TRAIN;
    for (int i = 0; i < lp->n; i++) {
        double w = 0.0, t = dt_gemm_at(c, &lp->g[i], wg ? &w : NULL);
        if (wg)
            gw += w;
        if (lp->pair[i]) {
            double w2 = 0.0, t2 = dt_gemm_at(c, &lp->g[++i], wg ? &w2 : NULL);
            if (wg)
                gw += w2;
            t += t2;
        }
        g += t;
    }
    L->params = lp->params;

    /* attention core */
    double attn_f, attn_b, attn_elem_f = 0.0, attn_elem_b = 0.0;
    if (c->attention != TASK_ATTENTION_UNFUSED || ((kind & DT_L_ALT) && c->alt == DT_KIND_LINEAR)) {
        attn_f = lp->attn_fl / (lp->attn_pe * c->f.attn) + ov;
        attn_b = 2.5 * (attn_f - ov) + ov;
    } else {
        attn_f = dt_gemm_at(c, &lp->ua[0], NULL) + dt_gemm_at(c, &lp->ua[1], NULL);
        attn_b = 2.0 * attn_f;
        attn_elem_f = lp->ua_mf / c->f.mem + 3.0 * ov;
        attn_elem_b = lp->ua_mb / c->f.mem + 3.0 * ov;
    }
    L->attn_f = attn_f;
    L->attn_b = attn_b;

    /* memory-bound kernels */
    double elem_f = dt_membound_time(c, lp->elem_bytes, lp->elem_kern) +
                    (lp->permute > 0.0 ? dt_membound_time(c, lp->permute, 4.0) : 0.0);

    L->gemm_f = g;
    L->comp_fwd = g + attn_f + attn_elem_f + elem_f;
    L->mem_f = attn_elem_f + elem_f;
    if (!training)
        return;
    if (mode == DT_NOBWD)
        return; /* frozen, nothing trained below: forward only */
    /* data gradients always; weight gradients when trained */
    double gb = mode == DT_DGRAD ? g : g + gw;
    L->gemm_b = gb;
    L->comp_bwd = gb + attn_b + attn_elem_b + 2.0 * elem_f;
    L->mem_b = attn_elem_b + 2.0 * elem_f;
    if (c->rc == TASK_RECOMPUTE_FULL) {
        L->recomp = c->rc_frac * L->comp_fwd;
        L->mem_b += c->rc_frac * L->mem_f;
    } else if (c->rc == TASK_RECOMPUTE_SELECTIVE && c->f.sel_block > 0.0) {
        L->recomp = c->f.sel_block * L->comp_fwd; /* whole blocks, every 1/f-th */
        L->mem_b += c->f.sel_block * L->mem_f;
    } else if (c->rc == TASK_RECOMPUTE_SELECTIVE) {
        double sg = c->f.sel_gemm;
        bool sa = c->st->selective_attention;
        L->recomp = (sa ? attn_f + attn_elem_f : 0.0) + sg * (g + elem_f);
        L->mem_b += (sa ? attn_elem_f : 0.0) + sg * elem_f;
        if (c->st->selective_norm_act) {
            double na = dt_membound_time(c, lp->na_bytes, 3.0);
            L->recomp += na;
            L->mem_b += na;
        }
    }
    L->comp_bwd += L->recomp;
}
