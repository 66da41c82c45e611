/*
 * reduce.c - per-group top-K and Pareto frontiers, and their MPI merge
 * (see reduce.h for the order and why merging commutes).
 *
 * Invariants: slot[g * K .. g * K + fill[g]) is sorted best first and
 * holds no entry worse than a dropped one; front[g] holds no entry
 * dominated by another entry seen in group g; nentries counts both.
 */
#include "reduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

_Static_assert((int)SPEC_KEY_STACK == (int)SPACE_STACK &&
                   (int)SPEC_KEY_PARALLEL == (int)SPACE_PARALLEL &&
                   (int)SPEC_KEY_DEVICES == (int)SPACE_NAXES &&
                   (int)SPEC_KEY_STRATEGY == (int)SPACE_STRATEGY &&
                   (int)SPEC_KEY_BATCH == (int)SPACE_BATCH,
               "spec_key numbers the axes as space_axis");

static int reduce_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct values v[0..n) sorted, and each system's index among them. */
static int reduce_key_numbers(reduce *r, int key, const int64_t *v, int64_t n)
{
    int64_t *u = malloc((size_t)(n > 0 ? n : 1) * sizeof *u);
    r->sysval[key] = malloc((size_t)(n > 0 ? n : 1) * sizeof *r->sysval[key]);
    if (!u || !r->sysval[key]) {
        free(u);
        return -1;
    }
    memcpy(u, v, (size_t)n * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, reduce_cmp_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || u[m - 1] != u[i])
            u[m++] = u[i];
    for (int64_t i = 0; i < n; i++) {
        int64_t lo = 0, hi = m - 1;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (u[mid] < v[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        r->sysval[key][i] = lo;
    }
    r->values[key] = u;
    return (int)(m > INT32_MAX ? -1 : m);
}

/* Hardware generations in order of first appearance. */
static int64_t reduce_key_hardware(reduce *r, const spec *sp)
{
    int64_t n = sp->nsystems, m = 0;
    r->sysval[SPEC_KEY_HARDWARE] = malloc((size_t)n * sizeof(int64_t));
    r->hw_names = malloc((size_t)n * sizeof *r->hw_names);
    if (!r->sysval[SPEC_KEY_HARDWARE] || !r->hw_names)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        const char *h = sp->dsystems[i].hw.name;
        int64_t j = 0;
        while (j < m && strcmp(r->hw_names[j], h) != 0)
            j++;
        if (j == m)
            r->hw_names[m++] = h;
        r->sysval[SPEC_KEY_HARDWARE][i] = j;
    }
    return m;
}

int reduce_init(reduce *r, const space *s, const spec_keep *k, char *err, size_t size)
{
    memset(r, 0, sizeof *r);
    r->k = k;
    const spec *sp = s->sp;
    for (int i = 0; i < k->nfig; i++)
        r->dir[i] = result_direction(&result_fields[k->fig[i]]);
    int64_t n = sp->nsystems;
    int64_t *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!tmp)
        goto oom;
    r->ngroups = 1;
    for (int j = 0; j < k->ngroup; j++) {
        int key = k->group[j];
        int64_t m;
        if (key < SPACE_NAXES) {
            m = s->radix[key];
        } else if (key == SPEC_KEY_HARDWARE) {
            if (!sp->dsystems || (m = reduce_key_hardware(r, sp)) < 0)
                goto oom;
        } else {
            for (int64_t i = 0; i < n; i++)
                tmp[i] = key == SPEC_KEY_DEVICES ? sp->systems[i].devices
                                                 : sp->systems[i].nodes;
            if ((m = reduce_key_numbers(r, key, tmp, n)) < 0)
                goto oom;
        }
        r->radix[j] = m;
        if (m < 1 || r->ngroups > REDUCE_MAX_GROUPS / m) {
            snprintf(err, size, "keep: more than %lld groups",
                     (long long)REDUCE_MAX_GROUPS);
            free(tmp);
            reduce_free(r);
            return -1;
        }
        r->ngroups *= m;
    }
    free(tmp);
    tmp = NULL;
    for (int c = 0; c < 100 && r->ncodes < REDUCE_MAX_CODES; c++)
        if (strcmp(status_name((status_code)c), "unknown") != 0)
            r->codes[r->ncodes++] = c;
    /* the evaluation's own verdicts on bad figures (eval_run): rows too */
    static const int evald[2] = {STATUS_INVALID_NONFINITE, STATUS_INVALID_NEGATIVE};
    for (int i = 0; i < 2 && r->ncodes < REDUCE_MAX_CODES; i++)
        r->codes[r->ncodes++] = evald[i];
    r->ncols = 1 + r->ncodes;
    r->counts = calloc((size_t)r->ngroups * (size_t)r->ncols, sizeof *r->counts);
    if (!r->counts)
        goto oom;
    if (k->mode == SPEC_KEEP_TOP) {
        if (r->ngroups > REDUCE_MAX_SLOTS / k->top) {
            snprintf(err, size, "keep: %lld groups x top %lld is more than %lld "
                     "entries", (long long)r->ngroups, (long long)k->top,
                     (long long)REDUCE_MAX_SLOTS);
            reduce_free(r);
            return -1;
        }
        r->slot = calloc((size_t)(r->ngroups * k->top), sizeof *r->slot);
        r->fill = calloc((size_t)r->ngroups, sizeof *r->fill);
        if (!r->slot || !r->fill)
            goto oom;
    } else if (k->mode == SPEC_KEEP_PARETO) {
        r->front = calloc((size_t)r->ngroups, sizeof *r->front);
        r->fn = calloc((size_t)r->ngroups, sizeof *r->fn);
        r->fcap = calloc((size_t)r->ngroups, sizeof *r->fcap);
        if (!r->front || !r->fn || !r->fcap)
            goto oom;
    }
    return 0;
oom:
    free(tmp);
    snprintf(err, size, "keep: out of memory for %lld groups", (long long)r->ngroups);
    reduce_free(r);
    return -1;
}

