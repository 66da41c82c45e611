/*
 * emb_plan.c - DLRM embeddings placed per table (emb_sharding = "auto"),
 * as the planners of HugeCTR (embedding collection, hier_auto) and
 * TorchRec do it; each table's work is emb.c's (emb_work).
 *
 * Placement. A table of at most the data-parallel threshold bytes (its
 * rows with their optimizer state, as HugeCTR's planner sizes it:
 * unit_mem_cost = ev_size x 8 B for Adagrad, 4 for SGD, MLPerf v4.0
 * dlrm_dcnv2 sharding/generate_plan.py, planner.py) is replicated:
 * every device looks it up for its own samples, its row gradients
 * are all-reduced with the MLP gradients, and every replica then updates
 * the rows the whole batch touched, once. A hybrid embedding
 * (HugeCTR's, stack emb_hot_fraction) also replicates the most frequent
 * rows of every table: that fraction of the lookups stays local. The
 * other tables are model-parallel: assigned whole to the least loaded
 * node (longest-processing-time first, node memory permitting), inside a
 * node to the least loaded device, or split by rows over the node's
 * devices when a table alone would exceed the balanced load or does not
 * fit a device (its partial sums then reduce-scattered over NVLink).
 * The busiest device sets the embedding time. Two stacks' placements
 * are their own: a hybrid embedding deals the infrequent rows of every
 * table over all devices (HugeCTR HybridSparseEmbedding, "Distributed"),
 * and a hierarchical stack (HugeCTR hier_auto) places tables on nodes by
 * its planner's cost (lookup bytes plus one exchange per shard, at the
 * run's MEM_COMM_BW_RATIO when it states one, power-of-two splits of
 * the hottest table) and spreads every shard of a node
 * over all the node's devices, whose partial sums of the whole batch are
 * reduced over NVLink before they cross the network.
 *
 * Exchange. Every device receives, for its own samples, the pooled
 * vector of every model-parallel table (and sends as much): the forward
 * all-to-all; the backward sends their gradients back. Hierarchical (the
 * stack's emb_hierarchical): the bytes cross NVLink once and the network
 * once, one message per node pair, so the latency grows with the nodes,
 *
 * Invariants: at most EMB_MAX_TABLES tables, EMB_NODES_MAX nodes and
 * EMB_NODE_MAX devices per node are balanced one by one (rules.c
 * refuses more tables); the busiest device sets the embedding time.
 */
#include "dlrm.h"

#include <math.h>
#include <string.h>

/* A hierarchical all-to-all's network part, `bytes` per device over
 * `nodes` nodes (level l1): (nodes-1)/nodes of them cross, one message
 * per node pair. Added to t term by term, as the callers' sums were
 * written (their rounding unchanged). */
static double emb_net_a2a(double t, const topo_level *l1, int64_t nodes, double bytes)
{
    return t + bytes * (double)(nodes - 1) / (double)nodes * l1->oversub / l1->bw +
           l1->alpha_s + (double)(nodes - 1) * l1->alpha_s * TOPO_A2A_PER_PEER;
}

/* One table's figures for the planner. */
typedef struct emb_table {
    double rows, pool, work, fwd, bytes;
    double cwork, cfwd; /* one column slice of g (split_columns), else 0 */
    int idx;
} emb_table;

static void emb_sort(emb_table *t, int n)
{
    for (int i = 1; i < n; i++) { /* insertion sort: few tables */
        emb_table x = t[i];
        int j = i - 1;
        while (j >= 0 && t[j].work < x.work) {
            t[j + 1] = t[j];
            j--;
        }
        t[j + 1] = x;
    }
}

/* Tables of one node over its g devices: longest first to the least
 * loaded device with room; split over all g (by rows, or by columns
 * under split_columns: each slice's lookups at its width) when the table fits
 * no device, or when it alone exceeds the node's balanced load and the
 * split (its share on every device plus `split_s`, the exchange of its
 * partial sums) ends sooner than the least loaded device would. */
