/*
 * attn.c - attention of one layer on one GPU (prefill and decode, GQA,
 * MLA, sliding window) as closed forms in a GPU's figures.
 *
 * Decode streams the KV cache: batch x kept tokens x KV heads x (K and V
 * widths) x bytes, at `attn_dec_eff` of HBM bandwidth once the work
 * fills the chip. The work is split into CTAs of one (sequence, KV head,
 * chunk of `attn_split` tokens; one chunk when the back end has no
 * split-KV); with fewer than `attn_fill` CTAs per SM
 * the bandwidth falls in proportion (too few loads in flight). Its math
 * (QK and PV, 2 FLOPs per multiply-add) runs at `attn_eff` of the tensor
 * peak. Prefill is math: 2 x (qk width + v width) FLOPs per (query, key)
 * pair the causal mask (and a sliding window) keeps, in waves of CTAs of
 * 128 query rows per head (the last wave's tail as in gemm.c), plus the
 * Q/K/V/O and KV-cache streams. Both take the longer of math and memory
 * plus `overlap` of the shorter, plus one per-call floor (the engines'
 * attention ops include the KV-cache write and RoPE).
 */
#include "kernel.h"

#include <math.h>

/* Sum over the `seq` new queries of the keys each attends: query i
 * (0-based) of a prompt after `ctx` cached tokens sees ctx + i + 1 keys,
 * at most `window` (0: no window). */
static double ka_pairs(double seq, double ctx, double window)
{
    double a = ctx + 1.0, b = ctx + seq;
    if (window <= 0 || b <= window)
        return 0.5 * (a + b) * seq;
    if (a >= window)
        return window * seq;
    return 0.5 * (a + window) * (window - a + 1.0) + window * (b - window);
}

static double ka_combine(const kern_ctx *c, double tc, double tm)
{
    return (tc > tm ? tc + c->c.overlap * tm : tm + c->c.overlap * tc);
}

static double ka_decode(const kern_ctx *c, const kern_attn *a, const kern_backend *be)
{
    const kern_consts *k = &c->c;
    double keys = a->ctx + 1.0;
    if (a->window > 0 && keys > a->window)
        keys = a->window;
    /* MLA: one latent per token serves K (576) and V (its first 512) */
    double width = a->mla ? a->head_dim : a->head_dim + a->v_dim;
    double bytes = a->batch * keys * a->heads_kv * width * a->kv_bytes +
                   4.0 * a->batch * a->heads_q * a->head_dim;
    double flops = 2.0 * a->batch * a->heads_q * keys * (a->head_dim + a->v_dim);
    /* split-KV: chunks of attn_split keys each a CTA; a kernel without it
     * (be->nosplit 1) streams a sequence's KV from one CTA per KV head */
    double chunks = ceil(keys / k->attn_split);
    double ctas = a->batch * a->heads_kv * (chunks - be->nosplit * (chunks - 1.0));
    double fill = ctas / (k->attn_fill * c->sms);
    double occ = fill < 1.0 ? fill : 1.0;
    double tm = kern_mem_time(c, bytes, bytes, a->reuse, k->attn_dec_eff * be->mem) / occ;
    /* too little KV per CTA: each wave of CTAs waits out its chain of
     * dependent loads (page table, KV, the split's reduction) */
    double tl = ctas / (k->attn_fill * c->sms) * k->attn_cta_s;
    if (tl > tm)
        tm = tl;
    double tc = flops / (c->peak[HW_BF16] * k->attn_eff * be->eff);
    return ka_combine(c, tc, tm) + kern_floor(k->attn_floor_s, be);
}

static double ka_prefill(const kern_ctx *c, const kern_attn *a, const kern_backend *be)
{
    const kern_consts *k = &c->c;
    double ctas = a->batch * a->heads_q * ceil(a->seq / 128.0);
    /* each CTA's Q load, O store and final rescale: attn_kv0 keys' worth */
    /* tiles of keys: the causal diagonal cuts one per query tile; a
     * sliding window's lower edge cuts another */
    double cut = a->window > 0 && a->ctx + a->seq > a->window ? 2.0 : 1.0;
    double pairs = (a->full ? a->seq * (a->ctx + a->seq) : ka_pairs(a->seq, a->ctx, a->window)) +
                   cut * ctas * 128.0 * k->attn_kv0 / (a->batch * a->heads_q);
    double flops = 2.0 * a->batch * a->heads_q * pairs * (a->head_dim + a->v_dim);
    hw_dtype d = a->fp8_math && c->peak[HW_FP8] > 0 ? HW_FP8 : HW_BF16;
    double w = ctas / c->sms;
    double waves = w >= 1.0 ? w + k->gemm_tail * (ceil(w) - w) : 1.0;
    /* the tensor cores' QK and PV, then one exponential per (query, key)
     * pair on the SFUs (FlashAttention-4's bottleneck on Blackwell) */
    double tc = (flops / (c->peak[d] * k->attn_eff * be->eff) + a->batch * a->heads_q * pairs /
                 c->exp_rate) * (waves / w);
    double qo = a->heads_q * (a->head_dim + a->v_dim) * 2.0;
    double kv = a->heads_kv * (a->head_dim + a->v_dim);
    double bytes = a->batch * a->seq * (qo + kv * (2.0 + a->kv_bytes)) +
                   a->batch * a->ctx * kv * a->kv_bytes;
    double tm = kern_mem_time(c, bytes, bytes, a->reuse, k->mem_eff * be->mem);
    return ka_combine(c, tc, tm) + kern_floor(k->attn_floor_s, be);
}

double kern_attn_time(const kern_ctx *c, const kern_attn *a)
{
    if (!(a->batch >= 1 && a->heads_q >= 1 && a->heads_kv >= 1 && a->head_dim >= 1 &&
          a->v_dim >= 1 && a->kv_bytes > 0 && a->ctx >= 0 && a->window >= 0))
        return -1.0;
    const kern_backend *be = a->be ? a->be : &kern_be_none;
    if (a->decode)
        return ka_decode(c, a, be);
    if (!(a->seq >= 1))
        return -1.0;
    return ka_prefill(c, a, be);
}
