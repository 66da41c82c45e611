/*
 * mlp.c - a DLRM's dense part as the band's scenarios share it: each MLP
 * layer as GEMMs of the local batch (forward; backward data and weight
 * gradients, none into the dense features) at the hardware curve's
 * efficiency with their floor (the FLOPs at peak, one kernel), the
 * memory-bound passes around them; the dot interaction of tables + 1
 * vectors as a batched GEMM plus its copies, or DCNv2's cross_layers
 * low-rank layers on the (tables + 1) x emb_dim concatenation (two GEMMs
 * of rank cross_rank and an element-wise x0 * (.) + b + x_l each).
 * A scenario runs the GEMMs at the stack's mlp_efficiency times the
 * curve's rate, never above peak (dlrm.h's dlrm_mlp_gemm_at, dlrm_mlp_times,
 * dlrm_mlp_inter_times).
 * Invariant: the three GEMMs of a layer whose sizes are exact in double
 * take one time, computed once (dlrm_mlp_one_time), so a scenario's sums
 * are the same whichever is costed.
 */
#include "dlrm.h"

dlrm_mlp_gemm dlrm_mlp_gemm_of(const hw_t *hw, hw_dtype dt, double peak, double m, double n,
                               double k, double f, double eff)
{
    dlrm_mlp_gemm g = {hw_gemm_time_eff(hw, dt, m, n, k, 1.0, 1.0, 1.0, eff),
                      f / peak + hw->kernel_overhead_s};
    return g;
}

/* Do the GEMMs b x out x in, b x in x out and in x out x b take one
 * time? Their FLOPs and bytes (hw_gemm_time_eff) are the same products
 * and sums in other orders, exact (hence equal) for whole numbers whose
 * product is at most 2^51: 2 b in out and the three products' sum then
 * stay below 2^53. The sizes are whole: the local batch divides the
 * global one (dlrm_prep_of), the widths are counts or sums and
 * products of counts of at most DT_MAX_COUNT. */
static bool dlrm_mlp_one_time(double b, double in, double out)
{
    return b * in * out <= 0x1p51;
}

void dlrm_mlp_layer_of(const hw_t *hw, hw_dtype dt, double peak, double ab, double b, double in,
                       double out, bool dgrad, bool wgrad, double ef, dlrm_mlp_layer *L)
{
    /* forward, data and weight gradient GEMMs (a GEMM of the FLOPs of
     * one before reads its efficiency) */
    double ff = 2.0 * b * out * in;
    L->g[0] = dlrm_mlp_gemm_of(hw, dt, peak, b, out, in, ff, ef);
    L->one = dlrm_mlp_one_time(b, in, out);
    if (L->one) {
        L->g[1] = L->g[2] = L->g[0];
    } else {
        double fd = 2.0 * b * in * out, fw = 2.0 * in * out * b;
        double ed = fd == ff ? ef : hw_gemm_efficiency_dtype(hw, dt, fd);
        double ew = fw == fd ? ed : fw == ff ? ef : hw_gemm_efficiency_dtype(hw, dt, fw);
        L->g[1] = dlrm_mlp_gemm_of(hw, dt, peak, b, in, out, fd, ed);
        L->g[2] = dlrm_mlp_gemm_of(hw, dt, peak, in, out, b, fw, ew);
    }
    L->params = dlrm_shape_layer_params(in, out);
    L->mem_f = hw_mem_time(hw, 2.0 * b * out * ab);
    L->mem_b = hw_mem_time(hw, 3.0 * b * out * ab);
    L->k = (double)((int)dgrad + (int)wgrad); /* 1 + k: 1.0 + (0 or 1) + (0 or 1) */
    L->flops = 2.0 * b * in * out * (1.0 + L->k);
    L->dgrad = dgrad;
    L->wgrad = wgrad;
}

void dlrm_mlp_inter_of(const model_t *m, const hw_t *hw, hw_dtype dt, double ab, double b, bool bwd,
                       dlrm_mlp_inter *x)
{
    double T = (double)m->tables, D = (double)m->emb_dim, F = T + 1.0;
    double ov = hw->kernel_overhead_s;
    x->dcn = m->d.interaction == MODEL_INTERACTION_DCNV2;
    x->bwd = bwd;
    if (x->dcn) {
        double W = F * D, r = (double)m->d.cross_rank, Lc = (double)m->d.cross_layers;
        double f1 = 2.0 * b * r * W, f2 = 2.0 * b * W * r;
        double e1 = hw_gemm_efficiency_dtype(hw, dt, f1);
        double e2 = f2 == f1 ? e1 : hw_gemm_efficiency_dtype(hw, dt, f2);
        double peak = dlrm_mlp_peak(hw, dt);
        x->g[0] = dlrm_mlp_gemm_of(hw, dt, peak, b, r, W, f1, e1);
        x->g[1] = dlrm_mlp_gemm_of(hw, dt, peak, b, W, r, f2, e2);
        x->ew = hw_mem_time(hw, 4.0 * b * W * ab);
        x->layers = Lc;
        x->f = x->bk = 0.0;
        x->flops = Lc * 4.0 * b * W * r * (bwd ? 3.0 : 1.0);
        return;
    }
    /* hw_gemm_time of b F x F x D GEMMs, its roofline inline */
    double ig = hw_gemm_time_eff(hw, dt, F, F, D, b, 1.0, 1.0,
                                 hw_gemm_efficiency_dtype(hw, dt, 2.0 * F * F * D * b));
    double imem = hw_mem_time(hw, b * (2.0 * F * D + F * F + F * (F - 1.0) / 2.0) * ab);
    x->f = ig + imem + ov;
    x->bk = bwd ? 2.0 * (ig + imem) + ov : 0.0;
    x->flops = 2.0 * b * F * F * D * (1.0 + (bwd ? 2.0 : 0.0));
}
