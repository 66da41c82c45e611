/*
 * table.h - packed row layouts and their HDF5 compound types.
 *
 * A table is an ordered list of columns (int32, int64, float64 or a
 * fixed-width NUL-padded string) packed without padding, so a row is a
 * byte string that is identical on every rank for the same values.
 * table_mtype() gives the native memory type, table_ftype() the fixed
 * little-endian file type with the same member names and offsets; HDF5
 * converts between them (a no-op on little-endian hosts). Rows are built
 * with table_put_*() into zeroed buffers, so padding bytes are zeros.
 */
#ifndef MADSWEEP_TABLE_H
#define MADSWEEP_TABLE_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TABLE_MAX_COLS 160
#define TABLE_NAME_MAX 48

typedef enum table_kind { TABLE_I32, TABLE_I64, TABLE_F64, TABLE_STR } table_kind;

typedef struct table_col {
    char name[TABLE_NAME_MAX];
    table_kind kind;
    size_t len; /* bytes */
    size_t off;
} table_col;

typedef struct table {
    table_col col[TABLE_MAX_COLS];
    int ncols;
    size_t size; /* bytes per row */
} table;

void table_init(table *t);

/* Appends a column; returns its offset. `len` is the string width for
 * TABLE_STR and ignored otherwise. Aborts (check_die) when full. */
size_t table_add(table *t, const char *name, table_kind kind, size_t len);

/* Column by name, or NULL. */
const table_col *table_find(const table *t, const char *name);

/* HDF5 compound types (caller closes with H5Tclose). */
hid_t table_mtype(const table *t);
hid_t table_ftype(const table *t);

static inline void table_put_i64(char *row, size_t off, int64_t v)
{
    memcpy(row + off, &v, sizeof v);
}

static inline void table_put_i32(char *row, size_t off, int32_t v)
{
    memcpy(row + off, &v, sizeof v);
}

static inline void table_put_f64(char *row, size_t off, double v)
{
    memcpy(row + off, &v, sizeof v);
}

/* Copies s (truncated to len - 1 bytes, NUL-padded) into the column. */
void table_put_str(char *row, const table_col *c, const char *s);

static inline int64_t table_get_i64(const char *row, size_t off)
{
    int64_t v;
    memcpy(&v, row + off, sizeof v);
    return v;
}

static inline int32_t table_get_i32(const char *row, size_t off)
{
    int32_t v;
    memcpy(&v, row + off, sizeof v);
    return v;
}

static inline double table_get_f64(const char *row, size_t off)
{
    double v;
    memcpy(&v, row + off, sizeof v);
    return v;
}

#endif