static void emb_plan_node(const emb_table *t, int n, int64_t g, double cap, double base_load,
                          double base_fwd, double base_mem, double split_s, emb_plan *out)
{
    double load[EMB_NODE_MAX], fwd[EMB_NODE_MAX], mem[EMB_NODE_MAX], total = 0.0;
    int64_t k = g < EMB_NODE_MAX ? g : EMB_NODE_MAX;
    for (int64_t d = 0; d < k; d++) {
        load[d] = base_load;
        fwd[d] = base_fwd;
        mem[d] = base_mem;
    }
    for (int i = 0; i < n; i++)
        total += t[i].work;
    double target = total / (double)g;
    int split = 0;
    for (int i = 0; i < n; i++) {
        int64_t best = -1;
        for (int64_t d = 0; d < k; d++)
            if (mem[d] + t[i].bytes <= cap && (best < 0 || load[d] < load[best]))
                best = d;
        double maxl = 0.0;
        for (int64_t d = 0; d < k; d++)
            maxl = load[d] > maxl ? load[d] : maxl;
        /* split by rows: a 1/g share of the lookups; by columns: every
         * lookup of a 1/g slice (t[i].cwork) */
        double sw = t[i].cwork > 0 ? t[i].cwork : t[i].work / (double)g;
        double sf = t[i].cwork > 0 ? t[i].cfwd : t[i].fwd / (double)g;
        bool worth = best >= 0 && t[i].work > target &&
                     maxl + sw + split_s <
                         (load[best] + t[i].work > maxl ? load[best] + t[i].work : maxl);
        if (g > 1 && (best < 0 || worth)) {
            for (int64_t d = 0; d < k; d++) {
                load[d] += sw;
                fwd[d] += sf;
                mem[d] += t[i].bytes / (double)g;
            }
            split++;
        } else {
            if (best < 0)
                best = 0; /* fits nowhere: memory check reports it */
            load[best] += t[i].work;
            fwd[best] += t[i].fwd;
            mem[best] += t[i].bytes;
            out->n_table++;
        }
    }
    out->n_row += split;
    for (int64_t d = 0; d < k; d++) {
        if (load[d] > out->work_s) {
            out->work_s = load[d];
            out->fwd_s = fwd[d];
        }
        if (mem[d] > out->table_bytes)
            out->table_bytes = mem[d];
    }
    if (split > out->split_per_node)
        out->split_per_node = split;
}

/* Tables to nodes as HugeCTR's hier_auto planner does it (MLPerf v3.0 and
 * v4.0 dlrm_dcnv2 sharding/planner.py, generate_plan.py). A node's cost
 * is its shards' lookups in HBM bytes (cost[i] per table, a shard its
 * table's share) plus, per shard on it, one pooled vector per sample
 * over the network (`shard`: the planner's MEM_COMM_BW_RATIO /
 * MEM_COMM_WORK_RATIO). Each round places the shards hottest first on
 * the cheapest node that holds no shard of the same table and has room,
 * then doubles the shards of the hottest table that can still split (at
 * most one shard per node); a table that fits nowhere is split and the
 * round repeated. The cheapest of 20 rounds and of the plan that spreads
 * every table over every node wins: ld[] gets each node's load, *nsplit
 * the tables split over several nodes. False when nothing fits. */
#define EMB_HIER_ROUNDS 20 /* planner.py max_search_iter */
typedef struct emb_hier {
    const emb_table *t;
    const double *cost;
    int nt;
    int64_t nodes;
    double shard, ncap;
} emb_hier;

/* One greedy round with cur[] shards per table; returns the busiest
 * node's cost, or -1 with *oom the table that fit nowhere. The shards
 * go hottest first; a table's shards are alike, so the tables are
 * sorted (stably) by their shard's cost and their shards laid out
 * together. */
