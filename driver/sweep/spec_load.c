/*
 * spec_load.c - loading sweep specifications (see spec_load.h for the
 * format): the spec's own keys, its model, system and stack axes and
 * its strategies; the system grid is spec_grid.c, the tasks and batches
 * spec_task.c, `keep` keep.c.
 *
 * Invariant after a successful spec_load(): every axis has at least one
 * value, every model and system passed load_model()/load_system() (so
 * their derived figures are filled), and every explicit strategy parsed.
 * Validity of combinations is not checked here: that is the sweep's job,
 * point by point, and invalid combinations are data, not errors.
 */
#define _POSIX_C_SOURCE 200809L
#include "spec_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost/detailed.h"
#include "../../worker/digest.h"
#include "../load/overlay.h"
#include "../suggest.h"
#include "keep.h"
#include "spec_catalogue.h"
#include "spec_grid.h"
#include "spec_task.h"
#include "speckeys.h"

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

/* Loads one model, system or stack group into *obj. */
typedef int (*spec_loader)(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, void *obj, load_err *err);

static int spec_load_model(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, void *obj, load_err *err)
{
    (void)configs_dir;
    (void)reads;
    return load_model(g, obj, err);
}

static int spec_load_system(const config_setting_t *g, const char *configs_dir,
                            load_reads *reads, void *obj, load_err *err)
{
    return load_system(g, configs_dir, reads, obj, err);
}

static int spec_load_detailed_model(const config_setting_t *g, const char *configs_dir,
                                    load_reads *reads, void *obj, load_err *err)
{
    (void)configs_dir;
    (void)reads;
    return load_model_detailed(g, obj, err);
}

static int spec_load_detailed_system(const config_setting_t *g, const char *configs_dir,
                                     load_reads *reads, void *obj, load_err *err)
{
    return load_system_detailed(g, configs_dir, reads, obj, err);
}

static int spec_load_stack(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, void *obj, load_err *err)
{
    (void)reads;
    return load_stack_in(g, configs_dir, obj, err);
}

/* Fills an axis of models or systems from `s`: "all", or a list/array
 * of names and inline groups. */
static int spec_entities(const config_setting_t *s, const char *key,
                         spec_catalogue *cat, const char *configs_dir,
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
        src = spec_catalogue_list(cat, s, key, configs_dir, file, key, err);
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
    if (load_unique(src, key, err) != 0)
        goto fail;
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
                spec_catalogue_list(cat, e, key, configs_dir, file, key, err);
            if (!l)
                goto fail;
            g = load_find(l, name);
            if (!g) {
                char hint[SUGGEST_NAME_MAX + 32];
                load_fail(err, e, "key '%s': \"%s\" is not in the catalogue "
                          "%s/%s%s (`madsweep list %s` lists them)", key, name,
                          configs_dir, file, load_suggest(l, NULL, name, hint,
                                                          sizeof hint), key);
                goto fail;
            }
        }
        if (loader(g, configs_dir, cat->reads, arr + (size_t)i * elem, err) != 0)
            goto fail;
        const char *req = config_setting_get_string(e);
        if (loader == spec_load_stack && req &&
            load_stack_release(g, req, (stack_desc *)(void *)(arr + (size_t)i * elem), err) != 0)
            goto fail;
    }
    *out = arr;
    *n = len;
    return 0;
fail:
    free(arr);
    return -1;
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

/* The list of strategy groups s: a non-empty list whose elements are all
 * groups (`shape` describes one, `alone` follows it in the element's
 * message), *out an array of as many zeroed elements of `size` bytes.
 * Returns the count, or -1 with the message. */
