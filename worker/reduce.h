/*
 * reduce.h - in-situ reduction of a sweep (spec key `keep`): what a rank
 * keeps of the points it evaluates, in memory bounded by the answer, and
 * the merge of the ranks' states over an MPI reduction tree.
 *
 * Points fall into groups (the keys of keep.group: axes, and the
 * system's devices, nodes or hardware generation; one group when none).
 * Per group a reducer counts the points evaluated and their status codes,
 * and keeps either the K best feasible points by one figure (keep.top) or
 * the Pareto frontier of the feasible points over 2-4 figures
 * (keep.pareto), each figure in its direction (result_direction). An
 * entry is (point id, group, the figures). The order is total, ties going
 * to the lower point id: for top-K, a is better than b when its figure is
 * better, or equal with a lower id; for Pareto, a dominates b when it is
 * no worse in every figure and better in one, or equal in all with a
 * lower id. So the kept set of a union is the kept set of the kept sets
 * (merging is associative and commutative), and the result does not
 * depend on how the points were split over ranks or chunks: it equals
 * `madsweep best --top K --by FIGURE --group ...` on the full sweep.
 * Ranked points are those `madsweep best` ranks: status ok and mem_fits
 * not 0. Points whose ranked figure is NaN (not computed) are counted,
 * not kept, as `best` leaves them out.
 *
 * Memory: ngroups x K entries (top), the frontiers (pareto), and
 * ngroups x REDUCE_COLS counters; independent of the number of points.
 */
#ifndef MADSWEEP_REDUCE_H
#define MADSWEEP_REDUCE_H

#include <mpi.h>
#include <stdint.h>

#include "space.h"

/* Bounds: groups, and group x top entries. */
#define REDUCE_MAX_GROUPS (INT64_C(1) << 22)
#define REDUCE_MAX_SLOTS (INT64_C(1) << 22)

/* Count columns per group: evaluated, then one per data status code (ok,
 * infeasible:*) with a name in status.h, then invalid:non-finite and
 * invalid:negative (a point whose figures eval_run found bad). */
#define REDUCE_MAX_CODES 16

typedef struct reduce_entry {
    int64_t id;
    int64_t group;
    double v[SPEC_KEEP_FIGS];
} reduce_entry;

typedef struct reduce {
    const spec_keep *k;
    int dir[SPEC_KEEP_FIGS];       /* +1 maximize, -1 minimize */
    int64_t ngroups;
    int64_t radix[SPEC_KEEP_GROUP]; /* values of each group key */
    /* derived keys: value index of every system, and the values */
    int64_t *sysval[SPEC_NKEYS];   /* [nsystems], NULL for axis keys */
    int64_t *values[SPEC_NKEYS];   /* devices, nodes: the distinct values */
    const char **hw_names;         /* hardware: the distinct names */
    int ncodes;
    int codes[REDUCE_MAX_CODES];   /* the status codes counted, ok first */
    int ncols;                     /* 1 + ncodes */
    int64_t *counts;               /* [ngroups][ncols] */
    /* top-K */
    reduce_entry *slot;            /* [ngroups][K], best first */
    int64_t *fill;
    /* Pareto */
    reduce_entry **front;
    int64_t *fn, *fcap;
    int64_t nentries;              /* entries held */
} reduce;

/* Sets up the reducer of spec keep k over space s. Returns 0, or -1 with
 * the reason in err (too many groups, out of memory). */
int reduce_init(reduce *r, const space *s, const spec_keep *k, char *err, size_t size);
void reduce_free(reduce *r);

/* The group of a point (idx: its index on every axis). */
int64_t reduce_group(const reduce *r, const int64_t idx[SPACE_NAXES]);

/* Index of the value of key number j (0 .. ngroup-1) in group g. */
int64_t reduce_group_key(const reduce *r, int64_t g, int j);

/* Column of status code st in counts (1 + ...), or 0 when not counted. */
int reduce_code_col(const reduce *r, int st);

/* Counts an evaluated point and, ranked modes, keeps it if it belongs to
 * its group's top-K or frontier. */
void reduce_add(reduce *r, int64_t id, int64_t group, int st, const result_t *res);

/* Keeps an entry (merging; counts untouched). */
void reduce_insert(reduce *r, const reduce_entry *e);

/* Every entry held, sorted by point id (malloc'ed; *n entries); NULL
 * when out of memory (*n = -1). */
reduce_entry *reduce_entries(const reduce *r, int64_t *n);

/* Drops every entry, and the counts when `counts`. */
void reduce_clear(reduce *r, bool counts);

/* Collective: merges every rank's entries into rank 0's over a binomial
 * tree (log2 P rounds, each rank sends once) and sums the counts on rank
 * 0; the other ranks end empty. *seconds: time spent merging here. */
void reduce_merge(reduce *r, MPI_Comm comm, double *seconds);

#endif
