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

/* A GPT-3-like model without position table, ffn = 4h, MHA. */
static model_t gpt(int64_t l, int64_t h, int64_t a, int64_t s, int64_t v)
{
    model_t m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "gpt");
    m.kind = MODEL_LLM;
    m.layers = l;
    m.hidden = h;
    m.ffn = 4 * h;
    m.heads = a;
    m.kv_heads = a;
    m.seq_len = s;
    m.vocab = v;
    m.causal = true;
    m.d.position = MODEL_POS_NONE;
    return m;
}

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
    model_t m = gpt(24, 2304, 24, 2048, 51200);
    double fwd = detailed_model_flops(&m, false);
    double mf = 72.0 * 2048 * 24 * 2304.0 * 2304.0 *
                (1.0 + 2048.0 / (6 * 2304.0) + 51200.0 / (12 * 24 * 2304.0));
    UNIT_ASSERT_CLOSE(3.0 * fwd, mf, 1e-12);
    /* eq. (3) = 4/3 of it when V/16lh replaces V/12lh: check at V = 0 */
    model_t m0 = gpt(24, 2304, 24, 2048, 0);
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

static void test_ring_allreduce(void)
{
    /* Ring all-reduce: each rank sends 2(n-1)/n of the buffer:
     * n 8, 1 GB -> 1.75 GB. */
    UNIT_ASSERT_CLOSE(topo_ring_allreduce_volume(8, 1e9), 1.75e9, 1e-15);
    UNIT_ASSERT_CLOSE(topo_ring_allreduce_volume(1, 1e9), 0.0, 1e-15);

    /* One 8-device domain at 100 GB/s, alpha 1 us: all-reduce of 1 GB
     * = 1.75e9 / 100e9 + 2*7*1e-6 = 17.514 ms; all-gather half the
     * bandwidth term and 7 steps = 8.757 ms. */
    hw_t h = unit_tidy_hw();
    topo_t t;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_build(&t, &h, 8, 8, 0, 0, 1.0, TOPO_RING, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 1, 1e9), 0.017514, 1e-12);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLGATHER, 8, 1, 1e9), 0.008757, 1e-12);

    /* 64 devices in 8 nodes, a group of 8 at stride 8 (one per node)
     * crosses the NIC level with one channel: 1.75e9 / 10e9 + 14 * 5 us
     * = 175.07 ms. The same group at stride 1 stays in the node. */
    CU_ASSERT_EQUAL(topo_build(&t, &h, 64, 8, 0, 0, 1.0, TOPO_RING, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 8, 1e9), 0.17507, 1e-12);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 1, 1e9), 0.017514, 1e-12);
    /* 64 ranks at stride 1: 8 channels of 10 GB/s = 80 GB/s bottleneck:
     * 2*63/64 * 1e9 / 80e9 + 126 * 5 us = 25.2422 ms */
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 64, 1, 1e9),
                      2.0 * 63.0 / 64.0 / 80.0 + 126 * 5e-6, 1e-12);
    /* Oversubscription: pods of 16 with 1:4 above; a group of 8 at
     * stride 8 spans 64 devices, beyond the pod, 2 members per pod. The
     * ring leaves each pod on one edge (1 channel, 10 GB/s) while the
     * pod's 2 members bring 2 x 10 / 4 = 5 GB/s of uplink: 5 GB/s. */
    CU_ASSERT_EQUAL(topo_build(&t, &h, 64, 8, 0, 16, 4.0, TOPO_RING, &bad), STATUS_OK);
    CU_ASSERT_EQUAL(t.nlevels, 3);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 8, 1e9),
                      1.75e9 / 5e9 + 14 * 10e-6, 1e-12);
    /* Pods of 32 at 1:4: 4 members per pod bring 10 GB/s, the edge
     * needs 10: no slowdown. All-to-all sends every crossing byte
     * through the tier: half of 1 GB leaves each pod at 10/4 GB/s. */
    CU_ASSERT_EQUAL(topo_build(&t, &h, 64, 8, 0, 32, 4.0, TOPO_RING, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 8, 1e9),
                      1.75e9 / 10e9 + 14 * 10e-6, 1e-12);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLTOALL, 8, 8, 1e9),
                      0.5e9 / 2.5e9 + 10e-6 + 7 * 10e-6 * TOPO_A2A_PER_PEER, 1e-12);
}

/* A group placed once (topo_place, as an evaluation places its TP and DP
 * groups) costs exactly what the collective costs placed each time
 * (topo_coll_time_net): every collective, algorithm, group and size,
 * with and without rails and a ring efficiency, on a topology with pods
 * and an oversubscribed tier (where the oversubscription factor is read)
 * and NVLS, the placement reused at another ring efficiency. Equality
 * of the bits, not closeness: the scenarios of an
 * evaluation must reproduce the unplaced figures bit for bit. */
static void test_topo_placed(void)
{
    hw_t h = unit_tidy_hw();
    h.scaleup_nvls_efficiency = 0.85;
    topo_t t;
    const char *bad = NULL;
    const topo_net nets[3] = {{0, 1.0}, {2, 0.8}, {16, 0.93}};
    const int64_t groups[][2] = {{8, 1}, {4, 2}, {8, 8}, {16, 1}, {16, 4}, {64, 1},
                                 {32, 8}, {2, 64}, {128, 1}, {1, 1}};
    const double sizes[] = {0.0, 1e3, 3e5, 7e7, 1e9, 4e10};
    int checked = 0, differ = 0;
    for (int a = 0; a < TOPO_NALGO; a++) {
        CU_ASSERT_EQUAL_FATAL(topo_build(&t, &h, 128, 8, 0, 32, 4.0, (topo_algo)a, &bad),
                              STATUS_OK);
        for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++)
            for (int ni = 0; ni < 3; ni++) {
                topo_grp q;
                topo_place(&t, groups[gi][0], groups[gi][1], nets[ni].rails, &q);
                /* placed once, costed at two efficiencies (the band's
                 * scenarios move the DP rings' efficiency, not the rails) */
                for (int e = 0; e < 2; e++) {
                    topo_net net = {nets[ni].rails, nets[ni].eff * (e ? 0.9 : 1.0)};
                    for (int c = TOPO_ALLREDUCE; c <= TOPO_ALLTOALL; c++)
                        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                            double x = topo_coll_time_net(&t, (topo_coll)c, groups[gi][0],
                                                          groups[gi][1], sizes[si], &net);
                            double y = topo_coll_time_at(&t, (topo_coll)c, &q, sizes[si], &net);
                            differ += memcmp(&x, &y, sizeof x) != 0;
                            checked++;
                        }
                }
            }
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT_EQUAL(checked, TOPO_NALGO * 10 * 3 * 2 * 4 * 6);
}

