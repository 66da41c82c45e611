/*
 * test_space.c - sweep specs, plan templates and the space of dense ids.
 *
 * Serial tests: template parsing and resolution, the `auto` set, the
 * dense ids against their candidate-by-candidate definition (every
 * combination tried with space_try: each valid one has exactly one id in
 * its cell, the rejections per code equal the count pass's, and decoding
 * in reverse with fresh cursors agrees, so the cursor's cache cannot
 * matter) for the madmax and the detailed auto sets, and the stack axis.
 * The golden messages of bad specs are test_spec_bad.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/autoplan.h"
#include "../worker/space.h"
#include "../driver/sweep/spec_load.h"
#include "unit.h"

static const char *const small_spec =
    "name = \"small\";\n"                                          /* 1 */
    "models = [\"dlrm_a\", \"llama2_70b\"];\n"                     /* 2 */
    "systems = [\"zionex_8\", \"dc_A_128\"];\n"                    /* 3 */
    "system_grid = ( { base = \"zionex_128\"; nodes = [1, 4];\n"  /* 4 */
    "  devices_per_node = [8]; nic_scale = [1.0, 2.0]; } );\n"    /* 5 */
    "tasks = ( \"pretrain\", \"inference\",\n"                     /* 6 */
    "  { type = \"finetune\"; freeze_emb = true; } );\n"           /* 7 */
    "global_batch = [64, 1000, 4096];\n"                           /* 8 */
    "strategies = \"auto\";\n"                                      /* 9 */
    "fidelity = \"madmax\";\n";                                    /* 10 */

static int load_text(const char *name, const char *text, spec *sp,
                     load_err *err, char *path, size_t psize)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(name, text, path, psize));
    return spec_load(path, unit_configs(), sp, err);
}

