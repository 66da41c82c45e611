/*
 * test_best.c - `madsweep best` on real sweep files, against a brute
 * force over the same files.
 *
 * Under mpiexec -n 1: sweeps a small detailed spec (a dense and an MoE
 * model on H100 and MI300X systems of 1 and 2 nodes, two NIC scales,
 * pretraining and serving) and a small MAD-Max spec in-process, then runs
 * `best` through cmd_main() with --csv and checks every answer against a
 * scan of /results written here (the table layout of worker/output.h,
 * the axis tables read directly):
 *   - the default leaves out rows whose status is not ok, --all ranks
 *     them too (and the winner per hardware under --all is the brute
 *     force's over every row); rows whose figure is NaN never rank;
 *   - --where with text and number conditions, --group by an axis column
 *     (hardware), a number (devices, nic_gbps_per_device), several;
 *   - --by any figure, maximized for rates, minimized for times;
 *   - a plan is shown once: the detailed file has no two rows of a point
 *     that differ only in the order of degree-1 dimensions of their
 *     layout (the enumeration leaves them out), and no two printed rows
 *     of the MAD-Max file are the same plan from two templates, while
 *     such twins exist in it (so the check can fail);
 *   - --csv has every column of /results and the joined axis names;
 *   - unknown columns name the closest one; bad conditions are errors.
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
#include "../driver/sweep/sweep.h"
#include "unit.h"

static char g_det[600], g_mad[600], g_twin[600];

static const char *const det_spec =
    "fidelity = \"detailed\";\n"
    "models = [\"llama3-8b\", \"mixtral-8x7b\"];\n"
    "system_grid = ( { hardware = [\"h100-sxm-80g\", \"mi300x\"]; nodes = [1, 2];\n"
    "                  nic_gbps_per_device = [200.0, 400.0]; } );\n"
    "tasks = ( \"pretrain\",\n"
    "  { type = \"inference\"; name = \"serve\"; prompt_tokens = 512;\n"
    "    decode_tokens = 32; } );\n"
    "global_batch = [64];\n"
    "strategies = \"auto\";\n";

static const char *const mad_spec =
    "fidelity = \"madmax\";\n"
    "models = [\"dlrm_a\", \"llama2_70b\"];\n"
    "systems = [\"zionex_128\", \"dc_A_128\"];\n"
    "tasks = [\"pretrain\", \"inference\"];\n"
    "global_batch = [1024, 4096];\n"
    "strategies = \"auto\";\n";

/* Explicit strategies, two of them the same plan on 8-device nodes
 * ("node" is 8): twins in the file, which best must show once. */
static const char *const twin_spec =
    "fidelity = \"madmax\";\n"
    "models = [\"dlrm_a\", \"llama2_70b\"];\n"
    "systems = [\"zionex_128\", \"dc_A_128\"];\n"
    "tasks = [\"pretrain\"];\n"
    "global_batch = [1024, 4096];\n"
    "strategies = ( { dense = \"fsdp:node,ddp:rest\"; embedding = \"mp:all\"; },\n"
    "  { dense = \"ddp:all\"; embedding = \"mp:all\"; },\n"
    "  { dense = \"fsdp:8,ddp:rest\"; embedding = \"mp:all\"; } );\n";

/* ------------------------------------------------------------ helpers */

typedef struct cli_run {
    int rc;
    char *out;
    char err[8192];
} cli_run;

static void cli(cli_run *r, int argc, const char **argv)
{
    r->rc = unit_cli_capture(argc, argv, &r->out, r->err, sizeof r->err);
}

/* Splits one CSV line into fields (quotes honoured); returns the count. */
static int csv_split(const char *line, char fields[][160], int max)
{
    int n = 0;
    const char *p = line;
    while (n < max) {
        char *f = fields[n++];
        size_t k = 0;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;
                if (k < 159)
                    f[k++] = *p;
            }
            if (*p == '"')
                p++;
        } else {
            for (; *p && *p != ',' && *p != '\n'; p++)
                if (k < 159)
                    f[k++] = *p;
        }
        f[k] = '\0';
        if (*p != ',')
            break;
        p++;
    }
    return n;
}

