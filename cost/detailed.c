/*
 * detailed.c - the detailed fidelity.
 *
 * One evaluation builds the cost of one transformer layer per device and
 * micro-batch (forward, backward, recomputation) from its operations,
 * the cost of each pipeline stage, the pipeline schedule in closed form,
 * and then runs the last micro-batch's backward of the first stage on
 * the two-stream engine, one compute and one communication event per
 * layer, so that data-parallel gradient reduction overlaps the backward
 * pass exactly as far as the dependencies allow. Work is O(layers per
 * stage) and nothing is allocated once the engine has its capacity.
 *
 * Operations (per device, T = micro_batch * seq_len / cp tokens):
 *   GEMMs     QKV (grouped-query: (a + 2 kv) dh columns), output
 *             projection, MLP (GeLU: 2 matrices, SwiGLU: 3), MoE router
 *             and experts (top-k tokens times capacity factor), vocabulary
 *             head; all split by tp. Backward = 2 x forward (data and
 *             weight gradients). Time = roofline (hw_gemm_time).
 *   attention core: fused (flash) at the hardware's attention efficiency,
 *             4 T s dh a/tp FLOPs forward (halved when causal), backward
 *             2.5 x forward (FlashAttention-2 recomputes the scores); or
 *             unfused: two batched GEMMs over the full s x s scores plus
 *             softmax/dropout kernels over a s^2 elements.
 *   memory-bound kernels: layer norms, bias-dropout-residual adds
 *             (11 element accesses of T h, replicated over tp unless
 *             sequence parallel), GeLU/SwiGLU, RoPE, the loss over the
 *             vocabulary (fp32); backward moves twice the bytes.
 *   tensor parallel: 2 all-reduces (or all-gather + reduce-scatter with
 *             sequence parallelism) of T h elements per layer and pass;
 *             with overlap_tp_comm only the part exceeding the GEMMs.
 *   context parallel: ring attention passes K,V chunks around cp ranks,
 *             overlapped with the attention core.
 *   expert parallel: dispatch and combine all-to-all per MoE layer and
 *             pass.
 *   pipeline: point-to-point activations per chunk boundary; time of
 *             the schedule = m T_max + (sum of stages - T_max) / v, i.e.
 *             a bubble of (p-1)/v stage times for uniform stages.
 *   data parallel: gradients all-reduced (ZeRO 0), reduce-scattered and
 *             parameters all-gathered after the optimizer (ZeRO 1, 2), or
 *             parameters all-gathered before each layer's forward and
 *             backward and gradients reduce-scattered after it (ZeRO 3,
 *             overlapped per layer when overlap_dp_comm, prefetching one
 *             layer ahead: the first gather of each forward and backward
 *             and the last reduce-scatter stay exposed).
 *   optimizer: Adam with fp32 master weights, 30 bytes per local
 *             parameter through HBM.
 * Memory per device: weights, gradients, optimizer states (sharded per
 * ZeRO stage over dp x cp; ZeRO 3 adds two layers' gathered parameters
 * and one layer's unsharded gradients), activations per layer from Korthikanti et al.
 * 2022 (s b h (10 + 24/t + 5 a s/(h t)), 34/t with sequence parallelism,
 * the 5 a s/h term dropped with selective recompute or fused attention,
 * 2 s b h with full recompute, plus one layer rebuilt without it; all
 * for 16-bit activations, doubled for 32-bit) times the micro-batches in
 * flight on the first stage (1F1B: min(m, p) (1 + (p-1)/(p v)); GPipe:
 * m), plus the fp32 logits on the last stage.
 * Fine-tuning: the first frozen_layers layers (and with freeze_emb the
 * embedding, and a tied head's weight) get no gradients, gradient
 * collectives or optimizer states; a frozen layer with something trained
 * below it runs a backward of data gradients only (its GEMMs once, not
 * twice), one with nothing trained below runs none and keeps no
 * activations.
 * DLRM (dt_run_dlrm): MLP layers as GEMMs of the local batch (backward:
 * data and weight gradients, none into the dense features), the dot
 * interaction of tables + 1 vectors as a batched GEMM plus its copies,
 * embedding lookups as gathers at the effective HBM bandwidth, the
 * embeddings sharded table-, row- or column-wise (detailed.h), ids and
 * pooled vectors exchanged by all-to-all (row-wise: partial sums
 * reduce-scattered, their gradients all-gathered), the fused sparse
 * optimizer reading and writing every touched row and its state, MLP
 * gradients all-reduced in 25 MB buckets on the communication stream.
 */
#include "detailed.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ enums */

static int dt_lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int detailed_arch_parse(const char *s)
{
    static const char *const n[MODEL_NARCHS] = {"gpt", "llama", "mpt", "bloom",
                                                "vit", "mixtral", "deepseek"};
    return dt_lookup(s, n, MODEL_NARCHS);
}

int detailed_position_parse(const char *s)
{
    static const char *const n[] = {"learned", "rope", "alibi", "none"};
    return dt_lookup(s, n, 4);
}

int detailed_recompute_parse(const char *s)
{
    static const char *const n[] = {"none", "selective", "full"};
    return dt_lookup(s, n, 3);
}

int detailed_schedule_parse(const char *s)
{
    static const char *const n[] = {"1f1b", "gpipe"};
    int v = dt_lookup(s, n, 2);
    if (v < 0 && strcmp(s, "interleaved") == 0)
        v = TASK_SCHEDULE_1F1B; /* interleaving is vpp > 1 */
    return v;
}

/* The 24 orders of (tp, cp, dp, pp), as dimension indices 0..3. */
enum { DT_TP = 0, DT_CP = 1, DT_DP = 2, DT_PP = 3 };

static void dt_perm(int code, int order[4])
{
    int pool[4] = {0, 1, 2, 3}, n = 4, k = code;
    for (int i = 0; i < 4; i++) {
        int f = 1;
        for (int j = 1; j < n; j++)
            f *= j;
        int idx = k / f;
        k %= f;
        order[i] = pool[idx];
        for (int j = idx; j < n - 1; j++)
            pool[j] = pool[j + 1];
        n--;
    }
}

int detailed_layout_parse(const char *s)
{
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    for (int code = 0; code < 24; code++) {
        int order[4];
        dt_perm(code, order);
        char buf[16];
        snprintf(buf, sizeof buf, "%s-%s-%s-%s", dims[order[0]], dims[order[1]],
                 dims[order[2]], dims[order[3]]);
        if (strcmp(buf, s) == 0)
            return code == 0 ? 0 : code + 1; /* tp-cp-dp-pp is permutation 0 */
    }
    return -1;
}

int detailed_attention_parse(const char *s)
{
    static const char *const n[] = {"flash", "unfused"};
    return dt_lookup(s, n, 2);
}

/* ------------------------------------------------------------ formulas */

