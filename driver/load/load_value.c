/*
 * load_value.c - reading one key's value by its key-table row, and
 * walking a group against a whole table (see load_key.h).
 *
 * Invariant: a value is stored only after its type matched the row's
 * and, for a number, it lay in the row's range (range.h); a group is
 * loaded only when every member is a key of its table for the model
 * kind at hand and every required key is present. Every failure names
 * file, line and key.
 */
#include "load_key.h"

#include "../../cost/detailed.h"
#include "../suggest.h"
#include "range.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

const char *load_value_type_name(int type)
{
    switch (type) {
    case CONFIG_TYPE_GROUP:
        return "a group";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        return "an integer";
    case CONFIG_TYPE_FLOAT:
        return "a float";
    case CONFIG_TYPE_STRING:
        return "a string";
    case CONFIG_TYPE_BOOL:
        return "a boolean";
    case CONFIG_TYPE_ARRAY:
        return "an array";
    case CONFIG_TYPE_LIST:
        return "a list";
    default:
        return "nothing";
    }
}

static int load_plan(const config_setting_t *s, plan_t *p, load_err *err)
{
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s,
                  "key '%s': expected an array of \"strategy:degree\" "
                  "strings, got %s",
                  config_setting_name(s), load_value_type_name(t));
        return -1;
    }
    memset(p, 0, sizeof *p);
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *text = config_setting_get_string(e);
        if (!text) {
            load_fail(err, s, "key '%s': element %d is %s, expected a "
                      "\"strategy:degree\" string", config_setting_name(s),
                      i, load_value_type_name(config_setting_type(e)));
            return -1;
        }
        plan_strategy st;
        int64_t deg;
        const char *why = NULL;
        if (plan_parse_level(text, &st, &deg, &why) != 0) {
            load_fail(err, s, "key '%s': \"%s\": %s", config_setting_name(s),
                      text, why);
            return -1;
        }
        if (plan_push(p, st, deg) != 0) {
            load_fail(err, s, "key '%s': more than %d levels",
                      config_setting_name(s), PLAN_MAX_LEVELS);
            return -1;
        }
    }
    int64_t prod = 1;
    for (int i = 0; i < p->nlevels; i++)
        if (range_product(prod, p->degree[i], RANGE_P24, &prod) != 0) {
            load_fail(err, s, "key '%s': the degrees multiply past %lld "
                      "devices", config_setting_name(s), (long long)RANGE_P24);
            return -1;
        }
    return 0;
}

static int load_enum(const config_setting_t *s, const char *text, int value,
                     const char *expected, int *out, load_err *err)
{
    if (value < 0) {
        load_fail(err, s, "key '%s': unknown value \"%s\" (expected %s)",
                  config_setting_name(s), text, expected);
        return -1;
    }
    *out = value;
    return 0;
}