/* A parsed CSV answer: header and rows. */
typedef struct csv_t {
    int ncols, nrows;
    char (*head)[160];
    char (*cell)[160]; /* nrows x ncols */
} csv_t;

static void csv_parse(const char *text, csv_t *c)
{
    enum { MAXC = 400 };
    memset(c, 0, sizeof *c);
    int lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    c->head = calloc(MAXC, sizeof *c->head);
    c->cell = calloc((size_t)(lines + 1) * MAXC, sizeof *c->cell);
    const char *p = text;
    c->ncols = csv_split(p, c->head, MAXC);
    p = strchr(p, '\n');
    while (p && p[1]) {
        p++;
        csv_split(p, c->cell + (size_t)c->nrows * MAXC, MAXC);
        c->nrows++;
        p = strchr(p, '\n');
    }
    c->ncols = c->ncols > MAXC ? MAXC : c->ncols;
}

static const char *csv_get(const csv_t *c, int row, const char *col)
{
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->head[i], col) == 0)
            return c->cell[(size_t)row * 400 + (size_t)i];
    return NULL;
}

static void csv_free(csv_t *c)
{
    free(c->head);
    free(c->cell);
}

/* Column `member` (string of `width` bytes, or int64 / double) of an
 * axis table, read whole. */
static void *axis_read(hid_t f, const char *path, const char *member,
                       hid_t type, size_t size, hssize_t *n)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    *n = H5Sget_simple_extent_npoints(s);
    hid_t mt = H5Tcreate(H5T_COMPOUND, size);
    H5Tinsert(mt, member, 0, type);
    char *buf = calloc((size_t)*n + 1, size);
    H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Tclose(mt);
    H5Sclose(s);
    H5Dclose(d);
    return buf;
}

static hid_t str_type(size_t n)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, n);
    return t;
}

/* The file's rows in the build's layout, and what the brute force needs. */
typedef struct rows_t {
    output_rows r;
    char *rows;
    hssize_t n;
    char (*hw)[64];      /* per system index */
    double *gbps;        /* per system index */
    char (*task)[64];    /* per task index */
    hssize_t nsys, ntask;
} rows_t;

static void rows_load(const char *path, rows_t *x, int detailed)
{
    memset(x, 0, sizeof *x);
    output_rows_init(&x->r, detailed ? EVAL_DETAILED : EVAL_MADMAX);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    x->rows = unit_read_results(f, &x->r.t, &x->n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x->rows);
    hid_t s64 = str_type(64);
    if (detailed) {
        x->hw = axis_read(f, "axes/system", "hardware", s64, 64, &x->nsys);
        x->gbps = axis_read(f, "axes/system", "nic_gbps_per_device",
                            H5T_NATIVE_DOUBLE, 8, &x->nsys);
    }
    x->task = axis_read(f, "axes/task", "name", s64, 64, &x->ntask);
    H5Tclose(s64);
    H5Fclose(f);
}

static void rows_free(rows_t *x)
{
    free(x->rows);
    free(x->hw);
    free(x->gbps);
    free(x->task);
}

static const char *row_at(const rows_t *x, hssize_t i)
{
    return x->rows + (size_t)i * x->r.t.size;
}

static double row_fig(const rows_t *x, const char *row, const char *name)
{
    const result_field *rf = result_find(name);
    size_t off = x->r.field[rf - result_fields];
    return rf->type == RESULT_I64 ? (double)table_get_i64(row, off)
                                  : table_get_f64(row, off);
}

static int32_t row_idx(const rows_t *x, const char *row, int axis)
{
    return table_get_i32(row, x->r.idx[axis]);
}

/* Brute force: the id of the best row of each group g(row) in [0, ng)
 * among rows passing keep(), by figure `by` (maximize or not). */
