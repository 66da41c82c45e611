/*
 * energy.c - the busy/idle power model and the hourly price (energy.h).
 */
#include "energy.h"

#include <math.h>

static int energy_known(double v)
{
    return isfinite(v) && v > 0.0;
}

double energy_idle_w(const energy_device *d)
{
    if (energy_known(d->idle_power_w))
        return d->idle_power_w;
    return ENERGY_IDLE_FRACTION * d->board_power_w;
}

/* x / n, NaN unless both are known. */
static double energy_per(double x, double n)
{
    return isfinite(x) && energy_known(n) ? x / n : (double)NAN;
}

void energy_eval(const energy_device *d, const energy_in *in, energy_out *out)
{
    double n = (double)in->devices, t = in->iteration_s;
    int ok_t = in->devices > 0 && energy_known(t);
    double e = (double)NAN, c = (double)NAN;
    if (ok_t && energy_known(d->board_power_w)) {
        double idle = energy_idle_w(d);
        if (idle > d->board_power_w)
            idle = d->board_power_w;
        double busy = isfinite(in->busy_s) ? in->busy_s : 0.0;
        busy = busy < 0.0 ? 0.0 : busy > t ? t : busy;
        e = n * (idle * t + (d->board_power_w - idle) * busy);
    }
    if (ok_t && energy_known(d->price_per_hour_usd))
        c = n * d->price_per_hour_usd * t / 3600.0;
    out->energy_per_iteration_j = e;
    out->energy_per_sample_j = energy_per(e, in->samples);
    out->energy_per_token_j = energy_per(e, in->tokens);
    out->cost_per_iteration_usd = c;
    out->cost_per_sample_usd = energy_per(c, in->samples);
    out->cost_per_million_tokens_usd = energy_per(c * 1e6, in->tokens);
}
