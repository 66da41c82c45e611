/*
 * serve.c - the serving family the top runs: inference on a serving
 * engine (a stack with `serving` facts; the idealized stack when a point
 * names none) under its scheduler, continuous batching (the default) or
 * static batches (`scheduler = "static"`: the batch prefilled at once,
 * then decoded in lock-step). Both are costed on one step model
 * (model.c, step.c), the KV capacity of llm/kv.c and the steady state of
 * steady.c; a point with a prefill pool serves disaggregated (disagg.c,
 * its pool prepared once: pool.c).
 * Invariant: the preparation resolves what no uncertain fact moves (the
 * setup, the KV capacity, a colocated point's step shapes and workload);
 * a band end re-resolves the step model's facts only (and the prefill
 * pool's, disaggregated: another context, prepared with the setup).
 */
#include "serve.h"

status_code sv_serve_prepare(sv_eval *s, const point_t *p, result_t *r)
{
    status_code rc = dt_setup(p, &s->v, r);
    if (rc != STATUS_OK)
        return rc;
    const dt_ctx *c = &s->v.c;
    if (!c->st->serving)
        return STATUS_INVALID_VALUE;
    if (!sv_model_begin(c, &s->v.st, &s->v.mem, &s->k, &s->w))
        return STATUS_INFEASIBLE_MEMORY;
    return c->p->prefill.on ? sv_pool_prepare(c, &s->w, &s->pool) : STATUS_OK;
}

status_code sv_serve_at(sv_eval *s, stack_scenario sc, result_t *r)
{
    dt_ctx *c = &s->v.c;
    const dt_mem *mem = &s->v.mem;
    if (c->scenario != sc) {
        dt_facts_resolve(c, sc);
        sv_model_facts(c, sc, &s->k);
    }
    if (c->p->prefill.on)
        return sv_disagg(c, &s->k, &s->w, &mem->kv, &s->pool, sc, r);
    sv_state st;
    sv_solve(c, &s->k, &s->w, mem->kv.cmax, &st);
    if (sc != STACK_NOMINAL) {
        r->iteration_time_s = st.e2e;
        return STATUS_OK;
    }
    sv_result_write(c, &s->k, &mem->kv, &s->w, &st, (double)c->p->system.devices, r);
    return STATUS_OK;
}

/* ---- the family (core.h dt_family; its state an sv_eval) */

static status_code sv_family_prepare(void *self, const point_t *p, engine *e, result_t *r)
{
    (void)e;
    return sv_serve_prepare(self, p, r);
}

static status_code sv_family_at(void *self, stack_scenario sc, engine *e, result_t *r)
{
    (void)e;
    return sv_serve_at(self, sc, r);
}

const dt_family sv_family = {sv_family_prepare, sv_family_at, NULL, false};
