/*
 * ctx.c - an evaluation's context: the task's degrees with their
 * defaults, the layout's strides (which devices each parallel dimension's
 * groups span), ZeRO's shard groups, Megatron-Core's expert grid, the
 * stack (the idealized one when a point names none) and its facts at
 * their nominal values (facts.c); and the placement of the groups a step
 * costs most often on the topology, once each, when first costed.
 * Invariants: the context is built from the point alone; what it points
 * to (groups, memo) lives with it in the caller's storage; placing a
 * group writes only the context's group table, never a figure.
 */
#include "core.h"

#include <math.h>
#include <string.h>

void dt_ctx_degrees(const point_t *p, dt_deg *d)
{
    const task_detailed_t *t = &p->task.detailed;
    d->tp = t->tp > 0 ? t->tp : 1;
    d->pp = t->pp > 0 ? t->pp : 1;
    d->dp = t->dp > 0 ? t->dp : 1;
    d->cp = t->cp > 0 ? t->cp : 1;
    d->ep = t->ep > 0 ? t->ep : 1;
    d->v = t->vpp > 0 ? t->vpp : 1;
    d->mb = t->micro_batch > 0                  ? t->micro_batch
            : p->stack.default_micro_batch > 0 ? p->stack.default_micro_batch
                                               : 1;
    d->zero = t->zero_stage;
    d->cf = t->capacity_factor > 0 ? t->capacity_factor : 1.0;
    if (t->grad_accum > 0) {
        d->ga = t->grad_accum;
        d->gb = t->global_batch > 0 ? t->global_batch : d->ga * d->mb * d->dp;
    } else {
        d->gb = t->global_batch > 0 ? t->global_batch : d->mb * d->dp;
        d->ga = d->gb / (d->mb * d->dp);
    }
}

/* The expert grid of Megatron-Core's MoE parallel folding: the tp x cp x
 * dp ranks of a stage regrouped as etp x ep x edp, innermost first. With
 * etp = tp (the default of stacks without folding) ep lies inside dp x
 * cp, as the attention's data-parallel group. */
static void dt_ctx_expert_grid(dt_ctx *c)
{
    int64_t tp = c->d.tp, ep = c->d.ep > 0 ? c->d.ep : 1;
    int64_t etp = c->t->etp > 0 && c->t->etp <= tp ? c->t->etp : tp;
    c->etp = etp;
    if (etp == tp) {
        c->s_ep = c->s_dpcp;
        c->edp = c->dpcp / ep > 0 ? c->dpcp / ep : 1;
        c->s_edp = c->s_dpcp * ep;
        c->zse = c->zs / ep > 0 ? c->zs / ep : 1;
        return;
    }
    c->s_ep = c->stride[DT_TP] * etp;
    c->edp = tp * c->dpcp / (etp * ep) > 0 ? tp * c->dpcp / (etp * ep) : 1;
    c->s_edp = c->s_ep * ep;
    int64_t z = c->zs * tp / (etp * ep);
    c->zse = z > 0 && z <= c->edp ? z : c->edp;
}

