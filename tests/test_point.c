/*
 * test_point.c - `madsweep point` then `madsweep eval --json` reproduces
 * a sweep row exactly, in both fidelities.
 *
 * Under mpiexec -n 1: sweeps a small detailed spec (dense, MoE and DLRM
 * models; catalogue and generated systems, the latter with board power
 * and price overrides; pretraining, fine-tuning with frozen layers and
 * serving, colocated and with disaggregated prefill pools) and a small MAD-Max spec (DLRM and LLM, a system_grid with NIC
 * scaling and idle power and price overrides, a fine-tuning task)
 * in-process, both over a copy of configs/. Then hardware.cfg and systems.cfg of the copy
 * are edited, so a point rebuilt from the catalogue directory would
 * differ: `point` must use the texts stored in the file. For a sample of
 * rows of each file (evenly spread, the last of every model and task,
 * and rows that are not ok), the real
 * binary prints the point file, `eval --json` evaluates it with no
 * catalogue directory at all (MADSWEEP_CONFIGS=/nonexistent: every input
 * is inline), and every figure of result_fields[] must equal the row's
 * bit for bit (JSON null for NaN), the status too: energy and cost with
 * the overrides, the band and the resolved figures included. A detailed
 * point file states its stack, a MAD-Max one its system's hardware. Bad
 * ids are refused.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/output.h"
#include "../worker/space.h"
#include "../driver/sweep/spec_load.h"
#include "../driver/sweep/sweep.h"
#include "unit.h"

static char g_dir[600], g_files[4][600], g_specs[4][600];

static const char *const specs[4] = {
    "fidelity = \"detailed\";\n"
    "models = [\"llama3-8b\", \"mixtral-8x7b\", \"dlrm-mlperf\"];\n"
    "systems = [\"h100-8\"];\n"
    /* a training stack and an engine: a training stack's point file
     * carries no serving facts (their zeros were out of range) */
    "stacks = [\"megatron-core\", \"vllm\"];\n"
    "system_grid = ( { hardware = \"mi300x\"; nodes = [2];\n"
    "                  nic_gbps_per_device = [100.0]; board_power_w = 650.0;\n"
    "                  price_per_hour_usd = 2.5; } );\n"
    "tasks = ( \"pretrain\",\n"
    "  { type = \"finetune\"; name = \"ft\"; frozen_layers = 8; freeze_emb = true; },\n"
    "  { type = \"inference\"; name = \"serve\"; prompt_tokens = 512;\n"
    "    decode_tokens = 16; },\n"
    /* a disaggregated prefill pool (the file's hardware inline in the
     * point, the system's when the task names none) */
    "  { type = \"inference\"; name = \"serve_pd\"; prompt_tokens = 512;\n"
    "    decode_tokens = 16; concurrency = 32;\n"
    "    prefill = { hardware = \"h100-sxm-80g\"; devices = \"auto\"; tp = 2; }; },\n"
    "  { type = \"inference\"; name = \"serve_pd_own\"; prompt_tokens = 512;\n"
    "    decode_tokens = 16; concurrency = 32;\n"
    "    prefill = { devices = 8; tp = 4; kv_transfer = \"layerwise\"; }; } );\n"
    "global_batch = [64];\n"
    "strategies = \"auto\";\n",
    "fidelity = \"madmax\";\n"
    "models = [\"dlrm_a\", \"llama2_7b\"];\n"
    "systems = [\"zionex_128\"];\n"
    "system_grid = ( { base = \"dc_A_128\"; nodes = [2, 16];\n"
    "                  nic_scale = [0.5, 2.0]; idle_power_w = 90.0;\n"
    "                  price_per_hour_usd = 3.0; } );\n"
    "tasks = ( \"pretrain\", \"inference\",\n"
    "  { type = \"finetune\"; freeze_emb = true; freeze_dense = false;\n"
    "    min_frozen_layer = 16; } );\n"
    "global_batch = [1024];\n"
    "strategies = \"auto\";\n",
    /* an FP8 task on hardware without an FP8 peak (a user's own entry, the
     * A100) beside the H100 (issue 29: those rows were evaluated at the
     * BF16 peak and `point` wrote a precision the hardware lacks) */
    "fidelity = \"detailed\";\n"
    "hardware = ( { name = \"my-a100\"; base = \"a100-80g\"; board_power_w = 350.0; } );\n"
    "models = [\"llama3-8b\"];\n"
    "system_grid = ( { hardware = [\"my-a100\", \"a100-80g\", \"h100-sxm-80g\"];\n"
    "                  nodes = [1]; } );\n"
    "stacks = [\"megatron-core\"];\n"
    "tasks = ( \"pretrain\", { type = \"pretrain\"; name = \"fp8\"; precision = \"fp8\"; } );\n"
    "global_batch = [64];\n"
    "strategies = ( { tp = 8; }, { tp = 4; }, { tp = 2; pp = 2; } );\n",
    /* tables past 2^32 rows (issue 29: the point file wrote them without
     * libconfig's L, which keeps the low 32 bits) */
    "fidelity = \"detailed\";\n"
    "models = ( { name = \"dlrm-wide\"; type = \"dlrm\"; tables = 2;\n"
    "    rows_per_table = [5000000000L, 1000L]; emb_dim = 16; pooling = 1;\n"
    "    bot_mlp = [13, 64, 16]; top_mlp = [64, 1]; },\n"
    "  { name = \"dlrm-one\"; type = \"dlrm\"; tables = 4; rows_per_table = 6000000000L;\n"
    "    emb_dim = 16; pooling = 1; bot_mlp = [13, 64, 16]; top_mlp = [64, 1]; } );\n"
    "systems = [\"h100-64\"];\n"
    "tasks = [\"pretrain\"];\n"
    "global_batch = [65536];\n"
    "strategies = \"auto\";\n"};

