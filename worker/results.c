/*
 * results.c - logical rows joined from /results and the parts (see
 * results.h).
 *
 * Invariants: a column is placed from the table that stores it only when
 * its member type there equals the logical row's (else the file is
 * refused); r->pos[p] is the number of rows of part p before row
 * r->next, so a sequential read takes the next cnt[p] rows of each part;
 * every part read stays inside the part's extent (a file whose parts do
 * not add up is reported, never read past).
 */
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "h5.h"
#include "output.h"

#define RESULTS_SCAN 65536 /* rows per read when seeking */
#define RESULTS_CONVERT (4u << 20) /* bytes converted at a time */

/* ------------------------------------------------------------ open */

/* Extent of a one-dimensional dataset (-1 when it is not one). */
static int64_t results_extent(hid_t d)
{
    hid_t s = H5Dget_space(d);
    hsize_t dim = 0;
    int ok = s >= 0 && H5Sget_simple_extent_ndims(s) == 1 &&
             H5Sget_simple_extent_dims(s, &dim, NULL) == 1;
    if (s >= 0)
        H5Sclose(s);
    return ok ? (int64_t)dim : -1;
}

static int results_table_open(results_table *t, hid_t f, const char *name)
{
    t->d = H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
    t->type = t->d >= 0 ? H5Dget_type(t->d) : -1;
    t->size = t->type >= 0 ? H5Tget_size(t->type) : 0;
    t->rows = t->d >= 0 ? results_extent(t->d) : -1;
    return t->type >= 0 && H5Tget_class(t->type) == H5T_COMPOUND && t->size > 0 &&
                   t->rows >= 0
               ? 0
               : -1;
}

static void results_table_close(results_table *t)
{
    if (t->type >= 0)
        H5Tclose(t->type);
    if (t->d >= 0)
        H5Dclose(t->d);
    free(t->buf);
    memset(t, 0, sizeof *t);
    t->d = t->type = -1;
}

/* Places member `name` (logical offset lo, member type mt) from table t
 * when t has it: 1 placed, 0 absent, -1 present with another type. */
static int results_place(results_table *t, const char *name, size_t lo, hid_t mt)
{
    int i = H5Tget_member_index(t->type, name);
    if (i < 0)
        return 0;
    hid_t tm = H5Tget_member_type(t->type, (unsigned)i);
    int same = tm >= 0 && H5Tequal(tm, mt) > 0;
    if (tm >= 0)
        H5Tclose(tm);
    if (!same)
        return -1;
    uint32_t from = (uint32_t)H5Tget_member_offset(t->type, (unsigned)i);
    uint32_t len = (uint32_t)H5Tget_size(mt);
    output_span *last = t->nspan > 0 ? &t->span[t->nspan - 1] : NULL;
    if (last && last->from + last->len == from && last->to + last->len == lo)
        last->len += len;
    else if (t->nspan < TABLE_MAX_COLS)
        t->span[t->nspan++] = (output_span){from, (uint32_t)lo, len};
    else
        return -1;
    return 1;
}

/* Offset of the int32 member `name` of compound type t (-1: none). */
static int results_i32(hid_t t, const char *name, size_t *off)
{
    int i = H5Tget_member_index(t, name);
    if (i < 0)
        return -1;
    hid_t m = H5Tget_member_type(t, (unsigned)i);
    int ok = m >= 0 && H5Tget_class(m) == H5T_INTEGER && H5Tget_size(m) == 4 &&
             H5Tget_order(m) == H5T_ORDER_LE;
    if (m >= 0)
        H5Tclose(m);
    *off = H5Tget_member_offset(t, (unsigned)i);
    return ok ? 0 : -1;
}

/* The gaps of a row stored in /results and part p (-1: none): the runs
 * of the logical row that neither covers. */
