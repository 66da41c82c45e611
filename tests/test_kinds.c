/*
 * test_kinds.c - the architectures served now (docs/model.md, "Attention
 * kinds"): sliding windows and sinks (gpt-oss-120b), Gated DeltaNet layers
 * with output gates (Qwen3.5-397B-A17B), DeepSeek sparse attention
 * (DeepSeek-V3.2), per-part precision, MTP drafting, and models read from
 * Hugging Face config.json files (tests/data/hf/, copies of the shared
 * reference's).
 *
 * References: the model cards' parameter counts; the configs' layer_types
 * lists walked layer by layer (the library counts kinds in closed form);
 * KV, state and weight bytes worked by hand from the config figures;
 * attention FLOPs summed position by position and Gated DeltaNet's chunked
 * form listed kernel by kernel (tests/oracle.c); properties that must
 * hold whatever the facts (a window reads less, a state does not grow
 * with the context, MTP drafting pays at light load).
 */
#include <jansson.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../cost/detailed/llm/llm.h"
#include "../driver/load/hf_config.h"
#include "../driver/load/load.h"
#include "oracle.h"
#include "unit.h"

/* The catalogue's model `name`. */
static model_t cat_model(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/detailed_models.cfg", unit_configs());
    config_t cfg;
    load_err err;
    CU_ASSERT_FATAL(load_open(&cfg, path, unit_configs(), &err) == 0);
    const config_setting_t *g = load_find(config_lookup(&cfg, "models"), name);
    CU_ASSERT_FATAL(g != NULL);
    model_t m;
    CU_ASSERT_FATAL(load_model_detailed(g, &m, &err) == 0);
    config_destroy(&cfg);
    return m;
}

/* tests/data/hf/FILE */
static const char *hf_path(const char *file, char *buf, size_t n)
{
    const char *src = getenv("MADSWEEP_SOURCE_DIR");
    snprintf(buf, n, "%s/tests/data/hf/%s", src && *src ? src : ".", file);
    return buf;
}

