/*
 * test_embeddings.c - hand-derived tests of the detailed fidelity's DLRM:
 * embedding sharding (table-wise, row-wise, column-wise, data-parallel),
 * the per-table planner, HugeCTR's hierarchical placement, replicated
 * tables' updates, DLRM evaluation and auto strategies, on a small DLRM
 * whose figures are worked out on paper beside each check.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../cost/detailed/dlrm/dlrm.h"
#include "unit.h"

/* A small DLRM on the tidy hardware: 6 tables of R rows x 16 fp32,
 * pooling 10, bottom MLP 8-16, top MLP 37-4-1 (37 = 16 + 6 * 7 / 2),
 * on 4 devices of one node, global batch 1024 (256 per device). */
static point_t dlrm_point(int sharding, int64_t rows)
{
    point_t p;
    memset(&p, 0, sizeof p);
    p.fidelity = EVAL_DETAILED;
    strcpy(p.model.name, "dlrm");
    p.model.kind = MODEL_DLRM;
    p.model.tables = 6;
    p.model.rows_per_table = rows;
    p.model.emb_dim = 16;
    p.model.pooling = 10;
    p.model.bytes_per_emb_param = 4;
    p.model.d.bot_n = 2;
    p.model.d.bot_mlp[0] = 8;
    p.model.d.bot_mlp[1] = 16;
    p.model.d.top_n = 2;
    p.model.d.top_mlp[0] = 4;
    p.model.d.top_mlp[1] = 1;
    p.system.hw = unit_tidy_hw();
    p.system.devices = 4;
    p.system.devices_per_node = 8;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.kind = TASK_PRETRAIN;
    p.task.detailed.dp = 4;
    p.task.detailed.dtype = HW_BF16;
    p.task.detailed.global_batch = 1024;
    p.task.detailed.overlap_dp_comm = true;
    p.task.detailed.emb_sharding = sharding;
    return p;
}

static void test_dlrm_sharding(void)
{
    /* Table-wise: ceil(6/4) = 2 whole tables on the busiest device,
     * each looked up for all 1024 samples: 2 x 1024 x 10 = 20480 rows,
     * 2048 pooled vectors. Row-wise: every table's 1000/4 = 250 rows,
     * hit by 10/4 of a table's lookups per sample: 6 x 1024 x 10 / 4 =
     * 15360 rows, 6 x 1024 = 6144 partial sums. Column-wise with 2
     * shards per table: 12 shards of 8 columns, ceil(12/4) = 3 each. */
    point_t p = dlrm_point(TASK_EMB_TABLE, 1000);
    detailed_dlrm_emb s;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.shards, 2, 0);
    UNIT_ASSERT_CLOSE(s.lookups, 20480, 0);
    UNIT_ASSERT_CLOSE(s.outputs, 2048, 0);
    UNIT_ASSERT_CLOSE(s.state_values, 1, 0); /* row-wise Adagrad */
    p.task.detailed.emb_sharding = TASK_EMB_ROW;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.rows, 250, 0);
    UNIT_ASSERT_CLOSE(s.lookups, 15360, 0);
    UNIT_ASSERT_CLOSE(s.outputs, 6144, 0);
    p.task.detailed.emb_sharding = TASK_EMB_COLUMN;
    p.task.detailed.emb_column_shards = 2;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.shards, 3, 0);
    UNIT_ASSERT_CLOSE(s.width, 8, 0);
    UNIT_ASSERT_CLOSE(s.lookups, 30720, 0);
    UNIT_ASSERT_CLOSE(s.id_copies, 2, 0);
    /* default column shards: the smallest divisor c of 16 with 6 c >= 4
     * is 1; with 2 tables on 4 devices it is 2; Adagrad keeps one value
     * per element of the shard (8), Adam two */
    p.task.detailed.emb_column_shards = 0;
    CU_ASSERT_EQUAL(detailed_dlrm_column_shards(&p.model, &p.task.detailed, 4), 1);
    p.model.tables = 2;
    CU_ASSERT_EQUAL(detailed_dlrm_column_shards(&p.model, &p.task.detailed, 4), 2);
    p.task.detailed.emb_optimizer = TASK_EMB_OPT_ADAGRAD;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.state_values, 8, 0);
    p.task.detailed.emb_optimizer = TASK_EMB_OPT_ADAM;
    detailed_dlrm_shard(&p.model, &p.task.detailed, 4, 1024, &s);
    UNIT_ASSERT_CLOSE(s.state_values, 16, 0);
}

