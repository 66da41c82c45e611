/*
 * sweep_resume.c - `sweep --resume`: the rows and checkpoints a file
 * already holds, checked against their digests before a run builds on
 * them (see sweep_resume.h).
 */
#include "sweep_resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/check.h"
#include "../../worker/kept.h"
#include "../../worker/verify.h"

/* The checkpoint tables of a reduced sweep's file (the slot keep_slot
 * names), checked against their digests on rank 0; 0, or -1 with msg. */
static int sweep_resume_keep_tables(output *fo, int rank, char *msg, size_t size)
{
    int64_t slot = -1;
    if (output_get_i64(fo, "keep_slot", &slot) != 0)
        return 0; /* no checkpoint yet */
    if (slot != 0 && slot != 1) {
        snprintf(msg, size, "its attribute keep_slot is %lld (damaged)", (long long)slot);
        return -1;
    }
    static const char *const tabs[3] = {"state", "groups", "summary"};
    for (int i = 0; i < 3; i++) {
        char name[32];
        int64_t n;
        kept_name(name, sizeof name, slot, tabs[i]);
        if (verify_table(fo->file, name, rank == 0, &n, msg, size) != 0)
            return -1;
    }
    return 0;
}

int sweep_resume_verify(MPI_Comm comm, int rank, int nranks, output *fo,
                        const space *s, const chunks *ch, const uint8_t *done,
                        spec_keep_mode mode, int64_t complete, FILE *err)
{
    bool all = mode == SPEC_KEEP_ALL;
    char msg[VERIFY_MSG] = "";
    int64_t bad = INT64_MAX; /* chunk of the failure; -1: the file as a whole */
    for (int64_t c = 0; c < ch->n && complete && bad == INT64_MAX; c++)
        if (!done[c]) {
            snprintf(msg, sizeof msg, "it is marked complete but /progress "
                     "says chunk %lld was never written", (long long)c);
            bad = -1;
        }
    verify_shape vs;
    memset(&vs, 0, sizeof vs);
    uint64_t *dg = malloc(((size_t)ch->n + 1) * sizeof *dg);
    if (!dg)
        check_die("out of memory", __FILE__, __LINE__);
    if (bad == INT64_MAX &&
        (verify_shape_read(fo->file, rank == 0, &vs, msg, sizeof msg) != 0 ||
         verify_read_progress(fo->file, ch->n, NULL, dg, msg, sizeof msg) != 0))
        bad = -1;
    for (int a = 0; a < SPACE_NAXES && bad == INT64_MAX; a++)
        if (vs.radix[a] != s->radix[a]) {
            snprintf(msg, sizeof msg, "/axes/%s has %lld rows, the spec %lld",
                     space_axis_names[a], (long long)vs.radix[a],
                     (long long)s->radix[a]);
            bad = -1;
        }
    if (bad == INT64_MAX && !all && !complete &&
        sweep_resume_keep_tables(fo, rank, msg, sizeof msg) != 0)
        bad = -1;
    int64_t kept = -1, ng = 0;
    if (bad == INT64_MAX && !all && complete &&
        (output_get_i64(fo, "rows_kept", &kept) != 0 || kept != vs.rows ||
         verify_table(fo->file, "groups", rank == 0, &ng, msg, sizeof msg) != 0)) {
        if (kept != vs.rows)
            snprintf(msg, sizeof msg, "/results has %lld rows but rows_kept says "
                     "%lld: truncated or damaged", (long long)vs.rows, (long long)kept);
        bad = -1;
    }
    /* the rows only when the file as a whole passed on every rank (rank 0
     * alone reads the tables' data), so that every rank opens the same */
    verify_rows v;
    int here = bad != INT64_MAX, any = 0;
    CHECK_MPI(MPI_Allreduce(&here, &any, 1, MPI_INT, MPI_MAX, comm));
    bool rows_ok = !any;
    if (rows_ok && verify_rows_open(&v, fo->file, &vs, msg, sizeof msg) != 0) {
        bad = -1;
        rows_ok = false;
    }
    if (rows_ok) {
        if (all) {
            for (int64_t c = rank; c < ch->n && bad == INT64_MAX; c += nranks)
                if (done[c] && verify_chunk(&v, c, dg[c], msg, sizeof msg) != 0)
                    bad = c;
        } else if (rank == 0) {
            int64_t rows = vs.rows, nch = ch->n;
            /* ranked sweeps write rows and digests only when they finish */
            if (!complete && (mode != SPEC_KEEP_FEASIBLE ||
                              kept_committed(fo, &nch, &rows) != 0))
                rows = nch = 0; /* nothing committed */
            if (rows < 0 || rows > vs.rows || nch < 0 || nch > ch->n) {
                snprintf(msg, sizeof msg, "its checkpoint covers rows %lld and "
                         "chunks %lld, more than it holds (damaged)", (long long)rows,
                         (long long)nch);
                bad = -1;
            } else if (verify_stream(&v, rows, nch, dg, msg, sizeof msg) != 0) {
                bad = -1;
            }
        }
        verify_rows_close(&v);
    }
    verify_shape_free(&vs);
    free(dg);
    int64_t first = INT64_MAX;
    CHECK_MPI(MPI_Allreduce(&bad, &first, 1, MPI_INT64_T, MPI_MIN, comm));
    if (first == INT64_MAX)
        return 0;
    /* the rank that found the first failure tells rank 0 */
    int mine = bad == first ? rank : nranks, who = nranks;
    CHECK_MPI(MPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, comm));
    CHECK_MPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, who, comm));
    if (rank == 0)
        fprintf(err, "madsweep: cannot resume: %s is corrupted: %s; run "
                "without --resume to start it over\n", fo->path, msg);
    return 1;
}
