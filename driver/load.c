/*
 * load.c - the loader's shared machinery: files, errors, key tables.
 *
 * Invariant: every value that reaches the cost model passed a type check
 * here and a domain check in cost/ (model_derive, cluster_derive,
 * eval_check); every failure names file, line and key. Key tables are
 * the single source of parsing, defaults and `madsweep keys` help: each
 * catalogue's reader keeps its own (load_model.c, load_hw.c,
 * load_system.c, load_task.c, load_stack.c, load_point.c) and walks it
 * with load_group(); this file opens files, reports errors, reads typed
 * values, resolves catalogue names and `base` entries, and prints the
 * tables (writing keys back: load_write.c).
 */
#include "load.h"
#include "load_internal.h"

#include "../cost/detailed.h"
#include "suggest.h"
#include "lint.h"
#include "range.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef MADSWEEP_CONFIGS_DIR
#define MADSWEEP_CONFIGS_DIR "configs"
#endif

/* ------------------------------------------------------------ errors */

void load_fail(load_err *err, const config_setting_t *s, const char *fmt, ...)
{
    int n = 0;
    const char *file = s ? config_setting_source_file(s) : NULL;
    unsigned line = s ? config_setting_source_line(s) : 0;
    n = snprintf(err->text, sizeof err->text, "%s:%u: ",
                 file ? file : "(input)", line);
    if (n < 0 || (size_t)n >= sizeof err->text)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text + n, sizeof err->text - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ files */

void load_reads_add(load_reads *r, const char *path)
{
    if (!r || r->n >= LOAD_READS_MAX)
        return;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->path[i], path) == 0)
            return;
    snprintf(r->path[r->n++], LOAD_PATH_MAX, "%s", path);
}

const char *load_configs_dir(const char *override)
{
    if (override && *override)
        return override;
    const char *env = getenv("MADSWEEP_CONFIGS");
    if (env && *env)
        return env;
    return MADSWEEP_CONFIGS_DIR;
}

int load_open(config_t *cfg, const char *path, const char *configs_dir,
              load_err *err)
{
    config_init(cfg);
    config_set_include_dir(cfg, configs_dir);
    if (lint_config(path, configs_dir, err->text, sizeof err->text) != 0) {
        config_destroy(cfg); /* what libconfig would exit or leak on */
        return -1;
    }
    if (config_read_file(cfg, path) == CONFIG_TRUE)
        return 0;
    if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
        snprintf(err->text, sizeof err->text,
                 "%s: cannot read file (missing or unreadable)", path);
    else
        snprintf(err->text, sizeof err->text, "%s:%d: syntax error: %s",
                 config_error_file(cfg) ? config_error_file(cfg) : path,
                 config_error_line(cfg), config_error_text(cfg));
    config_destroy(cfg);
    return -1;
}

/* ------------------------------------------------------------ values */

const char *load_type_name(int type)
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
                  config_setting_name(s), load_type_name(t));
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
                      i, load_type_name(config_setting_type(e)));
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
static int load_fact(const config_setting_t *s, stack_fact *f, load_err *err)
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
                          load_type_name(et));
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
                  load_type_name(t));
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (range_check_float(s, name, v[i], err) != 0)
            return -1;
    f->lo = v[0];
    f->v = v[1];
    f->hi = v[2];
    return 0;
}

/* The "auto" flag of an LT_MB key of a task (micro_batch or vpp). */
bool *load_auto_flag(task_t *t, const char *key)
{
    return strcmp(key, "vpp") == 0 ? &t->detailed.vpp_auto : &t->detailed.micro_batch_auto;
}