static void test_dlrm_eval(void)
{
    engine e;
    engine_init(&e, false);
    result_t r;
    /* Memory, table-wise, training: MLP parameters 8x16+16 + 37x4+4 +
     * 4x1+1 = 301, 2 bytes each replicated (weights and gradients), 12
     * bytes of Adam; tables 2 x 1000 x 16 x 4 = 128000 bytes; row-wise
     * Adagrad 2 x 1000 x 4 = 8000 bytes. */
    point_t p = dlrm_point(TASK_EMB_TABLE, 1000);
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_weights_bytes_per_device, 602 + 128000, 1e-15);
    UNIT_ASSERT_CLOSE(r.mem_grads_bytes_per_device, 602, 1e-15);
    UNIT_ASSERT_CLOSE(r.mem_optimizer_bytes_per_device, 12 * 301 + 8000, 1e-15);
    /* embeddings in training, priced per table as the planner prices
     * one (emb.c emb_work): gathers of 20480 rows of 64 bytes, each
     * paying a 64-byte burst (2 x 64 bytes), and 2048 pooled writes x
     * 64; then the pooled gradients read (2048 x 64), scattered per
     * lookup (20480 x 64, with the burst), and the fused update reading
     * and writing each touched row (128) and its row-wise Adagrad value
     * (8), with the burst: of a table's 1000 rows, 10240 lookups touch
     * 1000 (1 - e^-10.24); at 0.5 TB/s, no kernel overhead */
    double touched = 1000.0 * -expm1(-10.24);
    UNIT_ASSERT_CLOSE(r.compute_emb_s,
                      (20480.0 * 128 + 2048.0 * 64 + 2048.0 * 64 + 20480.0 * 128 +
                       2.0 * touched * 136 * 2) /
                          0.5e12,
                      1e-12);
    CU_ASSERT(r.comm_allreduce_s > 0 && r.iteration_time_s > 0);

    /* Inference: lookups only; ids (6 tables x 256 samples x 10 x 4 B =
     * 61440 B) and pooled vectors (2048 x 64 = 131072 B) all-to-all on 4
     * devices of a 100 GB/s node: 3/4 of the bytes over the bandwidth +
     * per all-to-all one latency (1 us) and 3 peers at an eighth of it
     * (topo.h): 1.375 us each. */
    p.task.kind = TASK_INFERENCE;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, (20480.0 * 128 + 2048.0 * 64) / 0.5e12, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_alltoall_s, 0.75 * (61440.0 + 131072.0) / 100e9 + 2.75e-6, 1e-12);
    CU_ASSERT_EQUAL(r.global_batch, 1024);
    double fwd_gemm = r.compute_gemm_s;
    /* row-wise: 6 tables x 250 rows; 15360 gathers of 64 bytes with
     * the burst, 6144 pooled writes of 64;
     * the partial sums reduce-scattered: 6144 x 64 = 393216 bytes, a
     * ring in NCCL's LL128 protocol at that size (0.92 of the bandwidth,
     * 1.9/3.4 of Simple's per-step latency: 4.9 us against Simple's
     * 5.95) */
    p.task.detailed.emb_sharding = TASK_EMB_ROW;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, (15360.0 * 128 + 6144.0 * 64) / 0.5e12, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_reducescatter_s,
                      0.75 * 393216.0 / (100e9 * 0.92) + 3e-6 * 1.9 / 3.4, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_alltoall_s, 0.75 * 61440.0 / 100e9 + 1.375e-6, 1e-12);
    UNIT_ASSERT_CLOSE(r.mem_weights_bytes_per_device, 602 + 6 * 250 * 64, 1e-15);

    /* Fine-tuning with everything frozen costs the forward only: the
     * same MLP time as inference, no gradients, no optimizer states. */
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.kind = TASK_FINETUNE;
    p.task.freeze_emb = p.task.freeze_bot_mlp = p.task.freeze_top_mlp = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.compute_gemm_s, fwd_gemm, 1e-12);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, (20480.0 * 128 + 2048.0 * 64) / 0.5e12, 1e-12);
    UNIT_ASSERT_CLOSE(r.mem_grads_bytes_per_device + r.mem_optimizer_bytes_per_device, 0, 0);
    CU_ASSERT_EQUAL(r.comm_allreduce_s, 0);
    /* frozen bottom MLP only: gradients of the top MLP (157 params) */
    p.task.freeze_emb = p.task.freeze_top_mlp = false;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_grads_bytes_per_device, 2 * 157, 1e-15);

    /* Load imbalance by table granularity: 700M rows of 64 bytes, 2
     * tables (89.6 GB) do not fit in 80 GB table-wise; row-wise holds
     * 6 x 175M rows = 67.2 GB + 4.2 GB of Adagrad and fits. */
    p = dlrm_point(TASK_EMB_TABLE, 700000000);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_MEMORY);
    CU_ASSERT(r.mem_weights_bytes_per_device > 89.6e9);
    p.task.detailed.emb_sharding = TASK_EMB_ROW;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.mem_optimizer_bytes_per_device, 12 * 301 + 6 * 175e6 * 4, 1e-12);

    /* rules: no tensor parallelism; dp = devices; bottom output = emb_dim */
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.detailed.tp = 2;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_STRATEGY);
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.detailed.dp = 2;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_PRODUCT);
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.model.d.bot_mlp[1] = 32;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_VALUE);
    p = dlrm_point(TASK_EMB_TABLE, 1000);
    p.task.detailed.global_batch = 1022; /* not a multiple of 4 */
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_BATCH);
    engine_free(&e);
}