/* NCCL's algorithms and protocols (src/graph/tuning.cc) on the tidy
 * hardware: 100 GB/s, alpha 1 us in the domain of 8; NIC 10 GB/s, 5 us. */
static void test_topo_nccl(void)
{
    hw_t h = unit_tidy_hw();
    topo_t t;
    const char *bad = NULL;
    /* 1 KB ring all-reduce in one domain: LL's per-step latency is
     * 0.6/3.4 of Simple's at half the bandwidth: 14 steps x 1 us x
     * 0.6/3.4 + 2*7/8 * 1 KB / 50 GB/s. */
    CU_ASSERT_EQUAL(topo_build(&t, &h, 8, 8, 0, 0, 1.0, TOPO_RING, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 1, 1e3),
                      14e-6 * 0.6 / 3.4 + 1.75e3 / 50e9, 1e-12);
    /* 1 GB: Simple (the calibrated ring) */
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 1, 1e9), 0.017514, 1e-12);
    /* Tree over 64 nodes (one member each, stride 8 on 512 devices):
     * 2 log2(64) network steps instead of the ring's 2 x 63; 1 GB at
     * 0.92 of 10 GB/s (NCCL's medium-size correction stops below
     * 2^23 x 64 B): 2*63/64 * 1e9 / (10e9 * 0.92) + 12 x 5 us. */
    CU_ASSERT_EQUAL(topo_build(&t, &h, 512, 8, 0, 0, 1.0, TOPO_TREE, &bad), STATUS_OK);
    double tree = 2.0 * 63.0 / 64.0 * 1e9 / (10e9 * 0.92) + 12 * 5e-6;
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 64, 8, 1e9), tree, 1e-12);
    /* the ring: 2*63/64 * 1e9 / 10e9 + 126 x 5 us; auto takes the ring
     * at 1 GB (bandwidth) and the tree at 64 KB (latency) */
    double ring = 2.0 * 63.0 / 64.0 * 1e9 / 10e9 + 126 * 5e-6;
    t.algo = TOPO_RING;
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 64, 8, 1e9), ring, 1e-12);
    t.algo = TOPO_AUTO;
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 64, 8, 1e9), ring, 1e-12);
    t.algo = TOPO_TREE;
    double tree_mb = topo_coll_time(&t, TOPO_ALLREDUCE, 64, 8, 65536.0);
    t.algo = TOPO_RING;
    double ring_mb = topo_coll_time(&t, TOPO_ALLREDUCE, 64, 8, 65536.0);
    t.algo = TOPO_AUTO;
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 64, 8, 65536.0), tree_mb, 1e-12);
    /* 64 KB: the tree with LL128 (NCCL's correction 0.6 at 2^10 x 64 B,
     * latency 8.5/14 of Simple's) beats the ring's best (LL: half the
     * bandwidth, 2.7/14 of the latency) */
    UNIT_ASSERT_CLOSE(tree_mb,
                      2.0 * 63.0 / 64.0 * 65536.0 / (10e9 * 0.92 * 120.0 / 128.0 * 0.6) +
                          12 * 5e-6 * 8.5 / 14.0,
                      1e-12);
    UNIT_ASSERT_CLOSE(ring_mb, 2.0 * 63.0 / 64.0 * 65536.0 / 5e9 + 126 * 5e-6 * 2.7 / 14.0,
                      1e-12);
    CU_ASSERT(tree_mb < ring_mb);
    /* NVLS (in-switch reduction at efficiency 0.85) inside the domain:
     * each byte crosses the link once each way: 2*7/8 * 1 GB / (2 x 0.85
     * x 100 GB/s) + 25/3.4 x 1 us; auto takes it, hardware without it
     * cannot. */
    h.scaleup_nvls_efficiency = 0.85;
    CU_ASSERT_EQUAL(topo_build(&t, &h, 8, 8, 0, 0, 1.0, TOPO_AUTO, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 1, 1e9),
                      1.75e9 / 170e9 + 25.0 / 3.4 * 1e-6, 1e-12);
    h.scaleup_nvls_efficiency = 0.0;
    CU_ASSERT_EQUAL(topo_build(&t, &h, 8, 8, 0, 0, 1.0, TOPO_AUTO, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(topo_coll_time(&t, TOPO_ALLREDUCE, 8, 1, 1e9), 0.017514, 1e-12);
    /* an all-gather and a reduce-scatter of the same bytes take one time
     * (topo.h), bit for bit, under every algorithm, with and without
     * NVLS, in a domain and across two levels with a pod: DLRM's
     * row-wise exchange reuses the one for the other */
    static const topo_algo algos[] = {TOPO_AUTO, TOPO_RING, TOPO_TREE, TOPO_HIERARCHICAL};
    static const double sizes[] = {1e3, 65536.0, 1e9};
    for (int nv = 0; nv < 2; nv++) {
        h.scaleup_nvls_efficiency = nv ? 0.85 : 0.0;
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            CU_ASSERT_EQUAL(topo_build(&t, &h, 512, 8, 0, 64, 2.0, algos[a], &bad),
                            STATUS_OK);
            static const int64_t groups[][2] = {{8, 1}, {64, 1}, {512, 1}, {64, 8}};
            for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
                for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                    double ag = topo_coll_time(&t, TOPO_ALLGATHER, groups[g][0],
                                               groups[g][1], sizes[s]);
                    double rs = topo_coll_time(&t, TOPO_REDUCESCATTER, groups[g][0],
                                               groups[g][1], sizes[s]);
                    CU_ASSERT(ag > 0.0 && memcmp(&ag, &rs, sizeof ag) == 0);
                }
        }
    }
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

