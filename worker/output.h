/*
 * output.h - the sweep's HDF5 file, written in parallel through MPI-IO.
 *
 * Layout (all fixed-width, no variable-length data):
 *   /results        compound, one row per valid point in id order:
 *                   id, status (status_code: 0 ok, 1..99 infeasible),
 *                   model_idx .. strategy_idx, stack_idx (index on
 *                   every axis),
 *                   devices, the strategy (MAD-Max: dense_plan and
 *                   emb_plan, the concrete plans "fsdp:8,ddp:256";
 *                   detailed: the columns tp, pp, dp, cp, ep, vpp,
 *                   zero_stage, micro_batch, sp, then the texts
 *                   schedule ("none" without pipeline, "1f1b",
 *                   "1f1b-interleaved", "gpipe"), recompute ("none",
 *                   "selective", "full"), layout ("tp-cp-dp-pp",
 *                   innermost first; "" for a DLRM), overlap ("dp",
 *                   "tp", "dp+tp", "none") and emb_sharding ("table",
 *                   "row", "column"; "" for an LLM), and stack (the
 *                   software stack's name, as /axes/stack names it)),
 *                   then every figure of result_fields[] (as in
 *                   `madsweep eval --json`; NaN where not computed).
 *                   Chunked, allocated after the count pass to its exact
 *                   length (every id is a valid point: row i is point i),
 *                   never filled.
 *   /progress       uint8 per work chunk: 1 once the chunk's rows are
 *                   written (written after the rows and the digest: a
 *                   set byte implies both are in the file).
 *   /digests        uint64 per work chunk: the digest of the chunk's rows
 *                   as stored (worker/digest.h): its rows of /results,
 *                   those whose ids lie in the chunk (for reduced sweeps
 *                   the rows it kept, none: the digest of no rows);
 *                   readers check it (worker/verify.h).
 *   /chunk_starts   int64 per work chunk and one more: the first id of
 *                   every chunk, then points_valid (the cost-based cut of
 *                   worker/chunks.h, so that a reader finds the chunk of
 *                   an id without the spec).
 *   /axes/model, /axes/system, /axes/task, /axes/global_batch,
 *   /axes/strategy  one row per axis value (names and key figures; the
 *                   model, system, task and strategy tables have the
 *                   fidelity's columns: detailed systems name their
 *                   hardware generation, scale-up domain and bandwidths
 *                   (NIC also as nic_gbps_per_device),
 *                   detailed strategies are each auto candidate's text
 *                   with dp* for the rest of the devices);
 *   /axes/stack     name and summary of each software stack (madmax:
 *                   one row "none");
 *   /axes/status    every status code with its name and explanation;
 *   /skipped        per status code, how many combinations of the axes
 *                   the enumeration left out (invalid:*, infeasible:shape).
 *   /groups         reduced sweeps (keep other than "all"): one row per
 *                   group, its key values, points evaluated, per status
 *                   code, and kept; /results then holds the kept rows in
 *                   id order. While such a sweep runs, /keep holds its
 *                   checkpoints (worker/kept.h).
 *   root attributes spec_text, spec_path, tool_version,
 *                   cost_model_version, fidelity, ranks, start_time,
 *                   end_time, elapsed_s, evals_per_s, points_total,
 *                   points_valid, points_invalid, points_evaluated,
 *                   chunk_ids, chunks, keep (the keep mode), rows_kept,
 *                   count_s, peak_rss_bytes (largest rank), reduced
 *                   sweeps: reduce_syncs, reduce_merge_s, reduce_final_s,
 *                   reduce_root_s (rank 0's root-only work); complete (0
 *                   until the sweep is finished; the last write).
 *   /provenance     the text and SHA-256 of every catalogue read (the
 *                   stacks catalogue among them), the absolute spec path,
 *                   command line and build commit (provenance.h).
 * Every table (/results, each /axes table, /skipped, /groups, the
 * checkpoints of /keep) has an attribute `units`: one string per member
 * of its compound type, in member order
 * ("s", "bytes", "samples/s", "1" for plain counts and ratios, "text",
 * "index into /axes/model", ...; figures take result_fields[]' units).
 * Everything run-dependent (ranks, times, rates) is an attribute, so the
 * datasets of two runs of one spec are byte-identical. After --resume the
 * run attributes (ranks, times, elapsed_s, evals_per_s) describe the run
 * that finished the file; points_evaluated counts every row written.
 * Every table written whole (each /axes table, /skipped, /groups, /keep,
 * /chunk_starts, /provenance/catalogues) also has an attribute `digest`,
 * the digest of its bytes. The file is created in two steps:
 * output_create() before the count pass (root attributes with complete =
 * 0 and points_valid = -1, axis tables, provenance: a sweep stopped or
 * killed from then on leaves a file that --resume takes up) and
 * output_layout() after it (the datasets sized by the count). The HDF5
 * 1.10 format is used: its metadata carries checksums, so damage to the
 * file's structure fails to open or to read.
 * Rows and progress bytes are written with independent MPI-IO transfers
 * (dynamic scheduling gives ranks different numbers of chunks); all
 * metadata operations are collective with identical arguments.
 */
