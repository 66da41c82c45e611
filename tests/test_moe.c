/*
 * test_moe.c - mixture-of-experts and latent attention as Megatron-Core
 * runs them, jobs on partial NVL72 racks, and memory that flags rather
 * than refuses a point within its band of fitting (issue 17).
 *
 * Points are written as text and loaded with the shipped catalogues
 * (configs/), as a user writes them. Reference figures: DeepSeek-V3 671B
 * parameters without its multi-token-prediction module (model card of
 * deepseek-ai/DeepSeek-V3), Qwen3-30B-A3B 30.5B and Qwen3-235B-A22B 235B
 * (their cards); the layouts are those of calibration_v3_additions.csv
 * (ModelZoo Qwen3-235B on 256 H100: tp 2, pp 8, dp 16, ep 32, expert-TP
 * 1; Megatron-Bridge Llama 3.1 405B on 128 GB200).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../driver/load/load.h"
#include "unit.h"

static int point_text(const char *name, const char *text, point_t *p, load_err *err)
{
    char path[512];
    if (!unit_write_file(name, text, path, sizeof path))
        return -2;
    int rc = load_point(path, unit_configs(), p, err);
    if (rc)
        fprintf(stderr, "%s\n", err->text);
    return rc;
}

static double total_params(const char *model)
{
    char text[512];
    snprintf(text, sizeof text,
             "fidelity = \"detailed\";\nmodel = \"%s\";\n"
             "system = { name = \"s\"; hardware = \"h100-sxm-80g\"; devices = 8; };\n"
             "task = { type = \"pretrain\"; tp = 1; pp = 1; dp = 8; };\n",
             model);
    point_t p;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(point_text("moe-params.cfg", text, &p, &err), 0);
    double total, dev;
    detailed_params(&p.model, &p.task.detailed, &total, &dev);
    return total;
}

/* Parameters of the catalogue's MoE models against their cards: MLA's
 * low-rank projections, shared experts and leading dense layers. */
static void test_catalogue_params(void)
{
    /* 671B (card) + one MTP module: a MoE layer with MLA and its 2h x h
     * projection, 187.1M + 11,325.2M + 102.8M (config.json shapes) */
    CU_ASSERT(fabs(total_params("deepseek-v3") / (671e9 + 11.615e9) - 1.0) < 0.005);
    CU_ASSERT(fabs(total_params("qwen3-30b-a3b") / 30.5e9 - 1.0) < 0.01);
    CU_ASSERT(fabs(total_params("qwen3-235b-a22b") / 235e9 - 1.0) < 0.01);
}

/* Multi-token prediction: the module's layer, projection and second
 * head and loss run on the last stage, so the step takes longer. */
static void test_mtp(void)
{
#define MTP_POINT(k)                                                                      \
    "fidelity = \"detailed\";\nstack = \"megatron-core-moe\";\n"                                 \
    "model = { name = \"moe-small\"; type = \"llm\"; arch = \"deepseek\"; layers = 8; "          \
    "hidden = 2048; ffn = 8192; heads = 16; seq_len = 4096; vocab = 32000; "                  \
    "mlp = \"swiglu\"; position = \"rope\"; experts = 16; top_k = 2; expert_ffn = 1024; "       \
    "mtp_layers = " k "; };\n"                                                                \
    "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8; };\n"             \
    "task = { type = \"pretrain\"; tp = 1; pp = 2; dp = 4; ep = 4; micro_batch = 1; "         \
    "global_batch = 32; recompute = \"full\"; };\n"
    const char *texts[2] = {MTP_POINT("0"), MTP_POINT("1")};
    double t[2];
    engine e;
    engine_init(&e, false);
    for (int k = 0; k < 2; k++) {
        point_t p;
        load_err err;
        result_t r;
        CU_ASSERT_EQUAL_FATAL(point_text("mtp.cfg", texts[k], &p, &err), 0);
        CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        t[k] = r.iteration_time_s;
    }
    CU_ASSERT(t[1] > t[0]);
    engine_free(&e);
}

/* MLA: one layer's projections in closed form (DeepSeek-V2 section
 * 2.1.2), and a model without kv_lora_rank is grouped-query attention. */
