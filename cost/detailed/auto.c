/*
 * auto.c - the `auto` strategies of sweeps: a fixed set of candidates,
 * degree tuples times options (a mixed radix each), applied to a point's
 * devices and batch, and the valid-only enumeration of that set for one
 * sweep cell; and a sweep's explicit strategies applied the same way
 * (detailed_template_apply).
 *
 * Invariant: detailed_auto_cell_init() lists exactly the candidates k for
 * which dt_auto_apply() returns STATUS_OK on the cell's point, each once,
 * and attributes every other candidate to the code dt_auto_apply() returns
 * for it (tests/test_space.c checks both against a candidate-by-candidate
 * pass), so a sweep's ids are dense and /skipped counts what it skipped.
 */
#include "top.h"

#include "llm/llm.h"

#include <string.h>

/* Candidate strategies: a degree tuple (tp, pp, cp, ep; tp innermost)
 * times its options, k = tuple * DT_AUTO_NOPT + option, so that the two
 * factors are the sweep's two strategy axes (`parallel` and `strategy`).
 * Degrees: tp in {1,2,4,...,64} up to the system's scale-up domain (TP's
 * per-layer collectives stay inside one NVLink domain in every published
 * recipe: TP16+ on an NVL72); pp in {1,2,3,4,6,8,12,16,24,32,48,64}
 * (powers of two and three times them: Nemotron-4 340B's pp 12, the 1T
 * GPT's pp 64 of Narayanan et al. 2021), any layer count under the
 * stack's uneven split; cp in {1,2,...,32}, beyond 2 only where each rank
 * keeps at least DT_AUTO_CP_TOKENS tokens; ep in {1,8}. Options
 * (innermost first): vpp 1 or "auto" (the fastest interleaving that
 * fits, as a point's vpp = "auto": train/tune.c), zero in {0,1,2,3}, recompute in
 * {none, selective, full}, micro-batch in {1,2,4}, layout in
 * {tp-cp-dp-pp, tp-cp-pp-dp}, DP/FSDP overlap on or off, sequence
 * parallelism on or off (with tp > 1), and the schedule 1F1B or GPipe;
 * dp is what remains of the devices and grad_accum what remains of the
 * batch. A candidate that does not apply, or duplicates another, is
 * refused with a code for the sweep to skip, in this order: a rule that
 * does not depend on the point (invalid:strategy: vpp without pp, ZeRO
 * 2/3 with pp, sequence parallelism off without tp, GPipe without pp or
 * with vpp, the tp-cp-pp-dp layout without pp, a ZeRO stage the stack
 * does not run: its zero_stages); tp beyond the system's scale-up domain
 * (invalid:strategy); tp x pp x cp not dividing the devices
 * (invalid:product); ep on a dense model, not dividing the experts or dp
 * x cp, the tp-cp-pp-dp layout with dp 1 (invalid:strategy: the same
 * plan as the default layout, which `madsweep best` would show once);
 * degrees that do not divide the model (infeasible:shape: tp the heads,
 * cp the sequence or cp beyond 2 on a short one, or pp x vpp stages that
 * do not fit the layers, as the fidelity's run would find, or fewer than
 * DT_AUTO_STAGE_LAYERS layers per stage); the batch
 * not splitting into micro-batches over dp (invalid:batch_mismatch).
 * Inference takes the candidates without training options (ZeRO 0, no
 * recompute, vpp 1, 1F1B, overlap, the first micro-batch) and serves the
 * global batch concurrently: micro_batch = global_batch / dp. The last
 * options are the DLRM candidates (the per-table planner, then table-,
 * row-, column-wise embeddings; see DT_AUTO_DLRM), which only DLRM models
 * take, on the first tuple (all degrees 1) only. */
