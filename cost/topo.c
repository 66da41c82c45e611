/*
 * topo.c - alpha-beta collective costs on multi-level topologies.
 * See topo.h for the formulas.
 */
#include "topo.h"

#include <math.h>
#include <string.h>

/* NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc, master of
 * 2026-06, ncclTunerConstantsDefaults and ncclTopoTuneModel), as ratios
 * to its Simple protocol so that the hardware's calibrated alpha stays
 * the Simple per-step latency:
 *   hwLatencies, us per step, LL / LL128 / Simple:
 *     NVLink ring 0.6 / 1.9 / 3.4, tree 0.6 / 1.25 / 4.0;
 *     network ring 2.7 / 4.0 / 14, tree 5.0 / 8.5 / 14;
 *     NVLS 25 (NVLink, whole operation), NVLS-tree 20.9 (network step);
 *   bandwidth refinements: ring LL x0.5, LL128 x0.92; tree x0.92, then
 *     LL x1/3.8, LL128 x120/128 (x7/9 inside one node); NVLS all-reduce
 *     twice the link bandwidth times the NVLS efficiency (0.85 Hopper,
 *     0.74 Blackwell: its nvlsEfficiency table, in hardware.cfg);
 *   treeCorrectionFactor: the tree's bandwidth at medium sizes, per
 *     power of two of bytes / 64. */
enum { TOPO_LL = 0, TOPO_LL128 = 1, TOPO_SIMPLE = 2, TOPO_NPROTO = 3 };
static const double topo_ring_lat[2][TOPO_NPROTO] = {{0.6 / 3.4, 1.9 / 3.4, 1.0},
                                                     {2.7 / 14.0, 4.0 / 14.0, 1.0}};
static const double topo_tree_lat[2][TOPO_NPROTO] = {{0.6 / 4.0, 1.25 / 4.0, 1.0},
                                                     {5.0 / 14.0, 8.5 / 14.0, 1.0}};
static const double topo_ring_bw[TOPO_NPROTO] = {0.5, 0.92, 1.0};
#define TOPO_TREE_BW 0.92
#define TOPO_NVLS_STEPS (25.0 / 3.4)      /* NVLS latency in NVLink Simple steps */
#define TOPO_NVLS_TREE_STEP (20.9 / 14.0) /* NVLS-tree network step / Simple's */
static const float topo_tree_corr[TOPO_NPROTO][23] = {
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f,
     .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f,
     .9f, .9f, .9f, .9f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f,
     .7f, .7f, .8f, .9f, .9f}};

int topo_algo_parse(const char *s)
{
    if (strcmp(s, "auto") == 0)
        return TOPO_AUTO;
    if (strcmp(s, "ring") == 0)
        return TOPO_RING;
    if (strcmp(s, "tree") == 0)
        return TOPO_TREE;
    if (strcmp(s, "hierarchical") == 0)
        return TOPO_HIERARCHICAL;
    return -1;
}

