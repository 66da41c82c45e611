/*
 * eval.c - the fidelity registry and the evaluation entry point.
 */
#include "eval.h"

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

status_code eval_point(const point_t *p, engine *e, result_t *r,
                       const char **where)
{
    memset(r, 0, sizeof *r);
    status_code rc = eval_check(p, where);
    if (rc != STATUS_OK)
        return rc;
    rc = eval_registry[p->fidelity]->run(p, e, r);
    if (status_is_data(rc))
        r->status = (int32_t)rc;
    return rc;
}
