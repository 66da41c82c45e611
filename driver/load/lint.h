/*
 * lint.h - a lexical check of a libconfig file before libconfig reads it.
 *
 * libconfig 1.5 has two failure modes on bad input that a clear error
 * message should replace: it calls exit() when an @include names a
 * directory, and it leaks the token when a string stands where no value
 * may (`a = 1 "x"`, a stray quote). lint_config() scans the file's
 * tokens (comments, strings with escapes, @include directives, words,
 * punctuation) and reports, as "FILE:LINE: ...":
 *   - a NUL byte (not a text file);
 *   - a string literal that does not follow '=', ':', '[', '(', ',' or
 *     another string (the only places libconfig accepts one);
 *   - an @include of something that is not a regular file (the path is
 *     the include directory joined with the name, as libconfig does);
 *     included files are checked in turn, at most 10 deep;
 *   - an integer that libconfig would read as another number (issue 29):
 *     past 32 bits without the L suffix (libconfig 1.5 keeps the low 32
 *     bits: 5000000000 rows became 705032704), a hexadecimal above
 *     0x7fffffff without it (negative), past 64 bits with it; named with
 *     the key it is the value of.
 * Everything else is left to libconfig's own messages.
 */
#ifndef MADSWEEP_LINT_H
#define MADSWEEP_LINT_H

#include <stddef.h>

/* 0, or -1 with msg set. A file that cannot be read passes (libconfig
 * reports it). */
int lint_config(const char *path, const char *include_dir, char *msg,
                size_t size);

#endif
