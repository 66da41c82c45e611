/*
 * test_sweep_keep.c - reduced sweeps (keep), run in-process under
 * mpiexec (any np), against the full sweep of the same space.
 *
 * Every rank sweeps one small detailed space (dense and MoE models, two
 * systems, two stacks, training and serving) five times: keep = "all";
 * top 3 by tokens_per_s per (model, task, stack); the same with a
 * checkpoint after every chunk of rank 0 (sync points mid-run); the
 * Pareto frontier of tokens_per_s against memory per (model, hardware,
 * devices); and the feasible rows per task. Rank 0 then checks, from the
 * full file: the top-K ids are those `madsweep best --top 3 --by
 * tokens_per_s --group model,task,stack` prints for it (and the same
 * with checkpoints); the frontier is the brute-force frontier (ties to
 * the lower id); the feasible rows are the full file's ok rows; every
 * kept row is byte for byte the full file's row of that id; /groups
 * counts what the full file holds per group. The top-K file is left as
 * keep_npN.h5 for the cross-rank h5diff test. Failures are summed over
 * ranks.
 */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/output.h"
#include "../driver/query/best.h"
#include "../driver/sweep/sweep.h"
#include "unit.h"

static int g_rank, g_size;

static const char *const base_spec =
    "name = \"keep\";\n"
    "models = [\"llama3-8b\", \"mixtral-8x7b\"];\n"
    "systems = [\"h100-8\", \"mi300x-8\"];\n"
    "stacks = [\"megatron-core\", \"torchtitan\"];\n"
    "tasks = ( \"pretrain\",\n"
    "  { type = \"inference\"; name = \"serve\"; prompt_tokens = 1024; decode_tokens = 32; } );\n"
    "global_batch = [64];\n"
    "strategies = \"auto\";\n"
    "chunk = 700;\n";

/* Writes base_spec + `keep` as NAME.cfg and sweeps it into NAME_npN.h5. */
static void run_keep(const char *name, const char *keep, double checkpoint_s,
                     char *opath, size_t osize, sweep_stats *st)
{
    char spath[512], text[2048], fname[64];
    snprintf(text, sizeof text, "%s%s", base_spec, keep);
    snprintf(fname, sizeof fname, "%s.cfg", name);
    if (g_rank == 0)
        unit_write_file(fname, text, spath, sizeof spath);
    MPI_Bcast(spath, sizeof spath, MPI_CHAR, 0, MPI_COMM_WORLD);
    char *slash = strrchr(spath, '/');
    snprintf(opath, osize, "%.*s%s_np%d.h5", slash ? (int)(slash - spath + 1) : 0, spath,
             name, g_size);
    sweep_opts o = {.spec_path = spath, .out_path = opath, .configs_dir = unit_configs(),
                    .quiet = true, .checkpoint_s = checkpoint_s};
    CU_ASSERT_EQUAL_FATAL(sweep_run(MPI_COMM_WORLD, &o, st, stdout, stderr), 0);
}

typedef struct rows_t {
    char *buf;
    hssize_t n;
    output_rows r;
} rows_t;

static void read_rows(const char *path, rows_t *x)
{
    output_rows_init(&x->r, EVAL_DETAILED);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    x->buf = unit_read_results(f, &x->r.t, &x->n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x->buf);
    H5Fclose(f);
}

static int64_t row_id(const rows_t *x, hssize_t i)
{
    return table_get_i64(x->buf + (size_t)i * x->r.t.size, x->r.id);
}

static double row_fig(const rows_t *x, hssize_t i, const char *name)
{
    const result_field *f = result_find(name);
    return table_get_f64(x->buf + (size_t)i * x->r.t.size, x->r.field[f - result_fields]);
}

static int32_t row_i32(const rows_t *x, hssize_t i, size_t off)
{
    int32_t v;
    memcpy(&v, x->buf + (size_t)i * x->r.t.size + off, sizeof v);
    return v;
}

