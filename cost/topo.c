/*
 * topo.c - alpha-beta collective costs on multi-level topologies.
 * See topo.h for the formulas.
 */
#include "topo.h"

#include <math.h>
#include <string.h>

int topo_algo_parse(const char *s)
{
    if (strcmp(s, "ring") == 0)
        return TOPO_RING;
    if (strcmp(s, "tree") == 0)
        return TOPO_TREE;
    if (strcmp(s, "hierarchical") == 0)
        return TOPO_HIERARCHICAL;
    return -1;
}

status_code topo_build(topo_t *t, const hw_t *h, int64_t devices,
                       int64_t domain, double nic_bytes_per_s, int64_t pod,
                       double oversub, topo_algo algo, const char **bad)
{
    memset(t, 0, sizeof *t);
    t->algo = algo;
    if (devices < 1) {
        *bad = "devices";
        return STATUS_INVALID_VALUE;
    }
    if (domain < 1)
        domain = h->scaleup_devices;
    if (domain > devices)
        domain = devices;
    domain = hw_job_domain(h, devices, domain); /* partial domains of whole trays */
    if (devices % domain != 0) {
        *bad = "devices_per_node";
        return STATUS_INVALID_NODES;
    }
    if (!(nic_bytes_per_s > 0))
        nic_bytes_per_s = h->nic_bytes_per_s;
    if (!isfinite(nic_bytes_per_s)) {
        *bad = "nic_gbps_per_device";
        return STATUS_INVALID_VALUE;
    }
    t->level[0] = (topo_level){domain, h->scaleup_bytes_per_s * h->scaleup_efficiency,
                               h->scaleup_latency_s, 1.0};
    t->nlevels = 1;
    double nic = nic_bytes_per_s * h->nic_efficiency;
    if (pod > 0 && pod < devices) {
        if (pod % domain != 0 || devices % pod != 0) {
            *bad = "pod_devices";
            return STATUS_INVALID_VALUE;
        }
        if (!(oversub >= 1.0) || !isfinite(oversub)) {
            *bad = "pod_oversubscription";
            return STATUS_INVALID_VALUE;
        }
        t->level[t->nlevels++] = (topo_level){pod, nic, h->nic_latency_s, 1.0};
        t->level[t->nlevels++] =
            (topo_level){devices, nic, 2.0 * h->nic_latency_s, oversub};
    } else if (domain < devices) {
        t->level[t->nlevels++] = (topo_level){devices, nic, h->nic_latency_s, 1.0};
    }
    return STATUS_OK;
}

double topo_ring_allreduce_volume(int64_t n, double bytes)
{
    return n > 1 ? 2.0 * (double)(n - 1) / (double)n * bytes : 0.0;
}

/* Members of the group per level-k domain. */
static int64_t topo_members(const topo_t *t, int k, int64_t n, int64_t stride)
{
    int64_t g = t->level[k].span / (stride > 0 ? stride : 1);
    if (g < 1)
        g = 1;
    return g > n ? n : g;
}

/* Outermost level the group spans, its bottleneck bandwidth and alpha.
 * Outer levels carry min(g_0, rails) channels (rails 0: g_0) of their
 * per-device bandwidth times `eff`. */
static int topo_span(const topo_t *t, int64_t n, int64_t stride, const topo_net *net,
                     double *bw, double *alpha)
{
    int64_t g0 = topo_members(t, 0, n, stride);
    int outer = 0;
    for (int k = 0; k < t->nlevels - 1; k++)
        if (topo_members(t, k, n, stride) < n)
            outer = k + 1;
    int64_t ch = net->rails > 0 && net->rails < g0 ? net->rails : g0;
    double b = g0 > 1 ? t->level[0].bw : (double)INFINITY;
    for (int k = 1; k <= outer; k++) {
        double bk = (double)ch * t->level[k].bw * net->eff / t->level[k].oversub;
        if (bk < b)
            b = bk;
    }
    if (!isfinite(b))
        b = t->level[0].bw;
    *bw = b;
    *alpha = t->level[outer].alpha_s;
    return outer;
}

static double topo_log2ceil(int64_t n)
{
    return ceil(log2((double)n));
}

/* Hierarchical all-reduce: reduce-scatter inside the scale-up domain,
 * all-reduce 1/g_0 of the data across domains (a ring at the bottleneck
 * bandwidth of the levels it spans, the alpha of the outermost: the
 * algorithm does not recurse on network tiers, so adding a 1:1 pod
 * level never makes it faster), all-gather back. */
