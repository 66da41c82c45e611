/*
 * servesim.h - step-level simulations of a serving engine on the step
 * cost of cost/detailed/serve/step.c, the independent reference the
 * serving model's closed forms are tested against (test_serve.c,
 * test_deploy.c): every step is formed and costed one by one, requests
 * followed individually, nothing averaged in advance.
 */
#ifndef MADSWEEP_SERVESIM_H
#define MADSWEEP_SERVESIM_H

#include <stdint.h>

#include "../cost/detailed/serve/serve.h"

typedef struct sim_out {
    double tpot, ttft, tok_s;
} sim_out;

/* A closed loop of C requests of isl/osl tokens. (With fixed lengths an
 * endless loop started desynchronized drifts over thousands of steps
 * into clumps that return together, waves; the closed form is the
 * desynchronized state, a run of a few rounds compares with it.)
 *   policy   decode-first (prefill_first 0): every step carries all
 *            running decodes and fills the rest of the budget K with
 *            prompt chunks in arrival order; prefill-first (1): while
 *            prompts wait, steps of up to K prompt tokens alone (the
 *            decodes wait), else a decode step;
 *   client   a request is sent when one returns (at the end of the step
 *            that gives its last token) and reaches the scheduler `front`
 *            seconds later, which TTFT counts; with `overlap` the batch
 *            of a step is formed when the step before it starts (a
 *            request that arrives during step n joins step n + 2 at the
 *            earliest), else when it starts;
 *   run      rounds = 0: an endless loop, started desynchronized (request
 *            i has generated i (osl - 1) / C tokens), measured on the
 *            requests sent after step `warm` of `steps`; rounds > 0: a
 *            benchmark of rounds x C requests, the first C sent at once,
 *            every request measured.
 * Means over the measured requests: TPOT = (last token - first) / (osl
 * - 1), TTFT = first token - sent; output tokens/s over the measured
 * span. */
typedef struct sim_cfg {
    int64_t C, osl, steps, warm, rounds;
    double isl, K, front;
    int prefill_first, overlap;
} sim_cfg;

sim_out sim_closed(const sv_model *k, const sim_cfg *g);

/* A burst of N requests sent at once on the decode-first scheduler, at
 * most C of them admitted at a time (the next when one finishes), until
 * all have finished: the mean over requests of TPOT and of TTFT (with
 * the model's host_req), and output tokens over the whole run. Request i
 * generates out[i] tokens (osl each when out is NULL). */
sim_out sim_burst(const sv_model *k, int64_t N, int64_t C, double isl, int64_t osl,
                  const int64_t *out, double K);

#endif
