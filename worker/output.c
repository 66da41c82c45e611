/*
 * output.c - the sweep file: layout, axis tables, attributes, row writes.
 *
 * Invariants: every rank makes the same sequence of metadata calls with
 * the same values (HDF5's rule for parallel metadata; a table's digest is
 * rank 0's, broadcast); the file is flushed once its structure exists, so
 * a run killed later leaves a file that reopens (complete = 0) and whose
 * /progress says which chunks are in it; a chunk's rows and digest are
 * written before its progress byte; `complete` becomes 1 only after
 * every other attribute is set. A failed write of rows or per-chunk data
 * says which and where (check_write_die), never a bare HDF5 stack.
 */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/bound.h"
#include "../cost/detailed.h"
#include "version.h"
#include "attr.h"
#include "check.h"
#include "claim.h"
#include "digest.h"

#define OUTPUT_CHUNK_ROWS 4096
#define OUTPUT_DEFLATE_ROWS 1024

/* ------------------------------------------------------------ rows */

/* Column of /results holding the index on axis a ("model_idx", ...). */
static void output_idx_name(int a, char *buf, size_t size)
{
    snprintf(buf, size, "%s_idx",
             a == SPACE_BATCH ? "batch" : space_axis_names[a]);
}

/* Integer strategy columns of detailed rows, in column order. */
static const char *const output_strat_int[OUTPUT_NSTRAT_INT] = {
    "tp", "pp", "dp", "cp", "ep", "vpp", "zero_stage", "micro_batch", "sp"};

/* Text strategy columns of detailed rows and their widths (the longest
 * value, "1f1b-interleaved", "selective", "tp-cp-dp-pp", "dp+tp",
 * "column", plus the NUL). */
static const char *const output_strat_str[OUTPUT_NSTRAT_STR] = {
    "schedule", "recompute", "layout", "overlap", "emb_sharding"};
static const size_t output_strat_width[OUTPUT_NSTRAT_STR] = {17, 10, 12, 6, 7};

void output_rows_init(output_rows *r, eval_fidelity fidelity)
{
    memset(r, 0, sizeof *r);
    r->fidelity = fidelity;
    table_init(&r->t);
    r->id = table_add(&r->t, "id", TABLE_I64, 0);
    r->status = table_add(&r->t, "status", TABLE_I32, 0);
    for (int a = 0; a < SPACE_NAXES; a++) {
        char name[TABLE_NAME_MAX];
        output_idx_name(a, name, sizeof name);
        r->idx[a] = table_add(&r->t, name, TABLE_I32, 0);
    }
    r->devices = table_add(&r->t, "devices", TABLE_I64, 0);
    if (fidelity == EVAL_DETAILED) {
        /* the strategy as named columns, then the software stack the
         * point ran on (the stack axis' name: rows are self-describing) */
        for (int k = 0; k < OUTPUT_NSTRAT_INT; k++)
            r->strat_int[k] = table_add(&r->t, output_strat_int[k], TABLE_I32, 0);
        for (int k = 0; k < OUTPUT_NSTRAT_STR; k++) {
            table_add(&r->t, output_strat_str[k], TABLE_STR, output_strat_width[k]);
            r->strat_str[k] = table_find(&r->t, output_strat_str[k]);
        }
        table_add(&r->t, "stack", TABLE_STR, STACK_NAME_MAX);
        r->stack = table_find(&r->t, "stack");
    } else {
        table_add(&r->t, "dense_plan", TABLE_STR, OUTPUT_PLAN_WIDTH);
        table_add(&r->t, "emb_plan", TABLE_STR, OUTPUT_PLAN_WIDTH);
        r->dense = table_find(&r->t, "dense_plan");
        r->emb = table_find(&r->t, "emb_plan");
    }
    table_add(&r->t, "bound_by", TABLE_STR, BOUND_NAME_MAX);
    r->bound = table_find(&r->t, "bound_by");
    for (size_t i = 0; i < result_nfields; i++)
        r->field[i] = table_add(&r->t, result_fields[i].name,
                                result_fields[i].type == RESULT_I64 ? TABLE_I64
                                                                    : TABLE_F64,
                                0);
}

/* "tcdp" (a layout by initials, innermost first) as "tp-cp-dp-pp". */
static void output_layout_words(const char *initials, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *c = initials; *c && n + 4 < size; c++) {
        if (n)
            buf[n++] = '-';
        buf[n++] = *c;
        buf[n++] = 'p';
        buf[n] = '\0';
    }
}

void output_texts_of(const point_t *p, output_texts *x)
{
    memset(x, 0, sizeof *x);
    if (p->fidelity != EVAL_DETAILED) {
        plan_format(&p->task.dense, x->dense, sizeof x->dense);
        plan_format(&p->task.emb, x->emb, sizeof x->emb);
        return;
    }
    const task_detailed_t *t = &p->task.detailed;
    if (t->emb_sharding == TASK_EMB_NONE) {
        /* the options text ends with the layout's initials ("... tcdp") */
        char opt[PLAN_TEXT_MAX];
        detailed_options_text(t, opt, sizeof opt);
        const char *last = strrchr(opt, ' ');
        output_layout_words(last ? last + 1 : opt, x->layout, sizeof x->layout);
    }
    snprintf(x->overlap, sizeof x->overlap, "%s",
             t->overlap_dp_comm && t->overlap_tp_comm ? "dp+tp"
             : t->overlap_dp_comm                     ? "dp"
             : t->overlap_tp_comm                     ? "tp"
                                                      : "none");
}

/* The detailed strategy columns of a row: the values evaluated (vpp and
 * micro_batch as the evaluation resolved "auto"). */
