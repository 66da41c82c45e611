/*
 * cluster.c - effective compute, memory and network figures of a system.
 *
 * See cluster.h for the formulas; they reproduce the MAD-Max reference's
 * GPUs system class, including its halving of bidirectional link rates
 * and its blended inter-node all-reduce bandwidth.
 */
#include "cluster.h"

#include <math.h>
#include <stddef.h>

typedef struct cluster_req {
    const char *key;
    double value;
    int allow_zero;
} cluster_req;

static status_code cluster_check(const cluster_t *c, const char **bad)
{
    const cluster_req req[] = {
        {"devices", (double)c->devices, 0},
        {"nodes", (double)c->nodes, 0},
        {"peak_fp64_flops", c->peak_fp64_flops, 1},
        {"peak_fp32_flops", c->peak_fp32_flops, 1},
        {"peak_fp16_flops", c->peak_fp16_flops, 1},
        {"peak_int8_ops", c->peak_int8_ops, 1},
        {"flops_util", c->flops_util, 0},
        {"mem_capacity_bytes", c->mem_capacity_bytes, 0},
        {"mem_bw_bytes_per_s", c->mem_bw_bytes_per_s, 0},
        {"mem_bw_util", c->mem_bw_util, 0},
        {"nvlinks", (double)c->nvlinks, 0},
        {"nvlink_bidir_bytes_per_s", c->nvlink_bidir_bytes_per_s, 0},
        {"nvlink_util", c->nvlink_util, 0},
        {"nic_ports", (double)c->nic_ports, 0},
        {"nic_bidir_bytes_per_s", c->nic_bidir_bytes_per_s, 0},
        {"nic_util", c->nic_util, 0},
        {"board_power_w", c->board_power_w, 1},
        {"idle_power_w", c->idle_power_w, 1},
        {"price_per_hour_usd", c->price_per_hour_usd, 1},
    };
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        double v = req[i].value;
        if (!isfinite(v) || v < 0.0 || (v == 0.0 && !req[i].allow_zero)) {
            *bad = req[i].key;
            return STATUS_INVALID_VALUE;
        }
    }
    const struct {
        const char *key;
        double value;
    } fractions[] = {
        {"flops_util", c->flops_util},
        {"mem_bw_util", c->mem_bw_util},
        {"nvlink_util", c->nvlink_util},
        {"nic_util", c->nic_util},
    };
    for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++) {
        if (fractions[i].value > 1.0) {
            *bad = fractions[i].key;
            return STATUS_INVALID_VALUE;
        }
    }
    double f = c->allreduce_intra_fraction;
    if (!isfinite(f) || f < 0.0 || f > 1.0) {
        *bad = "allreduce_intra_fraction";
        return STATUS_INVALID_VALUE;
    }
    if (c->board_power_w > 0 && c->idle_power_w > c->board_power_w) {
        *bad = "idle_power_w";
        return STATUS_INVALID_VALUE;
    }
    if (c->devices % c->nodes != 0) {
        *bad = "nodes";
        return STATUS_INVALID_NODES;
    }
    if (c->nodes == 1 && f != 1.0) {
        *bad = "allreduce_intra_fraction";
        return STATUS_INVALID_SINGLE_NODE_BLEND;
    }
    return STATUS_OK;
}

status_code cluster_derive(cluster_t *c, const char **bad)
{
    const char *dummy = NULL;
    if (!bad)
        bad = &dummy;
    status_code rc = cluster_check(c, bad);
    if (rc != STATUS_OK)
        return rc;

    c->devices_per_node = c->devices / c->nodes;
    c->eff_fp64_flops = c->peak_fp64_flops * c->flops_util;
    c->eff_fp32_flops = c->peak_fp32_flops * c->flops_util;
    c->eff_fp16_flops = c->peak_fp16_flops * c->flops_util;
    c->eff_int8_ops = c->peak_int8_ops * c->flops_util;
    c->eff_mem_bw = c->mem_bw_bytes_per_s * c->mem_bw_util;
    c->eff_intra_bw = (double)c->nvlinks * (c->nvlink_bidir_bytes_per_s / 2) *
                      c->nvlink_util;
    c->eff_inter_bw = (double)c->nic_ports * (c->nic_bidir_bytes_per_s / 2) *
                      c->nic_util / (double)c->devices_per_node;

    double f_intra = c->allreduce_intra_fraction;
    double f_inter = 1 - f_intra;
    double blend = f_inter * c->eff_inter_bw + f_intra * c->eff_intra_bw;
    if (c->nodes > 1) {
        c->net_levels = 2;
        c->coll_bw[CLUSTER_ALLTOALL][0] = c->eff_intra_bw;
        c->coll_bw[CLUSTER_ALLTOALL][1] = c->eff_inter_bw;
        c->coll_bw[CLUSTER_ALLREDUCE][0] = c->eff_intra_bw;
        c->coll_bw[CLUSTER_ALLREDUCE][1] = blend;
    } else {
        c->net_levels = 1;
        c->coll_bw[CLUSTER_ALLTOALL][0] = c->eff_intra_bw;
        c->coll_bw[CLUSTER_ALLREDUCE][0] = blend;
    }
    for (int l = 0; l < c->net_levels; l++) {
        c->coll_bw[CLUSTER_ALLGATHER][l] = 2 * c->coll_bw[CLUSTER_ALLREDUCE][l];
        c->coll_bw[CLUSTER_REDUCESCATTER][l] =
            2 * c->coll_bw[CLUSTER_ALLREDUCE][l];
    }
    return STATUS_OK;
}

double cluster_level_bw(const cluster_t *c, cluster_coll coll, int nlevels,
                        int level)
{
    int idx = c->net_levels - nlevels + level;
    if (idx < 0 || idx >= c->net_levels)
        return 0.0;
    return c->coll_bw[coll][idx];
}

double cluster_eff_flops(const cluster_t *c, int64_t bytes)
{
    switch (bytes) {
    case 8:
        return c->eff_fp64_flops;
    case 4:
        return c->eff_fp32_flops;
    case 2:
        return c->eff_fp16_flops;
    case 1:
        return c->eff_int8_ops;
    default:
        return 0.0;
    }
}
