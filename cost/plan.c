/*
 * plan.c - parsing, formatting and arithmetic of parallelization plans.
 */
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const plan_names[PLAN_NSTRATEGIES] = {"ddp", "fsdp", "tp",
                                                         "mp"};

const char *plan_strategy_name(plan_strategy s)
{
    return (s >= 0 && s < PLAN_NSTRATEGIES) ? plan_names[s] : "?";
}

int plan_strategy_parse(const char *s)
{
    for (int i = 0; i < PLAN_NSTRATEGIES; i++)
        if (strcmp(s, plan_names[i]) == 0)
            return i;
    return -1;
}

int plan_parse_level(const char *text, plan_strategy *s, int64_t *degree,
                     const char **why)
{
    const char *colon = strchr(text, ':');
    if (!colon) {
        *why = "expected \"strategy:degree\", e.g. \"fsdp:8\"";
        return -1;
    }
    char name[16];
    size_t len = (size_t)(colon - text);
    if (len == 0 || len >= sizeof name) {
        *why = "unknown strategy (expected ddp, fsdp, tp or mp)";
        return -1;
    }
    memcpy(name, text, len);
    name[len] = '\0';
    int k = plan_strategy_parse(name);
    if (k < 0) {
        *why = "unknown strategy (expected ddp, fsdp, tp or mp)";
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long long d = strtoll(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0') {
        *why = "degree is not an integer";
        return -1;
    }
    if (d <= 0) {
        *why = "degree must be positive";
        return -1;
    }
    *s = (plan_strategy)k;
    *degree = (int64_t)d;
    return 0;
}

int plan_push(plan_t *p, plan_strategy s, int64_t degree)
{
    if (p->nlevels >= PLAN_MAX_LEVELS)
        return -1;
    p->strategy[p->nlevels] = s;
    p->degree[p->nlevels] = degree;
    p->nlevels++;
    return 0;
}

int plan_format(const plan_t *p, char *buf, size_t size)
{
    int total = 0;
    if (size > 0)
        buf[0] = '\0';
    for (int i = 0; i < p->nlevels; i++) {
        size_t used = (size_t)total < size ? (size_t)total : size;
        int n = snprintf(buf + used, size - used, "%s%s:%lld", i ? "," : "",
                         plan_strategy_name(p->strategy[i]),
                         (long long)p->degree[i]);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

int64_t plan_degree_of(const plan_t *p, plan_strategy s)
{
    int64_t d = 1;
    for (int i = 0; i < p->nlevels; i++)
        if (p->strategy[i] == s)
            d *= p->degree[i];
    return d;
}

int64_t plan_total(const plan_t *p)
{
    int64_t d = 1;
    for (int i = 0; i < p->nlevels; i++)
        d *= p->degree[i];
    return d;
}
