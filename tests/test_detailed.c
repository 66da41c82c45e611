/*
 * test_detailed.c - hand-derived unit tests of the detailed fidelity.
 *
 * Each expected value is worked out in the comment beside it from the
 * published formula (Narayanan et al. 2021, Rajbhandari et al. 2020,
 * ring all-reduce, 1F1B), on numbers small or famous enough to check on
 * paper. The end-to-end cases load real point files through the loader.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../cost/detailed/dlrm/dlrm.h"
#include "../cost/detailed/llm/llm.h"
#include "../driver/load/load.h"
#include "oracle.h"
#include "unit.h"

static void test_megatron_flops(void)
{
    /* Narayanan et al. 2021 Table 1, first row: B 512, s 2048, l 24,
     * h 2304, V 51200. 96 B s l h^2 = 96*512*2048*24*5308416
     * = 1.28247e16 (exactly 12824703626379264); the bracket is
     * 1 + 2048/13824 + 51200/884736 = 1.2060185185...; product
     * 1.546683e16 FLOPs. At the paper's 137 TFLOP/s on 32 GPUs that is
     * 1.5467e16 / (32 * 137e12) = 3.528 s, the iteration time of the
     * calibration row NAR21-T1-01. */
    double f = oracle_megatron_flops(512, 2048, 24, 2304, 51200);
    double bracket = 1.0 + 2048.0 / 13824.0 + 51200.0 / 884736.0;
    UNIT_ASSERT_CLOSE(f, 12824703626379264.0 * bracket, 1e-12);
    UNIT_ASSERT_CLOSE(f / (32 * 137e12), 3.528, 1e-3);

    /* Model FLOPs without recomputation: 3 x forward = 72 B s l h^2
     * (1 + s/6h + V/12lh) for ffn = 4h, MHA, no position table (the
     * forward count includes the full, non-causal, attention scores). */
    model_t m = unit_gpt(24, 2304, 24, 2048, 51200);
    double fwd = detailed_model_flops(&m, false);
    double mf = 72.0 * 2048 * 24 * 2304.0 * 2304.0 *
                (1.0 + 2048.0 / (6 * 2304.0) + 51200.0 / (12 * 24 * 2304.0));
    UNIT_ASSERT_CLOSE(3.0 * fwd, mf, 1e-12);
    /* eq. (3) = 4/3 of it when V/16lh replaces V/12lh: check at V = 0 */
    model_t m0 = unit_gpt(24, 2304, 24, 2048, 0);
    UNIT_ASSERT_CLOSE(oracle_megatron_flops(1, 2048, 24, 2304, 0),
                      4.0 * detailed_model_flops(&m0, false), 1e-12);
}

static void test_bubble(void)
{
    /* 1F1B: (p-1)/(m+p-1); p 8, m 24: 7/31. Interleaved v 2: 7/55. */
    UNIT_ASSERT_CLOSE(oracle_bubble_fraction(8, 24, 1), 7.0 / 31.0, 1e-15);
    UNIT_ASSERT_CLOSE(oracle_bubble_fraction(8, 24, 2), 7.0 / 55.0, 1e-15);
    UNIT_ASSERT_CLOSE(oracle_bubble_fraction(1, 24, 1), 0.0, 1e-15);
    /* the fidelity's closed-form schedule (llm/pipeline.c) on p uniform
     * stages of time T: its idle share is the oracle's fraction */
    static const int64_t pmv[3][3] = {{8, 24, 1}, {8, 24, 2}, {4, 7, 3}};
    for (int i = 0; i < 3; i++) {
        double p = (double)pmv[i][0], m = (double)pmv[i][1], v = (double)pmv[i][2], T = 0.5;
        double t = dt_pipe_schedule_time(T, p * T, m, v);
        UNIT_ASSERT_CLOSE((t - m * T) / t, oracle_bubble_fraction(pmv[i][0], pmv[i][1],
                                                                  pmv[i][2]), 1e-14);
    }
}

static void test_zero_memory(void)
{
    /* Rajbhandari et al. 2020, Figure 1: Psi = 7.5B, N = 64, K = 12:
     * baseline (2+2+12) Psi = 120 GB; Pos 2Psi + 2Psi + 12Psi/N
     * = 31.4 GB; Pos+g 2Psi + 14Psi/N = 16.6 GB; Pos+g+p 16Psi/N
     * = 1.875 GB. */
    double psi = 7.5e9;
    UNIT_ASSERT_CLOSE(oracle_zero_bytes(psi, 0, 64), 120e9, 1e-12);
    UNIT_ASSERT_CLOSE(oracle_zero_bytes(psi, 1, 64), 30e9 + 90e9 / 64, 1e-12);
    UNIT_ASSERT_CLOSE(oracle_zero_bytes(psi, 2, 64), 15e9 + 105e9 / 64, 1e-12);
    UNIT_ASSERT_CLOSE(oracle_zero_bytes(psi, 3, 64), 1.875e9, 1e-12);
}

