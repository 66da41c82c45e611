/*
 * overlay.c - laying a stacks fragment over a point's or a spec's
 * catalogue lists (overlay.h).
 *
 * Invariant: the fragment's entries are loaded in the fragment's own
 * config first, so that every error names the fragment's file and line;
 * copies made afterwards carry no lines, and nothing is copied unless
 * the whole fragment loaded.
 */
#include "overlay.h"

#include "lint.h"

#include <string.h>
#include <unistd.h>

int overlay_copy(config_setting_t *parent, const config_setting_t *s)
{
    int ty = config_setting_type(s);
    const char *name = config_setting_is_group(parent) ? config_setting_name(s) : NULL;
    if (name && config_setting_get_member(parent, name))
        return -1;
    config_setting_t *d = config_setting_add(parent, name, ty);
    if (!d)
        return -1;
    switch (ty) {
    case CONFIG_TYPE_INT:
        return config_setting_set_int(d, config_setting_get_int(s)) == CONFIG_TRUE ? 0 : -1;
    case CONFIG_TYPE_INT64:
        return config_setting_set_int64(d, config_setting_get_int64(s)) == CONFIG_TRUE ? 0
                                                                                       : -1;
    case CONFIG_TYPE_FLOAT:
        return config_setting_set_float(d, config_setting_get_float(s)) == CONFIG_TRUE ? 0
                                                                                       : -1;
    case CONFIG_TYPE_STRING:
        return config_setting_set_string(d, config_setting_get_string(s)) == CONFIG_TRUE ? 0
                                                                                         : -1;
    case CONFIG_TYPE_BOOL:
        return config_setting_set_bool(d, config_setting_get_bool(s)) == CONFIG_TRUE ? 0 : -1;
    default:
        for (int i = 0; i < config_setting_length(s); i++)
            if (overlay_copy(d, config_setting_get_elem(s, (unsigned)i)) != 0)
                return -1;
        return 0;
    }
}

int overlay_stacks(config_setting_t *root, const char *path, const char *configs_dir,
                   load_err *err)
{
    config_t frag;
    if (load_open(&frag, path, configs_dir, err) != 0)
        return -1;
    int rc = -1;
    const config_setting_t *l = config_lookup(&frag, "stacks");
    if (!l || !config_setting_is_list(l)) {
        load_fail(err, l ? l : config_root_setting(&frag), "a stacks fragment holds a list "
                  "'stacks' of stack groups (scripts/calibrate.py --out writes one)");
        goto out;
    }
    if (load_unique(l, "stacks", err) != 0)
        goto out;
    config_setting_t *dst = config_setting_get_member(root, "stacks");
    if (dst && !config_setting_is_list(dst)) {
        load_fail(err, dst, "key 'stacks': expected a list of stacks (a fragment adds to it)");
        goto out;
    }
    for (int i = 0; i < config_setting_length(l); i++) {
        const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
        stack_desc st;
        if (load_stack_in(e, configs_dir, &st, err) != 0)
            goto out;
        if (dst && load_find(dst, st.name)) {
            load_fail(err, e, "stack '%s' of this fragment: the point or spec has a stack "
                      "of that name already (a fragment adds stacks, it replaces none)",
                      st.name);
            goto out;
        }
    }
    if (!dst)
        dst = config_setting_add(root, "stacks", CONFIG_TYPE_LIST);
    for (int i = 0; dst && i < config_setting_length(l); i++)
        if (overlay_copy(dst, config_setting_get_elem(l, (unsigned)i)) != 0)
            dst = NULL;
    if (!dst) {
        load_fail(err, l, "out of memory copying the fragment's stacks");
        goto out;
    }
    rc = 0;
out:
    config_destroy(&frag);
    return rc;
}

int overlay_load_point(const char *path, const char *stacks_path, const char *configs_dir,
                       point_t *p, load_err *err)
{
    if (!stacks_path)
        return load_point(path, configs_dir, p, err);
    config_t cfg;
    memset(p, 0, sizeof *p);
    if (load_open(&cfg, path, configs_dir, err) != 0)
        return -1;
    int rc = overlay_stacks(config_root_setting(&cfg), stacks_path, configs_dir, err);
    if (rc == 0)
        rc = load_point_root(config_root_setting(&cfg), configs_dir, p, err);
    config_destroy(&cfg);
    return rc;
}

int overlay_catalogue(config_t *cfg, const char *configs_dir, const char *stacks_path,
                      load_err *err)
{
    static const char *const files[] = {"hardware.cfg", "stacks.cfg"};
    char text[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[LOAD_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", configs_dir, files[i]);
        if (access(path, F_OK) != 0)
            continue;
        if (lint_config(path, configs_dir, err->text, sizeof err->text) != 0)
            return -1;
        used += (size_t)snprintf(text + used, sizeof text - used, "@include \"%s\"\n",
                                 files[i]);
    }
    config_init(cfg);
    config_set_include_dir(cfg, configs_dir);
    if (config_read_string(cfg, text) != CONFIG_TRUE) {
        snprintf(err->text, sizeof err->text, "%s/%s:%d: syntax error: %s", configs_dir,
                 config_error_file(cfg) ? config_error_file(cfg) : "?",
                 config_error_line(cfg), config_error_text(cfg));
        config_destroy(cfg);
        return -1;
    }
    if (load_unique_lists(config_root_setting(cfg), err) != 0 ||
        (stacks_path &&
         overlay_stacks(config_root_setting(cfg), stacks_path, configs_dir, err) != 0)) {
        config_destroy(cfg);
        return -1;
    }
    return 0;
}