static int spec_strat_list(const config_setting_t *s, size_t size, void **out,
                           const char *shape, const char *alone, load_err *err)
{
    if (!config_setting_is_list(s) || config_setting_length(s) == 0) {
        load_fail(err, s, "key 'strategies': expected \"auto\" or a non-empty "
                  "list of %s groups", shape);
        return -1;
    }
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (!config_setting_is_group(e)) {
            load_fail(err, e, "key 'strategies': element %d: expected a group "
                      "%s%s", i, shape, alone);
            return -1;
        }
    }
    *out = calloc((size_t)n, size);
    if (!*out) {
        load_fail(err, s, "key 'strategies': out of memory");
        return -1;
    }
    return n;
}

/* A strategy and its index, sorted by the digest of its bytes. */
typedef struct spec_strat_at {
    uint64_t h;
    int i;
} spec_strat_at;

static int spec_strat_at_cmp(const void *pa, const void *pb)
{
    const spec_strat_at *a = pa, *b = pb;
    if (a->h != b->h)
        return a->h < b->h ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Two explicit strategies alike (n of `size` bytes at a, each loaded into
 * zeroed memory): every point would be evaluated and written twice (issue
 * 29), so the first repeat is refused with both lines. Sorted by digest,
 * each compared with the first of its digest (O(n log n)). */
static int spec_strat_twice(const config_setting_t *s, const void *a, size_t size, int n,
                            load_err *err)
{
    if (n < 2)
        return 0;
    spec_strat_at *k = malloc((size_t)n * sizeof *k);
    if (!k) {
        load_fail(err, s, "key 'strategies': out of memory");
        return -1;
    }
    const unsigned char *b = a;
    for (int i = 0; i < n; i++)
        k[i] = (spec_strat_at){digest_bytes(b + (size_t)i * size, size), i};
    qsort(k, (size_t)n, sizeof *k, spec_strat_at_cmp);
    int rep = -1, of = -1;
    for (int lo = 0, hi; lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && k[hi].h == k[lo].h; hi++)
            ;
        for (int x = lo + 1; x < hi; x++)
            for (int y = lo; y < x; y++)
                if (memcmp(b + (size_t)k[x].i * size, b + (size_t)k[y].i * size, size) == 0) {
                    if (rep < 0 || k[x].i < rep) {
                        rep = k[x].i;
                        of = k[y].i;
                    }
                    break;
                }
    }
    free(k);
    if (rep < 0)
        return 0;
    const config_setting_t *first = config_setting_get_elem(s, (unsigned)of);
    const char *ff = config_setting_source_file(first);
    load_fail(err, config_setting_get_elem(s, (unsigned)rep), "key 'strategies': "
              "element %d is the strategy of element %d (at %s:%d): each point would be "
              "evaluated and written twice; list each strategy once", rep, of,
              ff ? ff : "?", config_setting_source_line(first));
    return -1;
}

/* Explicit detailed strategies: a list of groups of a detailed task's
 * strategy keys (load_task_strategy), each refused with its file and line. */
static int spec_detailed_strategies(spec *sp, const config_setting_t *s, load_err *err)
{
    void *a = NULL;
    int n = spec_strat_list(s, sizeof *sp->dstrats, &a, "{ tp = ...; pp = ...; ... }",
                            " (or \"auto\" alone)", err);
    if (n < 0)
        return -1;
    sp->dstrats = a;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (load_task_strategy(e, &sp->dstrats[i], err) != 0)
            return -1;
    }
    if (spec_strat_twice(s, sp->dstrats, sizeof *sp->dstrats, n, err) != 0)
        return -1;
    sp->nstrats = n;
    sp->npar = 1;
    return 0;
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
        sp->npar = 1;
        if (sp->fidelity == EVAL_DETAILED)
            detailed_auto_factors(&sp->npar, &sp->nstrats);
        return 0;
    }
    if (sp->fidelity == EVAL_DETAILED)
        return spec_detailed_strategies(sp, s, err);
    void *a = NULL;
    int n = spec_strat_list(s, sizeof *sp->strats, &a,
                            "{ dense = \"...\"; embedding = \"...\"; }", "", err);
    if (n < 0)
        return -1;
    sp->strats = a;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
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
    if (spec_strat_twice(s, sp->strats, sizeof *sp->strats, n, err) != 0)
        return -1;
    sp->nstrats = n;
    sp->npar = 1;
    return 0;
}

