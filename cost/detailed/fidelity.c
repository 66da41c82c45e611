/*
 * fidelity.c - the detailed fidelity's registry entry: its rules (check),
 * the resolved degrees of a task, and run, which dispatches on the model
 * kind (transformers: train.c; DLRM: dlrm.c).
 */
#include "dt.h"

void dt_degrees(const point_t *p, dt_deg *d)
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

static status_code dt_run(const point_t *p, engine *e, result_t *r)
{
    return p->model.kind == MODEL_DLRM ? dt_run_dlrm(p, e, r) : dt_run_llm(p, e, r);
}

const eval_ops detailed_ops = {
    "detailed", "detailed-1", dt_check, dt_run, dt_auto_count, dt_auto_apply,
};