static void output_pack_strategy(const output_rows *r, char *buf, const point_t *p,
                                 const result_t *res, const output_texts *x)
{
    static const char *const recompute[3] = {"none", "selective", "full"};
    static const char *const sharding[5] = {"", "table", "row", "column", "auto"};
    const task_detailed_t *t = &p->task.detailed;
    int64_t pp = t->pp > 0 ? t->pp : 1;
    int64_t vpp = res->vpp_resolved > 0 ? res->vpp_resolved : t->vpp > 0 ? t->vpp : 1;
    int64_t mb = res->micro_batch_resolved > 0 ? res->micro_batch_resolved
                 : t->micro_batch > 0          ? t->micro_batch
                                               : 1;
    int64_t v[OUTPUT_NSTRAT_INT] = {
        t->tp > 0 ? t->tp : 1, pp, t->dp, t->cp > 0 ? t->cp : 1,
        t->ep > 0 ? t->ep : 1, vpp, t->zero_stage, mb,
        t->sequence_parallel && t->tp > 1};
    for (int k = 0; k < OUTPUT_NSTRAT_INT; k++)
        table_put_i32(buf, r->strat_int[k], (int32_t)v[k]);
    const char *sched = pp == 1                              ? "none"
                        : t->schedule == TASK_SCHEDULE_GPIPE ? "gpipe"
                        : vpp > 1                            ? "1f1b-interleaved"
                                                             : "1f1b";
    int rc = t->recompute >= 0 && t->recompute <= 2 ? (int)t->recompute : 0;
    int es = t->emb_sharding >= 0 && t->emb_sharding <= 4 ? t->emb_sharding : 0;
    const char *str[OUTPUT_NSTRAT_STR] = {sched, recompute[rc], x->layout,
                                          x->overlap, sharding[es]};
    for (int k = 0; k < OUTPUT_NSTRAT_STR; k++)
        table_put_str(buf, r->strat_str[k], str[k]);
}

void output_pack(const output_rows *r, char *buf, int64_t id,
                 const int64_t idx[SPACE_NAXES], const point_t *p,
                 const result_t *res, const output_texts *texts)
{
    memset(buf, 0, r->t.size);
    table_put_i64(buf, r->id, id);
    table_put_i32(buf, r->status, res->status);
    for (int a = 0; a < SPACE_NAXES; a++)
        table_put_i32(buf, r->idx[a], (int32_t)idx[a]);
    table_put_i64(buf, r->devices, eval_devices(p));
    output_texts own;
    if (!texts) {
        output_texts_of(p, &own);
        texts = &own;
    }
    if (r->fidelity == EVAL_DETAILED) {
        output_pack_strategy(r, buf, p, res, texts);
        table_put_str(buf, r->stack, p->stack.name);
    } else {
        table_put_str(buf, r->dense, texts->dense);
        table_put_str(buf, r->emb, texts->emb);
    }
    table_put_str(buf, r->bound, bound_name(res->bound_code));
    for (size_t i = 0; i < result_nfields; i++)
        memcpy(buf + r->field[i], (const char *)res + result_fields[i].offset, 8);
}

/* ------------------------------------------------------------ attributes */

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
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1; /* damaged */
    hid_t t = H5Aget_type(a);
    int ok = t >= 0 && H5Tget_class(t) == H5T_INTEGER &&
             H5Aread(a, H5T_NATIVE_INT64, v) >= 0; /* a damaged one fails */
    if (t >= 0)
        CHECK_H5(H5Tclose(t));
    CHECK_H5(H5Aclose(a));
    return ok ? 0 : -1;
}

