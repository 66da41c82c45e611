/*
 * winners.h - the winners of the end-of-sweep summary, tracked
 * while the points are evaluated: the best point of every (model,
 * system, task) by its throughput per device (tokens/s per GPU for an
 * LLM, samples/s per GPU for a DLRM), among the points that are ok and
 * fit in memory (status ok and mem_fits = 1). Ties go to the lower point
 * id, so the winners do not depend on how the points were split over
 * ranks, chunks or runs (a merge of winners is associative, commutative
 * and idempotent). The tables are printed by the driver
 * (driver/sweep/summary.h), which re-evaluates each winner from its id.
 */
#ifndef MADSWEEP_WINNERS_H
#define MADSWEEP_WINNERS_H

#include <mpi.h>
#include <stdint.h>

#include "space.h"

/* Best point of one (model, system, task); id -1 when none. */
typedef struct winners_best {
    double value;
    int64_t id;
} winners_best;

/* Slots of a space: models x systems x tasks. */
int64_t winners_slots(const space *s);

/* Slot of the point at cursor indices idx. */
int64_t winners_slot(const space *s, const int64_t idx[SPACE_NAXES]);

/* Empties n slots. */
void winners_clear(winners_best *b, int64_t n);

/* The figure a point ranks by (see above); NaN when it may not win.
 * winners_rank is the same from a row's columns. */
double winners_value(const point_t *p, const result_t *r);
double winners_rank(model_kind kind, int32_t status, double fits, double sla_met,
                    double tokens_dev,
                    double samples_dev);

/* Keeps (v, id) in *b when it is better (higher, then lower id). */
void winners_consider(winners_best *b, double v, int64_t id);

/* Collective: every rank's n slots become the winners over all ranks. */
void winners_merge(MPI_Comm comm, winners_best *b, int64_t n);

#endif
