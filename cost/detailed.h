/*
 * detailed.h - the detailed fidelity: a cost model meant to predict real
 * training and inference runs (cost/detailed/: a folder per family and
 * floor, drawn in cost/detailed/core/core.h).
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
/* "delayed", "current", "blockwise", "mxfp8", "nvfp4" -> task_fp8_recipe
 * (1..5); -1 if unknown. */
int detailed_fp8_recipe_parse(const char *s);

/* Forward FLOPs per sequence of the whole model (matrix multiplies of
 * all layers, attention scores and values, vocabulary projection), as
 * counted for model FLOPs utilization; exposed for tests. */
double detailed_model_flops(const model_t *m, bool causal_half);

/* Parameters of one layer's attention projections (grouped-query, or
 * multi-head latent attention when model.d.kv_lora_rank > 0). */
double detailed_attn_params(const model_t *m);

/* Layers of the model's second attention kind (sliding window or Gated
 * DeltaNet; 0 without one): those i with (i + 1) % full_attention_interval
 * != 0 (docs/model.md, "Attention kinds"). */
int64_t detailed_alt_layers(const model_t *m);

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
 * innermost first); detailed_option_text: every option, the sweep's
 * strategy axis without the degrees, "zero1 sel 1f1b-int ovl tcdp sp
 * vppauto mb2" (a DLRM candidate: its strategy text). Return snprintf's
 * result. */
int detailed_strategy_text(const task_detailed_t *t, char *buf, size_t size);
int detailed_parallel_text(const task_detailed_t *t, char *buf, size_t size);
int detailed_options_text(const task_detailed_t *t, char *buf, size_t size);
int detailed_option_text(const task_detailed_t *t, char *buf, size_t size);

/* DLRM (model kind dlrm): bottom MLP, embedding tables pooled per
 * sample, dot interaction of the tables + 1 vectors, top MLP; MLPs data
 * parallel over all devices, tables sharded by task.emb_sharding.
 * "table" / "row" / "column" -> TASK_EMB_*, "rowwise_adagrad" / "sgd" /
 * "adagrad" / "adam" -> TASK_EMB_OPT_*; -1 when unknown. */
int detailed_emb_sharding_parse(const char *s);
int detailed_emb_optimizer_parse(const char *s);

/* The embedding shard on the busiest device for a global batch. */
typedef struct detailed_dlrm_emb {
    double shards;       /* table shards held (row-wise: one per table) */
    double width;        /* columns per shard */
    double rows;         /* rows per shard */
    double lookups;      /* rows gathered per iteration */
    double outputs;      /* pooled vectors (of `width`) produced */
    double id_copies;    /* copies of a sample's ids sent (column shards) */
    double state_values; /* sparse optimizer values per row */
} detailed_dlrm_emb;

/* Table-wise: ceil(tables / devices) whole tables, each looked up for
 * all samples. Row-wise: every table's ceil(rows / devices) rows, hit by
 * pooling / devices of a table's lookups per sample (uniform hashing),
 * producing partial sums of every table for every sample. Column-wise:
 * each table cut into c column shards (emb_column_shards, default the
 * smallest divisor of emb_dim with tables * c >= devices), placed whole
 * as in table-wise. */
void detailed_dlrm_shard(const model_t *m, const task_detailed_t *t, int64_t devices,
                         double batch, detailed_dlrm_emb *s);
int64_t detailed_dlrm_column_shards(const model_t *m, const task_detailed_t *t,
                                    int64_t devices);

/* Parameters of a DLRM: bottom MLP, top MLP (weights and biases) and
 * embedding tables. */
void detailed_dlrm_params(const model_t *m, double *bot, double *top, double *emb);

/* The whole iteration as events (cost/detailed/trace.c), for trace
 * viewers: per pipeline stage a compute track (forward, recompute,
 * backward of every micro-batch and chunk, optimizer; inference: prefill
 * and decode steps; the gaps are the bubbles) and one track per kind of
 * communication, with the bytes per rank and group size of each
 * collective. Events of a track come in start order. */
typedef enum detailed_track {
    DETAILED_TRACK_COMPUTE = 0,
    DETAILED_TRACK_TP = 1,
    DETAILED_TRACK_CP = 2,
    DETAILED_TRACK_EP = 3,
    DETAILED_TRACK_PP = 4,
    DETAILED_TRACK_DP = 5,
    DETAILED_NTRACKS = 6
} detailed_track;

typedef struct detailed_event {
    int64_t stage;       /* pipeline stage */
    int track;           /* detailed_track */
    const char *name;    /* static text: "forward", "all-reduce (tp)", ... */
    int64_t micro_batch; /* training: micro-batch; inference: decode step; -1 none */
    int64_t chunk;       /* virtual stage on the device; -1 none */
    double start_s, dur_s;
    double bytes;        /* communication: bytes per rank; 0 for compute */
    int64_t group;       /* communication: ranks in the group; 0 for compute */
} detailed_event;

typedef void (*detailed_event_fn)(void *ctx, const detailed_event *ev);

