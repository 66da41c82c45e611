/*
 * test_deploy.c - serving as it is deployed (issue 28): the defect points
 * of tests/data/serving_defects/ (each test failed before its fix: the
 * figures the points' comments quote), and the closed loop of
 * serve/ttft.c against the step-level simulation of tests/servesim.c
 * under both scheduling policies and a benchmark's rounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed/serve/serve.h"
#include "../driver/load/load.h"
#include "../driver/query/engine_args.h"
#include "servesim.h"
#include "unit.h"

/* A point of tests/data/serving_defects/. */
static point_t defect(const char *name)
{
    point_t p;
    load_err err;
    char path[1024];
    const char *src = getenv("MADSWEEP_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/data/serving_defects/%s", src ? src : ".", name);
    int rc = load_point(path, unit_configs(), &p, &err);
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", path, err.text);
    CU_ASSERT_FATAL(rc == 0);
    return p;
}

/* The evaluation's setup and its step model at the nominal facts. */
typedef struct prepared {
    dt_eval v;
    result_t rr;
    sv_model k;
    sv_load w;
} prepared;

static void prepare(const point_t *p, prepared *x)
{
    CU_ASSERT_EQUAL_FATAL(dt_setup(p, &x->v, &x->rr), STATUS_OK);
    CU_ASSERT_FATAL(sv_model_begin(&x->v.c, &x->v.st, &x->v.mem, &x->k, &x->w));
}

/* Defect 1: the decode step divided the routed experts by tp as well as
 * by ep. DeepSeek-V3 FP8 on 8 H200: with ep 8, etp 1 each GPU holds 32
 * whole experts, with ep 1 (etp = tp = 8) 1/8 of all 256; either way a
 * MoE layer's routed experts are 256 x 3 x 7168 x 2048 / 8 = 1.409 GB of
 * FP8 a GPU, which memory counts and a decode step streams. Before the
 * fix the EP layout streamed 1/8 of that (TPOT 16.7 ms against 33.9 ms
 * for the same weights); now the two are within the EP layout's routing
 * imbalance of each other. */
static void test_experts_by_layout(void)
{
    point_t ep = defect("moe_decode_ep8.cfg"), tp = defect("moe_decode_tp8.cfg");
    double want = 256.0 * 3.0 * 7168.0 * 2048.0 / 8.0;
    prepared x;
    prepare(&ep, &x);
    UNIT_ASSERT_CLOSE(x.k.e_loc * x.k.exp_bytes, want, 1e-12);
    prepare(&tp, &x);
    UNIT_ASSERT_CLOSE(x.k.e_loc * x.k.exp_bytes, want, 1e-12);
    result_t re = unit_eval(&ep), rt = unit_eval(&tp);
    UNIT_ASSERT_CLOSE(re.mem_weights_bytes_per_device, rt.mem_weights_bytes_per_device, 1e-12);
    double ratio = re.tpot_s / rt.tpot_s;
    printf("\n  TPOT ep8 %.2f ms, tp8 %.2f ms (ratio %.3f)", 1e3 * re.tpot_s, 1e3 * rt.tpot_s,
           ratio);
    CU_ASSERT(ratio > 0.9 && ratio < 1.25);
}

/* Defect 2: SGLang's per-sequence host time was charged over the
 * replica's 4096 requests under attention DP 8 (327.7 ms of a 370 ms
 * ITL); each DP rank's scheduler runs its own 512: the host part of the
 * decode step is step_host_s + 512 seq_host_s. */
static void test_host_per_rank(void)
{
    point_t p = defect("sglang_adp_host.cfg");
    prepared x;
    prepare(&p, &x);
    sv_parts pt;
    sv_step(&x.k, 0, 0, 0, 4096.0, 2048.0, &pt);
    UNIT_ASSERT_CLOSE(pt.host, x.k.host_step + 512.0 * x.k.host_seq, 1e-12);
    CU_ASSERT(x.k.host_seq > 0.0);
}

/* Defect 3: an FP4 point without kv_precision held its KV in FP4
 * (concurrency_max 6166 against 3083 with FP8 KV). No engine does: an
 * engine that takes the checkpoint's KV scheme (TensorRT-LLM; stack
 * kv_checkpoint) holds an NVFP4 checkpoint's FP8 KV, the others the
 * model dtype's BF16. */
