/*
 * lint.c - the lexical pre-check of libconfig files (see lint.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "lint.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LINT_MAX_BYTES (64L << 20)
#define LINT_MAX_DEPTH 10

static char *lint_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len >= 0 && len <= LINT_MAX_BYTES && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)len + 1);
        if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    if (buf) {
        buf[len] = '\0';
        *n = (size_t)len;
    }
    return buf;
}

/* Position after the string literal starting at s[i] (a quote); the
 * literal's text (escapes kept) goes to `text` when not NULL. */
static size_t lint_string(const char *s, size_t n, size_t i, int *line,
                          char *text, size_t tsize)
{
    size_t k = 0;
    for (i++; i < n && s[i] != '"'; i++) {
        if (s[i] == '\\' && i + 1 < n)
            i++;
        if (s[i] == '\n')
            (*line)++;
        if (text && k + 1 < tsize)
            text[k++] = s[i];
    }
    if (text)
        text[k] = '\0';
    return i < n ? i + 1 : n;
}

static int lint_file(const char *path, const char *dir, int depth, char *msg,
                     size_t size);

/* The @include at s[i]: checks its target; position after it. */
static size_t lint_include(const char *path, const char *dir, int depth,
                           const char *s, size_t n, size_t i, int *line,
                           int *bad, char *msg, size_t size)
{
    size_t j = i + strlen("@include");
    while (j < n && (s[j] == ' ' || s[j] == '\t'))
        j++;
    if (j >= n || s[j] != '"')
        return j;
    char name[1024];
    int at = *line;
    j = lint_string(s, n, j, line, name, sizeof name);
    char full[2048];
    snprintf(full, sizeof full, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
    struct stat st;
    if (stat(full, &st) != 0) {
        /* libconfig said only "cannot open include file" (issue 29); it
         * puts the catalogue directory before every path, absolute ones
         * too */
        int e = errno;
        snprintf(msg, size, "%s:%d: @include \"%s\": cannot open %s (%s); @include "
                 "paths are relative to the catalogue directory %s (--configs or "
                 "$MADSWEEP_CONFIGS)%s", path, at, name, full, strerror(e),
                 dir ? dir : ".", name[0] == '/' ? ", absolute ones too" : "");
        *bad = 1;
        return j;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(msg, size, "%s:%d: @include \"%s\": %s is %s, not a file",
                 path, at, name, full, S_ISDIR(st.st_mode) ? "a directory"
                                                           : "special");
        *bad = 1;
    } else if (depth >= LINT_MAX_DEPTH) {
        snprintf(msg, size, "%s:%d: @include \"%s\": includes nested more "
                 "than %d deep", path, at, name, LINT_MAX_DEPTH);
        *bad = 1;
    } else if (lint_file(full, dir, depth + 1, msg, size) != 0) {
        *bad = 1;
    }
    return j;
}

/* An integer literal that libconfig 1.5 would read as something else:
 * without the L suffix it keeps the low 32 bits of a larger value
 * (5000000000 -> 705032704; a hexadecimal above 0x7fffffff turns
 * negative), and with it a value past 64 bits saturates. 1 with msg set
 * for such a word (a number token), else 0. */
static int lint_integer(const char *w, size_t len, const char *path, int line,
                        const char *key, char *msg, size_t size)
{
    char t[96];
    if (len == 0 || len >= sizeof t)
        return 0;
    memcpy(t, w, len);
    t[len] = '\0';
    size_t k = t[0] == '+' || t[0] == '-' ? 1 : 0;
    bool hex = t[k] == '0' && (t[k + 1] == 'x' || t[k + 1] == 'X');
    size_t d = hex ? k + 2 : k, e = d;
    while (t[e] && (hex ? isxdigit((unsigned char)t[e]) : isdigit((unsigned char)t[e])))
        e++;
    if (e == d)
        return 0; /* not an integer (a float, a word, a boolean) */
    size_t l = e;
    while (t[l] == 'L')
        l++;
    if (t[l] != '\0' || l - e > 2)
        return 0; /* a float such as 1.5e3, or libconfig's own error */
    bool wide = l > e;
    t[e] = '\0';
    errno = 0;
    char *end = NULL;
    long long v = 0;
    unsigned long long u = 0;
    if (hex)
        u = strtoull(t + d, &end, 16);
    else
        v = strtoll(t, &end, 10);
    bool over64 = errno == ERANGE;
    bool big = over64 || (hex && !wide && u > 0x7fffffffULL) ||
               (!hex && !wide && (v > 2147483647LL || v < -2147483648LL));
    if (!big)
        return 0;
    /* past 64 bits the L suffix does not help; in an array, libconfig
     * wants it on every element ("mismatched element type" otherwise):
     * the advice says so (issue 29) */
    snprintf(msg, size, "%s:%d: key '%s': the integer %.*s %s; %s", path, line,
             key[0] ? key : "?", (int)len, w,
             wide || over64 ? "does not fit 64 bits" : "does not fit 32 bits",
             wide || over64 ? "give a smaller value"
                  : "write it with libconfig's L suffix, in an array on every element "
                    "([1L, 5000000000L]) (libconfig keeps only the low 32 bits of a "
                    "larger integer without it)");
    return 1;
}

static int lint_file(const char *path, const char *dir, int depth, char *msg,
                     size_t size)
{
    size_t n = 0;
    char *s = lint_read(path, &n);
    if (!s)
        return 0;
    int line = 1, bad = 0;
    if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
        /* libconfig said "syntax error" at line 1 (issue 29) */
        snprintf(msg, size, "%s:1: a UTF-8 byte-order mark (EF BB BF) starts the file: "
                 "libconfig cannot read it; save the file without it", path);
        free(s);
        return -1;
    }
    char prev = ';'; /* the last token: punctuation, 's' string, 'w' word */
    char nest[256];  /* open brackets; a ',' separates values only in [ ( */
    int depth_n = 0;
    char word[64] = "", key[64] = ""; /* the last word; the setting it names */
    for (size_t i = 0; i < n && !bad;) {
        char c = s[i];
        if (c == '\0') {
            snprintf(msg, size, "%s:%d: a NUL byte: not a text file", path, line);
            bad = 1;
        } else if (c == '\n') {
            line++;
            i++;
        } else if (c == '#' || (c == '/' && i + 1 < n && s[i + 1] == '/')) {
            while (i < n && s[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
                line += s[i] == '\n';
            i = i < n ? i + 2 : n;
        } else if (c == '"') {
            bool in_list = depth_n > 0 && depth_n <= (int)sizeof nest &&
                           nest[depth_n - 1] != '{';
            if (!strchr("=:[(s", prev) && !(prev == ',' && in_list)) {
                snprintf(msg, size, "%s:%d: syntax error: a string where a "
                         "setting name, ';' or '}' is expected", path, line);
                bad = 1;
            }
            i = lint_string(s, n, i, &line, NULL, 0);
            prev = 's';
        } else if (c == '@' && strncmp(s + i, "@include", 8) == 0) {
            i = lint_include(path, dir, depth, s, n, i, &line, &bad, msg, size);
            prev = ';';
        } else if (strchr("=:;,[](){}", c)) {
            if (c == '=' || c == ':')
                snprintf(key, sizeof key, "%s", word);
            if (c == '[' || c == '(' || c == '{') {
                if (depth_n < (int)sizeof nest)
                    nest[depth_n] = c;
                depth_n++;
            } else if ((c == ']' || c == ')' || c == '}') && depth_n > 0) {
                depth_n--;
            }
            prev = c;
            i++;
        } else if (isspace((unsigned char)c)) {
            i++;
        } else {
            size_t j = i; /* a whole word: a name, a number, a boolean */
            while (j < n && !isspace((unsigned char)s[j]) && !strchr("=:;,[](){}\"#", s[j]) &&
                   s[j] != '\0' && !(s[j] == '/' && j + 1 < n && (s[j + 1] == '/' ||
                                                                  s[j + 1] == '*')))
                j++;
            if (j == i)
                j++;
            snprintf(word, sizeof word, "%.*s", (int)(j - i), s + i);
            if (prev != 'w' && lint_integer(s + i, j - i, path, line, key, msg, size))
                bad = 1;
            prev = 'w';
            i = j;
        }
    }
    free(s);
    return bad ? -1 : 0;
}

int lint_config(const char *path, const char *include_dir, char *msg,
                size_t size)
{
    return lint_file(path, include_dir, 0, msg, size);
}
