/*
 * worker.c - dynamic chunk scheduling, evaluation, row output and the
 * sync points of reduced sweeps (see worker.h).
 *
 * Counters on rank 0 (an MPI window of four int64): [0] next chunk to
 * draw (plus W_STOP once per requested sync), [1] points evaluated, [2]
 * ids processed, [3] halt requests (keep = "all": a rank that was asked
 * to stop adds one; every rank reads it with each draw, in the same round
 * trip, and leaves the loop when it is set). Every rank holds a shared
 * lock on the window for the whole loop (MPI_Win_lock_all) and draws with
 * MPI_Fetch_and_op + MPI_Win_flush, one chunk of thousands of ids per
 * round trip, so rank 0 is never a bottleneck and no message is sent per
 * point. Invariants: a chunk's rows and digest are written before its
 * progress byte; every id of a chunk
 * is a valid point (checked: the enumeration and the fidelity's rules
 * agree, or the run stops); at a sync point every chunk below the stop
 * chunk X has been evaluated and every chunk at or above it has not, so
 * a checkpoint covers exactly [0, X).
 */
#define _POSIX_C_SOURCE 200809L
#include "worker.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cost/elastic.h"
#include "check.h"
#include "count.h"
#include "digest.h"
#include "kept.h"
#include "partpos.h"

enum { W_NEXT = 0, W_EVALUATED = 1, W_IDS = 2, W_HALT = 3, W_NCOUNTERS = 4 };

/* Added to the chunk counter to make every rank's next draw a stop. */
#define W_STOP (INT64_C(1) << 40)

/* Evaluated ids between two looks at the stop flag inside a chunk. */
#define WORKER_STOP_POLL 1024

static bool worker_asked(const worker *w)
{
    return w->stop && w->stop() != 0;
}

