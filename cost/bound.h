/*
 * bound.h - what bounds a design point: the largest share of its step.
 *
 * A step's time of the busiest device splits into compute (math-bound
 * kernels, memory-bound kernels, or compute unsplit where a fidelity does
 * not split it), the optimizer step, exposed communication (by parallel
 * dimension where the fidelity attributes it, else as one figure) and the
 * pipeline bubble (cost/result.h has the figures). bound_derive() names
 * the largest of the figures a row has as result_t.bound_code; a row that
 * is not ok has BOUND_NONE. Pure functions, no state.
 */
#ifndef MADSWEEP_BOUND_H
#define MADSWEEP_BOUND_H

#include "result.h"

typedef enum bound_kind {
    BOUND_NONE = 0,
    BOUND_COMPUTE_MATH = 1,
    BOUND_COMPUTE_MEMORY = 2,
    BOUND_COMPUTE = 3, /* compute not split (MAD-Max, DLRM) */
    BOUND_COMM_TP = 4,
    BOUND_COMM_CP = 5,
    BOUND_COMM_EP = 6,
    BOUND_COMM_PP = 7,
    BOUND_COMM_DP = 8,
    BOUND_COMM = 9, /* exposed communication not attributed */
    BOUND_BUBBLE = 10,
    BOUND_OPTIMIZER = 11,
    BOUND_NKINDS = 12
} bound_kind;

/* Longest name, with its NUL ("compute_memory"). */
#define BOUND_NAME_MAX 16

/* "compute_math", ..., "optimizer"; "" for BOUND_NONE or a bad code. */
const char *bound_name(int64_t code);

/* Sets r->bound_code from r's figures (BOUND_NONE unless r is ok). */
void bound_derive(result_t *r);

#endif
