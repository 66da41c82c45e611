/*
 * detailed.h - the detailed fidelity: a cost model meant to predict real
 * training and inference runs (see detailed.c for the formulas).
 *
 * Inputs: model_t (LLM figures plus model.d), task_t.detailed (degrees,
 * batches, recompute, schedule, precision), point_t.system (hardware
 * generation and topology). Optional task figures left 0 take these
 * documented defaults: cp = ep = vpp = 1, micro_batch = 1,
 * grad_accum = global_batch / (micro_batch * dp) (global_batch =
 * micro_batch * dp * grad_accum when it is 0), capacity_factor = 1.0,
 * grad_reduce_bytes = bytes of the compute dtype, prompt_tokens =
 * seq_len, top_k = 2 and expert_ffn = ffn for MoE models, layout
 * tp-cp-dp-pp, shard_degree = dp * cp (ZeRO shards over all replicas;
 * a smaller degree is hybrid sharding: shard inside, all-reduce gradients
 * across the dp * cp / shard_degree replicas).
 */
#ifndef MADSWEEP_DETAILED_H
#define MADSWEEP_DETAILED_H

#include "eval.h"

extern const eval_ops detailed_ops;

/* Layouts: the order in which tp, cp, dp and pp are laid over the devices,
 * innermost first, written "tp-cp-dp-pp" (the default, Megatron's), e.g.
 * "tp-cp-pp-dp" keeps pipeline stages inside a pod and data parallelism
 * outermost. The stride of a dimension's groups is the product of the
 * degrees inside it; collectives are costed on the topology levels those
 * groups span. Encoded as 1 + the permutation's index (0 = default). */
int detailed_layout_parse(const char *s);

/* Parsers for the detailed enums; -1 when unknown. */
int detailed_arch_parse(const char *s);
int detailed_position_parse(const char *s);
int detailed_recompute_parse(const char *s);
int detailed_schedule_parse(const char *s);
int detailed_attention_parse(const char *s);

/* Forward FLOPs per sequence of the whole model (matrix multiplies of
 * all layers, attention scores and values, vocabulary projection), as
 * counted for model FLOPs utilization; exposed for tests. */
double detailed_model_flops(const model_t *m, bool causal_half);

/* Megatron-style per-iteration FLOPs of Narayanan et al. 2021, eq. (3)
 * (with full recomputation): 96 B s l h^2 (1 + s/6h + V/16lh). */
double detailed_megatron_flops(int64_t batch, int64_t seq, int64_t layers,
                               int64_t hidden, int64_t vocab);

/* Pipeline bubble fraction of 1F1B with m micro-batches on p stages and
 * v virtual stages per device: (p-1)/(v m + p - 1). */
double detailed_bubble_fraction(int64_t p, int64_t m, int64_t v);

/* Model-state bytes per device with mixed-precision Adam (Rajbhandari et
 * al. 2020): params 2, grads 2, optimizer 12 bytes per parameter, the
 * optimizer sharded over n from stage 1, grads from 2, params from 3. */
double detailed_zero_bytes(double params, int64_t stage, int64_t n);

/* Parameters of the model: total, and per device for a task's degrees
 * (out: total, per_device). */
void detailed_params(const model_t *m, const task_detailed_t *t, double *total,
                     double *per_device);

/* Texts of a strategy, derived from its fields (dp 0 prints "dp*", the
 * rest of the devices). detailed_strategy_text: the whole strategy, e.g.
 * "tp8 pp8 vpp5 1f1b-int dp16 zero1 sp sel cp1 ep1 mb1 tp-cp-dp-pp ovl";
 * detailed_parallel_text: degrees, "tp8 sp pp8 v5 dp16 cp1 ep1" (at most
 * 31 characters for degrees below 10^5); detailed_options_text: the rest
 * but the micro-batch, "zero1 sel 1f1b-int ovl tcdp" (layout by initials,
 * innermost first). Return snprintf's result. */
int detailed_strategy_text(const task_detailed_t *t, char *buf, size_t size);
int detailed_parallel_text(const task_detailed_t *t, char *buf, size_t size);
int detailed_options_text(const task_detailed_t *t, char *buf, size_t size);

/* Candidate i of the `auto` set as a training strategy with dp = 0 (the
 * rest of the devices); returns 0, 1 when the candidate is refused on
 * every system (a duplicate or a rule broken), or -1 when i is out of
 * range. */
int detailed_auto_candidate(int64_t i, task_detailed_t *t);

#endif