void reduce_free(reduce *r)
{
    for (int k = 0; k < SPEC_NKEYS; k++) {
        free(r->sysval[k]);
        free(r->values[k]);
    }
    free(r->hw_names);
    free(r->counts);
    free(r->slot);
    free(r->fill);
    if (r->front)
        for (int64_t g = 0; g < r->ngroups; g++)
            free(r->front[g]);
    free(r->front);
    free(r->fn);
    free(r->fcap);
    memset(r, 0, sizeof *r);
}

int64_t reduce_group(const reduce *r, const int64_t idx[SPACE_NAXES])
{
    int64_t g = 0;
    for (int j = 0; j < r->k->ngroup; j++) {
        int key = r->k->group[j];
        int64_t v = key < SPACE_NAXES ? idx[key] : r->sysval[key][idx[SPACE_SYSTEM]];
        g = g * r->radix[j] + v;
    }
    return g;
}

int64_t reduce_group_key(const reduce *r, int64_t g, int j)
{
    for (int i = r->k->ngroup - 1; i > j; i--)
        g /= r->radix[i];
    return g % r->radix[j];
}

int reduce_code_col(const reduce *r, int st)
{
    for (int i = 0; i < r->ncodes; i++)
        if (r->codes[i] == st)
            return 1 + i;
    return 0;
}

/* Top-K: is a better than b? */
static bool reduce_better(const reduce *r, const reduce_entry *a, const reduce_entry *b)
{
    if (a->v[0] != b->v[0])
        return r->dir[0] > 0 ? a->v[0] > b->v[0] : a->v[0] < b->v[0];
    return a->id < b->id;
}

