/*
 * auto.c - the `auto` strategies of sweeps: a fixed mixed-radix set of
 * candidate degrees and options, applied to a point's devices and batch.
 */
#include "dt.h"

#include <string.h>

/* Candidate strategies, a mixed-radix index (innermost first): tp in
 * {1,2,4,8}, pp in {1,2,4,8,16}, cp in {1,2}, vpp in {1,2}, zero in
 * {0,1,2,3}, recompute in {none, selective, full}, micro-batch in
 * {1,2,4}, ep in {1,8}, layout in {tp-cp-dp-pp, tp-cp-pp-dp}, DP/FSDP
 * overlap on or off, sequence parallelism on or off (with tp > 1), and
 * the schedule 1F1B or GPipe; dp is what remains of the devices and
 * grad_accum what remains of the batch. A candidate that does not apply,
 * or duplicates another, is refused with an INVALID code for the sweep
 * to skip: devices or batch do not split, vpp without pp, ZeRO 2/3 with
 * pp, ep on a dense model or not dividing dp x cp, sequence parallelism
 * off without tp, GPipe without pp or with vpp. Inference takes the
 * candidates without training options (ZeRO 0, no recompute, vpp 1,
 * 1F1B, overlap, the first micro-batch) and serves the global batch
 * concurrently: micro_batch = global_batch / dp. After them come the
 * DLRM candidates (table-, row-, column-wise embeddings; see
 * DT_AUTO_DLRM), which only DLRM models take. */
static const int64_t dt_auto_tp[] = {1, 2, 4, 8};
static const int64_t dt_auto_pp[] = {1, 2, 4, 8, 16};
static const int64_t dt_auto_cp[] = {1, 2};
static const int64_t dt_auto_v[] = {1, 2};
static const int64_t dt_auto_zero[] = {0, 1, 2, 3};
static const int64_t dt_auto_mb[] = {1, 2, 4};
static const int64_t dt_auto_ep[] = {1, 8};
#define DT_N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* DLRM candidates follow the transformer ones (whose numbering they leave
 * as it was): data-parallel MLPs over all devices with table-wise,
 * row-wise or column-wise embedding sharding. */
#define DT_AUTO_DLRM 3

static int64_t dt_auto_llm_count(void)
{
    return DT_N(dt_auto_tp) * DT_N(dt_auto_pp) * DT_N(dt_auto_cp) * DT_N(dt_auto_v) *
           DT_N(dt_auto_zero) * 3 * DT_N(dt_auto_mb) * DT_N(dt_auto_ep) * 2 * 2 * 2 * 2;
}

int64_t dt_auto_count(void)
{
    return dt_auto_llm_count() + DT_AUTO_DLRM;
}

/* Candidate i as degrees and options (dp = 0: the rest of the devices);
 * returns false when it duplicates another candidate or breaks a rule
 * that does not depend on the system or batch. */
static bool dt_auto_decode(int64_t i, bool inference, task_detailed_t *t)
{
    memset(t, 0, sizeof *t);
    if (i >= dt_auto_llm_count()) {
        t->tp = t->pp = t->cp = t->ep = t->vpp = 1;
        t->emb_sharding = TASK_EMB_TABLE + (int)(i - dt_auto_llm_count());
        t->overlap_dp_comm = true;
        t->dtype = HW_BF16;
        return true;
    }
    int64_t k = i;
#define DT_TAKE(arr) (arr)[k % DT_N(arr)]; k /= DT_N(arr)
    t->tp = DT_TAKE(dt_auto_tp);
    t->pp = DT_TAKE(dt_auto_pp);
    t->cp = DT_TAKE(dt_auto_cp);
    t->vpp = DT_TAKE(dt_auto_v);
    t->zero_stage = DT_TAKE(dt_auto_zero);
#undef DT_TAKE
    t->recompute = (task_recompute)(k % 3);
    k /= 3;
    int64_t mbi = k % DT_N(dt_auto_mb);
    t->micro_batch = dt_auto_mb[mbi];
    k /= DT_N(dt_auto_mb);
    t->ep = dt_auto_ep[k % DT_N(dt_auto_ep)];
    k /= DT_N(dt_auto_ep);
    t->layout = k % 2 ? detailed_layout_parse("tp-cp-pp-dp") : 0;
    k /= 2;
    t->overlap_dp_comm = k % 2 == 0;
    k /= 2;
    bool sp_off = k % 2 == 1;
    k /= 2;
    t->schedule = k % 2 ? TASK_SCHEDULE_GPIPE : TASK_SCHEDULE_1F1B;
    t->sequence_parallel = t->tp > 1 && !sp_off;
    t->dtype = HW_BF16;
    if ((t->pp == 1 && t->vpp > 1) || (t->pp > 1 && t->zero_stage >= 2) ||
        (sp_off && t->tp == 1) ||
        (t->schedule == TASK_SCHEDULE_GPIPE && (t->pp == 1 || t->vpp > 1)))
        return false;
    if (inference && (t->zero_stage != 0 || t->recompute != TASK_RECOMPUTE_NONE ||
                      t->vpp > 1 || t->schedule != TASK_SCHEDULE_1F1B ||
                      !t->overlap_dp_comm || mbi != 0))
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
    int64_t dev = p->system.devices;
    bool dlrm = p->model.kind == MODEL_DLRM;
    if (dlrm != (c.emb_sharding != TASK_EMB_NONE))
        return STATUS_INVALID_STRATEGY;
    if (dlrm) {
        if (global_batch % dev != 0)
            return STATUS_INVALID_BATCH_MISMATCH;
        task_detailed_t *t = &p->task.detailed;
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
    if (dev % (c.tp * c.pp * c.cp) != 0)
        return STATUS_INVALID_STRATEGY;
    int64_t dp = dev / (c.tp * c.pp * c.cp);
    if (c.ep > 1 && (p->model.d.experts % c.ep != 0 || (dp * c.cp) % c.ep != 0 ||
                     p->model.d.experts == 0))
        return STATUS_INVALID_STRATEGY;
    int64_t mb = inference ? global_batch / dp : c.micro_batch;
    if (mb < 1 || global_batch % (mb * dp) != 0)
        return STATUS_INVALID_BATCH_MISMATCH;
    task_detailed_t *t = &p->task.detailed;
    t->tp = c.tp;
    t->pp = c.pp;
    t->cp = c.cp;
    t->dp = dp;
    t->ep = c.ep;
    t->vpp = c.vpp;
    t->layout = c.layout;
    t->overlap_dp_comm = c.overlap_dp_comm;
    t->shard_degree = 0;
    t->zero_stage = c.zero_stage;
    t->recompute = c.recompute;
    t->schedule = c.schedule;
    t->sequence_parallel = c.sequence_parallel;
    t->micro_batch = mb;
    t->global_batch = global_batch;
    t->grad_accum = global_batch / (mb * dp);
    t->attention = TASK_ATTENTION_STACK;
    t->overlap_tp_comm = -1;
    return STATUS_OK;
}

int detailed_auto_candidate(int64_t i, task_detailed_t *t)
{
    if (i < 0 || i >= dt_auto_count())
        return -1;
    return dt_auto_decode(i, false, t) ? 0 : 1;
}