static int64_t worker_fetch_add(worker *w, int slot, int64_t add)
{
    int64_t old = 0;
    CHECK_MPI(MPI_Fetch_and_op(&add, &old, MPI_INT64_T, 0, slot, MPI_SUM,
                               w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
    return old;
}

/* keep = "all": draws the next chunk and reads the halt counter in one
 * round trip. */
static int64_t worker_draw(worker *w, int64_t *halt)
{
    int64_t old = 0, one = 1;
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, W_NEXT, MPI_SUM, w->win));
    CHECK_MPI(MPI_Fetch_and_op(NULL, halt, MPI_INT64_T, 0, W_HALT, MPI_NO_OP, w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
    return old;
}

/* keep = "all": tells every rank to stop drawing (this one was asked). */
static void worker_request_halt(worker *w)
{
    int64_t one = 1;
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, W_HALT, 1, MPI_INT64_T,
                             MPI_SUM, w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
}

/* The test hooks after each chunk of this rank. */
static void worker_hooks(worker *w)
{
    if (w->kill_after > 0 && w->chunks_done >= w->kill_after)
        raise(SIGKILL);
    if (w->stop_after > 0 && w->rank == 0 && w->chunks_done == w->stop_after)
        raise(SIGUSR1);
    if (w->hold_after > 0 && w->chunks_done == w->hold_after) {
        /* a sweep that cannot finish before the test's signal lands (issue
         * 29: a loaded machine finished the slowed sweep first); 60 s at most */
        struct timespec t = {.tv_sec = 0, .tv_nsec = 10000000L};
        for (int i = 0; i < 6000 && !worker_asked(w); i++)
            nanosleep(&t, NULL);
    }
    if (w->delay_ms > 0) { /* a slow sweep, so that a test can interrupt it */
        struct timespec t = {.tv_sec = (time_t)(w->delay_ms / 1000),
                             .tv_nsec = (long)(w->delay_ms % 1000) * 1000000L};
        while (nanosleep(&t, &t) != 0 && !worker_asked(w))
            ;
    }
}

void worker_progress(worker *w, int64_t *chunks_drawn, int64_t *evaluated)
{
    int64_t v[2] = {0, 0};
    CHECK_MPI(MPI_Fetch_and_op(NULL, &v[0], MPI_INT64_T, 0, W_NEXT,
                               MPI_NO_OP, w->win));
    CHECK_MPI(MPI_Fetch_and_op(NULL, &v[1], MPI_INT64_T, 0, W_EVALUATED,
                               MPI_NO_OP, w->win));
    CHECK_MPI(MPI_Win_flush(0, w->win));
    v[0] %= W_STOP;
    *chunks_drawn = v[0] < w->ch->n ? v[0] : w->ch->n;
    *evaluated = v[1];
}

/* Plan texts per strategy for one system (formatting costs as much as
 * a small evaluation, and the text depends only on system and strategy:
 * detailed texts leave out the micro-batch, which inference derives from
 * the global batch). */
typedef struct worker_plans {
    int64_t system; /* -1: empty */
    int64_t n;
    output_rows_texts *text;
    uint8_t *have;
} worker_plans;

/* A rank's evaluation state. */
typedef struct worker_ctx {
    space_cursor *cur;
    engine e;
    worker_plans pc;
    char *buf; /* one chunk of rows */
} worker_ctx;

/* Feasible rows buffered between sync points, with their chunks. */
typedef struct worker_rows {
    char *buf;
    int64_t n, cap;            /* rows */
    int64_t *chunk, *count;    /* per buffered chunk */
    uint64_t *digest;          /* per buffered chunk: of its rows */
    int64_t nchunks, ccap;
} worker_rows;

static const output_rows_texts *worker_plan_text(worker_plans *pc,
                                            const space_cursor *cur)
{
    int64_t k = cur->idx[SPACE_STRATEGY];
    if (pc->system != cur->idx[SPACE_SYSTEM]) {
        memset(pc->have, 0, (size_t)pc->n);
        pc->system = cur->idx[SPACE_SYSTEM];
    }
    if (!pc->have[k]) {
        output_rows_texts_of(&cur->p, &pc->text[k]);
        pc->have[k] = 1;
    }
    return &pc->text[k];
}

/* Builds and evaluates point id into x->cur (eval_run: the point is
 * checked by the enumeration); returns its status. */
static status_code worker_eval(worker *w, worker_ctx *x, int64_t id, result_t *res)
{
    if (space_point(w->s, x->cur, id, NULL) != STATUS_OK)
        check_die("internal error: a point id of the space breaks the "
                  "fidelity's rules (enumeration and rules disagree)",
                  __FILE__, __LINE__);
    status_code rc = eval_run(&x->cur->p, &x->e, res, NULL);
    if (rc == STATUS_NOMEM)
        check_die("evaluation failed (out of memory)", __FILE__, __LINE__);
    if (rc == STATUS_OK && w->s->sp->elasticities)
        elastic_eval(&x->cur->p, &x->e, res);
    return rc; /* data, or invalid:non-finite / invalid:negative (a row) */
}

static void worker_pack(worker *w, worker_ctx *x, int64_t id, const result_t *res,
                        char *row)
{
    output_rows_pack(w->rows, row, id, x->cur->idx, &x->cur->p, res,
                     worker_plan_text(&x->pc, x->cur));
}

/* Counts an evaluated point of this run (and the summary's winners). */
static void worker_count(worker *w, const worker_ctx *x, int64_t id, status_code rc,
                         const result_t *res)
{
    w->evaluated++;
    if (rc != STATUS_OK) {
        if (status_is_data(rc))
            w->infeasible++;
        else
            w->invalid++; /* a non-finite or negative figure (eval_run) */
        return;
    }
    w->ok++;
    winners_consider(&w->best[winners_slot(w->s, x->cur->idx)],
                     winners_value(&x->cur->p, res), id);
}

/* keep = "all": evaluates ids [lo, hi) into x->buf; returns the rows,
 * or -1 when this process was asked to stop meanwhile (the chunk is
 * dropped: the caller restores its counts). */
static int64_t worker_chunk(worker *w, worker_ctx *x, int64_t lo, int64_t hi)
{
    size_t rs = w->rows->t.size;
    result_t res;
    for (int64_t id = lo; id < hi; id++) {
        if ((id - lo) % WORKER_STOP_POLL == WORKER_STOP_POLL - 1 && worker_asked(w))
            return -1;
        status_code rc = worker_eval(w, x, id, &res);
        worker_pack(w, x, id, &res, x->buf + (size_t)(id - lo) * rs);
        worker_count(w, x, id, rc, &res);
    }
    return hi - lo;
}

static int worker_rows_room(worker_rows *rb, size_t rs, int64_t rows)
{
    if (rb->n + rows > rb->cap) {
        int64_t cap = rb->cap ? rb->cap : 1024;
        while (cap < rb->n + rows)
            cap *= 2;
        char *nb = realloc(rb->buf, (size_t)cap * rs);
        if (!nb)
            return -1;
        rb->buf = nb;
        rb->cap = cap;
    }
    if (rb->nchunks == rb->ccap) {
        int64_t cap = rb->ccap ? 2 * rb->ccap : 64;
        int64_t *c = realloc(rb->chunk, (size_t)cap * sizeof *c);
        if (c)
            rb->chunk = c;
        int64_t *k = realloc(rb->count, (size_t)cap * sizeof *k);
        if (k)
            rb->count = k;
        uint64_t *d = realloc(rb->digest, (size_t)cap * sizeof *d);
        if (d)
            rb->digest = d;
        if (!c || !k || !d)
            return -1;
        rb->ccap = cap;
    }
    return 0;
}

/* Reduced sweeps: evaluates chunk c into the reducer and, feasible-only,
 * its feasible rows into rb. */
static void worker_chunk_kept(worker *w, worker_ctx *x, int64_t c, worker_rows *rb)
{
    int64_t lo = w->ch->lo[c], hi = w->ch->lo[c + 1];
    bool rows = w->red->k->mode == SPEC_KEEP_FEASIBLE;
    size_t rs = w->rows->t.size;
    if (rows && worker_rows_room(rb, rs, hi - lo) != 0)
        check_die("out of memory buffering feasible rows", __FILE__, __LINE__);
    int64_t n = 0;
    result_t res;
    for (int64_t id = lo; id < hi; id++) {
        status_code rc = worker_eval(w, x, id, &res);
        reduce_add(w->red, id, reduce_group(w->red, x->cur->idx), (int)rc, &res);
        worker_count(w, x, id, rc, &res);
        if (rows && rc == STATUS_OK)
            worker_pack(w, x, id, &res, rb->buf + (size_t)(rb->n + n++) * rs);
    }
    if (rows) {
        rb->chunk[rb->nchunks] = c;
        rb->digest[rb->nchunks] = output_rows_digest_n(w->rows, rb->buf + (size_t)rb->n * rs, n);
        rb->count[rb->nchunks++] = n;
        rb->n += n;
    }
}

/* Writes the /parts/index entry of chunk c: its first row and the part
 * rows before it (nothing without parts). */
static void worker_entry(worker *w, int64_t c, int64_t row, const int64_t *pos)
{
    int np = w->rows->nparts;
    if (np == 0)
        return;
    int64_t e[1 + OUTPUT_NKINDS];
    e[0] = row;
    for (int p = 0; p < np; p++)
        e[1 + p] = pos[p];
    output_write_index(w->out, c, 1, e, false);
}

/* Feasible-only, at a sync: the buffered rows of chunks [base, stop) go
 * to /results in chunk order, their part rows to the parts (offsets from
 * the summed per-chunk counts of rows and of each part's rows), with
 * the chunks' /parts/index entries and that of chunk stop (rank 0: the
 * row and part rows a resumed run continues from). */
static void worker_flush_rows(worker *w, worker_rows *rb, int64_t base, int64_t stop)
{
    const output_rows *r = w->rows;
    int np = r->nparts, k1 = 1 + np;
    int64_t m = stop - base;
    int64_t *off = calloc(((size_t)(m > 0 ? m : 1) + 1) * (size_t)k1, sizeof *off);
    if (!off)
        check_die("out of memory for row offsets", __FILE__, __LINE__);
    size_t rs = r->t.size;
    for (int64_t i = 0, at = 0; i < rb->nchunks; at += rb->count[i++]) {
        int64_t *o = off + (rb->chunk[i] - base + 1) * k1;
        o[0] = rb->count[i];
        for (int64_t j = 0; j < rb->count[i]; j++) {
            int p = output_rows_part_of(r, rb->buf + (size_t)(at + j) * rs);
            if (p >= 0)
                o[1 + p]++;
        }
    }
    count_sum(w->comm, off, (m + 1) * k1);
    for (int64_t i = 0; i < m; i++)
        for (int k = 0; k < k1; k++)
            off[(i + 1) * k1 + k] += off[i * k1 + k];
    double t0 = MPI_Wtime();
    int64_t parts[OUTPUT_NKINDS], pos[OUTPUT_NKINDS];
    for (int p = 0; p < np; p++)
        parts[p] = w->part_done[p] + off[m * k1 + 1 + p];
    output_grow(w->out, w->rows_done + off[m * k1], parts);
    for (int64_t i = 0, at = 0; i < rb->nchunks; at += rb->count[i++]) {
        const int64_t *o = off + (rb->chunk[i] - base) * k1;
        for (int p = 0; p < np; p++)
            pos[p] = w->part_done[p] + o[1 + p];
        output_write_rows(w->out, w->rows_done + o[0], rb->count[i], rb->buf + (size_t)at * rs,
                          pos, false);
        worker_entry(w, rb->chunk[i], w->rows_done + o[0], pos);
    }
    if (w->rank == 0 && stop < w->ch->n)
        worker_entry(w, stop, w->rows_done + off[m * k1], parts);
    /* the chunks' digests: each from the rank that evaluated it, summed
     * into rank 0's copy and written by it in one piece */
    uint64_t *dg = calloc((size_t)(m > 0 ? m : 1), sizeof *dg);
    if (!dg)
        check_die("out of memory for chunk digests", __FILE__, __LINE__);
    for (int64_t i = 0; i < rb->nchunks; i++)
        dg[rb->chunk[i] - base] = rb->digest[i];
    for (int64_t at2 = 0; at2 < m; at2 += 1 << 24) {
        int k = (int)(m - at2 < (1 << 24) ? m - at2 : (1 << 24));
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, dg + at2, k, MPI_UINT64_T, MPI_BXOR,
                                w->comm));
    }
    if (w->rank == 0)
        output_write_digests(w->out, base, m, dg);
    free(dg);
    w->t_write += MPI_Wtime() - t0;
    w->rows_done += off[m * k1];
    for (int p = 0; p < np; p++)
        w->part_done[p] = parts[p];
    rb->n = rb->nchunks = 0;
    free(off);
}

