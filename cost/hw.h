/*
 * hw.h - hardware generations for the detailed fidelity.
 *
 * An hw_t is one accelerator generation: dense peaks per data type,
 * memory capacity and bandwidth, the links it ships with (NVLink or
 * Infinity Fabric domain, NIC per device), and the efficiency figures the
 * detailed fidelity is calibrated with. Efficiencies belong to the
 * generation (its silicon and the mature software stack on it), never to
 * a run:
 *   - GEMM efficiency as a function of the operation's size, a small
 *     table of (log10 FLOPs, fraction of peak) points, interpolated
 *     linearly in log10 FLOPs and clamped at both ends;
 *   - the fraction of HBM bandwidth that streaming (memory-bound) kernels
 *     reach;
 *   - per link type, a latency per algorithm step (alpha) and a fraction
 *     of the link bandwidth that collectives reach (beta efficiency).
 * It also carries the device's board power, idle power and hourly price
 * (for cost/energy.h; 0 when unknown). Plain value (no pointers): points
 * copy it freely.
 */
#ifndef MADSWEEP_HW_H
#define MADSWEEP_HW_H

#include <stdint.h>

#include "status.h"

#define HW_NAME_MAX 64
#define HW_EFF_POINTS 8

typedef enum hw_dtype {
    HW_FP32 = 0,
    HW_TF32 = 1,
    HW_BF16 = 2, /* also FP16 */
    HW_FP8 = 3,
    HW_INT8 = 4,
    HW_FP4 = 5, /* FP4 tensor cores (NVFP4/MXFP4, Blackwell) */
    HW_NDTYPES = 6
} hw_dtype;

typedef struct hw_t {
    char name[HW_NAME_MAX];
    double peak_flops[HW_NDTYPES]; /* dense, per device, FLOP/s */
    double mem_capacity_bytes;
    double mem_bw_bytes_per_s;
    double mem_bw_efficiency;      /* streaming kernels, (0, 1] */
    int gemm_points;               /* entries used in the table below */
    double gemm_log10_flops[HW_EFF_POINTS]; /* ascending */
    double gemm_efficiency[HW_EFF_POINTS];  /* fraction of peak, (0, 1] */
    double attention_efficiency;   /* FlashAttention-2-class kernels, fraction of peak */
    double attention_tuned_efficiency; /* vendor-tuned fused attention (0: the above) */
    double kernel_overhead_s;      /* fixed cost per kernel launch */
    /* FP8 GEMMs: a table of their own against the FP8 peak (0 points:
     * FP8 GEMMs take the table above) */
    int gemm_fp8_points;
    double gemm_fp8_log10_flops[HW_EFF_POINTS];
    double gemm_fp8_efficiency[HW_EFF_POINTS];
    /* serving (cost/detailed/serve/step.c): an FP8 GEMM's efficiency at
     * large m from kernel sweeps, fraction of the FP8 peak (0: the FP8
     * table's top, which training runs calibrate) */
    double serve_gemm_fp8_efficiency;
    /* FP4 GEMMs: the same against the FP4 peak (0 points: the BF16 table) */
    int gemm_fp4_points;
    double gemm_fp4_log10_flops[HW_EFF_POINTS];
    double gemm_fp4_efficiency[HW_EFF_POINTS];
    /* relative uncertainty (+-) of the compute efficiencies (GEMM,
     * attention, HBM streaming) and of the network figures: small for
     * generations calibrated on published runs, larger for transferred
     * ones; gives the band of a result */
    double efficiency_uncertainty;
    double network_uncertainty;
    /* scale-up domain (NVLink/NVSwitch, Infinity Fabric) */
    int64_t scaleup_devices;             /* devices per domain */
    /* devices per compute tray (GB200 NVL72: 4), the unit a scheduler
     * allocates inside a domain (0: whole domains only) */
    int64_t scaleup_tray_devices;
    double scaleup_bytes_per_s;          /* per device, one direction */
    double scaleup_latency_s;            /* alpha per algorithm step */
    double scaleup_efficiency;           /* beta: fraction reached */
    double scaleup_nvls_efficiency;      /* in-switch reduction (NVLink
                                            SHARP, NCCL's NVLS): its
                                            efficiency; 0: the switch
                                            cannot reduce */
    /* scale-out (IB/RoCE NIC) */
    double nic_bytes_per_s;              /* per device, one direction */
    double nic_latency_s;
    double nic_efficiency;
    /* power and price (cost/energy.h; 0: unknown, figures NaN) */
    double board_power_w;          /* per device, W (TDP) */
    double idle_power_w;           /* per device, W (0: a fraction of board) */
    double price_per_hour_usd;     /* per device-hour */
    /* kernel layer (cost/kernel/): the chip's figures its closed forms
     * take (0: not given; the kernel layer then refuses the GPU) */
    char arch[HW_NAME_MAX];        /* architecture family: "volta", "ampere",
                                      "ada", "hopper", "blackwell", "cdna2",
                                      "cdna3", "cdna4" */
    int64_t sm_count;              /* streaming multiprocessors (CUs on AMD) */
    double clock_hz;               /* tensor clock the dense peaks are quoted at */
    double l2_bytes;               /* last-level on-chip cache (L2; AMD: L2 + Infinity Cache not counted) */
    int64_t gemm_tile_m;           /* CTA tile of the library GEMM, rows (0: 128) */
    int64_t gemm_tile_n;           /* CTA tile, columns (0: 128) */
} hw_t;

