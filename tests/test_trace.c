/*
 * test_trace.c - the detailed fidelity's trace: per pipeline stage, compute
 * events in order and without overlap, and every schedule, interleaving,
 * pipeline depth and recompute mode ending at the evaluated iteration time
 * (the trace and the evaluation read the same numbers).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../driver/load/load.h"
#include "unit.h"

/* Per stage: compute events in order, without overlap, from the first
 * start to the last end. */
typedef struct trace_stats {
    int64_t events, stages, fwd, bwd, rec, overlaps, prefill, decode;
    double first[64], last[64], busy_end[64];
    int64_t comm_with_bytes;
} trace_stats;

static void trace_collect(void *ctx, const detailed_event *ev)
{
    trace_stats *t = ctx;
    t->events++;
    if (ev->stage < 0 || ev->stage >= 64)
        return;
    if (ev->stage + 1 > t->stages)
        t->stages = ev->stage + 1;
    if (ev->track != DETAILED_TRACK_COMPUTE) {
        t->comm_with_bytes += ev->bytes > 0 && ev->group >= 2;
        return;
    }
    int64_t s = ev->stage;
    if (ev->start_s < t->busy_end[s] - 1e-12)
        t->overlaps++;
    if (t->first[s] < 0 || ev->start_s < t->first[s])
        t->first[s] = ev->start_s;
    if (ev->start_s + ev->dur_s > t->last[s])
        t->last[s] = ev->start_s + ev->dur_s;
    t->busy_end[s] = ev->start_s + ev->dur_s;
    t->fwd += strcmp(ev->name, "forward") == 0;
    t->bwd += strcmp(ev->name, "backward") == 0;
    t->rec += strcmp(ev->name, "recompute") == 0;
    t->prefill += strcmp(ev->name, "prefill") == 0;
    t->decode += strcmp(ev->name, "decode step") == 0;
}

static void test_trace(void)
{
    /* The bench point: TP8 PP8 (5 chunks per stage) DP16, 512 sequences
     * of 1 = 32 micro-batches per replica, selective recompute. Every
     * stage runs 32 x 5 forwards and as many backwards (each with its
     * recomputation), none overlapping, from the start of the iteration
     * (stage 0 at 0) to its end; the trace is the evaluation's schedule,
     * so it ends at the evaluated iteration time. */
    point_t p = unit_point("detailed_llama3_70b.cfg");
    result_t r = unit_eval(&p);
    trace_stats t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 64; i++)
        t.first[i] = -1.0;
    double end = 0.0;
    CU_ASSERT_EQUAL_FATAL(detailed_trace(&p, trace_collect, &t, &end), STATUS_OK);
    CU_ASSERT_EQUAL(t.stages, 8);
    CU_ASSERT_EQUAL(t.fwd, 8 * 32 * 5);
    CU_ASSERT_EQUAL(t.bwd, 8 * 32 * 5);
    CU_ASSERT_EQUAL(t.rec, 8 * 32 * 5);
    CU_ASSERT_EQUAL(t.overlaps, 0);
    CU_ASSERT(t.comm_with_bytes > 0);
    CU_ASSERT_EQUAL(t.first[0], 0.0);
    double last = 0.0;
    for (int s = 0; s < 8; s++) {
        CU_ASSERT(t.first[s] >= 0.0 && t.first[s] < t.last[s]);
        last = t.last[s] > last ? t.last[s] : last;
    }
    CU_ASSERT(end >= last);
    CU_ASSERT(fabs(end - r.iteration_time_s) < 1e-6);
    /* every stage's gradient reduction and optimizer is in it */
    CU_ASSERT(t.comm_with_bytes > 8 * 32 * 5);

    /* serving: one request's life in the steady state, its TTFT, then a
     * step per further token, ending where the evaluation's e2e does */
    p = unit_point("detailed_llama2_70b_inference.cfg");
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 64; i++)
        t.first[i] = -1.0;
    CU_ASSERT_EQUAL_FATAL(detailed_trace(&p, trace_collect, &t, &end), STATUS_OK);
    CU_ASSERT_EQUAL(t.prefill, 1);
    CU_ASSERT_EQUAL(t.decode, p.task.detailed.decode_tokens - 1);
    CU_ASSERT_EQUAL(t.overlaps, 0);
    r = unit_eval(&p);
    UNIT_ASSERT_CLOSE(end, r.iteration_time_s, 1e-9);
}

/* The trace of every schedule, interleaving, pipeline depth, recompute
 * mode and ZeRO stage ends at the evaluated iteration time (within
 * 1e-6 s), its compute never overlapping on a stage. */