static const int64_t dt_auto_tp[] = {1, 2, 4, 8, 16, 32, 64};
static const int64_t dt_auto_pp[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
static const int64_t dt_auto_cp[] = {1, 2, 4, 8, 16, 32};
static const int64_t dt_auto_zero[] = {0, 1, 2, 3};
static const int64_t dt_auto_mb[] = {1, 2, 4};
static const int64_t dt_auto_ep[] = {1, 8};
#define DT_N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* Context parallelism beyond 2 only where each rank keeps this many
 * tokens: the published long-context recipes split 16k-128k sequences
 * to 8k-16k tokens per rank (NeMo 2.0's Llama 3 16k/64k/128k recipes:
 * cp 2, 4, 8-16; Llama 3 405B's 131k context on cp 16, Dubey et al.
 * 2024), so a sweep over 8k sequences keeps cp 1-2. */
#define DT_AUTO_CP_TOKENS 8192

/* DLRM candidates follow the transformer options: data-parallel MLPs
 * over all devices with the embeddings placed per table by the planner
 * (dlrm/emb_plan.c), or table-wise, row-wise or column-wise. */
#define DT_AUTO_DLRM 4

/* Transformer options of one degree tuple: 2 x 4 x 3 x 3 x 2 x 2 x 2 x 2
 * (vpp, zero, recompute, micro-batch, layout, overlap, sp off,
 * schedule); with the DLRM ones, DT_AUTO_NOPT per tuple. */
#define DT_AUTO_OPTIONS 1152
#define DT_AUTO_NOPT (DT_AUTO_OPTIONS + DT_AUTO_DLRM)
#define DT_AUTO_NTUPLES (DT_N(dt_auto_tp) * DT_N(dt_auto_pp) * DT_N(dt_auto_cp) * DT_N(dt_auto_ep))

int64_t dt_auto_count(void)
{
    return DT_AUTO_NTUPLES * DT_AUTO_NOPT;
}

void detailed_auto_factors(int64_t *tuples, int64_t *options)
{
    *tuples = DT_AUTO_NTUPLES;
    *options = DT_AUTO_NOPT;
}

/* Pipelines of at least this many layers per stage: the deepest published
 * pipelines hold two (Narayanan et al. 2021: the 1T GPT's 128 layers on pp
 * 64; Megatron-Turing 530B's 105 on pp 35 hold three); one layer per
 * stage leaves the embedding's and the head's stages setting the pace. */
#define DT_AUTO_STAGE_LAYERS 2

/* Whether cp splits a sequence of seq tokens as the auto set does. */
static bool dt_auto_cp_ok(int64_t seq, int64_t cp)
{
    return seq > 0 && seq % cp == 0 && (cp <= 2 || seq / cp >= DT_AUTO_CP_TOKENS);
}

/* The scale-up domain of a system (devices per NVLink domain). */
static int64_t dt_auto_domain(const topo_system_t *s)
{
    return s->topo.nlevels > 0 && s->topo.level[0].span > 0 ? s->topo.level[0].span
                                                            : s->devices;
}

/* The digits of a transformer candidate (indices into the tables). */
typedef struct dt_digits {
    int tp, pp, cp, v, zero, rc, mb, ep, layout, ovl_off, sp_off, gpipe;
} dt_digits;

static int64_t dt_auto_tuple(int tp, int pp, int cp, int ep)
{
    return ((int64_t)(ep * DT_N(dt_auto_cp) + cp) * DT_N(dt_auto_pp) + pp) * DT_N(dt_auto_tp) +
           tp;
}

static int64_t dt_auto_encode(const dt_digits *g)
{
    int64_t o = g->gpipe;
    o = o * 2 + g->sp_off;
    o = o * 2 + g->ovl_off;
    o = o * 2 + g->layout;
    o = o * DT_N(dt_auto_mb) + g->mb;
    o = o * 3 + g->rc;
    o = o * DT_N(dt_auto_zero) + g->zero;
    o = o * 2 + g->v;
    return dt_auto_tuple(g->tp, g->pp, g->cp, g->ep) * DT_AUTO_NOPT + o;
}

/* The digits of transformer candidate k (option o < DT_AUTO_OPTIONS). */
static void dt_auto_digits(int64_t k, dt_digits *g)
{
    int64_t u = k / DT_AUTO_NOPT, o = k % DT_AUTO_NOPT;
#define DT_DIGIT(x, f, n) g->f = (int)((x) % (n)); (x) /= (n)
    DT_DIGIT(u, tp, DT_N(dt_auto_tp));
    DT_DIGIT(u, pp, DT_N(dt_auto_pp));
    DT_DIGIT(u, cp, DT_N(dt_auto_cp));
    DT_DIGIT(u, ep, DT_N(dt_auto_ep));
    DT_DIGIT(o, v, 2);
    DT_DIGIT(o, zero, DT_N(dt_auto_zero));
    DT_DIGIT(o, rc, 3);
    DT_DIGIT(o, mb, DT_N(dt_auto_mb));
    DT_DIGIT(o, layout, 2);
    DT_DIGIT(o, ovl_off, 2);
    DT_DIGIT(o, sp_off, 2);
    DT_DIGIT(o, gpipe, 2);
#undef DT_DIGIT
}

/* The layout code of tp-cp-pp-dp (as detailed_layout_parse returns it,
 * without formatting 24 texts per candidate). */
static int dt_auto_layout_tcpd(void)
{
    for (int code = 0; code < 24; code++) {
        int o[4];
        dt_layout_order(code, o);
        if (o[0] == DT_TP && o[1] == DT_CP && o[2] == DT_PP && o[3] == DT_DP)
            return code == 0 ? 0 : code + 1;
    }
    return 0;
}

/* Candidate i as degrees and options (dp = 0: the rest of the devices);
 * returns false when it duplicates another candidate or breaks a rule
 * that does not depend on the system or batch. */
static bool dt_auto_decode(int64_t i, bool inference, task_detailed_t *t)
{
    memset(t, 0, sizeof *t);
    if (i % DT_AUTO_NOPT >= DT_AUTO_OPTIONS) {
        t->tp = t->pp = t->cp = t->ep = t->vpp = 1;
        int64_t k = i % DT_AUTO_NOPT - DT_AUTO_OPTIONS;
        if (i / DT_AUTO_NOPT != 0)
            return false; /* the first tuple's duplicate */
        t->emb_sharding = k == 0 ? TASK_EMB_AUTO : TASK_EMB_TABLE + (int)(k - 1);
        t->emb_dp_threshold_bytes = -1.0; /* the stack's */
        t->overlap_dp_comm = true;
        t->dtype = HW_BF16;
        return true;
    }
    dt_digits g;
    dt_auto_digits(i, &g);
    t->tp = dt_auto_tp[g.tp];
    t->pp = dt_auto_pp[g.pp];
    t->cp = dt_auto_cp[g.cp];
    t->vpp = g.v ? 0 : 1;
    t->vpp_auto = g.v != 0;
    t->zero_stage = dt_auto_zero[g.zero];
    t->recompute = (task_recompute)g.rc;
    t->micro_batch = dt_auto_mb[g.mb];
    t->ep = dt_auto_ep[g.ep];
    t->layout = g.layout ? dt_auto_layout_tcpd() : 0;
    t->overlap_dp_comm = !g.ovl_off;
    t->schedule = g.gpipe ? TASK_SCHEDULE_GPIPE : TASK_SCHEDULE_1F1B;
    t->sequence_parallel = t->tp > 1 && !g.sp_off;
    t->dtype = HW_BF16;
    if ((t->pp == 1 && g.v) || (t->pp > 1 && t->zero_stage >= 2) ||
        (g.sp_off && t->tp == 1) || (g.layout && t->pp == 1) ||
        (t->schedule == TASK_SCHEDULE_GPIPE && (t->pp == 1 || g.v)))
        return false;
    if (inference && (t->zero_stage != 0 || t->recompute != TASK_RECOMPUTE_NONE ||
                      g.v || t->schedule != TASK_SCHEDULE_1F1B ||
                      !t->overlap_dp_comm || g.mb != 0))
        return false;
    return true;
}

status_code dt_auto_apply(point_t *p, int64_t i, int64_t global_batch)
{
    if (i < 0 || i >= dt_auto_count() || global_batch < 1)
        return STATUS_INVALID_VALUE;
    bool inference = p->task.kind == TASK_INFERENCE;
    task_detailed_t c;
    if (!dt_auto_decode(i, inference, &c))
        return STATUS_INVALID_STRATEGY;
    if (p->model.kind != MODEL_DLRM && !stack_zero_ok(&p->stack, c.zero_stage))
        return STATUS_INVALID_STRATEGY; /* a ZeRO stage the stack does not run */
    int64_t dev = p->system.devices;
    bool dlrm = p->model.kind == MODEL_DLRM;
    if (dlrm != (c.emb_sharding != TASK_EMB_NONE))
        return STATUS_INVALID_STRATEGY;
    task_detailed_t *t = &p->task.detailed;
    if (dlrm) {
        if (global_batch % dev != 0)
            return STATUS_INVALID_BATCH_MISMATCH;
        t->tp = t->pp = t->cp = t->ep = t->vpp = 1;
        t->dp = dev;
        t->zero_stage = 0;
        t->sequence_parallel = false;
        t->shard_degree = 0;
        t->layout = 0;
        t->overlap_dp_comm = c.overlap_dp_comm;
        t->emb_sharding = c.emb_sharding;
        t->micro_batch = global_batch / dev;
        t->global_batch = global_batch;
        t->grad_accum = 1;
        return STATUS_OK;
    }
    if (c.tp > dt_auto_domain(&p->system))
        return STATUS_INVALID_STRATEGY; /* TP beyond the scale-up domain */
    if (dev % (c.tp * c.pp * c.cp) != 0)
        return STATUS_INVALID_PRODUCT;
    int64_t dp = dev / (c.tp * c.pp * c.cp);
    if (c.ep > 1 && (p->model.d.experts % c.ep != 0 || (dp * c.cp) % c.ep != 0 ||
                     p->model.d.experts == 0))
        return STATUS_INVALID_STRATEGY;
    if (c.layout != 0 && dp == 1)
        return STATUS_INVALID_STRATEGY; /* the default layout's duplicate */
    t->tp = c.tp;
    t->pp = c.pp;
    t->cp = c.cp;
    t->dp = dp;
    t->ep = c.ep;
    t->vpp = c.vpp;
    t->vpp_auto = c.vpp_auto;
    t->layout = c.layout;
    t->overlap_dp_comm = c.overlap_dp_comm;
    t->shard_degree = 0;
    t->zero_stage = c.zero_stage;
    t->recompute = c.recompute;
    t->schedule = c.schedule;
    t->sequence_parallel = c.sequence_parallel;
    t->attention = TASK_ATTENTION_STACK;
    t->overlap_tp_comm = -1;
    t->moe_flex_dispatch = -1;
    t->moe_a2a_overlap = -1;
    t->compiled = -1;
    t->micro_batch = inference ? 1 : c.micro_batch;
    t->global_batch = global_batch;
    t->grad_accum = 1;
    if (!dt_setup_shape_ok(p) || !dt_auto_cp_ok(p->model.seq_len, c.cp) ||
        (c.pp > 1 && p->model.layers < DT_AUTO_STAGE_LAYERS * c.pp))
        return STATUS_INFEASIBLE_SHAPE;
    int64_t mb = inference ? global_batch / dp : c.micro_batch;
    if (mb < 1 || global_batch % (mb * dp) != 0)
        return STATUS_INVALID_BATCH_MISMATCH;
    t->micro_batch = mb;
    t->grad_accum = global_batch / (mb * dp);
    return STATUS_OK;
}

status_code detailed_template_apply(point_t *p, const detailed_template *s,
                                    int64_t global_batch)
{
    if (global_batch < 1)
        return STATUS_INVALID_VALUE;
    if (p->model.kind == MODEL_DLRM)
        return STATUS_INVALID_STRATEGY; /* a transformer strategy */
    const stack_desc *st = &p->stack;
    const task_detailed_t *c = &s->t;
    bool inference = p->task.kind == TASK_INFERENCE;
    int64_t zero = inference ? 0 : s->zero_set ? c->zero_stage : st->default_zero_stage;
    if (!stack_zero_ok(st, zero))
        return STATUS_INVALID_STRATEGY; /* a ZeRO stage the stack does not run */
    int64_t dev = p->system.devices, deg = c->tp * c->pp * c->cp;
    int64_t dp = c->dp > 0 ? c->dp : deg > 0 && dev % deg == 0 ? dev / deg : 0;
    if (dp < 1 || deg * dp != dev)
        return STATUS_INVALID_PRODUCT;
    task_detailed_t *t = &p->task.detailed;
    t->tp = c->tp;
    t->pp = c->pp;
    t->cp = c->cp;
    t->ep = c->ep;
    t->dp = dp;
    t->etp = s->etp_set ? c->etp : st->expert_tensor_parallel;
    t->vpp = inference ? 1 : s->vpp_stack ? st->default_vpp : c->vpp;
    t->vpp_auto = !inference && c->vpp_auto;
    t->zero_stage = zero;
    t->shard_degree = c->shard_degree;
    t->sequence_parallel = c->tp > 1 && (s->sp_set ? c->sequence_parallel : st->sequence_parallel);
    t->recompute = inference ? TASK_RECOMPUTE_NONE : c->recompute;
    t->recompute_layers = c->recompute_layers;
    t->schedule = inference ? TASK_SCHEDULE_1F1B : c->schedule;
    t->attention = c->attention;
    t->overlap_dp_comm = c->overlap_dp_comm;
    t->overlap_tp_comm = c->overlap_tp_comm;
    t->layout = c->layout;
    t->global_batch = global_batch;
    t->micro_batch_auto = !inference && c->micro_batch_auto;
    int64_t mb = inference ? global_batch / dp : c->micro_batch_auto ? 1 : c->micro_batch;
    if (mb < 1 || global_batch % (mb * dp) != 0)
        return STATUS_INVALID_BATCH_MISMATCH;
    t->micro_batch = c->micro_batch_auto && !inference ? 0 : mb;
    t->grad_accum = c->micro_batch_auto && !inference ? 0 : global_batch / (mb * dp);
    return STATUS_OK;
}

int detailed_auto_option(int64_t o, task_detailed_t *t)
{
    if (o < 0 || o >= DT_AUTO_NOPT)
        return -1;
    /* tp 2, pp 2, cp 1, ep 1: every transformer option can apply */
    int64_t u = o < DT_AUTO_OPTIONS ? dt_auto_tuple(1, 1, 0, 0) : 0;
    return dt_auto_decode(u * DT_AUTO_NOPT + o, false, t) ? 0 : 1;
}

int detailed_auto_candidate(int64_t i, task_detailed_t *t)
{
    if (i < 0 || i >= dt_auto_count())
        return -1;
    return dt_auto_decode(i, false, t) ? 0 : 1;
}

/* ------------------------------------------------------------ valid-only */

void detailed_auto_shape_of(const point_t *p, detailed_auto_shape *sh)
{
    memset(sh, 0, sizeof *sh);
    const model_t *m = &p->model;
    sh->dlrm = m->kind == MODEL_DLRM;
    sh->experts = m->d.experts;
    for (int z = 0; z < 4; z++)
        sh->zero_ok[z] = stack_zero_ok(&p->stack, dt_auto_zero[z]);
    if (sh->dlrm)
        return;
    point_t q;
    memset(&q, 0, sizeof q);
    q.fidelity = p->fidelity;
    q.model = p->model;
    q.stack = p->stack;
    q.task = p->task;
    task_detailed_t *t = &q.task.detailed;
    for (int a = 0; a < DT_N(dt_auto_tp); a++)
        sh->tp_ok[a] = m->heads > 0 && m->heads % dt_auto_tp[a] == 0 &&
                       (m->d.linear_value_heads <= 0 ||
                        m->d.linear_key_heads % dt_auto_tp[a] == 0); /* setup.c's rule */
    for (int a = 0; a < DT_N(dt_auto_cp); a++)
        sh->cp_ok[a] = dt_auto_cp_ok(m->seq_len, dt_auto_cp[a]);
    for (int a = 0; a < DT_N(dt_auto_ep); a++)
        sh->ep_ok[a] = dt_auto_ep[a] == 1 ||
                       (m->d.experts > 0 && m->d.experts % dt_auto_ep[a] == 0);
    /* the stage split as the run computes it, degrees 1 but pp (vpp 1,
     * and so "auto", whose first try is 1) */
    for (int a = 0; a < DT_N(dt_auto_pp); a++) {
        t->tp = t->cp = t->ep = t->dp = t->vpp = 1;
        t->pp = dt_auto_pp[a];
        t->micro_batch = t->global_batch = t->grad_accum = 1;
        sh->split_ok[a] = dt_setup_shape_ok(&q) &&
                          (a == 0 || m->layers >= DT_AUTO_STAGE_LAYERS * t->pp);
    }
}

/* Adds n to rejected[code] when the caller counts rejections. */
static void dt_auto_reject(int64_t *rejected, status_code code, int64_t n)
{
    if (rejected && n > 0)
        rejected[code] += n;
}

/* The options of degree tuple (tp, pp) before the cell's filters, as the
 * static rules of dt_auto_decode leave them (list j: its digit values). */
static void dt_auto_options(int tp, int pp, bool inference, detailed_auto_tuple *u)
{
    memset(u->n, 0, sizeof u->n);
    memset(u->opt, 0, sizeof u->opt);
#define DT_OPT(j, val) u->opt[j][u->n[j]++] = (uint8_t)(val)
    /* list 0: (vpp digit, schedule) as vpp * 2 + gpipe */
    DT_OPT(0, 0);
    if (pp > 0 && !inference) {
        DT_OPT(0, 1);     /* GPipe */
        DT_OPT(0, 1 * 2); /* interleaved */
    }
    for (int z = 0; z < (inference ? 1 : pp > 0 ? 2 : 4); z++)
        DT_OPT(1, z);
    for (int r = 0; r < (inference ? 1 : 3); r++)
        DT_OPT(2, r);
    for (int b = 0; b < (inference ? 1 : (int)DT_N(dt_auto_mb)); b++)
        DT_OPT(3, b);
    DT_OPT(4, 0);
    if (pp > 0)
        DT_OPT(4, 1); /* with pp 1 the default layout's duplicate */
    DT_OPT(5, 0);
    if (!inference)
        DT_OPT(5, 1);
    DT_OPT(6, 0);
    if (tp > 0)
        DT_OPT(6, 1);
#undef DT_OPT
}

static int64_t dt_auto_product(const detailed_auto_tuple *u)
{
    int64_t n = 1;
    for (int j = 0; j < DETAILED_AUTO_LISTS; j++)
        n *= u->n[j];
    return n;
}

/* Keeps the entries of list j for which keep[] is set; returns how many
 * were dropped. */
static int dt_auto_filter(detailed_auto_tuple *u, int j, const bool *keep)
{
    int w = 0, n = u->n[j];
    for (int i = 0; i < n; i++)
        if (keep[i])
            u->opt[j][w++] = u->opt[j][i];
    u->n[j] = (uint8_t)w;
    return n - w;
}

int64_t detailed_auto_cell_init(const detailed_auto_shape *sh, int64_t devices, int64_t domain,
                                bool inference, int64_t global_batch,
                                detailed_auto_cell *cell, int64_t *rejected)
{
    memset(cell, 0, sizeof *cell);
    cell->dlrm = sh->dlrm;
    if (sh->dlrm) {
        dt_auto_reject(rejected, STATUS_INVALID_STRATEGY, dt_auto_count() - DT_AUTO_DLRM);
        if (devices < 1 || global_batch % devices != 0)
            dt_auto_reject(rejected, STATUS_INVALID_BATCH_MISMATCH, DT_AUTO_DLRM);
        else
            cell->n = DT_AUTO_DLRM;
        return cell->n;
    }
    dt_auto_reject(rejected, STATUS_INVALID_STRATEGY, DT_AUTO_NTUPLES * DT_AUTO_DLRM);
    for (int e = 0; e < DT_N(dt_auto_ep); e++)
        for (int c = 0; c < DT_N(dt_auto_cp); c++)
            for (int p = 0; p < DT_N(dt_auto_pp); p++)
                for (int a = 0; a < DT_N(dt_auto_tp); a++) {
                    detailed_auto_tuple *u = &cell->t[cell->ntuples];
                    u->tp = (uint8_t)a;
                    u->pp = (uint8_t)p;
                    u->cp = (uint8_t)c;
                    u->ep = (uint8_t)e;
                    dt_auto_options(a, p, inference, u);
                    bool zk[4];
                    for (int i = 0; i < u->n[1]; i++)
                        zk[i] = sh->zero_ok[u->opt[1][i]];
                    dt_auto_filter(u, 1, zk); /* counted with the static rules */
                    int64_t all = dt_auto_product(u);
                    dt_auto_reject(rejected, STATUS_INVALID_STRATEGY, DT_AUTO_OPTIONS - all);
                    if (dt_auto_tp[a] > domain) {
                        dt_auto_reject(rejected, STATUS_INVALID_STRATEGY, all);
                        continue;
                    }
                    int64_t deg = dt_auto_tp[a] * dt_auto_pp[p] * dt_auto_cp[c];
                    if (devices < 1 || devices % deg != 0) {
                        dt_auto_reject(rejected, STATUS_INVALID_PRODUCT, all);
                        continue;
                    }
                    int64_t dp = devices / deg, ep = dt_auto_ep[e];
                    if (ep > 1 && (sh->experts <= 0 || sh->experts % ep != 0 ||
                                   (dp * dt_auto_cp[c]) % ep != 0)) {
                        dt_auto_reject(rejected, STATUS_INVALID_STRATEGY, all);
                        continue;
                    }
                    bool keep[4] = {true, false, false, false};
                    if (dp == 1 && u->n[4] > 1) {
                        /* tp-cp-pp-dp is tp-cp-dp-pp without dp */
                        int64_t rest1 = all / u->n[4];
                        dt_auto_reject(rejected, STATUS_INVALID_STRATEGY,
                                       dt_auto_filter(u, 4, keep) * rest1);
                        all = dt_auto_product(u);
                    }
                    if (!sh->tp_ok[a] || !sh->cp_ok[c] || !sh->ep_ok[e]) {
                        dt_auto_reject(rejected, STATUS_INFEASIBLE_SHAPE, all);
                        continue;
                    }
                    if (!sh->split_ok[p]) {
                        dt_auto_reject(rejected, STATUS_INFEASIBLE_SHAPE, all);
                        continue;
                    }
                    for (int i = 0; i < u->n[3]; i++) {
                        int64_t mb = inference ? global_batch / dp : dt_auto_mb[u->opt[3][i]];
                        keep[i] = mb >= 1 && global_batch % (mb * dp) == 0;
                    }
                    int64_t rest = u->n[3] > 0 ? dt_auto_product(u) / u->n[3] : 0;
                    dt_auto_reject(rejected, STATUS_INVALID_BATCH_MISMATCH,
                                   dt_auto_filter(u, 3, keep) * rest);
                    int64_t n = dt_auto_product(u);
                    if (n == 0)
                        continue;
                    u->first = cell->n;
                    cell->n += n;
                    cell->ntuples++;
                }
    return cell->n;
}

int64_t detailed_auto_cell_candidate(const detailed_auto_cell *cell, int64_t r, int *hint)
{
    if (r < 0 || r >= cell->n)
        return -1;
    if (cell->dlrm)
        return DT_AUTO_OPTIONS + r; /* on the first tuple */
    /* the tuple holding rank r: from the hint on (sequential ranks), else
     * by bisection */
    int j = hint && *hint >= 0 && *hint < cell->ntuples ? *hint : 0;
    if (cell->t[j].first > r ||
        (j + 1 < cell->ntuples && cell->t[j + 1].first <= r)) {
        if (j + 1 < cell->ntuples && cell->t[j + 1].first <= r &&
            (j + 2 >= cell->ntuples || cell->t[j + 2].first > r)) {
            j++;
        } else {
            int lo = 0, hi = cell->ntuples - 1;
            while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (cell->t[mid].first <= r)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            j = lo;
        }
    }
    if (hint)
        *hint = j;
    const detailed_auto_tuple *u = &cell->t[j];
    int64_t q = r - u->first;
    int d[DETAILED_AUTO_LISTS];
    for (int l = 0; l < DETAILED_AUTO_LISTS; l++) {
        d[l] = u->opt[l][q % u->n[l]];
        q /= u->n[l];
    }
    dt_digits g = {.tp = u->tp, .pp = u->pp, .cp = u->cp, .ep = u->ep,
                   .v = d[0] / 2, .gpipe = d[0] % 2, .zero = d[1], .rc = d[2],
                   .mb = d[3], .layout = d[4], .ovl_off = d[5], .sp_off = d[6]};
    return dt_auto_encode(&g);
}
