/*
 * task.h - what is run on the system: the task type, per-component plans,
 * batch sizes and (for fine-tuning) which parts are frozen.
 *
 * Components: the dense part (DLRM MLPs or LLM transformer layers) and the
 * embeddings. Local batches are per device and per component, as in the
 * MAD-Max reference; the global batch follows from the plans' replication
 * factors and must agree between components.
 */
#ifndef MADSWEEP_TASK_H
#define MADSWEEP_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

typedef enum task_kind {
    TASK_PRETRAIN = 0,
    TASK_FINETUNE = 1,
    TASK_INFERENCE = 2,
    TASK_NKINDS = 3
} task_kind;

typedef struct task_t {
    task_kind kind;
    plan_t dense;
    plan_t emb;
    int64_t local_batch_dense; /* samples per device, dense component */
    int64_t local_batch_emb;   /* samples per device, embeddings */

    /* fine-tuning: frozen parts */
    bool freeze_emb;
    bool freeze_dense;        /* LLM: all transformer layers */
    bool freeze_top_mlp;      /* DLRM */
    bool freeze_bot_mlp;      /* DLRM */
    int64_t min_frozen_layer; /* LLM: layers below it get gradients */
} task_t;

/* Factors a plan implies, as the reference's get_parallelization_factors:
 * duplicate = product of replicating degrees (ddp, fsdp), shard = product
 * of sharding degrees (fsdp, tp for dense; mp for embeddings). */
typedef struct task_factors {
    int64_t dense_duplicate, dense_shard;
    int64_t emb_duplicate, emb_shard;
    int64_t global_batch_dense, global_batch_emb;
} task_factors;

void task_factors_of(const task_t *t, task_factors *f);

/* "pretrain" / "finetune" / "inference"; parse returns -1 if unknown. */
const char *task_kind_name(task_kind k);
int task_kind_parse(const char *s);

#endif
