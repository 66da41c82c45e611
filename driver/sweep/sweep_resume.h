/*
 * sweep_resume.h - `sweep --resume` (also of a complete file): what the
 * file holds is verified before the run builds on it (worker/verify.h).
 *
 * Every rank checks its share of the chunks already written (keep =
 * "all"; reduced sweeps: rank 0 checks the checkpoint tables and, keep =
 * { feasible = true; }, streams the rows the checkpoint committed; a
 * complete reduced file: /groups and all its rows), after rank 0
 * checked the tables; the first failure (lowest chunk) is reported by
 * rank 0. Collective: every rank returns the same.
 */
#ifndef MADSWEEP_SWEEP_RESUME_H
#define MADSWEEP_SWEEP_RESUME_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "../../worker/chunks.h"
#include "../../worker/output.h"
#include "../../worker/space.h"

/* Returns 0, or 1 when the file is damaged (the message on rank 0's err). */
int sweep_resume_verify(MPI_Comm comm, int rank, int nranks, output *fo, const space *s,
                        const chunks *ch, const uint8_t *done, spec_keep_mode mode,
                        int64_t complete, FILE *err);

#endif
