/*
 * load_point.c - reading a whole point file: fidelity, model, system,
 * task, stack and (detailed serving) a disaggregated prefill pool,
 * resolved in the file or the catalogues, then checked against the
 * fidelity's rules (eval_check) with the failing key's line.
 *
 * Cross-key checks of a detailed strategy (against each other and the
 * hardware) live here, after the task and system are both read.
 */
#include "load.h"
#include "load_key.h"

#include "../../cost/detailed.h"
#include "../suggest.h"
#include "range.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define PFK(n, t, r, d, ...) \
    LOAD_KEY(#n, t, offsetof(point_prefill, n), LK_LLM, r, d, __VA_ARGS__)
static const load_key prefill_keys[] = {
    LOAD_KEY("hardware", LT_ANY, 0, LK_LLM, LR_NO,
        "the prefill pool's hardware: a group or a name in list 'hardware' (hardware.cfg; "
        "default: the system's)", LOAD_NONUM),
    LOAD_KEY("devices", LT_ANY, 0, LK_LLM, LR_YES,
        "devices of the prefill pool (a whole number of tp*pp replicas), or \"auto\": as "
        "many replicas as the decode pool's request rate needs (rate matching)",
        LOAD_INT(1, RANGE_P24, "devices")),
    PFK(tp, LT_INT, LR_NO, "a prefill replica's tensor-parallel degree (default: the task's tp)",
        LOAD_INT(0, RANGE_P24, "devices (tensor-parallel degree)")),
    PFK(pp, LT_INT, LR_NO, "a prefill replica's pipeline stages (default 1)",
        LOAD_INT(0, RANGE_P24, "stages (pipeline-parallel degree)")),
    PFK(attn_dp, LT_INT, LR_NO, "a prefill replica's attention data-parallel ranks, dividing "
        "its tp (default 1: none; the decode pool's attn_dp is its own)",
        LOAD_INT(0, RANGE_P16, "ranks")),
    PFK(ep, LT_INT, LR_NO, "a prefill replica's expert-parallel degree (default 1)",
        LOAD_INT(0, RANGE_P24, "devices (expert-parallel degree)")),
    PFK(etp, LT_INT, LR_NO, "a prefill replica's expert tensor parallelism, dividing its tp "
        "(default: its tp)", LOAD_INT(0, RANGE_P24, "devices")),
    PFK(max_seqs, LT_INT, LR_NO, "a prefill worker's batch limit per attention rank "
        "(TensorRT-LLM's prefill workers max_batch_size 1; default: the stack's)",
        LOAD_INT(0, RANGE_P24, "sequences")),
    PFK(token_budget, LT_INT, LR_NO, "a prefill worker's tokens per step (default: the "
        "stack's for its GPU's memory)", LOAD_INT(0, RANGE_P24, "tokens per step")),
    LOAD_KEY("devices_per_node", LT_INT, offsetof(point_prefill, system.devices_per_node), LK_LLM,
        LR_NO, "its scale-up domain (default: the system's on the system's hardware, else the "
        "hardware's)",
        LOAD_INT(0, RANGE_P24, "devices/node")),
    LOAD_KEY("nic_gbps_per_device", LT_FLOAT, offsetof(point_prefill, system.nic_gbps_per_device),
        LK_LLM, LR_NO, "its scale-out bandwidth per device, Gb/s one direction (default: the "
        "system's on the system's hardware, else the hardware's)", LOAD_FLOAT_OR0(1e-3, 1e9, "Gb/s per device, one direction")),
    LOAD_KEY("kv_transfer", LT_ANY, 0, LK_LLM, LR_NO,
        "\"after_prefill\" (default: vLLM, SGLang, TensorRT-LLM send the KV when the prompt is "
        "done) or \"layerwise\" (each layer's KV sent behind the next layer's prefill)",
        LOAD_NONUM),
};

const load_table load_prefill_table = {prefill_keys, NKEYS(prefill_keys)};

static const char *const point_keys[] = {"fidelity", "model", "system", "task",
                                         "stack", "models", "systems", "stacks",
                                         "hardware", "prefill"};

static const config_setting_t *load_where(const config_setting_t *task,
                                          const char *where)
{
    if (where && strcmp(where, "dense plan") == 0)
        return load_value_member_or(task, "dense");
    if (where && strcmp(where, "embedding plan") == 0)
        return load_value_member_or(task, "embedding");
    return task;
}

/* Strategy keys that contradict each other or the hardware are refused
 * with the key's line (issue 19: they were evaluated as something else
 * without a word). */
static int load_point_task_consistent(const config_setting_t *g, task_t *t,
                                      const hw_t *hw, load_err *err)
{
    task_detailed_t *d = &t->detailed;
    /* inference serves global_batch concurrent sequences over dp
     * replicas: the micro-batch (a replica's share) follows from it, as
     * in a sweep; one that disagrees is refused (it was evaluated with
     * micro_batch x dp sequences, the global batch ignored) */
    if (t->kind == TASK_INFERENCE && d->global_batch > 0 && !d->micro_batch_auto) {
        int64_t dp = d->dp > 0 ? d->dp : 1;
        if (d->micro_batch > 0 && d->micro_batch * dp != d->global_batch) {
            load_fail(err, load_value_member_or(g, "global_batch"), "key 'global_batch': "
                      "%lld sequences, but micro_batch %lld x dp %lld serve %lld "
                      "(inference: give one of global_batch and micro_batch)",
                      (long long)d->global_batch, (long long)d->micro_batch,
                      (long long)dp, (long long)(d->micro_batch * dp));
            return -1;
        }
        if (d->global_batch % dp != 0) {
            load_fail(err, load_value_member_or(g, "global_batch"), "key 'global_batch': "
                      "%lld sequences do not split evenly over dp %lld replicas",
                      (long long)d->global_batch, (long long)dp);
            return -1;
        }
        d->micro_batch = d->global_batch / dp;
    }
    if (d->attn_dp > 1 && (d->tp < 1 || d->tp % d->attn_dp != 0)) {
        load_fail(err, load_value_member_or(g, "attn_dp"), "key 'attn_dp': %lld attention "
                  "data-parallel ranks must divide tp (%lld)", (long long)d->attn_dp,
                  (long long)d->tp);
        return -1;
    }
    if (d->vpp > 1 && d->pp <= 1) {
        load_fail(err, load_value_member_or(g, "vpp"), "key 'vpp': %lld virtual stages "
                  "need a pipeline (pp > 1); pp is %lld", (long long)d->vpp,
                  (long long)d->pp);
        return -1;
    }
    if (d->vpp > 1 && d->schedule == TASK_SCHEDULE_GPIPE) {
        load_fail(err, load_value_member_or(g, "schedule"), "key 'schedule': \"gpipe\" "
                  "has no virtual stages; vpp is %lld (use \"1f1b\" or "
                  "\"interleaved\", or vpp = 1)", (long long)d->vpp);
        return -1;
    }
    static const char *const peak[HW_NDTYPES][2] = {
        {"FP32", "peak_fp32_flops"}, {"TF32", "peak_tf32_flops"},
        {"BF16", "peak_bf16_flops"}, {"FP8", "peak_fp8_flops"},
        {"INT8", "peak_int8_ops"},   {"FP4", "peak_fp4_flops"}};
    if (d->dtype >= 0 && d->dtype < HW_NDTYPES && !(hw->peak_flops[d->dtype] > 0)) {
        const config_setting_t *ps = load_value_member_or(g, "precision");
        const char *txt = config_setting_get_string(ps);
        load_fail(err, ps, "key 'precision': \"%s\" on hardware '%s', which has no %s "
                  "peak (%s 0)", txt ? txt : "?", hw->name, peak[d->dtype][0],
                  peak[d->dtype][1]);
        return -1;
    }
    return 0;
}

int load_point_prefill_pool(const config_setting_t *g, int64_t tp_default, point_prefill *f,
                            load_err *err)
{
    memset(f, 0, sizeof *f);
    if (load_value_group(g, "prefill", prefill_keys, NKEYS(prefill_keys), LK_LLM, 0, f, err))
        return -1;
    f->on = true;
    if (f->tp <= 0 && tp_default <= 0) {
        load_fail(err, g, "key 'tp' in prefill: a sweep's prefill pool states its "
                  "tensor-parallel degree (the decode pool's varies with the strategy)");
        return -1;
    }
    f->tp = f->tp > 0 ? f->tp : tp_default;
    f->pp = f->pp > 0 ? f->pp : 1;
    const config_setting_t *ds = config_setting_get_member(g, "devices");
    const char *dtext = config_setting_get_string(ds);
    const load_key *dk = load_keys_find(&load_prefill_table, "devices");
    if (dtext && strcmp(dtext, "auto") == 0) {
        f->rate_matched = true;
        f->system.devices = f->tp * f->pp; /* one replica; the evaluation sizes it */
    } else if (!dtext && (config_setting_type(ds) == CONFIG_TYPE_INT ||
                          config_setting_type(ds) == CONFIG_TYPE_INT64) &&
               (double)config_setting_get_int64(ds) >= dk->lo &&
               (double)config_setting_get_int64(ds) <= dk->hi) {
        f->system.devices = config_setting_get_int64(ds);
    } else {
        load_fail(err, ds, "key 'devices' in prefill: expected an integer from %lld to %lld "
                  "or \"auto\"", (long long)dk->lo, (long long)dk->hi);
        return -1;
    }
    const config_setting_t *ks = config_setting_get_member(g, "kv_transfer");
    if (ks) {
        const char *kt = config_setting_get_string(ks);
        if (!kt || (strcmp(kt, "after_prefill") != 0 && strcmp(kt, "layerwise") != 0)) {
            load_fail(err, ks, "key 'kv_transfer' in prefill: expected \"after_prefill\" "
                      "or \"layerwise\"");
            return -1;
        }
        f->layerwise = strcmp(kt, "layerwise") == 0;
    }
    return 0;
}

int load_point_prefill_derive(const config_setting_t *g, point_prefill *f, load_err *err)
{
    const char *bad = NULL;
    status_code st = topo_system_derive(&f->system, &bad);
    if (st == STATUS_OK)
        return 0;
    load_fail(err, load_value_member_or(g, bad && strcmp(bad, "devices_per_node") == 0 ? bad
                                                                             : "devices"),
              "prefill pool of %lld devices: %s (key %s)", (long long)f->system.devices,
              status_text(st), bad ? bad : "?");
    return -1;
}

/* A detailed serving point's prefill pool (`prefill = { ... }`,
 * cost/detailed/serve_disagg.c): the point's system and task are the
 * decode pool. */
static int load_prefill(const config_setting_t *g, const char *configs_dir, point_t *p,
                        load_err *err)
{
    point_prefill *f = &p->prefill;
    if (p->task.kind != TASK_INFERENCE || p->model.kind != MODEL_LLM) {
        load_fail(err, g, "key 'prefill': a prefill pool serves an LLM inference task "
                  "(task type \"inference\")");
        return -1;
    }
    if (load_point_prefill_pool(g, p->task.detailed.tp > 0 ? p->task.detailed.tp : 1, f, err))
        return -1;
    snprintf(f->system.name, sizeof f->system.name, "%s-prefill", p->system.name);
    int rc = -1, aux_open = 0;
    config_t aux;
    const config_setting_t *hm = config_setting_get_member(g, "hardware");
    eval_prefill_network(f, &p->system, hm == NULL);
    if (hm) {
        const config_setting_t *hs = load_entry(hm, "hardware", "hardware.cfg", configs_dir,
                                                NULL, &aux, &aux_open, err);
        if (!hs || load_hw_in(hs, configs_dir, NULL, &f->system.hw, err) != 0)
            goto out;
    }
    rc = load_point_prefill_derive(g, f, err);
out:
    if (aux_open)
        config_destroy(&aux);
    return rc;
}

/* The catalogues a point file opens for names it does not define. */
typedef struct load_point_catalogues {
    config_t models, systems;
    int models_open, systems_open;
} load_point_catalogues;

/* The point's keys (each known) and its fidelity (default madmax). */
static int load_point_head(const config_setting_t *root, point_t *p, load_err *err)
{
    for (int i = 0; i < config_setting_length(root); i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        bool known = false;
        for (size_t k = 0; k < NKEYS(point_keys); k++)
            if (strcmp(point_keys[k], config_setting_name(s)) == 0)
                known = true;
        if (!known) {
            suggest sg;
            suggest_init(&sg, config_setting_name(s));
            for (size_t k = 0; k < NKEYS(point_keys); k++)
                suggest_offer(&sg, point_keys[k]);
            char hint[SUGGEST_NAME_MAX + 32];
            load_fail(err, s, "unknown key '%s' in point%s (expected fidelity, "
                      "model, system, task, stack, prefill)", config_setting_name(s),
                      suggest_hint(&sg, hint, sizeof hint));
            return -1;
        }
    }
    const config_setting_t *fs = config_setting_get_member(root, "fidelity");
    p->fidelity = EVAL_MADMAX;
    if (fs) {
        const char *fn = config_setting_get_string(fs);
        int f = fn ? eval_fidelity_parse(fn) : -1;
        if (f < 0) {
            load_fail(err, fs, "key 'fidelity': expected \"madmax\" or \"detailed\"");
            return -1;
        }
        p->fidelity = (eval_fidelity)f;
    }
    static const char *const need[] = {"model", "system", "task"};
    if (p->fidelity != EVAL_DETAILED && config_setting_get_member(root, "prefill")) {
        load_fail(err, config_setting_get_member(root, "prefill"), "key 'prefill': a "
                  "disaggregated prefill pool needs fidelity = \"detailed\"");
        return -1;
    }
    for (size_t k = 0; k < NKEYS(need); k++)
        if (!config_setting_get_member(root, need[k])) {
            load_fail(err, root, "missing key '%s' in point", need[k]);
            return -1;
        }
    return 0;
}

/* A detailed point that breaks a rule of the fidelity: its *where
 * (cost/detailed/rules.c: "PART", "PART.KEY" or "PART.KEY: why") points
 * the message at the key; part[] the settings of the model, system,
 * task, stack and prefill pool (NULL where the point has none: the task
 * stands in). */
static void load_point_rule_fail(const config_setting_t *const part[5], const point_t *p,
                                 status_code st, const char *where, load_err *err)
{
    static const char *const names[5] = {"model", "system", "task", "stack", "prefill"};
    if (!where)
        where = "task";
    size_t plen = strcspn(where, ".:");
    int k = 2;
    for (int i = 0; i < 5; i++)
        if (strlen(names[i]) == plen && strncmp(names[i], where, plen) == 0)
            k = i;
    const config_setting_t *at = part[k] ? part[k] : part[2];
    const char *why = strstr(where, ": ");
    why = why ? why + 2 : status_text(st);
    char key[64] = "";
    if (where[plen] == '.') {
        snprintf(key, sizeof key, "%.*s", (int)strcspn(where + plen + 1, ":"),
                 where + plen + 1);
        at = load_value_member_or(at, key);
    }
    if (key[0])
        load_fail(err, at, "key '%s' of the %s on system '%s' (%lld devices): %s "
                  "(rule %s)", key, names[k], p->system.name,
                  (long long)p->system.devices, why, status_name(st));
    else
        load_fail(err, at, "%s on system '%s' (%lld devices): %s (rule %s)", names[k],
                  p->system.name, (long long)p->system.devices, why, status_name(st));
}

/* A detailed point: model, system (its cluster_t mirror), stack, task
 * with the stack's defaults, prefill pool, then the fidelity's rules. */
static int load_point_detailed(const config_setting_t *root, const char *configs_dir,
                               load_point_catalogues *cat, point_t *p, load_err *err)
{
    const config_setting_t *dm = load_resolve(
        config_setting_get_member(root, "model"), "models",
        "detailed_models.cfg", configs_dir, &cat->models, &cat->models_open, err);
    if (!dm || load_model_detailed(dm, &p->model, err))
        return -1;
    const config_setting_t *ds = load_resolve(
        config_setting_get_member(root, "system"), "systems",
        "detailed_systems.cfg", configs_dir, &cat->systems, &cat->systems_open, err);
    if (!ds || load_system_detailed(ds, configs_dir, NULL, &p->system, err))
        return -1; /* a pod larger than the system: load_system_pod_check */
    snprintf(p->cluster.name, sizeof p->cluster.name, "%s", p->system.name);
    p->cluster.devices = p->system.devices;
    p->cluster.devices_per_node = p->system.topo.level[0].span;
    p->cluster.nodes = p->system.devices / p->cluster.devices_per_node;
    const config_setting_t *dt = config_setting_get_member(root, "task");
    if (load_stack_of_point(root, configs_dir, &p->stack, err) ||
        load_task_detailed(dt, p->model.kind, &p->task, err))
        return -1;
    load_stack_task_defaults(dt, &p->stack, &p->task);
    if (load_point_task_consistent(dt, &p->task, &p->system.hw, err) != 0)
        return -1;
    const config_setting_t *pf = config_setting_get_member(root, "prefill");
    if (pf && load_prefill(pf, configs_dir, p, err) != 0)
        return -1;
    /* a disaggregated deployment runs its closed loop, open loop or SLA
     * search and no burst (cost/detailed/serve/disagg.c sv_disagg_solve):
     * its requests changed nothing (issue 29) */
    if (pf && p->task.detailed.requests > 0) {
        load_fail(err, config_setting_get_member(dt, "requests"), "key 'requests': a "
                  "disaggregated deployment (prefill = { ... }) sends no burst of requests; "
                  "it changes nothing");
        return -1;
    }
    /* nor does it model a client's first round (ttft.c's, colocated) */
    char why[300];
    const task_detailed_t *td = &p->task.detailed;
    const char *idle = load_serving_idle_key(td->concurrency, td->ttft_max_s, td->tpot_max_s,
                                             td->rounds, pf != NULL, why, sizeof why);
    if (idle) {
        load_fail(err, config_setting_get_member(dt, idle), "%s", why);
        return -1;
    }
    const char *dwhere = NULL;
    status_code dst = eval_check(p, &dwhere);
    if (dst != STATUS_OK) {
        const config_setting_t *part[5] = {dm, ds, dt,
                                           config_setting_get_member(root, "stack"), pf};
        load_point_rule_fail(part, p, dst, dwhere, err);
        return -1;
    }
    return 0;
}

/* A MAD-Max point: model, system and task, then the fidelity's rules
 * (a plan at fault named with its text). */
static int load_point_madmax(const config_setting_t *root, const char *configs_dir,
                             load_point_catalogues *cat, point_t *p, load_err *err)
{
    const config_setting_t *ms = load_resolve(
        config_setting_get_member(root, "model"), "models", "models.cfg",
        configs_dir, &cat->models, &cat->models_open, err);
    if (!ms || load_model(ms, &p->model, err))
        return -1;
    const config_setting_t *ss = load_resolve(
        config_setting_get_member(root, "system"), "systems", "systems.cfg",
        configs_dir, &cat->systems, &cat->systems_open, err);
    if (!ss || load_system(ss, configs_dir, NULL, &p->cluster, err))
        return -1;
    const config_setting_t *ts = config_setting_get_member(root, "task");
    if (load_task(ts, &p->model, &p->task, err))
        return -1;
    const char *where = NULL;
    status_code st = eval_check(p, &where);
    if (st != STATUS_OK) {
        char plan[PLAN_TEXT_MAX] = "";
        if (where && strcmp(where, "dense plan") == 0)
            plan_format(&p->task.dense, plan, sizeof plan);
        else if (where && strcmp(where, "embedding plan") == 0)
            plan_format(&p->task.emb, plan, sizeof plan);
        load_fail(err, load_where(ts, where),
                  "%s%s%s%s on system '%s' (%lld devices, %lld per node): "
                  "%s (rule %s)",
                  where ? where : "task", *plan ? " \"" : "", plan,
                  *plan ? "\"" : "", p->cluster.name,
                  (long long)p->cluster.devices,
                  (long long)p->cluster.devices_per_node, status_text(st),
                  status_name(st));
        return -1;
    }
    return 0;
}

int load_point(const char *path, const char *configs_dir, point_t *p,
               load_err *err)
{
    config_t cfg;
    memset(p, 0, sizeof *p);
    if (load_open(&cfg, path, configs_dir, err) != 0)
        return -1;
    int rc = load_point_root(config_root_setting(&cfg), configs_dir, p, err);
    config_destroy(&cfg);
    return rc;
}

int load_point_root(const config_setting_t *root, const char *configs_dir, point_t *p,
                    load_err *err)
{
    load_point_catalogues cat = {.models_open = 0, .systems_open = 0};
    memset(p, 0, sizeof *p);
    int rc = load_point_head(root, p, err);
    if (rc == 0)
        rc = p->fidelity == EVAL_DETAILED
                 ? load_point_detailed(root, configs_dir, &cat, p, err)
                 : load_point_madmax(root, configs_dir, &cat, p, err);
    if (cat.models_open)
        config_destroy(&cat.models);
    if (cat.systems_open)
        config_destroy(&cat.systems);
    return rc;
}
