/*
 * test_corrupt.c - damaged sweep files are reported as damaged by `best`
 * and by `sweep --resume`, never read as data.
 *
 * A small finished sweep file is made with the real binary, then a
 * corpus of variants of it: truncations at 16 lengths, single-byte
 * flips at 32 offsets spread over the file, flips inside the raw rows
 * of /results and inside every table, and 14 targeted damages made
 * through HDF5 (an index column past its axis table, with and without
 * a matching digest; unknown status; rows out of order; a cleared
 * progress byte; /digests removed; counts attributes changed; a table
 * shortened; `complete` of the wrong type; a foreign /results; ...).
 * For every variant, `madsweep best` (the binary) must either fail with
 * a message that calls the file damaged (exit 1), or print exactly what
 * it prints for the pristine file (the damage hit bytes that hold no
 * data); the same for `sweep --resume` (sweep_run in this process, one
 * rank: a refusal, or a file whose every dataset equals the pristine
 * one). Targeted damages must all be
 * refused. A reduced sweep (keep top 2) is damaged too: its finished
 * file (/groups, a kept row) and a checkpoint of a killed run (its state
 * table), each refused, while the intact checkpoint resumes to the
 * uninterrupted run's datasets. Under the sanitizers build this is also
 * a memory-safety test of both readers. Counts of refused and harmless
 * variants are printed.
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/digest.h"
#include "../worker/output.h"
#include "../worker/results.h"
#include "h5read.h"
#include "../driver/sweep/sweep.h"
#include "unit.h"

static const char *const corrupt_spec =
    "models = [\"dlrm_a\", \"llama2_70b\"];\n"
    "systems = [\"zionex_8\", \"zionex_128\", \"dc_A_128\"];\n"
    "tasks = [\"pretrain\", \"inference\"];\n"
    "global_batch = [1024, 4096];\n"
    "strategies = \"auto\";\n"
    "fidelity = \"madmax\";\n"
    "chunk = 64;\n";

static const char *const datasets[] = {
    "results", "progress", "digests", "chunk_starts", "skipped", "axes/model",
    "axes/system", "axes/task", "axes/global_batch", "axes/strategy",
    "axes/stack", "axes/parallel", "axes/status", "provenance/catalogues", "groups",
    "parts/kind_of", "parts/index", "parts/training", "parts/serving"};

/* The first of them that are tables written whole (raw_offsets). */
#define FIRST_TABLE 4

