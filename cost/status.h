/*
 * status.h - outcome codes of the cost model.
 *
 * One enum covers three families, kept in separate numeric ranges so a
 * stored code says which family it belongs to:
 *   STATUS_OK                      the point was evaluated;
 *   STATUS_INFEASIBLE_* (1..99)    the point is valid but cannot run (data,
 *                                  recorded in the status column of a sweep);
 *   STATUS_INVALID_*   (100..)     the inputs break a rule of the fidelity
 *                                  (an error for `eval`, a skipped point for
 *                                  a sweep).
 * The numeric values are part of the HDF5 output format: append, never
 * renumber.
 */
#ifndef MADSWEEP_STATUS_H
#define MADSWEEP_STATUS_H

typedef enum status_code {
    STATUS_OK = 0,

    STATUS_INFEASIBLE_MEMORY = 1,     /* does not fit in device memory */
    STATUS_INFEASIBLE_BATCH = 2,      /* batch does not split over the plan */
    STATUS_INFEASIBLE_SHAPE = 3,      /* a dimension does not split evenly */

    STATUS_INVALID_VALUE = 100,       /* a number out of its domain */
    STATUS_INVALID_LEVELS = 101,      /* more plan levels than allowed */
    STATUS_INVALID_DEGREE_ONE = 102,  /* a level of degree < 2 */
    STATUS_INVALID_REPEAT = 103,      /* a strategy used on two levels */
    STATUS_INVALID_PRODUCT = 104,     /* degrees do not multiply to devices */
    STATUS_INVALID_FIRST_DEGREE = 105,/* first degree not node size / all */
    STATUS_INVALID_FSDP_FIRST = 106,  /* fsdp not on the first level */
    STATUS_INVALID_STRATEGY = 107,    /* strategy unknown for the component */
    STATUS_INVALID_BATCH_MISMATCH = 108, /* global batches disagree */
    STATUS_INVALID_DTYPE = 109,       /* a precision without a peak; madmax:
                                         bytes per dense param not 1/2/4/8 */
    STATUS_INVALID_TP_ODD_LAYERS = 110,  /* DLRM tp needs even MLP stacks */
    STATUS_INVALID_SINGLE_NODE_BLEND = 111, /* one node but inter blend > 0 */
    STATUS_INVALID_NOTHING_TRAINED = 112,   /* finetune with all frozen */
    STATUS_INVALID_FIDELITY = 113,    /* model/task unsupported by fidelity */
    STATUS_INVALID_NODES = 114,       /* devices not divisible by nodes */
    STATUS_INVALID_BATCH_KIND = 115,  /* sweep: batch listed for another model kind */
    /* the evaluation gave a figure that is not finite, or negative: an
     * input outside its physical range (eval_run; a sweep row, figures
     * zeroed) */
    STATUS_INVALID_NONFINITE = 116,
    STATUS_INVALID_NEGATIVE = 117,
    STATUS_INVALID_BATCH_UNUSED = 118, /* sweep: a serving task that sets its own load
                                          evaluates its kind's first batch only */
    STATUS_NOMEM = 200                /* allocation failed */
} status_code;

/* Short stable token for a code, e.g. "infeasible:memory". Never NULL. */
const char *status_name(status_code code);

/* One-line human explanation of the rule behind a code. Never NULL. */
const char *status_text(status_code code);

/* Nonzero for codes that are data (STATUS_OK and STATUS_INFEASIBLE_*). */
int status_is_data(status_code code);

#endif
