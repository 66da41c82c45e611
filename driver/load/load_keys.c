/*
 * load_keys.c - the key tables as one set: each namespace's table, a
 * key's row and its facts (range, unit) for the other rooms, the check
 * that every row is whole, and `madsweep keys`: every table printed
 * with each key's help, accepted range and unit and the model kinds and
 * task types it applies to, from the same rows the loader checks by.
 */
#include "load.h"
#include "load_key.h"

#include "range.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const load_table *load_keys_table(load_ns ns)
{
    /* in the order of load_ns */
    static const load_table *const tables[] = {
        &load_model_table,  &load_system_table,  &load_task_table,
        &load_model_detailed_table, &load_hw_table,      &load_system_detailed_table,
        &load_task_detailed_table,  &load_stack_table,   &load_prefill_table};
    return tables[ns];
}

const load_key *load_keys_find(const load_table *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->keys[i].name, name) == 0)
            return &t->keys[i];
    return NULL;
}

const char *load_keys_range_text(load_ns ns, const char *key, char *buf, size_t size)
{
    const load_key *k = load_keys_find(load_keys_table(ns), key);
    if (!k || k->range == RANGE_NONE)
        return NULL;
    return range_text(k, buf, size);
}

const char *load_keys_unit(load_ns ns, const char *key)
{
    const load_key *k = load_keys_find(load_keys_table(ns), key);
    return k ? k->unit : NULL;
}

/* Does a namespace before ns, or a row before k in ns's table, give key
 * k's name a unit? */
static bool load_keys_unit_seen(int ns, const load_key *k)
{
    for (int e = 0; e < ns; e++)
        if (load_keys_unit((load_ns)e, k->name))
            return true;
    const load_table *t = load_keys_table((load_ns)ns);
    for (const load_key *j = t->keys; j < k; j++)
        if (j->unit && strcmp(j->name, k->name) == 0)
            return true;
    return false;
}

void load_keys_each_unit(void (*fn)(const char *key, const char *unit, void *arg),
                         void *arg)
{
    for (int ns = 0; ns < LOAD_NNS; ns++) {
        const load_table *t = load_keys_table((load_ns)ns);
        for (size_t i = 0; i < t->n; i++)
            if (t->keys[i].unit && !load_keys_unit_seen(ns, &t->keys[i]))
                fn(t->keys[i].name, t->keys[i].unit, arg);
    }
}

/* Whether type t is read as an integer, a float, or neither (0). */
static int load_keys_number(load_type t)
{
    return t == LT_INT || t == LT_MB || t == LT_CONC ? 'i'
           : t == LT_FLOAT || t == LT_FACT          ? 'f'
                                                    : 0;
}

int load_keys_check(char *msg, size_t size)
{
    for (int ns = 0; ns < LOAD_NNS; ns++) {
        const load_table *t = load_keys_table((load_ns)ns);
        for (size_t i = 0; i < t->n; i++) {
            const load_key *k = &t->keys[i];
            int num = load_keys_number(k->type);
            const char *why = NULL;
            if (num == 'i' && k->range != RANGE_INT)
                why = "an integer key without an integer range";
            else if (num == 'f' && k->range != RANGE_FLOAT && k->range != RANGE_FLOAT_OR0)
                why = "a float key without a float range";
            else if (num == 0 && k->range != RANGE_NONE && k->type != LT_ANY)
                why = "a range on a key that is not a number";
            else if (k->range != RANGE_NONE && !(k->lo <= k->hi))
                why = "a range whose low end is above its high end";
            else if (k->range == RANGE_FLOAT_OR0 && !(k->lo > 0.0))
                why = "\"0, or lo to hi\" with lo <= 0";
            else if (k->range != RANGE_NONE && (!k->unit || !*k->unit))
                why = "a number without a unit";
            for (size_t j = 0; !why && j < i; j++)
                if (strcmp(t->keys[j].name, k->name) == 0)
                    why = "a key listed twice";
            /* a number's unit is the same wherever it is read (a sweep
             * file's columns are named by key, whatever the namespace; a
             * task's switch and a stack's fraction may share a name) */
            for (int o = 0; !why && k->range != RANGE_NONE && o < ns; o++) {
                const load_key *x = load_keys_find(load_keys_table((load_ns)o), k->name);
                if (x && x->range != RANGE_NONE && strcmp(x->unit, k->unit) != 0)
                    why = "a unit that differs from the same key's in another table";
            }
            if (why) {
                snprintf(msg, size, "key table %d, key '%s': %s", ns, k->name, why);
                return -1;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------ help */

static void load_print_table(FILE *out, const char *title, const load_table *t)
{
    fprintf(out, "%s:\n", title);
    for (size_t i = 0; i < t->n; i++) {
        const load_key *k = &t->keys[i];
        const char *kinds = k->kinds == LK_ALL    ? ""
                            : k->kinds == LK_DLRM ? " [dlrm]"
                                                  : " [llm]";
        const char *req = k->required == LR_YES        ? ""
                          : k->required == LR_FINETUNE ? " (finetune)"
                                                       : " (optional)";
        char range[160] = "";
        if (k->range != RANGE_NONE) {
            char r[64];
            bool unit = k->unit && strcmp(k->unit, "1") != 0;
            snprintf(range, sizeof range, " {%s%s%s}", range_text(k, r, sizeof r),
                     unit ? " " : "", unit ? k->unit : "");
        }
        fprintf(out, "  %-26s %s%s%s%s\n", k->name, k->doc, range, kinds, req);
    }
}

void load_keys_print(FILE *out)
{
    fprintf(out, "{a to b unit}: the accepted range of a number (checked when it "
            "is read) and what it counts\n");
    fprintf(out, "point: fidelity (\"madmax\" or \"detailed\"), model, system, task, stack, "
                 "prefill (detailed serving)\n");
    static const struct {
        const char *title;
        load_ns ns;
    } tables[] = {
        {"model", LOAD_NS_MODEL},
        {"system", LOAD_NS_SYSTEM},
        {"task", LOAD_NS_TASK},
        {"detailed model (detailed_models.cfg)", LOAD_NS_DMODEL},
        {"hardware (hardware.cfg)", LOAD_NS_HW},
        {"detailed system", LOAD_NS_DSYSTEM},
        {"detailed task", LOAD_NS_DTASK},
        {"prefill (a detailed inference point's, or a sweep's inference task's: a "
         "disaggregated prefill pool; the system and task decode; tp required in a sweep)",
         LOAD_NS_PREFILL},
        {"stack (configs/stacks.cfg; a fact is a number or [low, nominal, high])",
         LOAD_NS_STACK}};
    for (size_t i = 0; i < NKEYS(tables); i++)
        load_print_table(out, tables[i].title, load_keys_table(tables[i].ns));
}
