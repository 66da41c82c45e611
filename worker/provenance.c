/*
 * provenance.c - catalogue texts, digests, spec path, command line and
 * commit in the sweep file (see provenance.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "provenance.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "check.h"
#include "digest.h"
#include "h5.h"
#include "madsweep_git_commit.h"
#include "table.h"

#define PROVENANCE_NAME 256
#define PROVENANCE_TEXT_MAX (INT64_C(1) << 30) /* bytes of a stored catalogue, at most */

const char *provenance_commit(void)
{
    return MADSWEEP_GIT_COMMIT;
}

#ifndef MADSWEEP_BUILD_COMPILER
#define MADSWEEP_BUILD_COMPILER "unknown"
#endif

/* What the tool was built with, beside the commit: the MPI library's
 * version string, the HDF5 library (the one running and the headers
 * compiled against) and the compiler with its flags (rank 0's values on
 * every rank: attributes are written collectively). */
static void provenance_build(hid_t file, MPI_Comm comm, int rank)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (rank == 0)
        CHECK_MPI(MPI_Get_library_version(mpi, &len));
    CHECK_MPI(MPI_Bcast(mpi, sizeof mpi, MPI_CHAR, 0, comm));
    mpi[sizeof mpi - 1] = 0;
    for (char *c = mpi + strlen(mpi); c > mpi && (c[-1] == '\n' || c[-1] == ' ');)
        *--c = 0;
    unsigned maj = 0, min = 0, rel = 0;
    CHECK_H5(H5get_libversion(&maj, &min, &rel));
    char h5[128];
    snprintf(h5, sizeof h5, "%u.%u.%u (built against %d.%d.%d, %s)", maj, min, rel,
             H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE,
#ifdef H5_HAVE_PARALLEL
             "parallel"
#else
             "serial"
#endif
    );
    attr_str(file, "build_mpi", mpi);
    attr_str(file, "build_hdf5", h5);
    attr_str(file, "build_compiler", MADSWEEP_BUILD_COMPILER);
}

/* The columns of /provenance/catalogues and their units. */
typedef struct provenance_cols {
    table t;
    const table_col *name, *path, *sha, *text;
    size_t bytes;
} provenance_cols;

static const char *const provenance_units[] = {"text", "text", "text", "bytes", "text"};

static void provenance_cols_init(provenance_cols *c)
{
    table_init(&c->t);
    table_add(&c->t, "name", TABLE_STR, PROVENANCE_NAME);
    table_add(&c->t, "path", TABLE_STR, SOURCES_PATH_MAX);
    table_add(&c->t, "sha256", TABLE_STR, SHA256_HEX_LEN + 1);
    c->bytes = table_add(&c->t, "bytes", TABLE_I64, 0);
    table_add(&c->t, "text", TABLE_STR, 48);
    c->name = table_find(&c->t, "name");
    c->path = table_find(&c->t, "path");
    c->sha = table_find(&c->t, "sha256");
    c->text = table_find(&c->t, "text");
}

static void provenance_units_attr(hid_t d, int n)
{
    enum { W = 16 };
    char u[5][W];
    for (int i = 0; i < n; i++)
        snprintf(u[i], W, "%s", provenance_units[i]);
    attr_strs(d, "units", &u[0][0], n, W);
}

void provenance_write(hid_t file, const provenance *p, MPI_Comm comm, int rank)
{
    const sources *s = p->files;
    hid_t g = CHECK_H5ID(H5Gcreate2(file, "provenance", H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT));
    hid_t gt = CHECK_H5ID(H5Gcreate2(g, "text", H5P_DEFAULT, H5P_DEFAULT,
                                     H5P_DEFAULT));
    provenance_cols c;
    provenance_cols_init(&c);
    char *rows = calloc((size_t)(s->n > 0 ? s->n : 1), c.t.size);
    if (!rows)
        check_die("out of memory", __FILE__, __LINE__);
    for (int i = 0; i < s->n; i++) {
        char *row = rows + (size_t)i * c.t.size;
        char dname[48];
        snprintf(dname, sizeof dname, "/provenance/text/%d", i);
        table_put_str(row, c.name, s->f[i].name);
        table_put_str(row, c.path, s->f[i].path);
        table_put_str(row, c.sha, s->f[i].sha256);
        table_put_i64(row, c.bytes, s->f[i].bytes);
        table_put_str(row, c.text, dname);

        /* the text: a scalar string of its length (NUL-padded) */
        hid_t st = CHECK_H5ID(H5Tcopy(H5T_C_S1));
        CHECK_H5(H5Tset_size(st, (size_t)(s->f[i].bytes > 0 ? s->f[i].bytes : 1)));
        CHECK_H5(H5Tset_strpad(st, H5T_STR_NULLPAD));
        hid_t sp = CHECK_H5ID(H5Screate(H5S_SCALAR));
        char key[16];
        snprintf(key, sizeof key, "%d", i);
        hid_t d = CHECK_H5ID(H5Dcreate2(gt, key, st, sp, H5P_DEFAULT,
                                        H5P_DEFAULT, H5P_DEFAULT));
        h5_write_root(d, st, -1, 1, s->f[i].bytes > 0 ? s->f[i].text : "", rank);
        CHECK_H5(H5Dclose(d));
        CHECK_H5(H5Sclose(sp));
        CHECK_H5(H5Tclose(st));
    }
    hsize_t dims[1] = {(hsize_t)s->n};
    hid_t fs = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t ft = table_ftype(&c.t), mt = table_mtype(&c.t);
    hid_t d = CHECK_H5ID(H5Dcreate2(g, "catalogues", ft, fs, H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT));
    provenance_units_attr(d, c.t.ncols);
    /* rank 0's digest of the rows (verify.h checks it, and each text
     * against the row's sha256) */
    h5_attr_digest(d, rows, (size_t)s->n * c.t.size, comm, rank);
    if (s->n > 0)
        h5_write_root(d, mt, 0, s->n, rows, rank);
    CHECK_H5(H5Dclose(d));
    CHECK_H5(H5Tclose(ft));
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Sclose(fs));
    free(rows);
    CHECK_H5(H5Gclose(gt));
    CHECK_H5(H5Gclose(g));

    char sha[SHA256_HEX_LEN + 1];
    sha256_hex(p->spec_text, strlen(p->spec_text), sha);
    attr_str(file, "spec_abspath", p->spec_abspath);
    attr_str(file, "spec_sha256", sha);
    attr_str(file, "command_line", p->command_line);
    attr_str(file, "git_commit", provenance_commit());
    provenance_build(file, comm, rank);
}