typedef int (*keep_fn)(const rows_t *x, const char *row);
typedef int (*group_fn)(const rows_t *x, const char *row);

static void brute(const rows_t *x, keep_fn keep, group_fn group, int ng,
                  const char *by, int maximize, int64_t *best)
{
    double *v = malloc((size_t)ng * sizeof *v);
    for (int g = 0; g < ng; g++)
        best[g] = -1;
    for (hssize_t i = 0; i < x->n; i++) {
        const char *row = row_at(x, i);
        if (!keep(x, row))
            continue;
        int g = group(x, row);
        double val = row_fig(x, row, by);
        int64_t id = table_get_i64(row, x->r.id);
        if (isnan(val))
            continue; /* a figure not computed never ranks */
        int better;
        if (best[g] < 0)
            better = 1;
        else if (val != v[g])
            better = maximize ? val > v[g] : val < v[g];
        else
            better = id < best[g];
        if (better) {
            best[g] = id;
            v[g] = val;
        }
    }
    free(v);
}

/* What `best` keeps by default: status ok and memory that fits (MAD-Max
 * rows stay ok with mem_fits 0). */
static int keep_ok(const rows_t *x, const char *row)
{
    return table_get_i32(row, x->r.status) == 0 &&
           row_fig(x, row, "mem_fits") != 0.0;
}

static int keep_any(const rows_t *x, const char *row)
{
    (void)x;
    (void)row;
    return 1;
}

static int keep_where(const rows_t *x, const char *row)
{
    /* task==pretrain,devices>=16,mem_total_bytes_per_device<=6e10,
     * hardware!=mi300x */
    return keep_ok(x, row) &&
           strcmp(x->task[row_idx(x, row, SPACE_TASK)], "pretrain") == 0 &&
           table_get_i64(row, x->r.devices) >= 16 &&
           row_fig(x, row, "mem_total_bytes_per_device") <= 6e10 &&
           strcmp(x->hw[row_idx(x, row, SPACE_SYSTEM)], "mi300x") != 0;
}

static int group_hw(const rows_t *x, const char *row)
{
    return strcmp(x->hw[row_idx(x, row, SPACE_SYSTEM)], "h100-sxm-80g") == 0 ? 0 : 1;
}

static int group_one(const rows_t *x, const char *row)
{
    (void)x;
    (void)row;
    return 0;
}

static int group_model_task(const rows_t *x, const char *row)
{
    return row_idx(x, row, SPACE_MODEL) * 2 + row_idx(x, row, SPACE_TASK);
}

/* ------------------------------------------------------------ tests */

static void test_status_default_and_all(void)
{
    rows_t x;
    rows_load(g_det, &x, 1);
    int64_t want[2], want_all[2];
    brute(&x, keep_ok, group_hw, 2, "tokens_per_s", 1, want);
    brute(&x, keep_any, group_hw, 2, "mem_total_bytes_per_device", 1, want_all);
    hssize_t not_ok = 0;
    for (hssize_t i = 0; i < x.n; i++)
        not_ok += !keep_ok(&x, row_at(&x, i));
    CU_ASSERT(not_ok > 0); /* the default has something to leave out */

    cli_run r;
    const char *a1[] = {"madsweep", "best", g_det, "--by", "tokens_per_s",
                        "--group", "hardware", "--csv"};
    cli(&r, (int)(sizeof a1 / sizeof a1[0]), a1);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_t c;
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL(c.nrows, 2);
    for (int i = 0; i < c.nrows && i < 2; i++) {
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "hardware"),
                               i == 0 ? "h100-sxm-80g" : "mi300x");
        CU_ASSERT_EQUAL(strtoll(csv_get(&c, i, "id"), NULL, 10), want[i]);
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "status_name"), "ok");
    }
    csv_free(&c);
    free(r.out);

    /* --all: the biggest memory footprint is an infeasible row */
    const char *a2[] = {"madsweep", "best", g_det, "--by",
                        "mem_total_bytes_per_device", "--order", "max",
                        "--group", "hardware", "--all", "--csv"};
    cli(&r, (int)(sizeof a2 / sizeof a2[0]), a2);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL(c.nrows, 2);
    for (int i = 0; i < c.nrows && i < 2; i++) {
        CU_ASSERT_EQUAL(strtoll(csv_get(&c, i, "id"), NULL, 10), want_all[i]);
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "status_name"), "infeasible:memory");
    }
    csv_free(&c);
    free(r.out);

    /* the text table says what it left out, and shows status under --all */
    const char *a3[] = {"madsweep", "best", g_det, "--all", "--group", "hardware"};
    cli(&r, (int)(sizeof a3 / sizeof a3[0]), a3);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT(strncmp(r.out, "status", 6) == 0);
    /* the rows' own plans (named columns), not the strategy templates */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "micro_batch"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "dp*"));
    free(r.out);
    const char *a4[] = {"madsweep", "best", g_det};
    cli(&r, (int)(sizeof a4 / sizeof a4[0]), a4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "rows not ok or not fitting in memory left "
                                         "out, --all shows them"));
    free(r.out);
    rows_free(&x);
}