static void test_gemm_efficiency(void)
{
    /* Table (9, 0.2), (11, 0.8): 1e10 FLOPs sits halfway -> 0.5;
     * clamped outside. A 1e10-FLOP GEMM (M=N=K=1710 roughly) takes
     * 1e10 / (100e12 * 0.5) = 0.2 ms when compute-bound. */
    hw_t h = unit_tidy_hw();
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency(&h, 1e10), 0.5, 1e-12);
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency(&h, 1e6), 0.2, 1e-12);
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency(&h, 1e13), 0.8, 1e-12);
    /* M=N=K=4096: 1.374e11 FLOPs at 0.8 -> 1.718 ms; bytes 3*4096^2*2
     * = 100.7 MB at 0.5 TB/s = 0.2 ms: compute-bound. */
    double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    UNIT_ASSERT_CLOSE(hw_gemm_time(&h, HW_BF16, 4096, 4096, 4096, 1),
                      flops / (100e12 * 0.8), 1e-12);
    /* M=N=4096, K=8: memory-bound: bytes 2*(2*4096*8 + 4096^2) */
    double bytes = 2.0 * (2.0 * 4096 * 8 + 4096.0 * 4096.0);
    UNIT_ASSERT_CLOSE(hw_gemm_time(&h, HW_BF16, 4096, 4096, 8, 1), bytes / 0.5e12,
                      1e-12);
}

static void test_eval_memory_per_stage(void)
{
    /* Mixed-precision Adam per device: weights 2, grads 2, optimizer
     * 12 bytes per local parameter, sharded over dp per ZeRO stage. */
    for (int64_t z = 0; z <= 3; z++) {
        point_t p = unit_tidy_point(1, 1, 8, z);
        engine e;
        engine_init(&e, false);
        result_t r;
        CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        engine_free(&e);
        double total, dev;
        detailed_params(&p.model, &p.task.detailed, &total, &dev);
        /* tp = pp = 1: every parameter is local */
        UNIT_ASSERT_CLOSE(dev, total, 1e-12);
        /* ZeRO 3 (FSDP) also holds two layers' gathered parameters (2
         * bytes) and one layer's unsharded gradients (2 bytes): 6 x 12
         * h^2 = 6 x 12582912 bytes */
        double work = z == 3 ? 6.0 * 12.0 * 1024.0 * 1024.0 : 0.0;
        UNIT_ASSERT_CLOSE(r.mem_weights_bytes_per_device + r.mem_grads_bytes_per_device +
                              r.mem_optimizer_bytes_per_device,
                          oracle_zero_bytes(dev, z, 8) + work, 1e-12);
        CU_ASSERT(r.iteration_time_s > 0);
        CU_ASSERT(r.mfu > 0 && r.mfu < 1);
    }
    /* 12 layers of 12 h^2 plus the 32000 x 1024 table: 8 * 12 * 1024^2
     * + 32000 * 1024 = 100663296 + 32768000 = 133431296 parameters */
    point_t p = unit_tidy_point(1, 1, 8, 0);
    double total, dev;
    detailed_params(&p.model, &p.task.detailed, &total, &dev);
    UNIT_ASSERT_CLOSE(total, 133431296.0, 1e-15);
}

static void test_eval_activation_memory(void)
{
    /* Korthikanti et al. 2022, tp = 1, flash attention, one micro-batch
     * in flight (pp = 1), no vocabulary (no logits): per layer s b h 34
     * bytes of 16-bit activations; 8 layers of s = 1024, b = 1,
     * h = 1024: 8 * 34 * 2^20 = 285212672. 32-bit activations (tf32)
     * take twice that. Full recompute keeps 2 s b h per layer plus one
     * layer rebuilt without recompute: (8 * 2 + 34) * 2^20. */
    point_t p = unit_tidy_point(1, 1, 8, 0);
    p.model.vocab = 0;
    p.model.d.arch = MODEL_ARCH_VIT;
    p.model.d.dropout = 1; /* Korthikanti's GPT keeps dropout masks */
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_activations_bytes_per_device, 285212672.0, 1e-12);
    /* without dropout the two masks (h bytes each) go: 32 s b h */
    p.model.d.dropout = 0;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_activations_bytes_per_device, 8.0 * 32.0 * 1048576.0, 1e-12);
    /* SwiGLU with ffn = 4h keeps gate, up and product (6 f = 24 h
     * instead of GeLU's 4 f = 16 h); grouped-query attention with 4 of
     * 16 heads keeps k, v at a quarter (1 h instead of 4 h): 8 + 4 + 1 +
     * 24 = 37 s b h without dropout */
    p.model.mlp = MODEL_MLP_SWIGLU;
    p.model.kv_heads = 4;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_activations_bytes_per_device, 8.0 * 37.0 * 1048576.0, 1e-12);
    p.model.mlp = MODEL_MLP_GELU;
    p.model.kv_heads = 0;
    p.model.d.dropout = 1;
    p.task.detailed.dtype = HW_TF32;
    double tf32 = p.system.hw.peak_flops[HW_TF32];
    p.system.hw.peak_flops[HW_TF32] = p.system.hw.peak_flops[HW_BF16] / 2; /* has TF32 */
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_activations_bytes_per_device, 2.0 * 285212672.0, 1e-12);
    p.system.hw.peak_flops[HW_TF32] = tf32;
    p.task.detailed.dtype = HW_BF16;
    p.task.detailed.recompute = TASK_RECOMPUTE_FULL;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_activations_bytes_per_device, 50.0 * 1048576.0, 1e-12);
    engine_free(&e);
}

