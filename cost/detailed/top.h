/*
 * top.h - what the top of the detailed fidelity shares among its files
 * (private to cost/detailed/; the public face is cost/detailed.h):
 *   fidelity.c  the registry entry (detailed_ops): dispatch on the model
 *               kind x task kind to a family, and the one band loop
 *               (nominal, fast end, slow end) over the family's time
 *   rules.c     every rule of a point (the check)
 *   trace.c     the whole iteration as events, from a family's schedule
 *   auto.c      the `auto` candidate strategies of sweeps
 * The top calls down only: the families (train/, serve/, dlrm/), the
 * mechanisms (llm/), the ground (core/); nothing below includes this.
 * Invariant: nothing below the top includes this header
 * (scripts/check_includes.py).
 */
#ifndef MADSWEEP_DT_TOP_H
#define MADSWEEP_DT_TOP_H

#include "../detailed.h"

/* The rules of a detailed point (eval_ops.check): STATUS_OK, or the
 * first broken rule's code with *where the part at fault. */
status_code dt_rules_check(const point_t *p, const char **where);

/* The `auto` candidates (eval_ops.auto_count, auto_apply). */
int64_t dt_auto_count(void);
status_code dt_auto_apply(point_t *p, int64_t i, int64_t global_batch);

#endif
