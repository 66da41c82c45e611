/*
 * summary.c - the end-of-sweep tables (see summary.h).
 *
 * Invariant: a row printed is a point of the file, re-evaluated from its
 * id, so every number is the row's; groups are formed from the spec (the
 * hardware generation of each system), never from printed text.
 */
#include "summary.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost/bound.h"
#include "../../worker/check.h"
#include "../job.h"
#include "../../worker/results.h"

#define SUMMARY_BLOCK 65536
#define SUMMARY_STACK_W 14 /* the stack column (detailed) */

/* ------------------------------------------------------------ scan */

typedef struct summary_row {
    int64_t id;
    int32_t status;
    int32_t idx[SPACE_NAXES];
    double tok, smp, fits, sla;
} summary_row;

static hid_t summary_row_type(void)
{
    hid_t t = CHECK_H5ID(H5Tcreate(H5T_COMPOUND, sizeof(summary_row)));
    CHECK_H5(H5Tinsert(t, "id", HOFFSET(summary_row, id), H5T_NATIVE_INT64));
    CHECK_H5(H5Tinsert(t, "status", HOFFSET(summary_row, status), H5T_NATIVE_INT32));
    static const char *const idx[SPACE_NAXES] = {
        "model_idx", "system_idx", "task_idx", "batch_idx", "strategy_idx", "stack_idx",
        "parallel_idx"};
    for (int a = 0; a < SPACE_NAXES; a++)
        CHECK_H5(H5Tinsert(t, idx[a],
                           HOFFSET(summary_row, idx) + (size_t)a * sizeof(int32_t),
                           H5T_NATIVE_INT32));
    CHECK_H5(H5Tinsert(t, "tokens_per_s_per_device", HOFFSET(summary_row, tok),
                       H5T_NATIVE_DOUBLE));
    CHECK_H5(H5Tinsert(t, "samples_per_s_per_device", HOFFSET(summary_row, smp),
                       H5T_NATIVE_DOUBLE));
    CHECK_H5(H5Tinsert(t, "mem_fits", HOFFSET(summary_row, fits), H5T_NATIVE_DOUBLE));
    CHECK_H5(H5Tinsert(t, "sla_met", HOFFSET(summary_row, sla), H5T_NATIVE_DOUBLE));
    return t;
}

int summary_scan(const char *path, const space *s, winners_best *b, FILE *err)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        fprintf(err, "madsweep: summary: cannot open %s\n", path);
        return -1;
    }
    if (H5Lexists(f, "groups", H5P_DEFAULT) > 0) {
        CHECK_H5(H5Fclose(f));
        return 1; /* a reduced sweep: its rows are the kept ones only */
    }
    /* the logical rows (worker/results.h: /results and the parts) */
    results rd;
    char why[512];
    summary_row *blk = calloc(SUMMARY_BLOCK, sizeof *blk);
    if (!blk || results_open(&rd, f, why, sizeof why) != 0) {
        fprintf(err, "madsweep: summary: %s has no readable rows%s%s\n", path,
                blk ? ": " : "", blk ? why : "");
        free(blk);
        CHECK_H5(H5Fclose(f));
        return -1;
    }
    hid_t mt = summary_row_type();
    int64_t nrows = rd.common.rows;
    int rc = 0;
    for (int64_t at = 0; at < nrows && rc == 0; at += SUMMARY_BLOCK) {
        int64_t cnt = nrows - at < SUMMARY_BLOCK ? nrows - at : SUMMARY_BLOCK;
        if (results_read_as(&rd, at, cnt, mt, blk, why, sizeof why) != 0) {
            fprintf(err, "madsweep: summary: %s: %s\n", path, why);
            rc = -1;
        }
        for (int64_t i = 0; i < cnt && rc == 0; i++) {
            const summary_row *r = &blk[i];
            int64_t idx[SPACE_NAXES];
            int bad = 0;
            for (int a = 0; a < SPACE_NAXES; a++) {
                idx[a] = r->idx[a];
                bad |= idx[a] < 0 || idx[a] >= s->radix[a];
            }
            if (bad)
                continue;
            model_kind k = s->sp->models[idx[SPACE_MODEL]].kind;
            winners_consider(&b[winners_slot(s, idx)],
                             winners_rank(k, r->status, r->fits, r->sla, r->tok, r->smp),
                             r->id);
        }
    }
    CHECK_H5(H5Tclose(mt));
    results_close(&rd);
    CHECK_H5(H5Fclose(f));
    free(blk);
    return rc;
}