/* The stack axis: `stacks` (names of configs/stacks.cfg, inline groups
 * or "all"; detailed fidelity only), default the catalogue's "unknown"
 * (LOAD_STACK_DEFAULT, what a point naming no stack gets). The MAD-Max
 * fidelity models no software stack: its axis is one entry "none". */
static int spec_stacks(spec *sp, const config_setting_t *root, spec_catalogue *cat,
                       const char *configs_dir, load_err *err)
{
    const config_setting_t *ss = config_setting_get_member(root, "stacks");
    if (sp->fidelity != EVAL_DETAILED) {
        if (ss) {
            load_fail(err, ss, "key 'stacks': software stacks apply to the "
                      "detailed fidelity only (this spec is '%s')", sp->ops->name);
            return -1;
        }
        sp->stacks = calloc(1, sizeof *sp->stacks);
        if (!sp->stacks) {
            load_fail(err, root, "key 'stacks': out of memory");
            return -1;
        }
        snprintf(sp->stacks[0].name, sizeof sp->stacks[0].name, "none");
        snprintf(sp->stacks[0].summary, sizeof sp->stacks[0].summary,
                 "the %s fidelity models no software stack", sp->ops->name);
        sp->nstacks = 1;
        return 0;
    }
    void *arr = NULL;
    if (ss) {
        if (spec_entities(ss, "stacks", cat, configs_dir, "stacks.cfg",
                          sizeof(stack_desc), spec_load_stack, &arr,
                          &sp->nstacks, err))
            return -1;
        sp->stacks = arr;
        return 0;
    }
    const config_setting_t *l =
        spec_catalogue_list(cat, root, "stacks", configs_dir, "stacks.cfg", "stacks", err);
    if (!l)
        return -1;
    const config_setting_t *g = load_find(l, LOAD_STACK_DEFAULT);
    if (!g) {
        load_fail(err, root, "no stack named '%s' in %s/stacks.cfg (the default "
                  "of specs without key 'stacks')", LOAD_STACK_DEFAULT, configs_dir);
        return -1;
    }
    sp->stacks = calloc(1, sizeof *sp->stacks);
    if (!sp->stacks) {
        load_fail(err, root, "key 'stacks': out of memory");
        return -1;
    }
    sp->nstacks = 1;
    return load_stack_in(g, configs_dir, &sp->stacks[0], err);
}

/* The catalogues a spec's loader opens on demand, one file each. */
typedef struct spec_load_catalogues {
    spec_catalogue models, systems, hardware, stacks;
} spec_load_catalogues;

/* The spec's name and fidelity, its keys (each known to the fidelity),
 * its own hardware list (checked whether a grid uses it or not) and the
 * keys it must give; 0, or -1 with err set. */
