/*
 * output.c - the sweep file: layout, axis tables, attributes, row writes.
 *
 * Invariants: every rank makes the same sequence of metadata calls with
 * the same values (HDF5's rule for parallel metadata); the file is
 * flushed once its structure exists, so a run killed later leaves a file
 * that reopens (complete = 0) and whose /progress says which chunks are
 * in it; `complete` becomes 1 only after every other attribute is set.
 */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../driver/cmd.h"
#include "check.h"
#include "digest.h"

#define OUTPUT_CHUNK_ROWS 4096

/* ------------------------------------------------------------ rows */

/* Column of /results holding the index on axis a ("model_idx", ...). */
static void output_idx_name(int a, char *buf, size_t size)
{
    snprintf(buf, size, "%s_idx",
             a == SPACE_BATCH ? "batch" : space_axis_names[a]);
}

void output_rows_init(output_rows *r)
{
    memset(r, 0, sizeof *r);
    table_init(&r->t);
    r->id = table_add(&r->t, "id", TABLE_I64, 0);
    r->status = table_add(&r->t, "status", TABLE_I32, 0);
    for (int a = 0; a < SPACE_NAXES; a++) {
        char name[TABLE_NAME_MAX];
        output_idx_name(a, name, sizeof name);
        r->idx[a] = table_add(&r->t, name, TABLE_I32, 0);
    }
    r->devices = table_add(&r->t, "devices", TABLE_I64, 0);
    table_add(&r->t, "dense_plan", TABLE_STR, OUTPUT_PLAN_WIDTH);
    table_add(&r->t, "emb_plan", TABLE_STR, OUTPUT_PLAN_WIDTH);
    r->dense = table_find(&r->t, "dense_plan");
    r->emb = table_find(&r->t, "emb_plan");
    for (size_t i = 0; i < result_nfields; i++)
        r->field[i] = table_add(&r->t, result_fields[i].name,
                                result_fields[i].type == RESULT_I64 ? TABLE_I64
                                                                    : TABLE_F64,
                                0);
}

void output_plan_texts(const point_t *p, char *dense, char *emb, size_t size)
{
    if (p->fidelity == EVAL_DETAILED) {
        detailed_parallel_text(&p->task.detailed, dense, size);
        detailed_options_text(&p->task.detailed, emb, size);
    } else {
        plan_format(&p->task.dense, dense, size);
        plan_format(&p->task.emb, emb, size);
    }
}

void output_pack(const output_rows *r, char *buf, int64_t id,
                 const int64_t idx[SPACE_NAXES], const point_t *p,
                 const result_t *res, const char *dense, const char *emb)
{
    memset(buf, 0, r->t.size);
    table_put_i64(buf, r->id, id);
    table_put_i32(buf, r->status, res->status);
    for (int a = 0; a < SPACE_NAXES; a++)
        table_put_i32(buf, r->idx[a], (int32_t)idx[a]);
    table_put_i64(buf, r->devices, p->cluster.devices);
    char dplan[PLAN_TEXT_MAX], eplan[PLAN_TEXT_MAX];
    if (!dense || !emb) {
        output_plan_texts(p, dplan, eplan, sizeof dplan);
        dense = dense ? dense : dplan;
        emb = emb ? emb : eplan;
    }
    table_put_str(buf, r->dense, dense);
    table_put_str(buf, r->emb, emb);
    for (size_t i = 0; i < result_nfields; i++)
        memcpy(buf + r->field[i], (const char *)res + result_fields[i].offset, 8);
}

/* ------------------------------------------------------------ attributes */

static void output_attr_delete(hid_t loc, const char *name)
{
    htri_t e = H5Aexists(loc, name);
    CHECK_H5(e);
    if (e > 0)
        CHECK_H5(H5Adelete(loc, name));
}

static void output_attr_str(hid_t loc, const char *name, const char *v)
{
    output_attr_delete(loc, name);
    hid_t t = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(t, strlen(v) + 1));
    CHECK_H5(H5Tset_strpad(t, H5T_STR_NULLTERM));
    hid_t sp = CHECK_H5ID(H5Screate(H5S_SCALAR));
    hid_t a = CHECK_H5ID(H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, t, v));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
    CHECK_H5(H5Tclose(t));
}

static void output_attr_num(hid_t loc, const char *name, hid_t ftype,
                            hid_t mtype, const void *v)
{
    output_attr_delete(loc, name);
    hid_t sp = CHECK_H5ID(H5Screate(H5S_SCALAR));
    hid_t a = CHECK_H5ID(H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT,
                                    H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, mtype, v));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
}