static void test_mla_shape(void)
{
    model_t m;
    memset(&m, 0, sizeof m);
    m.hidden = 7168;
    m.heads = 128;
    m.kv_heads = 128;
    m.d.q_lora_rank = 1536;
    m.d.kv_lora_rank = 512;
    m.d.qk_nope_head_dim = 128;
    m.d.qk_rope_head_dim = 64;
    m.d.v_head_dim = 128;
    double want = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * (512 + 64) +
                  512.0 * 128 * (128 + 128) + 128.0 * 128 * 7168;
    UNIT_ASSERT_CLOSE(detailed_attn_params(&m), want, 1e-12);
    m.d.kv_lora_rank = 0;
    UNIT_ASSERT_CLOSE(detailed_attn_params(&m), 4.0 * 7168.0 * 7168.0, 1e-12);
}

#define QWEN_XEP(etp)                                                          \
    "fidelity = \"detailed\";\nstack = \"megatron-core-moe\";\n"                 \
    "model = \"qwen3-235b-a22b\";\n"                                           \
    "system = { name = \"h100-256\"; hardware = \"h100-sxm-80g\"; devices = 256; "  \
    "nic_gbps_per_device = 400.0; };\n"                                        \
    "task = { type = \"pretrain\"; tp = 2; pp = 8; dp = 16; ep = 32; vpp = 4; " \
    "precision = \"bf16\"; recompute = \"selective\"; micro_batch = 1; "       \
    "global_batch = 2048; zero_stage = 1; " etp " };\n"

/* MoE parallel folding: with expert-TP 1 (the stack's default) ep 32
 * folds over tp 2 x dp 16 and the point runs, with its all-to-all;
 * expert-TP = tp keeps ep inside dp 16, which 32 does not divide. */
static void test_expert_folding(void)
{
    point_t p;
    load_err err;
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(point_text("xep1.cfg", QWEN_XEP(""), &p, &err), 0);
    CU_ASSERT_EQUAL(p.task.detailed.etp, 1);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT(r.comm_alltoall_s > 0.0);
    CU_ASSERT(r.mem_fits > 0.0);
    CU_ASSERT_NOT_EQUAL(point_text("xep2.cfg", QWEN_XEP("etp = 2;"), &p, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "invalid:strategy"));
    engine_free(&e);
}

/* 128 GB200 GPUs are whole compute trays: the job spans whole and
 * partial NVL72 racks and evaluates (it was refused before). */
static void test_partial_rack(void)
{
    point_t p;
    load_err err;
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(
        point_text("gb128.cfg",
                   "fidelity = \"detailed\";\nstack = \"megatron-core\";\n"
                   "model = \"llama3-405b\";\n"
                   "system = { name = \"gb-128\"; hardware = \"gb200-nvl72\"; devices = 128; };\n"
                   "task = { type = \"pretrain\"; tp = 2; pp = 1; dp = 64; precision = \"fp8\"; "
                   "zero_stage = 3; micro_batch = 1; global_batch = 64; recompute = \"full\"; };\n",
                   &p, &err),
        0);
    status_code rc = eval_point(&p, &e, &r, NULL);
    if (rc != STATUS_OK)
        fprintf(stderr, "gb-128: %s\n", status_text(rc));
    CU_ASSERT_EQUAL(rc, STATUS_OK);
    CU_ASSERT(r.iteration_time_s > 0.0);
    engine_free(&e);
}

/* Memory: headroom is usable capacity minus use; a point over the
 * capacity by less than the stack's reserve is kept and flagged
 * (mem_fits 0.5), and the same point with half the memory usable
 * (memory_fraction) is refused. */
static void test_memory_band(void)
{
    point_t p;
    load_err err;
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(point_text("mem1.cfg", QWEN_XEP(""), &p, &err), 0);
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    double use = r.mem_total_bytes_per_device, cap = r.mem_capacity_bytes_per_device;
    UNIT_ASSERT_CLOSE(r.mem_headroom_bytes_per_device, cap - use, 1e-12);
    /* a capacity just below the use, within the reserve */
    double reserve = p.stack.reserve_bytes;
    p.system.hw.mem_capacity_bytes = use - 0.5 * reserve;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r.mem_fits, 0.5);
    CU_ASSERT(r.mem_headroom_bytes_per_device < 0.0);
    p.system.hw.mem_capacity_bytes = use - 2.0 * reserve;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_MEMORY);
    CU_ASSERT_EQUAL(r.mem_fits, 0.0);
    p.system.hw.mem_capacity_bytes = cap;
    p.task.detailed.memory_fraction = 0.5 * use / cap;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_MEMORY);
    engine_free(&e);
}

