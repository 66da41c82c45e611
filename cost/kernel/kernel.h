/*
 * kernel.h - the analytic kernel layer: GEMMs (dense, grouped, fused
 * MoE), attention (prefill, decode, MLA) and collectives as closed forms
 * in a GPU's figures.
 *
 * A kern_ctx is built once per design point from an hw_t (its SMs,
 * per-SM tensor rate per dtype, HBM bandwidth, links) and the few
 * constants that are not hardware figures (kern_consts: the fraction of
 * the per-SM peak a saturated tile loop reaches, launch floors, protocol
 * latencies), fitted to the measured kernel tables and kept in
 * configs/kernels.cfg. Every call after that is straight-line arithmetic
 * (a few ceil()s, no search, no table): an invented or scaled GPU gets a
 * prediction from its figures alone. Times are seconds; a shape the layer
 * cannot price returns a negative value (kern_* documents which).
 * Pure: no I/O, no globals, no allocation.
 */
#ifndef MADSWEEP_KERNEL_H
#define MADSWEEP_KERNEL_H

#include "../hw.h"

/* Architecture families (hw_t.arch). */
typedef enum kern_arch {
    KA_UNKNOWN = 0,
    KA_VOLTA,
    KA_AMPERE,
    KA_ADA,
    KA_HOPPER,
    KA_BLACKWELL,
    KA_CDNA2,
    KA_CDNA3,
    KA_CDNA4,
    KA_N
} kern_arch;

kern_arch kern_arch_parse(const char *s);

/* The constants that are not hardware figures. One table (kern_const_*)
 * names them with their allowed range; the values come from
 * configs/kernels.cfg, fitted by scripts/validate_kernels.py. */
typedef struct kern_consts {
    /* GEMM */
    double gemm_eff;        /* fraction of the per-SM tensor peak a saturated tile loop reaches */
    double gemm_eff_fp8;    /* the same for FP8 per-tensor / row-wise / MX, of the FP8 peak */
    double gemm_eff_fp4;    /* the same for NVFP4, of the FP4 peak */
    double gemm_block_promote; /* FP8 1x128/128x128 block scales on tensor cores without
                                  block-scaled MMA: main-loop rate factor (CUDA-core promotion) */
    double gemm_tail;       /* share of a partial last wave that costs a whole one */
    double mem_eff;         /* fraction of HBM bandwidth a streaming GEMM/kernel reaches */
    double overlap;         /* t = max(compute, memory) + overlap x min(...) */
    double floor_s;         /* per-kernel floor (launch + prologue + epilogue) under graphs */
    double quant_floor_s;   /* activation-quantization kernel floor (FP8/FP4 engine GEMMs) */
    double wo_dequant;      /* weight-only INT4/INT8: main-loop rate factor */
    /* fused MoE */
    double moe_floor_s;     /* routing, permutation and finalize kernels' floors together */
    double moe_passes;      /* element-wise passes over the routed activations */
    /* attention */
    double attn_eff;        /* prefill: fraction of the tensor peak the softmax loop reaches */
    double attn_dec_eff;    /* decode: fraction of HBM bandwidth at full occupancy */
    double attn_split;      /* decode: KV tokens one CTA streams (split-KV chunk) */
    double attn_fill;       /* decode: CTAs per SM needed to saturate HBM */
    double attn_floor_s;    /* per-call floor (KV write, RoPE, the kernel) */
    /* collectives */
    double coll_base_s;     /* per-call launch/sync latency */
    double coll_hop_ll_s;   /* per-step latency, LL */
    double coll_hop_ll128_s;
    double coll_hop_simple_s;
    double coll_link_eff;   /* fraction of link bandwidth the Simple protocol reaches */
    double coll_nvls_eff;   /* NVLS all-reduce bus bandwidth / link bandwidth */
    double coll_pcie_eff;   /* fraction of a PCIe link NCCL reaches */
    double coll_custom_s;   /* custom (one/two-shot) all-reduce per-barrier latency */
    double coll_nic_eff;    /* fraction of NIC bandwidth across nodes */
    double coll_net_s;      /* per-step latency between nodes */
    /* caches and latency */
    double l2_bytes_per_clk; /* L2 bytes per clock per SM (L2 bandwidth = SMs x clock x it) */
    double attn_cta_s;      /* decode: one wave of CTAs' dependent-load latency chain */
    double attn_kv0;        /* prefill: a CTA's prologue and epilogue, in keys' worth of work */
    double coll_nvls_s;     /* NVLS all-reduce per-call latency (multicast setup, 2 syncs) */
    /* harness floors (kern_harness_s) */
    double launch_event_s;  /* per-call floor of a loop timed by CUDA events without graphs */
    double launch_python_s; /* per-call floor of a Python-driven timing loop */
} kern_consts;

