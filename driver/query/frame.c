/*
 * frame.c - the columns of a finished sweep file (see frame.h).
 *
 * Invariant after frame_open(): the file passed verify_file() (its
 * counts, tables, provenance and every chunk's rows against their
 * digests: a damaged file is refused before a byte is read as data);
 * every column's offset lies inside its table's converted row; axis
 * tables are read whole (they are small: one row per axis value),
 * /results only in blocks.
 */
#include "frame.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../worker/check.h"
#include "../../worker/verify.h"
#include "../suggest.h"

/* A member of a file table as a candidate column. */
typedef struct frame_member {
    char name[FRAME_NAME_MAX];
    char unit[FRAME_UNIT_MAX];
    frame_kind kind;
    size_t off, len;
} frame_member;

/* The `units` attribute of d: nu strings of uw bytes (NULL if absent). */
static char *frame_units(hid_t d, size_t *uw, hssize_t *nu)
{
    *uw = 0;
    *nu = 0;
    if (H5Aexists(d, "units") <= 0)
        return NULL;
    hid_t a = CHECK_H5ID(H5Aopen(d, "units", H5P_DEFAULT));
    hid_t at = CHECK_H5ID(H5Aget_type(a)), as = CHECK_H5ID(H5Aget_space(a));
    size_t w = H5Tget_size(at);
    hssize_t n = H5Sget_simple_extent_npoints(as);
    char *units = calloc((size_t)(n > 0 ? n : 1), w + 1);
    hid_t mt = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(mt, w + 1));
    if (units && H5Aread(a, mt, units) < 0)
        n = 0;
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Sclose(as));
    CHECK_H5(H5Tclose(at));
    CHECK_H5(H5Aclose(a));
    *uw = w + 1;
    *nu = units ? n : 0;
    return units;
}

/* The members of compound type ft (its `units` on object uo) that are
 * columns, the converted memory type and row size. *members is
 * malloc'ed (*n of them). Closes ft. */
static int frame_members_of(hid_t ft, hid_t uo, frame_table *t, frame_member **members,
                            int *n)
{
    if (ft < 0 || H5Tget_class(ft) != H5T_COMPOUND) {
        if (ft >= 0)
            H5Tclose(ft);
        return -1;
    }
    int nm = H5Tget_nmembers(ft);
    frame_member *m = calloc((size_t)(nm > 0 ? nm : 1), sizeof *m);
    size_t uw = 0;
    hssize_t nu = 0;
    char *units = frame_units(uo, &uw, &nu);
    if (!m)
        check_die("out of memory", __FILE__, __LINE__);
    int k = 0;
    size_t size = 0;
    for (int i = 0; i < nm; i++) {
        H5T_class_t cls = H5Tget_member_class(ft, (unsigned)i);
        hid_t mt = CHECK_H5ID(H5Tget_member_type(ft, (unsigned)i));
        size_t len = 8;
        frame_kind kind;
        if (cls == H5T_INTEGER)
            kind = FRAME_INT;
        else if (cls == H5T_FLOAT)
            kind = FRAME_NUM;
        else if (cls == H5T_STRING && H5Tis_variable_str(mt) == 0) {
            kind = FRAME_STR;
            len = H5Tget_size(mt) + 1;
        } else {
            CHECK_H5(H5Tclose(mt));
            continue;
        }
        CHECK_H5(H5Tclose(mt));
        char *name = H5Tget_member_name(ft, (unsigned)i);
        if (!name || strlen(name) >= FRAME_NAME_MAX) {
            H5free_memory(name);
            continue;
        }
        snprintf(m[k].name, FRAME_NAME_MAX, "%s", name);
        H5free_memory(name);
        if (units && i < nu)
            snprintf(m[k].unit, FRAME_UNIT_MAX, "%s", units + (size_t)i * uw);
        m[k].kind = kind;
        m[k].off = size;
        m[k].len = len;
        size += len;
        k++;
    }
    t->size = size > 0 ? size : 1;
    t->mtype = CHECK_H5ID(H5Tcreate(H5T_COMPOUND, t->size));
    for (int j = 0; j < k; j++) {
        hid_t mt;
        if (m[j].kind == FRAME_INT)
            mt = CHECK_H5ID(H5Tcopy(H5T_NATIVE_INT64));
        else if (m[j].kind == FRAME_NUM)
            mt = CHECK_H5ID(H5Tcopy(H5T_NATIVE_DOUBLE));
        else {
            mt = CHECK_H5ID(H5Tcopy(H5T_C_S1));
            CHECK_H5(H5Tset_size(mt, m[j].len));
            CHECK_H5(H5Tset_strpad(mt, H5T_STR_NULLTERM));
        }
        CHECK_H5(H5Tinsert(t->mtype, m[j].name, m[j].off, mt));
        CHECK_H5(H5Tclose(mt));
    }
    free(units);
    CHECK_H5(H5Tclose(ft));
    *members = m;
    *n = k;
    return 0;
}

