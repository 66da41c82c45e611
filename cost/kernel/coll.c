/*
 * coll.c - collectives (all-reduce, all-gather, reduce-scatter,
 * all-to-all) as closed forms in the links' figures.
 *
 * Within a node, a ring of n GPUs takes 2(n-1) steps for an all-reduce
 * (n-1 for the others) and moves 2(n-1)/n of the buffer ((n-1)/n) over
 * each GPU's link. Each NCCL protocol trades bandwidth for latency: LL
 * carries 4 data bytes in 8 (half the link), LL128 120 in 128, Simple
 * all of it (NCCL src/device/prims_ll.h, prims_ll128.h); each has its own
 * per-step latency. NVLS (NVLink SHARP) reduces in the switch: one pass
 * at `coll_nvls_eff` x link of bus bandwidth. "auto" takes the fastest,
 * as NCCL's tuner means to. Across nodes one ring passes through every
 * GPU: its share of the buffer crosses each node boundary, over the
 * node's g NICs together (or the links, when slower); steps between
 * nodes take the network's latency. An engine's custom all-reduce is one-shot
 * (each GPU reads the n-1 peers' whole buffers, one barrier) or two-shot
 * (reduce-scatter then all-gather through peer memory, two barriers),
 * the faster of the two and NCCL.
 */
#include "kernel.h"

#include <string.h>

static const char *const kc_op_names[KC_NOPS] = {"all_reduce", "all_gather",
                                                 "reduce_scatter", "alltoall"};
static const char *const kc_algo_names[KC_NALGOS] = {"auto",    "ring",    "tree",  "nvls",
                                                     "oneshot", "twoshot", "custom"};
static const char *const kp_names[KP_N] = {"auto", "ll", "ll128", "simple"};

