/*
 * serve.h - serving with continuous batching (private to cost/detailed/):
 * the cost of one engine step (serve_step.c), the KV-cache capacity and
 * the concurrency it admits (serve_kv.c), and the closed-form steady
 * state of a server under a closed-loop concurrency, an open-loop request
 * rate or an offline backlog (serve_steady.c). Design:
 * ../shared/design/serving.md section 2; engine facts: the serving stacks
 * of configs/stacks.cfg (cost/stack.h, "serving").
 */
#ifndef MADSWEEP_SERVE_H
#define MADSWEEP_SERVE_H

#include "dt.h"

#include <math.h>

/* A weight GEMM of one layer on one device: bytes of weights streamed
 * and FLOPs per token; mem, its time streaming them (sv_model_facts). */
typedef struct sv_gemm {
    double wbytes, flops, mem;
} sv_gemm;

/* What one evaluation's steps share (sv_model_init, per scenario of the
 * stack's and hardware's ranges): the busiest pipeline stage's layers,
 * per-layer operator sizes on one device, and the resolved facts. */
typedef struct sv_model {
    double nd, nm;            /* dense and MoE layers on the busiest stage */
    sv_gemm g[4];             /* a layer's QKV, output, gate+up, down */
    int ng_moe;               /* GEMMs of g[] a MoE layer has (attention only: 2) */
    sv_gemm router, shared;   /* MoE: router (BF16), shared experts */
    double exp_bytes, exp_flops; /* one routed expert: weight bytes, FLOPs per routed token */
    double experts, e_loc, topk, ep;
    double adp;               /* attention data-parallel ranks (task attn_dp; 1: none):
                                 g[0], g[1] and attention see 1/adp of the step's rows */
    double kv_tok;            /* KV bytes per token and layer on one device */
    double kv_read;           /* times decode attention reads it (1: shared over a GQA group) */
    double attn_flops;        /* prefill attention FLOPs per query-key pair and layer */
    double ew_bytes;          /* element-wise bytes per token and layer */
    double ew_kernels;        /* element-wise kernels a layer (4; 6 with qk_norm) */
    double ar_bytes;          /* TP all-reduce bytes per token */
    sv_gemm head;             /* LM head on the last stage */
    double vocab_t;           /* vocabulary columns per device */
    double peak, peak16, bw;  /* math-dtype and BF16 peaks, HBM bandwidth (scaled) */
    double eff_top, m_half;   /* GEMM efficiency at large m, and its half point */
    double tp, pp, sbw;       /* degrees; scale-up bandwidth per device */
    double p2p_tok;           /* pipeline send per token between stages, s */
    /* resolved serving facts (cost/stack.h) */
    double t0, eta_w, eta_kv, attn_floor, pre_eff, ew_floor, ar_lat, ar_eff;
    double ar_ramp;           /* bus bytes of the bandwidth all-reduce's ramp */
    double host_step, host_seq, host_req;
    bool apart;               /* prefill steps apart from the decodes */
    /* speculative decoding (serve_spec.c): query rows per decoding
     * sequence (gamma + 1; 1 without), tokens per step E, draft cost of a
     * step in plain target decode steps (gamma x spec_draft_cost) */
    double rows, spec_e, draft;
} sv_model;

/* Draft step cost, in target decode steps, when a task does not say: a
 * draft model of about a twentieth of the target (Llama 3.2 1B drafting
 * for 3.1 70B; EAGLE/MTP heads of one layer cost less). */
#define SV_DRAFT_COST 0.05

/* The KV cache's dtype: the task's kv_precision, else the engines'
 * "auto": the activations' dtype (BF16 under FP8 or INT8 weights: FP8 KV
 * is opt-in in vLLM and SGLang and in TensorRT-LLM's PyTorch flow). */
static inline hw_dtype sv_kv_dtype(const dt_ctx *c)
{
    if (c->t->kv_dtype > 0)
        return (hw_dtype)(c->t->kv_dtype - 1);
    return c->dt == HW_FP8 || c->dt == HW_INT8 ? HW_BF16 : c->dt;
}

/* The share of its output a running request holds on average, over
 * the running set: 1/2 for fixed lengths; with outputs uniform on
 * [0, 2 OSL] long requests stay longer (length-biased): E[O^2] / (2 E[O]
 * OSL) = 2/3. */
static inline double sv_grown(const dt_ctx *c)
{
    return c->t->uniform_lengths ? 2.0 / 3.0 : 0.5;
}

/* Attention data parallelism (task attn_dp): the ranks, and the tensor-
 * parallel degree attention runs at, tp / ranks. */
static inline double sv_adp(const dt_ctx *c)
{
    return c->t->attn_dp > 1 ? (double)c->t->attn_dp : 1.0;
}

/* Bytes per stored weight: the task's weight_precision, else the
 * compute dtype's. */
static inline double sv_weight_bytes(const dt_ctx *c)
{
    double b = task_weight_bytes(c->t->weight_dtype);
    return b > 0.0 ? b : hw_dtype_bytes(c->dt);
}

/* The parts of one step's time on the busiest stage. */
typedef struct sv_parts {
    double gemm, attn, ew, tp, head, host, total;
} sv_parts;