static void test_where_group_by(void)
{
    rows_t x;
    rows_load(g_det, &x, 1);
    int64_t want[1];
    brute(&x, keep_where, group_one, 1, "iteration_time_s", 0, want);
    CU_ASSERT_FATAL(want[0] >= 0);
    cli_run r;
    const char *a1[] = {"madsweep", "best", g_det, "--where",
                        "task==pretrain, devices>=16,mem_total_bytes_per_device<=6e10,"
                        "hardware!='mi300x'",
                        "--by", "iteration_time_s", "--csv"};
    cli(&r, (int)(sizeof a1 / sizeof a1[0]), a1);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_t c;
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL_FATAL(c.nrows, 1);
    CU_ASSERT_EQUAL(strtoll(csv_get(&c, 0, "id"), NULL, 10), want[0]);
    csv_free(&c);
    free(r.out);

    /* numbers group in ascending order; several columns at once */
    const char *a2[] = {"madsweep", "best", g_det, "--group",
                        "devices,nic_gbps_per_device", "--by", "mfu", "--csv"};
    cli(&r, (int)(sizeof a2 / sizeof a2[0]), a2);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL(c.nrows, 4);
    static const char *const dev[] = {"8", "8", "16", "16"};
    static const char *const gbps[] = {"200", "400", "200", "400"};
    for (int i = 0; i < c.nrows && i < 4; i++) {
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "devices"), dev[i]);
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "nic_gbps_per_device"), gbps[i]);
    }
    csv_free(&c);
    free(r.out);

    /* --group model,task by a time: minimized */
    int64_t mt[4];
    brute(&x, keep_ok, group_model_task, 4, "ttft_s", 0, mt);
    const char *a3[] = {"madsweep", "best", g_det, "--where", "task==serve",
                        "--group", "model,task", "--by", "ttft_s", "--csv"};
    cli(&r, (int)(sizeof a3 / sizeof a3[0]), a3);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL(c.nrows, 2);
    for (int i = 0; i < c.nrows && i < 2; i++) {
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "task"), "serve");
        CU_ASSERT_EQUAL(strtoll(csv_get(&c, i, "id"), NULL, 10), mt[2 * i + 1]);
    }
    csv_free(&c);
    free(r.out);
    rows_free(&x);
}

/* The named strategy columns of a detailed row but its layout. */
static void plan_without_layout(const rows_t *x, const char *row, char *buf,
                                size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < OUTPUT_NSTRAT_INT && n < size; k++)
        n += (size_t)snprintf(buf + n, size - n, "%d|",
                              (int)table_get_i32(row, x->r.strat_int[k]));
    for (int k = 0; k < OUTPUT_NSTRAT_STR && n < size; k++) {
        const table_col *c = x->r.strat_str[k];
        if (strcmp(c->name, "layout") != 0)
            n += (size_t)snprintf(buf + n, size - n, "%.*s|", (int)c->len,
                                  row + c->off);
    }
}