static void results_gaps(results *r, int p)
{
    unsigned char covered[OUTPUT_ROW_MAX] = {0};
    const results_table *t[2] = {&r->common, p >= 0 ? &r->part[p] : NULL};
    for (int k = 0; k < 2; k++)
        for (int i = 0; t[k] && i < t[k]->nspan; i++)
            memset(covered + t[k]->span[i].to, 1, t[k]->span[i].len);
    int *n = &r->ngap[p + 1];
    *n = 0;
    for (size_t at = 0; at < r->lsize;) {
        size_t end = at;
        while (end < r->lsize && !covered[end])
            end++;
        if (end > at && *n <= TABLE_MAX_COLS)
            r->gap[p + 1][(*n)++] = (output_span){(uint32_t)at, (uint32_t)at,
                                                  (uint32_t)(end - at)};
        at = end < r->lsize ? end + 1 : end;
    }
}

/* The spans of every member of the logical row, and its fills. */
static int results_layout(results *r, char *msg, size_t size)
{
    int n = H5Tget_nmembers(r->ltype);
    if (n <= 0 || r->lsize > OUTPUT_ROW_MAX) {
        snprintf(msg, size, "/parts/row is not a row type (damaged)");
        return -1;
    }
    memset(r->fill, 0, sizeof r->fill);
    for (int i = 0; i < n; i++) {
        char *name = H5Tget_member_name(r->ltype, (unsigned)i);
        hid_t mt = H5Tget_member_type(r->ltype, (unsigned)i);
        size_t lo = H5Tget_member_offset(r->ltype, (unsigned)i);
        /* from /results, or from each part that stores it (kinds may
         * share a column their parts both hold) */
        int got = name && mt >= 0 ? results_place(&r->common, name, lo, mt) : -1;
        for (int p = 0; p < r->nparts && got == 0; p++) {
            int in = results_place(&r->part[p], name, lo, mt);
            got = in < 0 ? -1 : got;
        }
        if (got >= 0 && H5Tget_class(mt) == H5T_FLOAT) {
            /* the fill of a float a row's tables do not store: NaN (the
             * quiet NaN of C's NAN) */
            size_t w = H5Tget_size(mt);
            static const unsigned char nan8[8] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
            static const unsigned char nan4[4] = {0, 0, 0xc0, 0x7f};
            if (w == 8 || w == 4)
                memcpy(r->fill + lo, w == 8 ? nan8 : nan4, w);
        }
        if (got < 0)
            snprintf(msg, size, "column %s of /parts/row is stored with another type "
                     "(damaged, or not a madsweep sweep file)", name ? name : "?");
        H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (got < 0)
            return -1;
    }
    for (int p = -1; p < r->nparts; p++)
        results_gaps(r, p);
    if (results_i32(r->ltype, "status", &r->status_off) != 0 ||
        results_i32(r->ltype, "model_idx", &r->model_off) != 0 ||
        results_i32(r->ltype, "task_idx", &r->task_off) != 0) {
        snprintf(msg, size, "the rows lack the columns status, model_idx and task_idx");
        return -1;
    }
    return 0;
}

/* The part named `kind` (opened on first use), or -1 when the file
 * stores no part of that kind. */
static int results_part_named(results *r, const char *kind, char *msg, size_t size)
{
    for (int p = 0; p < r->nparts; p++)
        if (strcmp(r->part_name[p], kind) == 0)
            return p;
    char path[TABLE_NAME_MAX + 8];
    snprintf(path, sizeof path, "parts/%s", kind);
    if (H5Lexists(r->file, path, H5P_DEFAULT) <= 0)
        return -1;
    if (r->nparts == OUTPUT_NKINDS) {
        snprintf(msg, size, "/parts holds more kinds than madsweep knows (damaged)");
        return -2;
    }
    results_table *t = &r->part[r->nparts];
    if (results_table_open(t, r->file, path) != 0) {
        snprintf(msg, size, "/%s is not a table of rows (damaged)", path);
        return -2;
    }
    snprintf(r->part_name[r->nparts], TABLE_NAME_MAX, "%s", kind);
    return r->nparts++;
}

