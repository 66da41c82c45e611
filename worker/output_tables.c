/*
 * output_tables.c - the small tables of the sweep file, each written
 * whole by rank 0 through one writer (see output_tables.h).
 *
 * Invariant: a table's rows depend only on the spec and the counted
 * space (never on the rank count or the run), so two runs of one spec
 * write identical tables; every table carries its units and digest.
 */
#include "output_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed.h"
#include "check.h"
#include "h5.h"
#include "output_rows.h"

#define OUTPUT_TABLES_CHUNK_ROWS 4096
#define OUTPUT_TABLES_DEFLATE_ROWS 1024

void output_tables_write(hid_t loc, const char *name, const table *t, int64_t n,
                         const void *rows, MPI_Comm comm, int rank,
                         const output_units *keys)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t ft = table_ftype(t), mt = table_mtype(t);
    /* large tables (the detailed strategy axis: 92,163 rows of texts)
     * deflated: they would otherwise dominate a reduced sweep's file */
    hid_t dcpl = CHECK_H5ID(H5Pcreate(H5P_DATASET_CREATE));
    if (n >= OUTPUT_TABLES_DEFLATE_ROWS) {
        /* a chunk may not exceed a fixed-size dataset's extent */
        hsize_t cdims[1] = {n < OUTPUT_TABLES_CHUNK_ROWS ? (hsize_t)n
                                                         : OUTPUT_TABLES_CHUNK_ROWS};
        CHECK_H5(H5Pset_chunk(dcpl, 1, cdims));
        CHECK_H5(H5Pset_deflate(dcpl, 4));
    }
    hid_t d = CHECK_H5ID(H5Dcreate2(loc, name, ft, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK_H5(H5Pclose(dcpl));
    output_rows_units_attr(d, t, keys);
    h5_attr_digest(d, rows, (size_t)n * t->size, comm, rank);
    if (n > 0)
        h5_write_root(d, mt, 0, n, rows, rank);
    CHECK_H5(H5Dclose(d));
    CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Sclose(fs));
}

static char *output_tables_alloc(int64_t n, size_t size)
{
    char *b = calloc((size_t)(n > 0 ? n : 1), size);
    if (!b)
        check_die("out of memory", __FILE__, __LINE__);
    return b;
}

/* Model and system tables of the madmax fidelity. */
static void output_tables_madmax(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                                 const output_units *keys)
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
    b = output_tables_alloc(sp->nmodels, t.size);
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
    output_tables_write(g, "model", &t, sp->nmodels, b, comm, rank, keys);
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
    b = output_tables_alloc(sp->nsystems, t.size);
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
    output_tables_write(g, "system", &t, sp->nsystems, b, comm, rank, keys);
    free(b);

}

/* Model and system tables of the detailed fidelity. */
static void output_tables_detailed(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                                   const output_units *keys)
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
    b = output_tables_alloc(sp->nmodels, t.size);
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
    output_tables_write(g, "model", &t, sp->nmodels, b, comm, rank, keys);
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
    b = output_tables_alloc(sp->nsystems, t.size);
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
        table_put_str(row, c_alg, topo_algo_name(y->algo)); /* "auto": NCCL picks */
        for (int k = 0; k < sp->nscale; k++) {
            if (own[k])
                table_put_f64(row, o_sv[k], sp->scale_fig[i * SPEC_SCALE_MAX + k]);
            table_put_f64(row, o_sf[k], sp->scale[i * SPEC_SCALE_MAX + k]);
        }
    }
    output_tables_write(g, "system", &t, sp->nsystems, b, comm, rank, keys);
    free(b);
}

/* The software stacks of the spec: name and summary (their facts are in
 * configs/stacks.cfg, whose text the spec names; madmax: "none"). */
static void output_tables_stack(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                                const output_units *keys)
{
    table t;
    table_init(&t);
    table_add(&t, "name", TABLE_STR, STACK_NAME_MAX);
    table_add(&t, "summary", TABLE_STR, STACK_SUMMARY_MAX);
    const table_col *c_name = table_find(&t, "name"), *c_sum = table_find(&t, "summary");
    char *b = output_tables_alloc(sp->nstacks, t.size);
    for (int64_t i = 0; i < sp->nstacks; i++) {
        table_put_str(b + (size_t)i * t.size, c_name, sp->stacks[i].name);
        table_put_str(b + (size_t)i * t.size, c_sum, sp->stacks[i].summary);
    }
    output_tables_write(g, "stack", &t, sp->nstacks, b, comm, rank, keys);
    free(b);
}

/* /axes/strategy: madmax templates or explicit plans, or the detailed
 * auto set's options (the degrees are the parallel axis): their texts
 * and values; `applies` 0 when the option is refused on every tuple and
 * system; vpp 0: "auto" (the fastest interleaving from 2 chunks up). */
