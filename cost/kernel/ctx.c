/*
 * ctx.c - the kernel layer's constants (one table: name, range, meaning)
 * and the per-point figures (kern_ctx) it derives from an hw_t.
 *
 * Invariant: kern_ctx holds only figures of the GPU (scaled as asked) and
 * the constants; the closed forms in gemm.c, attn.c and coll.c read
 * nothing else.
 */
#include "kernel.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define KC(f, lo, hi, doc) {#f, lo, hi, doc}
static const kern_const_info kc_info[KERN_NCONSTS] = {
    KC(gemm_eff, 0.3, 1.0, "saturated GEMM tile loop, fraction of the BF16 per-SM peak"),
    KC(gemm_eff_fp8, 0.3, 1.0, "the same for FP8 (per-tensor, row-wise, MX), of the FP8 peak"),
    KC(gemm_eff_fp4, 0.2, 1.0, "the same for NVFP4, of the FP4 peak"),
    KC(gemm_block_promote, 0.3, 1.0,
       "FP8 block-scaled main loop without block-scaled MMA: rate factor"),
    KC(gemm_tail, 0.0, 1.0, "share of a partial last wave that costs a whole wave"),
    KC(mem_eff, 0.3, 1.0, "fraction of HBM bandwidth streaming kernels reach"),
    KC(overlap, 0.0, 1.0, "share of the shorter of compute and memory time not hidden"),
    KC(floor_s, 0.5e-6, 30e-6, "per-kernel floor under CUDA graphs, s"),
    KC(quant_floor_s, 0.0, 30e-6, "activation-quantization kernel floor, s"),
    KC(wo_dequant, 0.2, 1.0, "weight-only INT4/INT8 GEMM main-loop rate factor"),
    KC(moe_floor_s, 0.0, 200e-6, "fused MoE: routing/permute/finalize floors, s"),
    KC(moe_passes, 0.0, 20.0, "fused MoE: element-wise passes over the routed activations"),
    KC(attn_eff, 0.2, 1.0, "prefill attention: fraction of the tensor peak"),
    KC(attn_dec_eff, 0.3, 1.0, "decode attention: fraction of HBM bandwidth at full occupancy"),
    KC(attn_split, 32.0, 8192.0, "decode attention: KV tokens per CTA (split-KV chunk)"),
    KC(attn_fill, 0.25, 16.0, "decode attention: CTAs per SM that saturate HBM"),
    KC(attn_floor_s, 0.5e-6, 60e-6, "attention per-call floor, s"),
    KC(coll_base_s, 0.0, 100e-6, "collective per-call latency, s"),
    KC(coll_hop_ll_s, 0.0, 20e-6, "collective per-step latency, LL protocol, s"),
    KC(coll_hop_ll128_s, 0.0, 20e-6, "collective per-step latency, LL128 protocol, s"),
    KC(coll_hop_simple_s, 0.0, 40e-6, "collective per-step latency, Simple protocol, s"),
    KC(coll_link_eff, 0.3, 1.5,
       "Simple-protocol ring bandwidth over the fabric's (link x hw scaleup_efficiency)"),
    KC(coll_nvls_eff, 0.3, 2.0,
       "NVLS all-reduce bus bandwidth over link x hw scaleup_nvls_efficiency"),
    KC(coll_pcie_eff, 0.2, 1.0, "fraction of PCIe bandwidth collectives reach"),
    KC(coll_custom_s, 0.0, 40e-6, "custom all-reduce per-barrier latency, s"),
    KC(coll_nic_eff, 0.2, 1.0, "fraction of NIC bandwidth across nodes"),
    KC(coll_net_s, 0.0, 200e-6, "collective per-step latency between nodes, s"),
    KC(l2_bytes_per_clk, 8.0, 256.0, "L2 bandwidth per SM, bytes per clock"),
    KC(attn_cta_s, 0.0, 20e-6, "decode attention: latency of one wave of CTAs, s"),
    KC(attn_kv0, 0.0, 8192.0, "prefill attention: a CTA's fixed work, in keys"),
    KC(coll_nvls_s, 0.0, 200e-6, "NVLS all-reduce per-call latency, s"),
    KC(launch_event_s, 0.0, 40e-6, "per-call floor of an event-timed loop without graphs, s"),
    KC(launch_python_s, 0.0, 100e-6, "per-call floor of a Python-driven timing loop, s"),
};
#undef KC

