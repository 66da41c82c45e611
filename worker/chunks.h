/*
 * chunks.h - work chunks of a counted space, cut by estimated cost.
 *
 * Chunks are ranges of consecutive ids that the ranks draw dynamically.
 * They are cut so that each costs about the same to evaluate, by the
 * space's per-cell weights (space.c: a 405B-parameter model costs more
 * per point than an 8B one, pre-training more than serving), not so that
 * each holds the same number of ids: a rank that draws the last chunk
 * never holds the others up for long. The cut is a pure function of the
 * counted space and the spec's `chunk` (ids per chunk on average), so
 * every rank computes the same chunks and a resumed run finds the chunks
 * of the first. A chunk never holds more than `max_len` ids (the rows a
 * rank buffers).
 */
#ifndef MADSWEEP_CHUNKS_H
#define MADSWEEP_CHUNKS_H

#include <stdint.h>

#include "space.h"

typedef struct chunks {
    int64_t n;       /* chunks */
    int64_t *lo;     /* [n + 1]: chunk c is ids [lo[c], lo[c + 1]) */
    int64_t ids;     /* ids per chunk on average (after the cap on the count) */
    int64_t max_len; /* ids in the longest chunk */
} chunks;

/* Cuts the counted space s into chunks of about `chunk_ids` ids at the
 * average cost (at most max_chunks chunks of that size: larger spaces get
 * larger chunks), none longer than `max_len` ids. Returns 0, or -1 when
 * out of memory. */
int chunks_plan(chunks *ch, const space *s, int64_t chunk_ids, int64_t max_chunks,
                int64_t max_len);

void chunks_free(chunks *ch);

#endif