/* ------------------------------------------------------------ texts */

/* A detailed strategy in few words: the degrees above 1 (dp always),
 * then what differs from the defaults, e.g. "tp8 sp pp4 v2 dp18 z1 sel"
 * (vpp and micro-batch as the evaluation r resolved them). */
static void summary_strategy(const point_t *p, const result_t *r, char *buf, size_t size)
{
    if (p->fidelity != EVAL_DETAILED) {
        char d[PLAN_TEXT_MAX], e[PLAN_TEXT_MAX];
        plan_format(&p->task.dense, d, sizeof d);
        plan_format(&p->task.emb, e, sizeof e);
        snprintf(buf, size, "%s | %s", d, e);
        return;
    }
    const task_detailed_t *t = &p->task.detailed;
    size_t n = 0;
#define SUMMARY_ADD(...)                                                    \
    do {                                                                    \
        if (n < size)                                                       \
            n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__);          \
    } while (0)
    buf[0] = '\0';
    if (t->emb_sharding != TASK_EMB_NONE) {
        static const char *const sh[5] = {"", "table", "row", "column", "auto"};
        SUMMARY_ADD("dp%lld emb-%s%s", (long long)t->dp,
                    sh[t->emb_sharding >= 0 && t->emb_sharding <= 4 ? t->emb_sharding : 0],
                    t->overlap_dp_comm ? "" : " noovl");
        return;
    }
    if (t->tp > 1)
        SUMMARY_ADD("tp%lld%s ", (long long)t->tp, t->sequence_parallel ? " sp" : "");
    if (t->pp > 1) {
        SUMMARY_ADD("pp%lld ", (long long)t->pp);
        int64_t v = r->vpp_resolved > 0 ? r->vpp_resolved : t->vpp;
        if (v > 1)
            SUMMARY_ADD("v%lld ", (long long)v);
        if (t->schedule == TASK_SCHEDULE_GPIPE)
            SUMMARY_ADD("gpipe ");
    }
    SUMMARY_ADD("dp%lld", (long long)t->dp);
    if (t->cp > 1)
        SUMMARY_ADD(" cp%lld", (long long)t->cp);
    if (t->ep > 1)
        SUMMARY_ADD(" ep%lld", (long long)t->ep);
    if (t->zero_stage > 0)
        SUMMARY_ADD(" z%lld", (long long)t->zero_stage);
    if (t->recompute == TASK_RECOMPUTE_SELECTIVE)
        SUMMARY_ADD(" sel");
    else if (t->recompute == TASK_RECOMPUTE_FULL)
        SUMMARY_ADD(" full");
    int64_t mb = r->micro_batch_resolved > 0 ? r->micro_batch_resolved : t->micro_batch;
    if (p->task.kind != TASK_INFERENCE && mb > 1)
        SUMMARY_ADD(" mb%lld", (long long)mb);
    if (t->layout > 0)
        SUMMARY_ADD(" pp-inner");
    if (!t->overlap_dp_comm)
        SUMMARY_ADD(" noovl");
    if (p->prefill.on && isfinite(r->prefill_devices)) /* the GPUs column counts them */
        SUMMARY_ADD(" +%.0f prefill", r->prefill_devices);
#undef SUMMARY_ADD
}

/* " " and v * scale in `width` characters with `prec` decimals (prec < 0:
 * -prec significant digits), or "-" for a figure not computed. */