/* A spec that must load (its message on stderr when it does not). */
static void load_ok(const char *name, const char *text, spec *sp)
{
    load_err err;
    char path[512];
    int rc = load_text(name, text, sp, &err, path, sizeof path);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void test_templates(void)
{
    autoplan_tmpl t;
    const char *why = NULL;
    char buf[64];
    CU_ASSERT_EQUAL(autoplan_parse("fsdp:node,ddp:rest", &t, &why), 0);
    CU_ASSERT_EQUAL(t.nlevels, 2);
    autoplan_format(&t, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "fsdp:node,ddp:rest");
    CU_ASSERT_EQUAL(autoplan_parse("tp:4,ddp:all", &t, &why), 0);
    autoplan_format(&t, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "tp:4,ddp:all");
    const char *bad[] = {"", "fsdp", "foo:2", "ddp:rest,tp:rest", "ddp:0",
                         "ddp:8,", "ddp:x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(autoplan_parse(bad[i], &t, &why), -1);

    cluster_t c;
    memset(&c, 0, sizeof c);
    c.devices = 128;
    c.devices_per_node = 8;
    plan_t p;
    autoplan_parse("fsdp:node,ddp:rest", &t, &why);
    CU_ASSERT_EQUAL(autoplan_resolve(&t, &c, &p), STATUS_OK);
    CU_ASSERT_EQUAL(p.degree[0], 8);
    CU_ASSERT_EQUAL(p.degree[1], 16);
    autoplan_parse("tp:3,ddp:rest", &t, &why);
    CU_ASSERT_EQUAL(autoplan_resolve(&t, &c, &p), STATUS_INVALID_PRODUCT);
    c.devices = 8; /* one node: a 2-level plan has a level of degree 1 */
    autoplan_parse("fsdp:node,ddp:rest", &t, &why);
    CU_ASSERT_EQUAL(autoplan_resolve(&t, &c, &p), STATUS_INVALID_DEGREE_ONE);
    CU_ASSERT_EQUAL(autoplan_madmax_count(), 28);
}

/* The space against its definition, combination by combination: for
 * every cell (model, system, stack, task, batch), the candidates for
 * which space_try() says STATUS_OK are exactly the strategies of the
 * cell's ids, each once; the ids run through the cells in order (dense:
 * no id decodes outside its cell or fails its check); the rejected
 * candidates per code equal the count pass's. A second cursor decoding
 * the ids in reverse (one fresh cursor per id) agrees, so the cursor's
 * cache cannot matter. Returns the number of combinations checked. */
static int64_t check_against_oracle(space *s, int64_t max_cells)
{
    space_cursor fwd, orc;
    CU_ASSERT_FATAL(space_cursor_init(&fwd, s) == 0);
    CU_ASSERT_FATAL(space_cursor_init(&orc, s) == 0);
    int64_t rejected[SPACE_NCODES] = {0}, want[SPACE_NCODES] = {0};
    CU_ASSERT_FATAL(space_count_all(s, &fwd, rejected) == 0);
    int64_t nopt = s->radix[SPACE_STRATEGY];
    int64_t K = nopt * s->radix[SPACE_PARALLEL], ncells = s->nblocks * s->cells;
    uint8_t *mark = calloc((size_t)K, 1);
    int64_t *ks = calloc((size_t)K + 1, sizeof *ks);
    CU_ASSERT_FATAL(mark && ks);
    int64_t id = 0, tried = 0, bad_ids = 0, bad_sets = 0;
    /* every cell up to max_cells: a stride through them otherwise */
    int64_t stride = ncells > max_cells ? ncells / max_cells + 1 : 1;
    for (int64_t cell = 0; cell < ncells; cell++) {
        int64_t b = cell / s->cells, k = cell % s->cells;
        int64_t idx[SPACE_NAXES];
        idx[SPACE_MODEL] = b / s->radix[SPACE_SYSTEM];
        idx[SPACE_SYSTEM] = b % s->radix[SPACE_SYSTEM];
        idx[SPACE_BATCH] = k % s->radix[SPACE_BATCH];
        idx[SPACE_TASK] = k / s->radix[SPACE_BATCH] % s->radix[SPACE_TASK];
        idx[SPACE_STACK] = k / (s->radix[SPACE_BATCH] * s->radix[SPACE_TASK]);
        int64_t n = 0;
        bool full = cell % stride == 0;
        if (full) {
            for (int64_t j = 0; j < K; j++) {
                idx[SPACE_PARALLEL] = j / nopt;
                idx[SPACE_STRATEGY] = j % nopt;
                status_code rc = space_try(s, &orc, idx);
                tried++;
                if (rc == STATUS_OK) {
                    mark[j] = 1;
                    n++;
                } else {
                    want[rc]++;
                }
            }
        }
        /* the ids of this cell: as many as decode into it */
        int64_t m = 0;
        while (id < s->total) {
            if (space_point(s, &fwd, id, NULL) != STATUS_OK) {
                bad_ids++;
                break;
            }
            int same = 1;
            for (int a = 0; a < SPACE_NAXES; a++)
                if (a != SPACE_STRATEGY && a != SPACE_PARALLEL && fwd.idx[a] != idx[a])
                    same = 0;
            if (!same)
                break;
            int64_t j = fwd.idx[SPACE_PARALLEL] * nopt + fwd.idx[SPACE_STRATEGY];
            if (full) {
                if (j < 0 || j >= K || !mark[j])
                    bad_sets++;
                else
                    mark[j] = 0;
            }
            ks[m++ < K ? m - 1 : K] = id;
            id++;
        }
        if (full && m != n)
            bad_sets++;
        if (full)
            memset(mark, 0, (size_t)K);
    }
    CU_ASSERT_EQUAL(id, s->total);
    CU_ASSERT_EQUAL(bad_ids, 0);
    CU_ASSERT_EQUAL(bad_sets, 0);
    if (stride == 1)
        for (int c = 0; c < SPACE_NCODES; c++)
            if (rejected[c] != want[c]) {
                fprintf(stderr, "\ncode %d (%s): count pass %lld, oracle %lld\n", c,
                        status_name((status_code)c), (long long)rejected[c],
                        (long long)want[c]);
                CU_FAIL("rejections per code differ from the oracle's");
            }
    int64_t skipped = 0;
    for (int c = 0; c < SPACE_NCODES; c++)
        skipped += rejected[c];
    CU_ASSERT_EQUAL(s->total + skipped, s->candidates);
    /* reverse, a fresh cursor per id: the same points */
    int64_t differ = 0;
    for (int64_t r = s->total - 1; r >= 0; r -= 1 + s->total / 3000) {
        space_cursor rev;
        CU_ASSERT_FATAL(space_cursor_init(&rev, s) == 0);
        CU_ASSERT(space_point(s, &rev, r, NULL) == STATUS_OK);
        space_point(s, &fwd, r, NULL);
        differ += memcmp(rev.idx, fwd.idx, sizeof rev.idx) != 0 ||
                  memcmp(&rev.p.task, &fwd.p.task, sizeof rev.p.task) != 0;
        space_cursor_free(&rev);
    }
    CU_ASSERT_EQUAL(differ, 0);
    free(mark);
    free(ks);
    space_cursor_free(&fwd);
    space_cursor_free(&orc);
    return tried;
}

static void test_bijection_and_counts(void)
{
    spec sp;
    load_err err;
    char path[512];
    int rc = load_text("small.cfg", small_spec, &sp, &err, path, sizeof path);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sp.nsystems, 2 + 4);
    CU_ASSERT_STRING_EQUAL(sp.systems[2].name, "zionex_128/1x8/nic1");
    CU_ASSERT_EQUAL(sp.systems[4].devices, 32);
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    CU_ASSERT_EQUAL(s.candidates, 2 * 6 * 3 * 3 * 28);
    CU_ASSERT_EQUAL(check_against_oracle(&s, INT64_MAX), s.candidates);
    CU_ASSERT(s.total > 0 && s.total < s.candidates);
    /* one-node systems admit only the 1-level plans: 3 dense x 2 emb */
    space_cursor c;
    CU_ASSERT_FATAL(space_cursor_init(&c, &s) == 0);
    int64_t one[SPACE_NAXES] = {0};
    int64_t ok = 0;
    for (int64_t k = 0; k < 28; k++) {
        one[SPACE_STRATEGY] = k;
        ok += space_try(&s, &c, one) == STATUS_OK;
    }
    CU_ASSERT_EQUAL(ok, 3 * 2);
    space_cursor_free(&c);
    space_free(&s);
    spec_free(&sp);
}

/* The detailed `auto` set, enumerated valid-only, against its
 * candidate-by-candidate definition: dense, MoE and DLRM models, a system
 * whose 72 devices leave most degree products out, two stacks whose stage
 * splits differ (torchtitan weighs the embedding and head always), a
 * model too shallow for 16 x 2 stages, pre-training, fine-tuning (which
 * DLRM models refuse as a whole cell), serving, and batches that do and do
 * not split. Also: at least half of a realistic detailed space is valid
 * (each id is a point). */
static void test_detailed_enumeration(void)
{
    static const char *const text =
        "models = [\"gpt3-1.3b\", \"mixtral-8x7b\", \"dlrm-mlperf\"];\n"
        "systems = [\"h100-8\", \"gb200-72\"];\n"
        "stacks = [\"megatron-core\", \"torchtitan\"];\n"
        "tasks = ( \"pretrain\", { type = \"finetune\"; frozen_layers = 4; },\n"
        "  { type = \"inference\"; prompt_tokens = 512; decode_tokens = 16; } );\n"
        "global_batch = [72, 64];\nstrategies = \"auto\";\n";
    spec sp;
    load_err err;
    char path[512];
    int rc = load_text("denum.cfg", text, &sp, &err, path, sizeof path);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    CU_ASSERT_EQUAL(check_against_oracle(&s, INT64_MAX), s.candidates);
    CU_ASSERT(s.total > 0);
    space_free(&s);
    spec_free(&sp);
}

/* Explicit detailed strategies (a spec's `strategies` list of groups)
 * against their candidate-by-candidate definition, as the auto set: a
 * strategy whose degrees do not divide a system's devices, one whose
 * ZeRO stage the stack does not run (Megatron-Core: 0 and 1), one that a
 * DLRM refuses, vpp and micro_batch "auto"; the stack's defaults fill
 * what a group leaves out (Megatron-Core: ZeRO 1, sequence parallelism). */
static void test_detailed_explicit(void)
{
    static const char *const text =
        "models = [\"llama2-7b\", \"dlrm-mlperf\"];\n"
        "systems = [\"h100-8\", \"gb200-72\"];\n"
        "stacks = [\"megatron-core\", \"torchtitan\"];\n"
        "tasks = ( \"pretrain\",\n"
        "  { type = \"inference\"; prompt_tokens = 512; decode_tokens = 16; } );\n"
        "global_batch = [72, 64];\n"
        "strategies = ( { tp = 8; },\n"
        "  { tp = 2; pp = 4; vpp = \"auto\"; micro_batch = \"auto\"; },\n"
        "  { tp = 4; pp = 2; vpp = 2; zero_stage = 2; recompute = \"full\"; },\n"
        "  { tp = 8; pp = 9; micro_batch = 2; } );\n";
    spec sp;
    load_err err;
    char path[512];
    int rc = load_text("dexp.cfg", text, &sp, &err, path, sizeof path);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sp.nstrats, 4);
    CU_ASSERT_EQUAL(sp.npar, 1);
    CU_ASSERT(sp.dstrats[1].t.vpp_auto && sp.dstrats[1].t.micro_batch_auto);
    CU_ASSERT(!sp.dstrats[0].zero_set && sp.dstrats[2].zero_set);
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    CU_ASSERT_EQUAL(check_against_oracle(&s, INT64_MAX), s.candidates);
    CU_ASSERT(s.total > 0);
    /* strategy 0 on llama2-7b, h100-8, megatron-core, pretrain, batch 72:
     * dp 1, the stack's ZeRO 1 and sequence parallelism */
    space_cursor c;
    CU_ASSERT_FATAL(space_cursor_init(&c, &s) == 0);
    int64_t idx[SPACE_NAXES] = {0};
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_OK);
    CU_ASSERT_EQUAL(c.p.task.detailed.tp, 8);
    CU_ASSERT_EQUAL(c.p.task.detailed.dp, 1);
    CU_ASSERT_EQUAL(c.p.task.detailed.zero_stage, 1);
    CU_ASSERT(c.p.task.detailed.sequence_parallel);
    CU_ASSERT_EQUAL(c.p.task.detailed.grad_accum, 72);
    idx[SPACE_STRATEGY] = 2; /* ZeRO 2: not Megatron-Core's */
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_INVALID_STRATEGY);
    idx[SPACE_STRATEGY] = 3; /* 72 devices of gb200-72: tp 8 x pp 9 */
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_INVALID_PRODUCT);
    idx[SPACE_SYSTEM] = 1;
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_OK);
    CU_ASSERT_EQUAL(c.p.task.detailed.pp, 9);
    idx[SPACE_MODEL] = 1; /* the DLRM */
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_INVALID_STRATEGY);
    char t1[160];
    CU_ASSERT(spec_strategy_text(&sp, 1, t1, sizeof t1) > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "vppauto"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "mbauto"));
    /* the stack decides the ZeRO stage and sequence parallelism of
     * strategy 1, not of strategy 2's ZeRO stage */
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, " zero* sp* "));
    CU_ASSERT(spec_strategy_text(&sp, 2, t1, sizeof t1) > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, " zero2 sp* "));
    space_cursor_free(&c);
    space_free(&s);
    spec_free(&sp);
}