/* Value of "key": in a JSON object; NAN for null, -INFINITY if absent. */
static double json_value(const char *json, const char *key)
{
    char k[96];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *at = strstr(json, k);
    if (!at)
        return -INFINITY;
    at += strlen(k);
    if (strncmp(at, "null", 4) == 0)
        return NAN;
    return strtod(at, NULL);
}

static int same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* point -> eval --json -> every figure; returns the mismatches. */
static int check_row(const char *h5, const output_rows *rows, const char *row,
                     int verbose)
{
    const char *bin = getenv("MADSWEEP_BINARY");
    char cfg[700], cmd[2400];
    static char out[1 << 16];
    long long id = (long long)table_get_i64(row, rows->id);
    snprintf(cfg, sizeof cfg, "%s.point%lld.cfg", h5, id);
    snprintf(cmd, sizeof cmd, "MADSWEEP_CONFIGS=%s %s point %s %lld > %s", g_dir,
             bin, h5, id, cfg);
    if (unit_run_command(cmd, out, sizeof out) != 0) {
        fprintf(stderr, "point %lld failed: %s\n", id, out);
        return 1;
    }
    /* the point states its stack (detailed) or its hardware (MAD-Max) */
    snprintf(cmd, sizeof cmd, "grep -c -e '^stack = {' -e '^  hardware = ' %s", cfg);
    if (unit_run_command(cmd, out, sizeof out) != 0) {
        fprintf(stderr, "point %lld: no stack or hardware in the point file\n", id);
        return 1;
    }
    snprintf(cmd, sizeof cmd, "MADSWEEP_CONFIGS=/nonexistent %s eval --json %s",
             bin, cfg);
    int rc = unit_run_command(cmd, out, sizeof out);
    if (rc != 0) {
        fprintf(stderr, "eval of point %lld failed (%d): %s\n", id, rc, out);
        return 1;
    }
    int bad = 0;
    int32_t st = table_get_i32(row, rows->status);
    char want[64];
    snprintf(want, sizeof want, "\"status\":\"%s\"", status_name((status_code)st));
    if (!strstr(out, want)) {
        fprintf(stderr, "point %lld: status %s expected: %s\n", id, want, out);
        bad++;
    }
    for (size_t i = 0; i < result_nfields; i++) {
        const result_field *f = &result_fields[i];
        double v = f->type == RESULT_I64
                       ? (double)table_get_i64(row, rows->field[i])
                       : table_get_f64(row, rows->field[i]);
        double got = json_value(out, f->name);
        if (!same_bits(v, got)) {
            if (verbose)
                fprintf(stderr, "point %lld: %s is %.17g in the row, %.17g by "
                        "eval\n", id, f->name, v, got);
            bad++;
        }
    }
    remove(cfg);
    return bad;
}