/* /parts/kind_of: the part of every (model, task). */
static int results_kinds(results *r, char *msg, size_t size)
{
    hid_t am = H5Dopen2(r->file, "axes/model", H5P_DEFAULT);
    hid_t at = H5Dopen2(r->file, "axes/task", H5P_DEFAULT);
    r->nmodels = am >= 0 ? results_extent(am) : -1;
    r->ntasks = at >= 0 ? results_extent(at) : -1;
    if (am >= 0)
        H5Dclose(am);
    if (at >= 0)
        H5Dclose(at);
    typedef struct {
        int32_t m, t;
        char kind[TABLE_NAME_MAX];
    } kind_row;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(kind_row));
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, TABLE_NAME_MAX);
    H5Tinsert(mt, "model_idx", HOFFSET(kind_row, m), H5T_NATIVE_INT32);
    H5Tinsert(mt, "task_idx", HOFFSET(kind_row, t), H5T_NATIVE_INT32);
    H5Tinsert(mt, "kind", HOFFSET(kind_row, kind), st);
    hid_t d = H5Dopen2(r->file, "parts/kind_of", H5P_DEFAULT);
    int64_t n = d >= 0 ? results_extent(d) : -1;
    int64_t want = r->nmodels > 0 && r->ntasks > 0 ? r->nmodels * r->ntasks : -2;
    kind_row *k = n == want ? calloc((size_t)n, sizeof *k) : NULL;
    r->part_of = n == want ? malloc((size_t)n) : NULL;
    int rc = k && r->part_of && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, k) >= 0 ? 0 : -1;
    if (rc != 0)
        snprintf(msg, size, "/parts/kind_of is missing or not one row per model and task "
                 "(damaged)");
    if (r->part_of)
        memset(r->part_of, -2, (size_t)n);
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        int64_t at2 = (int64_t)k[i].m * r->ntasks + k[i].t;
        k[i].kind[TABLE_NAME_MAX - 1] = '\0';
        int p = k[i].m >= 0 && k[i].m < r->nmodels && k[i].t >= 0 && k[i].t < r->ntasks
                    ? results_part_named(r, k[i].kind, msg, size)
                    : -3;
        if (p == -3 || (p >= -1 && r->part_of[at2] != -2)) {
            snprintf(msg, size, "/parts/kind_of names a model and task twice or outside "
                     "the axes (damaged)");
            rc = -1;
        } else if (p == -2) {
            rc = -1;
        } else {
            r->part_of[at2] = (int8_t)p;
        }
    }
    free(k);
    if (d >= 0)
        H5Dclose(d);
    H5Tclose(st);
    H5Tclose(mt);
    return rc;
}

/* /parts/index: present exactly when there are parts, with a `row` and
 * an int64 per part. */
static int results_index(results *r, char *msg, size_t size)
{
    r->index = -1;
    if (r->nparts == 0)
        return 0;
    r->index = H5Lexists(r->file, "parts/index", H5P_DEFAULT) > 0
                   ? H5Dopen2(r->file, "parts/index", H5P_DEFAULT)
                   : -1;
    hid_t t = r->index >= 0 ? H5Dget_type(r->index) : -1;
    int ok = t >= 0 && H5Tget_member_index(t, "row") >= 0;
    for (int p = 0; ok && p < r->nparts; p++)
        ok = H5Tget_member_index(t, r->part_name[p]) >= 0;
    if (t >= 0)
        H5Tclose(t);
    r->nindex = ok ? results_extent(r->index) : -1;
    if (!ok || r->nindex < 0) {
        snprintf(msg, size, "/parts/index is missing or lacks a part's column (damaged)");
        return -1;
    }
    return 0;
}