static void test_kv_dtype_default(void)
{
    point_t p = defect("fp4_kv_default.cfg"), f8 = defect("fp4_kv_fp8.cfg");
    CU_ASSERT(p.stack.kv_checkpoint); /* trtllm */
    prepared x;
    prepare(&p, &x);
    CU_ASSERT_EQUAL(dt_kv_dtype(&x.v.c), HW_FP8);
    result_t a = unit_eval(&p), b = unit_eval(&f8);
    CU_ASSERT_EQUAL(a.concurrency_max, b.concurrency_max);
    p.stack.kv_checkpoint = false; /* vLLM/SGLang "auto": BF16, half the tokens */
    prepare(&p, &x);
    CU_ASSERT_EQUAL(dt_kv_dtype(&x.v.c), HW_BF16);
    result_t c = unit_eval(&p);
    CU_ASSERT(c.concurrency_max <= b.concurrency_max / 2 + 1);
    /* a BF16 checkpoint keeps BF16 KV on every engine (the context
     * alone: 671 B parameters in BF16 do not fit 8 B200) */
    p.stack.kv_checkpoint = true;
    p.task.detailed.dtype = HW_BF16;
    p.task.detailed.weight_dtype = TASK_W_BF16;
    CU_ASSERT_EQUAL_FATAL(dt_setup_begin(&p, &x.v), STATUS_OK);
    CU_ASSERT_EQUAL(dt_kv_dtype(&x.v.c), HW_BF16);
}

/* Defect 5: the closed-loop TTFT had no queue. Qwen3-32B BF16 on 2 H100
 * (vLLM, TP2), 4096 + 512 tokens: the KV cache admits 68 of 128
 * requests; the other 60 wait for a slot, one freed every e2e(68) / 68
 * (Little): TTFT(128) = TTFT(68) + 60 / 68 e2e(68). AIConfigurator's
 * silicon measurement of this deployment (vLLM 0.12.0) reads 33.5 s
 * (the point's comment); before, 0.50 s. */
static void test_ttft_queue(void)
{
    point_t p = defect("ttft_no_queue.cfg");
    result_t r = unit_eval(&p);
    int64_t cmax = r.concurrency_max;
    CU_ASSERT(cmax > 32 && cmax < 128);
    p.task.detailed.concurrency = cmax;
    result_t at = unit_eval(&p);
    double e2e = at.ttft_s + 511.0 * at.tpot_s;
    UNIT_ASSERT_CLOSE(r.ttft_s, at.ttft_s + (128.0 - (double)cmax) / (double)cmax * e2e, 1e-9);
    UNIT_ASSERT_CLOSE(r.tpot_s, at.tpot_s, 1e-12);
    UNIT_ASSERT_CLOSE(r.output_tokens_per_s, at.output_tokens_per_s, 1e-9);
    printf("\n  TTFT at 128 requests %.1f s (measured 33.5 s), at %lld %.2f s", r.ttft_s,
           (long long)cmax, at.ttft_s);
    CU_ASSERT(r.ttft_s > 33.5 / 1.5 && r.ttft_s < 33.5 * 1.5);
}

/* Defect 4: the prefill pool had no attn_dp, ep, etp or batch limit of
 * its own: it took the decode pool's attention DP (TTFT 105.0 s with the
 * decode pool's attn_dp 8, 130.7 s with 1, the prefill keys unchanged).
 * Now its figures are its own keys': the decode pool's attn_dp leaves
 * them as they are; the pool's own experts by ep x etp as memory holds
 * them; its batch limit caps the prompts of a prefill step (TensorRT-
 * LLM's prefill workers: max_batch_size 1). */
static void test_prefill_pool_own_layout(void)
{
    point_t p = defect("prefill_pool_attn_dp.cfg");
    result_t a = unit_eval(&p);
    p.task.detailed.attn_dp = 1;
    result_t b = unit_eval(&p);
    UNIT_ASSERT_CLOSE(a.prefill_capacity_requests_per_s, b.prefill_capacity_requests_per_s, 1e-12);
    sv_eval *e = malloc(sizeof *e);
    CU_ASSERT_FATAL(e != NULL);
    result_t r;
    p.prefill.ep = 8;
    p.prefill.etp = 1;
    CU_ASSERT_EQUAL_FATAL(sv_serve_prepare(e, &p, &r), STATUS_OK);
    UNIT_ASSERT_CLOSE(e->pool.k.e_loc * e->pool.k.exp_bytes, 256.0 * 3.0 * 7168.0 * 2048.0 / 8.0,
                      1e-12);
    CU_ASSERT_EQUAL(e->pool.k.ep, 8.0);
    p.task.detailed.prompt_tokens = 1024;
    CU_ASSERT_EQUAL_FATAL(sv_serve_prepare(e, &p, &r), STATUS_OK);
    CU_ASSERT_EQUAL(e->pool.np, 8.0); /* 8192 tokens a step */
    p.prefill.max_seqs = 1;
    CU_ASSERT_EQUAL_FATAL(sv_serve_prepare(e, &p, &r), STATUS_OK);
    CU_ASSERT_EQUAL(e->pool.np, 1.0);
    p.prefill.attn_dp = 8; /* DEP8: a step's prompts spread over 8 ranks */
    p.prefill.max_seqs = 0;
    CU_ASSERT_EQUAL_FATAL(sv_serve_prepare(e, &p, &r), STATUS_OK);
    CU_ASSERT_EQUAL(e->pool.np, 64.0);
    free(e);
    const char *where = NULL;
    p.prefill.attn_dp = 3; /* does not divide the pool's tp */
    CU_ASSERT_EQUAL(eval_check(&p, &where), STATUS_INVALID_VALUE);
}