static void output_attr_i64(hid_t loc, const char *name, int64_t v)
{
    output_attr_num(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

static void output_attr_f64(hid_t loc, const char *name, double v)
{
    output_attr_num(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

/* Reads a string attribute into a malloc'd buffer; NULL if absent. */
static char *output_attr_read_str(hid_t loc, const char *name)
{
    htri_t e = H5Aexists(loc, name);
    CHECK_H5(e);
    if (e == 0)
        return NULL;
    hid_t a = CHECK_H5ID(H5Aopen(loc, name, H5P_DEFAULT));
    hid_t ft = CHECK_H5ID(H5Aget_type(a));
    if (H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) != 0) {
        CHECK_H5(H5Tclose(ft));
        CHECK_H5(H5Aclose(a));
        return NULL;
    }
    size_t n = H5Tget_size(ft);
    char *buf = calloc(n + 1, 1);
    if (!buf)
        check_die("out of memory", __FILE__, __LINE__);
    hid_t mt = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(mt, n + 1));
    CHECK_H5(H5Aread(a, mt, buf));
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Aclose(a));
    return buf;
}

static int output_attr_read_i64(hid_t loc, const char *name, int64_t *v)
{
    htri_t e = H5Aexists(loc, name);
    CHECK_H5(e);
    if (e == 0)
        return -1;
    hid_t a = CHECK_H5ID(H5Aopen(loc, name, H5P_DEFAULT));
    hid_t t = CHECK_H5ID(H5Aget_type(a));
    int ok = H5Tget_class(t) == H5T_INTEGER &&
             H5Aread(a, H5T_NATIVE_INT64, v) >= 0; /* a damaged one fails */
    CHECK_H5(H5Tclose(t));
    CHECK_H5(H5Aclose(a));
    return ok ? 0 : -1;
}

void output_set_meta(output *o, const output_meta *m)
{
    hid_t f = o->file;
    output_attr_i64(f, "complete", 0);
    output_attr_str(f, "spec_text", m->spec_text);
    output_attr_str(f, "spec_path", m->spec_path);
    output_attr_str(f, "tool_version", MADSWEEP_VERSION);
    output_attr_str(f, "cost_model_version", m->cost_version);
    output_attr_str(f, "fidelity", m->fidelity);
    output_attr_str(f, "start_time", m->start_time);
    output_attr_str(f, "end_time", m->end_time);
    output_attr_i64(f, "ranks", m->ranks);
    output_attr_i64(f, "points_total", m->total);
    output_attr_i64(f, "points_valid", m->valid);
    output_attr_i64(f, "points_invalid", m->invalid);
    output_attr_i64(f, "points_evaluated", m->evaluated);
    output_attr_i64(f, "chunk_ids", m->chunk);
    output_attr_i64(f, "chunks", m->nchunks);
    output_attr_f64(f, "elapsed_s", m->elapsed_s);
    output_attr_f64(f, "evals_per_s", m->evals_per_s);
    CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    if (m->complete) {
        output_attr_i64(f, "complete", 1);
        CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    }
}

/* ------------------------------------------------------------ units */

/* Units of the numeric columns of every table that are not figures of
 * result_fields[] (those carry their own unit). Strings are "text", the
 * *_idx columns of /results name the axis table they index. A numeric
 * column missing here stops the run (check_die): every column of the
 * file has a unit. */
static const struct output_unit {
    const char *col, *unit;
} output_units[] = {
    {"id", "point id"},
    {"status", "status code (/axes/status)"},
    {"code", "status code (/axes/status)"},
    {"count", "points"},
    {"devices", "devices"},
    {"nodes", "nodes"},
    {"devices_per_node", "devices/node"},
    {"pod_devices", "devices"},
    {"pod_oversubscription", "1"},
    {"dense_params", "parameters"},
    {"emb_params", "parameters"},
    {"params", "parameters"},
    {"total_flops", "FLOP/sample (forward)"},
    {"flops_per_sequence", "FLOP/sequence"},
    {"bytes_per_dense_param", "bytes/parameter"},
    {"layers", "1"},
    {"hidden", "1"},
    {"heads", "1"},
    {"kv_heads", "1"},
    {"ffn", "1"},
    {"vocab", "1"},
    {"experts", "1"},
    {"top_k", "1"},
    {"seq_len", "tokens"},
    {"peak_fp16_flops", "FLOP/s per device"},
    {"peak_bf16_flops", "FLOP/s per device"},
    {"peak_fp8_flops", "FLOP/s per device"},
    {"mem_capacity_bytes", "bytes per device"},
    {"mem_bw_bytes_per_s", "bytes/s per device"},
    {"nic_bidir_bytes_per_s", "bytes/s per port, both directions"},
    {"nic_bytes_per_s", "bytes/s per device"},
    {"scaleup_bytes_per_s", "bytes/s per device"},
    {"eff_intra_bw", "bytes/s per device, one direction"},
    {"eff_inter_bw", "bytes/s per device, one direction"},
    {"freeze_emb", "bool"},
    {"freeze_dense", "bool"},
    {"freeze_top_mlp", "bool"},
    {"freeze_bot_mlp", "bool"},
    {"min_frozen_layer", "layer index"},
    {"frozen_layers", "layers"},
    {"prompt_tokens", "tokens"},
    {"decode_tokens", "tokens"},
    {"tp", "1"},
    {"pp", "1"},
    {"cp", "1"},
    {"ep", "1"},
    {"vpp", "1"},
    {"zero_stage", "1"},
    {"micro_batch", "samples"},
    {"sequence_parallel", "bool"},
    {"recompute", "enum (0 none, 1 selective, 2 full)"},
    {"applies", "bool"},
};

static const char *const output_axis_units[SPACE_NAXES] = {
    "index into /axes/model", "index into /axes/system",
    "index into /axes/task", "index into /axes/global_batch",
    "index into /axes/strategy"};

static const char *output_unit(const table_col *c)
{
    if (c->kind == TABLE_STR)
        return "text";
    for (int a = 0; a < SPACE_NAXES; a++) {
        char idx[TABLE_NAME_MAX];
        output_idx_name(a, idx, sizeof idx);
        if (strcmp(c->name, idx) == 0)
            return output_axis_units[a];
    }
    const result_field *f = result_find(c->name);
    if (f)
        return f->unit;
    for (size_t i = 0; i < sizeof output_units / sizeof output_units[0]; i++)
        if (strcmp(output_units[i].col, c->name) == 0)
            return output_units[i].unit;
    check_die("internal error: a column of the sweep file has no unit",
              __FILE__, __LINE__);
}

/* Attribute `units` of dataset d: one string per member of its compound
 * type, in member order (h5py: dict(zip(d.dtype.names, d.attrs['units']))). */
static void output_attr_units(hid_t d, const table *t)
{
    enum { W = 48 };
    char *u = calloc((size_t)t->ncols, W);
    if (!u)
        check_die("out of memory", __FILE__, __LINE__);
    for (int i = 0; i < t->ncols; i++)
        snprintf(u + (size_t)i * W, W, "%s", output_unit(&t->col[i]));
    hsize_t dims[1] = {(hsize_t)t->ncols};
    hid_t st = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(st, W));
    CHECK_H5(H5Tset_strpad(st, H5T_STR_NULLTERM));
    hid_t sp = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t a = CHECK_H5ID(H5Acreate2(d, "units", st, sp, H5P_DEFAULT,
                                    H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, st, u));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
    CHECK_H5(H5Tclose(st));
    free(u);
}

