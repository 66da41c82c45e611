/*
 * test_cost.c - unit tests of the cost model's formulas and engine.
 *
 * Every expected value is derived by hand in the comment beside it from
 * the formulas of the MAD-Max reference (its models, systems and tasks
 * modules), on small numbers so the arithmetic can be checked on paper.
 */
#include <string.h>

#include "unit.h"

static model_t tiny_llm(void)
{
    model_t m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "tiny_llm");
    m.kind = MODEL_LLM;
    m.bytes_per_dense_param = 2;
    m.bytes_per_emb_param = 2;
    m.layers = 3;
    m.heads = 2;
    m.hidden = 4;
    m.ffn = 8;
    m.seq_len = 2;
    m.vocab = 10;
    return m;
}

static cluster_t tiny_cluster(int64_t devices, int64_t nodes, double f)
{
    cluster_t c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tiny");
    c.devices = devices;
    c.nodes = nodes;
    c.peak_fp64_flops = 1e12;
    c.peak_fp32_flops = 2e12;
    c.peak_fp16_flops = 4e12;
    c.peak_int8_ops = 8e12;
    c.flops_util = 0.5;
    c.mem_capacity_bytes = 16e9;
    c.mem_bw_bytes_per_s = 1e12;
    c.mem_bw_util = 0.5;
    c.nvlinks = 12;
    c.nvlink_bidir_bytes_per_s = 50e9;
    c.nvlink_util = 0.5;
    c.nic_ports = 8;
    c.nic_bidir_bytes_per_s = 25e9;
    c.nic_util = 0.5;
    c.allreduce_intra_fraction = f;
    return c;
}

static void test_llm_counts(void)
{
    model_t m = tiny_llm();
    CU_ASSERT_EQUAL(model_derive(&m, NULL), STATUS_OK);
    /* attention 4 h^2 = 64, FC 2 h f = 64 parameters per layer */
    UNIT_ASSERT_CLOSE(m.attn_layer_params, 64, 1e-15);
    UNIT_ASSERT_CLOSE(m.fc_layer_params, 64, 1e-15);
    /* 3 layers x 128 */
    UNIT_ASSERT_CLOSE(m.dense_params, 384, 1e-15);
    /* word 10 x 4 + position 2 x 4 */
    UNIT_ASSERT_CLOSE(m.emb_params, 48, 1e-15);
    /* 2 FLOPs per parameter per token, 2 tokens: 2 x 64 x 2 = 256 */
    UNIT_ASSERT_CLOSE(m.attn_layer_flops, 256, 1e-15);
    UNIT_ASSERT_CLOSE(m.total_flops, 3 * (256 + 256), 1e-15);
    /* lookups 2 x seq x h x bytes = 2 x 2 x 4 x 2 */
    UNIT_ASSERT_CLOSE(m.lookup_bytes, 32, 1e-15);
}

static void test_dlrm_counts(void)
{
    model_t m;
    memset(&m, 0, sizeof m);
    m.kind = MODEL_DLRM;
    m.bytes_per_dense_param = 4;
    m.bytes_per_emb_param = 4;
    m.bot_mlp_layers = 2;
    m.top_mlp_layers = 3;
    m.mlp_dim = 10;
    m.tables = 3;
    m.rows_per_table = 7;
    m.emb_dim = 5;
    m.pooling = 2;
    CU_ASSERT_EQUAL(model_derive(&m, NULL), STATUS_OK);
    UNIT_ASSERT_CLOSE(m.layer_params, 100, 1e-15); /* 10^2 */
    UNIT_ASSERT_CLOSE(m.dense_params, 500, 1e-15); /* 5 layers */
    UNIT_ASSERT_CLOSE(m.emb_params, 105, 1e-15);   /* 3 x 7 x 5 */
    UNIT_ASSERT_CLOSE(m.layer_flops, 200, 1e-15);  /* 2 x 100 */
    UNIT_ASSERT_CLOSE(m.total_flops, 1000, 1e-15);
    UNIT_ASSERT_CLOSE(m.lookup_bytes, 120, 1e-15); /* 3 x 2 x 5 x 4 */

    const char *bad = NULL;
    m.mlp_dim = 0;
    CU_ASSERT_EQUAL(model_derive(&m, &bad), STATUS_INVALID_VALUE);
    CU_ASSERT_STRING_EQUAL(bad, "mlp_dim");
}

