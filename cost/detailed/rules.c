/*
 * rules.c - every rule of a detailed point (the registry's check, top of
 * the fidelity): a transformer's model shape and bounds, its task
 * (fine-tuning, precision, serving engine and scheduler, enums, degrees
 * and batches, the products the evaluation forms, the layout and ZeRO
 * shard group, the expert grid), a disaggregated deployment's prefill
 * pool, a DLRM's tables, MLPs and strategy. Each broken rule names the
 * part at fault and its code (invalid:value, invalid:product,
 * invalid:strategy, invalid:fidelity): *where is "PART", "PART.KEY" or
 * "PART.KEY: why" (PART one of model, task, stack, prefill), so that a
 * point's loader names the key a combination of keys breaks (issue 29:
 * "a value is outside its domain" named none); a range check of one key
 * names only its part (the loader's key tables check ranges first).
 * Invariants: the rules run in a fixed order (the first broken one
 * decides the code); every count the evaluation multiplies or loops over
 * is bounded here (core.h's DT_MAX_*), before any arithmetic, so that no
 * point that passes can overflow or loop for ever; a rule depends on the
 * point alone (no evaluation), so sweeps check cheaply.
 */
#include "top.h"

#include <math.h>

#include "dlrm/dlrm.h"

#define DT_STR2(x) #x
#define DT_STR(x) DT_STR2(x) /* a bound in a *where text */

static status_code dt_rules_dlrm(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    const task_t *k = &p->task;
    int64_t x;
    bool bad = m->tables < 1 || m->rows_per_table < 1 || m->emb_dim < 1 ||
               m->pooling < 1 || m->bytes_per_emb_param < 0 || m->d.bot_n < 2 ||
               m->tables > DT_MAX_COUNT || m->emb_dim > DT_MAX_COUNT ||
               m->rows_per_table > DT_MAX_BATCH || m->pooling > DT_MAX_COUNT ||
               m->bytes_per_emb_param > 64 ||
               !dt_mul_ok(m->tables, m->emb_dim, DT_MAX_BATCH, &x) ||
               m->d.bot_n > MODEL_MLP_MAX || m->d.top_n < 1 ||
               m->d.top_n > MODEL_MLP_MAX;
    for (int i = 0; !bad && i < m->d.bot_n; i++)
        bad = m->d.bot_mlp[i] < 1 || m->d.bot_mlp[i] > DT_MAX_COUNT;
    for (int i = 0; !bad && i < m->d.top_n; i++)
        bad = m->d.top_mlp[i] < 1 || m->d.top_mlp[i] > DT_MAX_COUNT;
    bad = bad || (m->d.n_tables != 0 && (m->d.n_tables != m->tables ||
                                         m->d.n_tables > MODEL_TABLES_MAX)) ||
          m->d.interaction < MODEL_INTERACTION_DOT ||
          m->d.interaction > MODEL_INTERACTION_DCNV2 ||
          (m->d.interaction == MODEL_INTERACTION_DCNV2 &&
           (m->d.cross_layers < 1 || m->d.cross_layers > MODEL_MLP_MAX ||
            m->d.cross_rank < 1 || m->d.cross_rank > DT_MAX_COUNT));
    /* the listed tables without a branch per table: rows from 1 to
     * DT_MAX_BATCH (a power of two) have rows - 1 below it, as have
     * poolings from 1 (pooling - 1 from 0 to 2^31 - 2); anything else
     * sets a bit from DT_MAX_BATCH's up (a negative: the sign bit) */
    _Static_assert((DT_MAX_BATCH & (DT_MAX_BATCH - 1)) == 0 && DT_MAX_BATCH > INT32_MAX,
                   "DT_MAX_BATCH: a power of two above any pooling");
    uint64_t tab = 0;
    int nt = bad ? 0 : m->d.n_tables;
    for (int i = 0; i < nt; i++)
        tab |= ((uint64_t)m->d.table_rows[i] - 1u) |
               (uint64_t)((int64_t)m->d.table_pooling[i] - 1);
    bad = bad || tab >= (uint64_t)DT_MAX_BATCH;
    if (bad) {
        *where = "model";
        return STATUS_INVALID_VALUE;
    }
    if (m->d.bot_mlp[m->d.bot_n - 1] != m->emb_dim) {
        *where = "model.bot_mlp: the bottom MLP's last width is the embedding "
                 "dimension (emb_dim)";
        return STATUS_INVALID_VALUE;
    }
    if (t->emb_column_shards > 0 && m->emb_dim % t->emb_column_shards != 0) {
        *where = "task.emb_column_shards: column shards divide the embedding "
                 "dimension (emb_dim)";
        return STATUS_INVALID_VALUE;
    }
    if (t->emb_sharding == TASK_EMB_AUTO && m->tables > EMB_MAX_TABLES) {
        *where = "task.emb_sharding: \"auto\" plans at most " DT_STR(EMB_MAX_TABLES)
                 " tables";
        return STATUS_INVALID_VALUE;
    }
    if (t->dp < 0 || t->micro_batch < 0 || t->global_batch < 0 || t->grad_accum < 0 ||
        t->dp > DT_MAX_DEGREE || t->micro_batch > DT_MAX_BATCH ||
        t->global_batch > DT_MAX_BATCH || t->grad_accum > DT_MAX_BATCH ||
        t->emb_column_shards > DT_MAX_COUNT ||
        (t->micro_batch > 0 && !dt_mul_ok(t->micro_batch, t->dp > 0 ? t->dp : 1, DT_MAX_BATCH, &x)) ||
        t->dtype < 0 || t->dtype >= HW_NDTYPES || !(t->grad_reduce_bytes >= 0) ||
        t->emb_sharding < 0 || t->emb_sharding > TASK_EMB_AUTO ||
        (t->emb_sharding == TASK_EMB_AUTO && m->tables > EMB_MAX_TABLES) ||
        !(t->emb_dp_threshold_bytes < 1e15) || isnan(t->emb_dp_threshold_bytes) ||
        !(t->emb_mem_comm_bw_ratio >= 0 && t->emb_mem_comm_bw_ratio <= 1e6) ||
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
        *where = "task: a DLRM's MLPs are data parallel and its tables sharded (no tp, "
                 "pp, cp, ep, vpp, ZeRO, sequence parallelism or shard_degree)";
        return STATUS_INVALID_STRATEGY;
    }
    if ((t->dp > 0 ? t->dp : 1) != p->system.devices) {
        *where = "task.dp: a DLRM's dp is the system's devices";
        return STATUS_INVALID_PRODUCT;
    }
    return STATUS_OK;
}