/* A stack fact: a number (certain), or [low, nominal, high]. */
static int load_fact(const config_setting_t *s, const load_key *k, stack_fact *f,
                     load_err *err)
{
    const char *name = config_setting_name(s);
    int t = config_setting_type(s);
    double v[3];
    if (t == CONFIG_TYPE_FLOAT || t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
        v[0] = v[1] = v[2] = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                    : (double)config_setting_get_int64(s);
    } else if ((t == CONFIG_TYPE_ARRAY || t == CONFIG_TYPE_LIST) &&
               config_setting_length(s) == 3) {
        for (unsigned i = 0; i < 3; i++) {
            const config_setting_t *e = config_setting_get_elem(s, i);
            int et = config_setting_type(e);
            if (et == CONFIG_TYPE_FLOAT)
                v[i] = config_setting_get_float(e);
            else if (et == CONFIG_TYPE_INT || et == CONFIG_TYPE_INT64)
                v[i] = (double)config_setting_get_int64(e);
            else {
                load_fail(err, s, "key '%s': element %u is %s, expected a number", name, i,
                          load_value_type_name(et));
                return -1;
            }
        }
        if (!(v[0] <= v[1] && v[1] <= v[2])) {
            load_fail(err, s, "key '%s': expected [low, nominal, high] in ascending order",
                      name);
            return -1;
        }
    } else {
        load_fail(err, s, "key '%s': expected a number or [low, nominal, high], got %s", name,
                  load_value_type_name(t));
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (range_check_float(s, k, v[i], err) != 0)
            return -1;
    f->lo = v[0];
    f->v = v[1];
    f->hi = v[2];
    return 0;
}

/* The "auto" flag of an LT_MB key of a task (micro_batch or vpp). */
bool *load_value_auto_flag(task_t *t, const char *key)
{
    return strcmp(key, "vpp") == 0 ? &t->detailed.vpp_auto : &t->detailed.micro_batch_auto;
}

/* An integer key: LT_INT, or LT_MB (also "auto": the task's flag set)
 * or LT_CONC (also "max" or "sla"); in the row's range. */
static int load_value_integer(const config_setting_t *s, const load_key *k, void *obj,
                              load_err *err)
{
    int64_t *dst = (int64_t *)(void *)((char *)obj + k->offset);
    int t = config_setting_type(s);
    const char *name = config_setting_name(s);
    if (k->type == LT_MB && t == CONFIG_TYPE_STRING &&
        strcmp(config_setting_get_string(s), "auto") == 0) {
        *load_value_auto_flag((task_t *)obj, k->name) = true;
        return 0;
    }
    if (k->type == LT_CONC && t == CONFIG_TYPE_STRING) {
        const char *text = config_setting_get_string(s);
        int v = strcmp(text, "max") == 0 ? 1 : strcmp(text, "sla") == 0 ? 2 : -1;
        if (load_enum(s, text, v, "an integer, \"max\" or \"sla\"", &v, err))
            return -1;
        *dst = v == 1 ? TASK_CONC_MAX : TASK_CONC_SLA;
        return 0;
    }
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
        load_fail(err, s, "key '%s': expected an integer%s, got %s", name,
                  k->type == LT_MB     ? " or \"auto\""
                  : k->type == LT_CONC ? ", \"max\" or \"sla\""
                                       : "",
                  load_value_type_name(t));
        return -1;
    }
    if (range_check_int(s, k, (int64_t)config_setting_get_int64(s), err))
        return -1;
    *dst = (int64_t)config_setting_get_int64(s);
    return 0;
}

/* A float key (LT_FLOAT; an integer is taken as its value), in the
 * row's range. */
static int load_value_float(const config_setting_t *s, const load_key *k, double *dst,
                            load_err *err)
{
    int t = config_setting_type(s);
    double v = 0.0;
    if (t == CONFIG_TYPE_FLOAT)
        v = config_setting_get_float(s);
    else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        v = (double)config_setting_get_int64(s);
    else {
        load_fail(err, s, "key '%s': expected a number, got %s", config_setting_name(s),
                  load_value_type_name(t));
        return -1;
    }
    if (range_check_float(s, k, v, err))
        return -1;
    *dst = v;
    return 0;
}

/* The enums stored as a C enum (int-sized), each read by its name: the
 * type, the parser (a negative value: no such name) and the names it
 * takes, for the message. */
static const struct load_enum_type {
    load_type type;
    int (*parse)(const char *text);
    const char *expect;
} load_enum_types[] = {
    {LT_ARCH, detailed_arch_parse,
     "\"gpt\", \"llama\", \"mpt\", \"bloom\", \"vit\", \"mixtral\" or \"deepseek\""},
    {LT_POSITION, detailed_position_parse, "\"learned\", \"rope\", \"alibi\" or \"none\""},
    {LT_RECOMPUTE, detailed_recompute_parse, "\"none\", \"selective\", \"full\" or \"auto\""},
    {LT_SCHEDULE, detailed_schedule_parse, "\"1f1b\", \"interleaved\" or \"gpipe\""},
    {LT_ATTENTION, detailed_attention_parse, "\"flash\", \"tuned\" or \"unfused\""},
    {LT_DTYPE, hw_dtype_parse,
     "\"fp32\", \"tf32\", \"bf16\", \"fp16\", \"fp8\", \"int8\" or \"fp4\""},
    {LT_ALGO, topo_algo_parse, "\"ring\", \"tree\" or \"hierarchical\""},
    {LT_LAYOUT, detailed_layout_parse,
     "an order of tp, cp, dp, pp joined by '-', innermost first (\"tp-cp-dp-pp\")"},
    {LT_EMB_SHARDING, detailed_emb_sharding_parse, "\"table\", \"row\" or \"column\""},
    {LT_EMB_OPT, detailed_emb_optimizer_parse,
     "\"rowwise_adagrad\", \"sgd\", \"adagrad\" or \"adam\""},
    {LT_FP8_RECIPE, detailed_fp8_recipe_parse,
     "\"delayed\", \"current\", \"blockwise\", \"mxfp8\" or \"nvfp4\""},
    {LT_WDTYPE, task_weight_parse,
     "\"bf16\", \"fp16\", \"fp8\", \"int8\", \"int4\" or \"fp4\""},
};