static void test_cluster_bandwidths(void)
{
    cluster_t c = tiny_cluster(64, 8, 0.25);
    CU_ASSERT_EQUAL(cluster_derive(&c, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(c.devices_per_node, 8);
    /* intra = 12 links x 25e9 (half of 50e9) x 0.5 = 150e9 */
    UNIT_ASSERT_CLOSE(c.eff_intra_bw, 150e9, 1e-15);
    /* inter = 8 ports x 12.5e9 x 0.5 / 8 devices = 6.25e9 */
    UNIT_ASSERT_CLOSE(c.eff_inter_bw, 6.25e9, 1e-15);
    /* blend = 0.75 x 6.25e9 + 0.25 x 150e9 = 42.1875e9 */
    double blend = 42.1875e9;
    /* two-level plan: level 0 intra, level 1 outer */
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_ALLREDUCE, 2, 0), 150e9, 1e-15);
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_ALLREDUCE, 2, 1), blend, 1e-15);
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_ALLTOALL, 2, 1), 6.25e9, 1e-15);
    /* one-level plan over all devices uses the outer entry */
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_ALLREDUCE, 1, 0), blend, 1e-15);
    /* all-gather and reduce-scatter: twice the all-reduce figure */
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_ALLGATHER, 1, 0), 2 * blend, 1e-15);
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_REDUCESCATTER, 2, 0), 300e9, 1e-15);
    /* FLOPS by dtype: peak x 0.5 */
    UNIT_ASSERT_CLOSE(cluster_eff_flops(&c, 2), 2e12, 1e-15);
    UNIT_ASSERT_CLOSE(cluster_eff_flops(&c, 8), 0.5e12, 1e-15);
    CU_ASSERT_EQUAL(cluster_eff_flops(&c, 3), 0.0);
    UNIT_ASSERT_CLOSE(c.eff_mem_bw, 0.5e12, 1e-15);
}

static void test_cluster_rules(void)
{
    const char *bad = NULL;
    cluster_t c = tiny_cluster(8, 1, 0.5);
    CU_ASSERT_EQUAL(cluster_derive(&c, &bad), STATUS_INVALID_SINGLE_NODE_BLEND);
    c = tiny_cluster(8, 1, 1.0);
    CU_ASSERT_EQUAL(cluster_derive(&c, &bad), STATUS_OK);
    CU_ASSERT_EQUAL(c.net_levels, 1);
    /* one node: all-reduce = intra (blend weight 1), all-to-all = intra */
    UNIT_ASSERT_CLOSE(cluster_level_bw(&c, CLUSTER_ALLREDUCE, 1, 0), 150e9, 1e-15);
    c = tiny_cluster(10, 4, 0.5);
    CU_ASSERT_EQUAL(cluster_derive(&c, &bad), STATUS_INVALID_NODES);
    c = tiny_cluster(8, 2, 0.5);
    c.nic_bidir_bytes_per_s = 0.0;
    CU_ASSERT_EQUAL(cluster_derive(&c, &bad), STATUS_INVALID_VALUE);
    CU_ASSERT_STRING_EQUAL(bad, "nic_bidir_bytes_per_s");
    c = tiny_cluster(8, 2, 0.5);
    c.nvlink_bidir_bytes_per_s = -1.0;
    CU_ASSERT_EQUAL(cluster_derive(&c, &bad), STATUS_INVALID_VALUE);
    CU_ASSERT_STRING_EQUAL(bad, "nvlink_bidir_bytes_per_s");
    c = tiny_cluster(8, 2, 0.5);
    c.flops_util = 1.5;
    CU_ASSERT_EQUAL(cluster_derive(&c, &bad), STATUS_INVALID_VALUE);
    CU_ASSERT_STRING_EQUAL(bad, "flops_util");
}

