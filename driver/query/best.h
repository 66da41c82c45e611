/*
 * best.h - `madsweep best`: the best points of a finished sweep file.
 *
 * Works on the file's own columns (frame.h): every /results member and
 * every /axes column joined in, so a figure or axis column added to the
 * file needs no change here. Streams /results in blocks (memory: one
 * block plus K rows per group) and:
 *   - keeps rows that fit: status ok and mem_fits not 0 (MAD-Max rows
 *     stay ok when their weights exceed the device memory, mem_fits says
 *     so), unless `all` (then every row, with its status shown): a point
 *     that does not fit is never crowned by default;
 *   - keeps rows matching `where` (where.h: "task==pretrain,devices>=1024,
 *     tpot_s<=0.03");
 *   - groups them by any columns (`group`, comma list: model, system,
 *     hardware, devices, task, stack, nic_gbps_per_device, ...; none: one
 *     group)
 *     and keeps the top K of each group by the number column `by`:
 *     maximized when its unit is a rate ("/s", "/J") or it is mfu,
 *     minimized otherwise (times, bytes, energy, cost), or as `order`
 *     says (cost/result.h result_direction_of: the rule of a sweep's
 *     `keep` too); rows whose `by` is NaN (a figure not computed for
 *     them) are left out, as `keep` leaves them out; ties go to the
 *     lower point id;
 *   - shows a plan once: rows of a group that differ only in their
 *     strategy index and in the order of degree-1 dimensions in their
 *     layout (tp-cp-dp-pp and tp-cp-pp-dp when pp = 1), with every
 *     figure equal, are the same plan; the lowest id stands for it.
 * Groups print in order: numbers ascending, texts in the order the file
 * first shows them (the spec's order). Text output is a table with the
 * key columns; --csv prints every column (each once, at full precision).
 * With `baseline` (conditions in the language of `where`), each group
 * also keeps its best row matching the baseline among the rows that
 * fit and match `where`, prints it after the group's best rows (column
 * `row`: best / baseline) and gives each best row its `speedup` over it
 * (the best's figure over the baseline's for a figure maximized, the
 * inverse when minimized: >= 1 for the first row); a group whose
 * baseline does not fit (its matching rows are not ok or exceed memory)
 * or does not exist says so in column `baseline`.
 */
#ifndef MADSWEEP_BEST_H
#define MADSWEEP_BEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Rows best keeps over all groups (--top x groups at most this). */
#define BEST_MAX_KEPT (INT64_C(1) << 22)

typedef struct best_opts {
    const char *path;
    int64_t top;       /* K from 1 to BEST_MAX_KEPT */
    const char *by;    /* number column; NULL: throughput_samples_per_s */
    const char *group; /* comma list of columns; NULL or "": one group */
    const char *where; /* conditions (where.h); NULL: none */
    const char *baseline; /* conditions of the baseline rows; NULL: none */
    const char *order; /* "max", "min" or NULL (from the unit) */
    bool all;          /* rows of every status, not only ok */
    bool csv;
    bool columns;      /* list the file's columns instead */
} best_opts;

/* Returns 0, 1 (the file cannot be read or is not a finished sweep) or
 * 2 (bad option). */
int best_run(const best_opts *o, FILE *out, FILE *err);

#endif