static void test_eval_fsdp_exposure(void)
{
    /* ZeRO 3 overlapped, one layer prefetched ahead, compute-bound (8
     * devices in one node: a layer's 25 MB gather takes ~0.22 ms, its
     * forward ~0.4 ms): per micro-batch the first gather of the forward
     * and of the backward stay exposed, and once per iteration the last
     * reduce-scatter before the optimizer. Per-layer times from the
     * reported totals: all-gathers 2 per layer and micro-batch,
     * reduce-scatters 1. */
    point_t p = unit_tidy_point(1, 1, 8, 3);
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    engine_free(&e);
    double mm = 16.0, nl = 8.0;
    double ag = r.comm_allgather_s / (2.0 * mm * nl), rs = r.comm_reducescatter_s / (mm * nl);
    CU_ASSERT(ag > 0 && rs > 0);
    UNIT_ASSERT_CLOSE(r.iteration_time_s - r.compute_gemm_s, mm * 2.0 * ag + rs, 1e-9);
}

static void test_eval_pipeline(void)
{
    /* Same stage time T with v = 1 and v = 2 except for the p2p count:
     * bubble_s = (p-1) T / v. With vocab 0 stages are uniform, so
     * bubble(v=1) / bubble(v=2) = 2 up to the doubled p2p per chunk. */
    point_t p = unit_tidy_point(1, 4, 2, 1);
    p.model.vocab = 0;
    p.model.d.arch = MODEL_ARCH_VIT;
    engine e;
    engine_init(&e, false);
    result_t r1, r2;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r1, NULL), STATUS_OK);
    p.task.detailed.vpp = 2;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r2, NULL), STATUS_OK);
    engine_free(&e);
    /* with p2p a small part of a stage, interleaving halves the bubble
     * to within the sends it adds */
    double ratio = r1.pipeline_bubble_s / r2.pipeline_bubble_s;
    CU_ASSERT(ratio > 1.9 && ratio < 2.05);
    CU_ASSERT(r2.iteration_time_s < r1.iteration_time_s);
}

/* vpp = "auto" (train/tune.c dt_tune_vpp): the fastest of the interleavings
 * the split allows, each evaluated on its own (8 layers on pp 4: vpp 1
 * or 2, as 3 chunks per stage would leave a chunk without a layer), and
 * vpp 1 without a pipeline or with GPipe. */
static void test_vpp_auto(void)
{
    point_t p = unit_tidy_point(1, 4, 2, 1);
    engine e;
    engine_init(&e, false);
    result_t r, ra;
    double best = 0.0;
    int64_t bestv = 0;
    for (int64_t v = 1; v <= 3; v++) {
        p.task.detailed.vpp = v;
        status_code rc = eval_point(&p, &e, &r, NULL);
        CU_ASSERT_EQUAL(rc, v <= 2 ? STATUS_OK : STATUS_INFEASIBLE_SHAPE);
        if (rc == STATUS_OK && (bestv == 0 || r.iteration_time_s < best)) {
            best = r.iteration_time_s;
            bestv = v;
        }
    }
    p.task.detailed.vpp = 0;
    p.task.detailed.vpp_auto = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &ra, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(ra.vpp_resolved, bestv);
    UNIT_ASSERT_CLOSE(ra.iteration_time_s, best, 1e-12);
    /* with micro_batch = "auto" too: no slower than either alone */
    p.task.detailed.micro_batch_auto = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT(r.iteration_time_s <= ra.iteration_time_s * (1 + 1e-12));
    p.task.detailed.schedule = TASK_SCHEDULE_GPIPE;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r.vpp_resolved, 1);
    point_t q = unit_tidy_point(1, 1, 8, 1);
    q.task.detailed.vpp_auto = true;
    CU_ASSERT_EQUAL(eval_point(&q, &e, &r, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r.vpp_resolved, 1);
    engine_free(&e);
}

