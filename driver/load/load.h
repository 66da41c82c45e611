/*
 * load.h - reading design points and catalogues from libconfig files.
 *
 * One key table per namespace (model, system, task, point) drives parsing,
 * type checks, required/unknown-key errors and `madsweep keys` help.
 * Every error is one line "FILE:LINE: what is wrong (key 'k')" in a
 * load_err, and a failed load leaves the output unspecified.
 * Each catalogue's reader and its key table is a file of its own in
 * driver/load/ (load_model.c, load_hw.c, load_system.c, load_task.c,
 * load_stack.c, load_point.c); the key-table row and its walker are
 * load_key.h (load_value.c), errors load_err.h, files and catalogue
 * names load.c, `madsweep keys` load_keys.c, writing keys back
 * load_write.c.
 *
 * Catalogues: configs/models.cfg and configs/systems.cfg hold lists
 * `models = ( {...}, ... );` and `systems = ( {...}, ... );`. A point or
 * sweep refers to an entry by its `name`; the lists are looked up first in
 * the file itself (inline or via @include) and then in the catalogue
 * directory (load_configs_dir()).
 */
#ifndef MADSWEEP_LOAD_H
#define MADSWEEP_LOAD_H

#include <libconfig.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../cost/detailed.h"
#include "../../cost/eval.h"
#include "load_err.h"

/* The catalogue files a load opened by name (paths as opened, each
 * once), for the provenance of sweep files; NULL records nothing. */
#define LOAD_READS_MAX 32
#define LOAD_PATH_MAX 1024
typedef struct load_reads {
    int n;
    char path[LOAD_READS_MAX][LOAD_PATH_MAX];
} load_reads;

/* Adds a path (no-op for NULL r, a path already there, or a full r). */
void load_reads_add(load_reads *r, const char *path);

/* Directory of the catalogues: $MADSWEEP_CONFIGS, else the source tree's
 * configs/ compiled in. `override` wins when not NULL. */
const char *load_configs_dir(const char *override);

/* Opens a libconfig file with the catalogue dir as include dir. On error
 * fills err with "file:line: text" and returns -1 (cfg destroyed). */
int load_open(config_t *cfg, const char *path, const char *configs_dir,
              load_err *err);

/* Fills *m from a model group (derived fields too). */
int load_model(const config_setting_t *g, model_t *m, load_err *err);

/* Fills *c from a system group (derived fields too). A group with
 * `base = "NAME"` starts from that entry (list 'systems' of its file,
 * else of configs_dir/systems.cfg) and overrides the keys it gives. A
 * `hardware` key names the hardware.cfg generation (in the file, else in
 * configs_dir) whose board power, idle power and price the system takes,
 * unless it sets board_power_w, idle_power_w or price_per_hour_usd
 * itself. Catalogues opened are noted in `reads` (may be NULL); with
 * configs_dir NULL, bases and hardware are found in the group's file
 * only. */
int load_system(const config_setting_t *g, const char *configs_dir,
                load_reads *reads, cluster_t *c, load_err *err);

/* Reads the optional keys board_power_w, idle_power_w and
 * price_per_hour_usd of group g (numbers >= 0) into the given slots,
 * leaving absent ones as they are: the overrides of a system, a
 * system_grid group or a detailed system. */
int load_system_power(const config_setting_t *g, double *board_w, double *idle_w,
                      double *price, load_err *err);

/* Fills *t from a task group; `m` selects the model-specific keys. */
int load_task(const config_setting_t *g, const model_t *m, task_t *t,
              load_err *err);