static void summary_print_number(FILE *out, int width, int prec, double v, double scale)
{
    if (!isfinite(v))
        fprintf(out, " %*s", width, "-");
    else if (prec >= 0)
        fprintf(out, " %*.*f", width, prec, v * scale);
    else
        fprintf(out, " %*.*g", width, -prec, v * scale);
}

/* ------------------------------------------------------------ tables */

/* The order of systems that puts one group's systems together: MAD-Max,
 * by name; detailed, by variant of a hardware generation, systems that
 * differ at most in their device count being one variant (the
 * generation's figures as scaled, its NIC, scale-up domain, pod,
 * oversubscription, collective, power and price); then by index. Sorting
 * by it forms the groups in O(n log n) (issue 29: a linear search per
 * system took minutes for 64,000 variants). */
static int summary_variant_cmp(const spec *sp, int64_t i, int64_t j)
{
#define SUMMARY_CMP(a, b)                                                              \
    do {                                                                               \
        if ((a) != (b))                                                                \
            return (a) < (b) ? -1 : 1;                                                 \
    } while (0)
    if (sp->fidelity != EVAL_DETAILED) {
        int c = strcmp(sp->systems[i].name, sp->systems[j].name);
        return c;
    }
    const topo_system_t *a = &sp->dsystems[i], *b = &sp->dsystems[j];
    const hw_t *x = &a->hw, *y = &b->hw;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    SUMMARY_CMP(a->devices_per_node, b->devices_per_node);
    SUMMARY_CMP(a->nic_gbps_per_device, b->nic_gbps_per_device);
    SUMMARY_CMP(a->pod_devices, b->pod_devices);
    SUMMARY_CMP(a->pod_oversubscription, b->pod_oversubscription);
    SUMMARY_CMP((int)a->algo, (int)b->algo);
    SUMMARY_CMP(x->nic_bytes_per_s, y->nic_bytes_per_s);
    SUMMARY_CMP(x->board_power_w, y->board_power_w);
    SUMMARY_CMP(x->idle_power_w, y->idle_power_w);
    SUMMARY_CMP(x->price_per_hour_usd, y->price_per_hour_usd);
    for (int k = 0; k < sp->nscale; k++)
        SUMMARY_CMP(sp->scale[i * SPEC_SCALE_MAX + k], sp->scale[j * SPEC_SCALE_MAX + k]);
    return 0;
#undef SUMMARY_CMP
}

typedef struct summary_group {
    int64_t first;       /* first system of the group */
    int64_t lo, hi;      /* device counts of its systems */
    winners_best best;
    char name[HW_NAME_MAX]; /* what the table calls it */
} summary_group;

/* The systems' groups, formed once for every table: of[i] the group of
 * system i, group k's first system, sizes and name. */
typedef struct summary_groups {
    int64_t n, *of;
    summary_group *base; /* first, lo, hi and name; best cleared */
} summary_groups;

/* qsort of system indices by summary_variant_cmp (the spec passed in a
 * wrapper: qsort has no context argument). */
typedef struct summary_key {
    const spec *sp;
    int64_t i;
} summary_key;

