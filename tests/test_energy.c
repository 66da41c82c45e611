/*
 * test_energy.c - the energy and cost model, and the figures every
 * evaluated row carries.
 *
 * energy_eval() is checked on small numbers derived by hand in the
 * comments (cost/energy.h's formulas). Then whole points: the derived
 * figures of eval_point() (memory capacity and verdict, per-device
 * throughput, energy and cost) against the same formulas applied to the
 * point's own figures and the catalogue's power and price
 * (configs/hardware.cfg: A100 40GB 400 W and $4.10 per GPU-hour, H100
 * SXM 700 W and $12.29), NaN for the figures a fidelity does not compute,
 * and the power and price overrides of a system.
 */
#include <math.h>
#include <string.h>

#include "../cost/energy.h"
#include "../driver/load/load.h"
#include "unit.h"

static void test_energy_formula(void)
{
    energy_device d = {.board_power_w = 700.0, .idle_power_w = 0.0,
                       .price_per_hour_usd = 4.0};
    energy_in in = {.devices = 8, .iteration_s = 2.0, .busy_s = 1.5,
                    .samples = 64.0, .tokens = 64.0 * 4096.0};
    energy_out o;
    /* idle 0.3 x 700 = 210 W; 8 x (210 x 2 + 490 x 1.5) = 8 x 1155 */
    UNIT_ASSERT_CLOSE(energy_idle_w(&d), 210.0, 1e-15);
    energy_eval(&d, &in, &o);
    UNIT_ASSERT_CLOSE(o.energy_per_iteration_j, 9240.0, 1e-15);
    UNIT_ASSERT_CLOSE(o.energy_per_sample_j, 144.375, 1e-15);      /* / 64 */
    UNIT_ASSERT_CLOSE(o.energy_per_token_j, 0.035247802734375, 1e-15); /* / 262144 */
    /* 8 x $4 x 2 s / 3600 = $64 / 3600 */
    UNIT_ASSERT_CLOSE(o.cost_per_iteration_usd, 64.0 / 3600.0, 1e-15);
    UNIT_ASSERT_CLOSE(o.cost_per_sample_usd, 1.0 / 3600.0, 1e-15);
    /* 1e6 x (64 / 3600) / 262144 = 0.0678168402... */
    UNIT_ASSERT_CLOSE(o.cost_per_million_tokens_usd, 64e6 / 3600.0 / 262144.0, 1e-15);

    /* an explicit idle power: 8 x (100 x 2 + 600 x 1.5) = 8800 */
    d.idle_power_w = 100.0;
    energy_eval(&d, &in, &o);
    UNIT_ASSERT_CLOSE(o.energy_per_iteration_j, 8800.0, 1e-15);
    /* busy time past the iteration is clamped: 8 x 700 x 2 = 11200 */
    in.busy_s = 3.0;
    energy_eval(&d, &in, &o);
    UNIT_ASSERT_CLOSE(o.energy_per_iteration_j, 11200.0, 1e-15);
    /* no busy figure: idle only, 8 x 100 x 2 = 1600 */
    in.busy_s = NAN;
    energy_eval(&d, &in, &o);
    UNIT_ASSERT_CLOSE(o.energy_per_iteration_j, 1600.0, 1e-15);
    /* not an LLM: no per-token figures */
    in.tokens = NAN;
    energy_eval(&d, &in, &o);
    CU_ASSERT(isnan(o.energy_per_token_j));
    CU_ASSERT(isnan(o.cost_per_million_tokens_usd));
    CU_ASSERT(isfinite(o.cost_per_sample_usd));
    /* unknown power or price: NaN, never 0 */
    d.board_power_w = 0.0;
    energy_eval(&d, &in, &o);
    CU_ASSERT(isnan(o.energy_per_iteration_j));
    CU_ASSERT(isnan(o.energy_per_sample_j));
    CU_ASSERT(isfinite(o.cost_per_iteration_usd));
    d.price_per_hour_usd = 0.0;
    energy_eval(&d, &in, &o);
    CU_ASSERT(isnan(o.cost_per_iteration_usd));
    CU_ASSERT(isnan(o.cost_per_sample_usd));
}

