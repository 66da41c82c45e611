/*
 * spec_task.c - a sweep spec's tasks and global batches (format:
 * spec_load.h), and the task keys of a model kind the spec lacks.
 *
 * Invariant after the axes are read: every task has a type, a name no
 * other task has, and only the keys its type (and the spec's model
 * kinds) read; every batch is listed once with the model kinds it
 * applies to.
 */
#include "spec_task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost/detailed.h"
#include "speckeys.h"

#define SPEC_DECODE_TOKENS 128 /* detailed inference default (speckeys.c) */

/* Serving keys of an inference task: concurrency (an integer, "max" or
 * "sla") and the SLA (ttft_max_s, tpot_max_s). */
static int spec_task_serving(const config_setting_t *e, spec_task *t, load_err *err)
{
    static const char *const lim[2] = {"ttft_max_s", "tpot_max_s"};
    double *limv[2] = {&t->ttft_max_s, &t->tpot_max_s};
    const config_setting_t *cs = config_setting_get_member(e, "concurrency");
    for (int j = 0; j < 3; j++) {
        const config_setting_t *ks = j < 2 ? config_setting_get_member(e, lim[j]) : cs;
        if (ks && t->kind != TASK_INFERENCE) {
            load_fail(err, ks, "task '%s': key '%s' only applies to type \"inference\"",
                      t->name, j < 2 ? lim[j] : "concurrency");
            return -1;
        }
    }
    for (int j = 0; j < 2; j++) {
        const config_setting_t *ks = config_setting_get_member(e, lim[j]);
        if (!ks)
            continue;
        int ty = config_setting_type(ks);
        double v = ty == CONFIG_TYPE_FLOAT ? config_setting_get_float(ks)
                   : ty == CONFIG_TYPE_INT || ty == CONFIG_TYPE_INT64
                       ? (double)config_setting_get_int64(ks)
                       : -1.0;
        if (!(v > 0.0 && v <= 3600.0)) {
            load_fail(err, ks, "key '%s': expected a number of seconds in (0, 3600]", lim[j]);
            return -1;
        }
        *limv[j] = v;
    }
    static const char *const knob[3] = {"max_seqs", "token_budget", "rounds"};
    int64_t *knobv[3] = {&t->max_seqs, &t->token_budget, &t->rounds};
    for (int j = 0; j < 3; j++) {
        int got = speckeys_int(SPECKEYS_TASK, e, knob[j], knobv[j], err);
        if (got < 0)
            return -1;
        if (got && t->kind != TASK_INFERENCE) {
            load_fail(err, config_setting_get_member(e, knob[j]), "task '%s': key '%s' only "
                      "applies to type \"inference\"", t->name, knob[j]);
            return -1;
        }
    }
    const config_setting_t *fe = config_setting_get_member(e, "front_end");
    if (fe) {
        const char *ft = config_setting_get_string(fe);
        if (t->kind != TASK_INFERENCE || !ft ||
            (strcmp(ft, "engine") != 0 && strcmp(ft, "dynamo") != 0)) {
            load_fail(err, fe, "task '%s': key 'front_end': \"engine\" or \"dynamo\" of an "
                      "\"inference\" task", t->name);
            return -1;
        }
        t->front_end = strcmp(ft, "dynamo") == 0 ? TASK_FRONT_DYNAMO : TASK_FRONT_ENGINE;
    }
    if (cs) {
        int ty = config_setting_type(cs);
        const char *text = ty == CONFIG_TYPE_STRING ? config_setting_get_string(cs) : NULL;
        if (text && (strcmp(text, "max") == 0 || strcmp(text, "sla") == 0)) {
            t->concurrency = strcmp(text, "max") == 0 ? TASK_CONC_MAX : TASK_CONC_SLA;
        } else if ((ty == CONFIG_TYPE_INT || ty == CONFIG_TYPE_INT64) &&
                   config_setting_get_int64(cs) >= 1 &&
                   config_setting_get_int64(cs) <= SPEC_MAX_REQUESTS) {
            t->concurrency = (int64_t)config_setting_get_int64(cs);
        } else {
            load_fail(err, cs, "key 'concurrency': expected an integer from 1 to %lld, "
                      "\"max\" or \"sla\"", (long long)SPEC_MAX_REQUESTS);
            return -1;
        }
    }
    /* the point loader's rules of keys that change nothing (load.h) */
    char why[300];
    const char *idle = load_serving_idle_key(t->concurrency, t->ttft_max_s, t->tpot_max_s,
                                             t->rounds,
                                             config_setting_get_member(e, "prefill") != NULL,
                                             why, sizeof why);
    if (idle) {
        load_fail(err, config_setting_get_member(e, idle), "task '%s': %s", t->name, why);
        return -1;
    }
    return 0;
}

