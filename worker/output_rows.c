/*
 * output_rows.c - the logical row, its kinds and their storage, packing,
 * and the units of every column of the file (see output_rows.h).
 *
 * Invariants: the logical row of a fidelity never depends on the spec
 * (its columns are format 1's /results, in the same order); a kind's
 * stored columns are a superset of every column that can hold a value
 * other than its fill on its rows (output_rows_carry, checked on every
 * row written); the common part holds exactly the figures every kind of
 * the spec carries, so a row is its common part plus at most one part.
 */
#include "output_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/bound.h"
#include "../cost/detailed.h"
#include "attr.h"
#include "check.h"
#include "digest.h"

const char *const output_kind_names[OUTPUT_NKINDS] = {"training", "serving",
                                                      "serving_disagg", "dlrm"};

/* ------------------------------------------------------------ kinds */

#define K_T (1u << OUTPUT_KIND_TRAINING)
#define K_S (1u << OUTPUT_KIND_SERVING)
#define K_D (1u << OUTPUT_KIND_DISAGG)
#define K_R (1u << OUTPUT_KIND_DLRM)
#define K_LLM (K_T | K_S | K_D)
#define K_SERVE (K_S | K_D)
#define K_ALL (K_LLM | K_R)
#define K_ELASTIC 0x100u /* every kind when the spec has elasticities = true */

/* The kinds whose rows carry a figure, by fidelity (madmax, detailed):
 * what cost/eval.c's lists of computed figures set for the kind, what
 * eval_derive() derives for every row (memory verdict, energy and cost;
 * tokens for an LLM only), what each family writes beyond its list
 * (cost/detailed: the resolved micro-batch, recompute and vpp of an LLM,
 * a DLRM's events and table placement, a disaggregated pool's figures)
 * and the elasticities (cost/elastic.c). A figure not listed is carried
 * by every kind of both fidelities. Checked on every row written
 * (output_rows_split): a kind that sets a figure not listed for it stops
 * the run, never loses the value. */
static const struct output_rows_carry_row {
    const char *name;
    unsigned madmax, detailed;
} output_rows_carry[] = {
    {"compute_emb_s", K_ALL, K_R},
    {"events_compute", K_ALL, K_T | K_R},
    {"events_comm", K_ALL, K_T | K_R},
    {"tokens_per_s", K_LLM, K_LLM},
    {"tokens_per_s_per_device", K_LLM, K_LLM},
    {"energy_per_token_j", K_LLM, K_LLM},
    {"cost_per_million_tokens_usd", K_LLM, K_LLM},
    {"mem_grads_bytes_per_device", 0, K_T | K_R},
    {"mem_optimizer_bytes_per_device", 0, K_T | K_R},
    {"mem_activations_bytes_per_device", 0, K_ALL},
    {"mem_kv_cache_bytes_per_device", 0, K_LLM},
    {"mem_total_bytes_per_device", 0, K_ALL},
    {"comm_p2p_s", 0, K_LLM},
    {"pipeline_bubble_s", 0, K_T},
    {"mfu", 0, K_ALL},
    {"ttft_s", 0, K_SERVE},
    {"tpot_s", 0, K_SERVE},
    {"output_tokens_per_s", 0, K_SERVE},
    {"output_tokens_per_s_per_device", 0, K_SERVE},
    {"total_tokens_per_s", 0, K_SERVE},
    {"requests_per_s", 0, K_SERVE},
    {"tokens_per_s_per_user", 0, K_SERVE},
    {"ttft_p90_s", 0, K_SERVE},
    {"ttft_p99_s", 0, K_SERVE},
    {"itl_p50_s", 0, K_SERVE},
    {"itl_p99_s", 0, K_SERVE},
    {"concurrency_resolved", 0, K_SERVE},
    {"concurrency_max", 0, K_SERVE},
    {"kv_use", 0, K_SERVE},
    {"goodput_requests_per_s", 0, K_SERVE},
    {"sla_met", 0, K_SERVE},
    {"ttft_wave_max_s", 0, K_SERVE},
    {"prefill_devices", 0, K_D},
    {"prefill_replicas_matched", 0, K_D},
    {"prefill_capacity_requests_per_s", 0, K_D},
    {"decode_capacity_requests_per_s", 0, K_D},
    {"prefill_decode_rate_ratio", 0, K_D},
    {"kv_transfer_s", 0, K_D},
    {"kv_transfer_exposed_s", 0, K_D},
    {"iteration_time_lo_s", 0, K_ALL},
    {"iteration_time_hi_s", 0, K_ALL},
    {"micro_batch_resolved", 0, K_LLM},
    {"recompute_resolved", 0, K_LLM},
    {"vpp_resolved", 0, K_LLM},
    {"emb_dp_tables", 0, K_R},
    {"emb_whole_tables", 0, K_R},
    {"emb_split_tables", 0, K_R},
    {"compute_math_s", 0, K_LLM},
    {"compute_memory_s", 0, K_LLM},
    {"optimizer_s", 0, K_T},
    {"comm_exposed_tp_s", 0, K_LLM},
    {"comm_exposed_cp_s", 0, K_LLM},
    {"comm_exposed_ep_s", 0, K_LLM},
    {"comm_exposed_pp_s", 0, K_LLM},
    {"comm_exposed_dp_s", 0, K_LLM},
    {"comm_exposed_scaleup_s", 0, K_LLM},
    {"comm_exposed_scaleout_s", 0, K_LLM},
    {"elasticity_compute", K_ELASTIC, K_ELASTIC},
    {"elasticity_hbm_bw", K_ELASTIC, K_ELASTIC},
    {"elasticity_scaleup_bw", K_ELASTIC, K_ELASTIC},
    {"elasticity_scaleout_bw", K_ELASTIC, K_ELASTIC},
};

