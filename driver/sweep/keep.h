/*
 * keep.h - parsing a sweep spec's `keep` key (format: spec_load.h) into
 * the plain spec_keep the worker reduces by (worker/spec.h, reduce.h).
 */
#ifndef MADSWEEP_KEEP_H
#define MADSWEEP_KEEP_H

#include "../../worker/spec.h"
#include "../load/load.h"

/* Fills *k from setting ks (NULL: keep = "all"); `fidelity` decides
 * whether the key `hardware` exists. Returns 0, or -1 with err set
 * ("FILE:LINE: ... key ..."). */
int keep_load(spec_keep *k, eval_fidelity fidelity, const config_setting_t *ks,
              load_err *err);

#endif