void output_set_meta(output *o, const output_meta *m)
{
    hid_t f = o->file;
    attr_i64(f, "complete", 0);
    attr_str(f, "spec_text", m->spec_text);
    attr_str(f, "spec_path", m->spec_path);
    attr_str(f, "tool_version", MADSWEEP_VERSION);
    attr_str(f, "cost_model_version", m->cost_version);
    attr_str(f, "fidelity", m->fidelity);
    attr_str(f, "start_time", m->start_time);
    attr_str(f, "end_time", m->end_time);
    attr_i64(f, "ranks", m->ranks);
    attr_i64(f, "points_total", m->total);
    attr_i64(f, "points_valid", m->valid);
    attr_i64(f, "points_invalid", m->invalid);
    attr_i64(f, "points_evaluated", m->evaluated);
    attr_i64(f, "chunk_ids", m->chunk);
    attr_i64(f, "chunks", m->nchunks);
    attr_f64(f, "elapsed_s", m->elapsed_s);
    attr_f64(f, "evals_per_s", m->evals_per_s);
    CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    if (m->complete) {
        attr_i64(f, "complete", 1);
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
    {"nic_gbps_per_device", "Gb/s per device, one direction"},
    {"scaleup_bytes_per_s", "bytes/s per device"},
    /* the other numeric hardware keys, columns of /axes/system when a
     * spec scales them (system_grid `scale`) */
    {"peak_fp32_flops", "FLOP/s per device"},
    {"peak_tf32_flops", "FLOP/s per device"},
    {"peak_int8_ops", "OP/s per device"},
    {"mem_bw_efficiency", "fraction"},
    {"attention_efficiency", "fraction of peak"},
    {"attention_tuned_efficiency", "fraction of peak"},
    {"kernel_overhead_s", "s per kernel"},
    {"efficiency_uncertainty", "fraction (+-)"},
    {"network_uncertainty", "fraction (+-)"},
    {"scaleup_devices", "devices"},
    {"scaleup_latency_s", "s per collective step"},
    {"scaleup_efficiency", "fraction"},
    {"nic_latency_s", "s per collective step"},
    {"nic_efficiency", "fraction"},
    {"eff_intra_bw", "bytes/s per device, one direction"},
    {"eff_inter_bw", "bytes/s per device, one direction"},
    {"freeze_emb", "bool"},
    {"freeze_dense", "bool"},
    {"freeze_top_mlp", "bool"},
    {"freeze_bot_mlp", "bool"},
    {"min_frozen_layer", "layer index"},
    {"frozen_layers", "layers"},
    {"prompt_tokens", "tokens"},
    {"prefill_tp", "tensor-parallel degree of a prefill replica (0: colocated)"},
    {"prefill_pp", "pipeline stages of a prefill replica (0: colocated)"},
    {"prefill_devices_given", "devices (0: \"auto\", rate-matched, or colocated)"},
    {"decode_tokens", "tokens"},
    {"max_seqs", "sequences per attention rank (0: the stack's)"},
    {"token_budget", "tokens per step (0: the stack's)"},
    {"tp", "devices (tensor-parallel degree)"},
    {"pp", "stages (pipeline-parallel degree)"},
    {"dp", "replicas (data-parallel degree)"},
    {"cp", "devices (context-parallel degree)"},
    {"ep", "devices (expert-parallel degree)"},
    {"vpp", "virtual stages per device"},
    {"zero_stage", "ZeRO stage (0-3)"},
    {"micro_batch", "samples (llm: sequences)"},
    {"sp", "bool (sequence parallelism)"},
    {"sequence_parallel", "bool"},
    {"recompute", "enum (0 none, 1 selective, 2 full)"},
    {"applies", "bool"},
    {"board_power_w", "W per device (0: unknown)"},
    {"idle_power_w", "W per device (0: 30 % of board power)"},
    {"price_per_hour_usd", "USD per device-hour (0: unknown)"},
    {"evaluated", "points"},
    {"ok", "points"},
    {"kept", "points"},
    {"group", "index into /groups"},
    {"winner_id", "point id (-1: none)"},
    {"winner_value", "tokens/s or samples/s per device (the summary's figure)"},
};

static const char *const output_axis_units[SPACE_NAXES] = {
    "index into /axes/model", "index into /axes/system",
    "index into /axes/task", "index into /axes/global_batch",
    "index into /axes/strategy", "index into /axes/stack", "index into /axes/parallel"};

static const char *output_unit(const table_col *c)
{
    if (c->kind == TABLE_STR)
        return "text";
    if (strncmp(c->name, "infeasible_", 11) == 0 || strncmp(c->name, "invalid_", 8) == 0)
        return "points"; /* /groups: points per status code */
    for (int a = 0; a < SPACE_NAXES; a++) {
        char idx[TABLE_NAME_MAX];
        output_idx_name(a, idx, sizeof idx);
        if (strcmp(c->name, idx) == 0)
            return output_axis_units[a];
    }
    if (strncmp(c->name, "scale_", 6) == 0)
        return "factor (times the hardware's figure)";
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
    attr_strs(d, "units", u, t->ncols, W);
    free(u);
}

/* ------------------------------------------------------------ tables */

/* The digest attribute of a dataset: rank 0's digest of `bytes` bytes
 * (collective: every rank writes rank 0's value). */
static void output_attr_digest(hid_t d, const void *rows, size_t bytes, MPI_Comm comm,
                               int rank)
{
    uint64_t dg = rank == 0 ? digest_bytes(rows, bytes) : 0;
    CHECK_MPI(MPI_Bcast(&dg, 1, MPI_UINT64_T, 0, comm));
    attr_num(d, "digest", H5T_STD_U64LE, H5T_NATIVE_UINT64, &dg);
}

/* Writes a small dataset from rank 0 (the others join with nothing),
 * with its units and its digest. */
static void output_table(hid_t loc, const char *name, const table *t,
                         int64_t n, const void *rows, MPI_Comm comm, int rank)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t ft = table_ftype(t), mt = table_mtype(t);
    /* large tables (the detailed strategy axis: 92,163 rows of texts)
     * deflated: they would otherwise dominate a reduced sweep's file */
    hid_t dcpl = CHECK_H5ID(H5Pcreate(H5P_DATASET_CREATE));
    if (n >= OUTPUT_DEFLATE_ROWS) {
        /* a chunk may not exceed a fixed-size dataset's extent */
        hsize_t cdims[1] = {n < OUTPUT_CHUNK_ROWS ? (hsize_t)n : OUTPUT_CHUNK_ROWS};
        CHECK_H5(H5Pset_chunk(dcpl, 1, cdims));
        CHECK_H5(H5Pset_deflate(dcpl, 4));
    }
    hid_t d = CHECK_H5ID(H5Dcreate2(loc, name, ft, fs, H5P_DEFAULT,
                                    dcpl, H5P_DEFAULT));
    CHECK_H5(H5Pclose(dcpl));
    output_attr_units(d, t);
    output_attr_digest(d, rows, (size_t)n * t->size, comm, rank);
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
static void output_axes_madmax(hid_t g, const spec *sp, MPI_Comm comm, int rank)
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
    output_table(g, "model", &t, sp->nmodels, b, comm, rank);
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
    table_add(&t, "hardware", TABLE_STR, CLUSTER_NAME_MAX);
    size_t o_bw = table_add(&t, "board_power_w", TABLE_F64, 0);
    size_t o_iw = table_add(&t, "idle_power_w", TABLE_F64, 0);
    size_t o_pr = table_add(&t, "price_per_hour_usd", TABLE_F64, 0);
    c_name = table_find(&t, "name");
    const table_col *c_hwn = table_find(&t, "hardware");
    b = output_rows_alloc(sp->nsystems, t.size);
    for (int64_t i = 0; i < sp->nsystems; i++) {
        char *row = b + (size_t)i * t.size;
        const cluster_t *c = &sp->systems[i];
        table_put_str(row, c_name, c->name);
        table_put_str(row, c_hwn, c->hardware);
        table_put_f64(row, o_bw, c->board_power_w);
        table_put_f64(row, o_iw, c->idle_power_w);
        table_put_f64(row, o_pr, c->price_per_hour_usd);
        table_put_i64(row, o_dev, c->devices);
        table_put_i64(row, o_nod, c->nodes);
        table_put_i64(row, o_dpn, c->devices_per_node);
        table_put_f64(row, o_f16, c->peak_fp16_flops);
        table_put_f64(row, o_mem, c->mem_capacity_bytes);
        table_put_f64(row, o_nic, c->nic_bidir_bytes_per_s);
        table_put_f64(row, o_ib, c->eff_intra_bw);
        table_put_f64(row, o_eb, c->eff_inter_bw);
    }
    output_table(g, "system", &t, sp->nsystems, b, comm, rank);
    free(b);

}