/* "fp32", "tf32", "bf16", "fp16" (= bf16 peak), "fp8", "int8", "fp4";
 * -1 if unknown. A dtype whose peak a generation lacks (0) runs at its
 * BF16 peak and BF16 efficiency table. */
int hw_dtype_parse(const char *s);
const char *hw_dtype_name(hw_dtype d);
/* Bytes per element of a dtype (fp32/tf32: 4, bf16: 2, fp8/int8: 1,
 * fp4: 0.5). Inline, as hw_dtype_narrow and hw_mem_time: every GEMM and
 * memory-bound kernel of an evaluation calls them. */
static inline double hw_dtype_bytes(hw_dtype d)
{
    switch (d) {
    case HW_FP32:
    case HW_TF32:
        return 4.0;
    case HW_BF16:
        return 2.0;
    case HW_FP4:
        return 0.5;
    default:
        return 1.0;
    }
}
/* A narrow-float GEMM dtype (FP8, FP4): only the GEMMs that take it run
 * in it, with cast/scaling passes; attention and the other GEMMs in
 * BF16. */
static inline int hw_dtype_narrow(hw_dtype d)
{
    return d == HW_FP8 || d == HW_FP4;
}

/* Checks the figures; on a bad one returns STATUS_INVALID_VALUE and sets
 * *bad to its key name. */
status_code hw_check(const hw_t *h, const char **bad);

/* GEMM efficiency for an operation of `flops` FLOPs (the FP8 / FP4 table
 * for HW_FP8 / HW_FP4 when the generation has that table and peak). */
double hw_gemm_efficiency(const hw_t *h, double flops);
double hw_gemm_efficiency_dtype(const hw_t *h, hw_dtype d, double flops);

/* Roofline time of a GEMM (or batch of equal GEMMs): max of FLOPs over
 * the size-dependent effective peak and bytes over effective bandwidth,
 * plus one kernel overhead. M, N, K per GEMM; `batch` GEMMs. */
double hw_gemm_time(const hw_t *h, hw_dtype d, double m, double n, double k,
                    double batch);
/* The same with the efficiency and the memory bandwidth scaled (band
 * scenarios: 1 +- the uncertainty). */
double hw_gemm_time_scaled(const hw_t *h, hw_dtype d, double m, double n, double k,
                           double batch, double eff_scale, double mem_scale);

/* Time of a memory-bound kernel moving `bytes` bytes. */
static inline double hw_mem_time(const hw_t *h, double bytes)
{
    return bytes / (h->mem_bw_bytes_per_s * h->mem_bw_efficiency);
}

/* hw_gemm_time_scaled with the table's efficiency `eff` given: that of
 * hw_gemm_efficiency_dtype(h, d, 2 m n k batch), which a caller costing
 * many GEMMs of few sizes looks up once per size (its log10 is most of a
 * GEMM's cost). Inline: a caller's constant batch and scales (1) fold. */
static inline double hw_gemm_time_eff(const hw_t *h, hw_dtype d, double m, double n,
                                      double k, double batch, double eff_scale,
                                      double mem_scale, double eff)
{
    double flops = 2.0 * m * n * k;
    double peak = h->peak_flops[d] > 0 ? h->peak_flops[d] : h->peak_flops[HW_BF16];
    double tc = batch * flops / (peak * eff_scale * eff);
    double bytes = batch * hw_dtype_bytes(d) * (m * k + k * n + m * n);
    double tm = hw_mem_time(h, bytes) / mem_scale;
    return (tc > tm ? tc : tm) + h->kernel_overhead_s;
}

/* The scale-up domain a job of `devices` devices sees on hardware whose
 * domains hold `domain` devices: the domain when the job is a whole
 * number of them (or smaller than one); otherwise, when the hardware has
 * compute trays and the job is a whole number of trays, the job spans
 * whole and partial domains, placed as equal domains of the largest
 * whole number of trays that divides the job (a 128-GPU job on NVL72
 * racks: two domains of 64 = 16 trays of 4); else `domain` unchanged
 * (the caller refuses it). */
int64_t hw_job_domain(const hw_t *h, int64_t devices, int64_t domain);

#endif
