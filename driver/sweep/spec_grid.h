/*
 * spec_grid.h - a sweep spec's `system_grid` (format: spec_load.h): the
 * systems it generates are appended to the spec's (sp->systems for the
 * madmax fidelity, sp->dsystems for the detailed one).
 */
#ifndef MADSWEEP_SPEC_GRID_H
#define MADSWEEP_SPEC_GRID_H

#include <libconfig.h>

#include "../../worker/spec.h"
#include "../load/load.h"
#include "spec_catalogue.h"

/* Madmax: groups { base = "SYSTEM"; nodes = [...]; devices_per_node =
 * [...]; nic_scale = [...]; } over catalogue systems (systems.cfg,
 * opened in `cat`). Returns 0, or -1 with err set. */
int spec_grid_madmax(spec *sp, const config_setting_t *grid, spec_catalogue *cat,
                     const char *configs_dir, load_err *err);

/* Detailed: groups { hardware = ...; nodes or devices = [...];
 * devices_per_node, nic_gbps_per_device or nic_scale, and the variants
 * of variant.h }, hardware named in the spec's own list `own` (may be
 * NULL) or hardware.cfg (opened in `cat`). Returns 0, or -1 with err
 * set. */
int spec_grid_detailed(spec *sp, const config_setting_t *grid, const config_setting_t *own,
                       spec_catalogue *cat, const char *configs_dir, load_err *err);

#endif