static void emb_hier_order(const emb_hier *h, const int *cur, int *ord, int *ns_out)
{
    int tab[EMB_MAX_TABLES];
    double key[EMB_MAX_TABLES]; /* a shard's cost, divided once per table */
    for (int i = 0; i < h->nt; i++)
        key[i] = h->cost[i] / cur[i];
    for (int i = 0; i < h->nt; i++) {
        int b = i - 1;
        while (b >= 0 && key[tab[b]] < key[i]) {
            tab[b + 1] = tab[b];
            b--;
        }
        tab[b + 1] = i;
    }
    int ns = 0;
    for (int q = 0; q < h->nt; q++)
        for (int k = 0; k < cur[tab[q]]; k++)
            ord[ns++] = tab[q];
    *ns_out = ns;
}

static double emb_hier_round(const emb_hier *h, const int *cur, int *ord, int *place, int *ns_out,
                             int *oom)
{
    emb_hier_order(h, cur, ord, ns_out);
    int ns = *ns_out;
    double cost[EMB_NODES_MAX], mem[EMB_NODES_MAX];
    int stamp[EMB_NODES_MAX]; /* the table that last put a shard there */
    int64_t k = h->nodes;
    for (int64_t j = 0; j < k; j++) {
        cost[j] = mem[j] = 0.0;
        stamp[j] = -1;
    }
    for (int a = 0; a < ns; a++) {
        int i = ord[a];
        double c = h->cost[i] / cur[i], mb = h->t[i].bytes / cur[i];
        int64_t pick = -1;
        double low = 0.0; /* cost[pick] */
        for (int64_t j = 0; j < k; j++) {
            bool take = (stamp[j] != i) & (mem[j] + mb <= h->ncap) & ((pick < 0) | (cost[j] < low));
            pick = take ? j : pick;
            low = take ? cost[j] : low;
        }
        if (pick < 0) {
            *oom = i;
            return -1.0;
        }
        place[a] = (int)pick;
        stamp[pick] = i;
        cost[pick] += c + h->shard;
        mem[pick] += mb;
    }
    double mx = 0.0;
    for (int64_t j = 0; j < k; j++)
        mx = cost[j] > mx ? cost[j] : mx;
    return mx;
}

/* A node's share of the plan: its shards' work (s, summed over its
 * devices), forward part, bytes and shard count. */
typedef struct emb_load {
    double work, fwd, bytes;
    int shards;
} emb_load;

static void emb_hier_keep(const emb_hier *h, const int *cur, const int *ord, const int *place,
                          int ns, emb_load *ld, int *nsplit)
{
    for (int64_t j = 0; j < h->nodes; j++)
        memset(&ld[j], 0, sizeof ld[j]);
    *nsplit = 0;
    for (int i = 0; i < h->nt; i++)
        *nsplit += cur[i] > 1;
    for (int a = 0; a < ns; a++) {
        const emb_table *t = &h->t[ord[a]];
        double c = (double)cur[ord[a]];
        emb_load *l = &ld[place[a]];
        l->work += t->work / c;
        l->fwd += t->fwd / c;
        l->bytes += t->bytes / c;
        l->shards++;
    }
}

