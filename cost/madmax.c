/*
 * madmax.c - the MAD-Max fidelity (validity rules and trace builders).
 *
 * How the reference's name-based dependencies map to handles: the
 * reference starts an event after every event of the other stream whose
 * name contains a dependency string, searching only the current phase
 * (forward and backward build separate streams). Since end times never
 * decrease within a stream, that is the end of the last matching event,
 * which is what each handle below holds; a dependency that matches
 * nothing (a layer that does not exist, a collective that the plan does
 * not emit, a compute name searched in the comm stream) is ENGINE_NONE.
 * The reference's quirks are kept on purpose, for parity:
 *   - backward gradient bytes divide by a shard factor that shrinks as
 *     the level loop passes fsdp/tp levels (so "tp,ddp" all-reduces full
 *     layers while "ddp,tp" all-reduces 1/tp of them);
 *   - an embedding ddp level communicates in backward only when ddp is
 *     the plan's first level;
 *   - DLRM FSDP all-gathers wait for the compute two layers back, and
 *     DLRM TP all-reduces activations after every second layer;
 *   - LLM fine-tuning sends gradients only for layers below
 *     min_frozen_layer.
 */
#include "madmax.h"

#include "autoplan.h"

#include <stdbool.h>
#include <string.h>

typedef struct mm_ctx {
    const model_t *m;
    const cluster_t *c;
    const task_t *t;
    engine *e;
    task_factors f;
    double eff_flops;
    double lookup_bytes_per_device;
    double bpp; /* bytes per dense parameter */
    /* summed durations */
    double gemm, emb, a2a, ar, ag, rs;
} mm_ctx;

/* ---------------------------------------------------------------- rules */

static status_code mm_check_plan(const plan_t *p, bool dense,
                                 const point_t *pt)
{
    const cluster_t *c = &pt->cluster;
    if (p->nlevels < 1)
        return STATUS_INVALID_LEVELS;
    bool seen[PLAN_NSTRATEGIES] = {false};
    int nseen = 0;
    int64_t total = 1;
    for (int i = 0; i < p->nlevels; i++) {
        plan_strategy s = p->strategy[i];
        bool ok = dense ? (s == PLAN_DDP || s == PLAN_FSDP || s == PLAN_TP)
                        : (s == PLAN_MP || s == PLAN_DDP);
        if (!ok)
            return STATUS_INVALID_STRATEGY;
        if (seen[s])
            return STATUS_INVALID_REPEAT;
        if (s == PLAN_FSDP && nseen != 0)
            return STATUS_INVALID_FSDP_FIRST;
        if (dense && s == PLAN_TP && pt->model.kind == MODEL_DLRM &&
            (pt->model.bot_mlp_layers % 2 != 0 ||
             pt->model.top_mlp_layers % 2 != 0))
            return STATUS_INVALID_TP_ODD_LAYERS;
        seen[s] = true;
        nseen++;
        if (p->degree[i] <= 1)
            return STATUS_INVALID_DEGREE_ONE;
        total *= p->degree[i];
    }
    if (total != c->devices)
        return STATUS_INVALID_PRODUCT;
    if (p->nlevels >= 3)
        return STATUS_INVALID_LEVELS;
    if (p->degree[0] != c->devices_per_node && p->degree[0] != c->devices)
        return STATUS_INVALID_FIRST_DEGREE;
    return STATUS_OK;
}

