/*
 * space.h - the design space of a sweep spec: dense point ids over the
 * valid points only, never materialized.
 *
 * Axes: model, system, stack, task, global batch (the outer axes, a
 * mixed radix, outermost first) and the strategy, which the detailed
 * `auto` set factors into its degree tuple (the parallel axis) and its
 * options (the strategy axis): candidate = parallel * strategies +
 * strategy, so that neither axis table grows with the other. A block is a (model,
 * system) pair; a cell is one value of every outer axis. The strategies
 * of a cell are enumerated valid-only (the fidelity's `auto` set through
 * detailed_auto_cell_init, or each candidate of the madmax auto set or of
 * the spec's explicit list checked in turn; a cell whose global batch
 * is not one of its model kind's, global_batch = { llm = [...]; dlrm =
 * [...]; }, has none: its candidates count as invalid:batch-kind; nor
 * has a serving task's cell under any batch but its kind's first when
 * the task sets its own concurrency: invalid:batch-unused), so
 * the points of the space are exactly the combinations that pass the
 * fidelity's rules:
 *   id = (valid points of the blocks before) + (of the cells before, in
 *        the block) + (rank of the strategy among the cell's valid ones)
 * and every id in [0, total) is a point to evaluate. The axis enum's
 * order is the column order of the output file; space_nest lists the
 * nesting of the outer axes.
 *
 * Counting: space_count_block() counts one block (its cells, the
 * rejected candidates per status code, and an estimated evaluation cost)
 * without evaluating; once every block is counted, space_set_counts()
 * turns the counts into the prefix sums that decoding bisects. Memory: two
 * int64 per block (models x systems), independent of the number of
 * points; a cursor holds one block's cell offsets and one cell's
 * enumeration.
 */
#ifndef MADSWEEP_SPACE_H
#define MADSWEEP_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "../cost/detailed.h"
#include "spec.h"

typedef enum space_axis {
    SPACE_MODEL = 0,
    SPACE_SYSTEM,
    SPACE_TASK,
    SPACE_BATCH,
    SPACE_STRATEGY,
    SPACE_STACK, /* software stack (detailed; madmax: one entry "none") */
    SPACE_PARALLEL, /* detailed auto: the candidate's degree tuple (tp, pp,
                       cp, ep), the strategy axis its options; else one
                       entry */
    SPACE_NAXES
} space_axis;

/* Axis names as used in output files ("model", "system", ...). */
extern const char *const space_axis_names[SPACE_NAXES];

/* The outer axes from the outermost to the innermost (the strategy is
 * innermost of all). */
#define SPACE_NOUTER 5
extern const space_axis space_nest[SPACE_NOUTER];

/* Status codes as array indices (rejections per code). */
#define SPACE_NCODES 256

typedef struct space {
    const spec *sp;
    int64_t radix[SPACE_NAXES]; /* values per axis (strategy: candidates of the set) */
    int64_t nblocks;            /* models x systems */
    int64_t cells;              /* cells per block: stacks x tasks x batches */
    int64_t candidates;         /* every combination, valid or not */
    int64_t total;              /* valid points: ids 0 .. total - 1 (0 until counted) */
    int64_t cost;               /* estimated cost of them all (units of space_cell_weight) */
    int64_t *block_off;         /* [nblocks + 1] first id of each block */
    int64_t *block_cost;        /* [nblocks + 1] estimated cost before each block */
} space;

/* Decoding state: the last block, cell and point built, reused between
 * calls (a cache: results never depend on the cursor's history). */
typedef struct space_cursor {
    int64_t idx[SPACE_NAXES];
    int64_t model, system, stack; /* indices whose values are in p, -1 if none */
    point_t p;
    int64_t block;     /* block whose cell offsets are in cell_off, -1 */
    int64_t *cell_off; /* [cells + 1] first id of each cell, relative to the block */
    int64_t cell;      /* cell (index in its block) enumerated below, -1 */
    int64_t cell_n;    /* its valid strategies */
    task_t cell_task;  /* its task before a strategy is applied */
    detailed_auto_cell dc;          /* detailed auto */
    int64_t *list;                  /* other sets: the valid candidate indices */
    detailed_auto_shape shape;      /* of (shape_model, shape_stack) */
    int64_t shape_model, shape_stack;
    int hint;
} space_cursor;

/* Sets up the space of a loaded spec (counts empty); -1 when the product
 * of the axis sizes overflows int64 or memory runs out (the reason
 * written to err, `size` bytes). */
int space_init(space *s, const spec *sp, char *err, size_t size);
void space_free(space *s);

/* Cursor for space s (allocates one block's offsets); -1 when out of
 * memory. */
int space_cursor_init(space_cursor *c, const space *s);
void space_cursor_free(space_cursor *c);

/* Block b = model * systems + system: its valid points, their estimated
 * cost (*cost), and adds every rejected candidate to rejected[code]
 * (SPACE_NCODES entries; may be NULL). No evaluation. */
int64_t space_count_block(const space *s, space_cursor *c, int64_t b,
                          int64_t *rejected, int64_t *cost);

/* Takes every block's count and cost (arrays of nblocks) as the space's
 * prefix sums; -1 when the total overflows int64. */
int space_set_counts(space *s, const int64_t *count, const int64_t *cost);

/* Serial convenience: counts every block and sets the counts. */
int space_count_all(space *s, space_cursor *c, int64_t *rejected);

/* Adds to n[cls[model * ntasks + task]] the ids of block b before the
 * block-relative position `upto` (0 .. the block's count), for each cell
 * by its task (cls entries below 0 are not counted); loads block b into
 * the cursor when it holds another. */
void space_tally(const space *s, space_cursor *c, int64_t b, int64_t upto, const int *cls,
                 int64_t *n);

/* Builds point `id` (0 <= id < total) into c->p and c->idx (the index on
 * every axis; strategy: the candidate's index in its set) and checks it:
 * STATUS_OK, or the code of the rule it breaks when the enumeration and
 * the fidelity disagree (an internal error; *where names the part). */
status_code space_point(const space *s, space_cursor *c, int64_t id,
                        const char **where);

/* Builds any combination of the axes, valid or not (idx: the index on
 * every axis, strategy: a candidate of the set) into c->p and returns the
 * code of the first rule it breaks, or STATUS_OK when it is one of the
 * space's points: the candidate-by-candidate definition that the
 * enumeration must match (tests, tools). */
status_code space_try(const space *s, space_cursor *c, const int64_t idx[SPACE_NAXES]);

/* Block of id (bisection). */
int64_t space_block_of(const space *s, int64_t id);

#endif
