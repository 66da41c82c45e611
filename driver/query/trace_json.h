/*
 * trace_json.h - Chrome trace-event output of an engine's two streams.
 */
#ifndef MADSWEEP_TRACE_JSON_H
#define MADSWEEP_TRACE_JSON_H

#include <stdio.h>

#include "../../cost/detailed.h"
#include "../../cost/engine.h"

/* Writes a JSON object {"traceEvents": [...]} with one complete ("X")
 * event per recorded event, times in microseconds; the compute stream is
 * thread 1, the communication stream thread 2, so Perfetto and
 * chrome://tracing show two tracks. The engine must have recorded. */
int trace_json_engine(FILE *out, const engine *e, const char *title);

/* The whole iteration of a detailed transformer point (detailed_trace):
 * one process per pipeline stage ("stage S"), a thread per track
 * (compute, tp, cp, ep, pp, dp), each event with its micro-batch, chunk,
 * bytes per rank and group size as arguments; otherData holds the
 * simulated makespan and the evaluated iteration time. At most
 * max_events events are written (a huge gradient accumulation would
 * fill the disk); *dropped counts the rest, also in otherData
 * (events_dropped). Returns 0, or -1 with *st the reason when the point
 * has no such trace. */
int trace_json_detailed(FILE *out, const point_t *p, double iteration_s, const char *title,
                        int64_t max_events, int64_t *dropped, status_code *st);

/* The cap of `eval --trace` (about 200 MB of JSON). */
#define TRACE_JSON_MAX_EVENTS INT64_C(1000000)

#endif