static void test_eval_uneven_pipeline(void)
{
    /* 12 layers on 8 stages (the idealized stack splits layers alone):
     * 12 / 8 = 1 rest 4, so stages 0-3 hold 2 layers, 4-7 one. The
     * slowest stage sets the pace as with 16 layers (2 per stage); the
     * bubble is the others' fill and drain: (4 x 2 + 4 x 1 - 2) = 10
     * layer times against (8 x 2 - 2) = 14, up to the sends. */
    point_t p = unit_tidy_point(1, 8, 1, 1);
    p.model.vocab = 0;
    p.model.d.arch = MODEL_ARCH_VIT;
    p.model.layers = 12;
    engine e;
    engine_init(&e, false);
    result_t r12, r16;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r12, NULL), STATUS_OK);
    p.model.layers = 16;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r16, NULL), STATUS_OK);
    engine_free(&e);
    double ratio = r12.pipeline_bubble_s / r16.pipeline_bubble_s;
    CU_ASSERT(fabs(ratio - 10.0 / 14.0) < 0.02);
    /* the first stage holds 2 layers either way: same activations */
    UNIT_ASSERT_CLOSE(r12.mem_activations_bytes_per_device,
                      r16.mem_activations_bytes_per_device, 1e-12);
}

static void test_eval_infeasible_memory(void)
{
    /* 175B parameters on 8 devices of 80 GB without sharding: 16 bytes
     * per parameter = 2.8 TB per device does not fit. */
    point_t p = unit_tidy_point(1, 1, 8, 0);
    p.model = unit_gpt(96, 12288, 96, 2048, 51200);
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_MEMORY);
    CU_ASSERT_EQUAL(r.status, STATUS_INFEASIBLE_MEMORY);
    CU_ASSERT(r.mem_total_bytes_per_device > 80e9);
    CU_ASSERT(r.mem_optimizer_bytes_per_device > 12 * 170e9);
    engine_free(&e);
}

/* eval.c's list of integer figures is the table's (result.c): every
 * RESULT_I64 field and no other, so that the NaN initialisation leaves
 * every count 0 and no double 0; and a point's counts come out >= 0
 * (a count left with NaN's bits would read 9.2e18). */
static void test_eval_int_figures(void)
{
    size_t n = 0;
    for (const size_t *o = eval_int_figures(); *o != (size_t)-1; o++) {
        n++;
        const result_field *f = NULL;
        for (size_t i = 0; i < result_nfields; i++)
            if (result_fields[i].offset == *o)
                f = &result_fields[i];
        CU_ASSERT(f != NULL && f->type == RESULT_I64);
    }
    size_t ints = 0;
    for (size_t i = 0; i < result_nfields; i++)
        ints += result_fields[i].type == RESULT_I64;
    CU_ASSERT_EQUAL(n, ints);
    point_t p = unit_tidy_point(1, 1, 8, 0);
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    for (const size_t *o = eval_int_figures(); *o != (size_t)-1; o++) {
        int64_t v;
        memcpy(&v, (const char *)&r + *o, sizeof v);
        CU_ASSERT(v >= 0 && v < (INT64_C(1) << 53));
    }
    engine_free(&e);
}

static void test_eval_rules(void)
{
    point_t p = unit_tidy_point(2, 1, 4, 0);
    const char *where = NULL;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_OK);
    p.task.detailed.dp = 3; /* 2 * 3 != 8 devices */
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_PRODUCT);
    p = unit_tidy_point(2, 1, 4, 0);
    p.task.detailed.ep = 2; /* not an MoE model */
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_STRATEGY);
    /* a library caller's huge counts and overflowing products are
     * refused by the check, before any loop or product */
    p = unit_tidy_point(2, 1, 4, 0);
    p.model.layers = INT64_MAX;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
    p = unit_tidy_point(2, 1, 4, 0);
    p.task.detailed.tp = INT64_C(1) << 40;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
    p = unit_tidy_point(2, 1, 4, 0);
    p.task.detailed.micro_batch = INT64_C(1) << 30;
    p.task.detailed.dp = INT64_C(1) << 20;
    p.task.detailed.grad_accum = INT64_C(1) << 20;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
    /* 4 layers cannot fill 8 stages */
    p = unit_tidy_point(1, 8, 1, 0);
    p.model.layers = 4;
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_SHAPE);
    engine_free(&e);
}

/* head_dim: the default (hidden / heads) changes nothing; Qwen3-32B's
 * explicit 128 (Qwen/Qwen3-32B config.json) gives the model card's
 * 32.8B parameters, 31.2B without the embeddings. */