/* The per-table planner (emb_sharding "auto", cost/detailed/dlrm/emb_plan.c) and
 * the DCNv2 cross network. */
static void test_dlrm_planner(void)
{
    engine e;
    engine_init(&e, false);
    result_t r, r1;
    /* DCNv2 parameters: 2 tables of dim 4, bottom 3-4, top 2-1, one cross
     * layer of rank 2 on W = (2 + 1) x 4 = 12: U, V 12 x 2 each and a
     * bias of 12 -> 60; top MLP from 12: 12 x 2 + 2 + 2 x 1 + 1 = 29 */
    model_t m;
    memset(&m, 0, sizeof m);
    m.kind = MODEL_DLRM;
    m.tables = 2;
    m.emb_dim = 4;
    m.rows_per_table = 5;
    m.d.bot_n = 2;
    m.d.bot_mlp[0] = 3;
    m.d.bot_mlp[1] = 4;
    m.d.top_n = 2;
    m.d.top_mlp[0] = 2;
    m.d.top_mlp[1] = 1;
    m.d.interaction = MODEL_INTERACTION_DCNV2;
    m.d.cross_layers = 1;
    m.d.cross_rank = 2;
    m.d.n_tables = 2;
    m.d.table_rows[0] = 5;
    m.d.table_rows[1] = 7;
    double bot, top, emb;
    detailed_dlrm_params(&m, &bot, &top, &emb);
    UNIT_ASSERT_CLOSE(top, 60 + 29, 1e-15);
    UNIT_ASSERT_CLOSE(emb, (5 + 7) * 4, 1e-15);

    /* Tables listed one by one: three of 10 rows (640 B) and three of
     * 100000; with a threshold of 1 kB the small ones are replicated, the
     * others model-parallel (whole or split); without, all six are
     * model-parallel, whole (four devices for six tables of equal
     * lookups: splitting would not shorten the busiest device). */
    point_t p = dlrm_point(TASK_EMB_AUTO, 1000);
    p.model.d.n_tables = 6;
    for (int i = 0; i < 6; i++) {
        p.model.d.table_rows[i] = i < 3 ? 10 : 100000;
        p.model.d.table_pooling[i] = 10;
    }
    p.task.detailed.emb_dp_threshold_bytes = 1000.0;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r.emb_dp_tables, 3);
    CU_ASSERT_EQUAL(r.emb_whole_tables + r.emb_split_tables, 3);
    CU_ASSERT(r.iteration_time_s > 0 && r.comm_alltoall_s > 0);
    p.task.detailed.emb_dp_threshold_bytes = 0.0;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r1, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r1.emb_dp_tables, 0);
    CU_ASSERT_EQUAL(r1.emb_whole_tables, 6);
    /* replicated tables' row gradients join the MLPs' all-reduce */
    CU_ASSERT(r.comm_allreduce_s > r1.comm_allreduce_s);
    /* a hybrid embedding keeps half the lookups local (stack fact): less
     * exchanged than with every lookup remote */
    p.stack.emb_hot_fraction = (stack_fact){0.5, 0.5, 0.5};
    p.task.detailed.emb_hybrid = true;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    result_t r2;
    p.task.detailed.emb_hybrid = false;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r2, NULL), STATUS_OK);
    p.task.detailed.emb_hybrid = true;
    CU_ASSERT(r.comm_alltoall_s < r2.comm_alltoall_s);
    /* the band from the stack's ranges: a host cost of 0 to 1 ms per
     * iteration (nominal 0) puts the slow end 1 ms later */
    p.stack.step_overhead_s = (stack_fact){0.0, 0.0, 1e-3};
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(r.iteration_time_hi_s, r.iteration_time_s + 1e-3, 1e-9);
    UNIT_ASSERT_CLOSE(r.iteration_time_lo_s, r.iteration_time_s, 1e-12);
    /* a list that does not match the tables is refused */
    p.model.d.n_tables = 5;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_VALUE);
    /* a listed table's rows from 1 to DT_MAX_BATCH (2^40), its pooling
     * from 1: each edge of rules.c dt_rules_dlrm's branch-free pass, on the last
     * table and on the first */
    p.model.d.n_tables = 6;
    static const struct {
        int64_t rows;
        int32_t pool;
        status_code want;
    } edge[] = {{1, 1, STATUS_OK},
                {INT64_C(1) << 40, INT32_MAX, STATUS_OK},
                {0, 10, STATUS_INVALID_VALUE},
                {-1, 10, STATUS_INVALID_VALUE},
                {INT64_MIN, 10, STATUS_INVALID_VALUE},
                {(INT64_C(1) << 40) + 1, 10, STATUS_INVALID_VALUE},
                {INT64_MAX, 10, STATUS_INVALID_VALUE},
                {10, 0, STATUS_INVALID_VALUE},
                {10, -1, STATUS_INVALID_VALUE},
                {10, INT32_MIN, STATUS_INVALID_VALUE}};
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
        for (int at = 0; at < 6; at += 5) {
            int64_t rows = p.model.d.table_rows[at];
            int32_t pool = p.model.d.table_pooling[at];
            p.model.d.table_rows[at] = edge[k].rows;
            p.model.d.table_pooling[at] = edge[k].pool;
            CU_ASSERT_EQUAL(eval_check(&p, NULL), edge[k].want);
            p.model.d.table_rows[at] = rows;
            p.model.d.table_pooling[at] = pool;
        }
    }
    engine_free(&e);
}