static status_code mm_check(const point_t *p, const char **where)
{
    const model_t *m = &p->model;
    const task_t *t = &p->task;
    if (m->kind != MODEL_DLRM && m->kind != MODEL_LLM) {
        *where = "model";
        return STATUS_INVALID_FIDELITY;
    }
    if (cluster_eff_flops(&p->cluster, m->bytes_per_dense_param) == 0.0) {
        *where = "model";
        int64_t b = m->bytes_per_dense_param;
        return (b == 8 || b == 4 || b == 2 || b == 1) ? STATUS_INVALID_VALUE
                                                      : STATUS_INVALID_DTYPE;
    }
    if (t->local_batch_dense <= 0 || t->local_batch_emb <= 0) {
        *where = "task";
        return STATUS_INVALID_VALUE;
    }
    /* the reference checks DLRM MLPs before embeddings, LLM the reverse */
    const plan_t *first = m->kind == MODEL_DLRM ? &t->dense : &t->emb;
    const plan_t *second = m->kind == MODEL_DLRM ? &t->emb : &t->dense;
    status_code rc = mm_check_plan(first, first == &t->dense, p);
    if (rc != STATUS_OK) {
        *where = first == &t->dense ? "dense plan" : "embedding plan";
        return rc;
    }
    rc = mm_check_plan(second, second == &t->dense, p);
    if (rc != STATUS_OK) {
        *where = second == &t->dense ? "dense plan" : "embedding plan";
        return rc;
    }
    task_factors f;
    task_factors_of(t, &f);
    if (f.global_batch_dense != f.global_batch_emb) {
        *where = "task";
        return STATUS_INVALID_BATCH_MISMATCH;
    }
    if (t->kind == TASK_FINETUNE) {
        bool all_frozen = m->kind == MODEL_DLRM
                              ? (t->freeze_top_mlp && t->freeze_bot_mlp &&
                                 t->freeze_emb)
                              : (t->freeze_emb && t->freeze_dense);
        if (all_frozen) {
            *where = "task";
            return STATUS_INVALID_NOTHING_TRAINED;
        }
    }
    return STATUS_OK;
}

/* --------------------------------------------------------------- events */

static engine_label mm_label(engine_part part, engine_op op, int bwd,
                             int64_t layer)
{
    engine_label l = {(uint8_t)part, (uint8_t)op, (uint8_t)bwd,
                      (int32_t)layer};
    return l;
}

static engine_ev mm_comp(mm_ctx *x, double dur, const engine_ev *deps,
                         int ndeps, engine_label l)
{
    return engine_add(x->e, ENGINE_COMP, dur, deps, ndeps, l);
}

static engine_ev mm_comm(mm_ctx *x, double dur, engine_ev dep, engine_label l)
{
    return engine_add(x->e, ENGINE_COMM, dur, &dep, 1, l);
}

static double mm_bw(const mm_ctx *x, cluster_coll coll, const plan_t *p,
                    int level)
{
    return cluster_level_bw(x->c, coll, p->nlevels, level);
}

/* Embedding lookup compute (forward or backward). */
static engine_ev mm_emb_compute(mm_ctx *x, int bwd, engine_ev dep)
{
    double t = x->lookup_bytes_per_device / x->c->eff_mem_bw;
    x->emb += t;
    return mm_comp(x, t, &dep, 1, mm_label(ENGINE_PART_EMB, ENGINE_OP_COMPUTE,
                                           bwd, -1));
}

/* Embedding communication; returns the last event emitted (the one a
 * later "EMB_?_c" dependency resolves to), or ENGINE_NONE. */
static engine_ev mm_emb_comm(mm_ctx *x, int bwd, engine_ev dep)
{
    const plan_t *p = &x->t->emb;
    engine_ev last = ENGINE_NONE;
    for (int lvl = 0; lvl < p->nlevels; lvl++) {
        double deg = (double)p->degree[lvl];
        if (p->strategy[lvl] == PLAN_MP) {
            double t = 2 * (x->lookup_bytes_per_device / deg) /
                       mm_bw(x, CLUSTER_ALLTOALL, p, lvl);
            x->a2a += t;
            last = mm_comm(x, t, dep, mm_label(ENGINE_PART_EMB,
                                               ENGINE_OP_ALL2ALL, bwd, -1));
        } else if (bwd && p->strategy[0] == PLAN_DDP) {
            double t = x->lookup_bytes_per_device /
                       mm_bw(x, CLUSTER_ALLREDUCE, p, lvl);
            x->ar += t;
            last = mm_comm(x, t, dep, mm_label(ENGINE_PART_EMB,
                                               ENGINE_OP_EMB_AR, bwd, -1));
        }
    }
    return last;
}

/* FSDP weight all-gather of a block of `params` parameters, if the dense
 * plan starts with fsdp; ENGINE_NONE otherwise. */