/* ------------------------------------------------------------ tables */

/* Writes a small dataset from rank 0 (the others join with nothing). */
static void output_table(hid_t loc, const char *name, const table *t,
                         int64_t n, const void *rows, int rank)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t ft = table_ftype(t), mt = table_mtype(t);
    hid_t d = CHECK_H5ID(H5Dcreate2(loc, name, ft, fs, H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT));
    output_attr_units(d, t);
    uint64_t dg = digest_bytes(rows, (size_t)n * t->size);
    output_attr_num(d, "digest", H5T_STD_U64LE, H5T_NATIVE_UINT64, &dg);
    hid_t ms = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    if (rank != 0) {
        CHECK_H5(H5Sselect_none(fs));
        CHECK_H5(H5Sselect_none(ms));
    }
    hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
    CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    if (n > 0)
        CHECK_H5(H5Dwrite(d, mt, ms, fs, x, rows));
    CHECK_H5(H5Pclose(x));
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Dclose(d));
    CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Sclose(fs));
}

static char *output_rows_alloc(int64_t n, size_t size)
{
    char *b = calloc((size_t)(n > 0 ? n : 1), size);
    if (!b)
        check_die("out of memory", __FILE__, __LINE__);
    return b;
}

/* Model and system tables of the madmax fidelity. */
static void output_axes_madmax(hid_t g, const spec *sp, int rank)
{
    table t;
    char *b;
    const table_col *c_name = NULL, *c_kind = NULL;

    /* models */
    table_init(&t);
    table_add(&t, "name", TABLE_STR, MODEL_NAME_MAX);
    table_add(&t, "type", TABLE_STR, 8);
    size_t o_dp = table_add(&t, "dense_params", TABLE_F64, 0);
    size_t o_ep = table_add(&t, "emb_params", TABLE_F64, 0);
    size_t o_fl = table_add(&t, "total_flops", TABLE_F64, 0);
    size_t o_bp = table_add(&t, "bytes_per_dense_param", TABLE_I64, 0);
    c_name = table_find(&t, "name");
    c_kind = table_find(&t, "type");
    b = output_rows_alloc(sp->nmodels, t.size);
    for (int64_t i = 0; i < sp->nmodels; i++) {
        char *row = b + (size_t)i * t.size;
        const model_t *m = &sp->models[i];
        table_put_str(row, c_name, m->name);
        table_put_str(row, c_kind, model_kind_name(m->kind));
        table_put_f64(row, o_dp, m->dense_params);
        table_put_f64(row, o_ep, m->emb_params);
        table_put_f64(row, o_fl, m->total_flops);
        table_put_i64(row, o_bp, m->bytes_per_dense_param);
    }
    output_table(g, "model", &t, sp->nmodels, b, rank);
    free(b);

    /* systems */
    table_init(&t);
    table_add(&t, "name", TABLE_STR, CLUSTER_NAME_MAX);
    size_t o_dev = table_add(&t, "devices", TABLE_I64, 0);
    size_t o_nod = table_add(&t, "nodes", TABLE_I64, 0);
    size_t o_dpn = table_add(&t, "devices_per_node", TABLE_I64, 0);
    size_t o_f16 = table_add(&t, "peak_fp16_flops", TABLE_F64, 0);
    size_t o_mem = table_add(&t, "mem_capacity_bytes", TABLE_F64, 0);
    size_t o_nic = table_add(&t, "nic_bidir_bytes_per_s", TABLE_F64, 0);
    size_t o_ib = table_add(&t, "eff_intra_bw", TABLE_F64, 0);
    size_t o_eb = table_add(&t, "eff_inter_bw", TABLE_F64, 0);
    c_name = table_find(&t, "name");
    b = output_rows_alloc(sp->nsystems, t.size);
    for (int64_t i = 0; i < sp->nsystems; i++) {
        char *row = b + (size_t)i * t.size;
        const cluster_t *c = &sp->systems[i];
        table_put_str(row, c_name, c->name);
        table_put_i64(row, o_dev, c->devices);
        table_put_i64(row, o_nod, c->nodes);
        table_put_i64(row, o_dpn, c->devices_per_node);
        table_put_f64(row, o_f16, c->peak_fp16_flops);
        table_put_f64(row, o_mem, c->mem_capacity_bytes);
        table_put_f64(row, o_nic, c->nic_bidir_bytes_per_s);
        table_put_f64(row, o_ib, c->eff_intra_bw);
        table_put_f64(row, o_eb, c->eff_inter_bw);
    }
    output_table(g, "system", &t, sp->nsystems, b, rank);
    free(b);

}