/* Loads point text; 0 on success. */
static int load_text(const char *name, const char *text, point_t *p)
{
    char path[512];
    load_err err;
    unit_write_file(name, text, path, sizeof path);
    if (load_point(path, unit_configs(), p, &err) != 0) {
        fprintf(stderr, "%s\n", err.text);
        return -1;
    }
    return 0;
}

/* The energy model applied by hand to an evaluated point's figures. */
static void check_energy(const result_t *r, double n, double board, double price,
                         double tokens)
{
    double t = r->iteration_time_s;
    double busy = (isfinite(r->compute_gemm_s) ? r->compute_gemm_s : 0.0) +
                  (isfinite(r->compute_emb_s) ? r->compute_emb_s : 0.0);
    busy = busy > t ? t : busy;
    double e = n * (0.3 * board * t + 0.7 * board * busy);
    double c = n * price * t / 3600.0;
    UNIT_ASSERT_CLOSE(r->energy_per_iteration_j, e, 1e-12);
    UNIT_ASSERT_CLOSE(r->energy_per_sample_j, e / (double)r->global_batch, 1e-12);
    UNIT_ASSERT_CLOSE(r->cost_per_iteration_usd, c, 1e-12);
    UNIT_ASSERT_CLOSE(r->cost_per_sample_usd, c / (double)r->global_batch, 1e-12);
    UNIT_ASSERT_CLOSE(r->energy_per_token_j, e / tokens, 1e-12);
    UNIT_ASSERT_CLOSE(r->cost_per_million_tokens_usd, 1e6 * c / tokens, 1e-12);
}

static void test_madmax_row(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/points/llama2_70b_dc_A_2048_fsdp.cfg",
             unit_configs());
    point_t p;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &p, &err), 0);
    /* dc_A_2048 is an A100 40GB system (systems.cfg: hardware) */
    CU_ASSERT_STRING_EQUAL(p.cluster.hardware, "a100-40g");
    UNIT_ASSERT_CLOSE(p.cluster.board_power_w, 400.0, 1e-15);
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_capacity_bytes_per_device, 40e9, 1e-15);
    CU_ASSERT_EQUAL(r.mem_fits, 1.0); /* FSDP: 0.94 GB of weights */
    UNIT_ASSERT_CLOSE(r.samples_per_s_per_device, r.throughput_samples_per_s / 2048.0,
                      1e-15);
    /* LLaMA2-70B sequences of 4096 tokens */
    double tokens = (double)r.global_batch * 4096.0;
    UNIT_ASSERT_CLOSE(r.tokens_per_s, tokens / r.iteration_time_s, 1e-12);
    UNIT_ASSERT_CLOSE(r.tokens_per_s_per_device, r.tokens_per_s / 2048.0, 1e-15);
    check_energy(&r, 2048.0, 400.0, 4.10, tokens);
    /* figures MAD-Max does not compute */
    CU_ASSERT(isnan(r.mfu));
    CU_ASSERT(isnan(r.ttft_s));
    CU_ASSERT(isnan(r.mem_total_bytes_per_device));
    CU_ASSERT(isnan(r.pipeline_bubble_s));

    /* DDP over 8 A100 40GB: 70B weights of 2 bytes do not fit, the figures
     * are still computed (parity), the verdict says so */
    CU_ASSERT_EQUAL_FATAL(load_text("mm_ddp.cfg",
        "fidelity = \"madmax\"; model = \"llama2_70b\";\n"
        "system = \"cloud_A_a100.40_8\";\n"
        "task = { type = \"pretrain\"; dense = [\"ddp:8\"]; embedding = [\"ddp:8\"];\n"
        "  local_batch_dense = 1; local_batch_emb = 1; };\n", &p), 0);
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT(r.mem_weights_bytes_per_device > 40e9);
    CU_ASSERT_EQUAL(r.mem_fits, 0.0);
    CU_ASSERT(r.iteration_time_s > 0);
    CU_ASSERT(r.energy_per_iteration_j > 0);
    engine_free(&e);
}