/* Same model, system, stack, task and batch (the strategy aside). */
static int same_point(const rows_t *x, const char *a, const char *b)
{
    for (int ax = 0; ax < SPACE_NAXES; ax++)
        if (ax != SPACE_STRATEGY && row_idx(x, a, ax) != row_idx(x, b, ax))
            return 0;
    return 1;
}

/* Twins in the detailed file: rows of one point with the same degrees
 * and options, the same figures and another layout, pp or dp 1 (the two
 * layouts then order the same dimensions). Counted over the whole file.
 * (vpp "auto" resolving to 1 repeats the vpp 1 candidate's plan in its
 * own layout: `madsweep best` shows such a plan once, as any other.) */
static int detailed_twins(const rows_t *x)
{
    int twins = 0;
    for (hssize_t i = 0; i < x->n; i++) {
        const char *me = row_at(x, i);
        if (table_get_i32(me, x->r.strat_int[1]) != 1 &&
            table_get_i32(me, x->r.strat_int[2]) != 1)
            continue;
        char mine[160];
        plan_without_layout(x, me, mine, sizeof mine);
        /* the rows of one point are contiguous (rows are in id order) */
        for (hssize_t k = i + 1; k < x->n && same_point(x, row_at(x, k), me); k++) {
            const char *o = row_at(x, k);
            char theirs[160];
            plan_without_layout(x, o, theirs, sizeof theirs);
            const table_col *lay = x->r.strat_str[2];
            twins += strcmp(mine, theirs) == 0 &&
                     memcmp(o + lay->off, me + lay->off, lay->len) != 0 &&
                     memcmp(o + x->r.field[0], me + x->r.field[0],
                            x->r.t.size - x->r.field[0]) == 0;
        }
    }
    return twins;
}

/* A copy of a MAD-Max row without its id and strategy index: two rows of
 * one point with equal keys are the same plan from two templates. */
static void madmax_key(const rows_t *x, const char *row, char *key)
{
    memcpy(key, row, x->r.t.size);
    memset(key + x->r.id, 0, 8);
    memset(key + x->r.idx[SPACE_STRATEGY], 0, 4);
}

static void test_same_plan_once(void)
{
    /* the detailed enumeration leaves a layout's duplicate out (the
     * tp-cp-pp-dp layout when pp or dp is 1): no twins in the file */
    rows_t x;
    rows_load(g_det, &x, 1);
    CU_ASSERT_EQUAL(detailed_twins(&x), 0);
    rows_free(&x);

    /* MAD-Max templates resolving to the same plan are twins: best shows
     * each plan once, by its lowest id */
    rows_load(g_twin, &x, 0);
    cli_run r;
    const char *a1[] = {"madsweep", "best", g_twin, "--group", "model,system,global_batch",
                        "--by", "throughput_samples_per_s", "--top", "40",
                        "--csv"};
    cli(&r, (int)(sizeof a1 / sizeof a1[0]), a1);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_t c;
    csv_parse(r.out, &c);
    CU_ASSERT(c.nrows > 4);
    char *ka = malloc(x.r.t.size), *kb = malloc(x.r.t.size);
    CU_ASSERT_FATAL(ka && kb);
    int twins = 0, dup_printed = 0;
    for (hssize_t i = 0; i < x.n; i++) {
        const char *me = row_at(&x, i);
        madmax_key(&x, me, ka);
        for (hssize_t k = i + 1; k < x.n && same_point(&x, row_at(&x, k), me); k++) {
            madmax_key(&x, row_at(&x, k), kb);
            if (memcmp(ka, kb, x.r.t.size) != 0)
                continue;
            twins++;
            /* printed both: the same plan twice */
            char ia[32], ib[32];
            snprintf(ia, sizeof ia, "%lld", (long long)table_get_i64(me, x.r.id));
            snprintf(ib, sizeof ib, "%lld",
                     (long long)table_get_i64(row_at(&x, k), x.r.id));
            int pa = 0, pb = 0;
            for (int j = 0; j < c.nrows; j++) {
                pa |= strcmp(csv_get(&c, j, "id"), ia) == 0;
                pb |= strcmp(csv_get(&c, j, "id"), ib) == 0;
            }
            dup_printed += pa && pb;
        }
    }
    CU_ASSERT(twins > 0); /* so the check can fail */
    CU_ASSERT_EQUAL(dup_printed, 0);
    free(ka);
    free(kb);
    csv_free(&c);
    free(r.out);
    rows_free(&x);
}

