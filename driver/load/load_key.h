/*
 * load_key.h - what the loader's files (driver/load/) share: the key
 * table.
 *
 * One table per catalogue namespace, a row per key holding every fact
 * of the key: name, type, offset into the loaded struct, model kinds,
 * required, help, task types, and for a number its accepted range and
 * unit. The rows drive parsing and range checks (load_value, the walker
 * load_value_group: load_value.c; range.c), `madsweep keys` (load_keys.c) and
 * writing keys back (load_write.c); the public face of the facts is
 * load.h's load_keys_range_text / load_keys_unit. Beside them the `base`
 * resolution every catalogue reader uses (load.c). Not for use outside
 * driver/load/.
 *
 * Invariant (load_keys_check): a row whose type is a number (LT_INT,
 * LT_MB, LT_CONC: an integer range; LT_FLOAT, LT_FACT: a float range)
 * has a range of that kind, lo <= hi, and a unit; rows of other types
 * have a range only when a reader of their own checks it by the row
 * (a list of numbers, "auto" or a number: LT_ANY); a number key read in
 * several namespaces has one unit there (its range may differ: pooling).
 */
#ifndef MADSWEEP_LOAD_KEY_H
#define MADSWEEP_LOAD_KEY_H

#include "load.h"
#include "range.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum load_type {
    LT_INT,
    LT_FLOAT,
    LT_BOOL,
    LT_STRING,
    LT_PLAN,
    LT_MODEL_KIND,
    LT_TASK_KIND,
    LT_MLP,
    LT_NOTE, /* a string that is checked but not stored */
    /* detailed fidelity */
    LT_ARCH,
    LT_POSITION,
    LT_RECOMPUTE,
    LT_SCHEDULE,
    LT_ATTENTION,
    LT_DTYPE,
    LT_ALGO,
    LT_LAYOUT,
    LT_EMB_SHARDING,
    LT_EMB_OPT,
    LT_FP8_RECIPE,
    LT_FACT,    /* a number, or [low, nominal, high] (cost/stack.h) */
    LT_TEXT,    /* a string of up to STACK_SUMMARY_MAX - 1 bytes */
    LT_TRI,     /* true/false stored as an int 1/0 (absent: -1, set by the caller) */
    LT_MB,      /* a task's micro_batch or vpp: an integer, or "auto" (load_value_auto_flag) */
    LT_PP_SEND, /* "full" or "scatter_gather" */
    LT_SCHEDULER, /* serving: "continuous" or "static" */
    LT_CONC,    /* serving concurrency: an integer, "max" or "sla" */
    LT_KVDTYPE, /* a KV-cache dtype stored as 1 + hw_dtype (absent: 0, the compute dtype) */
    LT_WDTYPE,  /* stored weights, TASK_W_* (absent: 0, the compute dtype) */
    LT_FRONT_END, /* serving: "engine" or "dynamo" (TASK_FRONT_*) */
    LT_ANY /* resolved by the caller (a group or a catalogue name) */
} load_type;

enum { LK_DLRM = 1u, LK_LLM = 2u, LK_ALL = 3u };
enum { LR_NO = 0, LR_YES = 1, LR_FINETUNE = 2 };

typedef struct load_key {
    const char *name;
    load_type type;
    size_t offset;
    unsigned kinds; /* model kinds the key applies to */
    int required;   /* LR_* */
    const char *doc;
    unsigned types;    /* task types the key applies to, LOAD_T_*; 0: every type */
    range_kind range;  /* what kind of number it is (range.h), or none */
    double lo, hi;     /* a number's accepted range, checked before any arithmetic */
    const char *unit;  /* what a number counts ("bytes/s per device"; "1": a pure
                        * number), "bool" for a flag; NULL otherwise */
} load_key;

/* A table entry: a key of every task type, and (task tables) one that
 * only the task types `ty` read; a task of another type that gives it is
 * refused at its line, and the point writer leaves it out. The last
 * argument is one of the five below: the key's range and unit (a
 * variadic argument, since it expands to four fields and the readers'
 * own row macros pass it on). */
#define LOAD_KEY(name, type, offset, kinds, required, doc, ...)                \
    {name, type, offset, kinds, required, doc, 0, __VA_ARGS__}
#define LOAD_KEY_T(ty, name, type, offset, kinds, required, doc, ...)          \
    {name, type, offset, kinds, required, doc, ty, __VA_ARGS__}
/* An integer from lo to hi; a float from lo to hi (0 in it or not, as
 * lo says); a float that is 0 or from lo to hi (lo > 0); not a number,
 * with a unit ("bool"); neither. */
