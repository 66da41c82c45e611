/*
 * output_tables.h - the small tables of a sweep file, written whole:
 *   /axes/model, /axes/system, /axes/task, /axes/global_batch,
 *   /axes/strategy  one row per axis value (names and key figures; the
 *                   model, system, task and strategy tables have the
 *                   fidelity's columns: detailed systems name their
 *                   hardware generation, scale-up domain and bandwidths
 *                   (NIC also as nic_gbps_per_device), detailed
 *                   strategies are each auto candidate's text with dp*
 *                   for the rest of the devices);
 *   /axes/stack     name and summary of each software stack (madmax:
 *                   one row "none");
 *   /axes/parallel  the detailed auto set's degree tuples (else one "-");
 *   /axes/status    every status code with its name and explanation;
 *   /skipped        per status code, how many combinations of the axes
 *                   the enumeration left out (invalid:*, infeasible:shape);
 * and every other table written whole (/groups, the checkpoints of /keep,
 * /parts/kind_of) through output_tables_write: rank 0 writes the rows,
 * with the `units` attribute (output_rows.h) and the `digest` attribute
 * of the bytes (worker/digest.h); a table of 1024 rows or more is
 * chunked and deflated. Collective, identical arguments on every rank
 * (the rows need only be rank 0's).
 */
#ifndef MADSWEEP_OUTPUT_TABLES_H
#define MADSWEEP_OUTPUT_TABLES_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "output_rows.h"
#include "space.h"
#include "table.h"

/* Table `name` of loc: n rows of layout t from rank 0's `rows`; the
 * units of its input-key columns from `keys` (output_rows_unit). */
void output_tables_write(hid_t loc, const char *name, const table *t, int64_t n,
                         const void *rows, MPI_Comm comm, int rank,
                         const output_units *keys);

/* The group /axes and its tables, for the space s. */
void output_tables_axes(hid_t file, const space *s, MPI_Comm comm, int rank,
                        const output_units *keys);

/* /skipped from the rejected candidates per status code (SPACE_NCODES). */
void output_tables_skipped(hid_t file, const int64_t *by_code, MPI_Comm comm, int rank,
                           const output_units *keys);

#endif