static int spec_load_head(spec *sp, const config_setting_t *root, const char *configs_dir,
                          load_reads *reads, load_err *err)
{
    snprintf(sp->name, sizeof sp->name, "sweep");
    if (speckeys_label(root, "name", sp->name, sizeof sp->name, err))
        return -1;
    sp->fidelity = EVAL_DETAILED;
    const config_setting_t *fs = config_setting_get_member(root, "fidelity");
    if (fs) {
        const char *fn = config_setting_get_string(fs);
        int f = fn ? eval_fidelity_parse(fn) : -1;
        if (f < 0) {
            load_fail(err, fs, "key 'fidelity': expected \"detailed\" "
                      "(default) or \"madmax\"");
            return -1;
        }
        sp->fidelity = (eval_fidelity)f;
    }
    sp->ops = eval_ops_of(sp->fidelity);
    for (int i = 0; i < config_setting_length(root); i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        if (!speckeys_known(SPECKEYS_TOP, 1u << sp->fidelity, config_setting_name(s))) {
            char msg[800];
            load_fail(err, s, "%s", speckeys_unknown(SPECKEYS_TOP, 1u << sp->fidelity,
                                                     config_setting_name(s),
                                                     "sweep spec", msg, sizeof msg));
            return -1;
        }
    }
    const config_setting_t *own = config_setting_get_member(root, "hardware");
    if (own && !config_setting_is_list(own)) {
        load_fail(err, own, "key 'hardware': expected a list ( { name = ...; "
                  "base = ...; ... }, ... ) of hardware groups");
        return -1;
    }
    if (own && load_unique(own, "hardware", err) != 0)
        return -1;
    for (int i = 0; own && i < config_setting_length(own); i++) {
        hw_t hw;
        if (load_hw_in(config_setting_get_elem(own, (unsigned)i), configs_dir,
                       reads, &hw, err) != 0)
            return -1;
    }
    static const char *const need[] = {"models", "tasks", "global_batch",
                                       "strategies"};
    for (size_t k = 0; k < NKEYS(need); k++)
        if (!config_setting_get_member(root, need[k])) {
            load_fail(err, root, "missing key '%s' in sweep spec", need[k]);
            return -1;
        }
    return 0;
}

/* The model and system axes: `models`, `systems` and `system_grid`,
 * and (detailed) each system's cluster_t mirror; 0, or -1 with err set. */
static int spec_load_systems(spec *sp, const config_setting_t *root,
                             spec_load_catalogues *cat, const char *configs_dir,
                             load_err *err)
{
    bool detailed = sp->fidelity == EVAL_DETAILED;
    void *arr = NULL;
    if (spec_entities(config_setting_get_member(root, "models"), "models",
                      &cat->models, configs_dir,
                      detailed ? "detailed_models.cfg" : "models.cfg",
                      sizeof(model_t),
                      detailed ? spec_load_detailed_model : spec_load_model, &arr,
                      &sp->nmodels, err))
        return -1;
    sp->models = arr;
    const config_setting_t *ss = config_setting_get_member(root, "systems");
    const config_setting_t *gs = config_setting_get_member(root, "system_grid");
    if (!ss && !gs) {
        load_fail(err, root, "missing key 'systems' (or 'system_grid') in "
                  "sweep spec");
        return -1;
    }
    if (ss && detailed) {
        if (spec_entities(ss, "systems", &cat->systems, configs_dir,
                          "detailed_systems.cfg", sizeof(topo_system_t),
                          spec_load_detailed_system, &arr, &sp->nsystems, err))
            return -1;
        sp->dsystems = arr;
    } else if (ss) {
        if (spec_entities(ss, "systems", &cat->systems, configs_dir, "systems.cfg",
                          sizeof(cluster_t), spec_load_system, &arr,
                          &sp->nsystems, err))
            return -1;
        sp->systems = arr;
    }
    const config_setting_t *own = config_setting_get_member(root, "hardware");
    if (gs && (detailed ? spec_grid_detailed(sp, gs, own, &cat->hardware, configs_dir, err)
                        : spec_grid_madmax(sp, gs, &cat->systems, configs_dir, err)))
        return -1;
    if (detailed && sp->nsystems > 0) {
        sp->systems = calloc((size_t)sp->nsystems, sizeof *sp->systems);
        if (!sp->systems) {
            load_fail(err, root, "key 'systems': out of memory");
            return -1;
        }
        for (int64_t i = 0; i < sp->nsystems; i++)
            spec_mirror(&sp->dsystems[i], &sp->systems[i]);
    }
    if (sp->nsystems == 0) {
        load_fail(err, gs ? gs : root, "key 'system_grid': no systems");
        return -1;
    }
    return 0;
}

/* The stacks fragment `stacks_path` (overlay.h; NULL: none) laid over
 * the catalogue's stacks.cfg before the spec's stack names are looked up
 * there; the fragment's text is noted in the reads too (provenance). 0,
 * or -1 with err set. */