int load_value(const config_setting_t *s, const load_key *k, void *obj,
               load_err *err)
{
    char *dst = (char *)obj + k->offset;
    int t = config_setting_type(s);
    const char *name = config_setting_name(s);
    switch (k->type) {
    case LT_ANY:
        return 0;
    case LT_INT:
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected an integer, got %s", name,
                      load_type_name(t));
            return -1;
        }
        if (range_check_int(s, name, (int64_t)config_setting_get_int64(s), err))
            return -1;
        *(int64_t *)(void *)dst = (int64_t)config_setting_get_int64(s);
        return 0;
    case LT_FLOAT: {
        double v = 0.0;
        if (t == CONFIG_TYPE_FLOAT)
            v = config_setting_get_float(s);
        else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
            v = (double)config_setting_get_int64(s);
        else {
            load_fail(err, s, "key '%s': expected a number, got %s", name,
                      load_type_name(t));
            return -1;
        }
        if (range_check_float(s, name, v, err))
            return -1;
        *(double *)(void *)dst = v;
        return 0;
    }
    case LT_BOOL:
        if (t != CONFIG_TYPE_BOOL) {
            load_fail(err, s, "key '%s': expected true or false, got %s", name,
                      load_type_name(t));
            return -1;
        }
        *(bool *)(void *)dst = config_setting_get_bool(s) != 0;
        return 0;
    case LT_MB:
        if (t == CONFIG_TYPE_STRING && strcmp(config_setting_get_string(s), "auto") == 0) {
            *load_auto_flag((task_t *)obj, k->name) = true;
            return 0;
        }
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected an integer or \"auto\", got %s", name,
                      load_type_name(t));
            return -1;
        }
        if (range_check_int(s, name, (int64_t)config_setting_get_int64(s), err))
            return -1;
        *(int64_t *)(void *)dst = (int64_t)config_setting_get_int64(s);
        return 0;
    case LT_CONC:
        if (t == CONFIG_TYPE_STRING) {
            const char *text = config_setting_get_string(s);
            int v = strcmp(text, "max") == 0 ? 1 : strcmp(text, "sla") == 0 ? 2 : -1;
            if (load_enum(s, text, v, "an integer, \"max\" or \"sla\"", &v, err))
                return -1;
            *(int64_t *)(void *)dst = v == 1 ? TASK_CONC_MAX : TASK_CONC_SLA;
            return 0;
        }
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
            load_fail(err, s, "key '%s': expected an integer, \"max\" or \"sla\", got %s",
                      name, load_type_name(t));
            return -1;
        }
        if (range_check_int(s, name, (int64_t)config_setting_get_int64(s), err))
            return -1;
        *(int64_t *)(void *)dst = (int64_t)config_setting_get_int64(s);
        return 0;
    case LT_TRI:
        if (t != CONFIG_TYPE_BOOL) {
            load_fail(err, s, "key '%s': expected true or false, got %s", name,
                      load_type_name(t));
            return -1;
        }
        *(int *)(void *)dst = config_setting_get_bool(s) != 0;
        return 0;
    case LT_PLAN:
        return load_plan(s, (plan_t *)(void *)dst, err);
    case LT_FACT:
        return load_fact(s, (stack_fact *)(void *)dst, err);
    default:
        break;
    }
    /* string-valued keys */
    if (t != CONFIG_TYPE_STRING) {
        load_fail(err, s, "key '%s': expected a string, got %s", name,
                  load_type_name(t));
        return -1;
    }
    const char *text = config_setting_get_string(s);
    int v = 0;
    switch (k->type) {
    case LT_NOTE:
        return 0;
    case LT_SCHEDULER:
        v = strcmp(text, "continuous") == 0 ? TASK_SCHED_CONTINUOUS
            : strcmp(text, "static") == 0   ? TASK_SCHED_STATIC
                                            : -1;
        if (load_enum(s, text, v, "\"continuous\" or \"static\"", &v, err))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    case LT_WDTYPE:
        v = task_weight_parse(text);
        if (load_enum(s, text, v,
                      "\"bf16\", \"fp16\", \"fp8\", \"int8\", \"int4\" or \"fp4\"", &v,
                      err))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    case LT_KVDTYPE:
        v = hw_dtype_parse(text);
        if (v != HW_BF16 && v != HW_FP8 && v != HW_INT8)
            v = -1;
        if (load_enum(s, text, v, "\"bf16\", \"fp16\", \"fp8\" or \"int8\"", &v, err))
            return -1;
        *(int *)(void *)dst = v + 1;
        return 0;
    case LT_ARCH:
    case LT_POSITION:
    case LT_RECOMPUTE:
    case LT_SCHEDULE:
    case LT_ATTENTION:
    case LT_DTYPE:
    case LT_ALGO:
    case LT_LAYOUT:
    case LT_EMB_SHARDING:
    case LT_EMB_OPT:
    case LT_FP8_RECIPE: {
        static const char *const expect[] = {
            "\"gpt\", \"llama\", \"mpt\", \"bloom\", \"vit\", \"mixtral\" or \"deepseek\"",
            "\"learned\", \"rope\", \"alibi\" or \"none\"",
            "\"none\", \"selective\", \"full\" or \"auto\"",
            "\"1f1b\", \"interleaved\" or \"gpipe\"",
            "\"flash\", \"tuned\" or \"unfused\"",
            "\"fp32\", \"tf32\", \"bf16\", \"fp16\", \"fp8\", \"int8\" or \"fp4\"",
            "\"ring\", \"tree\" or \"hierarchical\"",
            "an order of tp, cp, dp, pp joined by '-', innermost first (\"tp-cp-dp-pp\")",
            "\"table\", \"row\" or \"column\"",
            "\"rowwise_adagrad\", \"sgd\", \"adagrad\" or \"adam\"",
            "\"delayed\", \"current\", \"blockwise\", \"mxfp8\" or \"nvfp4\""};
        int which = (int)k->type - (int)LT_ARCH;
        v = k->type == LT_ARCH        ? detailed_arch_parse(text)
            : k->type == LT_POSITION  ? detailed_position_parse(text)
            : k->type == LT_RECOMPUTE ? detailed_recompute_parse(text)
            : k->type == LT_SCHEDULE  ? detailed_schedule_parse(text)
            : k->type == LT_ATTENTION ? detailed_attention_parse(text)
            : k->type == LT_DTYPE     ? hw_dtype_parse(text)
            : k->type == LT_LAYOUT    ? detailed_layout_parse(text)
            : k->type == LT_EMB_SHARDING ? detailed_emb_sharding_parse(text)
            : k->type == LT_EMB_OPT   ? detailed_emb_optimizer_parse(text)
            : k->type == LT_FP8_RECIPE ? detailed_fp8_recipe_parse(text)
                                      : topo_algo_parse(text);
        if (load_enum(s, text, v, expect[which], &v, err))
            return -1;
        /* every detailed enum is stored as a C enum (int-sized) */
        *(int *)(void *)dst = v;
        return 0;
    }
    case LT_STRING:
    case LT_TEXT: {
        size_t max = k->type == LT_TEXT ? STACK_SUMMARY_MAX : MODEL_NAME_MAX;
        if (strlen(text) >= max) {
            load_fail(err, s, "key '%s': longer than %zu characters", name, max - 1);
            return -1;
        }
        memcpy(dst, text, strlen(text) + 1);
        return 0;
    }
    case LT_PP_SEND:
        v = strcmp(text, "full") == 0             ? STACK_PP_FULL
            : strcmp(text, "scatter_gather") == 0 ? STACK_PP_SCATTER_GATHER
                                                  : -1;
        if (load_enum(s, text, v, "\"full\" or \"scatter_gather\"", &v, err))
            return -1;
        *(int *)(void *)dst = v;
        return 0;
    case LT_MODEL_KIND:
        if (load_enum(s, text, model_kind_parse(text), "\"dlrm\" or \"llm\"",
                      &v, err))
            return -1;
        *(model_kind *)(void *)dst = (model_kind)v;
        return 0;
    case LT_TASK_KIND:
        if (load_enum(s, text, task_kind_parse(text),
                      "\"pretrain\", \"finetune\" or \"inference\"", &v, err))
            return -1;
        *(task_kind *)(void *)dst = (task_kind)v;
        return 0;
    case LT_MLP:
        v = strcmp(text, "gelu") == 0 ? MODEL_MLP_GELU
            : strcmp(text, "swiglu") == 0 ? MODEL_MLP_SWIGLU
                                          : -1;
        if (load_enum(s, text, v, "\"gelu\" or \"swiglu\"", &v, err))
            return -1;
        *(model_mlp *)(void *)dst = (model_mlp)v;
        return 0;
    default:
        return -1;
    }
}


