/*
 * pipeline.c - pipeline stages: how the layers are split over pp x vpp
 * chunks, which chunks a stage runs, how many micro-batches it holds in
 * flight, and the schedule's time.
 *
 * Split: U = layers + e + l units, e and l the stack's weights of the
 * embedding and of the output head + loss (used always when the stack
 * splits by weight, else only when the layers do not divide evenly:
 * Megatron's account-for-embedding/loss options; torchtitan's
 * input/output weights), spread over C = pp v chunks as evenly as
 * possible, the first U mod C chunks one unit more; chunk 0 starts with
 * the embedding's e units, chunk C-1 ends with the head's l. Chunk k runs
 * on stage k mod pp (interleaving). Real runs split uneven layer counts
 * this way (Llama 3.1 405B: 126 layers on 8 x 8 chunks).
 *
 * Schedule: with stage times T_s per micro-batch (forward + backward of
 * its chunks), m micro-batches and v chunks per stage, 1F1B (and its
 * interleaved form) takes m T_max + (sum_s T_s - T_max) / v: the slowest
 * stage sets the pace, the others' fill and drain is the bubble ((p-1)/v
 * stage times for uniform stages). GPipe takes the same time and keeps
 * every micro-batch in flight.
 *
 * In flight on stage s (activations held, in micro-batches of the whole
 * stage): 1F1B min(m, p - s); interleaved min(m v, 2 (p - s - 1) +
 * (v - 1) p + 1) chunk-activations over v (Megatron's warm-up count:
 * p + (p - 1)/v on the first stage, as Korthikanti et al. 2022); GPipe m.
 * Invariants: every chunk holds at least one unit (dt_pipe_split_ok);
 * at most DT_MAX_STAGES stages; the stages are found once per split,
 * and which stage repeats the one before it (dt_stages.same) with them.
 */
#include "llm.h"

#include <math.h>
#include <string.h>

void dt_pipe_split_init(const dt_ctx *c, dt_split *sp)
{
    int64_t L = c->m->layers, C = c->d.pp * c->d.v;
    bool weigh = c->st->pp_weighted || L % C != 0;
    sp->chunks = C;
    sp->e = weigh ? (int64_t)llround(c->st->pp_embedding_layers) : 0;
    sp->l = weigh ? (int64_t)llround(c->st->pp_loss_layers) : 0;
    int64_t U = L + sp->e + sp->l;
    sp->q = U / C;
    sp->r = U % C;
}

bool dt_pipe_split_ok(const dt_ctx *c, const dt_split *sp)
{
    /* every chunk holds a unit, the first and last their weights */
    return sp->q >= 1 && sp->q >= sp->e && sp->q >= sp->l && c->m->layers >= 1;
}

/* Layers before chunk k. */
static int64_t dt_pipe_layers_before(const dt_ctx *c, const dt_split *sp, int64_t k)
{
    int64_t L = c->m->layers;
    if (k >= sp->chunks)
        return L;
    int64_t units = k * sp->q + (k < sp->r ? k : sp->r);
    int64_t n = k > 0 ? units - sp->e : 0;
    return n < 0 ? 0 : n > L ? L : n;
}

void dt_pipe_chunk_range(const dt_ctx *c, const dt_split *sp, int64_t k, int64_t *lo, int64_t *hi)
{
    *lo = dt_pipe_layers_before(c, sp, k);
    *hi = dt_pipe_layers_before(c, sp, k + 1);
}

int dt_pipe_layer_type(const dt_ctx *c, int64_t i)
{
    const model_t *m = c->m;
    bool moe = m->d.experts > 0 && i >= m->d.dense_layers;
    bool frozen = c->p->task.kind == TASK_FINETUNE && i < c->t->frozen_layers;
    return (moe ? DT_MOE : DT_DENSE) + (frozen ? 2 : 0) +
           (dt_shape_alt_in(m, i, i + 1) > 0 ? DT_ALT : 0);
}

/* Adds the layers of [lo, hi) to n[] by type: the ranges of one (MoE,
 * frozen) type each, cut at `frozen` and `moe_from`, split between the
 * attention kinds by the pattern (closed form). */
static void dt_pipe_count(const model_t *m, int64_t lo, int64_t hi, int64_t frozen,
                          int64_t moe_from, int32_t *n)
{
    for (int t = 0; t < 4; t++) {
        bool moe = t & 1, fz = t & 2;
        int64_t a = lo, b = hi;
        if (moe)
            a = a > moe_from ? a : moe_from;
        else
            b = b < moe_from ? b : moe_from;
        if (fz)
            b = b < frozen ? b : frozen;
        else
            a = a > frozen ? a : frozen;
        if (b <= a)
            continue;
        int64_t alt = dt_shape_alt_in(m, a, b);
        n[t] += (int32_t)(b - a - alt);
        n[t + DT_ALT] += (int32_t)alt;
    }
}

