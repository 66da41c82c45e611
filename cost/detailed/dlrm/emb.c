/*
 * emb.c - a DLRM's embeddings: the work of a table's (or shard's)
 * lookups, the small all-reduces of DLRM training, and the embedding
 * part of an iteration on the busiest device, under a fixed sharding
 * (table-, row- or column-wise: each device's shards alike) or the
 * per-table planner's placement (emb_plan.c).
 *
 * Physics. A lookup is a random gather of one row (emb_dim x the table's
 * bytes) from HBM: the gather reaches the hardware's streaming bandwidth
 * times row / (row + 64 B), a DRAM access of a row costing one extra
 * 64-byte burst of row activation and sector waste. Pooling writes one
 * vector per table and sample. Training: the pooled gradients are read
 * and scattered to the rows, and the sparse optimizer reads and writes
 * every touched row once (after de-duplication) with its state (SGD
 * none, row-wise Adagrad 1 value per row, Adagrad 1 and Adam 2 per
 * element, fp32). Touched rows of a table of R rows hit n times:
 * R (1 - exp(-n / R)) (uniform hashing; skewed ids touch fewer). A
 * table split by columns (stack emb_split_columns: Merlin Distributed
 * Embeddings' column slicing) gives each device every lookup of a
 * 1/g-wide slice: the same bytes as a 1/g row share, but each slice's
 * gather pays the whole 64-byte burst (a 128-wide fp32 row cut 8 ways
 * gathers 64-byte pieces at half the streaming rate, not 8/9 of it).
 *
 * All-reduces (MLP gradients, replicated rows) take the algorithm NCCL
 * would pick for their size (topo.c's "auto": tree, NVLS, ring or
 * hierarchical, with its protocols). With in-network reduction (SHARP,
 * NCCL CollNet; the task's allreduce_sharp) the switches reduce: a
 * reduce-scatter and an all-gather in the node, and each node's share
 * crosses the network once each way, two latencies.
 * Invariant: emb_work is the one model of an embedding's work, the
 * planner's and the fixed shardings'.
 */
#include "dlrm.h"

#include <math.h>
#include <string.h>

#define EMB_BURST 64.0 /* bytes of row activation / sector waste per gather */

/* each device sends (g-1)/g of them, g-1 steps */
double emb_node_rs(const topo_level *l0, int64_t g, double bytes)
{
    return bytes * (double)(g - 1) / (double)g / l0->bw + (double)(g - 1) * l0->alpha_s;
}

/* Seconds per byte of random row gathers of `row` bytes. */
static double emb_gather_sec(const hw_t *hw, double row)
{
    return hw_mem_time(hw, 1.0) * (row + EMB_BURST) / row;
}

double emb_allreduce(const topo_t *topo, int64_t n, double bytes, bool sharp)
{
    if (n <= 1 || bytes <= 0)
        return 0.0;
    if (!sharp) /* the algorithm NCCL would pick (topo.c's "auto") */
        return topo_coll_time(topo, TOPO_ALLREDUCE, n, 1, bytes);
    const topo_level *l0 = &topo->level[0];
    int64_t g = l0->span < n ? l0->span : n;
    int64_t nodes = (n + g - 1) / g;
    double t = 0.0;
    if (g > 1) /* reduce-scatter and all-gather in the node */
        t += 2.0 * emb_node_rs(l0, g, bytes);
    if (nodes > 1 && topo->nlevels > 1) {
        const topo_level *l1 = &topo->level[1];
        double part = bytes / (double)g;
        /* reduced in the switches: sent once, received once */
        t += part * l1->oversub / l1->bw + 2.0 * l1->alpha_s;
    }
    return t;
}

/* One table's (or shard's) lookups, gradient scatter and update;
 * `w` is emb_dim, or a column slice of it (each slice's gather pays the
 * burst of a whole row access), the optimizer state shrinking with it. */
double emb_work(const emb_in *in, double w, double rows, double n, double bsz, double nu,
                double *fwd)
{
    double row = w * in->eb, gs = emb_gather_sec(in->hw, row);
    double state = in->state_values * w / in->dim;
    double t = n * row * gs + bsz * w * in->cb * hw_mem_time(in->hw, 1.0);
    *fwd += t;
    if (in->train) {
        /* pooled gradients read, gathered per lookup, summed per touched
         * row; the rows nu lookups touch read and written with their
         * state */
        double touched = nu > 0.0 ? rows * -expm1(-nu / rows) : 0.0;
        t += bsz * w * in->cb * hw_mem_time(in->hw, 1.0) +
             n * w * in->cb * emb_gather_sec(in->hw, w * in->cb) +
             touched * (2.0 * row + 2.0 * 4.0 * state) * gs;
    }
    return t;
}

/* What every sharding's embedding work reads (emb_work); the
 * planner's placement facts (hot fraction, replication threshold,
 * capacity, exchange) are `auto`'s to set. */