static char g_spec[600], g_good[700], g_best_good[1 << 16];
static const char *g_bin;
static int g_refused, g_harmless, g_failures;

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static int spit(const char *path, const char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(b, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* Every dataset of a and b holds the same bytes. */
static int same_datasets(const char *a, const char *b)
{
    hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
    int same = fa >= 0 && fb >= 0;
    for (size_t i = 0; same && i < sizeof datasets / sizeof datasets[0]; i++) {
        if (H5Lexists(fa, datasets[i], H5P_DEFAULT) <= 0 &&
            H5Lexists(fb, datasets[i], H5P_DEFAULT) <= 0)
            continue; /* in neither (/groups: reduced sweeps only) */
        same = h5read_same(fa, fb, datasets[i]);
    }
    if (fa >= 0)
        H5Fclose(fa);
    if (fb >= 0)
        H5Fclose(fb);
    return same;
}

/* The words a refusal must use. */
static int says_damaged(const char *out)
{
    static const char *const words[] = {"corrupt", "truncated", "damaged",
                                        "not a madsweep", "not an HDF5",
                                        "differs", "another tool",
                                        "unfinished", "does not open"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(out, words[i]))
            return 1;
    return 0;
}

/* `madsweep sweep SPEC -o path --resume` through sweep_run() on this
 * process (MPI_COMM_WORLD of one rank); its messages go to out. */
static int resume_spec_in_process(const char *spec_path, const char *path, char *out,
                                  size_t size)
{
    FILE *err = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    sweep_opts o = {.spec_path = spec_path, .out_path = path,
                    .configs_dir = unit_configs(), .resume = true,
                    .quiet = true};
    int rc = sweep_run(MPI_COMM_WORLD, &o, NULL, err, err);
    /* no HDF5 object of any file left open, whatever the outcome */
    ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open_ids != 0)
        fprintf(stderr, "%s: %zd HDF5 objects left open\n", path, open_ids);
    CU_ASSERT_EQUAL(open_ids, 0);
    rewind(err);
    size_t n = fread(out, 1, size - 1, err);
    out[n] = '\0';
    fclose(err);
    return rc;
}

static int resume_in_process(const char *path, char *out, size_t size)
{
    return resume_spec_in_process(g_spec, path, out, size);
}

/* Runs best and resume on variant file `path`; `must_refuse`: a
 * targeted damage that no reader may take for data. */
static void check_variant(const char *label, const char *path, int must_refuse)
{
    static char out[1 << 16];
    char cmd[2048], copy[800];
    snprintf(copy, sizeof copy, "%s.resume.h5", path);
    size_t n = 0;
    char *bytes = slurp(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    CU_ASSERT_EQUAL_FATAL(spit(copy, bytes, n), 0);
    free(bytes);

    /* best: refused, or exactly the pristine answer */
    snprintf(cmd, sizeof cmd, "%s best %s --group model,system --top 2 --csv",
             g_bin, path);
    int rc = unit_run_command(cmd, out, sizeof out);
    int ok_best = (rc == 1 && says_damaged(out)) ||
                  (!must_refuse && rc == 0 && strcmp(out, g_best_good) == 0);
    int refused_best = rc != 0;

    /* resume (in-process): refused, or a file equal to the pristine one */
    int rr = resume_in_process(copy, out, sizeof out);
    int ok_resume = (rr != 0 && rr != -1 && says_damaged(out)) ||
                    (!must_refuse && rr == 0 && same_datasets(copy, g_good));
    if (!ok_best || !ok_resume) {
        fprintf(stderr, "variant %s: best rc %d%s, resume rc %d%s: %s\n", label,
                rc, ok_best ? "" : " WRONG", rr, ok_resume ? "" : " WRONG", out);
        g_failures++;
    }
    CU_ASSERT(ok_best);
    CU_ASSERT(ok_resume);
    if (refused_best)
        g_refused++;
    else
        g_harmless++;
    remove(copy);
}

/* ------------------------------------------------------------ damage */

/* The stored rows of /results (the common part of the logical rows,
 * worker/output_rows.h) and the offsets of the columns damaged. */
typedef struct rowinfo {
    hid_t f, d;
    size_t rs;             /* bytes per stored row */
    size_t id, status, model, system, fig[2]; /* iteration_time_s, throughput */
    int64_t nrows, nchunks;
    int64_t *lo; /* /chunk_starts */
} rowinfo;

static size_t member_off(hid_t d, const char *name)
{
    hid_t t = H5Dget_type(d);
    int i = H5Tget_member_index(t, name);
    CU_ASSERT_FATAL(i >= 0);
    size_t off = H5Tget_member_offset(t, (unsigned)i);
    H5Tclose(t);
    return off;
}

static int open_rows(const char *path, rowinfo *ri)
{
    ri->f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ri->d = ri->f >= 0 ? H5Dopen2(ri->f, "results", H5P_DEFAULT) : -1;
    if (ri->d < 0)
        return -1;
    hid_t t = H5Dget_type(ri->d);
    ri->rs = H5Tget_size(t);
    H5Tclose(t);
    ri->id = member_off(ri->d, "id");
    ri->status = member_off(ri->d, "status");
    ri->model = member_off(ri->d, "model_idx");
    ri->system = member_off(ri->d, "system_idx");
    ri->fig[0] = member_off(ri->d, "iteration_time_s");
    ri->fig[1] = member_off(ri->d, "throughput_samples_per_s");
    hid_t s = H5Dget_space(ri->d);
    ri->nrows = H5Sget_simple_extent_npoints(s);
    H5Sclose(s);
    hid_t a = H5Aopen(ri->f, "chunks", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &ri->nchunks);
    H5Aclose(a);
    ri->lo = calloc((size_t)ri->nchunks + 1, sizeof *ri->lo);
    hid_t d = H5Dopen2(ri->f, "chunk_starts", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ri->lo);
    H5Dclose(d);
    return 0;
}

static void close_rows(rowinfo *ri)
{
    free(ri->lo);
    H5Dclose(ri->d);
    H5Fclose(ri->f);
}

/* The chunk holding id (the cut of /chunk_starts). */
static int64_t chunk_of(const rowinfo *ri, int64_t id)
{
    int64_t c = 0;
    while (c + 1 < ri->nchunks && ri->lo[c + 1] <= id)
        c++;
    return c;
}

static int rw_rows(rowinfo *ri, int64_t at, int64_t n, char *buf, int write)
{
    hid_t t = H5Dget_type(ri->d);
    hsize_t s0 = (hsize_t)at, c0 = (hsize_t)n;
    hid_t fs = H5Dget_space(ri->d), ms = H5Screate_simple(1, &c0, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s0, NULL, &c0, NULL);
    herr_t rc = write ? H5Dwrite(ri->d, t, ms, fs, H5P_DEFAULT, buf)
                      : H5Dread(ri->d, t, ms, fs, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(t);
    return rc < 0 ? -1 : 0;
}

/* Rewrites the digest of the chunk holding row `row` from the rows now
 * in the file, as stored (worker/results.h: a damage that keeps its
 * checksum consistent). */
static void redigest(rowinfo *ri, int64_t row)
{
    results res;
    char msg[512];
    CU_ASSERT_EQUAL_FATAL(results_open(&res, ri->f, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL_FATAL(results_fetch(&res, 0, ri->nrows, msg, sizeof msg), 0);
    /* keep = "all": row i is point i, so chunk c holds rows lo[c].. */
    int64_t c = chunk_of(ri, row), lo = -1, hi = -1;
    for (int64_t i = 0; i < ri->nrows; i++) {
        if (chunk_of(ri, i) == c) {
            if (lo < 0)
                lo = i;
            hi = i + 1;
        }
    }
    uint64_t dg = DIGEST_SEED;
    for (int64_t i = lo; i < hi; i++)
        dg = results_digest_row(&res, dg, i);
    results_close(&res);
    hid_t d = H5Dopen2(ri->f, "digests", H5P_DEFAULT);
    hsize_t s0 = (hsize_t)c, c0 = 1;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &c0, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s0, NULL, &c0, NULL);
    H5Dwrite(d, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, &dg);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

typedef enum damage {
    D_IDX_PAST_AXIS,      /* system_idx = 999, digest left */
    D_IDX_PAST_AXIS_SUM,  /* the same with a matching digest */
    D_IDX_NEGATIVE_SUM,   /* model_idx = -5, matching digest */
    D_STATUS_UNKNOWN_SUM, /* status 55, matching digest */
    D_ORDER_SUM,          /* two rows swapped, matching digest */
    D_ID_PAST_SUM,        /* id beyond points_total, matching digest */
    D_FIGURE,             /* a figure changed, digest left */
    D_PROGRESS_CLEARED,   /* one progress byte 0 in a complete file */
    D_NO_DIGESTS,         /* /digests removed */
    D_VALID_ATTR,         /* points_valid + 1 */
    D_CHUNKS_ATTR,        /* chunks (the count) changed */
    D_TABLE_DIGEST,       /* /axes/model's digest attribute changed */
    D_COMPLETE_STRING,    /* complete is a string */
    D_FOREIGN_RESULTS,    /* /results replaced by an integer dataset */
    D_PART_FIGURE,        /* a figure of /parts/training changed, digest left */
    D_PART_SHORT,         /* /parts/training one row short */
    D_INDEX_ENTRY,        /* a /parts/index entry's row moved */
    D_N
} damage;

static const char *const damage_names[D_N] = {
    "idx past axis", "idx past axis (digest kept consistent)",
    "negative idx (consistent digest)", "unknown status (consistent digest)",
    "rows out of order (consistent digest)", "id past total (consistent digest)",
    "figure changed", "progress byte cleared", "no /digests",
    "points_valid changed", "chunks changed", "table digest changed",
    "complete is a string", "foreign /results", "part figure changed",
    "part one row short", "index entry moved"};

static void set_attr_i64(hid_t loc, const char *name, int64_t v)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
}

static int64_t get_attr_i64(hid_t loc, const char *name)
{
    int64_t v = 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
    return v;
}

static void apply_damage(const char *path, damage k)
{
    rowinfo ri;
    CU_ASSERT_EQUAL_FATAL(open_rows(path, &ri), 0);
    size_t rs = ri.rs;
    int64_t row = ri.nrows / 2;
    char *buf = malloc(2 * rs);
    rw_rows(&ri, row, 2, buf, 0);
    int32_t v32;
    int64_t v64;
    switch (k) {
    case D_IDX_PAST_AXIS:
    case D_IDX_PAST_AXIS_SUM:
        v32 = 999;
        memcpy(buf + ri.system, &v32, 4);
        break;
    case D_IDX_NEGATIVE_SUM:
        v32 = -5;
        memcpy(buf + ri.model, &v32, 4);
        break;
    case D_STATUS_UNKNOWN_SUM:
        v32 = 55;
        memcpy(buf + ri.status, &v32, 4);
        break;
    case D_ORDER_SUM: {
        char *tmp = malloc(rs);
        memcpy(tmp, buf, rs);
        memcpy(buf, buf + rs, rs);
        memcpy(buf + rs, tmp, rs);
        free(tmp);
        break;
    }
    case D_ID_PAST_SUM:
        v64 = INT64_C(1) << 40;
        memcpy(buf + ri.id, &v64, 8);
        break;
    case D_FIGURE: {
        double x;
        memcpy(&x, buf + ri.fig[0], 8);
        x *= 2.0;
        memcpy(buf + ri.fig[0], &x, 8);
        break;
    }
    default:
        break;
    }
    if (k <= D_FIGURE)
        rw_rows(&ri, row, 2, buf, 1);
    if (k == D_IDX_PAST_AXIS_SUM || k == D_IDX_NEGATIVE_SUM ||
        k == D_STATUS_UNKNOWN_SUM || k == D_ORDER_SUM || k == D_ID_PAST_SUM)
        redigest(&ri, row);
    free(buf);
    hid_t f = ri.f;
    if (k == D_PROGRESS_CLEARED) {
        hid_t d = H5Dopen2(f, "progress", H5P_DEFAULT);
        hsize_t s0 = 1, c0 = 1;
        uint8_t zero = 0;
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &c0, NULL);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s0, NULL, &c0, NULL);
        H5Dwrite(d, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, &zero);
        H5Sclose(ms);
        H5Sclose(fs);
        H5Dclose(d);
    } else if (k == D_NO_DIGESTS) {
        H5Ldelete(f, "digests", H5P_DEFAULT);
    } else if (k == D_VALID_ATTR) {
        set_attr_i64(f, "points_valid", get_attr_i64(f, "points_valid") + 1);
    } else if (k == D_CHUNKS_ATTR) {
        set_attr_i64(f, "chunks", get_attr_i64(f, "chunks") + 1);
    } else if (k == D_TABLE_DIGEST) {
        hid_t d = H5Dopen2(f, "axes/model", H5P_DEFAULT);
        hid_t a = H5Aopen(d, "digest", H5P_DEFAULT);
        uint64_t x = 12345;
        H5Awrite(a, H5T_NATIVE_UINT64, &x);
        H5Aclose(a);
        H5Dclose(d);
    } else if (k == D_COMPLETE_STRING) {
        H5Adelete(f, "complete");
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 4);
        hid_t s = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, "complete", t, s, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, t, "yes");
        H5Aclose(a);
        H5Sclose(s);
        H5Tclose(t);
    } else if (k == D_FOREIGN_RESULTS) {
        H5Dclose(ri.d);
        ri.d = -1;
        H5Ldelete(f, "results", H5P_DEFAULT);
        hsize_t dim = (hsize_t)ri.nrows;
        hid_t s = H5Screate_simple(1, &dim, NULL);
        hid_t d = H5Dcreate2(f, "results", H5T_STD_I32LE, s, H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(d);
        H5Sclose(s);
    }
    if (k == D_PART_FIGURE || k == D_PART_SHORT || k == D_INDEX_ENTRY) {
        /* the training part's first member is a figure (a double), the
         * index's its `row` (an int64) */
        hid_t d = H5Dopen2(f, k == D_INDEX_ENTRY ? "parts/index" : "parts/training",
                           H5P_DEFAULT);
        CU_ASSERT_FATAL(d >= 0);
        hid_t t = H5Dget_type(d), fs = H5Dget_space(d);
        hsize_t np = (hsize_t)H5Sget_simple_extent_npoints(fs), at = np / 2, one = 1;
        CU_ASSERT_FATAL(np >= 2);
        if (k == D_PART_SHORT) {
            hsize_t m = np - 1;
            CU_ASSERT(H5Dset_extent(d, &m) >= 0);
        } else {
            char *e = malloc(H5Tget_size(t));
            hid_t ms = H5Screate_simple(1, &one, NULL);
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL);
            H5Dread(d, t, ms, fs, H5P_DEFAULT, e);
            if (k == D_INDEX_ENTRY) {
                int64_t r;
                memcpy(&r, e, 8);
                r += 1;
                memcpy(e, &r, 8);
            } else {
                e[1] ^= 0x10; /* a mantissa bit: another value, even of a NaN */
            }
            H5Dwrite(d, t, ms, fs, H5P_DEFAULT, e);
            H5Sclose(ms);
            free(e);
        }
        H5Sclose(fs);
        H5Tclose(t);
        H5Dclose(d);
    }
    if (ri.d >= 0)
        H5Dclose(ri.d);
    H5Fclose(f);
    free(ri.lo);
}

