/*
 * names.c - names of the detailed fidelity's enums, layouts and
 * strategies: parsers (-1 when unknown) and the texts of a strategy
 * (detailed.h: detailed_strategy_text and friends).
 * Invariant: pure functions of their arguments; an unknown name parses
 * to -1, never to a guess.
 */
#include "core.h"

#include <stdio.h>
#include <string.h>

static int dt_names_lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int detailed_arch_parse(const char *s)
{
    static const char *const n[MODEL_NARCHS] = {"gpt", "llama", "mpt", "bloom",
                                                "vit", "mixtral", "deepseek"};
    return dt_names_lookup(s, n, MODEL_NARCHS);
}

int detailed_position_parse(const char *s)
{
    static const char *const n[] = {"learned", "rope", "alibi", "none"};
    return dt_names_lookup(s, n, 4);
}

int detailed_recompute_parse(const char *s)
{
    static const char *const n[] = {"none", "selective", "full", "auto"};
    return dt_names_lookup(s, n, 4);
}

int detailed_schedule_parse(const char *s)
{
    static const char *const n[] = {"1f1b", "gpipe"};
    int v = dt_names_lookup(s, n, 2);
    if (v < 0 && strcmp(s, "interleaved") == 0)
        v = TASK_SCHEDULE_1F1B; /* interleaving is vpp > 1 */
    return v;
}

int detailed_layout_parse(const char *s)
{
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    for (int code = 0; code < 24; code++) {
        int order[4];
        dt_layout_order(code, order);
        char buf[16];
        snprintf(buf, sizeof buf, "%s-%s-%s-%s", dims[order[0]], dims[order[1]],
                 dims[order[2]], dims[order[3]]);
        if (strcmp(buf, s) == 0)
            return code == 0 ? 0 : code + 1; /* tp-cp-dp-pp is permutation 0 */
    }
    return -1;
}

int detailed_attention_parse(const char *s)
{
    static const char *const n[] = {"flash", "unfused", "tuned"};
    return dt_names_lookup(s, n, 3);
}

int detailed_fp8_recipe_parse(const char *s)
{
    static const char *const n[] = {"delayed", "current", "blockwise", "mxfp8", "nvfp4"};
    int v = dt_names_lookup(s, n, 5);
    return v < 0 ? -1 : v + 1;
}

int detailed_emb_sharding_parse(const char *s)
{
    static const char *const n[] = {"table", "row", "column", "auto"};
    int v = dt_names_lookup(s, n, 4);
    return v < 0 ? -1 : v + 1;
}

int detailed_emb_optimizer_parse(const char *s)
{
    static const char *const n[] = {"rowwise_adagrad", "sgd", "adagrad", "adam"};
    return dt_names_lookup(s, n, 4);
}

static const char *dt_names_sharding(int s)
{
    return s == TASK_EMB_ROW      ? "row"
           : s == TASK_EMB_COLUMN ? "column"
           : s == TASK_EMB_AUTO   ? "auto"
                                  : "table";
}

static const char *dt_names_emb_optimizer(int o)
{
    static const char *const n[] = {"rowwise_adagrad", "sgd", "adagrad", "adam"};
    return o >= 0 && o < 4 ? n[o] : "?";
}

static void dt_names_layout_text(int layout, bool letters, char *buf, size_t size)
{
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    int order[4];
    dt_layout_order(layout > 0 ? layout - 1 : 0, order);
    if (letters)
        snprintf(buf, size, "%c%c%c%c", dims[order[0]][0], dims[order[1]][0],
                 dims[order[2]][0], dims[order[3]][0]);
    else
        snprintf(buf, size, "%s-%s-%s-%s", dims[order[0]], dims[order[1]],
                 dims[order[2]], dims[order[3]]);
}

static const char *dt_names_recompute_short(task_recompute r)
{
    return r == TASK_RECOMPUTE_FULL        ? "full"
           : r == TASK_RECOMPUTE_SELECTIVE ? "sel"
           : r == TASK_RECOMPUTE_AUTO      ? "auto"
                                           : "none";
}

static const char *dt_names_schedule_text(const task_detailed_t *t)
{
    return t->schedule == TASK_SCHEDULE_GPIPE ? "gpipe"
           : t->vpp > 1 || t->vpp_auto        ? "1f1b-int"
                                              : "1f1b";
}

