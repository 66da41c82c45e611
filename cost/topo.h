/*
 * topo.h - multi-level topologies and alpha-beta collective costs.
 *
 * A topology is a list of levels, innermost first; level k groups
 * `span` consecutive devices (level 0: the scale-up domain, e.g. an
 * NVLink/NVSwitch node of 8 or an NVL72 rack; level 1: the scale-out
 * network up to a pod; level 2: above the pod, with oversubscription, as
 * the 1:7 tier above 3072-GPU pods of the Llama 3 cluster). Each level
 * has a per-device bandwidth (one direction, already times the link's
 * collective efficiency), a latency per algorithm step (alpha) and an
 * oversubscription factor (>= 1) dividing its bandwidth.
 *
 * A communication group is n devices at a constant stride (the product
 * of the parallel degrees mapped inside it). Its members per level-k
 * domain are g_k = clamp(span_k / stride, 1, n). Costs (bytes B per rank
 * buffer, alpha-beta; f = (n-1)/n):
 *   ring all-reduce      2 f B / bw + 2(n-1) alpha
 *   tree all-reduce      NCCL's double binary tree: a chain inside the
 *                        scale-up domain, a tree over the a = n/g_0
 *                        domains: 2 f B / (0.92 bw) + 2 ((g_0-1) alpha_0
 *                        + ceil(log2 a) alpha)
 *   nvls all-reduce      in-switch reduction (NVLink SHARP) inside the
 *                        domain, each byte crosses the link once each
 *                        way: 2 f B / (2 e bw_0) + 25/3.4 alpha_0 (e: the
 *                        hardware's NVLS efficiency); across domains
 *                        NVLS-tree: the bandwidth of the ring across
 *                        (at most the in-switch one) and the tree's
 *                        log2 a network steps
 *   hierarchical         reduce-scatter inside the scale-up domain,
 *                        ring all-reduce of 1/g_0 of the data across
 *                        domains, all-gather inside
 *   all-gather, reduce-scatter   ring f B / bw + (n-1) alpha; nvls
 *                        inside a domain B / (e bw_0) + 25/3.4 alpha_0;
 *                        hierarchical half its all-reduce (the two
 *                        collectives of B bytes take one time, which a
 *                        caller may reuse: test_detailed checks it)
 *   all-to-all           max over levels of the bytes leaving the level
 *                        over its bandwidth + alpha + (n-1) alpha / 8
 *                        (the messages to all peers are posted at once:
 *                        one latency plus a per-peer posting cost, an
 *                        eighth of a step's latency: ~1 us on 8 us IB)
 *   point-to-point       B / bw(level crossed) + alpha
 * where bw is the bottleneck over the levels the group spans: level 0
 * gives the scale-up bandwidth, an outer level k gives g_0 channels of
 * its per-device bandwidth (rings leave a node through g_0 NICs). The
 * oversubscription of a level slows only the traffic that crosses it: a
 * ring or tree crosses a level-(k-1) domain boundary on one edge per
 * channel while the g_{k-1} members of that domain bring g_{k-1} links'
 * worth of uplink over the oversubscription, so its bandwidth divides by
 * max(1, oversub ch / g_{k-1}); all-to-all and point-to-point send all
 * their crossing bytes through it (bw / oversub).
 * Ring and tree run each of NCCL's protocols (src/graph/tuning.cc):
 * Simple (alpha, full bandwidth), LL128 and LL (per-step latency and
 * bandwidth scaled by NCCL's ratios to Simple), and take the fastest.
 * `auto` takes per collective and size the fastest of every algorithm
 * (what NCCL's tuner does with its own cost model); a system may force
 * one (ring, tree, hierarchical). Plain value; no allocation.
 */
#ifndef MADSWEEP_TOPO_H
#define MADSWEEP_TOPO_H

#include <stdint.h>

#include "hw.h"
#include "status.h"

#define TOPO_MAX_LEVELS 4
#define TOPO_A2A_PER_PEER 0.125 /* all-to-all: per-peer cost in step latencies */

typedef enum topo_coll {
    TOPO_ALLREDUCE = 0,
    TOPO_ALLGATHER = 1,
    TOPO_REDUCESCATTER = 2,
    TOPO_ALLTOALL = 3,
    TOPO_P2P = 4,
    TOPO_NCOLL = 5
} topo_coll;