static status_code dt_rules_prefill(const point_t *p, const char **where)
{
    const point_prefill *f = &p->prefill;
    const task_detailed_t *t = &p->task.detailed;
    int64_t n;
    *where = "task";
    if (p->task.kind != TASK_INFERENCE)
        return STATUS_INVALID_VALUE;
    *where = "task.scheduler: a static batch has no requests to hand from a prefill "
             "pool to a decode pool (use \"continuous\")";
    if (t->scheduler == TASK_SCHED_STATIC)
        return STATUS_INVALID_VALUE;
    *where = "task.decode_tokens: a decode pool has tokens to decode (2 or more)";
    if (t->decode_tokens < 2)
        return STATUS_INVALID_VALUE;
    *where = "prefill";
    if (f->tp < 1 || f->pp < 1 || f->tp > DT_MAX_DEGREE || f->pp > DT_MAX_DEGREE ||
        f->system.devices < 1 || f->system.devices > DT_MAX_BATCH ||
        !dt_mul_ok(f->tp, f->pp, DT_MAX_BATCH, &n))
        return STATUS_INVALID_VALUE;
    *where = "prefill.devices: the prefill pool's devices are a whole number of "
             "replicas of tp x pp devices";
    if (f->system.devices % n != 0)
        return STATUS_INVALID_PRODUCT;
    *where = "prefill";
    if (f->attn_dp < 0 || f->ep < 0 || f->etp < 0 || f->max_seqs < 0 || f->token_budget < 0 ||
        f->attn_dp > DT_MAX_DEGREE || f->ep > DT_MAX_DEGREE || f->etp > DT_MAX_DEGREE ||
        f->max_seqs > DT_MAX_BATCH || f->token_budget > DT_MAX_COUNT)
        return STATUS_INVALID_VALUE;
    *where = "prefill.token_budget: a prefill step carries " DT_STR(DT_MIN_TOKEN_BUDGET)
             " tokens or more (0: the "
             "stack's budget), as the decode pool's";
    if (f->token_budget > 0 && f->token_budget < DT_MIN_TOKEN_BUDGET)
        return STATUS_INVALID_VALUE;
    *where = "prefill.attn_dp: the prefill pool's attention data-parallel ranks divide "
             "its tp";
    if (f->attn_dp > 1 && f->tp % f->attn_dp != 0)
        return STATUS_INVALID_VALUE;
    *where = "prefill.etp: the prefill pool's expert tensor parallelism divides its tp";
    if (f->etp > 0 && f->tp % f->etp != 0)
        return STATUS_INVALID_VALUE;
    const model_t *m = &p->model;
    int64_t ep = f->ep > 0 ? f->ep : 1, etp = eval_prefill_etp(f);
    *where = "prefill.ep: the prefill pool's ep divides the model's experts and its "
             "replicas' expert ranks (tp / etp x replicas)";
    if (ep > 1 && (m->d.experts == 0 || m->d.experts % ep != 0 ||
                   (f->tp / etp * (f->system.devices / n)) % ep != 0))
        return STATUS_INVALID_VALUE;
    *where = "prefill";
    return STATUS_OK;
}