/* The struct's fields in the table's order (kern_const_ptr). */
static const size_t kc_off[KERN_NCONSTS] = {
    offsetof(kern_consts, gemm_eff),         offsetof(kern_consts, gemm_eff_fp8),
    offsetof(kern_consts, gemm_eff_fp4),     offsetof(kern_consts, gemm_block_promote),
    offsetof(kern_consts, gemm_tail),        offsetof(kern_consts, mem_eff),
    offsetof(kern_consts, overlap),          offsetof(kern_consts, floor_s),
    offsetof(kern_consts, quant_floor_s),    offsetof(kern_consts, wo_dequant),
    offsetof(kern_consts, moe_floor_s),      offsetof(kern_consts, moe_passes),
    offsetof(kern_consts, attn_eff),         offsetof(kern_consts, attn_dec_eff),
    offsetof(kern_consts, attn_split),       offsetof(kern_consts, attn_fill),
    offsetof(kern_consts, attn_floor_s),     offsetof(kern_consts, coll_base_s),
    offsetof(kern_consts, coll_hop_ll_s),    offsetof(kern_consts, coll_hop_ll128_s),
    offsetof(kern_consts, coll_hop_simple_s), offsetof(kern_consts, coll_link_eff),
    offsetof(kern_consts, coll_nvls_eff),    offsetof(kern_consts, coll_pcie_eff),
    offsetof(kern_consts, coll_custom_s),    offsetof(kern_consts, coll_nic_eff),
    offsetof(kern_consts, coll_net_s),       offsetof(kern_consts, l2_bytes_per_clk),
    offsetof(kern_consts, attn_cta_s),       offsetof(kern_consts, attn_kv0),
    offsetof(kern_consts, coll_nvls_s),      offsetof(kern_consts, launch_event_s),
    offsetof(kern_consts, launch_python_s),
};

_Static_assert(sizeof(kern_consts) == KERN_NCONSTS * sizeof(double),
               "kern_consts: one table entry per field");

const kern_const_info *kern_const_info_at(int i)
{
    return i >= 0 && i < KERN_NCONSTS ? &kc_info[i] : NULL;
}

/* Index of `name` in a table of n entries, or -1. */
static int kc_index(const kern_const_info *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return i;
    return -1;
}

int kern_const_index(const char *name)
{
    return kc_index(kc_info, KERN_NCONSTS, name);
}

double *kern_const_ptr(kern_consts *k, int i)
{
    return (double *)(void *)((char *)k + kc_off[i]);
}

void kern_consts_default(kern_consts *k)
{
    for (int i = 0; i < KERN_NCONSTS; i++)
        *kern_const_ptr(k, i) = 0.5 * (kc_info[i].lo + kc_info[i].hi);
}

int kern_consts_check(const kern_consts *k, const char **bad)
{
    for (int i = 0; i < KERN_NCONSTS; i++) {
        double v = *(const double *)(const void *)((const char *)k + kc_off[i]);
        if (!isfinite(v) || v < kc_info[i].lo || v > kc_info[i].hi) {
            *bad = kc_info[i].name;
            return -1;
        }
    }
    return 0;
}

static const kern_const_info kb_info[KERN_BE_NFIELDS] = {
    {"eff", 0.2, 2.5, "back end: main-loop / tensor rate factor"},
    {"mem", 0.2, 2.5, "back end: memory-stream (collectives: link) bandwidth factor"},
    {"floor_s", -20e-6, 200e-6, "back end: extra per-call time, s"},
    {"nosplit", 0.0, 1.0, "back end: decode attention without split-KV (0 splits, 1 none)"},
};
static const size_t kb_off[KERN_BE_NFIELDS] = {
    offsetof(kern_backend, eff), offsetof(kern_backend, mem), offsetof(kern_backend, floor_s),
    offsetof(kern_backend, nosplit)};
_Static_assert(sizeof(kern_backend) == KERN_BE_NFIELDS * sizeof(double),
               "kern_backend: one table entry per field");

const kern_const_info *kern_be_info_at(int i)
{
    return i >= 0 && i < KERN_BE_NFIELDS ? &kb_info[i] : NULL;
}

int kern_be_index(const char *field)
{
    return kc_index(kb_info, KERN_BE_NFIELDS, field);
}

double *kern_be_ptr(kern_backend *b, int i)
{
    return (double *)(void *)((char *)b + kb_off[i]);
}

const kern_backend kern_be_none = {1.0, 1.0, 0.0, 0.0};

void kern_be_default(kern_backend *b)
{
    b->eff = 1.0;
    b->mem = 1.0;
    b->floor_s = 0.0;
    b->nosplit = 0.0;
}