typedef enum topo_algo {
    TOPO_AUTO = 0, /* the default */
    TOPO_RING = 1,
    TOPO_TREE = 2,
    TOPO_HIERARCHICAL = 3,
    TOPO_NALGO = 4
} topo_algo;

typedef struct topo_level {
    int64_t span;        /* devices per domain of this level */
    double bw;           /* bytes/s per device, one direction, effective */
    double alpha_s;      /* latency per algorithm step */
    double oversub;      /* >= 1 */
} topo_level;

typedef struct topo_t {
    int nlevels;
    topo_level level[TOPO_MAX_LEVELS];
    double nvls;         /* in-switch reduction efficiency of level 0 (0: none) */
    topo_algo algo;
} topo_t;

/* A detailed-fidelity system: a hardware generation, how many devices,
 * and the network that joins them; topo is derived by
 * topo_system_derive(). Zero figures take the hardware's defaults. */
typedef struct topo_system_t {
    char name[HW_NAME_MAX];
    hw_t hw;
    int64_t devices;
    int64_t devices_per_node;       /* scale-up domain (0: hw's) */
    double nic_gbps_per_device;     /* Gb/s one direction (0: hw's) */
    int64_t pod_devices;            /* 0: no pod level */
    double pod_oversubscription;    /* above the pod (>= 1) */
    topo_algo algo;
    topo_t topo;                    /* derived */
} topo_system_t;

/* Checks the hardware and builds the topology; *bad names a bad key. */
status_code topo_system_derive(topo_system_t *s, const char **bad);

/* Builds the levels of a system of `devices` devices made of scale-up
 * domains of `domain` devices (hw's figures), NICs of `nic_bytes_per_s`
 * per device (0: hw's), and optionally pods of `pod` devices (0: none)
 * with `oversub` above them. Returns STATUS_INVALID_VALUE on a bad
 * figure with *bad naming it. */
status_code topo_build(topo_t *t, const hw_t *h, int64_t devices,
                       int64_t domain, double nic_bytes_per_s, int64_t pod,
                       double oversub, topo_algo algo, const char **bad);

/* How a collective's rings use the network above the scale-up domain:
 * rails = NICs per domain its channels cross (0: one per member of the
 * group in the domain), eff = fraction of their bandwidth reached. */
typedef struct topo_net {
    int64_t rails;
    double eff;
} topo_net;

/* Time of one collective on a group of n devices at stride `stride`
 * with B bytes per rank (the full buffer for all-reduce/all-gather
 * output/reduce-scatter input/all-to-all send; the message for p2p).
 * 0 when n <= 1 (p2p: when stride spans nothing, still costs). */
double topo_coll_time(const topo_t *t, topo_coll c, int64_t n, int64_t stride,
                      double bytes);
/* The same with the rails and efficiency of `net` above the domain. */
double topo_coll_time_net(const topo_t *t, topo_coll c, int64_t n, int64_t stride,
                          double bytes, const topo_net *net);

/* A group of n devices at a stride placed on a topology (topo_place):
 * its members per level-k domain (g[k]), the outermost level it spans
 * and that level's alpha, and per outer level k the bandwidth of the
 * channels its rings take across (their count times the level's
 * per-device bandwidth; rails as topo_net's) and the factor the level's
 * oversubscription divides it by. Nothing in it depends on the bytes or
 * on the network's efficiency: a caller costing one group many times
 * places it once. */
typedef struct topo_grp {
    int64_t n;
    int64_t g[TOPO_MAX_LEVELS];
    int outer;
    double cbw[TOPO_MAX_LEVELS], cross[TOPO_MAX_LEVELS];
    double alpha;
} topo_grp;
void topo_place(const topo_t *t, int64_t n, int64_t stride, int64_t rails, topo_grp *q);
/* topo_coll_time_net on a placed group (net's rails those it was placed
 * with; not TOPO_P2P). */
double topo_coll_time_at(const topo_t *t, topo_coll c, const topo_grp *q, double bytes,
                         const topo_net *net);

/* Bytes each rank sends in a ring all-reduce of B bytes over n ranks:
 * 2 (n-1)/n B. */
double topo_ring_allreduce_volume(int64_t n, double bytes);

/* "auto" / "ring" / "tree" / "hierarchical"; -1 when unknown. */
int topo_algo_parse(const char *s);

/* The name topo_algo_parse reads back ("auto" for TOPO_AUTO); "?" for a
 * value outside the enum. */
const char *topo_algo_name(int algo);

#endif
