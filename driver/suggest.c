/*
 * suggest.c - closest known name to an unknown one (see suggest.h).
 */
#include "suggest.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int suggest_distance(const char *a, const char *b)
{
    enum { N = SUGGEST_NAME_MAX };
    size_t n = strlen(a), m = strlen(b);
    if (n >= N)
        n = N - 1;
    if (m >= N)
        m = N - 1;
    /* three rows: i-2, i-1, i (transpositions look two rows back) */
    int r0[N], r1[N], r2[N];
    int *pp = r0, *prev = r1, *cur = r2;
    for (size_t j = 0; j <= m; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (int)i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= m; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            int d = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            cur[j] = d;
        }
        int *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[m];
}

void suggest_init(suggest *s, const char *word)
{
    snprintf(s->word, sizeof s->word, "%s", word ? word : "");
    s->best[0] = '\0';
    s->dist = INT_MAX;
}

static int suggest_prefix(const char *word, const char *cand)
{
    size_t n = strlen(word);
    if (n < 3 || strlen(cand) <= n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)word[i]) != tolower((unsigned char)cand[i]))
            return 0;
    return 1;
}

void suggest_offer(suggest *s, const char *candidate)
{
    if (!candidate || !*candidate || strcmp(candidate, s->word) == 0)
        return;
    int d = suggest_distance(s->word, candidate);
    if (d > 1 && suggest_prefix(s->word, candidate))
        d = 1;
    if (d < s->dist) {
        s->dist = d;
        snprintf(s->best, sizeof s->best, "%s", candidate);
    }
}

const char *suggest_result(const suggest *s)
{
    size_t n = strlen(s->word);
    int limit = n <= 3 ? 1 : n <= 8 ? 2 : 3;
    return s->best[0] && s->dist <= limit ? s->best : NULL;
}

const char *suggest_hint(const suggest *s, char *buf, size_t size)
{
    const char *r = suggest_result(s);
    if (r)
        snprintf(buf, size, "; did you mean \"%s\"?", r);
    else if (size > 0)
        buf[0] = '\0';
    return buf;
}