/* The members of dataset d that are columns (frame_members_of). */
static int frame_members(hid_t d, frame_table *t, frame_member **members, int *n)
{
    return frame_members_of(H5Dget_type(d), d, t, members, n);
}

static void frame_add(frame *f, const char *name, const frame_member *m,
                      frame_source src, int axis)
{
    if (f->ncols == f->ccap) {
        int cap = f->ccap ? 2 * f->ccap : 64;
        frame_col *nc = realloc(f->cols, (size_t)cap * sizeof *nc);
        if (!nc)
            check_die("out of memory", __FILE__, __LINE__);
        f->cols = nc;
        f->ccap = cap;
    }
    frame_col *c = &f->cols[f->ncols++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    if (m) {
        snprintf(c->unit, sizeof c->unit, "%s", m->unit);
        c->kind = m->kind;
        c->off = m->off;
        c->len = m->len;
    } else {
        c->kind = FRAME_STR;
        snprintf(c->unit, sizeof c->unit, "text");
    }
    c->src = src;
    c->axis = axis;
}

static const frame_member *frame_member_of(const frame_member *m, int n,
                                           const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(m[i].name, name) == 0)
            return &m[i];
    return NULL;
}

/* Reads table `path` whole into a (rows malloc'ed). */
static int frame_read_axis(hid_t file, const char *path, frame_axis *a,
                           frame_member **m, int *nm)
{
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    if (d < 0)
        return -1;
    int rc = frame_members(d, &a->t, m, nm);
    if (rc == 0) {
        hid_t sp = CHECK_H5ID(H5Dget_space(d));
        a->n = H5Sget_simple_extent_npoints(sp);
        CHECK_H5(H5Sclose(sp));
        a->rows = calloc((size_t)(a->n > 0 ? a->n : 1), a->t.size);
        if (!a->rows)
            check_die("out of memory", __FILE__, __LINE__);
        if (a->n > 0 &&
            H5Dread(d, a->t.mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, a->rows) < 0)
            rc = -1;
    }
    CHECK_H5(H5Dclose(d));
    return rc;
}

static void frame_status_names(frame *f)
{
    memset(f->status_names, 0, sizeof f->status_names);
    if (H5Lexists(f->file, "axes/status", H5P_DEFAULT) <= 0)
        return;
    frame_axis a;
    memset(&a, 0, sizeof a);
    frame_member *m = NULL;
    int nm = 0;
    if (frame_read_axis(f->file, "axes/status", &a, &m, &nm) == 0) {
        const frame_member *code = frame_member_of(m, nm, "code");
        const frame_member *name = frame_member_of(m, nm, "name");
        for (int64_t i = 0; code && name && i < a.n; i++) {
            const char *row = a.rows + (size_t)i * a.t.size;
            int64_t v;
            memcpy(&v, row + code->off, sizeof v);
            if (v >= 0 && v < 256)
                snprintf(f->status_names[v], sizeof f->status_names[v], "%s",
                         row + name->off);
        }
    }
    free(a.rows);
    free(m);
    if (a.t.mtype > 0)
        CHECK_H5(H5Tclose(a.t.mtype));
}