static void test_csv_columns_and_errors(void)
{
    cli_run r;
    const char *a1[] = {"madsweep", "best", g_det, "--csv"};
    cli(&r, (int)(sizeof a1 / sizeof a1[0]), a1);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_t c;
    csv_parse(r.out, &c);
    output_rows rows;
    output_rows_init(&rows, EVAL_DETAILED);
    for (int i = 0; i < rows.t.ncols; i++) {
        int found = 0;
        for (int k = 0; k < c.ncols; k++)
            found |= strcmp(c.head[k], rows.t.col[i].name) == 0;
        if (!found)
            fprintf(stderr, "CSV lacks /results column %s\n", rows.t.col[i].name);
        CU_ASSERT(found);
    }
    static const char *const joined[] = {"model", "system", "hardware", "task",
                                         "strategy", "status_name",
                                         "nic_gbps_per_device"};
    for (size_t i = 0; i < sizeof joined / sizeof joined[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(csv_get(&c, 0, joined[i]));
    CU_ASSERT_EQUAL(strncmp(r.out, "model,system,devices,task,global_batch,", 39), 0);
    csv_free(&c);
    free(r.out);

    const char *a2[] = {"madsweep", "best", g_det, "--by", "tokens_per_sec"};
    cli(&r, (int)(sizeof a2 / sizeof a2[0]), a2);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unknown column 'tokens_per_sec'; did you "
                                         "mean \"tokens_per_s\"?"));
    free(r.out);
    const char *a3[] = {"madsweep", "best", g_det, "--group", "hardwar"};
    cli(&r, (int)(sizeof a3 / sizeof a3[0]), a3);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "did you mean \"hardware\"?"));
    free(r.out);
    const char *a4[] = {"madsweep", "best", g_det, "--where", "devices=8"};
    cli(&r, (int)(sizeof a4 / sizeof a4[0]), a4);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "write == for equality"));
    free(r.out);
    const char *a5[] = {"madsweep", "best", g_det, "--where", "devices>=many"};
    cli(&r, (int)(sizeof a5 / sizeof a5[0]), a5);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "'many' is not a number"));
    free(r.out);
    const char *a6[] = {"madsweep", "best", g_det, "--by", "model"};
    cli(&r, (int)(sizeof a6 / sizeof a6[0]), a6);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "is text"));
    free(r.out);
    /* --top past the rows best keeps, and groups x top past them: the
     * messages give the limit and the group count reached (issue 29: it
     * said "more than 0 groups") */
    const char *a9[] = {"madsweep", "best", g_det, "--top", "5000000"};
    cli(&r, (int)(sizeof a9 / sizeof a9[0]), a9);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--top: expected an integer from 1 to "
                                         "4194304 (the rows best keeps), got '5000000'"));
    free(r.out);
    const char *a10[] = {"madsweep", "best", g_det, "--top", "1500000", "--group",
                         "system"};
    cli(&r, (int)(sizeof a10 / sizeof a10[0]), a10);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "3 groups x top 1500000 rows are more than "
                                         "the 4194304 rows best keeps"));
    free(r.out);
    const char *a7[] = {"madsweep", "best", g_det, "--columns"};
    cli(&r, (int)(sizeof a7 / sizeof a7[0]), a7);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nic_gbps_per_device"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "/axes/system"));
    free(r.out);
    /* a status by name */
    const char *a8[] = {"madsweep", "best", g_det, "--all", "--where",
                        "status==infeasible:memory", "--by",
                        "mem_total_bytes_per_device", "--csv"};
    cli(&r, (int)(sizeof a8 / sizeof a8[0]), a8);
    CU_ASSERT_EQUAL(r.rc, 0);
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL(c.nrows, 1);
    if (c.nrows == 1)
        CU_ASSERT_STRING_EQUAL(csv_get(&c, 0, "status_name"), "infeasible:memory");
    csv_free(&c);
    free(r.out);
}

