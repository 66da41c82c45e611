/*
 * infer.c - inference: the detailed fidelity's entry to serving. A
 * serving task runs on a serving engine (a stack with `serving` facts;
 * the idealized stack when a point names none) under its scheduler:
 * continuous batching (the default) or static batches
 * (`scheduler = "static"`, the batch prefilled at once, then decoded in
 * lock-step). Both are costed on one per-step model (serve_step.c), the
 * KV capacity of serve_kv.c and the steady state of serve_steady.c; a
 * point with a prefill pool serves disaggregated (serve_disagg.c).
 */
#include "serve.h"

status_code dt_infer_time(const dt_ctx *c, const dt_stages *st, const dt_mem *mem,
                          result_t *r)
{
    if (!c->st->serving)
        return STATUS_INVALID_VALUE;
    return c->p->prefill.on ? sv_disagg(c, st, mem, r) : sv_serve(c, st, mem, r);
}

status_code dt_infer_run(dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r)
{
    if (!c->st->serving)
        return STATUS_INVALID_VALUE;
    if (!c->p->prefill.on)
        return sv_serve_band(c, st, mem, r);
    status_code rc = sv_disagg(c, st, mem, r);
    if (rc != STATUS_OK)
        return rc;
    /* the band: every uncertain fact at its fast end, then its slow end
     * (the prefill pool's context is built again for each) */
    result_t band = *r;
    dt_facts_resolve(c, STACK_FAST);
    rc = sv_disagg(c, st, mem, &band);
    if (rc != STATUS_OK)
        return rc;
    r->iteration_time_lo_s = band.iteration_time_s;
    dt_facts_resolve(c, STACK_SLOW);
    rc = sv_disagg(c, st, mem, &band);
    if (rc != STATUS_OK)
        return rc;
    r->iteration_time_hi_s = band.iteration_time_s;
    return STATUS_OK;
}