/* The chunk of id (bisection of the cut). */
static int64_t worker_chunk_of(const chunks *ch, int64_t id)
{
    int64_t a = 0, b = ch->n - 1;
    while (a < b) {
        int64_t mid = a + (b - a + 1) / 2;
        if (ch->lo[mid] <= id)
            a = mid;
        else
            b = mid - 1;
    }
    return a;
}

/* Where rank r's slice of the n kept ids (sorted) starts: at n * r /
 * nranks, moved on to the next chunk boundary, so that the kept rows of
 * a chunk are all one rank's (it digests them). */
static int64_t worker_slice_start(const chunks *ch, const int64_t *ids, int64_t n,
                                  int r, int nranks)
{
    int64_t i = n * r / nranks;
    if (r == 0 || i >= n)
        return r == 0 ? 0 : n;
    int64_t c = worker_chunk_of(ch, ids[i - 1]);
    while (i < n && ids[i] < ch->lo[c + 1])
        i++;
    return i;
}

/* The first of the n sorted ids at or after id. */
static int64_t worker_lower_bound(const int64_t *ids, int64_t n, int64_t id)
{
    int64_t a = 0, b = n;
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (ids[mid] < id)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* A ranked sweep's /digests and /parts/index: this rank writes those of
 * the chunks from its slice's first chunk (rank 0: chunk 0) up to the
 * next slice's: the digest of each one's kept rows (none: the digest of
 * no rows), and its first row with the part rows before it (pos0: the
 * part rows before row lo, the slice's first). */
static void worker_kept_chunks(worker *w, const int64_t *ids, int64_t n, int64_t lo,
                               int64_t hi, const char *buf, int nranks, const int64_t *pos0)
{
    int64_t c0 = w->rank == 0 ? 0 : lo < n ? worker_chunk_of(w->ch, ids[lo]) : w->ch->n;
    int64_t c1 = w->rank == nranks - 1 ? w->ch->n
                 : hi < n ? worker_chunk_of(w->ch, ids[hi]) : w->ch->n;
    if (c1 < c0)
        c1 = c0;
    int np = w->rows->nparts, k1 = 1 + np;
    uint64_t *dg = malloc((size_t)(c1 - c0 > 0 ? c1 - c0 : 1) * sizeof *dg);
    int64_t *ent = malloc((size_t)(c1 - c0 > 0 ? c1 - c0 : 1) * (size_t)k1 * sizeof *ent);
    if (!dg || !ent)
        check_die("out of memory for chunk digests", __FILE__, __LINE__);
    for (int64_t c = c0; c < c1; c++)
        dg[c - c0] = DIGEST_SEED;
    size_t rs = w->rows->t.size;
    for (int64_t i = lo; i < hi; i++) {
        int64_t c = worker_chunk_of(w->ch, ids[i]);
        if (c >= c0 && c < c1)
            dg[c - c0] = output_rows_digest(w->rows, dg[c - c0], buf + (size_t)(i - lo) * rs);
    }
    output_write_digests(w->out, c0, c1 - c0, dg);
    int64_t pos[OUTPUT_NKINDS], j = lo;
    for (int p = 0; p < np; p++)
        pos[p] = pos0[p];
    for (int64_t c = c0; np > 0 && c < c1; c++) {
        int64_t first = worker_lower_bound(ids, n, w->ch->lo[c]);
        first = first < lo ? lo : first > hi ? hi : first;
        for (; j < first; j++) {
            int p = output_rows_part_of(w->rows, buf + (size_t)(j - lo) * rs);
            if (p >= 0)
                pos[p]++;
        }
        ent[(c - c0) * k1] = first;
        for (int p = 0; p < np; p++)
            ent[(c - c0) * k1 + 1 + p] = pos[p];
    }
    if (np > 0)
        output_write_index(w->out, c0, c1 - c0, ent, false);
    free(ent);
    free(dg);
}

/* The last sync of a ranked sweep: rank 0's kept entries, sorted by id,
 * are re-evaluated in slices by every rank and written to /results in id
 * order; /groups gets the counts and how many points each group kept. */
static void worker_finish_ranked(worker *w, worker_ctx *x)
{
    reduce *r = w->red;
    double t0 = MPI_Wtime();
    int64_t n = 0;
    reduce_entry *e = NULL;
    int64_t *kept = calloc((size_t)r->ngroups, sizeof *kept);
    if (!kept)
        check_die("out of memory", __FILE__, __LINE__);
    if (w->rank == 0) {
        e = reduce_entries(r, &n);
        if (!e)
            check_die("out of memory for the kept points", __FILE__, __LINE__);
        for (int64_t i = 0; i < n; i++)
            kept[e[i].group]++;
        w->t_root += MPI_Wtime() - t0;
    }
    CHECK_MPI(MPI_Bcast(&n, 1, MPI_INT64_T, 0, w->comm));
    int64_t *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (!ids)
        check_die("out of memory for the kept points", __FILE__, __LINE__);
    if (w->rank == 0)
        for (int64_t i = 0; i < n; i++)
            ids[i] = e[i].id;
    free(e);
    for (int64_t at = 0; at < n; at += 1 << 24) {
        int k = (int)(n - at < (1 << 24) ? n - at : (1 << 24));
        CHECK_MPI(MPI_Bcast(ids + at, k, MPI_INT64_T, 0, w->comm));
    }
    int nranks;
    CHECK_MPI(MPI_Comm_size(w->comm, &nranks));
    int64_t lo = worker_slice_start(w->ch, ids, n, w->rank, nranks);
    int64_t hi = worker_slice_start(w->ch, ids, n, w->rank + 1, nranks);
    size_t rs = w->rows->t.size;
    char *buf = calloc((size_t)(hi - lo > 0 ? hi - lo : 1), rs);
    if (!buf)
        check_die("out of memory for the kept rows", __FILE__, __LINE__);
    result_t res;
    for (int64_t i = lo; i < hi; i++) {
        worker_eval(w, x, ids[i], &res);
        worker_pack(w, x, ids[i], &res, buf + (size_t)(i - lo) * rs);
    }
    /* the slice's part rows follow those of the slices before it */
    int np = w->rows->nparts;
    int64_t cnt[OUTPUT_NKINDS] = {0}, pos0[OUTPUT_NKINDS] = {0}, tot[OUTPUT_NKINDS] = {0};
    for (int64_t i = lo; i < hi && np > 0; i++) {
        int p = output_rows_part_of(w->rows, buf + (size_t)(i - lo) * rs);
        if (p >= 0)
            cnt[p]++;
    }
    if (np > 0) {
        CHECK_MPI(MPI_Exscan(cnt, pos0, np, MPI_INT64_T, MPI_SUM, w->comm));
        CHECK_MPI(MPI_Allreduce(cnt, tot, np, MPI_INT64_T, MPI_SUM, w->comm));
        if (w->rank == 0)
            memset(pos0, 0, sizeof pos0);
    }
    output_grow(w->out, n, tot);
    output_write_rows(w->out, lo, hi - lo, buf, pos0, true);
    worker_kept_chunks(w, ids, n, lo, hi, buf, nranks, pos0);
    w->kept = n;
    free(buf);
    free(ids);
    double t1 = MPI_Wtime();
    kept_finish(w->out, r, w->s, kept);
    if (w->rank == 0)
        w->t_root += MPI_Wtime() - t1;
    w->t_final += MPI_Wtime() - t0;
    free(kept);
}

/* A sync point (collective): `held` is the chunk this rank drew after
 * the stop (-1: none, or past the end); `halting`: this rank was asked
 * to stop. Returns 1 after the last one, and after a checkpoint that
 * ends the run because a rank was asked to stop (w->stopped set). */
static int worker_sync(worker *w, worker_ctx *x, worker_rows *rb, int64_t held,
                       bool halting, int64_t *base)
{
    int64_t h[2] = {held >= 0 ? -held : INT64_MIN, halting}, agreed[2];
    CHECK_MPI(MPI_Allreduce(h, agreed, 2, MPI_INT64_T, MPI_MAX, w->comm));
    int64_t stop = agreed[0] == INT64_MIN ? INT64_MAX : -agreed[0];
    bool last = stop == INT64_MAX;
    if (!last && agreed[1])
        w->stopped = 1; /* checkpoint [0, stop) as usual, then leave */
    if (last)
        stop = w->ch->n;
    if (w->rank == 0 && !last) {
        /* every rank has stopped drawing: drop the stop requests */
        int64_t v = 0, old = 0;
        CHECK_MPI(MPI_Fetch_and_op(NULL, &v, MPI_INT64_T, 0, W_NEXT, MPI_NO_OP, w->win));
        CHECK_MPI(MPI_Win_flush(0, w->win));
        v %= W_STOP;
        CHECK_MPI(MPI_Fetch_and_op(&v, &old, MPI_INT64_T, 0, W_NEXT, MPI_REPLACE, w->win));
        CHECK_MPI(MPI_Win_flush(0, w->win));
    }
    bool rows = w->red->k->mode == SPEC_KEEP_FEASIBLE;
    if (rows)
        worker_flush_rows(w, rb, *base, stop);
    reduce_merge(w->red, w->comm, &w->t_merge);
    double t0 = MPI_Wtime();
    output_mark_range(w->out, *base, stop);
    if (!last) {
        /* the winners of chunks [0, stop) on every rank (merging winners
         * again later changes nothing), saved with the state */
        winners_merge(w->comm, w->best, winners_slots(w->s));
        kept_checkpoint(w->out, w->red, w->s, stop, w->rows_done, w->best);
    } else if (rows) {
        int64_t *kept = calloc((size_t)w->red->ngroups, sizeof *kept);
        if (!kept)
            check_die("out of memory", __FILE__, __LINE__);
        int ok = reduce_code_col(w->red, STATUS_OK);
        for (int64_t g = 0; g < w->red->ngroups; g++)
            kept[g] = w->red->counts[g * w->red->ncols + ok];
        kept_finish(w->out, w->red, w->s, kept);
        free(kept);
        w->kept = w->rows_done;
    }
    if (w->rank == 0)
        w->t_root += MPI_Wtime() - t0;
    if (last && !rows)
        worker_finish_ranked(w, x);
    *base = stop;
    w->syncs++;
    CHECK_MPI(MPI_Barrier(w->comm));
    return last || w->stopped;
}

static void worker_loop_kept(worker *w, worker_ctx *x)
{
    worker_rows rb;
    memset(&rb, 0, sizeof rb);
    int64_t base = w->first_chunk, held = -1;
    int64_t limit = 8 * (w->ch->max_len > 0 ? w->ch->max_len : 1);
    double last_ck = MPI_Wtime();
    bool asked = false, halting = false;
    for (;;) {
        if (!halting && worker_asked(w)) {
            halting = true; /* finish at the next sync, with a checkpoint */
            if (!asked)
                worker_fetch_add(w, W_NEXT, W_STOP);
            asked = true;
        }
        /* a held chunk is evaluated even when halting: every chunk below
         * the next stop chunk must be in the state the checkpoint saves,
         * and no chunk above it */
        int64_t c;
        if (held >= 0) {
            c = held;
            held = -1;
        } else {
            int64_t v = worker_fetch_add(w, W_NEXT, 1);
            c = v % W_STOP;
            if (v >= W_STOP || c >= w->ch->n) {
                held = v >= W_STOP && c < w->ch->n ? c : -1;
                if (worker_sync(w, x, &rb, held, halting, &base))
                    break;
                asked = false;
                last_ck = MPI_Wtime();
                continue;
            }
        }
        double t0 = MPI_Wtime();
        int64_t before = w->evaluated;
        worker_chunk_kept(w, x, c, &rb);
        w->t_eval += MPI_Wtime() - t0;
        w->chunks_done++;
        int64_t add[2] = {w->evaluated - before, w->ch->lo[c + 1] - w->ch->lo[c]};
        CHECK_MPI(MPI_Accumulate(&add[0], 1, MPI_INT64_T, 0, W_EVALUATED, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        CHECK_MPI(MPI_Accumulate(&add[1], 1, MPI_INT64_T, 0, W_IDS, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        worker_hooks(w);
        if (w->rank == 0 && w->tick)
            w->tick(w, w->tick_arg);
        bool due = (w->rank == 0 && MPI_Wtime() - last_ck >= w->checkpoint_s) ||
                   rb.n >= limit;
        if (due && !asked) {
            worker_fetch_add(w, W_NEXT, W_STOP);
            asked = true;
        }
    }
    free(rb.buf);
    free(rb.chunk);
    free(rb.count);
    free(rb.digest);
}

static void worker_loop_all(worker *w, worker_ctx *x)
{
    for (;;) {
        if (worker_asked(w)) {
            worker_request_halt(w);
            w->stopped = 1;
            break;
        }
        int64_t halt = 0;
        int64_t c = worker_draw(w, &halt);
        if (halt > 0) {
            w->stopped = 1;
            break;
        }
        if (c >= w->ch->n)
            break;
        if (w->done[c])
            continue;
        int64_t lo = w->ch->lo[c], hi = w->ch->lo[c + 1];
        int64_t b[4] = {w->evaluated, w->ok, w->infeasible, w->invalid};
        double t0 = MPI_Wtime();
        int64_t n = worker_chunk(w, x, lo, hi);
        if (n < 0) { /* asked to stop inside the chunk: dropped, not written */
            w->evaluated = b[0];
            w->ok = b[1];
            w->infeasible = b[2];
            w->invalid = b[3];
            worker_request_halt(w);
            w->stopped = 1;
            break;
        }
        double t1 = MPI_Wtime();
        const int64_t *pos = w->part_pos ? w->part_pos + c * w->rows->nparts : NULL;
        output_write_rows(w->out, lo, n, x->buf, pos, false);
        worker_entry(w, c, lo, pos);
        output_mark_done(w->out, c, output_rows_digest_n(w->rows, x->buf, n));
        w->t_eval += t1 - t0;
        w->t_write += MPI_Wtime() - t1;
        w->chunks_done++;
        int64_t add[2] = {n, hi - lo};
        CHECK_MPI(MPI_Accumulate(&add[0], 1, MPI_INT64_T, 0, W_EVALUATED, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        CHECK_MPI(MPI_Accumulate(&add[1], 1, MPI_INT64_T, 0, W_IDS, 1,
                                 MPI_INT64_T, MPI_SUM, w->win));
        worker_hooks(w);
        if (w->rank == 0 && w->tick)
            w->tick(w, w->tick_arg);
    }
}

static void worker_ctx_free(worker_ctx *x)
{
    if (x->cur)
        space_cursor_free(x->cur);
    free(x->cur);
    free(x->buf);
    free(x->pc.text);
    free(x->pc.have);
}

/* The part rows a run starts from (collective): keep = "all", every
 * chunk's part positions (partpos.h), the parts sized to their totals;
 * feasible-only resumed, the part rows committed, from the /parts/index
 * entry of the first chunk to evaluate (written with the checkpoint).
 * Returns 0, or -1 when out of memory (on every rank). */
static int worker_parts_setup(worker *w)
{
    int np = w->rows->nparts;
    memset(w->part_done, 0, sizeof w->part_done);
    w->part_pos = NULL;
    if (np == 0)
        return 0;
    if (!w->red) {
        w->part_pos = malloc(((size_t)w->ch->n + 1) * (size_t)np * sizeof *w->part_pos);
        int bad = !w->part_pos, any = 0;
        CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, w->comm));
        if (any || partpos_plan(w->comm, w->s, w->ch, w->rows, w->part_pos) != 0) {
            free(w->part_pos);
            w->part_pos = NULL;
            return -1;
        }
        /* sized and flushed before any chunk is marked done: a killed
         * run must leave the parts' extents and chunks in the file */
        output_grow(w->out, w->s->total, w->part_pos + w->ch->n * np);
        output_flush(w->out);
        return 0;
    }
    if (w->red->k->mode != SPEC_KEEP_FEASIBLE || w->first_chunk <= 0 ||
        w->first_chunk >= w->ch->n)
        return 0;
    int64_t e[1 + OUTPUT_NKINDS];
    if (output_read_index(w->out, w->first_chunk, e) != 0 || e[0] != w->rows_done)
        check_die("cannot resume: the /parts/index entry of the checkpoint's first chunk "
                  "does not name its committed rows (damaged)", __FILE__, __LINE__);
    for (int p = 0; p < np; p++)
        w->part_done[p] = e[1 + p];
    return 0;
}

int worker_run(worker *w)
{
    CHECK_MPI(MPI_Comm_rank(w->comm, &w->rank));
    worker_ctx x;
    memset(&x, 0, sizeof x);
    x.buf = calloc((size_t)(w->ch->max_len > 0 ? w->ch->max_len : 1),
                   w->rows->t.size); /* checks n*size */
    x.cur = malloc(sizeof *x.cur);
    int cbad = !x.cur || space_cursor_init(x.cur, w->s) != 0;
    if (cbad) {
        free(x.cur);
        x.cur = NULL;
    }
    int64_t nk = w->s->radix[SPACE_STRATEGY];
    x.pc.system = -1;
    x.pc.n = nk;
    x.pc.text = malloc((size_t)nk * sizeof *x.pc.text);
    x.pc.have = calloc((size_t)nk, 1);
    int bad = !w->best || !x.buf || cbad || !x.pc.text || !x.pc.have, any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, w->comm));
    if (any || worker_parts_setup(w) != 0) {
        worker_ctx_free(&x);
        return -1;
    }
    engine_init(&x.e, false);

    CHECK_MPI(MPI_Win_allocate(w->rank == 0 ? W_NCOUNTERS * sizeof(int64_t) : 0,
                               sizeof(int64_t), MPI_INFO_NULL, w->comm,
                               &w->counters, &w->win));
    if (w->rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        memset(w->counters, 0, W_NCOUNTERS * sizeof(int64_t));
        if (w->red)
            w->counters[W_NEXT] = w->first_chunk;
        CHECK_MPI(MPI_Win_unlock(0, w->win));
    }
    CHECK_MPI(MPI_Barrier(w->comm));
    CHECK_MPI(MPI_Win_lock_all(0, w->win));
    if (w->red)
        worker_loop_kept(w, &x);
    else
        worker_loop_all(w, &x);
    CHECK_MPI(MPI_Win_unlock_all(w->win));
    CHECK_MPI(MPI_Win_free(&w->win));
    engine_free(&x.e);
    worker_ctx_free(&x);
    free(w->part_pos);
    w->part_pos = NULL;
    return 0;
}