static void test_head_dim(void)
{
    point_t p = unit_tidy_point(1, 1, 1, 0);
    engine e;
    engine_init(&e, false);
    result_t r0, r1;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r0, NULL), STATUS_OK);
    p.model.d.head_dim = p.model.hidden / p.model.heads;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r1, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r0.iteration_time_s, r1.iteration_time_s);
    engine_free(&e);

    model_t q = unit_gpt(64, 5120, 64, 4096, 151936);
    q.kv_heads = 8;
    q.ffn = 25600;
    q.mlp = MODEL_MLP_SWIGLU;
    q.d.untied_embeddings = true;
    q.d.head_dim = 128;
    task_detailed_t t;
    memset(&t, 0, sizeof t);
    t.tp = t.pp = t.dp = 1;
    double total, dev;
    detailed_params(&q, &t, &total, &dev);
    CU_ASSERT(fabs(total / 1e9 - 32.8) < 0.05);
    CU_ASSERT(fabs((total - 2.0 * 151936.0 * 5120.0) / 1e9 - 31.2) < 0.05);
}

static void test_eval_moe_and_inference(void)
{
    /* Mixtral-like MoE with 8 experts, top-2, ep 4 on 8 devices: expert
     * all-to-all appears, and the expert parameters are split by ep. */
    point_t p = unit_tidy_point(1, 1, 8, 1);
    p.model.d.experts = 8;
    p.model.d.top_k = 2;
    p.task.detailed.ep = 4;
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT(r.comm_alltoall_s > 0);
    double total, dev;
    detailed_params(&p.model, &p.task.detailed, &total, &dev);
    /* per layer 8 experts x 2 x 1024 x 4096 = 67.1M of which 1/4 local */
    UNIT_ASSERT_CLOSE(total - dev, 8 * 0.75 * 8 * 2 * 1024.0 * 4096.0, 1e-12);

    /* On one device (no data-parallel or tensor-parallel traffic, one
     * stage) the iteration is all compute: the engine's replay of the
     * last backward must start where the closed-form schedule puts it,
     * MoE layers included (grad_accum 1 makes any offset show fully). */
    p = unit_tidy_point(1, 1, 1, 0);
    p.model.d.experts = 8;
    p.model.d.top_k = 2;
    p.task.detailed.global_batch = 1;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.iteration_time_s, r.compute_gemm_s, 1e-12);

    /* Inference (the idealized serving engine, static batch of 4):
     * prefill then decode; TPOT is memory-bound (weights and KV cache
     * streamed): at least bytes / bandwidth; the output rate counts the
     * prefill: 4 x 128 tokens over TTFT + 127 TPOT. */
    p = unit_tidy_point(1, 1, 1, 0);
    p.system.devices = 1;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.kind = TASK_INFERENCE;
    p.task.detailed.micro_batch = 4;
    p.task.detailed.global_batch = 0;
    p.task.detailed.decode_tokens = 128;
    p.task.detailed.scheduler = TASK_SCHED_STATIC;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    detailed_params(&p.model, &p.task.detailed, &total, &dev);
    CU_ASSERT(r.tpot_s >= 2.0 * dev / 1e12);
    CU_ASSERT(r.ttft_s > 0);
    UNIT_ASSERT_CLOSE(r.tokens_per_s, 4.0 * 128.0 / (r.ttft_s + 127.0 * r.tpot_s), 1e-12);
    CU_ASSERT(r.mem_kv_cache_bytes_per_device > 0);
    engine_free(&e);
}

static void test_layout_and_hybrid_sharding(void)
{
    CU_ASSERT_EQUAL(detailed_layout_parse("tp-cp-dp-pp"), 0);
    CU_ASSERT(detailed_layout_parse("tp-cp-pp-dp") > 0);
    CU_ASSERT(detailed_layout_parse("tp-dp-dp-pp") < 0);
    /* 64 devices in nodes of 8, pp 8 x dp 8, no overlap, ZeRO 0: with
     * the default layout the dp groups sit inside a node (stride 1, 100
     * GB/s); "tp-cp-pp-dp" puts them across nodes (stride 8, 10 GB/s),
     * so the same gradient all-reduce costs more. */
    point_t p = unit_tidy_point(1, 8, 8, 0);
    p.task.detailed.overlap_dp_comm = false;
    engine e;
    engine_init(&e, false);
    result_t in_node, across;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &in_node, NULL), STATUS_OK);
    p.task.detailed.layout = detailed_layout_parse("tp-cp-pp-dp");
    CU_ASSERT_EQUAL(eval_point(&p, &e, &across, NULL), STATUS_OK);
    CU_ASSERT(across.comm_allreduce_s > 5.0 * in_node.comm_allreduce_s);
    CU_ASSERT(across.iteration_time_s > in_node.iteration_time_s);

    /* FSDP over 64 replicas vs hybrid sharding in groups of 8: weights
     * 2 Psi / 64 vs 2 Psi / 8 per device, plus the same two gathered
     * layers (2 x 2 x 12 h^2 bytes) in both. */
    double gathered = 4.0 * 12.0 * 1024.0 * 1024.0;
    p = unit_tidy_point(1, 1, 64, 3);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &in_node, NULL), STATUS_OK);
    p.task.detailed.shard_degree = 8;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &across, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(across.mem_weights_bytes_per_device - gathered,
                      8.0 * (in_node.mem_weights_bytes_per_device - gathered), 1e-12);
    p.task.detailed.shard_degree = 5; /* does not divide 64 */
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_STRATEGY);
    engine_free(&e);
}

