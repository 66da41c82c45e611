/*
 * test_hw.c - hardware generations: data types and their peaks (FP4
 * beside FP8), and every entry of the shipped hardware catalogue.
 *
 * The dtype cases are worked out by hand on a tidy generation; the
 * catalogue cases load configs/hardware.cfg and evaluate a small model on
 * each entry in each precision it has a peak for.
 */
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../driver/load/load.h"
#include "unit.h"

/* unit_tidy_hw with FP8 200 and FP4 400 TFLOP/s, FP8 table (9, 0.1)
 * (11, 0.7), FP4 table (9, 0.1) (11, 0.6). */
static hw_t tidy_hw(void)
{
    hw_t h = unit_tidy_hw();
    h.peak_flops[HW_FP8] = 200e12;
    h.peak_flops[HW_FP4] = 400e12;
    h.gemm_fp8_points = 2;
    h.gemm_fp8_log10_flops[0] = 9.0;
    h.gemm_fp8_log10_flops[1] = 11.0;
    h.gemm_fp8_efficiency[0] = 0.1;
    h.gemm_fp8_efficiency[1] = 0.7;
    h.gemm_fp4_points = 2;
    h.gemm_fp4_log10_flops[0] = 9.0;
    h.gemm_fp4_log10_flops[1] = 11.0;
    h.gemm_fp4_efficiency[0] = 0.1;
    h.gemm_fp4_efficiency[1] = 0.6;
    return h;
}

static void test_dtypes(void)
{
    CU_ASSERT_EQUAL(hw_dtype_parse("fp4"), HW_FP4);
    CU_ASSERT_EQUAL(hw_dtype_parse("fp8"), HW_FP8);
    CU_ASSERT_EQUAL(hw_dtype_parse("fp16"), HW_BF16);
    CU_ASSERT_EQUAL(hw_dtype_parse("fp6"), -1);
    for (int d = 0; d < HW_NDTYPES; d++)
        if (d != HW_BF16 || strcmp(hw_dtype_name((hw_dtype)d), "bf16") == 0)
            CU_ASSERT_EQUAL(hw_dtype_parse(hw_dtype_name((hw_dtype)d)), d);
    /* two FP4 elements per byte */
    CU_ASSERT_EQUAL(hw_dtype_bytes(HW_FP4), 0.5);
    CU_ASSERT_EQUAL(hw_dtype_bytes(HW_FP8), 1.0);
    CU_ASSERT_EQUAL(hw_dtype_bytes(HW_BF16), 2.0);
    CU_ASSERT(hw_dtype_narrow(HW_FP4) && hw_dtype_narrow(HW_FP8));
    CU_ASSERT(!hw_dtype_narrow(HW_BF16) && !hw_dtype_narrow(HW_INT8));
}

static void test_fp4_tables(void)
{
    hw_t h = tidy_hw();
    const char *bad = NULL;
    CU_ASSERT_EQUAL(hw_check(&h, &bad), STATUS_OK);
    /* 1e10 FLOPs sits halfway in log10: BF16 0.5, FP8 0.4, FP4 0.35 */
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency_dtype(&h, HW_BF16, 1e10), 0.5, 1e-12);
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency_dtype(&h, HW_FP8, 1e10), 0.4, 1e-12);
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency_dtype(&h, HW_FP4, 1e10), 0.35, 1e-12);
    /* M=N=K=4096 (1.374e11 FLOPs, clamped at the top points): compute-
     * bound at 400e12 x 0.6; its FP4 bytes 0.5 x 3 x 4096^2 = 25 MB take
     * 50 us at 0.5 TB/s, far below 573 us. */
    double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    UNIT_ASSERT_CLOSE(hw_gemm_time(&h, HW_FP4, 4096, 4096, 4096, 1),
                      flops / (400e12 * 0.6), 1e-12);
    /* M=N=4096, K=8: memory-bound, half a byte per element */
    double bytes = 0.5 * (2.0 * 4096 * 8 + 4096.0 * 4096.0);
    UNIT_ASSERT_CLOSE(hw_gemm_time(&h, HW_FP4, 4096, 4096, 8, 1), bytes / 0.5e12, 1e-12);
    /* no FP4 peak (Hopper, Ada): the BF16 peak and table, as FP8 falls
     * back without its peak */
    h.peak_flops[HW_FP4] = 0.0;
    CU_ASSERT_EQUAL(hw_check(&h, &bad), STATUS_OK);
    UNIT_ASSERT_CLOSE(hw_gemm_efficiency_dtype(&h, HW_FP4, 1e10), 0.5, 1e-12);
    UNIT_ASSERT_CLOSE(hw_gemm_time(&h, HW_FP4, 4096, 4096, 4096, 1),
                      flops / (100e12 * 0.8), 1e-12);
    /* a bad FP4 table is named */
    h = tidy_hw();
    h.gemm_fp4_log10_flops[1] = 8.0;
    CU_ASSERT_EQUAL(hw_check(&h, &bad), STATUS_INVALID_VALUE);
    CU_ASSERT_STRING_EQUAL(bad, "gemm_fp4_log10_flops");
    h = tidy_hw();
    h.gemm_fp4_efficiency[0] = 1.5;
    CU_ASSERT_EQUAL(hw_check(&h, &bad), STATUS_INVALID_VALUE);
    CU_ASSERT_STRING_EQUAL(bad, "gemm_fp4_efficiency");
}

