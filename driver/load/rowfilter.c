/*
 * rowfilter.c - parsing the row-filter language of rowfilter.h (fit
 * declarations' `rows`, serving stacks' `match`): a recursive descent
 * over one string that only checks it (the scripts evaluate it).
 *
 * Invariants: the parser never reads past the terminating NUL, nests at
 * most ROWFILTER_MAX_DEPTH deep (a hostile catalogue cannot exhaust the
 * stack), and reports the first error with its byte offset.
 */
#include "rowfilter.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct rf_parser {
    const char *s;  /* the whole text */
    size_t i;       /* next byte */
    int depth;
    char *why;
    size_t size;
    bool failed;
} rf_parser;

static void rf_fail(rf_parser *p, const char *what)
{
    if (p->failed)
        return;
    p->failed = true;
    snprintf(p->why, p->size, "%s at offset %zu", what, p->i);
}

static void rf_space(rf_parser *p)
{
    while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
           p->s[p->i] == '\r')
        p->i++;
}

/* Consumes `tok` when the text continues with it. */
static bool rf_take(rf_parser *p, const char *tok)
{
    rf_space(p);
    size_t n = strlen(tok);
    if (strncmp(p->s + p->i, tok, n) != 0)
        return false;
    p->i += n;
    return true;
}

/* A column name or keyword: [a-z_][a-z0-9_]*; its length (0: none). */
static size_t rf_word(const rf_parser *p)
{
    const char *w = p->s + p->i;
    if (!(islower((unsigned char)w[0]) || w[0] == '_'))
        return 0;
    size_t n = 1;
    while (islower((unsigned char)w[n]) || isdigit((unsigned char)w[n]) || w[n] == '_')
        n++;
    return n;
}

static void rf_value(rf_parser *p)
{
    rf_space(p);
    char q = p->s[p->i];
    if (q == '\'' || q == '"') {
        p->i++;
        while (p->s[p->i] && p->s[p->i] != q)
            p->i++;
        if (!p->s[p->i]) {
            rf_fail(p, "unterminated string");
            return;
        }
        p->i++;
        return;
    }
    size_t n = 0;
    const char *v = p->s + p->i;
    if (v[n] == '-' || v[n] == '+')
        n++;
    size_t digits = 0;
    while (isdigit((unsigned char)v[n]) || v[n] == '.' || v[n] == 'e' || v[n] == 'E' ||
           ((v[n] == '-' || v[n] == '+') && n > 0 && (v[n - 1] == 'e' || v[n - 1] == 'E'))) {
        digits += isdigit((unsigned char)v[n]) != 0;
        n++;
    }
    if (digits == 0) {
        rf_fail(p, "expected a 'quoted' value or a number");
        return;
    }
    p->i += n;
}

static void rf_or(rf_parser *p);

static void rf_unary(rf_parser *p)
{
    if (p->failed)
        return;
    if (++p->depth > ROWFILTER_MAX_DEPTH) {
        rf_fail(p, "nested too deep");
        return;
    }
    rf_space(p);
    if (p->s[p->i] == '!' && p->s[p->i + 1] != '=' && p->s[p->i + 1] != '~') {
        p->i++;
        rf_unary(p);
    } else if (rf_take(p, "(")) {
        rf_or(p);
        if (!p->failed && !rf_take(p, ")"))
            rf_fail(p, "expected ')'");
    } else {
        size_t n = rf_word(p);
        if (n == 0) {
            rf_fail(p, "expected a column name, '(', '!', true or false");
        } else if ((n == 4 && strncmp(p->s + p->i, "true", 4) == 0) ||
                   (n == 5 && strncmp(p->s + p->i, "false", 5) == 0)) {
            p->i += n;
        } else {
            p->i += n;
            static const char *const ops[] = {"==", "!=", "!~", "<=", ">=", "~", "<", ">"};
            bool op = false;
            for (size_t k = 0; k < sizeof ops / sizeof ops[0] && !op; k++)
                op = rf_take(p, ops[k]);
            if (!op)
                rf_fail(p, "expected an operator (== != ~ !~ < <= > >=)");
            else
                rf_value(p);
        }
    }
    p->depth--;
}

static void rf_and(rf_parser *p)
{
    rf_unary(p);
    while (!p->failed && rf_take(p, "&&"))
        rf_unary(p);
}

static void rf_or(rf_parser *p)
{
    rf_and(p);
    while (!p->failed && rf_take(p, "||"))
        rf_and(p);
}

int rowfilter_check(const char *text, char *why, size_t size)
{
    rf_parser p = {.s = text ? text : "", .why = why, .size = size};
    if (size)
        why[0] = '\0';
    if (strlen(p.s) > ROWFILTER_MAX_TEXT) {
        snprintf(why, size, "longer than %d bytes", ROWFILTER_MAX_TEXT);
        return -1;
    }
    rf_or(&p);
    rf_space(&p);
    if (!p.failed && p.s[p.i] != '\0')
        rf_fail(&p, "unexpected text (expected && or || or the end)");
    return p.failed ? -1 : 0;
}
