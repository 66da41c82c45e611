/*
 * elastic.c - elasticities of the step time to the hardware (see
 * elastic.h).
 */
#include "elastic.h"

#include <math.h>
#include <string.h>

#define ELASTIC_STEP 1.01

enum { ELASTIC_COMPUTE, ELASTIC_HBM, ELASTIC_SCALEUP, ELASTIC_SCALEOUT, ELASTIC_N };

/* q = p with resource k scaled by f, its topology rebuilt; 0 or -1. */
static int elastic_scaled(const point_t *p, int k, double f, point_t *q)
{
    memcpy(q, p, sizeof *q);
    hw_t *h = &q->system.hw;
    switch (k) {
    case ELASTIC_COMPUTE:
        for (int d = 0; d < HW_NDTYPES; d++)
            h->peak_flops[d] *= f;
        break;
    case ELASTIC_HBM:
        h->mem_bw_bytes_per_s *= f;
        break;
    case ELASTIC_SCALEUP:
        h->scaleup_bytes_per_s *= f;
        break;
    default:
        h->nic_bytes_per_s *= f;
        q->system.nic_gbps_per_device *= f; /* 0 (the hw's) stays 0 */
        break;
    }
    const char *bad = NULL;
    return topo_system_derive(&q->system, &bad) == STATUS_OK ? 0 : -1;
}

void elastic_eval(const point_t *p, engine *e, result_t *r)
{
    double *out[ELASTIC_N] = {&r->elasticity_compute, &r->elasticity_hbm_bw,
                              &r->elasticity_scaleup_bw, &r->elasticity_scaleout_bw};
    for (int k = 0; k < ELASTIC_N; k++)
        *out[k] = (double)NAN;
    if (p->fidelity != EVAL_DETAILED || r->status != STATUS_OK ||
        !(r->iteration_time_s > 0))
        return;
    point_t q;
    result_t s;
    for (int k = 0; k < ELASTIC_N; k++)
        if (elastic_scaled(p, k, ELASTIC_STEP, &q) == 0 &&
            eval_run(&q, e, &s, NULL) == STATUS_OK && s.iteration_time_s > 0)
            *out[k] = log(s.iteration_time_s / r->iteration_time_s) / log(ELASTIC_STEP);
}