/* Loads the keys of `keys` that apply to `kinds` from group g into obj:
 * unknown members (named with the closest key), missing required keys
 * and type errors are failures. */
int load_group(const config_setting_t *g, const char *ns,
               const load_key *keys, size_t nkeys, unsigned kinds,
               unsigned flags, void *obj, load_err *err)
{
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "'%s': expected a group { ... }, got %s", ns,
                  load_type_name(config_setting_type(g)));
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

const config_setting_t *load_member_or(const config_setting_t *g,
                                       const char *name)
{
    const config_setting_t *s = config_setting_get_member(g, name);
    return s ? s : g;
}

/* ------------------------------------------------------------ bases */

#define LOAD_BASE_DEPTH 8

/* The entry that setting s (a group, or a string naming an entry of
 * list `list`) stands for: in g's own file only when configs_dir is
 * NULL, else as load_resolve() does, the catalogue configs_dir/file
 * then being open in *aux (*aux_open set) and noted in reads. NULL with
 * err set when there is none. */
const config_setting_t *load_entry(const config_setting_t *s,
                                   const char *list, const char *file,
                                   const char *configs_dir,
                                   load_reads *reads, config_t *aux,
                                   int *aux_open, load_err *err)
{
    if (configs_dir) {
        const config_setting_t *e =
            load_resolve(s, list, file, configs_dir, aux, aux_open, err);
        if (*aux_open) {
            char path[LOAD_PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", configs_dir, file);
            load_reads_add(reads, path);
        }
        return e;
    }
    if (config_setting_is_group(s))
        return s;
    const char *name = config_setting_get_string(s);
    const config_setting_t *root = s;
    while (config_setting_parent(root))
        root = config_setting_parent(root);
    const config_setting_t *l = config_setting_get_member(root, list);
    const config_setting_t *e = name ? load_find(l, name) : NULL;
    if (!e) {
        char hint[SUGGEST_NAME_MAX + 32];
        load_fail(err, s, "key '%s': \"%s\" is not in list '%s' of this file%s",
                  config_setting_name(s), name ? name : "?", list,
                  name ? load_suggest(l, NULL, name, hint, sizeof hint) : "");
    }
    return e;
}

/* The entry that g's `base` names, in list `list` of g's own file or
 * (configs_dir not NULL) of the catalogue configs_dir/file, which is
 * then open in *aux (*aux_open set; noted in reads). *base is NULL when
 * g has no base. Returns 0, or -1 with err set. */
int load_base(const config_setting_t *g, const char *list,
              const char *file, const char *configs_dir,
              load_reads *reads, int depth, config_t *aux, int *aux_open,
              const config_setting_t **base, load_err *err)
{
    *base = NULL;
    const config_setting_t *bs =
        config_setting_is_group(g) ? config_setting_get_member(g, "base") : NULL;
    if (!bs)
        return 0;
    const char *name = config_setting_get_string(bs);
    if (!name) {
        load_fail(err, bs, "key 'base': expected the name of an entry of list "
                  "'%s'", list);
        return -1;
    }
    if (depth >= LOAD_BASE_DEPTH) {
        load_fail(err, bs, "key 'base': more than %d bases in a chain (does "
                  "\"%s\" lead back to itself?)", LOAD_BASE_DEPTH, name);
        return -1;
    }
    *base = load_entry(bs, list, file, configs_dir, reads, aux, aux_open, err);
    if (*base == g) {
        load_fail(err, bs, "key 'base': \"%s\" names the entry itself", name);
        *base = NULL;
    }
    return *base ? 0 : -1;
}

/* Member `key` of g as an array or list of 1..max elements (`what` names
 * them in messages); NULL with err set otherwise. */
const config_setting_t *load_array(const config_setting_t *g,
                                   const char *key, int max,
                                   const char *what, int *len,
                                   load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
        load_fail(err, s, "key '%s': expected an array of %s, got %s", key,
                  what, load_type_name(t));
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

/* ------------------------------------------------------------ catalogues */

const char *load_suggest(const config_setting_t *a, const config_setting_t *b,
                         const char *name, char *buf, size_t size)
{
    suggest sg;
    suggest_init(&sg, name);
    const config_setting_t *lists[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        if (!lists[k] || !config_setting_is_list(lists[k]))
            continue;
        for (int i = 0; i < config_setting_length(lists[k]); i++) {
            const char *en = NULL;
            const config_setting_t *e = config_setting_get_elem(lists[k], (unsigned)i);
            if (config_setting_is_group(e) &&
                config_setting_lookup_string(e, "name", &en) == CONFIG_TRUE)
                suggest_offer(&sg, en);
        }
    }
    return suggest_hint(&sg, buf, size);
}

/* The name of a list element: the string, or a group's "name". */
static const char *load_elem_name(const config_setting_t *e)
{
    if (config_setting_is_group(e)) {
        const char *n = NULL;
        return config_setting_lookup_string(e, "name", &n) ? n : NULL;
    }
    return config_setting_get_string(e);
}

/* A name listed twice in `list` (a spec axis or a catalogue) is refused,
 * naming both places: a repeat would evaluate the same points twice and
 * `best --group` would merge them silently (issue 19). 0, or -1 with
 * err set. */
int load_unique(const config_setting_t *list, const char *key, load_err *err)
{
    int len = config_setting_length(list);
    for (int i = 1; i < len; i++) {
        const config_setting_t *b = config_setting_get_elem(list, (unsigned)i);
        const char *nb = load_elem_name(b);
        for (int j = 0; nb && j < i; j++) {
            const config_setting_t *a = config_setting_get_elem(list, (unsigned)j);
            const char *na = load_elem_name(a);
            if (na && strcmp(na, nb) == 0) {
                const char *fa = config_setting_source_file(a);
                load_fail(err, b, "key '%s': \"%s\" is listed twice (first at "
                          "%s:%d); each name may appear once", key, nb,
                          fa ? fa : "?", config_setting_source_line(a));
                return -1;
            }
        }
    }
    return 0;
}

const config_setting_t *load_find(const config_setting_t *list,
                                  const char *name)
{
    if (!list || !config_setting_is_list(list))
        return NULL;
    int n = config_setting_length(list);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        const char *en = NULL;
        if (config_setting_is_group(e) &&
            config_setting_lookup_string(e, "name", &en) == CONFIG_TRUE &&
            strcmp(en, name) == 0)
            return e;
    }
    return NULL;
}

const config_setting_t *load_resolve(const config_setting_t *s,
                                     const char *list, const char *catalog_file,
                                     const char *configs_dir, config_t *aux,
                                     int *aux_open, load_err *err)
{
    if (config_setting_is_group(s))
        return s;
    const char *name = config_setting_get_string(s);
    if (!name) {
        load_fail(err, s, "key '%s': expected a group or a catalogue name, "
                  "got %s", config_setting_name(s),
                  load_type_name(config_setting_type(s)));
        return NULL;
    }
    const config_setting_t *root = s;
    while (config_setting_parent(root))
        root = config_setting_parent(root);
    const config_setting_t *hit =
        load_find(config_setting_get_member(root, list), name);
    if (hit)
        return hit;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", configs_dir, catalog_file);
    if (!*aux_open) {
        load_err cerr;
        if (load_open(aux, path, configs_dir, &cerr) != 0) {
            load_fail(err, s, "'%s' is not defined here and the catalogue "
                      "could not be read: %s", name, cerr.text);
            return NULL;
        }
        *aux_open = 1;
    }
    hit = load_find(config_lookup(aux, list), name);
    if (!hit) {
        char hint[SUGGEST_NAME_MAX + 32];
        load_fail(err, s, "key '%s': \"%s\" is not in the catalogue %s "
                  "(list '%s')%s", config_setting_name(s), name, path, list,
                  load_suggest(config_setting_get_member(root, list),
                               config_lookup(aux, list), name, hint, sizeof hint));
    }
    return hit;
}

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