void provenance_note_resume(hid_t file, const provenance *p)
{
    attr_str(file, "resume_command_line", p->command_line);
    attr_str(file, "resume_git_commit", provenance_commit());
}

/* Rows of /provenance/catalogues (malloc'ed, *n of them); NULL when the
 * file has none or they do not read. */
static char *provenance_rows(hid_t file, const provenance_cols *c, hssize_t *n, int *absent)
{
    *n = 0;
    *absent = H5Lexists(file, "provenance", H5P_DEFAULT) <= 0 ||
              H5Lexists(file, "provenance/catalogues", H5P_DEFAULT) <= 0;
    if (*absent)
        return NULL;
    hid_t d = H5Dopen2(file, "provenance/catalogues", H5P_DEFAULT);
    if (d < 0)
        return NULL;
    hid_t fs = H5Dget_space(d);
    *n = fs >= 0 ? H5Sget_simple_extent_npoints(fs) : -1;
    char *rows = *n >= 0 ? calloc((size_t)(*n > 0 ? *n : 1), c->t.size) : NULL;
    hid_t mt = table_mtype(&c->t);
    if (rows && *n > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
        free(rows);
        rows = NULL;
    }
    CHECK_H5(H5Tclose(mt));
    if (fs >= 0)
        H5Sclose(fs);
    H5Dclose(d);
    return rows;
}

static void provenance_str(const char *row, const table_col *c, char *buf, size_t size)
{
    size_t n = c->len < size ? c->len : size - 1;
    memcpy(buf, row + c->off, n);
    buf[n] = '\0';
}

int provenance_compare(hid_t file, const provenance *p, char *why, size_t size)
{
    provenance_cols c;
    provenance_cols_init(&c);
    hssize_t n = 0;
    int absent = 0;
    char *rows = provenance_rows(file, &c, &n, &absent);
    if (!rows) {
        snprintf(why, size, absent ? "it records no catalogues (written "
                 "before provenance was stored)" : "its catalogue records "
                 "do not read");
        return -1;
    }
    const sources *s = p->files;
    int rc = 0;
    for (hssize_t i = 0; i < n && rc == 0; i++) {
        const char *row = rows + (size_t)i * c.t.size;
        char name[PROVENANCE_NAME + 1], sha[SHA256_HEX_LEN + 2];
        provenance_str(row, c.name, name, sizeof name);
        provenance_str(row, c.sha, sha, sizeof sha);
        const source_file *f = sources_find(s, name);
        if (!f) {
            snprintf(why, size, "the spec no longer reads catalogue %s, which "
                     "the file's rows were computed from", name);
            rc = -1;
        } else if (strcmp(f->sha256, sha) != 0) {
            snprintf(why, size, "catalogue %s changed since the sweep started "
                     "(%s: sha256 %.12s..., the file recorded %.12s...)", name,
                     f->path, f->sha256, sha);
            rc = -1;
        }
    }
    for (int k = 0; k < s->n && rc == 0; k++) {
        bool found = false;
        for (hssize_t i = 0; i < n && !found; i++) {
            char name[PROVENANCE_NAME + 1];
            provenance_str(rows + (size_t)i * c.t.size, c.name, name, sizeof name);
            found = strcmp(name, s->f[k].name) == 0;
        }
        if (!found) {
            snprintf(why, size, "the spec now reads catalogue %s, which the "
                     "file does not record", s->f[k].name);
            rc = -1;
        }
    }
    free(rows);
    return rc;
}

