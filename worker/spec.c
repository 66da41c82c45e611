/*
 * spec.c (worker) - what a loaded sweep spec owns and how its strategies
 * read (see worker/spec.h); the loader is driver/sweep/spec_load.c.
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
    free(s->scale);
    free(s->scale_fig);
    free(s->stacks);
    free(s->tasks);
    free(s->batches);
    free(s->batch_kinds);
    free(s->strats);
    free(s->dstrats);
    sources_free(&s->files);
    memset(s, 0, sizeof *s);
}

int spec_strategy_text(const spec *s, int64_t k, char *buf, size_t size)
{
    if (s->fidelity == EVAL_DETAILED) {
        task_detailed_t t;
        if (!s->strat_auto && s->dstrats && k >= 0 && k < s->nstrats)
            return detailed_template_text(&s->dstrats[k], buf, size);
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

static const char *const spec_key_names[SPEC_NKEYS] = {
    "model", "system", "task", "global_batch", "strategy", "stack", "parallel",
    "devices", "nodes", "hardware"};

const char *spec_key_name(spec_key k)
{
    return (int)k >= 0 && k < SPEC_NKEYS ? spec_key_names[k] : "?";
}

int spec_key_parse(const char *name)
{
    for (int k = 0; k < SPEC_NKEYS; k++)
        if (strcmp(spec_key_names[k], name) == 0)
            return k;
    return strcmp(name, "batch") == 0 ? SPEC_KEY_BATCH : -1;
}

int spec_keep_text(const spec_keep *k, char *buf, size_t size)
{
    int n = 0;
    if (k->mode == SPEC_KEEP_ALL)
        return snprintf(buf, size, "all");
    if (k->mode == SPEC_KEEP_FEASIBLE)
        n = snprintf(buf, size, "feasible");
    else if (k->mode == SPEC_KEEP_TOP)
        n = snprintf(buf, size, "top %lld by %s", (long long)k->top,
                     result_fields[k->fig[0]].name);
    else {
        n = snprintf(buf, size, "pareto of");
        for (int i = 0; i < k->nfig && n >= 0 && (size_t)n < size; i++)
            n += snprintf(buf + n, size - (size_t)n, "%s%s", i ? ", " : " ",
                          result_fields[k->fig[i]].name);
    }
    for (int i = 0; i < k->ngroup && n >= 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%s", i ? "," : " per ",
                      spec_key_name((spec_key)k->group[i]));
    return n;
}