int results_open(results *r, hid_t f, char *msg, size_t size)
{
    memset(r, 0, sizeof *r);
    r->file = f;
    r->ltype = r->units_owner = r->index = -1;
    r->common.d = r->common.type = -1;
    for (int p = 0; p < OUTPUT_NKINDS; p++)
        r->part[p].d = r->part[p].type = -1;
    int64_t v = 1;
    r->format = H5Aexists(f, "format_version") > 0 ? -1 : 1;
    if (r->format < 0 && h5_attr_get_i64(f, "format_version", &v) == 0)
        r->format = (int)v;
    if (r->format != 1 && r->format != OUTPUT_FORMAT_VERSION) {
        snprintf(msg, size, "it has file format %lld; this madsweep reads formats 1 and %d "
                 "(a newer madsweep wrote it)", (long long)v, OUTPUT_FORMAT_VERSION);
        return -1;
    }
    if (results_table_open(&r->common, f, "results") != 0) {
        snprintf(msg, size, "/results is missing or not a table (damaged)");
        results_close(r);
        return -1;
    }
    int rc = 0;
    if (r->format == 1) {
        r->ltype = H5Tcopy(r->common.type);
        r->units_owner = H5Dopen2(f, "results", H5P_DEFAULT);
    } else {
        hid_t lt = H5Lexists(f, "parts", H5P_DEFAULT) > 0 &&
                           H5Lexists(f, "parts/row", H5P_DEFAULT) > 0
                       ? H5Topen2(f, "parts/row", H5P_DEFAULT)
                       : -1;
        r->units_owner = lt;
        r->ltype = lt >= 0 ? H5Tcopy(lt) : -1;
        if (r->ltype < 0 || H5Tget_class(r->ltype) != H5T_COMPOUND) {
            snprintf(msg, size, "/parts/row, the row type of a format-2 file, is missing "
                     "(damaged)");
            rc = -1;
        }
        if (rc == 0)
            rc = results_kinds(r, msg, size);
        if (rc == 0)
            rc = results_index(r, msg, size);
        if (rc == 0 && (results_i32(r->common.type, "model_idx", &r->cmodel) != 0 ||
                        results_i32(r->common.type, "task_idx", &r->ctask) != 0)) {
            snprintf(msg, size, "/results lacks the columns model_idx and task_idx");
            rc = -1;
        }
    }
    r->lsize = rc == 0 ? H5Tget_size(r->ltype) : 0;
    if (rc == 0)
        rc = results_layout(r, msg, size);
    if (rc != 0)
        results_close(r);
    return rc;
}

void results_close(results *r)
{
    results_table_close(&r->common);
    for (int p = 0; p < OUTPUT_NKINDS; p++)
        results_table_close(&r->part[p]);
    if (r->index >= 0)
        H5Dclose(r->index);
    if (r->ltype >= 0)
        H5Tclose(r->ltype);
    if (r->units_owner >= 0)
        H5Oclose(r->units_owner);
    free(r->part_of);
    free(r->conv);
    free(r->fpart);
    free(r->fk);
    memset(r, 0, sizeof *r);
    r->ltype = r->units_owner = r->index = r->common.d = r->common.type = -1;
}

/* ------------------------------------------------------------ read */

/* Rows [at, at + n) of table t, raw, into its buffer. */
static int results_raw(results_table *t, int64_t at, int64_t n)
{
    if (n > t->cap) {
        char *b = realloc(t->buf, (size_t)n * t->size);
        if (!b)
            return -1;
        t->buf = b;
        t->cap = n;
    }
    if (n <= 0)
        return 0;
    hsize_t start = (hsize_t)at, count = (hsize_t)n;
    hid_t fs = H5Dget_space(t->d);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    int rc = fs >= 0 && ms >= 0 &&
                     H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >=
                         0 &&
                     H5Dread(t->d, t->type, ms, fs, H5P_DEFAULT, t->buf) >= 0
                 ? 0
                 : -1;
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return rc;
}

/* The part of a row from its model and task indices (-1: none). */
static int results_part_at(const results *r, const char *row, size_t mo, size_t to)
{
    int32_t m, t;
    memcpy(&m, row + mo, 4);
    memcpy(&t, row + to, 4);
    if (m < 0 || m >= r->nmodels || t < 0 || t >= r->ntasks)
        return -1;
    return r->part_of[(int64_t)m * r->ntasks + t];
}

int results_part_of(const results *r, int64_t i)
{
    return r->fpart ? r->fpart[i] : -1;
}