static engine_ev mm_fsdp_gather(mm_ctx *x, double params, engine_ev dep,
                                engine_label l)
{
    const plan_t *p = &x->t->dense;
    if (p->strategy[0] != PLAN_FSDP)
        return ENGINE_NONE;
    double bytes = (params / (double)x->f.dense_shard * (double)p->degree[0]) *
                   x->bpp;
    double t = bytes / mm_bw(x, CLUSTER_ALLGATHER, p, 0);
    x->ag += t;
    l.op = ENGINE_OP_WGT_AG;
    return mm_comm(x, t, dep, l);
}

/* TP activation all-reduces after a forward block (one per tp level);
 * returns the last one or ENGINE_NONE. */
static engine_ev mm_fwd_tp(mm_ctx *x, double act_bytes, engine_ev dep,
                           engine_label l)
{
    const plan_t *p = &x->t->dense;
    engine_ev last = ENGINE_NONE;
    l.op = ENGINE_OP_ACT_AR;
    for (int lvl = 0; lvl < p->nlevels; lvl++) {
        if (p->strategy[lvl] != PLAN_TP)
            continue;
        double t = act_bytes / mm_bw(x, CLUSTER_ALLREDUCE, p, lvl);
        x->ar += t;
        last = mm_comm(x, t, dep, l);
    }
    return last;
}

/* Per-level communication after a backward block: DDP gradient
 * all-reduce and FSDP gradient reduce-scatter when `grads`, TP activation
 * all-reduce when `tp_now`. Returns the TP all-reduce or ENGINE_NONE. */
static engine_ev mm_bwd_levels(mm_ctx *x, double params, bool grads,
                               bool tp_now, double act_bytes, engine_ev dep,
                               engine_label l)
{
    const plan_t *p = &x->t->dense;
    double shard = (double)x->f.dense_shard;
    engine_ev act = ENGINE_NONE;
    for (int lvl = 0; lvl < p->nlevels; lvl++) {
        double deg = (double)p->degree[lvl];
        switch (p->strategy[lvl]) {
        case PLAN_DDP:
            if (grads) {
                double t = (params / shard) * x->bpp /
                           mm_bw(x, CLUSTER_ALLREDUCE, p, lvl);
                x->ar += t;
                l.op = ENGINE_OP_WG_AR;
                mm_comm(x, t, dep, l);
            }
            break;
        case PLAN_FSDP:
            shard /= deg;
            if (grads) {
                double t = (params / shard) * x->bpp /
                           mm_bw(x, CLUSTER_REDUCESCATTER, p, 0);
                x->rs += t;
                l.op = ENGINE_OP_WG_RS;
                mm_comm(x, t, dep, l);
            }
            break;
        case PLAN_TP:
            shard /= deg;
            if (tp_now) {
                double t = act_bytes / mm_bw(x, CLUSTER_ALLREDUCE, p, lvl);
                x->ar += t;
                l.op = ENGINE_OP_ACT_AR;
                act = mm_comm(x, t, dep, l);
            }
            break;
        default:
            break;
        }
    }
    return act;
}

static double mm_tp_factor(const mm_ctx *x)
{
    const plan_t *p = &x->t->dense;
    double tp = 1;
    for (int i = 0; i < p->nlevels; i++)
        if (p->strategy[i] == PLAN_TP)
            tp = (double)p->degree[i];
    return tp;
}

/* ------------------------------------------------------------------ LLM */

static void mm_llm_forward(mm_ctx *x, double t_attn, double t_fc,
                           double act_bytes)
{
    const model_t *m = x->m;
    engine_ev emb_f = mm_emb_compute(x, 0, ENGINE_NONE);
    engine_ev emb_c = mm_emb_comm(x, 0, emb_f);
    engine_ev prev_fc = ENGINE_NONE, prev_fc_ar = ENGINE_NONE;
    engine_ev prev_attn = ENGINE_NONE;
    for (int64_t i = 0; i < m->layers; i++) {
        engine_label la = mm_label(ENGINE_PART_ATTN, ENGINE_OP_COMPUTE, 0, i);
        engine_label lf = mm_label(ENGINE_PART_FC, ENGINE_OP_COMPUTE, 0, i);
        engine_ev ag = mm_fsdp_gather(x, m->attn_layer_params, prev_attn, la);
        engine_ev deps[2] = {i == 0 ? emb_c : prev_fc_ar, ag};
        engine_ev attn = mm_comp(x, t_attn, deps, 2, la);
        x->gemm += t_attn;
        engine_ev attn_ar = mm_fwd_tp(x, act_bytes, attn, la);

        ag = mm_fsdp_gather(x, m->fc_layer_params, prev_fc, lf);
        engine_ev fdeps[2] = {attn_ar, ag};
        engine_ev fc = mm_comp(x, t_fc, fdeps, 2, lf);
        x->gemm += t_fc;
        prev_fc_ar = mm_fwd_tp(x, act_bytes, fc, lf);
        prev_fc = fc;
        prev_attn = attn;
    }
}

