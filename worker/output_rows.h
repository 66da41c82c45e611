/*
 * output_rows.h - the rows of a sweep file: their columns and units, how
 * a point is packed into one, and how the file stores it lean.
 *
 * The logical row is one point's every column, in column order: id,
 * status, the index on every axis (model_idx .. parallel_idx), devices,
 * the strategy (MAD-Max: dense_plan and emb_plan, the concrete plans
 * "fsdp:8,ddp:256"; detailed: the columns tp, pp, dp, cp, ep, vpp,
 * zero_stage, micro_batch, sp, then the texts schedule ("none" without
 * pipeline, "1f1b", "1f1b-interleaved", "gpipe"), recompute ("none",
 * "selective", "full"), layout ("tp-cp-dp-pp", innermost first; "" for a
 * DLRM), overlap ("dp", "tp", "dp+tp", "none") and emb_sharding
 * ("table", "row", "column"; "" for an LLM), and stack (the software
 * stack's name, as /axes/stack names it)), bound_by, then every figure of
 * result_fields[] (as in `madsweep eval --json`; NaN where not computed).
 * It depends on the fidelity only (output_rows_init); readers see it
 * whole (worker/results.h); chunk digests are of the rows as stored.
 *
 * A row's kind (output_kind) follows from its model and task: an LLM
 * trained, an LLM served on one pool, an LLM served with a disaggregated
 * prefill pool, a DLRM. Each kind carries some of the figures, by
 * fidelity (output_rows.c's table; elasticities when the spec asks for
 * them); the others are their fill on every row of the kind. The file
 * stores (output_rows_plan, from the spec's kinds):
 *   /results        the common part: the columns before the figures and
 *                   every figure all of the spec's kinds carry;
 *   /parts/KIND     per kind, the figures it carries beyond the common
 *                   part (none: no dataset), one row per row of that
 *                   kind, in row order;
 * and a figure no kind of the spec carries is not stored at all. Read
 * back, a column a row's tables do not store is its fill: NaN for a
 * float, 0 for an integer, "" for a text; on an invalid:* row (status
 * 100 and up, whose figures the evaluation zeroes) 0 for a float too.
 * The writer checks every row against that rule (output_rows_split): a
 * value the layout would drop ends the run as an internal error.
 */
#ifndef MADSWEEP_OUTPUT_ROWS_H
#define MADSWEEP_OUTPUT_ROWS_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "space.h"
#include "table.h"

#define OUTPUT_PLAN_WIDTH 32
#define OUTPUT_TEXT_WIDTH 20 /* detailed strategy text columns */
#define OUTPUT_NSTRAT_INT 9
#define OUTPUT_NSTRAT_STR 5
#define OUTPUT_ROW_MAX 4096  /* bytes of a logical row, at most */

typedef enum output_kind {
    OUTPUT_KIND_TRAINING = 0, /* an LLM trained (pretrain, finetune) */
    OUTPUT_KIND_SERVING,      /* an LLM served (inference) on one pool */
    OUTPUT_KIND_DISAGG,       /* an LLM served, prefill on a pool of its own */
    OUTPUT_KIND_DLRM,         /* a recommendation model, trained or served */
    OUTPUT_NKINDS
} output_kind;

/* "training", "serving", "serving_disagg", "dlrm" (dataset names). */
extern const char *const output_kind_names[OUTPUT_NKINDS];

/* A run of bytes copied between two layouts of a row. */
typedef struct output_span {
    uint32_t from, to, len;
} output_span;

/* One stored table of rows (/results or a part): its columns, in logical
 * order, and the spans that copy them out of a logical row. */
typedef struct output_part {
    char name[TABLE_NAME_MAX]; /* "results", or the kind's name */
    table t;
    int nspan;
    output_span span[TABLE_MAX_COLS]; /* from: logical offset, to: own */
} output_part;

/* The logical row of a fidelity with the offsets the packer needs, and
 * (once planned) how the file of a spec stores it. */
