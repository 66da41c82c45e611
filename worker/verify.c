/*
 * verify.c - checks of a sweep file before it is read as data (verify.h).
 *
 * Nothing here aborts on a bad file: every HDF5 failure while reading is
 * a message ("cannot read ..."), because a damaged file is an input
 * error, not a bug. The HDF5 error stack is off (H5Eset_auto2 by the
 * callers). Reads use each dataset's own type as the memory type, so the
 * bytes digested are the bytes in the file.
 */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/status.h"
#include "digest.h"

#define VERIFY_BLOCK 4096 /* rows per read */

static const char *const verify_tables[] = {
    "axes/model", "axes/system", "axes/task", "axes/global_batch",
    "axes/strategy", "axes/status", "skipped"};

/* A scalar integer attribute; -1 when absent or of another kind. */
static int verify_attr_int(hid_t loc, const char *name, int64_t *v)
{
    if (H5Aexists(loc, name) <= 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    int rc = t >= 0 && s >= 0 && H5Tget_class(t) == H5T_INTEGER &&
                     H5Sget_simple_extent_npoints(s) == 1 &&
                     H5Aread(a, H5T_NATIVE_INT64, v) >= 0
                 ? 0
                 : -1;
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    H5Aclose(a);
    return rc;
}

/* The extent of a one-dimensional dataset; -1 otherwise. */
static int64_t verify_extent(hid_t d)
{
    hid_t s = H5Dget_space(d);
    if (s < 0)
        return -1;
    hsize_t dim = 0;
    int nd = H5Sget_simple_extent_ndims(s);
    if (nd == 1 && H5Sget_simple_extent_dims(s, &dim, NULL) != 1)
        nd = -1;
    H5Sclose(s);
    return nd == 1 && dim <= (hsize_t)INT64_MAX ? (int64_t)dim : -1;
}

/* Extent of dataset `name` if it is a 1-D array of `cls` elements of
 * `width` bytes (width 0: any); -1 otherwise. */
static int64_t verify_array(hid_t f, const char *name, H5T_class_t cls,
                            size_t width)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
        return -1;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t t = H5Dget_type(d);
    int64_t n = -1;
    if (t >= 0 && H5Tget_class(t) == cls && (!width || H5Tget_size(t) == width))
        n = verify_extent(d);
    if (t >= 0)
        H5Tclose(t);
    H5Dclose(d);
    return n;
}

/* Checks a small table's digest attribute; its row count in *n. */
static int verify_table(hid_t f, const char *name, int64_t *n, char *msg,
                        size_t size)
{
    *n = -1;
    hid_t d = H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Dopen2(f, name, H5P_DEFAULT)
                                                  : -1;
    if (d < 0) {
        snprintf(msg, size, "/%s is missing or unreadable", name);
        return -1;
    }
    int rc = -1;
    char *buf = NULL;
    hid_t t = H5Dget_type(d);
    int64_t rows = verify_extent(d);
    uint64_t want = 0;
    size_t w = t >= 0 ? H5Tget_size(t) : 0;
    if (t < 0 || rows < 0 || w == 0 || H5Tget_class(t) != H5T_COMPOUND) {
        snprintf(msg, size, "/%s is not a one-dimensional table", name);
        goto out;
    }
    if (H5Aexists(d, "digest") <= 0) {
        snprintf(msg, size, "/%s has no digest attribute (written by an "
                 "older madsweep, or damaged)", name);
        goto out;
    }
    hid_t a = H5Aopen(d, "digest", H5P_DEFAULT);
    herr_t ar = a >= 0 ? H5Aread(a, H5T_NATIVE_UINT64, &want) : -1;
    if (a >= 0)
        H5Aclose(a);
    if (ar < 0 || (uint64_t)rows > (uint64_t)(SIZE_MAX / 2) / w) {
        snprintf(msg, size, "/%s: unreadable digest or size", name);
        goto out;
    }
    buf = malloc((size_t)rows * w + 1);
    if (!buf || (rows > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)) {
        snprintf(msg, size, "/%s: cannot read its rows (damaged)", name);
        goto out;
    }
    if (digest_bytes(buf, (size_t)rows * w) != want) {
        snprintf(msg, size, "/%s fails its checksum (the file is corrupted)",
                 name);
        goto out;
    }
    *n = rows;
    rc = 0;
out:
    free(buf);
    if (t >= 0)
        H5Tclose(t);
    H5Dclose(d);
    return rc;
}

