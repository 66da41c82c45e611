/*
 * load_hw.c - reading hardware generations (hardware.cfg) of the
 * detailed fidelity: peaks, memory, GEMM efficiency tables, links,
 * power and price, with `base` entries; and the numeric keys as sweep
 * axes (load_hw_number, load_hw_scale).
 *
 * The keys are one table here (hw_keys); a generation with a base
 * starts from it and overrides what it gives, a GEMM table's two
 * arrays always together. hw_check() in cost/ has the last word on
 * ranges.
 */
#include "load.h"
#include "load_key.h"
#include "load_fit.h"

#include "../../cost/detailed.h"
#include "../suggest.h"
#include "range.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define HWO(i) (offsetof(hw_t, peak_flops) + (size_t)(i) * sizeof(double))
#define HK(n, t, r, d, ...) LOAD_KEY(#n, t, offsetof(hw_t, n), LK_ALL, r, d, __VA_ARGS__)
static const load_key hw_keys[] = {
    HK(name, LT_STRING, LR_YES, "catalogue name", LOAD_NONUM),
    LOAD_BASE_KEY("hardware", "hardware.cfg"),
    LOAD_KEY("aliases", LT_ANY, 0, LK_ALL, LR_NO,
        "other names of this generation in measurement files (strings; e.g. \"gb200\" "
        "for gb200-nvl72); a point names the entry by its name", LOAD_NONUM),
    LOAD_FIT_TABLE_KEY,
    LOAD_KEY("peak_fp32_flops", LT_FLOAT, HWO(HW_FP32), LK_ALL, LR_YES, "FP32 dense peak, FLOP/s",
             LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    LOAD_KEY("peak_tf32_flops", LT_FLOAT, HWO(HW_TF32), LK_ALL, LR_NO,
        "TF32 dense peak, FLOP/s (0: none)", LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    LOAD_KEY("peak_bf16_flops", LT_FLOAT, HWO(HW_BF16), LK_ALL, LR_YES,
        "BF16/FP16 dense tensor peak, FLOP/s", LOAD_FLOAT(1.0, 1e24, "FLOP/s per device")),
    LOAD_KEY("peak_fp8_flops", LT_FLOAT, HWO(HW_FP8), LK_ALL, LR_NO,
        "FP8 dense peak, FLOP/s (0: none)", LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    LOAD_KEY("peak_int8_ops", LT_FLOAT, HWO(HW_INT8), LK_ALL, LR_NO,
        "INT8 dense peak, OP/s (0: none)", LOAD_FLOAT_OR0(1.0, 1e24, "OP/s per device")),
    LOAD_KEY("peak_fp4_flops", LT_FLOAT, HWO(HW_FP4), LK_ALL, LR_NO,
        "FP4 dense peak (NVFP4/MXFP4), FLOP/s (0: none: FP4 runs at the BF16 peak)",
        LOAD_FLOAT_OR0(1.0, 1e24, "FLOP/s per device")),
    HK(mem_capacity_bytes, LT_FLOAT, LR_YES, "device memory, bytes",
       LOAD_FLOAT(1.0, 1e24, "bytes per device")),
    HK(mem_bw_bytes_per_s, LT_FLOAT, LR_YES, "device memory bandwidth, bytes/s",
       LOAD_FLOAT(1.0, 1e24, "bytes/s per device")),
    HK(mem_bw_efficiency, LT_FLOAT, LR_YES, "fraction of memory bandwidth streaming kernels reach",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    LOAD_KEY("gemm_log10_flops", LT_ANY, 0, LK_ALL, LR_YES,
        "GEMM size points, log10 FLOPs, ascending (array of up to 8 floats)",
        LOAD_FLOAT(-10.0, 40.0, "log10 FLOP")),
    LOAD_KEY("gemm_efficiency", LT_ANY, 0, LK_ALL, LR_YES,
        "GEMM fraction of peak at each size point (same length)",
        LOAD_FLOAT(1e-6, 1.0, "fraction of peak")),
    HK(attention_efficiency, LT_FLOAT, LR_YES,
       "FlashAttention-2-class attention (forward and backward), fraction of peak",
       LOAD_FLOAT(1e-6, 1.0, "fraction of peak")),
    HK(attention_tuned_efficiency, LT_FLOAT, LR_NO,
       "vendor-tuned fused attention (cuDNN/TE, FlashAttention-3), fraction of peak "
       "(default: attention_efficiency)", LOAD_FLOAT_OR0(1e-6, 1.0, "fraction of peak")),
    HK(kernel_overhead_s, LT_FLOAT, LR_YES, "fixed cost per kernel, s",
       LOAD_FLOAT(0.0, 3600.0, "s per kernel")),
    LOAD_KEY("gemm_fp8_log10_flops", LT_ANY, 0, LK_ALL, LR_NO,
        "FP8 GEMM size points, log10 FLOPs (default: FP8 GEMMs use the BF16 table)",
        LOAD_FLOAT(-10.0, 40.0, "log10 FLOP")),
    LOAD_KEY("gemm_fp8_efficiency", LT_ANY, 0, LK_ALL, LR_NO,
        "FP8 GEMM fraction of the FP8 peak at each size point",
        LOAD_FLOAT(1e-6, 1.0, "fraction of peak")),
    HK(serve_gemm_fp8_efficiency, LT_FLOAT, LR_NO,
       "serving: FP8 GEMM fraction of the FP8 peak at large m, from kernel sweeps "
       "(default: the FP8 table's top)", LOAD_FLOAT_OR0(1e-6, 1.0, "fraction of peak")),
    LOAD_KEY("gemm_fp4_log10_flops", LT_ANY, 0, LK_ALL, LR_NO,
        "FP4 GEMM size points, log10 FLOPs (default: FP4 GEMMs use the BF16 table)",
        LOAD_FLOAT(-10.0, 40.0, "log10 FLOP")),
    LOAD_KEY("gemm_fp4_efficiency", LT_ANY, 0, LK_ALL, LR_NO,
        "FP4 GEMM fraction of the FP4 peak at each size point",
        LOAD_FLOAT(1e-6, 1.0, "fraction of peak")),
    HK(efficiency_uncertainty, LT_FLOAT, LR_NO,
       "relative +- of the compute efficiencies, for the band (default 0)",
       LOAD_FLOAT(0.0, 0.49, "fraction (+-)")),
    HK(network_uncertainty, LT_FLOAT, LR_NO,
       "relative +- of the network figures, for the band (default 0)",
       LOAD_FLOAT(0.0, 0.49, "fraction (+-)")),
    HK(scaleup_devices, LT_INT, LR_YES, "devices per NVLink/NVSwitch (scale-up) domain",
       LOAD_INT(1, RANGE_P24, "devices")),
    HK(scaleup_tray_devices, LT_INT, LR_NO,
       "devices per compute tray inside a scale-up domain (default 0: jobs take whole "
       "domains; GB200 NVL72: 4, a job of whole trays spans whole and partial domains)",
       LOAD_INT(0, RANGE_P24, "devices")),
    HK(scaleup_bytes_per_s, LT_FLOAT, LR_YES, "scale-up bandwidth per device, one direction, bytes/s",
       LOAD_FLOAT(1.0, 1e24, "bytes/s per device")),
    HK(scaleup_latency_s, LT_FLOAT, LR_YES, "scale-up latency per collective step, s",
       LOAD_FLOAT(0.0, 3600.0, "s per collective step")),
    HK(scaleup_efficiency, LT_FLOAT, LR_YES, "fraction of scale-up bandwidth collectives reach",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    HK(scaleup_nvls_efficiency, LT_FLOAT, LR_NO,
       "in-switch reduction (NVLS) efficiency; 0 (default): the switch cannot reduce",
       LOAD_FLOAT(0.0, 1e30, "fraction")),
    HK(nic_bytes_per_s, LT_FLOAT, LR_YES, "default NIC bandwidth per device, one direction, bytes/s",
       LOAD_FLOAT(1.0, 1e24, "bytes/s per device")),
    HK(nic_latency_s, LT_FLOAT, LR_YES, "network latency per collective step, s",
       LOAD_FLOAT(0.0, 3600.0, "s per collective step")),
    HK(nic_efficiency, LT_FLOAT, LR_YES, "fraction of NIC bandwidth collectives reach",
       LOAD_FLOAT(1e-6, 1.0, "fraction")),
    HK(board_power_w, LT_FLOAT, LR_NO, "board power (TDP) per device, W (energy figures)",
       LOAD_FLOAT_OR0(1e-3, 1e6, "W per device (0: unknown)")),
    HK(idle_power_w, LT_FLOAT, LR_NO,
       "power of a device waiting, W (default 30 % of board power; cost/energy.h)",
       LOAD_FLOAT_OR0(1e-3, 1e6, "W per device (0: 30 % of board power)")),
    HK(price_per_hour_usd, LT_FLOAT, LR_NO, "price per device-hour, USD (cost figures)",
       LOAD_FLOAT_OR0(1e-6, 1e6, "USD per device-hour (0: unknown)")),
    HK(arch, LT_STRING, LR_NO,
       "architecture family for the kernel layer: volta, ampere, ada, hopper, blackwell, "
       "cdna2, cdna3, cdna4", LOAD_NONUM),
    HK(sm_count, LT_INT, LR_NO, "streaming multiprocessors (AMD: compute units)",
       LOAD_INT(0, RANGE_P40, "SMs per device")),
    HK(clock_hz, LT_FLOAT, LR_NO, "tensor clock the dense peaks are quoted at, Hz",
       LOAD_FLOAT(0.0, 1e30, "Hz")),
    HK(l2_bytes, LT_FLOAT, LR_NO, "on-chip L2 cache, bytes",
       LOAD_FLOAT(0.0, 1e30, "bytes per device")),
    HK(gemm_tile_m, LT_INT, LR_NO, "library GEMM CTA tile rows (default 128)",
       LOAD_INT(0, RANGE_P40, "rows")),
    HK(gemm_tile_n, LT_INT, LR_NO, "library GEMM CTA tile columns (default 128)",
       LOAD_INT(0, RANGE_P40, "columns")),
};

const load_table load_hw_table = {hw_keys, NKEYS(hw_keys)};

static int load_farray(const config_setting_t *g, const char *key, double *out,
                       int *n, load_err *err)
{
    int len = 0;
    const config_setting_t *s =
        load_value_array(g, key, HW_EFF_POINTS, "numbers", &len, err);
    if (!s)
        return -1;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int et = config_setting_type(e);
        if (et == CONFIG_TYPE_FLOAT)
            out[i] = config_setting_get_float(e);
        else if (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
            out[i] = (double)config_setting_get_int64(e);
        else {
            load_fail(err, s, "key '%s': element %d is %s, expected a number", key,
                      i, load_value_type_name(et));
            return -1;
        }
        if (range_check_float(e, load_keys_find(&load_hw_table, key), out[i], err) != 0)
            return -1;
    }
    *n = len;
    return 0;
}

/* A narrow-float GEMM table (FP8, FP4) of a hardware entry: both keys or
 * neither, with or without a base (one table); a base's table stays when
 * neither is given. */
static int load_hw_narrow(const config_setting_t *g, const char *xkey, const char *ykey,
                          const char *name, double *xs, double *ys, int *points,
                          load_err *err)
{
    if (!config_setting_get_member(g, xkey) && !config_setting_get_member(g, ykey))
        return 0;
    int nx = 0, ny = 0;
    if (load_farray(g, xkey, xs, &nx, err) || load_farray(g, ykey, ys, &ny, err))
        return -1;
    if (nx != ny) {
        load_fail(err, load_value_member_or(g, ykey), "hardware '%s': %s has %d points, %s %d",
                  name, ykey, ny, xkey, nx);
        return -1;
    }
    *points = nx;
    return 0;
}

static int load_hw_at(const config_setting_t *g, const char *configs_dir,
                      load_reads *reads, int depth, hw_t *h, load_err *err)
{
    memset(h, 0, sizeof *h);
    config_t aux;
    int aux_open = 0, rc = -1;
    const config_setting_t *b = NULL;
    if (load_base(g, "hardware", "hardware.cfg", configs_dir, reads, depth, &aux,
                  &aux_open, &b, err) != 0 ||
        (b && load_hw_at(b, configs_dir, reads, depth + 1, h, err) != 0) ||
        load_value_group(g, "hardware", hw_keys, NKEYS(hw_keys), LK_ALL,
                         b ? LG_BASED : 0, h, err))
        goto out;
    bool hx = config_setting_get_member(g, "gemm_log10_flops") != NULL;
    bool hy = config_setting_get_member(g, "gemm_efficiency") != NULL;
    if (b && hx != hy) {
        load_fail(err, load_value_member_or(g, hx ? "gemm_log10_flops" : "gemm_efficiency"),
                  "hardware '%s': give gemm_log10_flops and gemm_efficiency "
                  "together (they are one table)", h->name);
        goto out;
    }
    if (!b || hx) {
        int nx = 0, ny = 0;
        if (load_farray(g, "gemm_log10_flops", h->gemm_log10_flops, &nx, err) ||
            load_farray(g, "gemm_efficiency", h->gemm_efficiency, &ny, err))
            goto out;
        if (nx != ny) {
            load_fail(err, load_value_member_or(g, "gemm_efficiency"),
                      "hardware '%s': gemm_efficiency has %d points, "
                      "gemm_log10_flops %d", h->name, ny, nx);
            goto out;
        }
        h->gemm_points = nx;
    }
    if (load_hw_narrow(g, "gemm_fp8_log10_flops", "gemm_fp8_efficiency", h->name,
                       h->gemm_fp8_log10_flops, h->gemm_fp8_efficiency,
                       &h->gemm_fp8_points, err) ||
        load_hw_narrow(g, "gemm_fp4_log10_flops", "gemm_fp4_efficiency", h->name,
                       h->gemm_fp4_log10_flops, h->gemm_fp4_efficiency,
                       &h->gemm_fp4_points, err))
        goto out;
    const config_setting_t *al = config_setting_get_member(g, "aliases");
    for (int i = 0; al && i < (config_setting_is_aggregate(al) ? config_setting_length(al) : 1);
         i++)
        if (!config_setting_is_aggregate(al) ||
            !config_setting_get_string(config_setting_get_elem(al, (unsigned)i))) {
            load_fail(err, al, "key 'aliases' in hardware '%s': expected a list of names",
                      h->name);
            goto out;
        }
    if (load_fit_check(g, "hardware", &load_hw_table, false, err) != 0)
        goto out;
    const char *bad = NULL;
    if (hw_check(h, &bad) != STATUS_OK) {
        load_fail(err, load_value_member_or(g, bad), "key '%s' in hardware '%s': out of "
                  "range (peaks and bandwidths > 0, efficiencies in (0, 1], "
                  "size points ascending)", bad, h->name);
        goto out;
    }
    rc = 0;
out:
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

int load_hw_in(const config_setting_t *g, const char *configs_dir,
               load_reads *reads, hw_t *h, load_err *err)
{
    return load_hw_at(g, configs_dir, reads, 0, h, err);
}

static const load_key *load_hw_numeric(const char *key)
{
    for (size_t i = 0; i < NKEYS(hw_keys); i++)
        if ((hw_keys[i].type == LT_FLOAT || hw_keys[i].type == LT_INT) &&
            strcmp(hw_keys[i].name, key) == 0)
            return &hw_keys[i];
    return NULL;
}

int load_hw_number(const hw_t *h, const char *key, double *v)
{
    const load_key *k = load_hw_numeric(key);
    if (!k)
        return -1;
    const char *src = (const char *)h + k->offset;
    *v = k->type == LT_INT ? (double)*(const int64_t *)(const void *)src
                           : *(const double *)(const void *)src;
    return 0;
}

int load_hw_scale(hw_t *h, const char *key, double f)
{
    const load_key *k = load_hw_numeric(key);
    if (!k)
        return -1;
    char *dst = (char *)h + k->offset;
    if (k->type == LT_INT) {
        int64_t *p = (int64_t *)(void *)dst;
        double x = (double)*p * f;
        if (x != floor(x) || x < 1 || x > 9e15)
            return 1; /* not a whole number: never rounded silently */
        *p = (int64_t)x;
    } else {
        *(double *)(void *)dst *= f;
    }
    return 0;
}

void load_hw_number_keys(char *buf, size_t size, struct suggest *sg)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < NKEYS(hw_keys); i++) {
        if (hw_keys[i].type != LT_FLOAT && hw_keys[i].type != LT_INT)
            continue;
        if (sg)
            suggest_offer(sg, hw_keys[i].name);
        int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                         hw_keys[i].name);
        if (w < 0 || used + (size_t)w >= size)
            break;
        used += (size_t)w;
    }
}

int load_hw(const config_setting_t *g, hw_t *h, load_err *err)
{
    return load_hw_at(g, NULL, NULL, 0, h, err);
}
