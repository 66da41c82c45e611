/*
 * infer.c - serving a batch: prefill of the prompts, then decode steps.
 *
 * The global batch is the sequences served concurrently, micro_batch =
 * batch / dp per replica. Prefill (TTFT): the prompts cross every stage
 * once, each stage running its layers' forward (layer.c, comm.c: TP,
 * CP, EP dispatch and combine), the embedding on the first stage, the
 * output head for the last prompt token on the last, and the activation
 * send between stages. A decode step produces one token per sequence: on
 * each stage the weights and the KV cache (at the mean context of the
 * generation) stream from HBM or the GEMMs are compute bound, whichever
 * is longer, plus per layer the kernel overheads, TP's two all-reduces of
 * the batch's hidden states and, for MoE layers, the expert-parallel
 * dispatch and combine; the token crosses the stages one after another
 * (TPOT = sum of the stages + the sends). The step: TTFT + decode_tokens
 * TPOT. Compute (compute_gemm_s) and communication (comm_*, all exposed:
 * decode does not overlap them) add up to it.
 */
#include "dt.h"

#include <math.h>

status_code dt_infer_time(const dt_ctx *c, const dt_stages *st, result_t *r)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    dt_layer dense, moe;
    dt_layer_cost(c, false, false, DT_TRAIN, &dense);
    dt_layer_comm(c, false, false, DT_TRAIN, &dense);
    if (m->d.experts > 0) {
        dt_layer_cost(c, true, false, DT_TRAIN, &moe);
        dt_layer_comm(c, true, false, DT_TRAIN, &moe);
    } else {
        moe = dense;
    }
    double h = (double)m->hidden, tp = (double)c->d.tp, mb = (double)c->d.mb;
    double ov = hw->kernel_overhead_s;
    double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16];
    double wb = hw_dtype_bytes(c->dt);
    double lpd = dt_layer_params(c, false), lpm = dt_layer_params(c, true);
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double kvt = fmax(kv / tp, 1.0), dh = h / (double)m->heads;
    double prompt = (double)(c->t->prompt_tokens > 0 ? c->t->prompt_tokens : m->seq_len);
    double steps = (double)c->t->decode_tokens;
    double ctx_mean = prompt + 0.5 * steps; /* KV read per step, averaged */
    double vocab_t = (double)m->vocab / tp;

    /* per decode step and layer: TP all-reduces, EP dispatch + combine */
    double tp_step = c->d.tp > 1
                         ? 2.0 * dt_coll(c, TOPO_ALLREDUCE, c->d.tp, c->stride[DT_TP], mb * h * c->ab)
                         : 0.0;
    double a2a_step = 0.0;
    if (m->d.experts > 0 && c->d.ep > 1)
        a2a_step = 2.0 * dt_coll(c, TOPO_ALLTOALL, c->d.ep, c->s_dpcp,
                                 mb * (double)dt_top_k(m) * h * c->ab);
    double p2p_pre = 0.0, p2p_dec = 0.0;
    if (c->d.pp > 1) {
        p2p_pre = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP],
                          c->tok * h * c->ab / (c->sp ? tp : 1.0));
        p2p_dec = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP], mb * h * c->ab);
    }
    double ttft = 0.0, tpot = 0.0, comp = 0.0, tpcomm = 0.0, a2a = 0.0, cpcomm = 0.0;
    for (int64_t s = 0; s < c->d.pp; s++) {
        const dt_stage *g = &st->s[s];
        int64_t nd = g->n[DT_DENSE] + g->n[DT_FDENSE], nm = g->n[DT_MOE] + g->n[DT_FMOE];
        double nl = (double)(nd + nm);
        /* prefill */
        double pre = (double)nd * dense.fwd + (double)nm * moe.fwd;
        double pre_comp = (double)nd * dense.comp_fwd + (double)nm * moe.comp_fwd;
        if (s == 0 && m->vocab > 0) {
            double e = dt_elem(c, 2.0 * c->tok * h * c->ab, 1.0);
            pre += e;
            pre_comp += e;
        }
        double head = 0.0;
        if (s == c->d.pp - 1 && m->vocab > 0)
            head = dt_gemm_p(c, mb, vocab_t, h, 1, false) + dt_elem(c, 10.0 * mb * vocab_t * 4.0, 6.0);
        pre += head;
        pre_comp += head;
        ttft += pre + (s < c->d.pp - 1 ? p2p_pre : 0.0);
        comp += pre_comp;
        tpcomm += (double)nd * dense.tp_comm + (double)nm * moe.tp_comm;
        cpcomm += (double)nd * dense.cp_comm + (double)nm * moe.cp_comm;
        a2a += (double)nm * moe.a2a;
        /* decode step */
        double head_p = s == c->d.pp - 1 ? dt_head_params_dev(c) : 0.0;
        double active = (double)nd * lpd + (double)nm * (lpm - dt_expert_params(c)) +
                        (double)nm * fmin((double)m->d.experts / (double)c->d.ep,
                                          mb * (double)dt_top_k(m)) *
                            dt_expert_params(c) /
                            fmax((double)m->d.experts / (double)c->d.ep, 1.0);
        double kvbytes = 2.0 * nl * kvt * dh * ctx_mean * mb * c->ab / (double)c->d.cp;
        double flops = 2.0 * (active + head_p) * mb;
        double stream = hw_mem_time(hw, wb * (active + head_p) + kvbytes) / c->f.mem;
        double crunch = nl > 0 ? flops / (peak * c->f.gemm *
                                          hw_gemm_efficiency_dtype(hw, c->dt, flops / nl))
                               : 0.0;
        double step_comp = fmax(stream, crunch) + nl * 12.0 * ov;
        double step_comm = nl * tp_step + (double)nm * a2a_step;
        tpot += step_comp + step_comm + (s < c->d.pp - 1 ? p2p_dec : 0.0);
        comp += steps * step_comp;
        tpcomm += steps * nl * tp_step;
        a2a += steps * (double)nm * a2a_step;
    }
    double pp1 = (double)(c->d.pp - 1);
    r->ttft_s = ttft;
    r->tpot_s = tpot;
    r->iteration_time_s = ttft + steps * tpot;
    r->tokens_per_s = (double)r->global_batch / tpot;
    r->throughput_samples_per_s = (double)r->global_batch / r->iteration_time_s;
    r->compute_gemm_s = comp;
    r->comm_allreduce_s = c->sp ? 0.0 : tpcomm;
    r->comm_allgather_s = c->sp ? 0.5 * tpcomm : 0.0;
    r->comm_reducescatter_s = c->sp ? 0.5 * tpcomm : 0.0;
    r->comm_alltoall_s = a2a;
    r->comm_p2p_s = pp1 * (p2p_pre + steps * p2p_dec) + cpcomm;
    /* prefill's CP ring and TP overlap are inside the layers' times:
     * what is not compute is exposed communication */
    double comm = r->comm_allreduce_s + r->comm_allgather_s + r->comm_reducescatter_s +
                  r->comm_alltoall_s + r->comm_p2p_s;
    double exposed = r->iteration_time_s - comp;
    r->comm_exposed_s = exposed < 0 ? 0 : exposed;
    r->comm_overlapped_s = comm > r->comm_exposed_s ? comm - r->comm_exposed_s : 0.0;
    r->events_compute = 0;
    r->events_comm = 0;
    double mflops = 2.0 * (detailed_model_flops(m, true) / (double)m->seq_len) *
                    (double)r->global_batch * steps;
    r->mfu = mflops / (r->iteration_time_s * (double)c->p->system.devices * peak);
    return STATUS_OK;
}
