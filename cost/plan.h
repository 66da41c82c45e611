/*
 * plan.h - a hierarchical parallelization plan for one model component.
 *
 * A plan is an ordered list of levels, innermost first, each a strategy
 * and a degree, written "fsdp:8,ddp:256" in configs and output files.
 * Dense components take ddp, fsdp and tp; embeddings take mp and ddp.
 * plan_parse/plan_format are pure string functions (no I/O), shared by
 * the loader, the sweep enumerator and the report.
 */
#ifndef MADSWEEP_PLAN_H
#define MADSWEEP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define PLAN_MAX_LEVELS 4
#define PLAN_TEXT_MAX 64

typedef enum plan_strategy {
    PLAN_DDP = 0,  /* replicate, all-reduce gradients */
    PLAN_FSDP = 1, /* shard weights, all-gather before use */
    PLAN_TP = 2,   /* shard layers, all-reduce activations */
    PLAN_MP = 3,   /* shard embedding tables, all-to-all lookups */
    PLAN_NSTRATEGIES = 4
} plan_strategy;

typedef struct plan_t {
    int nlevels;
    plan_strategy strategy[PLAN_MAX_LEVELS];
    int64_t degree[PLAN_MAX_LEVELS];
} plan_t;

/* "ddp", "fsdp", "tp", "mp"; parse returns -1 for unknown names. */
const char *plan_strategy_name(plan_strategy s);
int plan_strategy_parse(const char *s);

/* Parses one level "name:degree". Returns 0, or -1 with *why set to a
 * static explanation. */
int plan_parse_level(const char *text, plan_strategy *s, int64_t *degree,
                     const char **why);

/* Appends a level; returns -1 when the plan is full. */
int plan_push(plan_t *p, plan_strategy s, int64_t degree);

/* Writes "fsdp:8,ddp:256" into buf (always NUL-terminated); returns the
 * length the full text needs, like snprintf. */
int plan_format(const plan_t *p, char *buf, size_t size);

/* Product of the degrees of levels using strategy s (1 if none). */
int64_t plan_degree_of(const plan_t *p, plan_strategy s);

/* Product of all degrees. */
int64_t plan_total(const plan_t *p);

#endif
