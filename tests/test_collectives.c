/*
 * test_collectives.c - hand-derived tests of the detailed fidelity's
 * collectives: ring all-reduce volume and its alpha-beta time, a group
 * placed once on the topology costing what an unplaced one does, and the
 * algorithms and protocols NCCL picks (src/graph/tuning.cc), each expected
 * value worked out in the comment beside it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../cost/detailed/llm/llm.h"
#include "unit.h"

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

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("collectives", NULL, NULL);
    CU_add_test(s, "ring all-reduce volume and alpha-beta", test_ring_allreduce);
    CU_add_test(s, "collectives as NCCL picks them (tree, NVLS, protocols)", test_topo_nccl);
    CU_add_test(s, "a placed group costs what an unplaced one does", test_topo_placed);
    return unit_run();
}
