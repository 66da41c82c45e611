/*
 * gemm.c - GEMMs (dense and grouped) and the fused MoE layer as closed
 * forms in a GPU's figures.
 *
 * A GEMM is tiled into CTA tiles (tile_m x tile_n; half the rows when a
 * group has at most half a tile of them); tiles run in waves over the
 * SMs, each tile's main loop at the per-SM tensor rate (the dense peak
 * over the SM count) times the constant a saturated loop reaches. A
 * partial last wave costs `gemm_tail` of a whole one; fewer tiles than
 * SMs split K over the idle SMs (at most one split per 512 of K). The
 * operands and the BF16 output stream from HBM at `mem_eff` of its
 * bandwidth; the time is the longer of the two plus `overlap` of the
 * shorter, plus one kernel floor. Engine GEMMs of narrow formats also
 * quantize their BF16 activation first (one more kernel: read BF16,
 * write the format).
 */
#include "kernel.h"

#include <math.h>
#include <string.h>

static const char *const kf_names[KF_N] = {
    "bf16", "fp8", "fp8_block", "mxfp8", "nvfp4", "int8_wo", "int4_wo", "int8",
    "w4a16_mxfp4", "w4a8_mxfp4_mxfp8"};

int kern_fmt_parse(const char *s)
{
    if (strcmp(s, "bfloat16") == 0 || strcmp(s, "fp16") == 0 || strcmp(s, "float16") == 0)
        return KF_BF16;
    if (strcmp(s, "fp8_e4m3_pertensor") == 0 || strcmp(s, "fp8_e4m3_rowwise") == 0)
        return KF_FP8;
    if (strcmp(s, "fp8_e4m3_blk128") == 0 || strcmp(s, "fp8_e4m3fnuz_blk128") == 0)
        return KF_FP8_BLOCK;
    if (strcmp(s, "sq") == 0)
        return KF_INT8;
    for (int i = 0; i < KF_N; i++)
        if (strcmp(s, kf_names[i]) == 0)
            return i;
    return -1;
}

/* The main loop's rate per device (FLOP/s, the constant applied) and the
 * bytes per activation and weight element of a format. */
static double kg_rate(const kern_ctx *c, kern_fmt f, double *ab, double *wb)
{
    const kern_consts *k = &c->c;
    double bf16 = c->peak[HW_BF16] * k->gemm_eff;
    double fp8 = c->peak[HW_FP8] > 0 ? c->peak[HW_FP8] * k->gemm_eff_fp8 : bf16;
    *ab = 2.0;
    *wb = 2.0;
    switch (f) {
    case KF_FP8:
    case KF_MXFP8:
        *ab = *wb = 1.0;
        return fp8;
    case KF_FP8_BLOCK:
        *ab = *wb = 1.0;
        return c->block_mma ? fp8 : fp8 * k->gemm_block_promote;
    case KF_NVFP4:
        *ab = *wb = 0.5 + 1.0 / 16.0; /* e2m1 plus one e4m3 scale per 16 */
        return c->peak[HW_FP4] > 0 ? c->peak[HW_FP4] * k->gemm_eff_fp4 : fp8;
    case KF_INT8:
        *ab = *wb = 1.0;
        return c->peak[HW_INT8] > 0 ? c->peak[HW_INT8] * k->gemm_eff_fp8 : bf16;
    case KF_INT8_WO:
        *wb = 1.0;
        return bf16 * k->wo_dequant;
    case KF_INT4_WO:
    case KF_MXFP4_W4A16:
        *wb = 0.5 + 1.0 / 32.0;
        return bf16 * k->wo_dequant;
    case KF_MXFP4_W4A8:
        *ab = 1.0 + 1.0 / 32.0;
        *wb = 0.5 + 1.0 / 32.0;
        return fp8 * k->wo_dequant;
    default:
        return bf16;
    }
}

/* Main-loop time of `groups` GEMMs of m x n x k at `rate` FLOP/s per
 * device: waves of CTA tiles, or split K when tiles are fewer than SMs. */
static double kg_compute(const kern_ctx *c, double m, double n, double k, double groups,
                         double rate)
{
    double tm = m > 0.5 * c->tile_m ? c->tile_m : 0.5 * c->tile_m;
    double tiles = groups * ceil(m / tm) * ceil(n / c->tile_n);
    double tile_s = 2.0 * tm * c->tile_n * k / (rate / c->sms);
    if (tiles >= c->sms) {
        double w = tiles / c->sms;
        return (w + c->c.gemm_tail * (ceil(w) - w)) * tile_s;
    }
    double split = floor(c->sms / tiles), kmax = floor(k / 512.0);
    if (split > kmax)
        split = kmax;
    return tile_s / (split > 1.0 ? split : 1.0);
}

static double kg_combine(const kern_ctx *c, double tc, double tm)
{
    return (tc > tm ? tc + c->c.overlap * tm : tm + c->c.overlap * tc);
}

double kern_gemm_time(const kern_ctx *c, const kern_gemm *g)
{
    if (!(g->m > 0 && g->n > 0 && g->k > 0 && g->groups >= 1) || g->fmt < 0 ||
        g->fmt >= KF_N)
        return -1.0;
    const kern_backend *be = g->be ? g->be : &kern_be_none;
    double ab, wb;
    double rate = kg_rate(c, g->fmt, &ab, &wb) * be->eff;
    double bw = c->hbm * c->c.mem_eff * be->mem;
    double tc = kg_compute(c, g->m, g->n, g->k, g->groups, rate);
    double bytes = g->groups * (g->m * g->k * ab + g->n * g->k * wb + 2.0 * g->m * g->n);
    double tm = kern_mem_time(c, bytes, bytes, g->reuse, c->c.mem_eff * be->mem);
    double t = kg_combine(c, tc, tm) + kern_floor(c->c.floor_s, be);
    if (g->quant && ab < 2.0)
        t += c->c.quant_floor_s + g->groups * g->m * g->k * (2.0 + ab) / bw;
    return t;
}

double kern_moe_time(const kern_ctx *c, const kern_moe *m)
{
    if (!(m->tokens > 0 && m->hidden > 0 && m->inter > 0 && m->topk >= 1 &&
          m->experts >= m->topk && m->tp >= 1 && m->ep >= 1 && m->ep <= m->experts) ||
        m->fmt < 0 || m->fmt >= KF_N)
        return -1.0;
    double local = m->experts / m->ep;
    double rows = m->tokens * m->topk / m->ep; /* routed rows on this GPU, balanced */
    double active = rows < local ? rows : local;
    double per = rows / active;
    double inter = m->inter / m->tp;
    const kern_backend *be = m->be ? m->be : &kern_be_none;
    double ab, wb;
    double rate = kg_rate(c, m->fmt, &ab, &wb) * be->eff;
    double bw = c->hbm * c->c.mem_eff * be->mem;
    double n1 = (m->gated ? 2.0 : 1.0) * inter;
    double tc1 = kg_compute(c, per, n1, m->hidden, active, rate);
    double tc2 = kg_compute(c, per, m->hidden, inter, active, rate);
    double b1 = active * (n1 * m->hidden * wb) + rows * (m->hidden * ab + n1 * 2.0);
    double b2 = active * (m->hidden * inter * wb) + rows * (inter * ab + m->hidden * 2.0);
    return kg_combine(c, tc1, b1 / bw) + kg_combine(c, tc2, b2 / bw) + 2.0 * c->c.floor_s +
           kern_floor(c->c.moe_floor_s, be) + c->c.moe_passes * rows * m->hidden * 2.0 / bw;
}