/* File offsets of the raw data of the first, middle and last chunks of
 * /results and /parts/training and of every table (-1 when unknown). */
static void raw_offsets(const char *path, haddr_t *off, int *n)
{
    *n = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    /* chunk addresses count from the superblock, after the user block
     * (H5Dget_offset's count from the file's first byte) */
    hsize_t ub = 0;
    hid_t fcpl = H5Fget_create_plist(f);
    H5Pget_userblock(fcpl, &ub);
    H5Pclose(fcpl);
    static const char *const chunked[2] = {"results", "parts/training"};
    for (int c = 0; c < 2; c++) {
        hid_t d = H5Dopen2(f, chunked[c], H5P_DEFAULT);
        hsize_t nch = 0;
        hid_t fs = H5Dget_space(d);
        H5Dget_num_chunks(d, fs, &nch);
        hsize_t pick[3] = {0, nch / 2, nch ? nch - 1 : 0};
        for (int i = 0; i < 3 && nch; i++) {
            hsize_t o[1];
            unsigned mask;
            haddr_t addr;
            hsize_t sz;
            if (H5Dget_chunk_info(d, fs, pick[i], o, &mask, &addr, &sz) >= 0)
                off[(*n)++] = ub + addr + (c ? 20 : 100) + (haddr_t)i * 37;
        }
        H5Sclose(fs);
        H5Dclose(d);
    }
    for (size_t i = FIRST_TABLE; i < sizeof datasets / sizeof datasets[0]; i++) {
        hid_t t = H5Dopen2(f, datasets[i], H5P_DEFAULT);
        if (t < 0)
            continue;
        haddr_t a = H5Dget_offset(t);
        if (a != HADDR_UNDEF)
            off[(*n)++] = a + 5;
        H5Dclose(t);
    }
    H5Fclose(f);
}

