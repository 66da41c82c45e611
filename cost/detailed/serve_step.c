/*
 * serve_step.c - the wall time of one continuous-batching engine step
 * with p prefill tokens and d decodes on one pipeline stage, per operator
 * (../shared/design/serving.md section 2):
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
 *   MoE           routed experts: distinct experts touched E_loc (1 -
 *                 (1 - k/E)^T), FLOPs of k experts per token, the busiest
 *                 EP rank (mu + sqrt(2 mu ln ep)), the routing kernels
 *                 (permute into expert order and back);
 *   LM head       for the sequences producing a token, with sampling;
 *   host          the engine's host time per step and per sequence in
 *                 the step (scheduling, output processing, streaming)
 *                 that it does not overlap with the GPU;
 *   launches      without CUDA graphs (the stack's launch_s) no kernel
 *                 takes less than the host's launch of it.
 */
#include "serve.h"

#include <math.h>
#include <string.h>

/* GEMM efficiency of a serving shape with m rows. */
static double sv_eta(const sv_model *k, double m)
{
    return k->eff_top * m / (m + k->m_half);
}

/* Compute time of m rows of `fpt` FLOPs each on the serving-shape curve;
 * below SV_GEMV rows engines run GEMV/split-K kernels whose compute
 * shrinks with m (linearly to the curve's value there), so that weight
 * streaming bounds them (what 4-bit weights gain at batch 1). */
#define SV_GEMV 16.0
static double sv_comp(const sv_model *k, double fpt, double m, double peak)
{
    double mm = m > SV_GEMV ? m : SV_GEMV;
    double t = fpt * mm / (peak * sv_eta(k, mm));
    return m >= SV_GEMV ? t : t * m / SV_GEMV;
}

static double sv_gemm_time(const sv_model *k, const sv_gemm *g, double m, double peak)
{
    if (m <= 0.0)
        return 0.0;
    double comp = sv_comp(k, g->flops, m, peak);
    return g->mem > comp ? g->mem : comp;
}

double sv_allreduce(const sv_model *k, double bytes)
{
    if (k->tp <= 1.0)
        return 0.0;
    double bw = k->sbw * k->ar_eff;
    double one = (k->tp - 1.0) * bytes / bw;
    double two = (2.0 * (k->tp - 1.0) / k->tp * bytes + k->ar_ramp) / bw;
    return k->ar_lat + (one < two ? one : two);
}

/* Routed experts of one MoE layer for m tokens on the busiest EP rank. */
static double sv_experts(const sv_model *k, double m)
{
    double mu = m * k->topk / k->ep;
    double pairs = k->ep > 1.0 ? mu + sqrt(2.0 * mu * log(k->ep)) : mu;
    double touched = k->e_loc * (1.0 - pow(1.0 - k->topk / k->experts, m));
    if (touched < 1.0)
        touched = 1.0;
    double rows = pairs / touched;
    double mem = 2.0 * k->t0 + touched * k->exp_bytes / (k->bw * k->eta_w);
    double comp = touched * sv_comp(k, k->exp_flops, rows, k->peak);
    /* routing: top-k, the permutation of the routed copies into expert
     * order and back with the weighted sum (read + write each way), four
     * kernels with their floors */
    double perm = 4.0 * pairs * k->ar_bytes / k->bw, pf = 4.0 * k->ew_floor;
    return (mem > comp ? mem : comp) + (perm > pf ? perm : pf);
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
    double gd = 0.0, gm = 0.0;
    for (int i = 0; i < 4; i++) {
        double t = sv_gemm_time(k, &k->g[i], i < 2 ? ma : m, k->peak);
        gd += t;
        if (i < k->ng_moe)
            gm += t;
    }
    if (k->nm > 0.0) {
        gm += sv_gemm_time(k, &k->router, m, k->peak16) + sv_experts(k, m);
        if (k->shared.wbytes > 0.0)
            gm += sv_gemm_time(k, &k->shared, m, k->peak);
    }
    /* attention per layer */
    double att = 0.0;
    if (d > 0.0) {
        double rd = da * cd * k->kv_tok * k->kv_read / (k->bw * k->eta_kv);
        att += rd > k->attn_floor ? rd : k->attn_floor;
    }
    if (p > 0.0) {
        double fl = npa * k->attn_flops * len * (ctx + 0.5 * len);
        double io = (npa * len + npa * ctx) * k->kv_tok / k->bw;
        att += k->attn_floor + fl / (k->peak16 * k->pre_eff) + io;
    }
    double ewb = m * k->ew_bytes / k->bw, ewf = k->ew_kernels * k->ew_floor;
    double ew = ewb > ewf ? ewb : ewf;
    double ar = 2.0 * sv_allreduce(k, m * k->ar_bytes);
    double layers = k->nd + k->nm;
    /* LM head and sampling for the sequences producing a token */
    double rows = d * k->rows + np;
    double head = rows > 0.0 ? sv_gemm_time(k, &k->head, rows, k->peak16) +
                                   3.0 * rows * k->vocab_t * 4.0 / k->bw + k->ew_floor
                             : 0.0;
    double gemm = k->nd * gd + k->nm * gm;
    double host = k->host_step + k->host_seq * (d + np);
    double total = gemm + layers * (att + ew + ar) + head + host;
    if (o) {
        o->gemm = gemm;
        o->attn = layers * att;
        o->ew = layers * ew;
        o->tp = layers * ar;
        o->head = head;
        o->host = host;
        o->total = total;
    }
    return total;
}

