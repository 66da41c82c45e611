/*
 * trace_file.h - `eval --trace FILE`: a trace written whole or not at all.
 *
 * Invariant: FILE, when it is (or would be) a regular file, only ever
 * holds a complete trace: the trace is written to a temporary file in
 * FILE's directory and renamed over FILE once written, flushed and
 * synced; a failure (a full file system, a file-size limit, a point
 * without such a trace) removes the temporary file and leaves FILE as
 * it was (issue 29: a trace that filled the disk left a 20 MB partial
 * file behind). A FILE that exists and is not a regular file (a pipe,
 * /dev/stdout) is written in place. FILE equal to the point file is
 * refused before anything is written.
 */
#ifndef MADSWEEP_TRACE_FILE_H
#define MADSWEEP_TRACE_FILE_H

#include <stdint.h>
#include <stdio.h>

#include "../../cost/engine.h"
#include "../../cost/eval.h"

/* 2 with msg set when `path` is the point file `input` (checked before
 * the evaluation, so that nothing is printed first), else 0. */
int trace_file_check(const char *path, const char *input, char *msg, size_t size);

/* Writes the trace of point p (evaluated into r by engine e, which
 * recorded) to `path`; `input` is the point file (also the title).
 * Returns 0, 1 (a write failed, or the point has no such trace: msg
 * says which) or 2 (path is the input). *dropped: events past the cap. */
int trace_file_write(const char *path, const char *input, const point_t *p,
                     const result_t *r, const engine *e, int64_t *dropped, char *msg,
                     size_t size);

#endif
