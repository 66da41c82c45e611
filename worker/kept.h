/*
 * kept.h - the file side of a reduced sweep (keep other than "all"):
 * checkpoints of the reduction state, so that --resume finds what the
 * killed run had reduced, and the /groups table.
 *
 * A checkpoint covers the chunks [0, C) (the ranks stop drawing at C and
 * merge, worker.c): rank 0 writes the merged entries and the per-group
 * counts into one of two slots, /keep/slot{0,1}/state and
 * /keep/slot{0,1}/groups, and the summary's winners
 * (/keep/slot{0,1}/summary), each slot a group of its own, with what the slot
 * covers in the attributes chunks (C) and rows (rows of /results
 * committed: keep = { feasible = true; } streams its rows at every
 * checkpoint) of its state table, flushes, and only then commits by one
 * write of the root attribute keep_slot. The first checkpoint (chunks 0)
 * is written with the layout, so keep_slot exists from the start and
 * every commit rewrites an existing attribute in place. A run killed
 * while writing a slot leaves the other one, still named, intact; rows
 * past the committed count are rewritten by --resume (never cut off:
 * shrinking /results could rewrite a stale chunk over newer rows).
 * Every table carries its digest (output.h), which --resume checks
 * before it restores a checkpoint (driver/sweep/sweep.c). The finished file
 * holds /groups (one row per group: the group's key values, points
 * evaluated, per status code, kept) and no /keep, which is removed only
 * after the file is marked complete (kept_drop): a kill while finishing
 * leaves the last checkpoint to resume from.
 */
#ifndef MADSWEEP_KEPT_H
#define MADSWEEP_KEPT_H

#include <stdint.h>

#include "output.h"
#include "reduce.h"
#include "winners.h"

/* The path of table `tab` ("state", "groups", "summary") of slot
 * `slot` (0 or 1) in buf. */
void kept_name(char *buf, size_t size, int64_t slot, const char *tab);

/* Collective: writes rank 0's state (entries and counts) and the
 * summary's winners (best, winners_slots(s), merged over the ranks) as a
 * checkpoint of chunks [0, chunks) and rows [0, rows). */
void kept_checkpoint(output *o, const reduce *r, const space *s, int64_t chunks,
                     int64_t rows, const winners_best *best);

/* Collective: loads the last checkpoint into rank 0's reducer (entries,
 * counts) and every rank's best[winners_slots(s)] (left as given when
 * there is none), and sets *chunks and *rows (0 and 0 when the file has
 * none). Returns 0, or -1 when the checkpoint does not read as this
 * spec's. */
int kept_restore(output *o, reduce *r, const space *s, int64_t *chunks, int64_t *rows,
                 winners_best *best);

/* What the committed checkpoint covers (every rank reads the same):
 * 0, 1 when the file has none (chunks and rows 0), -1 when it does not
 * read. */
int kept_committed(output *o, int64_t *chunks, int64_t *rows);

/* Collective: /groups from rank 0's counts, with kept[g] points kept per
 * group (rank 0's array). The checkpoints stay until the file is marked
 * complete: a run killed while finishing resumes from the last one. */
void kept_finish(output *o, const reduce *r, const space *s, const int64_t *kept);

/* Collective: removes the checkpoints (/keep) of a file marked complete
 * (also of one killed between that mark and this removal). */
void kept_drop(output *o);

#endif