double detailed_megatron_flops(int64_t batch, int64_t seq, int64_t layers,
                               int64_t hidden, int64_t vocab)
{
    double b = (double)batch, s = (double)seq, l = (double)layers;
    double h = (double)hidden, v = (double)vocab;
    return 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

double detailed_bubble_fraction(int64_t p, int64_t m, int64_t v)
{
    if (v < 1)
        v = 1;
    return (double)(p - 1) / ((double)v * (double)m + (double)(p - 1));
}

double detailed_zero_bytes(double params, int64_t stage, int64_t n)
{
    double dn = n > 0 ? (double)n : 1.0;
    double w = 2.0 * params, g = 2.0 * params, o = 12.0 * params;
    if (stage >= 1)
        o /= dn;
    if (stage >= 2)
        g /= dn;
    if (stage >= 3)
        w /= dn;
    return w + g + o;
}

/* Resolved degrees and batches of a task (defaults applied). */
typedef struct dt_deg {
    int64_t tp, pp, dp, cp, ep, v, mb, ga, gb, zero;
    double cf;
} dt_deg;

static void dt_degrees(const point_t *p, dt_deg *d)
{
    const task_detailed_t *t = &p->task.detailed;
    d->tp = t->tp > 0 ? t->tp : 1;
    d->pp = t->pp > 0 ? t->pp : 1;
    d->dp = t->dp > 0 ? t->dp : 1;
    d->cp = t->cp > 0 ? t->cp : 1;
    d->ep = t->ep > 0 ? t->ep : 1;
    d->v = t->vpp > 0 ? t->vpp : 1;
    d->mb = t->micro_batch > 0 ? t->micro_batch : 1;
    d->zero = t->zero_stage;
    d->cf = t->capacity_factor > 0 ? t->capacity_factor : 1.0;
    if (t->grad_accum > 0) {
        d->ga = t->grad_accum;
        d->gb = t->global_batch > 0 ? t->global_batch : d->ga * d->mb * d->dp;
    } else {
        d->gb = t->global_batch > 0 ? t->global_batch : d->mb * d->dp;
        d->ga = d->gb / (d->mb * d->dp);
    }
}

/* Parameters of one layer: attention (QKV with kv heads, output) and MLP
 * (dense, or experts + shared experts + router). */
static double dt_attn_params(const model_t *m)
{
    double h = (double)m->hidden, dh = h / (double)m->heads;
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    return h * (h + 2.0 * kv * dh) + h * h;
}

static double dt_mlp_mats(const model_t *m)
{
    return m->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0;
}

static int64_t dt_top_k(const model_t *m)
{
    return m->d.top_k > 0 ? m->d.top_k : 2;
}

static double dt_expert_ffn(const model_t *m)
{
    return (double)(m->d.expert_ffn > 0 ? m->d.expert_ffn : m->ffn);
}

static bool dt_is_moe_layer(const model_t *m, int64_t layer)
{
    return m->d.experts > 0 && layer >= m->d.dense_layers;
}

static double dt_moe_layers(const model_t *m)
{
    if (m->d.experts <= 0)
        return 0.0;
    int64_t n = m->layers - m->d.dense_layers;
    return n > 0 ? (double)n : 0.0;
}

static double dt_emb_params(const model_t *m)
{
    double h = (double)m->hidden;
    double e = (double)m->vocab * h;
    if (m->d.position == MODEL_POS_LEARNED)
        e += (double)m->seq_len * h;
    if (m->d.untied_embeddings)
        e += (double)m->vocab * h;
    return e;
}

void detailed_params(const model_t *m, const task_detailed_t *t, double *total,
                     double *per_device)
{
    double h = (double)m->hidden, mats = dt_mlp_mats(m);
    double dense_mlp = mats * h * (double)m->ffn;
    double expert = mats * h * dt_expert_ffn(m);
    double moe_l = dt_moe_layers(m), dense_l = (double)m->layers - moe_l;
    double shared = (double)m->d.shared_experts * expert +
                    h * (double)m->d.experts; /* router */
    double attn = dt_attn_params(m);
    double tot = (double)m->layers * attn + dense_l * dense_mlp +
                 moe_l * (shared + (double)m->d.experts * expert) +
                 dt_emb_params(m);
    *total = tot;
    double tp = (double)(t->tp > 0 ? t->tp : 1), pp = (double)(t->pp > 0 ? t->pp : 1);
    double ep = (double)(t->ep > 0 ? t->ep : 1);
    double per = ((double)m->layers * attn + dense_l * dense_mlp +
                  moe_l * (shared + (double)m->d.experts * expert / ep)) /
                 (tp * pp);
    double emb = (double)m->vocab * h / tp;
    if (m->d.position == MODEL_POS_LEARNED)
        emb += (double)m->seq_len * h / tp;
    if (pp <= 1.0 && m->d.untied_embeddings)
        emb += (double)m->vocab * h / tp;
    *per_device = per + emb;
}

double detailed_model_flops(const model_t *m, bool causal_half)
{
    double h = (double)m->hidden, s = (double)m->seq_len;
    double mats = dt_mlp_mats(m), moe_l = dt_moe_layers(m);
    double dense_l = (double)m->layers - moe_l;
    double attn = dt_attn_params(m);
    double active_expert = (double)(dt_top_k(m) + m->d.shared_experts) * mats *
                           h * dt_expert_ffn(m);
    double per_token = 2.0 * ((double)m->layers * attn +
                              dense_l * mats * h * (double)m->ffn +
                              moe_l * active_expert + (double)m->vocab * h);
    double core = 4.0 * s * h * (double)m->layers * (causal_half && m->causal ? 0.5 : 1.0);
    return s * (per_token + core);
}

/* ------------------------------------------------------------ check */

static status_code dt_check_dlrm(const point_t *p, const char **where);

static status_code dt_check(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    dt_deg d;
    if (m->kind == MODEL_DLRM)
        return dt_check_dlrm(p, where);
    if (m->kind != MODEL_LLM) {
        *where = "model";
        return STATUS_INVALID_FIDELITY;
    }
    if (t->frozen_layers < 0 || t->frozen_layers > m->layers ||
        (p->task.kind != TASK_FINETUNE && (t->frozen_layers > 0 || p->task.freeze_emb))) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->ffn < 1 ||
        m->seq_len < 1 || m->vocab < 0 || m->kv_heads < 0 ||
        m->hidden % m->heads != 0 ||
        (m->kv_heads > 0 && m->heads % m->kv_heads != 0) ||
        m->d.experts < 0 || m->d.top_k < 0 ||
        (m->d.experts > 0 && dt_top_k(m) > m->d.experts) ||
        m->d.dense_layers < 0 || m->d.shared_experts < 0) {
        *where = "model";
        return STATUS_INVALID_VALUE;
    }
    if (t->tp < 0 || t->pp < 0 || t->dp < 0 || t->cp < 0 || t->ep < 0 ||
        t->vpp < 0 || t->zero_stage < 0 || t->zero_stage > 3 ||
        t->micro_batch < 0 || t->global_batch < 0 || t->grad_accum < 0 ||
        t->dtype < 0 || t->dtype >= HW_NDTYPES || !(t->capacity_factor >= 0) ||
        !(t->grad_reduce_bytes >= 0) || t->prompt_tokens < 0 ||
        t->decode_tokens < 0 ||
        (p->task.kind == TASK_INFERENCE && t->decode_tokens < 1)) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    dt_degrees(p, &d);
    if (d.tp * d.pp * d.dp * d.cp != p->system.devices) {
        *where = "task";
        return STATUS_INVALID_PRODUCT;
    }
    if (t->layout < 0 || t->layout > 24 || t->shard_degree < 0 ||
        (t->shard_degree > 0 && ((d.dp * d.cp) % t->shard_degree != 0 ||
                                 t->shard_degree % d.ep != 0))) {
        *where = "task";
        return STATUS_INVALID_STRATEGY;
    }
    if (d.ep > 1 && (m->d.experts == 0 || (d.dp * d.cp) % d.ep != 0 ||
                     m->d.experts % d.ep != 0)) {
        *where = "task";
        return STATUS_INVALID_STRATEGY;
    }
    return STATUS_OK;
}

/* ------------------------------------------------------------ run */