/* A detailed fine-tuning task reaches the point: its frozen layers (capped
 * at the model's layers) and frozen embeddings, and it costs less than
 * pre-training the same model with the same strategy (frozen layers need
 * no weight gradients, no gradient communication). */
static void test_detailed_finetune(void)
{
    static const char *const text =
        "models = [\"llama2-7b\"];\nsystems = [\"h100-8\"];\n"
        "tasks = ( \"pretrain\",\n"
        "  { type = \"finetune\"; name = \"ft\"; frozen_layers = 16;\n"
        "    freeze_emb = true; },\n"
        "  { type = \"finetune\"; name = \"ft_all\"; frozen_layers = 999; } );\n"
        "global_batch = [64];\nstrategies = \"auto\";\n";
    spec sp;
    load_err err;
    char path[512];
    int rc = load_text("dft.cfg", text, &sp, &err, path, sizeof path);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    space_cursor c;
    CU_ASSERT_FATAL(space_cursor_init(&c, &s) == 0);
    engine e;
    engine_init(&e, false);
    int compared = 0;
    int64_t idx[SPACE_NAXES] = {0};
    for (int64_t k = 0; k < s.radix[SPACE_STRATEGY] * s.radix[SPACE_PARALLEL] && compared < 20;
         k++) {
        idx[SPACE_PARALLEL] = k / s.radix[SPACE_STRATEGY];
        idx[SPACE_STRATEGY] = k % s.radix[SPACE_STRATEGY];
        result_t r[3];
        int ok = 1;
        for (int64_t t = 0; t < 3 && ok; t++) {
            idx[SPACE_TASK] = t;
            ok = space_try(&s, &c, idx) == STATUS_OK &&
                 eval_point(&c.p, &e, &r[t], NULL) == STATUS_OK;
            if (ok && t == 1) {
                CU_ASSERT_EQUAL(c.p.task.kind, TASK_FINETUNE);
                CU_ASSERT_EQUAL(c.p.task.detailed.frozen_layers, 16);
                CU_ASSERT(c.p.task.freeze_emb);
            }
            if (ok && t == 2)
                CU_ASSERT_EQUAL(c.p.task.detailed.frozen_layers, c.p.model.layers);
        }
        if (!ok)
            continue;
        compared++;
        CU_ASSERT(r[1].iteration_time_s < r[0].iteration_time_s);
        /* all layers frozen but the embeddings trained: the backward still
         * runs through every layer (input gradients only) */
        CU_ASSERT(r[2].iteration_time_s < r[0].iteration_time_s);
        /* the busiest stage's optimizer states: fewer when that stage
         * holds frozen layers (always with one stage), never more */
        CU_ASSERT(r[1].mem_optimizer_bytes_per_device <=
                  r[0].mem_optimizer_bytes_per_device);
        if (c.p.task.detailed.pp == 1)
            CU_ASSERT(r[1].mem_optimizer_bytes_per_device <
                      r[0].mem_optimizer_bytes_per_device);
    }
    CU_ASSERT(compared > 0);
    engine_free(&e);
    space_cursor_free(&c);
    space_free(&s);
    spec_free(&sp);
}

