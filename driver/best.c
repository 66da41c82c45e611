/*
 * best.c - top-K points per group of a sweep file (see best.h).
 *
 * Invariant: a group's kept rows hold no two rows with the same plan key
 * (best_canon); rows are offered in file (id) order, so of two rows that
 * are the same plan the first one seen, the lower id, is the one kept.
 * While scanning, a group's rows are a binary heap with the worst kept
 * row at the root and its plan keys sit in a hash map (a key -> entry,
 * live[entry] while kept), so an offer costs O(log top) (issue 19:
 * `best --top 100000` on 140k rows was quadratic); best_finish sorts
 * each group best first.
 */
#include "best.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/result.h"
#include "../worker/check.h"
#include "frame.h"
#include "keymap.h"
#include "where.h"

#define BEST_BLOCK 16384
#define BEST_MAX_KEPT (INT64_C(1) << 22) /* rows kept over all groups */
#define BEST_MAX_COLS 16                 /* group columns */
#define BEST_CELL 160                    /* a printed value */

typedef struct best_group {
    int64_t n;     /* rows kept: a heap while scanning, best first after */
    char *rows;    /* top x row size */
    char *canon;   /* the rows' plan keys */
    double *val;
    int64_t *id;
    int64_t *entry;  /* per kept row: its key's entry in keys */
    keymap keys;     /* plan keys offered: key -> entry */
    uint8_t *live;   /* per entry: 1 while its row is kept */
    int64_t lcap;
    double order[BEST_MAX_COLS]; /* sort key of the group */
    /* --baseline: the best row matching it, and the rows matching it
     * that do not fit (not ok or over memory) */
    char *brow;
    double bval;
    int64_t bid, bunfit;
} best_group;

typedef struct best_query {
    const best_opts *o;
    frame f;
    where w, bw; /* --where, --baseline */
    bool base;
    const frame_col *by, *status, *id, *strat;
    const frame_col *fits; /* mem_fits: 1 fits, 0 exceeds, NaN not known */
    const frame_col *gcol[BEST_MAX_COLS];
    int ngcol;
    keymap gfirst[BEST_MAX_COLS]; /* text group columns: value -> ordinal */
    bool maximize;
    keymap groups; /* group key -> index */
    best_group *g;
    int64_t ng, gcap;
    /* plan keys: the degrees and the layout's column */
    const frame_col *deg[4], *dense, *layout, *emb;
    int64_t seen, matched, not_ok; /* not_ok: not ok, or not fitting */
    int64_t nan_by;                /* rows whose `by` is NaN (not computed) */
    const frame_col *lat;          /* comm_latency_modeled */
    int64_t nolat;                 /* rows matched whose collectives have no latency */
    const frame_col *ttype;        /* task.type: serving rows lack the training columns */
} best_query;

static const char *const best_dims[4] = {"tp", "cp", "dp", "pp"};

/* ------------------------------------------------------------ setup */

static const frame_col *best_results_col(const frame *f, const char *name,
                                         frame_kind kind)
{
    const frame_col *c = frame_find(f, name, NULL, 0);
    return c && c->src == FRAME_RESULTS && c->kind == kind ? c : NULL;
}

