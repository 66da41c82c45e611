/*
 * spec.h (worker) - a loaded sweep specification as plain data: the axis
 * values of a design space, what the space, the worker loop and the
 * output file read. Loading it from libconfig is the driver's job
 * (driver/sweep/spec_load.h documents the file format and declares spec_load()).
 * No libconfig, MPI or HDF5 here; the spec owns its arrays (spec_free).
 */
#ifndef MADSWEEP_WORKER_SPEC_H
#define MADSWEEP_WORKER_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cost/autoplan.h"
#include "../cost/detailed.h"
#include "../cost/eval.h"
#include "sources.h"

#define SPEC_NAME_MAX 64
#define SPEC_CHUNK_DEFAULT 4096
#define SPEC_MAX_CHUNKS (INT64_C(1) << 22)
#define SPEC_CHUNK_MAX (INT64_C(1) << 20) /* rows buffered per rank */

/* What a sweep keeps of its points (spec key `keep`, driver/sweep/spec_load.h):
 * every row (SPEC_KEEP_ALL), the rows with status ok (SPEC_KEEP_FEASIBLE),
 * the `top` best points by one figure per group (SPEC_KEEP_TOP), or the
 * Pareto frontier over 2..SPEC_KEEP_FIGS figures per group
 * (SPEC_KEEP_PARETO); ranked points are feasible ones. Groups are keys:
 * the axes (same numbers as space_axis) and figures of the system. */
typedef enum spec_keep_mode {
    SPEC_KEEP_ALL = 0,
    SPEC_KEEP_FEASIBLE = 1,
    SPEC_KEEP_TOP = 2,
    SPEC_KEEP_PARETO = 3
} spec_keep_mode;

typedef enum spec_key {
    SPEC_KEY_MODEL = 0, SPEC_KEY_SYSTEM, SPEC_KEY_TASK, SPEC_KEY_BATCH,
    SPEC_KEY_STRATEGY, SPEC_KEY_STACK, SPEC_KEY_PARALLEL, /* the axes, as space_axis */
    SPEC_KEY_DEVICES,  /* the system's device count */
    SPEC_KEY_NODES,    /* the system's node count */
    SPEC_KEY_HARDWARE, /* detailed: the system's hardware generation */
    SPEC_NKEYS
} spec_key;

#define SPEC_KEEP_FIGS 4
#define SPEC_KEEP_GROUP SPEC_NKEYS

typedef struct spec_keep {
    spec_keep_mode mode;
    bool feasible;           /* stated (implied by top and pareto) */
    int64_t top;             /* K (SPEC_KEEP_TOP) */
    int nfig;                /* figures ranked: 1 (top) or 2.. (pareto) */
    int fig[SPEC_KEEP_FIGS]; /* indices into result_fields[] */
    int ngroup;
    int group[SPEC_KEEP_GROUP]; /* spec_key, in the order given */
} spec_keep;

/* Name of a key ("model", ..., "global_batch", "strategy", "stack",
 * "devices", "nodes", "hardware"); parse accepts "batch" for the batch
 * axis and returns -1 when unknown. */
const char *spec_key_name(spec_key k);
int spec_key_parse(const char *name);

/* One line describing the keep mode ("all", "top 3 by tokens_per_s per
 * model,task", ...), stored in sweep files. */
int spec_keep_text(const spec_keep *k, char *buf, size_t size);

#define SPEC_SCALE_MAX 12 /* hardware keys one spec scales */
#define SPEC_SCALE_KEY 32 /* longest hardware key name, with its NUL */

typedef struct spec_task {
    char name[SPEC_NAME_MAX];
    task_kind kind;
    bool freeze_emb, freeze_dense, freeze_top_mlp, freeze_bot_mlp;
    int64_t min_frozen_layer; /* -1: the model's layer count */
    int64_t frozen_layers;    /* detailed finetune: leading layers frozen */
    int dtype;                /* detailed: hw_dtype of compute */
    int64_t prompt_tokens;    /* detailed inference (0: seq_len) */
    int64_t decode_tokens;    /* detailed inference */
    /* detailed inference, serving: requests in flight (0: the batch
     * axis; TASK_CONC_MAX, TASK_CONC_SLA) and the SLA (0: none) */
    int64_t concurrency;
    double ttft_max_s, tpot_max_s;
    /* detailed inference: the engine as launched (task.h: max_seqs,
     * token_budget; 0 the stack's), the client's rounds, the front end */
    int64_t max_seqs, token_budget, rounds;
    int front_end;
    /* detailed inference: a disaggregated prefill pool (`prefill = {
     * ... }`; prefill.on false: colocated). prefill_hw: the group names
     * its hardware (prefill.system derived at load); else each point's
     * system lends its hardware and the pool is derived per cell */
    point_prefill prefill;
    bool prefill_hw;
} spec_task;

typedef struct spec {
    char name[SPEC_NAME_MAX];
    char *text; /* the file, verbatim */
    eval_fidelity fidelity;
    const eval_ops *ops;
    model_t *models;
    int64_t nmodels;
    cluster_t *systems;       /* detailed: mirrors of dsystems (name, sizes) */
    topo_system_t *dsystems;  /* detailed fidelity only, else NULL */
    int64_t nsystems;
    /* hardware figures scaled as axes (system_grid `scale`, detailed):
     * the keys (hardware keys of `madsweep keys`), and per system its
     * factor on each, scale[i * SPEC_SCALE_MAX + k] (1 where a system
     * does not scale key k), and scale_fig the figure itself in the
     * same layout; NULL when nscale is 0 */
    char scale_keys[SPEC_SCALE_MAX][SPEC_SCALE_KEY];
    int nscale;
    double *scale, *scale_fig;
    stack_desc *stacks;       /* software stacks (madmax: one entry "none") */
    int64_t nstacks;
    spec_task *tasks;
    int64_t ntasks;
    int64_t *batches;
    unsigned *batch_kinds; /* per batch: 1 << model_kind of the kinds it applies to */
    int64_t nbatches;
    bool strat_auto;
    autoplan_pair *strats; /* explicit strategies (NULL for auto and detailed) */
    detailed_template *dstrats; /* explicit detailed strategies (NULL otherwise) */
    int64_t nstrats;       /* explicit count, or the auto set's size (detailed:
                              its options per degree tuple) */
    int64_t npar;          /* detailed auto: degree tuples; else 1 */
    int64_t chunk;         /* as given (sweep.c may raise it) */
    spec_keep keep;
    bool elasticities;     /* detailed: rows carry elasticity_* (cost/elastic.h) */
    sources files;         /* catalogues and includes read (provenance) */
} spec;

void spec_free(spec *s);

/* Text of strategy k (detailed auto: the candidate, parallel * nstrats +
 * strategy): "dense | embedding" templates (madmax), or the detailed
 * candidate's description (detailed_strategy_text). */
int spec_strategy_text(const spec *s, int64_t k, char *buf, size_t size);

#endif