/* The stack axis: the catalogue's "unknown" by default, named stacks
 * reach the point (and change its figures: Megatron-LM 2021 runs
 * unfused attention without TP overlap), "all" takes the catalogue. */
static void test_stacks(void)
{
    static const char *const base =
        "models = [\"llama2-7b\"];\nsystems = [\"h100-8\"];\n"
        "tasks = [\"pretrain\"];\nglobal_batch = [64];\nstrategies = \"auto\";\n";
    char text[1024], path[512];
    spec sp;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_text("dstk0.cfg", base, &sp, &err, path, sizeof path), 0);
    CU_ASSERT_EQUAL(sp.nstacks, 1);
    CU_ASSERT_STRING_EQUAL(sp.stacks[0].name, "unknown");
    spec_free(&sp);
    snprintf(text, sizeof text, "%sstacks = [\"megatron-core\", \"megatron-lm-2021\"];\n",
             base);
    int rc = load_text("dstk1.cfg", text, &sp, &err, path, sizeof path);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sp.nstacks, 2);
    CU_ASSERT_STRING_EQUAL(sp.stacks[1].name, "megatron-lm-2021");
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    CU_ASSERT_EQUAL(s.radix[SPACE_STACK], 2);
    space_cursor c;
    CU_ASSERT_FATAL(space_cursor_init(&c, &s) == 0);
    engine e;
    engine_init(&e, false);
    int differ = 0, both = 0;
    int64_t idx[SPACE_NAXES] = {0};
    for (int64_t k = 0; k < s.radix[SPACE_STRATEGY] * s.radix[SPACE_PARALLEL] && both < 20;
         k++) {
        idx[SPACE_PARALLEL] = k / s.radix[SPACE_STRATEGY];
        idx[SPACE_STRATEGY] = k % s.radix[SPACE_STRATEGY];
        result_t r[2];
        int ok = 1;
        for (int64_t w = 0; w < 2 && ok; w++) {
            idx[SPACE_STACK] = w;
            ok = space_try(&s, &c, idx) == STATUS_OK &&
                 eval_point(&c.p, &e, &r[w], NULL) == STATUS_OK;
            if (ok)
                CU_ASSERT_STRING_EQUAL(c.p.stack.name, sp.stacks[w].name);
        }
        if (!ok)
            continue;
        both++;
        differ += r[0].iteration_time_s != r[1].iteration_time_s;
    }
    CU_ASSERT(both > 0);
    CU_ASSERT_EQUAL(differ, both);
    engine_free(&e);
    space_cursor_free(&c);
    space_free(&s);
    spec_free(&sp);
    snprintf(text, sizeof text, "%sstacks = \"all\";\n", base);
    CU_ASSERT_EQUAL_FATAL(load_text("dstk2.cfg", text, &sp, &err, path, sizeof path), 0);
    CU_ASSERT(sp.nstacks >= 8);
    spec_free(&sp);
}