/* Weight GEMMs of a layer on one device: QKV (grouped-query), output,
 * gate+up (SwiGLU) or up (GeLU), down; the attention shape in *as. */
static void sv_layer_gemms(const dt_ctx *c, double wb, sv_model *k, dt_attn_sh *as)
{
    const model_t *m = c->m;
    double h = (double)m->hidden, tp = (double)c->d.tp, ta = tp / k->adp;
    double a = (double)m->heads / ta;
    double f = (double)m->ffn / tp, mats = dt_mlp_mats(m);
    /* attention projections as training costs them (GQA, or MLA's down-
     * and up-projections), at attention's tensor parallelism: the output
     * projection, the rest as one */
    dt_attn_shape(m, ta, as);
    double out = a * as->dv * h;
    double pw[4] = {as->params - out, out, (mats - 1.0) * f * h, f * h};
    for (int i = 0; i < 4; i++) {
        k->g[i].wbytes = wb * pw[i];
        k->g[i].flops = 2.0 * pw[i];
    }
    k->ng_moe = 2;
    if (m->d.experts > 0) {
        double fe = dt_expert_ffn(m) / tp, E = (double)m->d.experts;
        k->experts = E;
        k->ep = (double)c->d.ep;
        k->e_loc = E / k->ep;
        k->topk = (double)dt_top_k(m);
        k->exp_bytes = wb * mats * fe * h;
        k->exp_flops = 2.0 * mats * fe * h;
        k->router = (sv_gemm){.wbytes = 2.0 * h * E, .flops = 2.0 * h * E};
        double fs = (double)m->d.shared_experts * fe;
        k->shared = (sv_gemm){.wbytes = wb * mats * fs * h, .flops = 2.0 * mats * fs * h};
    }
}

void sv_model_shape(const dt_ctx *c, const dt_stages *st, sv_model *k)
{
    const model_t *m = c->m;
    const stack_desc *s = c->st;
    double tp = (double)c->d.tp, h = (double)m->hidden, dh = dt_head_dim(m);
    memset(k, 0, sizeof *k);
    /* attention DP: each rank's attention at ta over its own requests
     * (kv_tok and attn_flops a rank's; sv_step takes the busiest rank) */
    k->adp = sv_adp(c);
    double ta = tp / k->adp;
    /* the busiest stage: the most layers */
    for (int64_t i = 0; i < c->d.pp; i++) {
        const dt_stage *g = &st->s[i];
        double nd = (double)(g->n[DT_DENSE] + g->n[DT_FDENSE]);
        double nm = (double)(g->n[DT_MOE] + g->n[DT_FMOE]);
        if (nd + nm > k->nd + k->nm) {
            k->nd = nd;
            k->nm = nm;
        }
    }
    double wb = sv_weight_bytes(c);
    dt_attn_sh as;
    sv_layer_gemms(c, wb, k, &as);
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double kvt = kv / ta > 1.0 ? kv / ta : 1.0;
    hw_dtype kvd = sv_kv_dtype(c);
    k->kv_tok = dt_kv_cache_cols(m, ta) * hw_dtype_bytes(kvd) / (double)c->d.cp;
    bool mla = m->d.kv_lora_rank > 0;
    k->kv_read = s->kv_per_query_head && !mla ? ((double)m->heads / ta) / kvt : 1.0;
    /* MLA decodes in the absorbed form: scores over the latent + RoPE
     * key, values from the latent (DeepSeek-V2 section 2.1.3) */
    k->attn_flops = mla ? 2.0 * ((double)m->heads / ta) *
                              (dt_kv_cache_cols(m, ta) + (double)m->d.kv_lora_rank)
                        : 4.0 * ((double)m->heads / ta) * dh;
    k->ew_bytes = 11.0 * h * c->ab / (c->sp ? tp : 1.0) +
                  3.0 * (double)m->ffn / tp * c->ab;
    k->ew_kernels = 4.0;
    if (m->d.qk_norm) { /* per-head RMSNorm of q and k (Qwen3), as training's layer.c */
        k->ew_bytes += 2.0 * (as.q + as.k) * c->ab;
        k->ew_kernels += 2.0;
    }
    k->ar_bytes = h * c->ab;
    k->vocab_t = (double)m->vocab / tp;
    k->head = (sv_gemm){.wbytes = 2.0 * k->vocab_t * h, .flops = 2.0 * k->vocab_t * h};
    k->tp = tp;
    k->pp = (double)c->d.pp;
    k->p2p_tok = c->hw->scaleup_latency_s;
    k->apart = s->prefill_apart;
    sv_spec_init(c, k);
}

