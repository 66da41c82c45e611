/*
 * sources_collect.c - the files a spec was read from: collected from
 * the parsed trees of a loaded spec (see sources_collect.h; the list
 * itself is plain data, worker/sources.h).
 *
 * Invariant: every entry has its text and digest; names are unique.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sources_collect.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Paths found so far (as opened), in order. */
typedef struct sources_paths {
    char (*p)[LOAD_PATH_MAX];
    int n, cap;
} sources_paths;

static int sources_paths_add(sources_paths *ps, const char *path)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->p[i], path) == 0)
            return 0;
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 8;
        void *np = realloc(ps->p, (size_t)cap * sizeof *ps->p);
        if (!np)
            return -1;
        ps->p = np;
        ps->cap = cap;
    }
    snprintf(ps->p[ps->n++], LOAD_PATH_MAX, "%s", path);
    return 0;
}

/* Adds the source file of s and of everything below it. libconfig
 * names an included file as written in the @include, which it resolved
 * against the include directory (load_open sets the catalogue
 * directory); the file the tree was read from, `main`, is as opened. */
static int sources_walk(const config_setting_t *s, const char *main,
                        const char *configs_dir, sources_paths *ps)
{
    const char *file = config_setting_source_file(s);
    if (file) {
        char path[LOAD_PATH_MAX];
        if (strcmp(file, main) != 0 && file[0] != '/')
            snprintf(path, sizeof path, "%s/%s", configs_dir, file);
        else
            snprintf(path, sizeof path, "%s", file);
        if (sources_paths_add(ps, path) != 0)
            return -1;
    }
    if (config_setting_is_aggregate(s))
        for (int i = 0; i < config_setting_length(s); i++)
            if (sources_walk(config_setting_get_elem(s, (unsigned)i), main,
                             configs_dir, ps) != 0)
                return -1;
    return 0;
}

static void sources_name(const char *path, const char *configs_dir, char *name,
                         size_t size)
{
    size_t n = strlen(configs_dir);
    if (n > 0 && strncmp(path, configs_dir, n) == 0 && path[n] == '/')
        snprintf(name, size, "%s", path + n + 1);
    else
        snprintf(name, size, "%s", path);
}

int sources_collect(sources *s, const config_t *spec_cfg,
                    const char *spec_path, const load_reads *reads,
                    const char *configs_dir, load_err *err)
{
    memset(s, 0, sizeof *s);
    err->text[0] = '\0';
    sources_paths ps = {0};
    int rc = -1;
    /* the spec's own includes first, then the catalogues (whose walk
     * adds their includes; a catalogue's own path is found again) */
    if (sources_walk(config_root_setting(spec_cfg), spec_path, configs_dir, &ps) != 0)
        goto out;
    for (int k = 0; reads && k < reads->n; k++) {
        if (sources_paths_add(&ps, reads->path[k]) != 0)
            goto out;
        config_t c;
        load_err le;
        if (load_open(&c, reads->path[k], configs_dir, &le) != 0) {
            snprintf(err->text, sizeof err->text, "%s", le.text);
            goto out;
        }
        int w = sources_walk(config_root_setting(&c), reads->path[k], configs_dir, &ps);
        config_destroy(&c);
        if (w != 0)
            goto out;
    }
    s->f = calloc((size_t)(ps.n > 0 ? ps.n : 1), sizeof *s->f);
    if (!s->f)
        goto out;
    for (int i = 0; i < ps.n; i++) {
        if (strcmp(ps.p[i], spec_path) == 0)
            continue;
        source_file *f = &s->f[s->n];
        f->text = sources_read(ps.p[i], &f->bytes);
        if (!f->text) {
            snprintf(err->text, sizeof err->text,
                     "%s: cannot read file (read while loading %s)", ps.p[i],
                     spec_path);
            goto out;
        }
        s->n++;
        sources_name(ps.p[i], configs_dir, f->name, sizeof f->name);
        char abs[PATH_MAX];
        snprintf(f->path, sizeof f->path, "%s",
                 realpath(ps.p[i], abs) ? abs : ps.p[i]);
        sha256_hex(f->text, (size_t)f->bytes, f->sha256);
    }
    rc = 0;
out:
    if (rc != 0) {
        if (!err->text[0])
            snprintf(err->text, sizeof err->text, "%s: out of memory listing "
                     "the catalogue files", spec_path);
        sources_free(s);
    }
    free(ps.p);
    return rc;
}