/* The value of an enum key `text` names (the parsers of the keys not in
 * load_enum_types are here), -1 when none; *expect the names it takes. */
static int load_enum_value(load_type type, const char *text, const char **expect)
{
    for (size_t i = 0; i < NKEYS(load_enum_types); i++)
        if (load_enum_types[i].type == type) {
            *expect = load_enum_types[i].expect;
            return load_enum_types[i].parse(text);
        }
    int v;
    switch (type) {
    case LT_SCHEDULER:
        *expect = "\"continuous\" or \"static\"";
        return strcmp(text, "continuous") == 0 ? TASK_SCHED_CONTINUOUS
               : strcmp(text, "static") == 0   ? TASK_SCHED_STATIC
                                               : -1;
    case LT_FRONT_END:
        *expect = "\"engine\" or \"dynamo\"";
        return strcmp(text, "engine") == 0   ? TASK_FRONT_ENGINE
               : strcmp(text, "dynamo") == 0 ? TASK_FRONT_DYNAMO
                                             : -1;
    case LT_KVDTYPE: /* stored as 1 + the dtype (0: the compute dtype) */
        *expect = "\"bf16\", \"fp16\", \"fp8\" or \"int8\"";
        v = hw_dtype_parse(text);
        return v == HW_BF16 || v == HW_FP8 || v == HW_INT8 ? v + 1 : -1;
    case LT_PP_SEND:
        *expect = "\"full\" or \"scatter_gather\"";
        return strcmp(text, "full") == 0             ? STACK_PP_FULL
               : strcmp(text, "scatter_gather") == 0 ? STACK_PP_SCATTER_GATHER
                                                     : -1;
    case LT_MODEL_KIND:
        *expect = "\"dlrm\" or \"llm\"";
        return model_kind_parse(text);
    case LT_TASK_KIND:
        *expect = "\"pretrain\", \"finetune\" or \"inference\"";
        return task_kind_parse(text);
    case LT_MLP:
        *expect = "\"gelu\" or \"swiglu\"";
        return strcmp(text, "gelu") == 0     ? MODEL_MLP_GELU
               : strcmp(text, "swiglu") == 0 ? MODEL_MLP_SWIGLU
                                             : -1;
    default:
        *expect = NULL;
        return -1;
    }
}

/* A string-valued key: a note (checked, not stored), a name or a text
 * of bounded length, or an enum by its name. */
static int load_value_text(const config_setting_t *s, const load_key *k, char *dst,
                           load_err *err)
{
    int t = config_setting_type(s);
    const char *name = config_setting_name(s);
    if (t != CONFIG_TYPE_STRING) {
        load_fail(err, s, "key '%s': expected a string, got %s", name,
                  load_value_type_name(t));
        return -1;
    }
    const char *text = config_setting_get_string(s);
    if (k->type == LT_NOTE)
        return 0;
    if (k->type == LT_STRING || k->type == LT_TEXT) {
        size_t max = k->type == LT_TEXT ? STACK_SUMMARY_MAX : MODEL_NAME_MAX;
        if (k->type == LT_STRING && !*text && strcmp(name, "name") == 0) {
            /* rows with a blank model, hardware, system or stack (issue 29) */
            load_fail(err, s, "key 'name': expected a name of 1 to %zu characters, "
                      "got \"\"", max - 1);
            return -1;
        }
        if (k->type == LT_STRING && strcmp(name, "name") == 0 &&
            load_name_control(s, name, text, err))
            return -1;
        if (strlen(text) >= max) {
            load_fail(err, s, "key '%s': longer than %zu characters", name, max - 1);
            return -1;
        }
        memcpy(dst, text, strlen(text) + 1);
        return 0;
    }
    const char *expect = NULL;
    int v = load_enum_value(k->type, text, &expect);
    if (!expect)
        return -1; /* not a string-valued type */
    if (load_enum(s, text, v, expect, &v, err))
        return -1;
    /* model_kind, task_kind, model_mlp and the detailed enums are C
     * enums: int-sized */
    *(int *)(void *)dst = v;
    return 0;
}

