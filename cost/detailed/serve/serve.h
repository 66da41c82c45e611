/*
 * serve.h - the serving family of the detailed fidelity: transformer
 * inference on a serving engine with continuous batching or static
 * batches (private to cost/detailed/), one file per part:
 *   model.c    the step-cost model of one evaluation: the busiest stage's
 *              operator sizes (no fact moves them) and a scenario's facts;
 *              the workload
 *   step.c     the wall time of one engine step, per operator
 *   spec.c     speculative decoding: a decode step's time per token
 *   replica.c  a replica's steps (pipeline stages), TPOT, prefill beside
 *              the decodes, ITL
 *   ttft.c     the closed loop at C requests in flight: TTFT and TPOT
 *              under the engine's policy (decode-first, prefill-first
 *              waves), the wait for a slot above C_max
 *   burst.c    finite runs: a burst of N requests, a backlog beyond C_max
 *   steady.c   the steady state under the task's load (closed loop,
 *              request rate, SLA, offline, static batches)
 *   result.c   the figures of a replica's state
 *   pool.c     a disaggregated deployment's prefill pool: its own context,
 *              layout and limits, built once; the KV transfer
 *   disagg.c   prefill/decode disaggregation: two pools, their rates
 *   serve.c    the family the top runs
 * Design: docs/serving.md; engine facts: the
 * serving stacks of configs/stacks.cfg (cost/stack.h, "serving"). It
 * stands on llm/ (the KV capacity, the setup) and core/, and calls no
 * other family. Invariant: no uncertain fact moves the KV capacity, the
 * workload or the model's shapes, so the band's ends re-resolve only the
 * step model's facts (colocated) or cost the deployment again
 * (disaggregated).
 */
#ifndef MADSWEEP_DT_SERVE_H
#define MADSWEEP_DT_SERVE_H

#include <math.h>

#include "../llm/llm.h"

/* ---- the step-cost model (model.c) */

/* A weight GEMM of one layer on one device: bytes of weights streamed
 * and FLOPs per token; wide: BF16 math (the router and the LM head, or a
 * part kept in BF16 under a narrower compute dtype); under a scenario's
 * facts (sv_model_facts) mem, its time streaming the weights, and the
 * peak and serving-shape curve (top efficiency, half point) of its math
 * dtype. */
typedef struct sv_gemm {
    double wbytes, flops, mem, peak, top, half;
    int wide;
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
    /* MoE under attention DP with the experts over the replica (DEP):
     * dispatch and combine by all-to-all (a2a); a rank's bytes a token
     * sends (its distinct destination ranks x hidden x FP8 out, BF16
     * back); the EP group's all-to-all as latency + bytes x per_byte on
     * the topology; DeepEP's low-latency kernels' floor of a decode
     * step's dispatch + combine */
    bool a2a;
    double a2a_tok, a2a_lat, a2a_byte, a2a_floor;
    double graph_max;         /* the largest decode batch per rank a CUDA graph holds */
    double eager;             /* a kernel's launch without a graph */
    double kernels;           /* kernels of a step (its floor when launched eagerly) */
    double host_step, host_seq, host_req;
    bool apart;               /* prefill steps apart from the decodes (prefill-first) */
    bool uniform;             /* lengths spread (task uniform_lengths): no waves */
    double overlap;           /* 1: the engine forms step n + 1 during step n (overlap or
                                 async scheduler): a new prompt waits for both */
    double rounds;            /* the client's requests per slot (0: an endless loop) */
    /* speculative decoding (spec.c): query rows per decoding sequence
     * (gamma + 1; 1 without), tokens per step E, draft cost of a step in
     * plain target decode steps (gamma x spec_draft_cost) */
    double rows, spec_e, draft;
    /* multi-token prediction as the draft (spec.c): the model's own MTP
     * module, a layer (MoE: mtp_moe) and the head per draft token */
    bool mtp;
    double mtp_moe, mtp_layers, gamma;
    /* attention kinds (docs/serving.md, "Attention kinds"): layers of the
     * model's second kind on the busiest stage (alt: DT_KIND_*), their
     * projections (ga: the rest, the output), the window, Gated
     * DeltaNet's state bytes a sequence, FLOPs per prompt token, chunk
     * states' bytes per prompt token, its conv's element-wise bytes per
     * token; sparse attention on the full layers: top-k keys, the
     * indexer's key bytes per token and FLOPs per query-key pair */
    int alt;
    double na;
    sv_gemm ga[2];
    double win, lin_state, lin_fl, lin_io, lin_ew;
    double sa_topk, idx_tok, idx_flops;
    int wide;                   /* a GEMM of a part kept wide (sv_gemm.wide) */
    double eff_top16, m_half16; /* the BF16 curve (parts kept wide) */
} sv_model;

/* The workload: mean prompt and output lengths, the token budget, and
 * the running set's mean context cd = isl + grown x osl (dt_kv_grown). */
typedef struct sv_load {
    double isl, osl, K, cd;
} sv_load;