int results_index_entry(const results *r, int64_t c, int64_t *row, int64_t *pos)
{
    if (r->index < 0 || c < 0 || c >= r->nindex)
        return -1;
    hid_t mt = H5Tcreate(H5T_COMPOUND, (size_t)(1 + r->nparts) * 8);
    H5Tinsert(mt, "row", 0, H5T_NATIVE_INT64);
    for (int p = 0; p < r->nparts; p++)
        H5Tinsert(mt, r->part_name[p], (size_t)(1 + p) * 8, H5T_NATIVE_INT64);
    int64_t e[1 + OUTPUT_NKINDS];
    hsize_t start = (hsize_t)c, count = 1;
    hid_t fs = H5Dget_space(r->index), ms = H5Screate_simple(1, &count, NULL);
    int rc = fs >= 0 && ms >= 0 &&
                     H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >=
                         0 &&
                     H5Dread(r->index, mt, ms, fs, H5P_DEFAULT, e) >= 0
                 ? 0
                 : -1;
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
    *row = e[0];
    for (int p = 0; rc == 0 && p < r->nparts; p++) {
        pos[p] = e[1 + p];
        if (pos[p] < 0 || pos[p] > r->part[p].rows)
            rc = -1;
    }
    return rc == 0 && *row >= 0 && *row <= r->common.rows ? 0 : -1;
}

/* Positions the parts at row `at`: from the index entry at or before it,
 * counting the rows between. */