static void test_corpus(void)
{
    g_bin = getenv("MADSWEEP_BINARY");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g_bin);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        unit_write_file("corrupt.cfg", corrupt_spec, g_spec, sizeof g_spec));
    snprintf(g_good, sizeof g_good, "%s.good.h5", g_spec);
    char cmd[2048], var[800];
    static char out[1 << 16];
    snprintf(cmd, sizeof cmd, "%s sweep %s -o %s --quiet", g_bin, g_spec, g_good);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "%s best %s --group model,system --top 2 --csv",
             g_bin, g_good);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, g_best_good, sizeof g_best_good), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(strstr(g_best_good, "model,system"));
    size_t n = 0;
    char *good = slurp(g_good, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);
    snprintf(var, sizeof var, "%s.var.h5", g_spec);
    char label[64];
    int variants = 0;

    /* truncations */
    static const double cut[] = {0.0, 0.01, 0.03, 0.06, 0.1, 0.2, 0.3, 0.4,
                                 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        size_t len = (size_t)(cut[i] * (double)n);
        CU_ASSERT_EQUAL_FATAL(spit(var, good, len), 0);
        snprintf(label, sizeof label, "truncated to %zu of %zu bytes", len, n);
        check_variant(label, var, len > 0);
        variants++;
    }
    CU_ASSERT_EQUAL_FATAL(spit(var, good, n - 1), 0);
    check_variant("truncated by one byte", var, 1);
    variants++;

    /* single-byte flips spread over the file */
    for (int k = 0; k < 32; k++) {
        size_t at = (size_t)((double)k / 32.0 * (double)n) + 3;
        if (at >= n)
            at = n - 1;
        good[at] ^= (char)0x5a;
        CU_ASSERT_EQUAL_FATAL(spit(var, good, n), 0);
        good[at] ^= (char)0x5a;
        snprintf(label, sizeof label, "byte %zu flipped", at);
        check_variant(label, var, 0);
        variants++;
    }

    /* flips inside data: they must be refused */
    haddr_t offs[32];
    int noff = 0;
    raw_offsets(g_good, offs, &noff);
    CU_ASSERT(noff >= 8);
    for (int k = 0; k < noff; k++) {
        size_t at = (size_t)offs[k];
        if (at >= n)
            continue;
        good[at] ^= (char)0x01;
        CU_ASSERT_EQUAL_FATAL(spit(var, good, n), 0);
        good[at] ^= (char)0x01;
        snprintf(label, sizeof label, "data byte %zu flipped", at);
        check_variant(label, var, 1);
        variants++;
    }

    /* targeted damages */
    for (int k = 0; k < D_N; k++) {
        CU_ASSERT_EQUAL_FATAL(spit(var, good, n), 0);
        apply_damage(var, (damage)k);
        check_variant(damage_names[k], var, 1);
        variants++;
    }
    free(good);
    remove(var);
    printf("\ncorrupt: %d variants, %d refused by best, %d harmless (no data "
           "byte changed), %d handled wrongly\n", variants, g_refused,
           g_harmless, g_failures);
}