static void test_plan_text(void)
{
    plan_strategy s;
    int64_t d;
    const char *why = NULL;
    CU_ASSERT_EQUAL(plan_parse_level("fsdp:8", &s, &d, &why), 0);
    CU_ASSERT_EQUAL(s, PLAN_FSDP);
    CU_ASSERT_EQUAL(d, 8);
    CU_ASSERT_EQUAL(plan_parse_level("fsdp8", &s, &d, &why), -1);
    CU_ASSERT_EQUAL(plan_parse_level("zz:8", &s, &d, &why), -1);
    CU_ASSERT_EQUAL(plan_parse_level("tp:x", &s, &d, &why), -1);
    CU_ASSERT_EQUAL(plan_parse_level("tp:-2", &s, &d, &why), -1);
    plan_t p;
    memset(&p, 0, sizeof p);
    plan_push(&p, PLAN_TP, 8);
    plan_push(&p, PLAN_DDP, 256);
    char buf[PLAN_TEXT_MAX];
    CU_ASSERT_EQUAL(plan_format(&p, buf, sizeof buf), 12);
    CU_ASSERT_STRING_EQUAL(buf, "tp:8,ddp:256");
    CU_ASSERT_EQUAL(plan_total(&p), 2048);
    CU_ASSERT_EQUAL(plan_degree_of(&p, PLAN_TP), 8);
    CU_ASSERT_EQUAL(plan_degree_of(&p, PLAN_FSDP), 1);
}

