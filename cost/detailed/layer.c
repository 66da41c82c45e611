/*
 * layer.c - the work of one transformer layer per device and
 * micro-batch, forward and backward (comm.c adds what its parallel
 * degrees communicate and what of that stays exposed).
 *
 * Operations (T = micro_batch * seq_len / cp tokens per device):
 *   GEMMs     QKV (grouped-query: (a + 2 kv) dh columns), output
 *             projection, MLP (GeLU: 2 matrices, SwiGLU: 3, gate and up
 *             as one GEMM), MoE router (BF16) and experts (top-k tokens
 *             times capacity factor), shared experts; all split by tp.
 *             Backward = data and weight gradients, each the forward's
 *             FLOPs. Time = roofline (hw_gemm_time_scaled); FP8 GEMMs run
 *             at the FP8 table and pay the stack's cast/scaling passes.
 *   attention core (BF16 even under FP8): fused (flash) at the
 *             hardware's attention efficiency, 4 T s dh a/tp FLOPs
 *             forward (halved when causal), backward 2.5 x forward
 *             (FlashAttention-2 recomputes the scores); or unfused
 *             (materialized scores): two batched GEMMs over the s x s
 *             scores plus softmax/dropout kernels over a s^2 elements.
 *   memory-bound kernels: norms, residual adds and dropout (11 element
 *             accesses of T h, replicated over tp unless sequence
 *             parallel), GeLU (2 of T f/tp) or SwiGLU (3), RoPE (2 of the
 *             q and k elements), times the stack's pass factor (eager
 *             PyTorch runs each element-wise op as its own pass) with a
 *             floor of the stack's launch cost per kernel; backward moves
 *             twice the bytes.
 *   recomputation in the backward: full = the whole forward again;
 *             selective = the attention core when the stack's selective
 *             mode recomputes it (Megatron) plus the stack's fraction of
 *             the GEMMs and of the element-wise work (op-level AC).
 */
#include "dt.h"

#include <math.h>
#include <string.h>

/* The hardware's efficiency for a GEMM of `flops`, memoized. */
static double dt_gemm_eff(const dt_ctx *c, hw_dtype d, double flops)
{
    dt_memo *mo = c->memo;
    for (int i = 0; i < mo->n; i++)
        if (mo->flops[i] == flops && mo->dtype[i] == (int)d)
            return mo->eff[i];
    double e = hw_gemm_efficiency_dtype(c->hw, d, flops);
    if (mo->n < DT_MEMO) {
        mo->flops[mo->n] = flops;
        mo->dtype[mo->n] = (int)d;
        mo->eff[mo->n++] = e;
    }
    return e;
}

double dt_gemm_p(const dt_ctx *c, double m, double n, double k, double batch, bool lowp)
{
    hw_dtype d = lowp ? c->dt : (c->dt == HW_FP8 ? HW_BF16 : c->dt);
    /* roofline as hw_gemm_time_scaled, the efficiency looked up once */
    const hw_t *hw = c->hw;
    double flops = 2.0 * m * n * k * batch;
    double peak = hw->peak_flops[d] > 0 ? hw->peak_flops[d] : hw->peak_flops[HW_BF16];
    double tc = flops / (peak * c->f.gemm * dt_gemm_eff(c, d, flops));
    double tm = hw_mem_time(hw, batch * hw_dtype_bytes(d) * (m * k + k * n + m * n)) / c->f.mem;
    double t = (tc > tm ? tc : tm) + hw->kernel_overhead_s;
    if (d == HW_FP8 && c->f.fp8_cast > 0.0) /* casts and amax of both inputs */
        t += hw_mem_time(c->hw, c->f.fp8_cast * 2.0 * batch * (m * k + k * n)) / c->f.mem;
    return t;
}

double dt_elem(const dt_ctx *c, double bytes, double kernels)
{
    double t = hw_mem_time(c->hw, bytes * c->f.ew_passes) / c->f.mem +
               kernels * c->hw->kernel_overhead_s;
    double floor = kernels * c->f.ew_passes * c->f.launch_s;
    return t > floor ? t : floor;
}

/* FLOP/s of fused attention on this hardware: FlashAttention-2-class
 * kernels, or the vendor-tuned ones where the generation has a figure. */
static double dt_attn_rate(const dt_ctx *c)
{
    const hw_t *hw = c->hw;
    hw_dtype d = c->dt == HW_FP8 ? HW_BF16 : c->dt;
    double peak = hw->peak_flops[d] > 0 ? hw->peak_flops[d] : hw->peak_flops[HW_BF16];
    double eff = c->attention == TASK_ATTENTION_TUNED && hw->attention_tuned_efficiency > 0
                     ? hw->attention_tuned_efficiency
                     : hw->attention_efficiency;
    return peak * eff * c->f.attn;
}