/* A GPT-like model of 8 layers, hidden 1024, on one device of `h`. */
static point_t small_point(const hw_t *h, task_kind kind, hw_dtype d)
{
    point_t p;
    memset(&p, 0, sizeof p);
    p.fidelity = EVAL_DETAILED;
    model_t *m = &p.model;
    strcpy(m->name, "gpt");
    m->kind = MODEL_LLM;
    m->layers = 8;
    m->hidden = 1024;
    m->ffn = 4096;
    m->heads = m->kv_heads = 16;
    m->seq_len = 1024;
    m->vocab = 32000;
    m->causal = true;
    m->d.position = MODEL_POS_NONE;
    p.system.hw = *h;
    p.system.devices = 1;
    p.system.devices_per_node = 1;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.kind = kind;
    p.task.detailed.tp = p.task.detailed.pp = p.task.detailed.dp = 1;
    p.task.detailed.dtype = (int)d;
    p.task.detailed.micro_batch = kind == TASK_INFERENCE ? 4 : 1;
    p.task.detailed.global_batch = kind == TASK_INFERENCE ? 0 : 8;
    p.task.detailed.decode_tokens = kind == TASK_INFERENCE ? 64 : 0;
    p.task.detailed.overlap_dp_comm = true;
    return p;
}

static result_t eval_ok(const point_t *p)
{
    engine e;
    engine_init(&e, false);
    result_t r;
    const char *where = NULL;
    status_code st = eval_point(p, &e, &r, &where);
    if (st != STATUS_OK)
        fprintf(stderr, "\n%s %s: %s at %s\n", p->system.hw.name,
                hw_dtype_name((hw_dtype)p->task.detailed.dtype), status_name(st),
                where ? where : "?");
    CU_ASSERT_EQUAL(st, STATUS_OK);
    engine_free(&e);
    return r;
}

/* The FP4 peak reaches the evaluation: FP4 GEMMs faster than FP8 ones,
 * which are faster than BF16; without an FP4 peak, FP4 is refused by
 * rule at the precision (issue 29: it ran at the BF16 peak, and a sweep
 * wrote rows that `madsweep point` could not turn back into a point). */
static void test_fp4_point(void)
{
    hw_t h = tidy_hw();
    point_t p = small_point(&h, TASK_PRETRAIN, HW_BF16);
    result_t bf = eval_ok(&p);
    p.task.detailed.dtype = HW_FP8;
    result_t f8 = eval_ok(&p);
    p.task.detailed.dtype = HW_FP4;
    result_t f4 = eval_ok(&p);
    CU_ASSERT(f4.compute_gemm_s < f8.compute_gemm_s);
    CU_ASSERT(f8.compute_gemm_s < bf.compute_gemm_s);
    CU_ASSERT(f4.iteration_time_s < f8.iteration_time_s);

    h.peak_flops[HW_FP4] = 0.0;
    p = small_point(&h, TASK_PRETRAIN, HW_FP4);
    {
        engine e;
        engine_init(&e, false);
        result_t none;
        const char *where = NULL;
        CU_ASSERT_EQUAL(eval_point(&p, &e, &none, &where), STATUS_INVALID_DTYPE);
        CU_ASSERT_PTR_NOT_NULL(where);
        if (where)
            CU_ASSERT_EQUAL(strncmp(where, "task.precision:", 15), 0);
        engine_free(&e);
    }

    /* serving: FP4 weights stream half the bytes of FP8 ones */
    h = tidy_hw();
    p = small_point(&h, TASK_INFERENCE, HW_FP8);
    result_t s8 = eval_ok(&p);
    p.task.detailed.dtype = HW_FP4;
    result_t s4 = eval_ok(&p);
    CU_ASSERT(s4.tpot_s < s8.tpot_s);
    CU_ASSERT(s4.mem_weights_bytes_per_device < s8.mem_weights_bytes_per_device);
}

/* `precision = "fp4"` in a point; a wrong one lists fp4 among the
 * choices. */