#define KERN_NCONSTS 33

/* Name, allowed range and description of constant i (0 <= i < KERN_NCONSTS). */
typedef struct kern_const_info {
    const char *name;
    double lo, hi;
    const char *doc;
} kern_const_info;

const kern_const_info *kern_const_info_at(int i);
/* Index of the constant named `name`, or -1. */
int kern_const_index(const char *name);
double *kern_const_ptr(kern_consts *k, int i);
/* Defaults: the middle of each range (a prior, not a fit). */
void kern_consts_default(kern_consts *k);
/* 0 when every constant lies in its range; else -1 and *bad names it. */
int kern_consts_check(const kern_consts *k, const char **bad);

/* A kernel back end (the library or engine path that runs the kernel:
 * cuBLAS, CUTLASS, DeepGEMM, Triton, FlashAttention-3, TensorRT-LLM's
 * FMHA/XQA, trtllm-gen, NCCL, an engine's custom all-reduce, ...). Its
 * factors apply to every GPU (configs/kernels.cfg, list `backends`, each
 * with the engine code it was read from); NULL in a kernel = the generic
 * kernel (factors 1, 1, 0). What each factor scales, per family:
 *   GEMM, fused MoE: eff x the main-loop rate, mem x the streaming
 *     bandwidth, + floor_s;
 *   attention: eff x the prefill tensor rate, mem x the decode KV stream,
 *     + floor_s; nosplit: decode without split-KV;
 *   collectives: mem x the link bandwidth, eff x the per-step and
 *     per-barrier latencies, + floor_s. */
typedef struct kern_backend {
    double eff;
    double mem;
    double floor_s;
    double nosplit; /* decode attention: 0 the kernel splits each sequence's KV over CTAs
                       (split-KV, flash-decoding), 1 one CTA per sequence and KV head */
} kern_backend;

#define KERN_BE_NFIELDS 4
/* Name, range and meaning of back-end field i (0 <= i < KERN_BE_NFIELDS). */
const kern_const_info *kern_be_info_at(int i);
int kern_be_index(const char *field);
double *kern_be_ptr(kern_backend *b, int i);
/* The neutral back end (1, 1, 0, 0). */
void kern_be_default(kern_backend *b);
extern const kern_backend kern_be_none;
/* A per-call floor plus a back end's (negative: a leaner wrapper), never below 0. */
static inline double kern_floor(double generic, const kern_backend *be)
{
    double f = generic + be->floor_s;
    return f > 0.0 ? f : 0.0;
}

/* The catalogue's back ends by name (configs/kernels.cfg `backends`). */
#define KERN_MAX_BE 128
#define KERN_BE_NAME 48
typedef struct kern_backends {
    int n;
    char name[KERN_MAX_BE][KERN_BE_NAME];
    kern_backend be[KERN_MAX_BE];
} kern_backends;

/* The back end named `name`, or NULL. */
const kern_backend *kern_backend_find(const kern_backends *t, const char *name);

