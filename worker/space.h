/*
 * space.h - the design space of a sweep spec, never materialized.
 *
 * A point's id is a mixed-radix number over the axes, outermost first:
 *   id = (((((model * S + system) * W + stack) * T + task) * B + batch) * K
 *         + strategy)
 * so consecutive ids share model, system, stack and task, and a cursor
 * rebuilds only what changed (the axis enum's order is the column order of
 * the output file; space_nest lists the nesting). Decoding is O(axes) for any id on any rank.
 * space_point() turns an id into a checked design point: INVALID codes
 * mean "skip and count" (the combination does not exist under the
 * fidelity's rules), STATUS_OK means "evaluate".
 */
#ifndef MADSWEEP_SPACE_H
#define MADSWEEP_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "spec.h"

typedef enum space_axis {
    SPACE_MODEL = 0,
    SPACE_SYSTEM,
    SPACE_TASK,
    SPACE_BATCH,
    SPACE_STRATEGY,
    SPACE_STACK, /* software stack (detailed; madmax: one entry "none") */
    SPACE_NAXES
} space_axis;

/* Axis names as used in output files ("model", "system", ...). */
extern const char *const space_axis_names[SPACE_NAXES];

/* The axes from the outermost to the innermost digit of an id. */
extern const space_axis space_nest[SPACE_NAXES];

typedef struct space {
    const spec *sp;
    int64_t radix[SPACE_NAXES];
    int64_t total;
} space;

/* Decoding state: the last point built, reused between calls. */
typedef struct space_cursor {
    int64_t idx[SPACE_NAXES];
    int64_t model, system, stack; /* indices whose values are in p, -1 if none */
    point_t p;
} space_cursor;

/* Sets up the space of a loaded spec; -1 when the product of the axis
 * sizes overflows int64 (the reason written to err, `size` bytes). */
int space_init(space *s, const spec *sp, char *err, size_t size);

void space_decode(const space *s, int64_t id, int64_t idx[SPACE_NAXES]);
int64_t space_encode(const space *s, const int64_t idx[SPACE_NAXES]);

void space_cursor_init(space_cursor *c);

/* Builds point `id` into c->p and checks it; returns STATUS_OK or the
 * INVALID code of the first rule it breaks (*where names the part). */
status_code space_point(const space *s, space_cursor *c, int64_t id,
                        const char **where);

/* Counts the valid ids in [lo, hi) without evaluating; when `by_code` is
 * not NULL, adds one to by_code[code - STATUS_INVALID_VALUE] for every
 * invalid id (array of SPACE_NCODES). */
#define SPACE_NCODES 100
int64_t space_count_valid(const space *s, space_cursor *c, int64_t lo,
                          int64_t hi, int64_t *by_code);

#endif
