/*
 * load_write.c - writing configuration back (`madsweep point`): the
 * keys of a loaded model, system, task or stack as "key = value;"
 * lines that load to the same values.
 *
 * Driven by the same key tables as loading (load_key.h): doubles
 * in the shortest form that reads back exactly, enums by the name their
 * parser maps to the value, keys a task type would refuse left out.
 */
#include "load.h"
#include "load_key.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The name of enum value v of a key type, or NULL: the name whose
 * parse gives v (the parsers are the single source of the names). */
static const char *load_enum_name(load_type t, int v, char *buf, size_t size)
{
    static const char *const arch[] = {"gpt", "llama", "mpt", "bloom", "vit",
                                       "mixtral", "deepseek"};
    static const char *const pos[] = {"learned", "rope", "alibi", "none"};
    static const char *const rc[] = {"none", "selective", "full", "auto"};
    static const char *const sched[] = {"1f1b", "gpipe"};
    static const char *const att[] = {"flash", "unfused", "tuned"};
    static const char *const dt[] = {"bf16", "fp32", "tf32", "fp8", "int8", "fp4"};
    static const char *const algo[] = {"auto", "ring", "tree", "hierarchical"};
    static const char *const shard[] = {"table", "row", "column", "auto"};
    static const char *const opt[] = {"rowwise_adagrad", "sgd", "adagrad", "adam"};
    static const char *const f8[] = {"delayed", "current", "blockwise", "mxfp8", "nvfp4"};
    const char *const *names = NULL;
    size_t n = 0;
    int (*parse)(const char *) = NULL;
#define LOAD_NAMES(a, f) (names = (a), n = NKEYS(a), parse = (f))
    switch (t) {
    case LT_ARCH: LOAD_NAMES(arch, detailed_arch_parse); break;
    case LT_POSITION: LOAD_NAMES(pos, detailed_position_parse); break;
    case LT_RECOMPUTE: LOAD_NAMES(rc, detailed_recompute_parse); break;
    case LT_SCHEDULE: LOAD_NAMES(sched, detailed_schedule_parse); break;
    case LT_ATTENTION: LOAD_NAMES(att, detailed_attention_parse); break;
    case LT_DTYPE: LOAD_NAMES(dt, hw_dtype_parse); break;
    case LT_ALGO: LOAD_NAMES(algo, topo_algo_parse); break;
    case LT_EMB_SHARDING: LOAD_NAMES(shard, detailed_emb_sharding_parse); break;
    case LT_EMB_OPT: LOAD_NAMES(opt, detailed_emb_optimizer_parse); break;
    case LT_FP8_RECIPE: LOAD_NAMES(f8, detailed_fp8_recipe_parse); break;
    case LT_LAYOUT: {
        /* every order of the four dimensions */
        static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 4; c++) {
                    int d = 6 - a - b - c;
                    if (a == b || a == c || b == c || d < 0 || d > 3 || d == a ||
                        d == b || d == c)
                        continue;
                    snprintf(buf, size, "%s-%s-%s-%s", dims[a], dims[b],
                             dims[c], dims[d]);
                    if (detailed_layout_parse(buf) == v)
                        return buf;
                }
        return NULL;
    }
    default:
        return NULL;
    }
#undef LOAD_NAMES
    for (size_t i = 0; i < n; i++)
        if (parse(names[i]) == v)
            return names[i];
    return NULL;
}

const char *load_write_double_text(double v, char *buf, size_t size)
{
    /* the shortest of 15, 16 or 17 digits that reads back as v */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".eEin") && strlen(buf) + 2 < size)
        strcat(buf, ".0");
    return buf;
}

static void load_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* Writes a key whose value is a literal: a number, a flag, "auto" or a
 * number, [low, nominal, high], a plan; true when k is one of them
 * (nothing written for a value not stated). */