static point_t point_of(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/points/%s", unit_configs(), file);
    point_t p;
    load_err err;
    int rc = load_point(path, unit_configs(), &p, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_FATAL(rc == 0);
    return p;
}

static double total_params(const model_t *m)
{
    task_detailed_t t;
    memset(&t, 0, sizeof t);
    t.tp = t.pp = t.dp = 1;
    double total = 0, dev = 0;
    detailed_params(m, &t, &total, &dev);
    return total;
}

/* The catalogue's entries and the configs they cite are one model: the
 * C reader gives the same figures (parameters, FLOPs) and kinds. */
static void test_hf_matches_catalogue(void)
{
    static const char *const pairs[][2] = {
        {"gpt-oss-120b", "openai--gpt-oss-120b_config.json"},
        {"qwen3.5-397b-a17b", "Qwen--Qwen3.5-397B-A17B_config.json"},
        {"deepseek-r1", "deepseek-ai--DeepSeek-R1_config.json"},
        {"llama3.1-70b", "meta-llama--Llama-3.1-70B_config.json"},
        {"qwen3-32b", "Qwen--Qwen3-32B_config.json"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        model_t a = cat_model(pairs[i][0]), b;
        char path[1024], why[512];
        int rc = hf_config_read(hf_path(pairs[i][1], path, sizeof path), &b, why, sizeof why);
        if (rc)
            fprintf(stderr, "%s\n", why);
        CU_ASSERT_FATAL(rc == 0);
        b.seq_len = a.seq_len;
        UNIT_ASSERT_CLOSE(total_params(&b), total_params(&a), 1e-12);
        UNIT_ASSERT_CLOSE(detailed_model_flops(&b, true), detailed_model_flops(&a, true), 1e-12);
        CU_ASSERT_EQUAL(b.d.sliding_window, a.d.sliding_window);
        CU_ASSERT_EQUAL(b.d.full_attention_interval, a.d.full_attention_interval);
        CU_ASSERT_EQUAL(b.d.linear_value_heads, a.d.linear_value_heads);
        CU_ASSERT_EQUAL(b.d.attn_sinks, a.d.attn_sinks);
        CU_ASSERT_EQUAL(b.d.attn_weight_precision, a.d.attn_weight_precision);
    }
}

/* A file the model cannot express, or that is not JSON, is an error that
 * names the file and the field (or the line). */
static void test_hf_errors(void)
{
    char src[1024], path[1024], why[512];
    hf_path("openai--gpt-oss-120b_config.json", src, sizeof src);
    json_error_t je;
    json_t *d = json_load_file(src, 0, &je);
    CU_ASSERT_FATAL(d != NULL);
    json_array_set_new(json_object_get(d, "layer_types"), 0, json_string("full_attention"));
    snprintf(path, sizeof path, "%s/pattern--x_config.json",
             getenv("MADSWEEP_TEST_TMP") ? getenv("MADSWEEP_TEST_TMP") : "/tmp");
    CU_ASSERT_FATAL(json_dump_file(d, path, 0) == 0);
    json_decref(d);
    model_t m;
    CU_ASSERT_EQUAL(hf_config_read(path, &m, why, sizeof why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "pattern--x_config.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "field layer_types"));
    char text[64];
    const char *bad = unit_write_file("notjson_config.json", "{\"hidden_size\": 8,\n \"x\": }",
                                      text, sizeof text);
    CU_ASSERT_EQUAL(hf_config_read(bad, &m, why, sizeof why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, ":2:"));

    /* a whole, positive figure beyond the key's range (a hidden size of
     * 5.12e10) is refused at the point's hf_config key, as the key would
     * be had the group stated it (issue 29: it reached the rules, which
     * said only "a value is outside its domain") */
    hf_path("Qwen--Qwen3-32B_config.json", src, sizeof src);
    d = json_load_file(src, 0, &je);
    CU_ASSERT_FATAL(d != NULL);
    json_object_set_new(d, "hidden_size", json_integer(INT64_C(51200000000)));
    snprintf(path, sizeof path, "%s/huge--x_config.json",
             getenv("MADSWEEP_TEST_TMP") ? getenv("MADSWEEP_TEST_TMP") : "/tmp");
    CU_ASSERT_FATAL(json_dump_file(d, path, 0) == 0);
    json_decref(d);
    char pt[2048], cfg[1024];
    snprintf(pt, sizeof pt,
             "fidelity = \"detailed\";\n"
             "model = { name = \"huge\"; hf_config = \"%s\"; seq_len = 4096; };\n"
             "system = { name = \"s\"; hardware = \"h100-sxm-80g\"; devices = 8; };\n"
             "task = { type = \"inference\"; tp = 8; pp = 1; dp = 1; prompt_tokens = 512;\n"
             "  decode_tokens = 64; };\n",
             path);
    unit_write_file("huge_point.cfg", pt, cfg, sizeof cfg);
    point_t p;
    load_err le;
    CU_ASSERT_NOT_EQUAL(load_point(cfg, unit_configs(), &p, &le), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "huge_point.cfg:2: key 'hidden'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(le.text, "(from hf_config)"));
}

/* Parameter counts against the model cards. gpt-oss-120b: 116.83B total,
 * 5.13B active per token (OpenAI's model card, its parameter table; the
 * 0.04B of biases are not modelled, the embedding lookup is not active).
 * Qwen3.5-397B-A17B: 397B total and 17B activated (its card), which
 * count neither the MTP layer nor, for the text model, the vision encoder
 * of vision_config: 27 blocks of 4 x 1152^2 + 2 x 1152 x 4304, the
 * merger's 4608 x 4608 + 4608 x 4096, the patch and position embeddings
 * (3 x 2 x 16 x 16 x 1152 + 2304 x 1152): 0.456B. */
static void test_card_params(void)
{
    model_t g = cat_model("gpt-oss-120b");
    double h = 2880.0, unvisited = (128.0 - 4.0) * 36.0 * 3.0 * h * 2880.0;
    double tot = total_params(&g);
    CU_ASSERT(fabs(tot / 1e9 - 116.83) <= 0.05);
    CU_ASSERT(fabs((tot - unvisited - 201088.0 * h) / 1e9 - 5.13) <= 0.005);
    model_t q = cat_model("qwen3.5-397b-a17b");
    q.d.mtp_layers = 0;
    double vision = 27.0 * (4.0 * 1152.0 * 1152.0 + 2.0 * 1152.0 * 4304.0) +
                    4608.0 * 4608.0 + 4608.0 * 4096.0 + 3.0 * 2.0 * 16.0 * 16.0 * 1152.0 +
                    2304.0 * 1152.0;
    double qt = total_params(&q);
    CU_ASSERT(fabs((qt + vision) / 1e9 - 397.0) <= 0.5);
    double qu = (512.0 - 10.0) * 60.0 * 3.0 * 4096.0 * 1024.0;
    CU_ASSERT(fabs((qt - qu) / 1e9 - 17.0) <= 0.5);
}

/* Layer kinds per pipeline stage: the closed form's counts against the
 * config's layer_types walked layer by layer over each stage's chunks. */
static void check_stages(const char *cfgfile, const char *kind, point_t *p)
{
    static dt_eval v;
    result_t r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_FATAL(dt_setup_begin(p, &v) == STATUS_OK);
    CU_ASSERT_FATAL(dt_setup_split(&v) == STATUS_OK);
    char path[1024];
    json_error_t je;
    json_t *d = json_load_file(hf_path(cfgfile, path, sizeof path), 0, &je);
    CU_ASSERT_FATAL(d != NULL);
    json_t *tc = json_object_get(d, "text_config");
    json_t *types = json_object_get(tc ? tc : d, "layer_types");
    CU_ASSERT_FATAL((int64_t)json_array_size(types) == p->model.layers);
    for (int64_t s = 0; s < v.c.d.pp; s++) {
        int64_t alt = 0, all = 0;
        for (int64_t k = s; k < v.sp.chunks; k += v.c.d.pp) {
            int64_t lo, hi;
            dt_pipe_chunk_range(&v.c, &v.sp, k, &lo, &hi);
            for (int64_t i = lo; i < hi; i++) {
                all++;
                alt += strcmp(json_string_value(json_array_get(types, (size_t)i)), kind) == 0;
            }
        }
        CU_ASSERT_EQUAL(dt_stage_alt(&v.st.s[s]), alt);
        CU_ASSERT_EQUAL(dt_stage_layers(&v.st.s[s], false) + dt_stage_layers(&v.st.s[s], true),
                        all);
    }
    json_decref(d);
}

static void test_stage_kinds(void)
{
    point_t p = point_of("detailed_gpt_oss_120b_serving.cfg");
    int64_t pps[] = {1, 4, 5, 7};
    for (size_t i = 0; i < 4; i++) {
        p.task.detailed.pp = pps[i];
        p.system.devices = pps[i];
        check_stages("openai--gpt-oss-120b_config.json", "sliding_attention", &p);
    }
    point_t q = point_of("detailed_qwen35_serving.cfg");
    q.task.detailed.tp = 1;
    for (size_t i = 0; i < 4; i++) {
        q.task.detailed.pp = pps[i];
        q.system.devices = pps[i];
        check_stages("Qwen--Qwen3.5-397B-A17B_config.json", "linear_attention", &q);
    }
}

/* The KV and state a request costs, by hand from the config figures.
 * gpt-oss-120b on vLLM (one pool, blocks of 16, nothing held back), a
 * prompt of 1024 and 1024 outputs at fixed lengths: a request holds on
 * average 1024 + 512 = 1536 tokens; its 18 full layers K and V of 8 heads
 * of 64 in BF16, 2048 B a token each, over 1536 tokens; its 18 window
 * layers over at most 128 tokens and a block: 144. Qwen3.5 on SGLang at
 * TP 8 (KV BF16, token-granular pool, 0.4 of the remaining output held
 * back: 1000 + 500 x 1.4 = 1700 tokens): 15 full layers of 2 KV heads of
 * 256 (one per device: 1024 B a token); 45 Gated DeltaNet layers of 8
 * value heads of 128 x 128 in float32 (524,288 B) and the conv's last 3
 * inputs of 2 x 2 x 128 + 8 x 128 channels in BF16 (9,216 B) per device;
 * SGLang's state pool of 0.9 of the KV's memory, 3 slots a request:
 * max(KV x 1.9, state x 3 x 1.9 / 0.9). DeepSeek-V3.2 at TP 8: each layer
 * MLA's 576-wide latent in BF16 and the indexer's 128 FP8 keys with a
 * 4-byte scale, replicated: 61 x 1284 B a token. */
static void test_kv_state_by_hand(void)
{
    static dt_eval v;
    result_t r;
    point_t p = point_of("detailed_gpt_oss_120b_serving.cfg");
    CU_ASSERT_FATAL(dt_setup(&p, &v, &r) == STATUS_OK);
    double full = 18.0 * 2.0 * 8.0 * 64.0 * 2.0;
    CU_ASSERT_DOUBLE_EQUAL(v.mem.kv.seq_bytes, full * 1536.0 + full * 144.0, 1.0);
    point_t q = point_of("detailed_qwen35_serving.cfg");
    CU_ASSERT_FATAL(dt_setup(&q, &v, &r) == STATUS_OK);
    double state = 45.0 * (8.0 * 128.0 * 128.0 * 4.0 + 3.0 * (2.0 * 2.0 * 128.0 + 8.0 * 128.0) * 2.0);
    double kv = 15.0 * 1024.0 * 1700.0;
    CU_ASSERT_DOUBLE_EQUAL(v.mem.kv.state_bytes, state, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(v.mem.kv.seq_bytes, fmax(kv * 1.9, state * 3.0 * 1.9 / 0.9), 1.0);
    point_t s = point_of("detailed_deepseek_v3_serving.cfg");
    s.model = cat_model("deepseek-v3.2");
    s.task.detailed.attn_dp = 0;
    CU_ASSERT_FATAL(dt_setup(&s, &v, &r) == STATUS_OK);
    CU_ASSERT_DOUBLE_EQUAL(v.mem.kv.tok_bytes, 61.0 * (576.0 * 2.0 + 128.0 + 4.0), 1e-6);
}

/* Weights of gpt-oss-120b on one H200 with FP4 experts: the checkpoint's
 * BF16 attention (36 x (2880 x (64 + 16) x 64 + 64 x 64 x 2880 + 64
 * sinks) x 2 B), the experts in NVFP4 (128 x 3 x 2880^2 x 36 x 0.5625 B),
 * the router at the experts' precision, the embedding and the head in
 * BF16 (2 x 201088 x 2880 x 2 B). */
static void test_part_precision(void)
{
    point_t p = point_of("detailed_gpt_oss_120b_serving.cfg");
    result_t r = unit_eval(&p);
    double attn = 36.0 * (2880.0 * 80.0 * 64.0 + 64.0 * 64.0 * 2880.0 + 64.0) * 2.0;
    double experts = 128.0 * 3.0 * 2880.0 * 2880.0 * 36.0 * 0.5625;
    double router = 2880.0 * 128.0 * 36.0 * 0.5625, ends = 2.0 * 201088.0 * 2880.0 * 2.0;
    CU_ASSERT_DOUBLE_EQUAL(r.mem_weights_bytes_per_device, attn + experts + router + ends, 1.0);
    /* the same checkpoint with every part in FP4 holds less */
    p.model.d.attn_weight_precision = 0;
    CU_ASSERT(unit_eval(&p).mem_weights_bytes_per_device < r.mem_weights_bytes_per_device);
}

/* Model FLOPs per sequence against the configs walked layer by layer:
 * per token 2 x the matmul parameters a token meets (the attention of its
 * layer's kind, its experts, the head; the router, as for every MoE
 * model, not counted) and each layer's core: full
 * attention 2 x heads x (dk + dv) x the causal mean keys, a window's keys
 * summed position by position (oracle_window_pairs), Gated DeltaNet's
 * chunked form kernel by kernel (oracle_gdn_chunk_flops) per value head. */
static void test_flops_layer_by_layer(void)
{
    model_t g = cat_model("gpt-oss-120b");
    g.seq_len = 8192;
    double s = 8192.0, h = 2880.0;
    double attn = 2880.0 * 80.0 * 64.0 + 64.0 * 64.0 * 2880.0 + 64.0;
    double per_tok = 2.0 * (36.0 * (attn + 4.0 * 3.0 * h * 2880.0) + 201088.0 * h);
    double core = 0.0;
    for (int i = 0; i < 36; i++)
        core += i % 2 == 0 ? 2.0 * 64.0 * 128.0 * oracle_window_pairs(8192, 128) / s
                           : 2.0 * 64.0 * 128.0 * (s / 2.0);
    UNIT_ASSERT_CLOSE(detailed_model_flops(&g, true), s * (per_tok + core), 1e-4);
    model_t q = cat_model("qwen3.5-397b-a17b");
    q.d.mtp_layers = 0;
    q.seq_len = 4096;
    s = 4096.0;
    h = 4096.0;
    double fattn = h * (32.0 * 256.0 * 2.0 + 2.0 * 2.0 * 256.0) + 32.0 * 256.0 * h;
    double lattn = h * (2.0 * 16.0 * 128.0 + 2.0 * 64.0 * 128.0 + 2.0 * 64.0) + 64.0 * 128.0 * h +
                   (2.0 * 16.0 * 128.0 + 64.0 * 128.0) * 4.0 + 2.0 * 64.0 + 128.0;
    double moe = 11.0 * 3.0 * h * 1024.0;
    per_tok = 2.0 * (15.0 * fattn + 45.0 * lattn + 60.0 * moe + 248320.0 * h);
    core = 15.0 * 2.0 * 32.0 * 512.0 * (s / 2.0) + 45.0 * 64.0 * oracle_gdn_chunk_flops(64, 128, 128);
    UNIT_ASSERT_CLOSE(detailed_model_flops(&q, true), s * (per_tok + core), 1e-4);
}

/* Serving properties: gpt-oss's windows read less KV than the same
 * layers as full attention (its decode at a long prompt is faster and
 * the cache admits more requests); Qwen3.5's linear layers hold a state
 * that does not grow with the context (the decode step grows only with
 * the 15 full layers' KV). */
static void test_serving_kinds(void)
{
    point_t p = point_of("detailed_gpt_oss_120b_serving.cfg");
    p.task.detailed.prompt_tokens = 32768;
    p.task.detailed.concurrency = 16;
    result_t w = unit_eval(&p);
    p.model.d.full_attention_interval = 1;
    result_t f = unit_eval(&p);
    CU_ASSERT(w.tpot_s < f.tpot_s);
    CU_ASSERT(w.concurrency_max > f.concurrency_max);
    point_t q = point_of("detailed_qwen35_serving.cfg");
    q.task.detailed.concurrency = 16;
    result_t a = unit_eval(&q);
    q.task.detailed.prompt_tokens = 16000;
    result_t b = unit_eval(&q);
    q.model.d.full_attention_interval = 1;
    result_t c = unit_eval(&q);
    q.task.detailed.prompt_tokens = 1000;
    result_t d = unit_eval(&q);
    CU_ASSERT(b.tpot_s / a.tpot_s < c.tpot_s / d.tpot_s);
}

/* Training with the kinds: gpt-oss and Qwen3.5 layers train (a point of
 * each evaluates on 1024 H100 with pipeline stages of mixed kinds), a
 * window's layers cost less than full attention at 16K tokens, and the
 * activations of a stage are those of its layers' kinds. */
static void test_training_kinds(void)
{
    point_t p = point_of("detailed_deepseek_v3_h100.cfg");
    p.model = cat_model("gpt-oss-120b");
    p.model.seq_len = 16384;
    result_t w = unit_eval(&p);
    CU_ASSERT(w.iteration_time_s > 0.0);
    p.model.d.full_attention_interval = 1;
    result_t f = unit_eval(&p);
    CU_ASSERT(w.iteration_time_s < f.iteration_time_s);
    p.model = cat_model("qwen3.5-397b-a17b");
    p.model.seq_len = 4096;
    result_t q = unit_eval(&p);
    CU_ASSERT(q.iteration_time_s > 0.0 && isfinite(q.mem_activations_bytes_per_device));
}

/* MTP drafting: DeepSeek-V3's own module drafts one token a step; at
 * light load (one request) the verify step costs about a plain one and
 * 0.8 acceptance gives 1.8 tokens a step, so a token costs less; the
 * module's weights are then in memory (they are not without drafting). */
static void test_mtp(void)
{
    point_t p = point_of("detailed_deepseek_v3_serving.cfg");
    p.task.detailed.concurrency = 1;
    result_t plain = unit_eval(&p);
    p.task.detailed.spec_tokens = 1;
    p.task.detailed.spec_acceptance = 0.8;
    result_t mtp = unit_eval(&p);
    CU_ASSERT(mtp.tpot_s < plain.tpot_s && mtp.tpot_s > plain.tpot_s / 1.8);
    CU_ASSERT(mtp.mem_weights_bytes_per_device > plain.mem_weights_bytes_per_device);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("kinds", NULL, NULL);
    CU_add_test(s, "hf config = catalogue entry", test_hf_matches_catalogue);
    CU_add_test(s, "hf config errors", test_hf_errors);
    CU_add_test(s, "model card parameters", test_card_params);
    CU_add_test(s, "kinds per stage", test_stage_kinds);
    CU_add_test(s, "KV and state by hand", test_kv_state_by_hand);
    CU_add_test(s, "per-part precision", test_part_precision);
    CU_add_test(s, "FLOPs layer by layer", test_flops_layer_by_layer);
    CU_add_test(s, "serving kinds", test_serving_kinds);
    CU_add_test(s, "training kinds", test_training_kinds);
    CU_add_test(s, "MTP drafting", test_mtp);
    return unit_run();
}
