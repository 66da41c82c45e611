/*
 * membound.c - memory-bound kernel groups (norms, residual adds,
 * dropout, activations, RoPE, permutations): their bytes at the HBM
 * bandwidth times the stack's element-wise pass factor (eager PyTorch
 * runs each element-wise op as its own pass, a compiled graph fuses
 * them), plus the launches, never below the stack's launch cost per
 * kernel and pass (a host that enqueues kernels one by one).
 * Invariant: never below the launch floor, whatever the bytes.
 */
#include "llm.h"

double dt_membound_time(const dt_ctx *c, double bytes, double kernels)
{
    double t = hw_mem_time(c->hw, bytes * c->f.ew_passes) / c->f.mem +
               kernels * c->hw->kernel_overhead_s;
    double floor = kernels * c->f.ew_passes * c->f.launch_s;
    return t > floor ? t : floor;
}
