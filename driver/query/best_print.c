/*
 * best_print.c - the output of `madsweep best`: the kept rows of each
 * group as a table (key columns, aligned) or CSV (every column once, at
 * full precision), groups in order (numbers ascending, texts in the
 * order the file first shows them), and `--columns`.
 */
#include "best_query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost/result.h"
#include "../../worker/check.h"

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

void best_print_groups(const best_query *q, FILE *out)
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

void best_print_columns(const frame *f, FILE *out)
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