/* The task's precision has a peak on the hardware that computes in it
 * (the decode pool's, a prefill pool's): a precision the hardware lacks
 * was evaluated at its BF16 peak, and `madsweep point` wrote rows that
 * the point loader refuses (issue 29: FP8 rows on A100). */
static status_code dt_rules_precision(const point_t *p, const char **where)
{
    int d = p->task.detailed.dtype;
    if (d < 0 || d >= HW_NDTYPES) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    if (!(p->system.hw.peak_flops[d] > 0)) {
        *where = "task.precision: the hardware has no peak in this precision";
        return STATUS_INVALID_DTYPE;
    }
    if (p->prefill.on && !(p->prefill.system.hw.peak_flops[d] > 0)) {
        *where = "prefill.hardware: the prefill pool's hardware has no peak in the "
                 "task's precision";
        return STATUS_INVALID_DTYPE;
    }
    return STATUS_OK;
}

/* Fine-tuning's and precision's task fields. */
static status_code dt_rules_finetune(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    if (t->frozen_layers > m->layers && t->frozen_layers <= DT_MAX_COUNT) {
        *where = "task.frozen_layers: more frozen layers than the model has";
        return STATUS_INVALID_VALUE;
    }
    if (t->frozen_layers < 0 || t->frozen_layers > m->layers ||
        (p->task.kind != TASK_FINETUNE && (t->frozen_layers > 0 || p->task.freeze_emb ||
                                            t->lora_rank > 0)) ||
        t->lora_rank < 0 || t->recompute_layers < 0 || t->fp8_recipe < 0 ||
        t->fp8_recipe > TASK_FP8_NVFP4) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    return STATUS_OK;
}

/* Attention kinds, sparse attention and the parts' precisions: bounded,
 * one second kind at most (a window or linear attention), a linear
 * layer's value heads a multiple of its key heads, sparse attention on
 * full layers only. */
static status_code dt_rules_kinds(const point_t *p, const char **where)
{
    const model_detailed_t *d = &p->model.d;
    /* counts from 0 to DT_MAX_COUNT (a negative is a huge unsigned),
     * precisions TASK_W_*, without a branch each */
    const uint64_t mx = (uint64_t)DT_MAX_COUNT, wm = (uint64_t)TASK_W_FP4;
    bool bad = ((uint64_t)d->sliding_window > mx) | ((uint64_t)d->full_attention_interval > mx) |
               ((uint64_t)d->linear_key_heads > mx) | ((uint64_t)d->linear_value_heads > mx) |
               ((uint64_t)d->linear_key_head_dim > mx) |
               ((uint64_t)d->linear_value_head_dim > mx) |
               ((uint64_t)d->linear_conv_kernel > mx) | ((uint64_t)d->index_topk > mx) |
               ((uint64_t)d->index_heads > mx) | ((uint64_t)d->index_head_dim > mx) |
               ((uint64_t)(int64_t)d->attn_weight_precision > wm) |
               ((uint64_t)(int64_t)d->dense_weight_precision > wm) |
               ((uint64_t)(int64_t)d->expert_weight_precision > wm);
    bool lin = d->linear_value_heads > 0;
    bad = bad || (lin && d->sliding_window > 0) || d->linear_state_bytes < 0 ||
          d->linear_state_bytes > 8 ||
          (lin && (d->linear_key_heads < 1 || d->linear_key_head_dim < 1 ||
                   d->linear_value_head_dim < 1 ||
                   d->linear_value_heads % d->linear_key_heads != 0)) ||
          (d->index_topk > 0 && (d->index_heads < 1 || d->index_head_dim < 1 ||
                                 d->sliding_window > 0 || lin));
    if (bad) {
        *where = "model";
        return STATUS_INVALID_VALUE;
    }
    return STATUS_OK;
}