static void dt_pipe_stages_fill(const dt_ctx *c, const dt_split *sp, dt_stages *st)
{
    const model_t *m = c->m;
    int64_t frozen = c->p->task.kind == TASK_FINETUNE ? c->t->frozen_layers : 0;
    int64_t moe_from = m->d.experts > 0 ? m->d.dense_layers : m->layers;
    int64_t L = m->layers, pp = c->d.pp;
    bool mixed_moe = moe_from > 0 && moe_from < L;
    int64_t alt = dt_shape_alt_in(m, 0, L);
    st->count = pp;
    /* types in use: the second attention kind's are DT_ALT on, so a
     * model with any such layer and more than one type uses all */
    bool several = frozen > 0 || mixed_moe;
    st->types = alt > 0 && (alt < L || several) ? DT_TYPES : frozen > 0 ? 4 : mixed_moe ? 2 : 1;
    /* the type when only one (every layer of the second kind: its type) */
    int uniform = (moe_from <= 0 ? DT_MOE : DT_DENSE) + (alt == L ? DT_ALT : 0);
    st->uniform = uniform;
    memset(st->s, 0, (size_t)pp * sizeof st->s[0]);
    int64_t C = sp->chunks, v = C / pp;
    if (st->types == 1) {
        /* one kind of layer: stage s runs chunks s + j pp, q units each
         * (+1 for the first r chunks), less the embedding's e units on
         * chunk 0 and the head's l on chunk C-1: O(pp) */
        int64_t c0 = sp->q + (0 < sp->r) - sp->e, cl = sp->q + (C - 1 < sp->r) - sp->l;
        for (int64_t s = 0; s < pp; s++) {
            dt_stage *g = &st->s[s];
            int64_t extra = sp->r > s ? (sp->r - s + pp - 1) / pp : 0;
            int64_t n = v * sp->q + extra, chunks = v;
            if (s == 0) {
                n -= sp->e;
                chunks -= c0 <= 0;
            }
            if (s == (C - 1) % pp) {
                n -= sp->l;
                chunks -= cl <= 0;
            }
            g->n[uniform] = (int32_t)n;
            g->first[uniform] = g->last[uniform] = (int32_t)chunks;
            g->sends = (int32_t)(2 * v - (s == 0) - (s == (C - 1) % pp));
        }
        return;
    }
    /* chunks in order, layer ranges accumulated (the split's) */
    int64_t units = 0, lo = 0;
    for (int64_t k = 0; k < sp->chunks; k++) {
        units += sp->q + (k < sp->r ? 1 : 0);
        int64_t hi = k + 1 >= sp->chunks ? L : units - sp->e;
        hi = hi < lo ? lo : hi > L ? L : hi;
        dt_stage *g = &st->s[k % pp];
        g->sends += (k > 0) + (k < sp->chunks - 1);
        if (hi > lo) {
            if (st->types == 1) {
                g->n[uniform] += (int32_t)(hi - lo);
                g->first[uniform]++;
                g->last[uniform]++;
            } else {
                dt_pipe_count(m, lo, hi, frozen, moe_from, g->n);
                g->first[dt_pipe_layer_type(c, lo)]++;
                g->last[dt_pipe_layer_type(c, hi - 1)]++;
            }
        }
        lo = hi;
    }
}

/* Whether stage s holds what stage s - 1 does (layers, chunk ends,
 * sends). */
static bool dt_pipe_stage_same(const dt_stages *st, int64_t s)
{
    const dt_stage *a = &st->s[s], *b = &st->s[s - 1];
    if (st->types == 1) {
        int u = st->uniform;
        return a->n[u] == b->n[u] && a->first[u] == b->first[u] && a->last[u] == b->last[u] &&
               a->sends == b->sends;
    }
    return memcmp(a, b, sizeof *a) == 0;
}

void dt_pipe_stages_build(const dt_ctx *c, const dt_split *sp, dt_stages *st)
{
    dt_pipe_stages_fill(c, sp, st);
    st->same[0] = false;
    for (int64_t s = 1; s < st->count; s++)
        st->same[s] = dt_pipe_stage_same(st, s);
}

double dt_pipe_inflight(const dt_ctx *c, int64_t s)
{
    double m = (double)c->d.ga, p = (double)c->d.pp, v = (double)c->d.v;
    if (c->t->schedule == TASK_SCHEDULE_GPIPE)
        return m;
    if (c->d.v <= 1)
        return fmin(m, p - (double)s);
    double chunks = 2.0 * (p - (double)s - 1.0) + (v - 1.0) * p + 1.0;
    return fmin(m * v, chunks) / v;
}

double dt_pipe_schedule_time(double tmax, double tsum, double m, double v)
{
    return m * tmax + (tsum - tmax) / v;
}