void sv_model_init(const dt_ctx *c, const dt_stages *st, stack_scenario sc, sv_model *k);
/* sv_model_init in two parts: the shapes (the busiest stage, operator
 * sizes, speculation), which no uncertain fact moves, and the facts of
 * scenario sc (peaks and bandwidths under c's facts, the stack's figures):
 * a band end re-resolves only the second. */
void sv_model_shape(const dt_ctx *c, const dt_stages *st, sv_model *k);
void sv_model_facts(const dt_ctx *c, stack_scenario sc, sv_model *k);
/* The start of a serving evaluation: the KV capacity the setup's memory
 * found (mem->kv; false when the replica does not fit), the step-cost
 * model under c's facts and the workload. */
bool sv_model_begin(const dt_ctx *c, const dt_stages *st, const dt_mem *mem, sv_model *k,
                    sv_load *w);

/* ---- one engine step (step.c) */

/* The parts of one step's time on the busiest stage. */
typedef struct sv_parts {
    double gemm, attn, ew, tp, head, host, total;
} sv_parts;

/* One engine step on one stage carrying `np` prefill chunks of `len`
 * tokens each (after `ctx` tokens already cached) and `d` decodes at a
 * mean context of `cd` tokens: its time, parts in *o when o is not NULL. */
double sv_step(const sv_model *k, double np, double len, double ctx, double d, double cd,
               sv_parts *o);
/* TP all-reduce of `bytes` by the engine's custom kernel: the faster of
 * one-shot ((tp - 1) x bytes read by each rank) and the bandwidth path
 * (2 (tp - 1) / tp x bytes plus its ramp, allreduce_ramp_bytes), at the
 * stack's fraction of the scale-up bandwidth, after its latency. */
double sv_step_allreduce(const sv_model *k, double bytes);

/* ---- speculative decoding (spec.c) */

/* Draft step cost, in target decode steps, when a task does not say: a
 * draft model of about a twentieth of the target (Llama 3.2 1B drafting
 * for 3.1 70B; EAGLE/MTP heads of one layer cost less). */
#define SV_SPEC_DRAFT_COST 0.05

/* k's rows, E and draft cost from the task; the time per output token
 * of a decode-only step of d sequences (the step itself without
 * speculation). */
void sv_spec_init(const dt_ctx *c, sv_model *k);
double sv_spec_decode_token(const sv_model *k, double d, double cd);

/* ---- a replica's state and its steps (replica.c) */

/* The steady state of one replica, and the figures. */
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
 * colocated rate (steady.c) and the prefill pool (disagg.c). */
static inline void sv_ttft_queue(double base, double rho, double wq, sv_state *s)
{
    s->ttft = base + wq;
    double q[2] = {0.10, 0.01}, *dst[2] = {&s->ttft_p90, &s->ttft_p99};
    for (int i = 0; i < 2; i++)
        *dst[i] = base + (rho > q[i] && wq > 0.0 ? wq / rho * log(rho / q[i]) : 0.0);
}

/* Mean TTFT and TPOT within the task's SLA (a limit of 0: none). */
static inline bool sv_sla_met(const dt_ctx *c, const sv_state *s)
{
    return (c->t->ttft_max_s <= 0.0 || s->ttft <= c->t->ttft_max_s) &&
           (c->t->tpot_max_s <= 0.0 || s->tpot <= c->t->tpot_max_s);
}

/* The decode steps after a request's first token, OSL - 1: none at an
 * output of one token. Where it divides (arrivals per step, a prefill
 * share per decode) its users guard a zero. */
static inline double sv_decode_steps(const sv_load *w)
{
    return dt_max(w->osl - 1.0, 0.0);
}

/* A step of the replica (np prompts' chunks of len tokens after ctx
 * cached, d decodes at context cd): pp stage steps of 1/pp of the work,
 * the sends. */
double sv_replica_step(const sv_model *k, double np, double len, double ctx, double d, double cd);
/* Time per output token of decode-only steps of d sequences per replica
 * (pipeline stages and speculation included). */
double sv_tpot(const sv_model *k, double d, double cd);

/* Prefill beside d decodes: prompts per step np, chunk length, chunks
 * per prompt, the time of the step that carries a chunk (tp), the gap a
 * decoding sequence sees across it (t), delta per prefill token. In one
 * step with the decodes (t = tp), delta is the step's marginal time per
 * prefill token; in a step of its own (the engine runs prefill apart),
 * the decodes wait for all of it (t = tp + a decode step, delta = tp per
 * token); fit, the whole prompts (or chunks) the step's room holds. */
typedef struct sv_prefill_step {
    double np, len, nc, tp, t, delta, fit;
} sv_prefill_step;

/* The prefill step beside d decodes with `arrivals` prompts queued per
 * step; tok: sv_tpot(k, d, w->cd), which the callers have. */
void sv_prefill_at(const sv_model *k, const sv_load *w, double d, double arrivals, double tok,
                   sv_prefill_step *o);
