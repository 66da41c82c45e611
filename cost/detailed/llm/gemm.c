/*
 * gemm.c - a GEMM's time on the hardware: a roofline (hw_gemm_time_scaled)
 * of its FLOPs at the dtype's peak times the hardware table's efficiency
 * for its size, against the HBM time of its operands; FP8 (FP4) GEMMs run
 * at the FP8 (FP4) peak and table and pay the stack's cast/scaling
 * passes. What no scenario's facts move (FLOPs, peak, table efficiency,
 * HBM bytes, launches) is placed once (dt_gemm_place, the efficiency
 * looked up once per size in the evaluation's memo); a scenario's time
 * (dt_gemm_at) applies its facts with the same operations as costing the
 * GEMM whole, so the band repeats no lookup and stays bit for bit.
 * Invariant: dt_gemm_at of a placed GEMM is the time of costing it whole
 * under the same facts, operation for operation.
 */
#include "llm.h"

/* The hardware's efficiency for a GEMM of `flops` in dtype d
 * (hw_gemm_efficiency_dtype), looked up once per size and dtype in the
 * evaluation's memo. */
static double dt_gemm_eff(const dt_ctx *c, hw_dtype d, double flops)
{
    dt_memo *mo = c->memo;
    /* newest first: the last size looked up is the likeliest to repeat */
    for (int i = mo->n - 1; i >= 0; i--)
        if (mo->flops[i] == flops && mo->dtype[i] == (int)d)
            return mo->eff[i];
    double e = hw_gemm_efficiency_dtype(c->hw, d, flops);
    if (mo->n < DT_MEMO_EFFS) {
        mo->flops[mo->n] = flops;
        mo->dtype[mo->n] = (int)d;
        mo->eff[mo->n++] = e;
    }
    return e;
}

/* A batched GEMM (one kernel over `batch` equal problems) reaches the
 * efficiency of its total size; a grouped one (MoE experts: TE
 * GroupedLinear runs one GEMM per local expert) that of one problem.
 * With `wgrad`, also the time of its weight gradient: the same FLOPs at
 * the same efficiency, reading the input (m k) and the output's gradient
 * (m n) and accumulating into the stack's gradient buffer. Megatron-Core's
 * gradient_accumulation_fusion (on unless --no-gradient-accumulation-
 * fusion; megatron/core/extensions/transformer_engine.py passes it to TE
 * Linear and TEGroupedLinear as fuse_wgrad_accumulation) has the GEMM
 * read and write the fp32 main_grad, k n elements of grad_bytes twice,
 * every micro-batch; ZeRO 3 (FSDP) writes a fresh gradient in its reduce
 * dtype per micro-batch instead. Large-m GEMMs stay math-bound; a grouped
 * expert GEMM of few rows per expert (512 at Qwen3-235B TP4 EP8: 100 MB
 * of fp32 gradient for 13 GFLOP) is bound by its gradient buffer. The
 * FP8 casts are the forward's. */
void dt_gemm_place(const dt_ctx *c, double m, double n, double k, double batch, bool lowp,
                   bool grouped, dt_gemm_placed *g)
{
    hw_dtype d = lowp ? c->dt : (hw_dtype_narrow(c->dt) ? HW_BF16 : c->dt);
    /* roofline as hw_gemm_time_scaled, the efficiency looked up once */
    const hw_t *hw = c->hw;
    double flops = 2.0 * m * n * k * batch;
    g->flops = flops;
    g->peak = hw->peak_flops[d] > 0 ? hw->peak_flops[d] : hw->peak_flops[HW_BF16];
    g->eff = dt_gemm_eff(c, d, grouped ? flops / batch : flops);
    double eb = hw_dtype_bytes(d);
    g->tm = hw_mem_time(hw, batch * eb * (m * k + k * n + m * n));
    /* one kernel, or one per problem of a grouped GEMM */
    g->kern = (grouped ? batch : 1.0) * hw->kernel_overhead_s;
    g->narrow = hw_dtype_narrow(d);
    g->batch = batch;
    g->cin = m * k + k * n;
    double acc = c->d.zero >= 3 ? c->gbytes : 2.0 * c->st->grad_bytes;
    g->tw = hw_mem_time(hw, batch * (eb * (m * k + m * n) + acc * k * n));
}

double dt_gemm_at(const dt_ctx *c, const dt_gemm_placed *g, double *wgrad)
{
    double tc = g->flops / (g->peak * c->f.gemm * g->eff), tm = g->tm / c->f.mem;
    double cast = 0.0;
    if (g->narrow && c->f.fp8_cast > 0.0) /* casts and amax of both inputs */
        cast = hw_mem_time(c->hw, c->f.fp8_cast * 2.0 * g->batch * g->cin) / c->f.mem;
    if (wgrad) {
        double tw = g->tw / c->f.mem;
        *wgrad = (tc > tw ? tc : tw) + g->kern + cast;
    }
    return (tc > tm ? tc : tm) + g->kern + cast;
}