/* Pareto: does a dominate b? */
static bool reduce_dominates(const reduce *r, const reduce_entry *a, const reduce_entry *b)
{
    bool strict = false;
    for (int i = 0; i < r->k->nfig; i++) {
        double x = r->dir[i] * a->v[i], y = r->dir[i] * b->v[i];
        if (x < y)
            return false;
        strict |= x > y;
    }
    return strict || a->id < b->id;
}

static void reduce_insert_top(reduce *r, const reduce_entry *e)
{
    int64_t K = r->k->top;
    reduce_entry *top = r->slot + e->group * K;
    int64_t n = r->fill[e->group];
    for (int64_t i = 0; i < n; i++)
        if (top[i].id == e->id)
            return; /* already held (a merge of overlapping states) */
    if (n == K && !reduce_better(r, e, &top[K - 1]))
        return;
    int64_t at = n < K ? n : K - 1;
    if (n < K) {
        r->fill[e->group]++;
        r->nentries++;
    }
    while (at > 0 && reduce_better(r, e, &top[at - 1])) {
        top[at] = top[at - 1];
        at--;
    }
    top[at] = *e;
}

static void reduce_insert_front(reduce *r, const reduce_entry *e)
{
    int64_t g = e->group, n = r->fn[g];
    reduce_entry *f = r->front[g];
    for (int64_t i = 0; i < n; i++)
        if (f[i].id == e->id || reduce_dominates(r, &f[i], e))
            return;
    int64_t w = 0;
    for (int64_t i = 0; i < n; i++)
        if (!reduce_dominates(r, e, &f[i]))
            f[w++] = f[i];
    r->nentries -= n - w;
    if (w == r->fcap[g]) {
        int64_t cap = r->fcap[g] ? 2 * r->fcap[g] : 4;
        reduce_entry *nf = realloc(f, (size_t)cap * sizeof *nf);
        if (!nf)
            check_die("out of memory for a Pareto frontier", __FILE__, __LINE__);
        r->front[g] = f = nf;
        r->fcap[g] = cap;
    }
    f[w++] = *e;
    r->fn[g] = w;
    r->nentries++;
}

void reduce_insert(reduce *r, const reduce_entry *e)
{
    if (r->k->mode == SPEC_KEEP_TOP)
        reduce_insert_top(r, e);
    else if (r->k->mode == SPEC_KEEP_PARETO)
        reduce_insert_front(r, e);
}

void reduce_add(reduce *r, int64_t id, int64_t group, int st, const result_t *res)
{
    int64_t *c = r->counts + group * r->ncols;
    c[0]++;
    c[reduce_code_col(r, st)]++;
    /* ranked: the points that run and fit, as `madsweep best` ranks them
     * (a MAD-Max point stays ok with mem_fits 0) */
    if (st != STATUS_OK || r->k->mode < SPEC_KEEP_TOP || res->mem_fits == 0.0)
        return;
    reduce_entry e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.group = group;
    for (int i = 0; i < r->k->nfig; i++) {
        e.v[i] = result_get(res, &result_fields[r->k->fig[i]]);
        if (isnan(e.v[i]))
            return;
    }
    reduce_insert(r, &e);
}

static int reduce_cmp_id(const void *a, const void *b)
{
    int64_t x = ((const reduce_entry *)a)->id, y = ((const reduce_entry *)b)->id;
    return (x > y) - (x < y);
}

reduce_entry *reduce_entries(const reduce *r, int64_t *n)
{
    reduce_entry *out = malloc((size_t)(r->nentries > 0 ? r->nentries : 1) * sizeof *out);
    if (!out) {
        *n = -1;
        return NULL;
    }
    int64_t m = 0;
    for (int64_t g = 0; g < r->ngroups; g++) {
        if (r->slot && r->fill[g] > 0) {
            memcpy(out + m, r->slot + g * r->k->top, (size_t)r->fill[g] * sizeof *out);
            m += r->fill[g];
        } else if (r->front && r->fn[g] > 0) {
            memcpy(out + m, r->front[g], (size_t)r->fn[g] * sizeof *out);
            m += r->fn[g];
        }
    }
    qsort(out, (size_t)m, sizeof *out, reduce_cmp_id);
    *n = m;
    return out;
}

