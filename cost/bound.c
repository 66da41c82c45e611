/*
 * bound.c - the largest share of a step (see bound.h).
 */
#include "bound.h"

#include <math.h>

static const char *const bound_names[BOUND_NKINDS] = {
    "",           "compute_math", "compute_memory", "compute", "comm_tp", "comm_cp",
    "comm_ep",    "comm_pp",      "comm_dp",        "comm",    "bubble",  "optimizer"};

const char *bound_name(int64_t code)
{
    return code >= 0 && code < BOUND_NKINDS ? bound_names[code] : "";
}

/* Candidate `kind` of time v: the new best when v is finite and larger. */
static void bound_offer(int *best, double *bv, int kind, double v)
{
    if (isfinite(v) && v > *bv) {
        *bv = v;
        *best = kind;
    }
}

void bound_derive(result_t *r)
{
    r->bound_code = BOUND_NONE;
    if (r->status != STATUS_OK)
        return;
    int best = BOUND_NONE;
    double bv = -1.0;
    if (isfinite(r->compute_math_s)) {
        bound_offer(&best, &bv, BOUND_COMPUTE_MATH, r->compute_math_s);
        bound_offer(&best, &bv, BOUND_COMPUTE_MEMORY, r->compute_memory_s);
    } else {
        double c = (isfinite(r->compute_gemm_s) ? r->compute_gemm_s : 0.0) +
                   (isfinite(r->compute_emb_s) ? r->compute_emb_s : 0.0);
        bound_offer(&best, &bv, BOUND_COMPUTE, c);
    }
    if (isfinite(r->comm_exposed_tp_s)) {
        bound_offer(&best, &bv, BOUND_COMM_TP, r->comm_exposed_tp_s);
        bound_offer(&best, &bv, BOUND_COMM_CP, r->comm_exposed_cp_s);
        bound_offer(&best, &bv, BOUND_COMM_EP, r->comm_exposed_ep_s);
        bound_offer(&best, &bv, BOUND_COMM_PP, r->comm_exposed_pp_s);
        bound_offer(&best, &bv, BOUND_COMM_DP, r->comm_exposed_dp_s);
    } else {
        bound_offer(&best, &bv, BOUND_COMM, r->comm_exposed_s);
    }
    bound_offer(&best, &bv, BOUND_BUBBLE, r->pipeline_bubble_s);
    bound_offer(&best, &bv, BOUND_OPTIMIZER, r->optimizer_s);
    r->bound_code = best == BOUND_NONE ? BOUND_COMPUTE : best;
}
