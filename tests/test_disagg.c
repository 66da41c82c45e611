/*
 * test_disagg.c - prefill/decode disaggregation (cost/detailed/
 * serve/disagg.c): the point file, the KV transfer on the topology (its
 * bytes by hand, NVLink inside a domain, the slower side across
 * hardware), TTFT growing by the exposed transfer, rate matching naming
 * the binding pool and sizing the prefill pool, the bound by colocated
 * serving on the same GPUs with an infinitely fast link, both pools in
 * the cost, and the rules.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed/serve/serve.h"
#include "../driver/load/load.h"
#include "unit.h"

/* The repository's disaggregated point: Llama-2-70B on vLLM, one H100
 * node prefilling at TP8 for two decoding at TP8, 64 requests in flight,
 * ISL 2048, OSL 256. */
static point_t disagg_point(void)
{
    return unit_point("detailed_llama2_70b_disagg.cfg");
}

static result_t run(const point_t *p)
{
    engine e;
    engine_init(&e, false);
    result_t r;
    const char *where = NULL;
    status_code rc = eval_point(p, &e, &r, &where);
    if (rc != STATUS_OK)
        fprintf(stderr, "eval: %s (%s)\n", status_name(rc), where ? where : "-");
    CU_ASSERT_EQUAL(rc, STATUS_OK);
    engine_free(&e);
    return r;
}

/* A pool's devices as a new system of the same hardware. */
static void set_devices(topo_system_t *s, int64_t n)
{
    const char *bad = NULL;
    s->devices = n;
    CU_ASSERT_FATAL(topo_system_derive(s, &bad) == STATUS_OK);
}

/* The scale-out links of a system (what joins two 8-GPU nodes' pools)
 * made (practically) infinitely fast; its scale-up links, which carry
 * the TP all-reduces of the steps, as they are. */
static void fast_links(topo_system_t *s)
{
    const char *bad = NULL;
    s->hw.nic_bytes_per_s = 1e30;
    s->hw.nic_latency_s = 0.0;
    CU_ASSERT_FATAL(topo_system_derive(s, &bad) == STATUS_OK);
}

static void test_point_and_transfer(void)
{
    point_t p = disagg_point();
    CU_ASSERT(p.prefill.on && !p.prefill.rate_matched && !p.prefill.layerwise);
    CU_ASSERT_EQUAL(p.prefill.tp, 8);
    CU_ASSERT_EQUAL(p.prefill.system.devices, 8);
    result_t r = run(&p);
    CU_ASSERT_EQUAL(r.prefill_devices, 8.0);
    /* the KV one prefill device sends (its decode peer receives as
     * much): 2048 tokens x 80 layers x K and V x 8 kv heads / tp 8 x
     * head 128 x 2 bytes = 83.9 MB, across the 400 Gb/s NIC between the
     * two 8-GPU nodes at the hardware's collective efficiency, one
     * network step's latency (topo.h, point-to-point) */
    const hw_t *h = &p.system.hw;
    double bytes = 2048.0 * 80.0 * 2.0 * 1.0 * 128.0 * 2.0;
    double want = bytes / (h->nic_bytes_per_s * h->nic_efficiency) + h->nic_latency_s;
    UNIT_ASSERT_CLOSE(r.kv_transfer_s, want, 1e-12);
    UNIT_ASSERT_CLOSE(r.kv_transfer_exposed_s, r.kv_transfer_s, 1e-15);
    /* layer by layer behind the prefill: at most the whole, at least a
     * layer's share; with four prefill replicas (the decode pool
     * binding, no prefill queue) TTFT falls by the difference */
    set_devices(&p.prefill.system, 32);
    result_t a = run(&p);
    p.prefill.layerwise = true;
    result_t l = run(&p);
    CU_ASSERT(l.kv_transfer_exposed_s < r.kv_transfer_s);
    CU_ASSERT(l.kv_transfer_exposed_s >= r.kv_transfer_s / 80.0 * (1.0 - 1e-12));
    UNIT_ASSERT_CLOSE(a.ttft_s - l.ttft_s, a.kv_transfer_exposed_s - l.kv_transfer_exposed_s,
                      1e-6);
    /* both pools inside one NVLink domain (GB200 NVL72: 8 + 8 of its 72
     * GPUs): the transfer crosses NVLink, not the NIC */
    point_t g = disagg_point();
    topo_system_t nvl = g.system;
    point_t q = unit_point("detailed_llama3_405b_gb200.cfg"); /* the catalogue's GB200 */
    nvl.hw = q.system.hw;
    set_devices(&nvl, 8);
    g.system = nvl;
    g.task.detailed.dp = 1;
    g.prefill.system = nvl;
    result_t n = run(&g);
    double want_nvl = bytes / (nvl.hw.scaleup_bytes_per_s * nvl.hw.scaleup_efficiency) +
                      nvl.hw.scaleup_latency_s;
    UNIT_ASSERT_CLOSE(n.kv_transfer_s, want_nvl, 1e-12);
    CU_ASSERT(n.kv_transfer_s < r.kv_transfer_s / 5.0);
    /* pools on different hardware meet across the scale-out network,
     * the slower side deciding: a prefill pool with an eighth of the NIC */
    point_t s = disagg_point();
    snprintf(s.prefill.system.hw.name, sizeof s.prefill.system.hw.name, "h100-slow-nic");
    s.prefill.system.hw.nic_bytes_per_s /= 8.0;
    set_devices(&s.prefill.system, 8);
    result_t sr = run(&s);
    const hw_t *sh = &s.prefill.system.hw;
    UNIT_ASSERT_CLOSE(sr.kv_transfer_s,
                      bytes / (sh->nic_bytes_per_s * sh->nic_efficiency) + sh->nic_latency_s,
                      1e-12);
}

