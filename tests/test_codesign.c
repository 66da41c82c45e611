/*
 * test_codesign.c - co-design studies (issue 18): hardware figures as
 * axes, what bounds a point, speedup over a baseline.
 *
 * Under mpiexec -n 1: sweeps in-process a small detailed spec whose
 * system_grid scales three hardware figures of one generation
 * (peak_bf16_flops x [1, 1.5], mem_bw_bytes_per_s x [1, 2],
 * nic_bytes_per_s x [1, 2]) at two sizes, pretraining and serving, and
 * checks against the file itself:
 *   - /axes/system holds 8 variants per size, named apart, each with its
 *     factors (scale_KEY) and absolute figures = the factor-1 variant's
 *     figure x the factor (the catalogue's, so the check can fail), and
 *     its collective "auto" as the grid leaves it (issue 29: "ring");
 *   - the best throughput of a (size, task) never falls when every
 *     scaled figure grows (each pair of variants ordered by all three
 *     factors);
 *   - every ok row names what bounds it, the largest of its compute
 *     (math-bound, memory-bound), optimizer, exposed communication by
 *     dimension and bubble; the dimensions and the tiers each add up to
 *     comm_exposed_s, and math + memory + optimizer to compute_gemm_s;
 *   - `best --baseline 'tp==1,pp==1,zero_stage==3' --group system,task
 *     --csv`: per group the best row, the best baseline row (brute
 *     force over the rows) and a speedup >= 1 equal to their ratio;
 *   - spec errors: an unknown scale key names the closest, a name longer
 *     than a system name can hold is refused, a figure set twice too;
 *     pod_devices and collective are grid axes;
 *   - the end-of-sweep tables keep the 8 variants apart;
 *   - a MAD-Max file's rows say their collectives have no latency term
 *     (comm_latency_modeled = 0) and best notes it under its table;
 *   - elasticities = true: each elasticity and their sum in [-1, 0].
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/bound.h"
#include "../worker/output.h"
#include "../driver/load/load.h"
#include "../driver/sweep/spec_load.h"
#include "../driver/sweep/sweep.h"
#include "unit.h"

static char g_file[600];
static char g_summary[1 << 16]; /* the sweep's end-of-sweep tables */
static char g_mad[600];          /* a MAD-Max serving sweep */
static char g_el[600];           /* a sweep with elasticities */

static const char *const el_spec =
    "fidelity = \"detailed\";\n"
    "models = [\"llama3-8b\"];\n"
    "system_grid = ( { hardware = \"h100-sxm-80g\"; nodes = [2]; } );\n"
    "tasks = ( \"pretrain\",\n"
    "  { type = \"inference\"; name = \"serve\"; prompt_tokens = 512;\n"
    "    decode_tokens = 32; } );\n"
    "stacks = [\"torchtitan\", \"vllm\"];\n"
    "global_batch = [32];\n"
    "elasticities = true;\n"
    "strategies = \"auto\";\n";

static const char *const mad_spec =
    "fidelity = \"madmax\";\n"
    "models = [\"llama2_70b\"];\n"
    "systems = [\"dc_A_128\"];\n"
    "tasks = [\"inference\"];\n"
    "global_batch = [1024];\n"
    "strategies = \"auto\";\n";

static const char *const cod_spec =
    "fidelity = \"detailed\";\n"
    "models = [\"llama3-8b\"];\n"
    "system_grid = ( { hardware = \"h100-sxm-80g\"; nodes = [1, 4];\n"
    "  scale = { peak_bf16_flops = [1.0, 1.5]; mem_bw_bytes_per_s = [1.0, 2.0];\n"
    "            nic_bytes_per_s = [1.0, 2.0]; }; } );\n"
    "tasks = ( \"pretrain\",\n"
    "  { type = \"inference\"; name = \"serve\"; prompt_tokens = 512;\n"
    "    decode_tokens = 32; } );\n"
    "stacks = [\"torchtitan\", \"vllm\"];\n"
    "global_batch = [32];\n"
    "strategies = \"auto\";\n";