static bool emb_hier_plan(const emb_hier *h, emb_load *ld, int *nsplit)
{
    int cur[EMB_MAX_TABLES], ord[EMB_MAX_TABLES * 4], place[EMB_MAX_TABLES * 4];
    int64_t k = h->nodes;
    double best = 0.0, mem = 0.0;
    bool found = false;
    for (int i = 0; i < h->nt; i++) {
        cur[i] = 1;
        best += h->cost[i] / (double)k + h->shard;
        mem += h->t[i].bytes / (double)k;
    }
    if (mem <= h->ncap) { /* every table on every node */
        found = true;
        for (int64_t j = 0; j < k; j++) {
            memset(&ld[j], 0, sizeof ld[j]);
            for (int i = 0; i < h->nt; i++) {
                ld[j].work += h->t[i].work / (double)k;
                ld[j].fwd += h->t[i].fwd / (double)k;
                ld[j].bytes += h->t[i].bytes / (double)k;
            }
            ld[j].shards = h->nt;
        }
        *nsplit = h->nt;
    }
    double all_bytes = 0.0, all_cost = 0.0;
    for (int i = 0; i < h->nt; i++) {
        all_bytes += h->t[i].bytes;
        all_cost += h->cost[i];
    }
    for (int round = 0; round < EMB_HIER_ROUNDS; round++) {
        int ns = 0, oom = -1, total = 0;
        double top = 0.0;
        for (int i = 0; i < h->nt; i++) {
            total += cur[i];
            top = h->cost[i] / cur[i] > top ? h->cost[i] / cur[i] : top;
        }
        if (total > EMB_MAX_TABLES * 4)
            break;
        /* a round whose busiest node cannot beat the best (the mean node,
         * the hottest shard) only picks the next split, when memory cannot
         * stop a shard anywhere */
        double lb = (all_cost + (double)total * h->shard) / (double)k;
        lb = lb > top + h->shard ? lb : top + h->shard;
        if (found && lb >= best && all_bytes <= h->ncap) {
            emb_hier_order(h, cur, ord, &ns);
        } else {
            double mx = emb_hier_round(h, cur, ord, place, &ns, &oom);
            if (mx < 0) { /* split the table that did not fit, or stop */
                if (cur[oom] * 2 > k)
                    break;
                cur[oom] *= 2;
                continue;
            }
            if (!found || mx < best) {
                best = mx;
                found = true;
                emb_hier_keep(h, cur, ord, place, ns, ld, nsplit);
            }
        }
        bool more = false;
        for (int a = 0; a < ns && !more; a++) /* the hottest shard that can split */
            if (cur[ord[a]] * 2 <= k) {
                cur[ord[a]] *= 2;
                more = true;
            }
        if (!more) /* every later round would repeat this one */
            break;
    }
    return found;
}

/* hier_auto placement (stack emb_hierarchical, several nodes): tables
 * to nodes by HugeCTR's planner, every shard of a node spread over all
 * its devices (generate_plan.py gives the node's GPUs one shard list).
 * Sets the busiest device's figures in out, *vectors (pooled vectors a
 * device receives per sample: one per shard) and *s_max (shards on the
 * busiest node); false when the planner found no plan. */
static bool emb_plan_hier(const emb_in *in, const emb_table *mp, int nmp, int64_t nodes, int64_t g,
                          double dp_load, double dp_fwd, double dp_mem, emb_plan *out,
                          double *vectors, double *s_max)
{
    const topo_level *l1 = &in->topo->level[1];
    double cost[EMB_MAX_TABLES], bpe = in->dim * in->eb + 4.0 * in->state_values;
    for (int i = 0; i < nmp; i++) /* HBM bytes of a sample's lookups */
        cost[i] = mp[i].pool * bpe / in->hw->mem_bw_bytes_per_s;
    /* one shard's exchange in the planner's units: HugeCTR's table cost
     * MEM_COMM_BW_RATIO / MEM_COMM_WORK_RATIO lookups (generate_plan.py;
     * train.py's work ratio 8 / 2: a lookup moves 4x the bytes of its
     * pooled vector) when the run states its ratio, else the bytes of
     * one pooled vector over the network */
    double shard = in->mem_comm_ratio > 0
                       ? in->mem_comm_ratio / 4.0 * bpe / in->hw->mem_bw_bytes_per_s
                       : in->dim * in->cb * l1->oversub / l1->bw;
    emb_hier h = {mp, cost, nmp, nodes, shard, (double)g * (in->cap - dp_mem)};
    emb_load ld[EMB_NODES_MAX];
    int nsplit = 0;
    if (!emb_hier_plan(&h, ld, &nsplit))
        return false;
    double shards = 0.0;
    int smax = 0;
    for (int64_t j = 0; j < nodes; j++) {
        double w = dp_load + ld[j].work / (double)g;
        if (w > out->work_s) {
            out->work_s = w;
            out->fwd_s = dp_fwd + ld[j].fwd / (double)g;
        }
        double mb = dp_mem + ld[j].bytes / (double)g;
        out->table_bytes = mb > out->table_bytes ? mb : out->table_bytes;
        shards += (double)ld[j].shards;
        smax = ld[j].shards > smax ? ld[j].shards : smax;
    }
    out->n_row = nmp; /* every table spread over its node's devices */
    out->split_per_node = nsplit;
    *vectors = shards;
    *s_max = (double)smax;
    return true;
}