int detailed_parallel_text(const task_detailed_t *t, char *buf, size_t size)
{
    char dp[24], v[24] = "";
    if (t->dp > 0)
        snprintf(dp, sizeof dp, "dp%lld", (long long)t->dp);
    else
        snprintf(dp, sizeof dp, "dp*");
    if (t->emb_sharding != TASK_EMB_NONE)
        return snprintf(buf, size, "%s emb-%s", dp, dt_names_sharding(t->emb_sharding));
    if (t->vpp_auto)
        snprintf(v, sizeof v, " vauto");
    else if (t->vpp > 1)
        snprintf(v, sizeof v, " v%lld", (long long)t->vpp);
    return snprintf(buf, size, "tp%lld%s pp%lld%s %s cp%lld ep%lld",
                    (long long)(t->tp > 0 ? t->tp : 1),
                    t->sequence_parallel && t->tp > 1 ? " sp" : "",
                    (long long)(t->pp > 0 ? t->pp : 1), v, dp,
                    (long long)(t->cp > 0 ? t->cp : 1),
                    (long long)(t->ep > 0 ? t->ep : 1));
}

int detailed_options_text(const task_detailed_t *t, char *buf, size_t size)
{
    char lay[8];
    if (t->emb_sharding != TASK_EMB_NONE)
        return snprintf(buf, size, "%s %s", dt_names_emb_optimizer(t->emb_optimizer),
                        t->overlap_dp_comm ? "ovl" : "noovl");
    dt_names_layout_text(t->layout, true, lay, sizeof lay);
    return snprintf(buf, size, "zero%lld %s %s %s %s", (long long)t->zero_stage,
                    dt_names_recompute_short(t->recompute), dt_names_schedule_text(t),
                    t->overlap_dp_comm ? "ovl" : "noovl", lay);
}

int detailed_option_text(const task_detailed_t *t, char *buf, size_t size)
{
    if (t->emb_sharding != TASK_EMB_NONE)
        return detailed_strategy_text(t, buf, size);
    char opt[PLAN_TEXT_MAX], v[24];
    detailed_options_text(t, opt, sizeof opt);
    if (t->vpp_auto)
        snprintf(v, sizeof v, "auto");
    else
        snprintf(v, sizeof v, "%lld", (long long)(t->vpp > 0 ? t->vpp : 1));
    return snprintf(buf, size, "%s %s vpp%s mb%lld", opt, t->sequence_parallel ? "sp" : "nosp",
                    v, (long long)(t->micro_batch > 0 ? t->micro_batch : 1));
}

int detailed_template_text(const detailed_template *s, char *buf, size_t size)
{
    char full[2 * PLAN_TEXT_MAX];
    detailed_strategy_text(&s->t, full, sizeof full);
    /* the words the stack decides: "zero*", "sp*" */
    size_t n = 0;
    if (size > 0)
        buf[0] = '\0';
    for (char *w = full, *end; *w; w = end) {
        end = strchr(w, ' ');
        if (end)
            *end++ = '\0';
        else
            end = w + strlen(w);
        const char *out = w;
        if (!s->zero_set && strncmp(w, "zero", 4) == 0)
            out = "zero*";
        else if (!s->sp_set && (strcmp(w, "sp") == 0 || strcmp(w, "nosp") == 0))
            out = "sp*";
        if (n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " " : "", out);
    }
    return (int)n;
}

int detailed_strategy_text(const task_detailed_t *t, char *buf, size_t size)
{
    char dp[24], lay[16];
    if (t->dp > 0)
        snprintf(dp, sizeof dp, "dp%lld", (long long)t->dp);
    else
        snprintf(dp, sizeof dp, "dp*");
    if (t->emb_sharding != TASK_EMB_NONE)
        return snprintf(buf, size, "%s emb-%s %s %s", dp,
                        dt_names_sharding(t->emb_sharding), dt_names_emb_optimizer(t->emb_optimizer),
                        t->overlap_dp_comm ? "ovl" : "noovl");
    dt_names_layout_text(t->layout, false, lay, sizeof lay);
    char mb[24], v[24];
    if (t->vpp_auto)
        snprintf(v, sizeof v, "auto");
    else
        snprintf(v, sizeof v, "%lld", (long long)(t->vpp > 0 ? t->vpp : 1));
    if (t->micro_batch_auto)
        snprintf(mb, sizeof mb, "auto");
    else
        snprintf(mb, sizeof mb, "%lld", (long long)(t->micro_batch > 0 ? t->micro_batch : 1));
    return snprintf(buf, size,
                    "tp%lld pp%lld vpp%s %s %s zero%lld %s %s cp%lld ep%lld "
                    "mb%s %s %s",
                    (long long)(t->tp > 0 ? t->tp : 1),
                    (long long)(t->pp > 0 ? t->pp : 1),
                    v, dt_names_schedule_text(t), dp,
                    (long long)t->zero_stage,
                    t->sequence_parallel && t->tp > 1 ? "sp" : "nosp",
                    dt_names_recompute_short(t->recompute),
                    (long long)(t->cp > 0 ? t->cp : 1),
                    (long long)(t->ep > 0 ? t->ep : 1),
                    mb, lay, t->overlap_dp_comm ? "ovl" : "noovl");
}
