/*
 * elastic.h - the elasticities of a point's step time to its hardware:
 * d log T / d log R for R the compute peaks, the HBM bandwidth, the
 * scale-up (NVLink) bandwidth and the scale-out (NIC) bandwidth.
 *
 * Each is a forward difference: the point re-evaluated with R x 1.01
 * (every dtype's peak for compute; the topology rebuilt for the links),
 * log(T' / T) / log(1.01). -1 means the step time falls as fast as the
 * resource grows (the point is bound by it), 0 that it does not depend
 * on it; as T is a sum of terms each at most inversely proportional to
 * one resource, plus fixed latencies, each lies in [-1, 0] and so does
 * their sum, to first order. Detailed points only (a MAD-Max point, or
 * a point that is not ok, keeps NaN). Costs four evaluations.
 */
#ifndef MADSWEEP_ELASTIC_H
#define MADSWEEP_ELASTIC_H

#include "eval.h"

/* Fills r's elasticity_* figures for the evaluated point p (r its
 * result); e: an engine for the re-evaluations (not one whose trace
 * the caller still needs). */
void elastic_eval(const point_t *p, engine *e, result_t *r);

#endif
