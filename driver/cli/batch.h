/*
 * batch.h - `madsweep eval --batch [FILE]`: many points evaluated in one
 * process, for the scripts that validate and calibrate the model
 * (scripts/validate.py, scripts/calibrate.py), which otherwise start one
 * process per row and parse the catalogues each time.
 *
 * Input (FILE, or standard input when FILE is absent or "-") is a
 * sequence of records, each ended by a line "%%":
 *   - a point file's text, optionally preceded by a line "%id NAME" (NAME
 *     is echoed in the record's output);
 *   - "%file PATH": the point file PATH;
 *   - "%set LIST ENTRY KEY VALUE" lines (LIST "stacks" or "hardware";
 *     KEY as a fit declaration names it, KEY or KEY[i]; a fact's nominal
 *     is set): trial values of fitted constants for the points that
 *     follow, each checked by loading the entry again;
 *   - "%reset": the catalogues as the files have them again.
 * Output: exactly one line per record, flushed: the point's `eval --json`
 * object with "id" first, {"id": ..., "error": "..."} for a point that
 * does not load or evaluate (an infeasible point is data: its status),
 * {"set": N} or {"reset": true} for a control record, or {"error": ...}
 * for a control record that failed; text after the last "%%" line (input
 * cut short) gets an error line too. A bad record never ends the run; the
 * exit code is 0 unless the catalogues themselves cannot be read (2) or
 * output fails (1).
 *
 * The catalogues (hardware.cfg, stacks.cfg, and a --stacks fragment)
 * are read once; each point is laid over them as if it were one file
 * holding both, so that it resolves hardware and stacks exactly as
 * `madsweep eval POINT` does (a point with lists of its own is loaded
 * on its own).
 */
#ifndef MADSWEEP_BATCH_H
#define MADSWEEP_BATCH_H

#include <stdio.h>

/* Runs a batch from `in` (path; NULL or "-": stdin); configs_dir as
 * load_configs_dir() gives it, stacks_path a fragment or NULL. */
int batch_run(const char *in, const char *configs_dir, const char *stacks_path, FILE *out,
              FILE *err);

#endif
