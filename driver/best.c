/*
 * best.c - top-K points per group of a sweep file (see best.h).
 */
#include "best.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/result.h"
#include "../worker/check.h"
#include "../worker/verify.h"
#include "space.h"

#define BEST_BLOCK 65536
#define BEST_STR 64
#define BEST_PLAN 32
#define BEST_MAX_SLOTS (INT64_C(1) << 24)

typedef struct best_row {
    int64_t id;
    int32_t status;
    int32_t idx[SPACE_NAXES];
    int64_t devices;
    char dense[BEST_PLAN];
    char emb[BEST_PLAN];
    double by, thr, iter;
} best_row;

typedef struct best_axis {
    char *names; /* n x BEST_STR */
    int64_t n;
} best_axis;

/* Reads column `col` of table `path` as strings (or int64 printed). */
static int best_read_axis(hid_t f, const char *path, const char *col,
                          int is_int, best_axis *a)
{
    memset(a, 0, sizeof *a);
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t sp = CHECK_H5ID(H5Dget_space(d));
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    CHECK_H5(H5Sclose(sp));
    a->n = (int64_t)n;
    a->names = calloc((size_t)(n > 0 ? n : 1), BEST_STR);
    int64_t *iv = calloc((size_t)(n > 0 ? n : 1), sizeof *iv);
    if (!a->names || !iv)
        check_die("out of memory", __FILE__, __LINE__);
    hid_t mt;
    if (is_int) {
        mt = CHECK_H5ID(H5Tcreate(H5T_COMPOUND, sizeof(int64_t)));
        CHECK_H5(H5Tinsert(mt, col, 0, H5T_NATIVE_INT64));
    } else {
        hid_t st = CHECK_H5ID(H5Tcopy(H5T_C_S1));
        CHECK_H5(H5Tset_size(st, BEST_STR));
        mt = CHECK_H5ID(H5Tcreate(H5T_COMPOUND, BEST_STR));
        CHECK_H5(H5Tinsert(mt, col, 0, st));
        CHECK_H5(H5Tclose(st));
    }
    herr_t rc = n > 0 ? H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                is_int ? (void *)iv : (void *)a->names)
                      : 0;
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Dclose(d));
    if (is_int)
        for (int64_t i = 0; i < n; i++)
            snprintf(a->names + i * BEST_STR, BEST_STR, "%lld",
                     (long long)iv[i]);
    free(iv);
    for (int64_t i = 0; i < n; i++)
        a->names[i * BEST_STR + BEST_STR - 1] = '\0';
    return rc < 0 ? -1 : 0;
}

static const char *best_name(const best_axis *a, int32_t i)
{
    return i >= 0 && i < a->n ? a->names + (int64_t)i * BEST_STR : "?";
}

static hid_t best_mtype(const char *by, int by_extra)
{
    hid_t t = CHECK_H5ID(H5Tcreate(H5T_COMPOUND, sizeof(best_row)));
    CHECK_H5(H5Tinsert(t, "id", HOFFSET(best_row, id), H5T_NATIVE_INT64));
    CHECK_H5(H5Tinsert(t, "status", HOFFSET(best_row, status), H5T_NATIVE_INT32));
    static const char *const idx[SPACE_NAXES] = {
        "model_idx", "system_idx", "task_idx", "batch_idx", "strategy_idx"};
    for (int a = 0; a < SPACE_NAXES; a++)
        CHECK_H5(H5Tinsert(t, idx[a],
                           HOFFSET(best_row, idx) + (size_t)a * sizeof(int32_t),
                           H5T_NATIVE_INT32));
    CHECK_H5(H5Tinsert(t, "devices", HOFFSET(best_row, devices), H5T_NATIVE_INT64));
    hid_t st = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(st, BEST_PLAN));
    CHECK_H5(H5Tinsert(t, "dense_plan", HOFFSET(best_row, dense), st));
    CHECK_H5(H5Tinsert(t, "emb_plan", HOFFSET(best_row, emb), st));
    CHECK_H5(H5Tclose(st));
    CHECK_H5(H5Tinsert(t, "throughput_samples_per_s", HOFFSET(best_row, thr),
                       H5T_NATIVE_DOUBLE));
    CHECK_H5(H5Tinsert(t, "iteration_time_s", HOFFSET(best_row, iter),
                       H5T_NATIVE_DOUBLE));
    if (by_extra)
        CHECK_H5(H5Tinsert(t, by, HOFFSET(best_row, by), H5T_NATIVE_DOUBLE));
    return t;
}

