/*
 * spec.c - loading sweep specifications (see spec.h for the format).
 *
 * Invariant after a successful spec_load(): every axis has at least one
 * value, every model and system passed load_model()/load_system() (so
 * their derived figures are filled), and every explicit strategy parsed.
 * Validity of combinations is not checked here: that is the sweep's job,
 * point by point, and invalid combinations are data, not errors.
 */
#define _POSIX_C_SOURCE 200809L
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed.h"

static const char *const spec_keys[] = {
    "name", "fidelity", "models", "systems", "system_grid",
    "tasks", "global_batch", "strategies", "chunk"};

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

/* Catalogue files opened on demand, destroyed by spec_load. */
typedef struct spec_cat {
    config_t cfg;
    int open;
} spec_cat;

static char *spec_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (len + 1 < cap)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            buf = NULL;
        }
        buf = nb;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* The list `list` of catalogue file `file`, opened once. */
static const config_setting_t *spec_catalogue(spec_cat *cat,
                                              const config_setting_t *at,
                                              const char *key,
                                              const char *configs_dir,
                                              const char *file,
                                              const char *list, load_err *err)
{
    if (!cat->open) {
        char path[1024];
        load_err cerr;
        snprintf(path, sizeof path, "%s/%s", configs_dir, file);
        if (load_open(&cat->cfg, path, configs_dir, &cerr) != 0) {
            load_fail(err, at, "key '%s': the catalogue could not be read: %s",
                      key, cerr.text);
            return NULL;
        }
        cat->open = 1;
    }
    const config_setting_t *l = config_lookup(&cat->cfg, list);
    if (!l || !config_setting_is_list(l)) {
        load_fail(err, at, "key '%s': catalogue %s/%s has no list '%s'", key,
                  configs_dir, file, list);
        return NULL;
    }
    return l;
}

/* Loads one model or system group into slot i of *arr. */
typedef int (*spec_loader)(const config_setting_t *g, const char *configs_dir,
                           void *obj, load_err *err);

static int spec_load_model(const config_setting_t *g, const char *configs_dir,
                           void *obj, load_err *err)
{
    (void)configs_dir;
    return load_model(g, obj, err);
}

static int spec_load_system(const config_setting_t *g, const char *configs_dir,
                            void *obj, load_err *err)
{
    (void)configs_dir;
    return load_system(g, obj, err);
}

static int spec_load_dmodel(const config_setting_t *g, const char *configs_dir,
                            void *obj, load_err *err)
{
    (void)configs_dir;
    return load_dmodel(g, obj, err);
}

static int spec_load_dsystem(const config_setting_t *g, const char *configs_dir,
                             void *obj, load_err *err)
{
    return load_dsystem(g, configs_dir, obj, err);
}

/* Fills an axis of models or systems from `s`: "all", or a list/array
 * of names and inline groups. */
static int spec_entities(const config_setting_t *s, const char *key,
                         spec_cat *cat, const char *configs_dir,
                         const char *file, size_t elem, spec_loader loader,
                         void **out, int64_t *n, load_err *err)
{
    const char *all = config_setting_get_string(s);
    const config_setting_t *src = s;
    bool from_cat = false;
    if (all) {
        if (strcmp(all, "all") != 0) {
            load_fail(err, s, "key '%s': expected a list of names or \"all\", "
                      "got \"%s\"", key, all);
            return -1;
        }
        src = spec_catalogue(cat, s, key, configs_dir, file, key, err);
        if (!src)
            return -1;
        from_cat = true;
    } else if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
        load_fail(err, s, "key '%s': expected a list of catalogue names or "
                  "groups, or \"all\"", key);
        return -1;
    }
    int len = config_setting_length(src);
    if (len == 0) {
        load_fail(err, s, "key '%s': empty list", key);
        return -1;
    }
    char *arr = calloc((size_t)len, elem);
    if (!arr) {
        load_fail(err, s, "key '%s': out of memory", key);
        return -1;
    }
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(src, (unsigned)i);
        const config_setting_t *g = e;
        if (!from_cat && !config_setting_is_group(e)) {
            const char *name = config_setting_get_string(e);
            if (!name) {
                load_fail(err, e, "key '%s': element %d: expected a "
                          "catalogue name or a group", key, i);
                goto fail;
            }
            const config_setting_t *l =
                spec_catalogue(cat, e, key, configs_dir, file, key, err);
            if (!l)
                goto fail;
            g = load_find(l, name);
            if (!g) {
                load_fail(err, e, "key '%s': \"%s\" is not in the catalogue "
                          "%s/%s", key, name, configs_dir, file);
                goto fail;
            }
        }
        if (loader(g, configs_dir, arr + (size_t)i * elem, err) != 0)
            goto fail;
    }
    *out = arr;
    *n = len;
    return 0;