const char *topo_algo_name(int algo)
{
    static const char *const name[TOPO_NALGO] = {"auto", "ring", "tree", "hierarchical"};
    return algo >= 0 && algo < TOPO_NALGO ? name[algo] : "?";
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
    t->nvls = h->scaleup_nvls_efficiency;
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

/* The factor by which level k's oversubscription slows `ch` channels
 * of a ring or tree: one edge per channel leaves each level-(k-1)
 * domain, whose g_{k-1} members bring g_{k-1} uplinks over oversub. */
static double topo_cross(const topo_t *t, const topo_grp *q, int k, int64_t ch)
{
    double o = t->level[k].oversub;
    if (o <= 1.0)
        return 1.0;
    double f = o * (double)ch / (double)q->g[k - 1];
    return f > 1.0 ? f : 1.0;
}

/* topo_place's work, inline in topo_coll_time_net (a caller placing a
 * group for one collective). */
static inline void topo_place_in(const topo_t *t, int64_t n, int64_t stride, int64_t rails,
                                 topo_grp *q)
{
    q->n = n;
    q->outer = 0;
    q->g[0] = 0; /* set below: a built topology has level 0 */
    for (int k = 0; k < t->nlevels; k++) {
        q->g[k] = topo_members(t, k, n, stride);
        if (k < t->nlevels - 1 && q->g[k] < n)
            q->outer = k + 1;
    }
    int64_t g0 = q->g[0];
    int64_t ch = rails > 0 && rails < g0 ? rails : g0;
    for (int k = 1; k <= q->outer; k++) {
        q->cbw[k] = (double)ch * t->level[k].bw;
        q->cross[k] = topo_cross(t, q, k, ch);
    }
    q->alpha = t->level[q->outer].alpha_s;
}

void topo_place(const topo_t *t, int64_t n, int64_t stride, int64_t rails, topo_grp *q)
{
    topo_place_in(t, n, stride, rails, q);
}

/* The bottleneck bandwidth of a placed group whose outer levels reach
 * `eff` of their bandwidth (topo_span's). */
static double topo_grp_bw(const topo_t *t, const topo_grp *q, double eff)
{
    double b = q->g[0] > 1 ? t->level[0].bw : (double)INFINITY;
    for (int k = 1; k <= q->outer; k++) {
        double bk = q->cbw[k] * eff / q->cross[k];
        if (bk < b)
            b = bk;
    }
    if (!isfinite(b))
        b = t->level[0].bw;
    return b;
}

/* Hierarchical all-reduce: reduce-scatter inside the scale-up domain,
 * all-reduce 1/g_0 of the data across domains (a ring at the bottleneck
 * bandwidth of the levels it spans, the alpha of the outermost: the
 * algorithm does not recurse on network tiers, so adding a 1:1 pod
 * level never makes it faster), all-gather back. */
static double topo_hier_allreduce(const topo_t *t, const topo_grp *q, int64_t n,
                                  const topo_net *net, double bytes)
{
    int64_t g0 = q->g[0];
    double time = 0.0, b = bytes;
    if (g0 > 1) {
        time += 2.0 * (double)(g0 - 1) / (double)g0 * b / t->level[0].bw +
                2.0 * (double)(g0 - 1) * t->level[0].alpha_s;
        b /= (double)g0;
    }
    int64_t a = n / g0; /* domains */
    if (a < 2)
        return time;
    double bw = (double)INFINITY;
    for (int k = 1; k <= q->outer; k++) {
        double bk = t->level[k].bw * net->eff / topo_cross(t, q, k, g0);
        if (bk < bw)
            bw = bk;
    }
    if (net->rails > 0 && net->rails < g0) /* domains share fewer NICs */
        bw *= (double)net->rails / (double)g0;
    return time + 2.0 * (double)(a - 1) / (double)a * b / bw +
           2.0 * (double)(a - 1) * t->level[q->outer].alpha_s;
}

/* Ring all-reduce (r = 2) or all-gather / reduce-scatter (r = 1): its
 * fastest protocol. Simple is the calibrated alpha-beta ring. */
static double topo_ring(double r, int64_t n, double bytes, double bw, double alpha, int outer)
{
    double f = (double)(n - 1) / (double)n;
    double beta = r * f * bytes / bw, steps = r * (double)(n - 1) * alpha;
    const double *lat = topo_ring_lat[outer > 0];
    double best = beta + steps;
    for (int p = TOPO_LL; p < TOPO_SIMPLE; p++) {
        double x = beta / topo_ring_bw[p] + steps * lat[p];
        if (x < best)
            best = x;
    }
    return best;
}

/* ceil(log2(a)) for a >= 1, without libm. */
static double topo_clog2(int64_t a)
{
    return a > 1 ? (double)(64 - __builtin_clzll((unsigned long long)(a - 1))) : 0.0;
}

/* NCCL's correction of the tree's bandwidth at medium sizes. */
static double topo_tree_correction(int p, double bytes)
{
    double u = bytes / 64.0; /* NCCL: log2i(nBytes >> 6) */
    if (!(u >= 1.0) || u >= (double)(1 << 23))
        return 1.0;
    int log = 63 - __builtin_clzll((unsigned long long)u);
    return (double)topo_tree_corr[p][log];
}

/* NCCL's double binary tree all-reduce: a chain through the g_0
 * members of each domain, a tree over the domains; fastest protocol. */
static double topo_tree(const topo_t *t, const topo_grp *q, double bw, int64_t n, double bytes)
{
    int64_t g0 = q->g[0], a = n / g0;
    double alpha = q->alpha;
    double f = (double)(n - 1) / (double)n;
    double intra = (double)(g0 - 1) * t->level[0].alpha_s;
    double inter = topo_clog2(a) * alpha;
    double best = (double)INFINITY;
    for (int p = TOPO_LL; p < TOPO_NPROTO; p++) {
        double pb = p == TOPO_LL ? 1.0 / 3.8 : p == TOPO_LL128 ? (a > 1 ? 120.0 / 128.0 : 7.0 / 9.0)
                                                               : 1.0;
        double b = bw * TOPO_TREE_BW * pb * topo_tree_correction(p, bytes);
        double x = 2.0 * f * bytes / b +
                   2.0 * (intra * topo_tree_lat[0][p] + inter * topo_tree_lat[1][p]);
        if (x < best)
            best = x;
    }
    return best;
}

/* In-switch reduction (NVLS): all-reduce inside the domain or, across
 * domains, NVLS-tree; all-gather / reduce-scatter inside the domain
 * only (NCCL needs CollNet for them across nodes). INFINITY when the
 * hardware has none or the group cannot use it. */
static double topo_nvls(const topo_t *t, const topo_grp *q, double bw, topo_coll c, int64_t n,
                        double bytes)
{
    int64_t g0 = q->g[0];
    int outer = q->outer;
    if (!(t->nvls > 0) || g0 < 2 || (c != TOPO_ALLREDUCE && outer > 0))
        return (double)INFINITY;
    double alpha = q->alpha;
    double lat = TOPO_NVLS_STEPS * t->level[0].alpha_s;
    double inswitch = t->nvls * t->level[0].bw;
    if (c != TOPO_ALLREDUCE)
        return bytes / inswitch + lat;
    double f = (double)(n - 1) / (double)n;
    if (outer == 0)
        return 2.0 * f * bytes / (2.0 * inswitch) + lat;
    int64_t a = n / g0;
    double b = bw < 2.0 * inswitch ? bw : 2.0 * inswitch;
    return 2.0 * f * bytes / b + lat +
           2.0 * topo_clog2(a) * alpha * TOPO_NVLS_TREE_STEP;
}

double topo_coll_time(const topo_t *t, topo_coll c, int64_t n, int64_t stride,
                      double bytes)
{
    static const topo_net all = {0, 1.0};
    return topo_coll_time_net(t, c, n, stride, bytes, &all);
}

static double topo_min(double a, double b)
{
    return a < b ? a : b;
}

/* topo_coll_time_at's work, inline in topo_coll_time_net too (a
 * collective costed once, as DLRM's and serving's are, pays no call
 * for its placement). */
__attribute__((always_inline)) static inline double
topo_time_in(const topo_t *t, topo_coll c, const topo_grp *placed, double bytes,
             const topo_net *net)
{
    int64_t n = placed->n;
    if (n <= 1 || bytes <= 0)
        return 0.0;
    const topo_grp *q = placed;
    int outer = q->outer;
    double bw = topo_grp_bw(t, q, net->eff), alpha = q->alpha;
    topo_algo algo = t->algo;
    switch (c) {
    case TOPO_ALLREDUCE: {
        if (algo == TOPO_HIERARCHICAL && outer > 0)
            return topo_hier_allreduce(t, q, n, net, bytes);
        if (algo == TOPO_TREE)
            return topo_tree(t, q, bw, n, bytes);
        double ring = topo_ring(2.0, n, bytes, bw, alpha, outer);
        if (algo != TOPO_AUTO)
            return ring;
        double best = ring;
        /* the tree's bandwidth term alone (every factor of it <= 0.92)
         * bounds it from below */
        if (2.0 * (double)(n - 1) / (double)n * bytes / (TOPO_TREE_BW * bw) < best)
            best = topo_min(best, topo_tree(t, q, bw, n, bytes));
        /* (topo_nvls's INFINITY without the call when the switch cannot reduce) */
        best = topo_min(best, t->nvls > 0 ? topo_nvls(t, q, bw, c, n, bytes) : (double)INFINITY);
        if (outer > 0 && q->g[0] > 1) /* with one member per domain: the ring */
            best = topo_min(best, topo_hier_allreduce(t, q, n, net, bytes));
        return best;
    }
    case TOPO_ALLGATHER:
    case TOPO_REDUCESCATTER: {
        if (algo == TOPO_HIERARCHICAL && outer > 0)
            return 0.5 * topo_hier_allreduce(t, q, n, net, bytes);
        double ring = topo_ring(1.0, n, bytes, bw, alpha, outer);
        if (algo != TOPO_AUTO)
            return ring; /* NCCL has no tree for these */
        /* in-switch inside one domain only (topo_nvls's INFINITY without
         * the call) */
        double best = topo_min(ring, t->nvls > 0 && outer == 0 ? topo_nvls(t, q, bw, c, n, bytes)
                                                              : (double)INFINITY);
        if (outer > 0 && q->g[0] > 1) /* with one member per domain: the ring */
            best = topo_min(best, 0.5 * topo_hier_allreduce(t, q, n, net, bytes));
        return best;
    }
    case TOPO_ALLTOALL: {
        int64_t g0 = q->g[0];
        double inner = (double)(g0 - 1) / (double)n * bytes / t->level[0].bw;
        double time = inner;
        for (int k = 1; k <= outer; k++) {
            int64_t gk = q->g[k - 1];
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

double topo_coll_time_at(const topo_t *t, topo_coll c, const topo_grp *q, double bytes,
                         const topo_net *net)
{
    return topo_time_in(t, c, q, bytes, net);
}

double topo_coll_time_net(const topo_t *t, topo_coll c, int64_t n, int64_t stride,
                          double bytes, const topo_net *net)
{
    if (c == TOPO_P2P) {
        /* neighbours `stride` apart: inside the domain when it spans 2;
         * every pair at a boundary crosses it at once */
        int k = 0;
        while (k < t->nlevels - 1 && t->level[k].span < 2 * stride)
            k++;
        double b = t->level[k].bw / t->level[k].oversub;
        return bytes / b + t->level[k].alpha_s;
    }
    if (n <= 1 || bytes <= 0)
        return 0.0;
    topo_grp q;
    topo_place_in(t, n, stride, net->rails, &q);
    return topo_time_in(t, c, &q, bytes, net);
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