/* Model and system tables of the detailed fidelity. */
static void output_axes_detailed(hid_t g, const spec *sp, int rank)
{
    table t;
    char *b;

    /* models */
    table_init(&t);
    table_add(&t, "name", TABLE_STR, MODEL_NAME_MAX);
    table_add(&t, "type", TABLE_STR, 8);
    size_t o_par = table_add(&t, "params", TABLE_F64, 0);
    size_t o_fl = table_add(&t, "flops_per_sequence", TABLE_F64, 0);
    size_t o_l = table_add(&t, "layers", TABLE_I64, 0);
    size_t o_h = table_add(&t, "hidden", TABLE_I64, 0);
    size_t o_a = table_add(&t, "heads", TABLE_I64, 0);
    size_t o_kv = table_add(&t, "kv_heads", TABLE_I64, 0);
    size_t o_ff = table_add(&t, "ffn", TABLE_I64, 0);
    size_t o_sq = table_add(&t, "seq_len", TABLE_I64, 0);
    size_t o_v = table_add(&t, "vocab", TABLE_I64, 0);
    size_t o_ex = table_add(&t, "experts", TABLE_I64, 0);
    size_t o_tk = table_add(&t, "top_k", TABLE_I64, 0);
    const table_col *c_name = table_find(&t, "name"), *c_kind = table_find(&t, "type");
    b = output_rows_alloc(sp->nmodels, t.size);
    for (int64_t i = 0; i < sp->nmodels; i++) {
        char *row = b + (size_t)i * t.size;
        const model_t *m = &sp->models[i];
        task_detailed_t one;
        memset(&one, 0, sizeof one);
        double total = 0, per_dev = 0;
        detailed_params(m, &one, &total, &per_dev);
        table_put_str(row, c_name, m->name);
        table_put_str(row, c_kind, model_kind_name(m->kind));
        table_put_f64(row, o_par, total);
        table_put_f64(row, o_fl, detailed_model_flops(m, true));
        table_put_i64(row, o_l, m->layers);
        table_put_i64(row, o_h, m->hidden);
        table_put_i64(row, o_a, m->heads);
        table_put_i64(row, o_kv, m->kv_heads > 0 ? m->kv_heads : m->heads);
        table_put_i64(row, o_ff, m->ffn);
        table_put_i64(row, o_sq, m->seq_len);
        table_put_i64(row, o_v, m->vocab);
        table_put_i64(row, o_ex, m->d.experts);
        table_put_i64(row, o_tk, m->d.experts > 0 ? (m->d.top_k > 0 ? m->d.top_k : 2) : 0);
    }
    output_table(g, "model", &t, sp->nmodels, b, rank);
    free(b);

    /* systems: generation, sizes and the figures of its topology */
    table_init(&t);
    table_add(&t, "name", TABLE_STR, HW_NAME_MAX);
    table_add(&t, "hardware", TABLE_STR, HW_NAME_MAX);
    size_t o_dev = table_add(&t, "devices", TABLE_I64, 0);
    size_t o_nod = table_add(&t, "nodes", TABLE_I64, 0);
    size_t o_dpn = table_add(&t, "devices_per_node", TABLE_I64, 0);
    size_t o_pod = table_add(&t, "pod_devices", TABLE_I64, 0);
    size_t o_ovs = table_add(&t, "pod_oversubscription", TABLE_F64, 0);
    size_t o_bf = table_add(&t, "peak_bf16_flops", TABLE_F64, 0);
    size_t o_f8 = table_add(&t, "peak_fp8_flops", TABLE_F64, 0);
    size_t o_mem = table_add(&t, "mem_capacity_bytes", TABLE_F64, 0);
    size_t o_mbw = table_add(&t, "mem_bw_bytes_per_s", TABLE_F64, 0);
    size_t o_sub = table_add(&t, "scaleup_bytes_per_s", TABLE_F64, 0);
    size_t o_nic = table_add(&t, "nic_bytes_per_s", TABLE_F64, 0);
    c_name = table_find(&t, "name");
    const table_col *c_hw = table_find(&t, "hardware");
    b = output_rows_alloc(sp->nsystems, t.size);
    for (int64_t i = 0; i < sp->nsystems; i++) {
        char *row = b + (size_t)i * t.size;
        const topo_system_t *y = &sp->dsystems[i];
        const cluster_t *c = &sp->systems[i];
        table_put_str(row, c_name, y->name);
        table_put_str(row, c_hw, y->hw.name);
        table_put_i64(row, o_dev, y->devices);
        table_put_i64(row, o_nod, c->nodes);
        table_put_i64(row, o_dpn, c->devices_per_node);
        table_put_i64(row, o_pod, y->pod_devices);
        table_put_f64(row, o_ovs, y->pod_oversubscription > 0 ? y->pod_oversubscription : 1.0);
        table_put_f64(row, o_bf, y->hw.peak_flops[HW_BF16]);
        table_put_f64(row, o_f8, y->hw.peak_flops[HW_FP8]);
        table_put_f64(row, o_mem, y->hw.mem_capacity_bytes);
        table_put_f64(row, o_mbw, y->hw.mem_bw_bytes_per_s);
        table_put_f64(row, o_sub, y->hw.scaleup_bytes_per_s);
        table_put_f64(row, o_nic, y->nic_gbps_per_device > 0
                                      ? y->nic_gbps_per_device * 1e9 / 8.0
                                      : y->hw.nic_bytes_per_s);
    }
    output_table(g, "system", &t, sp->nsystems, b, rank);
    free(b);
}

