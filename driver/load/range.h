/*
 * range.h - the accepted range of a number key, read from the key's row
 * (load_key.h): the check every number read goes through before any
 * arithmetic, its text (in messages and `madsweep keys`), and the
 * checked product of counts.
 *
 * The ranges themselves are the rows' (LOAD_INT, LOAD_FLOAT,
 * LOAD_FLOAT_OR0 in the catalogue readers' tables), chosen so that
 * products of counts fit in int64 and times stay finite: counts of
 * layers, heads, experts and MLP stacks at most 2^16, widths, tokens and
 * degrees at most 2^24 (the device bound), rows and batches at most 2^36
 * to 2^40. Rates, capacities and peaks are 0 (where allowed) or at
 * least 1 per second or byte (no denormals), at most 1e24; fractions
 * and efficiencies in [1e-6, 1]; latencies in [0, 3600] s; a number
 * with no tighter bound: integers [0, 2^40], floats [0, 1e30]. Floats
 * are always finite. Products of several keys are checked where they
 * are formed (range_product).
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

/* What kind of number a key is: none (text, enums, flags, groups); an
 * integer in [lo, hi]; a float in [lo, hi]; a float that is 0 or in
 * [lo, hi] (lo > 0). */
typedef enum range_kind {
    RANGE_NONE,
    RANGE_INT,
    RANGE_FLOAT,
    RANGE_FLOAT_OR0
} range_kind;

struct load_key;

/* 0 when v lies in the range of row k, else -1 with err naming setting
 * s, the key, the value and the range. Floats must also be finite. */
int range_check_int(const config_setting_t *s, const struct load_key *k, int64_t v,
                    load_err *err);
int range_check_float(const config_setting_t *s, const struct load_key *k, double v,
                      load_err *err);

/* The range of row k as text: "1 to 65536"; "0, or 0.001 to 1e+06" (0
 * allowed besides the interval); "" when k is not a number. Returns buf. */
const char *range_text(const struct load_key *k, char *buf, size_t size);

/* *out = a * b when the product is at most `max` in magnitude (checked:
 * no overflow on any int64 inputs); -1 otherwise. */
int range_product(int64_t a, int64_t b, int64_t max, int64_t *out);

#endif