fail:
    free(arr);
    return -1;
}

/* The largest value of an array key (spec_numbers): the loaders' device
 * bound for node counts, 2^40 samples for batches; bandwidth scales
 * and Gb/s up to 1e6 and 1e9. Checked before any conversion to int64. */
static double spec_upper(const char *key)
{
    if (strcmp(key, "global_batch") == 0)
        return (double)(INT64_C(1) << 40);
    if (strcmp(key, "nic_scale") == 0)
        return 1e6;
    if (strcmp(key, "nic_gbps_per_device") == 0)
        return 1e9;
    return (double)SPEC_MAX_DEVICES; /* nodes, devices_per_node */
}

/* Reads an optional array of numbers; `def` when absent. */
static int spec_numbers(const config_setting_t *g, const char *key,
                        bool integer, double lo, double def, double **out,
                        int *n, load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) {
        if (def <= 0) {
            *out = NULL;
            *n = 0;
            return 0;
        }
        *out = malloc(sizeof **out);
        if (!*out)
            return -1;
        (*out)[0] = def;
        *n = 1;
        return 0;
    }
    if (!config_setting_is_array(s) || config_setting_length(s) == 0) {
        load_fail(err, s, "key '%s': expected a non-empty array [...] of "
                  "numbers", key);
        return -1;
    }
    int len = config_setting_length(s);
    double *v = malloc((size_t)len * sizeof *v);
    if (!v) {
        load_fail(err, s, "key '%s': out of memory", key);
        return -1;
    }
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int t = config_setting_type(e);
        if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
            v[i] = (double)config_setting_get_int64(e);
        else if (t == CONFIG_TYPE_FLOAT && !integer)
            v[i] = config_setting_get_float(e);
        else {
            load_fail(err, s, "key '%s': element %d: expected %s", key, i,
                      integer ? "an integer" : "a number");
            free(v);
            return -1;
        }
        if (!(v[i] >= lo) || !isfinite(v[i]) || v[i] > spec_upper(key)) {
            load_fail(err, s, "key '%s': element %d: must be >= %g and at "
                      "most %g", key, i, lo, spec_upper(key));
            free(v);
            return -1;
        }
    }
    *out = v;
    *n = len;
    return 0;
}

/* Element gi of the list system_grid as a group whose keys are all in
 * `keys` (`expected` lists them for the message); NULL with err set. */
static const config_setting_t *spec_grid_group(const config_setting_t *grid,
                                               int gi,
                                               const char *const *keys,
                                               size_t nkeys,
                                               const char *expected,
                                               load_err *err)
{
    const config_setting_t *g = config_setting_get_elem(grid, (unsigned)gi);
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "key 'system_grid': element %d: expected a group", gi);
        return NULL;
    }
    for (int k = 0; k < config_setting_length(g); k++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)k);
        bool known = false;
        for (size_t j = 0; j < nkeys; j++)
            known |= strcmp(config_setting_name(m), keys[j]) == 0;
        if (!known) {
            load_fail(err, m, "unknown key '%s' in system_grid (expected %s)",
                      config_setting_name(m), expected);
            return NULL;
        }
    }
    if (!config_setting_get_member(g, "nodes")) {
        load_fail(err, g, "missing key 'nodes' in system_grid");
        return NULL;
    }
    return g;
}

