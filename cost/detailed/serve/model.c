/*
 * model.c - the step-cost model of one serving evaluation (sv_model):
 * the busiest pipeline stage (the most layers), each layer's weight
 * GEMMs on one device (attention's at attention's tensor parallelism,
 * the MLP or the routed and shared experts), the KV bytes per token,
 * attention's FLOPs, the element-wise bytes, the LM head, the attention
 * kinds' sizes (the busiest stage's layers of the second kind, Gated
 * DeltaNet's state and work, sparse attention's indexer), each part's
 * weights in the precision the model keeps it in; then, per
 * scenario of the ranges, the peaks and bandwidths under the context's
 * facts and the serving stack's figures (floors, efficiencies, host
 * times). And the workload a serving evaluation starts from.
 * Invariant: the shapes part depends on no uncertain fact, so a band end
 * re-resolves only the facts part (sv_model_facts).
 */
#include "serve.h"

#include <math.h>
#include <string.h>

/* Whether a part kept in precision w (TASK_W_*) runs its GEMMs in BF16
 * under the compute dtype: a BF16-kept part under FP8 or FP4 math (the
 * engines' quantized linears leave modules_to_not_convert in BF16). */
static int sv_model_wide(const dt_ctx *c, int w)
{
    return w == TASK_W_BF16 && hw_dtype_narrow(c->dt);
}

/* Weight GEMMs of a layer on one device: QKV (grouped-query), output,
 * gate+up (SwiGLU) or up (GeLU), down; the attention shape in *as. Each
 * part's weights in the precision the model keeps them in, else wb. */
static void sv_model_gemms(const dt_ctx *c, double wb, sv_model *k, dt_attn_sh *as)
{
    const model_t *m = c->m;
    double h = (double)m->hidden, tp = (double)c->d.tp, ta = tp / k->adp;
    double f = (double)m->ffn / tp, mats = dt_shape_mlp_mats(m);
    int wa = m->d.attn_weight_precision, wd = m->d.dense_weight_precision;
    int we = m->d.expert_weight_precision;
    double ba = wa ? dt_kv_part_bytes(c, wa) : wb, bd = wd ? dt_kv_part_bytes(c, wd) : wb;
    double be = we ? dt_kv_part_bytes(c, we) : wb;
    /* attention projections as training costs them (GQA, or MLA's down-
     * and up-projections, the gate and the indexer), at attention's
     * tensor parallelism: the output projection, the rest as one; the
     * second kind's the same way */
    dt_shape_attn(m, ta, as);
    double out = (double)m->heads / ta * as->dv * h;
    double pw[4] = {as->params - out, out, (mats - 1.0) * f * h, f * h};
    for (int i = 0; i < 4; i++) {
        k->g[i].wbytes = (i < 2 ? ba : bd) * pw[i];
        k->g[i].flops = 2.0 * pw[i];
        k->g[i].wide = sv_model_wide(c, i < 2 ? wa : wd);
    }
    if (k->alt != DT_KIND_FULL) {
        dt_attn_sh a2;
        dt_shape_attn_kind(m, ta, k->alt, &a2);
        double o2 = a2.gn[a2.n - 1] * a2.gk[a2.n - 1];
        double p2[2] = {a2.params - o2, o2};
        for (int i = 0; i < 2; i++)
            k->ga[i] = (sv_gemm){.wbytes = ba * p2[i], .flops = 2.0 * p2[i],
                                 .wide = sv_model_wide(c, wa)};
    }
    k->wide = k->g[0].wide | k->g[2].wide | k->ga[0].wide; /* 1: kept in BF16 */
    k->ng_moe = 2;
    if (m->d.experts > 0) {
        /* the routed experts as memory lays them out (core/shape.c): E /
         * ep whole experts an EP rank, each split over etp devices (etp =
         * tp without expert parallelism: every device 1/tp of each) */
        double fx = dt_shape_expert_ffn(m), fe = fx / (double)c->etp, E = (double)m->d.experts;
        k->experts = E;
        k->ep = (double)c->d.ep;
        k->e_loc = E / k->ep;
        k->topk = (double)dt_shape_top_k(m);
        k->exp_bytes = be * mats * fe * h;
        k->exp_flops = 2.0 * mats * fe * h;
        k->router = (sv_gemm){.wbytes = 2.0 * h * E, .flops = 2.0 * h * E, .wide = 2};
        double fs = (double)m->d.shared_experts * fx / tp; /* tensor-parallel, as a dense MLP */
        k->shared = (sv_gemm){.wbytes = bd * mats * fs * h, .flops = 2.0 * mats * fs * h,
                              .wide = sv_model_wide(c, wd)};
        k->wide |= k->shared.wide;
    }
}

/* The attention kinds' sizes on one attention rank (heads at ta): the
 * second kind's layers on the busiest stage and, for Gated DeltaNet, its
 * work per token and state per sequence (core/shape.c); sparse
 * attention's top-k, indexer keys and FLOPs. */