/* Model and system tables of the detailed fidelity. */
static void output_axes_detailed(hid_t g, const spec *sp, MPI_Comm comm, int rank)
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
    output_table(g, "model", &t, sp->nmodels, b, comm, rank);
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
    size_t o_gbps = table_add(&t, "nic_gbps_per_device", TABLE_F64, 0);
    size_t o_bw = table_add(&t, "board_power_w", TABLE_F64, 0);
    size_t o_iw = table_add(&t, "idle_power_w", TABLE_F64, 0);
    size_t o_pr = table_add(&t, "price_per_hour_usd", TABLE_F64, 0);
    table_add(&t, "collective", TABLE_STR, 16);
    /* scaled hardware figures (system_grid `scale`): the absolute figure
     * (a column of its own unless one above holds it) and the factor */
    size_t o_sv[SPEC_SCALE_MAX], o_sf[SPEC_SCALE_MAX];
    bool own[SPEC_SCALE_MAX];
    for (int k = 0; k < sp->nscale; k++) {
        char fname[TABLE_NAME_MAX];
        own[k] = table_find(&t, sp->scale_keys[k]) == NULL;
        if (own[k])
            o_sv[k] = table_add(&t, sp->scale_keys[k], TABLE_F64, 0);
        snprintf(fname, sizeof fname, "scale_%s", sp->scale_keys[k]);
        o_sf[k] = table_add(&t, fname, TABLE_F64, 0);
    }
    c_name = table_find(&t, "name");
    const table_col *c_hw = table_find(&t, "hardware");
    const table_col *c_alg = table_find(&t, "collective");
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
        double nic = y->nic_gbps_per_device > 0 ? y->nic_gbps_per_device * 1e9 / 8.0
                                                : y->hw.nic_bytes_per_s;
        table_put_f64(row, o_nic, nic);
        table_put_f64(row, o_gbps, y->nic_gbps_per_device > 0
                                       ? y->nic_gbps_per_device
                                       : nic * 8.0 / 1e9);
        table_put_f64(row, o_bw, y->hw.board_power_w);
        table_put_f64(row, o_iw, y->hw.idle_power_w);
        table_put_f64(row, o_pr, y->hw.price_per_hour_usd);
        table_put_str(row, c_alg, y->algo == TOPO_TREE           ? "tree"
                                  : y->algo == TOPO_HIERARCHICAL ? "hierarchical"
                                                                 : "ring");
        for (int k = 0; k < sp->nscale; k++) {
            if (own[k])
                table_put_f64(row, o_sv[k], sp->scale_fig[i * SPEC_SCALE_MAX + k]);
            table_put_f64(row, o_sf[k], sp->scale[i * SPEC_SCALE_MAX + k]);
        }
    }
    output_table(g, "system", &t, sp->nsystems, b, comm, rank);
    free(b);
}

/* The software stacks of the spec: name and summary (their facts are in
 * configs/stacks.cfg, whose text the spec names; madmax: "none"). */
static void output_axes_stack(hid_t g, const spec *sp, MPI_Comm comm, int rank)
{
    table t;
    table_init(&t);
    table_add(&t, "name", TABLE_STR, STACK_NAME_MAX);
    table_add(&t, "summary", TABLE_STR, STACK_SUMMARY_MAX);
    const table_col *c_name = table_find(&t, "name"), *c_sum = table_find(&t, "summary");
    char *b = output_rows_alloc(sp->nstacks, t.size);
    for (int64_t i = 0; i < sp->nstacks; i++) {
        table_put_str(b + (size_t)i * t.size, c_name, sp->stacks[i].name);
        table_put_str(b + (size_t)i * t.size, c_sum, sp->stacks[i].summary);
    }
    output_table(g, "stack", &t, sp->nstacks, b, comm, rank);
    free(b);
}

/* /axes/strategy: madmax templates or explicit plans, or the detailed
 * auto set's options (the degrees are the parallel axis): their texts
 * and values; `applies` 0 when the option is refused on every tuple and
 * system; vpp 0: "auto" (the fastest interleaving from 2 chunks up). */
