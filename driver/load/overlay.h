/*
 * overlay.h - a catalogue fragment laid over the catalogues: the stacks
 * a user calibrated to their own cluster (scripts/calibrate.py --out
 * FILE.cfg, `madsweep eval|sweep --stacks FILE.cfg`), found before
 * configs/stacks.cfg.
 *
 * A fragment is a file with a list `stacks = ( {...}, ... );` whose
 * entries may name a `base` in the fragment or in the catalogue. Each
 * entry is loaded (and so checked, with the fragment's file and line)
 * before it is copied into the list `stacks` of the point's or spec's
 * root, where the loader looks first. A name the destination already
 * has is refused: a fragment adds stacks, it never replaces one.
 */
#ifndef MADSWEEP_OVERLAY_H
#define MADSWEEP_OVERLAY_H

#include <libconfig.h>

#include "load.h"

/* Copies setting s (a scalar, array, list or group, recursively) into
 * aggregate `parent` under s's name (or unnamed, into a list or array).
 * Source lines are not copied. 0, or -1 (out of memory, or a name
 * `parent` already holds). */
int overlay_copy(config_setting_t *parent, const config_setting_t *s);

/* Reads fragment `path` (include dir configs_dir), checks its stacks
 * (bases resolved in it, else configs_dir/stacks.cfg) and appends them
 * to the list `stacks` of `root` (created when absent). 0, or -1 with
 * err set. */
int overlay_stacks(config_setting_t *root, const char *path, const char *configs_dir,
                   load_err *err);

/* Reads the catalogues configs_dir/hardware.cfg and stacks.cfg (those
 * that exist) into one config `cfg` (lists 'hardware' and 'stacks' under
 * one root; each setting keeps its file, named relative to configs_dir,
 * and line), then lays fragment stacks_path (NULL: none) over it. 0, or
 * -1 with err set (cfg destroyed). */
int overlay_catalogue(config_t *cfg, const char *configs_dir, const char *stacks_path,
                      load_err *err);

/* load_point with fragment `stacks_path` laid over the point's file
 * (NULL: load_point itself). */
int overlay_load_point(const char *path, const char *stacks_path, const char *configs_dir,
                       point_t *p, load_err *err);

#endif
