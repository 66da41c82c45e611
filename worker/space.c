/*
 * space.c - mixed-radix ids over the axes of a sweep spec.
 *
 * Invariant: space_encode(space_decode(id)) == id for 0 <= id < total,
 * and space_point() depends only on the id (never on the cursor's history:
 * the cursor only caches model and cluster copies keyed by their index).
 */
#include "space.h"

#include <stdio.h>
#include <string.h>

const char *const space_axis_names[SPACE_NAXES] = {"model", "system", "task",
                                                   "global_batch",
                                                   "strategy", "stack"};

const space_axis space_nest[SPACE_NAXES] = {SPACE_MODEL, SPACE_SYSTEM, SPACE_STACK,
                                            SPACE_TASK,  SPACE_BATCH,  SPACE_STRATEGY};

int space_init(space *s, const spec *sp, char *err, size_t size)
{
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->radix[SPACE_MODEL] = sp->nmodels;
    s->radix[SPACE_SYSTEM] = sp->nsystems;
    s->radix[SPACE_TASK] = sp->ntasks;
    s->radix[SPACE_BATCH] = sp->nbatches;
    s->radix[SPACE_STRATEGY] = sp->nstrats;
    s->radix[SPACE_STACK] = sp->nstacks;
    int64_t total = 1;
    for (int a = 0; a < SPACE_NAXES; a++) {
        if (s->radix[a] < 1 || total > INT64_MAX / s->radix[a]) {
            snprintf(err, size,
                     "the design space has more than 2^63 points "
                     "(axis '%s' has %lld values)",
                     space_axis_names[a], (long long)s->radix[a]);
            return -1;
        }
        total *= s->radix[a];
    }
    s->total = total;
    return 0;
}

void space_decode(const space *s, int64_t id, int64_t idx[SPACE_NAXES])
{
    for (int n = SPACE_NAXES - 1; n >= 0; n--) {
        space_axis a = space_nest[n];
        idx[a] = id % s->radix[a];
        id /= s->radix[a];
    }
}

int64_t space_encode(const space *s, const int64_t idx[SPACE_NAXES])
{
    int64_t id = 0;
    for (int n = 0; n < SPACE_NAXES; n++)
        id = id * s->radix[space_nest[n]] + idx[space_nest[n]];
    return id;
}

void space_cursor_init(space_cursor *c)
{
    memset(c, 0, sizeof *c);
    c->model = -1;
    c->system = -1;
    c->stack = -1;
}

status_code space_point(const space *s, space_cursor *c, int64_t id,
                        const char **where)
{
    const spec *sp = s->sp;
    int64_t *idx = c->idx;
    space_decode(s, id, idx);
    point_t *p = &c->p;
    p->fidelity = sp->fidelity;
    if (c->model != idx[SPACE_MODEL]) {
        p->model = sp->models[idx[SPACE_MODEL]];
        c->model = idx[SPACE_MODEL];
    }
    if (c->system != idx[SPACE_SYSTEM]) {
        p->cluster = sp->systems[idx[SPACE_SYSTEM]];
        if (sp->dsystems)
            p->system = sp->dsystems[idx[SPACE_SYSTEM]];
        c->system = idx[SPACE_SYSTEM];
    }
    if (c->stack != idx[SPACE_STACK]) {
        /* madmax: the "none" entry, which that fidelity never reads */
        p->stack = sp->stacks[idx[SPACE_STACK]];
        c->stack = idx[SPACE_STACK];
    }
    const spec_task *st = &sp->tasks[idx[SPACE_TASK]];
    task_t *t = &p->task;
    memset(t, 0, sizeof *t);
    t->kind = st->kind;
    t->freeze_emb = st->freeze_emb;
    t->freeze_dense = st->freeze_dense;
    t->freeze_top_mlp = st->freeze_top_mlp;
    t->freeze_bot_mlp = st->freeze_bot_mlp;
    t->min_frozen_layer = st->min_frozen_layer < 0 ||
                                  st->min_frozen_layer > p->model.layers
                              ? p->model.layers
                              : st->min_frozen_layer;
    t->detailed.frozen_layers = st->frozen_layers > p->model.layers
                                    ? p->model.layers
                                    : st->frozen_layers;
    t->detailed.dtype = st->dtype;
    t->detailed.prompt_tokens = st->prompt_tokens;
    t->detailed.decode_tokens = st->kind == TASK_INFERENCE ? st->decode_tokens : 0;
    int64_t batch = sp->batches[idx[SPACE_BATCH]];
    int64_t k = idx[SPACE_STRATEGY];
    status_code rc = sp->strat_auto ? sp->ops->auto_apply(p, k, batch)
                                    : autoplan_apply(p, &sp->strats[k], batch);
    if (rc != STATUS_OK) {
        if (where)
            *where = "strategy";
        return rc;
    }
    return eval_check(p, where);
}

int64_t space_count_valid(const space *s, space_cursor *c, int64_t lo,
                          int64_t hi, int64_t *by_code)
{
    int64_t n = 0;
    for (int64_t id = lo; id < hi; id++) {
        status_code rc = space_point(s, c, id, NULL);
        if (rc == STATUS_OK) {
            n++;
        } else if (by_code) {
            int k = (int)rc - STATUS_INVALID_VALUE;
            if (k >= 0 && k < SPACE_NCODES)
                by_code[k]++;
        }
    }
    return n;
}
