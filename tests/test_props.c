/*
 * test_props.c - physical properties of the detailed fidelity, checked
 * over many generated design points (a fixed-seed generator, so every
 * run checks the same points).
 *
 * On the real catalogues (configs/hardware.cfg, configs/stacks.cfg) and
 * generated models, systems and strategies, for every collective
 * algorithm:
 *   - more bandwidth (scale-up or scale-out) is never slower;
 *   - more oversubscription above a pod is never faster;
 *   - a pod level at 1:1 is never faster than the flat network;
 *   - the band holds the nominal time: lo <= t <= hi;
 *   - exposed communication lies in [0, communication]; every figure
 *     computed is finite and non-negative.
 * The same properties are checked on the collectives alone
 * (topo_coll_time) over random groups, sizes and strides.
 * The default collective (`auto`: per collective and size the fastest
 * algorithm and protocol) is never slower than any one fixed algorithm,
 * on generated LLM points and on the DLRM points of configs/points at
 * 64 to 1,024 GPUs, flat and with an oversubscribed pod level.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../driver/load/load.h"
#include "unit.h"

/* xorshift64*: deterministic, good enough to spread cases */
typedef struct prop_rng {
    uint64_t s;
} prop_rng;

static uint64_t prop_next(prop_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * UINT64_C(2685821657736338717);
}

static int64_t prop_pick(prop_rng *r, const int64_t *v, int n)
{
    return v[prop_next(r) % (uint64_t)n];
}

/* The catalogue entries, loaded once per test. */
typedef struct prop_cat {
    hw_t hw[16];
    int nhw;
    stack_desc st[16];
    int nst;
} prop_cat;

static void prop_load(prop_cat *cat)
{
    memset(cat, 0, sizeof *cat);
    char path[1024];
    load_err err;
    config_t cfg;
    snprintf(path, sizeof path, "%s/hardware.cfg", unit_configs());
    CU_ASSERT_EQUAL_FATAL(load_open(&cfg, path, unit_configs(), &err), 0);
    const config_setting_t *l = config_lookup(&cfg, "hardware");
    for (int i = 0; l && i < config_setting_length(l) && cat->nhw < 16; i++)
        if (load_hw(config_setting_get_elem(l, (unsigned)i), &cat->hw[cat->nhw], &err) == 0)
            cat->nhw++;
    config_destroy(&cfg);
    snprintf(path, sizeof path, "%s/stacks.cfg", unit_configs());
    CU_ASSERT_EQUAL_FATAL(load_open(&cfg, path, unit_configs(), &err), 0);
    l = config_lookup(&cfg, "stacks");
    for (int i = 0; l && i < config_setting_length(l) && cat->nst < 16; i++)
        if (load_stack(config_setting_get_elem(l, (unsigned)i), &cat->st[cat->nst], &err) == 0)
            cat->nst++;
    config_destroy(&cfg);
    CU_ASSERT(cat->nhw >= 8);
    CU_ASSERT(cat->nst >= 8);
}

static model_t prop_model(prop_rng *r)
{
    model_t m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "gen");
    m.kind = MODEL_LLM;
    m.causal = true;
    m.d.dropout = -1;
    switch (prop_next(r) % 4) {
    case 0: /* GPT-style, MHA, GeLU, learned positions */
        m.layers = 24; m.hidden = 2048; m.ffn = 8192; m.heads = 16; m.kv_heads = 16;
        m.seq_len = 2048; m.vocab = 51200; m.d.arch = MODEL_ARCH_GPT;
        break;
    case 1: /* Llama-style: GQA, SwiGLU, RoPE, untied head */
        m.layers = 32; m.hidden = 4096; m.ffn = 14336; m.heads = 32; m.kv_heads = 8;
        m.seq_len = 8192; m.vocab = 128256; m.mlp = MODEL_MLP_SWIGLU;
        m.d.position = MODEL_POS_ROPE; m.d.untied_embeddings = true; m.d.arch = MODEL_ARCH_LLAMA;
        break;
    case 2: /* MoE: 8 experts, top 2 */
        m.layers = 32; m.hidden = 4096; m.ffn = 14336; m.heads = 32; m.kv_heads = 8;
        m.seq_len = 4096; m.vocab = 32000; m.mlp = MODEL_MLP_SWIGLU;
        m.d.position = MODEL_POS_ROPE; m.d.experts = 8; m.d.top_k = 2; m.d.arch = MODEL_ARCH_MIXTRAL;
        break;
    default: /* an uneven layer count */
        m.layers = 30; m.hidden = 5120; m.ffn = 20480; m.heads = 40; m.kv_heads = 40;
        m.seq_len = 2048; m.vocab = 50368; m.d.arch = MODEL_ARCH_MPT;
        break;
    }
    return m;
}

