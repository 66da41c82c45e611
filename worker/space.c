/*
 * space.c - dense ids over the valid points of a sweep spec.
 *
 * Invariants: once counted, every id in [0, total) decodes to a point that
 * passes the fidelity's rules, each valid combination has exactly one id,
 * and ids depend only on the spec (never on the rank count or on the
 * cursor's history: the cursor caches copies keyed by their index).
 * space_count_block() and space_point() enumerate a cell the same way
 * (space_cell), so a block's count is the number of ids it decodes to.
 */
#include "space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const space_axis_names[SPACE_NAXES] = {"model", "system", "task",
                                                   "global_batch",
                                                   "strategy", "stack", "parallel"};

const space_axis space_nest[SPACE_NOUTER] = {SPACE_MODEL, SPACE_SYSTEM, SPACE_STACK,
                                             SPACE_TASK, SPACE_BATCH};

static int space_mul(int64_t *acc, int64_t f)
{
    if (f < 1 || *acc > INT64_MAX / f)
        return -1;
    *acc *= f;
    return 0;
}

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
    s->radix[SPACE_PARALLEL] = sp->npar > 0 ? sp->npar : 1;
    int64_t total = 1;
    for (int a = 0; a < SPACE_NAXES; a++)
        if (space_mul(&total, s->radix[a]) != 0) {
            snprintf(err, size, "the design space has more than 2^63 "
                     "combinations (axis '%s' has %lld values)",
                     space_axis_names[a], (long long)s->radix[a]);
            return -1;
        }
    s->candidates = total;
    s->nblocks = sp->nmodels * sp->nsystems;
    s->cells = sp->nstacks * sp->ntasks * sp->nbatches;
    s->block_off = calloc((size_t)s->nblocks + 1, sizeof *s->block_off);
    s->block_cost = calloc((size_t)s->nblocks + 1, sizeof *s->block_cost);
    if (!s->block_off || !s->block_cost) {
        snprintf(err, size, "out of memory for %lld (model, system) blocks",
                 (long long)s->nblocks);
        space_free(s);
        return -1;
    }
    return 0;
}

void space_free(space *s)
{
    free(s->block_off);
    free(s->block_cost);
    s->block_off = s->block_cost = NULL;
}

int space_cursor_init(space_cursor *c, const space *s)
{
    memset(c, 0, sizeof *c);
    c->model = c->system = c->stack = -1;
    c->block = c->cell = -1;
    c->shape_model = c->shape_stack = -1;
    c->cell_off = calloc((size_t)s->cells + 1, sizeof *c->cell_off);
    bool listed = !(s->sp->fidelity == EVAL_DETAILED && s->sp->strat_auto);
    c->list = listed ? calloc((size_t)s->radix[SPACE_STRATEGY], sizeof *c->list) : NULL;
    if (!c->cell_off || (listed && !c->list)) {
        space_cursor_free(c);
        return -1;
    }
    return 0;
}

void space_cursor_free(space_cursor *c)
{
    free(c->cell_off);
    free(c->list);
    c->cell_off = c->list = NULL;
}

/* Puts the values of block b's cell k into c->p and c->idx (all but the
 * strategy). */
static void space_cell_point(const space *s, space_cursor *c, int64_t b, int64_t k)
{
    const spec *sp = s->sp;
    int64_t *idx = c->idx;
    idx[SPACE_MODEL] = b / sp->nsystems;
    idx[SPACE_SYSTEM] = b % sp->nsystems;
    idx[SPACE_BATCH] = k % sp->nbatches;
    idx[SPACE_TASK] = k / sp->nbatches % sp->ntasks;
    idx[SPACE_STACK] = k / (sp->nbatches * sp->ntasks);
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
    t->detailed.concurrency = st->concurrency;
    t->detailed.ttft_max_s = st->ttft_max_s;
    t->detailed.tpot_max_s = st->tpot_max_s;
    t->detailed.max_seqs = st->max_seqs;
    t->detailed.token_budget = st->token_budget;
    t->detailed.rounds = st->rounds;
    t->detailed.front_end = st->front_end;
    /* a disaggregated prefill pool: the spec's, on the system's hardware
     * (its domain and NIC where the pool states none) unless it names
     * its own, its collectives the system's; a pool the
     * hardware cannot build (devices against its scale-up domain) is
     * left without devices, which the fidelity's check rejects for the
     * whole cell ("prefill") */
    p->prefill.on = false;
    if (st->prefill.on) {
        point_prefill *f = &p->prefill;
        *f = st->prefill;
        eval_prefill_network(f, &p->system, !st->prefill_hw);
        const char *bad = NULL;
        if (topo_system_derive(&f->system, &bad) != STATUS_OK)
            f->system.devices = 0;
    }
}

