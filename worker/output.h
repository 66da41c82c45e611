/*
 * output.h - the sweep's HDF5 file, written in parallel through MPI-IO.
 *
 * Layout (all fixed-width, no variable-length data):
 *   /results        compound, one row per valid point in id order:
 *                   id, status (status_code: 0 ok, 1..99 infeasible),
 *                   model_idx .. strategy_idx (index on every axis),
 *                   devices, dense_plan, emb_plan (the concrete plans;
 *                   in the detailed fidelity dense_plan holds the
 *                   parallel degrees, "tp8 sp pp8 v5 dp16 cp1 ep1", and
 *                   emb_plan the other options, "zero1 sel 1f1b-int ovl
 *                   tcdp"; see detailed_parallel_text),
 *                   then every figure of result_fields[] (as in
 *                   `madsweep eval --json`). Chunked, allocated at creation
 *                   to its exact length (the valid count), never filled.
 *   /progress       uint8 per work chunk: 1 once the chunk's rows are
 *                   written (written after the rows and the digest: a
 *                   set byte implies both are in the file).
 *   /digests        uint64 per work chunk: the digest of its rows as
 *                   stored (worker/digest.h); readers check it
 *                   (worker/verify.h). Every table below carries an
 *                   attribute `digest` of its bytes.
 *   /axes/model, /axes/system, /axes/task, /axes/global_batch,
 *   /axes/strategy  one row per axis value (names and key figures; the
 *                   model, system, task and strategy tables have the
 *                   fidelity's columns: detailed systems name their
 *                   hardware generation, scale-up domain and bandwidths,
 *                   detailed strategies are each auto candidate's text
 *                   with dp* for the rest of the devices);
 *   /axes/status    every status code with its name and explanation;
 *   /skipped        per INVALID code, how many ids of the space break it.
 *   root attributes spec_text, spec_path, tool_version,
 *                   cost_model_version, fidelity, ranks, start_time,
 *                   end_time, elapsed_s, evals_per_s, points_total,
 *                   points_valid, points_invalid, points_evaluated,
 *                   chunk_ids, chunks, complete (0 until the sweep is
 *                   finished; the last write before closing).
 * Every table (/results, each /axes table, /skipped) has an attribute
 * `units`: one string per member of its compound type, in member order
 * ("s", "bytes", "samples/s", "1" for plain counts and ratios, "text",
 * "index into /axes/model", ...; figures take result_fields[]' units).
 * Everything run-dependent (ranks, times, rates) is an attribute, so the
 * datasets of two runs of one spec are byte-identical. After --resume the
 * run attributes (ranks, times, elapsed_s, evals_per_s) describe the run
 * that finished the file; points_evaluated counts every row written.
 * The file is created in two steps: output_create() right after the
 * spec is loaded (root attributes, complete = 0, points_valid -1: a
 * sweep stopped from then on leaves a file that --resume takes up), and
 * output_layout() after the check pass (the datasets). The HDF5 1.10
 * format is used: its metadata carries checksums.
 * Rows and progress bytes are written with independent MPI-IO transfers
 * (dynamic scheduling gives ranks different numbers of chunks); all
 * metadata operations are collective with identical arguments.
 */
#ifndef MADSWEEP_OUTPUT_H
#define MADSWEEP_OUTPUT_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "../driver/space.h"
#include "table.h"

#define OUTPUT_PLAN_WIDTH 32
#define OUTPUT_SPEC_MAX 60000 /* bytes of spec text (attribute size limit) */

/* The row layout of /results with the offsets the packer needs. */
typedef struct output_rows {
    table t;
    size_t id, status, idx[SPACE_NAXES], devices;
    const table_col *dense, *emb;
    size_t field[TABLE_MAX_COLS]; /* offset of result_fields[i] */
} output_rows;

void output_rows_init(output_rows *r);

/* Packs one row (buf must hold r->t.size bytes). `dense` and `emb` are
 * the plans as plan_format() writes them, or NULL to format them here
 * (callers cache the text: it depends only on system and strategy). */
void output_pack(const output_rows *r, char *buf, int64_t id,
                 const int64_t idx[SPACE_NAXES], const point_t *p,
                 const result_t *res, const char *dense, const char *emb);

/* The dense_plan and emb_plan texts of a point (each `size` bytes). */
void output_plan_texts(const point_t *p, char *dense, char *emb, size_t size);

/* Root attributes. Strings are copied into the file. */
typedef struct output_meta {
    const char *spec_text, *spec_path;
    const char *start_time, *end_time;
    const char *fidelity, *cost_version;
    int64_t ranks, total, valid, invalid, evaluated, chunk, nchunks;
    double elapsed_s, evals_per_s;
    int64_t complete;
} output_meta;

typedef struct output {
    hid_t file, results, progress, digests;
    hid_t mtype;
    int rank;
    const char *path; /* the caller's, for messages */
} output;

/* Creates (truncates) the file with its root attributes (complete = 0)
 * and flushes it. Collective. Returns 0, or -1 with msg set (same on
 * every rank). */
int output_create(output *o, MPI_Comm comm, const char *path,
                  const output_meta *m, char *msg, size_t msize);

/* Adds the datasets, axis tables and attributes to a created (or a
 * reopened, still empty) file and flushes it. Collective. */
void output_layout(output *o, const space *s, const output_rows *r,
                   const int64_t *by_code, const output_meta *m);

/* Reopens a sweep file to resume it: checks that it holds the same spec
 * text, tool and cost-model versions (msg names the first difference);
 * *has_layout tells whether output_layout() ran on it (else it was
 * stopped before its check pass ended). Collective; 0, or -1 with msg. */
int output_open(output *o, MPI_Comm comm, const char *path,
                const output_meta *m, int *has_layout, char *msg,
                size_t msize);

/* After output_open() with a layout: checks the space and row layout,
 * reads /progress into done[nchunks] and *complete. Collective; 0, or
 * -1 with msg set (the file stays open: output_close it). */
int output_resume(output *o, MPI_Comm comm, const char *path,
                  const output_rows *r, const output_meta *m, uint8_t *done,
                  int64_t *complete, char *msg, size_t msize);

/* Independent writes: rows [row0, row0 + n), then the chunk's digest
 * and progress byte. */
void output_write_rows(output *o, int64_t row0, int64_t n, const void *buf);
void output_mark_done(output *o, int64_t chunk, uint64_t digest);

/* Collective: rewrites the run attributes (complete last) and flushes. */
void output_set_meta(output *o, const output_meta *m);

/* Collective close. */
void output_close(output *o);

#endif