/* Detailed fidelity: a model group (LLM keys plus arch, position, MoE;
 * or DLRM tables and MLP widths), a hardware generation (a group with
 * `base = "h100-sxm-80g"` starts from that entry of list 'hardware' of
 * its file, else of configs_dir/hardware.cfg, and overrides what it
 * gives; load_hw() finds bases in the file only), a system (also with a
 * `base`, from list 'systems' or detailed_systems.cfg)
 * (hardware resolved in list 'hardware' of the file or of
 * configs_dir/hardware.cfg, noted in `reads`; its board_power_w,
 * idle_power_w and price_per_hour_usd over the hardware's; topology
 * derived) and a strategy
 * (task.detailed, with the keys of model kind `kind`; fine-tuning keys
 * only for type "finetune"). Same error conventions as above. */
int load_model_detailed(const config_setting_t *g, model_t *m, load_err *err);
int load_hw(const config_setting_t *g, hw_t *h, load_err *err);
int load_hw_in(const config_setting_t *g, const char *configs_dir,
               load_reads *reads, hw_t *h, load_err *err);
/* The numeric keys of a hardware generation (the LT_FLOAT and LT_INT
 * keys of `madsweep keys` hardware: peaks, memory, links, efficiencies,
 * power, price) as axes of a sweep: load_hw_number returns 0 and the
 * figure of key `key` of *h in *v, -1 when `key` is not one of them;
 * load_hw_scale multiplies it by f (1, the figure unchanged, when an
 * integer figure would not stay a whole number >= 1: never rounded);
 * load_hw_number_keys writes their names, ", "-separated,
 * and offers them to a suggestion `sg` when given. */
int load_hw_number(const hw_t *h, const char *key, double *v);
int load_hw_scale(hw_t *h, const char *key, double f);
struct suggest;
void load_hw_number_keys(char *buf, size_t size, struct suggest *sg);
/* A detailed system's pod keys take effect: a pod no larger than the
 * system (else its level was dropped without a word), an
 * oversubscription only above a pod smaller than the system (issue
 * 29). 0, or -1 with err set at g's key. */
int load_system_pod_check(const config_setting_t *g, const topo_system_t *y, load_err *err);
/* Why a detailed system's topology does not derive at key `bad` (code
 * st): the pod that is no whole number of domains or pods, the idle
 * power above the board power, else status_text(st) (issue 29: a
 * generated system said "zero, negative or not finite" of a pod of 4).
 * Returns buf. */
const char *load_system_why(const topo_system_t *y, status_code st, const char *bad,
                            char *buf, size_t size);
/* "idle power I W is above the board power B W" into buf (a detailed or
 * a MAD-Max system's power rule); returns buf. */
const char *load_idle_power_why(double idle_w, double board_w, char *buf, size_t size);

int load_system_detailed(const config_setting_t *g, const char *configs_dir,
                         load_reads *reads, topo_system_t *sys, load_err *err);
int load_task_detailed(const config_setting_t *g, model_kind kind, task_t *t,
                       load_err *err);
/* A serving task's load keys that change nothing, read by the point's
 * and the sweep task's loaders alike: "sla" without a TTFT or TPOT limit
 * (it is "max"), client rounds on a disaggregated deployment (it runs the
 * steady state). NULL when none, else the key at fault with why set to
 * "key 'KEY': ..." (issue 29). */
const char *load_serving_idle_key(int64_t concurrency, double ttft_max_s, double tpot_max_s,
                                  int64_t rounds, bool disaggregated, char *why, size_t size);

/* An explicit detailed strategy of a sweep (`strategies = ( { tp = 8;
 * pp = 4; vpp = 5; ... }, ... )`, cost/detailed.h's detailed_template):
 * the strategy keys of a detailed task (degrees default 1, dp 0: the
 * rest of the devices; vpp and micro_batch may be "auto"). Unknown keys,
 * degrees below 1, vpp without pp or with GPipe are refused with the
 * file and line. */
int load_task_strategy(const config_setting_t *g, detailed_template *s, load_err *err);

/* Software stacks (cost/stack.h): a group of list 'stacks'
 * (configs/stacks.cfg). load_stack_of_point resolves a point's `stack` key
 * (a name or an inline group; absent: LOAD_STACK_DEFAULT, the tool's
 * default stack). load_stack_task_defaults fills what a detailed task left to
 * the stack: the ZeRO stage, sequence parallelism (with tp > 1) and, for schedule
 * "interleaved" without vpp, the stack's chunk count. */
