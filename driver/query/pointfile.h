/*
 * pointfile.h - design points written back as point files, and the point
 * of a row of a sweep file (`madsweep point OUT.h5 ID`).
 *
 * pointfile_write() prints a point as a libconfig point file with every
 * input inline (model, system with its hardware, task with the whole
 * strategy), written from the loader's key tables (load_write_keys), so
 * `madsweep eval` of it loads the same values: doubles with 17
 * significant digits, enums by name. A detailed point's hardware is
 * inline in its system, with the power and price the system gave it,
 * and its software stack follows as `stack = { ... }` (a sweep row's
 * stack, from the stacks axis; a point with none states the idealized
 * stack in full). A MAD-Max
 * system keeps its power and price as keys; `mad_hw` (may be NULL) is
 * the hardware generation it names, written as the file's own list
 * 'hardware' so that the name resolves with no catalogue.
 *
 * pointfile_from_sweep() rebuilds the point of row ID: it writes the
 * spec text and the catalogue texts stored in the file (provenance.h)
 * into a temporary directory, loads the spec from there (so the
 * catalogues as they were when the sweep ran, whatever configs/ holds
 * now, stacks.cfg included), rebuilds the point from the row's index on
 * every axis (space_try; no count pass), evaluates it and checks that every figure
 * equals the row's bit for bit (a different build may compute other
 * figures: that is an error naming the figure), then prints the point
 * file with a header of comments naming the row. Files without stored
 * catalogues (older versions) use the catalogue directory instead, with
 * a note on `err`.
 */
#ifndef MADSWEEP_POINTFILE_H
#define MADSWEEP_POINTFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../cost/eval.h"

void pointfile_write(FILE *out, const point_t *p, const hw_t *mad_hw);

/* Returns 0, 1 (the file or the row cannot be read, or the row does not
 * reproduce) or 2 (bad id). */
int pointfile_from_sweep(const char *path, int64_t id, const char *configs_dir,
                         FILE *out, FILE *err);
/* The same, printing the point's launch command for its serving engine
 * (engine_args.h) instead of the point file when engine_args is set. */
int pointfile_from_sweep_as(const char *path, int64_t id, const char *configs_dir,
                            bool engine_args, FILE *out, FILE *err);

#endif
