/*
 * chunks.c - cutting a counted space into chunks of equal estimated cost.
 *
 * The estimated cost of the ids before id x, F(x), is linear inside a
 * block (its cost spread evenly over its points) and known at block
 * starts (space.block_cost). Chunk boundaries are the ids where F first
 * reaches j * C for the chunk cost C = cost / chunks, rounded up; an
 * interval longer than the length cap is split evenly, and empty
 * intervals are dropped. Integer arithmetic only (128-bit products), so
 * the cut is identical on every rank and machine.
 */
#include "chunks.h"

#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 chunks_u128;

/* The smallest id x with F(x) >= t (t <= s->cost). */
static int64_t chunks_inverse(const space *s, int64_t t)
{
    if (t <= 0)
        return 0;
    if (t >= s->cost)
        return s->total;
    /* the last block starting at or below t: its cost exceeds t - start */
    int64_t lo = 0, hi = s->nblocks - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (s->block_cost[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t c = s->block_cost[lo + 1] - s->block_cost[lo];
    int64_t n = s->block_off[lo + 1] - s->block_off[lo];
    chunks_u128 num = (chunks_u128)(uint64_t)(t - s->block_cost[lo]) * (uint64_t)n;
    int64_t dx = (int64_t)((num + (uint64_t)c - 1) / (uint64_t)c);
    return s->block_off[lo] + dx;
}

int chunks_plan(chunks *ch, const space *s, int64_t chunk_ids, int64_t max_chunks,
                int64_t max_len)
{
    memset(ch, 0, sizeof *ch);
    int64_t total = s->total;
    int64_t ids = chunk_ids > 0 ? chunk_ids : 1;
    int64_t need = total / max_chunks + (total % max_chunks != 0);
    if (need > ids)
        ids = need;
    int64_t nt = total / ids + (total % ids != 0);
    int64_t cap = ids <= max_len / 4 ? 4 * ids : max_len;
    if (cap < 1)
        cap = 1;
    /* every interval of nt splits into at most ceil(len / cap) pieces */
    int64_t room = nt + total / cap + 2;
    ch->lo = malloc((size_t)(room + 1) * sizeof *ch->lo);
    if (!ch->lo)
        return -1;
    ch->ids = ids;
    ch->lo[0] = 0;
    int64_t n = 0, prev = 0;
    int64_t per = nt > 0 ? s->cost / nt + (s->cost % nt != 0) : 1;
    for (int64_t j = 1; j <= nt && prev < total; j++) {
        int64_t x = j == nt || per > s->cost / j ? total : chunks_inverse(s, j * per);
        if (x > total)
            x = total;
        if (x <= prev)
            continue;
        int64_t len = x - prev, pieces = len / cap + (len % cap != 0);
        for (int64_t q = 1; q <= pieces; q++) {
            int64_t y = prev + (int64_t)((chunks_u128)(uint64_t)len * (uint64_t)q /
                                         (uint64_t)pieces);
            if (y - ch->lo[n] > ch->max_len)
                ch->max_len = y - ch->lo[n];
            ch->lo[++n] = y;
        }
        prev = x;
    }
    ch->n = n;
    return 0;
}

void chunks_free(chunks *ch)
{
    free(ch->lo);
    memset(ch, 0, sizeof *ch);
}
