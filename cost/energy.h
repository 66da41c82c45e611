/*
 * energy.h - energy and money of one evaluated design point.
 *
 * Applied after a fidelity's evaluation (cost/eval.c), from the figures
 * it computed and the devices' power and price. The power model has two
 * states per device:
 *   busy  while the compute stream runs (a fidelity's compute time per
 *         device, compute_gemm_s + compute_emb_s): board power P_board;
 *   idle  for the rest of the iteration (waiting on exposed
 *         communication, pipeline bubbles): P_idle, by default
 *         ENERGY_IDLE_FRACTION x P_board.
 *   E_iteration = N x (P_idle x T + (P_board - P_idle) x min(busy, T))
 * for N devices and an iteration of T seconds, busy clamped to [0, T].
 * Money is the devices' hourly price over the iteration:
 *   C_iteration = N x price_per_hour x T / 3600.
 * Per sample and per token: divided by the samples or tokens of one
 * iteration. Only the accelerators are counted: hosts, network and
 * cooling (PUE) are not, so the figures are lower bounds of a data
 * centre's energy and of a cloud bill that adds storage or egress.
 * A figure whose inputs are unknown (power or price not given, <= 0 or
 * not finite) is NaN. Pure arithmetic: no state, no I/O.
 */
#ifndef MADSWEEP_ENERGY_H
#define MADSWEEP_ENERGY_H

#include <stdint.h>

/* Assumed: a device held by a job but not computing (waiting on
 * communication or in a pipeline bubble) keeps its clocks and memory
 * active and draws about 30 % of its board power; busy kernels draw
 * close to the board power (TDP). Deep idle is lower (10-15 % of TDP on
 * current data-centre GPUs), so this is the allocated-and-waiting state,
 * not an idle machine. Overridden per hardware by idle_power_w. */
#define ENERGY_IDLE_FRACTION 0.30

typedef struct energy_device {
    double board_power_w;      /* per device, W (TDP) */
    double idle_power_w;       /* per device, W (<= 0: the idle fraction) */
    double price_per_hour_usd; /* per device-hour */
} energy_device;

typedef struct energy_in {
    int64_t devices;
    double iteration_s;        /* T */
    double busy_s;             /* compute-stream time per device */
    double samples;            /* samples (LLM: sequences) per iteration */
    double tokens;             /* tokens per iteration (NaN: not an LLM) */
} energy_in;

typedef struct energy_out {
    double energy_per_iteration_j;
    double energy_per_sample_j;
    double energy_per_token_j;
    double cost_per_iteration_usd;
    double cost_per_sample_usd;
    double cost_per_million_tokens_usd;
} energy_out;

/* Idle power of a device: idle_power_w when given (> 0), else
 * ENERGY_IDLE_FRACTION x board_power_w. */
double energy_idle_w(const energy_device *d);

/* Fills every figure of *out (NaN where an input is unknown). */
void energy_eval(const energy_device *d, const energy_in *in, energy_out *out);

#endif
