/*
 * result.c - the figures of a serving replica's state: rates times the
 * dp replicas (per device over the deployment's devices), TTFT, TPOT,
 * ITL and their percentiles, the concurrency and KV use, whether the SLA
 * is met (goodput), the parts of a decode step (compute, TP all-reduce,
 * pipeline sends) scaled to a request's life, what bounds it
 * (cost/bound.h: decode attention and the fused element-wise kernels
 * read HBM, a weight GEMM is memory-bound for as long as streaming its
 * weights takes) and the memory as the KV capacity counts it.
 * Invariant: every figure is one of the state's or derived from them and
 * the step model; nothing is solved here.
 */
#include "serve.h"

#include <math.h>

void sv_result_write(const dt_ctx *c, const sv_model *k, const dt_kv *kv, const sv_load *w,
                     const sv_state *s, double devices, result_t *r)
{
    const model_t *m = c->m;
    double dp = (double)c->d.dp;
    double req = s->req_s * dp;
    /* the parts of a decode step: compute, TP all-reduce, host */
    sv_parts pt;
    sv_step(k, 0, 0, 0, s->conc / k->pp, w->cd, &pt);
    double comp = pt.total > 0.0 ? (pt.gemm + pt.attn + pt.ew + pt.head) / pt.total : 0.0;
    double tpsh = pt.total > 0.0 ? pt.tp / pt.total : 0.0;
    r->ttft_s = s->ttft;
    r->tpot_s = s->tpot;
    r->iteration_time_s = s->e2e;
    r->global_batch = (int64_t)llround(s->conc * dp) > 0 ? (int64_t)llround(s->conc * dp) : 1;
    r->throughput_samples_per_s = req;
    r->output_tokens_per_s = req * w->osl;
    r->tokens_per_s = r->output_tokens_per_s;
    r->output_tokens_per_s_per_device = r->output_tokens_per_s / devices;
    r->total_tokens_per_s = req * (w->isl + w->osl);
    r->requests_per_s = req;
    r->tokens_per_s_per_user = 1.0 / s->tpot;
    r->ttft_p90_s = s->ttft_p90;
    r->ttft_p99_s = s->ttft_p99;
    r->ttft_wave_max_s = s->ttft_wave > 0.0 ? dt_max(s->ttft_wave, s->ttft) : (double)NAN;
    r->itl_p50_s = s->itl_p50;
    r->itl_p99_s = s->itl_p99;
    r->concurrency_resolved = r->global_batch;
    r->concurrency_max = (int64_t)kv->cmax * c->d.dp;
    double used = (s->conc < (double)kv->cmax ? s->conc : (double)kv->cmax) * kv->seq_bytes;
    r->kv_use = kv->pool > 0.0 ? used / kv->pool : 0.0;
    bool met = sv_sla_met(c, s) && !s->saturated;
    r->sla_met = met ? 1.0 : 0.0;
    r->goodput_requests_per_s = met ? req : 0.0;
    r->compute_gemm_s = comp * s->e2e;
    r->comm_allreduce_s = tpsh * s->e2e;
    r->comm_allgather_s = r->comm_reducescatter_s = r->comm_alltoall_s = 0.0;
    r->comm_p2p_s = (k->pp - 1.0) * k->p2p_tok * (w->osl - 1.0);
    r->comm_exposed_s = r->comm_allreduce_s + r->comm_p2p_s;
    r->comm_overlapped_s = 0.0;
    /* what bounds it (cost/bound.h): decode attention and the fused
     * element-wise kernels read HBM; a weight GEMM is memory-bound for
     * as long as streaming its weights takes; the rest is math */
    double stream = 0.0;
    for (int i = 0; i < 4; i++)
        stream += k->g[i].wbytes / (k->bw * k->eta_w);
    stream *= k->nd + k->nm;
    double gmem = pt.gemm < stream ? pt.gemm : stream;
    double memsh = pt.total > 0.0 ? (pt.attn + pt.ew + gmem) / pt.total : 0.0;
    r->compute_memory_s = memsh * s->e2e;
    r->compute_math_s = dt_max(0.0, r->compute_gemm_s - r->compute_memory_s);
    double est[DT_B_DIMS] = {[DT_B_TP] = r->comm_allreduce_s, [DT_B_PP] = r->comm_p2p_s};
    dt_breakdown_comm(c, r->comm_exposed_s, est, r);
    /* the memory as the KV capacity counts it (weights in their own
     * precision, one step's activations) */
    r->mem_weights_bytes_per_device = kv->weights;
    r->mem_activations_bytes_per_device = kv->acts;
    r->mem_kv_cache_bytes_per_device = used;
    r->mem_total_bytes_per_device = kv->weights + kv->acts + kv->reserve + used;
    double peak = c->hw->peak_flops[c->dt] > 0 ? c->hw->peak_flops[c->dt]
                                               : c->hw->peak_flops[HW_BF16];
    double fl = 2.0 * c->model_flops / (double)m->seq_len;
    r->mfu = req * (w->isl + w->osl) * fl / (devices * peak);
}