/* Appends the systems generated by the groups of system_grid. */
static int spec_grid(spec *sp, const config_setting_t *grid, spec_cat *cat,
                     const char *configs_dir, load_err *err)
{
    if (!config_setting_is_list(grid)) {
        load_fail(err, grid, "key 'system_grid': expected a list ( {...}, ... )");
        return -1;
    }
    static const char *const gkeys[] = {"base", "nodes", "devices_per_node",
                                        "nic_scale"};
    for (int gi = 0; gi < config_setting_length(grid); gi++) {
        const config_setting_t *g = spec_grid_group(
            grid, gi, gkeys, NKEYS(gkeys),
            "base, nodes, devices_per_node, nic_scale", err);
        if (!g)
            return -1;
        const config_setting_t *bs = config_setting_get_member(g, "base");
        const char *bname = bs ? config_setting_get_string(bs) : NULL;
        if (!bname) {
            load_fail(err, bs ? bs : g, "key 'base' in system_grid: expected "
                      "a catalogue system name");
            return -1;
        }
        const config_setting_t *l = spec_catalogue(
            cat, bs, "base", configs_dir, "systems.cfg", "systems", err);
        const config_setting_t *bg = l ? load_find(l, bname) : NULL;
        if (l && !bg)
            load_fail(err, bs, "key 'base': \"%s\" is not in the catalogue "
                      "%s/systems.cfg", bname, configs_dir);
        cluster_t base;
        if (!bg || load_system(bg, &base, err) != 0)
            return -1;
        double *nodes = NULL, *dpn = NULL, *nic = NULL;
        int nn = 0, nd = 0, nk = 0, rc = -1;
        if (spec_numbers(g, "nodes", true, 1, 0, &nodes, &nn, err) ||
            spec_numbers(g, "devices_per_node", true, 1,
                         (double)base.devices_per_node, &dpn, &nd, err) ||
            spec_numbers(g, "nic_scale", false, 1e-9, 1.0, &nic, &nk, err))
            goto out;
        int64_t add = (int64_t)nn * nd * nk;
        cluster_t *ns = realloc(sp->systems, (size_t)(sp->nsystems + add) *
                                                 sizeof *ns);
        if (!ns) {
            load_fail(err, g, "system_grid: out of memory");
            goto out;
        }
        sp->systems = ns;
        for (int a = 0; a < nn; a++)
            for (int b = 0; b < nd; b++)
                for (int c = 0; c < nk; c++) {
                    cluster_t *s = &sp->systems[sp->nsystems];
                    *s = base;
                    s->nodes = (int64_t)nodes[a];
                    s->devices = (int64_t)nodes[a] * (int64_t)dpn[b];
                    if (s->devices > SPEC_MAX_DEVICES) {
                        load_fail(err, g, "system_grid: %lld nodes x %lld "
                                  "devices is more than %lld devices",
                                  (long long)s->nodes, (long long)dpn[b],
                                  (long long)SPEC_MAX_DEVICES);
                        goto out;
                    }
                    s->nic_bidir_bytes_per_s = base.nic_bidir_bytes_per_s * nic[c];
                    if (s->nodes == 1)
                        s->allreduce_intra_fraction = 1.0;
                    snprintf(s->name, sizeof s->name, "%s/%lldx%lld/nic%g",
                             bname, (long long)s->nodes, (long long)dpn[b],
                             nic[c]);
                    const char *bad = NULL;
                    status_code st = cluster_derive(s, &bad);
                    if (st != STATUS_OK) {
                        load_fail(err, g, "system_grid: generated system '%s': "
                                  "key '%s': %s", s->name, bad ? bad : "?",
                                  status_text(st));
                        goto out;
                    }
                    sp->nsystems++;
                }
        rc = 0;
    out:
        free(nodes);
        free(dpn);
        free(nic);
        if (rc)
            return -1;
    }
    return 0;
}

/* The cluster_t mirror of detailed system i (name, devices, nodes), so
 * that code reading p->cluster (output rows, reports) sees the system. */
static void spec_mirror(const topo_system_t *d, cluster_t *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", d->name);
    c->devices = d->devices;
    c->devices_per_node = d->topo.level[0].span;
    c->nodes = c->devices_per_node > 0 ? d->devices / c->devices_per_node : 0;
    if (c->nodes * c->devices_per_node < d->devices)
        c->nodes++;
}

