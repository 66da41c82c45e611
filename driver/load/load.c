/*
 * load.c - the loader's files and names: opening a configuration file,
 * the catalogue directory, resolving a catalogue name or a `base` entry
 * to its group, and the names of a list (unique, found, suggested).
 *
 * Invariant: every value that reaches the cost model passed a type and
 * range check (load_value.c, by the key tables of the catalogue readers
 * load_model.c, load_hw.c, load_system.c, load_task.c, load_stack.c,
 * load_point.c) and a domain check in cost/ (model_derive,
 * cluster_derive, eval_check); every failure names file, line and key.
 * `madsweep keys` prints the tables (load_keys.c); writing keys back is
 * load_write.c.
 */
#include "load.h"
#include "load_key.h"

#include "../suggest.h"
#include "lint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef MADSWEEP_CONFIGS_DIR
#define MADSWEEP_CONFIGS_DIR "configs"
#endif

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

static int load_named_cmp(const void *pa, const void *pb)
{
    const load_named *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

void load_named_sort(load_named *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, load_named_cmp);
}

/* A name listed twice in `list` (a spec axis or a catalogue) is refused,
 * naming both places: a repeat would evaluate the same points twice and
 * `best --group` would merge them silently (issue 19). Of several
 * repeats, the first element that repeats an earlier one is named;
 * found by sorting, not pairwise (issue 29: quadratic in the list).
 * 0, or -1 with err set. */
int load_unique(const config_setting_t *list, const char *key, load_err *err)
{
    int len = config_setting_length(list), n = 0;
    if (len < 2)
        return 0;
    load_named *v = malloc((size_t)len * sizeof *v);
    if (!v) {
        load_fail(err, list, "key '%s': out of memory", key);
        return -1;
    }
    for (int i = 0; i < len; i++) {
        const char *nm = load_elem_name(config_setting_get_elem(list, (unsigned)i));
        if (nm)
            v[n++] = (load_named){nm, i};
    }
    load_named_sort(v, n);
    int64_t rep = -1, of = -1;
    for (int k = 1; k < n; k++)
        if (strcmp(v[k].name, v[k - 1].name) == 0 &&
            (k < 2 || strcmp(v[k - 2].name, v[k].name) != 0) && (rep < 0 || v[k].i < rep)) {
            rep = v[k].i; /* the second of a run of one name */
            of = v[k - 1].i;
        }
    free(v);
    if (rep < 0)
        return 0;
    const config_setting_t *a = config_setting_get_elem(list, (unsigned)of),
                           *b = config_setting_get_elem(list, (unsigned)rep);
    const char *fa = config_setting_source_file(a);
    load_fail(err, b, "key '%s': \"%s\" is listed twice (first at %s:%d); each name may "
              "appear once", key, load_elem_name(b), fa ? fa : "?",
              config_setting_source_line(a));
    return -1;
}

int load_unique_lists(const config_setting_t *root, load_err *err)
{
    for (int i = 0; root && i < config_setting_length(root); i++) {
        const config_setting_t *l = config_setting_get_elem(root, (unsigned)i);
        if (config_setting_is_list(l) && load_unique(l, config_setting_name(l), err) != 0)
            return -1;
    }
    return 0;
}

int load_open_catalogue(config_t *cfg, const char *path, const char *configs_dir,
                        load_err *err)
{
    if (load_open(cfg, path, configs_dir, err) != 0)
        return -1;
    if (load_unique_lists(config_root_setting(cfg), err) != 0) {
        config_destroy(cfg);
        return -1;
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
        /* "NAME@RELEASE": the entry NAME (a serving stack at a release,
         * load_stack_release) */
        const char *at = strchr(name, '@');
        size_t len = at ? (size_t)(at - name) : strlen(name);
        if (config_setting_is_group(e) &&
            config_setting_lookup_string(e, "name", &en) == CONFIG_TRUE &&
            strlen(en) == len && strncmp(en, name, len) == 0)
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
                  load_value_type_name(config_setting_type(s)));
        return NULL;
    }
    const config_setting_t *root = s;
    while (config_setting_parent(root))
        root = config_setting_parent(root);
    const config_setting_t *own = config_setting_get_member(root, list);
    if (own && config_setting_is_list(own) && load_unique(own, list, err) != 0)
        return NULL; /* an entry of the file's own list named twice */
    const config_setting_t *hit = load_find(own, name);
    if (hit)
        return hit;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", configs_dir, catalog_file);
    if (!*aux_open) {
        load_err cerr;
        if (load_open_catalogue(aux, path, configs_dir, &cerr) != 0) {
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
