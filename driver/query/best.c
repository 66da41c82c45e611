/*
 * best.c - top-K points per group of a sweep file (see best.h).
 *
 * Invariant: a group's kept rows hold no two rows with the same plan key
 * (best_plan_key); rows are offered in file (id) order, so of two rows that
 * are the same plan the first one seen, the lower id, is the one kept.
 * While scanning, a group's rows are a binary heap with the worst kept
 * row at the root and its plan keys sit in a hash map (a key -> entry,
 * live[entry] while kept), so an offer costs O(log top) (issue 19:
 * `best --top 100000` on 140k rows was quadratic); best_finish sorts
 * each group best first. The plan key is best_plan.c, the output
 * best_print.c.
 */
#include "best_query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost/result.h"
#include "../../worker/check.h"

/* ------------------------------------------------------------ setup */

const frame_col *best_results_col(const frame *f, const char *name, frame_kind kind)
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
    int dir = result_direction_of(q->by->name, q->by->unit);
    bool known = result_find(q->by->name) != NULL;
    if (!o->order && dir == 0) {
        fprintf(err, "madsweep best: --by %s: a signed figure or a code has no better "
                "end; give --order max or min\n", q->by->name);
        return 2;
    }
    if (!o->order && !known && !q->by->unit[0]) {
        fprintf(err, "madsweep best: --by %s: %s has no unit (no units attribute: a "
                "damaged file or another tool's), so whether larger is better is not "
                "known; give --order max or min\n", q->by->name, o->path);
        return 2;
    }
    if (o->order)
        q->maximize = strcmp(o->order, "max") == 0;
    else
        q->maximize = dir > 0;
    /* an empty --where or --group (an unset shell variable) kept every row
     * or one group without a word */
    if ((o->where && !o->where[0]) || (o->group && !o->group[0])) {
        fprintf(err, "madsweep best: --%s: expected %s, got ''\n",
                o->where && !o->where[0] ? "where" : "group",
                o->where && !o->where[0] ? "conditions such as 'task==pretrain,tp==1'"
                                         : "columns such as 'model,hardware'");
        return 2;
    }
    if (where_parse(&q->w, &q->f, "--where", o->where, msg, sizeof msg) != 0) {
        fprintf(err, "madsweep best: %s\n", msg);
        return 2;
    }
    q->base = o->baseline != NULL;
    if (q->base && where_parse(&q->bw, &q->f, "--baseline", o->baseline, msg,
                               sizeof msg) != 0) {
        fprintf(err, "madsweep best: %s\n", msg); /* which condition, and why */
        return 2;
    }
    if (q->base && q->bw.n == 0) {
        fprintf(err, "madsweep best: --baseline: expected conditions such as "
                "'tp==1,pp==1', got '%s'\n", o->baseline);
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
        if (*p == ',' && !*++p) { /* "model," named a column it dropped */
            fprintf(err, "madsweep best: --group: '%s' ends in a comma\n", o->group);
            return 2;
        }
    }
    q->status = best_results_col(&q->f, "status", FRAME_INT);
    q->fits = best_results_col(&q->f, "mem_fits", FRAME_NUM);
    q->id = best_results_col(&q->f, "id", FRAME_INT);
    q->strat = best_results_col(&q->f, "strategy_idx", FRAME_INT);
    q->lat = best_results_col(&q->f, "comm_latency_modeled", FRAME_INT);
    q->ttype = frame_find(&q->f, "task.type", NULL, 0);
    for (int d = 0; d < 4; d++)
        q->deg[d] = best_results_col(&q->f, best_plan_dims[d], FRAME_INT);
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
    if (q->o->top > BEST_MAX_KEPT || (q->ng + 1) > BEST_MAX_KEPT / q->o->top) {
        fprintf(err, "madsweep best: %lld groups x top %lld rows are more than "
                "the %lld rows best keeps; group by fewer columns or lower --top\n",
                (long long)(q->ng + 1), (long long)q->o->top,
                (long long)BEST_MAX_KEPT);
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
    best_plan_key(q, row, key);
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

int best_run(const best_opts *o, FILE *out, FILE *err)
{
    if (o->top < 1 || o->top > BEST_MAX_KEPT) {
        fprintf(err, "madsweep best: --top must be from 1 to %lld\n",
                (long long)BEST_MAX_KEPT);
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
        best_print_columns(&q->f, out);
    else if ((rc = best_setup(q, err)) == 0 && (rc = best_scan(q, err)) == 0) {
        best_print_groups(q, out);
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
