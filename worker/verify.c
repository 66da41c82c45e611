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
#include "h5.h"
#include "output.h"
#include "provenance.h"

#define VERIFY_BLOCK 4096 /* rows per read */

/* The axis tables in space_axis order, then the other tables. */
static const char *const verify_axes[SPACE_NAXES] = {
    "axes/model", "axes/system", "axes/task", "axes/global_batch",
    "axes/strategy", "axes/stack", "axes/parallel"};
static const char *const verify_other[] = {"axes/status", "skipped"};

/* Is the string attribute `name` equal to `want`? (absent: `absent`) */
static bool verify_attr_is(hid_t loc, const char *name, const char *want, bool absent)
{
    if (H5Aexists(loc, name) <= 0)
        return absent;
    char *v = h5_attr_get_str(loc, name);
    bool same = v && strcmp(v, want) == 0;
    free(v);
    return same;
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
static int64_t verify_array(hid_t f, const char *name, H5T_class_t cls, size_t width)
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

/* Reads dataset d whole in its own type (*buf malloc'ed, rows x width
 * bytes) and compares with its digest attribute; 0, or -1 with msg. */
static int verify_digested(hid_t d, const char *name, hid_t t, int64_t rows, bool read,
                           char *msg, size_t size)
{
    size_t w = H5Tget_size(t);
    uint64_t want = 0;
    if (H5Aexists(d, "digest") <= 0) {
        snprintf(msg, size, "/%s has no digest attribute (written by an "
                 "older madsweep, or damaged)", name);
        return -1;
    }
    hid_t a = H5Aopen(d, "digest", H5P_DEFAULT);
    herr_t ar = a >= 0 ? H5Aread(a, H5T_NATIVE_UINT64, &want) : -1;
    if (a >= 0)
        H5Aclose(a);
    if (ar < 0 || w == 0 || (uint64_t)rows > (uint64_t)(SIZE_MAX / 4) / w) {
        snprintf(msg, size, "/%s: unreadable digest or size", name);
        return -1;
    }
    if (!read)
        return 0;
    char *buf = malloc((size_t)rows * w + 1);
    if (!buf || (rows > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)) {
        snprintf(msg, size, "/%s: cannot read it (damaged)", name);
        free(buf);
        return -1;
    }
    int rc = digest_bytes(buf, (size_t)rows * w) == want ? 0 : -1;
    free(buf);
    if (rc != 0)
        snprintf(msg, size, "/%s fails its checksum (the file is corrupted)", name);
    return rc;
}

int verify_table(hid_t f, const char *name, bool read, int64_t *n, char *msg,
                 size_t size)
{
    *n = -1;
    hid_t d = H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Dopen2(f, name, H5P_DEFAULT)
                                                  : -1;
    if (d < 0) {
        snprintf(msg, size, "/%s is missing or unreadable", name);
        return -1;
    }
    hid_t t = H5Dget_type(d);
    int64_t rows = verify_extent(d);
    int rc = -1;
    if (t < 0 || rows < 0 || H5Tget_class(t) != H5T_COMPOUND)
        snprintf(msg, size, "/%s is not a one-dimensional table", name);
    else if (verify_digested(d, name, t, rows, read, msg, size) == 0)
        rc = 0;
    if (t >= 0)
        H5Tclose(t);
    H5Dclose(d);
    if (rc == 0)
        *n = rows;
    return rc;
}

/* /chunk_starts: digest, then 0 = lo[0] < lo[1] < ... < lo[n] = valid. */
static int verify_starts(hid_t f, bool read, verify_shape *v, char *msg, size_t size)
{
    if (verify_array(f, "chunk_starts", H5T_INTEGER, 8) != v->nchunks + 1) {
        snprintf(msg, size, "/chunk_starts is missing or does not have the "
                 "size the root counts give (chunks %lld): truncated or damaged",
                 (long long)v->nchunks);
        return -1;
    }
    v->lo = malloc(((size_t)v->nchunks + 1) * sizeof *v->lo);
    hid_t d = H5Dopen2(f, "chunk_starts", H5P_DEFAULT);
    hid_t t = d >= 0 ? H5Dget_type(d) : -1;
    int rc = -1;
    if (!v->lo || t < 0 || H5Tget_sign(t) != H5T_SGN_2 || H5Tget_order(t) != H5T_ORDER_LE)
        snprintf(msg, size, "/chunk_starts is not an int64 array (damaged)");
    else if (verify_digested(d, "chunk_starts", t, v->nchunks + 1, read, msg, size) != 0)
        ;
    else if (H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v->lo) < 0)
        snprintf(msg, size, "/chunk_starts: cannot read it (damaged)");
    else
        rc = 0;
    if (t >= 0)
        H5Tclose(t);
    if (d >= 0)
        H5Dclose(d);
    for (int64_t c = 0; rc == 0 && c < v->nchunks; c++)
        if (v->lo[c] >= v->lo[c + 1])
            rc = -1;
    if (rc == 0 && (v->lo[0] != 0 || v->lo[v->nchunks] != v->valid))
        rc = -1;
    if (rc != 0 && !msg[0])
        snprintf(msg, size, "/chunk_starts does not cut ids 0 to %lld into "
                 "chunks (damaged)", (long long)v->valid);
    return rc;
}