static void test_engine_rules(void)
{
    engine e;
    engine_init(&e, true);
    CU_ASSERT_EQUAL_FATAL(engine_reserve(&e, 8), 0);
    engine_label l = {0, 0, 0, -1};
    /* A: compute 1 s at 0 */
    engine_ev a = engine_add(&e, ENGINE_COMP, 1.0, NULL, 0, l);
    /* B: comm 2 s after A: [1, 3] */
    engine_ev b = engine_add(&e, ENGINE_COMM, 2.0, &a, 1, l);
    /* C: compute 1 s after B: [3, 4] although compute is free at 1 */
    engine_ev c = engine_add(&e, ENGINE_COMP, 1.0, &b, 1, l);
    /* D: comm without deps starts when comm is free: [3, 3.5] */
    engine_ev none = ENGINE_NONE;
    engine_ev d = engine_add(&e, ENGINE_COMM, 0.5, &none, 1, l);
    CU_ASSERT_DOUBLE_EQUAL(e.records[b].t_start, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(e.records[c].t_start, 3.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(e.records[d].t_start, 3.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(engine_now(&e), 4.0, 0);
    /* a new phase starts both streams at the later clock */
    engine_phase(&e, engine_now(&e));
    engine_ev f = engine_add(&e, ENGINE_COMM, 1.0, NULL, 0, l);
    CU_ASSERT_DOUBLE_EQUAL(e.records[f].t_start, 4.0, 0);
    CU_ASSERT_EQUAL(e.count[ENGINE_COMP], 2);
    CU_ASSERT_EQUAL(e.count[ENGINE_COMM], 3);
    char name[64];
    engine_label wl = {ENGINE_PART_FC, ENGINE_OP_WG_RS, 1, 3};
    engine_label_name(wl, name, sizeof name);
    CU_ASSERT_STRING_EQUAL(name, "TransformerFC3_b_c_wg_rs");
    engine_free(&e);
}

static point_t tiny_point(void)
{
    point_t p;
    memset(&p, 0, sizeof p);
    p.fidelity = EVAL_MADMAX;
    p.model = tiny_llm();
    p.model.layers = 1;
    model_derive(&p.model, NULL);
    p.cluster = tiny_cluster(2, 1, 1.0);
    cluster_derive(&p.cluster, NULL);
    p.task.kind = TASK_PRETRAIN;
    plan_push(&p.task.dense, PLAN_DDP, 2);
    plan_push(&p.task.emb, PLAN_DDP, 2);
    p.task.local_batch_dense = 3;
    p.task.local_batch_emb = 3;
    p.task.min_frozen_layer = 1;
    return p;
}

/* One-layer LLM, DDP everywhere, one node of 2: the whole trace by hand. */
static void test_tiny_trace(void)
{
    point_t p = tiny_point();
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    double F = 2e12;     /* FP16 peak 4e12 x 0.5 */
    double M = 0.5e12;   /* memory 1e12 x 0.5 */
    double AR = 150e9;   /* one node: all-reduce at intra bandwidth */
    double emb = 32 * 3 / M;         /* lookup bytes x batch 3 / mem bw */
    double attn = 256 * 3 / F;       /* FLOPs x batch / FLOPS */
    double fc = 256 * 3 / F;
    double g = 64 * 2 / AR;          /* 64 params x 2 bytes per block */
    double embar = 32 * 3 / AR;      /* embedding gradients = lookups */
    /* forward: EMB_f, Attn0_f, FC0_f back to back; no communication */
    double t0 = emb + attn + fc;
    /* backward from t0: FC0_b (2 fc), its gradient all-reduce after it;
     * Attn0_b (2 attn) right after FC0_b (no TP dependency); Attn's
     * all-reduce waits for the comm stream and for Attn0_b; then the
     * embedding all-reduce after Attn0_b, and EMB_b after that. */
    double fc_b_end = t0 + 2 * fc;
    double attn_b_end = fc_b_end + 2 * attn;
    double comm = fc_b_end + g;
    comm = (comm > attn_b_end ? comm : attn_b_end) + g;
    comm = (comm > attn_b_end ? comm : attn_b_end) + embar;
    double end = comm + emb;
    UNIT_ASSERT_CLOSE(r.iteration_time_s, end, 1e-12);
    UNIT_ASSERT_CLOSE(r.compute_gemm_s, 3 * (attn + fc), 1e-12);
    UNIT_ASSERT_CLOSE(r.compute_emb_s, 2 * emb, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_allreduce_s, 2 * g + embar, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_exposed_s, end - 3 * (attn + fc) - 2 * emb, 1e-12);
    UNIT_ASSERT_CLOSE(r.comm_overlapped_s, 2 * g + embar - r.comm_exposed_s, 1e-12);
    CU_ASSERT_EQUAL(r.global_batch, 6);
    UNIT_ASSERT_CLOSE(r.throughput_samples_per_s, 6 / end, 1e-12);
    CU_ASSERT_EQUAL(r.events_compute, 6); /* EMB, Attn, FC each way */
    CU_ASSERT_EQUAL(r.events_comm, 3);
    /* weights: 48 x 2 bytes + 128 x 2 bytes, nothing sharded */
    UNIT_ASSERT_CLOSE(r.mem_weights_bytes_per_device, 352, 1e-15);
    engine_free(&e);
}

/* Events grow linearly with layers: FSDP pre-training emits per layer
 * 4 computes and 6 communications (2 all-gathers forward, 2 all-gathers
 * and 2 reduce-scatters backward), plus the embedding events. */
static void test_linear_events(void)
{
    point_t p = tiny_point();
    p.task.dense.strategy[0] = PLAN_FSDP;
    engine e;
    engine_init(&e, false);
    result_t r;
    for (int64_t layers = 1; layers <= 64; layers *= 4) {
        p.model.layers = layers;
        p.task.min_frozen_layer = layers;
        model_derive(&p.model, NULL);
        CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        CU_ASSERT_EQUAL(r.events_compute, 4 * layers + 2);
        CU_ASSERT_EQUAL(r.events_comm, 6 * layers + 1);
    }
    engine_free(&e);
}

static void test_rules(void)
{
    point_t base = tiny_point();
    base.cluster = tiny_cluster(16, 2, 0.5);
    cluster_derive(&base.cluster, NULL);
    const struct {
        const char *dense;
        const char *emb;
        status_code want;
    } cases[] = {
        {"fsdp:8,ddp:2", "mp:8,ddp:2", STATUS_OK},
        {"ddp:16", "mp:16", STATUS_OK},
        {"tp:8,ddp:4", "mp:16", STATUS_INVALID_PRODUCT},
        {"ddp:4,tp:4", "mp:16", STATUS_INVALID_FIRST_DEGREE},
        {"ddp:8,fsdp:2", "mp:16", STATUS_INVALID_FSDP_FIRST},
        {"ddp:8,ddp:2", "mp:16", STATUS_INVALID_REPEAT},
        {"ddp:16,tp:1", "mp:16", STATUS_INVALID_DEGREE_ONE},
        {"mp:16", "mp:16", STATUS_INVALID_STRATEGY},
        {"ddp:16", "tp:16", STATUS_INVALID_STRATEGY},
        {"ddp:16", "ddp:16", STATUS_INVALID_BATCH_MISMATCH + 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        point_t p = base;
        memset(&p.task.dense, 0, sizeof p.task.dense);
        memset(&p.task.emb, 0, sizeof p.task.emb);
        const char *texts[2] = {cases[i].dense, cases[i].emb};
        plan_t *plans[2] = {&p.task.dense, &p.task.emb};
        for (int k = 0; k < 2; k++) {
            char buf[64];
            strcpy(buf, texts[k]);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                plan_strategy s;
                int64_t d;
                const char *why;
                CU_ASSERT_EQUAL_FATAL(plan_parse_level(tok, &s, &d, &why), 0);
                plan_push(plans[k], s, d);
            }
        }
        /* global batch 16 x 3 on both sides unless the case says not */
        p.task.local_batch_dense = 3 * 16 / (plan_degree_of(&p.task.dense, PLAN_DDP) *
                                             plan_degree_of(&p.task.dense, PLAN_FSDP));
        p.task.local_batch_emb = 3 * 16 / plan_degree_of(&p.task.emb, PLAN_DDP);
        if (cases[i].want == STATUS_INVALID_BATCH_MISMATCH)
            p.task.local_batch_emb += 1;
        const char *where = NULL;
        status_code got = eval_check(&p, &where);
        if (got != cases[i].want)
            fprintf(stderr, "rule case %zu (%s / %s): got %s, want %s\n", i,
                    cases[i].dense, cases[i].emb, status_name(got),
                    status_name(cases[i].want));
        CU_ASSERT_EQUAL(got, cases[i].want);
    }
    /* dtype rule: 3 bytes per parameter selects no peak */
    point_t p = base;
    p.model.bytes_per_dense_param = 3;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_DTYPE);
    /* fine-tuning with everything frozen */
    p = tiny_point();
    p.task.kind = TASK_FINETUNE;
    p.task.freeze_emb = true;
    p.task.freeze_dense = true;
    CU_ASSERT_EQUAL(eval_check(&p, NULL), STATUS_INVALID_NOTHING_TRAINED);
}

static void test_finetune_and_inference(void)
{
    point_t p = tiny_point();
    engine e;
    engine_init(&e, false);
    result_t pre, inf, ft;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &pre, NULL), STATUS_OK);
    p.task.kind = TASK_INFERENCE;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &inf, NULL), STATUS_OK);
    /* inference is the forward pass only: 3 computes, no communication */
    CU_ASSERT_EQUAL(inf.events_compute, 3);
    CU_ASSERT_EQUAL(inf.events_comm, 0);
    CU_ASSERT(inf.iteration_time_s < pre.iteration_time_s);
    /* fine-tuning with frozen embeddings and layer 0 frozen too
     * (min_frozen_layer 0): no gradient communication, no EMB_b */
    p.task.kind = TASK_FINETUNE;
    p.task.freeze_emb = true;
    p.task.min_frozen_layer = 0;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &ft, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(ft.events_comm, 0);
    CU_ASSERT_EQUAL(ft.events_compute, 6 - 1); /* no EMB_b */
    CU_ASSERT_DOUBLE_EQUAL(ft.comm_allreduce_s, 0.0, 0);
    engine_free(&e);
}