/* A point on the tidy hardware: dp devices of one node. */
static point_t tidy_point(int64_t tp, int64_t pp, int64_t dp, int64_t zero)
{
    point_t p;
    memset(&p, 0, sizeof p);
    p.fidelity = EVAL_DETAILED;
    p.model = gpt(8, 1024, 16, 1024, 32000);
    p.system.hw = unit_tidy_hw();
    p.system.devices = tp * pp * dp;
    p.system.devices_per_node = 8;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.kind = TASK_PRETRAIN;
    p.task.detailed.tp = tp;
    p.task.detailed.pp = pp;
    p.task.detailed.dp = dp;
    p.task.detailed.zero_stage = zero;
    p.task.detailed.dtype = HW_BF16;
    p.task.detailed.micro_batch = 1;
    p.task.detailed.global_batch = 16 * dp;
    p.task.detailed.overlap_dp_comm = true;
    return p;
}

static void test_eval_memory_per_stage(void)
{
    /* Mixed-precision Adam per device: weights 2, grads 2, optimizer
     * 12 bytes per local parameter, sharded over dp per ZeRO stage. */
    for (int64_t z = 0; z <= 3; z++) {
        point_t p = tidy_point(1, 1, 8, z);
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
    point_t p = tidy_point(1, 1, 8, 0);
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
    point_t p = tidy_point(1, 1, 8, 0);
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
    point_t p = tidy_point(1, 1, 8, 3);
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
    point_t p = tidy_point(1, 4, 2, 1);
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
    point_t p = tidy_point(1, 4, 2, 1);
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
    point_t q = tidy_point(1, 1, 8, 1);
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
    point_t p = tidy_point(1, 8, 1, 1);
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
    point_t p = tidy_point(1, 1, 8, 0);
    p.model = gpt(96, 12288, 96, 2048, 51200);
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
    point_t p = tidy_point(1, 1, 8, 0);
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
    point_t p = tidy_point(2, 1, 4, 0);
    const char *where = NULL;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_OK);
    p.task.detailed.dp = 3; /* 2 * 3 != 8 devices */
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_PRODUCT);
    p = tidy_point(2, 1, 4, 0);
    p.task.detailed.ep = 2; /* not an MoE model */
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_STRATEGY);
    /* a library caller's huge counts and overflowing products are
     * refused by the check, before any loop or product */
    p = tidy_point(2, 1, 4, 0);
    p.model.layers = INT64_MAX;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
    p = tidy_point(2, 1, 4, 0);
    p.task.detailed.tp = INT64_C(1) << 40;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
    p = tidy_point(2, 1, 4, 0);
    p.task.detailed.micro_batch = INT64_C(1) << 30;
    p.task.detailed.dp = INT64_C(1) << 20;
    p.task.detailed.grad_accum = INT64_C(1) << 20;
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
    /* 4 layers cannot fill 8 stages */
    p = tidy_point(1, 8, 1, 0);
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
    point_t p = tidy_point(1, 1, 1, 0);
    engine e;
    engine_init(&e, false);
    result_t r0, r1;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r0, NULL), STATUS_OK);
    p.model.d.head_dim = p.model.hidden / p.model.heads;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r1, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r0.iteration_time_s, r1.iteration_time_s);
    engine_free(&e);

    model_t q = gpt(64, 5120, 64, 4096, 151936);
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
    point_t p = tidy_point(1, 1, 8, 1);
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
    p = tidy_point(1, 1, 1, 0);
    p.model.d.experts = 8;
    p.model.d.top_k = 2;
    p.task.detailed.global_batch = 1;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.iteration_time_s, r.compute_gemm_s, 1e-12);

    /* Inference (the idealized serving engine, static batch of 4):
     * prefill then decode; TPOT is memory-bound (weights and KV cache
     * streamed): at least bytes / bandwidth; the output rate counts the
     * prefill: 4 x 128 tokens over TTFT + 127 TPOT. */
    p = tidy_point(1, 1, 1, 0);
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
    point_t p = tidy_point(1, 8, 8, 0);
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
    p = tidy_point(1, 1, 64, 3);
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
        point_t p = tidy_point(1, 1, 64, 0);
        if (ops->auto_apply(&p, i, 1024) != STATUS_OK)
            continue;
        ok++;
        CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
        CU_ASSERT_EQUAL(p.task.detailed.tp * p.task.detailed.pp * p.task.detailed.dp *
                            p.task.detailed.cp, 64);
        CU_ASSERT_EQUAL(p.task.detailed.global_batch, 1024);
    }
    CU_ASSERT(ok > 100);
    point_t p = tidy_point(1, 1, 64, 0);
    CU_ASSERT_NOT_EQUAL(ops->auto_apply(&p, n, 1024), STATUS_OK);
    /* a stack that runs ZeRO 0 and 1 only (Megatron-Core's distributed
     * optimizer): auto offers no ZeRO 2 or 3, and still ZeRO 0 and 1 */
    int64_t z01 = 0, z23 = 0;
    for (int64_t i = 0; i < n; i++) {
        point_t q = tidy_point(1, 1, 64, 0);
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
    point_t p = tidy_point(1, 1, 72, 0);
    p.model = gpt(96, 8192, 64, 8192, 32000);
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

/* A small DLRM on the tidy hardware: 6 tables of R rows x 16 fp32,
 * pooling 10, bottom MLP 8-16, top MLP 37-4-1 (37 = 16 + 6 * 7 / 2),
 * on 4 devices of one node, global batch 1024 (256 per device). */
static point_t dlrm_point(int sharding, int64_t rows)
{
    point_t p;
    memset(&p, 0, sizeof p);
    p.fidelity = EVAL_DETAILED;
    strcpy(p.model.name, "dlrm");
    p.model.kind = MODEL_DLRM;
    p.model.tables = 6;
    p.model.rows_per_table = rows;
    p.model.emb_dim = 16;
    p.model.pooling = 10;
    p.model.bytes_per_emb_param = 4;
    p.model.d.bot_n = 2;
    p.model.d.bot_mlp[0] = 8;
    p.model.d.bot_mlp[1] = 16;
    p.model.d.top_n = 2;
    p.model.d.top_mlp[0] = 4;
    p.model.d.top_mlp[1] = 1;
    p.system.hw = unit_tidy_hw();
    p.system.devices = 4;
    p.system.devices_per_node = 8;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.kind = TASK_PRETRAIN;
    p.task.detailed.dp = 4;
    p.task.detailed.dtype = HW_BF16;
    p.task.detailed.global_batch = 1024;
    p.task.detailed.overlap_dp_comm = true;
    p.task.detailed.emb_sharding = sharding;
    return p;
}

static void test_dlrm_sharding(void)
{
    /* Table-wise: ceil(6/4) = 2 whole tables on the busiest device,
     * each looked up for all 1024 samples: 2 x 1024 x 10 = 20480 rows,
     * 2048 pooled vectors. Row-wise: every table's 1000/4 = 250 rows,
     * hit by 10/4 of a table's lookups per sample: 6 x 1024 x 10 / 4 =
     * 15360 rows, 6 x 1024 = 6144 partial sums. Column-wise with 2
     * shards per table: 12 shards of 8 columns, ceil(12/4) = 3 each. */
    point_t p = dlrm_point(TASK_EMB_TABLE, 1000);
    detailed_dlrm_emb s;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.shards, 2, 0);
    UNIT_ASSERT_CLOSE(s.lookups, 20480, 0);
    UNIT_ASSERT_CLOSE(s.outputs, 2048, 0);
    UNIT_ASSERT_CLOSE(s.state_values, 1, 0); /* row-wise Adagrad */
    p.task.detailed.emb_sharding = TASK_EMB_ROW;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.rows, 250, 0);
    UNIT_ASSERT_CLOSE(s.lookups, 15360, 0);
    UNIT_ASSERT_CLOSE(s.outputs, 6144, 0);
    p.task.detailed.emb_sharding = TASK_EMB_COLUMN;
    p.task.detailed.emb_column_shards = 2;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.shards, 3, 0);
    UNIT_ASSERT_CLOSE(s.width, 8, 0);
    UNIT_ASSERT_CLOSE(s.lookups, 30720, 0);
    UNIT_ASSERT_CLOSE(s.id_copies, 2, 0);
    /* default column shards: the smallest divisor c of 16 with 6 c >= 4
     * is 1; with 2 tables on 4 devices it is 2; Adagrad keeps one value
     * per element of the shard (8), Adam two */
    p.task.detailed.emb_column_shards = 0;
    CU_ASSERT_EQUAL(detailed_dlrm_column_shards(&p.model, &p.task.detailed, 4), 1);
    p.model.tables = 2;
    CU_ASSERT_EQUAL(detailed_dlrm_column_shards(&p.model, &p.task.detailed, 4), 2);
    p.task.detailed.emb_optimizer = TASK_EMB_OPT_ADAGRAD;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.state_values, 8, 0);
    p.task.detailed.emb_optimizer = TASK_EMB_OPT_ADAM;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.state_values, 16, 0);
}