/* The rows of g_files[which] (freed by the caller), *n of them. */
static char *read_rows(int which, eval_fidelity fidelity, output_rows *rows, hssize_t *n)
{
    output_rows_init(rows, fidelity);
    hid_t f = H5Fopen(g_files[which], H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    *n = 0;
    char *all = unit_read_results(f, &rows->t, n);
    H5Fclose(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    return all;
}

static void check_file(int which)
{
    const char *h5 = g_files[which];
    output_rows rows;
    hssize_t n;
    char *all = read_rows(which, which == 0 ? EVAL_DETAILED : EVAL_MADMAX, &rows, &n);
    CU_ASSERT_FATAL(n > 100);
    int checked = 0, not_ok = 0, bad = 0, disagg = 0;
    size_t pf = 0; /* the prefill_devices figure: finite on disaggregated rows */
    while (pf < result_nfields && strcmp(result_fields[pf].name, "prefill_devices") != 0)
        pf++;
    CU_ASSERT_FATAL(pf < result_nfields);
    /* 24 rows evenly spread, the last, and the first 6 rows not ok */
    for (int k = 0; k < 24; k++) {
        hssize_t i = (hssize_t)((double)k * (double)(n - 1) / 23.0);
        bad += check_row(h5, &rows, all + (size_t)i * rows.t.size, bad < 3);
        checked++;
    }
    /* the last row of every model and task (DLRM rows are few) */
    for (hssize_t i = 0; i < n; i++) {
        const char *row = all + (size_t)i * rows.t.size;
        const char *next = i + 1 < n ? row + rows.t.size : NULL;
        if (next && table_get_i32(next, rows.idx[SPACE_MODEL]) ==
                        table_get_i32(row, rows.idx[SPACE_MODEL]) &&
            table_get_i32(next, rows.idx[SPACE_TASK]) ==
                table_get_i32(row, rows.idx[SPACE_TASK]))
            continue;
        bad += check_row(h5, &rows, row, bad < 3);
        checked++;
        disagg += table_get_i32(row, rows.status) == 0 &&
                  isfinite(table_get_f64(row, rows.field[pf]));
    }
    for (hssize_t i = 0; i < n && not_ok < 6; i++) {
        const char *row = all + (size_t)i * rows.t.size;
        if (table_get_i32(row, rows.status) == 0)
            continue;
        bad += check_row(h5, &rows, row, bad < 3);
        not_ok++;
        checked++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(checked >= 24);
    if (which == 0) {
        CU_ASSERT(not_ok > 0);
        CU_ASSERT(disagg >= 2); /* serve_pd and serve_pd_own, per LLM */
    }

    /* the edited catalogues would give other figures: rebuilt from the
     * directory, some ok multi-node row no longer matches */
    spec sp;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(spec_load(g_specs[which], g_dir, &sp, &err), 0);
    space sx;
    CU_ASSERT_EQUAL_FATAL(space_init(&sx, &sp, err.text, sizeof err.text), 0);
    space_cursor *cur = malloc(sizeof *cur);
    CU_ASSERT_FATAL(space_cursor_init(cur, &sx) == 0);
    CU_ASSERT_EQUAL_FATAL(space_count_all(&sx, cur, NULL), 0);
    int differs = 0;
    for (hssize_t i = n - 1; i >= 0 && !differs; i--) {
        const char *row = all + (size_t)i * rows.t.size;
        int64_t id = table_get_i64(row, rows.id);
        if (table_get_i32(row, rows.status) != 0 ||
            space_point(&sx, cur, id, NULL) != STATUS_OK ||
            cur->p.cluster.nodes < 2)
            continue;
        engine e;
        engine_init(&e, false);
        result_t r;
        eval_point(&cur->p, &e, &r, NULL);
        engine_free(&e);
        differs = r.iteration_time_s !=
                  table_get_f64(row, rows.field[0]); /* iteration_time_s */
    }
    CU_ASSERT_EQUAL(differs, 1);
    CU_ASSERT_STRING_EQUAL(result_fields[0].name, "iteration_time_s");
    space_cursor_free(cur);
    space_free(&sx);
    free(cur);
    spec_free(&sp);
    free(all);
}

static void test_detailed_rows(void)
{
    check_file(0);
}

static void test_madmax_rows(void)
{
    check_file(1);
}

/* Every row of the FP8 spec reproduces, and there are FP8 rows only on
 * the hardware with an FP8 peak: the others are skipped by rule. */
static void test_precision_rows(void)
{
    output_rows rows;
    hssize_t n;
    char *all = read_rows(2, EVAL_DETAILED, &rows, &n);
    int bad = 0, fp8 = 0;
    for (hssize_t i = 0; i < n; i++) {
        const char *row = all + (size_t)i * rows.t.size;
        bad += check_row(g_files[2], &rows, row, bad < 3);
        fp8 += table_get_i32(row, rows.idx[SPACE_TASK]) == 1;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(fp8 > 0 && fp8 < n / 2); /* FP8 rows on the H100 only */
    free(all);
}

/* Every row of DLRMs with tables past 2^32 rows reproduces. */
static void test_wide_rows(void)
{
    output_rows rows;
    hssize_t n;
    char *all = read_rows(3, EVAL_DETAILED, &rows, &n);
    CU_ASSERT_FATAL(n >= 2);
    int bad = 0;
    for (hssize_t i = 0; i < n; i++)
        bad += check_row(g_files[3], &rows, all + (size_t)i * rows.t.size, bad < 3);
    CU_ASSERT_EQUAL(bad, 0);
    free(all);
}

static void test_bad_ids(void)
{
    const char *bin = getenv("MADSWEEP_BINARY");
    char cmd[2048];
    static char out[1 << 14];
    snprintf(cmd, sizeof cmd, "%s point %s 999999999999", bin, g_files[0]);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no point id 999999999999"));
    snprintf(cmd, sizeof cmd, "%s point %s twelve", bin, g_files[0]);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "expected a point id"));
    /* ids are dense over the valid points: id 1 is a row */
    snprintf(cmd, sizeof cmd, "%s point %s 1 > /dev/null", bin, g_files[0]);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "%s point %s", bin, g_files[0]);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "missing OUT.h5 ID"));
    /* launch flags asked of a training row: bad usage, 2 (it exited 1, the
     * code of a runtime failure; issue 29) */
    snprintf(cmd, sizeof cmd, "%s point %s 0 --engine-args", bin, g_files[0]);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no serving point of an engine"));
}

