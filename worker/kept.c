/*
 * kept.c - checkpoint slots and the /groups table of reduced sweeps (see
 * kept.h). Tables are built with table.h and written by rank 0 through
 * output_table_write, so they carry units like every table of the file.
 */
#include "kept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "check.h"

#define KEPT_HW_NAME 64

/* Layout of a groups table: key columns, evaluated, one per status code,
 * kept. */
typedef struct kept_groups_t {
    table t;
    size_t key[SPEC_KEEP_GROUP];
    const table_col *hw;
    size_t eval, code[REDUCE_MAX_CODES], kept;
} kept_groups_t;

static void kept_groups_layout(const reduce *r, kept_groups_t *g)
{
    memset(g, 0, sizeof *g);
    table_init(&g->t);
    for (int j = 0; j < r->k->ngroup; j++) {
        int key = r->k->group[j];
        char name[TABLE_NAME_MAX];
        if (key < SPACE_NAXES) {
            snprintf(name, sizeof name, "%s_idx",
                     key == SPACE_BATCH ? "batch" : space_axis_names[key]);
            g->key[j] = table_add(&g->t, name, TABLE_I32, 0);
        } else if (key == SPEC_KEY_HARDWARE) {
            g->key[j] = table_add(&g->t, "hardware", TABLE_STR, KEPT_HW_NAME);
            g->hw = table_find(&g->t, "hardware");
        } else {
            g->key[j] = table_add(&g->t, spec_key_name((spec_key)key), TABLE_I64, 0);
        }
    }
    g->eval = table_add(&g->t, "evaluated", TABLE_I64, 0);
    for (int i = 0; i < r->ncodes; i++) {
        char name[TABLE_NAME_MAX];
        snprintf(name, sizeof name, "%s", status_name((status_code)r->codes[i]));
        for (char *p = name; *p; p++)
            if (*p == ':' || *p == '-')
                *p = '_';
        g->code[i] = table_add(&g->t, name, TABLE_I64, 0);
    }
    g->kept = table_add(&g->t, "kept", TABLE_I64, 0);
}

/* The rows of the groups table (rank 0's counts); malloc'ed. */
static char *kept_groups_rows(const reduce *r, const kept_groups_t *g, const int64_t *kept)
{
    char *b = calloc((size_t)(r->ngroups > 0 ? r->ngroups : 1), g->t.size);
    if (!b)
        check_die("out of memory for the /groups table", __FILE__, __LINE__);
    for (int64_t x = 0; x < r->ngroups; x++) {
        char *row = b + (size_t)x * g->t.size;
        for (int j = 0; j < r->k->ngroup; j++) {
            int key = r->k->group[j];
            int64_t v = reduce_group_key(r, x, j);
            if (key < SPACE_NAXES)
                table_put_i32(row, g->key[j], (int32_t)v);
            else if (key == SPEC_KEY_HARDWARE)
                table_put_str(row, g->hw, r->hw_names[v]);
            else
                table_put_i64(row, g->key[j], r->values[key][v]);
        }
        const int64_t *c = r->counts + x * r->ncols;
        table_put_i64(row, g->eval, c[0]);
        for (int i = 0; i < r->ncodes; i++)
            table_put_i64(row, g->code[i], c[1 + i]);
        table_put_i64(row, g->kept, kept ? kept[x] : 0);
    }
    return b;
}

/* Layout of the state table: id, group, the figures. */
static void kept_state_layout(const reduce *r, table *t, size_t *o_id, size_t *o_g,
                              size_t *o_v)
{
    table_init(t);
    *o_id = table_add(t, "id", TABLE_I64, 0);
    *o_g = table_add(t, "group", TABLE_I64, 0);
    for (int i = 0; i < r->k->nfig; i++)
        o_v[i] = table_add(t, result_fields[r->k->fig[i]].name, TABLE_F64, 0);
}

void kept_name(char *buf, size_t size, int64_t slot, const char *tab)
{
    snprintf(buf, size, "keep/slot%lld/%s", (long long)slot, tab);
}

static void kept_unlink(output *o, const char *path)
{
    htri_t e = H5Lexists(o->file, path, H5P_DEFAULT);
    CHECK_H5(e);
    if (e > 0)
        CHECK_H5(H5Ldelete(o->file, path, H5P_DEFAULT));
}

/* Layout of the summary table: one row per summary slot. */
static void kept_summary_layout(table *t, size_t *o_id, size_t *o_v)
{
    table_init(t);
    *o_id = table_add(t, "winner_id", TABLE_I64, 0);
    *o_v = table_add(t, "winner_value", TABLE_F64, 0);
}