static void output_axes(hid_t file, const space *s, const int64_t *by_code,
                        int rank)
{
    const spec *sp = s->sp;
    hid_t g = CHECK_H5ID(H5Gcreate2(file, "axes", H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT));
    table t;
    char *b;

    if (sp->fidelity == EVAL_DETAILED)
        output_axes_detailed(g, sp, rank);
    else
        output_axes_madmax(g, sp, rank);

    /* tasks */
    table_init(&t);
    table_add(&t, "name", TABLE_STR, SPEC_NAME_MAX);
    table_add(&t, "type", TABLE_STR, 16);
    size_t o_fe = table_add(&t, "freeze_emb", TABLE_I32, 0);
    size_t o_fd = table_add(&t, "freeze_dense", TABLE_I32, 0);
    size_t o_ft = table_add(&t, "freeze_top_mlp", TABLE_I32, 0);
    size_t o_fb = table_add(&t, "freeze_bot_mlp", TABLE_I32, 0);
    size_t o_mf = table_add(&t, "min_frozen_layer", TABLE_I64, 0);
    bool det = sp->fidelity == EVAL_DETAILED;
    size_t o_pt = 0, o_dt = 0, o_fl = 0;
    if (det) {
        table_add(&t, "precision", TABLE_STR, 8);
        o_pt = table_add(&t, "prompt_tokens", TABLE_I64, 0);
        o_dt = table_add(&t, "decode_tokens", TABLE_I64, 0);
        o_fl = table_add(&t, "frozen_layers", TABLE_I64, 0);
    }
    const table_col *c_name = table_find(&t, "name"),
                    *c_kind = table_find(&t, "type"),
                    *c_prec = table_find(&t, "precision");
    b = output_rows_alloc(sp->ntasks, t.size);
    for (int64_t i = 0; i < sp->ntasks; i++) {
        char *row = b + (size_t)i * t.size;
        const spec_task *k = &sp->tasks[i];
        table_put_str(row, c_name, k->name);
        table_put_str(row, c_kind, task_kind_name(k->kind));
        table_put_i32(row, o_fe, k->freeze_emb);
        table_put_i32(row, o_fd, k->freeze_dense);
        table_put_i32(row, o_ft, k->freeze_top_mlp);
        table_put_i32(row, o_fb, k->freeze_bot_mlp);
        table_put_i64(row, o_mf, k->min_frozen_layer);
        if (det) {
            table_put_str(row, c_prec, hw_dtype_name((hw_dtype)k->dtype));
            table_put_i64(row, o_pt, k->prompt_tokens);
            table_put_i64(row, o_dt, k->kind == TASK_INFERENCE ? k->decode_tokens : 0);
            table_put_i64(row, o_fl, k->frozen_layers);
        }
    }
    output_table(g, "task", &t, sp->ntasks, b, rank);
    free(b);

    /* global batches */
    table_init(&t);
    size_t o_gb = table_add(&t, "global_batch", TABLE_I64, 0);
    b = output_rows_alloc(sp->nbatches, t.size);
    for (int64_t i = 0; i < sp->nbatches; i++)
        table_put_i64(b + (size_t)i * t.size, o_gb, sp->batches[i]);
    output_table(g, "global_batch", &t, sp->nbatches, b, rank);
    free(b);

    /* strategies: madmax templates, or each detailed auto candidate's
     * texts and degrees (dp 0: the rest of the devices; `applies` 0 when
     * the candidate is refused on every system) */
    table_init(&t);
    table_add(&t, det ? "parallel" : "dense", TABLE_STR, PLAN_TEXT_MAX);
    table_add(&t, det ? "options" : "embedding", TABLE_STR, PLAN_TEXT_MAX);
    table_add(&t, "text", TABLE_STR, 2 * PLAN_TEXT_MAX + 4);
    enum { S_TP, S_PP, S_CP, S_EP, S_VPP, S_ZERO, S_MB, S_SP, S_RC, S_APPLIES, S_N };
    static const char *const s_names[S_N] = {
        "tp", "pp", "cp", "ep", "vpp", "zero_stage", "micro_batch",
        "sequence_parallel", "recompute", "applies"};
    size_t o_s[S_N];
    if (det)
        for (int k = 0; k < S_N; k++)
            o_s[k] = table_add(&t, s_names[k], TABLE_I32, 0);
    const table_col *c_d = &t.col[0], *c_e = &t.col[1], *c_t = table_find(&t, "text");
    b = output_rows_alloc(sp->nstrats, t.size);
    for (int64_t i = 0; i < sp->nstrats; i++) {
        char *row = b + (size_t)i * t.size;
        autoplan_pair pair;
        const autoplan_pair *pp = NULL;
        if (!sp->strat_auto)
            pp = &sp->strats[i];
        else if (autoplan_candidate(sp->ops, i, &pair) == 0)
            pp = &pair;
        char d[PLAN_TEXT_MAX] = "", e[PLAN_TEXT_MAX] = "",
             text[2 * PLAN_TEXT_MAX + 4];
        task_detailed_t dc;
        int applies = det ? detailed_auto_candidate(i, &dc) : -1;
        if (det && applies >= 0) {
            detailed_parallel_text(&dc, d, sizeof d);
            detailed_options_text(&dc, e, sizeof e);
            int64_t v[S_N] = {dc.tp, dc.pp, dc.cp, dc.ep, dc.vpp, dc.zero_stage,
                              dc.micro_batch, dc.sequence_parallel,
                              (int64_t)dc.recompute, applies == 0};
            for (int k = 0; k < S_N; k++)
                table_put_i32(row, o_s[k], (int32_t)v[k]);
        } else if (pp) {
            autoplan_format(&pp->dense, d, sizeof d);
            autoplan_format(&pp->emb, e, sizeof e);
        }
        spec_strategy_text(sp, i, text, sizeof text);
        table_put_str(row, c_d, d);
        table_put_str(row, c_e, e);
        table_put_str(row, c_t, text);
    }
    output_table(g, "strategy", &t, sp->nstrats, b, rank);
    free(b);

    /* status codes */
    table_init(&t);
    size_t o_code = table_add(&t, "code", TABLE_I32, 0);
    table_add(&t, "name", TABLE_STR, 32);
    table_add(&t, "text", TABLE_STR, 128);
    c_name = table_find(&t, "name");
    const table_col *c_text = table_find(&t, "text");
    b = output_rows_alloc(256, t.size);
    int64_t n = 0;
    for (int code = 0; code < 256; code++) {
        if (strcmp(status_name((status_code)code), "unknown") == 0)
            continue;
        char *row = b + (size_t)n++ * t.size;
        table_put_i32(row, o_code, code);
        table_put_str(row, c_name, status_name((status_code)code));
        table_put_str(row, c_text, status_text((status_code)code));
    }
    output_table(g, "status", &t, n, b, rank);
    free(b);
    CHECK_H5(H5Gclose(g));

    /* skipped ids per invalid code */
    table_init(&t);
    o_code = table_add(&t, "code", TABLE_I32, 0);
    table_add(&t, "name", TABLE_STR, 32);
    size_t o_cnt = table_add(&t, "count", TABLE_I64, 0);
    c_name = table_find(&t, "name");
    b = output_rows_alloc(SPACE_NCODES, t.size);
    n = 0;
    for (int k = 0; k < SPACE_NCODES; k++) {
        if (by_code[k] == 0)
            continue;
        char *row = b + (size_t)n++ * t.size;
        status_code code = (status_code)(STATUS_INVALID_VALUE + k);
        table_put_i32(row, o_code, (int32_t)code);
        table_put_str(row, c_name, status_name(code));
        table_put_i64(row, o_cnt, by_code[k]);
    }
    output_table(file, "skipped", &t, n, b, rank);
    free(b);
}