/* A sweep with elasticities = true: its ok rows carry elasticity_* figures
 * (worker.c), and `point` reproduces them as the sweep computed them (it
 * compared them with an evaluation without elasticities: "elasticity_compute
 * is -0.819 in the file, nan now"). */
static void test_elasticity_rows(void)
{
    char path[600], h5[640], cmd[2048];
    static char out[1 << 14];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(
        "point_elastic.cfg",
        "models = [\"llama3-8b\"];\nsystems = [\"h100-8\"];\n"
        "tasks = [\"pretrain\"];\nglobal_batch = [64];\n"
        "strategies = ( { tp = 2; }, { tp = 1; } );\nelasticities = true;\n",
        path, sizeof path));
    snprintf(h5, sizeof h5, "%s.h5", path);
    sweep_opts o = {.spec_path = path, .out_path = h5, .configs_dir = g_dir, .quiet = true};
    CU_ASSERT_EQUAL_FATAL(sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, stderr), 0);
    for (int id = 0; id < 2; id++) {
        snprintf(cmd, sizeof cmd, "%s point %s %d", getenv("MADSWEEP_BINARY"), h5, id);
        int rc = unit_run_command(cmd, out, sizeof out);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc != 0)
            fprintf(stderr, "%s\n", out);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "model = "));
    }
}

int main(int argc, char **argv)
{
    unit_mpi_init(&argc, &argv);
    char cmd[2048], out[4096], path[600];
    const char *tmp = getenv("MADSWEEP_TEST_TMP");
    snprintf(g_dir, sizeof g_dir, "%s/point_configs", tmp && *tmp ? tmp : "/tmp");
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp -r %s/. %s", g_dir,
             g_dir, unit_configs(), g_dir);
    int bad = unit_run_command(cmd, out, sizeof out) != 0;
    for (int i = 0; i < 4 && !bad; i++) {
        char name[32];
        snprintf(name, sizeof name, "point_%d.cfg", i);
        bad |= !unit_write_file(name, specs[i], path, sizeof path);
        snprintf(g_specs[i], sizeof g_specs[i], "%s", path);
        snprintf(g_files[i], sizeof g_files[i], "%s.h5", path);
        sweep_opts o = {.spec_path = path, .out_path = g_files[i],
                        .configs_dir = g_dir, .quiet = true};
        bad |= !bad && sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, stderr) != 0;
    }
    /* the catalogues change after the sweeps: point must not see it */
    snprintf(cmd, sizeof cmd,
             "sed -i 's/nic_efficiency = 0.85/nic_efficiency = 0.5/' %s/hardware.cfg"
             " && sed -i 's/nic_util = [0-9.]*/nic_util = 0.3/' %s/systems.cfg",
             g_dir, g_dir);
    bad |= unit_run_command(cmd, out, sizeof out) != 0;
    if (bad) {
        fprintf(stderr, "test setup failed\n");
        MPI_Finalize();
        return 1;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("point", NULL, NULL);
    CU_add_test(s, "detailed rows reproduce exactly", test_detailed_rows);
    CU_add_test(s, "MAD-Max rows reproduce exactly", test_madmax_rows);
    CU_add_test(s, "FP8 rows only where the hardware has an FP8 peak",
                test_precision_rows);
    CU_add_test(s, "DLRM tables past 2^32 rows", test_wide_rows);
    CU_add_test(s, "bad ids", test_bad_ids);
    CU_add_test(s, "rows with elasticities", test_elasticity_rows);
    return unit_run_mpi();
}