static void test_auto(void)
{
    /* every candidate either applies (and then checks) or is refused */
    const eval_ops *ops = eval_ops_of(EVAL_DETAILED);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ops);
    int64_t n = ops->auto_count(), ok = 0;
    CU_ASSERT(n > 1000);
    for (int64_t i = 0; i < n; i++) {
        point_t p = unit_tidy_point(1, 1, 64, 0);
        if (ops->auto_apply(&p, i, 1024) != STATUS_OK)
            continue;
        ok++;
        CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
        CU_ASSERT_EQUAL(p.task.detailed.tp * p.task.detailed.pp * p.task.detailed.dp *
                            p.task.detailed.cp, 64);
        CU_ASSERT_EQUAL(p.task.detailed.global_batch, 1024);
    }
    CU_ASSERT(ok > 100);
    point_t p = unit_tidy_point(1, 1, 64, 0);
    CU_ASSERT_NOT_EQUAL(ops->auto_apply(&p, n, 1024), STATUS_OK);
    /* a stack that runs ZeRO 0 and 1 only (Megatron-Core's distributed
     * optimizer): auto offers no ZeRO 2 or 3, and still ZeRO 0 and 1 */
    int64_t z01 = 0, z23 = 0;
    for (int64_t i = 0; i < n; i++) {
        point_t q = unit_tidy_point(1, 1, 64, 0);
        q.stack.zero_stages = 0x3u;
        if (ops->auto_apply(&q, i, 1024) != STATUS_OK)
            continue;
        if (q.task.detailed.zero_stage >= 2)
            z23++;
        else
            z01++;
    }
    CU_ASSERT_EQUAL(z23, 0);
    CU_ASSERT(z01 > 100 && z01 < ok);
}

/* Candidate index of degree tuple (tp, pp, cp, ep) with option o. */
static int64_t auto_index(int64_t tp, int64_t pp, int64_t cp, int64_t ep, int64_t o)
{
    int64_t tuples, nopt;
    detailed_auto_factors(&tuples, &nopt);
    for (int64_t u = 0; u < tuples; u++) {
        task_detailed_t t;
        CU_ASSERT(detailed_auto_candidate(u * nopt, &t) >= 0);
        if (t.tp == tp && t.pp == pp && t.cp == cp && t.ep == ep)
            return u * nopt + o;
    }
    return -1;
}

/* The published recipes are candidates (cost/detailed/auto.c): TP16+
 * inside an NVL72 domain and not across 8-GPU nodes, pp 12 (Nemotron-4
 * 340B's 96 layers), cp 16 on a 128k sequence (8k tokens per rank) but
 * not on an 8k one, no pipeline of fewer than 2 layers per stage, and
 * vpp "auto" (option 1: the fastest interleaving, 96 / 12 = 8 layers a
 * stage: 2, 4 or 8 chunks of equal size). */