int verify_shape_read(hid_t f, verify_shape *v, char *msg, size_t size)
{
    memset(v, 0, sizeof *v);
    static const char *const counts[] = {"points_total", "points_valid",
                                         "chunk_ids", "chunks"};
    int64_t *dst[] = {&v->total, &v->valid, &v->chunk, &v->nchunks};
    for (int i = 0; i < 4; i++)
        if (verify_attr_int(f, counts[i], dst[i]) != 0) {
            snprintf(msg, size, "the root attribute %s is missing or not an "
                     "integer (not a madsweep sweep file, or damaged)", counts[i]);
            return -1;
        }
    if (v->total < 1 || v->valid < 0 || v->valid > v->total || v->chunk < 1 ||
        v->nchunks != v->total / v->chunk + (v->total % v->chunk != 0)) {
        snprintf(msg, size, "the root counts disagree (points_total %lld, "
                 "points_valid %lld, chunk_ids %lld, chunks %lld): damaged",
                 (long long)v->total, (long long)v->valid, (long long)v->chunk,
                 (long long)v->nchunks);
        return -1;
    }
    int64_t n[sizeof verify_tables / sizeof verify_tables[0]];
    for (size_t i = 0; i < sizeof verify_tables / sizeof verify_tables[0]; i++)
        if (verify_table(f, verify_tables[i], &n[i], msg, size) != 0)
            return -1;
    int64_t prod = 1;
    for (int a = 0; a < SPACE_NAXES; a++) {
        v->radix[a] = n[a];
        if (n[a] < 1 || __builtin_mul_overflow(prod, n[a], &prod)) {
            snprintf(msg, size, "/%s is empty or too large", verify_tables[a]);
            return -1;
        }
    }
    if (prod != v->total) {
        snprintf(msg, size, "the axis tables give %lld points but "
                 "points_total is %lld: damaged", (long long)prod,
                 (long long)v->total);
        return -1;
    }
    if (verify_array(f, "results", H5T_COMPOUND, 0) != v->valid ||
        verify_array(f, "progress", H5T_INTEGER, 1) != v->nchunks) {
        snprintf(msg, size, "/results or /progress is missing or does not "
                 "have the size the root counts give (points_valid %lld, "
                 "chunks %lld): truncated or damaged", (long long)v->valid,
                 (long long)v->nchunks);
        return -1;
    }
    if (verify_array(f, "digests", H5T_INTEGER, 8) != v->nchunks) {
        snprintf(msg, size, "/digests is missing or of the wrong size (a "
                 "file without checksums, written by an older madsweep, or "
                 "damaged): it cannot be verified");
        return -1;
    }
    return 0;
}

/* Offset of integer member `name` of `width` bytes in compound t. */
static int verify_member(hid_t t, const char *name, size_t width, size_t *off)
{
    int i = H5Tget_member_index(t, name);
    if (i < 0)
        return -1;
    hid_t m = H5Tget_member_type(t, (unsigned)i);
    int ok = m >= 0 && H5Tget_class(m) == H5T_INTEGER && H5Tget_size(m) == width &&
             H5Tget_order(m) == H5T_ORDER_LE && H5Tget_sign(m) == H5T_SGN_2;
    if (m >= 0)
        H5Tclose(m);
    *off = H5Tget_member_offset(t, (unsigned)i);
    return ok ? 0 : -1;
}