/* Every kept row equals the full file's row of its id, in id order. */
static void check_rows_in_full(const rows_t *full, const rows_t *kept)
{
    int64_t bad = 0, prev = -1;
    size_t rs = full->r.t.size;
    for (hssize_t i = 0; i < kept->n; i++) {
        int64_t id = row_id(kept, i);
        bad += id <= prev || id >= full->n ||
               memcmp(kept->buf + (size_t)i * rs, full->buf + (size_t)id * rs, rs) != 0;
        prev = id;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* The ids `best` prints (CSV, the column "id") for the full file. */
static int64_t best_ids(const char *path, const char *group, int64_t *ids, int64_t cap)
{
    char tpath[600];
    snprintf(tpath, sizeof tpath, "%s.best.csv", path);
    FILE *f = fopen(tpath, "w+");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    best_opts bo = {.path = path, .top = 3, .by = "tokens_per_s", .group = group,
                    .csv = true};
    CU_ASSERT_EQUAL(best_run(&bo, f, stderr), 0);
    rewind(f);
    static char line[1 << 16];
    int64_t n = 0;
    int col = -1;
    if (fgets(line, sizeof line, f)) { /* header: the column of "id" */
        int k = 0;
        for (char *p = line; p && col < 0; k++) {
            size_t len = strcspn(p, ",\n");
            if (len == 2 && strncmp(p, "id", 2) == 0)
                col = k;
            p = p[len] == ',' ? p + len + 1 : NULL;
        }
    }
    CU_ASSERT_FATAL(col >= 0);
    while (n < cap && fgets(line, sizeof line, f)) {
        /* the field `col`: skip `col` fields, quoted ones ("a,b", with
         * "" for a quote) as one */
        char *p = line;
        for (int k = 0; k < col && p; k++) {
            if (*p == '"') {
                p = strchr(p + 1, '"');
                while (p && p[1] == '"')
                    p = strchr(p + 2, '"');
                p = p ? strchr(p, ',') : NULL;
            } else {
                p = strchr(p, ',');
            }
            p = p ? p + 1 : NULL;
        }
        if (p)
            ids[n++] = strtoll(p, NULL, 10);
    }
    fclose(f);
    remove(tpath);
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void check_top(const rows_t *full, const char *full_path, const char *path)
{
    rows_t k;
    read_rows(path, &k);
    int64_t want[512];
    int64_t n = best_ids(full_path, "model,task,stack", want, 512);
    qsort(want, (size_t)n, sizeof *want, cmp_i64);
    CU_ASSERT(n > 0);
    CU_ASSERT_EQUAL(k.n, n);
    int64_t differ = 0;
    for (hssize_t i = 0; i < k.n && i < n; i++)
        differ += row_id(&k, i) != want[i];
    CU_ASSERT_EQUAL(differ, 0);
    check_rows_in_full(full, &k);
    free(k.buf);
}

typedef struct par_pt {
    double x, y;
    int64_t id;
} par_pt;

/* Sorted by x descending, then y descending, then id ascending. */
static int par_cmp(const void *a, const void *b)
{
    const par_pt *p = a, *q = b;
    if (p->x != q->x)
        return p->x > q->x ? -1 : 1;
    if (p->y != q->y)
        return p->y > q->y ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

/* The Pareto frontier per (model, hardware, devices) of the full file's
 * ok rows, by a skyline sweep (not the reducer's algorithm): maximize
 * tokens/s, minimize memory; in (x desc, y desc, id asc) order a point is
 * dominated exactly when an earlier one has y >= its y, so the frontier
 * is the points whose y beats every earlier y. */
static void check_pareto(const rows_t *full, const char *path)
{
    rows_t k;
    read_rows(path, &k);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "axes/system", H5P_DEFAULT);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 64);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 64 + 8);
    H5Tinsert(mt, "hardware", 0, st);
    H5Tinsert(mt, "devices", 64, H5T_NATIVE_INT64);
    struct { char hw[64]; int64_t dev; } sys[2];
    hid_t sp = H5Dget_space(d);
    CU_ASSERT_EQUAL_FATAL(H5Sget_simple_extent_npoints(sp), 2);
    CU_ASSERT(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, sys) >= 0);
    H5Sclose(sp);
    H5Tclose(mt);
    H5Tclose(st);
    H5Dclose(d);
    H5Fclose(f);
    CU_ASSERT(strcmp(sys[0].hw, sys[1].hw) != 0); /* two groups per model */
    par_pt *pts = malloc((size_t)full->n * sizeof *pts);
    int64_t *want = malloc((size_t)full->n * sizeof *want), nw = 0;
    for (int32_t mi = 0; mi < 2; mi++)
        for (int32_t si = 0; si < 2; si++) {
            int64_t m = 0;
            for (hssize_t i = 0; i < full->n; i++)
                if (row_i32(full, i, full->r.status) == 0 &&
                    row_i32(full, i, full->r.idx[SPACE_MODEL]) == mi &&
                    row_i32(full, i, full->r.idx[SPACE_SYSTEM]) == si)
                    pts[m++] = (par_pt){row_fig(full, i, "tokens_per_s"),
                                        -row_fig(full, i, "mem_total_bytes_per_device"),
                                        row_id(full, i)};
            qsort(pts, (size_t)m, sizeof *pts, par_cmp);
            double best = -INFINITY;
            for (int64_t i = 0; i < m; i++)
                if (pts[i].y > best) {
                    want[nw++] = pts[i].id;
                    best = pts[i].y;
                }
        }
    qsort(want, (size_t)nw, sizeof *want, cmp_i64);
    CU_ASSERT(nw > 4);
    CU_ASSERT_EQUAL(k.n, nw);
    int64_t differ = 0;
    for (hssize_t i = 0; i < k.n && i < nw; i++)
        differ += row_id(&k, i) != want[i];
    CU_ASSERT_EQUAL(differ, 0);
    check_rows_in_full(full, &k);
    free(pts);
    free(want);
    free(k.buf);
}