/* The kinds of the planned spec that carry result field f. */
static unsigned output_rows_carriers(const output_rows *r, const result_field *f)
{
    for (size_t i = 0; i < sizeof output_rows_carry / sizeof output_rows_carry[0]; i++) {
        if (strcmp(output_rows_carry[i].name, f->name) != 0)
            continue;
        unsigned m = r->fidelity == EVAL_DETAILED ? output_rows_carry[i].detailed
                                                  : output_rows_carry[i].madmax;
        return m & K_ELASTIC ? (r->sp->elasticities ? K_ALL : 0u) : m;
    }
    return K_ALL;
}

output_kind output_rows_kind(const output_rows *r, int64_t m, int64_t t)
{
    const spec_task *k = &r->sp->tasks[t];
    if (r->sp->models[m].kind == MODEL_DLRM)
        return OUTPUT_KIND_DLRM;
    if (k->kind != TASK_INFERENCE)
        return OUTPUT_KIND_TRAINING;
    return r->fidelity == EVAL_DETAILED && k->prefill.on ? OUTPUT_KIND_DISAGG
                                                         : OUTPUT_KIND_SERVING;
}

int output_rows_part_of(const output_rows *r, const char *row)
{
    if (!r->sp)
        return -1;
    int32_t m = table_get_i32(row, r->idx[SPACE_MODEL]);
    int32_t t = table_get_i32(row, r->idx[SPACE_TASK]);
    return r->part_of[output_rows_kind(r, m, t)];
}

/* Adds column c of the logical row to part x (its spans merge when the
 * columns are adjacent in both layouts). */
static void output_rows_take(output_part *x, const table_col *c)
{
    size_t to = table_add(&x->t, c->name, c->kind, c->len);
    output_span *last = x->nspan > 0 ? &x->span[x->nspan - 1] : NULL;
    if (last && last->from + last->len == c->off && last->to + last->len == to) {
        last->len += (uint32_t)c->len;
        return;
    }
    x->span[x->nspan++] = (output_span){(uint32_t)c->off, (uint32_t)to, (uint32_t)c->len};
}

static void output_rows_part_init(output_part *x, const char *name)
{
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    table_init(&x->t);
}

/* The figure of column c, or NULL for the columns before the figures. */
static const result_field *output_rows_figure(const output_rows *r, const table_col *c)
{
    for (size_t i = 0; i < result_nfields; i++)
        if (r->field[i] == c->off)
            return &result_fields[i];
    return NULL;
}

