/*
 * train.c - one training (or inference) step of a transformer.
 *
 * The cost of one layer per micro-batch (layer.c) gives the cost of each
 * pipeline stage; the schedule is closed form: m T_max + (sum of stages -
 * T_max) / v, a bubble of (p-1)/v stage times for uniform stages. The last
 * micro-batch's backward of the first stage then runs on the two-stream
 * engine, one compute and one communication event per layer, so that
 * data-parallel gradient reduction overlaps the backward exactly as far as
 * the dependencies allow, followed by the optimizer (Adam with fp32 master
 * weights, 30 bytes per local parameter through HBM) and ZeRO 1/2's
 * parameter all-gather. Work is O(layers per stage); nothing is allocated
 * once the engine has its capacity.
 * Memory per device: weights, gradients, optimizer states (sharded per
 * ZeRO stage over dp x cp; ZeRO 3 adds two layers' gathered parameters
 * and one layer's unsharded gradients), activations (memory.c) times the
 * micro-batches in flight on the first stage (1F1B: min(m, p) (1 +
 * (p-1)/(p v)); GPipe: m), plus the fp32 logits on the last stage.
 * Fine-tuning: the first frozen_layers layers (and with freeze_emb the
 * embedding, and a tied head's weight) get no gradients, gradient
 * collectives or optimizer states; a frozen layer with something trained
 * below it runs a backward of data gradients only, one with nothing
 * trained below runs none and keeps no activations.
 * Inference: the prompt crosses every stage once (TTFT); each decode step
 * streams the weights and the KV cache from HBM (TPOT).
 */
#include "dt.h"

#include <math.h>
#include <string.h>

