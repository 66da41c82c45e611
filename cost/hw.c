/*
 * hw.c - roofline arithmetic of a hardware generation.
 */
#include "hw.h"

#include <math.h>
#include <string.h>

static const char *const hw_dtype_names[HW_NDTYPES] = {"fp32", "tf32", "bf16",
                                                      "fp8", "int8", "fp4"};

int hw_dtype_parse(const char *s)
{
    if (strcmp(s, "fp16") == 0)
        return HW_BF16;
    for (int i = 0; i < HW_NDTYPES; i++)
        if (strcmp(s, hw_dtype_names[i]) == 0)
            return i;
    return -1;
}

const char *hw_dtype_name(hw_dtype d)
{
    return d >= 0 && d < HW_NDTYPES ? hw_dtype_names[d] : "?";
}

static int hw_frac(double x)
{
    return isfinite(x) && x > 0.0 && x <= 1.0;
}

/* An efficiency table: n points (at least `min`), sizes ascending,
 * fractions in (0, 1]; 0 when bad, with *bad naming the faulty key. */
static int hw_table_ok(const double *xs, const double *ys, int n, int min,
                       const char *xkey, const char *ykey, const char **bad)
{
    for (int i = 0; i < n && n >= min && n <= HW_EFF_POINTS; i++) {
        if (!isfinite(xs[i]) || (i > 0 && xs[i] <= xs[i - 1])) {
            *bad = xkey;
            return 0;
        }
    }
    if (n < min || n > HW_EFF_POINTS) {
        *bad = ykey;
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!hw_frac(ys[i])) {
            *bad = ykey;
            return 0;
        }
    return 1;
}

status_code hw_check(const hw_t *h, const char **bad)
{
#define HW_BAD(cond, key)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            *bad = key;                                                     \
            return STATUS_INVALID_VALUE;                                    \
        }                                                                   \
    } while (0)
    HW_BAD(isfinite(h->peak_flops[HW_BF16]) && h->peak_flops[HW_BF16] > 0,
           "peak_bf16_flops");
    for (int i = 0; i < HW_NDTYPES; i++)
        HW_BAD(isfinite(h->peak_flops[i]) && h->peak_flops[i] >= 0,
               "peak_flops");
    HW_BAD(isfinite(h->mem_capacity_bytes) && h->mem_capacity_bytes > 0,
           "mem_capacity_bytes");
    HW_BAD(isfinite(h->mem_bw_bytes_per_s) && h->mem_bw_bytes_per_s > 0,
           "mem_bw_bytes_per_s");
    HW_BAD(hw_frac(h->mem_bw_efficiency), "mem_bw_efficiency");
    if (!hw_table_ok(h->gemm_log10_flops, h->gemm_efficiency, h->gemm_points, 1,
                     "gemm_log10_flops", "gemm_efficiency", bad))
        return STATUS_INVALID_VALUE;
    HW_BAD(hw_frac(h->attention_efficiency), "attention_efficiency");
    HW_BAD(h->attention_tuned_efficiency == 0.0 || hw_frac(h->attention_tuned_efficiency),
           "attention_tuned_efficiency");
    HW_BAD(h->serve_gemm_fp8_efficiency == 0.0 || hw_frac(h->serve_gemm_fp8_efficiency),
           "serve_gemm_fp8_efficiency");
    if (!hw_table_ok(h->gemm_fp8_log10_flops, h->gemm_fp8_efficiency, h->gemm_fp8_points, 0,
                     "gemm_fp8_log10_flops", "gemm_fp8_efficiency", bad))
        return STATUS_INVALID_VALUE;
    if (!hw_table_ok(h->gemm_fp4_log10_flops, h->gemm_fp4_efficiency, h->gemm_fp4_points, 0,
                     "gemm_fp4_log10_flops", "gemm_fp4_efficiency", bad))
        return STATUS_INVALID_VALUE;
    HW_BAD(isfinite(h->efficiency_uncertainty) && h->efficiency_uncertainty >= 0 &&
               h->efficiency_uncertainty < 0.5,
           "efficiency_uncertainty");
    HW_BAD(isfinite(h->network_uncertainty) && h->network_uncertainty >= 0 &&
               h->network_uncertainty < 0.5,
           "network_uncertainty");
    HW_BAD(isfinite(h->kernel_overhead_s) && h->kernel_overhead_s >= 0,
           "kernel_overhead_s");
    HW_BAD(h->scaleup_devices >= 1, "scaleup_devices");
    HW_BAD(h->scaleup_tray_devices >= 0 && h->scaleup_tray_devices <= h->scaleup_devices,
           "scaleup_tray_devices");
    HW_BAD(isfinite(h->scaleup_bytes_per_s) && h->scaleup_bytes_per_s > 0,
           "scaleup_bytes_per_s");
    HW_BAD(isfinite(h->scaleup_latency_s) && h->scaleup_latency_s >= 0,
           "scaleup_latency_s");
    HW_BAD(hw_frac(h->scaleup_efficiency), "scaleup_efficiency");
    HW_BAD(isfinite(h->scaleup_nvls_efficiency) && h->scaleup_nvls_efficiency >= 0 &&
               h->scaleup_nvls_efficiency <= 1,
           "scaleup_nvls_efficiency");
    HW_BAD(isfinite(h->nic_bytes_per_s) && h->nic_bytes_per_s > 0,
           "nic_bytes_per_s");
    HW_BAD(isfinite(h->nic_latency_s) && h->nic_latency_s >= 0,
           "nic_latency_s");
    HW_BAD(hw_frac(h->nic_efficiency), "nic_efficiency");
    HW_BAD(isfinite(h->board_power_w) && h->board_power_w >= 0, "board_power_w");
    HW_BAD(isfinite(h->idle_power_w) && h->idle_power_w >= 0 &&
               (h->board_power_w == 0 || h->idle_power_w <= h->board_power_w),
           "idle_power_w");
    HW_BAD(isfinite(h->price_per_hour_usd) && h->price_per_hour_usd >= 0,
           "price_per_hour_usd");
    /* kernel layer figures: 0 (not given) or within a chip's range */
    HW_BAD(h->sm_count >= 0 && h->sm_count <= 4096, "sm_count");
    HW_BAD(isfinite(h->clock_hz) && (h->clock_hz == 0 ||
                                     (h->clock_hz >= 1e8 && h->clock_hz <= 1e10)),
           "clock_hz");
    HW_BAD(isfinite(h->l2_bytes) && h->l2_bytes >= 0 && h->l2_bytes <= 1e10, "l2_bytes");
    HW_BAD(h->gemm_tile_m == 0 || (h->gemm_tile_m >= 16 && h->gemm_tile_m <= 1024),
           "gemm_tile_m");
    HW_BAD(h->gemm_tile_n == 0 || (h->gemm_tile_n >= 16 && h->gemm_tile_n <= 1024),
           "gemm_tile_n");
