/*
 * range.h - the accepted range of every number key of points and
 * catalogues, one table for the checks and for `madsweep keys`.
 *
 * The loader (load.c) checks each integer and each float it reads here
 * before any arithmetic (range_check_int / range_check_float: a message
 * with file, line and key, and the range), products of counts with
 * range_product, and `madsweep keys` prints each key's range from the
 * same tables (range_int_text / range_float_text), as the sweep spec's
 * key table (speckeys.c) does for the catalogue keys it shares. A key
 * missing from the tables gets the defaults: integers 0 to 2^40, other
 * numbers 0 to 1e30, always finite. Keys are matched by name, whatever
 * their group (a software stack's grad_reduce_bytes and a task's share a
 * range).
 */
#ifndef MADSWEEP_RANGE_H
#define MADSWEEP_RANGE_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#include "load_err.h"

#define RANGE_P16 (INT64_C(1) << 16)
#define RANGE_P24 (INT64_C(1) << 24) /* the device bound */
#define RANGE_P36 (INT64_C(1) << 36)
#define RANGE_P40 (INT64_C(1) << 40)

/* 0 when v lies in key's range, else -1 with err naming setting s, the
 * key, the value and the range. Floats must also be finite. */
int range_check_int(const config_setting_t *s, const char *key, int64_t v,
                    load_err *err);
int range_check_float(const config_setting_t *s, const char *key, double v,
                      load_err *err);

/* The range as text: "1 to 65536"; "0, or 0.001 to 1e+06" (0 allowed
 * besides the interval). */
void range_int_text(const char *key, char *buf, size_t size);
void range_float_text(const char *key, char *buf, size_t size);

/* *out = a * b when the product is at most `max` in magnitude (checked:
 * no overflow on any int64 inputs); -1 otherwise. */
int range_product(int64_t a, int64_t b, int64_t max, int64_t *out);

#endif