static const char *const keys[3] = {"peak_bf16_flops", "mem_bw_bytes_per_s",
                                    "nic_bytes_per_s"};

/* ------------------------------------------------------------ helpers */

/* Column `member` of /axes/system, numbers, read whole. */
static double *sys_num(hid_t f, const char *member, hssize_t *n)
{
    hid_t d = H5Dopen2(f, "axes/system", H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    *n = H5Sget_simple_extent_npoints(s);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(mt, member, 0, H5T_NATIVE_DOUBLE);
    double *v = calloc((size_t)*n + 1, sizeof *v);
    herr_t e = H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Tclose(mt);
    H5Sclose(s);
    H5Dclose(d);
    if (e < 0) {
        free(v);
        return NULL;
    }
    return v;
}

/* Column `member` of /axes/system, strings of up to 63 bytes. */
static char (*sys_strs(hid_t f, const char *member, hssize_t *n))[64]
{
    hid_t d = H5Dopen2(f, "axes/system", H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    *n = H5Sget_simple_extent_npoints(s);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 64);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 64);
    H5Tinsert(mt, member, 0, st);
    char(*v)[64] = calloc((size_t)*n + 1, 64);
    H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Tclose(mt);
    H5Tclose(st);
    H5Sclose(s);
    H5Dclose(d);
    return v;
}

typedef struct rows_t {
    output_rows r;
    char *rows;
    hssize_t n;
} rows_t;

