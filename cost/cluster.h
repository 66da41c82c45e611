/*
 * cluster.h - a distributed system: devices, nodes, peaks and networks.
 *
 * Raw figures are per device (FLOPS, memory) or per link/port (networks,
 * bidirectional bytes per second as the MAD-Max configs give them).
 * cluster_derive() computes the effective figures exactly as the reference
 * (systems/system.py, systems/gpus.py) does:
 *   intra = nvlinks * (nvlink_bw / 2) * nvlink_util
 *   inter = nic_ports * (nic_bw / 2) * nic_util / devices_per_node
 *   all-to-all   per level: [intra, inter]            (one level: [intra])
 *   all-reduce   per level: [intra, blend]            (one level: [blend])
 *   all-gather, reduce-scatter: 2 x all-reduce
 * with blend = (1 - f) * inter + f * intra, f = allreduce_intra_fraction.
 * Level arrays are indexed from the outermost level backwards, like the
 * reference's bw[-len(plan) + level]; see cluster_level_bw().
 */
#ifndef MADSWEEP_CLUSTER_H
#define MADSWEEP_CLUSTER_H

#include <stdint.h>

#include "status.h"

#define CLUSTER_NAME_MAX 64
#define CLUSTER_MAX_NET_LEVELS 2

typedef enum cluster_coll {
    CLUSTER_ALLTOALL = 0,
    CLUSTER_ALLREDUCE = 1,
    CLUSTER_ALLGATHER = 2,
    CLUSTER_REDUCESCATTER = 3,
    CLUSTER_NCOLL = 4
} cluster_coll;

typedef struct cluster_t {
    char name[CLUSTER_NAME_MAX];
    int64_t devices;
    int64_t nodes;
    double peak_fp64_flops;  /* per device, FLOP/s */
    double peak_fp32_flops;
    double peak_fp16_flops;
    double peak_int8_ops;
    double flops_util;       /* fraction of peak reached */
    double mem_capacity_bytes;
    double mem_bw_bytes_per_s;
    double mem_bw_util;
    int64_t nvlinks;                  /* links per device */
    double nvlink_bidir_bytes_per_s;  /* per link, both directions */
    double nvlink_util;
    int64_t nic_ports;                /* inter-node ports per node */
    double nic_bidir_bytes_per_s;     /* per port, both directions */
    double nic_util;
    double allreduce_intra_fraction;  /* all-reduce blend weight of intra */

    /* derived by cluster_derive() */
    int64_t devices_per_node;
    double eff_fp64_flops, eff_fp32_flops, eff_fp16_flops, eff_int8_ops;
    double eff_mem_bw;       /* bytes/s */
    double eff_intra_bw;     /* unidirectional bytes/s per device */
    double eff_inter_bw;
    int net_levels;          /* 1 for one node, else 2 */
    double coll_bw[CLUSTER_NCOLL][CLUSTER_MAX_NET_LEVELS];

    /* a device's power and price (cost/energy.h; 0: unknown, the energy
     * and cost figures are NaN) and the hardware generation they were
     * taken from (a hardware.cfg name, descriptive only) */
    char hardware[CLUSTER_NAME_MAX];
    double board_power_w;        /* W per device (TDP) */
    double idle_power_w;         /* W per device (0: a fraction of board) */
    double price_per_hour_usd;   /* per device-hour */
} cluster_t;

/* Checks the raw figures and fills the derived ones. On a bad figure
 * returns its status and sets *bad to the key name. */
status_code cluster_derive(cluster_t *c, const char **bad);

/* Effective bandwidth of a collective for level `level` of a plan of
 * `nlevels` levels (the reference's bw[-nlevels + level]); 0 when the
 * index falls outside the system's levels. */
double cluster_level_bw(const cluster_t *c, cluster_coll coll, int nlevels,
                        int level);

/* Effective FLOPS for a dense parameter of `bytes` bytes (8/4/2/1);
 * 0 for any other size. */
double cluster_eff_flops(const cluster_t *c, int64_t bytes);

#endif