/* global_batch per model kind: each batch applies to the kinds that list
 * it, the others skip it; power and price overrides of system_grid. */
static void test_batch_kinds(void)
{
    spec sp;
    load_err err;
    load_ok("kinds.cfg",
        "models = [\"llama3-8b\", \"dlrm-mlperf\"];\n"
        "system_grid = ( { hardware = \"h100-sxm-80g\"; nodes = [1];\n"
        "  price_per_hour_usd = 2.5; board_power_w = 650.0; } );\n"
        "tasks = [\"pretrain\"];\nstrategies = \"auto\";\n"
        "global_batch = { llm = [64, 4096]; dlrm = [4096, 65536]; };\n",
        &sp);
    /* the axis: 64, 4096 (both kinds), 65536 */
    CU_ASSERT_EQUAL_FATAL(sp.nbatches, 3);
    CU_ASSERT_EQUAL(sp.batches[0], 64);
    CU_ASSERT_EQUAL(sp.batches[1], 4096);
    CU_ASSERT_EQUAL(sp.batches[2], 65536);
    CU_ASSERT_EQUAL(sp.batch_kinds[0], 1u << MODEL_LLM);
    CU_ASSERT_EQUAL(sp.batch_kinds[1], (1u << MODEL_LLM) | (1u << MODEL_DLRM));
    CU_ASSERT_EQUAL(sp.batch_kinds[2], 1u << MODEL_DLRM);
    UNIT_ASSERT_CLOSE(sp.dsystems[0].hw.price_per_hour_usd, 2.5, 1e-15);
    UNIT_ASSERT_CLOSE(sp.dsystems[0].hw.board_power_w, 650.0, 1e-15);
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    space_cursor c;
    CU_ASSERT_FATAL(space_cursor_init(&c, &s) == 0);
    int64_t idx[SPACE_NAXES] = {0, 0, 0, 2, 0, 0};
    /* the LLM with the DLRM-only batch, the DLRM with the LLM-only one */
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_INVALID_BATCH_KIND);
    idx[SPACE_MODEL] = 1;
    idx[SPACE_BATCH] = 0;
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_INVALID_BATCH_KIND);
    /* the enumeration leaves both cells out, every candidate counted
     * under invalid:batch-kind, and every point has a batch of its kind */
    int64_t rej[SPACE_NCODES] = {0};
    CU_ASSERT_EQUAL_FATAL(space_count_all(&s, &c, rej), 0);
    CU_ASSERT_EQUAL(rej[STATUS_INVALID_BATCH_KIND],
                    2 * s.radix[SPACE_STRATEGY] * s.radix[SPACE_PARALLEL]);
    int64_t wrong = 0;
    for (int64_t id = 0; id < s.total; id++) {
        CU_ASSERT_EQUAL_FATAL(space_point(&s, &c, id, NULL), STATUS_OK);
        wrong += !(sp.batch_kinds[c.idx[SPACE_BATCH]] & (1u << c.p.model.kind));
    }
    CU_ASSERT(s.total > 0);
    CU_ASSERT_EQUAL(wrong, 0);
    /* the DLRM with its own batch: its table-wise candidate applies */
    idx[SPACE_BATCH] = 2;
    idx[SPACE_STRATEGY] = sp.nstrats - 3;
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_OK);
    CU_ASSERT_EQUAL(c.p.task.detailed.global_batch, 65536);
    space_cursor_free(&c);
    space_free(&s);
    spec_free(&sp);
}

