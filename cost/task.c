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

int task_weight_parse(const char *s)
{
    static const char *const names[] = {"bf16", "fp16", "fp8", "int8", "int4", "fp4"};
    static const int codes[] = {TASK_W_BF16, TASK_W_BF16, TASK_W_FP8, TASK_W_INT8, TASK_W_INT4,
                                TASK_W_FP4};
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return codes[i];
    return -1;
}

const char *task_weight_name(int w)
{
    static const char *const names[] = {NULL, "bf16", "fp8", "int8", "int4", "fp4"};
    return w > 0 && w <= TASK_W_FP4 ? names[w] : NULL;
}

double task_weight_bytes(int w)
{
    switch (w) {
    case TASK_W_BF16:
        return 2.0;
    case TASK_W_FP8:
    case TASK_W_INT8:
        return 1.0;
    case TASK_W_INT4:
        return 0.5 + 2.0 / 128.0; /* AWQ/GPTQ: an FP16 scale per group of 128 */
    case TASK_W_FP4:
        return 0.5 + 1.0 / 16.0; /* NVFP4: an FP8 (E4M3) scale per block of 16 */
    default:
        return 0.0;
    }
}