/* Figures of one GPU the closed forms read, precomputed per point. */
typedef struct kern_ctx {
    kern_consts c;
    kern_arch arch;
    double sms;
    double peak[HW_NDTYPES]; /* per device, FLOP/s (0: none) */
    double hbm;              /* bytes/s */
    double l2;               /* bytes */
    double l2bw;             /* L2 bytes/s (SMs x clock x l2_bytes_per_clk) */
    double exp_rate;         /* softmax exponentials per second (SFU) */
    double tile_m, tile_n;
    int block_mma;           /* tensor cores with block-scaled MMA (Blackwell) */
    double link;             /* scale-up bytes/s per device, one direction */
    int nvls;                /* the scale-up switch can reduce (NVLink SHARP) */
    double link_eff;         /* the fabric's ring efficiency (hw scaleup_efficiency) */
    double nvls_eff;         /* NCCL's NVLS efficiency of the switch generation
                                (hw scaleup_nvls_efficiency, from nccl tuning.cc) */
    int pcie;                /* scale-up over PCIe (no NVLink) */
    int mesh;                /* point-to-point scale-up links (AMD Infinity Fabric):
                                n GPUs of a domain reach (n-1)/(domain-1) of the link */
    double domain;           /* devices per scale-up domain */
    double nic;              /* NIC bytes/s per device */
} kern_ctx;

/* How a measurement was timed (a fact of the harness, not of the GPU):
 * KT_GRAPH kernel time (CUDA-graph replay, CUPTI/profiler kernel time);
 * KT_EVENT a loop of launches between CUDA events, no graph (nccl-tests,
 * eager engine calls); KT_PYTHON a Python-driven loop (PyTorch benchmark
 * scripts, per-call events). A model's own kernels run as KT_GRAPH. */
typedef enum kern_timing { KT_GRAPH = 0, KT_EVENT, KT_PYTHON, KT_N } kern_timing;

int kern_timing_parse(const char *s);

/* Builds ctx from h and k, scaling compute peaks by `compute`, HBM by
 * `mem` and links by `link` (1: the catalogue's GPU). Returns -1 when h
 * lacks the kernel figures (sm_count, arch). */
int kern_ctx_init(kern_ctx *ctx, const hw_t *h, const kern_consts *k, double compute,
                  double mem, double link);

/* GEMM data formats and scaling. */
typedef enum kern_fmt {
    KF_BF16 = 0,   /* BF16/FP16 in, BF16 out */
    KF_FP8,        /* FP8 E4M3, per-tensor or row-wise scales */
    KF_FP8_BLOCK,  /* FP8, 1x128 activation and 128x128 weight scales */
    KF_MXFP8,      /* FP8, 1x32 e8m0 scales */
    KF_NVFP4,      /* FP4 e2m1, 16-element e4m3 scales */
    KF_INT8_WO,    /* INT8 weights, BF16 activations and math */
    KF_INT4_WO,    /* INT4 weights, BF16 activations and math */
    KF_INT8,       /* INT8 W8A8 (SmoothQuant) */
    KF_MXFP4_W4A16,/* MXFP4 weights, BF16 activations */
    KF_MXFP4_W4A8, /* MXFP4 weights, MXFP8 activations (FP8 math) */
    KF_N
} kern_fmt;

int kern_fmt_parse(const char *s);

/* A GEMM or grouped GEMM: `groups` independent [m x k] x [k x n]
 * products (rows per group m). quant: the time includes quantizing the
 * BF16 activation to the format (as engine Linear layers do). */
typedef struct kern_gemm {
    double m, n, k, groups;
    kern_fmt fmt;
    int quant;
    double reuse; /* copies of the operands a benchmark cycles through (0: cold, as in a
                     model's layer sequence): resident in L2 when they fit */
    const kern_backend *be; /* NULL: generic */
} kern_gemm;

double kern_gemm_time(const kern_ctx *c, const kern_gemm *g);

