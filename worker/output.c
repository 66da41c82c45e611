/*
 * output.c - the sweep file's lifecycle, attributes and row writes (see
 * output.h).
 *
 * Invariants: every rank makes the same sequence of metadata calls with
 * the same values (HDF5's rule for parallel metadata; a table's digest is
 * rank 0's, broadcast); the file is flushed once its structure exists, so
 * a run killed later leaves a file that reopens (complete = 0) and whose
 * /progress says which chunks are in it; a chunk's rows, part rows, index
 * entries and digest are written before its progress byte; `complete`
 * becomes 1 only after every other attribute is set. A failed write of
 * rows or per-chunk data says which and where (check_write_die), never a
 * bare HDF5 stack.
 */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "check.h"
#include "claim.h"
#include "h5.h"
#include "output_tables.h"
#include "version.h"

#define OUTPUT_CHUNK_ROWS 4096   /* HDF5 chunk of /results and the parts */

/* ------------------------------------------------------------ attributes */

void output_set_meta(output *o, const output_meta *m)
{
    hid_t f = o->file;
    attr_i64(f, "complete", 0);
    attr_i64(f, "format_version", OUTPUT_FORMAT_VERSION);
    attr_str(f, "spec_text", m->spec_text);
    attr_str(f, "spec_path", m->spec_path);
    attr_str(f, "tool_version", MADSWEEP_VERSION);
    attr_str(f, "cost_model_version", m->cost_version);
    attr_str(f, "fidelity", m->fidelity);
    attr_str(f, "start_time", m->start_time);
    attr_str(f, "end_time", m->end_time);
    attr_i64(f, "ranks", m->ranks);
    attr_i64(f, "points_total", m->total);
    attr_i64(f, "points_valid", m->valid);
    attr_i64(f, "points_invalid", m->invalid);
    attr_i64(f, "points_evaluated", m->evaluated);
    attr_i64(f, "chunk_ids", m->chunk);
    attr_i64(f, "chunks", m->nchunks);
    attr_f64(f, "elapsed_s", m->elapsed_s);
    attr_f64(f, "evals_per_s", m->evals_per_s);
    CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    if (m->complete) {
        attr_i64(f, "complete", 1);
        CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    }
}

void output_set_i64(output *o, const char *name, int64_t v)
{
    attr_i64(o->file, name, v);
}

void output_set_f64(output *o, const char *name, double v)
{
    attr_f64(o->file, name, v);
}

int output_get_i64(output *o, const char *name, int64_t *v)
{
    return h5_attr_get_i64(o->file, name, v);
}

void output_set_str(output *o, const char *name, const char *v)
{
    attr_str(o->file, name, v);
}

/* ------------------------------------------------------------ file */

static hid_t output_fapl(MPI_Comm comm)
{
    hid_t fapl = CHECK_H5ID(H5Pcreate(H5P_FILE_ACCESS));
    CHECK_H5(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL));
    /* the 1.10 file format: superblock, object headers and chunk index
     * carry checksums, so damaged metadata fails to open or read */
    CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110));
    return fapl;
}

static int output_agree(MPI_Comm comm, int bad)
{
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    return any;
}

int output_create(output *o, MPI_Comm comm, const char *path, const space *s,
                  const output_meta *m, char *msg, size_t msize)
{
    memset(o, 0, sizeof *o);
    o->comm = comm;
    o->path = path;
    o->keys = m->key_units;
    CHECK_MPI(MPI_Comm_rank(comm, &o->rank));
    hid_t fapl = output_fapl(comm);
    /* a zeroed user block until the file is laid out (claim.h) */
    hid_t fcpl = CHECK_H5ID(H5Pcreate(H5P_FILE_CREATE));
    CHECK_H5(H5Pset_userblock(fcpl, CLAIM_USERBLOCK));
    o->file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    CHECK_H5(H5Pclose(fcpl));
    CHECK_H5(H5Pclose(fapl));
    if (output_agree(comm, o->file < 0)) {
        snprintf(msg, msize, "cannot create %s (check the directory exists "
                 "and is writable)", path);
        if (o->file >= 0)
            H5Fclose(o->file);
        memset(o, 0, sizeof *o);
        return -1;
    }
    output_tables_axes(o->file, s, comm, o->rank, &o->keys);
    if (m->prov)
        provenance_write(o->file, m->prov, comm, o->rank);
    output_set_meta(o, m);
    return 0;
}

