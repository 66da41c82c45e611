/*
 * pointfile.c - point files from points and from sweep rows (see
 * pointfile.h).
 *
 * Invariant: the temporary directory of pointfile_from_sweep() is
 * removed, with everything written into it, on every path out.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "pointfile.h"

#include "engine_args.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../cost/detailed.h"
#include "../../cost/elastic.h"
#include "../../worker/check.h"
#include "../../worker/provenance.h"
#include "../../worker/version.h"
#include "frame.h"
#include "../../worker/space.h"
#include "../load/load.h"
#include "../sweep/spec_load.h"

/* ------------------------------------------------------------ writing */

typedef struct pointfile_ctx {
    FILE *out;
    const point_t *p;
    const hw_t *hw; /* the hardware the keys of LOAD_NS_HW are written from */
    int indent;
} pointfile_ctx;

/* An integer array: every element with libconfig's L when one needs it
 * (past 32 bits libconfig keeps the low 32 bits of an integer without
 * L, and an array's elements share one type); n < 0: the one value
 * *v, not an array. */
static void pointfile_ints(FILE *out, int indent, const char *key,
                           const int64_t *v, int n)
{
    bool wide = false;
    for (int i = 0; i < (n < 0 ? 1 : n); i++)
        wide |= v[i] > INT32_MAX || v[i] < INT32_MIN;
    fprintf(out, "%*s%s = %s", indent, "", key, n < 0 ? "" : "[");
    for (int i = 0; i < (n < 0 ? 1 : n); i++)
        fprintf(out, "%s%lld%s", i ? ", " : "", (long long)v[i], wide ? "L" : "");
    fputs(n < 0 ? ";\n" : "];\n", out);
}

static void pointfile_floats(FILE *out, int indent, const char *key,
                             const double *v, int n)
{
    fprintf(out, "%*s%s = [", indent, "", key);
    for (int i = 0; i < n; i++) {
        char num[40];
        fprintf(out, "%s%s", i ? ", " : "", load_write_double_text(v[i], num, sizeof num));
    }
    fputs("];\n", out);
}

/* The keys the key tables leave to the caller (type "any"). */
static void pointfile_hw_any(const char *key, void *arg)
{
    const pointfile_ctx *c = arg;
    const hw_t *h = c->hw;
    if (strcmp(key, "gemm_log10_flops") == 0)
        pointfile_floats(c->out, c->indent, key, h->gemm_log10_flops, h->gemm_points);
    else if (strcmp(key, "gemm_efficiency") == 0)
        pointfile_floats(c->out, c->indent, key, h->gemm_efficiency, h->gemm_points);
    else if (strcmp(key, "gemm_fp8_log10_flops") == 0 && h->gemm_fp8_points > 0)
        pointfile_floats(c->out, c->indent, key, h->gemm_fp8_log10_flops,
                         h->gemm_fp8_points);
    else if (strcmp(key, "gemm_fp8_efficiency") == 0 && h->gemm_fp8_points > 0)
        pointfile_floats(c->out, c->indent, key, h->gemm_fp8_efficiency,
                         h->gemm_fp8_points);
    else if (strcmp(key, "gemm_fp4_log10_flops") == 0 && h->gemm_fp4_points > 0)
        pointfile_floats(c->out, c->indent, key, h->gemm_fp4_log10_flops,
                         h->gemm_fp4_points);
    else if (strcmp(key, "gemm_fp4_efficiency") == 0 && h->gemm_fp4_points > 0)
        pointfile_floats(c->out, c->indent, key, h->gemm_fp4_efficiency,
                         h->gemm_fp4_points);
}

/* A MAD-Max system's `hardware`: the generation its power and price came
 * from, an entry of the file's own list 'hardware' (the figures
 * themselves are written as keys of the system); a comment when the
 * entry is not known. */
static void pointfile_system_any(const char *key, void *arg)
{
    const pointfile_ctx *c = arg;
    if (strcmp(key, "hardware") != 0 || !c->p->cluster.hardware[0])
        return;
    fprintf(c->out, "%*s%shardware = \"%s\";\n", c->indent, "", c->hw ? "" : "# ",
            c->p->cluster.hardware);
}

