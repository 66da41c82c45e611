/*
 * fidelity.c - the detailed fidelity's registry entry: its rules (check),
 * the resolved degrees, stack facts and context of an evaluation, and
 * run, which dispatches on the model kind (DLRM: dlrm.c) and for
 * transformers picks the recompute mode (auto: the least that fits,
 * memory.c), times the step (train.c, infer.c) under the nominal facts
 * and then under the fast and slow ends of their ranges (the band
 * iteration_time_lo_s .. iteration_time_hi_s).
 * A point whose stack has no name takes the idealized stack (stack.h).
 */
#include "dt.h"
#include "serve.h"

#include <math.h>
#include <string.h>

void dt_degrees(const point_t *p, dt_deg *d)
{
    const task_detailed_t *t = &p->task.detailed;
    d->tp = t->tp > 0 ? t->tp : 1;
    d->pp = t->pp > 0 ? t->pp : 1;
    d->dp = t->dp > 0 ? t->dp : 1;
    d->cp = t->cp > 0 ? t->cp : 1;
    d->ep = t->ep > 0 ? t->ep : 1;
    d->v = t->vpp > 0 ? t->vpp : 1;
    d->mb = t->micro_batch > 0                  ? t->micro_batch
            : p->stack.default_micro_batch > 0 ? p->stack.default_micro_batch
                                               : 1;
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

static status_code dt_check(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    dt_deg d;
    if (m->kind == MODEL_DLRM && p->prefill.on) {
        *where = "prefill"; /* a DLRM has no prompts to prefill apart */
        return STATUS_INVALID_VALUE;
    }
    if (m->kind == MODEL_DLRM)
        return dt_check_dlrm(p, where);
    if (m->kind != MODEL_LLM) {
        *where = "model";
        return STATUS_INVALID_FIDELITY;
    }
    if (t->frozen_layers < 0 || t->frozen_layers > m->layers ||
        (p->task.kind != TASK_FINETUNE && (t->frozen_layers > 0 || p->task.freeze_emb ||
                                            t->lora_rank > 0)) ||
        t->lora_rank < 0 || t->recompute_layers < 0 || t->fp8_recipe < 0 ||
        t->fp8_recipe > TASK_FP8_NVFP4) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->ffn < 1 ||
        m->seq_len < 1 || m->vocab < 0 || m->kv_heads < 0 ||
        m->layers > DT_MAX_COUNT || m->hidden > DT_MAX_COUNT || m->heads > DT_MAX_COUNT ||
        m->ffn > DT_MAX_COUNT || m->seq_len > DT_MAX_COUNT || m->vocab > DT_MAX_COUNT ||
        m->kv_heads > DT_MAX_COUNT || m->d.experts > DT_MAX_COUNT ||
        m->d.top_k > DT_MAX_COUNT || m->d.expert_ffn < 0 || m->d.expert_ffn > DT_MAX_COUNT ||
        m->d.shared_experts > DT_MAX_COUNT || m->d.dense_layers > m->layers ||
        (m->d.head_dim <= 0 && m->hidden % m->heads != 0) || m->d.head_dim < 0 ||
        m->d.head_dim > DT_MAX_COUNT ||
        (m->kv_heads > 0 && m->heads % m->kv_heads != 0) ||
        m->d.experts < 0 || m->d.top_k < 0 ||
        (m->d.experts > 0 && dt_top_k(m) > m->d.experts) ||
        m->d.dense_layers < 0 || m->d.shared_experts < 0 ||
        m->d.q_lora_rank < 0 || m->d.kv_lora_rank < 0 || m->d.qk_nope_head_dim < 0 ||
        m->d.qk_rope_head_dim < 0 || m->d.v_head_dim < 0 ||
        m->d.q_lora_rank > DT_MAX_COUNT || m->d.kv_lora_rank > DT_MAX_COUNT ||
        m->d.qk_nope_head_dim > DT_MAX_COUNT || m->d.qk_rope_head_dim > DT_MAX_COUNT ||
        m->d.v_head_dim > DT_MAX_COUNT || m->d.mtp_layers < 0 ||
        m->d.mtp_layers > DT_MAX_COUNT ||
        (m->d.kv_lora_rank > 0 && (m->d.qk_nope_head_dim + m->d.qk_rope_head_dim < 1 ||
                                   m->d.v_head_dim < 1))) {
        *where = "model";
        return STATUS_INVALID_VALUE;
    }
    if (p->stack.name[0] && !p->stack.checked) { /* loaded stacks: checked then */
        const char *bad = NULL;
        if (stack_check(&p->stack, &bad) != STATUS_OK) {
            *where = "stack";
            return STATUS_INVALID_VALUE;
        }
    }
    if (p->task.kind != TASK_INFERENCE && p->stack.serving_only) {
        *where = "stack"; /* a serving engine does not train */
        return STATUS_INVALID_VALUE;
    }
    if (p->task.kind == TASK_INFERENCE &&
        ((p->stack.name[0] && !p->stack.serving) || t->scheduler < 0 || t->scheduler > 1 ||
         t->concurrency < TASK_CONC_SLA || t->concurrency > DT_MAX_BATCH ||
         !(t->request_rate >= 0.0 && t->request_rate <= 1e9) || t->requests < 0 ||
         t->requests > DT_MAX_BATCH || t->kv_dtype < 0 ||
         t->kv_dtype > HW_NDTYPES || t->weight_dtype < 0 || t->weight_dtype > TASK_W_FP4 || !(t->ttft_max_s >= 0.0 && t->ttft_max_s <= 3600.0) ||
         !(t->tpot_max_s >= 0.0 && t->tpot_max_s <= 3600.0) || t->spec_tokens < 0 ||
         t->spec_tokens > 64 || !(t->spec_acceptance >= 0.0 && t->spec_acceptance <= 1.0) ||
         !(t->spec_draft_cost >= 0.0 && t->spec_draft_cost <= 10.0) || t->attn_dp < 0 ||
         (t->attn_dp > 1 && (t->tp < 1 || t->tp % t->attn_dp != 0)))) {
        *where = p->stack.name[0] && !p->stack.serving ? "stack" : "task";
        return STATUS_INVALID_VALUE;
    }
    if ((int)t->recompute < 0 || (int)t->recompute > TASK_RECOMPUTE_AUTO ||
        t->attention < TASK_ATTENTION_STACK || t->attention > TASK_ATTENTION_TUNED ||
        t->overlap_tp_comm < -1 || t->overlap_tp_comm > 1 || t->moe_flex_dispatch < -1 ||
        t->moe_flex_dispatch > 1 || t->moe_a2a_overlap < -1 || t->moe_a2a_overlap > 1 ||
        t->compiled < -1 || t->compiled > 1) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    if (t->tp < 0 || t->pp < 0 || t->dp < 0 || t->cp < 0 || t->ep < 0 ||
        t->vpp < 0 || t->zero_stage < 0 || t->zero_stage > 3 ||
        t->micro_batch < 0 || t->global_batch < 0 || t->grad_accum < 0 ||
        t->dtype < 0 || t->dtype >= HW_NDTYPES || !(t->capacity_factor >= 0) ||
        !(t->grad_reduce_bytes >= 0) || t->prompt_tokens < 0 ||
        t->decode_tokens < 0 ||
        (p->task.kind == TASK_INFERENCE && t->decode_tokens < 1) ||
        t->tp > DT_MAX_DEGREE || t->pp > DT_MAX_DEGREE || t->dp > DT_MAX_DEGREE ||
        t->cp > DT_MAX_DEGREE || t->ep > DT_MAX_DEGREE || t->vpp > DT_MAX_DEGREE ||
        t->micro_batch > DT_MAX_BATCH || t->global_batch > DT_MAX_BATCH ||
        t->grad_accum > DT_MAX_BATCH || t->prompt_tokens > DT_MAX_COUNT ||
        t->decode_tokens > DT_MAX_COUNT || t->shard_degree > DT_MAX_DEGREE ||
        t->frozen_layers > DT_MAX_COUNT || !(t->capacity_factor <= 1024.0) ||
        !(t->grad_reduce_bytes <= 64.0) || p->stack.default_micro_batch > DT_MAX_BATCH) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    /* the products the evaluation forms, checked before it forms them */
    {
        int64_t tp = t->tp > 0 ? t->tp : 1, pp = t->pp > 0 ? t->pp : 1;
        int64_t dp = t->dp > 0 ? t->dp : 1, cp = t->cp > 0 ? t->cp : 1;
        int64_t v = t->vpp > 0 ? t->vpp : 1, mb = t->micro_batch > 0 ? t->micro_batch : 1;
        int64_t ga = t->grad_accum > 0 ? t->grad_accum : 1, x;
        if (!dt_mul_ok(tp, pp, DT_MAX_BATCH, &x) || !dt_mul_ok(x, dp, DT_MAX_BATCH, &x) ||
            !dt_mul_ok(x, cp, DT_MAX_BATCH, &x) || !dt_mul_ok(pp, v, DT_MAX_COUNT, &x) ||
            !dt_mul_ok(mb, dp, DT_MAX_BATCH, &x) || !dt_mul_ok(x, ga, DT_MAX_BATCH, &x) ||
            !dt_mul_ok(dp, cp, DT_MAX_BATCH, &x) ||
            (t->ep > 0 && !dt_mul_ok(dp * cp, t->ep, DT_MAX_BATCH, &x))) {
            *where = "task";
            return STATUS_INVALID_VALUE;
        }
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
    if (p->prefill.on) {
        status_code rc = sv_disagg_check(p, where);
        if (rc != STATUS_OK)
            return rc;
    }
    int64_t etp = t->etp > 0 ? t->etp : d.tp;
    if (t->etp < 0 || d.tp % etp != 0 ||
        (d.ep > 1 && (m->d.experts == 0 || (d.tp / etp * d.dp * d.cp) % d.ep != 0 ||
                      m->d.experts % d.ep != 0))) {
        *where = "task";
        return STATUS_INVALID_STRATEGY;
    }
    return STATUS_OK;
}

/* HBM passes (in units of an input's 16-bit bytes) a scaling recipe adds
 * to the stack's fused casts (Transformer Engine recipes; the stack's
 * figure is the delayed-scaling one, whose amax comes from a history):
 * current scaling must reduce the tensor's amax before it can cast, so
 * the cast leaves its producer (read 2 + write 1 byte: 0.75); blockwise
 * and MXFP8 scale locally but quantize a second, column-wise copy for
 * the backward's transposed GEMMs (one more 1-byte write: 0.5); NVFP4
 * needs the per-tensor amax, the column-wise copy and a random Hadamard
 * transform of the weight-gradient inputs (about 1.5). */
static double dt_recipe_passes(int recipe)
{
    switch (recipe) {
    case TASK_FP8_CURRENT:
        return 0.75;
    case TASK_FP8_BLOCKWISE:
    case TASK_FP8_MXFP8:
        return 0.5;
    case TASK_FP8_NVFP4:
        return 1.5;
    default:
        return 0.0;
    }
}

void dt_facts_resolve(dt_ctx *c, stack_scenario sc)
{
    const hw_t *hw = c->hw;
    const stack_desc *st = c->st;
    dt_facts *f = &c->f;
    c->scenario = sc;
    double k = sc == STACK_FAST ? 1.0 : sc == STACK_SLOW ? -1.0 : 0.0;
    f->gemm = f->attn = f->mem = 1.0 + k * hw->efficiency_uncertainty;
    f->net = 1.0 + k * hw->network_uncertainty;
    /* a run that says whether it is compiled takes that end of the
     * stack's element-wise passes (the ranges span eager to
     * torch.compile); the FP8 casts keep the stack's figure, fitted on
     * compiled runs where a stack has them */
    int cm = c->t->compiled;
    stack_scenario psc = cm == 1 ? STACK_FAST : cm == 0 ? STACK_SLOW : sc;
    f->ew_passes = stack_pick(st->elementwise_passes, psc, false);
    f->launch_s = stack_pick(st->launch_s, sc, false);
    f->fp8_cast = stack_pick(st->fp8_cast_passes, sc, false) + dt_recipe_passes(c->t->fp8_recipe);
    int tpo = c->t->overlap_tp_comm;
    f->tpo_f = tpo == 0 ? 0.0 : tpo == 1 ? 1.0 : stack_pick(st->tp_overlap_fwd, sc, true);
    f->tpo_b = tpo == 0 ? 0.0 : tpo == 1 ? 1.0 : stack_pick(st->tp_overlap_bwd, sc, true);
    f->dpo = stack_pick(c->d.zero >= 3 && st->zero3_overlap.hi > 0.0 ? st->zero3_overlap
                                                                      : st->dp_overlap,
                        sc, true);
    f->slow = stack_pick(st->comm_slowdown, sc, false);
    f->dp_bus = stack_pick(st->dp_bus_efficiency, sc, true);
    f->sel_gemm = stack_pick(st->selective_gemm_fraction, sc, false);
    f->loss_bytes = stack_pick(st->loss_bytes, sc, false);
    f->sel_block = stack_pick(st->selective_block_fraction, sc, false);
    /* a run that names its dispatcher or A2A overlap: off, or on as far
     * as the stack's overlapped schedule hides it (comm.c) */
    int ao = c->t->moe_a2a_overlap, fx = c->t->moe_flex_dispatch;
    double on = st->moe_a2a_overlap_on.hi > 0.0 ? stack_pick(st->moe_a2a_overlap_on, sc, true)
                                                : 1.0;
    f->a2a_overlap = ao == 0 ? 0.0 : ao == 1 ? on : stack_pick(st->moe_a2a_overlap, sc, true);
    f->a2a_hier = fx == 0 ? 0.0 : fx == 1 ? 1.0 : stack_pick(st->moe_hierarchical_dispatch, sc, true);
    c->dpnet.rails = st->dp_rails;
    c->dpnet.eff = f->dp_bus;
}

/* The expert grid of Megatron-Core's MoE parallel folding: the tp x cp x
 * dp ranks of a stage regrouped as etp x ep x edp, innermost first. With
 * etp = tp (the default of stacks without folding) ep lies inside dp x
 * cp, as the attention's data-parallel group. */
static void dt_expert_grid(dt_ctx *c)
{
    int64_t tp = c->d.tp, ep = c->d.ep > 0 ? c->d.ep : 1;
    int64_t etp = c->t->etp > 0 && c->t->etp <= tp ? c->t->etp : tp;
    c->etp = etp;
    if (etp == tp) {
        c->s_ep = c->s_dpcp;
        c->edp = c->dpcp / ep > 0 ? c->dpcp / ep : 1;
        c->s_edp = c->s_dpcp * ep;
        c->zse = c->zs / ep > 0 ? c->zs / ep : 1;
        return;
    }
    c->s_ep = c->stride[DT_TP] * etp;
    c->edp = tp * c->dpcp / (etp * ep) > 0 ? tp * c->dpcp / (etp * ep) : 1;
    c->s_edp = c->s_ep * ep;
    int64_t z = c->zs * tp / (etp * ep);
    c->zse = z > 0 && z <= c->edp ? z : c->edp;
}

void dt_ctx_init(dt_ctx *c, const point_t *p, stack_desc *ideal, dt_memo *memo)
{
    memset(c, 0, sizeof *c);
    memo->n = 0;
    memo->plan_mb[0] = memo->plan_mb[1] = memo->ends_mb = 0;
    memo->placed = 0;
    c->memo = memo;
    c->p = p;
    c->m = &p->model;
    c->t = &p->task.detailed;
    c->hw = &p->system.hw;
    c->topo = &p->system.topo;
    if (p->stack.name[0]) {
        c->st = &p->stack;
    } else {
        stack_ideal(ideal);
        c->st = ideal;
    }
    dt_degrees(p, &c->d);
    c->dt = (hw_dtype)c->t->dtype;
    c->ab = c->dt == HW_FP32 || c->dt == HW_TF32 ? 4.0 : 2.0;
    double sgb = c->d.zero >= 3 && c->st->zero3_grad_reduce_bytes > 0.0
                     ? c->st->zero3_grad_reduce_bytes
                     : c->st->grad_reduce_bytes;
    c->gbytes = c->t->grad_reduce_bytes > 0 ? c->t->grad_reduce_bytes
                                            : fmax(sgb, c->ab > 2.0 ? 4.0 : 0.0);
    c->dpcp = c->d.dp * c->d.cp;
    c->sp = c->t->sequence_parallel && c->d.tp > 1;
    const model_t *m = c->m;
    c->dropout = m->d.dropout >= 0 ? m->d.dropout != 0
                                   : (m->d.arch == MODEL_ARCH_GPT || m->d.arch == MODEL_ARCH_BLOOM ||
                                      m->d.arch == MODEL_ARCH_VIT);
    c->attention = c->t->attention >= 0 ? c->t->attention : c->st->attention;
    c->rc = c->t->recompute;
    double per_stage = (double)m->layers / (double)c->d.pp;
    c->rc_frac = c->t->recompute_layers > 0 && (double)c->t->recompute_layers < per_stage
                     ? (double)c->t->recompute_layers / per_stage
                     : 1.0;
    c->lora = p->task.kind == TASK_FINETUNE && c->t->lora_rank > 0;
    bool defer = c->st->zero3_pp_defer && c->d.pp > 1;
    c->z3_ag_mb = !defer;
    c->z3_reshard = c->st->zero3_reshard && !defer;
    c->z3_rs_mb = c->st->zero3_rs_every_microbatch && !defer;
    int order[4];
    int64_t deg[4] = {c->d.tp, c->d.cp, c->d.dp, c->d.pp}, acc = 1;
    dt_perm(c->t->layout > 0 ? c->t->layout - 1 : 0, order);
    for (int i = 0; i < 4; i++) {
        c->stride[order[i]] = acc;
        acc *= deg[order[i]];
    }
    c->s_dpcp = c->stride[DT_DP] < c->stride[DT_CP] || c->d.cp == 1 ? c->stride[DT_DP]
                                                                    : c->stride[DT_CP];
    if (c->d.dp == 1)
        c->s_dpcp = c->stride[DT_CP];
    c->zs = c->t->shard_degree > 0 ? c->t->shard_degree : c->dpcp;
    dt_expert_grid(c);
    bool training = p->task.kind != TASK_INFERENCE;
    c->kv_len = (double)(!training && c->t->prompt_tokens > 0 ? c->t->prompt_tokens
                                                             : m->seq_len);
    c->seq = c->kv_len / (double)c->d.cp;
    c->tok = (double)c->d.mb * c->seq;
    dt_facts_resolve(c, STACK_NOMINAL);
}

void dt_group_place(const dt_ctx *c, int g)
{
    /* each group's members and stride (dt.h's DT_G_TP ...) */
    const int64_t n[DT_GROUPS] = {c->d.tp, c->dpcp, c->zs, c->edp, c->zse};
    const int64_t s[DT_GROUPS] = {c->stride[DT_TP], c->s_dpcp, c->s_dpcp, c->s_edp, c->s_edp};
    dt_memo *mo = c->memo;
    topo_place(c->topo, n[g], s[g], g == DT_G_TP ? 0 : c->dpnet.rails, &mo->grp[g]);
    mo->placed |= 1u << g;
}

/* Usable device memory: the capacity times the task's memory_fraction. */
static double dt_capacity(const dt_ctx *c)
{
    double f = c->t->memory_fraction > 0.0 ? c->t->memory_fraction : 1.0;
    return c->hw->mem_capacity_bytes * f;
}

/* Serving rows have no gradients or optimizer states: those columns stay
 * NaN (not applicable), not zeros. */
static void dt_put_mem(result_t *r, const dt_mem *mem, double capacity, bool training)
{
    r->mem_weights_bytes_per_device = mem->weights;
    if (training) {
        r->mem_grads_bytes_per_device = mem->grads;
        r->mem_optimizer_bytes_per_device = mem->optimizer;
    }
    r->mem_activations_bytes_per_device = mem->activations;
    r->mem_kv_cache_bytes_per_device = mem->kv_cache;
    r->mem_total_bytes_per_device = mem->total;
    (void)capacity;
}

/* Memory with the recompute mode (auto: the least recomputation that
 * fits; c->rc is set to the mode taken). */
static void dt_fit_memory(dt_ctx *c, const dt_stages *st, task_recompute want, dt_mem *mem)
{
    double cap = dt_capacity(c);
    if (c->p->task.kind == TASK_INFERENCE) {
        c->rc = TASK_RECOMPUTE_NONE;
    } else if (want == TASK_RECOMPUTE_AUTO) {
        static const task_recompute modes[3] = {TASK_RECOMPUTE_NONE, TASK_RECOMPUTE_SELECTIVE,
                                                TASK_RECOMPUTE_FULL};
        for (int i = 0; i < 3; i++) {
            c->rc = modes[i];
            dt_memory(c, st, c->rc, mem);
            if (mem->total <= cap)
                return;
        }
        return;
    } else {
        c->rc = want;
    }
    dt_memory(c, st, c->rc, mem);
}

/* Micro-batches of mb sequences. */
static void dt_set_micro_batch(dt_ctx *c, int64_t mb)
{
    c->d.mb = mb;
    c->d.ga = c->d.gb / (mb * c->d.dp);
    c->tok = (double)mb * c->seq;
}

/* The fastest micro-batch (*mb) of the split in sp/st that fits, and
 * its nominal time (*t_s; 0 when none fits): with micro_batch = "auto"
 * every divisor of the replica's batch up to 64 sequences, as a tuned
 * run picks it, else the point's own. The context keeps the micro-batch
 * it tried last. */
static status_code dt_fastest_mb(dt_ctx *c, const dt_split *sp, const dt_stages *st, engine *e,
                                 dt_mem *mem, result_t *r, int64_t *mb, double *t_s)
{
    double cap = dt_capacity(c);
    task_recompute want = c->t->recompute;
    int64_t per = c->d.gb / c->d.dp, lo = c->d.mb, hi = c->d.mb;
    if (c->t->micro_batch_auto) {
        if (per < 1 || c->d.gb % c->d.dp != 0)
            return STATUS_INFEASIBLE_BATCH;
        lo = 1;
        hi = per < 64 ? per : 64;
    }
    *mb = 0;
    *t_s = 0.0;
    for (int64_t b = lo; b <= hi; b++) {
        if (c->t->micro_batch_auto) {
            if (per % b != 0)
                continue;
            dt_set_micro_batch(c, b);
        } else if (c->d.ga < 1 || c->d.gb != c->d.ga * b * c->d.dp) {
            return STATUS_OK; /* refused after the pick, as without it */
        }
        dt_fit_memory(c, st, want, mem);
        if (mem->total > cap)
            continue;
        status_code rc = dt_train_time(c, sp, st, e, r, false);
        if (rc != STATUS_OK)
            return rc;
        if (*mb == 0 || r->iteration_time_s < *t_s) {
            *mb = b;
            *t_s = r->iteration_time_s;
        }
    }
    return STATUS_OK;
}

/* vpp = "auto": the fastest interleaving (from the task's vpp, 1 when
 * unset, to as many chunks per stage as the stack's split gives every
 * chunk a layer) with the fastest micro-batch that fits, as a tuned run
 * picks it; none fitting: the first. The counts tried are those whose
 * chunks hold equal units (the published interleavings: 80 layers on pp
 * 4 x vpp 5, Llama 3.1 405B's 126 + 2 on 8 x 8), all of them when no
 * count does: an unequal split leaves its fullest stage setting the pace
 * and its bubble. Sets c->d.v (and leaves the micro-batch to the caller). */
static status_code dt_pick_vpp(dt_ctx *c, engine *e, dt_split *sp, dt_stages *st, dt_mem *mem,
                               result_t *r)
{
    const dt_deg d0 = c->d;
    const double tok0 = c->tok;
    int64_t best = 0, first = c->t->vpp > 1 ? c->t->vpp : 1, tried = 0;
    double tbest = 0.0;
    for (int pass = 0; pass < 2 && tried == 0; pass++) {
        for (int64_t v = first; v <= DT_MAX_STAGES / c->d.pp; v++) {
            c->d.v = v;
            dt_split_init(c, sp);
            if (!dt_split_ok(c, sp))
                break; /* fewer units per chunk with every v */
            if (pass == 0 && sp->r != 0)
                continue; /* an unequal split: tried when no count is equal */
            tried++;
            dt_stages_build(c, sp, st);
            int64_t mb;
            double t;
            c->d = d0;
            c->d.v = v;
            c->tok = tok0;
            status_code rc = dt_fastest_mb(c, sp, st, e, mem, r, &mb, &t);
            if (rc != STATUS_OK)
                return rc;
            if (mb > 0 && (best == 0 || t < tbest)) {
                best = v;
                tbest = t;
            }
        }
    }
    c->d = d0;
    c->d.v = best > 0 ? best : first;
    c->tok = tok0;
    return STATUS_OK;
}

status_code dt_prepare(const point_t *p, engine *e, dt_ctx *c, stack_desc *ideal, dt_memo *memo,
                       dt_split *sp, dt_stages *st, dt_mem *mem, result_t *r)
{
    dt_ctx_init(c, p, ideal, memo);
    dt_ctx_params(c);
    const model_t *m = c->m;
    bool training = p->task.kind != TASK_INFERENCE;
    /* shapes that must divide */
    if (m->heads % c->d.tp != 0 || m->seq_len % c->d.cp != 0 ||
        (m->d.experts > 0 && m->d.experts % c->d.ep))
        return STATUS_INFEASIBLE_SHAPE;
    if (training && c->t->vpp_auto && c->d.pp > 1 && c->t->schedule != TASK_SCHEDULE_GPIPE &&
        c->d.pp <= DT_MAX_STAGES) {
        status_code rc = dt_pick_vpp(c, e, sp, st, mem, r);
        if (rc != STATUS_OK)
            return rc;
    }
    dt_split_init(c, sp);
    if (!dt_split_ok(c, sp) || c->d.pp > DT_MAX_STAGES)
        return STATUS_INFEASIBLE_SHAPE;
    dt_stages_build(c, sp, st);
    double cap = dt_capacity(c);
    task_recompute want = c->t->recompute;
    if (training && c->t->micro_batch_auto) {
        /* the fastest micro-batch that divides the replica's batch and
         * fits, as a tuned run picks it (at most 64 sequences) */
        int64_t best;
        double tbest;
        status_code rc = dt_fastest_mb(c, sp, st, e, mem, r, &best, &tbest);
        if (rc != STATUS_OK)
            return rc;
        dt_set_micro_batch(c, best > 0 ? best : 1);
    }
    r->global_batch = training ? c->d.gb : c->d.mb * c->d.dp;
    r->micro_batch_resolved = c->d.mb;
    r->vpp_resolved = c->d.v;
    if (training && (c->d.ga < 1 || c->d.gb != c->d.ga * c->d.mb * c->d.dp))
        return STATUS_INFEASIBLE_BATCH;
    /* memory; recompute = auto takes the least recomputation that fits */
    dt_fit_memory(c, st, want, mem);
    dt_put_mem(r, mem, cap, training);
    r->recompute_resolved = c->rc;
    /* the reserve is the uncertain part of the count (fragmentation,
     * workspaces): over the capacity by less than it, the point may fit
     * and is kept, flagged (mem_fits 0.5); beyond it, it does not */
    return mem->total - c->st->reserve_bytes > cap ? STATUS_INFEASIBLE_MEMORY : STATUS_OK;
}

status_code dt_run_llm(const point_t *p, engine *e, result_t *r)
{
    dt_ctx c;
    stack_desc ideal;
    dt_split sp;
    dt_stages st;
    dt_mem mem;
    dt_memo memo;
    status_code rc = dt_prepare(p, e, &c, &ideal, &memo, &sp, &st, &mem, r);
    if (rc != STATUS_OK)
        return rc;
    if (p->task.kind == TASK_INFERENCE)
        return dt_infer_run(&c, &st, &mem, r); /* its band too, sharing what no fact moves */
    rc = dt_train_time(&c, &sp, &st, e, r, true);
    if (rc != STATUS_OK)
        return rc;
    /* the band: every uncertain fact at its fast end, then its slow end
     * (without figures a run writes its iteration time and bubble only:
     * band needs no copy of r) */
    result_t band;
    dt_facts_resolve(&c, STACK_FAST);
    rc = dt_train_time(&c, &sp, &st, e, &band, false);
    if (rc != STATUS_OK)
        return rc;
    r->iteration_time_lo_s = band.iteration_time_s;
    dt_facts_resolve(&c, STACK_SLOW);
    rc = dt_train_time(&c, &sp, &st, e, &band, false);
    if (rc != STATUS_OK)
        return rc;
    r->iteration_time_hi_s = band.iteration_time_s;
    return STATUS_OK;
}

static status_code dt_run(const point_t *p, engine *e, result_t *r)
{
    return p->model.kind == MODEL_DLRM ? dt_run_dlrm(p, e, r) : dt_run_llm(p, e, r);
}

const eval_ops detailed_ops = {
    "detailed", "detailed-1", dt_check, dt_run, dt_auto_count, dt_auto_apply,
};
