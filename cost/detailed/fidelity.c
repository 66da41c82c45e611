/*
 * fidelity.c - the detailed fidelity's registry entry (detailed_ops):
 * its rules (rules.c), and run, which dispatches on the model kind x
 * task kind to a family (a DLRM: dlrm/; a transformer's inference:
 * serve/; its training or fine-tuning: train/) and runs the family's
 * time under the nominal facts and under the fast and slow ends of their
 * ranges (the band iteration_time_lo_s .. iteration_time_hi_s): the band
 * loop, written once here, over the families' dt_family (core.h).
 * A point whose stack has no name takes the idealized stack (stack.h).
 * Invariants: a family's state lives in this file's storage for one
 * evaluation; the nominal run writes every figure, a band end only the
 * iteration time; a band end that fails fails the point (a family that
 * has no time for an end reports 0 instead).
 */
#include "top.h"

#include "dlrm/dlrm.h"
#include "serve/serve.h"
#include "train/train.h"

/* One evaluation's state, whichever family runs it. */
typedef union dt_state {
    dt_eval train;
    sv_eval serve;
    dlrm_eval dlrm;
} dt_state;

/* The family of p: by model kind, then task kind. */
static const dt_family *dt_family_of(const point_t *p)
{
    if (p->model.kind == MODEL_DLRM)
        return &dlrm_family;
    return p->task.kind == TASK_INFERENCE ? &sv_family : &dt_train_family;
}

/* The band: the nominal run (every figure into r) and the two ends of the
 * ranges (the iteration time into iteration_time_lo_s, _hi_s), the
 * nominal first or, for a family that asks, last; without ranges the
 * ends are the nominal time. */
static status_code dt_band(const dt_family *f, void *self, engine *e, result_t *r)
{
    static const stack_scenario ends[2] = {STACK_FAST, STACK_SLOW};
    bool ranged = !f->ranged || f->ranged(self);
    status_code rc;
    if (!f->nominal_last && (rc = f->time_at(self, STACK_NOMINAL, e, r)) != STATUS_OK)
        return rc;
    double t[2] = {0.0, 0.0};
    result_t band; /* scratch: a band end writes its iteration time */
    for (int i = 0; ranged && i < 2; i++) {
        if ((rc = f->time_at(self, ends[i], e, &band)) != STATUS_OK)
            return rc;
        t[i] = band.iteration_time_s;
        if (!f->nominal_last) /* the nominal figures are in: as it comes */
            *(i == 0 ? &r->iteration_time_lo_s : &r->iteration_time_hi_s) = t[i];
    }
    if (!f->nominal_last) {
        if (!ranged)
            r->iteration_time_lo_s = r->iteration_time_hi_s = r->iteration_time_s;
        return STATUS_OK;
    }
    if ((rc = f->time_at(self, STACK_NOMINAL, e, r)) != STATUS_OK)
        return rc;
    r->iteration_time_lo_s = ranged ? t[0] : r->iteration_time_s;
    r->iteration_time_hi_s = ranged ? t[1] : r->iteration_time_s;
    return STATUS_OK;
}

static status_code dt_run(const point_t *p, engine *e, result_t *r)
{
    const dt_family *f = dt_family_of(p);
    dt_state s;
    status_code rc = f->prepare(&s, p, e, r);
    return rc != STATUS_OK ? rc : dt_band(f, &s, e, r);
}

const eval_ops detailed_ops = {
    "detailed", "detailed-1", dt_rules_check, dt_run, dt_auto_count, dt_auto_apply,
};
