/*
 * step.c - the wall time of one continuous-batching engine step
 * with p prefill tokens and d decodes on one pipeline stage, per operator
 * (docs/serving.md, "Step cost"):
 *   weight GEMM   max(t0 + weight bytes / (HBM x eta_w),
 *                     FLOPs / (peak x eta_c(m))), eta_c(m) = eta_max m /
 *                 (m + m_half) for m tokens (below 16 a GEMV kernel:
 *                 compute shrinking with m); a
 *                 serving-shape GEMM is memory bound at small m and
 *                 reaches eta_max at large m; weights in their own
 *                 precision (4-bit with group scales: W4A16, NVFP4);
 *   attention     decode: its own kernel reading each sequence's KV,
 *                 max(floor, d c_d kv / (HBM x eta_kv)); a prefill chunk:
 *                 causal FLOPs 4 p (c_p + p/2) heads dh at the prefill
 *                 attention efficiency, plus its KV written and the
 *                 cached context read;
 *   element-wise  four fused kernels a layer (norms, RoPE + KV write,
 *                 activation, residual), each with a floor, two more
 *                 for per-head q/k norms (qk_norm);
 *   TP            two all-reduces a layer by the engine's custom kernel:
 *                 the faster of one-shot (each rank reads the tp - 1
 *                 peers' messages) and the bandwidth path (two-shot or
 *                 NCCL, 2 (tp - 1) / tp of the message on the bus) whose
 *                 ramp to full bandwidth costs the stack's
 *                 allreduce_ramp_bytes more: messages of 1-30 MB (decode
 *                 at hundreds of sequences) reach only 25-55 % of the
 *                 scale-up bandwidth (AIConfigurator custom_allreduce_perf);
 *   attention DP  (task attn_dp = N, SGLang's DP attention) the QKV and
 *                 output projections and attention at tensor parallelism
 *                 tp/N on the busiest rank's rows (1/N of the step's
 *                 prompts and decodes, at least one while any: a
 *                 request lives on one rank; the
 *                 projections' weights N times larger, each rank its own
 *                 requests' KV: MLA's latent, which TP replicates, is
 *                 then held once), the MLP/MoE on all rows over the tp
 *                 devices; the gather before it and the scatter after
 *                 it as the two all-reduces (SGLang gathers by an
 *                 all-reduce of the padded buffer);
 *   MoE           routed experts as memory holds them: E_loc = E / ep
 *                 experts an EP rank, each 1/etp of its width on a
 *                 device; distinct experts touched E_loc (1 - (1 -
 *                 k/E)^T) for the replica's T tokens, FLOPs of k experts
 *                 per token, the busiest EP rank (mu + sqrt(2 mu ln ep),
 *                 mu = T k / ep), the routing kernels (permute into
 *                 expert order and back);
 *   DEP           attention DP with the experts over the replica and an
 *                 all-to-all dispatch (DeepEP): a MoE layer's busiest
 *                 rank sends its tokens to their distinct expert ranks
 *                 (FP8) and takes them back (BF16) on the topology, a
 *                 decode step at least DeepEP's low-latency floor;
 *   kinds         a layer of the model's second attention kind replaces
 *                 the full layer's projections and attention with its
 *                 own: a sliding window's decode reads at most the
 *                 window, its prefill queries see at most it; Gated
 *                 DeltaNet's decode moves each sequence's state (read and
 *                 write), its prefill the chunked form's FLOPs and chunk
 *                 states; sparse attention (DeepSeek-V3.2) reads every
 *                 index key and the top-k keys only;
 *   LM head       for the sequences producing a token, with sampling;
 *   host          the engine's host time per step and per sequence in
 *                 the step (scheduling, output processing, streaming)
 *                 that it does not overlap with the GPU; under attention
 *                 DP each rank's scheduler its own requests (the
 *                 busiest rank's);
 *   launches      without CUDA graphs (the stack's launch_s) no kernel
 *                 takes less than the host's launch of it; a decode batch
 *                 beyond the largest captured graph (cuda_graph_max) runs
 *                 eagerly: the step no faster than its kernels' launches
 *                 (eager_launch_s).
 * Invariant: a pure function of the step model (model.c) and the step's
 * sizes; every part has its floor (the
 * stack's launch or kernel floors).
 */
#include "serve.h"

#include <math.h>

/* GEMM efficiency of a serving shape with m rows on the curve of top
 * efficiency `top` and half point `half`. */
static double sv_step_gemm_eff(double top, double half, double m)
{
    return top * m / (m + half);
}

/* Compute time of m rows of `fpt` FLOPs each on the serving-shape curve;
 * below SV_GEMV rows engines run GEMV/split-K kernels whose compute
 * shrinks with m (linearly to the curve's value there), so that weight
 * streaming bounds them (what 4-bit weights gain at batch 1). */