/* A detailed system's hardware, inline, with the power and price the
 * system gave it (its board_power_w, idle_power_w, price_per_hour_usd
 * keys are thereby already in the hardware). */
static void pointfile_system_detailed_any(const char *key, void *arg)
{
    const pointfile_ctx *c = arg;
    if (strcmp(key, "hardware") != 0)
        return;
    fprintf(c->out, "%*shardware = {\n", c->indent, "");
    pointfile_ctx in = {c->out, c->p, &c->p->system.hw, c->indent + 2};
    load_write_keys(c->out, LOAD_NS_HW, &c->p->system.hw, c->p->model.kind,
                    in.indent, pointfile_hw_any, &in);
    fprintf(c->out, "%*s};\n", c->indent, "");
}

static void pointfile_model_detailed_any(const char *key, void *arg)
{
    const pointfile_ctx *c = arg;
    const model_detailed_t *d = &c->p->model.d;
    if (strcmp(key, "bot_mlp") == 0)
        pointfile_ints(c->out, c->indent, key, d->bot_mlp, d->bot_n);
    else if (strcmp(key, "top_mlp") == 0)
        pointfile_ints(c->out, c->indent, key, d->top_mlp, d->top_n);
    else if (strcmp(key, "rows_per_table") == 0 && d->n_tables > 0)
        pointfile_ints(c->out, c->indent, key, d->table_rows, d->n_tables);
    else if (strcmp(key, "rows_per_table") == 0)
        pointfile_ints(c->out, c->indent, key, &c->p->model.rows_per_table, -1);
    else if (strcmp(key, "pooling") == 0 && d->n_tables > 0) {
        int64_t pool[MODEL_TABLES_MAX];
        for (int i = 0; i < d->n_tables; i++)
            pool[i] = d->table_pooling[i];
        pointfile_ints(c->out, c->indent, key, pool, d->n_tables);
    } else if (strcmp(key, "pooling") == 0)
        pointfile_ints(c->out, c->indent, key, &c->p->model.pooling, -1);
    else if (strcmp(key, "interaction") == 0)
        fprintf(c->out, "%*sinteraction = \"%s\";\n", c->indent, "",
                d->interaction == MODEL_INTERACTION_DCNV2 ? "dcnv2" : "dot");
}

/* A detailed serving point's disaggregated prefill pool, its hardware
 * inline (load.h load_point_prefill_pool reads it back). */
static void pointfile_prefill(FILE *out, const point_t *p)
{
    const point_prefill *f = &p->prefill;
    pointfile_ctx in = {out, p, &f->system.hw, 4};
    fputs("prefill = {\n  hardware = {\n", out);
    load_write_keys(out, LOAD_NS_HW, &f->system.hw, p->model.kind, 4, pointfile_hw_any, &in);
    fputs("  };\n", out);
    if (f->rate_matched)
        fputs("  devices = \"auto\";\n", out);
    else
        fprintf(out, "  devices = %lld;\n", (long long)f->system.devices);
    fprintf(out, "  tp = %lld;\n  pp = %lld;\n", (long long)f->tp, (long long)f->pp);
    const struct {
        const char *key;
        int64_t v;
    } own[] = {{"attn_dp", f->attn_dp}, {"ep", f->ep}, {"etp", f->etp},
               {"max_seqs", f->max_seqs}, {"token_budget", f->token_budget}};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (own[i].v > 0)
            fprintf(out, "  %s = %lld;\n", own[i].key, (long long)own[i].v);
    if (f->system.devices_per_node > 0)
        fprintf(out, "  devices_per_node = %lld;\n", (long long)f->system.devices_per_node);
    if (f->system.nic_gbps_per_device > 0.0) {
        char num[40];
        fprintf(out, "  nic_gbps_per_device = %s;\n",
                load_write_double_text(f->system.nic_gbps_per_device, num, sizeof num));
    }
    fprintf(out, "  kv_transfer = \"%s\";\n};\n", f->layerwise ? "layerwise" : "after_prefill");
}