void dt_layer_cost(const dt_ctx *c, bool moe, bool training, int mode, dt_layer *L)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    double tp = (double)c->d.tp, T = c->tok, h = (double)m->hidden;
    double a = (double)m->heads, dh = h / a;
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double at = a / tp, kvt = kv >= tp ? kv / tp : 1.0;
    double mats = dt_mlp_mats(m), ab = c->ab, ov = hw->kernel_overhead_s;
    memset(L, 0, sizeof *L);

    /* GEMMs */
    double g = dt_gemm(c, T, (at + 2.0 * kvt) * dh, h, 1) + dt_gemm(c, T, h, at * dh, 1);
    double params = (h * (at + 2.0 * kvt) * dh + at * dh * h);
    double ffn_t = (double)m->ffn / tp;
    double act_cols = ffn_t; /* MLP activation columns per token */
    if (!moe) {
        g += dt_gemm(c, T, (mats - 1.0) * ffn_t, h, 1) + dt_gemm(c, T, h, ffn_t, 1);
        params += mats * h * ffn_t;
    } else {
        double E = (double)m->d.experts, ep = (double)c->d.ep;
        double fe = dt_expert_ffn(m) / tp, k = (double)dt_top_k(m);
        double local = E / ep;
        double rows = T * k * c->d.cf / local; /* tokens per local expert */
        g += dt_gemm_p(c, T, E, h, 1, false); /* router */
        g += dt_gemm(c, rows, (mats - 1.0) * fe, h, local) + dt_gemm(c, rows, h, fe, local);
        params += local * mats * h * fe + h * E;
        act_cols = k * c->d.cf * fe;
        if (m->d.shared_experts > 0) {
            double fs = (double)m->d.shared_experts * fe;
            g += dt_gemm(c, T, (mats - 1.0) * fs, h, 1) + dt_gemm(c, T, h, fs, 1);
            params += mats * h * fs;
            act_cols += fs;
        }
    }
    L->params = params;

    /* attention core */
    double s = c->kv_len, mbat = (double)c->d.mb;
    double attn_f, attn_b, attn_elem_f = 0.0, attn_elem_b = 0.0;
    if (c->attention != TASK_ATTENTION_UNFUSED) {
        double fl = 4.0 * mbat * at * c->seq * s * dh * (m->causal ? 0.5 : 1.0);
        attn_f = fl / dt_attn_rate(c) + ov;
        attn_b = 2.5 * (attn_f - ov) + ov;
    } else {
        double batch = mbat * at;
        attn_f = dt_gemm_p(c, c->seq, s, dh, batch, false) +
                 dt_gemm_p(c, c->seq, dh, s, batch, false);
        attn_b = 2.0 * attn_f;
        double el = batch * c->seq * s;
        attn_elem_f = hw_mem_time(hw, el * (4.0 * ab + 1.0)) / c->f.mem + 3.0 * ov;
        attn_elem_b = hw_mem_time(hw, el * (5.0 * ab + 1.0)) / c->f.mem + 3.0 * ov;
    }
    L->attn_f = attn_f;
    L->attn_b = attn_b;

    /* memory-bound kernels */
    double rep = 11.0 * T * h * ab / (c->sp ? tp : 1.0);
    double act = (mats == 3.0 ? 3.0 : 2.0) * T * act_cols * ab;
    if (m->d.position == MODEL_POS_ROPE)
        act += 2.0 * T * (at + kvt) * dh * ab;
    double elem_f = dt_elem(c, rep + act, 8.0);

    L->gemm_f = g;
    L->comp_fwd = g + attn_f + attn_elem_f + elem_f;
    L->mem_f = attn_elem_f + elem_f;
    if (!training)
        return;
    if (mode == DT_NOBWD)
        return; /* frozen, nothing trained below: forward only */
    /* data gradients always; weight gradients when trained */
    double gb = mode == DT_DGRAD ? g : 2.0 * g;
    L->gemm_b = gb;
    L->comp_bwd = gb + attn_b + attn_elem_b + 2.0 * elem_f;
    L->mem_b = attn_elem_b + 2.0 * elem_f;
    if (c->rc == TASK_RECOMPUTE_FULL) {
        L->recomp = L->comp_fwd;
        L->mem_b += L->mem_f;
    } else if (c->rc == TASK_RECOMPUTE_SELECTIVE) {
        double sg = c->f.sel_gemm;
        bool sa = c->st->selective_attention;
        L->recomp = (sa ? attn_f + attn_elem_f : 0.0) + sg * (g + elem_f);
        L->mem_b += (sa ? attn_elem_f : 0.0) + sg * elem_f;
    }
    L->comp_bwd += L->recomp;
}