/* What the replicated tables (and a hybrid embedding's hot rows) put on
 * every device, and the model-parallel tables' total work and count. */
typedef struct emb_replicated {
    double load, fwd, mem, mp_pool, total_work;
} emb_replicated;

/* The tables in order: a replicated one (at most dp_threshold bytes)
 * into rp and out (n_dp, grad_bytes), the others' figures into mp (their
 * count returned); a hybrid embedding's hot part into rp. */
static int emb_plan_tables(const emb_in *in, int64_t n, int64_t g, emb_table *mp,
                           emb_replicated *rp, emb_plan *out)
{
    const model_t *m = in->m;
    int T = (int)m->tables;
    double B = in->batch, b = B / (double)n, h = in->hot;
    double row = in->dim * in->eb;
    double per_row_state = 4.0 * in->state_values;
    int nmp = 0;
    for (int i = 0; i < T && i < EMB_MAX_TABLES; i++) {
        double R = m->d.n_tables > 0 ? (double)m->d.table_rows[i] : (double)m->rows_per_table;
        double L = m->d.n_tables > 0 ? (double)m->d.table_pooling[i] : (double)m->pooling;
        double bytes = R * (row + (in->train ? per_row_state : 0.0));
        if (n > 1 && in->dp_threshold > 0 && bytes <= in->dp_threshold) {
            /* replicated: own samples' lookups and their gradients'
             * scatter, then, after the all-reduce of the rows' gradients,
             * every row the whole batch touched updated once */
            rp->load += emb_work(in, in->dim, R, b * L, b, B * L, &rp->fwd);
            if (in->train)
                out->grad_bytes += R * -expm1(-B * L / R) * in->dim * in->cb;
            rp->mem += bytes;
            out->n_dp++;
            continue;
        }
        /* hybrid: the hot fraction served from local replicas */
        if (h > 0 && n > 1)
            rp->load += emb_work(in, in->dim, in->hot_rows > 0 ? in->hot_rows : R, b * L * h, b * h,
                                 b * L * h, &rp->fwd);
        mp[nmp].rows = R;
        mp[nmp].pool = L;
        mp[nmp].fwd = 0.0;
        double cold = n > 1 ? 1.0 - h : 1.0;
        mp[nmp].work = emb_work(in, in->dim, R, B * L * cold, B * cold, B * L * cold, &mp[nmp].fwd);
        mp[nmp].cwork = mp[nmp].cfwd = 0.0;
        if (in->split_columns && g > 1) /* a column slice, should it be split */
            mp[nmp].cwork = emb_work(in, in->dim / (double)g, R, B * L * cold, B * cold,
                                     B * L * cold, &mp[nmp].cfwd);
        mp[nmp].bytes = bytes;
        mp[nmp].idx = i;
        rp->total_work += mp[nmp].work;
        rp->mp_pool += 1.0;
        nmp++;
    }
    if (h > 0 && n > 1 && in->train) {
        out->grad_bytes += in->hot_rows * in->dim * in->cb;
        rp->mem += in->hot_rows * (row + per_row_state);
    }
    return nmp;
}

/* Table-wise placement of the nmp model-parallel tables of mp over the
 * nodes and their g devices: a table heavier than a node's share split
 * by rows over as many nodes as it needs (its parts placed like tables;
 * their partial sums cross the network like extra tables' vectors, in
 * *extra_parts), the tables to nodes (longest first, node memory
 * permitting), then each node's (emb_plan_node). Returns the tables and
 * parts placed. */