static void test_ttft_grows_by_transfer(void)
{
    /* four prefill replicas for two decode replicas: the decode pool
     * binds, the prefill pool's wait is the same with and without the
     * link (the transfer is far from limiting its rate): TTFT differs
     * by the exposed transfer alone, TPOT and throughput not at all */
    point_t p = disagg_point();
    set_devices(&p.prefill.system, 32);
    result_t slow = run(&p);
    CU_ASSERT(slow.prefill_decode_rate_ratio > 1.0);
    fast_links(&p.prefill.system);
    fast_links(&p.system);
    result_t fast = run(&p);
    CU_ASSERT(fast.kv_transfer_s < 1e-9);
    UNIT_ASSERT_CLOSE(slow.ttft_s - fast.ttft_s, slow.kv_transfer_exposed_s, 1e-6);
    CU_ASSERT(slow.kv_transfer_exposed_s > 1e-3);
}

static void test_rate_matching(void)
{
    point_t p = disagg_point();
    p.task.detailed.ttft_max_s = 0.0; /* no SLA: matched at full utilisation */
    /* one prefill replica for two decode replicas at 32 requests each,
     * ISL 2048 / OSL 256: the prefill pool binds and sets the rate */
    result_t a = run(&p);
    CU_ASSERT(a.prefill_decode_rate_ratio < 1.0);
    UNIT_ASSERT_CLOSE(a.requests_per_s, a.prefill_capacity_requests_per_s, 1e-12);
    UNIT_ASSERT_CLOSE(a.output_tokens_per_s, a.requests_per_s * 256.0, 1e-12);
    /* the replicas the decode pool's rate needs, each at the rate one
     * replica prefills */
    double mu = a.prefill_capacity_requests_per_s;
    CU_ASSERT_EQUAL(a.prefill_replicas_matched, ceil(a.decode_capacity_requests_per_s / mu));
    /* that many: the decode pool binds, its rate is served */
    set_devices(&p.prefill.system, 8 * (int64_t)a.prefill_replicas_matched);
    result_t b = run(&p);
    CU_ASSERT(b.prefill_decode_rate_ratio >= 1.0);
    UNIT_ASSERT_CLOSE(b.requests_per_s, b.decode_capacity_requests_per_s, 1e-12);
    CU_ASSERT(b.ttft_s < a.ttft_s);
    /* "auto" sizes the pool so */
    p.prefill.rate_matched = true;
    set_devices(&p.prefill.system, 8);
    result_t c = run(&p);
    CU_ASSERT_EQUAL(c.prefill_devices, b.prefill_devices);
    UNIT_ASSERT_CLOSE(c.output_tokens_per_s, b.output_tokens_per_s, 1e-12);
    UNIT_ASSERT_CLOSE(c.output_tokens_per_s_per_device, c.output_tokens_per_s / (16.0 + c.prefill_devices),
                      1e-12);
    /* with a TTFT SLA the pool keeps the headroom its wait needs */
    p.task.detailed.ttft_max_s = 0.3;
    result_t d = run(&p);
    CU_ASSERT(d.prefill_devices >= c.prefill_devices);
    CU_ASSERT(d.ttft_s <= 0.3);
    /* an open-loop rate past the prefill pool's capacity saturates */
    point_t q = disagg_point();
    q.task.detailed.concurrency = 0;
    q.task.detailed.request_rate = 0.5 * a.prefill_capacity_requests_per_s;
    result_t e = run(&q);
    UNIT_ASSERT_CLOSE(e.requests_per_s, q.task.detailed.request_rate, 1e-12);
    q.task.detailed.request_rate = 1.5 * a.prefill_capacity_requests_per_s;
    result_t f = run(&q);
    CU_ASSERT_EQUAL(f.sla_met, 0.0);
}