/* /groups of the feasible sweep (per task): evaluated and ok per task of
 * the full file, kept = ok; rows = the full file's ok rows. */
static void check_feasible(const rows_t *full, const char *path)
{
    rows_t k;
    read_rows(path, &k);
    int64_t ok = 0, eval[2] = {0, 0}, okt[2] = {0, 0};
    for (hssize_t i = 0; i < full->n; i++) {
        int32_t t = row_i32(full, i, full->r.idx[SPACE_TASK]);
        bool good = row_i32(full, i, full->r.status) == 0;
        ok += good;
        eval[t]++;
        okt[t] += good;
    }
    CU_ASSERT_EQUAL(k.n, ok);
    check_rows_in_full(full, &k);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "groups", H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 4 * sizeof(int64_t));
    H5Tinsert(mt, "evaluated", 0, H5T_NATIVE_INT64);
    H5Tinsert(mt, "ok", 8, H5T_NATIVE_INT64);
    H5Tinsert(mt, "kept", 16, H5T_NATIVE_INT64);
    H5Tinsert(mt, "task_idx", 24, H5T_NATIVE_INT64);
    int64_t g[2][4];
    hid_t sp = H5Dget_space(d);
    CU_ASSERT_EQUAL(H5Sget_simple_extent_npoints(sp), 2);
    CU_ASSERT(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, g) >= 0);
    for (int t = 0; t < 2; t++) {
        CU_ASSERT_EQUAL(g[t][3], t);
        CU_ASSERT_EQUAL(g[t][0], eval[t]);
        CU_ASSERT_EQUAL(g[t][1], okt[t]);
        CU_ASSERT_EQUAL(g[t][2], okt[t]);
    }
    CU_ASSERT(H5Lexists(f, "keep", H5P_DEFAULT) == 0);
    H5Sclose(sp);
    H5Tclose(mt);
    H5Dclose(d);
    H5Fclose(f);
    free(k.buf);
}

static void test_keep(void)
{
    char all[700], top[700], topck[700], par[700], fea[700];
    sweep_stats st, sk;
    run_keep("kall", "", 0, all, sizeof all, &st);
    run_keep("keep", "keep = { top = 3; by = \"tokens_per_s\";\n"
             "  group = [\"model\", \"task\", \"stack\"]; };\n", 0, top, sizeof top, &sk);
    CU_ASSERT_EQUAL(sk.evaluated_run, st.valid);
    run_keep("keepck", "keep = { top = 3; by = \"tokens_per_s\";\n"
             "  group = [\"model\", \"task\", \"stack\"]; };\n", -1, topck, sizeof topck,
             &sk);
    run_keep("kpar", "keep = { pareto = [\"tokens_per_s\", \"mem_total_bytes_per_device\"];\n"
             "  group = [\"model\", \"hardware\", \"devices\"]; };\n", 0, par, sizeof par,
             &sk);
    run_keep("kfea", "keep = { feasible = true; group = [\"task\"]; };\n", 0, fea,
             sizeof fea, &sk);
    if (g_rank != 0)
        return;
    rows_t full;
    read_rows(all, &full);
    CU_ASSERT_EQUAL(full.n, st.valid);
    check_top(&full, all, top);
    check_top(&full, all, topck);
    check_pareto(&full, par);
    check_feasible(&full, fea);
    free(full.buf);
}

int main(int argc, char **argv)
{
    unit_mpi_start(&argc, &argv, &g_rank, &g_size);
    CU_pSuite s = CU_add_suite("keep", NULL, NULL);
    CU_add_test(s, "reduced sweeps equal the full sweep's answers", test_keep);
    return unit_run_mpi();
}