static void test_dlrm_eval(void)
{
    engine e;
    engine_init(&e, false);
    result_t r;
    /* Memory, table-wise, training: MLP parameters 8x16+16 + 37x4+4 +
     * 4x1+1 = 301, 2 bytes each replicated (weights and gradients), 12
     * bytes of Adam; tables 2 x 1000 x 16 x 4 = 128000 bytes; row-wise
     * Adagrad 2 x 1000 x 4 = 8000 bytes. */
    point_t p = dlrm_point(TASK_EMB_TABLE, 1000);
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_weights_bytes_per_device, 602 + 128000, 1e-15);
    UNIT_ASSERT_CLOSE(r.mem_grads_bytes_per_device, 602, 1e-15);
    UNIT_ASSERT_CLOSE(r.mem_optimizer_bytes_per_device, 12 * 301 + 8000, 1e-15);
    /* embeddings in training, priced per table as the planner prices
     * one (emb.c emb_work): gathers of 20480 rows of 64 bytes, each
     * paying a 64-byte burst (2 x 64 bytes), and 2048 pooled writes x
     * 64; then the pooled gradients read (2048 x 64), scattered per
     * lookup (20480 x 64, with the burst), and the fused update reading
     * and writing each touched row (128) and its row-wise Adagrad value
     * (8), with the burst: of a table's 1000 rows, 10240 lookups touch
     * 1000 (1 - e^-10.24); at 0.5 TB/s, no kernel overhead */
    double touched = 1000.0 * -expm1(-10.24);
    UNIT_ASSERT_CLOSE(r.compute_emb_s,
                      (20480.0 * 128 + 2048.0 * 64 + 2048.0 * 64 + 20480.0 * 128 +
                       2.0 * touched * 136 * 2) /
                          0.5e12,
                      1e-12);
    CU_ASSERT(r.comm_allreduce_s > 0 && r.iteration_time_s > 0);

    /* Inference: lookups only; ids (6 tables x 256 samples x 10 x 4 B =
     * 61440 B) and pooled vectors (2048 x 64 = 131072 B) all-to-all on 4
     * devices of a 100 GB/s node: 3/4 of the bytes over the bandwidth +
     * per all-to-all one latency (1 us) and 3 peers at an eighth of it
     * (topo.h): 1.375 us each. */
    p.task.kind = TASK_INFERENCE;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, (20480.0 * 128 + 2048.0 * 64) / 0.5e12, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_alltoall_s, 0.75 * (61440.0 + 131072.0) / 100e9 + 2.75e-6, 1e-12);
    CU_ASSERT_EQUAL(r.global_batch, 1024);
    double fwd_gemm = r.compute_gemm_s;
    /* row-wise: 6 tables x 250 rows; 15360 gathers of 64 bytes with
     * the burst, 6144 pooled writes of 64;
     * the partial sums reduce-scattered: 6144 x 64 = 393216 bytes, a
     * ring in NCCL's LL128 protocol at that size (0.92 of the bandwidth,
     * 1.9/3.4 of Simple's per-step latency: 4.9 us against Simple's
     * 5.95) */
    p.task.detailed.emb_sharding = TASK_EMB_ROW;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, (15360.0 * 128 + 6144.0 * 64) / 0.5e12, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_reducescatter_s,
                      0.75 * 393216.0 / (100e9 * 0.92) + 3e-6 * 1.9 / 3.4, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_alltoall_s, 0.75 * 61440.0 / 100e9 + 1.375e-6, 1e-12);
    UNIT_ASSERT_CLOSE(r.mem_weights_bytes_per_device, 602 + 6 * 250 * 64, 1e-15);

    /* Fine-tuning with everything frozen costs the forward only: the
     * same MLP time as inference, no gradients, no optimizer states. */
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.kind = TASK_FINETUNE;
    p.task.freeze_emb = p.task.freeze_bot_mlp = p.task.freeze_top_mlp = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.compute_gemm_s, fwd_gemm, 1e-12);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, (20480.0 * 128 + 2048.0 * 64) / 0.5e12, 1e-12);
    UNIT_ASSERT_CLOSE(r.mem_grads_bytes_per_device + r.mem_optimizer_bytes_per_device, 0, 0);
    CU_ASSERT_EQUAL(r.comm_allreduce_s, 0);
    /* frozen bottom MLP only: gradients of the top MLP (157 params) */
    p.task.freeze_emb = p.task.freeze_top_mlp = false;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_grads_bytes_per_device, 2 * 157, 1e-15);

    /* Load imbalance by table granularity: 700M rows of 64 bytes, 2
     * tables (89.6 GB) do not fit in 80 GB table-wise; row-wise holds
     * 6 x 175M rows = 67.2 GB + 4.2 GB of Adagrad and fits. */
    p = dlrm_point(TASK_EMB_TABLE, 700000000);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_MEMORY);
    CU_ASSERT(r.mem_weights_bytes_per_device > 89.6e9);
    p.task.detailed.emb_sharding = TASK_EMB_ROW;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_optimizer_bytes_per_device, 12 * 301 + 6 * 175e6 * 4, 1e-12);

    /* rules: no tensor parallelism; dp = devices; bottom output = emb_dim */
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.detailed.tp = 2;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_STRATEGY);
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.detailed.dp = 2;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_PRODUCT);
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.model.d.bot_mlp[1] = 32;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_VALUE);
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.detailed.global_batch = 1022; /* not a multiple of 4 */
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_BATCH);
    engine_free(&e);
}