/* A concurrency beyond the decode pool's KV limit: the loop runs at the
 * limit and the others wait for a slot before their first token, so
 * every request of the loop is in its cycle (Little's law: requests/s x
 * (TTFT + (OSL - 1) TPOT) holds the concurrency asked for) and a TTFT
 * SLA sees the wait, whichever pool binds (the pool of one prefill node
 * binds, "auto" sizes it so the decode pool binds). */
static void test_beyond_kv_limit(void)
{
    for (int auto_pool = 0; auto_pool < 2; auto_pool++) {
        point_t p = disagg_point();
        p.prefill.rate_matched = auto_pool;
        p.task.detailed.tpot_max_s = 0.0; /* the TTFT SLA alone */
        p.task.detailed.concurrency = TASK_CONC_MAX;
        result_t m = run(&p);
        p.task.detailed.concurrency = 10 * m.concurrency_max;
        result_t r = run(&p);
        double held = r.requests_per_s * r.iteration_time_s;
        CU_ASSERT(held >= 0.999 * (double)p.task.detailed.concurrency);
        CU_ASSERT(r.ttft_s > 9.0 * (double)m.concurrency_max / r.requests_per_s);
        CU_ASSERT_EQUAL(r.sla_met, 0.0);
        UNIT_ASSERT_CLOSE(r.tpot_s, m.tpot_s, 1e-12); /* the running ones' as at the limit */
        UNIT_ASSERT_CLOSE(r.requests_per_s, m.requests_per_s, 1e-12);
    }
}

/* An open loop below the decode pool's capacity serves its rate: the
 * decode pool of gpt-oss-120b (two H200, a prefill pool of two more)
 * whose step rises steeply at small batches, at rates to 0.95 of its
 * capacity (issue 29: at 5 requests/s the secant failed and the row
 * reported the capacity, 26.7 requests/s). */
static void test_rate_below_capacity(void)
{
    point_t p = unit_point("detailed_gpt_oss_120b_serving.cfg");
    set_devices(&p.system, 2);
    p.task.detailed.dp = 2;
    p.prefill = (point_prefill){.on = true, .tp = 1, .pp = 1};
    p.prefill.system = p.system;
    p.task.detailed.concurrency = TASK_CONC_MAX;
    result_t cap = run(&p);
    CU_ASSERT(cap.prefill_decode_rate_ratio > 1.0); /* the decode pool binds */
    p.task.detailed.concurrency = 0;
    for (int i = 1; i <= 19; i++) {
        p.task.detailed.request_rate = 0.05 * i * cap.decode_capacity_requests_per_s;
        result_t r = run(&p);
        UNIT_ASSERT_CLOSE(r.requests_per_s, p.task.detailed.request_rate, 1e-12);
    }
}