static int kc_find(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int kern_coll_op_parse(const char *s)
{
    if (strcmp(s, "all_to_all") == 0)
        return KC_ALL_TO_ALL;
    return kc_find(kc_op_names, KC_NOPS, s);
}

int kern_coll_algo_parse(const char *s)
{
    return kc_find(kc_algo_names, KC_NALGOS, s);
}

int kern_proto_parse(const char *s)
{
    return kc_find(kp_names, KP_N, s);
}

/* Ring steps and bus share of a collective on n members. */
static void kc_ring(kern_coll_op op, double n, double *steps, double *share)
{
    if (op == KC_ALL_REDUCE) {
        *steps = 2.0 * (n - 1.0);
        *share = 2.0 * (n - 1.0) / n;
    } else {
        *steps = n - 1.0;
        *share = (n - 1.0) / n;
    }
}

/* In-node ring with protocol p over links of `bw` bytes/s. */
static double kc_ring_time(const kern_consts *k, const kern_backend *be, kern_coll_op op,
                           kern_proto p, double n, double bytes, double bw)
{
    static const double data[KP_N] = {1.0, 0.5, 120.0 / 128.0, 1.0};
    double hop = p == KP_LL ? k->coll_hop_ll_s
                 : p == KP_LL128 ? k->coll_hop_ll128_s : k->coll_hop_simple_s;
    double steps, share;
    kc_ring(op, n, &steps, &share);
    return k->coll_base_s + steps * hop * be->eff + share * bytes / (bw * data[p]);
}

/* Bytes/s a ring of n GPUs of one domain reaches per GPU. */
static double kc_bw(const kern_ctx *c, const kern_backend *be, double n)
{
    const kern_consts *k = &c->c;
    double bw = c->link * (c->pcie ? k->coll_pcie_eff : k->coll_link_eff * c->link_eff) *
                be->mem;
    if (c->mesh && c->domain > 1.0 && n < c->domain)
        bw *= (n - 1.0) / (c->domain - 1.0);
    return bw;
}

static double kc_node(const kern_ctx *c, const kern_backend *be, kern_coll_op op,
                      kern_coll_algo algo, kern_proto p, double n, double bytes, double elt)
{
    const kern_consts *k = &c->c;
    if (n <= 1.0)
        return 0.0;
    double bw = kc_bw(c, be, n);
    /* the switch reduces 16-bit and wider types only */
    int nvls = c->nvls && op == KC_ALL_REDUCE && elt != 1.0;
    if (algo == KC_NVLS && !nvls)
        return -1.0;
    if (algo == KC_NVLS || (algo == KC_AUTO && nvls)) {
        double t = k->coll_base_s + k->coll_nvls_s * be->eff +
                   2.0 * (n - 1.0) / n * bytes / (c->link * c->nvls_eff * k->coll_nvls_eff * be->mem);
        if (algo == KC_NVLS)
            return t;
        double r = kc_node(c, be, op, KC_RING, p, n, bytes, elt);
        return r < t ? r : t;
    }
    if (p != KP_AUTO)
        return kc_ring_time(k, be, op, p, n, bytes, bw);
    double best = kc_ring_time(k, be, op, KP_LL, n, bytes, bw);
    for (int q = KP_LL128; q < KP_N; q++) {
        double t = kc_ring_time(k, be, op, (kern_proto)q, n, bytes, bw);
        if (t < best)
            best = t;
    }
    return best;
}

static double kc_custom(const kern_ctx *c, const kern_backend *be, double n, double bytes,
                        double elt)
{
    const kern_consts *k = &c->c;
    double bw = kc_bw(c, be, n);
    double one = k->coll_custom_s * be->eff + (n - 1.0) * bytes / bw;
    double two = 2.0 * k->coll_custom_s * be->eff + 2.0 * (n - 1.0) / n * bytes / bw;
    double nccl = kc_node(c, &kern_be_none, KC_ALL_REDUCE, KC_AUTO, KP_AUTO, n, bytes, elt);
    double t = one < two ? one : two;
    return t < nccl ? t : nccl;
}

static double kc_time(const kern_ctx *c, const kern_coll *x, const kern_backend *be)
{
    double n = x->gpus, g = x->gpus_per_node > 0 ? x->gpus_per_node : x->gpus;
    double nodes = n / g, elt = x->elt_bytes > 0 ? x->elt_bytes : 2.0;
    const kern_consts *k = &c->c;
    if (nodes <= 1.0) {
        if (x->algo == KC_CUSTOM || x->algo == KC_ONESHOT || x->algo == KC_TWOSHOT) {
            if (x->op != KC_ALL_REDUCE)
                return -1.0;
            return kc_custom(c, be, n, x->bytes, elt);
        }
        if (x->op == KC_ALL_TO_ALL) {
            double bw = kc_bw(c, be, n);
            return k->coll_base_s + k->coll_hop_simple_s * be->eff +
                   (n - 1.0) / n * x->bytes / bw;
        }
        return kc_node(c, be, x->op, x->algo, x->proto, n, x->bytes, elt);
    }
    /* across nodes: one ring through every GPU (NCCL's rings cross each
     * node boundary once per channel, a channel per NIC): the buffer's
     * ring share passes each boundary, spread over the node's g NICs; the
     * steps inside a node at the link's latency, between nodes at the
     * network's */
    double nic = c->nic * k->coll_nic_eff * g * be->mem;
    double inner = kc_bw(c, be, g);
    double bw = nic < inner ? nic : inner;
    if (x->op == KC_ALL_TO_ALL)
        return k->coll_base_s + nodes * k->coll_net_s * be->eff +
               (n - g) / n * x->bytes / (c->nic * k->coll_nic_eff * be->mem);
    double steps, share, nsteps, nshare;
    kc_ring(x->op, n, &steps, &share);
    kc_ring(x->op, nodes, &nsteps, &nshare);
    return k->coll_base_s +
           ((steps - nsteps) * k->coll_hop_simple_s + nsteps * k->coll_net_s) * be->eff +
           share * x->bytes / bw;
}

double kern_coll_time(const kern_ctx *c, const kern_coll *x)
{
    double n = x->gpus, g = x->gpus_per_node > 0 ? x->gpus_per_node : x->gpus;
    if (!(x->bytes > 0 && n >= 1 && g >= 1 && g <= n) || x->op < 0 || x->op >= KC_NOPS ||
        x->algo < 0 || x->algo >= KC_NALGOS || x->proto < 0 || x->proto >= KP_N)
        return -1.0;
    if (n == 1.0)
        return 0.0;
    const kern_backend *be = x->be ? x->be : &kern_be_none;
    double t = kc_time(c, x, be);
    return t < 0 ? t : t + be->floor_s > 0.0 ? t + be->floor_s : 0.0;
}