static bool load_write_literal(FILE *out, const load_key *k, const void *obj, int indent)
{
    const char *p = (const char *)obj + k->offset;
    int64_t i64;
    int iv;
    switch (k->type) {
    case LT_INT:
        memcpy(&i64, p, sizeof i64);
        fprintf(out, "%*s%s = %lld%s;\n", indent, "", k->name, (long long)i64,
                i64 > INT32_MAX || i64 < INT32_MIN ? "L" : "");
        return true;
    case LT_FLOAT: {
        double v;
        memcpy(&v, p, sizeof v);
        char num[40];
        if (isfinite(v))
            fprintf(out, "%*s%s = %s;\n", indent, "", k->name,
                    load_write_double_text(v, num, sizeof num));
        return true;
    }
    case LT_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        fprintf(out, "%*s%s = %s;\n", indent, "", k->name, v ? "true" : "false");
        return true;
    }
    case LT_TRI:
        memcpy(&iv, p, sizeof iv);
        if (iv >= 0) /* -1: not stated, left to the default */
            fprintf(out, "%*s%s = %s;\n", indent, "", k->name, iv ? "true" : "false");
        return true;
    case LT_MB: {
        memcpy(&i64, p, sizeof i64);
        task_t t;
        memcpy(&t, obj, sizeof t);
        if (*load_value_auto_flag(&t, k->name))
            fprintf(out, "%*s%s = \"auto\";\n", indent, "", k->name);
        else
            fprintf(out, "%*s%s = %lld%s;\n", indent, "", k->name, (long long)i64,
                    i64 > INT32_MAX ? "L" : "");
        return true;
    }
    case LT_CONC:
        memcpy(&i64, p, sizeof i64);
        if (i64 == TASK_CONC_MAX || i64 == TASK_CONC_SLA)
            fprintf(out, "%*s%s = \"%s\";\n", indent, "", k->name,
                    i64 == TASK_CONC_MAX ? "max" : "sla");
        else if (i64 > 0) /* 0: not stated, micro_batch x dp */
            fprintf(out, "%*s%s = %lld%s;\n", indent, "", k->name, (long long)i64,
                    i64 > INT32_MAX ? "L" : "");
        return true;
    case LT_FACT: {
        stack_fact f;
        memcpy(&f, p, sizeof f);
        char a[40], b[40], c[40];
        if (f.lo == f.v && f.v == f.hi)
            fprintf(out, "%*s%s = %s;\n", indent, "", k->name,
                    load_write_double_text(f.v, b, sizeof b));
        else
            fprintf(out, "%*s%s = [%s, %s, %s];\n", indent, "", k->name,
                    load_write_double_text(f.lo, a, sizeof a),
                    load_write_double_text(f.v, b, sizeof b),
                    load_write_double_text(f.hi, c, sizeof c));
        return true;
    }
    case LT_PLAN: {
        const plan_t *pl = (const plan_t *)(const void *)p;
        fprintf(out, "%*s%s = [", indent, "", k->name);
        for (int l = 0; l < pl->nlevels; l++)
            fprintf(out, "%s\"%s:%lld\"", l ? ", " : "",
                    plan_strategy_name(pl->strategy[l]), (long long)pl->degree[l]);
        fputs("];\n", out);
        return true;
    }
    default:
        return false;
    }
}

/* The text of a string-valued key (a name, a text, an enum by its
 * name), or NULL when it is not stated. */
static const char *load_write_text_of(const load_key *k, const void *obj, char *buf,
                                      size_t size)
{
    const char *p = (const char *)obj + k->offset;
    int iv = 0;
    if (k->type == LT_STRING || k->type == LT_TEXT)
        return p;
    memcpy(&iv, p, sizeof iv);
    switch (k->type) {
    case LT_PP_SEND:
        return iv == STACK_PP_SCATTER_GATHER ? "scatter_gather" : "full";
    case LT_SCHEDULER:
        return iv == TASK_SCHED_STATIC ? "static" : "continuous";
    case LT_FRONT_END:
        return iv == TASK_FRONT_DYNAMO ? "dynamo" : "engine";
    case LT_WDTYPE:
        return task_weight_name(iv); /* NULL: not stated, the compute dtype */
    case LT_KVDTYPE: /* 0: not stated, the compute dtype */
        return iv <= 0 ? NULL : load_enum_name(LT_DTYPE, iv - 1, buf, size);
    case LT_MODEL_KIND:
        return model_kind_name((model_kind)iv);
    case LT_TASK_KIND:
        return task_kind_name((task_kind)iv);
    case LT_MLP:
        return iv == MODEL_MLP_SWIGLU ? "swiglu" : "gelu";
    default:
        return load_enum_name(k->type, iv, buf, size);
    }
}

/* Writes "key = value;" for key k of the object obj; nothing for a
 * value with no configuration form (a non-finite number, an unnamed
 * enum value: the defaults). */
static void load_write_value(FILE *out, const load_key *k, const void *obj,
                             int indent)
{
    if (load_write_literal(out, k, obj, indent))
        return;
    char buf[PLAN_TEXT_MAX];
    const char *text = load_write_text_of(k, obj, buf, sizeof buf);
    if (!text)
        return;
    fprintf(out, "%*s%s = ", indent, "", k->name);
    load_write_string(out, text);
    fputs(";\n", out);
}

void load_write_keys(FILE *out, load_ns ns, const void *obj, model_kind kind,
                     int indent,
                     void (*skipped)(const char *key, void *arg), void *arg)
{
    const load_table *table = load_keys_table(ns);
    unsigned kinds = kind == MODEL_DLRM ? LK_DLRM : LK_LLM;
    bool is_task = ns == LOAD_NS_TASK || ns == LOAD_NS_DTASK;
    /* a task's keys for other task types: the loaders refuse them */
    task_kind tk = is_task ? ((const task_t *)obj)->kind : TASK_PRETRAIN;
    for (size_t i = 0; i < table->n; i++) {
        const load_key *k = &table->keys[i];
        if (!(k->kinds & kinds) || k->type == LT_NOTE)
            continue;
        if (is_task && k->types && !(k->types & (1u << tk)))
            continue;
        /* a training stack's serving facts: not stated, so not written */
        if (ns == LOAD_NS_STACK && !((const stack_desc *)obj)->serving &&
            load_stack_is_serving_fact(k->name))
            continue;
        /* speculative decoding's keys only with draft tokens: the
         * loader refuses spec_tokens without an acceptance rate, and
         * without draft tokens they change nothing */
        if (ns == LOAD_NS_DTASK && ((const task_t *)obj)->detailed.spec_tokens <= 0 &&
            strncmp(k->name, "spec_", 5) == 0)
            continue;
        if (k->type == LT_ANY) {
            if (skipped)
                skipped(k->name, arg);
            continue;
        }
        load_write_value(out, k, obj, indent);
    }
}