#define LOAD_INT(lo, hi, unit) RANGE_INT, (double)(lo), (double)(hi), unit
#define LOAD_FLOAT(lo, hi, unit) RANGE_FLOAT, (double)(lo), (double)(hi), unit
#define LOAD_FLOAT_OR0(lo, hi, unit) RANGE_FLOAT_OR0, (double)(lo), (double)(hi), unit
#define LOAD_UNIT(unit) RANGE_NONE, 0.0, 0.0, unit
#define LOAD_NONUM RANGE_NONE, 0.0, 0.0, NULL
/* The task types of load_key.types (1 << task_kind): training (pretrain
 * and finetune), finetune only, inference. */
enum {
    LOAD_T_TRAIN = (1u << TASK_PRETRAIN) | (1u << TASK_FINETUNE),
    LOAD_T_FINETUNE = 1u << TASK_FINETUNE,
    LOAD_T_INFER = 1u << TASK_INFERENCE
};

/* A key table and its length, as the other files see it. */
typedef struct load_table {
    const load_key *keys;
    size_t n;
} load_table;

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

/* The `base` key of a catalogue with bases (list `list`, file `file`). */
#define LOAD_BASE_KEY(list, file)                                              \
    LOAD_KEY("base", LT_NOTE, 0, LK_ALL, LR_NO,                                \
             "an entry to start from (list '" list "' of this file, else " file \
             "); the other keys override its figures, only name is required", \
             LOAD_NONUM)

/* load_value_group flags: fine-tuning keys required; a group with a `base`
 * (only `name` required: the base gave the rest, the group overrides); a
 * group filled from a file it names (hf_config: nothing required, the
 * group overrides). */
enum { LG_FINETUNE = 1u, LG_BASED = 2u, LG_FILLED = 4u };

/* The catalogues' key tables (each defined beside its reader). */
extern const load_table load_model_table;   /* load_model.c */
extern const load_table load_model_detailed_table;  /* load_model.c */
extern const load_table load_hw_table;      /* load_hw.c */
extern const load_table load_system_table;  /* load_system.c */
extern const load_table load_system_detailed_table; /* load_system.c */
extern const load_table load_task_table;    /* load_task.c */
extern const load_table load_task_detailed_table;   /* load_task.c */
extern const load_table load_stack_table;   /* load_stack.c */
extern const load_table load_prefill_table; /* load_point.c */

/* load_keys.c: the table of namespace ns. */
const load_table *load_keys_table(load_ns ns);

/* load_keys.c: the row of key `name` in table t, or NULL. */
const load_key *load_keys_find(const load_table *t, const char *name);

/* load_value.c: "a group", "an integer", ... for libconfig type `type`. */
const char *load_value_type_name(int type);

/* load_value.c: the "auto" flag of an LT_MB key of a task (micro_batch or vpp). */
bool *load_value_auto_flag(task_t *t, const char *key);

/* load_value.c: reads setting s as key k into obj (type and range checked). */
int load_value(const config_setting_t *s, const load_key *k, void *obj,
               load_err *err);

/* load_value.c: loads the keys of `keys` that apply to `kinds` from group g
 * into obj: unknown members (named with the closest key), missing
 * required keys and type errors are failures. `ns` names the group in
 * messages; flags LG_*. */
int load_value_group(const config_setting_t *g, const char *ns,
                     const load_key *keys, size_t nkeys, unsigned kinds,
                     unsigned flags, void *obj, load_err *err);

/* load_value.c: member `name` of g, else g itself (where an error points). */
const config_setting_t *load_value_member_or(const config_setting_t *g,
                                             const char *name);

/* load.c: the entry that setting s (a group, or a string naming an
 * entry of list `list`) stands for: in s's own file only when
 * configs_dir is NULL, else as load_resolve() does, the catalogue
 * configs_dir/file then being open in *aux (*aux_open set) and noted in
 * reads. NULL with err set when there is none. */
const config_setting_t *load_entry(const config_setting_t *s,
                                   const char *list, const char *file,
                                   const char *configs_dir,
                                   load_reads *reads, config_t *aux,
                                   int *aux_open, load_err *err);

/* load.c: the entry that g's `base` names (see load_entry), at most
 * LOAD_BASE_DEPTH deep; *base is NULL when g has no base. Returns 0, or
 * -1 with err set. */
int load_base(const config_setting_t *g, const char *list,
              const char *file, const char *configs_dir,
              load_reads *reads, int depth, config_t *aux, int *aux_open,
              const config_setting_t **base, load_err *err);

/* load_value.c: member `key` of g as an array or list of 1..max elements
 * (`what` names them in messages); NULL with err set otherwise. */
const config_setting_t *load_value_array(const config_setting_t *g,
                                         const char *key, int max,
                                         const char *what, int *len,
                                         load_err *err);

/* load_stack.c: whether `key` is one of the facts a serving stack must
 * state (a training stack does not write them). */
bool load_stack_is_serving_fact(const char *key);

#endif
