/*
 * linattn.c - Gated DeltaNet (linear attention) kernels of one layer on
 * one GPU as closed forms in its figures (linattn.h).
 *
 * Prefill (the chunked form of Yang et al. 2024, arXiv:2412.06464, as
 * flash-linear-attention's chunk_gated_delta_rule runs it: cumulative
 * gates, the chunk's K K^T and its triangular inverse, the WY factors,
 * the chunk states, the outputs): per token and value head 2 C (3 dk +
 * 2 dv) + 6 dk dv + 2 C^2 / 3 FLOPs (the last the triangular solve) on the tensor cores at `attn_eff` of the BF16
 * peak, in waves of one CTA per (sequence, value head, chunk); its
 * memory: q, k, v, the gates and the output once each, the chunk states
 * (dk x dv per value head and chunk) written and read back, each
 * sequence's state read and written; the longer of the two plus
 * `overlap` of the shorter, plus a floor for each of its four launches.
 * Decode (the recurrent step): each sequence's dk x dv state per value
 * head read and written once, at `attn_dec_eff` of HBM bandwidth once
 * the CTAs (one per sequence and value head) fill the chip, 6 dk dv
 * FLOPs per value head (read, update, output) beside it, one floor.
 * The counts are core/shape.c's dt_shape_linear (the model's view);
 * here they price a kernel call from its shape.
 */
#include "linattn.h"

#include <math.h>

static double kl_combine(const kern_ctx *c, double tc, double tm)
{
    return tc > tm ? tc + c->c.overlap * tm : tm + c->c.overlap * tc;
}

static double kl_decode(const kern_ctx *c, const kern_linattn *a, const kern_backend *be)
{
    const kern_consts *k = &c->c;
    double state = a->heads_v * a->dk * a->dv * a->state_bytes;
    double io = (2.0 * a->heads_k * a->dk + 2.0 * a->heads_v * a->dv) * a->act_bytes;
    double bytes = a->batch * (2.0 * state + io);
    double ctas = a->batch * a->heads_v;
    double fill = ctas / (k->attn_fill * c->sms);
    double occ = fill < 1.0 ? fill : 1.0;
    double tm = kern_mem_time(c, bytes, bytes, 0.0, k->attn_dec_eff * be->mem) / occ;
    double tc = a->batch * a->heads_v * 6.0 * a->dk * a->dv /
                (c->peak[HW_BF16] * k->attn_eff * be->eff);
    return kl_combine(c, tc, tm) + kern_floor(k->attn_floor_s, be);
}

static double kl_prefill(const kern_ctx *c, const kern_linattn *a, const kern_backend *be)
{
    const kern_consts *k = &c->c;
    double C = a->chunk > 0 ? a->chunk : 64.0;
    double tokens = a->batch * a->seq;
    double flops = tokens * a->heads_v * (2.0 * C * (3.0 * a->dk + 2.0 * a->dv) +
                                          6.0 * a->dk * a->dv + 2.0 * C * C / 3.0);
    double ctas = a->batch * a->heads_v * ceil(a->seq / C);
    double w = ctas / c->sms;
    double waves = w >= 1.0 ? w + k->gemm_tail * (ceil(w) - w) : 1.0;
    double tc = flops / (c->peak[HW_BF16] * k->attn_eff * be->eff) * (waves / w);
    double io = (2.0 * a->heads_k * a->dk + 2.0 * a->heads_v * a->dv + 2.0 * a->heads_v) *
                a->act_bytes;
    double chunks = 2.0 * a->heads_v * a->dk * a->dv * a->act_bytes * ceil(a->seq / C);
    double state = 2.0 * a->heads_v * a->dk * a->dv * a->state_bytes;
    double bytes = tokens * io + a->batch * (chunks + state);
    double tm = kern_mem_time(c, bytes, bytes, 0.0, k->mem_eff * be->mem);
    return kl_combine(c, tc, tm) + 4.0 * kern_floor(k->attn_floor_s, be);
}

double kern_linattn_time(const kern_ctx *c, const kern_linattn *a)
{
    if (!(a->batch >= 1 && a->heads_k > 0 && a->heads_v > 0 && a->dk >= 1 && a->dv >= 1 &&
          a->state_bytes > 0 && a->act_bytes > 0 && a->chunk >= 0))
        return -1.0;
    const kern_backend *be = a->be ? a->be : &kern_be_none;
    if (a->decode)
        return kl_decode(c, a, be);
    if (!(a->seq >= 1))
        return -1.0;
    return kl_prefill(c, a, be);
}