static void test_bounded_by_colocated(void)
{
    /* the same 16 GPUs colocated (two TP8 replicas) and split into one
     * prefill and one decode replica, every link infinitely fast, each
     * at its largest concurrency: a colocated replica runs prompts as
     * chunks beside its decodes at the marginal cost of a chunk, so its
     * GPU time per request is at most the sum of the two pools', and the
     * disaggregated output tokens/s per GPU stays at or below it */
    point_t d = disagg_point();
    set_devices(&d.system, 8);
    d.task.detailed.dp = 1;
    d.task.detailed.concurrency = TASK_CONC_MAX;
    d.task.detailed.ttft_max_s = d.task.detailed.tpot_max_s = 0.0;
    fast_links(&d.system);
    fast_links(&d.prefill.system);
    point_t c = d;
    c.prefill.on = false;
    set_devices(&c.system, 16);
    c.task.detailed.dp = 2;
    result_t rd = run(&d), rc = run(&c);
    CU_ASSERT_EQUAL(rd.prefill_devices, 8.0);
    CU_ASSERT(rd.output_tokens_per_s_per_device <= rc.output_tokens_per_s_per_device);
    /* and so for other workloads (short and long outputs) */
    for (int i = 0; i < 2; i++) {
        d.task.detailed.decode_tokens = c.task.detailed.decode_tokens = i ? 1024 : 64;
        rd = run(&d);
        rc = run(&c);
        CU_ASSERT(rd.output_tokens_per_s_per_device <= rc.output_tokens_per_s_per_device);
    }
    /* without the prefill chunks in their steps the decodes run faster */
    CU_ASSERT(rd.tpot_s < rc.tpot_s);
    CU_ASSERT(rd.itl_p99_s < rc.itl_p99_s);
}

static void test_cost_of_both_pools(void)
{
    /* the hourly price of all 24 GPUs over the output tokens: USD per
     * 1e6 tokens = 24 x price / 3600 / tokens/s x 1e6 (the iteration's
     * requests rounded to whole ones: 2 %) */
    point_t p = disagg_point();
    result_t r = run(&p);
    double price = p.system.hw.price_per_hour_usd;
    UNIT_ASSERT_CLOSE(r.cost_per_million_tokens_usd,
                      24.0 * price / 3600.0 / r.output_tokens_per_s * 1e6, 0.02);
    UNIT_ASSERT_CLOSE(r.tokens_per_s_per_device, r.output_tokens_per_s / 24.0, 1e-12);
    /* a colocated point has no pool columns */
    point_t c = p;
    c.prefill.on = false;
    result_t rc = run(&c);
    CU_ASSERT(isnan(rc.prefill_devices) && isnan(rc.kv_transfer_s) &&
              isnan(rc.prefill_decode_rate_ratio));
    /* serving rows carry no training-only figures: NaN, not zeros */
    CU_ASSERT(isnan(r.mem_grads_bytes_per_device) && isnan(r.mem_optimizer_bytes_per_device) &&
              isnan(r.pipeline_bubble_s) && isnan(r.optimizer_s));
    CU_ASSERT(isnan(rc.mem_grads_bytes_per_device) && isnan(rc.mem_optimizer_bytes_per_device));
    /* the memory columns add up to the total the KV capacity counts */
    CU_ASSERT(rc.mem_weights_bytes_per_device + rc.mem_activations_bytes_per_device +
                  rc.mem_kv_cache_bytes_per_device <= rc.mem_total_bytes_per_device);
}

static void test_rules(void)
{
    engine e;
    engine_init(&e, false);
    result_t r;
    const char *where = NULL;
    point_t p = disagg_point();
    p.task.detailed.scheduler = TASK_SCHED_STATIC;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, &where), STATUS_INVALID_VALUE);
    p = disagg_point();
    p.prefill.tp = 3; /* 8 devices are no whole number of replicas */
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, &where), STATUS_INVALID_PRODUCT);
    CU_ASSERT_EQUAL(strncmp(where, "prefill.devices:", 16), 0);
    p = disagg_point();
    p.task.detailed.decode_tokens = 1;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, &where), STATUS_INVALID_VALUE);
    /* a prefill pool whose replica cannot hold the model: infeasible */
    p = disagg_point();
    p.prefill.tp = 1;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, &where), STATUS_INFEASIBLE_MEMORY);
    engine_free(&e);
}

/* A copy of the repository's disaggregated point with its system line
 * (unless NULL) and prefill group replaced; load_point's verdict, the
 * point in *p, the message in *err. */
static int load_lines(const char *system, const char *prefill, point_t *p, load_err *err)
{
    char src[1024], dst[1024], line[512];
    snprintf(src, sizeof src, "%s/points/detailed_llama2_70b_disagg.cfg", unit_configs());
    const char *tmp = getenv("MADSWEEP_TEST_TMP");
    snprintf(dst, sizeof dst, "%s/disagg_variant.cfg", tmp ? tmp : ".");
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    CU_ASSERT_FATAL(in && out);
    while (fgets(line, sizeof line, in))
        fputs(strncmp(line, "prefill", 7) == 0                 ? prefill
              : system && strncmp(line, "system", 6) == 0 ? system
                                                          : line,
              out);
    fclose(in);
    fclose(out);
    return load_point(dst, unit_configs(), p, err);
}