/* Detailed fidelity: appends the systems of system_grid groups
 * { hardware = "h100-sxm-80g" or [...]; nodes = [...];
 *   devices_per_node = [...]; nic_gbps_per_device = [...]; }. */
static int spec_dgrid(spec *sp, const config_setting_t *grid, spec_cat *cat,
                      const char *configs_dir, load_err *err)
{
    if (!config_setting_is_list(grid)) {
        load_fail(err, grid, "key 'system_grid': expected a list ( {...}, ... )");
        return -1;
    }
    static const char *const gkeys[] = {"hardware", "nodes", "devices_per_node",
                                        "nic_gbps_per_device"};
    for (int gi = 0; gi < config_setting_length(grid); gi++) {
        const config_setting_t *g = spec_grid_group(
            grid, gi, gkeys, NKEYS(gkeys),
            "hardware, nodes, devices_per_node, nic_gbps_per_device", err);
        if (!g)
            return -1;
        const config_setting_t *hs = config_setting_get_member(g, "hardware");
        if (!hs || (!config_setting_get_string(hs) &&
                    !(config_setting_is_array(hs) && config_setting_length(hs) > 0))) {
            load_fail(err, hs ? hs : g, "key 'hardware' in system_grid: expected "
                      "a hardware name or a non-empty array of names "
                      "(hardware.cfg)");
            return -1;
        }
        int nh = config_setting_get_string(hs) ? 1 : config_setting_length(hs);
        for (int h = 0; h < nh; h++) {
            const config_setting_t *he =
                config_setting_get_string(hs) ? hs
                                              : config_setting_get_elem(hs, (unsigned)h);
            const char *hname = config_setting_get_string(he);
            if (!hname) {
                load_fail(err, hs, "key 'hardware': element %d: expected a "
                          "hardware name", h);
                return -1;
            }
            const config_setting_t *l = spec_catalogue(
                cat, he, "hardware", configs_dir, "hardware.cfg", "hardware", err);
            const config_setting_t *hg = l ? load_find(l, hname) : NULL;
            if (l && !hg)
                load_fail(err, he, "key 'hardware': \"%s\" is not in the "
                          "catalogue %s/hardware.cfg", hname, configs_dir);
            hw_t hw;
            if (!hg || load_hw(hg, &hw, err) != 0)
                return -1;
            double *nodes = NULL, *dpn = NULL, *nic = NULL;
            int nn = 0, nd = 0, nk = 0, rc = -1;
            if (spec_numbers(g, "nodes", true, 1, 0, &nodes, &nn, err) ||
                spec_numbers(g, "devices_per_node", true, 1,
                             (double)hw.scaleup_devices, &dpn, &nd, err) ||
                spec_numbers(g, "nic_gbps_per_device", false, 1e-9, 0, &nic, &nk,
                             err))
                goto out;
            bool has_nic = nk > 0;
            if (!has_nic)
                nk = 1;
            int64_t add = (int64_t)nn * nd * nk;
            topo_system_t *ns = realloc(sp->dsystems, (size_t)(sp->nsystems + add) *
                                                          sizeof *ns);
            if (!ns) {
                load_fail(err, g, "system_grid: out of memory");
                goto out;
            }
            sp->dsystems = ns;
            for (int a = 0; a < nn; a++)
                for (int b = 0; b < nd; b++)
                    for (int c = 0; c < nk; c++) {
                        topo_system_t *y = &sp->dsystems[sp->nsystems];
                        memset(y, 0, sizeof *y);
                        y->hw = hw;
                        y->devices_per_node = (int64_t)dpn[b];
                        y->devices = (int64_t)nodes[a] * y->devices_per_node;
                        if (y->devices > SPEC_MAX_DEVICES) {
                            load_fail(err, g, "system_grid: %lld nodes x %lld "
                                      "devices is more than %lld devices",
                                      (long long)nodes[a], (long long)dpn[b],
                                      (long long)SPEC_MAX_DEVICES);
                            goto out;
                        }
                        y->nic_gbps_per_device = has_nic ? nic[c] : 0.0;
                        char nicx[32] = "";
                        if (has_nic)
                            snprintf(nicx, sizeof nicx, "/nic%g", nic[c]);
                        snprintf(y->name, sizeof y->name, "%s/%lldx%lld%s", hname,
                                 (long long)nodes[a], (long long)dpn[b], nicx);
                        const char *bad = NULL;
                        status_code st = topo_system_derive(y, &bad);
                        if (st != STATUS_OK) {
                            load_fail(err, g, "system_grid: generated system "
                                      "'%s': key '%s': %s", y->name,
                                      bad ? bad : "?", status_text(st));
                            goto out;
                        }
                        sp->nsystems++;
                    }
            rc = 0;
        out:
            free(nodes);
            free(dpn);
            free(nic);
            if (rc)
                return -1;
        }
    }
    return 0;
}

