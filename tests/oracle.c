/*
 * oracle.c - the reference formulas of oracle.h, each as its paper
 * writes it (see oracle.h for the sources). Test code only: the library
 * does not link this file.
 */
#include "oracle.h"

double oracle_megatron_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden,
                             int64_t vocab)
{
    double B = (double)batch, s = (double)seq, l = (double)layers;
    double h = (double)hidden, V = (double)vocab;
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double oracle_bubble_fraction(int64_t p, int64_t m, int64_t v)
{
    double dv = v > 1 ? (double)v : 1.0; /* 1F1B without interleaving: v = 1 */
    return (double)(p - 1) / (dv * (double)m + (double)(p - 1));
}

double oracle_zero_bytes(double params, int64_t stage, int64_t n)
{
    double nd = n > 1 ? (double)n : 1.0;
    double weights = 2.0 * params, grads = 2.0 * params, optimizer = 12.0 * params;
    return (stage >= 3 ? weights / nd : weights) + (stage >= 2 ? grads / nd : grads) +
           (stage >= 1 ? optimizer / nd : optimizer);
}

double oracle_window_pairs(int64_t s, int64_t w)
{
    double sum = 0.0;
    for (int64_t i = 1; i <= s; i++)
        sum += (double)(i < w ? i : w);
    return sum;
}

double oracle_gdn_chunk_flops(int64_t c, int64_t dk, int64_t dv)
{
    double C = (double)c, k = (double)dk, v = (double)dv;
    double mm = 0.0;
    mm += 2.0 * C * C * k;             /* A = beta K K^T (gated) */
    mm += 2.0 * C * C * C / 3.0;       /* (I + A)^-1, forward substitution */
    mm += 2.0 * C * C * k;             /* W = T (beta K) */
    mm += 2.0 * C * C * v;             /* U = T (beta V) */
    mm += 2.0 * C * k * v;             /* V' = U - W S */
    mm += 2.0 * C * k * v;             /* S = S g + K^T V' */
    mm += 2.0 * C * k * v;             /* O = Q S */
    mm += 2.0 * C * C * k;             /* P = Q K^T, masked */
    mm += 2.0 * C * C * v;             /* O += P V' */
    return mm / C;
}