void sv_model_facts(const dt_ctx *c, stack_scenario sc, sv_model *k)
{
    const hw_t *hw = c->hw;
    const stack_desc *s = c->st;
    k->peak16 = hw->peak_flops[HW_BF16] * c->f.gemm;
    k->peak = (hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16]) *
              c->f.gemm;
    k->bw = hw->mem_bw_bytes_per_s * c->f.mem;
    k->sbw = hw->scaleup_bytes_per_s * c->f.net;
    /* an engine that launches its kernels one by one from the host (no
     * CUDA graph: the stack's launch_s) runs no kernel faster than the
     * host enqueues it: each floor is at least the launch */
    double launch = stack_pick(s->launch_s, sc, false);
    k->t0 = dt_max(launch, stack_pick(s->gemm_floor_s, sc, false));
    k->eta_w = stack_pick(s->weight_bw_eff, sc, true);
    /* the generation's large-GEMM efficiency in the math dtype (its FP8
     * table: a lower fraction of a doubled peak, filled at larger sizes;
     * FP8 from kernel sweeps where the catalogue has them, so that a
     * training refit of the table's top does not move serving) times the
     * engine's fraction of it for serving shapes */
    bool fp8 = c->dt == HW_FP8 && hw->gemm_fp8_points > 0;
    double top = fp8 ? (hw->serve_gemm_fp8_efficiency > 0.0
                            ? hw->serve_gemm_fp8_efficiency
                            : hw->gemm_fp8_efficiency[hw->gemm_fp8_points - 1])
                     : hw->gemm_efficiency[hw->gemm_points > 0 ? hw->gemm_points - 1 : 0];
    k->eff_top = dt_min(0.95, top * stack_pick(s->gemm_eff_max, sc, true));
    k->m_half = stack_pick(s->gemm_m_half, sc, false) * (fp8 ? 2.0 : 1.0);
    k->eta_kv = stack_pick(s->kv_bw_eff, sc, true);
    k->attn_floor = dt_max(launch, stack_pick(s->attn_floor_s, sc, false));
    k->pre_eff = stack_pick(s->prefill_attn_eff, sc, true);
    k->ew_floor = dt_max(launch, stack_pick(s->ew_floor_s, sc, false));
    k->ar_lat = dt_max(launch, stack_pick(s->allreduce_s, sc, false));
    k->ar_eff = stack_pick(s->allreduce_bw_eff, sc, true);
    k->ar_ramp = stack_pick(s->allreduce_ramp_bytes, sc, false);
    k->host_step = stack_pick(s->step_host_s, sc, false);
    k->host_seq = stack_pick(s->seq_host_s, sc, false);
    k->host_req = stack_pick(s->request_host_s, sc, false);
    /* a weight GEMM's floor: the launch and its weights streamed */
    sv_gemm *g[7] = {&k->g[0], &k->g[1], &k->g[2], &k->g[3], &k->router, &k->shared, &k->head};
    for (int i = 0; i < 7; i++)
        g[i]->mem = k->t0 + g[i]->wbytes / (k->bw * k->eta_w);
}

void sv_model_init(const dt_ctx *c, const dt_stages *st, stack_scenario sc, sv_model *k)
{
    sv_model_shape(c, st, k);
    sv_model_facts(c, sc, k);
}
