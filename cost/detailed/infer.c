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

void dt_infer_common(const dt_ctx *c, dt_infer_k *k)
{
    const model_t *m = c->m;
    dt_layer_cost(c, false, false, DT_TRAIN, &k->dense);
    dt_layer_comm(c, false, false, DT_TRAIN, &k->dense);
    if (m->d.experts > 0) {
        dt_layer_cost(c, true, false, DT_TRAIN, &k->moe);
        dt_layer_comm(c, true, false, DT_TRAIN, &k->moe);
    } else {
        k->moe = k->dense;
    }
    double h = (double)m->hidden, tp = (double)c->d.tp, mb = (double)c->d.mb;
    /* per decode step and layer: TP all-reduces, EP dispatch + combine */
    k->tp_step = c->d.tp > 1 ? 2.0 * dt_coll(c, TOPO_ALLREDUCE, c->d.tp, c->stride[DT_TP],
                                             mb * h * c->ab)
                             : 0.0;
    k->a2a_step = 0.0;
    if (m->d.experts > 0 && c->d.ep > 1)
        k->a2a_step = 2.0 * dt_coll(c, TOPO_ALLTOALL, c->d.ep, c->s_dpcp,
                                    mb * (double)dt_top_k(m) * h * c->ab);
    k->p2p_pre = k->p2p_dec = 0.0;
    if (c->d.pp > 1) {
        k->p2p_pre = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP],
                             c->tok * h * c->ab / (c->sp ? tp : 1.0));
        k->p2p_dec = dt_coll(c, TOPO_P2P, 2, c->stride[DT_PP], mb * h * c->ab);
    }
}

void dt_infer_stage(const dt_ctx *c, const dt_stages *st, const dt_infer_k *k, int64_t s,
                    dt_infer_s *o)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    double h = (double)m->hidden, tp = (double)c->d.tp, mb = (double)c->d.mb;
    double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16];
    double wb = hw_dtype_bytes(c->dt);
    double lpd = dt_layer_params(c, false), lpm = dt_layer_params(c, true);
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double kvt = kv / tp > 1.0 ? kv / tp : 1.0, dh = h / (double)m->heads;
    double prompt = (double)(c->t->prompt_tokens > 0 ? c->t->prompt_tokens : m->seq_len);
    double steps = (double)c->t->decode_tokens;
    double ctx_mean = prompt + 0.5 * steps; /* KV read per step, averaged */
    double vocab_t = (double)m->vocab / tp;
    const dt_stage *g = &st->s[s];
    int64_t nd = g->n[DT_DENSE] + g->n[DT_FDENSE], nm = g->n[DT_MOE] + g->n[DT_FMOE];
    double nl = (double)(nd + nm);
    /* prefill */
    o->pre = (double)nd * k->dense.fwd + (double)nm * k->moe.fwd;
    o->pre_comp = (double)nd * k->dense.comp_fwd + (double)nm * k->moe.comp_fwd;
    o->pre_mem = (double)nd * k->dense.mem_f + (double)nm * k->moe.mem_f;
    if (s == 0 && m->vocab > 0) {
        double e = dt_elem(c, 2.0 * c->tok * h * c->ab, 1.0);
        o->pre += e;
        o->pre_comp += e;
        o->pre_mem += e;
    }
    if (s == c->d.pp - 1 && m->vocab > 0) { /* the head for the last prompt token */
        double loss = dt_elem(c, 10.0 * mb * vocab_t * 4.0, 6.0);
        double head = dt_gemm_p(c, mb, vocab_t, h, 1, false) + loss;
        o->pre += head;
        o->pre_comp += head;
        o->pre_mem += loss;
    }
    o->pre_tp = (double)nd * k->dense.tp_comm + (double)nm * k->moe.tp_comm;
    o->pre_cp = (double)nd * k->dense.cp_comm + (double)nm * k->moe.cp_comm;
    o->pre_a2a = (double)nm * k->moe.a2a;
    /* decode step */
    double head_p = s == c->d.pp - 1 ? dt_head_params_dev(c) : 0.0;
    double local = (double)m->d.experts / (double)c->d.ep;
    double touched = local < mb * (double)dt_top_k(m) ? local : mb * (double)dt_top_k(m);
    double active = (double)nd * lpd + (double)nm * (lpm - dt_expert_params(c)) +
                    (double)nm * touched * dt_expert_params(c) / (local > 1.0 ? local : 1.0);
    double kvbytes = 2.0 * nl * kvt * dh * ctx_mean * mb * c->ab / (double)c->d.cp;
    double flops = 2.0 * (active + head_p) * mb;
    double stream = hw_mem_time(hw, wb * (active + head_p) + kvbytes) / c->f.mem;
    double crunch =
        nl > 0 ? flops / (peak * c->f.gemm * hw_gemm_efficiency_dtype(hw, c->dt, flops / nl))
               : 0.0;
    o->step_comp = dt_max(stream, crunch) + nl * 12.0 * hw->kernel_overhead_s;
    o->step_mem = stream >= crunch ? o->step_comp : 0.0; /* HBM-bound step */
    o->step_tp = nl * k->tp_step;
    o->step_a2a = (double)nm * k->a2a_step;
}

status_code dt_infer_time(const dt_ctx *c, const dt_stages *st, result_t *r)
{
    dt_infer_k k;
    dt_infer_common(c, &k);
    double steps = (double)c->t->decode_tokens;
    double ttft = 0.0, tpot = 0.0, comp = 0.0, tpcomm = 0.0, a2a = 0.0, cpcomm = 0.0;
    double memc = 0.0;
    double p2p_pre = k.p2p_pre, p2p_dec = k.p2p_dec;
    for (int64_t s = 0; s < c->d.pp; s++) {
        dt_infer_s o;
        dt_infer_stage(c, st, &k, s, &o);
        ttft += o.pre + (s < c->d.pp - 1 ? p2p_pre : 0.0);
        comp += o.pre_comp + steps * o.step_comp;
        memc += o.pre_mem + steps * o.step_mem;
        tpcomm += o.pre_tp + steps * o.step_tp;
        cpcomm += o.pre_cp;
        a2a += o.pre_a2a + steps * o.step_a2a;
        tpot += o.step_comp + o.step_tp + o.step_a2a + (s < c->d.pp - 1 ? p2p_dec : 0.0);
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
    /* what bounds the step: math- and memory-bound compute, the exposed
     * communication by dimension (serving has no data parallelism's
     * collectives) */
    r->compute_memory_s = memc;
    r->compute_math_s = dt_max(0.0, comp - memc);
    double est[DT_B_DIMS] = {[DT_B_TP] = tpcomm,
                             [DT_B_CP] = cpcomm,
                             [DT_B_EP] = a2a,
                             [DT_B_PP] = pp1 * (p2p_pre + steps * p2p_dec),
                             [DT_B_DP] = 0.0};
    dt_breakdown_comm(c, r->comm_exposed_s, est, r);
    r->events_compute = 0;
    r->events_comm = 0;
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt] : hw->peak_flops[HW_BF16];
    double mflops = 2.0 * (detailed_model_flops(m, true) / (double)m->seq_len) *
                    (double)r->global_batch * steps;
    r->mfu = mflops / (r->iteration_time_s * (double)c->p->system.devices * peak);
    return STATUS_OK;
}
