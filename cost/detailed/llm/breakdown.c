/*
 * breakdown.c - what bounds a step of the detailed fidelity: exposed
 * communication by parallel dimension and by network tier.
 *
 * The families (train/, serve/) know the exposed time of the
 * communication inside the layers (TP and CP beyond what their overlap
 * hides, EP dispatch and combine) and of the pipeline sends; data parallelism and ZeRO take
 * what the iteration leaves exposed beyond them (the gradient tail, the
 * parameter gathers). When the estimates pass the iteration's exposed
 * time (the bubble absorbs some of a stage's exposed sends) they are
 * scaled down together, so the dimensions always add up to
 * comm_exposed_s. A dimension's tier is its group's: inside one scale-up
 * domain (n x stride <= the domain's devices; a pipeline send: 2 x
 * stride) or across domains.
 * Invariant: the dimensions' exposed times sum to comm_exposed_s, and
 * the tiers' to the same.
 */
#include "llm.h"

/* The group of dimension `dim`: size and stride between members. */
static void dt_breakdown_group(const dt_ctx *c, int dim, int64_t *n, int64_t *stride)
{
    switch (dim) {
    case DT_B_TP:
        *n = c->d.tp, *stride = c->stride[DT_TP];
        break;
    case DT_B_CP:
        *n = c->d.cp, *stride = c->stride[DT_CP];
        break;
    case DT_B_EP:
        *n = c->d.ep, *stride = c->s_dpcp;
        break;
    case DT_B_PP:
        *n = c->d.pp > 1 ? 2 : 1, *stride = c->stride[DT_PP];
        break;
    default:
        *n = c->dpcp, *stride = c->s_dpcp;
        break;
    }
}

void dt_breakdown_comm(const dt_ctx *c, double exposed, const double est[DT_B_DIMS],
                       result_t *r)
{
    double e[DT_B_DIMS], known = 0.0;
    for (int d = 0; d < DT_B_DIMS; d++) {
        e[d] = est[d] > 0.0 ? est[d] : 0.0;
        if (d != DT_B_DP || est[d] >= 0.0)
            known += e[d];
    }
    if (exposed < 0.0)
        exposed = 0.0;
    if (est[DT_B_DP] < 0.0)
        e[DT_B_DP] = known < exposed ? exposed - known : 0.0;
    double sum = known + (est[DT_B_DP] < 0.0 ? e[DT_B_DP] : 0.0);
    double k = sum > exposed && sum > 0.0 ? exposed / sum : 1.0;
    if (sum < exposed && sum > 0.0 && est[DT_B_DP] >= 0.0)
        k = exposed / sum; /* all communication exposed: spread the rest */
    double up = 0.0, out = 0.0;
    int64_t dom = c->topo->level[0].span;
    for (int d = 0; d < DT_B_DIMS; d++) {
        e[d] *= k;
        int64_t n, stride;
        dt_breakdown_group(c, d, &n, &stride);
        if (n > 1 && stride > 0 && n > dom / stride)
            out += e[d];
        else
            up += e[d];
    }
    r->comm_exposed_tp_s = e[DT_B_TP];
    r->comm_exposed_cp_s = e[DT_B_CP];
    r->comm_exposed_ep_s = e[DT_B_EP];
    r->comm_exposed_pp_s = e[DT_B_PP];
    r->comm_exposed_dp_s = e[DT_B_DP];
    r->comm_exposed_scaleup_s = up;
    r->comm_exposed_scaleout_s = out;
}