/* The root attribute `complete` (an integer scalar); -1 otherwise. */
static int best_complete(hid_t f, int64_t *v)
{
    hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a);
    int rc = t >= 0 && H5Tget_class(t) == H5T_INTEGER &&
                     H5Aread(a, H5T_NATIVE_INT64, v) >= 0
                 ? 0
                 : -1;
    if (t >= 0)
        H5Tclose(t);
    H5Aclose(a);
    return rc;
}

/* Is a better than b? */
static int best_better(const best_row *a, const best_row *b, int maximize)
{
    if (a->by != b->by)
        return maximize ? a->by > b->by : a->by < b->by;
    return a->id < b->id;
}

static int best_parse_group(const char *g, int use[SPACE_NAXES], FILE *err)
{
    memset(use, 0, SPACE_NAXES * sizeof *use);
    if (!g || !*g)
        return 0;
    const char *p = g;
    while (*p) {
        size_t len = strcspn(p, ",");
        int a;
        for (a = 0; a < SPACE_NAXES; a++)
            if (strlen(space_axis_names[a]) == len &&
                strncmp(space_axis_names[a], p, len) == 0)
                break;
        if (a == SPACE_NAXES && len == 5 && strncmp(p, "batch", 5) == 0)
            a = SPACE_BATCH;
        if (a == SPACE_NAXES) {
            fprintf(err, "madsweep best: --group: unknown axis '%.*s' "
                    "(expected model, system, task, global_batch, strategy)\n",
                    (int)len, p);
            return -1;
        }
        use[a] = 1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

static void best_csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
}

int best_run(const best_opts *o, FILE *out, FILE *err)
{
    const char *by = o->by ? o->by : "throughput_samples_per_s";
    const result_field *bf = result_find(by);
    if (!bf) {
        fprintf(err, "madsweep best: --by: unknown figure '%s'; one of:", by);
        for (size_t i = 0; i < result_nfields; i++)
            fprintf(err, " %s", result_fields[i].name);
        fputc('\n', err);
        return 2;
    }
    if (o->top < 1) {
        fprintf(err, "madsweep best: --top must be >= 1\n");
        return 2;
    }
    int maximize = strstr(bf->unit, "/s") != NULL || strcmp(bf->name, "mfu") == 0;
    int use[SPACE_NAXES];
    if (best_parse_group(o->group, use, err) != 0)
        return 2;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(o->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        fprintf(err, "madsweep best: cannot open %s: not an HDF5 file, or "
                "truncated or corrupted\n", o->path);
        return 1;
    }
    int rc = 1;
    best_axis ax[SPACE_NAXES];
    memset(ax, 0, sizeof ax);
    best_row *slots = NULL;
    int64_t *fill = NULL;
    best_row *blk = NULL;
    int64_t complete = 0;
    hid_t d = -1;
    if (H5Aexists(f, "complete") <= 0 ||
        H5Lexists(f, "results", H5P_DEFAULT) <= 0) {
        fprintf(err, "madsweep best: %s is not a madsweep sweep file\n", o->path);
        goto out;
    }
    if (best_complete(f, &complete) != 0) {
        fprintf(err, "madsweep best: %s: its attribute 'complete' is not an "
                "integer (corrupted?)\n", o->path);
        goto out;
    }
    if (complete != 1) {
        fprintf(err, "madsweep best: %s is an unfinished sweep (complete = 0); "
                "finish it with `madsweep sweep SPEC --resume -o %s`\n",
                o->path, o->path);
        goto out;
    }
    char vmsg[VERIFY_MSG];
    if (verify_file(f, vmsg, sizeof vmsg) != 0) {
        fprintf(err, "madsweep best: %s is corrupted or not a madsweep sweep "
                "file: %s\n", o->path, vmsg);
        goto out;
    }
    if (best_read_axis(f, "axes/model", "name", 0, &ax[SPACE_MODEL]) ||
        best_read_axis(f, "axes/system", "name", 0, &ax[SPACE_SYSTEM]) ||
        best_read_axis(f, "axes/task", "name", 0, &ax[SPACE_TASK]) ||
        best_read_axis(f, "axes/global_batch", "global_batch", 1,
                       &ax[SPACE_BATCH]) ||
        best_read_axis(f, "axes/strategy", "text", 0, &ax[SPACE_STRATEGY])) {
        fprintf(err, "madsweep best: %s: missing or unreadable /axes tables\n",
                o->path);
        goto out;
    }
    int64_t ngroups = 1;
    int over = 0;
    for (int x = 0; x < SPACE_NAXES; x++)
        if (use[x])
            over |= __builtin_mul_overflow(ngroups, ax[x].n > 0 ? ax[x].n : 1,
                                           &ngroups);
    if (over || ngroups > BEST_MAX_SLOTS / o->top) {
        fprintf(err, "madsweep best: %lld groups x top %lld is too many\n",
                (long long)ngroups, (long long)o->top);
        rc = 2;
        goto out;
    }
    slots = calloc((size_t)(ngroups * o->top), sizeof *slots);
    fill = calloc((size_t)ngroups, sizeof *fill);
    blk = malloc(BEST_BLOCK * sizeof *blk);
    if (!slots || !fill || !blk)
        check_die("out of memory", __FILE__, __LINE__);

    int by_extra = strcmp(by, "throughput_samples_per_s") != 0 &&
                   strcmp(by, "iteration_time_s") != 0;
    int by_iter = strcmp(by, "iteration_time_s") == 0;
    hid_t mt = best_mtype(by, by_extra);
    d = CHECK_H5ID(H5Dopen2(f, "results", H5P_DEFAULT));
    hid_t fs = CHECK_H5ID(H5Dget_space(d));
    hsize_t nrows = (hsize_t)H5Sget_simple_extent_npoints(fs);
    for (hsize_t at = 0; at < nrows; at += BEST_BLOCK) {
        hsize_t cnt = nrows - at < BEST_BLOCK ? nrows - at : BEST_BLOCK;
        CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &cnt, NULL));
        hid_t ms = CHECK_H5ID(H5Screate_simple(1, &cnt, NULL));
        CHECK_H5(H5Dread(d, mt, ms, fs, H5P_DEFAULT, blk));
        CHECK_H5(H5Sclose(ms));
        for (hsize_t i = 0; i < cnt; i++) {
            best_row *r = &blk[i];
            if (r->status != 0)
                continue;
            if (!by_extra)
                r->by = by_iter ? r->iter : r->thr;
            int64_t g = 0;
            for (int x = 0; x < SPACE_NAXES; x++) {
                if (r->idx[x] < 0 || r->idx[x] >= ax[x].n) {
                    fprintf(err, "madsweep best: %s is corrupted: row id %lld "
                            "has %s index %d outside /axes (%lld rows)\n",
                            o->path, (long long)r->id, space_axis_names[x],
                            (int)r->idx[x], (long long)ax[x].n);
                    CHECK_H5(H5Sclose(fs));
                    CHECK_H5(H5Tclose(mt));
                    goto out;
                }
                if (use[x])
                    g = g * ax[x].n + r->idx[x];
            }
            best_row *top = slots + g * o->top;
            int64_t k = fill[g];
            if (k == o->top && !best_better(r, &top[k - 1], maximize))
                continue;
            if (k < o->top)
                fill[g]++;
            else
                k--;
            while (k > 0 && best_better(r, &top[k - 1], maximize)) {
                top[k] = top[k - 1];
                k--;
            }
            top[k] = *r;
        }
    }
    CHECK_H5(H5Sclose(fs));
    CHECK_H5(H5Tclose(mt));

    char fid[32] = "";
    if (H5Aexists(f, "fidelity") > 0) {
        hid_t fa = CHECK_H5ID(H5Aopen(f, "fidelity", H5P_DEFAULT));
        hid_t ft = CHECK_H5ID(H5Tcopy(H5T_C_S1));
        CHECK_H5(H5Tset_size(ft, sizeof fid));
        hid_t at = CHECK_H5ID(H5Aget_type(fa));
        if (H5Tget_class(at) == H5T_STRING && H5Tget_size(at) < sizeof fid &&
            H5Aread(fa, ft, fid) < 0)
            fid[0] = '\0';
        CHECK_H5(H5Tclose(at));
        CHECK_H5(H5Tclose(ft));
        CHECK_H5(H5Aclose(fa));
    }
    int det = strcmp(fid, "detailed") == 0, wd = det ? 30 : 20, we = det ? 28 : 16;
    if (o->csv)
        fprintf(out, "model,system,devices,task,global_batch,dense_plan,"
                "emb_plan,%s%s,id\n", by,
                by_extra ? ",throughput_samples_per_s" : "");
    else
        fprintf(out, "%-14s %-28s %7s %-10s %8s %-*s %-*s %16s%s\n", "model",
                "system", "devices", "task", "batch", wd,
                det ? "parallel" : "dense", we, det ? "options" : "embedding",
                by, by_extra ? "        samples/s" : "");
    for (int64_t g = 0; g < ngroups; g++)
        for (int64_t k = 0; k < fill[g]; k++) {
            const best_row *r = &slots[g * o->top + k];
            const char *m = best_name(&ax[SPACE_MODEL], r->idx[SPACE_MODEL]);
            const char *s = best_name(&ax[SPACE_SYSTEM], r->idx[SPACE_SYSTEM]);
            const char *t = best_name(&ax[SPACE_TASK], r->idx[SPACE_TASK]);
            const char *b = best_name(&ax[SPACE_BATCH], r->idx[SPACE_BATCH]);
            char dense[BEST_PLAN + 1], emb[BEST_PLAN + 1];
            snprintf(dense, sizeof dense, "%.*s", BEST_PLAN, r->dense);
            snprintf(emb, sizeof emb, "%.*s", BEST_PLAN, r->emb);
            if (o->csv) {
                best_csv_field(out, m);
                fputc(',', out);
                best_csv_field(out, s);
                fprintf(out, ",%lld,", (long long)r->devices);
                best_csv_field(out, t);
                fprintf(out, ",%s,", b);
                best_csv_field(out, dense);
                fputc(',', out);
                best_csv_field(out, emb);
                fprintf(out, ",%.17g", r->by);
                if (by_extra)
                    fprintf(out, ",%.17g", r->thr);
                fprintf(out, ",%lld\n", (long long)r->id);
            } else {
                fprintf(out, "%-14s %-28s %7lld %-10s %8s %-*s %-*s %16.6g",
                        m, s, (long long)r->devices, t, b, wd, dense, we, emb,
                        r->by);
                if (by_extra)
                    fprintf(out, " %16.6g", r->thr);
                fputc('\n', out);
            }
        }
    rc = 0;
out:
    if (d >= 0)
        CHECK_H5(H5Dclose(d));
    for (int x = 0; x < SPACE_NAXES; x++)
        free(ax[x].names);
    free(slots);
    free(fill);
    free(blk);
    CHECK_H5(H5Fclose(f));
    return rc;
}
