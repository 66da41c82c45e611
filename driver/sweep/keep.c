/*
 * keep.c - the `keep` key of sweep specs (see keep.h and spec_load.h): what a
 * sweep keeps of its points, parsed into a spec_keep with file:line
 * errors; the reduction itself is worker/reduce.c.
 */
#include "keep.h"

#include <string.h>

/* A figure name of result_fields[] at setting e; its index, or -1. */
static int keep_figure(const config_setting_t *e, const char *key, load_err *err)
{
    const char *name = config_setting_get_string(e);
    const result_field *f = name ? result_find(name) : NULL;
    if (!f) {
        load_fail(err, e, "key '%s': expected the name of a figure of `madsweep "
                  "eval --json` (such as throughput_samples_per_s, tokens_per_s, "
                  "iteration_time_s, mfu)%s%s%s", key, name ? ", got \"" : "",
                  name ? name : "", name ? "\"" : "");
        return -1;
    }
    if (result_direction(f) == 0) {
        load_fail(err, e, "key '%s': '%s' has no better end (a signed figure, or a "
                  "code): a sweep keeps points by a rate, a time, memory, energy or "
                  "cost", key, f->name);
        return -1;
    }
    return (int)(f - result_fields);
}

/* `pareto = ["F1", "F2", ...]`: 2 to SPEC_KEEP_FIGS distinct figures. */
static int keep_load_pareto(spec_keep *k, const config_setting_t *par, load_err *err)
{
    int n = config_setting_is_array(par) ? config_setting_length(par) : 0;
    if (n < 2 || n > SPEC_KEEP_FIGS) {
        load_fail(err, par, "key 'pareto': expected an array of 2 to %d figure "
                  "names", SPEC_KEEP_FIGS);
        return -1;
    }
    k->mode = SPEC_KEEP_PARETO;
    k->nfig = n;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(par, (unsigned)i);
        if ((k->fig[i] = keep_figure(e, "pareto", err)) < 0)
            return -1;
        for (int j = 0; j < i; j++)
            if (k->fig[j] == k->fig[i]) {
                load_fail(err, e, "key 'pareto': figure '%s' given twice",
                          result_fields[k->fig[i]].name);
                return -1;
            }
    }
    return 0;
}

/* `group = [...]`: up to SPEC_KEEP_GROUP distinct keys (hardware: the
 * detailed fidelity's). */
static int keep_load_group(spec_keep *k, eval_fidelity fidelity, const config_setting_t *grp,
                           load_err *err)
{
    int n = config_setting_is_array(grp) || config_setting_is_list(grp)
                ? config_setting_length(grp) : -1;
    if (n < 0 || n > SPEC_KEEP_GROUP) {
        load_fail(err, grp, "key 'group': expected an array of keys (model, system, "
                  "stack, task, global_batch, strategy, devices, nodes, hardware)");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(grp, (unsigned)i);
        const char *name = config_setting_get_string(e);
        int key = name ? spec_key_parse(name) : -1;
        if (key < 0 || (key == SPEC_KEY_HARDWARE && fidelity != EVAL_DETAILED)) {
            load_fail(err, e, "key 'group': element %d: expected model, system, stack, "
                      "task, global_batch, strategy, devices, nodes or hardware "
                      "(hardware: detailed fidelity)", i);
            return -1;
        }
        for (int j = 0; j < k->ngroup; j++)
            if (k->group[j] == key) {
                load_fail(err, e, "key 'group': '%s' given twice", name);
                return -1;
            }
        k->group[k->ngroup++] = key;
    }
    return 0;
}

int keep_load(spec_keep *k, eval_fidelity fidelity, const config_setting_t *ks,
              load_err *err)
{
    memset(k, 0, sizeof *k);
    k->mode = SPEC_KEEP_ALL;
    if (!ks)
        return 0;
    const char *text = config_setting_get_string(ks);
    if (text && strcmp(text, "all") == 0)
        return 0;
    if (!config_setting_is_group(ks)) {
        load_fail(err, ks, "key 'keep': expected \"all\" or a group { top = K; "
                  "by = \"FIGURE\"; group = [...]; }, { pareto = [\"F1\", \"F2\"]; "
                  "group = [...]; } or { feasible = true; }");
        return -1;
    }
    static const char *const kkeys[] = {"top", "by", "pareto", "group", "feasible"};
    for (int i = 0; i < config_setting_length(ks); i++) {
        const config_setting_t *m = config_setting_get_elem(ks, (unsigned)i);
        bool known = false;
        for (size_t j = 0; j < sizeof kkeys / sizeof kkeys[0]; j++)
            known |= strcmp(config_setting_name(m), kkeys[j]) == 0;
        if (!known) {
            load_fail(err, m, "unknown key '%s' in keep (expected top, by, pareto, "
                      "group, feasible)", config_setting_name(m));
            return -1;
        }
    }
    const config_setting_t *top = config_setting_get_member(ks, "top"),
                           *by = config_setting_get_member(ks, "by"),
                           *par = config_setting_get_member(ks, "pareto"),
                           *grp = config_setting_get_member(ks, "group"),
                           *fea = config_setting_get_member(ks, "feasible");
    if (fea) {
        if (config_setting_type(fea) != CONFIG_TYPE_BOOL) {
            load_fail(err, fea, "key 'feasible': expected true or false");
            return -1;
        }
        k->feasible = config_setting_get_bool(fea) != 0;
    }
    if (top && par) {
        load_fail(err, par, "key 'keep': give either top or pareto, not both");
        return -1;
    }
    if (top) {
        int t = config_setting_type(top);
        if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) ||
            config_setting_get_int64(top) < 1 || config_setting_get_int64(top) > (1 << 20)) {
            load_fail(err, top, "key 'top': expected an integer from 1 to %d", 1 << 20);
            return -1;
        }
        k->mode = SPEC_KEEP_TOP;
        k->top = (int64_t)config_setting_get_int64(top);
        k->nfig = 1;
        k->fig[0] = (int)(result_find("throughput_samples_per_s") - result_fields);
        if (by && (k->fig[0] = keep_figure(by, "by", err)) < 0)
            return -1;
    } else if (by) {
        load_fail(err, by, "key 'by': only applies with top = K");
        return -1;
    }
    if (par && keep_load_pareto(k, par, err) != 0)
        return -1;
    if (k->mode == SPEC_KEEP_ALL) {
        if (!k->feasible) {
            load_fail(err, ks, "key 'keep': a group needs top = K, pareto = [...] "
                      "or feasible = true (or write keep = \"all\")");
            return -1;
        }
        k->mode = SPEC_KEEP_FEASIBLE;
    }
    k->feasible = true;
    return grp ? keep_load_group(k, fidelity, grp, err) : 0;
}

