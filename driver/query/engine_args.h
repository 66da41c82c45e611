/*
 * engine_args.h - the launch command of a serving point for its engine
 * (`madsweep point OUT.h5 ID --engine-args`): `vllm serve ...`,
 * `python -m sglang.launch_server ...` or `trtllm-serve ...` with the
 * point's parallel layout, KV dtype, batch and token limits; a
 * disaggregated point one command per pool (and TensorRT-LLM's
 * disaggregated router). The engine is the stack's `engine` fact; flags
 * as each engine's documentation names them (sources in engine_args.c).
 */
#ifndef MADSWEEP_ENGINE_ARGS_H
#define MADSWEEP_ENGINE_ARGS_H

#include <stdio.h>

#include "../../cost/eval.h"

/* Writes the commands of point p (evaluated into r: the resolved
 * concurrency, the prefill pool's devices) to out; returns 0, or -1 with
 * a line on err when p is no serving point of an engine with launch
 * flags. */
int engine_args_write(FILE *out, FILE *err, const point_t *p, const result_t *r);

#endif