/* ------------------------------------------------------------ file */

static hid_t output_fapl(MPI_Comm comm)
{
    hid_t fapl = CHECK_H5ID(H5Pcreate(H5P_FILE_ACCESS));
    CHECK_H5(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
    /* the 1.10 file format: superblock, object headers and chunk index
     * carry checksums, so damaged metadata fails to open or read */
    CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110));
    return fapl;
}

static int output_agree(MPI_Comm comm, int bad)
{
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    return any;
}

int output_create(output *o, MPI_Comm comm, const char *path,
                  const output_meta *m, char *msg, size_t msize)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    CHECK_MPI(MPI_Comm_rank(comm, &o->rank));
    hid_t fapl = output_fapl(comm);
    o->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK_H5(H5Pclose(fapl));
    if (output_agree(comm, o->file < 0)) {
        snprintf(msg, msize, "cannot create %s (check the directory exists "
                 "and is writable)", path);
        if (o->file >= 0)
            H5Fclose(o->file);
        memset(o, 0, sizeof *o);
        return -1;
    }
    output_set_meta(o, m);
    return 0;
}

/* A dataset of one element per work chunk, allocated now, unfilled. */
static hid_t output_per_chunk(hid_t file, const char *name, hid_t type,
                              int64_t nchunks)
{
    hsize_t dims[1] = {(hsize_t)nchunks};
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t dcpl = CHECK_H5ID(H5Pcreate(H5P_DATASET_CREATE));
    CHECK_H5(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    CHECK_H5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    hid_t d = CHECK_H5ID(H5Dcreate2(file, name, type, fs, H5P_DEFAULT, dcpl,
                                    H5P_DEFAULT));
    CHECK_H5(H5Pclose(dcpl));
    CHECK_H5(H5Sclose(fs));
    return d;
}

void output_layout(output *o, const space *s, const output_rows *r,
                   const int64_t *by_code, const output_meta *m)
{
    /* /results: exact length, chunked, allocated now, never filled */
    hsize_t dims[1] = {(hsize_t)m->valid};
    /* a small file gets one chunk of its own size, not 4096 rows */
    hsize_t cdims[1] = {m->valid < OUTPUT_CHUNK_ROWS
                            ? (hsize_t)(m->valid > 0 ? m->valid : 1)
                            : OUTPUT_CHUNK_ROWS};
    hsize_t maxdims[1] = {H5S_UNLIMITED}; /* lets chunks exceed tiny sizes */
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, maxdims));
    hid_t dcpl = CHECK_H5ID(H5Pcreate(H5P_DATASET_CREATE));
    CHECK_H5(H5Pset_chunk(dcpl, 1, cdims));
    CHECK_H5(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    CHECK_H5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    hid_t ft = table_ftype(&r->t);
    o->mtype = table_mtype(&r->t);
    o->results = CHECK_H5ID(H5Dcreate2(o->file, "results", ft, fs, H5P_DEFAULT,
                                       dcpl, H5P_DEFAULT));
    output_attr_units(o->results, &r->t);
    CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Pclose(dcpl));
    CHECK_H5(H5Sclose(fs));

    /* /progress: zeros written by rank 0; /digests: set with each chunk */
    o->progress = output_per_chunk(o->file, "progress", H5T_STD_U8LE, m->nchunks);
    o->digests = output_per_chunk(o->file, "digests", H5T_STD_U64LE, m->nchunks);
    dims[0] = (hsize_t)m->nchunks;
    fs = CHECK_H5ID(H5Dget_space(o->progress));
    uint8_t *zeros = calloc((size_t)m->nchunks + 1, 1);
    if (!zeros)
        check_die("out of memory", __FILE__, __LINE__);
    hid_t ms = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    if (o->rank != 0) {
        CHECK_H5(H5Sselect_none(fs));
        CHECK_H5(H5Sselect_none(ms));
    }
    hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
    CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    CHECK_H5(H5Dwrite(o->progress, H5T_NATIVE_UINT8, ms, fs, x, zeros));
    CHECK_H5(H5Pclose(x));
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Sclose(fs));
    free(zeros);

    output_axes(o->file, s, by_code, o->rank);
    output_set_meta(o, m);
}