static void output_axes_strategy(hid_t g, const spec *sp, MPI_Comm comm, int rank)
{
    bool det = sp->fidelity == EVAL_DETAILED;
    table t;
    table_init(&t);
    table_add(&t, det ? "options" : "dense", TABLE_STR, PLAN_TEXT_MAX);
    if (!det)
        table_add(&t, "embedding", TABLE_STR, PLAN_TEXT_MAX);
    table_add(&t, "text", TABLE_STR, 2 * PLAN_TEXT_MAX + 4);
    enum { S_VPP, S_ZERO, S_MB, S_SP, S_RC, S_APPLIES, S_N };
    static const char *const s_names[S_N] = {"vpp", "zero_stage", "micro_batch",
                                             "sequence_parallel", "recompute", "applies"};
    size_t o_s[S_N];
    if (det)
        for (int k = 0; k < S_N; k++)
            o_s[k] = table_add(&t, s_names[k], TABLE_I32, 0);
    const table_col *c_d = &t.col[0], *c_e = det ? NULL : &t.col[1],
                    *c_t = table_find(&t, "text");
    char *b = output_rows_alloc(sp->nstrats, t.size);
    for (int64_t i = 0; i < sp->nstrats; i++) {
        char *row = b + (size_t)i * t.size;
        char d[PLAN_TEXT_MAX] = "", e[PLAN_TEXT_MAX] = "", text[2 * PLAN_TEXT_MAX + 4] = "";
        if (det) {
            task_detailed_t dc;
            int applies = 0;
            if (sp->strat_auto)
                applies = detailed_auto_option(i, &dc);
            else
                dc = sp->dstrats[i].t;
            if (applies >= 0) {
                detailed_options_text(&dc, d, sizeof d);
                if (sp->strat_auto)
                    detailed_option_text(&dc, text, sizeof text);
                else
                    detailed_template_text(&sp->dstrats[i], text, sizeof text);
                int64_t v[S_N] = {dc.vpp_auto ? 0 : dc.vpp, dc.zero_stage, dc.micro_batch,
                                  dc.sequence_parallel, (int64_t)dc.recompute, applies == 0};
                for (int x = 0; x < S_N; x++)
                    table_put_i32(row, o_s[x], (int32_t)v[x]);
            }
        } else {
            autoplan_pair pair;
            const autoplan_pair *pp = NULL;
            if (!sp->strat_auto)
                pp = &sp->strats[i];
            else if (autoplan_candidate(sp->ops, i, &pair) == 0)
                pp = &pair;
            if (pp) {
                autoplan_format(&pp->dense, d, sizeof d);
                autoplan_format(&pp->emb, e, sizeof e);
            }
            spec_strategy_text(sp, i, text, sizeof text);
            table_put_str(row, c_e, e);
        }
        table_put_str(row, c_d, d);
        table_put_str(row, c_t, text);
    }
    output_table(g, "strategy", &t, sp->nstrats, b, comm, rank);
    free(b);
}

/* /axes/parallel: the detailed auto set's degree tuples (tp, pp, cp, ep;
 * dp is the rest of the devices), one entry "-" for the other sets
 * (their strategies carry their degrees). */
static void output_axes_parallel(hid_t g, const spec *sp, MPI_Comm comm, int rank)
{
    table t;
    table_init(&t);
    table_add(&t, "text", TABLE_STR, PLAN_TEXT_MAX);
    const table_col *c_t = table_find(&t, "text");
    enum { P_TP, P_PP, P_CP, P_EP, P_N };
    static const char *const p_names[P_N] = {"tp", "pp", "cp", "ep"};
    size_t o_p[P_N];
    for (int k = 0; k < P_N; k++)
        o_p[k] = table_add(&t, p_names[k], TABLE_I32, 0);
    int64_t n = sp->npar > 0 ? sp->npar : 1;
    char *b = output_rows_alloc(n, t.size);
    bool det = sp->fidelity == EVAL_DETAILED && sp->strat_auto;
    for (int64_t u = 0; u < n; u++) {
        char *row = b + (size_t)u * t.size;
        task_detailed_t dc;
        if (!det || detailed_auto_candidate(u * sp->nstrats, &dc) < 0) {
            table_put_str(row, c_t, "-");
            continue;
        }
        char text[PLAN_TEXT_MAX];
        snprintf(text, sizeof text, "tp%lld pp%lld cp%lld ep%lld", (long long)dc.tp,
                 (long long)dc.pp, (long long)dc.cp, (long long)dc.ep);
        table_put_str(row, c_t, text);
        int64_t v[P_N] = {dc.tp, dc.pp, dc.cp, dc.ep};
        for (int x = 0; x < P_N; x++)
            table_put_i32(row, o_p[x], (int32_t)v[x]);
    }
    output_table(g, "parallel", &t, n, b, comm, rank);
    free(b);
}

