/*
 * count.c - the parallel count pass (see count.h).
 *
 * Blocks are dealt round-robin (all blocks have the same cells, so the
 * shares are even); the per-block counts and costs are summed with
 * MPI_Allreduce in pieces (MPI counts are int). Every early return is
 * taken by all ranks together.
 */
#include "count.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

void count_sum(MPI_Comm comm, int64_t *v, int64_t n)
{
    for (int64_t at = 0; at < n; at += 1 << 24) {
        int k = (int)(n - at < (1 << 24) ? n - at : (1 << 24));
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v + at, k, MPI_INT64_T, MPI_SUM, comm));
    }
}

int count_run(MPI_Comm comm, space *s, int64_t *rejected, count_tick tick, void *arg,
              int (*stop)(void))
{
    int rank, nranks;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &nranks));
    int64_t nb = s->nblocks;
    int64_t *n = calloc((size_t)nb + 1, sizeof *n);
    int64_t *w = calloc((size_t)nb + 1, sizeof *w);
    space_cursor *cur = malloc(sizeof *cur);
    int bad = !n || !w || !cur || space_cursor_init(cur, s) != 0, any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
        if (cur && !bad)
            space_cursor_free(cur);
        free(n);
        free(w);
        free(cur);
        return -1;
    }
    memset(rejected, 0, SPACE_NCODES * sizeof *rejected);
    int64_t mine = nb / nranks + (rank < nb % nranks), done = 0;
    int halt = 0;
    for (int64_t b = rank; b < nb && !halt; b += nranks) {
        n[b] = space_count_block(s, cur, b, rejected, &w[b]);
        if (rank == 0 && tick)
            tick(++done, mine, arg);
        halt = stop && stop() != 0;
    }
    space_cursor_free(cur);
    free(cur);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &halt, 1, MPI_INT, MPI_MAX, comm));
    if (halt) {
        free(n);
        free(w);
        return 1;
    }
    count_sum(comm, n, nb);
    count_sum(comm, w, nb);
    count_sum(comm, rejected, SPACE_NCODES);
    int rc = space_set_counts(s, n, w);
    free(n);
    free(w);
    return rc;
}