/* Lays out point p's iteration as the evaluation schedules it and calls
 * fn for every event; *end_s receives the makespan (the evaluated
 * iteration time: see trace.c). STATUS_OK, or why no trace (infeasible,
 * invalid, a DLRM, STATUS_NOMEM). */
status_code detailed_trace(const point_t *p, detailed_event_fn fn, void *ctx, double *end_s);

/* Candidate i of the `auto` set as a training strategy with dp = 0 (the
 * rest of the devices); returns 0, 1 when the candidate is refused on
 * every system (a duplicate or a rule broken), or -1 when i is out of
 * range. */
int detailed_auto_candidate(int64_t i, task_detailed_t *t);

/* An explicit strategy of a sweep: a detailed task's strategy (dp 0: the
 * rest of the devices) and which defaults the point's stack gives (the
 * ZeRO stage, sequence parallelism with tp > 1, etp, the chunk count of
 * an "interleaved" schedule without vpp). detailed_template_apply()
 * writes it with the global batch into p->task as dt_auto_apply() does a
 * candidate: STATUS_INVALID_STRATEGY for a DLRM model or a ZeRO stage the
 * stack does not run, STATUS_INVALID_PRODUCT when the degrees do not
 * divide the devices, STATUS_INVALID_BATCH_MISMATCH when the batch does
 * not split into micro-batches over dp; the fidelity's check does the
 * rest. */
typedef struct detailed_template {
    task_detailed_t t;
    bool zero_set, sp_set, etp_set, vpp_stack;
} detailed_template;
status_code detailed_template_apply(point_t *p, const detailed_template *s,
                                    int64_t global_batch);
/* Its text as detailed_strategy_text's, "zero*" and "sp*" where the
 * stack decides. */
int detailed_template_text(const detailed_template *s, char *buf, size_t size);

/* The two factors of the `auto` set: candidate i is degree tuple
 * i / options (tp, pp, cp, ep: the sweep's `parallel` axis) with option
 * i % options (the rest: its `strategy` axis); tuples x options is
 * eval_ops.auto_count(). */
void detailed_auto_factors(int64_t *tuples, int64_t *options);
/* Option o of the set on a tuple where each can apply (tp 2, pp 2; the
 * DLRM options on the first): 0, 1 when refused everywhere, -1 out of
 * range. */
int detailed_auto_option(int64_t o, task_detailed_t *t);

/* Valid-only enumeration of the `auto` set for one sweep cell (model,
 * stack, devices, task type, global batch): the candidates that apply,
 * in a fixed order (degree tuples tp, pp, cp, ep with tp innermost, then
 * their options), without dead entries. A candidate is valid exactly when
 * eval_ops.auto_apply() returns STATUS_OK for it; every other candidate
 * is counted under the code auto_apply() gives it (invalid:strategy,
 * invalid:product, infeasible:shape, invalid:batch_mismatch).
 * detailed_auto_shape_of() computes once per (model, stack) which degrees
 * divide the model and which pp x vpp splits fit its layers (p: model,
 * stack and task type set); detailed_auto_cell_init() lists a cell's
 * candidates (`domain`: the system's scale-up domain) by degree tuple (O(tuples), no candidate-by-candidate pass),
 * adds the rejected ones to rejected[code] (array of 256, or NULL) and
 * returns their number; detailed_auto_cell_candidate() is the index of
 * the r-th valid candidate (*hint, when not NULL, caches the tuple for
 * sequential r; start it at 0). Plain values, no allocation. */
#define DETAILED_AUTO_LISTS 7  /* (vpp, schedule), zero, recompute, micro-batch,
                                  layout, overlap, sequence parallelism */
#define DETAILED_AUTO_TUPLES 1008 /* tp x pp x cp x ep: 7 x 12 x 6 x 2 */
typedef struct detailed_auto_shape {
    bool dlrm;
    int64_t experts;
    bool tp_ok[7], cp_ok[6], ep_ok[2], split_ok[12]; /* split_ok: per pp */
    bool zero_ok[4]; /* ZeRO stages the stack runs */
} detailed_auto_shape;
typedef struct detailed_auto_tuple {
    int64_t first;       /* rank of its first candidate in the cell */
    uint8_t tp, pp, cp, ep; /* digits of the degrees */
    uint8_t n[DETAILED_AUTO_LISTS];      /* valid entries per option list */
    uint8_t opt[DETAILED_AUTO_LISTS][4]; /* their digits */
} detailed_auto_tuple;
typedef struct detailed_auto_cell {
    int64_t n;
    int ntuples;
    bool dlrm;
    detailed_auto_tuple t[DETAILED_AUTO_TUPLES];
} detailed_auto_cell;
void detailed_auto_shape_of(const point_t *p, detailed_auto_shape *sh);
int64_t detailed_auto_cell_init(const detailed_auto_shape *sh, int64_t devices, int64_t domain,
                                bool inference, int64_t global_batch,
                                detailed_auto_cell *cell, int64_t *rejected);
int64_t detailed_auto_cell_candidate(const detailed_auto_cell *cell, int64_t r, int *hint);

#endif