/* HugeCTR's hier_auto placement (stack emb_hierarchical, several nodes)
 * on the MLPerf DLRM-DCNv2 tables (training_results_v4.0 NVIDIA
 * dlrm_dcnv2 train.py: TABLE_SIZE_ARRAY, MULTI_HOT_SIZES), 16 nodes of 8. */
static void test_dlrm_hier(void)
{
    static const int64_t rows[26] = {40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63,
                                     40000000, 3067956, 405282, 10, 2209, 11938, 155, 4, 976,
                                     14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36};
    static const int64_t pool[26] = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1,
                                     6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
    engine e;
    engine_init(&e, false);
    point_t p = dlrm_point(TASK_EMB_AUTO, 1000);
    p.model.tables = 26;
    p.model.emb_dim = 128;
    p.model.pooling = 9;
    p.model.d.bot_mlp[1] = 128;
    p.model.d.n_tables = 26;
    for (int i = 0; i < 26; i++) {
        p.model.d.table_rows[i] = rows[i];
        p.model.d.table_pooling[i] = pool[i];
    }
    p.system.hw.mem_capacity_bytes = 160e9;
    p.system.devices = 128;
    p.system.devices_per_node = 8;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.detailed.dp = 128;
    p.task.detailed.global_batch = 135168;
    p.task.detailed.emb_optimizer = TASK_EMB_OPT_ADAGRAD;
    p.stack.emb_hierarchical = true;
    /* DP_SHARDING_THRESHOLD 0.0125 GB on rows of 128 fp32 values and
     * their Adagrad state (1024 B): tables under 12207 rows, 14 of them
     * (planner.py's dp_table_id; the weights alone would give 17) */
    p.task.detailed.emb_dp_threshold_bytes = 0.0125e9;
    result_t r4, r3;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r4, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r4.emb_dp_tables, 14);
    /* every other table spread over its node's 8 GPUs */
    CU_ASSERT_EQUAL(r4.emb_whole_tables, 0);
    CU_ASSERT_EQUAL(r4.emb_split_tables, 12);
    /* a run that states a far lower MEM_COMM_BW_RATIO than the hardware's
     * (about 80 here) makes a shard cheap to its planner (planner.py:
     * table cost = ratio / 4 lookups): the hot tables are split further,
     * more pooled vectors cross the network */
    result_t rr;
    p.task.detailed.emb_mem_comm_bw_ratio = 1e-3;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rr, NULL), STATUS_OK);
    CU_ASSERT(rr.comm_alltoall_s > r4.comm_alltoall_s);
    p.task.detailed.emb_mem_comm_bw_ratio = -1.0; /* rejected */
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rr, NULL), STATUS_INVALID_VALUE);
    p.task.detailed.emb_mem_comm_bw_ratio = 0.0;
    /* without replicated tables (the v3.0 runs) all 26 are placed on
     * nodes: more shards, more pooled vectors exchanged */
    p.task.detailed.emb_dp_threshold_bytes = 0.0;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r3, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r3.emb_dp_tables, 0);
    CU_ASSERT_EQUAL(r3.emb_split_tables, 26);
    CU_ASSERT(r3.comm_alltoall_s > r4.comm_alltoall_s);
    /* a flat stack places the same tables table-wise instead */
    p.stack.emb_hierarchical = false;
    result_t rf;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &rf, NULL), STATUS_OK);
    CU_ASSERT(rf.emb_whole_tables > 0);
    engine_free(&e);
}