#define LOAD_STACK_DEFAULT "unknown"
int load_stack(const config_setting_t *g, stack_desc *st, load_err *err);
/* load_stack with `base` resolved in g's file, else configs_dir/stacks.cfg
 * (load_stack: in g's file only). */
int load_stack_in(const config_setting_t *g, const char *configs_dir, stack_desc *st,
                  load_err *err);
int load_stack_of_point(const config_setting_t *root, const char *configs_dir, stack_desc *st,
                        load_err *err);
/* A serving stack at a release: `requested` "NAME@VERSION" (a stack's
 * name as a point or spec gives it) applies the facts of g's `releases`
 * whose `from` <= VERSION, in order, to st (loaded from g) and names it
 * so; without '@' nothing changes. */
int load_stack_release(const config_setting_t *g, const char *requested, stack_desc *st,
                       load_err *err);
void load_stack_task_defaults(const config_setting_t *g, const stack_desc *st, task_t *t);

/* Resolves `s` (a group, or a string naming an entry of list `list` in
 * the file's root or in the catalogue file `catalog_file` under
 * configs_dir) to a group. `aux` receives the catalogue config when one
 * was opened (then *aux_open is set, and the caller config_destroy()s it
 * after use); it is untouched otherwise. */
const config_setting_t *load_resolve(const config_setting_t *s,
                                     const char *list, const char *catalog_file,
                                     const char *configs_dir, config_t *aux,
                                     int *aux_open, load_err *err);

/* "; did you mean \"X\"?" for the entry names of lists a and b closest to
 * `name` (either may be NULL), or "". Returns buf. */
const char *load_suggest(const config_setting_t *a, const config_setting_t *b,
                         const char *name, char *buf, size_t size);

/* A name without control characters (a newline or a tab broke the
 * report's tables; issue 29): 0, or -1 with err set at s. */
int load_name_control(const config_setting_t *s, const char *key, const char *text,
                      load_err *err);

/* "the nearest valid sizes are 1008 (14 x 72) and 1080 (15 x 72)": the
 * whole numbers of domains around `devices`. */
void load_system_domain_advice(char *buf, size_t size, int64_t devices, int64_t domain);

/* A name and its index in a list; load_named_sort orders n of them by
 * name, then index, so that repeats of a name are neighbours (a check
 * for names given twice that grows with n log n, not n^2). */
typedef struct load_named {
    const char *name;
    int64_t i;
} load_named;
void load_named_sort(load_named *v, int64_t n);

/* Refuses a name listed twice in `list` (a spec axis or a catalogue:
 * strings, or groups' "name"), naming both places under `key`; 0, or -1
 * with err set. */
int load_unique(const config_setting_t *list, const char *key, load_err *err);

/* load_unique over every list at the top of a catalogue file (its root
 * setting): an entry named twice is refused wherever the file is read,
 * not only where a command happens to look (issue 29). */
int load_unique_lists(const config_setting_t *root, load_err *err);

/* load_open of a catalogue: the file, then load_unique_lists. */
int load_open_catalogue(config_t *cfg, const char *path, const char *configs_dir,
                        load_err *err);

/* The group named `name` (its "name" key) in a libconfig list, or NULL
 * (also when `list` is NULL or not a list). */
const config_setting_t *load_find(const config_setting_t *list,
                                  const char *name);

/* A prefill pool group (`prefill = { ... }`, cost/eval.h point_prefill;
 * its keys in `madsweep keys`): load_point_prefill_pool reads into f (zeroed
 * first) every key but `hardware`, a missing tp taking tp_default (0:
 * tp is required, as in a sweep, whose strategies vary the decode
 * pool's), devices an integer or "auto" (rate-matched: one replica);
 * f->system.hw is left for the caller. load_point_prefill_derive derives
 * f->system's topology once its hardware is set, an error naming the
 * key of g at fault. Both return 0, or -1 with err set. */