#ifndef MADSWEEP_OUTPUT_H
#define MADSWEEP_OUTPUT_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "provenance.h"
#include "space.h"
#include "table.h"

#define OUTPUT_PLAN_WIDTH 32
#define OUTPUT_TEXT_WIDTH 20 /* detailed strategy text columns */
#define OUTPUT_NSTRAT_INT 9
#define OUTPUT_NSTRAT_STR 5
#define OUTPUT_SPEC_MAX 60000 /* bytes of spec text (attribute size limit) */

/* The row layout of /results (it depends on the fidelity) with the
 * offsets the packer needs. */
typedef struct output_rows {
    table t;
    eval_fidelity fidelity;
    size_t id, status, idx[SPACE_NAXES], devices;
    const table_col *dense, *emb;                    /* madmax */
    size_t strat_int[OUTPUT_NSTRAT_INT];             /* detailed */
    const table_col *strat_str[OUTPUT_NSTRAT_STR];
    const table_col *stack;                          /* detailed */
    const table_col *bound;  /* bound_by: the name of result bound_code */
    size_t field[TABLE_MAX_COLS]; /* offset of result_fields[i] */
} output_rows;

void output_rows_init(output_rows *r, eval_fidelity fidelity);

/* The texts of a row that depend only on system and strategy (callers
 * cache them): MAD-Max plans as plan_format() writes them; the detailed
 * layout and overlap. */
typedef struct output_texts {
    char dense[OUTPUT_PLAN_WIDTH], emb[OUTPUT_PLAN_WIDTH];
    char layout[OUTPUT_TEXT_WIDTH], overlap[OUTPUT_TEXT_WIDTH];
} output_texts;

void output_texts_of(const point_t *p, output_texts *x);

/* Packs one row (buf must hold r->t.size bytes); `texts` from
 * output_texts_of(), or NULL to format them here. */
void output_pack(const output_rows *r, char *buf, int64_t id,
                 const int64_t idx[SPACE_NAXES], const point_t *p,
                 const result_t *res, const output_texts *texts);

/* Root attributes. Strings are copied into the file. */
typedef struct output_meta {
    const char *spec_text, *spec_path;
    const char *start_time, *end_time;
    const char *fidelity, *cost_version;
    int64_t ranks, total, valid, invalid, evaluated, chunk, nchunks;
    double elapsed_s, evals_per_s;
    int64_t complete;
    const provenance *prov; /* catalogues, paths, commit (provenance.h) */
} output_meta;

typedef struct output {
    MPI_Comm comm;
    hid_t file, results, progress, digests;
    hid_t mtype;
    int rank;
    const char *path; /* the caller's, for messages */
} output;