int verify_rows_open(verify_rows *v, hid_t f, const verify_shape *shape,
                     char *msg, size_t size)
{
    memset(v, 0, sizeof *v);
    v->results = v->type = -1;
    v->shape = *shape;
    v->results = H5Dopen2(f, "results", H5P_DEFAULT);
    v->type = v->results >= 0 ? H5Dget_type(v->results) : -1;
    v->size = v->type >= 0 ? H5Tget_size(v->type) : 0;
    static const char *const idx[SPACE_NAXES] = {
        "model_idx", "system_idx", "task_idx", "batch_idx", "strategy_idx"};
    int bad = v->size == 0 || verify_member(v->type, "id", 8, &v->id) ||
              verify_member(v->type, "status", 4, &v->status);
    for (int a = 0; a < SPACE_NAXES && !bad; a++)
        bad = verify_member(v->type, idx[a], 4, &v->idx[a]);
    v->cap = VERIFY_BLOCK;
    v->buf = bad ? NULL : malloc((size_t)v->cap * v->size);
    if (bad || !v->buf) {
        snprintf(msg, size, "/results lacks the columns id, status and *_idx "
                 "of a madsweep sweep file");
        verify_rows_close(v);
        return -1;
    }
    return 0;
}

void verify_rows_close(verify_rows *v)
{
    if (v->type >= 0)
        H5Tclose(v->type);
    if (v->results >= 0)
        H5Dclose(v->results);
    free(v->buf);
    v->buf = NULL;
    v->type = v->results = -1;
}

/* Reads rows [at, at + n) (n <= cap) raw into v->buf. */
static int verify_read(verify_rows *v, int64_t at, int64_t n)
{
    if (n <= 0)
        return 0;
    hsize_t start = (hsize_t)at, count = (hsize_t)n;
    hid_t fs = H5Dget_space(v->results);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    int rc = fs >= 0 && ms >= 0 &&
                     H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count,
                                         NULL) >= 0 &&
                     H5Dread(v->results, v->type, ms, fs, H5P_DEFAULT, v->buf) >= 0
                 ? 0
                 : -1;
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return rc;
}

/* One row of chunk c after id `prev`: id in the chunk's range and
 * increasing, indices equal to the id's, a known status. */
static int verify_row(const verify_rows *v, const char *row, int64_t c,
                      int64_t *prev, int64_t at, char *msg, size_t size)
{
    const verify_shape *s = &v->shape;
    int64_t id;
    int32_t st, ix;
    memcpy(&id, row + v->id, 8);
    memcpy(&st, row + v->status, 4);
    int64_t lo = c * s->chunk, hi = lo + s->chunk < s->total ? lo + s->chunk : s->total;
    if (id < lo || id >= hi || id <= *prev) {
        snprintf(msg, size, "row %lld of /results has id %lld, outside chunk "
                 "%lld's ids [%lld, %lld) or out of order: the file is corrupted",
                 (long long)at, (long long)id, (long long)c, (long long)lo,
                 (long long)hi);
        return -1;
    }
    *prev = id;
    int64_t rest = id;
    for (int a = SPACE_NAXES - 1; a >= 0; a--) {
        memcpy(&ix, row + v->idx[a], 4);
        if (ix != rest % s->radix[a]) {
            snprintf(msg, size, "row %lld of /results (id %lld): its %s index "
                     "%d is not the id's (%lld of %lld): the file is corrupted",
                     (long long)at, (long long)id, space_axis_names[a], (int)ix,
                     (long long)(rest % s->radix[a]), (long long)s->radix[a]);
            return -1;
        }
        rest /= s->radix[a];
    }
    if (strcmp(status_name((status_code)st), "unknown") == 0) {
        snprintf(msg, size, "row %lld of /results (id %lld) has the unknown "
                 "status %d: the file is corrupted", (long long)at, (long long)id,
                 (int)st);
        return -1;
    }
    return 0;
}

int verify_chunk(verify_rows *v, int64_t c, int64_t row0, int64_t n,
                 uint64_t want, char *msg, size_t size)
{
    uint64_t d = DIGEST_SEED;
    int64_t prev = -1;
    for (int64_t at = 0; at < n; at += v->cap) {
        int64_t k = n - at < v->cap ? n - at : v->cap;
        if (verify_read(v, row0 + at, k) != 0) {
            snprintf(msg, size, "cannot read rows %lld-%lld of /results "
                     "(chunk %lld): damaged", (long long)(row0 + at),
                     (long long)(row0 + at + k - 1), (long long)c);
            return -1;
        }
        for (int64_t i = 0; i < k; i++) {
            const char *row = v->buf + (size_t)i * v->size;
            if (verify_row(v, row, c, &prev, row0 + at + i, msg, size) != 0)
                return -1;
            d = digest_row(d, row, v->size);
        }
    }
    if (d != want) {
        snprintf(msg, size, "chunk %lld (rows %lld-%lld of /results) fails its "
                 "checksum: the file is corrupted", (long long)c, (long long)row0,
                 (long long)(row0 + n - 1));
        return -1;
    }
    return 0;
}