static int load_variant(const char *prefill, load_err *err)
{
    point_t p;
    return load_lines(NULL, prefill, &p, err);
}

/* A prefill pool on the system's own hardware (no hardware key): its
 * own NIC carries the KV transfer (the slower side decides: 1 Gb/s
 * against the H100's 400), and where it states none, the system's NIC
 * and scale-up domain are its own (issue 29: the decode system's NIC
 * was taken and the pool's own ignored, the pool's topology left at the
 * hardware's defaults). The message: 2048 tokens x 80 layers x K and V
 * x 1 kv head a device x 128 x 2 bytes, as test_point_and_transfer. */
static void test_pool_network(void)
{
    load_err err;
    point_t p;
    double bytes = 2048.0 * 80.0 * 2.0 * 1.0 * 128.0 * 2.0;
    CU_ASSERT_FATAL(load_lines(NULL, "prefill = { devices = 8; tp = 8; nic_gbps_per_device = 1.0; };\n",
                               &p, &err) == 0);
    const hw_t *h = &p.system.hw;
    result_t r = run(&p);
    UNIT_ASSERT_CLOSE(r.kv_transfer_s, bytes / (1e9 / 8.0 * h->nic_efficiency) + h->nic_latency_s,
                      1e-12);
    /* the system's NIC and 4-device nodes, the pool stating neither */
    const char *sys = "system = { name = \"h100-16-decode\"; hardware = \"h100-sxm-80g\"; "
                      "devices = 16; devices_per_node = 4; nic_gbps_per_device = 2.0; };\n";
    CU_ASSERT_FATAL(load_lines(sys, "prefill = { devices = 8; tp = 8; };\n", &p, &err) == 0);
    CU_ASSERT_EQUAL(p.prefill.system.topo.level[0].span, 4);
    UNIT_ASSERT_CLOSE(p.prefill.system.nic_gbps_per_device, 2.0, 1e-15);
    /* a pool on other hardware keeps that hardware's own */
    CU_ASSERT_FATAL(load_lines(sys, "prefill = { devices = 8; tp = 8; hardware = \"h200\"; };\n",
                               &p, &err) == 0);
    CU_ASSERT_EQUAL(p.prefill.system.topo.level[0].span, 8);
    CU_ASSERT_EQUAL(p.prefill.system.nic_gbps_per_device, 0.0);
}

static void test_load_errors(void)
{
    load_err err;
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = \"auto\"; };\n", &err), 0);
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = 8; tp = 3; };\n", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "prefill"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "invalid:product"));
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = 12; tp = 4; };\n", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "prefill pool of 12 devices"));
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = \"many\"; };\n", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "\"auto\""));
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = 8; kv_transfer = \"later\"; };\n",
                                 &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "layerwise"));
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = 8; hardware = \"h100-sxm\"; };\n",
                                 &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "h100-sxm-80g")); /* did you mean */
    CU_ASSERT_EQUAL(load_variant("prefill = { devices = 8; tpp = 8; };\n", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "unknown key 'tpp'"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("disagg", NULL, NULL);
    CU_add_test(s, "point file and KV transfer on the topology", test_point_and_transfer);
    CU_add_test(s, "TTFT grows by the exposed transfer", test_ttft_grows_by_transfer);
    CU_add_test(s, "rate matching: the binding pool, sizing", test_rate_matching);
    CU_add_test(s, "beyond the KV limit: the others wait for a slot", test_beyond_kv_limit);
    CU_add_test(s, "an open loop below the decode capacity serves its rate",
                test_rate_below_capacity);
    CU_add_test(s, "bounded by colocated on the same GPUs", test_bounded_by_colocated);
    CU_add_test(s, "cost and energy of both pools", test_cost_of_both_pools);
    CU_add_test(s, "rules", test_rules);
    CU_add_test(s, "point files refused with the key", test_load_errors);
    CU_add_test(s, "a pool on the system's hardware: its NIC, the system's network", test_pool_network);
    return unit_run();
}