/* Axis tables: /axes/X joined by /results column X_idx. */
static void frame_axes(frame *f, const frame_member *rm, int nrm)
{
    if (H5Lexists(f->file, "axes", H5P_DEFAULT) <= 0)
        return;
    hid_t g = CHECK_H5ID(H5Gopen2(f->file, "axes", H5P_DEFAULT));
    H5G_info_t info;
    CHECK_H5(H5Gget_info(g, &info));
    frame_member *am[FRAME_MAX_AXES] = {0};
    int anm[FRAME_MAX_AXES] = {0};
    for (hsize_t i = 0; i < info.nlinks && f->naxes < FRAME_MAX_AXES; i++) {
        char name[FRAME_NAME_MAX], idx[FRAME_NAME_MAX + 8], path[FRAME_NAME_MAX + 8];
        ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_CRT_ORDER, H5_ITER_INC,
                                         i, name, sizeof name, H5P_DEFAULT);
        if (len < 0)
            len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name,
                                     sizeof name, H5P_DEFAULT);
        if (len < 0 || (size_t)len >= sizeof name || strcmp(name, "status") == 0)
            continue;
        snprintf(idx, sizeof idx, "%s_idx",
                 strcmp(name, "global_batch") == 0 ? "batch" : name);
        const frame_member *ic = frame_member_of(rm, nrm, idx);
        if (!ic || ic->kind != FRAME_INT)
            continue;
        frame_axis *a = &f->axes[f->naxes];
        memset(a, 0, sizeof *a);
        snprintf(a->name, sizeof a->name, "%s", name);
        a->idx_off = ic->off;
        snprintf(path, sizeof path, "axes/%s", name);
        if (frame_read_axis(f->file, path, a, &am[f->naxes], &anm[f->naxes]) != 0) {
            free(a->rows);
            free(am[f->naxes]);
            am[f->naxes] = NULL;
            continue;
        }
        f->naxes++;
    }
    CHECK_H5(H5Gclose(g));

    /* the value's name: column X */
    for (int x = 0; x < f->naxes; x++) {
        frame_axis *a = &f->axes[x];
        const frame_member *nm = frame_member_of(am[x], anm[x], "name");
        if (!nm)
            nm = frame_member_of(am[x], anm[x], "text");
        if (!nm)
            nm = frame_member_of(am[x], anm[x], a->name);
        if (nm && !frame_member_of(rm, nrm, a->name))
            frame_add(f, a->name, nm, FRAME_AXIS, x);
    }
    /* every member as M when the name is unambiguous, and as X.M */
    for (int x = 0; x < f->naxes; x++)
        for (int i = 0; i < anm[x]; i++) {
            const frame_member *m = &am[x][i];
            int uses = 0;
            for (int y = 0; y < f->naxes; y++)
                uses += frame_member_of(am[y], anm[y], m->name) != NULL;
            bool generic = strcmp(m->name, "name") == 0 || strcmp(m->name, "text") == 0;
            if (uses == 1 && !generic && !frame_member_of(rm, nrm, m->name) &&
                !frame_find(f, m->name, NULL, 0))
                frame_add(f, m->name, m, FRAME_AXIS, x);
            char q[2 * FRAME_NAME_MAX];
            snprintf(q, sizeof q, "%s.%s", f->axes[x].name, m->name);
            if (strlen(q) < FRAME_NAME_MAX && !frame_find(f, q, NULL, 0))
                frame_add(f, q, m, FRAME_AXIS, x);
        }
    for (int x = 0; x < f->naxes; x++)
        free(am[x]);
}

/* An integer attribute (0), or -1 when absent, damaged or of another
 * kind. */
static int frame_int_attr(hid_t f, const char *name, int64_t *v)
{
    if (H5Aexists(f, name) <= 0)
        return -1;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a);
    int rc = t >= 0 && H5Tget_class(t) == H5T_INTEGER &&
                     H5Aread(a, H5T_NATIVE_INT64, v) >= 0
                 ? 0
                 : -1;
    if (t >= 0)
        H5Tclose(t);
    H5Aclose(a);
    return rc;
}

