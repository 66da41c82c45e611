/*
 * spec_catalogue.h - the catalogue files a sweep spec's loader opens on
 * demand (detailed_models.cfg, systems.cfg, hardware.cfg, stacks.cfg,
 * ...), each once, and the hardware a spec names.
 *
 * Invariant: a catalogue is opened at most once per spec load and noted
 * in `reads` (the provenance of the sweep file, sources_collect.h); its
 * names are unique (load_unique) before any is looked up; the loader
 * closes it (spec_catalogue_close) when the spec is loaded.
 */
#ifndef MADSWEEP_SPEC_CATALOGUE_H
#define MADSWEEP_SPEC_CATALOGUE_H

#include <libconfig.h>

#include "../load/load.h"

typedef struct spec_catalogue {
    config_t cfg;
    int open;
    load_reads *reads;
} spec_catalogue;

/* The list `list` of catalogue file `file` under configs_dir (opened
 * the first time); NULL with err set at `at` (key `key`) when the file
 * cannot be read, has no such list or names an entry twice. */
const config_setting_t *spec_catalogue_list(spec_catalogue *cat, const config_setting_t *at,
                                            const char *key, const char *configs_dir,
                                            const char *file, const char *list,
                                            load_err *err);

/* The hardware group element `he` names: itself when it is a group,
 * else the entry of the spec's own list `hardware` (`own`, may be NULL),
 * else of the catalogue hardware.cfg; NULL with err set. */
const config_setting_t *spec_catalogue_hw(const config_setting_t *he,
                                          const config_setting_t *own, spec_catalogue *cat,
                                          const char *configs_dir, load_err *err);

/* Closes the catalogue when it was opened. */
void spec_catalogue_close(spec_catalogue *cat);

#endif
