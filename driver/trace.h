/*
 * trace.h - Chrome trace-event output of an engine's two streams.
 */
#ifndef MADSWEEP_TRACE_H
#define MADSWEEP_TRACE_H

#include <stdio.h>

#include "../cost/engine.h"

/* Writes a JSON object {"traceEvents": [...]} with one complete ("X")
 * event per recorded event, times in microseconds; the compute stream is
 * thread 1, the communication stream thread 2, so Perfetto and
 * chrome://tracing show two tracks. The engine must have recorded. */
int trace_write(FILE *out, const engine *e, const char *title);

#endif
