/*
 * output.h - the sweep's HDF5 file, written in parallel through MPI-IO:
 * its lifecycle (create, lay out, reopen to resume, close), attributes
 * and the writes of rows and per-chunk data.
 *
 * Layout, file format 2 (root attribute format_version; every dataset
 * fixed-width, no variable-length data):
 *   /results        the common part of every row (output_rows.h): one row
 *                   per valid point in id order: id, status (status_code:
 *                   0 ok, 1..99 infeasible), the *_idx index on every
 *                   axis, devices, the strategy, bound_by, and the figures
 *                   every kind of row of the spec carries. Chunked,
 *                   allocated after the count pass to its exact length
 *                   (every id is a valid point: row i is point i), never
 *                   filled.
 *   /parts/row      a committed compound datatype: the logical row, every
 *                   column in column order (format 1's /results row),
 *                   with attributes `units` and `fill` (the rule for a
 *                   column a row's tables do not store: output_rows.h).
 *   /parts/kind_of  per (model, task): the kind of their rows (training,
 *                   serving, serving_disagg, dlrm).
 *   /parts/KIND     the figures a kind carries beyond /results, one row
 *                   per row of that kind, in row order (only kinds with
 *                   figures of their own).
 *   /parts/index    (when there is a part) per work chunk: `row`, the
 *                   rows of /results before the chunk's first (keep =
 *                   "all": its first id), and per part the part rows
 *                   before it: a reader finds the part rows of row r from
 *                   the last entry at or before r (written with the
 *                   chunk, before its progress byte).
 *   /progress       uint8 per work chunk: 1 once the chunk's rows are
 *                   written (written after the rows, the part rows, the
 *                   index entry and the digest: a set byte implies all
 *                   are in the file).
 *   /digests        uint64 per work chunk: the digest of the chunk's rows
 *                   as stored (worker/digest.h; row by row its /results
 *                   row, then its part row), those whose ids lie in the
 *                   chunk (for reduced sweeps the rows it kept, none: the
 *                   digest of no rows); readers check it (worker/verify.h).
 *   /chunk_starts   int64 per work chunk and one more: the first id of
 *                   every chunk, then points_valid (the cost-based cut of
 *                   worker/chunks.h, so that a reader finds the chunk of
 *                   an id without the spec).
 *   /axes/..., /skipped  the small tables (worker/output_tables.h).
 *   /groups         reduced sweeps (keep other than "all"): one row per
 *                   group, its key values, points evaluated, per status
 *                   code, and kept; /results then holds the kept rows in
 *                   id order (and the parts theirs). While such a sweep
 *                   runs, /keep holds its checkpoints (worker/kept.h).
 *   root attributes format_version (2), spec_text, spec_path,
 *                   tool_version, cost_model_version, fidelity, ranks,
 *                   start_time, end_time, elapsed_s, evals_per_s,
 *                   points_total, points_valid, points_invalid,
 *                   points_evaluated, chunk_ids, chunks, keep (the keep
 *                   mode), rows_kept, count_s, peak_rss_bytes (largest
 *                   rank), reduced sweeps: reduce_syncs, reduce_merge_s,
 *                   reduce_final_s, reduce_root_s (rank 0's root-only
 *                   work); complete (0 until the sweep is finished; the
 *                   last write).
 *   /provenance     the text and SHA-256 of every catalogue read (the
 *                   stacks catalogue among them), the absolute spec path,
 *                   command line and build commit (provenance.h).
 * Format 1 (no format_version: madsweep before the parts) held the whole
 * logical row in /results; readers read both (worker/results.h), a
 * --resume of a format-1 file is refused.
 * Every table has an attribute `units`: one string per member of its
 * compound type, in member order ("s", "bytes", "samples/s", "1" for
 * plain counts and ratios, "text", "index into /axes/model", ...).
 * Everything run-dependent (ranks, times, rates) is an attribute, so the
 * datasets of two runs of one spec are byte-identical. After --resume the
 * run attributes (ranks, times, elapsed_s, evals_per_s) describe the run
 * that finished the file; points_evaluated counts every row written.
 * Every table written whole (each /axes table, /skipped, /groups, /keep,
 * /chunk_starts, /parts/kind_of, /provenance/catalogues) also has an
 * attribute `digest`, the digest of its bytes. The file is created in two
 * steps: output_create() before the count pass (root attributes with
 * complete = 0 and points_valid = -1, axis tables, provenance: a sweep
 * stopped or killed from then on leaves a file that --resume takes up)
 * and output_layout() after it (the datasets sized by the count). The
 * HDF5 1.10 format is used: its metadata carries checksums, so damage to
 * the file's structure fails to open or to read.
 * Rows and progress bytes of keep = "all" are written with independent
 * MPI-IO transfers (dynamic scheduling gives ranks different numbers of
 * chunks); all metadata operations are collective with identical
 * arguments.
 */
#ifndef MADSWEEP_OUTPUT_H
#define MADSWEEP_OUTPUT_H

#include <hdf5.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "output_rows.h"
#include "provenance.h"
#include "space.h"
#include "table.h"

#define OUTPUT_FORMAT_VERSION 2
#define OUTPUT_SPEC_MAX 60000  /* bytes of spec text (attribute size limit) */

/* Root attributes. Strings are copied into the file. */
typedef struct output_meta {
    const char *spec_text, *spec_path;
    const char *start_time, *end_time;
    const char *fidelity, *cost_version;
    int64_t ranks, total, valid, invalid, evaluated, chunk, nchunks;
    double elapsed_s, evals_per_s;
    int64_t complete;
    const provenance *prov; /* catalogues, paths, commit (provenance.h) */
    /* the units of the input keys that are columns of the file (a model's
     * layers, a system's nodes, ...): the driver's key table's, which
     * outlive the output (output_rows_unit) */
    output_units key_units;
} output_meta;