void reduce_clear(reduce *r, bool counts)
{
    if (r->fill)
        memset(r->fill, 0, (size_t)r->ngroups * sizeof *r->fill);
    if (r->fn)
        memset(r->fn, 0, (size_t)r->ngroups * sizeof *r->fn);
    r->nentries = 0;
    if (counts)
        memset(r->counts, 0, (size_t)r->ngroups * (size_t)r->ncols * sizeof *r->counts);
}

/* Entries travel as bytes (every rank runs the same binary), in pieces of
 * at most 2^30 bytes (MPI counts are int). */
#define REDUCE_PIECE (1 << 30)

static void reduce_send(MPI_Comm comm, int to, const reduce_entry *e, int64_t n)
{
    CHECK_MPI(MPI_Send(&n, 1, MPI_INT64_T, to, 71, comm));
    const char *p = (const char *)e;
    for (int64_t left = n * (int64_t)sizeof *e; left > 0;) {
        int k = (int)(left < REDUCE_PIECE ? left : REDUCE_PIECE);
        CHECK_MPI(MPI_Send(p, k, MPI_BYTE, to, 72, comm));
        p += k;
        left -= k;
    }
}

static reduce_entry *reduce_recv(MPI_Comm comm, int from, int64_t *n)
{
    CHECK_MPI(MPI_Recv(n, 1, MPI_INT64_T, from, 71, comm, MPI_STATUS_IGNORE));
    reduce_entry *e = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *e);
    if (!e)
        check_die("out of memory receiving a reduction state", __FILE__, __LINE__);
    char *p = (char *)e;
    for (int64_t left = *n * (int64_t)sizeof *e; left > 0;) {
        int k = (int)(left < REDUCE_PIECE ? left : REDUCE_PIECE);
        CHECK_MPI(MPI_Recv(p, k, MPI_BYTE, from, 72, comm, MPI_STATUS_IGNORE));
        p += k;
        left -= k;
    }
    return e;
}

void reduce_merge(reduce *r, MPI_Comm comm, double *seconds)
{
    double t0 = MPI_Wtime();
    int rank, nranks;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &nranks));
    if (r->k->mode >= SPEC_KEEP_TOP) {
        for (int step = 1; step < nranks; step <<= 1) {
            if (rank & step) {
                int64_t n = 0;
                reduce_entry *e = reduce_entries(r, &n);
                if (!e)
                    check_die("out of memory packing a reduction state", __FILE__,
                              __LINE__);
                reduce_send(comm, rank - step, e, n);
                free(e);
                reduce_clear(r, false);
                break;
            }
            if (rank + step < nranks) {
                int64_t n = 0;
                reduce_entry *e = reduce_recv(comm, rank + step, &n);
                for (int64_t i = 0; i < n; i++)
                    reduce_insert(r, &e[i]);
                free(e);
            }
        }
    }
    int64_t total = r->ngroups * r->ncols;
    for (int64_t at = 0; at < total; at += 1 << 24) {
        int k = (int)(total - at < (1 << 24) ? total - at : (1 << 24));
        if (rank == 0)
            CHECK_MPI(MPI_Reduce(MPI_IN_PLACE, r->counts + at, k, MPI_INT64_T, MPI_SUM,
                                 0, comm));
        else
            CHECK_MPI(MPI_Reduce(r->counts + at, NULL, k, MPI_INT64_T, MPI_SUM, 0,
                                 comm));
    }
    if (rank != 0)
        memset(r->counts, 0, (size_t)total * sizeof *r->counts);
    if (seconds)
        *seconds += MPI_Wtime() - t0;
}