/* A point on `hw` with `dev` devices; false when the draw breaks a rule. */
static bool prop_point(prop_rng *r, const prop_cat *cat, point_t *p)
{
    memset(p, 0, sizeof *p);
    p->fidelity = EVAL_DETAILED;
    p->model = prop_model(r);
    const hw_t *hw = &cat->hw[prop_next(r) % (uint64_t)cat->nhw];
    p->system.hw = *hw;
    static const int64_t devs[] = {64, 128, 512, 1024};
    int64_t dpn = hw->scaleup_devices >= 72 ? 72 : 8;
    p->system.devices = dpn == 72 ? 72 * (int64_t)(1 + prop_next(r) % 4) : prop_pick(r, devs, 4);
    p->system.devices_per_node = dpn;
    p->system.algo = (topo_algo)(prop_next(r) % TOPO_NALGO);
    p->stack = cat->st[prop_next(r) % (uint64_t)cat->nst];
    task_detailed_t *t = &p->task.detailed;
    static const int64_t tps[] = {1, 2, 4, 8}, pps[] = {1, 2, 4, 8}, gas[] = {1, 4, 16};
    t->tp = prop_pick(r, tps, 4);
    t->pp = prop_pick(r, pps, 4);
    t->cp = prop_next(r) % 4 == 0 ? 2 : 1;
    if (p->system.devices % (t->tp * t->pp * t->cp) != 0)
        return false;
    t->dp = p->system.devices / (t->tp * t->pp * t->cp);
    t->ep = p->model.d.experts > 0 && t->dp % 8 == 0 && prop_next(r) % 2 ? 8 : 1;
    t->vpp = t->pp > 1 && prop_next(r) % 2 ? 2 : 1;
    t->zero_stage = (int64_t)(prop_next(r) % (t->pp > 1 ? 2 : 4));
    t->sequence_parallel = t->tp > 1 && prop_next(r) % 2;
    t->recompute = (task_recompute)(prop_next(r) % 4);
    t->attention = TASK_ATTENTION_STACK;
    t->overlap_tp_comm = -1;
    t->moe_flex_dispatch = -1;
    t->moe_a2a_overlap = -1;
    t->compiled = -1;
    t->overlap_dp_comm = prop_next(r) % 4 != 0;
    t->layout = prop_next(r) % 2 ? detailed_layout_parse("tp-cp-pp-dp") : 0;
    t->dtype = HW_BF16;
    t->micro_batch = 1 + (int64_t)(prop_next(r) % 2);
    t->global_batch = t->micro_batch * t->dp * prop_pick(r, gas, 3);
    p->task.kind = prop_next(r) % 5 == 0 ? TASK_INFERENCE : TASK_PRETRAIN;
    if (p->task.kind == TASK_INFERENCE) {
        t->zero_stage = 0;
        t->recompute = TASK_RECOMPUTE_NONE;
        t->vpp = 1;
        t->decode_tokens = 128;
        t->prompt_tokens = 1024;
        t->global_batch = t->micro_batch * t->dp;
    }
    return true;
}

/* Builds the topology; false when the system does not derive. */
static bool prop_derive(point_t *p)
{
    const char *bad = NULL;
    return topo_system_derive(&p->system, &bad) == STATUS_OK;
}

static bool prop_eval(const point_t *p, engine *e, result_t *r)
{
    return eval_point(p, e, r, NULL) == STATUS_OK;
}

/* a <= b up to rounding */
static bool prop_le(double a, double b)
{
    return a <= b * (1.0 + 1e-9) + 1e-15;
}

static void prop_check_figures(const result_t *r, int *bad)
{
    double comm = r->comm_allreduce_s + r->comm_allgather_s + r->comm_reducescatter_s +
                  r->comm_alltoall_s + r->comm_p2p_s;
    bool ok = isfinite(r->iteration_time_s) && r->iteration_time_s > 0 &&
              isfinite(comm) && comm >= 0 && r->comm_exposed_s >= 0 &&
              prop_le(r->comm_exposed_s, comm) && isfinite(r->compute_gemm_s) &&
              r->compute_gemm_s > 0 && isfinite(r->mem_total_bytes_per_device) &&
              prop_le(r->iteration_time_lo_s, r->iteration_time_s) &&
              prop_le(r->iteration_time_s, r->iteration_time_hi_s);
    if (!ok) {
        fprintf(stderr, "props: figures t %g [%g, %g] comm %g exposed %g compute %g\n",
                r->iteration_time_s, r->iteration_time_lo_s, r->iteration_time_hi_s, comm,
                r->comm_exposed_s, r->compute_gemm_s);
        (*bad)++;
    }
}