/* The per-table planner (emb_sharding "auto", cost/detailed/dlrm/emb_plan.c) and
 * the DCNv2 cross network. */
static void test_dlrm_planner(void)
{
    engine e;
    engine_init(&e, false);
    result_t r, r1;
    /* DCNv2 parameters: 2 tables of dim 4, bottom 3-4, top 2-1, one cross
     * layer of rank 2 on W = (2 + 1) x 4 = 12: U, V 12 x 2 each and a
     * bias of 12 -> 60; top MLP from 12: 12 x 2 + 2 + 2 x 1 + 1 = 29 */
    model_t m;
    memset(&m, 0, sizeof m);
    m.kind = MODEL_DLRM;
    m.tables = 2;
    m.emb_dim = 4;
    m.rows_per_table = 5;
    m.d.bot_n = 2;
    m.d.bot_mlp[0] = 3;
    m.d.bot_mlp[1] = 4;
    m.d.top_n = 2;
    m.d.top_mlp[0] = 2;
    m.d.top_mlp[1] = 1;
    m.d.interaction = MODEL_INTERACTION_DCNV2;
    m.d.cross_layers = 1;
    m.d.cross_rank = 2;
    m.d.n_tables = 2;
    m.d.table_rows[0] = 5;
    m.d.table_rows[1] = 7;
    double bot, top, emb;
    detailed_dlrm_params(&m, &bot, &top, &emb);
    UNIT_ASSERT_CLOSE(top, 60 + 29, 1e-15);
    UNIT_ASSERT_CLOSE(emb, (5 + 7) * 4, 1e-15);

    /* Tables listed one by one: three of 10 rows (640 B) and three of
     * 100000; with a threshold of 1 kB the small ones are replicated, the
     * others model-parallel (whole or split); without, all six are
     * model-parallel, whole (four devices for six tables of equal
     * lookups: splitting would not shorten the busiest device). */
    point_t p = dlrm_point(TASK_EMB_AUTO, 1000);
    p.model.d.n_tables = 6;
    for (int i = 0; i < 6; i++) {
        p.model.d.table_rows[i] = i < 3 ? 10 : 100000;
        p.model.d.table_pooling[i] = 10;
    }
    p.task.detailed.emb_dp_threshold_bytes = 1000.0;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r.emb_dp_tables, 3);
    CU_ASSERT_EQUAL(r.emb_whole_tables + r.emb_split_tables, 3);
    CU_ASSERT(r.iteration_time_s > 0 && r.comm_alltoall_s > 0);
    p.task.detailed.emb_dp_threshold_bytes = 0.0;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r1, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r1.emb_dp_tables, 0);
    CU_ASSERT_EQUAL(r1.emb_whole_tables, 6);
    /* replicated tables' row gradients join the MLPs' all-reduce */
    CU_ASSERT(r.comm_allreduce_s > r1.comm_allreduce_s);
    /* a hybrid embedding keeps half the lookups local (stack fact): less
     * exchanged than with every lookup remote */
    p.stack.emb_hot_fraction = (stack_fact){0.5, 0.5, 0.5};
    p.task.detailed.emb_hybrid = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    result_t r2;
    p.task.detailed.emb_hybrid = false;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r2, NULL), STATUS_OK);
    p.task.detailed.emb_hybrid = true;
    CU_ASSERT(r.comm_alltoall_s < r2.comm_alltoall_s);
    /* the band from the stack's ranges: a host cost of 0 to 1 ms per
     * iteration (nominal 0) puts the slow end 1 ms later */
    p.stack.step_overhead_s = (stack_fact){0.0, 0.0, 1e-3};
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.iteration_time_hi_s, r.iteration_time_s + 1e-3, 1e-9);
    UNIT_ASSERT_CLOSE(r.iteration_time_lo_s, r.iteration_time_s, 1e-12);
    /* a list that does not match the tables is refused */
    p.model.d.n_tables = 5;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_VALUE);
    /* a listed table's rows from 1 to DT_MAX_BATCH (2^40), its pooling
     * from 1: each edge of rules.c dt_rules_dlrm's branch-free pass, on the last
     * table and on the first */
    p.model.d.n_tables = 6;
    static const struct {
        int64_t rows;
        int32_t pool;
        status_code want;
    } edge[] = {{1, 1, STATUS_OK},
                {INT64_C(1) << 40, INT32_MAX, STATUS_OK},
                {0, 10, STATUS_INVALID_VALUE},
                {-1, 10, STATUS_INVALID_VALUE},
                {INT64_MIN, 10, STATUS_INVALID_VALUE},
                {(INT64_C(1) << 40) + 1, 10, STATUS_INVALID_VALUE},
                {INT64_MAX, 10, STATUS_INVALID_VALUE},
                {10, 0, STATUS_INVALID_VALUE},
                {10, -1, STATUS_INVALID_VALUE},
                {10, INT32_MIN, STATUS_INVALID_VALUE}};
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
        for (int at = 0; at < 6; at += 5) {
            int64_t rows = p.model.d.table_rows[at];
            int32_t pool = p.model.d.table_pooling[at];
            p.model.d.table_rows[at] = edge[k].rows;
            p.model.d.table_pooling[at] = edge[k].pool;
            CU_ASSERT_EQUAL(eval_check(&p, NULL), edge[k].want);
            p.model.d.table_rows[at] = rows;
            p.model.d.table_pooling[at] = pool;
        }
    }
    engine_free(&e);
}