typedef struct output {
    MPI_Comm comm;
    hid_t file, results, progress, digests;
    hid_t mtype;                        /* of /results' rows */
    hid_t part[OUTPUT_NKINDS];          /* /parts/KIND, by part */
    hid_t part_mtype[OUTPUT_NKINDS];
    hid_t index, index_mtype;           /* /parts/index (0 without parts) */
    const output_rows *rows;            /* the layout (output_layout, reopen) */
    int rank;
    output_units keys; /* output_meta.key_units */
    const char *path; /* the caller's, for messages */
    char *scratch;    /* a piece of rows split into its tables */
    size_t scratch_size;
} output;

/* Creates (truncates) the file with its axis tables, provenance and
 * attributes (complete = 0) and flushes it: the file exists before the
 * count pass. The caller has claimed the path (worker/claim.h).
 * Collective. Returns 0, or -1 with msg set (same on every rank). */
int output_create(output *o, MPI_Comm comm, const char *path, const space *s,
                  const output_meta *m, char *msg, size_t msize);

/* After the count pass: /results with `rows` rows (keep = "all": one per
 * id; reduced sweeps, `grow`: 0, extended when rows are known, in smaller
 * chunks), /parts of the planned layout r (output_rows_plan; its part
 * datasets and index empty until output_grow), /progress (all chunks to
 * do), /digests, /chunk_starts (chunk_lo[0 .. m->nchunks]), /skipped
 * (by_code) and the attributes. Collective. */
void output_layout(output *o, const output_rows *r, int64_t rows, bool grow,
                   const int64_t *by_code, const int64_t *chunk_lo,
                   const output_meta *m);

/* Reopens a sweep file to resume it: checks that it is a sweep file of
 * this format whose root group and datasets read (all of /results,
 * /progress, /digests and /chunk_starts, or none of them before its
 * layout), that it holds the same spec text, tool and cost-model
 * versions and, its stored catalogues intact (verify_provenance), the
 * same catalogue files (by digest, m->prov: msg names the changed
 * catalogue; the space is compared after the count pass,
 * output_reopen_layout), notes the resuming run (provenance_note_resume)
 * and reads *complete. Collective; returns 0, or -1 with msg set. */
int output_open(output *o, MPI_Comm comm, const char *path,
                const output_meta *m, int64_t *complete, char *msg, size_t msize);

/* After the count pass of a resumed run: returns 1 when the file has no
 * layout yet (stopped or killed while counting: the caller calls
 * output_layout), 0 when its layout matches this space and the planned
 * rows r (its counts and /chunk_starts equal chunk_lo[0 .. m->nchunks],
 * the types of /results and every part r's; done[nchunks] read from
 * /progress), or -1 with msg set when it does not. Collective. */
int output_reopen_layout(output *o, const output_rows *r, const output_meta *m,
                         const int64_t *chunk_lo, uint8_t *done, char *msg,
                         size_t msize);

/* Collective: /results holds at least `rows` rows and part p at least
 * part_rows[p] (part_rows may be NULL: the parts as they are; never
 * shrinks: in parallel HDF5 a shrink can leave a stale copy of the edge
 * chunk that is written back over rows written later). */
void output_grow(output *o, int64_t rows, const int64_t *part_rows);

/* Writes n packed logical rows as rows [row0, row0 + n) of /results and
 * their part rows at part_pos[p] in each part p (the part rows before
 * row0; NULL without parts); `collective`: every rank calls (n may be 0),
 * else independent. output_write_index: the /parts/index entries of
 * chunks [c0, c0 + n), ent[i * (1 + nparts) ...] = the chunk's first row,
 * then its part rows before it (nothing without parts).
 * A failed write (a full file system, a quota, a failing disk) is a
 * message naming the file, what was written and, when the file system
 * says so, that it is full; then every rank is aborted (check.h), the
 * file left resumable. */
void output_write_rows(output *o, int64_t row0, int64_t n, const void *rows,
                       const int64_t *part_pos, bool collective);
void output_write_index(output *o, int64_t c0, int64_t n, const int64_t *ent,
                        bool collective);

/* The /parts/index entry of chunk c into ent[1 + nparts] (independent
 * read); 0, or -1 without parts or when it does not read. */
int output_read_index(output *o, int64_t c, int64_t *ent);

/* Independent writes: the chunk's digest, then its progress byte;
 * digests [c0, c0 + n) (reduced sweeps). Failures as above. */
void output_mark_done(output *o, int64_t chunk, uint64_t digest);
void output_write_digests(output *o, int64_t c0, int64_t n, const uint64_t *d);

/* For reduced sweeps (worker/kept.h). output_table_write: a small table
 * written by rank 0 with its units (output_tables_write). output_set_* /
 * output_get_i64: root attributes (set: collective; get: -1 when absent
 * or not an integer). output_mark_range: progress bytes [c0, c1) set
 * (collective, written by rank 0). output_flush: collective flush. */
void output_table_write(output *o, const char *name, const table *t, int64_t n,
                        const void *rows);
void output_set_i64(output *o, const char *name, int64_t v);
void output_set_f64(output *o, const char *name, double v);
int output_get_i64(output *o, const char *name, int64_t *v);
void output_set_str(output *o, const char *name, const char *v);
void output_mark_range(output *o, int64_t c0, int64_t c1);
void output_flush(output *o);

/* Collective: rewrites the run attributes (complete last) and flushes. */
void output_set_meta(output *o, const output_meta *m);

/* Collective close. */
void output_close(output *o);

#endif
