/*
 * table.c - packed compound layouts (see table.h).
 */
#include "table.h"

#include <string.h>

#include "check.h"

void table_init(table *t)
{
    memset(t, 0, sizeof *t);
}

static size_t table_width(table_kind k, size_t len)
{
    switch (k) {
    case TABLE_I32:
        return 4;
    case TABLE_I64:
    case TABLE_F64:
        return 8;
    default:
        return len;
    }
}

size_t table_add(table *t, const char *name, table_kind kind, size_t len)
{
    if (t->ncols >= TABLE_MAX_COLS || strlen(name) >= TABLE_NAME_MAX)
        check_die("table: too many columns or name too long", __FILE__,
                  __LINE__);
    table_col *c = &t->col[t->ncols++];
    memcpy(c->name, name, strlen(name) + 1);
    c->kind = kind;
    c->len = table_width(kind, len);
    c->off = t->size;
    t->size += c->len;
    return c->off;
}

const table_col *table_find(const table *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->col[i].name, name) == 0)
            return &t->col[i];
    return NULL;
}

static hid_t table_type(const table *t, int native)
{
    hid_t ct = CHECK_H5ID(H5Tcreate(H5T_COMPOUND, t->size));
    for (int i = 0; i < t->ncols; i++) {
        const table_col *c = &t->col[i];
        hid_t mt = -1;
        switch (c->kind) {
        case TABLE_I32:
            mt = CHECK_H5ID(H5Tcopy(native ? H5T_NATIVE_INT32 : H5T_STD_I32LE));
            break;
        case TABLE_I64:
            mt = CHECK_H5ID(H5Tcopy(native ? H5T_NATIVE_INT64 : H5T_STD_I64LE));
            break;
        case TABLE_F64:
            mt = CHECK_H5ID(H5Tcopy(native ? H5T_NATIVE_DOUBLE : H5T_IEEE_F64LE));
            break;
        case TABLE_STR:
            mt = CHECK_H5ID(H5Tcopy(H5T_C_S1));
            CHECK_H5(H5Tset_size(mt, c->len));
            CHECK_H5(H5Tset_strpad(mt, H5T_STR_NULLPAD));
            break;
        }
        CHECK_H5(H5Tinsert(ct, c->name, c->off, mt));
        CHECK_H5(H5Tclose(mt));
    }
    return ct;
}

hid_t table_mtype(const table *t)
{
    return table_type(t, 1);
}

hid_t table_ftype(const table *t)
{
    return table_type(t, 0);
}

void table_put_str(char *row, const table_col *c, const char *s)
{
    size_t n = strlen(s);
    if (n > c->len - 1)
        n = c->len - 1;
    memset(row + c->off, 0, c->len);
    memcpy(row + c->off, s, n);
}