typedef struct output_rows {
    table t;
    eval_fidelity fidelity;
    size_t id, status, idx[SPACE_NAXES], devices;
    const table_col *dense, *emb;                    /* madmax */
    size_t strat_int[OUTPUT_NSTRAT_INT];             /* detailed */
    const table_col *strat_str[OUTPUT_NSTRAT_STR];
    const table_col *stack;                          /* detailed */
    const table_col *bound;  /* bound_by: the name of result bound_code */
    size_t field[TABLE_MAX_COLS]; /* offset of result_fields[i] */
    /* the storage (output_rows_plan; unplanned: everything is common) */
    const spec *sp;
    output_part common;
    int nparts;
    output_part part[OUTPUT_NKINDS];
    int part_of[OUTPUT_NKINDS];   /* the part holding a kind's own figures, -1 */
    bool present[OUTPUT_NKINDS];  /* a kind of the spec's */
    int nloose[OUTPUT_NKINDS];    /* spans a kind's rows do not store */
    output_span loose[OUTPUT_NKINDS][TABLE_MAX_COLS];
    char fill[OUTPUT_ROW_MAX];    /* a logical row of fills (data rows) */
} output_rows;

/* The logical row of a fidelity; everything in the common part. */
void output_rows_init(output_rows *r, eval_fidelity fidelity);

/* The storage for the points of spec sp (which must outlive r): the
 * common part and one part per kind of the spec with figures of its own. */
void output_rows_plan(output_rows *r, const spec *sp);

/* Does a row of this status read back its unstored numbers as 0 (an
 * invalid:* row, status 100 and up, whose figures the evaluation zeroes)
 * rather than NaN? */
static inline bool output_rows_zeroed(int32_t status)
{
    return status >= 100;
}

/* The kind of the points of model m and task t of the planned spec. */
output_kind output_rows_kind(const output_rows *r, int64_t m, int64_t t);

/* The part (index into r->part) of a packed logical row, -1 when all its
 * stored columns are in /results. */
int output_rows_part_of(const output_rows *r, const char *row);

/* Splits n packed logical rows: the common part of each into `common`
 * (n rows), the part rows of part p, in order, into parts[p]
 * (counts[p] of them). Checks the fill rule above (check_die). */
void output_rows_split(const output_rows *r, const char *rows, int64_t n, char *common,
                       char *const *parts, int64_t *counts);

/* Folds a packed logical row into a running chunk digest (digest.h) as
 * the file stores it: its /results row, then its part row (if any). */
uint64_t output_rows_digest(const output_rows *r, uint64_t d, const char *row);

/* The digest of n packed logical rows, as output_rows_digest over each. */
uint64_t output_rows_digest_n(const output_rows *r, const char *rows, int64_t n);

/* The texts of a row that depend only on system and strategy (callers
 * cache them): MAD-Max plans as plan_format() writes them; the detailed
 * layout and overlap. */
typedef struct output_rows_texts {
    char dense[OUTPUT_PLAN_WIDTH], emb[OUTPUT_PLAN_WIDTH];
    char layout[OUTPUT_TEXT_WIDTH], overlap[OUTPUT_TEXT_WIDTH];
} output_rows_texts;

void output_rows_texts_of(const point_t *p, output_rows_texts *x);

/* Packs one logical row (buf must hold r->t.size bytes); `texts` from
 * output_rows_texts_of(), or NULL to format them here. */
void output_rows_pack(const output_rows *r, char *buf, int64_t id,
                      const int64_t idx[SPACE_NAXES], const point_t *p,
                      const result_t *res, const output_rows_texts *texts);

/* Column of /results holding the index on axis a ("model_idx", ...). */
void output_rows_idx_name(int a, char *buf, size_t size);

/* A column's unit given by the caller: the input keys' (a model's
 * layers, a system's nodes, a task's prompt_tokens), which the driver
 * takes from its key table (driver/load/load_key.h) and passes in
 * output_meta; the worker keeps no copy of them. */
typedef struct output_unit {
    const char *column, *unit;
} output_unit;

typedef struct output_units {
    const output_unit *u;
    size_t n;
} output_units;

/* The unit of a column of any table of the file: strings "text", the
 * *_idx columns the axis table they index, figures result_fields[]'
 * units, the columns the file derives from output_rows.c's table, an
 * input key's from `keys` (a column without a unit stops the run: every
 * column of the file has one). */
const char *output_rows_unit(const table_col *c, const output_units *keys);

/* Attribute `units` of obj: one string per column of t, in order (h5py:
 * dict(zip(d.dtype.names, d.attrs['units']))). */
void output_rows_units_attr(hid_t obj, const table *t, const output_units *keys);

#endif