/* Applies candidate k with the cell's batch to c->p (the task of the
 * cell is put back first: candidates write into it). */
static status_code space_apply(const space *s, space_cursor *c, int64_t k)
{
    const spec *sp = s->sp;
    int64_t batch = sp->batches[c->idx[SPACE_BATCH]];
    int64_t nopt = s->radix[SPACE_STRATEGY];
    c->idx[SPACE_PARALLEL] = k / nopt;
    c->idx[SPACE_STRATEGY] = k % nopt;
    c->p.task = c->cell_task;
    return sp->strat_auto ? sp->ops->auto_apply(&c->p, k, batch)
           : sp->dstrats  ? detailed_template_apply(&c->p, &sp->dstrats[k], batch)
                          : autoplan_apply(&c->p, &sp->strats[k], batch);
}

/* Estimated cost of evaluating one point of the cell in c->p, in units
 * of about 150 ns on one core (deterministic: chunks are cut by it).
 * Measured on the shipped catalogues: a feasible detailed transformer
 * point costs 1-3 us (the engine, three times: nominal and the band's two
 * ends, more with more layers), an infeasible one a fifth of that (the
 * memory check stops it), so the weight scales the engine's share by a
 * feasibility proxy: 1 / (1 + 8 r) with r the model state (16 bytes per
 * parameter in training, 2 in serving) over the system's memory, plus in
 * training the activations of one sequence (34 s h bytes per layer,
 * Korthikanti et al. 2022) over one device's memory split 32 ways (a
 * typical tp x pp). DLRM points are cheap; madmax runs one event chain
 * per layer. Within a factor of about 2.5 of measured per-point times. */
static int64_t space_cell_weight(const space *s, const point_t *p)
{
    double layers = p->model.layers > 0 ? (double)p->model.layers : 1.0;
    if (s->sp->fidelity != EVAL_DETAILED)
        return 4 + (int64_t)layers / 4;
    if (p->model.kind == MODEL_DLRM)
        return 4;
    double total = 0, per = 0;
    detailed_params(&p->model, &p->task.detailed, &total, &per);
    bool train = p->task.kind != TASK_INFERENCE;
    double mem = (double)p->system.devices * p->system.hw.mem_capacity_bytes;
    double cap = p->system.hw.mem_capacity_bytes;
    double act = 34.0 * (double)p->model.seq_len * (double)p->model.hidden * layers;
    double r = mem > 0 ? (train ? 16.0 : 2.0) * total / mem : 1.0;
    if (train && cap > 0)
        r += act / (32.0 * cap);
    double eng = train ? 10.0 + layers / 8.0 : 6.0 + layers / 16.0;
    return 2 + llround(eng / (1.0 + 8.0 * r));
}

/* Whether the cell's global batch is one of its model kind's
 * (global_batch = { llm = [...]; dlrm = [...]; }): STATUS_OK, else
 * STATUS_INVALID_BATCH_KIND. A serving task that sets its own requests
 * in flight (a concurrency, "max" or "sla", under continuous batching:
 * cost/detailed/serve/steady.c and disagg.c read the batch only at
 * concurrency 0 or a static batch) gives the same row under every batch
 * but its micro_batch column (issue 29: each row repeated once per
 * global batch): only the kind's first batch is a point, the others
 * STATUS_INVALID_BATCH_UNUSED. */