int provenance_read(hid_t file, sources *s)
{
    memset(s, 0, sizeof *s);
    provenance_cols c;
    provenance_cols_init(&c);
    hssize_t n = 0;
    int absent = 0;
    char *rows = provenance_rows(file, &c, &n, &absent);
    if (!rows)
        return absent ? 1 : -1;
    s->f = calloc((size_t)(n > 0 ? n : 1), sizeof *s->f);
    if (!s->f) {
        free(rows);
        return -1;
    }
    int rc = 0;
    for (hssize_t i = 0; i < n && rc == 0; i++) {
        const char *row = rows + (size_t)i * c.t.size;
        source_file *f = &s->f[i];
        char dname[49];
        provenance_str(row, c.name, f->name, sizeof f->name);
        provenance_str(row, c.path, f->path, sizeof f->path);
        provenance_str(row, c.sha, f->sha256, sizeof f->sha256);
        provenance_str(row, c.text, dname, sizeof dname);
        f->bytes = table_get_i64(row, c.bytes);
        f->text = calloc((size_t)f->bytes + 2, 1);
        s->n++;
        hid_t d = f->text ? H5Dopen2(file, dname, H5P_DEFAULT) : -1;
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, (size_t)(f->bytes > 0 ? f->bytes : 1));
        H5Tset_strpad(st, H5T_STR_NULLPAD);
        if (d < 0 || H5Dread(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, f->text) < 0)
            rc = -1;
        else
            f->text[f->bytes] = '\0';
        H5Tclose(st);
        if (d >= 0)
            H5Dclose(d);
        char sha[SHA256_HEX_LEN + 1];
        if (rc == 0) {
            sha256_hex(f->text, (size_t)f->bytes, sha);
            if (strcmp(sha, f->sha256) != 0)
                rc = -1; /* the stored text is not what was hashed */
        }
    }
    free(rows);
    if (rc != 0)
        sources_free(s);
    return rc;
}

/* The `digest` attribute of dataset d (0), or -1 when absent or unreadable. */
static int provenance_digest_attr(hid_t d, uint64_t *v)
{
    if (H5Aexists(d, "digest") <= 0)
        return -1;
    hid_t a = H5Aopen(d, "digest", H5P_DEFAULT);
    int rc = a >= 0 && H5Aread(a, H5T_NATIVE_UINT64, v) >= 0 ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

/* The stored text `dname` of `bytes` bytes hashes to `sha`? (0: yes) */
static int provenance_text_matches(hid_t file, const char *dname, int64_t bytes,
                             const char *sha)
{
    if (bytes < 0 || bytes > PROVENANCE_TEXT_MAX ||
        strncmp(dname, "/provenance/text/", 17) != 0)
        return -1;
    char *text = calloc((size_t)bytes + 2, 1);
    hid_t d = text ? H5Dopen2(file, dname, H5P_DEFAULT) : -1;
    hid_t st = H5Tcopy(H5T_C_S1);
    int rc = -1;
    if (d >= 0 && st >= 0 && H5Tset_size(st, (size_t)(bytes > 0 ? bytes : 1)) >= 0 &&
        H5Tset_strpad(st, H5T_STR_NULLPAD) >= 0 &&
        H5Dread(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, text) >= 0) {
        char got[SHA256_HEX_LEN + 1];
        sha256_hex(text, (size_t)bytes, got);
        rc = strcmp(got, sha) == 0 ? 0 : -1;
    }
    if (st >= 0)
        H5Tclose(st);
    if (d >= 0)
        H5Dclose(d);
    free(text);
    return rc;
}

int provenance_verify(hid_t file, char *why, size_t size)
{
    provenance_cols c;
    provenance_cols_init(&c);
    hssize_t n = 0;
    int absent = 0;
    char *rows = provenance_rows(file, &c, &n, &absent);
    if (!rows) {
        if (absent)
            return 1;
        snprintf(why, size, "/provenance/catalogues does not read (damaged)");
        return -1;
    }
    hid_t d = H5Dopen2(file, "provenance/catalogues", H5P_DEFAULT);
    uint64_t want = 0;
    int rc = d >= 0 && provenance_digest_attr(d, &want) == 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    if (rc != 0 || digest_bytes(rows, (size_t)n * c.t.size) != want) {
        snprintf(why, size, "/provenance/catalogues fails its checksum (the "
                 "file is corrupted)");
        free(rows);
        return -1;
    }
    for (hssize_t i = 0; i < n && rc == 0; i++) {
        const char *row = rows + (size_t)i * c.t.size;
        char name[PROVENANCE_NAME + 1], sha[SHA256_HEX_LEN + 2], dname[49];
        provenance_str(row, c.name, name, sizeof name);
        provenance_str(row, c.sha, sha, sizeof sha);
        provenance_str(row, c.text, dname, sizeof dname);
        if (provenance_text_matches(file, dname, table_get_i64(row, c.bytes), sha) != 0) {
            snprintf(why, size, "the stored text of catalogue %s does not match "
                     "its recorded sha256 (the file is corrupted)", name);
            rc = -1;
        }
    }
    free(rows);
    return rc;
}