int load_point_prefill_pool(const config_setting_t *g, int64_t tp_default, point_prefill *f,
                            load_err *err);
int load_point_prefill_derive(const config_setting_t *g, point_prefill *f, load_err *err);

/* Loads a whole point file: fidelity, model, system, task, then checks
 * the point against its fidelity's rules. */
int load_point(const char *path, const char *configs_dir, point_t *p,
               load_err *err);
/* load_point of a point already read: `root` is its file's root setting,
 * whose lists (stacks, hardware, ...) are searched before the catalogues
 * (driver/cli/batch.c lays a point over catalogues it keeps open). */
int load_point_root(const config_setting_t *root, const char *configs_dir, point_t *p,
                    load_err *err);

/* The namespaces of the key tables (load_key.h), one table each: for
 * writing configuration back (`madsweep point`, load_write_keys) and
 * for a key's facts. */
typedef enum load_ns {
    LOAD_NS_MODEL,   /* model_t, madmax */
    LOAD_NS_SYSTEM,  /* cluster_t */
    LOAD_NS_TASK,    /* task_t, madmax */
    LOAD_NS_DMODEL,  /* model_t, detailed */
    LOAD_NS_HW,      /* hw_t */
    LOAD_NS_DSYSTEM, /* topo_system_t */
    LOAD_NS_DTASK,   /* task_t, detailed */
    LOAD_NS_STACK,   /* stack_desc */
    LOAD_NS_PREFILL, /* point_prefill */
    LOAD_NNS
} load_ns;

/* Prints the documented keys of every namespace (for `madsweep keys`),
 * each number with its accepted range and unit {lo to hi unit}: the row
 * every number read is checked by before any arithmetic (products of
 * counts against their bounds where they are formed). */
void load_keys_print(FILE *out);

/* The facts of key `key` of namespace ns, from its row: its accepted
 * range as text ("1 to 65536"; "0, or 0.001 to 1e+06": 0 allowed
 * besides), NULL when it is not a number of ns; its unit ("bytes/s per
 * device", "bool"), NULL when it has none or ns has no such key. */
const char *load_keys_range_text(load_ns ns, const char *key, char *buf, size_t size);
const char *load_keys_unit(load_ns ns, const char *key);

/* Calls fn(key, unit, arg) once per key name that has a unit, over every
 * namespace (a key read in several has one unit: load_keys_check); the
 * strings are the tables' own (static). What a sweep file's input-key
 * columns are measured in (driver/sweep/sweep.c, output_meta.key_units). */
void load_keys_each_unit(void (*fn)(const char *key, const char *unit, void *arg),
                         void *arg);

/* Checks every row of every table: a number key has a range of its
 * kind, lo <= hi, and a unit; no table lists a key twice; a number key
 * read in several namespaces has one unit (its range may differ).
 * Returns 0, or -1 with msg naming the table and key. */
int load_keys_check(char *msg, size_t size);

/* A finite double as a libconfig float literal that reads back as the
 * same double: the shortest of 15 to 17 significant digits, with ".0"
 * added to an integer. Returns buf. */
const char *load_write_double_text(double v, char *buf, size_t size);

/* Writes every key of namespace `ns` that applies to a model of kind
 * `kind` (a task's: to its task type) as "key = value;" lines of
 * `obj`'s values, indented by `indent` spaces, so that loading them
 * gives the same values (doubles with 17 significant digits, enums by
 * name). Keys the caller must write itself (arrays, nested groups: type
 * "any" in the tables) are skipped; their names are passed to
 * `skipped` (may be NULL) with `arg`. */
void load_write_keys(FILE *out, load_ns ns, const void *obj, model_kind kind,
                     int indent,
                     void (*skipped)(const char *key, void *arg), void *arg);

#endif
