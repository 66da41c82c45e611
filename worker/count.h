/*
 * count.h - the count pass of a sweep: every rank counts a share of the
 * (model, system) blocks of the space without evaluating anything, and
 * the counts are summed so that every rank holds the whole space's
 * prefix sums (space_set_counts) and the rejected candidates per status
 * code. Cheap: O(cells x degree tuples) for the detailed auto set, no
 * candidate-by-candidate pass. The sweep runs it after its output file
 * exists, so that a job killed while counting leaves a file that
 * --resume picks up.
 */
#ifndef MADSWEEP_COUNT_H
#define MADSWEEP_COUNT_H

#include <mpi.h>
#include <stdint.h>

#include "space.h"

/* Called on rank 0 now and then: blocks counted by rank 0 so far out of
 * the blocks it counts (a progress estimate for the whole pass). */
typedef void (*count_tick)(int64_t done, int64_t mine, void *arg);

/* Collective. Fills s's counts and rejected[SPACE_NCODES] (summed over
 * ranks). `stop` (may be NULL) is polled between blocks: a rank asked to
 * stop (a signal, driver/job.h) counts no further block. Returns 0; 1 on
 * every rank when a rank was asked to stop (nothing set); or -1 on every
 * rank when out of memory or when the total overflows (nothing set). */
int count_run(MPI_Comm comm, space *s, int64_t *rejected, count_tick tick, void *arg,
              int (*stop)(void));

/* Collective: v[0 .. n) summed over the ranks, in place (in pieces: MPI
 * counts are int). */
void count_sum(MPI_Comm comm, int64_t *v, int64_t n);

#endif