typedef struct dt_layer {
    double fwd, bwd;        /* per micro-batch, incl. recomputation */
    double comp_fwd, comp_bwd;
    double tp_comm, a2a, cp_comm; /* per pass */
    double grad_sync;       /* ZeRO 0-2: this layer's gradient collective */
    double zero3_ag, zero3_rs;
    /* ZeRO 3 with overlap: what the one-layer-ahead prefetch cannot hide
     * at the ends of each chain (first layer's all-gather of a forward,
     * of a backward; last reduce-scatter of the iteration) */
    double z3_fhead, z3_bhead, z3_tail;
    double params;          /* per device */
} dt_layer;

typedef struct dt_ctx {
    const point_t *p;
    const model_t *m;
    const task_detailed_t *t;
    const hw_t *hw;
    const topo_t *topo;
    dt_deg d;
    hw_dtype dt;
    double ab;     /* activation bytes */
    double gbytes; /* gradient bytes reduced */
    double tok;    /* tokens per device per micro-batch */
    double seq;    /* sequence (training) or prompt (inference) per cp rank */
    double kv_len; /* keys each query attends over: the whole sequence */
    int64_t stride[4];   /* per dimension (DT_TP...): devices between members */
    int64_t s_dpcp;      /* stride of the dp x cp group */
    int64_t zs;          /* ZeRO shard group size (hybrid sharding) */
    int64_t dpcp;
} dt_ctx;

static double dt_coll(const dt_ctx *c, topo_coll k, int64_t n, int64_t stride,
                      double bytes)
{
    return topo_coll_time(c->topo, k, n, stride, bytes);
}

static double dt_gemm(const dt_ctx *c, double m, double n, double k, double batch)
{
    return hw_gemm_time(c->hw, c->dt, m, n, k, batch);
}

/* Backward of a layer in fine-tuning: trained (data and weight
 * gradients), frozen under something trained (data gradients only), or
 * frozen with nothing trained below it (no backward at all). */
enum { DT_TRAIN = 0, DT_DGRAD = 1, DT_NOBWD = 2 };

/* Cost of one layer; `moe` selects the MoE MLP, `mode` its backward. */
static void dt_layer_cost(const dt_ctx *c, bool moe, bool training, int mode,
                          dt_layer *L)
{
    const model_t *m = c->m;
    const hw_t *hw = c->hw;
    double tp = (double)c->d.tp, T = c->tok, h = (double)m->hidden;
    double a = (double)m->heads, dh = h / a;
    double kv = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);
    double at = a / tp, kvt = kv >= tp ? kv / tp : 1.0;
    double mats = dt_mlp_mats(m), ab = c->ab, ov = hw->kernel_overhead_s;
    bool sp = c->t->sequence_parallel && c->d.tp > 1;
    memset(L, 0, sizeof *L);

    /* GEMMs */
    double g = dt_gemm(c, T, (at + 2.0 * kvt) * dh, h, 1) + dt_gemm(c, T, h, at * dh, 1);
    double params = (h * (at + 2.0 * kvt) * dh + at * dh * h);
    double ffn_t = (double)m->ffn / tp;
    double a2a = 0.0;
    if (!moe) {
        g += dt_gemm(c, T, (mats - 1.0) * ffn_t, h, 1) + dt_gemm(c, T, h, ffn_t, 1);
        params += mats * h * ffn_t;
    } else {
        double E = (double)m->d.experts, ep = (double)c->d.ep;
        double fe = dt_expert_ffn(m) / tp, k = (double)dt_top_k(m);
        double local = E / ep;
        double rows = T * k * c->d.cf / local; /* tokens per local expert */
        g += dt_gemm(c, T, E, h, 1);          /* router */
        g += dt_gemm(c, rows, (mats - 1.0) * fe, h, local) +
             dt_gemm(c, rows, h, fe, local);
        params += local * mats * h * fe + h * E;
        if (m->d.shared_experts > 0) {
            double fs = (double)m->d.shared_experts * fe;
            g += dt_gemm(c, T, (mats - 1.0) * fs, h, 1) + dt_gemm(c, T, h, fs, 1);
            params += mats * h * fs;
        }
        if (c->d.ep > 1) {
            double bytes = T * k * c->d.cf * h * ab / (sp ? tp : 1.0);
            a2a = 2.0 * dt_coll(c, TOPO_ALLTOALL, c->d.ep, c->s_dpcp, bytes);
        }
    }
    L->params = params;

    /* attention core */
    double s = c->kv_len, mbat = (double)c->d.mb;
    double attn_f, attn_b, attn_elem_f = 0.0, attn_elem_b = 0.0;
    if (c->t->attention == TASK_ATTENTION_FLASH) {
        double fl = 4.0 * mbat * at * c->seq * s * dh * (m->causal ? 0.5 : 1.0);
        double peak = hw->peak_flops[c->dt] > 0 ? hw->peak_flops[c->dt]
                                                : hw->peak_flops[HW_BF16];
        attn_f = fl / (peak * hw->attention_efficiency) + ov;
        attn_b = 2.5 * (attn_f - ov) + ov;
    } else {
        double batch = mbat * at;
        attn_f = dt_gemm(c, c->seq, s, dh, batch) + dt_gemm(c, c->seq, dh, s, batch);
        attn_b = 2.0 * attn_f;
        double el = batch * c->seq * s;
        attn_elem_f = hw_mem_time(hw, el * (4.0 * ab + 1.0)) + 3.0 * ov;
        attn_elem_b = hw_mem_time(hw, el * (5.0 * ab + 1.0)) + 3.0 * ov;
    }
    if (c->d.cp > 1) {
        double kvb = 2.0 * T * kvt * dh * ab;
        double ring = (double)(c->d.cp - 1) *
                      dt_coll(c, TOPO_P2P, 2, c->stride[DT_CP], kvb);
        L->cp_comm = ring;
        if (ring > attn_f)
            attn_f = ring;
        if (2.0 * ring > attn_b)
            attn_b = 2.0 * ring;
    }

    /* memory-bound kernels */
    double rep = 11.0 * T * h * ab / (sp ? tp : 1.0);
    double act = (mats == 3.0 ? 3.0 : 2.0) * T * ffn_t * ab;
    if (moe)
        act = (mats == 3.0 ? 3.0 : 2.0) * T * (double)dt_top_k(m) * c->d.cf *
              dt_expert_ffn(m) / tp * ab;
    if (m->d.position == MODEL_POS_ROPE)
        act += 2.0 * T * (at + kvt) * dh * ab;
    double elem_f = hw_mem_time(hw, rep + act) + 8.0 * ov;

    /* tensor parallel collectives per pass */
    double tpc = 0.0;
    if (c->d.tp > 1) {
        double bytes = T * h * ab;
        int64_t st = c->stride[DT_TP];
        tpc = sp ? 2.0 * (dt_coll(c, TOPO_ALLGATHER, c->d.tp, st, bytes) +
                          dt_coll(c, TOPO_REDUCESCATTER, c->d.tp, st, bytes))
                 : 2.0 * dt_coll(c, TOPO_ALLREDUCE, c->d.tp, st, bytes);
    }
    L->tp_comm = tpc;
    L->a2a = a2a;
    /* with TP overlap (userbuffers-style pipelined GEMM + collective) only
     * what exceeds the layer's GEMMs stays exposed */
    double tpx = c->t->overlap_tp_comm ? fmax(0.0, tpc - g) : tpc;

    L->comp_fwd = g + attn_f + attn_elem_f + elem_f;
    L->fwd = L->comp_fwd + tpx + a2a;
    if (!training)
        return;
    if (mode == DT_NOBWD) {
        /* frozen, nothing trained below: forward only (ZeRO 3 still
         * gathers the parameters for it) */
        if (c->d.zero >= 3) {
            int64_t zs = c->zs;
            L->zero3_ag = dt_coll(c, TOPO_ALLGATHER, zs, c->s_dpcp, params * ab);
            L->z3_fhead = c->t->overlap_dp_comm ? fmin(L->zero3_ag, L->fwd) : 0.0;
            if (!c->t->overlap_dp_comm)
                L->fwd += L->zero3_ag;
            else if (L->zero3_ag > L->fwd)
                L->fwd = L->zero3_ag;
        }
        return;
    }
    /* data gradients always; weight gradients when trained */
    double gb = mode == DT_DGRAD ? g : 2.0 * g;
    L->comp_bwd = gb + attn_b + attn_elem_b + 2.0 * elem_f;
    L->bwd = L->comp_bwd + (c->t->overlap_tp_comm ? fmax(0.0, tpc - gb) : tpc) + a2a;
    if (c->t->recompute == TASK_RECOMPUTE_FULL) {
        L->comp_bwd += L->comp_fwd;
        L->bwd += L->fwd;
    } else if (c->t->recompute == TASK_RECOMPUTE_SELECTIVE) {
        L->comp_bwd += attn_f + attn_elem_f;
        L->bwd += attn_f + attn_elem_f;
    }

    /* data-parallel traffic of this layer's parameters */
    double expert_part = 0.0;
    if (moe) {
        double fe = dt_expert_ffn(m) / tp;
        expert_part = (double)m->d.experts / (double)c->d.ep * mats * h * fe;
    }
    double dense_part = params - expert_part;
    double gscale = mode == DT_DGRAD ? 0.0 : 1.0; /* frozen: no gradients */
    int64_t edp = c->dpcp / c->d.ep, es = c->s_dpcp * c->d.ep;
    int64_t zs = c->zs, zse = zs / c->d.ep > 0 ? zs / c->d.ep : 1;
    if (c->d.zero >= 3) {
        /* shard group: zs ranks (hybrid sharding: zs < dp cp) */
        L->zero3_ag = dt_coll(c, TOPO_ALLGATHER, zs, c->s_dpcp, dense_part * ab) +
                      dt_coll(c, TOPO_ALLGATHER, zse, es, expert_part * ab);
        L->zero3_rs =
            gscale * (dt_coll(c, TOPO_REDUCESCATTER, zs, c->s_dpcp, dense_part * c->gbytes) +
                      dt_coll(c, TOPO_REDUCESCATTER, zse, es, expert_part * c->gbytes));
        if (c->t->overlap_dp_comm) {
            /* chains of per-layer max(compute, comm) miss their ends:
             * the first gather (or, comm-bound, the last compute) */
            L->z3_fhead = fmin(L->zero3_ag, L->fwd);
            L->z3_bhead = fmin(L->zero3_ag, L->bwd);
            L->z3_tail = fmin(L->zero3_rs, L->bwd);
            if (L->zero3_ag > L->fwd)
                L->fwd = L->zero3_ag;
            if (L->zero3_ag + L->zero3_rs > L->bwd)
                L->bwd = L->zero3_ag + L->zero3_rs;
        } else {
            L->fwd += L->zero3_ag;
            L->bwd += L->zero3_ag + L->zero3_rs;
        }
    } else if (mode == DT_TRAIN) {
        if (c->d.zero == 0) {
            L->grad_sync = dt_coll(c, TOPO_ALLREDUCE, c->dpcp, c->s_dpcp, dense_part * c->gbytes) +
                           dt_coll(c, TOPO_ALLREDUCE, edp, es, expert_part * c->gbytes);
        } else {
            L->grad_sync =
                dt_coll(c, TOPO_REDUCESCATTER, zs, c->s_dpcp, dense_part * c->gbytes) +
                dt_coll(c, TOPO_REDUCESCATTER, zse, es, expert_part * c->gbytes);
        }
    }
    /* hybrid sharding: the shards' gradients are all-reduced across the
     * replicas (once per iteration, with the last backward) */
    if (mode == DT_TRAIN && c->d.zero >= 1 && zs < c->dpcp) {
        int64_t reps = c->dpcp / zs;
        L->grad_sync += dt_coll(c, TOPO_ALLREDUCE, reps, c->s_dpcp * zs,
                                params * c->gbytes / (double)zs);
    }
}