status_code dt_run_llm(const point_t *p, engine *e, result_t *r)
{
    dt_ctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.m = &p->model;
    c.t = &p->task.detailed;
    c.hw = &p->system.hw;
    c.topo = &p->system.topo;
    dt_degrees(p, &c.d);
    c.dt = (hw_dtype)c.t->dtype;
    c.ab = c.dt == HW_FP32 || c.dt == HW_TF32 ? 4.0 : 2.0;
    c.gbytes = c.t->grad_reduce_bytes > 0 ? c.t->grad_reduce_bytes : c.ab;
    c.dpcp = c.d.dp * c.d.cp;
    {
        int order[4];
        int64_t deg[4] = {c.d.tp, c.d.cp, c.d.dp, c.d.pp}, acc = 1;
        dt_perm(c.t->layout > 0 ? c.t->layout - 1 : 0, order);
        for (int i = 0; i < 4; i++) {
            c.stride[order[i]] = acc;
            acc *= deg[order[i]];
        }
        c.s_dpcp = c.stride[DT_DP] < c.stride[DT_CP] || c.d.cp == 1 ? c.stride[DT_DP]
                                                                     : c.stride[DT_CP];
        if (c.d.dp == 1)
            c.s_dpcp = c.stride[DT_CP];
        c.zs = c.t->shard_degree > 0 ? c.t->shard_degree : c.dpcp;
    }
    const model_t *m = c.m;
    const hw_t *hw = c.hw;
    bool training = p->task.kind != TASK_INFERENCE;

    /* shapes that must divide */
    if (m->heads % c.d.tp != 0 || m->seq_len % c.d.cp != 0 ||
        m->layers % (c.d.pp * c.d.v) != 0 || (m->d.experts > 0 && m->d.experts % c.d.ep))
        return STATUS_INFEASIBLE_SHAPE;
    if (training && (c.d.ga < 1 || c.d.gb != c.d.ga * c.d.mb * c.d.dp))
        return STATUS_INFEASIBLE_BATCH;

    int64_t nl = m->layers / c.d.pp; /* layers per stage */
    double h = (double)m->hidden, tp = (double)c.d.tp;
    bool sp = c.t->sequence_parallel && c.d.tp > 1;
    r->global_batch = training ? c.d.gb : c.d.mb * c.d.dp;
    int64_t moe_from = m->d.experts > 0 ? m->d.dense_layers : m->layers;
    /* fine-tuning: the first `frozen` layers get no gradients; they run
     * a backward for data gradients only when the embeddings below them
     * are trained, none otherwise */
    bool ft = p->task.kind == TASK_FINETUNE;
    int64_t frozen = ft ? c.t->frozen_layers : 0;
    bool emb_train = m->vocab > 0 && !(ft && p->task.freeze_emb);
    int fmode = emb_train ? DT_DGRAD : DT_NOBWD;
    bool head_train = m->d.untied_embeddings || emb_train;
    bool below_train = emb_train || frozen < m->layers; /* head needs dgrad */

    /* ---- memory (first and last stage) */
    double total_params, per_dev;
    detailed_params(m, c.t, &total_params, &per_dev);
    double wb = c.ab > 2.0 ? 4.0 : 2.0;
    double n = (double)c.zs; /* ZeRO shards over the shard group */
    double weights = wb * per_dev, grads = 0.0, opt = 0.0;
    /* per-layer parameters per device, for what fine-tuning freezes */
    dt_layer dense, moe;
    c.kv_len = (double)(!training && c.t->prompt_tokens > 0 ? c.t->prompt_tokens
                                                           : m->seq_len);
    c.seq = c.kv_len / (double)c.d.cp;
    c.tok = (double)c.d.mb * c.seq;
    dt_layer_cost(&c, false, training, DT_TRAIN, &dense);
    if (m->d.experts > 0)
        dt_layer_cost(&c, true, training, DT_TRAIN, &moe);
    else
        moe = dense;
    /* trained parameters per device: on the last stage (the fewest frozen
     * layers, hence the most gradients and optimizer states) */
    double train_dev = per_dev;
    if (frozen > 0 || !emb_train) {
        double fd, fm;
        dt_frozen_in((c.d.pp - 1) * nl, c.d.pp * nl, frozen, moe_from, &fd, &fm);
        train_dev -= fd * dense.params + fm * moe.params;
        if (!emb_train && m->vocab > 0)
            train_dev -= ((double)m->vocab + (m->d.position == MODEL_POS_LEARNED
                                                  ? (double)m->seq_len
                                                  : 0.0)) * h / tp;
        if (train_dev < 0)
            train_dev = 0;
    }
    if (training) {
        grads = wb * train_dev;
        opt = (c.ab > 2.0 ? 8.0 : 12.0) * train_dev;
        if (c.d.zero >= 1)
            opt /= n;
        if (c.d.zero >= 2)
            grads /= n;
        if (c.d.zero >= 3)
            weights /= n;
    }
    double acts = 0.0, kvc = 0.0;
    double pp = (double)c.d.pp, v = (double)c.d.v, mm = (double)c.d.ga;
    if (training) {
        double flight = p->task.detailed.schedule == TASK_SCHEDULE_GPIPE
                            ? mm
                            : fmin(mm, pp) * (c.d.v > 1 ? 1.0 + (pp - 1.0) / (pp * v) : 1.0);
        /* layers without a backward keep no activations (stage 0 holds
         * the most of them) */
        double keep = (double)nl;
        if (fmode == DT_NOBWD && frozen > 0)
            keep -= (double)(frozen < nl ? frozen : nl);
        acts = keep * dt_act_bytes(&c, c.t->recompute) * flight;
        if (c.t->recompute == TASK_RECOMPUTE_FULL) /* one layer rebuilt */
            acts += dt_act_bytes(&c, TASK_RECOMPUTE_NONE);
        if (c.d.pp == 1)
            acts += 2.0 * c.seq * (double)c.d.mb * (double)m->vocab / tp * 4.0;
    } else {
        double kvh = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
        double ctx = (double)(c.t->prompt_tokens > 0 ? c.t->prompt_tokens : m->seq_len) +
                     (double)c.t->decode_tokens;
        kvc = 2.0 * (double)nl * fmax(kvh / tp, 1.0) * (h / (double)m->heads) * ctx *
              (double)c.d.mb * c.ab / (double)c.d.cp;
        acts = 2.0 * c.seq * (double)c.d.mb * fmax(h, (double)m->vocab / tp) * 4.0;
    }
    /* ---- per-layer costs: frozen variants */
    dt_layer fdense = dense, fmoe = moe;
    if (training && frozen > 0) {
        dt_layer_cost(&c, false, training, fmode, &fdense);
        if (m->d.experts > 0)
            dt_layer_cost(&c, true, training, fmode, &fmoe);
        else
            fmoe = fdense;
    }
    /* ZeRO 3 (FSDP) working set: the gathered parameters of the layer
     * computing and of the one prefetched, and the layer's unsharded
     * gradients before they are reduce-scattered */
    if (training && c.d.zero >= 3) {
        double lp = fmax(dense.params, moe.params);
        weights += 2.0 * lp * c.ab;
        grads += lp * c.gbytes;
    }
    r->mem_weights_bytes_per_device = weights;
    r->mem_grads_bytes_per_device = grads;
    r->mem_optimizer_bytes_per_device = opt;
    r->mem_activations_bytes_per_device = acts;
    r->mem_kv_cache_bytes_per_device = kvc;
    r->mem_total_bytes_per_device = weights + grads + opt + acts + kvc;
    if (r->mem_total_bytes_per_device > hw->mem_capacity_bytes)
        return STATUS_INFEASIBLE_MEMORY;


    /* stage s holds layers [s nl, (s+1) nl) */
    double vocab_t = (double)m->vocab / tp;
    double emb_f = 0.0, emb_b = 0.0, head_f = 0.0, head_b = 0.0;
    if (m->vocab > 0) {
        emb_f = hw_mem_time(hw, 2.0 * c.tok * h * c.ab) + hw->kernel_overhead_s;
        if (c.d.tp > 1)
            emb_f += dt_coll(&c, TOPO_ALLREDUCE, c.d.tp, c.stride[DT_TP], c.tok * h * c.ab);
        emb_b = emb_train ? emb_f : 0.0;
        /* vocab-parallel cross entropy in fp32: ~10 passes of 4 bytes over
         * the logits forward (cast, max, shift, exp, sum, normalise), ~4
         * backward (softmax minus one-hot, cast) */
        double logits = c.tok * vocab_t;
        double g = dt_gemm(&c, c.tok, vocab_t, h, 1);
        head_f = g + hw_mem_time(hw, 40.0 * logits) + 6.0 * hw->kernel_overhead_s;
        /* weight gradient when the head is trained, data gradient when
         * anything below it is */
        double hg = (head_train ? 1.0 : 0.0) + (below_train ? 1.0 : 0.0);
        head_b = hg > 0.0 ? hg * g + hw_mem_time(hw, 16.0 * logits) +
                                3.0 * hw->kernel_overhead_s
                          : 0.0;
    }
    double p2p = 0.0;
    if (c.d.pp > 1) {
        double bytes = c.tok * h * c.ab / (sp ? tp : 1.0);
        p2p = 2.0 * v * dt_coll(&c, TOPO_P2P, 2, c.stride[DT_PP], bytes);
    }
    double tmax = 0.0, tsum = 0.0, t0 = 0.0, ttft = 0.0;
    for (int64_t s = 0; s < c.d.pp; s++) {
        int64_t lo = s * nl, hi = lo + nl;
        int64_t nmoe = hi <= moe_from ? 0 : hi - (lo > moe_from ? lo : moe_from);
        double nd = (double)(nl - nmoe), nm = (double)nmoe, fd, fm;
        dt_frozen_in(lo, hi, frozen, moe_from, &fd, &fm);
        double ts = (nd - fd) * (dense.fwd + (training ? dense.bwd : 0.0)) +
                    (nm - fm) * (moe.fwd + (training ? moe.bwd : 0.0)) +
                    fd * (fdense.fwd + (training ? fdense.bwd : 0.0)) +
                    fm * (fmoe.fwd + (training ? fmoe.bwd : 0.0)) +
                    p2p * (training ? 1.0 : 0.5);
        if (training) /* ZeRO 3: exposed first gathers of each pass */
            ts += (lo < moe_from ? (lo < frozen ? fdense : dense)
                                 : (lo < frozen ? fmoe : moe)).z3_fhead +
                  (hi - 1 < moe_from ? (hi - 1 < frozen ? fdense : dense)
                                     : (hi - 1 < frozen ? fmoe : moe)).z3_bhead;
        if (s == 0)
            ts += emb_f + (training ? emb_b : 0.0);
        if (s == c.d.pp - 1)
            ts += head_f + (training ? head_b : 0.0);
        if (s == 0)
            t0 = ts;
        tmax = ts > tmax ? ts : tmax;
        tsum += ts;
    }
    ttft = tsum; /* inference: a prompt crosses every stage once */

    if (!training) {
        /* decode: one token per sequence per step, weights and KV cache
         * streamed from HBM each step */
        double ctx = (double)(c.t->prompt_tokens > 0 ? c.t->prompt_tokens : m->seq_len);
        double steps = (double)c.t->decode_tokens;
        double wbytes = per_dev * c.ab;
        double kvbytes = kvc * (ctx + 0.5 * steps) / (ctx + steps);
        double flops = 2.0 * per_dev * (double)c.d.mb;
        double peak = hw->peak_flops[c.dt] > 0 ? hw->peak_flops[c.dt] : hw->peak_flops[HW_BF16];
        double step = fmax(hw_mem_time(hw, wbytes + kvbytes),
                           flops / (peak * hw_gemm_efficiency(hw, flops / (double)nl))) +
                      (double)nl * (12.0 * hw->kernel_overhead_s);
        if (c.d.tp > 1)
            step += (double)nl * 2.0 *
                    dt_coll(&c, TOPO_ALLREDUCE, c.d.tp, c.stride[DT_TP], (double)c.d.mb * h * c.ab);
        double tpot = step * pp + (c.d.pp > 1 ? (pp - 1.0) * p2p : 0.0);
        r->ttft_s = ttft;
        r->tpot_s = tpot;
        r->iteration_time_s = ttft + steps * tpot;
        r->tokens_per_s = (double)r->global_batch / tpot;
        r->throughput_samples_per_s = (double)r->global_batch / r->iteration_time_s;
        r->compute_gemm_s = r->iteration_time_s;
        r->comm_allreduce_s = (double)nl * 2.0 * dense.tp_comm * 0.5;
        return STATUS_OK;
    }

    double tpipe = mm * tmax + (tsum - tmax) / v;
    r->pipeline_bubble_s = (tsum - tmax) / v;

    /* ---- last backward of stage 0 on the engine: per-layer gradient
     * collectives overlap the remaining backward layers */
    engine_reset(e);
    if (engine_reserve(e, (size_t)(2 * nl + 4)) != 0)
        return STATUS_NOMEM;
    /* the engine replays stage 0's last backward (its layers [0, nl):
     * dense below moe_from, MoE from there), so it starts that long
     * before the end of the closed-form schedule */
    int64_t moe0 = moe_from < nl ? nl - moe_from : 0;
    double fd0, fm0;
    dt_frozen_in(0, nl, frozen, moe_from, &fd0, &fm0);
    double start = tpipe - ((double)(nl - moe0) - fd0) * dense.bwd -
                   ((double)moe0 - fm0) * moe.bwd - fd0 * fdense.bwd - fm0 * fmoe.bwd - emb_b;
    if (start < 0)
        start = 0;
    engine_phase(e, start);
    engine_label lab = {ENGINE_PART_ATTN, ENGINE_OP_COMPUTE, 1, 0};
    engine_ev last = ENGINE_NONE, lastc = ENGINE_NONE;
    bool overlap = c.t->overlap_dp_comm;
    double sync_sum = 0.0;
    for (int64_t i = nl - 1; i >= 0; i--) {
        const dt_layer *L = i >= moe_from ? (i < frozen ? &fmoe : &moe)
                                          : (i < frozen ? &fdense : &dense);
        lab.layer = (int32_t)i;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, L->bwd, &last, 1, lab);
        sync_sum += L->grad_sync;
        if (overlap && L->grad_sync > 0) {
            lab.op = c.d.zero == 0 ? ENGINE_OP_WG_AR : ENGINE_OP_WG_RS;
            lastc = engine_add(e, ENGINE_COMM, L->grad_sync, &last, 1, lab);
        }
    }
    lab.layer = -1;
    lab.part = ENGINE_PART_EMB;
    last = engine_add(e, ENGINE_COMP, emb_b, &last, 1, lab);
    double emb_sync = 0.0;
    if (c.d.zero < 3 && m->vocab > 0 && emb_train) {
        double eb = (double)m->vocab * h / tp * c.gbytes;
        emb_sync = c.d.zero == 0 ? dt_coll(&c, TOPO_ALLREDUCE, c.dpcp, c.s_dpcp, eb)
                                 : dt_coll(&c, TOPO_REDUCESCATTER, c.zs, c.s_dpcp, eb);
    }
    engine_ev deps[2] = {last, lastc};
    lab.op = c.d.zero == 0 ? ENGINE_OP_WG_AR : ENGINE_OP_WG_RS;
    double tail_sync = emb_sync + (overlap ? 0.0 : sync_sum) +
                       (moe_from > 0 ? dense : moe).z3_tail;
    lastc = engine_add(e, ENGINE_COMM, tail_sync, deps, 2, lab);
    /* optimizer: Adam, fp32 master weights, 30 bytes per local param */
    double opt_params = train_dev / (c.d.zero >= 1 ? n : 1.0);
    deps[1] = lastc;
    lab.op = ENGINE_OP_COMPUTE;
    last = engine_add(e, ENGINE_COMP, hw_mem_time(hw, 30.0 * opt_params), deps, 2, lab);
    /* ZeRO 1/2: updated parameters all-gathered; with overlap they are
     * gathered layer by layer ahead of the next iteration's first forward
     * (only what exceeds that forward stays exposed) */
    double ag = 0.0, ag_exposed = 0.0;
    if (c.d.zero == 1 || c.d.zero == 2) {
        ag = dt_coll(&c, TOPO_ALLGATHER, c.zs, c.s_dpcp, train_dev * c.ab);
        double first_fwd = (double)nl * dense.fwd + emb_f;
        ag_exposed = overlap ? fmax(0.0, ag - first_fwd) : ag;
    }
    lab.op = ENGINE_OP_WGT_AG;
    engine_add(e, ENGINE_COMM, ag_exposed, &last, 1, lab);
    double iter = engine_now(e);

    /* ---- figures */
    double layers_d = (double)(nl - (moe_from < nl ? nl - moe_from : 0));
    double layers_m = (double)nl - layers_d;
    r->iteration_time_s = iter;
    r->throughput_samples_per_s = (double)c.d.gb / iter;
    r->tokens_per_s = (double)c.d.gb * (double)m->seq_len / iter;
    r->compute_gemm_s = mm * ((layers_d - fd0) * (dense.comp_fwd + dense.comp_bwd) +
                              (layers_m - fm0) * (moe.comp_fwd + moe.comp_bwd) +
                              fd0 * (fdense.comp_fwd + fdense.comp_bwd) +
                              fm0 * (fmoe.comp_fwd + fmoe.comp_bwd) + emb_f + emb_b +
                              (c.d.pp == 1 ? head_f + head_b : 0.0)) +
                        hw_mem_time(hw, 30.0 * opt_params);
    double tpcomm = mm * (layers_d * dense.tp_comm + layers_m * moe.tp_comm) *
                    (c.t->recompute == TASK_RECOMPUTE_FULL ? 3.0 : 2.0);
    double z3 = mm * (layers_d * (2.0 * dense.zero3_ag) + layers_m * 2.0 * moe.zero3_ag);
    double z3rs = mm * (layers_d * dense.zero3_rs + layers_m * moe.zero3_rs);
    if (fd0 + fm0 > 0.0) {
        /* frozen layers of stage 0: their own passes and collectives */
        double pass = c.t->recompute == TASK_RECOMPUTE_FULL ? 3.0 : 2.0;
        double fpass = fmode == DT_NOBWD ? 1.0 : pass;
        tpcomm += mm * (fd0 * (fpass * fdense.tp_comm - pass * dense.tp_comm) +
                        fm0 * (fpass * fmoe.tp_comm - pass * moe.tp_comm));
        double fag = fmode == DT_NOBWD ? 1.0 : 2.0;
        z3 += mm * (fd0 * (fag * fdense.zero3_ag - 2.0 * dense.zero3_ag) +
                    fm0 * (fag * fmoe.zero3_ag - 2.0 * moe.zero3_ag));
        z3rs -= mm * (fd0 * dense.zero3_rs + fm0 * moe.zero3_rs);
    }
    if (sp) {
        r->comm_allgather_s = 0.5 * tpcomm;
        r->comm_reducescatter_s = 0.5 * tpcomm;
    } else {
        r->comm_allreduce_s = tpcomm;
    }
    r->comm_allgather_s += z3 + ag;
    r->comm_reducescatter_s += z3rs;
    if (c.d.zero == 0)
        r->comm_allreduce_s += sync_sum + emb_sync;
    else if (c.d.zero < 3)
        r->comm_reducescatter_s += sync_sum + emb_sync;
    r->comm_alltoall_s = mm * layers_m * 2.0 * moe.a2a;
    r->comm_p2p_s = mm * p2p;
    double comm = r->comm_allreduce_s + r->comm_allgather_s +
                  r->comm_reducescatter_s + r->comm_alltoall_s + r->comm_p2p_s;
    double exposed = iter - r->compute_gemm_s - r->pipeline_bubble_s;
    if (exposed < 0)
        exposed = 0;
    if (exposed > comm)
        exposed = comm;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    r->events_compute = e->count[ENGINE_COMP];
    r->events_comm = e->count[ENGINE_COMM];
    double peak = hw->peak_flops[c.dt] > 0 ? hw->peak_flops[c.dt] : hw->peak_flops[HW_BF16];
    /* model FLOPs: forward, plus per layer two backward GEMM passes when
     * trained, one when it only passes data gradients down */
    double lt = (double)(m->layers - frozen), ld = fmode == DT_DGRAD ? (double)frozen : 0.0;
    double ffac = 1.0 + (2.0 * lt + ld) / (double)m->layers;
    r->mfu = ffac * detailed_model_flops(m, true) * (double)c.d.gb /
             (iter * (double)p->system.devices * peak);
    (void)t0;
    return STATUS_OK;
}
