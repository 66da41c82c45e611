/*
 * load_keys.c - `madsweep keys`: every catalogue namespace's key table
 * printed with each key's help, accepted range and the kinds and task
 * types it applies to, from the same rows the loader checks by.
 */
#include "load.h"
#include "load_key.h"

#include "range.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ help */

static void load_print_table(FILE *out, const char *title,
                             const load_key *keys, size_t n)
{
    fprintf(out, "%s:\n", title);
    for (size_t i = 0; i < n; i++) {
        const char *kinds = keys[i].kinds == LK_ALL    ? ""
                            : keys[i].kinds == LK_DLRM ? " [dlrm]"
                                                       : " [llm]";
        const char *req = keys[i].required == LR_YES        ? ""
                          : keys[i].required == LR_FINETUNE ? " (finetune)"
                                                            : " (optional)";
        char range[80] = "";
        load_type ty = keys[i].type;
        bool power = strcmp(keys[i].name, "board_power_w") == 0 ||
                     strcmp(keys[i].name, "idle_power_w") == 0 ||
                     strcmp(keys[i].name, "price_per_hour_usd") == 0;
        if (ty == LT_INT || ty == LT_MB || ty == LT_FLOAT || ty == LT_FACT || power) {
            char r[64];
            if (ty == LT_INT || ty == LT_MB)
                range_int_text(keys[i].name, r, sizeof r);
            else
                range_float_text(keys[i].name, r, sizeof r);
            snprintf(range, sizeof range, " {%s}", r);
        }
        fprintf(out, "  %-26s %s%s%s%s\n", keys[i].name, keys[i].doc, range,
                kinds, req);
    }
}

void load_print_keys(FILE *out)
{
    fprintf(out, "{a to b}: the accepted range of a number (checked when it "
            "is read)\n");
    fprintf(out, "point: fidelity (\"madmax\" or \"detailed\"), model, system, task, stack, "
                 "prefill (detailed serving)\n");
    static const struct {
        const char *title;
        const load_table *table;
    } tables[] = {
        {"model", &load_model_table},
        {"system", &load_system_table},
        {"task", &load_task_table},
        {"detailed model (detailed_models.cfg)", &load_dmodel_table},
        {"hardware (hardware.cfg)", &load_hw_table},
        {"detailed system", &load_dsystem_table},
        {"detailed task", &load_dtask_table},
        {"prefill (a detailed inference point's, or a sweep's inference task's: a "
         "disaggregated prefill pool; the system and task decode; tp required in a sweep)",
         &load_prefill_table},
        {"stack (configs/stacks.cfg; a fact is a number or [low, nominal, high])",
         &load_stack_table}};
    for (size_t i = 0; i < NKEYS(tables); i++)
        load_print_table(out, tables[i].title, tables[i].table->keys, tables[i].table->n);
}