/* Activation bytes of one layer for one micro-batch stored under
 * recompute mode `rc` (Korthikanti: the coefficients count 16-bit
 * activations; 32-bit ones (fp32, tf32) take twice the bytes). */
static double dt_act_bytes(const dt_ctx *c, task_recompute rc)
{
    double s = c->seq, b = (double)c->d.mb, h = (double)c->m->hidden;
    double a = (double)c->m->heads, t = (double)c->d.tp;
    double w = c->ab / 2.0;
    bool sp = c->t->sequence_parallel && c->d.tp > 1;
    if (rc == TASK_RECOMPUTE_FULL)
        return w * 2.0 * s * b * h / (sp ? t : 1.0);
    double base = s * b * h * (sp ? 34.0 / t : 10.0 + 24.0 / t);
    if (rc == TASK_RECOMPUTE_NONE && c->t->attention == TASK_ATTENTION_UNFUSED)
        base += 5.0 * a * s * c->kv_len * b / t;
    return w * base;
}

/* Frozen layers of [lo, hi): the first `frozen` layers of the model are
 * frozen; out: those below moe_from (dense) and from it (MoE). */
static void dt_frozen_in(int64_t lo, int64_t hi, int64_t frozen, int64_t moe_from,
                         double *fd, double *fm)
{
    int64_t f = hi < frozen ? hi : frozen;
    int64_t d_hi = f < moe_from ? f : moe_from;
    int64_t m_lo = lo > moe_from ? lo : moe_from;
    *fd = (double)(d_hi > lo ? d_hi - lo : 0);
    *fm = (double)(f > m_lo ? f - m_lo : 0);
}

static status_code dt_run_dlrm(const point_t *p, engine *e, result_t *r);