/* A replicated table in training (dlrm/emb_plan.c's planner, one table under the
 * data-parallel threshold on 4 devices of a node): each device gathers
 * its own b*L lookups, writes its pooled vectors, reads their gradients
 * and scatters them per lookup; after the all-reduce of the rows'
 * gradients every replica updates, once, the rows the whole batch's B*L
 * lookups touched (read and write the row and its fp32 state), and not
 * also the rows of its own lookups. The expected figures are written out
 * from those terms: a random gather of `row` bytes moves at the streaming
 * rate times row / (row + 64 B); R rows hit k times touch
 * R (1 - exp(-k / R)). */
static void test_dlrm_replicated_update(void)
{
    point_t p = dlrm_point(TASK_EMB_AUTO, 1000);
    model_t *m = &p.model;
    m->tables = 1;
    const double R = 1000, L = 10, D = 16, eb = 4, cb = 4, S = 2; /* S: state values */
    const double B = 1024, n = 4, b = B / n;
    emb_in in;
    memset(&in, 0, sizeof in);
    in.m = m;
    in.hw = &p.system.hw;
    in.topo = &p.system.topo;
    in.devices = 4;
    in.per_node = 8;
    in.batch = B;
    in.dim = D;
    in.eb = eb;
    in.cb = cb;
    in.state_values = S;
    in.dp_threshold = 1e12; /* replicated */
    in.cap = 1e12;
    in.mean_pool = L;
    in.train = true;
    emb_plan pl;
    emb_plan_run(&in, &pl);
    CU_ASSERT_EQUAL(pl.n_dp, 1);
    double mem = hw_mem_time(&p.system.hw, 1.0), row = D * eb;
    double gs = mem * (row + 64.0) / row, gs_grad = mem * (D * cb + 64.0) / (D * cb);
    double fwd = b * L * row * gs + b * D * cb * mem;
    double touched = R * (1.0 - exp(-B * L / R)); /* about R: 10 hits per row */
    double bwd = b * D * cb * mem + b * L * D * cb * gs_grad +
                 touched * (2.0 * row + 2.0 * 4.0 * S) * gs;
    UNIT_ASSERT_CLOSE(pl.fwd_s, fwd, 1e-12);
    UNIT_ASSERT_CLOSE(pl.work_s, fwd + bwd, 1e-12);
    UNIT_ASSERT_CLOSE(pl.grad_bytes, touched * D * cb, 1e-12);
    /* inference: the lookups alone */
    in.train = false;
    emb_plan_run(&in, &pl);
    UNIT_ASSERT_CLOSE(pl.work_s, fwd, 1e-12);
}