static void test_auto_recipes(void)
{
    const eval_ops *ops = eval_ops_of(EVAL_DETAILED);
    point_t p = unit_tidy_point(1, 1, 72, 0);
    p.model = unit_gpt(96, 8192, 64, 8192, 32000);
    p.system.devices_per_node = 72;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    point_t q = p;
    int64_t k = auto_index(16, 1, 1, 1, 0);
    CU_ASSERT_FATAL(k >= 0);
    CU_ASSERT_EQUAL(ops->auto_apply(&q, k, 72 * 8), STATUS_INVALID_PRODUCT); /* 16 ! | 72 */
    p.system.devices = 144;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, k, 144), STATUS_OK);
    CU_ASSERT_EQUAL(q.task.detailed.tp, 16);
    CU_ASSERT_EQUAL(q.task.detailed.dp, 9);
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, auto_index(64, 1, 1, 1, 0), 144), STATUS_INVALID_PRODUCT);
    point_t n8 = p; /* the same devices in nodes of 8 */
    n8.system.devices_per_node = 8;
    CU_ASSERT_EQUAL(topo_system_derive(&n8.system, &bad), STATUS_OK);
    CU_ASSERT_EQUAL(ops->auto_apply(&n8, k, 144), STATUS_INVALID_STRATEGY);
    /* pp 12, and vpp auto on it */
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, auto_index(4, 12, 1, 1, 0), 144 * 4), STATUS_OK);
    CU_ASSERT_EQUAL(q.task.detailed.pp, 12);
    CU_ASSERT_EQUAL(q.task.detailed.vpp, 1);
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, auto_index(4, 12, 1, 1, 1), 144 * 4), STATUS_OK);
    CU_ASSERT(q.task.detailed.vpp_auto);
    q.model.hidden = 1024;
    q.model.ffn = 4096;
    q.model.heads = q.model.kv_heads = 16; /* small enough for the tidy device */
    q.model.seq_len = 1024;
    engine e;
    engine_init(&e, false);
    result_t r;
    status_code rc = eval_point(&q, &e, &r, NULL);
    if (rc != STATUS_OK)
        fprintf(stderr, "vpp auto: %s\n", status_name(rc));
    CU_ASSERT_EQUAL(rc, STATUS_OK);
    CU_ASSERT(r.vpp_resolved == 1 || r.vpp_resolved == 2 || r.vpp_resolved == 4 ||
              r.vpp_resolved == 8);
    engine_free(&e);
    /* 94 layers on 48 stages: fewer than 2 a stage; 96 fill them */
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, auto_index(1, 48, 1, 1, 0), 144), STATUS_OK);
    q = p;
    q.model.layers = 94;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, auto_index(1, 48, 1, 1, 0), 144), STATUS_INFEASIBLE_SHAPE);
    /* cp 16: 8k tokens per rank of a 128k sequence, not 512 of an 8k one */
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, auto_index(8, 1, 16, 1, 0), 144), STATUS_INVALID_PRODUCT);
    p.system.devices = 128 * 9;
    p.system.devices_per_node = 8;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    k = auto_index(8, 1, 16, 1, 0);
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, k, 9 * 16), STATUS_INFEASIBLE_SHAPE);
    p.model.seq_len = 131072;
    q = p;
    CU_ASSERT_EQUAL(ops->auto_apply(&q, k, 9 * 16), STATUS_OK);
    CU_ASSERT_EQUAL(q.task.detailed.cp, 16);
    CU_ASSERT_EQUAL(q.task.detailed.dp, 9);
}

static void test_finetune(void)
{
    engine e;
    engine_init(&e, false);
    result_t r0, rh, rl;
    /* ViT-like (no embedding table) on one device, 16 micro-batches: all
     * compute. Frozen layers with nothing trained below them run no
     * backward, so freezing the first half costs the mean of training
     * every layer and training none: per micro-batch 8 (f + b) -> 4 f +
     * 4 (f + b), and the optimizer over half the parameters. */
    point_t p = unit_tidy_point(1, 1, 1, 0);
    p.model.vocab = 0;
    p.model.d.arch = MODEL_ARCH_VIT;
    p.task.kind = TASK_FINETUNE;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r0, NULL), STATUS_OK);
    p.task.detailed.frozen_layers = 4;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rh, NULL), STATUS_OK);
    p.task.detailed.frozen_layers = 8;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rl, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(rh.compute_gemm_s, 0.5 * (r0.compute_gemm_s + rl.compute_gemm_s), 1e-12);
    UNIT_ASSERT_CLOSE(rh.iteration_time_s, rh.compute_gemm_s, 1e-12);
    /* gradients 2 and Adam 12 bytes for the 4 trained layers of 12 h^2;
     * activations only for them (their backward needs them) */
    double lp = 12.0 * 1024.0 * 1024.0;
    UNIT_ASSERT_CLOSE(rh.mem_grads_bytes_per_device, 2.0 * 4.0 * lp, 1e-12);
    UNIT_ASSERT_CLOSE(rh.mem_optimizer_bytes_per_device, 12.0 * 4.0 * lp, 1e-12);
    UNIT_ASSERT_CLOSE(rh.mem_activations_bytes_per_device,
                      0.5 * r0.mem_activations_bytes_per_device, 1e-12);
    UNIT_ASSERT_CLOSE(rl.mem_grads_bytes_per_device, 0.0, 0);
    CU_ASSERT(rl.mfu > 0);

    /* GPT with a trained (tied) embedding under 8 frozen layers: they
     * pass data gradients down but compute no weight gradients, so per
     * micro-batch each saves its four forward GEMMs once (QKV T x 3h x h,
     * output T x h x h, MLP T x 4h x h and T x h x 4h; T = 1024 tokens),
     * and the optimizer skips their 8 x 12 h^2 parameters (30 bytes
     * each at 0.5 TB/s). */
    p = unit_tidy_point(1, 1, 1, 0);
    p.task.kind = TASK_FINETUNE;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r0, NULL), STATUS_OK);
    p.task.detailed.frozen_layers = 8;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rl, NULL), STATUS_OK);
    const hw_t *h = &p.system.hw;
    double g = hw_gemm_time(h, HW_BF16, 1024, 3072, 1024, 1) +
               hw_gemm_time(h, HW_BF16, 1024, 1024, 1024, 1) +
               hw_gemm_time(h, HW_BF16, 1024, 4096, 1024, 1) +
               hw_gemm_time(h, HW_BF16, 1024, 1024, 4096, 1);
    UNIT_ASSERT_CLOSE(r0.compute_gemm_s - rl.compute_gemm_s,
                      16.0 * 8.0 * g + 30.0 * 8.0 * lp / 0.5e12, 1e-9);
    /* the embedding frozen as well: no backward at all below the head */
    p.task.freeze_emb = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rh, NULL), STATUS_OK);
    CU_ASSERT(rh.compute_gemm_s < rl.compute_gemm_s);
    UNIT_ASSERT_CLOSE(rh.mem_grads_bytes_per_device, 0.0, 0);
    /* frozen parts only for fine-tuning; at most every layer */
    p.task.kind = TASK_PRETRAIN;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_VALUE);
    p.task.kind = TASK_FINETUNE;
    p.task.detailed.frozen_layers = 9;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_VALUE);
    engine_free(&e);
}

