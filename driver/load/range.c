/*
 * range.c - the accepted range of a number key, from its row (see
 * range.h): the checks and their text.
 */
#include "range.h"

#include "load_key.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/* 0 accepted: a range reaching down to it, or 0 besides the interval. */
static bool range_zero_ok(const load_key *k)
{
    return k->range == RANGE_FLOAT_OR0 || k->lo <= 0.0;
}

const char *range_text(const load_key *k, char *buf, size_t size)
{
    if (k->range == RANGE_INT)
        snprintf(buf, size, "%lld to %lld", (long long)k->lo, (long long)k->hi);
    else if (k->range == RANGE_FLOAT || k->range == RANGE_FLOAT_OR0)
        snprintf(buf, size, "%s%g to %g", k->range == RANGE_FLOAT_OR0 ? "0, or " : "",
                 k->lo, k->hi);
    else if (size > 0)
        buf[0] = '\0';
    return buf;
}

int range_check_int(const config_setting_t *s, const load_key *k, int64_t v,
                    load_err *err)
{
    if ((double)v >= k->lo && (double)v <= k->hi)
        return 0;
    char range[64];
    load_fail(err, s, "key '%s': %lld is out of range: must be %s%s", k->name,
              (long long)v, k->lo == 1.0 ? "positive, " : "", range_text(k, range, sizeof range));
    return -1;
}

int range_check_float(const config_setting_t *s, const load_key *k, double v,
                      load_err *err)
{
    if (isfinite(v) && ((v >= k->lo && v <= k->hi) ||
                        (k->range == RANGE_FLOAT_OR0 && v == 0.0)))
        return 0;
    char range[64];
    load_fail(err, s, "key '%s': %g is out of range: must be a finite number%s "
              "from %s", k->name, v, range_zero_ok(k) ? "" : " > 0",
              range_text(k, range, sizeof range));
    return -1;
}

int range_product(int64_t a, int64_t b, int64_t max, int64_t *out)
{
    int64_t p;
    if (__builtin_mul_overflow(a, b, &p) || p > max || p < -max)
        return -1;
    *out = p;
    return 0;
}