static int spec_load_fragment(spec_load_catalogues *cat, const config_setting_t *root,
                              const char *configs_dir, const char *stacks_path, load_err *err)
{
    if (!stacks_path)
        return 0;
    if (!spec_catalogue_list(&cat->stacks, root, "stacks", configs_dir, "stacks.cfg", "stacks",
                             err) ||
        overlay_stacks(config_root_setting(&cat->stacks.cfg), stacks_path, configs_dir,
                       err) != 0)
        return -1;
    load_reads_add(cat->stacks.reads, stacks_path);
    return 0;
}

/* The other axes and keys: stacks (over the fragment stacks_path, or
 * NULL), tasks, global batches, strategies, keep, elasticities and
 * chunk; 0, or -1 with err set. */
static int spec_load_rest(spec *sp, const config_setting_t *root, spec_load_catalogues *cat,
                          const char *configs_dir, const char *stacks_path, load_err *err)
{
    const config_setting_t *own = config_setting_get_member(root, "hardware");
    if (spec_load_fragment(cat, root, configs_dir, stacks_path, err) ||
        spec_stacks(sp, root, &cat->stacks, configs_dir, err) ||
        spec_task_axis(sp, config_setting_get_member(root, "tasks"), own, &cat->hardware,
                       configs_dir, err) ||
        spec_task_kind_keys(sp, root, err) ||
        spec_task_batches(sp, config_setting_get_member(root, "global_batch"), err) ||
        spec_strategies(sp, config_setting_get_member(root, "strategies"), err) ||
        keep_load(&sp->keep, sp->fidelity, config_setting_get_member(root, "keep"), err) ||
        speckeys_bool(root, "elasticities", &sp->elasticities, err))
        return -1;
    sp->chunk = SPEC_CHUNK_DEFAULT;
    return speckeys_int(SPECKEYS_TOP, root, "chunk", &sp->chunk, err) < 0 ? -1 : 0;
}

int spec_load(const char *path, const char *configs_dir, spec *sp,
              load_err *err)
{
    return spec_load_stacks(path, configs_dir, NULL, sp, err);
}

int spec_load_stacks(const char *path, const char *configs_dir, const char *stacks_path,
                     spec *sp, load_err *err)
{
    memset(sp, 0, sizeof *sp);
    config_t cfg;
    load_reads *reads = calloc(1, sizeof *reads);
    if (!reads) {
        snprintf(err->text, sizeof err->text, "%s: out of memory", path);
        return -1;
    }
    spec_load_catalogues cat = {.models = {.open = 0, .reads = reads},
                                .systems = {.open = 0, .reads = reads},
                                .hardware = {.open = 0, .reads = reads},
                                .stacks = {.open = 0, .reads = reads}};
    if (load_open(&cfg, path, configs_dir, err) != 0) {
        free(reads);
        return -1;
    }
    int rc = -1;
    const config_setting_t *root = config_root_setting(&cfg);
    int64_t bytes = 0;
    sp->text = sources_read(path, &bytes);
    if (!sp->text)
        snprintf(err->text, sizeof err->text, "%s: cannot read file", path);
    else if (spec_load_head(sp, root, configs_dir, reads, err) == 0 &&
             spec_load_systems(sp, root, &cat, configs_dir, err) == 0 &&
             spec_load_rest(sp, root, &cat, configs_dir, stacks_path, err) == 0 &&
             sources_collect(&sp->files, &cfg, path, reads, configs_dir, err) == 0)
        rc = 0;
    spec_catalogue_close(&cat.models);
    spec_catalogue_close(&cat.systems);
    spec_catalogue_close(&cat.hardware);
    spec_catalogue_close(&cat.stacks);
    config_destroy(&cfg);
    free(reads);
    if (rc)
        spec_free(sp);
    return rc;
}