static void test_load_points(void)
{
    /* the shipped example points load and evaluate */
    static const char *const files[] = {
        "detailed_llama3_70b.cfg", "detailed_mixtral_8x7b.cfg",
        "detailed_llama3_405b_gb200.cfg", "detailed_llama2_70b_inference.cfg",
        "detailed_vit_fsdp.cfg", "detailed_dlrm_mlperf.cfg", "detailed_dlrm_multihot_64.cfg",
        "detailed_llama2_7b_finetune.cfg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/points/%s", unit_configs(), files[i]);
        point_t p;
        load_err le;
        int rc = load_point(path, unit_configs(), &p, &le);
        if (rc != 0)
            fprintf(stderr, "%s\n", le.text);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_EQUAL(p.fidelity, EVAL_DETAILED);
        engine e;
        engine_init(&e, false);
        result_t r;
        CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        engine_free(&e);
    }
    /* an unknown key names file and line */
    char path[1024];
    unit_write_file("detailed_bad.cfg",
                    "fidelity = \"detailed\";\n"
                    "model = \"gpt3-175b\";\n"
                    "system = { name = \"s\"; hardware = \"a100-80g\"; devices = 8; };\n"
                    "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 1;\n"
                    "  recompute = \"some\"; };\n",
                    path, sizeof path);
    point_t p;
    load_err le;
    CU_ASSERT_NOT_EQUAL(load_point(path, unit_configs(), &p, &le), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "detailed_bad.cfg:5:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "recompute"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("detailed", NULL, NULL);
    CU_add_test(s, "Megatron FLOP count", test_megatron_flops);
    CU_add_test(s, "1F1B bubble fraction", test_bubble);
    CU_add_test(s, "ZeRO memory per stage", test_zero_memory);
    CU_add_test(s, "GEMM efficiency and roofline", test_gemm_efficiency);
    CU_add_test(s, "memory per ZeRO stage in evaluation", test_eval_memory_per_stage);
    CU_add_test(s, "activation memory in evaluation", test_eval_activation_memory);
    CU_add_test(s, "FSDP exposed gathers in evaluation", test_eval_fsdp_exposure);
    CU_add_test(s, "pipeline bubble in evaluation", test_eval_pipeline);
    CU_add_test(s, "vpp = auto: the fastest interleaving", test_vpp_auto);
    CU_add_test(s, "infeasible: memory", test_eval_infeasible_memory);
    CU_add_test(s, "eval: the integer figures are the table's", test_eval_int_figures);
    CU_add_test(s, "rules", test_eval_rules);
    CU_add_test(s, "uneven pipeline stages", test_eval_uneven_pipeline);
    CU_add_test(s, "head_dim", test_head_dim);
    CU_add_test(s, "MoE and inference", test_eval_moe_and_inference);
    CU_add_test(s, "layout and hybrid sharding", test_layout_and_hybrid_sharding);
    CU_add_test(s, "auto strategies", test_auto);
    CU_add_test(s, "auto: the published recipes are candidates", test_auto_recipes);
    CU_add_test(s, "fine-tuning: frozen layers and embeddings", test_finetune);
    CU_add_test(s, "point files", test_load_points);
    return unit_run();
}