int output_open(output *o, MPI_Comm comm, const char *path,
                const output_meta *m, int *has_layout, char *msg, size_t msize)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    *has_layout = 0;
    CHECK_MPI(MPI_Comm_rank(comm, &o->rank));
    hid_t fapl = output_fapl(comm);
    o->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    CHECK_H5(H5Pclose(fapl));
    if (output_agree(comm, o->file < 0)) {
        snprintf(msg, msize, "cannot resume: %s does not open as an HDF5 "
                 "file of this format (truncated, corrupted, or not a sweep "
                 "file; run again without --resume)", path);
        if (o->file >= 0)
            H5Fclose(o->file);
        memset(o, 0, sizeof *o);
        return -1;
    }
    /* the first difference found names the reason (same on every rank:
     * every rank reads the same file) */
    const char *why = NULL;
    char *text = output_attr_read_str(o->file, "spec_text");
    char *tool = output_attr_read_str(o->file, "tool_version");
    char *cost = output_attr_read_str(o->file, "cost_model_version");
    int64_t complete = -1, valid = -2;
    static const char *const sets[3] = {"results", "progress", "digests"};
    int n = 0, broken = 0;
    for (int i = 0; i < 3; i++) {
        htri_t e = H5Lexists(o->file, sets[i], H5P_DEFAULT);
        n += e > 0;
        broken |= e < 0; /* the root group does not read */
    }
    if (!text || output_attr_read_i64(o->file, "complete", &complete) != 0)
        why = "it is not a madsweep sweep file";
    else if (broken)
        why = "its root group is damaged";
    else if (n == 0 && (output_attr_read_i64(o->file, "points_valid", &valid) != 0 ||
                        valid != -1))
        why = "it has no datasets although its check pass ended (damaged)";
    else if (strcmp(text, m->spec_text) != 0)
        why = "its spec_text differs from this spec";
    else if (!tool || strcmp(tool, MADSWEEP_VERSION) != 0 || !cost ||
             strcmp(cost, m->cost_version) != 0)
        why = "it was written by another tool or cost-model version "
              "(its rows would mix two models)";
    else if (n != 0 && n != 3)
        why = "its datasets are incomplete (/results, /progress or /digests "
              "is missing: an older madsweep without checksums, or damaged)";
    free(text);
    free(tool);
    free(cost);
    if (output_agree(comm, why != NULL)) {
        snprintf(msg, msize, "cannot resume: %s: %s; run without --resume "
                 "to start it over", path, why ? why : "another rank "
                 "read it differently");
        CHECK_H5(H5Fclose(o->file));
        memset(o, 0, sizeof *o);
        return -1;
    }
    *has_layout = n == 3;
    return 0;
}