void output_close(output *o)
{
    hid_t *ids[] = {&o->mtype, &o->index_mtype};
    for (int i = 0; i < 2; i++)
        if (*ids[i] > 0)
            CHECK_H5(H5Tclose(*ids[i]));
    for (int p = 0; p < OUTPUT_NKINDS; p++) {
        if (o->part_mtype[p] > 0)
            CHECK_H5(H5Tclose(o->part_mtype[p]));
        if (o->part[p] > 0)
            CHECK_H5(H5Dclose(o->part[p]));
    }
    hid_t *sets[] = {&o->results, &o->progress, &o->digests, &o->index};
    for (int i = 0; i < 4; i++)
        if (*sets[i] > 0)
            CHECK_H5(H5Dclose(*sets[i]));
    if (o->file > 0)
        CHECK_H5(H5Fclose(o->file));
    free(o->scratch);
    memset(o, 0, sizeof *o);
}

void output_flush(output *o)
{
    CHECK_H5(H5Fflush(o->file, H5F_SCOPE_GLOBAL));
}

/* ------------------------------------------------------------ layout */

/* A one-dimensional dataset of `rows` elements of type ftype, allocated
 * now and never filled; chunked (`chunk` elements) and extendable when
 * chunk > 0, else contiguous. */
static hid_t output_dataset(hid_t loc, const char *name, hid_t ftype, int64_t rows,
                            int64_t chunk)
{
    hsize_t dims[1] = {(hsize_t)rows}, cdims[1] = {(hsize_t)chunk};
    hsize_t maxdims[1] = {H5S_UNLIMITED}; /* lets chunks exceed tiny sizes */
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, chunk > 0 ? maxdims : NULL));
    hid_t dcpl = CHECK_H5ID(H5Pcreate(H5P_DATASET_CREATE));
    if (chunk > 0)
        CHECK_H5(H5Pset_chunk(dcpl, 1, cdims));
    CHECK_H5(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    CHECK_H5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    hid_t d = CHECK_H5ID(H5Dcreate2(loc, name, ftype, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK_H5(H5Pclose(dcpl));
    CHECK_H5(H5Sclose(fs));
    return d;
}

/* A table of rows: its file type, units and a chunked dataset. */
static hid_t output_rows_dataset(const output *o, hid_t loc, const char *name, const table *t,
                                 int64_t rows, int64_t chunk)
{
    hid_t ft = table_ftype(t);
    hid_t d = output_dataset(loc, name, ft, rows, chunk);
    output_rows_units_attr(d, t, &o->keys);
    CHECK_H5(H5Tclose(ft));
    return d;
}

/* The layout of /parts/index: the chunk's first row, then the rows of
 * each part before it (int64, named as the part). */
static void output_index_table(const output_rows *r, table *t)
{
    table_init(t);
    table_add(t, "row", TABLE_I64, 0);
    for (int p = 0; p < r->nparts; p++)
        table_add(t, r->part[p].name, TABLE_I64, 0);
}

/* /parts/kind_of: the kind of every (model, task). */
static void output_kind_of(output *o, hid_t g, const output_rows *r)
{
    const spec *sp = r->sp;
    table t;
    table_init(&t);
    size_t o_m = table_add(&t, "model_idx", TABLE_I32, 0);
    size_t o_t = table_add(&t, "task_idx", TABLE_I32, 0);
    table_add(&t, "kind", TABLE_STR, 16);
    const table_col *c_k = table_find(&t, "kind");
    int64_t n = sp->nmodels * sp->ntasks;
    char *b = calloc((size_t)(n > 0 ? n : 1), t.size);
    if (!b)
        check_die("out of memory", __FILE__, __LINE__);
    for (int64_t m = 0; m < sp->nmodels; m++)
        for (int64_t k = 0; k < sp->ntasks; k++) {
            char *row = b + (size_t)(m * sp->ntasks + k) * t.size;
            table_put_i32(row, o_m, (int32_t)m);
            table_put_i32(row, o_t, (int32_t)k);
            table_put_str(row, c_k, output_kind_names[output_rows_kind(r, m, k)]);
        }
    output_tables_write(g, "kind_of", &t, n, b, o->comm, o->rank, &o->keys);
    free(b);
}

/* /parts: the logical row type, the kinds, a dataset per part (empty
 * until output_grow) and the index (an entry per chunk). */
static void output_parts(output *o, const output_rows *r, bool grow, int64_t nchunks)
{
    hid_t g = CHECK_H5ID(H5Gcreate2(o->file, "parts", H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT));
    hid_t lt = table_ftype(&r->t);
    CHECK_H5(H5Tcommit2(g, "row", lt, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    output_rows_units_attr(lt, &r->t, &o->keys);
    attr_str(lt, "fill", "a column a row's tables (/results, /parts/KIND of its kind) do "
             "not store: NaN for a float, 0 for an integer, '' for a text; 0 for a "
             "float too on a row whose status is 100 or more (invalid:*)");
    CHECK_H5(H5Tclose(lt));
    output_kind_of(o, g, r);
    int64_t chunk = grow ? OUTPUT_CHUNK_ROWS / 16 : OUTPUT_CHUNK_ROWS;
    for (int p = 0; p < r->nparts; p++) {
        o->part[p] = output_rows_dataset(o, g, r->part[p].name, &r->part[p].t, 0, chunk);
        o->part_mtype[p] = table_mtype(&r->part[p].t);
    }
    if (r->nparts > 0) {
        table t;
        output_index_table(r, &t);
        hid_t ft = table_ftype(&t);
        o->index = output_dataset(g, "index", ft, nchunks, 0);
        CHECK_H5(H5Tclose(ft));
        output_rows_units_attr(o->index, &t, &o->keys);
        o->index_mtype = table_mtype(&t);
    }
    CHECK_H5(H5Gclose(g));
}

void output_layout(output *o, const output_rows *r, int64_t rows, bool grow,
                   const int64_t *by_code, const int64_t *chunk_lo,
                   const output_meta *m)
{
    if (!r->sp)
        check_die("internal error: output_layout of unplanned rows", __FILE__, __LINE__);
    o->rows = r;
    /* /results: its exact length, allocated now, never filled; reduced
     * sweeps keep few rows: small chunks keep their file small */
    o->results = output_rows_dataset(o, o->file, "results", &r->common.t, rows,
                                     grow ? OUTPUT_CHUNK_ROWS / 16 : OUTPUT_CHUNK_ROWS);
    o->mtype = table_mtype(&r->common.t);
    output_parts(o, r, grow, m->nchunks);

    /* /progress: zeros written by rank 0; /digests: set with each chunk */
    o->progress = output_dataset(o->file, "progress", H5T_STD_U8LE, m->nchunks, 0);
    o->digests = output_dataset(o->file, "digests", H5T_STD_U64LE, m->nchunks, 0);
    uint8_t *zeros = calloc((size_t)m->nchunks + 1, 1);
    if (!zeros)
        check_die("out of memory", __FILE__, __LINE__);
    h5_write_root(o->progress, H5T_NATIVE_UINT8, 0, m->nchunks, zeros, o->rank);
    free(zeros);

    /* /chunk_starts: the cut, with its digest */
    hid_t cs = output_dataset(o->file, "chunk_starts", H5T_STD_I64LE, m->nchunks + 1, 0);
    h5_write_root(cs, H5T_NATIVE_INT64, 0, m->nchunks + 1, chunk_lo, o->rank);
    h5_attr_digest(cs, chunk_lo, ((size_t)m->nchunks + 1) * sizeof *chunk_lo, o->comm,
                   o->rank);
    CHECK_H5(H5Dclose(cs));

    output_tables_skipped(o->file, by_code, o->comm, o->rank, &o->keys);
    output_set_meta(o, m);
}

/* Grows d to at least n elements (collective). */
static void output_extend(hid_t d, int64_t n)
{
    hid_t fs = CHECK_H5ID(H5Dget_space(d));
    hssize_t have = H5Sget_simple_extent_npoints(fs);
    CHECK_H5(have);
    CHECK_H5(H5Sclose(fs));
    hsize_t dims[1] = {(hsize_t)n};
    if (n > (int64_t)have)
        CHECK_H5(H5Dset_extent(d, dims));
}

void output_grow(output *o, int64_t rows, const int64_t *part_rows)
{
    output_extend(o->results, rows);
    for (int p = 0; part_rows && p < o->rows->nparts; p++)
        output_extend(o->part[p], part_rows[p]);
}

/* ------------------------------------------------------------ reopen */

/* The per-chunk datasets of a laid-out file that exist: a bit per name of
 * output_sets (-1 when the root group does not read). */
static const char *const output_sets[4] = {"results", "progress", "digests",
                                           "chunk_starts"};

static int output_sets_present(hid_t file)
{
    int bits = 0;
    for (int i = 0; i < 4; i++) {
        htri_t e = H5Lexists(file, output_sets[i], H5P_DEFAULT);
        if (e < 0)
            return -1;
        bits |= (e > 0) << i;
    }
    return bits;
}

int output_open(output *o, MPI_Comm comm, const char *path,
                const output_meta *m, int64_t *complete, char *msg, size_t msize)
{
    memset(o, 0, sizeof *o);
    o->comm = comm;
    o->path = path;
    o->keys = m->key_units;
    CHECK_MPI(MPI_Comm_rank(comm, &o->rank));
    hid_t fapl = output_fapl(comm);
    o->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    CHECK_H5(H5Pclose(fapl));
    if (output_agree(comm, o->file < 0)) {
        snprintf(msg, msize, "cannot resume: %s does not open as an HDF5 "
                 "file of this format (truncated, corrupted, or not a sweep "
                 "file; run again without --resume)", path);
        if (o->file >= 0)
            H5Fclose(o->file);
        memset(o, 0, sizeof *o);
        return -1;
    }
    /* the first difference found names the reason (same on every rank:
     * every rank reads the same file) */
    const char *why = NULL;
    char pwhy[600];
    char *text = h5_attr_get_str(o->file, "spec_text");
    char *tool = h5_attr_get_str(o->file, "tool_version");
    char *cost = h5_attr_get_str(o->file, "cost_model_version");
    int64_t valid = -2;
    int sets = output_sets_present(o->file);
    int64_t format = 1;
    h5_attr_get_i64(o->file, "format_version", &format);
    if (!text || h5_attr_get_i64(o->file, "complete", complete) != 0)
        why = "it is not a madsweep sweep file";
    else if (format != OUTPUT_FORMAT_VERSION)
        why = format < OUTPUT_FORMAT_VERSION
                  ? "it was written by an older madsweep, in file format 1 (one wide "
                    "/results row); this madsweep resumes only format 2"
                  : "it was written by a newer madsweep (a file format this one "
                    "does not know)";
    else if (sets < 0)
        why = "its root group is damaged";
    else if (sets == 0 && (h5_attr_get_i64(o->file, "points_valid", &valid) != 0 ||
                           valid != -1))
        why = "it has no datasets although its count pass ended (damaged)";
    else if (sets != 0 && sets != 15)
        why = "its datasets are incomplete (/results, /progress, /digests or "
              "/chunk_starts is missing: written by a madsweep without "
              "checksums, or damaged)";
    else if (strcmp(text, m->spec_text) != 0)
        why = "its spec_text differs from this spec";
    else if (!tool || strcmp(tool, MADSWEEP_VERSION) != 0 || !cost ||
             strcmp(cost, m->cost_version) != 0)
        why = "it was written by another tool or cost-model version "
              "(its rows would mix two models)";
    else if (m->prov && provenance_verify(o->file, pwhy, sizeof pwhy) < 0)
        why = pwhy;
    else if (m->prov && provenance_compare(o->file, m->prov, pwhy,
                                           sizeof pwhy) != 0)
        why = pwhy;
    free(text);
    free(tool);
    free(cost);
    if (output_agree(comm, why != NULL)) {
        snprintf(msg, msize, "cannot resume: %s: %s; run without --resume "
                 "to start it over", path, why ? why : "another rank "
                 "read it differently");
        CHECK_H5(H5Fclose(o->file));
        memset(o, 0, sizeof *o);
        return -1;
    }
    if (m->prov && !*complete)
        provenance_note_resume(o->file, m->prov);
    return 0;
}

/* The file's /chunk_starts equals chunk_lo[0 .. n]? (0: yes) */
static int output_same_cut(hid_t file, const int64_t *chunk_lo, int64_t n)
{
    hid_t d = H5Dopen2(file, "chunk_starts", H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t sp = H5Dget_space(d);
    hssize_t len = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0)
        H5Sclose(sp);
    int64_t *b = len == n + 1 ? malloc((size_t)len * sizeof *b) : NULL;
    int rc = -1;
    if (b && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0)
        rc = memcmp(b, chunk_lo, (size_t)len * sizeof *b) == 0 ? 0 : -1;
    free(b);
    H5Dclose(d);
    return rc;
}

/* Opens dataset `name` of the file when its type is t's (-1 otherwise). */
static hid_t output_open_table(hid_t file, const char *name, const table *t)
{
    hid_t d = H5Lexists(file, name, H5P_DEFAULT) > 0 ? H5Dopen2(file, name, H5P_DEFAULT)
                                                     : -1;
    if (d < 0)
        return -1;
    hid_t ft = H5Dget_type(d), want = table_ftype(t);
    int same = ft >= 0 && H5Tequal(ft, want) > 0;
    if (ft >= 0)
        CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Tclose(want));
    if (!same) {
        H5Dclose(d);
        return -1;
    }
    return d;
}

/* The datasets of a laid-out file for the planned rows r: NULL, or why
 * they are not this layout's. */
static const char *output_reopen_sets(output *o, const output_rows *r)
{
    const char *differs = "it was written by another version (row layout differs)";
    if ((o->results = output_open_table(o->file, "results", &r->common.t)) < 0)
        return differs;
    if ((o->progress = H5Dopen2(o->file, "progress", H5P_DEFAULT)) < 0 ||
        (o->digests = H5Dopen2(o->file, "digests", H5P_DEFAULT)) < 0)
        return "a dataset does not open (damaged)";
    if (H5Lexists(o->file, "parts", H5P_DEFAULT) <= 0)
        return differs;
    for (int p = 0; p < r->nparts; p++) {
        char name[TABLE_NAME_MAX + 8];
        snprintf(name, sizeof name, "parts/%s", r->part[p].name);
        if ((o->part[p] = output_open_table(o->file, name, &r->part[p].t)) < 0)
            return differs;
        o->part_mtype[p] = table_mtype(&r->part[p].t);
    }
    if (r->nparts > 0) {
        table t;
        output_index_table(r, &t);
        if ((o->index = output_open_table(o->file, "parts/index", &t)) < 0)
            return differs;
        o->index_mtype = table_mtype(&t);
    }
    return NULL;
}

int output_reopen_layout(output *o, const output_rows *r, const output_meta *m,
                         const int64_t *chunk_lo, uint8_t *done, char *msg,
                         size_t msize)
{
    MPI_Comm comm = o->comm;
    int sets = output_sets_present(o->file);
    if (sets == 0)
        return 1; /* stopped or killed before the layout: the caller lays it out */
    int64_t total = -1, chunk = -1, valid = -1, nchunks = -1;
    h5_attr_get_i64(o->file, "points_total", &total);
    h5_attr_get_i64(o->file, "chunk_ids", &chunk);
    h5_attr_get_i64(o->file, "points_valid", &valid);
    h5_attr_get_i64(o->file, "chunks", &nchunks);
    int bad = sets != 15 || total != m->total || chunk != m->chunk ||
              valid != m->valid || nchunks != m->nchunks ||
              output_same_cut(o->file, chunk_lo, m->nchunks) != 0;
    if (output_agree(comm, bad)) {
        snprintf(msg, msize, "cannot resume: its space differs (the catalogues "
                 "or the configs directory changed; or its counts or "
                 "/chunk_starts are damaged); run without --resume to start "
                 "it over");
        return -1;
    }
    o->rows = r;
    o->mtype = table_mtype(&r->common.t);
    const char *why = output_reopen_sets(o, r);
    if (!why && m->nchunks > 0) {
        hid_t x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
        CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
        if (H5Dread(o->progress, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, x, done) < 0)
            why = "its /progress does not read (damaged)";
        CHECK_H5(H5Pclose(x));
    }
    if (output_agree(comm, why != NULL)) {
        snprintf(msg, msize, "cannot resume: %s; run without --resume to start "
                 "it over", why ? why : "another rank read it differently");
        hid_t *ids[] = {&o->results, &o->progress, &o->digests, &o->index};
        for (int i = 0; i < 4; i++)
            if (*ids[i] > 0)
                H5Dclose(*ids[i]);
        for (int p = 0; p < OUTPUT_NKINDS; p++)
            if (o->part[p] > 0)
                H5Dclose(o->part[p]);
        o->results = o->progress = o->digests = o->index = 0;
        memset(o->part, 0, sizeof o->part);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ writes */

/* Writes elements [at, at + n) of d; a failure names `what` and dies. */
static void output_put(const output *o, hid_t d, hid_t mtype, int64_t at, int64_t n,
                       const void *buf, bool collective, const char *what)
{
    if (h5_write(d, mtype, at, n, buf, collective) < 0) {
        char text[600];
        snprintf(text, sizeof text, "%s %lld-%lld", what, (long long)at,
                 (long long)(at + n - 1));
        check_write_die(o->path, o->rank, text, __FILE__, __LINE__);
    }
}

/* A scratch buffer of at least `size` bytes. */
static char *output_scratch(output *o, size_t size)
{
    if (size > o->scratch_size) {
        char *b = realloc(o->scratch, size);
        if (!b)
            check_die("out of memory for a piece of rows", __FILE__, __LINE__);
        o->scratch = b;
        o->scratch_size = size;
    }
    return o->scratch;
}

void output_write_rows(output *o, int64_t row0, int64_t n, const void *rows,
                       const int64_t *part_pos, bool collective)
{
    const output_rows *r = o->rows;
    int np = r->nparts;
    /* scratch: the common rows, then each part's rows (n at most) */
    size_t at[OUTPUT_NKINDS + 2];
    at[0] = 0;
    at[1] = (size_t)n * r->common.t.size;
    for (int p = 0; p < np; p++)
        at[p + 2] = at[p + 1] + (size_t)n * r->part[p].t.size;
    char *s = output_scratch(o, at[np + 1] + 1);
    char *parts[OUTPUT_NKINDS];
    for (int p = 0; p < np; p++)
        parts[p] = s + at[p + 1];
    int64_t counts[OUTPUT_NKINDS];
    output_rows_split(r, rows, n, s, parts, counts);
    output_put(o, o->results, o->mtype, row0, n, s, collective, "rows");
    for (int p = 0; p < np; p++) {
        char what[TABLE_NAME_MAX + 32];
        snprintf(what, sizeof what, "rows of /parts/%s", r->part[p].name);
        output_put(o, o->part[p], o->part_mtype[p], part_pos[p], counts[p], parts[p],
                   collective, what);
    }
}

void output_write_index(output *o, int64_t c0, int64_t n, const int64_t *ent,
                        bool collective)
{
    if (o->rows->nparts > 0)
        output_put(o, o->index, o->index_mtype, c0, n, ent, collective,
                   "the /parts/index entries of chunks");
}

int output_read_index(output *o, int64_t c, int64_t *ent)
{
    if (o->rows->nparts == 0 || o->index <= 0)
        return -1;
    hsize_t start[1] = {(hsize_t)c}, count[1] = {1};
    hid_t fs = CHECK_H5ID(H5Dget_space(o->index));
    hid_t ms = CHECK_H5ID(H5Screate_simple(1, count, NULL));
    herr_t rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (rc >= 0)
        rc = H5Dread(o->index, o->index_mtype, ms, fs, H5P_DEFAULT, ent);
    CHECK_H5(H5Sclose(ms));
    CHECK_H5(H5Sclose(fs));
    return rc < 0 ? -1 : 0;
}

void output_mark_done(output *o, int64_t chunk, uint64_t digest)
{
    const uint8_t one = 1;
    output_put(o, o->digests, H5T_NATIVE_UINT64, chunk, 1, &digest, false,
               "the digest of chunk");
    output_put(o, o->progress, H5T_NATIVE_UINT8, chunk, 1, &one, false,
               "the progress byte of chunk");
}

void output_write_digests(output *o, int64_t c0, int64_t n, const uint64_t *d)
{
    output_put(o, o->digests, H5T_NATIVE_UINT64, c0, n, d, false, "the digests of chunks");
}

void output_mark_range(output *o, int64_t c0, int64_t c1)
{
    int64_t n = c1 > c0 ? c1 - c0 : 0;
    uint8_t *ones = malloc((size_t)(n > 0 ? n : 1));
    if (!ones)
        check_die("out of memory", __FILE__, __LINE__);
    memset(ones, 1, (size_t)(n > 0 ? n : 1));
    h5_write_root(o->progress, H5T_NATIVE_UINT8, c0, n, ones, o->rank);
    free(ones);
}

void output_table_write(output *o, const char *name, const table *t, int64_t n,
                        const void *rows)
{
    output_tables_write(o->file, name, t, n, rows, o->comm, o->rank, &o->keys);
}