static void sv_model_kinds(const dt_ctx *c, const dt_stage *busy, double ta, sv_model *k)
{
    const model_t *m = c->m;
    k->na = busy ? (double)dt_stage_alt(busy) : 0.0;
    if (k->alt == DT_KIND_SLIDING) {
        k->win = (double)m->d.sliding_window;
    } else if (k->alt == DT_KIND_LINEAR) {
        dt_lin_sh l;
        dt_shape_linear(m, ta, c->ab, &l);
        k->lin_state = l.state;
        k->lin_fl = l.fl_prompt;
        k->lin_io = l.chunk_io;
        /* the conv (read, write), q/k l2 norms and the gated norm */
        k->lin_ew = (2.0 * l.conv + 2.0 * 2.0 * (double)m->d.linear_key_heads / ta *
                                        (double)m->d.linear_key_head_dim +
                     3.0 * (double)m->d.linear_value_heads / ta *
                         (double)m->d.linear_value_head_dim) * c->ab;
    }
    if (m->d.index_topk > 0) {
        /* sparse attention (DeepSeek-V3.2): the indexer's FP8 keys and
         * scales (kv.c), its FLOPs per query-key pair (heads replicated
         * over tp), attention over the top-k */
        k->sa_topk = (double)m->d.index_topk;
        k->idx_tok = ((double)m->d.index_head_dim + ceil((double)m->d.index_head_dim / 128.0) * 4.0) /
                     (double)c->d.cp;
        k->idx_flops = 2.0 * (double)m->d.index_heads * (double)m->d.index_head_dim;
    }
}

void sv_model_shape(const dt_ctx *c, const dt_stages *st, sv_model *k)
{
    const model_t *m = c->m;
    const stack_desc *s = c->st;
    double tp = (double)c->d.tp, h = (double)m->hidden, dh = dt_shape_head_dim(m);
    memset(k, 0, sizeof *k);
    /* attention DP: each rank's attention at ta over its own requests
     * (kv_tok and attn_flops a rank's; sv_step takes the busiest rank) */
    k->adp = dt_kv_attn_dp(c);
    double ta = tp / k->adp;
    /* the busiest stage: the most layers */
    const dt_stage *busy = NULL;
    for (int64_t i = 0; i < c->d.pp; i++) {
        const dt_stage *g = &st->s[i];
        double nd = (double)dt_stage_layers(g, false);
        double nm = (double)dt_stage_layers(g, true);
        if (nd + nm > k->nd + k->nm) {
            k->nd = nd;
            k->nm = nm;
            busy = g;
        }
    }
    k->alt = c->alt;
    if (c->alt != DT_KIND_FULL || m->d.index_topk > 0)
        sv_model_kinds(c, busy, ta, k);
    double wb = dt_kv_bytes_per_weight(c);
    dt_attn_sh as;
    sv_model_gemms(c, wb, k, &as);
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double kvt = kv / ta > 1.0 ? kv / ta : 1.0;
    hw_dtype kvd = dt_kv_dtype(c);
    k->kv_tok = dt_shape_kv_cols(m, ta) * hw_dtype_bytes(kvd) / (double)c->d.cp;
    bool mla = m->d.kv_lora_rank > 0;
    k->kv_read = s->kv_per_query_head && !mla ? ((double)m->heads / ta) / kvt : 1.0;
    /* MLA decodes in the absorbed form: scores over the latent + RoPE
     * key, values from the latent (DeepSeek-V2 section 2.1.3) */
    k->attn_flops = mla ? 2.0 * ((double)m->heads / ta) *
                              (dt_shape_kv_cols(m, ta) + (double)m->d.kv_lora_rank)
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
    k->head = (sv_gemm){.wbytes = 2.0 * k->vocab_t * h, .flops = 2.0 * k->vocab_t * h, .wide = 2};
    k->tp = tp;
    k->pp = (double)c->d.pp;
    k->p2p_tok = c->hw->scaleup_latency_s;
    /* DEP: attention DP with the experts spread over the replica, the
     * tokens dispatched and combined by all-to-all when the deployment
     * (task moe_dispatch) or the engine's default says so */
    int disp = c->t->moe_flex_dispatch;
    k->a2a = k->adp > 1.0 && k->ep > 1.0 && m->d.experts > 0 &&
             (disp == 1 || (disp < 0 && s->moe_a2a));
    if (k->a2a) {
        double ep = k->ep, kk = k->topk;
        k->a2a_tok = ep * (1.0 - pow(1.0 - 1.0 / ep, kk)) * h * 3.0; /* 1 B out, 2 B back */
    }
    double gm = dt_kv_graph_max(c);
    k->graph_max = gm > 0.0 ? gm : (double)INFINITY;
    /* a step's kernels: a layer's GEMMs, attention, element-wise and the
     * two collectives (MoE: router, expert GEMMs and the routing), the
     * head */
    k->kernels = k->nd * (4.0 + 1.0 + k->ew_kernels + 2.0) +
                 k->nm * (2.0 + 1.0 + k->ew_kernels + 2.0 + 1.0 + 2.0 + 4.0 +
                          (k->shared.wbytes > 0.0 ? 1.0 : 0.0)) + 3.0;
    k->apart = s->prefill_apart;
    k->uniform = c->t->uniform_lengths;
    k->overlap = s->overlap ? 1.0 : 0.0;
    k->rounds = (double)c->t->rounds;
    sv_spec_init(c, k);
}

