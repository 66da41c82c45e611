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

status_code dt_infer_time(const dt_ctx *c, const dt_stages *st, result_t *r)
{
    if (!c->st->serving)
        return STATUS_INVALID_VALUE;
    return c->p->prefill.on ? sv_disagg(c, st, r) : sv_serve(c, st, r);
}