static status_code space_batch_status(const space *s, const space_cursor *c)
{
    unsigned kind = 1u << c->p.model.kind;
    int64_t b = c->idx[SPACE_BATCH];
    if (!(s->sp->batch_kinds[b] & kind))
        return STATUS_INVALID_BATCH_KIND;
    const task_t *t = &c->p.task;
    if (c->p.fidelity != EVAL_DETAILED || c->p.model.kind != MODEL_LLM ||
        t->kind != TASK_INFERENCE ||
        t->detailed.concurrency == 0 || t->detailed.scheduler == TASK_SCHED_STATIC)
        return STATUS_OK;
    for (int64_t j = 0; j < b; j++)
        if (s->sp->batch_kinds[j] & kind)
            return STATUS_INVALID_BATCH_UNUSED;
    return STATUS_OK;
}

/* Enumerates cell k of block b into the cursor (c->cell_n strategies);
 * rejected candidates are added to rejected[code] when it is not NULL. */
static int64_t space_cell(const space *s, space_cursor *c, int64_t b, int64_t k,
                          int64_t *rejected)
{
    const spec *sp = s->sp;
    space_cell_point(s, c, b, k);
    c->cell_task = c->p.task;
    c->cell = k;
    c->hint = 0;
    c->cell_n = 0;
    status_code bs = space_batch_status(s, c);
    if (bs != STATUS_OK) {
        /* the batch is not one of this model kind's, or changes nothing
         * of the task's: no candidate */
        if (rejected)
            rejected[bs] += s->radix[SPACE_STRATEGY] * s->radix[SPACE_PARALLEL];
        return 0;
    }
    if (!c->list) {
        /* detailed auto: by degree tuple, then one candidate's check for
         * the rules that hold for the whole cell (model, task, stack) */
        if (c->shape_model != c->model || c->shape_stack != c->stack) {
            detailed_auto_shape_of(&c->p, &c->shape);
            c->shape_model = c->model;
            c->shape_stack = c->stack;
        }
        int64_t batch = sp->batches[c->idx[SPACE_BATCH]];
        const topo_t *tp = &c->p.system.topo;
        int64_t domain = tp->nlevels > 0 ? tp->level[0].span : c->p.system.devices;
        int64_t n = detailed_auto_cell_init(&c->shape, c->p.system.devices, domain,
                                            c->p.task.kind == TASK_INFERENCE, batch,
                                            &c->dc, rejected);
        if (n > 0) {
            const char *where = NULL;
            status_code rc = space_apply(s, c, detailed_auto_cell_candidate(&c->dc, 0, NULL));
            if (rc == STATUS_OK)
                rc = eval_check(&c->p, &where);
            if (rc != STATUS_OK) {
                if (rejected)
                    rejected[rc] += n;
                n = 0;
            }
            c->p.task = c->cell_task;
        }
        c->cell_n = n;
        return n;
    }
    for (int64_t j = 0; j < s->radix[SPACE_STRATEGY]; j++) {
        const char *where = NULL;
        status_code rc = space_apply(s, c, j);
        if (rc == STATUS_OK)
            rc = eval_check(&c->p, &where);
        if (rc == STATUS_OK)
            c->list[c->cell_n++] = j;
        else if (rejected && (int)rc >= 0 && (int)rc < SPACE_NCODES)
            rejected[rc]++;
    }
    c->p.task = c->cell_task;
    return c->cell_n;
}

int64_t space_count_block(const space *s, space_cursor *c, int64_t b,
                          int64_t *rejected, int64_t *cost)
{
    int64_t n = 0, w = 0;
    c->block = -1; /* cell_off is rebuilt here: forget the cached block */
    for (int64_t k = 0; k < s->cells; k++) {
        c->cell_off[k] = n;
        int64_t m = space_cell(s, c, b, k, rejected);
        n += m;
        w += m * space_cell_weight(s, &c->p);
    }
    c->cell_off[s->cells] = n;
    c->block = b;
    if (cost)
        *cost = w;
    return n;
}

int space_set_counts(space *s, const int64_t *count, const int64_t *cost)
{
    s->block_off[0] = s->block_cost[0] = 0;
    for (int64_t b = 0; b < s->nblocks; b++) {
        if (count[b] < 0 || cost[b] < 0 || s->block_off[b] > INT64_MAX - count[b] ||
            s->block_cost[b] > INT64_MAX - cost[b])
            return -1;
        s->block_off[b + 1] = s->block_off[b] + count[b];
        s->block_cost[b + 1] = s->block_cost[b] + cost[b];
    }
    s->total = s->block_off[s->nblocks];
    s->cost = s->block_cost[s->nblocks];
    return 0;
}