static void emb_in_of(const point_t *p, const task_detailed_t *ts, int64_t n, double B, double eb,
                      double cb, bool emb_train, emb_in *in)
{
    const model_t *m = &p->model;
    memset(in, 0, sizeof *in);
    in->m = m;
    in->hw = &p->system.hw;
    in->topo = &p->system.topo;
    in->devices = n;
    in->per_node = p->system.topo.level[0].span;
    in->batch = B;
    in->dim = (double)m->emb_dim;
    in->eb = eb;
    in->cb = cb;
    in->state_values = dlrm_shape_state_values(ts, (double)m->emb_dim);
    in->mean_pool = (double)m->pooling;
    in->train = emb_train;
}

/* A fixed sharding (table-, row- or column-wise): each device's shards
 * are alike, so its work is one shard's (the planner's model of a
 * table's lookups, gradient scatter and update, emb_work) times
 * their number. */
void emb_fixed(const point_t *p, const task_detailed_t *ts, int64_t n, double B, double b,
               double eb, double cb, bool emb_train, emb_part *o)
{
    const model_t *m = &p->model;
    const topo_t *topo = &p->system.topo;
    double ov = p->system.hw.kernel_overhead_s, T = (double)m->tables, D = (double)m->emb_dim;
    detailed_dlrm_emb s;
    detailed_dlrm_shard(m, ts, n, B, &s);
    emb_in in;
    emb_in_of(p, ts, n, B, eb, cb, emb_train, &in);
    double fwd = 0.0, work = 0.0;
    if (s.shards > 0) {
        double nl = s.lookups / s.shards;
        work = s.shards * emb_work(&in, s.width, s.rows, nl, s.outputs / s.shards, nl, &fwd);
        fwd *= s.shards;
    }
    double pooled = s.outputs * s.width * cb;
    o->row = ts->emb_sharding == TASK_EMB_ROW;
    o->lookup = fwd + ov;
    o->update = emb_train ? work - fwd + ov : 0.0;
    o->ids = topo_coll_time(topo, TOPO_ALLTOALL, n, 1,
                            T * b * (double)m->pooling * 4.0 * s.id_copies);
    o->pool_f = topo_coll_time(topo, o->row ? TOPO_REDUCESCATTER : TOPO_ALLTOALL, n, 1, pooled);
    /* the backward sends as much back: the same all-to-all, or the
     * all-gather of what the forward reduce-scattered (topo.h: one cost
     * for the two) */
    o->pool_b = emb_train ? o->pool_f : 0.0;
    o->grad_bytes = 0.0;
    o->table_bytes = s.shards * s.rows * s.width * eb;
    o->state_bytes = emb_train ? s.shards * s.rows * s.state_values * 4.0 : 0.0;
    o->pooled_bytes = (s.outputs * s.width + b * T * D) * cb;
}

void emb_auto(const point_t *p, const task_detailed_t *ts, int64_t n, double B, double b, double eb,
              double cb, bool emb_train, double hot, double cap, emb_part *o, emb_plan *pl,
              emb_memo *memo)
{
    const model_t *m = &p->model;
    const stack_desc *st = &p->stack;
    emb_in in;
    emb_in_of(p, ts, n, B, eb, cb, emb_train, &in);
    in.hot = hot;
    in.hot_rows = st->emb_hot_rows;
    /* a hybrid embedding replicates frequent rows of every table instead
     * of whole small tables */
    in.dp_threshold = hot > 0                          ? 0.0
                      : ts->emb_dp_threshold_bytes >= 0 ? ts->emb_dp_threshold_bytes
                                                        : st->emb_dp_threshold_bytes;
    in.cap = cap;
    in.hierarchical = st->emb_hierarchical;
    in.split_columns = st->emb_split_columns;
    in.mem_comm_ratio = ts->emb_mem_comm_bw_ratio;
    if (memo->valid && memo->hot == hot && memo->cap == cap) {
        *pl = memo->plan;
    } else {
        emb_plan_run(&in, pl);
        memo->valid = true;
        memo->hot = hot;
        memo->cap = cap;
        memo->plan = *pl;
    }
    double ov = p->system.hw.kernel_overhead_s;
    o->row = false;
    o->lookup = pl->fwd_s + ov;
    o->update = emb_train ? pl->work_s - pl->fwd_s + ov : 0.0;
    o->ids = pl->ids_s;
    o->pool_f = pl->a2a_s;
    o->pool_b = emb_train ? pl->a2a_s : 0.0;
    o->grad_bytes = emb_train ? pl->grad_bytes : 0.0;
    o->table_bytes = pl->table_bytes;
    o->state_bytes = 0.0; /* inside table_bytes */
    o->pooled_bytes = pl->pooled_bytes + b * (double)m->tables * (double)m->emb_dim * cb;
}