void output_rows_plan(output_rows *r, const spec *sp)
{
    r->sp = sp;
    memset(r->present, 0, sizeof r->present);
    for (int64_t m = 0; m < sp->nmodels; m++)
        for (int64_t t = 0; t < sp->ntasks; t++)
            r->present[output_rows_kind(r, m, t)] = true;
    unsigned present = 0;
    for (int k = 0; k < OUTPUT_NKINDS; k++)
        present |= r->present[k] ? 1u << k : 0u;
    /* the common part: the columns before the figures, and the figures
     * every kind of the spec carries; a kind's part: the rest it carries */
    output_part own[OUTPUT_NKINDS];
    output_rows_part_init(&r->common, "results");
    for (int k = 0; k < OUTPUT_NKINDS; k++) {
        output_rows_part_init(&own[k], output_kind_names[k]);
        r->nloose[k] = 0;
    }
    for (int i = 0; i < r->t.ncols; i++) {
        const table_col *c = &r->t.col[i];
        const result_field *f = output_rows_figure(r, c);
        unsigned carry = f ? output_rows_carriers(r, f) : K_ALL;
        if ((carry & present) == present) {
            output_rows_take(&r->common, c);
            continue;
        }
        for (int k = 0; k < OUTPUT_NKINDS; k++) {
            if (!(present & (1u << k)))
                continue;
            if (carry & (1u << k)) {
                output_rows_take(&own[k], c);
            } else {
                output_span *l = &r->loose[k][r->nloose[k]];
                output_span *prev = r->nloose[k] > 0 ? l - 1 : NULL;
                if (prev && prev->from + prev->len == c->off)
                    prev->len += (uint32_t)c->len;
                else
                    *l = (output_span){(uint32_t)c->off, 0, (uint32_t)c->len}, r->nloose[k]++;
            }
        }
    }
    r->nparts = 0;
    for (int k = 0; k < OUTPUT_NKINDS; k++) {
        r->part_of[k] = -1;
        if ((present & (1u << k)) && own[k].t.ncols > 0) {
            r->part_of[k] = r->nparts;
            r->part[r->nparts++] = own[k];
        }
    }
}

/* Does the logical row hold its fill in every span of l (n of them)? */
static int output_rows_loose_bad(const output_rows *r, const char *row, const output_span *l,
                                 int n)
{
    static const char zeros[OUTPUT_ROW_MAX];
    const char *fill = output_rows_zeroed(table_get_i32(row, r->status)) ? zeros : r->fill;
    for (int i = 0; i < n; i++)
        if (memcmp(row + l[i].from, fill + l[i].from, l[i].len) != 0)
            return i;
    return -1;
}

/* The internal error of a row whose kind sets a figure it does not carry. */
static _Noreturn void output_rows_dropped(const output_rows *r, const char *row,
                                          const output_span *l, output_kind k)
{
    const char *name = "?";
    for (int i = 0; i < r->t.ncols; i++)
        if (r->t.col[i].off >= l->from && r->t.col[i].off < l->from + l->len &&
            memcmp(row + r->t.col[i].off, r->fill + r->t.col[i].off, r->t.col[i].len) != 0)
            name = r->t.col[i].name;
    char msg[300];
    snprintf(msg, sizeof msg, "internal error: point %lld, a %s row, has a value in "
             "column %s, which the file does not store for its kind "
             "(worker/output_rows.c: output_rows_carry)",
             (long long)table_get_i64(row, r->id), output_kind_names[k], name);
    check_die(msg, __FILE__, __LINE__);
}

static void output_rows_copy(char *dst, const char *row, const output_part *x)
{
    for (int i = 0; i < x->nspan; i++)
        memcpy(dst + x->span[i].to, row + x->span[i].from, x->span[i].len);
}

void output_rows_split(const output_rows *r, const char *rows, int64_t n, char *common,
                       char *const *parts, int64_t *counts)
{
    for (int p = 0; p < r->nparts; p++)
        counts[p] = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *row = rows + (size_t)i * r->t.size;
        output_rows_copy(common + (size_t)i * r->common.t.size, row, &r->common);
        if (!r->sp)
            continue;
        output_kind k = output_rows_kind(r, table_get_i32(row, r->idx[SPACE_MODEL]),
                                         table_get_i32(row, r->idx[SPACE_TASK]));
        int bad = output_rows_loose_bad(r, row, r->loose[k], r->nloose[k]);
        if (bad >= 0)
            output_rows_dropped(r, row, &r->loose[k][bad], k);
        int p = r->part_of[k];
        if (p >= 0) {
            const output_part *x = &r->part[p];
            output_rows_copy(parts[p] + (size_t)counts[p]++ * x->t.size, row, x);
        }
    }
}

uint64_t output_rows_digest(const output_rows *r, uint64_t d, const char *row)
{
    char own[OUTPUT_ROW_MAX];
    output_rows_copy(own, row, &r->common);
    d = digest_row(d, own, r->common.t.size);
    int p = output_rows_part_of(r, row);
    if (p >= 0) {
        output_rows_copy(own, row, &r->part[p]);
        d = digest_row(d, own, r->part[p].t.size);
    }
    return d;
}

uint64_t output_rows_digest_n(const output_rows *r, const char *rows, int64_t n)
{
    uint64_t d = DIGEST_SEED;
    for (int64_t i = 0; i < n; i++)
        d = output_rows_digest(r, d, rows + (size_t)i * r->t.size);
    return d;
}

/* ------------------------------------------------------------ the logical row */