/* Prefill-first (SGLang's default) with fixed lengths in a benchmark of
 * 20 rounds: the waves of ttft.c against the simulated engine, TTFT and
 * TPOT within 15 %. Llama 2 70B at TP8 on H100 with SGLang's facts. */
static void test_waves_vs_simulation(void)
{
    static const struct {
        int64_t C, isl, osl;
    } cases[] = {{4, 2048, 256}, {32, 2048, 256}, {64, 1024, 512}, {128, 512, 128}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        point_t p = unit_point("detailed_llama2_70b_inference.cfg");
        p.stack.prefill_apart = true;
        p.stack.overlap = true;
        p.task.detailed.concurrency = cases[i].C;
        p.task.detailed.prompt_tokens = cases[i].isl;
        p.task.detailed.decode_tokens = cases[i].osl;
        p.task.detailed.rounds = 20;
        result_t r = unit_eval(&p);
        prepared x;
        prepare(&p, &x);
        sim_cfg g = {.C = cases[i].C, .osl = cases[i].osl, .rounds = 20,
                     .isl = (double)cases[i].isl, .K = x.w.K,
                     .front = x.k.host_req, .prefill_first = 1, .overlap = 1};
        sim_out s = sim_closed(&x.k, &g);
        double et = r.tpot_s / s.tpot - 1.0, ef = r.ttft_s / s.ttft - 1.0;
        printf("\n  prefill-first C %lld isl %lld osl %lld: TPOT %.2f / sim %.2f ms (%+.1f%%), "
               "TTFT %.1f / %.1f ms (%+.1f%%)",
               (long long)cases[i].C, (long long)cases[i].isl, (long long)cases[i].osl,
               1e3 * r.tpot_s, 1e3 * s.tpot, 100 * et, 1e3 * r.ttft_s, 1e3 * s.ttft, 100 * ef);
        CU_ASSERT(fabs(et) <= 0.15);
        CU_ASSERT(fabs(ef) <= 0.15);
    }
}

/* Decode-first with an overlap scheduler (a prompt that arrives during
 * step n joins step n + 2), an endless loop started desynchronized:
 * TTFT within 35 % and TPOT within 10 % of the simulated engine (the
 * simulated requests return evenly spaced, so a prompt never queues
 * behind another; the closed form's M/D/1 wait takes arrivals at random,
 * +21-32 % at 64 requests), at the
 * stack's budget (several prompts a step) and at a budget of about one
 * prompt (AIConfigurator's launches: bs + ISL + 500). A benchmark of 20
 * rounds adds its first round's burst, once in 20: (C / cap - 1) / 2
 * prefill steps. (With fixed lengths and a burst start the simulated
 * requests return one step after another and each meets the previous
 * one's prefill step, 2-3 prefill steps of TTFT: the closed form takes
 * the phase of a step in flight at random.) */
static void test_overlap_vs_simulation(void)
{
    static const struct {
        int64_t C, isl, osl, K;
    } cases[] = {{8, 2048, 256, 0}, {64, 2048, 256, 0}, {128, 1024, 128, 0},
                 {8, 2048, 256, 2048 + 8 + 500}, {64, 2048, 256, 2048 + 64 + 500},
                 {128, 1024, 128, 1024 + 128 + 500}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        point_t p = unit_point("detailed_llama2_70b_inference.cfg");
        p.stack.overlap = true;
        /* the front end's and the host's times held (the catalogue refits
         * them; how the returned requests fall against the steps moves
         * with them) */
        p.stack.request_host_s = (stack_fact){20e-3, 20e-3, 20e-3};
        p.stack.step_host_s = (stack_fact){2e-3, 2e-3, 2e-3};
        if (cases[i].K)
            p.task.detailed.token_budget = cases[i].K;
        p.task.detailed.concurrency = cases[i].C;
        p.task.detailed.prompt_tokens = cases[i].isl;
        p.task.detailed.decode_tokens = cases[i].osl;
        result_t r = unit_eval(&p);
        prepared x;
        prepare(&p, &x);
        sim_cfg g = {.C = cases[i].C, .osl = cases[i].osl, .steps = 8 * cases[i].osl,
                     .warm = 2 * cases[i].osl, .isl = (double)cases[i].isl,
                     .K = x.w.K, .front = x.k.host_req, .overlap = 1};
        sim_out s = sim_closed(&x.k, &g);
        double et = r.tpot_s / s.tpot - 1.0, ef = r.ttft_s / s.ttft - 1.0;
        printf("\n  decode-first C %lld isl %lld osl %lld K %lld: TPOT %.2f / sim %.2f ms "
               "(%+.1f%%), TTFT %.1f / %.1f ms (%+.1f%%)",
               (long long)cases[i].C, (long long)cases[i].isl, (long long)cases[i].osl,
               (long long)x.w.K, 1e3 * r.tpot_s, 1e3 * s.tpot, 100 * et,
               1e3 * r.ttft_s, 1e3 * s.ttft, 100 * ef);
        CU_ASSERT(fabs(et) <= 0.10);
        CU_ASSERT(fabs(ef) <= 0.35);
        /* the first round's burst, once in 20 rounds */
        p.task.detailed.rounds = 20;
        result_t b = unit_eval(&p);
        sv_prefill_step ps;
        double td = sv_tpot(&x.k, (double)cases[i].C, x.w.cd);
        sv_prefill_at(&x.k, &x.w, (double)cases[i].C, (double)cases[i].C / (double)(cases[i].osl - 1),
                      td, &ps);
        double cap = dt_max(1.0, ps.fit) / ps.nc;
        UNIT_ASSERT_CLOSE(b.ttft_s - r.ttft_s, 0.5 * ((double)cases[i].C / cap - 1.0) * ps.tp / 20.0,
                          1e-9);
    }
}