static void output_axes(hid_t file, const space *s, MPI_Comm comm, int rank)
{
    const spec *sp = s->sp;
    hid_t g = CHECK_H5ID(H5Gcreate2(file, "axes", H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT));
    table t;
    char *b;

    if (sp->fidelity == EVAL_DETAILED)
        output_axes_detailed(g, sp, comm, rank);
    else
        output_axes_madmax(g, sp, comm, rank);

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
    size_t o_pt = 0, o_dt = 0, o_fl = 0, o_ptp = 0, o_ppp = 0, o_pdev = 0, o_ms = 0, o_tb = 0;
    if (det) {
        table_add(&t, "precision", TABLE_STR, 8);
        o_pt = table_add(&t, "prompt_tokens", TABLE_I64, 0);
        o_dt = table_add(&t, "decode_tokens", TABLE_I64, 0);
        o_fl = table_add(&t, "frozen_layers", TABLE_I64, 0);
        o_ms = table_add(&t, "max_seqs", TABLE_I64, 0);
        o_tb = table_add(&t, "token_budget", TABLE_I64, 0);
        /* a disaggregated prefill pool (spec.h spec_task): its hardware
         * ("" colocated, "(system)" the row's system's), degrees, devices
         * (0: "auto", rate-matched; a row's prefill_devices has the
         * resolved count) and KV transfer */
        table_add(&t, "prefill_hardware", TABLE_STR, HW_NAME_MAX);
        o_ptp = table_add(&t, "prefill_tp", TABLE_I64, 0);
        o_ppp = table_add(&t, "prefill_pp", TABLE_I64, 0);
        o_pdev = table_add(&t, "prefill_devices_given", TABLE_I64, 0);
        table_add(&t, "prefill_kv_transfer", TABLE_STR, 16);
    }
    const table_col *c_name = table_find(&t, "name"),
                    *c_kind = table_find(&t, "type"),
                    *c_prec = table_find(&t, "precision"),
                    *c_phw = table_find(&t, "prefill_hardware"),
                    *c_pkv = table_find(&t, "prefill_kv_transfer");
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
            table_put_i64(row, o_ms, k->max_seqs);
            table_put_i64(row, o_tb, k->token_budget);
            const point_prefill *f = &k->prefill;
            table_put_str(row, c_phw, !f->on ? "" : k->prefill_hw ? f->system.hw.name
                                                                   : "(system)");
            table_put_i64(row, o_ptp, f->on ? f->tp : 0);
            table_put_i64(row, o_ppp, f->on ? f->pp : 0);
            table_put_i64(row, o_pdev, f->on && !f->rate_matched ? f->system.devices : 0);
            table_put_str(row, c_pkv, !f->on ? "" : f->layerwise ? "layerwise"
                                                                 : "after_prefill");
        }
    }
    output_table(g, "task", &t, sp->ntasks, b, comm, rank);
    free(b);

    /* global batches */
    table_init(&t);
    size_t o_gb = table_add(&t, "global_batch", TABLE_I64, 0);
    table_add(&t, "model_kinds", TABLE_STR, 16);
    const table_col *c_mk = table_find(&t, "model_kinds");
    b = output_rows_alloc(sp->nbatches, t.size);
    for (int64_t i = 0; i < sp->nbatches; i++) {
        unsigned mk = sp->batch_kinds[i];
        bool l = mk & (1u << MODEL_LLM), d = mk & (1u << MODEL_DLRM);
        table_put_i64(b + (size_t)i * t.size, o_gb, sp->batches[i]);
        table_put_str(b + (size_t)i * t.size, c_mk,
                      l && d ? "llm,dlrm" : l ? "llm" : "dlrm");
    }
    output_table(g, "global_batch", &t, sp->nbatches, b, comm, rank);
    free(b);
    output_axes_stack(g, sp, comm, rank);

    output_axes_strategy(g, sp, comm, rank);
    output_axes_parallel(g, sp, comm, rank);

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
    output_table(g, "status", &t, n, b, comm, rank);
    free(b);
    CHECK_H5(H5Gclose(g));

}

/* /skipped: per status code, how many combinations of the axes the
 * enumeration left out (a rule of the fidelity rejects them). */
static void output_skipped(hid_t file, const int64_t *by_code, MPI_Comm comm,
                           int rank)
{
    table t;
    table_init(&t);
    size_t o_code = table_add(&t, "code", TABLE_I32, 0);
    table_add(&t, "name", TABLE_STR, 32);
    size_t o_cnt = table_add(&t, "count", TABLE_I64, 0);
    const table_col *c_name = table_find(&t, "name");
    char *b = output_rows_alloc(SPACE_NCODES, t.size);
    int64_t n = 0;
    for (int k = 0; k < SPACE_NCODES; k++) {
        if (by_code[k] == 0)
            continue;
        char *row = b + (size_t)n++ * t.size;
        status_code code = (status_code)k;
        table_put_i32(row, o_code, (int32_t)code);
        table_put_str(row, c_name, status_name(code));
        table_put_i64(row, o_cnt, by_code[k]);
    }
    output_table(file, "skipped", &t, n, b, comm, rank);
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

int output_create(output *o, MPI_Comm comm, const char *path, const space *s,
                  const output_meta *m, char *msg, size_t msize)
{
    memset(o, 0, sizeof *o);
    o->comm = comm;
    o->path = path;
    CHECK_MPI(MPI_Comm_rank(comm, &o->rank));
    hid_t fapl = output_fapl(comm);
    /* a zeroed user block until the file is laid out (claim.h) */
    hid_t fcpl = CHECK_H5ID(H5Pcreate(H5P_FILE_CREATE));
    CHECK_H5(H5Pset_userblock(fcpl, CLAIM_USERBLOCK));
    o->file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    CHECK_H5(H5Pclose(fcpl));
    CHECK_H5(H5Pclose(fapl));
    if (output_agree(comm, o->file < 0)) {
        snprintf(msg, msize, "cannot create %s (check the directory exists "
                 "and is writable)", path);
        if (o->file >= 0)
            H5Fclose(o->file);
        memset(o, 0, sizeof *o);
        return -1;
    }
    output_axes(o->file, s, comm, o->rank);
    if (m->prov)
        provenance_write(o->file, m->prov, comm, o->rank);
    output_set_meta(o, m);
    return 0;
}

/* /results with room for `rows` rows (exact length, allocated now, never
 * filled; `grow`: extendable from that length, for reduced sweeps whose
 * row count is known only at the end). */
static void output_results(output *o, const output_rows *r, int64_t rows, bool grow)
{
    hsize_t dims[1] = {(hsize_t)rows};
    /* reduced sweeps keep few rows: small chunks keep their file small */
    hsize_t cdims[1] = {grow ? OUTPUT_CHUNK_ROWS / 16 : OUTPUT_CHUNK_ROWS};
    hsize_t maxdims[1] = {H5S_UNLIMITED}; /* lets chunks exceed tiny sizes */
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, maxdims));
    hid_t dcpl = CHECK_H5ID(H5Pcreate(H5P_DATASET_CREATE));
    CHECK_H5(H5Pset_chunk(dcpl, 1, cdims));
    CHECK_H5(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    CHECK_H5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    hid_t ft = table_ftype(&r->t);
    o->results = CHECK_H5ID(H5Dcreate2(o->file, "results", ft, fs, H5P_DEFAULT,
                                       dcpl, H5P_DEFAULT));
    output_attr_units(o->results, &r->t);
    CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Pclose(dcpl));
    CHECK_H5(H5Sclose(fs));
}