static void mm_llm_backward(mm_ctx *x, double t_attn, double t_fc,
                            double act_bytes, bool freeze_emb,
                            bool freeze_dense, int64_t min_frozen)
{
    const model_t *m = x->m;
    engine_ev next_fc = ENGINE_NONE, next_attn = ENGINE_NONE;
    engine_ev next_attn_ar = ENGINE_NONE;
    for (int64_t i = m->layers - 1; i >= 0; i--) {
        bool grads = !freeze_dense && i < min_frozen;
        engine_label lf = mm_label(ENGINE_PART_FC, ENGINE_OP_COMPUTE, 1, i);
        engine_label la = mm_label(ENGINE_PART_ATTN, ENGINE_OP_COMPUTE, 1, i);

        engine_ev ag = mm_fsdp_gather(x, m->fc_layer_params, next_fc, lf);
        engine_ev fdeps[2] = {next_attn_ar, ag};
        engine_ev fc = mm_comp(x, 2 * t_fc, fdeps, 2, lf);
        x->gemm += 2 * t_fc;
        engine_ev fc_ar =
            mm_bwd_levels(x, m->fc_layer_params, grads, true, act_bytes, fc, lf);

        ag = mm_fsdp_gather(x, m->attn_layer_params, next_attn, la);
        engine_ev adeps[2] = {fc_ar, ag};
        engine_ev attn = mm_comp(x, 2 * t_attn, adeps, 2, la);
        x->gemm += 2 * t_attn;
        next_attn_ar = mm_bwd_levels(x, m->attn_layer_params, grads, true,
                                     act_bytes, attn, la);
        next_fc = fc;
        next_attn = attn;
    }
    if (!freeze_emb) {
        engine_ev c = mm_emb_comm(x, 1, next_attn);
        mm_emb_compute(x, 1, c);
    }
}

static void mm_llm(mm_ctx *x)
{
    const model_t *m = x->m;
    const task_t *t = x->t;
    double tp = mm_tp_factor(x);
    double lbs = (double)t->local_batch_dense;
    double t_attn = m->attn_layer_flops * lbs / tp / x->eff_flops;
    double t_fc = m->fc_layer_flops * lbs / tp / x->eff_flops;
    double act_bytes = lbs * (double)m->seq_len * (double)m->hidden * x->bpp;

    mm_llm_forward(x, t_attn, t_fc, act_bytes);
    if (t->kind == TASK_INFERENCE)
        return;
    engine_phase(x->e, engine_now(x->e));
    if (t->kind == TASK_PRETRAIN)
        mm_llm_backward(x, t_attn, t_fc, act_bytes, false, false, m->layers);
    else
        mm_llm_backward(x, t_attn, t_fc, act_bytes, t->freeze_emb,
                        t->freeze_dense, t->min_frozen_layer);
}

/* ----------------------------------------------------------------- DLRM */

typedef struct mm_dlrm_ev {
    engine_ev *comp; /* per layer compute */
    engine_ev *act;  /* per layer TP all-reduce, or NONE */
} mm_dlrm_ev;

