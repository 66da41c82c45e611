/*
 * best_plan.c - the plan key of a row of `madsweep best`: rows of a group
 * that differ only in their strategy index and in the order of degree-1
 * dimensions in their layout (tp-cp-dp-pp and tp-cp-pp-dp when pp = 1),
 * with every figure equal, are the same plan, and have the same key.
 */
#include "best_query.h"

#include <stdlib.h>
#include <string.h>

const char *const best_plan_dims[4] = {"tp", "cp", "dp", "pp"};

/* Degree of dimension d in a row: its column, else its "tpN" token in
 * dense_plan; -1 when the file says neither. */
static int64_t best_plan_degree(const best_query *q, const char *row, int d)
{
    if (q->deg[d])
        return frame_int(&q->f, q->deg[d], row);
    if (!q->dense)
        return -1;
    const char *s = frame_str(&q->f, q->dense, row);
    size_t n = strlen(best_plan_dims[d]);
    for (const char *p = s; *p;) {
        size_t len = strcspn(p, " ");
        if (len > n && strncmp(p, best_plan_dims[d], n) == 0 &&
            strspn(p + n, "0123456789") == len - n)
            return strtoll(p + n, NULL, 10);
        p += len;
        while (*p == ' ')
            p++;
    }
    return -1;
}

/* The dimension a layout token names: "tp" or the initial 't'; -1. */
static int best_plan_dim_of(const char *tok, size_t len)
{
    for (int d = 0; d < 4; d++)
        if ((len == 2 && strncmp(tok, best_plan_dims[d], 2) == 0) ||
            (len == 1 && tok[0] == best_plan_dims[d][0]))
            return d;
    return -1;
}

/* Rewrites layout text s (`len` bytes with its NUL) without the
 * dimensions of degree 1: "tp-cp-pp-dp" with pp = 1 becomes
 * "tp-cp-dp"; a letters token ("tcpd") becomes "tcd". `letters`: one
 * letter per dimension, no separator. Leaves s when it is not a layout. */
static void best_plan_drop_ones(char *s, size_t len, const int64_t deg[4], bool letters)
{
    char out[64] = "";
    size_t o = 0, n = strlen(s);
    int seen = 0;
    for (size_t i = 0; i < n;) {
        size_t tl = letters ? 1 : strcspn(s + i, "-");
        int d = best_plan_dim_of(s + i, tl);
        if (d < 0 || (seen & (1 << d)))
            return;
        seen |= 1 << d;
        if (deg[d] != 1) {
            if (!letters && o > 0)
                out[o++] = '-';
            memcpy(out + o, s + i, tl);
            o += tl;
        }
        i += tl + (!letters && s[i + tl] == '-');
    }
    if (seen != 15 || o >= len)
        return;
    memset(s, 0, len);
    memcpy(s, out, o);
}

/* The plan key of a row: the row without its id and strategy index and
 * with degree-1 dimensions taken out of its layout. */
void best_plan_key(const best_query *q, const char *row, char *key)
{
    size_t size = q->f.t.size;
    memcpy(key, row, size);
    if (q->id)
        memset(key + q->id->off, 0, 8);
    if (q->strat)
        memset(key + q->strat->off, 0, 8);
    int64_t deg[4];
    for (int d = 0; d < 4; d++)
        if ((deg[d] = best_plan_degree(q, row, d)) < 1)
            return;
    if (q->layout) {
        best_plan_drop_ones(key + q->layout->off, q->layout->len, deg, false);
        return;
    }
    if (!q->emb)
        return;
    /* files before named strategy columns: the layout is the emb_plan
     * token of the four initials */
    char *s = key + q->emb->off;
    for (char *p = s; *p;) {
        size_t len = strcspn(p, " ");
        if (len == 4) {
            char tok[5];
            memcpy(tok, p, 4);
            tok[4] = '\0';
            char before[5];
            memcpy(before, tok, 5);
            best_plan_drop_ones(tok, sizeof tok, deg, true);
            if (strcmp(tok, before) != 0) {
                char rest[256];
                snprintf(rest, sizeof rest, "%s", p + 4);
                size_t at = (size_t)(p - s);
                char *e = s + at;
                memset(e, 0, q->emb->len - at);
                snprintf(e, q->emb->len - at, "%s%s", tok, rest);
                return;
            }
        }
        p += len;
        while (*p == ' ')
            p++;
    }
}