void kept_checkpoint(output *o, const reduce *r, const space *s, int64_t chunks,
                     int64_t rows, const winners_best *best)
{
    /* /keep and both slot groups are made once, with the first
     * checkpoint (before keep_slot exists): a checkpoint then only
     * unlinks and creates inside its own slot's group, so no object
     * header that links the committed slot is rewritten (HDF5 moves
     * link messages when it condenses a header; a kill between two of
     * its metadata writes lost the committed slot's links when both
     * slots shared /keep's header) */
    static const char *const groups[3] = {"keep", "keep/slot0", "keep/slot1"};
    for (int i = 0; i < 3; i++) {
        htri_t e = H5Lexists(o->file, groups[i], H5P_DEFAULT);
        CHECK_H5(e);
        if (e == 0)
            CHECK_H5(H5Gclose(CHECK_H5ID(H5Gcreate2(o->file, groups[i], H5P_DEFAULT,
                                                    H5P_DEFAULT, H5P_DEFAULT))));
    }
    int64_t slot = -1;
    output_get_i64(o, "keep_slot", &slot);
    slot = slot == 0 ? 1 : 0;
    char sname[32], gname[32], wname[32];
    kept_name(sname, sizeof sname, slot, "state");
    kept_name(gname, sizeof gname, slot, "groups");
    kept_name(wname, sizeof wname, slot, "summary");
    kept_unlink(o, sname);
    kept_unlink(o, gname);
    kept_unlink(o, wname);

    /* entries: rank 0's (every other rank holds none after the merge) */
    table t;
    size_t o_id, o_g, o_v[SPEC_KEEP_FIGS];
    kept_state_layout(r, &t, &o_id, &o_g, o_v);
    int64_t n = 0;
    reduce_entry *ent = reduce_entries(r, &n);
    if (!ent)
        check_die("out of memory for a checkpoint", __FILE__, __LINE__);
    CHECK_MPI(MPI_Bcast(&n, 1, MPI_INT64_T, 0, o->comm));
    char *b = calloc((size_t)(n > 0 ? n : 1), t.size);
    if (!b)
        check_die("out of memory for a checkpoint", __FILE__, __LINE__);
    if (o->rank == 0)
        for (int64_t i = 0; i < n; i++) {
            char *row = b + (size_t)i * t.size;
            table_put_i64(row, o_id, ent[i].id);
            table_put_i64(row, o_g, ent[i].group);
            for (int k = 0; k < r->k->nfig; k++)
                table_put_f64(row, o_v[k], ent[i].v[k]);
        }
    output_table_write(o, sname, &t, n, b);
    free(b);
    free(ent);
    /* what the slot covers, beside its state (read back with it) */
    hid_t d = CHECK_H5ID(H5Dopen2(o->file, sname, H5P_DEFAULT));
    attr_i64(d, "chunks", chunks);
    attr_i64(d, "rows", rows);
    CHECK_H5(H5Dclose(d));

    kept_groups_t g;
    kept_groups_layout(r, &g);
    b = kept_groups_rows(r, &g, NULL);
    output_table_write(o, gname, &g.t, r->ngroups, b);
    free(b);

    /* the summary's winners (the same on every rank: merged) */
    size_t o_wid, o_wv;
    kept_summary_layout(&t, &o_wid, &o_wv);
    int64_t ns = winners_slots(s);
    b = calloc((size_t)(ns > 0 ? ns : 1), t.size);
    if (!b)
        check_die("out of memory for a checkpoint", __FILE__, __LINE__);
    for (int64_t i = 0; i < ns; i++) {
        table_put_i64(b + (size_t)i * t.size, o_wid, best[i].id);
        table_put_f64(b + (size_t)i * t.size, o_wv, best[i].value);
    }
    output_table_write(o, wname, &t, ns, b);
    free(b);
    output_flush(o);
    /* the commit: one write of one existing attribute (after the first
     * checkpoint, made with the layout), so the file names either the
     * old slot or the new one, never a mix */
    output_set_i64(o, "keep_slot", slot);
    output_flush(o);
}