static void rows_load(rows_t *x)
{
    output_rows_init(&x->r, EVAL_DETAILED);
    hid_t f = H5Fopen(g_file, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    x->rows = unit_read_results(f, &x->r.t, &x->n);
    H5Fclose(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x->rows);
}

static double fig(const rows_t *x, const char *row, const char *name)
{
    const result_field *rf = result_find(name);
    size_t off = x->r.field[rf - result_fields];
    return rf->type == RESULT_I64 ? (double)table_get_i64(row, off)
                                  : table_get_f64(row, off);
}

static int row_ok(const rows_t *x, const char *row)
{
    return table_get_i32(row, x->r.status) == 0 && fig(x, row, "mem_fits") != 0.0;
}

/* ------------------------------------------------------------ tests */

static void test_axes_variants(void)
{
    hid_t f = H5Fopen(g_file, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hssize_t n = 0;
    double *dev = sys_num(f, "devices", &n);
    char(*name)[64] = sys_strs(f, "name", &n);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    int per[2] = {0, 0};
    for (hssize_t i = 0; i < n; i++) {
        per[dev[i] == 8.0 ? 0 : 1]++;
        for (hssize_t j = i + 1; j < n; j++)
            CU_ASSERT(strcmp(name[i], name[j]) != 0);
    }
    CU_ASSERT_EQUAL(per[0], 8);
    CU_ASSERT_EQUAL(per[1], 8);
    /* the grid names no collective: every variant's is "auto" (NCCL's
     * choice by size), as the spec reads it (it was written "ring") */
    char(*alg)[64] = sys_strs(f, "collective", &n);
    for (hssize_t i = 0; i < n; i++)
        CU_ASSERT_STRING_EQUAL(alg[i], "auto");
    free(alg);
    for (int k = 0; k < 3; k++) {
        char col[64];
        snprintf(col, sizeof col, "scale_%s", keys[k]);
        hssize_t m = 0;
        double *fac = sys_num(f, col, &m), *abs = sys_num(f, keys[k], &m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fac);
        CU_ASSERT_PTR_NOT_NULL_FATAL(abs);
        double base = NAN;
        for (hssize_t i = 0; i < n; i++)
            if (fac[i] == 1.0)
                base = abs[i];
        int hi = 0;
        for (hssize_t i = 0; i < n; i++) {
            UNIT_ASSERT_CLOSE(abs[i], base * fac[i], 1e-12);
            hi += fac[i] > 1.0;
        }
        CU_ASSERT_EQUAL(hi, 8); /* half the variants scale each key */
        free(fac);
        free(abs);
    }
    /* the H100 SXM's catalogue figures at factor 1 (configs/hardware.cfg) */
    hssize_t m = 0;
    double *bf = sys_num(f, "peak_bf16_flops", &m), *fac = sys_num(f, "scale_peak_bf16_flops", &m);
    for (hssize_t i = 0; i < n; i++)
        if (fac[i] == 1.0)
            UNIT_ASSERT_CLOSE(bf[i], 989e12, 0.01);
    CU_ASSERT_PTR_NOT_NULL(strstr(name[0], "/bf16x"));
    CU_ASSERT_PTR_NOT_NULL(strstr(name[0], "/hbmbwx"));
    CU_ASSERT_PTR_NOT_NULL(strstr(name[0], "/nicx"));
    free(bf);
    free(fac);
    free(dev);
    free(name);
    H5Fclose(f);
}

static void test_monotonic(void)
{
    rows_t x;
    rows_load(&x);
    hid_t f = H5Fopen(g_file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hssize_t ns = 0;
    double *fac[3], *dev = sys_num(f, "devices", &ns);
    for (int k = 0; k < 3; k++) {
        char col[64];
        snprintf(col, sizeof col, "scale_%s", keys[k]);
        fac[k] = sys_num(f, col, &ns);
    }
    H5Fclose(f);
    double best[16][2];
    for (int s = 0; s < 16; s++)
        best[s][0] = best[s][1] = -1.0;
    for (hssize_t i = 0; i < x.n; i++) {
        const char *row = x.rows + (size_t)i * x.r.t.size;
        if (!row_ok(&x, row))
            continue;
        int s = table_get_i32(row, x.r.idx[SPACE_SYSTEM]);
        int t = table_get_i32(row, x.r.idx[SPACE_TASK]);
        double v = fig(&x, row, "throughput_samples_per_s");
        if (s >= 0 && s < 16 && t >= 0 && t < 2 && v > best[s][t])
            best[s][t] = v;
    }
    int pairs = 0, grew = 0;
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++) {
            if (a == b || dev[a] != dev[b])
                continue;
            int le = 1;
            for (int k = 0; k < 3; k++)
                le &= fac[k][a] <= fac[k][b];
            if (!le)
                continue;
            for (int t = 0; t < 2; t++) {
                CU_ASSERT(best[a][t] > 0);
                CU_ASSERT(best[b][t] >= best[a][t] * (1.0 - 1e-12));
                pairs++;
                grew += best[b][t] > best[a][t] * 1.01;
            }
        }
    CU_ASSERT_EQUAL(pairs, 2 * 2 * 19); /* 19 ordered pairs of 8 variants, 2 sizes, 2 tasks */
    CU_ASSERT(grew > pairs / 2);         /* the figures matter */
    for (int k = 0; k < 3; k++)
        free(fac[k]);
    free(dev);
    free(x.rows);
}

static void test_bound_by(void)
{
    rows_t x;
    rows_load(&x);
    int64_t ok = 0, kinds = 0;
    for (hssize_t i = 0; i < x.n; i++) {
        const char *row = x.rows + (size_t)i * x.r.t.size;
        const char *name = row + x.r.bound->off;
        if (table_get_i32(row, x.r.status) != 0) {
            CU_ASSERT_STRING_EQUAL(name, "");
            continue;
        }
        ok++;
        int64_t code = (int64_t)fig(&x, row, "bound_code");
        CU_ASSERT(code >= BOUND_COMPUTE_MATH && code < BOUND_NKINDS);
        CU_ASSERT_STRING_EQUAL(name, bound_name(code));
        kinds |= INT64_C(1) << code;
        double e = fig(&x, row, "comm_exposed_s");
        double dims = fig(&x, row, "comm_exposed_tp_s") + fig(&x, row, "comm_exposed_cp_s") +
                      fig(&x, row, "comm_exposed_ep_s") + fig(&x, row, "comm_exposed_pp_s") +
                      fig(&x, row, "comm_exposed_dp_s");
        double tiers = fig(&x, row, "comm_exposed_scaleup_s") +
                       fig(&x, row, "comm_exposed_scaleout_s");
        double it = fig(&x, row, "iteration_time_s");
        CU_ASSERT(fabs(tiers - dims) <= 1e-9 * it);
        if (dims > 0)
            CU_ASSERT(fabs(dims - e) <= 1e-9 * it);
        double opt = fig(&x, row, "optimizer_s");
        double comp = fig(&x, row, "compute_math_s") + fig(&x, row, "compute_memory_s") +
                      (isnan(opt) ? 0.0 : opt);
        CU_ASSERT(fabs(comp - fig(&x, row, "compute_gemm_s")) <= 1e-9 * it);
        /* bound_by is the largest share */
        static const char *const share[] = {
            "", "compute_math_s", "compute_memory_s", "", "comm_exposed_tp_s",
            "comm_exposed_cp_s", "comm_exposed_ep_s", "comm_exposed_pp_s",
            "comm_exposed_dp_s", "", "pipeline_bubble_s", "optimizer_s"};
        double top = fig(&x, row, share[code]);
        for (int k = 1; k < BOUND_NKINDS; k++) {
            if (!share[k][0])
                continue;
            double v = fig(&x, row, share[k]);
            CU_ASSERT(isnan(v) || v <= top);
        }
    }
    CU_ASSERT(ok > 1000);
    /* math, memory (decode) and at least one communication kind appear */
    CU_ASSERT(kinds & (1 << BOUND_COMPUTE_MATH));
    CU_ASSERT(kinds & (1 << BOUND_COMPUTE_MEMORY));
    /* communication is split by dimension on some row (it bounds none
     * here: serving's engine all-reduce is a few microseconds) */
    int comm = 0;
    for (hssize_t i = 0; i < x.n; i++) {
        const char *row = x.rows + (size_t)i * x.r.t.size;
        comm += table_get_i32(row, x.r.status) == 0 && fig(&x, row, "comm_exposed_tp_s") > 0 &&
                fig(&x, row, "comm_exposed_dp_s") >= 0;
    }
    CU_ASSERT(comm > 0);
    free(x.rows);
}

/* Quote-aware split of one CSV line into at most `max` fields. */
static int csv_split(const char *p, char fields[][200], int max)
{
    int n = 0;
    while (n < max) {
        char *f = fields[n++];
        size_t k = 0;
        int q = *p == '"';
        p += q;
        for (; *p && (q ? !(*p == '"' && p[1] != '"') : (*p != ',' && *p != '\n')); p++) {
            if (q && *p == '"')
                p++;
            if (k < 199)
                f[k++] = *p;
        }
        p += q && *p == '"';
        f[k] = '\0';
        if (*p != ',')
            break;
        p++;
    }
    return n;
}

static int csv_col(char head[][200], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(head[i], name) == 0)
            return i;
    return -1;
}

static void test_baseline(void)
{
    const char *argv[] = {"madsweep", "best", g_file, "--baseline",
                          "tp==1,pp==1,zero_stage==3", "--group", "system,task", "--csv"};
    char *out = NULL, err[4096];
    int rc = unit_cli_capture(8, argv, &out, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    enum { MAXC = 260 };
    char(*f)[200] = calloc(MAXC, 200), (*h)[200] = calloc(MAXC, 200);
    const char *p = out;
    int nh = csv_split(p, h, MAXC);
    int c_row = csv_col(h, nh, "row"), c_sp = csv_col(h, nh, "speedup"),
        c_id = csv_col(h, nh, "id"), c_tp = csv_col(h, nh, "tp"), c_pp = csv_col(h, nh, "pp"),
        c_z = csv_col(h, nh, "zero_stage"), c_v = csv_col(h, nh, "throughput_samples_per_s"),
        c_s = csv_col(h, nh, "system_idx"), c_t = csv_col(h, nh, "task_idx"),
        c_b = csv_col(h, nh, "baseline");
    CU_ASSERT_FATAL(c_row >= 0 && c_sp >= 0 && c_id >= 0 && c_tp >= 0 && c_v >= 0 &&
                    c_s >= 0 && c_t >= 0 && c_b >= 0 && c_z >= 0 && c_pp >= 0);
    /* brute force: per (system, task) the best ok row and the best ok
     * baseline row */
    rows_t x;
    rows_load(&x);
    double bv[16][2], wv[16][2];
    for (int s = 0; s < 16; s++)
        for (int t = 0; t < 2; t++)
            bv[s][t] = wv[s][t] = -1;
    for (hssize_t i = 0; i < x.n; i++) {
        const char *row = x.rows + (size_t)i * x.r.t.size;
        if (!row_ok(&x, row))
            continue;
        int s = table_get_i32(row, x.r.idx[SPACE_SYSTEM]);
        int t = table_get_i32(row, x.r.idx[SPACE_TASK]);
        double v = fig(&x, row, "throughput_samples_per_s");
        wv[s][t] = v > wv[s][t] ? v : wv[s][t];
        int tp = table_get_i32(row, x.r.strat_int[0]), pp = table_get_i32(row, x.r.strat_int[1]);
        int z = table_get_i32(row, x.r.strat_int[6]);
        if (tp == 1 && pp == 1 && z == 3)
            bv[s][t] = v > bv[s][t] ? v : bv[s][t];
    }
    int best_rows = 0, base_rows = 0, missing = 0;
    for (p = strchr(p, '\n'); p && p[1]; p = strchr(p, '\n')) {
        p++;
        csv_split(p, f, MAXC);
        int s = atoi(f[c_s]), t = atoi(f[c_t]);
        double v = strtod(f[c_v], NULL);
        if (strcmp(f[c_row], "best") == 0) {
            best_rows++;
            UNIT_ASSERT_CLOSE(v, wv[s][t], 1e-12);
            if (bv[s][t] < 0) {
                CU_ASSERT_STRING_EQUAL(f[c_sp], "");
                CU_ASSERT_STRING_NOT_EQUAL(f[c_b], "ok");
                missing++;
                continue;
            }
            double sp = strtod(f[c_sp], NULL);
            CU_ASSERT(sp >= 1.0);
            UNIT_ASSERT_CLOSE(sp, wv[s][t] / bv[s][t], 1e-12);
        } else {
            CU_ASSERT_STRING_EQUAL(f[c_row], "baseline");
            base_rows++;
            CU_ASSERT_STRING_EQUAL(f[c_tp], "1");
            CU_ASSERT_STRING_EQUAL(f[c_pp], "1");
            CU_ASSERT_STRING_EQUAL(f[c_z], "3");
            UNIT_ASSERT_CLOSE(v, bv[s][t], 1e-12);
        }
    }
    CU_ASSERT_EQUAL(best_rows, 32);
    CU_ASSERT_EQUAL(base_rows + missing, 32);
    /* serving runs no ZeRO: only the 16 training groups can hold the
     * baseline */
    CU_ASSERT(base_rows >= 8 && base_rows <= 16);
    free(x.rows);
    free(f);
    free(h);
    free(out);
    /* a baseline no point matches is said so, not an error */
    const char *argv2[] = {"madsweep", "best", g_file, "--baseline", "tp==3",
                           "--group", "task"};
    unit_cli r;
    unit_cli_run(&r, 7, argv2);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "none matches"));
    const char *argv3[] = {"madsweep", "best", g_file, "--baseline", "tq==1"};
    unit_cli_run(&r, 5, argv3);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--baseline"));
}