/* A transformer's shape: positive, bounded, dividing where it must. */
static status_code dt_rules_model(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
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
        (m->d.experts > 0 && dt_shape_top_k(m) > m->d.experts) ||
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
        if (m->heads >= 1 && m->d.head_dim <= 0 && m->hidden % m->heads != 0)
            *where = "model.heads: heads divide hidden (or give head_dim)";
        else if (m->kv_heads > 0 && m->heads % m->kv_heads != 0)
            *where = "model.kv_heads: kv_heads divide heads";
        else if (m->d.experts > 0 && m->d.top_k >= 0 && dt_shape_top_k(m) > m->d.experts)
            *where = "model.top_k: more experts per token than the model has";
        else if (m->d.dense_layers > m->layers)
            *where = "model.dense_layers: more dense layers than layers";
        return STATUS_INVALID_VALUE;
    }
    return dt_rules_kinds(p, where);
}

/* The stack: checked (a loaded one was when loaded), and a serving
 * engine only serves. */
static status_code dt_rules_stack(const point_t *p, const char **where)
{
    if (p->stack.name[0] && !p->stack.checked) { /* loaded stacks: checked then */
        const char *bad = NULL;
        if (stack_check(&p->stack, &bad) != STATUS_OK) {
            *where = "stack";
            return STATUS_INVALID_VALUE;
        }
    }
    if (p->task.kind != TASK_INFERENCE && p->stack.serving_only) {
        *where = "stack: a serving engine does not train (name a training stack)";
        return STATUS_INVALID_VALUE;
    }
    return STATUS_OK;
}

/* Inference: a serving stack, its scheduler, load, SLA, precisions,
 * speculation and attention data parallelism. */
static status_code dt_rules_serving(const point_t *p, const char **where)
{
    const task_detailed_t *t = &p->task.detailed;
    if (p->task.kind != TASK_INFERENCE)
        return STATUS_OK;
    if (p->stack.name[0] && !p->stack.serving) {
        *where = "stack: a training stack has no serving facts (name a serving stack "
                 "such as vllm, sglang or trtllm)";
        return STATUS_INVALID_VALUE;
    }
    if (!p->model.causal) {
        *where = "task.decode_tokens: an encoder-only model (causal = false) generates "
                 "no tokens; the detailed fidelity serves decoder models";
        return STATUS_INVALID_FIDELITY;
    }
    if (t->attn_dp > 1 && t->tp >= 1 && t->tp % t->attn_dp != 0) {
        *where = "task.attn_dp: attention data-parallel ranks divide tp";
        return STATUS_INVALID_VALUE;
    }
    /* a step's token budget under 16 tokens (a KV block) was refused
     * as "task" without its key (issue 29) */
    if (t->token_budget > 0 && t->token_budget < DT_MIN_TOKEN_BUDGET) {
        *where = "task.token_budget: an engine step carries " DT_STR(DT_MIN_TOKEN_BUDGET)
                 " tokens or more (0: the "
                 "stack's budget)";
        return STATUS_INVALID_VALUE;
    }
    if (((p->stack.name[0] && !p->stack.serving) || t->scheduler < 0 || t->scheduler > 1 ||
         t->concurrency < TASK_CONC_SLA || t->concurrency > DT_MAX_BATCH ||
         !(t->request_rate >= 0.0 && t->request_rate <= 1e9) || t->requests < 0 ||
         t->requests > DT_MAX_BATCH || t->kv_dtype < 0 ||
         t->kv_dtype > HW_NDTYPES || t->weight_dtype < 0 || t->weight_dtype > TASK_W_FP4 || !(t->ttft_max_s >= 0.0 && t->ttft_max_s <= 3600.0) ||
         !(t->tpot_max_s >= 0.0 && t->tpot_max_s <= 3600.0) || t->spec_tokens < 0 ||
         t->spec_tokens > 64 || !(t->spec_acceptance >= 0.0 && t->spec_acceptance <= 1.0) ||
         !(t->spec_draft_cost >= 0.0 && t->spec_draft_cost <= 10.0) || t->attn_dp < 0 ||
         t->max_seqs < 0 || t->max_seqs > DT_MAX_BATCH || t->token_budget < 0 ||
         t->token_budget > DT_MAX_COUNT || t->rounds < 0 ||
         t->rounds > DT_MAX_COUNT ||
         (t->attn_dp > 1 && (t->tp < 1 || t->tp % t->attn_dp != 0)))) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    return STATUS_OK;
}