static void mm_dlrm_forward(mm_ctx *x, double t_mlp, double act_bytes)
{
    const model_t *m = x->m;
    int64_t nb = m->bot_mlp_layers, nt = m->top_mlp_layers;
    double lp = m->layer_params;
    engine_ev emb_f = mm_emb_compute(x, 0, ENGINE_NONE);
    engine_ev emb_c = mm_emb_comm(x, 0, emb_f);

    /* compute handles of the last three layers: [n-1], [n-2] */
    engine_ev c1 = ENGINE_NONE, c2 = ENGINE_NONE, act1 = ENGINE_NONE;
    for (int64_t n = 0; n < nb; n++) {
        engine_label l = mm_label(ENGINE_PART_MLPBOT, ENGINE_OP_COMPUTE, 0, n);
        engine_ev ag = mm_fsdp_gather(x, lp, c2, l);
        engine_ev deps[2] = {n == 0 ? ENGINE_NONE : act1, ag};
        engine_ev c = mm_comp(x, t_mlp, deps, 2, l);
        x->gemm += t_mlp;
        act1 = (n % 2 == 1) ? mm_fwd_tp(x, act_bytes, c, l) : ENGINE_NONE;
        c2 = c1;
        c1 = c;
    }
    /* bottom's last two computes: c1 = [nb-1], c2 = [nb-2] */
    engine_ev bot_last = c1, bot_before = c2, bot_act = act1;
    engine_ev t1 = ENGINE_NONE, t2 = ENGINE_NONE, tact1 = ENGINE_NONE;
    for (int64_t n = 0; n < nt; n++) {
        engine_label l = mm_label(ENGINE_PART_MLPTOP, ENGINE_OP_COMPUTE, 0, n);
        engine_ev agdep = n == 0 ? bot_before : n == 1 ? bot_last : t2;
        engine_ev ag = mm_fsdp_gather(x, lp, agdep, l);
        engine_ev c;
        if (n == 0) {
            engine_ev deps[3] = {emb_c, bot_act, ag};
            c = mm_comp(x, t_mlp, deps, 3, l);
        } else {
            engine_ev deps[2] = {tact1, ag};
            c = mm_comp(x, t_mlp, deps, 2, l);
        }
        x->gemm += t_mlp;
        tact1 = (n % 2 == 1) ? mm_fwd_tp(x, act_bytes, c, l) : ENGINE_NONE;
        t2 = t1;
        t1 = c;
    }
}

static void mm_dlrm_backward(mm_ctx *x, double t_mlp, double act_bytes,
                             bool freeze_top, bool freeze_bot, bool freeze_emb)
{
    const model_t *m = x->m;
    int64_t nb = m->bot_mlp_layers, nt = m->top_mlp_layers;
    double lp = m->layer_params;

    engine_ev c1 = ENGINE_NONE, c2 = ENGINE_NONE, act1 = ENGINE_NONE;
    for (int64_t n = nt - 1; n >= 0; n--) {
        engine_label l = mm_label(ENGINE_PART_MLPTOP, ENGINE_OP_COMPUTE, 1, n);
        engine_ev ag = mm_fsdp_gather(x, lp, c2, l);
        engine_ev deps[2] = {n == nt - 1 ? ENGINE_NONE : act1, ag};
        engine_ev c = mm_comp(x, 2 * t_mlp, deps, 2, l);
        x->gemm += 2 * t_mlp;
        act1 = mm_bwd_levels(x, lp, !freeze_top, n % 2 == 0, act_bytes, c, l);
        c2 = c1;
        c1 = c;
    }
    engine_ev top0 = c1, top0_act = act1;
    engine_ev emb_c = ENGINE_NONE;
    if (!freeze_emb)
        emb_c = mm_emb_comm(x, 1, top0);
    if (!freeze_bot) {
        c1 = c2 = act1 = ENGINE_NONE;
        for (int64_t n = nb - 1; n >= 0; n--) {
            engine_label l =
                mm_label(ENGINE_PART_MLPBOT, ENGINE_OP_COMPUTE, 1, n);
            engine_ev ag = mm_fsdp_gather(x, lp, c2, l);
            engine_ev deps[2] = {n == nb - 1 ? top0_act : act1, ag};
            engine_ev c = mm_comp(x, 2 * t_mlp, deps, 2, l);
            x->gemm += 2 * t_mlp;
            act1 = mm_bwd_levels(x, lp, true, n % 2 == 0, act_bytes, c, l);
            c2 = c1;
            c1 = c;
        }
    }
    if (!freeze_emb)
        mm_emb_compute(x, 1, emb_c);
}