/* HugeCTR's hier_auto placement (stack emb_hierarchical, several nodes)
 * on the MLPerf DLRM-DCNv2 tables (training_results_v4.0 NVIDIA
 * dlrm_dcnv2 train.py: TABLE_SIZE_ARRAY, MULTI_HOT_SIZES), 16 nodes of 8. */
static void test_dlrm_hier(void)
{
    static const int64_t rows[26] = {40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63,
                                     40000000, 3067956, 405282, 10, 2209, 11938, 155, 4, 976,
                                     14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36};
    static const int64_t pool[26] = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1,
                                     6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
    engine e;
    engine_init(&e, false);
    point_t p = dlrm_point(TASK_EMB_AUTO, 1000);
    p.model.tables = 26;
    p.model.emb_dim = 128;
    p.model.pooling = 9;
    p.model.d.bot_mlp[1] = 128;
    p.model.d.n_tables = 26;
    for (int i = 0; i < 26; i++) {
        p.model.d.table_rows[i] = rows[i];
        p.model.d.table_pooling[i] = pool[i];
    }
    p.system.hw.mem_capacity_bytes = 160e9;
    p.system.devices = 128;
    p.system.devices_per_node = 8;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.detailed.dp = 128;
    p.task.detailed.global_batch = 135168;
    p.task.detailed.emb_optimizer = TASK_EMB_OPT_ADAGRAD;
    p.stack.emb_hierarchical = true;
    /* DP_SHARDING_THRESHOLD 0.0125 GB on rows of 128 fp32 values and
     * their Adagrad state (1024 B): tables under 12207 rows, 14 of them
     * (planner.py's dp_table_id; the weights alone would give 17) */
    p.task.detailed.emb_dp_threshold_bytes = 0.0125e9;
    result_t r4, r3;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r4, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r4.emb_dp_tables, 14);
    /* every other table spread over its node's 8 GPUs */
    CU_ASSERT_EQUAL(r4.emb_whole_tables, 0);
    CU_ASSERT_EQUAL(r4.emb_split_tables, 12);
    /* a run that states a far lower MEM_COMM_BW_RATIO than the hardware's
     * (about 80 here) makes a shard cheap to its planner (planner.py:
     * table cost = ratio / 4 lookups): the hot tables are split further,
     * more pooled vectors cross the network */
    result_t rr;
    p.task.detailed.emb_mem_comm_bw_ratio = 1e-3;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rr, NULL), STATUS_OK);
    CU_ASSERT(rr.comm_alltoall_s > r4.comm_alltoall_s);
    p.task.detailed.emb_mem_comm_bw_ratio = -1.0; /* rejected */
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rr, NULL), STATUS_INVALID_VALUE);
    p.task.detailed.emb_mem_comm_bw_ratio = 0.0;
    /* without replicated tables (the v3.0 runs) all 26 are placed on
     * nodes: more shards, more pooled vectors exchanged */
    p.task.detailed.emb_dp_threshold_bytes = 0.0;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r3, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r3.emb_dp_tables, 0);
    CU_ASSERT_EQUAL(r3.emb_split_tables, 26);
    CU_ASSERT(r3.comm_alltoall_s > r4.comm_alltoall_s);
    /* a flat stack places the same tables table-wise instead */
    p.stack.emb_hierarchical = false;
    result_t rf;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rf, NULL), STATUS_OK);
    CU_ASSERT(rf.emb_whole_tables > 0);
    engine_free(&e);
}

/* A replicated table in training (dlrm/emb_plan.c's planner, one table under the
 * data-parallel threshold on 4 devices of a node): each device gathers
 * its own b*L lookups, writes its pooled vectors, reads their gradients
 * and scatters them per lookup; after the all-reduce of the rows'
 * gradients every replica updates, once, the rows the whole batch's B*L
 * lookups touched (read and write the row and its fp32 state), and not
 * also the rows of its own lookups. The expected figures are written out
 * from those terms: a random gather of `row` bytes moves at the streaming
 * rate times row / (row + 64 B); R rows hit k times touch
 * R (1 - exp(-k / R)). */