static int emb_plan_nodes(const emb_in *in, emb_table *mp, int nmp, int64_t g, int64_t nodes,
                          const emb_replicated *rp, double *extra_parts, emb_plan *out)
{
    double B = in->batch;
    emb_sort(mp, nmp);
    if (nodes > 1 && rp->total_work > 0) {
        double node_target = rp->total_work / (double)nodes;
        int n0 = nmp;
        for (int i = 0; i < n0; i++) {
            double k = ceil(mp[i].work / node_target - 1e-9);
            if (k > (double)nodes)
                k = (double)nodes;
            for (int j = 1; j < (int)k && nmp < EMB_MAX_TABLES; j++) {
                mp[nmp] = mp[i];
                nmp++;
            }
            int parts = 1 + (nmp - n0) - (int)*extra_parts;
            if (parts > 1) {
                double kk = (double)parts;
                mp[i].work /= kk;
                mp[i].fwd /= kk;
                mp[i].cwork /= kk;
                mp[i].cfwd /= kk;
                mp[i].bytes /= kk;
                for (int j = nmp - parts + 1; j < nmp; j++)
                    mp[j] = mp[i];
                *extra_parts += kk - 1.0;
            }
        }
        emb_sort(mp, nmp);
    }
    /* exchange of one split table's partial sums (reduce-scatter in the
     * node, forward and backward) */
    double split_s = 0.0;
    if (g > 1 && !in->split_columns)
        split_s = 2.0 * emb_node_rs(&in->topo->level[0], g, (B / (double)nodes) * in->dim * in->cb);
    /* tables to nodes (LPT with the node's memory), then inside each */
    double nload[EMB_NODES_MAX], nmem[EMB_NODES_MAX];
    int owner[EMB_MAX_TABLES];
    int64_t kn = nodes < EMB_NODES_MAX ? nodes : EMB_NODES_MAX;
    if (kn > nmp && nmp > 0)
        kn = nmp; /* nodes beyond the tables hold none */
    for (int64_t k = 0; k < kn; k++)
        nload[k] = nmem[k] = 0.0;
    double ncap = (double)g * (in->cap - rp->mem);
    for (int i = 0; i < nmp; i++) {
        int64_t best = 0;
        for (int64_t k = 1; k < kn; k++)
            if ((nmem[k] + mp[i].bytes <= ncap) > (nmem[best] + mp[i].bytes <= ncap) ||
                ((nmem[k] + mp[i].bytes <= ncap) == (nmem[best] + mp[i].bytes <= ncap) &&
                 nload[k] < nload[best]))
                best = k;
        owner[i] = (int)best;
        nload[best] += mp[i].work;
        nmem[best] += mp[i].bytes;
    }
    for (int64_t k = 0; k < kn; k++) {
        emb_table sub[EMB_MAX_TABLES];
        int ns = 0;
        for (int i = 0; i < nmp; i++)
            if (owner[i] == k)
                sub[ns++] = mp[i];
        emb_plan_node(sub, ns, g, in->cap, rp->load, rp->fwd, rp->mem, split_s, out);
    }
    if (nmp == 0) {
        out->work_s = rp->load;
        out->fwd_s = rp->fwd;
        out->table_bytes = rp->mem;
    }
    return nmp;
}

/* The pooled exchange: every device receives the model-parallel tables'
 * vectors for its samples (`vectors` of them, the cold part with a
 * hybrid embedding); split tables add their partial sums' reduce-scatter
 * inside the node; hier: the busiest node's shards (s_max) reduced over
 * NVLink before they cross the network. And the ids' exchange, the
 * pooled bytes per device. */