/* --baseline and --where errors say which condition is at fault and
 * why; a signed figure or a code as --by needs --order; a file without
 * its units attribute ranks a figure the tool knows by the tool's
 * direction, and refuses a column it cannot tell (issue 29: every
 * --baseline error said "expected conditions such as 'tp==1,pp==1'"; a
 * file without units ranked the slowest plan first). */
static void test_conditions_and_directions(void)
{
    static const char *const bad[][2] = {
        {"tq==1", "--baseline: 'tq==1': unknown column 'tq'"},
        {"tp==1,pq==2", "--baseline: 'pq==2': unknown column 'pq'"},
        {"tp==x", "--baseline: 'tp==x': column 'tp' holds numbers"},
        {"tp=1", "--baseline: 'tp=1' is not COLUMN OP VALUE"},
        {"tp==1,,pp==1", "--baseline: an empty condition"},
        {"tp==1,pp==", "--baseline: 'pp==' has no value"},
        {"tp==1,tp==2", "--baseline: tp==1 and tp==2: no row meets both"},
        /* issue 29: == nan matched nothing and != nan everything */
        {"tp==nan", "--baseline: 'tp==nan': NaN compares with nothing"},
        {"mfu!=NAN", "--baseline: 'mfu!=NAN': NaN compares with nothing"}};
    cli_run r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *a[] = {"madsweep", "best", g_det, "--baseline", bad[i][0]};
        cli(&r, 5, a);
        CU_ASSERT_EQUAL(r.rc, 2);
        if (!strstr(r.err, bad[i][1]))
            fprintf(stderr, "\n--baseline %s: %s", bad[i][0], r.err);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad[i][1]));
        free(r.out);
    }
    /* an empty --where or --group kept every row or one group, a group
     * list ending in a comma dropped the column meant (issue 29) */
    static const char *const empty[][3] = {{"--where", "", "--where: expected conditions"},
                                           {"--group", "", "--group: expected columns"},
                                           {"--group", "model,", "'model,' ends in a comma"}};
    for (size_t i = 0; i < 3; i++) {
        const char *a[] = {"madsweep", "best", g_det, empty[i][0], empty[i][1]};
        cli(&r, 5, a);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, empty[i][2]));
        free(r.out);
    }
    const char *w[] = {"madsweep", "best", g_det, "--where", "model==x,model==y"};
    cli(&r, 5, w);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--where: model==x and model==y: no row meets"));
    free(r.out);
    static const char *const signed_by[] = {"elasticity_compute",
                                            "mem_headroom_bytes_per_device", "bound_code"};
    for (size_t i = 0; i < 3; i++) {
        const char *a[] = {"madsweep", "best", g_det, "--by", signed_by[i]};
        cli(&r, 5, a);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "give --order max or min"));
        free(r.out);
        const char *b[] = {"madsweep", "best", g_det, "--by", signed_by[i], "--order", "min"};
        cli(&r, 7, b);
        CU_ASSERT_EQUAL(r.rc, 0);
        free(r.out);
    }
    /* the same file without its units attribute */
    char nounits[700], cmd[1500], out[4096];
    snprintf(nounits, sizeof nounits, "%s.nounits.h5", g_det);
    snprintf(cmd, sizeof cmd, "cp %s %s", g_det, nounits);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    hid_t f = H5Fopen(nounits, H5F_ACC_RDWR, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    /* the row type's owner: /parts/row (format 2) or /results (format 1) */
    const char *owner = H5Lexists(f, "parts", H5P_DEFAULT) > 0 &&
                                H5Lexists(f, "parts/row", H5P_DEFAULT) > 0
                            ? "parts/row"
                            : "results";
    hid_t d = H5Oopen(f, owner, H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    CU_ASSERT_EQUAL(H5Adelete(d, "units"), 0);
    H5Oclose(d);
    H5Fclose(f);
    const char *a1[] = {"madsweep", "best", g_det, "--csv", "--group", "model"};
    cli(&r, 6, a1);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    char *want = r.out;
    const char *a2[] = {"madsweep", "best", nounits, "--csv", "--group", "model"};
    cli(&r, 6, a2);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_STRING_EQUAL(r.out, want); /* the fastest first, as with units */
    free(r.out);
    free(want);
    const char *a3[] = {"madsweep", "best", nounits, "--by", "devices"};
    cli(&r, 5, a3);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "has no unit"));
    free(r.out);
}

