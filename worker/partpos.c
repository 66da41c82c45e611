/*
 * partpos.c - the part rows before every chunk (see partpos.h).
 *
 * Blocks are dealt round-robin: a rank tallies each of its blocks whole
 * (per part) and, for every chunk starting inside one, the block's ids
 * before that start; the tallies are summed over the ranks and the
 * blocks' prefix sums added. Integer sums only: identical on every rank.
 */
#include "partpos.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "count.h"

/* The first chunk starting at or after id. */
static int64_t partpos_first(const chunks *ch, int64_t id)
{
    int64_t a = 0, b = ch->n;
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (ch->lo[mid] < id)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

int partpos_plan(MPI_Comm comm, const space *s, const chunks *ch, const output_rows *r,
                 int64_t *starts)
{
    int rank, nranks, np = r->nparts;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &nranks));
    const spec *sp = s->sp;
    int64_t nb = s->nblocks, ncls = sp->nmodels * sp->ntasks;
    int *cls = malloc((size_t)(ncls > 0 ? ncls : 1) * sizeof *cls);
    int64_t *blk = calloc((size_t)(nb + 1) * (size_t)np, sizeof *blk);
    space_cursor *cur = malloc(sizeof *cur);
    int bad = !cls || !blk || !cur || space_cursor_init(cur, s) != 0, any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
        if (cur && !bad)
            space_cursor_free(cur);
        free(cur);
        free(cls);
        free(blk);
        return -1;
    }
    for (int64_t m = 0; m < sp->nmodels; m++)
        for (int64_t t = 0; t < sp->ntasks; t++)
            cls[m * sp->ntasks + t] = r->part_of[output_rows_kind(r, m, t)];
    memset(starts, 0, (size_t)(ch->n + 1) * (size_t)np * sizeof *starts);
    for (int64_t b = rank; b < nb; b += nranks) {
        int64_t b0 = s->block_off[b], b1 = s->block_off[b + 1];
        if (b1 == b0)
            continue;
        space_tally(s, cur, b, b1 - b0, cls, blk + (b + 1) * np);
        for (int64_t c = partpos_first(ch, b0); c < ch->n && ch->lo[c] < b1; c++)
            space_tally(s, cur, b, ch->lo[c] - b0, cls, starts + c * np);
    }
    space_cursor_free(cur);
    free(cur);
    free(cls);
    count_sum(comm, blk, (nb + 1) * np);
    count_sum(comm, starts, ch->n * np);
    /* blk[b + 1] becomes the part rows before block b + 1 */
    for (int64_t b = 1; b <= nb; b++)
        for (int p = 0; p < np; p++)
            blk[b * np + p] += blk[(b - 1) * np + p];
    for (int64_t c = 0; c < ch->n; c++) {
        int64_t b = space_block_of(s, ch->lo[c]);
        for (int p = 0; p < np; p++)
            starts[c * np + p] += blk[b * np + p];
    }
    for (int p = 0; p < np; p++)
        starts[ch->n * np + p] = blk[nb * np + p];
    free(blk);
    return 0;
}
