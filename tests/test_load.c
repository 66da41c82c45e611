/*
 * test_load.c - loading points and catalogues, good and bad.
 *
 * Golden-message tests: each bad input must fail with a message that
 * names the file, the line and the key at fault. Every catalogue entry
 * must load and derive.
 */
#include <libconfig.h>
#include <stdio.h>
#include <string.h>

#include "../driver/load/load.h"
#include "unit.h"

/* A valid point, one key per line so tests can target line numbers:
 * line 1 fidelity, 2 model, 3 system {, 4 name ... */
static const char *const good_point =
    "fidelity = \"madmax\";\n"                   /* 1 */
    "model = \"llama2_70b\";\n"                  /* 2 */
    "system = {\n"                               /* 3 */
    "  name = \"test_2x8\";\n"                   /* 4 */
    "  devices = 16;\n"                          /* 5 */
    "  nodes = 2;\n"                             /* 6 */
    "  peak_fp64_flops = 9.7e12;\n"              /* 7 */
    "  peak_fp32_flops = 156e12;\n"              /* 8 */
    "  peak_fp16_flops = 312e12;\n"              /* 9 */
    "  peak_int8_ops = 624e12;\n"                /* 10 */
    "  flops_util = 0.7;\n"                      /* 11 */
    "  mem_capacity_bytes = 40e9;\n"             /* 12 */
    "  mem_bw_bytes_per_s = 1555e9;\n"           /* 13 */
    "  mem_bw_util = 0.8;\n"                     /* 14 */
    "  nvlinks = 12;\n"                          /* 15 */
    "  nvlink_bidir_bytes_per_s = 50e9;\n"       /* 16 */
    "  nvlink_util = 0.6;\n"                     /* 17 */
    "  nic_ports = 8;\n"                         /* 18 */
    "  nic_bidir_bytes_per_s = 25e9;\n"          /* 19 */
    "  nic_util = 0.5;\n"                        /* 20 */
    "  allreduce_intra_fraction = 0.25;\n"       /* 21 */
    "};\n"                                       /* 22 */
    "task = {\n"                                 /* 23 */
    "  type = \"pretrain\";\n"                   /* 24 */
    "  dense = [\"fsdp:8\", \"ddp:2\"];\n"       /* 25 */
    "  embedding = [\"ddp:16\"];\n"              /* 26 */
    "  local_batch_dense = 2;\n"                 /* 27 */
    "  local_batch_emb = 2;\n"                   /* 28 */
    "};\n";                                      /* 29 */

/* Replaces the first occurrence of `from` in good_point by `to`. */
static void variant(const char *from, const char *to, char *out, size_t size)
{
    const char *at = strstr(good_point, from);
    if (!at) {
        snprintf(out, size, "%s", good_point);
        return;
    }
    snprintf(out, size, "%.*s%s%s", (int)(at - good_point), good_point, to,
             at + strlen(from));
}

/* Loads text as a point; returns the load result and the message. */
static int load_text(const char *name, const char *text, char *path,
                     size_t psize, load_err *err)
{
    point_t p;
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(name, text, path, psize));
    return load_point(path, unit_configs(), &p, err);
}

/* Expects a failure whose message starts with "PATH:LINE:" and contains
 * every given fragment. */
static void expect_fail(const char *name, const char *from, const char *to,
                        int line, const char *frag1, const char *frag2)
{
    char text[4096], path[512], prefix[600];
    load_err err;
    variant(from, to, text, sizeof text);
    int rc = load_text(name, text, path, sizeof path, &err);
    CU_ASSERT_EQUAL(rc, -1);
    snprintf(prefix, sizeof prefix, "%s:%d:", path, line);
    int ok = rc == -1 && strncmp(err.text, prefix, strlen(prefix)) == 0 &&
             strstr(err.text, frag1) && (!frag2 || strstr(err.text, frag2));
    if (!ok)
        fprintf(stderr, "\n%s: got \"%s\", want prefix \"%s\" with \"%s\"%s%s\n",
                name, rc == -1 ? err.text : "(success)", prefix, frag1,
                frag2 ? " and " : "", frag2 ? frag2 : "");
    CU_ASSERT(ok);
}