/* The launch command of a point (driver/query/engine_args.c): its
 * engine's flags for the point's layout and limits. */
static char *launch_of(const point_t *p)
{
    result_t r = unit_eval(p);
    FILE *out = tmpfile();
    CU_ASSERT_FATAL(out != NULL);
    CU_ASSERT_EQUAL(engine_args_write(out, stderr, p, &r), 0);
    long n = ftell(out);
    char *buf = calloc((size_t)n + 1, 1);
    CU_ASSERT_FATAL(buf != NULL && n >= 0);
    rewind(out);
    CU_ASSERT_EQUAL(fread(buf, 1, (size_t)n, out), (size_t)n);
    fclose(out);
    return buf;
}

static void test_engine_args(void)
{
    /* SGLang DEP8 on 8 H200: the attention-DP ranks and the experts */
    point_t p = unit_point("detailed_deepseek_v3_serving.cfg");
    char *a = launch_of(&p);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "python -m sglang.launch_server"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "--tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "--chunked-prefill-size 8192")); /* H200: 8192 */
    free(a);
    /* vLLM TP8 with the launch's limits and FP8 KV */
    point_t v = unit_point("detailed_llama2_70b_inference.cfg");
    v.task.detailed.max_seqs = 256;
    v.task.detailed.token_budget = 4096;
    v.task.detailed.kv_dtype = 1 + HW_FP8;
    a = launch_of(&v);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "vllm serve \"$MODEL\" --tensor-parallel-size 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "--max-num-seqs 256 --max-num-batched-tokens 4096"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "--kv-cache-dtype fp8"));
    free(a);
    /* TensorRT-LLM disaggregated: one command per pool and the router */
    point_t d = defect("prefill_pool_ep.cfg");
    d.prefill.max_seqs = 1;
    a = launch_of(&d);
    const char *pre = strstr(a, "trtllm-serve \"$MODEL\" --backend pytorch --tp_size 8");
    CU_ASSERT_PTR_NOT_NULL(pre);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "--ep_size 8 --max_batch_size 1"));
    CU_ASSERT_PTR_NOT_NULL(pre ? strstr(pre + 1, "trtllm-serve \"$MODEL\"") : NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "trtllm-serve disaggregated"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "kv_cache_config: {dtype: fp8}"));
    free(a);
    /* a training stack has no launch */
    point_t t = unit_point("detailed_llama2_70b_inference.cfg");
    t.stack.engine[0] = '\0';
    result_t r = unit_eval(&t);
    FILE *null = fopen("/dev/null", "w");
    CU_ASSERT_EQUAL(engine_args_write(null, null, &t, &r), -1);
    fclose(null);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("deploy", NULL, NULL);
    CU_add_test(s, "defect: routed experts by ep and etp", test_experts_by_layout);
    CU_add_test(s, "defect: host time per attention-DP rank", test_host_per_rank);
    CU_add_test(s, "defect: KV dtype by the engine's rule, never FP4", test_kv_dtype_default);
    CU_add_test(s, "defect: requests above C_max wait for a slot", test_ttft_queue);
    CU_add_test(s, "defect: the prefill pool's own layout and limits", test_prefill_pool_own_layout);
    CU_add_test(s, "prefill-first waves vs simulation", test_waves_vs_simulation);
    CU_add_test(s, "launch commands of the engines", test_engine_args);
    CU_add_test(s, "decode-first with overlap vs simulation", test_overlap_vs_simulation);
    return unit_run();
}
