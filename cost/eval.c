/*
 * eval.c - the fidelity registry and the evaluation entry point.
 */
#include "eval.h"

#include <math.h>
#include <string.h>

#include "detailed.h"
#include "madmax.h"

static const eval_ops *const eval_registry[EVAL_NFIDELITIES] = {
    &madmax_ops,
    &detailed_ops,
};

const eval_ops *eval_ops_of(eval_fidelity f)
{
    if (f < 0 || f >= EVAL_NFIDELITIES)
        return NULL;
    return eval_registry[f];
}

int eval_fidelity_parse(const char *name)
{
    for (int i = 0; i < EVAL_NFIDELITIES; i++)
        if (strcmp(eval_registry[i]->name, name) == 0)
            return i;
    return -1;
}

const char *eval_fidelity_name(eval_fidelity f)
{
    const eval_ops *ops = eval_ops_of(f);
    return ops ? ops->name : "?";
}

status_code eval_check(const point_t *p, const char **where)
{
    const char *dummy = NULL;
    if (!where)
        where = &dummy;
    const eval_ops *ops = eval_ops_of(p->fidelity);
    if (!ops) {
        *where = "fidelity";
        return STATUS_INVALID_FIDELITY;
    }
    return ops->check(p, where);
}

/* The first figure of r that is not finite or is negative, or NULL.
 * Figures that are differences of sums (overlapped = comm - exposed)
 * can come out a few ulps below zero: a negative figure within 1e-9 of
 * the iteration time is rounding, not an error, and is kept as it is
 * (the MAD-Max reference itself prints comm_overlapped_s = -9.5e-12 s
 * in its sample025, and parity keeps such figures). */
static const result_field *eval_bad_figure(const result_t *r, status_code *why)
{
    double tol = isfinite(r->iteration_time_s) ? 1e-9 * fabs(r->iteration_time_s)
                                               : 0.0;
    for (size_t i = 0; i < result_nfields; i++) {
        const result_field *f = &result_fields[i];
        double v = result_get(r, f);
        if (!isfinite(v) || v < -tol) {
            *why = isfinite(v) ? STATUS_INVALID_NEGATIVE : STATUS_INVALID_NONFINITE;
            return f;
        }
    }
    return NULL;
}

status_code eval_run(const eval_ops *ops, const point_t *p, engine *e,
                     result_t *r, const char **where)
{
    e->full = false;
    status_code rc = ops->run(p, e, r);
    if (rc == STATUS_NOMEM || e->full) /* events past the reservation */
        return STATUS_NOMEM;
    status_code why = STATUS_OK;
    const result_field *f = eval_bad_figure(r, &why);
    if (f) {
        memset(r, 0, sizeof *r);
        rc = why;
        if (where)
            *where = f->name;
    }
    r->status = (int32_t)rc;
    return rc;
}

status_code eval_point(const point_t *p, engine *e, result_t *r,
                       const char **where)
{
    memset(r, 0, sizeof *r);
    status_code rc = eval_check(p, where);
    if (rc != STATUS_OK)
        return rc;
    return eval_run(eval_registry[p->fidelity], p, e, r, where);
}