static void output_tables_strategy(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                                   const output_units *keys)
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
    char *b = output_tables_alloc(sp->nstrats, t.size);
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
    output_tables_write(g, "strategy", &t, sp->nstrats, b, comm, rank, keys);
    free(b);
}

/* /axes/parallel: the detailed auto set's degree tuples (tp, pp, cp, ep;
 * dp is the rest of the devices), one entry "-" for the other sets
 * (their strategies carry their degrees). */
static void output_tables_parallel(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                                   const output_units *keys)
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
    char *b = output_tables_alloc(n, t.size);
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
    output_tables_write(g, "parallel", &t, n, b, comm, rank, keys);
    free(b);
}

/* /axes/task: name, type, frozen parts; detailed: precision, prompt and
 * decode tokens, frozen layers and a disaggregated prefill pool. */
static void output_tables_task(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                               const output_units *keys)
{
    table t;
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
    char *b = output_tables_alloc(sp->ntasks, t.size);
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
    output_tables_write(g, "task", &t, sp->ntasks, b, comm, rank, keys);
    free(b);
}

/* /axes/global_batch: the value and the model kinds it applies to. */
static void output_tables_batch(hid_t g, const spec *sp, MPI_Comm comm, int rank,
                                const output_units *keys)
{
    table t;
    table_init(&t);
    size_t o_gb = table_add(&t, "global_batch", TABLE_I64, 0);
    table_add(&t, "model_kinds", TABLE_STR, 16);
    const table_col *c_mk = table_find(&t, "model_kinds");
    char *b = output_tables_alloc(sp->nbatches, t.size);
    for (int64_t i = 0; i < sp->nbatches; i++) {
        unsigned mk = sp->batch_kinds[i];
        bool l = mk & (1u << MODEL_LLM), d = mk & (1u << MODEL_DLRM);
        table_put_i64(b + (size_t)i * t.size, o_gb, sp->batches[i]);
        table_put_str(b + (size_t)i * t.size, c_mk,
                      l && d ? "llm,dlrm" : l ? "llm" : "dlrm");
    }
    output_tables_write(g, "global_batch", &t, sp->nbatches, b, comm, rank, keys);
    free(b);
}

/* /axes/status: every status code with its name and explanation. */
static void output_tables_status(hid_t g, MPI_Comm comm, int rank,
                                 const output_units *keys)
{
    table t;
    table_init(&t);
    size_t o_code = table_add(&t, "code", TABLE_I32, 0);
    table_add(&t, "name", TABLE_STR, 32);
    table_add(&t, "text", TABLE_STR, 128);
    const table_col *c_name = table_find(&t, "name"), *c_text = table_find(&t, "text");
    char *b = output_tables_alloc(256, t.size);
    int64_t n = 0;
    for (int code = 0; code < 256; code++) {
        if (strcmp(status_name((status_code)code), "unknown") == 0)
            continue;
        char *row = b + (size_t)n++ * t.size;
        table_put_i32(row, o_code, code);
        table_put_str(row, c_name, status_name((status_code)code));
        table_put_str(row, c_text, status_text((status_code)code));
    }
    output_tables_write(g, "status", &t, n, b, comm, rank, keys);
    free(b);
}

void output_tables_axes(hid_t file, const space *s, MPI_Comm comm, int rank,
                        const output_units *keys)
{
    const spec *sp = s->sp;
    hid_t g = CHECK_H5ID(H5Gcreate2(file, "axes", H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT));
    if (sp->fidelity == EVAL_DETAILED)
        output_tables_detailed(g, sp, comm, rank, keys);
    else
        output_tables_madmax(g, sp, comm, rank, keys);
    output_tables_task(g, sp, comm, rank, keys);
    output_tables_batch(g, sp, comm, rank, keys);
    output_tables_stack(g, sp, comm, rank, keys);
    output_tables_strategy(g, sp, comm, rank, keys);
    output_tables_parallel(g, sp, comm, rank, keys);
    output_tables_status(g, comm, rank, keys);
    CHECK_H5(H5Gclose(g));
}

/* /skipped: per status code, how many combinations of the axes the
 * enumeration left out (a rule of the fidelity rejects them). */
void output_tables_skipped(hid_t file, const int64_t *by_code, MPI_Comm comm, int rank,
                           const output_units *keys)
{
    table t;
    table_init(&t);
    size_t o_code = table_add(&t, "code", TABLE_I32, 0);
    table_add(&t, "name", TABLE_STR, 32);
    size_t o_cnt = table_add(&t, "count", TABLE_I64, 0);
    const table_col *c_name = table_find(&t, "name");
    char *b = output_tables_alloc(SPACE_NCODES, t.size);
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
    output_tables_write(file, "skipped", &t, n, b, comm, rank, keys);
    free(b);
}