/* Time to stream `bytes` whose working set is `ws` bytes, cycled over
 * `reuse` copies (0: cold): from L2 when reuse x ws fits in it (fully up
 * to the L2 size, none from twice it, linear between), else from HBM at
 * mem_eff of its bandwidth (`eff` given instead when > 0). */
double kern_mem_time(const kern_ctx *c, double bytes, double ws, double reuse, double eff);

/* One fused MoE layer on one GPU (routing, permutation, gated FC1 with
 * its activation, FC2, finalize), balanced routing: `tokens` enter, each
 * goes to `topk` of `experts` experts; the GPU holds experts/ep of them,
 * each with inter/tp of the intermediate size. */
typedef struct kern_moe {
    double tokens, hidden, inter, topk, experts, tp, ep;
    kern_fmt fmt;
    int gated; /* 1: FC1 is gate+up (2 x inter); 0: one projection */
    const kern_backend *be;
} kern_moe;

double kern_moe_time(const kern_ctx *c, const kern_moe *m);

/* Attention of one layer on one GPU. Decode: `batch` sequences each with
 * `ctx` cached tokens and one new; prefill: `batch` prompts of `seq`
 * tokens with `ctx` cached before them. window > 0: sliding window.
 * MLA (DeepSeek): heads_kv 1, head_dim the latent + rope width (576) and
 * v_dim the latent (512) in decode; in prefill the decompressed heads
 * (qk 192, v 128). kv_bytes: bytes per KV element (2 BF16, 1 FP8);
 * fp8_math: prefill math on the FP8 tensor cores. */
typedef struct kern_attn {
    int decode;
    double batch, seq, ctx, heads_q, heads_kv, head_dim, v_dim, window, kv_bytes;
    int fp8_math;
    int mla;
    int full; /* prefill without the causal mask (every query sees every key) */
    double reuse; /* as kern_gemm's: 1 when a benchmark replays the same KV */
    const kern_backend *be;
} kern_attn;

double kern_attn_time(const kern_ctx *c, const kern_attn *a);

/* A measured call's time under harness t: the kernel time t_kernel, but
 * never below the harness's per-call floor (launch_event_s, launch_python_s;
 * none under KT_GRAPH). */
double kern_harness_s(const kern_ctx *c, kern_timing t, double t_kernel);

/* Collectives. */
typedef enum kern_coll_op { KC_ALL_REDUCE = 0, KC_ALL_GATHER, KC_REDUCE_SCATTER,
                            KC_ALL_TO_ALL, KC_NOPS } kern_coll_op;
typedef enum kern_coll_algo { KC_AUTO = 0, KC_RING, KC_TREE, KC_NVLS, KC_ONESHOT,
                              KC_TWOSHOT, KC_CUSTOM, KC_NALGOS } kern_coll_algo;
typedef enum kern_proto { KP_AUTO = 0, KP_LL, KP_LL128, KP_SIMPLE, KP_N } kern_proto;

int kern_coll_op_parse(const char *s);
int kern_coll_algo_parse(const char *s);
int kern_proto_parse(const char *s);

/* `bytes`: nccl-tests' size (all-reduce: the buffer; all-gather: the
 * gathered output; reduce-scatter: the full input; all-to-all: one
 * rank's send buffer). gpus in all, gpus_per_node of them per node.
 * KC_AUTO and KP_AUTO take the fastest the library would choose;
 * KC_CUSTOM: an engine's custom all-reduce (one-shot or two-shot, the
 * faster, else NCCL). */
typedef struct kern_coll {
    kern_coll_op op;
    kern_coll_algo algo;
    kern_proto proto;
    double bytes, gpus, gpus_per_node;
    const kern_backend *be;
    double elt_bytes; /* bytes per element (0: 2, FP16/BF16); NVLS cannot reduce 1-byte
                         types (NCCL src/include/device.h ncclNvlsSupported) */
} kern_coll;

double kern_coll_time(const kern_ctx *c, const kern_coll *x);

#endif
