/*
 * catjson.h - `madsweep list json`: the catalogues as one JSON document
 * for the scripts that map measured rows to points and fit constants
 * (scripts/validate.py, scripts/calibrate.py), so that they read every
 * hardware name, alias, stack and fit declaration from the catalogue
 * instead of keeping lists of their own.
 *
 *   {"configs": DIR,
 *    "hardware": [{"name", "base", "aliases": [...]}, ...],
 *    "stacks": [{"name", "base", "serving", "match", "summary", "file"}, ...],
 *    "fits": [{"list", "entry", "key", "file", "line", "value", "band",
 *              "rows", "objective", "range", "prior"}, ...]}
 *
 * Every entry is loaded first (a broken one is an error with its file
 * and line, and the exit code is 2); "file" names are relative to DIR,
 * except for a --stacks fragment's entries (the fragment's path).
 */
#ifndef MADSWEEP_CATJSON_H
#define MADSWEEP_CATJSON_H

#include <stdio.h>

int catjson_run(const char *configs_dir, const char *stacks_path, FILE *out, FILE *err);

#endif
