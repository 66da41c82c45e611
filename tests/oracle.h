/*
 * oracle.h - independent reference formulas the tests hold the detailed
 * fidelity against: closed forms from the papers, written here from the
 * papers and never called by the library (it computes the same figures
 * its own way, operation by operation), so that a test comparing the two
 * can fail.
 */
#ifndef MADSWEEP_ORACLE_H
#define MADSWEEP_ORACLE_H

#include <stdint.h>

/* FLOPs of one training iteration with full activation recomputation,
 * Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training
 * on GPU Clusters Using Megatron-LM", SC'21), eq. (3):
 * 96 B s l h^2 (1 + s / 6h + V / 16 l h). */
double oracle_megatron_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden,
                             int64_t vocab);

/* Pipeline bubble fraction of 1F1B with m micro-batches on p stages
 * (Narayanan et al. 2021, section 2.2.1: (p - 1) / m of the ideal time,
 * as a share of the whole (p - 1) / (m + p - 1)) and of its interleaved
 * form with v model chunks per device (section 2.2.2: the bubble shrinks
 * by v): (p - 1) / (v m + p - 1). */
double oracle_bubble_fraction(int64_t p, int64_t m, int64_t v);

/* Model-state bytes per device under ZeRO with mixed-precision Adam,
 * Rajbhandari et al. 2020 ("ZeRO: Memory Optimizations Toward Training
 * Trillion Parameter Models", SC'20), section 5 and Figure 1: 2 bytes of
 * fp16 parameters, 2 of fp16 gradients and K = 12 of fp32 optimizer
 * states (master weights, momentum, variance) per parameter; stage 1
 * (P_os) partitions the optimizer states over the n data-parallel
 * devices, stage 2 (P_os+g) the gradients too, stage 3 (P_os+g+p) the
 * parameters too. */
double oracle_zero_bytes(double params, int64_t stage, int64_t n);

/* Keys the causal queries of a sequence of s tokens see under a sliding
 * window of w keys (the query at position i, from 1, sees min(i, w)),
 * summed position by position. */
double oracle_window_pairs(int64_t s, int64_t w);

/* Forward FLOPs per token and value head of the chunked gated delta rule
 * (Yang, Kautz, Hatamizadeh 2024, "Gated Delta Networks", arXiv:
 * 2412.06464, section 3.3's chunkwise form, as flash-linear-attention's
 * chunk_gated_delta_rule runs it in chunks of c tokens), listed kernel by
 * kernel: the chunk's gated K K^T; the triangular solve of (I + A)^-1
 * (c^3 / 3 multiply-adds); the WY factors W = T K and U = T V; per chunk
 * the new values U - W S and the state update S + K^T V'; the output
 * Q S plus the masked intra-chunk scores Q K^T times V'. Each product of
 * an m x k by a k x n matrix 2 m n k FLOPs. */
double oracle_gdn_chunk_flops(int64_t c, int64_t dk, int64_t dv);

#endif
