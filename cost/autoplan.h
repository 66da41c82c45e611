/*
 * autoplan.h - plan templates and the `auto` strategies of sweeps.
 *
 * A template is a plan whose degrees may be symbolic, resolved against a
 * cluster: a number, "node" (devices per node), "all" (all devices) or
 * "rest" (all devices divided by the product of the plan's other
 * degrees; at most one per plan). "fsdp:node,ddp:rest" is FSDP inside a
 * node and DDP across nodes on any system. Sweep specs write explicit
 * strategies as template pairs (dense, embedding); the `auto` strategy
 * set of the madmax fidelity is a fixed table of such pairs:
 *   dense (7): ddp:all, fsdp:all, tp:all, fsdp:node,ddp:rest,
 *              fsdp:node,tp:rest, ddp:node,tp:rest, tp:node,ddp:rest
 *   embedding (4): mp:all, ddp:all, mp:node,ddp:rest, ddp:node,mp:rest
 * candidate i = dense (i / 4) x embedding (i % 4), 28 in all: every 1- or
 * 2-level plan the reference's rules admit (first degree = node size or
 * all devices, no repeats, fsdp first). A candidate that does not apply
 * to a system (a 2-level plan on one node) resolves to an INVALID code.
 * Applying a pair with a global batch G sets each component's local batch
 * to G / (its replication factor), invalid unless that divides evenly.
 * Pure functions of their arguments: no I/O, no allocation, no state.
 */
#ifndef MADSWEEP_AUTOPLAN_H
#define MADSWEEP_AUTOPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "eval.h"

typedef enum autoplan_deg {
    AUTOPLAN_NUM = 0, /* the literal degree */
    AUTOPLAN_NODE,    /* devices per node */
    AUTOPLAN_ALL,     /* all devices */
    AUTOPLAN_REST     /* devices / product of the other degrees */
} autoplan_deg;

typedef struct autoplan_level {
    plan_strategy strategy;
    autoplan_deg kind;
    int64_t degree; /* AUTOPLAN_NUM only */
} autoplan_level;

typedef struct autoplan_tmpl {
    int nlevels;
    autoplan_level level[PLAN_MAX_LEVELS];
} autoplan_tmpl;

typedef struct autoplan_pair {
    autoplan_tmpl dense;
    autoplan_tmpl emb;
} autoplan_pair;

/* Parses "fsdp:node,ddp:rest" (levels innermost first). Returns 0, or -1
 * with *why set to a static explanation. */
int autoplan_parse(const char *text, autoplan_tmpl *t, const char **why);

/* Writes the template text; returns snprintf's result. */
int autoplan_format(const autoplan_tmpl *t, char *buf, size_t size);

/* Resolves a template for cluster c. Returns STATUS_OK or an INVALID
 * code (degree one, product, levels). */
status_code autoplan_resolve(const autoplan_tmpl *t, const cluster_t *c,
                             plan_t *out);

/* Resolves both templates into p->task and sets the local batches from
 * the global batch. Does not run the fidelity's check. */
status_code autoplan_apply(point_t *p, const autoplan_pair *pair,
                           int64_t global_batch);

/* The madmax fidelity's `auto` set (eval_ops auto_count / auto_apply). */
int64_t autoplan_madmax_count(void);
status_code autoplan_madmax_apply(point_t *p, int64_t i, int64_t global_batch);

/* Copies candidate i of a fidelity's `auto` set into *out (to describe
 * sweep axes); returns -1 when ops has no template table or i is out of
 * range. */
int autoplan_candidate(const eval_ops *ops, int64_t i, autoplan_pair *out);

#endif