static status_code dt_run(const point_t *p, engine *e, result_t *r)
{
    if (p->model.kind == MODEL_DLRM)
        return dt_run_dlrm(p, e, r);
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
    (void)dt_is_moe_layer;

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

/* ------------------------------------------------------------ DLRM */

int detailed_emb_sharding_parse(const char *s)
{
    static const char *const n[] = {"table", "row", "column"};
    int v = dt_lookup(s, n, 3);
    return v < 0 ? -1 : v + 1;
}

int detailed_emb_optimizer_parse(const char *s)
{
    static const char *const n[] = {"rowwise_adagrad", "sgd", "adagrad", "adam"};
    return dt_lookup(s, n, 4);
}

static const char *dt_sharding_name(int s)
{
    return s == TASK_EMB_ROW ? "row" : s == TASK_EMB_COLUMN ? "column" : "table";
}

static const char *dt_emb_opt_name(int o)
{
    static const char *const n[] = {"rowwise_adagrad", "sgd", "adagrad", "adam"};
    return o >= 0 && o < 4 ? n[o] : "?";
}

int64_t detailed_dlrm_column_shards(const model_t *m, const task_detailed_t *t,
                                    int64_t devices)
{
    if (t->emb_column_shards > 0)
        return t->emb_column_shards;
    for (int64_t c = 1; c < m->emb_dim; c++)
        if (m->emb_dim % c == 0 && m->tables * c >= devices)
            return c;
    return m->emb_dim;
}

void detailed_dlrm_shard(const model_t *m, const task_detailed_t *t, int64_t devices,
                         double batch, detailed_dlrm_emb *s)
{
    double T = (double)m->tables, R = (double)m->rows_per_table;
    double D = (double)m->emb_dim, L = (double)m->pooling, N = (double)devices;
    double sv;
    memset(s, 0, sizeof *s);
    s->id_copies = 1.0;
    switch (t->emb_sharding) {
    case TASK_EMB_ROW:
        s->shards = T;
        s->width = D;
        s->rows = ceil(R / N);
        s->lookups = T * batch * L / N;
        s->outputs = T * batch;
        break;
    case TASK_EMB_COLUMN: {
        double c = (double)detailed_dlrm_column_shards(m, t, devices);
        s->shards = ceil(T * c / N);
        s->width = D / c;
        s->rows = R;
        s->lookups = s->shards * batch * L;
        s->outputs = s->shards * batch;
        s->id_copies = c;
        break;
    }
    default:
        s->shards = ceil(T / N);
        s->width = D;
        s->rows = R;
        s->lookups = s->shards * batch * L;
        s->outputs = s->shards * batch;
        break;
    }
    sv = t->emb_optimizer == TASK_EMB_OPT_SGD       ? 0.0
         : t->emb_optimizer == TASK_EMB_OPT_ADAGRAD ? s->width
         : t->emb_optimizer == TASK_EMB_OPT_ADAM    ? 2.0 * s->width
                                                    : 1.0;
    s->state_values = sv;
}

static double dt_dlrm_ebytes(const model_t *m)
{
    return m->bytes_per_emb_param > 0 ? (double)m->bytes_per_emb_param : 4.0;
}

/* Width of the top MLP's input: the bottom output and the pairwise dots
 * of the tables + 1 vectors. */
static double dt_dlrm_top_in(const model_t *m)
{
    double T = (double)m->tables;
    return (double)m->emb_dim + T * (T + 1.0) / 2.0;
}

void detailed_dlrm_params(const model_t *m, double *bot, double *top, double *emb)
{
    double b = 0.0, t = 0.0, in = dt_dlrm_top_in(m);
    for (int i = 0; i + 1 < m->d.bot_n; i++)
        b += (double)m->d.bot_mlp[i] * (double)m->d.bot_mlp[i + 1] + (double)m->d.bot_mlp[i + 1];
    for (int j = 0; j < m->d.top_n; j++) {
        double out = (double)m->d.top_mlp[j];
        t += in * out + out;
        in = out;
    }
    *bot = b;
    *top = t;
    *emb = (double)m->tables * (double)m->rows_per_table * (double)m->emb_dim;
}

static status_code dt_check_dlrm(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const task_t *k = &p->task;
    bool bad = m->tables < 1 || m->rows_per_table < 1 || m->emb_dim < 1 ||
               m->pooling < 1 || m->bytes_per_emb_param < 0 || m->d.bot_n < 2 ||
               m->d.bot_n > MODEL_MLP_MAX || m->d.top_n < 1 ||
               m->d.top_n > MODEL_MLP_MAX;
    for (int i = 0; !bad && i < m->d.bot_n; i++)
        bad = m->d.bot_mlp[i] < 1;
    for (int i = 0; !bad && i < m->d.top_n; i++)
        bad = m->d.top_mlp[i] < 1;
    if (bad || m->d.bot_mlp[m->d.bot_n - 1] != m->emb_dim) {
        *where = "model";
        return STATUS_INVALID_VALUE;
    }
    if (t->dp < 0 || t->micro_batch < 0 || t->global_batch < 0 || t->grad_accum < 0 ||
        t->dtype < 0 || t->dtype >= HW_NDTYPES || !(t->grad_reduce_bytes >= 0) ||
        t->emb_sharding < 0 || t->emb_sharding > TASK_EMB_COLUMN ||
        t->emb_optimizer < 0 || t->emb_optimizer > TASK_EMB_OPT_ADAM ||
        t->emb_column_shards < 0 ||
        (t->emb_column_shards > 0 && m->emb_dim % t->emb_column_shards != 0) ||
        t->frozen_layers != 0 || k->freeze_dense ||
        (k->kind != TASK_FINETUNE &&
         (k->freeze_emb || k->freeze_bot_mlp || k->freeze_top_mlp))) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    /* MLPs data parallel, tables sharded: no tp, pp, cp, ep, ZeRO */
    if (t->tp > 1 || t->pp > 1 || t->cp > 1 || t->ep > 1 || t->vpp > 1 ||
        t->zero_stage != 0 || t->sequence_parallel || t->shard_degree > 0) {
        *where = "task";
        return STATUS_INVALID_STRATEGY;
    }
    if ((t->dp > 0 ? t->dp : 1) != p->system.devices) {
        *where = "task";
        return STATUS_INVALID_PRODUCT;
    }
    return STATUS_OK;
}

/* One MLP layer of `in` x `out` on b samples. */
typedef struct dt_mlp_layer {
    double fwd, bwd, sync, params, flops;
} dt_mlp_layer;

static void dt_mlp_cost(const hw_t *hw, hw_dtype dt, double ab, double b, double in,
                        double out, bool dgrad, bool wgrad, dt_mlp_layer *L)
{
    double ov = hw->kernel_overhead_s;
    L->params = in * out + out;
    L->fwd = hw_gemm_time(hw, dt, b, out, in, 1) + hw_mem_time(hw, 2.0 * b * out * ab) + ov;
    L->flops = 2.0 * b * in * out * (1.0 + (dgrad ? 1.0 : 0.0) + (wgrad ? 1.0 : 0.0));
    L->bwd = 0.0;
    if (dgrad || wgrad)
        L->bwd = (dgrad ? hw_gemm_time(hw, dt, b, in, out, 1) : 0.0) +
                 (wgrad ? hw_gemm_time(hw, dt, in, out, b, 1) : 0.0) +
                 hw_mem_time(hw, 3.0 * b * out * ab) + ov;
}

static status_code dt_run_dlrm(const point_t *p, engine *e, result_t *r)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const hw_t *hw = &p->system.hw;
    const topo_t *topo = &p->system.topo;
    bool training = p->task.kind != TASK_INFERENCE;
    bool ft = p->task.kind == TASK_FINETUNE;
    int64_t n = t->dp > 0 ? t->dp : 1;
    hw_dtype dt = (hw_dtype)t->dtype;
    double ab = dt == HW_FP32 || dt == HW_TF32 ? 4.0 : 2.0;
    double gbytes = t->grad_reduce_bytes > 0 ? t->grad_reduce_bytes : ab;
    double eb = dt_dlrm_ebytes(m), ov = hw->kernel_overhead_s;
    int64_t gb = t->global_batch > 0 ? t->global_batch
                                     : (t->micro_batch > 0 ? t->micro_batch : 1) * n;
    r->global_batch = gb;
    if (gb % n != 0 || (t->micro_batch > 0 && t->micro_batch * n != gb) ||
        t->grad_accum > 1)
        return STATUS_INFEASIBLE_BATCH;
    double B = (double)gb, b = B / (double)n;
    bool emb_train = training && !(ft && p->task.freeze_emb);
    bool bot_train = training && !(ft && p->task.freeze_bot_mlp);
    bool top_train = training && !(ft && p->task.freeze_top_mlp);
    bool below = emb_train || bot_train; /* interaction needs a backward */
    task_detailed_t ts = *t;
    if (ts.emb_sharding == TASK_EMB_NONE)
        ts.emb_sharding = TASK_EMB_TABLE;
    detailed_dlrm_emb s;
    detailed_dlrm_shard(m, &ts, n, B, &s);
    double T = (double)m->tables, D = (double)m->emb_dim, F = T + 1.0;

    /* ---- memory */
    double bot_p, top_p, emb_p;
    detailed_dlrm_params(m, &bot_p, &top_p, &emb_p);
    double mlp_train = (bot_train ? bot_p : 0.0) + (top_train ? top_p : 0.0);
    double wb = ab > 2.0 ? 4.0 : 2.0;
    double table_bytes = s.shards * s.rows * s.width * eb;
    double weights = wb * (bot_p + top_p) + table_bytes;
    double grads = wb * mlp_train;
    double opt = (ab > 2.0 ? 8.0 : 12.0) * mlp_train +
                 (emb_train ? s.shards * s.rows * s.state_values * 4.0 : 0.0);
    double acts = b * (double)m->d.bot_mlp[0] * ab;
    for (int i = 1; i < m->d.bot_n; i++)
        acts += b * (double)m->d.bot_mlp[i] * ab;
    for (int j = 0; j < m->d.top_n; j++)
        acts += b * (double)m->d.top_mlp[j] * ab;
    acts += b * (F * D + F * (F - 1.0) / 2.0) * ab;  /* interaction in and out */
    acts += (s.outputs * s.width + b * T * D) * eb;  /* pooled: sent, received */
    r->mem_weights_bytes_per_device = weights;
    r->mem_grads_bytes_per_device = grads;
    r->mem_optimizer_bytes_per_device = opt;
    r->mem_activations_bytes_per_device = acts;
    r->mem_total_bytes_per_device = weights + grads + opt + acts;
    if (r->mem_total_bytes_per_device > hw->mem_capacity_bytes)
        return STATUS_INFEASIBLE_MEMORY;

    /* ---- embeddings: gathers, pooled exchange, sparse update */
    double pooled = s.outputs * s.width * eb;
    double lookup = hw_mem_time(hw, (s.lookups + s.outputs) * s.width * eb) + ov;
    double update = emb_train ? hw_mem_time(hw, s.outputs * s.width * eb +
                                                    s.lookups * (2.0 * s.width * eb +
                                                                 2.0 * 4.0 * s.state_values)) +
                                    ov
                              : 0.0;
    double ids = topo_coll_time(topo, TOPO_ALLTOALL, n, 1,
                                T * b * (double)m->pooling * 4.0 * s.id_copies);
    bool row = ts.emb_sharding == TASK_EMB_ROW;
    double pool_f = row ? topo_coll_time(topo, TOPO_REDUCESCATTER, n, 1, pooled)
                        : topo_coll_time(topo, TOPO_ALLTOALL, n, 1, pooled);
    double pool_b = !emb_train ? 0.0
                    : row      ? topo_coll_time(topo, TOPO_ALLGATHER, n, 1, pooled)
                               : topo_coll_time(topo, TOPO_ALLTOALL, n, 1, pooled);

    /* ---- MLPs and the dot interaction */
    dt_mlp_layer bl[MODEL_MLP_MAX], tl[MODEL_MLP_MAX];
    double flops = 0.0, fwd_c = 0.0, bwd_c = 0.0;
    for (int i = 0; i + 1 < m->d.bot_n; i++) {
        /* no data gradient into the dense features; nothing trained
         * below a frozen bottom MLP */
        dt_mlp_cost(hw, dt, ab, b, (double)m->d.bot_mlp[i], (double)m->d.bot_mlp[i + 1],
                    bot_train && i > 0, bot_train, &bl[i]);
        flops += bl[i].flops;
        fwd_c += bl[i].fwd;
        bwd_c += bl[i].bwd;
    }
    double in = dt_dlrm_top_in(m);
    for (int j = 0; j < m->d.top_n; j++) {
        double out = (double)m->d.top_mlp[j];
        bool dg = j == 0 ? below : (below || top_train);
        dt_mlp_cost(hw, dt, ab, b, in, out, training && dg, top_train, &tl[j]);
        flops += tl[j].flops;
        fwd_c += tl[j].fwd;
        bwd_c += tl[j].bwd;
        in = out;
    }
    double ig = hw_gemm_time(hw, dt, F, F, D, b);
    double imem = hw_mem_time(hw, b * (2.0 * F * D + F * F + F * (F - 1.0) / 2.0) * ab);
    double inter_f = ig + imem + ov;
    double inter_b = training && below ? 2.0 * (ig + imem) + ov : 0.0;
    flops += 2.0 * b * F * F * D * (1.0 + (inter_b > 0 ? 2.0 : 0.0));
    double dense_opt = training ? hw_mem_time(hw, 30.0 * mlp_train) : 0.0;

    /* ---- the iteration on the two streams: ids exchanged, lookups,
     * pooled exchange overlapped with the bottom MLP, interaction, top
     * MLP; backward with per-layer gradient all-reduces on the comm
     * stream, the pooled gradients' exchange, the sparse update */
    engine_reset(e);
    if (engine_reserve(e, (size_t)(4 * MODEL_MLP_MAX + 16)) != 0)
        return STATUS_NOMEM;
    engine_label lab = {ENGINE_PART_EMB, ENGINE_OP_ALL2ALL, 0, -1};
    engine_ev ev_ids = engine_add(e, ENGINE_COMM, ids, NULL, 0, lab);
    lab.op = ENGINE_OP_COMPUTE;
    engine_ev ev_lk = engine_add(e, ENGINE_COMP, lookup, &ev_ids, 1, lab);
    lab.op = row ? ENGINE_OP_WG_RS : ENGINE_OP_ALL2ALL;
    engine_ev ev_pool = engine_add(e, ENGINE_COMM, pool_f, &ev_lk, 1, lab);
    lab.part = ENGINE_PART_MLPBOT;
    lab.op = ENGINE_OP_COMPUTE;
    engine_ev last = ENGINE_NONE, lastc = ENGINE_NONE;
    for (int i = 0; i + 1 < m->d.bot_n; i++) {
        lab.layer = i;
        last = engine_add(e, ENGINE_COMP, bl[i].fwd, NULL, 0, lab);
    }
    lab.part = ENGINE_PART_MLPTOP;
    lab.layer = -1;
    last = engine_add(e, ENGINE_COMP, inter_f, &ev_pool, 1, lab);
    for (int j = 0; j < m->d.top_n; j++) {
        lab.layer = j;
        last = engine_add(e, ENGINE_COMP, tl[j].fwd, NULL, 0, lab);
    }
    /* gradients all-reduced in buckets of at least DT_DLRM_BUCKET bytes
     * (PyTorch DDP's 25 MB), launched as the backward fills them */
    double ar_sum = 0.0, pending = 0.0;
    bool overlap = t->overlap_dp_comm;
#define DT_DLRM_BUCKET 25e6
#define DT_DLRM_FLUSH(force)                                                     \
    do {                                                                         \
        if (pending > 0 && ((force) || pending >= DT_DLRM_BUCKET)) {            \
            double ar = topo_coll_time(topo, TOPO_ALLREDUCE, n, 1, pending);     \
            ar_sum += ar;                                                        \
            pending = 0.0;                                                       \
            if (overlap) {                                                       \
                lab.op = ENGINE_OP_WG_AR;                                        \
                lastc = engine_add(e, ENGINE_COMM, ar, &last, 1, lab);           \
            }                                                                    \
        }                                                                        \
    } while (0)
    if (training) {
        lab.bwd = 1;
        for (int j = m->d.top_n - 1; j >= 0; j--) {
            lab.layer = j;
            lab.op = ENGINE_OP_COMPUTE;
            last = engine_add(e, ENGINE_COMP, tl[j].bwd, NULL, 0, lab);
            pending += top_train ? tl[j].params * gbytes : 0.0;
            DT_DLRM_FLUSH(false);
        }
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, inter_b, NULL, 0, lab);
        lab.part = ENGINE_PART_EMB;
        lab.op = row ? ENGINE_OP_ACT_AR : ENGINE_OP_ALL2ALL;
        engine_ev ev_g = engine_add(e, ENGINE_COMM, pool_b, &last, 1, lab);
        lab.part = ENGINE_PART_MLPBOT;
        for (int i = m->d.bot_n - 2; i >= 0; i--) {
            lab.layer = i;
            lab.op = ENGINE_OP_COMPUTE;
            last = engine_add(e, ENGINE_COMP, bl[i].bwd, NULL, 0, lab);
            pending += bot_train ? bl[i].params * gbytes : 0.0;
            DT_DLRM_FLUSH(i == 0);
        }
#undef DT_DLRM_FLUSH
        lab.part = ENGINE_PART_EMB;
        lab.layer = -1;
        lab.op = ENGINE_OP_COMPUTE;
        last = engine_add(e, ENGINE_COMP, update, &ev_g, 1, lab);
        lab.part = ENGINE_PART_MLPTOP;
        lab.op = ENGINE_OP_WG_AR;
        if (!overlap)
            lastc = engine_add(e, ENGINE_COMM, ar_sum, &last, 1, lab);
        engine_ev deps[2] = {last, lastc};
        lab.op = ENGINE_OP_COMPUTE;
        engine_add(e, ENGINE_COMP, dense_opt, deps, 2, lab);
    }
    double iter = engine_now(e);

    /* ---- figures */
    r->iteration_time_s = iter;
    r->throughput_samples_per_s = B / iter;
    r->compute_gemm_s = fwd_c + inter_f + (training ? bwd_c + inter_b + dense_opt : 0.0);
    r->compute_emb_s = lookup + update;
    r->comm_alltoall_s = ids + (row ? 0.0 : pool_f + pool_b);
    r->comm_reducescatter_s = row ? pool_f : 0.0;
    r->comm_allgather_s = row ? pool_b : 0.0;
    r->comm_allreduce_s = ar_sum;
    double comm = r->comm_alltoall_s + r->comm_reducescatter_s + r->comm_allgather_s +
                  r->comm_allreduce_s;
    double exposed = iter - r->compute_gemm_s - r->compute_emb_s;
    exposed = exposed < 0 ? 0 : exposed > comm ? comm : exposed;
    r->comm_exposed_s = exposed;
    r->comm_overlapped_s = comm - exposed;
    r->events_compute = e->count[ENGINE_COMP];
    r->events_comm = e->count[ENGINE_COMM];
    double peak = hw->peak_flops[dt] > 0 ? hw->peak_flops[dt] : hw->peak_flops[HW_BF16];
    r->mfu = flops / (iter * peak);
    return STATUS_OK;
}

