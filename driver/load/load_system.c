/*
 * load_system.c - reading systems: MAD-Max clusters (systems.cfg) and
 * detailed systems (detailed_systems.cfg: a hardware generation, device
 * count, scale-up domain, pods), both with `base` entries, and their
 * power and price over their hardware's.
 *
 * Each fidelity's keys are one table here; cluster_derive() and
 * topo_system_derive() in cost/ check what the tables cannot, and a
 * failure is reported at the key that caused it.
 */
#include "load.h"
#include "load_key.h"

#include "../../cost/detailed.h"
#include "range.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define SK(n, t, d, ...) LOAD_KEY(#n, t, offsetof(cluster_t, n), LK_ALL, LR_YES, d, __VA_ARGS__)
static const load_key system_keys[] = {
    SK(name, LT_STRING, "catalogue name", LOAD_NONUM),
    LOAD_BASE_KEY("systems", "systems.cfg"),
    SK(devices, LT_INT, "devices (GPUs) in the system", LOAD_INT(1, RANGE_P24, "devices")),
    SK(nodes, LT_INT, "nodes; devices per node = devices / nodes",
       LOAD_INT(1, RANGE_P24, "nodes")),
    SK(peak_fp64_flops, LT_FLOAT, "FP64 peak per device, FLOP/s",
       LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    SK(peak_fp32_flops, LT_FLOAT, "FP32/TF32 peak per device, FLOP/s",
       LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    SK(peak_fp16_flops, LT_FLOAT, "FP16/BF16 peak per device, FLOP/s",
       LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    SK(peak_int8_ops, LT_FLOAT, "INT8 peak per device, OP/s",
       LOAD_FLOAT_OR0(1.0, 1e24, "OP/s per device")),
    SK(flops_util, LT_FLOAT, "fraction of peak FLOPS reached, (0, 1]",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    SK(mem_capacity_bytes, LT_FLOAT, "device memory, bytes",
       LOAD_FLOAT(1.0, 1e24, "bytes per device")),
    SK(mem_bw_bytes_per_s, LT_FLOAT, "device memory bandwidth, bytes/s",
       LOAD_FLOAT(1.0, 1e24, "bytes/s per device")),
    SK(mem_bw_util, LT_FLOAT, "fraction of memory bandwidth reached, (0, 1]",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    SK(nvlinks, LT_INT, "NVLinks per device", LOAD_INT(1, RANGE_P16, "links per device")),
    SK(nvlink_bidir_bytes_per_s, LT_FLOAT,
       "bandwidth per NVLink, both directions, bytes/s",
       LOAD_FLOAT(1.0, 1e24, "bytes/s per link, both directions")),
    SK(nvlink_util, LT_FLOAT, "fraction of NVLink bandwidth reached, (0, 1]",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    SK(nic_ports, LT_INT, "IB/RoCE ports per node", LOAD_INT(1, RANGE_P16, "ports per node")),
    SK(nic_bidir_bytes_per_s, LT_FLOAT,
       "bandwidth per IB/RoCE port, both directions, bytes/s",
       LOAD_FLOAT(1.0, 1e24, "bytes/s per port, both directions")),
    SK(nic_util, LT_FLOAT, "fraction of IB/RoCE bandwidth reached, (0, 1]",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    SK(allreduce_intra_fraction, LT_FLOAT,
       "weight of intra-node bandwidth in the inter-node all-reduce blend, [0, 1]",
       LOAD_FLOAT(0.0, 1.0, "fraction")),
    LOAD_KEY("hardware", LT_ANY, 0, LK_ALL, LR_NO,
        "hardware generation (hardware.cfg name) whose board power and price apply",
        LOAD_NONUM),
    LOAD_KEY("board_power_w", LT_FLOAT, offsetof(cluster_t, board_power_w), LK_ALL, LR_NO,
        "board power per device, W (default: the hardware's)",
        LOAD_FLOAT_OR0(1e-3, 1e6, "W per device (0: unknown)")),
    LOAD_KEY("idle_power_w", LT_FLOAT, offsetof(cluster_t, idle_power_w), LK_ALL, LR_NO,
        "idle power per device, W (default: the hardware's, else 30 % of board power)",
        LOAD_FLOAT_OR0(1e-3, 1e6, "W per device (0: 30 % of board power)")),
    LOAD_KEY("price_per_hour_usd", LT_FLOAT, offsetof(cluster_t, price_per_hour_usd), LK_ALL,
        LR_NO, "price per device-hour, USD (default: the hardware's)",
        LOAD_FLOAT_OR0(1e-6, 1e6, "USD per device-hour (0: unknown)")),
};

const load_table load_system_table = {system_keys, NKEYS(system_keys)};

#define YK(n, t, r, d, ...) \
    LOAD_KEY(#n, t, offsetof(topo_system_t, n), LK_ALL, r, d, __VA_ARGS__)
static const load_key dsystem_keys[] = {
    YK(name, LT_STRING, LR_YES, "name", LOAD_NONUM),
    LOAD_BASE_KEY("systems", "detailed_systems.cfg"),
    LOAD_KEY("hardware", LT_ANY, 0, LK_ALL, LR_YES,
        "hardware generation: a group or a name in list 'hardware' (hardware.cfg)", LOAD_NONUM),
    YK(devices, LT_INT, LR_YES, "devices in the system", LOAD_INT(1, RANGE_P24, "devices")),
    YK(devices_per_node, LT_INT, LR_NO, "scale-up domain size (default: the hardware's)",
       LOAD_INT(0, RANGE_P24, "devices/node")),
    YK(nic_gbps_per_device, LT_FLOAT, LR_NO,
       "scale-out bandwidth per device, Gb/s one direction (default: the hardware's)",
       LOAD_FLOAT_OR0(1e-3, 1e9, "Gb/s per device, one direction")),
    YK(pod_devices, LT_INT, LR_NO, "devices per pod; above it the network is oversubscribed",
       LOAD_INT(0, RANGE_P24, "devices")),
    YK(pod_oversubscription, LT_FLOAT, LR_NO, "oversubscription above the pod (e.g. 7 for 1:7)",
       LOAD_FLOAT_OR0(1.0, 1e6, "1")),
    LOAD_KEY("collective", LT_ALGO, offsetof(topo_system_t, algo), LK_ALL, LR_NO,
        "\"auto\" (default: per collective and size the fastest, as NCCL's tuner), "
        "\"ring\", \"tree\" or \"hierarchical\"", LOAD_NONUM),
    LOAD_KEY("board_power_w", LT_ANY, 0, LK_ALL, LR_NO,
        "board power per device, W (default: the hardware's)",
        LOAD_FLOAT_OR0(1e-3, 1e6, "W per device (0: unknown)")),
    LOAD_KEY("idle_power_w", LT_ANY, 0, LK_ALL, LR_NO,
        "idle power per device, W (default: the hardware's)",
        LOAD_FLOAT_OR0(1e-3, 1e6, "W per device (0: 30 % of board power)")),
    LOAD_KEY("price_per_hour_usd", LT_ANY, 0, LK_ALL, LR_NO,
        "price per device-hour, USD (default: the hardware's)",
        LOAD_FLOAT_OR0(1e-6, 1e6, "USD per device-hour (0: unknown)")),
};

const load_table load_system_detailed_table = {dsystem_keys, NKEYS(dsystem_keys)};

int load_system_power(const config_setting_t *g, double *board_w, double *idle_w,
                      double *price, load_err *err)
{
    static const char *const keys[3] = {"board_power_w", "idle_power_w",
                                        "price_per_hour_usd"};
    double *dst[3] = {board_w, idle_w, price};
    for (int i = 0; i < 3; i++) {
        const config_setting_t *s = config_setting_get_member(g, keys[i]);
        if (!s)
            continue;
        int t = config_setting_type(s);
        double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                   : t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64
                       ? (double)config_setting_get_int64(s)
                       : -1.0;
        if (t != CONFIG_TYPE_FLOAT && t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected a number >= 0", keys[i]);
            return -1;
        }
        if (range_check_float(s, load_keys_find(&load_system_table, keys[i]), v, err) != 0)
            return -1;
        *dst[i] = v;
    }
    return 0;
}

/* A MAD-Max system's power and price: from its `hardware` (a hardware.cfg
 * entry), under its own board_power_w, idle_power_w, price_per_hour_usd
 * (a system without `hardware` keeps what its keys or its base gave). */
static int load_system_power_of_hw(const config_setting_t *g, const char *configs_dir,
                                   load_reads *reads, cluster_t *c, load_err *err)
{
    const config_setting_t *hs = config_setting_get_member(g, "hardware");
    if (!hs)
        return 0;
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *hg = load_entry(hs, "hardware", "hardware.cfg",
                                            configs_dir, reads, &aux, &aux_open, err);
    hw_t h;
    if (hg && load_hw_in(hg, configs_dir, reads, &h, err) == 0) {
        snprintf(c->hardware, sizeof c->hardware, "%s", h.name);
        if (!config_setting_get_member(g, "board_power_w"))
            c->board_power_w = h.board_power_w;
        if (!config_setting_get_member(g, "idle_power_w"))
            c->idle_power_w = h.idle_power_w;
        if (!config_setting_get_member(g, "price_per_hour_usd"))
            c->price_per_hour_usd = h.price_per_hour_usd;
        rc = 0;
    }
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

static int load_system_at(const config_setting_t *g, const char *configs_dir,
                          load_reads *reads, int depth, cluster_t *c,
                          load_err *err)
{
    memset(c, 0, sizeof *c);
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *b = NULL;
    if (load_base(g, "systems", "systems.cfg", configs_dir, reads, depth, &aux,
                  &aux_open, &b, err) != 0 ||
        (b && load_system_at(b, configs_dir, reads, depth + 1, c, err) != 0) ||
        load_value_group(g, "system", system_keys, NKEYS(system_keys), LK_ALL,
                         b ? LG_BASED : 0, c, err) ||
        load_system_power_of_hw(g, configs_dir, reads, c, err))
        goto out;
    const char *bad = NULL;
    status_code st = cluster_derive(c, &bad);
    if (st == STATUS_OK) {
        rc = 0;
        goto out;
    }
    const config_setting_t *at = load_value_member_or(g, bad ? bad : "name");
    if (st == STATUS_INVALID_VALUE)
        load_fail(err, at,
                  "key '%s' in system '%s': must be a finite number > 0 "
                  "(utilizations in (0, 1], blend fraction in [0, 1], "
                  "peaks, power and price >= 0, idle power <= board power)",
                  bad, c->name);
    else if (st == STATUS_INVALID_NODES)
        load_fail(err, at,
                  "key '%s' in system '%s': %lld devices do not divide into "
                  "%lld nodes",
                  bad, c->name, (long long)c->devices, (long long)c->nodes);
    else
        load_fail(err, at, "key '%s' in system '%s': %s (%s)", bad, c->name,
                  status_text(st), status_name(st));
out:
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

int load_system(const config_setting_t *g, const char *configs_dir,
                load_reads *reads, cluster_t *c, load_err *err)
{
    return load_system_at(g, configs_dir, reads, 0, c, err);
}

void load_system_domain_advice(char *buf, size_t size, int64_t devices, int64_t domain)
{
    int64_t k = domain > 0 ? devices / domain : 0;
    if (k < 1)
        snprintf(buf, size, "the nearest valid size is %lld (1 x %lld)",
                 (long long)domain, (long long)domain);
    else
        snprintf(buf, size, "the nearest valid sizes are %lld (%lld x %lld) and "
                 "%lld (%lld x %lld)", (long long)(k * domain), (long long)k,
                 (long long)domain, (long long)((k + 1) * domain),
                 (long long)(k + 1), (long long)domain);
}

const char *load_idle_power_why(double idle_w, double board_w, char *buf, size_t size)
{
    snprintf(buf, size, "idle power %g W is above the board power %g W", idle_w, board_w);
    return buf;
}

const char *load_system_why(const topo_system_t *y, status_code st, const char *bad,
                            char *buf, size_t size)
{
    int64_t domain = y->devices_per_node > 0 ? y->devices_per_node : y->hw.scaleup_devices;
    if (bad && strcmp(bad, "pod_devices") == 0 && st == STATUS_INVALID_VALUE)
        snprintf(buf, size, "a pod of %lld devices must be a whole number of scale-up "
                 "domains of %lld and divide the system's %lld devices into whole pods",
                 (long long)y->pod_devices, (long long)domain, (long long)y->devices);
    else if (bad && strcmp(bad, "idle_power_w") == 0 && y->hw.board_power_w > 0 &&
             y->hw.idle_power_w > y->hw.board_power_w)
        load_idle_power_why(y->hw.idle_power_w, y->hw.board_power_w, buf, size);
    else
        snprintf(buf, size, "%s", status_text(st));
    return buf;
}

/* The message of a system whose topology does not derive. */
static void load_system_detailed_fail(const config_setting_t *g, const topo_system_t *sys,
                                      status_code st, const char *bad, load_err *err)
{
    int64_t domain = sys->devices_per_node > 0 ? sys->devices_per_node
                                               : sys->hw.scaleup_devices;
    if (st == STATUS_INVALID_NODES && domain > 0 && sys->devices > domain) {
        char advice[160];
        load_system_domain_advice(advice, sizeof advice, sys->devices, domain);
        load_fail(err, load_value_member_or(g, sys->devices_per_node > 0
                                             ? "devices_per_node" : "devices"),
                  "system '%s': %lld devices are not a whole number of scale-up "
                  "domains of %lld devices (%s %s); %s, or set devices_per_node",
                  sys->name, (long long)sys->devices, (long long)domain,
                  sys->devices_per_node > 0 ? "devices_per_node of" : "the NVLink/"
                  "scale-up domain of hardware", sys->devices_per_node > 0
                  ? "this system" : sys->hw.name, advice);
        return;
    }
    char why[200];
    load_fail(err, load_value_member_or(g, bad ? bad : "devices"),
              "key '%s' in system '%s': %s (devices %lld, per node %lld, pod %lld)",
              bad ? bad : "?", sys->name, load_system_why(sys, st, bad, why, sizeof why),
              (long long)sys->devices, (long long)sys->devices_per_node,
              (long long)sys->pod_devices);
}

static int load_system_detailed_at(const config_setting_t *g, const char *configs_dir,
                                   load_reads *reads, int depth, topo_system_t *sys,
                                   load_err *err)
{
    memset(sys, 0, sizeof *sys);
    config_t base_aux, aux; /* opened by load_base / load_resolve when needed */
    int base_open = 0, aux_open = 0, rc = -1;
    const config_setting_t *b = NULL;
    if (load_base(g, "systems", "detailed_systems.cfg", configs_dir, reads, depth,
                  &base_aux, &base_open, &b, err) != 0 ||
        (b && load_system_detailed_at(b, configs_dir, reads, depth + 1, sys, err) != 0) ||
        load_value_group(g, "detailed system", dsystem_keys, NKEYS(dsystem_keys), LK_ALL,
                         b ? LG_BASED : 0, sys, err))
        goto out;
    const config_setting_t *hm = config_setting_get_member(g, "hardware");
    if (hm) {
        const config_setting_t *hs = load_entry(hm, "hardware", "hardware.cfg",
                                                configs_dir, reads, &aux, &aux_open,
                                                err);
        if (!hs || load_hw_in(hs, configs_dir, reads, &sys->hw, err) != 0)
            goto out;
    }
    /* the system's power and price over its hardware's (or its base's) */
    if (load_system_power(g, &sys->hw.board_power_w, &sys->hw.idle_power_w,
                          &sys->hw.price_per_hour_usd, err) != 0)
        goto out;
    const char *bad = NULL;
    status_code st = topo_system_derive(sys, &bad);
    if (st == STATUS_OK)
        rc = 0;
    else
        load_system_detailed_fail(g, sys, st, bad, err);
out:
    if (aux_open)
        config_destroy(&aux);
    if (base_open)
        config_destroy(&base_aux);
    return rc;
}

int load_system_pod_check(const config_setting_t *g, const topo_system_t *y, load_err *err)
{
    if (y->pod_devices > y->devices) { /* the pod level would be dropped */
        load_fail(err, load_value_member_or(g, "pod_devices"), "key 'pod_devices': a pod "
                  "of %lld devices is larger than system '%s' (%lld devices)",
                  (long long)y->pod_devices, y->name, (long long)y->devices);
        return -1;
    }
    if (y->pod_oversubscription > 0 && y->pod_oversubscription != 1.0 &&
        !(y->pod_devices > 0 && y->pod_devices < y->devices)) {
        load_fail(err, load_value_member_or(g, "pod_oversubscription"), "key "
                  "'pod_oversubscription': %g on system '%s' (%lld devices), which has no "
                  "pod smaller than itself (pod_devices %lld): nothing would be "
                  "oversubscribed", y->pod_oversubscription, y->name,
                  (long long)y->devices, (long long)y->pod_devices);
        return -1;
    }
    return 0;
}

int load_system_detailed(const config_setting_t *g, const char *configs_dir,
                         load_reads *reads, topo_system_t *sys, load_err *err)
{
    if (load_system_detailed_at(g, configs_dir, reads, 0, sys, err) != 0)
        return -1;
    return load_system_pod_check(g, sys, err);
}