int space_count_all(space *s, space_cursor *c, int64_t *rejected)
{
    int64_t *n = calloc((size_t)s->nblocks + 1, sizeof *n);
    int64_t *w = calloc((size_t)s->nblocks + 1, sizeof *w);
    int rc = -1;
    if (n && w) {
        for (int64_t b = 0; b < s->nblocks; b++)
            n[b] = space_count_block(s, c, b, rejected, &w[b]);
        rc = space_set_counts(s, n, w);
    }
    free(n);
    free(w);
    return rc;
}

status_code space_try(const space *s, space_cursor *c, const int64_t idx[SPACE_NAXES])
{
    const spec *sp = s->sp;
    int64_t b = idx[SPACE_MODEL] * sp->nsystems + idx[SPACE_SYSTEM];
    int64_t k = (idx[SPACE_STACK] * sp->ntasks + idx[SPACE_TASK]) * sp->nbatches +
                idx[SPACE_BATCH];
    c->cell = -1; /* the cursor's enumeration is no longer the cell's */
    c->block = -1;
    space_cell_point(s, c, b, k);
    c->cell_task = c->p.task;
    status_code bs = space_batch_status(s, c);
    if (bs != STATUS_OK)
        return bs;
    const char *where = NULL;
    if (idx[SPACE_PARALLEL] < 0 || idx[SPACE_PARALLEL] >= s->radix[SPACE_PARALLEL] ||
        idx[SPACE_STRATEGY] < 0 || idx[SPACE_STRATEGY] >= s->radix[SPACE_STRATEGY])
        return STATUS_INVALID_VALUE;
    status_code rc = space_apply(s, c, idx[SPACE_PARALLEL] * s->radix[SPACE_STRATEGY] +
                                           idx[SPACE_STRATEGY]);
    return rc == STATUS_OK ? eval_check(&c->p, &where) : rc;
}

int64_t space_block_of(const space *s, int64_t id)
{
    int64_t lo = 0, hi = s->nblocks - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (s->block_off[mid] <= id)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void space_tally(const space *s, space_cursor *c, int64_t b, int64_t upto, const int *cls,
                 int64_t *n)
{
    const spec *sp = s->sp;
    if (c->block != b) {
        space_count_block(s, c, b, NULL, NULL);
        c->cell = -1;
    }
    const int *row = cls + (b / sp->nsystems) * sp->ntasks;
    for (int64_t k = 0; k < s->cells && c->cell_off[k] < upto; k++) {
        int x = row[k / sp->nbatches % sp->ntasks];
        int64_t hi = c->cell_off[k + 1] < upto ? c->cell_off[k + 1] : upto;
        if (x >= 0)
            n[x] += hi - c->cell_off[k];
    }
}

status_code space_point(const space *s, space_cursor *c, int64_t id,
                        const char **where)
{
    if (id < 0 || id >= s->total) {
        if (where)
            *where = "point id";
        return STATUS_INVALID_VALUE;
    }
    int64_t b = c->block;
    if (b < 0 || id < s->block_off[b] || id >= s->block_off[b + 1]) {
        b = space_block_of(s, id);
        space_count_block(s, c, b, NULL, NULL);
        c->cell = -1;
    }
    int64_t r = id - s->block_off[b];
    int64_t k = c->cell;
    if (k < 0 || r < c->cell_off[k] || r >= c->cell_off[k + 1]) {
        int64_t lo = 0, hi = s->cells - 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (c->cell_off[mid] <= r)
                lo = mid;
            else
                hi = mid - 1;
        }
        k = lo;
        space_cell(s, c, b, k, NULL);
    }
    r -= c->cell_off[k];
    int64_t cand = c->list ? c->list[r] : detailed_auto_cell_candidate(&c->dc, r, &c->hint);
    status_code rc = space_apply(s, c, cand);
    if (rc != STATUS_OK) {
        if (where)
            *where = "strategy";
        return rc;
    }
    return eval_check(&c->p, where);
}