void output_rows_idx_name(int a, char *buf, size_t size)
{
    snprintf(buf, size, "%s_idx", a == SPACE_BATCH ? "batch" : space_axis_names[a]);
}

/* Integer strategy columns of detailed rows, in column order. */
static const char *const output_rows_strat_int[OUTPUT_NSTRAT_INT] = {
    "tp", "pp", "dp", "cp", "ep", "vpp", "zero_stage", "micro_batch", "sp"};

/* Text strategy columns of detailed rows and their widths (the longest
 * value, "1f1b-interleaved", "selective", "tp-cp-dp-pp", "dp+tp",
 * "column", plus the NUL). */
static const char *const output_rows_strat_str[OUTPUT_NSTRAT_STR] = {
    "schedule", "recompute", "layout", "overlap", "emb_sharding"};
static const size_t output_rows_strat_width[OUTPUT_NSTRAT_STR] = {17, 10, 12, 6, 7};

void output_rows_init(output_rows *r, eval_fidelity fidelity)
{
    memset(r, 0, sizeof *r);
    r->fidelity = fidelity;
    table_init(&r->t);
    r->id = table_add(&r->t, "id", TABLE_I64, 0);
    r->status = table_add(&r->t, "status", TABLE_I32, 0);
    for (int a = 0; a < SPACE_NAXES; a++) {
        char name[TABLE_NAME_MAX];
        output_rows_idx_name(a, name, sizeof name);
        r->idx[a] = table_add(&r->t, name, TABLE_I32, 0);
    }
    r->devices = table_add(&r->t, "devices", TABLE_I64, 0);
    if (fidelity == EVAL_DETAILED) {
        /* the strategy as named columns, then the software stack the
         * point ran on (the stack axis' name: rows are self-describing) */
        for (int k = 0; k < OUTPUT_NSTRAT_INT; k++)
            r->strat_int[k] = table_add(&r->t, output_rows_strat_int[k], TABLE_I32, 0);
        for (int k = 0; k < OUTPUT_NSTRAT_STR; k++) {
            table_add(&r->t, output_rows_strat_str[k], TABLE_STR, output_rows_strat_width[k]);
            r->strat_str[k] = table_find(&r->t, output_rows_strat_str[k]);
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
    if (r->t.size > OUTPUT_ROW_MAX)
        check_die("internal error: a logical row exceeds OUTPUT_ROW_MAX", __FILE__,
                  __LINE__);
    /* the fills: NaN in every float, zeros elsewhere */
    const double nan = (double)NAN;
    for (int i = 0; i < r->t.ncols; i++)
        if (r->t.col[i].kind == TABLE_F64)
            table_put_f64(r->fill, r->t.col[i].off, nan);
    /* unplanned: everything common, no part */
    output_rows_part_init(&r->common, "results");
    for (int i = 0; i < r->t.ncols; i++)
        output_rows_take(&r->common, &r->t.col[i]);
    for (int k = 0; k < OUTPUT_NKINDS; k++)
        r->part_of[k] = -1;
}

/* "tcdp" (a layout by initials, innermost first) as "tp-cp-dp-pp". */
static void output_rows_layout_words(const char *initials, char *buf, size_t size)
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

void output_rows_texts_of(const point_t *p, output_rows_texts *x)
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
        output_rows_layout_words(last ? last + 1 : opt, x->layout, sizeof x->layout);
    }
    snprintf(x->overlap, sizeof x->overlap, "%s",
             t->overlap_dp_comm && t->overlap_tp_comm ? "dp+tp"
             : t->overlap_dp_comm                     ? "dp"
             : t->overlap_tp_comm                     ? "tp"
                                                      : "none");
}

/* The detailed strategy columns of a row: the values evaluated (vpp and
 * micro_batch as the evaluation resolved "auto"). */
static void output_rows_pack_strategy(const output_rows *r, char *buf, const point_t *p,
                                      const result_t *res, const output_rows_texts *x)
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

void output_rows_pack(const output_rows *r, char *buf, int64_t id,
                      const int64_t idx[SPACE_NAXES], const point_t *p,
                      const result_t *res, const output_rows_texts *texts)
{
    memset(buf, 0, r->t.size);
    table_put_i64(buf, r->id, id);
    table_put_i32(buf, r->status, res->status);
    for (int a = 0; a < SPACE_NAXES; a++)
        table_put_i32(buf, r->idx[a], (int32_t)idx[a]);
    table_put_i64(buf, r->devices, eval_devices(p));
    output_rows_texts own;
    if (!texts) {
        output_rows_texts_of(p, &own);
        texts = &own;
    }
    if (r->fidelity == EVAL_DETAILED) {
        output_rows_pack_strategy(r, buf, p, res, texts);
        table_put_str(buf, r->stack, p->stack.name);
    } else {
        table_put_str(buf, r->dense, texts->dense);
        table_put_str(buf, r->emb, texts->emb);
    }
    table_put_str(buf, r->bound, bound_name(res->bound_code));
    for (size_t i = 0; i < result_nfields; i++)
        memcpy(buf + r->field[i], (const char *)res + result_fields[i].offset, 8);
}