static void test_good_point(void)
{
    char path[512];
    load_err err;
    point_t p;
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        unit_write_file("good.cfg", good_point, path, sizeof path));
    int rc = load_point(path, unit_configs(), &p, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(p.model.name, "llama2_70b");
    CU_ASSERT_EQUAL(p.model.layers, 80);
    CU_ASSERT_EQUAL(p.cluster.devices_per_node, 8);
    CU_ASSERT_EQUAL(p.task.dense.nlevels, 2);
    CU_ASSERT_EQUAL(p.task.dense.strategy[0], PLAN_FSDP);
    CU_ASSERT_EQUAL(p.task.dense.degree[1], 2);
    /* integers are accepted for float keys */
    char text[4096];
    variant("nvlink_bidir_bytes_per_s = 50e9;", "nvlink_bidir_bytes_per_s = 50000000000L;",
            text, sizeof text);
    CU_ASSERT_EQUAL(load_text("good_int.cfg", text, path, sizeof path, &err), 0);
}

static void test_bad_inputs(void)
{
    expect_fail("syntax.cfg", "  nodes = 2;\n", "  nodes = = 2;\n", 6, "syntax error",
                NULL);
    expect_fail("missing.cfg", "  nic_util = 0.5;\n", "", 3,
                "missing key 'nic_util'", "system");
    expect_fail("mistyped.cfg", "  nodes = 2;", "  nodes = \"two\";", 6,
                "key 'nodes'", "expected an integer");
    expect_fail("mistyped_float.cfg", "  flops_util = 0.7;", "  flops_util = true;",
                11, "key 'flops_util'", "expected a number");
    expect_fail("unknown.cfg", "  nodes = 2;", "  nodes = 2; nods = 3;", 6,
                "unknown key 'nods'", NULL);
    expect_fail("zero_bw.cfg", "nvlink_bidir_bytes_per_s = 50e9;",
                "nvlink_bidir_bytes_per_s = 0.0;", 16,
                "key 'nvlink_bidir_bytes_per_s'", "must be a finite number > 0");
    expect_fail("negative_bw.cfg", "nic_bidir_bytes_per_s = 25e9;",
                "nic_bidir_bytes_per_s = -25e9;", 19, "key 'nic_bidir_bytes_per_s'",
                NULL);
    expect_fail("product.cfg", "[\"fsdp:8\", \"ddp:2\"]", "[\"fsdp:8\", \"ddp:4\"]",
                25, "do not multiply to the number of devices", "invalid:product");
    expect_fail("first_degree.cfg", "[\"fsdp:8\", \"ddp:2\"]",
                "[\"fsdp:2\", \"ddp:8\"]", 25, "first degree", "invalid:first-degree");
    expect_fail("fsdp_first.cfg", "[\"fsdp:8\", \"ddp:2\"]", "[\"ddp:8\", \"fsdp:2\"]",
                25, "fsdp can only be the first level", NULL);
    expect_fail("bad_plan.cfg", "\"ddp:16\"]", "\"ddp16\"]", 26,
                "key 'embedding'", "strategy:degree");
    expect_fail("batch.cfg", "local_batch_emb = 2;", "local_batch_emb = 3;", 23,
                "different global batches", NULL);
    expect_fail("zero_batch.cfg", "local_batch_dense = 2;", "local_batch_dense = 0;",
                27, "key 'local_batch_dense'", "must be positive");
    expect_fail("catalogue.cfg", "\"llama2_70b\"", "\"llama9_70b\"", 2,
                "\"llama9_70b\" is not in the catalogue", NULL);
    expect_fail("fidelity.cfg", "\"madmax\"", "\"magic\"", 1, "key 'fidelity'", NULL);
    expect_fail("nodes.cfg", "  nodes = 2;", "  nodes = 3;", 6, "key 'nodes'",
                "do not divide");
    expect_fail("ft_key.cfg", "  local_batch_emb = 2;\n",
                "  local_batch_emb = 2;\n  freeze_emb = true;\n", 29,
                "key 'freeze_emb' only applies", NULL);
    expect_fail("ft_missing.cfg", "\"pretrain\"", "\"finetune\"", 23,
                "missing key 'freeze_emb'", NULL);
    expect_fail("task_type.cfg", "\"pretrain\"", "\"pretrian\"", 24,
                "unknown value \"pretrian\"", NULL);
    expect_fail("top.cfg", "fidelity = \"madmax\";", "fidelity = \"madmax\"; x = 1;",
                1, "unknown key 'x' in point", NULL);

    /* a file that does not exist */
    load_err err;
    point_t p;
    CU_ASSERT_EQUAL(load_point("/nonexistent/point.cfg", unit_configs(), &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "/nonexistent/point.cfg: cannot read"));
}