static int64_t dt_auto_count(void);
static status_code dt_auto_apply(point_t *p, int64_t i, int64_t global_batch);

const eval_ops detailed_ops = {
    "detailed", "detailed-1", dt_check, dt_run, dt_auto_count, dt_auto_apply,
};

/* ------------------------------------------------------------ auto */

/* Candidate strategies, a mixed-radix index (innermost first): tp in
 * {1,2,4,8}, pp in {1,2,4,8,16}, cp in {1,2}, vpp in {1,2}, zero in
 * {0,1,2,3}, recompute in {none, selective, full}, micro-batch in
 * {1,2,4}, ep in {1,8}, layout in {tp-cp-dp-pp, tp-cp-pp-dp}, DP/FSDP
 * overlap on or off, sequence parallelism on or off (with tp > 1), and
 * the schedule 1F1B or GPipe; dp is what remains of the devices and
 * grad_accum what remains of the batch. A candidate that does not apply,
 * or duplicates another, is refused with an INVALID code for the sweep
 * to skip: devices or batch do not split, vpp without pp, ZeRO 2/3 with
 * pp, ep on a dense model or not dividing dp x cp, sequence parallelism
 * off without tp, GPipe without pp or with vpp. Inference takes the
 * candidates without training options (ZeRO 0, no recompute, vpp 1,
 * 1F1B, overlap, the first micro-batch) and serves the global batch
 * concurrently: micro_batch = global_batch / dp. After them come the
 * DLRM candidates (table-, row-, column-wise embeddings; see
 * DT_AUTO_DLRM), which only DLRM models take. */