#define SV_GEMV 16.0
static double sv_step_compute(double top, double half, double fpt, double m, double peak)
{
    double mm = m > SV_GEMV ? m : SV_GEMV;
    double t = fpt * mm / (peak * sv_step_gemm_eff(top, half, mm));
    return m >= SV_GEMV ? t : t * m / SV_GEMV;
}

static double sv_step_gemm_time(const sv_gemm *g, double m)
{
    if (m <= 0.0)
        return 0.0;
    double comp = sv_step_compute(g->top, g->half, g->flops, m, g->peak);
    return g->mem > comp ? g->mem : comp;
}

double sv_step_allreduce(const sv_model *k, double bytes)
{
    if (k->tp <= 1.0)
        return 0.0;
    double bw = k->sbw * k->ar_eff;
    double one = (k->tp - 1.0) * bytes / bw;
    double two = (2.0 * (k->tp - 1.0) / k->tp * bytes + k->ar_ramp) / bw;
    return k->ar_lat + (one < two ? one : two);
}

/* Routed experts of one MoE layer for m tokens on the busiest EP rank. */
static double sv_step_experts(const sv_model *k, double m)
{
    double mu = m * k->topk / k->ep;
    double pairs = k->ep > 1.0 ? mu + sqrt(2.0 * mu * log(k->ep)) : mu;
    double touched = k->e_loc * (1.0 - pow(1.0 - k->topk / k->experts, m));
    if (touched < 1.0)
        touched = 1.0;
    double rows = pairs / touched;
    double mem = 2.0 * k->t0 + touched * k->exp_bytes / (k->bw * k->eta_w);
    double comp = touched * sv_step_compute(k->eff_top, k->m_half, k->exp_flops, rows, k->peak);
    /* routing: top-k, the permutation of the routed copies into expert
     * order and back with the weighted sum (read + write each way), four
     * kernels with their floors */
    double perm = 4.0 * pairs * k->ar_bytes / k->bw, pf = 4.0 * k->ew_floor;
    return (mem > comp ? mem : comp) + (perm > pf ? perm : pf);
}

/* A MoE layer's dispatch and combine by all-to-all for the busiest
 * rank's ma tokens (DEP): latency and bytes on the topology each way,
 * a decode step at least DeepEP's low-latency floor. */
static double sv_step_a2a(const sv_model *k, double ma, bool decode)
{
    double t = 2.0 * k->a2a_lat + ma * k->a2a_tok * k->a2a_byte;
    return decode && t < k->a2a_floor ? k->a2a_floor : t;
}

/* One full-attention layer's core with sparse attention (DeepSeek-V3.2,
 * k->sa_topk > 0): the indexer reads every cached index key and scores it
 * (FP8 tensor-core logits, at the prefill attention efficiency of the
 * BF16 peak), attention reads and computes over the top-k keys only. */
static double sv_step_sparse(const sv_model *k, double npa, double len, double ctx, double da,
                             double cd)
{
    double att = 0.0;
    if (da > 0.0) {
        double rd = da * (cd * k->idx_tok + dt_min(cd, k->sa_topk) * k->kv_tok * k->kv_read) /
                        (k->bw * k->eta_kv) +
                    da * cd * k->idx_flops / (k->peak16 * k->pre_eff);
        att += dt_max(rd, k->attn_floor);
    }
    if (npa > 0.0 && len > 0.0) {
        double fl = npa * (k->attn_flops * dt_shape_pairs(ctx, len, k->sa_topk) +
                           k->idx_flops * dt_shape_pairs(ctx, len, 0.0));
        double io = (npa * len + npa * ctx) * (k->kv_tok + k->idx_tok) / k->bw;
        att += k->attn_floor + fl / (k->peak16 * k->pre_eff) + io;
    }
    return att;
}

/* One layer of the second attention kind per step, its projections, core
 * and element-wise work: a window's keys (decode reads at most the
 * window, prefill queries see at most it), or Gated DeltaNet (decode:
 * each sequence's state read and written once a step at the KV read
 * efficiency; prefill: the chunked form's FLOPs at the prefill attention
 * efficiency, its chunk states and the sequence's state through HBM). */
static double sv_step_alt(const sv_model *k, double npa, double len, double ctx, double da,
                          double cd, double ma, double *gemm)
{
    *gemm = sv_step_gemm_time(&k->ga[0], ma) + sv_step_gemm_time(&k->ga[1], ma);
    double att = 0.0, ew = 0.0;
    if (k->alt == DT_KIND_SLIDING) {
        if (da > 0.0)
            att += dt_max(da * dt_min(cd, k->win) * k->kv_tok * k->kv_read / (k->bw * k->eta_kv),
                          k->attn_floor);
        if (npa > 0.0 && len > 0.0) {
            double fl = npa * k->attn_flops * dt_shape_pairs(ctx, len, k->win);
            double io = (npa * len + npa * dt_min(ctx, k->win)) * k->kv_tok / k->bw;
            att += k->attn_floor + fl / (k->peak16 * k->pre_eff) + io;
        }
    } else {
        if (da > 0.0)
            att += dt_max(2.0 * da * k->lin_state / (k->bw * k->eta_kv), k->attn_floor);
        if (npa > 0.0 && len > 0.0)
            att += k->attn_floor + npa * len * k->lin_fl / (k->peak16 * k->pre_eff) +
                   (npa * len * k->lin_io + 2.0 * npa * k->lin_state) / k->bw;
        ew = dt_max(ma * k->lin_ew / k->bw, 2.0 * k->ew_floor);
    }
    return att + ew;
}

