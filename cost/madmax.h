/*
 * madmax.h - the MAD-Max fidelity: the reference's first-order model.
 *
 * Reproduces, figure for figure, the public MAD-Max reference's DLRM
 * (tasks/dlrm_tasks.py) and LLM (tasks/llm_tasks_preoptimized.py) task
 * builders: the same events in the same order on the same streams, the
 * same durations and the same dependencies, resolved through handles
 * instead of name searches.
 */
#ifndef MADSWEEP_MADMAX_H
#define MADSWEEP_MADMAX_H

#include "eval.h"

extern const eval_ops madmax_ops;

#endif