static void test_madmax_file(void)
{
    rows_t x;
    rows_load(g_mad, &x, 0);
    int64_t want[4];
    brute(&x, keep_ok, group_model_task, 4, "throughput_samples_per_s", 1, want);
    /* MAD-Max rows whose weights exceed the device stay ok: the default
     * must leave them out by mem_fits (there are some, so this can fail) */
    hssize_t ok_unfit = 0;
    for (hssize_t i = 0; i < x.n; i++)
        ok_unfit += table_get_i32(row_at(&x, i), x.r.status) == 0 &&
                    row_fig(&x, row_at(&x, i), "mem_fits") == 0.0;
    CU_ASSERT(ok_unfit > 0);
    cli_run r;
    const char *a1[] = {"madsweep", "best", g_mad, "--group", "model,task",
                        "--csv"};
    cli(&r, (int)(sizeof a1 / sizeof a1[0]), a1);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    csv_t c;
    csv_parse(r.out, &c);
    CU_ASSERT_EQUAL(c.nrows, 4);
    for (int i = 0; i < c.nrows && i < 4; i++) {
        CU_ASSERT_EQUAL(strtoll(csv_get(&c, i, "id"), NULL, 10), want[i]);
        CU_ASSERT_STRING_EQUAL(csv_get(&c, i, "mem_fits"), "1");
    }
    /* madmax plans hold commas: quoted */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ",\""));
    csv_free(&c);
    free(r.out);
    rows_free(&x);
}

static int sweep_file(const char *name, const char *text, char *out, size_t size)
{
    char sp[512];
    if (!unit_write_file(name, text, sp, sizeof sp))
        return -1;
    snprintf(out, size, "%s.h5", sp);
    sweep_opts o = {.spec_path = sp, .out_path = out,
                    .configs_dir = unit_configs(), .quiet = true};
    return sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, stderr);
}

int main(int argc, char **argv)
{
    unit_mpi_init(&argc, &argv);
    if (sweep_file("best_det.cfg", det_spec, g_det, sizeof g_det) != 0 ||
        sweep_file("best_mad.cfg", mad_spec, g_mad, sizeof g_mad) != 0 ||
        sweep_file("best_twin.cfg", twin_spec, g_twin, sizeof g_twin) != 0) {
        fprintf(stderr, "the sweeps of the test failed\n");
        MPI_Finalize();
        return 1;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("best", NULL, NULL);
    CU_add_test(s, "ok rows by default, every row with --all",
                test_status_default_and_all);
    CU_add_test(s, "--where, --group, --by against a brute force",
                test_where_group_by);
    CU_add_test(s, "the same plan is shown once", test_same_plan_once);
    CU_add_test(s, "--csv has every column; errors", test_csv_columns_and_errors);
    CU_add_test(s, "a MAD-Max file", test_madmax_file);
    CU_add_test(s, "conditions and directions", test_conditions_and_directions);
    return unit_run_mpi();
}