/* Loads spec text; returns 0 or -1 with the message in msg. */
static int spec_try(const char *text, spec *sp, char *msg, size_t size)
{
    char path[512];
    unit_write_file("codesign_bad.cfg", text, path, sizeof path);
    load_err le;
    memset(&le, 0, sizeof le);
    memset(sp, 0, sizeof *sp);
    int rc = spec_load(path, unit_configs(), sp, &le);
    snprintf(msg, size, "%s", le.text);
    return rc;
}

static void test_spec_keys(void)
{
    char msg[2048];
    spec sp;
    static const char *const head =
        "fidelity = \"detailed\"; models = [\"llama3-8b\"]; tasks = [\"pretrain\"];\n"
        "global_batch = [32]; strategies = \"auto\";\n";
    char text[2048];
    snprintf(text, sizeof text, "%ssystem_grid = ( { hardware = \"h100-sxm-80g\"; "
             "nodes = [1]; scale = { peak_bf16_flop = [2.0]; }; } );\n", head);
    CU_ASSERT_EQUAL(spec_try(text, &sp, msg, sizeof msg), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "peak_bf16_flops"));
    snprintf(text, sizeof text, "%ssystem_grid = ( { hardware = \"h100-sxm-80g\"; "
             "nodes = [1]; nic_scale = [2.0]; scale = { nic_bytes_per_s = [2.0]; }; } );\n",
             head);
    CU_ASSERT_EQUAL(spec_try(text, &sp, msg, sizeof msg), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "twice"));
    snprintf(text, sizeof text, "%ssystem_grid = ( { hardware = \"h100-sxm-80g\"; "
             "nodes = [1]; scale = { peak_fp32_flops = [1.25]; peak_tf32_flops = [1.25]; "
             "attention_tuned_efficiency = [0.9]; efficiency_uncertainty = [1.5]; "
             "network_uncertainty = [1.5]; }; } );\n", head);
    CU_ASSERT_EQUAL(spec_try(text, &sp, msg, sizeof msg), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "longer than"));
    /* pod, oversubscription and collective as axes; a scaled integer */
    snprintf(text, sizeof text, "%ssystem_grid = ( { hardware = \"h100-sxm-80g\"; "
             "nodes = [8]; pod_devices = [8, 16]; pod_oversubscription = [1.0, 4.0]; "
             "collective = [\"ring\", \"tree\"]; scale = { scaleup_devices = [0.5]; }; } );\n",
             head);
    CU_ASSERT_EQUAL_FATAL(spec_try(text, &sp, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(sp.nsystems, 8);
    int tree = 0;
    for (int64_t i = 0; i < sp.nsystems; i++) {
        CU_ASSERT_EQUAL(sp.dsystems[i].devices_per_node, 4); /* 8 x 0.5 */
        CU_ASSERT_EQUAL(sp.dsystems[i].devices, 32);
        CU_ASSERT(sp.dsystems[i].pod_devices == 8 || sp.dsystems[i].pod_devices == 16);
        tree += sp.dsystems[i].algo == TOPO_TREE;
        CU_ASSERT_PTR_NOT_NULL(strstr(sp.dsystems[i].name, "/pod"));
        CU_ASSERT_PTR_NOT_NULL(strstr(sp.dsystems[i].name, "/sudx0.5"));
    }
    CU_ASSERT_EQUAL(tree, 4);
    CU_ASSERT_EQUAL(sp.nscale, 1);
    spec_free(&sp);
    /* issue 29: grid keys that would change nothing, or something else
     * than asked, are refused at the key */
    static const char *const refused[][2] = {
        /* a figure the generation lacks: identical variants */
        {"hardware = \"a100-80g\"; nodes = [1]; scale = { peak_fp8_flops = [1.0, 2.0]; };",
         "'peak_fp8_flops' is 0 on hardware 'a100-80g'"},
        /* a scale-up domain of 10.4 devices was rounded to 10 */
        {"hardware = \"h100-sxm-80g\"; nodes = [1]; scale = { scaleup_devices = [1.3]; };",
         "x 1.3 = 10.4 is not (it would be rounded)"},
        /* a pod larger than the system was dropped */
        {"hardware = \"h100-sxm-80g\"; nodes = [1, 4]; pod_devices = [16];",
         "a pod of 16 devices is larger than system 'h100-sxm-80g/1x8/pod16'"},
        /* oversubscription without a pod oversubscribed nothing */
        {"hardware = \"h100-sxm-80g\"; nodes = [2]; pod_oversubscription = [2.0];",
         "nothing would be oversubscribed"},
        /* nor above a pod as large as the system */
        {"hardware = \"h100-sxm-80g\"; nodes = [2]; pod_devices = [16]; "
         "pod_oversubscription = [4.0];", "nothing would be oversubscribed"}};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        snprintf(text, sizeof text, "%ssystem_grid = ( { %s } );\n", head, refused[k][0]);
        CU_ASSERT_EQUAL(spec_try(text, &sp, msg, sizeof msg), -1);
        if (!strstr(msg, refused[k][1]))
            fprintf(stderr, "\ncase %zu: %s\n", k, msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, refused[k][1]));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "codesign_bad.cfg:3:"));
    }
    /* collective = "auto" is a variant of its own, named so (it was
     * named, and written, "ring") */
    snprintf(text, sizeof text, "%ssystem_grid = ( { hardware = \"h100-sxm-80g\"; "
             "nodes = [2]; collective = [\"auto\", \"ring\"]; } );\n", head);
    CU_ASSERT_EQUAL_FATAL(spec_try(text, &sp, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL_FATAL(sp.nsystems, 2);
    CU_ASSERT_EQUAL(sp.dsystems[0].algo, TOPO_AUTO);
    CU_ASSERT_PTR_NOT_NULL(strstr(sp.dsystems[0].name, "/auto"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sp.dsystems[1].name, "/ring"));
    spec_free(&sp);
}

/* MAD-Max rows say their collectives have no latency term, and best
 * says so under its table; detailed rows model it. */
static void test_madmax_latency(void)
{
    const char *argv[] = {"madsweep", "best", g_mad, "--where", "comm_latency_modeled==0"};
    unit_cli r;
    unit_cli_run(&r, 5, argv);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "no latency term"));
    const char *argv2[] = {"madsweep", "best", g_file, "--where", "comm_latency_modeled==1"};
    unit_cli_run(&r, 5, argv2);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "no latency term"));
    const char *argv3[] = {"madsweep", "best", g_file, "--where", "comm_latency_modeled==0"};
    unit_cli_run(&r, 5, argv3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no row"));
}