void pointfile_write(FILE *out, const point_t *p, const hw_t *mad_hw)
{
    bool det = p->fidelity == EVAL_DETAILED;
    model_kind kind = p->model.kind;
    pointfile_ctx c = {out, p, det ? &p->system.hw : mad_hw, 2};
    fprintf(out, "fidelity = \"%s\";\n", eval_fidelity_name(p->fidelity));
    if (!det && mad_hw && p->cluster.hardware[0]) {
        /* the system's hardware generation, for its name */
        pointfile_ctx in = {out, p, mad_hw, 4};
        fputs("hardware = ( {\n", out);
        load_write_keys(out, LOAD_NS_HW, mad_hw, kind, 4, pointfile_hw_any, &in);
        fputs("} );\n", out);
    }
    fputs("model = {\n", out);
    load_write_keys(out, det ? LOAD_NS_DMODEL : LOAD_NS_MODEL, &p->model, kind,
                    2, det ? pointfile_model_detailed_any : NULL, &c);
    fputs("};\nsystem = {\n", out);
    if (det)
        load_write_keys(out, LOAD_NS_DSYSTEM, &p->system, kind, 2,
                        pointfile_system_detailed_any, &c);
    else
        load_write_keys(out, LOAD_NS_SYSTEM, &p->cluster, kind, 2,
                        pointfile_system_any, &c);
    fputs("};\ntask = {\n", out);
    load_write_keys(out, det ? LOAD_NS_DTASK : LOAD_NS_TASK, &p->task, kind, 2,
                    NULL, NULL);
    fputs("};\n", out);
    if (det) {
        /* the stack the point ran with, in full (a sweep's point has the
         * stack of its row, from the stacks axis; one with none takes the
         * idealized stack, stack.h, which a point file states too, as a
         * point without `stack` takes the catalogue's default) */
        stack_desc ideal;
        const stack_desc *st = &p->stack;
        if (!st->name[0]) {
            stack_ideal(&ideal);
            st = &ideal;
        }
        fputs("stack = {\n", out);
        load_write_keys(out, LOAD_NS_STACK, st, kind, 2, NULL, NULL);
        fputs("};\n", out);
        if (p->prefill.on)
            pointfile_prefill(out, p);
    }
}

/* ------------------------------------------------------------ the spec */

/* Files written into the temporary directory, removed in reverse. */
typedef struct pointfile_tmp {
    char dir[4096];
    char (*made)[LOAD_PATH_MAX];
    int n, cap;
} pointfile_tmp;

static int pointfile_note(pointfile_tmp *t, const char *path)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        void *m = realloc(t->made, (size_t)cap * sizeof *t->made);
        if (!m)
            return -1;
        t->made = m;
        t->cap = cap;
    }
    snprintf(t->made[t->n++], LOAD_PATH_MAX, "%s", path);
    return 0;
}

static void pointfile_cleanup(pointfile_tmp *t)
{
    for (int i = t->n - 1; i >= 0; i--)
        remove(t->made[i]);
    if (t->dir[0])
        rmdir(t->dir);
    free(t->made);
    memset(t, 0, sizeof *t);
}

/* Writes `text` to dir/name, making the directories of name. */
static int pointfile_put(pointfile_tmp *t, const char *name, const char *text,
                         int64_t bytes)
{
    char path[LOAD_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", t->dir, name);
    for (char *s = path + strlen(t->dir) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(path, 0700) == 0 && pointfile_note(t, path) != 0)
            return -1;
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    if (pointfile_note(t, path) != 0) {
        fclose(f);
        return -1;
    }
    size_t w = fwrite(text, 1, (size_t)bytes, f);
    return fclose(f) == 0 && w == (size_t)bytes ? 0 : -1;
}

static int64_t pointfile_attr_i64(hid_t f, const char *name)
{
    int64_t v = -1;
    if (H5Aexists(f, name) <= 0)
        return v;
    hid_t a = CHECK_H5ID(H5Aopen(f, name, H5P_DEFAULT));
    if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
        v = -1;
    CHECK_H5(H5Aclose(a));
    return v;
}

static char *pointfile_attr(hid_t f, const char *name)
{
    if (H5Aexists(f, name) <= 0)
        return NULL;
    hid_t a = CHECK_H5ID(H5Aopen(f, name, H5P_DEFAULT));
    hid_t t = CHECK_H5ID(H5Aget_type(a));
    char *v = NULL;
    if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) == 0) {
        size_t n = H5Tget_size(t);
        v = calloc(n + 1, 1);
        hid_t mt = CHECK_H5ID(H5Tcopy(H5T_C_S1));
        CHECK_H5(H5Tset_size(mt, n + 1));
        if (v && H5Aread(a, mt, v) < 0) {
            free(v);
            v = NULL;
        }
        CHECK_H5(H5Tclose(mt));
    }
    CHECK_H5(H5Tclose(t));
    CHECK_H5(H5Aclose(a));
    return v;
}

