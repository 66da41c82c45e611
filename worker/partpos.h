/*
 * partpos.h - where each chunk's part rows begin, in a keep = "all"
 * sweep: the rows of each part (output_rows.h) before the chunk's first
 * id. A row's part follows from its model and task, so the positions are
 * a pure function of the counted space and the cut, computed before any
 * point is evaluated; every rank then writes its chunks' part rows at
 * their final places with independent transfers, and the file's bytes do
 * not depend on which rank drew which chunk.
 * Cost: one more pass over the (model, system) blocks, shared by the
 * ranks (as the count pass), and one block load per chunk boundary.
 */
#ifndef MADSWEEP_PARTPOS_H
#define MADSWEEP_PARTPOS_H

#include <mpi.h>
#include <stdint.h>

#include "chunks.h"
#include "output_rows.h"
#include "space.h"

/* Collective. starts[c * r->nparts + p] for c in [0, ch->n] (the last
 * entry: each part's total rows), r planned. Returns 0, or -1 on every
 * rank when a rank runs out of memory. */
int partpos_plan(MPI_Comm comm, const space *s, const chunks *ch, const output_rows *r,
                 int64_t *starts);

#endif