/* Inference with latent attention caches the compressed latent and the
 * shared RoPE key per token and layer (kv_lora_rank + qk_rope_head_dim
 * elements, whole on every TP rank), not K and V of every head. */
static void test_mla_kv_cache(void)
{
    const char *text =
        "fidelity = \"detailed\";\n"
        "model = { name = \"mla-small\"; type = \"llm\"; arch = \"deepseek\"; layers = 4; "
        "hidden = 1024; ffn = 4096; heads = 8; seq_len = 2048; vocab = 32000; "
        "mlp = \"swiglu\"; position = \"rope\"; q_lora_rank = 256; kv_lora_rank = 128; "
        "qk_nope_head_dim = 64; qk_rope_head_dim = 32; v_head_dim = 64; };\n"
        "system = { name = \"h100-2\"; hardware = \"h100-sxm-80g\"; devices = 2; };\n"
        "task = { type = \"inference\"; tp = 2; pp = 1; dp = 1; micro_batch = 4; "
        "prompt_tokens = 1024; decode_tokens = 64; };\n";
    point_t p;
    load_err err;
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(point_text("mla-inf.cfg", text, &p, &err), 0);
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    /* the KV the 4 running sequences hold (serve_kv.c, the default stack's
     * on-demand 16-token blocks: 1024 + 64 / 2 = 1056 tokens each)
     * 4 layers x (128 + 32) x 1056 x 4 sequences x 2 bytes */
    CU_ASSERT_EQUAL(r.concurrency_resolved, 4);
    UNIT_ASSERT_CLOSE(r.mem_kv_cache_bytes_per_device, 4.0 * 160.0 * 1056.0 * 4.0 * 2.0,
                      1e-12);
    engine_free(&e);
}

/* FP8 scaling recipes: current scaling's separate amax pass and the
 * column-wise copies of blockwise/MXFP8 cost HBM time over delayed
 * scaling's fused casts; a BF16 point does not change. */
static void test_fp8_recipes(void)
{
    char text[640];
    const char *recipes[] = {"delayed", "mxfp8", "current"};
    double t[3];
    engine e;
    engine_init(&e, false);
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text,
                 "fidelity = \"detailed\";\nstack = \"megatron-core\";\nmodel = \"llama3-8b\";\n"
                 "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8; };\n"
                 "task = { type = \"pretrain\"; tp = 1; pp = 1; dp = 8; precision = \"fp8\"; "
                 "fp8_recipe = \"%s\"; micro_batch = 1; global_batch = 64; "
                 "recompute = \"full\"; };\n",
                 recipes[i]);
        point_t p;
        load_err err;
        result_t r;
        CU_ASSERT_EQUAL_FATAL(point_text("fp8r.cfg", text, &p, &err), 0);
        CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        t[i] = r.iteration_time_s;
    }
    CU_ASSERT(t[0] < t[1]);
    CU_ASSERT(t[1] < t[2]);
    engine_free(&e);
}

/* Weight gradients accumulate into the stack's gradient buffer every
 * micro-batch (Megatron-Core gradient_accumulation_fusion: TE reads and
 * writes the fp32 main_grad). ModelZoo's TP4 mapping of Qwen3-235B
 * (calibration_v3_additions.csv MZ-H100-Q3-235B-TP4) gives each of the
 * 16 local experts 512 rows per micro-batch: its weight-gradient GEMMs
 * (13 and 6 GFLOP) move 100 and 50 MB of fp32 gradient, more time on
 * H100's HBM than their math, so a 4-byte buffer costs more than a
 * 2-byte one. Llama 3 8B's GEMMs at 8192 rows stay math-bound either way. */
