/*
 * task.c - task kinds and the replication/sharding factors of plans.
 */
#include "task.h"

#include <string.h>

static const char *const task_names[TASK_NKINDS] = {"pretrain", "finetune",
                                                    "inference"};

const char *task_kind_name(task_kind k)
{
    return (k >= 0 && k < TASK_NKINDS) ? task_names[k] : "?";
}

int task_kind_parse(const char *s)
{
    for (int i = 0; i < TASK_NKINDS; i++)
        if (strcmp(s, task_names[i]) == 0)
            return i;
    return -1;
}

void task_factors_of(const task_t *t, task_factors *f)
{
    f->dense_duplicate = plan_degree_of(&t->dense, PLAN_DDP) *
                         plan_degree_of(&t->dense, PLAN_FSDP);
    f->dense_shard = plan_degree_of(&t->dense, PLAN_FSDP) *
                     plan_degree_of(&t->dense, PLAN_TP);
    f->emb_duplicate = plan_degree_of(&t->emb, PLAN_DDP);
    f->emb_shard = plan_degree_of(&t->emb, PLAN_MP);
    f->global_batch_dense = t->local_batch_dense * f->dense_duplicate;
    f->global_batch_emb = t->local_batch_emb * f->emb_duplicate;
}