int output_resume(output *o, MPI_Comm comm, const char *path,
                  const output_rows *r, const output_meta *m, uint8_t *done,
                  int64_t *complete, char *msg, size_t msize)
{
    const char *why = NULL;
    int64_t total = -1, chunk = -1, valid = -1;
    output_attr_read_i64(o->file, "points_total", &total);
    output_attr_read_i64(o->file, "chunk_ids", &chunk);
    output_attr_read_i64(o->file, "points_valid", &valid);
    if (output_attr_read_i64(o->file, "complete", complete) != 0)
        why = "its attribute 'complete' is unreadable (damaged)";
    else if (total != m->total || chunk != m->chunk || valid != m->valid)
        why = "its space differs (the catalogues or the configs directory "
              "changed)";
    hid_t d[3] = {-1, -1, -1};
    static const char *const names[3] = {"results", "progress", "digests"};
    for (int i = 0; i < 3 && !why; i++)
        if ((d[i] = H5Dopen2(o->file, names[i], H5P_DEFAULT)) < 0)
            why = "a dataset does not open (damaged)";
    if (!why) {
        hid_t ft = H5Dget_type(d[0]);
        hid_t mt = table_ftype(&r->t);
        if (ft < 0 || H5Tequal(ft, mt) <= 0)
            why = "it was written by another version (row layout differs)";
        if (ft >= 0)
            H5Tclose(ft);
        CHECK_H5(H5Tclose(mt));
    }
    if (!why && m->nchunks > 0) {
        hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
        CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
        if (H5Dread(d[1], H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, x, done) < 0)
            why = "its /progress does not read (damaged)";
        CHECK_H5(H5Pclose(x));
    }
    if (output_agree(comm, why != NULL)) {
        snprintf(msg, msize, "cannot resume: %s: %s; run without --resume "
                 "to start it over", path, why ? why : "another rank "
                 "read it differently");
        for (int i = 0; i < 3; i++)
            if (d[i] >= 0)
                H5Dclose(d[i]);
        return -1;
    }
    o->results = d[0];
    o->progress = d[1];
    o->digests = d[2];
    o->mtype = table_mtype(&r->t);
    return 0;
}

/* A failed write (a full file system, a quota, a failing disk) is a
 * message naming the file, what was written and, when the file system
 * says so, that it is full; then every rank is aborted (check.h). */
static void output_write(const output *o, hid_t d, hid_t mtype, int64_t at,
                         int64_t n, const void *buf, const char *what)
{
    hsize_t start[1] = {(hsize_t)at}, count[1] = {(hsize_t)n};
    hid_t fs = CHECK_H5ID(H5Dget_space(d));
    CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    hid_t ms = CHECK_H5ID(H5Screate_simple(1, count, NULL));
    if (H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, buf) < 0) {
        char text[600];
        snprintf(text, sizeof text, "%s %lld-%lld", what, (long long)at,
                 (long long)(at + n - 1));
        check_write_die(o->path, o->rank, text, __FILE__, __LINE__);
    }
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Sclose(fs));
}

void output_write_rows(output *o, int64_t row0, int64_t n, const void *buf)
{
    if (n > 0)
        output_write(o, o->results, o->mtype, row0, n, buf, "rows");
}

void output_mark_done(output *o, int64_t chunk, uint64_t digest)
{
    const uint8_t one = 1;
    output_write(o, o->digests, H5T_NATIVE_UINT64, chunk, 1, &digest,
                 "the digest of chunk");
    output_write(o, o->progress, H5T_NATIVE_UINT8, chunk, 1, &one,
                 "the progress byte of chunk");
}

void output_close(output *o)
{
    if (o->mtype > 0)
        CHECK_H5(H5Tclose(o->mtype));
    if (o->results > 0)
        CHECK_H5(H5Dclose(o->results));
    if (o->progress > 0)
        CHECK_H5(H5Dclose(o->progress));
    if (o->digests > 0)
        CHECK_H5(H5Dclose(o->digests));
    if (o->file > 0)
        CHECK_H5(H5Fclose(o->file));
    memset(o, 0, sizeof *o);
}
