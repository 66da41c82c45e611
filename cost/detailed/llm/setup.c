/*
 * setup.c - an evaluation's resolved inputs (dt_eval): the context of a
 * point (core/ctx.c) with its shapes and parameter counts, the shape
 * rules a strategy must pass (tp divides the heads, cp the sequence, ep
 * the experts, the pp x vpp chunks fit the layers under the stack's
 * split), the pipeline split and stages, the resolved batch and the
 * memory of the busiest stage (recompute = auto: the least that fits).
 * dt_setup runs the steps in a row; training's tuner (train/tune.c) runs
 * its searches between them.
 * Invariants: the context points into the dt_eval that holds it (its
 * groups and memo), so they live together; a point that fails a rule
 * here is infeasible (data), never an error.
 */
#include "llm.h"

/* The shapes that must divide: tp the heads (and a linear-attention
 * layer's key heads), cp the sequence, ep the experts. */
static bool dt_setup_divides(const dt_ctx *c)
{
    const model_t *m = c->m;
    return !(m->heads % c->d.tp != 0 || m->seq_len % c->d.cp != 0 ||
             (m->d.experts > 0 && m->d.experts % c->d.ep) ||
             (m->d.linear_value_heads > 0 && m->d.linear_key_heads % c->d.tp != 0));
}

status_code dt_setup_begin(const point_t *p, dt_eval *v)
{
    dt_memo *mo = &v->memo;
    mo->n = 0;
    for (int k = 0; k < DT_L_KINDS; k++)
        mo->plan_mb[k] = 0;
    mo->ends_mb = 0;
    dt_ctx_init(&v->c, p, &v->ideal, &v->groups, mo);
    dt_shape_fill(&v->c);
    return dt_setup_divides(&v->c) ? STATUS_OK : STATUS_INFEASIBLE_SHAPE;
}

status_code dt_setup_split(dt_eval *v)
{
    dt_ctx *c = &v->c;
    dt_pipe_split_init(c, &v->sp);
    if (!dt_pipe_split_ok(c, &v->sp) || c->d.pp > DT_MAX_STAGES)
        return STATUS_INFEASIBLE_SHAPE;
    dt_pipe_stages_build(c, &v->sp, &v->st);
    return STATUS_OK;
}

/* Serving rows have no gradients or optimizer states: those columns stay
 * NaN (not applicable), not zeros. */
static void dt_setup_put_mem(result_t *r, const dt_mem *mem, bool training)
{
    r->mem_weights_bytes_per_device = mem->weights;
    if (training) {
        r->mem_grads_bytes_per_device = mem->grads;
        r->mem_optimizer_bytes_per_device = mem->optimizer;
    }
    r->mem_activations_bytes_per_device = mem->activations;
    r->mem_kv_cache_bytes_per_device = mem->kv_cache;
    r->mem_total_bytes_per_device = mem->total;
}

status_code dt_setup_end(dt_eval *v, result_t *r)
{
    dt_ctx *c = &v->c;
    dt_mem *mem = &v->mem;
    bool training = c->p->task.kind != TASK_INFERENCE;
    double cap = dt_mem_capacity(c);
    r->global_batch = training ? c->d.gb : c->d.mb * c->d.dp;
    r->micro_batch_resolved = c->d.mb;
    r->vpp_resolved = c->d.v;
    if (training && !dt_ctx_batch_ok(c))
        return STATUS_INFEASIBLE_BATCH;
    /* memory; recompute = auto takes the least recomputation that fits */
    dt_mem_fit(c, &v->st, c->t->recompute, mem);
    dt_setup_put_mem(r, mem, training);
    r->recompute_resolved = c->rc;
    /* the reserve is the uncertain part of the count (fragmentation,
     * workspaces): over the capacity by less than it, the point may fit
     * and is kept, flagged (mem_fits 0.5); beyond it, it does not */
    return mem->total - c->st->reserve_bytes > cap ? STATUS_INFEASIBLE_MEMORY : STATUS_OK;
}

status_code dt_setup(const point_t *p, dt_eval *v, result_t *r)
{
    status_code rc = dt_setup_begin(p, v);
    if (rc == STATUS_OK)
        rc = dt_setup_split(v);
    return rc == STATUS_OK ? dt_setup_end(v, r) : rc;
}

bool dt_setup_shape_ok(const point_t *p)
{
    /* the context alone: no shapes, memo or group is needed */
    dt_ctx c;
    stack_desc ideal;
    dt_groups groups;
    dt_ctx_init(&c, p, &ideal, &groups, NULL);
    if (!dt_setup_divides(&c))
        return false;
    dt_split sp;
    dt_pipe_split_init(&c, &sp);
    return dt_pipe_split_ok(&c, &sp) && c.d.pp <= DT_MAX_STAGES;
}