/* A dataset of one element per work chunk, allocated now, unfilled. */
static hid_t output_per_chunk(hid_t file, const char *name, hid_t type, int64_t n)
{
    hsize_t dims[1] = {(hsize_t)n};
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

/* Collective write of a whole per-chunk dataset from rank 0's buffer. */
static void output_per_chunk_fill(output *o, hid_t d, hid_t mtype, const void *buf)
{
    hid_t fs = CHECK_H5ID(H5Dget_space(d));
    hid_t ms = CHECK_H5ID(H5Scopy(fs));
    if (o->rank != 0) {
        CHECK_H5(H5Sselect_none(fs));
        CHECK_H5(H5Sselect_none(ms));
    }
    hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
    CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    CHECK_H5(H5Dwrite(d, mtype, ms, fs, x, buf));
    CHECK_H5(H5Pclose(x));
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Sclose(fs));
}

void output_layout(output *o, const output_rows *r, int64_t rows, bool grow,
                   const int64_t *by_code, const int64_t *chunk_lo,
                   const output_meta *m)
{
    output_results(o, r, rows, grow);
    o->mtype = table_mtype(&r->t);

    /* /progress: zeros written by rank 0; /digests: set with each chunk */
    o->progress = output_per_chunk(o->file, "progress", H5T_STD_U8LE, m->nchunks);
    o->digests = output_per_chunk(o->file, "digests", H5T_STD_U64LE, m->nchunks);
    uint8_t *zeros = calloc((size_t)m->nchunks + 1, 1);
    if (!zeros)
        check_die("out of memory", __FILE__, __LINE__);
    output_per_chunk_fill(o, o->progress, H5T_NATIVE_UINT8, zeros);
    free(zeros);

    /* /chunk_starts: the cut, with its digest */
    hid_t cs = output_per_chunk(o->file, "chunk_starts", H5T_STD_I64LE, m->nchunks + 1);
    output_per_chunk_fill(o, cs, H5T_NATIVE_INT64, chunk_lo);
    output_attr_digest(cs, chunk_lo, ((size_t)m->nchunks + 1) * sizeof *chunk_lo,
                       o->comm, o->rank);
    CHECK_H5(H5Dclose(cs));

    output_skipped(o->file, by_code, o->comm, o->rank);
    output_set_meta(o, m);
}

/* The per-chunk datasets of a laid-out file that exist: a bit per name of
 * output_sets (-1 when the root group does not read). */
static const char *const output_sets[4] = {"results", "progress", "digests",
                                           "chunk_starts"};

static int output_sets_present(hid_t file)
{
    int bits = 0;
    for (int i = 0; i < 4; i++) {
        htri_t e = H5Lexists(file, output_sets[i], H5P_DEFAULT);
        if (e < 0)
            return -1;
        bits |= (e > 0) << i;
    }
    return bits;
}

int output_open(output *o, MPI_Comm comm, const char *path,
                const output_meta *m, int64_t *complete, char *msg, size_t msize)
{
    memset(o, 0, sizeof *o);
    o->comm = comm;
    o->path = path;
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
    char pwhy[600];
    char *text = output_attr_read_str(o->file, "spec_text");
    char *tool = output_attr_read_str(o->file, "tool_version");
    char *cost = output_attr_read_str(o->file, "cost_model_version");
    int64_t valid = -2;
    int sets = output_sets_present(o->file);
    if (!text || output_attr_read_i64(o->file, "complete", complete) != 0)
        why = "it is not a madsweep sweep file";
    else if (sets < 0)
        why = "its root group is damaged";
    else if (sets == 0 && (output_attr_read_i64(o->file, "points_valid", &valid) != 0 ||
                           valid != -1))
        why = "it has no datasets although its count pass ended (damaged)";
    else if (sets != 0 && sets != 15)
        why = "its datasets are incomplete (/results, /progress, /digests or "
              "/chunk_starts is missing: written by a madsweep without "
              "checksums, or damaged)";
    else if (strcmp(text, m->spec_text) != 0)
        why = "its spec_text differs from this spec";
    else if (!tool || strcmp(tool, MADSWEEP_VERSION) != 0 || !cost ||
             strcmp(cost, m->cost_version) != 0)
        why = "it was written by another tool or cost-model version "
              "(its rows would mix two models)";
    else if (m->prov && provenance_verify(o->file, pwhy, sizeof pwhy) < 0)
        why = pwhy;
    else if (m->prov && provenance_compare(o->file, m->prov, pwhy,
                                           sizeof pwhy) != 0)
        why = pwhy;
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
    if (m->prov && !*complete)
        provenance_note_resume(o->file, m->prov);
    return 0;
}