static int spec_bool(const config_setting_t *g, const char *key, bool *out,
                     load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
        load_fail(err, s, "key '%s': expected true or false", key);
        return -1;
    }
    *out = config_setting_get_bool(s) != 0;
    return 0;
}

static int spec_tasks(spec *sp, const config_setting_t *s, load_err *err)
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
    static const char *const tkeys[] = {"type", "name", "freeze_emb",
                                        "freeze_dense", "freeze_top_mlp",
                                        "freeze_bot_mlp", "min_frozen_layer",
                                        "frozen_layers", "precision",
                                        "prompt_tokens", "decode_tokens"};
    bool detailed = sp->fidelity == EVAL_DETAILED;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        spec_task *t = &sp->tasks[i];
        t->min_frozen_layer = -1;
        t->dtype = HW_BF16;
        t->decode_tokens = SPEC_DECODE_TOKENS;
        const config_setting_t *ts = e;
        if (config_setting_is_group(e)) {
            for (int k = 0; k < config_setting_length(e); k++) {
                const config_setting_t *m =
                    config_setting_get_elem(e, (unsigned)k);
                bool known = false;
                for (size_t j = 0; j < NKEYS(tkeys); j++)
                    known |= strcmp(config_setting_name(m), tkeys[j]) == 0;
                const char *kn = config_setting_name(m);
                /* keys of one fidelity only */
                bool dkey = strcmp(kn, "precision") == 0 ||
                            strcmp(kn, "prompt_tokens") == 0 ||
                            strcmp(kn, "decode_tokens") == 0 ||
                            strcmp(kn, "frozen_layers") == 0;
                bool mkey = strcmp(kn, "freeze_dense") == 0 ||
                            strcmp(kn, "min_frozen_layer") == 0;
                if (!known || (dkey && !detailed) || (mkey && detailed)) {
                    load_fail(err, m, "unknown key '%s' in a task of the %s "
                              "fidelity (expected type, name, %s)",
                              kn, sp->ops->name,
                              detailed ? "freeze_emb, frozen_layers, "
                                         "freeze_top_mlp, freeze_bot_mlp, "
                                         "precision, prompt_tokens, decode_tokens"
                                       : "freeze_emb, freeze_dense, "
                                         "freeze_top_mlp, freeze_bot_mlp, "
                                         "min_frozen_layer");
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
            continue;
        const char *label = NULL;
        if (config_setting_lookup_string(e, "name", &label) == CONFIG_TRUE)
            snprintf(t->name, sizeof t->name, "%s", label);
        if (spec_bool(e, "freeze_emb", &t->freeze_emb, err) ||
            spec_bool(e, "freeze_dense", &t->freeze_dense, err) ||
            spec_bool(e, "freeze_top_mlp", &t->freeze_top_mlp, err) ||
            spec_bool(e, "freeze_bot_mlp", &t->freeze_bot_mlp, err))
            return -1;
        const config_setting_t *ps = config_setting_get_member(e, "precision");
        if (ps) {
            const char *pt = config_setting_get_string(ps);
            int d = pt ? hw_dtype_parse(pt) : -1;
            if (d < 0) {
                load_fail(err, ps, "key 'precision': expected \"bf16\", "
                          "\"fp16\", \"fp8\", \"tf32\" or \"fp32\"");
                return -1;
            }
            t->dtype = d;
        }
        static const char *const tok[2] = {"prompt_tokens", "decode_tokens"};
        int64_t *tokv[2] = {&t->prompt_tokens, &t->decode_tokens};
        for (int j = 0; j < 2; j++) {
            const config_setting_t *ks = config_setting_get_member(e, tok[j]);
            if (!ks)
                continue;
            int ty = config_setting_type(ks);
            if ((ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(ks) < 1 ||
                config_setting_get_int64(ks) > SPEC_MAX_TOKENS) {
                load_fail(err, ks, "key '%s': expected an integer from 1 to %lld",
                          tok[j], (long long)SPEC_MAX_TOKENS);
                return -1;
            }
            if (t->kind != TASK_INFERENCE) {
                load_fail(err, ks, "task '%s': key '%s' only applies to type "
                          "\"inference\"", t->name, tok[j]);
                return -1;
            }
            *tokv[j] = (int64_t)config_setting_get_int64(ks);
        }
        const config_setting_t *mf = config_setting_get_member(e, "min_frozen_layer");
        if (mf) {
            int ty = config_setting_type(mf);
            if ((ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(mf) < 0 ||
                config_setting_get_int64(mf) > SPEC_MAX_LAYERS) {
                load_fail(err, mf, "key 'min_frozen_layer': expected an "
                          "integer from 0 to %lld", (long long)SPEC_MAX_LAYERS);
                return -1;
            }
            t->min_frozen_layer = (int64_t)config_setting_get_int64(mf);
        }
        const config_setting_t *fl = config_setting_get_member(e, "frozen_layers");
        if (fl) {
            int ty = config_setting_type(fl);
            if ((ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(fl) < 0 ||
                config_setting_get_int64(fl) > SPEC_MAX_LAYERS) {
                load_fail(err, fl, "key 'frozen_layers': expected an "
                          "integer from 0 to %lld", (long long)SPEC_MAX_LAYERS);
                return -1;
            }
            t->frozen_layers = (int64_t)config_setting_get_int64(fl);
        }
        if (t->kind != TASK_FINETUNE &&
            (t->freeze_emb || t->freeze_dense || t->freeze_top_mlp ||
             t->freeze_bot_mlp || mf || fl)) {
            load_fail(err, e, "task '%s': freeze keys only apply to type "
                      "\"finetune\"", t->name);
            return -1;
        }
    }
    sp->ntasks = n;
    return 0;
}

/* A literal degree larger than any system (the product of all of them
 * is then bounded too: autoplan_resolve checks it against devices). */
static bool spec_degrees_too_large(const autoplan_tmpl *t, const char **why)
{
    for (int i = 0; i < t->nlevels; i++)
        if (t->level[i].kind == AUTOPLAN_NUM &&
            t->level[i].degree > SPEC_MAX_DEVICES) {
            *why = "a degree is larger than 2^24 devices";
            return true;
        }
    return false;
}

static int spec_strategies(spec *sp, const config_setting_t *s, load_err *err)
{
    const char *text = config_setting_get_string(s);
    if (text) {
        if (strcmp(text, "auto") != 0) {
            load_fail(err, s, "key 'strategies': expected \"auto\" or a list "
                      "of { dense = \"...\"; embedding = \"...\"; } groups");
            return -1;
        }
        if (!sp->ops->auto_count || !sp->ops->auto_apply) {
            load_fail(err, s, "key 'strategies': fidelity '%s' has no auto "
                      "strategies", sp->ops->name);
            return -1;
        }
        sp->strat_auto = true;
        sp->nstrats = sp->ops->auto_count();
        return 0;
    }
    if (sp->fidelity == EVAL_DETAILED) {
        load_fail(err, s, "key 'strategies': the detailed fidelity sweeps "
                  "\"auto\" strategies only");
        return -1;
    }
    if (!config_setting_is_list(s) || config_setting_length(s) == 0) {
        load_fail(err, s, "key 'strategies': expected \"auto\" or a non-empty "
                  "list of { dense = \"...\"; embedding = \"...\"; } groups");
        return -1;
    }
    int n = config_setting_length(s);
    sp->strats = calloc((size_t)n, sizeof *sp->strats);
    if (!sp->strats) {
        load_fail(err, s, "key 'strategies': out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (!config_setting_is_group(e)) {
            load_fail(err, e, "key 'strategies': element %d: expected a group "
                      "{ dense = \"...\"; embedding = \"...\"; }", i);
            return -1;
        }
        static const char *const comp[2] = {"dense", "embedding"};
        autoplan_tmpl *dst[2] = {&sp->strats[i].dense, &sp->strats[i].emb};
        if (config_setting_length(e) != 2 ||
            !config_setting_get_member(e, "dense") ||
            !config_setting_get_member(e, "embedding")) {
            load_fail(err, e, "key 'strategies': element %d: expected exactly "
                      "the keys 'dense' and 'embedding'", i);
            return -1;
        }
        for (int c = 0; c < 2; c++) {
            const config_setting_t *m = config_setting_get_member(e, comp[c]);
            const char *pt = config_setting_get_string(m);
            const char *why = "expected a string like \"fsdp:node,ddp:rest\"";
            if (!pt || autoplan_parse(pt, dst[c], &why) != 0 ||
                spec_degrees_too_large(dst[c], &why)) {
                load_fail(err, m, "key '%s': %s%s%s: %s", comp[c],
                          pt ? "\"" : "", pt ? pt : "", pt ? "\"" : "", why);
                return -1;
            }
        }
    }
    sp->nstrats = n;
    return 0;
}

int spec_load(const char *path, const char *configs_dir, spec *sp,
              load_err *err)
{
    memset(sp, 0, sizeof *sp);
    config_t cfg;
    spec_cat mcat = {.open = 0}, scat = {.open = 0}, hcat = {.open = 0};
    if (load_open(&cfg, path, configs_dir, err) != 0)
        return -1;
    int rc = -1;
    const config_setting_t *root = config_root_setting(&cfg);
    sp->text = spec_read_text(path);
    if (!sp->text) {
        snprintf(err->text, sizeof err->text, "%s: cannot read file", path);
        goto out;
    }
    for (int i = 0; i < config_setting_length(root); i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        bool known = false;
        for (size_t k = 0; k < NKEYS(spec_keys); k++)
            known |= strcmp(spec_keys[k], config_setting_name(s)) == 0;
        if (!known) {
            load_fail(err, s, "unknown key '%s' in sweep spec (expected name, "
                      "fidelity, models, systems, system_grid, tasks, "
                      "global_batch, strategies, chunk)",
                      config_setting_name(s));
            goto out;
        }
    }
    const char *name = NULL;
    snprintf(sp->name, sizeof sp->name, "sweep");
    const config_setting_t *ns = config_setting_get_member(root, "name");
    if (ns) {
        if (!(name = config_setting_get_string(ns))) {
            load_fail(err, ns, "key 'name': expected a string");
            goto out;
        }
        snprintf(sp->name, sizeof sp->name, "%s", name);
    }
    sp->fidelity = EVAL_DETAILED;
    const config_setting_t *fs = config_setting_get_member(root, "fidelity");
    if (fs) {
        const char *fn = config_setting_get_string(fs);
        int f = fn ? eval_fidelity_parse(fn) : -1;
        if (f < 0) {
            load_fail(err, fs, "key 'fidelity': expected \"detailed\" "
                      "(default) or \"madmax\"");
            goto out;
        }
        sp->fidelity = (eval_fidelity)f;
    }
    sp->ops = eval_ops_of(sp->fidelity);
    bool detailed = sp->fidelity == EVAL_DETAILED;
    static const char *const need[] = {"models", "tasks", "global_batch",
                                       "strategies"};
    for (size_t k = 0; k < NKEYS(need); k++)
        if (!config_setting_get_member(root, need[k])) {
            load_fail(err, root, "missing key '%s' in sweep spec", need[k]);
            goto out;
        }
    void *arr = NULL;
    if (spec_entities(config_setting_get_member(root, "models"), "models",
                      &mcat, configs_dir,
                      detailed ? "detailed_models.cfg" : "models.cfg",
                      sizeof(model_t),
                      detailed ? spec_load_dmodel : spec_load_model, &arr,
                      &sp->nmodels, err))
        goto out;
    sp->models = arr;
    const config_setting_t *ss = config_setting_get_member(root, "systems");
    const config_setting_t *gs = config_setting_get_member(root, "system_grid");
    if (!ss && !gs) {
        load_fail(err, root, "missing key 'systems' (or 'system_grid') in "
                  "sweep spec");
        goto out;
    }
    if (ss && detailed) {
        if (spec_entities(ss, "systems", &scat, configs_dir,
                          "detailed_systems.cfg", sizeof(topo_system_t),
                          spec_load_dsystem, &arr, &sp->nsystems, err))
            goto out;
        sp->dsystems = arr;
    } else if (ss) {
        if (spec_entities(ss, "systems", &scat, configs_dir, "systems.cfg",
                          sizeof(cluster_t), spec_load_system, &arr,
                          &sp->nsystems, err))
            goto out;
        sp->systems = arr;
    }
    if (gs && (detailed ? spec_dgrid(sp, gs, &hcat, configs_dir, err)
                        : spec_grid(sp, gs, &scat, configs_dir, err)))
        goto out;
    if (detailed && sp->nsystems > 0) {
        sp->systems = calloc((size_t)sp->nsystems, sizeof *sp->systems);
        if (!sp->systems) {
            load_fail(err, root, "key 'systems': out of memory");
            goto out;
        }
        for (int64_t i = 0; i < sp->nsystems; i++)
            spec_mirror(&sp->dsystems[i], &sp->systems[i]);
    }
    if (sp->nsystems == 0) {
        load_fail(err, gs ? gs : root, "key 'system_grid': no systems");
        goto out;
    }
    if (spec_tasks(sp, config_setting_get_member(root, "tasks"), err))
        goto out;
    double *gb = NULL;
    int ngb = 0;
    if (spec_numbers(root, "global_batch", true, 1, 0, &gb, &ngb, err))
        goto out;
    sp->batches = malloc((size_t)ngb * sizeof *sp->batches);
    if (!sp->batches) {
        free(gb);
        goto out;
    }
    for (int i = 0; i < ngb; i++)
        sp->batches[i] = (int64_t)gb[i];
    sp->nbatches = ngb;
    free(gb);
    if (spec_strategies(sp, config_setting_get_member(root, "strategies"), err))
        goto out;
    sp->chunk = SPEC_CHUNK_DEFAULT;
    const config_setting_t *cs = config_setting_get_member(root, "chunk");
    if (cs) {
        int t = config_setting_type(cs);
        if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) ||
            config_setting_get_int64(cs) < 1 ||
            config_setting_get_int64(cs) > SPEC_CHUNK_MAX) {
            load_fail(err, cs, "key 'chunk': expected an integer from 1 "
                      "to %lld", (long long)SPEC_CHUNK_MAX);
            goto out;
        }
        sp->chunk = (int64_t)config_setting_get_int64(cs);
    }
    rc = 0;
out:
    if (mcat.open)
        config_destroy(&mcat.cfg);
    if (scat.open)
        config_destroy(&scat.cfg);
    if (hcat.open)
        config_destroy(&hcat.cfg);
    config_destroy(&cfg);
    if (rc)
        spec_free(sp);
    return rc;
}

void spec_free(spec *s)
{
    free(s->text);
    free(s->models);
    free(s->systems);
    free(s->dsystems);
    free(s->tasks);
    free(s->batches);
    free(s->strats);
    memset(s, 0, sizeof *s);
}

int spec_strategy_text(const spec *s, int64_t k, char *buf, size_t size)
{
    if (s->fidelity == EVAL_DETAILED) {
        task_detailed_t t;
        if (detailed_auto_candidate(k, &t) < 0)
            return snprintf(buf, size, "auto #%lld", (long long)k);
        return detailed_strategy_text(&t, buf, size);
    }
    autoplan_pair pair;
    const autoplan_pair *p = NULL;
    if (s->strat_auto) {
        if (autoplan_candidate(s->ops, k, &pair) == 0)
            p = &pair;
    } else if (k >= 0 && k < s->nstrats) {
        p = &s->strats[k];
    }
    if (!p)
        return snprintf(buf, size, "auto #%lld", (long long)k);
    char d[PLAN_TEXT_MAX], e[PLAN_TEXT_MAX];
    autoplan_format(&p->dense, d, sizeof d);
    autoplan_format(&p->emb, e, sizeof e);
    return snprintf(buf, size, "%s | %s", d, e);
}