/* A serving task's disaggregated prefill pool (`prefill = { ... }`, the
 * keys of a point's, load.h load_point_prefill_pool, with tp required): its
 * hardware a name of the spec's list `hardware` or of hardware.cfg, or a
 * group; without one, each point's system lends its own. */
static int spec_task_prefill(const config_setting_t *e, spec_task *t, const config_setting_t *own,
                             spec_catalogue *cat, const char *configs_dir, load_err *err)
{
    const config_setting_t *g = config_setting_get_member(e, "prefill");
    if (!g)
        return 0;
    if (t->kind != TASK_INFERENCE || !config_setting_is_group(g)) {
        load_fail(err, g, "task '%s': key 'prefill' is a group { hardware; devices; tp; "
                  "... } of an \"inference\" task (a disaggregated prefill pool)", t->name);
        return -1;
    }
    if (load_point_prefill_pool(g, 0, &t->prefill, err))
        return -1;
    snprintf(t->prefill.system.name, sizeof t->prefill.system.name, "%s-prefill", t->name);
    const config_setting_t *hm = config_setting_get_member(g, "hardware");
    if (!hm)
        return 0;
    const config_setting_t *hg = spec_catalogue_hw(hm, own, cat, configs_dir, err);
    if (!hg || load_hw_in(hg, configs_dir, cat->reads, &t->prefill.system.hw, err) != 0)
        return -1;
    t->prefill_hw = true;
    return load_point_prefill_derive(g, &t->prefill, err);
}

/* Task i of the list: a type, or a group of a task's keys (each known
 * to the fidelity and read in its row's range); 0, or -1 with err set. */
static int spec_task_one(spec *sp, const config_setting_t *e, spec_task *t,
                         const config_setting_t *own, spec_catalogue *cat,
                         const char *configs_dir, load_err *err)
{
    t->min_frozen_layer = -1;
    t->dtype = HW_BF16;
    t->decode_tokens = SPEC_DECODE_TOKENS;
    const config_setting_t *ts = e;
    if (config_setting_is_group(e)) {
        for (int k = 0; k < config_setting_length(e); k++) {
            const config_setting_t *m = config_setting_get_elem(e, (unsigned)k);
            const char *kn = config_setting_name(m);
            if (!speckeys_known(SPECKEYS_TASK, 1u << sp->fidelity, kn)) {
                char msg[800];
                load_fail(err, m, "%s", speckeys_unknown(SPECKEYS_TASK, 1u << sp->fidelity,
                                                         kn, "a task", msg, sizeof msg));
                return -1;
            }
        }
        ts = config_setting_get_member(e, "type");
        if (!ts) {
            load_fail(err, e, "missing key 'type' in task");
            return -1;
        }
    }
    const char *type = config_setting_get_string(ts);
    int k = type ? task_kind_parse(type) : -1;
    if (k < 0) {
        load_fail(err, ts, "key 'tasks': task type must be \"pretrain\", "
                  "\"finetune\" or \"inference\"");
        return -1;
    }
    t->kind = (task_kind)k;
    snprintf(t->name, sizeof t->name, "%s", type);
    if (!config_setting_is_group(e))
        return 0;
    if (speckeys_label(e, "name", t->name, sizeof t->name, err) ||
        speckeys_bool(e, "freeze_emb", &t->freeze_emb, err) ||
        speckeys_bool(e, "freeze_dense", &t->freeze_dense, err) ||
        speckeys_bool(e, "freeze_top_mlp", &t->freeze_top_mlp, err) ||
        speckeys_bool(e, "freeze_bot_mlp", &t->freeze_bot_mlp, err))
        return -1;
    const config_setting_t *ps = config_setting_get_member(e, "precision");
    if (ps) {
        const char *pt = config_setting_get_string(ps);
        int d = pt ? hw_dtype_parse(pt) : -1;
        if (d < 0) {
            load_fail(err, ps, "key 'precision': expected \"bf16\", "
                      "\"fp16\", \"fp8\", \"fp4\", \"tf32\" or \"fp32\"");
            return -1;
        }
        t->dtype = d;
    }
    static const char *const tok[2] = {"prompt_tokens", "decode_tokens"};
    int64_t *tokv[2] = {&t->prompt_tokens, &t->decode_tokens};
    for (int j = 0; j < 2; j++) {
        int64_t v = 0;
        int got = speckeys_int(SPECKEYS_TASK, e, tok[j], &v, err);
        if (got < 0)
            return -1;
        if (got && t->kind != TASK_INFERENCE) {
            load_fail(err, config_setting_get_member(e, tok[j]), "task '%s': key '%s' only "
                      "applies to type \"inference\"", t->name, tok[j]);
            return -1;
        }
        if (got)
            *tokv[j] = v;
    }
    if (spec_task_serving(e, t, err) || spec_task_prefill(e, t, own, cat, configs_dir, err))
        return -1;
    int mf = speckeys_int(SPECKEYS_TASK, e, "min_frozen_layer", &t->min_frozen_layer, err);
    int fl = mf < 0 ? -1 : speckeys_int(SPECKEYS_TASK, e, "frozen_layers", &t->frozen_layers,
                                        err);
    if (fl < 0)
        return -1;
    if (t->kind != TASK_FINETUNE &&
        (t->freeze_emb || t->freeze_dense || t->freeze_top_mlp ||
         t->freeze_bot_mlp || mf || fl)) {
        load_fail(err, e, "task '%s': freeze keys only apply to type "
                  "\"finetune\"", t->name);
        return -1;
    }
    return 0;
}