int load_name_control(const config_setting_t *s, const char *key, const char *text,
                      load_err *err)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if (*c < 0x20 || *c == 0x7f) {
            load_fail(err, s, "key '%s': a control character (0x%02x) in a name: names "
                      "label rows, tables and CSV lines", key, *c);
            return -1;
        }
    return 0;
}

int load_value(const config_setting_t *s, const load_key *k, void *obj,
               load_err *err)
{
    char *dst = (char *)obj + k->offset;
    switch (k->type) {
    case LT_ANY:
        return 0;
    case LT_INT:
    case LT_MB:
    case LT_CONC:
        return load_value_integer(s, k, obj, err);
    case LT_FLOAT:
        return load_value_float(s, k, (double *)(void *)dst, err);
    case LT_BOOL:
    case LT_TRI:
        if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
            load_fail(err, s, "key '%s': expected true or false, got %s",
                      config_setting_name(s), load_value_type_name(config_setting_type(s)));
            return -1;
        }
        if (k->type == LT_BOOL)
            *(bool *)(void *)dst = config_setting_get_bool(s) != 0;
        else
            *(int *)(void *)dst = config_setting_get_bool(s) != 0;
        return 0;
    case LT_PLAN:
        return load_plan(s, (plan_t *)(void *)dst, err);
    case LT_FACT:
        return load_fact(s, k, (stack_fact *)(void *)dst, err);
    default:
        return load_value_text(s, k, dst, err);
    }
}

/* Loads the keys of `keys` that apply to `kinds` from group g into obj:
 * unknown members (named with the closest key), missing required keys
 * and type errors are failures. */
int load_value_group(const config_setting_t *g, const char *ns,
                     const load_key *keys, size_t nkeys, unsigned kinds,
                     unsigned flags, void *obj, load_err *err)
{
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "'%s': expected a group { ... }, got %s", ns,
                  load_value_type_name(config_setting_type(g)));
        return -1;
    }
    int n = config_setting_length(g);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(s);
        bool known = false;
        for (size_t k = 0; k < nkeys; k++)
            if (strcmp(keys[k].name, name) == 0 && (keys[k].kinds & kinds))
                known = true;
        if (!known) {
            suggest sg;
            suggest_init(&sg, name);
            for (size_t k = 0; k < nkeys; k++)
                if (keys[k].kinds & kinds)
                    suggest_offer(&sg, keys[k].name);
            char hint[SUGGEST_NAME_MAX + 32];
            load_fail(err, s, "unknown key '%s' in %s%s (see `madsweep keys`)",
                      name, ns, suggest_hint(&sg, hint, sizeof hint));
            return -1;
        }
    }
    for (size_t k = 0; k < nkeys; k++) {
        const load_key *key = &keys[k];
        if (!(key->kinds & kinds))
            continue;
        const config_setting_t *s =
            config_setting_get_member(g, key->name);
        if (!s) {
            bool need = key->required == LR_YES ||
                        (key->required == LR_FINETUNE && (flags & LG_FINETUNE));
            if (need && (flags & LG_BASED) && strcmp(key->name, "name") != 0)
                need = false;
            if (flags & LG_FILLED)
                need = false;
            if (need) {
                load_fail(err, g, "missing key '%s' in %s (%s)", key->name,
                          ns, key->doc);
                return -1;
            }
            continue;
        }
        if (load_value(s, key, obj, err) != 0)
            return -1;
    }
    return 0;
}

const config_setting_t *load_value_member_or(const config_setting_t *g,
                                             const char *name)
{
    const config_setting_t *s = config_setting_get_member(g, name);
    return s ? s : g;
}

/* Member `key` of g as an array or list of 1..max elements (`what` names
 * them in messages); NULL with err set otherwise. */
const config_setting_t *load_value_array(const config_setting_t *g,
                                         const char *key, int max,
                                         const char *what, int *len,
                                         load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) { /* a table whose other half is given (fuzz_spec's finding) */
        load_fail(err, g, "missing key '%s' (an array of %s)", key, what);
        return NULL;
    }
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s, "key '%s': expected an array of %s, got %s", key,
                  what, load_value_type_name(t));
        return NULL;
    }
    *len = config_setting_length(s);
    if (*len < 1 || *len > max) {
        load_fail(err, s, "key '%s': expected 1 to %d %s, got %d", key, max,
                  what, *len);
        return NULL;
    }
    return s;
}