static void test_dlrm_replicated_update(void)
{
    point_t p = dlrm_point(TASK_EMB_AUTO, 1000);
    model_t *m = &p.model;
    m->tables = 1;
    const double R = 1000, L = 10, D = 16, eb = 4, cb = 4, S = 2; /* S: state values */
    const double B = 1024, n = 4, b = B / n;
    emb_in in;
    memset(&in, 0, sizeof in);
    in.m = m;
    in.hw = &p.system.hw;
    in.topo = &p.system.topo;
    in.devices = 4;
    in.per_node = 8;
    in.batch = B;
    in.dim = D;
    in.eb = eb;
    in.cb = cb;
    in.state_values = S;
    in.dp_threshold = 1e12; /* replicated */
    in.cap = 1e12;
    in.mean_pool = L;
    in.train = true;
    emb_plan pl;
    emb_plan_run(&in, &pl);
    CU_ASSERT_EQUAL(pl.n_dp, 1);
    double mem = hw_mem_time(&p.system.hw, 1.0), row = D * eb;
    double gs = mem * (row + 64.0) / row, gs_grad = mem * (D * cb + 64.0) / (D * cb);
    double fwd = b * L * row * gs + b * D * cb * mem;
    double touched = R * (1.0 - exp(-B * L / R)); /* about R: 10 hits per row */
    double bwd = b * D * cb * mem + b * L * D * cb * gs_grad +
                 touched * (2.0 * row + 2.0 * 4.0 * S) * gs;
    UNIT_ASSERT_CLOSE(pl.fwd_s, fwd, 1e-12);
    UNIT_ASSERT_CLOSE(pl.work_s, fwd + bwd, 1e-12);
    UNIT_ASSERT_CLOSE(pl.grad_bytes, touched * D * cb, 1e-12);
    /* inference: the lookups alone */
    in.train = false;
    emb_plan_run(&in, &pl);
    UNIT_ASSERT_CLOSE(pl.work_s, fwd, 1e-12);
}

static void test_dlrm_auto(void)
{
    /* the DLRM candidates are the last options of the first degree tuple
     * (all degrees 1): the last three, table-, row- and column-wise; they
     * refuse LLM models and the transformer candidates refuse DLRM
     * models; on any other tuple they duplicate the first's */
    const eval_ops *ops = eval_ops_of(EVAL_DETAILED);
    int64_t tuples, nopt;
    detailed_auto_factors(&tuples, &nopt);
    CU_ASSERT_EQUAL(tuples * nopt, ops->auto_count());
    static const int want[3] = {TASK_EMB_TABLE, TASK_EMB_ROW, TASK_EMB_COLUMN};
    for (int k = 0; k < 3; k++) {
        point_t p = dlrm_point(TASK_EMB_NONE, 1000);
        CU_ASSERT_EQUAL(ops->auto_apply(&p, nopt - 3 + k, 4096), STATUS_OK);
        CU_ASSERT_EQUAL(p.task.detailed.emb_sharding, want[k]);
        CU_ASSERT_EQUAL(p.task.detailed.dp, 4);
        CU_ASSERT_EQUAL(p.task.detailed.micro_batch, 1024);
        CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
        point_t q = tidy_point(1, 1, 64, 0);
        CU_ASSERT_EQUAL(ops->auto_apply(&q, nopt - 3 + k, 4096), STATUS_INVALID_STRATEGY);
        p = dlrm_point(TASK_EMB_NONE, 1000);
        CU_ASSERT_EQUAL(ops->auto_apply(&p, 2 * nopt - 3 + k, 4096), STATUS_INVALID_STRATEGY);
        task_detailed_t c;
        CU_ASSERT_EQUAL(detailed_auto_candidate(nopt - 3 + k, &c), 0);
        CU_ASSERT_EQUAL(detailed_auto_candidate(2 * nopt - 3 + k, &c), 1);
        CU_ASSERT_EQUAL(detailed_auto_option(nopt - 3 + k, &c), 0);
        char text[160];
        detailed_strategy_text(&c, text, sizeof text);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, k == 0 ? "emb-table" : k == 1 ? "emb-row"
                                                                          : "emb-column"));
    }
    point_t p = dlrm_point(TASK_EMB_NONE, 1000);
    CU_ASSERT_EQUAL(ops->auto_apply(&p, 0, 4096), STATUS_INVALID_STRATEGY);
    CU_ASSERT_EQUAL(ops->auto_apply(&p, nopt - 1, 4098), STATUS_INVALID_BATCH_MISMATCH);
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
    point_t p = tidy_point(1, 1, 1, 0);
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
    p = tidy_point(1, 1, 1, 0);
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

/* Per stage: compute events in order, without overlap, from the first
 * start to the last end. */
typedef struct trace_stats {
    int64_t events, stages, fwd, bwd, rec, overlaps, prefill, decode;
    double first[64], last[64], busy_end[64];
    int64_t comm_with_bytes;
} trace_stats;

static void trace_collect(void *ctx, const detailed_event *ev)
{
    trace_stats *t = ctx;
    t->events++;
    if (ev->stage < 0 || ev->stage >= 64)
        return;
    if (ev->stage + 1 > t->stages)
        t->stages = ev->stage + 1;
    if (ev->track != DETAILED_TRACK_COMPUTE) {
        t->comm_with_bytes += ev->bytes > 0 && ev->group >= 2;
        return;
    }
    int64_t s = ev->stage;
    if (ev->start_s < t->busy_end[s] - 1e-12)
        t->overlaps++;
    if (t->first[s] < 0 || ev->start_s < t->first[s])
        t->first[s] = ev->start_s;
    if (ev->start_s + ev->dur_s > t->last[s])
        t->last[s] = ev->start_s + ev->dur_s;
    t->busy_end[s] = ev->start_s + ev->dur_s;
    t->fwd += strcmp(ev->name, "forward") == 0;
    t->bwd += strcmp(ev->name, "backward") == 0;
    t->rec += strcmp(ev->name, "recompute") == 0;
    t->prefill += strcmp(ev->name, "prefill") == 0;
    t->decode += strcmp(ev->name, "decode step") == 0;
}