int spec_task_axis(spec *sp, const config_setting_t *s, const config_setting_t *own,
                   spec_catalogue *cat, const char *configs_dir, load_err *err)
{
    if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
        load_fail(err, s, "key 'tasks': expected a list of task types or "
                  "groups");
        return -1;
    }
    int n = config_setting_length(s);
    if (n == 0) {
        load_fail(err, s, "key 'tasks': empty list");
        return -1;
    }
    sp->tasks = calloc((size_t)n, sizeof *sp->tasks);
    if (!sp->tasks) {
        load_fail(err, s, "key 'tasks': out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (spec_task_one(sp, config_setting_get_elem(s, (unsigned)i), &sp->tasks[i], own,
                          cat, configs_dir, err))
            return -1;
    sp->ntasks = n;
    /* two tasks of one name (unnamed groups take their type's) would be
     * evaluated apart and merged by `best --group task`: refused naming
     * both places (issue 19) */
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (strcmp(sp->tasks[i].name, sp->tasks[j].name) != 0)
                continue;
            const config_setting_t *a = config_setting_get_elem(s, (unsigned)j);
            const char *fa = config_setting_source_file(a);
            load_fail(err, config_setting_get_elem(s, (unsigned)i), "key 'tasks': "
                      "two tasks are named \"%s\" (the first at %s:%d); a task is "
                      "named by its type unless it gives name = \"...\": name them "
                      "apart", sp->tasks[i].name, fa ? fa : "?",
                      config_setting_source_line(a));
            return -1;
        }
    return 0;
}

/* global_batch: an array for every model, or a group of arrays per model
 * kind { llm = [...]; dlrm = [...]; } (an LLM's batch is sequences, a
 * DLRM's samples: their sensible values differ by orders of magnitude).
 * The axis is the llm values then the dlrm values, each value once with
 * the kinds it applies to. */