void dt_ctx_init(dt_ctx *c, const point_t *p, stack_desc *ideal, dt_groups *groups,
                 struct dt_memo *memo)
{
    memset(c, 0, sizeof *c);
    groups->placed = 0;
    c->groups = groups;
    c->memo = memo;
    c->p = p;
    c->m = &p->model;
    c->t = &p->task.detailed;
    c->hw = &p->system.hw;
    c->topo = &p->system.topo;
    if (p->stack.name[0]) {
        c->st = &p->stack;
    } else {
        stack_ideal(ideal);
        c->st = ideal;
    }
    dt_ctx_degrees(p, &c->d);
    c->dt = (hw_dtype)c->t->dtype;
    c->ab = c->dt == HW_FP32 || c->dt == HW_TF32 ? 4.0 : 2.0;
    double sgb = c->d.zero >= 3 && c->st->zero3_grad_reduce_bytes > 0.0
                     ? c->st->zero3_grad_reduce_bytes
                     : c->st->grad_reduce_bytes;
    c->gbytes = c->t->grad_reduce_bytes > 0 ? c->t->grad_reduce_bytes
                                            : fmax(sgb, c->ab > 2.0 ? 4.0 : 0.0);
    c->dpcp = c->d.dp * c->d.cp;
    c->sp = c->t->sequence_parallel && c->d.tp > 1;
    const model_t *m = c->m;
    c->dropout = m->d.dropout >= 0 ? m->d.dropout != 0
                                   : (m->d.arch == MODEL_ARCH_GPT || m->d.arch == MODEL_ARCH_BLOOM ||
                                      m->d.arch == MODEL_ARCH_VIT);
    c->attention = c->t->attention >= 0 ? c->t->attention : c->st->attention;
    c->rc = c->t->recompute;
    double per_stage = (double)m->layers / (double)c->d.pp;
    c->rc_frac = c->t->recompute_layers > 0 && (double)c->t->recompute_layers < per_stage
                     ? (double)c->t->recompute_layers / per_stage
                     : 1.0;
    c->lora = p->task.kind == TASK_FINETUNE && c->t->lora_rank > 0;
    bool defer = c->st->zero3_pp_defer && c->d.pp > 1;
    c->z3_ag_mb = !defer;
    c->z3_reshard = c->st->zero3_reshard && !defer;
    c->z3_rs_mb = c->st->zero3_rs_every_microbatch && !defer;
    int order[4];
    int64_t deg[4] = {c->d.tp, c->d.cp, c->d.dp, c->d.pp}, acc = 1;
    dt_layout_order(c->t->layout > 0 ? c->t->layout - 1 : 0, order);
    for (int i = 0; i < 4; i++) {
        c->stride[order[i]] = acc;
        acc *= deg[order[i]];
    }
    c->s_dpcp = c->stride[DT_DP] < c->stride[DT_CP] || c->d.cp == 1 ? c->stride[DT_DP]
                                                                    : c->stride[DT_CP];
    if (c->d.dp == 1)
        c->s_dpcp = c->stride[DT_CP];
    c->zs = c->t->shard_degree > 0 ? c->t->shard_degree : c->dpcp;
    dt_ctx_expert_grid(c);
    bool training = p->task.kind != TASK_INFERENCE;
    c->kv_len = (double)(!training && c->t->prompt_tokens > 0 ? c->t->prompt_tokens
                                                             : m->seq_len);
    c->seq = c->kv_len / (double)c->d.cp;
    c->tok = (double)c->d.mb * c->seq;
    dt_facts_resolve(c, STACK_NOMINAL);
}

/* Micro-batches of mb sequences. */
void dt_ctx_set_micro_batch(dt_ctx *c, int64_t mb)
{
    c->d.mb = mb;
    c->d.ga = c->d.gb / (mb * c->d.dp);
    c->tok = (double)mb * c->seq;
}

bool dt_ctx_batch_ok(const dt_ctx *c)
{
    return c->d.ga >= 1 && c->d.gb == c->d.ga * c->d.mb * c->d.dp &&
           (c->d.v <= 1 || c->d.ga % c->d.pp == 0);
}

void dt_group_place(const dt_ctx *c, int g)
{
    /* each group's members and stride (core.h's DT_G_TP ...) */
    const int64_t n[DT_GROUPS] = {c->d.tp, c->dpcp, c->zs, c->edp, c->zse};
    const int64_t s[DT_GROUPS] = {c->stride[DT_TP], c->s_dpcp, c->s_dpcp, c->s_edp, c->s_edp};
    dt_groups *gr = c->groups;
    topo_place(c->topo, n[g], s[g], g == DT_G_TP ? 0 : c->dpnet.rails, &gr->grp[g]);
    gr->placed |= 1u << g;
}