static void test_trace(void)
{
    /* The bench point: TP8 PP8 (5 chunks per stage) DP16, 512 sequences
     * of 1 = 32 micro-batches per replica, selective recompute. Every
     * stage runs 32 x 5 forwards and as many backwards (each with its
     * recomputation), none overlapping, from the start of the iteration
     * (stage 0 at 0) to its end; the trace is the evaluation's schedule,
     * so it ends at the evaluated iteration time. */
    char path[1024];
    snprintf(path, sizeof path, "%s/points/detailed_llama3_70b.cfg", unit_configs());
    point_t p;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &p, &err), 0);
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    engine_free(&e);
    trace_stats t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 64; i++)
        t.first[i] = -1.0;
    double end = 0.0;
    CU_ASSERT_EQUAL_FATAL(detailed_trace(&p, trace_collect, &t, &end), STATUS_OK);
    CU_ASSERT_EQUAL(t.stages, 8);
    CU_ASSERT_EQUAL(t.fwd, 8 * 32 * 5);
    CU_ASSERT_EQUAL(t.bwd, 8 * 32 * 5);
    CU_ASSERT_EQUAL(t.rec, 8 * 32 * 5);
    CU_ASSERT_EQUAL(t.overlaps, 0);
    CU_ASSERT(t.comm_with_bytes > 0);
    CU_ASSERT_EQUAL(t.first[0], 0.0);
    double last = 0.0;
    for (int s = 0; s < 8; s++) {
        CU_ASSERT(t.first[s] >= 0.0 && t.first[s] < t.last[s]);
        last = t.last[s] > last ? t.last[s] : last;
    }
    CU_ASSERT(end >= last);
    CU_ASSERT(fabs(end - r.iteration_time_s) < 1e-6);
    /* every stage's gradient reduction and optimizer is in it */
    CU_ASSERT(t.comm_with_bytes > 8 * 32 * 5);

    /* serving: one request's life in the steady state, its TTFT, then a
     * step per further token, ending where the evaluation's e2e does */
    snprintf(path, sizeof path, "%s/points/detailed_llama2_70b_inference.cfg", unit_configs());
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &p, &err), 0);
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 64; i++)
        t.first[i] = -1.0;
    CU_ASSERT_EQUAL_FATAL(detailed_trace(&p, trace_collect, &t, &end), STATUS_OK);
    CU_ASSERT_EQUAL(t.prefill, 1);
    CU_ASSERT_EQUAL(t.decode, p.task.detailed.decode_tokens - 1);
    CU_ASSERT_EQUAL(t.overlaps, 0);
    engine_init(&e, false);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    engine_free(&e);
    UNIT_ASSERT_CLOSE(end, r.iteration_time_s, 1e-9);
}

/* The trace of every schedule, interleaving, pipeline depth, recompute
 * mode and ZeRO stage ends at the evaluated iteration time (within
 * 1e-6 s), its compute never overlapping on a stage. */
static void test_trace_matches_eval(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/points/detailed_llama3_70b.cfg", unit_configs());
    point_t base;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &base, &err), 0);
    engine e;
    engine_init(&e, false);
    static const int64_t pps[] = {1, 2, 4, 8, 16}, vpps[] = {1, 2, 5};
    int checked = 0, bad = 0;
    for (int sc = 0; sc < 2; sc++)
        for (size_t a = 0; a < sizeof pps / sizeof pps[0]; a++)
            for (size_t b = 0; b < sizeof vpps / sizeof vpps[0]; b++)
                for (int rc = 0; rc < 4; rc++)
                    for (int z = 0; z < 4; z += 1) {
                        point_t p = base;
                        task_detailed_t *d = &p.task.detailed;
                        d->schedule = sc ? TASK_SCHEDULE_GPIPE : TASK_SCHEDULE_1F1B;
                        d->pp = pps[a];
                        d->vpp = d->pp > 1 && !sc ? vpps[b] : 1;
                        if (sc && b > 0)
                            continue;
                        d->recompute = (task_recompute)rc;
                        d->zero_stage = z;
                        int64_t cp = d->cp > 0 ? d->cp : 1, tp = d->tp > 0 ? d->tp : 1;
                        d->dp = p.system.devices / (tp * d->pp * cp);
                        d->overlap_dp_comm = (a + b + (size_t)rc) % 2 == 0;
                        result_t r;
                        if (eval_point(&p, &e, &r, NULL) != STATUS_OK)
                            continue;
                        trace_stats t;
                        memset(&t, 0, sizeof t);
                        for (int i = 0; i < 64; i++)
                            t.first[i] = -1.0;
                        double end = 0.0;
                        if (detailed_trace(&p, trace_collect, &t, &end) != STATUS_OK) {
                            bad++;
                            continue;
                        }
                        checked++;
                        if (!(fabs(end - r.iteration_time_s) < 1e-6) || t.overlaps != 0 ||
                            t.stages != d->pp) {
                            fprintf(stderr, "trace: pp %lld vpp %lld %s rc %d zero %d: ends "
                                    "%.9f s, evaluated %.9f s, %lld overlaps\n",
                                    (long long)d->pp, (long long)d->vpp, sc ? "gpipe" : "1f1b",
                                    rc, z, end, r.iteration_time_s, (long long)t.overlaps);
                            bad++;
                        }
                    }
    engine_free(&e);
    fprintf(stderr, "trace: %d points traced\n", checked);
    CU_ASSERT(checked >= 40);
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("detailed", NULL, NULL);
    CU_add_test(s, "Megatron FLOP count", test_megatron_flops);
    CU_add_test(s, "1F1B bubble fraction", test_bubble);
    CU_add_test(s, "ZeRO memory per stage", test_zero_memory);
    CU_add_test(s, "ring all-reduce volume and alpha-beta", test_ring_allreduce);
    CU_add_test(s, "collectives as NCCL picks them (tree, NVLS, protocols)", test_topo_nccl);
    CU_add_test(s, "a placed group costs what an unplaced one does", test_topo_placed);
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
    CU_add_test(s, "DLRM embedding sharding", test_dlrm_sharding);
    CU_add_test(s, "DLRM evaluation", test_dlrm_eval);
    CU_add_test(s, "DLRM auto strategies", test_dlrm_auto);
    CU_add_test(s, "DLRM planner, hybrid embedding, DCNv2", test_dlrm_planner);
    CU_add_test(s, "DLRM hier_auto placement (HugeCTR)", test_dlrm_hier);
    CU_add_test(s, "DLRM replicated table: one update per touched row",
                test_dlrm_replicated_update);
    CU_add_test(s, "fine-tuning: frozen layers and embeddings", test_finetune);
    CU_add_test(s, "point files", test_load_points);
    CU_add_test(s, "trace ends at the evaluated iteration", test_trace_matches_eval);
    CU_add_test(s, "whole-iteration trace", test_trace);
    return unit_run();
}