int spec_task_batches(spec *sp, const config_setting_t *s, load_err *err)
{
    static const char *const kinds[2] = {"llm", "dlrm"};
    static const model_kind kind_of[2] = {MODEL_LLM, MODEL_DLRM};
    const config_setting_t *parent = config_setting_parent(s);
    bool grouped = config_setting_is_group(s);
    if (grouped) {
        for (int k = 0; k < config_setting_length(s); k++) {
            const config_setting_t *m = config_setting_get_elem(s, (unsigned)k);
            const char *n = config_setting_name(m);
            if (strcmp(n, kinds[0]) != 0 && strcmp(n, kinds[1]) != 0) {
                load_fail(err, m, "unknown key '%s' in global_batch (expected "
                          "llm, dlrm)", n);
                return -1;
            }
        }
        if (config_setting_length(s) == 0) {
            load_fail(err, s, "key 'global_batch': empty group (expected "
                      "{ llm = [...]; dlrm = [...]; })");
            return -1;
        }
    }
    for (int k = 0; k < (grouped ? 2 : 1); k++) {
        double *gb = NULL;
        int ngb = 0;
        const config_setting_t *g = grouped ? s : parent;
        const char *key = grouped ? kinds[k] : "global_batch";
        if (speckeys_numbers(SPECKEYS_TOP, "global_batch", g, key, true, 0, &gb, &ngb, err))
            return -1;
        unsigned mask = grouped ? 1u << kind_of[k] : (1u << MODEL_LLM) | (1u << MODEL_DLRM);
        int64_t *nb = realloc(sp->batches, (size_t)(sp->nbatches + ngb) * sizeof *nb);
        unsigned *nk = realloc(sp->batch_kinds,
                               (size_t)(sp->nbatches + ngb) * sizeof *nk);
        if (nb)
            sp->batches = nb;
        if (nk)
            sp->batch_kinds = nk;
        if (!nb || !nk) {
            free(gb);
            load_fail(err, s, "key 'global_batch': out of memory");
            return -1;
        }
        for (int i = 0; i < ngb; i++) {
            int64_t v = (int64_t)gb[i];
            int64_t j;
            for (j = 0; j < sp->nbatches && sp->batches[j] != v; j++)
                ;
            if (j == sp->nbatches) {
                sp->batches[sp->nbatches] = v;
                sp->batch_kinds[sp->nbatches++] = 0;
            }
            sp->batch_kinds[j] |= mask;
        }
        free(gb);
    }
    return 0;
}

/* Keys of a spec's tasks that only models of one kind read (the others
 * ignore them): with no model of that kind in the spec they would change
 * nothing, so they are refused with their line (issue 19: an LLM sweep
 * took freeze_top_mlp, a DLRM sweep decode_tokens, without a word). The
 * keys of one task type are spec_task_axis'. A global_batch list of a kind
 * the spec lacks stays allowed: it gives no valid point, and a space of
 * none is data (tests/test_empty.sh). */
int spec_task_kind_keys(const spec *sp, const config_setting_t *root, load_err *err)
{
    static const struct {
        const char *key;
        model_kind kind;
    } only[] = {
        {"freeze_top_mlp", MODEL_DLRM}, {"freeze_bot_mlp", MODEL_DLRM},
        {"freeze_dense", MODEL_LLM},    {"min_frozen_layer", MODEL_LLM},
        {"frozen_layers", MODEL_LLM},   {"prompt_tokens", MODEL_LLM},
        {"decode_tokens", MODEL_LLM},   {"concurrency", MODEL_LLM},
        {"ttft_max_s", MODEL_LLM},      {"tpot_max_s", MODEL_LLM},
        {"prefill", MODEL_LLM},         {"max_seqs", MODEL_LLM},
        {"token_budget", MODEL_LLM},    {"rounds", MODEL_LLM},
        {"front_end", MODEL_LLM},
    };
    unsigned present = 0;
    for (int64_t i = 0; i < sp->nmodels; i++)
        present |= 1u << sp->models[i].kind;
    const config_setting_t *ts = config_setting_get_member(root, "tasks");
    int nt = ts ? config_setting_length(ts) : 0;
    for (int i = 0; i < nt; i++) {
        const config_setting_t *g = config_setting_get_elem(ts, (unsigned)i);
        if (!config_setting_is_group(g))
            continue;
        for (size_t k = 0; k < sizeof only / sizeof only[0]; k++) {
            const config_setting_t *m = config_setting_get_member(g, only[k].key);
            if (!m || (present & (1u << only[k].kind)))
                continue;
            bool llm = only[k].kind == MODEL_LLM;
            load_fail(err, m, "key '%s' only applies to %s models; the spec's "
                      "models are all %s, which would ignore it", only[k].key,
                      llm ? "LLM" : "DLRM", llm ? "DLRMs" : "LLMs");
            return -1;
        }
    }
    return 0;
}