static int summary_key_cmp(const void *pa, const void *pb)
{
    const summary_key *a = pa, *b = pb;
    int c = summary_variant_cmp(a->sp, a->i, b->i);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* The name of group k: a detailed hardware generation's name when the
 * file has one variant of it (`same` groups of its generation), else the
 * variant's, its first system's name without the size ("h100-sxm-80g/
 * bf16x1.5/nicx2" for "h100-sxm-80g/16x8/bf16x1.5/nicx2"). */
static void summary_group_name(const spec *sp, summary_group *g, int64_t same)
{
    int64_t f = g->first;
    if (sp->fidelity != EVAL_DETAILED) {
        snprintf(g->name, sizeof g->name, "%s", sp->systems[f].name);
        return;
    }
    const char *hw = sp->dsystems[f].hw.name;
    const char *full = sp->dsystems[f].name;
    char size[48];
    snprintf(size, sizeof size, "/%lldx%lld", (long long)sp->systems[f].nodes,
             (long long)sp->systems[f].devices_per_node);
    const char *at = strstr(full, size);
    size_t len = strlen(size);
    if (same < 2)
        snprintf(g->name, sizeof g->name, "%s", hw);
    else if (at && (at[len] == '/' || at[len] == '\0'))
        snprintf(g->name, sizeof g->name, "%.*s%s", (int)(at - full), full, at + len);
    else
        snprintf(g->name, sizeof g->name, "%s", full);
}

/* Forms the groups of the spec's systems; -1 when out of memory. */
static int summary_groups_form(const spec *sp, int64_t nsys, summary_groups *gs)
{
    size_t n = (size_t)(nsys > 0 ? nsys : 1);
    summary_key *k = malloc(n * sizeof *k);
    int64_t *gen = malloc(n * sizeof *gen); /* a group's generation's first group */
    gs->of = malloc(n * sizeof *gs->of);
    gs->base = malloc(n * sizeof *gs->base);
    gs->n = 0;
    int rc = -1;
    if (!k || !gen || !gs->of || !gs->base)
        goto out;
    for (int64_t i = 0; i < nsys; i++)
        k[i] = (summary_key){sp, i};
    qsort(k, (size_t)nsys, sizeof *k, summary_key_cmp);
    for (int64_t r = 0; r < nsys; r++) {
        int64_t i = k[r].i, dev = sp->systems[i].devices;
        if (r == 0 || summary_variant_cmp(sp, k[r - 1].i, i) != 0) {
            /* a new group; of a new generation when the name differs */
            gen[gs->n] = r > 0 && (sp->fidelity != EVAL_DETAILED ||
                                   strcmp(sp->dsystems[k[r - 1].i].hw.name,
                                          sp->dsystems[i].hw.name) == 0)
                             ? gen[gs->n - 1]
                             : gs->n;
            gs->base[gs->n++] = (summary_group){.first = i, .lo = dev, .hi = dev,
                                                .best = {.value = 0.0, .id = -1}};
        }
        summary_group *g = &gs->base[gs->n - 1];
        g->lo = dev < g->lo ? dev : g->lo;
        g->hi = dev > g->hi ? dev : g->hi;
        gs->of[i] = gs->n - 1;
    }
    /* a generation's groups are consecutive: each is named knowing how
     * many its generation has */
    for (int64_t s = 0, e; s < gs->n; s = e) {
        for (e = s; e < gs->n && gen[e] == gen[s]; e++) {
        }
        for (int64_t q = s; q < e; q++)
            summary_group_name(sp, &gs->base[q], e - s);
    }
    rc = 0;
out:
    free(k);
    free(gen);
    return rc;
}

static int summary_cmp(const void *a, const void *b)
{
    const summary_group *x = a, *y = b;
    if ((x->best.id < 0) != (y->best.id < 0))
        return x->best.id < 0 ? 1 : -1;
    if (x->best.value != y->best.value)
        return x->best.value > y->best.value ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static void summary_header(FILE *out, int wname, bool serve, bool llm, bool det)
{
    const char *thr = llm ? "tok/s/GPU" : "smp/s/GPU";
    fprintf(out, "    %-*s %6s %7s  %-36s", wname, det ? "hardware" : "system",
            "GPUs", serve ? (llm ? "reqs" : "batch") : (llm ? "seqs" : "batch"),
            "strategy");
    if (det)
        fprintf(out, " %-*s", SUMMARY_STACK_W, "stack");
    if (serve && llm)
        fprintf(out, " %-6s %9s %9s", "mode", "TTFT ms", "TPOT ms");
    else if (serve)
        fprintf(out, " %9s", "latency ms");
    fprintf(out, " %10s", thr);
    if (!serve)
        fprintf(out, " %6s %9s", "MFU %", "iter s");
    fprintf(out, " %15s %9s %9s  %s\n", det ? "mem GB (of)" : "weights GB (of)",
            llm ? "J/tok" : "J/smp", llm ? "$/Mtok" : "$/Msmp", "bound by");
}

static void summary_row_print(FILE *out, int wname, const char *name,
                              const point_t *p, const result_t *r)
{
    bool serve = p->task.kind == TASK_INFERENCE, llm = p->model.kind == MODEL_LLM;
    bool det = p->fidelity == EVAL_DETAILED;
    char strat[96];
    summary_strategy(p, r, strat, sizeof strat);
    /* a disaggregated point's GPUs: both pools, as its figures per GPU */
    double gpus = (double)eval_devices(p) +
                  (p->prefill.on && isfinite(r->prefill_devices) ? r->prefill_devices : 0.0);
    fprintf(out, "    %-*s %6.0f %7lld  %-36s", wname, name, gpus, (long long)r->global_batch,
            strat);
    if (det)
        fprintf(out, " %-*s", SUMMARY_STACK_W, p->stack.name[0] ? p->stack.name : "ideal");
    if (serve && llm) {
        /* aggregated (one engine prefills and decodes) or disaggregated
         * (a prefill pool beside the decoding one) */
        fprintf(out, " %-6s", p->prefill.on ? "disagg" : "agg");
        summary_print_number(out, 9, 1, r->ttft_s, 1e3);
        summary_print_number(out, 9, 2, r->tpot_s, 1e3);
    } else if (serve) {
        summary_print_number(out, 9, 2, r->iteration_time_s, 1e3);
    }
    summary_print_number(out, 10, 1,
                         llm ? r->tokens_per_s_per_device : r->samples_per_s_per_device, 1.0);
    if (!serve) {
        summary_print_number(out, 6, 1, r->mfu, 100.0);
        summary_print_number(out, 9, -4, r->iteration_time_s, 1.0);
    }
    double mem = det ? r->mem_total_bytes_per_device : r->mem_weights_bytes_per_device;
    fprintf(out, " %8.1f (%4.0f)", mem / 1e9, r->mem_capacity_bytes_per_device / 1e9);
    summary_print_number(out, 9, -3, llm ? r->energy_per_token_j : r->energy_per_sample_j,
                         1.0);
    summary_print_number(out, 9, -3,
                         llm ? r->cost_per_million_tokens_usd : r->cost_per_sample_usd,
                         llm ? 1.0 : 1e6);
    fprintf(out, "  %s\n", bound_name(r->bound_code));
}

/* One model's rows of one task's table; false when a stop signal cut
 * it short (each row re-evaluates a point: 10^5 variants take a while). */
static bool summary_model(FILE *out, const space *s, const winners_best *b,
                          int64_t m, int64_t t, const summary_groups *gs,
                          summary_group *g, space_cursor *cur, engine *e)
{
    const spec *sp = s->sp;
    int64_t nsys = s->radix[SPACE_SYSTEM], ng = gs->n;
    int wname = 12;
    memcpy(g, gs->base, (size_t)ng * sizeof *g);
    for (int64_t i = 0; i < nsys; i++) {
        const winners_best *x = &b[(m * nsys + i) * s->radix[SPACE_TASK] + t];
        if (x->id >= 0)
            winners_consider(&g[gs->of[i]].best, x->value, x->id);
    }
    for (int64_t k = 0; k < ng; k++) {
        int w = (int)strlen(g[k].name);
        wname = w > wname ? w : wname;
    }
    qsort(g, (size_t)ng, sizeof *g, summary_cmp);
    const model_t *md = &sp->models[m];
    bool llm = md->kind == MODEL_LLM, serve = sp->tasks[t].kind == TASK_INFERENCE;
    fprintf(out, "  %s (%s)\n", md->name, llm ? "batch in sequences" : "batch in samples");
    summary_header(out, wname, serve, llm, sp->fidelity == EVAL_DETAILED);
    for (int64_t k = 0; k < ng; k++) {
        const char *name = g[k].name;
        result_t r;
        if (job_stop_signal() != 0)
            return false;
        if (g[k].best.id < 0 || space_point(s, cur, g[k].best.id, NULL) != STATUS_OK ||
            eval_run(&cur->p, e, &r, NULL) != STATUS_OK) {
            char sizes[48];
            if (g[k].lo == g[k].hi)
                snprintf(sizes, sizeof sizes, "%lld", (long long)g[k].lo);
            else
                snprintf(sizes, sizeof sizes, "%lld-%lld", (long long)g[k].lo,
                         (long long)g[k].hi);
            fprintf(out, "    %-*s %6s  no point runs and fits in memory%s (%s GPUs)\n",
                    wname, name, "-", serve ? " and meets the SLA" : "", sizes);
            continue;
        }
        summary_row_print(out, wname, name, &cur->p, &r);
    }
    return true;
}

void summary_print(FILE *out, const space *s, const winners_best *b)
{
    const spec *sp = s->sp;
    bool det = sp->fidelity == EVAL_DETAILED;
    summary_group *g = malloc((size_t)s->radix[SPACE_SYSTEM] * sizeof *g);
    space_cursor *cur = malloc(sizeof *cur);
    summary_groups gs = {0};
    if (!g || !cur || summary_groups_form(sp, s->radix[SPACE_SYSTEM], &gs) != 0 ||
        space_cursor_init(cur, s) != 0) {
        free(g);
        free(cur);
        free(gs.of);
        free(gs.base);
        return;
    }
    engine e;
    engine_init(&e, false);
    fprintf(out, "best point per model and %s for each task, by tokens/s per GPU "
            "(LLMs) or samples/s per GPU (DLRMs), over %s, batches%s and "
            "strategies; only points that run and fit in memory (status ok, "
            "mem_fits = 1); tasks are never ranked against each other\n",
            det ? "hardware generation (each variant of it apart when the sweep has "
                  "several: scaled figures, NIC, domain, pod, collective)"
                : "system",
            det ? "cluster sizes" : "plans", det ? ", software stacks" : "");
    if (!det)
        fprintf(out, "note: the MAD-Max fidelity prices collectives by bandwidth "
                "alone, with no latency term (comm_latency_modeled = 0): plans of many "
                "small messages, serving above all, look faster than they are\n");
    for (int64_t t = 0; t < s->radix[SPACE_TASK]; t++) {
        const spec_task *k = &sp->tasks[t];
        bool serve = k->kind == TASK_INFERENCE;
        char sla[96] = "no SLA";
        if (serve && (k->ttft_max_s > 0.0 || k->tpot_max_s > 0.0))
            snprintf(sla, sizeof sla, "SLA: TTFT <= %g ms, TPOT <= %g ms",
                     1e3 * k->ttft_max_s, 1e3 * k->tpot_max_s);
        fprintf(out, "\n%s: %s (%s%s)\n", k->name,
                serve ? "serving" : k->kind == TASK_FINETUNE ? "fine-tuning" : "pretraining",
                serve ? "output tokens/s per GPU with the prefill, at the SLA, per workload; "
                        "batch = requests in flight; "
                      : "energy and cost per trained token",
                serve ? sla : "");
        bool whole = true;
        for (int64_t m = 0; m < s->radix[SPACE_MODEL] && whole; m++)
            whole = summary_model(out, s, b, m, t, &gs, g, cur, &e);
        if (!whole) {
            fprintf(out, "(the summary stopped by a signal; the file is complete: "
                    "`madsweep best` ranks its rows)\n");
            break;
        }
    }
    engine_free(&e);
    space_cursor_free(cur);
    free(g);
    free(cur);
    free(gs.of);
    free(gs.base);
}
