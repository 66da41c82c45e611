/*
 * results.h - the rows of a sweep file read back as logical rows.
 *
 * A logical row is one point's every column, in column order
 * (output_rows.h): in a file of format 2, its common part from /results
 * and its kind's figures from /parts/KIND, the other columns their fill
 * (NaN, 0, ""; 0 for every number of an invalid:* row); in a file of
 * format 1 (no format_version attribute), the row of /results itself.
 * Rows are returned in the logical row's file type (little-endian,
 * packed: the bytes /digests digests) or converted to a caller's memory
 * type (as H5Dread would convert), so `best`, `point`, the summary, the
 * verification and the tests read every format the same way.
 *
 * Sequential reads (at = the end of the previous read) continue the
 * parts where they were; any other start finds its part rows from the
 * /parts/index entry of the last chunk starting at or before it (a
 * finished file: every entry written), or from the entry of a chunk
 * named by the caller (results_seek_chunk: a resumed file, whose
 * unfinished chunks have none). Nothing here aborts on a damaged or
 * foreign file: every failure is a message (msg), never an HDF5 stack
 * (the callers turn the error stack off). Serial: no MPI.
 */
#ifndef MADSWEEP_RESULTS_H
#define MADSWEEP_RESULTS_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "output_rows.h"

/* One stored table of rows and the spans that place its columns. */
typedef struct results_table {
    hid_t d, type;   /* the dataset and its file type */
    size_t size;     /* bytes per row */
    int64_t rows;    /* extent */
    int nspan;
    output_span span[TABLE_MAX_COLS]; /* from: own offset, to: logical */
    char *buf;       /* rows read */
    int64_t cap;
} results_table;

typedef struct results {
    hid_t file;
    int format;            /* 1 or 2 */
    hid_t ltype;           /* the logical row's file type */
    hid_t units_owner;     /* the object with the logical row's `units` */
    size_t lsize;
    results_table common;
    int nparts;
    results_table part[OUTPUT_NKINDS];
    char part_name[OUTPUT_NKINDS][TABLE_NAME_MAX];
    int8_t *part_of;       /* [nmodels * ntasks]: part of their rows, -1 */
    int64_t nmodels, ntasks;
    size_t model_off, task_off, status_off; /* in a logical row */
    size_t cmodel, ctask;  /* in a /results row */
    hid_t index;           /* /parts/index (-1 without parts) */
    int64_t nindex;
    char fill[OUTPUT_ROW_MAX]; /* a logical row of fills (data rows) */
    /* per part p + 1 (0: a row without one), the spans of the logical row
     * no table of such a row stores (from, to: the same offset) */
    int ngap[OUTPUT_NKINDS + 1];
    output_span gap[OUTPUT_NKINDS + 1][TABLE_MAX_COLS + 1];
    int64_t next;          /* the row the parts are positioned at */
    int64_t pos[OUTPUT_NKINDS];
    char *conv;            /* results_read_as: rows being converted */
    size_t conv_size;
    /* the rows of the last fetch: per row its part (-1) and its row in
     * that part's buffer */
    int64_t fetched, fcap;
    int8_t *fpart;
    int64_t *fk;
} results;

/* Opens the rows of file f (after its shape was checked, verify.h):
 * 0, or -1 with msg set (a newer format, missing or mismatched parts). */
int results_open(results *r, hid_t f, char *msg, size_t size);
void results_close(results *r);

/* Reads rows [at, at + n) as stored: r->common.buf holds their /results
 * rows (in /results' own type), the parts' buffers their part rows;
 * results_digest_row folds fetched row i as stored (its /results row,
 * then its part row: the bytes /digests digests). 0, or -1 with msg set
 * when the file does not read or its parts do not add up. */
int results_fetch(results *r, int64_t at, int64_t n, char *msg, size_t size);
uint64_t results_digest_row(const results *r, uint64_t d, int64_t i);

/* Rows [at, at + n) of /results (at + n <= r->common.rows) as logical
 * rows in the file type (n * r->lsize bytes at buf); 0, or -1 with msg
 * set when the file does not read or its parts do not add up. */
int results_read(results *r, int64_t at, int64_t n, void *buf, char *msg, size_t size);

/* The same rows converted to the compound memory type mtype (members
 * matched by name, H5Tconvert, with buf as the background: a member of
 * mtype the rows lack keeps buf's bytes, as H5Dread keeps them); buf
 * holds n * H5Tget_size(mtype) bytes. */
int results_read_as(results *r, int64_t at, int64_t n, hid_t mtype, void *buf, char *msg,
                    size_t size);

/* Positions the parts at the first row of chunk c from its /parts/index
 * entry (which must be written); *row: that row. 0, or -1 with msg. */
int results_seek_chunk(results *r, int64_t c, int64_t *row, char *msg, size_t size);

/* The /parts/index entry of chunk c: its first row and the part rows
 * before it (pos[nparts]); 0, or -1 when it does not read. Files without
 * parts have none (-1). */
int results_index_entry(const results *r, int64_t c, int64_t *row, int64_t *pos);

/* The part of fetched row i, -1 for none (also for a row whose indices
 * lie outside the axes). */
int results_part_of(const results *r, int64_t i);

#endif
