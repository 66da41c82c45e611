/*
 * spec.h - sweep specifications: the axes of a design space.
 *
 * A spec is a libconfig file (configs/sweeps/) with these keys:
 *   name        label of the sweep (optional)
 *   fidelity    "detailed" (default) or "madmax"; the fidelity selects the
 *               catalogues: madmax models.cfg and systems.cfg, detailed
 *               detailed_models.cfg, detailed_systems.cfg and hardware.cfg
 *   models      list of catalogue names or inline model groups, or "all"
 *   systems     list of catalogue names or inline system groups, or "all"
 *               (optional when system_grid is given)
 *   system_grid list of groups generating systems from a catalogue base:
 *               { base = "dc_A_128"; nodes = [2, 16, 256];
 *                 devices_per_node = [8];           (default: the base's)
 *                 nic_scale = [0.5, 1.0, 2.0]; }    (default [1.0])
 *               each combination is a system named
 *               "BASE/NODESxDPN/nicSCALE" with devices = nodes x dpn and the
 *               NIC bandwidth scaled; one-node systems use intra-node
 *               bandwidth only (allreduce_intra_fraction = 1).
 *               Detailed fidelity: groups over hardware generations,
 *               { hardware = ["a100-80g", "h100-sxm-80g"];
 *                 nodes = [1, 8, 64];
 *                 devices_per_node = [8];   (default: the scale-up domain)
 *                 nic_gbps_per_device = [400.0]; }  (default: the hw's)
 *               each combination a system "HW/NODESxDPN" (+ "/nicG" when
 *               nic_gbps_per_device is given), devices = nodes x dpn, the
 *               scale-up domain dpn devices (topology as load_dsystem).
 *   tasks       list of task types ("pretrain", "finetune", "inference")
 *               or groups { type = "finetune"; name = "ft_emb";
 *               freeze_emb = true; freeze_dense = false;
 *               min_frozen_layer = 40; freeze_top_mlp = false;
 *               freeze_bot_mlp = false; } (freeze keys default to false,
 *               min_frozen_layer to the model's layers, capped at them).
 *               Detailed tasks take instead of freeze_dense and
 *               min_frozen_layer: frozen_layers = N (the first N layers
 *               frozen, capped at the model's), with freeze_emb,
 *               freeze_top_mlp, freeze_bot_mlp; and precision = "bf16"
 *               (default) / "fp16" / "fp8" / "tf32" / "fp32", and for
 *               inference prompt_tokens (default the model's seq_len) and
 *               decode_tokens (default 128).
 *   global_batch  array of global batch sizes (samples per step;
 *               detailed: sequences per iteration, or for inference the
 *               sequences decoded concurrently)
 *   strategies  "auto" (every candidate of the fidelity's auto set) or a
 *               list of groups { dense = "fsdp:node,ddp:rest";
 *               embedding = "mp:all"; } with degrees that are numbers or
 *               node / all / rest (see cost/autoplan.h); the detailed
 *               fidelity takes "auto" only (its candidates: detailed.c)
 *   chunk       ids per work chunk, 1 to 2^20 (default 4096; raised so
 *               that a sweep has at most 2^22 chunks); a rank buffers one
 *               chunk of rows
 * Every error is one line "FILE:LINE: ... (key 'k')". The spec owns its
 * axis arrays (freed by spec_free); it keeps the whole file text, which
 * sweep output files store verbatim.
 */
#ifndef MADSWEEP_SPEC_H
#define MADSWEEP_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "../cost/autoplan.h"
#include "../cost/eval.h"
#include "load.h"

#define SPEC_NAME_MAX 64
#define SPEC_CHUNK_DEFAULT 4096
#define SPEC_DECODE_TOKENS 128 /* detailed inference default */
#define SPEC_MAX_CHUNKS (INT64_C(1) << 22)
#define SPEC_CHUNK_MAX (INT64_C(1) << 20) /* rows buffered per rank */
/* Bounds of the spec's own integers (the catalogues' are load.c's):
 * devices of a generated system, tokens, layer indices. global_batch
 * elements are 1 to 2^40. */
#define SPEC_MAX_DEVICES (INT64_C(1) << 24)
#define SPEC_MAX_TOKENS (INT64_C(1) << 24)
#define SPEC_MAX_LAYERS (INT64_C(1) << 16)

typedef struct spec_task {
    char name[SPEC_NAME_MAX];
    task_kind kind;
    bool freeze_emb, freeze_dense, freeze_top_mlp, freeze_bot_mlp;
    int64_t min_frozen_layer; /* -1: the model's layer count */
    int64_t frozen_layers;    /* detailed finetune: leading layers frozen */
    int dtype;                /* detailed: hw_dtype of compute */
    int64_t prompt_tokens;    /* detailed inference (0: seq_len) */
    int64_t decode_tokens;    /* detailed inference */
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
    spec_task *tasks;
    int64_t ntasks;
    int64_t *batches;
    int64_t nbatches;
    bool strat_auto;
    autoplan_pair *strats; /* explicit strategies (NULL for auto) */
    int64_t nstrats;       /* explicit count, or the auto set's size */
    int64_t chunk;         /* as given (sweep.c may raise it) */
} spec;

/* Loads a spec; returns 0, or -1 with err set (s left empty). */
int spec_load(const char *path, const char *configs_dir, spec *s,
              load_err *err);

void spec_free(spec *s);

/* Text of strategy k: "dense | embedding" templates (madmax), or the
 * detailed candidate's description (detailed_strategy_text). */
int spec_strategy_text(const spec *s, int64_t k, char *buf, size_t size);

#endif