static int results_seek(results *r, int64_t at, char *msg, size_t size)
{
    int64_t row = 0, pos[OUTPUT_NKINDS] = {0};
    int64_t lo = 0, hi = r->nindex - 1;
    while (lo < hi) { /* the last entry whose row is at or before `at` */
        int64_t mid = lo + (hi - lo + 1) / 2, mrow, mpos[OUTPUT_NKINDS];
        if (results_index_entry(r, mid, &mrow, mpos) == 0 && mrow <= at)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (r->nindex > 0 && (results_index_entry(r, lo, &row, pos) != 0 || row > at)) {
        snprintf(msg, size, "/parts/index does not read (damaged)");
        return -1;
    }
    for (int64_t x = row; x < at; x += RESULTS_SCAN) {
        int64_t k = at - x < RESULTS_SCAN ? at - x : RESULTS_SCAN;
        if (results_raw(&r->common, x, k) != 0) {
            snprintf(msg, size, "cannot read rows %lld-%lld of /results (damaged)",
                     (long long)x, (long long)(x + k - 1));
            return -1;
        }
        for (int64_t i = 0; i < k; i++) {
            int p = results_part_at(r, r->common.buf + (size_t)i * r->common.size,
                                    r->cmodel, r->ctask);
            if (p >= 0)
                pos[p]++;
        }
    }
    r->next = at;
    memcpy(r->pos, pos, sizeof pos);
    return 0;
}

int results_seek_chunk(results *r, int64_t c, int64_t *row, char *msg, size_t size)
{
    int64_t pos[OUTPUT_NKINDS] = {0};
    *row = 0;
    if (r->nparts == 0)
        return 0; /* nothing to position: the caller knows its row */
    if (results_index_entry(r, c, row, pos) != 0) {
        snprintf(msg, size, "the /parts/index entry of chunk %lld does not read or lies "
                 "outside the tables (damaged)", (long long)c);
        return -1;
    }
    r->next = *row;
    memcpy(r->pos, pos, sizeof pos);
    return 0;
}

static void results_copy(char *dst, const char *src, const results_table *t)
{
    for (int i = 0; i < t->nspan; i++)
        memcpy(dst + t->span[i].to, src + t->span[i].from, t->span[i].len);
}

int results_fetch(results *r, int64_t at, int64_t n, char *msg, size_t size)
{
    if (at < 0 || n < 0 || at > r->common.rows - n) {
        snprintf(msg, size, "rows %lld-%lld lie outside /results", (long long)at,
                 (long long)(at + n - 1));
        return -1;
    }
    r->fetched = 0;
    if (n > r->fcap) {
        int8_t *fp = realloc(r->fpart, (size_t)n);
        if (fp)
            r->fpart = fp;
        int64_t *fk = realloc(r->fk, (size_t)n * sizeof *fk);
        if (fk)
            r->fk = fk;
        if (!fp || !fk) {
            snprintf(msg, size, "out of memory reading %lld rows", (long long)n);
            return -1;
        }
        r->fcap = n;
    }
    if (n == 0)
        return 0;
    if (r->nparts > 0 && at != r->next && results_seek(r, at, msg, size) != 0)
        return -1;
    if (results_raw(&r->common, at, n) != 0) {
        snprintf(msg, size, "cannot read rows %lld-%lld of /results (damaged)",
                 (long long)at, (long long)(at + n - 1));
        return -1;
    }
    int64_t cnt[OUTPUT_NKINDS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int p = r->nparts > 0 ? results_part_at(r, r->common.buf + (size_t)i * r->common.size,
                                                r->cmodel, r->ctask)
                              : -1;
        r->fpart[i] = (int8_t)p;
        r->fk[i] = p >= 0 ? cnt[p]++ : 0;
    }
    for (int p = 0; p < r->nparts; p++) {
        if (r->pos[p] + cnt[p] > r->part[p].rows ||
            results_raw(&r->part[p], r->pos[p], cnt[p]) != 0) {
            snprintf(msg, size, "/parts/%s does not hold the rows of its kind that rows "
                     "%lld-%lld of /results need (truncated or damaged)", r->part_name[p],
                     (long long)at, (long long)(at + n - 1));
            return -1;
        }
    }
    r->next = at + n;
    for (int p = 0; p < r->nparts; p++)
        r->pos[p] += cnt[p];
    r->fetched = n;
    return 0;
}

uint64_t results_digest_row(const results *r, uint64_t d, int64_t i)
{
    d = digest_row(d, r->common.buf + (size_t)i * r->common.size, r->common.size);
    int p = r->fpart[i];
    if (p >= 0)
        d = digest_row(d, r->part[p].buf + (size_t)r->fk[i] * r->part[p].size,
                       r->part[p].size);
    return d;
}

int results_read(results *r, int64_t at, int64_t n, void *buf, char *msg, size_t size)
{
    char *out = buf;
    if (results_fetch(r, at, n, msg, size) != 0)
        return -1;
    if (r->format == 1) { /* the logical row is /results' */
        memcpy(out, r->common.buf, (size_t)n * r->lsize);
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        char *dst = out + (size_t)i * r->lsize;
        results_copy(dst, r->common.buf + (size_t)i * r->common.size, &r->common);
        int p = r->fpart[i];
        if (p >= 0)
            results_copy(dst, r->part[p].buf + (size_t)r->fk[i] * r->part[p].size,
                         &r->part[p]);
        /* the rest: the fills, or zeros on an invalid:* row */
        int32_t st;
        memcpy(&st, dst + r->status_off, 4);
        const output_span *g = r->gap[p + 1];
        if (output_rows_zeroed(st))
            for (int j = 0; j < r->ngap[p + 1]; j++)
                memset(dst + g[j].to, 0, g[j].len);
        else
            for (int j = 0; j < r->ngap[p + 1]; j++)
                memcpy(dst + g[j].to, r->fill + g[j].to, g[j].len);
    }
    return 0;
}

int results_read_as(results *r, int64_t at, int64_t n, hid_t mtype, void *buf, char *msg,
                    size_t size)
{
    /* in pieces that stay in the cache (as H5Dread's conversion buffer) */
    size_t ms = H5Tget_size(mtype), w = ms > r->lsize ? ms : r->lsize;
    int64_t piece = (int64_t)(RESULTS_CONVERT / w) > 0 ? (int64_t)(RESULTS_CONVERT / w) : 1;
    size_t need = (size_t)(n < piece ? (n > 0 ? n : 1) : piece) * w;
    if (need > r->conv_size) {
        char *b = realloc(r->conv, need);
        if (!b) {
            snprintf(msg, size, "out of memory reading %lld rows", (long long)n);
            return -1;
        }
        r->conv = b;
        r->conv_size = need;
    }
    char *out = buf;
    for (int64_t x = 0; x < n; x += piece) {
        int64_t k = n - x < piece ? n - x : piece;
        char *dst = out + (size_t)x * ms;
        if (results_read(r, at + x, k, r->conv, msg, size) != 0)
            return -1;
        if (H5Tconvert(r->ltype, mtype, (size_t)k, r->conv, dst, H5P_DEFAULT) < 0) {
            snprintf(msg, size, "the rows do not convert to the columns asked for");
            return -1;
        }
        memcpy(dst, r->conv, (size_t)k * ms);
    }
    return 0;
}
