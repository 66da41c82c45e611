/*
 * load_fit.h - calibration as code: a catalogue entry (a stack, a
 * hardware generation, a kernel table) declares which of its constants
 * are fitted to measured rows, and a serving stack which measured rows
 * run on it.
 *
 *   fit = ( { key = "step_host_s";          # KEY, or KEY[i] of a number array
 *             rows = "stack == 'vllm'";      # rowfilter.h, over the CSV columns
 *             objective = "measured_tpot_ms";  # the measured column it matches
 *             range = [0.5e-3, 3.0e-3];      # the search interval
 *             prior = 1.0e-3; },             # its value without the fit
 *         ... );
 *   match = "engine == 'vllm'";             # serving stacks: the rows they serve
 *
 * The fitted value is the key's nominal (a fact [low, nominal, high]
 * keeps its band; the range must lie inside it); value and prior lie in
 * the range.
 * scripts/calibrate.py refits every declaration and writes the nominal
 * back; the loader only checks them (load_fit_check), so that a
 * declaration naming a missing key, a value outside its range or a
 * filter that does not parse is refused with its file and line.
 */
#ifndef MADSWEEP_LOAD_FIT_H
#define MADSWEEP_LOAD_FIT_H

#include "load.h"

#include <stdbool.h>

struct load_table; /* load_key.h: a catalogue's key table */

/* Longest KEY or KEY[i] of a declaration. */
#define LOAD_FIT_KEY_MAX 64

/* The `fit` entry of a catalogue's key table (load_key.h's LOAD_KEY;
 * the table's reader calls load_fit_check). */
#define LOAD_FIT_TABLE_KEY                                                     \
    LOAD_KEY("fit", LT_ANY, 0, LK_ALL, LR_NO,                                  \
             "the constants fitted to measured rows: ( { key; rows; objective; " \
             "range; prior; }, ... ) (driver/load/load_fit.h; "               \
             "scripts/calibrate.py refits them)", LOAD_NONUM)

/* A number setting's value (integer or float): false for anything else. */
bool load_fit_number(const config_setting_t *s, double *v);

/* Where the value of a declaration's key lives in its entry. */
typedef struct load_fit_target {
    config_setting_t *s;      /* the key's setting: a number, or an array of them */
    int index;                /* the element of s that holds the value; -1: s */
    double value;             /* the value now */
    bool band;                /* a fact [low, nominal, high] (index 1 is the value) */
    double band_lo, band_hi;  /* its low and high end (band only) */
} load_fit_target;

/* Resolves `key` (KEY or KEY[i]) in entry g: a key of table t that g
 * states itself (not through its base), numeric (a number, a fact, or
 * with [i] an element of a number array). 0, or -1 with err set, naming
 * the line of `at` (NULL: g's) where the key itself is at fault. */
int load_fit_target_of(const config_setting_t *g, const char *key,
                       const struct load_table *t, const config_setting_t *at,
                       load_fit_target *out, load_err *err);

/* Checks g's `fit` list (each declaration as above) and `match` (a
 * filter; allow_match false: refused, the namespace has none). `kind`
 * names the entry kind in messages. 0, or -1 with err set. */
int load_fit_check(const config_setting_t *g, const char *kind, const struct load_table *t,
                   bool allow_match, load_err *err);

/* Sets the value of KEY (or KEY[i]; a fact's nominal) of entry `entry`
 * of list `list` ("stacks" or "hardware") under `root` to v, and loads
 * the entry again (bases resolved under root, else in configs_dir); a
 * value the entry refuses is put back. 0, or -1 with err set. */
int load_fit_set(config_setting_t *root, const char *list, const char *entry, const char *key,
                 double v, const char *configs_dir, load_err *err);

/* The key table of catalogue list `list` ("stacks" or "hardware"; the
 * lists with fit declarations), or NULL. */
const struct load_table *load_fit_table(const char *list);

#endif