static void emb_plan_exchange(const emb_in *in, int64_t n, int64_t g, int64_t nodes, bool hier,
                              double vectors, double s_max, emb_plan *out)
{
    double B = in->batch, b = B / (double)n, h = in->hot;
    double cold = n > 1 ? 1.0 - h : 1.0;
    double x = b * in->dim * in->cb * vectors * cold;
    /* the busiest node's split tables' partial sums, reduce-scattered */
    double part = (double)out->split_per_node * (B / (double)nodes) * in->dim * in->cb;
    const topo_t *topo = in->topo;
    double t = 0.0;
    if (hier) {
        /* the busiest node's devices reduce their partial sums of the
         * whole batch for its shards over NVLink
         * (hier_model_parallel_embedding.cpp: intra-node reduction),
         * then send them on their rails; every device receives its
         * samples' vectors of all shards */
        const topo_level *l0 = &topo->level[0], *l1 = &topo->level[1];
        double node_out = s_max * B * in->dim * in->cb;
        double send = node_out / (double)g, recv = x;
        t = emb_net_a2a(emb_node_rs(l0, g, node_out), l1, nodes, send > recv ? send : recv);
    } else if (n > 1) {
        const topo_level *l0 = &topo->level[0];
        if (nodes > 1 && in->hierarchical && topo->nlevels > 1) {
            const topo_level *l1 = &topo->level[1];
            t = emb_net_a2a(x / l0->bw + l0->alpha_s +
                                (double)(g - 1) * l0->alpha_s * TOPO_A2A_PER_PEER,
                            l1, nodes, x);
        } else {
            t = topo_coll_time(topo, TOPO_ALLTOALL, n, 1, x);
        }
        if (part > 0 && g > 1 && !in->split_columns)
            t += emb_node_rs(l0, g, part);
    }
    out->a2a_s = t;
    out->ids_s = n > 1 ? topo_coll_time(topo, TOPO_ALLTOALL, n, 1,
                                        x / (in->dim * in->cb) * 4.0 * in->mean_pool)
                       : 0.0;
    out->pooled_bytes = x + b * in->dim * in->cb * (double)out->n_dp;
}

void emb_plan_run(const emb_in *in, emb_plan *out)
{
    memset(out, 0, sizeof *out);
    int64_t n = in->devices, g = in->per_node < n ? in->per_node : n;
    if (g < 1)
        g = 1;
    int64_t nodes = (n + g - 1) / g;
    double h = in->hot;
    emb_table mp[EMB_MAX_TABLES];
    emb_replicated rp = {0.0, 0.0, 0.0, 0.0, 0.0};
    int nmp = emb_plan_tables(in, n, g, mp, &rp, out);
    double vectors = rp.mp_pool, s_max = 0.0, extra_parts = 0.0;
    bool hybrid = h > 0 && n > 1;
    bool hier =
        !hybrid && nodes > 1 && nodes <= EMB_NODES_MAX && in->hierarchical && nmp > 0 &&
        in->topo->nlevels > 1 &&
        emb_plan_hier(in, mp, nmp, nodes, g, rp.load, rp.fwd, rp.mem, out, &vectors, &s_max);
    if (hybrid) {
        /* HybridSparseEmbedding (HybridEmbeddingType Distributed, MLPerf
         * v2.0 dlrm dgx_a100_8x8x1120.py): the infrequent categories of
         * every table dealt over all devices, whole rows */
        out->work_s = rp.load + rp.total_work / (double)n;
        out->fwd_s = rp.fwd;
        double mem = rp.mem;
        for (int i = 0; i < nmp; i++) {
            out->fwd_s += mp[i].fwd / (double)n;
            mem += mp[i].bytes / (double)n;
        }
        out->table_bytes = mem;
        out->n_row = nmp;
    }
    if (!hybrid && !hier) /* else placed already */
        nmp = emb_plan_nodes(in, mp, nmp, g, nodes, &rp, &extra_parts, out);
    double mean = rp.load + rp.total_work / (double)n;
    out->imbalance = mean > 0 ? out->work_s / mean : 1.0;
    out->n_mp = hybrid || hier ? (int)vectors : nmp;
    emb_plan_exchange(in, n, g, nodes, hier, vectors + extra_parts, s_max, out);
}