int frame_open(frame *f, const char *path, char *msg, size_t size)
{
    memset(f, 0, sizeof *f);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* what the file is before HDF5 looks (issue 29: a missing file, a
     * directory and the empty file of a sweep stopped while loading its
     * spec were all "not an HDF5 file") */
    struct stat fs;
    if (stat(path, &fs) != 0) {
        snprintf(msg, size, "cannot open %s: %s", path, strerror(errno));
        return 1;
    }
    if (S_ISDIR(fs.st_mode)) {
        snprintf(msg, size, "cannot open %s: it is a directory, not a sweep file", path);
        return 1;
    }
    if (S_ISREG(fs.st_mode) && fs.st_size == 0) {
        snprintf(msg, size, "%s is empty: a sweep stopped before it wrote anything "
                 "(`madsweep sweep SPEC -o %s --resume` starts it)", path, path);
        return 1;
    }
    f->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f->file < 0) {
        snprintf(msg, size, "cannot open %s: not an HDF5 file, or truncated or "
                 "corrupted", path);
        return 1;
    }
    if (H5Aexists(f->file, "complete") <= 0 ||
        H5Lexists(f->file, "results", H5P_DEFAULT) <= 0) {
        snprintf(msg, size, "%s is not a madsweep sweep file", path);
        frame_close(f);
        return 1;
    }
    int64_t complete = -1;
    if (frame_int_attr(f->file, "complete", &complete) != 0) {
        snprintf(msg, size, "%s: its attribute 'complete' is not an integer "
                 "(corrupted?)", path);
        frame_close(f);
        return 1;
    }
    if (complete != 1) {
        snprintf(msg, size, "%s is an unfinished sweep (complete = 0); finish "
                 "it with `madsweep sweep SPEC --resume -o %s`", path, path);
        frame_close(f);
        return 1;
    }
    char vmsg[VERIFY_MSG];
    if (verify_file(f->file, vmsg, sizeof vmsg) != 0) {
        snprintf(msg, size, "%s is corrupted or not a madsweep sweep file: %s", path,
                 vmsg);
        frame_close(f);
        return 1;
    }
    if (H5Aexists(f->file, "fidelity") > 0) {
        hid_t a = CHECK_H5ID(H5Aopen(f->file, "fidelity", H5P_DEFAULT));
        hid_t at = CHECK_H5ID(H5Aget_type(a));
        if (H5Tget_class(at) == H5T_STRING && H5Tis_variable_str(at) == 0 &&
            H5Tget_size(at) < sizeof f->fidelity) {
            hid_t mt = CHECK_H5ID(H5Tcopy(H5T_C_S1));
            CHECK_H5(H5Tset_size(mt, sizeof f->fidelity));
            CHECK_H5(H5Aread(a, mt, f->fidelity));
            CHECK_H5(H5Tclose(mt));
        }
        CHECK_H5(H5Tclose(at));
        CHECK_H5(H5Aclose(a));
    }
    f->res = malloc(sizeof *f->res);
    if (!f->res || results_open(f->res, f->file, vmsg, sizeof vmsg) != 0) {
        snprintf(msg, size, "%s: its rows do not read: %s", path,
                 f->res ? vmsg : "out of memory");
        free(f->res);
        f->res = NULL;
        frame_close(f);
        return 1;
    }
    frame_member *rm = NULL;
    int nrm = 0;
    if (frame_members_of(H5Tcopy(f->res->ltype), f->res->units_owner, &f->t, &rm, &nrm) !=
        0) {
        snprintf(msg, size, "%s: /results is not a table", path);
        frame_close(f);
        return 1;
    }
    f->nrows = f->res->common.rows;
    for (int i = 0; i < nrm; i++)
        frame_add(f, rm[i].name, &rm[i], FRAME_RESULTS, -1);
    frame_axes(f, rm, nrm);
    frame_status_names(f);
    const frame_member *st = frame_member_of(rm, nrm, "status");
    if (st && st->kind == FRAME_INT && !frame_find(f, "status_name", NULL, 0)) {
        frame_add(f, "status_name", NULL, FRAME_STATUS, -1);
        f->cols[f->ncols - 1].off = st->off;
    }
    free(rm);
    return 0;
}