/* A resumable (stopped) file whose finished chunk is damaged: --resume
 * refuses it instead of building on it. */
static void test_resume_damaged(void)
{
    char cmd[2048], path[800];
    static char out[1 << 16];
    snprintf(path, sizeof path, "%s.stopped.h5", g_spec);
    snprintf(cmd, sizeof cmd, "MADSWEEP_STOP_AFTER_CHUNKS=4 %s sweep %s -o %s "
             "--quiet", g_bin, g_spec, path);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 75);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--resume"));
    /* row 0 belongs to chunk 0, written before the stop */
    rowinfo ri;
    CU_ASSERT_EQUAL_FATAL(open_rows(path, &ri), 0);
    char *row = malloc(ri.rs);
    rw_rows(&ri, 0, 1, row, 0);
    double x;
    memcpy(&x, row + ri.fig[1], 8);
    x += 1.0;
    memcpy(row + ri.fig[1], &x, 8);
    rw_rows(&ri, 0, 1, row, 1);
    free(row);
    close_rows(&ri);
    snprintf(cmd, sizeof cmd, "%s sweep %s -o %s --resume --quiet", g_bin,
             g_spec, path);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "corrupted"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "chunk 0"));
    remove(path);
}

/* Overwrites the `digest` attribute of dataset `name`. */
static void spoil_digest(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t a = H5Aopen(d, "digest", H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0 && d >= 0 && a >= 0);
    uint64_t x = 12345;
    H5Awrite(a, H5T_NATIVE_UINT64, &x);
    H5Aclose(a);
    H5Dclose(d);
    H5Fclose(f);
}