void sv_model_init(const dt_ctx *c, const dt_stages *st, stack_scenario sc, sv_model *k);
/* sv_model_init in two parts: the shapes (the busiest stage, operator
 * sizes, speculation), which no uncertain fact moves, and the facts of
 * scenario sc (peaks and bandwidths under c's facts, the stack's figures):
 * a band end re-resolves only the second. */
void sv_model_shape(const dt_ctx *c, const dt_stages *st, sv_model *k);
void sv_model_facts(const dt_ctx *c, stack_scenario sc, sv_model *k);
/* One engine step on one stage carrying `np` prefill chunks of `len`
 * tokens each (after `ctx` tokens already cached) and `d` decodes at a
 * mean context of `cd` tokens: its time, parts in *o when o is not NULL. */
double sv_step(const sv_model *k, double np, double len, double ctx, double d, double cd,
               sv_parts *o);
/* Speculative decoding (serve_spec.c): k's rows, E and draft cost from
 * the task; the time per output token of a decode-only step of d
 * sequences (the step itself without speculation). */
void sv_spec_init(const dt_ctx *c, sv_model *k);
double sv_decode_token(const sv_model *k, double d, double cd);

/* TP all-reduce of `bytes` by the engine's custom kernel: the faster of
 * one-shot ((tp - 1) x bytes read by each rank) and the bandwidth path
 * (2 (tp - 1) / tp x bytes plus its ramp, allreduce_ramp_bytes), at the
 * stack's fraction of the scale-up bandwidth, after its latency. */
double sv_allreduce(const sv_model *k, double bytes);

/* KV-cache capacity of one replica (sv_kv, dt.h; serve_kv.c). */
void sv_kv_init(const dt_ctx *c, const dt_stages *st, bool reserve, sv_kv *kv);
/* The replica's KV capacity under the task's scheduler (static batches
 * reserve their whole length); false when not even one request (or, for
 * a static batch, not the whole batch) fits. */
bool sv_fits(const dt_ctx *c, const dt_stages *st, sv_kv *kv);

/* The steady state (serve_steady.c) of one replica, and the figures. */
typedef struct sv_state {
    double conc;         /* requests in flight per replica */
    double ttft, ttft_p90, ttft_p99, tpot, itl_p50, itl_p99;
    double ttft_wave;    /* closed loop, fixed lengths: the last of a wave (0: none) */
    double e2e;          /* TTFT + (OSL - 1) TPOT */
    double req_s;        /* requests/s per replica */
    double busy;         /* GPU time per second of the stage (compute share) */
    double tp_share;     /* TP all-reduce share of the step time */
    bool saturated;      /* request rate at or above the capacity */
} sv_state;
/* TTFT with a queue: base (what every request's first token takes) plus
 * the mean M/D/1 wait wq at load rho, the 90th and 99th percentiles from
 * P(W > x) ~ rho exp(-x rho / wq) (model estimates). Shared by the
 * colocated rate (serve_steady.c) and the prefill pool (serve_disagg.c). */
static inline void sv_ttft_queue(double base, double rho, double wq, sv_state *s)
{
    s->ttft = base + wq;
    double q[2] = {0.10, 0.01}, *dst[2] = {&s->ttft_p90, &s->ttft_p99};
    for (int i = 0; i < 2; i++)
        *dst[i] = base + (rho > q[i] && wq > 0.0 ? wq / rho * log(rho / q[i]) : 0.0);
}
status_code sv_serve(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r);
/* sv_serve under the nominal facts, then the band: the iteration time
 * under every uncertain fact at its fast end (iteration_time_lo_s), then
 * its slow end (_hi_s). The KV capacity, the workload and the model's
 * shapes are the nominal run's (no uncertain fact moves them); c is left
 * at the slow end. */
status_code sv_serve_band(dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r);

/* A serving workload: prompt and output tokens, the engine's token
 * budget per step. */
/* The workload: mean prompt and output lengths, the token budget, and
 * the running set's mean context cd = isl + grown x osl (sv_grown). */
typedef struct sv_load {
    double isl, osl, K, cd;
} sv_load;
/* The start of a serving evaluation: the KV capacity dt_prepare's
 * memory found (mem->kv; false when the replica does not fit), the
 * step-cost model and the workload. */
bool sv_begin(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, sv_model *k,
              sv_load *w);
/* Time per output token of decode-only steps of d sequences per replica
 * (pipeline stages and speculation included). */
double sv_tok(const sv_model *k, double d, double cd);
/* Mean TTFT and TPOT within the task's SLA. */
bool sv_meets(const dt_ctx *c, const sv_state *s);
/* The figures of a replica's state s (rates times dp replicas; per
 * device over `devices`) into r. */
void sv_put(const dt_ctx *c, const sv_model *k, const sv_kv *kv, const sv_load *w,
            const sv_state *s, double devices, result_t *r);

/* Prefill/decode disaggregation (serve_disagg.c): the point's system and
 * task are the decode pool, p->prefill the prefill pool. */
status_code sv_disagg_check(const point_t *p, const char **where);
status_code sv_disagg(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, result_t *r);

#endif