double sv_step(const sv_model *k, double np, double len, double ctx, double d, double cd,
               sv_parts *o)
{
    double p = np * len, m = p + d * k->rows; /* speculation: gamma + 1 rows a sequence */
    /* attention DP: the busiest rank's prompts and decodes (a request
     * lives on one rank: 1/adp of them, but at least one while any) */
    double npa = np, da = d, ma = m;
    if (k->adp > 1.0) {
        npa = dt_max(np / k->adp, dt_min(np, 1.0));
        da = dt_max(d / k->adp, dt_min(d, 1.0));
        ma = npa * len + da * k->rows;
    }
    /* weight GEMMs per layer (attention's on the busiest rank's rows) */
    double gd = 0.0, gm = 0.0, gattn = 0.0;
    for (int i = 0; i < 4; i++) {
        double t = sv_step_gemm_time(&k->g[i], i < 2 ? ma : m);
        gd += t;
        if (i < k->ng_moe)
            gm += t;
        if (i < 2)
            gattn += t;
    }
    if (k->nm > 0.0) {
        gm += sv_step_gemm_time(&k->router, m) + sv_step_experts(k, m);
        if (k->shared.wbytes > 0.0)
            gm += sv_step_gemm_time(&k->shared, m);
    }
    /* attention per layer */
    double att = 0.0;
    if (k->sa_topk > 0.0) {
        att = sv_step_sparse(k, npa, p > 0.0 ? len : 0.0, ctx, d > 0.0 ? da : 0.0, cd);
    } else {
        if (d > 0.0) {
            double rd = da * cd * k->kv_tok * k->kv_read / (k->bw * k->eta_kv);
            att += rd > k->attn_floor ? rd : k->attn_floor;
        }
        if (p > 0.0) {
            double fl = npa * k->attn_flops * len * (ctx + 0.5 * len);
            double io = (npa * len + npa * ctx) * k->kv_tok / k->bw;
            att += k->attn_floor + fl / (k->peak16 * k->pre_eff) + io;
        }
    }
    double ewb = m * k->ew_bytes / k->bw, ewf = k->ew_kernels * k->ew_floor;
    double ew = ewb > ewf ? ewb : ewf;
    double ar = 2.0 * sv_step_allreduce(k, m * k->ar_bytes);
    /* DEP: a MoE layer's tokens leave and return by all-to-all, not by
     * the gather and scatter */
    double arm = k->a2a ? sv_step_a2a(k, ma, np <= 0.0) : ar;
    double layers = k->nd + k->nm;
    /* LM head and sampling for the sequences producing a token */
    double rows = d * k->rows + np;
    double head = rows > 0.0 ? sv_step_gemm_time(&k->head, rows) +
                                   3.0 * rows * k->vocab_t * 4.0 / k->bw + k->ew_floor
                             : 0.0;
    double gemm = k->nd * gd + k->nm * gm;
    /* host: each attention-DP rank schedules its own requests (SGLang's
     * scheduler process per DP rank, TensorRT-LLM's per-rank executor):
     * the busiest rank's */
    double host = k->host_step + k->host_seq * (da + npa);
    double comm = k->nd * ar + k->nm * arm;
    double total = gemm + layers * (att + ew) + comm + head;
    /* layers of the second attention kind: their own projections and
     * attention in place of the full layer's */
    double alt_g = 0.0, alt_a = 0.0;
    if (k->na > 0.0) {
        double ga;
        double aa = sv_step_alt(k, npa, p > 0.0 ? len : 0.0, ctx, d > 0.0 ? da : 0.0, cd, ma, &ga);
        alt_g = k->na * (ga - gattn);
        alt_a = k->na * (aa - att);
        total += alt_g + alt_a;
    }
    /* a decode batch beyond the largest CUDA graph runs eagerly: no
     * faster than the host launches its kernels */
    if (np <= 0.0 && da > k->graph_max && total < k->kernels * k->eager)
        total = k->kernels * k->eager;
    total += host;
    if (o) {
        o->gemm = gemm + alt_g;
        o->attn = layers * att + alt_a;
        o->ew = layers * ew;
        o->tp = comm;
        o->head = head;
        o->host = host;
        o->total = total;
    }
    return total;
}
