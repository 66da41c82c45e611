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
 * cluster sizes, batches, software stacks and strategies, best first:
 *   training (pretrain, finetune): GPUs, batch, strategy, throughput per
 *     GPU, MFU, iteration time, memory used and capacity, energy and
 *     cost per token (DLRM: per sample);
 *   serving (inference): GPUs, concurrent sequences, strategy, TTFT,
 *     TPOT, tokens/s per GPU, memory, energy and cost per generated token
 *     (DLRM: latency and samples/s per GPU).
 * Winners are tracked by the worker (worker/winners.h) and re-evaluated
 * from their ids on the calling rank, so the printed figures are the
 * rows' own; a detailed row names the software stack the winner ran on.
 * Winner ids are dense point ids (worker/space.h): the space must be
 * counted (space_set_counts) before summary_print.
 */
#ifndef MADSWEEP_SUMMARY_H
#define MADSWEEP_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "../../worker/winners.h"

/* Fills the slots from the rows of a finished sweep file (a resumed
 * keep = "all" sweep has no other record of the rows written before it).
 * Returns 0, 1 for a reduced sweep's file (its rows are the kept ones
 * only, and the winners need not be among them: nothing filled), or -1
 * with a message on err. */
int summary_scan(const char *path, const space *s, winners_best *b, FILE *err);

/* Prints the tables. */
void summary_print(FILE *out, const space *s, const winners_best *b);

#endif