/* The task's enums, degrees and batches, bounded, and the products the
 * evaluation forms from them. */
static status_code dt_rules_task(const point_t *p, const char **where)
{
    const task_detailed_t *t = &p->task.detailed;
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
    return STATUS_OK;
}

/* The degrees' product is the devices; the layout, the ZeRO shard
 * group, a prefill pool and the expert grid fit them. */
static status_code dt_rules_strategy(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_detailed_t *t = &p->task.detailed;
    dt_deg d;
    dt_ctx_degrees(p, &d);
    if (d.tp * d.pp * d.dp * d.cp != p->system.devices) {
        *where = "task.dp: tp x pp x dp x cp is not the system's devices";
        return STATUS_INVALID_PRODUCT;
    }
    if (t->layout < 0 || t->layout > 24) {
        *where = "task.layout";
        return STATUS_INVALID_STRATEGY;
    }
    if (t->shard_degree < 0 ||
        (t->shard_degree > 0 && ((d.dp * d.cp) % t->shard_degree != 0 ||
                                 t->shard_degree % d.ep != 0))) {
        *where = "task.shard_degree: the ZeRO shard group divides dp x cp and is a "
                 "multiple of ep";
        return STATUS_INVALID_STRATEGY;
    }
    if (p->prefill.on) {
        status_code rc = dt_rules_prefill(p, where);
        if (rc != STATUS_OK)
            return rc;
    }
    int64_t etp = t->etp > 0 ? t->etp : d.tp;
    if (t->etp < 0 || d.tp % etp != 0) {
        *where = "task.etp: the expert tensor-parallel degree divides tp";
        return STATUS_INVALID_STRATEGY;
    }
    if (d.ep > 1 && (m->d.experts == 0 || (d.tp / etp * d.dp * d.cp) % d.ep != 0 ||
                     m->d.experts % d.ep != 0)) {
        *where = m->d.experts == 0 ? "task.ep: expert parallelism on a model without experts"
                 : m->d.experts % d.ep != 0 ? "task.ep: ep divides the experts"
                 : "task.ep: ep divides tp/etp x dp x cp";
        return STATUS_INVALID_STRATEGY;
    }
    return STATUS_OK;
}

status_code dt_rules_check(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    if (m->kind == MODEL_DLRM && p->prefill.on) {
        *where = "prefill"; /* a DLRM has no prompts to prefill apart */
        return STATUS_INVALID_VALUE;
    }
    status_code rc = dt_rules_precision(p, where);
    if (rc != STATUS_OK)
        return rc;
    if (m->kind == MODEL_DLRM)
        return dt_rules_dlrm(p, where);
    if (m->kind != MODEL_LLM) {
        *where = "model";
        return STATUS_INVALID_FIDELITY;
    }
    /* in this order: the first broken rule decides */
    if ((rc = dt_rules_finetune(p, where)) != STATUS_OK ||
        (rc = dt_rules_model(p, where)) != STATUS_OK ||
        (rc = dt_rules_stack(p, where)) != STATUS_OK ||
        (rc = dt_rules_serving(p, where)) != STATUS_OK ||
        (rc = dt_rules_task(p, where)) != STATUS_OK)
        return rc;
    return dt_rules_strategy(p, where);
}
