/*
 * best_query.h - what the files of `madsweep best` share (best.c: the
 * query and its scan; best_plan.c: the plan key that shows a plan once;
 * best_print.c: the table and CSV). Not for use outside them.
 *
 * Invariant: a group's kept rows hold no two rows with the same plan key
 * (best_plan_key); rows are offered in file (id) order, so of two rows
 * that are the same plan the first one seen, the lower id, is kept.
 */
#ifndef MADSWEEP_BEST_QUERY_H
#define MADSWEEP_BEST_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "best.h"
#include "frame.h"
#include "keymap.h"
#include "where.h"

#define BEST_BLOCK 16384
#define BEST_MAX_COLS 16                 /* group columns */
#define BEST_CELL 160                    /* a printed value */

typedef struct best_group {
    int64_t n;     /* rows kept: a heap while scanning, best first after */
    char *rows;    /* top x row size */
    char *canon;   /* the rows' plan keys */
    double *val;
    int64_t *id;
    int64_t *entry;  /* per kept row: its key's entry in keys */
    keymap keys;     /* plan keys offered: key -> entry */
    uint8_t *live;   /* per entry: 1 while its row is kept */
    int64_t lcap;
    double order[BEST_MAX_COLS]; /* sort key of the group */
    /* --baseline: the best row matching it, and the rows matching it
     * that do not fit (not ok or over memory) */
    char *brow;
    double bval;
    int64_t bid, bunfit;
} best_group;

typedef struct best_query {
    const best_opts *o;
    frame f;
    where w, bw; /* --where, --baseline */
    bool base;
    const frame_col *by, *status, *id, *strat;
    const frame_col *fits; /* mem_fits: 1 fits, 0 exceeds, NaN not known */
    const frame_col *gcol[BEST_MAX_COLS];
    int ngcol;
    keymap gfirst[BEST_MAX_COLS]; /* text group columns: value -> ordinal */
    bool maximize;
    keymap groups; /* group key -> index */
    best_group *g;
    int64_t ng, gcap;
    /* plan keys: the degrees and the layout's column */
    const frame_col *deg[4], *dense, *layout, *emb;
    int64_t seen, matched, not_ok; /* not_ok: not ok, or not fitting */
    int64_t nan_by;                /* rows whose `by` is NaN (not computed) */
    const frame_col *lat;          /* comm_latency_modeled */
    int64_t nolat;                 /* rows matched whose collectives have no latency */
    const frame_col *ttype;        /* task.type: serving rows lack the training columns */
} best_query;

/* best.c: the /results column `name` of kind `kind`, or NULL. */
const frame_col *best_results_col(const frame *f, const char *name, frame_kind kind);

/* The parallel dimensions of a plan key, in layout order of their
 * initials: tp, cp, dp, pp. */
extern const char *const best_plan_dims[4];

/* best_plan.c: the plan key of a row (q->f.t.size bytes into `key`): the
 * row without its id and strategy index and with degree-1 dimensions
 * taken out of its layout. */
void best_plan_key(const best_query *q, const char *row, char *key);

/* best_print.c: the groups' rows as a table (or CSV with --csv), best
 * first, with the baseline columns and the footnotes. */
void best_print_groups(const best_query *q, FILE *out);

/* best_print.c: `best --columns`: every column of the file, its kind,
 * unit and source table. */
void best_print_columns(const frame *f, FILE *out);

#endif