static void test_fp4_in_points(void)
{
    char path[1024];
    point_t p;
    load_err le;
    unit_write_file("fp4_point.cfg",
                    "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                    "system = { name = \"s\"; hardware = \"b200\"; devices = 8; };\n"
                    "task = { type = \"inference\"; tp = 8; pp = 1; dp = 1;\n"
                    "  micro_batch = 8; decode_tokens = 128; precision = \"fp4\"; };\n",
                    path, sizeof path);
    int rc = load_point(path, unit_configs(), &p, &le);
    if (rc)
        fprintf(stderr, "%s\n", le.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(p.task.detailed.dtype, HW_FP4);
    CU_ASSERT_EQUAL(p.system.hw.peak_flops[HW_FP4], 9000e12); /* HGX B200 datasheet */
    CU_ASSERT(p.system.hw.gemm_fp4_points > 0);
    (void)eval_ok(&p);
    unit_write_file("fp4_bad.cfg",
                    "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                    "system = { name = \"s\"; hardware = \"b200\"; devices = 8; };\n"
                    "task = { type = \"inference\"; tp = 8; pp = 1; dp = 1;\n"
                    "  micro_batch = 8; precision = \"fp5\"; };\n",
                    path, sizeof path);
    CU_ASSERT_NOT_EQUAL(load_point(path, unit_configs(), &p, &le), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "fp4_bad.cfg:5:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "\"fp4\""));
    /* an FP4 table given by half, and a negative FP4 peak, are named */
    unit_write_file("fp4_table.cfg",
                    "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                    "system = { name = \"s\"; devices = 8; hardware = { name = \"b\";\n"
                    "  base = \"b200\"; gemm_fp4_log10_flops = [9.0, 12.0];\n"
                    "  gemm_fp4_efficiency = [0.5]; }; };\n"
                    "task = { type = \"inference\"; tp = 8; pp = 1; dp = 1; };\n",
                    path, sizeof path);
    CU_ASSERT_NOT_EQUAL(load_point(path, unit_configs(), &p, &le), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "fp4_table.cfg:5:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "gemm_fp4_efficiency has 1 points"));
    unit_write_file("fp4_peak.cfg",
                    "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                    "system = { name = \"s\"; devices = 8; hardware = { name = \"b\";\n"
                    "  base = \"b200\";\n  peak_fp4_flops = -1.0; }; };\n"
                    "task = { type = \"inference\"; tp = 8; pp = 1; dp = 1; };\n",
                    path, sizeof path);
    CU_ASSERT_NOT_EQUAL(load_point(path, unit_configs(), &p, &le), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "fp4_peak.cfg:5:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "peak_fp4_flops"));
}

/* Every shipped hardware entry loads, states its power and price, gives
 * each low-precision peak it has a table of its own, and evaluates a
 * small model (training and serving) in BF16 and in each precision it
 * has a peak for, the narrower the faster. */
static void test_catalogue(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/hardware.cfg", unit_configs());
    config_t cfg;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_open(&cfg, path, unit_configs(), &err), 0);
    const config_setting_t *list = config_lookup(&cfg, "hardware");
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    int n = config_setting_length(list);
    CU_ASSERT(n >= 10);
    for (int i = 0; i < n; i++) {
        hw_t h;
        int rc = load_hw_in(config_setting_get_elem(list, (unsigned)i), unit_configs(), NULL,
                            &h, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.text);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT(h.board_power_w > 0 && h.price_per_hour_usd > 0);
        CU_ASSERT(h.peak_flops[HW_FP8] == 0 || h.gemm_fp8_points > 0);
        CU_ASSERT(h.peak_flops[HW_FP4] == 0 || h.gemm_fp4_points > 0);
        CU_ASSERT(h.peak_flops[HW_FP4] == 0 || h.peak_flops[HW_FP4] > h.peak_flops[HW_FP8]);
        double prev_gemm = INFINITY;
        static const hw_dtype order[] = {HW_BF16, HW_FP8, HW_FP4};
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
            if (order[k] != HW_BF16 && h.peak_flops[order[k]] == 0)
                continue;
            point_t p = small_point(&h, TASK_PRETRAIN, order[k]);
            result_t r = eval_ok(&p);
            CU_ASSERT(isfinite(r.iteration_time_s) && r.iteration_time_s > 0);
            if (!(r.compute_gemm_s < prev_gemm))
                fprintf(stderr, "\n%s: %s GEMMs not faster\n", h.name,
                        hw_dtype_name(order[k]));
            CU_ASSERT(r.compute_gemm_s < prev_gemm);
            prev_gemm = r.compute_gemm_s;
            p = small_point(&h, TASK_INFERENCE, order[k]);
            r = eval_ok(&p);
            CU_ASSERT(isfinite(r.tpot_s) && r.tpot_s > 0);
        }
    }
    config_destroy(&cfg);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("hw", NULL, NULL);
    CU_add_test(s, "data types", test_dtypes);
    CU_add_test(s, "FP4 peak and table", test_fp4_tables);
    CU_add_test(s, "FP4 in the evaluation", test_fp4_point);
    CU_add_test(s, "FP4 in point files", test_fp4_in_points);
    CU_add_test(s, "every catalogue entry evaluates", test_catalogue);
    return unit_run();
}
