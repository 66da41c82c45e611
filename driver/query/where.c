/*
 * where.c - parsing and testing `--where` conditions (see where.h).
 */
#include "where.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const where_ops[] = {"<=", ">=", "==", "!=", "<", ">"};
static const where_op where_codes[] = {WHERE_LE, WHERE_GE, WHERE_EQ,
                                       WHERE_NE, WHERE_LT, WHERE_GT};

/* Copies [a, b) trimmed into buf; returns its length or -1 if too long. */
static int where_trim(const char *a, const char *b, char *buf, size_t size)
{
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    if ((size_t)(b - a) >= size)
        return -1;
    memcpy(buf, a, (size_t)(b - a));
    buf[b - a] = '\0';
    return (int)(b - a);
}

/* One term [a, b). */
static int where_term(where_cond *c, const frame *f, const char *opt, const char *a,
                      const char *b, char *msg, size_t size)
{
    char term[2 * WHERE_VALUE_MAX];
    if (where_trim(a, b, term, sizeof term) < 0) {
        snprintf(msg, size, "%s: a condition longer than %d characters", opt,
                 (int)sizeof term - 1);
        return -1;
    }
    if (!term[0]) {
        snprintf(msg, size, "%s: an empty condition (two commas, or a comma at an end)",
                 opt);
        return -1;
    }
    const char *at = NULL;
    int k = -1;
    for (const char *p = term; *p && !at; p++)
        for (int i = 0; i < 6; i++)
            if (strncmp(p, where_ops[i], strlen(where_ops[i])) == 0) {
                at = p;
                k = i;
                break;
            }
    if (!at) {
        const char *eq = strchr(term, '=');
        snprintf(msg, size, "%s: '%s' is not COLUMN OP VALUE (OP one of "
                 "< <= > >= == !=)%s", opt, term, eq ? "; write == for equality" : "");
        return -1;
    }
    char name[FRAME_NAME_MAX];
    if (where_trim(term, at, name, sizeof name) <= 0) {
        snprintf(msg, size, "%s: '%s' names no column", opt, term);
        return -1;
    }
    char value[WHERE_VALUE_MAX];
    const char *v = at + strlen(where_ops[k]);
    int vl = where_trim(v, v + strlen(v), value, sizeof value);
    if (vl >= 2 && (value[0] == '\'' || value[0] == '"') && value[vl - 1] == value[0]) {
        memmove(value, value + 1, (size_t)vl - 2);
        value[vl - 2] = '\0';
    } else if (vl <= 0) {
        snprintf(msg, size, "%s: '%s' has no value", opt, term);
        return -1;
    }
    char why[400];
    c->col = frame_find(f, name, why, sizeof why);
    if (!c->col) {
        snprintf(msg, size, "%s: '%s': %s", opt, term, why);
        return -1;
    }
    c->op = where_codes[k];
    snprintf(c->str, sizeof c->str, "%s", value);
    if (c->col->kind == FRAME_STR)
        return 0;
    char *end = NULL;
    errno = 0;
    c->num = strtod(value, &end);
    if (errno || end == value || *end) {
        if (strcmp(c->col->name, "status") == 0)
            for (int code = 0; code < 256; code++)
                if (strcmp(f->status_names[code], value) == 0) {
                    c->num = code;
                    return 0;
                }
        snprintf(msg, size, "%s: '%s': column '%s' holds numbers (%s); '%s' is "
                 "not a number", opt, term, c->col->name,
                 c->col->unit[0] ? c->col->unit : "1", value);
        return -1;
    }
    if (isnan(c->num)) { /* matched no row, or every row with != (issue 29) */
        snprintf(msg, size, "%s: '%s': NaN compares with nothing (no row equals it); "
                 "rows whose figure is NaN are those the figure does not apply to "
                 "(compare status or another column instead)", opt, term);
        return -1;
    }
    return 0;
}

int where_parse(where *w, const frame *f, const char *opt, const char *text, char *msg,
                size_t size)
{
    memset(w, 0, sizeof *w);
    if (!text || !*text)
        return 0;
    int cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    w->c = calloc((size_t)cap, sizeof *w->c);
    if (!w->c) {
        snprintf(msg, size, "%s: out of memory", opt);
        return -1;
    }
    const char *a = text;
    char quote = 0;
    for (const char *p = text;; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
            else if (*p == '\0') {
                snprintf(msg, size, "%s: unterminated quote in '%s'", opt, a);
                where_free(w);
                return -1;
            }
            continue;
        }
        if (*p == '\'' || *p == '"') {
            quote = *p;
            continue;
        }
        if (*p != ',' && *p != '\0')
            continue;
        if (where_term(&w->c[w->n], f, opt, a, p, msg, size) != 0) {
            where_free(w);
            return -1;
        }
        w->n++;
        if (*p == '\0')
            break;
        a = p + 1;
    }
    /* two equalities of one column that no row can meet together */
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < i; j++) {
            const where_cond *x = &w->c[j], *y = &w->c[i];
            if (x->col != y->col || x->op != WHERE_EQ || y->op != WHERE_EQ)
                continue;
            bool differ = x->col->kind == FRAME_STR ? strcmp(x->str, y->str) != 0
                                                    : x->num != y->num;
            if (differ) {
                snprintf(msg, size, "%s: %s==%s and %s==%s: no row meets both", opt,
                         x->col->name, x->str, y->col->name, y->str);
                where_free(w);
                return -1;
            }
        }
    return 0;
}

static bool where_cmp(int c, where_op op)
{
    switch (op) {
    case WHERE_LT:
        return c < 0;
    case WHERE_LE:
        return c <= 0;
    case WHERE_GT:
        return c > 0;
    case WHERE_GE:
        return c >= 0;
    case WHERE_EQ:
        return c == 0;
    default:
        return c != 0;
    }
}

bool where_match(const where *w, const frame *f, const char *row)
{
    for (int i = 0; i < w->n; i++) {
        const where_cond *c = &w->c[i];
        if (c->col->kind == FRAME_STR) {
            if (!where_cmp(strcmp(frame_str(f, c->col, row), c->str), c->op))
                return false;
            continue;
        }
        double v = frame_num(f, c->col, row);
        if (isnan(v) || isnan(c->num)) {
            if (c->op != WHERE_NE)
                return false;
            continue;
        }
        if (!where_cmp(v < c->num ? -1 : v > c->num ? 1 : 0, c->op))
            return false;
    }
    return true;
}

void where_free(where *w)
{
    free(w->c);
    memset(w, 0, sizeof *w);
}