const kern_backend *kern_backend_find(const kern_backends *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0)
            return &t->be[i];
    return NULL;
}

static const char *const ka_names[KA_N] = {"?",      "volta", "ampere", "ada",  "hopper",
                                           "blackwell", "cdna2", "cdna3", "cdna4"};

kern_arch kern_arch_parse(const char *s)
{
    for (int i = 1; i < KA_N; i++)
        if (strcmp(s, ka_names[i]) == 0)
            return (kern_arch)i;
    return KA_UNKNOWN;
}

static const char *const kt_names[KT_N] = {"graph", "event", "python"};

int kern_timing_parse(const char *s)
{
    for (int i = 0; i < KT_N; i++)
        if (strcmp(s, kt_names[i]) == 0)
            return i;
    return -1;
}

double kern_harness_s(const kern_ctx *c, kern_timing t, double t_kernel)
{
    double f = t == KT_EVENT ? c->c.launch_event_s : t == KT_PYTHON ? c->c.launch_python_s : 0.0;
    return t_kernel > f ? t_kernel : f;
}

double kern_mem_time(const kern_ctx *c, double bytes, double ws, double reuse, double eff)
{
    double hbm = c->hbm * (eff > 0 ? eff : c->c.mem_eff);
    double hit = 0.0;
    if (reuse > 0 && c->l2 > 0) {
        hit = 2.0 - reuse * ws / c->l2;
        hit = hit < 0.0 ? 0.0 : hit > 1.0 ? 1.0 : hit;
    }
    return bytes * (hit / c->l2bw + (1.0 - hit) / hbm);
}

int kern_ctx_init(kern_ctx *ctx, const hw_t *h, const kern_consts *k, double compute,
                  double mem, double link)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->arch = kern_arch_parse(h->arch);
    if (ctx->arch == KA_UNKNOWN || h->sm_count < 1 || !(h->clock_hz > 0))
        return -1;
    ctx->c = *k;
    ctx->sms = (double)h->sm_count;
    for (int d = 0; d < HW_NDTYPES; d++)
        ctx->peak[d] = h->peak_flops[d] * compute;
    ctx->hbm = h->mem_bw_bytes_per_s * mem;
    ctx->l2 = h->l2_bytes;
    double clock = h->clock_hz * compute;
    ctx->l2bw = ctx->sms * clock * k->l2_bytes_per_clk;
    /* MUFU ex2: 16 results per clock per SM on every NVIDIA compute
     * capability from 5.0 to 10.0 (CUDA C++ Programming Guide, table
     * "Throughput of Native Arithmetic Instructions"); AMD's CUs taken as
     * the same (transcendentals at a quarter of 64 lanes). */
    ctx->exp_rate = ctx->sms * clock * 16.0;
    ctx->tile_m = h->gemm_tile_m > 0 ? (double)h->gemm_tile_m : 128.0;
    ctx->tile_n = h->gemm_tile_n > 0 ? (double)h->gemm_tile_n : 128.0;
    /* Block-scaled MMA (tcgen05.mma kind::mxf8f6f4 / mxf4nvf4, PTX ISA
     * 8.7) exists from Blackwell (sm_100) on; Hopper's wgmma has no
     * scale operand, so FP8 block scales are applied by CUDA cores
     * between K blocks (DeepGEMM README, "promotion"). */
    ctx->block_mma = ctx->arch == KA_BLACKWELL || ctx->arch == KA_CDNA4;
    ctx->link = h->scaleup_bytes_per_s * link;
    ctx->nvls = h->scaleup_nvls_efficiency > 0;
    /* per-generation fabric figures (hardware facts); the shared
     * constants coll_link_eff and coll_nvls_eff scale them */
    ctx->link_eff = h->scaleup_efficiency > 0 ? h->scaleup_efficiency : 1.0;
    ctx->nvls_eff = ctx->nvls ? h->scaleup_nvls_efficiency : 0.0;
    /* NVLink-less parts (Ada, PCIe-only scale-up under 100 GB/s) */
    ctx->pcie = ctx->arch == KA_ADA || h->scaleup_bytes_per_s < 100e9;
    ctx->nic = h->nic_bytes_per_s * link;
    ctx->mesh = ctx->arch == KA_CDNA2 || ctx->arch == KA_CDNA3 || ctx->arch == KA_CDNA4;
    ctx->domain = (double)h->scaleup_devices;
    return 0;
}
