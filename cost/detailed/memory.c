/*
 * memory.c - activation bytes per layer and micro-batch (Korthikanti et
 * al. 2022: s b h (10 + 24/t + 5 a s/(h t)), 34/t with sequence
 * parallelism, the 5 a s/h term dropped with selective recompute or fused
 * attention, 2 s b h with full recompute; for 16-bit activations, doubled
 * for 32-bit), and which layers of a stage are frozen in fine-tuning.
 */
#include "dt.h"

/* Activation bytes of one layer for one micro-batch stored under
 * recompute mode `rc` (Korthikanti: the coefficients count 16-bit
 * activations; 32-bit ones (fp32, tf32) take twice the bytes). */
double dt_act_bytes(const dt_ctx *c, task_recompute rc)
{
    double s = c->seq, b = (double)c->d.mb, h = (double)c->m->hidden;
    double a = (double)c->m->heads, t = (double)c->d.tp;
    double w = c->ab / 2.0;
    bool sp = c->t->sequence_parallel && c->d.tp > 1;
    if (rc == TASK_RECOMPUTE_FULL)
        return w * 2.0 * s * b * h / (sp ? t : 1.0);
    double base = s * b * h * (sp ? 34.0 / t : 10.0 + 24.0 / t);
    if (rc == TASK_RECOMPUTE_NONE && c->t->attention == TASK_ATTENTION_UNFUSED)
        base += 5.0 * a * s * c->kv_len * b / t;
    return w * base;
}

/* Frozen layers of [lo, hi): the first `frozen` layers of the model are
 * frozen; out: those below moe_from (dense) and from it (MoE). */
void dt_frozen_in(int64_t lo, int64_t hi, int64_t frozen, int64_t moe_from,
                  double *fd, double *fm)
{
    int64_t f = hi < frozen ? hi : frozen;
    int64_t d_hi = f < moe_from ? f : moe_from;
    int64_t m_lo = lo > moe_from ? lo : moe_from;
    *fd = (double)(d_hi > lo ? d_hi - lo : 0);
    *fm = (double)(f > m_lo ? f - m_lo : 0);
}
