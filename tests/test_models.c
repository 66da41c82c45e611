/*
 * test_models.c - the shipped model catalogue (configs/detailed_models.cfg):
 * every entry loads, and the entries taken from published config.json
 * files give their model cards' parameter counts.
 */
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../driver/load/load.h"
#include "unit.h"

/* A model card's parameter count, as printed (billions, to its last
 * digit), and what it counts. */
typedef struct card {
    const char *name;
    double billions;   /* the card's figure */
    double digit;      /* its last printed digit: tolerance half of it */
    int count;         /* 0 all, 1 without embedding and head, 2 active per token */
    const char *source;
} card;

static const card cards[] = {
    {"llama3.1-8b", 8.03, 0.01, 0, "meta-llama/Llama-3.1-8B card: 8.03B"},
    {"llama3.1-70b", 70.6, 0.1, 0, "meta-llama/Llama-3.1-70B card: 70.6B"},
    {"llama3.1-405b", 406.0, 1.0, 0, "meta-llama/Llama-3.1-405B card: 406B"},
    {"llama3.3-70b", 70.6, 0.1, 0, "meta-llama/Llama-3.3-70B-Instruct card: 70.6B"},
    {"mixtral-8x22b", 141.0, 1.0, 0, "Mistral AI, Mixtral 8x22B announcement: 141B"},
    {"mixtral-8x22b", 39.0, 1.0, 2, "the same: 39B active"},
    {"qwen3-8b", 8.2, 0.1, 0, "Qwen/Qwen3-8B card: 8.2B"},
    {"qwen3-8b", 6.95, 0.01, 1, "Qwen/Qwen3-8B card: 6.95B non-embedding"},
    {"qwen3-14b", 14.8, 0.1, 0, "Qwen/Qwen3-14B card: 14.8B"},
    {"qwen3-14b", 13.2, 0.1, 1, "Qwen/Qwen3-14B card: 13.2B non-embedding"},
    {"qwen3-32b", 32.8, 0.1, 0, "Qwen/Qwen3-32B card: 32.8B"},
    /* GPT-J: 6,053,381,344 per its card; the 3 M of biases are not modelled */
    {"gpt-j-6b", 6.05, 0.01, 0, "EleutherAI/gpt-j-6b card: 6.05B"},
};

/* Parameters of `m` as card `c` counts them, in billions. */
static double counted(const model_t *m, const card *c)
{
    task_detailed_t t;
    memset(&t, 0, sizeof t);
    t.tp = t.pp = t.dp = 1;
    double total = 0, dev = 0;
    detailed_params(m, &t, &total, &dev);
    double h = (double)m->hidden;
    if (c->count == 1) /* word embedding and the untied output head */
        total -= 2.0 * (double)m->vocab * h;
    else if (c->count == 2) /* the experts a token does not visit (SwiGLU: 3 matrices) */
        total -= (double)(m->d.experts - m->d.top_k) * (double)m->layers * 3.0 * h *
                 (double)m->d.expert_ffn;
    return total / 1e9;
}

static void test_catalogue(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/detailed_models.cfg", unit_configs());
    config_t cfg;
    load_err err;
    CU_ASSERT_EQUAL_FATAL(load_open(&cfg, path, unit_configs(), &err), 0);
    const config_setting_t *list = config_lookup(&cfg, "models");
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    int seen[sizeof cards / sizeof cards[0]] = {0};
    for (int i = 0; i < config_setting_length(list); i++) {
        model_t m;
        int rc = load_model_detailed(config_setting_get_elem(list, (unsigned)i), &m, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.text);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        for (size_t k = 0; k < sizeof cards / sizeof cards[0]; k++) {
            if (strcmp(cards[k].name, m.name) != 0)
                continue;
            seen[k] = 1;
            double b = counted(&m, &cards[k]);
            int ok = fabs(b - cards[k].billions) <= 0.5 * cards[k].digit;
            if (!ok)
                fprintf(stderr, "\n%s: %.3fB, %s\n", m.name, b, cards[k].source);
            CU_ASSERT(ok);
        }
    }
    for (size_t k = 0; k < sizeof cards / sizeof cards[0]; k++) {
        if (!seen[k])
            fprintf(stderr, "\n%s: not in the catalogue\n", cards[k].name);
        CU_ASSERT(seen[k]);
    }
    config_destroy(&cfg);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("models", NULL, NULL);
    CU_add_test(s, "model catalogue: model card parameter counts", test_catalogue);
    return unit_run();
}
