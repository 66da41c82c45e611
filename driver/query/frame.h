/*
 * frame.h - a finished sweep file seen as one table of named columns.
 *
 * The columns are read from the file, never from this build's tables, so
 * a column added to /results or to an /axes table is a column here
 * without any change:
 *   - every member of the /results compound type, by its name (id,
 *     status, devices, every figure, ...);
 *   - for every axis table /axes/X that /results indexes (column X_idx;
 *     batch_idx for global_batch): the axis value's name as column X
 *     (its `name` member, or `text` for strategies; skipped when /results
 *     already has a column X, as for global_batch), and each other member
 *     M as "X.M", also as plain "M" when no /results column and no other
 *     axis table has that name (hardware, nic_gbps_per_device, tp...);
 *   - status_name, the status code's name from /axes/status.
 * /results means the file's logical rows (worker/results.h: in a file of
 * format 2, /results joined with the part of each row's kind).
 * Integers (any width) are read as int64, floats as double, fixed-length
 * strings as NUL-terminated text; other member types are not columns.
 * Units come from the `units` attributes. Rows are read in blocks in a
 * layout of this module (frame_read); values are taken from a row with
 * frame_num / frame_str. Serial: the file is opened without MPI-IO.
 */
#ifndef MADSWEEP_FRAME_H
#define MADSWEEP_FRAME_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../worker/results.h"

#define FRAME_NAME_MAX 96
#define FRAME_UNIT_MAX 64
#define FRAME_MAX_AXES 8

typedef enum frame_kind { FRAME_INT, FRAME_NUM, FRAME_STR } frame_kind;

typedef enum frame_source {
    FRAME_RESULTS,   /* a member of /results */
    FRAME_AXIS,      /* a member of the axis table of `axis` */
    FRAME_STATUS     /* the status code's name */
} frame_source;

typedef struct frame_col {
    char name[FRAME_NAME_MAX];
    char unit[FRAME_UNIT_MAX];
    frame_kind kind;
    frame_source src;
    int axis;      /* FRAME_AXIS: index into frame.axes */
    size_t off;    /* in the converted row (of /results or of the axis) */
    size_t len;    /* FRAME_STR: bytes including the NUL */
} frame_col;

/* A table (/results or an axis) in the converted layout. */
typedef struct frame_table {
    hid_t mtype;
    size_t size;   /* bytes per converted row */
} frame_table;

typedef struct frame_axis {
    char name[FRAME_NAME_MAX];
    frame_table t;
    char *rows;          /* all of it */
    int64_t n;
    size_t idx_off;      /* its *_idx column in the /results row */
} frame_axis;

typedef struct frame {
    hid_t file;
    results *res;        /* the logical rows (malloc'ed: frame_read reads) */
    frame_table t;       /* /results */
    int64_t nrows;
    frame_col *cols;
    int ncols, ccap;
    frame_axis axes[FRAME_MAX_AXES];
    int naxes;
    char status_names[256][40]; /* by code; "" when unknown */
    char fidelity[32];
} frame;

/* Opens a finished sweep file (complete = 1) and verifies it whole
 * (worker/verify.h: a truncated, corrupted or foreign file is reported
 * as such, never read; this reads the file once more). Returns 0, 1
 * with msg set when it cannot be read, is damaged or is not a finished
 * sweep file. */
int frame_open(frame *f, const char *path, char *msg, size_t size);
void frame_close(frame *f);

/* Column by name, or NULL with msg naming the closest column ("did you
 * mean") when `msg` is not NULL. */
const frame_col *frame_find(const frame *f, const char *name, char *msg,
                            size_t size);

/* Reads rows [at, at + n) into buf (n * f->t.size bytes). */
void frame_read(const frame *f, int64_t at, int64_t n, char *buf);

/* The value of c in row `row` of /results (joined through the axes). */
double frame_num(const frame *f, const frame_col *c, const char *row);
int64_t frame_int(const frame *f, const frame_col *c, const char *row);
const char *frame_str(const frame *f, const frame_col *c, const char *row);

/* The value as text: numbers with 17 significant digits when `exact`,
 * else 6; NaN as "nan". Returns buf. */
const char *frame_text(const frame *f, const frame_col *c, const char *row,
                       bool exact, char *buf, size_t size);

#endif