#undef HW_BAD
    return STATUS_OK;
}

static double hw_table(const double *xs, const double *ys, int n, double flops)
{
    double x = flops > 1.0 ? log10(flops) : 0.0;
    if (x <= xs[0])
        return ys[0];
    for (int i = 1; i < n; i++) {
        if (x <= xs[i]) {
            double w = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
            return ys[i - 1] + w * (ys[i] - ys[i - 1]);
        }
    }
    return ys[n - 1];
}

double hw_gemm_efficiency(const hw_t *h, double flops)
{
    return hw_table(h->gemm_log10_flops, h->gemm_efficiency, h->gemm_points, flops);
}

double hw_gemm_efficiency_dtype(const hw_t *h, hw_dtype d, double flops)
{
    if (d == HW_FP8 && h->gemm_fp8_points > 0 && h->peak_flops[HW_FP8] > 0)
        return hw_table(h->gemm_fp8_log10_flops, h->gemm_fp8_efficiency,
                        h->gemm_fp8_points, flops);
    if (d == HW_FP4 && h->gemm_fp4_points > 0 && h->peak_flops[HW_FP4] > 0)
        return hw_table(h->gemm_fp4_log10_flops, h->gemm_fp4_efficiency,
                        h->gemm_fp4_points, flops);
    return hw_gemm_efficiency(h, flops);
}

double hw_gemm_time_scaled(const hw_t *h, hw_dtype d, double m, double n, double k,
                           double batch, double eff_scale, double mem_scale)
{
    return hw_gemm_time_eff(h, d, m, n, k, batch, eff_scale, mem_scale,
                            hw_gemm_efficiency_dtype(h, d, 2.0 * m * n * k * batch));
}

double hw_gemm_time(const hw_t *h, hw_dtype d, double m, double n, double k,
                    double batch)
{
    return hw_gemm_time_scaled(h, d, m, n, k, batch, 1.0, 1.0);
}

int64_t hw_job_domain(const hw_t *h, int64_t devices, int64_t domain)
{
    if (domain < 1 || devices <= domain || devices % domain == 0)
        return domain;
    int64_t tray = h->scaleup_tray_devices;
    if (tray < 1 || tray > domain || devices % tray != 0)
        return domain;
    for (int64_t d = domain - domain % tray; d >= tray; d -= tray)
        if (devices % d == 0)
            return d;
    return tray;
}
