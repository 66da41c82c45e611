/*
 * winners.c - the end-of-sweep summary's winners per (model, system,
 * task) and their merge over ranks (see winners.h).
 */
#include "winners.h"

#include <math.h>
#include <stdlib.h>

#include "check.h"

int64_t winners_slots(const space *s)
{
    return s->radix[SPACE_MODEL] * s->radix[SPACE_SYSTEM] * s->radix[SPACE_TASK];
}

int64_t winners_slot(const space *s, const int64_t idx[SPACE_NAXES])
{
    return (idx[SPACE_MODEL] * s->radix[SPACE_SYSTEM] + idx[SPACE_SYSTEM]) *
               s->radix[SPACE_TASK] +
           idx[SPACE_TASK];
}

void winners_clear(winners_best *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        b[i].value = 0.0;
        b[i].id = -1;
    }
}

double winners_rank(model_kind kind, int32_t status, double fits, double sla_met,
                    double tokens_dev, double samples_dev)
{
    /* serving ranks at the SLA: a point that misses it is not a winner
     * (sla_met NaN: a figure the point does not have) */
    if (status != STATUS_OK || fits != 1.0 || sla_met == 0.0)
        return (double)NAN;
    double v = kind == MODEL_LLM ? tokens_dev : samples_dev;
    return isfinite(v) ? v : (double)NAN;
}

double winners_value(const point_t *p, const result_t *r)
{
    return winners_rank(p->model.kind, r->status, r->mem_fits, r->sla_met,
                        r->tokens_per_s_per_device, r->samples_per_s_per_device);
}

void winners_consider(winners_best *b, double v, int64_t id)
{
    if (!isfinite(v))
        return;
    if (b->id < 0 || v > b->value || (v == b->value && id < b->id)) {
        b->value = v;
        b->id = id;
    }
}

void winners_merge(MPI_Comm comm, winners_best *b, int64_t n)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    int64_t *id = malloc((size_t)(n > 0 ? n : 1) * sizeof *id);
    if (!v || !id)
        check_die("out of memory", __FILE__, __LINE__);
    /* in pieces: MPI counts are int */
    for (int64_t at = 0; at < n; at += 1 << 24) {
        int k = (int)(n - at < (1 << 24) ? n - at : (1 << 24));
        for (int64_t i = at; i < at + k; i++)
            v[i] = b[i].id >= 0 ? b[i].value : -(double)INFINITY;
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v + at, k, MPI_DOUBLE, MPI_MAX, comm));
        for (int64_t i = at; i < at + k; i++)
            id[i] = b[i].id >= 0 && b[i].value == v[i] ? b[i].id : INT64_MAX;
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, id + at, k, MPI_INT64_T, MPI_MIN, comm));
        for (int64_t i = at; i < at + k; i++) {
            b[i].id = id[i] == INT64_MAX ? -1 : id[i];
            b[i].value = b[i].id >= 0 ? v[i] : 0.0;
        }
    }
    free(v);
    free(id);
}
