/*
 * sources.c (worker) - what a list of source files owns, lookup by name,
 * and reading a whole file (see worker/sources.h); the collection from a
 * loaded spec is driver/sweep/sources_collect.c.
 */
#include "sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sources_read(const char *path, int64_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0 || len + 1 < cap) {
            if (ferror(f)) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    fclose(f);
    if (buf) {
        buf[len] = '\0';
        *bytes = (int64_t)len;
    }
    return buf;
}

const source_file *sources_find(const sources *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->f[i].name, name) == 0)
            return &s->f[i];
    return NULL;
}

void sources_free(sources *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->f[i].text);
    free(s->f);
    memset(s, 0, sizeof *s);
}
