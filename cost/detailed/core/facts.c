/*
 * facts.c - the facts of one scenario of the stack's and hardware's
 * ranges (cost/stack.h): nominal, or every uncertain fact at its fast or
 * slow end (the band iteration_time_lo_s .. _hi_s). The efficiency and
 * network multipliers come from the hardware's uncertainty; the stack's
 * figures from its ranges, unless the task pins them (compiled, TP
 * overlap, MoE dispatcher and overlap: the stated end, or off).
 * Invariant: a pure function of the task, the stack and the scenario;
 * resolving the same scenario again gives the same facts.
 */
#include "core.h"

/* HBM passes (in units of an input's 16-bit bytes) a scaling recipe adds
 * to the stack's fused casts (Transformer Engine recipes; the stack's
 * figure is the delayed-scaling one, whose amax comes from a history):
 * current scaling must reduce the tensor's amax before it can cast, so
 * the cast leaves its producer (read 2 + write 1 byte: 0.75); blockwise
 * and MXFP8 scale locally but quantize a second, column-wise copy for
 * the backward's transposed GEMMs (one more 1-byte write: 0.5); NVFP4
 * needs the per-tensor amax, the column-wise copy and a random Hadamard
 * transform of the weight-gradient inputs (about 1.5). */
static double dt_facts_recipe_passes(int recipe)
{
    switch (recipe) {
    case TASK_FP8_CURRENT:
        return 0.75;
    case TASK_FP8_BLOCKWISE:
    case TASK_FP8_MXFP8:
        return 0.5;
    case TASK_FP8_NVFP4:
        return 1.5;
    default:
        return 0.0;
    }
}

void dt_facts_resolve(dt_ctx *c, stack_scenario sc)
{
    const hw_t *hw = c->hw;
    const stack_desc *st = c->st;
    dt_facts *f = &c->f;
    c->scenario = sc;
    double k = sc == STACK_FAST ? 1.0 : sc == STACK_SLOW ? -1.0 : 0.0;
    f->gemm = f->attn = f->mem = 1.0 + k * hw->efficiency_uncertainty;
    f->net = 1.0 + k * hw->network_uncertainty;
    /* a run that says whether it is compiled takes that end of the
     * stack's element-wise passes (the ranges span eager to
     * torch.compile); the FP8 casts keep the stack's figure, fitted on
     * compiled runs where a stack has them */
    int cm = c->t->compiled;
    stack_scenario psc = cm == 1 ? STACK_FAST : cm == 0 ? STACK_SLOW : sc;
    f->ew_passes = stack_pick(st->elementwise_passes, psc, false);
    f->launch_s = stack_pick(st->launch_s, sc, false);
    f->fp8_cast = stack_pick(st->fp8_cast_passes, sc, false) + dt_facts_recipe_passes(c->t->fp8_recipe);
    int tpo = c->t->overlap_tp_comm;
    f->tpo_f = tpo == 0 ? 0.0 : tpo == 1 ? 1.0 : stack_pick(st->tp_overlap_fwd, sc, true);
    f->tpo_b = tpo == 0 ? 0.0 : tpo == 1 ? 1.0 : stack_pick(st->tp_overlap_bwd, sc, true);
    f->dpo = stack_pick(c->d.zero >= 3 && st->zero3_overlap.hi > 0.0 ? st->zero3_overlap
                                                                      : st->dp_overlap,
                        sc, true);
    f->slow = stack_pick(st->comm_slowdown, sc, false);
    f->dp_bus = stack_pick(st->dp_bus_efficiency, sc, true);
    f->sel_gemm = stack_pick(st->selective_gemm_fraction, sc, false);
    f->loss_bytes = stack_pick(st->loss_bytes, sc, false);
    f->sel_block = stack_pick(st->selective_block_fraction, sc, false);
    /* a run that names its dispatcher or A2A overlap: off, or on as far
     * as the stack's overlapped schedule hides it (comm.c) */
    int ao = c->t->moe_a2a_overlap, fx = c->t->moe_flex_dispatch;
    double on = st->moe_a2a_overlap_on.hi > 0.0 ? stack_pick(st->moe_a2a_overlap_on, sc, true)
                                                : 1.0;
    f->a2a_overlap = ao == 0 ? 0.0 : ao == 1 ? on : stack_pick(st->moe_a2a_overlap, sc, true);
    f->a2a_hier = fx == 0 ? 0.0 : fx == 1 ? 1.0 : stack_pick(st->moe_hierarchical_dispatch, sc, true);
    c->dpnet.rails = st->dp_rails;
    c->dpnet.eff = f->dp_bus;
}