int verify_read_progress(hid_t f, int64_t nchunks, uint8_t *done,
                         uint64_t *digests, char *msg, size_t size)
{
    static const char *const names[2] = {"progress", "digests"};
    void *dst[2] = {done, digests};
    hid_t mt[2] = {H5T_NATIVE_UINT8, H5T_NATIVE_UINT64};
    for (int i = 0; i < 2; i++) {
        if (!dst[i] || nchunks == 0)
            continue;
        hid_t d = H5Dopen2(f, names[i], H5P_DEFAULT);
        herr_t rc = d >= 0 ? H5Dread(d, mt[i], H5S_ALL, H5S_ALL, H5P_DEFAULT, dst[i])
                           : -1;
        if (d >= 0)
            H5Dclose(d);
        if (rc < 0) {
            snprintf(msg, size, "cannot read /%s (damaged)", names[i]);
            return -1;
        }
    }
    return 0;
}

/* Streams all rows, checking each chunk as its rows end. */
static int verify_stream(verify_rows *v, const uint64_t *dg, char *msg,
                         size_t size)
{
    const verify_shape *s = &v->shape;
    int64_t cur = 0, prev = -1, first = 0;
    uint64_t d = DIGEST_SEED;
    for (int64_t at = 0; at < s->valid; at += v->cap) {
        int64_t k = s->valid - at < v->cap ? s->valid - at : v->cap;
        if (verify_read(v, at, k) != 0) {
            snprintf(msg, size, "cannot read rows %lld-%lld of /results: "
                     "damaged", (long long)at, (long long)(at + k - 1));
            return -1;
        }
        for (int64_t i = 0; i < k; i++) {
            const char *row = v->buf + (size_t)i * v->size;
            int64_t id;
            memcpy(&id, row + v->id, 8);
            int64_t c = id >= 0 && id < s->total ? id / s->chunk : -1;
            if (c > cur) { /* chunk cur ended; those between are empty */
                for (; cur < c; cur++, d = DIGEST_SEED, first = at + i)
                    if (d != dg[cur]) {
                        snprintf(msg, size, "chunk %lld (rows from %lld of "
                                 "/results) fails its checksum: the file is "
                                 "corrupted", (long long)cur, (long long)first);
                        return -1;
                    }
            }
            if (verify_row(v, row, c < cur ? cur : c, &prev, at + i, msg, size))
                return -1;
            d = digest_row(d, row, v->size);
        }
    }
    for (; cur < s->nchunks; cur++, d = DIGEST_SEED)
        if (d != dg[cur]) {
            snprintf(msg, size, "chunk %lld fails its checksum: the file is "
                     "corrupted", (long long)cur);
            return -1;
        }
    return 0;
}

int verify_file(hid_t f, char *msg, size_t size)
{
    verify_shape s;
    if (verify_shape_read(f, &s, msg, size) != 0)
        return -1;
    uint8_t *done = malloc((size_t)s.nchunks + 1);
    uint64_t *dg = malloc(((size_t)s.nchunks + 1) * sizeof *dg);
    int rc = -1;
    if (!done || !dg) {
        snprintf(msg, size, "out of memory for %lld chunks", (long long)s.nchunks);
        goto out;
    }
    if (verify_read_progress(f, s.nchunks, done, dg, msg, size) != 0)
        goto out;
    for (int64_t c = 0; c < s.nchunks; c++)
        if (done[c] != 1) {
            snprintf(msg, size, "/progress says chunk %lld was never written, "
                     "in a file marked complete: the file is corrupted",
                     (long long)c);
            goto out;
        }
    verify_rows v;
    if (verify_rows_open(&v, f, &s, msg, size) != 0)
        goto out;
    rc = verify_stream(&v, dg, msg, size);
    verify_rows_close(&v);
out:
    free(done);
    free(dg);
    return rc;
}
