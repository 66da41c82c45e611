/*
 * spec.c (worker) - what a loaded sweep spec owns and how its strategies
 * read (see worker/spec.h); the loader is driver/spec.c.
 */
#include "spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed.h"

void spec_free(spec *s)
{
    free(s->text);
    free(s->models);
    free(s->systems);
    free(s->dsystems);
    free(s->stacks);
    free(s->tasks);
    free(s->batches);
    free(s->strats);
    memset(s, 0, sizeof *s);
}

int spec_strategy_text(const spec *s, int64_t k, char *buf, size_t size)
{
    if (s->fidelity == EVAL_DETAILED) {
        task_detailed_t t;
        if (detailed_auto_candidate(k, &t) < 0)
            return snprintf(buf, size, "auto #%lld", (long long)k);
        return detailed_strategy_text(&t, buf, size);
    }
    autoplan_pair pair;
    const autoplan_pair *p = NULL;
    if (s->strat_auto) {
        if (autoplan_candidate(s->ops, k, &pair) == 0)
            p = &pair;
    } else if (k >= 0 && k < s->nstrats) {
        p = &s->strats[k];
    }
    if (!p)
        return snprintf(buf, size, "auto #%lld", (long long)k);
    char d[PLAN_TEXT_MAX], e[PLAN_TEXT_MAX];
    autoplan_format(&p->dense, d, sizeof d);
    autoplan_format(&p->emb, e, sizeof e);
    return snprintf(buf, size, "%s | %s", d, e);
}
