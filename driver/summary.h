/*
 * summary.h - the end-of-sweep summary: one table per task, never
 * ranking across task types.
 *
 * A summary ranks points by their throughput per device: tokens/s per
 * GPU for an LLM, samples/s per GPU for a DLRM, among the points that
 * are ok and fit in memory (status ok and mem_fits = 1: a MAD-Max point
 * whose weights exceed the device memory never wins). For every task of
 * the spec, every model, and every hardware generation (detailed
 * fidelity; MAD-Max: every system), it prints the best point over the
 * cluster sizes, batches and strategies, best first:
 *   training (pretrain, finetune): GPUs, batch, strategy, throughput per
 *     GPU, MFU, iteration time, memory used and capacity, energy and
 *     cost per token (DLRM: per sample);
 *   serving (inference): GPUs, concurrent sequences, strategy, TTFT,
 *     TPOT, tokens/s per GPU, memory, energy and cost per generated token
 *     (DLRM: latency and samples/s per GPU).
 * Winners are re-evaluated from their ids on the calling rank, so the
 * printed figures are the rows' own.
 */
#ifndef MADSWEEP_SUMMARY_H
#define MADSWEEP_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "space.h"

/* Best point of one (model, system, task); id -1 when none. */
typedef struct summary_best {
    double value;
    int64_t id;
} summary_best;

/* Slots of a space: models x systems x tasks. */
int64_t summary_slots(const space *s);

/* Slot of the point at cursor indices idx. */
int64_t summary_slot(const space *s, const int64_t idx[SPACE_NAXES]);

/* Empties n slots. */
void summary_clear(summary_best *b, int64_t n);

/* The figure a point ranks by (see above); NaN when it may not win. */
double summary_value(const point_t *p, const result_t *r);

/* Keeps (v, id) in *b when it is better (higher, then lower id). */
void summary_consider(summary_best *b, double v, int64_t id);

/* Fills the slots from the rows of a finished sweep file (a resumed
 * sweep has no other record of the rows written before it). Returns 0,
 * or -1 with a message on err. */
int summary_scan(const char *path, const space *s, summary_best *b, FILE *err);

/* Prints the tables. */
void summary_print(FILE *out, const space *s, const summary_best *b);

#endif
