/*
 * best.h - `madsweep best`: the best points of a finished sweep file.
 *
 * Streams /results in blocks (memory: one block plus K rows per group),
 * keeps the rows with status ok, groups them by any subset of the axes
 * (model, system, task, global_batch, strategy) and prints the top K of
 * each group by one figure of result_fields[]: rates ("/s" units) and
 * mfu are maximized, everything else (times, bytes, counts) minimized;
 * ties go to the lower point id. Detailed-fidelity files print their
 * dense_plan/emb_plan columns as "parallel" and "options". Names come from the file's /axes tables, so the
 * spec is not needed. Serial: opens the file without MPI-IO. The file
 * is verified first (worker/verify.h: counts, table digests, every
 * chunk's rows against its digest), so a truncated, corrupted or foreign
 * file is reported as such and never ranked; this reads the file twice.
 */
#ifndef MADSWEEP_BEST_H
#define MADSWEEP_BEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct best_opts {
    const char *path;
    int64_t top;       /* K >= 1 */
    const char *by;    /* figure name; NULL: throughput_samples_per_s */
    const char *group; /* comma list of axes; NULL or "": one group */
    bool csv;
} best_opts;

/* Returns 0, 1 (the file cannot be read or is not a finished sweep) or
 * 2 (bad option). */
int best_run(const best_opts *o, FILE *out, FILE *err);

#endif
