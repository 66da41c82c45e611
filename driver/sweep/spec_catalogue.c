/*
 * spec_catalogue.c - the catalogue files a spec's loader opens on
 * demand, and the hardware a spec names (see spec_catalogue.h).
 */
#include "spec_catalogue.h"

#include <stdio.h>

#include "../suggest.h"

const config_setting_t *spec_catalogue_list(spec_catalogue *cat,
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
        if (load_open_catalogue(&cat->cfg, path, configs_dir, &cerr) != 0) {
            load_fail(err, at, "key '%s': the catalogue could not be read: %s",
                      key, cerr.text);
            return NULL;
        }
        cat->open = 1;
        load_reads_add(cat->reads, path);
    }
    const config_setting_t *l = config_lookup(&cat->cfg, list);
    if (!l || !config_setting_is_list(l)) {
        load_fail(err, at, "key '%s': catalogue %s/%s has no list '%s'", key,
                  configs_dir, file, list);
        return NULL;
    }
    if (load_unique(l, list, err) != 0) /* a catalogue's names are unique */
        return NULL;
    return l;
}

const config_setting_t *spec_catalogue_hw(const config_setting_t *he,
                                          const config_setting_t *own,
                                          spec_catalogue *cat, const char *configs_dir,
                                          load_err *err)
{
    if (config_setting_is_group(he))
        return he;
    const char *hname = config_setting_get_string(he);
    if (!hname) {
        load_fail(err, he, "key 'hardware': expected a hardware name or group");
        return NULL;
    }
    const config_setting_t *hg = load_find(own, hname);
    if (hg)
        return hg;
    const config_setting_t *l = spec_catalogue_list(cat, he, "hardware", configs_dir,
                                               "hardware.cfg", "hardware", err);
    hg = l ? load_find(l, hname) : NULL;
    if (l && !hg) {
        char hint[SUGGEST_NAME_MAX + 32];
        load_fail(err, he, "key 'hardware': \"%s\" is not in the catalogue "
                  "%s/hardware.cfg%s%s (`madsweep list hardware` lists them)",
                  hname, configs_dir, own ? " nor in the spec's list 'hardware'" : "",
                  load_suggest(own, l, hname, hint, sizeof hint));
    }
    return hg;
}

void spec_catalogue_close(spec_catalogue *cat)
{
    if (cat->open)
        config_destroy(&cat->cfg);
    cat->open = 0;
}