static int best_setup(best_query *q, FILE *err)
{
    const best_opts *o = q->o;
    char msg[600];
    const char *by = o->by ? o->by : "throughput_samples_per_s";
    q->by = frame_find(&q->f, by, msg, sizeof msg);
    if (!q->by) {
        fprintf(err, "madsweep best: --by: %s\n", msg);
        return 2;
    }
    if (q->by->kind == FRAME_STR) {
        fprintf(err, "madsweep best: --by: column '%s' is text; --by takes a "
                "number column (a figure such as tokens_per_s, or an axis "
                "figure such as devices)\n", by);
        return 2;
    }
    if (o->order && strcmp(o->order, "max") != 0 && strcmp(o->order, "min") != 0) {
        fprintf(err, "madsweep best: --order: expected max or min, got '%s'\n",
                o->order);
        return 2;
    }
    if (o->order)
        q->maximize = strcmp(o->order, "max") == 0;
    else
        q->maximize = result_direction_of(q->by->name, q->by->unit) > 0;
    if (where_parse(&q->w, &q->f, o->where, msg, sizeof msg) != 0) {
        fprintf(err, "madsweep best: %s\n", msg);
        return 2;
    }
    q->base = o->baseline != NULL;
    if (q->base && (where_parse(&q->bw, &q->f, o->baseline, msg, sizeof msg) != 0 ||
                    q->bw.n == 0)) {
        fprintf(err, "madsweep best: --baseline: %s\n",
                q->bw.n == 0 ? "expected conditions such as 'tp==1,pp==1'" : msg);
        return 2;
    }
    for (const char *p = o->group; p && *p;) {
        size_t len = strcspn(p, ",");
        char name[FRAME_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        if (strcmp(name, "batch") == 0) /* the axis' short name */
            snprintf(name, sizeof name, "global_batch");
        const frame_col *c = frame_find(&q->f, name, msg, sizeof msg);
        if (!c) {
            fprintf(err, "madsweep best: --group: %s\n", msg);
            return 2;
        }
        if (q->ngcol == BEST_MAX_COLS) {
            fprintf(err, "madsweep best: --group: more than %d columns\n",
                    BEST_MAX_COLS);
            return 2;
        }
        q->gcol[q->ngcol++] = c;
        p += len;
        if (*p == ',')
            p++;
    }
    q->status = best_results_col(&q->f, "status", FRAME_INT);
    q->fits = best_results_col(&q->f, "mem_fits", FRAME_NUM);
    q->id = best_results_col(&q->f, "id", FRAME_INT);
    q->strat = best_results_col(&q->f, "strategy_idx", FRAME_INT);
    q->lat = best_results_col(&q->f, "comm_latency_modeled", FRAME_INT);
    q->ttype = frame_find(&q->f, "task.type", NULL, 0);
    for (int d = 0; d < 4; d++)
        q->deg[d] = best_results_col(&q->f, best_dims[d], FRAME_INT);
    q->dense = best_results_col(&q->f, "dense_plan", FRAME_STR);
    q->layout = best_results_col(&q->f, "layout", FRAME_STR);
    q->emb = best_results_col(&q->f, "emb_plan", FRAME_STR);
    if (keymap_init(&q->groups) != 0)
        check_die("out of memory", __FILE__, __LINE__);
    for (int i = 0; i < q->ngcol; i++)
        if (keymap_init(&q->gfirst[i]) != 0)
            check_die("out of memory", __FILE__, __LINE__);
    return 0;
}

/* ------------------------------------------------------------ plans */

/* Degree of dimension d in a row: its column, else its "tpN" token in
 * dense_plan; -1 when the file says neither. */
static int64_t best_degree(const best_query *q, const char *row, int d)
{
    if (q->deg[d])
        return frame_int(&q->f, q->deg[d], row);
    if (!q->dense)
        return -1;
    const char *s = frame_str(&q->f, q->dense, row);
    size_t n = strlen(best_dims[d]);
    for (const char *p = s; *p;) {
        size_t len = strcspn(p, " ");
        if (len > n && strncmp(p, best_dims[d], n) == 0 &&
            strspn(p + n, "0123456789") == len - n)
            return strtoll(p + n, NULL, 10);
        p += len;
        while (*p == ' ')
            p++;
    }
    return -1;
}

/* The dimension a layout token names: "tp" or the initial 't'; -1. */
static int best_dim_of(const char *tok, size_t len)
{
    for (int d = 0; d < 4; d++)
        if ((len == 2 && strncmp(tok, best_dims[d], 2) == 0) ||
            (len == 1 && tok[0] == best_dims[d][0]))
            return d;
    return -1;
}

/* Rewrites layout text s (`len` bytes with its NUL) without the
 * dimensions of degree 1: "tp-cp-pp-dp" with pp = 1 becomes
 * "tp-cp-dp"; a letters token ("tcpd") becomes "tcd". `letters`: one
 * letter per dimension, no separator. Leaves s when it is not a layout. */
static void best_drop_ones(char *s, size_t len, const int64_t deg[4], bool letters)
{
    char out[64] = "";
    size_t o = 0, n = strlen(s);
    int seen = 0;
    for (size_t i = 0; i < n;) {
        size_t tl = letters ? 1 : strcspn(s + i, "-");
        int d = best_dim_of(s + i, tl);
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
static void best_canon(const best_query *q, const char *row, char *key)
{
    size_t size = q->f.t.size;
    memcpy(key, row, size);
    if (q->id)
        memset(key + q->id->off, 0, 8);
    if (q->strat)
        memset(key + q->strat->off, 0, 8);
    int64_t deg[4];
    for (int d = 0; d < 4; d++)
        if ((deg[d] = best_degree(q, row, d)) < 1)
            return;
    if (q->layout) {
        best_drop_ones(key + q->layout->off, q->layout->len, deg, false);
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
            best_drop_ones(tok, sizeof tok, deg, true);
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

/* ------------------------------------------------------------ groups */

static bool best_better(const best_query *q, double va, int64_t ia, double vb,
                        int64_t ib)
{
    if (isnan(va) != isnan(vb))
        return isnan(vb);
    if (!isnan(va) && va != vb)
        return q->maximize ? va > vb : va < vb;
    return ia < ib;
}

static best_group *best_group_of(best_query *q, const char *row, FILE *err)
{
    char key[2048];
    size_t len = 0;
    for (int i = 0; i < q->ngcol; i++) {
        const frame_col *c = q->gcol[i];
        if (c->kind == FRAME_STR || c->src == FRAME_STATUS) {
            const char *s = frame_str(&q->f, c, row);
            size_t n = strlen(s) + 1;
            if (len + n > sizeof key)
                n = sizeof key - len;
            memcpy(key + len, s, n);
            len += n;
        } else if (len + 8 <= sizeof key) {
            double v = frame_num(&q->f, c, row);
            memcpy(key + len, &v, 8);
            len += 8;
        }
    }
    int64_t gi;
    int fresh = 0;
    if (keymap_get(&q->groups, key, len, q->ng, &gi, &fresh) != 0)
        check_die("out of memory", __FILE__, __LINE__);
    if (!fresh)
        return &q->g[gi];
    if ((q->ng + 1) * q->o->top > BEST_MAX_KEPT) {
        fprintf(err, "madsweep best: more than %lld groups x top %lld rows; "
                "group by fewer columns\n", (long long)(BEST_MAX_KEPT / q->o->top),
                (long long)q->o->top);
        return NULL;
    }
    if (q->ng == q->gcap) {
        int64_t cap = q->gcap ? 2 * q->gcap : 64;
        best_group *ng = realloc(q->g, (size_t)cap * sizeof *ng);
        if (!ng)
            check_die("out of memory", __FILE__, __LINE__);
        q->g = ng;
        q->gcap = cap;
    }
    best_group *g = &q->g[q->ng++];
    memset(g, 0, sizeof *g);
    size_t k = (size_t)q->o->top, size = q->f.t.size;
    g->rows = malloc(k * size);
    g->canon = malloc(k * size);
    g->val = malloc(k * sizeof *g->val);
    g->id = malloc(k * sizeof *g->id);
    g->entry = malloc(k * sizeof *g->entry);
    if (!g->rows || !g->canon || !g->val || !g->id || !g->entry ||
        keymap_init(&g->keys) != 0)
        check_die("out of memory", __FILE__, __LINE__);
    for (int i = 0; i < q->ngcol; i++) {
        const frame_col *c = q->gcol[i];
        if (c->kind == FRAME_STR || c->src == FRAME_STATUS) {
            const char *s = frame_str(&q->f, c, row);
            int64_t ord;
            if (keymap_get(&q->gfirst[i], s, strlen(s), q->gfirst[i].n, &ord,
                           NULL) != 0)
                check_die("out of memory", __FILE__, __LINE__);
            g->order[i] = (double)ord;
        } else {
            g->order[i] = frame_num(&q->f, c, row);
        }
    }
    return g;
}

/* Kept row a is worse than kept row b (the heap's order: worst at 0). */
static bool best_worse(const best_query *q, const best_group *g, int64_t a, int64_t b)
{
    return best_better(q, g->val[b], g->id[b], g->val[a], g->id[a]);
}

static void best_swap(const best_query *q, best_group *g, int64_t a, int64_t b, char *tmp)
{
    size_t size = q->f.t.size;
    if (a == b)
        return;
    memcpy(tmp, g->rows + (size_t)a * size, size);
    memcpy(g->rows + (size_t)a * size, g->rows + (size_t)b * size, size);
    memcpy(g->rows + (size_t)b * size, tmp, size);
    memcpy(tmp, g->canon + (size_t)a * size, size);
    memcpy(g->canon + (size_t)a * size, g->canon + (size_t)b * size, size);
    memcpy(g->canon + (size_t)b * size, tmp, size);
    double v = g->val[a];
    g->val[a] = g->val[b];
    g->val[b] = v;
    int64_t t = g->id[a];
    g->id[a] = g->id[b];
    g->id[b] = t;
    t = g->entry[a];
    g->entry[a] = g->entry[b];
    g->entry[b] = t;
}

/* Restores the heap below slot i (the worst row at the root). */
static void best_sift_down(const best_query *q, best_group *g, int64_t i, int64_t n,
                           char *tmp)
{
    for (;;) {
        int64_t w = i, l = 2 * i + 1, r = l + 1;
        if (l < n && best_worse(q, g, l, w))
            w = l;
        if (r < n && best_worse(q, g, r, w))
            w = r;
        if (w == i)
            return;
        best_swap(q, g, i, w, tmp);
        i = w;
    }
}

static void best_offer(best_query *q, best_group *g, const char *row, double v,
                       int64_t id)
{
    int64_t k = q->o->top;
    size_t size = q->f.t.size;
    if (g->n == k && !best_better(q, v, id, g->val[0], g->id[0]))
        return;
    char *key = malloc(2 * size);
    if (!key)
        check_die("out of memory", __FILE__, __LINE__);
    char *tmp = key + size;
    best_canon(q, row, key);
    int64_t e = 0;
    int fresh = 0;
    if (keymap_get(&g->keys, key, size, g->keys.n, &e, &fresh) != 0)
        check_die("out of memory", __FILE__, __LINE__);
    if (e >= g->lcap) {
        int64_t cap = g->lcap ? 2 * g->lcap : 64;
        uint8_t *l = realloc(g->live, (size_t)cap);
        if (!l)
            check_die("out of memory", __FILE__, __LINE__);
        memset(l + g->lcap, 0, (size_t)(cap - g->lcap));
        g->live = l;
        g->lcap = cap;
    }
    if (!fresh && g->live[e]) {
        free(key); /* the same plan, kept with its lower id */
        return;
    }
    int64_t at;
    if (g->n == k) { /* the worst leaves: the new row takes the root */
        g->live[g->entry[0]] = 0;
        at = 0;
    } else {
        at = g->n++;
    }
    memcpy(g->rows + (size_t)at * size, row, size);
    memcpy(g->canon + (size_t)at * size, key, size);
    g->val[at] = v;
    g->id[at] = id;
    g->entry[at] = e;
    g->live[e] = 1;
    if (at == 0) {
        best_sift_down(q, g, 0, g->n, tmp);
    } else {
        while (at > 0 && best_worse(q, g, at, (at - 1) / 2)) {
            best_swap(q, g, at, (at - 1) / 2, tmp);
            at = (at - 1) / 2;
        }
    }
    free(key);
}

/* --baseline: row is the group's best baseline row so far? */
static void best_offer_baseline(best_query *q, best_group *g, const char *row, double v,
                                int64_t id)
{
    if (g->brow && !best_better(q, v, id, g->bval, g->bid))
        return;
    if (!g->brow && !(g->brow = malloc(q->f.t.size)))
        check_die("out of memory", __FILE__, __LINE__);
    memcpy(g->brow, row, q->f.t.size);
    g->bval = v;
    g->bid = id;
}

/* After the scan: every group's rows best first (heap sort: the worst
 * goes to the end each time). */
static void best_finish(best_query *q)
{
    char *tmp = malloc(q->f.t.size);
    if (!tmp)
        check_die("out of memory", __FILE__, __LINE__);
    for (int64_t i = 0; i < q->ng; i++) {
        best_group *g = &q->g[i];
        for (int64_t n = g->n; n > 1; n--) {
            best_swap(q, g, 0, n - 1, tmp);
            best_sift_down(q, g, 0, n - 1, tmp);
        }
    }
    free(tmp);
}

static int best_scan(best_query *q, FILE *err)
{
    size_t size = q->f.t.size;
    char *blk = malloc((size_t)BEST_BLOCK * size);
    if (!blk)
        check_die("out of memory", __FILE__, __LINE__);
    int rc = 0;
    for (int64_t at = 0; at < q->f.nrows && rc == 0; at += BEST_BLOCK) {
        int64_t n = q->f.nrows - at < BEST_BLOCK ? q->f.nrows - at : BEST_BLOCK;
        frame_read(&q->f, at, n, blk);
        for (int64_t i = 0; i < n; i++) {
            const char *row = blk + (size_t)i * size;
            q->seen++;
            /* a point fits when its status is ok and its memory does not
             * exceed the device's (MAD-Max rows stay ok with mem_fits 0) */
            if (!q->o->all &&
                ((q->status && frame_int(&q->f, q->status, row) != 0) ||
                 (q->fits && frame_num(&q->f, q->fits, row) == 0.0))) {
                q->not_ok++;
                best_group *g = NULL;
                if (q->base && where_match(&q->w, &q->f, row) &&
                    where_match(&q->bw, &q->f, row)) {
                    if (!(g = best_group_of(q, row, err))) {
                        rc = 2;
                        break;
                    }
                    g->bunfit++; /* a baseline point that does not fit */
                }
                continue;
            }
            if (!where_match(&q->w, &q->f, row))
                continue;
            /* a figure not computed never ranks (as in a sweep's keep) */
            double v = frame_num(&q->f, q->by, row);
            if (isnan(v)) {
                q->nan_by++;
                continue;
            }
            q->matched++;
            q->nolat += q->lat && frame_int(&q->f, q->lat, row) == 0;
            best_group *g = best_group_of(q, row, err);
            if (!g) {
                rc = 2;
                break;
            }
            int64_t id = q->id ? frame_int(&q->f, q->id, row) : at + i;
            best_offer(q, g, row, v, id);
            if (q->base && where_match(&q->bw, &q->f, row))
                best_offer_baseline(q, g, row, v, id);
        }
    }
    free(blk);
    if (rc == 0)
        best_finish(q);
    return rc;
}

/* ------------------------------------------------------------ output */

typedef struct best_sorted {
    const best_group *g;
    int n;
} best_sorted;

static int best_cmp_groups(const void *a, const void *b)
{
    const best_sorted *x = a, *y = b;
    for (int i = 0; i < x->n; i++) {
        double u = x->g->order[i], v = y->g->order[i];
        if (isnan(u) != isnan(v))
            return isnan(u) ? 1 : -1;
        if (u < v)
            return -1;
        if (u > v)
            return 1;
    }
    int64_t u = x->g->n > 0 ? x->g->id[0] : INT64_MAX, v = y->g->n > 0 ? y->g->id[0] : INT64_MAX;
    return u < v ? -1 : u > v;
}

static void best_csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
}

static void best_push(const frame_col **cols, int *n, int max, const frame_col *c)
{
    if (!c || *n >= max)
        return;
    for (int i = 0; i < *n; i++)
        if (cols[i] == c || (cols[i]->src == c->src && cols[i]->axis == c->axis &&
                             cols[i]->off == c->off))
            return;
    cols[(*n)++] = c;
}

/* Columns printed: the key columns (text), or every column once (CSV). */
static int best_columns(const best_query *q, const frame_col **cols, int max)
{
    const frame *f = &q->f;
    int n = 0;
    if (q->o->all && !q->o->csv)
        best_push(cols, &n, max, frame_find(f, "status_name", NULL, 0));
    static const char *const lead[] = {"model", "system", "hardware", "devices",
                                       "task", "global_batch", "stack"};
    bool det = strcmp(f->fidelity, "detailed") == 0;
    for (size_t i = 0; i < sizeof lead / sizeof lead[0]; i++)
        if (q->o->csv ? strcmp(lead[i], "hardware") != 0
                      : det || strcmp(lead[i], "stack") != 0)
            best_push(cols, &n, max, frame_find(f, lead[i], NULL, 0));
    if (q->o->csv) {
        for (int i = 0; i < f->ncols; i++)
            best_push(cols, &n, max, &f->cols[i]);
        return n;
    }
    for (int i = 0; i < q->ngcol; i++)
        best_push(cols, &n, max, q->gcol[i]);
    for (int i = 0; i < q->w.n; i++)
        best_push(cols, &n, max, q->w.c[i].col);
    if (q->dense && q->emb) {
        best_push(cols, &n, max, q->dense);
        best_push(cols, &n, max, q->emb);
    } else if (q->deg[0] && q->layout) {
        /* named strategy columns: the row's own plan (the strategy axis
         * text is the template, "dp*" and its default micro-batch) */
        static const char *const plan[] = {"tp", "pp", "dp", "cp", "ep", "vpp",
                                           "zero_stage", "micro_batch", "recompute"};
        for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++)
            best_push(cols, &n, max, best_results_col(f, plan[i], FRAME_INT)
                                         ? best_results_col(f, plan[i], FRAME_INT)
                                         : best_results_col(f, plan[i], FRAME_STR));
    } else {
        best_push(cols, &n, max, frame_find(f, "strategy", NULL, 0));
    }
    best_push(cols, &n, max, q->by);
    best_push(cols, &n, max, frame_find(f, "throughput_samples_per_s", NULL, 0));
    best_push(cols, &n, max, best_results_col(f, "bound_by", FRAME_STR));
    return n;
}

static const char *best_label(const best_query *q, const frame_col *c)
{
    bool det = strcmp(q->f.fidelity, "detailed") == 0 && !q->o->csv;
    if (det && c == q->dense)
        return "parallel";
    if (det && c == q->emb)
        return "options";
    if (c->src == FRAME_STATUS && !q->o->csv)
        return "status";
    return c->name;
}

/* One printed row: a group's best row (or, --baseline, its baseline
 * row; row NULL: a group with no fitting row), its label, its speedup
 * over the baseline and the group's baseline note. */
typedef struct best_line {
    const char *row;
    const char *label;
    char speed[32];
    const char *note;
} best_line;

/* The lines of group g into L (at most top + 1); returns their count. */
static int64_t best_lines(const best_query *q, const best_group *g, best_line *L)
{
    size_t size = q->f.t.size;
    const char *note = !q->base ? "" : g->brow ? "ok" : g->bunfit ? "does not fit"
                                                                  : "none matches";
    int64_t n = 0;
    for (int64_t k = 0; k < g->n; k++, n++) {
        L[n] = (best_line){g->rows + (size_t)k * size, "best", "", note};
        if (g->brow)
            snprintf(L[n].speed, sizeof L[n].speed, q->o->csv ? "%.17g" : "%.3f",
                     q->maximize ? g->val[k] / g->bval : g->bval / g->val[k]);
    }
    if (n == 0)
        L[n++] = (best_line){NULL, "best", "", note};
    if (g->brow) {
        L[n] = (best_line){g->brow, "baseline", "", ""};
        snprintf(L[n++].speed, sizeof L[0].speed, q->o->csv ? "1" : "1.000");
    }
    return n;
}

/* A strategy column that only training has (virtual stages, ZeRO,
 * recompute, the pipeline schedule, DP overlap) in a serving row: the
 * text table prints "-" (the CSV keeps the values the row was run with). */
static bool best_training_only(const best_query *q, const frame_col *c, const char *row)
{
    static const char *const train[] = {"vpp", "zero_stage", "recompute", "schedule",
                                        "overlap"};
    if (!q->ttype || c->src != FRAME_RESULTS)
        return false;
    bool hit = false;
    for (size_t i = 0; i < sizeof train / sizeof train[0]; i++)
        hit = hit || strcmp(c->name, train[i]) == 0;
    return hit && strcmp(frame_str(&q->f, q->ttype, row), "inference") == 0;
}

/* The text of cell c of line l (extra columns before and after cols: the
 * label; the speedup and the baseline note). */
static const char *best_cell(const best_query *q, const frame_col *const *cols, int nc,
                             int c, const best_line *l, char *cell, size_t size)
{
    int x = q->base ? 1 : 0;
    if (q->base && c == 0)
        return l->label;
    if (q->base && c == nc + 1)
        return l->speed[0] ? l->speed : q->o->csv ? "" : "-";
    if (q->base && c == nc + 2)
        return l->note;
    if (!l->row)
        return q->o->csv ? "" : "-";
    if (!q->o->csv && best_training_only(q, cols[c - x], l->row))
        return "-";
    return frame_text(&q->f, cols[c - x], l->row, q->o->csv, cell, size);
}

static const char *best_head(const best_query *q, const frame_col *const *cols, int nc,
                             int c)
{
    static const char *const extra[3] = {"row", "speedup", "baseline"};
    if (q->base && (c == 0 || c > nc))
        return extra[c == 0 ? 0 : c - nc];
    return best_label(q, cols[c - (q->base ? 1 : 0)]);
}

static bool best_numeric(const best_query *q, const frame_col *const *cols, int nc, int c)
{
    if (q->base && (c == 0 || c == nc + 2))
        return false;
    if (q->base && c == nc + 1)
        return true;
    const frame_col *k = cols[c - (q->base ? 1 : 0)];
    return k->kind != FRAME_STR && k->src != FRAME_STATUS;
}

static void best_footer(const best_query *q, FILE *out)
{
    bool unit = q->by->unit[0] && strcmp(q->by->unit, "1") != 0;
    fprintf(out, "(by %s%s%s%s%s, %s is better; %lld of %lld rows match",
            q->by->name, unit ? " (" : "", unit ? q->by->unit : "", unit ? ")" : "",
            q->o->order ? " as --order says" : "",
            q->maximize ? "higher" : "lower", (long long)q->matched,
            (long long)q->seen);
    if (q->not_ok)
        fprintf(out, "; %lld rows not ok or not fitting in memory left out, "
                "--all shows them",
                (long long)q->not_ok);
    if (q->nan_by)
        fprintf(out, "; %lld rows whose %s is NaN (not computed for them) left out",
                (long long)q->nan_by, q->by->name);
    if (q->base)
        fprintf(out, "; speedup = the best's %s over the baseline's (%s), per group",
                q->by->name, q->o->baseline);
    fputs(")\n", out);
    if (q->nolat)
        fprintf(out, "note: %lld matching rows (comm_latency_modeled = 0, the MAD-Max "
                "fidelity) price collectives by bandwidth alone, with no latency term: "
                "plans of many small messages (serving, wide tensor parallelism) look "
                "faster than they are, and their speedups are upper bounds; the detailed "
                "fidelity models the latency\n", (long long)q->nolat);
}

static void best_print(const best_query *q, FILE *out)
{
    enum { MAXC = 512 };
    const frame_col **cols = malloc(MAXC * sizeof *cols);
    best_sorted *order = malloc((size_t)(q->ng > 0 ? q->ng : 1) * sizeof *order);
    best_line *L = malloc((size_t)(q->o->top + 2) * sizeof *L);
    if (!cols || !order || !L)
        check_die("out of memory", __FILE__, __LINE__);
    int nc = best_columns(q, cols, MAXC);
    int tc = nc + (q->base ? 3 : 0); /* printed columns */
    for (int64_t i = 0; i < q->ng; i++)
        order[i] = (best_sorted){&q->g[i], q->ngcol};
    qsort(order, (size_t)q->ng, sizeof *order, best_cmp_groups);
    char cell[BEST_CELL];
    int *w = calloc((size_t)tc, sizeof *w);
    if (!w)
        check_die("out of memory", __FILE__, __LINE__);
    for (int c = 0; c < tc; c++)
        w[c] = q->o->csv ? 0 : (int)strlen(best_head(q, cols, nc, c));
    for (int64_t i = 0; i < q->ng && !q->o->csv; i++) {
        int64_t n = best_lines(q, order[i].g, L);
        for (int64_t k = 0; k < n; k++)
            for (int c = 0; c < tc; c++) {
                int l = (int)strlen(best_cell(q, cols, nc, c, &L[k], cell, sizeof cell));
                w[c] = l > w[c] ? l : w[c];
            }
    }
    for (int c = 0; c < tc; c++) {
        if (q->o->csv) {
            if (c)
                fputc(',', out);
            best_csv_field(out, best_head(q, cols, nc, c));
        } else {
            bool num = best_numeric(q, cols, nc, c);
            fprintf(out, "%s%*s", c ? "  " : "", num ? w[c] : -w[c],
                    best_head(q, cols, nc, c));
        }
    }
    fputc('\n', out);
    for (int64_t i = 0; i < q->ng; i++) {
        int64_t n = best_lines(q, order[i].g, L);
        for (int64_t k = 0; k < n; k++) {
            if (!q->base && !L[k].row)
                continue;
            for (int c = 0; c < tc; c++) {
                const char *t = best_cell(q, cols, nc, c, &L[k], cell, sizeof cell);
                if (q->o->csv) {
                    if (c)
                        fputc(',', out);
                    best_csv_field(out, t);
                } else {
                    bool num = best_numeric(q, cols, nc, c);
                    fprintf(out, "%s%*s", c ? "  " : "", num ? w[c] : -w[c], t);
                }
            }
            fputc('\n', out);
        }
    }
    if (!q->o->csv)
        best_footer(q, out);
    free(w);
    free(L);
    free(cols);
    free(order);
}

static void best_list_columns(const frame *f, FILE *out)
{
    fprintf(out, "%-34s %-6s %-36s %s\n", "column", "kind", "unit", "from");
    for (int i = 0; i < f->ncols; i++) {
        const frame_col *c = &f->cols[i];
        char from[FRAME_NAME_MAX + 8];
        if (c->src == FRAME_AXIS)
            snprintf(from, sizeof from, "/axes/%s", f->axes[c->axis].name);
        else
            snprintf(from, sizeof from, c->src == FRAME_STATUS ? "/axes/status"
                                                               : "/results");
        fprintf(out, "%-34s %-6s %-36s %s\n", c->name,
                c->kind == FRAME_STR || c->src == FRAME_STATUS ? "text"
                : c->kind == FRAME_INT                         ? "int"
                                                               : "number",
                c->unit, from);
    }
}

int best_run(const best_opts *o, FILE *out, FILE *err)
{
    if (o->top < 1) {
        fprintf(err, "madsweep best: --top must be >= 1\n");
        return 2;
    }
    best_query *q = calloc(1, sizeof *q);
    if (!q)
        check_die("out of memory", __FILE__, __LINE__);
    q->o = o;
    char msg[1200];
    if (frame_open(&q->f, o->path, msg, sizeof msg) != 0) {
        fprintf(err, "madsweep best: %s\n", msg);
        free(q);
        return 1;
    }
    int rc = 0;
    if (o->columns)
        best_list_columns(&q->f, out);
    else if ((rc = best_setup(q, err)) == 0 && (rc = best_scan(q, err)) == 0) {
        best_print(q, out);
        if (q->matched == 0)
            fprintf(err, "madsweep best: no row of %s matches (%lld rows, %lld "
                    "not ok or not fitting in memory%s)\n", o->path, (long long)q->seen,
                    (long long)q->not_ok, q->not_ok && !o->all ? "; --all "
                    "includes them" : "");
    }
    for (int64_t i = 0; i < q->ng; i++) {
        free(q->g[i].rows);
        free(q->g[i].canon);
        free(q->g[i].entry);
        free(q->g[i].live);
        keymap_free(&q->g[i].keys);
        free(q->g[i].val);
        free(q->g[i].id);
        free(q->g[i].brow);
    }
    free(q->g);
    if (q->groups.slot)
        keymap_free(&q->groups);
    for (int i = 0; i < BEST_MAX_COLS; i++)
        if (q->gfirst[i].slot)
            keymap_free(&q->gfirst[i]);
    where_free(&q->w);
    where_free(&q->bw);
    frame_close(&q->f);
    free(q);
    return rc;
}