static const int64_t dt_auto_tp[] = {1, 2, 4, 8};
static const int64_t dt_auto_pp[] = {1, 2, 4, 8, 16};
static const int64_t dt_auto_cp[] = {1, 2};
static const int64_t dt_auto_v[] = {1, 2};
static const int64_t dt_auto_zero[] = {0, 1, 2, 3};
static const int64_t dt_auto_mb[] = {1, 2, 4};
static const int64_t dt_auto_ep[] = {1, 8};
#define DT_N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* DLRM candidates follow the transformer ones (whose numbering they leave
 * as it was): data-parallel MLPs over all devices with table-wise,
 * row-wise or column-wise embedding sharding. */
#define DT_AUTO_DLRM 3

static int64_t dt_auto_llm_count(void)
{
    return DT_N(dt_auto_tp) * DT_N(dt_auto_pp) * DT_N(dt_auto_cp) * DT_N(dt_auto_v) *
           DT_N(dt_auto_zero) * 3 * DT_N(dt_auto_mb) * DT_N(dt_auto_ep) * 2 * 2 * 2 * 2;
}

static int64_t dt_auto_count(void)
{
    return dt_auto_llm_count() + DT_AUTO_DLRM;
}

/* Candidate i as degrees and options (dp = 0: the rest of the devices);
 * returns false when it duplicates another candidate or breaks a rule
 * that does not depend on the system or batch. */
static bool dt_auto_decode(int64_t i, bool inference, task_detailed_t *t)
{
    memset(t, 0, sizeof *t);
    if (i >= dt_auto_llm_count()) {
        t->tp = t->pp = t->cp = t->ep = t->vpp = 1;
        t->emb_sharding = TASK_EMB_TABLE + (int)(i - dt_auto_llm_count());
        t->overlap_dp_comm = true;
        t->dtype = HW_BF16;
        return true;
    }
    int64_t k = i;
#define DT_TAKE(arr) (arr)[k % DT_N(arr)]; k /= DT_N(arr)
    t->tp = DT_TAKE(dt_auto_tp);
    t->pp = DT_TAKE(dt_auto_pp);
    t->cp = DT_TAKE(dt_auto_cp);
    t->vpp = DT_TAKE(dt_auto_v);
    t->zero_stage = DT_TAKE(dt_auto_zero);
#undef DT_TAKE
    t->recompute = (task_recompute)(k % 3);
    k /= 3;
    int64_t mbi = k % DT_N(dt_auto_mb);
    t->micro_batch = dt_auto_mb[mbi];
    k /= DT_N(dt_auto_mb);
    t->ep = dt_auto_ep[k % DT_N(dt_auto_ep)];
    k /= DT_N(dt_auto_ep);
    t->layout = k % 2 ? detailed_layout_parse("tp-cp-pp-dp") : 0;
    k /= 2;
    t->overlap_dp_comm = k % 2 == 0;
    k /= 2;
    bool sp_off = k % 2 == 1;
    k /= 2;
    t->schedule = k % 2 ? TASK_SCHEDULE_GPIPE : TASK_SCHEDULE_1F1B;
    t->sequence_parallel = t->tp > 1 && !sp_off;
    t->dtype = HW_BF16;
    if ((t->pp == 1 && t->vpp > 1) || (t->pp > 1 && t->zero_stage >= 2) ||
        (sp_off && t->tp == 1) ||
        (t->schedule == TASK_SCHEDULE_GPIPE && (t->pp == 1 || t->vpp > 1)))
        return false;
    if (inference && (t->zero_stage != 0 || t->recompute != TASK_RECOMPUTE_NONE ||
                      t->vpp > 1 || t->schedule != TASK_SCHEDULE_1F1B ||
                      !t->overlap_dp_comm || mbi != 0))
        return false;
    return true;
}