/* Loads the sweep's spec as it was: from the texts stored in the file
 * (into a temporary directory), or from configs_dir for older files;
 * *dir_used is the catalogue directory it loaded from. */
static int pointfile_spec(hid_t file, const char *path, const char *configs_dir,
                          pointfile_tmp *t, spec *sp, const char **dir_used,
                          FILE *err)
{
    char *text = pointfile_attr(file, "spec_text");
    if (!text) {
        fprintf(err, "madsweep point: %s has no spec_text\n", path);
        return 1;
    }
    sources stored;
    int pr = provenance_read(file, &stored);
    if (pr < 0) {
        fprintf(err, "madsweep point: %s: the stored catalogues do not read "
                "(or their texts do not match their SHA-256)\n", path);
        free(text);
        return 1;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(t->dir, sizeof t->dir, "%s/madsweep-point-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(t->dir)) {
        fprintf(err, "madsweep point: cannot create a temporary directory "
                "%s: %s\n", t->dir, strerror(errno));
        t->dir[0] = '\0';
        free(text);
        if (pr == 0)
            sources_free(&stored);
        return 1;
    }
    int rc = 0;
    const char *dir = t->dir;
    *dir_used = dir;
    if (pr == 1) {
        dir = configs_dir;
        *dir_used = dir;
        fprintf(err, "madsweep point: note: %s stores no catalogues (written "
                "before provenance); using the catalogues in %s\n", path, dir);
    }
    for (int i = 0; pr == 0 && i < stored.n && rc == 0; i++)
        if (stored.f[i].name[0] != '/' &&
            pointfile_put(t, stored.f[i].name, stored.f[i].text,
                          stored.f[i].bytes) != 0) {
            fprintf(err, "madsweep point: cannot write %s/%s\n", t->dir,
                    stored.f[i].name);
            rc = 1;
        }
    char spath[LOAD_PATH_MAX];
    snprintf(spath, sizeof spath, "%s/spec.cfg", t->dir);
    if (rc == 0 && pointfile_put(t, "spec.cfg", text, (int64_t)strlen(text)) != 0) {
        fprintf(err, "madsweep point: cannot write %s\n", spath);
        rc = 1;
    }
    load_err le;
    if (rc == 0 && spec_load(spath, dir, sp, &le) != 0) {
        fprintf(err, "madsweep point: the spec stored in %s no longer loads: "
                "%s\n", path, le.text);
        rc = 1;
    }
    /* files outside the catalogue directory were read where they are:
     * they must still be what the sweep read */
    for (int i = 0; pr == 0 && rc == 0 && i < stored.n; i++) {
        const source_file *now = sources_find(&sp->files, stored.f[i].name);
        if (!now || strcmp(now->sha256, stored.f[i].sha256) != 0) {
            fprintf(err, "madsweep point: %s: catalogue %s is not the one the "
                    "sweep read (SHA-256 differs)\n", path, stored.f[i].name);
            spec_free(sp);
            rc = 1;
        }
    }
    free(text);
    if (pr == 0)
        sources_free(&stored);
    return rc;
}

/* ------------------------------------------------------------ the row */

/* Finds the row of point `id` (rows are in id order); -1 if absent. */
static int64_t pointfile_row(const frame *f, const frame_col *idc, int64_t id,
                             char *row)
{
    int64_t lo = 0, hi = f->nrows - 1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        frame_read(f, mid, 1, row);
        int64_t v = frame_int(f, idc, row);
        if (v == id)
            return mid;
        if (v < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static bool pointfile_same(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0 || a == b;
}

/* Every figure of r equals the row's; else prints the first that does
 * not and returns -1. */
static int pointfile_check(const frame *f, const char *row, const result_t *r,
                           hid_t file, const char *path, int64_t id, FILE *err)
{
    const frame_col *st = frame_find(f, "status", NULL, 0);
    if (st && frame_int(f, st, row) != r->status) {
        fprintf(err, "madsweep point: row %lld of %s has status %lld, this "
                "build computes %d (%s)\n", (long long)id, path,
                (long long)frame_int(f, st, row), r->status,
                status_name((status_code)r->status));
        return -1;
    }
    for (size_t i = 0; i < result_nfields; i++) {
        const frame_col *c = frame_find(f, result_fields[i].name, NULL, 0);
        if (!c)
            continue;
        double want = frame_num(f, c, row), got = result_get(r, &result_fields[i]);
        if (pointfile_same(want, got))
            continue;
        char *tool = pointfile_attr(file, "tool_version");
        char *commit = pointfile_attr(file, "git_commit");
        fprintf(err, "madsweep point: row %lld of %s does not reproduce with "
                "this build: %s is %.17g in the file, %.17g now (the file was "
                "written by madsweep %s, commit %s; this is %s, commit %s)\n",
                (long long)id, path, c->name, want, got, tool ? tool : "?",
                commit ? commit : "?", MADSWEEP_VERSION, provenance_commit());
        free(tool);
        free(commit);
        return -1;
    }
    return 0;
}

static void pointfile_header(FILE *out, const char *path, int64_t id,
                             const spec *sp, const space_cursor *cur,
                             const result_t *r)
{
    char strat[2 * PLAN_TEXT_MAX + 8];
    int64_t k = cur->idx[SPACE_PARALLEL] * sp->nstrats + cur->idx[SPACE_STRATEGY];
    spec_strategy_text(sp, k, strat, sizeof strat);
    fprintf(out, "# The point of row id %lld of %s (sweep \"%s\", fidelity %s):\n",
            (long long)id, path, sp->name, sp->ops->name);
    fprintf(out, "# model %s, system %s, task %s, global batch %lld,\n",
            cur->p.model.name, cur->p.cluster.name,
            sp->tasks[cur->idx[SPACE_TASK]].name,
            (long long)sp->batches[cur->idx[SPACE_BATCH]]);
    if (sp->fidelity == EVAL_DETAILED)
        fprintf(out, "# software stack %s,\n", sp->stacks[cur->idx[SPACE_STACK]].name);
    fprintf(out, "# strategy %lld: %s\n", (long long)k, strat);
    fprintf(out, "# status %s; iteration_time_s %.17g, throughput_samples_per_s "
            "%.17g.\n# `madsweep eval --json` of this file reproduces every "
            "figure of the row.\n", status_name((status_code)r->status),
            r->iteration_time_s, r->throughput_samples_per_s);
}

/* The entry `name` of the sweep's hardware.cfg (in dir), for the
 * hardware a MAD-Max system names; false when there is none. */
static bool pointfile_hw_entry(const char *dir, const char *name, hw_t *hw)
{
    char hpath[LOAD_PATH_MAX];
    snprintf(hpath, sizeof hpath, "%s/hardware.cfg", dir);
    config_t cfg;
    load_err le;
    if (load_open_catalogue(&cfg, hpath, dir, &le) != 0)
        return false;
    const config_setting_t *e = load_find(config_lookup(&cfg, "hardware"), name);
    bool ok = e && load_hw_in(e, dir, NULL, hw, &le) == 0;
    config_destroy(&cfg);
    return ok;
}

int pointfile_from_sweep(const char *path, int64_t id, const char *configs_dir,
                         FILE *out, FILE *err)
{
    return pointfile_from_sweep_as(path, id, configs_dir, false, out, err);
}

int pointfile_from_sweep_as(const char *path, int64_t id, const char *configs_dir,
                            bool engine_args, FILE *out, FILE *err)
{
    frame f;
    char msg[1200];
    if (frame_open(&f, path, msg, sizeof msg) != 0) {
        fprintf(err, "madsweep point: %s\n", msg);
        return 1;
    }
    pointfile_tmp t;
    memset(&t, 0, sizeof t);
    spec sp;
    const char *dir = configs_dir;
    int rc = pointfile_spec(f.file, path, configs_dir, &t, &sp, &dir, err);
    if (rc != 0) {
        pointfile_cleanup(&t);
        frame_close(&f);
        return rc;
    }
    space s;
    char serr[600];
    space_cursor *cur = malloc(sizeof *cur);
    char *row = malloc(f.t.size);
    const frame_col *idc = frame_find(&f, "id", NULL, 0);
    if (!cur || !row)
        check_die("out of memory", __FILE__, __LINE__);
    bool have_space = false, have_cur = false;
    if (space_init(&s, &sp, serr, sizeof serr) != 0) {
        fprintf(err, "madsweep point: %s: %s\n", path, serr);
        rc = 1;
        goto out;
    }
    have_space = true;
    /* ids are dense over the valid points: 0 .. points_valid - 1 */
    int64_t valid = pointfile_attr_i64(f.file, "points_valid");
    if (valid == 0) {
        fprintf(err, "madsweep point: %s: the sweep has no valid point (its spec "
                "gives none), so there is no point id %lld\n", path, (long long)id);
        rc = 2;
        goto out;
    }
    if (id < 0 || id >= valid) {
        fprintf(err, "madsweep point: %s: no point id %lld (ids are 0 to %lld)\n",
                path, (long long)id, (long long)(valid - 1));
        rc = 2;
        goto out;
    }
    if (!idc || pointfile_row(&f, idc, id, row) < 0) {
        bool reduced = H5Lexists(f.file, "groups", H5P_DEFAULT) > 0;
        char *keep = pointfile_attr(f.file, "keep");
        fprintf(err, "madsweep point: %s: no row with id %lld in /results%s%s%s\n",
                path, (long long)id, reduced ? " (this reduced sweep did not keep it; keep: " : "",
                reduced && keep ? keep : "", reduced ? ")" : "");
        free(keep);
        rc = 1;
        goto out;
    }
    /* the row's point from its index on every axis (no count pass: the
     * row names its model, system, stack, task, batch and candidate) */
    int64_t idx[SPACE_NAXES];
    for (int a = 0; a < SPACE_NAXES; a++) {
        char name[64];
        snprintf(name, sizeof name, "%s_idx",
                 a == SPACE_BATCH ? "batch" : space_axis_names[a]);
        const frame_col *c = frame_find(&f, name, NULL, 0);
        idx[a] = c ? frame_int(&f, c, row) : -1;
        if (idx[a] < 0 || idx[a] >= s.radix[a]) {
            fprintf(err, "madsweep point: %s: row %lld has no valid %s\n", path,
                    (long long)id, name);
            rc = 1;
            goto out;
        }
    }
    if (space_cursor_init(cur, &s) != 0)
        check_die("out of memory", __FILE__, __LINE__);
    have_cur = true;
    status_code sc = space_try(&s, cur, idx);
    if (sc != STATUS_OK) {
        fprintf(err, "madsweep point: %s: row %lld is not a point of its spec (%s, "
                "rule %s)\n", path, (long long)id, status_text(sc), status_name(sc));
        rc = 1;
        goto out;
    }
    engine e;
    engine_init(&e, false);
    result_t r;
    sc = eval_point(&cur->p, &e, &r, NULL);
    if (sc == STATUS_OK && sp.elasticities)
        elastic_eval(&cur->p, &e, &r); /* as the sweep's rows carry them (worker.c) */
    engine_free(&e);
    if (!status_is_data(sc) ||
        pointfile_check(&f, row, &r, f.file, path, id, err) != 0) {
        if (!status_is_data(sc))
            fprintf(err, "madsweep point: %s: point %lld: %s\n", path,
                    (long long)id, status_text(sc));
        rc = 1;
        goto out;
    }
    if (engine_args) {
        /* a row that is no engine's serving point: bad usage (2) */
        rc = engine_args_write(out, err, &cur->p, &r) == 0 ? 0 : 2;
        goto out;
    }
    pointfile_header(out, path, id, &sp, cur, &r);
    hw_t hw;
    bool mad_hw = cur->p.fidelity == EVAL_MADMAX && cur->p.cluster.hardware[0] &&
                  pointfile_hw_entry(dir, cur->p.cluster.hardware, &hw);
    pointfile_write(out, &cur->p, mad_hw ? &hw : NULL);
out:
    pointfile_cleanup(&t);
    if (have_cur)
        space_cursor_free(cur);
    if (have_space)
        space_free(&s);
    free(cur);
    free(row);
    spec_free(&sp);
    frame_close(&f);
    return rc;
}