/* Integer attribute `name` of dataset `obj` (-1 when it does not read). */
static int kept_attr(output *o, const char *obj, const char *name, int64_t *v)
{
    htri_t e = H5Aexists_by_name(o->file, obj, name, H5P_DEFAULT);
    if (e <= 0)
        return -1;
    hid_t a = H5Aopen_by_name(o->file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return -1;
    herr_t rc = H5Aread(a, H5T_NATIVE_INT64, v);
    CHECK_H5(H5Aclose(a));
    return rc < 0 ? -1 : 0;
}

int kept_committed(output *o, int64_t *chunks, int64_t *rows)
{
    int64_t slot = -1;
    *chunks = *rows = 0;
    if (output_get_i64(o, "keep_slot", &slot) != 0)
        return 1;
    char sname[32], gname[32];
    kept_name(sname, sizeof sname, slot, "state");
    snprintf(gname, sizeof gname, "keep/slot%lld", (long long)slot);
    if ((slot != 0 && slot != 1) || H5Lexists(o->file, "keep", H5P_DEFAULT) <= 0 ||
        H5Lexists(o->file, gname, H5P_DEFAULT) <= 0 ||
        H5Lexists(o->file, sname, H5P_DEFAULT) <= 0 ||
        kept_attr(o, sname, "chunks", chunks) != 0 ||
        kept_attr(o, sname, "rows", rows) != 0 || *chunks < 0 || *rows < 0)
        return -1;
    return 0;
}

/* Reads dataset `name` whole in the memory layout of t (every rank: the
 * open is a metadata operation, collective in parallel HDF5); returns the
 * row count, -1 on a mismatch. */
static int64_t kept_read(output *o, const char *name, const table *t, char **out)
{
    *out = NULL;
    hid_t d = H5Dopen2(o->file, name, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t sp = CHECK_H5ID(H5Dget_space(d));
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    CHECK_H5(H5Sclose(sp));
    hid_t mt = table_mtype(t);
    *out = calloc((size_t)(n > 0 ? n : 1), t->size);
    if (!*out)
        check_die("out of memory reading a checkpoint", __FILE__, __LINE__);
    herr_t rc = n > 0 ? H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) : 0;
    CHECK_H5(H5Tclose(mt));
    CHECK_H5(H5Dclose(d));
    return rc < 0 ? -1 : (int64_t)n;
}

int kept_restore(output *o, reduce *r, const space *s, int64_t *chunks, int64_t *rows,
                 winners_best *best)
{
    int64_t slot = -1;
    int have = kept_committed(o, chunks, rows);
    if (have != 0)
        return have > 0 ? 0 : -1;
    output_get_i64(o, "keep_slot", &slot);
    int bad = 0;
    {
        /* every rank reads; only rank 0 keeps what it read */
        bool mine = o->rank == 0;
        char sname[32], gname[32];
        kept_name(sname, sizeof sname, slot, "state");
        kept_name(gname, sizeof gname, slot, "groups");
        table t;
        size_t o_id, o_g, o_v[SPEC_KEEP_FIGS];
        kept_state_layout(r, &t, &o_id, &o_g, o_v);
        char *b = NULL;
        int64_t n = kept_read(o, sname, &t, &b);
        bad = n < 0;
        for (int64_t i = 0; i < n; i++) {
            const char *row = b + (size_t)i * t.size;
            reduce_entry e;
            memset(&e, 0, sizeof e);
            e.id = table_get_i64(row, o_id);
            e.group = table_get_i64(row, o_g);
            for (int k = 0; k < r->k->nfig; k++)
                e.v[k] = table_get_f64(row, o_v[k]);
            bad |= e.group < 0 || e.group >= r->ngroups;
            if (!bad && mine)
                reduce_insert(r, &e);
        }
        free(b);
        kept_groups_t g;
        kept_groups_layout(r, &g);
        n = kept_read(o, gname, &g.t, &b);
        bad |= n != r->ngroups;
        for (int64_t x = 0; !bad && mine && x < n; x++) {
            const char *row = b + (size_t)x * g.t.size;
            int64_t *c = r->counts + x * r->ncols;
            c[0] = table_get_i64(row, g.eval);
            for (int i = 0; i < r->ncodes; i++)
                c[1 + i] = table_get_i64(row, g.code[i]);
        }
        free(b);
        /* the summary's winners: every rank (merging them is idempotent) */
        char wname[32];
        kept_name(wname, sizeof wname, slot, "summary");
        size_t o_wid, o_wv;
        kept_summary_layout(&t, &o_wid, &o_wv);
        int64_t ns = winners_slots(s);
        n = kept_read(o, wname, &t, &b);
        bad |= n != ns;
        for (int64_t i = 0; !bad && i < n; i++) {
            best[i].id = table_get_i64(b + (size_t)i * t.size, o_wid);
            best[i].value = table_get_f64(b + (size_t)i * t.size, o_wv);
            bad |= best[i].id < -1;
        }
        free(b);
    }
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, o->comm));
    return any ? -1 : 0;
}

void kept_finish(output *o, const reduce *r, const space *s, const int64_t *kept)
{
    (void)s;
    kept_groups_t g;
    kept_groups_layout(r, &g);
    char *b = kept_groups_rows(r, &g, kept);
    kept_unlink(o, "groups"); /* a resumed finish writes it again */
    output_table_write(o, "groups", &g.t, r->ngroups, b);
    free(b);
}

void kept_drop(output *o)
{
    kept_unlink(o, "keep");
    output_flush(o);
}