static void test_trace_matches_eval(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/points/detailed_llama3_70b.cfg", unit_configs());
    point_t base;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &base, &err), 0);
    engine e;
    engine_init(&e, false);
    static const int64_t pps[] = {1, 2, 4, 8, 16}, vpps[] = {1, 2, 5};
    int checked = 0, bad = 0;
    for (int sc = 0; sc < 2; sc++)
        for (size_t a = 0; a < sizeof pps / sizeof pps[0]; a++)
            for (size_t b = 0; b < sizeof vpps / sizeof vpps[0]; b++)
                for (int rc = 0; rc < 4; rc++)
                    for (int z = 0; z < 4; z += 1) {
                        point_t p = base;
                        task_detailed_t *d = &p.task.detailed;
                        d->schedule = sc ? TASK_SCHEDULE_GPIPE : TASK_SCHEDULE_1F1B;
                        d->pp = pps[a];
                        d->vpp = d->pp > 1 && !sc ? vpps[b] : 1;
                        if (sc && b > 0)
                            continue;
                        d->recompute = (task_recompute)rc;
                        d->zero_stage = z;
                        int64_t cp = d->cp > 0 ? d->cp : 1, tp = d->tp > 0 ? d->tp : 1;
                        d->dp = p.system.devices / (tp * d->pp * cp);
                        d->overlap_dp_comm = (a + b + (size_t)rc) % 2 == 0;
                        result_t r;
                        if (eval_point(&p, &e, &r, NULL) != STATUS_OK)
                            continue;
                        trace_stats t;
                        memset(&t, 0, sizeof t);
                        for (int i = 0; i < 64; i++)
                            t.first[i] = -1.0;
                        double end = 0.0;
                        if (detailed_trace(&p, trace_collect, &t, &end) != STATUS_OK) {
                            bad++;
                            continue;
                        }
                        checked++;
                        if (!(fabs(end - r.iteration_time_s) < 1e-6) || t.overlaps != 0 ||
                            t.stages != d->pp) {
                            fprintf(stderr, "trace: pp %lld vpp %lld %s rc %d zero %d: ends "
                                    "%.9f s, evaluated %.9f s, %lld overlaps\n",
                                    (long long)d->pp, (long long)d->vpp, sc ? "gpipe" : "1f1b",
                                    rc, z, end, r.iteration_time_s, (long long)t.overlaps);
                            bad++;
                        }
                    }
    engine_free(&e);
    fprintf(stderr, "trace: %d points traced\n", checked);
    CU_ASSERT(checked >= 40);
    CU_ASSERT_EQUAL(bad, 0);
}

/* An interleaved pipeline runs whole groups of pp micro-batches (Megatron-
 * LM refuses other counts): 4 micro-batches on pp 8 x vpp 5 is refused by
 * the evaluation as by the trace, and vpp = "auto" does not pick an
 * interleaving there; its trace then ends at its evaluation. Before, the
 * evaluation priced such steps (the quickstart's 171,512 pretraining rows
 * with vpp auto, up to 5.5x too fast) while the trace refused them. */
static void test_interleave_groups(void)
{
    point_t p = unit_point("detailed_llama3_70b.cfg");
    p.task.detailed.global_batch = 64; /* dp 16 x 4 micro-batches of 1 */
    engine e;
    engine_init(&e, false);
    result_t r;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_INFEASIBLE_BATCH);
    double end = 0.0;
    trace_stats t;
    memset(&t, 0, sizeof t);
    CU_ASSERT_EQUAL(detailed_trace(&p, trace_collect, &t, &end), STATUS_INFEASIBLE_BATCH);
    p.task.detailed.vpp_auto = true; /* as vpp = "auto" loads */
    p.task.detailed.vpp = 0;
    CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    CU_ASSERT_EQUAL(r.vpp_resolved, 1);
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 64; i++)
        t.first[i] = -1.0;
    CU_ASSERT_EQUAL_FATAL(detailed_trace(&p, trace_collect, &t, &end), STATUS_OK);
    UNIT_ASSERT_CLOSE(end, r.iteration_time_s, 1e-9);
    /* 8 micro-batches: a whole group, interleaving allowed */
    p.task.detailed.vpp_auto = false;
    p.task.detailed.vpp = 5;
    p.task.detailed.global_batch = 128;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
    engine_free(&e);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("trace", NULL, NULL);
    CU_add_test(s, "trace ends at the evaluated iteration", test_trace_matches_eval);
    CU_add_test(s, "whole-iteration trace", test_trace);
    CU_add_test(s, "interleaving needs whole groups", test_interleave_groups);
    return unit_run();
}