static void test_props_points(void)
{
    prop_cat cat;
    prop_load(&cat);
    prop_rng rng = {UINT64_C(0x9e3779b97f4a7c15)};
    engine e;
    engine_init(&e, false);
    int evaluated = 0, bad_bw = 0, bad_over = 0, bad_pod = 0, bad_fig = 0;
    for (int i = 0; i < 6000; i++) {
        point_t p;
        if (!prop_point(&rng, &cat, &p) || !prop_derive(&p))
            continue;
        result_t r0, r1;
        if (!prop_eval(&p, &e, &r0))
            continue;
        evaluated++;
        prop_check_figures(&r0, &bad_fig);
        /* more bandwidth: NIC and scale-up doubled */
        point_t q = p;
        q.system.hw.nic_bytes_per_s *= 2.0;
        q.system.hw.scaleup_bytes_per_s *= 2.0;
        if (prop_derive(&q) && prop_eval(&q, &e, &r1) &&
            !prop_le(r1.iteration_time_s, r0.iteration_time_s)) {
            fprintf(stderr, "props: more bandwidth slower (%g > %g s), point %d\n",
                    r1.iteration_time_s, r0.iteration_time_s, i);
            bad_bw++;
        }
        /* a 1:1 pod level of a quarter of the system, then 1:4 above it */
        if (p.system.devices >= 4 * p.system.devices_per_node) {
            point_t a = p, b = p;
            a.system.pod_devices = p.system.devices / 4;
            a.system.pod_oversubscription = 1.0;
            b.system.pod_devices = p.system.devices / 4;
            b.system.pod_oversubscription = 4.0;
            result_t ra, rb;
            if (prop_derive(&a) && prop_eval(&a, &e, &ra)) {
                if (!prop_le(r0.iteration_time_s, ra.iteration_time_s)) {
                    fprintf(stderr, "props: a 1:1 pod faster than flat (%g < %g s), point %d\n",
                            ra.iteration_time_s, r0.iteration_time_s, i);
                    bad_pod++;
                }
                if (prop_derive(&b) && prop_eval(&b, &e, &rb) &&
                    !prop_le(ra.iteration_time_s, rb.iteration_time_s)) {
                    fprintf(stderr, "props: oversubscription faster (%g < %g s), point %d\n",
                            rb.iteration_time_s, ra.iteration_time_s, i);
                    bad_over++;
                }
            }
        }
    }
    engine_free(&e);
    fprintf(stderr, "props: %d points evaluated\n", evaluated);
    CU_ASSERT(evaluated > 500);
    CU_ASSERT_EQUAL(bad_fig, 0);
    CU_ASSERT_EQUAL(bad_bw, 0);
    CU_ASSERT_EQUAL(bad_pod, 0);
    CU_ASSERT_EQUAL(bad_over, 0);
}