/* elasticities = true: every ok row has the four elasticities, each in
 * [-1, 0] and their sum too (to first order: the step time falls at most
 * as fast as every resource grows together); training points that are
 * compute-bound and decode steps that stream HBM show it; the main
 * sweep, without the key, has NaN. */
static void test_elasticities(void)
{
    static const char *const el[4] = {"elasticity_compute", "elasticity_hbm_bw",
                                      "elasticity_scaleup_bw", "elasticity_scaleout_bw"};
    rows_t x;
    output_rows_init(&x.r, EVAL_DETAILED);
    hid_t f = H5Fopen(g_el, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    x.rows = unit_read_results(f, &x.r.t, &x.n);
    H5Fclose(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x.rows);
    int ok = 0, compute = 0, hbm = 0;
    for (hssize_t i = 0; i < x.n; i++) {
        const char *row = x.rows + (size_t)i * x.r.t.size;
        if (table_get_i32(row, x.r.status) != 0)
            continue;
        ok++;
        double sum = 0.0;
        for (int k = 0; k < 4; k++) {
            double v = fig(&x, row, el[k]);
            CU_ASSERT(isfinite(v) && v >= -1.0 - 1e-3 && v <= 1e-9);
            sum += v;
        }
        CU_ASSERT(sum >= -1.0 - 1e-3);
        int serve = table_get_i32(row, x.r.idx[SPACE_TASK]) == 1;
        compute += !serve && fig(&x, row, "elasticity_compute") < -0.5;
        /* a continuous-batching step also carries floors, host time and
         * the prefill: HBM explains less of it than of a bare decode */
        hbm += serve && fig(&x, row, "elasticity_hbm_bw") < -0.3;
    }
    CU_ASSERT(ok > 100);
    CU_ASSERT(compute > 0);
    CU_ASSERT(hbm > 0);
    free(x.rows);
    rows_load(&x);
    CU_ASSERT(isnan(fig(&x, x.rows, "elasticity_compute")));
    free(x.rows);
}

/* The end-of-sweep tables name each of the 8 variants of the generation
 * once per table (pretraining and serving), without their size. */
static void test_summary_variants(void)
{
    int rows = 0;
    for (const char *p = g_summary; (p = strstr(p, "    h100-sxm-80g/bf16x")); p++) {
        rows++;
        char name[80];
        CU_ASSERT_EQUAL(sscanf(p, "%79s", name), 1);
        CU_ASSERT_PTR_NULL(strstr(name, "x8/")); /* no nodes x devices part */
        CU_ASSERT_PTR_NOT_NULL(strstr(name, "/hbmbwx"));
    }
    CU_ASSERT_EQUAL(rows, 16);
    CU_ASSERT_PTR_NOT_NULL(strstr(g_summary, "bound by"));
}

int main(int argc, char **argv)
{
    unit_mpi_init(&argc, &argv);
    char sp[512];
    if (!unit_write_file("codesign.cfg", cod_spec, sp, sizeof sp)) {
        MPI_Finalize();
        return 1;
    }
    snprintf(g_file, sizeof g_file, "%s.h5", sp);
    sweep_opts o = {.spec_path = sp, .out_path = g_file, .configs_dir = unit_configs()};
    FILE *tab = tmpfile();
    int rc = tab ? sweep_run(MPI_COMM_WORLD, &o, NULL, tab, stderr) : -1;
    if (tab) {
        rewind(tab);
        g_summary[fread(g_summary, 1, sizeof g_summary - 1, tab)] = '\0';
        fclose(tab);
    }
    char mp[512];
    if (rc == 0 && unit_write_file("codesign_mad.cfg", mad_spec, mp, sizeof mp)) {
        snprintf(g_mad, sizeof g_mad, "%s.h5", mp);
        sweep_opts om = {.spec_path = mp, .out_path = g_mad, .configs_dir = unit_configs(),
                         .quiet = true};
        rc = sweep_run(MPI_COMM_WORLD, &om, NULL, stdout, stderr);
    }
    if (rc == 0 && unit_write_file("codesign_el.cfg", el_spec, mp, sizeof mp)) {
        snprintf(g_el, sizeof g_el, "%s.h5", mp);
        sweep_opts oe = {.spec_path = mp, .out_path = g_el, .configs_dir = unit_configs(),
                         .quiet = true};
        rc = sweep_run(MPI_COMM_WORLD, &oe, NULL, stdout, stderr);
    }
    if (rc != 0) {
        fprintf(stderr, "the sweep of the test failed\n");
        MPI_Finalize();
        return 1;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("codesign", NULL, NULL);
    CU_add_test(s, "scaled hardware figures: 8 variants per size", test_axes_variants);
    CU_add_test(s, "best throughput never falls as every figure grows", test_monotonic);
    CU_add_test(s, "every ok row names what bounds it", test_bound_by);
    CU_add_test(s, "best --baseline: speedup against a brute force", test_baseline);
    CU_add_test(s, "grid keys: scale errors, pod, collective", test_spec_keys);
    CU_add_test(s, "the summary keeps the variants apart", test_summary_variants);
    CU_add_test(s, "MAD-Max plans without a latency term are flagged", test_madmax_latency);
    CU_add_test(s, "elasticities of the step time to the hardware", test_elasticities);
    return unit_run_mpi();
}