/* A serving task that sets its own requests in flight gives the same
 * row under every global batch but its micro_batch column (the serving
 * model reads the batch only at concurrency 0 or a static batch; the
 * 90 rows of a llama2-70b sweep at concurrency 32 under batches 8, 64
 * and 256 were 30 triples, every figure of eval --json equal, issue 29): only the first batch is a
 * point, the others invalid:batch-unused; a task without a concurrency
 * (the batch is its requests in flight) keeps all three. */
static void test_batch_unused(void)
{
    spec sp;
    load_err err;
    load_ok("unused.cfg",
        "fidelity = \"detailed\";\nmodels = [\"llama3-8b\"];\n"
        "system_grid = ( { hardware = \"h100-sxm-80g\"; nodes = [1]; } );\n"
        "tasks = ( { type = \"inference\"; name = \"fixed\"; prompt_tokens = 1024;\n"
        "    decode_tokens = 128; concurrency = 32; },\n"
        "  { type = \"inference\"; name = \"batch\"; prompt_tokens = 1024;\n"
        "    decode_tokens = 128; } );\n"
        "stacks = [\"vllm\"];\nstrategies = \"auto\";\nglobal_batch = [8, 64, 256];\n",
        &sp);
    space s;
    CU_ASSERT_EQUAL_FATAL(space_init(&s, &sp, err.text, sizeof err.text), 0);
    space_cursor c;
    CU_ASSERT_FATAL(space_cursor_init(&c, &s) == 0);
    int64_t rej[SPACE_NCODES] = {0};
    CU_ASSERT_EQUAL_FATAL(space_count_all(&s, &c, rej), 0);
    CU_ASSERT_EQUAL(rej[STATUS_INVALID_BATCH_UNUSED],
                    2 * s.radix[SPACE_STRATEGY] * s.radix[SPACE_PARALLEL]);
    int64_t rows[2][3] = {{0}};
    for (int64_t id = 0; id < s.total; id++) {
        CU_ASSERT_EQUAL_FATAL(space_point(&s, &c, id, NULL), STATUS_OK);
        rows[c.idx[SPACE_TASK]][c.idx[SPACE_BATCH]]++;
    }
    CU_ASSERT(rows[0][0] > 0);
    CU_ASSERT_EQUAL(rows[0][1], 0);
    CU_ASSERT_EQUAL(rows[0][2], 0);
    CU_ASSERT(rows[1][0] > 0 && rows[1][1] > 0 && rows[1][2] > 0);
    int64_t idx[SPACE_NAXES] = {0};
    idx[SPACE_BATCH] = 1; /* task 0, "fixed" */
    CU_ASSERT_EQUAL(space_try(&s, &c, idx), STATUS_INVALID_BATCH_UNUSED);
    space_cursor_free(&c);
    space_free(&s);
    spec_free(&sp);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("space", NULL, NULL);
    CU_add_test(s, "detailed fine-tuning tasks", test_detailed_finetune);
    CU_add_test(s, "plan templates and the auto set", test_templates);
    CU_add_test(s, "ids are a bijection, counts are exact",
                test_bijection_and_counts);
    CU_add_test(s, "the stack axis", test_stacks);
    CU_add_test(s, "detailed auto: valid-only enumeration", test_detailed_enumeration);
    CU_add_test(s, "detailed explicit strategies", test_detailed_explicit);
    CU_add_test(s, "global batches per model kind, grid overrides", test_batch_kinds);
    CU_add_test(s, "a serving task's own concurrency: one batch", test_batch_unused);
    return unit_run();
}
