/*
 * spec_task.h - a sweep spec's `tasks` and `global_batch` axes (format:
 * spec_load.h).
 */
#ifndef MADSWEEP_SPEC_TASK_H
#define MADSWEEP_SPEC_TASK_H

#include <libconfig.h>

#include "../../worker/spec.h"
#include "../load/load.h"
#include "spec_catalogue.h"

/* The tasks axis from list `s`: task types or groups of a task's keys
 * (a prefill pool's hardware named in the spec's list `own`, may be
 * NULL, or hardware.cfg, opened in `cat`). Returns 0, or -1 with err
 * set. */
int spec_task_axis(spec *sp, const config_setting_t *s, const config_setting_t *own,
                   spec_catalogue *cat, const char *configs_dir, load_err *err);

/* Refuses a key of a task group that only models of a kind the spec
 * lacks would read (they would ignore it). 0, or -1 with err set. */
int spec_task_kind_keys(const spec *sp, const config_setting_t *root, load_err *err);

/* The global_batch axis from setting `s` (an array, or a group of
 * arrays per model kind). Returns 0, or -1 with err set. */
int spec_task_batches(spec *sp, const config_setting_t *s, load_err *err);

#endif