int verify_shape_read(hid_t f, bool tables, verify_shape *v, char *msg, size_t size)
{
    memset(v, 0, sizeof *v);
    msg[0] = '\0';
    static const char *const counts[] = {"points_total", "points_valid", "chunks",
                                         "chunk_ids"};
    int64_t chunk_ids = 0;
    int64_t *dst[] = {&v->total, &v->valid, &v->nchunks, &chunk_ids};
    for (int i = 0; i < 4; i++)
        if (h5_attr_get_i64(f, counts[i], dst[i]) != 0) {
            snprintf(msg, size, "the root attribute %s is missing or not an "
                     "integer (not a madsweep sweep file, or damaged)", counts[i]);
            return -1;
        }
    if (v->total < 0 || v->valid < 0 || v->valid > v->total || chunk_ids < 1 ||
        v->nchunks < 0 || v->nchunks > v->valid || (v->valid > 0 && v->nchunks < 1)) {
        snprintf(msg, size, "the root counts disagree (points_total %lld, "
                 "points_valid %lld, chunks %lld, chunk_ids %lld): damaged",
                 (long long)v->total, (long long)v->valid, (long long)v->nchunks,
                 (long long)chunk_ids);
        return -1;
    }
    if (H5Lexists(f, "axes/strategy", H5P_DEFAULT) > 0 &&
        H5Lexists(f, "axes/parallel", H5P_DEFAULT) <= 0) {
        snprintf(msg, size, "/axes/parallel is missing: a file written by an older "
                 "madsweep, before the strategy axis was split into /axes/parallel and "
                 "/axes/strategy (run its sweep again)");
        return -1;
    }
    int64_t prod = 1;
    for (int a = 0; a < SPACE_NAXES; a++) {
        if (verify_table(f, verify_axes[a], tables, &v->radix[a], msg, size) != 0)
            return -1;
        if (v->radix[a] < 1 || __builtin_mul_overflow(prod, v->radix[a], &prod)) {
            snprintf(msg, size, "/%s is empty or too large", verify_axes[a]);
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof verify_other / sizeof verify_other[0]; i++) {
        int64_t n;
        if (verify_table(f, verify_other[i], tables, &n, msg, size) != 0)
            return -1;
    }
    int64_t format = 1;
    if (H5Aexists(f, "format_version") > 0 &&
        (h5_attr_get_i64(f, "format_version", &format) != 0 ||
         (format != 1 && format != OUTPUT_FORMAT_VERSION))) {
        snprintf(msg, size, "its file format (attribute format_version) is not one this "
                 "madsweep reads (1 or %d): a newer madsweep wrote it, or it is damaged",
                 OUTPUT_FORMAT_VERSION);
        return -1;
    }
    int64_t nk = 0;
    if (format == OUTPUT_FORMAT_VERSION &&
        verify_table(f, "parts/kind_of", tables, &nk, msg, size) != 0)
        return -1;
    if (prod != v->total) {
        snprintf(msg, size, "the axis tables give %lld combinations but "
                 "points_total is %lld: damaged", (long long)prod,
                 (long long)v->total);
        return -1;
    }
    v->keep_all = verify_attr_is(f, "keep", "all", true);
    v->rows = verify_array(f, "results", H5T_COMPOUND, 0);
    if (v->rows < 0 || (v->keep_all && v->rows != v->valid) ||
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
    if (verify_starts(f, tables, v, msg, size) != 0) {
        verify_shape_free(v);
        return -1;
    }
    return 0;
}

void verify_shape_free(verify_shape *v)
{
    free(v->lo);
    v->lo = NULL;
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
    v->shape = shape;
    if (results_open(&v->res, f, msg, size) != 0)
        return -1;
    hid_t t = v->res.common.type; /* the checked columns are /results' */
    v->size = v->res.common.size;
    int bad = v->size == 0 || verify_member(t, "id", 8, &v->id) ||
              verify_member(t, "status", 4, &v->status);
    for (int a = 0; a < SPACE_NAXES && !bad; a++) {
        char name[64];
        snprintf(name, sizeof name, "%s_idx",
                 a == SPACE_BATCH ? "batch" : space_axis_names[a]);
        bad = verify_member(t, name, 4, &v->idx[a]);
    }
    v->cap = VERIFY_BLOCK;
    if (bad) {
        snprintf(msg, size, "/results lacks the columns id, status and *_idx "
                 "of a madsweep sweep file");
        verify_rows_close(v);
        return -1;
    }
    return 0;
}

void verify_rows_close(verify_rows *v)
{
    results_close(&v->res);
}

/* Row `at` (id after *prev): the id increases, is below points_valid and
 * (keep = "all") equals the row number; its indices lie in their axis
 * tables; its status is known. */
static int verify_row(const verify_rows *v, const char *row, int64_t *prev,
                      int64_t at, char *msg, size_t size)
{
    const verify_shape *s = v->shape;
    int64_t id;
    int32_t st, ix;
    memcpy(&id, row + v->id, 8);
    memcpy(&st, row + v->status, 4);
    if (id <= *prev || id >= s->valid || (s->keep_all && id != at)) {
        snprintf(msg, size, "row %lld of /results has id %lld, out of order or "
                 "outside the ids 0 to %lld: the file is corrupted", (long long)at,
                 (long long)id, (long long)(s->valid - 1));
        return -1;
    }
    *prev = id;
    for (int a = 0; a < SPACE_NAXES; a++) {
        memcpy(&ix, row + v->idx[a], 4);
        if (ix < 0 || ix >= s->radix[a]) {
            snprintf(msg, size, "row %lld of /results (id %lld): its %s index "
                     "%d lies outside /%s (%lld rows): the file is corrupted",
                     (long long)at, (long long)id, space_axis_names[a], (int)ix,
                     verify_axes[a], (long long)s->radix[a]);
            return -1;
        }
    }
    if (strcmp(status_name((status_code)st), "unknown") == 0) {
        snprintf(msg, size, "row %lld of /results (id %lld) has the unknown "
                 "status %d: the file is corrupted", (long long)at, (long long)id,
                 (int)st);
        return -1;
    }
    return 0;
}

/* Chunk c's /parts/index entry names row `row` and the part rows pos[]
 * (nothing to check without parts). */
static int verify_entry(const verify_rows *v, int64_t c, int64_t row, const int64_t *pos,
                        char *msg, size_t size)
{
    if (v->res.nparts == 0)
        return 0;
    int64_t er = -1, ep[OUTPUT_NKINDS];
    int ok = results_index_entry(&v->res, c, &er, ep) == 0 && er == row;
    for (int p = 0; ok && p < v->res.nparts; p++)
        ok = ep[p] == pos[p];
    if (!ok)
        snprintf(msg, size, "the /parts/index entry of chunk %lld does not name its first "
                 "row %lld and the part rows before it: the file is corrupted",
                 (long long)c, (long long)row);
    return ok ? 0 : -1;
}

int verify_chunk(verify_rows *v, int64_t c, uint64_t want, char *msg, size_t size)
{
    int64_t row0 = v->shape->lo[c], n = v->shape->lo[c + 1] - row0, first = row0;
    if (results_seek_chunk(&v->res, c, &first, msg, size) != 0)
        return -1;
    if (v->res.nparts > 0 && first != row0) {
        snprintf(msg, size, "the /parts/index entry of chunk %lld names row %lld, not its "
                 "first id %lld: the file is corrupted", (long long)c, (long long)first,
                 (long long)row0);
        return -1;
    }
    uint64_t d = DIGEST_SEED;
    int64_t prev = row0 - 1;
    for (int64_t at = 0; at < n; at += v->cap) {
        int64_t k = n - at < v->cap ? n - at : v->cap;
        char why[VERIFY_MSG];
        if (results_fetch(&v->res, row0 + at, k, why, sizeof why) != 0) {
            snprintf(msg, size, "chunk %lld: %s", (long long)c, why);
            return -1;
        }
        for (int64_t i = 0; i < k; i++) {
            const char *row = v->res.common.buf + (size_t)i * v->size;
            if (verify_row(v, row, &prev, row0 + at + i, msg, size) != 0)
                return -1;
            d = results_digest_row(&v->res, d, i);
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

int verify_stream(verify_rows *v, int64_t nrows, int64_t nch, const uint64_t *dg,
                  char *msg, size_t size)
{
    const int64_t *lo = v->shape->lo;
    int64_t cur = 0, prev = -1, first = 0, pos[OUTPUT_NKINDS] = {0};
    uint64_t d = DIGEST_SEED;
    if (nch > 0 && verify_entry(v, 0, 0, pos, msg, size) != 0)
        return -1;
    for (int64_t at = 0; at < nrows; at += v->cap) {
        int64_t k = nrows - at < v->cap ? nrows - at : v->cap;
        if (results_fetch(&v->res, at, k, msg, size) != 0)
            return -1;
        for (int64_t i = 0; i < k; i++) {
            const char *row = v->res.common.buf + (size_t)i * v->size;
            if (verify_row(v, row, &prev, at + i, msg, size) != 0)
                return -1;
            if (prev >= lo[nch]) {
                snprintf(msg, size, "row %lld of /results (id %lld) lies past "
                         "the chunks written: the file is corrupted",
                         (long long)(at + i), (long long)prev);
                return -1;
            }
            for (; prev >= lo[cur + 1]; cur++, d = DIGEST_SEED, first = at + i) {
                if (d != dg[cur]) { /* chunk cur ended (those between are empty) */
                    snprintf(msg, size, "chunk %lld (rows from %lld of /results) "
                             "fails its checksum: the file is corrupted",
                             (long long)cur, (long long)first);
                    return -1;
                }
                if (verify_entry(v, cur + 1, at + i, pos, msg, size) != 0)
                    return -1;
            }
            d = results_digest_row(&v->res, d, i);
            int p = results_part_of(&v->res, i);
            if (p >= 0)
                pos[p]++;
        }
    }
    for (; cur < nch; cur++, d = DIGEST_SEED) {
        if (d != dg[cur]) {
            snprintf(msg, size, "chunk %lld fails its checksum: the file is "
                     "corrupted", (long long)cur);
            return -1;
        }
        if (cur + 1 < nch && verify_entry(v, cur + 1, nrows, pos, msg, size) != 0)
            return -1;
    }
    /* a checkpoint's first chunk left: its entry is where a resumed run
     * continues (worker.c) */
    if (nch > 0 && nch < v->res.nindex && verify_entry(v, nch, nrows, pos, msg, size) != 0)
        return -1;
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

/* A finished reduced sweep: its rows are the kept ones (rows_kept) and
 * /groups is intact. */
static int verify_reduced(hid_t f, const verify_shape *s, char *msg, size_t size)
{
    int64_t kept = -1, n = -1;
    if (h5_attr_get_i64(f, "rows_kept", &kept) != 0 || kept != s->rows) {
        snprintf(msg, size, "/results has %lld rows but rows_kept says %lld: "
                 "truncated or damaged", (long long)s->rows, (long long)kept);
        return -1;
    }
    return verify_table(f, "groups", true, &n, msg, size);
}

int verify_file(hid_t f, char *msg, size_t size)
{
    verify_shape s;
    if (verify_shape_read(f, true, &s, msg, size) != 0)
        return -1;
    int rc = -1;
    uint8_t *done = malloc((size_t)s.nchunks + 1);
    uint64_t *dg = malloc(((size_t)s.nchunks + 1) * sizeof *dg);
    if (!done || !dg) {
        snprintf(msg, size, "out of memory for %lld chunks", (long long)s.nchunks);
        goto out;
    }
    if (provenance_verify(f, msg, size) < 0 ||
        (!s.keep_all && verify_reduced(f, &s, msg, size) != 0) ||
        verify_read_progress(f, s.nchunks, done, dg, msg, size) != 0)
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
    rc = verify_stream(&v, s.rows, s.nchunks, dg, msg, size);
    verify_rows_close(&v);
out:
    free(done);
    free(dg);
    verify_shape_free(&s);
    return rc;
}