/* The file's /chunk_starts equals chunk_lo[0 .. n]? (0: yes) */
static int output_same_cut(hid_t file, const int64_t *chunk_lo, int64_t n)
{
    hid_t d = H5Dopen2(file, "chunk_starts", H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t sp = H5Dget_space(d);
    hssize_t len = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0)
        H5Sclose(sp);
    int64_t *b = len == n + 1 ? malloc((size_t)len * sizeof *b) : NULL;
    int rc = -1;
    if (b && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0)
        rc = memcmp(b, chunk_lo, (size_t)len * sizeof *b) == 0 ? 0 : -1;
    free(b);
    H5Dclose(d);
    return rc;
}

int output_reopen_layout(output *o, const output_rows *r, const output_meta *m,
                         const int64_t *chunk_lo, uint8_t *done, char *msg,
                         size_t msize)
{
    MPI_Comm comm = o->comm;
    int sets = output_sets_present(o->file);
    if (sets == 0)
        return 1; /* stopped or killed before the layout: the caller lays it out */
    int64_t total = -1, chunk = -1, valid = -1, nchunks = -1;
    output_attr_read_i64(o->file, "points_total", &total);
    output_attr_read_i64(o->file, "chunk_ids", &chunk);
    output_attr_read_i64(o->file, "points_valid", &valid);
    output_attr_read_i64(o->file, "chunks", &nchunks);
    int bad = sets != 15 || total != m->total || chunk != m->chunk ||
              valid != m->valid || nchunks != m->nchunks ||
              output_same_cut(o->file, chunk_lo, m->nchunks) != 0;
    if (output_agree(comm, bad)) {
        snprintf(msg, msize, "cannot resume: its space differs (the catalogues "
                 "or the configs directory changed; or its counts or "
                 "/chunk_starts are damaged); run without --resume to start "
                 "it over");
        return -1;
    }
    const char *why = NULL;
    hid_t d[3] = {-1, -1, -1};
    for (int i = 0; i < 3 && !why; i++)
        if ((d[i] = H5Dopen2(o->file, output_sets[i], H5P_DEFAULT)) < 0)
            why = "a dataset does not open (damaged)";
    if (!why) {
        hid_t ft = H5Dget_type(d[0]);
        hid_t mt = table_ftype(&r->t);
        if (ft < 0 || H5Tequal(ft, mt) <= 0)
            why = "it was written by another version (row layout differs)";
        if (ft >= 0)
            CHECK_H5(H5Tclose(ft));
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
        snprintf(msg, msize, "cannot resume: %s; run without --resume to start "
                 "it over", why ? why : "another rank read it differently");
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

void output_write_digests(output *o, int64_t c0, int64_t n, const uint64_t *d)
{
    if (n > 0)
        output_write(o, o->digests, H5T_NATIVE_UINT64, c0, n, d, "the digests of chunks");
}

/* ------------------------------------------------------------ for kept.c */

void output_table_write(output *o, const char *name, const table *t, int64_t n,
                        const void *rows)
{
    output_table(o->file, name, t, n, rows, o->comm, o->rank);
}

void output_set_i64(output *o, const char *name, int64_t v)
{
    attr_i64(o->file, name, v);
}

void output_set_f64(output *o, const char *name, double v)
{
    attr_f64(o->file, name, v);
}

int output_get_i64(output *o, const char *name, int64_t *v)
{
    return output_attr_read_i64(o->file, name, v);
}

void output_set_str(output *o, const char *name, const char *v)
{
    attr_str(o->file, name, v);
}

void output_results_grow(output *o, int64_t rows)
{
    hid_t fs = CHECK_H5ID(H5Dget_space(o->results));
    hssize_t n = H5Sget_simple_extent_npoints(fs);
    CHECK_H5(n);
    CHECK_H5(H5Sclose(fs));
    hsize_t dims[1] = {(hsize_t)rows};
    if (rows > (int64_t)n)
        CHECK_H5(H5Dset_extent(o->results, dims));
}

void output_write_rows_all(output *o, int64_t row0, int64_t n, const void *buf)
{
    hsize_t start[1] = {(hsize_t)row0}, count[1] = {(hsize_t)n};
    hid_t fs = CHECK_H5ID(H5Dget_space(o->results));
    hid_t ms = CHECK_H5ID(H5Screate_simple(1, count, NULL));
    if (n > 0) {
        CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    } else {
        CHECK_H5(H5Sselect_none(fs));
        CHECK_H5(H5Sselect_none(ms));
    }
    hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
    CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    if (H5Dwrite(o->results, o->mtype, ms, fs, x, n > 0 ? buf : NULL) < 0)
        check_write_die(o->path, o->rank, "the kept rows", __FILE__, __LINE__);
    CHECK_H5(H5Pclose(x));
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Sclose(fs));
}

void output_mark_range(output *o, int64_t c0, int64_t c1)
{
    int64_t n = c1 > c0 ? c1 - c0 : 0;
    uint8_t *ones = malloc((size_t)(n > 0 ? n : 1));
    if (!ones)
        check_die("out of memory", __FILE__, __LINE__);
    memset(ones, 1, (size_t)(n > 0 ? n : 1));
    hsize_t start[1] = {(hsize_t)c0}, count[1] = {(hsize_t)n};
    hid_t fs = CHECK_H5ID(H5Dget_space(o->progress));
    hid_t ms = CHECK_H5ID(H5Screate_simple(1, count, NULL));
    if (n > 0 && o->rank == 0) {
        CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    } else {
        CHECK_H5(H5Sselect_none(fs));
        CHECK_H5(H5Sselect_none(ms));
    }
    hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
    CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    CHECK_H5(H5Dwrite(o->progress, H5T_NATIVE_UINT8, ms, fs, x, ones));
    CHECK_H5(H5Pclose(x));
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Sclose(fs));
    free(ones);
}

void output_flush(output *o)
{
    CHECK_H5(H5Fflush(o->file, H5F_SCOPE_GLOBAL));
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
