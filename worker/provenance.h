/*
 * provenance.h - what a sweep file was made from, stored in the file.
 *
 * Layout (next to the spec text and versions of output.h):
 *   /provenance/catalogues  one row per catalogue file or @include the
 *                   spec read (worker/sources.h): name (relative to the
 *                   catalogue directory, or the path as opened), path
 *                   (absolute), sha256 (hex), bytes, text (the dataset
 *                   holding its whole text); attribute `units`.
 *   /provenance/text/K      the text of row K, a scalar fixed-length
 *                   string (h5py: f['provenance/text/0'][()].decode()).
 *   root attributes spec_abspath, spec_sha256, command_line (the run
 *                   that created the file, shell-quoted), git_commit (of
 *                   the build that created it: `git describe --always
 *                   --dirty` at build time, "unknown" outside a git
 *                   checkout); a resumed run adds resume_command_line
 *                   and resume_git_commit.
 * The datasets depend only on the spec and the files' contents, so two
 * runs of one spec over the same catalogues have identical datasets;
 * everything run-dependent is an attribute. Writes are collective with
 * identical arguments on every rank (rank 0 writes the data).
 */
#ifndef MADSWEEP_PROVENANCE_H
#define MADSWEEP_PROVENANCE_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

#include "sources.h"

typedef struct provenance {
    const sources *files;
    const char *spec_text;
    const char *spec_abspath;
    const char *command_line;
} provenance;

/* The build's git commit ("unknown" when not built from a checkout). */
const char *provenance_commit(void);

/* Collective: the datasets and attributes above; the catalogues table
 * has an attribute `digest` (digest.h) of its rows. */
void provenance_write(hid_t file, const provenance *p, MPI_Comm comm, int rank);

/* Compares the catalogues recorded in `file` with p->files by name and
 * digest. Returns 0 when they are the same files with the same digests,
 * else -1 with `why` naming the first difference ("catalogue
 * hardware.cfg changed: ..."). Reads only (any rank, same answer). */
int provenance_compare(hid_t file, const provenance *p, char *why,
                       size_t size);

/* Collective: the resume_* attributes of a run that resumes `file`. */
void provenance_note_resume(hid_t file, const provenance *p);

/* Checks the stored records: the catalogues table against its `digest`
 * attribute, and every stored text against the row's sha256. Returns 1
 * when the file records none, 0 when intact, -1 with `why` set when
 * damaged. Reads only. */
int provenance_verify(hid_t file, char *why, size_t size);

/* Reads the catalogues stored in an open file (names, paths, digests,
 * texts) into *s. Returns 1 when the file records none (written before
 * provenance), 0 on success, -1 when the records are unreadable. */
int provenance_read(hid_t file, sources *s);

#endif
