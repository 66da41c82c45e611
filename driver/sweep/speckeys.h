/*
 * speckeys.h - the keys of sweep specs, one table per namespace, and
 * the readers of a spec's numbers by them.
 *
 * The spec loader checks every key against these tables (an unknown key
 * is an error naming the closest known one) and reads every number of
 * the spec's own keys in the range its row gives (speckeys_numbers,
 * speckeys_int); `madsweep keys` prints the same rows with their
 * meaning and range, so the documentation and the checks cannot drift
 * apart. A key belongs to one fidelity or to both. The bottom of the
 * spec loader (driver/sweep/spec_*.c, variant.c): it includes nothing
 * of theirs.
 */
#ifndef MADSWEEP_SPECKEYS_H
#define MADSWEEP_SPECKEYS_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../load/load_err.h"

/* Bounds of the spec's own integers (the catalogues' are their key
 * rows'): devices of a generated system, tokens, layer indices, global
 * batch sizes. */
#define SPEC_MAX_DEVICES (INT64_C(1) << 24)
#define SPEC_MAX_TOKENS (INT64_C(1) << 24)
#define SPEC_MAX_LAYERS (INT64_C(1) << 16)
#define SPEC_MAX_BATCH (INT64_C(1) << 40)
#define SPEC_MAX_REQUESTS (INT64_C(1) << 24) /* a serving task's concurrency */
/* Systems a spec generates (system_grid), each about 2 kB on every rank
 * (the system, its mirror, scale factors and figures, its summary
 * group): at most 2 GB a rank; counted before any is made. */
#define SPEC_MAX_SYSTEMS (INT64_C(1) << 20)

typedef enum speckeys_ns {
    SPECKEYS_TOP,   /* the spec's root */
    SPECKEYS_GRID,  /* a group of system_grid */
    SPECKEYS_TASK,  /* a group of tasks */
    SPECKEYS_NNS
} speckeys_ns;

/* Fidelity masks (1 << eval_fidelity). */
enum { SPECKEYS_MADMAX = 1u, SPECKEYS_DETAILED = 2u, SPECKEYS_BOTH = 3u };

/* Is `key` a key of namespace ns for fidelity mask `fid`? */
bool speckeys_known(speckeys_ns ns, unsigned fid, const char *key);

/* "unknown key 'k' in WHERE of the F fidelity; did you mean \"x\"? (keys:
 * a, b, c)" into buf; returns buf. */
const char *speckeys_unknown(speckeys_ns ns, unsigned fid, const char *key,
                             const char *where, char *buf, size_t size);

/* Reads the optional array of numbers `key` of group g (integers only
 * when `integer`), each in the range of the row `row` of namespace ns
 * (NULL: the row `key`; the array's elements distinct): a malloc'ed
 * array of *n numbers, or {def} when absent and def > 0, else NULL and
 * 0. Returns 0, or -1 with err set on a bad array. */
int speckeys_numbers(speckeys_ns ns, const char *row, const config_setting_t *g,
                     const char *key, bool integer, double def, double **out, int *n,
                     load_err *err);

/* Reads the optional integer `key` of group g, in the range of its row
 * of namespace ns: 1 with *out set, 0 when absent, -1 with err set. */
int speckeys_int(speckeys_ns ns, const config_setting_t *g, const char *key, int64_t *out,
                 load_err *err);

/* Reads the optional boolean `key` of group g into *out (absent: left
 * as it is); 0, or -1 with err set. */
int speckeys_bool(const config_setting_t *g, const char *key, bool *out, load_err *err);

/* Reads the optional label `key` of group g (a sweep's or a task's name)
 * into dst (absent: left as it is): a string of 1 to size - 1 bytes, else
 * refused (issue 29: a number was ignored, "" labelled rows with nothing,
 * a longer one was cut); 0, or -1 with err set. */
int speckeys_label(const config_setting_t *g, const char *key, char *dst, size_t size,
                   load_err *err);

/* Prints every namespace for `madsweep keys`, numbers with their range. */
void speckeys_print(FILE *out);

#endif