/* DeepEP's low-latency dispatch + combine of one MoE layer at EP ep: the
 * floor of a decode step's exchange (128 tokens a rank, hidden 7168,
 * top-8, FP8 dispatch, BF16 combine, H800 with CX7 400 Gb/s: dispatch
 * 77 / 118 / 155 / 173 / 192 / 194 us, combine 114 / 195 / 273 / 314 /
 * 369 / 360 us at EP 8 / 16 / 32 / 64 / 128 / 256; deepseek-ai/DeepEP
 * @dd758ca docs/legacy.md), interpolated in log2 ep, held at the ends. */
static double sv_model_deepep_ll(double ep)
{
    static const double us[6] = {191.0, 313.0, 428.0, 487.0, 561.0, 554.0};
    double x = log2(ep / 8.0);
    if (x <= 0.0)
        return us[0] * 1e-6;
    if (x >= 5.0)
        return us[5] * 1e-6;
    int i = (int)x;
    return (us[i] + (x - (double)i) * (us[i + 1] - us[i])) * 1e-6;
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
    if (k->wide) { /* parts kept in BF16: the BF16 curve */
        k->eff_top16 = dt_min(0.95, hw->gemm_efficiency[hw->gemm_points > 0 ? hw->gemm_points - 1 : 0] *
                                        stack_pick(s->gemm_eff_max, sc, true));
        k->m_half16 = stack_pick(s->gemm_m_half, sc, false);
    }
    k->eta_kv = stack_pick(s->kv_bw_eff, sc, true);
    k->attn_floor = dt_max(launch, stack_pick(s->attn_floor_s, sc, false));
    k->pre_eff = stack_pick(s->prefill_attn_eff, sc, true);
    k->ew_floor = dt_max(launch, stack_pick(s->ew_floor_s, sc, false));
    k->ar_lat = dt_max(launch, stack_pick(s->allreduce_s, sc, false));
    k->ar_eff = stack_pick(s->allreduce_bw_eff, sc, true);
    k->ar_ramp = stack_pick(s->allreduce_ramp_bytes, sc, false);
    k->host_step = stack_pick(s->step_host_s, sc, false);
    k->host_seq = stack_pick(s->seq_host_s, sc, false);
    k->host_req = stack_pick(c->t->front_end == TASK_FRONT_DYNAMO ? s->dynamo_host_s
                                                                   : s->request_host_s,
                             sc, false);
    k->eager = stack_pick(s->eager_launch_s, sc, false);
    if (k->a2a) { /* the EP group's all-to-all on the topology, as latency + bytes */
        double b1 = 1e6, t1 = dt_coll(c, TOPO_ALLTOALL, c->d.ep, c->s_ep, b1);
        double t2 = dt_coll(c, TOPO_ALLTOALL, c->d.ep, c->s_ep, 2.0 * b1);
        k->a2a_byte = (t2 - t1) / b1;
        k->a2a_lat = dt_max(0.0, t1 - k->a2a_byte * b1);
        k->a2a_floor = sv_model_deepep_ll(k->ep);
    }
    /* a weight GEMM's floor: the launch and its weights streamed */
    sv_gemm *g[9] = {&k->g[0], &k->g[1], &k->g[2], &k->g[3], &k->router, &k->shared, &k->head,
                     &k->ga[0], &k->ga[1]};
    for (int i = 0, n = k->alt != DT_KIND_FULL ? 9 : 7; i < n; i++) {
        g[i]->mem = k->t0 + g[i]->wbytes / (k->bw * k->eta_w);
        /* the router and the head (wide 2) at the BF16 peak on the
         * compute dtype's curve, as they always ran; a part kept in BF16
         * (1) at the BF16 peak and curve */
        g[i]->peak = g[i]->wide ? k->peak16 : k->peak;
        g[i]->top = g[i]->wide == 1 ? k->eff_top16 : k->eff_top;
        g[i]->half = g[i]->wide == 1 ? k->m_half16 : k->m_half;
    }
}

void sv_model_init(const dt_ctx *c, const dt_stages *st, stack_scenario sc, sv_model *k)
{
    sv_model_shape(c, st, k);
    sv_model_facts(c, sc, k);
}

bool sv_model_begin(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, sv_model *k,
                    sv_load *w)
{
    if (!mem->kv_fits)
        return false;
    sv_model_init(c, st, c->scenario, k);
    w->isl = (double)(c->t->prompt_tokens > 0 ? c->t->prompt_tokens : c->m->seq_len);
    w->osl = (double)c->t->decode_tokens;
    w->K = dt_kv_budget(c) * dt_kv_attn_dp(c); /* attention DP: a budget a rank */
    w->cd = w->isl + dt_kv_grown(c) * w->osl;
    return true;
}