static status_code dt_auto_apply(point_t *p, int64_t i, int64_t global_batch)
{
    if (i < 0 || i >= dt_auto_count() || global_batch < 1)
        return STATUS_INVALID_VALUE;
    bool inference = p->task.kind == TASK_INFERENCE;
    task_detailed_t c;
    if (!dt_auto_decode(i, inference, &c))
        return STATUS_INVALID_STRATEGY;
    int64_t dev = p->system.devices;
    bool dlrm = p->model.kind == MODEL_DLRM;
    if (dlrm != (c.emb_sharding != TASK_EMB_NONE))
        return STATUS_INVALID_STRATEGY;
    if (dlrm) {
        if (global_batch % dev != 0)
            return STATUS_INVALID_BATCH_MISMATCH;
        task_detailed_t *t = &p->task.detailed;
        t->tp = t->pp = t->cp = t->ep = t->vpp = 1;
        t->dp = dev;
        t->zero_stage = 0;
        t->sequence_parallel = false;
        t->shard_degree = 0;
        t->layout = 0;
        t->overlap_dp_comm = c.overlap_dp_comm;
        t->emb_sharding = c.emb_sharding;
        t->micro_batch = global_batch / dev;
        t->global_batch = global_batch;
        t->grad_accum = 1;
        return STATUS_OK;
    }
    if (dev % (c.tp * c.pp * c.cp) != 0)
        return STATUS_INVALID_STRATEGY;
    int64_t dp = dev / (c.tp * c.pp * c.cp);
    if (c.ep > 1 && (p->model.d.experts % c.ep != 0 || (dp * c.cp) % c.ep != 0 ||
                     p->model.d.experts == 0))
        return STATUS_INVALID_STRATEGY;
    int64_t mb = inference ? global_batch / dp : c.micro_batch;
    if (mb < 1 || global_batch % (mb * dp) != 0)
        return STATUS_INVALID_BATCH_MISMATCH;
    task_detailed_t *t = &p->task.detailed;
    t->tp = c.tp;
    t->pp = c.pp;
    t->cp = c.cp;
    t->dp = dp;
    t->ep = c.ep;
    t->vpp = c.vpp;
    t->layout = c.layout;
    t->overlap_dp_comm = c.overlap_dp_comm;
    t->shard_degree = 0;
    t->zero_stage = c.zero_stage;
    t->recompute = c.recompute;
    t->schedule = c.schedule;
    t->sequence_parallel = c.sequence_parallel;
    t->micro_batch = mb;
    t->global_batch = global_batch;
    t->grad_accum = global_batch / (mb * dp);
    return STATUS_OK;
}

/* ------------------------------------------------------------ texts */

static void dt_layout_text(int layout, bool letters, char *buf, size_t size)
{
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    int order[4];
    dt_perm(layout > 0 ? layout - 1 : 0, order);
    if (letters)
        snprintf(buf, size, "%c%c%c%c", dims[order[0]][0], dims[order[1]][0],
                 dims[order[2]][0], dims[order[3]][0]);
    else
        snprintf(buf, size, "%s-%s-%s-%s", dims[order[0]], dims[order[1]],
                 dims[order[2]], dims[order[3]]);
}

static const char *dt_recompute_short(task_recompute r)
{
    return r == TASK_RECOMPUTE_FULL ? "full" : r == TASK_RECOMPUTE_SELECTIVE ? "sel" : "none";
}

static const char *dt_schedule_text(const task_detailed_t *t)
{
    return t->schedule == TASK_SCHEDULE_GPIPE ? "gpipe"
           : t->vpp > 1                       ? "1f1b-int"
                                              : "1f1b";
}

int detailed_parallel_text(const task_detailed_t *t, char *buf, size_t size)
{
    char dp[24], v[24] = "";
    if (t->dp > 0)
        snprintf(dp, sizeof dp, "dp%lld", (long long)t->dp);
    else
        snprintf(dp, sizeof dp, "dp*");
    if (t->emb_sharding != TASK_EMB_NONE)
        return snprintf(buf, size, "%s emb-%s", dp, dt_sharding_name(t->emb_sharding));
    if (t->vpp > 1)
        snprintf(v, sizeof v, " v%lld", (long long)t->vpp);
    return snprintf(buf, size, "tp%lld%s pp%lld%s %s cp%lld ep%lld",
                    (long long)(t->tp > 0 ? t->tp : 1),
                    t->sequence_parallel && t->tp > 1 ? " sp" : "",
                    (long long)(t->pp > 0 ? t->pp : 1), v, dp,
                    (long long)(t->cp > 0 ? t->cp : 1),
                    (long long)(t->ep > 0 ? t->ep : 1));
}

int detailed_options_text(const task_detailed_t *t, char *buf, size_t size)
{
    char lay[8];
    if (t->emb_sharding != TASK_EMB_NONE)
        return snprintf(buf, size, "%s %s", dt_emb_opt_name(t->emb_optimizer),
                        t->overlap_dp_comm ? "ovl" : "noovl");
    dt_layout_text(t->layout, true, lay, sizeof lay);
    return snprintf(buf, size, "zero%lld %s %s %s %s", (long long)t->zero_stage,
                    dt_recompute_short(t->recompute), dt_schedule_text(t),
                    t->overlap_dp_comm ? "ovl" : "noovl", lay);
}

int detailed_strategy_text(const task_detailed_t *t, char *buf, size_t size)
{
    char dp[24], lay[16];
    if (t->dp > 0)
        snprintf(dp, sizeof dp, "dp%lld", (long long)t->dp);
    else
        snprintf(dp, sizeof dp, "dp*");
    if (t->emb_sharding != TASK_EMB_NONE)
        return snprintf(buf, size, "%s emb-%s %s %s", dp,
                        dt_sharding_name(t->emb_sharding), dt_emb_opt_name(t->emb_optimizer),
                        t->overlap_dp_comm ? "ovl" : "noovl");
    dt_layout_text(t->layout, false, lay, sizeof lay);
    return snprintf(buf, size,
                    "tp%lld pp%lld vpp%lld %s %s zero%lld %s %s cp%lld ep%lld "
                    "mb%lld %s %s",
                    (long long)(t->tp > 0 ? t->tp : 1),
                    (long long)(t->pp > 0 ? t->pp : 1),
                    (long long)(t->vpp > 0 ? t->vpp : 1), dt_schedule_text(t), dp,
                    (long long)t->zero_stage,
                    t->sequence_parallel && t->tp > 1 ? "sp" : "nosp",
                    dt_recompute_short(t->recompute),
                    (long long)(t->cp > 0 ? t->cp : 1),
                    (long long)(t->ep > 0 ? t->ep : 1),
                    (long long)(t->micro_batch > 0 ? t->micro_batch : 1), lay,
                    t->overlap_dp_comm ? "ovl" : "noovl");
}

int detailed_auto_candidate(int64_t i, task_detailed_t *t)
{
    if (i < 0 || i >= dt_auto_count())
        return -1;
    return dt_auto_decode(i, false, t) ? 0 : 1;
}