/* The decoding requests d in [1, hi] where a rate's balance f(arg, d)
 * (negative below the fixed point, positive above it) crosses 0, by 50
 * bisection steps: the bracket's upper end (1 when f(1) >= 0); -1 when
 * hi <= 1 or f(hi) <= 0 (no fixed point below hi). Where the secant of an
 * open loop fails (a step cost rising steeply at small batches): the
 * colocated replica's (steady.c) and a disaggregated decode pool's
 * (disagg.c). */
double sv_bisect(double (*f)(const void *arg, double d), const void *arg, double hi);
/* Inter-token latency into s: the median a decode step td, the 99th
 * percentile the prefill step once it carries >= 1 % of the steps. */
void sv_itl(double td, const sv_prefill_step *p, double arrivals, sv_state *s);
/* ---- the closed loop (ttft.c) */

/* Closed loop at C requests in flight, all admitted (C <= C_max). */
void sv_closed_loop(const sv_model *k, const sv_load *w, double C, sv_state *s);
/* Closed loop of C requests on a replica that admits cmax: above it
 * the others wait for a slot. */
void sv_loop_wait(const sv_model *k, const sv_load *w, double C, double cmax, sv_state *s);
/* A mean wait for a slot before the first token, added to s: the waits
 * spread evenly over [0, 2 wait] (p90, p99 and the wave's end move by
 * theirs), e2e with them. Shared by the colocated loop above C_max and
 * a disaggregated decode pool's (disagg.c). */
void sv_slot_wait(const sv_load *w, double wait, sv_state *s);

/* ---- finite runs (burst.c) */

/* An offline burst of N <= C_max requests sent at once. */
void sv_burst(const dt_ctx *c, const sv_model *k, const sv_load *w, double N, sv_state *s);
/* A finite run of N requests above the C the replica admits. */
void sv_burst_finite(const dt_ctx *c, const sv_model *k, const sv_load *w, double N, double C,
                     sv_state *s);

/* ---- the steady state (steady.c) */

/* The replica's state under the task's load, at most cmax in flight. */
void sv_solve(const dt_ctx *c, const sv_model *k, const sv_load *w, int64_t cmax, sv_state *s);

/* ---- the figures (result.c) */

/* The figures of a replica's state s (rates times dp replicas; per
 * device over `devices`) into r. */
void sv_result_write(const dt_ctx *c, const sv_model *k, const dt_kv *kv, const sv_load *w,
                     const sv_state *s, double devices, result_t *r);

/* ---- the prefill pool (pool.c) */

/* A disaggregated deployment's prefill pool: its point, setup and step
 * model (built once), its prefill step's shape, and per scenario its
 * costs. */
typedef struct sv_pool {
    point_t p;       /* the pool's point (its system, degrees and limits) */
    dt_eval v;       /* its setup: context (pointing into p), stages, memory */
    sv_model k;      /* its step model: shapes once, facts per scenario */
    double np, nc, len, ctx; /* a prefill step: prompts, chunks a prompt, chunk, cached */
    double replicas; /* given (0: rate-matched) */
    double dev;      /* devices per replica */
    double peak;     /* math peak of a device (mfu) */
    int scenario;    /* of the figures below (-1: none yet) */
    double S;        /* a prompt prefilled alone, s */
    double T;        /* a step's service: n_c t(np), s */
    double mu;       /* requests/s of one replica at full steps and links */
    double xfer;     /* KV transfer of one request, s */
    double exposed;  /* of it in TTFT */
} sv_pool;

/* The pool of the decode context c (whose point names it) for workload
 * w: its context, shapes and step; STATUS_INFEASIBLE_* when it does not
 * fit or divide. */
status_code sv_pool_prepare(const dt_ctx *c, const sv_load *w, sv_pool *o);
/* Its figures under scenario sc (the decode pool's KV kvd receives the
 * transfer); once per scenario. */
status_code sv_pool_at(const dt_ctx *c, const dt_kv *kvd, const sv_load *w, stack_scenario sc,
                       sv_pool *o);
/* The mean wait for a prefill server of x replicas at utilisation rho
 * (infinite at rho >= 1). */
double sv_pool_wait(const sv_pool *o, double x, double rho);

/* ---- prefill/decode disaggregation (disagg.c) */

/* The deployment under scenario sc: the point's system and task are the
 * decode pool (its step model k, workload w, KV kv), pf the prefill
 * pool; the figures into r (a band end: its iteration time). */
status_code sv_disagg(const dt_ctx *c, const sv_model *k, const sv_load *w, const dt_kv *kv,
                      sv_pool *pf, stack_scenario sc, result_t *r);

/* ---- the family (serve.c) */

/* A serving evaluation: the setup (llm/setup.c), its step model and
 * workload, built at the nominal facts, and a disaggregated point's
 * prefill pool. */
typedef struct sv_eval {
    dt_eval v;
    sv_model k;
    sv_load w;
    sv_pool pool; /* disaggregated: the prefill pool */
} sv_eval;

/* dt_family's prepare and time_at of serving (trace.c runs them too). */
status_code sv_serve_prepare(sv_eval *s, const point_t *p, result_t *r);
status_code sv_serve_at(sv_eval *s, stack_scenario sc, result_t *r);

extern const dt_family sv_family;

#endif