static void test_detailed_rows(void)
{
    point_t p = unit_point("detailed_llama3_70b.cfg");
    result_t r = unit_eval(&p);
    double n = (double)p.system.devices;
    check_energy(&r, n, 700.0, 12.29, (double)r.global_batch * 8192.0);
    UNIT_ASSERT_CLOSE(r.tokens_per_s_per_device, r.tokens_per_s / n, 1e-15);
    CU_ASSERT_EQUAL(r.mem_fits, 1.0);
    /* H100 "80 GB" of HBM are 80 GiB (hardware.cfg) */
    UNIT_ASSERT_CLOSE(r.mem_capacity_bytes_per_device, 80.0 * 1073741824.0, 1e-15);
    /* training: no serving latencies; no embedding lookup model */
    CU_ASSERT(isnan(r.ttft_s));
    CU_ASSERT(isnan(r.tpot_s));
    CU_ASSERT(isnan(r.compute_emb_s));

    /* serving: energy per generated token (32 sequences x 256 tokens) */
    p = unit_point("detailed_llama2_70b_inference.cfg");
    r = unit_eval(&p);
    check_energy(&r, 8.0, 700.0, 12.29, 32.0 * 256.0);
    /* serving reports its decode FLOPs utilization; a pipeline bubble
     * is a training concept */
    CU_ASSERT(r.mfu > 0 && r.mfu < 1);
    CU_ASSERT(isnan(r.pipeline_bubble_s));
    CU_ASSERT(r.ttft_s > 0 && r.tpot_s > 0);

    /* a DLRM: per sample only */
    p = unit_point("detailed_dlrm_mlperf.cfg");
    r = unit_eval(&p);
    CU_ASSERT(isnan(r.tokens_per_s_per_device));
    CU_ASSERT(isnan(r.energy_per_token_j));
    CU_ASSERT(isnan(r.cost_per_million_tokens_usd));
    CU_ASSERT(isfinite(r.compute_emb_s) && r.compute_emb_s > 0);
    CU_ASSERT(r.energy_per_sample_j > 0 && r.cost_per_sample_usd > 0);

    /* overrides in the point's system; a point that does not fit keeps
     * its memory breakdown and nothing else */
    CU_ASSERT_EQUAL_FATAL(load_text("det_over.cfg",
        "fidelity = \"detailed\"; model = \"llama3-70b\";\n"
        "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8;\n"
        "  board_power_w = 500.0; price_per_hour_usd = 2.0; };\n"
        "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 1; global_batch = 8; };\n",
        &p), 0);
    UNIT_ASSERT_CLOSE(p.system.hw.board_power_w, 500.0, 1e-15);
    UNIT_ASSERT_CLOSE(p.system.hw.price_per_hour_usd, 2.0, 1e-15);
    engine e;
    engine_init(&e, false);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_MEMORY);
    CU_ASSERT(r.mem_total_bytes_per_device > 80e9);
    CU_ASSERT_EQUAL(r.mem_fits, 0.0);
    CU_ASSERT(isnan(r.iteration_time_s));
    CU_ASSERT(isnan(r.energy_per_iteration_j));
    CU_ASSERT_EQUAL(r.global_batch, 8);
    engine_free(&e);
}

static void test_override_errors(void)
{
    char path[512];
    point_t p;
    load_err err;
    unit_write_file("det_bad.cfg",
        "fidelity = \"detailed\"; model = \"llama3-8b\";\n"
        "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8;\n"
        "  board_power_w = -5.0; };\n"
        "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 1; global_batch = 8; };\n",
        path, sizeof path);
    CU_ASSERT_NOT_EQUAL(load_point(path, unit_configs(), &p, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, ":3: key 'board_power_w'"));
    unit_write_file("det_idle.cfg",
        "fidelity = \"detailed\"; model = \"llama3-8b\";\n"
        "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8;\n"
        "  idle_power_w = 900.0; };\n"
        "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 1; global_batch = 8; };\n",
        path, sizeof path);
    CU_ASSERT_NOT_EQUAL(load_point(path, unit_configs(), &p, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "idle_power_w"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("energy", NULL, NULL);
    CU_add_test(s, "busy/idle power model and price", test_energy_formula);
    CU_add_test(s, "madmax rows: memory verdict, energy, cost", test_madmax_row);
    CU_add_test(s, "detailed rows: NaN figures, energy, overrides", test_detailed_rows);
    CU_add_test(s, "bad power overrides name file, line and key", test_override_errors);
    return unit_run();
}