static void test_wgrad_accumulation(void)
{
    const char *texts[2] = {
        "fidelity = \"detailed\";\nstack = \"megatron-core-moe\";\n"
        "model = \"qwen3-235b-a22b\";\n"
        "system = { name = \"h100-256\"; hardware = \"h100-sxm-80g\"; devices = 256; "
        "nic_gbps_per_device = 400.0; };\n"
        "task = { type = \"pretrain\"; tp = 4; pp = 8; dp = 8; ep = 8; vpp = 4; "
        "precision = \"bf16\"; recompute = \"none\"; micro_batch = 1; "
        "global_batch = 2048; zero_stage = 1; };\n",
        "fidelity = \"detailed\";\nstack = \"megatron-core\";\nmodel = \"llama3-8b\";\n"
        "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8; };\n"
        "task = { type = \"pretrain\"; tp = 1; pp = 1; dp = 8; precision = \"bf16\"; "
        "micro_batch = 1; global_batch = 64; recompute = \"full\"; };\n"};
    engine e;
    engine_init(&e, false);
    for (int i = 0; i < 2; i++) {
        point_t p;
        load_err err;
        result_t r;
        CU_ASSERT_EQUAL_FATAL(point_text("wgrad.cfg", texts[i], &p, &err), 0);
        CU_ASSERT_EQUAL_FATAL(p.stack.grad_bytes, 4.0);
        CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        double t4 = r.compute_gemm_s;
        p.stack.grad_bytes = 2.0;
        CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        if (i == 0) {
            CU_ASSERT(t4 > 1.02 * r.compute_gemm_s);
        } else {
            UNIT_ASSERT_CLOSE(t4, r.compute_gemm_s, 1e-12);
        }
    }
    engine_free(&e);
}

/* Qwen3's per-head query/key RMSNorms (the catalogue's qwen3-30b-a3b has
 * qk_norm, as its config.json's q_norm/k_norm): memory-bound time and
 * kept activations that the same model without them does not have; its
 * GEMMs do not change. */
static void test_qk_norm(void)
{
    const char *text =
        "fidelity = \"detailed\";\nstack = \"megatron-core-moe\";\n"
        "model = \"qwen3-30b-a3b\";\n"
        "system = { name = \"h100-16\"; hardware = \"h100-sxm-80g\"; devices = 16; };\n"
        "task = { type = \"pretrain\"; tp = 1; pp = 2; dp = 8; ep = 8; precision = \"bf16\"; "
        "recompute = \"none\"; micro_batch = 1; global_batch = 64; };\n";
    point_t p;
    load_err err;
    engine e;
    engine_init(&e, false);
    result_t a, b;
    CU_ASSERT_EQUAL_FATAL(point_text("qknorm.cfg", text, &p, &err), 0);
    CU_ASSERT_FATAL(p.model.d.qk_norm);
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &a, NULL), STATUS_OK);
    p.model.d.qk_norm = false;
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &b, NULL), STATUS_OK);
    CU_ASSERT(a.compute_memory_s > b.compute_memory_s);
    CU_ASSERT(a.mem_activations_bytes_per_device > b.mem_activations_bytes_per_device);
    CU_ASSERT(a.iteration_time_s > b.iteration_time_s);
    UNIT_ASSERT_CLOSE(a.compute_math_s, b.compute_math_s, 1e-9);
    engine_free(&e);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("moe", NULL, NULL);
    CU_add_test(s, "catalogue MoE/MLA parameters", test_catalogue_params);
    CU_add_test(s, "MLA projections", test_mla_shape);
    CU_add_test(s, "multi-token prediction", test_mtp);
    CU_add_test(s, "expert parallel folding", test_expert_folding);
    CU_add_test(s, "partial NVL72 racks", test_partial_rack);
    CU_add_test(s, "memory band and headroom", test_memory_band);
    CU_add_test(s, "MLA KV cache", test_mla_kv_cache);
    CU_add_test(s, "FP8 recipes", test_fp8_recipes);
    CU_add_test(s, "weight-gradient accumulation", test_wgrad_accumulation);
    CU_add_test(s, "Qwen3 q/k norms", test_qk_norm);
    return unit_run();
}
