/*
 * linattn.h - linear attention (Gated DeltaNet) of one layer on one GPU
 * in the kernel layer's figures (kernel.h): the chunked prefill and the
 * recurrent decode step of flash-linear-attention's
 * chunk_gated_delta_rule and fused_recurrent_gated_delta_rule, which
 * vLLM, SGLang and TensorRT-LLM run for Qwen3-Next and Qwen3.5.
 * A separate file beside attn.c: the kernels of the model's second
 * attention kind (sliding windows are attn.c's `window`).
 */
#ifndef MADSWEEP_KERNEL_LINATTN_H
#define MADSWEEP_KERNEL_LINATTN_H

#include "kernel.h"

/* Decode: `batch` sequences, one token each, reading and writing each
 * sequence's state; prefill: `batch` prompts of `seq` tokens in chunks
 * of `chunk` (FLA: 64). Heads on this GPU: heads_k query/key heads of
 * dk, heads_v value heads of dv (each value head has its own dk x dv
 * state); state_bytes per state element (float32: 4), act_bytes per
 * activation (BF16: 2). */
typedef struct kern_linattn {
    int decode;
    double batch, seq, chunk;
    double heads_k, heads_v, dk, dv;
    double state_bytes, act_bytes;
    const kern_backend *be; /* NULL: the neutral back end */
} kern_linattn;

/* Time in seconds, or -1 for a shape it cannot price. */
double kern_linattn_time(const kern_ctx *c, const kern_linattn *a);

#endif