/* Reduced sweeps (keep top 2 per model): a finished file with a damaged
 * /groups or kept row is refused by best and --resume; a checkpoint whose
 * state table is damaged is refused by --resume, an intact one resumes
 * to the uninterrupted run's datasets. */
static void test_reduced_damaged(void)
{
    char kspec[600], cmd[2048], ref[700], var[700], text[1024];
    static char out[1 << 16];
    snprintf(text, sizeof text, "%skeep = { top = 2; by = \"iteration_time_s\"; "
             "group = [\"model\"]; };\n", corrupt_spec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("corrupt_keep.cfg", text, kspec,
                                                 sizeof kspec));
    snprintf(ref, sizeof ref, "%s.ref.h5", kspec);
    snprintf(var, sizeof var, "%s.var.h5", kspec);
    snprintf(cmd, sizeof cmd, "%s sweep %s -o %s --quiet", g_bin, kspec, ref);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    size_t n = 0;
    char *good = slurp(ref, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(good);

    /* a finished file: /groups' digest, then a kept row's figure */
    for (int k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL_FATAL(spit(var, good, n), 0);
        if (k == 0) {
            spoil_digest(var, "groups");
        } else {
            rowinfo ri;
            CU_ASSERT_EQUAL_FATAL(open_rows(var, &ri), 0);
            char *row = malloc(ri.rs);
            rw_rows(&ri, 0, 1, row, 0);
            double x;
            memcpy(&x, row + ri.fig[0], 8);
            x *= 3.0;
            memcpy(row + ri.fig[0], &x, 8);
            rw_rows(&ri, 0, 1, row, 1);
            free(row);
            close_rows(&ri);
        }
        snprintf(cmd, sizeof cmd, "%s best %s", g_bin, var);
        int rc = unit_run_command(cmd, out, sizeof out);
        CU_ASSERT(rc == 1 && says_damaged(out));
        rc = resume_spec_in_process(kspec, var, out, sizeof out);
        CU_ASSERT(rc == 1 && says_damaged(out));
        if (!(rc == 1 && says_damaged(out)))
            fprintf(stderr, "reduced variant %d: resume rc %d: %s\n", k, rc, out);
    }
    free(good);

    /* a checkpoint (killed after 3 chunks, one checkpoint per chunk) */
    snprintf(cmd, sizeof cmd, "MADSWEEP_KILL_AFTER_CHUNKS=3 %s sweep %s -o %s --quiet "
             "--checkpoint 0", g_bin, kspec, var);
    CU_ASSERT(unit_run_command(cmd, out, sizeof out) != 0);
    size_t m = 0;
    char *killed = slurp(var, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(killed);
    hid_t f = H5Fopen(var, H5F_ACC_RDONLY, H5P_DEFAULT);
    int64_t slot = -1;
    hid_t a = H5Aopen(f, "keep_slot", H5P_DEFAULT);
    CU_ASSERT_FATAL(a >= 0);
    H5Aread(a, H5T_NATIVE_INT64, &slot);
    H5Aclose(a);
    H5Fclose(f);
    char state[32];
    snprintf(state, sizeof state, "keep/slot%lld/state", (long long)slot);
    spoil_digest(var, state);
    int rc = resume_spec_in_process(kspec, var, out, sizeof out);
    CU_ASSERT(rc == 1 && strstr(out, "corrupted") && strstr(out, "/state"));
    CU_ASSERT_EQUAL_FATAL(spit(var, killed, m), 0);
    rc = resume_spec_in_process(kspec, var, out, sizeof out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(same_datasets(var, ref));
    free(killed);
    remove(var);
    remove(ref);
}

int main(int argc, char **argv)
{
    unit_mpi_init(&argc, &argv);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("corrupt", NULL, NULL);
    CU_add_test(s, "truncated, flipped and damaged files", test_corpus);
    CU_add_test(s, "resume refuses a damaged finished chunk", test_resume_damaged);
    CU_add_test(s, "reduced sweeps: damaged files and checkpoints", test_reduced_damaged);
    return unit_run_mpi();
}