static void test_dlrm_auto(void)
{
    /* the DLRM candidates are the last options of the first degree tuple
     * (all degrees 1): the last three, table-, row- and column-wise; they
     * refuse LLM models and the transformer candidates refuse DLRM
     * models; on any other tuple they duplicate the first's */
    const eval_ops *ops = eval_ops_of(EVAL_DETAILED);
    int64_t tuples, nopt;
    detailed_auto_factors(&tuples, &nopt);
    CU_ASSERT_EQUAL(tuples * nopt, ops->auto_count());
    static const int want[3] = {TASK_EMB_TABLE, TASK_EMB_ROW, TASK_EMB_COLUMN};
    for (int k = 0; k < 3; k++) {
        point_t p = dlrm_point(TASK_EMB_NONE, 1000);
        CU_ASSERT_EQUAL(ops->auto_apply(&p, nopt - 3 + k, 4096), STATUS_OK);
        CU_ASSERT_EQUAL(p.task.detailed.emb_sharding, want[k]);
        CU_ASSERT_EQUAL(p.task.detailed.dp, 4);
        CU_ASSERT_EQUAL(p.task.detailed.micro_batch, 1024);
        CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_OK);
        point_t q = unit_tidy_point(1, 1, 64, 0);
        CU_ASSERT_EQUAL(ops->auto_apply(&q, nopt - 3 + k, 4096), STATUS_INVALID_STRATEGY);
        p = dlrm_point(TASK_EMB_NONE, 1000);
        CU_ASSERT_EQUAL(ops->auto_apply(&p, 2 * nopt - 3 + k, 4096), STATUS_INVALID_STRATEGY);
        task_detailed_t c;
        CU_ASSERT_EQUAL(detailed_auto_candidate(nopt - 3 + k, &c), 0);
        CU_ASSERT_EQUAL(detailed_auto_candidate(2 * nopt - 3 + k, &c), 1);
        CU_ASSERT_EQUAL(detailed_auto_option(nopt - 3 + k, &c), 0);
        char text[160];
        detailed_strategy_text(&c, text, sizeof text);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, k == 0 ? "emb-table" : k == 1 ? "emb-row"
                                                                          : "emb-column"));
    }
    point_t p = dlrm_point(TASK_EMB_NONE, 1000);
    CU_ASSERT_EQUAL(ops->auto_apply(&p, 0, 4096), STATUS_INVALID_STRATEGY);
    CU_ASSERT_EQUAL(ops->auto_apply(&p, nopt - 1, 4098), STATUS_INVALID_BATCH_MISMATCH);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("embeddings", NULL, NULL);
    CU_add_test(s, "DLRM embedding sharding", test_dlrm_sharding);
    CU_add_test(s, "DLRM evaluation", test_dlrm_eval);
    CU_add_test(s, "DLRM auto strategies", test_dlrm_auto);
    CU_add_test(s, "DLRM planner, hybrid embedding, DCNv2", test_dlrm_planner);
    CU_add_test(s, "DLRM hier_auto placement (HugeCTR)", test_dlrm_hier);
    CU_add_test(s, "DLRM replicated table: one update per touched row",
                test_dlrm_replicated_update);
    return unit_run();
}
