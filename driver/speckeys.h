/*
 * speckeys.h - the keys of sweep specs, one table per namespace.
 *
 * The spec loader checks every key against these tables (an unknown key
 * is an error naming the closest known one) and `madsweep keys` prints
 * them with their meaning and, for numbers, their accepted range, so the
 * documentation and the checks cannot drift apart. A key belongs to one fidelity or to both.
 */
#ifndef MADSWEEP_SPECKEYS_H
#define MADSWEEP_SPECKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* The accepted range [*lo, *hi] of numeric key `key` of namespace ns
 * (what the spec loader checks, and `madsweep keys` prints as {lo to
 * hi}); false for other keys. */
bool speckeys_range(speckeys_ns ns, const char *key, double *lo, double *hi);

/* Prints every namespace for `madsweep keys`, numbers with their range. */
void speckeys_print(FILE *out);

#endif