/* ------------------------------------------------------------ units */

/* Units of the numeric columns of every table that are neither figures
 * of result_fields[] (those carry their own unit) nor input keys (their
 * units come from the driver's key table: output_meta.key_units). Looked
 * up before the keys: /parts/index's `serving` is a count of rows, not
 * the stack key of that name. */
static const struct output_rows_unit_row {
    const char *col, *unit;
} output_rows_units[] = {
    {"id", "point id"},
    {"status", "status code (/axes/status)"},
    {"code", "status code (/axes/status)"},
    {"count", "points"},
    {"dense_params", "parameters"},
    {"emb_params", "parameters"},
    {"params", "parameters"},
    {"total_flops", "FLOP/sample (forward)"},
    {"flops_per_sequence", "FLOP/sequence"},
    /* /axes/system (madmax): the bandwidths the cost model uses */
    {"eff_intra_bw", "bytes/s per device, one direction"},
    {"eff_inter_bw", "bytes/s per device, one direction"},
    {"prefill_tp", "tensor-parallel degree of a prefill replica (0: colocated)"},
    {"prefill_pp", "pipeline stages of a prefill replica (0: colocated)"},
    {"prefill_devices_given", "devices (0: \"auto\", rate-matched, or colocated)"},
    {"sp", "bool (sequence parallelism)"},
    {"recompute", "enum (0 none, 1 selective, 2 full)"},
    {"applies", "bool"},
    {"evaluated", "points"},
    {"ok", "points"},
    {"kept", "points"},
    {"group", "index into /groups"},
    {"winner_id", "point id (-1: none)"},
    {"winner_value", "tokens/s or samples/s per device (the summary's figure)"},
    /* /parts/index: the chunk's first row, the rows of each part before it */
    {"row", "rows of /results before the chunk's first"},
    {"training", "rows of the part before the chunk's first row"},
    {"serving", "rows of the part before the chunk's first row"},
    {"serving_disagg", "rows of the part before the chunk's first row"},
    {"dlrm", "rows of the part before the chunk's first row"},
};


static const char *const output_rows_axis_units[SPACE_NAXES] = {
    "index into /axes/model", "index into /axes/system",
    "index into /axes/task", "index into /axes/global_batch",
    "index into /axes/strategy", "index into /axes/stack", "index into /axes/parallel"};

const char *output_rows_unit(const table_col *c, const output_units *keys)
{
    if (c->kind == TABLE_STR)
        return "text";
    if (strncmp(c->name, "infeasible_", 11) == 0 || strncmp(c->name, "invalid_", 8) == 0)
        return "points"; /* /groups: points per status code */
    for (int a = 0; a < SPACE_NAXES; a++) {
        char idx[TABLE_NAME_MAX];
        output_rows_idx_name(a, idx, sizeof idx);
        if (strcmp(c->name, idx) == 0)
            return output_rows_axis_units[a];
    }
    if (strncmp(c->name, "scale_", 6) == 0)
        return "factor (times the hardware's figure)";
    const result_field *f = result_find(c->name);
    if (f)
        return f->unit;
    for (size_t i = 0; i < sizeof output_rows_units / sizeof output_rows_units[0]; i++)
        if (strcmp(output_rows_units[i].col, c->name) == 0)
            return output_rows_units[i].unit;
    for (size_t i = 0; keys && i < keys->n; i++)
        if (strcmp(keys->u[i].column, c->name) == 0)
            return keys->u[i].unit;
    check_die("internal error: a column of the sweep file has no unit",
              __FILE__, __LINE__);
}

void output_rows_units_attr(hid_t obj, const table *t, const output_units *keys)
{
    enum { W = 48 };
    char *u = calloc((size_t)t->ncols, W);
    if (!u)
        check_die("out of memory", __FILE__, __LINE__);
    for (int i = 0; i < t->ncols; i++)
        snprintf(u + (size_t)i * W, W, "%s", output_rows_unit(&t->col[i], keys));
    attr_strs(obj, "units", u, t->ncols, W);
    free(u);
}