static void mm_dlrm(mm_ctx *x)
{
    const model_t *m = x->m;
    const task_t *t = x->t;
    double tp = mm_tp_factor(x);
    double lbs = (double)t->local_batch_dense;
    double t_mlp = m->layer_flops * lbs / tp / x->eff_flops;
    double act_bytes = lbs * (double)m->mlp_dim * x->bpp;

    mm_dlrm_forward(x, t_mlp, act_bytes);
    if (t->kind == TASK_INFERENCE)
        return;
    engine_phase(x->e, engine_now(x->e));
    if (t->kind == TASK_PRETRAIN)
        mm_dlrm_backward(x, t_mlp, act_bytes, false, false, false);
    else
        mm_dlrm_backward(x, t_mlp, act_bytes, t->freeze_top_mlp,
                         t->freeze_bot_mlp, t->freeze_emb);
}

/* ------------------------------------------------------------- run */

static size_t mm_max_events(const point_t *p)
{
    const model_t *m = &p->model;
    size_t blocks = m->kind == MODEL_LLM
                        ? 2 * (size_t)m->layers
                        : (size_t)(m->bot_mlp_layers + m->top_mlp_layers);
    /* per block and pass: compute + all-gather + one event per level */
    size_t per_block = 2 + PLAN_MAX_LEVELS;
    return 2 * (blocks * per_block + 1 + PLAN_MAX_LEVELS) + 8;
}

static status_code mm_run(const point_t *p, engine *e, result_t *r)
{
    mm_ctx x;
    memset(&x, 0, sizeof x);
    x.m = &p->model;
    x.c = &p->cluster;
    x.t = &p->task;
    x.e = e;
    task_factors_of(x.t, &x.f);
    x.bpp = (double)x.m->bytes_per_dense_param;
    x.eff_flops = cluster_eff_flops(x.c, x.m->bytes_per_dense_param);
    x.lookup_bytes_per_device = x.m->lookup_bytes *
                                (double)x.t->local_batch_emb /
                                (double)x.f.emb_shard;

    engine_reset(e);
    if (engine_reserve(e, mm_max_events(p)) != 0)
        return STATUS_NOMEM;
    if (x.m->kind == MODEL_LLM)
        mm_llm(&x);
    else
        mm_dlrm(&x);

    double t_end = engine_now(e);
    double comm = x.a2a + x.ar + x.ag + x.rs;
    r->iteration_time_s = t_end;
    r->global_batch = x.f.global_batch_dense;
    r->throughput_samples_per_s = (1 / t_end) * (double)r->global_batch;
    r->compute_gemm_s = x.gemm;
    r->compute_emb_s = x.emb;
    r->comm_alltoall_s = x.a2a;
    r->comm_allreduce_s = x.ar;
    r->comm_allgather_s = x.ag;
    r->comm_reducescatter_s = x.rs;
    /* differences of sums: a few ulps below zero when compute covers the
     * iteration (or the communication) exactly; clamped where computed so
     * no figure is negative from rounding (issue 19) */
    double exposed = t_end - (x.gemm + x.emb);
    r->comm_exposed_s = exposed > 0 ? exposed : 0.0;
    double overlapped = comm - r->comm_exposed_s;
    r->comm_overlapped_s = overlapped > 0 ? overlapped : 0.0;
    r->events_compute = e->count[ENGINE_COMP];
    r->events_comm = e->count[ENGINE_COMM];
    r->mem_weights_bytes_per_device =
        x.m->emb_params * (double)x.m->bytes_per_emb_param /
            (double)x.f.emb_shard +
        x.m->dense_params * x.bpp / (double)x.f.dense_shard;
    return STATUS_OK;
}

const eval_ops madmax_ops = {
    .name = "madmax",
    .version = "madmax-1 (MAD-Max reference, llm_tasks_preoptimized)",
    .check = mm_check,
    .run = mm_run,
    .auto_count = autoplan_madmax_count,
    .auto_apply = autoplan_madmax_apply,
};