static void test_status_names(void)
{
    for (int c = 0; c <= STATUS_NOMEM; c++) {
        const char *n = status_name((status_code)c);
        if (strcmp(n, "unknown") != 0) {
            CU_ASSERT(strlen(status_text((status_code)c)) > 0);
        }
    }
    CU_ASSERT_STRING_EQUAL(status_name(STATUS_INFEASIBLE_MEMORY), "infeasible:memory");
    CU_ASSERT(status_is_data(STATUS_OK));
    CU_ASSERT(status_is_data(STATUS_INFEASIBLE_MEMORY));
    CU_ASSERT(!status_is_data(STATUS_INVALID_PRODUCT));
    CU_ASSERT_PTR_NOT_NULL(result_find("iteration_time_s"));
    CU_ASSERT_PTR_NULL(result_find("nope"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("cost", NULL, NULL);
    CU_add_test(s, "LLM parameter/FLOP/lookup counts", test_llm_counts);
    CU_add_test(s, "DLRM parameter/FLOP/lookup counts", test_dlrm_counts);
    CU_add_test(s, "effective bandwidth per collective and level", test_cluster_bandwidths);
    CU_add_test(s, "system validity rules", test_cluster_rules);
    CU_add_test(s, "plan text", test_plan_text);
    CU_add_test(s, "engine start rule and phases", test_engine_rules);
    CU_add_test(s, "one-layer trace by hand", test_tiny_trace);
    CU_add_test(s, "events linear in layers", test_linear_events);
    CU_add_test(s, "strategy validity rules", test_rules);
    CU_add_test(s, "fine-tuning and inference", test_finetune_and_inference);
    CU_add_test(s, "status and result tables", test_status_names);
    return unit_run();
}