/* Every entry of the shipped catalogues loads and derives. */
static void test_catalogues(void)
{
    const char *files[2] = {"models.cfg", "systems.cfg"};
    const char *lists[2] = {"models", "systems"};
    int counts[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", unit_configs(), files[k]);
        config_t cfg;
        load_err err;
        CU_ASSERT_EQUAL_FATAL(load_open(&cfg, path, unit_configs(), &err), 0);
        const config_setting_t *list = config_lookup(&cfg, lists[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(list);
        for (int i = 0; i < config_setting_length(list); i++) {
            const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
            int rc;
            if (k == 0) {
                model_t m;
                rc = load_model(g, &m, &err);
            } else {
                cluster_t c;
                rc = load_system(g, unit_configs(), NULL, &c, &err);
            }
            if (rc)
                fprintf(stderr, "%s\n", err.text);
            CU_ASSERT_EQUAL(rc, 0);
            counts[k]++;
        }
        config_destroy(&cfg);
    }
    /* the reference ships 2 models (+4 from the parity sample) and 65 systems */
    CU_ASSERT_EQUAL(counts[0], 6);
    CU_ASSERT_EQUAL(counts[1], 65);
}

/* Every shipped example point loads and evaluates. */
static void test_example_points(void)
{
    const char *points[] = {"llama2_70b_dc_A_2048_fsdp.cfg", "dlrm_a_zionex_128.cfg",
                            "llama2_70b_finetune_tp.cfg", "dlrm_a_inference.cfg"};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/points/%s", unit_configs(), points[i]);
        point_t p;
        load_err err;
        int rc = load_point(path, unit_configs(), &p, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.text);
        CU_ASSERT_EQUAL(rc, 0);
        engine e;
        engine_init(&e, false);
        result_t r;
        CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        CU_ASSERT(r.iteration_time_s > 0);
        engine_free(&e);
    }
}

/* Every task key that a task type ignores is refused at its line (issue
 * 19): the serving keys of training tasks, the training keys of inference
 * tasks, the fine-tuning keys of the others. Each case is a detailed
 * point whose task is valid without the key (line 6 holds the key); the
 * keys and types are the `types` of driver/load/load_task.c's key tables,
 * found ignored by evaluating points with and without them. */
#define TKEY_POINT                                                                   \
    "fidelity = \"detailed\";\nmodel = \"%s\";\nstack = \"%s\";\n"                      \
    "system = { name = \"h100-8\"; hardware = \"h100-sxm-80g\"; devices = 8; };\n"      \
    "task = { type = \"%s\"; %s\n%s\n};\n"
static void test_task_type_keys(void)
{
    static const char *const llm_train =
        "tp = 2; pp = 2; dp = 2; micro_batch = 1; global_batch = 64;";
    static const char *const llm_infer =
        "tp = 2; pp = 2; dp = 2; micro_batch = 8; prompt_tokens = 1024; "
        "decode_tokens = 128;";
    static const char *const dlrm = "dp = 8; global_batch = 65536;";
    static const struct {
        const char *model, *stack, *type, *base, *key, *types;
    } cases[] = {
        /* serving keys of a training task */
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "prompt_tokens = 512;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "decode_tokens = 64;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "scheduler = \"static\";", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "concurrency = 4;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "request_rate = 2.0;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "kv_precision = \"fp8\";", "\"inference\""},
        {"llama2-7b", "megatron-core", "finetune", llm_train, "weight_precision = \"int4\";", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "spec_tokens = 2;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "spec_acceptance = 0.5;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "spec_draft_cost = 0.1;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "ttft_max_s = 1.0;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "tpot_max_s = 0.1;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "requests = 500;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "uniform_lengths = true;", "\"inference\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "attn_dp = 8;", "\"inference\""},
        /* fine-tuning keys of the other types */
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "lora_rank = 8;", "\"finetune\""},
        {"llama2-7b", "megatron-core", "pretrain", llm_train, "frozen_layers = 2;", "\"finetune\""},
        {"llama2-7b", "vllm", "inference", llm_infer, "lora_rank = 8;", "\"finetune\""},
        {"llama2-7b", "vllm", "inference", llm_infer, "freeze_emb = true;", "\"finetune\""},
        {"dlrm-mlperf", "unknown", "pretrain", dlrm, "freeze_top_mlp = true;", "\"finetune\""},
        /* training keys of an inference task */
        {"llama2-7b", "vllm", "inference", llm_infer, "zero_stage = 1;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "shard_degree = 2;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "grad_accum = 2;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "grad_reduce_bytes = 4.0;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "overlap_dp_comm = false;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "recompute = \"full\";", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "recompute_layers = 2;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "vpp = 2;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "schedule = \"gpipe\";", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "attention = \"flash\";", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "overlap_tp_comm = false;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "fp8_recipe = \"current\";", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "moe_a2a_overlap = true;", "\"pretrain\" and"},
        {"llama2-7b", "vllm", "inference", llm_infer, "compiled = true;", "\"pretrain\" and"},
        {"dlrm-mlperf", "unknown", "inference", dlrm, "emb_optimizer = \"sgd\";", "\"pretrain\" and"},
        {"dlrm-mlperf", "unknown", "inference", dlrm, "allreduce_sharp = true;", "\"pretrain\" and"},
        {"dlrm-mlperf", "unknown", "inference", dlrm, "overlap_dp_comm = false;", "\"pretrain\" and"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024], path[512], name[32], prefix[600], key[64];
        load_err err;
        point_t p;
        /* valid without the key */
        snprintf(text, sizeof text, TKEY_POINT, cases[i].model, cases[i].stack, cases[i].type,
                 cases[i].base, "");
        snprintf(name, sizeof name, "tkey%zu_ok.cfg", i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(name, text, path, sizeof path));
        int rc = load_point(path, unit_configs(), &p, &err);
        if (rc)
            fprintf(stderr, "\ncase %zu without its key: %s\n", i, err.text);
        CU_ASSERT_EQUAL(rc, 0);
        /* refused with it, at its line, naming the types it applies to */
        snprintf(text, sizeof text, TKEY_POINT, cases[i].model, cases[i].stack, cases[i].type,
                 cases[i].base, cases[i].key);
        snprintf(name, sizeof name, "tkey%zu.cfg", i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(name, text, path, sizeof path));
        rc = load_point(path, unit_configs(), &p, &err);
        snprintf(prefix, sizeof prefix, "%s:6: key '", path);
        snprintf(key, sizeof key, "%.*s' only applies to", (int)strcspn(cases[i].key, " "),
                 cases[i].key);
        int ok = rc == -1 && strncmp(err.text, prefix, strlen(prefix)) == 0 &&
                 strstr(err.text, key) && strstr(err.text, cases[i].types);
        if (!ok)
            fprintf(stderr, "\ncase %zu (%s task, %s): got \"%s\"\n", i, cases[i].type,
                    cases[i].key, rc == -1 ? err.text : "(success)");
        CU_ASSERT(ok);
    }
}