static double topo_hier_allreduce(const topo_t *t, int64_t n, int64_t stride,
                                  const topo_net *net, double bytes)
{
    int64_t g0 = topo_members(t, 0, n, stride);
    double time = 0.0, b = bytes;
    if (g0 > 1) {
        time += 2.0 * (double)(g0 - 1) / (double)g0 * b / t->level[0].bw +
                2.0 * (double)(g0 - 1) * t->level[0].alpha_s;
        b /= (double)g0;
    }
    int64_t a = n / g0; /* domains */
    if (a < 2)
        return time;
    int outer = 0;
    for (int k = 0; k < t->nlevels - 1; k++)
        if (topo_members(t, k, n, stride) < n)
            outer = k + 1;
    double bw = (double)INFINITY;
    for (int k = 1; k <= outer; k++) {
        double bk = t->level[k].bw * net->eff / t->level[k].oversub;
        if (bk < bw)
            bw = bk;
    }
    if (net->rails > 0 && net->rails < g0) /* domains share fewer NICs */
        bw *= (double)net->rails / (double)g0;
    return time + 2.0 * (double)(a - 1) / (double)a * b / bw +
           2.0 * (double)(a - 1) * t->level[outer].alpha_s;
}

double topo_coll_time(const topo_t *t, topo_coll c, int64_t n, int64_t stride,
                      double bytes)
{
    static const topo_net all = {0, 1.0};
    return topo_coll_time_net(t, c, n, stride, bytes, &all);
}

double topo_coll_time_net(const topo_t *t, topo_coll c, int64_t n, int64_t stride,
                          double bytes, const topo_net *net)
{
    double bw, alpha;
    if (c == TOPO_P2P) {
        /* neighbours `stride` apart: inside the domain when it spans 2 */
        int k = 0;
        while (k < t->nlevels - 1 && t->level[k].span < 2 * stride)
            k++;
        double b = t->level[k].bw / t->level[k].oversub;
        return bytes / b + t->level[k].alpha_s;
    }
    if (n <= 1 || bytes <= 0)
        return 0.0;
    int outer = topo_span(t, n, stride, net, &bw, &alpha);
    double f = (double)(n - 1) / (double)n;
    switch (c) {
    case TOPO_ALLREDUCE:
        if (t->algo == TOPO_HIERARCHICAL && outer > 0)
            return topo_hier_allreduce(t, n, stride, net, bytes);
        if (t->algo == TOPO_TREE)
            return 2.0 * f * bytes / bw + 2.0 * topo_log2ceil(n) * alpha;
        return 2.0 * f * bytes / bw + 2.0 * (double)(n - 1) * alpha;
    case TOPO_ALLGATHER:
    case TOPO_REDUCESCATTER:
        if (t->algo == TOPO_HIERARCHICAL && outer > 0)
            return 0.5 * topo_hier_allreduce(t, n, stride, net, bytes);
        return f * bytes / bw + (double)(n - 1) * alpha;
    case TOPO_ALLTOALL: {
        int64_t g0 = topo_members(t, 0, n, stride);
        double inner = (double)(g0 - 1) / (double)n * bytes / t->level[0].bw;
        double time = inner;
        for (int k = 1; k <= outer; k++) {
            int64_t gk = k < t->nlevels ? topo_members(t, k - 1, n, stride) : n;
            double out = (double)(n - gk) / (double)n * bytes /
                         (t->level[k].bw * net->eff / t->level[k].oversub);
            if (out > time)
                time = out;
        }
        /* one network latency, then a posting cost per peer: the n - 1
         * messages go out concurrently, not one step after another */
        return time + alpha + (double)(n - 1) * alpha * TOPO_A2A_PER_PEER;
    }
    default:
        return 0.0;
    }
}

status_code topo_system_derive(topo_system_t *s, const char **bad)
{
    status_code rc = hw_check(&s->hw, bad);
    if (rc != STATUS_OK)
        return rc;
    if (!isfinite(s->nic_gbps_per_device) || s->nic_gbps_per_device < 0) {
        *bad = "nic_gbps_per_device";
        return STATUS_INVALID_VALUE;
    }
    return topo_build(&s->topo, &s->hw, s->devices, s->devices_per_node,
                      s->nic_gbps_per_device * 1e9 / 8.0, s->pod_devices,
                      s->pod_oversubscription > 0 ? s->pod_oversubscription : 1.0,
                      s->algo, bad);
}