void frame_close(frame *f)
{
    for (int x = 0; x < f->naxes; x++) {
        free(f->axes[x].rows);
        if (f->axes[x].t.mtype > 0)
            H5Tclose(f->axes[x].t.mtype);
    }
    free(f->cols);
    if (f->t.mtype > 0)
        H5Tclose(f->t.mtype);
    if (f->res) {
        results_close(f->res);
        free(f->res);
    }
    if (f->file >= 0)
        H5Fclose(f->file);
    memset(f, 0, sizeof *f);
    f->file = -1;
}

const frame_col *frame_find(const frame *f, const char *name, char *msg,
                            size_t size)
{
    for (int i = 0; i < f->ncols; i++)
        if (strcmp(f->cols[i].name, name) == 0)
            return &f->cols[i];
    if (msg) {
        suggest s;
        suggest_init(&s, name);
        for (int i = 0; i < f->ncols; i++)
            suggest_offer(&s, f->cols[i].name);
        char hint[SUGGEST_NAME_MAX + 32];
        snprintf(msg, size, "unknown column '%s'%s (the columns of this file: "
                 "`madsweep best FILE --columns`)", name,
                 suggest_hint(&s, hint, sizeof hint));
    }
    return NULL;
}

void frame_read(const frame *f, int64_t at, int64_t n, char *buf)
{
    char why[600];
    if (n > 0 && results_read_as(f->res, at, n, f->t.mtype, buf, why, sizeof why) != 0)
        check_die(why, __FILE__, __LINE__); /* the file passed verify_file */
}

/* The row of the table that holds c's value for /results row `row`. */
static const char *frame_row_of(const frame *f, const frame_col *c,
                                const char *row)
{
    if (c->src != FRAME_AXIS)
        return row;
    const frame_axis *a = &f->axes[c->axis];
    int64_t i;
    memcpy(&i, row + a->idx_off, sizeof i);
    if (i < 0 || i >= a->n)
        return NULL;
    return a->rows + (size_t)i * a->t.size;
}

int64_t frame_int(const frame *f, const frame_col *c, const char *row)
{
    const char *r = frame_row_of(f, c, row);
    if (!r)
        return 0;
    if (c->kind == FRAME_NUM) {
        double v;
        memcpy(&v, r + c->off, sizeof v);
        return (int64_t)v;
    }
    int64_t v;
    memcpy(&v, r + c->off, sizeof v);
    return v;
}

double frame_num(const frame *f, const frame_col *c, const char *row)
{
    const char *r = frame_row_of(f, c, row);
    if (!r || c->kind == FRAME_STR)
        return (double)NAN;
    if (c->kind == FRAME_INT) {
        int64_t v;
        memcpy(&v, r + c->off, sizeof v);
        return (double)v;
    }
    double v;
    memcpy(&v, r + c->off, sizeof v);
    return v;
}

const char *frame_str(const frame *f, const frame_col *c, const char *row)
{
    if (c->src == FRAME_STATUS) {
        int64_t code;
        memcpy(&code, row + c->off, sizeof code);
        return code >= 0 && code < 256 && f->status_names[code][0]
                   ? f->status_names[code]
                   : "unknown";
    }
    const char *r = frame_row_of(f, c, row);
    return r && c->kind == FRAME_STR ? r + c->off : "";
}

const char *frame_text(const frame *f, const frame_col *c, const char *row,
                       bool exact, char *buf, size_t size)
{
    if (c->kind == FRAME_STR || c->src == FRAME_STATUS)
        snprintf(buf, size, "%s", frame_str(f, c, row));
    else if (c->kind == FRAME_INT)
        snprintf(buf, size, "%lld", (long long)frame_int(f, c, row));
    else {
        double v = frame_num(f, c, row);
        if (isnan(v))
            snprintf(buf, size, "nan");
        else
            snprintf(buf, size, exact ? "%.17g" : "%.6g", v);
    }
    return buf;
}