static void test_props_collectives(void)
{
    prop_cat cat;
    prop_load(&cat);
    prop_rng rng = {UINT64_C(0x2545f4914f6cdd1d)};
    int checked = 0, bad = 0;
    for (int i = 0; i < 20000; i++) {
        const hw_t *hw = &cat.hw[prop_next(&rng) % (uint64_t)cat.nhw];
        int64_t dpn = hw->scaleup_devices >= 72 ? 72 : 8;
        int64_t devices = dpn * (int64_t)(4u << (prop_next(&rng) % 6));
        topo_algo algo = (topo_algo)(prop_next(&rng) % TOPO_NALGO);
        topo_coll coll = (topo_coll)(prop_next(&rng) % TOPO_NCOLL);
        int64_t stride = (int64_t)1 << (prop_next(&rng) % 6);
        int64_t n = (int64_t)2 << (prop_next(&rng) % 8);
        if (n * stride > devices)
            continue;
        double bytes = (double)(1u << (prop_next(&rng) % 30));
        const char *why = NULL;
        topo_t flat, fast, pod1, pod4;
        double nic = hw->nic_bytes_per_s;
        if (topo_build(&flat, hw, devices, dpn, nic, 0, 1.0, algo, &why) != STATUS_OK ||
            topo_build(&fast, hw, devices, dpn, 2.0 * nic, 0, 1.0, algo, &why) != STATUS_OK ||
            topo_build(&pod1, hw, devices, dpn, nic, devices / 4, 1.0, algo, &why) != STATUS_OK ||
            topo_build(&pod4, hw, devices, dpn, nic, devices / 4, 4.0, algo, &why) != STATUS_OK)
            continue;
        double t = topo_coll_time(&flat, coll, n, stride, bytes);
        double tf = topo_coll_time(&fast, coll, n, stride, bytes);
        double t1 = topo_coll_time(&pod1, coll, n, stride, bytes);
        double t4 = topo_coll_time(&pod4, coll, n, stride, bytes);
        checked++;
        if (!prop_le(tf, t) || !prop_le(t, t1) || !prop_le(t1, t4) || !(t >= 0)) {
            fprintf(stderr, "props: collective %d algo %d n %lld stride %lld bytes %g on %lld "
                    "devices: flat %g, 2x nic %g, pod 1:1 %g, pod 1:4 %g\n",
                    (int)coll, (int)algo, (long long)n, (long long)stride, bytes,
                    (long long)devices, t, tf, t1, t4);
            bad++;
        }
    }
    CU_ASSERT(checked > 5000);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The time of p with collective algorithm `a`; false when it fails. */
static bool prop_time_with(const point_t *p, topo_algo a, engine *e, double *t)
{
    point_t q = *p;
    q.system.algo = a;
    result_t r;
    if (!prop_derive(&q) || !prop_eval(&q, e, &r))
        return false;
    *t = r.iteration_time_s;
    return true;
}

/* Counts points where auto is slower than a fixed algorithm. */
static void prop_auto_check(const point_t *p, engine *e, int *checked, int *bad)
{
    double ta;
    if (!prop_time_with(p, TOPO_AUTO, e, &ta))
        return;
    (*checked)++;
    for (int a = TOPO_RING; a < TOPO_NALGO; a++) {
        double tf;
        if (prop_time_with(p, (topo_algo)a, e, &tf) && !prop_le(ta, tf)) {
            fprintf(stderr, "props: auto slower than algorithm %d (%g > %g s) on %s, %lld "
                    "devices\n", a, ta, tf, p->model.name, (long long)p->system.devices);
            (*bad)++;
        }
    }
}

static void test_props_auto(void)
{
    prop_cat cat;
    prop_load(&cat);
    prop_rng rng = {UINT64_C(0x853c49e6748fea9b)};
    engine e;
    engine_init(&e, false);
    int llm = 0, dlrm = 0, bad = 0, faster = 0;
    for (int i = 0; i < 1500; i++) {
        point_t p;
        if (!prop_point(&rng, &cat, &p) || p.system.devices < 64)
            continue;
        prop_auto_check(&p, &e, &llm, &bad);
    }
    /* DLRM: the shipped points, data parallel over 64 to 1,024 GPUs at
     * their global batch, flat and with pods of a quarter at 1:4 */
    static const char *const files[] = {"detailed_dlrm_mlperf.cfg", "detailed_dlrm_multihot_64.cfg"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/points/%s", unit_configs(), files[f]);
        point_t base;
        load_err err;
        CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &base, &err), 0);
        for (int64_t n = 64; n <= 1024; n *= 2) {
            for (int pod = 0; pod < 2; pod++) {
                point_t p = base;
                p.system.devices = n;
                p.system.devices_per_node = 8;
                p.system.pod_devices = pod ? n / 4 : 0;
                p.system.pod_oversubscription = pod ? 4.0 : 1.0;
                p.task.detailed.dp = n;
                prop_auto_check(&p, &e, &dlrm, &bad);
                double ta, tr;
                if (prop_time_with(&p, TOPO_AUTO, &e, &ta) &&
                    prop_time_with(&p, TOPO_RING, &e, &tr) && ta < tr * 0.99)
                    faster++;
            }
        }
    }
    engine_free(&e);
    fprintf(stderr, "props: auto checked on %d LLM and %d DLRM points, %d DLRM faster than "
            "ring\n", llm, dlrm, faster);
    CU_ASSERT(llm > 300);
    CU_ASSERT(dlrm >= 15);
    CU_ASSERT(faster > 0); /* small all-reduces at scale: not a ring */
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("physical properties", NULL, NULL);
    CU_add_test(s, "collectives: bandwidth, pods, oversubscription", test_props_collectives);
    CU_add_test(s, "design points: bandwidth, pods, oversubscription, bands, figures",
                test_props_points);
    CU_add_test(s, "default collective never slower than a fixed algorithm", test_props_auto);
    return unit_run();
}
