/*
 * kernel_cfg.c - reads configs/kernels.cfg, the kernel layer's constants
 * (group `kernel`: every constant of cost/kernel/ctx.c's table) and its
 * back ends (list `backends`: name, source, the back-end fields), each
 * number checked against its range; a key the layer does not read is
 * refused (a misspelt constant would otherwise be ignored while its prior
 * stays in force); an error names file, line and key.
 */
#include "kernel_cfg.h"

#include <libconfig.h>
#include <string.h>

#include "load.h"

/* A number member `key` of group g within [lo, hi]: 0, or -1 with a
 * message naming file, line and key. */
static int kernel_cfg_number(const config_setting_t *g, const char *key,
                             const kern_const_info *inf, const char *path, double *v,
                             FILE *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s || (config_setting_type(s) != CONFIG_TYPE_FLOAT &&
               config_setting_type(s) != CONFIG_TYPE_INT)) {
        fprintf(err, "madsweep kernel: %s:%d: key '%s' missing or not a number (%s)\n", path,
                config_setting_source_line(s ? s : g), key, inf->doc);
        return -1;
    }
    *v = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                     : (double)config_setting_get_int(s);
    if (!(*v >= inf->lo && *v <= inf->hi)) {
        fprintf(err, "madsweep kernel: %s:%d: key '%s' = %g not in %g to %g\n", path,
                config_setting_source_line(s), key, *v, inf->lo, inf->hi);
        return -1;
    }
    return 0;
}

/* Every member of group g is a name `known` accepts: 0, or -1 naming the
 * first that is not (file, line, key) and what the group holds. */
static int kernel_cfg_known(const config_setting_t *g, int (*known)(const char *),
                            const char *what, const char *path, FILE *err)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(m);
        if (name && !known(name)) {
            fprintf(err, "madsweep kernel: %s:%d: unknown key '%s' in %s\n", path,
                    config_setting_source_line(m), name, what);
            return -1;
        }
    }
    return 0;
}

static int kernel_cfg_is_const(const char *name)
{
    return kern_const_index(name) >= 0;
}

static int kernel_cfg_is_be_field(const char *name)
{
    return kern_be_index(name) >= 0 || strcmp(name, "name") == 0 ||
           strcmp(name, "source") == 0;
}

static int kernel_cfg_is_top(const char *name)
{
    return strcmp(name, "kernel") == 0 || strcmp(name, "backends") == 0;
}

/* The list `backends` of the constants file: every entry a group with a
 * unique `name`, its `source` (the engine code it was read from) and the
 * fields of kern_be_info_at. No list: no back ends. */
static int kernel_cfg_backends(const config_t *cfg, const char *path, kern_backends *t,
                               FILE *err)
{
    t->n = 0;
    const config_setting_t *l = config_lookup(cfg, "backends");
    if (!l)
        return 0;
    if (!config_setting_is_list(l)) {
        fprintf(err, "madsweep kernel: %s:%d: 'backends' must be a list of groups\n", path,
                config_setting_source_line(l));
        return -1;
    }
    for (int i = 0; i < config_setting_length(l); i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        const char *name = NULL, *src = NULL;
        if (!config_setting_is_group(g) || !config_setting_lookup_string(g, "name", &name) ||
            !config_setting_lookup_string(g, "source", &src) || !name[0] ||
            strlen(name) >= KERN_BE_NAME || strchr(name, ':') || strchr(name, '=')) {
            fprintf(err, "madsweep kernel: %s:%d: back end %d: needs a name (under %d "
                    "characters, no ':' or '=') and a source\n", path,
                    config_setting_source_line(g), i + 1, KERN_BE_NAME);
            return -1;
        }
        if (kernel_cfg_known(g, kernel_cfg_is_be_field, "a back end (name, source, eff, mem, "
                             "floor_s, nosplit)", path, err) != 0)
            return -1;
        if (kern_backend_find(t, name) || t->n == KERN_MAX_BE) {
            fprintf(err, "madsweep kernel: %s:%d: back end '%s': %s\n", path,
                    config_setting_source_line(g), name,
                    t->n == KERN_MAX_BE ? "too many back ends" : "named twice");
            return -1;
        }
        for (int j = 0; j < KERN_BE_NFIELDS; j++) {
            const kern_const_info *inf = kern_be_info_at(j);
            if (kernel_cfg_number(g, inf->name, inf, path, kern_be_ptr(&t->be[t->n], j),
                                  err) != 0)
                return -1;
        }
        snprintf(t->name[t->n++], KERN_BE_NAME, "%s", name);
    }
    return 0;
}

/* Reads the constants file: group `kernel`, every constant given, and
 * the optional list `backends` (bes may be NULL: not read). */
int kernel_cfg_read(const char *path, const char *dir, kern_consts *k, kern_backends *bes,
                    FILE *err)
{
    config_t cfg;
    load_err le;
    if (load_open_catalogue(&cfg, path, dir, &le) != 0) {
        fprintf(err, "madsweep kernel: %s\n", le.text);
        return -1;
    }
    int rc = 0;
    const config_setting_t *g = config_lookup(&cfg, "kernel");
    if (!g || !config_setting_is_group(g)) {
        fprintf(err, "madsweep kernel: %s: no group 'kernel'\n", path);
        rc = -1;
    }
    if (rc == 0)
        rc = kernel_cfg_known(config_root_setting(&cfg), kernel_cfg_is_top,
                              "the file (kernel, backends)", path, err);
    if (rc == 0)
        rc = kernel_cfg_known(g, kernel_cfg_is_const,
                              "group 'kernel' (`madsweep kernel --ranges` lists them)", path,
                              err);
    for (int i = 0; rc == 0 && i < KERN_NCONSTS; i++) {
        const kern_const_info *inf = kern_const_info_at(i);
        rc = kernel_cfg_number(g, inf->name, inf, path, kern_const_ptr(k, i), err);
    }
    if (rc == 0 && bes)
        rc = kernel_cfg_backends(&cfg, path, bes, err);
    config_destroy(&cfg);
    return rc;
}
