/*
 * autoplan.c - plan templates, their resolution, and madmax's `auto` set.
 *
 * Invariant: autoplan_resolve() either returns a plan whose degrees are
 * all concrete and >= 2 and multiply to the cluster's devices, or an
 * INVALID code; it never divides by zero (degrees are checked first).
 */
#include "autoplan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define L(s, k) {PLAN_##s, AUTOPLAN_##k, 0}

static const autoplan_tmpl ap_dense[] = {
    {1, {L(DDP, ALL)}},
    {1, {L(FSDP, ALL)}},
    {1, {L(TP, ALL)}},
    {2, {L(FSDP, NODE), L(DDP, REST)}},
    {2, {L(FSDP, NODE), L(TP, REST)}},
    {2, {L(DDP, NODE), L(TP, REST)}},
    {2, {L(TP, NODE), L(DDP, REST)}},
};

static const autoplan_tmpl ap_emb[] = {
    {1, {L(MP, ALL)}},
    {1, {L(DDP, ALL)}},
    {2, {L(MP, NODE), L(DDP, REST)}},
    {2, {L(DDP, NODE), L(MP, REST)}},
};

#define NDENSE ((int64_t)(sizeof ap_dense / sizeof ap_dense[0]))
#define NEMB ((int64_t)(sizeof ap_emb / sizeof ap_emb[0]))

static const char *const ap_kind_names[] = {"", "node", "all", "rest"};

int autoplan_parse(const char *text, autoplan_tmpl *t, const char **why)
{
    memset(t, 0, sizeof *t);
    const char *p = text;
    if (*p == '\0') {
        *why = "empty plan";
        return -1;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char level[32];
        if (len == 0 || len >= sizeof level) {
            *why = "expected \"strategy:degree\" levels separated by commas";
            return -1;
        }
        memcpy(level, p, len);
        level[len] = '\0';
        if (t->nlevels >= PLAN_MAX_LEVELS) {
            *why = "too many levels";
            return -1;
        }
        char *colon = strchr(level, ':');
        if (!colon) {
            *why = "expected \"strategy:degree\", e.g. \"fsdp:node\"";
            return -1;
        }
        *colon = '\0';
        int s = plan_strategy_parse(level);
        if (s < 0) {
            *why = "unknown strategy (expected ddp, fsdp, tp or mp)";
            return -1;
        }
        autoplan_level *lv = &t->level[t->nlevels];
        lv->strategy = (plan_strategy)s;
        const char *deg = colon + 1;
        int k;
        for (k = AUTOPLAN_NODE; k <= AUTOPLAN_REST; k++)
            if (strcmp(deg, ap_kind_names[k]) == 0)
                break;
        if (k <= AUTOPLAN_REST) {
            lv->kind = (autoplan_deg)k;
        } else {
            char *end = NULL;
            errno = 0;
            long long d = strtoll(deg, &end, 10);
            if (errno || end == deg || *end || d < 1) {
                *why = "degree must be a positive integer, node, all or rest";
                return -1;
            }
            lv->kind = AUTOPLAN_NUM;
            lv->degree = (int64_t)d;
        }
        for (int i = 0; i < t->nlevels; i++)
            if (t->level[i].kind == AUTOPLAN_REST && lv->kind == AUTOPLAN_REST) {
                *why = "at most one level can have degree \"rest\"";
                return -1;
            }
        t->nlevels++;
        p += len;
        if (*p == ',') {
            p++;
            if (*p == '\0') {
                *why = "trailing comma";
                return -1;
            }
        }
    }
    return 0;
}

int autoplan_format(const autoplan_tmpl *t, char *buf, size_t size)
{
    int total = 0;
    if (size > 0)
        buf[0] = '\0';
    for (int i = 0; i < t->nlevels; i++) {
        const autoplan_level *lv = &t->level[i];
        size_t used = (size_t)total < size ? (size_t)total : size;
        int n = lv->kind == AUTOPLAN_NUM
                    ? snprintf(buf + used, size - used, "%s%s:%lld",
                               i ? "," : "", plan_strategy_name(lv->strategy),
                               (long long)lv->degree)
                    : snprintf(buf + used, size - used, "%s%s:%s",
                               i ? "," : "", plan_strategy_name(lv->strategy),
                               ap_kind_names[lv->kind]);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

status_code autoplan_resolve(const autoplan_tmpl *t, const cluster_t *c,
                             plan_t *out)
{
    out->nlevels = t->nlevels;
    int64_t known = 1;
    int rest = -1;
    for (int i = 0; i < t->nlevels; i++) {
        const autoplan_level *lv = &t->level[i];
        int64_t d = lv->kind == AUTOPLAN_NUM    ? lv->degree
                    : lv->kind == AUTOPLAN_NODE ? c->devices_per_node
                    : lv->kind == AUTOPLAN_ALL  ? c->devices
                                                : 0;
        out->strategy[i] = lv->strategy;
        out->degree[i] = d;
        if (lv->kind == AUTOPLAN_REST) {
            rest = i;
            continue;
        }
        if (d < 2)
            return STATUS_INVALID_DEGREE_ONE;
        if (known > c->devices / d + 1)
            return STATUS_INVALID_PRODUCT; /* product would overflow */
        known *= d;
    }
    if (rest >= 0) {
        if (c->devices % known != 0)
            return STATUS_INVALID_PRODUCT;
        out->degree[rest] = c->devices / known;
        if (out->degree[rest] < 2)
            return STATUS_INVALID_DEGREE_ONE;
    }
    return STATUS_OK;
}

status_code autoplan_apply(point_t *p, const autoplan_pair *pair,
                           int64_t global_batch)
{
    status_code rc = autoplan_resolve(&pair->dense, &p->cluster, &p->task.dense);
    if (rc == STATUS_OK)
        rc = autoplan_resolve(&pair->emb, &p->cluster, &p->task.emb);
    if (rc != STATUS_OK)
        return rc;
    task_factors f;
    task_factors_of(&p->task, &f);
    if (global_batch < 1 || global_batch % f.dense_duplicate != 0 ||
        global_batch % f.emb_duplicate != 0)
        return STATUS_INVALID_BATCH_MISMATCH;
    p->task.local_batch_dense = global_batch / f.dense_duplicate;
    p->task.local_batch_emb = global_batch / f.emb_duplicate;
    return STATUS_OK;
}

int64_t autoplan_madmax_count(void)
{
    return NDENSE * NEMB;
}

static const autoplan_pair *ap_madmax(int64_t i, autoplan_pair *buf)
{
    if (i < 0 || i >= NDENSE * NEMB)
        return NULL;
    buf->dense = ap_dense[i / NEMB];
    buf->emb = ap_emb[i % NEMB];
    return buf;
}

status_code autoplan_madmax_apply(point_t *p, int64_t i, int64_t global_batch)
{
    autoplan_pair pair;
    if (!ap_madmax(i, &pair))
        return STATUS_INVALID_VALUE;
    return autoplan_apply(p, &pair, global_batch);
}

int autoplan_candidate(const eval_ops *ops, int64_t i, autoplan_pair *out)
{
    if (!ops || ops->auto_apply != autoplan_madmax_apply)
        return -1;
    return ap_madmax(i, out) ? 0 : -1;
}
