/*
 * engine.c - the two-stream event engine.
 *
 * Invariant: within one stream, events are appended in order, so a
 * stream's end times never decrease; an event's start is the maximum of
 * its stream clock and its dependencies' end times, never earlier.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>

void engine_init(engine *e, bool record)
{
    e->clock[0] = e->clock[1] = 0.0;
    e->count[0] = e->count[1] = 0;
    e->t_end = NULL;
    e->records = NULL;
    e->len = e->cap = 0;
    e->record = record;
    e->full = false;
}

void engine_free(engine *e)
{
    free(e->t_end);
    free(e->records);
    engine_init(e, e->record);
}

void engine_reset(engine *e)
{
    e->clock[0] = e->clock[1] = 0.0;
    e->count[0] = e->count[1] = 0;
    e->len = 0;
    e->full = false;
}

int engine_reserve(engine *e, size_t n)
{
    if (n <= e->cap)
        return 0;
    if (n > ENGINE_MAX_EVENTS) /* the doubling and sizes below stay in range */
        return -1;
    size_t cap = e->cap ? e->cap : 256;
    while (cap < n)
        cap *= 2;
    double *t = realloc(e->t_end, cap * sizeof *t);
    if (!t)
        return -1;
    e->t_end = t;
    if (e->record) {
        engine_record *r = realloc(e->records, cap * sizeof *r);
        if (!r)
            return -1;
        e->records = r;
    }
    e->cap = cap;
    return 0;
}

void engine_phase(engine *e, double t)
{
    e->clock[0] = e->clock[1] = t;
}

double engine_now(const engine *e)
{
    return e->clock[0] > e->clock[1] ? e->clock[0] : e->clock[1];
}

static const char *const engine_part_names[ENGINE_NPARTS] = {
    "EMB", "Attn", "TransformerFC", "MLPBot", "MLPTop"};

static const char *const engine_op_suffix[ENGINE_NOPS] = {
    "", "_c_wgt_ag", "_c_act_ar", "_c_wg_ar", "_c_wg_rs", "_c_all2all",
    "_c_ar"};

int engine_label_name(engine_label l, char *buf, size_t size)
{
    const char *part =
        l.part < ENGINE_NPARTS ? engine_part_names[l.part] : "?";
    const char *op = l.op < ENGINE_NOPS ? engine_op_suffix[l.op] : "?";
    if (l.layer >= 0)
        return snprintf(buf, size, "%s%d_%c%s", part, (int)l.layer,
                        l.bwd ? 'b' : 'f', op);
    return snprintf(buf, size, "%s_%c%s", part, l.bwd ? 'b' : 'f', op);
}
