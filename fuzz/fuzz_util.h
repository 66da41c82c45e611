/*
 * fuzz_util.h - shared helpers of the libFuzzer targets in fuzz/.
 *
 * Each target is one LLVMFuzzerTestOneInput over one parser. The input
 * bytes are written to a file of their own per process (the parsers read
 * files, as the program does), under $TMPDIR or /tmp. Catalogues come
 * from $MADSWEEP_CONFIGS or the source tree's configs/.
 */
#ifndef MADSWEEP_FUZZ_UTIL_H
#define MADSWEEP_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Writes the input to this process's scratch file (suffix names the
 * kind, ".cfg" or ".h5"); returns its path, or NULL. */
const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix);

/* The catalogue directory. */
const char *fuzz_configs(void);

/* Aborts (a finding) unless s[0..n) is valid UTF-8 and JSON-shaped:
 * starts with '{', ends with "}\n", no raw control bytes. */
void fuzz_check_json(const char *s, size_t n);

#endif