/* One row per key carries its range and unit (driver/load/load_key.h):
 * every number key has both, the range text the other rooms print is the
 * row's, and a value just past a row's bound is refused with that range.
 * The bounds are range.h's policy (layer counts at most 2^16, the device
 * bound 2^24), not figures this code printed. */
static void test_key_table(void)
{
    char msg[256] = "", r[64];
    CU_ASSERT_EQUAL(load_keys_check(msg, sizeof msg), 0);
    if (msg[0])
        fprintf(stderr, "%s\n", msg);
    CU_ASSERT_STRING_EQUAL(load_keys_range_text(LOAD_NS_DMODEL, "layers", r, sizeof r),
                           "1 to 65536");
    CU_ASSERT_STRING_EQUAL(load_keys_range_text(LOAD_NS_PREFILL, "devices", r, sizeof r),
                           "1 to 16777216");
    CU_ASSERT_PTR_NULL(load_keys_range_text(LOAD_NS_DMODEL, "arch", r, sizeof r));
    CU_ASSERT_PTR_NULL(load_keys_range_text(LOAD_NS_DMODEL, "no_such_key", r, sizeof r));
    CU_ASSERT_STRING_EQUAL(load_keys_unit(LOAD_NS_HW, "mem_bw_bytes_per_s"),
                           "bytes/s per device");
    CU_ASSERT_STRING_EQUAL(load_keys_unit(LOAD_NS_DTASK, "sequence_parallel"), "bool");
    /* the loader checks by the same row: 2^16 + 1 layers are refused */
    char path[512];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("layers_past_row.cfg",
        "fidelity = \"detailed\";\n"
        "model = { name = \"m\"; type = \"llm\"; layers = 65537; hidden = 4096; ffn = 16384;\n"
        "  heads = 32; seq_len = 2048; vocab = 32000; };\n"
        "system = \"h100-8\";\ntask = { type = \"pretrain\"; tp = 1; pp = 1; dp = 8; "
        "global_batch = 8; };\n", path, sizeof path));
    point_t p;
    load_err err;
    CU_ASSERT(load_point(path, unit_configs(), &p, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "key 'layers': 65537 is out of range: must be "
                                            "positive, 1 to 65536"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("load", NULL, NULL);
    CU_add_test(s, "a good point", test_good_point);
    CU_add_test(s, "bad inputs name file, line and key", test_bad_inputs);
    CU_add_test(s, "every catalogue entry loads", test_catalogues);
    CU_add_test(s, "example points evaluate", test_example_points);
    CU_add_test(s, "keys a task type ignores are refused", test_task_type_keys);
    CU_add_test(s, "one row per key: range and unit", test_key_table);
    return unit_run();
}