/* Creates (truncates) the file with its axis tables, provenance and
 * attributes (complete = 0) and flushes it: the file exists before the
 * count pass. The caller has claimed the path (worker/claim.h).
 * Collective. Returns 0, or -1 with msg set (same on every rank). */
int output_create(output *o, MPI_Comm comm, const char *path, const space *s,
                  const output_meta *m, char *msg, size_t msize);

/* After the count pass: /results with `rows` rows (keep = "all": one per
 * id; reduced sweeps, `grow`: 0, extended when rows are known, in smaller
 * chunks), /progress (all chunks to do), /digests, /chunk_starts
 * (chunk_lo[0 .. m->nchunks]), /skipped (by_code) and the attributes.
 * Collective. */
void output_layout(output *o, const output_rows *r, int64_t rows, bool grow,
                   const int64_t *by_code, const int64_t *chunk_lo,
                   const output_meta *m);

/* Reopens a sweep file to resume it: checks that it is a sweep file
 * whose root group and datasets read (all of /results, /progress,
 * /digests and /chunk_starts, or none of them before its layout), that
 * it holds the same spec text, tool and cost-model versions and, its
 * stored catalogues intact (verify_provenance), the same catalogue files
 * (by digest, m->prov: msg names the changed catalogue; the space is
 * compared after the count pass, output_reopen_layout), notes the
 * resuming run (provenance_note_resume) and reads *complete. Collective;
 * returns 0, or -1 with msg set. */
int output_open(output *o, MPI_Comm comm, const char *path,
                const output_meta *m, int64_t *complete, char *msg, size_t msize);

/* After the count pass of a resumed run: returns 1 when the file has no
 * layout yet (stopped or killed while counting: the caller calls
 * output_layout), 0 when its layout matches this space (its counts and
 * /chunk_starts equal chunk_lo[0 .. m->nchunks]; done[nchunks] read from
 * /progress), or -1 with msg set when it does not. Collective. */
int output_reopen_layout(output *o, const output_rows *r, const output_meta *m,
                         const int64_t *chunk_lo, uint8_t *done, char *msg,
                         size_t msize);

/* Independent writes: rows [row0, row0 + n); the chunk's digest, then its
 * progress byte; digests [c0, c0 + n) (reduced sweeps). A failed write (a
 * full file system, a quota, a failing disk) is a message naming the
 * file, what was written and, when the file system says so, that it is
 * full; then every rank is aborted (check.h), the file left resumable. */
void output_write_rows(output *o, int64_t row0, int64_t n, const void *buf);
void output_mark_done(output *o, int64_t chunk, uint64_t digest);
void output_write_digests(output *o, int64_t c0, int64_t n, const uint64_t *d);

/* For reduced sweeps (worker/kept.h). output_table_write: a small table
 * written by rank 0 with its units (collective; deflated when large).
 * output_set_* / output_get_i64: root attributes (set: collective;
 * get: -1 when absent or not an integer). output_results_grow: /results holds at
 * least `rows` rows (collective; never shrinks it: in parallel HDF5 a
 * shrink can leave a stale copy of the edge chunk that is written back
 * over rows written later). output_write_rows_all: collective write of rows [row0,
 * row0 + n) (n may be 0). output_mark_range: progress bytes [c0, c1) set
 * (collective, written by rank 0). output_flush: collective flush. */
void output_table_write(output *o, const char *name, const table *t, int64_t n,
                        const void *rows);
void output_set_i64(output *o, const char *name, int64_t v);
void output_set_f64(output *o, const char *name, double v);
int output_get_i64(output *o, const char *name, int64_t *v);
void output_set_str(output *o, const char *name, const char *v);
void output_results_grow(output *o, int64_t rows);
void output_write_rows_all(output *o, int64_t row0, int64_t n, const void *buf);
void output_mark_range(output *o, int64_t c0, int64_t c1);
void output_flush(output *o);

/* Collective: rewrites the run attributes (complete last) and flushes. */
void output_set_meta(output *o, const output_meta *m);

/* Collective close. */
void output_close(output *o);

#endif
